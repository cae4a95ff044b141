//! What the array's timeline measured over a run: response times, throughput, utilization and queue depth
//! (the report's `response_us.*`, `throughput.*`, `utilization.*` and `queue.depth.*`, `report/array.rs`).

use crate::config::{ArrayPlacement, ArraySpec};

/// Response times of one kind of request, in microseconds.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ResponseSummary {
    pub count: u64,
    pub mean: f64,
    pub p50: f64,
    pub p99: f64,
    pub p99_9: f64,
    pub max: f64,
    /// (response time, fraction of requests at or below it) at fixed quantiles, for CDF plots.
    pub cdf: Vec<(f64, f64)>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct ArrayFigures {
    pub spec: ArraySpec,
    /// Striped, or an instance per die (`ftl/per_die.rs`).
    pub placement: ArrayPlacement,
    pub queue_depth: u32,
    pub time_scale: f64,
    /// From the first arrival to the last end of anything.
    pub span_us: f64,
    pub read: ResponseSummary,
    pub write: ResponseSummary,
    pub iops: f64,
    pub mb_per_s: f64,
    /// (mean over dies, most busy die): busy time over the span.
    pub die_utilization: (f64, f64),
    pub channel_utilization: (f64, f64),
    /// Read and write requests in the system (waiting in the host or in the device), averaged over the span, and the most.
    pub depth_mean: f64,
    pub depth_max: u64,
    pub requests: u64,
    /// Host requests that arrived at their trace time x `time_scale`; the others had no time.
    pub timed_requests: u64,
}

impl ArrayFigures {
    /// Physical blocks one erase of the scheme's block erases: one on every plane-unit when striped, one on
    /// every plane of its die when placed per die.
    pub fn blocks_per_erase(&self) -> u32 {
        match self.placement {
            ArrayPlacement::Striped => self.spec.units(),
            ArrayPlacement::PerDie => self.spec.planes_per_die,
        }
    }
}
