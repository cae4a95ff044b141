//! The NVRAM write cache (`ftl/nvram.rs`) in front of every registered scheme: integrity over random tagged
//! workloads for every policy, and hand-worked counts for `metadata`, `lru` and `bplru`.

mod common;

use common::{full, random_op, toy};
use ftlsim_core::ftl::SCHEMES;
use ftlsim_core::request::{Op, Request, Tag};
use ftlsim_core::sim::{run_requests, SimConfig};
use proptest::prelude::*;
use serde_json::json;

fn tagged(op: Op, lpn: u32, pages: u32, tag: Tag) -> Request {
    Request {
        tag,
        ..Request::new(0.0, op, lpn as u64 * 512, pages as u64 * 512)
    }
}

fn with_nvram(mut cfg: SimConfig, bytes: u64, policy: &str) -> SimConfig {
    cfg.nvram = Some(bytes.to_string());
    cfg.nvram_policy = policy.into();
    if policy == "region" {
        cfg.nvram_regions = Some("0-2KiB,5KiB-6KiB".into());
    }
    cfg
}

proptest! {
    #![proptest_config(ProptestConfig { cases: common::cases(24), ..ProptestConfig::default() })]

    #[test]
    fn every_policy_in_front_of_every_scheme_keeps_data(
        ops in prop::collection::vec((any::<u8>(), any::<u32>(), 1u32..6, any::<bool>()), 1..300),
        nvram_pages in 1u64..7,
        blocks in 4u32..10,
        precondition in any::<bool>(),
        flush in any::<bool>(),
    ) {
        let ppb = 4;
        let logical_pages = ppb * blocks;
        let reqs: Vec<Request> = ops
            .iter()
            .map(|&(kind, first, len, meta)| {
                let first = first % logical_pages;
                let len = len.min(logical_pages - first).max(1);
                let op = random_op(kind);
                tagged(op, first, len, if meta { Tag::Metadata } else { Tag::Data })
            })
            .collect();
        for scheme in SCHEMES {
            for policy in ["metadata", "region", "lru", "bplru"] {
                let mut cfg = with_nvram(toy(scheme.name, json!({}), ppb, blocks), nvram_pages * 512, policy);
                cfg.nvram_flush_at_end = flush;
                if precondition {
                    cfg = full(cfg);
                }
                let r = run_requests(&cfg, reqs.clone())
                    .unwrap_or_else(|e| panic!("{} {policy}: {e}", scheme.name));
                let share = r.num("nvram.absorbed_share");
                prop_assert!((0.0..=1.0).contains(&share), "{} {policy}: {share}", scheme.name);
                prop_assert!(r.count("nvram.writes_absorbed") <= r.count("host.write_pages"));
                if !flush {
                    prop_assert_eq!(r.count("nvram.flush_writes"), 0);
                }
            }
        }
    }
}

/// `page` with room enough that no garbage collection runs: flash page writes are exactly the pages the
/// NVRAM lets through.
fn roomy_page(ppb: u32, blocks: u32) -> SimConfig {
    toy("page", json!({"over_provisioning": 1.0}), ppb, blocks)
}

#[test]
fn metadata_policy_absorbs_exactly_the_metadata_writes() {
    // 30 data pages (lpn 10..40), 5 untagged pages (lpn 60..65), 50 metadata writes alternating lpn 0 and 1,
    // and reads of the metadata pages, which must return the cached tokens (the simulator checks every read).
    let mut reqs = Vec::new();
    for i in 0..50u32 {
        reqs.push(tagged(Op::Write, i % 2, 1, Tag::Metadata));
        if i < 30 {
            reqs.push(tagged(Op::Write, 10 + i, 1, Tag::Data));
        }
        if i < 5 {
            reqs.push(tagged(Op::Write, 60 + i, 1, Tag::None));
        }
        reqs.push(tagged(Op::Read, i % 2, 1, Tag::Metadata));
    }
    let mut cfg = with_nvram(roomy_page(8, 16), 1024, "metadata");
    cfg.nvram_flush_at_end = false;
    let r = run_requests(&cfg, reqs.clone()).unwrap();
    assert_eq!(r.count("host.write_pages"), 85);
    assert_eq!(r.count("nvram.writes_absorbed"), 50);
    // Everything but the 50 metadata writes reached flash, nothing else was absorbed.
    assert_eq!(r.count("flash.page_writes"), 35);
    assert_eq!(r.count("nvram.flush_writes"), 0);
    assert_eq!(r.count("nvram.evictions"), 0);
    // The 50 reads hit the NVRAM: no flash page read at all.
    assert_eq!(r.count("flash.page_reads"), 0);
    assert_eq!(r.count("cache.nvram.hits"), 48 + 50); // 48 rewrites of a cached page + 50 reads
    assert_eq!(r.count("cache.nvram.misses"), 2);
    assert!((r.num("nvram.absorbed_share") - 50.0 / 85.0).abs() < 1e-9);

    // With the end-of-trace flush the two metadata pages reach flash once each.
    cfg.nvram_flush_at_end = true;
    let r = run_requests(&cfg, reqs).unwrap();
    assert_eq!(r.count("flash.page_writes"), 37);
    assert_eq!(r.count("nvram.flush_writes"), 2);
    assert!((r.num("nvram.absorbed_share") - 48.0 / 85.0).abs() < 1e-9);
    // Flush time: 2 programs of 200 us (lee2007) and 2 NVRAM reads of 256 x 0.110 us.
    assert!(
        (r.num("time_us.flush") - (2.0 * 200.0 + 2.0 * 28.16)).abs() < 1e-6,
        "{}",
        r.num("time_us.flush")
    );
}

#[test]
fn a_data_write_to_a_cached_metadata_page_goes_to_flash_and_the_cache_forgets_it() {
    let reqs = vec![
        tagged(Op::Write, 3, 1, Tag::Metadata),
        tagged(Op::Write, 3, 1, Tag::Data),
        tagged(Op::Read, 3, 1, Tag::Data),
    ];
    let r = run_requests(&with_nvram(roomy_page(8, 4), 512, "metadata"), reqs).unwrap();
    assert_eq!(r.count("flash.page_writes"), 1);
    assert_eq!(r.count("flash.page_reads"), 1);
    assert_eq!(r.count("nvram.flush_writes"), 0);
}

#[test]
fn lru_absorbs_the_rewrites_of_a_small_hot_set() {
    // 4-page NVRAM. Ten rounds of: write hot pages 0, 1, 2, then a cold page 50 + round.
    // Round 0: 4 misses fill the cache (MRU first: 50, 2, 1, 0). Every later round: 0, 1, 2 hit; the cold
    // page misses and evicts the LRU entry, the previous cold page. So 13 misses, 27 hits, 9 evictions; the
    // flush writes 0, 1, 2 and 59: 13 flash writes for 40 host writes, absorbed share 27/40.
    let mut reqs = Vec::new();
    for round in 0..10 {
        for hot in 0..3 {
            reqs.push(tagged(Op::Write, hot, 1, Tag::None));
        }
        reqs.push(tagged(Op::Write, 50 + round, 1, Tag::None));
    }
    let r = run_requests(&with_nvram(roomy_page(8, 16), 2048, "lru"), reqs).unwrap();
    assert_eq!(r.count("cache.nvram.hits"), 27);
    assert_eq!(r.count("cache.nvram.misses"), 13);
    assert_eq!(r.count("nvram.evictions"), 9);
    assert_eq!(r.count("nvram.flush_writes"), 4);
    assert_eq!(r.count("flash.page_writes"), 13);
    assert!((r.num("nvram.absorbed_share") - 27.0 / 40.0).abs() < 1e-9);
    // Time: 13 programs x 200 us; NVRAM: 40 writes in + 13 pages read out, 28.16 us each (FeRAM, 512 B).
    let nvram_us = 53.0 * 28.16;
    assert!((r.num("time_us.nvram") - nvram_us).abs() < 1e-6);
    assert!((r.num("time_us.total") - (13.0 * 200.0 + nvram_us)).abs() < 1e-6);
}

#[test]
fn bplru_writes_the_victim_block_whole_padding_missing_pages() {
    // 4 pages a block, full device, 2-page NVRAM. Writes 1 and 2 (block 0) fill it; write 5 (block 1)
    // evicts block 0 whole: pages 0 and 3 are read from flash and written again (padding), 1 and 2 come
    // from the NVRAM: 4 programs, 2 reads. The flush writes block 1 whole: 4, 6, 7 padded (3 reads), 5
    // cached: 4 programs. Totals: 8 programs, 5 reads, 5 padding writes, 1 page flushed, 1 eviction.
    let reqs = vec![
        tagged(Op::Write, 1, 1, Tag::None),
        tagged(Op::Write, 2, 1, Tag::None),
        tagged(Op::Read, 2, 1, Tag::None),
        tagged(Op::Write, 5, 1, Tag::None),
    ];
    let r = run_requests(&with_nvram(full(roomy_page(4, 8)), 1024, "bplru"), reqs).unwrap();
    assert_eq!(r.count("flash.page_writes"), 8);
    assert_eq!(r.count("flash.page_reads"), 5);
    assert_eq!(r.count("nvram.padding_writes"), 5);
    assert_eq!(r.count("nvram.flush_writes"), 1);
    assert_eq!(r.count("nvram.evictions"), 1);
    assert_eq!(r.count("cache.nvram.hits"), 1);
}

#[test]
fn region_policy_absorbs_only_its_ranges() {
    // Regions 0-2KiB (pages 0..4) and 5KiB-6KiB (pages 10 and 11); pages 4 and 12 are just outside.
    let reqs: Vec<Request> = [0, 3, 4, 10, 12, 0, 11]
        .iter()
        .map(|&l| tagged(Op::Write, l, 1, Tag::None))
        .collect();
    let mut cfg = with_nvram(roomy_page(8, 4), 4096, "region");
    cfg.nvram_flush_at_end = false;
    let r = run_requests(&cfg, reqs).unwrap();
    assert_eq!(r.count("nvram.writes_absorbed"), 5);
    assert_eq!(r.count("flash.page_writes"), 2);
}

#[test]
fn bad_nvram_options_are_named() {
    let run = |cfg: &SimConfig| {
        run_requests(cfg, vec![tagged(Op::Write, 0, 1, Tag::None)])
            .err()
            .unwrap()
            .to_string()
    };
    let e = run(&with_nvram(roomy_page(8, 4), 1024, "lfu"));
    assert!(e.contains("lfu") && e.contains("bplru"), "{e}");
    let e = run(&with_nvram(roomy_page(8, 4), 100, "lru"));
    assert!(e.contains("512"), "{e}");
    let mut cfg = with_nvram(roomy_page(8, 4), 1024, "lru");
    cfg.nvram_policy = "region".into();
    assert!(run(&cfg).contains("nvram_regions"));
    // A range wholly past the device (32 pages of 512 B: 16 KiB) kept nothing without a word; one that runs
    // past its end keeps the pages on it.
    cfg.nvram_regions = Some("0-1KiB,16KiB-20KiB".into());
    let e = run(&cfg);
    assert!(
        e.contains("has `16KiB-20KiB`, which starts at or past the device's end (byte 16384"),
        "{e}"
    );
    cfg.nvram_regions = Some("8KiB-64KiB".into());
    assert!(run_requests(&cfg, vec![tagged(Op::Write, 20, 1, Tag::None)]).is_ok());
}
