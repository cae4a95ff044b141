//! The boot scan of a scheme that keeps its map only in RAM: after a power cut the controller reads the
//! spare areas of the chip's pages to find which logical page each holds and how new it is (FAST paper §3.2:
//! the sector map "can be rebuilt at boot from the spare areas"; TinyFTL paper §V.D). Every read here is a
//! counted spare read: the mount's cost.

use crate::addr::{Pbn, Ppn};
use crate::device::Device;
use crate::error::{Result, SimError};
use crate::nand::Spare;

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
    pub lbn: u32,
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
    /// The logical page of each programmed page, in page order (a log block's appends).
    pub lpns: Vec<u32>,
}

impl InPlace {
    /// The block `pbn` whose programmed pages (offset, spare area; from [`scan_block`] with
    /// [`Extent::EveryPage`]: in-place blocks have holes) are `pages`, if they all hold pages of one logical
    /// block at their own offsets, or (`appended`: BAST's log blocks) are tagged with `tag` and were appended
    /// from the block's first page on.
    pub fn from_pages(
        pbn: Pbn,
        pages: &[(u32, Spare)],
        ppb: u32,
        tag: u32,
        appended: bool,
    ) -> Option<InPlace> {
        let lbn = pages.first()?.1.lpn / ppb;
        if pages.iter().any(|&(_, s)| s.lpn / ppb != lbn) {
            return None;
        }
        let tagged = pages.iter().all(|&(_, s)| s.aux == tag);
        let in_place = pages.iter().all(|&(o, s)| s.lpn % ppb == o);
        let from_first = pages.iter().enumerate().all(|(i, &(o, _))| o == i as u32);
        if !(in_place || appended && tagged && from_first) {
            return None;
        }
        let (mut seqs, mut at) = (vec![0; ppb as usize], vec![0; ppb as usize]);
        for &(o, s) in pages {
            let offset = (s.lpn % ppb) as usize;
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
            min_seq: pages.iter().map(|&(_, s)| s.seq).min()?,
            max_seq: pages.iter().map(|&(_, s)| s.seq).max()?,
            born: pages
                .iter()
                .filter(|&&(_, s)| s.aux != tag)
                .map(|&(_, s)| s.seq)
                .min()
                .unwrap_or(0),
            tagged_end: pages
                .iter()
                .filter(|&&(_, s)| s.aux == tag)
                .map(|&(_, s)| s.seq)
                .max()
                .unwrap_or(0),
            lpns: pages.iter().map(|&(_, s)| s.lpn).collect(),
        })
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

    /// Shaped as a log block: tagged, and a run in place or appended.
    fn log_shaped(&self) -> bool {
        self.tagged && (!self.in_place || self.run().is_some())
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
/// are programmed.
pub fn finish_merge(
    dev: &mut Device,
    group: &[InPlace],
    roles: &Roles,
    freed: &mut Vec<Pbn>,
    mut elsewhere: impl FnMut(u32) -> Option<(u32, Ppn)>,
) -> Result<Vec<bool>> {
    let data = &group[roles.data];
    let ppb = data.seqs.len() as u32;
    let mut programmed: Vec<bool> = (0..ppb)
        .map(|o| data.in_place && data.seqs[o as usize] != 0)
        .collect();
    if roles.old.is_empty() {
        return Ok(programmed);
    }
    for o in 0..ppb {
        if programmed[o as usize] {
            continue;
        }
        let lpn = data.lbn * ppb + o;
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
            programmed[o as usize] = true;
        }
    }
    for &i in &roles.old {
        dev.erase(group[i].pbn)?;
        freed.push(group[i].pbn);
    }
    Ok(programmed)
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
pub fn mount_bug(dev: &Device, pbn: Pbn, what: &str) -> SimError {
    SimError::Mount {
        scheme: dev.scheme().to_string(),
        what: format!("{what} (block {})", pbn.0),
    }
}
