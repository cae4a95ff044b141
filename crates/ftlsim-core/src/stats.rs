//! Counters that schemes record through the device: merges by kind, garbage collection, cache hits, log-block
//! utilization. Flash operations themselves are counted by the chip ([`crate::nand`]), never by a scheme.

use crate::config::Timing;
use serde::Serialize;

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

/// How a log block (or replacement block) was reclaimed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MergeKind {
    /// The log block was written fully in order and became the data block: one erase, no copy.
    Switch = 0,
    /// The missing pages were copied into the log block, which became the data block: one erase.
    Partial = 1,
    /// Newest pages of data and log block copied to a free block; both erased.
    Full = 2,
    /// The log block held nothing valid: it was only erased.
    Dead = 3,
    /// NFTL's fold of a primary and its replacement block.
    Fold = 4,
}

pub const MERGE_KINDS: [MergeKind; 5] = [
    MergeKind::Switch,
    MergeKind::Partial,
    MergeKind::Full,
    MergeKind::Dead,
    MergeKind::Fold,
];

impl MergeKind {
    pub fn name(self) -> &'static str {
        ["switch", "partial", "full", "dead", "fold"][self as usize]
    }
}

/// Caches whose hits and misses are reported.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CacheKind {
    /// NFTL technique 2: physical location of recently written pages.
    PageCache = 0,
    /// TinyFTL's block table cache.
    BlockTableCache = 1,
    /// TinyFTL's page mapping cache / Superblock's page-map cache.
    PageMapCache = 2,
    /// A zone of the block map held in RAM (Logblock-zoned).
    Zone = 3,
    /// The NVRAM write cache in front of a scheme.
    Nvram = 4,
}

pub const CACHE_KINDS: [CacheKind; 5] = [
    CacheKind::PageCache,
    CacheKind::BlockTableCache,
    CacheKind::PageMapCache,
    CacheKind::Zone,
    CacheKind::Nvram,
];

impl CacheKind {
    pub fn name(self) -> &'static str {
        [
            "page_cache",
            "block_table_cache",
            "page_map_cache",
            "zone",
            "nvram",
        ][self as usize]
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
    pub merges: [MergeTotals; 5],
    pub merge_ops: FlashCounts,
    pub gc_runs: u64,
    pub gc_copied_pages: u64,
    pub gc_ops: FlashCounts,
    pub cache: [(u64, u64); 5],
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
