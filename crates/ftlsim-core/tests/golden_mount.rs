//! Golden mounts of the log-block schemes after the FAST paper's (Lee et al. 2007) §2.4 examples, with a power
//! cut placed by hand inside a merge: the exact spare reads, page reads, programs and erases of the mount,
//! worked out in a ledger above each assertion, and every logical page read back afterwards.
//!
//! Device: 512 B pages, 4 pages a block, lee2007 timing (spare read 15 us, page read 15 us, program 200 us,
//! erase 2 ms). Every logical page is first written once in place (the paper's full data blocks): logical
//! block `b` takes physical block `b` (the free pool hands out fresh blocks in address order) and logical page
//! `n` (`Sn`) holds token `n + 1`. Sequence numbers are the chip's program counter: the 16 first writes are
//! 1..16.

use ftlsim_core::addr::{Lpn, Token};
use ftlsim_core::config::{Geometry, Timing};
use ftlsim_core::device::Device;
use ftlsim_core::device::FlashError;
use ftlsim_core::ftl::{build, Ftl};
use ftlsim_core::stats::FlashCounts;
use serde_json::json;

const LEE2007: Timing = Timing {
    read_us: 15.0,
    spare_read_us: 15.0,
    program_us: 200.0,
    spare_program_us: 200.0,
    erase_us: 2000.0,
};

/// A scheme on 4 logical blocks of 4 pages, every logical page written once; returns its physical blocks too.
fn preconditioned(scheme: &str, params: serde_json::Value) -> (Box<dyn Ftl>, Device, u32) {
    let g = Geometry {
        page_bytes: 512,
        spare_bytes: 16,
        pages_per_block: 4,
        logical_blocks: 4,
        sequential_program: false,
    };
    let built = build(scheme, &params, &g).unwrap();
    let blocks = g.logical_blocks + built.extra_blocks;
    let mut dev = Device::new(scheme, g, blocks, LEE2007);
    let mut ftl = built.ftl;
    for lpn in 0..16 {
        ftl.write(Lpn(lpn), lpn as Token + 1, &mut dev).unwrap();
    }
    (ftl, dev, blocks)
}

/// Writes `(lpn, token)` in order.
fn write_all(ftl: &mut dyn Ftl, dev: &mut Device, writes: &[(u32, Token)]) {
    for &(lpn, token) in writes {
        ftl.write(Lpn(lpn), token, dev).unwrap();
    }
}

/// Writes `lpn` with the power cut before the `op`-th flash operation of the write; the write must fail there.
fn cut_write(ftl: &mut dyn Ftl, dev: &mut Device, lpn: u32, token: Token, op: u64) {
    dev.arm_power_cut(Some(op));
    match ftl.write(Lpn(lpn), token, dev) {
        Err(FlashError::PowerCut(at)) => assert_eq!(at.op, op),
        other => panic!("the cut did not land in the write: {other:?}"),
    }
    dev.arm_power_cut(None);
}

/// Mounts and returns what the mount cost: (spare reads, page reads, programs, erases) and its time in us.
fn mount(ftl: &mut dyn Ftl, dev: &mut Device) -> ([u64; 4], f64) {
    let (before, before_us) = (dev.counts(), dev.elapsed_us());
    ftl.mount(dev).unwrap();
    let d: FlashCounts = dev.counts().minus(&before);
    (
        [d.spare_reads, d.page_reads, d.page_writes, d.erases],
        dev.elapsed_us() - before_us,
    )
}

/// Every logical page reads `expected(lpn)`.
fn reads(ftl: &mut dyn Ftl, dev: &mut Device, expected: impl Fn(u32) -> Token) {
    for lpn in 0..16 {
        assert_eq!(
            ftl.read(Lpn(lpn), dev).unwrap(),
            Some(expected(lpn)),
            "S{lpn}"
        );
    }
}

#[test]
fn fast_mounts_inside_the_partial_merge_of_the_hot_block_pattern() {
    // §2.4's hot-block pattern S0, S2, S1, S3, S1, S0, S2, S3 under Algorithm 2 (golden_fast.rs replays it
    // without a cut), 3 log blocks (1 SW + 2 RW): 4 + 3 + 1 = 8 physical blocks; blocks 4..7 are free.
    let (mut ftl, mut dev, blocks) = preconditioned("fast", json!({"log_blocks": 3}));
    assert_eq!(blocks, 8);
    let ftl = ftl.as_mut();
    // S0 = 101 (case 1): SW block 4, page 0, tagged SEQ_LOG_AUX in its spare area (seq 17).
    write_all(ftl, &mut dev, &[(0, 101)]);
    // S2 = 102 (case 2.2): partial merge of block 4. Its operations: (1) spare read of block 0 page 1 and
    // (2) of page 3 (no log copy: does the data block hold them?), (3) read block 0 page 1, (4) program it to
    // block 4 page 1 (seq 18, untagged), (5) program S2 at block 4 page 2, (6-7) copy page 3, (8) erase
    // block 0. The cut lands before (5): block 4 holds S0 (tagged) and the copy of S1; block 0 still holds
    // S0..S3.
    cut_write(ftl, &mut dev, 2, 102, 5);
    // The mount reads every spare area: 8 blocks x 4 = 32 spare reads. Blocks 1..3 are the data blocks of
    // logical blocks 1..3, blocks 5..7 are erased (free). Logical block 0 has block 0 (untagged, first
    // untagged page seq 1) and block 4 (mixed: first untagged page seq 18): block 4 is the data block (a
    // partial merge's target), block 0 the block it replaces. The merge is finished: block 4 misses offsets
    // 2 and 3, whose newest copies are block 0's (seq 3, 4): 2 page reads, 2 programs; block 0 is erased.
    // Time: 32 x 15 + 2 x 15 + 2 x 200 + 2,000 = 2,910 us.
    let (cost, us) = mount(ftl, &mut dev);
    assert_eq!(cost, [32, 2, 2, 1]);
    assert_eq!(us, 2910.0);
    // S0 is acknowledged (101); S2 was in flight and reads its old token (3).
    reads(ftl, &mut dev, |l| if l == 0 { 101 } else { l as Token + 1 });
    // The rest of the pattern, from the rebuilt tables (free pool: blocks 5, 6, 7, then 0):
    //  S1 = 103, S3 = 104, S1 = 105 (case 3): RW block 5, pages 0..2.
    //  S0 = 106 (case 1): SW block 6, page 0.
    //  S2 = 107 (case 2.2): partial merge of block 6 from RW block 5 (S1 = 105, S3 = 104) and S2; block 4
    //  erased; RW block 5's pages become "-1".
    //  S3 = 108 (case 3): RW block 5, page 3.
    write_all(
        ftl,
        &mut dev,
        &[(1, 103), (3, 104), (1, 105), (0, 106), (2, 107), (3, 108)],
    );
    // A clean mount: 32 spare reads and nothing to finish. The sector map is replayed in sequence order:
    // RW pages 0..2 (programmed before data block 6's first page) are "-1"; page 3 (S3 = 108) is live.
    let (cost, _) = mount(ftl, &mut dev);
    assert_eq!(cost, [32, 0, 0, 0]);
    let now = |l: u32| match l {
        0 => 106,
        1 => 105,
        2 => 107,
        3 => 108,
        l => l as Token + 1,
    };
    reads(ftl, &mut dev, now);
    // The RW ring goes on from the rebuilt tail: S1 = 109 opens RW slot 1 (RW block 5 is full), no merge.
    let erases = dev.counts().erases;
    write_all(ftl, &mut dev, &[(1, 109)]);
    assert_eq!(dev.counts().erases, erases);
    reads(ftl, &mut dev, |l| if l == 1 { 109 } else { now(l) });
}

#[test]
fn fast_mount_keeps_an_sw_page_newer_than_the_rw_victims_merge() {
    // FAST, 2 log blocks (1 SW + 1 RW): 4 + 2 + 1 = 7 physical blocks; blocks 4..6 free.
    //  S1 = 101 (case 3): RW block 4, page 0.            S0 = 102 (case 1): SW block 5, page 0 (seq 18).
    //  S5, S6, S7 = 103..105 (case 3): RW block 4 full.
    //  S9 = 106: the RW victim (block 4) is replaced (§3.4, eager): logical block 0 is fully merged into block
    //  6 (S0 from the SW block, S1 from RW, S2 and S3 from block 0; block 0 erased) without consuming the SW
    //  block; logical block 1 into block 0 (block 1 erased); block 4 erased; S9 opens RW block 1.
    //  S1 = 107 (case 2.1): appended to the SW block at page 1 (seq 29, newer than block 6's copies).
    let (mut ftl, mut dev, blocks) = preconditioned("fast", json!({"log_blocks": 2}));
    assert_eq!(blocks, 7);
    let ftl = ftl.as_mut();
    write_all(
        ftl,
        &mut dev,
        &[
            (1, 101),
            (0, 102),
            (5, 103),
            (6, 104),
            (7, 105),
            (9, 106),
            (1, 107),
        ],
    );
    // S3 = 108 (case 2.2): partial merge of the SW block around its run 0..2: (1) spare read of block 6 page 2,
    // (2-3) copy it to block 5 page 2, (4) program S3 at page 3, (5) erase block 6. The cut lands before (4).
    cut_write(ftl, &mut dev, 3, 108, 4);
    // Mount: 7 x 4 = 28 spare reads. Logical block 0 has block 6 (untagged, first page seq 19) and block 5
    // (S0, S1 tagged; the copy of S2 untagged, seq 31): block 5 became a data block last, so it is the data
    // block although block 6 was programmed after its first page; block 6 is being replaced. Finishing:
    // block 5 misses offset 3, newest in block 6: 1 page read, 1 program; block 6 erased. (Taking block 6 for
    // the data block would read S1's older copy, 101: the acknowledged 107 would be lost.)
    let (cost, us) = mount(ftl, &mut dev);
    assert_eq!(cost, [28, 1, 1, 1]);
    assert_eq!(us, 28.0 * 15.0 + 15.0 + 200.0 + 2000.0);
    let tokens = |l: u32| match l {
        0 => 102,
        1 => 107,
        5 => 103,
        6 => 104,
        7 => 105,
        9 => 106,
        l => l as Token + 1, // S3 was in flight: its old token
    };
    reads(ftl, &mut dev, tokens);
}

#[test]
fn bast_mounts_inside_a_full_merge_of_the_thrash_pattern() {
    // §2.4's thrash pattern S1, S5, S9, S13 with 2 log blocks: 4 + 3 = 7 physical blocks (log blocks + 1
    // beat the paper chip's 5); blocks 4..6 free.
    //  S1 = 101: log block 4 for logical block 0 (page 0, tagged, seq 17). S5 = 102: log block 5 (seq 18).
    let (mut ftl, mut dev, blocks) = preconditioned("bast", json!({"log_blocks": 2}));
    assert_eq!(blocks, 7);
    let ftl = ftl.as_mut();
    write_all(ftl, &mut dev, &[(1, 101), (5, 102)]);
    // S9 = 103: no free log slot, no switchable log block: round robin takes logical block 0's, fully merged
    // into block 6: (1) read block 0 page 0, (2) program block 6 page 0 (seq 19), (3-4) S1 from log block 4,
    // (5-6) S2, (7-8) S3, (9) erase block 0, (10) erase block 4, (11) program S9. The cut lands before (5).
    cut_write(ftl, &mut dev, 9, 103, 5);
    // Mount: 7 x 4 = 28 spare reads (BAST keeps no map block). Logical block 0 has block 0 (untagged, first
    // page seq 1), log block 4 (tagged, seq 17) and block 6 (untagged from seq 19): block 6 is the data block;
    // block 4's last page (17) is older than block 6's first, so it is no live log block: both it and block 0
    // are being replaced. Finishing: offsets 2 and 3 from block 0 (2 page reads, 2 programs); blocks 0 and 4
    // erased. Logical block 1 keeps log block 5 (opened after its data block): log slot 0.
    let (cost, us) = mount(ftl, &mut dev);
    assert_eq!(cost, [28, 2, 2, 2]);
    assert_eq!(us, 28.0 * 15.0 + 2.0 * 15.0 + 2.0 * 200.0 + 2.0 * 2000.0);
    let after = |l: u32| match l {
        1 => 101,
        5 => 102,
        l => l as Token + 1, // S9 was in flight: its old token
    };
    reads(ftl, &mut dev, after);
    // The pattern goes on: S9 = 104 takes the free log slot 1 (block 0, from the pool: blocks 0 then 4), no
    // merge; S13 = 105 merges the round-robin victim, slot 0 (logical block 1: 4 copies, 2 erases).
    let erases = dev.counts().erases;
    write_all(ftl, &mut dev, &[(9, 104), (13, 105)]);
    assert_eq!(dev.counts().erases - erases, 2);
    let (cost, _) = mount(ftl, &mut dev);
    assert_eq!(cost, [28, 0, 0, 0]);
    reads(ftl, &mut dev, |l| match l {
        9 => 104,
        13 => 105,
        l => after(l),
    });
}
