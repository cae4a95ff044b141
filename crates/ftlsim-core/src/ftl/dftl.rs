//! `dftl`: DFTL, the demand-based page-mapped FTL (Gupta, Kim, Urgaonkar, "DFTL: A Flash Translation Layer
//! Employing Demand-based Selective Caching of Page-level Address Mappings", ASPLOS 2009, §3), a [`PageStore`]
//! whose page map lives in translation pages on flash.
//!
//! ```text
//! translate(lpn):  CMT hit -> the cached entry
//!                  miss    -> CMT full: evict the least recently used entry of the probationary segment; if it
//!                             is dirty, write back its translation page (below)
//!                             read translation page lpn / E (located by the GTD) and cache lpn's entry
//! write back tp:   read tp (unless never written), fold in every dirty CMT entry of tp (all become clean:
//!                  §3.3 batch update), program it at the translation frontier, GTD[tp] := new page
//! write(lpn):      GC if needed; translate(lpn); program the data frontier; CMT[lpn] := new page, dirty
//! read(lpn):       translate(lpn); read the page
//! gc:              victim := the full block with the most invalid pages (§3.4; `victim` may be cost-benefit)
//!                  translation block: copy its valid translation pages to the translation frontier; GTD updated
//!                  data block: copy its valid pages to the data frontier; an entry cached in the CMT is
//!                  updated there (dirty, lazy copying §3.3); the others through their translation pages, one
//!                  write back per translation page (batch update §3.3)
//! ```
//! E = page_bytes / entry_bytes entries per translation page (512 for 2 KiB pages and 4-byte entries, §3.1).
//! The CMT is a segmented LRU (§3.1): a hit in the probationary segment promotes the entry to the protected
//! one, whose least recently used entry is demoted back to the probationary segment's front when it overflows.
//!
//! RAM: the CMT (entries x (logical + physical page address)) and its two recency lists (2 links a slot),
//! the GTD (translation pages x physical page address), and the page store's block state (2-byte valid count
//! a block and a validity bit a page) that GC needs. Spare area: the logical page number of a data page, the
//! translation page number of a translation page.
//!
//! Flash I/O of translation pages (reads, writes, copies and erases of translation blocks) is in the map class,
//! reported as `map.*`; CMT lookups as `cache.cmt.*`.
//!
//! Choices where the paper is silent or open:
//! - The protected segment holds half the CMT (rounded down; a 1-entry CMT is plain LRU).
//! - A translation page never written (a fresh device) costs no read: the GTD knows it is empty.
//! - Eviction writes back before the missing entry is read, even when both lie in the same translation page
//!   (two map operations, as the paper's Algorithm 1 does them in that order).
//! - Every translation-page write back, for any reason, folds in all dirty cached entries of that page.
//! - Trim translates the page (as a write would) and caches "unmapped" dirty.
//! - Data and translation pages share one free pool and one victim selection (§3.4); GC copies of data go to
//!   the host data frontier. GC runs while `gc_reserve_blocks` or fewer blocks are free, before a host write
//!   and before a dirty eviction (so a read or a trim can run GC: its write back programs a page).
//! - Spare capacity: `over_provisioning` of the logical blocks, at least the translation blocks (translation
//!   pages / pages a block, rounded up) plus the reserve plus 3 (two frontiers and one block of slack).
//! - Reading a logical page never written still translates it (a CMT miss loads an "unmapped" entry).

use super::common::bounds::Checks;
use super::common::page_store::{PageStore, Victim};
use super::common::slot_list::SlotList;
use super::{address_bytes, defaults_of, parse_params, Built, Ftl, RamItem, Scheme};
use crate::addr::{Lpn, Ppn, Token};
use crate::config::Geometry;
use crate::device::Device;
use crate::error::Result;
use crate::nand::{OpClass, NO_LPN};
use crate::sparse::SparseVec;
use crate::stats::CacheKind;
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub const SCHEME: Scheme = Scheme {
    name: "dftl",
    summary: "demand-based page mapping: page map in translation pages on flash, cached mapping table in RAM",
    citation: "Gupta, Kim, Urgaonkar, DFTL, ASPLOS 2009, section 3",
    defaults: defaults_of::<DftlParams>,
    build,
};

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DftlParams {
    /// Entries of the cached mapping table (CMT).
    pub cmt_entries: u32,
    /// Bytes of one map entry in a translation page (§3.1: 4).
    pub entry_bytes: u32,
    /// Physical space beyond the logical capacity, as a fraction of it.
    pub over_provisioning: f64,
    /// Free blocks kept in reserve; garbage collection runs when no more remain.
    pub gc_reserve_blocks: u32,
    /// GC victim policy: `greedy` (most invalid pages, §3.4) or `cost-benefit`.
    pub victim: Victim,
}

impl Default for DftlParams {
    fn default() -> Self {
        DftlParams {
            cmt_entries: 8192,
            entry_bytes: 4,
            over_provisioning: 0.07,
            gc_reserve_blocks: 2,
            victim: Victim::Greedy,
        }
    }
}

const NONE: u32 = u32::MAX;
const DATA: usize = 0;
const TRANSLATION: usize = 1;

/// The cached mapping table: a segmented LRU over logical pages, each slot holding a cached map entry.
struct Cmt {
    slot_of: SparseVec<u32>,
    lpn: Vec<u32>,
    ppn: Vec<u32>,
    dirty: Vec<bool>,
    protected: Vec<bool>,
    probation: SlotList,
    protect: SlotList,
    protected_len: u32,
    protected_cap: u32,
    len: u32,
}

impl Cmt {
    fn new(capacity: u32, logical_pages: u32) -> Cmt {
        let c = capacity as usize;
        Cmt {
            slot_of: SparseVec::new(logical_pages as usize, NONE),
            lpn: vec![NONE; c],
            ppn: vec![NONE; c],
            dirty: vec![false; c],
            protected: vec![false; c],
            probation: SlotList::new(c),
            protect: SlotList::new(c),
            protected_len: 0,
            protected_cap: capacity / 2,
            len: 0,
        }
    }

    fn slot(&self, lpn: u32) -> Option<u32> {
        match self.slot_of.get(lpn as usize) {
            NONE => None,
            slot => Some(slot),
        }
    }

    /// A hit: the entry moves to the front of the protected segment (promoted from the probationary one).
    fn touch(&mut self, slot: u32) {
        let s = slot as usize;
        if self.protected[s] {
            self.protect.move_to_front(slot);
            return;
        }
        if self.protected_cap == 0 {
            self.probation.move_to_front(slot);
            return;
        }
        self.probation.unlink(slot);
        self.protect.push_front(slot);
        self.protected[s] = true;
        self.protected_len += 1;
        if self.protected_len > self.protected_cap {
            let demoted = self.protect.back().expect("an overfull segment has a back");
            self.protect.unlink(demoted);
            self.protected[demoted as usize] = false;
            self.protected_len -= 1;
            self.probation.push_front(demoted);
        }
    }

    fn is_full(&self) -> bool {
        self.len as usize == self.lpn.len()
    }

    /// The eviction candidate of a full CMT: the probationary segment's least recently used slot.
    fn victim(&self) -> u32 {
        self.probation.back().expect(
            "a full CMT has a probationary entry (the protected segment holds at most half)",
        )
    }

    /// Caches `lpn -> ppn` (clean) at the front of the probationary segment, in `slot` (an evicted one) or
    /// a fresh slot.
    fn insert(&mut self, lpn: u32, ppn: u32, reuse: Option<u32>) -> u32 {
        let slot = match reuse {
            Some(slot) => {
                self.probation.unlink(slot);
                self.slot_of.set(self.lpn[slot as usize] as usize, NONE);
                slot
            }
            None => {
                self.len += 1;
                self.len - 1
            }
        };
        let s = slot as usize;
        self.lpn[s] = lpn;
        self.ppn[s] = ppn;
        self.dirty[s] = false;
        self.slot_of.set(lpn as usize, slot);
        self.probation.push_front(slot);
        slot
    }
}

pub struct DftlFtl {
    ppb: u32,
    logical_pages: u32,
    physical_blocks: u32,
    /// Entries per translation page.
    epp: u32,
    reserve: usize,
    store: PageStore,
    /// The map as the translation pages on flash hold it (what a CMT miss reads).
    flash_map: SparseVec<u32>,
    /// Global translation directory: where each translation page's newest copy is, NONE if never written.
    gtd: Vec<u32>,
    /// Dirty CMT entries per translation page.
    dirty_in: Vec<u32>,
    cmt: Cmt,
    /// GC's (lpn, new page) of moved pages not cached, batched by translation page; capacity one block.
    moved: Vec<(u32, u32)>,
}

fn build(params: &Value, g: &Geometry) -> Result<Built> {
    let p: DftlParams = parse_params("dftl", params)?;
    Checks::new("dftl")
        .number(
            "over_provisioning",
            p.over_provisioning,
            1.0,
            "a fraction of the logical capacity",
        )
        .at_least("cmt_entries", p.cmt_entries as u64, 1, "the CMT needs an entry")
        .at_least("entry_bytes", p.entry_bytes as u64, 1, "a map entry has bytes")
        .at_most(
            "entry_bytes",
            p.entry_bytes as u64,
            g.page_bytes as u64,
            "a translation page holds at least one entry",
        )
        .at_least(
            "gc_reserve_blocks",
            p.gc_reserve_blocks as u64,
            2,
            "a host write may open a data and a translation block, and GC then needs a block to copy into",
        )
        .extra_blocks("gc_reserve_blocks", p.gc_reserve_blocks, 3, 0, g)
        .finish()?;
    let epp = g.page_bytes / p.entry_bytes;
    let translation_pages = g.logical_pages().div_ceil(epp);
    let need = translation_pages.div_ceil(g.pages_per_block) + p.gc_reserve_blocks + 3;
    let extra = ((g.logical_blocks as f64 * p.over_provisioning).ceil() as u32).max(need);
    let blocks = g.logical_blocks + extra;
    let ftl = DftlFtl {
        ppb: g.pages_per_block,
        logical_pages: g.logical_pages(),
        physical_blocks: blocks,
        epp,
        reserve: p.gc_reserve_blocks as usize,
        store: PageStore::new(blocks, g.pages_per_block, 2, p.victim),
        flash_map: SparseVec::new(g.logical_pages() as usize, NONE),
        gtd: vec![NONE; translation_pages as usize],
        dirty_in: vec![0; translation_pages as usize],
        cmt: Cmt::new(p.cmt_entries.min(g.logical_pages()), g.logical_pages()),
        moved: Vec::with_capacity(g.pages_per_block as usize),
    };
    Ok(Built {
        ftl: Box::new(ftl),
        extra_blocks: extra,
    })
}

impl Ftl for DftlFtl {
    fn read(&mut self, lpn: Lpn, dev: &mut Device) -> Result<Option<Token>> {
        let slot = self.translate(lpn.0, dev)?;
        match self.cmt.ppn[slot as usize] {
            NONE => Ok(None),
            ppn => Ok(dev.read(Ppn(ppn))?.token),
        }
    }

    fn write(&mut self, lpn: Lpn, token: Token, dev: &mut Device) -> Result<()> {
        self.ensure_free(dev)?;
        let slot = self.translate(lpn.0, dev)?;
        let ppn = self.store.next_page(DATA, dev)?;
        dev.program(ppn, token, lpn)?;
        self.store.place(ppn, lpn.0);
        self.remap(slot, ppn.0);
        Ok(())
    }

    fn trim(&mut self, lpn: Lpn, dev: &mut Device) -> Result<()> {
        let slot = self.translate(lpn.0, dev)?;
        self.remap(slot, NONE);
        Ok(())
    }

    fn ram(&self) -> Vec<RamItem> {
        let pages = self.physical_blocks as u64 * self.ppb as u64;
        let ppn_b = address_bytes(pages);
        let lpn_b = address_bytes(self.logical_pages as u64);
        let cmt = self.cmt.lpn.len() as u64;
        let link_b = address_bytes(cmt);
        let tps = self.gtd.len() as u64;
        let mut items = vec![
            RamItem::new(
                "cmt",
                cmt * (lpn_b + ppn_b),
                format!("{cmt} entries x ({lpn_b} B logical + {ppn_b} B physical page)"),
            ),
            RamItem::new(
                "cmt_lists",
                cmt * 2 * link_b,
                format!("{cmt} entries x 2 links x {link_b} B (segmented LRU)"),
            ),
            RamItem::new(
                "gtd",
                tps * ppn_b,
                format!(
                    "{tps} translation pages ({} entries each) x {ppn_b} B",
                    self.epp
                ),
            ),
        ];
        items.extend(self.store.ram());
        items
    }
}

impl DftlFtl {
    /// The CMT slot holding `lpn`'s entry, loading it on a miss (§3.2).
    fn translate(&mut self, lpn: u32, dev: &mut Device) -> Result<u32> {
        if let Some(slot) = self.cmt.slot(lpn) {
            dev.record_cache(CacheKind::Cmt, true);
            self.cmt.touch(slot);
            return Ok(slot);
        }
        dev.record_cache(CacheKind::Cmt, false);
        let mut reuse = None;
        if self.cmt.is_full() {
            let victim = self.cmt.victim();
            if self.cmt.dirty[victim as usize] {
                // A read or trim can write too: collect first (GC may write the victim's page back itself).
                self.ensure_free(dev)?;
                if self.cmt.dirty[victim as usize] {
                    self.write_back(self.cmt.lpn[victim as usize] / self.epp, dev)?;
                }
            }
            reuse = Some(victim);
        }
        let tp = lpn / self.epp;
        let at = self.gtd[tp as usize];
        if at != NONE {
            dev.read_in(OpClass::Map, Ppn(at))?;
        }
        Ok(self
            .cmt
            .insert(lpn, self.flash_map.get(lpn as usize), reuse))
    }

    /// The cached entry in `slot` now maps to `ppn` (NONE: unmapped); its old page becomes invalid.
    fn remap(&mut self, slot: u32, ppn: u32) {
        let s = slot as usize;
        let old = self.cmt.ppn[s];
        if old != NONE {
            self.store.invalidate(Ppn(old));
        }
        self.cmt.ppn[s] = ppn;
        self.mark_dirty(slot);
    }

    fn mark_dirty(&mut self, slot: u32) {
        let s = slot as usize;
        if !self.cmt.dirty[s] {
            self.cmt.dirty[s] = true;
            self.dirty_in[(self.cmt.lpn[s] / self.epp) as usize] += 1;
        }
    }

    /// Writes translation page `tp` anew: read the old copy, fold in every dirty cached entry of it (they
    /// become clean), program it at the translation frontier (§3.3 batch update).
    fn write_back(&mut self, tp: u32, dev: &mut Device) -> Result<()> {
        let old = self.gtd[tp as usize];
        if old != NONE {
            dev.read_in(OpClass::Map, Ppn(old))?;
        }
        if self.dirty_in[tp as usize] > 0 {
            let first = tp * self.epp;
            let end = (first + self.epp).min(self.logical_pages);
            for lpn in first..end {
                if let Some(slot) = self.cmt.slot(lpn) {
                    let s = slot as usize;
                    if self.cmt.dirty[s] {
                        self.cmt.dirty[s] = false;
                        self.flash_map.set(lpn as usize, self.cmt.ppn[s]);
                    }
                }
            }
            self.dirty_in[tp as usize] = 0;
        }
        let to = self.store.next_page(TRANSLATION, dev)?;
        dev.program_with_aux_in(OpClass::Map, to, 0, NO_LPN, tp)?;
        if old != NONE {
            self.store.invalidate(Ppn(old));
        }
        self.store.place(to, tp);
        self.gtd[tp as usize] = to.0;
        Ok(())
    }

    /// Garbage collection until more than `reserve` free blocks remain (§3.4).
    fn ensure_free(&mut self, dev: &mut Device) -> Result<()> {
        while self.store.free_blocks() <= self.reserve {
            let (victim, _, kind) = self.store.take_victim(dev)?;
            let mark = dev.begin();
            if kind == TRANSLATION {
                let gtd = &mut self.gtd;
                self.store
                    .collect(victim, TRANSLATION, OpClass::Map, dev, |tp, to| {
                        gtd[tp as usize] = to.0
                    })?;
            } else {
                self.moved.clear();
                let (cmt, moved, dirty_in, epp) =
                    (&mut self.cmt, &mut self.moved, &mut self.dirty_in, self.epp);
                self.store
                    .collect(victim, DATA, OpClass::Data, dev, |lpn, to| {
                        match cmt.slot(lpn) {
                            Some(slot) => {
                                let s = slot as usize;
                                cmt.ppn[s] = to.0;
                                if !cmt.dirty[s] {
                                    cmt.dirty[s] = true;
                                    dirty_in[(lpn / epp) as usize] += 1;
                                }
                            }
                            None => moved.push((lpn, to.0)),
                        }
                    })?;
                self.apply_moves(dev)?;
            }
            dev.end_gc(mark);
        }
        Ok(())
    }

    /// The uncached entries of pages GC moved, written through their translation pages: one write back per
    /// translation page (§3.3 batch update).
    fn apply_moves(&mut self, dev: &mut Device) -> Result<()> {
        self.moved.sort_unstable();
        let mut i = 0;
        while i < self.moved.len() {
            let tp = self.moved[i].0 / self.epp;
            while i < self.moved.len() && self.moved[i].0 / self.epp == tp {
                let (lpn, to) = self.moved[i];
                self.flash_map.set(lpn as usize, to);
                i += 1;
            }
            self.write_back(tp, dev)?;
        }
        Ok(())
    }
}
