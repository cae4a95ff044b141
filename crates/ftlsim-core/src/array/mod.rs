//! A multi-chip SSD: channels x chips x dies x planes, and the event-driven timing of the flash operations
//! and host requests on it (DESIGN.md, "Timing model"). Schemes still decide and the chip still counts; this
//! layer only turns the stream of operations and the requests' arrivals into start and end times.
//!
//! # Where pages go: the striped superblock (the default)
//! With `placement = "striped"` (the default, every scheme's) a scheme runs once over the array: the scheme's block is one physical block on each plane-unit (a plane of a die),
//! its page `o` on unit `o mod units` at page `o div units` of that physical block ([`ArraySpec::units`]
//! orders the units channel first). So the scheme sees blocks of `pages_per_block x units` pages; programming
//! a scheme block in order programs each physical block in order (the NAND rule holds per physical block);
//! an erase of a scheme block is one erase on every plane-unit at once; and a page-mapped scheme or DFTL,
//! which write successive pages of their active block, put successive writes on successive dies (dynamic
//! round-robin allocation, as MQSim's CWDP). The chip model, its NAND rules, the read oracle, mount and power
//! cuts work on the scheme's blocks unchanged; a bad block is a bad scheme block, i.e. a whole stripe retired
//! at once (a real controller would remap the one bad plane's block).
//!
//! # Where pages go: an instance per die
//! With `placement = "per-die"` a scheme runs once per die on that die's blocks, a logical page sent to a
//! die by its address (static allocation, as MQSim's `Plane_Allocation_Scheme`); GC and merges run per die
//! (`ftl/per_die.rs`).
//!
//! # When it is on
//! With one plane-unit and neither `queue_depth` nor `time_scale` given the array model is off: no timeline,
//! today's serial sum, no new report keys. Otherwise every request gets a response time from the
//! [`Timeline`]; the serial `latency_us.*` (service time) is reported beside it, unchanged.

mod figures;
mod timeline;

pub use crate::config::ArraySpec;
pub use figures::{ArrayFigures, ResponseSummary};
pub use timeline::{FlashOp, Kind, Span, Timeline};

/// Requests in the device at once when `queue_depth` is not given (an NVMe queue's usual depth in fio runs).
pub const DEFAULT_QUEUE_DEPTH: u32 = 32;

/// The most requests in the device at once (MQSim's `IO_Queue_Depth` default).
pub const MAX_QUEUE_DEPTH: u32 = 65_535;

/// What a whole number given for one of the array's keys must be, and a value that fits, where its own bound
/// is tighter than its type's: for a value past the type (`queue_depth=10000000000`), which fails before the
/// key's own check, so that the message states the bound that holds, not 4,294,967,295.
pub fn own_bound(key: &str) -> Option<(String, String)> {
    match key {
        "queue_depth" => Some((queue_depth_bound(), DEFAULT_QUEUE_DEPTH.to_string())),
        "channels" | "chips_per_channel" | "dies_per_chip" | "planes_per_die" => {
            let most = crate::config::ArraySpec::MAX_UNITS;
            let why = format!(
                "must be at most {most}: an array has at most {most} planes (channels x chips_per_channel x \
                 dies_per_chip x planes_per_die)"
            );
            Some((why, "1".to_string()))
        }
        _ => None,
    }
}

fn queue_depth_bound() -> String {
    format!("must be from 1 to {MAX_QUEUE_DEPTH} requests in the device at once")
}

/// Checks the run options of the array model: every problem, each with a fix.
pub fn run_option_problems(
    queue_depth: Option<u32>,
    time_scale: Option<f64>,
) -> Vec<crate::config::Invalid> {
    use crate::config::Invalid;
    let mut out = Vec::new();
    if let Some(q) = queue_depth {
        if !(1..=MAX_QUEUE_DEPTH).contains(&q) {
            out.push(Invalid::new(
                "queue_depth",
                q,
                queue_depth_bound(),
                Some(DEFAULT_QUEUE_DEPTH.to_string()),
            ));
        }
    }
    if let Some(s) = time_scale {
        if !(s.is_finite() && (0.0..=1e6).contains(&s)) {
            out.push(Invalid::new(
                "time_scale",
                s,
                "must be a finite factor from 0 to 1e6 on the trace's arrival times (0.5 arrives twice as \
                 fast, 0 all at once)",
                Some("1".into()),
            ));
        }
    }
    out
}

/// The timeline of a run on device `spec` with scheme geometry `g`, when the array model is on. The run
/// options are those the run plan checked with [`run_option_problems`] when it was resolved.
pub fn timeline_for(
    spec: &crate::config::DeviceSpec,
    g: &crate::config::Geometry,
    queue_depth: Option<u32>,
    time_scale: Option<f64>,
) -> Option<Box<Timeline>> {
    if !spec.array_model_on(queue_depth, time_scale) {
        return None;
    }
    Some(Box::new(Timeline::new(
        spec.array,
        &spec.timing,
        g.page_bytes,
        g.spare_bytes,
        g.pages_per_block,
        queue_depth.unwrap_or(DEFAULT_QUEUE_DEPTH),
        time_scale.unwrap_or(1.0),
    )))
}
