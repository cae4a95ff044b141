//! Map blocks: a reserved set of physical blocks holding the scheme's own mapping pages (TinyFTL §V.B:
//! block tables and the block directory). A map page is identified by a number (`0..pages`); writing one
//! programs the next page of the active map block and invalidates the old copy; when no erased map block
//! is left, the full map block with the fewest valid copies is garbage collected (its valid copies moved
//! to a fresh block, then erased). Every operation runs in [`OpClass::Map`], so it is reported as
//! `map.page_reads`, `map.page_writes` and `map.erases`, and charged to the request that caused it.
//!
//! Spare area of a map page: its map page number in the scheme word (`aux`); the chip stamps the sequence
//! number. Mount ([`MapArea::mount`], TinyFTL §V.B: "TinyFTL scans a reserved area called map blocks and
//! restores the block directory"): the spare area of every map block page up to the block's first erased
//! page (map blocks are programmed in order); the copy of a map page with the highest sequence number is the
//! newest. Cost: one spare read per programmed map page plus one per map block not full.

use crate::addr::{Lpn, Opt, Pbn, Ppn};
use crate::device::Device;
use crate::device::Result;
use crate::ftl::common::structures::lru::Lru;
use crate::nand::OpClass;
use crate::sparse::SparseVec;
use crate::stats::CacheKind;

/// Makes page table `unit` resident in the page-map cache (Superblock §3.2, TinyFTL §V.C, both keeping their
/// page tables in spare areas): a miss reads the spare areas of the newest page directory (`dir`) and of the
/// table (`table`, when it is not on the directory's page); none where there is no copy yet.
pub fn load_page_table(
    cache: &mut Lru,
    unit: u32,
    dir: Opt<Ppn>,
    table: Opt<Ppn>,
    dev: &mut Device,
) -> Result<()> {
    let hit = cache.touch(unit);
    dev.record_cache(CacheKind::PageMapCache, hit);
    if !hit {
        cache.insert(unit);
        if let Some(dir) = dir.get() {
            dev.read_spare_in(OpClass::Map, dir)?;
        }
        if let Some(table) = table.get().filter(|&t| Some(t) != dir.get()) {
            dev.read_spare_in(OpClass::Map, table)?;
        }
    }
    Ok(())
}

/// After a mount found the newest copy of every logical page (`loc`, chip page, none if none) and its
/// sequence number (`seq`): where the newest page directory of each group (`dir_loc`, indexed by `group_of`)
/// and the newest copy of each page table (`table_loc`, indexed by `table_of`) sit. Every program carries
/// its group's directory and its table in its spare area (TinyFTL §V.B, Superblock §3.2), so the newest copy
/// of each is on the newest page written in its range, which is the newest copy of its logical page.
pub fn rebuild_spare_tables(
    loc: &SparseVec<Opt<Ppn>>,
    seq: &SparseVec<u32>,
    group_of: impl Fn(Lpn) -> usize,
    dir_loc: &mut [Opt<Ppn>],
    table_of: impl Fn(Lpn) -> usize,
    table_loc: &mut SparseVec<Opt<Ppn>>,
) {
    let mut dir_seq = vec![0u32; dir_loc.len()];
    let mut table_seq = SparseVec::new(table_loc.len(), 0u32);
    dir_loc.fill(Opt::NONE);
    *table_loc = SparseVec::new(table_loc.len(), Opt::NONE);
    for lpn in (0..loc.len() as u32).map(Lpn) {
        let at = loc.get(lpn.index());
        if at.is_none() {
            continue;
        }
        let s = seq.get(lpn.index());
        let (g, t) = (group_of(lpn), table_of(lpn));
        if s > dir_seq[g] {
            dir_seq[g] = s;
            dir_loc[g] = at;
        }
        if s > table_seq.get(t) {
            table_seq.set(t, s);
            table_loc.set(t, at);
        }
    }
}

#[derive(Clone, Debug)]
pub struct MapArea {
    ppb: u32,
    first: Pbn,
    blocks: usize,
    /// Where the newest copy of each map page lives (chip page), none if never written.
    loc: Vec<Opt<Ppn>>,
    /// The map page each page of each map block holds while it is the newest copy.
    owner: Vec<Opt<u32>>,
    valid: Vec<u32>,
    /// Erased map blocks (indices into `blocks`).
    erased: Vec<usize>,
    active: usize,
    next: u32,
}

impl MapArea {
    /// Map pages `0..pages` stored in blocks `first..first + blocks`. Needs `blocks >= min_blocks(pages, ppb)`.
    pub fn new(first: Pbn, blocks: u32, pages: u32, ppb: u32) -> MapArea {
        let n = blocks as usize;
        MapArea {
            ppb,
            first,
            blocks: n,
            owner: vec![Opt::NONE; n * ppb as usize],
            valid: vec![0; n],
            erased: (1..n).rev().collect(),
            loc: vec![Opt::NONE; pages as usize],
            active: 0,
            next: 0,
        }
    }

    /// Map blocks needed so that garbage collection always finds a block with a stale copy: the live
    /// pages fill at most all but two blocks.
    pub fn min_blocks(pages: u32, ppb: u32) -> u32 {
        pages.div_ceil(ppb) + 2
    }

    /// Forgets every location and rebuilds them from the map blocks' spare areas (see the module header): the
    /// newest copy of each map page by sequence number; the active block is the one holding the newest
    /// copy written, continued at its first erased page. A cut inside garbage collection (the last erased
    /// block opened, its victim not yet erased) leaves no erased block: the collection is run again here.
    pub fn mount(&mut self, dev: &mut Device) -> Result<()> {
        self.loc.fill(Opt::NONE);
        self.owner.fill(Opt::NONE);
        self.valid.fill(0);
        self.erased.clear();
        let mut newest = vec![0u32; self.loc.len()];
        let (mut top, mut active, mut next) = (0u32, None, 0);
        for i in 0..self.blocks {
            let mut programmed = 0;
            for offset in 0..self.ppb {
                let ppn = dev.ppn(self.pbn(i), offset);
                let spare = dev.read_spare_in(OpClass::Map, ppn)?;
                if spare.seq == 0 {
                    break;
                }
                programmed += 1;
                // A page with no map page number (a torn program) holds nothing.
                if let Some(page) = spare.aux().filter(|&p| (p as usize) < newest.len()) {
                    if spare.seq > newest[page as usize] {
                        newest[page as usize] = spare.seq;
                        self.place(page, ppn);
                    }
                }
                if spare.seq > top {
                    (top, active) = (spare.seq, Some(i));
                }
            }
            if programmed == 0 {
                self.erased.push(i);
            } else if active == Some(i) {
                next = programmed;
            }
        }
        // Erased blocks are taken lowest first, as on a fresh area.
        self.erased.reverse();
        match active {
            Some(i) => (self.active, self.next) = (i, next),
            None => {
                self.erased.pop();
                (self.active, self.next) = (0, 0);
            }
        }
        if self.erased.is_empty() && self.next < self.ppb {
            self.collect(dev)?;
        }
        Ok(())
    }

    pub fn is_written(&self, page: u32) -> bool {
        self.loc[page as usize].is_some()
    }

    /// Reads map page `page` from flash (one page read) if it was ever written; returns whether it was.
    pub fn read(&self, dev: &mut Device, page: u32) -> Result<bool> {
        let Some(loc) = self.loc[page as usize].get() else {
            return Ok(false);
        };
        dev.read_token_in(OpClass::Map, loc).map(|_| true)
    }

    /// Programs a new copy of map page `page` (one page program, plus garbage collection when needed).
    pub fn write(&mut self, dev: &mut Device, page: u32) -> Result<()> {
        let to = self.next_page(dev)?;
        dev.program_with_aux_in(OpClass::Map, to, 0, None, Some(page))?;
        self.place(page, to);
        Ok(())
    }

    fn place(&mut self, page: u32, to: Ppn) {
        if let Some(old) = self.loc[page as usize].get() {
            let i = self.index_of(old.block(self.ppb));
            self.valid[i] -= 1;
            self.owner[i * self.ppb as usize + old.offset(self.ppb) as usize] = Opt::NONE;
        }
        let i = self.index_of(to.block(self.ppb));
        self.valid[i] += 1;
        self.owner[i * self.ppb as usize + to.offset(self.ppb) as usize] = Opt::some(page);
        self.loc[page as usize] = Opt::some(to);
    }

    fn index_of(&self, pbn: Pbn) -> usize {
        (pbn.0 - self.first.0) as usize
    }

    fn pbn(&self, i: usize) -> Pbn {
        Pbn(self.first.0 + i as u32)
    }

    /// The next erased page of the active map block; collects garbage when the area is full.
    fn next_page(&mut self, dev: &mut Device) -> Result<Ppn> {
        if self.next == self.ppb {
            match self.erased.pop() {
                Some(i) if !self.erased.is_empty() => self.open(i),
                Some(i) => {
                    // The last erased block: move a victim's valid copies into it, erase the victim.
                    self.open(i);
                    self.collect(dev)?;
                }
                None => return Err(dev.out_of_space("no erased map block")),
            }
        }
        let ppn = dev.ppn(self.pbn(self.active), self.next);
        self.next += 1;
        Ok(ppn)
    }

    fn open(&mut self, i: usize) {
        self.active = i;
        self.next = 0;
    }

    fn collect(&mut self, dev: &mut Device) -> Result<()> {
        let victim = (0..self.blocks)
            .filter(|&i| i != self.active && !self.erased.contains(&i))
            .min_by_key(|&i| self.valid[i])
            .ok_or_else(|| dev.out_of_space("no map block to collect"))?;
        if self.valid[victim] == self.ppb {
            return Err(dev.out_of_space("every map block is fully valid; give more map blocks"));
        }
        let mark = dev.begin_gc();
        for offset in 0..self.ppb {
            let Some(page) = self.owner[victim * self.ppb as usize + offset as usize].get() else {
                continue;
            };
            let to = dev.ppn(self.pbn(self.active), self.next);
            self.next += 1;
            dev.copy_in(OpClass::Map, dev.ppn(self.pbn(victim), offset), to)?;
            self.place(page, to);
        }
        dev.erase_in(OpClass::Map, self.pbn(victim))?;
        self.erased.push(victim);
        dev.end_gc(mark);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rewrites_go_to_new_pages_and_full_area_is_collected() {
        let mut dev = Device::toy(4);
        // Two live map pages in three map blocks of 4 pages.
        let mut area = MapArea::new(Pbn(1), 3, 2, 4);
        assert!(!area.read(&mut dev, 0).unwrap());
        for _ in 0..6 {
            area.write(&mut dev, 0).unwrap();
            area.write(&mut dev, 1).unwrap();
        }
        // 12 writes: blocks 1, 2 filled (8 writes); the 9th opens block 3, the last erased one, so block
        // 1 (0 valid) is collected first: erased without copies. Writes 9-12 fill block 3.
        assert!(area.read(&mut dev, 1).unwrap());
        let m = dev.map_counts();
        assert_eq!((m.page_writes, m.erases, m.page_reads), (12, 1, 1));
        assert_eq!(dev.counts().page_writes, 12, "all of it in the map class");
        assert_eq!(dev.chip().peek(Ppn(3 * 4 + 3)).spare.aux(), Some(1));
    }
}
