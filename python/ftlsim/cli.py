"""The ``ftlsim`` command: run, compare, sweep, generate, info, list, ram, reproduce.

Errors go to stderr; bad input exits 2, a run that started and failed (a broken NAND rule or integrity check,
no free blocks) exits 1, Ctrl-C exits 130."""

from __future__ import annotations

import os
import signal
import sys
import threading


def _interrupted_while_starting(signum, frame):
    # Ctrl-C while the command's modules load: the same one line and exit code as anywhere else, rather than
    # a traceback from deep inside an import (and no half-held import lock).
    sys.stderr.write("interrupted\n")
    os._exit(130)


_starting = threading.current_thread() is threading.main_thread()
if _starting:
    _previous_handler = signal.signal(signal.SIGINT, _interrupted_while_starting)

import json  # noqa: E402
import re  # noqa: E402
import time  # noqa: E402

import click
from click.core import ParameterSource
from rich.console import Console
from rich.table import Table

from . import _core
from ._registry import names, registry
from .output import check_output
from .report import Report
from .sim import simulate

if _starting:
    signal.signal(signal.SIGINT, _previous_handler)

DEFAULT_TRACE = "uniform:writes=150000,seed=1"
# Piped output (files, CI logs) gets wide tables instead of rich's 80-column default.
console = Console(width=None if sys.stdout.isatty() else 160)
err_console = Console(stderr=True, width=None if sys.stderr.isatty() else 160)

# The engine's suggestions are written as config keys (capacity="269MiB", wrap=true); on the command line
# they are these options, and any other key is `-p key=value`.
FLAGS = {"wrap": "--wrap", "writes_only": "--writes-only", "skip_bad_lines": "--skip-bad-lines",
         "compact": "--compact", "mount_at_end": "--mount-at-end", "torn_pages": "--torn-pages"}
VALUED = {"capacity": "--capacity", "preset": "--preset", "precondition": "--precondition", "format": "--format",
          "device": "--device", "devices": "--devices", "nvram": "--nvram", "nvram_policy": "--nvram-policy", "ftl": "--ftl",
          "power_cuts": "--power-cuts", "power_cut_seed": "--power-cut-seed"}


def cli_spelling(message: str) -> str:
    """Rewrites ``key=value`` suggestions of an error message in the command line's spelling:
    ``capacity="269MiB"`` -> ``--capacity 269MiB``, ``wrap=true`` -> ``--wrap``, ``log_blocks=8`` ->
    ``-p log_blocks=8``. Keys that are not options are left alone."""
    known = set(registry()["keys"]["run"]) | set(registry()["keys"]["trace"]) | set(registry()["keys"]["device"])
    known |= {p for s in registry()["schemes"] for p in (s["defaults"] or {})}

    def one(m: re.Match) -> str:
        key, value = m[1], m[2].strip('"')
        if key not in known:
            return m[0]
        if key in FLAGS:
            return FLAGS[key] if value in ("true", "True") else m[0]
        return f"{VALUED[key]} {value}" if key in VALUED else f"-p {key}={value}"

    message = re.sub(r"(?<![\w-])(\w+)=(\"[^\"]*\"|[\w.]+)(?: / --[\w-]+)?", one, message)
    return message


def fail(error, code: int | None = None):
    """Prints the error on stderr in the command line's spelling and exits: 1 for a run that failed, 2 for
    bad input."""
    if code is None:
        code = 1 if isinstance(error, _core.RunFailedError) else 2
    from rich.markup import escape

    err_console.print(f"[bold red]error:[/] {escape(cli_spelling(str(error)))}", highlight=False, soft_wrap=True)
    sys.exit(code)


class Ftlsim(click.Group):
    """The command group: Ctrl-C anywhere (parsing, start-up, a run) is one line on stderr and exit code 130,
    where click's own handling would print "Aborted!" and exit 1."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        try:
            code = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except (KeyboardInterrupt, click.exceptions.Abort):
            err_console.print("interrupted", highlight=False)
            sys.exit(130)
        except click.ClickException as e:
            e.show()
            sys.exit(e.exit_code)
        sys.exit(code if isinstance(code, int) else 0)


def parse_value(text: str):
    """A --param value: JSON scalars (8, 0.5, true) as such, anything else as a string."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def parse_params(pairs: tuple[str, ...]) -> dict:
    out = {}
    for pair in pairs:
        if "=" not in pair:
            raise click.BadParameter(f"`{pair}` is not key=value (e.g. --param log_blocks=8)", param_hint="--param")
        key, value = pair.split("=", 1)
        out[key.strip()] = value.strip()
    return out


class LazyProgress:
    """A progress bar that appears only once a run has taken more than a second."""

    def __init__(self, label: str):
        self.label = label
        self.started = time.monotonic()
        self.bar = None
        self.task = None

    def __call__(self, requests: int, done: int, total: int):
        if self.bar is None:
            if time.monotonic() - self.started < 1.0 or not err_console.is_terminal:
                return True
            self.bar = progress_bar("{task.percentage:>5.1f}%  {task.fields[requests]:,} requests", err_console)
            self.bar.start()
            self.task = self.bar.add_task(self.label, total=max(total, 1), requests=0)
        self.bar.update(self.task, completed=done, total=max(total, 1), requests=requests)
        return True

    def close(self):
        if self.bar is not None:
            self.bar.stop()


def progress_bar(counter: str, on, *, eta: bool = True):
    """A transient rich progress bar: label, bar, COUNTER, elapsed (and ETA). rich.progress is imported here,
    not at the top: it costs about 10 ms of the 0.18-0.20 s start-up of a short `ftlsim run`, which never shows
    a bar."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    columns = [TextColumn("[bold]{task.description}"), BarColumn(), TextColumn(counter), TimeElapsedColumn()]
    return Progress(*columns, *([TimeRemainingColumn()] if eta else []), console=on, transient=True)


def table_sections() -> list[tuple[str, list[str]]]:
    """The keys `ftlsim run` shows, by section in report order: the engine's report schema decides."""
    from .report import report_schema

    sections: dict[str, list[str]] = {}
    for k in report_schema():
        if k["table"] and "<" not in k["key"]:
            sections.setdefault(k["section"], []).append(k["key"])
    return list(sections.items())


def fmt(value) -> str:
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.3f}" if abs(value) < 1000 else f"{value:,.0f}"
    return str(value)


def report_table(report: Report) -> Table:
    params = "" if report["config.params"] in ("{}", "null") else f" {report['config.params']}"
    preset = next((p for p in registry()["presets"] if p["name"] == report["config.preset"]), None)
    geometry = (report["config.page_bytes"], report["config.pages_per_block"])
    # A page size or block length other than the preset's keeps the preset's timings per page: say so.
    device = report["config.preset"]
    if preset and (preset["page_bytes"], preset["pages_per_block"]) != geometry:
        device += " timings (geometry overridden)"
    title = (
        f"{report['config.scheme']}{params} on {report['config.trace']}\n"
        f"{device}, {report['config.capacity_bytes'] / 2**20:,.1f} MiB, "
        f"{geometry[0]} B pages x {geometry[1]}"
    )
    table = Table(title=title, show_header=False, title_justify="left")
    table.add_column("figure", style="cyan")
    table.add_column("value", justify="right")
    for section, keys in table_sections():
        rows = [(k, report.get(k)) for k in keys if k in report]
        rows = [(k, v) for k, v in rows if v not in (0, None) or k in ("flash.erases", "host.write_requests")]
        if not rows:
            continue
        table.add_row(f"[bold]{section}[/]", "")
        for key, value in rows:
            table.add_row(f"  {key}", fmt(value))
    return table


def complete_names(kind: str, comma: bool = False):
    """Shell completion of registered names (schemes, presets, formats); after a comma for lists."""

    def complete(ctx, param, incomplete: str):
        head, _, last = incomplete.rpartition(",") if comma else ("", "", incomplete)
        prefix = f"{head}," if head else ""
        extra = ["auto"] if kind == "formats" else []
        return [prefix + n for n in names(kind) + extra if n.startswith(last)]

    return complete


def complete_trace(ctx, param, incomplete: str):
    """A trace is a file (the shell completes paths) or a built-in workload ``name:``."""
    from click.shell_completion import CompletionItem

    workloads = [CompletionItem(f"{n}:") for n in names("workloads") if n.startswith(incomplete)]
    return workloads + [CompletionItem(incomplete, type="file")]


def common_options(f):
    f = click.option("--param", "-p", "params", multiple=True, metavar="K=V",
                     help="A scheme parameter (log_blocks=8, profile=psu-flashsim), device override "
                          "(page_bytes=2048), trace option, or run option: extra_blocks=N or "
                          "over_provisioning=F (the chip's spare blocks), rmw=false (no read before a "
                          "partial-page write), measure_from=10000 or 30s (count from that request or time).")(f)
    f = click.option("--preset", default=None, shell_complete=complete_names("presets"),
                     help="Device preset (see `ftlsim list`); default lee2007.")(f)
    f = click.option("--capacity", default=None, help="Logical capacity, e.g. 64MiB; default: the trace's extent.")(f)
    f = click.option("--precondition", type=click.Choice(["none", "full", "trace"]), default="none",
                     help="full: write every logical page once first, then reset the counters; trace: write "
                          "every request of the trace once first (PSU FlashSim's warm-up).")(f)
    f = click.option("--format", "fmt_name", default="auto", shell_complete=complete_names("formats"),
                     help="Trace format (see `ftlsim list`); default: sniff.")(f)
    f = click.option("--device", type=int, default=None, help="Keep one device / ASU of a multi-device trace.")(f)
    f = click.option("--devices", default=None, metavar="fold|concat|N,M",
                     help="fold (default): one address space for every device of a multi-device trace; concat: a range per "
                          "device, in device order, each its highest address rounded up to a block; or devices "
                          "to keep, e.g. 0,3: concatenated in that order.")(f)
    f = click.option("--writes-only", is_flag=True, help="Drop reads and trims.")(f)
    f = click.option("--skip-bad-lines", is_flag=True, help="Count lines that do not parse instead of failing.")(f)
    f = click.option("--wrap", is_flag=True, help="Fold requests beyond the capacity into it.")(f)
    f = click.option("--compact", is_flag=True,
                     help="Map the 1 MiB extents the trace touches densely onto the device (sparse, huge traces).")(f)
    f = click.option("--nvram", default=None, metavar="SIZE",
                     help="An NVRAM write cache of SIZE (e.g. 128KiB) in front of the scheme.")(f)
    f = click.option("--nvram-policy", default=None, type=click.Choice(["metadata", "region", "lru", "bplru"]),
                     help="What the NVRAM absorbs (default metadata: writes tagged metadata); region needs "
                          "-p nvram_regions=0-64KiB.")(f)
    return f


def option_kwargs(ctx, file_kwargs: dict | None = None) -> dict:
    """The run's keywords: a config file's, overridden by the options given on the command line (an option
    left at its default does not override the file)."""
    p = ctx.params
    given = {name for name in p if ctx.get_parameter_source(name) not in (ParameterSource.DEFAULT, None)}
    out = dict(file_kwargs or {})
    simple = {"preset": "preset", "capacity": "capacity", "precondition": "precondition", "fmt_name": "format",
              "device": "device", "devices": "devices", "nvram": "nvram", "nvram_policy": "nvram_policy"}
    for name, key in simple.items():
        if name in p and (name in given or (key not in out and p[name] is not None)):
            out[key] = p[name]
    for flag in ("writes_only", "skip_bad_lines", "wrap", "compact"):
        if flag in given:
            out[flag] = True
    return out


@click.group(cls=Ftlsim, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="ftlsim")
def main():
    """ftlsim: trace-driven simulation of NAND flash and Flash Translation Layers.

    Shell completion (bash): eval "$(_FTLSIM_COMPLETE=bash_source ftlsim)"; zsh_source and fish_source too."""


def load_config(path) -> dict:
    from .config import load

    try:
        return load(path)
    except _core.FtlsimError as e:
        fail(e)


@main.command()
@click.argument("trace", required=False, shell_complete=complete_trace)
@click.option("--config", "-c", "config_path", type=click.Path(dir_okay=False),
              help="A run config (TOML, JSON or YAML) or a report saved with --json: repeats that run. Options "
                   "given here override the file.")
@click.option("--ftl", default=None, shell_complete=complete_names("schemes"),
              help="Scheme name (see `ftlsim list`); default page.")
@common_options
@click.option("--power-cuts", type=click.IntRange(min=0), default=0,
              help="Crash test: cut the power at N random flash operations, mount from flash after each and "
                   "check every logical page (schemes that can mount: ftlsim list).")
@click.option("--power-cut-seed", type=int, default=1, show_default=True, help="Seed of the cut points.")
@click.option("--mount-at-end", is_flag=True, help="Mount the scheme from flash after the trace: its boot cost.")
@click.option("--torn-pages", is_flag=True,
              help="A power cut that lands on a page program tears it: the page reads back uncorrectable and the "
                   "scheme must ignore it when it mounts.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False),
              help="Write the report as JSON (with the complete configuration: `ftlsim run -c` repeats it).")
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False), help="Write the report as one CSV row.")
@click.pass_context
def run(ctx, trace, config_path, ftl, params, preset, capacity, precondition, fmt_name, device, devices, writes_only,
        skip_bad_lines, wrap, compact, nvram, nvram_policy, power_cuts, power_cut_seed, mount_at_end, torn_pages,
        json_path, csv_path):
    """Run TRACE (a trace file or a built-in workload) through one scheme and print the figures.

    With no TRACE, runs the built-in default uniform:writes=150000,seed=1 (the FAST paper's pattern E)."""
    from .config import run_kwargs

    file_kwargs, outputs = {}, {}
    if config_path:
        table = load_config(config_path)
        outputs = {k: table[k] for k in ("json", "csv") if k in table and "config.resolved" not in table}
        try:
            file_kwargs = run_kwargs(table)
        except _core.FtlsimError as e:
            fail(e)
    kwargs = option_kwargs(ctx, file_kwargs)
    kwargs.update({k: parse_value(v) for k, v in parse_params(params).items()})
    trace = trace or kwargs.pop("trace", None)
    kwargs.pop("trace", None)
    if ftl is not None:
        kwargs["ftl"] = ftl
    json_path = json_path if json_path is not None else outputs.get("json")
    csv_path = csv_path if csv_path is not None else outputs.get("csv")
    try:
        for path, what in ((json_path, "--json"), (csv_path, "--csv")):
            if path is not None:
                check_output(path, what, inputs=(trace,))
    except _core.FtlsimError as e:
        fail(e)
    if trace is None:
        trace = DEFAULT_TRACE
        err_console.print(f"[dim]no trace given: running the built-in workload {trace}[/]")
    if power_cuts:
        kwargs.update(power_cuts=power_cuts, power_cut_seed=power_cut_seed)
    if mount_at_end:
        kwargs["mount_at_end"] = True
    if torn_pages:
        kwargs["torn_pages"] = True
    bar = LazyProgress(kwargs.get("ftl", "page"))
    try:
        report = simulate(trace, progress=bar, **kwargs)
    except _core.FtlsimError as e:
        bar.close()
        fail(e)
    finally:
        bar.close()
    console.print(report_table(report))
    try:
        if json_path:
            report.to_json(json_path)
            err_console.print(f"[dim]report written to {json_path}[/]")
        if csv_path:
            report.to_csv(csv_path)
            err_console.print(f"[dim]report written to {csv_path}[/]")
    except _core.FtlsimError as e:
        fail(e)


COMPARE_COLUMNS = ["flash.erases", "time_us.total", "merges.switch", "merges.partial", "merges.full", "merges.dead",
                   "merges.fold", "flash.page_writes", "flash.spare_reads", "write_amplification", "ram.total_bytes"]


def check_plot_path(path: str, what: str = "--plot", inputs=()) -> None:
    """A plot path must be writable and name a format matplotlib draws (png, pdf, svg, ...)."""
    import os

    check_output(path, what, inputs=inputs)
    ext = os.path.splitext(path)[1].lstrip(".").lower()
    from matplotlib.backend_bases import FigureCanvasBase

    valid = FigureCanvasBase.get_supported_filetypes()
    if ext not in valid:
        raise _core.FtlsimError(f"--plot {path}: unknown image format `.{ext}`; valid: {', '.join(sorted(valid))}")


def grid_table(df, title: str, swept: list[str], columns: list[str] = COMPARE_COLUMNS) -> Table:
    figures = [c for c in columns if c in df and (df[c].fillna(0) != 0).any()]
    columns = [c for c in ("trace", "ftl") if c in df and (c == "ftl" or df[c].nunique() > 1)] + swept + figures
    table = Table(title=title, title_justify="left")
    for col in columns:
        table.add_column(col, justify="left" if col in ("ftl", "trace") else "right")
    def cell(v) -> str:
        if isinstance(v, float):  # a grid column with gaps (a scheme without the parameter) is float
            return "-" if v != v else fmt(int(v)) if v.is_integer() and abs(v) < 2**53 else fmt(v)
        return fmt(v)

    for _, row in df[df["status"] == "done"].iterrows():
        table.add_row(*[cell(row[c]) for c in columns])
    return table


def run_grid(label: str, traces, schemes, grid: dict, common: dict, settings: dict, inputs=(),
             columns: list[str] = COMPARE_COLUMNS):
    """Runs a sweep with a progress bar, prints its table and failures, writes its outputs; exits 1 when a
    point failed (the others are kept, and in the store)."""
    from .sim import sweep

    try:
        for key, what in (("csv", "--csv"), ("plot", "--plot")):
            if settings.get(key):
                (check_plot_path if key == "plot" else check_output)(settings[key], what, inputs=inputs)
        with progress_bar("{task.completed}/{task.total} runs", err_console) as bar:  # every backend
            task = bar.add_task(label, total=None)
            df = sweep(traces, schemes, grid, jobs=settings.get("jobs"), store=settings.get("store"),
                       scheduler=settings.get("scheduler"), backend=settings.get("backend"),
                       on_done=lambda d, t: bar.update(task, completed=d, total=t), **common)
    except _core.FtlsimError as e:
        fail(e)
    from rich.markup import escape

    swept = [k for k in grid_columns(schemes, grid) if k in df]
    console.print(grid_table(df, label, swept, columns))
    failed = df[df["status"] == "failed"]
    for _, row in failed.iterrows():
        err_console.print(f"[bold red]failed:[/] {row['ftl']} on {row['trace']} "
                          f"{ {k: row[k] for k in swept if row[k] == row[k]} }: {escape(cli_spelling(str(row['error'])))}",
                          highlight=False)
    try:
        if settings.get("csv"):
            from .output import atomic_path

            with atomic_path(settings["csv"]) as tmp:
                df.to_csv(tmp, index=False)
            err_console.print(f"[dim]{len(df)} rows written to {settings['csv']}[/]")
        if settings.get("plot") and len(failed) < len(df):
            from .plot import compare_plot

            compare_plot(df[df["status"] == "done"], swept, settings["plot"], title=label,
                         precondition=common.get("precondition"))
            err_console.print(f"[dim]plot written to {settings['plot']}[/]")
    except OSError as e:
        fail(_core.FtlsimError(f"cannot write output: {e}"))
    if settings.get("store"):
        err_console.print(f"[dim]results stored in {settings['store']}[/]")
    if len(failed):
        fail(f"{len(failed)} of {len(df)} runs failed (listed above)", code=1)


def grid_columns(schemes, grid: dict) -> list[str]:
    """The swept parameter names, in order: the common grid's, then each scheme's own."""
    cols = list(grid)
    if isinstance(schemes, dict):
        for own in schemes.values():
            cols += [k for k in (own or {}) if k not in cols]
    return cols


@main.command()
@click.argument("trace", required=False, shell_complete=complete_trace)
@click.option("--ftl", "ftls", default="bast,fast,ofast", show_default=True,
              shell_complete=complete_names("schemes", comma=True), help="Comma-separated schemes.")
@common_options
@click.option("--plot", "plot_path", type=click.Path(dir_okay=False),
              help="Draw erase count and elapsed time against the swept parameters (PNG, PDF or SVG).")
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False), help="Write one row per run as CSV.")
@click.option("--jobs", type=click.IntRange(min=1), default=None, help="Parallel runs (default: all cores).")
@click.pass_context
def compare(ctx, trace, ftls, params, preset, capacity, precondition, fmt_name, device, devices, writes_only,
            skip_bad_lines, wrap, compact, nvram, nvram_policy, plot_path, csv_path, jobs):
    """Run a grid of schemes x parameter values on TRACE and print one table.

    A parameter given with several comma-separated values (--param log_blocks=4,8,16) is swept; a scheme that
    does not take a parameter runs without it."""
    trace = trace or DEFAULT_TRACE
    grid = {k: [parse_value(x) for x in v.split(",")] for k, v in parse_params(params).items()}
    common = option_kwargs(ctx)
    run_grid(trace, trace, ftls, grid, common, {"csv": csv_path, "plot": plot_path, "jobs": jobs},
             inputs=(trace,))


MOUNT_COLUMNS = ["mount.spare_reads", "mount.page_reads", "mount.time_us.max", "ram.total_bytes",
                 "bad_blocks.factory", "flash.erases"]


@main.command("mount-cost")
@click.argument("trace", required=False, shell_complete=complete_trace)
@click.option("--ftl", "ftls", default=None, shell_complete=complete_names("schemes", comma=True),
              help="Comma-separated schemes (default: every scheme).")
@common_options
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False), help="Write one row per scheme as CSV.")
@click.option("--jobs", type=click.IntRange(min=1), default=None, help="Parallel runs (default: all cores).")
@click.pass_context
def mount_cost(ctx, trace, ftls, params, preset, capacity, precondition, fmt_name, device, devices, writes_only,
               skip_bad_lines, wrap, compact, nvram, nvram_policy, csv_path, jobs):
    """Boot time of each scheme on a device filled by TRACE: the trace runs, then the scheme rebuilds its
    RAM from flash alone (spare areas, map blocks) and the table gives what that mount read and how long it
    took with the preset's timings (e.g. --preset tinyftl-16g). A scheme that cannot mount yet is listed as
    failed."""
    trace = trace or DEFAULT_TRACE
    ftls = ftls or ",".join(names("schemes"))
    grid = {k: [parse_value(x) for x in v.split(",")] for k, v in parse_params(params).items()}
    common = {**option_kwargs(ctx), "mount_at_end": True}
    run_grid(f"mount cost after {trace}", trace, ftls, grid, common, {"csv": csv_path, "jobs": jobs},
             inputs=(trace,), columns=MOUNT_COLUMNS)


@main.command()
@click.argument("traces", nargs=-1, shell_complete=complete_trace)
@click.option("--config", "-c", "config_path", type=click.Path(dir_okay=False),
              help="A sweep config (TOML, JSON or YAML): traces, schemes with their grids, options, outputs.")
@click.option("--ftl", "ftls", default=None, shell_complete=complete_names("schemes", comma=True),
              help="Comma-separated schemes (overrides the file's).")
@common_options
@click.option("--store", default=None,
              help="Results store: a .parquet or .csv file or a directory; points already done are skipped.")
@click.option("--scheduler", default=None, metavar="ADDR",
              help="Run the points on a Dask cluster, e.g. tcp://host:8786 (trace files must exist on the "
                   "workers at the same path).")
@click.option("--backend", type=click.Choice(["processes", "threads", "dask"]), default=None,
              help="Where points run: local processes (default, all cores), threads, or dask (a local "
                   "cluster unless --scheduler is given).")
@click.option("--jobs", type=click.IntRange(min=1), default=None, help="Parallel local runs (default: all cores).")
@click.option("--plot", "plot_path", type=click.Path(dir_okay=False), help="Draw the figures against the grid.")
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False), help="Write one row per run as CSV.")
@click.pass_context
def sweep(ctx, traces, config_path, ftls, params, preset, capacity, precondition, fmt_name, device, devices, writes_only,
          skip_bad_lines, wrap, compact, nvram, nvram_policy, store, scheduler, backend, jobs, plot_path, csv_path):
    """Run a grid of TRACES x schemes x parameters, resumably: with --store, re-running computes only the
    points not yet done, and a failed point is recorded with its error without losing the others.

    -p key=a,b,c sweeps a parameter over every scheme that takes it."""
    from .config import sweep_parts

    file_traces, schemes, grid, file_common, settings = [], None, {}, {}, {}
    if config_path:
        try:
            file_traces, schemes, grid, file_common, settings = sweep_parts(load_config(config_path))
        except _core.FtlsimError as e:
            fail(e)
    traces = list(traces) or file_traces
    if not traces:
        fail("no trace: give TRACES or `traces` in the config file")
    if ftls:  # the named schemes, each with the file's grid for it
        own = schemes if isinstance(schemes, dict) else {}
        schemes = {s: own.get(s, {}) for s in ftls.split(",") if s.strip()}
    if schemes is None:
        fail("no scheme: give --ftl or `schemes` in the config file")
    grid = {**grid, **{k: [parse_value(x) for x in v.split(",")] for k, v in parse_params(params).items()}}
    common = option_kwargs(ctx, file_common)
    given = {"store": store, "scheduler": scheduler, "backend": backend, "jobs": jobs, "plot": plot_path,
             "csv": csv_path}
    settings.update({k: v for k, v in given.items() if v is not None})
    label = traces[0] if len(traces) == 1 else f"{len(traces)} traces"
    run_grid(label, traces, schemes, grid, common, settings, inputs=tuple(traces))


@main.command("generate")
@click.argument("workload", shell_complete=complete_trace)
@click.option("--output", "-o", required=True, type=click.Path(dir_okay=False),
              help="Trace file to write; its extension names the format: .csv (native, with tags and times), "
                   ".trace or .ascii (SSDsim / MQSim), .blkparse; .gz on top compresses.")
@click.option("--preset", default=None, shell_complete=complete_names("presets"),
              help="Device preset; its page size and capacity size the workload.")
@click.option("--capacity", default=None, help="Logical capacity the workload spreads over, e.g. 32MiB.")
@click.option("--param", "-p", "params", multiple=True, metavar="K=V", help="A device override or trace option.")
def generate_cmd(workload, output, preset, capacity, params):
    """Write WORKLOAD (a built-in workload, or any trace) to OUTPUT in the format its extension names, arrival
    times kept (`ftlsim convert` is the same command). The engine writes a temporary file and renames it."""
    from .trace import generate

    kwargs = {k: parse_value(v) for k, v in parse_params(params).items()}
    try:
        check_output(output, "--output", inputs=(workload,))
        n = generate(workload, output, preset=preset, capacity=capacity, **kwargs)
    except (_core.FtlsimError, ValueError) as e:
        fail(e)
    console.print(f"{n} requests written to {output}")


main.add_command(generate_cmd, "convert")


@main.command("info")
@click.argument("trace", shell_complete=complete_trace)
@click.option("--format", "fmt_name", default="auto", shell_complete=complete_names("formats"),
              help="Trace format (see `ftlsim list`); default: sniff.")
@click.option("--device", type=click.IntRange(min=0), default=None, help="Keep one device / ASU.")
@click.option("--devices", default=None, metavar="fold|concat|N,M",
              help="fold (default), concat (a range per device, shown with each device) or devices to keep, "
                   "concatenated in the order given.")
@click.option("--writes-only", is_flag=True, help="Drop reads and trims.")
@click.option("--skip-bad-lines", is_flag=True, help="Count lines that do not parse instead of failing.")
@click.option("--compact", is_flag=True, default=None, help="Describe the trace with its touched 1 MiB extents packed.")
@click.option("--page-bytes", type=click.IntRange(min=1, max=2**31), default=512, show_default=True,
              help="Page size for the footprint and page concentration.")
@click.option("--block-bytes", type=click.IntRange(min=1), default=16384, show_default=True,
              help="Block size for block concentration.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False), help="Write the statistics as JSON.")
@click.option("--plot", "plot_path", type=click.Path(dir_okay=False),
              help="Draw the distributions (request size, inter-arrival time, reuse distance, write popularity).")
def info_cmd(trace, fmt_name, device, devices, writes_only, skip_bad_lines, compact, page_bytes, block_bytes, json_path,
             plot_path):
    """Print a trace's format, devices, requests, read/write mix, bytes, footprint, highest address and write
    concentration; --plot draws its distributions."""
    from .output import write_text
    from .trace import info, plot_info

    progress = LazyProgress(f"info {trace}")
    try:
        if json_path is not None:
            check_output(json_path, "--json", inputs=(trace,))
        if plot_path is not None:
            check_plot_path(plot_path, inputs=(trace,))
        stats = info(trace, format=fmt_name, block_bytes=block_bytes, page_bytes=page_bytes, device=device,
                     devices=devices, writes_only=writes_only or None, skip_bad_lines=skip_bad_lines or None, compact=compact,
                     progress=lambda done, total: progress(0, done, total))
    except _core.FtlsimError as e:
        fail(e)
    finally:
        progress.close()
    table = Table(title=trace, show_header=False, title_justify="left")
    table.add_column("figure", style="cyan")
    table.add_column("value", justify="right")
    for key, value in stats.items():
        if key == "devices":
            value = ", ".join(device_text(d) for d in value) or "-"
        elif key == "distributions":
            continue
        table.add_row(key, fmt(value))
    console.print(table)
    if plot_path:
        plot_info(stats, plot_path, title=trace)
        err_console.print(f"[dim]plot written to {plot_path}[/]")
    if json_path:
        try:
            write_text(json_path, json.dumps(stats, indent=2))
        except _core.FtlsimError as e:
            fail(e)


def device_text(d: dict) -> str:
    """A device of `ftlsim info`: its requests and, with --devices concat or a filter, its range in bytes."""
    text = f"{d['device']} ({d['requests']:,} requests"
    if d.get("range_start") is not None:
        text += f", bytes {d['range_start']:,}-{d['range_start'] + d['range_bytes']:,}"
    return text + ")"


@main.command("plot-refs")
@click.argument("trace", shell_complete=complete_trace)
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), help="The image to write (PNG).")
@click.option("--format", "fmt_name", default="auto", shell_complete=complete_names("formats"),
              help="Trace format; default: sniff.")
@click.option("--device", type=click.IntRange(min=0), default=None, help="Keep one device / ASU.")
@click.option("--skip-bad-lines", is_flag=True, help="Count lines that do not parse instead of failing.")
@click.option("--page-bytes", type=click.IntRange(min=1, max=2**31), default=512, show_default=True,
              help="Page size.")
@click.option("--block-bytes", type=click.IntRange(min=1), default=16384, show_default=True,
              help="Size of a logical block.")
def plot_refs_cmd(trace, output, fmt_name, device, skip_bad_lines, page_bytes, block_bytes):
    """Draw writes per logical block and the logical block written over time (hot write references)."""
    from .plot import refs_plot
    from .trace import write_refs

    try:
        check_plot_path(output, "--output", inputs=(trace,))
        refs = write_refs(trace, format=fmt_name, block_bytes=block_bytes, page_bytes=page_bytes, device=device,
                          skip_bad_lines=skip_bad_lines or None)
    except _core.FtlsimError as e:
        fail(e)
    refs_plot(refs, output, title=trace)
    err_console.print(f"[dim]plot written to {output}[/]")


def complete_experiment(ctx, param, incomplete: str):
    """Shell completion of experiment names (`ftlsim reproduce NAME`)."""
    from . import reproduce as rp

    return [n for n in rp.EXPERIMENTS if n.startswith(incomplete)]


@main.command()
@click.argument("name", required=False, shell_complete=complete_experiment)
@click.option("--quick", is_flag=True, help="Small workloads: the shape of each result in seconds.")
@click.option("--list", "list_only", is_flag=True, help="List the experiments and stop.")
@click.option("--report", "report_dir", type=click.Path(file_okay=False),
              help="Write a self-contained Markdown report (every table, figure and verdict) to this directory.")
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False), help="Write every run's report as CSV.")
@click.option("--plot", "plot_path", type=click.Path(dir_okay=False), help="Draw NAME's figure to this PNG.")
@click.option("--jobs", type=int, default=None, help="Parallel runs (default: all cores).")
def reproduce(name, quick, list_only, report_dir, csv_path, plot_path, jobs):
    """Re-run the papers' experiments and judge each claim: exact, same direction, contradicts or not comparable.

    With no NAME, runs every experiment and prints the verdict table; with NAME, one experiment's table, its
    claims beside the paper's figures, and the measured cause of each contradiction."""
    import time

    from rich.markup import escape

    from . import reproduce as rp

    if list_only:
        t = Table(title="Experiments (ftlsim reproduce NAME)", title_justify="left")
        for c in ("name", "paper", "what", "stand-in"):
            t.add_column(c)
        for e in rp.EXPERIMENTS.values():
            t.add_row(e.name, e.paper, e.what, e.stand_in or "-")
        console.print(t)
        return
    if name is not None and name not in rp.EXPERIMENTS:
        fail(f"unknown experiment `{name}`; valid: {', '.join(rp.EXPERIMENTS)} (or none: all of them)")
    if name is None and (csv_path or plot_path):
        fail("--csv and --plot take one experiment: pass its NAME (or use --report DIR for all of them)")
    names = [name] if name else list(rp.EXPERIMENTS)
    results = []
    started = time.perf_counter()
    with progress_bar("{task.completed}/{task.total}", console, eta=False) as bar:
        task = bar.add_task("experiments", total=len(names))
        cache = rp.RunCache()
        for n in names:
            bar.update(task, description=n)
            try:
                results.append(rp.run(n, quick=quick, jobs=jobs, cache=cache))
            except _core.FtlsimError as e:
                fail(f"{n}: {e}")
            bar.update(task, advance=1)
    if name:
        r = results[0]
        e = r.experiment
        console.print(dataframe_table(r.table, f"{e.name}: {e.paper}"))
        if e.stand_in:
            console.print(f"[bold]Stand-in:[/] {e.stand_in}")
        if e.notes:
            console.print(f"[dim]{e.notes}[/]")
        t = Table(title="Claims", title_justify="left", show_lines=True)
        for c in ("claim", "paper", "ftlsim", "rule", "verdict", "measured"):
            t.add_column(c, overflow="fold")
        for _, v in r.verdicts.iterrows():
            t.add_row(escape(v["claim"] + (f" [{v['variant']}]" if v["variant"] else "")
                             + f"\n{v['where']}, line {v['line']}"),
                      escape(v["paper"] or "-"), escape(v["ftlsim"]), escape(v["rule"]),
                      _verdict_markup(v["verdict"]) + "\n" + escape(v["why"]), escape(v["cause"] or "-"))
        console.print(t)
    else:
        t = Table(title=f"Verdicts ({'quick' if quick else 'full'} size, {time.perf_counter() - started:.0f} s)",
                  title_justify="left")
        for c in ("experiment", "claim", "variant", "verdict"):
            t.add_column(c)
        for _, v in rp.summary(results).iterrows():
            t.add_row(v["experiment"], escape(v["claim"]), escape(v["variant"] or ""), _verdict_markup(v["verdict"]))
        console.print(t)
        console.print(", ".join(f"{n} {v}" for v, n in rp.counts(results).items()))
        deciders = rp.deciders(results)
        if len(deciders):
            t = Table(title="Which choice decides each verdict (FAT alignment, cluster size, allocation)",
                      title_justify="left")
            for c in deciders.columns:
                t.add_column(c, overflow="fold")
            for row in deciders.itertuples(index=False):
                t.add_row(*(escape(str(x)) for x in row))
            console.print(t)
        for r in results:
            for _, v in r.verdicts[r.verdicts["verdict"] == "contradicts"].iterrows():
                console.print(f"[red]contradicts[/] {r.experiment.name}: " + escape(
                    v["claim"] + (f" [{v['variant']}]" if v["variant"] else "")
                    + f"\n  ftlsim: {v['ftlsim']}\n  measured: {v['cause'] or v['why']}"))
    if csv_path:
        results[0].df.to_csv(csv_path, index=False)
        console.print(f"[dim]{len(results[0].df)} runs written to {csv_path}[/]")
    if plot_path:
        if not results[0].figure(plot_path):
            fail(f"experiment `{name}` has no figure to draw; use --csv")
        console.print(f"[dim]plot written to {plot_path}[/]")
    if report_dir:
        path = rp.write_report(results, report_dir)
        console.print(f"[dim]report written to {path}[/]")


def _verdict_markup(verdict: str) -> str:
    color = {"exact": "green", "same direction": "cyan", "contradicts": "red", "not comparable": "yellow"}
    return f"[{color.get(verdict, 'white')}]{verdict}[/]"


def dataframe_table(df, title: str) -> Table:
    """A pandas DataFrame (flat or with a two-level column index, as pivot makes) as a rich table."""
    df = df.reset_index() if df.index.name or any(df.index.names) else df
    table = Table(title=title, title_justify="left")
    columns = [" ".join(str(p) for p in c if str(p)) if isinstance(c, tuple) else str(c) for c in df.columns]
    for col in columns:
        table.add_column(col, justify="right")
    for row in df.itertuples(index=False):
        table.add_row(*[fmt(v) for v in row])
    return table



@main.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print the registries as JSON (for scripts).")
def list_cmd(as_json):
    """List schemes, device presets, built-in workloads and trace formats."""
    from .ftl import schemes
    from .trace import formats, presets, workloads

    if as_json:
        out = {"schemes": schemes(), "presets": presets(), "workloads": workloads(), "formats": formats()}
        click.echo(json.dumps(out, indent=2))
        return
    t = Table(title="Schemes (--ftl)", title_justify="left")
    for c in ("name", "summary", "parameters (defaults)"):
        t.add_column(c)
    for s in schemes():
        t.add_row(s["name"], s["summary"], ", ".join(f"{k}={v}" for k, v in (s["defaults"] or {}).items()))
    console.print(t)
    t = Table(title="Presets (--preset)", title_justify="left")
    for c in ("name", "page", "pages/block", "read/program/erase us", "source"):
        t.add_column(c)
    for p in presets():
        tm = p["timing"]
        t.add_row(p["name"], f"{p['page_bytes']}+{p['spare_bytes']} B", str(p["pages_per_block"]),
                  f"{tm['read_us']}/{tm['program_us']}/{tm['erase_us']}", p["summary"])
    console.print(t)
    t = Table(title="Built-in workloads (use in place of a trace: name:key=value,...)", title_justify="left")
    for c in ("name", "summary", "parameters (default: meaning)"):
        t.add_column(c)
    for w in workloads():
        t.add_row(w["name"], w["summary"], "\n".join(f"{k}={d}: {m}" for k, d, m in w["params"]))
    console.print(t)
    t = Table(title="Trace formats (--format)", title_justify="left")
    t.add_column("name")
    t.add_column("summary")
    for f in formats():
        t.add_row(f["name"], f["summary"])
    console.print(t)


@main.command("ram")
@click.option("--ftl", required=True, shell_complete=complete_names("schemes"), help="Scheme name.")
@click.option("--preset", default=None, shell_complete=complete_names("presets"),
              help="Device preset (see `ftlsim list`); default lee2007.")
@click.option("--capacity", default=None, help="Logical capacity, e.g. 64MiB; default: the preset's, else 64MiB.")
@click.option("--param", "-p", "params", multiple=True, metavar="K=V",
              help="A scheme parameter or device override, e.g. log_blocks=8.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False), help="Write the breakdown as JSON.")
def ram_cmd(ftl, preset, capacity, params, json_path):
    """Print the RAM a scheme's tables need, structure by structure."""
    from ._registry import check_name
    from .ftl import ram_layout
    from .output import write_text

    kwargs = {k: parse_value(v) for k, v in parse_params(params).items()}
    try:
        check_name("schemes", ftl)
        if json_path is not None:
            check_output(json_path, "--json")
        items = ram_layout(ftl, preset=preset, capacity=capacity, **kwargs)
    except _core.FtlsimError as e:
        fail(e)
    t = Table(title=f"RAM of {ftl}", title_justify="left")
    t.add_column("structure")
    t.add_column("bytes", justify="right")
    t.add_column("layout")
    for i in items:
        t.add_row(i["name"], f"{i['bytes']:,}", i["layout"])
    total = sum(i["bytes"] for i in items)
    t.add_row("[bold]total[/]", f"[bold]{total:,}[/]", "")
    console.print(t)
    if json_path:
        try:
            write_text(json_path, json.dumps({"total_bytes": total, "items": items}, indent=2))
        except _core.FtlsimError as e:
            fail(e)


if __name__ == "__main__":
    main()
