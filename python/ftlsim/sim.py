"""Running simulations: one run (`simulate`) or a grid of runs in parallel (`sweep`)."""

from __future__ import annotations

import itertools
import json
import os
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import Callable, Iterable

from . import _core
from ._registry import make_config
from .report import Report


def simulate(
    trace: str,
    ftl: str = "page",
    preset: str | None = None,
    capacity: str | int | None = None,
    precondition: str = "none",
    format: str = "auto",
    progress: Callable[[int, int, int], bool | None] | None = None,
    **scheme_params,
) -> Report:
    """Runs `trace` (a trace file, or a built-in workload such as ``"uniform:writes=150000,seed=1"``) through
    scheme `ftl` on a device made from `preset` (default ``lee2007``) and `capacity` (default: the preset's,
    else the trace's highest address). Other keywords are device overrides (``pages_per_block=4``,
    ``erase_us=1500``), trace options (``device=0``, ``writes_only=True``, ``skip_bad_lines=True``,
    ``time_unit="ms"``, ``blkparse_event="C"``), run options (``wrap=True``, ``idle_threshold_us=...``, an NVRAM
    write cache ``nvram="128KiB", nvram_policy="metadata"`` with ``nvram_regions``, ``nvram_read_us``,
    ``nvram_write_us``, ``nvram_flush_at_end``) or the scheme's parameters (``log_blocks=8``). `progress(requests, done, total)` is called as the run goes."""
    cfg = make_config(ftl, preset, capacity, precondition, format, scheme_params)
    return Report.from_json(_core.simulate(str(trace), json.dumps(cfg), progress))


def _as_list(value) -> list:
    if value is None:
        return []
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    return list(value)


def grid(traces, ftls, params: dict | None = None) -> list[dict]:
    """Every (trace, ftl, parameter combination) of a sweep, as keyword dicts for `simulate`."""
    params = params or {}
    names = list(params)
    values = [_as_list(params[n]) if not isinstance(params[n], (int, float, bool)) else [params[n]] for n in names]
    runs = []
    traces = [traces] if isinstance(traces, str) else list(traces)  # a workload spec holds commas itself
    for trace, ftl in itertools.product(traces, _as_list(ftls)):
        for combo in itertools.product(*values):
            runs.append({"trace": trace, "ftl": ftl, **dict(zip(names, combo))})
    return runs


def run_many(runs: list[dict], jobs: int | None = None, on_done: Callable[[int, int], None] | None = None):
    """Runs `simulate(**run)` for every run in parallel (the engine releases the GIL) and returns a pandas
    DataFrame with one row per run, in order: the run's `labels` (a dict of extra columns, not passed to
    `simulate`), its keywords, then the Report's flat keys."""
    import pandas as pd

    rows: list[dict | None] = [None] * len(runs)
    kwargs = [{k: v for k, v in run.items() if k != "labels"} for run in runs]
    with ThreadPoolExecutor(max_workers=jobs or os.cpu_count() or 1) as pool:
        futures = {pool.submit(simulate, **kw): i for i, kw in enumerate(kwargs)}
        for done, future in enumerate(as_completed(futures), 1):
            i = futures[future]
            rows[i] = {**runs[i].get("labels", {}), **kwargs[i], **future.result().flat()}
            if on_done:
                on_done(done, len(runs))
    return pd.DataFrame(rows)


def sweep(
    traces: str | Iterable[str],
    ftls: str | Iterable[str],
    params: dict | None = None,
    jobs: int | None = None,
    on_done: Callable[[int, int], None] | None = None,
    **common,
):
    """Runs the grid traces x ftls x params (a dict of name -> list of values) in parallel on all cores and
    returns a pandas DataFrame with one row per run: the run's grid values, then the Report's flat keys.
    `common` keywords apply to every run (``preset=``, ``capacity=``, ``precondition=``, ...)."""
    runs = [{**common, **run} for run in grid(traces, ftls, params)]
    return run_many(runs, jobs=jobs, on_done=on_done)
