//! The Latency section: the flash time charged to each read and each write request.

use super::keys::{num_of, Component, Keys, Section, Unit};

/// Latency of one kind of request, in microseconds.
#[derive(Clone, Copy, Debug, Default)]
pub struct LatencySummary {
    pub count: u64,
    pub mean: f64,
    pub p50: f64,
    pub p99: f64,
    pub max: f64,
    /// The sum of the latencies (the time charged to these requests).
    pub sum: f64,
}

/// Read and write latencies.
pub(crate) struct Latency<'a> {
    pub read: &'a LatencySummary,
    pub write: &'a LatencySummary,
}

impl Component for Latency<'_> {
    fn visit(&self, k: &mut Keys) {
        k.section(Section::Latency);
        for (name, l) in [("read", self.read), ("write", self.write)] {
            let what = |s: &str| {
                format!(
                    "{s} of {name} requests (the times of each one's flash operations summed, one after \
                     another, as the papers charge them; on an array, response_us overlaps them on the dies)"
                )
            };
            k.shown(false).put(
                format!("latency_us.{name}.count"),
                Unit::Count,
                &format!("{name} requests timed"),
                l.count,
            );
            k.shown(true).put(
                format!("latency_us.{name}.mean"),
                Unit::Us,
                &what("mean latency"),
                num_of(l.count, l.mean),
            );
            k.shown(false).put(
                format!("latency_us.{name}.p50"),
                Unit::Us,
                &what("median latency"),
                num_of(l.count, l.p50),
            );
            k.shown(true).put(
                format!("latency_us.{name}.p99"),
                Unit::Us,
                &what("99th percentile latency (3 significant figures)"),
                num_of(l.count, l.p99),
            );
            // The highest read latency is in the JSON, not in `ftlsim run`'s table.
            k.shown(name == "write").put(
                format!("latency_us.{name}.max"),
                Unit::Us,
                &what("highest latency"),
                num_of(l.count, l.max),
            );
        }
    }
}
