//! `compact = true`: a trace whose requests span a huge, sparse address space (terabytes, a few gigabytes
//! written) runs on a device of its footprint. A pre-pass collects the 1 MiB extents the
//! trace touches; requests are then moved so that those extents lie densely from offset 0, in their address
//! order. Offsets within an extent are kept, so alignment to pages and blocks of up to 1 MiB is kept too.
//!
//! Choices: every extent a request covers counts as touched, trims included (a trim must land where the data
//! it drops was written); the map is a sorted list of runs of consecutive extents, searched by bisection
//! (memory grows with the runs, time with log(runs) per request; no hashing).

use super::{RequestSource, TraceError};
use crate::request::Request;

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

/// A request source whose requests are moved onto the touched extents, densely.
pub struct Compact {
    inner: Box<dyn RequestSource>,
    runs: Vec<Run>,
}

impl Compact {
    /// Scans `scan` (a first reading of the trace) for the extents it touches, then serves `inner` (a second
    /// reading) compacted. `progress` is told (done, total) of the scan every 16,384 requests; false cancels.
    pub fn new(
        mut scan: Box<dyn RequestSource>,
        inner: Box<dyn RequestSource>,
        progress: &mut dyn FnMut(u64, u64) -> bool,
    ) -> Result<Compact, TraceError> {
        let mut extents = Extents::default();
        let mut n = 0u64;
        while let Some(r) = scan.next_request() {
            let (first, last) = extents_of(&r?);
            extents.add(first, last);
            n += 1;
            if n.is_multiple_of(1 << 14) {
                let (done, total) = scan.progress();
                if !progress(done, total) {
                    return Err(TraceError::Cancelled);
                }
            }
        }
        Ok(Compact {
            inner,
            runs: extents.into_runs(),
        })
    }

    /// Bytes of the compacted space: the touched extents.
    pub fn footprint_bytes(&self) -> u64 {
        self.runs
            .last()
            .map_or(0, |r| (r.to + r.last - r.first + 1) * EXTENT_BYTES)
    }

    /// Where a request of the scanned trace lands.
    fn place(&self, mut r: Request) -> Request {
        let (first, _) = extents_of(&r);
        let i = self.runs.partition_point(|run| run.last < first);
        // Every request was scanned, so its extents lie in one run.
        if let Some(run) = self.runs.get(i).filter(|run| run.first <= first) {
            r.offset = (run.to + first - run.first) * EXTENT_BYTES + r.offset % EXTENT_BYTES;
        }
        r
    }
}

impl RequestSource for Compact {
    fn next_request(&mut self) -> Option<Result<Request, TraceError>> {
        let r = self.inner.next_request()?;
        Some(r.map(|r| self.place(r)))
    }

    fn skipped_lines(&self) -> u64 {
        self.inner.skipped_lines()
    }

    fn progress(&self) -> (u64, u64) {
        self.inner.progress()
    }

    fn position(&self) -> Option<String> {
        self.inner.position()
    }

    fn mark(&self) -> u64 {
        self.inner.mark()
    }

    fn position_at(&self, mark: u64) -> Option<String> {
        self.inner.position_at(mark)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::Op;
    use crate::trace::VecSource;

    const MIB: u64 = EXTENT_BYTES;
    const TIB: u64 = 1 << 40;

    fn compacted(requests: Vec<Request>) -> (Vec<u64>, u64) {
        let c = Compact::new(
            Box::new(VecSource::new(requests.clone())),
            Box::new(VecSource::new(requests)),
            &mut |_, _| true,
        )
        .unwrap();
        let footprint = c.footprint_bytes();
        let mut c: Box<dyn RequestSource> = Box::new(c);
        let offsets = std::iter::from_fn(|| c.next_request())
            .map(|r| r.unwrap().offset)
            .collect();
        (offsets, footprint)
    }

    #[test]
    fn touched_extents_are_packed_in_address_order_offsets_within_kept() {
        let w = |offset, len| Request::new(0.0, Op::Write, offset, len);
        // Extents touched: 16 TiB/1MiB (+0), 3 (the 4 KiB at 3 MiB + 512), 5 and 6 (a request across the
        // boundary), 0. Packed order: 0, 3, 5, 6, 16 TiB.
        let (offsets, footprint) = compacted(vec![
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
    fn many_scattered_extents_merge_to_runs() {
        // 200,000 requests on every other extent, in reverse: the map holds 100,000 runs (forcing merges).
        let requests: Vec<Request> = (0..200_000u64)
            .rev()
            .map(|i| Request::new(0.0, Op::Write, (i / 2) * 2 * MIB, 512))
            .collect();
        let (offsets, footprint) = compacted(requests);
        assert_eq!(footprint, 100_000 * MIB);
        assert_eq!(offsets[0], 99_999 * MIB);
        assert_eq!(offsets[199_999], 0);
    }
}
