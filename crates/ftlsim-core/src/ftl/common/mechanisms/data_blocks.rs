//! The block map of the log-block schemes (BAST, FAST, LAST, ...): one data block per logical block, whose
//! page at offset `o` holds logical page `lbn * N + o` (FAST paper §2.1, "block-level address mapping").
//!
//! Besides the map it keeps, per logical page, whether the data block holds a programmed page at its offset
//! (a "written" bit) and, per logical block, one past the highest programmed offset (the frontier), so that a
//! scheme can tell a collision without a flash read. Under `sequential_program` (MLC) a free page below the
//! frontier cannot be programmed either, and [`DataBlocks::fits_in_place`] calls it a collision.

use crate::addr::{Lbn, Lpn, Opt, Pbn, Ppn, Token};
use crate::device::Device;
use crate::device::Result;
use crate::ftl::common::mechanisms::free_pool::FreePool;
use crate::ftl::common::mechanisms::log_blocks::LogBlocks;
use crate::ftl::common::structures::bitmap::Bitmap;
use crate::ftl::{address_bytes, RamItem};

pub struct DataBlocks {
    ppb: u32,
    sequential_program: bool,
    map: Vec<Opt<Pbn>>,
    frontier: Vec<u32>,
    written: Bitmap,
}

impl DataBlocks {
    pub fn new(logical_blocks: u32, pages_per_block: u32, sequential_program: bool) -> DataBlocks {
        let pages = logical_blocks as usize * pages_per_block as usize;
        DataBlocks {
            ppb: pages_per_block,
            sequential_program,
            map: vec![Opt::NONE; logical_blocks as usize],
            frontier: vec![0; logical_blocks as usize],
            written: Bitmap::new(pages),
        }
    }

    /// Forgets the map before a mount rebuilds it from the chip.
    pub fn clear(&mut self) {
        self.map.fill(Opt::NONE);
        self.frontier.fill(0);
        self.written.clear_all();
    }

    pub fn pbn(&self, lbn: Lbn) -> Option<Pbn> {
        self.map[lbn.index()].get()
    }

    pub fn is_written(&self, lpn: Lpn) -> bool {
        self.written.get(lpn.index())
    }

    /// How many of the `pages` pages from `lpn` on have no copy in a data block nor in `log`, known at once:
    /// the rest of a logical block with no data block, as far as `log`'s map is untouched
    /// ([`LogBlocks::untouched_from`]). What a scheme reading data and log blocks alone gives as
    /// [`crate::ftl::Ftl::unmapped_from`].
    pub fn unmapped_from(&self, log: &LogBlocks, lpn: Lpn, pages: u32) -> u32 {
        if self.pbn(lpn.lbn(self.ppb)).is_some() {
            return 0;
        }
        let in_block = lpn.left_in_block(self.ppb);
        (log.untouched_from(lpn) as u32).min(in_block).min(pages)
    }

    /// The data block's page of `lpn`, if it was programmed.
    pub fn page(&self, lpn: Lpn, dev: &Device) -> Option<Ppn> {
        match self.pbn(lpn.lbn(self.ppb)) {
            Some(pbn) if self.is_written(lpn) => Some(dev.ppn(pbn, lpn.offset(self.ppb))),
            _ => None,
        }
    }

    /// Sets each entry of `sources` (one per offset of `lbn`) that is none to the data block's page at that
    /// offset, where it was programmed: [`DataBlocks::page`] of each, with no division per page.
    pub fn fill_missing(&self, lbn: Lbn, sources: &mut [Opt<Ppn>], dev: &Device) {
        let Some(pbn) = self.pbn(lbn) else {
            return;
        };
        let first = lbn.first_lpn(self.ppb).index();
        for (o, source) in sources.iter_mut().enumerate() {
            if source.is_none() && self.written.get(first + o) {
                *source = Opt::some(dev.ppn(pbn, o as u32));
            }
        }
    }

    /// True when a write of `lpn` needs no log block: the logical block has no data block yet, or its page at
    /// the offset is free and (under the in-order rule) above every programmed page. FAST Fig. 6, Algorithm 1.
    pub fn fits_in_place(&self, lpn: Lpn) -> bool {
        let lbn = lpn.lbn(self.ppb);
        match self.pbn(lbn) {
            None => true,
            Some(_) => {
                !self.is_written(lpn)
                    && (!self.sequential_program
                        || lpn.offset(self.ppb) >= self.frontier[lbn.index()])
            }
        }
    }

    /// Programs `lpn` in its data block (taking a free block if the logical block has none). The caller has
    /// checked [`DataBlocks::fits_in_place`].
    pub fn program_in_place(
        &mut self,
        lpn: Lpn,
        token: Token,
        pool: &mut FreePool,
        dev: &mut Device,
    ) -> Result<()> {
        let lbn = lpn.lbn(self.ppb);
        let pbn = match self.pbn(lbn) {
            Some(pbn) => pbn,
            None => {
                let pbn = pool
                    .take()
                    .ok_or_else(|| dev.out_of_space("no free block for a new data block"))?;
                self.map[lbn.index()] = Opt::some(pbn);
                pbn
            }
        };
        dev.program(dev.ppn(pbn, lpn.offset(self.ppb)), token, lpn)?;
        self.mark_programmed(lpn);
        Ok(())
    }

    /// Makes `pbn` the data block of `lbn`, whose offsets below `programmed_prefix` are programmed; returns
    /// the block it replaces.
    pub fn assign(&mut self, lbn: Lbn, pbn: Pbn, programmed_prefix: u32) -> Option<Pbn> {
        let old = self.pbn(lbn);
        self.map[lbn.index()] = Opt::some(pbn);
        let first = lbn.first_lpn(self.ppb).index();
        let prefix = programmed_prefix as usize;
        self.written.set_range(first..first + prefix);
        self.written
            .clear_range(first + prefix..first + self.ppb as usize);
        self.frontier[lbn.index()] = programmed_prefix;
        old
    }

    /// Makes `pbn` the data block of `lbn` holding the same offsets as the block it replaces (a copy to a new
    /// block); returns the replaced block.
    pub fn relocate(&mut self, lbn: Lbn, pbn: Pbn) -> Option<Pbn> {
        let old = self.pbn(lbn);
        self.map[lbn.index()] = Opt::some(pbn);
        old
    }

    /// Notes that the data block's page of `lpn` was programmed.
    pub fn mark_programmed(&mut self, lpn: Lpn) {
        self.mark_programmed_at(lpn.lbn(self.ppb), lpn.offset(self.ppb));
    }

    /// [`DataBlocks::mark_programmed`] of page `offset` of `lbn` (a merge's copy loop: no division).
    #[inline]
    pub fn mark_programmed_at(&mut self, lbn: Lbn, offset: u32) {
        self.written.set(lbn.lpn(offset, self.ppb).index());
        let frontier = &mut self.frontier[lbn.index()];
        *frontier = (*frontier).max(offset + 1);
    }

    /// [`DataBlocks::mark_programmed_at`] of the offsets `offsets` of `lbn` (a merge's run of copies).
    #[inline]
    pub fn mark_programmed_run(&mut self, lbn: Lbn, offsets: std::ops::Range<u32>) {
        if offsets.is_empty() {
            return;
        }
        let first = lbn.first_lpn(self.ppb).index();
        self.written
            .set_range(first + offsets.start as usize..first + offsets.end as usize);
        let frontier = &mut self.frontier[lbn.index()];
        *frontier = (*frontier).max(offsets.end);
    }

    /// The block map as a controller stores it: one entry per logical block, as wide as a physical block
    /// address; plus the written bits and the frontier.
    pub fn ram(&self, physical_blocks: u32) -> Vec<RamItem> {
        let blocks = self.map.len() as u64;
        let entry = address_bytes(physical_blocks as u64);
        let pages = blocks * self.ppb as u64;
        let offset = address_bytes(self.ppb as u64 + 1);
        vec![
            RamItem::new(
                "block_map",
                blocks * entry,
                format!("{blocks} logical blocks x {entry} B"),
            ),
            RamItem::new(
                "written_bitmap",
                self.written.ram_bytes(),
                format!("{pages} logical pages x 1 bit"),
            ),
            RamItem::new(
                "frontier",
                blocks * offset,
                format!("{blocks} logical blocks x {offset} B (in-order rule)"),
            ),
        ]
    }
}
