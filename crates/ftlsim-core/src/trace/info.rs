//! `ftlsim info`: what a trace asks of a device, in two streaming passes. The first counts requests and bytes
//! and finds the highest address; the second counts the writes to every logical page in a [`SparseVec`] sized
//! to that address (memory grows with the pages touched, not the address range).
//!
//! Choices: the footprint counts pages read or written (trims touch no data); a partial-page write counts as
//! one write of each page it touches; the hottest x% of n written pages (or blocks) are the ceil(x% * n)
//! with the most page writes; a workload spec is spread over a 64 MiB logical space.

use super::{open, TraceError, TraceOptions};
use crate::request::Op;
use crate::sparse::SparseVec;
use serde::Serialize;

/// Logical space a built-in workload spreads over when `info` runs on one.
pub const WORKLOAD_BYTES: u64 = 64 << 20;

/// Page tables beyond this many pages would cost too much just for their chunk index.
const MAX_PAGES: u64 = 1 << 36;

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct TraceInfo {
    pub requests: u64,
    pub reads: u64,
    pub writes: u64,
    pub trims: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub trim_bytes: u64,
    /// Lines skipped because they did not parse (with `skip_bad_lines`).
    pub skipped_lines: u64,
    pub page_bytes: u32,
    pub block_bytes: u64,
    /// Distinct pages read or written, times the page size.
    pub footprint_bytes: u64,
    /// Distinct pages written, times the page size.
    pub write_footprint_bytes: u64,
    /// The furthest byte addressed: max(offset + len).
    pub highest_address: u64,
    /// Last request time minus first (0 for traces without times).
    pub duration_us: f64,
    /// Pages written, counting every write of a page.
    pub page_writes: u64,
    pub written_pages: u64,
    /// Logical blocks (of `block_bytes`) with at least one page written.
    pub written_blocks: u64,
    /// Share of `page_writes` that hit the hottest 0.2% / 1% of the written pages.
    pub write_share_hottest_0_2pct_pages: f64,
    pub write_share_hottest_1pct_pages: f64,
    /// Share of `page_writes` that hit the hottest 0.2% / 1% of the written blocks.
    pub write_share_hottest_0_2pct_blocks: f64,
    pub write_share_hottest_1pct_blocks: f64,
}

/// Reads `spec` (a trace file or a workload) twice and describes it.
pub fn info(
    spec: &str,
    opts: &TraceOptions,
    block_bytes: u64,
    page_bytes: u32,
) -> Result<TraceInfo, TraceError> {
    let bad = |what: String| TraceError::Option {
        spec: spec.to_string(),
        what,
    };
    if page_bytes == 0 || block_bytes < page_bytes as u64 {
        return Err(bad(format!(
            "info needs page_bytes > 0 and block_bytes >= page_bytes, got page_bytes {page_bytes} and block_bytes {block_bytes}"
        )));
    }
    let page = page_bytes as u64;
    let mut t = TraceInfo {
        page_bytes,
        block_bytes,
        ..TraceInfo::default()
    };
    let (mut first_us, mut last_us) = (f64::INFINITY, f64::NEG_INFINITY);
    let mut source = open(spec, opts, WORKLOAD_BYTES, page_bytes)?;
    while let Some(r) = source.next_request() {
        let r = r?;
        t.requests += 1;
        match r.op {
            Op::Read => (t.reads, t.read_bytes) = (t.reads + 1, t.read_bytes + r.len),
            Op::Write => (t.writes, t.write_bytes) = (t.writes + 1, t.write_bytes + r.len),
            Op::Trim => (t.trims, t.trim_bytes) = (t.trims + 1, t.trim_bytes + r.len),
        }
        t.highest_address = t.highest_address.max(r.offset.saturating_add(r.len));
        first_us = first_us.min(r.time_us);
        last_us = last_us.max(r.time_us);
    }
    t.skipped_lines = source.skipped_lines();
    if t.requests > 0 {
        t.duration_us = last_us - first_us;
    }
    let pages = t.highest_address.div_ceil(page);
    if pages > MAX_PAGES {
        return Err(bad(format!(
            "the highest address {} is {pages} pages of {page_bytes} B, more than info handles ({MAX_PAGES}); pass a larger page size",
            t.highest_address
        )));
    }

    // Per page: 0 untouched, 1 read only, 1 + n written n times.
    let mut touched = SparseVec::new(pages as usize, 0u32);
    let mut source = open(spec, opts, WORKLOAD_BYTES, page_bytes)?;
    while let Some(r) = source.next_request() {
        let r = r?;
        if r.op == Op::Trim || r.len == 0 {
            continue;
        }
        for p in r.offset / page..=(r.offset + r.len - 1) / page {
            let v = touched.get_mut(p as usize);
            *v = match r.op {
                Op::Write => (*v).max(1).saturating_add(1),
                _ => (*v).max(1),
            };
        }
    }

    let mut page_counts = Vec::new();
    let mut block_counts = Vec::new();
    let (mut block, mut block_sum) = (0, 0u64);
    for p in 0..pages {
        let v = touched.get(p as usize);
        if v == 0 {
            continue;
        }
        t.footprint_bytes += page;
        if v == 1 {
            continue;
        }
        let writes = (v - 1) as u64;
        page_counts.push(writes);
        let b = p * page / block_bytes;
        if b != block && block_sum > 0 {
            block_counts.push(block_sum);
            block_sum = 0;
        }
        block = b;
        block_sum += writes;
    }
    if block_sum > 0 {
        block_counts.push(block_sum);
    }
    t.page_writes = page_counts.iter().sum();
    t.written_pages = page_counts.len() as u64;
    t.write_footprint_bytes = t.written_pages * page;
    t.written_blocks = block_counts.len() as u64;
    t.write_share_hottest_0_2pct_pages = hottest_share(&mut page_counts, 2, 1000);
    t.write_share_hottest_1pct_pages = hottest_share(&mut page_counts, 1, 100);
    t.write_share_hottest_0_2pct_blocks = hottest_share(&mut block_counts, 2, 1000);
    t.write_share_hottest_1pct_blocks = hottest_share(&mut block_counts, 1, 100);
    Ok(t)
}

/// Share of the total held by the ceil(n * num / den) largest counts.
fn hottest_share(counts: &mut [u64], num: usize, den: usize) -> f64 {
    let total: u64 = counts.iter().sum();
    if total == 0 {
        return 0.0;
    }
    let k = (counts.len() * num).div_ceil(den);
    counts.sort_unstable_by(|a, b| b.cmp(a));
    counts[..k].iter().sum::<u64>() as f64 / total as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hottest_share_takes_the_ceiling() {
        // 150 counts: ceil(0.3) = 1 for 0.2%, ceil(1.5) = 2 for 1%.
        let mut counts = vec![1u64; 148];
        counts.extend([5, 10]);
        assert_eq!(hottest_share(&mut counts, 2, 1000), 10.0 / 163.0);
        assert_eq!(hottest_share(&mut counts, 1, 100), 15.0 / 163.0);
        assert_eq!(hottest_share(&mut [], 1, 100), 0.0);
    }
}
