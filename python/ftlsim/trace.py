"""Traces, built-in workloads and device presets."""

from __future__ import annotations

from ._registry import registry


def presets() -> list[dict]:
    """Every device preset: geometry and timing from the papers."""
    return registry()["presets"]


def workloads() -> list[dict]:
    """Every built-in workload, with its parameters (name, default, meaning)."""
    return registry()["workloads"]


def formats() -> list[dict]:
    """Every trace format the readers know."""
    return registry()["formats"]


def info(trace: str, format: str = "auto", block_bytes: int = 16384, page_bytes: int = 512, **options) -> dict:
    """Statistics of a trace: requests, read/write mix, bytes, footprint, highest address and write
    concentration (share of writes to the hottest 0.2% / 1% of pages and blocks)."""
    import json

    from . import _core

    opts = {"format": format, **{k: v for k, v in options.items() if v is not None}}
    return json.loads(_core.trace_info(str(trace), json.dumps(opts), block_bytes, page_bytes))


def generate(trace: str, output: str, preset: str | None = None, capacity: str | int | None = None,
             format: str = "auto", **options) -> int:
    """Writes `trace` (a built-in workload such as ``"fat-camera:seed=1"``, or a trace file) to `output` as a
    native CSV trace ``op,offset,length,tag`` (gzip when the name ends in ``.gz``), so it can be replayed with
    its data / metadata tags. `preset`, `capacity` and device overrides size the device a workload spreads
    over. Returns the number of requests written."""
    import json

    from . import _core
    from ._registry import make_config

    cfg = make_config("page", preset, capacity, "none", format, options)
    if cfg["params"]:
        raise ValueError(f"generate: unknown options {sorted(cfg['params'])}; it takes device and trace options")
    return _core.generate(str(trace), str(output), json.dumps(cfg))


def write_refs(trace: str, format: str = "auto", block_bytes: int = 16384, page_bytes: int = 512,
               max_points: int = 200_000, **options) -> dict:
    """Writes per logical block and a sampled timeline of which block each write hits (for plot-refs)."""
    import json

    from . import _core

    opts = {"format": format, **{k: v for k, v in options.items() if v is not None}}
    return json.loads(_core.write_refs(str(trace), json.dumps(opts), block_bytes, page_bytes, max_points))
