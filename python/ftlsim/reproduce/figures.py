"""The experiments' figures, sized for a paper's column: at most 7.5 in x 110 dpi = 825 px wide per panel row
(`MAX_WIDTH_IN`), titles wrapped rather than clipped, plain numbers on the axes (no 1e7 offset), schemes named
as the papers write them, and the paper's figures drawn only where a claim compares them."""

from __future__ import annotations

import re
import textwrap

import pandas as pd

from ..output import save_figure

DPI = 110
MAX_WIDTH_IN = 7.5
TITLE_CHARS_PER_IN = 13  # characters of a 9 pt title per inch of figure, with a margin

# Scheme names as the papers print them.
PAPER_NAMES = {"bast": "BAST", "fast": "FAST", "ofast": "O-FAST", "nftl": "NFTL", "last": "LAST", "mast": "MAST",
               "tiny": "TinyFTL", "superblock": "Superblock", "logblock-zoned": "Logblock-zoned",
               "replacement": "Replacement", "page": "page", "block": "block"}


def paper_name(scheme) -> str:
    return PAPER_NAMES.get(str(scheme), str(scheme))


def _figure(width_in: float, height_in: float):
    """A Figure of its own, not pyplot's: the caller's backend and open figures stay as they were (pyplot with
    the Agg backend forced switched a notebook's backend for the rest of its session)."""
    from matplotlib.figure import Figure

    return Figure(figsize=(width_in, height_in))


def _plain_axis(axis) -> None:
    """Numbers as numbers: 12,500 rather than 1.25 with a 1e4 offset."""
    import matplotlib.ticker as ticker

    axis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:,.0f}" if abs(v) >= 100 else f"{v:g}"))


def _finish(fig, title: str, path: str) -> None:
    # A label and its number ("Fig. 4", "section 3.5", "Table 5") stay on one line: a no-break space, which
    # textwrap does not break at and the figure draws as a space.
    title = re.sub(r"\b(Figs?\.|Table|Tables|section|sections|sec\.) (?=\d)", "\\1\u00a0", title)
    fig.suptitle("\n".join(textwrap.wrap(title, int(fig.get_figwidth() * TITLE_CHARS_PER_IN))), fontsize=9)
    fig.tight_layout()
    save_figure(fig, path, dpi=DPI)


def lines(df: pd.DataFrame, x: str, ys: list, series: str, path: str, title: str, logx: bool = False,
          paper: dict | None = None, paper_label: str = "paper", xlabel: str | None = None,
          logy: bool = False) -> None:
    """One panel per (column, label) in `ys` against `x`, a line per value of `series` (schemes by their paper
    names); `paper` maps a series value to the paper's (x, y) points, drawn hollow on the first panel."""
    import matplotlib.ticker as ticker

    fig = _figure(min(MAX_WIDTH_IN, 1.2 + 3.6 * len(ys)), 3.6)
    axes = fig.subplots(1, len(ys), squeeze=False)
    styles = [("o", "-"), ("s", "--"), ("^", ":"), ("D", "-."), ("v", "-"), ("P", "--")]
    colors = {}
    for j, (col, label) in enumerate(ys):
        ax = axes[0][j]
        for i, (name, rows) in enumerate(df.groupby(series, sort=False)):
            rows = rows.sort_values(x)
            marker, dash = styles[i % len(styles)]
            line, = ax.plot(rows[x], rows[col], marker=marker, linestyle=dash, label=paper_name(name), alpha=0.9)
            colors[str(name)] = line.get_color()
        if j == 0 and paper:
            for k, (name, points) in enumerate(paper.items()):
                px, py = zip(*points)
                ax.scatter(px, py, s=80, marker="os^D"[k % 4], facecolors="none", linewidths=1.6, zorder=5,
                           edgecolors=colors.get(str(name), ("black", "dimgray", "darkred", "navy")[k % 4]),
                           label=f"{paper_label}: {paper_name(name)}")
        ax.set_xlabel(xlabel or x.replace("_", " "))
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
        if logx:
            ax.set_xscale("log", base=2)
            drawn = set(df[x]) | ({px for points in paper.values() for px, _ in points} if paper and j == 0 else set())
            ax.set_xticks(sorted(drawn))
            ax.xaxis.set_major_formatter(ticker.ScalarFormatter())
            ax.xaxis.set_minor_formatter(ticker.NullFormatter())
        if logy:
            ax.set_yscale("log")
        else:
            _plain_axis(ax.yaxis)
        ax.legend(fontsize=7)
    _finish(fig, title, path)


def bars(table: pd.DataFrame, path: str, title: str, ylabel: str, paper: dict | None = None,
         stacked: bool = False, logy: bool = False, low: pd.DataFrame | None = None,
         high: pd.DataFrame | None = None, spread_label: str = "", rotate: int = 0) -> None:
    """Grouped (or stacked) bars, a group per row of `table` and a bar per column (schemes by their paper
    names). `paper` maps (row, column) to the paper's value, drawn as a black mark on that bar; `low` / `high`
    (same shape) draw the spread over variants as error bars; `rotate` turns the group labels (degrees)."""
    import numpy as np

    rows, cols = list(table.index), list(table.columns)
    fig = _figure(min(MAX_WIDTH_IN, max(4.8, 0.55 * len(rows) * max(1, len(cols)) ** 0.5 + 2.2)), 3.8)
    ax = fig.subplots()
    xs = np.arange(len(rows))
    width = 0.8 if stacked else 0.8 / max(1, len(cols))
    bottom = np.zeros(len(rows))
    for j, c in enumerate(cols):
        values = table[c].astype(float).fillna(0).to_numpy()
        pos = xs if stacked else xs - 0.4 + width * (j + 0.5)
        err = None
        if low is not None and high is not None:
            err = np.vstack([values - low[c].astype(float).to_numpy(), high[c].astype(float).to_numpy() - values])
        ax.bar(pos, values, width, bottom=bottom if stacked else None, label=paper_name(c), yerr=err,
               capsize=2 if err is not None else 0, error_kw={"elinewidth": 0.9})
        if stacked:
            bottom = bottom + values
        for i, r in enumerate(rows):
            if paper and (r, c) in paper:
                ax.plot([pos[i] - width / 2, pos[i] + width / 2], [paper[(r, c)]] * 2, color="black", linewidth=2.5)
    if paper:
        ax.plot([], [], color="black", linewidth=2.5, label="paper")
    if spread_label:
        ax.errorbar([], [], yerr=[], color="black", label=spread_label)
    ax.set_xticks(xs)
    ax.set_xticklabels([str(r) for r in rows], fontsize=7, rotation=rotate, ha="right" if rotate else "center")
    ax.set_ylabel(ylabel)
    if logy:
        ax.set_yscale("log")
    else:
        _plain_axis(ax.yaxis)
    ax.grid(alpha=0.3, axis="y")
    # Beside the bars: inside, it covered the top of a stacked bar (fast-fig8-9's O-FAST vs FAST).
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    _finish(fig, title, path)
