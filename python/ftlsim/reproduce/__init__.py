"""The five papers' experiments as data (`ftlsim reproduce`): each experiment holds its runs, the paper's figures
for each claim (value, unit, table or figure, line of the paper's text), ftlsim's figures beside them, and a
verdict per claim computed by one stated rule (see `core`). Where a paper's trace is private, the experiment
names the stand-in workload it runs instead.

    >>> from ftlsim import reproduce
    >>> r = reproduce.run("fast-fig10", quick=True)
    >>> sorted(set(r.verdicts["verdict"])) <= sorted(reproduce.VERDICTS)
    True

`quick=True` shrinks every workload so that all experiments run in well under a minute; its figures show the
shape only. `run_all()` runs every experiment, `summary()` tabulates the verdicts, `write_report()` writes a
self-contained Markdown report with every table and figure.
"""

from __future__ import annotations

import datetime
from pathlib import Path

import pandas as pd

from . import fast, hotwrite, mast, nftl, tiny
from .core import VERDICTS, Claim, Experiment, Result, RunCache, execute

EXPERIMENTS: dict[str, Experiment] = {e.name: e for e in [
    *fast.EXPERIMENTS, *nftl.EXPERIMENTS, *mast.EXPERIMENTS, *hotwrite.EXPERIMENTS, *tiny.EXPERIMENTS]}

__all__ = ["EXPERIMENTS", "VERDICTS", "Claim", "Experiment", "Result", "run", "run_all", "summary", "deciders",
           "write_report", "ram_tables"]


def experiment(name: str) -> Experiment:
    if name not in EXPERIMENTS:
        raise KeyError(f"unknown experiment `{name}`; valid: {', '.join(EXPERIMENTS)}")
    return EXPERIMENTS[name]


def run(name: str, quick: bool = False, jobs: int | None = None, on_done=None,
        cache: RunCache | None = None) -> Result:
    """Runs experiment `name` and judges its claims: a Result with the raw runs (`df`), the summary `table`,
    the `verdicts` (one row per claim) and `figure(path)`."""
    return execute(experiment(name), quick, jobs=jobs, cache=cache, on_done=on_done)


def run_all(quick: bool = False, jobs: int | None = None, names=None, on_result=None) -> list[Result]:
    """Runs every experiment (or `names`), sharing runs that several experiments make."""
    cache = RunCache()
    results = []
    for name in names or EXPERIMENTS:
        r = run(name, quick=quick, jobs=jobs, cache=cache)
        results.append(r)
        if on_result:
            on_result(r)
    return results


def summary(results: list[Result]) -> pd.DataFrame:
    """One row per claim of every experiment: the experiment, the claim, the choice it ran under, the verdict."""
    rows = []
    for r in results:
        for _, v in r.verdicts.iterrows():
            rows.append({"experiment": r.experiment.name, "claim": v["claim"], "variant": v["variant"],
                         "verdict": v["verdict"]})
    return pd.DataFrame(rows, columns=["experiment", "claim", "variant", "verdict"])


def _choices(variant: str) -> dict:
    """`align=spec, cluster=2KiB` -> {"align": "spec", "cluster": "2KiB"}."""
    return dict(part.split("=", 1) for part in variant.split(", ")) if variant else {}


def _decided_by(verdicts: list[str], variants: list[str]) -> str:
    """Which choice the verdicts of one claim follow, the first of: none (one verdict throughout); one choice
    (each of its values gives one verdict); one choice deciding whether the claim holds or `contradicts`
    (then, if another decides `exact` against `same direction`, that one too); two choices together; one
    choice but for at most two variants (listed); otherwise the variants giving the rarer verdicts."""
    if len(set(verdicts)) == 1:
        return f"no choice: {verdicts[0]} under all {len(verdicts)} variants"
    choices = [_choices(v) for v in variants]
    keys = list(choices[0])

    def follows(ks, vs=verdicts, cs=choices) -> dict | None:
        seen: dict = {}
        for c, v in zip(cs, vs):
            if seen.setdefault(tuple(c[k] for k in ks), v) != v:
                return None
        return seen

    def mapping(k, seen) -> str:
        return "; ".join(f"{k}={level[0]}: {v}" for level, v in seen.items())

    singles = [k for k in keys if follows([k])]
    if len(singles) == 1:
        return f"{singles[0]} decides it ({mapping(singles[0], follows(singles))})"
    if singles:
        return (f"{' / '.join(singles)}, which change together in these variants, decide it "
                f"({mapping(singles[0], follows(singles[:1]))})")
    holds = ["contradicts" if v == "contradicts" else "holds" for v in verdicts]
    if len(set(holds)) == 2:
        for k in keys:
            seen = follows([k], holds)
            if seen:
                text = f"{k} decides whether it holds ({mapping(k, seen)})"
                kept = [(c, v) for c, v in zip(choices, verdicts) if v != "contradicts"]
                for k2 in keys:
                    sub = follows([k2], [v for _, v in kept], [c for c, _ in kept])
                    if k2 != k and sub and len(set(sub.values())) > 1:
                        text += f"; where it holds, {k2} decides how closely ({mapping(k2, sub)})"
                        break
                return text
    common = max(dict.fromkeys(verdicts), key=verdicts.count)  # ties: the first seen
    for i, a in enumerate(keys):
        for b in keys[i + 1:]:
            seen = follows([a, b])
            if seen:
                rare = "; ".join(f"{a}={x}, {b}={y}: {v}" for (x, y), v in seen.items() if v != common)
                return f"{a} and {b} together decide it ({common} except {rare})"
    for k in keys:
        levels = {c[k] for c in choices}
        usual = {x: max(dict.fromkeys(vs), key=vs.count)
                 for x in levels for vs in [[v for c, v in zip(choices, verdicts) if c[k] == x]]}
        odd = [f"{v} [{var}]" for c, v, var in zip(choices, verdicts, variants) if v != usual[c[k]]]
        if len(set(usual.values())) > 1 and len(odd) <= 2:
            order = list(dict.fromkeys(c[k] for c in choices))
            return (f"{k} decides it but for {len(odd)} variant{'s' if len(odd) > 1 else ''} ("
                    + "; ".join(f"{k}={x}: {usual[x]}" for x in order) + "; but " + "; ".join(odd) + ")")
    rare = [f"{v} [{var}]" for v, var in zip(verdicts, variants) if v != common]
    return (f"no single choice or pair: {common} under {verdicts.count(common)} of {len(verdicts)} variants; "
            + ("; ".join(rare) if len(rare) <= 8 else f"{len(rare)} others"))


def deciders(results: list[Result]) -> pd.DataFrame:
    """For every claim judged under several FAT choices (issue 11 item 4): its verdicts by count and which
    choice decides them, so a reader sees which unknown the outcome hangs on."""
    rows = []
    s = summary(results)
    for (exp, claim), g in s[s["variant"] != ""].groupby(["experiment", "claim"], sort=False):
        if len(g) < 2:
            continue
        verdicts, variants = list(g["verdict"]), list(g["variant"])
        tally = ", ".join(f"{v} {verdicts.count(v)}" for v in VERDICTS if v in verdicts)
        rows.append({"experiment": exp, "claim": claim, "verdicts": tally,
                     "decided by": _decided_by(verdicts, variants)})
    return pd.DataFrame(rows, columns=["experiment", "claim", "verdicts", "decided by"])


def counts(results: list[Result]) -> dict:
    s = summary(results)
    return {v: int((s["verdict"] == v).sum()) for v in VERDICTS}


def ram_tables() -> pd.DataFrame:
    """The papers' RAM tables: TinyFTL Tables I and IV on the 16 GB MLC device, NFTL on a 34 MB flash."""
    return tiny._ram_frame(False).drop(columns=["line"])


def _md_table(df: pd.DataFrame) -> str:
    if isinstance(df.columns, pd.MultiIndex):
        df = df.copy()
        df.columns = [" ".join(str(p) for p in c if str(p)) for c in df.columns]
    if df.index.name or any(df.index.names) or not isinstance(df.index, pd.RangeIndex):
        df = df.reset_index()

    def cell(v):
        if isinstance(v, float):
            return f"{v:.4g}"
        return str(v).replace("|", "\\|").replace("\n", " ")

    head = "| " + " | ".join(cell(c) for c in df.columns) + " |"
    rule = "|" + "---|" * len(df.columns)
    body = ["| " + " | ".join(cell(v) for v in r) + " |" for r in df.itertuples(index=False)]
    return "\n".join([head, rule, *body])


def write_report(results: list[Result], directory: str | Path) -> Path:
    """Writes `directory`/README.md (every experiment: what ran, the stand-in, the summary table, the figure,
    and each claim with the paper's figures, ftlsim's, the rule and the verdict) and one PNG per figure.
    Returns the Markdown file's path."""
    from .. import __version__

    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    quick = any(r.quick for r in results)
    c = counts(results)
    lines = [
        "# ftlsim reproduce: the papers' claims, ftlsim's figures, verdicts", "",
        f"ftlsim {__version__}, {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, "
        f"{'QUICK size (shapes only)' if quick else 'full size'}. "
        + ", ".join(f"{n} {v}" for v, n in c.items()) + ".", "",
        "Verdict rule (every claim): `not comparable` when the claim says why; `exact` when every ftlsim figure "
        "that has a paper figure of the same name is within the stated tolerance; `same direction` when the "
        "claim's qualitative test holds on ftlsim's figures; `contradicts` otherwise, with the measured cause. "
        "`line` is the line of the paper's text in shared/papers (the extracted texts have no page numbers).", "",
        "## Summary", "", _md_table(summary(results)), "",
    ]
    d = deciders(results)
    if len(d):
        lines += ["## Which choice decides each verdict", "",
                  "Claims judged under several choices the papers leave open (FAT alignment, cluster size, "
                  "allocation): the verdicts by count, and the choice they follow.", "", _md_table(d), ""]
    for r in results:
        e = r.experiment
        lines += [f"## {e.name}", "", f"**{e.paper}**: {e.what}.", ""]
        if e.stand_in:
            lines += [f"Stand-in workload: {e.stand_in}.", ""]
        if e.notes:
            lines += [f"Note: {e.notes}", ""]
        lines += [f"{len(r.df)} runs, {r.seconds:.1f} s.", "", _md_table(r.table), ""]
        png = out / f"{e.name}.png"
        if r.figure(png):
            lines += [f"![{e.name}]({png.name})", ""]
        for _, v in r.verdicts.iterrows():
            title = v["claim"] + (f" [{v['variant']}]" if v["variant"] else "")
            lines += [f"### {v['verdict']}: {title}", "",
                      f"- paper ({v['where']}, line {v['line']}): \"{v['statement']}\"" + (
                          f"; figures: {v['paper']}" if v["paper"] else ""),
                      f"- ftlsim: {v['ftlsim']}" + (f" ({v['unit']})" if v["unit"] else ""),
                      f"- rule: {v['rule']}", f"- why: {v['why']}"]
            if v["cause"]:
                lines.append(f"- measured: {v['cause']}")
            lines.append("")
    path = out / "README.md"
    path.write_text("\n".join(lines) + "\n")
    return path
