//! The write-reference picture of the hot-write-reference paper (003 Figs. 3-4): how many writes each logical
//! block takes, and which logical block each write hits over time. One streaming pass after [`info`]; the
//! per-block counts are a sorted map of the blocks written (memory and time grow with the requests and the
//! blocks they write, never with the highest address: a write at 16 TiB is one entry), and the timeline is
//! thinned deterministically (every 2^k-th write) to at most `max_points` points so any trace length plots.

use crate::request::Op;
use crate::trace::analysis::info::{info, TraceInfo};
use crate::trace::{open_on, TraceError, TraceOptions};
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Clone, Debug, Serialize)]
pub struct WriteRefs {
    pub info: TraceInfo,
    /// Logical blocks that took writes, ascending, and the page writes each took.
    pub blocks: Vec<u64>,
    pub writes: Vec<u64>,
    /// Sampled timeline: the index of a write request among all write requests, and the logical block of its
    /// first page.
    pub timeline_write: Vec<u64>,
    pub timeline_block: Vec<u64>,
    /// Every this many write requests one point was kept.
    pub timeline_stride: u64,
}

/// Most logical blocks the per-block counts hold, one map entry each (about 200 MB at the limit): a single
/// request of terabytes writes more blocks than a picture can show, and is refused before they are counted.
pub const MAX_BLOCKS: u64 = 1 << 22;

pub fn write_refs(
    spec: &str,
    opts: &TraceOptions,
    block_bytes: u64,
    page_bytes: u32,
    max_points: usize,
) -> Result<WriteRefs, TraceError> {
    let info = info(spec, opts, block_bytes, page_bytes, &mut |_, _| true)?;
    if info.written_blocks > MAX_BLOCKS {
        let larger = (block_bytes as u128 * info.written_blocks.div_ceil(MAX_BLOCKS) as u128)
            .next_power_of_two();
        return Err(TraceError::Option {
            spec: spec.to_string(),
            what: format!(
                "it writes {} logical blocks of {block_bytes} bytes, more than the {MAX_BLOCKS} the write-reference \
                 picture counts one by one; pass block_bytes={larger} (--block-bytes {larger}) or more",
                info.written_blocks
            ),
        });
    }
    let page = page_bytes as u64;
    let pages_per_block = block_bytes / page;
    let mut counts: BTreeMap<u64, u64> = BTreeMap::new();
    let (mut timeline_write, mut timeline_block) = (Vec::new(), Vec::new());
    let mut stride = 1u64;
    let mut index = 0u64;
    let mut source = open_on(
        spec,
        opts,
        crate::trace::analysis::info::WORKLOAD_BYTES,
        page_bytes,
        block_bytes,
    )?;
    while let Some(r) = source.next_request() {
        let r = r?;
        if r.op != Op::Write || r.len == 0 {
            continue;
        }
        // Each page of the request is one page write of its block (`info` checked that blocks hold whole pages).
        let (first, end) = (r.offset / page, (r.offset + r.len - 1) / page + 1);
        for block in first / pages_per_block..=(end - 1) / pages_per_block {
            let (a, b) = (block * pages_per_block, (block + 1) * pages_per_block);
            *counts.entry(block).or_insert(0) += end.min(b) - first.max(a);
        }
        if index.is_multiple_of(stride) {
            timeline_write.push(index);
            timeline_block.push(r.offset / block_bytes);
            if timeline_write.len() > max_points.max(2) {
                // Keep every other point and halve the sampling rate from here on.
                let keep = |v: &mut Vec<u64>| *v = v.iter().step_by(2).copied().collect();
                keep(&mut timeline_write);
                keep(&mut timeline_block);
                stride *= 2;
            }
        }
        index += 1;
    }
    let (blocks, writes) = counts.into_iter().unzip();
    Ok(WriteRefs {
        info,
        blocks,
        writes,
        timeline_write,
        timeline_block,
        timeline_stride: stride,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_per_block_and_a_thinned_timeline() {
        // 1 KiB blocks of 512 B pages. 10 single-page writes to block 0, one 2-page write to block 3, reads ignored.
        let dir = std::env::temp_dir().join(format!("ftlsim-refs-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.csv");
        let mut text = "W,0,512\n".repeat(10);
        text.push_str("R,4096,512\nW,3072,1024\n");
        std::fs::write(&path, text).unwrap();
        let opts = TraceOptions::default();
        let r = write_refs(path.to_str().unwrap(), &opts, 1024, 512, 4).unwrap();
        assert_eq!((r.blocks, r.writes), (vec![0, 3], vec![10, 2]));
        // 11 write requests, at most 4 points: strides 1 -> 2 -> 4; kept writes 0, 4, 8.
        assert_eq!(r.timeline_stride, 4);
        assert_eq!(r.timeline_write, vec![0, 4, 8]);
        assert_eq!(r.timeline_block, vec![0, 0, 0]);
    }

    #[test]
    fn a_write_at_16_tib_is_one_block_in_well_under_a_second() {
        let dir = std::env::temp_dir().join(format!("ftlsim-refs-far-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.csv");
        // 16 TiB = 2^44 bytes: block 2^30 of 16 KiB blocks; 8 KiB is two 4 KiB pages of it. Before, the
        // counts spanned every block up to the highest address (2^30 of them) and this took seconds.
        std::fs::write(&path, "W,17592186044416,8192\n").unwrap();
        let started = std::time::Instant::now();
        let r = write_refs(
            path.to_str().unwrap(),
            &TraceOptions::default(),
            16_384,
            4096,
            100,
        )
        .unwrap();
        assert_eq!((r.blocks, r.writes), (vec![1 << 30], vec![2]));
        assert!(
            started.elapsed().as_secs_f64() < 0.5,
            "{:?}",
            started.elapsed()
        );
    }
}
