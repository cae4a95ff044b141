"""The schemes the engine knows, and the RAM their tables need."""

from __future__ import annotations

from . import _core
from ._registry import check_name, make_config, registry
from .errors import keyword, respelled


def schemes() -> list[dict]:
    """Every registered scheme: name, summary, citation and its parameters with defaults."""
    return registry()["schemes"]


def ram(ftl: str, preset: str | None = None, capacity: str | int | None = None, **params) -> dict:
    """The RAM a scheme's tables need on a controller, without running a trace: ``total_bytes`` and one entry
    per structure (bytes), e.g. ``ram(ftl="nftl", capacity="34MiB", page_bytes=512, pages_per_block=16)``.
    The capacity defaults to the preset's (64 MiB if the preset names none)."""
    items = ram_layout(ftl, preset, capacity, **params)
    out = {"total_bytes": sum(i["bytes"] for i in items)}
    out.update({i["name"]: i["bytes"] for i in items})
    return out


def ram_layout(ftl: str, preset: str | None = None, capacity: str | int | None = None, **params) -> list[dict]:
    """Like `ram`, with how each figure is made (entries x entry size, where the layout comes from)."""
    ftl = check_name("schemes", ftl)
    if preset is not None:
        preset = check_name("presets", preset)
    cfg = make_config(ftl, preset, capacity, "none", "auto", params)
    try:
        return _core.ram(cfg)
    except _core.FtlsimError as e:
        raise respelled(e, keyword) from None
