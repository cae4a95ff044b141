"""Trace input and conversion from the command line: lossless generate / convert by
extension, info's format, devices and distribution plot, --compact, and hostile files ending in clean errors."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import ftlsim
from ftlsim.cli import main
from ftlsim.trace import info, plot_info

ROOT = Path(__file__).resolve().parent.parent
TRACES = ROOT.parent / "shared" / "traces"
FIXTURES = ROOT / "crates" / "ftlsim-core" / "tests" / "fixtures"


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def test_convert_keeps_times_in_every_format_the_extension_names(tmp_path):
    source = FIXTURES / "tiny.msr"
    want = info(source)
    for name in ("a.csv", "a.trace", "a.ascii", "a.blkparse", "a.csv.gz"):
        out = tmp_path / name
        result = invoke("convert", source, "-o", out)
        assert result.exit_code == 0, result.output
        assert f"{want['requests']} requests written" in result.output
        got = info(out)
        assert got["format"] == {"a.trace": "ssdsim", "a.ascii": "ssdsim", "a.blkparse": "blkparse"}.get(name, "csv")
        for key in ("requests", "reads", "writes", "write_bytes", "highest_address", "page_writes"):
            assert got[key] == want[key], (name, key)
        assert abs(got["duration_us"] - want["duration_us"]) < 1e-3, name
        assert got["duration_us"] > 0


def test_generate_refuses_an_unknown_extension_and_its_own_input(tmp_path):
    trace = tmp_path / "same.msr"
    original = (FIXTURES / "tiny.msr").read_bytes()
    trace.write_bytes(original)
    result = invoke("generate", trace, "-o", trace)
    assert result.exit_code == 2 and "is the input trace" in result.output
    assert trace.read_bytes() == original, "the input is untouched"
    other = tmp_path / "other.msr"
    result = invoke("generate", trace, "-o", other)
    assert result.exit_code == 2
    assert "`.msr` names no format" in result.output and ".blkparse" in result.output
    assert not other.exists()

    csv = tmp_path / "same.csv"
    csv.write_text("W,0,4096\n")
    result = invoke("generate", csv, "-o", csv)
    assert result.exit_code == 2 and "is the input trace" in result.output
    assert csv.read_text() == "W,0,4096\n"


def test_info_names_format_devices_and_draws_distributions(tmp_path):
    out, png = tmp_path / "info.json", tmp_path / "info.png"
    result = invoke("info", TRACES / "msr_wdev_1.csv", "--json", out, "--plot", png)
    assert result.exit_code == 0, result.output
    stats = json.loads(out.read_text())
    assert stats["format"] == "msr" and "msr" in result.output
    assert stats["devices"] == [{"device": 1, "requests": 1055, "highest_address": 54_620_086_272,
                                 "range_start": None, "range_bytes": None}]
    assert sum(stats["distributions"]["request_bytes"]) == 1055
    assert sum(stats["distributions"]["inter_arrival_us"]) == 1054
    # Write popularity counts each written page once: 369 of them (see the engine's info test).
    assert sum(stats["distributions"]["page_writes"]) == 369 * 8
    assert png.stat().st_size > 10_000
    fig = plot_info(stats)
    assert len(fig.axes) == 4 and "msr" in fig._suptitle.get_text()


def test_info_on_endless_or_huge_input_is_a_clean_error_or_instant(tmp_path):
    result = invoke("info", "/dev/zero")
    assert result.exit_code == 2 and "65536 bytes" in result.output
    trace = tmp_path / "tib.csv"
    trace.write_text("W,0,1099511627776\n")
    result = invoke("info", trace, "--json", tmp_path / "i.json")
    assert result.exit_code == 0, result.output
    assert json.loads((tmp_path / "i.json").read_text())["footprint_bytes"] == 1 << 40
    result = invoke("info", trace, "--page-bytes", "-1")
    assert result.exit_code == 2 and "page-bytes" in result.output


def test_compact_runs_a_trace_spanning_terabytes(tmp_path):
    trace = tmp_path / "sparse.csv"
    trace.write_text("".join(f"W,{(i << 42) + 4096},8192\n" for i in range(4)) + "R,4096,8192\n")
    out = tmp_path / "r.json"
    result = invoke("run", trace, "--compact", "--json", out)
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    assert report["host.requests"] == 5
    assert ftlsim.simulate(str(trace), compact=True)["host.requests"] == 5


def test_a_blkparse_device_is_named_by_major_minor_too_and_the_run_says_which_it_kept(tmp_path):
    trace = tmp_path / "t.blkparse"
    lines = [f"  {dev}   0  {i}  0.{i:09d}  1  D  W {8 * i} + 8 [dd]" for i, dev in enumerate(["8,16"] * 3 + ["8,32"])]
    trace.write_text("\n".join(lines) + "\n")
    result = invoke("info", str(trace))
    assert result.exit_code == 0, result.output
    assert "2064 = 8,16 (3 requests), 2080 = 8,32 (1 request)" in result.output, result.output
    # --device takes either spelling; the run's header says which device it kept.
    for device in ("8,32", "2080"):
        result = invoke("run", str(trace), "--device", device, "--capacity", "1MiB")
        assert result.exit_code == 0, result.output
        said = " ".join(result.output.split())
        assert "run: device=2080" in said and "host.write_requests │ 1 │" in said, result.output
    result = invoke("run", str(trace), "--device", "8,256")
    assert result.exit_code == 2, result.output
    assert "--device 8,256 must be a device number (2064) or a blkparse major,minor" in result.output
    # From Python and in a config file too (the engine reads the text): device='8,32' is 2080.
    report = ftlsim.simulate(str(trace), device="8,32", capacity="1MiB")
    assert report["host.write_requests"] == 1 and '"device":2080' in report["config.resolved"]
    config = tmp_path / "run.toml"
    config.write_text(f'trace = "{trace}"\ndevice = "8,32"\ncapacity = "1MiB"\n')
    result = invoke("run", "-c", str(config))
    assert result.exit_code == 0 and "run: device=2080" in result.output, result.output


def test_info_names_an_fiu_device_by_major_minor_and_its_json_ends_its_line(tmp_path):
    # An FIU device was a bare 1536, a blkparse one "2064 = 8,16"; --json wrote no final newline.
    result = invoke("info", str(TRACES / "fiu_mail_cheetah_2_head9998.blkparse"), "--json", str(tmp_path / "i.json"))
    assert result.exit_code == 0, result.output
    assert "1536 = 6,0 (9,998 requests)" in result.output
    assert (tmp_path / "i.json").read_text().endswith("}\n")


def test_info_counts_requests_of_no_bytes_apart_as_run_does_and_warns_of_no_request(tmp_path):
    # info counted a 0-byte write as a write and a 0-byte read as a read, where run counts them in
    # host.empty_requests; a trace info read no request from was a table of zeros with no word.
    trace = tmp_path / "s.csv"
    trace.write_text("W,0,4096\nW,0,0\nR,0,0\n")
    stats = info(str(trace))
    assert (stats["requests"], stats["reads"], stats["writes"], stats["trims"], stats["empty"]) == (3, 0, 1, 0, 2)
    report = ftlsim.simulate(str(trace))
    assert (report["host.read_requests"], report["host.write_requests"], report["host.empty_requests"]) == (0, 1, 2)
    result = invoke("info", TRACES / "umass_financial1_first10k.ssdsim.ascii", "--device", "19", "--writes-only")
    assert result.exit_code == 0 and "requests" in result.output
    assert "warning: no request was read with --device 19, --writes-only" in " ".join(result.output.split())


def test_converting_to_a_format_without_tags_says_how_many_tags_it_lost(tmp_path):
    # The metadata tag that nvram_policy='metadata' reads was dropped by .blkparse and .trace without a word.
    trace = tmp_path / "t.csv"
    trace.write_text("W,0,4096,data,5\nW,1024,512,metadata,40.5\nW,8192,512\n")
    for out, lost in (("t.blkparse", 2), ("t.trace", 2), ("again.csv", 0)):
        result = invoke("convert", trace, tmp_path / out)
        assert result.exit_code == 0, result.output
        said = " ".join(result.output.split())
        if lost:
            assert f"warning: {lost} requests tagged data or metadata lost their tags: {out} has no tag column" in said
            assert "--nvram-policy metadata reads them" in said, said
        else:
            assert "warning" not in said, said
    with pytest.warns(RuntimeWarning, match="^2 requests tagged data or metadata lost their tags: ssdsim has"):
        ftlsim.generate(str(trace), "-", output_format="ssdsim")
