"""The multi-chip array model from Python and the command line: its report keys, `compare --plot-latency`
(response-time CDFs per scheme), and a clear error where there are no response times to draw."""


import json
import warnings
from pathlib import Path

import matplotlib.image
import pytest
from click.testing import CliRunner
from matplotlib.backends.backend_agg import FigureCanvasAgg

import ftlsim
from ftlsim.cli import main

WORKLOAD = "uniform:writes=4000,seed=1,read_share=0.3"


def test_an_array_run_reports_response_times_throughput_and_utilization():
    r = ftlsim.simulate(WORKLOAD, ftl="dftl", preset="mqsim-default", blocks_per_plane=1, queue_depth=8)
    d = r.to_dict()
    assert d["array.channels"] == 8 and d["array.planes_per_die"] == 2 and d["array.queue_depth"] == 8
    assert d["config.pages_per_block"] == 256 * 128
    assert 0 < d["utilization.die.mean"] <= d["utilization.die.max"] <= 1
    assert d["response_us.write.count"] + d["response_us.read.count"] == 4000
    assert d["response_us.write.p50"] <= d["response_us.write.p99"] <= d["response_us.write.max"]
    # Closed loop at depth 8: about 8 requests in the system, and Little's law.
    assert 7 < d["queue.depth.mean"] <= 8 and d["queue.depth.max"] == 8
    mean = (d["response_us.read.mean"] * d["response_us.read.count"]
            + d["response_us.write.mean"] * d["response_us.write.count"]) / 4000
    assert abs(d["queue.depth.mean"] - d["throughput.iops"] / 1e6 * mean) < 0.01 * d["queue.depth.mean"]
    cdf = d["response_us.write.cdf"]
    assert cdf[-1] == [d["response_us.write.max"], 1.0] and len(cdf) == 106


def test_the_single_chip_has_no_array_keys():
    d = ftlsim.simulate("uniform:writes=500,seed=1", ftl="page").to_dict()
    assert not any(k.startswith(("response_us.", "throughput.", "utilization.", "queue.")) for k in d)


def test_compare_plot_latency_draws_cdfs(tmp_path):
    out = tmp_path / "cdf.png"
    result = CliRunner().invoke(main, ["compare", WORKLOAD, "--ftl", "page,dftl", "-p", "queue_depth=4",
                                       "-p", "channels=2", "--plot-latency", str(out)])
    assert result.exit_code == 0, result.output
    height, width, _ = matplotlib.image.imread(out).shape
    assert width > 1000 and height > 400  # two panels, read and write


def test_plot_latency_without_response_times_is_bad_input_before_any_run(tmp_path, monkeypatch):
    def no_run(*args, **kwargs):
        raise AssertionError("a run started")

    monkeypatch.setattr(ftlsim.sim, "run_many", no_run)
    out = tmp_path / "cdf.png"
    result = CliRunner().invoke(main, ["compare", "uniform:writes=300,seed=1", "--ftl", "page,fast",
                                       "--plot-latency", str(out)])
    assert result.exit_code == 2, result.output
    assert "no response times" in result.output and "queue_depth" in result.output
    assert not out.exists()


def test_which_runs_have_the_array_model():
    from ftlsim.sim import array_model_on

    def on(**run):
        return array_model_on({"trace": "uniform:writes=10", **run})

    assert not on(ftl="page")
    assert not on(ftl="page", preset="lee2007", channels=1)
    assert on(preset="mqsim-default")
    assert not on(preset="mqsim-default", channels=1, chips_per_channel=1, dies_per_chip=1, planes_per_die=1)
    assert on(planes_per_die=2)
    assert on(queue_depth=1) and on(time_scale=1.0)
    assert on(channels=0)  # refused by the run itself, with its own error, not as "no response times"


def test_bad_array_settings_are_bad_input():
    for option, says in (("channels=0", "e.g. -p channels=1"), ("queue_depth=0", "e.g. -p queue_depth=32"),
                         ("time_scale=-1", "e.g. -p time_scale=1")):
        result = CliRunner().invoke(main, ["run", "uniform:writes=10", "-p", option])
        assert result.exit_code == 2, result.output
        assert option in result.output and says in result.output, result.output



def test_array_settings_out_of_range_name_a_value_that_runs():
    def error(*options, ftl="page"):
        result = CliRunner().invoke(main, ["run", "uniform:writes=10", "--capacity", "4MiB", "--ftl", ftl,
                                           *[a for o in options for a in ("-p", o)]])
        assert result.exit_code == 2, result.output
        return " ".join(result.output.split())

    # The planes in all were named as one key with no fix; the largest factor is lowered to what fits.
    assert error("channels=2", "dies_per_chip=100000") == (
        "error: invalid parameter: device: -p dies_per_chip=100000 makes 2 x 1 x 100000 x 1 = 200,000 planes "
        "(channels x chips_per_channel x dies_per_chip x planes_per_die), more than the 4,096 an array may have "
        "(MQSim's default is 8 x 4 x 2 x 2); e.g. -p dies_per_chip=2048")
    assert "e.g. -p command_us=0" in error("command_us=-1")  # it suggested 200 us, a program's time
    assert "-p channel_width_bytes=0 must be at least 1: a channel moves at least a byte a transfer" in \
        error("channel_width_bytes=0")
    # Per die, a spare stated is each die's instance's, and the error says so.
    assert ("-p extra_blocks=1 is too few: scheme `tiny` needs 51 extra blocks on each die (placement=per-die: "
            "each die's instance has the spare stated)") in error("channels=2", "dies_per_chip=2",
                                                                  "placement=per-die", "extra_blocks=1", ftl="tiny")


def test_extra_blocks_past_the_logical_blocks_is_an_error_of_extra_blocks():
    # page takes its spare as over_provisioning: 300 blocks over 256 was "over_provisioning=1.171875 is not a
    # fraction", an option the run was not given.
    result = CliRunner().invoke(main, ["run", "uniform:writes=10", "--capacity", "4MiB", "-p", "extra_blocks=300"])
    assert result.exit_code == 2, result.output
    assert " ".join(result.output.split()) == (
        "error: invalid parameter: -p extra_blocks=300 is more than the 256 logical blocks: scheme `page` takes a "
        "spare of at most its logical capacity (over_provisioning=1); e.g. -p extra_blocks=256")


def test_the_latency_plot_says_the_array_it_ran_on():
    from ftlsim.plot import latency_cdfs

    df = ftlsim.sweep(WORKLOAD, ["page", "fast"], channels=2, dies_per_chip=2, queue_depth=4, time_scale=2)
    title = latency_cdfs(df, title="a title").get_suptitle()
    assert title.splitlines() == ["a title", "lee2007, 64.0 MiB",
                                  "2 channels x 1 chip x 2 dies x 1 plane striped, queue depth 4, time scale 2"]


def test_placement_per_die_runs_an_instance_per_die_and_is_echoed():
    d = ftlsim.simulate(WORKLOAD, ftl="page", channels=2, placement="per-die", queue_depth=4).to_dict()
    # Each die's instance has the chip's 32-page blocks (striped over 2 dies they would be 64 pages).
    assert d["array.placement"] == "per-die" and d["config.pages_per_block"] == 32
    assert '"placement":"per-die"' in d["config.resolved"]
    result = CliRunner().invoke(main, ["run", WORKLOAD, "-p", "channels=2", "-p", "placement=perdie"])
    assert result.exit_code == 2
    assert "placement=perdie must be striped" in result.output and "e.g. -p placement=per-die" in result.output


def test_the_latency_plot_shows_a_curve_drawn_over_another_and_reads_a_narrow_range():
    from ftlsim.plot import latency_cdfs

    # On one die, without garbage collection, page and FAST time every write alike: FAST's curve lies on page's.
    df = ftlsim.sweep("uniform:writes=300,seed=1", ["page", "fast"], grid={"pages_per_block": [32]}, queue_depth=4)
    assert (df["flash.erases"] == 0).all()
    fig = latency_cdfs(df, ["pages_per_block"])
    fig.canvas.draw()
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["page-mapped", "FAST (same curve as page-mapped)"]
    # A parameter with one value names no line: the heading states it.
    assert fig.get_suptitle().splitlines()[-1] == "pages_per_block=32"
    # Times within a decade: a linear axis, several ticks labelled.
    assert ax.get_xscale() == "linear"
    assert len([t for t in ax.get_xticklabels() if t.get_text()]) >= 4


def test_the_latency_plot_heading_leaves_to_the_labels_what_they_name():
    from ftlsim.plot import latency_cdfs

    df = ftlsim.sweep(WORKLOAD, ["page"], grid={"placement": ["striped", "per-die"], "channels": [2]},
                      queue_depth=4)
    fig = latency_cdfs(df, ["placement", "channels"])
    # The placement is each line's; the channels are the array line's: no line says them twice.
    assert fig.get_suptitle().splitlines()[-1] == "2 channels x 1 chip x 1 die x 1 plane, queue depth 4, time scale 1"
    assert [t.get_text() for t in fig.axes[0].get_legend().get_texts()] == [
        "page-mapped, placement=striped", "page-mapped, placement=per-die"]


def test_the_latency_plot_s_legends_stand_beside_the_curves_and_each_array_has_a_line():
    from ftlsim.plot import latency_cdfs

    # Inside the axes, ten curves' legend hid the curves and the y label; two arrays on one line of the heading
    # ran off both edges of the figure.
    df = ftlsim.sweep(WORKLOAD, ["page", "fast"], grid={"queue_depth": [4, 8]}, channels=2)
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    fig = latency_cdfs(df, ["queue_depth"])
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    for ax in fig.axes:
        legend, panel = ax.get_legend().get_window_extent(renderer), ax.get_window_extent(renderer)
        assert legend.x0 > panel.x1, (legend, panel)
        assert legend.x1 <= fig.bbox.x1
    arrays = [line for line in fig.get_suptitle().splitlines() if "channels" in line]
    assert arrays == ["2 channels x 1 chip x 1 die x 1 plane striped, queue depth 4, time scale 1",
                      "2 channels x 1 chip x 1 die x 1 plane striped, queue depth 8, time scale 1"]


def test_latency_cdfs_leave_pyplot_alone_name_each_trace_and_refuse_runs_without_response_times():
    import matplotlib
    import matplotlib.pyplot as plt
    import pytest

    backend, open_figures = matplotlib.get_backend(), plt.get_fignums()
    df = ftlsim.sweep([WORKLOAD, "uniform:writes=3000,seed=2"], ["page", "fast"], capacity="2MiB", queue_depth=4,
                      channels=2, backend="threads")
    fig = ftlsim.plot.latency_cdfs(df, [])
    assert (matplotlib.get_backend(), plt.get_fignums()) == (backend, open_figures)  # a notebook's stay
    labels = [t.get_text() for t in fig.legends[0].get_texts()]  # long labels: one legend under the panels
    # which leaves each panel most of its half (a legend beside each made them a fifth of the figure).
    FigureCanvasAgg(fig).draw()
    assert all(ax.get_window_extent().width > 0.35 * fig.get_window_extent().width for ax in fig.axes)
    assert all(ax.get_window_extent().y0 > fig.legends[0].get_window_extent().y1 for ax in fig.axes)
    assert labels == [f"{s} on {t}" for t in (WORKLOAD, "uniform:writes=3000,seed=2") for s in ("page-mapped", "FAST")]
    with pytest.raises(ftlsim.FtlsimError, match="no response times"):
        ftlsim.plot.latency_cdfs(ftlsim.sweep("uniform:writes=300", ["page"], backend="threads"))


def test_the_plots_headings_say_the_settings_every_run_ran_with():
    # The table's "every row" line said precondition=full and the NVRAM; the latency plot said neither, the
    # comparison plot no NVRAM, though it doubled the elapsed time.
    from ftlsim.plot import compare, latency_cdfs

    df = ftlsim.sweep("uniform:writes=2000,seed=1", ["page", "fast"], channels=2, queue_depth=4, capacity="1MiB",
                      precondition="full", nvram="16KiB", nvram_policy="lru")
    latency = latency_cdfs(df).get_suptitle().splitlines()
    assert latency[-1] == "precondition=full, nvram=16.0 KiB, nvram_policy=lru", latency
    # The array's settings too, which the comparison plot has no line of its own for (a sweep file's channels=2
    # were in neither its heading nor the table's "every row" line); the latency plot's array line says them.
    assert compare(df, precondition="full").get_suptitle() == ("precondition full, channels=2, queue_depth=4, "
                                                               "nvram=16.0 KiB, nvram_policy=lru")


def test_placement_per_die_on_one_die_is_warned_of():
    # It ran as striped without a word, so a grid's per-die and striped rows read alike.
    result = CliRunner().invoke(main, ["run", "uniform:writes=300,seed=1", "--capacity", "1MiB", "--ftl", "fast",
                                       "-p", "placement=per-die"])
    assert result.exit_code == 0, result.output
    assert ("-p placement=per-die on one die runs one scheme instance, as striped does: give the device dies "
            "(-p channels=2, or a preset of an array)") in " ".join(result.stderr.split())
    result = CliRunner().invoke(main, ["run", "uniform:writes=300,seed=1", "--capacity", "1MiB", "--ftl", "fast",
                                       "-p", "placement=per-die", "-p", "channels=2"])
    assert "placement=per-die on one die" not in result.stderr
    # A grid's table too, once for the schemes it is true of.
    result = CliRunner().invoke(main, ["compare", "uniform:writes=300,seed=1", "--capacity", "1MiB", "--ftl",
                                       "page,fast", "-p", "placement=striped,per-die"])
    assert result.exit_code == 0, result.output
    assert ("warning: page, fast on uniform:writes=300,seed=1: -p placement=per-die on one die runs one scheme "
            "instance") in " ".join(result.stderr.split())


def test_a_sweep_files_array_settings_are_in_the_every_row_line(tmp_path):
    # channels, dies_per_chip, queue_depth, time_scale and placement from the file ran and were said nowhere.
    config = tmp_path / "sweep.toml"
    config.write_text('traces = ["uniform:writes=300,seed=1"]\ncapacity = "1MiB"\nchannels = 2\ndies_per_chip = 2\n'
                      'queue_depth = 4\ntime_scale = 0.5\nplacement = "per-die"\n[schemes]\npage = {}\nfast = {}\n')
    result = CliRunner().invoke(main, ["sweep", "-c", str(config)])
    assert result.exit_code == 0, result.output
    assert ("every row: channels=2, dies_per_chip=2, placement=per-die, queue_depth=4, time_scale=0.5, "
            "preset=lee2007") in " ".join(result.stdout.split()), result.stdout


def test_a_time_scale_that_stretches_arrivals_past_a_double_s_nanosecond_is_warned_of(tmp_path):
    trace = tmp_path / "two.csv"
    trace.write_text("W,0,4096,,0\nW,8192,4096,,10000000\n")  # 10 s apart: 10^13 us at time_scale=1e6
    with pytest.warns(RuntimeWarning, match=r"^the run spans 116 days of arrivals \(time_scale=1000000\): at "
                                            r"times this large, response times are exact to 0.0022 us only"):
        ftlsim.simulate(str(trace), capacity="1MiB", time_scale=1e6)
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always", RuntimeWarning)
        ftlsim.simulate(str(trace), capacity="1MiB", time_scale=1e5)  # 10^12 us: a quarter of a nanosecond
    assert not [w for w in said if "days of arrivals" in str(w.message)]


def test_a_time_scale_on_a_trace_without_times_is_warned_of_and_a_burst_at_time_0_waits(tmp_path):
    with pytest.warns(RuntimeWarning, match=r"^time_scale=0.5 has no effect: the trace has no arrival times, so its "
                                            r"requests ran as a closed loop, queue_depth=32 in the device at a time"):
        r = ftlsim.simulate("uniform:writes=200,seed=1", capacity="1MiB", time_scale=0.5)
    assert r["array.timed_requests"] == 0
    # 20 writes at time 0 of a timed trace arrive together and queue; they were a closed loop of one at a time.
    trace = tmp_path / "burst.csv"
    trace.write_text("".join(f"W,{i * 4096},4096,,0\n" for i in range(20)) + "W,0,4096,,1000000\n")
    r = ftlsim.simulate(str(trace), capacity="1MiB", queue_depth=1)
    assert (r["array.timed_requests"], r["queue.depth.max"]) == (21, 20)


def test_the_latency_plot_says_where_it_draws_requests_of_no_flash_work_on_a_log_axis():
    from ftlsim.plot import latency_cdfs

    # Reads of pages never written take 0 us; a log axis draws them at the shortest time, and says so.
    financial1 = Path(__file__).resolve().parents[2] / "shared" / "traces" / "umass_financial1_first10k.ssdsim.ascii"
    df = ftlsim.sweep(str(financial1), ["page"], capacity="64MiB", wrap=True, channels=2, dies_per_chip=2,
                      time_scale=0.5)
    fig = latency_cdfs(df)
    reads, writes = fig.axes[0], fig.axes[1]
    assert reads.get_xscale() == "log"
    at_zero = max(share for us, share in json.loads(df["response_us.read.cdf"][0]) if us == 0)
    assert at_zero > 0.1
    assert reads.get_xlabel().splitlines()[1].startswith(f"0 us (no flash work; up to {at_zero:.0%} of reads) "
                                                         f"drawn at ")
    assert "\n" not in writes.get_xlabel()
