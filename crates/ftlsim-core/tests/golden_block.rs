//! Golden counts of the block-mapped baseline (FAST paper, Lee et al. 2007, §2.1 "block-level address
//! mapping"): a write in place costs one program; an overwrite copies every other written page of the logical
//! block to a free block, programs the new data at its offset and erases the old block. Each ledger is worked
//! out by hand above its assertion.
//!
//! Device: 4 logical blocks of 4 pages of 512 B (the scheme adds one physical block), lee2007 timing (page
//! read 15 us, program 200 us, erase 2 ms).

mod common;

use common::{page, toy};
use ftlsim_core::request::Op;
use ftlsim_core::sim::run_requests;
use serde_json::json;

/// (page reads, page programs, erases, modelled time in us) of a run.
fn costs(cfg: &ftlsim_core::sim::SimConfig, ops: &[(Op, u32)]) -> (u64, u64, u64, f64) {
    let reqs = ops.iter().map(|&(op, lpn)| page(op, lpn)).collect();
    let r = run_requests(cfg, reqs).unwrap();
    (
        r.count("flash.page_reads"),
        r.count("flash.page_writes"),
        r.count("flash.erases"),
        r.num("time_us.total"),
    )
}

#[test]
fn an_overwrite_copies_the_block_and_erases_the_old_one() {
    // W0 W1 W2: logical block 0 takes a free block, three programs in place.
    // W1 again: a free block takes copies of offsets 0 and 2 (2 reads, 2 programs) and the new offset 1
    //   (1 program); the old block is erased.
    // R1: one read. R3: the data block's page 3 is read although never programmed (no per-page lookup).
    // W5: logical block 1 takes a free block, one program.
    // Reads 2 + 2 = 4, programs 3 + 3 + 1 = 7, erases 1: 4 x 15 + 7 x 200 + 2000 = 3,460 us.
    let ops = [
        (Op::Write, 0),
        (Op::Write, 1),
        (Op::Write, 2),
        (Op::Write, 1),
        (Op::Read, 1),
        (Op::Read, 3),
        (Op::Write, 5),
    ];
    assert_eq!(
        costs(&toy("block", json!({}), 4, 4), &ops),
        (4, 7, 1, 3_460.0)
    );
}

#[test]
fn under_the_in_order_rule_a_free_page_below_the_frontier_is_an_overwrite() {
    // W0 W2: two programs in place (offset 1 left free). W1: offset 1 is free but below the block's highest
    // programmed page, so under the MLC rule it is written as an overwrite: copies of offsets 0 and 2 (2 reads,
    // 2 programs), the new offset 1 (1 program), one erase. Without the rule it is a third program in place.
    // In order: 2 x 15 + 5 x 200 + 2000 = 3,030 us; out of order: 3 x 200 = 600 us.
    let ops = [(Op::Write, 0), (Op::Write, 2), (Op::Write, 1)];
    for (in_order, want) in [(true, (2, 5, 1, 3_030.0)), (false, (0, 3, 0, 600.0))] {
        let mut cfg = toy("block", json!({}), 4, 4);
        cfg.device.sequential_program = Some(in_order);
        assert_eq!(costs(&cfg, &ops), want, "in order {in_order}");
    }
}
