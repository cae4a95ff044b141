//! The three ways a log-block scheme reclaims a log block for one logical block (FAST paper §2.2, §3.4):
//!
//! - full merge: the newest copy of every page goes to a free block, which becomes the data block; the old
//!   data block is erased (the caller erases the log block(s), which may serve other logical blocks);
//! - partial merge (FAST Fig. 7a): the log block holds offsets `0..k` in place; the missing pages are copied
//!   into it and it becomes the data block; only the old data block is erased;
//! - switch: a partial merge with nothing missing: the log block becomes the data block, one erase.
//!
//! The newest copy of each page is given by the caller as `sources[offset]`: a physical page, or none for
//! a page never written. The caller knows where its sources lie (a data block, a log block, pages scattered
//! over log blocks) and hints them to the CPU ([`Device::prefetch_block`], [`Device::prefetch`]) as it
//! finds them. A host write may be folded into the merge (`incoming`: its offset
//! and token), as FAST's SW merges do (Fig. 6, lines 15-17). Pages are programmed in increasing offset
//! order, so the merges keep the in-order (MLC) rule.

use crate::addr::{first_none, Lbn, Opt, Pbn, Ppn, Token};
use crate::device::Device;
use crate::device::Result;
use crate::ftl::common::mechanisms::data_blocks::DataBlocks;
use crate::ftl::common::mechanisms::free_pool::FreePool;
use crate::nand::OpClass;

/// The most copies a merge hands the device in one call ([`Device::copy_run`]).
const RUN: usize = 64;

/// Programs the offsets of `target` outside `held` (the offsets it already holds) for `lbn` from `sources`
/// (a copy each; none: left erased), or `incoming` at its offset, in offset order, and tells `programmed` of
/// each run of offsets that now holds data. Any block filled from pages found per offset uses it: a merge
/// here, the replacement block scheme's merge and NFTL's fold.
pub fn fill(
    dev: &mut Device,
    lbn: Lbn,
    target: Pbn,
    held: std::ops::Range<u32>,
    sources: &[Opt<Ppn>],
    incoming: Option<(u32, Token)>,
    mut programmed: impl FnMut(std::ops::Range<u32>),
) -> Result<()> {
    let ppb = sources.len() as u32;
    // Runs of offsets that each copy a source go to the device in one call; where it cannot take one, or an
    // offset is not a copy, offsets go one by one, in the same order.
    let mut offset = 0;
    while offset < ppb {
        if held.contains(&offset) {
            offset += 1;
            continue;
        }
        // The run stops at the held offsets, the incoming write, a page without a source, or after RUN.
        let start = offset;
        let mut end = ppb.min(start + RUN as u32);
        if held.start > start {
            end = end.min(held.start);
        }
        if let Some((o, _)) = incoming.filter(|&(o, _)| o >= start) {
            end = end.min(o);
        }
        let n = first_none(&sources[start as usize..end as usize]);
        offset = start + n as u32;
        let run = &sources[start as usize..offset as usize];
        if n > 1 && dev.copy_run(OpClass::Data, run, dev.ppn(target, start)) {
            programmed(start..offset);
            continue;
        }
        offset = start + n.max(1) as u32;
        for o in start..offset {
            if fill_one(dev, lbn, target, o, sources, incoming)? {
                programmed(o..o + 1);
            }
        }
    }
    Ok(())
}

/// [`fill`]'s work at one offset: the incoming write, a copy of the source, or nothing; whether the offset
/// now holds data.
fn fill_one(
    dev: &mut Device,
    lbn: Lbn,
    target: Pbn,
    offset: u32,
    sources: &[Opt<Ppn>],
    incoming: Option<(u32, Token)>,
) -> Result<bool> {
    let lpn = lbn.lpn(offset, sources.len() as u32);
    let to = dev.ppn(target, offset);
    match (incoming, sources[offset as usize].get()) {
        (Some((o, token)), _) if o == offset => dev.program(to, token, lpn).map(|()| true),
        (_, None) => Ok(false),
        // A torn source (a host write in place cut by a power loss) holds nothing: no copy.
        (_, Some(from)) => Ok(dev.copy(from, to)?.is_some()),
    }
}

fn retire(dev: &mut Device, pool: &mut FreePool, old: Option<Pbn>) -> Result<()> {
    if let Some(old) = old {
        dev.erase(old)?;
        pool.put(old);
    }
    Ok(())
}

/// Full merge of `lbn` into a block from `pool`; the old data block is erased and returned to the pool.
pub fn full_merge(
    dev: &mut Device,
    pool: &mut FreePool,
    data: &mut DataBlocks,
    lbn: Lbn,
    sources: &[Opt<Ppn>],
    incoming: Option<(u32, Token)>,
) -> Result<()> {
    let target = pool
        .take()
        .ok_or_else(|| dev.out_of_space("no free block for a merge"))?;
    let old = data.assign(lbn, target, 0);
    fill(dev, lbn, target, 0..0, sources, incoming, |r| {
        data.mark_programmed_run(lbn, r)
    })?;
    retire(dev, pool, old)
}

/// Partial merge: `log` holds offsets `0..log_pages` of `lbn` in place; the rest are filled in and `log`
/// becomes the data block; the old data block is erased.
#[allow(clippy::too_many_arguments)]
pub fn partial_merge(
    dev: &mut Device,
    pool: &mut FreePool,
    data: &mut DataBlocks,
    lbn: Lbn,
    log: Pbn,
    log_pages: u32,
    sources: &[Opt<Ppn>],
    incoming: Option<(u32, Token)>,
) -> Result<()> {
    partial_merge_around(dev, pool, data, lbn, log, 0..log_pages, sources, incoming)
}

/// Partial merge of a log block that holds offsets `held` of `lbn` in place (a run that began mid-block):
/// the offsets before and after the run are filled in and `log` becomes the data block. Programs below the
/// run come after it, so the caller must not use it under the in-order (MLC) rule unless `held` starts at 0.
#[allow(clippy::too_many_arguments)]
pub fn partial_merge_around(
    dev: &mut Device,
    pool: &mut FreePool,
    data: &mut DataBlocks,
    lbn: Lbn,
    log: Pbn,
    held: std::ops::Range<u32>,
    sources: &[Opt<Ppn>],
    incoming: Option<(u32, Token)>,
) -> Result<()> {
    let old = data.assign(lbn, log, 0);
    for offset in held.clone() {
        data.mark_programmed_at(lbn, offset);
    }
    fill(dev, lbn, log, held, sources, incoming, |r| {
        data.mark_programmed_run(lbn, r)
    })?;
    retire(dev, pool, old)
}

/// Switch: `log` holds every offset of `lbn` in place and becomes the data block; the old one is erased.
pub fn switch(
    dev: &mut Device,
    pool: &mut FreePool,
    data: &mut DataBlocks,
    lbn: Lbn,
    log: Pbn,
    pages_per_block: u32,
) -> Result<()> {
    let old = data.assign(lbn, log, pages_per_block);
    retire(dev, pool, old)
}
