//! Sequential log blocks for FAST (its SW block), LAST and MAST: each holds offsets `0..pages` of one logical
//! block in place (FAST paper §3.3, the SW block; LAST's sequential log buffer), and is reclaimed by a switch
//! when full, a partial merge when a write lands beyond its pages, a full merge when a write lands among them
//! (FAST Fig. 6, cases 2.1-2.3). A write to a logical block with a sequential log block either appends to it
//! or merges it, so its pages are always the newest copies.
//!
//! Also here: [`HybridBlocks`], the data, random log and free blocks these schemes share with their merges,
//! and the newest copy of every page of a logical block, looked up in the order every log-block scheme with a
//! sequential buffer uses (sequential log block, newest random log page, data block).

use super::data_blocks::DataBlocks;
use super::free_pool::FreePool;
use super::log_blocks::LogBlocks;
use super::merge::{self, NO_PAGE};
use crate::addr::{Pbn, Ppn, Token};
use crate::config::Geometry;
use crate::device::Device;
use crate::error::Result;
use crate::stats::MergeKind;

/// A sequential log block: offsets `0..pages` of `lbn`, in place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SeqBlock {
    pub pbn: Pbn,
    pub lbn: u32,
    pub pages: u32,
}

impl SeqBlock {
    /// The block's copy of `lpn`, if it holds it.
    #[inline]
    pub fn page(&self, lpn: u32, pages_per_block: u32, dev: &Device) -> Option<Ppn> {
        let (lbn, offset) = (lpn / pages_per_block, lpn % pages_per_block);
        (self.lbn == lbn && offset < self.pages).then(|| dev.ppn(self.pbn, offset))
    }
}

/// Fills `sources` with the newest copy of every page of `lbn`: `seq` (the sequential log block of `lbn`, if
/// any), the newest page in `log`, the data block.
fn find_sources(
    sources: &mut [u32],
    lbn: u32,
    seq: Option<SeqBlock>,
    log: &LogBlocks,
    data: &DataBlocks,
    dev: &Device,
) {
    let ppb = sources.len() as u32;
    for o in 0..ppb {
        let lpn = lbn * ppb + o;
        sources[o as usize] = seq
            .and_then(|s| s.page(lpn, ppb, dev))
            .or_else(|| log.newest(lpn))
            .or_else(|| data.page(lpn, dev))
            .map_or(NO_PAGE, |p| p.0);
    }
}

/// The blocks of a log-block scheme with sequential log blocks (FAST, LAST, MAST): its data blocks, its random
/// log blocks and its free blocks, with the scratch space of their merges.
pub struct HybridBlocks {
    pub data: DataBlocks,
    pub log: LogBlocks,
    pub pool: FreePool,
    sources: Vec<u32>,
    lbns: Vec<u32>,
}

impl HybridBlocks {
    /// `log_slots` random log blocks; every physical block `0..physical_blocks` starts free.
    pub fn new(g: &Geometry, log_slots: u32, physical_blocks: u32) -> HybridBlocks {
        let ppb = g.pages_per_block;
        HybridBlocks {
            data: DataBlocks::new(g.logical_blocks, ppb, g.sequential_program),
            log: LogBlocks::new(log_slots, ppb, g.logical_pages()),
            pool: FreePool::with_range(0, physical_blocks),
            sources: vec![NO_PAGE; ppb as usize],
            lbns: Vec::with_capacity(ppb as usize),
        }
    }

    /// The newest copy of `lpn`: in `seq` (a sequential log block) if it holds it, else the newest random log
    /// page, else the data block.
    #[inline]
    pub fn newest(&self, lpn: u32, seq: Option<SeqBlock>, dev: &Device) -> Option<Ppn> {
        let ppb = self.sources.len() as u32;
        seq.and_then(|s| s.page(lpn, ppb, dev))
            .or_else(|| self.log.newest(lpn))
            .or_else(|| self.data.page(lpn, dev))
    }

    /// Reads the newest copy of `lpn` (see [`Self::newest`]): one page read, or nothing if it was never
    /// written.
    pub fn read(&self, lpn: u32, seq: Option<SeqBlock>, dev: &mut Device) -> Result<Option<Token>> {
        match self.newest(lpn, seq, dev) {
            Some(ppn) => Ok(dev.read(ppn)?.token),
            None => Ok(None),
        }
    }

    /// Programs `lpn` in its data block if it fits there without a collision; returns whether it did.
    pub fn write_in_place(&mut self, lpn: u32, token: Token, dev: &mut Device) -> Result<bool> {
        if !self.data.fits_in_place(lpn) {
            return Ok(false);
        }
        self.data
            .program_in_place(lpn, token, &mut self.pool, dev)?;
        Ok(true)
    }

    /// Reclaims a sequential log block (FAST §3.4): a switch when it is full and nothing is folded in; a full
    /// merge when the folded-in write (`incoming`: offset and token) falls among its pages; a partial merge
    /// otherwise. Every log page of its logical block becomes `Merged`. Returns the kind recorded.
    pub fn merge_seq(
        &mut self,
        dev: &mut Device,
        seq: SeqBlock,
        incoming: Option<(u32, Token)>,
    ) -> Result<MergeKind> {
        let ppb = self.sources.len() as u32;
        let (pool, data, log, sources) = (
            &mut self.pool,
            &mut self.data,
            &mut self.log,
            &mut self.sources[..],
        );
        dev.record_log_utilization(seq.pages);
        let mark = dev.begin();
        let kind = if seq.pages == ppb && incoming.is_none() {
            merge::switch(dev, pool, data, seq.lbn, seq.pbn, ppb)?;
            MergeKind::Switch
        } else {
            find_sources(sources, seq.lbn, Some(seq), log, data, dev);
            match incoming {
                Some((offset, _)) if offset < seq.pages => {
                    merge::full_merge(dev, pool, data, seq.lbn, sources, incoming)?;
                    dev.erase(seq.pbn)?;
                    pool.put(seq.pbn);
                    MergeKind::Full
                }
                _ => {
                    merge::partial_merge(
                        dev, pool, data, seq.lbn, seq.pbn, seq.pages, sources, incoming,
                    )?;
                    MergeKind::Partial
                }
            }
        };
        log.merged(seq.lbn);
        dev.end_merge(mark, kind);
        Ok(kind)
    }

    /// Full merge of every logical block with a `Live` page in log slot `victim`, then the victim's erase: see
    /// [`HybridBlocks::merge_lbns_and_erase`]. Returns the number of logical blocks merged.
    pub fn merge_victim(
        &mut self,
        dev: &mut Device,
        victim: u32,
        seq_of: impl Fn(u32) -> Option<SeqBlock>,
    ) -> Result<u32> {
        let mut lbns = std::mem::take(&mut self.lbns);
        victim_lbns(&self.log, victim, self.sources.len() as u32, &mut lbns);
        let merged = self.merge_lbns_and_erase(dev, &lbns, victim, seq_of);
        self.lbns = lbns;
        merged
    }

    /// Replaces log slot `victim`: a full merge of each logical block of `lbns` (every page from its newest
    /// copy), then the victim's erase, counted in the last merge (as FAST Fig. 8 counts it); with no logical
    /// block to merge the victim is only erased (a dead merge: one erase, no copy). `seq_of(lbn)` gives the
    /// sequential log block of `lbn`, whose pages are the newest. Returns the number of logical blocks merged.
    pub fn merge_lbns_and_erase(
        &mut self,
        dev: &mut Device,
        lbns: &[u32],
        victim: u32,
        seq_of: impl Fn(u32) -> Option<SeqBlock>,
    ) -> Result<u32> {
        dev.record_log_utilization(self.log.written(victim));
        if lbns.is_empty() {
            let mark = dev.begin();
            self.erase_victim(dev, victim)?;
            dev.end_merge(mark, MergeKind::Dead);
            return Ok(0);
        }
        for (i, &lbn) in lbns.iter().enumerate() {
            let mark = dev.begin();
            find_sources(
                &mut self.sources,
                lbn,
                seq_of(lbn),
                &self.log,
                &self.data,
                dev,
            );
            merge::full_merge(
                dev,
                &mut self.pool,
                &mut self.data,
                lbn,
                &self.sources,
                None,
            )?;
            self.log.merged(lbn);
            if i + 1 == lbns.len() {
                self.erase_victim(dev, victim)?;
            }
            dev.end_merge(mark, MergeKind::Full);
        }
        Ok(lbns.len() as u32)
    }

    fn erase_victim(&mut self, dev: &mut Device, victim: u32) -> Result<()> {
        let pbn = self.log.close(victim);
        dev.erase(pbn)?;
        self.pool.put(pbn);
        Ok(())
    }
}

/// The logical blocks with a `Live` page in `slot`, in page order, into `lbns`.
fn victim_lbns(log: &LogBlocks, slot: u32, pages_per_block: u32, lbns: &mut Vec<u32>) {
    lbns.clear();
    for o in 0..log.written(slot) {
        if log.state(slot, o) != super::log_blocks::PageState::Live {
            continue;
        }
        if let Some(lpn) = log.lpn_at(slot, o) {
            let lbn = lpn / pages_per_block;
            if !lbns.contains(&lbn) {
                lbns.push(lbn);
            }
        }
    }
}

/// Counts the distinct logical blocks with a `Live` page in a log block (its associativity, FAST §3.4) in
/// O(pages) with a stamp per logical block instead of a set.
pub struct Associativity {
    stamp: Vec<u32>,
    clock: u32,
}

impl Associativity {
    pub fn new(logical_blocks: u32) -> Associativity {
        Associativity {
            stamp: vec![0; logical_blocks as usize],
            clock: 0,
        }
    }

    pub fn of(&mut self, log: &LogBlocks, slot: u32, pages_per_block: u32) -> u32 {
        self.clock = self.clock.wrapping_add(1);
        if self.clock == 0 {
            self.stamp.fill(0);
            self.clock = 1;
        }
        let mut count = 0;
        for o in 0..log.written(slot) {
            if log.state(slot, o) != super::log_blocks::PageState::Live {
                continue;
            }
            if let Some(lpn) = log.lpn_at(slot, o) {
                let lbn = (lpn / pages_per_block) as usize;
                if self.stamp[lbn] != self.clock {
                    self.stamp[lbn] = self.clock;
                    count += 1;
                }
            }
        }
        count
    }
}
