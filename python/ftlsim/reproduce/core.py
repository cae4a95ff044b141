"""What an experiment is: runs, a table, a figure, and claims, each claim holding the paper's figures and a rule
that turns ftlsim's figures into a verdict and a distance from the paper.

The verdict rule, stated once (`RULE`, printed at the head of every report) and applied to every claim:

1. `not comparable` when the claim says why ftlsim cannot test it (controller CPU time, a lost example
   sequence, a private trace without a stand-in), with that reason;
2. `contradicts` when the claim's direction test (its `holds`) fails on ftlsim's figures, or when it has no
   direction test and a figure is further off than `close` allows;
3. `exact` when every ftlsim figure that has a paper figure of the same name lies within the claim's tolerance
   (its own, or by default 10% of the paper's figure, or 5 points for a percentage);
4. `close` when every such figure lies within 2x of the paper's (within 10 points for a percentage);
5. `same direction` otherwise: the direction test holds, the magnitudes are further off or the paper gives none.

A claim measured on a stand-in workload (the paper's trace is private) is at most `close` for its magnitudes and
says "(stand-in)". The distance of a claim is its worst figure: ours / paper as a ratio, or ours - paper in points
for a percentage. Nothing here is tuned: tolerances and direction tests are written from the papers' words, and
the verdict follows whatever the engine on this branch measures.
"""

from __future__ import annotations

import json
import math
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pandas as pd

# The five papers, as a user reads them named. "line" in a claim is the line of the paper's extracted text in the
# project's papers directory, whose file PAPER_FILES gives (see its README): the texts carry no page numbers. The
# texts are cited, never read: `reproduce` runs without them.
FAST_PAPER = "FAST (Lee et al., ACM TECS 2007)"
NFTL_PAPER = "NFTL lookup table / page cache (Choudhuri & Givargis, CODES+ISSS 2007)"
MAST_PAPER = "MAST (Kim et al.)"
HOT_PAPER = "Hot write references and NVRAM (Shim et al.)"
TINY_PAPER = "TinyFTL (Lee et al., IEEE TCE)"
PAPER_FILES = {FAST_PAPER: "000", NFTL_PAPER: "001", MAST_PAPER: "002", HOT_PAPER: "003", TINY_PAPER: "004"}

VERDICTS = ("exact", "close", "same direction", "contradicts", "not comparable")
SKIPPED = "skipped"  # an experiment whose public trace is not there: its claims are listed, not judged
STATUSES = (*VERDICTS, SKIPPED)

DEFAULT_REL_TOL = 0.10
DEFAULT_POINTS_TOL = 5.0
CLOSE_FACTOR = 2.0
CLOSE_POINTS = 10.0
POINT_UNITS = ("points", "%")

RULE = (
    "Verdict rule, one verdict per claim: `not comparable` when ftlsim cannot test the claim (the reason is "
    "given); `contradicts` when the claim's direction test fails on ftlsim's figures (or, for a claim with no "
    "direction test, a figure is further off than `close`); `exact` when every ftlsim figure that has a paper "
    f"figure of the same name is within the claim's tolerance ({DEFAULT_REL_TOL:.0%} of the paper's figure, or "
    f"{DEFAULT_POINTS_TOL:g} points for a percentage, unless the claim states its own); `close` when every such "
    f"figure is within {CLOSE_FACTOR:g}x of the paper's (within {CLOSE_POINTS:g} points for a percentage); "
    "`same direction` when the direction test holds and a figure is further off, or the paper gives no figure. "
    "A claim measured on a stand-in workload is at most `close` for its magnitudes (marked \"(stand-in)\"). "
    "Distance: ours / paper as a ratio (0.87x), or ours - paper for a percentage (+3.2 pt); the worst figure "
    "is shown. A claim run under several variants (FAT layout choices the paper leaves open) gets the verdict "
    "of the variant the paper most plausibly ran (named, with why), and the spread over all variants. "
    f"`{SKIPPED}`: the experiment needs a public trace that was not found (see --traces).")

TRACES_ENV = "FTLSIM_TRACES"


@dataclass(frozen=True)
class PublicTrace:
    """A run's trace that is one of the public traces (a file name in the traces directory), resolved when the
    experiment runs: `--traces DIR`, `traces=` or the FTLSIM_TRACES environment variable."""

    name: str


def traces_dir(traces: str | Path | None = None) -> Path | None:
    """The directory of the public traces: `traces`, else $FTLSIM_TRACES, else none (experiments that need one
    are skipped and say so)."""
    given = traces if traces is not None else os.environ.get(TRACES_ENV) or None
    if given is None:
        return None
    path = Path(given).expanduser()
    if not path.is_dir():
        source = "--traces" if traces is not None else TRACES_ENV
        raise ValueError(f"{source} names `{given}`, which is not a directory: give the directory that holds the "
                         f"public traces (msr_wdev_1.csv, ...), or leave it unset to skip the experiments that "
                         f"need them")
    return path


@dataclass(frozen=True)
class Distance:
    """How far one of ftlsim's figures is from the paper's: text ("0.87x" or "+3.2 pt"), within the claim's
    tolerance, within `close`, and a size to pick the worst figure by (1 = the edge of `close`)."""

    text: str
    within_tol: bool
    within_close: bool
    size: float


@dataclass(frozen=True)
class Claim:
    """One statement of a paper, its figures, and how ftlsim's figures are judged against it."""

    id: str
    text: str  # the paper's statement, close to its words
    where: str  # table / figure and section
    line: int  # line of the paper's text file
    measure: Callable[[pd.DataFrame], dict]  # ftlsim's figures, by name
    paper: dict = field(default_factory=dict)  # the paper's figures, by the same names
    unit: str = ""  # "points" or "%": figures are percentages, compared as differences in points
    abs_tol: float | None = None  # `exact` when |ftlsim - paper| <= abs_tol ...
    rel_tol: float | None = None  # ... or <= rel_tol x |paper| (default: see DEFAULT_REL_TOL / _POINTS_TOL)
    holds: Callable[[dict], bool] | None = None  # the claim's direction, tested on ftlsim's figures
    test: str = ""  # the direction test in words
    not_comparable: str | None = None
    cause: Callable[[pd.DataFrame], str] | None = None
    variant: str = ""  # the unknown this claim was run under (align / allocation), shown side by side
    stand_in: bool | None = None  # measured on a stand-in workload; None: whether the experiment names one
    # Why the runs cannot test the claim, if they cannot (a quick run whose schemes never merged): the claim is
    # then not comparable there, rather than judged on figures no scheme's mechanism made.
    idle: Callable[[pd.DataFrame], str | None] | None = None

    def judge(self, df: pd.DataFrame, stand_in: bool = False) -> dict:
        ours = self.measure(df)
        verdict, why, distance = self._verdict(ours, stand_in)
        idle = self.idle(df) if self.idle is not None and verdict != "not comparable" else None
        if idle:
            verdict, why, distance = "not comparable", idle, ""
        cause = ""
        if self.cause is not None and verdict != "not comparable":
            cause = self.cause(df)
        return {**self.listing(stand_in), "ftlsim": figures_text(ours), "distance": distance, "verdict": verdict,
                "why": why, "cause": cause}

    def listing(self, stand_in: bool = False) -> dict:
        """The claim's columns that need no run."""
        return {"claim": self.id, "variant": self.variant, "statement": self.text, "where": self.where,
                "line": self.line, "unit": self.unit, "paper": figures_text(self.paper), "ftlsim": "", "distance": "",
                "rule": self.rule(stand_in), "verdict": SKIPPED, "why": "", "cause": ""}

    def points(self) -> bool:
        return self.unit in POINT_UNITS

    def tolerance(self) -> str:
        if self.abs_tol == 0:
            return "0 (exactly)"
        if self.abs_tol is not None:
            return f"{self.abs_tol:g} {'points' if self.points() else self.unit}".strip()
        if self.rel_tol is not None:
            return f"{self.rel_tol:.0%}"
        return f"{DEFAULT_POINTS_TOL:g} points" if self.points() else f"{DEFAULT_REL_TOL:.0%}"

    def rule(self, stand_in: bool = False) -> str:
        if self.not_comparable:
            return "not comparable: " + self.not_comparable
        parts = []
        if self.paper:
            parts.append(f"exact within {self.tolerance()}" + (" (stand-in: at most close)" if stand_in else ""))
        if self.holds is not None:
            parts.append(f"direction: {self.test}")
        return "; ".join(parts)

    def distance(self, ours: float, paper: float) -> Distance:
        off = ours - paper
        if self.points():
            tol = (self.abs_tol if self.abs_tol is not None else
                   self.rel_tol * abs(paper) if self.rel_tol is not None else DEFAULT_POINTS_TOL)
            return Distance(f"{off:+.3g} pt", abs(off) <= tol, abs(off) <= CLOSE_POINTS, abs(off) / CLOSE_POINTS)
        tol = self.abs_tol if self.abs_tol is not None else (self.rel_tol or DEFAULT_REL_TOL) * abs(paper)
        if paper == 0:
            return Distance(f"{off:+.3g}", abs(off) <= tol, abs(off) <= tol, math.inf if off else 0.0)
        ratio = ours / paper
        size = abs(math.log(ratio)) / math.log(CLOSE_FACTOR) if ratio > 0 else math.inf
        return Distance(f"{ratio:.3g}x", abs(off) <= tol, 1 / CLOSE_FACTOR <= ratio <= CLOSE_FACTOR, size)

    def _verdict(self, ours: dict, stand_in: bool) -> tuple[str, str, str]:
        """(verdict, why, distance) by the rule in the module's doc comment."""
        if self.not_comparable:
            return "not comparable", self.not_comparable, ""
        if self.holds is not None:
            try:
                ok = bool(self.holds(ours))
            except (KeyError, TypeError, ZeroDivisionError) as e:
                return "not comparable", f"a figure the direction test needs is missing ({e})", ""
            if not ok:
                shared = self._distances(ours)
                return "contradicts", f"{self.test or 'the direction test'} fails", _worst_text(shared)
        shared = self._distances(ours)
        if not shared:
            if self.holds is None:
                return "not comparable", "no paper figure of the same name and no direction test", ""
            return "same direction", f"{self.test} holds; the paper gives no figure of the same name", ""
        worst_name, worst = max(shared.items(), key=lambda kv: kv[1].size)
        distance = _worst_text(shared)
        miss = f"{worst_name}: {_g(ours[worst_name])} vs paper {_g(self.paper[worst_name])} ({worst.text})"
        if all(d.within_tol for d in shared.values()):
            if stand_in:
                return "close", f"within {self.tolerance()}, on a stand-in workload (stand-in)", distance
            return "exact", f"{len(shared)} figure(s) within {self.tolerance()}", distance
        if all(d.within_close for d in shared.values()):
            limit = f"{CLOSE_POINTS:g} points" if self.points() else f"{CLOSE_FACTOR:g}x"
            return "close", f"within {limit}, not {self.tolerance()}; worst {miss}" + (
                " (stand-in)" if stand_in else ""), distance
        if self.holds is None:
            return "contradicts", f"beyond close: {miss}", distance
        return "same direction", f"{self.test} holds; worst {miss}", distance

    def _distances(self, ours: dict) -> dict[str, Distance]:
        return {k: self.distance(float(ours[k]), float(p)) for k, p in self.paper.items()
                if k in ours and _num(ours[k]) and _num(p)}


def _worst_text(shared: dict[str, Distance]) -> str:
    """The worst figure's distance, with its name when there are several."""
    if not shared:
        return ""
    name, d = max(shared.items(), key=lambda kv: kv[1].size)
    return d.text if len(shared) == 1 else f"{d.text} ({name})"


def _num(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _g(v) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def figures_text(d: dict) -> str:
    """Named figures on one line: `a = 1.5; b = 2`."""
    return "; ".join(f"{k} = {_g(v)}" for k, v in d.items())


@dataclass(frozen=True)
class Experiment:
    """A paper's experiment: runs (keyword dicts for `simulate`) or a frame of its own, a summary table,
    a figure, and the claims judged on the runs. `stand_in` names the workload that stands in for a trace
    the paper did not publish. Claims run under several variants are headed by the `plausible` one."""

    name: str
    paper: str
    what: str
    runs: Callable[[bool], list[dict]] | None
    table: Callable[[pd.DataFrame], pd.DataFrame]
    claims: Callable[[bool], list[Claim]]
    figure: Callable[[pd.DataFrame, str, str], None] | None = None
    stand_in: str = ""
    frame: Callable[[bool], pd.DataFrame] | None = None  # for experiments that are not simulate() runs
    notes: str = ""
    plausible: str = ""  # the variant the paper most plausibly ran, which heads a claim run under several
    plausible_why: str = ""


@dataclass
class Result:
    experiment: Experiment
    quick: bool
    df: pd.DataFrame
    table: pd.DataFrame
    verdicts: pd.DataFrame
    seconds: float
    skipped: str = ""  # why the experiment did not run (a public trace it needs is missing)

    def figure(self, path: str | Path) -> bool:
        """Draws the experiment's figure to `path`; False when it has none (or did not run)."""
        if self.experiment.figure is None or self.skipped:
            return False
        self.experiment.figure(self.df, str(path), f"{self.experiment.name}: {self.experiment.paper}")
        return True


class RunCache:
    """Runs shared by several experiments (the same keyword dict) are simulated once per `run_all`."""

    def __init__(self):
        self.rows: dict[str, dict] = {}

    def frame(self, runs: list[dict], jobs: int | None, on_done=None) -> pd.DataFrame:
        from ..sim import run_many

        keys = [json.dumps(r, sort_keys=True, default=str) for r in runs]
        todo = {k: r for k, r in zip(keys, runs) if k not in self.rows}
        if todo:
            df = run_many(list(todo.values()), jobs=jobs, on_done=on_done)
            for k, row in zip(todo, df.to_dict("records")):
                self.rows[k] = row
        return pd.DataFrame([self.rows[k] for k in keys])


def _missing_traces(runs: list[dict], traces: Path | None) -> list[str]:
    wanted = dict.fromkeys(r["trace"].name for r in runs if isinstance(r["trace"], PublicTrace))
    return [n for n in wanted if traces is None or not (traces / n).is_file()]


def _skip_reason(missing: list[str], traces: Path | None) -> str:
    where = f"not found in {traces}" if traces is not None else "and no traces directory was given"
    return (f"needs the public trace{'s' if len(missing) > 1 else ''} {', '.join(missing)}, {where}: pass "
            f"--traces DIR (Python: traces=DIR) or set {TRACES_ENV} to the directory that holds them")


def execute(e: Experiment, quick: bool, jobs: int | None = None, cache: RunCache | None = None,
            on_done=None, traces: Path | None = None) -> Result:
    started = time.perf_counter()
    claims = e.claims(quick)
    stand_in = {c.id: c.stand_in if c.stand_in is not None else bool(e.stand_in) for c in claims}
    if e.frame is not None:
        df = e.frame(quick)
    else:
        assert e.runs is not None, f"experiment {e.name} has neither runs nor a frame"
        runs = e.runs(quick)
        missing = _missing_traces(runs, traces)
        if missing:
            reason = _skip_reason(missing, traces)
            verdicts = pd.DataFrame([{**c.listing(stand_in[c.id]), "why": reason} for c in claims])
            return Result(e, quick, pd.DataFrame(), pd.DataFrame(), verdicts, time.perf_counter() - started,
                          skipped=reason)
        # No trace is missing, so a run on a public trace has a traces directory.
        runs = [{**r, "trace": str(Path(traces or ".") / r["trace"].name)} if isinstance(r["trace"], PublicTrace)
                else r for r in runs]
        df = (cache or RunCache()).frame(runs, jobs, on_done)
    verdicts = pd.DataFrame([c.judge(df, stand_in[c.id]) for c in claims])
    return Result(e, quick, df, e.table(df), verdicts, time.perf_counter() - started)


# Helpers the experiment modules share.


def generated_traces(df: pd.DataFrame, folder: str) -> pd.DataFrame:
    """`df` with the traces an experiment wrote into `folder` (a temporary directory, gone when it ends) named
    ``generated:NAME`` in the trace column and the echoed configuration: a path there would name a file nobody
    can open. Each trace's sha256 (``config.trace_sha256``) still tells them apart."""
    prefix = os.path.join(os.path.abspath(folder), "")
    out = df.copy()
    for column in ("trace", "config.trace", "config.resolved"):
        if column in out:
            out[column] = out[column].map(lambda v: v.replace(prefix, "generated:") if isinstance(v, str) else v)
    return out


def row(df: pd.DataFrame, **eq) -> pd.Series:
    """The single run matching every column = value (None matches a missing value)."""
    mask = pd.Series(True, index=df.index)
    for k, v in eq.items():
        col = df[k] if k in df else pd.Series([None] * len(df), index=df.index)
        mask &= col.isna() if v is None else (col == v)
    hits = df[mask]
    if len(hits) != 1:
        raise KeyError(f"{len(hits)} runs match {eq}")
    return hits.iloc[0]


def seconds(r) -> float:
    return r["time_us.total"] / 1e6


def merge_mix(r) -> str:
    """Merges by kind with the erases each kind caused: where the erases come from."""
    kinds = ("switch", "partial", "full", "dead", "fold")
    parts = [f"{k} {int(r[f'merges.{k}'])} ({int(r[f'merges.{k}.erases'])} erases)" for k in kinds
             if r.get(f"merges.{k}", 0)]
    return ", ".join(parts) or "no merges"
