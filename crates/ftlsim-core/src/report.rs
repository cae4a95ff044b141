//! The `Report` of one run: typed figures, counted into the same enums the device uses ([`MergeKind`],
//! [`CacheKind`], [`Cause`]), flattened once ([`Report::flatten`]) into the dotted keys that JSON, CSV, the
//! Python API and the command line read. Each figure group is a component in its own file that names its own
//! keys, units and meanings ([`keys::Component`]); [`Report::visit`] only assembles them, and the same walk gives
//! the schema ([`schema`]: key, unit, section, description), so a key and its meaning are written down in one
//! place. A new group is a file here, a field of [`Report`] and a line in [`Report::visit`]. The engine owns
//! every key: the trace's format, size and hash and the resolved configuration included.
//! Raw counts sit next to every ratio; the resolved configuration and the version are echoed.

pub mod array;
mod bad_blocks;
mod caches;
mod config;
mod flash;
mod host;
pub mod keys;
mod latency;
mod merges;
mod power;
mod ram;
pub mod scheme;
mod sim;
mod time;
pub mod trace;
mod wear;

pub use bad_blocks::BadBlockFigures;
pub use config::ConfigEcho;
pub use host::HostCounts;
pub use keys::{num, Figure, KeyInfo, Section, Unit};
pub use latency::LatencySummary;
pub use power::PowerFigures;
pub use sim::SimFigures;
pub use time::Times;
pub use trace::TraceFacts;

use crate::ftl::{Extra, RamItem};
use crate::stats::{CacheKind, Cause, FlashCounts, MergeKind, MergeTotals};
use keys::{Component, Keys, Sink};
use serde_json::Value;
use std::collections::BTreeMap;

#[derive(Clone, Debug, Default)]
pub struct Report {
    pub version: String,
    pub config: ConfigEcho,
    /// The trace's format, size and content hash.
    pub trace: TraceFacts,
    pub host: HostCounts,
    pub flash: FlashCounts,
    /// Operations on the scheme's own mapping pages (a part of `flash`).
    pub map: FlashCounts,
    /// Every operation by cause (a partition of `flash`).
    pub flash_by_cause: [FlashCounts; Cause::COUNT],
    pub merges: [MergeTotals; MergeKind::COUNT],
    pub gc_runs: u64,
    pub gc_copied_pages: u64,
    /// (hits, misses) per cache.
    pub cache: [(u64, u64); CacheKind::COUNT],
    /// Pages written in a log block when it was replaced: index = pages.
    pub log_utilization: Vec<u64>,
    /// Erase counts over every physical block.
    pub erase_count_min: u32,
    pub erase_count_max: u32,
    pub erase_count_mean: f64,
    /// Chip blocks by erase count, in 10 buckets of `erase_histogram_width` counts each (the last one open).
    pub erase_histogram: Vec<u64>,
    pub erase_histogram_width: u32,
    /// Factory and grown bad blocks and the reserve for them, when the chip has bad blocks.
    pub bad_blocks: Option<BadBlockFigures>,
    pub time_us: Times,
    pub latency_read: LatencySummary,
    pub latency_write: LatencySummary,
    /// Response times, throughput, utilization and queue depth, when the array model is on.
    pub array: Option<crate::array::ArrayFigures>,
    /// Erases during preconditioning (before the counters were zeroed).
    pub precondition_erases: u64,
    pub power: PowerFigures,
    pub ram: Vec<RamItem>,
    /// Scheme-specific figures, already flat.
    pub extra: Extra,
    pub sim: SimFigures,
}

impl Report {
    /// Walks every key of the report once, component by component in report order; with a schema sink,
    /// every key any report can have.
    fn visit(&self, sink: &mut dyn Sink) {
        let (read, write) = (&self.latency_read, &self.latency_write);
        let components: [&dyn Component; 16] = [
            &config::Config {
                version: &self.version,
                echo: &self.config,
            },
            &self.trace,
            &self.host,
            &flash::Flash {
                all: &self.flash,
                by_cause: &self.flash_by_cause,
                map: &self.map,
                host_write_pages: self.host.write_pages,
            },
            &merges::Merges {
                merges: &self.merges,
                gc_runs: self.gc_runs,
                gc_copied_pages: self.gc_copied_pages,
                log_utilization: &self.log_utilization,
                pages_per_block: self.config.pages_per_block,
            },
            &caches::Caches(&self.cache),
            &time::Time {
                times: &self.time_us,
                read,
                write,
                host: &self.host,
            },
            &latency::Latency { read, write },
            &array::Array {
                figures: self.array.as_ref(),
                erases: self.flash.erases,
                scheme_pages_per_block: self.config.pages_per_block,
            },
            &wear::Wear {
                min: self.erase_count_min,
                max: self.erase_count_max,
                mean: self.erase_count_mean,
                histogram: &self.erase_histogram,
                histogram_width: self.erase_histogram_width,
                precondition_erases: self.precondition_erases,
            },
            &bad_blocks::BadBlocks(self.bad_blocks),
            &ram::Ram(&self.ram),
            &power::Power(&self.power),
            &power::Mount(&self.power),
            &scheme::SchemeFigures(&self.extra),
            &self.sim,
        ];
        let mut k = Keys::new(sink);
        for component in components {
            component.visit(&mut k);
        }
    }

    /// The report as dotted keys: the one place typed figures become the flat contract.
    pub fn flatten(&self) -> BTreeMap<String, Value> {
        struct Flat(BTreeMap<String, Value>);
        impl Sink for Flat {
            fn schema(&self) -> bool {
                false
            }
            fn put(&mut self, info: KeyInfo, value: Value) {
                self.0.insert(info.key, value);
            }
        }
        let mut flat = Flat(BTreeMap::new());
        self.visit(&mut flat);
        flat.0
    }

    pub fn get(&self, key: &str) -> Option<Value> {
        self.flatten().remove(key)
    }

    /// A numeric figure; panics with the key's name if it is missing (for tests and benches).
    pub fn num(&self, key: &str) -> f64 {
        self.get(key)
            .and_then(|v| v.as_f64())
            .unwrap_or_else(|| panic!("report has no numeric key `{key}`"))
    }

    /// An integer count; panics with the key's name if it is missing (for tests and benches).
    pub fn count(&self, key: &str) -> u64 {
        self.get(key)
            .and_then(|v| v.as_u64())
            .unwrap_or_else(|| panic!("report has no count `{key}`"))
    }
}

/// Every key a report can have, in report order; `<...>` parts of a key are chosen at run time (RAM structures,
/// a scheme's own figures).
pub fn schema() -> Vec<KeyInfo> {
    struct Schema(Vec<KeyInfo>);
    impl Sink for Schema {
        fn schema(&self) -> bool {
            true
        }
        fn put(&mut self, info: KeyInfo, _value: Value) {
            self.0.push(info);
        }
    }
    let mut out = Schema(Vec::new());
    Report::default().visit(&mut out);
    out.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schema_names_each_key_once_and_every_kind() {
        let keys = schema();
        let mut names: Vec<&str> = keys.iter().map(|k| k.key.as_str()).collect();
        let n = names.len();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), n, "a key is described twice");
        for kind in CacheKind::ALL {
            assert!(names.contains(&format!("cache.{}.miss_ratio", kind.name()).as_str()));
        }
        for kind in MergeKind::ALL {
            assert!(names.contains(&format!("merges.{}.copied_pages", kind.name()).as_str()));
        }
        for cause in Cause::ALL {
            assert!(names.contains(&format!("time_us.cause.{}", cause.name()).as_str()));
        }
    }
}
