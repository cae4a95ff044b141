"""The Python API end to end: simulate, sweep, ram and the registries."""

import json

import pytest

import ftlsim

REQUIRED_KEYS = [
    "host.read_requests", "host.write_requests", "host.read_pages", "host.write_pages", "flash.page_reads",
    "flash.spare_reads", "flash.page_writes", "flash.spare_writes", "flash.erases", "merges.switch",
    "merges.partial", "merges.full", "merges.dead", "gc.runs", "gc.copied_pages", "write_amplification",
    "erase_count.max", "erase_count.mean", "time_us.total", "latency_us.read.mean", "latency_us.write.mean",
    "latency_us.write.p99", "ram.total_bytes", "sim.requests_per_s", "config.scheme", "config.params",
    "config.preset", "config.page_bytes", "config.pages_per_block", "config.seed", "version",
]


def test_simulate_reports_every_contract_key():
    r = ftlsim.simulate("uniform:writes=5000,seed=3,read_share=0.2", ftl="page", capacity="4MiB")
    d = r.to_dict()
    missing = [k for k in REQUIRED_KEYS if k not in d]
    assert not missing
    assert d["host.read_requests"] + d["host.write_requests"] == 5000
    assert d["config.seed"] == 3 and d["config.scheme"] == "page" and d["config.preset"] == "lee2007"
    assert r.erases == d["flash.erases"]
    assert r.page_writes >= d["host.write_pages"]
    json.loads(r.to_json())


def test_time_is_counts_times_latencies():
    r = ftlsim.simulate("uniform:writes=3000,seed=1", ftl="block", capacity="1MiB", preset="samsung-k9f2808")
    expected = (r["flash.page_reads"] * 36 + r["flash.spare_reads"] * 10 + r["flash.page_writes"] * 200
                + r["flash.spare_writes"] * 200 + r["flash.erases"] * 2000)
    assert r.time_us == pytest.approx(expected)


def test_precondition_full_resets_counters_after_filling():
    r = ftlsim.simulate("uniform:writes=100,seed=1", ftl="block", capacity="1MiB", precondition="full")
    # Every write now overwrites a full block: one erase and 31 copies each (32 pages a block).
    assert r["flash.erases"] == 100
    assert r["flash.page_writes"] == 100 * 32
    assert r["precondition.erases"] == 0


def test_device_overrides_and_scheme_params_are_routed():
    r = ftlsim.simulate("uniform:writes=2000,seed=1", ftl="page", capacity="256KiB", pages_per_block=4,
                        erase_us=1.0, over_provisioning=0.25)
    assert r["config.pages_per_block"] == 4 and r["config.erase_us"] == 1.0
    assert r["config.physical_blocks"] == 128 + 32


def test_bad_input_gets_a_clear_error():
    with pytest.raises(ftlsim.FtlsimError, match="unknown scheme `fsat`.*page"):
        ftlsim.simulate("uniform:writes=10", ftl="fsat")
    with pytest.raises(ftlsim.FtlsimError, match="over_provisionning.*over_provisioning"):
        ftlsim.simulate("uniform:writes=10", ftl="page", over_provisionning=0.1)
    with pytest.raises(ftlsim.FtlsimError, match="cannot read trace .*no-such-file"):
        ftlsim.simulate("no-such-file.csv")
    with pytest.raises(ftlsim.FtlsimError, match="unknown preset"):
        ftlsim.simulate("uniform:writes=10", preset="slc-9000")


def test_beyond_capacity_says_how_to_fix(tmp_path):
    trace = tmp_path / "t.csv"
    trace.write_text("W,0,4096\nW,1048576,4096\n")
    with pytest.raises(ftlsim.FtlsimError, match=r"capacity='1MiB' .*1,052,672.*wrap=True"):
        ftlsim.simulate(str(trace), capacity="1MiB")
    r = ftlsim.simulate(str(trace), capacity="1MiB", wrap=True)
    assert r["host.write_pages"] == 16
    # Without a capacity the device is sized to the trace's highest address, rounded up to a block.
    r = ftlsim.simulate(str(trace))
    assert r["config.capacity_bytes"] == 1048576 + 16384


def test_registries_list_what_exists():
    assert {"page", "block"} <= {s["name"] for s in ftlsim.schemes()}
    assert {"lee2007", "samsung-k9f2808", "toshiba-tc58dvm72", "mlc-k9gag08"} <= {p["name"] for p in ftlsim.presets()}
    assert {"uniform", "sequential", "hotcold"} <= {w["name"] for w in ftlsim.workloads()}
    assert "csv" in {f["name"] for f in ftlsim.formats()}


def test_sweep_gives_one_row_per_run():
    df = ftlsim.sweep("uniform:writes=2000,seed=1", "page,block", {"erase_us": [1000, 2000]}, capacity="1MiB",
                      precondition="full")
    assert len(df) == 4
    assert set(df["ftl"]) == {"page", "block"}
    page = df[df["ftl"] == "page"].set_index("erase_us")
    assert page.loc[1000, "flash.erases"] == page.loc[2000, "flash.erases"]
    assert page.loc[2000, "time_us.total"] > page.loc[1000, "time_us.total"]


def test_ram_of_the_page_baseline_on_the_tinyftl_device():
    # 16 GB MLC, 64,000 host blocks of 128 pages: 8,192,000 map entries of 3 bytes (23-bit physical page
    # addresses) = 24,576,000 bytes, the TinyFTL paper's "at least 24 MB".
    ram = ftlsim.ram(ftl="page", preset="mlc-k9gag08", capacity=64000 * 128 * 2048, over_provisioning=0.024)
    assert ram["page_map"] == 24_576_000
    assert ram["total_bytes"] == sum(v for k, v in ram.items() if k != "total_bytes")


def test_ram_of_nftl_matches_the_paper_for_a_34_mb_flash():
    # 001 §3.2: 34 MB of 512 B pages. 8 KB blocks: 4,352 virtual blocks x 4 B = 17,408; rep-block table the
    # same plus a bit a page (69,632 pages / 8 = 8,704): 26,112. 16 KB blocks: 8,704 and 8,704 + 8,704.
    for ppb, block_map, lookup in ((16, 17_408, 26_112), (32, 8_704, 17_408)):
        plain = ftlsim.ram(ftl="nftl", capacity="34MiB", page_bytes=512, pages_per_block=ppb)
        assert plain["block_map"] == block_map
        table = ftlsim.ram(ftl="nftl", capacity="34MiB", page_bytes=512, pages_per_block=ppb, lookup_table=True)
        assert table["rep_block_table"] + table["page_status_bitmap"] == lookup


def test_nftl_techniques_only_remove_spare_reads():
    runs = {name: ftlsim.simulate("hotcold:writes=3000,seed=4", ftl="nftl", capacity="512KiB", pages_per_block=16,
                                  preset="samsung-k9f2808", **params)
            for name, params in {"plain": {}, "table": {"lookup_table": True}, "cache": {"page_cache": 64}}.items()}
    for key in ("flash.page_reads", "flash.page_writes", "flash.erases"):
        assert runs["plain"][key] == runs["table"][key] == runs["cache"][key]
    assert runs["table"].spare_reads < runs["plain"].spare_reads
    assert runs["cache"].spare_reads <= runs["plain"].spare_reads


def test_ram_tables_of_the_tinyftl_paper():
    # Table I: TinyFTL 12,195 bytes; Table IV: Logblock 281,984, Superblock 198,176; Logblock-zoned's zone
    # map 12,288 (the log blocks' page maps, which Table IV leaves out, are reported beside it).
    tiny = ftlsim.ram(ftl="tiny", preset="tinyftl-16g")
    assert tiny["total_bytes"] == 12_195
    assert sorted(v for k, v in tiny.items() if k != "total_bytes") == sorted([768, 6_171, 3_970, 1_280, 6])
    assert ftlsim.ram(ftl="bast", preset="tinyftl-16g", log_blocks=393)["total_bytes"] == 281_984
    assert ftlsim.ram(ftl="superblock", preset="tinyftl-16g")["total_bytes"] == 198_176
    assert ftlsim.ram(ftl="logblock-zoned", preset="tinyftl-16g", log_blocks=393)["zone_block_map"] == 12_288


def test_a_profile_is_echoed_and_repeated_as_it_ran():
    # The PSU FlashSim profile sets gc_frontier and gc_reserve_blocks: the report's parameters say so, and a run
    # repeated from the report's resolved configuration gives the same counts.
    r = ftlsim.simulate("uniform:writes=20000,seed=2", ftl="page", capacity="4MiB", precondition="full",
                        profile="psu-flashsim")
    params = json.loads(r["config.params"])
    assert (params["profile"], params["gc_frontier"], params["gc_reserve_blocks"]) == ("psu-flashsim", True, 3)
    assert (r["page.profile"], r["page.profile.gc_frontier"]) == ("psu-flashsim", "true")
    again = ftlsim.simulate(**ftlsim.config.run_kwargs(r))
    assert (again.erases, again["gc.copied_pages"]) == (r.erases, r["gc.copied_pages"])
    plain = ftlsim.simulate("uniform:writes=20000,seed=2", ftl="page", capacity="4MiB", precondition="full")
    assert plain["gc.copied_pages"] != r["gc.copied_pages"]
    # profile="none", the default `ftlsim list` shows (a grid or a TOML file has no null), is no profile.
    none = ftlsim.simulate("uniform:writes=20000,seed=2", ftl="page", capacity="4MiB", precondition="full",
                           profile="none")
    assert none["config.resolved"] == plain["config.resolved"] and none.erases == plain.erases


def test_numpy_values_and_any_spelling_of_a_scheme_run_as_python_values_and_registered_names():
    np = pytest.importorskip("numpy")
    w = "uniform:writes=3000,seed=1"
    plain = ftlsim.simulate(w, ftl="fast", capacity="2MiB", log_blocks=8, wrap=True)
    numpy = ftlsim.simulate(w, ftl="fast", capacity="2MiB", log_blocks=np.int64(8), wrap=np.bool_(True))
    assert numpy.erases == plain.erases
    # A grid of np.arange, one numpy value, and FAST for fast: every point runs, once.
    df = ftlsim.sweep(w, ["FAST", "fast"], {"log_blocks": np.arange(4, 9, 4)}, capacity="2MiB", backend="threads")
    assert list(df["status"]) == ["done"] * 2 and list(df["ftl"]) == ["fast"] * 2
    assert list(df["flash.erases"]) == [ftlsim.simulate(w, ftl="fast", capacity="2MiB", log_blocks=n).erases
                                        for n in (4, 8)]
    one = ftlsim.sweep(w, ["fast"], {"log_blocks": np.int64(8)}, capacity="2MiB", backend="threads")
    assert list(one["flash.erases"]) == [plain.erases]
    assert ftlsim.ram(ftl="FAST")["total_bytes"] == ftlsim.ram(ftl="fast")["total_bytes"]
    with pytest.raises(ftlsim.FtlsimError) as e:
        ftlsim.ram(ftl="fsat")
    assert e.value.suggestion == "fast"
    for traces, schemes in ((w, []), ([], ["page"])):
        with pytest.raises(ftlsim.FtlsimError, match="a sweep needs at least one"):
            ftlsim.sweep(traces, schemes)


def test_a_grid_given_as_text_runs_its_numbers_as_numbers():
    df = ftlsim.sweep("uniform:writes=3000,seed=1", ["fast"], {"log_blocks": "4,8", "lazy_merge": "true"},
                      capacity="2MiB", backend="threads")
    assert list(df["status"]) == ["done", "done"] and list(df["log_blocks"]) == [4, 8]
