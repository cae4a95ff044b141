//! `superblock`: the Superblock FTL (Kang, Jo, Kim, Lee, "A Superblock-based Flash Translation Layer for
//! NAND Flash Memory", EMSOFT 2006), as the TinyFTL paper describes it (§III, §V.A, §VI.B).
//!
//! What we relied on: the TinyFTL paper's text (a superblock is N adjacent logical blocks mapped at block
//! granularity; its pages may sit anywhere in several physical blocks; the page mapping lives in spare areas
//! in multiple levels; log blocks are shared by the logical blocks of a superblock; a block map entry is
//! 3 B, "2 bytes for the physical block number of page directory plus 1 byte for the offset of page
//! directory in the block"; 16 cache entries of page mapping take 1,568 B), and the public abstracts of the
//! EMSOFT 2006 paper and its TECS 2010 version (Jung, Kang, Jo, Kim, Lee): "superblocks are mapped at
//! coarse granularity, while pages inside the superblock are mapped freely at fine granularity to any
//! location in several physical blocks ... the fine-grain mapping information is stored in the spare area".
//! The full texts were not available to us, so the mechanisms below are our own, chosen to fit that.
//!
//! ```text
//! write(lpn): sb := (lpn div pages_per_block) div N
//!             page table of lpn: cache hit, or read the spare copies of sb's page directory and the table
//!             program the next page of sb's active block (the new directory and table ride in its spare)
//! sb's active block full:
//!             sb holds < N + extra_blocks_per_superblock blocks and the pool has more than one free block
//!                 -> take a free block
//!             else if a full block of sb holds a stale page -> collect it: the one with fewest valid pages;
//!                 its valid pages are copied to a fresh block, which becomes the active one; erase it
//!             else (sb's blocks are all valid) reclaim: compact another superblock holding more blocks than
//!                 logical ones (round robin): the valid pages of its blocks that are not wholly valid
//!                 copied, fewest-valid block first, into fresh blocks; those blocks erased
//! read(lpn):  the same page-table lookup, then read the page
//! ```
//! RAM: the block map, one 3 B entry per chip block (§VI.B: 65,536 x 3 = 196,608 on `tinyftl-16g`), and
//! the page-map cache, 16 units x 98 B = 1,568. Derived: the paper gives only the total; we read a unit as
//! a page table of 32 entries x 3 B (chip page address) = 96 B plus 2 B of tag / LRU state. No layout we
//! found makes a 2 B tag name any of the device's 256,000 page tables, so this is a fit to the figure, not
//! a reconstruction. Total 198,176 (Table IV).
//! Spare area: the logical page number; the page directory and the updated page table ride in the spare of
//! each programmed page (free, as the paper says). A cache miss costs one spare read of the superblock's
//! newest directory copy and one of the table's newest copy when it is elsewhere (map class). The chip stamps
//! each program with a sequence number; nothing else is written for recovery: no extra flash operation.
//! Mount (after a power cut; the TinyFTL paper §III: the fine-grain map lives in spare areas): the simulator
//! keeps the cost of the spare-area tables, not their contents, so the mount rebuilds the block map and the
//! page map from each page's logical page and sequence number: every chip block is read up to its first
//! erased page (pages are programmed in order). Cost: one spare read per programmed page plus one per block
//! not full; no page read. The newest copy of a logical page wins (a copy a cut left behind in a collection
//! loses); a block belongs to the superblock of its pages; a superblock's block written last is its active
//! block, continued at its first erased page (a torn program only occupies its page; a block of
//! nothing but one is erased); erased blocks are free (address order); the page-map cache
//! starts empty, the reclaim cursor at 0. A cut inside a collection can leave the victim partly copied and no
//! free block: the mount then finishes the collection into the active block (a victim that fits there).
//! Choices: N = 4 (`superblock_blocks`); `log_blocks` (393, clamped to max(1, logical / 2)) extra blocks are
//! shared by all superblocks, at most `extra_blocks_per_superblock` (2) in one; one free block is kept in
//! reserve for collection; extra physical blocks max(24 per 1,024 of the chip, log blocks + 1) (a run that
//! states its extra blocks gets them, down to log blocks + 1). Collection
//! is recorded as GC (`gc.runs`); a reclaim compaction as a full merge. Trim is ignored. The page-map cache
//! is write-through (the spare copy is written with the data), so evictions cost nothing.
//!
//! On a multi-chip array it runs striped by default (`array/mod.rs`): its block is one physical block on
//! every plane, so successive pages go to successive dies and an erase erases every plane at once.
//! `placement=per-die` runs an instance per die instead, block `lbn` on die `lbn mod dies` (`ftl/per_die.rs`).

use super::common::bounds::{layout_extra_blocks, Checks};
use super::common::mechanisms::boot_scan::{scan_block, Extent};
use super::common::mechanisms::free_pool::FreePool;
use super::common::mechanisms::map_area::{load_page_table, rebuild_spare_tables};
use super::common::structures::lru::Lru;
use super::{
    address_bytes, defaults_of, parse_as, Ahead, Built, Extra, Ftl, Mounts, RamItem, Scheme,
    SchemeParams,
};
use crate::addr::{Lpn, Opt, Pbn, Ppn, Token};
use crate::config::ConfigError;
use crate::config::Geometry;
use crate::device::Device;
use crate::device::Result;
use crate::figure::{Figure, Unit};
use crate::nand::OpClass;
use crate::request::Op;
use crate::sparse::SparseVec;
use crate::stats::MergeKind;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

pub const SCHEME: Scheme = Scheme {
    name: "superblock",
    mapping: super::Mapping::Block,
    summary: "Superblock FTL: N adjacent logical blocks share physical blocks, pages placed freely inside, map in spare areas",
    citation: "Kang, Jo, Kim, Lee, A Superblock-based Flash Translation Layer for NAND Flash Memory, EMSOFT 2006 (as described in the TinyFTL paper, sections III and VI.B)",
    defaults: defaults_of::<SuperblockParams>,
    parse: parse_as::<SuperblockParams>,
    build,
    figures: FIGURES,
    profiles: &[],
    stress_variants,
    mount: Some(Mounts {
        variants: crash_variants,
        log_blocks: true,
        settles_torn_merges: false,
    }),
};

/// The report keys of Superblock's own figures and what each means.
pub const FIGURES: &[Figure] = &[
    Figure {
        key: "superblock.superblock_blocks",
        unit: Unit::Count,
        description: "adjacent logical blocks per superblock (N, superblock_blocks)",
        table: false,
    },
    Figure {
        key: "superblock.log_blocks",
        unit: Unit::Count,
        description: "extra blocks the superblocks share, as run (log_blocks clamped)",
        table: false,
    },
];

/// The invariant suite's sets: superblocks of 2 and 3 blocks, one log block, one-entry caches.
fn stress_variants() -> Vec<Value> {
    vec![
        json!({"superblock_blocks": 2, "log_blocks": 1, "extra_blocks_per_superblock": 1,
               "cache_entries": 1, "page_table_entries": 2}),
        json!({"superblock_blocks": 3, "log_blocks": 2}),
    ]
}

/// The crash suites' sets: the defaults and the invariant suite's.
fn crash_variants() -> Vec<Value> {
    let mut v = vec![json!({})];
    v.extend(stress_variants());
    v
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SuperblockParams {
    /// Adjacent logical blocks in a superblock (N).
    pub superblock_blocks: u32,
    /// Physical blocks beyond the logical ones, shared by all superblocks (TinyFTL paper §VI.A: 393).
    pub log_blocks: u32,
    /// The most of those one superblock may hold at a time (at most the chip's blocks beyond the logical ones).
    pub extra_blocks_per_superblock: u32,
    /// Page tables the page-map cache holds (TinyFTL paper §VI.B: 16; at most one per logical page,
    /// `common/bounds.rs`).
    pub cache_entries: u32,
    /// Logical pages a page table (one cache unit) covers.
    pub page_table_entries: u32,
    /// Physical space beyond the logical capacity, as a fraction of it; none: the TinyFTL layout (24 blocks
    /// in every 1,024). Never less than the scheme uses.
    pub over_provisioning: Option<f64>,
}

impl Default for SuperblockParams {
    fn default() -> Self {
        SuperblockParams {
            superblock_blocks: 4,
            log_blocks: 393,
            extra_blocks_per_superblock: 2,
            cache_entries: 16,
            page_table_entries: 32,
            over_provisioning: None,
        }
    }
}

/// Free blocks kept for collection.
const RESERVE: usize = 1;

pub struct SuperblockFtl {
    ppb: u32,
    n: u32,
    logical_blocks: u32,
    chip_blocks: u32,
    log_blocks: u32,
    max_extra: u32,
    pte: u32,
    /// log2 of `pte` where it is a power of two (the default 32): a page's table by a shift, not a division,
    /// once per copied page.
    pte_shift: Option<u32>,
    /// Physical blocks each superblock holds; the active one (being written) is last.
    owned: Vec<Vec<Pbn>>,
    /// Next erased page of each superblock's active block (`ppb` when full or none).
    next: Vec<u32>,
    valid: Vec<u32>,
    loc: SparseVec<Opt<Ppn>>,
    /// Logical page held by each physical page while it is the newest copy.
    owner: SparseVec<Opt<Lpn>>,
    dir_loc: Vec<Opt<Ppn>>,
    table_loc: SparseVec<Opt<Ppn>>,
    cache: Lru,
    free: FreePool,
    /// Round-robin position of the reclaim search.
    cursor: u32,
    /// Scratch of a collection, kept to spare an allocation each: the victim's owner entries, and the pages
    /// to copy with their logical pages.
    victim_owners: Vec<Opt<Lpn>>,
    moving_pages: Vec<Ppn>,
    moving_lpns: Vec<Opt<Lpn>>,
}

fn build(params: &SchemeParams, g: &Geometry) -> Result<Built, ConfigError> {
    let p: &SuperblockParams = params.get("superblock")?;
    let mut checks = Checks::new("superblock");
    checks.over_provisioning(p.over_provisioning);
    for (name, v) in [
        ("superblock_blocks", p.superblock_blocks),
        ("log_blocks", p.log_blocks),
        ("extra_blocks_per_superblock", p.extra_blocks_per_superblock),
        ("cache_entries", p.cache_entries),
        ("page_table_entries", p.page_table_entries),
    ] {
        checks.at_least(name, v as u64, 1, "a count");
    }
    checks.finish()?;
    let l = g.logical_blocks;
    let n = p.superblock_blocks.min(l);
    let superblocks = l.div_ceil(n);
    let log_blocks = p.log_blocks.min((l / 2).max(1));
    let extra = layout_extra_blocks(g, p.over_provisioning, log_blocks + RESERVE as u32);
    checks
        .at_most(
            "extra_blocks_per_superblock",
            p.extra_blocks_per_superblock as u64,
            extra as u64,
            "a superblock holds no more blocks than the chip has beyond the logical ones",
        )
        .cache_entries("cache_entries", p.cache_entries, g)
        .finish()?;
    let chip_blocks = l + extra;
    let pte = p.page_table_entries;
    let units = g.logical_pages().div_ceil(pte);
    let cap = (n + p.extra_blocks_per_superblock) as usize;
    let ftl = SuperblockFtl {
        ppb: g.pages_per_block,
        n,
        logical_blocks: l,
        chip_blocks,
        log_blocks,
        max_extra: p.extra_blocks_per_superblock,
        pte,
        pte_shift: pte.is_power_of_two().then(|| pte.trailing_zeros()),
        owned: (0..superblocks).map(|_| Vec::with_capacity(cap)).collect(),
        next: vec![g.pages_per_block; superblocks as usize],
        valid: vec![0; chip_blocks as usize],
        loc: SparseVec::new(g.logical_pages() as usize, Opt::NONE),
        owner: SparseVec::new(chip_blocks as usize * g.pages_per_block as usize, Opt::NONE),
        dir_loc: vec![Opt::NONE; superblocks as usize],
        table_loc: SparseVec::new(units as usize, Opt::NONE),
        cache: Lru::new(p.cache_entries, units),
        free: FreePool::with_range(Pbn(0), chip_blocks),
        cursor: 0,
        victim_owners: Vec::new(),
        moving_pages: Vec::new(),
        moving_lpns: Vec::new(),
    };
    Ok(Built {
        ftl: Box::new(ftl),
        extra_blocks: extra,
    })
}

impl Ftl for SuperblockFtl {
    /// Two requests ahead, the page's map entry; one ahead, what the entry names: for a read the page's
    /// record on the chip, for a write the owner entry of the copy it makes stale.
    fn prefetch(&self, lpn: Lpn, op: Op, ahead: Ahead, dev: &Device) {
        if ahead == Ahead::Far {
            self.loc.prefetch(lpn.index());
        } else if let Some(ppn) = self.loc.get(lpn.index()).get() {
            match op {
                Op::Read => dev.prefetch(ppn),
                Op::Write => self.owner.prefetch(ppn.index()),
                // Trim is ignored.
                Op::Trim => {}
            }
        }
    }

    fn read(&mut self, lpn: Lpn, dev: &mut Device) -> Result<Option<Token>> {
        self.lookup_page_table(lpn, dev)?;
        match self.loc.get(lpn.index()).get() {
            None => Ok(None),
            Some(ppn) => dev.read_token(ppn),
        }
    }

    fn write(&mut self, lpn: Lpn, token: Token, dev: &mut Device) -> Result<()> {
        let unit = self.lookup_page_table(lpn, dev)?;
        let sb = self.superblock_of(lpn);
        let ppn = self.host_page(sb, dev)?;
        dev.program(ppn, token, lpn)?;
        self.place(lpn, ppn);
        self.dir_loc[sb as usize] = Opt::some(ppn);
        self.table_loc.set(unit as usize, Opt::some(ppn));
        Ok(())
    }

    fn detects_torn_pages(&self) -> bool {
        true
    }

    fn mount(&mut self, dev: &mut Device) -> Result<()> {
        let (ppb, n) = (self.ppb, self.n);
        let pages = self.loc.len();
        self.owned.iter_mut().for_each(Vec::clear);
        self.next.fill(ppb);
        self.valid.fill(0);
        self.loc = SparseVec::new(pages, Opt::NONE);
        self.owner = SparseVec::new(self.owner.len(), Opt::NONE);
        let mut newest = SparseVec::new(pages, 0u32);
        let mut free = FreePool::default();
        // Each block with a page: (superblock, sequence number of its newest page, block, pages programmed).
        let mut claims: Vec<(u32, u32, Pbn, u32)> = Vec::new();
        let mut written_last = (0, None);
        for pbn in (0..self.chip_blocks).map(Pbn) {
            let (mut sb, mut last) = (None, 0);
            let programmed = scan_block(dev, pbn, Extent::UpToFirstErased, |_, ppn, spare| {
                last = spare.seq;
                // A torn program (no logical page) holds nothing: it only occupies its page.
                let Some(lpn) = spare.lpn() else { return };
                sb = Some(lpn.lbn(ppb).0 / n);
                if spare.seq > newest.get(lpn.index()) {
                    newest.set(lpn.index(), spare.seq);
                    self.place(lpn, ppn);
                }
            })?;
            match (programmed, sb) {
                (0, _) => free.put(pbn),
                // Nothing but a torn program (the first one into a fresh block): erased at mount.
                (_, None) => {
                    dev.erase(pbn)?;
                    free.put(pbn);
                }
                (k, Some(sb)) => {
                    claims.push((sb, last, pbn, k));
                    written_last = written_last.max((last, Some(sb)));
                }
            }
        }
        // A superblock's blocks oldest first: the one written last is its active block, continued at its
        // first erased page. A block a cut left in the middle of a collection or compaction is one more block
        // of its superblock, holding some stale pages; it is collected like any other.
        claims.sort_unstable();
        for &(sb, _, pbn, k) in &claims {
            self.owned[sb as usize].push(pbn);
            self.next[sb as usize] = k;
        }
        let pte = self.pte;
        rebuild_spare_tables(
            &self.loc,
            &newest,
            |lpn| (lpn.lbn(ppb).0 / n) as usize,
            &mut self.dir_loc,
            |lpn| (lpn.0 / pte) as usize,
            &mut self.table_loc,
        );
        self.free = free;
        self.cache = Lru::new(self.cache.capacity(), self.table_loc.len() as u32);
        self.cursor = 0;
        // A cut inside a collection can leave the superblock written last with its victim partly copied and
        // no free block (the copies took the last one): the collection is finished here, into the active
        // block, which has room for the victim's remaining valid pages.
        if let (true, Some(sb)) = (self.free.is_empty(), written_last.1) {
            if let Some(victim) = self.victim(sb) {
                if self.valid[victim.index()] <= ppb - self.next[sb as usize] {
                    self.collect(sb, victim, dev)?;
                }
            }
        }
        Ok(())
    }

    fn ram(&self) -> Vec<RamItem> {
        let chip_pages = self.chip_blocks as u64 * self.ppb as u64;
        let entry = address_bytes(self.chip_blocks as u64) + address_bytes(self.ppb as u64);
        let unit = self.pte as u64 * address_bytes(chip_pages) + 2;
        let units = self.cache.capacity() as u64;
        vec![
            RamItem::new(
                "block_map",
                self.chip_blocks as u64 * entry,
                format!(
                    "{} chip blocks x {entry} B (block number and page offset of the page directory, TinyFTL paper §VI.B)",
                    self.chip_blocks
                ),
            ),
            RamItem::new(
                "page_map_cache",
                units * unit,
                format!(
                    "{units} units x ({} entries x {} B chip page address + 2 B tag/LRU state) (layout derived from \
                     the paper's 1,568 B for 16 entries)",
                    self.pte,
                    address_bytes(chip_pages)
                ),
            ),
        ]
    }

    fn extra(&self, out: &mut Extra) {
        out.push(("superblock.superblock_blocks".into(), self.n.into()));
        out.push(("superblock.log_blocks".into(), self.log_blocks.into()));
    }
}

impl SuperblockFtl {
    fn superblock_of(&self, lpn: Lpn) -> u32 {
        lpn.lbn(self.ppb).0 / self.n
    }

    /// The page table (cache unit) holding `lpn`'s entry.
    #[inline]
    fn table_of(&self, lpn: Lpn) -> u32 {
        match self.pte_shift {
            Some(shift) => lpn.0 >> shift,
            None => lpn.0 / self.pte,
        }
    }

    /// Logical blocks of superblock `sb` (the last one may be short).
    fn logical_in(&self, sb: u32) -> u32 {
        self.n.min(self.logical_blocks - sb * self.n)
    }

    /// Makes the page table of `lpn` resident; a miss reads the spare copies of the superblock's page
    /// directory and of the table. Returns the table's number.
    fn lookup_page_table(&mut self, lpn: Lpn, dev: &mut Device) -> Result<u32> {
        let unit = self.table_of(lpn);
        let dir = self.dir_loc[self.superblock_of(lpn) as usize];
        let table = self.table_loc.get(unit as usize);
        load_page_table(&mut self.cache, unit, dir, table, dev)?;
        Ok(unit)
    }

    /// Records `lpn` at `ppn`, invalidating its old copy.
    fn place(&mut self, lpn: Lpn, ppn: Ppn) {
        if let Some(old) = self.loc.get(lpn.index()).get() {
            self.valid[old.block(self.ppb).index()] -= 1;
            self.owner.set(old.index(), Opt::NONE);
        }
        self.loc.set(lpn.index(), Opt::some(ppn));
        self.owner.set(ppn.index(), Opt::some(lpn));
        self.valid[ppn.block(self.ppb).index()] += 1;
    }

    /// The page a host write to `sb` goes to, collecting or reclaiming blocks as needed.
    fn host_page(&mut self, sb: u32, dev: &mut Device) -> Result<Ppn> {
        loop {
            let s = sb as usize;
            if self.next[s] < self.ppb {
                return self.next_page(sb, dev);
            }
            let limit = (self.logical_in(sb) + self.max_extra) as usize;
            if self.owned[s].len() < limit && self.free.len() > RESERVE {
                return self.next_page(sb, dev);
            }
            if let Some(victim) = self.victim(sb) {
                self.collect(sb, victim, dev)?;
            } else if let Some(other) = self.reclaim_candidate(sb) {
                self.compact(other, dev)?;
            } else if !self.free.is_empty() {
                return self.next_page(sb, dev);
            } else {
                return Err(dev.out_of_space("no free block and no superblock to reclaim"));
            }
        }
    }

    /// The next erased page of `sb`'s active block, opening a free block when it is full.
    fn next_page(&mut self, sb: u32, dev: &mut Device) -> Result<Ppn> {
        let s = sb as usize;
        if self.next[s] == self.ppb {
            let pbn = self
                .free
                .take()
                .ok_or_else(|| dev.out_of_space("no free block"))?;
            self.owned[s].push(pbn);
            self.next[s] = 0;
        }
        let active = *self.owned[s].last().expect("an active block");
        self.next[s] += 1;
        Ok(dev.ppn(active, self.next[s] - 1))
    }

    /// The full block of `sb` with the fewest valid pages, if it holds a stale page.
    fn victim(&self, sb: u32) -> Option<Pbn> {
        let s = sb as usize;
        let blocks = &self.owned[s];
        let full = if self.next[s] == self.ppb {
            blocks.len()
        } else {
            blocks.len() - 1
        };
        blocks[..full]
            .iter()
            .copied()
            .min_by_key(|&b| self.valid[b.index()])
            .filter(|&b| self.valid[b.index()] < self.ppb)
    }

    /// Moves the valid pages of `victim` to `sb`'s write frontier and erases it (one GC run).
    fn collect(&mut self, sb: u32, victim: Pbn, dev: &mut Device) -> Result<()> {
        let mark = dev.begin_gc();
        self.evacuate(sb, victim, dev)?;
        dev.end_gc(mark);
        Ok(())
    }

    /// The victim's valid pages go to the write frontier a run at a time (`Device::copy_run`: one call to
    /// the chip for the pages that fit the active block), their map entries fetched ahead of the copies,
    /// since at scale those entries are the cache misses of a collection. Where the chip cannot take a
    /// run (a power cut armed among its operations) the rest is copied page by page,
    /// with the same operations in the same order.
    fn evacuate(&mut self, sb: u32, victim: Pbn, dev: &mut Device) -> Result<()> {
        let s = sb as usize;
        let pos = self.owned[s]
            .iter()
            .position(|&b| b == victim)
            .expect("owned");
        self.owned[s].remove(pos);
        let first = dev.ppn(victim, 0);
        let mut owners = std::mem::take(&mut self.victim_owners);
        let (mut from, mut lpns) = (
            std::mem::take(&mut self.moving_pages),
            std::mem::take(&mut self.moving_lpns),
        );
        owners.resize(self.ppb as usize, Opt::NONE);
        self.owner.read_range(first.index(), &mut owners);
        from.clear();
        lpns.clear();
        for (offset, &lpn) in (0..self.ppb).zip(&owners) {
            if let Some(l) = lpn.get() {
                from.push(Ppn(first.0 + offset));
                lpns.push(lpn);
                self.loc.prefetch(l.index());
            }
        }
        let moved = self.copy_runs(sb, &from, &lpns, dev);
        (self.victim_owners, self.moving_pages, self.moving_lpns) = (owners, from, lpns);
        moved?;
        // Every page of the victim is stale now: its valid ones were copied, the others overwritten.
        self.owner
            .fill_range(first.index(), self.ppb as usize, Opt::NONE);
        self.valid[victim.index()] = 0;
        dev.erase(victim)?;
        self.free.put(victim);
        Ok(())
    }

    /// Copies the pages `from`, holding `lpns`, to `sb`'s write frontier in order, opening a free block
    /// whenever the active one is full, and records where each went.
    fn copy_runs(
        &mut self,
        sb: u32,
        from: &[Ppn],
        lpns: &[Opt<Lpn>],
        dev: &mut Device,
    ) -> Result<()> {
        let s = sb as usize;
        let mut done = 0;
        while done < from.len() {
            let to = self.next_page(sb, dev)?;
            let run = ((self.ppb - self.next[s]) as usize + 1).min(from.len() - done);
            if !dev.copy_run(OpClass::Data, &from[done..done + run], to) {
                // The page just taken is the first of the copies one by one.
                self.next[s] -= 1;
                for (&source, lpn) in from[done..].iter().zip(&lpns[done..]) {
                    let lpn = lpn.get().expect("a valid page has an owner");
                    let to = self.next_page(sb, dev)?;
                    dev.copy(source, to)?;
                    self.place(lpn, to);
                    self.retarget_map_copies(sb, lpn, to);
                }
                return Ok(());
            }
            self.next[s] += run as u32 - 1;
            self.place_run(sb, &lpns[done..done + run], to);
            done += run;
        }
        Ok(())
    }

    /// Records the copies of `lpns` to the pages from `to` on, in one block: what `place` and
    /// `retarget_map_copies` of each do, but for the old copies' owner entries and valid count, which the
    /// caller clears for the whole victim.
    fn place_run(&mut self, sb: u32, lpns: &[Opt<Lpn>], to: Ppn) {
        self.owner.write_range(to.index(), lpns);
        for (at, lpn) in (to.0..).map(Ppn).zip(lpns) {
            let lpn = lpn.get().expect("a valid page has an owner");
            self.loc.set(lpn.index(), Opt::some(at));
            self.retarget_map_copies(sb, lpn, at);
        }
        self.valid[to.block(self.ppb).index()] += lpns.len() as u32;
    }

    /// A copied page carries the newest directory and its table in its spare area.
    fn retarget_map_copies(&mut self, sb: u32, lpn: Lpn, to: Ppn) {
        self.dir_loc[sb as usize] = Opt::some(to);
        self.table_loc
            .set(self.table_of(lpn) as usize, Opt::some(to));
    }

    /// A superblock other than `sb` holding more blocks than logical ones, in round-robin order.
    fn reclaim_candidate(&mut self, sb: u32) -> Option<u32> {
        let count = self.owned.len() as u32;
        for i in 0..count {
            let c = (self.cursor + i) % count;
            if c != sb && self.owned[c as usize].len() as u32 > self.logical_in(c) {
                self.cursor = (c + 1) % count;
                return Some(c);
            }
        }
        None
    }

    /// Rewrites the valid pages of `sb`'s blocks that are not wholly valid into fresh blocks, fewest-valid
    /// block first, erasing the old ones. `sb` holds more blocks than logical ones, so those k blocks hold at
    /// most (k - 1) blocks' worth of valid pages: at least one block is freed.
    fn compact(&mut self, sb: u32, dev: &mut Device) -> Result<()> {
        let mark = dev.begin_merge();
        let s = sb as usize;
        let ppb = self.ppb;
        let valid = &self.valid;
        let (mut old, kept): (Vec<Pbn>, Vec<Pbn>) = std::mem::take(&mut self.owned[s])
            .into_iter()
            .partition(|&b| valid[b.index()] < ppb);
        self.owned[s] = kept;
        old.sort_by_key(|&b| self.valid[b.index()]);
        self.next[s] = self.ppb;
        for &victim in &old {
            // `evacuate` takes the victim out of the owned blocks; the active one stays last.
            self.owned[s].insert(0, victim);
            self.evacuate(sb, victim, dev)?;
        }
        dev.end_merge(mark, MergeKind::Full);
        Ok(())
    }
}
