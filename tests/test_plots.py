"""Sweep plots (`compare --plot`, `sweep` plots, `ftlsim.plot.compare`): every scheme that ran is drawn,
schemes without the swept parameter as labelled reference lines; a row of panels per trace, each titled
with its trace and device; one legend outside the axes; integer axes with integer ticks; seconds."""

import re
import sys
from pathlib import Path

import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg

import ftlsim
from ftlsim.cli import grid_columns
from ftlsim.config import sweep_parts

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
TRACE = "uniform:writes=3000,seed=1"


def drawn(fig):
    FigureCanvasAgg(fig).draw()
    return fig


def panels(fig) -> dict:
    """Each row of panels (a subfigure) by its title."""
    return {sub._suptitle.get_text(): sub.axes for sub in fig.subfigs}


@pytest.fixture(scope="module")
def readme_sweep():
    """The README's sweep.toml, run without its outputs, and its figure."""
    block = re.search(r"```toml\n# sweep.toml\n(.*?)```", (ROOT / "README.md").read_text(), re.S).group(1)
    traces, schemes, grid, common, _ = sweep_parts(tomllib.loads(block))
    df = ftlsim.sweep(traces, schemes, grid, backend="threads", **common)
    return df, drawn(ftlsim.plot.compare(df, grid_columns(schemes, grid), title="sweep"))


def test_the_readme_sweep_draws_page_as_a_labelled_reference_line_in_every_panel(readme_sweep):
    df, fig = readme_sweep
    assert set(df["status"]) == {"done"}
    rows = panels(fig)
    # Each panel is titled with its trace's shortest distinguishing name (the settings both share are dropped).
    assert set(rows) == {"uniform: lee2007, 8.0 MiB", "hotcold: lee2007, 8.0 MiB"}
    for title, axes in rows.items():
        trace = f"{title.split(':')[0]}:writes=20000,seed=1"
        page = df[(df["trace"] == trace) & (df["ftl"] == "page")].iloc[0]
        erases, seconds = axes
        for ax, value in ((erases, page["flash.erases"]), (seconds, page["time_us.total"] / 1e6)):
            lines = [line for line in ax.get_lines() if line.get_label() == "page-mapped (no log_blocks)"]
            assert len(lines) == 1, [line.get_label() for line in ax.get_lines()]
            assert list(lines[0].get_ydata()) == [value, value] and list(lines[0].get_xdata()) == [0, 1]
            assert any("page-mapped" in t.get_text() for t in ax.texts)  # named on the plot, not only the legend
            labels = [line.get_label() for line in ax.get_lines()]
            assert labels.count("FAST") == 1 and labels.count("BAST") == 1
            assert len(next(line for line in ax.get_lines() if line.get_label() == "FAST").get_xdata()) == 3


def test_one_legend_outside_the_axes_and_integer_log2_ticks(readme_sweep):
    _, fig = readme_sweep
    assert len(fig.legends) == 1 and all(ax.get_legend() is None for ax in fig.axes)
    legend = fig.legends[0]
    assert [t.get_text() for t in legend.get_texts()] == ["page-mapped (no log_blocks)", "FAST", "BAST"]
    box = legend.get_window_extent()
    assert all(box.x0 >= ax.get_window_extent().x1 for ax in fig.axes)  # right of every panel
    erases, seconds = fig.axes[:2]
    assert erases.get_xscale() == "log" and list(erases.get_xticks()) == [4, 8, 16]
    assert [t.get_text() for t in erases.get_xticklabels()] == ["4", "8", "16"]
    assert all(float(t.get_text().replace(",", "")).is_integer() for t in erases.get_yticklabels())
    assert seconds.get_ylabel() == "elapsed flash time (s)"
    assert seconds.yaxis.get_offset_text().get_text() == "" and erases.yaxis.get_offset_text().get_text() == ""
    assert "precondition full" in fig._suptitle.get_text()


def test_two_parameter_plot_names_both_parameters_and_uses_log2_axes():
    df = ftlsim.sweep(TRACE, ["fast"], {"log_blocks": [2, 4, 8], "pages_per_block": [16, 32]}, capacity="1MiB",
                      backend="threads", precondition="full")
    fig = drawn(ftlsim.plot.compare(df, ["log_blocks", "pages_per_block"], title="t"))
    texts = [t.get_text() for t in fig.legends[0].get_texts()]
    assert texts == ["FAST, pages_per_block=16", "FAST, pages_per_block=32"]
    assert "x: log_blocks" in fig.legends[0].get_title().get_text()
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and list(ax.get_xticks()) == [2, 4, 8]
    assert len(ax.get_lines()) == 2 and all(len(line.get_xdata()) == 3 for line in ax.get_lines())
    assert list(panels(fig)) == [f"{TRACE}: lee2007, 1.0 MiB"]


def test_integer_grid_values_stay_integers_in_labels_and_ticks():
    df = ftlsim.sweep(TRACE, {"page": {}, "dftl": {"cmt_entries": [48, 80, 112], "gc_reserve_blocks": [2, 3]}},
                      capacity="1MiB", backend="threads")
    # The sweep keeps whole numbers whole beside page's gap; a frame where the gap made them floats (one read
    # back from an older CSV, say) is drawn the same way.
    assert sorted({v for v in df["cmt_entries"] if v == v}) == [48, 80, 112]
    assert all(isinstance(v, int) for v in df["cmt_entries"] if v == v)
    for frame in (df, df.astype({"cmt_entries": float})):
        fig = drawn(ftlsim.plot.compare(frame, ["cmt_entries", "gc_reserve_blocks"]))
        texts = [t.get_text() for t in fig.legends[0].get_texts()]
        assert "DFTL, gc_reserve_blocks=2" in texts and not any(".0" in t for t in texts), texts
        # A gap in the other swept parameter loses no scheme; page's own gc_reserve_blocks is the one it ran with.
        assert "page-mapped, gc_reserve_blocks=1 (no cmt_entries)" in texts
        ax = fig.axes[0]
        assert ax.get_xscale() == "linear"
        ticks = [t for t in ax.get_xticks() if ax.get_xlim()[0] <= t <= ax.get_xlim()[1]]
        assert ticks and all(float(t).is_integer() for t in ticks)


def test_paper_names():
    from ftlsim.plot import paper_name

    assert [paper_name(s) for s in ("bast", "fast", "ofast", "nftl", "dftl", "tiny", "mast")] == [
        "BAST", "FAST", "O-FAST", "NFTL", "DFTL", "TinyFTL", "MAST"]
    assert paper_name("not-a-scheme") == "not-a-scheme"


def test_a_panel_whose_figures_span_more_than_twenty_times_is_drawn_on_a_log_axis():
    import pandas as pd

    # NFTL's elapsed time 90 times page's: on a linear axis every other line would lie flat on the axis.
    df = pd.DataFrame({"trace": ["t.csv"] * 4, "ftl": ["page", "nftl", "fast", "fast"],
                       "log_blocks": [float("nan"), float("nan"), 4, 8], "flash.erases": [1000, 2000, 1500, 1400],
                       "time_us.total": [10e6, 900e6, 40e6, 35e6]})
    fig = drawn(ftlsim.plot.compare(df, ["log_blocks"]))
    erases, seconds = fig.axes
    assert erases.get_yscale() == "linear" and seconds.get_yscale() == "log"
    shown = {t.get_text() for t in seconds.get_yticklabels() + seconds.get_yticklabels(minor=True)
             if t.get_text() and seconds.get_ylim()[0] <= t.get_position()[1] <= seconds.get_ylim()[1]}
    assert {"10", "100"} <= shown, shown
    assert {t.get_text().strip() for t in seconds.texts} == {"page-mapped", "NFTL"}
    # Within three decades, 2 and 5 of each are labelled too: FAST's 55,867 to 61,465 erases over page's 423
    # have labels beside them (the decades alone stop at 10,000).
    df = pd.DataFrame({"trace": ["t.csv"] * 4, "ftl": ["page", "fast", "fast", "fast"],
                       "log_blocks": [float("nan"), 4, 8, 16], "flash.erases": [423, 61465, 59448, 55867],
                       "time_us.total": [31e6, 391e6, 379e6, 358e6]})
    erases = drawn(ftlsim.plot.compare(df, ["log_blocks"])).axes[0]
    assert erases.get_yscale() == "log"
    shown = {t.get_text() for t in erases.get_yticklabels() + erases.get_yticklabels(minor=True)
             if t.get_text() and erases.get_ylim()[0] <= t.get_position()[1] <= erases.get_ylim()[1]}
    assert {"20,000", "50,000"} <= shown, shown


def test_a_comparison_without_a_swept_parameter_draws_bars_that_carry_their_figures():
    import pandas as pd

    df = pd.DataFrame({"trace": ["t.csv"] * 3, "ftl": ["page", "superblock", "last"],
                       "flash.erases": [310, 361, 1134], "time_us.total": [3_067_000, 3_386_955, 10_294_395]})
    fig = drawn(ftlsim.plot.compare(df, []))
    erases, seconds = fig.axes
    assert [t.get_text() for t in erases.texts] == ["310", "361", "1,134"]
    assert [t.get_text() for t in seconds.texts] == ["3.067", "3.387", "10.294"]
    assert fig.legends[0].get_title().get_text() == "bars: ftl"
    # Slanted names end under their bars: a long one does not run into the next one's.
    names = erases.get_xticklabels()
    assert [t.get_text() for t in names] == ["page-mapped", "superblock", "LAST"]
    assert all(t.get_horizontalalignment() == "right" for t in names)
    boxes = [t.get_window_extent() for t in names]
    assert all(a.x1 <= b.x0 + 0.5 * (b.x1 - b.x0) for a, b in zip(boxes, boxes[1:]))


def test_a_sweep_of_names_draws_bars_and_a_one_valued_parameter_goes_to_the_heading():
    import pandas as pd

    # placement is names (nothing to put on an axis); channels has one value: bars per scheme and placement.
    df = pd.DataFrame({"trace": ["t.csv"] * 4, "ftl": ["page", "page", "fast", "fast"], "channels": [2] * 4,
                       "placement": ["striped", "per-die"] * 2, "flash.erases": [777, 2609, 3298, 7821],
                       "time_us.total": [23.3e6, 23.5e6, 103.3e6, 72.9e6]})
    fig = drawn(ftlsim.plot.compare(df, ["channels", "placement"], precondition="full"))
    erases = fig.axes[0]
    assert [t.get_text() for t in erases.get_xticklabels()] == [
        "page-mapped, placement=striped", "page-mapped, placement=per-die", "FAST, placement=striped",
        "FAST, placement=per-die"]
    assert fig.legends[0].get_title().get_text() == "bars: ftl, placement"
    assert fig._suptitle.get_text() == "precondition full, channels=2"
    assert erases.get_ylim()[1] > 7821 * 1.05  # room for the tallest bar's figure


def test_thirteen_bars_have_thirteen_colours_and_figures_that_do_not_overlap():
    import pandas as pd

    # Every scheme: the eleventh to thirteenth bars were the first three's colours again, and figures of
    # neighbouring bars of like height ran into each other ("37,86037,860").
    schemes = [s["name"] for s in ftlsim.schemes()]
    erased = [3812, 4927, 20000, 37860, 37860, 9782, 9719, 39744, 34244, 4722, 885, 10544, 1527]
    df = pd.DataFrame({"trace": ["t.csv"] * 13, "ftl": schemes, "flash.erases": erased,
                       "time_us.total": [e * 1e4 for e in erased]})
    fig = drawn(ftlsim.plot.compare(df, []))
    erases = fig.axes[0]
    colours = [tuple(bar.get_facecolor()) for bar in erases.patches]
    assert len(colours) == 13 and len(set(colours)) == 13
    figures = erases.texts
    assert [t.get_text() for t in figures] == [f"{e:,}" for e in erased]
    boxes = [t.get_window_extent() for t in figures]
    assert all(a.x1 <= b.x0 for a, b in zip(boxes, boxes[1:]))
    top = erases.transData.inverted().transform((0, max(b.y1 for b in boxes)))[1]
    assert top <= erases.get_ylim()[1]  # the tallest bar's figure inside the panel


def test_a_legend_of_long_labels_goes_under_the_panels_and_leaves_them_their_width():
    import pandas as pd

    # Two swept settings and a "(same as ...)": at the right, the legend took 40% of the figure, squeezed
    # both panels and covered the heading's end; the reference labels ran from one panel into the next.
    rows = [("page", v, None, 0, 0.6e6) for v in ("greedy", "cost-benefit")]
    rows += [(s, None, lb, e, e * 4e3) for s, base in (("fast", 500), ("bast", 1600)) for lb, e in
             ((4, base), (8, base * 0.8))]
    df = pd.DataFrame(rows, columns=["ftl", "victim", "log_blocks", "flash.erases", "time_us.total"])
    df["trace"], df["nvram_policy"] = "t.csv", "metadata"
    fig = drawn(ftlsim.plot.compare(df, ["victim", "log_blocks", "nvram_policy"], precondition="none"))
    legend = fig.legends[0].get_window_extent()
    width = fig.get_window_extent().width
    for ax in fig.axes:
        panel = ax.get_window_extent()
        assert panel.width > 0.35 * width and panel.y0 > legend.y1
    assert not fig._suptitle.get_window_extent().overlaps(legend)
    assert "page-mapped, victim=cost-benefit" in [t.get_text().strip() for t in fig.axes[0].texts][0]
    assert "same as" not in " ".join(t.get_text() for t in fig.axes[0].texts)


def test_a_long_heading_of_settings_wraps_clear_of_a_legend_beside_the_panels():
    import pandas as pd

    # A sweep file's settings made one line as wide as the figure, whose end ran under the legend.
    df = pd.DataFrame([("page", None, 640, 6e6), ("fast", 4, 1800, 18e6), ("fast", 8, 1100, 11e6)],
                      columns=["ftl", "log_blocks", "flash.erases", "time_us.total"])
    df["trace"] = "t.csv"
    for key, value in (("nvram_regions", "0-64KiB,1MiB-2MiB"), ("read_us", 30), ("nvram", "64.0 KiB"),
                       ("nvram_policy", "region")):
        df[key] = value
    fig = drawn(ftlsim.plot.compare(df, ["log_blocks", "nvram_regions", "read_us", "nvram", "nvram_policy"],
                                    precondition="full"))
    assert "\n" in fig._suptitle.get_text()
    assert not fig._suptitle.get_window_extent().overlaps(fig.legends[0].get_window_extent())


def test_bars_of_a_count_that_is_0_in_every_row_stand_on_0():
    import pandas as pd

    # Matplotlib's limits for all-zero data are -0.055 to 0.055: the erase panel's ticks read "0, ..., -0, -0".
    df = pd.DataFrame({"trace": ["t.csv"] * 2, "ftl": ["page", "fast"], "flash.erases": [0, 0],
                       "time_us.total": [7.4e6, 7.4e6]})
    erases = drawn(ftlsim.plot.compare(df, [], precondition="none")).axes[0]
    assert erases.get_ylim() == (0, 1)
    assert [t.get_text() for t in erases.get_yticklabels()] == ["0", "1"]


def test_a_heading_states_the_precondition_only_where_every_row_ran_it():
    import pandas as pd

    # A sweep's -p precondition=none beside its file's stored points (full): the heading said "precondition
    # full" over both.
    df = pd.DataFrame({"trace": ["t.csv"] * 4, "ftl": ["page", "page", "fast", "fast"],
                       "precondition": ["full", "none"] * 2, "flash.erases": [777, 2, 3298, 71],
                       "time_us.total": [23.3e6, 2.5e6, 103.3e6, 7.9e6]})
    fig = drawn(ftlsim.plot.compare(df, ["precondition"], precondition="full"))
    assert "precondition" not in (fig._suptitle.get_text() if fig._suptitle else "")
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()][:2] == [
        "page-mapped, precondition=full", "page-mapped, precondition=none"]
    fig = drawn(ftlsim.plot.compare(df[df["precondition"] == "none"], [], precondition="full"))
    assert fig._suptitle.get_text() == "precondition none"


def test_the_hot_block_heading_says_the_blocks_it_counts():
    from ftlsim.plot import hottest_blocks_text

    # msr_wdev_1 writes 97 blocks: the hottest 0.2% and 1% are both its one hottest block (whole blocks,
    # rounded up); the heading said "19.9% ... the hottest 0.2% ..., 19.9% the hottest 1%".
    info = ftlsim.trace.info(str(ROOT.parent / "shared" / "traces" / "msr_wdev_1.csv"))
    assert info["written_blocks"] == 97
    assert hottest_blocks_text(info) == "19.9% of page writes hit the hottest 1 of 97 written blocks (1.0%)"
    info = {"written_blocks": 20_000, "write_share_hottest_0_2pct_blocks": 0.31,
            "write_share_hottest_1pct_blocks": 0.52}
    assert hottest_blocks_text(info) == ("31.0% of page writes hit the hottest 0.2% of written blocks (40 of 20,000), "
                                         "52.0% the hottest 1% (200)")


def test_a_line_drawn_over_an_equal_one_says_so_in_the_legend():
    # O-FAST without its lazy merge is FAST: the two lines are one, and O-FAST's is drawn over FAST's.
    df = ftlsim.sweep(TRACE, {"fast": {"log_blocks": [4, 8]}, "ofast": {"log_blocks": [4, 8], "lazy_merge": False},
                              "bast": {"log_blocks": [4, 8]}}, capacity="1MiB", backend="threads")
    fast, ofast = (df[df["ftl"] == s].sort_values("log_blocks") for s in ("fast", "ofast"))
    assert list(fast["flash.erases"]) == list(ofast["flash.erases"])
    fig = drawn(ftlsim.plot.compare(df, ["log_blocks"]))
    texts = [t.get_text() for t in fig.legends[0].get_texts()]
    assert texts == ["FAST", "O-FAST (same as FAST)", "BAST"]
    # Equal in one panel is not enough: a line is the same only where every figure drawn is.
    df.loc[df["ftl"] == "ofast", "time_us.total"] += 1
    texts = [t.get_text() for t in drawn(ftlsim.plot.compare(df, ["log_blocks"])).legends[0].get_texts()]
    assert texts == ["FAST", "O-FAST", "BAST"]


def test_compare_without_its_swept_parameters_finds_them_and_a_name_not_in_the_rows_is_an_error():
    df = ftlsim.sweep(TRACE, ["page", "fast"], {"log_blocks": [4, 8, 16]}, capacity="1MiB", backend="threads")
    fig = drawn(ftlsim.plot.compare(df))  # it drew one bar a scheme: FAST's log_blocks=4 alone
    assert "x: log_blocks" in fig.legends[0].get_title().get_text()
    fast = [line for line in fig.axes[0].get_lines() if line.get_label() == "FAST"]
    assert len(fast) == 1 and list(fast[0].get_xdata()) == [4, 8, 16]
    with pytest.raises(ftlsim.FtlsimError, match="did you mean `log_blocks`"):
        ftlsim.plot.compare(df, ["log_block"])


def test_compare_draws_the_runs_that_finished_and_refuses_rows_with_none(tmp_path):
    bad = tmp_path / "far.csv"
    bad.write_text("W,0,4096\nW,999999999999,4096\n")  # past a 1 MiB device: every run on it fails
    df = ftlsim.sweep([TRACE, str(bad)], ["page", "fast"], capacity="1MiB", backend="threads")
    assert list(df["status"]).count("failed") == 2
    fig = drawn(ftlsim.plot.compare(df))
    assert list(panels(fig)) == [f"{TRACE}: lee2007, 1.0 MiB"]  # not a panel headed "nan, nan TiB"
    with pytest.raises(ftlsim.FtlsimError, match="no run to draw"):
        ftlsim.plot.compare(df[df["status"] == "failed"])


def test_lines_of_counts_all_zero_label_0_and_1_not_minus_0():
    # The erase-count axis of runs that never erased read 0, 0, 0, 0, -0, -0, -0.
    from ftlsim.plot import compare

    df = ftlsim.sweep(TRACE, ["page", "dftl"], {"cmt_entries": [64, 256]}, capacity="4MiB", backend="threads")
    fig = drawn(compare(df, ["cmt_entries"]))
    erases = next(iter(panels(fig).values()))[0]
    low, high = erases.get_ylim()
    shown = [t.get_text() for v, t in zip(erases.get_yticks(), erases.get_yticklabels()) if low <= v <= high]
    assert shown == ["0", "1"] and low < 0 < high  # the lines at 0 drawn whole, above the axis
