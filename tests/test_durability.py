"""What a power cut and an interrupt must never do: lose an acknowledged write behind any NVRAM policy, plan
fewer cuts than asked without saying so, or ignore Ctrl-C in the power-cut dry run or in `generate`; and the
report's echo of the scheme's parameters is what the scheme was built with."""

import json
import signal
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner

import ftlsim
from ftlsim.cli import main


@pytest.mark.parametrize("policy", ["metadata", "lru", "bplru"])
@pytest.mark.parametrize("ftl", ["page", "fast", "bast", "nftl", "dftl", "tiny"])
def test_a_cut_on_a_write_through_keeps_the_cached_copy(tmp_path, ftl, policy):
    """The metadata write of page 0 is cached; the untagged one goes to flash, and the cut lands on its
    program. The cached copy used to be dropped first, and the page read nothing after the mount."""
    trace = tmp_path / "m.csv"
    trace.write_text("W,0,512,metadata\nW,0,512,\n")
    r = CliRunner().invoke(main, ["run", str(trace), "--ftl", ftl, "--capacity", "256KiB", "--nvram", "16KiB",
                                  "--nvram-policy", policy, "--power-cuts", "1", "--json", str(tmp_path / "r.json")])
    assert r.exit_code == 0, r.output
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["power.cuts"] == report["power.cuts_survived"] == report["power.cuts_planned"] == 1


def test_fewer_cuts_than_planned_are_counted_and_warned_about():
    with pytest.warns(RuntimeWarning, match=r"of 200 planned power cuts landed"):
        r = ftlsim.simulate("hotcold:writes=3000", ftl="last", capacity="4MiB", nvram="64KiB", power_cuts=200)
    # Distinct points: every one of the 200 asked is planned; a cut drops the rest of its request, so some
    # fall past the end of the shortened run.
    assert r["power.cuts_planned"] == 200
    assert r["power.cuts_survived"] == r["power.cuts"] < 200


def test_the_echoed_parameters_are_the_ones_the_scheme_ran_with():
    r = ftlsim.simulate("uniform:writes=2000", ftl="page", capacity="1MiB", over_provisioning=1.0)
    assert json.loads(r["config.params"])["over_provisioning"] == 1.0
    assert r["config.physical_blocks"] == 2 * r["config.logical_blocks"]
    # A fraction is echoed as given (0.07, not the 0.070068359375 its 72 whole blocks of 1,024 make), and runs
    # the blocks the scheme's own default of 0.07 runs.
    given = ftlsim.simulate("uniform:writes=2000", ftl="page", capacity="16MiB", over_provisioning=0.07)
    default = ftlsim.simulate("uniform:writes=2000", ftl="page", capacity="16MiB")
    assert json.loads(given["config.params"])["over_provisioning"] == 0.07
    assert given["config.physical_blocks"] == default["config.physical_blocks"] == 1024 + 72
    for ftl in ["page", "dftl"]:
        r = ftlsim.simulate("uniform:writes=2000", ftl=ftl, capacity="16MiB", extra_blocks=16)
        params = json.loads(r["config.params"])
        assert r["config.logical_blocks"] == 1024
        assert r["config.physical_blocks"] == 1024 + 16
        # The largest fraction whose blocks, rounded up as the scheme rounds, are the 16 given.
        assert params["over_provisioning"] == pytest.approx(16 / 1024)
    # Defaults are echoed too, not only what was given.
    r = ftlsim.simulate("uniform:writes=2000", ftl="fast", capacity="1MiB")
    assert json.loads(r["config.params"]) == {"lazy_merge": False, "log_blocks": 8}


def test_a_saved_report_with_derived_spare_repeats_exactly(tmp_path):
    out = tmp_path / "out.json"
    args = ["run", "uniform:writes=3000", "--ftl", "page", "--capacity", "1MiB", "-p", "over_provisioning=1.0"]
    first = CliRunner().invoke(main, args + ["--json", str(out)])
    assert first.exit_code == 0, first.output
    again = CliRunner().invoke(main, ["run", "-c", str(out), "--json", str(tmp_path / "again.json")])
    assert again.exit_code == 0, again.output
    a, b = (json.loads(p.read_text()) for p in (out, tmp_path / "again.json"))
    assert (a["config.params"], a["flash.erases"]) == (b["config.params"], b["flash.erases"])


def _interrupt(args, after_s):
    p = subprocess.Popen([sys.executable, "-m", "ftlsim", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    time.sleep(after_s)
    assert p.poll() is None, "finished before the interrupt"
    p.send_signal(signal.SIGINT)
    started = time.monotonic()
    _, err = p.communicate(timeout=60)
    return p.returncode, time.monotonic() - started, err


def test_ctrl_c_stops_the_power_cut_dry_run_within_a_second():
    code, took, err = _interrupt(["run", "uniform:writes=100000000", "--power-cuts", "10"], 3)
    assert code == 130, err
    assert took < 1.5
    assert "Traceback" not in err


def test_ctrl_c_stops_generate_within_a_second(tmp_path):
    out = tmp_path / "big.csv"
    code, took, err = _interrupt(["generate", "uniform:writes=200000000", "-o", str(out)], 3)
    assert code == 130, err
    assert took < 1.5
    assert "Traceback" not in err
