"""Plots a person would rather look at than read."""

from __future__ import annotations


def compare_plot(df, swept: str | None, path: str, title: str = "") -> None:
    """The FAST paper's Fig. 10 shape: erase count and elapsed time against the swept parameter (e.g. the
    number of log blocks), one line per scheme."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax_erase, ax_time) = plt.subplots(1, 2, figsize=(11, 4.2))
    x = swept or "ftl"
    # Schemes often coincide (O-FAST on random writes is FAST): distinct markers and dashes keep both visible.
    styles = [("o", "-"), ("s", "--"), ("^", ":"), ("D", "-."), ("v", "-"), ("P", "--")]
    for i, (ftl, rows) in enumerate(df.groupby("ftl", sort=False)):
        rows = rows.sort_values(x) if swept else rows
        marker, dash = styles[i % len(styles)]
        style = dict(marker=marker, linestyle=dash, label=ftl, markersize=7 - i % 3, alpha=0.9)
        ax_erase.plot(rows[x], rows["flash.erases"], **style)
        ax_time.plot(rows[x], rows["time_us.total"] / 1e6, **style)
    for ax, ylabel in ((ax_erase, "erase count"), (ax_time, "elapsed flash time (s)")):
        ax.set_xlabel(x.replace("_", " "))
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
        if swept and df[x].dtype.kind in "iu" and df[x].min() > 0 and df[x].max() / df[x].min() >= 8:
            ax.set_xscale("log", base=2)
            ax.set_xticks(sorted(df[x].unique()))
            ax.get_xaxis().set_major_formatter(matplotlib.ticker.ScalarFormatter())
        ax.legend()
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


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
