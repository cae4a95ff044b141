"""Structured errors across the binding: an invalid parameter crosses as fields (key, value, expected,
suggestion), which the Python API spells as keyword arguments and the command line as its options; a config
value of the wrong type is named by its key, never by a parser's line and column."""

import json

import pytest
from click.testing import CliRunner

import ftlsim
from ftlsim import _core
from ftlsim.cli import main, option_spelling
from ftlsim.errors import keyword, spelled


def test_an_invalid_device_parameter_crosses_as_fields():
    with pytest.raises(ftlsim.FtlsimError) as e:
        ftlsim.simulate("uniform:writes=100", capacity="1MiB", page_bytes=4000, endurance=0)
    err = e.value
    assert (err.key, err.value, err.suggestion) == ("page_bytes", "4000", "2048")
    assert err.expected.startswith("must be a power of two from 512")
    assert [p["key"] for p in err.problems] == ["page_bytes", "endurance"]
    assert err.context == "invalid parameter: device: "
    assert str(err) == ("invalid parameter: device: page_bytes=4000 must be a power of two from 512 to 1048576 "
                        "(1 MiB); e.g. page_bytes=2048; endurance=0 would fail the first erase; give erases per "
                        "block; e.g. endurance=10000")


def test_the_command_line_spells_the_same_fields_as_its_options():
    r = CliRunner().invoke(main, ["run", "uniform:writes=100", "--capacity", "1MiB", "-p", "page_bytes=4000"])
    assert r.exit_code == 2
    assert ("invalid parameter: device: -p page_bytes=4000 must be a power of two from 512 to 1048576 (1 MiB); "
            "e.g. -p page_bytes=2048") in " ".join(r.output.split())


def test_spellings():
    assert keyword("wrap", "true") == "wrap=True"
    assert keyword("log_blocks", "8") == "log_blocks=8"
    assert keyword("capacity", "64MiB") == "capacity='64MiB'"
    assert option_spelling("wrap", "true") == "--wrap"
    assert option_spelling("capacity", "64MiB") == "--capacity 64MiB"
    assert option_spelling("log_blocks", "8") == "-p log_blocks=8"


def test_an_error_without_fields_keeps_its_message():
    error = _core.FtlsimError("no trace file `x`")
    assert (error.key, error.problems, spelled(error, keyword)) == (None, (), None)


def test_a_config_value_of_the_wrong_type_is_named_by_its_key():
    with pytest.raises(_core.FtlsimError) as e:
        _core.simulate("uniform:writes=10", {"ftl": "page", "device": {"pages_per_block": "many"}})
    # The key as the front ends spell it (a device override is `pages_per_block`), and what it takes in words.
    assert (e.value.key, e.value.value, e.value.expected) == (
        "pages_per_block", "many", "must be a whole number")
    assert str(e.value) == "invalid parameter: pages_per_block=many must be a whole number"
    # True is not 1 and "no" is not a bool: Python's types cross as they are.
    with pytest.raises(_core.FtlsimError, match="pages_per_block=true must be a whole number$"):
        _core.simulate("uniform:writes=10", {"ftl": "page", "device": {"pages_per_block": True}})
    with pytest.raises(_core.FtlsimError, match="params.log_blocks=NaN is not a finite number") as e:
        _core.simulate("uniform:writes=10", {"ftl": "fast", "params": {"log_blocks": float("nan")}})
    assert e.value.key == "params.log_blocks"


def test_a_scheme_parameter_out_of_range_is_spelled_from_fields_alone():
    # The engine's range check crosses as fields; the API spells them as keywords, the command line as options.
    with pytest.raises(ftlsim.FtlsimError) as e:
        ftlsim.simulate("uniform:writes=100", ftl="fast", capacity="1MiB", log_blocks=1)
    err = e.value
    assert (err.key, err.value, err.suggestion) == ("log_blocks", "1", "2")
    assert err.context == "invalid parameter: scheme `fast`: "
    assert str(err).startswith("invalid parameter: scheme `fast`: log_blocks=1 is below 2, the least it can be")
    assert str(err).endswith("; e.g. log_blocks=2")
    r = CliRunner().invoke(main, ["run", "uniform:writes=100", "--ftl", "fast", "--capacity", "1MiB",
                                  "-p", "log_blocks=1"])
    assert r.exit_code == 2
    text = " ".join(r.output.split())
    assert "scheme `fast`: -p log_blocks=1 is below 2" in text and "e.g. -p log_blocks=2" in text


def test_spelling_uses_the_fields_and_not_the_message():
    # A message whose text disagrees with its fields is spelled from the fields: no pattern reads the text.
    error = _core.FtlsimError("capacity=1 bytes wrap=true")
    error.problems = [{"key": "capacity", "value": "1", "expected": "is too small", "suggestion": "2MiB",
                       "alternatives": [{"key": "wrap", "value": "true", "does": "to fold"}]}]
    error.context = "t.csv:2: "
    assert spelled(error, keyword) == "t.csv:2: capacity=1 is too small; e.g. capacity='2MiB', or wrap=True (to fold)"
    assert spelled(error, option_spelling) == \
        "t.csv:2: --capacity 1 is too small; e.g. --capacity 2MiB, or --wrap (to fold)"
    assert option_spelling("torn_pages", "false") == "without --torn-pages"


def test_trace_statistics_cross_as_python_objects_with_exact_big_totals(tmp_path):
    trace = tmp_path / "t.csv"
    trace.write_text(f"W,0,{2**64 - 1}\n" * 3)
    stats = _core.trace_info(str(trace), {}, 16384, 512)
    assert type(stats) is dict and stats["write_bytes"] == 3 * (2**64 - 1) and stats["footprint_bytes"] == 2**64
    assert list(stats)[:3] == ["format", "requests", "reads"]


def test_a_list_where_a_run_takes_one_value_names_the_sweep_that_runs_each():
    with pytest.raises(ftlsim.FtlsimError) as e:
        ftlsim.simulate("uniform:writes=100", capacity="1MiB", pages_per_block=[32, 64])
    assert str(e.value) == ("pages_per_block=[32, 64]: a run takes one value of pages_per_block; to run each, "
                            "sweep them: ftlsim.sweep(..., grid={'pages_per_block': [32, 64]})")
    # A sweep's common keywords are each run's: the sweep stops before any run, saying the same.
    with pytest.raises(ftlsim.FtlsimError, match=r"grid=\{'log_blocks': \[4, 8\]\}"):
        ftlsim.sweep("uniform:writes=100", ["fast"], capacity="1MiB", log_blocks=(4, 8))


def test_values_refused_before_the_engine_carry_the_key_and_what_is_allowed(tmp_path):
    # As the engine's errors do: a notebook reads e.key rather than parsing the message.
    cases = [
        (dict(erase_us=float("nan")), "erase_us", "is not a finite number", "erase_us=nan is not a finite number"),
        (dict(log_blocks=10**30), "log_blocks", "must be at most 18,446,744,073,709,551,615",
         "log_blocks=1000000000000000000000000000000 must be at most 18,446,744,073,709,551,615"),
        (dict(log_blocks=-(10**30)), "log_blocks", "must be at least -9,223,372,036,854,775,808",
         "log_blocks=-1000000000000000000000000000000 must be at least -9,223,372,036,854,775,808"),
        (dict(pages_per_block=[32, 64]), "pages_per_block", "must be one value", "pages_per_block=[32, 64]: a run"),
    ]
    for options, key, expected, message in cases:
        with pytest.raises(ftlsim.FtlsimError) as e:
            ftlsim.simulate("uniform:writes=100", capacity="1MiB", ftl="fast", **options)
        assert str(e.value).startswith(message), str(e.value)
        assert (e.value.key, e.value.expected) == (key, expected)
    with pytest.raises(ftlsim.FtlsimError) as e:
        ftlsim.generate("uniform:writes=10", str(tmp_path / "x.csv"), log_blocks=3)
    assert str(e.value) == ("generate takes device and trace options (ftlsim list), not log_blocks: a generated "
                            "trace does not depend on a scheme")
    assert (e.value.key, e.value.value, e.value.expected) == ("log_blocks", 3, "must be a device or trace option")
    assert not (tmp_path / "x.csv").exists()


def test_a_count_past_its_type_states_the_bound_of_its_key_where_that_is_tighter():
    # queue_depth=10000000000 was told "must be at most 4,294,967,295" (u32), and 4294967295 then "must be
    # from 1 to 65535": the bound that holds is stated at once, past 32 bits (the engine) and past 64 (Python).
    depth = "must be from 1 to 65535 requests in the device at once"
    planes = ("must be at most 4096: an array has at most 4096 planes (channels x chips_per_channel x "
              "dies_per_chip x planes_per_die)")
    cases = [("queue_depth", 10**10, depth, "32"), ("queue_depth", 2**70, depth, "32"),
             ("channels", 2**32, planes, "1"), ("planes_per_die", 10**30, planes, "1")]
    for key, value, expected, fits in cases:
        with pytest.raises(ftlsim.FtlsimError) as e:
            ftlsim.simulate("uniform:writes=100", capacity="1MiB", ftl="page", **{key: value})
        assert (e.value.key, e.value.expected, e.value.suggestion) == (key, expected, fits), str(e.value)
        assert f"{key}={value} {expected}" in str(e.value), str(e.value)
    # A key without a bound of its own keeps its type's.
    with pytest.raises(ftlsim.FtlsimError, match=r"extra_blocks=10000000000 must be at most 4,294,967,295$"):
        ftlsim.simulate("uniform:writes=100", capacity="1MiB", ftl="page", extra_blocks=10**10)
    result = CliRunner().invoke(main, ["run", "uniform:writes=100", "-p", "queue_depth=10000000000"])
    assert result.exit_code == 2, result.output
    assert f"-p queue_depth=10000000000 {depth}" in " ".join(result.output.split()), result.output


def test_a_workload_value_of_the_wrong_kind_is_named_in_words_and_a_traces_fix_in_the_callers_spelling(tmp_path):
    with pytest.raises(ftlsim.FtlsimError, match="writes=`-5` is not a whole number of 0 or more"):
        ftlsim.simulate("uniform:writes=-5")
    with pytest.raises(ftlsim.FtlsimError, match="read_share=`most` is not a number"):
        ftlsim.simulate("uniform:writes=5,read_share=most")
    # Python names its keywords and the command line its options (both were said, "format=NAME / --format NAME").
    trace = tmp_path / "bad.csv"
    trace.write_text("W,0,4096\nX,12,ab\nX,13,ab\n")  # (one such line is the line's fault: below)
    with pytest.raises(ftlsim.FtlsimError, match="; pass format='NAME'$"):
        ftlsim.simulate(str(trace))
    result = CliRunner().invoke(main, ["run", str(trace)])
    assert result.exit_code == 2 and result.output.rstrip().endswith("; pass --format NAME"), result.output
    with pytest.raises(ftlsim.FtlsimError, match=r"bad.csv:2: .* \(pass skip_bad_lines=True to skip such lines\)$"):
        ftlsim.simulate(str(trace), format="csv")
    result = CliRunner().invoke(main, ["info", str(trace), "--format", "csv"])
    assert result.exit_code == 2 and "(pass --skip-bad-lines to skip such lines)" in result.output, result.output


def test_a_name_not_known_crosses_as_fields_too():
    # ftl="nosuch" and the like raised with every field None, where the README promises key, value, expected.
    for kwargs, key, value in ((dict(ftl="nosuch"), "ftl", "nosuch"), (dict(preset="nosuch"), "preset", "nosuch"),
                               (dict(nvram="128KiB", nvram_policy="fifo"), "nvram_policy", "fifo")):
        with pytest.raises(ftlsim.FtlsimError) as e:
            ftlsim.simulate("uniform:writes=10", **kwargs)
        assert (e.value.key, e.value.value) == (key, value), kwargs
        assert e.value.expected.startswith("must be one of "), e.value.expected
    assert e.value.expected == "must be one of metadata, region, lru, bplru"
    with pytest.raises(ftlsim.FtlsimError) as e:
        ftlsim.simulate("uniform:writes=10", ftl="fsat")
    assert (e.value.key, e.value.value, e.value.suggestion) == ("ftl", "fsat", "fast")


def test_a_choice_is_taken_in_any_case_and_a_misspelt_one_is_named():
    # nvram_policy="LRU" was refused ("unknown nvram policy `LRU`") where ftl="FAST" runs fast; "lur" named no
    # policy near it.
    r = ftlsim.simulate("uniform:writes=200,seed=1", capacity="1MiB", nvram="16KiB", nvram_policy="LRU",
                        precondition="Full")
    assert (r["nvram.policy"], r["config.precondition"]) == ("lru", "full")
    assert json.loads(r["config.resolved"])["config"]["nvram_policy"] == "lru"
    with pytest.raises(ftlsim.FtlsimError) as e:
        ftlsim.simulate("uniform:writes=10", nvram="16KiB", nvram_policy="lur")
    assert (e.value.key, e.value.value, e.value.suggestion) == ("nvram_policy", "lur", "lru")
    result = CliRunner().invoke(main, ["run", "uniform:writes=200,seed=1", "--capacity", "1MiB", "--nvram", "16KiB",
                                       "--nvram-policy", "BPLRU", "--precondition", "FULL"])
    assert result.exit_code == 0 and "policy bplru" in result.output, result.output


def test_a_python_value_is_shown_as_given():
    # log_blocks="8" read "log_blocks=8 must be a whole number", wrap="false" read "wrap=False must be true or
    # false": the engine's text of the value, rebuilt, contradicted the message.
    with pytest.raises(ftlsim.FtlsimError, match=r"^bad run configuration: log_blocks='8' must be a whole number|"
                                                 r"log_blocks='8' must be a whole number"):
        ftlsim.simulate("uniform:writes=10", ftl="fast", log_blocks="8")
    with pytest.raises(ftlsim.FtlsimError, match="wrap='false' must be true or false"):
        ftlsim.simulate("uniform:writes=10", wrap="false")


def test_a_size_that_does_not_parse_fills_the_fields_as_every_value_not_allowed():
    with pytest.raises(ftlsim.FtlsimError) as e:
        ftlsim.simulate("uniform:writes=100", ftl="fast", capacity="64M")
    assert (e.value.key, e.value.value, e.value.suggestion) == ("capacity", "64M", "64MiB")
    assert e.value.expected.startswith("has the unit `M`, which could mean MiB")
    with pytest.raises(ftlsim.FtlsimError) as e:
        ftlsim.simulate("uniform:writes=100", ftl="fast", nvram="2 parsecs")
    assert (e.value.key, e.value.value, e.value.suggestion) == ("nvram", "2 parsecs", None)
    assert [p["key"] for p in e.value.problems] == ["nvram"]


def test_a_choice_a_function_and_a_sweeps_errors_policy_are_checked_with_the_fields():
    with pytest.raises(ftlsim.FtlsimError, match="^precondition='ful' must be one of none, full, trace; e.g. "
                                                 "precondition='full'$") as e:
        ftlsim.simulate("uniform:writes=10", precondition="ful")  # serde's "unknown variant", no suggestion
    assert (e.value.key, e.value.value, e.value.suggestion) == ("precondition", "ful", "full")
    with pytest.raises(ftlsim.FtlsimError, match=r"^progress=5 must be a function of \(requests, done, total\)$") as e:
        ftlsim.simulate("uniform:writes=10", progress=5)  # a bare TypeError from inside the run
    assert e.value.key == "progress"
    with pytest.raises(ftlsim.FtlsimError, match="errors='ignore' must be one of raise, keep$"):
        ftlsim.sweep("uniform:writes=10", ["page"], errors="ignore")  # taken as "keep" without a word


def test_a_device_size_that_does_not_parse_is_a_problem_of_its_key_in_the_callers_spelling():
    # It was "bad run configuration: device.spare_bytes: size `x` does not parse ..." with no expected field.
    with pytest.raises(ftlsim.FtlsimError) as e:
        ftlsim.simulate("uniform:writes=30,seed=1", capacity="1MiB", spare_bytes="x")
    assert str(e.value).startswith("invalid parameter: spare_bytes='x' does not parse; write a number"), e.value
    assert (e.value.key, e.value.value) == ("spare_bytes", "x")
    with pytest.raises(ftlsim.FtlsimError, match=r"^invalid parameter: page_bytes=-1 must not be negative"):
        ftlsim.simulate("uniform:writes=30,seed=1", capacity="1MiB", page_bytes=-1)
    result = CliRunner().invoke(main, ["run", "uniform:writes=30", "--capacity", "1MiB", "-p", "spare_bytes=x"])
    assert result.exit_code == 2
    assert result.output.startswith("error: invalid parameter: -p spare_bytes=x does not parse"), result.output
    # A size that parses but is past 32 bits is said as given; it was "bad run configuration: device.spare_bytes:
    # 5497558138880 must be at most ...", in neither spelling.
    result = CliRunner().invoke(main, ["run", "uniform:writes=30", "--capacity", "1MiB", "-p", "spare_bytes=5TiB"])
    assert result.exit_code == 2
    assert result.output.startswith("error: invalid parameter: -p spare_bytes=5TiB must be at most 4,294,967,295 "
                                    "bytes"), result.output


def test_a_spare_area_smaller_than_what_each_page_carries_in_it_is_refused():
    # spare_bytes=0 ran every scheme, mount and the crash test on spare areas that could not hold a logical page.
    result = CliRunner().invoke(main, ["run", "uniform:writes=30", "--capacity", "1MiB", "-p", "spare_bytes=0"])
    assert result.exit_code == 2
    assert result.output.startswith("error: invalid parameter: device: -p spare_bytes=0 is less than the 13 bytes"), \
        result.output
    with pytest.raises(ftlsim.FtlsimError) as e:
        ftlsim.simulate("uniform:writes=30,seed=1", capacity="1MiB", spare_bytes=12)
    assert (e.value.key, e.value.suggestion) == ("spare_bytes", "16")
    assert ftlsim.simulate("uniform:writes=30,seed=1", capacity="1MiB", spare_bytes=13)["config.spare_bytes"] == 13
