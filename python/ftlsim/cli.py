"""The ``ftlsim`` command: run, compare, generate, info, list, ram."""

from __future__ import annotations

import json
import sys
import time

import click
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

from . import _core
from .ftl import ram_layout, schemes
from .report import Report
from .sim import grid, simulate
from .trace import formats, generate, info, presets, workloads

DEFAULT_TRACE = "uniform:writes=150000,seed=1"
# Piped output (files, CI logs) gets wide tables instead of rich's 80-column default.
console = Console(width=None if sys.stdout.isatty() else 160)


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
        self.bar: Progress | None = None
        self.task = None

    def __call__(self, requests: int, done: int, total: int):
        if self.bar is None:
            if time.monotonic() - self.started < 1.0 or not console.is_terminal:
                return True
            self.bar = Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                TextColumn("{task.percentage:>5.1f}%  {task.fields[requests]:,} requests"),
                TimeElapsedColumn(),
                TimeRemainingColumn(),
                console=console,
                transient=True,
            )
            self.bar.start()
            self.task = self.bar.add_task(self.label, total=max(total, 1), requests=0)
        self.bar.update(self.task, completed=done, total=max(total, 1), requests=requests)
        return True

    def close(self):
        if self.bar is not None:
            self.bar.stop()


def fail(error: Exception):
    console.print(f"[bold red]error:[/] {error}")
    sys.exit(2)


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
    title = (
        f"{report['config.scheme']}{params} on {report['config.trace']}\n"
        f"{report['config.preset']}, {report['config.capacity_bytes'] / 2**20:,.1f} MiB, "
        f"{report['config.page_bytes']} B pages x {report['config.pages_per_block']}"
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


def common_options(f):
    f = click.option("--param", "-p", "params", multiple=True, metavar="K=V",
                     help="A scheme parameter, device override or trace option, e.g. log_blocks=8.")(f)
    f = click.option("--preset", default=None, help="Device preset (see `ftlsim list`); default lee2007.")(f)
    f = click.option("--capacity", default=None, help="Logical capacity, e.g. 64MiB; default: the trace's extent.")(f)
    f = click.option("--precondition", type=click.Choice(["none", "full", "trace"]), default="none",
                     help="full: write every logical page once first, then reset the counters; trace: write "
                          "every request of the trace once first (PSU FlashSim's warm-up).")(f)
    f = click.option("--format", "fmt_name", default="auto", help="Trace format (see `ftlsim list`); default: sniff.")(f)
    f = click.option("--device", type=int, default=None, help="Keep one device / ASU of a multi-device trace.")(f)
    f = click.option("--writes-only", is_flag=True, help="Drop reads and trims.")(f)
    f = click.option("--skip-bad-lines", is_flag=True, help="Count lines that do not parse instead of failing.")(f)
    f = click.option("--wrap", is_flag=True, help="Fold requests beyond the capacity into it.")(f)
    f = click.option("--nvram", default=None, metavar="SIZE",
                     help="An NVRAM write cache of SIZE (e.g. 128KiB) in front of the scheme.")(f)
    f = click.option("--nvram-policy", default=None, type=click.Choice(["metadata", "region", "lru", "bplru"]),
                     help="What the NVRAM absorbs (default metadata: writes tagged metadata); region needs "
                          "-p nvram_regions=0-64KiB.")(f)
    return f


def nvram_kwargs(nvram, nvram_policy) -> dict:
    out = {}
    if nvram is not None:
        out["nvram"] = nvram
    if nvram_policy is not None:
        out["nvram_policy"] = nvram_policy
    return out


def trace_kwargs(device, writes_only, skip_bad_lines, wrap) -> dict:
    out = {}
    if device is not None:
        out["device"] = device
    if writes_only:
        out["writes_only"] = True
    if skip_bad_lines:
        out["skip_bad_lines"] = True
    if wrap:
        out["wrap"] = True
    return out


@click.group()
@click.version_option(package_name="ftlsim")
def main():
    """ftlsim: trace-driven simulation of NAND flash and Flash Translation Layers."""


@main.command()
@click.argument("trace", required=False)
@click.option("--ftl", default="page", show_default=True, help="Scheme name (see `ftlsim list`).")
@common_options
@click.option("--power-cuts", type=click.IntRange(min=0), default=0,
              help="Crash test: cut the power at N random flash operations, mount from flash after each and "
                   "check every logical page (schemes that can mount: ftlsim list).")
@click.option("--power-cut-seed", type=int, default=1, show_default=True, help="Seed of the cut points.")
@click.option("--mount-at-end", is_flag=True, help="Mount the scheme from flash after the trace: its boot cost.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False), help="Write the report as JSON.")
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False), help="Write the report as one CSV row.")
def run(trace, ftl, params, preset, capacity, precondition, fmt_name, device, writes_only, skip_bad_lines, wrap,
        nvram, nvram_policy, power_cuts, power_cut_seed, mount_at_end, json_path, csv_path):
    """Run TRACE (a trace file or a built-in workload) through one scheme and print the figures.

    With no TRACE, runs the built-in default uniform:writes=150000,seed=1 (the FAST paper's pattern E)."""
    if trace is None:
        trace = DEFAULT_TRACE
        console.print(f"[dim]no trace given: running the built-in workload {trace}[/]")
    kwargs = {k: parse_value(v) for k, v in parse_params(params).items()}
    kwargs.update(trace_kwargs(device, writes_only, skip_bad_lines, wrap))
    kwargs.update(nvram_kwargs(nvram, nvram_policy))
    if power_cuts:
        kwargs.update(power_cuts=power_cuts, power_cut_seed=power_cut_seed)
    if mount_at_end:
        kwargs["mount_at_end"] = True
    bar = LazyProgress(f"{ftl}")
    try:
        report = simulate(trace, ftl=ftl, preset=preset, capacity=capacity, precondition=precondition,
                          format=fmt_name, progress=bar, **kwargs)
    except _core.FtlsimError as e:
        fail(e)
    finally:
        bar.close()
    console.print(report_table(report))
    if json_path:
        report.to_json(json_path)
        console.print(f"[dim]report written to {json_path}[/]")
    if csv_path:
        report.to_csv(csv_path)
        console.print(f"[dim]report written to {csv_path}[/]")


COMPARE_COLUMNS = ["flash.erases", "time_us.total", "merges.switch", "merges.partial", "merges.full", "merges.dead",
                   "merges.fold", "flash.page_writes", "flash.spare_reads", "write_amplification", "ram.total_bytes"]


@main.command()
@click.argument("trace", required=False)
@click.option("--ftl", "ftls", default="bast,fast,ofast", show_default=True, help="Comma-separated schemes.")
@common_options
@click.option("--plot", "plot_path", type=click.Path(dir_okay=False),
              help="Draw erase count and elapsed time against the swept parameter (PNG).")
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False), help="Write one row per run as CSV.")
@click.option("--jobs", type=int, default=None, help="Parallel runs (default: all cores).")
def compare(trace, ftls, params, preset, capacity, precondition, fmt_name, device, writes_only, skip_bad_lines, wrap,
            nvram, nvram_policy, plot_path, csv_path, jobs):
    """Run a grid of schemes x parameter values on TRACE and print one table.

    A parameter given with several comma-separated values (--param log_blocks=4,8,16) is swept."""
    from .sim import sweep

    trace = trace or DEFAULT_TRACE
    grid_params = {k: [parse_value(x) for x in v.split(",")] for k, v in parse_params(params).items()}
    common = dict(preset=preset, capacity=capacity, precondition=precondition, format=fmt_name,
                  **trace_kwargs(device, writes_only, skip_bad_lines, wrap), **nvram_kwargs(nvram, nvram_policy))
    runs = grid(trace, ftls, grid_params)
    with Progress(TextColumn("[bold]runs"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                  TimeElapsedColumn(), console=console, transient=True) as bar:
        task = bar.add_task("runs", total=len(runs))
        try:
            df = sweep(trace, ftls, grid_params, jobs=jobs, on_done=lambda d, t: bar.update(task, completed=d),
                       **common)
        except _core.FtlsimError as e:
            fail(e)
    swept = list(grid_params)
    figures = [c for c in COMPARE_COLUMNS if c in df and (df[c].fillna(0) != 0).any()]
    columns = ["ftl", *swept, *figures]
    table = Table(title=f"{trace}", title_justify="left")
    for col in columns:
        table.add_column(col, justify="left" if col == "ftl" else "right")
    for _, row in df.iterrows():
        table.add_row(*[fmt(row[c]) if not isinstance(row[c], float) or row[c] == row[c] else "-" for c in columns])
    console.print(table)
    if csv_path:
        df.to_csv(csv_path, index=False)
        console.print(f"[dim]{len(df)} rows written to {csv_path}[/]")
    if plot_path:
        from .plot import compare_plot

        compare_plot(df, swept[0] if swept else None, plot_path, title=trace)
        console.print(f"[dim]plot written to {plot_path}[/]")


@main.command("generate")
@click.argument("workload")
@click.option("--output", "-o", required=True, type=click.Path(dir_okay=False),
              help="Trace file to write (native CSV with tags; gzip when it ends in .gz).")
@click.option("--preset", default=None, help="Device preset; its page size and capacity size the workload.")
@click.option("--capacity", default=None, help="Logical capacity the workload spreads over, e.g. 32MiB.")
@click.option("--param", "-p", "params", multiple=True, metavar="K=V", help="A device override or trace option.")
def generate_cmd(workload, output, preset, capacity, params):
    """Write WORKLOAD (a built-in workload, or any trace) as a native CSV trace file with data/metadata tags."""
    kwargs = {k: parse_value(v) for k, v in parse_params(params).items()}
    try:
        n = generate(workload, output, preset=preset, capacity=capacity, **kwargs)
    except (_core.FtlsimError, ValueError) as e:
        fail(e)
    console.print(f"{n} requests written to {output}")


@main.command("info")
@click.argument("trace")
@click.option("--format", "fmt_name", default="auto", help="Trace format; default: sniff.")
@click.option("--device", type=int, default=None, help="Keep one device / ASU.")
@click.option("--writes-only", is_flag=True)
@click.option("--skip-bad-lines", is_flag=True)
@click.option("--page-bytes", type=int, default=512, show_default=True)
@click.option("--block-bytes", type=int, default=16384, show_default=True, help="Block size for block concentration.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False))
def info_cmd(trace, fmt_name, device, writes_only, skip_bad_lines, page_bytes, block_bytes, json_path):
    """Print a trace's requests, read/write mix, bytes, footprint, highest address and write concentration."""
    try:
        stats = info(trace, format=fmt_name, block_bytes=block_bytes, page_bytes=page_bytes, device=device,
                     writes_only=writes_only or None, skip_bad_lines=skip_bad_lines or None)
    except _core.FtlsimError as e:
        fail(e)
    table = Table(title=trace, show_header=False, title_justify="left")
    table.add_column("figure", style="cyan")
    table.add_column("value", justify="right")
    for key, value in stats.items():
        table.add_row(key, fmt(value))
    console.print(table)
    if json_path:
        with open(json_path, "w") as f:
            json.dump(stats, f, indent=2)


@main.command("plot-refs")
@click.argument("trace")
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), help="The PNG to write.")
@click.option("--format", "fmt_name", default="auto", help="Trace format; default: sniff.")
@click.option("--device", type=int, default=None, help="Keep one device / ASU.")
@click.option("--skip-bad-lines", is_flag=True)
@click.option("--page-bytes", type=int, default=512, show_default=True)
@click.option("--block-bytes", type=int, default=16384, show_default=True, help="Size of a logical block.")
def plot_refs_cmd(trace, output, fmt_name, device, skip_bad_lines, page_bytes, block_bytes):
    """Draw writes per logical block and the logical block written over time (hot write references)."""
    from .plot import refs_plot
    from .trace import write_refs

    try:
        refs = write_refs(trace, format=fmt_name, block_bytes=block_bytes, page_bytes=page_bytes, device=device,
                          skip_bad_lines=skip_bad_lines or None)
    except _core.FtlsimError as e:
        fail(e)
    refs_plot(refs, output, title=trace)
    console.print(f"[dim]plot written to {output}[/]")


@main.command()
@click.argument("name", required=False)
@click.option("--quick", is_flag=True, help="Small workloads: the shape of the result in seconds.")
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False), help="Write every run's report as CSV.")
@click.option("--plot", "plot_path", type=click.Path(dir_okay=False), help="Draw the figure (where it has one).")
@click.option("--jobs", type=int, default=None, help="Parallel runs (default: all cores).")
def reproduce(name, quick, csv_path, plot_path, jobs):
    """Re-run one of the papers' experiments and print its table next to the paper's claim.

    With no NAME, lists the experiments; `ram-tables` prints the papers' RAM tables."""
    from .reproduce import EXPERIMENTS, ram_tables
    from .sim import run_many

    if name is None:
        t = Table(title="Experiments (ftlsim reproduce NAME)", title_justify="left")
        for c in ("name", "paper", "claim"):
            t.add_column(c)
        for e in EXPERIMENTS.values():
            t.add_row(e.name, e.paper, e.claim)
        t.add_row("ram-tables", "TinyFTL Tables I and IV; NFTL section 3.2", "RAM bytes, exactly")
        console.print(t)
        return
    if name == "ram-tables":
        console.print(dataframe_table(ram_tables(), "RAM of the papers' devices"))
        return
    if name not in EXPERIMENTS:
        fail(f"unknown experiment `{name}`; valid: {', '.join([*EXPERIMENTS, 'ram-tables'])}")
    experiment = EXPERIMENTS[name]
    runs = experiment.runs(quick)
    with Progress(TextColumn(f"[bold]{name}"), BarColumn(), TextColumn("{task.completed}/{task.total} runs"),
                  TimeElapsedColumn(), console=console, transient=True) as bar:
        task = bar.add_task(name, total=len(runs))
        try:
            df = run_many(runs, jobs=jobs, on_done=lambda d, t: bar.update(task, completed=d))
        except _core.FtlsimError as e:
            fail(e)
    console.print(dataframe_table(experiment.summary(df), f"{name}: {experiment.paper}"))
    console.print(f"[bold]The paper's claim:[/] {experiment.claim}")
    if csv_path:
        df.to_csv(csv_path, index=False)
        console.print(f"[dim]{len(df)} runs written to {csv_path}[/]")
    if plot_path:
        if experiment.plot_x is None:
            fail(f"experiment `{name}` has no figure to draw; use --csv")
        from .plot import compare_plot

        compare_plot(df, experiment.plot_x, plot_path, title=experiment.paper)
        console.print(f"[dim]plot written to {plot_path}[/]")


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
def list_cmd():
    """List schemes, device presets, built-in workloads and trace formats."""
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
@click.option("--ftl", required=True, help="Scheme name.")
@click.option("--preset", default=None)
@click.option("--capacity", default=None)
@click.option("--param", "-p", "params", multiple=True, metavar="K=V")
@click.option("--json", "json_path", type=click.Path(dir_okay=False))
def ram_cmd(ftl, preset, capacity, params, json_path):
    """Print the RAM a scheme's tables need, structure by structure."""
    kwargs = {k: parse_value(v) for k, v in parse_params(params).items()}
    try:
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
        with open(json_path, "w") as f:
            json.dump({"total_bytes": total, "items": items}, f, indent=2)


if __name__ == "__main__":
    main()
