"""Output files that are never lost, half written or clobbered: checked for writability before a run starts,
then written where they point.

- A regular file (new or old) is written to a temporary file beside it and renamed into place, so a failure
  leaves the old file as it was. A new file gets the mode the umask gives; a replaced file keeps its mode.
- A symlink is written through: the file it names is replaced and the link stays a link.
- ``-`` is standard output; ``/dev/stdout``, ``/dev/stderr`` and ``/dev/fd/N`` are the process's own streams,
  and a character device or FIFO is written as it is, never replaced. Their content is still made in a
  temporary file first, so an output that fails half way writes nothing; a stream is then appended to, so a
  ``--csv /dev/stdout`` redirected to a file follows the table printed before it instead of truncating it.
"""

from __future__ import annotations

import contextlib
import math
import os
import shutil
import stat
import sys

from rich.console import Console

from . import _core
from ._registry import scalar
from .report import ARRAY_DIMENSIONS, ARRAY_SETTINGS, array_dies, as_run_key
from .text import count_of

#: Paths that name one of the process's open file descriptors: written by appending, never replaced.
_FD_PATHS = ("/dev/stdout", "/dev/stderr", "/dev/fd/", "/proc/self/fd/")


def _is_stream(path: str) -> bool:
    """True for ``-``, a path naming one of the process's file descriptors, or (after its symlinks) a file that
    is not regular: a character device or a FIFO."""
    if path == "-" or path.startswith(_FD_PATHS):
        return True
    try:
        return not stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


def check_output(path, what: str = "output", inputs: tuple = ()) -> str:
    """Refuses, before anything runs, an output path that is empty, is one of the `inputs`, lies in a missing
    directory or cannot be written there; returns it as a string."""
    path = os.fspath(path)
    if not path:
        raise _core.FtlsimError(f"{what} path is empty; give a file name, or - for standard output")
    if path == "-":
        return path
    check_named_format(path, what)
    for src in inputs:
        if src and os.path.exists(src) and os.path.exists(path) and os.path.samefile(src, path):
            raise _core.FtlsimError(f"{what} {path} is the input trace {src}; writing it would destroy the "
                                    "input: give another file name")
    if _is_stream(path):
        _probe_stream(path, what)
        return path
    target = os.path.realpath(path)
    folder = os.path.dirname(target)
    if not os.path.isdir(folder):
        raise _core.FtlsimError(f"{what} {path}: {no_folder(folder)}")
    if os.path.isdir(target):
        raise _core.FtlsimError(f"{what} {path} is a directory; give a file name")
    if not os.access(folder, os.W_OK) or (os.path.exists(target) and not os.access(target, os.W_OK)):
        raise _core.FtlsimError(f"{what} {path} is not writable (permission denied); give another path")
    return path


def no_folder(folder: str) -> str:
    """Why a file cannot go in `folder`, which is not a directory, and the fix: it does not exist, or a file
    stands where it (or a directory above it) would be."""
    above = folder
    while above and not os.path.exists(above) and os.path.dirname(above) != above:
        above = os.path.dirname(above)
    if os.path.exists(above) and not os.path.isdir(above):
        return f"{above} is a file, not a directory; give a path in a directory"
    return f"directory {folder} does not exist; create it or give another path"


#: The format each data output writes, and the names of files of other formats.
DATA_OUTPUTS = {"--json": "json", "--csv": "csv"}
OTHER_FORMATS = (".json", ".csv", ".png", ".svg", ".pdf", ".parquet")


def check_named_format(path: str, what: str) -> None:
    """A data output (`--json`, `--csv`) whose file name says another format (``--csv out.json``) is refused:
    the file would hold text its name misreports. Other names (``.txt``, none) are taken as given."""
    writes = DATA_OUTPUTS.get(what)
    suffix = os.path.splitext(path)[1].lower()
    if writes is None or suffix not in OTHER_FORMATS or suffix == f".{writes}":
        return
    raise _core.FtlsimError(f"{what} {path}: {what} writes {writes.upper()}, but the name says "
                            f"{suffix[1:].upper()}; give a .{writes} name")


def _probe_stream(path: str, what: str) -> None:
    """A stream as output: a character device (``/dev/full``) is tried with an empty write now, not after the
    run; a FIFO is only checked for permission (opening it would wait for a reader, and nothing may be written
    into it early)."""
    try:
        if stat.S_ISFIFO(os.stat(path).st_mode):
            if not os.access(path, os.W_OK):
                raise PermissionError(13, "Permission denied")
            return
        with open(path, "ab", buffering=0) as f:
            f.write(b"")
    except OSError as e:
        raise _core.FtlsimError(f"{what} {path} cannot be written: {e.strerror}; give another path") from None


def _new_file(folder: str, name: str) -> str:
    """Creates an empty file with a fresh name in `folder`, with the mode the umask gives (0666 less the umask,
    as any program's output), and returns its path."""
    while True:
        tmp = os.path.join(folder, f".{name}.ftlsim-{os.urandom(4).hex()}")
        try:
            os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
            return tmp
        except FileExistsError:
            continue


@contextlib.contextmanager
def atomic_path(path):
    """Yields a temporary path to write `path`'s content to; when the block succeeds the content goes where
    `path` points (see the module's doc: renamed onto a regular file or a symlink's target, appended to a
    stream, written to standard output for ``-``), and the temporary file is removed either way."""
    import tempfile

    path = os.fspath(path)
    stream = _is_stream(path)
    target = path if stream else os.path.realpath(path)
    folder = tempfile.gettempdir() if stream else os.path.dirname(target)
    tmp = _new_file(folder, os.path.basename(target) or "output")
    try:
        yield tmp
        if stream:
            _append(tmp, path)
        else:
            with contextlib.suppress(FileNotFoundError):
                os.chmod(tmp, stat.S_IMODE(os.stat(target).st_mode))
            os.replace(tmp, target)
    finally:
        with contextlib.suppress(OSError):
            os.remove(tmp)


WHOLE_UNITS = ("count", "pages", "bytes")


def write_csv(df, path) -> None:
    """`df` as CSV at `path` (atomically, as every output), without its index. A count, page or byte column
    with gaps (``ram.page_map`` exists for page, not for fast) is float in pandas and would be written
    ``65536.0``: such a column is written as whole numbers, with the gaps empty."""
    from .report import key_unit

    whole = {c: "Int64" for c in df.columns
             if df[c].dtype.kind == "f" and key_unit(c) in WHOLE_UNITS
             and df[c].dropna().map(float.is_integer).all()}
    with atomic_path(path) as tmp:
        df.astype(whole).to_csv(tmp, index=False)


def _append(source: str, path: str) -> None:
    """Copies the file `source` to the stream `path` (``-`` is standard output), after whatever was printed
    there already."""
    with open(source, "rb") as src:
        if path == "-":
            sys.stdout.flush()
            shutil.copyfileobj(src, sys.stdout.buffer)
            sys.stdout.buffer.flush()
            return
        if path.startswith(_FD_PATHS):
            sys.stdout.flush()
            sys.stderr.flush()
        with open(path, "ab") as out:
            shutil.copyfileobj(src, out)


def image_format(path) -> str:
    """The image format an output path names by its extension; PNG for a stream without one (``-``,
    ``/dev/stdout``)."""
    path = os.fspath(path)
    ext = os.path.splitext(path)[1].lstrip(".").lower()
    return ext or ("png" if _is_stream(path) else "")


def save_figure(fig, path, dpi: int = 120) -> None:
    """Saves a matplotlib figure to `path` as :func:`atomic_path` does, in the format :func:`image_format`
    names; an OSError becomes an FtlsimError that names the path."""
    try:
        with atomic_path(path) as tmp:
            fig.savefig(tmp, dpi=dpi, format=image_format(path))
    except OSError as e:
        raise _core.FtlsimError(f"cannot write {path}: {e.strerror}") from None


def write_text(path, text: str) -> None:
    """Writes `text` to `path` as :func:`atomic_path` does; an OSError becomes an FtlsimError that names the
    path."""
    try:
        with atomic_path(path) as tmp, open(tmp, "w") as f:
            f.write(text)
    except OSError as e:
        raise _core.FtlsimError(f"cannot write {path}: {e.strerror}") from None


# Tables: what `run`, `compare` and `sweep` print. A number is never cut: a table that does not fit the width
# leaves out its least informative figure columns and says which; text (trace names, keys) may fold.

# Figures `compare` and `sweep` show by default, most informative first: the two the FAST paper plots
# (Fig. 10), then the multi-chip array model's response times and throughput where it ran (absent, and so left
# out, otherwise), then merges by kind, then the raw counts behind write amplification, then RAM.
GRID_FIGURES = ["flash.erases", "time_us.total", "response_us.read.p99", "response_us.write.p99", "throughput.iops",
                "merges.switch", "merges.partial", "merges.full", "merges.dead", "merges.fold", "flash.page_writes",
                "flash.spare_reads", "write_amplification", "ram.total_bytes"]


def grouped_digits(text: str) -> str:
    """`text` with each whole number of four digits or more grouped in thousands (``71827456 physical pages``
    reads ``71,827,456 physical pages``); decimals and numbers already grouped are left as they are."""
    import re

    return re.sub(r"(?<![\d.,])\d{4,}(?![\d.,])", lambda m: f"{int(m.group()):,}", text)


def fmt(value) -> str:
    value = scalar(value)  # a numpy scalar, as pandas gives a cell
    if isinstance(value, bool):
        return "true" if value else "false"  # as -p and JSON spell it
    if value is None:
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if value != value:
            return "-"
        if 0 < abs(value) < 0.001:
            # Three significant digits, not 0.000: a figure is never cut to nothing (a week-long trace's
            # die utilization, a throughput in MB/s).
            return f"{value:.3g}"
        if 0 < abs(value) < 0.1:
            # Three significant digits too, not three decimals (0.001773 IOPS read 0.002).
            return f"{value:.{2 - math.floor(math.log10(abs(value)))}f}"
        return f"{value:,.3f}" if abs(value) < 1000 else f"{value:,.0f}"
    return str(value)


def table_width(stderr: bool = False) -> int | None:
    """The width tables must fit: ``COLUMNS`` when set, else the terminal's; None when stdout (`stderr`: stderr)
    is not a terminal (a file or pipe has no width: tables there are as wide as their numbers need)."""
    import shutil
    import sys

    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    if (sys.stderr if stderr else sys.stdout).isatty():
        return shutil.get_terminal_size().columns
    return None


class ReaderGoneConsole(Console):
    """A console whose reader may leave (``ftlsim run ... --json r.json | head -1``): what is left to print goes
    nowhere and the command goes on, so that its files are still written; rich's own console exits 1 there, a
    run's failure, with the files unwritten."""

    def on_broken_pipe(self) -> None:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, self.file.fileno())


def print_table(table, width: int | None = None, title: str | None = None, stderr: bool = False) -> None:
    """Prints a rich table on stdout (`stderr`: on stderr) at `width` (None: as wide as it needs), after its
    `title` line (a table's own title would be padded with spaces to the table's width)."""
    console = ReaderGoneConsole(width=width or 10_000, highlight=False, stderr=stderr)
    if title:
        console.print(title, markup=False, soft_wrap=width is None)
    console.print(table)


def is_stdout(path) -> bool:
    """Whether an output path is standard output (``-``, ``/dev/stdout``): the data written there is the
    command's output, and its table goes to stderr, so that a pipe reads the JSON or CSV alone."""
    return path is not None and str(path) in ("-", "/dev/stdout", "/dev/fd/1")


def short_names(traces) -> dict:
    """Each trace's shortest distinguishing name: a path's file name, with as many parent directories as it
    takes to tell it from the others (``../shared/traces/a.csv`` -> ``a.csv``); a built-in workload without
    the ``key=value`` settings every workload given shares (``uniform:writes=20000,seed=1`` and
    ``hotcold:writes=20000,seed=1`` -> ``uniform`` and ``hotcold``)."""
    traces = list(dict.fromkeys(str(t) for t in traces))
    workloads = {t: _workload_parts(t) for t in traces if _workload_parts(t)}
    shared = set.intersection(*(set(p[1]) for p in workloads.values())) if len(workloads) > 1 else set()
    parts = {t: os.path.normpath(t).split(os.sep) for t in traces if t not in workloads}
    out = {}
    for t in traces:
        if t in workloads:
            name, settings = workloads[t]
            own = [kv for kv in settings if kv not in shared]
            out[t] = f"{name}:{','.join(own)}" if own else name
            continue
        for depth in range(1, len(parts[t]) + 1):
            name = os.sep.join(parts[t][-depth:])
            if sum(os.sep.join(parts[o][-depth:]) == name for o in parts) == 1:
                break
        out[t] = name
    if len(set(out.values())) < len(out):  # a workload named like a file: keep everything as given
        return {t: t for t in traces}
    return out


def _workload_parts(trace: str):
    """(name, [key=value, ...]) of a built-in workload spec ``name:key=value,...``; None for a path."""
    if os.sep in trace or ":" not in trace:
        return None
    name, _, settings = trace.partition(":")
    return name, [kv for kv in settings.split(",") if kv]


def select_metrics(patterns, available) -> list:
    """The keys of `available` that match the glob `patterns` (``merges.*``, ``time_us.total``): pattern by
    pattern, and a pattern's keys shallow before deep (``merges.full`` before ``merges.full.erases``), then in
    the report's order; a pattern that matches nothing is an error naming the nearest key."""
    import difflib
    import fnmatch

    from .report import key_rank

    available = list(available)
    chosen = []
    for pattern in patterns:
        hits = fnmatch.filter(available, pattern)
        if not hits:
            # A glob is compared with the globs of each key's first part (`merges.*`), a name with the keys.
            glob = any(c in pattern for c in "*?[")
            candidates = sorted({k.split(".")[0] + ".*" for k in available}) if glob else available
            near = difflib.get_close_matches(pattern, candidates, n=1, cutoff=0.5)
            hint = f" (did you mean `{near[0]}`?)" if near else ""
            if pattern.split(".")[0] in ARRAY_SECTIONS and not any(k.split(".")[0] in ARRAY_SECTIONS
                                                                   for k in available):
                from ._registry import NO_RESPONSE_TIMES

                raise _core.FtlsimError(f"--metrics `{pattern}` matches no figure: {NO_RESPONSE_TIMES}")
            raise _core.FtlsimError(f"--metrics `{pattern}` matches no figure{hint}; give a key or a glob such "
                                    "as `merges.*` (`ftlsim.report_schema()` lists every key)")
        hits.sort(key=lambda k: (k.count("."), key_rank(k)))
        chosen += [k for k in hits if k not in chosen]
    return chosen


#: The report's sections only the multi-chip array model fills (response times under queueing).
ARRAY_SECTIONS = {"response_us", "throughput", "utilization", "queue", "array"}


def parse_metrics(text: str | None) -> list | None:
    """``--metrics "merges.*,flash.erases"`` as a list of globs, each checked against the report schema before
    anything runs; None when not given."""
    import fnmatch
    import re

    from .report import schema_rows

    if text is None:
        return None
    patterns = [p.strip() for p in text.split(",") if p.strip()]
    if not patterns:
        raise _core.FtlsimError("--metrics is empty; give keys or globs, e.g. --metrics 'merges.*,flash.erases'")
    # A schema key's ``<name>`` part matches any name (schemes declare their own keys whole on their rows).
    keys = [re.sub(r"<[^>]*>", "*", k["key"]) for k in schema_rows() if not k["key"].startswith("config.")]
    for pattern in patterns:
        exact = not any(c in pattern for c in "*?[")
        if not any(fnmatch.fnmatchcase(k, pattern) or (exact and fnmatch.fnmatchcase(pattern, k)) for k in keys):
            select_metrics([pattern], keys)  # raises, naming the nearest key
    return patterns


def wrap_pairs(label: str, pairs, width: int | None) -> list:
    """``label k=v k=v ...`` as lines no wider than `width`, broken only between pairs; continuation lines
    are indented under the first pair."""
    return wrap_words(label, [f"{key}={value}" for key, value in pairs], width)


def wrap_words(label: str, words, width: int | None) -> list:
    """``label word word ...`` as lines no wider than `width`, broken only between words (a word may hold
    spaces); continuation lines are indented under the first word."""
    indent = " " * (len(label) + 1)
    lines = [label]
    for word in words:
        if width is None or lines[-1] == label or len(lines[-1]) + 1 + len(word) <= width:
            lines[-1] += " " + word
        else:
            lines.append(indent + word)
    return lines


def every_row(pairs: list, width: int | None) -> str:
    """A grid's ``every row: k=v, k=v`` line, broken between pairs only (``nvram=128.0 KiB`` stays whole) into
    lines no wider than `width`."""
    words = [f"{pair}," for pair in pairs[:-1]] + pairs[-1:]
    return "\n".join(wrap_words("every row:", words, width))


def human_bytes(n) -> str:
    """A size in binary units, one decimal: ``64.0 MiB``, ``512.0 KiB``, ``3.6 TiB``."""
    n = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:,.0f} B" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1024
    return f"{n:,.1f} TiB"


def exact_bytes(n: int) -> str:
    """`human_bytes`, and the bytes beside where its one decimal is not the size (``1.0 MiB (1,081,344 B)``)."""
    text = human_bytes(n)
    number, unit = text.split(" ")
    power = ("B", "KiB", "MiB", "GiB", "TiB").index(unit)
    return text if float(number.replace(",", "")) * 1024**power == n else f"{text} ({n:,} B)"


def run_header(report, width: int | None) -> str:
    """The lines above `ftlsim run`'s table: the scheme and its parameters as ``k=v`` pairs, the device and
    the trace."""
    import json

    params = json.loads(report.get("config.params") or "{}") or {}
    scheme = report["config.scheme"]

    def ran(key, given):
        """The value that ran: a scheme that fits a parameter to a small device reports it as run
        (`tiny.log_blocks`: 32 of the 393 given on 1 MiB)."""
        used = report.get(as_run_key(scheme, key))
        if isinstance(given, (int, float)) and not isinstance(given, bool) and isinstance(used, (int, float)) \
                and used != given:
            return f"{param_text(used)} ({param_text(given)} given)"
        return json.dumps(given) if isinstance(given, str) and (" " in given or not given) else param_text(given)

    # An optional parameter left unset (no profile) ran as nothing: it is not echoed.
    pairs = [(k, ran(k, v)) for k, v in params.items() if v is not None]
    lines = wrap_pairs(f"scheme: {scheme}", pairs, width)
    from ._registry import registry

    preset = next((p for p in registry()["presets"] if p["name"] == report["config.preset"]), None)
    # On an array the scheme's block is a stripe of one physical block a plane (array/mod.rs): the physical
    # block is what the preset and the user set.
    geometry = (report["config.page_bytes"],
                report.get("array.pages_per_block") or report["config.pages_per_block"])
    device = report["config.preset"]
    preset_timing = (preset or {}).get("timing", {})
    timings_overridden = any(report.get(f"config.{k}") not in (None, v) for k, v in preset_timing.items())
    geometry_overridden = preset is not None and (preset["page_bytes"], preset["pages_per_block"]) != geometry
    if timings_overridden:
        device += f" ({'geometry and ' if geometry_overridden else ''}timings overridden)"
    elif geometry_overridden:
        # A page size or block length other than the preset's keeps the preset's timings per page: say so.
        device += " timings (geometry overridden)"
    rounded = rounded_capacity(report)
    lines.append(f"device: {device}, {exact_bytes(report['config.capacity_bytes'])}, {geometry[0]:,} B pages x "
                 f"{geometry[1]:,}")
    if rounded:
        lines.append(f"capacity: {rounded}")
    raised = raised_spare(report, params)
    if raised:
        lines += wrap_words("spare:", raised.split(" "), width)
    if timings_overridden:  # every time that ran, the given ones and the preset's others
        lines += wrap_pairs("timings:", [(k, param_text(report[f"config.{k}"])) for k in preset_timing], width)
    if report.get("nvram.bytes"):  # a write cache in front of the scheme changes every figure: said
        config = json.loads(report.get("config.resolved") or "{}").get("config", {})
        given = [f"{key} {config[f'nvram_{key}']}" for key in ("regions", "read_us", "write_us")
                 if config.get(f"nvram_{key}") is not None]
        lines.append(", ".join([f"nvram: {nvram_size(report)}", f"policy {report['nvram.policy']}",
                                f"{report['nvram.slots']:,} page slots", *given]))
    shape = array_shape(report)
    if shape:  # broken between its comma-separated parts where it is wider than the table
        parts = shape.split(", ")
        lines += wrap_words("array:", [p + "," for p in parts[:-1]] + parts[-1:], width)
    settings = run_settings(report)
    if settings:  # what ran other than the defaults, that changes the figures: precondition, cuts, compact, ...
        lines += wrap_pairs("run:", settings, width)
    lines.append(f"trace: {report['config.trace']}")
    return "\n".join(lines)


# Options `run_settings` leaves to the other header lines (scheme, device, nvram, array, trace) or that the
# run's figures do not depend on (the sniffed format; the cuts' seed, said with the cuts).
SAID_ELSEWHERE = {"ftl", "params", "preset", "capacity", "trace", "format", "queue_depth", "time_scale",
                  "nvram", "nvram_policy", "nvram_regions", "nvram_read_us", "nvram_write_us", "power_cut_seed"}
# Device overrides the device, timings and array lines say: the geometry, the array times (every one that ran
# is listed once one differs from the preset's) and the array's shape.
DEVICE_SAID_ELSEWHERE = {"page_bytes", "pages_per_block", "read_us", "program_us", "erase_us", "spare_read_us",
                         "spare_program_us", "channels", "chips_per_channel", "dies_per_chip", "planes_per_die",
                         "placement"}


def run_settings(report) -> list[tuple[str, str]]:
    """The run, trace and device options a report ran with other than their defaults, as (key, value) pairs, from
    its ``config.resolved``: the settings that change its figures (``precondition=full``, ``power_cuts=20``,
    ``compact=true``, ``device=2``, ``extra_blocks=300``, ``sequential_program=true``, ``endurance=1000``) and
    that no other line of the header says."""
    import json

    from ._registry import registry

    config = json.loads(report.get("config.resolved") or "{}").get("config", {})
    defaults = registry()["defaults"]
    options = [(k, v, defaults.get(k)) for k, v in config.items() if not isinstance(v, dict)]
    options += [(k, v, defaults["trace"].get(k)) for k, v in (config.get("trace") or {}).items()]
    pairs = [(k, param_text(v)) for k, v, default in options if k not in SAID_ELSEWHERE and v != default]
    # The device overrides given (unset ones are null) that change the figures without showing in the geometry
    # or the times: sequential_program, spare_bytes, endurance, bad blocks, the channel's rate.
    pairs += [(k, param_text(v)) for k, v in (config.get("device") or {}).items()
              if v is not None and k not in DEVICE_SAID_ELSEWHERE]
    if config.get("power_cuts"):
        pairs.append(("power_cut_seed", param_text(config.get("power_cut_seed"))))
    return pairs


def nvram_size(report) -> str:
    """The NVRAM write cache's size as it ran: whole page slots, at most one a logical page of the device (a
    64 MiB NVRAM in front of a 1 MiB device holds 1 MiB), with the size given where that is more."""
    given = int(report["nvram.bytes"])
    held = int(report["nvram.slots"]) * int(report["config.page_bytes"])
    return human_bytes(given) if held >= given else f"{human_bytes(held)} of the {human_bytes(given)} given"


#: The NVRAM's settings `run` says in its nvram line, where given.
NVRAM_SETTINGS = ("nvram_regions", "nvram_read_us", "nvram_write_us")


def grid_settings(rows, swept: list[str]) -> list[str]:
    """What every row of a grid ran with that `run`'s header would say and no column does: the run settings
    other than their defaults (`run_settings`: ``precondition=full``, ``compact=true``), the array's settings
    given (``channels=2``, ``placement=per-die``), the NVRAM write cache (``nvram=64 KiB``, its policy and the
    regions and times given), the device (``preset=lee2007``), the geometry and times given in place of the
    preset's (``read_us=30.0``, ``pages_per_block=16``) and the capacity (``capacity=1.0 MiB``), as ``k=v``
    texts, for the grid's "every row" line."""
    import json

    per_row = []
    for _, row in rows.iterrows():
        pairs = run_settings(row)
        # The settings `run` says on lines of their own, which a grid had nowhere (a sweep file's channels=2,
        # placement="per-die", nvram_regions, read_us=30).
        config = json.loads(row.get("config.resolved") or "{}").get("config", {})
        device = config.get("device") or {}
        given = {**device, **config}
        pairs += [(k, param_text(given[k])) for k in ARRAY_SETTINGS if given.get(k) is not None]
        if row.get("nvram.bytes"):
            pairs += [("nvram", nvram_size(row)), ("nvram_policy", str(row["nvram.policy"]))]
            pairs += [(k, param_text(config[k])) for k in NVRAM_SETTINGS if config.get(k) is not None]
        pairs.append(("preset", str(row["config.preset"])))
        pairs += [(k, param_text(v)) for k, v in device.items()
                  if v is not None and k in DEVICE_SAID_ELSEWHERE and k not in ARRAY_SETTINGS]
        pairs.append(("capacity", human_bytes(row["config.capacity_bytes"])))
        per_row.append(pairs)
    if not per_row:
        return []
    return [f"{k}={v}" for k, v in per_row[0] if k not in swept and all((k, v) in other for other in per_row[1:])]


def raised_spare(report, params: dict) -> str:
    """Where the scheme ran with more spare blocks than its ``over_provisioning`` gives, the least it runs with
    (page on a device of 4 blocks: 0.07 gives 1, GC needs 3): what ran and what the fraction gave, for a line of
    its own; else nothing. Per die, each instance rounds its own share up."""
    import math

    op = params.get("over_provisioning")
    logical, extra = report.get("config.logical_blocks"), report.get("device.extra_blocks")
    if not isinstance(op, (int, float)) or not logical or extra is None:
        return ""
    parts = array_dies(report) if report.get("array.placement") == "per-die" else 1
    gives = math.ceil(logical // parts * op) * parts
    if extra <= gives:
        return ""
    return (f"{extra:,} extra blocks, {extra / logical:.0%} of the {logical:,} logical: the least "
            f"{report['config.scheme']} runs with (over_provisioning={param_text(op)} gives {gives:,})")


def rounded_capacity(report) -> str:
    """Where the capacity given was rounded up to whole scheme blocks (on mqsim-default's array a block is 256
    MiB, so --capacity 64MiB ran 256 MiB): what was given, for a line of its own; else nothing."""
    import json

    from . import _core

    given = json.loads(report.get("config.resolved") or "{}").get("config", {}).get("capacity")
    if given is None:
        return ""
    try:
        asked = _core.parse_size(str(given))
    except _core.FtlsimError:  # it ran, so it parsed; a report from another version may spell it otherwise
        return ""
    ran = report["config.capacity_bytes"]
    if asked == ran:
        return ""
    block = report["config.page_bytes"] * report["config.pages_per_block"]
    return f"{given} given, rounded up to whole blocks of {human_bytes(block)}"


def array_shape(row, placement: bool = True) -> str | None:
    """A run's multi-chip array as it ran: ``2 channels x 1 chip x 2 dies x 1 plane striped, queue depth 32,
    time scale 1`` (without ``striped`` or ``per-die`` unless `placement`); None when the array model was off
    (no array keys)."""
    values = [row.get(key) for key, _ in ARRAY_DIMENSIONS]
    if any(v is None or v != v for v in values):
        return None
    parts = [count_of(int(v), word) for v, (_, word) in zip(values, ARRAY_DIMENSIONS)]
    placed = f" {row.get('array.placement') or 'striped'}" if placement else ""
    return f"{' x '.join(parts)}{placed}, queue depth {int(row['array.queue_depth'])}, " \
           f"time scale {row['array.time_scale']:g}"


def param_text(value) -> str:
    """A parameter value as `-p key=value` takes it: ``false``, ``0.07``, ``greedy``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "none"
    return str(value)


def report_table(report, sections, metrics=None):
    """`ftlsim run`'s table: the figures of each (section, keys) of `sections` that are not zero; with
    `metrics` (globs), every key that matches, zero or not, under its section. Returns the table and the keys
    left out of it: those whose value is a list (a CDF, a histogram), which no cell holds uncut."""
    from rich.table import Table

    table = Table(show_header=False)
    table.add_column("figure", style="cyan", overflow="fold")
    table.add_column("value", justify="right", no_wrap=True)
    if metrics is not None:
        from .report import key_rank, key_section

        chosen: dict[str, list] = {}
        picked = select_metrics(metrics, [k for k in report if not k.startswith("config.")])
        for key in sorted(picked, key=key_rank):  # a vertical table reads in the report's order
            chosen.setdefault(key_section(key), []).append(key)
        sections = list(chosen.items())
    lists = []
    for section, keys in sections:
        rows = [(k, report.get(k)) for k in keys if k in report]
        if metrics is None:
            rows = [(k, v) for k, v in rows if v not in (0, None) or k in ("flash.erases", "host.write_requests")]
        lists += [k for k, v in rows if isinstance(v, (list, dict))]
        rows = [(k, v) for k, v in rows if not isinstance(v, (list, dict))]
        if not rows:
            continue
        table.add_row(f"[bold]{section}[/]", "")
        for key, value in rows:
            table.add_row(f"  {key}", fmt(value))
    return table, lists


def default_figures(df, candidates=GRID_FIGURES) -> list:
    """The figures of `candidates` worth a column: not zero in every row; those that differ between rows
    before those that do not (a constant column says less)."""
    present = [c for c in candidates if c in df and (df[c].fillna(0) != 0).any()]
    return sorted(present, key=lambda c: df[c].nunique(dropna=False) <= 1)


def grid_metrics(df, patterns) -> list:
    """The figure columns of a sweep's rows that `--metrics` globs pick."""
    columns = list(df.columns)
    figures = columns[columns.index("error") + 1:] if "error" in columns else columns  # the report's keys
    return select_metrics(patterns, [c for c in figures if not c.startswith("config.")])


TRACE_FOLD_WIDTH = 20


def _fit(ident: list, figures: list, head: dict, width: int | None) -> tuple[list, list, int]:
    """(figures shown, figures left out, width used) of a table of the `ident` columns and as many `figures`,
    in order, as fit `width`; a column takes its width plus 3 (padding and rule), the table 1 more."""
    used = 1 + sum(head[c] + 3 for c in ident)
    shown, left_out = [], []
    for col in figures:
        if width is None or used + head[col] + 3 <= width:
            shown.append(col)
            used += head[col] + 3
        else:
            left_out.append(col)
    return shown, left_out, used


def column_cells(column: str, values) -> list:
    """A grid's (or an experiment table's) column's cells. A count, page or byte figure or a parameter with gaps
    (a scheme without the parameter) is a float column in pandas: its whole numbers are shown whole. Any other
    figure keeps its decimals in every row (write amplification 1.000 beside 1.500, as `run` shows it). A column
    of mixed values (a failed point's value that did not parse) holds the gaps as None: "-", as NaN."""
    from .report import key_unit

    values = [scalar(v) for v in values]
    floats = [v for v in values if isinstance(v, float) and v == v]
    whole = key_unit(column) in (*WHOLE_UNITS, None) and all(v.is_integer() and abs(v) < 2**53 for v in floats)
    return ["-" if v is None else fmt(int(v)) if whole and v in floats else fmt(v) for v in values]


def header_lines(key: str, width: int) -> str:
    """A column header broken after ``.``, ``_`` and spaces into lines of at most `width` (or its longest
    part); a line break in `key` stays."""
    import re

    lines = []
    for level in key.split("\n"):
        line = ""
        for part in re.findall(r"[^._ ]+[._ ]?", level) or [level]:
            if line and len(line) + len(part.rstrip()) > width:
                lines.append(line.rstrip())
                line = part
            else:
                line += part
        lines.append(line.rstrip())
    return "\n".join(lines)


def header_width(key: str) -> int:
    import re

    return max(len(p.rstrip()) for p in re.findall(r"[^._ \n]+[._ ]?", key) or [key])


def grid_table(df, swept: list, figures: list, width: int | None):
    """`compare` and `sweep`'s table of done rows: trace (when several, by its shortest distinguishing name),
    scheme, the swept parameters, then as many of `figures` (most informative first) as fit `width`.
    Returns (table, the figures left out)."""
    from rich.table import Table

    done = df[df["status"] == "done"] if "status" in df else df
    ident = [c for c in ("trace", "ftl") if c in done and (c == "ftl" or done[c].nunique() > 1)] + list(swept)
    names = short_names(done["trace"]) if "trace" in ident else {}
    cells = {}
    for col in ident + list(figures):
        values = done[col] if col in done else []
        cells[col] = [names.get(str(v), str(v)) for v in values] if col == "trace" else column_cells(col, values)
    need = {c: max([len(x) for x in cells[c]] + [1]) for c in cells}
    head = {c: max(need[c], header_width(c)) for c in cells}
    shown, left_out, used = _fit(ident, figures, head, width)
    if left_out and "trace" in ident and head["trace"] > TRACE_FOLD_WIDTH:
        head["trace"] = TRACE_FOLD_WIDTH  # a long trace name folds rather than push figures out
        shown, left_out, used = _fit(ident, figures, head, width)
    # Room left over unbreaks headers, most informative column first.
    for col in [c for c in ident + shown if c != "trace"]:
        extra = max(len(col) - head[col], 0)
        if width is None or used + extra <= width:
            head[col] += extra
            used += extra
    table = Table()
    for col in ident + shown:
        numeric = col not in ("ftl", "trace")
        table.add_column(header_lines(col, head[col]), justify="right" if numeric else "left", no_wrap=numeric,
                         min_width=need[col] if numeric else None, max_width=None if numeric else head[col],
                         overflow="fold")
    for i in range(len(done)):
        table.add_row(*[cells[c][i] for c in ident + shown])
    return table, left_out
