"""Outputs (--json, --csv, --plot, -o): a regular file is replaced atomically and keeps its mode, a new one
gets the umask's; a symlink is written through to its target; a FIFO or ``-`` (standard output) is written as
a stream, never replaced."""

import csv
import io
import json
import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

from click.testing import CliRunner

from ftlsim.cli import main

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "crates" / "ftlsim-core" / "tests" / "fixtures"
WORKLOAD = "uniform:writes=200,seed=1"


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_a_new_file_gets_the_umask_mode_and_a_replaced_file_keeps_its_own(tmp_path):
    old_umask = os.umask(0o027)
    try:
        result = invoke("run", WORKLOAD, "--json", tmp_path / "new.json", "--csv", tmp_path / "new.csv")
    finally:
        os.umask(old_umask)
    assert result.exit_code == 0, result.output
    assert mode(tmp_path / "new.json") == mode(tmp_path / "new.csv") == 0o640
    kept = tmp_path / "kept.json"
    kept.write_text("old")
    os.chmod(kept, 0o604)
    os.link(kept, tmp_path / "hard-link")
    result = invoke("run", WORKLOAD, "--json", kept)
    assert result.exit_code == 0, result.output
    assert json.loads(kept.read_text())["host.write_requests"] == 200
    assert mode(kept) == 0o604
    # Replaced by a rename, not rewritten in place: another name of the old file still holds the old text.
    assert (tmp_path / "hard-link").read_text() == "old"
    assert [p.name for p in tmp_path.iterdir() if ".ftlsim-" in p.name] == [], "no temporary file left"


def test_a_symlink_is_written_through_to_its_target(tmp_path):
    (tmp_path / "results").mkdir()
    target = tmp_path / "results" / "report.json"
    target.write_text("old")
    link = tmp_path / "report.json"
    link.symlink_to(target)
    dangling = tmp_path / "info.json"
    dangling.symlink_to(tmp_path / "results" / "info.json")
    plot_link = tmp_path / "refs.png"
    plot_link.symlink_to(tmp_path / "results" / "refs.png")
    convert_link = tmp_path / "trace.csv"
    convert_link.symlink_to(tmp_path / "results" / "trace.csv")
    for args in (["run", WORKLOAD, "--json", link], ["info", FIXTURES / "tiny.msr", "--json", dangling],
                 ["plot-refs", WORKLOAD, "-o", plot_link], ["convert", FIXTURES / "tiny.msr", "-o", convert_link]):
        result = invoke(*args)
        assert result.exit_code == 0, (args, result.output)
    for path in (link, dangling, plot_link, convert_link):
        assert path.is_symlink(), f"{path.name} is still a link"
    assert json.loads(target.read_text())["host.write_requests"] == 200
    assert json.loads((tmp_path / "results" / "info.json").read_text())["format"] == "msr"
    assert (tmp_path / "results" / "refs.png").read_bytes().startswith(b"\x89PNG")
    assert (tmp_path / "results" / "trace.csv").read_text().startswith("op,offset,length")


def test_a_fifo_is_written_through_and_stays_a_fifo(tmp_path):
    fifo = tmp_path / "report.csv"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_text()))
    reader.start()
    result = invoke("run", WORKLOAD, "--csv", fifo)
    reader.join(timeout=60)
    assert result.exit_code == 0, result.output
    (row,) = csv.DictReader(io.StringIO(received[0]))
    assert row["host.write_requests"] == "200"
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_dash_is_standard_output_and_makes_no_file(tmp_path, monkeypatch):
    runner = CliRunner()
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(main, ["run", WORKLOAD, "--json", "-"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert not os.path.exists("-")
    table_end = result.output.index("└")
    report, _ = json.JSONDecoder().raw_decode(result.output[result.output.index("{", table_end):])
    assert report["host.write_requests"] == 200
    result = runner.invoke(main, ["info", str(FIXTURES / "tiny.msr"), "--json", "-"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert json.JSONDecoder().raw_decode(result.output[result.output.index("{"):])[0]["format"] == "msr"
    assert not os.path.exists("-")
    # A figure on standard output is PNG bytes, and nothing else is printed there.
    done = subprocess.run([sys.executable, "-m", "ftlsim", "plot-refs", WORKLOAD, "-o", "-"], capture_output=True,
                          timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(b"\x89PNG") and not (tmp_path / "-").exists()


def test_reproduce_draws_its_figure_on_standard_output(tmp_path):
    # `reproduce NAME --plot -` saved `-.png` in the working directory and said "plot written to standard output".
    done = subprocess.run([sys.executable, "-m", "ftlsim", "reproduce", "ram-tables", "--plot", "-"],
                          capture_output=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(b"\x89PNG") and list(tmp_path.iterdir()) == []


def test_two_outputs_on_standard_output_are_refused(tmp_path, monkeypatch):
    # They ran together there (JSON then CSV, PNG then JSON), exit 0.
    monkeypatch.chdir(tmp_path)
    cases = [(["run", WORKLOAD, "--json", "-", "--csv", "/dev/stdout"], "--json and --csv both"),
             (["info", WORKLOAD, "--json", "-", "--plot", "-"], "--json and --plot both"),
             (["compare", WORKLOAD, "--ftl", "page,fast", "--csv", "-", "--plot", "-"], "--csv and --plot both"),
             (["reproduce", "ram-tables", "--csv", "-", "--plot", "-"], "--csv and --plot both")]
    for args, said in cases:
        result = invoke(*args)
        assert result.exit_code == 2, (args, result.output)
        assert f"{said} write to standard output" in result.stderr, result.stderr
        assert result.stdout == ""
    assert list(tmp_path.iterdir()) == []


def test_an_output_that_fails_leaves_the_old_file_whole(tmp_path):
    kept = tmp_path / "report.json"
    kept.write_text("old")
    result = invoke("run", WORKLOAD, "--json", kept, "-p", "no_such_param=1")
    assert result.exit_code == 2
    assert kept.read_text() == "old"
