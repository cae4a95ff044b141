"""Traces, built-in workloads and device presets."""

from __future__ import annotations

import contextlib
import os
import stat
import sys

from ._registry import did_you_mean, names, registry
from .errors import Spelling, keyword
from .text import count_of

#: Chunk in which a pipe is copied to its spool file.
_SPOOL_CHUNK = 1 << 20


def check_spec(trace: str) -> str:
    """`trace` as a string, refused when it is empty (it would otherwise name no file and no workload)."""
    trace = str(os.fspath(trace)) if isinstance(trace, os.PathLike) else str(trace)
    if not trace.strip():
        from . import _core

        raise _core.FtlsimError("the trace is an empty string; give a trace file, - for standard input, or a "
                                "built-in workload such as uniform:writes=150000")
    return trace


#: Names of the process's standard input: read as a stream whatever feeds it (a pipe, a terminal, a file).
_STDIN_PATHS = ("-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0")


def is_stream(trace: str) -> bool:
    """True when `trace` delivers its bytes once: standard input (``-``, ``/dev/stdin``), a pipe or a FIFO. A
    regular file, a device such as ``/dev/zero`` and a built-in workload can be read again."""
    if trace in _STDIN_PATHS:
        return True
    try:
        mode = os.stat(trace).st_mode
    except (OSError, ValueError):
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def is_workload(trace: str) -> bool:
    """Whether `trace` is a built-in workload spec rather than a path (never opening a stream, which would wait
    for a writer and take bytes that are not its to take)."""
    from . import _core

    if is_stream(trace):
        return False
    try:
        return _core.sniff_format(trace) == "workload"
    except _core.FtlsimError:
        return False


def check_trace(trace: str) -> None:
    """A trace that is neither a file nor a workload spec: name the nearest workload when one is close
    (``unifrom:writes=10`` -> ``uniform``), else let the engine say the file does not exist. An empty string
    is refused; ``-`` is standard input."""
    if trace == "-" or os.path.exists(check_spec(trace)) or is_workload(trace):
        return
    name = trace.split(":", 1)[0]
    hint = did_you_mean(name, names("workloads"))
    if hint and name not in names("workloads"):  # a known workload's wrong options: the engine names them
        from . import _core

        raise _core.FtlsimError(f"no trace file `{trace}` and no built-in workload `{name}`{hint}; "
                                f"built-in workloads: {', '.join(names('workloads'))}")


def _stdin():
    from . import _core

    if sys.stdin is None:
        raise _core.FtlsimError("the trace is - (standard input), but this process has no standard input")
    return sys.stdin.buffer


@contextlib.contextmanager
def readable(trace: str):
    """Yields a path the engine can read as often as it needs (it reads a trace up to four times: sniffing, the
    device layout, the capacity and the run), after `check_trace` (a mistyped workload is named as one, not as
    a missing file). A stream (``-``, a pipe, a FIFO) delivers its bytes once, so it is
    first copied, as it is (compressed or not), to a temporary file that is removed afterwards; its errors name
    the trace as given (``<stdin>`` for ``-``), not the copy. Waiting for the writer can be interrupted with
    Ctrl-C. Anything else is yielded unchanged."""
    from . import _core

    trace = check_spec(trace)
    if not is_stream(trace):
        check_trace(trace)
        yield trace
        return
    import tempfile

    label = "<stdin>" if trace == "-" else trace
    fd, spool = tempfile.mkstemp(prefix="ftlsim-trace-")
    try:
        try:
            with os.fdopen(fd, "wb") as out:
                # Python's open and read raise KeyboardInterrupt on Ctrl-C while they wait (PEP 475), where the
                # engine's reader would retry the system call and hang.
                with contextlib.nullcontext(_stdin()) if trace == "-" else open(trace, "rb") as source:
                    # A buffered read is short only at the end of input; a terminal's end (Ctrl-D) is said
                    # once, so it is not asked for twice.
                    while len(chunk := source.read(_SPOOL_CHUNK)) == _SPOOL_CHUNK:
                        out.write(chunk)
                    out.write(chunk)
        except OSError as e:
            raise _core.FtlsimError(f"cannot copy trace {label} to {spool}: {e.strerror}; a stream is read once "
                                    "into a temporary file (set TMPDIR to a folder with room for it)") from None
        try:
            yield spool
        except _core.FtlsimError as e:
            # Its fields kept, so that the command line spells them its own way (--capacity 2MiB, --wrap), as it
            # does for a trace file: the copy's message alone came out in Python's (capacity='2MiB', wrap=True).
            named = type(e)(str(e).replace(spool, label))
            named.__dict__.update(e.__dict__)
            for field in ("context", "engine_message"):
                if isinstance(named.__dict__.get(field), str):
                    named.__dict__[field] = named.__dict__[field].replace(spool, label)
            raise named from None
    finally:
        with contextlib.suppress(OSError):
            os.remove(spool)


def presets() -> list[dict]:
    """Every device preset: geometry and timing from the papers."""
    return registry()["presets"]


def workloads() -> list[dict]:
    """Every built-in workload, with its parameters (name, default, meaning)."""
    return registry()["workloads"]


def formats() -> list[dict]:
    """Every trace format the readers know."""
    return registry()["formats"]


def info(trace: str, format: str = "auto", block_bytes: int = 16384, page_bytes: int = 512, progress=None,
         **options) -> dict:
    """Statistics of a trace: its format (the sniffed one), the devices it names with their requests,
    requests, read/write mix, bytes, footprint, highest address, write concentration (share of writes to the
    hottest 0.2% / 1% of pages and blocks) and ``distributions``: log2 histograms (bin 0 counts zeros, bin k
    the values in [2^(k-1), 2^k)) of request size in bytes, inter-arrival time in us, reuse distance in
    requests and writes per written page. Memory and time grow with the requests, not the addresses.
    `progress(done, total)` is called every 16,384 requests; returning False cancels. Trace options
    (``device``, ``devices``, ``writes_only``, ``skip_bad_lines``, ``compact``, ...) are keyword arguments;
    with ``devices="concat"`` (or a list of devices to keep) each device gets ``range_start`` and
    ``range_bytes``: its range in the concatenated address space, rounded up to `block_bytes`."""

    from . import _core

    opts = {"format": format, **{k: v for k, v in options.items() if v is not None}}
    with readable(trace) as path:
        return _core.trace_info(path, opts, block_bytes, page_bytes, progress)


def plot_info(stats: dict, path: str | None = None, title: str = ""):
    """Draws the four distributions of :func:`info` (request size, inter-arrival time, reuse distance, write
    popularity) as log2 histograms, with axes in human units (bytes in KiB/MiB, times in µs/ms/s, counts in
    k/M); saves to `path` when given (atomically). Returns the matplotlib figure."""
    from matplotlib.figure import Figure

    from matplotlib.ticker import FuncFormatter, NullFormatter

    from .plot import human_count, log_ticks

    panels = [
        ("request_bytes", "request size", "requests", "bytes"),
        ("inter_arrival_us", "time between requests", "requests", "us"),
        ("reuse_distance_requests", "reuse distance (requests since the last use of a page)", "re-references",
         "count"),
        ("page_writes", "writes per written page", "pages", "count"),
    ]
    fig = Figure(figsize=(11, 7))
    axes = fig.subplots(2, 2)
    for ax, (key, xlabel, ylabel, kind) in zip(axes.flat, panels):
        counts = stats["distributions"][key]
        # Bin k holds [2^(k-1), 2^k): drawn from its lower bound; bin 0 (zeros) at 0 on a symlog axis.
        lows = [0] + [2 ** (k - 1) for k in range(1, len(counts))]
        widths = [1] + [2 ** (k - 1) for k in range(1, len(counts))]
        ax.bar(lows, counts, width=widths, align="edge", edgecolor="black", linewidth=0.4)
        ax.set_xscale("symlog", base=2, linthresh=1)
        # The axis from 0 where the first bin holds values, else from the first bin that does: no request is
        # under a sector, and an axis from 0 left an empty third with ticks at 0 and 32 B.
        first = next((k for k, n in enumerate(counts) if n), 0)
        low = lows[first] if first > 1 else 0
        log_ticks(ax, 2 ** max(len(counts) - 1, 0), kind, low=low)
        if low:
            ax.set_xlim(low / 2 ** 0.5, (lows[-1] + widths[-1]) * 2 ** 0.5)
        if any(counts):
            # Counts from 1, in words (1, 10, 1k): a single count of 1 ran the axis down to 10^-1.
            ax.set_yscale("log")
            ax.set_ylim(0.7, max(counts) * 1.6)
            ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: human_count(v) if v >= 1 else ""))
            ax.yaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
        if key == "inter_arrival_us" and len(counts) == 1:
            ax.set_title("no arrival times: every gap is 0", fontsize="medium")
    fig.suptitle(f"{title} ({stats['format']}, {stats['requests']:,} requests)".strip())
    fig.tight_layout()
    if path is not None:
        from .output import save_figure

        save_figure(fig, path, dpi=120)
    return fig


#: The formats `generate` writes to standard output, by the extension of the file it writes first.
STDOUT_FORMATS = {"csv": ".csv", "ssdsim": ".trace", "blkparse": ".blkparse"}


def generate(trace: str, output: str, preset: str | None = None, capacity: str | int | None = None,
             format: str = "auto", output_format: str | None = None, **options) -> int:
    """Writes `trace` (a built-in workload such as ``"fat-camera:seed=1"``, or a trace file) to `output` in the
    format its extension names: ``.csv`` (native ``op,offset,length,tag,time_us``: tags and arrival times
    kept), ``.trace`` / ``.ascii`` (SSDsim / MQSim ASCII), ``.blkparse`` (blkparse-like text); ``.gz`` on top
    compresses. Each request keeps its device where the format has a device column (SSDsim ASCII, blkparse).
    An unknown extension, an output that is the input, or a request the format cannot hold (a trim in SSDsim
    ASCII, bytes off the 512 B grid, a second device in CSV) is an error, and no file is left half-written.
    `preset`, `capacity` and device overrides size the device a workload spreads over. Returns the number of
    requests written; a RuntimeWarning says how many lost their tag to a format without a tag column. `output`
    ``-`` is standard output, in `output_format` (``csv``, the default, ``ssdsim`` or ``blkparse``), which a
    file's extension names instead."""

    from . import _core
    from ._registry import check_choice, invalid, make_config
    from .output import is_stdout

    if output_format is not None:
        output_format = check_choice("output_format", output_format, tuple(STDOUT_FORMATS))
        if not is_stdout(output):
            raise invalid("output_format", output_format, "names the format of standard output only",
                          f"output_format={output_format!r} is for output '-' (standard output); the file "
                          f"{output}'s extension names its format")

    cfg = make_config("page", preset, capacity, "none", format, options)
    # What a run does with the requests (wrap them, time them, cache them, cut the power) is not the trace's:
    # a trace is written as read. Taken and ignored, `wrap=true` wrote the addresses unwrapped.
    run_options = sorted(k for k in cfg if k not in ("ftl", "params", "device", "trace", "precondition",
                                                      "capacity", "preset"))
    if run_options:
        key = run_options[0]
        raise invalid(key, cfg[key], "is a run option",
                      f"{', '.join(run_options)}: run options change how a run serves the requests, not the "
                      f"requests; generate writes them as read and takes device and trace options only")
    sizes = [name for name, given in (("capacity", capacity), ("preset", preset)) if given is not None]
    sizes += sorted(cfg["device"])
    if sizes and not is_workload(trace):
        key = sizes[0]
        raise invalid(key, capacity if key == "capacity" else preset if key == "preset" else cfg["device"][key],
                      "sizes a built-in workload only",
                      f"{', '.join(sizes)}: the device sizes a built-in workload (the space it spreads over); a "
                      f"trace file is written as read, whatever the device")
    if cfg["params"]:
        # A scheme's parameter (or a misspelling): a generated trace depends on the device alone.
        key, *_ = unknown = sorted(cfg["params"])
        raise invalid(key, cfg["params"][key], "must be a device or trace option",
                      f"generate takes device and trace options (ftlsim list), not {', '.join(unknown)}: a "
                      f"generated trace does not depend on a scheme")
    from .output import check_output

    # A missing directory was "cannot read trace OUT": said of the output, before the input is read.
    if is_stdout(output):
        import shutil
        import tempfile

        # The engine writes a file (renamed into place when whole); standard output gets its bytes after.
        with tempfile.TemporaryDirectory() as scratch, readable(trace) as path:
            written = os.path.join(scratch, "trace" + STDOUT_FORMATS[output_format or "csv"])
            n, untagged = _core.generate(path, written, cfg)
            with open(written, "rb") as f:
                sys.stdout.flush()
                shutil.copyfileobj(f, sys.stdout.buffer)
                sys.stdout.buffer.flush()
    else:
        check_output(output, "output", inputs=(str(trace),))
        with readable(trace) as path:
            n, untagged = _core.generate(path, str(output), cfg)
    if untagged:  # a `metadata` NVRAM policy reads the tags: lost without a word, it ran differently
        import warnings

        written_as = (output_format or "csv") if is_stdout(output) else os.path.basename(str(output))
        warnings.warn(TagsLost(untagged, written_as), stacklevel=2)
    return n


class TagsLost(RuntimeWarning):
    """Requests tagged data or metadata that `generate` wrote to a format without a tag column: an NVRAM cache
    with ``nvram_policy='metadata'`` would run differently on the file. Its message is spelled by `spell`
    (Python's keywords; the command line passes its options)."""

    def __init__(self, requests: int, written_as: str, spell: Spelling = keyword):
        self.requests, self.written_as = requests, written_as
        super().__init__(self.text(spell))

    def text(self, spell: Spelling) -> str:
        lost = "its tag" if self.requests == 1 else "their tags"
        return f"{count_of(self.requests, 'request')} tagged data or metadata lost {lost}: {self.written_as} " \
               f"has no tag column (write .csv to keep them; {spell('nvram_policy', 'metadata')} reads them)"


def write_refs(trace: str, format: str = "auto", block_bytes: int = 16384, page_bytes: int = 512,
               max_points: int = 200_000, **options) -> dict:
    """Writes per logical block and a sampled timeline of which block each write hits (for plot-refs)."""

    from . import _core

    opts = {"format": format, **{k: v for k, v in options.items() if v is not None}}
    with readable(trace) as path:
        return _core.write_refs(path, opts, block_bytes, page_bytes, max_points)
