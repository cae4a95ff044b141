//! The `Report` of one run: typed figures, counted into the same enums the device uses ([`MergeKind`],
//! [`CacheKind`], [`Cause`]), flattened once ([`Report::flatten`]) into the dotted keys that JSON, CSV, the
//! Python API and the command line read. The same walk over the fields, [`Report::visit`], gives the schema
//! ([`schema`]: key, unit, section, description), so a key and its meaning are written down in one place.
//! Raw counts sit next to every ratio; the resolved configuration and the version are echoed.

pub mod array;

use crate::ftl::{Extra, RamItem};
use crate::stats::{CacheKind, Cause, FlashCounts, MergeKind, MergeTotals};
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;

/// The run's configuration as the report echoes it.
#[derive(Clone, Debug, Default)]
pub struct ConfigEcho {
    pub scheme: String,
    /// The scheme's parameters as given, JSON text.
    pub params: String,
    pub preset: String,
    pub trace: String,
    /// How the trace's devices share the address space: fold, concat, or the devices kept.
    pub devices: String,
    /// A built-in workload's seed.
    pub seed: Option<u64>,
    pub precondition: String,
    pub page_bytes: u32,
    pub spare_bytes: u32,
    pub pages_per_block: u32,
    pub sequential_program: bool,
    pub capacity_bytes: u64,
    pub logical_blocks: u32,
    pub physical_blocks: u32,
    /// Of the physical blocks beyond the logical ones, those the scheme uses (the rest are unused spare).
    pub scheme_extra_blocks: u32,
    pub read_us: f64,
    pub spare_read_us: f64,
    pub program_us: f64,
    pub spare_program_us: f64,
    pub erase_us: f64,
    /// Whether a partial-page write reads the old page first.
    pub rmw: bool,
}

/// What the host asked for.
#[derive(Clone, Copy, Debug, Default)]
pub struct HostCounts {
    pub requests: u64,
    pub read_requests: u64,
    pub write_requests: u64,
    pub trim_requests: u64,
    pub read_pages: u64,
    pub write_pages: u64,
    pub trim_pages: u64,
    pub rmw_page_reads: u64,
    /// Host page reads of pages never written (they cost what the scheme makes them cost, often nothing).
    pub unwritten_reads: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
}

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

/// A crash test's figures (`power_cuts`) and the cost of mounting the scheme from flash.
#[derive(Clone, Copy, Debug, Default)]
pub struct PowerFigures {
    /// Distinct cut points the dry run chose (`power_cuts` of them, fewer when two draws coincide or the run
    /// has fewer flash operations).
    pub cuts_planned: u64,
    pub cuts: u64,
    pub cuts_survived: u64,
    pub cuts_in_merge_or_gc: u64,
    pub cuts_in_map_io: u64,
    /// Cuts that tore the page program they landed on (`torn_pages`).
    pub torn_pages: u64,
    /// Torn pages a merge or garbage collection was programming (a copy, or a host write folded in).
    pub torn_in_merge_or_gc: u64,
    pub pages_checked: u64,
    pub mounts: u64,
    pub mount_spare_reads: u64,
    pub mount_page_reads: u64,
    pub mount_time_us_sum: f64,
    pub mount_time_us_max: f64,
}

/// Bad blocks of a chip that has them (`bad_block_ratio`, `endurance`; `bad_blocks.rs`).
#[derive(Clone, Copy, Debug, Default)]
pub struct BadBlockFigures {
    pub factory: u32,
    pub grown: u32,
    pub reserve: u32,
}

/// The wall-clock figures of the simulator itself.
#[derive(Clone, Copy, Debug, Default)]
pub struct SimFigures {
    pub skipped_lines: u64,
    pub setup_s: f64,
    pub wall_s: f64,
    pub requests_per_s: f64,
    /// Page reads + page programs + erases (host and internal, every class) per wall second.
    pub flash_ops_per_s: f64,
    pub spare_reads_per_s: f64,
    pub chip_memory_bytes: u64,
}

#[derive(Clone, Debug, Default)]
pub struct Report {
    pub version: String,
    pub config: ConfigEcho,
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
    pub array: Option<array::ArrayFigures>,
    /// Erases during preconditioning (before the counters were zeroed).
    pub precondition_erases: u64,
    pub power: PowerFigures,
    pub ram: Vec<RamItem>,
    /// Scheme-specific figures, already flat.
    pub extra: Extra,
    pub sim: SimFigures,
}

/// What a key measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Unit {
    Count,
    Pages,
    Bytes,
    Us,
    Seconds,
    Ratio,
    PerSecond,
    Text,
    Flag,
    Histogram,
}

/// The report's sections, in the order the command line prints them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Section {
    Config,
    Host,
    Flash,
    #[serde(rename = "Merges and GC")]
    MergesAndGc,
    Caches,
    Time,
    Latency,
    #[serde(rename = "Response time")]
    Response,
    #[serde(rename = "Wear and RAM")]
    WearAndRam,
    #[serde(rename = "Power loss")]
    Power,
    Scheme,
    Simulator,
}

/// One key of the report: its name (a `<...>` part stands for a name chosen at run time), unit, section,
/// meaning, and whether `ftlsim run` shows it in its table.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct KeyInfo {
    pub key: String,
    pub unit: Unit,
    pub section: Section,
    pub description: String,
    pub table: bool,
}

/// Receives the report's keys from [`Report::visit`].
trait Sink {
    /// True when describing every key a report can have (the schema), not the keys of one report.
    fn schema(&self) -> bool;
    fn put(&mut self, info: KeyInfo, value: Value);
}

/// Writes keys in one section with one walk: `k.put(key, unit, description, value)`.
struct Keys<'a> {
    sink: &'a mut dyn Sink,
    section: Section,
    table: bool,
}

impl Keys<'_> {
    fn put(
        &mut self,
        key: impl Into<String>,
        unit: Unit,
        description: &str,
        value: impl Into<Value>,
    ) {
        self.sink.put(
            KeyInfo {
                key: key.into(),
                unit,
                section: self.section,
                description: description.to_string(),
                table: self.table,
            },
            value.into(),
        );
    }

    /// The keys that follow are (not) shown in `ftlsim run`'s table.
    fn shown(&mut self, table: bool) -> &mut Self {
        self.table = table;
        self
    }

    fn schema(&self) -> bool {
        self.sink.schema()
    }
}

/// A finite float as JSON (NaN and infinities, e.g. a ratio over zero, become null).
/// What a merge of `kind` did, for `merges.<kind>`.
fn merge_description(kind: MergeKind) -> &'static str {
    match kind {
        MergeKind::Switch => {
            "switch merges: a log block written wholly in order became the data block (one erase, no copy)"
        }
        MergeKind::Partial => {
            "partial merges: the pages a log block lacked were copied into it from its data block, and it became \
             the data block (one erase)"
        }
        MergeKind::Full => {
            "full merges: the newest copy of each page of a logical block, from its data block and log blocks, \
             copied to a free block that became the data block; the old data block erased, and each log block \
             once it held nothing valid (FAST: one full merge per logical block its victim log block holds)"
        }
        MergeKind::Dead => {
            "dead merges: a log block with no valid page left (all overwritten since), only erased, no copy"
        }
        MergeKind::Fold => "folds: NFTL's merge of a primary block and its replacement block",
    }
}

pub fn num(v: f64) -> Value {
    serde_json::Number::from_f64(v)
        .map(Value::Number)
        .unwrap_or(Value::Null)
}

const FLASH_OPS: [(&str, &str); 5] = [
    ("page_reads", "page reads (data and spare area)"),
    ("spare_reads", "spare-area-only reads"),
    ("page_writes", "page programs"),
    ("spare_writes", "spare-area-only programs"),
    ("erases", "block erases"),
];

fn op_values(c: &FlashCounts) -> [u64; 5] {
    [
        c.page_reads,
        c.spare_reads,
        c.page_writes,
        c.spare_writes,
        c.erases,
    ]
}

impl Report {
    /// Walks every key of the report once, in order; with a schema sink, every key any report can have.
    fn visit(&self, sink: &mut dyn Sink) {
        let c = &self.config;
        let mut k = Keys {
            sink,
            section: Section::Config,
            table: false,
        };
        k.put(
            "version",
            Unit::Text,
            "ftlsim version that made the report",
            self.version.clone(),
        );
        k.put("config.scheme", Unit::Text, "scheme name", c.scheme.clone());
        k.put(
            "config.params",
            Unit::Text,
            "the scheme's parameters as given (JSON)",
            c.params.clone(),
        );
        k.put(
            "config.preset",
            Unit::Text,
            "device preset",
            c.preset.clone(),
        );
        k.put(
            "config.trace",
            Unit::Text,
            "trace file or built-in workload",
            c.trace.clone(),
        );
        k.put(
            "config.devices",
            Unit::Text,
            "how the trace's devices share the address space: fold, concat, or the devices kept (concatenated)",
            c.devices.clone(),
        );
        if let Some(seed) = c.seed {
            k.put(
                "config.seed",
                Unit::Count,
                "a built-in workload's seed",
                seed,
            );
        } else if k.schema() {
            k.put("config.seed", Unit::Count, "a built-in workload's seed", 0);
        }
        k.put(
            "config.precondition",
            Unit::Text,
            "none; full: every logical page written once before counting; trace: every request of the trace \
             written once first (PSU FlashSim's warm-up), then the trace counted",
            c.precondition.clone(),
        );
        k.put(
            "config.page_bytes",
            Unit::Bytes,
            "data bytes per page",
            c.page_bytes,
        );
        k.put(
            "config.spare_bytes",
            Unit::Bytes,
            "spare (OOB) bytes per page",
            c.spare_bytes,
        );
        k.put(
            "config.pages_per_block",
            Unit::Pages,
            "pages per erase block",
            c.pages_per_block,
        );
        k.put(
            "config.sequential_program",
            Unit::Flag,
            "MLC rule: pages of a block programmed in increasing order",
            c.sequential_program,
        );
        k.put(
            "config.capacity_bytes",
            Unit::Bytes,
            "logical capacity the host sees",
            c.capacity_bytes,
        );
        k.put(
            "config.logical_blocks",
            Unit::Count,
            "blocks the host can address",
            c.logical_blocks,
        );
        k.put(
            "config.physical_blocks",
            Unit::Count,
            "blocks on the chip: logical plus the scheme's extra blocks",
            c.physical_blocks,
        );
        k.put(
            "device.physical_blocks",
            Unit::Count,
            "blocks on the chip: logical plus the scheme's extra blocks",
            c.physical_blocks,
        );
        k.put(
            "device.extra_blocks",
            Unit::Count,
            "physical blocks beyond the logical capacity (log, reserve, map and free blocks)",
            c.physical_blocks.saturating_sub(c.logical_blocks),
        );
        k.put(
            "device.scheme_extra_blocks",
            Unit::Count,
            "of the extra blocks, those the scheme's parameters use (log, reserve, map blocks); the rest of a \
             stated extra_blocks stays unused",
            c.scheme_extra_blocks,
        );
        for (key, value, what) in [
            ("config.read_us", c.read_us, "page read latency"),
            (
                "config.spare_read_us",
                c.spare_read_us,
                "spare read latency",
            ),
            ("config.program_us", c.program_us, "page program latency"),
            (
                "config.spare_program_us",
                c.spare_program_us,
                "spare program latency",
            ),
            ("config.erase_us", c.erase_us, "block erase latency"),
        ] {
            k.put(key, Unit::Us, what, num(value));
        }
        k.put(
            "config.rmw",
            Unit::Flag,
            "a partial-page write reads the old page first",
            c.rmw,
        );

        let h = &self.host;
        k.section = Section::Host;
        k.shown(false);
        k.put("host.requests", Unit::Count, "host requests", h.requests);
        k.shown(true);
        k.put(
            "host.read_requests",
            Unit::Count,
            "host read requests",
            h.read_requests,
        );
        k.put(
            "host.write_requests",
            Unit::Count,
            "host write requests",
            h.write_requests,
        );
        k.put(
            "host.trim_requests",
            Unit::Count,
            "host trim requests",
            h.trim_requests,
        );
        k.put(
            "host.read_pages",
            Unit::Pages,
            "pages read by the host",
            h.read_pages,
        );
        k.put(
            "host.write_pages",
            Unit::Pages,
            "pages written by the host",
            h.write_pages,
        );
        k.put(
            "host.trim_pages",
            Unit::Pages,
            "whole pages trimmed",
            h.trim_pages,
        );
        k.put(
            "host.rmw_page_reads",
            Unit::Pages,
            "old pages read before a partial-page write (their flash reads are flash.page_reads.rmw)",
            h.rmw_page_reads,
        );
        k.put(
            "host.unwritten_reads",
            Unit::Pages,
            "host page reads of pages never written",
            h.unwritten_reads,
        );
        k.shown(false);
        k.put(
            "host.read_bytes",
            Unit::Bytes,
            "bytes read by the host",
            h.read_bytes,
        );
        k.put(
            "host.write_bytes",
            Unit::Bytes,
            "bytes written by the host",
            h.write_bytes,
        );

        k.section = Section::Flash;
        k.shown(true);
        for ((op, what), value) in FLASH_OPS.iter().zip(op_values(&self.flash)) {
            k.put(
                format!("flash.{op}"),
                Unit::Count,
                &format!("all {what}"),
                value,
            );
        }
        for cause in Cause::ALL.iter().filter(|c| **c != Cause::Nvram) {
            let counts = op_values(&self.flash_by_cause[*cause as usize]);
            for ((op, what), value) in FLASH_OPS.iter().zip(counts) {
                k.shown(false).put(
                    format!("flash.{op}.{}", cause.name()),
                    Unit::Count,
                    &format!(
                        "{what} caused by {} (time_us.cause.* says how causes are told apart)",
                        cause.name()
                    ),
                    value,
                );
            }
        }
        k.shown(true);
        let map = op_values(&self.map);
        for (i, (op, what)) in FLASH_OPS.iter().enumerate() {
            if *op == "spare_writes" {
                continue;
            }
            k.put(
                format!("map.{op}"),
                Unit::Count,
                &format!("{what} of the scheme's own mapping pages"),
                map[i],
            );
        }
        k.put(
            "write_amplification",
            Unit::Ratio,
            "page programs per host page written",
            num(self.flash.page_writes as f64 / h.write_pages as f64),
        );

        k.section = Section::MergesAndGc;
        let mut merges = 0;
        let mut merge_erases = 0;
        for kind in MergeKind::ALL {
            let m = self.merges[*kind as usize];
            let name = kind.name();
            k.shown(true).put(
                format!("merges.{name}"),
                Unit::Count,
                merge_description(*kind),
                m.count,
            );
            k.shown(false).put(
                format!("merges.{name}.erases"),
                Unit::Count,
                &format!("erases done by {name} merges"),
                m.erases,
            );
            k.put(
                format!("merges.{name}.copied_pages"),
                Unit::Pages,
                &format!("pages copied by {name} merges"),
                m.copied_pages,
            );
            merges += m.count;
            merge_erases += m.erases;
        }
        k.put("merges.total", Unit::Count, "merges of every kind", merges);
        k.shown(true).put(
            "merges.erases_per_merge",
            Unit::Ratio,
            "erases per merge",
            num(merge_erases as f64 / merges as f64),
        );
        k.put(
            "gc.runs",
            Unit::Count,
            "garbage-collection runs",
            self.gc_runs,
        );
        k.put(
            "gc.copied_pages",
            Unit::Pages,
            "pages copied by garbage collection",
            self.gc_copied_pages,
        );
        let replaced: u64 = self.log_utilization.iter().sum();
        if replaced > 0 || k.schema() {
            let written: u64 = self
                .log_utilization
                .iter()
                .enumerate()
                .map(|(i, n)| i as u64 * n)
                .sum();
            k.shown(false).put(
                "log_utilization.replacements",
                Unit::Count,
                "log blocks replaced",
                replaced,
            );
            k.shown(true).put(
                "log_utilization.mean",
                Unit::Ratio,
                "share of a log block's pages written when it was replaced (FAST paper Fig. 4)",
                num(written as f64 / (replaced * self.config.pages_per_block as u64) as f64),
            );
            k.shown(false).put(
                "log_utilization.histogram",
                Unit::Histogram,
                "log blocks replaced with each number of written pages (index = pages)",
                serde_json::to_value(&self.log_utilization).unwrap_or(Value::Null),
            );
        }

        k.section = Section::Caches;
        k.shown(true);
        for kind in CacheKind::ALL {
            let (hits, misses) = self.cache[*kind as usize];
            if hits + misses > 0 || k.schema() {
                let name = kind.name();
                k.put(
                    format!("cache.{name}.hits"),
                    Unit::Count,
                    &format!("{name} hits"),
                    hits,
                );
                k.put(
                    format!("cache.{name}.misses"),
                    Unit::Count,
                    &format!("{name} misses"),
                    misses,
                );
                k.put(
                    format!("cache.{name}.miss_ratio"),
                    Unit::Ratio,
                    &format!("{name} misses per lookup"),
                    num(misses as f64 / (hits + misses) as f64),
                );
            }
        }

        let t = &self.time_us;
        k.section = Section::Time;
        k.shown(true);
        k.put(
            "time_us.total",
            Unit::Us,
            "modeled time of every flash operation and NVRAM access of the run",
            num(t.total),
        );
        k.put(
            "time_us.requests",
            Unit::Us,
            "time charged to host requests (idle work and the end-of-trace flush excluded)",
            num(t.requests),
        );
        k.put(
            "time_us.merges",
            Unit::Us,
            "time of merges, wherever they ran (overlaps time_us.gc where a GC merges)",
            num(t.merges),
        );
        k.put(
            "time_us.gc",
            Unit::Us,
            "time of garbage collection including merges it runs (overlaps time_us.merges)",
            num(t.gc),
        );
        k.put(
            "time_us.map",
            Unit::Us,
            "time of operations on the scheme's mapping pages",
            num(t.map),
        );
        for cause in Cause::ALL {
            k.shown(false).put(
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
            num(self.latency_read.sum / h.read_pages as f64),
        );
        k.put(
            "time_us.per_write_page",
            Unit::Us,
            "time charged to writes per page written (NFTL paper Table 5)",
            num(self.latency_write.sum / h.write_pages as f64),
        );

        k.section = Section::Latency;
        for (name, l) in [("read", &self.latency_read), ("write", &self.latency_write)] {
            let what = |s: &str| format!("{s} of {name} requests (flash time charged to each)");
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
                num(l.mean),
            );
            k.shown(false).put(
                format!("latency_us.{name}.p50"),
                Unit::Us,
                &what("median latency"),
                num(l.p50),
            );
            k.shown(true).put(
                format!("latency_us.{name}.p99"),
                Unit::Us,
                &what("99th percentile latency (3 significant figures)"),
                num(l.p99),
            );
            k.shown(name == "write").put(
                format!("latency_us.{name}.max"),
                Unit::Us,
                &what("highest latency"),
                num(l.max),
            );
        }

        array::put(&mut k, self.array.as_ref());

        k.section = Section::WearAndRam;
        k.shown(true);
        k.put(
            "erase_count.max",
            Unit::Count,
            "highest erase count of a block",
            self.erase_count_max,
        );
        k.shown(false).put(
            "erase_count.min",
            Unit::Count,
            "lowest erase count of a block",
            self.erase_count_min,
        );
        k.shown(true).put(
            "erase_count.mean",
            Unit::Count,
            "mean erase count over every physical block",
            num(self.erase_count_mean),
        );
        k.shown(false).put(
            "erase_count.histogram",
            Unit::Histogram,
            "chip blocks by erase count in 10 buckets of erase_count.histogram_width counts (the last open)",
            serde_json::to_value(&self.erase_histogram).unwrap_or(Value::Null),
        );
        k.put(
            "erase_count.histogram_width",
            Unit::Count,
            "erase counts per bucket of erase_count.histogram",
            self.erase_histogram_width,
        );
        if let Some(b) = self
            .bad_blocks
            .or(k.schema().then(BadBlockFigures::default))
        {
            k.shown(true).put(
                "bad_blocks.factory",
                Unit::Count,
                "blocks bad from the factory (bad_block_ratio), skipped by every scheme",
                b.factory,
            );
            k.put(
                "bad_blocks.grown",
                Unit::Count,
                "blocks that wore out (an erase past endurance failed) and were replaced from the reserve",
                b.grown,
            );
            k.shown(false).put(
                "bad_blocks.reserve",
                Unit::Count,
                "chip blocks set aside to replace bad blocks (bad_block_reserve)",
                b.reserve,
            );
        }

        k.shown(true).put(
            "ram.total_bytes",
            Unit::Bytes,
            "RAM the scheme's tables need on a controller",
            self.ram.iter().map(|i| i.bytes).sum::<u64>(),
        );
        k.shown(false);
        if k.schema() {
            k.put(
                "ram.<structure>",
                Unit::Bytes,
                "RAM of one structure (ftlsim ram gives its layout)",
                0,
            );
        }
        for item in &self.ram {
            k.put(
                format!("ram.{}", item.name),
                Unit::Bytes,
                "RAM of one structure (ftlsim ram gives its layout)",
                item.bytes,
            );
        }
        k.put(
            "precondition.erases",
            Unit::Count,
            "erases during preconditioning, before the counters were zeroed",
            self.precondition_erases,
        );

        let p = &self.power;
        k.section = Section::Power;
        if p.mounts > 0 || p.cuts_planned > 0 || k.schema() {
            k.shown(true);
            k.put(
                "power.cuts_planned",
                Unit::Count,
                "distinct cut points a dry run of the same trace chose (power_cuts of them, fewer when draws \
                 coincide); a cut drops the rest of its request, so the run does fewer operations than the dry run \
                 and the last points can fall past its end",
                p.cuts_planned,
            );
            k.put(
                "power.cuts",
                Unit::Count,
                "power cuts of a crash test that landed (at most power.cuts_planned)",
                p.cuts,
            );
            k.put(
                "power.cuts_survived",
                Unit::Count,
                "cuts after which the mount and the durability check succeeded",
                p.cuts_survived,
            );
            k.shown(false);
            k.put(
                "power.cuts_in_merge_or_gc",
                Unit::Count,
                "cuts that landed inside a merge or garbage collection",
                p.cuts_in_merge_or_gc,
            );
            k.put(
                "power.cuts_in_map_io",
                Unit::Count,
                "cuts that landed on an operation of the scheme's mapping pages",
                p.cuts_in_map_io,
            );
            k.put(
                "power.torn_pages",
                Unit::Count,
                "cuts that tore the page program they landed on (torn_pages)",
                p.torn_pages,
            );
            k.put(
                "power.torn_in_merge_or_gc",
                Unit::Count,
                "torn pages that a merge or garbage collection was programming",
                p.torn_in_merge_or_gc,
            );
            k.put(
                "power.pages_checked",
                Unit::Pages,
                "logical pages read back and checked after the mounts",
                p.pages_checked,
            );
            k.put("mount.count", Unit::Count, "mounts from flash", p.mounts);
            k.shown(true);
            k.put(
                "mount.spare_reads",
                Unit::Count,
                "spare reads of all mounts",
                p.mount_spare_reads,
            );
            k.put(
                "mount.page_reads",
                Unit::Count,
                "page reads of all mounts",
                p.mount_page_reads,
            );
            k.put(
                "mount.time_us.mean",
                Unit::Us,
                "modeled time of a mount (boot), mean",
                num(p.mount_time_us_sum / p.mounts as f64),
            );
            k.put(
                "mount.time_us.max",
                Unit::Us,
                "modeled time of a mount (boot), longest",
                num(p.mount_time_us_max),
            );
        }

        k.section = Section::Scheme;
        if k.schema() {
            k.put(
                "<scheme>.<figure>",
                Unit::Count,
                "a scheme's own figures (nftl.*, mast.*, nvram.*, ...): see the scheme's header",
                0,
            );
        }
        let figures = || crate::ftl::FIGURES.iter().flat_map(|f| f.iter());
        if k.schema() {
            for (key, what) in figures() {
                let unit = if key.contains(".profile") {
                    Unit::Text
                } else {
                    Unit::Count
                };
                k.put(*key, unit, what, 0);
            }
        }
        for (key, value) in &self.extra {
            let what = figures()
                .find(|(known, _)| known == key)
                .map_or("a scheme's own figure", |(_, what)| what);
            let unit = if value.is_string() {
                Unit::Text
            } else {
                Unit::Count
            };
            k.put(key.clone(), unit, what, value.clone());
        }

        let s = &self.sim;
        k.section = Section::Simulator;
        k.shown(false).put(
            "sim.skipped_lines",
            Unit::Count,
            "trace lines skipped (skip_bad_lines)",
            s.skipped_lines,
        );
        k.put(
            "sim.setup_s",
            Unit::Seconds,
            "wall time before the first request",
            num(s.setup_s),
        );
        k.shown(true).put(
            "sim.wall_s",
            Unit::Seconds,
            "wall time of the request loop",
            num(s.wall_s),
        );
        k.put(
            "sim.requests_per_s",
            Unit::PerSecond,
            "host requests simulated per wall second",
            num(s.requests_per_s),
        );
        k.put(
            "sim.flash_ops_per_s",
            Unit::PerSecond,
            "flash page reads + programs + erases simulated per wall second",
            num(s.flash_ops_per_s),
        );
        k.put(
            "sim.spare_reads_per_s",
            Unit::PerSecond,
            "spare-area reads simulated per wall second",
            num(s.spare_reads_per_s),
        );
        k.shown(false).put(
            "sim.chip_memory_bytes",
            Unit::Bytes,
            "host memory the chip model holds",
            s.chip_memory_bytes,
        );
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

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(&self.flatten()).expect("a report is plain JSON")
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
