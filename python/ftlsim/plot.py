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
