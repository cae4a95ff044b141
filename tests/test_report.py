"""The report's schema comes from the engine: every key of a real report is described, and the cause keys
partition the total time."""

import ftlsim
from ftlsim._registry import registry


def test_schema_describes_every_key_of_a_report():
    table = ftlsim.report_schema()
    assert list(table.columns) == ["key", "unit", "section", "description", "table"]
    schema = table.to_dict("records")
    exact = {k["key"] for k in schema if "<" not in k["key"]}
    prefixes = [k["key"].split("<")[0] for k in schema if "<" in k["key"]]
    r = ftlsim.simulate("hotcold:writes=3000,seed=1", ftl="nftl", capacity="2MiB", page_cache=8)
    for key in r:
        assert key in exact or any(key.startswith(p) for p in prefixes), key
    sections = {k["section"] for k in schema}
    assert {"Host", "Flash", "Merges and GC", "Time"} <= sections
    assert {k["unit"] for k in schema} >= {"count", "us", "bytes", "ratio"}


def test_time_by_cause_sums_to_the_total_and_kinds_come_from_the_engine():
    r = ftlsim.simulate("uniform:writes=4000,seed=2", ftl="fast", capacity="2MiB", precondition="full",
                        log_blocks=4)
    causes = registry()["kinds"]["cause"]
    assert "merge" in causes and "host" in causes
    total = sum(r[f"time_us.cause.{c}"] for c in causes)
    assert abs(total - r.time_us) <= 1e-6 * r.time_us
    assert set(r.merges) == set(registry()["kinds"]["merge"])
    assert r["time_us.cause.merge"] > 0


def test_run_options_reach_the_engine():
    r = ftlsim.simulate("uniform:writes=2000,seed=2", ftl="page", capacity="2MiB", rmw=False, measure_from=1000)
    assert r["config.rmw"] is False
    assert r["host.requests"] == 1000


def test_power_cuts_from_the_command_line():
    from click.testing import CliRunner

    from ftlsim.cli import main

    result = CliRunner().invoke(main, ["run", "hotcold:writes=3000,seed=1", "--ftl", "page", "--capacity", "1MiB",
                                       "--power-cuts", "20", "--mount-at-end", "--json", "/dev/stdout"])
    assert result.exit_code == 0, result.output
    assert "power.cuts_survived" in result.output and "mount.time_us.mean" in result.output
    r = ftlsim.simulate("hotcold:writes=3000,seed=1", ftl="block", capacity="1MiB", power_cuts=20)
    assert r["power.cuts"] == r["power.cuts_survived"] >= 18
