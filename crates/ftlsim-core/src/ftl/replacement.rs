//! `replacement`: the replacement block scheme (Ban 1995, US 5,404,485) as Shim et al. describe it in "The
//! Effect of Absorbing Hot Write References on FTLs ..." §2.2 and Fig. 1; they ran it as a modified Linux
//! NFTL module (§4.2), whose chain walk the choices below follow.
//!
//! ```text
//! write(lpn): vb, o := lpn div N, lpn mod N
//!   vb unmapped -> data(vb) := a free block; program o there
//!   walk the chain data(vb), rep1, rep2, ...: spare read of page o in each; program the first one free
//!   none free   -> a new replacement block at the chain's end, program o there (Fig. 1: a second update of
//!                  the same offset takes a second replacement block)
//!   no replacement block left (`replacement_blocks` in use) -> merge the longest chain first
//! read(lpn):  no replacement block -> read page o of the data block
//!             else spare read page o of every block of the chain; read the last one that holds data
//! merge(vb):  new := a free block; for o in 0..N: the newest copy of o (a chain walk of spare reads) is
//!             copied to page o of new; erase the data block and every replacement block
//! ```
//! RAM: the block map (4 B a logical block, as in `nftl`) and the chain links, one per physical block as wide
//! as a block address (Linux NFTL's `ReplUnitTable`); under `sequential_program` the highest programmed page
//! of each block. Spare area: the logical page number of each page (a page holds data iff it has one).
//!
//! Choices (Shim et al. say what a merge does, not which chain it takes, nor how a page is found):
//! - Victim: the longest chain, which frees the most replacement blocks (Linux NFTL's `NFTL_makefreeblock`
//!   folds the longest chain). Ties: the chain that most recently reached that length. If the victim is the
//!   block being written, the new data goes into the merge at its offset.
//! - The merge is recorded as `merges.full` (data and replacement blocks copied to a new block, all erased).
//! - A write stops at the first chain block whose page o is free; a read walks the whole chain (the newest
//!   copy is in the last block holding o), as Linux NFTL does. A block of the chain whose page o cannot be
//!   programmed in order (`sequential_program`, o below its highest programmed page) is skipped by writes
//!   without a spare read.
//! - Physical blocks: the logical ones, `replacement_blocks`, and one merge target.
//! - Mount (after a power cut): the chain links are RAM only (Linux NFTL keeps them in unit headers; here
//!   the spare areas' sequence numbers suffice): every page's spare area is read; the blocks holding pages of
//!   a logical block form its chain, in the order they were taken (the sequence number of each block's first
//!   page: a block is first programmed when it is taken). Only the newest block of all can be the target of
//!   a merge a cut interrupted, at the end of the chain it copies. If it holds every offset the rest of that
//!   chain holds, the copy was finished and the cut stopped the erases: it becomes the data block and the
//!   others are erased. If more replacement blocks are then in use than `replacement_blocks`, the cut stopped
//!   the copy: the target is erased (the chain still holds every page). A partial target must not stay in the
//!   chain: a later write of an offset it lacks would go to an earlier block, and the target's stale copy,
//!   later in the chain, would win the reads (the crash test found this). A torn page (`torn_pages`:
//!   programmed, uncorrectable, no logical page) is skipped by reads and is not free for writes; a block of
//!   nothing but torn pages is erased. Cost: one spare read per page of the scheme's blocks, plus the erases that finish or undo
//!   an interrupted merge.

use super::common::bounds::Checks;
use super::common::free_pool::FreePool;
use super::common::valid_buckets::ValidBuckets;
use super::{address_bytes, defaults_of, parse_params, Built, Ftl, RamItem, Scheme};
use crate::addr::{Lpn, Opt, Pbn, Token};
use crate::config::Geometry;
use crate::device::Device;
use crate::error::Result;
use crate::stats::MergeKind;
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub const SCHEME: Scheme = Scheme {
    name: "replacement",
    summary: "replacement block scheme: an update goes to the same offset of a chain of replacement blocks",
    citation: "Shim et al. (hot write references / NVRAM) section 2.2, Fig. 1; Ban, US 5,404,485",
    defaults: defaults_of::<ReplacementParams>,
    build,
};

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ReplacementParams {
    /// Replacement blocks that may be in use at once (Shim et al. §4.2: 64).
    pub replacement_blocks: u32,
}

impl Default for ReplacementParams {
    fn default() -> Self {
        ReplacementParams {
            replacement_blocks: 64,
        }
    }
}

pub struct ReplacementFtl {
    ppb: u32,
    logical_blocks: u32,
    physical_blocks: u32,
    sequential_program: bool,
    limit: u32,
    in_use: u32,
    data: Vec<Opt<Pbn>>,
    /// Next block of the chain each physical block belongs to.
    next: Vec<Opt<Pbn>>,
    /// One past the highest programmed page of each physical block.
    frontier: Vec<u32>,
    /// Replacement blocks of each logical block.
    chain_len: Vec<u32>,
    /// Logical blocks with a chain, keyed by `limit - chain_len` so that the longest pops first.
    chains: ValidBuckets,
    free: FreePool,
}

fn build(params: &Value, g: &Geometry) -> Result<Built> {
    let p: ReplacementParams = parse_params("replacement", params)?;
    Checks::new("replacement")
        .at_least(
            "replacement_blocks",
            p.replacement_blocks as u64,
            1,
            "an update needs a replacement block",
        )
        .extra_blocks("replacement_blocks", p.replacement_blocks, 1, 0, g)
        .finish()?;
    let extra = p.replacement_blocks + 1;
    let physical = g.logical_blocks + extra;
    let ftl = ReplacementFtl {
        ppb: g.pages_per_block,
        logical_blocks: g.logical_blocks,
        physical_blocks: physical,
        sequential_program: g.sequential_program,
        limit: p.replacement_blocks,
        in_use: 0,
        data: vec![Opt::NONE; g.logical_blocks as usize],
        next: vec![Opt::NONE; physical as usize],
        frontier: vec![0; physical as usize],
        chain_len: vec![0; g.logical_blocks as usize],
        chains: ValidBuckets::new(g.logical_blocks, p.replacement_blocks),
        free: FreePool::with_range(Pbn(0), physical),
    };
    Ok(Built {
        ftl: Box::new(ftl),
        extra_blocks: extra,
    })
}

impl Ftl for ReplacementFtl {
    fn read(&mut self, lpn: Lpn, dev: &mut Device) -> Result<Option<Token>> {
        let (vb, o) = (lpn.lbn(self.ppb).index(), lpn.offset(self.ppb));
        let Some(first) = self.data[vb].get() else {
            return Ok(None);
        };
        if self.next[first.index()].is_none() {
            return Ok(dev.read(dev.ppn(first, o))?.token);
        }
        match self.newest(first, o, dev)? {
            Some(b) => Ok(dev.read(dev.ppn(b, o))?.token),
            None => Ok(None),
        }
    }

    fn write(&mut self, lpn: Lpn, token: Token, dev: &mut Device) -> Result<()> {
        let (vb, o) = (lpn.lbn(self.ppb).index(), lpn.offset(self.ppb));
        let Some(mut b) = self.data[vb].get() else {
            let b = self.take_free(dev)?;
            self.data[vb] = Opt::some(b);
            return self.program(b, o, lpn, token, dev);
        };
        let last = loop {
            let programmable = !self.sequential_program || o >= self.frontier[b.index()];
            // Free means erased: a torn page (`torn_pages`) holds no data but cannot be programmed again.
            if programmable && dev.read_spare(dev.ppn(b, o))?.seq == 0 {
                return self.program(b, o, lpn, token, dev);
            }
            match self.next[b.index()].get() {
                None => break b,
                Some(n) => b = n,
            }
        };
        if self.in_use == self.limit {
            let (victim, _) = self
                .chains
                .pop_min()
                .expect("replacement blocks in use belong to chains");
            if victim as usize == vb {
                return self.merge(vb, Some((o, lpn, token)), dev);
            }
            self.merge(victim as usize, None, dev)?;
        }
        let rep = self.take_free(dev)?;
        self.next[last.index()] = Opt::some(rep);
        self.in_use += 1;
        let len = self.chain_len[vb];
        self.chain_len[vb] = len + 1;
        if len == 0 {
            self.chains.insert(vb as u32, self.limit - 1);
        } else {
            self.chains.decrement(vb as u32);
        }
        self.program(rep, o, lpn, token, dev)
    }

    fn ram(&self) -> Vec<RamItem> {
        let lb = self.logical_blocks as u64;
        let pb = self.physical_blocks as u64;
        let link = address_bytes(pb + 1);
        let mut items = vec![
            RamItem::new("block_map", lb * 4, format!("{lb} logical blocks x 4 B")),
            RamItem::new(
                "replacement_chain",
                pb * link,
                format!("{pb} physical blocks x {link} B (next block of the chain)"),
            ),
        ];
        if self.sequential_program {
            let width = address_bytes(self.ppb as u64 + 1);
            items.push(RamItem::new(
                "frontier",
                pb * width,
                format!("{pb} physical blocks x {width} B (in-order rule)"),
            ));
        }
        items
    }

    fn detects_torn_pages(&self) -> bool {
        true
    }

    fn mount(&mut self, dev: &mut Device) -> Result<()> {
        let ppb = self.ppb;
        self.data.fill(Opt::NONE);
        self.next.fill(Opt::NONE);
        self.frontier.fill(0);
        self.chain_len.fill(0);
        self.chains = ValidBuckets::new(self.logical_blocks, self.limit);
        self.in_use = 0;
        self.free = FreePool::with_range(Pbn(0), 0);
        // Each block's logical block, first and last sequence numbers, and programmed offsets.
        let mut chains: Vec<Vec<(u32, Pbn)>> = vec![Vec::new(); self.logical_blocks as usize];
        let mut offsets: Vec<Vec<u32>> = vec![Vec::new(); self.physical_blocks as usize];
        let mut newest_block: (u32, Option<Pbn>) = (0, None);
        for b in (0..self.physical_blocks).map(Pbn) {
            // The block's logical block and its first sequence number.
            let (mut first, mut torn) = (None, false);
            for o in 0..ppb {
                let spare = dev.read_spare(dev.ppn(b, o))?;
                if spare.seq != 0 {
                    self.frontier[b.index()] = o + 1;
                }
                if let Some(lpn) = spare.lpn() {
                    let seq = first.map_or(spare.seq, |(_, s): (usize, u32)| s.min(spare.seq));
                    first = Some((lpn.lbn(ppb).index(), seq));
                    offsets[b.index()].push(o);
                } else {
                    torn |= spare.seq != 0;
                }
            }
            let Some((vb, first_seq)) = first else {
                if torn {
                    dev.erase(b)?;
                    self.frontier[b.index()] = 0;
                }
                self.free.put(b);
                continue;
            };
            chains[vb].push((first_seq, b));
            if first_seq > newest_block.0 {
                newest_block = (first_seq, Some(b));
            }
        }
        for chain in &mut chains {
            chain.sort_unstable();
        }
        // Only the newest block of all can be a merge's target, and only while a merge was under way: then
        // it ends the chain it copies.
        let Some(target) = newest_block.1 else {
            return Ok(());
        };
        if let Some(chain) = chains
            .iter_mut()
            .find(|c| c.last().map(|e| e.1) == Some(target))
        {
            let holds_all = chain.iter().all(|&(_, b)| {
                offsets[b.index()]
                    .iter()
                    .all(|o| offsets[target.index()].contains(o))
            });
            if chain.len() > 1 && holds_all {
                // A finished copy with its erases cut short: the target alone holds everything.
                for &(_, b) in &chain[..chain.len() - 1] {
                    dev.erase(b)?;
                    self.free.put(b);
                    self.frontier[b.index()] = 0;
                }
                chain.drain(..chain.len() - 1);
            }
        }
        let in_use: usize = chains.iter().map(|c| c.len().saturating_sub(1)).sum();
        if in_use > self.limit as usize {
            // A merge cut while copying (before it erased anything): the target is the newest block.
            let chain = chains
                .iter_mut()
                .find(|c| c.last().map(|e| e.1) == Some(target))
                .expect("the newest block ends its chain");
            chain.pop();
            dev.erase(target)?;
            self.free.put(target);
            self.frontier[target.index()] = 0;
        }
        for (vb, chain) in chains.iter().enumerate() {
            let Some(&(_, first)) = chain.first() else {
                continue;
            };
            self.data[vb] = Opt::some(first);
            for pair in chain.windows(2) {
                self.next[pair[0].1.index()] = Opt::some(pair[1].1);
            }
            let len = chain.len() as u32 - 1;
            if len > 0 {
                self.chain_len[vb] = len;
                self.in_use += len;
                self.chains.insert(vb as u32, self.limit - len);
            }
        }
        Ok(())
    }
}

impl ReplacementFtl {
    fn program(&mut self, b: Pbn, o: u32, lpn: Lpn, token: Token, dev: &mut Device) -> Result<()> {
        dev.program(dev.ppn(b, o), token, lpn)?;
        let f = &mut self.frontier[b.index()];
        *f = (*f).max(o + 1);
        Ok(())
    }

    fn take_free(&mut self, dev: &Device) -> Result<Pbn> {
        self.free
            .take()
            .ok_or_else(|| dev.out_of_space("no free block"))
    }

    /// The last block of the chain starting at `first` whose page `o` holds data: one spare read a block.
    fn newest(&self, first: Pbn, o: u32, dev: &mut Device) -> Result<Option<Pbn>> {
        let mut found = None;
        let mut b = Some(first);
        while let Some(block) = b {
            if dev.read_spare(dev.ppn(block, o))?.lpn().is_some() {
                found = Some(block);
            }
            b = self.next[block.index()].get();
        }
        Ok(found)
    }

    /// Merges `vb`'s chain into a free block, with `new` data at its offset if given.
    fn merge(&mut self, vb: usize, new: Option<(u32, Lpn, Token)>, dev: &mut Device) -> Result<()> {
        let mark = dev.begin();
        let target = self.take_free(dev)?;
        let first = self.data[vb]
            .get()
            .expect("a merged logical block has a data block");
        let mut frontier = 0;
        for o in 0..self.ppb {
            let to = dev.ppn(target, o);
            if let Some((new_o, lpn, token)) = new {
                if new_o == o {
                    dev.program(to, token, lpn)?;
                    frontier = o + 1;
                    continue;
                }
            }
            if let Some(b) = self.newest(first, o, dev)? {
                dev.copy(dev.ppn(b, o), to)?;
                frontier = o + 1;
            }
        }
        let mut b = Some(first);
        while let Some(block) = b {
            dev.erase(block)?;
            self.free.put(block);
            self.frontier[block.index()] = 0;
            b = self.next[block.index()].take();
        }
        if self.chains.contains(vb as u32) {
            self.chains.remove(vb as u32);
        }
        self.in_use -= self.chain_len[vb];
        self.chain_len[vb] = 0;
        self.data[vb] = Opt::some(target);
        self.frontier[target.index()] = frontier;
        dev.end_merge(mark, MergeKind::Full);
        Ok(())
    }
}
