//! Golden cases for `mast` (paper 002, §2-§4) and `last` (LAST as 002 describes it, see `ftl/last.rs`): one small
//! hand-worked sequence per rule, the §4.2 finding on a hot-set workload, and the invariants with idle gaps.
//!
//! Unless said otherwise: 4 pages a block, 512 B pages, 8 logical blocks, data blocks full (precondition),
//! so that every write goes to a log block; `Sn` is logical page n (block n div 4, offset n mod 4).
//! `mast` with `log_blocks: 4` has the SW block and one block each for LA, HA and CA; dynamic sizing off.

mod common;

use common::{full, page, toy, writes};
use ftlsim_core::report::Report;
use ftlsim_core::request::{Op, Request};
use ftlsim_core::sim::{run, run_requests, SimConfig};
use serde_json::{json, Value};

fn run_toy(scheme: &str, params: Value, reqs: Vec<Request>) -> Report {
    let mut all = reqs;
    all.extend((0..32).map(|l| page(Op::Read, l)));
    run_requests(&full(toy(scheme, params, 4, 8)), all).unwrap_or_else(|e| panic!("{scheme}: {e}"))
}

fn mast_small() -> Value {
    json!({"log_blocks": 4, "dynamic_sizing": false})
}

fn merges(r: &Report) -> [u64; 4] {
    ["switch", "partial", "full", "dead"].map(|k| r.count(&format!("merges.{k}")))
}

#[test]
fn mast_page_rewritten_in_la_lands_in_ha() {
    // S1 has no log copy: LA. S1 again: its newest copy is in LA, so it is hot: HA (§2.1). Two programs, no
    // merge, no erase; the reads at the end find the HA copy (the simulator checks every read).
    let r = run_toy("mast", mast_small(), writes(&[1, 1]));
    assert_eq!(r.count("mast.writes.la"), 1);
    assert_eq!(r.count("mast.writes.ha"), 1);
    assert_eq!(r.count("flash.page_writes"), 2);
    assert_eq!(r.count("flash.erases"), 0);
    assert_eq!(merges(&r), [0, 0, 0, 0]);
    // A third write finds S1's newest copy in HA, not in LA: §2.1 scans LA only, so it is not hot and goes
    // back to LA to be detected again (its HA copy goes stale).
    let r = run_toy("mast", mast_small(), writes(&[1, 1, 1]));
    assert_eq!(
        (r.count("mast.writes.la"), r.count("mast.writes.ha")),
        (2, 1)
    );
    // A fourth: its newest copy is in LA again: hot, HA.
    let r = run_toy("mast", mast_small(), writes(&[1, 1, 1, 1]));
    assert_eq!(
        (r.count("mast.writes.la"), r.count("mast.writes.ha")),
        (2, 2)
    );
}

#[test]
fn mast_la_overflow_moves_cold_pages_to_ca() {
    // S1, S5, S9, S13 fill LA's block (offset 1 of blocks 0..3: no SW write). S1 and S5 again: hot, to HA;
    // their LA copies die, LA keeps 2 live pages (S9, S13). S17 needs a new LA block: LA is full, its oldest
    // block leaves; 2 live pages are not more than the migration threshold (half a block = 2), so S9 and S13
    // are copied to CA as cold (2 reads, 2 programs) and the block is erased (1 erase); S17 goes to a fresh
    // LA block. Programs: 4 + 2 + 2 copies + 1 = 9. No data block is involved: no merge.
    let r = run_toy("mast", mast_small(), writes(&[1, 5, 9, 13, 1, 5, 17]));
    assert_eq!(r.count("mast.moved_pages.la_to_ca"), 2);
    assert_eq!(r.count("mast.migrated_blocks"), 0);
    assert_eq!(r.count("flash.page_writes"), 9);
    assert_eq!(r.count("flash.erases"), 1);
    assert_eq!(merges(&r), [0, 0, 0, 0]);
    // Without the two rewrites the leaving block has 4 live pages > 2: it migrates whole to CA, no copy, no
    // erase (§2.1); programs: 5.
    let r = run_toy("mast", mast_small(), writes(&[1, 5, 9, 13, 17]));
    assert_eq!(r.count("mast.migrated_blocks"), 1);
    assert_eq!(r.count("mast.moved_pages.la_to_ca"), 0);
    assert_eq!(r.count("flash.page_writes"), 5);
    assert_eq!(r.count("flash.erases"), 0);
}

#[test]
fn mast_dead_ha_block_is_one_erase_and_no_copy() {
    // S1 S1 S2 S2 S3 S3: each first write to LA, each second to HA. S1 again: HA (its newest copy is there),
    // HA's block is now full: S1 (stale), S2, S3, S1. S0 opens the SW block for block 0 (FAST case 1); S1, S2,
    // S3 continue its run (case 2.1) and supersede their log copies: HA's block has no live page left. S5 goes
    // to LA (its 4th page); S5 again is hot and needs an HA block: HA's only block leaves with no live page:
    // a dead merge, 1 erase, 0 copies. Programs: 7 + 4 + 2 = 13; erases: 1.
    let r = run_toy(
        "mast",
        mast_small(),
        writes(&[1, 1, 2, 2, 3, 3, 1, 0, 1, 2, 3, 5, 5]),
    );
    assert_eq!(merges(&r), [0, 0, 0, 1]);
    assert_eq!(r.count("merges.dead.erases"), 1);
    assert_eq!(r.count("merges.dead.copied_pages"), 0);
    assert_eq!(r.count("mast.moved_pages.ha_to_ca"), 0);
    assert_eq!(r.count("flash.page_writes"), 13);
    assert_eq!(r.count("flash.erases"), 1);
}

#[test]
fn last_large_sequential_request_goes_to_the_sequential_buffer_and_switches() {
    // One 8-page request over S4..S11 (4096 B: at the 4 KiB threshold, sequential). S4 (offset 0) opens a
    // sequential log block for block 1; S5-S7 continue it; full, it is switched: the old data block is
    // erased (1 erase, no copy). S8-S11 do the same for block 2. 2 switches, 2 erases, 8 programs.
    let big = vec![Request::new(0.0, Op::Write, 4 * 512, 8 * 512)];
    let r = run_toy("last", json!({}), big);
    assert_eq!(merges(&r), [2, 0, 0, 0]);
    assert_eq!(r.count("merges.switch.erases"), 2);
    assert_eq!(r.count("flash.erases"), 2);
    assert_eq!(r.count("flash.page_writes"), 8);
    // The same pages as 8 single-page requests (512 B < 4 KiB) go to the random buffer (7 random log blocks
    // of 4 pages): 8 programs, no merge, no erase.
    let r = run_toy("last", json!({}), writes(&[4, 5, 6, 7, 8, 9, 10, 11]));
    assert_eq!(merges(&r), [0, 0, 0, 0]);
    assert_eq!(r.count("flash.erases"), 0);
    assert_eq!(r.count("last.victims.dead"), 0);
}

#[test]
fn last_replaces_the_cold_block_when_the_hot_partition_needs_one() {
    // log_blocks 3: 1 sequential + 2 random blocks; a page is hot if written again within 2 page writes.
    // S1 S5 S9 S13: first writes, cold: they fill cold block A. S2: cold (first write): A is full, a slot is
    // free: cold block B [S2]. S2 again, 1 write later: hot; no free slot; the only full block is A (4 live
    // pages, 4 data blocks): it is the victim: full merges of blocks 0, 1, 2, 3, each copying 4 pages (S1 from
    // the log, the rest from the data block) and erasing the old data block, the last also erasing A:
    // 4 full merges, 16 copies, 5 erases; S2 then opens the hot block in A's slot.
    let r = run_toy(
        "last",
        json!({"log_blocks": 3, "hot_window_pages": 2}),
        writes(&[1, 5, 9, 13, 2, 2]),
    );
    assert_eq!(merges(&r), [0, 0, 4, 0]);
    assert_eq!(r.count("merges.full.copied_pages"), 16);
    assert_eq!(r.count("flash.erases"), 5);
    assert_eq!(r.count("last.hot_writes"), 1);
    assert_eq!(r.count("last.victims.cold"), 1);
}

const LOG: u32 = 32;

/// Runs `scheme` over the hot-set workload on a device with 16-page blocks.
fn hot_set(scheme: &str, params: Value) -> Report {
    let cfg = SimConfig {
        ftl: scheme.into(),
        params,
        device: ftlsim_core::config::DeviceOverrides {
            pages_per_block: Some(16),
            ..Default::default()
        },
        capacity: Some(format!("{}", 512 * 16 * 64)),
        precondition: ftlsim_core::sim::Precondition::Full,
        ..Default::default()
    };
    run(
        &cfg,
        "hotcold:writes=20000,seed=5,hot_fraction=0.02,hot_share=0.9,sequential_share=0.05,run_pages=16,run_as_request=true",
        &mut |_| true,
    )
    .unwrap_or_else(|e| panic!("{scheme}: {e}"))
}

#[test]
fn on_a_hot_set_mast_and_last_do_fewer_full_merges_than_fast() {
    // 002 §4.2: FAST has the most full merges and the fewest dead ones; LAST and MAST fewer full, more dead.
    // With MAST's literal rules (LA scan only, no CA floor) the dead half does not hold on this hot set:
    // MAST 519 dead merges to FAST's 531 (the full half does: 323 to 626); it is asserted for LAST only.
    let fast = hot_set("fast", json!({"log_blocks": LOG}));
    let last = hot_set("last", json!({"log_blocks": LOG}));
    let mast = hot_set("mast", json!({"log_blocks": LOG}));
    let show = |r: &Report| format!("{:?}", merges(r));
    eprintln!(
        "fast {} last {} mast {}",
        show(&fast),
        show(&last),
        show(&mast)
    );
    for (name, r) in [("last", &last), ("mast", &mast)] {
        assert!(
            r.count("merges.full") < fast.count("merges.full"),
            "{name} {} vs fast {}",
            show(r),
            show(&fast)
        );
    }
    assert!(
        last.count("merges.dead") > fast.count("merges.dead"),
        "last {} vs fast {}",
        show(&last),
        show(&fast)
    );
}

/// Random requests (LCG, fixed seed) with an idle gap before every `gap_every`-th.
fn random_with_gaps(n: usize, logical_pages: u64, gap_every: usize) -> Vec<Request> {
    let mut seed = 99u64;
    let mut t = 0.0;
    (0..n)
        .map(|i| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let r = seed >> 33;
            // Half the writes hit 8 hot pages; some requests are 4 KiB sequential runs.
            let (first, pages) = match r % 10 {
                0 => (((r >> 8) % (logical_pages / 8)) * 8, 8),
                1..=5 => ((r >> 8) % 8, 1),
                _ => ((r >> 8) % logical_pages, 1),
            };
            let op = if r.is_multiple_of(7) {
                Op::Read
            } else {
                Op::Write
            };
            if gap_every > 0 && i % gap_every == 0 {
                t += 1_000_000.0;
            }
            t += 10.0;
            Request::new(t, op, first * 512, pages * 512)
        })
        .collect()
}

#[test]
fn last_and_mast_keep_data_with_and_without_idle_gaps() {
    let variants = [
        ("last", json!({})),
        ("last", json!({"log_blocks": 3})),
        ("mast", json!({})),
        ("mast", json!({"log_blocks": 5, "dynamic_sizing": false})),
        (
            "mast",
            json!({"log_blocks": 8, "dynamic_sizing": true, "ca_util_low": 0.9}),
        ),
        (
            "mast",
            json!({"log_blocks": 8, "la_blocks": 1, "ha_blocks": 1, "idle_merges": 8}),
        ),
    ];
    for (scheme, params) in variants {
        for gap_every in [0, 7] {
            for (sequential_program, precondition) in [(false, true), (true, false), (true, true)] {
                let mut cfg = toy(scheme, params.clone(), 8, 16);
                cfg.device.sequential_program = Some(sequential_program);
                if precondition {
                    cfg = full(cfg);
                }
                let r = run_requests(&cfg, random_with_gaps(3000, 128, gap_every))
                    .unwrap_or_else(|e| panic!("{scheme} {params} gaps {gap_every}: {e}"));
                assert!(r.count("flash.erases") > 0, "{scheme} {params}");
                if gap_every == 0 {
                    assert_eq!(r.num("time_us.idle"), 0.0, "{scheme} {params}");
                }
            }
        }
    }
}

#[test]
fn mast_merges_in_idle_time() {
    // With gaps, MAST runs CA merges in idle time: their cost is reported as idle time, not charged to a
    // request; LAST has no idle work.
    let cfg = full(toy("mast", json!({"log_blocks": 8}), 8, 16));
    let r = run_requests(&cfg, random_with_gaps(3000, 128, 7)).unwrap();
    assert!(r.count("mast.idle_merges") > 0);
    assert!(r.num("time_us.idle") > 0.0);
    let cfg = full(toy("last", json!({"log_blocks": 8}), 8, 16));
    let r = run_requests(&cfg, random_with_gaps(3000, 128, 7)).unwrap();
    assert_eq!(r.num("time_us.idle"), 0.0);
}

#[test]
fn mast_reports_area_utilization() {
    let r = hot_set("mast", json!({"log_blocks": LOG}));
    for a in ["la", "ha", "ca"] {
        let u = r.num(&format!("mast.utilization.{a}"));
        assert!((0.0..=1.0).contains(&u), "{a} {u}");
    }
    // Fig. 2: hot pages die in HA, cold ones stay valid in CA.
    assert!(r.num("mast.utilization.ha") < r.num("mast.utilization.ca"));
    assert!(r.count("mast.utilization.samples") > 0);
}

#[test]
fn dynamic_sizing_moves_blocks_to_la_but_keeps_ca_above_its_floor() {
    // 32 log blocks: 31 random; CA's floor is one block (the paper's), ceil(31 / 4) = 8 blocks with
    // ca_min_share=0.25, 16 with 0.5; a floor that is not the paper's is reported as a deviation.
    for (share, floor) in [(0.0, 1), (0.25, 8), (0.5, 16)] {
        let r = hot_set("mast", json!({"log_blocks": 32, "ca_min_share": share}));
        assert!(
            r.count("mast.resizes.grow_la") > 0,
            "the hot set makes CA's utilization fall"
        );
        assert!(
            r.count("mast.area_blocks.ca") >= floor,
            "{share}: {}",
            r.count("mast.area_blocks.ca")
        );
        assert_eq!(
            r.get("mast.deviation.ca_min_share").is_some(),
            share > 0.0,
            "{share}"
        );
        assert_eq!(
            r.count("mast.area_blocks.la")
                + r.count("mast.area_blocks.ha")
                + r.count("mast.area_blocks.ca"),
            31
        );
    }
    let pinned = hot_set("mast", json!({"log_blocks": 32, "dynamic_sizing": false}));
    assert_eq!(
        pinned.count("mast.resizes.grow_la") + pinned.count("mast.resizes.shrink_la"),
        0
    );
}
