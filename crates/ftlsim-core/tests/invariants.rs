//! The invariant suite: every registered scheme, over random workloads on toy devices, keeps every host
//! read equal to the last write (the simulator checks it on every read), breaks no NAND rule (the chip
//! refuses), and its counts add up. Each scheme runs under its defaults and under the stress variants its
//! registry row declares, on one chip and on a 2 x 2 array (where the timing layer must change no count).

mod common;

use common::{full, random_op, toy};
use ftlsim_core::ftl::{Scheme, SCHEMES};
use ftlsim_core::report::Report;
use ftlsim_core::request::{Op, Request};
use ftlsim_core::sim::{run_requests, SimConfig};
use proptest::prelude::*;

/// The parameter sets to check a scheme under: its defaults, then its row's stress variants.
fn variants(scheme: &Scheme) -> Vec<serde_json::Value> {
    let mut v = vec![serde_json::json!({})];
    v.extend((scheme.stress_variants)());
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
            for params in variants(scheme) {
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

/// The 2 x 2 arrays as (channels, dies a chip, planes a die), one chip a channel: 2 x 1 x 2 x 1 (two channels
/// of two dies) and 1 x 1 x 2 x 2 (one channel, two dies of two planes).
const ARRAYS: [(u32, u32, u32); 2] = [(2, 2, 1), (1, 2, 2)];

/// `cfg` on a 2 x 2 array `(channels, dies_per_chip, planes_per_die)` with `physical_ppb` pages a physical
/// block: the scheme's block is the stripe of 4 x `physical_ppb` pages (`array/mod.rs`).
fn on_array(
    mut cfg: SimConfig,
    (channels, dies, planes): (u32, u32, u32),
    physical_ppb: u32,
    queue_depth: u32,
) -> SimConfig {
    cfg.device.channels = Some(channels);
    cfg.device.dies_per_chip = Some(dies);
    cfg.device.planes_per_die = Some(planes);
    cfg.device.pages_per_block = Some(physical_ppb);
    cfg.queue_depth = Some(queue_depth);
    cfg
}

/// The flash counts a scheme's decisions make, which no timing may change.
const DECIDED: [&str; 6] = [
    "flash.page_reads",
    "flash.page_writes",
    "flash.spare_reads",
    "flash.erases",
    "gc.runs",
    "gc.copied_pages",
];

/// The array model's own figures are within their limits: utilization a share of the span, and every host
/// read and write request got a response time. (A response may be shorter than the serial service time: the
/// request's operations on different dies overlap.)
fn check_array(r: &Report, scheme: &str) -> Result<(), TestCaseError> {
    for key in ["utilization.die.max", "utilization.channel.max"] {
        let u = r.num(key);
        prop_assert!((0.0..=1.0).contains(&u), "{scheme}: {key} = {u}");
    }
    for kind in ["read", "write"] {
        prop_assert_eq!(
            r.count(&format!("response_us.{kind}.count")),
            r.count(&format!("host.{kind}_requests")),
            "{}: {} responses",
            scheme,
            kind
        );
    }
    Ok(())
}

proptest! {
    // An eighth of the single chip's cases, each running every scheme twice (on the array, and on one chip
    // with the same scheme geometry to compare their counts) on blocks twice as long: 96 cases in release,
    // about as long as the single chip's 768.
    #![proptest_config(ProptestConfig { cases: common::cases(6), ..ProptestConfig::default() })]

    #[test]
    fn every_scheme_keeps_data_nand_rules_and_its_counts_on_a_2x2_array(
        ops in prop::collection::vec((any::<u8>(), any::<u32>(), 1u32..6), 1..400),
        physical_ppb in prop::sample::select(vec![2u32, 4]),
        blocks in 4u32..12,
        array in prop::sample::select(ARRAYS.to_vec()),
        queue_depth in 1u32..8,
        precondition in any::<bool>(),
    ) {
        let ppb = 4 * physical_ppb;
        let reqs = requests(&ops, ppb * blocks);
        for scheme in SCHEMES {
            for params in variants(scheme) {
                let mut chip = toy(scheme.name, params.clone(), ppb, blocks);
                if precondition {
                    chip = full(chip);
                }
                let cfg = on_array(chip.clone(), array, physical_ppb, queue_depth);
                let r = run_requests(&cfg, reqs.clone())
                    .unwrap_or_else(|e| panic!("{} {params} on {array:?}: {e}", scheme.name));
                prop_assert_eq!(r.count("config.pages_per_block"), ppb as u64);
                check_array(&r, scheme.name)?;
                // Schemes never see the clock: one chip with the stripe's block length decides the same.
                let one = run_requests(&chip, reqs.clone())
                    .unwrap_or_else(|e| panic!("{} {params} on one chip: {e}", scheme.name));
                for key in DECIDED {
                    prop_assert_eq!(r.get(key), one.get(key), "{} {}: {}", scheme.name, params, key);
                }
            }
        }
    }
}

#[test]
fn every_scheme_survives_a_long_uniform_run_on_a_full_device() {
    // Many rounds of reclamation: every block recycled several times.
    for scheme in SCHEMES {
        for params in variants(scheme) {
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
