//! `ftlsim info`: what a trace asks of a device, in a pass that counts its devices (and lays them out, see
//! [`crate::trace::layout::devices`]) and one streaming pass whose memory and time grow with the trace's requests, never with
//! its highest address (a one-line trace at 16 TiB is instant). The pages touched
//! are kept as a map of runs of pages with the same state (untouched / read only / written n times), split and
//! merged as requests arrive: at most two runs per request, and as few as one for a sequential trace.
//!
//! Choices: the footprint counts pages read or written (trims touch no data); a partial-page write counts as
//! one write of each page it touches; the hottest x% of n written pages (or blocks) are the ceil(x% * n)
//! with the most page writes; a workload spec is spread over a 64 MiB logical space. The distributions are
//! log2 histograms (bin 0 holds 0, bin k >= 1 holds [2^(k-1), 2^k)): request sizes in bytes, inter-arrival
//! times in whole microseconds (trace order; a step back counts as 0), reuse distances as the number of
//! requests since the last read or write that started on the same page (the reuse time of libCacheSim's
//! analyzer, cheaper than a stack distance), and page write counts (write popularity).

use crate::request::Op;
pub use crate::trace::layout::devices::DeviceRequests;
use crate::trace::{
    devices, open_placed, sniff, workload, Placement, RequestSource, Target, TraceError,
    TraceOptions,
};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;

/// Logical space a built-in workload spreads over when `info` runs on one.
pub const WORKLOAD_BYTES: u64 = 64 << 20;

/// Requests between two calls of the progress callback.
const PROGRESS_EVERY: u64 = 1 << 14;

/// A u128 total as serde data: an integer while it fits in 64 bits (every real trace's), else its decimal text.
/// pythonize, the binding's converter, has no 128-bit integer; the binding sets the exact value as a Python int.
fn total<S: serde::Serializer>(value: &u128, s: S) -> Result<S::Ok, S::Error> {
    match u64::try_from(*value) {
        Ok(v) => s.serialize_u64(v),
        Err(_) => s.collect_str(value),
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct TraceInfo {
    /// The format read: the sniffed one for `format = "auto"`, or "workload".
    pub format: String,
    pub requests: u64,
    pub reads: u64,
    pub writes: u64,
    pub trims: u64,
    /// Requests of 0 bytes, in none of `reads`, `writes` and `trims` (a run counts them in `host.empty_requests`).
    pub empty: u64,
    /// Byte totals are u128: a trace of requests near 2^64 bytes each adds up past u64 (and would wrap to 0).
    #[serde(serialize_with = "total")]
    pub read_bytes: u128,
    #[serde(serialize_with = "total")]
    pub write_bytes: u128,
    #[serde(serialize_with = "total")]
    pub trim_bytes: u128,
    /// Lines skipped because they did not parse (with `skip_bad_lines`).
    pub skipped_lines: u64,
    pub page_bytes: u32,
    pub block_bytes: u64,
    /// Distinct pages read or written, times the page size (2^64 for a trace that touches every byte).
    #[serde(serialize_with = "total")]
    pub footprint_bytes: u128,
    /// Distinct pages written, times the page size.
    #[serde(serialize_with = "total")]
    pub write_footprint_bytes: u128,
    /// The furthest byte addressed: max(offset + len).
    pub highest_address: u64,
    /// Last request time minus first (0 for traces without times).
    pub duration_us: f64,
    /// Pages written, counting every write of a page (u128: 512 writes of 2^64 - 1 bytes make 2^64 of them).
    #[serde(serialize_with = "total")]
    pub page_writes: u128,
    pub written_pages: u64,
    /// Logical blocks (of `block_bytes`) with at least one page written.
    pub written_blocks: u64,
    /// Share of `page_writes` that hit the hottest 0.2% / 1% of the written pages.
    pub write_share_hottest_0_2pct_pages: f64,
    pub write_share_hottest_1pct_pages: f64,
    /// Share of `page_writes` that hit the hottest 0.2% / 1% of the written blocks.
    pub write_share_hottest_0_2pct_blocks: f64,
    pub write_share_hottest_1pct_blocks: f64,
    /// Requests and highest address per device / ASU / disk number, for formats that name one (before the
    /// `device` and `devices` filters), with each device's range under `devices=concat` or a filter.
    pub devices: Vec<DeviceRequests>,
    pub distributions: Distributions,
}

/// Log2 histograms: `counts[0]` counts zeros, `counts[k]` values in [2^(k-1), 2^k).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Distributions {
    pub request_bytes: Vec<u64>,
    pub inter_arrival_us: Vec<u64>,
    pub reuse_distance_requests: Vec<u64>,
    /// Written pages by their number of writes.
    pub page_writes: Vec<u64>,
}

/// Adds `n` values `v` to a log2 histogram.
fn log2_add(hist: &mut Vec<u64>, v: u64, n: u64) {
    let bin = (u64::BITS - v.leading_zeros()) as usize;
    if hist.len() <= bin {
        hist.resize(bin + 1, 0);
    }
    hist[bin] += n;
}

/// Pages in runs of equal state: start page -> (end page, exclusive; state). State 1 is read only, 1 + n is
/// written n times; untouched pages are in no run.
#[derive(Default)]
struct PageRuns {
    runs: BTreeMap<u64, (u64, u32)>,
    /// Scratch lists of the runs a request overlaps and of the pieces replacing them, kept to avoid
    /// allocating per request.
    overlapped: Vec<(u64, u64, u32)>,
    pieces: Vec<(u64, u64, u32)>,
}

impl PageRuns {
    /// Applies `f` to the state of pages `[a, b)` (untouched pages have state 0).
    fn update(&mut self, a: u64, b: u64, f: impl Fn(u32) -> u32) {
        self.overlapped.clear();
        if let Some((&s, &(e, v))) = self.runs.range(..a).next_back() {
            if e > a {
                self.overlapped.push((s, e, v));
            }
        }
        self.overlapped
            .extend(self.runs.range(a..b).map(|(&s, &(e, v))| (s, e, v)));
        for &(s, _, _) in &self.overlapped {
            self.runs.remove(&s);
        }
        // The new pieces, in order: parts of old runs outside [a, b) keep their state, the rest gets f.
        let mut pieces = std::mem::take(&mut self.pieces);
        pieces.clear();
        let mut at = a;
        for &(s, e, v) in &self.overlapped {
            if s < a {
                pieces.push((s, a, v));
            }
            if at < s {
                pieces.push((at, s, f(0)));
            }
            pieces.push((s.max(a), e.min(b), f(v)));
            if e > b {
                pieces.push((b, e, v));
            }
            at = e;
        }
        if at < b {
            pieces.push((at, b, f(0)));
        }
        let mut pending: Option<(u64, u64, u32)> = None;
        for &(s, e, v) in &pieces {
            match &mut pending {
                Some(p) if p.1 == s && p.2 == v => p.1 = e,
                _ => {
                    if let Some((ps, pe, pv)) = pending.replace((s, e, v)) {
                        self.runs.insert(ps, (pe, pv));
                    }
                }
            }
        }
        if let Some((ps, pe, pv)) = pending {
            self.runs.insert(ps, (pe, pv));
        }
        let (left, right) = (pieces[0].0, pieces[pieces.len() - 1].1);
        self.pieces = pieces;
        self.merge_at(right);
        self.merge_at(left);
    }

    /// Joins the run ending at `page` with the run starting there when their states agree.
    fn merge_at(&mut self, page: u64) {
        let Some(&(e, v)) = self.runs.get(&page) else {
            return;
        };
        if let Some((_, prev)) = self.runs.range_mut(..page).next_back() {
            if prev.0 == page && prev.1 == v {
                prev.0 = e;
                self.runs.remove(&page);
            }
        }
    }
}

/// Reads `spec` (a trace file or a workload) once and describes it. `progress(done, total)` is called every
/// 16,384 requests; false from it cancels with [`TraceError::Cancelled`].
pub fn info(
    spec: &str,
    opts: &TraceOptions,
    block_bytes: u64,
    page_bytes: u32,
    progress: &mut dyn FnMut(u64, u64) -> bool,
) -> Result<TraceInfo, TraceError> {
    if page_bytes == 0
        || block_bytes < page_bytes as u64
        || !block_bytes.is_multiple_of(page_bytes as u64)
    {
        return Err(TraceError::Option {
            spec: spec.to_string(),
            what: format!(
                "info needs page_bytes > 0 and block_bytes >= page_bytes (a multiple of it), got page_bytes {page_bytes} and block_bytes {block_bytes}"
            ),
        });
    }
    let mut t = TraceInfo {
        page_bytes,
        block_bytes,
        format: format_of(spec, opts)?,
        ..TraceInfo::default()
    };
    // A first pass counts the devices without the device filters and lays them out as `devices` asks.
    let sniffed = TraceOptions {
        format: t.format.clone(),
        ..opts.clone()
    };
    let (devices, layout) = devices::survey(spec, &sniffed, block_bytes, progress)?;
    t.devices = devices;
    let on = Target {
        logical_bytes: WORKLOAD_BYTES,
        page_bytes,
        block_bytes: 0,
    };
    let placement = Placement {
        layout,
        compaction: None,
    }
    .compacted(spec, &sniffed, &on, progress)?;
    let mut source = open_placed(spec, &sniffed, &placement, &on)?;
    let pages = t.tally(&mut *source, progress)?;
    t.add_write_figures(&pages);
    Ok(t)
}

/// The format `info` reads: the sniffed one for `format = "auto"`, or "workload".
fn format_of(spec: &str, opts: &TraceOptions) -> Result<String, TraceError> {
    Ok(if workload::parse_spec(spec)?.is_some() {
        "workload".into()
    } else if opts.format == "auto" {
        sniff(Path::new(spec), opts)?.name.into()
    } else {
        opts.format.clone()
    })
}

impl TraceInfo {
    /// Counts the requests of `source`, their sizes, times and reuse, and returns the pages they touched.
    fn tally(
        &mut self,
        source: &mut dyn RequestSource,
        progress: &mut dyn FnMut(u64, u64) -> bool,
    ) -> Result<PageRuns, TraceError> {
        let t = self;
        let page = t.page_bytes as u64;
        let (mut first_us, mut last_us) = (f64::INFINITY, f64::NEG_INFINITY);
        let mut prev_us: Option<f64> = None;
        let mut last_start: BTreeMap<u64, u64> = BTreeMap::new();
        let mut pages = PageRuns::default();
        let d = &mut t.distributions;
        while let Some(r) = source.next_request() {
            let r = r?;
            t.requests += 1;
            match r.op {
                _ if r.len == 0 => t.empty += 1,
                Op::Read => (t.reads, t.read_bytes) = (t.reads + 1, t.read_bytes + r.len as u128),
                Op::Write => {
                    (t.writes, t.write_bytes) = (t.writes + 1, t.write_bytes + r.len as u128)
                }
                Op::Trim => (t.trims, t.trim_bytes) = (t.trims + 1, t.trim_bytes + r.len as u128),
            }
            t.highest_address = t.highest_address.max(r.offset.saturating_add(r.len));
            first_us = first_us.min(r.time_us);
            last_us = last_us.max(r.time_us);
            log2_add(&mut d.request_bytes, r.len, 1);
            if let Some(prev) = prev_us {
                log2_add(
                    &mut d.inter_arrival_us,
                    (r.time_us - prev).max(0.0) as u64,
                    1,
                );
            }
            prev_us = Some(r.time_us);
            if r.op != Op::Trim && r.len > 0 {
                let (a, b) = (r.offset / page, (r.offset + r.len - 1) / page + 1);
                if let Some(before) = last_start.insert(a, t.requests) {
                    log2_add(&mut d.reuse_distance_requests, t.requests - before, 1);
                }
                match r.op {
                    Op::Write => pages.update(a, b, |v| v.max(1).saturating_add(1)),
                    _ => pages.update(a, b, |v| v.max(1)),
                }
            }
            if t.requests.is_multiple_of(PROGRESS_EVERY) {
                let (done, total) = source.progress();
                if !progress(done, total) {
                    return Err(TraceError::Cancelled);
                }
            }
        }
        t.skipped_lines = source.skipped_lines();
        if t.requests > 0 {
            t.duration_us = last_us - first_us;
        }
        Ok(pages)
    }

    /// The footprint and the write figures (written pages and blocks, the hottest ones' shares, page write
    /// counts) from the pages a trace touched.
    fn add_write_figures(&mut self, pages: &PageRuns) {
        let t = self;
        let page = t.page_bytes as u64;
        // (page writes, pages) of every written run, and (block's page writes, blocks) in block order.
        // Page writes are u128: a run of 2^55 pages written 2^10 times each holds 2^65 of them.
        let mut page_counts: Vec<(u128, u64)> = Vec::new();
        let mut block_counts: Vec<(u128, u64)> = Vec::new();
        let pages_per_block = t.block_bytes / page;
        let mut open_block: Option<(u64, u128)> = None;
        for (&s, &(e, v)) in &pages.runs {
            t.footprint_bytes += (e - s) as u128 * page as u128;
            if v < 2 {
                continue;
            }
            let writes = (v - 1) as u64;
            page_counts.push((writes as u128, e - s));
            log2_add(&mut t.distributions.page_writes, writes, e - s);
            let writes = writes as u128;
            // Pages [s, e) add `writes` each to their blocks: a head block shared with earlier runs, whole
            // blocks, and a tail block left open for later runs.
            let (first_block, last_block) = (s / pages_per_block, (e - 1) / pages_per_block);
            if first_block == last_block {
                add_to_block(
                    &mut open_block,
                    &mut block_counts,
                    first_block,
                    writes * (e - s) as u128,
                );
                continue;
            }
            let head = (first_block + 1) * pages_per_block - s;
            add_to_block(
                &mut open_block,
                &mut block_counts,
                first_block,
                writes * head as u128,
            );
            let whole = last_block - first_block - 1;
            if whole > 0 {
                if let Some((_, sum)) = open_block.take() {
                    block_counts.push((sum, 1));
                }
                block_counts.push((writes * pages_per_block as u128, whole));
            }
            let tail = e - last_block * pages_per_block;
            add_to_block(
                &mut open_block,
                &mut block_counts,
                last_block,
                writes * tail as u128,
            );
        }
        if let Some((_, sum)) = open_block {
            block_counts.push((sum, 1));
        }
        t.page_writes = page_counts.iter().map(|&(c, n)| c * n as u128).sum();
        t.written_pages = page_counts.iter().map(|&(_, n)| n).sum();
        t.write_footprint_bytes = t.written_pages as u128 * page as u128;
        t.written_blocks = block_counts.iter().map(|&(_, n)| n).sum();
        t.write_share_hottest_0_2pct_pages = hottest_share(&mut page_counts, 2, 1000);
        t.write_share_hottest_1pct_pages = hottest_share(&mut page_counts, 1, 100);
        t.write_share_hottest_0_2pct_blocks = hottest_share(&mut block_counts, 2, 1000);
        t.write_share_hottest_1pct_blocks = hottest_share(&mut block_counts, 1, 100);
    }
}

/// Adds `page_writes` to `block`: to the open block if it is that one, else closing the open block into
/// `counts` (blocks come in address order).
fn add_to_block(
    open: &mut Option<(u64, u128)>,
    counts: &mut Vec<(u128, u64)>,
    block: u64,
    page_writes: u128,
) {
    match open {
        Some((b, sum)) if *b == block => *sum += page_writes,
        _ => {
            if let Some((_, sum)) = open.replace((block, page_writes)) {
                counts.push((sum, 1));
            }
        }
    }
}

/// Share of the total held by the ceil(n * num / den) largest of n counts, given as (count, how many).
fn hottest_share(counts: &mut [(u128, u64)], num: u64, den: u64) -> f64 {
    let total: u128 = counts.iter().map(|&(c, n)| c * n as u128).sum();
    if total == 0 {
        return 0.0;
    }
    let n: u64 = counts.iter().map(|&(_, n)| n).sum();
    let mut k = (n as u128 * num as u128).div_ceil(den as u128) as u64;
    counts.sort_unstable_by_key(|&(c, _)| std::cmp::Reverse(c));
    let mut top = 0;
    for &(c, m) in counts.iter() {
        let take = m.min(k);
        top += c * take as u128;
        k -= take;
        if k == 0 {
            break;
        }
    }
    top as f64 / total as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hottest_share_takes_the_ceiling() {
        // 150 counts: ceil(0.3) = 1 for 0.2%, ceil(1.5) = 2 for 1%.
        let mut counts = vec![(1u128, 148u64), (5, 1), (10, 1)];
        assert_eq!(hottest_share(&mut counts, 2, 1000), 10.0 / 163.0);
        assert_eq!(hottest_share(&mut counts, 1, 100), 15.0 / 163.0);
        assert_eq!(hottest_share(&mut [], 1, 100), 0.0);
        // 300 pages written twice: ceil(3) = 3 pages hold 6 of 600.
        assert_eq!(hottest_share(&mut [(2, 300)], 1, 100), 6.0 / 600.0);
    }
}
