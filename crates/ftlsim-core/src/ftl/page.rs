//! `page`: the page-mapped baseline (TinyFTL paper §III "page-mapped FTLs such as DAC"; FAST paper §2.1
//! "sector-level mapping"), a [`PageStore`] plus a map in RAM.
//!
//! ```text
//! write(lpn): program the next free page of the host frontier; map[lpn] := that page; the old copy becomes
//!             invalid; keep `gc_reserve_blocks` free by garbage collection
//! gc:         victim := a full block by `victim` (greedy: fewest valid pages; cost-benefit: Kawaguchi et al.'s
//!             age x (1 - u) / 2u); copy its valid pages to the GC frontier (the host frontier unless
//!             `gc_frontier`); erase it
//!             with `wear_leveling_threshold` > 0, after a GC run: if the erase counts spread by more than the
//!             threshold, the full block with the lowest erase count is migrated the same way (static wear
//!             levelling, counted as a GC run)
//! read(lpn):  read map[lpn]
//! ```
//! RAM: the map, one entry per logical page, each entry as wide as a physical page address needs (3 bytes for
//! the TinyFTL paper's 16 GB device: 8,192,000 x 3 = 24,576,000 bytes, its "at least 24 MB"). The per-block
//! valid counts and the page validity bits the simulator keeps to run GC are counted too, and a 4-byte age per
//! block for cost-benefit, a 4-byte erase count per block for wear levelling.
//! Spare area: the logical page number (for recovery). Choices: by default (today's behaviour) host writes and
//! GC copies share one frontier, victims are greedy, no wear levelling; free blocks are used in FIFO order; a
//! GC frontier costs one more block of spare. Trim is honoured for reads (a trimmed page reads as nothing until
//! written again), but the page stays live for GC until it is overwritten: were it invalidated, GC could erase
//! its newest copy and leave an older one to win at the next mount, bringing back data older than what was
//! trimmed. The trimmed bits are RAM only, so after a mount a trimmed page reads its last data (allowed).
//!
//! Mount (after a power cut): the map is rebuilt from the spare areas alone (the FAST paper's §3.2 remark on
//! sector maps): every block's spare areas are read in page order up to its first erased page (pages are
//! programmed in order), and the copy of a logical page with the highest sequence number wins, so a GC
//! interrupted after copying a page leaves a stale copy that loses. Cost: one spare read per programmed page,
//! plus one per block that is not full. Blocks with no programmed page are free; of the blocks not full, the
//! newest becomes the host frontier again (the next newest the GC frontier, if any), the others wait for GC
//! like full ones.
//!
//! On a multi-chip array it runs striped by default (`array/mod.rs`): its block is one physical block on
//! every plane, so successive pages go to successive dies and an erase erases every plane at once.
//! `placement=per-die` runs an instance per die instead, page `lpn` on die `lpn mod dies` (`ftl/per_die.rs`).

use super::common::bounds::Checks;
use super::common::mechanisms::boot_scan::{scan_block, Extent};
use super::common::mechanisms::page_store::{PageStore, Victim};
use super::common::profiles::{self, Applied, Profile};
use super::common::structures::bitmap::Bitmap;
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
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

pub const SCHEME: Scheme = Scheme {
    name: "page",
    mapping: super::Mapping::Page,
    summary: "page-mapped baseline: any page anywhere, greedy or cost-benefit garbage collection",
    citation: "TinyFTL paper (Lee et al.) section III; FAST paper (Lee et al. 2007) section 2.1",
    defaults: defaults_of::<PageParams>,
    parse: parse_as::<PageParams>,
    build,
    figures: FIGURES,
    profiles: PROFILES,
    stress_variants,
    mount: Some(Mounts {
        variants: crash_variants,
        log_blocks: false,
        settles_torn_merges: false,
    }),
};

/// The invariant suite's sets: no spare capacity, a GC frontier, cost-benefit victims, static wear levelling.
fn stress_variants() -> Vec<Value> {
    vec![
        json!({"over_provisioning": 0.0}),
        json!({"over_provisioning": 0.0, "gc_frontier": true}),
        json!({"over_provisioning": 0.0, "victim": "cost-benefit"}),
        json!({"gc_frontier": true, "victim": "cost-benefit", "wear_leveling_threshold": 1}),
        json!({"over_provisioning": 0.0, "wear_leveling_threshold": 2, "gc_reserve_blocks": 2}),
    ]
}

/// The crash suites' sets.
fn crash_variants() -> Vec<Value> {
    vec![
        json!({}),
        json!({"gc_frontier": true, "victim": "cost-benefit"}),
        json!({"wear_leveling_threshold": 1, "over_provisioning": 0.0}),
    ]
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PageParams {
    /// Physical space beyond the logical capacity, as a fraction of it (0 to 1), rounded up to whole blocks and
    /// never below the blocks GC needs (`gc_reserve_blocks` + 1 + the frontiers), which a small device takes.
    pub over_provisioning: f64,
    /// Free blocks kept in reserve: garbage collection runs while this many or fewer blocks are free.
    pub gc_reserve_blocks: u32,
    /// GC copies go to a frontier of their own instead of the host writes' one (hot/cold separation).
    pub gc_frontier: bool,
    /// GC victim policy: `greedy` or `cost-benefit`.
    pub victim: Victim,
    /// Static wear levelling: migrate the coldest full block when erase counts spread by more than this; 0 = off.
    pub wear_leveling_threshold: u32,
    /// A named parameter set that behaves as another simulator's page-mapped FTL ([`PROFILES`]):
    /// `psu-flashsim`.
    pub profile: Option<String>,
}

impl Default for PageParams {
    fn default() -> Self {
        PageParams {
            over_provisioning: 0.07,
            gc_reserve_blocks: 1,
            gc_frontier: false,
            victim: Victim::Greedy,
            wear_leveling_threshold: 0,
            profile: None,
        }
    }
}

/// The page scheme's profiles. `psu-flashsim`: PSU FlashSim's page-mapped FTL fills whole blocks with GC
/// copies (a frontier of their own: an implicit hot/cold split) and collects when 3 or fewer blocks are free;
/// with these, ftlsim's erases and copies match it within 0.1% (measured side by side on the same traces).
pub const PROFILES: &[Profile] = &[Profile {
    name: "psu-flashsim",
    peer: "PSU FlashSim, the DFTL authors' DiskSim-based simulator",
    params: || {
        vec![
            ("gc_frontier", true.into()),
            ("gc_reserve_blocks", 3.into()),
        ]
    },
}];

/// The report keys of the page scheme's own figures and what each means.
pub const FIGURES: &[Figure] = &[
    Figure {
        key: "page.profile",
        unit: Unit::Text,
        description: "the profile given: a named parameter set that behaves as another simulator",
        table: true,
    },
    Figure {
        key: "page.profile.<parameter>",
        unit: Unit::Text,
        description:
            "a parameter the profile sets, as it ran (a value given wins over the profile's)",
        table: true,
    },
];

/// The most over-provisioning: the chip at most twice the logical capacity (`common/bounds.rs`).
const MAX_OVER_PROVISIONING: f64 = 1.0;

const HOST: usize = 0;

pub struct PageFtl {
    ppb: u32,
    logical_pages: u32,
    physical_blocks: u32,
    reserve: usize,
    map: SparseVec<Opt<Ppn>>,
    store: PageStore,
    gc: usize,
    victim: Victim,
    wear_threshold: u32,
    /// One bit per logical page: trimmed since its last write.
    trimmed: Bitmap,
    /// Whether a page was trimmed since the mount: until then no request reads or clears a bit (a random line
    /// of the bitmap a request, on a trace without trims).
    any_trimmed: bool,
    /// The profile and the settings of it that ran, for the report.
    profile: Option<Applied>,
}

fn build(params: &SchemeParams, g: &Geometry) -> Result<Built, ConfigError> {
    let p: &PageParams = params.get("page")?;
    let frontiers = if p.gc_frontier { 2 } else { 1 };
    Checks::new("page")
        .number(
            "over_provisioning",
            p.over_provisioning,
            MAX_OVER_PROVISIONING,
            "a fraction of the logical capacity",
        )
        .at_least(
            "gc_reserve_blocks",
            p.gc_reserve_blocks as u64,
            1,
            "GC needs a block to copy into",
        )
        .extra_blocks(
            "gc_reserve_blocks",
            p.gc_reserve_blocks,
            1 + frontiers,
            0,
            g,
        )
        .finish()?;
    // The reserve, the open frontiers and one block more guarantee that some full block holds an invalid page
    // whenever GC runs. Within the limit: over_provisioning <= 1 keeps the first term within the logical blocks.
    let need = p.gc_reserve_blocks + 1 + frontiers;
    let extra = ((g.logical_blocks as f64 * p.over_provisioning).ceil() as u32).max(need);
    let blocks = g.logical_blocks + extra;
    let ftl = PageFtl {
        ppb: g.pages_per_block,
        logical_pages: g.logical_pages(),
        physical_blocks: blocks,
        reserve: p.gc_reserve_blocks as usize,
        map: SparseVec::new(g.logical_pages() as usize, Opt::NONE),
        store: PageStore::new(blocks, g.pages_per_block, frontiers as usize, p.victim),
        gc: frontiers as usize - 1,
        victim: p.victim,
        wear_threshold: p.wear_leveling_threshold,
        trimmed: Bitmap::new(g.logical_pages() as usize),
        any_trimmed: false,
        profile: profiles::applied(p.profile.as_deref(), p, PROFILES),
    };
    Ok(Built {
        ftl: Box::new(ftl),
        extra_blocks: extra,
    })
}

impl Ftl for PageFtl {
    fn read(&mut self, lpn: Lpn, dev: &mut Device) -> Result<Option<Token>> {
        if self.any_trimmed && self.trimmed.get(lpn.index()) {
            return Ok(None);
        }
        match self.map.get(lpn.index()).get() {
            None => Ok(None),
            Some(ppn) => dev.read_token(ppn),
        }
    }

    /// The rest of a chunk of the map never written: those pages were never mapped (a trimmed page reads as
    /// nothing too).
    fn unmapped_from(&self, lpn: Lpn, pages: u32) -> u32 {
        (self.map.untouched_from(lpn.index()) as u32).min(pages)
    }

    /// Two requests ahead, the map entry; one ahead, for a read, the record on the chip of the page it names,
    /// for a write, what invalidating its old copy touches (a validity bit and its block's counts and links:
    /// small tables, but on random overwrites scattered enough to miss), and, when GC is one or two writes
    /// away, what collecting the victim reads first (its owner entries and chip records, written long ago).
    /// With both, page ran 87.2 M to 93.5 M flash ops/s on the throughput bench's (a) (medians of 8).
    fn prefetch(&self, lpn: Lpn, op: Op, ahead: Ahead, dev: &Device) {
        if ahead == Ahead::Far {
            self.map.prefetch(lpn.index());
            return;
        }
        if let Some(ppn) = self.map.get(lpn.index()).get() {
            if op == Op::Read {
                dev.prefetch(ppn);
            } else {
                self.store.prefetch_invalidate(ppn);
            }
        }
        if op == Op::Write
            && self.store.free_blocks() <= self.reserve + 1
            && self.store.room(HOST) <= 1
        {
            self.store.prefetch_victim(dev);
        }
    }

    fn write(&mut self, lpn: Lpn, token: Token, dev: &mut Device) -> Result<()> {
        self.ensure_free(dev)?;
        let ppn = self.store.next_page(HOST, dev)?;
        dev.program(ppn, token, lpn)?;
        let old = std::mem::replace(self.map.get_mut(lpn.index()), Opt::some(ppn));
        if let Some(old) = old.get() {
            self.store.invalidate(old);
        }
        self.store.place(ppn, lpn.0);
        if self.any_trimmed {
            self.trimmed.clear(lpn.index());
        }
        Ok(())
    }

    fn trim(&mut self, lpn: Lpn, _dev: &mut Device) -> Result<()> {
        if self.map.get(lpn.index()).is_some() {
            self.trimmed.set(lpn.index());
            self.any_trimmed = true;
        }
        Ok(())
    }

    fn detects_torn_pages(&self) -> bool {
        true
    }

    fn mount(&mut self, dev: &mut Device) -> Result<()> {
        let blocks = self.physical_blocks;
        self.map = SparseVec::new(self.logical_pages as usize, Opt::NONE);
        self.store.clear();
        self.trimmed.clear_all();
        self.any_trimmed = false;
        // Mount-time RAM: the sequence number of each logical page's newest copy found so far.
        let mut newest = SparseVec::new(self.logical_pages as usize, 0u32);
        let mut open: Vec<(u32, Pbn, u32)> = Vec::new();
        let mut erased = Bitmap::new(blocks as usize);
        for pbn in (0..blocks).map(Pbn) {
            let mut block_seq = 0;
            let programmed = scan_block(dev, pbn, Extent::UpToFirstErased, |_, ppn, spare| {
                block_seq = block_seq.max(spare.seq);
                let Some(lpn) = spare.lpn() else { return };
                if spare.seq > newest.get(lpn.index()) {
                    newest.set(lpn.index(), spare.seq);
                    self.invalidate(lpn);
                    self.map.set(lpn.index(), Opt::some(ppn));
                    self.store.place(ppn, lpn.0);
                }
            })?;
            match programmed {
                0 => {
                    erased.set(pbn.index());
                    self.store.put_erased(pbn);
                }
                n if n == self.ppb => {}
                n => open.push((block_seq, pbn, n)),
            }
        }
        // The newest partly written block is the host frontier; the rest are collected like full blocks.
        open.sort_unstable();
        let host = open.pop().map(|(_, pbn, next)| {
            self.store.open_frontier(HOST, pbn, next);
            pbn
        });
        // With a GC frontier, the next newest partly written block is reopened as it (the spare area does not
        // say which frontier wrote a block; either choice is safe, this one wastes no erased page).
        let gc = (self.gc != HOST)
            .then(|| open.pop())
            .flatten()
            .map(|(_, pbn, next)| {
                self.store.open_frontier(self.gc, pbn, next);
                pbn
            });
        for pbn in (0..blocks).map(Pbn) {
            if !erased.get(pbn.index()) && host != Some(pbn) && gc != Some(pbn) {
                self.store.add_candidate(pbn, HOST);
            }
        }
        Ok(())
    }

    fn ram(&self) -> Vec<RamItem> {
        let entry = address_bytes(self.physical_blocks as u64 * self.ppb as u64);
        let blocks = self.physical_blocks as u64;
        let mut items = vec![RamItem::new(
            "page_map",
            self.logical_pages as u64 * entry,
            format!("{} logical pages x {entry} B", self.logical_pages),
        )];
        items.extend(self.store.ram());
        items.push(RamItem::new(
            "trimmed_bitmap",
            self.trimmed.ram_bytes(),
            format!("{} logical pages x 1 bit", self.logical_pages),
        ));
        if self.victim == Victim::CostBenefit {
            items.push(RamItem::new(
                "block_ages",
                blocks * 4,
                format!("{blocks} physical blocks x 4 B (cost-benefit age)"),
            ));
        }
        if self.wear_threshold > 0 {
            items.push(RamItem::new(
                "erase_counts",
                blocks * 4,
                format!("{blocks} physical blocks x 4 B (wear levelling)"),
            ));
        }
        items
    }

    fn extra(&self, out: &mut Extra) {
        if let Some(profile) = &self.profile {
            profile.report("page", out);
        }
    }
}

impl PageFtl {
    fn invalidate(&mut self, lpn: Lpn) {
        if let Some(old) = self.map.get(lpn.index()).get() {
            self.store.invalidate(old);
        }
    }

    /// Garbage collection until more than `reserve` free blocks remain, then static wear levelling if on.
    fn ensure_free(&mut self, dev: &mut Device) -> Result<()> {
        let mut collected = false;
        while self.store.free_blocks() <= self.reserve {
            let (victim, _, _) = self.store.take_victim(dev)?;
            self.migrate(victim, dev)?;
            collected = true;
        }
        if collected && self.wear_threshold > 0 {
            if let Some(cold) = self.store.coldest(self.wear_threshold, dev) {
                self.migrate(cold, dev)?;
            }
        }
        Ok(())
    }

    /// Moves the valid pages of `victim` to the GC frontier and erases it: one GC run.
    fn migrate(&mut self, victim: Pbn, dev: &mut Device) -> Result<()> {
        let mark = dev.begin_gc();
        self.store
            .collect_into(victim, self.gc, OpClass::Data, dev, &mut self.map)?;
        dev.end_gc(mark);
        Ok(())
    }
}
