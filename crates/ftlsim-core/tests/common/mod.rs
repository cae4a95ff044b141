//! Helpers shared by the integration tests: toy devices and request builders; trace files in `trace_files`.
#![allow(dead_code)]

use ftlsim_core::array::{ArraySpec, FlashOp, Span, Timeline};
use ftlsim_core::config::{DeviceOverrides, Timing};
use ftlsim_core::request::{Op, Request};
use ftlsim_core::sim::{Precondition, SimConfig};
use serde_json::Value;
pub mod trace_files;

/// A toy device of `logical_blocks` blocks of `pages_per_block` 512 B pages, lee2007 timing.
pub fn toy(ftl: &str, params: Value, pages_per_block: u32, logical_blocks: u32) -> SimConfig {
    SimConfig {
        ftl: ftl.into(),
        params,
        device: DeviceOverrides {
            pages_per_block: Some(pages_per_block),
            ..Default::default()
        },
        capacity: Some(format!(
            "{}",
            512 * pages_per_block as u64 * logical_blocks as u64
        )),
        ..Default::default()
    }
}

pub fn full(mut cfg: SimConfig) -> SimConfig {
    cfg.precondition = Precondition::Full;
    cfg
}

/// Single-page writes of the given logical pages (512 B pages).
pub fn writes(lpns: &[u32]) -> Vec<Request> {
    lpns.iter()
        .map(|&l| Request::new(0.0, Op::Write, l as u64 * 512, 512))
        .collect()
}

pub fn page(op: Op, lpn: u32) -> Request {
    Request::new(0.0, op, lpn as u64 * 512, 512)
}

/// The operation of a random workload's request from a random byte: a quarter reads, an eighth trims, the
/// rest writes.
pub fn random_op(kind: u8) -> Op {
    match kind % 8 {
        0 | 1 => Op::Read,
        2 => Op::Trim,
        _ => Op::Write,
    }
}

/// Property-test cases: a quick pass in debug builds, a thorough one in release (the CI runs
/// `cargo test --release`), scaled from the debug count.
pub fn cases(debug: u32) -> u32 {
    if cfg!(debug_assertions) {
        debug
    } else {
        debug * 16
    }
}

/// A seeded random draw: each call `below(n)` gives the next number below `n` (a linear congruential
/// generator's high bits), the same sequence for the same seed.
pub fn draws(seed: u64) -> impl FnMut(u64) -> u64 {
    let mut x = seed;
    move |n| {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (x >> 33) % n
    }
}

/// A random mix of reads, writes and trims arriving every 50 us, over 128 logical pages of 512 B.
pub fn mixed(n: u64) -> Vec<Request> {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    (0..n)
        .map(|i| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let lpn = (x >> 33) % 128;
            let pages = ((x >> 20) % 3 + 1).min(128 - lpn);
            let op = match (x >> 50) % 8 {
                0 | 1 => Op::Read,
                2 => Op::Trim,
                _ => Op::Write,
            };
            Request::new(50.0 * (i + 1) as f64, op, lpn * 512, pages * 512)
        })
        .collect()
}

/// The golden timelines' array times (`array_timeline.rs`, `array_per_die.rs`): read 50 us, spare read 20 us,
/// program 200 us, spare program 100 us, erase 1,000 us.
pub const GOLDEN_TIMING: Timing = Timing {
    read_us: 50.0,
    spare_read_us: 20.0,
    program_us: 200.0,
    spare_program_us: 100.0,
    erase_us: 1000.0,
};

/// The golden timelines' array: `channels` channels of one chip of `dies_per_chip` dies of `planes` planes, a
/// channel of 10 MT/s x 1 byte (a 100 B page moves in 10 us, a 10 B spare in 1 us), no command overhead.
pub fn golden_array(channels: u32, dies_per_chip: u32, planes: u32) -> ArraySpec {
    ArraySpec {
        channels,
        chips_per_channel: 1,
        dies_per_chip,
        planes_per_die: planes,
        channel_mts: Some(10.0),
        channel_width_bytes: 1,
        command_us: 0.0,
    }
}

/// A timeline on [`golden_array`] with [`GOLDEN_TIMING`], 100 B pages and 10 B spares, scheme blocks of 4 pages
/// a plane, at most `queue_depth` requests in the device, keeping its spans.
pub fn golden_timeline(
    channels: u32,
    dies_per_chip: u32,
    planes: u32,
    queue_depth: u32,
) -> Timeline {
    let spec = golden_array(channels, dies_per_chip, planes);
    let mut t = Timeline::new(spec, &GOLDEN_TIMING, 100, 10, 4 * planes, queue_depth, 1.0);
    t.keep_spans();
    t
}

/// A timeline's spans as (operation, die, channel, start, end).
pub fn span_tuples(t: &Timeline) -> Vec<(FlashOp, u32, u32, f64, f64)> {
    t.spans()
        .iter()
        .map(
            |&Span {
                 op,
                 die,
                 channel,
                 start,
                 end,
             }| (op, die, channel, start, end),
        )
        .collect()
}
