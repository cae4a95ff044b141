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
//! programmed either, so such a write is handled like an overwrite. An overwrite's copies go to the device a
//! run of offsets at a time (`merge::fill`, as the hybrid schemes' merges), in the same order as one by one.
//! RAM: the block map (one entry per logical block, as wide as a physical block address), one "written" bit
//! per logical page and the in-order frontier per block: the data-block map the log-block schemes share
//! (`common/mechanisms/data_blocks.rs`). Choice: the written bit is kept in RAM rather than found by a spare read, so the baseline's
//! only flash traffic is the data itself. Spare area: the logical page number. One extra physical block.
//!
//! Mount (after a power cut): every page's spare area is read (pages are programmed at their offsets, so a
//! block can have holes): a block holding pages of logical block `lbn` is its data block. An overwrite
//! interrupted before it erased the old block leaves two blocks for one `lbn`; the old one (lower sequence
//! numbers) is complete and kept, the new one is erased at mount, so the write in flight is lost, as it may
//! be. A torn page (`torn_pages`: it reads uncorrectable, with no logical page) counts as programmed, so its
//! offset is rewritten by an overwrite; a block holding nothing but a torn page is erased at mount. Cost:
//! pages-per-block spare reads per physical block, and one erase per interrupted overwrite or torn block.
//!
//! On a multi-chip array it runs striped by default (`array/mod.rs`): its block is one physical block on
//! every plane, so successive pages go to successive dies and an erase erases every plane at once.
//! `placement=per-die` runs an instance per die instead, block `lbn` on die `lbn mod dies` (`ftl/per_die.rs`).

use super::common::mechanisms::boot_scan::{scan_block, Extent};
use super::common::mechanisms::data_blocks::DataBlocks;
use super::common::mechanisms::free_pool::FreePool;
use super::common::mechanisms::merge;
use super::{defaults_of, parse_as, Built, Ftl, Mounts, RamItem, Scheme, SchemeParams};
use crate::addr::{Lbn, Lpn, Opt, Pbn, Ppn, Token};
use crate::config::ConfigError;
use crate::config::Geometry;
use crate::device::Device;
use crate::device::Result;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

pub const SCHEME: Scheme = Scheme {
    name: "block",
    mapping: super::Mapping::Block,
    summary: "block-mapped baseline: an overwrite copies the block to a free block and erases the old one",
    citation: "FAST paper (Lee et al. 2007) section 2.1",
    defaults: defaults_of::<BlockParams>,
    parse: parse_as::<BlockParams>,
    build,
    figures: &[],
    profiles: &[],
    stress_variants: no_stress_variants,
    mount: Some(Mounts {
        variants: crash_variants,
        log_blocks: false,
        settles_torn_merges: false,
    }),
};

/// Block mapping has no parameter to shrink: its defaults are its only stress set.
fn no_stress_variants() -> Vec<Value> {
    Vec::new()
}

/// The crash suites' sets.
fn crash_variants() -> Vec<Value> {
    vec![json!({})]
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BlockParams {}

pub struct BlockFtl {
    ppb: u32,
    logical_blocks: u32,
    sequential_program: bool,
    physical_blocks: u32,
    /// The block map, the written bit of each logical page and each block's in-order frontier.
    data: DataBlocks,
    free: FreePool,
    /// An overwrite's sources: the old block's page at each offset it copies (kept between calls).
    sources: Vec<Opt<Ppn>>,
}

fn build(params: &SchemeParams, g: &Geometry) -> Result<Built, ConfigError> {
    let _: &BlockParams = params.get("block")?;
    let blocks = g.logical_blocks + 1;
    let ftl = BlockFtl {
        ppb: g.pages_per_block,
        logical_blocks: g.logical_blocks,
        sequential_program: g.sequential_program,
        physical_blocks: blocks,
        data: DataBlocks::new(g.logical_blocks, g.pages_per_block, g.sequential_program),
        free: FreePool::with_range(Pbn(0), blocks),
        sources: vec![Opt::NONE; g.pages_per_block as usize],
    };
    Ok(Built {
        ftl: Box::new(ftl),
        extra_blocks: 1,
    })
}

impl Ftl for BlockFtl {
    fn read(&mut self, lpn: Lpn, dev: &mut Device) -> Result<Option<Token>> {
        // The data block's page is read even if never programmed: the baseline keeps no per-page lookup on
        // the read path.
        match self.data.pbn(lpn.lbn(self.ppb)) {
            None => Ok(None),
            Some(pbn) => dev.read_token(dev.ppn(pbn, lpn.offset(self.ppb))),
        }
    }

    /// The rest of a logical block that has no data block.
    fn unmapped_from(&self, lpn: Lpn, pages: u32) -> u32 {
        match self.data.pbn(lpn.lbn(self.ppb)) {
            None => lpn.left_in_block(self.ppb).min(pages),
            Some(_) => 0,
        }
    }

    fn write(&mut self, lpn: Lpn, token: Token, dev: &mut Device) -> Result<()> {
        if self.data.fits_in_place(lpn) {
            return self.data.program_in_place(lpn, token, &mut self.free, dev);
        }
        let (lbn, offset) = (lpn.lbn(self.ppb), lpn.offset(self.ppb));
        let mark = dev.begin_gc();
        let new = self
            .free
            .take()
            .ok_or_else(|| dev.out_of_space("no free block"))?;
        // Every other written page of the old block is copied, the new data programmed at its offset.
        self.sources.fill(Opt::NONE);
        self.data.fill_missing(lbn, &mut self.sources, dev);
        self.sources[offset as usize] = Opt::NONE;
        let old = self
            .data
            .relocate(lbn, new)
            .expect("an overwrite has a data block");
        dev.prefetch_block(old);
        // The new block holds the offsets the old one did (a torn page's too: it counts as written).
        merge::fill(
            dev,
            lbn,
            new,
            0..0,
            &self.sources,
            Some((offset, token)),
            |_| {},
        )?;
        self.data.mark_programmed(lpn);
        dev.erase(old)?;
        self.free.put(old);
        dev.end_gc(mark);
        Ok(())
    }

    fn detects_torn_pages(&self) -> bool {
        true
    }

    fn mount(&mut self, dev: &mut Device) -> Result<()> {
        self.data = DataBlocks::new(self.logical_blocks, self.ppb, self.sequential_program);
        self.free = FreePool::with_range(Pbn(0), 0);
        // Per logical block: its block and the highest sequence number in it (mount-time RAM).
        let mut owner: Vec<Option<(u32, Pbn)>> = vec![None; self.logical_blocks as usize];
        let mut pages: Vec<Vec<u32>> = Vec::new();
        for pbn in (0..self.physical_blocks).map(Pbn) {
            let (mut lbn, mut seq, mut offsets) = (None, 0, Vec::new());
            scan_block(dev, pbn, Extent::EveryPage, |offset, _, spare| {
                if let Some(lpn) = spare.lpn() {
                    lbn = Some(lpn.lbn(self.ppb));
                }
                seq = seq.max(spare.seq);
                offsets.push(offset);
            })?;
            let Some(lbn) = lbn else {
                // Only a torn page (a program cut by the power loss; it reads uncorrectable): garbage.
                if !offsets.is_empty() {
                    dev.erase(pbn)?;
                }
                pages.push(Vec::new());
                self.free.put(pbn);
                continue;
            };
            pages.push(offsets);
            let slot = &mut owner[lbn.index()];
            match *slot {
                // An interrupted overwrite: keep the older, complete block; erase the newer.
                Some((other_seq, other)) => {
                    let newer = if seq > other_seq { pbn } else { other };
                    if newer == other {
                        *slot = Some((seq, pbn));
                    }
                    dev.erase(newer)?;
                    self.free.put(newer);
                }
                None => *slot = Some((seq, pbn)),
            }
        }
        for (lbn, entry) in (0..).map(Lbn).zip(&owner) {
            if let Some((_, pbn)) = entry {
                self.data.relocate(lbn, *pbn);
                for &offset in &pages[pbn.index()] {
                    self.data.mark_programmed(lbn.lpn(offset, self.ppb));
                }
            }
        }
        Ok(())
    }

    fn ram(&self) -> Vec<RamItem> {
        self.data.ram(self.physical_blocks)
    }
}
