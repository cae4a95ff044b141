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
    import json

    from . import _core

    opts = {"format": format, **{k: v for k, v in options.items() if v is not None}}
    return json.loads(_core.trace_info(str(trace), json.dumps(opts), block_bytes, page_bytes, progress))


def plot_info(stats: dict, path: str | None = None, title: str = ""):
    """Draws the four distributions of :func:`info` (request size, inter-arrival time, reuse distance, write
    popularity) as log2 histograms; saves to `path` when given. Returns the matplotlib figure."""
    import matplotlib

    if path is not None:
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = [
        ("request_bytes", "request size (bytes)", "requests"),
        ("inter_arrival_us", "inter-arrival time (us)", "requests"),
        ("reuse_distance_requests", "reuse distance (requests)", "re-references"),
        ("page_writes", "writes per written page", "pages"),
    ]
    fig, axes = plt.subplots(2, 2, figsize=(11, 7))
    for ax, (key, xlabel, ylabel) in zip(axes.flat, panels):
        counts = stats["distributions"][key]
        # Bin k holds [2^(k-1), 2^k): drawn from its lower bound; bin 0 (zeros) at 0 on a symlog axis.
        lows = [0] + [2 ** (k - 1) for k in range(1, len(counts))]
        widths = [1] + [2 ** (k - 1) for k in range(1, len(counts))]
        ax.bar(lows, counts, width=widths, align="edge", edgecolor="black", linewidth=0.4)
        ax.set_xscale("symlog", base=2, linthresh=1)
        if any(counts):
            ax.set_yscale("log")
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
    fig.suptitle(f"{title} ({stats['format']}, {stats['requests']:,} requests)".strip())
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=120)
        plt.close(fig)
    return fig


def generate(trace: str, output: str, preset: str | None = None, capacity: str | int | None = None,
             format: str = "auto", **options) -> int:
    """Writes `trace` (a built-in workload such as ``"fat-camera:seed=1"``, or a trace file) to `output` in the
    format its extension names: ``.csv`` (native ``op,offset,length,tag,time_us``: tags and arrival times
    kept), ``.trace`` / ``.ascii`` (SSDsim / MQSim ASCII), ``.blkparse`` (blkparse-like text); ``.gz`` on top
    compresses. An unknown extension, an output that is the input, or a request the format cannot hold (a
    trim in SSDsim ASCII, bytes off the 512 B grid) is an error, and no file is left half-written.
    `preset`, `capacity` and device overrides size the device a workload spreads over. Returns the number of
    requests written."""
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
