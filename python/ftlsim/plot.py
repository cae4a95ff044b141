"""Plots a person would rather look at than read."""

from __future__ import annotations


def _powers_of_two(values) -> bool:
    import numbers

    vals = [v for v in values if v == v]
    return len(vals) >= 3 and all(isinstance(v, numbers.Real) and v > 0 and float(v).is_integer()
                                  and int(v) & (int(v) - 1) == 0 for v in vals)


def _label(key, values: dict) -> str:
    parts = [str(values.pop("ftl"))] if "ftl" in values else []
    parts += [f"{k}={v}" for k, v in values.items() if v == v]
    return ", ".join(parts) or str(key)


def compare(df, swept=None, title: str = "", precondition: str | None = None,
            y=(("flash.erases", "erase count", 1.0), ("time_us.total", "elapsed flash time (s)", 1e-6))):
    """A matplotlib Figure of a sweep's rows (a DataFrame from `ftlsim.sweep`): the FAST paper's Fig. 10 shape,
    erase count and elapsed time against the first swept parameter, one line per scheme and combination of
    the other swept parameters (all named in the legend). Axes are log2 when the values are powers of two;
    the title names the device and the precondition. In a notebook the figure displays itself."""
    from matplotlib.figure import Figure
    from matplotlib.ticker import NullLocator, ScalarFormatter

    swept = [swept] if isinstance(swept, str) else [s for s in (swept or []) if s in df]
    x = swept[0] if swept else "ftl"
    others = [c for c in ("trace",) if c in df and df[c].nunique() > 1] + ["ftl"] + swept[1:]
    fig = Figure(figsize=(11, 4.4))
    axes = fig.subplots(1, len(y))
    # Schemes often coincide (O-FAST on random writes is FAST): distinct markers, dashes and sizes keep
    # every curve visible.
    styles = [("o", "-"), ("s", "--"), ("^", ":"), ("D", "-."), ("v", "-"), ("P", "--"), ("X", ":"), ("*", "-.")]
    groups = list(df.groupby(others, sort=False, dropna=False))
    for i, (key, rows) in enumerate(groups):
        key = key if isinstance(key, tuple) else (key,)
        label = _label(key, dict(zip(others, key)))
        rows = rows.sort_values(x) if swept else rows
        marker, dash = styles[i % len(styles)]
        style = dict(marker=marker, linestyle=dash, label=label, markersize=8 - 1.5 * (i % 3), alpha=0.85)
        for ax, (col, _, scale) in zip(axes, y):
            ax.plot(rows[x], rows[col] * scale, **style)
    log2 = bool(swept) and _powers_of_two(df[x].unique())
    for ax, (_, ylabel, _) in zip(axes, y):
        ax.set_xlabel(x.replace("_", " "))
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
        if log2:
            ax.set_xscale("log", base=2)
            ax.set_xticks(sorted(v for v in df[x].unique() if v == v))
            ax.xaxis.set_major_formatter(ScalarFormatter())
            ax.xaxis.set_minor_locator(NullLocator())
        ax.legend(fontsize="small", title=f"x: {x}; lines: {', '.join(others)}", title_fontsize="small")
    device = ""
    if "config.preset" in df and len(df):
        row = df.iloc[0]
        device = f"{row['config.preset']}, {row['config.capacity_bytes'] / 2**20:,.0f} MiB"
    precondition = precondition or (df["precondition"].iloc[0] if "precondition" in df and len(df) else None)
    subtitle = ", ".join(p for p in (device, f"precondition {precondition}" if precondition else "") if p)
    fig.suptitle(f"{title}\n{subtitle}" if subtitle else title)
    fig.tight_layout()
    return fig


def compare_plot(df, swept, path: str, title: str = "", precondition: str | None = None) -> None:
    """`compare` written to `path` (the format its extension names), atomically."""
    from .output import atomic_path

    fig = compare(df, swept, title=title, precondition=precondition)
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=120, format=str(path).rsplit(".", 1)[-1].lower())


def refs_plot(refs: dict, path: str, title: str = "") -> None:
    """003 Figs. 3-4: writes per logical block (left) and the logical block of each write over time (right).
    A few very hot blocks (FAT sectors, directory entries, an index file) stand out as tall marks on the left
    and as horizontal lines on the right."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    info = refs["info"]
    fig, (ax_count, ax_time) = plt.subplots(1, 2, figsize=(12, 4.4))
    ax_count.vlines(refs["blocks"], 1, refs["writes"], linewidth=1.0, color="tab:red")
    ax_count.set_yscale("log")
    ax_count.set_ylim(bottom=0.8)
    ax_count.set_xlabel(f"logical block ({info['block_bytes'] // 1024} KiB)")
    ax_count.set_ylabel("page writes")
    ax_count.set_title("writes per logical block")
    ax_time.scatter(refs["timeline_write"], refs["timeline_block"], s=2, color="tab:blue", alpha=0.5, linewidths=0)
    stride = refs["timeline_stride"]
    ax_time.set_xlabel("write request" + (f" (1 in {stride} shown)" if stride > 1 else ""))
    ax_time.set_ylabel("logical block")
    ax_time.set_title("logical block written over time")
    for ax in (ax_count, ax_time):
        ax.grid(alpha=0.3)
    share = info["write_share_hottest_1pct_blocks"]
    share02 = info["write_share_hottest_0_2pct_blocks"]
    fig.suptitle(f"{title}\n{share02:.1%} of page writes hit the hottest 0.2% of written blocks, {share:.1%} the hottest 1%")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
