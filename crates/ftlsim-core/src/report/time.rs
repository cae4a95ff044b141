//! The Time section: modeled flash time by heading and by cause.

use super::host::HostCounts;
use super::keys::{num, Component, Keys, Section, Unit};
use super::latency::LatencySummary;
use crate::stats::Cause;

/// Flash time by heading, in microseconds. `merges` and `gc` overlap where a scheme merges inside its
/// garbage collection (NFTL's fold inside GC): `by_cause` is the partition.
#[derive(Clone, Copy, Debug, Default)]
pub struct Times {
    pub total: f64,
    pub requests: f64,
    pub merges: f64,
    pub gc: f64,
    pub map: f64,
    pub idle: f64,
    pub flush: f64,
    pub by_cause: [f64; Cause::COUNT],
}

/// The times, and the requests' charged time per page (the NFTL paper's Table 5).
pub(crate) struct Time<'a> {
    pub times: &'a Times,
    pub read: &'a LatencySummary,
    pub write: &'a LatencySummary,
    pub host: &'a HostCounts,
}

impl Component for Time<'_> {
    fn visit(&self, k: &mut Keys) {
        let t = self.times;
        k.section(Section::Time).shown(true);
        for (key, what, value) in [
            (
                "time_us.total",
                "modeled time of every flash operation and NVRAM access of the run",
                t.total,
            ),
            (
                "time_us.requests",
                "time charged to host requests (idle work and the end-of-trace flush excluded)",
                t.requests,
            ),
            (
                "time_us.merges",
                "time of merges, wherever they ran (overlaps time_us.gc where a GC merges)",
                t.merges,
            ),
            (
                "time_us.gc",
                "time of garbage collection including merges it runs (overlaps time_us.merges, and \
                 time_us.map where it rewrites mapping pages, as DFTL's does); time_us.cause.* partition \
                 time_us.total",
                t.gc,
            ),
            (
                "time_us.map",
                "time of operations on the scheme's mapping pages, wherever they ran (overlaps time_us.gc \
                 where a GC rewrites them)",
                t.map,
            ),
        ] {
            k.put(key, Unit::Us, what, num(value));
        }
        k.shown(false);
        for cause in Cause::ALL {
            k.put(
                format!("time_us.cause.{}", cause.name()),
                Unit::Us,
                &format!(
                    "time caused by {}: the time_us.cause.* keys partition time_us.total (precedence: map, \
                     idle, flush, innermost merge or GC, rmw, host; NVRAM accesses are nvram)",
                    cause.name()
                ),
                num(t.by_cause[*cause as usize]),
            );
        }
        k.shown(true);
        k.put(
            "time_us.idle",
            Unit::Us,
            "time of background work in idle gaps",
            num(t.idle),
        );
        k.put(
            "time_us.flush",
            Unit::Us,
            "time of the end-of-trace flush of a write cache",
            num(t.flush),
        );
        k.shown(false).put(
            "time_us.per_read_page",
            Unit::Us,
            "time charged to reads per page read (NFTL paper Table 5)",
            num(self.read.sum / self.host.read_pages as f64),
        );
        k.put(
            "time_us.per_write_page",
            Unit::Us,
            "time charged to writes per page written (NFTL paper Table 5)",
            num(self.write.sum / self.host.write_pages as f64),
        );
    }
}
