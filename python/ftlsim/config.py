"""Config files for runs and sweeps (TOML; JSON and YAML too), and saved reports as run configs.

A run file has top-level ``trace``, ``ftl``, ``preset``, ``capacity``, ``precondition``, ``format``, any device,
trace or run option (``page_bytes``, ``writes_only``, ``wrap``, ``nvram``, ...), a ``[params]`` table of the
scheme's parameters and output paths ``json`` / ``csv``. A sweep file has ``traces`` (or ``trace``),
``schemes`` (a list of names, or a table of scheme -> its own grid of lists), a ``[grid]`` table applying to
every scheme that takes a parameter, the common options, and ``store``, ``csv``, ``plot``, ``scheduler``,
``jobs``. A report saved with ``--json`` is a run file too: its ``config.resolved`` repeats the run exactly."""

from __future__ import annotations

import json
import os
import sys

from . import _core
from ._registry import config_kwargs

RUN_OUTPUTS = ("json", "csv")
SWEEP_KEYS = ("traces", "trace", "schemes", "ftl", "grid", "store", "csv", "plot", "scheduler", "jobs", "backend")


def load(path) -> dict:
    """The table of a config file, by extension: .toml, .json, .yaml / .yml."""
    path = os.fspath(path)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise _core.FtlsimError(f"config file {path}: {e.strerror}") from None
    try:
        if path.endswith(".toml"):
            if sys.version_info >= (3, 11):
                import tomllib
            else:
                import tomli as tomllib
            table = tomllib.loads(data.decode())
        elif path.endswith((".yaml", ".yml")):
            import yaml

            table = yaml.safe_load(data)
        elif path.endswith(".json"):
            table = json.loads(data)
        else:
            raise _core.FtlsimError(f"config file {path}: unknown extension; use .toml, .json or .yaml")
    except (ValueError, UnicodeDecodeError) as e:  # tomllib.TOMLDecodeError and JSONDecodeError are ValueErrors
        raise _core.FtlsimError(f"config file {path}: {e}") from None
    if not isinstance(table, dict):
        raise _core.FtlsimError(f"config file {path}: expected a table of keys, found {type(table).__name__}")
    return table


def is_report(table: dict) -> bool:
    return "config.resolved" in table


def run_kwargs(table) -> dict:
    """Keyword arguments of `simulate` from a run table or a saved report (a `Report` or its dict): the
    trace, the scheme, every option and the scheme's ``[params]``; output keys are left out."""
    if "config.resolved" in table:
        resolved = json.loads(table["config.resolved"])
        trace = resolved["trace"]
        kwargs = {"trace": trace, **config_kwargs(resolved["config"])}
        check_trace_hash(trace, table.get("config.trace_sha256"))
        return kwargs
    table = dict(table)
    params = table.pop("params", {}) or {}
    if not isinstance(params, dict):
        raise _core.FtlsimError("config key `params` must be a table of the scheme's parameters")
    kwargs = {k: v for k, v in table.items() if k not in RUN_OUTPUTS}
    clash = set(params) & set(kwargs)
    if clash:
        raise _core.FtlsimError(f"config key {sorted(clash)[0]} is given both at top level and in [params]")
    return {**kwargs, **params}


def check_trace_hash(trace: str, sha256: str | None) -> None:
    """A saved report repeats its run only on the same trace content: refuse a changed file."""
    if not sha256:
        return
    from .sim import trace_sha256

    if not os.path.isfile(trace):
        raise _core.FtlsimError(f"the report's trace {trace} does not exist here; copy it to that path")
    now = trace_sha256(trace)
    if now != sha256:
        raise _core.FtlsimError(f"trace {trace} changed since the report was made (sha256 {now[:12]}... , "
                                f"recorded {sha256[:12]}...); the run would not repeat")


def sweep_parts(table: dict) -> tuple[list, object, dict, dict, dict]:
    """(traces, schemes, grid, common options, sweep settings: store, csv, plot, scheduler, jobs, backend)."""
    table = dict(table)
    traces = table.pop("traces", None) or table.pop("trace", None)
    if traces is None:
        raise _core.FtlsimError("sweep config needs `traces` (a list of trace files or workloads)")
    traces = [traces] if isinstance(traces, str) else list(traces)
    schemes = table.pop("schemes", None) or table.pop("ftl", None)
    if schemes is None:
        raise _core.FtlsimError("sweep config needs `schemes` (a list of names, or a table of name -> grid)")
    grid = table.pop("grid", {}) or {}
    settings = {k: table.pop(k) for k in ("store", "csv", "plot", "scheduler", "jobs", "backend") if k in table}
    params = table.pop("params", {}) or {}
    return traces, schemes, grid, {**table, **params}, settings
