"""The five papers' experiments as data (`ftlsim reproduce`): each experiment holds its runs, the paper's figures
for each claim (value, unit, table or figure, line of the paper's text), ftlsim's figures beside them, and a
verdict and a distance per claim computed by one stated rule (`RULE`, see `core`). Where a paper's trace is
private, the experiment names the stand-in workload it runs instead. The papers' texts are not needed to run;
the experiments on public traces find them in `traces=` (or $FTLSIM_TRACES) and are `skipped` without them.

    >>> from ftlsim import reproduce
    >>> r = reproduce.run("fast-fig10", quick=True)
    >>> set(r.verdicts["verdict"]) <= set(reproduce.VERDICTS)
    True

`quick=True` shrinks every workload so that all experiments run in well under a minute; its figures show the
shape only. `run_all()` runs every experiment, `summary()` gives one row per distinct claim (a claim run under
several variants is headed by the variant the paper most plausibly ran, with the spread), `variants()` one row
per claim and variant, `write_report()` a self-contained Markdown report with every table and figure.
"""

from __future__ import annotations

import datetime
from pathlib import Path

import pandas as pd

from . import fast, hotwrite, mast, nftl, tiny
from .core import (PAPER_FILES, RULE, SKIPPED, STATUSES, TRACES_ENV, VERDICTS, Claim, Experiment, PublicTrace,
                   Result, RunCache, execute, traces_dir)

EXPERIMENTS: dict[str, Experiment] = {e.name: e for e in [
    *fast.EXPERIMENTS, *nftl.EXPERIMENTS, *mast.EXPERIMENTS, *hotwrite.EXPERIMENTS, *tiny.EXPERIMENTS]}

__all__ = ["EXPERIMENTS", "VERDICTS", "STATUSES", "SKIPPED", "RULE", "TRACES_ENV", "Claim", "Experiment",
           "PublicTrace", "Result", "run", "run_all", "summary", "variants", "counts", "headline", "write_report",
           "ram_tables"]


def experiment(name: str) -> Experiment:
    if name not in EXPERIMENTS:
        raise KeyError(f"unknown experiment `{name}`; valid: {', '.join(EXPERIMENTS)}")
    return EXPERIMENTS[name]


def run(name: str, quick: bool = False, jobs: int | None = None, on_done=None,
        cache: RunCache | None = None, traces: str | Path | None = None) -> Result:
    """Runs experiment `name` and judges its claims: a Result with the raw runs (`df`), the summary `table`,
    the `verdicts` (one row per claim and variant) and `figure(path)`. `traces` is the directory of the public
    traces (default $FTLSIM_TRACES); an experiment that needs a trace not found there is `skipped`."""
    return execute(experiment(name), quick, jobs=jobs, cache=cache, on_done=on_done, traces=traces_dir(traces))


def run_all(quick: bool = False, jobs: int | None = None, names=None, on_result=None,
            traces: str | Path | None = None) -> list[Result]:
    """Runs every experiment (or `names`), sharing runs that several experiments make."""
    cache = RunCache()
    directory = traces_dir(traces)
    results = []
    for name in names or EXPERIMENTS:
        r = execute(experiment(name), quick, jobs=jobs, cache=cache, traces=directory)
        results.append(r)
        if on_result:
            on_result(r)
    return results


def variants(results: list[Result]) -> pd.DataFrame:
    """One row per claim and variant it ran under: the experiment, the claim, the variant, the distance from
    the paper, the verdict."""
    rows = []
    for r in results:
        for _, v in r.verdicts.iterrows():
            rows.append({"experiment": r.experiment.name, "claim": v["claim"], "variant": v["variant"],
                         "distance": v["distance"], "verdict": v["verdict"]})
    return pd.DataFrame(rows, columns=["experiment", "claim", "variant", "distance", "verdict"])


def _head(r: Result, g: pd.DataFrame) -> pd.Series:
    """The row that gives a claim its verdict: its only one, or the experiment's plausible variant."""
    if len(g) == 1:
        return g.iloc[0]
    hit = g[g["variant"] == r.experiment.plausible]
    if len(hit) != 1:
        raise ValueError(f"{r.experiment.name}: claim `{g.iloc[0]['claim']}` runs under several variants but not "
                         f"once under the plausible one `{r.experiment.plausible}`")
    return hit.iloc[0]


def spread(verdicts: list[str], variants_: list[str]) -> str:
    """How a claim's verdict varies over the variants it ran under: the tally, then which choice decides it."""
    tally = ", ".join(f"{v} {verdicts.count(v)}" for v in STATUSES if v in verdicts)
    if len(set(verdicts)) == 1:
        return f"{verdicts[0]} under all {len(verdicts)} variants"
    return f"{tally} of {len(verdicts)} variants; {_decided_by(verdicts, variants_)}"


def summary(results: list[Result]) -> pd.DataFrame:
    """One row per distinct claim: its experiment, the verdict and distance under the variant the paper most
    plausibly ran (`under`, empty when the claim ran once), the `spread` over all its variants, and the
    verdict's reason."""
    rows = []
    for r in results:
        for _, g in r.verdicts.groupby("claim", sort=False):
            head = _head(r, g)
            several = len(g) > 1
            rows.append({"experiment": r.experiment.name, "claim": head["claim"], "distance": head["distance"],
                         "verdict": head["verdict"], "under": head["variant"] if several else "",
                         "spread": spread(list(g["verdict"]), list(g["variant"])) if several else "",
                         "why": head["why"]})
    return pd.DataFrame(rows, columns=["experiment", "claim", "distance", "verdict", "under", "spread", "why"])


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
                exceptions = "; ".join(f"{a}={x}, {b}={y}: {v}" for (x, y), v in seen.items() if v != common)
                return f"{a} and {b} together decide it ({common} except {exceptions})"
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


def counts(results: list[Result]) -> dict:
    """Distinct claims by verdict (`skipped` last): the headline."""
    s = summary(results)
    return {v: int((s["verdict"] == v).sum()) for v in STATUSES}


def headline(results: list[Result]) -> str:
    c = counts(results)
    return f"{sum(c.values())} claims: " + ", ".join(f"{n} {v}" for v, n in c.items() if n or v in VERDICTS)


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
    """Writes `directory`/README.md (the rule; one line per distinct claim; the per-variant table; then every
    experiment: what ran, the stand-in, the summary table, the figure, and each claim with the paper's figures,
    ftlsim's, the distance and the verdict) and one PNG per figure. Returns the Markdown file's path."""
    from .. import __version__

    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    quick = any(r.quick for r in results)
    lines = [
        "# ftlsim reproduce: the papers' claims, ftlsim's figures, verdicts", "",
        f"ftlsim {__version__}, {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, "
        f"{'QUICK size (shapes only)' if quick else 'full size'}. {headline(results)}.", "",
        RULE, "", "`line` is the line of the paper's extracted text in the project's papers directory (the texts "
        "have no page numbers): " + "; ".join(f"{paper}: file {n}" for paper, n in PAPER_FILES.items()) + ".", "",
        "## Claims", "", _md_table(summary(results).drop(columns=["why"])), "",
    ]
    v = variants(results)
    v = v[v["variant"] != ""]
    if len(v):
        lines += ["## Claims by variant", "",
                  "Claims run under several choices the papers leave open (FAT alignment, cluster size, "
                  "allocation), one row per variant.", "", _md_table(v), ""]
    for r in results:
        e = r.experiment
        lines += [f"## {e.name}", "", f"**{e.paper}**: {e.what}.", ""]
        if e.stand_in:
            lines += [f"Stand-in workload: {e.stand_in}.", ""]
        if e.plausible:
            lines += [f"Claims run under several variants take their verdict under {e.plausible}: "
                      f"{e.plausible_why}.", ""]
        if e.notes:
            lines += [f"Note: {e.notes}", ""]
        if r.skipped:
            lines += [f"**{SKIPPED}**: {r.skipped}.", ""]
        else:
            lines += [f"{len(r.df)} runs, {r.seconds:.1f} s.", "", _md_table(r.table), ""]
            png = out / f"{e.name}.png"
            if r.figure(png):
                lines += [f"![{e.name}]({png.name})", ""]
        for _, c in r.verdicts.iterrows():
            title = c["claim"] + (f" [{c['variant']}]" if c["variant"] else "")
            lines += [f"### {c['verdict']}: {title}", "",
                      f"- paper ({c['where']}, line {c['line']}): \"{c['statement']}\"" + (
                          f"; figures: {c['paper']}" if c["paper"] else "")]
            if c["verdict"] != SKIPPED:
                lines += [f"- ftlsim: {c['ftlsim']}" + (f" ({c['unit']})" if c["unit"] else "")]
                if c["distance"]:
                    lines.append(f"- distance (ours vs paper): {c['distance']}")
            lines += [f"- rule: {c['rule']}", f"- why: {c['why']}"]
            if c["cause"]:
                lines.append(f"- measured: {c['cause']}")
            lines.append("")
    path = out / "README.md"
    path.write_text("\n".join(lines) + "\n")
    return path
