"""Output files that are never lost or half written (issue 15 item 4): checked for writability before a run
starts, written to a temporary file in the same directory and renamed into place."""

from __future__ import annotations

import contextlib
import os

from . import _core


def check_output(path, what: str = "output", inputs: tuple = ()) -> str:
    """Refuses, before anything runs, an output path that is empty, is one of the `inputs`, lies in a missing
    directory or cannot be written there; returns it as a string."""
    path = os.fspath(path)
    if not path:
        raise _core.FtlsimError(f"{what} path is empty; give a file name")
    for src in inputs:
        if src and os.path.exists(src) and os.path.exists(path) and os.path.samefile(src, path):
            raise _core.FtlsimError(f"{what} {path} is the input trace {src}; writing it would destroy the "
                                    "input: give another file name")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise _core.FtlsimError(f"{what} {path}: directory {folder} does not exist; create it or give another path")
    if os.path.isdir(path):
        raise _core.FtlsimError(f"{what} {path} is a directory; give a file name")
    if os.path.exists(path) and not _is_regular(path):
        _probe_device(path, what)
    elif not os.access(folder, os.W_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
        raise _core.FtlsimError(f"{what} {path} is not writable (permission denied); give another path")
    return path


def _is_regular(path: str) -> bool:
    import stat

    return stat.S_ISREG(os.stat(path).st_mode)


def _probe_device(path: str, what: str) -> None:
    """A device or pipe as output (``/dev/null``, ``/dev/full``): try a write now, not after the run."""
    try:
        with open(path, "wb", buffering=0) as f:
            f.write(b"\n")
    except OSError as e:
        raise _core.FtlsimError(f"{what} {path} cannot be written: {e.strerror}; give another path") from None


@contextlib.contextmanager
def atomic_path(path):
    """Yields a temporary path next to `path`; renames it onto `path` when the block succeeds, removes it
    otherwise. A device or pipe (``/dev/stdout``) is written directly."""
    import tempfile

    path = os.fspath(path)
    if os.path.exists(path) and not _is_regular(path):
        yield path
        return
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(path)), prefix=".ftlsim-", suffix=os.path.basename(path))
    os.close(fd)
    try:
        yield tmp
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        raise


def write_text(path, text: str) -> None:
    """Writes `text` to `path` atomically; an OSError becomes an FtlsimError that names the path."""
    try:
        with atomic_path(path) as tmp, open(tmp, "w") as f:
            f.write(text)
    except OSError as e:
        raise _core.FtlsimError(f"cannot write {path}: {e.strerror}") from None
