"""The ftlsim command end to end, including the README's own commands."""

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

import ftlsim
from ftlsim.cli import main

ROOT = Path(__file__).resolve().parent.parent


def invoke(*args):
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result


def test_run_with_no_trace_runs_the_builtin_default(tmp_path):
    out = tmp_path / "r.json"
    result = invoke("run", "--json", str(out))
    assert result.exit_code == 0, result.output
    assert "uniform:writes=150000,seed=1" in result.output
    assert "flash.erases" in result.output
    report = json.loads(out.read_text())
    assert report["host.write_requests"] == 150000


def test_run_header_says_the_options_that_ran_other_than_their_defaults():
    # Precondition, power cuts, compact, a device filter and spare capacity change every figure, and the
    # header said none of them.
    result = invoke("run", "hotcold:writes=3000,seed=1", "--ftl", "fast", "--capacity", "4MiB", "--precondition",
                    "full", "--power-cuts", "5", "-p", "extra_blocks=40", "--metrics", "flash.erases")
    assert result.exit_code == 0, result.output
    header = result.stdout.split("trace:")[0]
    assert "run: extra_blocks=40 power_cuts=5 precondition=full power_cut_seed=1" in " ".join(header.split())
    result = invoke("run", "hotcold:writes=3000,seed=1", "--capacity", "4MiB", "--metrics", "flash.erases")
    assert "run:" not in result.stdout  # every option at its default


def test_run_with_params_and_csv(tmp_path):
    out = tmp_path / "r.csv"
    result = invoke("run", "uniform:writes=1000,seed=2", "--ftl", "block", "--capacity", "1MiB",
                    "--param", "pages_per_block=8", "--csv", str(out))
    assert result.exit_code == 0, result.output
    header, row = out.read_text().splitlines()
    assert "flash.erases" in header.split(",")


def test_bad_input_exits_2_with_a_message():
    result = invoke("run", "uniform:writes=10", "--ftl", "nope")
    assert result.exit_code == 2
    assert "unknown scheme `nope`" in result.output
    result = invoke("run", "uniform:writes=10", "--param", "novalue")
    assert result.exit_code == 2


def test_list_shows_schemes_presets_workloads_formats(monkeypatch):
    result = invoke("list")
    assert result.exit_code == 0
    for name in ("page", "block", "lee2007", "mlc-k9gag08", "uniform", "hotcold", "csv"):
        assert name in result.output
    # Nothing cut in an 80-column terminal: every parameter and its default is read whole, one to a line.
    from ftlsim import cli

    monkeypatch.setattr(cli.console, "width", 80)
    result = invoke("list")
    assert "…" not in result.output
    assert "page_table_cache_entries=128" in result.output and "victim=lru" in result.output
    # Names, parameters and timings whole, each within one cell of one line (a preset name is copied).
    import ftlsim

    cells = {cell.strip() for line in result.output.splitlines() for cell in line.split("│")}
    for p in ftlsim.trace.presets():
        t = p["timing"]
        assert {p["name"], f"{t['read_us']}/{t['program_us']}/{t['erase_us']}"} <= cells, p["name"]
    params = {f"{k}={ftlsim.output.param_text(v)}"
              for s in ftlsim.ftl.schemes() for k, v in (s["defaults"] or {}).items()}
    assert params <= cells and {s["name"] for s in ftlsim.ftl.schemes()} <= cells


def test_compare_prints_a_table_and_draws_a_plot(tmp_path):
    png = tmp_path / "cmp.png"
    result = invoke("compare", "uniform:writes=2000,seed=1", "--ftl", "page,block", "--capacity", "1MiB",
                    "--param", "pages_per_block=8,16", "--plot", str(png))
    assert result.exit_code == 0, result.output
    assert png.stat().st_size > 10_000
    assert result.output.count("page") >= 2


def test_ram_prints_the_breakdown():
    result = invoke("ram", "--ftl", "page", "--capacity", "64MiB")
    assert result.exit_code == 0
    assert "page_map" in result.output and "total" in result.output
    # The layouts' counts grouped in thousands, as the bytes are: 131,072 logical pages of 512 B.
    assert "131,072 logical pages x 3 B" in result.output, result.output
    from ftlsim.output import grouped_digits

    assert grouped_digits("8192 entries, section 3.2, 12345.5 B, 1,234 and 71827456") == (
        "8,192 entries, section 3.2, 12345.5 B, 1,234 and 71,827,456")


def test_readme_commands_are_the_ci_commands():
    readme = (ROOT / "README.md").read_text()
    commands = re.findall(r"```(?:sh|bash)\n(.*?)```", readme, re.S)
    assert len(commands) >= 1
    setup = [line for line in commands[0].splitlines() if line.strip()]
    assert len(setup) == 2, "the README's first block holds exactly the two set-up commands"
    install_and_run, test = setup
    assert "pip install" in install_and_run and "ftlsim run" in install_and_run
    assert test in (ROOT / ".ci" / "run").read_text(), ".ci/run calls the README's test command"


TRACES = ROOT.parent / "shared" / "traces"


def test_info_prints_mix_footprint_and_concentration(tmp_path):
    trace = tmp_path / "t.csv"
    # 4 writes to page 0, one each to pages 1..4, one read: 8 page writes, the hottest page takes half.
    trace.write_text("op,offset,length\n" + "W,0,512\n" * 4 + "W,512,2048\nR,0,512\n")
    out = tmp_path / "info.json"
    result = invoke("info", str(trace), "--json", str(out))
    assert result.exit_code == 0, result.output
    stats = json.loads(out.read_text())
    assert (stats["requests"], stats["reads"], stats["writes"]) == (6, 1, 5)
    assert stats["highest_address"] == 2560
    assert stats["footprint_bytes"] == 5 * 512
    assert stats["write_share_hottest_1pct_pages"] == 0.5


def test_run_on_a_real_trace():
    trace = TRACES / "msr_wdev_1.csv"
    assert trace.exists(), f"{trace} is missing: clone the repository beside shared/"
    result = invoke("run", str(trace), "--ftl", "page")
    assert result.exit_code == 0, result.output
    assert "1,055" in result.output  # host.write_requests


def test_compare_log_block_schemes_reproduces_fast_over_bast(tmp_path):
    # FAST paper Fig. 10 on a small pattern E: FAST erases less than BAST at every log-block count.
    out = tmp_path / "grid.csv"
    result = invoke("compare", "uniform:writes=4000,seed=1", "--ftl", "bast,fast,ofast", "--capacity", "4MiB",
                    "--precondition", "full", "--param", "log_blocks=4,16", "--csv", str(out))
    assert result.exit_code == 0, result.output
    import pandas as pd

    df = pd.read_csv(out).set_index(["ftl", "log_blocks"])
    for n in (4, 16):
        assert df.loc[("fast", n), "flash.erases"] < df.loc[("bast", n), "flash.erases"]
        assert df.loc[("ofast", n), "flash.erases"] <= df.loc[("fast", n), "flash.erases"]


def test_plot_refs_draws_the_write_reference_picture(tmp_path):
    png = tmp_path / "refs.png"
    trace = tmp_path / "t.csv"
    trace.write_text("W,0,512\n" * 50 + "".join(f"W,{i * 16384},4096\n" for i in range(40)))
    result = invoke("plot-refs", str(trace), "-o", str(png))
    assert result.exit_code == 0, result.output
    assert png.stat().st_size > 10_000
    from ftlsim.trace import write_refs

    refs = write_refs(str(trace))
    # Block 0 takes the 50 single-page writes and the first 8-page write; blocks 1..39 one 8-page write each.
    assert refs["blocks"][:2] == [0, 1] and refs["writes"][:2] == [58, 8]
    assert len(refs["blocks"]) == 40


def readme_block(heading: str, lang: str) -> str:
    text = (ROOT / "README.md").read_text()
    section = text.split(heading, 1)[1]
    return re.search(rf"```{lang}\n(.*?)```", section, re.S).group(1)


def test_readme_usage_commands_run(tmp_path, monkeypatch):
    """Every command of the README's 'Using it' block runs as written (from a scratch folder)."""
    import shlex

    monkeypatch.chdir(tmp_path)
    block = readme_block("## Using it", "sh").replace("\\\n", " ")
    commands = [line.split("#")[0].strip() for line in block.splitlines() if line.strip()]
    assert len(commands) >= 8
    for command in commands:
        args = shlex.split(command.replace("../shared", str(ROOT.parent / "shared")))
        assert args[0] == "ftlsim"
        if "shared" in command and not TRACES.exists():
            continue
        result = invoke(*args[1:])
        assert result.exit_code == 0, f"{command}\n{result.output}"
    for made in ("out.json", "fig10.png", "refs.png", "camera.csv.gz"):
        assert (tmp_path / made).stat().st_size > 0, made


def test_readme_python_example_runs():
    exec(compile(readme_block("## Using it", "python"), "README.md", "exec"), {})


def test_names_as_the_papers_write_them_are_accepted_and_typos_get_the_nearest(tmp_path):
    trace = tmp_path / "t.csv"
    trace.write_text("".join(f"W,{i * 512},512\n" for i in range(64)))
    out = tmp_path / "r.json"
    result = invoke("run", str(trace), "--ftl", "FAST", "--format", "CSV", "--json", str(out))
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    resolved = json.loads(report["config.resolved"])["config"]
    assert report["config.scheme"] == "fast" and resolved["trace"]["format"] == "csv"
    csv = tmp_path / "g.csv"
    result = invoke("compare", "uniform:writes=2000", "--ftl", "BAST,O-FAST", "--capacity", "1MiB", "--csv", str(csv))
    assert result.exit_code == 0, result.output
    assert list(pd_read(csv)["ftl"]) == ["bast", "ofast"]
    result = invoke("run", "uniform:writes=10", "--ftl", "FSAT")
    assert result.exit_code == 2 and "unknown scheme `FSAT` (did you mean `fast`?)" in result.output
    # The one name a spelling begins, before the closest spelling: a log-block scheme, not the block baseline.
    for begun in ("logblock", "Log-Block"):
        result = invoke("run", "uniform:writes=10", "--ftl", begun)
        assert f"unknown scheme `{begun}` (did you mean `logblock-zoned`?)" in result.output
    result = invoke("run", "uniform:writes=10", "--format", "MRS")
    assert result.exit_code == 2 and "unknown trace format `MRS` (did you mean `msr`?)" in result.output


def pd_read(path):
    import pandas as pd

    return pd.read_csv(path)


def test_the_package_lists_its_api_and_the_schema_is_a_dataframe():
    import ftlsim

    listed = dir(ftlsim)
    for name in ("simulate", "sweep", "report_schema", "Report", "plot", "config", "schemes", "__version__"):
        assert name in listed
    assert "importlib" not in listed
    schema = ftlsim.report_schema()
    assert list(schema.columns) == ["key", "unit", "section", "description", "table"]
    assert schema.set_index("key").loc["flash.erases", "unit"] == "count"


def test_generate_reports_on_stderr_and_leaves_stdout_for_data(tmp_path):
    out = tmp_path / "g.csv"
    result = invoke("generate", "uniform:writes=100,seed=1", "-o", str(out))
    assert result.exit_code == 0, result.output
    assert result.stdout == "" and "100 requests written to" in result.stderr
    assert len(out.read_text().splitlines()) >= 100


def test_generate_and_convert_take_the_file_to_write_as_their_second_argument_or_o(tmp_path):
    out, with_o = tmp_path / "w.trace", tmp_path / "o.trace"
    result = invoke("convert", "uniform:writes=100,seed=1", str(out))
    assert result.exit_code == 0, result.output
    assert invoke("convert", "uniform:writes=100,seed=1", "-o", str(with_o)).exit_code == 0
    assert out.read_text() == with_o.read_text() and len(out.read_text().splitlines()) == 100
    result = invoke("convert", "uniform:writes=100,seed=1")
    assert result.exit_code == 2
    assert "give the trace file to write: ftlsim convert WORKLOAD OUTPUT (or -o OUTPUT)" in result.output
    result = invoke("generate", "uniform:writes=100,seed=1", str(tmp_path / "a.csv"), "-o", str(tmp_path / "b.csv"))
    assert result.exit_code == 2 and "two files to write" in result.output
    assert not (tmp_path / "a.csv").exists() and not (tmp_path / "b.csv").exists()


def test_generate_and_convert_write_to_standard_output_in_the_format_to_names(tmp_path):
    # OUTPUT - was "has no extension to name the format to write ... not to standard output".
    result = invoke("generate", "uniform:writes=100,seed=1", "-")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[0] == "op,offset,length,tag,time_us" and len(result.stdout.splitlines()) == 101
    assert "100 requests written to standard output" in result.stderr
    out = tmp_path / "w.trace"
    assert invoke("convert", "uniform:writes=100,seed=1", str(out)).exit_code == 0
    result = CliRunner().invoke(main, ["convert", "-", "-", "--to", "ssdsim"], input=invoke(
        "generate", "uniform:writes=100,seed=1", "-").stdout)
    assert result.exit_code == 0 and result.stdout == out.read_text(), result.output
    result = invoke("generate", "uniform:writes=100,seed=1", str(tmp_path / "x.csv"), "--to", "blkparse")
    assert result.exit_code == 2 and "--to names the format of standard output" in result.output
    with pytest.raises(ftlsim.FtlsimError, match="is for output '-'"):
        ftlsim.generate("uniform:writes=10", str(tmp_path / "y.csv"), output_format="csv")


def test_a_run_that_cannot_tell_schemes_apart_says_so_and_how_to_fix_it(tmp_path):
    # 200 one-page writes spread over 100 MiB: the device of the trace's extent is almost all unwritten.
    trace = tmp_path / "sparse.csv"
    trace.write_text("".join(f"W,{i * 524288},512\n" for i in range(200)))
    result = invoke("run", str(trace), "--ftl", "page")
    assert result.exit_code == 0, result.output
    warning = result.stderr
    assert "warning: the host wrote 200 pages, 0.098% of the device's 203,808" in warning
    # Not "the scheme never runs short of space": FAST and BAST merge on such a device, their log blocks few.
    assert "the figures are those of a mostly empty device" in " ".join(warning.split())
    assert "`--precondition full`, a smaller capacity or `--compact`" in warning
    # Filled first, the same device says something: no warning.
    result = invoke("run", "uniform:writes=3000", "--capacity", "1MiB", "--precondition", "full")
    assert result.exit_code == 0 and "warning" not in result.stderr
    # In a grid, one warning names every scheme that never erased.
    result = invoke("compare", "uniform:writes=1500", "--ftl", "page,dftl,fast", "--capacity", "1MiB")
    assert result.exit_code == 0, result.output
    assert "warning: page, dftl on uniform:writes=1500: no block was erased" in result.stderr
    assert "`--precondition full` or a smaller capacity" in result.stderr  # a workload has nothing to compact
    assert "fast on" not in result.stderr
    # Filled first and still never erasing (the writes fit the spare blocks): only the fix not used is offered.
    result = invoke("run", "uniform:writes=10", "--capacity", "64MiB", "--precondition", "full")
    assert result.exit_code == 0, result.output
    assert result.stderr.strip().endswith("the cleaning cost that sets schemes apart; use a smaller capacity")


def test_a_grid_with_a_failed_point_prints_its_other_rows_as_a_grid_without_one_does():
    # The failed point (log_blocks=0, which fast refuses when it is built) leaves NaN in the counts: the warning
    # still counts whole pages, and page, which takes no log_blocks, shows "-" there, not None.
    result = invoke("compare", "uniform:writes=2000,seed=1", "--capacity", "8MiB", "--ftl", "fast,page",
                    "-p", "log_blocks=4,0")
    assert result.exit_code == 2  # the failed point's input was bad
    assert "the host wrote 2,000 pages, 12.2% of the device's 16,384 logical pages" in " ".join(result.stderr.split())
    page_row = next(line for line in result.stdout.splitlines() if line.startswith("│ page"))
    assert page_row.split("│")[2].strip() == "-", page_row


def test_compare_and_sweep_take_repeated_ftl_param_and_metrics_options(tmp_path):
    # Repeats add up, as the comma-separated forms do; a scheme or value given twice runs once.
    out = tmp_path / "c.csv"
    result = invoke("compare", "uniform:writes=500,seed=1", "--ftl", "page", "--ftl", "FAST", "--ftl", "page,dftl",
                    "--capacity", "1MiB", "-p", "pages_per_block=8", "-p", "pages_per_block=16,8",
                    "--metrics", "flash.erases", "--metrics", "gc.runs", "--csv", str(out))
    assert result.exit_code == 0, result.output
    rows = pd_read(out)
    assert list(zip(rows["ftl"], rows["pages_per_block"])) == [
        ("page", 8), ("page", 16), ("fast", 8), ("fast", 16), ("dftl", 8), ("dftl", 16)]
    header = next(line for line in result.output.splitlines() if "ftl" in line)
    assert "flash.erases" in result.output and "gc.runs" in header, result.output
    out = tmp_path / "s.csv"
    result = invoke("sweep", "uniform:writes=300,seed=1", "--ftl", "page", "--ftl", "block", "--capacity", "1MiB",
                    "--csv", str(out))
    assert result.exit_code == 0, result.output
    assert sorted(pd_read(out)["ftl"]) == ["block", "page"]
    # Without --ftl, compare runs its default three.
    result = invoke("compare", "uniform:writes=300,seed=1", "--capacity", "1MiB", "--csv", str(out))
    assert result.exit_code == 0, result.output
    assert list(pd_read(out)["ftl"]) == ["bast", "fast", "ofast"]


def test_a_swept_parameter_wins_over_the_profile_at_every_value_and_the_grid_shows_what_ran(tmp_path):
    # gc_reserve_blocks=1 is the scheme's default and the profile's 3; the row of 1 ran with 1.
    out = tmp_path / "g.csv"
    result = invoke("sweep", "uniform:writes=3000,seed=1", "--ftl", "page", "--capacity", "1MiB",
                    "-p", "profile=psu-flashsim", "-p", "gc_reserve_blocks=1,2", "--csv", str(out))
    assert result.exit_code == 0, result.output
    table = pd_read(out).sort_values("gc_reserve_blocks")
    assert list(table["page.profile.gc_reserve_blocks"].astype(str)) == ["1", "2"], table.T
    assert table["flash.erases"].nunique() == 2, table["flash.erases"]


def test_the_run_header_echoes_what_ran_and_no_unset_parameter():
    result = invoke("run", "uniform:writes=300,seed=1", "--ftl", "page", "--capacity", "1MiB")
    assert result.exit_code == 0, result.output
    assert "profile" not in result.output and "=none" not in result.output, result.output
    result = invoke("run", "uniform:writes=300,seed=1", "--ftl", "page", "--capacity", "1MiB",
                    "-p", "profile=psu-flashsim")
    assert "profile=psu-flashsim" in result.output, result.output
    # On an array the device line keeps the preset's physical block (32 pages, not the 128-page stripe) and
    # an array line says the shape, queue depth and time scale that ran.
    result = invoke("run", "uniform:writes=300,seed=1", "--ftl", "page", "--capacity", "1MiB",
                    "-p", "channels=2", "-p", "dies_per_chip=2", "-p", "queue_depth=8", "-p", "time_scale=0.5")
    assert result.exit_code == 0, result.output
    assert "device: lee2007, 1.0 MiB, 512 B pages x 32\n" in result.output, result.output
    assert "array: 2 channels x 1 chip x 2 dies x 1 plane striped, queue depth 8, time scale 0.5\n" in result.output
    # Per die, the scheme's block is its die's (one plane here): the preset's, and the placement is said.
    result = invoke("run", "uniform:writes=300,seed=1", "--ftl", "fast", "--capacity", "1MiB",
                    "-p", "channels=2", "-p", "dies_per_chip=2", "-p", "placement=per-die")
    assert result.exit_code == 0, result.output
    assert "device: lee2007, 1.0 MiB, 512 B pages x 32\n" in result.output, result.output
    assert "array: 2 channels x 1 chip x 2 dies x 1 plane per-die, queue depth 32, time scale 1\n" in result.output


def test_the_run_header_echoes_a_parameter_a_scheme_fitted_to_the_device_as_it_ran():
    # It echoed log_blocks=393 where 32 ran (tiny, superblock on 1 MiB) and 256 where 64 ran (mast).
    for scheme, said in (("tiny", "log_blocks=32 (393 given) map_blocks=16 (256 given)"),
                         ("superblock", "log_blocks=32 (393 given)"), ("mast", "log_blocks=64 (256 given)")):
        result = invoke("run", "uniform:writes=300,seed=1", "--ftl", scheme, "--capacity", "1MiB")
        assert result.exit_code == 0, result.output
        assert said in result.output, result.output
    # A figure of the scheme's that is not a parameter as run (mast.idle_merges counts merges) is not one.
    result = invoke("run", "uniform:writes=300,seed=1", "--ftl", "mast", "--capacity", "1MiB")
    assert " idle_merges=4 " in result.output, result.output


def test_the_run_header_gives_a_size_to_the_byte_where_one_decimal_is_not_it():
    # Three dies of 16 KiB blocks round 1 MiB up to 1,081,344 B, which "1.0 MiB" alone did not say.
    result = invoke("run", "uniform:writes=200,seed=1", "--capacity", "1MiB", "-p", "channels=3")
    assert result.exit_code == 0, result.output
    assert "device: lee2007, 1.0 MiB (1,081,344 B), 512 B pages x 32" in result.stdout.splitlines()


def test_the_run_header_says_a_capacity_rounded_up_and_fits_80_columns(monkeypatch):
    # mqsim-default's scheme block is 256 MiB striped: --capacity 64MiB ran 256 MiB, and nothing said so.
    monkeypatch.setenv("COLUMNS", "80")
    result = invoke("run", "uniform:writes=300,seed=1", "--preset", "mqsim-default", "--capacity", "64MiB")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert "device: mqsim-default, 256.0 MiB, 8,192 B pages x 256" in lines
    assert "capacity: 64MiB given, rounded up to whole blocks of 256.0 MiB" in lines
    assert "array: 8 channels x 4 chips x 2 dies x 2 planes striped, queue depth 32," in lines
    assert max(map(len, lines)) <= 80, result.stdout
    # Per die the scheme's block is the die's 2 planes' blocks: the header and array.pages_per_block say 256.
    report = ftlsim.simulate("uniform:writes=300,seed=1", preset="mqsim-default", placement="per-die",
                             blocks_per_plane=2)
    assert (report["array.pages_per_block"], report["config.pages_per_block"]) == (256, 512)
    result = invoke("run", "uniform:writes=300,seed=1", "--preset", "mqsim-default", "-p", "placement=per-die",
                    "-p", "blocks_per_plane=2")
    assert "device: mqsim-default, 512.0 MiB, 8,192 B pages x 256" in result.stdout.splitlines(), result.stdout
    result = invoke("run", "uniform:writes=300,seed=1", "--capacity", "1MiB")
    assert "capacity:" not in result.stdout and "nvram:" not in result.stdout
    # An NVRAM write cache changes every figure: two tables with and without it read alike.
    result = invoke("run", "uniform:writes=300,seed=1", "--capacity", "1MiB", "--nvram", "128KiB")
    assert "nvram: 128.0 KiB, policy metadata, 256 page slots" in result.stdout.splitlines()
    # One larger than the device holds a slot a logical page: what ran is said, beside what was given.
    result = invoke("run", "uniform:writes=300,seed=1", "--capacity", "1MiB", "--nvram", "64MiB")
    assert "nvram: 1.0 MiB of the 64.0 MiB given, policy metadata, 2,048 page slots" in result.stdout.splitlines()
    # A grid says the NVRAM and the run settings every row ran with once, above its table, as `run` does.
    result = invoke("compare", "uniform:writes=300,seed=1", "--capacity", "1MiB", "--ftl", "page,fast",
                    "--nvram", "128KiB", "--nvram-policy", "lru", "--precondition", "full", "--compact")
    assert result.exit_code == 0, result.output
    assert ("every row: precondition=full, compact=true, nvram=128.0 KiB, nvram_policy=lru" in
            " ".join(result.stdout.split())), result.stdout


def test_the_run_header_names_overridden_timings_with_the_values_that_ran():
    result = invoke("run", "uniform:writes=300,seed=1", "--ftl", "page", "--capacity", "1MiB",
                    "-p", "page_bytes=2048", "-p", "pages_per_block=64")
    assert "device: lee2007 timings (geometry overridden), 1.0 MiB, 2,048 B pages x 64\n" in result.output
    assert "timings:" not in result.output
    result = invoke("run", "uniform:writes=300,seed=1", "--ftl", "page", "--capacity", "1MiB",
                    "-p", "read_us=25", "-p", "erase_us=1500")
    assert result.exit_code == 0, result.output
    assert "device: lee2007 (timings overridden), 1.0 MiB, 512 B pages x 32\n" in result.output, result.output
    assert ("timings: read_us=25.0 spare_read_us=15.0 program_us=200.0 spare_program_us=200.0 erase_us=1500.0"
            in " ".join(result.output.split())), result.output


def test_a_progress_bar_in_80_columns_gives_way_in_its_label_never_in_its_figures():
    import io

    from rich.console import Console

    from ftlsim.cli import progress_bar

    out = io.StringIO()
    console = Console(file=out, width=80, force_terminal=True, color_system=None)
    bar = progress_bar("{task.completed}/{task.fields[of]} runs", console)
    task = bar.add_task("/a/long/path/to/the/traces/umass_financial1_first10k.ssdsim.ascii/" * 2, total=None, of="?")
    with console.capture() as captured:
        console.print(bar.make_tasks_table([bar.tasks[task]]))
    line = captured.get().rstrip()
    assert len(line) <= 80 and line.endswith(" 0/? runs 0:00:00"), line
    assert line.startswith("/a/long/path/to/the/trace…")


def test_a_progress_bar_names_a_trace_by_its_file_name():
    from ftlsim.cli import bar_label

    # A path in full was cut to "mount cost after /work/sh…" in 80 columns: no trace named.
    assert bar_label("mount cost after /work/shared/traces/msr_wdev_1.csv") == "mount cost after msr_wdev_1.csv"
    assert bar_label("fast") == "fast"
    assert bar_label("3 traces") == "3 traces"


def test_a_report_on_standard_output_is_all_that_goes_there(tmp_path):
    import csv
    import io

    # `--json -` printed the table first, then the JSON: a pipe to a JSON reader failed at line 1.
    result = invoke("run", "uniform:writes=500,seed=1", "--capacity", "2MiB", "--json", "-")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["host.write_requests"] == 500
    assert "flash.erases" in result.stderr  # the table, on stderr
    assert "report written to standard output" in result.stderr  # not "to -"
    result = invoke("compare", "uniform:writes=500,seed=1", "--capacity", "2MiB", "--ftl", "page,fast", "--csv", "-")
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert [r["ftl"] for r in rows] == ["page", "fast"]
    result = invoke("info", "uniform:writes=500,seed=1", "--json", "-")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["writes"] == 500
    # What a command wrote is said on stderr: `reproduce --report DIR > verdicts.txt` kept it in the verdicts.
    result = invoke("reproduce", "ram-tables", "--report", str(tmp_path / "report"))
    assert result.exit_code == 0, result.output
    assert "written" not in result.stdout and "report written to" in result.stderr
    result = invoke("ram", "--ftl", "tiny", "--preset", "tinyftl-16g", "--json", "-")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["total_bytes"] == 12195  # TinyFTL's Table I
    # reproduce --csv - wrote a file named "-" (pandas' to_csv) after the table on stdout.
    result = invoke("reproduce", "ram-tables", "--csv", "-")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("source,ftl,paper bytes,ftlsim bytes,line\nTinyFTL Table I,tiny,12195,12195,")


def test_a_run_that_skipped_bad_lines_says_how_many(tmp_path):
    trace = tmp_path / "bad.csv"
    trace.write_text("W,0,4096\nnot a request\nW,4096,4096\nW,8192\n")
    result = invoke("run", str(trace), "--format", "csv", "--skip-bad-lines", "--capacity", "1MiB")
    assert result.exit_code == 0, result.output
    assert "warning: 2 lines of the trace did not parse and were skipped (--skip-bad-lines)" in result.stderr
    result = invoke("run", str(trace), "--format", "csv", "--capacity", "1MiB")
    assert result.exit_code == 2 and "bad.csv:2" in result.stderr, result.stderr


def test_a_grid_whose_runs_erased_nothing_says_so_above_its_table():
    # Erases 0 in every row had no column and no word: the table read as if erases were not counted.
    result = invoke("compare", "uniform:writes=500,seed=1", "--ftl", "page,dftl", "--capacity", "4MiB")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[1] == "every row: preset=lee2007, capacity=4.0 MiB, flash.erases=0"
    result = invoke("compare", "uniform:writes=3000,seed=1", "--ftl", "page,fast", "--capacity", "1MiB")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[1] == "every row: preset=lee2007, capacity=1.0 MiB", result.stdout


def test_a_trace_that_cannot_be_read_is_bad_input_for_a_grid_as_for_a_run(tmp_path):
    # compare and mount-cost started every scheme on it, then failed them all with exit 1.
    missing = str(tmp_path / "missing.csv")
    for command in (["run", missing], ["compare", missing, "--ftl", "page,fast"], ["mount-cost", missing]):
        result = invoke(*command)
        assert result.exit_code == 2, (command, result.output)
        assert f"error: cannot read trace {missing}: No such file or directory" in result.stderr, result.stderr


def test_a_share_of_the_device_under_a_thousandth_is_not_0_0_percent():
    from ftlsim.report import uninformative

    row = {"config.capacity_bytes": 106_679_872 * 4096, "config.page_bytes": 4096, "host.write_pages": 10_816,
           "config.precondition": "none", "flash.erases": 0}
    assert "10,816 pages, 0.01% of the device's 106,679,872" in uninformative(row)["unwritten"]
    row["host.write_pages"] = 2_000_000
    assert "2,000,000 pages, 1.9% of the device's" in uninformative(row)["unwritten"]


def test_a_trace_of_only_empty_requests_is_said_to_do_nothing(tmp_path):
    # It said "the host wrote 0 pages ... use `--precondition full`, a smaller capacity", which fixes nothing.
    trace = tmp_path / "empty.csv"
    trace.write_text("W,0,0\nR,512,0\n")
    result = invoke("run", str(trace))
    assert result.exit_code == 0, result.output
    said = " ".join(result.stderr.split())
    assert "warning: every one of the trace's 2 requests is 0 bytes long (host.empty_requests): the run read and " \
           "wrote nothing" in said and "the host wrote 0 pages" not in said, said


def test_a_spare_the_scheme_does_not_use_is_said_to_change_nothing():
    # fast's 8 log blocks and their spare take 9 of the 52 extra blocks 20% over-provisioning gives 256
    # logical blocks; page takes them all as its over-provisioning, so there is nothing to say.
    args = ["uniform:writes=2000", "--capacity", "4MiB", "--precondition", "full", "-p", "over_provisioning=0.2"]
    fast = invoke("run", *args, "--ftl", "fast")
    assert fast.exit_code == 0, fast.output
    said = " ".join(fast.stderr.split())
    assert ("warning: -p over_provisioning=0.2 puts 52 extra blocks on the chip and the scheme uses 9 of them "
            "(its log, reserve or map blocks): the other 43 change none of its figures") in said, said
    page = invoke("run", *args, "--ftl", "page")
    assert page.exit_code == 0 and "extra blocks on the chip" not in page.stderr, page.stderr
    # Python's simulate says it too, in its keywords.
    with pytest.warns(RuntimeWarning, match=r"^over_provisioning=0.2 puts 52 extra blocks on the chip"):
        ftlsim.simulate("uniform:writes=2000", ftl="fast", capacity="4MiB", precondition="full",
                        over_provisioning=0.2)
    with pytest.warns(RuntimeWarning, match=r"14.6% of the device's 2,048 logical pages.*`precondition='full'`"):
        ftlsim.simulate("uniform:writes=300,seed=1", capacity="1MiB")


def test_warnings_and_errors_wrap_between_words_in_a_terminal_and_keep_one_line_when_piped(monkeypatch):
    import io

    from rich.console import Console

    from ftlsim import cli

    text = "invalid parameter: scheme `bast`: -p log_blocks=0 is below 1, the least it can be [1]; " * 3
    for terminal, width in ((True, 60), (False, 160)):
        out = io.StringIO()
        monkeypatch.setattr(cli, "err_console", Console(file=out, width=width, force_terminal=terminal,
                                                        color_system=None))
        cli.say("[yellow]warning:[/]", text)
        lines = out.getvalue().splitlines()
        assert " ".join(lines).split() == ("warning: " + text).split()  # every word whole, [1] not markup
        assert (len(lines) > 1 and max(map(len, lines)) <= 60) if terminal else len(lines) == 1


def test_the_run_header_says_a_spare_raised_above_what_over_provisioning_gives(monkeypatch):
    # The header echoed over_provisioning=0.07 while page ran with 3 extra blocks on 4 logical ones (75%), the
    # least its GC needs; the same value given outright is refused.
    monkeypatch.setenv("COLUMNS", "80")
    result = invoke("run", "uniform:writes=200,seed=1", "--ftl", "page", "--capacity", "64KiB")
    assert result.exit_code == 0, result.output
    assert ("spare: 3 extra blocks, 75% of the 4 logical: the least page runs with\n"
            "       (over_provisioning=0.07 gives 1)\n") in result.stdout, result.stdout
    result = invoke("run", "uniform:writes=200,seed=1", "--ftl", "page", "--capacity", "4MiB")
    assert "spare:" not in result.stdout  # 0.07 of 256 blocks gives 18, more than GC needs
    # Per die each die's instance rounds its own share: 2 logical blocks and 3 extra on each of 64 dies.
    result = invoke("run", "uniform:writes=200,seed=1", "--preset", "mqsim-default", "-p", "blocks_per_plane=2",
                    "-p", "placement=per-die")
    said = " ".join(result.stdout.split())
    assert "spare: 192 extra blocks, 150% of the 128 logical: the least page runs with (over_provisioning=0.07 " \
           "gives 64)" in said, result.stdout
