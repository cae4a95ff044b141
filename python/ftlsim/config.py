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
from ._registry import check_name, config_kwargs, did_you_mean, names, nearest, scheme_defaults as scheme_params, takes
from .reference import RUN_OUTPUTS, option_keys, run_keys, sweep_keys
from .trace import is_stream, is_workload


def load(path) -> dict:
    """The table of a config file, by extension: .toml, .json, .yaml / .yml."""
    path = os.fspath(path)
    if not path.endswith((".toml", ".yaml", ".yml", ".json")):
        raise _core.FtlsimError(f"config file {path}: unknown extension; use .toml, .json or .yaml")
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise _core.FtlsimError(f"config file {path}: {e.strerror}") from None
    if path.endswith((".yaml", ".yml")):
        table = _load_yaml(path, data)
    else:
        try:
            if path.endswith(".toml"):
                if sys.version_info >= (3, 11):
                    import tomllib
                else:
                    import tomli as tomllib
                table = tomllib.loads(data.decode())
            else:
                table = json.loads(data)
        except (ValueError, UnicodeDecodeError) as e:  # TOMLDecodeError and JSONDecodeError are ValueErrors
            raise _core.FtlsimError(f"config file {path}: {e}") from None
    if not isinstance(table, dict):
        raise _core.FtlsimError(f"config file {path}: expected a table of keys, found {type(table).__name__}")
    return table


def _load_yaml(path: str, data: bytes):
    """A YAML config, refusing aliases (``*name``): a config needs none, and nested aliases expand
    exponentially (a 1 KB "billion laughs" file took 48 s and gigabytes to walk). PyYAML is imported here, when a
    YAML file is read: it takes a tenth of the command's start-up."""
    try:
        import yaml
    except ImportError:
        raise _core.FtlsimError("YAML config files need PyYAML: pip install pyyaml (or write the config as "
                                "TOML)") from None

    class NoAliasLoader(yaml.SafeLoader):
        def compose_node(self, parent, index):
            if self.check_event(yaml.AliasEvent):
                event = self.peek_event()
                raise yaml.YAMLError(f"line {event.start_mark.line + 1}: YAML aliases (*{event.anchor}) are not "
                                     "supported in config files; write the value out")
            return super().compose_node(parent, index)

    try:
        return yaml.load(data, Loader=NoAliasLoader)
    except yaml.YAMLError as e:
        mark, problem = getattr(e, "problem_mark", None), getattr(e, "problem", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
        raise _core.FtlsimError(f"config file {path}: {where}{problem or str(e).strip()}") from None
    except (ValueError, UnicodeDecodeError) as e:
        raise _core.FtlsimError(f"config file {path}: {e}") from None


def _in(source) -> str:
    return f"config file {source}: " if source else ""


def _kind(value) -> str:
    return {bool: "true/false", int: "a number", float: "a number", str: "text", list: "a list",
            dict: "a table"}.get(type(value), type(value).__name__)


def check_value(key: str, value, expected: str, source=None) -> None:
    """Refuses a config value of the wrong type, naming the file, the key, what it must be and what it is.
    `expected`: ``path`` (non-empty text), ``text``, ``texts`` (text or a list of texts), ``jobs`` (a whole
    number of at least 1), ``table``, or ``backend``."""
    ok = {
        "path": lambda v: isinstance(v, str) and v != "",
        "text": lambda v: isinstance(v, str),
        "texts": lambda v: isinstance(v, str) or (isinstance(v, list) and all(isinstance(x, str) for x in v)),
        "jobs": lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 1,
        "table": lambda v: isinstance(v, dict),
        "backend": lambda v: v in ("processes", "threads", "dask"),
    }[expected](value)
    if ok:
        return
    must = {"path": "a file path (text)", "text": "text", "texts": "text or a list of texts",
            "jobs": "a whole number of at least 1", "table": "a table", "backend": "processes, threads or dask"}
    raise _core.FtlsimError(f"{_in(source)}`{key}` must be {must[expected]}, found {value!r} ({_kind(value)})")


RUN_TYPES = {"json": "path", "csv": "path", "trace": "text", "ftl": "text", "preset": "text", "format": "text",
             "precondition": "text", "params": "table"}
SWEEP_TYPES = {"traces": "texts", "trace": "texts", "ftl": "texts", "grid": "table", "params": "table",
               "store": "path", "csv": "path", "plot": "path", "scheduler": "text", "jobs": "jobs",
               "backend": "backend", "preset": "text", "format": "text", "precondition": "text"}


def check_grid(key: str, grid, source=None) -> None:
    """A grid is a table of parameter -> a value or a list of values (numbers, text, true/false)."""
    check_value(key, grid, "table", source)
    for name, values in grid.items():
        for value in values if isinstance(values, list) else [values]:
            if isinstance(value, (dict, list)) or value is None:
                raise _core.FtlsimError(f"{_in(source)}`{key}.{name}` must be a value or a list of values (numbers, "
                                        f"text, true/false), found {values!r}")


def _unknown(where: str, key: str, valid, takes_text: str = "") -> str:
    return f"unknown key `{where}{key}`{did_you_mean(key, list(valid))}{takes_text}"


def _takes(ftl: str) -> str:
    """What scheme `ftl` takes: ``fast takes lazy_merge, log_blocks``."""
    params = scheme_params(ftl)
    return f"{ftl} takes {', '.join(params)}" if params else f"{ftl} takes no parameters"


def _takes_text(ftl: str) -> str:
    return f" ({_takes(ftl)})"


def _refuse(source: str, problems: list, kind: str) -> None:
    """One error for every problem at once, each on its own line when there are several."""
    if len(problems) == 1:
        raise _core.FtlsimError(f"{source}: {problems[0]}; every key: ftlsim config --example {kind}")
    lines = "".join(f"\n  {p}" for p in problems)
    raise _core.FtlsimError(f"{source}: {len(problems)} problems (every key: ftlsim config --example {kind}):{lines}")


def check_run_table(table: dict, source: str = "run config") -> None:
    """Refuses, naming `source`, every key of a run table that is neither a run key (`ftlsim config --example
    run`) nor a parameter of its scheme, each with the nearest valid key."""
    sweeping = [k for k in ("traces", "schemes", "grid") if k in table]
    if sweeping:  # each of its keys was "unknown", with a nearest run key for each
        raise _core.FtlsimError(f"{source} is a sweep's (it has {', '.join(f'`{k}`' for k in sweeping)}): run it "
                                f"with ftlsim sweep -c, or give a run's `trace` and `ftl`")
    name = table.get("ftl", "page")
    ftl = _scheme(name)
    params = scheme_params(ftl) if ftl else {}
    problems = [_unknown("", k, run_keys() + list(params)) for k in table if k not in run_keys() and k not in params]
    if ftl is None:  # its parameters cannot be checked
        problems.append(f"unknown scheme `{name}`{did_you_mean(str(name).lower(), names('schemes'))}")
    own = table.get("params") or {}
    if ftl and isinstance(own, dict):
        problems += [_unknown("params.", k, list(params) + option_keys(), _takes_text(ftl))
                     for k in own if k not in params and k not in option_keys()]
    if problems:
        _refuse(source, problems, "run")


def check_sweep_table(table: dict, source: str = "sweep config") -> None:
    """Refuses, naming `source`, every unknown key of a sweep table: a top-level key that is neither a sweep
    key (`ftlsim config --example sweep`) nor a parameter of one of its schemes, an unknown scheme, a
    scheme's grid parameter the scheme does not take, and a [grid] or [params] key no scheme takes."""
    schemes = table.get("schemes", table.get("ftl"))
    per_scheme = schemes if isinstance(schemes, dict) else {s: {} for s in _names(schemes)}
    known = [name for s in per_scheme if (name := _scheme(s))]
    scheme_keys = sorted({k for s in known for k in scheme_params(s)})
    problems = [_unknown("", k, sweep_keys() + scheme_keys) for k in table
                if k not in sweep_keys() and k not in scheme_keys]
    for name, own in per_scheme.items():
        ftl = _scheme(name)
        if ftl is None:
            problems.append(f"unknown scheme `{name}`{did_you_mean(str(name).lower(), names('schemes'))}")
        elif isinstance(own, dict):
            problems += [_unknown(f"schemes.{ftl}.", k, list(scheme_params(ftl)) + option_keys(), _takes_text(ftl))
                         for k in own if not takes(ftl, k)]
    for section in ("grid", "params"):
        if isinstance(table.get(section), dict):
            problems += grid_problems(known, table[section], f"{section}.")
    if problems:
        _refuse(source, problems, "sweep")


def grid_problems(schemes: list, grid, prefix: str = "") -> list:
    """A problem for each key of `grid` that none of `schemes` (registered names) takes, with the nearest and
    what each scheme takes."""
    valid = sorted({k for s in schemes for k in scheme_params(s)}) + option_keys()
    takes_text = f" ({'; '.join(_takes(s) for s in dict.fromkeys(schemes))})" if schemes else ""
    return [_unknown(prefix, k, valid, takes_text) for k in grid if not any(takes(s, k) for s in schemes)]


def _scheme(name) -> str | None:
    """A scheme's registered name (``FAST`` -> ``fast``), or None for an unknown one."""
    try:
        return check_name("schemes", name)
    except _core.FtlsimError:
        return None


def _names(value) -> list:
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    return list(value) if isinstance(value, (list, tuple)) else []


def check_options(ftl: str, options) -> None:
    """Refuses a keyword of `simulate` that is neither an option nor a parameter of scheme `ftl`, naming the
    nearest valid one, before anything runs."""
    bad = [k for k in options if not takes(ftl, k)]
    if bad:
        valid = list(scheme_params(ftl)) + [k for k in run_keys() if k not in RUN_OUTPUTS]
        error = _core.FtlsimError("; ".join(f"scheme `{ftl}` has no parameter or option `{k}`{did_you_mean(k, valid)}"
                                            for k in bad) + _takes_text(ftl) + "; every option: ftlsim config "
                                  "--example run")
        # The first unknown key as fields, as a value not allowed carries them.
        error.key, error.value, error.suggestion = bad[0], options[bad[0]], nearest(bad[0], valid)
        error.expected = f"is not a parameter of {ftl} or a run option"
        raise error


def run_kwargs(table, source=None, trace: str | None = None, ftl: str | None = None) -> dict:
    """Keyword arguments of `simulate` from a run table or a saved report (a `Report` or its dict): the
    trace, the scheme, every option and the scheme's ``[params]``; output keys are left out. A value of the
    wrong type or an unknown key is refused, naming `source` (the config file); a table's parameters are
    checked against its scheme, or against `ftl` (the command line's --ftl) where the table names none. A
    report's trace must hold what it held (its sha256), unless `trace` is given in its place (the command
    line's TRACE)."""
    if "config.resolved" in table:
        resolved = json.loads(table["config.resolved"])
        kwargs = {"trace": resolved["trace"], **config_kwargs(resolved["config"])}
        if trace is not None:
            return {**kwargs, "trace": trace}
        if is_stream(resolved["trace"]):
            raise _core.FtlsimError(f"the report's trace was read from standard input ({resolved['trace']}), "
                                    "which holds it no more: give it again as TRACE (ftlsim run -c REPORT - < "
                                    "trace, or the trace file)")
        check_trace_hash(resolved["trace"], table.get("config.trace_sha256"))
        return kwargs
    for key, expected in RUN_TYPES.items():
        if key in table:
            check_value(key, table[key], expected, source)
    table = dict(table)
    # The file's parameters are its scheme's, checked against it (the run leaves out those --ftl's does not take);
    # a file naming no scheme has them checked against --ftl's.
    check_run_table({**table, "ftl": ftl} if ftl and "ftl" not in table else table,
                    f"config file {source}" if source else "run config")
    if "trace" in table and trace is None:
        table["trace"] = found(table["trace"], source)
    params = table.pop("params", {}) or {}
    kwargs = {k: v for k, v in table.items() if k not in RUN_OUTPUTS}
    clash = set(params) & set(kwargs)
    if clash:
        raise _core.FtlsimError(f"config key {sorted(clash)[0]} is given both at top level and in [params]")
    return {**kwargs, **params}


def found(trace: str, source) -> str:
    """A config file's trace: a relative path is read from the current directory, else from the config file's
    own directory (a config beside its trace runs from anywhere); a path in neither is an error that names
    both places."""
    if source is None or os.path.isabs(trace) or is_stream(trace) or os.path.exists(trace) or is_workload(trace):
        return trace
    beside = os.path.join(os.path.dirname(os.fspath(source)), trace)
    if os.path.exists(beside):
        return beside
    raise _core.FtlsimError(f"config file {source}: trace {trace} is neither in the current directory "
                            f"({os.getcwd()}) nor beside the config file ({beside})")


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


def sweep_parts(table: dict, source=None) -> tuple[list, object, dict, dict, dict]:
    """(traces, schemes, grid, common options, sweep settings: store, csv, plot, scheduler, jobs, backend). A
    value of the wrong type or an unknown key is refused, naming `source` (the config file)."""
    for key, expected in SWEEP_TYPES.items():
        if key in table:
            check_value(key, table[key], expected, source)
    if "grid" in table:
        check_grid("grid", table["grid"], source)
    schemes = table.get("schemes")
    if isinstance(schemes, dict):
        for name, own in schemes.items():
            check_grid(f"schemes.{name}", own or {}, source)
    elif schemes is not None:
        check_value("schemes", schemes, "texts", source)
    check_sweep_table(table, f"config file {source}" if source else "sweep config")
    table = dict(table)
    traces = table.pop("traces", None) or table.pop("trace", None)
    if traces is None:
        raise _core.FtlsimError("sweep config needs `traces` (a list of trace files or workloads)")
    traces = [found(t, source) for t in ([traces] if isinstance(traces, str) else traces)]
    schemes = table.pop("schemes", None) or table.pop("ftl", None)
    if schemes is None:
        raise _core.FtlsimError("sweep config needs `schemes` (a list of names, or a table of name -> grid)")
    schemes = ({_scheme(k): v for k, v in schemes.items()} if isinstance(schemes, dict)
               else [_scheme(s) for s in _names(schemes)])
    grid = table.pop("grid", {}) or {}
    settings = {k: table.pop(k) for k in ("store", "csv", "plot", "scheduler", "jobs", "backend") if k in table}
    params = table.pop("params", {}) or {}
    return traces, schemes, grid, {**table, **params}, settings
