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
//! - `fold_in_place` (off by default): the merge folds in place when it can, as Linux NFTL's
//!   `NFTL_foldchain` (drivers/mtd/nftlcore.c) does: if the chain's last block has a free page at every
//!   offset whose newest copy is in another block, those copies move into it, the rest of the chain is
//!   erased and the last block becomes the data block (`merges.fold`); else the merge copies into a new block
//!   as above. Shim et al. describe only the merge into a new block (§2.2), but the module they modified folds
//!   in place. The merge walks the chain once for every offset (the spare reads of the merge above) and then
//!   copies; a merge that takes the new data of the write that triggered it never folds in place (that
//!   offset is taken in every block of the chain). Under `sequential_program` a page below the last block's
//!   highest programmed page cannot take a copy, which rules the fold out.
//! - A write stops at the first chain block whose page o is free; a read walks the whole chain (the newest
//!   copy is in the last block holding o), as Linux NFTL does. A block of the chain whose page o cannot be
//!   programmed in order (`sequential_program`, o below its highest programmed page) is skipped by writes
//!   without a spare read.
//! - A merge's operations are issued in the order above (at each offset the chain walk, then the copy) where
//!   the order matters: a power cut could land among them, or a timeline times them. Elsewhere the device
//!   lets them be reordered (`Device::may_reorder`): the same spare reads a block of the chain at a time,
//!   then the same copies in the same order, a run of offsets at a time. The counts, the serial time and the
//!   chip's state are the same either way (`tests/array_runs.rs` compares them for every scheme).
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
//!
//! On a multi-chip array it runs striped by default (`array/mod.rs`): its block is one physical block on
//! every plane, so successive pages go to successive dies and an erase erases every plane at once.
//! `placement=per-die` runs an instance per die instead, block `lbn` on die `lbn mod dies` (`ftl/per_die.rs`).

use super::common::bounds::Checks;
use super::common::mechanisms::free_pool::FreePool;
use super::common::mechanisms::merge;
use super::common::structures::valid_buckets::ValidBuckets;
use super::{
    address_bytes, defaults_of, parse_as, Built, Ftl, Mounts, RamItem, Scheme, SchemeParams,
};
use crate::addr::{Lbn, Lpn, Opt, Pbn, Ppn, Token};
use crate::config::ConfigError;
use crate::config::Geometry;
use crate::device::Device;
use crate::device::Result;
use crate::stats::MergeKind;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

pub const SCHEME: Scheme = Scheme {
    name: "replacement",
    mapping: super::Mapping::Block,
    summary: "replacement block scheme: an update goes to the same offset of a chain of replacement blocks",
    citation: "Shim et al. (hot write references / NVRAM) section 2.2, Fig. 1; Ban, US 5,404,485",
    defaults: defaults_of::<ReplacementParams>,
    parse: parse_as::<ReplacementParams>,
    build,
    figures: &[],
    profiles: &[],
    stress_variants,
    mount: Some(Mounts {
        variants: crash_variants,
        log_blocks: false,
        settles_torn_merges: false,
    }),
};

/// The invariant suite's sets: one and three replacement blocks.
fn stress_variants() -> Vec<Value> {
    vec![
        json!({"replacement_blocks": 1}),
        json!({"replacement_blocks": 3}),
    ]
}

/// The crash suites' sets.
fn crash_variants() -> Vec<Value> {
    vec![
        json!({"replacement_blocks": 2}),
        json!({"replacement_blocks": 6}),
    ]
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ReplacementParams {
    /// Replacement blocks that may be in use at once (Shim et al. §4.2: 64).
    pub replacement_blocks: u32,
    /// Merge into the chain's last block when it has room, as Linux NFTL's `NFTL_foldchain` (see above).
    pub fold_in_place: bool,
}

impl Default for ReplacementParams {
    fn default() -> Self {
        ReplacementParams {
            replacement_blocks: 64,
            fold_in_place: false,
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
    fold_in_place: bool,
    /// The block holding the newest copy of each offset, found by a merge's walk (reused).
    sources: Vec<Opt<Pbn>>,
    /// The logical page of each page of a block, read by a merge's spare reads (reused).
    spares: Vec<Opt<Lpn>>,
    /// The page each offset is copied from, found by a merge's spare reads a block at a time (reused).
    copy_from: Vec<Opt<Ppn>>,
}

fn build(params: &SchemeParams, g: &Geometry) -> Result<Built, ConfigError> {
    let p: &ReplacementParams = params.get("replacement")?;
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
        fold_in_place: p.fold_in_place,
        sources: vec![Opt::NONE; g.pages_per_block as usize],
        spares: vec![Opt::NONE; g.pages_per_block as usize],
        copy_from: vec![Opt::NONE; g.pages_per_block as usize],
    };
    Ok(Built {
        ftl: Box::new(ftl),
        extra_blocks: extra,
    })
}

impl Ftl for ReplacementFtl {
    /// The rest of a logical block with no data block.
    fn unmapped_from(&self, lpn: Lpn, pages: u32) -> u32 {
        match self.data[lpn.lbn(self.ppb).index()].get() {
            None => lpn.left_in_block(self.ppb).min(pages),
            Some(_) => 0,
        }
    }

    fn read(&mut self, lpn: Lpn, dev: &mut Device) -> Result<Option<Token>> {
        let (vb, o) = (lpn.lbn(self.ppb).index(), lpn.offset(self.ppb));
        let Some(first) = self.data[vb].get() else {
            return Ok(None);
        };
        if self.next[first.index()].is_none() {
            return dev.read_token(dev.ppn(first, o));
        }
        match self.newest(first, o, dev)? {
            Some(b) => dev.read_token(dev.ppn(b, o)),
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
        // Programmed pages (data or torn) of each block, for `fold_in_place`'s check below.
        let mut taken: Vec<Vec<u32>> = vec![Vec::new(); self.physical_blocks as usize];
        let mut newest_block: (u32, Option<Pbn>) = (0, None);
        for b in (0..self.physical_blocks).map(Pbn) {
            // The block's logical block and its first sequence number.
            let (mut first, mut torn) = (None, false);
            for o in 0..ppb {
                let spare = dev.read_spare(dev.ppn(b, o))?;
                if spare.seq != 0 {
                    self.frontier[b.index()] = o + 1;
                    taken[b.index()].push(o);
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
        // A fold in place cut short (`fold_in_place`) leaves a later block of a chain holding an offset that an
        // earlier one has free, which breaks the chain's rule (a write takes the first free page): such a chain
        // is merged into a free block once the tables are rebuilt.
        let seq_prog = self.sequential_program;
        let blocked = |b: Pbn, o: u32| {
            taken[b.index()].contains(&o) || (seq_prog && o < self.frontier[b.index()])
        };
        let cut_folds: Vec<usize> = chains
            .iter()
            .enumerate()
            .filter(|(_, chain)| {
                chain.iter().enumerate().any(|(j, &(_, later))| {
                    offsets[later.index()]
                        .iter()
                        .any(|&o| chain[..j].iter().any(|&(_, earlier)| !blocked(earlier, o)))
                })
            })
            .map(|(vb, _)| vb)
            .collect();
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
        for vb in cut_folds {
            self.merge_folding(vb, false, dev)?;
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

    /// Asks the caches for the chip's records of every block of the chain starting at `first`, which a merge
    /// reads offset by offset across the chain: their misses overlap rather than stall one spare read each.
    fn prefetch_chain(&self, first: Pbn, dev: &Device) {
        let mut b = Some(first);
        while let Some(block) = b {
            dev.prefetch_block(block);
            b = self.next[block.index()].get();
        }
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
        if self.fold_in_place && new.is_none() {
            return self.merge_folding(vb, true, dev);
        }
        let mark = dev.begin_merge();
        let target = self.take_free(dev)?;
        let first = self.data[vb]
            .get()
            .expect("a merged logical block has a data block");
        self.prefetch_chain(first, dev);
        // The spare reads of every offset (but the new data's) in each block of the chain, then a copy or the
        // new data's program at each offset.
        let blocks = 1 + self.chain_len[vb] as u64;
        let ops = blocks * self.ppb as u64 + 2 * self.ppb as u64;
        let frontier = if dev.may_reorder(ops) {
            self.fill_in_bulk(vb, first, target, new, dev)?
        } else {
            // Shim et al.'s order: at each offset, the chain walk, then the copy (or the new data's program).
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
            frontier
        };
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

    /// [`ReplacementFtl::merge`]'s fill of `target` where the device lets its operations be reordered
    /// ([`Device::may_reorder`]): the same spare reads, a block of the chain at a time in one call each, then
    /// the same copies and program in the same order ([`merge::fill`]: each run of consecutive offsets in one
    /// call). The counts, the serial time and the chip's state are the same. Returns one past the highest
    /// page filled.
    fn fill_in_bulk(
        &mut self,
        vb: usize,
        first: Pbn,
        target: Pbn,
        new: Option<(u32, Lpn, Token)>,
        dev: &mut Device,
    ) -> Result<u32> {
        let ppb = self.ppb;
        let new_o = new.map_or(ppb, |(o, _, _)| o);
        let mut spares = std::mem::take(&mut self.spares);
        self.copy_from.fill(Opt::NONE);
        let mut b = Some(first);
        while let Some(block) = b {
            for offsets in [0..new_o, (new_o + 1).min(ppb)..ppb] {
                if offsets.is_empty() {
                    continue;
                }
                let lpns = &mut spares[offsets.start as usize..offsets.end as usize];
                dev.read_spare_lpns(block, offsets.clone(), lpns)?;
            }
            for (o, lpn) in spares.iter().enumerate() {
                if lpn.is_some() && o as u32 != new_o {
                    self.copy_from[o] = Opt::some(dev.ppn(block, o as u32));
                }
            }
            b = self.next[block.index()].get();
        }
        self.spares = spares;
        let mut frontier = 0;
        let incoming = new.map(|(o, _, token)| (o, token));
        let lbn = Lbn(vb as u32);
        merge::fill(dev, lbn, target, 0..0, &self.copy_from, incoming, |r| {
            frontier = r.end
        })?;
        Ok(frontier)
    }

    /// `fold_in_place`'s merge of `vb`'s chain: into its last block if `in_place` and that block has a free
    /// page at every offset whose newest copy is elsewhere (a fold), else into a free block (a full merge, as
    /// `merge`).
    fn merge_folding(&mut self, vb: usize, in_place: bool, dev: &mut Device) -> Result<()> {
        let mark = dev.begin_merge();
        let first = self.data[vb]
            .get()
            .expect("a merged logical block has a data block");
        self.prefetch_chain(first, dev);
        let mut last = first;
        while let Some(n) = self.next[last.index()].get() {
            last = n;
        }
        let mut in_place = in_place;
        for o in 0..self.ppb {
            let (mut newest, mut last_free) = (None, false);
            let mut b = Some(first);
            while let Some(block) = b {
                let spare = dev.read_spare(dev.ppn(block, o))?;
                if spare.lpn().is_some() {
                    newest = Some(block);
                }
                if block == last {
                    let programmable = !self.sequential_program || o >= self.frontier[last.index()];
                    last_free = spare.seq == 0 && programmable;
                }
                b = self.next[block.index()].get();
            }
            in_place &= newest.is_none_or(|n| n == last || last_free);
            self.sources[o as usize] = newest.map_or(Opt::NONE, Opt::some);
        }
        let target = if in_place { last } else { self.take_free(dev)? };
        for o in 0..self.ppb {
            if let Some(b) = self.sources[o as usize].get().filter(|&b| b != target) {
                dev.copy(dev.ppn(b, o), dev.ppn(target, o))?;
                let f = &mut self.frontier[target.index()];
                *f = (*f).max(o + 1);
            }
        }
        let mut b = Some(first);
        while let Some(block) = b {
            b = self.next[block.index()].take();
            if block != target {
                dev.erase(block)?;
                self.free.put(block);
                self.frontier[block.index()] = 0;
            }
        }
        if self.chains.contains(vb as u32) {
            self.chains.remove(vb as u32);
        }
        self.in_use -= self.chain_len[vb];
        self.chain_len[vb] = 0;
        self.data[vb] = Opt::some(target);
        let kind = if in_place {
            MergeKind::Fold
        } else {
            MergeKind::Full
        };
        dev.end_merge(mark, kind);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Timing;
    use crate::device::FlashError;
    use serde_json::json;

    /// 4 logical blocks of 4 pages, the scheme's extra blocks beside them.
    fn toy(params: Value) -> (Box<dyn Ftl>, Device) {
        toy_on(params, false)
    }

    fn toy_on(params: Value, sequential_program: bool) -> (Box<dyn Ftl>, Device) {
        let g = Geometry {
            page_bytes: 512,
            spare_bytes: 16,
            pages_per_block: 4,
            logical_blocks: 4,
            sequential_program,
        };
        let built = crate::ftl::build("replacement", &params, &g).unwrap();
        let dev = Device::new(
            "replacement",
            g,
            4 + built.extra_blocks,
            Timing::uniform(1.0),
        );
        (built.ftl, dev)
    }

    /// One replacement block. Writes: page 0 (block 0's data block D0), page 0 again (replacement block R1,
    /// offset 0), page 1 (D0, offset 1), page 4 (block 1's data block), page 4 again: no replacement block
    /// left, so block 0's chain D0 -> R1 is merged. Walking it reads 2 spare areas at each of 4 offsets (8),
    /// after the write's own spare read of block 1's page 0. Merge into a new block (§2.2): copy page 0 from R1
    /// and page 1 from D0, erase D0 and R1: 2 copies, 2 erases. Fold in place (Linux NFTL): R1 holds the newest
    /// page 0 and has page 1 free, so only page 1 moves (D0 -> R1) and only D0 is erased: 1 copy, 1 erase.
    /// Either way the new page 4 goes to the freed replacement block.
    #[test]
    fn a_fold_in_place_moves_only_the_copies_the_last_block_lacks() {
        for (fold, copies, erases, kind) in [
            (false, 2, 2, MergeKind::Full),
            (true, 1, 1, MergeKind::Fold),
        ] {
            let (mut ftl, mut dev) = toy(json!({"replacement_blocks": 1, "fold_in_place": fold}));
            for (token, lpn) in [(1, 0), (2, 0), (3, 1), (4, 4)] {
                ftl.write(Lpn(lpn), token, &mut dev).unwrap();
            }
            let before = dev.counts();
            ftl.write(Lpn(4), 5, &mut dev).unwrap();
            let d = dev.counts().minus(&before);
            assert_eq!(
                (d.spare_reads, d.page_reads, d.page_writes, d.erases),
                (1 + 8, copies, copies + 1, erases),
                "fold_in_place = {fold}"
            );
            assert_eq!(dev.stats.merges[kind as usize].count, 1);
            for _ in 0..2 {
                for (lpn, token) in [(0, 2), (1, 3), (4, 5), (2, 0)] {
                    let want = (token > 0).then_some(token);
                    assert_eq!(ftl.read(Lpn(lpn), &mut dev).unwrap(), want, "page {lpn}");
                }
                ftl.mount(&mut dev).unwrap();
            }
        }
    }

    /// Random overwrites of the toy's 16 pages with two replacement blocks, folding in place, torn pages on
    /// and a power cut every `cut_every` flash operations: after each cut the chains are rebuilt from the
    /// spare areas and every acknowledged write reads back. Returns the folds and the cuts.
    fn folds_under_power_cuts(cut_every: u64, sequential_program: bool) -> (u64, usize) {
        let (mut ftl, mut dev) = toy_on(
            json!({"replacement_blocks": 2, "fold_in_place": true}),
            sequential_program,
        );
        dev.set_torn_pages(true);
        dev.arm_power_cut(Some(cut_every));
        let (mut cuts, mut last) = (0, [None; 16]);
        let mut x = 1u64;
        for i in 0..4000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let lpn = ((x >> 33) % 16) as usize;
            let mut survive = |ftl: &mut Box<dyn Ftl>, dev: &mut Device| {
                cuts += 1;
                ftl.mount(dev).unwrap();
                dev.arm_power_cut(Some(cut_every));
            };
            match ftl.write(Lpn(lpn as u32), i + 1, &mut dev) {
                Ok(()) => last[lpn] = Some(i + 1),
                Err(FlashError::PowerCut(_)) => {
                    survive(&mut ftl, &mut dev);
                    last[lpn] = None;
                }
                Err(e) => panic!("{e}"),
            }
            if let Some(token) = last[lpn] {
                match ftl.read(Lpn(lpn as u32), &mut dev) {
                    Ok(got) => assert_eq!(got, Some(token), "page {lpn} after {cuts} cuts"),
                    Err(FlashError::PowerCut(_)) => survive(&mut ftl, &mut dev),
                    Err(e) => panic!("{e}"),
                }
            }
        }
        (dev.stats.merges[MergeKind::Fold as usize].count, cuts)
    }

    /// A fold cut short between its copies and its erases once broke a read here (a write took an earlier
    /// block's free page while the last block held an older copy); the mount now merges such a chain.
    #[test]
    fn folds_in_place_survive_power_cuts() {
        for (cut_every, sequential_program, min_folds) in
            [(97, false, 100), (1009, false, 100), (97, true, 10)]
        {
            let (folds, cuts) = folds_under_power_cuts(cut_every, sequential_program);
            assert!(folds > min_folds && cuts > 20, "{folds} folds, {cuts} cuts");
        }
    }
}
