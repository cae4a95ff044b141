//! A cache of the physical location of recently written logical pages (NFTL paper §3.3, "page cache"):
//! a fixed number of slots, a per-logical-page slot index (no hashing), and one list of slots from newest
//! to oldest. FIFO (the paper's "simple" replacement) evicts in insertion order and never reorders; LRU
//! moves an entry to the front when it is written again or hit.

use crate::addr::{Lpn, Opt, Ppn};
use crate::ftl::common::structures::slot_list::SlotList;
use crate::sparse::SparseVec;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    Fifo,
    Lru,
}

pub struct LocationCache {
    policy: Policy,
    /// What each slot `0..used` holds.
    lpn: Vec<Lpn>,
    ppn: Vec<Ppn>,
    /// Slots from newest to oldest.
    order: SlotList,
    used: u32,
    slot_of: SparseVec<Opt<u32>>,
}

impl LocationCache {
    pub fn new(entries: u32, logical_pages: u32, policy: Policy) -> LocationCache {
        let n = entries as usize;
        LocationCache {
            policy,
            lpn: vec![Lpn(0); n],
            ppn: vec![Ppn(0); n],
            order: SlotList::new(n),
            used: 0,
            slot_of: SparseVec::new(if n == 0 { 0 } else { logical_pages as usize }, Opt::NONE),
        }
    }

    pub fn capacity(&self) -> u32 {
        self.lpn.len() as u32
    }

    pub fn enabled(&self) -> bool {
        !self.lpn.is_empty()
    }

    /// The location of `lpn` if cached (an LRU hit becomes the newest entry).
    pub fn get(&mut self, lpn: Lpn) -> Option<Ppn> {
        if !self.enabled() {
            return None;
        }
        let slot = self.slot_of.get(lpn.index()).get()?;
        if self.policy == Policy::Lru {
            self.order.move_to_front(slot);
        }
        Some(self.ppn[slot as usize])
    }

    /// `lpn` was just written at `ppn`.
    pub fn put(&mut self, lpn: Lpn, ppn: Ppn) {
        if !self.enabled() {
            return;
        }
        if let Some(slot) = self.slot_of.get(lpn.index()).get() {
            self.ppn[slot as usize] = ppn;
            if self.policy == Policy::Lru {
                self.order.move_to_front(slot);
            }
            return;
        }
        let slot = if self.used < self.lpn.len() as u32 {
            self.used += 1;
            self.used - 1
        } else {
            let victim = self.order.back().expect("a full cache has an oldest slot");
            self.order.unlink(victim);
            self.slot_of
                .set(self.lpn[victim as usize].index(), Opt::NONE);
            victim
        };
        self.lpn[slot as usize] = lpn;
        self.ppn[slot as usize] = ppn;
        self.slot_of.set(lpn.index(), Opt::some(slot));
        self.order.push_front(slot);
    }

    /// A fold moved `lpn` to `ppn`: the entry follows it without becoming newer.
    pub fn relocate(&mut self, lpn: Lpn, ppn: Ppn) {
        if !self.enabled() {
            return;
        }
        if let Some(slot) = self.slot_of.get(lpn.index()).get() {
            self.ppn[slot as usize] = ppn;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fifo_evicts_the_first_inserted_even_if_hit_or_rewritten() {
        let mut c = LocationCache::new(2, 100, Policy::Fifo);
        c.put(Lpn(1), Ppn(10));
        c.put(Lpn(2), Ppn(20));
        assert_eq!(c.get(Lpn(1)), Some(Ppn(10)));
        c.put(Lpn(1), Ppn(11));
        c.put(Lpn(3), Ppn(30));
        assert_eq!(
            (c.get(Lpn(1)), c.get(Lpn(2)), c.get(Lpn(3))),
            (None, Some(Ppn(20)), Some(Ppn(30)))
        );
    }

    #[test]
    fn lru_evicts_the_least_recently_used() {
        let mut c = LocationCache::new(2, 100, Policy::Lru);
        c.put(Lpn(1), Ppn(10));
        c.put(Lpn(2), Ppn(20));
        assert_eq!(c.get(Lpn(1)), Some(Ppn(10)));
        c.put(Lpn(3), Ppn(30));
        assert_eq!(
            (c.get(Lpn(1)), c.get(Lpn(2)), c.get(Lpn(3))),
            (Some(Ppn(10)), None, Some(Ppn(30)))
        );
        c.relocate(Lpn(3), Ppn(31));
        c.relocate(Lpn(2), Ppn(99));
        assert_eq!((c.get(Lpn(3)), c.get(Lpn(2))), (Some(Ppn(31)), None));
    }

    #[test]
    fn a_disabled_cache_holds_nothing() {
        let mut c = LocationCache::new(0, 100, Policy::Fifo);
        c.put(Lpn(1), Ppn(1));
        assert_eq!(c.get(Lpn(1)), None);
    }
}
