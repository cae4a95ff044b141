"""The ``devices`` trace option through the API, config files and the command line, and a
Ctrl-C during a run's ``--compact`` pre-pass."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import ftlsim
from ftlsim import _core
from ftlsim.cli import main
from ftlsim.trace import info

ROOT = Path(__file__).resolve().parent.parent
FINANCIAL1 = ROOT.parent / "shared" / "traces" / "umass_financial1_first10k.ssdsim.ascii"

# Three SPC devices (ASU, LBA in sectors, bytes, op, s). Highest addresses: device 0 52,224 B (4 blocks of
# 16 KiB: 64 KiB), device 2 20,992 B (2 blocks), device 5 12,288 B (1 block).
THREE = "2,0,4096,w,0.0\n0,100,1024,w,0.1\n5,8,8192,w,0.2\n2,40,512,r,0.3\n0,0,512,r,0.4\n"


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture
def three(tmp_path):
    path = tmp_path / "three.spc"
    path.write_text(THREE)
    return path


def test_simulate_sizes_the_device_by_the_concatenated_ranges(three):
    # lee2007: 16 KiB blocks. concat: 64 + 32 + 16 KiB; devices 5 then 2: 16 + 32 KiB; fold: device 0's 52,224 B
    # rounded up to 64 KiB.
    for devices, capacity in [("concat", 114_688), ("5,2", 49_152), ([5, 2], 49_152), ("fold", 65_536)]:
        r = ftlsim.simulate(str(three), devices=devices)
        assert r["config.capacity_bytes"] == capacity, devices
        assert r["config.devices"] == (devices if isinstance(devices, str) else "5,2")
    assert ftlsim.simulate(str(three), devices="5,2")["host.write_requests"] == 2
    assert ftlsim.simulate(str(three), devices=0)["host.requests"] == 2


def test_a_filter_naming_a_missing_device_says_which_exist(three):
    with pytest.raises(_core.FtlsimError, match="device 7 is not in the trace, whose devices are 0, 2, 5"):
        ftlsim.simulate(str(three), devices="5,7")
    with pytest.raises(_core.FtlsimError, match="devices.*fold, concat"):
        ftlsim.simulate(str(three), devices="all")


def test_info_gives_each_device_its_range(three):
    got = info(three, devices="concat")
    assert [(d["device"], d["range_start"], d["range_bytes"]) for d in got["devices"]] == [
        (0, 0, 65_536), (2, 65_536, 32_768), (5, 98_304, 16_384)]
    assert got["highest_address"] == 98_304 + 12_288
    result = invoke("info", three, "--devices", "concat")
    assert result.exit_code == 0, result.output
    assert "2 (2 requests, bytes 65,536-98,304)" in result.output
    assert "5 (1 request, bytes 98,304-114,688)" in result.output


def test_the_report_names_the_device_kept_and_whether_reads_were_dropped(three):
    # Only config.resolved held them: a sweep's rows of device 2 and device 5 differed in no flat key.
    r = ftlsim.simulate(str(three), device=2, writes_only=True)
    assert (r["config.device"], r["config.writes_only"], r["config.devices"]) == (2, True, "fold")
    r = ftlsim.simulate(str(three))
    assert (r["config.device"], r["config.writes_only"]) == (None, False)


def test_run_compare_and_config_files_take_devices(three, tmp_path):
    out = tmp_path / "r.json"
    result = invoke("run", three, "--devices", "5,2", "--json", out)
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    assert (report["config.devices"], report["config.capacity_bytes"]) == ("5,2", 49_152)
    # The saved report repeats the run with its devices.
    again = tmp_path / "again.json"
    assert invoke("run", "-c", out, "--json", again).exit_code == 0
    assert json.loads(again.read_text())["config.capacity_bytes"] == 49_152

    config = tmp_path / "run.toml"
    config.write_text(f'trace = "{three}"\nftl = "page"\ndevices = [5, 2]\n')
    result = invoke("run", "-c", config, "--json", out)
    assert result.exit_code == 0, result.output
    assert json.loads(out.read_text())["config.devices"] == "5,2"

    csv = tmp_path / "c.csv"
    result = invoke("compare", three, "--ftl", "page,fast", "--devices", "concat", "--csv", csv)
    assert result.exit_code == 0, result.output
    import pandas as pd

    rows = pd.read_csv(csv)
    assert list(rows["config.capacity_bytes"]) == [114_688, 114_688]

    result = invoke("run", three, "--devices", "9")
    assert result.exit_code == 2 and "whose devices are 0, 2, 5" in result.output


def test_financial1_excerpt_concatenated():
    got = info(FINANCIAL1, devices="concat", block_bytes=16_384)
    assert len(got["devices"]) == 22
    # The 22 ASUs one after another: 5,888,196,608 B, where folded the highest address is ASU 3's 513,235,456 B.
    last = got["devices"][-1]
    assert (last["device"], last["range_start"], last["range_bytes"]) == (21, 5_508_595_712, 379_600_896)
    assert got["highest_address"] == 5_888_196_608
    assert info(FINANCIAL1, block_bytes=16_384)["highest_address"] == 513_235_456
    r = ftlsim.simulate(str(FINANCIAL1), devices="concat")
    assert (r["config.capacity_bytes"], r["host.requests"]) == (5_888_196_608, 10_000)


def test_convert_keeps_each_request_on_its_device(tmp_path):
    """The Financial1 excerpt's 22 ASUs survive `convert`: `run --devices concat` on the converted trace erases as
    many blocks as on the original (FAST; devices dropped, it erased 2,572 where the original erases 2,526)."""

    def erases(trace, devices=("--devices", "concat")):
        out = tmp_path / "r.json"
        result = invoke("run", trace, "--ftl", "fast", *devices, "--json", out)
        assert result.exit_code == 0, result.output
        return json.loads(out.read_text())["flash.erases"]

    want = erases(FINANCIAL1)
    assert want == 2_526
    for name in ("f.trace", "f.ascii", "f.blkparse", "f.blkparse.gz"):
        out = tmp_path / name
        result = invoke("convert", FINANCIAL1, out)
        assert result.exit_code == 0, result.output
        assert len(info(out)["devices"]) == 22, name
        assert erases(out) == want, name
    # CSV has no device column: refused, naming the formats that keep devices, and no file is left.
    out = tmp_path / "f.csv"
    result = invoke("convert", FINANCIAL1, out)
    assert result.exit_code == 2
    assert "csv has no device column, but the trace has more than one device" in result.output
    assert ".blkparse (blkparse)" in result.output and not out.exists()
    # Laid out as one address space, it can be written, and runs as the original does laid out.
    assert invoke("convert", FINANCIAL1, out, "-p", "devices=concat").exit_code == 0
    assert erases(out, devices=()) == want


def test_ctrl_c_in_the_compact_pre_pass_of_a_run(tmp_path):
    """The pre-pass reports progress (requests 0) after 16,384 requests: Ctrl-C there (a KeyboardInterrupt
    raised by the callback, as the binding raises it for SIGINT) stops the run before it serves a request."""
    path = tmp_path / "many.csv"
    path.write_text("".join(f"W,{i * 4096},4096\n" for i in range(40_000)))
    calls = []

    def interrupt(requests, done, total):
        calls.append(requests)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        ftlsim.simulate(str(path), capacity="1GiB", compact=True, progress=interrupt)
    assert calls == [0]
