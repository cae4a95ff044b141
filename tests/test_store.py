"""The results store of sweeps: shared by concurrent sweeps without losing a row, torn rows recomputed, foreign
or corrupt stores refused before any point runs, workers that die with a killed sweep, and `ftlsim store`."""

import os
import signal
import subprocess
import sys
import time

import pandas as pd
import pytest
from click.testing import CliRunner

import ftlsim
import ftlsim.sim
from ftlsim.cli import main


def ftlsim_command(*args) -> list[str]:
    return [sys.executable, "-m", "ftlsim", *args]


def invoke(*args):
    return CliRunner().invoke(main, list(args))


def read(store):
    store = str(store)
    return pd.read_parquet(store) if store.endswith(".parquet") else pd.read_csv(store)


@pytest.mark.parametrize("ext", ["csv", "parquet"])
def test_two_concurrent_sweeps_on_one_store_keep_every_row(tmp_path, ext):
    """17 distinct points from two sweeps running at once (one point in both): before the store merged under a
    lock, each sweep rewrote the file from its own memory and about half the rows were lost."""
    store = tmp_path / f"shared.{ext}"
    seeds = {"a": range(1, 10), "b": range(9, 18)}
    procs = [subprocess.Popen(ftlsim_command("sweep", *[f"uniform:writes=150000,seed={s}" for s in seeds[name]],
                                             "--ftl", "page", "--capacity", "4MiB", "--store", str(store),
                                             "--backend", "threads", "--jobs", "1"),
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
             for name in seeds]
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
    rows = read(store)
    assert len(rows) == 17 and rows["key"].nunique() == 17 and set(rows["status"]) == {"done"}
    assert sorted(rows["trace"]) == sorted(f"uniform:writes=150000,seed={s}" for s in range(1, 18))
    assert (rows["flash.page_writes"] >= 150000).all()


def test_a_csv_store_cut_inside_its_last_row_recomputes_that_point(tmp_path):
    store = tmp_path / "s.csv"
    schemes = {"page": {}, "fast": {"log_blocks": [4, 8]}}
    first = ftlsim.sweep("uniform:writes=2000,seed=1", schemes, capacity="1MiB", store=store, backend="threads")
    text = store.read_text()
    store.write_text(text[: len(text) - 30])  # inside the last row
    again = ftlsim.sweep("uniform:writes=2000,seed=1", schemes, capacity="1MiB", store=store, backend="threads")
    assert again.attrs["points"] == {"stored": 2, "computed": 1, "failed": 0, "torn": 1, "damaged": 0}
    assert list(again["flash.erases"]) == list(first["flash.erases"])
    rows = read(store)
    assert len(rows) == 3 and rows["flash.erases"].notna().all() and set(rows["status"]) == {"done"}


def test_a_store_row_whose_figures_are_not_numbers_is_computed_again_and_said(tmp_path):
    # A row with flash.erases `banana` (or empty) was served from the store: the table showed banana, and the
    # column's other counts, read as text, lost their thousands commas.
    store = tmp_path / "s.csv"
    args = ["sweep", "uniform:writes=20000,seed=1", "--ftl", "page,fast", "-p", "log_blocks=4,8", "--capacity",
            "1MiB", "--store", str(store), "--backend", "threads"]
    assert invoke(*args).exit_code == 0
    first = read(store).sort_values("key")
    rows = pd.read_csv(store, dtype=str, keep_default_na=False)
    rows.loc[0, "flash.erases"], rows.loc[1, "flash.page_writes"] = "banana", ""
    rows.to_csv(store, index=False)
    listed = invoke("store", str(store))
    assert "1 of 1 rows" in listed.output and "banana" not in listed.output
    assert "2 damaged rows left out (a figure that is not a number)" in " ".join(listed.output.split())
    result = invoke(*args)
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert "banana" not in result.output
    assert "1 point from the store, 2 computed, 0 failed (2 damaged rows of the store computed again)" in said
    assert f"{first['flash.page_writes'].max():,}" in result.output
    again = read(store).sort_values("key")
    assert again["flash.erases"].tolist() == first["flash.erases"].tolist()
    assert again["flash.page_writes"].tolist() == first["flash.page_writes"].tolist()


@pytest.mark.parametrize("name, content, says", [
    ("results.parquet", b"PAR1 this is not parquet", "cannot be read as a results store"),
    ("results.csv", b"name,size\nfoo,3\n", "is not an ftlsim results store"),
    ("results.csv", b'key,status\n"unterminated,\n', "cannot be read as a results store"),
    ("results.csv", b"key,status\nabc,done\n0123456789abcdef0123,done\n", "row 1 is not a results row"),
])
def test_a_corrupt_or_foreign_store_is_refused_before_any_point_runs(tmp_path, monkeypatch, name, content, says):
    store = tmp_path / name
    store.write_bytes(content)
    computed = []
    monkeypatch.setattr(ftlsim.sim, "_run_point", lambda kw: computed.append(kw))
    result = invoke("sweep", "uniform:writes=1000", "--ftl", "page", "--capacity", "1MiB", "--store", str(store),
                    "--backend", "threads")
    assert result.exit_code == 2, result.output
    assert says in result.output and str(store) in result.output and "Traceback" not in result.output
    assert computed == [] and store.read_bytes() == content


def test_a_store_path_that_is_not_a_store_format_is_refused(tmp_path):
    result = invoke("sweep", "uniform:writes=1000", "--ftl", "page", "--store", str(tmp_path / "res.json"))
    assert result.exit_code == 2
    assert "`.json` is not a store format" in result.output
    assert not (tmp_path / "res.json").exists()
    # A path without an extension is a directory store, made on first use.
    result = invoke("sweep", "uniform:writes=1000", "--ftl", "page", "--capacity", "1MiB",
                    "--store", str(tmp_path / "results"), "--backend", "threads")
    assert result.exit_code == 0, result.output
    assert len(pd.read_parquet(tmp_path / "results" / "results.parquet")) == 1


def test_a_store_or_csv_under_a_file_says_it_is_a_file_not_a_directory(tmp_path):
    # It said "directory .../afile does not exist", of a file that exists.
    (tmp_path / "afile").write_text("x")
    for option, name in (("--store", "x.parquet"), ("--csv", "x.csv"), ("--store", "sub/x.csv")):
        result = invoke("sweep", "uniform:writes=1000", "--ftl", "page", option, str(tmp_path / "afile" / name))
        assert result.exit_code == 2, result.output
        said = " ".join(result.output.split())
        assert f"{tmp_path / 'afile'} is a file, not a directory" in said and "does not exist" not in said, said
    result = invoke("sweep", "uniform:writes=1000", "--ftl", "page", "--store", str(tmp_path / "none" / "x.csv"))
    assert f"directory {tmp_path / 'none'} does not exist" in " ".join(result.output.split())


def _children(pid: int) -> list[int]:
    kids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                kids.append(int(entry))
    return kids


def _alive(pid: int) -> bool:
    """Running, not a zombie waiting to be reaped."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_sweep_workers_die_when_the_sweep_is_killed(tmp_path):
    sweep = subprocess.Popen(ftlsim_command("sweep", "uniform:writes=5000000,seed=1", "uniform:writes=5000000,seed=2",
                                            "--ftl", "page", "--capacity", "64MiB", "--jobs", "2"),
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    workers = []
    while len(workers) < 2 and time.monotonic() < deadline and sweep.poll() is None:
        time.sleep(0.2)
        workers = _children(sweep.pid)
    assert len(workers) == 2, "the sweep did not start its two workers"
    sweep.send_signal(signal.SIGKILL)
    sweep.wait()
    deadline = time.monotonic() + 5
    while any(_alive(w) for w in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = [w for w in workers if _alive(w)]
    for worker in left:  # the test's own debris, should it fail
        os.kill(worker, signal.SIGKILL)
    assert left == [], f"workers left running: {left}"


SWEEP_TOML = """
traces = ["uniform:writes=2000,seed=1"]
capacity = "1MiB"
precondition = "full"
store = "{store}"
csv = "{csv}"
[schemes]
page = {{}}
fast = {{ log_blocks = [4, 16] }}
"""


def test_a_sweep_says_what_it_did_and_its_csv_covers_the_stored_points_of_its_config(tmp_path):
    config = tmp_path / "sweep.toml"
    csv = tmp_path / "rows.csv"
    config.write_text(SWEEP_TOML.format(store=tmp_path / "results.parquet", csv=csv))
    result = invoke("sweep", "-c", str(config), "--backend", "threads")
    assert result.exit_code == 0, result.output
    assert "0 points from the store, 3 computed, 0 failed" in result.output
    result = invoke("sweep", "-c", str(config), "--backend", "threads")
    assert "3 points from the store, 0 computed, 0 failed" in result.output
    # Only bast and fast run (fast's points are stored); page's stored row stays in the CSV; bast has no grid
    # of its own here and shows the log_blocks it ran with, its default.
    result = invoke("sweep", "-c", str(config), "--backend", "threads", "--ftl", "fast,bast")
    assert result.exit_code == 0, result.output
    assert "3 points from the store, 1 computed, 0 failed" in result.output
    rows = pd.read_csv(csv, dtype=str, keep_default_na=False)
    assert list(zip(rows["ftl"], rows["log_blocks"])) == [("page", ""), ("fast", "4"), ("fast", "16"), ("bast", "8")]
    assert set(rows["status"]) == {"done"}


def test_integers_of_a_grid_stay_integers(tmp_path):
    df = ftlsim.sweep("uniform:writes=2000,seed=1", {"page": {}, "dftl": {"cmt_entries": [64, 128]}},
                      capacity="1MiB", backend="threads", store=tmp_path / "s.csv")
    assert [v for v in df["cmt_entries"] if v == v] == [64, 128]
    assert all(type(v) is int for v in df["cmt_entries"].dropna())
    import csv

    with open(tmp_path / "s.csv", newline="") as f:
        assert sorted(row["cmt_entries"] for row in csv.DictReader(f)) == ["", "128", "64"]


def test_flags_of_a_parquet_store_beside_a_failed_point_stay_flags(tmp_path):
    # Reused, the store gave config.rmw 'True' (text) where the first sweep gave True: a failed point's gap made
    # the column mixed, and mixed columns were written as text.
    grid = {"fast": {"log_blocks": [1, 8]}}  # log_blocks=1 fails
    runs = [ftlsim.sweep("uniform:writes=2000,seed=1", grid, capacity="1MiB", backend="threads",
                         store=tmp_path / "s.parquet") for _ in range(2)]
    for df in runs:
        done = df[df["status"] == "done"]
        assert done["config.rmw"].tolist() == [True] and len(df[df["config.rmw"] == True]) == 1  # noqa: E712


def test_store_command_lists_filters_and_prunes(tmp_path):
    store = tmp_path / "results.parquet"
    ftlsim.sweep(["uniform:writes=2000,seed=1", str(tmp_path / "missing.csv")],
                 {"page": {}, "fast": {"log_blocks": [4, 8]}}, capacity="1MiB", store=store, backend="threads")
    result = invoke("store", str(store))
    assert result.exit_code == 0, result.output
    assert "6 of 6 rows" in result.output and "every row: capacity=1MiB" in result.output
    # Why the points failed, which the sweep said once, is said below the table; counts stay whole numbers
    # beside the failed points' gaps.
    said = " ".join(result.output.split())
    assert "failed: fast (its 2 runs), page on " in said and "missing.csv" in said.split("failed:")[1]
    assert not any(f"{n}.000" in result.output for n in read(store)["flash.erases"].dropna().astype(int))
    result = invoke("store", str(store), "--where", "ftl=fast", "--where", "log_blocks=8")
    assert result.exit_code == 0 and "2 of 6 rows" in result.output
    result = invoke("store", str(store), "--where", "ftl=bast")  # no row: an empty table, not a traceback
    assert result.exit_code == 0 and "0 of 6 rows" in " ".join(result.output.split()), result.output
    # Said why: a typo listed (or pruned) nothing without a word.
    assert "note: --where ftl=bast matches no row: ftl holds fast, page" in " ".join(result.output.split())
    result = invoke("store", str(store), "--where", "ftl=fats", "--prune")
    assert result.exit_code == 0 and "0 rows pruned" in result.output
    assert "ftl holds fast, page (did you mean `fast`?)" in " ".join(result.output.split())
    result = invoke("store", str(store), "--where", "lgo_blocks=8")
    assert result.exit_code == 2 and "did you mean `log_blocks`" in result.output
    result = invoke("store", str(store), "--where", "nosuch=8")  # no column near: the ones to choose by
    assert result.exit_code == 2, result.output
    assert ("the store has no column `nosuch`; its points' columns: " in result.output
            and "ftl, " in result.output and "log_blocks" in result.output and "version" not in result.output)
    result = invoke("store", str(store), "--prune")
    assert result.exit_code == 2 and "give --where" in result.output
    result = invoke("store", str(store), "--where", "status=failed", "--prune")
    assert result.exit_code == 0, result.output
    assert "3 rows pruned" in result.output
    assert list(read(store)["status"]) == ["done"] * 3
    # One trace left: it is named once above the table, not in a column of its own on every row.
    result = invoke("store", str(store))
    assert "every row: trace=uniform:writes=2000,seed=1, capacity=1MiB" in " ".join(result.output.split())
    assert "trace " not in result.output.split("\n", 3)[3]
    result = invoke("store", str(tmp_path / "none.parquet"))
    assert result.exit_code == 2 and "no store at" in result.output


def test_the_store_table_leaves_out_columns_it_cannot_fit_and_says_which(tmp_path, monkeypatch):
    # At a terminal narrower than the table, rich cut every line at its edge: the key column half shown, no right
    # border, and nothing said.
    store = tmp_path / "results.parquet"
    ftlsim.sweep("uniform:writes=2000,seed=1", {"page": {}, "fast": {"log_blocks": [4, 8]}}, capacity="1MiB",
                 store=store, backend="threads")
    for columns, left_out in ((100, None), (60, "key"), (45, "key, time_us")):
        monkeypatch.setenv("COLUMNS", str(columns))
        result = invoke("store", str(store))
        assert result.exit_code == 0, result.output
        table = [line for line in result.output.splitlines() if line[:1] in "┏┃┡│└"]
        assert table and all(len(line) <= columns for line in table), result.output
        assert all(line.endswith(("┓", "┃", "┩", "│", "┘")) for line in table), result.output
        said = " ".join(result.output.split())
        if left_out is None:
            assert "left out" not in said and "key" in table[1], result.output
        else:
            assert f"left out at {columns} columns: {left_out} (widen the terminal" in said, result.output


def test_the_store_table_breaks_a_trace_between_its_settings_and_orders_rows_by_their_values(tmp_path, monkeypatch):
    # At 80 columns a trace folded inside a setting ("hotcold:writes=20000,see" / "d=1"), and the rows came in
    # the order of their keys (log_blocks 4, 16, 8).
    store = tmp_path / "results.parquet"
    traces = ["uniform:writes=20000,seed=1", "hotcold:writes=20000,seed=1"]
    ftlsim.sweep(traces, ["fast"], {"log_blocks": [4, 16, 8]}, capacity="1MiB", store=store, backend="threads")
    monkeypatch.setenv("COLUMNS", "80")
    result = invoke("store", str(store), "--where", "ftl=fast")
    assert result.exit_code == 0, result.output
    cells = [[c.strip() for c in line.split("│")[1:-1]] for line in result.output.splitlines() if line[:1] == "│"]
    assert [c[0] for c in cells] == ["hotcold:writes=20000,", "seed=1"] * 3 + ["uniform:writes=20000,", "seed=1"] * 3
    assert [c[2] for c in cells if c[2]] == ["4", "8", "16"] * 2, result.output


def test_an_unreachable_dask_scheduler_is_one_line_within_seconds():
    pytest.importorskip("dask.distributed")
    started = time.monotonic()
    result = invoke("sweep", "uniform:writes=1000", "--ftl", "page", "--scheduler", "tcp://127.0.0.1:9")
    assert time.monotonic() - started < 15
    assert result.exit_code == 2
    assert "did not answer within 5 s" in result.output and "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_ftl_with_a_grid_the_files_schemes_do_not_take_keeps_their_stored_rows(tmp_path):
    config = tmp_path / "sweep.toml"
    csv = tmp_path / "rows.csv"
    config.write_text(f'traces = ["uniform:writes=2000,seed=1"]\ncapacity = "1MiB"\nschemes = ["page"]\n'
                      f'store = "{tmp_path / "s.parquet"}"\ncsv = "{csv}"\n')
    assert invoke("sweep", "-c", str(config), "--backend", "threads").exit_code == 0
    result = invoke("sweep", "-c", str(config), "--backend", "threads", "--ftl", "fast", "-p", "log_blocks=4,8")
    assert result.exit_code == 0, result.output
    assert "1 point from the store, 2 computed, 0 failed" in result.output
    assert list(pd.read_csv(csv)["ftl"]) == ["page", "fast", "fast"]


def test_a_scheme_without_the_swept_value_shows_the_one_it_ran_with():
    df = ftlsim.sweep("uniform:writes=2000,seed=1", {"page": {}, "fast": {"pages_per_block": [16]}},
                      capacity="1MiB", backend="threads")
    assert list(df["pages_per_block"]) == [32, 16]  # page ran on lee2007's 32 pages a block
    df = ftlsim.sweep("uniform:writes=2000,seed=1", {"page": {}, "fast": {}, "ofast": {"log_blocks": [4]}},
                      capacity="1MiB", backend="threads")
    assert [v if v == v else None for v in df["log_blocks"]] == [None, 8, 4]  # page has none; fast's default


def test_traces_given_on_the_command_line_keep_the_files_stored_points(tmp_path):
    config = tmp_path / "sweep.toml"
    csv = tmp_path / "rows.csv"
    config.write_text(SWEEP_TOML.format(store=tmp_path / "results.parquet", csv=csv))
    assert invoke("sweep", "-c", str(config), "--backend", "threads").exit_code == 0
    result = invoke("sweep", "-c", str(config), "--backend", "threads", "hotcold:writes=2000,seed=1")
    assert result.exit_code == 0, result.output
    assert "3 points from the store, 3 computed, 0 failed" in result.output
    rows = pd.read_csv(csv)
    assert list(rows["trace"].str.split(":").str[0]) == ["hotcold"] * 3 + ["uniform"] * 3
