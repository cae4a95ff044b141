//! Golden tests for `nftl` (Choudhuri & Givargis, CODES+ISSS 2007, §3) and `replacement` (Shim et al. §2.2),
//! with every count worked out by hand from the papers' examples.

mod common;

use common::{full, page, toy, writes};
use ftlsim_core::config::DeviceOverrides;
use ftlsim_core::report::Report;
use ftlsim_core::request::{Op, Request};
use ftlsim_core::sim::{ram, run_requests, SimConfig};
use proptest::prelude::*;
use serde_json::{json, Value};

/// (page reads, spare reads, page writes, spare writes, erases)
fn ops(r: &Report) -> (u64, u64, u64, u64, u64) {
    (
        r.count("flash.page_reads"),
        r.count("flash.spare_reads"),
        r.count("flash.page_writes"),
        r.count("flash.spare_writes"),
        r.count("flash.erases"),
    )
}

/// NFTL paper Fig. 2: 8 blocks of 4 pages; sector 9 = virtual block 2 ({010}), offset 1; sector 11 = offset 3.
/// The figure's request list did not survive the text; its prose fixes t1 (Wr A 9), t2 (an update of 9 that
/// opens replacement block b1), t3 (a first write of offset {11}), t4 and t5 (updates) and t6 (Rd 9). We take
/// t4 = Wr 11, t5 = Wr 9.
fn fig2() -> Vec<Request> {
    let mut r = writes(&[9, 9, 11, 11, 9]);
    r.push(page(Op::Read, 9));
    r
}

fn fig2_device(params: Value) -> SimConfig {
    toy("nftl", params, 4, 8)
}

#[test]
fn fig2_plain_nftl() {
    // t1 Wr 9: virtual block 2 unmapped -> b0 (first free); program b0 p1.                 pw 1
    // t2 Wr 9: validity: spare read b0 p1 (valid); header: spare read b0 p0 (no replacement); b1 becomes
    //          the replacement block: spare program of b0 p0's header; program b1 p0.      sr 2, sw 1, pw 1
    // t3 Wr 11: validity: spare read b0 p3 (free); program b0 p3.                          sr 1, pw 1
    // t4 Wr 11: validity b0 p3 (valid), header b0 p0 (-> b1); program b1 p1.               sr 2, pw 1
    // t5 Wr 9:  validity b0 p1, header b0 p0; program b1 p2.                               sr 2, pw 1
    // t6 Rd 9:  validity b0 p1, header b0 p0, search from the free page pointer (3): b1 p2 holds 9; read it.
    //                                                                                      sr 3, pr 1
    // Total: pr 1, sr 10, pw 5, sw 1, erases 0.
    let r = run_requests(&fig2_device(json!({})), fig2()).unwrap();
    assert_eq!(ops(&r), (1, 10, 5, 1, 0));
    assert_eq!(r.count("nftl.spare_reads_avoided"), 0);
}

#[test]
fn fig2_with_lookup_table() {
    // The bitmap answers the validity checks (t2..t6: 5) and the rep-block table the headers (t2, t4, t5,
    // t6: 4); the header is still programmed on flash (the tables are copies of the spare area). t6's
    // backwards search stays: spare read b1 p2. Total: pr 1, sr 1, pw 5, sw 1, erases 0; 9 reads avoided.
    let r = run_requests(&fig2_device(json!({"lookup_table": true})), fig2()).unwrap();
    assert_eq!(ops(&r), (1, 1, 5, 1, 0));
    assert_eq!(r.count("nftl.spare_reads_avoided"), 9);
}

/// Fig. 2 continued until the replacement block b1 is full and folds.
fn fig2_to_fold() -> Vec<Request> {
    let mut r = fig2();
    r.push(page(Op::Read, 11));
    r.push(page(Op::Read, 10));
    r.extend(writes(&[11, 9]));
    r.push(page(Op::Read, 9));
    r
}

#[test]
fn fig2_continued_to_a_fold() {
    // After t6: pr 1, sr 10, pw 5, sw 1.
    // Rd 11: validity b0 p3, header, search b1 p2 (9), b1 p1 (11): read b1 p1.          sr 4, pr 1
    // Rd 10: validity b0 p2: never written -> nothing.                                  sr 1
    // Wr 11: validity, header; program b1 p3 (b1 now full).                             sr 2, pw 1
    // Wr 9:  validity, header; b1 full -> fold into b2 (next free) with the new data:
    //        one backwards scan of b1 p3..p0 (4 spare reads: offset 0 is in no replacement page);
    //        o0: copy b0 p0 (a page read of an erased page: nothing programmed); o1: the new data;
    //        o2: copy b0 p2 (erased, page read); o3: copy b1 p3 -> b2 p3; erase b0 and b1.
    //                                                                                   sr 6, pr 3, pw 2, er 2
    // Rd 9:  validity b2 p1, header b2 p0 (no replacement): read b2 p1.                 sr 2, pr 1
    // Total: pr 6, sr 25, pw 8, sw 1, erases 2, one fold, no GC.
    let r = run_requests(&fig2_device(json!({})), fig2_to_fold()).unwrap();
    assert_eq!(ops(&r), (6, 25, 8, 1, 2));
    assert_eq!(
        (
            r.count("merges.fold"),
            r.count("merges.fold.erases"),
            r.count("gc.runs")
        ),
        (1, 2, 0)
    );

    // Lookup table: Rd 11 keeps its 2 search reads, the fold its 4 scan reads (Table 2: no help in folds),
    // t6 its 1: sr 7; the 18 others are avoided.
    let lt = run_requests(&fig2_device(json!({"lookup_table": true})), fig2_to_fold()).unwrap();
    assert_eq!(ops(&lt), (6, 7, 8, 1, 2));
    assert_eq!(lt.count("nftl.spare_reads_avoided"), 18);

    // Page cache of 8 (FIFO), no lookup table. Cached: 9 -> b1 p2, 11 -> b1 p1 when t6 runs.
    // t6 Rd 9: hit, read b1 p2 (avoids validity + header + 1 search read = 3).
    // Rd 11: hit, read b1 p1 (avoids 2 + 2 = 4).  Rd 10: miss, validity read (1).  Wr 11: 2 reads.
    // Wr 9: 2 reads; fold: o0 miss (scan all 4), o2 miss, o3 hit (11 -> b1 p3; the scan went deeper
    // anyway: nothing avoided).  Rd 9: hit (9 -> b2 p1 after the fold; avoids validity + header = 2).
    // Spare reads: t2..t5 7 + Rd 10 1 + Wr 11 2 + Wr 9 6 = 16 = 25 - 9 avoided. Hits 4, misses 3.
    let pc = run_requests(&fig2_device(json!({"page_cache": 8})), fig2_to_fold()).unwrap();
    assert_eq!(ops(&pc), (6, 16, 8, 1, 2));
    assert_eq!(pc.count("nftl.spare_reads_avoided"), 9);
    assert_eq!(
        (
            pc.count("cache.page_cache.hits"),
            pc.count("cache.page_cache.misses")
        ),
        (4, 3)
    );
}

#[test]
fn garbage_collection_folds_every_primary_with_a_replacement_block() {
    // 2 virtual blocks of 4 pages + 2 spare blocks, all written: vb0 -> b0, vb1 -> b1; free b2, b3.
    // Wr 0: validity b0 p0, header b0 p0 (2 sr); 2 free > the fold reserve of 1: b2 becomes vb0's
    //       replacement block (header program, 1 sw); program b2 p0.
    // Wr 4: validity b1 p0, header b1 p0 (2 sr); only the reserve is free -> GC: header of vb0 (1 sr):
    //       b2 -> fold vb0 into b3: scan b2 p0 (1 sr, holds 0); copy b2 p0, b0 p1..p3 (4 pr, 4 pw);
    //       erase b0, b2. Header of vb1 (1 sr): none. Then b0 becomes vb1's replacement (1 sw), program.
    // Total: pr 4, sr 7, pw 6, sw 2, erases 2; 1 fold inside 1 GC run.
    let cfg = full(toy("nftl", json!({}), 4, 2));
    let r = run_requests(&cfg, writes(&[0, 4])).unwrap();
    assert_eq!(ops(&r), (4, 7, 6, 2, 2));
    assert_eq!((r.count("merges.fold"), r.count("gc.runs")), (1, 1));
    // The lookup table leaves only the fold's scan read (Table 2: GC uses the rep-block table).
    let lt = run_requests(
        &full(toy("nftl", json!({"lookup_table": true}), 4, 2)),
        writes(&[0, 4]),
    )
    .unwrap();
    assert_eq!(ops(&lt), (4, 1, 6, 2, 2));
    assert_eq!(lt.count("nftl.spare_reads_avoided"), 6);
}

fn paper_34mb(ppb: u32, params: Value) -> SimConfig {
    SimConfig {
        ftl: "nftl".into(),
        params,
        device: DeviceOverrides {
            pages_per_block: Some(ppb),
            page_bytes: Some(512),
            ..Default::default()
        },
        capacity: Some("34MiB".into()),
        ..Default::default()
    }
}

fn ram_of(cfg: &SimConfig, name: &str) -> u64 {
    ram(cfg)
        .unwrap()
        .iter()
        .find(|i| i.name == name)
        .unwrap_or_else(|| panic!("no RAM item {name}"))
        .bytes
}

#[test]
fn ram_matches_the_papers_34mb_figures() {
    // 34 MiB / 512 B = 69,632 sectors. 8 KB blocks: 4,352 virtual blocks x 4 B = 17,408 B block map; lookup
    // table = 17,408 B rep-block table + 69,632 / 8 = 8,704 B bitmap = 26,112 B (NFTL paper §5).
    // 16 KB blocks: 2,176 x 4 = 8,704 B; lookup table 8,704 + 8,704 = 17,408 B.
    for (ppb, map, table) in [(16, 17_408, 26_112), (32, 8_704, 17_408)] {
        let plain = paper_34mb(ppb, json!({}));
        assert_eq!(ram_of(&plain, "block_map"), map);
        assert!(ram(&plain)
            .unwrap()
            .iter()
            .all(|i| i.name != "rep_block_table"));
        let lt = paper_34mb(ppb, json!({"lookup_table": true}));
        assert_eq!(ram_of(&lt, "block_map"), map);
        assert_eq!(
            ram_of(&lt, "rep_block_table") + ram_of(&lt, "page_status_bitmap"),
            table
        );
        // §5: the page cache set to the lookup table's size: 8 B an entry.
        let pc = paper_34mb(ppb, json!({"page_cache": table / 8}));
        assert_eq!(ram_of(&pc, "page_cache"), table);
    }
}

#[test]
fn bad_parameters_are_named() {
    let msg = run_requests(&fig2_device(json!({"page_cache_policy": "clock"})), vec![])
        .err()
        .unwrap()
        .to_string();
    assert!(msg.contains("clock") && msg.contains("lru"), "{msg}");
    let msg = run_requests(&fig2_device(json!({"spare_blocks": 1})), vec![])
        .err()
        .unwrap()
        .to_string();
    assert!(msg.contains("spare_blocks=1"), "{msg}");
}

/// Shim et al. Fig. 1: two updates of sector 0x08, then one of 0x10 in another block (8-page blocks:
/// 0x08 = block 1 offset 0, 0x10 = block 2 offset 0); the data blocks hold every page at the start.
fn fig1() -> Vec<Request> {
    let mut r = writes(&[0x08, 0x08, 0x10]);
    r.push(page(Op::Read, 0x08));
    r
}

#[test]
fn replacement_fig1_with_enough_replacement_blocks() {
    // Wr 8: spare read of data1 p0 (used); the chain ends: replacement r1, program r1 p0.   sr 1, pw 1
    // Wr 8: data1 p0 used, r1 p0 used: a second replacement block r2, program r2 p0.       sr 2, pw 1
    // Wr 16: data2 p0 used: replacement r3, program r3 p0.                                 sr 1, pw 1
    // Rd 8: spare read p0 of data1, r1, r2: the newest is r2; read it.                    sr 3, pr 1
    let r = run_requests(
        &full(toy("replacement", json!({"replacement_blocks": 3}), 8, 4)),
        fig1(),
    )
    .unwrap();
    assert_eq!(ops(&r), (1, 7, 3, 0, 0));
    assert_eq!(r.count("merges.full"), 0);
}

#[test]
fn replacement_fig1_merges_the_longest_chain_when_replacement_blocks_run_out() {
    // With 2 replacement blocks, Wr 16 finds both in use (block 1's chain): block 1's chain is the longest
    // and is merged: for each of 8 offsets, spare reads of data1, r1, r2 (24); copy r2 p0 and data1 p1..p7
    // (8 pr, 8 pw); erase data1, r1, r2. Then block 2 takes a replacement block.
    // Wr 8, Wr 8: sr 3, pw 2. Wr 16: sr 1 + 24, pr 8, pw 8 + 1, erases 3.
    // Rd 8: block 1 has no chain now: read page 0 of its new data block (pr 1).
    // Total: pr 9, sr 28, pw 11, erases 3, one merge.
    let r = run_requests(
        &full(toy("replacement", json!({"replacement_blocks": 2}), 8, 4)),
        fig1(),
    )
    .unwrap();
    assert_eq!(ops(&r), (9, 28, 11, 0, 3));
    assert_eq!(
        (r.count("merges.full"), r.count("merges.full.erases")),
        (1, 3)
    );
}

fn random_requests(ops: &[(u8, u32, u32)], logical_pages: u32) -> Vec<Request> {
    ops.iter()
        .map(|&(kind, first, len)| {
            let first = first % logical_pages;
            let len = len.min(logical_pages - first).max(1);
            let op = if kind % 3 == 0 { Op::Read } else { Op::Write };
            Request::new(0.0, op, first as u64 * 512, len as u64 * 512)
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: common::cases(32), ..ProptestConfig::default() })]

    /// §5 "Reliability": the lookup table and the page cache are copies of spare-area data; they change
    /// only spare reads, and `nftl.spare_reads_avoided` accounts for the difference exactly.
    #[test]
    fn techniques_change_only_spare_reads(
        workload in prop::collection::vec((any::<u8>(), any::<u32>(), 1u32..5), 1..300),
        ppb in prop::sample::select(vec![4u32, 8]),
        blocks in 3u32..10,
        precondition in any::<bool>(),
        sequential_program in any::<bool>(),
    ) {
        let reqs = random_requests(&workload, ppb * blocks);
        let run = |params: Value| {
            let mut cfg = toy("nftl", params, ppb, blocks);
            cfg.device.sequential_program = Some(sequential_program);
            if precondition {
                cfg = full(cfg);
            }
            run_requests(&cfg, reqs.clone()).unwrap()
        };
        let plain = run(json!({}));
        let (pr, sr, pw, sw, er) = ops(&plain);
        for params in [
            json!({"lookup_table": true}),
            json!({"page_cache": 4}),
            json!({"page_cache": 4, "page_cache_policy": "lru"}),
            json!({"page_cache": 16, "lookup_table": true}),
        ] {
            let v = run(params.clone());
            let (vpr, vsr, vpw, vsw, ver) = ops(&v);
            prop_assert_eq!((vpr, vpw, vsw, ver), (pr, pw, sw, er), "{}", params);
            prop_assert!(vsr <= sr, "{}", params);
            prop_assert_eq!(v.count("nftl.spare_reads_avoided"), sr - vsr, "{}", params);
            prop_assert_eq!(v.count("merges.fold"), plain.count("merges.fold"));
            prop_assert_eq!(v.count("gc.runs"), plain.count("gc.runs"));
        }
    }
}

/// A file-system-like stream of single-sector requests over the first `used` pages: file writes (runs of
/// 8..64 sectors at random places), hot metadata rewrites (the first 1% of the space, FAT-like), and about
/// 1% reads, half of them of a recently written sector.
fn fs_like(used: u32, requests: usize, seed: u64) -> Vec<Request> {
    let mut s = seed;
    let mut rnd = move |n: u64| {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (s >> 33) % n
    };
    let mut out = Vec::with_capacity(requests);
    let mut recent = [0u32; 256];
    let mut i = 0usize;
    while out.len() < requests {
        let dice = rnd(100);
        if dice < 10 {
            let lpn = if rnd(2) == 0 {
                recent[rnd(256) as usize]
            } else {
                rnd(used as u64) as u32
            };
            out.push(page(Op::Read, lpn));
        } else if dice < 35 {
            let lpn = rnd((used as u64 / 100).max(1)) as u32;
            recent[i % 256] = lpn;
            i += 1;
            out.push(page(Op::Write, lpn));
        } else {
            let len = 8 + rnd(57) as u32;
            let start = rnd(used as u64) as u32;
            for l in start..(start + len).min(used) {
                recent[i % 256] = l;
                i += 1;
                out.push(page(Op::Write, l));
            }
        }
    }
    out
}

/// NFTL paper Tables 5 and 6 (§4), in shape, on a 34 MB device with file-system-like streams standing in for
/// the paper's combo and AtoPM traces (which are not public): both techniques only remove spare reads, so
/// they speed up reads and writes; the lookup table removes more spare reads than a page cache of the same
/// RAM; and the gains are larger on the Toshiba part, whose spare reads are slower (Table 1: 26 us vs 10 us).
/// The full-size figures are `ftlsim reproduce nftl-table5`.
#[test]
fn tables_5_and_6_in_shape() {
    let logical_pages = 34 * 2048u32;
    for (trace, util) in [("combo-like", 0.94), ("atopm-like", 0.23)] {
        let reqs = fs_like((logical_pages as f64 * util) as u32, 100_000, 7);
        let mut lt_read_gain = Vec::new();
        for preset in ["samsung-k9f2808", "toshiba-tc58dvm72"] {
            for ppb in [16u32, 32] {
                let table_bytes = if ppb == 16 { 26_112 } else { 17_408 };
                let run = |params: Value| {
                    let mut cfg = paper_34mb(ppb, params);
                    cfg.preset = Some(preset.into());
                    run_requests(&cfg, reqs.clone()).unwrap()
                };
                let plain = run(json!({}));
                let lt = run(json!({"lookup_table": true}));
                let pc = run(json!({"page_cache": table_bytes / 8}));
                let gain = |r: &Report, key: &str| 1.0 - r.num(key) / plain.num(key);
                let case = format!("{trace} {preset} {ppb} pages a block");
                for key in ["time_us.per_read_page", "time_us.per_write_page"] {
                    assert!(gain(&lt, key) > 0.0, "{case}: lookup table {key}");
                    assert!(gain(&pc, key) >= 0.0, "{case}: page cache {key}");
                }
                assert!(
                    gain(&pc, "time_us.per_read_page") > 0.0,
                    "{case}: page cache reads"
                );
                assert!(
                    lt.count("flash.spare_reads") < pc.count("flash.spare_reads"),
                    "{case}: the table saves more spare reads than a cache of its RAM"
                );
                lt_read_gain.push(gain(&lt, "time_us.per_read_page"));
            }
        }
        for i in 0..2 {
            assert!(
                lt_read_gain[2 + i] > lt_read_gain[i],
                "{trace}: Toshiba's slower spare reads gain more ({lt_read_gain:?})"
            );
        }
    }
}
