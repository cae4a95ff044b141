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
import os
import shutil
import stat
import sys

from . import _core

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
        raise _core.FtlsimError(f"{what} {path}: directory {folder} does not exist; create it or give another path")
    if os.path.isdir(target):
        raise _core.FtlsimError(f"{what} {path} is a directory; give a file name")
    if not os.access(folder, os.W_OK) or (os.path.exists(target) and not os.access(target, os.W_OK)):
        raise _core.FtlsimError(f"{what} {path} is not writable (permission denied); give another path")
    return path


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
    import secrets

    while True:
        tmp = os.path.join(folder, f".{name}.ftlsim-{secrets.token_hex(4)}")
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
