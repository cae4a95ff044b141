"""Config files: a TOML run, command-line flags over the file, and a saved report that
repeats its run exactly."""

import hashlib
import json

import pandas as pd
from click.testing import CliRunner

import ftlsim
from ftlsim.cli import main
from ftlsim.config import run_kwargs

RUN_TOML = """
trace = "uniform:writes=3000,seed=1"
ftl = "fast"
capacity = "2MiB"
precondition = "full"
pages_per_block = 16
[params]
log_blocks = 4
"""


def invoke(*args):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def same_run(a: dict, b: dict) -> list:
    """Keys whose values differ, wall-clock figures (sim.*) aside."""
    return [k for k in set(a) | set(b) if not k.startswith("sim.") and a.get(k) != b.get(k)]


def test_toml_run_matches_the_same_run_from_python(tmp_path):
    (tmp_path / "run.toml").write_text(RUN_TOML)
    out = tmp_path / "r.json"
    result = invoke("run", "-c", str(tmp_path / "run.toml"), "--json", str(out))
    assert result.exit_code == 0, result.output
    saved = json.loads(out.read_text())
    direct = ftlsim.simulate("uniform:writes=3000,seed=1", ftl="fast", capacity="2MiB", precondition="full",
                             pages_per_block=16, log_blocks=4)
    assert same_run(saved, direct.to_dict()) == []
    assert saved["config.pages_per_block"] == 16 and saved["config.logical_blocks"] == 2 * 2**20 // (16 * 512)
    assert json.loads(saved["config.params"]) == {"lazy_merge": False, "log_blocks": 4}


def test_command_line_flags_override_the_file(tmp_path):
    (tmp_path / "run.toml").write_text(RUN_TOML)
    out = tmp_path / "r.json"
    result = invoke("run", "-c", str(tmp_path / "run.toml"), "--ftl", "bast", "--capacity", "1MiB",
                    "-p", "log_blocks=8", "--json", str(out))
    assert result.exit_code == 0, result.output
    saved = json.loads(out.read_text())
    assert saved["config.scheme"] == "bast"
    assert saved["config.capacity_bytes"] == 2**20
    assert json.loads(saved["config.params"])["log_blocks"] == 8
    assert saved["config.precondition"] == "full"  # from the file, not overridden


def test_report_records_the_complete_configuration(tmp_path):
    trace = tmp_path / "t.csv"
    trace.write_text("W,0,4096\nW,8192,4096\nR,0,4096\n")
    r = ftlsim.simulate(str(trace), ftl="fast")
    resolved = json.loads(r["config.resolved"])
    cfg = resolved["config"]
    assert resolved["trace"] == str(trace)
    assert cfg["params"] == {"lazy_merge": False, "log_blocks": 8}  # the scheme's defaults, written out
    assert cfg["trace"]["format"] == "csv" == r["config.trace_format"]  # sniffed
    assert cfg["capacity"] is None and cfg["preset"] == "lee2007"  # the trace's reach, which a repeat sizes again
    assert cfg["trace"]["writes_only"] is False and cfg["wrap"] is False and cfg["rmw"] is True
    assert r["config.trace_bytes"] == len("W,0,4096\nW,8192,4096\nR,0,4096\n")
    assert r["config.trace_sha256"] == hashlib.sha256(trace.read_bytes()).hexdigest()


def test_saved_report_round_trips_into_an_identical_run(tmp_path):
    # A trace file of 4,000 writes and 1,000 reads over 2 MiB: --writes-only drops the reads.
    trace = tmp_path / "mixed.csv"
    rows = [f"{'R' if i % 5 == 4 else 'W'},{(i * 7919) % 4096 * 512},512" for i in range(5000)]
    trace.write_text("\n".join(rows) + "\n")
    first = tmp_path / "first.json"
    result = invoke("run", str(trace), "--ftl", "nftl", "--capacity", "2MiB", "--writes-only",
                    "-p", "page_cache=8", "-p", "erase_us=1500", "--json", str(first))
    assert result.exit_code == 0, result.output
    second = tmp_path / "second.json"
    result = invoke("run", "-c", str(first), "--json", str(second))
    assert result.exit_code == 0, result.output
    a, b = json.loads(first.read_text()), json.loads(second.read_text())
    assert same_run(a, b) == []
    assert a["flash.erases"] > 0 and a["config.erase_us"] == 1500
    assert json.loads(a["config.resolved"])["config"]["trace"]["writes_only"] is True
    assert (a["host.read_requests"], a["host.write_requests"]) == (0, 4000)


def test_a_report_of_an_array_sized_by_its_blocks_per_plane_repeats(tmp_path):
    # Its config.resolved recorded the capacity the blocks made, and a capacity beside blocks_per_plane is refused:
    # `run -c` of the README's mqsim-default command exited 2.
    first, second = tmp_path / "first.json", tmp_path / "second.json"
    result = invoke("run", "uniform:writes=3000,seed=1", "--preset", "mqsim-default", "-p", "blocks_per_plane=2",
                    "--json", str(first))
    assert result.exit_code == 0, result.output
    result = invoke("run", "-c", str(first), "--json", str(second))
    assert result.exit_code == 0, result.output
    a, b = json.loads(first.read_text()), json.loads(second.read_text())
    assert same_run(a, b) == [] and a["config.capacity_bytes"] == b["config.capacity_bytes"] == 512 << 20
    assert ftlsim.simulate(**run_kwargs(a))["flash.page_writes"] == a["flash.page_writes"]


def test_a_report_whose_capacity_the_trace_sized_repeats_on_another_device_of_the_trace(tmp_path):
    # `run -c r.json --device 1` was refused: "--capacity 65456KiB ... ends before byte 241,319,936", a capacity
    # the first run took from device 0's reach and nobody gave.
    trace, first, again, other = (tmp_path / name for name in ("two.csv", "0.json", "0b.json", "1.json"))
    pages = [16, 256]  # disk 0 writes 4 KiB pages below 64 KiB, disk 1 below 1 MiB (in 16 KiB blocks, its reach)
    trace.write_text("".join(f"{128166410318060999 + i * 1000},host,{i % 2},Write,"
                             f"{(pages[i % 2] - 1 - i * 7919 % pages[i % 2]) * 4096},4096,100\n"
                             for i in range(200)))
    assert invoke("run", str(trace), "--device", "0", "--json", str(first)).exit_code == 0
    result = invoke("run", "-c", str(first), "--device", "1", "--json", str(other))
    assert result.exit_code == 0, result.output
    assert invoke("run", "-c", str(first), "--json", str(again)).exit_code == 0
    a, b, c = (json.loads(path.read_text()) for path in (first, again, other))
    assert same_run(a, b) == [] and a["config.capacity_bytes"] == 16 * 4096
    assert c["config.capacity_bytes"] == 256 * 4096 and c["host.write_requests"] == 100


def test_a_report_run_again_with_another_scheme_leaves_out_the_old_schemes_parameters(tmp_path):
    # `run -c page.json --ftl fast` failed: "scheme fast has no parameter or option gc_frontier ...", parameters
    # the report lists as page ran them, and page's over_provisioning would have sized fast's spare.
    first, second, plain = tmp_path / "page.json", tmp_path / "fast.json", tmp_path / "plain.json"
    workload = ["hotcold:writes=2000,seed=1", "--capacity", "2MiB"]
    assert invoke("run", *workload, "--json", str(first)).exit_code == 0
    result = invoke("run", "-c", str(first), "--ftl", "fast", "--json", str(second))
    assert result.exit_code == 0, result.output
    assert "left out page's parameters" in result.stderr and "gc_frontier" in result.stderr, result.stderr
    assert invoke("run", *workload, "--ftl", "fast", "--json", str(plain)).exit_code == 0
    assert same_run(json.loads(second.read_text()), json.loads(plain.read_text())) == []


def test_a_report_of_a_trace_read_from_standard_input_repeats_with_the_trace_given_again(tmp_path):
    # `run -c ws.json -` said "the report's trace - does not exist here; copy it to that path".
    text = "op,offset,length\nW,0,4096\nW,8192,4096\n"
    first, second = tmp_path / "first.json", tmp_path / "second.json"
    result = CliRunner().invoke(main, ["run", "-", "--capacity", "1MiB", "--json", str(first)], input=text)
    assert result.exit_code == 0, result.output
    result = CliRunner().invoke(main, ["run", "-c", str(first), "-", "--json", str(second)], input=text)
    assert result.exit_code == 0, result.output
    assert same_run(json.loads(first.read_text()), json.loads(second.read_text())) == []
    result = invoke("run", "-c", str(first))
    assert result.exit_code == 2 and "was read from standard input (-)" in result.stderr, result.output


def test_a_changed_trace_is_refused_when_repeating_a_report(tmp_path):
    trace = tmp_path / "t.csv"
    trace.write_text("W,0,4096\n")
    r = ftlsim.simulate(str(trace), ftl="page")
    trace.write_text("W,0,8192\n")
    try:
        run_kwargs(r.to_dict())
    except ftlsim.FtlsimError as e:
        assert "changed since the report was made" in str(e)
    else:
        raise AssertionError("a changed trace was accepted")


def test_bad_config_files_are_clean_errors(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("trace = \n")
    result = invoke("run", "-c", str(bad))
    assert result.exit_code == 2 and "bad.toml" in result.output
    result = invoke("run", "-c", str(tmp_path / "missing.toml"))
    assert result.exit_code == 2 and "missing.toml" in result.output
    ini = tmp_path / "run.ini"
    ini.write_text("x")
    result = invoke("run", "-c", str(ini))
    assert result.exit_code == 2 and "unknown extension" in result.output
    assert result.output.count("config file") == 1, result.output  # it said "config file x: config file x: ..."


def test_readme_experiments_section_runs_as_written(tmp_path, monkeypatch):
    """The README's config files and commands (all but the cluster's) run as written, and the second sweep
    computes nothing."""
    import re
    import shlex
    from pathlib import Path

    import pandas as pd

    text = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    section = text.split("## Experiments: config files, cached sweeps, Dask", 1)[1].split("\n## ", 1)[0]
    monkeypatch.chdir(tmp_path)
    for block in re.findall(r"```toml\n(.*?)```", section, re.S):
        name = block.splitlines()[0].lstrip("# ").strip()
        # Smaller workloads than the README's, the same files otherwise.
        (tmp_path / name).write_text(block.replace("writes=20000", "writes=3000").replace("8MiB", "2MiB"))
    commands = re.findall(r"```sh\n(.*?)```", section, re.S)[0]
    commands = [line.split("#")[0].strip() for line in commands.splitlines() if line.strip()]
    assert commands[0] == "ftlsim run -c run.toml"
    counts = []
    for command in commands:
        args = shlex.split(command)
        if args[1] == "sweep":
            args += ["--backend", "threads"]
        for _ in range(2 if args[1] == "sweep" else 1):  # a sweep run twice: the second finds every point done
            result = invoke(*args[1:])
            assert result.exit_code == 0, f"{command}\n{result.output}"
            if args[1] == "sweep":
                stored = pd.read_parquet(tmp_path / "results.parquet")
                counts.append((len(stored), stored["sim.wall_s"].sum()))
    assert [n for n, _ in counts] == [14, 14, 16, 16]  # 2 traces x (1 + 3 + 3); nftl adds 2 points
    assert counts[0][1] == counts[1][1] and counts[2][1] == counts[3][1]  # reruns kept the stored rows
    assert (tmp_path / "sweep.png").stat().st_size > 0


def test_wrong_value_types_in_config_files_are_clean_errors(tmp_path):
    cases = [
        ("run", "r.toml", 'trace = "uniform:writes=100"\njson = 5\n', "`json` must be a file path (text), found 5"),
        ("run", "r.toml", 'trace = "uniform:writes=100"\nparams = 3\n', "`params` must be a table, found 3"),
        ("sweep", "s.toml", 'traces = ["uniform:writes=100"]\nschemes = ["page"]\njobs = -3\n',
         "`jobs` must be a whole number of at least 1, found -3"),
        ("sweep", "s.toml", 'traces = ["uniform:writes=100"]\nschemes = ["page"]\njobs = true\n',
         "`jobs` must be a whole number of at least 1, found True"),
        ("sweep", "s.toml", 'traces = ["uniform:writes=100"]\nschemes = ["page"]\nbackend = "gpu"\n',
         "`backend` must be processes, threads or dask"),
        ("sweep", "s.toml", 'traces = 5\nschemes = ["page"]\n', "`traces` must be text or a list of texts"),
        ("sweep", "s.toml", 'traces = ["uniform:writes=100"]\n[schemes]\nfast = { log_blocks = [[4]] }\n',
         "`schemes.fast.log_blocks` must be a value or a list of values"),
        ("sweep", "s.json", '{"traces": ["uniform:writes=100"], "schemes": ["page"], "store": 7}',
         "`store` must be a file path (text), found 7"),
    ]
    for command, name, text, says in cases:
        (tmp_path / name).write_text(text)
        result = CliRunner().invoke(main, [command, "-c", str(tmp_path / name)])
        assert result.exit_code == 2, (text, result.output)
        assert f"config file {tmp_path / name}: {says}" in result.output, result.output
        assert result.exception is None or isinstance(result.exception, SystemExit)


def test_a_yaml_alias_bomb_is_refused_at_once(tmp_path):
    import time

    lines = ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for level in range(1, 9):
        prev, cur = chr(ord("a") + level - 1), chr(ord("a") + level)
        lines.append(f"{cur}: &{cur} [" + ", ".join([f"*{prev}"] * 9) + "]")
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text("\n".join(lines + ['trace: "uniform:writes=100"']) + "\n")
    started = time.monotonic()
    result = CliRunner().invoke(main, ["run", "-c", str(bomb)])
    assert time.monotonic() - started < 5
    assert result.exit_code == 2
    assert "line 2: YAML aliases (*a) are not supported in config files" in result.output
    (tmp_path / "bad.yaml").write_text("trace: [unclosed\n")
    result = CliRunner().invoke(main, ["run", "-c", str(tmp_path / "bad.yaml")])
    assert result.exit_code == 2 and "bad.yaml: line 2, column 1: expected ',' or ']'" in result.output


def test_sizes_binary_and_decimal_units_and_device_fields_with_units():
    def capacity(text):
        return ftlsim.simulate("uniform:writes=10", ftl="page", capacity=text)["config.capacity_bytes"]

    block = 512 * 32  # lee2007: the capacity is rounded up to whole blocks
    assert capacity("64MiB") == 64 << 20
    assert capacity("64MB") == -(-64_000_000 // block) * block  # decimal, not 64 MiB
    assert capacity("1GB") == -(-10**9 // block) * block
    for ambiguous in ("64M", "1g"):
        try:
            capacity(ambiguous)
        except ftlsim.FtlsimError as e:
            assert "could mean" in str(e) and "iB (powers of 1024)" in str(e)
        else:
            raise AssertionError(f"{ambiguous} was accepted")
    r = ftlsim.simulate("uniform:writes=100", ftl="page", capacity="1MiB", page_bytes="2KiB", spare_bytes="64B")
    assert (r["config.page_bytes"], r["config.capacity_bytes"]) == (2048, 1 << 20)
    result = CliRunner().invoke(main, ["run", "uniform:writes=100", "--capacity", "1MiB",
                                       "-p", "page_bytes=2 lightyears"])
    assert result.exit_code == 2
    assert "-p 'page_bytes=2 lightyears' does not parse" in result.output and "column" not in result.output


def test_reproduce_csv_into_a_missing_directory_fails_before_the_experiment(tmp_path, monkeypatch):
    from ftlsim import reproduce

    ran = []
    monkeypatch.setattr(reproduce, "run", lambda *a, **k: ran.append(a))
    result = CliRunner().invoke(main, ["reproduce", "fast-fig10", "--quick", "--csv", str(tmp_path / "no" / "x.csv")])
    assert result.exit_code == 2 and "does not exist" in result.output
    assert ran == []


def test_a_config_files_params_are_checked_against_the_scheme_the_command_line_names(tmp_path):
    # `run -c p.toml --ftl fast` refused the file's log_blocks, naming page (the file names no scheme), though
    # the command line overrides the file and fast takes it.
    config = tmp_path / "p.toml"
    config.write_text('trace = "hotcold:writes=3000,seed=1"\ncapacity = "2MiB"\n[params]\nlog_blocks = 4\n')
    result = invoke("run", "-c", str(config), "--ftl", "fast")
    assert result.exit_code == 0 and "scheme: fast lazy_merge=false log_blocks=4" in result.output, result.output
    result = invoke("run", "-c", str(config))
    assert result.exit_code == 2 and "unknown key `params.log_blocks`" in result.output


def test_a_config_files_relative_trace_is_found_beside_it(tmp_path, monkeypatch):
    # `run -c sub/run.toml` with trace = "t.csv" beside it read "cannot read trace t.csv", saying nowhere that
    # it looked in the current directory only.
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "t.csv").write_text("".join(f"W,{i * 4096},4096\n" for i in range(200)))
    (sub / "run.toml").write_text('trace = "t.csv"\ncapacity = "1MiB"\n')
    (sub / "sweep.toml").write_text('traces = ["t.csv", "uniform:writes=100"]\nschemes = ["page"]\n'
                                    'capacity = "1MiB"\n')
    (sub / "gone.toml").write_text('trace = "gone.csv"\n')
    monkeypatch.chdir(tmp_path)
    result = invoke("run", "-c", "sub/run.toml")
    assert result.exit_code == 0 and "trace: sub/t.csv" in result.output, result.output
    result = invoke("sweep", "-c", "sub/sweep.toml", "--csv", "rows.csv")
    assert result.exit_code == 0, result.output
    assert list(pd.read_csv(tmp_path / "rows.csv")["host.write_pages"]) == [1600, 100]
    result = CliRunner().invoke(main, ["run", "-c", "sub/gone.toml"])
    assert result.exit_code == 2
    assert (f"config file sub/gone.toml: trace gone.csv is neither in the current directory ({tmp_path}) nor "
            f"beside the config file (sub/gone.csv)") in " ".join(result.output.split())
    # A trace of that name in the current directory is the one read, as before.
    (tmp_path / "t.csv").write_text("W,0,4096\n")
    result = invoke("run", "-c", "sub/run.toml")
    assert result.exit_code == 0 and "trace: t.csv" in result.output, result.output


def test_a_sweep_file_given_to_run_is_named_as_a_sweeps(tmp_path):
    # Each of its keys was "unknown" (traces: did you mean trace?; store: did you mean trace?).
    (tmp_path / "sweep.toml").write_text('traces = ["uniform:writes=100"]\nstore = "s.csv"\n[schemes]\npage = {}\n')
    result = CliRunner().invoke(main, ["run", "-c", str(tmp_path / "sweep.toml")])
    assert result.exit_code == 2
    assert "is a sweep's (it has `traces`, `schemes`): run it with ftlsim sweep -c" in " ".join(result.output.split())


def test_the_example_run_file_runs_with_another_scheme_from_the_command_line(tmp_path):
    # `ftlsim config --example run` names page and lists its parameters: `run -c it --ftl fast` refused four of
    # them as unknown keys, though the command line overrides the file.
    example = invoke("config", "--example", "run").output
    config = tmp_path / "run.toml"
    config.write_text(example.replace('trace = "uniform:writes=150000,seed=1"', 'trace = "uniform:writes=3000,seed=1"'))
    result = invoke("run", "-c", str(config), "--ftl", "fast", "--capacity", "2MiB")
    assert result.exit_code == 0, result.output
    assert "scheme: fast" in result.output
    assert "--ftl fast: left out page's parameters from" in " ".join(result.stderr.split())


def test_a_value_the_engine_refuses_is_spelled_as_the_config_file_gave_it(tmp_path):
    # `wrap = "false"` read "without --wrap must be true or false", `log_blocks = "4"` "-p log_blocks=4 must be a
    # whole number": neither named the file, and the second contradicted itself.
    for text, says in (('wrap = "false"\n', 'wrap = "false" (config file {}) must be true or false'),
                       ('ftl = "fast"\n[params]\nlog_blocks = "4"\n',
                        'log_blocks = "4" (config file {}) must be a whole number; e.g. log_blocks = 8'),
                       # The suggestion, the number 8, read as the text "8" given: `e.g. log_blocks = "8" (config
                       # file c.toml)`, the bad value again.
                       ('ftl = "fast"\nlog_blocks = "8"\n',
                        'log_blocks = "8" (config file {}) must be a whole number; e.g. log_blocks = 8'),
                       ('power_cuts = "ten"\n', 'power_cuts = "ten" (config file {}) must be a whole number')):
        config = tmp_path / "c.toml"
        config.write_text('trace = "uniform:writes=100"\n' + text)
        result = CliRunner().invoke(main, ["run", "-c", str(config)])
        assert result.exit_code == 2
        assert says.format(config) in " ".join(result.output.split()), result.output
    # A suggestion of text is TOML's text (it read `capacity = 2MiB`, which no file takes).
    (tmp_path / "far.csv").write_text("W,1048576,4096\n")
    config.write_text(f'trace = "{tmp_path / "far.csv"}"\ncapacity = "64KiB"\n')
    result = CliRunner().invoke(main, ["run", "-c", str(config)])
    assert result.exit_code == 2 and 'e.g. capacity = "2MiB", or --wrap' in " ".join(result.output.split())
    # A value the command line gave is the command line's, as before.
    result = CliRunner().invoke(main, ["run", "-c", str(config), "-p", "power_cuts=x"])
    assert result.exit_code == 2 and "--power-cuts x must be a whole number" in " ".join(result.output.split())
