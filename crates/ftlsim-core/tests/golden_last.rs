//! Golden cases for `last` as re-derived from MAST (002 §1, §4.2) and the LAST paper's published summaries
//! (see the header of `src/ftl/last.rs`): the request-size locality detector that does not need offset 0,
//! the recency window over random-buffer writes only, and dead-block reclamation in the hot partition. Every
//! count is worked out by hand in the comment above its assertion.
//!
//! Setup: 4 pages a block, 512 B pages, 8 logical blocks, data blocks full (precondition), so that every
//! write goes to a log block; `Sn` is logical page n (block n div 4, offset n mod 4). `log_blocks: 4` with one
//! sequential log block leaves 3 random ones: hot partition 1 block, cold 2 (half of 3, rounded down); the
//! recency window is half the random buffer's pages, 6 writes. `seq_threshold_bytes: 2048`: a request of 4
//! pages or more is sequential. Every run ends with a read of all 32 pages (the simulator checks each).

mod common;

use common::{full, page, toy};
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
