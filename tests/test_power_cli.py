"""Power loss and bad blocks from the command line and the API: `ftlsim mount-cost`
tables each scheme's boot cost, `--torn-pages` tears programs at the cuts, and the bad-block options reach
the engine by name."""

from click.testing import CliRunner

import ftlsim
from ftlsim.cli import main

TRACE = "hotcold:writes=3000,seed=2"


def test_mount_cost_tables_the_boot_cost_of_each_scheme(tmp_path):
    out = tmp_path / "mount.csv"
    r = CliRunner().invoke(main, ["mount-cost", TRACE, "--ftl", "page,nftl", "--capacity", "1MiB",
                                  "--csv", str(out), "--jobs", "1"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    assert "mount.spare_reads" in r.output and "nftl" in r.output
    import pandas as pd

    df = pd.read_csv(out)
    assert list(df["ftl"]) == ["page", "nftl"]
    # Both scan spare areas at boot; NFTL reads every page's spare area of each of its blocks.
    assert (df["mount.spare_reads"] > 0).all()
    assert (df["mount.count"] == 1).all()


def test_mount_cost_on_an_array_gives_the_mount_with_the_dies_reading_at_once(tmp_path):
    # FAST mounts by reading every page's spare area: 3,200 spare reads of 15 us (lee2007), 48,000 us one
    # after another. On 4 dies each die reads its 800 while the others read theirs: 12,000 us (no channel
    # time is given, so a read takes its array time alone). On one chip the column is not there.
    out = tmp_path / "mount.csv"
    r = CliRunner().invoke(main, ["mount-cost", TRACE, "--ftl", "fast", "--capacity", "1MiB", "-p", "channels=2",
                                  "-p", "dies_per_chip=2", "--csv", str(out), "--jobs", "1"],
                           catch_exceptions=False)
    assert r.exit_code == 0, r.output
    import pandas as pd

    row = pd.read_csv(out).iloc[0]
    assert (row["mount.spare_reads"], row["mount.time_us.max"], row["mount.array_time_us.max"]) == (3200, 48000, 12000)
    assert "12,000" in r.output
    r = CliRunner().invoke(main, ["mount-cost", TRACE, "--ftl", "fast", "--capacity", "1MiB", "--csv", str(out)],
                           catch_exceptions=False)
    assert r.exit_code == 0, r.output
    assert "mount.array_time_us.max" not in pd.read_csv(out)


def test_torn_pages_are_counted_and_survived():
    r = ftlsim.simulate(TRACE, ftl="nftl", capacity="1MiB", power_cuts=60, torn_pages=True)
    assert r["power.cuts"] == r["power.cuts_survived"] > 0
    assert 0 < r["power.torn_pages"] <= r["power.cuts"]
    r = ftlsim.simulate(TRACE, ftl="fast", capacity="1MiB", power_cuts=60, torn_pages=True)
    assert r["power.cuts"] == r["power.cuts_survived"] > 0
    assert 0 < r["power.torn_pages"] <= r["power.cuts"]
    r = CliRunner().invoke(main, ["run", TRACE, "--ftl", "page", "--capacity", "1MiB", "--power-cuts", "20",
                                  "--torn-pages"], catch_exceptions=False)
    assert r.exit_code == 0, r.output


def test_bad_block_options_reach_the_engine_and_a_worn_out_chip_says_so():
    r = ftlsim.simulate(TRACE, ftl="page", capacity="1MiB", bad_block_ratio=0.05, endurance=4,
                        bad_block_reserve=200, precondition="full")
    assert r["bad_blocks.factory"] > 0 and r["bad_blocks.grown"] > 0
    # Wear is over the blocks in service: the scheme's and the reserve blocks that replaced worn ones.
    assert sum(r["erase_count.histogram"]) == r["config.physical_blocks"] + r["bad_blocks.grown"]
    r = CliRunner().invoke(main, ["run", TRACE, "--ftl", "page", "--capacity", "1MiB", "-p", "endurance=2",
                                  "-p", "bad_block_reserve=1", "--precondition", "full"])
    assert r.exit_code == 1
    assert "the chip ran out of good blocks" in r.output


def test_more_cuts_than_flash_operations_are_said_as_planned():
    # The header said power_cuts=100000 and the report planned 2,000, one at each flash operation, unsaid.
    result = CliRunner().invoke(main, ["run", "uniform:writes=2000,seed=1", "--capacity", "2MiB", "--power-cuts",
                                       "100000"])
    assert result.exit_code == 0, result.output
    assert ("warning: --power-cuts 100000 asks for more cuts than the run has flash operations: 2,000 planned, "
            "one at each") in " ".join(result.stderr.split())
    # Every flash operation is cut, each on a host program: every page is dropped, none counted as written
    # (host.write_pages counted the page each cut landed on, and write amplification read 0).
    r = ftlsim.simulate("uniform:writes=2000,seed=1", capacity="2MiB", power_cuts=100000)
    assert (r["host.write_pages"], r["power.write_pages_dropped"], r["flash.page_writes"]) == (0, 2000, 0)
