//! A fixed number of log blocks ("slots") with their sector-level map: which logical page each written log
//! page holds (FAST paper §2.2 and §3.2). Pages are appended in order within a block.
//!
//! Each log page is in one of four states:
//! - `Empty`: not written yet;
//! - `Live`: the newest copy of its logical page among these log blocks;
//! - `Stale`: a newer copy was appended later (FAST §3.6: "more recent versions exist");
//! - `Merged`: its logical block was merged since it was written, so the data block holds newer data
//!   (FAST §3.4: the entry is "marked invalid (-1)").
//!
//! The controller's map is the table of log pages (one logical page number per log page); the paper finds a
//! logical page by scanning it (§3.2). The simulator reaches the same answers in O(1) without a scan: an
//! index from logical page to its newest log page, a write stamp per log page and a merge stamp per logical
//! block. These indices are simulator aids, not controller RAM. A log page's index is `slot << shift | offset`
//! (the block size rounded up to a power of two), so that the hot path finds a page's slot by a shift, not a
//! division.

use crate::addr::{somes, Lbn, Lpn, Opt, Pbn, Ppn};
use crate::ftl::RamItem;
use crate::sparse::SparseVec;

/// Groups a caller may sort its slots into ([`LogBlocks::set_group`]).
pub const GROUPS: usize = 4;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PageState {
    Empty,
    Live,
    Stale,
    Merged,
}

pub struct LogBlocks {
    ppb: u32,
    /// log2 of the index stride: `ppb` rounded up to a power of two.
    shift: u32,
    /// Physical block of each slot, none while the slot holds no block.
    pbn: Vec<Opt<Pbn>>,
    /// Pages written in each slot's block.
    written: Vec<u32>,
    /// `Live` pages of each slot (LAST/MAST pick victims and measure area utilization by it).
    live: Vec<u32>,
    /// The caller's group of each slot (MAST's area; 0 unless set) and the `live` and `written` pages of each
    /// group, kept as they change so that a group's utilization takes no scan of its slots.
    group: Vec<u8>,
    group_live: [u64; GROUPS],
    group_written: [u64; GROUPS],
    /// Logical page of each written log page (none: a torn page), indexed `slot << shift | offset`.
    lpn_at: Vec<Opt<Lpn>>,
    stamp_at: Vec<u64>,
    /// Newest log page (`slot << shift | offset`) of each logical page, none if it has none.
    newest: SparseVec<Opt<u32>>,
    /// Scratch: one logical block's entries of `newest` ([`LogBlocks::merged`], [`LogBlocks::newest_of_block`]).
    block_entries: Vec<Opt<u32>>,
    /// Stamp of each logical block's last merge: pages written before it are `Merged`.
    merged_at: SparseVec<u64>,
    clock: u64,
    /// Scratch for [`LogBlocks::live_lbns`]: the pass that last saw each logical block.
    seen: SparseVec<u32>,
    pass: u32,
}

impl LogBlocks {
    pub fn new(slots: u32, pages_per_block: u32, logical_pages: u32) -> LogBlocks {
        let shift = pages_per_block.next_power_of_two().trailing_zeros();
        let pages = (slots as usize) << shift;
        LogBlocks {
            ppb: pages_per_block,
            shift,
            pbn: vec![Opt::NONE; slots as usize],
            written: vec![0; slots as usize],
            live: vec![0; slots as usize],
            group: vec![0; slots as usize],
            group_live: [0; GROUPS],
            group_written: [0; GROUPS],
            lpn_at: vec![Opt::NONE; pages],
            stamp_at: vec![0; pages],
            newest: SparseVec::new(logical_pages as usize, Opt::NONE),
            block_entries: vec![Opt::NONE; pages_per_block as usize],
            merged_at: SparseVec::new(logical_pages.div_ceil(pages_per_block) as usize, 0),
            clock: 1,
            seen: SparseVec::new(logical_pages.div_ceil(pages_per_block) as usize, 0),
            pass: 0,
        }
    }

    /// Forgets every slot and page before a mount rebuilds them from the chip.
    pub fn clear(&mut self) {
        *self = LogBlocks::new(self.slots(), self.ppb, self.newest.len() as u32);
    }

    pub fn slots(&self) -> u32 {
        self.pbn.len() as u32
    }

    pub fn pbn(&self, slot: u32) -> Option<Pbn> {
        self.pbn[slot as usize].get()
    }

    pub fn written(&self, slot: u32) -> u32 {
        self.written[slot as usize]
    }

    /// Pages of `slot` that are `Live` (the newest log copy of their logical page, not merged).
    pub fn live(&self, slot: u32) -> u32 {
        self.live[slot as usize]
    }

    /// Moves `slot` (and its pages' counts) into `group` (below [`GROUPS`]).
    pub fn set_group(&mut self, slot: u32, group: u8) {
        let (s, from, to) = (
            slot as usize,
            self.group[slot as usize] as usize,
            group as usize,
        );
        self.group_live[from] -= self.live[s] as u64;
        self.group_written[from] -= self.written[s] as u64;
        self.group_live[to] += self.live[s] as u64;
        self.group_written[to] += self.written[s] as u64;
        self.group[s] = group;
    }

    /// `Live` and written pages of the slots in `group`.
    pub fn group_pages(&self, group: u8) -> (u64, u64) {
        (
            self.group_live[group as usize],
            self.group_written[group as usize],
        )
    }

    #[inline]
    fn add_live(&mut self, slot: usize, delta: i32) {
        self.live[slot] = self.live[slot].wrapping_add_signed(delta);
        let g = self.group[slot] as usize;
        self.group_live[g] = self.group_live[g].wrapping_add_signed(delta as i64);
    }

    pub fn is_full(&self, slot: u32) -> bool {
        self.written[slot as usize] == self.ppb
    }

    /// Puts an erased block into an empty slot.
    pub fn open(&mut self, slot: u32, pbn: Pbn) {
        debug_assert!(self.pbn[slot as usize].is_none());
        self.pbn[slot as usize] = Opt::some(pbn);
        self.written[slot as usize] = 0;
    }

    /// The physical page the next append to `slot` goes to.
    pub fn next_ppn(&self, slot: u32) -> Ppn {
        self.ppn(slot, self.written[slot as usize])
    }

    /// Records that `lpn` was programmed at [`LogBlocks::next_ppn`] of `slot`; `None` records a torn page (a
    /// program cut by a power loss, found at mount): it takes its page and holds nothing.
    pub fn append(&mut self, slot: u32, lpn: Option<Lpn>) {
        let index = self.index(slot, self.written[slot as usize]);
        self.lpn_at[index as usize] = Opt::from(lpn);
        self.stamp_at[index as usize] = self.clock;
        self.clock += 1;
        self.written[slot as usize] += 1;
        self.group_written[self.group[slot as usize] as usize] += 1;
        let Some(lpn) = lpn else {
            return;
        };
        if let Some(previous) = self.newest.get(lpn.index()).get() {
            self.add_live((previous >> self.shift) as usize, -1);
        }
        self.newest.set(lpn.index(), Opt::some(index));
        self.add_live(slot as usize, 1);
    }

    /// The newest log copy of `lpn` that is not merged.
    #[inline]
    pub fn newest(&self, lpn: Lpn) -> Option<Ppn> {
        self.newest
            .get(lpn.index())
            .get()
            .map(|index| self.ppn_of(index))
    }

    /// How many logical pages from `lpn` on have no log copy, known at once: the rest of an untouched chunk
    /// of the map of newest copies ([`SparseVec::untouched_from`]), else 0.
    #[inline]
    pub fn untouched_from(&self, lpn: Lpn) -> usize {
        self.newest.untouched_from(lpn.index())
    }

    /// The newest log copy, if any, of each page of `lbn` into `out` (one entry per offset), as
    /// [`LogBlocks::newest`] page by page. The block's entries are read a chunk at a time.
    pub fn newest_of_block(&mut self, lbn: Lbn, out: &mut [Opt<Ppn>]) {
        let first = lbn.first_lpn(self.ppb).index();
        let mut entries = std::mem::take(&mut self.block_entries);
        let entries_of_block = &mut entries[..out.len()];
        self.newest.read_range(first, entries_of_block);
        // Most offsets have no log copy: found eight at a time.
        out.fill(Opt::NONE);
        for (o, index) in somes(entries_of_block) {
            out[o] = Opt::some(self.ppn_of(index));
        }
        self.block_entries = entries;
    }

    /// The slot holding the newest log copy of `lpn` that is not merged.
    #[inline]
    pub fn newest_slot(&self, lpn: Lpn) -> Option<u32> {
        self.newest
            .get(lpn.index())
            .get()
            .map(|index| index >> self.shift)
    }

    /// The physical page at `offset` of `slot`.
    pub fn ppn(&self, slot: u32, offset: u32) -> Ppn {
        self.ppn_of(self.index(slot, offset))
    }

    #[inline]
    fn index(&self, slot: u32, offset: u32) -> u32 {
        slot << self.shift | offset
    }

    #[inline]
    fn ppn_of(&self, index: u32) -> Ppn {
        let (slot, offset) = (index >> self.shift, index & ((1 << self.shift) - 1));
        let pbn = self.pbn[slot as usize]
            .get()
            .expect("a log page of an open slot");
        Ppn::new(pbn, offset, self.ppb)
    }

    /// Logical page held at `offset` of `slot`, if written (a torn page holds none).
    pub fn lpn_at(&self, slot: u32, offset: u32) -> Option<Lpn> {
        if offset < self.written[slot as usize] {
            self.lpn_at[self.index(slot, offset) as usize].get()
        } else {
            None
        }
    }

    pub fn state(&self, slot: u32, offset: u32) -> PageState {
        let Some(lpn) = self.lpn_at(slot, offset) else {
            return PageState::Empty;
        };
        let index = self.index(slot, offset);
        if self.stamp_at[index as usize] < self.merged_at.get(lpn.lbn(self.ppb).index()) {
            PageState::Merged
        } else if self.newest.get(lpn.index()) == Opt::some(index) {
            PageState::Live
        } else {
            PageState::Stale
        }
    }

    /// The data block of `lbn` now holds its newest data: every log page of it becomes `Merged`. What
    /// [`LogBlocks::supersede`] of each of its pages does, with the block's entries read a chunk at a time
    /// (and written only when one of them is set).
    pub fn merged(&mut self, lbn: Lbn) {
        self.merged_at.set(lbn.index(), self.clock);
        let first = lbn.first_lpn(self.ppb).index();
        let mut entries = std::mem::take(&mut self.block_entries);
        self.newest.read_range(first, &mut entries);
        let mut any = false;
        for (_, index) in somes(&entries) {
            self.add_live((index >> self.shift) as usize, -1);
            any = true;
        }
        if any {
            self.newest.fill_range(first, entries.len(), Opt::NONE);
        }
        self.block_entries = entries;
    }

    /// A newer copy of `lpn` was written outside these log blocks (a sequential log block): its newest log
    /// page, if any, becomes `Stale`.
    #[inline]
    pub fn supersede(&mut self, lpn: Lpn) {
        if let Some(index) = self.newest.get(lpn.index()).get() {
            self.add_live((index >> self.shift) as usize, -1);
            self.newest.set(lpn.index(), Opt::NONE);
        }
    }

    /// Empties `slot` (its block is being erased or becoming a data block) and returns its block. Pages it
    /// held stop being anyone's newest copy.
    pub fn close(&mut self, slot: u32) -> Pbn {
        for offset in 0..self.written[slot as usize] {
            let index = self.index(slot, offset);
            if let Some(lpn) = self.lpn_at[index as usize].get() {
                if self.newest.get(lpn.index()) == Opt::some(index) {
                    self.newest.set(lpn.index(), Opt::NONE);
                }
            }
        }
        let pbn = self.pbn[slot as usize]
            .take()
            .expect("close of an open slot");
        let g = self.group[slot as usize] as usize;
        self.group_written[g] -= self.written[slot as usize] as u64;
        self.group_live[g] -= self.live[slot as usize] as u64;
        self.written[slot as usize] = 0;
        self.live[slot as usize] = 0;
        pbn
    }

    /// The logical blocks with a `Live` page in `slot`, in page order, into `out` (the logical blocks a lazy
    /// merge of the block must merge, FAST §3.6; their number is its associativity, §3.4).
    pub fn live_lbns(&mut self, slot: u32, out: &mut Vec<Lbn>) {
        self.lbns_where(slot, false, out);
    }

    /// The logical blocks with a page in `slot` that is `Live` or `Stale`, i.e. not `Merged` (not "-1" in the
    /// sector map), in page order, into `out`: those an eager merge of the block merges (FAST §3.4).
    pub fn valid_lbns(&mut self, slot: u32, out: &mut Vec<Lbn>) {
        self.lbns_where(slot, true, out);
    }

    /// The number of distinct logical blocks with a `Live` page in `slot` (its associativity, FAST §3.4).
    pub fn associativity(&mut self, slot: u32) -> u32 {
        self.next_pass();
        let mut count = 0;
        for offset in 0..self.written[slot as usize] {
            if self.unseen_lbn(slot, offset, false).is_some() {
                count += 1;
            }
        }
        count
    }

    fn lbns_where(&mut self, slot: u32, stale_too: bool, out: &mut Vec<Lbn>) {
        out.clear();
        self.next_pass();
        for offset in 0..self.written[slot as usize] {
            if let Some(lbn) = self.unseen_lbn(slot, offset, stale_too) {
                out.push(lbn);
            }
        }
    }

    fn next_pass(&mut self) {
        self.pass = self.pass.wrapping_add(1);
        if self.pass == 0 {
            self.seen = SparseVec::new(self.seen.len(), 0);
            self.pass = 1;
        }
    }

    /// The logical block of the page at `offset` of `slot` if the page counts (`Live`, or `Stale` too) and
    /// its logical block was not seen yet in this pass.
    #[inline]
    fn unseen_lbn(&mut self, slot: u32, offset: u32, stale_too: bool) -> Option<Lbn> {
        match self.state(slot, offset) {
            PageState::Live => {}
            PageState::Stale if stale_too => {}
            _ => return None,
        }
        let lbn = self.lpn_at[self.index(slot, offset) as usize]
            .get()?
            .lbn(self.ppb);
        if self.seen.get(lbn.index()) == self.pass {
            return None;
        }
        self.seen.set(lbn.index(), self.pass);
        Some(lbn)
    }

    /// True when the first `written` pages of `slot` hold offsets 0, 1, ... of `lbn` in order (the condition
    /// of a switch when the block is full, of a partial merge otherwise: FAST §2.2, §3.4).
    pub fn in_place_order(&self, slot: u32, lbn: Lbn) -> bool {
        (0..self.written[slot as usize])
            .all(|o| self.lpn_at[self.index(slot, o) as usize] == Opt::some(lbn.lpn(o, self.ppb)))
    }
}

/// The sector map of `log_blocks` log blocks as a controller stores it: one 4-byte entry per log page (FAST
/// paper §3.2). `kind` names the blocks in the layout text ("RW log blocks", "random log blocks").
pub fn sector_map_ram(log_blocks: u64, pages_per_block: u32, kind: &str) -> RamItem {
    RamItem::new(
        "sector_map",
        log_blocks * pages_per_block as u64 * 4,
        format!("{log_blocks} {kind} x {pages_per_block} pages x 4 B (FAST paper section 3.2)"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_go_stale_when_rewritten_and_merged_when_their_block_merges() {
        // 2 slots of 4 pages; logical pages 0..16.
        let mut log = LogBlocks::new(2, 4, 16);
        log.open(0, Pbn(7));
        log.append(0, Some(Lpn(5)));
        log.append(0, Some(Lpn(9)));
        log.append(0, Some(Lpn(5)));
        assert_eq!(log.state(0, 0), PageState::Stale);
        assert_eq!(log.state(0, 1), PageState::Live);
        assert_eq!(log.state(0, 2), PageState::Live);
        assert_eq!(log.state(0, 3), PageState::Empty);
        assert_eq!(log.live(0), 2);
        assert_eq!(log.newest(Lpn(5)), Some(Ppn(7 * 4 + 2)));
        log.merged(Lbn(1)); // logical block 1 holds pages 4..8
        assert_eq!(log.state(0, 0), PageState::Merged);
        assert_eq!(log.state(0, 2), PageState::Merged);
        assert_eq!(log.newest(Lpn(5)), None);
        assert_eq!(log.live(0), 1);
        log.append(0, Some(Lpn(5)));
        assert_eq!(log.state(0, 3), PageState::Live);
        assert_eq!(log.live(0), 2);
        log.supersede(Lpn(9));
        assert_eq!(
            (log.state(0, 1), log.live(0), log.newest(Lpn(9))),
            (PageState::Stale, 1, None)
        );
        assert!(log.is_full(0));
        assert!(!log.in_place_order(0, Lbn(1)));
        assert_eq!(log.close(0), Pbn(7));
        assert_eq!(log.newest(Lpn(5)), None);
        assert_eq!(log.newest(Lpn(9)), None);
        log.open(1, Pbn(3));
        log.append(1, Some(Lpn(8)));
        log.append(1, Some(Lpn(9)));
        assert!(log.in_place_order(1, Lbn(2)));
    }

    #[test]
    fn a_torn_page_takes_its_place_in_the_log_and_holds_nothing() {
        // A mount replays slot 0 of block 5: lpn 9, a torn page, lpn 9 again. The torn page is written
        // (the next append goes to page 3), empty, and no copy of anything; the block is not in place.
        let mut log = LogBlocks::new(1, 4, 16);
        log.open(0, Pbn(5));
        log.append(0, Some(Lpn(9)));
        log.append(0, None);
        log.append(0, Some(Lpn(9)));
        assert_eq!((log.written(0), log.next_ppn(0)), (3, Ppn(23)));
        assert_eq!(
            (log.lpn_at(0, 1), log.state(0, 1)),
            (None, PageState::Empty)
        );
        assert_eq!(
            (log.state(0, 0), log.state(0, 2)),
            (PageState::Stale, PageState::Live)
        );
        assert_eq!((log.live(0), log.newest(Lpn(9))), (1, Some(Ppn(22))));
        assert!(!log.in_place_order(0, Lbn(2)));
        let mut out = Vec::new();
        log.valid_lbns(0, &mut out);
        assert_eq!(out, vec![Lbn(2)]);
        assert_eq!(log.close(0), Pbn(5));
        assert_eq!(log.newest(Lpn(9)), None);
    }

    #[test]
    fn live_and_valid_logical_blocks_of_a_slot_in_page_order() {
        // 4 pages a block; slot 0 holds lpns 9, 1, 9, 2: logical blocks 2, 0, 2, 0.
        let mut log = LogBlocks::new(2, 4, 16);
        log.open(0, Pbn(5));
        for lpn in [9, 1, 9, 2] {
            log.append(0, Some(Lpn(lpn)));
        }
        log.open(1, Pbn(6));
        log.append(1, Some(Lpn(1))); // page 1 of slot 0 goes stale
        log.append(1, Some(Lpn(2))); // page 3 of slot 0 goes stale: block 0 has no live page in slot 0 left
        let mut out = Vec::new();
        log.live_lbns(0, &mut out);
        assert_eq!(out, vec![Lbn(2)]);
        log.valid_lbns(0, &mut out);
        assert_eq!(out, vec![Lbn(2), Lbn(0)]);
        assert_eq!((log.associativity(0), log.associativity(1)), (1, 1));
        log.merged(Lbn(2));
        log.valid_lbns(0, &mut out);
        assert_eq!(out, vec![Lbn(0)]);
        assert_eq!(log.associativity(0), 0);
    }

    #[test]
    fn group_counts_follow_appends_supersedes_merges_moves_and_closes() {
        // 4 pages a block; slot 0 in group 1, slot 1 in group 2.
        let mut log = LogBlocks::new(2, 4, 16);
        log.open(0, Pbn(5));
        log.set_group(0, 1);
        for lpn in [1, 2, 9] {
            log.append(0, Some(Lpn(lpn)));
        }
        assert_eq!(log.group_pages(1), (3, 3));
        log.open(1, Pbn(6));
        log.set_group(1, 2);
        log.append(1, Some(Lpn(2))); // page 1 of slot 0 goes stale
        log.append(1, None); // a torn page: written, not live
        assert_eq!((log.group_pages(1), log.group_pages(2)), ((2, 3), (1, 2)));
        log.merged(Lbn(2)); // lpn 9 of slot 0
        log.supersede(Lpn(2));
        assert_eq!((log.group_pages(1), log.group_pages(2)), ((1, 3), (0, 2)));
        log.set_group(0, 3);
        assert_eq!((log.group_pages(1), log.group_pages(3)), ((0, 0), (1, 3)));
        log.close(0);
        log.close(1);
        assert_eq!((log.group_pages(2), log.group_pages(3)), ((0, 0), (0, 0)));
    }
}
