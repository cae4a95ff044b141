"""The NVRAM write cache and the tagged FAT workloads end to end: API keywords, CLI options, `ftlsim generate`."""

import gzip

import pandas as pd
from click.testing import CliRunner

import ftlsim
import ftlsim.sim
from ftlsim.cli import main

CAMERA = "fat-camera:seed=1,transactions=2,photos=4"


def test_metadata_nvram_absorbs_the_metadata_writes_of_a_fat_workload():
    plain = ftlsim.simulate(CAMERA, ftl="page", capacity="32MiB").to_dict()
    cached = ftlsim.simulate(CAMERA, ftl="page", capacity="32MiB", nvram="128KiB", nvram_policy="metadata",
                             nvram_flush_at_end=False).to_dict()
    assert "nvram.writes_absorbed" not in plain
    assert cached["nvram.writes_absorbed"] > cached["host.write_pages"] / 2
    assert cached["flash.page_writes"] < plain["flash.page_writes"]
    assert cached["nvram.flush_writes"] == 0
    assert cached["time_us.nvram"] > 0


def test_generate_writes_a_tagged_trace_that_replays_to_the_same_run(tmp_path):
    out = tmp_path / "camera.csv.gz"
    n = ftlsim.generate(CAMERA, str(out), capacity="32MiB")
    with gzip.open(out, "rt") as f:
        lines = f.read().splitlines()
    assert lines[0] == "op,offset,length,tag,time_us" and len(lines) == n + 1
    tags = {line.split(",")[3] for line in lines[1:]}
    assert tags == {"metadata", "data"}
    kw = dict(ftl="page", capacity="32MiB", nvram="128KiB")
    a = ftlsim.simulate(CAMERA, **kw).to_dict()
    b = ftlsim.simulate(str(out), **kw).to_dict()
    for key in ("flash.page_writes", "flash.erases", "nvram.writes_absorbed", "nvram.flush_writes"):
        assert a[key] == b[key], key


def test_cli_nvram_options_and_generate(tmp_path):
    runner = CliRunner()
    out = tmp_path / "pm.csv"
    res = runner.invoke(main, ["generate", "fat-postmark:seed=2,files=20,transactions=50,dirs=2", "-o", str(out),
                               "--capacity", "32MiB"])
    assert res.exit_code == 0, res.output
    assert "requests written" in res.output
    res = runner.invoke(main, ["run", str(out), "--ftl", "page", "--capacity", "32MiB", "--nvram", "64KiB",
                               "--nvram-policy", "lru"])
    assert res.exit_code == 0, res.output
    res = runner.invoke(main, ["run", str(out), "--capacity", "32MiB", "--nvram", "64KiB", "--nvram-policy", "region"])
    assert res.exit_code != 0 and "nvram_regions" in res.output


def test_a_grid_takes_a_list_valued_option_whole_and_sweeps_it_repeated(tmp_path):
    # -p nvram_regions=0-64KiB,1MiB-2MiB was split at its comma into two runs of one region each, where `run`
    # takes it as one NVRAM over both regions; so was a [grid] value in a file or Python.
    both, low = "0-64KiB,1MiB-2MiB", "0-64KiB"
    common = ["uniform:writes=3000,seed=1", "--ftl", "page", "--nvram", "64KiB", "--nvram-policy", "region",
              "--capacity", "2MiB", "--precondition", "full", "--jobs", "1"]
    csv = tmp_path / "one.csv"
    res = CliRunner().invoke(main, ["sweep", *common, "-p", f"nvram_regions={both}", "--csv", str(csv)])
    assert res.exit_code == 0, res.output
    rows = pd.read_csv(csv)
    run = ftlsim.simulate("uniform:writes=3000,seed=1", ftl="page", nvram="64KiB", nvram_policy="region",
                          capacity="2MiB", precondition="full", nvram_regions=both)
    assert list(rows["nvram_regions"]) == [both] and rows["flash.page_writes"][0] == run.page_writes
    res = CliRunner().invoke(main, ["compare", *common, "-p", f"nvram_regions={both}", "-p", f"nvram_regions={low}",
                                    "--csv", str(csv)])
    assert res.exit_code == 0, res.output
    assert list(pd.read_csv(csv)["nvram_regions"]) == [both, low]
    df = ftlsim.sweep("uniform:writes=3000,seed=1", ["page"], {"nvram_regions": both}, nvram="64KiB",
                      nvram_policy="region", capacity="2MiB", precondition="full", jobs=1)
    assert list(df["nvram_regions"]) == [both]
    # A blkparse device major,minor is one device.
    assert [r["device"] for r in ftlsim.sim.grid(["t.blkparse"], ["page"], {"device": "8,16"})] == ["8,16"]
    res = CliRunner().invoke(main, ["compare", "--help"])
    assert "-p nvram_regions=A -p" in " ".join(res.output.split())
