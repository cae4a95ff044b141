//! `block`: the block-mapped baseline (FAST paper §2.1, "block-level address mapping").
//!
//! ```text
//! write(lpn): lbn, offset := lpn div N, lpn mod N
//!             no data block for lbn      -> take a free block, program offset there
//!             page at offset still free  -> program it in place
//!             otherwise (an overwrite)   -> take a free block; copy every other written page and program the
//!                                           new data at offset, in page order; erase the old block
//! read(lpn):  read page offset of map[lbn]
//! ```
//! Under `sequential_program` (MLC) a free page below the block's highest programmed page cannot be
//! programmed either, so such a write is handled like an overwrite.
//! RAM: the block map (one entry per logical block, as wide as a physical block address) and one "written" bit
//! per logical page. Choice: the written bit is kept in RAM rather than found by a spare read, so the baseline's
//! only flash traffic is the data itself. Spare area: the logical page number. One extra physical block.

use super::common::free_pool::FreePool;
use super::{address_bytes, defaults_of, parse_params, Built, Ftl, RamItem, Scheme};
use crate::addr::{Lpn, Pbn, Token};
use crate::config::Geometry;
use crate::device::Device;
use crate::error::Result;
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub const SCHEME: Scheme = Scheme {
    name: "block",
    summary: "block-mapped baseline: an overwrite copies the block to a free block and erases the old one",
    citation: "FAST paper (Lee et al. 2007) section 2.1",
    defaults: defaults_of::<BlockParams>,
    build,
};

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BlockParams {}

const UNMAPPED: u32 = u32::MAX;

pub struct BlockFtl {
    ppb: u32,
    logical_blocks: u32,
    physical_blocks: u32,
    sequential_program: bool,
    map: Vec<u32>,
    /// One past the highest offset programmed in each logical block's data block.
    frontier: Vec<u32>,
    written: Vec<u64>,
    free: FreePool,
}

fn build(params: &Value, g: &Geometry) -> Result<Built> {
    let _: BlockParams = parse_params("block", params)?;
    let blocks = g.logical_blocks + 1;
    let ftl = BlockFtl {
        ppb: g.pages_per_block,
        logical_blocks: g.logical_blocks,
        physical_blocks: blocks,
        sequential_program: g.sequential_program,
        map: vec![UNMAPPED; g.logical_blocks as usize],
        frontier: vec![0; g.logical_blocks as usize],
        written: vec![0; (g.logical_pages() as usize).div_ceil(64)],
        free: FreePool::with_range(0, blocks),
    };
    Ok(Built {
        ftl: Box::new(ftl),
        extra_blocks: 1,
    })
}

impl Ftl for BlockFtl {
    fn read(&mut self, lpn: Lpn, dev: &mut Device) -> Result<Option<Token>> {
        let (lbn, offset) = (lpn.0 / self.ppb, lpn.0 % self.ppb);
        match self.map[lbn as usize] {
            UNMAPPED => Ok(None),
            pbn => Ok(dev.read(dev.ppn(Pbn(pbn), offset))?.token),
        }
    }

    fn write(&mut self, lpn: Lpn, token: Token, dev: &mut Device) -> Result<()> {
        let (lbn, offset) = (lpn.0 / self.ppb, lpn.0 % self.ppb);
        let old = self.map[lbn as usize];
        let in_order = !self.sequential_program || offset >= self.frontier[lbn as usize];
        if old == UNMAPPED || (!self.is_written(lpn.0) && in_order) {
            let pbn = match old {
                UNMAPPED => self.take_free(dev)?,
                pbn => Pbn(pbn),
            };
            self.map[lbn as usize] = pbn.0;
            self.set_written(lpn.0);
            self.frontier[lbn as usize] = self.frontier[lbn as usize].max(offset + 1);
            return dev.program(dev.ppn(pbn, offset), token, lpn);
        }
        let mark = dev.begin();
        let new = self.take_free(dev)?;
        let first = lbn * self.ppb;
        self.set_written(lpn.0);
        for o in 0..self.ppb {
            let to = dev.ppn(new, o);
            if o == offset {
                dev.program(to, token, lpn)?;
            } else if self.is_written(first + o) {
                dev.copy(dev.ppn(Pbn(old), o), to)?;
            }
        }
        dev.erase(Pbn(old))?;
        self.free.put(Pbn(old));
        self.map[lbn as usize] = new.0;
        self.frontier[lbn as usize] = (0..self.ppb)
            .rev()
            .find(|&o| self.is_written(first + o))
            .map_or(0, |o| o + 1);
        dev.end_gc(mark);
        Ok(())
    }

    fn ram(&self) -> Vec<RamItem> {
        let entry = address_bytes(self.physical_blocks as u64);
        let pages = self.logical_blocks as u64 * self.ppb as u64;
        vec![
            RamItem::new(
                "block_map",
                self.logical_blocks as u64 * entry,
                format!("{} logical blocks x {entry} B", self.logical_blocks),
            ),
            RamItem::new(
                "written_bitmap",
                pages.div_ceil(8),
                format!("{pages} logical pages x 1 bit"),
            ),
            RamItem::new(
                "frontier",
                self.logical_blocks as u64,
                format!(
                    "{} logical blocks x 1 B (in-order rule)",
                    self.logical_blocks
                ),
            ),
        ]
    }
}

impl BlockFtl {
    fn is_written(&self, lpn: u32) -> bool {
        self.written[(lpn / 64) as usize] & (1 << (lpn % 64)) != 0
    }

    fn set_written(&mut self, lpn: u32) {
        self.written[(lpn / 64) as usize] |= 1 << (lpn % 64);
    }

    fn take_free(&mut self, dev: &Device) -> Result<Pbn> {
        self.free
            .take()
            .ok_or_else(|| dev.out_of_space("no free block"))
    }
}
