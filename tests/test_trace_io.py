"""Reading traces: pipes, FIFOs and ``-`` read once; a given --format used and recorded without sniffing;
compressed and empty traces; totals past 2^64; a request of terabytes; an empty TRACE; saved trace paths that
work from anywhere; ``info`` in human units and its figures (and plot-refs') readable."""

import json
import lzma
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

import ftlsim
from ftlsim.cli import main
from ftlsim.plot import refs_plot
from ftlsim.trace import info, plot_info, write_refs

ROOT = Path(__file__).resolve().parent.parent
TRACES = ROOT.parent / "shared" / "traces"
RSRCH = TRACES / "msr_rsrch_1.csv"  # 13,780 requests, 13,738 writes (shared/traces/README.md)


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def ftlsim_cmd(*args, stdin=None, **kw):
    """The real command in a child process (pipes and signals need one), Ctrl-C handled as in a terminal."""
    return subprocess.Popen([sys.executable, "-m", "ftlsim", *map(str, args)], stdin=stdin, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
                            **kw)


def ftlsim_run(*args):
    """`ftlsim args...`: (exit code, stdout, stderr)."""
    proc = ftlsim_cmd(*args)
    out, err = proc.communicate(timeout=120)
    return proc.returncode, out.decode(), err.decode()


def piped(*args, source: Path = RSRCH, cwd=None):
    """`cat source | ftlsim args...`: (exit code, stdout, stderr)."""
    with open(source, "rb") as f:
        cat = subprocess.Popen(["cat"], stdin=f, stdout=subprocess.PIPE)
        proc = ftlsim_cmd(*args, stdin=cat.stdout, cwd=cwd)
        cat.stdout.close()
        out, err = proc.communicate(timeout=120)
        cat.wait()
    return proc.returncode, out.decode(), err.decode()


@pytest.mark.parametrize("name", ["/dev/stdin", "-"])
def test_info_of_a_pipe_reads_every_request(tmp_path, name):
    out = tmp_path / "info.json"
    code, _, err = piped("info", name, "--json", out)
    assert code == 0, err
    assert json.loads(out.read_text()) == info(RSRCH)


@pytest.mark.parametrize("args", [["/dev/stdin", "--format", "msr"], ["/dev/stdin"], ["-"]])
def test_run_of_a_pipe_runs_every_write_as_the_file_does(tmp_path, args):
    want = ftlsim.simulate(str(RSRCH))
    out = tmp_path / "r.json"
    code, _, err = piped("run", *args, "--json", out)
    assert code == 0, err
    got = json.loads(out.read_text())
    assert got["host.write_requests"] == want["host.write_requests"] == 13_738
    assert got["flash.page_writes"] == want["flash.page_writes"]
    assert got["config.trace"] == args[0] and got["config.trace_format"] == "msr"
    assert got["config.trace_sha256"] == want["config.trace_sha256"]


def test_an_error_in_a_piped_trace_names_the_input_not_the_spool_file(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("W,0,4096\nW,zero,4096\n")
    code, _, err = piped("info", "-", "--format", "csv", source=bad)
    assert code == 2
    assert "<stdin>:2: cannot parse `W,zero,4096`" in err and "ftlsim-trace-" not in err


def test_a_fifo_is_read_once_and_ctrl_c_stops_a_wait_for_its_writer(tmp_path):
    fifo = tmp_path / "trace.fifo"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_bytes(RSRCH.read_bytes()))
    writer.start()
    out = tmp_path / "info.json"
    proc = ftlsim_cmd("info", fifo, "--json", out)
    assert proc.wait(timeout=120) == 0, proc.stderr.read()
    writer.join()
    assert json.loads(out.read_text())["requests"] == 13_780

    # No writer: the command waits; Ctrl-C stops it at once with the usual line and exit code.
    proc = ftlsim_cmd("info", fifo)
    time.sleep(2.0)
    assert proc.poll() is None, "it waits for a writer"
    started = time.monotonic()
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=5) == 130
    assert time.monotonic() - started < 1.5
    assert proc.stderr.read().decode().strip().endswith("interrupted")


def test_a_given_format_is_used_without_sniffing_and_recorded(tmp_path):
    # A line no format takes, third: the one format that takes every other line says it is that line (it said
    # "cannot tell the format ... pass --format NAME", which fixes nothing); --skip-bad-lines reads the rest, and
    # so does the named format with it.
    trace = tmp_path / "noisy.msr"
    lines = RSRCH.read_text().splitlines(keepends=True)
    trace.write_text("".join(lines[:2]) + "this is not a request\n" + "".join(lines[2:]))
    for command in ("info", "run"):
        result = invoke(command, trace)
        assert result.exit_code == 2, command
        assert result.output.startswith(f"error: {trace}:3: cannot parse `this is not a request`: expected an MSR"), \
            result.output
        assert result.output.strip().endswith("(pass --skip-bad-lines to skip such lines)"), result.output
    result = invoke("info", trace, "--skip-bad-lines", "--json", tmp_path / "i.json")
    assert result.exit_code == 0, result.output
    assert json.loads((tmp_path / "i.json").read_text())["requests"] == 13_780
    # Two such lines among the first: no format is plain, and sniffing says so.
    noisier = tmp_path / "noisier.msr"
    noisier.write_text("".join(lines[:2]) + "this is not a request\n" * 2 + "".join(lines[2:]))
    result = invoke("info", noisier)
    assert result.exit_code == 2 and "cannot tell the format" in result.output, result.output
    result = invoke("info", trace, "--format", "msr", "--skip-bad-lines", "--json", tmp_path / "i.json")
    assert result.exit_code == 0, result.output
    assert json.loads((tmp_path / "i.json").read_text())["requests"] == 13_780
    result = invoke("run", trace, "--format", "msr", "--skip-bad-lines", "--json", tmp_path / "r.json")
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["host.write_requests"] == 13_738 and report["config.trace_format"] == "msr"
    # Sniffing with --skip-bad-lines passes over that line, in run as in info.
    for command, count in (("info", "13,780"), ("run", "13,738")):
        result = invoke(command, trace, "--skip-bad-lines")
        assert result.exit_code == 0 and count in result.output, (command, result.output)
    # Without skipping, run refuses as info does, naming the line.
    for command in ("info", "run"):
        result = invoke(command, trace, "--format", "msr")
        assert result.exit_code == 2 and f"{trace}:3: cannot parse `this is not a request`" in result.output

    # disksim lines are ssdsim lines: given, disksim is what runs and what the report records.
    financial = TRACES / "umass_financial1_first10k.ssdsim.ascii"
    report = ftlsim.simulate(str(financial), format="disksim")
    assert report["config.trace_format"] == "disksim"
    assert json.loads(report["config.resolved"])["config"]["trace"]["format"] == "disksim"
    assert ftlsim.simulate(str(financial))["config.trace_format"] == "ssdsim"


def test_zstd_and_xz_copies_give_the_same_info_as_the_plain_trace(tmp_path):
    want = info(RSRCH)
    xz = tmp_path / "rsrch.csv.xz"
    xz.write_bytes(lzma.compress(RSRCH.read_bytes()))
    copies = [xz]
    if shutil.which("zstd"):
        zst = tmp_path / "rsrch.csv.zst"
        subprocess.run(["zstd", "-q", "-o", str(zst), str(RSRCH)], check=True)
        copies.append(zst)
    for copy in copies:
        assert info(copy) == want, copy.name
        assert ftlsim.simulate(str(copy))["host.write_requests"] == 13_738


def test_an_empty_trace_is_called_empty(tmp_path):
    empty = tmp_path / "empty.csv"
    empty.write_bytes(b"")
    for args in (["info", empty], ["info", empty, "--format", "csv"], ["run", empty], ["plot-refs", empty, "-o",
                                                                                       tmp_path / "r.png"]):
        result = invoke(*args)
        assert result.exit_code == 2, args
        assert "is empty" in result.output, (args, result.output)
    code, _, err = piped("info", "-", source=empty)
    assert code == 2 and "trace <stdin> is empty" in err


def test_an_empty_trace_argument_is_an_error_not_the_default_workload():
    for command in ("run", "info", "plot-refs", "convert"):
        args = [command, ""] + (["-o", "x.png" if command == "plot-refs" else "x.csv"] if command in ("plot-refs", "convert") else [])
        result = invoke(*args)
        assert result.exit_code == 2, (command, result.output)
        assert "the trace is an empty string" in result.output, (command, result.output)
        assert "uniform" not in result.output.split("error")[0], "nothing ran"
    with pytest.raises(ftlsim.FtlsimError, match="empty string"):
        ftlsim.simulate("")


def test_info_totals_pass_2_pow_64(tmp_path):
    trace = tmp_path / "wide.csv"
    trace.write_text(f"W,0,{2**64 - 1}\n" * 3)
    stats = info(trace, format="csv")
    assert stats["footprint_bytes"] == 2**64
    assert stats["write_bytes"] == 3 * (2**64 - 1)
    assert stats["page_writes"] == 3 * 2**55
    result = invoke("info", trace)
    assert result.exit_code == 0
    assert "16 EiB (18,446,744,073,709,551,616 B)" in result.output


def test_a_request_of_terabytes_is_a_clean_error_through_the_api(tmp_path):
    trace = tmp_path / "tera.csv"
    trace.write_text(f"W,0,{4 << 40}\n")
    # In a child process: an abort there cannot take the test run down.
    code = ("import ftlsim\n"
            "for call in (lambda: ftlsim.trace.write_refs(T), lambda: ftlsim.simulate(T)):\n"
            "    try:\n        call()\n    except ftlsim.FtlsimError as e:\n        print('refused:', e)\n")
    done = subprocess.run([sys.executable, "-c", f"T = {str(trace)!r}\n" + code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    refusals = done.stdout.splitlines()
    assert len(refusals) == 2, done.stdout
    assert "268435456 logical blocks" in refusals[0] and "block_bytes=1048576" in refusals[0]
    assert "capacity=4398046511104 bytes (where the trace's furthest request ends" in refusals[1]
    assert "is 268435456 blocks" in refusals[1]


def test_a_saved_report_finds_its_trace_from_another_directory(tmp_path):
    work, elsewhere = tmp_path / "work", tmp_path / "elsewhere"
    work.mkdir()
    elsewhere.mkdir()
    shutil.copy(TRACES / "msr_wdev_1.csv", work / "wdev.csv")
    proc = ftlsim_cmd("run", "wdev.csv", "--json", "out.json", cwd=work)
    assert proc.wait(timeout=120) == 0, proc.stderr.read()
    saved = json.loads((work / "out.json").read_text())
    assert json.loads(saved["config.resolved"])["trace"] == str(work / "wdev.csv")
    proc = ftlsim_cmd("run", "-c", work / "out.json", "--json", "again.json", cwd=elsewhere)
    assert proc.wait(timeout=120) == 0, proc.stderr.read()
    again = json.loads((elsewhere / "again.json").read_text())
    assert again["host.write_requests"] == saved["host.write_requests"] == 1_055


def test_info_shows_human_units_beside_exact_counts():
    result = CliRunner().invoke(main, ["info", str(RSRCH)], env={"COLUMNS": "80"})
    assert result.exit_code == 0
    out = result.output
    assert "163.3 MiB (171,211,264 B)" in out  # write_bytes
    assert "178.4 GiB (191,520,501,760 B)" in out  # highest_address
    assert "16 KiB (16,384 B)" in out and "8.29%" in out
    assert max(len(line) for line in out.splitlines()) <= 80
    assert out.splitlines()[0].strip() == "msr_rsrch_1.csv", "titled by the file's name"


def _drawn(fig):
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig).draw()
    return fig


def _labels_collide(ax, axis) -> bool:
    renderer = ax.figure.canvas.get_renderer()
    boxes = [t.get_window_extent(renderer) for t in getattr(ax, f"get_{axis}ticklabels")() if t.get_text()]
    return any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1:])


def test_info_plot_has_human_units_and_labels_that_do_not_collide(tmp_path):
    fig = _drawn(plot_info(info(RSRCH), title="msr_rsrch_1.csv"))
    size, gap, reuse, popularity = fig.axes
    ticks = {ax: [t.get_text() for t in ax.get_xticklabels()] for ax in fig.axes}
    assert ticks[size] == ["1 KiB", "4 KiB", "16 KiB", "64 KiB"]
    assert {"100 µs", "1 s", "1 min", "1 h"} <= set(ticks[gap])
    assert "1k" in ticks[reuse] and "10" in ticks[popularity]
    for ax in fig.axes:
        assert not _labels_collide(ax, "x"), ticks[ax]
        assert ax.xaxis.get_offset_text().get_text() == ""
    assert fig._suptitle.get_text().startswith("msr_rsrch_1.csv (msr, 13,780 requests)")


def test_info_plot_axes_start_at_the_first_bin_that_holds_values():
    # The request-size axis ran from 0 through an empty third with a tick at 32 B, where no request is under
    # 512 B; a reuse-distance axis of one bin (128 to 256) had no tick at all.
    fig = _drawn(plot_info(info(str(TRACES / "blkparse_hadoop_java_sdb_50k.txt"))))
    size, gap, reuse, popularity = fig.axes
    ticks = {ax: [t.get_text() for t in ax.get_xticklabels() if t.get_text()] for ax in fig.axes}
    assert ticks[size] == ["4 KiB", "16 KiB", "64 KiB", "256 KiB", "1 MiB"], ticks[size]
    assert size.get_xlim()[0] > 2048 and ticks[gap][0] == "10 µs"
    assert ticks[reuse] == ["128", "256"]
    assert ticks[popularity][0] == "0"  # a bin from 0 (pages written once are in [1, 2)) keeps the axis from 0
    size = _drawn(plot_info(info(RSRCH))).axes[0]
    assert 256 < size.get_xlim()[0] < 512 and "0" not in [t.get_text() for t in size.get_xticklabels()]


def test_plot_refs_has_no_offset_calls_a_request_number_no_time_and_is_titled_by_the_file(tmp_path):
    out = tmp_path / "refs.png"
    result = invoke("plot-refs", RSRCH, "-o", out)
    assert result.exit_code == 0, result.output
    assert out.read_bytes().startswith(b"\x89PNG")
    fig = _drawn(refs_plot(write_refs(RSRCH), str(tmp_path / "again.png"), title="msr_rsrch_1.csv"))
    counts, order = fig.axes
    assert "time" not in order.get_xlabel() and order.get_xlabel().startswith("write request number (thousands)")
    assert order.get_ylabel() == "logical address (GiB)" and counts.get_xlabel().startswith("logical address (GiB)")
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            assert axis.get_offset_text().get_text() == ""
        assert not _labels_collide(ax, "x")
    assert max(float(t.get_text().replace("−", "-")) for t in order.get_xticklabels() if t.get_text()) < 100
    assert fig._suptitle.get_text().startswith("msr_rsrch_1.csv\n")


@pytest.mark.parametrize("command", ["compare", "sweep"])
def test_a_piped_trace_is_read_once_for_every_point_of_a_grid(tmp_path, command):
    import pandas as pd

    out = tmp_path / "grid.csv"
    code, _, err = piped(command, "-", "--ftl", "page,fast", "-p", "log_blocks=4,8", "--jobs", "2", "--csv", out,
                         source=TRACES / "msr_wdev_1.csv")
    assert code == 0, err
    df = pd.read_csv(out)
    assert len(df) == 3 and (df["host.write_requests"] == 1_055).all()
    assert df.loc[df["ftl"] == "page", "flash.page_writes"].item() == 10_816


def test_a_trace_typed_at_a_terminal_is_read_once():
    import pty

    master, slave = pty.openpty()
    proc = ftlsim_cmd("info", "/dev/stdin", "--format", "csv", stdin=slave)
    os.close(slave)
    os.write(master, b"W,0,4096\nW,8192,512\nR,0,512\n\x04")  # three lines, then Ctrl-D
    out, err = proc.communicate(timeout=60)
    os.close(master)
    assert proc.returncode == 0, err
    rows = {line.split("│")[1].strip(): line.split("│")[2].strip() for line in out.decode().splitlines()
            if line.count("│") == 3}
    assert (rows["requests"], rows["writes"], rows["reads"]) == ("3", "2", "1")


def test_generate_into_a_missing_directory_names_the_output():
    # It said "cannot read trace /x/nodir/out.csv": the output, not a trace to read.
    with pytest.raises(ftlsim.FtlsimError, match="output .*/nodir/out.csv: directory .*/nodir does not exist"):
        ftlsim.generate("uniform:writes=10", "/nonexistent-ftlsim/nodir/out.csv")


def test_info_plot_counts_start_at_1_and_a_few_bins_each_have_a_tick():
    # The hadoop trace writes most pages once and 8 twice: the popularity axis had ticks at 0 and 1 only, and a
    # single re-reference ran the count axis down to 10^-1.
    fig = _drawn(plot_info(info(str(TRACES / "blkparse_hadoop_java_sdb_50k.txt"))))
    size, gap, reuse, popularity = fig.axes
    assert [t.get_text() for t in popularity.get_xticklabels()] == ["0", "1", "2", "4"]
    for ax in fig.axes:
        assert ax.get_ylim()[0] == 0.7
        shown = [t.get_text() for t in ax.get_yticklabels() if t.get_text()]
        assert shown and all(re.fullmatch(r"[0-9.]+k?M?", t) for t in shown), shown


def test_a_piped_traces_errors_are_spelled_as_a_files_are(tmp_path):
    # The copy of standard input re-raised its error as text: Python's spelling (capacity='2MiB', wrap=True,
    # skip_bad_lines=True), where a file's error says --capacity 2MiB, --wrap and --skip-bad-lines.
    two = tmp_path / "two.csv"
    two.write_text("W,0,4096\nW,1048576,4096\n")
    code, _, err = piped("run", "-", "--capacity", "512KiB", source=two)
    assert code == 2
    assert err.startswith("error: <stdin>:2: --capacity 512KiB (the device's logical capacity) ends before"), err
    assert "e.g. --capacity 2MiB, or --wrap (" in err and "--compact (" in err and "=True" not in err, err
    bad = tmp_path / "bad.csv"
    bad.write_text(RSRCH.read_text().splitlines()[0] + "\nxx yy garbage\n")
    code, _, err = piped("run", "-", "--compact", source=bad)
    assert code == 2 and err.strip().endswith("(pass --skip-bad-lines to skip such lines)"), err


def test_convert_takes_the_trace_flags_its_errors_name_and_refuses_what_it_would_ignore(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text(RSRCH.read_text().splitlines()[0] + "\nxx yy garbage\n")
    out = tmp_path / "out.csv"
    code, _, err = ftlsim_run("convert", bad, out, "--format", "msr")
    assert code == 2 and "(pass --skip-bad-lines to skip such lines)" in err, err
    code, _, err = ftlsim_run("convert", bad, out, "--format", "msr", "--skip-bad-lines")
    assert code == 0 and err.startswith("1 request written to"), err
    assert len(out.read_text().splitlines()) == 2
    # Taken and ignored: --capacity and wrap=true wrote the trace as read, with exit 0.
    code, _, err = ftlsim_run("convert", RSRCH, out, "--capacity", "1MiB")
    assert code == 2 and "the device sizes a built-in workload" in err, err
    code, _, err = ftlsim_run("convert", RSRCH, out, "-p", "wrap=true", "-p", "time_scale=0.5")
    assert code == 2 and "time_scale, wrap: run options change how a run serves the requests" in err, err
    code, _, err = ftlsim_run("generate", "uniform:writes=10,seed=1", out, "--capacity", "1MiB", "-p",
                              "page_bytes=2048")
    assert code == 0, err
    for flag, key, value in (("--format", "format", "msr"), ("--device", "device", "1")):
        code, _, err = ftlsim_run("convert", bad, out, flag, value, "-p", f"{key}={value}")
        assert code == 2 and f"{key} given twice: as {flag} and -p {key}=" in err, err
