"""The command line in its ecosystem and hostile input at its edges:
errors on stderr with exit 2 (bad input) or 1 (failed run), suggestions in the user's spelling, outputs
checked before a run, Ctrl-C as exit 130."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner

import ftlsim
from ftlsim.cli import main


def invoke(*args):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def ftlsim_cmd(*args, **kw):
    return subprocess.run([sys.executable, "-m", "ftlsim", *args], capture_output=True, text=True, timeout=120, **kw)


def test_errors_go_to_stderr_with_exit_2_for_bad_input():
    p = ftlsim_cmd("run", "uniform:writes=10", "--ftl", "fsat")
    assert p.returncode == 2
    assert p.stdout == ""
    assert "unknown scheme `fsat` (did you mean `fast`?)" in p.stderr


def test_python_dash_m_ftlsim_runs_the_command():
    p = ftlsim_cmd("list", "--json")
    assert p.returncode == 0, p.stderr
    listing = json.loads(p.stdout)
    assert {"page", "fast", "bast", "nftl"} <= {s["name"] for s in listing["schemes"]}
    assert "uniform" in {w["name"] for w in listing["workloads"]}
    assert set(listing) == {"schemes", "presets", "workloads", "formats"}


def test_a_misspelt_workload_suggests_the_nearest_name(tmp_path):
    # Every command that reads a trace (info, convert and compare said "cannot read trace ...: No such file").
    typo = "unifrom:writes=100,seed=1"
    for args in (["run", typo], ["info", typo], ["convert", typo, str(tmp_path / "x.csv")],
                 ["compare", typo, "--capacity", "1MiB"]):
        result = invoke(*args)
        assert result.exit_code == 2, (args, result.output)
        assert "no built-in workload `unifrom` (did you mean `uniform`?)" in result.output, (args, result.output)
    assert not (tmp_path / "x.csv").exists()
    with pytest.raises(ftlsim.FtlsimError, match="did you mean `hotcold`"):
        ftlsim.simulate("hotcod:writes=10")


def test_suggestions_are_in_the_users_spelling(tmp_path):
    trace = tmp_path / "t.csv"
    trace.write_text("W,0,4096\nW,1048576,4096\n")
    result = invoke("run", str(trace), "--capacity", "1MiB")
    assert result.exit_code == 2
    assert "--capacity 2MiB" in result.output and "--wrap" in result.output and "--compact" in result.output
    assert "wrap=true" not in result.output and 'capacity="' not in result.output
    with pytest.raises(ftlsim.FtlsimError, match=r"e.g. capacity='2MiB', or wrap=True \(.*\), or compact=True"):
        ftlsim.simulate(str(trace), capacity="1MiB")
    # A fix the run already uses is not offered again: compacted, the two extents touched still need 2 MiB.
    with pytest.raises(ftlsim.FtlsimError) as e:
        ftlsim.simulate(str(trace), capacity="1MiB", compact=True)
    assert str(e.value).endswith("e.g. capacity='2MiB', or wrap=True (to fold addresses into the device)")
    # Read without a pre-pass, the trace is read on to its furthest request: the capacity suggested holds all of
    # it, not only the first request beyond (which a second run would then fail further on), here or in warm-up.
    trace.write_text("W,0,4096\nW,1048576,4096\nW,0,4096\nW,9437184,4096\nW,4096,4096\n")
    message = (r"t.csv:2: capacity='1MiB' \(the device's logical capacity\) ends before byte 1,052,672, where the request ends \(the trace's furthest request ends at "
               r"byte 9,441,280\); e.g. capacity='10MiB'")
    for precondition in ("none", "trace"):
        with pytest.raises(ftlsim.FtlsimError, match=message):
            ftlsim.simulate(str(trace), capacity="1MiB", precondition=precondition)
    result = invoke("run", str(trace), "--capacity", "1MiB")
    assert "e.g. --capacity 10MiB" in " ".join(result.output.split())
    assert "--capacity 1MiB (the device's logical capacity)" in " ".join(result.output.split())  # not 1048576 bytes
    # Compacted, the trace's end is known before it runs: the capacity suggested holds all of it, not only the
    # first request beyond (extents 5, 0 and 10 compact to 1, 0 and 2: 3 MiB).
    trace.write_text("W,5242880,4096\nW,0,4096\nW,10485760,4096\n")
    with pytest.raises(ftlsim.FtlsimError, match=r"t.csv:1: .* ends before byte 1,052,672, .*e.g. capacity='3MiB'"):
        ftlsim.simulate(str(trace), capacity="1MiB", compact=True)
    trace.write_text("W,0,2097152\n")  # longer than the device: wrapping cannot fold it in
    with pytest.raises(ftlsim.FtlsimError) as e:
        ftlsim.simulate(str(trace), capacity="1MiB", wrap=True)
    assert "wrap=True" not in str(e.value) and "or compact=True" in str(e.value)


def test_a_value_refused_before_the_engine_is_spelled_as_the_command_line_gives_it():
    # Errors raised in Python carried key and value but no `problems`, so the command line showed the keyword
    # (extra_blocks=...) where the engine's own errors say -p extra_blocks=...
    big = str(10**23)
    result = invoke("run", "uniform:writes=10", "-p", f"extra_blocks={big}")
    assert result.exit_code == 2
    assert f"error: -p extra_blocks={big} must be at most 18,446,744,073,709,551,615" in " ".join(result.output.split())
    with pytest.raises(ftlsim.FtlsimError) as e:
        ftlsim.simulate("uniform:writes=10", extra_blocks=10**23)
    assert str(e.value) == f"extra_blocks={big} must be at most 18,446,744,073,709,551,615"
    assert e.value.problems == [{"key": "extra_blocks", "value": big, "suggestion": None, "alternatives": [],
                                 "expected": "must be at most 18,446,744,073,709,551,615"}]


def test_a_trace_too_far_for_the_geometry_says_the_capacity_came_from_the_trace(tmp_path):
    # No capacity given: the trace's furthest byte (64 TiB) is the capacity, which no geometry of these pages
    # addresses. The message says where the figure came from, and offers no smaller capacity without wrap.
    trace = tmp_path / "far.csv"
    trace.write_text(f"W,0,4096\nW,{64 << 40},4096\n")
    result = invoke("run", str(trace))
    assert result.exit_code == 2
    text = " ".join(result.output.split())
    assert f"--capacity {(64 << 40) + 4096} bytes (where the trace's furthest request ends: the capacity when none" in text
    assert "or --wrap (with a smaller capacity, to fold the trace's addresses into it)" in text
    assert "or a smaller capacity" not in text
    # A capacity stated too large may be made smaller.
    result = invoke("run", "uniform:writes=10", "--capacity", "64TiB")
    assert "use larger pages (page_bytes) or a smaller capacity, or --compact" in " ".join(result.output.split())


def test_a_failed_run_exits_1_and_bad_input_2(monkeypatch):
    result = invoke("run", "uniform:writes=2000,seed=1", "--ftl", "fast", "--capacity", "1MiB",
                    "-p", "extra_blocks=0")
    assert result.exit_code == 2 and "e.g. -p extra_blocks=9" in " ".join(result.output.split())
    assert invoke("run", "uniform:writes=10", "--param", "novalue").exit_code == 2

    def broken(*args, **kwargs):  # the engine's integrity oracle never fails on a correct scheme: stand in
        raise ftlsim.RunFailedError("integrity check failed in scheme `fast`: logical page 3 ...")

    monkeypatch.setattr("ftlsim.cli.simulate", broken)
    result = invoke("run", "uniform:writes=10,seed=1", "--ftl", "fast")
    assert result.exit_code == 1 and "integrity check failed" in result.output


def test_every_option_has_help():
    for name, command in main.commands.items():
        for param in command.params:
            if isinstance(param, __import__("click").Option):
                assert param.help, f"ftlsim {name} {param.opts[0]} has no help text"


def test_shell_completion_of_names():
    from click.shell_completion import ShellComplete

    comp = ShellComplete(main, {}, "ftlsim", "_FTLSIM_COMPLETE")
    assert [c.value for c in comp.get_completions(["run", "--ftl"], "fa")] == ["fast"]
    assert "page,fast" in [c.value for c in comp.get_completions(["compare", "--ftl"], "page,fa")]
    assert [c.value for c in comp.get_completions(["run"], "unif")][0] == "uniform:"
    presets = [c.value for c in comp.get_completions(["run", "--preset"], "")]
    assert "lee2007" in presets
    assert [c.value for c in comp.get_completions(["reproduce"], "fast-fig1")] == ["fast-fig10"]


def test_info_with_a_negative_page_size_is_a_clean_error():
    result = invoke("info", "uniform:writes=10", "--page-bytes", "-1")
    assert result.exit_code == 2
    assert "--page-bytes" in result.output and "Traceback" not in result.output


@pytest.mark.parametrize("flag", ["--json", "--csv"])
def test_empty_output_path_is_an_error(flag):
    result = invoke("run", "uniform:writes=100,seed=1", flag, "")
    assert result.exit_code == 2
    assert f"{flag} path is empty" in result.output


def test_bad_output_paths_fail_before_the_run(tmp_path):
    missing = tmp_path / "no" / "r.json"
    result = invoke("run", "uniform:writes=100,seed=1", "--json", str(missing))
    assert result.exit_code == 2 and "does not exist" in result.output
    assert "flash.erases" not in result.output  # refused before the run
    if os.path.exists("/dev/full"):
        result = invoke("run", "uniform:writes=100,seed=1", "--json", "/dev/full")
        assert result.exit_code == 2 and "cannot be written" in result.output
        assert "flash.erases" not in result.output
    result = invoke("compare", "uniform:writes=100,seed=1", "--ftl", "page", "--plot", str(tmp_path / "p.xyz"))
    assert result.exit_code == 2 and "unknown image format `.xyz`" in result.output


def test_output_that_is_the_input_is_refused_and_the_input_untouched(tmp_path):
    trace = tmp_path / "same.csv"
    trace.write_text("W,0,4096\n")
    result = invoke("generate", str(trace), "-o", str(trace))
    assert result.exit_code == 2 and "is the input trace" in result.output
    assert trace.read_text() == "W,0,4096\n"
    result = invoke("run", str(trace), "--json", str(trace))
    assert result.exit_code == 2 and trace.read_text() == "W,0,4096\n"


def test_outputs_are_written_atomically(tmp_path):
    out = tmp_path / "r.json"
    out.write_text("old")
    assert invoke("run", "uniform:writes=100,seed=1", "--json", str(out)).exit_code == 0
    assert json.loads(out.read_text())["host.write_requests"] == 100
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]  # no temporary file left


def test_progress_callback_exceptions_propagate():
    def boom(*_):
        raise ZeroDivisionError("from the callback")

    with pytest.raises(ZeroDivisionError, match="from the callback"):
        ftlsim.simulate("uniform:writes=2000000,seed=1", ftl="page", capacity="64MiB", progress=boom)


def test_ctrl_c_exits_130_with_one_line():
    p = subprocess.Popen([sys.executable, "-m", "ftlsim", "run", "uniform:writes=200000000,seed=1"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(3)
    p.send_signal(signal.SIGINT)
    started = time.monotonic()
    out, err = p.communicate(timeout=60)
    assert p.returncode == 130, err
    assert time.monotonic() - started < 5
    assert err.strip().splitlines()[-1] == "interrupted"
    assert "Traceback" not in err and "FATAL" not in err


def test_ctrl_c_in_compare_cancels_the_grid_and_exits_130():
    """Ctrl-C as a terminal sends it: to the whole process group, worker processes included."""
    p = subprocess.Popen([sys.executable, "-m", "ftlsim", "compare", "uniform:writes=100000000,seed=1",
                          "--ftl", "page,fast,bast,nftl"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, start_new_session=True)
    time.sleep(4)
    os.killpg(p.pid, signal.SIGINT)
    started = time.monotonic()
    out, err = p.communicate(timeout=60)
    assert p.returncode == 130, err
    assert time.monotonic() - started < 10
    assert err.strip().splitlines() == ["interrupted"]


def test_a_run_option_given_twice_with_two_values_is_refused_and_the_same_value_twice_runs(tmp_path):
    r = invoke("run", "uniform:writes=100", "--ftl", "fast", "-p", "log_blocks=8", "-p", "log_blocks=16")
    assert r.exit_code == 2
    assert "`log_blocks` is given twice (log_blocks=8 and log_blocks=16)" in r.output
    assert "-p log_blocks=8,16" in r.output
    r = invoke("run", "uniform:writes=100", "--ftl", "fast", "-p", "log_blocks=8", "-p", "log_blocks=8",
               "--json", str(tmp_path / "r.json"))
    assert r.exit_code == 0, r.output
    assert json.loads(json.loads((tmp_path / "r.json").read_text())["config.params"])["log_blocks"] == 8


def test_a_known_workload_with_an_unknown_option_names_the_option_not_the_workload():
    p = ftlsim_cmd("run", "uniform:requests=10")
    assert p.returncode == 2
    assert "unknown parameter `requests`; uniform takes writes, seed, pages, read_share" in p.stderr
    assert "did you mean" not in p.stderr


def test_a_grid_that_fails_every_point_for_one_reason_says_it_once(tmp_path):
    trace = tmp_path / "far.csv"
    trace.write_text("W,0,4096\nW,8388608,4096\n")  # ends past 8 MiB: a 1 MiB device cannot hold it
    result = CliRunner().invoke(main, ["compare", str(trace), "--ftl", "page,fast,bast", "-p", "log_blocks=4,8",
                                       "--capacity", "1MiB"])
    assert result.exit_code == 2  # bad input, as `run` of any of them says (it exited 1, a run that failed)
    failures = [line for line in result.output.splitlines() if line.startswith("failed:")]
    assert len(failures) == 1, result.output
    # Without Python's class name (it said "... on far.csv: FtlsimError: far.csv:2: --capacity 1MiB ...").
    # The trace named once, with its line (it said "on far.csv: far.csv:2: ...").
    said = f"failed: page, fast (its 2 runs), bast (its 2 runs) on {trace}:2: --capacity 1MiB"
    assert said in " ".join(result.output.split())
    assert "5 of 5 runs failed" in result.output
    # In the command line's words, as `run` says it; a sweep from Python keeps Python's.
    assert "e.g. --capacity 9MiB, or --wrap (to fold" in " ".join(result.output.split())
    df = ftlsim.sweep(str(trace), ["page"], capacity="1MiB")
    assert "e.g. capacity='9MiB', or wrap=True (to fold" in df["error"].iloc[0]


def test_a_grid_whose_run_failed_exits_1_and_one_refused_for_its_input_exits_2():
    # As `run` does: mount-cost exited 1 on -p log_blocks=0, which `run` refuses with exit 2.
    workload = ["hotcold:writes=3000,seed=1", "--capacity", "4MiB"]
    result = CliRunner().invoke(main, ["mount-cost", *workload, "--ftl", "fast", "-p", "log_blocks=0"])
    assert result.exit_code == 2, result.output
    assert "failed: fast on hotcold:writes=3000,seed=1: invalid parameter: scheme `fast`: -p log_blocks=0" in \
        " ".join(result.output.split())
    worn = ["-p", "endurance=2", "-p", "bad_block_reserve=1", "--precondition", "full"]
    result = CliRunner().invoke(main, ["compare", *workload, "--ftl", "page,fast", *worn])
    assert result.exit_code == 1, result.output
    assert "the chip ran out of good blocks" in result.output and "RunFailedError" not in result.output


def test_failure_lines_name_each_run_where_a_scheme_failed_only_some():
    import pandas as pd

    from ftlsim.cli import failure_lines

    df = pd.DataFrame({"trace": ["t.csv"] * 4, "ftl": ["fast", "fast", "fast", "page"],
                       "log_blocks": [4, 8, 16, float("nan")], "status": ["failed", "done", "failed", "failed"],
                       "error": ["E: a", None, "E: a", "E: b"]})
    assert failure_lines(df, ["log_blocks"]) == ["fast log_blocks=4, fast log_blocks=16 on t.csv: E: a",
                                                 "page on t.csv: E: b"]
    df.loc[3, "error"] = "t.csv:7: no such page"
    assert failure_lines(df, ["log_blocks"])[1] == "page on t.csv:7: no such page"


def test_run_without_a_trace_says_that_data_on_standard_input_is_not_read(tmp_path):
    # `cat trace | ftlsim run` runs the built-in workload, as `ftlsim run` does; it says that the data piped in is
    # not read and how to read it. Nothing in, or an empty pipe (a harness's), brings no warning.
    warning = "standard input holds data (piped or redirected in), which is not read: give - as TRACE"
    piped = ftlsim_cmd("run", "--capacity", "1MiB", "--json", str(tmp_path / "a.json"), input="W,0,4096\n")
    assert piped.returncode == 0, piped.stderr
    assert warning in " ".join(piped.stderr.split())
    trace = tmp_path / "t.csv"
    trace.write_text("W,0,4096\n")
    with trace.open() as redirected:
        p = ftlsim_cmd("run", "--capacity", "1MiB", "--json", str(tmp_path / "b.json"), stdin=redirected)
    assert warning in " ".join(p.stderr.split())
    for quiet in (subprocess.DEVNULL, None):
        p = ftlsim_cmd("run", "--capacity", "1MiB", "--json", str(tmp_path / "c.json"),
                       **({"stdin": quiet} if quiet is not None else {"input": ""}))
        assert p.returncode == 0 and "standard input" not in p.stderr, p.stderr


def test_an_option_that_would_change_nothing_is_refused_in_each_front_end_s_spelling():
    # A trace file's option on a built-in workload, and a start of measurement past the trace's end.
    result = invoke("run", "uniform:writes=100", "--writes-only")
    assert result.exit_code == 2
    assert " ".join(result.stderr.split()).startswith(
        "error: invalid parameter: --writes-only applies to trace files, and uniform:writes=100 is a built-in "
        "workload, made rather than read"), result.stderr
    with pytest.raises(ftlsim.FtlsimError, match=r"^invalid parameter: device=3 applies to trace files") as e:
        ftlsim.simulate("uniform:writes=100", device=3)
    assert (e.value.key, e.value.value) == ("device", "3")
    result = invoke("run", "uniform:writes=100", "--capacity", "1MiB", "-p", "measure_from=500")
    assert result.exit_code == 2
    assert " ".join(result.stderr.split()) == (
        "error: invalid parameter: -p measure_from=500 is past the end of the trace (it has 100 requests): "
        "nothing would be measured; e.g. -p measure_from=50"), result.stderr


def test_an_option_that_would_do_nothing_is_refused_in_the_command_lines_spelling():
    workload = ["uniform:writes=300,seed=1", "--capacity", "1MiB"]
    result = invoke("run", *workload, "--nvram-policy", "lru")
    assert result.exit_code == 2
    assert ("--nvram-policy lru needs an NVRAM write cache to run in, and the run has none: leave it out, or "
            "--nvram 128KiB (to give it one of 128 KiB)") in " ".join(result.output.split()), result.output
    result = invoke("run", *workload, "--torn-pages")
    assert result.exit_code == 2
    assert ("--torn-pages needs power cuts: a page is torn by a power cut during its program; e.g. without "
            "--torn-pages, or --power-cuts 20") in " ".join(result.output.split()), result.output
    with pytest.raises(ftlsim.FtlsimError, match=r"nvram_policy='lru' needs an NVRAM .* or nvram='128KiB'"):
        ftlsim.simulate("uniform:writes=300,seed=1", capacity="1MiB", nvram_policy="lru")


def test_a_data_output_named_for_another_format_is_refused_before_the_run(tmp_path):
    for args, said in ((["run", "--csv", str(tmp_path / "x.json")], "--csv writes CSV, but the name says JSON"),
                       (["run", "--json", str(tmp_path / "x.csv")], "--json writes JSON, but the name says CSV"),
                       (["compare", "--csv", str(tmp_path / "x.png")], "--csv writes CSV, but the name says PNG")):
        result = invoke(args[0], "uniform:writes=300,seed=1", "--capacity", "1MiB", *args[1:])
        assert result.exit_code == 2 and said in result.output, result.output
    assert list(tmp_path.iterdir()) == []
    # A name of no known format is taken as given.
    result = invoke("run", "uniform:writes=300,seed=1", "--capacity", "1MiB", "--csv", str(tmp_path / "x.txt"))
    assert result.exit_code == 0 and (tmp_path / "x.txt").read_text().startswith("config.")


def test_an_option_click_refuses_is_one_error_line_with_exit_code_2():
    # It was click's four lines: the usage, "Try ... --help", a blank line and a capitalised "Error:".
    for args, said in ((["run", "--power-cuts", "-1"], "error: Invalid value for '--power-cuts': -1 is not in the "
                        "range x>=0 (see ftlsim run --help)"),
                       (["run", "--bogus"], "error: No such option '--bogus' (see ftlsim run --help)"),
                       (["nosuch"], "error: No such command 'nosuch' (see ftlsim --help)"),
                       # click gives this one no context: it pointed to ftlsim --help
                       (["info", "x.csv", "--json"], "error: Option '--json' requires an argument (see ftlsim info "
                        "--help)")):
        result = ftlsim_cmd(*args)
        assert result.returncode == 2 and result.stdout == "", result.stderr
        assert result.stderr.strip() == said, result.stderr


def test_a_reader_that_leaves_before_the_table_does_not_cost_the_files(tmp_path):
    # `ftlsim run ... --json r.json | head -1` exited 1 (rich's answer to a broken pipe) and wrote no r.json.
    for command, out in ((["run"], tmp_path / "r.json"), (["compare", "--ftl", "page,fast"], tmp_path / "c.csv")):
        option = "--json" if out.suffix == ".json" else "--csv"
        p = subprocess.Popen([sys.executable, "-m", "ftlsim", *command, "uniform:writes=300,seed=1", "--capacity",
                              "1MiB", option, str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        p.stdout.close()  # the reader is gone before anything is printed
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        assert out.exists() and "written to" in err, err


def test_a_setting_given_by_its_option_and_by_p_is_refused():
    # --nvram 32KiB -p nvram=64KiB ran 64 KiB without a word.
    for command in ("run", "compare"):
        result = invoke(command, "uniform:writes=30", "--capacity", "1MiB", "--nvram", "32KiB", "-p", "nvram=64KiB")
        assert result.exit_code == 2, result.output
        assert "`nvram` is given twice, as --nvram and as -p nvram=...: give it once" in result.stderr, result.stderr


def test_a_grid_point_whose_parameters_do_not_parse_refuses_the_grid_before_it_runs(tmp_path):
    # It ran the others, printed a table, stored the point as failed and listed log_blocks=a in `ftlsim store`.
    store = tmp_path / "s.parquet"
    result = invoke("sweep", "uniform:writes=300", "--capacity", "1MiB", "--ftl", "fast", "-p", "log_blocks=a,4",
                    "--store", str(store))
    assert result.exit_code == 2 and result.stdout == "", result.output
    assert "-p log_blocks=a must be a whole number" in result.stderr, result.stderr
    assert not store.exists()


def test_an_ftl_list_of_no_scheme_is_refused():
    # compare --ftl '' ended in a TypeError traceback; mount-cost --ftl '' ran all 13 schemes.
    for command in ("compare", "mount-cost", "sweep"):
        for given in ("", ","):
            result = invoke(command, "uniform:writes=30", "--capacity", "1MiB", "--ftl", given)
            assert result.exit_code == 2 and result.stdout == "", result.output
            assert "names no scheme: give one or more, e.g. --ftl page,dftl" in result.stderr, result.stderr
