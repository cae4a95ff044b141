"""What an experiment is: runs, a table, a figure, and claims, each claim holding the paper's figures and a rule
that turns ftlsim's figures into a verdict.

The verdict rule, stated once and applied to every claim:

1. `not comparable` when the claim says why ftlsim cannot be compared with it (e.g. a figure whose numbers did
   not survive the text and whose claim has no direction to test);
2. `exact` when the paper gives numbers, the claim gives a tolerance, and every ftlsim figure with a paper figure
   of the same name lies within that tolerance (absolute, in the figure's unit, or relative);
3. `same direction` when the claim's qualitative statement (its `holds` test) is true of ftlsim's figures;
4. `contradicts` otherwise. The claim's `cause` then prints what ftlsim measured that explains the difference.

Nothing here is tuned: the tolerance and the direction test are written from the paper's words, and the verdict
follows whatever the engine on this branch measures.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pandas as pd

PAPERS = Path("/work/shared/papers")
TRACES = Path("/work/shared/traces")

# The five papers by file (see shared/papers/README.md). "line" in a claim is the line of this text file
# where the figure or sentence is: the extracted texts carry no page numbers.
FAST_PAPER = "000 FAST (Lee et al., ACM TECS 2007)"
NFTL_PAPER = "001 NFTL lookup table / page cache (Choudhuri & Givargis, CODES+ISSS 2007)"
MAST_PAPER = "002 MAST (Kim et al.)"
HOT_PAPER = "003 hot write references and NVRAM (Shim et al.)"
TINY_PAPER = "004 TinyFTL (Lee et al., IEEE TCE)"

VERDICTS = ("exact", "same direction", "contradicts", "not comparable")


@dataclass(frozen=True)
class Claim:
    """One statement of a paper, its figures, and how ftlsim's figures are judged against it."""

    id: str
    text: str  # the paper's statement, close to its words
    where: str  # table / figure and section
    line: int  # line of the paper's text file
    measure: Callable[[pd.DataFrame], dict]  # ftlsim's figures, by name
    paper: dict = field(default_factory=dict)  # the paper's figures, by the same names
    unit: str = ""
    abs_tol: float | None = None  # `exact` when |ftlsim - paper| <= abs_tol ...
    rel_tol: float | None = None  # ... or <= rel_tol x |paper|
    holds: Callable[[dict], bool] | None = None  # the claim's direction, tested on ftlsim's figures
    test: str = ""  # the direction test in words
    not_comparable: str | None = None
    cause: Callable[[pd.DataFrame], str] | None = None
    variant: str = ""  # the unknown this claim was run under (align / allocation), shown side by side

    def judge(self, df: pd.DataFrame) -> dict:
        ours = self.measure(df)
        verdict, why = self._verdict(ours)
        cause = ""
        if self.cause is not None and verdict in ("contradicts", "same direction", "exact"):
            cause = self.cause(df)
        return {
            "claim": self.id, "variant": self.variant, "statement": self.text, "where": self.where,
            "line": self.line, "unit": self.unit, "paper": _fmt(self.paper), "ftlsim": _fmt(ours),
            "rule": self.rule(), "verdict": verdict, "why": why, "cause": cause,
        }

    def rule(self) -> str:
        parts = []
        if self.not_comparable:
            return "not comparable: " + self.not_comparable
        if self.paper and (self.abs_tol is not None or self.rel_tol is not None):
            tol = (f"{self.abs_tol:g} {self.unit}".strip() if self.abs_tol is not None
                   else f"{self.rel_tol:.0%}")
            parts.append(f"exact within {tol}")
        if self.holds is not None:
            parts.append(f"direction: {self.test}")
        return "; ".join(parts)

    def _verdict(self, ours: dict) -> tuple[str, str]:
        if self.not_comparable:
            return "not comparable", self.not_comparable
        shared = [k for k in self.paper if k in ours and _num(ours[k])]
        if shared and (self.abs_tol is not None or self.rel_tol is not None):
            off = {k: abs(ours[k] - self.paper[k]) for k in shared}
            limit = {k: self.abs_tol if self.abs_tol is not None else self.rel_tol * abs(self.paper[k])
                     for k in shared}
            if all(off[k] <= limit[k] for k in shared):
                return "exact", f"{len(shared)} figure(s) within tolerance"
            worst = max(shared, key=lambda k: off[k] - limit[k])
            miss = f"{worst}: {_g(ours[worst])} vs paper {_g(self.paper[worst])}"
        elif shared:
            miss = "magnitudes not compared (no tolerance: the workload is not the paper's)"
        else:
            miss = "no paper figure to compare in magnitude"
        if self.holds is None:
            return "contradicts", miss
        try:
            ok = bool(self.holds(ours))
        except (KeyError, TypeError, ZeroDivisionError) as e:
            return "not comparable", f"a figure the test needs is missing ({e})"
        test = self.test or "the direction test"
        if ok:
            return "same direction", f"{test} holds; {miss}"
        return "contradicts", f"{test} fails"


def _num(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _g(v) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def _fmt(d: dict) -> str:
    return "; ".join(f"{k} = {_g(v)}" for k, v in d.items())


@dataclass(frozen=True)
class Experiment:
    """A paper's experiment: runs (keyword dicts for `simulate`) or a frame of its own, a summary table,
    a figure, and the claims judged on the runs. `stand_in` names the workload that stands in for a trace
    the paper did not publish."""

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


@dataclass
class Result:
    experiment: Experiment
    quick: bool
    df: pd.DataFrame
    table: pd.DataFrame
    verdicts: pd.DataFrame
    seconds: float

    def figure(self, path: str | Path) -> bool:
        """Draws the experiment's figure to `path`; False when it has none."""
        if self.experiment.figure is None:
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


def execute(e: Experiment, quick: bool, jobs: int | None = None, cache: RunCache | None = None,
            on_done=None) -> Result:
    started = time.perf_counter()
    if e.frame is not None:
        df = e.frame(quick)
    else:
        df = (cache or RunCache()).frame(e.runs(quick), jobs, on_done)
    verdicts = pd.DataFrame([c.judge(df) for c in e.claims(quick)])
    return Result(e, quick, df, e.table(df), verdicts, time.perf_counter() - started)


# Helpers the experiment modules share.


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


def trace_path(name: str) -> str | None:
    p = TRACES / name
    return str(p) if p.exists() else None
