"""The ``ftlsim`` command: run, compare, sweep, generate, info, list, ram, reproduce.

Errors go to stderr; bad input exits 2, a run that started and failed (a broken NAND rule or integrity check,
no free blocks) exits 1, Ctrl-C exits 130."""

from __future__ import annotations

import os
import shlex
import signal
import stat
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

import contextlib
import json
import time
import warnings
from typing import TYPE_CHECKING, NamedTuple, NoReturn

import click
from click.core import ParameterSource
from rich.table import Table

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

from . import _core
from ._registry import LIST_VALUED, NO_RESPONSE_TIMES, NVRAM_POLICIES, names, scheme_defaults
from .errors import Spelling, spelled
from .output import ReaderGoneConsole, check_output, fmt
from .report import Report, uninformative
from .sim import PRECONDITIONS, parse_value, run_warnings, simulate
from .text import count_of
from .trace import STDOUT_FORMATS, TagsLost

if _starting:
    signal.signal(signal.SIGINT, _previous_handler)

DEFAULT_TRACE = "uniform:writes=150000,seed=1"
# Piped output (files, CI logs) gets wide tables instead of rich's 80-column default.
console = ReaderGoneConsole(width=None if sys.stdout.isatty() or "COLUMNS" in os.environ else 160)
err_console = ReaderGoneConsole(stderr=True, width=None if sys.stderr.isatty() or "COLUMNS" in os.environ else 160)

# The engine's suggestions are written as config keys (capacity="269MiB", wrap=true); on the command line
# they are these options, and any other key is `-p key=value`.
FLAGS = {"wrap": "--wrap", "writes_only": "--writes-only", "skip_bad_lines": "--skip-bad-lines",
         "compact": "--compact", "mount_at_end": "--mount-at-end", "torn_pages": "--torn-pages"}
VALUED = {"capacity": "--capacity", "preset": "--preset", "precondition": "--precondition", "format": "--format",
          "device": "--device", "devices": "--devices", "nvram": "--nvram", "nvram_policy": "--nvram-policy",
          "ftl": "--ftl",
          "power_cuts": "--power-cuts", "power_cut_seed": "--power-cut-seed"}


# A device is given to the engine as written: it reads a number or a blkparse major,minor (trace/mod.rs).
DEVICE_HELP = "(a number, or a blkparse major,minor such as 8,16)"


def option_spelling(key: str, value: str) -> str:
    """``key=value`` as the command line gives it: ``--wrap``, ``--capacity 64MiB``, ``-p log_blocks=8``; a value
    a shell would split quoted as the shell takes it (``-p 'page_bytes=2 lightyears'``)."""
    if key in FLAGS and value in ("true", "false"):
        return FLAGS[key] if value == "true" else f"without {FLAGS[key]}"
    if key in VALUED:
        return f"{VALUED[key]} {shlex.quote(value)}"
    return f"-p {shlex.quote(f'{key}={value}')}"


class FileSpelling(NamedTuple):
    """How an error names the settings of a run a config file gave some of (`given`: key -> the value as the
    file holds it): a value the file gave as the file writes it, naming the file (`as_given`: ``wrap = "false"
    (config file w.toml)``, where the option's spelling read "without --wrap must be true or false"); a
    suggestion for such a key as the file would take it (`spell`: ``log_blocks = 8``, ``capacity = "2MiB"``);
    any other setting as its option."""

    path: str
    given: dict

    def spell(self, key: str, value: str) -> str:
        from .reference import toml_value

        return f"{key} = {toml_value(parse_value(value))}" if key in self.given else option_spelling(key, value)

    def as_given(self, key: str, value) -> str:
        return f"{key} = {json.dumps(value)} (config file {self.path})"


def error_text(error, spell: Spelling | FileSpelling | None = None) -> str:
    """An error's message in the command line's spelling (or `spell`'s), from the engine's fields where it gave
    them (every parameter error); any other message is the engine's own."""
    if isinstance(error, _core.FtlsimError):
        if isinstance(spell, FileSpelling):
            text = spelled(error, spell.spell, spell.given, spell.as_given)
        else:
            text = spelled(error, spell or option_spelling)
        if text is not None:
            return text
    return str(error)


def say(label: str, text: str) -> None:
    """A warning or an error on stderr (`label` in markup, `text` as it is): wrapped between words in a
    terminal, where one long line would break inside them; one line when piped, a line a message for a log."""
    from rich.markup import escape

    err_console.print(f"{label} {escape(text)}", highlight=False, soft_wrap=not err_console.is_terminal)


def say_written(what: str, path) -> None:
    """`what` written to `path`, on stderr (stdout holds the data or the table); standard output by its name,
    not `-`."""
    from rich.markup import escape

    from .output import is_stdout

    where = "standard output" if is_stdout(path) else str(path)
    err_console.print(f"[dim]{escape(what)} written to {escape(where)}[/]", highlight=False)


def fail(error, code: int | None = None, spell: Spelling | FileSpelling | None = None) -> NoReturn:
    """Prints the error on stderr in the command line's spelling (or `spell`'s) and exits: 1 for a run that
    failed, 2 for bad input."""
    if code is None:
        code = 1 if isinstance(error, _core.RunFailedError) else 2
    say("[bold red]error:[/]", error_text(error, spell))
    sys.exit(code)


class Ftlsim(click.Group):
    """The command group: Ctrl-C anywhere (parsing, start-up, a run) is one line on stderr and exit code 130,
    where click's own handling would print "Aborted!" and exit 1; an option click refuses is one ``error:`` line
    and exit code 2."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        try:
            code = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except (KeyboardInterrupt, click.exceptions.Abort):
            err_console.print("interrupted", highlight=False)
            sys.exit(130)
        except click.UsageError as e:
            # One line, as every other error: click's own is the usage, a hint and a capitalised "Error:".
            command = e.ctx.command_path if e.ctx is not None else self.named_in(args)
            say("[bold red]error:[/]", f"{e.format_message().rstrip('.')} (see {command} --help)")
            sys.exit(e.exit_code)
        except click.ClickException as e:
            e.show()
            sys.exit(e.exit_code)
        sys.exit(code if isinstance(code, int) else 0)

    def named_in(self, args) -> str:
        """The command the arguments name, for an error click gives without its context (an option's missing
        value): ``ftlsim info``, or ``ftlsim`` before any command."""
        words = sys.argv[1:] if args is None else args
        name = next((word for word in words if word in self.commands), None)
        return "ftlsim" if name is None else f"ftlsim {name}"


def parse_params(pairs: tuple[str, ...]) -> dict:
    """The ``--param key=value`` options of one run; a key given twice with two values is refused (the run
    takes one value: which one would be a guess), the same value twice is one."""
    out: dict[str, str] = {}
    for pair in pairs:
        if "=" not in pair:
            raise click.BadParameter(f"`{pair}` is not key=value (e.g. --param log_blocks=8)", param_hint="--param")
        key, value = (part.strip() for part in pair.split("=", 1))
        if key in out and out[key] != value:
            both = f"{out[key]} -p {key}={value}" if key in LIST_VALUED else f"{out[key]},{value}"
            raise click.BadParameter(
                f"`{key}` is given twice ({key}={out[key]} and {key}={value}): give it once; to run both, "
                f"`ftlsim compare ... -p {key}={both}`", param_hint="--param")
        out[key] = value
    return out


def parse_grid(pairs: tuple[str, ...]) -> dict:
    """The swept values of repeated ``--param key=a,b`` options: each key's values in the order given, a key
    repeated adding its values (``-p log_blocks=4 -p log_blocks=8`` sweeps both, as ``-p log_blocks=4,8``). The
    value of a key that takes a list (`LIST_VALUED`: ``-p nvram_regions=0-64KiB,1MiB-2MiB``) is one value, as
    `run` takes it: repeating the option sweeps several."""
    grid: dict[str, list] = {}
    for pair in pairs:
        key, values = next(iter(parse_params((pair,)).items()))
        for value in (parse_value(x) for x in ([values] if key in LIST_VALUED else values.split(","))):
            values_of = grid.setdefault(key, [])
            if not any(type(v) is type(value) and v == value for v in values_of):  # 1 and true are two
                values_of.append(value)
    return grid


class LazyProgress:
    """A progress bar that appears only once a run has taken more than a second."""

    def __init__(self, label: str):
        self.label = bar_label(label)
        self.started = time.monotonic()
        self.bar: Progress | None = None  # once the run has taken a second
        self.task: TaskID | None = None

    def __call__(self, requests: int, done: int, total: int):
        if self.bar is None:
            if time.monotonic() - self.started < 1.0 or not err_console.is_terminal:
                return True
            bar = progress_bar("{task.percentage:>5.1f}%  {task.fields[requests]:,} requests", err_console)
            bar.start()
            self.bar, self.task = bar, bar.add_task(self.label, total=max(total, 1), requests=0)
        assert self.task is not None
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
    from rich.table import Column

    # In a narrow terminal the label gives way (the table that follows names the trace whole), never the
    # counter or the times.
    label = Column(no_wrap=True, overflow="ellipsis", max_width=max(on.width // 3, 12))
    columns = [TextColumn("[bold]{task.description}", table_column=label), BarColumn(),
               TextColumn(counter, table_column=Column(no_wrap=True)), TimeElapsedColumn()]
    # Not on a terminal (a log, a pipe) there is no bar: a disabled one leaves no blank line behind.
    return Progress(*columns, *([TimeRemainingColumn()] if eta else []), console=on, transient=True,
                    disable=not on.is_terminal)


def bar_label(label: str) -> str:
    """A progress bar's label: `label` with each file path in it shortened to the file's name. The bar's label
    gives way first in a narrow terminal, where "mount cost after /data/tr…" named no trace; the table that
    follows names it whole."""
    return " ".join(os.path.basename(word) if os.sep in word else word for word in label.split(" "))


def table_sections() -> list[tuple[str, list[str]]]:
    """The keys `ftlsim run` shows, by section in report order: the engine's report schema decides."""
    from .report import schema_rows

    sections: dict[str, list[str]] = {}
    for k in schema_rows():
        if k["table"] and "<" not in k["key"]:
            sections.setdefault(k["section"], []).append(k["key"])
    return list(sections.items())


def print_report(report: Report, metrics: list[str] | None, stderr: bool = False) -> None:
    """`ftlsim run`'s output: the header (scheme and parameters, device, trace), the table (on stderr with
    `stderr`: the report itself goes to stdout), and on stderr a warning when the run says nothing about the
    scheme."""
    from .output import print_table, report_table, run_header, table_width

    width = table_width(stderr)
    (err_console if stderr else console).print(run_header(report, width), highlight=False, markup=False,
                                                soft_wrap=True)
    try:
        table, lists = report_table(report, table_sections(), metrics)
    except _core.FtlsimError as e:  # a glob that names a figure this run does not have
        fail(e)
    print_table(table, width, stderr=stderr)
    if lists:
        err_console.print(f"[dim]lists, left out of the table (--json or --csv hold them): {', '.join(lists)}[/]")
    for warning in run_warnings(report, option_spelling):
        say("[yellow]warning:[/]", warning)


def complete_names(kind: str, comma: bool = False):
    """Shell completion of registered names (schemes, presets, formats); after a comma for lists."""

    def complete(ctx, param, incomplete: str):
        head, _, last = incomplete.rpartition(",") if comma else ("", "", incomplete)
        prefix = f"{head}," if head else ""
        extra = ["auto"] if kind == "formats" else []
        return [prefix + n for n in names(kind) + extra if n.startswith(last)]

    return complete


def registered(kind: str, comma: bool = False):
    """A click callback: the option's name(s) in their registered spelling (``FAST`` -> ``fast``, ``MSR`` ->
    ``msr``); an unknown one is bad input, with the nearest name."""
    from ._registry import check_name

    def callback(ctx, param, value):
        if value is None:
            return None
        try:
            if comma:  # a comma-separated list, or several (a repeated option): one list, each name once
                given = [value] if isinstance(value, str) else list(value)
                listed = [check_name(kind, v.strip()) for text in given for v in text.split(",") if v.strip()]
                if given and not listed:  # --ftl '' ran every scheme (mount-cost) or ended in a traceback
                    raise click.BadParameter(f"{shlex.quote(','.join(given))} names no {kind[:-1]}: give one or "
                                             f"more, e.g. {param.opts[0]} {','.join(names(kind)[:2])}")
                return ",".join(dict.fromkeys(listed)) or None
            return check_name(kind, value)
        except _core.FtlsimError as e:
            fail(e)

    return callback


def complete_trace(ctx, param, incomplete: str):
    """A trace is a file (the shell completes paths) or a built-in workload ``name:``."""
    from click.shell_completion import CompletionItem

    workloads = [CompletionItem(f"{n}:") for n in names("workloads") if n.startswith(incomplete)]
    return workloads + [CompletionItem(incomplete, type="file")]


def trace_options(devices_help: str = "fold (default): one address space for every device of a multi-device "
                  "trace; concat: a range per device, in device order, each its highest address rounded up to a "
                  "block; or devices to keep, e.g. 0,3: concatenated in that order.",
                  compact_help: str = "Map the 1 MiB extents the trace touches densely onto the device (sparse, "
                  "huge traces)."):
    """How a trace is read: its format, the devices kept and the requests dropped, for every command that reads
    one. A flag left off is None, so that a command can tell it from one given (``-p writes_only=true`` too)."""

    def decorate(f):  # click lists options in the reverse of the order they are added
        f = click.option("--compact", is_flag=True, default=None, help=compact_help)(f)
        f = click.option("--skip-bad-lines", is_flag=True, default=None,
                         help="Count lines that do not parse instead of failing.")(f)
        f = click.option("--writes-only", is_flag=True, default=None, help="Drop reads and trims.")(f)
        f = click.option("--devices", default=None, metavar="fold|concat|N,M", help=devices_help)(f)
        f = click.option("--device", metavar="N|MAJOR,MINOR", default=None,
                         help=f"Keep one device / ASU of a multi-device trace {DEVICE_HELP}.")(f)
        return click.option("--format", "fmt_name", default="auto", shell_complete=complete_names("formats"),
                            callback=registered("formats"), help="Trace format (see `ftlsim list`); default: sniff.")(f)

    return decorate


PARAM_HELP = ("A scheme parameter (log_blocks=8, profile=psu-flashsim), device override (page_bytes=2048), trace "
              "option, or run option: extra_blocks=N or over_provisioning=F (the chip's spare blocks), rmw=false "
              "(no read before a partial-page write), measure_from=10000 or 30s (count from that request or "
              "time).")
# What --param says besides in the commands that run a grid.
GRID_PARAM_HELP = (" Comma-separated values are swept (log_blocks=4,8,16), as is a key given again; the value of a "
                   f"key that holds commas itself ({', '.join(LIST_VALUED)}) is one value: sweep several by "
                   "repeating the option (-p nvram_regions=A -p nvram_regions=B,C).")


def common_options(param_help: str = PARAM_HELP):
    """The options of every command that runs a trace; `--param` says `param_help`."""

    def decorate(f):
        f = click.option("--param", "-p", "params", multiple=True, metavar="K=V", help=param_help)(f)
        f = click.option("--preset", default=None, shell_complete=complete_names("presets"),
                         callback=registered("presets"), help="Device preset (see `ftlsim list`); default lee2007.")(f)
        f = click.option("--capacity", default=None,
                         help="Logical capacity, e.g. 64MiB; default: the trace's extent.")(f)
        f = click.option("--precondition", type=click.Choice(PRECONDITIONS, case_sensitive=False), default="none",
                         help="full: write every logical page once first, then reset the counters; trace: write "
                              "every request of the trace once first (PSU FlashSim's warm-up).")(f)
        f = trace_options()(f)
        f = click.option("--wrap", is_flag=True, help="Fold requests beyond the capacity into it.")(f)
        f = click.option("--nvram", default=None, metavar="SIZE",
                         help="An NVRAM write cache of SIZE (e.g. 128KiB) in front of the scheme.")(f)
        f = click.option("--nvram-policy", default=None, type=click.Choice(NVRAM_POLICIES, case_sensitive=False),
                         help="What the NVRAM absorbs (default metadata: writes tagged metadata); region needs "
                              "-p nvram_regions=0-64KiB.")(f)
        return f

    return decorate


def metrics_option(f):
    return click.option("--metrics", "metrics", multiple=True, metavar="GLOBS",
                        help="Figures to show, comma-separated keys or globs, e.g. 'merges.*,flash.erases' "
                             "(every key: ftlsim.report_schema()); repeat to add more.")(f)


def metrics_of(given: tuple[str, ...]) -> list[str] | None:
    """The globs of every --metrics given (each comma-separated), None when none was."""
    from .output import parse_metrics

    try:
        return parse_metrics(",".join(given)) if given else None
    except _core.FtlsimError as e:
        fail(e)


def option_kwargs(ctx, file_kwargs: dict | None = None) -> dict:
    """The run's keywords: a config file's, overridden by the options given on the command line (an option
    left at its default does not override the file). A setting given both by its option and by ``-p`` is
    refused (``--nvram 32KiB -p nvram=64KiB`` ran 64 KiB without a word)."""
    p = ctx.params
    given = {name for name in p if ctx.get_parameter_source(name) not in (ParameterSource.DEFAULT, None)}
    out = dict(file_kwargs or {})
    simple = {"preset": "preset", "capacity": "capacity", "precondition": "precondition", "fmt_name": "format",
              "device": "device", "devices": "devices", "nvram": "nvram", "nvram_policy": "nvram_policy"}
    flags = ("writes_only", "skip_bad_lines", "wrap", "compact")
    by_p = {pair.split("=", 1)[0].strip() for pair in p.get("params") or () if "=" in pair}
    for name, key in [*simple.items(), *zip(flags, flags)]:
        if name in given and key in by_p:
            raise click.BadParameter(f"`{key}` is given twice, as {VALUED.get(key, FLAGS.get(key))} and as -p "
                                     f"{key}=...: give it once", param_hint="--param")
    for name, key in simple.items():
        if name in p and (name in given or (key not in out and p[name] is not None)):
            out[key] = p[name]
    for flag in flags:
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
@click.option("--ftl", default=None, shell_complete=complete_names("schemes"), callback=registered("schemes"),
              help="Scheme name (see `ftlsim list`); default page.")
@common_options()
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
@metrics_option
@click.pass_context
def run(ctx, trace, config_path, ftl, params, preset, capacity, precondition, fmt_name, device, devices, writes_only,
        skip_bad_lines, wrap, compact, nvram, nvram_policy, power_cuts, power_cut_seed, mount_at_end, torn_pages,
        json_path, csv_path, metrics):
    """Run TRACE (a trace file, - for standard input, or a built-in workload) through one scheme and print the
    figures.

    With no TRACE, runs the built-in default uniform:writes=150000,seed=1 (the FAST paper's pattern E)."""
    from .config import run_kwargs

    metrics = metrics_of(metrics)
    file_kwargs, outputs = {}, {}
    if config_path:
        table = load_config(config_path)
        outputs = {k: table[k] for k in ("json", "csv") if k in table and "config.resolved" not in table}
        try:
            file_kwargs = run_kwargs(table, config_path, trace=trace, ftl=ftl)
        except _core.FtlsimError as e:
            fail(e)
    kwargs = option_kwargs(ctx, file_kwargs)
    if ftl is not None and file_kwargs.get("ftl", ftl) != ftl:
        # Another scheme than the file's: the file's scheme parameters that are not the new one's are left out (a
        # saved report lists every one of its scheme's, defaults too; page's over_provisioning would size fast's
        # spare as a run option), and said.
        from rich.markup import escape

        dropped = [k for k in scheme_defaults(file_kwargs["ftl"]) if k in kwargs and k not in scheme_defaults(ftl)]
        for key in dropped:
            del kwargs[key]
        if dropped:
            err_console.print(f"[dim]--ftl {escape(ftl)}: left out {escape(file_kwargs['ftl'])}'s parameters from "
                              f"{escape(config_path)}: {escape(', '.join(dropped))}[/]", highlight=False)
    kwargs.update({k: parse_value(v) for k, v in parse_params(params).items()})
    # An empty TRACE ("") is an error (simulate says so), not the default workload.
    file_trace = kwargs.pop("trace", None)
    trace = file_trace if trace is None else trace
    if ftl is not None:
        kwargs["ftl"] = ftl
    json_path = json_path if json_path is not None else outputs.get("json")
    csv_path = csv_path if csv_path is not None else outputs.get("csv")
    try:
        check_one_stream(("--json", json_path), ("--csv", csv_path))
        for path, what in ((json_path, "--json"), (csv_path, "--csv")):
            if path is not None:
                check_output(path, what, inputs=(trace,))
    except _core.FtlsimError as e:
        fail(e)
    if trace is None:
        trace = DEFAULT_TRACE
        err_console.print(f"[dim]no trace given: running the built-in workload {trace}[/]")
        if _stdin_holds_data():
            say("[yellow]warning:[/]", "standard input holds data (piped or redirected in), which is not read: "
                "give - as TRACE to run the trace on it (ftlsim run -)")
    if power_cuts:
        kwargs.update(power_cuts=power_cuts, power_cut_seed=power_cut_seed)
    if mount_at_end:
        kwargs["mount_at_end"] = True
    if torn_pages:
        kwargs["torn_pages"] = True
    bar = LazyProgress(kwargs.get("ftl", "page"))
    try:
        with warnings.catch_warnings():  # said after the table, in the command line's spelling
            warnings.simplefilter("ignore", RuntimeWarning)
            report = simulate(trace, progress=bar, **kwargs)
    except _core.FtlsimError as e:
        bar.close()
        # A setting the file gave, and the command line did not override, spelled as the file writes it.
        from_file = {k: v for k, v in file_kwargs.items() if k in kwargs and kwargs[k] is v}
        fail(e, spell=FileSpelling(config_path, from_file) if from_file else None)
    finally:
        bar.close()
    from .output import is_stdout

    print_report(report, metrics, stderr=is_stdout(json_path) or is_stdout(csv_path))
    try:
        if json_path:
            report.to_json(json_path)
            say_written("report", json_path)
        if csv_path:
            report.to_csv(csv_path)
            say_written("report", csv_path)
    except _core.FtlsimError as e:
        fail(e)


def check_one_stream(*outputs: tuple[str, str | None]) -> None:
    """Standard output takes one output: two given as ``-`` (or ``/dev/stdout``) would run together there, and
    neither could be read back. `outputs` are (option, path) pairs."""
    from .output import is_stdout

    on_stdout = [what for what, path in outputs if is_stdout(path)]
    if len(on_stdout) > 1:
        last = on_stdout[-1]
        example = f"{last} out.{'png' if last.startswith('--plot') else last.lstrip('-')}"
        both = "both" if len(on_stdout) == 2 else "all"
        raise _core.FtlsimError(f"{' and '.join(on_stdout)} {both} write to standard output, where they would run "
                                f"together; give all but one of them a file (e.g. {example})")


def check_plot_path(path: str, what: str = "--plot", inputs=()) -> None:
    """A plot path must be writable and name a format matplotlib draws (png, pdf, svg, ...); a stream without an
    extension (``-``, ``/dev/stdout``) gets PNG."""
    from .output import image_format

    check_output(path, what, inputs=inputs)
    ext = image_format(path)
    from matplotlib.backend_bases import FigureCanvasBase

    valid = FigureCanvasBase.get_supported_filetypes()
    if ext not in valid:
        raise _core.FtlsimError(f"{what} {path}: unknown image format `.{ext}`; valid: {', '.join(sorted(valid))}")


def run_grid(label: str, traces, schemes, grid: dict, common: dict, settings: dict, inputs=(),
             columns: list[str] | None = None, metrics: list[str] | None = None, stored_points=None,
             say_points: bool = False):
    """Runs a sweep with a progress bar, prints its table (the `columns` figures, or those the `metrics` globs
    pick) and failures, writes its outputs; exits 1 when a point failed (the others are kept, and in the
    store). The points of `stored_points` (traces, schemes, grid: the sweep file's own, when the command line
    picks other schemes, traces or values) are not run, but join the table, CSV and plot when the store has
    them. With `say_points`, a line on stderr says how many points came from the store, were computed, failed.
    `inputs` are the traces as given, one for each of `traces` (the paths read: a pipe's copy)."""
    from .config import grid_problems
    from .sim import array_model_on, grid as grid_runs
    from .sim import run_many

    if isinstance(schemes, str):
        schemes = [s for s in schemes.split(",") if s]
    problems = grid_problems(list(schemes), grid)
    if problems:  # a -p key no scheme takes, named with the nearest, before anything runs
        fail(f"--param: {'; '.join(problems)}")
    try:
        outputs = (("csv", "--csv"), ("plot", "--plot"), ("plot_latency", "--plot-latency"))
        check_one_stream(*((what, settings.get(key)) for key, what in outputs))
        for key, what in outputs:
            if settings.get(key):
                (check_output if key == "csv" else check_plot_path)(settings[key], what, inputs=inputs)
        runs = [{**common, **run} for run in grid_runs(traces, schemes, grid)]
        check_scheme_params(runs)
        if settings.get("plot_latency") and not any(array_model_on(run) for run in runs):
            # Refused before the runs, which would end with nothing to draw.
            raise _core.FtlsimError(f"--plot-latency: {NO_RESPONSE_TIMES}")
        stored = None
        if stored_points:
            try:
                stored = [{**common, **run} for run in grid_runs(*stored_points)]
            except _core.FtlsimError:  # a file grid no file scheme takes: no sweep of the file alone ran
                stored_points = None
        # The points' total is known once their keys are: "?" till then (a trace's pre-pass may take a while).
        with progress_bar("{task.completed}/{task.fields[of]} runs", err_console) as bar:  # every backend
            task = bar.add_task(bar_label(label), total=None, of="?")
            # A piped trace ran from a temporary copy: its rows (warnings, failures, table, CSV, store) name it
            # as given.
            copies = {str(p): str(t) for p, t in zip([traces] if isinstance(traces, str) else traces, inputs)
                      if p != t}
            df = run_many(runs, jobs=settings.get("jobs"), store=settings.get("store"),
                          scheduler=settings.get("scheduler"), backend=settings.get("backend"), errors="keep",
                          on_done=lambda d, t: bar.update(task, completed=d, total=t, of=t), stored=stored,
                          spell=option_spelling, names=copies)
    except _core.FtlsimError as e:
        fail(e)
    from rich.markup import escape

    file_columns = grid_columns(*stored_points[1:]) if stored_points else []
    swept = [k for k in dict.fromkeys(grid_columns(schemes, grid) + file_columns) if k in df]
    from .output import is_stdout

    print_grid(df, label, swept, columns, metrics,
               stderr=any(is_stdout(settings.get(k)) for k in ("csv", "plot", "plot_latency")))
    failed = df[df["status"] == "failed"]
    for line in failure_lines(df, swept):
        err_console.print(f"[bold red]failed:[/] {escape(line)}", highlight=False)
    try:
        if settings.get("csv"):
            from .output import write_csv

            write_csv(df, settings["csv"])
            say_written(f"{len(df)} rows", settings["csv"])
        if settings.get("plot") and len(failed) < len(df):
            from .plot import compare_plot

            compare_plot(df[df["status"] == "done"], swept, settings["plot"], title=label,
                         precondition=common.get("precondition"))
            say_written("plot", settings["plot"])
        if settings.get("plot_latency") and len(failed) < len(df):
            from .plot import latency_cdf_plot

            latency_cdf_plot(df[df["status"] == "done"], swept, settings["plot_latency"], title=label)
            say_written("response-time CDFs", settings["plot_latency"])
    except _core.FtlsimError as e:
        fail(e)
    except OSError as e:
        fail(_core.FtlsimError(f"cannot write output: {e}"))
    if settings.get("store"):
        err_console.print(f"[dim]results stored in {settings['store']}[/]")
    if say_points:
        err_console.print(points_line(df.attrs["points"]), highlight=False)
    if len(failed):  # a point refused for its input (a parameter out of range) is bad input, as `run` says
        bad_input = (failed["error_kind"] == "input").any()
        fail(f"{len(failed)} of {len(df)} runs failed (listed above)", code=2 if bad_input else 1)


def check_scheme_params(runs: list[dict]) -> None:
    """A grid point whose scheme parameters do not parse (``-p log_blocks=a,4``) refuses the grid before anything
    runs, as `run` refuses it: one error, nothing on standard output or in a store. (A value that parses and is
    out of range is the scheme's to refuse when it is built: that point fails, and the grid exits 2.)"""
    for run in runs:
        params = {k: v for k, v in run.items() if k in scheme_defaults(run["ftl"])}
        try:
            _core.resolve_params(run["ftl"], params)
        except _core.FtlsimError as e:
            if e.problems:  # (an unknown scheme or profile: its run says so)
                raise


def failure_lines(df, swept: list[str]) -> list[str]:
    """A sweep's failures, each error once with the runs it failed: a scheme whose every run on the trace
    failed so by its name, else each run by its swept values ("page, fast (its 3 runs), bast log_blocks=4 on
    t.csv: error"). A grid that fails every point for one reason (a capacity short of the trace) says it once."""
    from .plot import value_text

    failed = df[df["status"] == "failed"]
    lines = []
    for (trace, error), rows in failed.groupby(["trace", "error"], sort=False):
        runs = []
        for ftl, own in rows.groupby("ftl", sort=False):
            total = int(((df["trace"] == trace) & (df["ftl"] == ftl)).sum())
            if len(own) == total:
                runs.append(str(ftl) if total == 1 else f"{ftl} (its {total} runs)")
            else:
                runs += [" ".join([str(ftl)] + [f"{k}={value_text(row[k])}" for k in swept if row[k] == row[k]])
                         for _, row in own.iterrows()]
        # An error that names the trace (a line of it) names it for the runs too: the path once.
        said = error if str(error).startswith(f"{trace}:") else f"{trace}: {error}"
        lines.append(f"{', '.join(runs)} on {said}")
    return lines


ZERO_SAID = ("flash.erases", "flash.page_writes")  # said above a grid's table when 0 in every row


def print_grid(df, label: str, swept: list[str], columns: list[str] | None, metrics: list[str] | None,
               stderr: bool = False) -> None:
    """A sweep's table at the terminal's width (on stderr with `stderr`: its CSV or plot goes to stdout); the
    figures that did not fit are named on stderr, then a warning for runs that say nothing about their
    scheme."""
    from .output import (GRID_FIGURES, default_figures, every_row, grid_metrics, grid_settings, grid_table,
                         print_table, table_width)

    if not (df["status"] == "done").any():
        return  # every point failed: the failures are listed next
    try:
        figures = grid_metrics(df, metrics) if metrics else default_figures(df, columns or GRID_FIGURES)
    except _core.FtlsimError as e:
        fail(e)
    from .report import key_unit

    lists = [c for c in figures if key_unit(c) == "histogram"]  # a CDF of 3 KB a row, piped: as `run` leaves it
    figures = [c for c in figures if c not in lists]
    width = table_width(stderr)
    # A swept parameter with one value in every row is said once, above the table, not in a column of its own;
    # so are erases or page writes, among the default figures, 0 in every row, which have no column (0 erases is
    # a finding; a merge kind a scheme does not do is not).
    from .plot import split_swept

    done = df[df["status"] == "done"]
    varying, one_valued = split_swept(done, swept)
    one_valued += grid_settings(done, swept)

    def zero(c) -> bool:
        return c in done and (done[c].fillna(0) == 0).all()

    if not metrics:
        one_valued += [f"{c}=0" for c in columns or GRID_FIGURES if c in ZERO_SAID and c not in figures and zero(c)]
    else:  # a figure named outright takes its place first, then a glob's, those 0 in every row last
        named = [c for c in figures if c in metrics]
        figures = named + sorted((c for c in figures if c not in named), key=zero)  # stable: order kept
    table, left_out = grid_table(df, varying, figures, width)
    print_table(table, width, title=label + (f"\n{every_row(one_valued, width)}" if one_valued else ""), stderr=stderr)
    if left_out:
        zeros = [c for c in left_out if zero(c)]
        parts = [", ".join(c for c in left_out if not zero(c)), f"0 in every row: {', '.join(zeros)}" if zeros else ""]
        err_console.print(f"[dim]left out at {width} columns: {'; '.join(p for p in parts if p)} (pick figures "
                          "with --metrics, or widen the terminal)[/]", highlight=False)
    if lists:
        err_console.print(f"[dim]lists, left out of the table (--csv holds them): {', '.join(lists)}[/]",
                          highlight=False)
    warn_uninformative(df)


def warn_uninformative(df) -> None:
    """One warning per trace and cause whose runs say nothing about their schemes, naming those schemes."""
    from .output import short_names

    done = df[df["status"] == "done"] if "status" in df else df
    if not len(done) or "trace" not in done:
        return
    names = short_names(done["trace"])
    for trace, rows in done.groupby("trace", sort=False):
        found: dict[str, tuple[str, list[str]]] = {}
        for _, row in rows.iterrows():
            for kind, text in uninformative(row.to_dict(), option_spelling).items():
                found.setdefault(kind, (text, []))[1].append(str(row["ftl"]))
        for text, schemes in found.values():
            which = ", ".join(dict.fromkeys(schemes))
            say("[yellow]warning:[/]", f"{which} on {names[str(trace)]}: {text}")


def points_line(points: dict) -> str:
    """What a sweep did: "12 points from the store, 2 computed, 0 failed", and any torn or damaged store row."""
    line = f"{count_of(points['stored'], 'point')} from the store, {points['computed']} computed, " \
           f"{points['failed']} failed"
    again = [count_of(points[kind], word) for kind, word in (("torn", "cut-off row"), ("damaged", "damaged row"))
             if points.get(kind)]
    if again:
        line += f" ({' and '.join(again)} of the store computed again)"
    return line


def grid_columns(schemes, grid: dict) -> list[str]:
    """The swept parameter names, in order: the common grid's, then each scheme's own."""
    cols = list(grid)
    if isinstance(schemes, dict):
        for own in schemes.values():
            cols += [k for k in (own or {}) if k not in cols]
    return cols


@main.command()
@click.argument("trace", required=False, shell_complete=complete_trace)
@click.option("--ftl", "ftls", multiple=True, default=["bast,fast,ofast"], show_default=True,
              callback=registered("schemes", True), shell_complete=complete_names("schemes", comma=True),
              help="Schemes, comma-separated or the option repeated (--ftl page --ftl fast).")
@common_options(PARAM_HELP + GRID_PARAM_HELP)
@click.option("--plot", "plot_path", type=click.Path(dir_okay=False),
              help="Draw erase count and elapsed time against the swept parameters (PNG, PDF or SVG).")
@click.option("--plot-latency", "plot_latency", type=click.Path(dir_okay=False), metavar="FILE",
              help="Draw read and write response-time CDFs per scheme (the multi-chip array model's: "
                   "--preset mqsim-default or -p queue_depth=N).")
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False), help="Write one row per run as CSV.")
@click.option("--jobs", type=click.IntRange(min=1), default=None, help="Parallel runs (default: all cores).")
@metrics_option
@click.pass_context
def compare(ctx, trace, ftls, params, preset, capacity, precondition, fmt_name, device, devices, writes_only,
            skip_bad_lines, wrap, compact, nvram, nvram_policy, plot_path, plot_latency, csv_path, jobs, metrics):
    """Run a grid of schemes x parameter values on TRACE and print one table.

    A parameter given with several comma-separated values (--param log_blocks=4,8,16) is swept; a scheme that
    does not take a parameter runs without it."""
    trace = DEFAULT_TRACE if trace is None else trace
    grid = parse_grid(params)
    common = option_kwargs(ctx)
    with readable_trace(trace) as path:  # every run reads it: a pipe is read once
        run_grid(trace, path, ftls, grid, common,
                 {"csv": csv_path, "plot": plot_path, "plot_latency": plot_latency, "jobs": jobs},
                 inputs=(trace,), metrics=metrics_of(metrics))


MOUNT_COLUMNS = ["mount.spare_reads", "mount.page_reads", "mount.time_us.max", "mount.array_time_us.max",
                 "ram.total_bytes", "bad_blocks.factory", "flash.erases"]


@main.command("mount-cost")
@click.argument("trace", required=False, shell_complete=complete_trace)
@click.option("--ftl", "ftls", multiple=True, shell_complete=complete_names("schemes", comma=True),
              callback=registered("schemes", True),
              help="Schemes, comma-separated or the option repeated (default: every scheme).")
@common_options(PARAM_HELP + GRID_PARAM_HELP)
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False), help="Write one row per scheme as CSV.")
@click.option("--jobs", type=click.IntRange(min=1), default=None, help="Parallel runs (default: all cores).")
@click.pass_context
def mount_cost(ctx, trace, ftls, params, preset, capacity, precondition, fmt_name, device, devices, writes_only,
               skip_bad_lines, wrap, compact, nvram, nvram_policy, csv_path, jobs):
    """Boot time of each scheme on a device filled by TRACE: the trace runs, then the scheme rebuilds its
    RAM from flash alone (spare areas, map blocks) and the table gives what that mount read and how long it
    took with the preset's timings (e.g. --preset tinyftl-16g): one read after another, and on an array
    (e.g. --preset mqsim-default) also with the dies reading at once. A scheme that cannot mount yet is listed
    as failed."""
    trace = DEFAULT_TRACE if trace is None else trace
    ftls = ftls or ",".join(names("schemes"))
    grid = parse_grid(params)
    common = {**option_kwargs(ctx), "mount_at_end": True}
    with readable_trace(trace) as path:  # every run reads it: a pipe is read once
        run_grid(f"mount cost after {trace}", path, ftls, grid, common, {"csv": csv_path, "jobs": jobs},
                 inputs=(trace,), columns=MOUNT_COLUMNS)


@main.command()
@click.argument("traces", nargs=-1, shell_complete=complete_trace)
@click.option("--config", "-c", "config_path", type=click.Path(dir_okay=False),
              help="A sweep config (TOML, JSON or YAML): traces, schemes with their grids, options, outputs.")
@click.option("--ftl", "ftls", multiple=True, shell_complete=complete_names("schemes", comma=True),
              callback=registered("schemes", True),
              help="Schemes, comma-separated or the option repeated (overrides the file's).")
@common_options(PARAM_HELP + GRID_PARAM_HELP)
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
@metrics_option
@click.pass_context
def sweep(ctx, traces, config_path, ftls, params, preset, capacity, precondition, fmt_name, device, devices,
          writes_only, skip_bad_lines, wrap, compact, nvram, nvram_policy, store, scheduler, backend, jobs, plot_path,
          csv_path, metrics):
    """Run a grid of TRACES x schemes x parameters, resumably: with --store, re-running computes only the
    points not yet done, and a failed point is recorded with its error without losing the others.

    -p key=a,b,c sweeps a parameter over every scheme that takes it."""
    from .config import sweep_parts

    file_traces, schemes, grid, file_common, settings = [], None, {}, {}, {}
    if config_path:
        try:
            file_traces, schemes, grid, file_common, settings = sweep_parts(load_config(config_path), config_path)
        except _core.FtlsimError as e:
            fail(e)
    traces = list(traces) or file_traces
    if not traces:
        fail("no trace: give TRACES or `traces` in the config file")
    # The file's own points: whatever the command line picks, those the store holds are shown too.
    file_points = (file_traces, schemes, grid) if config_path and file_traces and schemes else None
    if ftls:  # the named schemes, each with the file's grid for it
        own = schemes if isinstance(schemes, dict) else {}
        schemes = {s: own.get(s, {}) for s in ftls.split(",") if s.strip()}
    if schemes is None:
        fail("no scheme: give --ftl or `schemes` in the config file")
    given_grid = parse_grid(params)
    grid = {**grid, **given_grid}
    if isinstance(schemes, dict):  # -p overrides the file's grid of a scheme too, not only the file's common one
        schemes = {s: {k: v for k, v in (own or {}).items() if k not in given_grid} for s, own in schemes.items()}
    common = option_kwargs(ctx, file_common)
    given = {"store": store, "scheduler": scheduler, "backend": backend, "jobs": jobs, "plot": plot_path,
             "csv": csv_path}
    settings.update({k: v for k, v in given.items() if v is not None})
    label = traces[0] if len(traces) == 1 else f"{len(traces)} traces"
    with contextlib.ExitStack() as spools:  # every point reads its trace: a pipe is read once
        paths = [spools.enter_context(readable_trace(t)) for t in traces]
        run_grid(label, paths, schemes, grid, common, settings, inputs=tuple(traces), metrics=metrics_of(metrics),
                 stored_points=file_points, say_points=True)


STORE_FIGURES = ["flash.erases", "time_us.total"]
STORE_HEADERS = {"flash.erases": "erases", "time_us.total": "time_us"}
KEY_SHOWN = 10  # hex digits of a key in `ftlsim store`'s table: enough for --where key=..., 80 columns


@main.command("store", short_help="List, filter and prune a sweep's results store.")
@click.argument("path", type=click.Path())
@click.option("--where", "-w", "conditions", multiple=True, metavar="COLUMN=VALUE",
              help="Keep the rows whose COLUMN is VALUE, e.g. ftl=fast, status=failed, log_blocks=8, key=3fa9 "
                   "(a key by its first digits); several must all hold.")
@click.option("--prune", is_flag=True, help="Delete the rows --where selects from the store (their points are "
                                            "computed again by the next sweep that needs them).")
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False), help="Write the selected rows as CSV.")
def store_cmd(path, conditions, prune, csv_path):
    """List, filter and prune the results store PATH of a sweep (a .parquet or .csv file, or a directory).

    Lists one line per stored point: its trace, scheme and the options that differ between points, its
    status, erases and modelled time; options every row shares are printed once above the table, and why each
    failed point failed below it."""
    from .store import Store, store_file

    try:
        if not os.path.exists(store_file(path)):
            raise _core.FtlsimError(f"no store at {path}; give the path a sweep's --store (or `store =`) named")
        if csv_path:
            check_output(csv_path, "--csv")
        if prune and not conditions:
            raise _core.FtlsimError("--prune deletes the rows --where selects: give --where (to empty the store, "
                                    "delete its file)")
        st = Store(path)
        df = st.frame()
        selected = df[store_selection(df, conditions)] if len(df) else df
        if len(selected):  # in one order whatever order the points finished in (threads, processes, workers)
            selected = store_order(selected)
        if prune:
            removed = st.remove(selected["key"])
            err_console.print(f"{removed} rows pruned from {st.path}, {len(st.rows)} left", highlight=False)
            return
    except _core.FtlsimError as e:
        fail(e)
    if csv_path:
        from .output import write_csv

        write_csv(selected, csv_path)
        say_written(f"{len(selected)} rows", csv_path)
    from .output import every_row, is_stdout, table_width

    out = err_console if is_stdout(csv_path) else console
    width = table_width(out is err_console)
    table, varying, shared, left_out = store_table(selected, width)
    # The heading lines as long as the terminal, not the table: a table's title wraps at its width.
    out.print(f"{st.path}: {len(selected)} of {len(df)} rows", highlight=False, markup=False)
    if shared:
        out.print(every_row(shared, table_width(out is err_console)), highlight=False, markup=False,
                  soft_wrap=True)
    out.print(table)
    if left_out:
        err_console.print(f"[dim]left out at {width} columns: {', '.join(left_out)} (widen the terminal, or write "
                          "every column with --csv)[/]", highlight=False)
    if len(selected) and "error" in selected:
        # Why each failed point failed: the store keeps it, and the sweep said it only once.
        for line in failure_lines(selected, [c for c in varying if c != "trace"]):
            say("[bold red]failed:[/]", line)
    if st.torn:
        err_console.print(f"{st.torn} cut-off rows were skipped; the next sweep computes their points again",
                          highlight=False)
    if st.damaged:
        err_console.print(f"{count_of(len(st.damaged), 'damaged row')} left out (a figure that is not a number); "
                          "the next sweep computes their points again", highlight=False)


def store_order(df):
    """`df`'s rows by trace, scheme, then each parameter's values (numbers as numbers: log_blocks 4, 8, 16, not
    4, 16, 8 as their keys fell), then key."""
    import pandas as pd

    from .store import parameter_columns

    params = [c for c in df.columns if c in parameter_columns() and c not in ("trace", "ftl")]
    by = [c for c in ("trace", "ftl") if c in df] + params + ["key"]

    def sortable(column):
        numbers = pd.to_numeric(column, errors="coerce")
        return numbers if numbers.notna().sum() == column.notna().sum() else column.astype(str)

    return df.sort_values(by, key=sortable, kind="stable")


def comma_lines(text: str, width: int) -> str:
    """`text` broken after its commas into lines of at most `width` where it can: a workload's settings
    (``hotcold:writes=20000,seed=1``) are broken between two of them, not inside one (a part longer than
    `width` is folded by the table)."""
    import re

    lines = [""]
    for part in re.findall(r"[^,]+,?|,", text):
        if lines[-1] and len(lines[-1]) + len(part) > width:
            lines.append(part)
        else:
            lines[-1] += part
    return "\n".join(lines)


def store_selection(df, conditions):
    """The rows of `df` that meet every ``COLUMN=VALUE`` condition: numbers compare as numbers, ``key`` by
    prefix, anything else as text. An unknown column is an error naming the nearest one."""
    import pandas as pd

    from ._registry import did_you_mean

    keep = pd.Series(True, index=df.index)
    for condition in conditions:
        column, sep, value = condition.partition("=")
        column = column.strip()
        if not sep or not column:
            raise _core.FtlsimError(f"--where `{condition}` is not COLUMN=VALUE (e.g. --where ftl=fast)")
        if column not in df.columns:
            # The columns a point is chosen by (its trace, scheme, status, key and settings) besides the report's
            # keys (flash.erases, ...), which are too many to list.
            from .report import key_unit

            settings = ", ".join(c for c in df.columns
                                 if key_unit(c) is None and "." not in c and c not in ("error", "error_kind"))
            raise _core.FtlsimError(f"--where {column}: the store has no column `{column}`"
                                    f"{did_you_mean(column, list(df.columns))}; its points' columns: {settings}, and "
                                    f"every report key (flash.erases, ...)")
        cells = df[column]
        if column == "key":
            keep &= cells.astype(str).str.startswith(value)
            continue
        try:
            number = float(value)
        except ValueError:
            number = None
        numeric = pd.to_numeric(cells, errors="coerce")
        meets = numeric == number if number is not None and numeric.notna().any() else cells.astype(str) == value
        if len(df) and not meets.any():  # a typo listed nothing, or pruned nothing, without a word
            held = sorted(set(str(v) for v in cells.dropna()))  # not in the order points finished
            shown = ", ".join(held[:12]) + (f", ... ({len(held)} values)" if len(held) > 12 else "")
            say("[yellow]note:[/]", f"--where {condition} matches no row: {column} holds {shown or 'nothing'}"
                f"{did_you_mean(value, held)}")
        keep &= meets
    return keep


def store_table(df, width: int | None = None) -> tuple[Table, list[str], list[str], list[str]]:
    """The rows of a store: trace, scheme, the options that differ between rows, status, the main figures and
    the key's first digits; the options that differ; those all rows share (the trace too, where there is one),
    said above it; and the columns left out to fit `width` (the key's, then the figures', as the run and grid
    tables leave out figures: rich cropped the table at the terminal's edge)."""
    from rich.markup import escape

    from .output import TRACE_FOLD_WIDTH
    from .store import parameter_columns

    from .plot import split_swept

    params = [c for c in df.columns if c in parameter_columns() and c != "ftl"]
    varying, shared = split_swept(df, ["trace", *[c for c in params if c != "trace"]])
    table = Table()
    columns = [*[c for c in varying if c == "trace"], "ftl", *[c for c in varying if c != "trace"], "status",
               *[c for c in STORE_FIGURES if c in df], "key"]

    def cell(column, value) -> str:
        if value is None or value != value:
            return "-"
        if isinstance(value, float) and value.is_integer() and column in STORE_FIGURES:
            value = int(value)  # a count beside a failed point's gap (NaN made the column floats)
        return value[:KEY_SHOWN] if column == "key" else escape(fmt(value))

    rows = [[cell(c, row[c]) for c in columns] for _, row in df.iterrows()]
    need = {c: max([len(r[i]) for r in rows] + [len(STORE_HEADERS.get(c, c))]) for i, c in enumerate(columns)}
    need.update({"trace": min(need["trace"], TRACE_FOLD_WIDTH)} if "trace" in need else {})
    left_out = []
    for column in ("key", *reversed([c for c in STORE_FIGURES if c in columns])):
        if width is None or 1 + sum(need[c] + 3 for c in columns if c not in left_out) <= width:
            break
        left_out.append(column)
    kept = [i for i, c in enumerate(columns) if c not in left_out]
    columns, rows = [columns[i] for i in kept], [[r[i] for i in kept] for r in rows]
    if width is not None and "trace" in columns:  # the room the other columns leave it, at least TRACE_FOLD_WIDTH
        room = max(width - 4 - sum(need[c] + 3 for c in columns if c != "trace"), TRACE_FOLD_WIDTH)
        at = columns.index("trace")
        rows = [[comma_lines(v, room) if i == at else v for i, v in enumerate(r)] for r in rows]
    for i, column in enumerate(columns):
        # In a narrow terminal the trace folds; every other cell keeps its width (a number is never cut).
        width = None if column == "trace" else max([len(r[i]) for r in rows], default=1)
        table.add_column(STORE_HEADERS.get(column, column),
                         justify="left" if column in ("trace", "ftl", "status", "key") else "right",
                         overflow="fold", min_width=width)
    for row in rows:
        table.add_row(*row)
    return table, varying, shared if len(df) else [], [STORE_HEADERS.get(c, c) for c in left_out]


@main.command("generate")
@click.argument("workload", shell_complete=complete_trace)
@click.argument("output_argument", metavar="[OUTPUT]", required=False, type=click.Path(dir_okay=False))
@click.option("--output", "-o", type=click.Path(dir_okay=False),
              help="Trace file to write (or OUTPUT); its extension names the format: .csv (native, with tags and "
                   "times; one device), .trace or .ascii (SSDsim / MQSim), .blkparse (both keep each request's "
                   "device); .gz on top compresses.")
@click.option("--preset", default=None, shell_complete=complete_names("presets"),
              help="Device preset; its page size and capacity size the workload.")
@click.option("--capacity", default=None, help="Logical capacity the workload spreads over, e.g. 32MiB.")
@click.option("--param", "-p", "params", multiple=True, metavar="K=V", help="A device override or trace option.")
@click.option("--to", "output_format", type=click.Choice(list(STDOUT_FORMATS), case_sensitive=False), default=None,
              help="The format of OUTPUT - (standard output): csv (default), ssdsim or blkparse.")
@trace_options(devices_help="fold (default), concat (a range per device) or devices to keep, concatenated in "
                            "that order.", compact_help="Pack the touched 1 MiB extents together.")
def generate_cmd(workload, output_argument, output, preset, capacity, params, output_format, fmt_name, device,
                 devices, writes_only, skip_bad_lines, compact):
    """Write WORKLOAD (a built-in workload, or any trace) to OUTPUT (the second argument, or -o) in the format
    its extension names, arrival times kept (`ftlsim convert` is the same command); OUTPUT - is standard
    output, in the format --to names. The engine writes a temporary file and renames it."""
    from .output import is_stdout
    from .trace import generate

    if output is None and output_argument is None:
        command = click.get_current_context().info_name  # generate or convert, as called
        raise click.UsageError(f"give the trace file to write: ftlsim {command} WORKLOAD OUTPUT (or -o OUTPUT)")
    if output is not None and output_argument is not None and output != output_argument:
        raise click.UsageError(f"two files to write: {output_argument} and -o {output}; give one")
    output = output if output is not None else output_argument
    kwargs = {k: parse_value(v) for k, v in parse_params(params).items()}
    flags = {"device": device, "devices": devices, "writes_only": writes_only, "skip_bad_lines": skip_bad_lines,
             "compact": compact}
    twice = sorted(k for k, v in flags.items() if v is not None and k in kwargs)
    if twice:
        raise click.UsageError(f"{twice[0]} given twice: as --{twice[0].replace('_', '-')} and -p {twice[0]}=...")
    kwargs.update({k: v for k, v in flags.items() if v is not None})
    if fmt_name != "auto":
        if "format" in kwargs:
            raise click.UsageError("format given twice: as --format and -p format=...")
        kwargs["format"] = fmt_name
    try:
        if output_format is not None and not is_stdout(output):
            raise click.UsageError(f"--to names the format of standard output (OUTPUT -); {output}'s extension "
                                   f"names its own")
        if not is_stdout(output):
            check_output(output, "--output", inputs=(workload,))
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always", RuntimeWarning)
            n = generate(workload, output, preset=preset, capacity=capacity, output_format=output_format, **kwargs)
    except (_core.FtlsimError, ValueError) as e:
        fail(e)
    for warning in said:
        message = warning.message
        say("[yellow]warning:[/]", message.text(option_spelling) if isinstance(message, TagsLost) else str(message))
    where = "standard output" if is_stdout(output) else output
    # On stderr: stdout stays for data.
    err_console.print(f"{count_of(n, 'request')} written to {where}", highlight=False)


main.add_command(generate_cmd, "convert")


@main.command("info")
@click.argument("trace", shell_complete=complete_trace)
@trace_options(devices_help="fold (default), concat (a range per device, shown with each device) or devices to "
                            "keep, concatenated in the order given.",
               compact_help="Describe the trace with its touched 1 MiB extents packed.")
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
    concentration; --plot draws its distributions. TRACE is a file (gzip, zstd or xz too; - or a pipe is read
    once) or a built-in workload."""
    from .output import write_text
    from .trace import info, plot_info

    progress = LazyProgress(f"info {trace}")
    try:
        check_one_stream(("--json", json_path), ("--plot", plot_path))
        if json_path is not None:
            check_output(json_path, "--json", inputs=(trace,))
        if plot_path is not None:
            check_plot_path(plot_path, inputs=(trace,))
        stats = info(trace, format=fmt_name, block_bytes=block_bytes, page_bytes=page_bytes, device=device,
                     devices=devices, writes_only=writes_only or None, skip_bad_lines=skip_bad_lines or None,
                     compact=compact, progress=lambda done, total: progress(0, done, total))
    except _core.FtlsimError as e:
        fail(e)
    finally:
        progress.close()
    table = Table(title=trace_title(trace), show_header=False, title_justify="left")
    table.add_column("figure", style="cyan")
    table.add_column("value", justify="right")
    for key, value in stats.items():
        if key == "devices":
            table.add_row(key, ", ".join(device_text(d, stats["format"]) for d in value) or "-")
        elif key != "distributions":
            table.add_row(key, info_cell(key, value))
    from .output import is_stdout

    # The JSON or the image on stdout is the output a pipe reads: the table goes to stderr then.
    (err_console if is_stdout(json_path) or is_stdout(plot_path) else console).print(table)
    if not stats["requests"]:  # a table of zeros, which `run` refuses: said, naming what kept none
        kept = [what for what, on in ((f"--device {device}", device is not None), ("--writes-only", writes_only),
                                      ("--skip-bad-lines", skip_bad_lines)) if on]
        say("[yellow]warning:[/]", f"no request was read{' with ' + ', '.join(kept) if kept else ''}: "
                                   f"`ftlsim run` has nothing to run on it")
    if plot_path:
        try:
            plot_info(stats, plot_path, title=trace_title(trace))
        except _core.FtlsimError as e:
            fail(e)
        say_written("plot", plot_path)
    if json_path:
        try:
            write_text(json_path, json.dumps(stats, indent=2) + "\n")
        except _core.FtlsimError as e:
            fail(e)


def info_cell(key: str, value) -> str:
    """A figure of `ftlsim info` in human units beside the exact count: ``1.5 GiB (1,610,612,736 B)``,
    ``2.5 s (2,500,000 us)``, shares as percentages."""
    from .plot import human_bytes, human_us

    if key.endswith("_bytes") or key == "highest_address":
        return fmt(value) + " B" if value < 1024 else f"{human_bytes(value)} ({value:,} B)"
    if key.endswith("_us"):
        if value < 1000:
            return f"{value:,.4g} us"
        return f"{human_us(value).replace('µs', 'us')} ({value:,.0f} us)"
    if key.startswith("write_share_"):
        return f"{value:.2%}"
    return fmt(value)


@contextlib.contextmanager
def readable_trace(trace: str):
    """:func:`ftlsim.trace.readable` on the command line: its errors (an empty TRACE, a stream that cannot be
    read) end the command as `fail` does."""
    from .trace import check_trace, is_stream, is_workload, readable

    try:
        check_trace(trace)
    except _core.FtlsimError as e:
        fail(e)
    if not is_workload(trace) and not is_stream(trace):
        try:  # a file that cannot be read is bad input (exit 2), not a grid of runs that each failed (exit 1)
            open(trace, "rb").close()
        except OSError as e:
            fail(f"cannot read trace {trace}: {e.strerror}")
    try:
        with readable(trace) as path:
            yield path
    except _core.FtlsimError as e:
        fail(e)


def _stdin_holds_data() -> bool:
    """Whether standard input holds data, piped or redirected in (a pipe with bytes waiting in it, or a regular
    file that is not empty): a trace the user may have meant `run` to read. A terminal, /dev/null or an empty
    pipe (a harness that runs commands with a pipe for input) does not; nothing is read."""
    try:
        fd = sys.stdin.fileno()
        status = os.fstat(fd)
        if stat.S_ISREG(status.st_mode):
            return status.st_size > 0
        if not stat.S_ISFIFO(status.st_mode):
            return False
        import array
        import fcntl
        import termios

        waiting = array.array("i", [0])
        fcntl.ioctl(fd, termios.FIONREAD, waiting)
        return waiting[0] > 0
    except (OSError, ValueError, AttributeError, ImportError):
        return False


def trace_title(trace: str) -> str:
    """A trace as a title names it: a file by its name (the folders are in the command line), standard input
    as <stdin>, a workload by its spec."""
    from .trace import is_workload

    if trace == "-":
        return "<stdin>"
    if os.path.exists(trace) and not is_workload(trace):
        return os.path.basename(os.path.normpath(trace)) or trace
    return trace


def device_text(d: dict, fmt_name: str) -> str:
    """A device of `ftlsim info`: its number (a blkparse or FIU device's major,minor beside it: 2064 is 8,16), its
    requests and, with --devices concat or a filter, its range in bytes."""
    number = d["device"]
    named = f"{number} = {number // 256},{number % 256}" if fmt_name in ("blkparse", "fiu") else f"{number}"
    text = f"{named} ({count_of(d['requests'], 'request')}"
    if d.get("range_start") is not None:
        text += f", bytes {d['range_start']:,}-{d['range_start'] + d['range_bytes']:,}"
    return text + ")"


@main.command("plot-refs")
@click.argument("trace", shell_complete=complete_trace)
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), help="The image to write (PNG).")
@click.option("--format", "fmt_name", default="auto", shell_complete=complete_names("formats"),
              help="Trace format; default: sniff.")
@click.option("--device", metavar="N|MAJOR,MINOR", default=None, help=f"Keep one device / ASU {DEVICE_HELP}.")
@click.option("--skip-bad-lines", is_flag=True, help="Count lines that do not parse instead of failing.")
@click.option("--page-bytes", type=click.IntRange(min=1, max=2**31), default=512, show_default=True,
              help="Page size.")
@click.option("--block-bytes", type=click.IntRange(min=1), default=16384, show_default=True,
              help="Size of a logical block.")
def plot_refs_cmd(trace, output, fmt_name, device, skip_bad_lines, page_bytes, block_bytes):
    """Draw page writes per logical block and the address of each write in trace order (hot write references).
    TRACE is a file (a pipe or - is read once), or a built-in workload."""
    from .plot import refs_plot
    from .trace import write_refs

    try:
        check_plot_path(output, "--output", inputs=(trace,))
        refs = write_refs(trace, format=fmt_name, block_bytes=block_bytes, page_bytes=page_bytes, device=device,
                          skip_bad_lines=skip_bad_lines or None)
        refs_plot(refs, output, title=trace_title(trace) + (f", device {device}" if device is not None else ""))
    except _core.FtlsimError as e:
        fail(e)
    say_written("plot", output)


def complete_experiment(ctx, param, incomplete: str):
    """Shell completion of experiment names (`ftlsim reproduce NAME`)."""
    from . import reproduce as rp

    return [n for n in rp.EXPERIMENTS if n.startswith(incomplete)]


@main.command()
@click.argument("name", required=False, shell_complete=complete_experiment)
@click.option("--quick", is_flag=True, help="Small workloads: the shape of each result in seconds.")
@click.option("--list", "list_only", is_flag=True, help="List the experiments and stop.")
@click.option("--traces", "traces_dir", type=click.Path(exists=True, file_okay=False), envvar="FTLSIM_TRACES",
              show_envvar=True, help="Directory of the public traces (msr_wdev_1.csv, ...); experiments that "
              "need one are skipped without it.")
@click.option("--report", "report_dir", type=click.Path(file_okay=False),
              help="Write a self-contained Markdown report (every table, figure and verdict) to this directory.")
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False),
              help="Write NAME's table (its runs, or its paper figures beside ftlsim's) as CSV.")
@click.option("--plot", "plot_path", type=click.Path(dir_okay=False), help="Draw NAME's figure to this PNG.")
@click.option("--jobs", type=int, default=None, help="Parallel runs (default: all cores).")
def reproduce(name, quick, list_only, traces_dir, report_dir, csv_path, plot_path, jobs):
    """Re-run the papers' experiments and judge each claim: exact, close, same direction, contradicts or not
    comparable, with its distance from the paper.

    With no NAME, runs every experiment and prints one line per distinct claim; with NAME, one experiment's
    table, its claims beside the paper's figures, and the measured cause of each contradiction."""
    import time

    from rich.markup import escape

    from . import reproduce as rp
    from .output import is_stdout

    out = err_console if is_stdout(csv_path) or is_stdout(plot_path) else console  # stdout holds the CSV or PNG

    if name is not None and name not in rp.EXPERIMENTS:
        fail(f"unknown experiment `{name}`; valid: {', '.join(rp.EXPERIMENTS)} (or none: all of them)")
    if list_only:  # every experiment, or NAME's alone
        t = Table(title="Experiments (ftlsim reproduce NAME)", title_justify="left")
        for c in ("name", "paper", "what", "stand-in"):
            t.add_column(c, overflow="fold")
        for e in rp.EXPERIMENTS.values():
            if name in (None, e.name):
                t.add_row(e.name, e.paper, e.what, e.stand_in or "-")
        out.print(t)
        return
    if name is None and (csv_path or plot_path):
        fail("--csv and --plot take one experiment: pass its NAME (or use --report DIR for all of them)")
    try:  # an output that cannot be written is refused before the experiment runs, not after
        check_one_stream(("--csv", csv_path), ("--plot", plot_path))
        if csv_path:
            check_output(csv_path, "--csv")
        if plot_path:
            check_plot_path(plot_path)
    except _core.FtlsimError as e:
        fail(e)
    names = [name] if name else list(rp.EXPERIMENTS)
    results = []
    started = time.perf_counter()
    with progress_bar("{task.completed}/{task.total}", out, eta=False) as bar:
        task = bar.add_task("experiments", total=len(names))
        cache = rp.RunCache()
        for n in names:
            bar.update(task, description=n)
            try:
                results.append(rp.run(n, quick=quick, jobs=jobs, cache=cache, traces=traces_dir))
            except _core.FtlsimError as e:
                fail(f"{n}: {e}")
            bar.update(task, advance=1)
    if name:
        r = results[0]
        exp = r.experiment
        if r.skipped:
            out.print(f"[yellow]{rp.SKIPPED}[/] {exp.name}: {escape(r.skipped)}")
        else:
            # The title a line of its own: a table's wraps at the table's width (36 columns piped).
            out.print(f"{exp.name}: {exp.paper}", style="italic", markup=False, highlight=False, soft_wrap=True)
            for table in dataframe_tables(r.table, out.width):
                out.print(table)
        if exp.stand_in:
            out.print(f"[bold]Stand-in:[/] {escape(exp.stand_in)}")
        if exp.plausible:
            out.print(f"[bold]Verdict under:[/] {escape(exp.plausible)} ({escape(exp.plausible_why)})")
        if exp.notes:
            out.print(f"[dim]{escape(exp.notes)}[/]")
        out.print("[bold]Claims[/]")
        for _, v in r.verdicts.iterrows():
            title = v["claim"] + (f" [{v['variant']}]" if v["variant"] else "")
            out.print(_verdict_markup(v["verdict"]) + (f" {escape(v['distance'])}" if v["distance"] else "")
                      + f"  [bold]{escape(title)}[/]")
            paper = v["paper"] or f'"{v["statement"]}"'
            details = [("paper", f"({v['where']}, line {v['line']}) {paper}"),
                       ("ftlsim", v["ftlsim"] + (f" ({v['unit']})" if v["unit"] and v["ftlsim"] else "")),
                       ("why", v["why"]), ("rule", v["rule"]), ("measured", v["cause"])]
            for label, text in details:
                if text:
                    out.print(f"  [dim]{label}:[/] {escape(text)}")
    else:
        out.print(f"[bold]{escape(rp.headline(results))}[/] ({'quick' if quick else 'full'} size, "
                  f"{time.perf_counter() - started:.0f} s)")
        out.print(f"[dim]{escape(rp.RULE)}[/]")
        t = Table(title="One line per claim", title_justify="left", expand=True)
        t.add_column("experiment / claim", overflow="fold", ratio=5)
        t.add_column("ours vs paper", overflow="fold", ratio=2)
        t.add_column("verdict", no_wrap=True)
        for _, v in rp.summary(results).iterrows():
            text = f"[dim]{v['experiment']}:[/] {escape(v['claim'])}"
            if v["under"]:
                text += f"\n[dim]under {escape(v['under'])}; {escape(v['spread'])}[/]"
            t.add_row(text, escape(v["distance"] or "-"), _verdict_markup(v["verdict"]))
        out.print(t)
        by_variant = rp.variants(results)
        by_variant = by_variant[by_variant["variant"] != ""]
        if len(by_variant):
            t = Table(title="Claims by variant (FAT choices the papers leave open)", title_justify="left")
            for c in ("experiment / claim", "variant", "ours vs paper", "verdict"):
                t.add_column(c, overflow="fold")
            for _, v in by_variant.iterrows():
                t.add_row(f"[dim]{v['experiment']}:[/] {escape(v['claim'])}", escape(v["variant"]),
                          escape(v["distance"] or "-"), _verdict_markup(v["verdict"]))
            out.print(t)
        for r in results:
            if r.skipped:
                out.print(f"[yellow]{rp.SKIPPED}[/] {r.experiment.name}: {escape(r.skipped)}")
            for _, v in r.verdicts[r.verdicts["verdict"] == "contradicts"].iterrows():
                out.print(f"[red]contradicts[/] {r.experiment.name}: " + escape(
                    v["claim"] + (f" [{v['variant']}]" if v["variant"] else "")
                    + f"\n  ftlsim: {v['ftlsim']}\n  measured: {v['cause'] or v['why']}"))
    if csv_path:
        if results[0].skipped:
            fail(f"experiment `{name}` was skipped, no runs to write: {results[0].skipped}")
        from .output import write_csv

        write_csv(results[0].df, csv_path)
        say_written(f"{len(results[0].df)} rows", csv_path)
    if plot_path:
        if results[0].skipped:
            fail(f"experiment `{name}` was skipped, no figure to draw: {results[0].skipped}")
        if not results[0].figure(plot_path):
            fail(f"experiment `{name}` has no figure to draw; use --csv")
        say_written("plot", plot_path)
    if report_dir:
        path = rp.write_report(results, report_dir)
        say_written("report", path)


def _verdict_markup(verdict: str) -> str:
    color = {"exact": "green", "close": "green", "same direction": "cyan", "contradicts": "red",
             "not comparable": "yellow", "skipped": "yellow"}
    return f"[{color.get(verdict, 'white')}]{verdict}[/]"


def dataframe_tables(df, width: int | None) -> list[Table]:
    """A pandas DataFrame (flat or with a two-level column index, as pivot makes) as rich tables of at most
    `width` columns (None: one table): a two-level header takes a line a level (``flash.erases`` over
    ``fast``), each broken after ``.``, ``_`` and spaces to its column's figures' width; a column of figures
    never narrows below them (a number is never cut). Columns that do not fit go on to a table below, which
    repeats the leading columns that name the rows (the index, and names such as a scheme's)."""
    import numbers

    from .output import header_lines, header_width

    named = bool(df.index.name or any(df.index.names))
    keys = df.index.nlevels if named else 0
    df = df.reset_index() if named else df
    columns = ["\n".join(str(p) for p in c if str(p)) if isinstance(c, tuple) else str(c) for c in df.columns]
    from .output import WHOLE_UNITS, column_cells
    from .report import key_unit

    def column_text(key: str, values) -> list:
        # A count in a float column (a pivot's gaps) whole, 6 rather than 6.000; a ratio keeps its decimals in
        # every row (1.000 beside 1.028).
        return column_cells(key, values) if key_unit(key) in WHOLE_UNITS else [fmt(v) for v in values]

    by_column = [column_text(str(c[0]) if isinstance(c, tuple) else str(c), values) for c, values in df.items()]
    rows = [list(row) for row in zip(*by_column)] if by_column else [[] for _ in range(len(df))]
    figures, cells, heads = [], [], []
    for i, (col, (_, values)) in enumerate(zip(columns, df.items())):
        figures.append(all(isinstance(v, numbers.Number) and not isinstance(v, bool) for v in values))
        cells.append(max([len(r[i]) for r in rows] + [1]))
        heads.append(header_lines(col, max(cells[i], header_width(col))))
    # A column takes its width plus 3 (padding and rule), a table 1 more.
    need = [max([cells[i]] + [len(line) for line in heads[i].split("\n")]) + 3 for i in range(len(columns))]
    # The columns up to the last of names (a scheme, a preset, a variant) name the rows too, where they leave
    # half the width to the figures; else the names that lead.
    names = [i for i in range(len(columns) - 1) if not figures[i]]
    if names and (width is None or 1 + sum(need[:names[-1] + 1]) <= width // 2):
        keys = max(keys, names[-1] + 1)
    while keys < len(columns) - 1 and not figures[keys]:
        keys += 1
    named_width = 1 + sum(need[:keys])
    groups: list[list[int]] = []
    for i in range(keys, len(columns)):
        if not groups or (width is not None and named_width + sum(need[j] for j in groups[-1]) + need[i] > width):
            groups.append([])
        groups[-1].append(i)
    tables = []
    for n, group in enumerate(groups or [[]]):
        table = Table()
        for i in [*range(keys), *group]:
            table.add_column(heads[i], justify="right" if figures[i] else "left", overflow="fold",
                             min_width=cells[i] if figures[i] else None, no_wrap=figures[i])
        for row in rows:
            table.add_row(*[row[i] for i in [*range(keys), *group]])
        tables.append(table)
    return tables


@main.command("config")
@click.option("--example", type=click.Choice(["run", "sweep"]), default="run", show_default=True,
              help="Which file: a run (ftlsim run -c) or a sweep (ftlsim sweep -c).")
def config_cmd(example):
    """Print an annotated config file (TOML): every key with its default and meaning, and every scheme's
    parameters. The validator that refuses unknown keys reads the same reference."""
    from .reference import example_run, example_sweep

    click.echo(example_run() if example == "run" else example_sweep(), nl=False)


@main.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print the registries as JSON (for scripts).")
def list_cmd(as_json):
    """List schemes, device presets, built-in workloads and trace formats."""
    from rich.markup import escape

    from .ftl import schemes
    from .output import param_text
    from .trace import formats, presets, workloads

    if as_json:
        out = {"schemes": schemes(), "presets": presets(), "workloads": workloads(), "formats": formats()}
        click.echo(json.dumps(out, indent=2))
        return
    # Names, parameters and figures are read whole (a preset name is copied, a timing read): their columns
    # take their longest entry and never break it; the summaries wrap between words in what is left.
    t = Table(title="Schemes (--ftl)", title_justify="left")
    rows = [(s["name"], s["summary"], [f"{k}={param_text(v)}" for k, v in (s["defaults"] or {}).items()])
            for s in schemes()]
    t.add_column("name", no_wrap=True)
    t.add_column("summary", overflow="fold")
    t.add_column("parameters (defaults)", no_wrap=True,
                 min_width=max(len(line) for _, _, params in rows for line in params))
    for name, summary, params in rows:
        t.add_row(name, summary, "\n".join(params))
    console.print(t)
    t = Table(title="Presets (--preset); their sources below", title_justify="left")
    for c in ("name", "page", "pages/block", "read/program/erase us"):
        t.add_column(c, no_wrap=True)
    for p in presets():
        tm = p["timing"]
        t.add_row(p["name"], f"{p['page_bytes']}+{p['spare_bytes']} B", str(p["pages_per_block"]),
                  f"{tm['read_us']}/{tm['program_us']}/{tm['erase_us']}")
    console.print(t)
    for p in presets():
        console.print(f"[bold]{p['name']}[/]: {escape(p['summary'])}", highlight=False)
    console.print()
    t = Table(title="Built-in workloads (use in place of a trace: name:key=value,...)", title_justify="left")
    t.add_column("name", no_wrap=True)
    for c in ("summary", "parameters (default: meaning)"):
        t.add_column(c, overflow="fold")
    for w in workloads():
        t.add_row(w["name"], w["summary"], "\n".join(f"{k}={d}: {m}" for k, d, m in w["params"]))
    console.print(t)
    t = Table(title="Trace formats (--format)", title_justify="left")
    t.add_column("name", no_wrap=True)
    t.add_column("summary", overflow="fold")
    for f in formats():
        t.add_row(f["name"], f["summary"])
    console.print(t)


@main.command("ram")
@click.option("--ftl", required=True, shell_complete=complete_names("schemes"), callback=registered("schemes"),
              help="Scheme name.")
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
    from .output import grouped_digits, write_text

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
        t.add_row(i["name"], f"{i['bytes']:,}", grouped_digits(i["layout"]))
    total = sum(i["bytes"] for i in items)
    t.add_row("[bold]total[/]", f"[bold]{total:,}[/]", "")
    from .output import is_stdout

    (err_console if is_stdout(json_path) else console).print(t)  # the JSON on stdout is what a pipe reads
    if json_path:
        try:
            write_text(json_path, json.dumps({"total_bytes": total, "items": items}, indent=2) + "\n")
        except _core.FtlsimError as e:
            fail(e)


if __name__ == "__main__":
    main()
