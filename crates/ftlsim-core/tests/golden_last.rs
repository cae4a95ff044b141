//! Golden cases for `last` as re-derived from MAST (002 §1, §4.2) and the LAST paper's published summaries
//! (see the header of `src/ftl/last.rs`): the request-size locality detector that does not need offset 0,
//! the recency window over random-buffer writes only, dead-block reclamation in the hot partition, the cold
//! partition's victim of lowest associativity, and the hot/cold split resized by the cost of each side's last
//! reclaim. Every count is worked out by hand in the comment above its assertion.
//!
//! Setup: 4 pages a block, 512 B pages, 8 logical blocks, data blocks full (precondition), so that every
//! write goes to a log block; `Sn` is logical page n (block n div 4, offset n mod 4). `log_blocks: 4` with one
//! sequential log block leaves 3 random ones: hot partition 1 block, cold 2 (half of 3, rounded down); the
//! recency window is half the random buffer's pages, 6 writes. `seq_threshold_bytes: 2048`: a request of 4
//! pages or more is sequential. Every run ends with a read of all 32 pages (the simulator checks each).

mod common;

use common::{full, page, toy, writes};
use ftlsim_core::report::Report;
use ftlsim_core::request::{Op, Request};
use ftlsim_core::sim::run_requests;
use serde_json::json;

fn run(reqs: Vec<Request>) -> Report {
    let mut all = reqs;
    all.extend((0..32).map(|l| page(Op::Read, l)));
    let params = json!({"log_blocks": 4, "seq_log_blocks": 1, "seq_threshold_bytes": 2048});
    run_requests(&full(toy("last", params, 4, 8)), all).unwrap_or_else(|e| panic!("last: {e}"))
}

/// One write request of `pages` pages from logical page `first`.
fn request(first: u32, pages: u32) -> Request {
    Request::new(0.0, Op::Write, first as u64 * 512, pages as u64 * 512)
}

/// Victims reclaimed: dead, cold, hot.
fn victims(r: &Report) -> [u64; 3] {
    ["dead", "cold", "hot"].map(|k| r.count(&format!("last.victims.{k}")))
}

/// The split at the end (hot and cold blocks) and how often each side grew.
fn areas(r: &Report) -> [u64; 4] {
    [
        "area_blocks.hot",
        "area_blocks.cold",
        "resizes.grow_hot",
        "resizes.grow_cold",
    ]
    .map(|k| r.count(&format!("last.{k}")))
}

fn merges(r: &Report) -> [u64; 4] {
    ["switch", "partial", "full", "dead"].map(|k| r.count(&format!("merges.{k}")))
}

#[test]
fn a_large_request_opens_a_sequential_log_block_mid_block() {
    // One request S5..S8 (4 pages: large). S5, offset 1 of block 1: a sequential log block for block 1 with
    // its run starting at offset 1 (X[1] = S5); S6, S7 continue it (X holds offsets 1..4). S8, offset 0 of
    // block 2: the only sequential slot is taken, so the oldest block (X) is reclaimed: not a switch (offset 0
    // is missing), a partial merge that copies S4 from the data block into X[0] after reading its spare area
    // (1 spare read, 1 copy) and erases the old data block (1 erase); then a new sequential block takes S8.
    // Programs: 4 host + 1 copy = 5. No random-buffer write.
    let r = run(vec![request(5, 4)]);
    assert_eq!(merges(&r), [0, 1, 0, 0]);
    assert_eq!(r.count("merges.partial.copied_pages"), 1);
    assert_eq!(r.count("flash.erases"), 1);
    assert_eq!(r.count("flash.page_writes"), 5);
    assert_eq!(r.count("flash.spare_reads"), 1);
    assert_eq!(r.count("last.hot_writes"), 0);
}

#[test]
fn the_recency_window_counts_random_buffer_writes_only() {
    // S1 (small: random buffer, random write 1, never written before: cold). A large request S8..S15: two
    // sequential runs of whole blocks (blocks 2 and 3), each switched as soon as it is full (2 switches, 2
    // erases of the old data blocks). S1 again: random write 2, its previous random write was 1, 1 <= 6 ago:
    // hot. Counting every page write instead, S1's previous write would be 9 writes ago, beyond the window
    // of 6, and it would be cold. Programs: 10, no copy.
    let r = run(vec![page(Op::Write, 1), request(8, 8), page(Op::Write, 1)]);
    assert_eq!(r.count("last.hot_writes"), 1);
    assert_eq!(merges(&r), [2, 0, 0, 0]);
    assert_eq!(r.count("flash.erases"), 2);
    assert_eq!(r.count("flash.page_writes"), 10);
}

#[test]
fn a_dead_hot_block_is_reclaimed_with_one_erase() {
    // Random writes S1, S1, S2, S2, S3, S3, S1: each first write is cold (cold block A: S1, S2, S3), each
    // rewrite hot (1 random write after the last: hot block H: S1, S2, S3, S1). A large request S0..S3
    // rewrites block 0 in a sequential log block: S1, S2, S3 there supersede their H copies, so H has no live
    // page; full at S3, the block is switched at once (1 erase: the old data block), and block 0's log pages
    // are merged. S5: cold (A's last page). S5 again: hot; H is full and the hot partition is at its size
    // (1 block): it reclaims its own block, a dead one: a dead merge, 1 erase, no copy; a new hot block takes
    // S5. Programs: 7 + 4 + 2 = 13; erases 2; no copy.
    let mut reqs: Vec<Request> = [1, 1, 2, 2, 3, 3, 1]
        .iter()
        .map(|&l| page(Op::Write, l))
        .collect();
    reqs.push(request(0, 4));
    reqs.push(page(Op::Write, 5));
    reqs.push(page(Op::Write, 5));
    let r = run(reqs);
    assert_eq!(r.count("last.hot_writes"), 5);
    assert_eq!(merges(&r), [1, 0, 0, 1]);
    assert_eq!(r.count("last.victims.dead"), 1);
    assert_eq!(
        (r.count("last.victims.hot"), r.count("last.victims.cold")),
        (0, 0)
    );
    assert_eq!(r.count("flash.erases"), 2);
    assert_eq!(r.count("flash.page_writes"), 13);
    assert_eq!(r.count("merges.dead.copied_pages"), 0);
}

#[test]
fn the_cold_victim_is_the_block_of_lowest_associativity() {
    // Nine random writes, each to a page never written before: all cold (no previous random-buffer write),
    // the hot partition stays empty. S1, S5, S9, S13 fill cold block A (opened first; logical blocks 0, 1,
    // 2, 3: associativity 4). S2, S3, S6, S7 fill cold block B (logical blocks 0 and 1: associativity 2).
    // S17: the cold partition's open block B is full and it holds its size (2 blocks; the free slot is not
    // its to take), so it reclaims one of its own. Neither is dead (4 live pages each); the victim is B,
    // the lower associativity, although A is older (oldest-first would merge 4 logical blocks). B's live
    // logical blocks, in page order, 0 then 1, are fully merged:
    //   block 0: S0 from the data block (its spare area read first: 1 spare read), S1 from A, S2 and S3 from
    //            B: 4 copies, the old data block erased (1 erase);
    //   block 1: S4 from the data block (1 spare read), S5 from A, S6 and S7 from B: 4 copies, 1 erase, then
    //            B erased (1 erase, counted in this last merge).
    // S17 then opens a new cold block in B's slot. Totals: 2 full merges, 8 copies, 3 erases, 2 spare reads,
    // 9 host + 8 copied = 17 programs; one cold victim, no hot or dead one; no resize (the hot partition has
    // no reclaim cost yet).
    let r = run(writes(&[1, 5, 9, 13, 2, 3, 6, 7, 17]));
    assert_eq!(merges(&r), [0, 0, 2, 0]);
    assert_eq!(r.count("merges.full.copied_pages"), 8);
    assert_eq!(r.count("merges.full.erases"), 3);
    assert_eq!(r.count("flash.erases"), 3);
    assert_eq!(r.count("flash.spare_reads"), 2);
    assert_eq!(r.count("flash.page_writes"), 17);
    assert_eq!(
        victims(&r),
        [0, 1, 0],
        "dead, cold, hot victims: one cold (B)"
    );
    assert_eq!(r.count("last.hot_writes"), 0);
    assert_eq!(areas(&r), [1, 2, 0, 0]);
}

#[test]
fn the_costlier_partition_grows_and_the_other_gives_a_block_back() {
    // Random writes w1..w18 (window 6: a page is hot when its previous random-buffer write is at most 6
    // random-buffer writes ago). Hot partition 1 block, cold 2; slots 0, 1, 2 start free.
    //   w1-w4   S1, S5, S9, S13: new pages, cold: cold block A (slot 0), full.
    //   w5-w8   S1, S5, S9, S13 again, 4 writes after each first: hot: hot block H (slot 1), full. Every page
    //           of A is superseded: A is dead.
    //   w9-w12  S19, S18, S17, S16: new, cold: cold block B (slot 2: the cold partition is below its size),
    //           full (logical block 4 only, out of order).
    //   w13     S21: new, cold. B is full, no slot is free, the cold partition holds its size: it reclaims
    //           one of its own, the dead A first: a dead merge, 1 erase, no copy. Cold cost: 1 erase =
    //           2,000 us. No resize yet (the hot side has no cost). S21 opens a cold block in slot 0.
    //   w14     S13: its previous random write is w8, 6 <= 6 ago: hot. H is full, no slot free, the hot
    //           partition holds its size (1): it reclaims its own. H is not dead (4 live pages): its oldest
    //           block, H, fully merged, logical blocks 0, 1, 2, 3 in page order; each takes its offsets 0, 2,
    //           3 from the data block (3 spare reads) and offset 1 from H: 4 copies and the old data block's
    //           erase, H's erase counted in the last: 4 full merges, 16 copies, 12 spare reads, 5 erases.
    //           Hot cost: 12 x 15 + 16 x 15 + 16 x 200 + 5 x 2,000 = 13,620 us > 2,000 us: the hot partition
    //           grows to 2 blocks, the cold one shrinks to 1. S13 opens a hot block in slot 1.
    //   w15-w17 S13 thrice, hot: the hot block fills.
    //   w18     S13, hot. The hot block is full and no slot is free, but the hot partition (1 block) is below
    //           its new size (2) and the cold one, above its size (2 blocks of 1), has a full block: the cold
    //           partition gives one back. Its only full block is B (slot 0's block holds S21 alone): B's one
    //           logical block, 4, fully merged from B alone: 4 copies, no spare read, 2 erases (old data
    //           block, B). Cold cost 4 x 15 + 4 x 200 + 2 x 2,000 = 4,860 us, still below the hot side's, but
    //           the cold partition is at its floor of one block: no resize. S13 opens a hot block in slot 2.
    // Totals: merges: 5 full, 1 dead; 20 copies; 1 + 5 + 2 = 8 erases; 12 spare reads; 18 host + 20 copied =
    // 38 programs; victims: 1 dead, 1 cold (B), 1 hot (H); hot writes w5-w8 and w14-w18: 9; the split ends at
    // hot 2, cold 1 after one resize. Without the resize, w18 would have merged the hot block instead.
    let r = run(writes(&[
        1, 5, 9, 13, 1, 5, 9, 13, 19, 18, 17, 16, 21, 13, 13, 13, 13, 13,
    ]));
    assert_eq!(merges(&r), [0, 0, 5, 1]);
    assert_eq!(r.count("merges.full.copied_pages"), 20);
    assert_eq!(r.count("merges.dead.copied_pages"), 0);
    assert_eq!(r.count("flash.erases"), 8);
    assert_eq!(r.count("flash.spare_reads"), 12);
    assert_eq!(r.count("flash.page_writes"), 38);
    assert_eq!(victims(&r), [1, 1, 1], "dead, cold, hot victims");
    assert_eq!(r.count("last.hot_writes"), 9);
    assert_eq!(areas(&r), [2, 1, 1, 0], "hot, cold, grown hot, grown cold");
}
