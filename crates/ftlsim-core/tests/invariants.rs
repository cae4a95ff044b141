//! The invariant suite: every registered scheme, over random workloads on toy devices, keeps every host
//! read equal to the last write (the simulator checks it on every read), breaks no NAND rule (the chip
//! refuses), and its counts add up.

mod common;

use common::{full, random_op, toy};
use ftlsim_core::ftl::SCHEMES;
use ftlsim_core::request::{Op, Request};
use ftlsim_core::sim::run_requests;
use proptest::prelude::*;

/// Parameter sets to check for each scheme beyond its defaults (small log-block counts stress merges).
fn variants(scheme: &str) -> Vec<serde_json::Value> {
    let mut v = vec![serde_json::json!({})];
    match scheme {
        "page" => {
            v.push(serde_json::json!({"over_provisioning": 0.0}));
            v.push(serde_json::json!({"over_provisioning": 0.0, "gc_frontier": true}));
            v.push(serde_json::json!({"over_provisioning": 0.0, "victim": "cost-benefit"}));
            v.push(serde_json::json!({"gc_frontier": true, "victim": "cost-benefit", "wear_leveling_threshold": 1}));
            v.push(serde_json::json!({"over_provisioning": 0.0, "wear_leveling_threshold": 2, "gc_reserve_blocks": 2}));
        }
        "dftl" => {
            // Tiny CMTs and translation pages of 2 and 4 entries: misses, dirty evictions, batch updates and
            // translation-block GC everywhere. Translation pages of 2 entries add half the logical pages again
            // as map pages, so those runs get spare capacity to match.
            v.push(
                serde_json::json!({"cmt_entries": 1, "entry_bytes": 256, "over_provisioning": 1.0}),
            );
            v.push(
                serde_json::json!({"cmt_entries": 2, "entry_bytes": 256, "over_provisioning": 0.5}),
            );
            v.push(
                serde_json::json!({"cmt_entries": 5, "entry_bytes": 128, "over_provisioning": 0.25,
                                      "victim": "cost-benefit"}),
            );
            v.push(serde_json::json!({"cmt_entries": 3, "over_provisioning": 0.0}));
            // PSU FlashSim's four rules.
            v.push(
                serde_json::json!({"cmt_entries": 5, "entry_bytes": 128, "over_provisioning": 0.25,
                                      "cmt_policy": "age", "writeback": "entry", "gc": "burst",
                                      "lazy_copy_dirty": false}),
            );
        }
        "bast" => {
            v.push(serde_json::json!({"log_blocks": 1}));
            v.push(serde_json::json!({"log_blocks": 2, "partial_merge": true}));
            v.push(serde_json::json!({"log_blocks": 3}));
        }
        "logblock-zoned" => {
            v.push(serde_json::json!({"zone_blocks": 1, "log_blocks": 1}));
            v.push(serde_json::json!({"zone_blocks": 2, "log_blocks": 2}));
        }
        "fast" | "ofast" => {
            v.push(serde_json::json!({"log_blocks": 2}));
            v.push(serde_json::json!({"log_blocks": 3}));
        }
        "nftl" => {
            v.push(serde_json::json!({"lookup_table": true}));
            v.push(serde_json::json!({"page_cache": 8}));
            v.push(serde_json::json!({"page_cache": 8, "page_cache_policy": "lru", "lookup_table": true}));
            v.push(serde_json::json!({"spare_blocks": 5, "page_cache": 3}));
        }
        "replacement" => {
            v.push(serde_json::json!({"replacement_blocks": 1}));
            v.push(serde_json::json!({"replacement_blocks": 3}));
        }
        "superblock" => {
            v.push(serde_json::json!({"superblock_blocks": 2, "log_blocks": 1, "extra_blocks_per_superblock": 1,
                                      "cache_entries": 1, "page_table_entries": 2}));
            v.push(serde_json::json!({"superblock_blocks": 3, "log_blocks": 2}));
        }
        "tiny" => {
            // Every cache as small as allowed, tables of 2 blocks and 2 pages: misses and write-backs everywhere.
            v.push(serde_json::json!({"log_blocks": 1, "block_table_cache_units": 1, "page_table_cache_entries": 8,
                                      "block_table_entries": 2, "page_table_entries": 2}));
            v.push(serde_json::json!({"log_blocks": 2, "reserved_free_blocks": 1, "block_table_entries": 1}));
            // FAST §3.7's victim rule: a switchable log block first.
            v.push(serde_json::json!({"log_blocks": 2, "victim": "switchable"}));
            v.push(serde_json::json!({"log_blocks": 1, "victim": "switchable", "block_table_cache_units": 1,
                                      "page_table_cache_entries": 8, "block_table_entries": 2}));
        }
        "last" => {
            v.push(serde_json::json!({"log_blocks": 3}));
            v.push(serde_json::json!({"log_blocks": 4, "seq_log_blocks": 2, "seq_threshold_bytes": 512}));
            v.push(serde_json::json!({"log_blocks": 5, "hot_window_pages": 3}));
        }
        "mast" => {
            v.push(serde_json::json!({"log_blocks": 4}));
            v.push(serde_json::json!({"log_blocks": 4, "dynamic_sizing": false}));
            v.push(serde_json::json!({"log_blocks": 6, "la_blocks": 2, "ha_blocks": 1, "migrate_valid_pages": 1}));
            v.push(serde_json::json!({"log_blocks": 5, "dynamic_sizing": false, "idle_merges": 0}));
        }
        _ => {}
    }
    v
}

fn requests(ops: &[(u8, u32, u32)], logical_pages: u32) -> Vec<Request> {
    ops.iter()
        .map(|&(kind, first, len)| {
            let first = first % logical_pages;
            let len = len.min(logical_pages - first).max(1);
            let op = random_op(kind);
            Request::new(0.0, op, first as u64 * 512, len as u64 * 512)
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: common::cases(48), ..ProptestConfig::default() })]

    #[test]
    fn every_scheme_keeps_data_and_nand_rules(
        ops in prop::collection::vec((any::<u8>(), any::<u32>(), 1u32..6), 1..400),
        ppb in prop::sample::select(vec![4u32, 8]),
        blocks in 4u32..12,
        precondition in any::<bool>(),
        sequential_program in any::<bool>(),
    ) {
        let logical_pages = ppb * blocks;
        let reqs = requests(&ops, logical_pages);
        for scheme in SCHEMES {
            for params in variants(scheme.name) {
                let mut cfg = toy(scheme.name, params.clone(), ppb, blocks);
                cfg.device.sequential_program = Some(sequential_program);
                if precondition {
                    cfg = full(cfg);
                }
                let r = run_requests(&cfg, reqs.clone())
                    .unwrap_or_else(|e| panic!("{} {params}: {e}", scheme.name));
                // Counts add up: every host page written is at least one program; merges account for erases.
                prop_assert!(r.count("flash.page_writes") >= r.count("host.write_pages"), "{}", scheme.name);
                let merge_erases: u64 = ["switch", "partial", "full", "dead", "fold"]
                    .iter().map(|k| r.count(&format!("merges.{k}.erases"))).sum();
                prop_assert!(merge_erases <= r.count("flash.erases"), "{}", scheme.name);
                // Wear adds up: the blocks' erase counts sum to every erase counted (both zeroed after
                // preconditioning).
                let erased = r.count("flash.erases") as f64;
                let summed = r.num("erase_count.mean") * r.count("device.physical_blocks") as f64;
                prop_assert!(
                    (summed - erased).abs() <= 1e-6 * erased.max(1.0),
                    "{}: erase counts sum to {summed}, {erased} erases counted", scheme.name
                );
            }
        }
    }
}

#[test]
fn every_scheme_survives_a_long_uniform_run_on_a_full_device() {
    // Many rounds of reclamation: every block recycled several times.
    for scheme in SCHEMES {
        for params in variants(scheme.name) {
            let cfg = full(toy(scheme.name, params.clone(), 8, 16));
            let mut seed = 12345u64;
            let reqs: Vec<Request> = (0..5000)
                .map(|i| {
                    seed = seed
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    let lpn = (seed >> 33) % 128;
                    let op = if i % 3 == 0 { Op::Read } else { Op::Write };
                    Request::new(0.0, op, lpn * 512, 512)
                })
                .collect();
            let r = run_requests(&cfg, reqs)
                .unwrap_or_else(|e| panic!("{} {params}: {e}", scheme.name));
            assert!(
                r.count("flash.erases") > 16,
                "{} {params}: {}",
                scheme.name,
                r.count("flash.erases")
            );
        }
    }
}
