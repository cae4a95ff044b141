//! Golden cases from the FAST paper (Lee et al. 2007) for `bast`, `fast` and `ofast`: the §2.4 examples, the
//! §3.5 analytic cases, O-FAST's lazy merge (§3.6, Fig. 9), sequential writes (Table II) and log-block
//! utilization (Fig. 4). Every count is worked out by hand in the comment above its assertion.
//!
//! Unless said otherwise: 4 pages (sectors) a block, 512 B pages, data blocks full (precondition), and
//! `Sn` is logical page n. BAST gets `n` log blocks where FAST gets `n + 1` (one SW block and `n` RW blocks),
//! as §3.5 compares them.

mod common;

use common::{full, page, toy, writes};
use ftlsim_core::report::Report;
use ftlsim_core::request::{Op, Request};
use ftlsim_core::sim::run_requests;
use proptest::prelude::*;
use serde_json::json;

fn run(scheme: &str, params: serde_json::Value, blocks: u32, reqs: Vec<Request>) -> Report {
    run_requests(&full(toy(scheme, params, 4, blocks)), reqs)
        .unwrap_or_else(|e| panic!("{scheme}: {e}"))
}

/// The writes, then a read of every logical page (the simulator checks each against the last write).
fn writes_then_reads(lpns: &[u32], logical_pages: u32) -> Vec<Request> {
    let mut reqs = writes(lpns);
    reqs.extend((0..logical_pages).map(|l| page(Op::Read, l)));
    reqs
}

fn merges(r: &Report) -> [u64; 4] {
    ["switch", "partial", "full", "dead"].map(|k| r.count(&format!("merges.{k}")))
}

fn histogram(r: &Report) -> Vec<u64> {
    serde_json::from_value(r.get("log_utilization.histogram").unwrap()).unwrap()
}

const THRASH: [u32; 8] = [1, 5, 9, 13, 1, 5, 9, 13];

#[test]
fn thrash_pattern_bast_merges_on_every_write_from_the_third() {
    // §2.4 with offsets 1 so that FAST uses its RW blocks: S1, S5, S9, S13 come from logical blocks 0..3.
    // BAST, 2 log blocks: S1 and S5 open log blocks for blocks 0 and 1. S9 finds no log block and no free
    // one; neither log block can be switched (one page, not at its own offset), so the round-robin victim
    // (block 0's) is fully merged: 4 pages copied (S0, S2, S3 from the data block, S1 from the log), data and
    // log block erased. Every later write does the same: writes 3..8 are 6 full merges, 12 erases, 24 copies,
    // each victim holding 1 written page of 4 (utilization 1/4). Programs: 8 host + 24 copies = 32.
    for partial_merge in [false, true] {
        // The partial merge does not apply: S1 sits at log offset 0, not at its own offset 1.
        let params = json!({"log_blocks": 2, "partial_merge": partial_merge});
        for n in 1..=8usize {
            let r = run("bast", params.clone(), 4, writes(&THRASH[..n]));
            assert_eq!(
                r.count("merges.full"),
                n.saturating_sub(2) as u64,
                "after {n} writes"
            );
        }
        let r = run("bast", params, 4, writes_then_reads(&THRASH, 16));
        assert_eq!(merges(&r), [0, 0, 6, 0]);
        assert_eq!(r.count("flash.erases"), 12);
        assert_eq!(r.count("merges.full.erases"), 12);
        assert_eq!(r.count("merges.full.copied_pages"), 24);
        assert_eq!(r.count("flash.page_writes"), 32);
        assert_eq!(r.num("merges.erases_per_merge"), 2.0);
        assert_eq!(histogram(&r), vec![0, 6, 0, 0, 0]);
        assert_eq!(r.num("log_utilization.mean"), 0.25);
    }
}

#[test]
fn thrash_pattern_fast_merges_nothing() {
    // §3.1: with 2 RW blocks of 4 pages the 8 writes fill them (offset 1 is never a SW write): no merge, no
    // erase, 8 programs. O-FAST is the same.
    for scheme in ["fast", "ofast"] {
        let r = run(
            scheme,
            json!({"log_blocks": 3}),
            4,
            writes_then_reads(&THRASH, 16),
        );
        assert_eq!(merges(&r), [0, 0, 0, 0], "{scheme}");
        assert_eq!(r.count("flash.erases"), 0, "{scheme}");
        assert_eq!(r.count("flash.page_writes"), 8, "{scheme}");
    }
}

#[test]
fn hot_block_pattern_bast_merges_every_fourth_write() {
    // §2.4: S0, S2, S1, S3, S1, S0, S2, S3 on logical block 0, 2 log blocks. The first four fill block 0's log
    // block (S0, S2, S1, S3: not in place). The fifth finds it full: victim rule (1), full merge (4 copies,
    // 2 erases, utilization 4/4); the write opens a new log block, which the last four fill. A ninth write to
    // the block would merge again: one merge per four writes, while the other log block stays unused.
    let pattern = [0, 2, 1, 3, 1, 0, 2, 3];
    for n in 1..=8usize {
        let r = run("bast", json!({"log_blocks": 2}), 4, writes(&pattern[..n]));
        assert_eq!(r.count("merges.full"), (n >= 5) as u64, "after {n} writes");
    }
    let mut twelve = pattern.to_vec();
    twelve.extend([1, 0, 2, 3]);
    let r = run(
        "bast",
        json!({"log_blocks": 2}),
        4,
        writes_then_reads(&twelve, 16),
    );
    // Writes 5 and 9 merge: 2 full merges, 4 erases, 8 copies; both victims were full.
    assert_eq!(merges(&r), [0, 0, 2, 0]);
    assert_eq!(r.count("flash.erases"), 4);
    assert_eq!(r.count("merges.full.copied_pages"), 8);
    assert_eq!(histogram(&r), vec![0, 0, 0, 0, 2]);
    assert_eq!(r.num("log_utilization.mean"), 1.0);
}

#[test]
fn hot_block_pattern_fast_absorbs_it_in_its_rw_blocks() {
    // The §2.4 hot-block pattern moved off offset 0 (S1, S3, S2, S3, S2, S1, S3, S2), so that Algorithm 2
    // sends every write to the RW blocks: 2 RW blocks of 4 pages hold all 8 writes, no merge, no erase.
    // BAST on the same writes: the fifth write finds block 0's log block full (S1, S3, S2, S3), full merge.
    let pattern = [1, 3, 2, 3, 2, 1, 3, 2];
    for scheme in ["fast", "ofast"] {
        let r = run(
            scheme,
            json!({"log_blocks": 3}),
            4,
            writes_then_reads(&pattern, 16),
        );
        assert_eq!(merges(&r), [0, 0, 0, 0], "{scheme}");
        assert_eq!(r.count("flash.erases"), 0, "{scheme}");
        assert_eq!(r.count("flash.page_writes"), 8, "{scheme}");
    }
    let r = run(
        "bast",
        json!({"log_blocks": 2}),
        4,
        writes_then_reads(&pattern, 16),
    );
    assert_eq!(merges(&r), [0, 0, 1, 0]);
    assert_eq!(r.count("flash.erases"), 2);
}

#[test]
fn hot_block_pattern_with_offset_zero_goes_through_the_sw_block() {
    // The paper's own order S0, S2, S1, S3, S1, S0, S2, S3 under Algorithm 2 (the SW rule makes FAST merge
    // here, unlike the fully associative sketch of §3.1):
    //  S0 (case 1): SW block X for block 0, X[0] = S0.
    //  S2 (case 2.2, 2 != 0 + 1): partial merge (Fig. 7a): S1 copied from the data block to X[1], S2 programmed
    //     at X[2], S3 copied to X[3]; X becomes the data block, the old one is erased (1 erase, 2 copies).
    //  S1, S3, S1 (case 3): RW block 0.
    //  S0 (case 1): SW is empty: new SW block Y, Y[0] = S0.
    //  S2 (case 2.2): partial merge: S1 and S3 copied from RW block 0 (their newest copies), S2 at Y[2];
    //     X erased (1 erase, 2 copies); the RW pages of block 0 become invalid.
    //  S3 (case 3): RW block 0, page 4.
    // Totals: 2 partial merges, 2 erases, 4 copies, 12 programs, both SW blocks replaced holding 1 page.
    // Spare reads: the first merge reads the spare areas of the data block's S1 and S3 (no log copy; S2 is
    // the folded-in write) to learn that they hold data; the second finds S1 and S3 in the RW block: 2.
    let pattern = [0, 2, 1, 3, 1, 0, 2, 3];
    for scheme in ["fast", "ofast"] {
        let r = run(
            scheme,
            json!({"log_blocks": 3}),
            4,
            writes_then_reads(&pattern, 16),
        );
        assert_eq!(merges(&r), [0, 2, 0, 0], "{scheme}");
        assert_eq!(r.count("flash.erases"), 2, "{scheme}");
        assert_eq!(r.count("merges.partial.erases"), 2, "{scheme}");
        assert_eq!(r.count("merges.partial.copied_pages"), 4, "{scheme}");
        assert_eq!(r.count("flash.page_writes"), 12, "{scheme}");
        assert_eq!(r.count("flash.spare_reads"), 2, "{scheme}");
        assert_eq!(histogram(&r), vec![0, 2, 0, 0, 0], "{scheme}");
    }
}

/// `rounds` rounds of `rw` victims under one hot logical block (block 1, offsets 1..3 in turn), after the
/// writes that first fill the `rw` RW blocks.
fn one_hot_block(rw: u32, rounds: u32) -> Vec<u32> {
    (0..4 * rw * (rounds + 1)).map(|i| 5 + i % 3).collect()
}

#[test]
fn one_hot_block_fast_saves_rw_minus_one_erases_per_round() {
    // §3.5, nhb = 1. W = 4 * rw * (R + 1) writes to block 1 (offsets 1..3, never offset 0).
    // BAST (rw log blocks, only one ever used): its log block fills every 4 writes and is fully merged
    // (not in place: S5, S6, S7, S5): W/4 - 1 merges of 2 erases.
    // FAST (1 SW + rw RW blocks): the first 4*rw writes fill the RW blocks. Each round of rw victims: the first
    // victim holds block 1's pages: one full merge (data block erased) + the victim = 2 erases, and every page
    // of block 1 in the other RW blocks becomes invalid; the next rw - 1 victims hold only invalid pages: a dead
    // merge each (1 erase). R rounds: R full + R*(rw-1) dead merges, R*(rw+1) erases. Saving per round over BAST
    // (2*rw erases): rw - 1.
    for rw in [2u32, 3, 5] {
        let rounds = 4;
        let lpns = one_hot_block(rw, rounds);
        let w = lpns.len() as u64;
        let bast = run(
            "bast",
            json!({"log_blocks": rw}),
            8,
            writes_then_reads(&lpns, 32),
        );
        let fast = run(
            "fast",
            json!({"log_blocks": rw + 1}),
            8,
            writes_then_reads(&lpns, 32),
        );
        assert_eq!(merges(&bast), [0, 0, w / 4 - 1, 0], "rw={rw}");
        assert_eq!(bast.count("flash.erases"), 2 * (w / 4 - 1), "rw={rw}");
        let r = rounds as u64;
        let rw64 = rw as u64;
        assert_eq!(merges(&fast), [0, 0, r, r * (rw64 - 1)], "rw={rw}");
        assert_eq!(fast.count("flash.erases"), r * (rw64 + 1), "rw={rw}");
        assert!(
            bast.count("flash.erases") - fast.count("flash.erases") >= r * (rw64 - 1),
            "rw={rw}"
        );
    }
}

#[test]
fn one_hot_block_random_offsets_fast_beats_bast_by_rw_minus_one_per_round() {
    // The same case with random offsets 1..3 of block 1 (seeded): the argument of §3.5 does not depend on the
    // order of the writes, only on the first victim of a round invalidating the block's pages in the others.
    let rw = 3u32;
    let mut seed = 7u64;
    let lpns: Vec<u32> = (0..4 * rw * 6)
        .map(|_| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            4 + 1 + ((seed >> 33) % 3) as u32
        })
        .collect();
    let rounds = (lpns.len() as u64 / 4 - rw as u64) / rw as u64;
    let bast = run(
        "bast",
        json!({"log_blocks": rw}),
        8,
        writes_then_reads(&lpns, 32),
    );
    let fast = run(
        "fast",
        json!({"log_blocks": rw + 1}),
        8,
        writes_then_reads(&lpns, 32),
    );
    assert_eq!(rounds, 5);
    assert!(
        bast.count("flash.erases") >= fast.count("flash.erases") + rounds * (rw as u64 - 1),
        "bast {} fast {}",
        bast.count("flash.erases"),
        fast.count("flash.erases")
    );
}

#[test]
fn more_hot_blocks_than_log_blocks_bast_thrashes_fast_does_not() {
    // §3.5, nhb > nlb: 6 hot blocks, offset 1 of each in turn (S1, S5, ..., S21), 2 log blocks for BAST and
    // 2 RW blocks for FAST, 60 writes. BAST: every write from the third on replaces a log block holding 1
    // page: 58 full merges, 116 erases, utilization 1/4. FAST fills its RW blocks: every replaced victim is
    // full (60/4 - 2 = 13 replacements, utilization 1) and it erases less than BAST.
    let lpns: Vec<u32> = (0..60).map(|i| 1 + 4 * (i % 6)).collect();
    let bast = run(
        "bast",
        json!({"log_blocks": 2}),
        8,
        writes_then_reads(&lpns, 32),
    );
    assert_eq!(merges(&bast), [0, 0, 58, 0]);
    assert_eq!(bast.count("flash.erases"), 116);
    assert_eq!(bast.num("log_utilization.mean"), 0.25);
    for scheme in ["fast", "ofast"] {
        let fast = run(
            scheme,
            json!({"log_blocks": 3}),
            8,
            writes_then_reads(&lpns, 32),
        );
        assert_eq!(fast.count("log_utilization.replacements"), 13, "{scheme}");
        assert_eq!(fast.num("log_utilization.mean"), 1.0, "{scheme}");
        assert!(
            2 * fast.count("flash.erases") < bast.count("flash.erases"),
            "{scheme}: {} vs {}",
            fast.count("flash.erases"),
            bast.count("flash.erases")
        );
    }
}

#[test]
fn repeated_overwrites_of_small_blocks_ofast_skips_merges() {
    // Built like Fig. 9: S1, S9 written over and over, FAST / O-FAST with 1 SW + 3 RW blocks, 36 writes.
    // The 3 RW blocks each fill with S1, S9, S1, S9 (12 writes). Then one victim per 4 writes, 6 in all:
    // FAST: victim RW0 holds S1, S9 (stale: newer copies in RW2) -> merges blocks 0 and 2 (2 full merges,
    //   3 erases with the victim); RW1 and RW2 now hold only invalid pages -> dead (1 erase each); then RW0 again
    //   holds pages written after the merges -> 3 erases, and 2 dead. 4 full + 4 dead merges, 10 erases.
    // O-FAST: every victim's pages have newer copies in the other RW blocks -> never merges: 6 dead merges,
    //   6 erases.
    let lpns: Vec<u32> = (0..36).map(|i| if i % 2 == 0 { 1 } else { 9 }).collect();
    let fast = run(
        "fast",
        json!({"log_blocks": 4}),
        4,
        writes_then_reads(&lpns, 16),
    );
    let ofast = run(
        "ofast",
        json!({"log_blocks": 4}),
        4,
        writes_then_reads(&lpns, 16),
    );
    assert_eq!(merges(&fast), [0, 0, 4, 4]);
    assert_eq!(fast.count("flash.erases"), 10);
    assert_eq!(merges(&ofast), [0, 0, 0, 6]);
    assert_eq!(ofast.count("flash.erases"), 6);
    // `fast` with lazy_merge is `ofast`.
    let lazy = run(
        "fast",
        json!({"log_blocks": 4, "lazy_merge": true}),
        4,
        writes_then_reads(&lpns, 16),
    );
    assert_eq!(lazy.count("flash.erases"), 6);
}

#[test]
fn sequential_rewrite_does_only_switches() {
    // Table II's point. 16 blocks written in order after the precondition. FAST: each offset-0 write finds the
    // SW block full and in order: a switch (1 erase); the last SW block is still pending at the end: 15
    // switches. BAST with 4 log blocks: blocks 0..3 take the free log blocks, each later block needs a victim
    // and rule (2) picks a full in-order one: a switch; the last 4 log blocks are still pending: 12 switches.
    // So FAST's switches equal BAST's plus the log blocks BAST has left to switch beyond FAST's one (3), and
    // with one log block BAST switches exactly as often as FAST.
    let lpns: Vec<u32> = (0..64).collect();
    for scheme in ["fast", "ofast"] {
        let r = run(
            scheme,
            json!({"log_blocks": 4}),
            16,
            writes_then_reads(&lpns, 64),
        );
        assert_eq!(merges(&r), [15, 0, 0, 0], "{scheme}");
        assert_eq!(r.count("flash.erases"), 15, "{scheme}");
        assert_eq!(r.count("flash.page_writes"), 64, "{scheme}");
    }
    let bast = run(
        "bast",
        json!({"log_blocks": 4}),
        16,
        writes_then_reads(&lpns, 64),
    );
    assert_eq!(merges(&bast), [12, 0, 0, 0]);
    assert_eq!(bast.count("flash.erases"), 12);
    let bast1 = run(
        "bast",
        json!({"log_blocks": 1}),
        16,
        writes_then_reads(&lpns, 64),
    );
    assert_eq!(merges(&bast1), [15, 0, 0, 0]);
}

#[test]
fn log_utilization_at_replacement() {
    // BAST, 2 log blocks: S1, S2 -> block 0's log block (2 pages); S5 -> block 1's (1 page); S9 replaces the
    // round-robin victim, block 0's (2 written of 4); S13 replaces block 1's (1 of 4). Histogram by written
    // pages: [0, 1, 1, 0, 0]; mean = (2 + 1) / (2 * 4) = 0.375.
    let r = run(
        "bast",
        json!({"log_blocks": 2}),
        4,
        writes(&[1, 2, 5, 9, 13]),
    );
    assert_eq!(histogram(&r), vec![0, 1, 1, 0, 0]);
    assert_eq!(r.num("log_utilization.mean"), 0.375);
    assert_eq!(r.count("log_utilization.replacements"), 2);
}

#[test]
fn bast_switch_partial_and_full_merge_costs() {
    // Block 1's log block holds S4, S5 in place, then S9 needs the only log block.
    // partial_merge: S6, S7 copied into the log block, old data block erased: 1 erase, 2 copies.
    // without: full merge: 4 copies, data and log block erased: 2 erases.
    // S4..S7 then S9: the victim can be switched: 1 erase, no copy.
    let r = run(
        "bast",
        json!({"log_blocks": 1, "partial_merge": true}),
        4,
        writes_then_reads(&[4, 5, 9], 16),
    );
    assert_eq!(merges(&r), [0, 1, 0, 0]);
    assert_eq!(
        (
            r.count("merges.partial.erases"),
            r.count("merges.partial.copied_pages")
        ),
        (1, 2)
    );
    let r = run(
        "bast",
        json!({"log_blocks": 1}),
        4,
        writes_then_reads(&[4, 5, 9], 16),
    );
    assert_eq!(merges(&r), [0, 0, 1, 0]);
    assert_eq!(
        (
            r.count("merges.full.erases"),
            r.count("merges.full.copied_pages")
        ),
        (2, 4)
    );
    let r = run(
        "bast",
        json!({"log_blocks": 1}),
        4,
        writes_then_reads(&[4, 5, 6, 7, 9], 16),
    );
    assert_eq!(merges(&r), [1, 0, 0, 0]);
    assert_eq!(
        (
            r.count("merges.switch.erases"),
            r.count("merges.switch.copied_pages")
        ),
        (1, 0)
    );
}

#[test]
fn fast_sw_block_cases_of_algorithm_2() {
    // Fig. 5 / Fig. 6 on block 1, then S8 (offset 0 of block 2, case 1) reclaims the SW block:
    // S4..S7: full and in order -> switch: 1 erase, 0 copies.
    // S4, S5: partly written -> partial merge (Fig. 7a): S6, S7 copied in, 1 erase, 2 copies.
    // S4, S5, S7 (case 2.2): partial merge with S7 at its offset: S6 copied, 1 erase, 1 copy.
    // S4, S5, S5 (case 2.3): full merge: S4 from SW, S5 new, S6, S7 from the data block: 3 copies, 2 erases.
    let cases: [(&[u32], [u64; 4], u64, u64); 4] = [
        (&[4, 5, 6, 7, 8], [1, 0, 0, 0], 1, 0),
        (&[4, 5, 8], [0, 1, 0, 0], 1, 2),
        (&[4, 5, 7], [0, 1, 0, 0], 1, 1),
        (&[4, 5, 5], [0, 0, 1, 0], 2, 3),
    ];
    for (lpns, kinds, erases, copies) in cases {
        let r = run(
            "fast",
            json!({"log_blocks": 2}),
            4,
            writes_then_reads(lpns, 16),
        );
        assert_eq!(merges(&r), kinds, "{lpns:?}");
        assert_eq!(r.count("flash.erases"), erases, "{lpns:?}");
        let copied: u64 = ["switch", "partial", "full"]
            .iter()
            .map(|k| r.count(&format!("merges.{k}.copied_pages")))
            .sum();
        assert_eq!(copied, copies, "{lpns:?}");
    }
}

#[test]
fn in_order_rule_sends_a_write_below_the_frontier_to_the_log() {
    // Fresh device (no precondition). Writing offset 3 of a block, then offset 1: the page at offset 1 is free
    // but below a programmed one. Without the in-order rule it is programmed in place; with it (MLC) it must
    // go to a log block, and the chip would refuse the program otherwise.
    // BAST, 1 log block, S3, S1, S7, S5: under the rule S1 takes block 0's log block, S7 goes in place, S5
    // needs a log block for block 1: the victim (block 0's, 1 page not in place) is fully merged: S1 from the
    // log and S3 from the data block copied (2 copies), data and log block erased (2 erases).
    // FAST, 1 RW block, S3, S1, S7, S5, S11, S9, S15, S13, S2: under the rule S1, S5, S9, S13 fill the RW block
    // and S2 (offset 2, below S3) replaces it: blocks 0..3 are merged (2 copies each), 4 data blocks and the
    // victim erased (5 erases). Without the rule every write goes in place: no merge, no erase.
    // Scheme, pages written, merges by kind (under the rule), erases, copies.
    type Case = (&'static str, &'static [u32], [u64; 4], u64, u64);
    let cases: [Case; 3] = [
        ("bast", &[3, 1, 7, 5], [0, 0, 1, 0], 2, 2),
        ("fast", &[3, 1, 7, 5, 11, 9, 15, 13, 2], [0, 0, 4, 0], 5, 8),
        ("ofast", &[3, 1, 7, 5, 11, 9, 15, 13, 2], [0, 0, 4, 0], 5, 8),
    ];
    for (scheme, lpns, kinds, erases, copies) in cases {
        let log_blocks = if scheme == "bast" { 1 } else { 2 };
        for sequential in [false, true] {
            let mut cfg = toy(scheme, json!({ "log_blocks": log_blocks }), 4, 4);
            cfg.device.sequential_program = Some(sequential);
            let r = run_requests(&cfg, writes_then_reads(lpns, 16)).unwrap();
            let expect = |n: u64| if sequential { n } else { 0 };
            assert_eq!(merges(&r), kinds.map(expect), "{scheme} {sequential}");
            assert_eq!(
                r.count("flash.erases"),
                expect(erases),
                "{scheme} {sequential}"
            );
            assert_eq!(
                r.count("merges.full.copied_pages"),
                expect(copies),
                "{scheme} {sequential}"
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: common::cases(24), ..ProptestConfig::default() })]

    #[test]
    fn ofast_never_erases_more_than_fast(
        lpns in prop::collection::vec(0u32..48, 1..300),
        log_blocks in 2u32..6,
        sequential_program in any::<bool>(),
    ) {
        let mut cfg = full(toy("fast", json!({"log_blocks": log_blocks}), 4, 12));
        cfg.device.sequential_program = Some(sequential_program);
        let fast = run_requests(&cfg, writes_then_reads(&lpns, 48)).unwrap();
        cfg.ftl = "ofast".into();
        let ofast = run_requests(&cfg, writes_then_reads(&lpns, 48)).unwrap();
        prop_assert!(ofast.count("flash.erases") <= fast.count("flash.erases"),
            "ofast {} fast {}", ofast.count("flash.erases"), fast.count("flash.erases"));
    }
}
