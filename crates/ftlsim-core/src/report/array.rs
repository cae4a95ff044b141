//! The report's multi-chip array component: response times (queue + service) per read and write,
//! throughput, die and channel utilization and queue depth, from the event-driven timing
//! ([`crate::array::Timeline`]). Present only when the array model is on (more than one plane-unit, or
//! `queue_depth` or `time_scale` given): a run of today's single chip has none of these keys.

use super::keys::{num, num_of, Component, Keys, Section, Unit};
use crate::array::ArrayFigures;
use serde_json::Value;

/// The array component of a report: none when the array model is off.
pub(super) struct Array<'a> {
    pub figures: Option<&'a ArrayFigures>,
    /// The scheme's block erases (`flash.erases`), which the array turns into physical block erases.
    pub erases: u64,
    /// Pages of the scheme's block (`config.pages_per_block`), which the array makes of physical blocks.
    pub scheme_pages_per_block: u32,
}

impl Component for Array<'_> {
    /// The array's keys (with a schema sink, every key the component can have).
    fn visit(&self, k: &mut Keys) {
        let default = ArrayFigures::default();
        match self.figures {
            Some(a) => put(k, a, self.erases, self.scheme_pages_per_block),
            None if k.schema() => put(k, &default, 0, 0),
            None => {}
        }
    }
}

fn put(k: &mut Keys, a: &ArrayFigures, erases: u64, scheme_pages_per_block: u32) {
    k.section(Section::Response);
    let s = &a.spec;
    k.shown(false);
    for (key, what, v) in [
        ("array.channels", "flash channels", s.channels),
        (
            "array.chips_per_channel",
            "chips on each channel",
            s.chips_per_channel,
        ),
        ("array.dies_per_chip", "dies in each chip", s.dies_per_chip),
        (
            "array.planes_per_die",
            "planes in each die",
            s.planes_per_die,
        ),
        (
            "array.queue_depth",
            "most requests in the device at once (queue_depth)",
            a.queue_depth,
        ),
    ] {
        k.put(key, Unit::Count, what, v);
    }
    k.put(
        "array.placement",
        Unit::Text,
        "striped (a scheme block over every plane) or per-die (a scheme instance per die, by address)",
        a.placement.name(),
    );
    // The channel as it ran (a preset's rate or an override): the array's keys above, its timing here.
    k.put(
        "array.channel_mb_per_s",
        Unit::PerSecond,
        "megabytes (10^6 bytes) a channel moves per second: channel_mts x channel_width_bytes (null: \
         transfers take no time)",
        s.channel_mts
            .map_or(Value::Null, |mts| num(mts * s.channel_width_bytes as f64)),
    );
    k.put(
        "array.command_us",
        Unit::Us,
        "the channel's command and address time of every operation (command_us)",
        num(s.command_us),
    );
    k.put(
        "array.pages_per_block",
        Unit::Pages,
        "pages of a physical block (the preset's or pages_per_block); config.pages_per_block is the scheme's \
         block, a physical block on every plane of every die when striped, on every plane of its die per die",
        scheme_pages_per_block / a.blocks_per_erase(),
    );
    k.put(
        "array.block_erases",
        Unit::Count,
        "physical blocks erased: flash.erases counts the scheme's blocks, and one is a block on every plane \
         of every die when striped, on every plane of its die per die",
        erases * a.blocks_per_erase() as u64,
    );
    k.put(
        "array.time_scale",
        Unit::Ratio,
        "request arrivals at trace time x this (time_scale)",
        num(a.time_scale),
    );
    k.put(
        "array.timed_requests",
        Unit::Count,
        "host requests that arrived at their trace time x time_scale; the others (a trace without times) were \
         submitted as a closed loop, queue_depth at a time",
        a.timed_requests,
    );
    k.put(
        "array.span_us",
        Unit::Us,
        "from the first request's arrival to the end of the last operation, with the mounts after power cuts \
         (no die is busy for the run while one mounts: a mount is timed apart, mount.array_time_us)",
        num(a.span_us),
    );
    for (name, r) in [("read", &a.read), ("write", &a.write)] {
        let what = |s: &str| {
            format!(
                "{s} of {name} requests, from arrival to completion (queue + service; the request's \
                 operations on different dies overlap, so that without a wait it can be below latency_us)"
            )
        };
        k.shown(false).put(
            format!("response_us.{name}.count"),
            Unit::Count,
            &format!("{name} requests with a response time"),
            r.count,
        );
        k.shown(true).put(
            format!("response_us.{name}.mean"),
            Unit::Us,
            &what("mean response time"),
            num_of(r.count, r.mean),
        );
        k.shown(false).put(
            format!("response_us.{name}.p50"),
            Unit::Us,
            &what("median response time"),
            num_of(r.count, r.p50),
        );
        k.shown(true).put(
            format!("response_us.{name}.p99"),
            Unit::Us,
            &what("99th percentile response time (3 significant figures)"),
            num_of(r.count, r.p99),
        );
        k.shown(false).put(
            format!("response_us.{name}.p99_9"),
            Unit::Us,
            &what("99.9th percentile response time (3 significant figures)"),
            num_of(r.count, r.p99_9),
        );
        k.shown(true).put(
            format!("response_us.{name}.max"),
            Unit::Us,
            &what("longest response time"),
            num_of(r.count, r.max),
        );
        let cdf: Vec<Value> = r
            .cdf
            .iter()
            .map(|&(us, q)| Value::from(vec![num(us), num(q)]))
            .collect();
        k.shown(false).put(
            format!("response_us.{name}.cdf"),
            Unit::Histogram,
            &format!(
                "[response time in us, fraction of {name} requests at or below it] at every percent and at \
                 99.5, 99.9, 99.95, 99.99, 99.999 and 100"
            ),
            Value::Array(cdf),
        );
    }
    k.shown(true).put(
        "throughput.iops",
        Unit::PerSecond,
        "read and write requests completed per second of the span",
        num(a.iops),
    );
    k.put(
        "throughput.mb_per_s",
        Unit::PerSecond,
        "megabytes (10^6 bytes) read and written per second of the span",
        num(a.mb_per_s),
    );
    for (name, (mean, max)) in [
        ("die", a.die_utilization),
        ("channel", a.channel_utilization),
    ] {
        k.shown(true).put(
            format!("utilization.{name}.mean"),
            Unit::Ratio,
            &format!("busy time of a {name} over the span, mean over every {name}"),
            num(mean),
        );
        k.shown(false).put(
            format!("utilization.{name}.max"),
            Unit::Ratio,
            &format!("busy time of the busiest {name} over the span"),
            num(max),
        );
    }
    k.shown(true).put(
        "queue.depth.mean",
        Unit::Count,
        "read and write requests in the system (waiting in the host or in the device), averaged over the span",
        num(a.depth_mean),
    );
    k.shown(false).put(
        "queue.depth.max",
        Unit::Count,
        "most read and write requests in the system at once",
        a.depth_max,
    );
}
