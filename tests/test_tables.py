"""What `run`, `compare` and `sweep` print: tables that fit the width without cutting a number, `--metrics`,
and traces by their shortest distinguishing name."""

import json
import re

import pandas as pd
import pytest
from click.testing import CliRunner

from ftlsim.cli import main
from ftlsim.output import fmt, short_names

# COLUMNS=None is a pipe with no width: the table is as wide as its numbers need.
WIDTHS = [80, 120, None]


def invoke(*args, columns=None):
    env = {"COLUMNS": str(columns) if columns else None}
    return CliRunner().invoke(main, list(args), env=env, catch_exceptions=False)


def table_lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if line[:1] in "┏┃┡│└┌├"]


def assert_fits(output: str, columns):
    assert "…" not in output, output
    if columns:
        for line in table_lines(output):
            assert len(line) <= columns, line


def cell_values(output: str) -> list[str]:
    return [c.strip() for line in table_lines(output) if line.startswith("│") for c in line.split("│")[1:-1]]


@pytest.mark.parametrize("columns", WIDTHS)
def test_run_table_fits_and_shows_every_number_whole(tmp_path, columns):
    out = tmp_path / "r.json"
    result = invoke("run", "uniform:writes=20000,seed=1", "--ftl", "nftl", "--capacity", "4MiB", "--json", str(out),
                    columns=columns)
    assert result.exit_code == 0, result.output
    assert_fits(result.output, columns)
    report = json.loads(out.read_text())
    cells = cell_values(result.output)
    for key in ("flash.erases", "time_us.total", "flash.spare_reads", "merges.fold"):
        assert fmt(report[key]) in cells, key


@pytest.mark.parametrize("columns", [80, None])
def test_run_table_leaves_out_a_list_and_says_so(columns):
    # A histogram's list in the value column squeezed the names to nothing and was cut with "…".
    result = invoke("run", "hotcold:writes=3000,seed=1", "--ftl", "fast", "--capacity", "4MiB", "--metrics",
                    "log_utilization.*,flash.erases", columns=columns)
    assert result.exit_code == 0, result.output
    assert_fits(result.output, columns)
    names = [c for c in cell_values(result.output) if c.startswith(("flash.", "log_utilization."))]
    assert names == ["flash.erases", "log_utilization.replacements", "log_utilization.mean"]
    assert "[" not in "".join(table_lines(result.output))
    said = " ".join(result.stderr.split())
    assert "lists, left out of the table (--json or --csv hold them): log_utilization.histogram" in said


@pytest.mark.parametrize("columns", WIDTHS)
def test_compare_table_fits_and_names_what_it_left_out(tmp_path, columns):
    # The README's Fig. 10 command, smaller: nine-digit times must stay whole at 80 columns.
    out = tmp_path / "grid.csv"
    result = invoke("compare", "uniform:writes=20000", "--ftl", "bast,fast,ofast", "--param", "log_blocks=4,16",
                    "--precondition", "full", "--csv", str(out), columns=columns)
    assert result.exit_code == 0, result.output
    assert_fits(result.output, columns)
    df = pd.read_csv(out)
    cells = cell_values(result.output)
    for value in df["time_us.total"]:
        assert fmt(int(value)) in cells
    assert max(df["time_us.total"]) > 1e8  # 11 characters with separators
    left_out = re.search(r"left out at \d+ columns: (.*?) \(pick", result.output.replace("\n", " "))
    if columns == 80:
        assert left_out, result.output
        for name in left_out[1].split(", "):
            assert name.strip() in df and name.strip() not in result.output.split("left out")[0].replace("\n", "")
    if columns is None:
        assert left_out is None
        assert "ram.total_bytes" in result.output and "write_amplification" in result.output


@pytest.mark.parametrize("columns", WIDTHS)
def test_sweep_of_two_traces_in_one_folder_shows_their_own_names(tmp_path, columns):
    folder = tmp_path / "a_rather_long_folder_name" / "shared" / "traces"
    folder.mkdir(parents=True)
    for name in ("alpha.csv", "beta.csv"):
        (folder / name).write_text("".join(f"W,{(i * 7919) % 2048 * 512},512\n" for i in range(6000)))
    config = tmp_path / "sweep.toml"
    config.write_text(f'traces = ["{folder / "alpha.csv"}", "{folder / "beta.csv"}"]\ncapacity = "1MiB"\n'
                      '[schemes]\npage = {}\nfast = { log_blocks = [4, 8] }\n')
    result = invoke("sweep", "-c", str(config), "--jobs", "1", columns=columns)
    assert result.exit_code == 0, result.output
    assert_fits(result.output, columns)
    cells = cell_values(result.output)
    assert cells.count("alpha.csv") == 3 and cells.count("beta.csv") == 3
    assert "a_rather_long" not in "".join(table_lines(result.output))


def test_metrics_globs_pick_the_figures_of_run_compare_and_sweep(tmp_path):
    result = invoke("run", "uniform:writes=5000", "--ftl", "bast", "--capacity", "1MiB", "--metrics",
                    "merges.*,flash.erases", columns=80)
    assert result.exit_code == 0, result.output
    shown = re.findall(r"│\s+([\w.]+)\s+│\s+[\d,.]+\s+│", result.output)
    assert "flash.erases" in shown and "merges.switch" in shown and "merges.dead" in shown  # zero, but asked for
    assert all(k == "flash.erases" or k.startswith("merges.") for k in shown), shown
    assert "time_us.total" not in result.output
    result = invoke("compare", "uniform:writes=5000", "--ftl", "bast,fast", "--capacity", "1MiB", "--param",
                    "log_blocks=4,8", "--metrics", "merges.full,flash.erases", columns=80)
    assert result.exit_code == 0, result.output
    header = [c.strip() for line in table_lines(result.output) if line.startswith("┃")
              for c in line.split("┃")[1:-1]]
    assert header == ["ftl", "log_blocks", "merges.full", "flash.erases"]  # in the order asked for
    assert "time_us" not in result.output and "left out" not in result.output
    assert len(cell_values(result.output)) == 4 * 4  # ftl, log_blocks and the two figures, four rows


def test_a_metrics_glob_that_matches_nothing_is_refused_before_running():
    result = invoke("compare", "uniform:writes=10000000", "--ftl", "bast", "--metrics", "merge.*")
    assert result.exit_code == 2
    assert "`merge.*` matches no figure" in result.output and "did you mean `merges.*`" in result.output
    result = invoke("run", "uniform:writes=10000000", "--metrics", "flash.erase")
    assert result.exit_code == 2 and "did you mean `flash.erases`" in result.output
    # A response-time key on one chip: said why there is none, and how to have them.
    result = invoke("run", "uniform:writes=300", "--metrics", "throughput.iops")
    assert result.exit_code == 2
    assert "`throughput.iops` matches no figure: the runs have no response times; turn the multi-chip array" in \
        " ".join(result.output.split())


def test_short_names_add_parent_folders_only_to_tell_traces_apart():
    assert short_names(["../shared/traces/msr_wdev_1.csv", "../shared/traces/Financial1.spc"]) == {
        "../shared/traces/msr_wdev_1.csv": "msr_wdev_1.csv", "../shared/traces/Financial1.spc": "Financial1.spc"}
    assert short_names(["x/a/t.csv", "x/b/t.csv", "uniform:writes=10,seed=1"]) == {
        "x/a/t.csv": "a/t.csv", "x/b/t.csv": "b/t.csv", "uniform:writes=10,seed=1": "uniform:writes=10,seed=1"}
    # Workloads drop the settings they all share.
    assert short_names(["uniform:writes=10,seed=1", "hotcold:writes=10,seed=1", "uniform:writes=10,seed=2"]) == {
        "uniform:writes=10,seed=1": "uniform:seed=1", "hotcold:writes=10,seed=1": "hotcold:seed=1",
        "uniform:writes=10,seed=2": "uniform:seed=2"}


def test_a_small_figure_keeps_three_significant_digits_and_zero_stays_zero():
    assert fmt(0.0000021375) == "2.14e-06"
    assert fmt(0.000999) == "0.000999"
    assert fmt(0.0) == "0.000"
    assert fmt(0.0015) == "0.00150"  # it read 0.002
    assert fmt(0.001773) == "0.00177" and fmt(0.0105) == "0.0105" and fmt(0.448) == "0.448"
    assert fmt(-0.0005) == "-0.0005"


def test_a_grid_spells_flags_as_given_and_keeps_a_ratio_s_decimals_in_every_row():
    # A flag read `True` (Python's spelling, where -p takes true) in the cells and the "every row" line, and a
    # write amplification of exactly 1 read `1` beside fast's `2.177`.
    result = invoke("sweep", "uniform:writes=3000,seed=1", "--ftl", "page,fast", "--capacity", "2MiB", "-p",
                    "gc_frontier=true,false", "-p", "rmw=false")
    assert result.exit_code == 0, result.output
    assert "every row: rmw=false, preset=lee2007, capacity=2.0 MiB" in result.output
    rows = [[c.strip() for c in line.split("│")[1:-1]] for line in table_lines(result.output) if line[0] == "│"]
    assert [row[:2] for row in rows] == [["page", "true"], ["page", "false"], ["fast", "-"]]
    assert [row[-2] for row in rows] == ["1.000", "1.000", "2.177"]  # write_amplification
    assert [row[3] for row in rows] == ["600,000", "600,000", "2,062,340"]  # time_us.total, whole from 1,000 on
    assert fmt(True) == "true" and fmt(pd.Series([False]).iloc[0]) == "false"
    # At 60 columns the line breaks between settings, never inside one (`nvram=128.0` / `KiB`).
    result = invoke("compare", "uniform:writes=3000,seed=1", "--ftl", "page,fast", "--capacity", "4MiB", "--nvram",
                    "128KiB", "--nvram-policy", "lru", "--compact", "-p", "rmw=false", columns=60)
    assert ("every row: rmw=false, compact=true, nvram=128.0 KiB,\n"
            "           nvram_policy=lru, preset=lee2007,\n           capacity=4.0 MiB\n") in result.output, result.output


def test_an_array_grid_says_its_one_valued_settings_once_and_shows_response_times(tmp_path):
    out = tmp_path / "grid.csv"
    result = invoke("compare", "uniform:writes=3000,seed=1,read_share=0.3", "--ftl", "page,fast", "-p",
                    "channels=2", "-p", "queue_depth=8", "-p", "placement=striped,per-die", "--capacity", "4MiB",
                    "--csv", str(out), columns=80)
    assert result.exit_code == 0, result.output
    assert_fits(result.output, 80)
    # channels and queue_depth have one value: one line above the table, no column of the same number.
    assert "every row: channels=2, queue_depth=8" in result.output
    header = " ".join(line for line in table_lines(result.output) if line.startswith("┃"))
    assert "channels" not in header and "queue_" not in header and "placement" in header
    # The array model's response times are among the figures, whole.
    df = pd.read_csv(out)
    cells = cell_values(result.output)
    for value in df["response_us.write.p99"]:
        assert fmt(float(value)) in cells or fmt(int(value)) in cells, (value, cells)


def test_a_figure_named_outright_is_shown_before_a_glob_s_and_a_glob_s_zeros_give_way(monkeypatch):
    from click.testing import CliRunner

    from ftlsim.cli import main

    # At 80 columns `--metrics "merges.*" --metrics flash.erases` showed merge kinds 0 in every row and left
    # out flash.erases, the figure named.
    monkeypatch.setenv("COLUMNS", "80")
    result = CliRunner().invoke(main, ["compare", "uniform:writes=20000,seed=1", "--ftl", "page,fast", "--capacity",
                                       "8MiB", "--metrics", "merges.*", "--metrics", "flash.erases"])
    assert result.exit_code == 0, result.output
    header = next(line for line in result.stdout.splitlines() if "ftl" in line)
    assert [c.strip() for c in header.split("┃")[2:4]] == ["erases", "partial"], header  # flash.erases first
    note = " ".join(result.stderr.split())
    assert "0 in every row: merges.switch, merges.dead, merges.fold" in note, note
    assert "flash.erases" not in note


def test_a_grid_leaves_a_response_time_cdf_out_of_its_table_as_run_does(tmp_path):
    # Piped, `--metrics 'response_us.write.*'` printed a column of 3 KB of [[774.144, 0.0], ...] a row.
    out = tmp_path / "grid.csv"
    result = invoke("compare", "uniform:writes=300,seed=1", "--ftl", "page,dftl", "--capacity", "1MiB", "-p",
                    "queue_depth=4", "--metrics", "response_us.write.*", "--csv", str(out))
    assert result.exit_code == 0, result.output
    assert "[[" not in result.stdout and "response_us.write.p99" in result.stdout, result.stdout
    assert "lists, left out of the table (--csv holds them): response_us.write.cdf" in result.stderr
    assert pd.read_csv(out)["response_us.write.cdf"].str.startswith("[[").all()
