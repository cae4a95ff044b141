//! Counters that schemes record through the device: merges by kind, garbage collection, cache hits, log-block
//! utilization. Flash operations themselves are counted by the chip ([`crate::nand`]), never by a scheme.

use crate::config::Timing;
use hdrhistogram::Histogram;
use serde::Serialize;

/// A histogram of times in nanoseconds with 3 significant figures, up to an hour (longer ones saturate): the
/// latencies of the serial model and the response times of the event model.
pub(crate) fn time_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 3_600_000_000_000, 3).expect("valid bounds")
}

/// A time in microseconds, never negative, to the nearest nanosecond: adding a half and truncating rounds as
/// `f64::round` does, without its call to libm (baseline x86-64) in the request loop.
#[inline(always)]
pub(crate) fn nearest_ns(us: f64) -> u64 {
    (us * 1000.0 + 0.5) as u64
}

/// Flash operation counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct FlashCounts {
    pub page_reads: u64,
    pub spare_reads: u64,
    pub page_writes: u64,
    pub spare_writes: u64,
    pub erases: u64,
}

impl FlashCounts {
    pub fn plus(&self, o: &FlashCounts) -> FlashCounts {
        FlashCounts {
            page_reads: self.page_reads + o.page_reads,
            spare_reads: self.spare_reads + o.spare_reads,
            page_writes: self.page_writes + o.page_writes,
            spare_writes: self.spare_writes + o.spare_writes,
            erases: self.erases + o.erases,
        }
    }

    pub fn minus(&self, o: &FlashCounts) -> FlashCounts {
        FlashCounts {
            page_reads: self.page_reads - o.page_reads,
            spare_reads: self.spare_reads - o.spare_reads,
            page_writes: self.page_writes - o.page_writes,
            spare_writes: self.spare_writes - o.spare_writes,
            erases: self.erases - o.erases,
        }
    }

    /// Elapsed flash time of these operations: the sum of count x latency.
    pub fn time_us(&self, t: &Timing) -> f64 {
        self.page_reads as f64 * t.read_us
            + self.spare_reads as f64 * t.spare_read_us
            + self.page_writes as f64 * t.program_us
            + self.spare_writes as f64 * t.spare_program_us
            + self.erases as f64 * t.erase_us
    }
}

/// An enum of report kinds with its list, count and report name in one place: adding a kind is one line here,
/// and every array indexed by the kind, the report's keys and its schema follow.
macro_rules! kinds {
    ($(#[$meta:meta])* pub enum $name:ident { $($(#[$vmeta:meta])* $variant:ident => $key:literal,)+ }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum $name { $($(#[$vmeta])* $variant,)+ }

        impl $name {
            /// Every kind, in report order.
            pub const ALL: &'static [$name] = &[$($name::$variant,)+];
            /// How many kinds there are: the length of arrays indexed by the kind.
            pub const COUNT: usize = Self::ALL.len();

            /// The kind's name in report keys.
            pub fn name(self) -> &'static str {
                match self { $($name::$variant => $key,)+ }
            }
        }
    };
}

kinds! {
    /// How a log block (or replacement block) was reclaimed.
    pub enum MergeKind {
        /// The log block was written fully in order and became the data block: one erase, no copy.
        Switch => "switch",
        /// The missing pages were copied into the log block, which became the data block: one erase.
        Partial => "partial",
        /// Newest pages of data and log block copied to a free block; both erased.
        Full => "full",
        /// The log block held nothing valid: it was only erased.
        Dead => "dead",
        /// NFTL's fold of a primary and its replacement block.
        Fold => "fold",
    }
}

kinds! {
    /// Caches whose hits and misses are reported.
    pub enum CacheKind {
        /// NFTL technique 2: physical location of recently written pages.
        PageCache => "page_cache",
        /// TinyFTL's block table cache.
        BlockTableCache => "block_table_cache",
        /// TinyFTL's page mapping cache / Superblock's page-map cache.
        PageMapCache => "page_map_cache",
        /// A zone of the block map held in RAM (Logblock-zoned).
        Zone => "zone",
        /// The NVRAM write cache in front of a scheme.
        Nvram => "nvram",
        /// DFTL's cached mapping table.
        Cmt => "cmt",
    }
}

kinds! {
    /// Why flash time was spent: a partition of every operation (and NVRAM access) of a run. The precedence
    /// that makes it a partition: an operation on the scheme's own mapping pages is `map`; otherwise an
    /// operation during idle time, the end-of-trace flush or a crash test's check is `idle`, `flush` or
    /// `check`; otherwise one inside a merge or a garbage collection is `merge` or `gc`; the rest of a mount is
    /// `mount` (the innermost, so a merge run by a GC is a merge); a read of
    /// the old page for a partial-page write is `rmw`; the rest is `host`; NVRAM accesses are `nvram`.
    pub enum Cause {
        /// Host reads and writes themselves.
        Host => "host",
        /// Reading the old page before a partial-page write.
        Rmw => "rmw",
        /// Merges of log or replacement blocks (switch, partial, full, dead, fold).
        Merge => "merge",
        /// Garbage collection outside merges.
        Gc => "gc",
        /// The scheme's mapping pages on flash.
        Map => "map",
        /// Background work in idle gaps of the trace.
        Idle => "idle",
        /// The end-of-trace flush of a write cache.
        Flush => "flush",
        /// Accesses to an NVRAM write cache.
        Nvram => "nvram",
        /// Rebuilding the scheme's RAM from flash after a power cut.
        Mount => "mount",
        /// The crash test's own reads of every logical page after a mount (not part of the workload).
        Check => "check",
    }
}

/// Merge-related totals of one kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MergeTotals {
    pub count: u64,
    pub erases: u64,
    pub copied_pages: u64,
}

/// Everything a scheme records besides flash operations.
#[derive(Clone, Debug, Default)]
pub struct Stats {
    pub merges: [MergeTotals; MergeKind::COUNT],
    pub merge_ops: FlashCounts,
    pub gc_runs: u64,
    pub gc_copied_pages: u64,
    pub gc_ops: FlashCounts,
    /// (hits, misses) per cache.
    pub cache: [(u64, u64); CacheKind::COUNT],
    /// Histogram of written pages in a log block when it is replaced: index = pages written.
    pub log_utilization: Vec<u64>,
}

impl Stats {
    pub fn new(pages_per_block: u32) -> Stats {
        Stats {
            log_utilization: vec![0; pages_per_block as usize + 1],
            ..Default::default()
        }
    }
}
