//! The boot scan of a scheme that keeps its map only in RAM: after a power cut the controller reads the
//! spare areas of the chip's pages to find which logical page each holds and how new it is (FAST paper §3.2:
//! the sector map "can be rebuilt at boot from the spare areas"; TinyFTL paper §V.D). Every read here is a
//! counted spare read: the mount's cost.

use crate::addr::{Pbn, Ppn};
use crate::device::Device;
use crate::error::Result;
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

/// A block of a log-block scheme whose pages hold one logical block's pages at their own offsets, as the
/// boot scan finds it: a data block, a sequential log block (FAST's SW block) or the target of a merge the
/// cut interrupted.
#[derive(Clone, Debug)]
pub struct InPlace {
    pub pbn: Pbn,
    pub lbn: u32,
    /// Sequence number of each offset's page, 0 where the page is erased.
    pub seqs: Vec<u32>,
    /// Every page carries the sequential log block's tag in its spare area.
    pub tagged: bool,
}

impl InPlace {
    /// The block `pbn` whose programmed pages (offset, spare area; from [`scan_block`] with
    /// [`Extent::EveryPage`]: in-place blocks have holes) are `pages`, if they all hold their own offset of
    /// one logical block; `tag` is the sequential log block's scheme word.
    pub fn from_pages(pbn: Pbn, pages: &[(u32, Spare)], ppb: u32, tag: u32) -> Option<InPlace> {
        let lbn = pages.first()?.1.lpn / ppb;
        if pages.iter().any(|&(o, s)| s.lpn != lbn * ppb + o) {
            return None;
        }
        let mut seqs = vec![0; ppb as usize];
        for &(o, s) in pages {
            seqs[o as usize] = s.seq;
        }
        Some(InPlace {
            pbn,
            lbn,
            seqs,
            tagged: pages.iter().all(|&(_, s)| s.aux == tag),
        })
    }

    /// The oldest page's sequence number: when the block was first programmed.
    pub fn min_seq(&self) -> u32 {
        self.seqs
            .iter()
            .copied()
            .filter(|&s| s != 0)
            .min()
            .unwrap_or(0)
    }

    pub fn max_seq(&self) -> u32 {
        self.seqs.iter().copied().max().unwrap_or(0)
    }

    /// The programmed offsets, if they are one run `first..end`.
    pub fn run(&self) -> Option<(u32, u32)> {
        let first = self.seqs.iter().position(|&s| s != 0)? as u32;
        let end = self.seqs.iter().rposition(|&s| s != 0)? as u32 + 1;
        self.seqs[first as usize..end as usize]
            .iter()
            .all(|&s| s != 0)
            .then_some((first, end))
    }
}

/// The roles a mount gives the in-place blocks of one logical block (indices into its group).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Roles {
    /// The data block (it may be the target of an interrupted merge, to be completed).
    pub data: usize,
    /// The live sequential log block, if any.
    pub log: Option<usize>,
    /// Blocks older than the data block that a merge was replacing: sources to complete it, then erased.
    pub old: Vec<usize>,
}

/// Gives roles to the in-place blocks of one logical block, `group` sorted by first program (oldest first).
///
/// Where a cut leaves them, a logical block has a data block, at most one sequential log block (tagged, one
/// run of offsets) and, while a merge is under way, the old data block (and the sequential log block being
/// merged) besides the merge's target. A merge target or a data block holds an untagged page (a copy, or a
/// host write in place), except a sequential log block that a switch or a partial merge with nothing to
/// copy made the data block. So: the data block is the newest block with an untagged page; a tagged run
/// newer than it, or older but programmed after it was (appended to after an RW victim's merge copied it),
/// is the live log block; every other, older, block is what a merge was replacing. With no untagged page the
/// older of at most two blocks is the data block and the newer the log block (switched or not, both readings
/// are right). None: a state the write path never leaves.
pub fn resolve(group: &[InPlace]) -> Option<Roles> {
    let Some(data) = group.iter().rposition(|b| !b.tagged) else {
        return match group.len() {
            1 => Some(Roles {
                data: 0,
                log: None,
                old: Vec::new(),
            }),
            2 if group[1].run().is_some() => Some(Roles {
                data: 0,
                log: Some(1),
                old: Vec::new(),
            }),
            _ => None,
        };
    };
    let born = group[data].min_seq();
    let mut roles = Roles {
        data,
        log: None,
        old: Vec::new(),
    };
    for (i, b) in group.iter().enumerate().filter(|&(i, _)| i != data) {
        if b.tagged && b.run().is_some() && (i > data || b.max_seq() > born) {
            if roles.log.replace(i).is_some() {
                return None;
            }
        } else if i < data {
            roles.old.push(i);
        } else {
            return None;
        }
    }
    Some(roles)
}
