//! Golden mounts of TinyFTL (TinyFTL paper §V.B, §V.D) and the Superblock FTL (as the TinyFTL paper describes
//! it, §III): the exact spare reads, page reads and erases of a mount after a compaction / collection, and
//! after a power cut inside one, worked out by hand in ledgers. Both mounts rebuild their tables from the
//! logical page number and sequence number in every programmed page's spare area (the headers of
//! `ftl/tiny.rs` and `ftl/superblock.rs` say why), reading each block up to its first erased page.

mod common;

use common::{cases, random_op, toy, writes};
use ftlsim_core::addr::Lpn;
use ftlsim_core::config::{Geometry, Timing};
use ftlsim_core::device::Device;
use ftlsim_core::device::FlashError;
use ftlsim_core::ftl::{self, Ftl};
use ftlsim_core::request::Request;
use ftlsim_core::sim::{run_requests, SimConfig};
use proptest::prelude::*;
use serde_json::{json, Value};

/// Blocks of 4 pages of 512 B, 4 logical blocks, lee2007 timing (15 us a spare read, 2 ms an erase).
fn geometry() -> Geometry {
    Geometry {
        page_bytes: 512,
        spare_bytes: 16,
        pages_per_block: 4,
        logical_blocks: 4,
        sequential_program: true,
    }
}

fn lee2007() -> Timing {
    Timing {
        read_us: 15.0,
        spare_read_us: 15.0,
        program_us: 200.0,
        spare_program_us: 200.0,
        erase_us: 2000.0,
    }
}

/// The scheme on a fresh chip of its own size, through the `Ftl` trait (so a cut can be placed exactly).
fn fresh(scheme: &str) -> (Box<dyn Ftl>, Device) {
    let g = geometry();
    let built = ftl::build(scheme, &json!({}), &g).unwrap();
    let dev = Device::new(scheme, g, g.logical_blocks + built.extra_blocks, lee2007());
    (built.ftl, dev)
}

/// Writes `lpns` in order, the i-th with token i + 1; the write numbered `cut_in` runs with a power cut armed
/// before its `cut_before`-th flash operation, which must land. Returns the tokens each logical page must
/// read after the mount (the write cut in flight left its old value).
fn write_and_cut(
    ftl: &mut dyn Ftl,
    dev: &mut Device,
    lpns: &[u32],
    cut: Option<(usize, u64)>,
) -> Vec<Option<u64>> {
    let mut expect = vec![None; 16];
    for (i, &lpn) in lpns.iter().enumerate() {
        match cut {
            Some((n, op)) if n == i => {
                dev.arm_power_cut(Some(op));
                let e = ftl.write(Lpn(lpn), i as u64 + 1, dev).unwrap_err();
                assert!(matches!(e, FlashError::PowerCut(_)), "{e}");
                return expect;
            }
            _ => ftl.write(Lpn(lpn), i as u64 + 1, dev).unwrap(),
        }
        expect[lpn as usize] = Some(i as u64 + 1);
    }
    expect
}

/// Mounts and returns (spare reads, page reads, erases) of the mount; then every logical page reads back.
fn mount_and_check(ftl: &mut dyn Ftl, dev: &mut Device, expect: &[Option<u64>]) -> (u64, u64, u64) {
    let before = dev.counts();
    ftl.mount(dev).unwrap();
    let c = dev.counts().minus(&before);
    for (lpn, want) in expect.iter().enumerate() {
        assert_eq!(ftl.read(Lpn(lpn as u32), dev).unwrap(), *want, "lpn {lpn}");
    }
    (c.spare_reads, c.page_reads, c.erases)
}

// TinyFTL on the 4 x 4 device: 2 log blocks (logical / 2), 1 block table + the directory = 2 map pages in
// 3 map blocks (MapArea::min_blocks), 3 reserved free blocks: 8 extra blocks, 12 in all. Pool blocks 0..8
// (handed out fresh in address order, then erased ones in FIFO order), map blocks 9, 10, 11.
//
// The sequence 0 1 2 3 | 0 | 4 5 6 7 | 4 | 8 9 10 11 | 8:
//   writes 1-4   lbn 0's data block 0, pages 0-3 (lpns 0-3)
//   write 5      block 0 full: lbn 0 takes log block 1, page 0 (lpn 0)
//   writes 6-9   lbn 1's data block 2; write 10 takes log block 3 (lpn 4); the 2 log blocks are in use
//   writes 11-14 lbn 2's data block 4
//   write 15     block 4 full, no log block free: lbn 0, least recently used, is compacted (§V.A). Its log
//                does not hold every page, so a full merge: block 5 taken; op 1-8 copy lpn 0 (block 1
//                page 0), lpns 1-3 (block 0 pages 1-3) to block 5 pages 0-3; op 9 erases block 0, op 10
//                block 1; op 11-12 write block table 0 and the directory to map block 9 pages 0-1 (§V.B:
//                flushed at the end of garbage collection); lbn 2 takes log block 6; op 13 programs lpn 8.
const TINY_WRITES: [u32; 15] = [0, 1, 2, 3, 0, 4, 5, 6, 7, 4, 8, 9, 10, 11, 8];

#[test]
fn tiny_mounted_after_a_compaction() {
    // Mount ledger, one spare read per programmed page up to the first erased page of each block:
    //   map block 9: map pages 0, 1 + erased page 2 = 3; map blocks 10, 11 erased: 1 each   -> 5
    //   pool: block 0 erased 1, block 1 erased 1, block 2 full 4, block 3 (1 page) 2, block 4 full 4,
    //         block 5 full 4, block 6 (1 page) 2, blocks 7, 8 erased 1 each                 -> 20
    //   25 spare reads (25 x 15 us = 375 us); no page read, no erase.
    let (mut tiny, mut dev) = fresh("tiny");
    let expect = write_and_cut(tiny.as_mut(), &mut dev, &TINY_WRITES, None);
    let s = &dev.stats;
    assert_eq!(
        (
            s.merges.iter().map(|m| m.count).sum::<u64>(),
            dev.counts().erases
        ),
        (1, 2)
    );
    assert_eq!(dev.map_counts().page_writes, 2);
    assert_eq!(
        mount_and_check(tiny.as_mut(), &mut dev, &expect),
        (25, 0, 0)
    );
    // The same through the simulator: mount_at_end, its cost in the report.
    let r = run_requests(
        &SimConfig {
            mount_at_end: true,
            ..toy("tiny", json!({}), 4, 4)
        },
        writes(&TINY_WRITES),
    )
    .unwrap();
    assert_eq!(
        (
            r.count("config.physical_blocks"),
            r.count("mount.spare_reads"),
            r.count("mount.page_reads")
        ),
        (12, 25, 0)
    );
    assert_eq!(r.num("mount.time_us.max"), 375.0);
}

#[test]
fn tiny_mounted_after_a_cut_inside_the_compaction() {
    // Cut before op 10 of write 15 (the erase of the old log block 1): block 0 erased, block 1 holds lpn 0
    // (stale), block 5 all four copies. lbn 0 has two blocks; by age, block 1 serves as its data block (3
    // erased pages left) and block 5 as its log block. Spare reads: map blocks 3 x 1 (never written);
    // pool: block 0 1, block 1 1 + 1, blocks 2, 4, 5 4 each, block 3 2, blocks 6, 7, 8 1 each = 20.
    // 23 spare reads, no erase. Write 15 (lpn 8) was in flight: lpn 8 keeps write 11's token.
    let (mut tiny, mut dev) = fresh("tiny");
    let expect = write_and_cut(tiny.as_mut(), &mut dev, &TINY_WRITES, Some((14, 10)));
    assert_eq!(
        mount_and_check(tiny.as_mut(), &mut dev, &expect),
        (23, 0, 0)
    );
    // The old log block takes lbn 0's next three writes: no compaction, one program each.
    let before = dev.counts();
    for (i, lpn) in [1u32, 2, 3].into_iter().enumerate() {
        tiny.write(Lpn(lpn), 100 + i as u64, &mut dev).unwrap();
    }
    let d = dev.counts().minus(&before);
    assert_eq!((d.page_writes, d.erases), (3, 0));

    // Cut before op 4 of write 15 (the program of the second copy, lpn 1): block 5 holds one copy (lpn 0).
    // lbn 0 has three blocks: data 0, log 1 and the compaction target 5, which only holds copies: erased at
    // mount (1 erase), undoing the compaction. Spare reads: map 3; pool: block 0 4, block 1 2, block 2 4,
    // block 3 2, block 4 4, block 5 1 + 1, blocks 6, 7, 8 1 each = 21. 24 spare reads, 1 erase.
    let (mut tiny, mut dev) = fresh("tiny");
    let expect = write_and_cut(tiny.as_mut(), &mut dev, &TINY_WRITES, Some((14, 4)));
    assert_eq!(
        mount_and_check(tiny.as_mut(), &mut dev, &expect),
        (24, 0, 1)
    );
}

// Superblock on the 4 x 4 device: one superblock of N = 4 logical blocks; 2 extra blocks (logical / 2) and
// 1 free block in reserve: 3 extra blocks, 7 in all; a superblock may hold 4 + 2 = 6. Blocks are taken fresh
// in address order.
//   writes 1-16   lpns 0-15 fill blocks 0-3
//   writes 17-20  lpns 0 1 2 4 open block 4 (5 blocks < 6, 2 free > 1 in reserve)
//   writes 21-24  lpns 5 6 8 9 open block 5; valid pages now: block 0 1 (lpn 3), block 1 1 (lpn 7),
//                 block 2 2, block 3 4
//   write 25      lpn 12: block 5 full, 6 blocks: collect the fewest-valid full block, block 0: op 1-2 copy
//                 lpn 3 to a fresh block 6 (the last free one), op 3 erases block 0; op 4 programs lpn 12 in
//                 block 6 page 1.
const SUPERBLOCK_WRITES: [u32; 25] = [
    0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 4, 5, 6, 8, 9, 12,
];

#[test]
fn superblock_mounted_after_a_collection() {
    // Spare reads: block 0 erased 1, blocks 1-5 full 4 each = 20, block 6 (2 pages) 3: 24 (360 us).
    let (mut sb, mut dev) = fresh("superblock");
    let expect = write_and_cut(sb.as_mut(), &mut dev, &SUPERBLOCK_WRITES, None);
    assert_eq!((dev.stats.gc_runs, dev.stats.gc_copied_pages), (1, 1));
    assert_eq!(mount_and_check(sb.as_mut(), &mut dev, &expect), (24, 0, 0));
    let r = run_requests(
        &SimConfig {
            mount_at_end: true,
            ..toy("superblock", json!({}), 4, 4)
        },
        writes(&SUPERBLOCK_WRITES),
    )
    .unwrap();
    assert_eq!(
        (
            r.count("config.physical_blocks"),
            r.count("mount.spare_reads")
        ),
        (7, 24)
    );
    assert_eq!(r.num("mount.time_us.max"), 360.0);
}

#[test]
fn superblock_mount_finishes_a_collection_cut_before_its_erase() {
    // Cut before op 3 of write 25 (the erase of block 0): every block holds pages, none is free, and the
    // superblock has 7 blocks. Spare reads: blocks 0-5 full 4 each = 24, block 6 (1 page) 2: 26. With no
    // free block the mount finishes the collection: its victim, block 0, has no valid page left (lpn 3 was
    // copied): 1 erase, no copy.
    let (mut sb, mut dev) = fresh("superblock");
    let expect = write_and_cut(sb.as_mut(), &mut dev, &SUPERBLOCK_WRITES, Some((24, 3)));
    assert_eq!(mount_and_check(sb.as_mut(), &mut dev, &expect), (26, 0, 1));
    // It runs on: the next 40 writes all land.
    for i in 0..40u32 {
        sb.write(Lpn(i * 5 % 16), 1000 + i as u64, &mut dev)
            .unwrap();
    }
}

/// Crash test of the default parameters (power.rs crash-tests variants): random workloads on a 16-block
/// toy device, 40 cuts each, with and without an NVRAM cache, and with torn programs.
fn crash(scheme: &str, params: Value, nvram: bool, seed: u64) -> SimConfig {
    SimConfig {
        power_cuts: 40,
        power_cut_seed: seed,
        nvram: nvram.then(|| "4KiB".to_string()),
        ..toy(scheme, params, 4, 16)
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(2)))]

    #[test]
    fn default_tiny_and_superblock_survive_every_cut(
        ops in prop::collection::vec((any::<u8>(), any::<u16>(), any::<u8>()), 200..600),
        seed in any::<u64>())
    {
        let reqs: Vec<Request> = ops
            .iter()
            .map(|&(kind, lpn, pages)| {
                let lpn = lpn as u64 % 64;
                let pages = (pages as u64 % 3 + 1).min(64 - lpn);
                Request::new(0.0, random_op(kind), lpn * 512, pages * 512)
            })
            .collect();
        for scheme in ["tiny", "superblock"] {
            for (nvram, torn) in [(false, false), (true, false), (false, true)] {
                let mut cfg = crash(scheme, json!({}), nvram, seed);
                cfg.torn_pages = torn;
                let r = run_requests(&cfg, reqs.clone())
                    .unwrap_or_else(|e| panic!("{scheme} nvram {nvram} torn {torn}: {e}"));
                prop_assert_eq!(r.count("power.cuts"), r.count("power.cuts_survived"));
                prop_assert_eq!(r.count("power.pages_checked"), r.count("power.cuts") * 64);
            }
        }
    }
}

#[test]
fn tiny_cuts_land_inside_map_write_backs() {
    // Small block tables (2 entries) and one cache unit: dirty evictions and the flush after every
    // compaction write map pages often, so some cuts land on them; each is survived.
    let reqs: Vec<Request> = (0..3000u64)
        .map(|i| {
            Request::new(
                0.0,
                ftlsim_core::request::Op::Write,
                (i * 7 % 64) * 512,
                512,
            )
        })
        .collect();
    let params = json!({"log_blocks": 3, "block_table_cache_units": 1, "page_table_cache_entries": 8,
                        "block_table_entries": 2, "page_table_entries": 2});
    let mut cfg = crash("tiny", params, false, 9);
    cfg.power_cuts = 300;
    let r = run_requests(&cfg, reqs).unwrap();
    assert_eq!(r.count("power.cuts"), r.count("power.cuts_survived"));
    assert!(
        r.count("power.cuts_in_map_io") > 0,
        "{}",
        r.count("power.cuts_in_map_io")
    );
    assert!(r.count("power.cuts_in_merge_or_gc") > 20);
}
