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

/// Times counted exactly as [`time_histogram`] counts them, in a plain array: a record is a shift, a mask and an
/// add, where the library's also keeps a minimum, a maximum and a total through a call that returns a result. The
/// event model records every request's response time: on page-mapped striped dies (`benches/array.rs`) it ran 6%
/// faster with no record at all, and runs 2% faster with this one than with the library's.
/// [`TimeCounts::histogram`] hands the counts to the library for quantiles.
pub(crate) struct TimeCounts {
    counts: Vec<u64>,
    len: u64,
}

/// [`time_histogram`]'s layout: 2,048 sub-buckets (3 significant figures) from 1 ns, in buckets of
/// doubling width; a value is counted at the index the library gives it.
const HALF_SUB_BUCKETS_LOG2: u32 = 10;
const SUB_BUCKET_MASK: u64 = (2 << HALF_SUB_BUCKETS_LOG2) - 1;
/// The library's highest trackable value: a value past its last index (the end of the highest's bucket)
/// counts at this one's.
const HIGHEST_NS: u64 = 3_600_000_000_000;

/// The library's index of `ns` ([`time_histogram`]'s `index_for`): its bucket, the powers of two it is past
/// the first bucket's 2,048 values; its sub-bucket, its top 11 bits from there.
#[inline(always)]
fn time_index(ns: u64) -> usize {
    let bucket = 64 - HALF_SUB_BUCKETS_LOG2 - 1 - (ns | SUB_BUCKET_MASK).leading_zeros();
    let sub_bucket = (ns >> bucket) as usize;
    ((bucket as usize + 1) << HALF_SUB_BUCKETS_LOG2) + sub_bucket - (1 << HALF_SUB_BUCKETS_LOG2)
}

/// The least value the library counts at index `i`.
fn time_at_index(i: usize) -> u64 {
    let (bucket, sub_bucket) = match (i >> HALF_SUB_BUCKETS_LOG2).checked_sub(1) {
        Some(bucket) => (
            bucket,
            (i & ((1 << HALF_SUB_BUCKETS_LOG2) - 1)) + (1 << HALF_SUB_BUCKETS_LOG2),
        ),
        None => (0, i),
    };
    (sub_bucket as u64) << bucket
}

impl TimeCounts {
    pub(crate) fn new() -> TimeCounts {
        TimeCounts {
            counts: vec![0; time_histogram().distinct_values()],
            len: 0,
        }
    }

    /// Counts `ns` as the library's `saturating_record` does: past its last index, at the highest trackable
    /// value's.
    #[inline]
    pub(crate) fn record(&mut self, ns: u64) {
        let i = time_index(ns);
        let i = if i < self.counts.len() {
            i
        } else {
            time_index(HIGHEST_NS)
        };
        self.counts[i] += 1;
        self.len += 1;
    }

    /// How many times are counted.
    pub(crate) fn len(&self) -> u64 {
        self.len
    }

    /// The library's histogram of the times counted: the same count at every index.
    pub(crate) fn histogram(&self) -> Histogram<u64> {
        let mut hist = time_histogram();
        for (i, &n) in self.counts.iter().enumerate().filter(|(_, &n)| n > 0) {
            hist.record_n(time_at_index(i), n)
                .expect("every index's value is trackable");
        }
        hist
    }
}

/// A time in microseconds, never negative, to the nearest nanosecond: adding a half and truncating rounds as
/// `f64::round` does, without its call to libm (baseline x86-64) in the request loop.
#[inline(always)]
pub(crate) fn nearest_ns(us: f64) -> u64 {
    (us * 1000.0 + 0.5) as u64
}

/// A time read from [`time_histogram`] (a bucket's highest value) to 3 significant figures, the histogram's
/// precision: a bucket edge would show 200 us as 200.063. Latencies and response times are both reported so.
pub(crate) fn to_3_figures(v: f64) -> f64 {
    if v <= 0.0 {
        return 0.0;
    }
    let scale = 10f64.powi(2 - v.log10().floor() as i32);
    (v * scale).round() / scale
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

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// Counts made by [`TimeCounts`] and by the library's own record are the same histogram: at every
    /// bucket's edges, past the highest trackable value, and over many random times of every magnitude.
    #[test]
    fn time_counts_count_as_the_library_does() {
        let mut edges = vec![0, 1, 2, 1023, 1024, 2047, 2048, 2049, 4095, 4096, 4097];
        for shift in 11..63 {
            edges.extend([(1u64 << shift) - 1, 1 << shift, (1 << shift) + 1]);
        }
        edges.extend([
            HIGHEST_NS - 1,
            HIGHEST_NS,
            HIGHEST_NS + 1,
            HIGHEST_NS * 2,
            u64::MAX,
        ]);
        let mut rng = rand_pcg::Pcg64::seed_from_u64(7);
        let random = (0..200_000).map(|_| rng.gen::<u64>() >> rng.gen_range(0..64));
        let (mut ours, mut library) = (TimeCounts::new(), time_histogram());
        for ns in edges.into_iter().chain(random) {
            ours.record(ns);
            library.saturating_record(ns);
        }
        let counted = ours.histogram();
        assert_eq!(counted.len(), ours.len());
        assert!(counted == library, "the histograms differ");
        for q in [0.0, 0.1, 0.5, 0.9, 0.99, 0.999, 1.0] {
            assert_eq!(counted.value_at_quantile(q), library.value_at_quantile(q));
        }
    }
}
