"""Sweeps: a TOML sweep, a results store that resumes, failed points kept,
the Dask backend on a real LocalCluster, and plots over two swept parameters."""

import pandas as pd
import pytest
from click.testing import CliRunner

import ftlsim
import ftlsim.sim
from ftlsim.cli import main

TRACE = "uniform:writes=2000,seed=1"
SCHEMES = {"page": {}, "fast": {"log_blocks": [4, 8]}}
FIGURES = ["ftl", "log_blocks", "key", "status", "flash.erases", "flash.page_writes", "time_us.total"]


def counting(monkeypatch) -> list:
    """Records every point actually computed (threads backend: in this process)."""
    computed = []
    real = ftlsim.sim._run_point

    def run_point(kwargs):
        computed.append(kwargs)
        return real(kwargs)

    monkeypatch.setattr(ftlsim.sim, "_run_point", run_point)
    return computed


def test_grid_gives_each_scheme_only_the_parameters_it_takes():
    runs = ftlsim.sim.grid([TRACE], ["page", "fast"], {"log_blocks": [4, 8]})
    assert [(r["ftl"], r.get("log_blocks")) for r in runs] == [("page", None), ("fast", 4), ("fast", 8)]
    with pytest.raises(ftlsim.FtlsimError, match="no scheme of page, block takes parameter `log_blocks`"):
        ftlsim.sim.grid([TRACE], "page,block", {"log_blocks": [4]})


def test_sweep_resumes_computing_only_the_missing_points(tmp_path, monkeypatch):
    import threading

    store = tmp_path / "results.parquet"
    computed = counting(monkeypatch)
    interrupted = threading.Event()
    counted = ftlsim.sim._run_point

    def gated(kwargs):
        # The third point waits for the Ctrl-C, so that a slow main thread (a loaded machine) cannot let the
        # worker finish it and start the fourth before the sweep cancels the queue.
        if len(computed) == 2:
            interrupted.wait(timeout=30)
        return counted(kwargs)

    monkeypatch.setattr(ftlsim.sim, "_run_point", gated)

    def interrupt(done, total):
        if done == 2:
            interrupted.set()
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        ftlsim.sweep(TRACE, {"page": {}, "fast": {"log_blocks": [2, 4, 8]}}, capacity="1MiB", store=store,
                     backend="threads", jobs=1, on_done=interrupt)
    assert len(computed) <= 3  # Ctrl-C cancelled the queued runs (one may have been running)
    assert sorted(pd.read_parquet(store)["status"]) == ["done", "done"]
    computed.clear()
    df = ftlsim.sweep(TRACE, {"page": {}, "fast": {"log_blocks": [2, 4, 8]}}, capacity="1MiB", store=store,
                      backend="threads", jobs=1)
    assert len(computed) == 2 and len(df) == 4 and set(df["status"]) == {"done"}
    computed.clear()
    again = ftlsim.sweep(TRACE, {"page": {}, "fast": {"log_blocks": [2, 4, 8]}}, capacity="1MiB", store=store,
                         backend="threads")
    assert computed == []
    assert again[FIGURES].equals(df[FIGURES])
    assert len(pd.read_parquet(store)) == 4


def test_a_failed_point_is_recorded_and_the_others_kept(tmp_path):
    store = tmp_path / "results.csv"
    df = ftlsim.sweep([TRACE, str(tmp_path / "missing.csv")], ["page"], capacity="1MiB", store=store,
                      backend="threads")
    assert list(df["status"]) == ["done", "failed"]
    assert df["flash.page_writes"].iloc[0] == 2000
    assert "missing.csv" in df["error"].iloc[1]
    # Refused before it ran (bad input, as `run` exits 2 for), not a run that failed; no Python class name.
    assert df["error_kind"].iloc[1] == "input" and not df["error"].iloc[1].startswith("FileNotFoundError")
    saved = pd.read_csv(store)
    assert sorted(saved["status"]) == ["done", "failed"]
    with pytest.raises(ftlsim.FtlsimError, match="1 of 2 runs failed"):
        ftlsim.sweep([TRACE, str(tmp_path / "missing.csv")], ["page"], capacity="1MiB", backend="threads",
                     errors="raise")


def test_local_processes_and_threads_give_the_same_rows():
    a = ftlsim.sweep(TRACE, SCHEMES, capacity="1MiB", jobs=2)
    b = ftlsim.sweep(TRACE, SCHEMES, capacity="1MiB", backend="threads")
    assert a[FIGURES].equals(b[FIGURES])
    assert list(a["flash.page_writes"])[0] == 2000


def test_dask_local_cluster_gives_the_same_rows_as_the_local_backend():
    distributed = pytest.importorskip("dask.distributed")
    local = ftlsim.sweep(TRACE, SCHEMES, capacity="1MiB", backend="threads")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        seen = []
        remote = ftlsim.sweep(TRACE, SCHEMES, capacity="1MiB", client=client, on_done=lambda d, t: seen.append((d, t)))
        assert len(client.scheduler_info()["workers"]) == 2
        with pytest.raises(ftlsim.FtlsimError, match="missing on Dask worker"):
            ftlsim.sweep("/nonexistent/trace.csv", ["page"], client=client)
    assert remote[FIGURES].equals(local[FIGURES])
    assert seen[-1] == (3, 3)


def test_toml_sweep_from_the_command_line(tmp_path):
    (tmp_path / "sweep.toml").write_text(f"""
traces = ["{TRACE}", "hotcold:writes=2000,seed=2"]
capacity = "1MiB"
store = "{tmp_path / 'store'}"
csv = "{tmp_path / 'rows.csv'}"
[schemes]
page = {{}}
fast = {{ log_blocks = [4, 8] }}
""")
    result = CliRunner().invoke(main, ["sweep", "-c", str(tmp_path / "sweep.toml"), "--backend", "threads"])
    assert result.exit_code == 0, result.output
    rows = pd.read_csv(tmp_path / "rows.csv")
    assert len(rows) == 6 and set(rows["status"]) == {"done"}
    assert sorted(rows["log_blocks"].dropna()) == [4, 4, 8, 8]
    assert (tmp_path / "store" / "results.parquet").exists()


def test_a_command_line_value_overrides_a_scheme_s_own_grid_in_the_file(tmp_path):
    (tmp_path / "sweep.toml").write_text(f"""
traces = ["{TRACE}"]
capacity = "1MiB"
[schemes]
page = {{}}
fast = {{ log_blocks = [4, 8] }}
""")
    # -p log_blocks=16 ran fast at 4 and 8, the file's, and said nothing.
    result = CliRunner().invoke(main, ["sweep", "-c", str(tmp_path / "sweep.toml"), "-p", "log_blocks=16",
                                       "--backend", "threads", "--csv", str(tmp_path / "rows.csv")])
    assert result.exit_code == 0, result.output
    rows = pd.read_csv(tmp_path / "rows.csv")
    assert list(rows["ftl"]) == ["page", "fast"] and list(rows["log_blocks"].dropna()) == [16]


def test_compare_with_a_parameter_only_some_schemes_take(tmp_path):
    csv = tmp_path / "c.csv"
    result = CliRunner().invoke(main, ["compare", TRACE, "--ftl", "page,fast", "--capacity", "1MiB",
                                       "-p", "log_blocks=4,8", "--csv", str(csv), "--jobs", "1"])
    assert result.exit_code == 0, result.output
    rows = pd.read_csv(csv)
    assert list(rows["ftl"]) == ["page", "fast", "fast"]


def test_counts_a_scheme_lacks_are_empty_cells_and_the_others_whole_numbers(tmp_path):
    """`ram.page_map` is page's alone: pandas holds it as float beside fast's gaps, but the CSV (the command's
    and the store's) writes the byte count whole; a figure that is a float stays one."""
    import csv

    out, store = tmp_path / "c.csv", tmp_path / "s.csv"
    result = CliRunner().invoke(main, ["sweep", TRACE, "--ftl", "page,fast", "--capacity", "1MiB", "-p",
                                       "log_blocks=4", "--csv", str(out), "--store", str(store), "--jobs", "1"])
    assert result.exit_code == 0, result.output
    for path in (out, store):
        rows = {r["ftl"]: r for r in csv.DictReader(open(path, newline=""))}
        page = ftlsim.simulate(TRACE, ftl="page", capacity="1MiB")
        assert rows["page"]["ram.page_map"] == str(page["ram.page_map"]), path
        assert rows["fast"]["ram.page_map"] == "", path
        assert rows["page"]["config.read_us"] == "15.0", path  # a time in us is a float, whole or not


def test_report_series_and_notebook_display():
    r = ftlsim.simulate(TRACE, ftl="fast", capacity="1MiB")
    s = r.to_series()
    assert s["flash.erases"] == r.erases and s.name == "fast"
    html = r._repr_html_()
    assert "<table>" in html and "flash.erases" in html and f"{r.erases:,}" in html


def test_bad_sweep_settings_from_python_raise_before_any_point_runs(tmp_path, monkeypatch):
    computed = counting(monkeypatch)
    with pytest.raises(ftlsim.FtlsimError, match="jobs=-3: give a whole number of parallel runs"):
        ftlsim.sweep(TRACE, ["page"], capacity="1MiB", jobs=-3)
    with pytest.raises(ftlsim.FtlsimError, match="`.json` is not a store format"):
        ftlsim.sweep(TRACE, ["page"], capacity="1MiB", store=tmp_path / "res.json")
    with pytest.raises(ftlsim.FtlsimError, match="is not a Dask scheduler address"):
        ftlsim.sweep(TRACE, ["page"], capacity="1MiB", scheduler="nonsense")
    assert computed == [] and list(tmp_path.iterdir()) == []


def test_progress_knows_its_total_before_the_first_run_ends():
    seen = []
    ftlsim.sweep(TRACE, {"page": {}, "fast": {"log_blocks": [2, 4]}}, capacity="1MiB", backend="threads", jobs=1,
                 on_done=lambda d, t: seen.append((d, t)))
    assert seen == [(0, 3), (1, 3), (2, 3), (3, 3)]


def test_numpy_and_pandas_values_run_as_the_numbers_they_hold(tmp_path):
    # np.float64(8.0) was refused as "log_blocks=8.0 must be a whole number"; np.array([0, 1]) as an
    # "unsupported type ndarray" naming no key; a trace given as a Path was "not iterable".
    import pathlib

    import numpy as np

    one = ftlsim.simulate("uniform:writes=2000,seed=1", ftl="fast", log_blocks=np.float64(8.0), capacity="1MiB")
    assert one["config.params"] == '{"lazy_merge":false,"log_blocks":8}'
    df = ftlsim.sweep("uniform:writes=2000,seed=1", ["fast"], {"log_blocks": np.array([4.0, 8.0])},
                      capacity="1MiB", backend="threads")
    assert df["status"].tolist() == ["done", "done"] and df["log_blocks"].tolist() == [4, 8]
    trace = tmp_path / "t.csv"
    trace.write_text("W,0,4096\nW,8192,4096\n")
    assert ftlsim.sweep(pathlib.Path(trace), ["page"], backend="threads")["status"].tolist() == ["done"]
    assert ftlsim._registry.plain((np.int64(0), np.int64(1))) == [0, 1]


def test_a_sweep_refuses_an_empty_grid_and_a_scheme_or_trace_among_its_options():
    # An empty list of values ended in KeyError: 'status'; ftl="fast" beside schemes=["page"] was dropped.
    with pytest.raises(ftlsim.FtlsimError, match="grid parameter `log_blocks` of fast has no values"):
        ftlsim.sweep("uniform:writes=30", ["fast"], {"log_blocks": []}, capacity="1MiB")
    with pytest.raises(ftlsim.FtlsimError, match=r"sweep takes no ftl=: give schemes"):
        ftlsim.sweep("uniform:writes=30", ["page"], capacity="1MiB", ftl="fast")


def test_a_sweep_argument_of_a_type_it_cannot_take_says_what_it_takes():
    # Each raised "'int' object is not iterable" from inside the grid.
    for args, what in (((5, ["page"]), r"traces must be a trace \(a path or a workload spec\) or a list of them; "
                                       r"got int 5"),
                       (("uniform:writes=30", 5), r"schemes must be a name, a list of names or a dict"),
                       (("uniform:writes=30", {"fast": 4}), r"'fast' maps to int 4"),
                       (("uniform:writes=30", ["page"], 5), r"grid must be a dict of parameter -> values"),
                       # A dict of values ran its keys: a failed point of log_blocks='a'.
                       (("uniform:writes=30", ["fast"], {"log_blocks": {"a": 1}}),
                        r"grid maps each parameter to a value or a list of values .*; 'log_blocks' maps to dict"),
                       (("uniform:writes=30", {"fast": {"log_blocks": {4: 1}}}),
                        r"grid maps each parameter to a value or a list of values .*; 'log_blocks' maps to dict")):
        with pytest.raises(TypeError, match=what):
            ftlsim.sweep(*args, capacity="1MiB")
    # store=5 raised "expected str, bytes or os.PathLike object, not int".
    with pytest.raises(TypeError, match=r"store must be a path .*; got int 5"):
        ftlsim.sweep("uniform:writes=30", ["page"], capacity="1MiB", store=5)
    # Any iterable of names is still a list of them.
    rows = ftlsim.sweep(iter(["uniform:writes=30"]), (s for s in ["page", "fast"]), capacity="1MiB", jobs=1)
    assert sorted(rows["ftl"]) == ["fast", "page"]


def test_device_and_nvram_settings_of_a_sweep_file_are_in_the_header_and_the_plot_title(tmp_path):
    # read_us, erase_us, pages_per_block and the NVRAM's regions and time from the file's common settings ran,
    # and the header said "nvram=64.0 KiB, nvram_policy=region, preset=lee2007", the plot "lee2007, 2.0 MiB".
    from ftlsim.plot import compare

    config = tmp_path / "r2.toml"
    config.write_text('traces = ["uniform:writes=3000,seed=1"]\nschemes = ["fast"]\ncapacity = "2MiB"\n'
                      'nvram = "64KiB"\nnvram_policy = "region"\nnvram_regions = "0-64KiB"\nnvram_write_us = 5\n'
                      'read_us = 30\nerase_us = 500\npages_per_block = 16\n[grid]\nlog_blocks = [4, 8]\n')
    result = CliRunner().invoke(main, ["sweep", "-c", str(config), "--backend", "threads"])
    assert result.exit_code == 0, result.output
    said = ("nvram=64.0 KiB, nvram_policy=region, nvram_regions=0-64KiB, nvram_write_us=5.0, preset=lee2007, "
            "erase_us=500.0, pages_per_block=16, read_us=30.0, capacity=2.0 MiB")
    assert f"every row: {said}" in " ".join(result.stdout.split()), result.stdout
    df = ftlsim.sweep("uniform:writes=3000,seed=1", ["fast"], {"log_blocks": [4, 8]}, capacity="2MiB",
                      nvram="64KiB", nvram_policy="region", nvram_regions="0-64KiB", nvram_write_us=5, read_us=30,
                      erase_us=500, pages_per_block=16, backend="threads")
    fig = compare(df)
    title = fig.get_suptitle()
    assert " ".join(title.split()) == said.replace("preset=lee2007, ", "").replace(", capacity=2.0 MiB", "")
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig).draw()  # broken between settings into lines on the figure, not past its edges
    assert "\n" in title and fig._suptitle.get_window_extent().width <= fig.get_window_extent().width, title


def test_a_piped_trace_is_named_as_given_in_a_sweeps_warnings_and_rows(tmp_path):
    # The warning named the temporary copy the pipe was read into: "page on ftlsim-trace-kxpck1c5: no block ...".
    csv = tmp_path / "rows.csv"
    store = tmp_path / "store.csv"
    result = CliRunner().invoke(main, ["sweep", "-", "--ftl", "page", "--capacity", "8MiB", "--wrap", "--csv",
                                       str(csv), "--jobs", "1", "--store", str(store)],
                                input="W,0,4096\nW,4096,4096\nW,0,4096\n")
    assert result.exit_code == 0, result.output
    said = " ".join(result.stderr.split())
    assert "warning: page on -: the host wrote" in said and "ftlsim-trace" not in said, said
    assert list(pd.read_csv(csv)["trace"]) == ["-"]
    # The store's row too: it held the temporary copy's path.
    stored = pd.read_csv(store)
    assert (list(stored["trace"]), list(stored["config.trace"])) == (["-"], ["-"])
