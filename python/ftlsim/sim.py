"""Running simulations: one run (`simulate`) or a grid of runs (`sweep`) on local processes, threads or a Dask
cluster, with a results store keyed by the hash of each run's resolved configuration."""

from __future__ import annotations

import functools
import itertools
import json
import os
import sys
import threading
import time
import warnings
from typing import Callable, Iterable

from . import _core
from .errors import Spelling, keyword, respelled, spelled
from ._registry import (LIST_VALUED, check_choice, check_name, invalid, make_config, plain, resolve_config,
                        takes)
from .report import Report, uninformative
from .trace import check_spec, check_trace, is_workload, readable


@functools.lru_cache(maxsize=256)
def _file_sha256(path: str, size: int, mtime_ns: int) -> str:
    """sha256 of a trace file, cached per (path, size, mtime): a sweep hashes a trace once."""
    import hashlib

    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def trace_sha256(trace: str) -> str:
    """sha256 of the content of the trace file `trace`."""
    st = os.stat(trace)
    return _file_sha256(os.path.abspath(trace), st.st_size, st.st_mtime_ns)


#: What `precondition` takes: nothing, every logical page written once, or every request of the trace once.
PRECONDITIONS = ("none", "full", "trace")


def prepare(trace: str, ftl: str = "page", preset: str | None = None, capacity: str | int | None = None,
            precondition: str = "none", format: str = "auto", **options) -> dict:
    """The engine config of a run (checked names, then the keyword routing of `make_config`)."""
    ftl = check_name("schemes", ftl)
    if preset is not None:
        preset = check_name("presets", preset)
    format = check_name("formats", format)
    precondition = check_choice("precondition", precondition, PRECONDITIONS)
    check_trace(str(trace))
    from .config import check_options

    cfg = make_config(ftl, preset, capacity, precondition, format, options)
    check_options(ftl, options)
    return cfg


def array_model_on(run: dict) -> bool:
    """Whether a run (`simulate`'s keywords) has the multi-chip array model on, as the engine decides it from
    the run's device and run options (a preset's shape, `channels=`, `queue_depth=`, ...). A run whose options
    are refused counts as on: the run reports its own error."""
    try:
        return _core.array_model_on(prepare(**run))
    except _core.FtlsimError:
        return True


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
    ``nvram_write_us``, ``nvram_flush_at_end``) or the scheme's parameters (``log_blocks=8``).
    `progress(requests, done, total)` is called as the run goes.

    The engine's report records the complete resolved configuration (``config.resolved``: every option with
    its default, the scheme's parameters, the capacity unless the trace's reach sized it, which the repeat sizes
    again) and the trace's format, size and sha256, so ``simulate(**ftlsim.config.run_kwargs(report))``
    repeats the run exactly."""
    report = _simulate(trace, ftl, preset, capacity, precondition, format, progress, **scheme_params)
    for message in run_warnings(report):
        warnings.warn(message, RuntimeWarning, stacklevel=2)
    return report


def _simulate(trace: str, ftl: str = "page", preset: str | None = None, capacity: str | int | None = None,
              precondition: str = "none", format: str = "auto",
              progress: Callable[[int, int, int], bool | None] | None = None, **scheme_params) -> Report:
    """`simulate` without its warnings: a sweep's point, whose rows the sweep's caller reads (the command line
    says a grid's warnings once per trace and cause)."""
    trace = check_spec(trace)
    if progress is not None and not callable(progress):
        raise invalid("progress", progress, "must be a function of (requests, done, total)")
    cfg = prepare(trace, ftl, preset, capacity, precondition, format, **scheme_params)
    with readable(trace) as path:
        try:
            values = _core.simulate(path, cfg, progress)
        except _core.FtlsimError as e:
            given = {k: v for k, v in dict(scheme_params, preset=preset, capacity=capacity).items() if v is not None}
            raise respelled(e, keyword, given) from None
    if path != trace:
        # A stream was read from a copy: the report names the trace as given (a FIFO by its absolute path).
        values["config.trace"] = trace
        resolved = json.loads(values["config.resolved"])
        resolved["trace"] = os.path.abspath(trace) if os.path.exists(trace) else trace
        values["config.resolved"] = json.dumps(resolved, sort_keys=True)
    return Report(values)


def run_warnings(report, spell: Spelling = keyword) -> list[str]:
    """What a reader of a report must be told: figures that differ from what was asked (power cuts past the
    run's end, lines skipped) and runs whose figures say little about the scheme (`uninformative`), their
    fixes spelled by `spell` (Python's keywords; the command line passes its options)."""
    out = []
    planned, cuts = report.get("power.cuts_planned", 0), report.get("power.cuts", 0)
    config = json.loads(report.get("config.resolved") or "{}").get("config", {})
    asked = config.get("power_cuts") or 0
    if asked > planned:  # the header echoed the cuts asked
        out.append(f"{spell('power_cuts', str(asked))} asks for more cuts than the run has flash operations: "
                   f"{planned:,} planned, one at each")
    if cuts < planned:
        out.append(
            f"{cuts:,} of {planned:,} planned power cuts landed: a cut drops the rest of its request, so the run "
            f"does fewer flash operations than the dry run that chose the cut points, and the last "
            f"{planned - cuts:,} fell past its end")
    skipped = report.get("sim.skipped_lines") or 0
    if skipped:  # counted by skip_bad_lines; the figures are of the rest
        lines = f"{skipped:,} line of the trace did not parse and was" if skipped == 1 else \
            f"{skipped:,} lines of the trace did not parse and were"
        out.append(f"{lines} skipped ({spell('skip_bad_lines', 'true')}): the run is of the rest")
    scale = report.get("array.time_scale")
    scale_set = spell("time_scale", f"{scale:.15g}") if scale is not None else ""
    if report.get("array.timed_requests") == 0 and scale not in (None, 1) and report.get("host.requests"):
        depth = report.get("array.queue_depth")
        out.append(f"{scale_set} has no effect: the trace has no arrival times, so its "
                   f"requests ran as a closed loop, {spell('queue_depth', str(depth))} in the device at a time")
    span = report.get("array.span_us") or 0
    if span > PRECISE_SPAN_US:  # a response time is the difference of two times of this size, held as doubles
        out.append(f"the run spans {span / 86_400e6:,.0f} days of arrivals ({scale_set}): "
                   f"at times this large, response times are exact to {span * 2**-52:.2g} us only; a smaller "
                   f"time_scale keeps them to the nanosecond")
    return out + list(uninformative(report, spell).values())


# Arrival times up to this (about 26 days) keep a response time, the difference of two of them, to half a
# nanosecond (a double's 52-bit fraction), the report's precision.
PRECISE_SPAN_US = 0.0005 * 2**52


def run_key(run: dict) -> str:
    """The results-store key of a run: sha256 of its resolved configuration, the trace's content hash (a
    file's sha256, or the workload spec) and the ftlsim version."""
    import hashlib

    kw = {k: v for k, v in run.items() if k != "labels"}
    trace = str(kw.pop("trace"))
    cfg = resolve_config(prepare(trace, **kw))
    content = trace_sha256(trace) if os.path.isfile(trace) else trace
    ident = {"config": cfg, "trace": content, "version": _core_version()}
    return hashlib.sha256(json.dumps(ident, sort_keys=True, default=str).encode()).hexdigest()[:20]


def _core_version() -> str:
    from ._registry import registry

    return registry()["version"]


def _as_list(value) -> list:
    if value is None:
        return []
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    return list(value)


def _values(key: str, value) -> list:
    """A grid's values of parameter `key`: one value, a list (numpy's too), or a comma-separated string, whose
    JSON scalars are read as ``-p`` reads them (``"4,8"``: 4 and 8; ``"true"``: True); the string of a
    `LIST_VALUED` key is one value (``nvram_regions="0-64KiB,1MiB-2MiB"``)."""
    value = plain(value)
    if isinstance(value, (int, float, bool)):
        return [value]
    if isinstance(value, str) and key in LIST_VALUED:
        return [parse_value(value)]
    if isinstance(value, str):
        return [parse_value(v) for v in _as_list(value)]
    return [plain(v) for v in _as_list(value)]


def parse_value(text: str):
    """A value given as text (a ``--param``, an item of a comma-separated grid): JSON scalars (8, 0.5, true) as
    such, anything else as a string."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def grid(traces, schemes, grid: dict | None = None) -> list[dict]:
    """Every (trace, scheme, parameter combination) of a sweep, as keyword dicts for `simulate`.

    `schemes` is a list (or comma-separated string) of names, or a dict of name -> that scheme's own grid;
    `grid` (name -> list of values) applies to every scheme that takes the parameter: a scheme that does not
    (``page`` has no ``log_blocks``) runs once without it. A parameter no scheme takes is an error."""
    def listed(value):  # a generator or a pandas Series as a list, once
        return value if isinstance(value, (str, os.PathLike, dict)) or not isinstance(value, Iterable) else list(value)

    traces, schemes = listed(traces), listed(schemes)
    _check_types(traces, schemes, grid)
    common = grid or {}
    per_scheme = schemes if isinstance(schemes, dict) else {s: {} for s in _as_list(schemes)}
    # A scheme as registered (`FAST` is `fast`), so that its parameters are found and its rows are one.
    per_scheme = {check_name("schemes", s): own for s, own in per_scheme.items()}
    # A workload spec holds commas itself; a path is one trace, as simulate takes it.
    traces = [str(traces)] if isinstance(traces, (str, os.PathLike)) else [str(t) for t in traces]
    if not per_scheme or not traces:
        raise _core.FtlsimError(f"a sweep needs at least one {'scheme' if not per_scheme else 'trace'}")
    for key in common:
        if not any(takes(s, key) for s in per_scheme):
            raise _core.FtlsimError(f"no scheme of {', '.join(per_scheme)} takes parameter `{key}`")
    runs = []
    for trace, (ftl, own) in itertools.product(traces, per_scheme.items()):
        params = {k: v for k, v in common.items() if takes(ftl, k)}
        params.update(own or {})
        keys = list(params)
        empty = next((k for k in keys if not _values(k, params[k])), None)
        if empty is not None:  # it made no run, and ended in a KeyError
            raise _core.FtlsimError(f"grid parameter `{empty}` of {ftl} has no values: give one or more "
                                    f"({empty}=[4, 8]), or leave it out")
        for combo in itertools.product(*(_values(k, params[k]) for k in keys)):
            runs.append({"trace": trace, "ftl": ftl, **dict(zip(keys, combo))})
    return runs


def _check_types(traces, schemes, grid) -> None:
    """A sweep's arguments of a type it cannot take refused with what it takes (they raised "'int' object is
    not iterable" from inside the grid)."""
    def names(value) -> bool:
        return isinstance(value, (str, os.PathLike)) or (
            isinstance(value, (list, tuple)) and all(isinstance(v, (str, os.PathLike)) for v in value))

    def got(value) -> str:
        return f"got {type(value).__name__} {value!r}"

    if not names(traces):
        raise TypeError(f"sweep's traces must be a trace (a path or a workload spec) or a list of them; "
                        f"{got(traces)}")
    if isinstance(schemes, dict):
        own = next(((s, g) for s, g in schemes.items() if not isinstance(g, (dict, type(None)))), None)
        if own is not None:
            raise TypeError(f"sweep's schemes as a dict map each scheme's name to its own grid, a dict "
                            f"({{'fast': {{'log_blocks': [4, 8]}}}}); {own[0]!r} maps to {type(own[1]).__name__} "
                            f"{own[1]!r}")
    elif not names(schemes):
        raise TypeError(f"sweep's schemes must be a name, a list of names or a dict of name -> its own grid; "
                        f"{got(schemes)}")
    if grid is not None and not isinstance(grid, dict):
        raise TypeError(f"sweep's grid must be a dict of parameter -> values ({{'log_blocks': [4, 8]}}); "
                        f"{got(grid)}")
    grids = [grid or {}] + (list(schemes.values()) if isinstance(schemes, dict) else [])
    table = next(((k, v) for g in grids for k, v in (g or {}).items() if isinstance(v, dict)), None)
    if table is not None:  # its keys were swept
        raise TypeError(f"sweep's grid maps each parameter to a value or a list of values ({{'log_blocks': [4, 8]}}); "
                        f"{table[0]!r} maps to {type(table[1]).__name__} {table[1]!r}")


_cancel = threading.Event()  # set on Ctrl-C: runs on this process's threads stop within ~50 ms


def _run_point(kwargs: dict, spell: Spelling | None = None) -> dict:
    """One point of a sweep, on whichever worker runs it: the report's flat keys, or the error (its parameters
    spelled by `spell` where given: the command line's options, say; else as Python keywords)."""
    try:
        report = _simulate(**kwargs, progress=lambda *_: not _cancel.is_set())
        return {"status": "done", "error_kind": None, "error": None, **report.flat()}
    except (_core.FtlsimError, OSError, ValueError) as e:
        text = spelled(e, spell) if spell is not None and isinstance(e, _core.FtlsimError) else None
        return {"status": "failed", "error_kind": error_kind(e), "error": str(text or e)}


def error_kind(error: Exception) -> str:
    """A failed point's ``error_kind``: ``run`` for a run that started and failed (`RunFailedError`: a lost
    page, a broken invariant), ``input`` for one refused before it ran (a parameter out of range, a trace
    that does not parse, a missing file)."""
    return "run" if isinstance(error, _core.RunFailedError) else "input"


def _trace_paths(runs: list[dict]) -> set[str]:
    return {str(r["trace"]) for r in runs if not is_workload(str(r["trace"]))}


def _check_traces_on(client, traces: set[str]) -> None:
    """A trace given by path must exist on every Dask worker: checked before anything is submitted."""
    if not traces:
        return
    found = client.run(lambda paths: [p for p in paths if not os.path.isfile(p)], sorted(traces))
    missing = {w: m for w, m in found.items() if m}
    if missing:
        worker, paths = next(iter(missing.items()))
        raise _core.FtlsimError(f"trace file {paths[0]} is missing on Dask worker {worker} "
                                f"({len(missing)} of {len(found)} workers lack a trace); copy the traces to "
                                "the same path on every worker or use a shared file system")


def run_many(runs: list[dict], jobs: int | None = None, on_done: Callable[[int, int], None] | None = None,
             store=None, backend: str | None = None, client=None, scheduler: str | None = None,
             errors: str = "raise", stored: list[dict] | None = None, spell: Spelling | None = None,
             names: dict[str, str] | None = None):
    """Runs `simulate(**run)` for every run and returns a pandas DataFrame with one row per run, in order: the
    run's `labels` (a dict of extra columns, not passed to `simulate`), its keywords, ``key`` (the hash of
    its resolved configuration), ``status`` (done / failed), ``error_kind`` (input / run), ``error``, then the
    Report's flat keys.

    Backends: ``"processes"`` (default: one process per core, `jobs` of them), ``"threads"`` (the engine
    releases the GIL), or Dask: a `client` (``dask.distributed.Client``) or a `scheduler` address
    (``tcp://host:8786``). A trace given by path must exist on the workers at the same path.
    With `store` (a path, see `ftlsim.store.Store`), finished rows are saved as they come, points already done
    are not run again and failed points are retried; `stored` runs are not computed but their rows join the
    others (in the order of `stored`, trace by trace) when the store has them. `errors="raise"` raises the
    first failure after every point has run; ``"keep"`` returns failed rows with their error.
    `spell(key, value)` spells the parameters a failed point's error names (the command line passes its
    options' spelling; Python keywords by default). `on_done(done, total)` reports progress; Ctrl-C cancels
    the queued runs. ``df.attrs["points"]`` counts the distinct points: ``stored`` (found done in the store),
    ``computed`` and ``failed`` (now), ``torn`` (store rows found cut off, computed again) and ``damaged``
    (store rows of these points whose figures are not numbers, computed again). `names` maps a trace path to
    the name its rows and stored rows give it (the command line's piped trace, read from a temporary copy:
    ``-``)."""
    import pandas as pd

    from .store import Store, integers_kept

    if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1):
        raise _core.FtlsimError(f"jobs={jobs!r}: give a whole number of parallel runs, at least 1 (or None: "
                                "every core)")
    check_choice("errors", errors, ("raise", "keep"))
    kwargs = [{k: v for k, v in run.items() if k != "labels"} for run in runs]
    keys = [run_key(kw) for kw in kwargs]
    st = Store(store) if store is not None else None
    results: dict[str, dict] = {k: st.rows[k] for k in keys if st and st.done(k)}
    todo = list(dict.fromkeys(k for k in keys if k not in results))
    first = {k: kw for k, kw in reversed(list(zip(keys, kwargs)))}
    points = {"stored": len(results), "computed": 0, "failed": 0, "torn": st.torn if st else 0,
              "damaged": len(st.damaged & set(todo)) if st else 0}
    done_count = len(set(keys)) - len(todo)
    total = len(set(keys))
    if on_done:  # before the first run ends, so that a progress bar knows its total from the start
        on_done(done_count, total)
    last_save, save_every_s = time.monotonic(), 0.5

    def named(row: dict) -> dict:
        """`row` with its trace (and the report's) by the name `names` gives it."""
        if not names:
            return row
        return {**row, **{k: names.get(str(row[k]), row[k]) for k in ("trace", "config.trace") if k in row}}

    def finish(key: str, row: dict):
        nonlocal done_count, last_save, save_every_s
        results[key] = {"key": key, **row}
        done_count += 1
        points["computed" if row["status"] == "done" else "failed"] += 1
        if st is not None:
            st.add(key, named({**first[key], **row}))
            if time.monotonic() - last_save > save_every_s:
                started = time.monotonic()
                st.save()
                last_save = time.monotonic()
                # A save re-reads the whole store: a big one is saved less often, at most a fifth of the time.
                save_every_s = max(0.5, 4 * (last_save - started))
        if on_done:
            on_done(done_count, total)

    try:
        if todo:
            point = _run_point if spell is None else functools.partial(_run_point, spell=spell)
            _execute(point, todo, first, finish, jobs, backend, client, scheduler)
    finally:
        if st is not None:
            st.save()
    rows = [named(_row(run, kw, key, results[key])) for run, kw, key in zip(runs, kwargs, keys)]
    if st is not None and stored:
        rows = _with_stored(rows, stored, st, points)
    df = integers_kept(_defaults_filled(pd.DataFrame(rows)))
    df.attrs["points"] = points
    failed = df[df["status"] == "failed"]
    if errors == "raise" and len(failed):
        raise _core.FtlsimError(f"{len(failed)} of {len(df)} runs failed; first: {failed['error'].iloc[0]}")
    return df


def _with_stored(rows: list[dict], stored: list[dict], st, points: dict) -> list[dict]:
    """`rows` joined by the rows of the `stored` runs that the store has (and `rows` lacks), in the order of
    `stored` trace by trace, each trace's other rows after them; `points` counts the ones found done."""
    order: dict[str, tuple[dict, dict]] = {}
    for run in stored:
        kw = {k: v for k, v in run.items() if k != "labels"}
        key = run_key(kw)
        order.setdefault(key, (run, kw))
    have = {row["key"] for row in rows}
    extra = [_row(run, kw, key, st.rows[key]) for key, (run, kw) in order.items() if key not in have and key in st.rows]
    points["stored"] += sum(row["status"] == "done" for row in extra)
    traces = list(dict.fromkeys(str(row.get("trace")) for row in rows + extra))
    position = {key: i for i, key in enumerate(order)}
    return sorted(rows + extra, key=lambda row: (traces.index(str(row.get("trace"))),
                                                 position.get(row["key"], len(position))))


def _row(run: dict, kw: dict, key: str, result: dict) -> dict:
    """A run's row: labels, keywords, key, then the result (status, error, figures)."""
    row = {k: v for k, v in result.items() if k not in kw and k != "key"}
    return {**run.get("labels", {}), **kw, "key": key, **row}


def _defaults_filled(df):
    """`df` with each gap of a scheme-parameter or device column filled with the value the run used, from its
    report (``config.params``, ``config.pages_per_block``, ...): a scheme added to a sweep without its own grid
    ran with its default ``log_blocks``, and shows it. A scheme that has no such parameter (``page`` has no
    ``log_blocks``) keeps the gap."""
    from ._registry import registry

    params = {p for s in registry()["schemes"] for p in (s["defaults"] or {})}
    device = {k for k in registry()["keys"]["device"] if f"config.{k}" in df.columns}
    columns = [c for c in df.columns if (c in params or c in device) and df[c].isna().any()]
    if not columns or "config.params" not in df.columns:
        return df
    ran_with = df["config.params"].map(lambda p: json.loads(p) if isinstance(p, str) and p.startswith("{") else {})
    for column in columns:
        gaps = df[column].isna()
        used = (df.loc[gaps, f"config.{column}"] if column in device
                else ran_with[gaps].map(lambda p, key=column: p.get(key)))
        df[column] = df[column].astype(object)
        df.loc[gaps, column] = used
    return df


def _die_with_the_parent(parent: int):
    """A worker process ends when the sweep that started it does, even killed with SIGKILL (which no handler
    sees): on Linux the kernel sends the worker SIGKILL when its parent dies (``PR_SET_PDEATHSIG``), the most
    robust way since it holds while the worker is deep in the engine; elsewhere a daemon thread polls the
    parent's pid. Either way a parent that died before this ran is caught by the check of ``getppid``. (The
    kernel watches the thread that forked the worker: `_execute` makes the pool and waits for it on one thread,
    so that thread outlives its workers.)

    The worker also ignores Ctrl-C (a terminal sends it to the whole process group): the parent cancels the
    sweep and terminates its workers. A KeyboardInterrupt inside a worker's own start-up could otherwise leave
    it holding an import lock while the parent waits for it (a hang the Ctrl-C test found under load)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if sys.platform.startswith("linux"):
        import ctypes

        pr_set_pdeathsig = 1
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGKILL)
    else:
        def watch():
            while os.getppid() == parent:
                time.sleep(0.5)
            os._exit(1)

        threading.Thread(target=watch, daemon=True, name="ftlsim-parent-watch").start()
    if os.getppid() != parent:
        os._exit(1)


def _execute(point, todo, kwargs_of, finish, jobs, backend, client, scheduler):
    """Runs `point(kwargs)` for each key of `todo` on the backend, `finish(key, row)` as each ends."""
    if client is not None or scheduler is not None or backend == "dask":
        return _execute_dask(point, todo, kwargs_of, finish, client, scheduler)
    jobs = jobs or os.cpu_count() or 1
    if backend == "threads" or jobs == 1 or len(todo) == 1:
        from concurrent.futures import ThreadPoolExecutor as Pool

        pool = Pool(max_workers=min(jobs, len(todo)))
    elif backend in (None, "processes"):
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor as Pool

        # fork where the platform has it: workers start in milliseconds and do not re-run the caller's
        # __main__ (a notebook, stdin or an unguarded script); elsewhere the platform's default.
        method = "fork" if sys.platform.startswith("linux") else None
        pool = Pool(max_workers=min(jobs, len(todo)), mp_context=multiprocessing.get_context(method),
                    initializer=_die_with_the_parent, initargs=(os.getpid(),))
    else:
        raise _core.FtlsimError(f"unknown backend `{backend}`; valid: processes, threads, dask")
    from concurrent.futures import as_completed

    _cancel.clear()
    try:
        futures = {pool.submit(point, kwargs_of[k]): k for k in todo}
        for future in as_completed(futures):
            finish(futures[future], future.result())
    except BaseException:  # Ctrl-C or a failing callback: cancel the queued runs, stop the running ones
        _cancel.set()
        for process in (getattr(pool, "_processes", None) or {}).values():
            process.terminate()
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown(wait=True)


SCHEDULER_TIMEOUT_S = 5


def _connect(Client, address: str):
    """A client of the Dask scheduler at `address`, or one line saying it did not answer within
    `SCHEDULER_TIMEOUT_S` (distributed's own default waits 30 s and raises a long chained traceback)."""
    try:
        return Client(address, timeout=SCHEDULER_TIMEOUT_S)
    except (ValueError, TypeError) as e:
        raise _core.FtlsimError(f"`{address}` is not a Dask scheduler address ({str(e)[:160]}); give "
                                "tcp://HOST:8786") from None
    except (OSError, TimeoutError) as e:
        reason = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise _core.FtlsimError(f"the Dask scheduler at {address} did not answer within {SCHEDULER_TIMEOUT_S} s "
                                f"({reason[:160]}); check the address (tcp://HOST:8786) and that `dask scheduler` "
                                "runs there") from None


def _execute_dask(point, todo, kwargs_of, finish, client, scheduler):
    try:
        from dask.distributed import Client, as_completed
    except ImportError:
        raise _core.FtlsimError("the Dask backend needs dask.distributed: pip install 'dask[distributed]'") from None

    own = client is None
    if own:
        client = _connect(Client, scheduler) if scheduler else Client(processes=True)
    try:
        _check_traces_on(client, _trace_paths([kwargs_of[k] for k in todo]))
        futures = {client.submit(point, kwargs_of[k], key=f"ftlsim-{k}", pure=False): k for k in todo}
        try:
            for future in as_completed(list(futures)):
                finish(futures[future], future.result())
        finally:
            client.cancel([f for f in futures if not f.done()])
    finally:
        if own:
            client.close()


def sweep(
    traces: str | Iterable[str],
    schemes,
    grid: dict | None = None,
    jobs: int | None = None,
    on_done: Callable[[int, int], None] | None = None,
    store=None,
    client=None,
    scheduler: str | None = None,
    backend: str | None = None,
    errors: str = "keep",
    **common,
):
    """Runs the grid traces x schemes x parameters and returns a pandas DataFrame with one row per run: the
    run's grid values, ``key``, ``status``, ``error_kind`` (a failed point's: ``input`` for one refused before it
    ran, ``run`` for a run that failed), ``error``, then the Report's flat keys. `schemes` is a list of names
    or a dict of name -> that scheme's own grid; `grid` (name -> list of values) applies to every scheme that
    takes the parameter. `common` keywords apply to every run (``preset=``, ``capacity=``, ...).

    Local processes on all cores by default; `client` (a ``dask.distributed.Client``) or `scheduler`
    (``tcp://host:8786``) run the points on a Dask cluster. With `store` (``results.parquet``, ``.csv`` or a
    directory), re-running the sweep computes only the points not yet done; a failed point is recorded with
    its error (``errors="raise"`` raises instead). Several sweeps may share a store at once.
    ``df.attrs["points"]`` says how many points came from the store, were computed and failed."""
    for key, argument in (("ftl", "schemes"), ("trace", "traces")):
        if key in common:  # each run's own: {**common, **run} dropped it without a word
            raise _core.FtlsimError(f"sweep takes no {key}=: give {argument} (sweep(traces, schemes, ...))")
    runs = [{**common, **run} for run in _grid(traces, schemes, grid)]
    return run_many(runs, jobs=jobs, on_done=on_done, store=store, backend=backend, client=client,
                    scheduler=scheduler, errors=errors)


_grid = grid
