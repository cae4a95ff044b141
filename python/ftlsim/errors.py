"""Engine errors in the words of the front end that shows them. The engine reports a parameter whose value is not
allowed as fields (`FtlsimError.problems`: key, value, expected, suggestion, and alternatives: other settings
that fix it; `context`: what the message says before them); the Python API spells a key as a keyword argument (``page_bytes=2048``), the command line as its
option (``-p page_bytes=2048``, ``--capacity 64MiB``)."""

from __future__ import annotations

from typing import Callable

from . import _core

Spelling = Callable[[str, str], str]


def keyword(key: str, value: str) -> str:
    """``key=value`` as a Python keyword argument: ``wrap=True``, ``log_blocks=8``, ``capacity='64MiB'``."""
    if value in ("true", "false"):
        return f"{key}={value.capitalize()}"
    try:
        float(value)
    except ValueError:
        return f"{key}={value!r}"
    return f"{key}={value}"


def spelled(error: _core.FtlsimError, spell: Spelling) -> str | None:
    """The message of `error` with every parameter spelled by `spell(key, value)`, or None when the engine gave
    no fields (the message is then the engine's own)."""
    if not error.problems:
        return None
    parts = []
    for p in error.problems:
        text = f"{spell(p['key'], p['value'])} {p['expected']}"
        if p["suggestion"] is not None:
            text += f"; e.g. {spell(p['key'], p['suggestion'])}"
        for a in p.get("alternatives", ()):
            text += f", or {spell(a['key'], a['value'])} ({a['does']})"
        parts.append(text)
    return f"{error.context or ''}{'; '.join(parts)}"


def respelled(error: _core.FtlsimError, spell: Spelling) -> _core.FtlsimError:
    """`error` with its message spelled by `spell`, keeping its type and fields (the command line spells the
    same fields again its own way)."""
    text = spelled(error, spell)
    if text is None:
        return error
    out = type(error)(text)
    out.__dict__.update(error.__dict__)
    return out
