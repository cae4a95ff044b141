"""Engine errors in the words of the front end that shows them. The engine reports a parameter whose value is not
allowed as fields (`FtlsimError.problems`: key, value, expected, suggestion, and alternatives: other settings
that fix it; `context`: what the message says before them); the Python API spells a key as a keyword argument
(``page_bytes=2048``), the command line as its option (``-p page_bytes=2048``, ``--capacity 64MiB``)."""

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


def _keyword_as_given(key: str, value) -> str:
    return f"{key}={value!r}"


def spelled(error: _core.FtlsimError, spell: Spelling, given: dict | None = None,
            as_given: Callable[[str, object], str] | None = None) -> str | None:
    """The message of `error` with every parameter spelled by `spell(key, value)` (and every setting a trace
    error names, such as ``skip_bad_lines=true``), or None when the engine gave no fields (the message is then
    the engine's own). A value the caller gave in `given` is shown as given, by `as_given(key, value)` (default:
    a Python keyword, ``log_blocks='8'``): the engine's text of ``log_blocks="8"`` is 8, and "log_blocks=8 must
    be a whole number" would contradict itself. A suggestion is always `spell`'s (``log_blocks=8``)."""
    if not error.problems:
        if not error.settings:
            return None
        text = getattr(error, "engine_message", str(error))  # the engine's spelling, which `respelled` changed
        for setting in error.settings:
            text = text.replace(f"{setting['key']}={setting['value']}", spell(setting["key"], setting["value"]))
        return text
    given = given or {}
    parts = []
    for p in error.problems:
        # (only where the engine's text is the value's own: a capacity of "1MiB" is said in bytes, 1048576)
        is_given = p["key"] in given and str(given[p["key"]]).lower() == str(p["value"]).lower()
        own = (as_given or _keyword_as_given)(p["key"], given[p["key"]]) if is_given else spell(p["key"], p["value"])
        text = f"{own} {p['expected']}"
        if p["suggestion"] is not None:
            text += f"; e.g. {spell(p['key'], p['suggestion'])}"
        for a in p.get("alternatives", ()):
            text += f", or {spell(a['key'], a['value'])} ({a['does']})"
        parts.append(text)
    return f"{error.context or ''}{'; '.join(parts)}"


def respelled(error: _core.FtlsimError, spell: Spelling, given: dict | None = None) -> _core.FtlsimError:
    """`error` with its message spelled by `spell` (values in `given` as given), keeping its type and fields
    (the command line spells the same fields again its own way)."""
    text = spelled(error, spell, given)
    if text is None:
        return error
    out = type(error)(text)
    out.__dict__.update(error.__dict__)
    out.__dict__["engine_message"] = getattr(error, "engine_message", str(error))  # for spelled, again
    return out
