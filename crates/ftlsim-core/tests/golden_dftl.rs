//! Golden tests for DFTL (Gupta, Kim, Urgaonkar, ASPLOS 2009, §3): hand-worked ledgers on a toy device of
//! 4-page blocks, 512 B pages and 256 B entries (2 entries a translation page), so that every CMT miss,
//! dirty eviction and batch update shows in the counts.

mod common;

use common::{full, page, toy, writes};
use ftlsim_core::request::Op;
use ftlsim_core::sim::{run, run_requests, Precondition, SimConfig};
use serde_json::json;

#[test]
fn a_dirty_eviction_writes_back_its_translation_page_and_cleans_its_neighbour() {
    // CMT of 2 (protected segment 1); translation page t holds logical pages 2t and 2t + 1.
    let cfg = toy("dftl", json!({"cmt_entries": 2, "entry_bytes": 256}), 4, 2);
    let mut reqs = writes(&[0, 1, 2, 0]);
    reqs.push(page(Op::Read, 1));
    reqs.push(page(Op::Read, 1));
    let r = run_requests(&cfg, reqs).unwrap();
    // W0: miss 1, translation page 0 never written: no read. CMT {0*}.
    // W1: miss 2. CMT {1*, 0*} (probationary, newest first).
    // W2: miss 3, full: victim 0 is dirty -> write back page 0 (never written: no read; one map write),
    //     folding in entry 1 too (batch update): both clean. Page 1 never written: no read. CMT {2*, 1}.
    // W0: miss 4, victim 1 is clean: no write. Read page 0 (map read 1). CMT {0*, 2*}.
    // R1: miss 5, victim 2 dirty -> write back page 1 (map write 2); read page 0 (map read 2). CMT {1, 0*}.
    // R1: hit 1 (promoted to the protected segment).
    assert_eq!(r.count("cache.cmt.misses"), 5);
    assert_eq!(r.count("cache.cmt.hits"), 1);
    assert_eq!(r.count("map.page_reads"), 2);
    assert_eq!(r.count("map.page_writes"), 2);
    assert_eq!(
        r.count("flash.page_writes"),
        4 + 2,
        "4 data pages and 2 translation pages"
    );
    assert_eq!(
        r.count("flash.page_reads"),
        2 + 2,
        "2 host reads and 2 translation reads"
    );
    assert_eq!(r.count("flash.erases"), 0);
}

#[test]
fn gc_copies_lazily_into_the_cmt_and_batches_translation_updates() {
    // §3.3 on the toy device (2 logical blocks of 4 pages, 2 entries a translation page: T0 = {0, 1} ...
    // T3 = {6, 7}), a 2-entry CMT, 8 physical blocks (translation block + reserve 2 + 3), GC while 2 or fewer
    // blocks are free. `full` writes 0..7 once (then zeroes the counters), leaving:
    //   B0 data {p0:0 p1:1 p2:2 p3:3}; B1 translation {p4:T0 p5:T1 p6:T2, p7 erased} (frontier);
    //   B2 data {p8:4 p9:5 p10:6 p11:7} (frontier, full); B3..B7 free; CMT probation [7* 6*] (* dirty).
    let cfg = full(toy(
        "dftl",
        json!({"cmt_entries": 2, "entry_bytes": 256}),
        4,
        2,
    ));
    let mut reqs = writes(&[7, 2, 3]);
    reqs.push(page(Op::Read, 1));
    reqs.push(page(Op::Read, 1));
    reqs.extend(writes(&[0, 0, 0, 0, 6, 0, 0, 0]));
    let r = run_requests(&cfg, reqs).unwrap();
    //  1 W7  hit (7 protected). B2 closes (4 valid), W7 -> p12 in B3; p11 invalid.
    //  2 W2  miss 1: victim 6* -> write back T3 (never written: no read; map write 1 at p7, folding 6 and 7:
    //        both clean); read T1 (map read 1). W2 -> p13.
    //  3 W3  miss 2: victim 2* -> write back T1 (map read 2, map write 2 at p16: B1 closes, B4 opens); read T1
    //        (map read 3). W3 -> p14. B0 keeps {0, 1}.
    //  4 R1  miss 3: victim 3* -> write back T1 (map read 4, write 3 at p17); read T0 (map read 5); read p1.
    //  5 R1  hit (1 protected, 7 demoted). Read p1.
    //  6 W0  miss 4: victim 7 is clean; read T0 (map read 6). W0 -> p15. B0 keeps only {1}.
    //  7 W0  hit. B3 closes, W0 -> p20 in B5: 2 blocks free.
    //  8 W0  GC 1: victim B0 (1 valid; B1 has 3): copy p1 -> p21 (lpn 1 is cached: the CMT entry is
    //        updated and dirty, no map I/O: lazy copying); erase B0. Hit, W0 -> p22.
    //  9 W0  hit, W0 -> p23 (B5 full).
    // 10 W6  miss 5: victim 1* -> write back T0 (map read 7, write 4 at p18), folding 0 and 1; read T3 (map
    //        read 8). B5 closes (2 valid), W6 -> p24 in B6 (2 blocks free); B2 keeps {4, 5}.
    // 11 W0  GC 2: B2 and B5 hold 2 valid pages, B1 2 (data wins the tie; B2 is the newest in its bucket):
    //        copy p8 -> p25 and p9 -> p26; 4 and 5 are not cached and share T2: one batch update (map read 9,
    //        write 5 at p19); erase B2. Hit, W0 -> p27.
    // 12 W0  hit; B6 closes, W0 -> p28 in B7 (2 blocks free).
    // 13 W0  GC 3: B5 {1} (1 valid, B1 {T3} too: data first): copy p21 -> p29, 1 is not cached: write back T0
    //        (map read 10, write 6 at p0 in the recycled B0), folding the dirty cached 0 as well; erase B5.
    //        Still 2 free: GC 4: translation block B1 (1 valid, T3). The CMT holds 6 dirty (since W6), so T3
    //        is written back rather than copied: read p7 (map read 11), write 7 at p1 folding 6 (clean now),
    //        GTD[T3] := p1; erase B1 (map erase 1). Hit, W0 -> p30.
    assert_eq!(r.count("cache.cmt.misses"), 5);
    assert_eq!(r.count("cache.cmt.hits"), 8);
    assert_eq!(r.count("map.page_reads"), 11);
    assert_eq!(r.count("map.page_writes"), 7);
    assert_eq!(r.count("map.erases"), 1);
    assert_eq!((r.count("gc.runs"), r.count("flash.erases")), (4, 4));
    assert_eq!(
        r.count("gc.copied_pages"),
        1 + 2 + 1,
        "data copies; T3 was written back, not copied"
    );
    assert_eq!(
        r.count("flash.page_writes"),
        11 + 4 + 7,
        "11 host writes, 4 data copies, 7 translation write backs"
    );
    assert_eq!(
        r.count("flash.page_reads"),
        2 + 4 + 11,
        "2 host reads, 4 copy reads, 11 translation reads"
    );
}

#[test]
fn gc_never_runs_out_of_the_blocks_its_own_translation_writes_need() {
    // Uniform writes on a full 64 MiB device, a 1 k CMT: a data block's GC copies ~27 of its 32 pages and
    // rewrites as many translation pages, more than it frees. Choosing victims without counting those writes
    // ran out of free blocks here ("no free block for a write frontier"); now every run can finish.
    let cfg = SimConfig {
        precondition: Precondition::Full,
        ..toy("dftl", json!({"cmt_entries": 1024}), 32, 4096)
    };
    let r = run(&cfg, "uniform:writes=200000", &mut |_| true).unwrap();
    assert_eq!(r.count("host.write_pages"), 200_000);
    assert_eq!(r.count("gc.runs"), r.count("flash.erases"));
}

#[test]
fn mount_scans_spares_reads_each_translation_page_once_and_recovers_dirty_entries() {
    // The first ledger's device after W0 W1 W2 W0 R1 R1: B0 {p0:0 p1:1 p2:2 p3:0} full, B1 {p4:T0 p5:T1}
    // (T0 names 0 -> p0 and 1 -> p1, T1 names 2 -> p2), B2..B7 erased. The scan reads 4 spares of B0, 2 + 1
    // (the first erased page) of B1 and 1 of each of the 6 erased blocks: 13; then T0 and T1 once each: 2
    // page reads. Logical page 0's newest copy p3 is not what T0 names: it goes back into the CMT, dirty.
    let mut reqs = writes(&[0, 1, 2, 0]);
    reqs.push(page(Op::Read, 1));
    reqs.push(page(Op::Read, 1));
    let cfg = SimConfig {
        mount_at_end: true,
        ..toy("dftl", json!({"cmt_entries": 2, "entry_bytes": 256}), 4, 2)
    };
    let r = run_requests(&cfg, reqs).unwrap();
    assert_eq!(
        (r.count("mount.spare_reads"), r.count("mount.page_reads")),
        (13, 2)
    );
    assert_eq!(r.num("mount.time_us.max"), 15.0 * 13.0 + 15.0 * 2.0);
}

#[test]
fn power_cuts_inside_translation_write_backs_and_gc_are_survived() {
    // A 2-entry CMT over 4-entry translation pages: most writes evict a dirty entry, so a good share of the
    // cut points land on translation-page I/O (map class), and GC runs often on the small device.
    let reqs: Vec<_> = (0..3000u32).map(|i| (i * 7 + i / 5) % 64).collect();
    for params in [
        json!({"cmt_entries": 2, "entry_bytes": 128}),
        json!({"cmt_entries": 3, "entry_bytes": 64, "victim": "cost-benefit"}),
    ] {
        let cfg = SimConfig {
            power_cuts: 300,
            power_cut_seed: 11,
            ..toy("dftl", params.clone(), 4, 16)
        };
        let r = run_requests(&cfg, writes(&reqs)).unwrap();
        assert!(r.count("power.cuts") >= 240, "{params}");
        assert_eq!(r.count("power.cuts"), r.count("power.cuts_survived"));
        assert!(
            r.count("power.cuts_in_map_io") > 100,
            "{params}: {}",
            r.count("power.cuts_in_map_io")
        );
        assert!(r.count("power.cuts_in_merge_or_gc") > 100, "{params}");
    }
}

#[test]
fn a_trimmed_entry_on_flash_does_not_hide_a_newer_copy_at_the_same_address() {
    // The bug the random-workload crash test found (cmt_entries=2, entry_bytes=128: a page written after a trim
    // read as never written after a cut), worked by hand on the first ledger's device (8 blocks, 2 entries a
    // translation page: T0 = {0, 1}, CMT of 2).
    //   12 W0    B0..B2 (p0..p11), logical page 0 ends at p11.
    //   T0       hit: the cached entry is p11, trimmed, dirty (0 moves to the protected segment).
    //   W1       -> p12 (B3). R5: miss, evicts 1 (dirty): write back T0 at p16 (B4 opens as the translation
    //            frontier), folding 1 -> p12 and 0 -> p11 trimmed. T0 on flash: 0 -> p11, trimmed.
    //   19 W0    hits: 0 stays dirty in the CMT. p13..p15, p20; each time 2 blocks are free GC erases the
    //            block last emptied of valid pages: B2 (its p11 just overwritten), then B5, B6, B7; with no fresh
    //            block left the frontier takes B2 again: the last four W0 land at p8..p11.
    // Logical page 0 is at p11 again, newer than T0, which still names p11, trimmed (for the erased copy).
    // 200 reads of 0 follow, and seed 2 puts the one cut before flash operation 106 (request #103, a read).
    // The mount must recover 0 at p11, untrimmed: the copy is newer than its translation page. The mount that
    // trusted any entry naming the newest copy read 0 as trimmed: "logical page 0 should read 32 but read
    // nothing (never written)".
    let mut reqs = writes(&[0; 12]);
    reqs.push(page(Op::Trim, 0));
    reqs.extend(writes(&[1]));
    reqs.push(page(Op::Read, 5));
    reqs.extend(writes(&[0; 19]));
    reqs.extend((0..200).map(|_| page(Op::Read, 0)));
    let cfg = SimConfig {
        power_cuts: 1,
        power_cut_seed: 2,
        ..toy("dftl", json!({"cmt_entries": 2, "entry_bytes": 256}), 4, 2)
    };
    let r = run_requests(&cfg, reqs).unwrap();
    assert_eq!(
        (r.count("power.cuts"), r.count("power.cuts_survived")),
        (1, 1)
    );
    // The ledger: one translation write (T0), 4 GC runs that copy nothing. After the mount 0 is dirty in the
    // CMT again, and the check's reads of every logical page evict only clean entries: no write back.
    assert_eq!(
        (
            r.count("map.page_writes"),
            r.count("gc.runs"),
            r.count("gc.copied_pages"),
            r.count("flash.erases")
        ),
        (1, 4, 0, 4)
    );
}

/// Every combination of the four options (`cmt_policy`, `writeback`, `gc`, `lazy_copy_dirty`) over `base`.
fn every_option_combination(base: serde_json::Value) -> Vec<serde_json::Value> {
    let mut out = Vec::new();
    for policy in ["slru", "lru", "age"] {
        for writeback in ["page", "entry"] {
            for gc in ["per-write", "burst"] {
                for lazy in [true, false] {
                    let mut p = base.clone();
                    p["cmt_policy"] = policy.into();
                    p["writeback"] = writeback.into();
                    p["gc"] = gc.into();
                    if gc == "burst" {
                        p["gc_reserve_blocks"] = 3.into(); // the least burst GC takes
                    }
                    p["lazy_copy_dirty"] = lazy.into();
                    out.push(p);
                }
            }
        }
    }
    out
}

/// A random workload over `pages` logical pages (a quarter reads, an eighth trims, the rest writes), from a
/// fixed seed: xorshift, so that the test needs no random crate.
fn random_workload(
    requests: usize,
    pages: u32,
    mut seed: u64,
) -> Vec<ftlsim_core::request::Request> {
    (0..requests)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            page(common::random_op(seed as u8), (seed >> 8) as u32 % pages)
        })
        .collect()
}

#[test]
fn every_option_combination_reads_back_every_write_and_splits_its_translation_traffic() {
    // The run's oracle checks every read against the last write. On a full toy device with a 3-entry CMT over
    // 4-entry translation pages, misses, dirty evictions, GC updates and translation-block GC all happen.
    for params in every_option_combination(json!({"cmt_entries": 3, "entry_bytes": 128})) {
        let cfg = full(toy("dftl", params.clone(), 4, 16));
        let r = run_requests(&cfg, random_workload(4000, 64, 7))
            .unwrap_or_else(|e| panic!("{params}: {e}"));
        let sum = |keys: &[&str], prefix: &str| -> u64 {
            keys.iter().map(|k| r.count(&format!("{prefix}.{k}"))).sum()
        };
        assert_eq!(
            sum(
                &["miss", "eviction", "gc_update", "translation_gc", "mount"],
                "dftl.translation_reads"
            ),
            r.count("map.page_reads"),
            "{params}"
        );
        assert_eq!(
            sum(
                &["eviction", "gc_update", "translation_gc"],
                "dftl.translation_writes"
            ),
            r.count("map.page_writes"),
            "{params}"
        );
        assert_eq!(
            r.count("dftl.copies.data") + r.count("dftl.copies.translation"),
            r.count("gc.copied_pages"),
            "{params}"
        );
        for cause in ["eviction", "gc_update", "translation_gc"] {
            assert!(
                r.count(&format!("dftl.translation_writes.{cause}")) > 0,
                "{params}: no {cause} write"
            );
        }
        assert!(r.count("dftl.copies.data") > 0, "{params}");
        if params["writeback"] == "entry" {
            assert!(r.count("dftl.copies.translation") > 0, "{params}");
        }
        assert_eq!(
            r.count("dftl.moves_left_clean") > 0,
            params["lazy_copy_dirty"] == false,
            "{params}"
        );
    }
}

#[test]
fn every_option_combination_mounts_and_survives_power_cuts() {
    for params in every_option_combination(json!({"cmt_entries": 3, "entry_bytes": 128})) {
        let cfg = SimConfig {
            power_cuts: 60,
            power_cut_seed: 5,
            ..toy("dftl", params.clone(), 4, 16)
        };
        let r = run_requests(&cfg, random_workload(3000, 64, 11))
            .unwrap_or_else(|e| panic!("{params}: {e}"));
        assert!(r.count("power.cuts") >= 50, "{params}");
        assert_eq!(
            r.count("power.cuts"),
            r.count("power.cuts_survived"),
            "{params}"
        );
        assert!(r.count("power.cuts_in_map_io") > 0, "{params}");
    }
}

#[test]
fn writeback_entry_rewrites_a_translation_page_for_each_dirty_eviction() {
    // The first ledger's device (2 entries a translation page: T0 = {0, 1}, T1 = {2, 3}), a 2-entry LRU CMT.
    //   W0 W1      misses 1, 2; T0 never written: no read. CMT [1*, 0*] (newest first, * dirty).
    //   W2         miss 3, victim 0 dirty -> write back T0 (never written: no read; map write 1) holding 0 and 1.
    //              page: both become clean, CMT [2*, 1]. entry: only 0 does, CMT [2*, 1*].
    //   W3         miss 4. page: victim 1 is clean, no write. entry: victim 1 dirty -> write back T0 (map read 1
    //              of the copy written at W2, map write 2). CMT [3*, 2*].
    //   R0         miss 5, victim 2 dirty -> write back T1 (never written: map write 2 / 3; page folds 3 in too),
    //              then read T0 (map read 1 / 2), which names 0's page: the read returns W0's data.
    let mut reqs = writes(&[0, 1, 2, 3]);
    reqs.push(page(Op::Read, 0));
    for (writeback, reads, writes, eviction_reads) in [("page", 1, 2, 0), ("entry", 2, 3, 1)] {
        let params = json!({"cmt_entries": 2, "entry_bytes": 256, "cmt_policy": "lru", "writeback": writeback});
        let r = run_requests(&toy("dftl", params, 4, 2), reqs.clone()).unwrap();
        assert_eq!(
            (r.count("cache.cmt.misses"), r.count("cache.cmt.hits")),
            (5, 0),
            "{writeback}"
        );
        assert_eq!(
            (r.count("map.page_reads"), r.count("map.page_writes")),
            (reads, writes),
            "{writeback}"
        );
        assert_eq!(
            (
                r.count("dftl.translation_reads.miss"),
                r.count("dftl.translation_reads.eviction"),
                r.count("dftl.translation_writes.eviction"),
            ),
            (1, eviction_reads, writes),
            "{writeback}"
        );
    }
}

#[test]
fn cmt_policies_keep_different_entries() {
    // Reads on a fresh device (translation pages never written: no map I/O), a 5-entry CMT: `slru` protects
    // 2 entries; `age` keeps 4 hot and 1 cold (ages: a new entry one above the top age, a hit adds one).
    // 1) R0 R0 R1 R2 R3 R4 R5 R0
    //    lru:  the hit makes 0 the newest, but R1..R4 come after it: R5 evicts 0, R0 misses. 7 misses, 1 hit.
    //    slru: the hit protects 0; R5 evicts the probationary segment's oldest, 1; R0 hits. 6 misses, 2 hits.
    //    age:  0 ages 1, 2 (hit); 1..3 age 3..5 fill the hot segment; R4 (age 6) sends the lowest hot, 0, cold;
    //          R5 evicts the cold 0 (and 1 goes cold); R0 misses. 7 misses, 1 hit.
    // 2) R0 R1 R2 R3 R4 R0 R5 R6 R0
    //    lru:  R0 hits and is the newest; R5, R6 evict 1, 2; R0 hits. 7 misses, 2 hits.
    //    slru: the same evictions (the protected 0 stays). 7 misses, 2 hits.
    //    age:  0..3 age 1..4; R4 (age 5) sends 0 cold; R0 hits it in the cold segment: age 2 >= 1's (the lowest
    //          hot, 2): they swap. R5 evicts the cold 1 and sends 0 (age 2, the lowest hot) cold again; R6
    //          evicts 0; R0 misses. 8 misses, 1 hit.
    let sequences: [&[u32]; 2] = [&[0, 0, 1, 2, 3, 4, 5, 0], &[0, 1, 2, 3, 4, 0, 5, 6, 0]];
    for (policy, expected) in [
        ("lru", [(7, 1), (7, 2)]),
        ("slru", [(6, 2), (7, 2)]),
        ("age", [(7, 1), (8, 1)]),
    ] {
        for (lpns, (misses, hits)) in sequences.iter().zip(expected) {
            let reqs = lpns.iter().map(|&l| page(Op::Read, l)).collect();
            let params = json!({"cmt_entries": 5, "cmt_policy": policy});
            let r = run_requests(&toy("dftl", params, 4, 2), reqs).unwrap();
            assert_eq!(
                (r.count("cache.cmt.misses"), r.count("cache.cmt.hits")),
                (misses, hits),
                "{policy} {lpns:?}"
            );
            assert_eq!(r.count("map.page_reads") + r.count("map.page_writes"), 0);
        }
    }
}

#[test]
fn burst_gc_waits_for_the_data_frontier_to_fill() {
    // 26 writes of logical page 0 on the toy device (9 physical blocks, GC while 3 or fewer are free: the least
    // reserve burst GC takes), a CMT of all 8 logical pages (one miss, no translation I/O). Writes 1-4 fill
    // B0, and each 4 more open a block: write 21 opens the sixth, leaving 3 free.
    //   per-write: before write 22, 3 free: GC erases a block of no valid page (4 free); write 25 opens a
    //              block (3 free); before write 26 GC again. 2 runs.
    //   burst:     writes 22-24 fill the open block without GC; write 25 finds it full: one run, then it opens
    //              a block; write 26 has room. 1 run.
    for (gc, runs) in [("per-write", 2), ("burst", 1)] {
        let params =
            json!({"cmt_entries": 8, "entry_bytes": 256, "gc": gc, "gc_reserve_blocks": 3});
        let r = run_requests(&toy("dftl", params, 4, 2), writes(&[0; 26])).unwrap();
        assert_eq!(
            (
                r.count("gc.runs"),
                r.count("flash.erases"),
                r.count("gc.copied_pages")
            ),
            (runs, runs, 0),
            "{gc}"
        );
        assert_eq!(
            (r.count("cache.cmt.misses"), r.count("cache.cmt.hits")),
            (1, 25)
        );
        assert_eq!(r.count("map.page_reads") + r.count("map.page_writes"), 0);
    }
}

#[test]
fn a_moved_clean_entry_left_clean_saves_its_write_back() {
    // The GC ledger above with `lazy_copy_dirty = false`. At step 8 GC moves logical page 1, cached and clean
    // (loaded by the read miss of step 4): it stays clean (one move left clean). At step 10 the eviction of 1
    // then writes nothing: map read 7 and map write 4 of that ledger do not happen, and 0 stays dirty. Step 11
    // writes T2 at p18 (not p19); at step 13 GC 3's write back of T0 (folding the dirty 0) takes p19, the last
    // page of B4, instead of opening the recycled B0: 3 blocks stay free, so GC 4 (T3's write back: a map read,
    // a map write and a map erase) does not run. 9 map reads (5 misses, 2 evictions, 2 GC updates) and 5 map
    // writes (3 evictions, 2 GC updates); the reads of logical page 1 return its data all along.
    let cfg = full(toy(
        "dftl",
        json!({"cmt_entries": 2, "entry_bytes": 256, "lazy_copy_dirty": false}),
        4,
        2,
    ));
    let mut reqs = writes(&[7, 2, 3]);
    reqs.push(page(Op::Read, 1));
    reqs.push(page(Op::Read, 1));
    reqs.extend(writes(&[0, 0, 0, 0, 6, 0, 0, 0]));
    let r = run_requests(&cfg, reqs).unwrap();
    assert_eq!(r.count("dftl.moves_left_clean"), 1);
    assert_eq!(
        (r.count("cache.cmt.misses"), r.count("cache.cmt.hits")),
        (5, 8)
    );
    let reads = ["miss", "eviction", "gc_update", "translation_gc"]
        .map(|c| r.count(&format!("dftl.translation_reads.{c}")));
    let writes = ["eviction", "gc_update", "translation_gc"]
        .map(|c| r.count(&format!("dftl.translation_writes.{c}")));
    assert_eq!((reads, writes), ([5, 2, 2, 0], [3, 2, 0]));
    assert_eq!(
        (
            r.count("map.page_reads"),
            r.count("map.page_writes"),
            r.count("map.erases")
        ),
        (9, 5, 0)
    );
    assert_eq!(
        (
            r.count("gc.runs"),
            r.count("flash.erases"),
            r.count("gc.copied_pages")
        ),
        (3, 3, 4)
    );
}

#[test]
fn the_gc_ledger_splits_translation_traffic_by_cause() {
    // The GC ledger above (default options). Its 11 map reads: misses at steps 2, 3, 4, 6 and 10 (5),
    // evictions' write backs at steps 3, 4 and 10 (3; T3's at step 2 was never written), GC updates of T2 at
    // step 11 and T0 at step 13 (2), and T3's write back by the GC of its translation block (1). Its 7 map
    // writes: evictions at steps 2, 3, 4 and 10, the two GC updates, and T3's write back. GC copied 4 data pages
    // and no translation page (T3 was written back instead).
    let cfg = full(toy(
        "dftl",
        json!({"cmt_entries": 2, "entry_bytes": 256}),
        4,
        2,
    ));
    let mut reqs = writes(&[7, 2, 3]);
    reqs.push(page(Op::Read, 1));
    reqs.push(page(Op::Read, 1));
    reqs.extend(writes(&[0, 0, 0, 0, 6, 0, 0, 0]));
    let r = run_requests(&cfg, reqs).unwrap();
    let reads = ["miss", "eviction", "gc_update", "translation_gc", "mount"]
        .map(|c| r.count(&format!("dftl.translation_reads.{c}")));
    let writes = ["eviction", "gc_update", "translation_gc"]
        .map(|c| r.count(&format!("dftl.translation_writes.{c}")));
    assert_eq!(reads, [5, 3, 2, 1, 0]);
    assert_eq!(writes, [4, 2, 1]);
    assert_eq!(
        (
            r.count("dftl.copies.data"),
            r.count("dftl.copies.translation")
        ),
        (4, 0)
    );
}
