//! The FAST family's write path (FAST, O-FAST, LAST, MAST): data blocks, sequential log blocks, random log
//! blocks and free blocks, with their merges ([`HybridBlocks`]).
//!
//! A sequential log block holds offsets `0..pages` of one logical block in place (FAST paper §3.3, the SW
//! block; LAST's sequential log buffer). [`HybridBlocks::write_seq`] applies FAST's write cases (Fig. 6) and
//! says what it did ([`SeqWrite`]):
//! - case 1 (the caller's locality test says the write starts a run, at offset 0): the logical block's
//!   sequential log block, else a free one, else the oldest, is reclaimed (switch when full, partial merge
//!   otherwise) and a new one takes the page;
//! - case 2.1 (the logical block has a sequential log block and the write continues its run): appended;
//! - cases 2.2 and 2.3 (it has one and the write breaks the run): the write is folded into a partial merge
//!   (offset beyond the run) or a full merge (offset inside it), and the block is gone;
//! - otherwise the write is not a sequential log block's: the caller puts it in its random log blocks.
//!
//! One rule supersedes older copies, from FAST §3.4 and §3.6: a page appended to any log block, sequential or
//! random, makes the older log copy of its logical page `Stale` ("more recent versions exist in the nonvictim
//! log blocks", §3.6), and a merge of a logical block makes every log copy of it `Merged` (the sector map's
//! "-1", §3.4). So a write to a logical block with a sequential log block always lands in it or merges it, and
//! its pages are the newest.
//!
//! The newest copy of a page is looked up in one order: sequential log block, newest random log page, data
//! block ([`HybridBlocks::newest`]), by reads and by merges alike.
//!
//! Mount (FAST §3.2, end: the sector map "can be rebuilt at boot from the spare areas"). Each page's spare area
//! holds its logical page, the chip's sequence number and a scheme word written with the page at no cost:
//! [`SEQ_LOG_AUX`] on a sequential log block's pages, [`RANDOM_LOG_AUX`] (+ the block's kind) on a random
//! log block's, nothing on a data block's (host writes in place, merge copies). [`HybridBlocks::mount`] reads
//! the spare area of every page of every block (in-place blocks have holes): `physical blocks x pages per
//! block` spare reads. Tagged random blocks are the random log blocks, in the order of their first page;
//! every other programmed block holds one logical block's pages in place, and [`resolve`] gives each its
//! role. A merge the cut interrupted is finished at mount: its target's missing pages are copied from the
//! newest copy of each (the highest sequence number among the blocks it was replacing and the random log
//! pages), then the replaced blocks are erased; these copies and erases are the only flash writes of a
//! mount. The sector map is replayed in sequence order: appends, a merge of each logical block when its data
//! block was first programmed (older log pages of it are "-1"), and the sequential log block's pages
//! superseding older log copies, as do the data block's pages.
//!
//! Torn pages (`torn_pages`: a program cut by the power loss reads back with no logical page): a
//! block of nothing but torn pages is erased at mount (a first program into a fresh block was cut: a data
//! block's first write in place, a log block's first append, a merge's first copy); a torn page in a random
//! log block is a hole of its appends (the write pointer goes past it; it is no copy of anything); the
//! in-place blocks' torn pages are settled by [`settle_torn`]: taken and empty in a data block (a write in
//! place, unless the blocks a merge replaces are still there), the merge undone when its full merge's target
//! holds one, redone into a free block when a partial merge's target or a sequential log block does. Cost:
//! one erase per torn-only block or undone target; a redo reads and programs each page the logical block
//! holds and erases the blocks it replaces.

use crate::addr::{first_some, Lbn, Lpn, Opt, Pbn, Ppn, Token};
use crate::config::Geometry;
use crate::device::Device;
use crate::device::{FlashError, Result};
use crate::ftl::common::mechanisms::boot_scan::{
    finish_merge, is_torn, mount_bug, scan_block, settle_torn, Extent, InPlace,
};
use crate::ftl::common::mechanisms::data_blocks::DataBlocks;
use crate::ftl::common::mechanisms::free_pool::FreePool;
use crate::ftl::common::mechanisms::log_blocks::LogBlocks;
use crate::ftl::common::mechanisms::merge;
use crate::stats::MergeKind;

/// The scheme word of a page programmed into a log block that serves one logical block (a sequential log
/// block; BAST's log blocks): a mount tells the block from a data block or a merge's target by it.
pub const SEQ_LOG_AUX: u32 = 1;
/// The scheme word of a page appended to a random log block, plus the block's kind (LAST's partition, MAST's
/// area; 0 for FAST).
pub const RANDOM_LOG_AUX: u32 = 2;

/// A sequential log block: offsets `first..pages` of `lbn`, in place (`first` is 0 for FAST's SW block and
/// MAST's; LAST starts a run wherever a large request starts).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SeqBlock {
    pub pbn: Pbn,
    pub lbn: Lbn,
    pub first: u32,
    pub pages: u32,
}

impl SeqBlock {
    /// The block's copy of `lpn`, if it holds it.
    #[inline]
    pub fn page(&self, lpn: Lpn, pages_per_block: u32, dev: &Device) -> Option<Ppn> {
        let offset = lpn.offset(pages_per_block);
        (self.lbn == lpn.lbn(pages_per_block) && (self.first..self.pages).contains(&offset))
            .then(|| dev.ppn(self.pbn, offset))
    }
}

/// An event of the sector map's replay at mount, at a page's sequence number.
#[derive(Clone, Copy, Debug)]
enum Replay {
    /// A random log page was appended to a slot (none: a torn page).
    Append(u32, Option<Lpn>),
    /// The logical block's data block was first programmed: its older log pages are merged.
    Merged(Lbn),
    /// A sequential log block took the logical page: its older random log copy is stale.
    Supersede(Lpn),
}

/// What the mount's scan of every spare area finds (module doc, "Mount").
struct MountScan {
    /// Blocks that hold one logical block's pages in place: data blocks, sequential log blocks, merge targets.
    in_place: Vec<InPlace>,
    /// Random log blocks: (first page's sequence number, block, kind, range of their pages in `log_pages`).
    logs: Vec<(u32, Pbn, u32, usize, usize)>,
    /// (logical page, none if torn; sequence number; physical page) of every random log page, by block.
    log_pages: Vec<(Option<Lpn>, u32, Ppn)>,
    /// Blocks found erased or erased by the mount: the free pool once it is done.
    erased: Vec<Pbn>,
}

impl MountScan {
    /// Mount, step 2: reads the spare area of every page of blocks `0..physical_blocks` and sorts the blocks
    /// into random log blocks (tagged [`RANDOM_LOG_AUX`], appended in page order) and in-place blocks; a block
    /// of nothing but torn pages is erased.
    fn read(dev: &mut Device, physical_blocks: u32, ppb: u32) -> Result<MountScan> {
        let mut scan = MountScan {
            in_place: Vec::new(),
            logs: Vec::new(),
            log_pages: Vec::new(),
            erased: Vec::new(),
        };
        let mut pages = Vec::with_capacity(ppb as usize);
        for pbn in (0..physical_blocks).map(Pbn) {
            pages.clear();
            scan_block(dev, pbn, Extent::EveryPage, |o, _, s| pages.push((o, s)))?;
            let Some(&(_, first)) = pages.iter().find(|(_, s)| !is_torn(s)) else {
                // Erased, or nothing but torn pages (a program into a fresh block cut): erased and free.
                if !pages.is_empty() {
                    dev.erase(pbn)?;
                }
                scan.erased.push(pbn);
                continue;
            };
            if let Some(kind) = first.aux().and_then(|aux| aux.checked_sub(RANDOM_LOG_AUX)) {
                let appended = pages
                    .iter()
                    .enumerate()
                    .all(|(i, &(o, s))| o == i as u32 && (s.aux == first.aux || is_torn(&s)));
                if !appended {
                    return Err(mount_bug(
                        dev,
                        pbn,
                        "a random log block not appended in page order",
                    ));
                }
                let start = scan.log_pages.len();
                scan.log_pages.extend(
                    pages
                        .iter()
                        .map(|&(o, s)| (s.lpn(), s.seq, dev.ppn(pbn, o))),
                );
                scan.logs
                    .push((first.seq, pbn, kind, start, scan.log_pages.len()));
                continue;
            }
            match InPlace::from_pages(pbn, &pages, ppb, SEQ_LOG_AUX, false) {
                Some(b) => scan.in_place.push(b),
                None => {
                    return Err(mount_bug(
                        dev,
                        pbn,
                        "pages of several logical blocks or out of place",
                    ))
                }
            }
        }
        Ok(scan)
    }
}

/// What [`HybridBlocks::write_seq`] did with a write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SeqWrite {
    /// The page went into a sequential log block (case 1 or 2.1); `reclaimed`: the kind of the merge that
    /// freed a block for it first (case 1).
    Appended { reclaimed: Option<MergeKind> },
    /// The write broke a run and was folded into the block's merge (case 2.2: partial, 2.3: full), or the
    /// case-1 merge left its offset free in the data block (a torn page it dropped) and it went there.
    Merged(MergeKind),
    /// No sequential log block takes the write: it goes to the caller's random log blocks.
    NotMine,
}

/// The newest copy of `lpn`: `seq`'s page, else the newest random log page, else the data block's page.
#[inline]
fn newest_of(
    lpn: Lpn,
    ppb: u32,
    seq: &[Option<SeqBlock>],
    log: &LogBlocks,
    data: &DataBlocks,
    dev: &Device,
) -> Option<Ppn> {
    let lbn = lpn.lbn(ppb);
    seq.iter()
        .flatten()
        .find(|s| s.lbn == lbn)
        .and_then(|s| s.page(lpn, ppb, dev))
        .or_else(|| log.newest(lpn))
        .or_else(|| data.page(lpn, dev))
}

/// The blocks of a scheme of the FAST family: data blocks, sequential log blocks, random log blocks and free
/// blocks, with the scratch space of their merges.
pub struct HybridBlocks {
    pub data: DataBlocks,
    pub log: LogBlocks,
    pub pool: FreePool,
    ppb: u32,
    sequential_program: bool,
    seq: Vec<Option<SeqBlock>>,
    /// When each sequential log block was opened (oldest-first reclaim in case 1).
    seq_opened: Vec<u64>,
    clock: u64,
    sources: Vec<Opt<Ppn>>,
    /// What the data block's spare areas a merge reads hold, by offset ([`Device::read_spare_lpns`]).
    spare_lpns: Vec<Opt<Lpn>>,
    lbns: Vec<Lbn>,
}

impl HybridBlocks {
    /// `seq_slots` sequential and `log_slots` random log blocks; every physical block `0..physical_blocks`
    /// starts free.
    pub fn new(g: &Geometry, seq_slots: u32, log_slots: u32, physical_blocks: u32) -> HybridBlocks {
        let ppb = g.pages_per_block;
        HybridBlocks {
            data: DataBlocks::new(g.logical_blocks, ppb, g.sequential_program),
            log: LogBlocks::new(log_slots, ppb, g.logical_pages()),
            pool: FreePool::with_range(Pbn(0), physical_blocks),
            ppb,
            sequential_program: g.sequential_program,
            seq: vec![None; seq_slots as usize],
            seq_opened: vec![0; seq_slots as usize],
            clock: 0,
            sources: vec![Opt::NONE; ppb as usize],
            spare_lpns: vec![Opt::NONE; ppb as usize],
            lbns: Vec::with_capacity(ppb as usize),
        }
    }

    /// Number of sequential log blocks.
    pub fn seq_slots(&self) -> u32 {
        self.seq.len() as u32
    }

    /// The sequential log block of `lbn`, if it has one.
    #[inline]
    pub fn seq_of(&self, lbn: Lbn) -> Option<SeqBlock> {
        self.seq.iter().flatten().find(|s| s.lbn == lbn).copied()
    }

    /// The newest copy of `lpn` (see the module doc).
    #[inline]
    pub fn newest(&self, lpn: Lpn, dev: &Device) -> Option<Ppn> {
        newest_of(lpn, self.ppb, &self.seq, &self.log, &self.data, dev)
    }

    /// [`crate::ftl::Ftl::unmapped_from`] of a scheme of the family: the rest of a logical block with no data
    /// block and no sequential log block, as far as the random log blocks hold no copy.
    pub fn unmapped_from(&self, lpn: Lpn, pages: u32) -> u32 {
        let lbn = lpn.lbn(self.ppb);
        if self.seq.iter().flatten().any(|s| s.lbn == lbn) {
            return 0;
        }
        self.data.unmapped_from(&self.log, lpn, pages)
    }

    /// Reads the newest copy of `lpn`: one page read, or nothing if it was never written.
    pub fn read(&self, lpn: Lpn, dev: &mut Device) -> Result<Option<Token>> {
        match self.newest(lpn, dev) {
            Some(ppn) => dev.read_token(ppn),
            None => Ok(None),
        }
    }

    /// Programs `lpn` in its data block if it fits there without a collision; returns whether it did. The
    /// page is then the newest copy, so an older random log copy becomes `Stale` (the one rule of the module
    /// doc). One is left when a write found its offset taken by a torn page and went to the random log blocks
    /// after the merge that made room dropped that page (torn pages: the merge's target leaves the offset
    /// free); a mount replays the same rule (the data block's pages supersede older log copies).
    pub fn write_in_place(&mut self, lpn: Lpn, token: Token, dev: &mut Device) -> Result<bool> {
        if !self.data.fits_in_place(lpn) {
            return Ok(false);
        }
        self.data
            .program_in_place(lpn, token, &mut self.pool, dev)?;
        self.log.supersede(lpn);
        Ok(true)
    }

    /// FAST's write cases for the sequential log blocks (module doc). `opens`: the caller's locality
    /// verdict that a run may start at this page (FAST, MAST: offset 0, case 1; LAST: a large request, at
    /// any offset). A write that continues its block's run is appended either way.
    pub fn write_seq(
        &mut self,
        lpn: Lpn,
        token: Token,
        opens: bool,
        dev: &mut Device,
    ) -> Result<SeqWrite> {
        let (lbn, offset) = (lpn.lbn(self.ppb), lpn.offset(self.ppb));
        let mine = self.seq_index(lbn);
        let continues = mine.is_some_and(|i| self.seq[i].is_some_and(|s| s.pages == offset));
        if opens && !continues {
            // Case 1: the logical block's old run, else a free slot, else the oldest block makes room.
            let i = match mine {
                Some(i) => Some(i),
                None if self.seq.iter().any(Option::is_none) => None,
                None => (0..self.seq.len()).min_by_key(|&i| self.seq_opened[i]),
            };
            let reclaimed = match i {
                Some(i) => Some(self.reclaim_seq(i, None, dev)?),
                None => None,
            };
            // The merge dropped a torn page at the offset: the page fits in place now.
            if let Some(kind) = reclaimed.filter(|_| self.data.fits_in_place(lpn)) {
                self.write_in_place(lpn, token, dev)?;
                return Ok(SeqWrite::Merged(kind));
            }
            let i = self
                .seq
                .iter()
                .position(Option::is_none)
                .expect("a sequential log slot is free");
            let pbn = self
                .pool
                .take()
                .ok_or_else(|| dev.out_of_space("no free block for a sequential log block"))?;
            dev.program_with_aux(dev.ppn(pbn, offset), token, lpn, SEQ_LOG_AUX)?;
            self.log.supersede(lpn);
            self.clock += 1;
            self.seq_opened[i] = self.clock;
            self.seq[i] = Some(SeqBlock {
                pbn,
                lbn,
                first: offset,
                pages: offset + 1,
            });
            return Ok(SeqWrite::Appended { reclaimed });
        }
        let Some(i) = mine else {
            return Ok(SeqWrite::NotMine);
        };
        let mut s = self.seq[i].expect("seq_index finds a block");
        if continues {
            // Case 2.1.
            dev.program_with_aux(dev.ppn(s.pbn, offset), token, lpn, SEQ_LOG_AUX)?;
            self.log.supersede(lpn);
            s.pages += 1;
            self.seq[i] = Some(s);
            return Ok(SeqWrite::Appended { reclaimed: None });
        }
        // Cases 2.2 and 2.3.
        Ok(SeqWrite::Merged(self.reclaim_seq(
            i,
            Some((offset, token)),
            dev,
        )?))
    }

    /// Appends `lpn` to random log slot `slot`, its spare area tagged with the block's `kind`.
    pub fn append_random(
        &mut self,
        slot: u32,
        lpn: Lpn,
        token: Token,
        kind: u32,
        dev: &mut Device,
    ) -> Result<()> {
        let ppn = self.log.next_ppn(slot);
        dev.program_with_aux(ppn, token, lpn, RANDOM_LOG_AUX + kind)?;
        self.log.append(slot, Some(lpn));
        Ok(())
    }

    /// Copies the live page at `offset` of random log slot `from` to the end of slot `to` (MAST's migration
    /// to its cold area), tagged with `to`'s `kind`: a page read and a program, as [`Device::copy`].
    pub fn move_random(
        &mut self,
        from: u32,
        offset: u32,
        to: u32,
        kind: u32,
        dev: &mut Device,
    ) -> Result<()> {
        let page = dev.read(self.log.ppn(from, offset))?;
        let (Some(token), Some(lpn)) = (page.token, page.spare.lpn()) else {
            return Ok(());
        };
        self.append_random(to, lpn, token, kind, dev)
    }

    /// Rebuilds the blocks' tables from the chip alone after a power cut (module doc, "Mount") and returns
    /// each random log block found with its kind: slot `i` holds the `i`-th oldest.
    pub fn mount(&mut self, dev: &mut Device, physical_blocks: u32) -> Result<Vec<(Pbn, u32)>> {
        self.forget_tables();
        let mut scan = MountScan::read(dev, physical_blocks, self.ppb)?;
        let mut replay: Vec<(u32, Replay)> = Vec::new();
        let seq_blocks = self.mount_in_place_blocks(dev, &mut scan, &mut replay)?;
        if seq_blocks.len() > self.seq.len() || scan.logs.len() > self.log.slots() as usize {
            return Err(FlashError::Mount {
                scheme: dev.scheme().to_string(),
                what: format!(
                    "{} sequential and {} random log blocks for {} and {} slots",
                    seq_blocks.len(),
                    scan.logs.len(),
                    self.seq.len(),
                    self.log.slots()
                ),
            });
        }
        self.reopen_seq_blocks(seq_blocks);
        let kinds = self.reopen_random_logs(dev, &mut scan, &mut replay)?;
        self.replay_sector_map(replay);
        for pbn in scan.erased {
            self.pool.put(pbn);
        }
        Ok(kinds)
    }

    /// Mount, step 1: every table held in RAM is forgotten.
    fn forget_tables(&mut self) {
        self.data.clear();
        self.log.clear();
        self.pool = FreePool::with_range(Pbn(0), 0);
        self.seq.fill(None);
        self.seq_opened.fill(0);
        self.clock = 0;
    }

    /// Mount, step 3: each logical block's in-place blocks get their roles ([`settle_torn`]), an interrupted
    /// merge is finished ([`finish_merge`]), the data block is assigned and its pages, its merge and its
    /// sequential log block's pages go into the sector map's replay. Returns the sequential log blocks with
    /// their first sequence numbers.
    fn mount_in_place_blocks(
        &mut self,
        dev: &mut Device,
        scan: &mut MountScan,
        replay: &mut Vec<(u32, Replay)>,
    ) -> Result<Vec<(u32, SeqBlock)>> {
        let ppb = self.ppb;
        // Random log pages by logical page (torn ones left out), for the newest copy of a page a merge's
        // target misses.
        let mut by_lpn: Vec<(Lpn, u32, Ppn)> = scan
            .log_pages
            .iter()
            .filter_map(|&(lpn, seq, ppn)| Some((lpn?, seq, ppn)))
            .collect();
        by_lpn.sort_unstable();
        scan.in_place.sort_by_key(|b| (b.lbn, b.min_seq));
        let mut seq_blocks: Vec<(u32, SeqBlock)> = Vec::new();
        for group in scan.in_place.chunk_by(|a, b| a.lbn == b.lbn) {
            let lbn = group[0].lbn;
            let mut group = group.to_vec();
            let roles = settle_torn(dev, &mut group, false, &mut scan.erased)?;
            let group = &group[..];
            let data = &group[roles.data];
            let programmed = finish_merge(dev, group, &roles, &mut scan.erased, |lpn| {
                let first = by_lpn.partition_point(|e| e.0 < lpn);
                by_lpn[first..]
                    .iter()
                    .take_while(|e| e.0 == lpn)
                    .max_by_key(|e| e.1)
                    .map(|e| (e.1, e.2))
            })?;
            self.data.assign(lbn, data.pbn, 0);
            for o in programmed.iter_ones() {
                let o = o as u32;
                self.data.mark_programmed(lbn.lpn(o, ppb));
                // A random log copy older than the data block's page is not the newest (MAST copies a
                // live page to CA while the logical block's SW block is open; the SW block's partial merge
                // then fills that offset). A page the mount copied is newer than every other.
                let seq = match data.seqs[o as usize] {
                    0 => u32::MAX,
                    seq => seq,
                };
                replay.push((seq, Replay::Supersede(lbn.lpn(o, ppb))));
            }
            // A torn page written in place: its offset is taken and holds nothing ([`settle_torn`]).
            for &o in &data.torn {
                self.data.mark_programmed(lbn.lpn(o, ppb));
            }
            replay.push((data.min_seq, Replay::Merged(lbn)));
            if let Some(log) = roles.log.map(|i| &group[i]) {
                let Some((first, pages)) = log.run() else {
                    return Err(mount_bug(
                        dev,
                        log.pbn,
                        "a sequential log block out of place",
                    ));
                };
                for o in first..pages {
                    replay.push((log.seqs[o as usize], Replay::Supersede(lbn.lpn(o, ppb))));
                }
                seq_blocks.push((
                    log.min_seq,
                    SeqBlock {
                        pbn: log.pbn,
                        lbn,
                        first,
                        pages,
                    },
                ));
            }
        }
        Ok(seq_blocks)
    }

    /// Mount, step 4: the sequential log blocks take their slots oldest first, and open in that order.
    fn reopen_seq_blocks(&mut self, mut seq_blocks: Vec<(u32, SeqBlock)>) {
        seq_blocks.sort_unstable_by_key(|&(seq, _)| seq);
        for (i, (_, block)) in seq_blocks.into_iter().enumerate() {
            self.clock += 1;
            self.seq[i] = Some(block);
            self.seq_opened[i] = self.clock;
        }
    }

    /// Mount, step 5: the random log blocks take their slots oldest first and their appends go into the
    /// replay; returns each with its kind.
    fn reopen_random_logs(
        &mut self,
        dev: &Device,
        scan: &mut MountScan,
        replay: &mut Vec<(u32, Replay)>,
    ) -> Result<Vec<(Pbn, u32)>> {
        let ppb = self.ppb;
        scan.logs.sort_unstable_by_key(|l| l.0);
        let mut kinds = Vec::with_capacity(scan.logs.len());
        for (slot, &(_, pbn, kind, from, to)) in scan.logs.iter().enumerate() {
            self.log.open(slot as u32, pbn);
            kinds.push((pbn, kind));
            for &(lpn, seq, _) in &scan.log_pages[from..to] {
                if lpn.is_some_and(|lpn| self.data.pbn(lpn.lbn(ppb)).is_none()) {
                    return Err(mount_bug(
                        dev,
                        pbn,
                        "a log page of a logical block with no data block",
                    ));
                }
                replay.push((seq, Replay::Append(slot as u32, lpn)));
            }
        }
        Ok(kinds)
    }

    /// Mount, step 6: the sector map replayed in sequence order (module doc, "Mount").
    fn replay_sector_map(&mut self, mut replay: Vec<(u32, Replay)>) {
        replay.sort_unstable_by_key(|&(seq, _)| seq);
        for (_, event) in replay {
            match event {
                Replay::Append(slot, lpn) => self.log.append(slot, lpn),
                Replay::Merged(lbn) => self.log.merged(lbn),
                Replay::Supersede(lpn) => self.log.supersede(lpn),
            }
        }
    }

    /// Switches every full sequential log block into its data block (LAST at once, MAST when idle); returns
    /// how many.
    pub fn switch_full_seq(&mut self, dev: &mut Device) -> Result<u32> {
        let mut switched = 0;
        for i in 0..self.seq.len() {
            if self.seq[i].is_some_and(|s| s.first == 0 && s.pages == self.ppb) {
                self.reclaim_seq(i, None, dev)?;
                switched += 1;
            }
        }
        Ok(switched)
    }

    fn seq_index(&self, lbn: Lbn) -> Option<usize> {
        self.seq
            .iter()
            .position(|s| s.is_some_and(|s| s.lbn == lbn))
    }

    /// Reclaims sequential log block `i` (FAST §3.4): a switch when it is full and nothing is folded in; a
    /// full merge when the folded-in write (`incoming`: offset and token) falls among its pages, or when its
    /// run starts mid-block under the in-order (MLC) rule (the pages below it cannot be programmed after
    /// it); a partial merge otherwise. Every log page of its logical block becomes `Merged`. Returns the kind
    /// recorded.
    fn reclaim_seq(
        &mut self,
        i: usize,
        incoming: Option<(u32, Token)>,
        dev: &mut Device,
    ) -> Result<MergeKind> {
        let seq = self.seq[i].take().expect("a sequential log block");
        let ppb = self.ppb;
        dev.record_log_utilization(seq.pages - seq.first);
        let mark = dev.begin_merge();
        let held = seq.first..seq.pages;
        let folded_among = incoming.is_some_and(|(offset, _)| held.contains(&offset));
        let kind = if held == (0..ppb) && incoming.is_none() {
            merge::switch(dev, &mut self.pool, &mut self.data, seq.lbn, seq.pbn, ppb)?;
            MergeKind::Switch
        } else {
            self.find_sources(seq.lbn, Some(seq), incoming.map(|(o, _)| o), dev)?;
            match incoming {
                _ if folded_among || (seq.first > 0 && self.sequential_program) => {
                    merge::full_merge(
                        dev,
                        &mut self.pool,
                        &mut self.data,
                        seq.lbn,
                        &self.sources,
                        incoming,
                    )?;
                    dev.erase(seq.pbn)?;
                    self.pool.put(seq.pbn);
                    MergeKind::Full
                }
                _ => {
                    merge::partial_merge_around(
                        dev,
                        &mut self.pool,
                        &mut self.data,
                        seq.lbn,
                        seq.pbn,
                        held,
                        &self.sources,
                        incoming,
                    )?;
                    MergeKind::Partial
                }
            }
        };
        self.log.merged(seq.lbn);
        dev.end_merge(mark, kind);
        Ok(kind)
    }

    /// Fills `sources` with the newest copy of every page of `lbn`, whose sequential log block is `seq`
    /// (already taken out of its slot when it is being reclaimed), except offset `skip` (a host write folded
    /// into the merge). A page with no log copy comes from the data
    /// block if the data block's page holds it, which the controller learns by reading that page's spare area
    /// (one spare read per such offset, in offset order; FAST §3.4: the merge "selectively fills each empty
    /// sector ... with its corresponding sector in the data block"; PSU FlashSim counts these OOB reads). The
    /// sector map in RAM gives the log copies without a flash access. The sources' blocks are hinted to the
    /// CPU here, where they are known: the data block whole, the log copies one by one.
    fn find_sources(
        &mut self,
        lbn: Lbn,
        seq: Option<SeqBlock>,
        skip: Option<u32>,
        dev: &mut Device,
    ) -> Result<()> {
        let ppb = self.ppb;
        let seq = seq.or_else(|| self.seq_of(lbn));
        let data = self.data.pbn(lbn);
        if let Some(pbn) = data {
            dev.prefetch_block(pbn);
        }
        // The log copies of the whole block at once (no division per page), then the sequential block's run
        // over them.
        self.log.newest_of_block(lbn, &mut self.sources);
        let run = match seq {
            Some(s) if s.lbn == lbn => {
                for o in s.first..s.pages {
                    self.sources[o as usize] = Opt::some(dev.ppn(s.pbn, o));
                }
                s.first..s.pages
            }
            _ => 0..0,
        };
        if let Some(o) = skip {
            self.sources[o as usize] = Opt::NONE;
        }
        let Some(pbn) = data else {
            return Ok(());
        };
        // The offsets left come from the data block: its spare areas read a run of offsets at a time.
        let from_data = |o: u32, sources: &[Opt<Ppn>]| {
            skip != Some(o) && !run.contains(&o) && sources[o as usize].is_none()
        };
        let mut o = 0;
        while o < ppb {
            if !from_data(o, &self.sources) {
                if let Some(ppn) = self.sources[o as usize].get() {
                    dev.prefetch(ppn);
                }
                o += 1;
                continue;
            }
            // The run of offsets from the data block ends at the next one with a log copy, at the sequential
            // block's run or at the skipped offset.
            let start = o;
            let mut end = ppb;
            if start < run.start {
                end = end.min(run.start);
            }
            if let Some(s) = skip.filter(|&s| s > start) {
                end = end.min(s);
            }
            o = start + first_some(&self.sources[start as usize..end as usize]) as u32;
            let lpns = &mut self.spare_lpns[start as usize..o as usize];
            dev.read_spare_lpns(pbn, start..o, lpns)?;
            for (offset, &held) in (start..o).zip(lpns.iter()) {
                let holds = held == Opt::some(lbn.lpn(offset, ppb));
                // A data block holds its own pages in place.
                debug_assert!(holds || held.is_none());
                self.sources[offset as usize] = if holds {
                    Opt::some(dev.ppn(pbn, offset))
                } else {
                    Opt::NONE
                };
            }
        }
        Ok(())
    }

    /// Replaces random log slot `victim` (FAST §3.4, §3.6): a full merge of each logical block with a page
    /// in it that is not `Merged` (`eager`, FAST) or that is `Live` (lazy, O-FAST), every page from its
    /// newest copy; then the victim's erase, counted in the last merge (as FAST Fig. 8 counts it). With no
    /// logical block to merge the victim is only erased (a dead merge: one erase, no copy). Returns the
    /// number of logical blocks merged.
    pub fn merge_victim(&mut self, dev: &mut Device, victim: u32, eager: bool) -> Result<u32> {
        let mut lbns = std::mem::take(&mut self.lbns);
        if eager {
            self.log.valid_lbns(victim, &mut lbns);
        } else {
            self.log.live_lbns(victim, &mut lbns);
        }
        let merged = self.merge_lbns_and_erase(dev, &lbns, victim);
        self.lbns = lbns;
        merged
    }

    fn merge_lbns_and_erase(&mut self, dev: &mut Device, lbns: &[Lbn], victim: u32) -> Result<u32> {
        dev.record_log_utilization(self.log.written(victim));
        if lbns.is_empty() {
            let mark = dev.begin_merge();
            self.erase_victim(dev, victim)?;
            dev.end_merge(mark, MergeKind::Dead);
            return Ok(0);
        }
        for (i, &lbn) in lbns.iter().enumerate() {
            let mark = dev.begin_merge();
            self.find_sources(lbn, None, None, dev)?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_in_place_supersedes_a_log_copy_left_by_a_merge_that_dropped_a_torn_page() {
        // Found by the torn-page crash test (ofast, power.rs seed 8107793247754640076): logical block 0's data block holds pages 0
        // and 1 and a torn write of page 2 (taken, empty). The next write of page 2 finds its offset taken;
        // the RW merge that makes room copies pages 0 and 1 only, then the write lands in the RW block
        // (token 20). The write after it (token 21) fits in place in the new data block and is the newest:
        // reads and the next merge must take it, not the log copy.
        let mut dev = Device::toy(6);
        let g = *dev.geometry();
        let mut hb = HybridBlocks::new(&g, 1, 1, 6);
        for lpn in 0..2 {
            assert!(hb
                .write_in_place(Lpn(lpn), 10 + lpn as u64, &mut dev)
                .unwrap());
        }
        dev.set_torn_pages(true);
        dev.arm_power_cut(Some(1));
        assert!(hb.write_in_place(Lpn(2), 12, &mut dev).is_err());
        hb.mount(&mut dev, 6).unwrap();
        assert!(!hb.write_in_place(Lpn(2), 20, &mut dev).unwrap());
        let pbn = hb.pool.take().unwrap();
        hb.log.open(0, pbn);
        hb.append_random(0, Lpn(1), 11, 0, &mut dev).unwrap();
        assert_eq!(hb.merge_victim(&mut dev, 0, true).unwrap(), 1);
        let pbn = hb.pool.take().unwrap();
        hb.log.open(0, pbn);
        hb.append_random(0, Lpn(2), 20, 0, &mut dev).unwrap();
        assert!(hb.write_in_place(Lpn(2), 21, &mut dev).unwrap());
        assert_eq!(hb.read(Lpn(2), &mut dev).unwrap(), Some(21));
        // O-FAST's lazy merge has nothing live to merge in the RW block; FAST merges the block and copies 21.
        assert_eq!(hb.merge_victim(&mut dev, 0, false).unwrap(), 0);
        assert_eq!(hb.read(Lpn(2), &mut dev).unwrap(), Some(21));
        hb.mount(&mut dev, 6).unwrap();
        let tokens: Vec<_> = (0..4).map(|l| hb.read(Lpn(l), &mut dev).unwrap()).collect();
        assert_eq!(tokens, vec![Some(10), Some(11), Some(21), None]);
    }
}
