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
