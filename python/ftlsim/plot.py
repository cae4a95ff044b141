"""Plots a person would rather look at than read."""

from __future__ import annotations

import math

from ._registry import scalar
from .report import ARRAY_SETTINGS

# Scheme names as the papers write them (FAST paper §2, NFTL paper, DFTL, TinyFTL, MAST papers); a scheme not
# listed is shown by its registry name.
PAPER_NAMES = {"page": "page-mapped", "block": "block-mapped", "bast": "BAST", "fast": "FAST", "ofast": "O-FAST",
               "nftl": "NFTL", "dftl": "DFTL", "tiny": "TinyFTL", "superblock": "superblock", "last": "LAST",
               "mast": "MAST", "replacement": "replacement blocks", "logblock-zoned": "log block (zoned map)"}


def paper_name(scheme) -> str:
    return PAPER_NAMES.get(str(scheme), str(scheme))


def _numbers(values) -> list:
    import numbers

    return [v for v in values if isinstance(v, numbers.Real) and not isinstance(v, bool) and v == v]


def _integers(values) -> bool:
    vals = _numbers(values)
    return bool(vals) and len(vals) == len([v for v in values if v == v]) and all(float(v).is_integer() for v in vals)


def _powers_of_two(values) -> bool:
    vals = _numbers(values)
    return len(vals) >= 3 and _integers(values) and all(v > 0 and int(v) & (int(v) - 1) == 0 for v in vals)


def value_text(v) -> str:
    """A grid value as written: ``64``, not ``64.0`` (a grid column with gaps is float); ``true``, not
    ``True``, as ``-p rmw=false`` and the run header spell it."""
    v = scalar(v)  # a numpy scalar, as pandas gives a cell, as Python's
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def _label(values: dict) -> str:
    parts = [paper_name(values.pop("ftl"))] if "ftl" in values else []
    parts += [f"{k}={value_text(v)}" for k, v in values.items() if v is not None and v == v]
    return ", ".join(parts)


def _device(rows) -> str:
    """A trace's device as its rows state it: preset and capacity (several when they differ)."""
    if "config.preset" not in rows or not len(rows):
        return ""
    presets = ", ".join(dict.fromkeys(str(p) for p in rows["config.preset"]))
    from .output import human_bytes

    capacities = ", ".join(human_bytes(c) for c in dict.fromkeys(rows["config.capacity_bytes"]))
    return f"{presets}, {capacities}"


def _settings(df, swept: list, said: tuple) -> list:
    """What every row ran with that the grid's "every row" line says (the run settings other than their
    defaults, ``device=1``, ``writes_only=true``, the NVRAM; `grid_settings`) and the heading does not say
    otherwise (`said`: the device's line names the preset and capacity), as ``k=v`` texts."""
    from .output import grid_settings

    if not {"config.resolved", "config.preset", "config.capacity_bytes"} <= set(df.columns):
        return []  # rows made elsewhere, without the report's configuration
    return [s for s in grid_settings(df, list(swept)) if s.split("=", 1)[0] not in said]


def _comma_lines(items: list[str], inches: float, points: float = 12) -> str:
    """`items` joined by commas in lines that fit `inches` of a heading at `points` (a character about 0.6 of
    its size wide), broken between items only: a long heading of settings ran off the figure's edges."""
    from .output import wrap_words

    words = [f"{item}," for item in items[:-1]] + items[-1:]
    return "\n".join(line.strip() for line in wrap_words("", words, int(inches * 72 / (0.6 * points))))


def compare(df, swept=None, title: str = "", precondition: str | None = None,
            y=(("flash.erases", "erase count", 1.0), ("time_us.total", "elapsed flash time (s)", 1e-6))):
    """A matplotlib Figure of a sweep's rows (a DataFrame from `ftlsim.sweep`): the FAST paper's Fig. 10 shape,
    erase count and elapsed time against the first swept parameter with numbers to put on an axis, one line
    per scheme and combination of the other swept parameters, schemes named as the papers write them; with
    no such parameter (none swept, or only names such as a placement), a bar per scheme and combination. A
    scheme without the parameter (page, DFTL, NFTL) is a labelled horizontal reference line. A parameter with
    one value in every row is stated in the heading, not in every label. One row of panels per trace, titled
    with the trace and its device; one legend, outside the axes. Integer axes get integer ticks, log2 when
    the values are powers of two. In a notebook the figure displays itself."""
    from matplotlib.figure import Figure

    from .output import short_names

    from . import _core

    if "status" in df:  # a failed point has no figures to draw (the sweep's table says why it failed)
        df = df[df["status"] == "done"]
    if not len(df):
        raise _core.FtlsimError("no run to draw: the rows are empty, or every run failed")
    swept = _swept_of(df, [swept] if isinstance(swept, str) else swept)
    settings = _settings(df, swept, said=("preset", "capacity", "precondition"))
    swept, one_valued = split_swept(df, swept)
    x = next((s for s in swept if len(set(_numbers(df[s].unique()))) >= 2), None)
    others = ["ftl"] + [s for s in swept if s != x]
    traces = list(dict.fromkeys(df["trace"])) if "trace" in df else [None]
    names = short_names(t for t in traces if t is not None)
    # One style per line for the whole figure, so a scheme looks the same in every trace's panels. Schemes
    # often coincide (O-FAST on random writes is FAST): distinct markers, dashes and sizes keep each visible.
    keys = list(dict.fromkeys(_line_keys(df, others)))
    styles = [("o", "-"), ("s", "--"), ("^", ":"), ("D", "-."), ("v", "-"), ("P", "--"), ("X", ":"), ("*", "-.")]
    colors = [_color(i) for i in range(len(keys))]
    # Many bars a panel: their figures stand upright above them, where side by side they ran into each other.
    upright = x is None and len(keys) > 6
    # The panels keep their width whatever the legend's: the figure widens by the legend's longest label. A
    # legend of long labels (several swept settings, "(same as ...)") goes under the panels instead, in as
    # many columns as fit: at the right it squeezed the panels and ran over the heading.
    longest = max([len(_label(dict(zip(others, key)))) + (len(x) + 6 if x else 0) for key in keys] + [10])
    below = longest > LEGEND_RIGHT_CHARS
    columns = max(1, min(len(keys), int(PANELS_INCHES // (0.075 * longest + 0.8)))) if below else 1
    legend_rows = -(-len(keys) // columns) + 2 if below else 0
    legend_inches = 0 if below else 0.075 * longest  # beside the panels
    fig = Figure(figsize=(PANELS_INCHES + legend_inches, 0.6 + 3.9 * len(traces) + 0.2 * legend_rows),
                 layout="constrained")
    rows_of_panels = fig.subfigures(len(traces), 1, squeeze=False)[:, 0]
    handles = {}
    same = _same_lines(df, keys, others, x, [col for col, _, _ in y]) if x else {}
    if len(traces) == 1 and title == str(traces[0]):
        title = ""  # the panel's own title names the trace
    for trace, panel in zip(traces, rows_of_panels):
        rows_t = df if trace is None else df[df["trace"] == trace]
        axes = panel.subplots(1, len(y), squeeze=False)[0]
        heading = ": ".join(p for p in (names.get(trace, ""), _device(rows_t)) if p)
        if heading:
            panel.suptitle(heading, fontsize="medium")
        references: list[list] = [[] for _ in y]
        for i, key in enumerate(keys):
            rows = rows_t[[k == key for k in _line_keys(rows_t, others)]]
            if not len(rows):
                continue
            label = _label(dict(zip(others, key)))
            if key in same:  # drawn over the line it equals: the legend says so
                label += f" (same as {_label(dict(zip(others, same[key])))})"
            marker, dash = styles[i % len(styles)]
            for ax, (col, _, scale), refs in zip(axes, y, references):
                handles[label] = _draw(ax, rows, x, col, scale, label, colors[i], marker, dash, i, refs, upright)
        for ax, (col, ylabel, scale), refs in zip(axes, y, references):
            count = scale == 1.0 and _integers(df[col])
            _axes_style(ax, x, df[x] if x else None, ylabel, count=count, headroom=0.22 if upright else 0.1)
            if x is not None:
                _log_if_spread(ax, _numbers(rows_t[col] * scale), count)
            _label_references(ax, refs)
    fig.legend(list(handles.values()), [h.get_label() for h in handles.values()],
               loc="outside lower center" if below else "outside right upper", ncols=columns, fontsize="small",
               title=f"{'lines' if x else 'bars'}: {', '.join(others)}" + (f"\nx: {x}" if x else ""),
               title_fontsize="small")
    ran = list(df["precondition"].dropna().unique()) if "precondition" in df else []
    if len(ran) > 1:
        precondition = None  # the rows mix them (a sweep's -p precondition=... beside its file's stored points)
    else:
        precondition = ran[0] if ran else precondition
    # Centred over the figure, a line no wider than the panels less the legend beside them stays clear of it.
    subtitle = _comma_lines([f"precondition {precondition}"] * bool(precondition) + one_valued + settings,
                            PANELS_INCHES - legend_inches)
    if title or subtitle:
        fig.suptitle("\n".join(p for p in (title, subtitle) if p))
    return fig


def _same_lines(df, keys, others, x, columns) -> dict:
    """Each line (a key of `others`' values) whose figures, in every trace's panels, equal those of an earlier
    line, with that line's key: O-FAST on random writes is FAST, and its line hides FAST's."""
    figures: dict[tuple, list[tuple]] = {}
    for key, (_, rows) in zip(_line_keys(df, others), df.iterrows()):
        point = (rows.get("trace"), rows[x], *(rows[c] for c in columns))
        figures.setdefault(key, []).append(tuple(None if isinstance(v, float) and v != v else v for v in point))
    points = {key: sorted(figures.get(key, []), key=repr) for key in keys}
    same = {}
    for i, key in enumerate(keys):
        earlier = next((k for k in keys[:i] if k not in same and points[k] == points[key]), None)
        if points[key] and earlier is not None:
            same[key] = earlier
    return same


def _swept_of(df, swept) -> list:
    """The parameters a plot tells rows apart by: those given, each a column of `df` (a name it does not have
    is an error, not a plot that silently draws one row of each scheme); none given, every run keyword whose
    value differs between rows of one scheme on one trace (a sweep's grid), so that no run is left out."""
    from . import _core
    from ._registry import did_you_mean
    from .store import parameter_columns

    if swept is not None:
        missing = [k for k in swept if k not in df]
        if missing:
            raise _core.FtlsimError(f"swept {missing[0]!r} is not a column of the rows"
                                    f"{did_you_mean(missing[0], list(df.columns))}")
        return list(swept)
    keys = [k for k in ("trace", "ftl") if k in df]
    rows = df.groupby(keys, sort=False, dropna=False) if keys else [(None, df)]
    return [c for c in df.columns if c in parameter_columns() and c not in ("trace", "ftl")
            and any(own[c].nunique(dropna=False) > 1 for _, own in rows)]


def split_swept(df, swept) -> tuple[list, list]:
    """The swept parameters (of those in `df`) that tell its rows apart, and ``key=value`` of each of the
    others, which have one value in every row (a heading says them once; none without rows). A gap (a scheme
    without the parameter) counts as a value of its own."""
    given = [k for k in (swept or []) if k in df]
    varying = [k for k in given if df[k].nunique(dropna=False) > 1]
    return varying, [f"{k}={value_text(df[k].iloc[0])}" for k in given
                     if k not in varying and len(df) and df[k].notna().all()]


def _line_keys(df, columns) -> list:
    """Each row's values of `columns`, a gap (NaN: a scheme without that parameter) as None so that rows with
    the same gaps compare equal."""
    return [tuple(None if isinstance(v, float) and v != v else v for v in row)
            for row in df[columns].itertuples(index=False, name=None)]


def _color(i: int) -> str:
    """The `i`-th line's or bar's colour: matplotlib's ten (tab10), then their lighter twins (tab20's), so
    that 13 schemes are 13 colours (the eleventh was the first's blue again)."""
    from matplotlib import colormaps
    from matplotlib.colors import to_hex

    j = i % 20
    return to_hex(colormaps["tab20"]((2 * (j % 10) + j // 10) / 20 + 0.025))  # the middle of colour k of 20


#: A sweep plot's panels, with their margins, in inches (9.5 + 0.6): the figure is as wide and a legend beside them.
PANELS_INCHES = 10.1
#: The longest legend label (characters) kept at the right of the panels; a longer one puts the legend under them.
LEGEND_RIGHT_CHARS = 40


def _draw(ax, rows, x, col, scale, label, color, marker, dash, i, references: list, upright: bool = False):
    """One scheme's figures on `ax`: a line against `x`; a horizontal reference line when the scheme has no
    value of `x` (added to `references` to be labelled once all are drawn); a bar when nothing is swept, its
    figure above it (`upright`: turned to stand, for many narrow bars)."""
    values = rows[col] * scale
    if x is None:
        # Each bar carries its figure, as the table prints it (no bar is read off the axis).
        from .output import fmt

        value = float(values.iloc[0])
        bars = ax.bar(label, value, color=color, label=label)
        ax.bar_label(bars, labels=[fmt(int(value) if scale == 1.0 and value.is_integer() else value)],
                     fontsize="x-small", padding=2, rotation=90 if upright else 0)
        return bars
    has_x = rows[x].map(lambda v: v == v and v is not None)
    if not has_x.any():
        line = None
        for v in values:
            line = ax.axhline(v, color=color, linestyle=dash, linewidth=1.6, label=f"{label} (no {x})")
            references.append((v, label.split(" (same as ")[0], color))  # coinciding: labelled together
        return line
    rows = rows[has_x.to_numpy()].sort_values(x)
    line, = ax.plot(rows[x], rows[col] * scale, marker=marker, linestyle=dash, color=color, label=label,
                    markersize=8 - 1.5 * (i % 3), alpha=0.85)
    return line


#: A panel whose figures span more than this factor is drawn on a log axis: on a linear one the smaller
#: schemes' lines lie flat on the axis (NFTL's elapsed time is 60 times page's on Financial1).
LOG_SPREAD = 20


def _log_if_spread(ax, values: list, count: bool) -> None:
    """A log y axis where the panel's figures (all positive) span more than `LOG_SPREAD`."""
    if not values or min(values) <= 0 or max(values) <= LOG_SPREAD * min(values):
        return
    ax.set_yscale("log")
    _log_labels(ax.yaxis, (lambda v: f"{v:,.0f}") if count else (lambda v: f"{v:,.4g}"),
                between=max(values) < 1000 * min(values))


def _log_labels(axis, text, between: bool) -> None:
    """A log axis' labels: each decade, by `text(value)`, and 2 and 5 between them where `between` (a y axis
    within three decades, an x axis within two; wider, their labels would collide). Without them, figures
    above the top decade label (FAST's 61,465 erases over page's 423) have no label near them."""
    from matplotlib.ticker import FuncFormatter

    axis.set_major_formatter(FuncFormatter(lambda v, _: text(v)))
    axis.set_minor_formatter(FuncFormatter(
        lambda v, _: text(v) if between and v > 0 and round(v / 10 ** math.floor(math.log10(v))) in (2, 5)
        else ""))


def _label_references(ax, references: list) -> None:
    """Names each reference line at its left end, above the line; lines that coincide share one label, and of
    two lines too close for both labels above, the lower one's label goes under its line (close on the axis
    as drawn: a log axis by ratio)."""
    from matplotlib.transforms import blended_transform_factory

    along = ax.yaxis.get_transform()  # the axis' scale: identity, or log

    def drawn(v: float) -> float:
        return float(along.transform([v])[0])

    low, high = (drawn(v) for v in ax.get_ylim())
    near = (high - low) * 0.04
    merged: list[list] = []
    for v, label, color in sorted(references, key=lambda r: r[0]):
        if merged and abs(drawn(v) - drawn(merged[-1][0])) <= near * 0.1:
            merged[-1][1].append(label)
        else:
            merged.append([v, [label], color])
    transform = blended_transform_factory(ax.transAxes, ax.transData)
    for j, (v, labels, color) in enumerate(merged):
        crowded_above = j + 1 < len(merged) and drawn(merged[j + 1][0]) - drawn(v) < near
        below = crowded_above and (j == 0 or drawn(v) - drawn(merged[j - 1][0]) >= near)
        ax.text(0.01, v, "\n".join(f" {label}" for label in labels), transform=transform, fontsize="small",
                color=color if len(labels) == 1 else "0.2", va="top" if below else "bottom", ha="left")


def _axes_style(ax, x, xvalues, ylabel: str, count: bool, headroom: float = 0.1) -> None:
    """Axis labels and ticks: counts with integer ticks and thousands separators, other figures plain (no
    offset, no scientific notation); x log2 when its values are powers of two, integer ticks for integers.
    Bars get `headroom` (a share of the axis) above the tallest for its figure."""
    from matplotlib.ticker import MaxNLocator, NullLocator, ScalarFormatter, StrMethodFormatter

    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    if count:
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax.yaxis.set_major_formatter(StrMethodFormatter("{x:,.0f}"))
    else:
        plain = ScalarFormatter(useOffset=False)
        plain.set_scientific(False)
        ax.yaxis.set_major_formatter(plain)
    if x is None:
        ax.margins(y=headroom)  # room above the tallest bar for its figure
        if count:  # a count is never below 0; all 0, the axis would run from -0.055 and label "-0"
            ax.set_ylim(bottom=0, top=max(ax.get_ylim()[1], 1))
        # Slanted names end under their bars, so that long ones do not run into the next.
        ax.tick_params(axis="x", labelrotation=30)
        for name in ax.get_xticklabels():
            name.set_horizontalalignment("right")
            name.set_rotation_mode("anchor")
        return
    if count and ax.get_ylim()[1] < 1:  # lines of counts all 0: the axis ran from -0.055 and labelled 0 and -0
        ax.set_ylim(-0.05, 1)  # the lines at 0 whole, above the axis, with ticks 0 and 1
    ax.set_xlabel(x.replace("_", " "))
    values = sorted(_numbers(xvalues.unique()))
    if _powers_of_two(values):
        ax.set_xscale("log", base=2)
        ax.set_xticks(values)
        ax.xaxis.set_major_formatter(ScalarFormatter())
        ax.xaxis.set_minor_locator(NullLocator())
    elif _integers(values) and len(values) <= 12:
        ax.set_xticks(values)  # a tick at each grid value
    elif _integers(values):
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))


def compare_plot(df, swept, path: str, title: str = "", precondition: str | None = None) -> None:
    """`compare` written to `path` (the format its extension names), atomically."""
    from .output import save_figure

    save_figure(compare(df, swept, title=title, precondition=precondition), path, dpi=120)


#: Binary units for bytes, and units of time from microseconds, as axis labels write them.
_BYTE_UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB")
_TIME_UNITS = ((86400e6, "d"), (3600e6, "h"), (60e6, "min"), (1e6, "s"), (1e3, "ms"), (1.0, "µs"))
_COUNT_UNITS = ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"))


def human_bytes(value: float) -> str:
    """``4 KiB``, ``1.5 MiB``: bytes in the largest binary unit that keeps the number at least 1."""
    unit = 0
    while abs(value) >= 1024 and unit < len(_BYTE_UNITS) - 1:
        value /= 1024
        unit += 1
    return f"{value:.4g} {_BYTE_UNITS[unit]}"


def human_us(value: float) -> str:
    """``250 µs``, ``1 ms``, ``2.5 s``, ``3 min``: microseconds in the largest unit that keeps the number >= 1."""
    if value == 0:
        return "0"
    scale, unit = next(((s, u) for s, u in _TIME_UNITS if abs(value) >= s), _TIME_UNITS[-1])
    return f"{value / scale:.4g} {unit}"


def human_count(value: float) -> str:
    """``950``, ``10k``, ``2.5M``."""
    scale, unit = next(((s, u) for s, u in _COUNT_UNITS if abs(value) >= s), (1.0, ""))
    return f"{value / scale:.4g}{unit}"


#: Tick values of a time axis in microseconds: decades up to 10 s, then the units people count in.
_TIME_TICKS_US = (1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 60e6, 600e6, 3600e6, 36000e6, 86400e6, 864000e6)


def log_ticks(ax, high: float, kind: str, most: int = 7, low: float = 0) -> None:
    """Major ticks of a log (or symlog from 0) x axis from `low` up to `high`, labelled in human units and thinned
    to at most `most` so the labels never collide: powers of two for bytes (1 KiB, 1 MiB, ... always among them),
    decades for counts (powers of two up to 64), decades then minutes, hours and days for times; 0 too on a symlog
    axis from 0 (in place of 1 on a wide axis, where the two would touch). Minor ticks are dropped."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

    high = max(high, 1)
    steps: tuple[int, ...]
    if kind == "bytes":
        values, label = [2.0 ** k for k in range(int(math.log2(high)) + 1)], human_bytes
        steps = (1, 2, 5, 10, 20, 30)  # dividing 10, so 2^10k (1 KiB, 1 MiB, ...) stay
    elif kind == "us":
        values, label, steps = [v for v in _TIME_TICKS_US if v <= high], human_us, (1, 2, 3, 4, 5)
    elif high <= 64:  # a few log2 bins (writes per page: 1, 2, 4): a tick under each, where decades gave 1 only
        values, label, steps = [2.0 ** k for k in range(int(math.log2(high)) + 1)], human_count, (1, 2)
    else:
        values, label, steps = [10.0 ** k for k in range(int(math.log10(high)) + 1)], human_count, (1, 2, 3, 4, 5)
    if low and sum(v >= low for v in values) < 2:  # a narrow axis between two decades: its powers of two
        values, steps = [2.0 ** k for k in range(int(math.log2(low)), int(math.log2(high)) + 1)], (1, 2)
    shown = sum(v >= low for v in values)
    step = next((s for s in steps if math.ceil(shown / s) <= most), steps[-1])
    # Thinned from the first value of the kind's, not the first shown, so 1 KiB, 1 MiB, ... stay.
    ticks = [v for i, v in enumerate(values) if i % step == 0 and v >= low]
    if ax.get_xscale() == "symlog" and low == 0:
        ticks = [0.0] + [v for v in ticks if v > 1 or len(values) < 6]
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: "0" if v == 0 else label(v)))
    ax.xaxis.set_minor_locator(NullLocator())


def _binary_scale(high: float) -> tuple[float, str]:
    """(divisor, unit) that writes byte values up to `high` as numbers below 1024."""
    unit = 0
    while high >= 1024 ** (unit + 1) and unit < len(_BYTE_UNITS) - 1:
        unit += 1
    return float(1024 ** unit), _BYTE_UNITS[unit]


def _count_scale(high: float) -> tuple[float, str]:
    """(divisor, word) that writes counts up to `high` as numbers below 1000: thousands, millions, ..."""
    for scale, word in ((1e9, "billions"), (1e6, "millions"), (1e3, "thousands")):
        if high >= scale:
            return scale, word
    return 1.0, ""


def hottest_blocks_text(info: dict) -> str:
    """The share of page writes that the hottest 0.2% and 1% of written blocks take, with the blocks each
    counts: the engine counts whole blocks, ceil(n x 2 / 1000) and ceil(n / 100), so on a small trace (97
    blocks) both are its one hottest block, said once, not as "0.2%" and "1%" with the same share."""
    n = info["written_blocks"]
    k02, k1 = -(-n * 2 // 1000), -(-n // 100)
    share02, share1 = info["write_share_hottest_0_2pct_blocks"], info["write_share_hottest_1pct_blocks"]
    if k02 == k1:
        return f"{share02:.1%} of page writes hit the hottest {k02:,} of {n:,} written blocks ({k02 / max(n, 1):.1%})"
    return (f"{share02:.1%} of page writes hit the hottest 0.2% of written blocks ({k02:,} of {n:,}), {share1:.1%} "
            f"the hottest 1% ({k1:,})")


def refs_plot(refs: dict, path: str, title: str = ""):
    """003 Figs. 3-4: page writes per logical block (left) and the logical address of each write request in
    trace order (right). A few very hot blocks (FAT sectors, directory entries, an index file) stand out as
    tall marks on the left and as horizontal lines on the right. Addresses are in binary units, request
    numbers in thousands or millions, never with an axis offset. Saved to `path` (atomically); returns the
    figure."""
    from matplotlib.figure import Figure

    from .output import save_figure

    info = refs["info"]
    block_bytes = info["block_bytes"]
    fig = Figure(figsize=(12, 4.6))
    ax_count, ax_order = fig.subplots(1, 2)
    high = max([*refs["blocks"], *refs["timeline_block"], 0]) * block_bytes + block_bytes
    divisor, unit = _binary_scale(high)
    ax_count.vlines([b * block_bytes / divisor for b in refs["blocks"]], 1, refs["writes"], linewidth=1.0,
                    color="tab:red")
    ax_count.set_yscale("log")
    ax_count.set_ylim(bottom=0.8)
    ax_count.set_xlabel(f"logical address ({unit}), in blocks of {human_bytes(block_bytes)}")
    ax_count.set_ylabel("page writes to the block")
    ax_count.set_title("page writes per logical block", fontsize="medium")
    n_writes = max([*refs["timeline_write"], 0]) + 1
    count_div, word = _count_scale(n_writes)
    ax_order.scatter([w / count_div for w in refs["timeline_write"]],
                     [b * block_bytes / divisor for b in refs["timeline_block"]],
                     s=2, color="tab:blue", alpha=0.5, linewidths=0)
    stride = refs["timeline_stride"]
    ax_order.set_xlabel("write request number" + (f" ({word})" if word else "")
                        + (f", 1 in {stride:,} shown" if stride > 1 else ""))
    ax_order.set_ylabel(f"logical address ({unit})")
    ax_order.set_title("address of each write, in trace order", fontsize="medium")
    for ax in (ax_count, ax_order):
        ax.grid(alpha=0.3)
        ax.ticklabel_format(axis="x", style="plain", useOffset=False)
    ax_order.ticklabel_format(axis="y", style="plain", useOffset=False)
    fig.suptitle(f"{title}\n{hottest_blocks_text(info)}")
    fig.tight_layout()
    save_figure(fig, path, dpi=120)
    return fig


#: The report keys that carry a response-time CDF (the multi-chip array model's), by request kind.
CDF_KEYS = (("read", "response_us.read.cdf"), ("write", "response_us.write.cdf"))


def latency_cdfs(df, swept=None, title: str = ""):
    """Response-time CDFs (queue + service, the array model's `response_us.<kind>.cdf`) of every run of a
    comparison: one panel per request kind, one line per scheme and swept value. Times spread over a decade
    or more are on a log axis, else on a linear one (a log axis within one decade labels one tick or none).
    A curve the same as an earlier one says so in its label, as it is drawn over it."""
    import json

    from matplotlib.figure import Figure
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    from . import _core
    from ._registry import NO_RESPONSE_TIMES
    from .output import short_names

    # A parameter set to one value for every run names no line apart: the heading states it, and the array's
    # own settings are in its line of the heading.
    settings = _settings(df, swept or [], said=("preset", "capacity", *ARRAY_SETTINGS))
    swept, one_valued = split_swept(df, swept)
    kinds = [(kind, key) for kind, key in CDF_KEYS
             if key in df and any(isinstance(v, str) and v not in ("[]", "") for v in df[key])]
    if not kinds:
        raise _core.FtlsimError(NO_RESPONSE_TIMES)
    fixed = _comma_lines([f for f in one_valued if f.split("=")[0] not in ARRAY_SETTINGS] + settings,
                         6.3 * len(kinds), points=10)
    # Runs on several traces: each line names its trace, which no heading can.
    traces = list(dict.fromkeys(df["trace"])) if "trace" in df else []
    trace_names = short_names(traces) if len(traces) > 1 else {}
    # A Figure of its own, not pyplot's: the caller's backend and open figures stay as they were.
    fig = Figure(figsize=(6.0 * len(kinds), 4.4))
    axes = fig.subplots(1, len(kinds), squeeze=False)
    longest = 0
    # Each run's curve, the same colour and dash in every panel, and what it coincides with in each (for one
    # legend under the panels, where the labels are long).
    curves: dict = {}
    coincide: dict[str, list[str]] = {}
    for ax, (kind, key) in zip(axes[0], kinds):
        rows = [(row, json.loads(row[key]) if isinstance(row[key], str) else []) for _, row in df.iterrows()]
        times = [p[0] for _, points in rows for p in points]
        low = min((t for t in times if t > 0), default=1.0)
        high = max(times, default=low)
        log = high >= 10 * low
        drawn: list[tuple[str, list]] = []
        labels = []
        for i, (row, points) in enumerate(rows):
            if not points:
                continue
            # On a log axis a request without flash work (a read of a page never written, 0 us) is drawn at
            # the shortest time, where the curve starts.
            us = [max(p[0], low) if log else p[0] for p in points]
            share = [p[1] for p in points]
            label = _label({"ftl": row["ftl"], **{k: row[k] for k in swept}})
            if trace_names:
                label += f" on {trace_names[row['trace']]}"
            same = next((earlier for earlier, earlier_points in drawn if earlier_points == points), None)
            drawn.append((label, points))
            # Each line a dash of its own over the one before: schemes with the same curve stay visible.
            labels.append(label + (f" (same curve as {same})" if same else ""))
            curves[label], = ax.step(us, share, where="post", label=labels[-1], linewidth=1.6, color=_color(i),
                                     linestyle=("-", "--", ":", "-.")[i % 4])
            coincide.setdefault(label, []).extend([f"{kind}s as {same}"] if same else [])
        if log:
            ax.set_xscale("log")
            _log_labels(ax.xaxis, human_us, between=high < 100 * low)
        else:
            ax.xaxis.set_major_locator(MaxNLocator(nbins=6, steps=[1, 2, 2.5, 5, 10]))
            ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: human_us(v)))
        ax.set_ylim(0, 1.01)
        # The share of requests a run served without flash work, drawn at `low` rather than at 0 us.
        at_zero = max((p[1] for _, points in rows for p in points if p[0] <= 0), default=0.0)
        clamped = f"\n0 us (no flash work; up to {at_zero:.0%} of {kind}s) drawn at {human_us(low)}" \
            if log and at_zero > 0 else ""
        ax.set_xlabel(f"{kind} response time (queue + service){clamped}")
        ax.set_ylabel(f"fraction of {kind} requests")
        ax.grid(True, which="major", alpha=0.3)
        longest = max([longest, *map(len, labels)])
    heading = [p for p in (title, _device(df), _arrays(df, placement="placement" not in swept), fixed) if p]
    lines = 0.2 * "\n".join(heading).count("\n")  # a heading's line, in inches
    if longest <= LEGEND_RIGHT_CHARS:
        # Beside each panel, not on it: inside, ten curves' legend hid the curves and the axis's label. A panel
        # and its legend (about 0.05 in a character at 8 points) side by side.
        for ax in axes[0]:
            ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0)
        fig.set_size_inches(max(len(kinds), 1) * (6.3 + 0.05 * longest), 4.0 + lines)
        fig.suptitle("\n".join(heading), fontsize=10)
        fig.tight_layout()
        return fig
    # Long labels (several swept settings, "same curve as ..."): one legend under the panels, in as many columns
    # as fit, a run a line with the curves it coincides with; a legend beside each panel made the figure 2,800
    # pixels wide for panels of a fifth of it.
    texts = [label + (f" (same {'; '.join(coincide[label])})" if coincide[label] else "") for label in curves]
    width = max(len(kinds), 1) * 6.3
    columns = max(1, min(len(texts), int(width // (0.055 * max(map(len, texts)) + 0.6))))
    fig.set_size_inches(width, 4.0 + lines + 0.18 * -(-len(texts) // columns) + 0.3)
    fig.set_layout_engine("constrained")
    fig.legend(list(curves.values()), texts, loc="outside lower center", ncols=columns, fontsize=8)
    fig.suptitle("\n".join(heading), fontsize=10)
    return fig




def _arrays(rows, placement: bool = True) -> str:
    """The multi-chip arrays the rows ran on (channels x chips x dies x planes, queue depth, time scale; and
    placement unless not `placement`: the lines' labels name it), a line each when they differ."""
    from .output import array_shape

    shapes = (array_shape(row, placement) for _, row in rows.iterrows())
    return "\n".join(dict.fromkeys(s for s in shapes if s))


def latency_cdf_plot(df, swept, path: str, title: str = "") -> None:
    """`latency_cdfs` written to `path` (the format its extension names), atomically. A comparison without
    response times (the array model off) is bad input."""
    from . import _core
    from .output import save_figure

    try:
        figure = latency_cdfs(df, swept, title=title)
    except _core.FtlsimError as e:
        raise _core.FtlsimError(f"--plot-latency: {e}") from None
    save_figure(figure, path, dpi=120)
