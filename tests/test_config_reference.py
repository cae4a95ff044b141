"""`ftlsim config --example run|sweep` and the validator read one reference of keys: the examples parse, pass
the validator and run; unknown keys and parameter typos are refused before anything runs, naming the file,
the key and the nearest valid one (exit 2 on the command line, an exception in Python)."""

import sys

import pytest
from click.testing import CliRunner

import ftlsim
from ftlsim import _core
from ftlsim._registry import registry
from ftlsim.cli import main
from ftlsim.config import check_run_table, check_sweep_table, run_kwargs, sweep_parts
from ftlsim.reference import OPTIONS, PARAMS, option_default, option_keys

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib


def invoke(*args):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_every_key_the_engine_takes_has_a_meaning():
    keys = registry()["keys"]
    assert set(option_keys()) == (set(keys["trace"]) | set(keys["device"]) | set(keys["run"])) - {
        "ftl", "params", "trace", "precondition", "preset", "capacity"} | {"device"}
    assert [k for k in option_keys() if not OPTIONS.get(k)] == []
    params = {k for s in registry()["schemes"] for k in (s["defaults"] or {})}
    assert sorted(k for k in params if not PARAMS.get(k)) == []


def test_the_run_example_parses_validates_and_runs_with_every_default(tmp_path, monkeypatch):
    result = invoke("config", "--example", "run")
    assert result.exit_code == 0, result.output
    assert invoke("config").output == result.output  # a run's file is the one printed by default
    table = tomllib.loads(result.output)
    check_run_table(table)
    kwargs = run_kwargs(table)
    assert kwargs["ftl"] == "page" and kwargs["rmw"] is True
    # page's over_provisioning is also a run option (unset by default): under [params] it set the run option,
    # and the run echoed an extra `run: over_provisioning=0.07` line that the plain run has not.
    assert "over_provisioning" not in kwargs
    # Every option with a default is written out, so the file states the run completely.
    assert {k for k in option_keys() if k in table} == {k for k in option_keys() if option_default(k) is not None}
    monkeypatch.chdir(tmp_path)
    config = tmp_path / "run.toml"
    config.write_text(result.output.replace("writes=150000", "writes=3000"))
    result = invoke("run", "-c", str(config), "--json", "r.json")
    assert result.exit_code == 0, result.output
    assert "run:" not in result.output
    ours = ftlsim.Report.from_json((tmp_path / "r.json").read_text())
    default = ftlsim.simulate("uniform:writes=3000,seed=1")
    assert (ours.erases, ours.page_writes, ours.time_us) == (default.erases, default.page_writes, default.time_us)
    assert invoke("run", "uniform:writes=3000,seed=1", "--json", "plain.json").exit_code == 0
    assert ours["config.resolved"] == ftlsim.Report.from_json((tmp_path / "plain.json").read_text())["config.resolved"]


def test_the_examples_fit_an_80_column_editor():
    for example in ("run", "sweep"):
        lines = invoke("config", "--example", example).output.splitlines()
        assert max(len(line) for line in lines) <= 79, example
        # No TOML a reader cannot copy: `null` is not TOML, and a `key = value` is never broken over lines.
        assert not any("null" in line for line in lines), example
        assert not any(line.rstrip().endswith((" =", "-")) and line.startswith("#   ") for line in lines), example


def test_the_sweep_example_parses_validates_and_runs(tmp_path, monkeypatch):
    result = invoke("config", "--example", "sweep")
    assert result.exit_code == 0, result.output
    table = tomllib.loads(result.output)
    traces, schemes, grid, common, settings = sweep_parts(table)
    assert traces == ["uniform:writes=150000,seed=1"] and schemes == {"page": {}, "fast": {"log_blocks": [4, 8, 16]}}
    assert settings["store"] == "results.parquet" and common["precondition"] == "none"
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sweep.toml").write_text(result.output.replace("writes=150000", "writes=2000"))
    result = invoke("sweep", "-c", "sweep.toml", "--jobs", "1")
    assert result.exit_code == 0, result.output
    import pandas as pd

    assert len(pd.read_parquet(tmp_path / "results.parquet")) == 4


def test_typos_in_a_sweep_file_name_the_file_the_key_and_the_nearest_one(tmp_path):
    config = tmp_path / "sweep.toml"
    config.write_text('traces = ["uniform:writes=100000000"]\ncapcity = "8MiB"\n[schemes]\npage = {}\n'
                      'fast = { log_block = [4, 8] }\n')
    result = invoke("sweep", "-c", str(config))
    assert result.exit_code == 2
    assert f"config file {config}: 2 problems" in result.output
    assert "unknown key `capcity` (did you mean `capacity`?)" in result.output
    assert "unknown key `schemes.fast.log_block` (did you mean `log_blocks`?)" in result.output
    assert not (tmp_path / "results.parquet").exists()


def test_typos_in_a_run_file_are_refused(tmp_path):
    config = tmp_path / "run.toml"
    config.write_text('trace = "uniform:writes=100000000"\nftl = "fast"\n[params]\nlog_block = 4\n')
    result = invoke("run", "-c", str(config))
    assert result.exit_code == 2
    assert f"config file {config}: unknown key `params.log_block` (did you mean `log_blocks`?)" in result.output


def test_python_sweep_and_simulate_raise_on_typos_before_running():
    with pytest.raises(_core.FtlsimError, match=r"`fast` has no parameter or option `log_block` \(did you mean"):
        ftlsim.sweep("uniform:writes=100000000", {"page": {}, "fast": {"log_block": [4, 8]}})
    with pytest.raises(_core.FtlsimError, match=r"no parameter or option `capcity` \(did you mean `capacity`"):
        ftlsim.sweep("uniform:writes=100000000", ["page", "fast"], capcity="8MiB")
    with pytest.raises(_core.FtlsimError, match=r"no parameter or option `capcity` \(did you mean `capacity`") as e:
        ftlsim.simulate("uniform:writes=100000000", capcity="8MiB")
    # The key as fields too, as a value not allowed carries them (every field was None).
    assert (e.value.key, e.value.value, e.value.suggestion) == ("capcity", "8MiB", "capacity")
    assert e.value.expected == "is not a parameter of page or a run option"


def test_measure_from_of_the_wrong_form_says_what_it_takes():
    # measure_from=-1 read "data did not match any variant of untagged enum MeasureFrom".
    for given, shown in ((-1, "-1"), (1.5, "1.5"), (True, "True")):
        with pytest.raises(_core.FtlsimError) as e:
            ftlsim.simulate("uniform:writes=100", measure_from=given)
        assert str(e.value) == (f"invalid parameter: measure_from={shown} is not a request number (e.g. 10000) or a "
                                f"time with a unit (30s, 1500ms, 200us)"), str(e.value)
        assert e.value.key == "measure_from"


def test_a_grid_parameter_some_schemes_take_is_still_fine():
    check_sweep_table({"traces": ["uniform:writes=10"], "schemes": ["page", "fast"], "grid": {"log_blocks": [4]}})
    with pytest.raises(_core.FtlsimError, match="unknown key `grid.log_blokcs`"):
        check_sweep_table({"traces": ["x"], "schemes": ["page", "fast"], "grid": {"log_blokcs": [4]}})


def test_a_grid_parameter_typo_on_the_command_line_is_refused_before_running():
    for command in ("compare", "sweep"):
        result = invoke(command, "uniform:writes=100000000", "--ftl", "page,fast", "-p", "log_blok=4,8")
        assert result.exit_code == 2, command
        assert "--param: unknown key `log_blok` (did you mean `log_blocks`?)" in result.output
        # What each scheme takes, as a single run says it.
        assert "; fast takes lazy_merge, log_blocks)" in " ".join(result.output.split())


def test_a_sweep_file_with_a_list_of_schemes_and_a_common_grid_runs(tmp_path):
    config = tmp_path / "sweep.toml"
    config.write_text('traces = ["uniform:writes=2000,seed=1"]\ncapacity = "1MiB"\nschemes = ["page", "FAST"]\n'
                      "[grid]\nlog_blocks = [4, 8]\n")
    out = tmp_path / "rows.csv"
    result = invoke("sweep", "-c", str(config), "--jobs", "1", "--csv", str(out))
    assert result.exit_code == 0, result.output
    import pandas as pd

    rows = pd.read_csv(out)
    assert list(rows["ftl"]) == ["page", "fast", "fast"] and list(rows["log_blocks"].dropna()) == [4, 8]


def test_the_examples_say_a_parameter_given_beside_a_profile_wins_whatever_its_value():
    # They said "parameters given off their default override it": the scheme's default given wins too.
    text = " ".join(line.lstrip("# ") for line in invoke("config", "--example", "sweep").output.splitlines())
    assert "off their default" not in text
    assert "a parameter given beside it wins over the profile's value, whatever its value" in text
    ran = ftlsim.simulate("uniform:writes=300,seed=1", ftl="page", capacity="1MiB", profile="psu-flashsim",
                          gc_reserve_blocks=1)
    assert '"gc_reserve_blocks":1' in ran["config.params"]
