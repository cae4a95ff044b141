//! The page store of the page-mapped schemes (`page`, `dftl`): which key (a logical page, or a translation page
//! for DFTL) each physical page holds while valid, valid counts per block, write frontiers, victim selection
//! and the copy loop of garbage collection. A page-mapped scheme is a page store plus its map policy: the store
//! says where a key's newest copy was put, the scheme keeps (or stores on flash) the map.
//!
//! Frontiers: each is an open block written in page order; a scheme gives host writes, GC copies or translation
//! pages their own frontier (hot/cold separation) or shares one. The frontier that opened a block is its kind.
//! Victim classes: by default every full block competes in one class; [`PageStore::separate_victims`] gives each
//! kind its own (DFTL: data and translation blocks), so that a scheme can ask for the best victim of one kind.
//! Victims: `greedy` takes the full block with the fewest valid pages (O(1), [`ValidBuckets`]; between classes,
//! on a tie, the earlier kind); `cost-benefit`
//! takes the one maximising age x (1 - u) / 2u (Kawaguchi et al., USENIX 1995; Rosenblum and Ousterhout's LFS
//! cleaner), u = valid fraction, age = pages programmed through the store since the block was filled; a block
//! with no valid page is taken at once. Static wear levelling: [`PageStore::coldest`] names the full block with
//! the lowest erase count when the spread of erase counts passes a threshold.

use crate::addr::{Opt, Pbn, Ppn};
use crate::device::Device;
use crate::device::Result;
use crate::ftl::common::mechanisms::free_pool::FreePool;
use crate::ftl::common::structures::bitmap::Bitmap;
use crate::ftl::common::structures::valid_buckets::ValidBuckets;
use crate::ftl::RamItem;
use crate::nand::OpClass;
use crate::sparse::SparseVec;
use serde::{Deserialize, Serialize};

/// How a garbage-collection victim is chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Victim {
    Greedy,
    CostBenefit,
}

#[derive(Clone, Debug)]
pub struct PageStore {
    ppb: u32,
    /// Key each physical page was programmed with; read only while the page is valid.
    owner: SparseVec<u32>,
    /// Whether each physical page holds the newest copy of its key. Invalidating a page (once per host write)
    /// touches this bit, not the page's owner entry: at a bit a page the bitmap stays in the CPU's caches
    /// where the owner table, 32 times larger, does not.
    valid_pages: Bitmap,
    valid: Vec<u32>,
    /// Full blocks GC may take, one bucket set per victim class.
    candidates: Vec<ValidBuckets>,
    /// Whether each kind is a victim class of its own (else all kinds are class 0).
    separate: bool,
    free: FreePool,
    /// Each frontier's open block and its next page.
    frontiers: Vec<Option<(Pbn, u32)>>,
    /// The frontier that opened each block.
    kind: Vec<u8>,
    victim: Victim,
    /// Pages programmed through the store, and the clock when each block was filled (cost-benefit's age).
    clock: u64,
    filled_at: Vec<u64>,
    /// Cost-benefit's terms of a block of `v` valid pages (utilization u = v / ppb), by `v`: the benefit
    /// 1 - u and the cost 2u, worked out once rather than at every block of every scan.
    benefit_and_cost: Vec<(f64, f64)>,
    /// The keys of a victim's pages, read at once by [`PageStore::collect_into`] (kept between calls).
    keys: Vec<u32>,
    /// The victim's valid pages, for the copy loop (kept between calls).
    moving: Vec<Ppn>,
}

impl PageStore {
    /// The RAM the store's GC bookkeeping needs on a controller: a valid count per block and a validity bit per
    /// physical page.
    pub fn ram(&self) -> [RamItem; 2] {
        let blocks = self.valid.len() as u64;
        let pages = blocks * self.ppb as u64;
        [
            RamItem::new(
                "valid_counts",
                blocks * 2,
                format!("{blocks} physical blocks x 2 B (GC victims)"),
            ),
            RamItem::new(
                "valid_bitmap",
                pages.div_ceil(8),
                format!("{pages} physical pages x 1 bit"),
            ),
        ]
    }

    /// Blocks `0..blocks` of `ppb` pages, all erased, written through `frontiers` frontiers.
    pub fn new(blocks: u32, ppb: u32, frontiers: usize, victim: Victim) -> PageStore {
        PageStore {
            ppb,
            owner: SparseVec::new(blocks as usize * ppb as usize, 0),
            valid_pages: Bitmap::new(blocks as usize * ppb as usize),
            valid: vec![0; blocks as usize],
            candidates: vec![ValidBuckets::new(blocks, ppb)],
            separate: false,
            free: FreePool::with_range(Pbn(0), blocks),
            frontiers: vec![None; frontiers],
            kind: vec![0; blocks as usize],
            victim,
            clock: 0,
            filled_at: if victim == Victim::CostBenefit {
                vec![0; blocks as usize]
            } else {
                Vec::new()
            },
            benefit_and_cost: if victim == Victim::CostBenefit {
                (0..=ppb)
                    .map(|v| {
                        let u = v as f64 / ppb as f64;
                        (1.0 - u, 2.0 * u)
                    })
                    .collect()
            } else {
                Vec::new()
            },
            keys: vec![0; ppb as usize],
            moving: Vec::with_capacity(ppb as usize),
        }
    }

    /// Each kind (the frontier that opened a block) becomes a victim class of its own.
    pub fn separate_victims(mut self) -> PageStore {
        let blocks = self.valid.len() as u32;
        self.separate = true;
        self.candidates = vec![ValidBuckets::new(blocks, self.ppb); self.frontiers.len()];
        self
    }

    fn class(&self, block: u32) -> usize {
        if self.separate {
            self.kind[block as usize] as usize
        } else {
            0
        }
    }

    fn is_candidate(&self, block: u32) -> bool {
        self.candidates[self.class(block)].contains(block)
    }

    /// Forgets everything before a mount rebuilds the store from the chip: no block free, none written.
    pub fn clear(&mut self) {
        let blocks = self.valid.len() as u32;
        self.owner = SparseVec::new(blocks as usize * self.ppb as usize, 0);
        self.valid_pages.clear_all();
        self.valid.fill(0);
        for c in &mut self.candidates {
            *c = ValidBuckets::new(blocks, self.ppb);
        }
        self.free = FreePool::with_range(Pbn(0), 0);
        self.frontiers.fill(None);
        self.clock = 0;
        self.filled_at.fill(0);
    }

    /// Mount: `pbn` was found erased.
    pub fn put_erased(&mut self, pbn: Pbn) {
        self.free.put(pbn);
    }

    /// Mount: `pbn`, programmed up to page `next`, is `frontier`'s open block again.
    pub fn open_frontier(&mut self, frontier: usize, pbn: Pbn, next: u32) {
        self.kind[pbn.index()] = frontier as u8;
        self.frontiers[frontier] = Some((pbn, next));
    }

    /// Mount: `pbn`, written by frontier `kind`, is full or no longer open; GC may take it.
    pub fn add_candidate(&mut self, pbn: Pbn, kind: usize) {
        self.kind[pbn.index()] = kind as u8;
        let class = self.class(pbn.0);
        self.candidates[class].insert(pbn.0, self.valid[pbn.index()]);
    }

    pub fn free_blocks(&self) -> usize {
        self.free.len()
    }

    pub fn pages_per_block(&self) -> u32 {
        self.ppb
    }

    /// Erased pages left in `frontier`'s open block (0 when it has none): what it takes without a free block.
    pub fn room(&self, frontier: usize) -> u32 {
        self.frontiers[frontier].map_or(0, |(_, next)| self.ppb - next)
    }

    /// The key physical page `ppn` holds, if it is valid.
    pub fn owner(&self, ppn: Ppn) -> Option<u32> {
        self.valid_pages
            .get(ppn.index())
            .then(|| self.owner.get(ppn.index()))
    }

    /// The keys the valid pages of the block whose first page is `first` hold, in page order, into `keys`:
    /// [`PageStore::owner`] of each page, the block's owner entries read at once and the validity bits a word
    /// at a time (as [`PageStore::collect_into`] reads them).
    pub fn valid_keys(&self, first: Ppn, keys: &mut Vec<u32>) {
        keys.resize(self.ppb as usize, 0);
        self.owner.read_range(first.index(), keys);
        // The valid pages in increasing order: each key moves to a place at or before its own.
        let mut valid = 0;
        for page in self
            .valid_pages
            .ones_in(first.index()..first.index() + keys.len())
        {
            keys[valid] = keys[page - first.index()];
            valid += 1;
        }
        keys.truncate(valid);
    }

    /// The next page of `frontier`, opening a free block when its block is full.
    #[inline]
    pub fn next_page(&mut self, frontier: usize, dev: &mut Device) -> Result<Ppn> {
        Ok(self.next_page_of(frontier, dev)?.1)
    }

    /// [`PageStore::next_page`] and its block.
    #[inline]
    fn next_page_of(&mut self, frontier: usize, dev: &mut Device) -> Result<(Pbn, Ppn)> {
        self.clock += 1;
        if let Some((pbn, next)) = &mut self.frontiers[frontier] {
            if *next < self.ppb {
                *next += 1;
                return Ok((*pbn, Ppn(pbn.0 * self.ppb + *next - 1)));
            }
        }
        self.open_frontier_block(frontier, dev)
    }

    /// `frontier`'s block is full (or it has none): it becomes a candidate, and a free block is opened.
    #[inline(never)]
    fn open_frontier_block(&mut self, frontier: usize, dev: &mut Device) -> Result<(Pbn, Ppn)> {
        if let Some((pbn, _)) = self.frontiers[frontier] {
            let class = self.class(pbn.0);
            self.candidates[class].insert(pbn.0, self.valid[pbn.index()]);
            if let Some(t) = self.filled_at.get_mut(pbn.index()) {
                *t = self.clock;
            }
        }
        let pbn = self
            .free
            .take()
            .ok_or_else(|| dev.out_of_space("no free block for a write frontier"))?;
        self.kind[pbn.index()] = frontier as u8;
        self.frontiers[frontier] = Some((pbn, 1));
        Ok((pbn, dev.ppn(pbn, 0)))
    }

    /// Page `ppn`, just programmed, holds `key`.
    #[inline]
    pub fn place(&mut self, ppn: Ppn, key: u32) {
        self.owner.set(ppn.index(), key);
        self.valid_pages.set(ppn.index());
        self.valid[ppn.block(self.ppb).index()] += 1;
    }

    /// A cache hint: page `ppn` will be invalidated soon (what [`PageStore::invalidate`] touches: its validity
    /// bit, its block's valid count and bucket links; scattered across the store on random overwrites).
    #[inline]
    pub fn prefetch_invalidate(&self, ppn: Ppn) {
        let block = ppn.block(self.ppb).0;
        self.valid_pages.prefetch(ppn.index());
        crate::cache_hint::prefetch(self.valid.as_ptr().wrapping_add(block as usize));
        self.candidates[self.class(block)].prefetch(block);
    }

    /// A cache hint: the greedy victim GC would take now will be collected soon (its owner entries, validity
    /// bits and chip records: a victim is a block written long ago, out of the CPU's caches). Nothing for
    /// cost-benefit, whose victim takes a scan to find.
    #[inline]
    pub fn prefetch_victim(&self, dev: &Device) {
        if self.victim != Victim::Greedy {
            return;
        }
        if let Some((pbn, _)) = self.peek_victim(None) {
            let first = pbn.index() * self.ppb as usize;
            self.owner.prefetch_range(first, self.ppb as usize);
            self.valid_pages.prefetch(first);
            dev.prefetch_block(pbn);
        }
    }

    /// Page `ppn` no longer holds the newest copy of its key.
    #[inline]
    pub fn invalidate(&mut self, ppn: Ppn) {
        self.valid_pages.clear(ppn.index());
        let block = ppn.block(self.ppb).0;
        self.valid[block as usize] -= 1;
        let class = self.class(block);
        if self.candidates[class].contains(block) {
            self.candidates[class].decrement(block);
        }
    }

    /// Takes the next victim by the store's policy: (block, its valid pages, its kind). An error when no full
    /// block holds an invalid page (the device is full of valid data).
    pub fn take_victim(&mut self, dev: &Device) -> Result<(Pbn, u32, usize)> {
        let (block, valid) = self
            .peek_victim(None)
            .ok_or_else(|| dev.out_of_space("no block to collect"))?;
        if valid == self.ppb {
            return Err(dev.out_of_space(
                "every full block is fully valid; give more spare capacity (over_provisioning or extra_blocks)",
            ));
        }
        Ok(self.take(block))
    }

    /// The block the policy would take next, and its valid pages, among the candidates of `class` (None: of
    /// every class), without taking it.
    pub fn peek_victim(&self, class: Option<usize>) -> Option<(Pbn, u32)> {
        let picked = match self.victim {
            Victim::Greedy => match class {
                Some(c) => self.candidates[c].min(),
                // The earlier class wins a tie.
                None => self
                    .candidates
                    .iter()
                    .filter_map(|c| c.min())
                    .reduce(|best, m| if best.1 > m.1 { m } else { best }),
            },
            Victim::CostBenefit => self
                .best_cost_benefit(class)
                .map(|b| (b, self.valid[b as usize])),
        };
        picked.map(|(b, valid)| (Pbn(b), valid))
    }

    /// Takes `block` out of the candidates: (block, its valid pages, its kind).
    pub fn take(&mut self, block: Pbn) -> (Pbn, u32, usize) {
        let class = self.class(block.0);
        let valid = self.candidates[class].remove(block.0);
        (block, valid, self.kind[block.index()] as usize)
    }

    fn best_cost_benefit(&self, class: Option<usize>) -> Option<u32> {
        let mut best: Option<(f64, u32)> = None;
        for b in 0..self.valid.len() as u32 {
            if !self.is_candidate(b) || class.is_some_and(|c| c != self.class(b)) {
                continue;
            }
            let valid = self.valid[b as usize];
            if valid == 0 {
                return Some(b);
            }
            // age x (1 - u) / 2u.
            let (benefit, cost) = self.benefit_and_cost[valid as usize];
            let age = (self.clock - self.filled_at[b as usize]) as f64 + 1.0;
            let score = age * benefit / cost;
            if best.is_none_or(|(s, _)| score > s) {
                best = Some((score, b));
            }
        }
        best.map(|(_, b)| b)
    }

    /// Static wear levelling: when the erase counts of the chip's blocks spread by more than `threshold`, the
    /// full block with the lowest erase count (the coldest data), taken out of the candidates.
    pub fn coldest(&mut self, threshold: u32, dev: &Device) -> Option<Pbn> {
        // One pass over the erase counts: the highest of every block, and the first candidate with the lowest.
        let (mut max, mut coldest) = (None, None::<(u32, u32)>);
        for b in 0..self.valid.len() as u32 {
            let count = dev.erase_count(Pbn(b));
            max = max.max(Some(count));
            if self.is_candidate(b) && coldest.is_none_or(|(_, min)| count < min) {
                coldest = Some((b, count));
            }
        }
        let (max, (b, min)) = (max?, coldest?);
        (max - min > threshold).then(|| self.take(Pbn(b)).0)
    }

    /// Copies every valid page of `victim` to `frontier` (in `class`), telling `moved(key, to)` where each went,
    /// then erases the victim into the free pool.
    pub fn collect(
        &mut self,
        victim: Pbn,
        frontier: usize,
        class: OpClass,
        dev: &mut Device,
        moved: impl FnMut(u32, Ppn),
    ) -> Result<()> {
        self.collect_into(victim, frontier, class, dev, &mut Told(moved))
    }

    /// [`PageStore::collect`] updating `map`, which is asked to prefetch the entry of every key to move before
    /// the first copy (the entries are scattered: a cache miss each, overlapped this way).
    pub fn collect_into(
        &mut self,
        victim: Pbn,
        frontier: usize,
        class: OpClass,
        dev: &mut Device,
        map: &mut impl Relocate,
    ) -> Result<()> {
        debug_assert!(
            !self.is_candidate(victim.0),
            "a victim is taken out of the candidates first"
        );
        dev.prefetch_block(victim);
        let first = dev.ppn(victim, 0);
        let mut keys = std::mem::take(&mut self.keys);
        self.owner.read_range(first.index(), &mut keys);
        let copied = self.copy_keys(first, &mut keys, frontier, class, dev, map);
        self.keys = keys;
        copied?;
        dev.erase_in(class, victim)?;
        self.free.put(victim);
        Ok(())
    }

    /// The copy loop of [`PageStore::collect_into`]: the valid pages of the victim block starting at `first`,
    /// whose owner entries are `keys`, in order (`keys` keeps the valid pages' keys at its start). Each run that
    /// fits the frontier's open block is copied in one call to the device ([`Device::copy_run`]); a page that
    /// opens a block, or a run the device cannot copy at once, is copied on its own. The order of the copies,
    /// and so every count, is the same either way.
    fn copy_keys(
        &mut self,
        first: Ppn,
        keys: &mut [u32],
        frontier: usize,
        class: OpClass,
        dev: &mut Device,
        map: &mut impl Relocate,
    ) -> Result<()> {
        let mut moving = std::mem::take(&mut self.moving);
        moving.resize(keys.len(), Ppn(0));
        let pages = first.index()..first.index() + keys.len();
        // The valid pages and their keys to the front: the n-th valid page is at or after offset n.
        let mut valid = 0;
        for page in self.valid_pages.ones_in(pages.clone()) {
            let key = keys[page - first.index()];
            map.prefetch(key);
            keys[valid] = key;
            moving[valid] = Ppn(page as u32);
            valid += 1;
        }
        let copied = self.copy_runs(&moving[..valid], &keys[..valid], frontier, class, dev, map);
        self.moving = moving;
        copied?;
        // The victim is no candidate (it was taken): its pages are only no longer valid.
        self.valid_pages.clear_range(pages);
        self.valid[first.block(self.ppb).index()] = 0;
        Ok(())
    }

    /// [`PageStore::copy_keys`]'s copies: pages `from`, holding `keys`, to `frontier`.
    fn copy_runs(
        &mut self,
        from: &[Ppn],
        keys: &[u32],
        frontier: usize,
        class: OpClass,
        dev: &mut Device,
        map: &mut impl Relocate,
    ) -> Result<()> {
        let mut done = 0;
        while done < from.len() {
            let run = (self.room(frontier) as usize).min(from.len() - done);
            let open = self.frontiers[frontier].filter(|_| run > 0);
            let Some((block, next)) = open else {
                // The frontier's block is full: the next copy opens one.
                self.copy_one(from[done], keys[done], frontier, class, dev, map)?;
                done += 1;
                continue;
            };
            let to = Ppn(block.0 * self.ppb + next);
            if !dev.copy_run(class, &from[done..done + run], to) {
                for at in done..from.len() {
                    self.copy_one(from[at], keys[at], frontier, class, dev, map)?;
                }
                return Ok(());
            }
            self.frontiers[frontier] = Some((block, next + run as u32));
            self.clock += run as u64;
            let keys = &keys[done..done + run];
            self.owner.write_range(to.index(), keys);
            self.valid_pages.set_range(to.index()..to.index() + run);
            for (i, &key) in keys.iter().enumerate() {
                map.moved(key, Ppn(to.0 + i as u32));
            }
            self.valid[block.index()] += run as u32;
            done += run;
        }
        Ok(())
    }

    /// Copies page `from`, holding `key`, to the next page of `frontier`.
    fn copy_one(
        &mut self,
        from: Ppn,
        key: u32,
        frontier: usize,
        class: OpClass,
        dev: &mut Device,
        map: &mut impl Relocate,
    ) -> Result<()> {
        let (block, to) = self.next_page_of(frontier, dev)?;
        dev.copy_in(class, from, to)?;
        self.owner.set(to.index(), key);
        self.valid_pages.set(to.index());
        self.valid[block.index()] += 1;
        map.moved(key, to);
        Ok(())
    }
}

/// Where a scheme keeps the newest page of each key, as the GC copy loop moves them.
pub trait Relocate {
    /// A hint: the entry of `key` will be updated soon.
    fn prefetch(&self, key: u32);
    /// `key`'s newest copy is now `to`.
    fn moved(&mut self, key: u32, to: Ppn);
}

/// A page map, one entry per logical page (`page`).
impl Relocate for SparseVec<Opt<Ppn>> {
    #[inline]
    fn prefetch(&self, key: u32) {
        SparseVec::prefetch(self, key as usize);
    }

    #[inline]
    fn moved(&mut self, key: u32, to: Ppn) {
        self.set(key as usize, Opt::some(to));
    }
}

/// A closure told of each move, with nothing to prefetch.
struct Told<F>(F);

impl<F: FnMut(u32, Ppn)> Relocate for Told<F> {
    fn prefetch(&self, _key: u32) {}

    #[inline]
    fn moved(&mut self, key: u32, to: Ppn) {
        (self.0)(key, to)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(s: &mut PageStore, dev: &mut Device, frontier: usize, key: u32) -> Ppn {
        let ppn = s.next_page(frontier, dev).unwrap();
        dev.program(ppn, 1, crate::addr::Lpn(key)).unwrap();
        s.place(ppn, key);
        ppn
    }

    #[test]
    fn frontiers_fill_their_own_blocks_and_victims_follow_the_policy() {
        let mut dev = Device::toy(4);
        let mut s = PageStore::new(4, 4, 2, Victim::Greedy);
        // Frontier 0 takes block 0, frontier 1 block 1.
        let a: Vec<Ppn> = (0..4).map(|k| write(&mut s, &mut dev, 0, k)).collect();
        let b = write(&mut s, &mut dev, 1, 9);
        assert_eq!((a[3], b), (Ppn(3), Ppn(4)));
        s.invalidate(a[1]);
        s.invalidate(a[2]);
        // Block 0 becomes a candidate when frontier 0 moves on to block 2.
        assert_eq!(write(&mut s, &mut dev, 0, 7), Ppn(8));
        let (victim, valid, kind) = s.take_victim(&dev).unwrap();
        assert_eq!((victim, valid, kind), (Pbn(0), 2, 0));
        let mut moved = Vec::new();
        s.collect(victim, 1, OpClass::Data, &mut dev, |k, to| {
            moved.push((k, to))
        })
        .unwrap();
        assert_eq!(moved, vec![(0, Ppn(5)), (3, Ppn(6))]);
        assert_eq!((dev.counts().erases, s.free_blocks()), (1, 2));
    }

    #[test]
    fn a_blocks_valid_keys_are_its_valid_pages_owners_in_page_order() {
        let mut dev = Device::toy(4);
        let mut s = PageStore::new(4, 4, 1, Victim::Greedy);
        let pages: Vec<Ppn> = [7, 5, 9, 2].map(|k| write(&mut s, &mut dev, 0, k)).to_vec();
        let mut keys = vec![42; 9];
        s.valid_keys(Ppn(0), &mut keys);
        assert_eq!(keys, [7, 5, 9, 2]);
        s.invalidate(pages[0]);
        s.invalidate(pages[2]);
        s.valid_keys(Ppn(0), &mut keys);
        assert_eq!(keys, [5, 2]);
        // A block none of whose pages is valid holds no key.
        s.valid_keys(Ppn(4), &mut keys);
        assert_eq!(keys, [] as [u32; 0]);
    }

    #[test]
    fn the_coldest_candidate_is_the_first_with_the_fewest_erases_once_they_spread_past_the_threshold(
    ) {
        let mut dev = Device::toy(6);
        // Erase counts 0, 2, 0, 1, 0 on the blocks the fill will take, 3 on the frontier after them.
        for (block, erases) in [(1, 2), (3, 1), (5, 3)] {
            for _ in 0..erases {
                dev.erase(Pbn(block)).unwrap();
            }
        }
        let mut s = PageStore::new(6, 4, 1, Victim::Greedy);
        (0..21).for_each(|k| {
            write(&mut s, &mut dev, 0, k);
        });
        assert_eq!(
            (0..6).map(|b| s.is_candidate(b)).collect::<Vec<_>>(),
            [true, true, true, true, true, false]
        );
        // The spread counts every block (3 on the frontier), the coldest only candidates: blocks 0, 2 and 4
        // have none; the first of them goes, then the next.
        assert_eq!(s.coldest(3, &dev), None);
        assert_eq!(s.coldest(2, &dev), Some(Pbn(0)));
        assert_eq!(s.coldest(2, &dev), Some(Pbn(2)));
        assert!(!s.is_candidate(0) && !s.is_candidate(2));
    }

    #[test]
    fn cost_benefit_prefers_an_old_half_valid_block_to_a_young_emptier_one() {
        for (victim, expected) in [(Victim::CostBenefit, Pbn(0)), (Victim::Greedy, Pbn(3))] {
            let mut dev = Device::toy(5);
            let mut s = PageStore::new(5, 4, 1, victim);
            let pages: Vec<Ppn> = (0..20).map(|k| write(&mut s, &mut dev, 0, k)).collect();
            // Blocks 0..3 were filled when the 5th, 9th, 13th and 17th pages were placed; the clock is 20.
            // Block 0: u = 2/4, age 20 - 5 + 1 = 16 -> 16 x 0.5 / 1 = 8. Block 3: u = 1/4, age 4 ->
            // 4 x 0.75 / 0.5 = 6. Cost-benefit takes block 0, greedy the emptier block 3.
            for i in [0, 1, 12, 13, 14] {
                s.invalidate(pages[i]);
            }
            assert_eq!(s.take_victim(&dev).unwrap().0, expected, "{victim:?}");
        }
    }
}
