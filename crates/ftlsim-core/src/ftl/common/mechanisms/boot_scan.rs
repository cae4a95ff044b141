//! The boot scan of a scheme that keeps its map only in RAM: after a power cut the controller reads the
//! spare areas of the chip's pages to find which logical page each holds and how new it is (FAST paper §3.2:
//! the sector map "can be rebuilt at boot from the spare areas"; TinyFTL paper §V.D). Every read here is a
//! counted spare read: the mount's cost.
//!
//! Torn pages ([`settle_torn`]): a torn page in a data block is a copy of a merge the cut
//! interrupted only if a block that merge replaces is still there holding an untagged page or a page the
//! data block lacks (the old data block is erased last, and it holds every page the merge copies); else it
//! is a host write in place, its offset taken and empty. Not its sequence number: a merge's copies are
//! consecutive programs, but a write in place right after an idle-time merge is the next program too.
//! BAST's log blocks keep a torn page, and the erased pages a partial merge skipped before it, as holes.

use crate::addr::{Lbn, Lpn, Opt, Pbn, Ppn};
use crate::device::Device;
use crate::device::{FlashError, Result};
use crate::ftl::common::structures::bitmap::Bitmap;
use crate::nand::Spare;

/// A torn page (`torn_pages`: a program cut by the power loss): programmed, so it cannot be
/// programmed again until its block is erased, but uncorrectable: no logical page in its spare area. Every
/// page the log-block schemes program holds a logical page, so that is how their mounts tell one.
pub fn is_torn(spare: &Spare) -> bool {
    spare.seq != 0 && spare.lpn.is_none()
}

/// How far into a block the scan reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Extent {
    /// Pages are programmed in order: stop at the first erased page (it and every page after it are erased).
    UpToFirstErased,
    /// Pages are programmed at their offsets, with holes: read every page.
    EveryPage,
}

/// Reads the spare areas of block `pbn` and calls `page(offset, spare)` for every programmed page; returns how
/// many pages are programmed.
pub fn scan_block(
    dev: &mut Device,
    pbn: Pbn,
    extent: Extent,
    mut page: impl FnMut(u32, Ppn, Spare),
) -> Result<u32> {
    let ppb = dev.geometry().pages_per_block;
    let mut programmed = 0;
    for offset in 0..ppb {
        let ppn = dev.ppn(pbn, offset);
        let spare = dev.read_spare(ppn)?;
        if spare.seq == 0 {
            if extent == Extent::UpToFirstErased {
                break;
            }
            continue;
        }
        programmed += 1;
        page(offset, ppn, spare);
    }
    Ok(programmed)
}

/// A block of a log-block scheme that holds pages of one logical block only, as the boot scan finds it: a
/// data block, a sequential log block (FAST's SW block), BAST's log block, or the target of a merge the cut
/// interrupted.
#[derive(Clone, Debug)]
pub struct InPlace {
    pub pbn: Pbn,
    pub lbn: Lbn,
    /// Sequence number of the block's newest copy of each offset of the logical block, 0 where it has none.
    pub seqs: Vec<u32>,
    /// The page of the block holding that copy (the offset itself when pages are in place).
    pub at: Vec<u32>,
    /// Every page carries the log block's tag in its spare area.
    pub tagged: bool,
    /// Every page sits at its own offset.
    pub in_place: bool,
    pub min_seq: u32,
    pub max_seq: u32,
    /// Sequence number of the first untagged page (when the block became a data block), 0 if none.
    pub born: u32,
    /// Sequence number of the last tagged page, 0 if none.
    pub tagged_end: u32,
    /// The logical page of each page up to the last programmed one, in page order (a log block's appends),
    /// none for a torn page and for an erased one below it (a hole a partial merge left, [`settle_torn`]).
    pub lpns: Vec<Opt<Lpn>>,
    /// The pages of the block that are torn ([`is_torn`]): programmed, holding nothing.
    pub torn: Vec<u32>,
}

impl InPlace {
    /// The block `pbn` whose programmed pages (offset, spare area; from [`scan_block`] with
    /// [`Extent::EveryPage`]: in-place blocks have holes) are `pages`, if they all hold pages of one logical
    /// block at their own offsets, or (`appended`: BAST's log blocks) are tagged with `tag` and were appended
    /// from the block's first page on (erased pages only before a torn one). Torn pages take their place and
    /// hold nothing; a block with nothing but torn pages is None (the caller erases it).
    pub fn from_pages(
        pbn: Pbn,
        pages: &[(u32, Spare)],
        ppb: u32,
        tag: u32,
        appended: bool,
    ) -> Option<InPlace> {
        // Appended from the first page on, but for the erased pages before a torn one: the offsets a partial
        // merge into the block had nothing to copy into, before the copy the cut tore.
        let mut next = 0;
        let from_first = pages.iter().all(|&(o, s)| {
            let appended = o == next || o > next && is_torn(&s);
            next = o + 1;
            appended
        });
        let torn: Vec<u32> = pages
            .iter()
            .filter(|(_, s)| is_torn(s))
            .map(|&(o, _)| o)
            .collect();
        let mut lpns = vec![Opt::NONE; pages.last().map_or(0, |&(o, _)| o as usize + 1)];
        for &(o, s) in pages {
            lpns[o as usize] = s.lpn;
        }
        // The pages that are not torn, each with the logical page it holds.
        let pages: Vec<(u32, Lpn, Spare)> = pages
            .iter()
            .filter_map(|&(o, s)| Some((o, s.lpn()?, s)))
            .collect();
        let lbn = pages.first()?.1.lbn(ppb);
        if pages.iter().any(|&(_, l, _)| l.lbn(ppb) != lbn) {
            return None;
        }
        let tagged = pages.iter().all(|&(_, _, s)| s.aux() == Some(tag));
        let in_place = pages.iter().all(|&(o, l, _)| l.offset(ppb) == o);
        if !(in_place || appended && tagged && from_first) {
            return None;
        }
        let (mut seqs, mut at) = (vec![0; ppb as usize], vec![0; ppb as usize]);
        for &(o, l, s) in &pages {
            let offset = l.offset(ppb) as usize;
            if s.seq > seqs[offset] {
                seqs[offset] = s.seq;
                at[offset] = o;
            }
        }
        Some(InPlace {
            pbn,
            lbn,
            seqs,
            at,
            tagged,
            in_place,
            min_seq: pages.iter().map(|&(_, _, s)| s.seq).min()?,
            max_seq: pages.iter().map(|&(_, _, s)| s.seq).max()?,
            born: pages
                .iter()
                .filter(|&&(_, _, s)| s.aux() != Some(tag))
                .map(|&(_, _, s)| s.seq)
                .min()
                .unwrap_or(0),
            tagged_end: pages
                .iter()
                .filter(|&&(_, _, s)| s.aux() == Some(tag))
                .map(|&(_, _, s)| s.seq)
                .max()
                .unwrap_or(0),
            lpns,
            torn,
        })
    }

    /// The empty block `pbn` as the target of a merge the mount redoes for `lbn` ([`settle_torn`]): what it
    /// will hold is newer than every page found.
    fn target(pbn: Pbn, lbn: Lbn, ppb: u32) -> InPlace {
        InPlace {
            pbn,
            lbn,
            seqs: vec![0; ppb as usize],
            at: vec![0; ppb as usize],
            tagged: false,
            in_place: true,
            min_seq: u32::MAX,
            max_seq: u32::MAX,
            born: u32::MAX,
            tagged_end: 0,
            lpns: Vec::new(),
            torn: Vec::new(),
        }
    }

    /// The programmed offsets of a block in place, if they are one run `first..end`.
    pub fn run(&self) -> Option<(u32, u32)> {
        if !self.in_place {
            return None;
        }
        let first = self.seqs.iter().position(|&s| s != 0)? as u32;
        let end = self.seqs.iter().rposition(|&s| s != 0)? as u32 + 1;
        self.seqs[first as usize..end as usize]
            .iter()
            .all(|&s| s != 0)
            .then_some((first, end))
    }

    /// Shaped as a log block: tagged, and a run in place or appended (a torn page breaks a run: an append
    /// went past it).
    fn log_shaped(&self) -> bool {
        self.tagged && (!self.in_place || !self.torn.is_empty() || self.run().is_some())
    }
}

/// The roles a mount gives the in-place blocks of one logical block (indices into its group).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Roles {
    /// The data block (it may be the target of an interrupted merge, to be completed).
    pub data: usize,
    /// The live sequential log block, if any.
    pub log: Option<usize>,
    /// Blocks a merge was replacing: sources to complete the data block with, then erased.
    pub old: Vec<usize>,
}

/// Gives roles to the blocks of one logical block, `group` sorted by first program (oldest first).
///
/// Where a cut leaves them, a logical block has a data block, at most one log block (every page tagged: a
/// run in place for FAST's SW block, appended for BAST's) and, while a merge is under way, the block(s) it
/// replaces besides its target. A block with an untagged page became a data block when its first untagged
/// page was programmed (a host write in place, a merge's first copy, a partial merge's first fill), so the
/// data block is the one whose first untagged page is the newest; the other untagged blocks are being
/// replaced. The newest tagged block is the live log block if it was opened after the data block became
/// one: after its last tagged page when it has some (a log block turned data block), else after its first
/// untagged page, or if it was appended to since (an RW victim's merge copied it without consuming it, FAST
/// §3.4); otherwise it, like every other tagged block, is being replaced (an old data block that a switch
/// made, or a log block a full merge is consuming). A merge target that was opened before any copy is
/// erased and free. With no untagged block the older of at most two tagged blocks is the data block (a
/// switched log block) and the newer the log block (a pending switch reads the same either way). None: a
/// state the write path never leaves.
pub fn resolve(group: &[InPlace]) -> Option<Roles> {
    let Some(data) = (0..group.len())
        .filter(|&i| !group[i].tagged)
        .max_by_key(|&i| group[i].born)
    else {
        return match group.len() {
            1 if group[0].in_place => Some(Roles {
                data: 0,
                log: None,
                old: Vec::new(),
            }),
            2 if group[0].in_place && group[1].log_shaped() => Some(Roles {
                data: 0,
                log: Some(1),
                old: Vec::new(),
            }),
            _ => None,
        };
    };
    let x = &group[data];
    let log = (0..group.len())
        .filter(|&i| group[i].log_shaped())
        .max_by_key(|&i| group[i].min_seq)
        .filter(|&i| {
            let a = &group[i];
            if x.tagged_end != 0 {
                a.min_seq > x.tagged_end
            } else {
                a.max_seq > x.born
            }
        });
    Some(Roles {
        data,
        log,
        old: (0..group.len())
            .filter(|&i| i != data && Some(i) != log)
            .collect(),
    })
}

/// Finishes the merge a cut interrupted in `group` (when `roles.old` is not empty): every offset the data
/// block misses gets, in offset order, a copy of the newest copy of its page (highest sequence number) among
/// the replaced blocks, the log block and `elsewhere(lpn)` (a scheme's random log pages: sequence number and
/// page); then the replaced blocks are erased and pushed to `freed`. Returns which offsets of the data block
/// are programmed (a bit an offset).
pub fn finish_merge(
    dev: &mut Device,
    group: &[InPlace],
    roles: &Roles,
    freed: &mut Vec<Pbn>,
    mut elsewhere: impl FnMut(Lpn) -> Option<(u32, Ppn)>,
) -> Result<Bitmap> {
    let data = &group[roles.data];
    let ppb = data.seqs.len() as u32;
    let mut programmed = Bitmap::new(ppb as usize);
    if data.in_place {
        for (o, _) in data.seqs.iter().enumerate().filter(|&(_, &s)| s != 0) {
            programmed.set(o);
        }
    }
    if roles.old.is_empty() {
        return Ok(programmed);
    }
    for o in 0..ppb {
        // A torn offset is programmed: taken, holding nothing ([`settle_torn`]).
        if programmed.get(o as usize) || data.torn.contains(&o) {
            continue;
        }
        let lpn = data.lbn.lpn(o, ppb);
        let newest = roles
            .old
            .iter()
            .chain(roles.log.iter())
            .map(|&i| &group[i])
            .filter(|b| b.seqs[o as usize] != 0)
            .map(|b| (b.seqs[o as usize], dev.ppn(b.pbn, b.at[o as usize])))
            .chain(elsewhere(lpn))
            .max_by_key(|&(seq, _)| seq);
        if let Some((_, from)) = newest {
            dev.copy(from, dev.ppn(data.pbn, o))?;
            programmed.set(o as usize);
        }
    }
    for &i in &roles.old {
        dev.erase(group[i].pbn)?;
        freed.push(group[i].pbn);
    }
    Ok(programmed)
}

/// The roles of `group`'s blocks (one logical block's, sorted as for [`resolve`]) once its torn pages are
/// settled (a write in flight at a power cut reads back old or new, never anything else):
/// - a torn page in the data block is a merge's copy cut by the power loss only while the merge is unfinished,
///   which the blocks it replaces tell ([`merge_cut`]: one holds an untagged page or a page the data block
///   lacks); otherwise it is a host write in place cut (also into a finished merge's target while the
///   sequential log block that merge copied is still there): its offset held nothing before (a page goes to a
///   log block only when its offset in the data block is taken), so it stays taken and reads as nothing;
///   the caller marks it programmed and [`finish_merge`] copies nothing into it;
/// - a torn copy in the target of a full merge (a data block with no tagged page) means the merge did not
///   finish: every page it copied is still in its sources, so the target is erased (pushed to `freed`) and
///   the rest get their roles again, as after a cut before the first copy;
/// - a torn copy in a partial merge's target (a log block taking copies, which holds data of its own), or,
///   unless `appended_logs`, a torn page in a sequential log block (an append, or a partial merge's first
///   copy, cut), leaves a block that can neither be finished nor appended to at its next offset: the merge
///   is redone into a free block taken from `freed` (the last roles hold it as the data block, every other
///   block as replaced; [`finish_merge`] copies the newest copy of each page into it and erases the rest).
///   BAST's log blocks (`appended_logs`) keep a torn page as a hole of their appends instead, and the
///   erased pages before it too (a partial merge's first copy lands past the offsets it has nothing for).
pub fn settle_torn(
    dev: &mut Device,
    group: &mut Vec<InPlace>,
    appended_logs: bool,
    freed: &mut Vec<Pbn>,
) -> Result<Roles> {
    loop {
        let roles = resolve_or_bug(dev, group)?;
        let data = &group[roles.data];
        let interrupted = merge_cut(group, &roles);
        if interrupted && data.tagged_end == 0 {
            dev.erase(data.pbn)?;
            freed.push(data.pbn);
            group.remove(roles.data);
            continue;
        }
        let torn_log = roles
            .log
            .is_some_and(|i| !appended_logs && !group[i].torn.is_empty());
        if !(interrupted || torn_log) {
            return Ok(roles);
        }
        let Some(target) = freed.pop() else {
            return Err(mount_bug(
                dev,
                data.pbn,
                "no erased block to redo the merge a torn page interrupted",
            ));
        };
        let (lbn, ppb) = (data.lbn, data.seqs.len() as u32);
        group.push(InPlace::target(target, lbn, ppb));
        return Ok(Roles {
            data: group.len() - 1,
            log: None,
            old: (0..group.len() - 1).collect(),
        });
    }
}

/// Whether a torn page of `group`'s data block (with `roles`) is a merge copy the cut tore, rather than a host
/// write in place. A merge erases the blocks it replaces only after its last copy, so while it is unfinished
/// the old data block is among them, and it holds (or has torn) every offset the merge found a source for,
/// the torn copy's included: its untagged pages say so, or, when every page it holds is tagged (a log block
/// made the data block by a switch, or by a partial merge with nothing to fill), the writes to offsets it
/// lacked went into it in place. A finished merge leaves only a sequential log block it copied without
/// consuming (FAST §3.4's RW victim merge; its pages tagged, all held by the data block), and a torn page
/// there is a later write in place. The sequence numbers cannot tell the two apart: a merge's copies are
/// consecutive programs, but so is a write in place right after a merge (MAST's idle-time merges).
fn merge_cut(group: &[InPlace], roles: &Roles) -> bool {
    let data = &group[roles.data];
    !data.torn.is_empty()
        && roles.old.iter().any(|&i| {
            let b = &group[i];
            let holds = |o: u32| b.seqs[o as usize] != 0 || b.in_place && b.torn.contains(&o);
            !b.tagged || (0..data.seqs.len() as u32).any(|o| holds(o) && data.seqs[o as usize] == 0)
        })
}

/// [`resolve`] for a mount: the roles of `group`'s blocks, or the mount error naming its first block.
pub fn resolve_or_bug(dev: &Device, group: &[InPlace]) -> Result<Roles> {
    resolve(group).ok_or_else(|| {
        mount_bug(
            dev,
            group[0].pbn,
            "more blocks of one logical block than a merge leaves",
        )
    })
}

/// The error of a mount that finds, at block `pbn`, a state the scheme's writes never leave.
pub fn mount_bug(dev: &Device, pbn: Pbn, what: &str) -> FlashError {
    FlashError::Mount {
        scheme: dev.scheme().to_string(),
        what: format!("{what} (block {})", pbn.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ftl::common::mechanisms::seq_logs::SEQ_LOG_AUX;
    use crate::nand::OpClass;

    const UNTAGGED: Option<u32> = None;

    /// Programs `lpn` (token `100 + 10 x pbn + lpn`) at `offset` of `pbn` with scheme word `aux`.
    fn put(dev: &mut Device, pbn: u32, offset: u32, lpn: u32, aux: Option<u32>) {
        let ppn = dev.ppn(Pbn(pbn), offset);
        let token = (100 + 10 * pbn + lpn) as u64;
        dev.program_with_aux_in(OpClass::Data, ppn, token, Some(Lpn(lpn)), aux)
            .unwrap();
    }

    /// A program of `offset` of `pbn` cut by the power loss: the page is torn.
    fn tear(dev: &mut Device, pbn: u32, offset: u32) {
        dev.set_torn_pages(true);
        dev.arm_power_cut(Some(1));
        let ppn = dev.ppn(Pbn(pbn), offset);
        assert!(dev.program(ppn, 1, Lpn(0)).is_err());
        assert!(is_torn(&dev.read_spare(ppn).unwrap()));
    }

    /// The blocks of logical block 0 among `pbns` as a mount's scan finds them, oldest first.
    fn group(dev: &mut Device, pbns: &[u32], appended: bool) -> Vec<InPlace> {
        let mut found = Vec::new();
        for &pbn in pbns {
            let mut pages = Vec::new();
            scan_block(dev, Pbn(pbn), Extent::EveryPage, |o, _, s| {
                pages.push((o, s))
            })
            .unwrap();
            found.push(InPlace::from_pages(Pbn(pbn), &pages, 4, SEQ_LOG_AUX, appended).unwrap());
        }
        found.sort_by_key(|b| b.min_seq);
        found
    }

    /// Data block 0 holds logical pages 0-3; block 2 is logical block 0's sequential log block, holding
    /// pages 0 and 1 again (tagged).
    fn data_and_log() -> Device {
        let mut dev = Device::toy(4);
        for o in 0..4 {
            put(&mut dev, 0, o, o, UNTAGGED);
        }
        put(&mut dev, 2, 0, 0, Some(SEQ_LOG_AUX));
        put(&mut dev, 2, 1, 1, Some(SEQ_LOG_AUX));
        dev
    }

    #[test]
    fn a_full_merge_whose_target_is_torn_is_undone() {
        // FAST case 2.3 into block 1: page 0 copied from the log block, the copy of page 1 torn. The target
        // is erased (1 erase); the data block and the log block keep their roles, nothing is copied.
        let mut dev = data_and_log();
        dev.copy(dev.ppn(Pbn(2), 0), dev.ppn(Pbn(1), 0)).unwrap();
        tear(&mut dev, 1, 1);
        let mut g = group(&mut dev, &[0, 1, 2], false);
        let before = dev.counts();
        let mut freed = Vec::new();
        let roles = settle_torn(&mut dev, &mut g, false, &mut freed).unwrap();
        let pbn = |i: usize| g[i].pbn.0;
        assert_eq!((pbn(roles.data), roles.log.map(pbn)), (0, Some(2)));
        assert!(roles.old.is_empty());
        assert_eq!(freed, vec![Pbn(1)]);
        let cost = dev.counts().minus(&before);
        assert_eq!((cost.erases, cost.page_writes), (1, 0));
    }

    #[test]
    fn a_torn_append_to_a_sequential_log_block_redoes_its_merge_into_a_free_block() {
        // The append of page 2 to the log block is torn: FAST's SW block cannot take offset 2 again. Block 3
        // (free) becomes the data block: pages 0, 1 from the log block, 2, 3 from the data block (4 reads, 4
        // programs), then blocks 0 and 2 are erased.
        let mut dev = data_and_log();
        tear(&mut dev, 2, 2);
        let mut g = group(&mut dev, &[0, 2], false);
        let mut freed = vec![Pbn(3)];
        let roles = settle_torn(&mut dev, &mut g, false, &mut freed).unwrap();
        assert_eq!(
            (g[roles.data].pbn, roles.log, roles.old.len()),
            (Pbn(3), None, 2)
        );
        let before = dev.counts();
        let programmed = finish_merge(&mut dev, &g, &roles, &mut freed, |_| None).unwrap();
        assert_eq!(programmed.iter_ones().collect::<Vec<_>>(), vec![0, 1, 2, 3]);
        let cost = dev.counts().minus(&before);
        assert_eq!((cost.page_reads, cost.page_writes, cost.erases), (4, 4, 2));
        assert_eq!(freed, vec![Pbn(0), Pbn(2)]);
        // Pages 0 and 1 come from the log block (tokens 120, 121: newer), 2 and 3 from the data block.
        let tokens: Vec<_> = (0..4)
            .map(|o| dev.read(dev.ppn(Pbn(3), o)).unwrap().token)
            .collect();
        assert_eq!(tokens, vec![Some(120), Some(121), Some(102), Some(103)]);
        let seqs: Vec<_> = (0..4)
            .map(|o| dev.chip().peek(dev.ppn(Pbn(2), o)).spare.seq)
            .collect();
        assert_eq!(seqs, vec![0; 4], "the log block is erased");
    }

    #[test]
    fn a_torn_append_to_a_bast_log_block_is_a_hole() {
        // BAST appends: the torn page is the block's third append, holding nothing; no flash operation.
        let mut dev = data_and_log();
        tear(&mut dev, 2, 2);
        let mut g = group(&mut dev, &[0, 2], true);
        let before = dev.counts();
        let roles = settle_torn(&mut dev, &mut g, true, &mut Vec::new()).unwrap();
        assert_eq!((roles.data, roles.log, roles.old.len()), (0, Some(1), 0));
        assert_eq!(
            g[1].lpns,
            vec![Opt::some(Lpn(0)), Opt::some(Lpn(1)), Opt::NONE]
        );
        assert_eq!(g[1].torn, vec![2]);
        assert_eq!(dev.counts().minus(&before).erases, 0);
    }

    #[test]
    fn a_partial_merge_whose_target_is_torn_is_redone_and_a_torn_write_in_place_stays() {
        // FAST Fig. 7a into the log block: page 2 copied from the data block, the copy of page 3 torn. The
        // log block is now the newest data block, its merge unfinished and unfinishable: redone into block 3.
        let mut dev = data_and_log();
        dev.copy(dev.ppn(Pbn(0), 2), dev.ppn(Pbn(2), 2)).unwrap();
        tear(&mut dev, 2, 3);
        let mut g = group(&mut dev, &[0, 2], false);
        let roles = settle_torn(&mut dev, &mut g, false, &mut vec![Pbn(3)]).unwrap();
        assert_eq!((g[roles.data].pbn, roles.old.len()), (Pbn(3), 2));
        // A data block alone with a torn write in place at offset 1: its role stands, offset 1 is torn.
        let mut dev = Device::toy(4);
        put(&mut dev, 0, 0, 0, UNTAGGED);
        tear(&mut dev, 0, 1);
        let mut g = group(&mut dev, &[0], false);
        let roles = settle_torn(&mut dev, &mut g, false, &mut Vec::new()).unwrap();
        assert_eq!(
            (roles.data, roles.log, g[0].torn.clone()),
            (0, None, vec![1])
        );
    }

    #[test]
    fn a_torn_write_in_place_into_a_finished_merges_target_keeps_the_target() {
        // FAST §3.4's RW victim merge copied pages 0 and 1 from the SW block (2) and page 2 from an RW block
        // into block 1 (seqs 7-9), erased the data block and the victim, and left the SW block live; the
        // next program, a host write in place at offset 3, is torn (seq 10: right after the copies, as
        // after MAST's idle-time merges). Block 1 stays the data block; the SW block, all of whose pages it
        // holds, is replaced: 1 erase, no copy, though the RW page of logical page 3 offered for it (the
        // torn offset is taken).
        let mut dev = Device::toy(4);
        for o in 0..4 {
            put(&mut dev, 0, o, o, UNTAGGED);
        }
        put(&mut dev, 2, 0, 0, Some(SEQ_LOG_AUX));
        put(&mut dev, 2, 1, 1, Some(SEQ_LOG_AUX));
        for o in 0..2 {
            dev.copy(dev.ppn(Pbn(2), o), dev.ppn(Pbn(1), o)).unwrap();
        }
        dev.copy(dev.ppn(Pbn(0), 2), dev.ppn(Pbn(1), 2)).unwrap();
        dev.erase(Pbn(0)).unwrap();
        tear(&mut dev, 1, 3);
        let mut g = group(&mut dev, &[1, 2], false);
        assert_eq!(
            (
                g[1].pbn,
                g[1].max_seq,
                dev.chip().peek(dev.ppn(Pbn(1), 3)).spare.seq
            ),
            (Pbn(1), 9, 10)
        );
        let mut freed = Vec::new();
        let roles = settle_torn(&mut dev, &mut g, false, &mut freed).unwrap();
        assert_eq!(
            (g[roles.data].pbn, roles.log, roles.old.clone()),
            (Pbn(1), None, vec![0])
        );
        assert!(freed.is_empty());
        put(&mut dev, 3, 0, 3, Some(SEQ_LOG_AUX + 1));
        let rw_page = dev.ppn(Pbn(3), 0);
        let before = dev.counts();
        let programmed =
            finish_merge(&mut dev, &g, &roles, &mut freed, |_| Some((1, rw_page))).unwrap();
        assert_eq!(programmed.len(), 4);
        assert_eq!(programmed.iter_ones().collect::<Vec<_>>(), vec![0, 1, 2]);
        let cost = dev.counts().minus(&before);
        assert_eq!((cost.page_writes, cost.erases), (0, 1));
        assert_eq!(freed, vec![Pbn(2)]);
    }

    #[test]
    fn a_bast_log_block_holds_the_erased_pages_before_a_torn_one_as_holes() {
        // BAST's partial merge of a log block holding offset 0 found nothing for offset 1 and tore its copy
        // into offset 2; an append after the mount went to page 3 (logical page 2, out of place). Pages 1
        // and 2 are holes: the block's appends are 4 pages.
        let spare = |lpn: u32, seq: u32| Spare {
            lpn: Opt::some(Lpn(lpn)),
            seq,
            aux: Opt::some(SEQ_LOG_AUX),
            ..Spare::ERASED
        };
        let torn = Spare {
            lpn: Opt::NONE,
            seq: 3,
            ..Spare::ERASED
        };
        let pages = [(0, spare(0, 1)), (2, torn), (3, spare(2, 4))];
        let b = InPlace::from_pages(Pbn(5), &pages, 4, SEQ_LOG_AUX, true).unwrap();
        let hole = Opt::NONE;
        assert_eq!(
            b.lpns,
            vec![Opt::some(Lpn(0)), hole, hole, Opt::some(Lpn(2))]
        );
        assert_eq!(
            (b.torn.clone(), b.in_place, b.tagged),
            (vec![2], false, true)
        );
        // An erased page before a page that is not torn: no append order.
        let pages = [(0, spare(1, 1)), (2, spare(0, 2))];
        assert!(InPlace::from_pages(Pbn(5), &pages, 4, SEQ_LOG_AUX, true).is_none());
    }
}
