//! `compact = true`: a trace whose requests span a huge, sparse address space (terabytes, a few gigabytes
//! written) runs on a device of its footprint. A pre-pass collects the 1 MiB extents the
//! trace touches; requests are then moved so that those extents lie densely from offset 0, in their address
//! order. Offsets within an extent are kept, so alignment to pages and blocks of up to 1 MiB is kept too.
//!
//! Choices: every extent a request covers counts as touched, trims included (a trim must land where the data
//! it drops was written); the map is a sorted list of runs of consecutive extents, searched by bisection
//! (memory grows with the runs, time with log(runs) per request; no hashing).

use crate::request::Request;
use crate::trace::{RequestSource, TraceError, Wrapped};
use std::sync::Arc;

/// The unit of compaction: 1 MiB.
pub const EXTENT_BYTES: u64 = 1 << 20;

/// A run of consecutive touched extents, `first..=last`, placed from extent `to` of the compacted space.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Run {
    first: u64,
    last: u64,
    to: u64,
}

/// Extent ranges collected while scanning, merged into sorted disjoint runs.
#[derive(Default)]
struct Extents {
    ranges: Vec<(u64, u64)>,
    merged_len: usize,
}

impl Extents {
    fn add(&mut self, first: u64, last: u64) {
        if let Some(&(a, b)) = self.ranges.last() {
            if first >= a && last <= b {
                return;
            }
        }
        self.ranges.push((first, last));
        // Merging whenever the list doubles keeps memory proportional to the distinct runs.
        if self.ranges.len() >= 2 * self.merged_len.max(1 << 16) {
            self.merge();
        }
    }

    fn merge(&mut self) {
        self.ranges.sort_unstable();
        let mut out: Vec<(u64, u64)> = Vec::with_capacity(self.ranges.len());
        for &(a, b) in &self.ranges {
            match out.last_mut() {
                Some(last) if a <= last.1.saturating_add(1) => last.1 = last.1.max(b),
                _ => out.push((a, b)),
            }
        }
        self.ranges = out;
        self.merged_len = self.ranges.len();
    }

    fn into_runs(mut self) -> Vec<Run> {
        self.merge();
        let mut to = 0;
        self.ranges
            .into_iter()
            .map(|(first, last)| {
                let run = Run { first, last, to };
                to += last - first + 1;
                run
            })
            .collect()
    }
}

/// The extents `[first, last]` a request covers (a zero-length request covers the extent of its offset).
fn extents_of(r: &Request) -> (u64, u64) {
    let end = r.offset.saturating_add(r.len.max(1)) - 1;
    (r.offset / EXTENT_BYTES, end / EXTENT_BYTES)
}

/// Where the touched extents of a trace land: made by one pass over the trace ([`Compaction::scan`]) and
/// shared by every reading of it (a run's dry run, preconditioning and replay).
#[derive(Debug, PartialEq)]
pub struct Compaction {
    runs: Vec<Run>,
    /// The furthest byte any request addresses, before placing: (its last byte, or the offset of a zero-length
    /// request; whether the request has bytes). None for a trace without requests.
    last: Option<(u64, bool)>,
}

impl Compaction {
    /// Reads `source` once for the extents it touches. `progress` is told (done, total) every 16,384
    /// requests; false cancels.
    pub fn scan(
        mut source: Box<dyn RequestSource>,
        progress: &mut dyn FnMut(u64, u64) -> bool,
    ) -> Result<Compaction, TraceError> {
        let mut extents = Extents::default();
        let mut last: Option<(u64, bool)> = None;
        let mut n = 0u64;
        while let Some(r) = source.next_request() {
            let r = r?;
            let (first, end) = extents_of(&r);
            extents.add(first, end);
            let byte = (r.offset.saturating_add(r.len.max(1)) - 1, r.len > 0);
            last = last.max(Some(byte));
            n += 1;
            if n.is_multiple_of(1 << 14) {
                let (done, total) = source.progress();
                if !progress(done, total) {
                    return Err(TraceError::Cancelled);
                }
            }
        }
        Ok(Compaction {
            runs: extents.into_runs(),
            last,
        })
    }

    /// Bytes of the compacted space: the touched extents.
    pub fn footprint_bytes(&self) -> u64 {
        self.runs
            .last()
            .map_or(0, |r| (r.to + r.last - r.first + 1) * EXTENT_BYTES)
    }

    /// The end of the furthest request once placed (max offset + len of the compacted trace): placing keeps
    /// the order of the touched bytes and a request's extents lie in one run, so it is the furthest byte's.
    pub fn highest_address(&self) -> u64 {
        self.last.map_or(0, |(byte, has_bytes)| {
            self.place_byte(byte) + has_bytes as u64
        })
    }

    /// Where a touched byte lands.
    fn place_byte(&self, byte: u64) -> u64 {
        let extent = byte / EXTENT_BYTES;
        let i = self.runs.partition_point(|run| run.last < extent);
        // Every request was scanned, so its extents lie in one run.
        match self.runs.get(i).filter(|run| run.first <= extent) {
            Some(run) => (run.to + extent - run.first) * EXTENT_BYTES + byte % EXTENT_BYTES,
            None => byte,
        }
    }

    /// Where a request of the scanned trace lands.
    fn place(&self, mut r: Request) -> Request {
        r.offset = self.place_byte(r.offset);
        r
    }
}

/// `inner` (a reading of the trace `map` was scanned from) with its requests moved onto the touched extents,
/// densely.
pub fn compacted(inner: Box<dyn RequestSource>, map: Arc<Compaction>) -> Box<dyn RequestSource> {
    Box::new(Wrapped::new(inner, move |inner: &mut dyn RequestSource| {
        Some(inner.next_request()?.map(|r| map.place(r)))
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::Op;
    use crate::trace::VecSource;

    const MIB: u64 = EXTENT_BYTES;
    const TIB: u64 = 1 << 40;

    fn compacted_offsets(requests: Vec<Request>) -> (Vec<u64>, u64) {
        let map =
            Compaction::scan(Box::new(VecSource::new(requests.clone())), &mut |_, _| true).unwrap();
        let (footprint, highest) = (map.footprint_bytes(), map.highest_address());
        let mut c = compacted(Box::new(VecSource::new(requests)), Arc::new(map));
        let placed: Vec<Request> = std::iter::from_fn(|| c.next_request())
            .map(|r| r.unwrap())
            .collect();
        // The highest address the map states is the compacted trace's own.
        let furthest = placed.iter().map(|r| r.offset + r.len).max().unwrap_or(0);
        assert_eq!(highest, furthest);
        (placed.iter().map(|r| r.offset).collect(), footprint)
    }

    #[test]
    fn touched_extents_are_packed_in_address_order_offsets_within_kept() {
        let w = |offset, len| Request::new(0.0, Op::Write, offset, len);
        // Extents touched: 16 TiB/1MiB (+0), 3 (the 4 KiB at 3 MiB + 512), 5 and 6 (a request across the
        // boundary), 0. Packed order: 0, 3, 5, 6, 16 TiB.
        let (offsets, footprint) = compacted_offsets(vec![
            w(16 * TIB, 4096),
            w(3 * MIB + 512, 4096),
            w(6 * MIB - 4096, 8192),
            w(7, 1),
            w(16 * TIB + 8192, 512),
        ]);
        assert_eq!(
            offsets,
            vec![4 * MIB, MIB + 512, 3 * MIB - 4096, 7, 4 * MIB + 8192]
        );
        assert_eq!(footprint, 5 * MIB);
    }

    #[test]
    fn the_highest_address_is_the_furthest_placed_byte_a_zero_length_request_included() {
        let r = |offset, len| Request::new(0.0, Op::Write, offset, len);
        // Extents 0 and 5 are touched; the furthest request is empty, 10 bytes into extent 5 (placed 1).
        let (offsets, footprint) = compacted_offsets(vec![r(0, 4096), r(5 * MIB + 10, 0)]);
        assert_eq!((offsets, footprint), (vec![0, MIB + 10], 2 * MIB));
        // An empty request on a byte a longer one ends past: the longer one's end is the highest.
        let (offsets, _) = compacted_offsets(vec![r(MIB + 99, 1), r(MIB + 99, 0)]);
        assert_eq!(offsets, vec![99, 99]);
    }

    #[test]
    fn many_scattered_extents_merge_to_runs() {
        // 200,000 requests on every other extent, in reverse: the map holds 100,000 runs (forcing merges).
        let requests: Vec<Request> = (0..200_000u64)
            .rev()
            .map(|i| Request::new(0.0, Op::Write, (i / 2) * 2 * MIB, 512))
            .collect();
        let (offsets, footprint) = compacted_offsets(requests);
        assert_eq!(footprint, 100_000 * MIB);
        assert_eq!(offsets[0], 99_999 * MIB);
        assert_eq!(offsets[199_999], 0);
    }
}
