"""The report's schema comes from the engine: every key of a real report is described (a scheme's own figures
too, declared on its registry row), the engine owns every key (Python adds none), and the cause keys
partition the total time."""

import hashlib
import re

import pytest

import ftlsim
from ftlsim._registry import registry


def names(pattern: str, key: str) -> bool:
    """Whether schema key `pattern` names `key`: equal, or equal but for one ``<...>`` part standing for a
    non-empty name after a non-empty dotted prefix, so that no pattern matches every key."""
    if "<" not in pattern:
        return pattern == key
    prefix, rest = pattern.split("<", 1)
    suffix = rest.split(">", 1)[1]
    assert "." in prefix and "<" not in suffix, f"schema key {pattern}: a <...> part needs a dotted prefix"
    return re.fullmatch(re.escape(prefix) + ".+" + re.escape(suffix), key) is not None


def test_schema_describes_every_key_of_a_report(tmp_path):
    table = ftlsim.report_schema()
    assert list(table.columns) == ["key", "unit", "section", "description", "table"]
    schema = table.to_dict("records")
    assert all(k["description"].strip() and k["unit"] for k in schema), "a key without a description or unit"
    trace = tmp_path / "t.csv"
    trace.write_text("W,0,4096\nW,8192,4096\nR,0,4096\n")
    reports = [
        ftlsim.simulate("hotcold:writes=3000,seed=1", ftl="nftl", capacity="2MiB", page_cache=8),
        ftlsim.simulate("hotcold:writes=3000,seed=1", ftl="mast", capacity="2MiB", nvram="16KiB",
                        nvram_policy="lru"),
        ftlsim.simulate("hotcold:writes=3000,seed=1", ftl="dftl", capacity="2MiB", profile="psu-flashsim",
                        power_cuts=3),
        ftlsim.simulate(str(trace), ftl="page"),
    ]
    undescribed = {key for r in reports for key in r if not any(names(k["key"], key) for k in schema)}
    assert undescribed == set()
    # The scheme's own figures are declared, with their units: none falls back to a wildcard.
    assert {"nftl.spare_reads_avoided", "mast.utilization.ca", "nvram.absorbed_share", "dftl.profile"} <= {
        k["key"] for k in schema}
    assert next(k for k in schema if k["key"] == "mast.utilization.ca")["unit"] == "ratio"
    sections = {k["section"] for k in schema}
    assert {"Host", "Flash", "Merges and GC", "Time", "Scheme"} <= sections
    assert {k["unit"] for k in schema} >= {"count", "us", "bytes", "ratio"}


def test_the_engine_owns_every_key_the_trace_facts_included(tmp_path):
    trace = tmp_path / "t.csv"
    trace.write_text("W,0,4096\nW,8192,4096\nR,0,4096\n")
    r = ftlsim.simulate(str(trace), ftl="page")
    schema = {k["key"] for k in ftlsim.report_schema().to_dict("records")}
    assert {"config.resolved", "config.trace_format", "config.trace_bytes", "config.trace_sha256"} <= schema
    assert r["config.trace_format"] == "csv" and r["config.trace_bytes"] == trace.stat().st_size
    assert r["config.trace_sha256"] == hashlib.sha256(trace.read_bytes()).hexdigest()
    w = ftlsim.simulate("uniform:writes=100,seed=1", ftl="page", capacity="1MiB")
    assert (w["config.trace_format"], w["config.trace_bytes"], w["config.trace_sha256"]) == ("workload", None, None)


def test_time_by_cause_sums_to_the_total_and_kinds_come_from_the_engine():
    r = ftlsim.simulate("uniform:writes=4000,seed=2", ftl="fast", capacity="2MiB", precondition="full",
                        log_blocks=4)
    causes = registry()["kinds"]["cause"]
    assert "merge" in causes and "host" in causes
    total = sum(r[f"time_us.cause.{c}"] for c in causes)
    assert abs(total - r.time_us) <= 1e-6 * r.time_us
    assert set(r.merges) == set(registry()["kinds"]["merge"])
    assert r["time_us.cause.merge"] > 0


def test_dftl_s_gc_and_map_times_overlap_as_the_schema_says():
    # time_us.gc + time_us.map exceeded time_us.total for DFTL, where the schema said gc overlapped merges only.
    r = ftlsim.simulate("hotcold:writes=30000,seed=2", ftl="dftl", capacity="8MiB", precondition="full")
    assert r["time_us.gc"] + r["time_us.map"] > r.time_us
    schema = ftlsim.report_schema()
    described = dict(zip(schema["key"], schema["description"]))
    assert "overlaps time_us.gc" in described["time_us.map"]
    assert "time_us.map" in described["time_us.gc"]


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


def test_write_amplification_is_none_where_the_host_wrote_nothing_and_any_report_prints(tmp_path):
    reads = tmp_path / "reads.csv"
    reads.write_text("R,0,4096\n")
    r = ftlsim.simulate(str(reads), capacity="1MiB")
    assert r.write_amplification is None and r["write_amplification"] is None  # 0.0 read as writing nothing
    assert "WA -" in repr(r)
    assert ftlsim.simulate("uniform:writes=300,seed=1").write_amplification == 1.0
    assert repr(ftlsim.Report({})).startswith("<Report None")  # a partial report prints, not KeyError


def test_a_report_reads_back_from_the_file_to_json_wrote(tmp_path):
    # to_json(path) wrote a file that from_json(path) could not read: "JSONDecodeError: Expecting value".
    r = ftlsim.simulate("uniform:writes=300,seed=1", capacity="1MiB")
    r.to_json(tmp_path / "r.json")
    for given in (tmp_path / "r.json", str(tmp_path / "r.json"), (tmp_path / "r.json").read_text()):
        assert ftlsim.Report.from_json(given)["flash.page_writes"] == r["flash.page_writes"]
    with pytest.raises(ftlsim.FtlsimError, match="takes a report's JSON text or the path of a JSON report"):
        ftlsim.Report.from_json(str(tmp_path / "missing.json"))
    (tmp_path / "list.json").write_text("[1, 2]")
    with pytest.raises(ftlsim.FtlsimError, match="a report is a JSON object of keys, not a list"):
        ftlsim.Report.from_json(tmp_path / "list.json")
