//! `page`: the page-mapped baseline (TinyFTL paper §III "page-mapped FTLs such as DAC"; FAST paper §2.1
//! "sector-level mapping").
//!
//! ```text
//! write(lpn): program the next free page of the active block; map[lpn] := that page; the old copy becomes invalid
//!             when the active block is full, take a free block; keep `gc_reserve_blocks` free by garbage collection
//! gc:         victim := the full block with the fewest valid pages (greedy); copy its valid pages to the active
//!             block; erase it
//! read(lpn):  read map[lpn]
//! ```
//! RAM: the map, one entry per logical page, each entry as wide as a physical page address needs (3 bytes for
//! the TinyFTL paper's 16 GB device: 8,192,000 x 3 = 24,576,000 bytes, its "at least 24 MB"). The per-block
//! valid counts and the page validity bits the simulator keeps to run greedy GC are counted too.
//! Spare area: the logical page number (for recovery). Choices: host writes and GC copies share one active
//! block; free blocks are used in FIFO order. Trim is honoured for reads (a trimmed page reads as nothing until
//! written again), but the page stays live for GC until it is overwritten: were it invalidated, GC could erase
//! its newest copy and leave an older one to win at the next mount, bringing back data older than what was
//! trimmed. The trimmed bits are RAM only, so after a mount a trimmed page reads its last data (allowed).
//!
//! Mount (after a power cut): the map is rebuilt from the spare areas alone (the FAST paper's §3.2 remark on
//! sector maps): every block's spare areas are read in page order up to its first erased page (pages are
//! programmed in order), and the copy of a logical page with the highest sequence number wins, so a GC
//! interrupted after copying a page leaves a stale copy that loses. Cost: one spare read per programmed page,
//! plus one per block that is not full. Blocks with no programmed page are free; of the blocks not full, the
//! newest becomes the active block again, the others wait for GC like full ones.

use super::common::boot_scan::{scan_block, Extent};
use super::common::free_pool::FreePool;
use super::common::valid_buckets::ValidBuckets;
use super::{address_bytes, defaults_of, parse_params, Built, Ftl, RamItem, Scheme};
use crate::addr::{Lpn, Pbn, Ppn, Token};
use crate::config::Geometry;
use crate::device::Device;
use crate::error::{Result, SimError};
use crate::sparse::SparseVec;
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub const SCHEME: Scheme = Scheme {
    name: "page",
    summary: "page-mapped baseline: any page anywhere, greedy garbage collection",
    citation: "TinyFTL paper (Lee et al.) section III; FAST paper (Lee et al. 2007) section 2.1",
    defaults: defaults_of::<PageParams>,
    build,
};

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PageParams {
    /// Physical space beyond the logical capacity, as a fraction of it.
    pub over_provisioning: f64,
    /// Free blocks kept in reserve; garbage collection runs when fewer remain.
    pub gc_reserve_blocks: u32,
}

impl Default for PageParams {
    fn default() -> Self {
        PageParams {
            over_provisioning: 0.07,
            gc_reserve_blocks: 1,
        }
    }
}

const UNMAPPED: u32 = u32::MAX;

pub struct PageFtl {
    ppb: u32,
    logical_pages: u32,
    physical_blocks: u32,
    reserve: usize,
    map: SparseVec<u32>,
    /// Logical page held by each physical page while it is valid, UNMAPPED otherwise.
    owner: SparseVec<u32>,
    valid: Vec<u32>,
    candidates: ValidBuckets,
    free: FreePool,
    active: Option<(Pbn, u32)>,
    /// One bit per logical page: trimmed since its last write.
    trimmed: Vec<u64>,
}

fn build(params: &Value, g: &Geometry) -> Result<Built> {
    let p: PageParams = parse_params("page", params)?;
    if !(p.over_provisioning.is_finite() && p.over_provisioning >= 0.0) {
        return Err(SimError::Param(format!(
            "scheme `page`: over_provisioning={} must be >= 0",
            p.over_provisioning
        )));
    }
    if p.gc_reserve_blocks == 0 {
        return Err(SimError::Param(
            "scheme `page`: gc_reserve_blocks must be at least 1 (GC needs a block to copy into)"
                .into(),
        ));
    }
    let extra = ((g.logical_blocks as f64 * p.over_provisioning).ceil() as u32)
        .max(p.gc_reserve_blocks + 2);
    let blocks = g.logical_blocks + extra;
    let ftl = PageFtl {
        ppb: g.pages_per_block,
        logical_pages: g.logical_pages(),
        physical_blocks: blocks,
        reserve: p.gc_reserve_blocks as usize,
        map: SparseVec::new(g.logical_pages() as usize, UNMAPPED),
        owner: SparseVec::new(blocks as usize * g.pages_per_block as usize, UNMAPPED),
        valid: vec![0; blocks as usize],
        candidates: ValidBuckets::new(blocks, g.pages_per_block),
        free: FreePool::with_range(0, blocks),
        active: None,
        trimmed: vec![0; (g.logical_pages() as usize).div_ceil(64)],
    };
    Ok(Built {
        ftl: Box::new(ftl),
        extra_blocks: extra,
    })
}

impl Ftl for PageFtl {
    fn read(&mut self, lpn: Lpn, dev: &mut Device) -> Result<Option<Token>> {
        if self.trimmed[lpn.index() / 64] & (1 << (lpn.0 % 64)) != 0 {
            return Ok(None);
        }
        match self.map.get(lpn.index()) {
            UNMAPPED => Ok(None),
            ppn => Ok(dev.read(Ppn(ppn))?.token),
        }
    }

    fn write(&mut self, lpn: Lpn, token: Token, dev: &mut Device) -> Result<()> {
        self.ensure_free(dev)?;
        let ppn = self.next_page(dev)?;
        dev.program(ppn, token, lpn)?;
        self.invalidate(lpn);
        self.map_to(lpn, ppn);
        self.trimmed[lpn.index() / 64] &= !(1 << (lpn.0 % 64));
        Ok(())
    }

    fn trim(&mut self, lpn: Lpn, _dev: &mut Device) -> Result<()> {
        if self.map.get(lpn.index()) != UNMAPPED {
            self.trimmed[lpn.index() / 64] |= 1 << (lpn.0 % 64);
        }
        Ok(())
    }

    fn mount(&mut self, dev: &mut Device) -> Result<()> {
        let blocks = self.physical_blocks;
        self.map = SparseVec::new(self.logical_pages as usize, UNMAPPED);
        self.owner = SparseVec::new(blocks as usize * self.ppb as usize, UNMAPPED);
        self.valid = vec![0; blocks as usize];
        self.candidates = ValidBuckets::new(blocks, self.ppb);
        self.free = FreePool::with_range(0, 0);
        self.active = None;
        self.trimmed.fill(0);
        // Mount-time RAM: the sequence number of each logical page's newest copy found so far.
        let mut newest = SparseVec::new(self.logical_pages as usize, 0u32);
        let mut open: Vec<(u32, Pbn, u32)> = Vec::new();
        let mut erased = vec![false; blocks as usize];
        for pbn in (0..blocks).map(Pbn) {
            let mut block_seq = 0;
            let programmed = scan_block(dev, pbn, Extent::UpToFirstErased, |_, ppn, spare| {
                block_seq = block_seq.max(spare.seq);
                let Some(lpn) = spare.lpn() else { return };
                if spare.seq > newest.get(lpn.index()) {
                    newest.set(lpn.index(), spare.seq);
                    self.invalidate(lpn);
                    self.map_to(lpn, ppn);
                }
            })?;
            match programmed {
                0 => {
                    erased[pbn.index()] = true;
                    self.free.put(pbn);
                }
                n if n == self.ppb => {}
                n => open.push((block_seq, pbn, n)),
            }
        }
        // The newest partly written block is the active one; the rest are collected like full blocks.
        open.sort_unstable();
        if let Some((_, pbn, next)) = open.pop() {
            self.active = Some((pbn, next));
        }
        let active = self.active.map(|(pbn, _)| pbn.0);
        for pbn in 0..blocks {
            if !erased[pbn as usize] && active != Some(pbn) {
                self.candidates.insert(pbn, self.valid[pbn as usize]);
            }
        }
        Ok(())
    }

    fn ram(&self) -> Vec<RamItem> {
        let entry = address_bytes(self.physical_blocks as u64 * self.ppb as u64);
        let pages = self.physical_blocks as u64 * self.ppb as u64;
        vec![
            RamItem::new(
                "page_map",
                self.logical_pages as u64 * entry,
                format!("{} logical pages x {entry} B", self.logical_pages),
            ),
            RamItem::new(
                "valid_counts",
                self.physical_blocks as u64 * 2,
                format!("{} physical blocks x 2 B (greedy GC)", self.physical_blocks),
            ),
            RamItem::new(
                "valid_bitmap",
                pages.div_ceil(8),
                format!("{pages} physical pages x 1 bit"),
            ),
            RamItem::new(
                "trimmed_bitmap",
                (self.logical_pages as u64).div_ceil(8),
                format!("{} logical pages x 1 bit", self.logical_pages),
            ),
        ]
    }
}

impl PageFtl {
    fn invalidate(&mut self, lpn: Lpn) {
        let old = self.map.get(lpn.index());
        if old == UNMAPPED {
            return;
        }
        self.owner.set(old as usize, UNMAPPED);
        let block = old / self.ppb;
        self.valid[block as usize] -= 1;
        if self.candidates.contains(block) {
            self.candidates.decrement(block);
        }
    }

    fn map_to(&mut self, lpn: Lpn, ppn: Ppn) {
        self.map.set(lpn.index(), ppn.0);
        self.owner.set(ppn.index(), lpn.0);
        self.valid[(ppn.0 / self.ppb) as usize] += 1;
    }

    /// The next page of the active block, opening a free block when it is full.
    fn next_page(&mut self, dev: &mut Device) -> Result<Ppn> {
        if let Some((pbn, next)) = self.active {
            if next < self.ppb {
                self.active = Some((pbn, next + 1));
                return Ok(dev.ppn(pbn, next));
            }
            self.candidates.insert(pbn.0, self.valid[pbn.index()]);
        }
        let pbn = self
            .free
            .take()
            .ok_or_else(|| dev.out_of_space("no free block for the active block"))?;
        self.active = Some((pbn, 1));
        Ok(dev.ppn(pbn, 0))
    }

    /// Greedy garbage collection until more than `reserve` free blocks remain. Two blocks beyond the reserve
    /// guarantee that some full block holds an invalid page whenever this runs.
    fn ensure_free(&mut self, dev: &mut Device) -> Result<()> {
        while self.free.len() <= self.reserve {
            let (victim, valid) = self
                .candidates
                .pop_min()
                .ok_or_else(|| dev.out_of_space("no block to collect"))?;
            if valid == self.ppb {
                return Err(
                    dev.out_of_space("every full block is fully valid; raise over_provisioning")
                );
            }
            let mark = dev.begin();
            for offset in 0..self.ppb {
                let from = dev.ppn(Pbn(victim), offset);
                let lpn = self.owner.get(from.index());
                if lpn == UNMAPPED {
                    continue;
                }
                let to = self.next_page(dev)?;
                dev.copy(from, to)?;
                self.invalidate(Lpn(lpn));
                self.map_to(Lpn(lpn), to);
            }
            dev.erase(Pbn(victim))?;
            self.free.put(Pbn(victim));
            dev.end_gc(mark);
        }
        Ok(())
    }
}
