//! `dftl`: DFTL, the demand-based page-mapped FTL (Gupta, Kim, Urgaonkar, "DFTL: A Flash Translation Layer
//! Employing Demand-based Selective Caching of Page-level Address Mappings", ASPLOS 2009, §3), a [`PageStore`]
//! whose page map lives in translation pages on flash.
//!
//! ```text
//! translate(lpn):  CMT hit -> the cached entry
//!                  miss    -> CMT full: evict the `cmt_policy`'s victim; if it is dirty, write back its
//!                             translation page (below)
//!                             read translation page lpn / E (located by the GTD) and cache lpn's entry
//! write back tp:   read tp (unless never written), program it at the translation frontier with every dirty
//!                  CMT entry of tp folded in (`writeback`: all become clean, or the evicted one), GTD[tp] := new
//! write(lpn):      GC if needed (`gc`); translate(lpn); program the data frontier; CMT[lpn] := new page, dirty
//! read(lpn):       translate(lpn); read the page
//! gc:              victim := the full block with the most invalid pages, data or translation (§3.3; `victim`
//!                  may be cost-benefit)
//!                  translation block: its valid translation pages go to the translation frontier, written back
//!                  (dirty entries folded in) if the CMT holds dirty entries of them, else copied (`entry` write
//!                  back: always copied); GTD updated
//!                  data block: copy its valid pages to the data frontier; an entry cached in the CMT is
//!                  updated there (lazy copying §3.3: dirty, unless `lazy_copy_dirty` is false); the others
//!                  through their translation pages, one write back per translation page however many of its
//!                  entries moved (batch update §3.3)
//! mount:           scan every block's spare areas; GTD[tp] := newest copy of tp; read each translation page
//!                  once; a logical page whose newest data copy is not what its translation page names, or is
//!                  newer than that translation page, goes back into the CMT, dirty and untrimmed
//! ```
//! E = page_bytes / entry_bytes entries per translation page (512 for 2 KiB pages and 4-byte entries, §3.1).
//! `tests/golden_dftl.rs` works the GC through by hand (lazy copying, a two-entry batch update, a translation
//! block's GC), and each option below.
//!
//! Options: four rules where DFTL implementations differ. Each default is what the paper describes, or where
//! it is silent what ftlsim has always done (the regression fixture records it); the other values are PSU
//! FlashSim's (the DiskSim-based simulator of the paper's authors), and `profile = "psu-flashsim"` sets all
//! four its way (`docs/matching-other-simulators.md`).
//! - `cmt_policy`: `slru` (default), the segmented LRU of §3.1: a hit in the probationary segment promotes
//!   the entry to the protected one (half the CMT, rounded down), whose least recently used entry is demoted
//!   back to the probationary segment's front when it overflows; the victim is the probationary segment's
//!   least recently used entry. `lru`: one LRU list. `age`: PSU FlashSim's age-based replacement
//!   ([`AgeOrder`]: hot and cold segments ordered by an age that each hit raises), which the paper does not
//!   describe.
//! - `writeback`: `page` (default): a dirty eviction's write back folds in every dirty entry of its
//!   translation page and all become clean, as §3.3's batch update does for GC (the page is read and
//!   rewritten whole either way; Algorithm 1 writes the victim's page back and is silent on its other dirty
//!   entries). `entry`: only the evicted entry becomes clean, so each dirty eviction costs a translation-page
//!   write (PSU FlashSim; on Financial1 13,425 translation writes against 114). Either way the programmed
//!   page holds the current value of every dirty entry of it (a controller writes what it knows), so that
//!   a translation page on flash is current as of its program (the mount relies on it); with `entry`, GC of
//!   a translation block copies every valid page, the copy holding the dirty entries, which stay dirty.
//! - `gc`: `per-write` (default): GC before every host write, and before a dirty eviction, while
//!   `gc_reserve_blocks` or fewer blocks are free. `burst`: only when the frontier about to be programmed
//!   (data for a host write, translation for a write back) is full and must open a block, then until more
//!   than `gc_reserve_blocks` are free (PSU FlashSim collects at block boundaries), and after a power cut
//!   inside a burst until the reserve is back ([`MIN_RESERVE_PER_WRITE`] says why). §3.3 triggers GC when
//!   free blocks fall below a threshold and says no more.
//! - `lazy_copy_dirty`: true (default): GC's move of a cached entry makes it dirty (§3.3 lazy copying: the
//!   move reaches flash when the entry is evicted). false: PSU FlashSim leaves the entry clean, so no write
//!   ever records the move (PSU keeps its whole page map in RAM, so nothing is lost there). ftlsim then writes
//!   the move into the translation page's content without counting a program, so that every read stays
//!   correct and checked: translation writes are undercounted by `dftl.moves_left_clean` at most.
//!
//! RAM: the CMT (entries x (logical + physical page address)) and its two recency lists (2 links a slot),
//! the GTD (translation pages x physical page address), and the page store's block state (2-byte valid count
//! a block and a validity bit a page) that GC needs.
//!
//! Spare area (what the mount reads): the chip's sequence number on every page; the logical page number of a
//! data page (none on a torn page, which the mount skips); logical pages + tp for translation page tp (a key past the logical space, so that a GC copy,
//! which carries the logical page field, still names its translation page). No extra flash write is needed to
//! be recoverable.
//!
//! Mount after a power cut (the paper leaves recovery open): every block's spare areas are read in page order
//! up to its first erased page, one spare read a programmed page plus one a block not full. The newest copy of
//! each translation page by sequence number is the GTD's; each is read once (a map page read) to learn which
//! data page its entries name. The rule, where a translation page and the data pages' spare areas disagree:
//! - A logical page's newest data copy is always its current one (GC copies are newer than their source, and a
//!   trimmed page stays live until overwritten), so the data copy wins over the translation page.
//! - A translation page on flash is current as of its program: every write back folds in all dirty entries of
//!   it, and GC writes back (rather than copies) a translation page with dirty entries.
//! - So an entry is trusted, trimmed flag included, only if it names the newest copy and that copy is older
//!   than the translation page. Otherwise the entry was dirty in the CMT at the cut (or in a GC batch not yet
//!   written, or its write back was cut): it goes back into the CMT, dirty, as the newest copy, untrimmed. An
//!   entry can name the newest copy and still be stale: the copy it meant was erased and the address reused for
//!   a newer copy of the same page (its trimmed flag then hid that write: the bug the random-workload crash
//!   test found). A trim whose write back was cut is lost: the page reads its last write, which the
//!   durability contract allows for a trimmed page.
//!
//! Recovered entries wait in a mount-time list, counted as dirty: an eviction's write back folds them in, and
//! a GC run while making room in the CMT moves them in place, as lazy copying does in the CMT. Valid counts,
//! frontiers (the newest partly written block of each kind) and the free pool follow.
//!
//! Flash I/O of translation pages (reads, writes, copies and erases of translation blocks) is in the map class,
//! reported as `map.*`; CMT lookups as `cache.cmt.*`. `dftl.translation_reads.*` and `dftl.translation_writes.*`
//! split `map.page_reads` and `map.page_writes` by cause (CMT miss, eviction write back, GC update of a data
//! block's moved pages, translation-block GC, mount), as the chip counted them around each; `dftl.copies.*`
//! split `gc.copied_pages` into data and translation pages ([`FIGURES`] describes each key).
//!
//! Choices where the paper is silent or open:
//! - The protected segment of `slru` holds half the CMT (rounded down; a 1-entry CMT is plain LRU).
//! - A translation page never written (a fresh device) costs no read: the GTD knows it is empty.
//! - Eviction writes back before the missing entry is read, even when both lie in the same translation page
//!   (two map operations, as the paper's Algorithm 1 does them in that order).
//! - With `page` write back, every translation-page write back, for any reason, folds in all dirty cached
//!   entries of that page; GC of a translation block writes back a page with dirty entries instead of copying
//!   it (same flash operations, but not counted in `gc.copied_pages`), so that the mount can trust a
//!   translation page as of its program.
//! - Trim translates the page (as a write would) and marks the cached entry trimmed (the top bit of the entry,
//!   so devices of 2^31 pages or more are refused): the page reads as nothing, but stays live for GC until it
//!   is overwritten, so that no older copy can win at a mount.
//! - Data and translation pages share one free pool and one victim selection ("simple cost-benefit" in the
//!   paper: the most invalid pages, as its FlashSim does; data wins a tie, its translation blocks stay longer
//!   to be invalidated); GC copies of data go to the host data frontier. GC runs while `gc_reserve_blocks` or
//!   fewer blocks are free, before a host write and before a dirty eviction (so a read or a trim can run GC:
//!   its write back programs a page); with `gc = "burst"` only when that write's frontier is full.
//! - A GC run must leave a free block for the next: a data block's GC may take two (one for its copies, one,
//!   after its erase, for the translation pages it rewrites), a translation block's one. With fewer than two
//!   free, the best victim of each kind that fits is taken (the one with fewer valid pages; translation on a
//!   tie). Without this, uniform writes on a full 64 MiB device ran out of free blocks.
//! - Spare capacity: `over_provisioning` of the logical blocks, at least the translation blocks (translation
//!   pages / pages a block, rounded up) plus the reserve plus 3 (two frontiers and one block of slack).
//! - Reading a logical page never written still translates it (a CMT miss loads an "unmapped" entry).
//!
//! Write amplification: on random writes a data victim's valid pages belong to as many translation pages
//! (batching saves little), so a GC run writes about twice its valid pages; with `victim = "greedy"` the hot
//! translation blocks are collected as soon as they are no fuller than the data victims (26 of 32 pages valid
//! on a full 16 MiB device). `cost-benefit`, which waits for hot blocks to empty, halves it there.
//!
//! On a multi-chip array it runs striped by default (`array/mod.rs`): its block is one physical block on
//! every plane, so successive pages go to successive dies and an erase erases every plane at once.
//! `placement=per-die` runs an instance per die instead, page `lpn` on die `lpn mod dies` (`ftl/per_die.rs`).

use super::common::bounds::Checks;
use super::common::mechanisms::boot_scan::{scan_block, Extent};
use super::common::mechanisms::page_store::{PageStore, Relocate, Victim};
use super::common::profiles::{self, Applied, Profile};
use super::common::structures::age_order::AgeOrder;
use super::common::structures::bitmap::Bitmap;
use super::common::structures::slot_list::SlotList;
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
use crate::stats::{CacheKind, Cause, FlashCounts};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::ops::Range;

pub const SCHEME: Scheme = Scheme {
    name: "dftl",
    mapping: super::Mapping::Page,
    summary: "demand-based page mapping: page map in translation pages on flash, cached mapping table in RAM",
    citation: "Gupta, Kim, Urgaonkar, DFTL, ASPLOS 2009, section 3",
    defaults: defaults_of::<DftlParams>,
    parse: parse_as::<DftlParams>,
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

/// The invariant suite's sets: tiny CMTs and translation pages of 2 and 4 entries, so misses, dirty evictions,
/// batch updates and translation-block GC happen everywhere. Translation pages of 2 entries add half the
/// logical pages again as map pages, so those runs get spare capacity to match.
fn stress_variants() -> Vec<Value> {
    vec![
        json!({"cmt_entries": 1, "entry_bytes": 256, "over_provisioning": 1.0}),
        json!({"cmt_entries": 2, "entry_bytes": 256, "over_provisioning": 0.5}),
        json!({"cmt_entries": 5, "entry_bytes": 128, "over_provisioning": 0.25, "victim": "cost-benefit"}),
        json!({"cmt_entries": 3, "over_provisioning": 0.0}),
        // PSU FlashSim's four rules.
        json!({"cmt_entries": 5, "entry_bytes": 128, "over_provisioning": 0.25, "cmt_policy": "age",
               "writeback": "entry", "gc": "burst", "lazy_copy_dirty": false, "gc_reserve_blocks": 3}),
    ]
}

/// The crash suites' sets.
fn crash_variants() -> Vec<Value> {
    vec![
        json!({"cmt_entries": 2, "entry_bytes": 128}),
        json!({"cmt_entries": 5, "entry_bytes": 64, "victim": "cost-benefit"}),
        json!({}),
        // PSU FlashSim's four rules with its reserve (the psu-flashsim profile's; burst GC needs 3).
        json!({"cmt_entries": 3, "entry_bytes": 128, "cmt_policy": "age", "writeback": "entry",
               "gc": "burst", "lazy_copy_dirty": false, "gc_reserve_blocks": 3}),
    ]
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DftlParams {
    /// Entries of the cached mapping table (CMT).
    pub cmt_entries: u32,
    /// Bytes of one map entry in a translation page (§3.1: 4).
    pub entry_bytes: u32,
    /// Physical space beyond the logical capacity, as a fraction of it.
    pub over_provisioning: f64,
    /// Free blocks kept in reserve: garbage collection runs while this many or fewer blocks are free. At
    /// least 2 ([`MIN_RESERVE_PER_WRITE`]).
    pub gc_reserve_blocks: u32,
    /// GC victim policy: `greedy` (most invalid pages, §3.4) or `cost-benefit`.
    pub victim: Victim,
    /// CMT replacement: `slru` (segmented LRU), `lru` or `age` (PSU FlashSim's).
    pub cmt_policy: CmtPolicy,
    /// What a dirty eviction writes back: `page` (every dirty entry of its translation page) or `entry`.
    pub writeback: Writeback,
    /// When GC runs: `per-write` (before every write that needs it) or `burst` (when a frontier needs a block).
    pub gc: GcTiming,
    /// Whether GC's move of a cached entry makes it dirty (lazy copying, §3.3); false is PSU FlashSim's.
    pub lazy_copy_dirty: bool,
    /// A named parameter set that behaves as another simulator's DFTL ([`PROFILES`]): `psu-flashsim`.
    pub profile: Option<String>,
}

impl Default for DftlParams {
    fn default() -> Self {
        DftlParams {
            cmt_entries: 8192,
            entry_bytes: 4,
            over_provisioning: 0.07,
            gc_reserve_blocks: 2,
            victim: Victim::Greedy,
            cmt_policy: CmtPolicy::Slru,
            writeback: Writeback::Page,
            gc: GcTiming::PerWrite,
            lazy_copy_dirty: true,
            profile: None,
        }
    }
}

/// DFTL's profiles. `psu-flashsim`: PSU FlashSim's four rules (the options above) and its GC threshold (it
/// collects when 3 or fewer blocks are free, as `page`'s profile measured); its CMT of 8,192 entries and
/// 512 entries a translation page (2 KiB pages) are the defaults already.
pub const PROFILES: &[Profile] = &[Profile {
    name: "psu-flashsim",
    peer: "PSU FlashSim, the DFTL authors' DiskSim-based simulator",
    params: || {
        vec![
            ("cmt_policy", "age".into()),
            ("writeback", "entry".into()),
            ("gc", "burst".into()),
            ("lazy_copy_dirty", false.into()),
            ("gc_reserve_blocks", 3.into()),
        ]
    },
}];

/// The CMT's replacement policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CmtPolicy {
    /// Segmented LRU, half the entries protected (§3.1).
    Slru,
    /// Plain LRU.
    Lru,
    /// PSU FlashSim's age-based replacement ([`AgeOrder`]).
    Age,
}

/// What the write back of a dirty evicted entry cleans.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Writeback {
    /// Only the evicted entry (PSU FlashSim: one translation-page write per dirty eviction).
    Entry,
    /// Every dirty entry of its translation page (§3.3's batch update, applied to evictions too).
    Page,
}

/// When garbage collection runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GcTiming {
    /// Before every host write (and dirty eviction) while `gc_reserve_blocks` or fewer blocks are free.
    PerWrite,
    /// Only when a write frontier is full and needs a block (PSU FlashSim: at block boundaries), then in a
    /// burst until more than `gc_reserve_blocks` are free.
    Burst,
}

/// The least `gc_reserve_blocks`, with either `gc` timing: a host write may open a data and a translation
/// block after its GC (one free block is left when it ran at the reserve), and GC then needs that block to
/// copy into. Burst GC needs no more because it also collects when fewer than the reserve are free, which
/// happens only after a power cut inside a burst ([`DftlFtl::collect_for`]). Measured on toy devices (16
/// blocks of 4 pages, 2,000 random workloads of 600 requests, 40 cuts each): a reserve of 2 ran out of free
/// blocks in none, against 15% of runs when a mount did not resume the burst.
pub const MIN_RESERVE_PER_WRITE: u32 = 2;

const DATA: usize = 0;
const TRANSLATION: usize = 1;

/// A page map entry (in a translation page, the CMT, the flash map): the physical page of a logical page, a
/// trimmed flag in its top bit (the page reads as nothing, but stays live until overwritten), or none (never
/// written). 4 bytes, as §3.1's entries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(transparent)]
struct MapEntry(u32);

impl MapEntry {
    /// The logical page was never written.
    const NONE: MapEntry = MapEntry(u32::MAX);
    const TRIMMED: u32 = 1 << 31;
    /// Physical pages an entry can name: the top bit is the trimmed flag (and all ones is none).
    const MAX_PAGES: u64 = MapEntry::TRIMMED as u64 - 1;

    /// A live mapping to `ppn`.
    #[inline]
    fn page(ppn: Ppn) -> MapEntry {
        debug_assert!(
            ppn.0 & MapEntry::TRIMMED == 0,
            "page {ppn} past a map entry"
        );
        MapEntry(ppn.0)
    }

    /// A trimmed mapping: `ppn` holds the page's last write, which reads as nothing.
    #[inline]
    fn trimmed(ppn: Ppn) -> MapEntry {
        MapEntry(MapEntry::page(ppn).0 | MapEntry::TRIMMED)
    }

    /// The page the entry names, trimmed or not.
    #[inline]
    fn ppn(self) -> Option<Ppn> {
        (self != MapEntry::NONE).then_some(Ppn(self.0 & !MapEntry::TRIMMED))
    }

    #[inline]
    fn is_trimmed(self) -> bool {
        self != MapEntry::NONE && self.0 & MapEntry::TRIMMED != 0
    }

    /// The page a host read returns: none for a page never written or trimmed (none has the top bit set too,
    /// so this is one test).
    #[inline]
    fn readable(self) -> Option<Ppn> {
        (self.0 & MapEntry::TRIMMED == 0).then_some(Ppn(self.0))
    }

    /// The entry once GC moved the page it names to `to` (keeping the trimmed flag).
    #[inline]
    fn moved(self, to: Ppn) -> MapEntry {
        if self.is_trimmed() {
            MapEntry::trimmed(to)
        } else {
            MapEntry::page(to)
        }
    }
}

/// The cached mapping table: logical pages in slots, each holding a cached map entry, in the recency order of
/// the `cmt_policy`.
struct Cmt {
    /// The logical page of each slot `0..len` (slots past `len` hold no entry and are never read).
    lpn: Vec<Lpn>,
    entry: Vec<MapEntry>,
    dirty: Bitmap,
    /// Entries per translation page.
    epp: u32,
    /// `page` write back: the dirty slots of each translation page, a list threaded through `dirty_next`: a
    /// write back visits its dirty entries, not all `epp` logical pages of its translation page. A simulator
    /// index, not in `ram()`: a controller could as well scan the CMT.
    dirty_head: Vec<Opt<u32>>,
    dirty_next: Vec<Opt<u32>>,
    /// `entry` write back, where a program of a translation page folds in its dirty entries and they stay
    /// dirty: the simulator folds them in lazily. `folds` counts each translation page's programs, and
    /// `changed_at` is a dirty slot's page count when its entry last changed: where it is behind, a program
    /// since has folded the entry in, and the flash map is given it ([`Cmt::settle`]) before the entry changes
    /// again, is cleaned or the CMT is lost. So a program costs no visit of its page's dirty entries (they
    /// stay dirty through every program of it, and were visited at each one). Not in `ram()`.
    folds: Vec<u64>,
    changed_at: Vec<u64>,
    lazy_fold: bool,
    order: Recency,
    len: u32,
}

/// The CMT's replacement order (`cmt_policy`).
enum Recency {
    /// `slru` and `lru` (a protected segment of no entries).
    Segmented(SegmentedLru),
    Age(AgeOrder),
}

/// A segmented LRU (§3.1): a hit in the probationary segment promotes the entry to the protected one, whose
/// least recently used entry is demoted back to the probationary segment's front when it overflows. With a
/// protected segment of no entries it is a plain LRU.
struct SegmentedLru {
    protected: Bitmap,
    probation: SlotList,
    protect: SlotList,
    protected_len: u32,
    protected_cap: u32,
}

impl SegmentedLru {
    fn new(capacity: u32, protected_cap: u32) -> SegmentedLru {
        let c = capacity as usize;
        SegmentedLru {
            protected: Bitmap::new(c),
            probation: SlotList::new(c),
            protect: SlotList::new(c),
            protected_len: 0,
            protected_cap,
        }
    }

    /// A hit: the entry moves to the front of the protected segment (promoted from the probationary one).
    fn touch(&mut self, slot: u32) {
        let s = slot as usize;
        if self.protected.get(s) {
            self.protect.move_to_front(slot);
            return;
        }
        if self.protected_cap == 0 {
            self.probation.move_to_front(slot);
            return;
        }
        self.probation.unlink(slot);
        self.protect.push_front(slot);
        self.protected.set(s);
        self.protected_len += 1;
        if self.protected_len > self.protected_cap {
            let demoted = self.protect.back().expect("an overfull segment has a back");
            self.protect.unlink(demoted);
            self.protected.clear(demoted as usize);
            self.protected_len -= 1;
            self.probation.push_front(demoted);
        }
    }

    /// The eviction candidate of a full CMT: the probationary segment's least recently used slot.
    fn victim(&self) -> u32 {
        self.probation.back().expect(
            "a full CMT has a probationary entry (the protected segment holds at most half)",
        )
    }
}

impl Recency {
    fn new(policy: CmtPolicy, capacity: u32) -> Recency {
        match policy {
            CmtPolicy::Slru => Recency::Segmented(SegmentedLru::new(capacity, capacity / 2)),
            CmtPolicy::Lru => Recency::Segmented(SegmentedLru::new(capacity, 0)),
            CmtPolicy::Age => Recency::Age(AgeOrder::new(capacity as usize)),
        }
    }

    fn touch(&mut self, slot: u32) {
        match self {
            Recency::Segmented(lru) => lru.touch(slot),
            Recency::Age(age) => age.touch(slot),
        }
    }

    fn victim(&self) -> u32 {
        match self {
            Recency::Segmented(lru) => lru.victim(),
            Recency::Age(age) => age.victim(),
        }
    }

    /// Unlinks the evicted `slot` (the victim).
    fn remove(&mut self, slot: u32) {
        match self {
            Recency::Segmented(lru) => lru.probation.unlink(slot),
            Recency::Age(age) => age.remove(slot),
        }
    }

    /// Links a new entry in `slot`.
    fn insert(&mut self, slot: u32) {
        match self {
            Recency::Segmented(lru) => lru.probation.push_front(slot),
            Recency::Age(age) => age.insert(slot),
        }
    }
}

impl Cmt {
    fn new(
        capacity: u32,
        logical_pages: u32,
        epp: u32,
        policy: CmtPolicy,
        writeback: Writeback,
    ) -> Cmt {
        let c = capacity as usize;
        let tps = logical_pages.div_ceil(epp) as usize;
        let lazy_fold = writeback == Writeback::Entry;
        Cmt {
            lpn: vec![Lpn(0); c],
            entry: vec![MapEntry::NONE; c],
            dirty: Bitmap::new(c),
            epp,
            dirty_head: vec![Opt::NONE; if lazy_fold { 0 } else { tps }],
            dirty_next: vec![Opt::NONE; if lazy_fold { 0 } else { c }],
            folds: vec![0; if lazy_fold { tps } else { 0 }],
            changed_at: vec![0; if lazy_fold { c } else { 0 }],
            lazy_fold,
            order: Recency::new(policy, capacity),
            len: 0,
        }
    }

    /// The translation page of `slot`'s entry.
    fn tp_of(&self, slot: u32) -> usize {
        (self.lpn[slot as usize].0 / self.epp) as usize
    }

    /// Sets `slot`'s entry, the flash map first given the entry a lazy fold left out ([`Cmt::settle`]).
    #[inline(always)]
    fn set_entry(&mut self, slot: u32, entry: MapEntry, by_lpn: &mut LpnTable) {
        if self.lazy_fold {
            self.settle_for_change(slot, by_lpn);
        }
        self.entry[slot as usize] = entry;
    }

    /// [`Cmt::set_entry`]'s part for `entry` write back: the flash map settled, and the change dated.
    #[inline(never)]
    fn settle_for_change(&mut self, slot: u32, by_lpn: &mut LpnTable) {
        self.settle(slot, by_lpn);
        self.changed_at[slot as usize] = self.folds[self.tp_of(slot)];
    }

    /// With `entry` write back: gives the flash map dirty `slot`'s entry where a program of its translation
    /// page has folded it in since it last changed.
    fn settle(&self, slot: u32, by_lpn: &mut LpnTable) {
        let s = slot as usize;
        if self.lazy_fold && self.dirty.get(s) && self.changed_at[s] < self.folds[self.tp_of(slot)]
        {
            by_lpn.set_flash(self.lpn[s], self.entry[s]);
        }
    }

    /// [`Cmt::settle`] for every slot: the flash map as the translation pages on flash hold it.
    fn settle_all(&self, by_lpn: &mut LpnTable) {
        if self.lazy_fold {
            for slot in 0..self.len {
                self.settle(slot, by_lpn);
            }
        }
    }

    fn touch(&mut self, slot: u32) {
        self.order.touch(slot);
    }

    /// Marks `slot` dirty; true if it was clean.
    fn mark_dirty(&mut self, slot: u32) -> bool {
        let s = slot as usize;
        if self.dirty.get(s) {
            return false;
        }
        self.dirty.set(s);
        let tp = self.tp_of(slot);
        if self.lazy_fold {
            self.changed_at[s] = self.folds[tp];
        } else {
            self.dirty_next[s] = self.dirty_head[tp];
            self.dirty_head[tp] = Opt::some(slot);
        }
        true
    }

    /// A program of translation page `tp` folds in its dirty entries: with `page` write back each goes to
    /// `fold` as (logical page, entry) and becomes clean; with `entry` write back they stay dirty and are
    /// folded in lazily ([`Cmt::folds`]).
    fn fold_dirty(&mut self, tp: u32, mut fold: impl FnMut(Lpn, MapEntry)) {
        if self.lazy_fold {
            self.folds[tp as usize] += 1;
            return;
        }
        let mut next = self.dirty_head[tp as usize].get();
        self.dirty_head[tp as usize] = Opt::NONE;
        while let Some(slot) = next {
            let s = slot as usize;
            self.dirty.clear(s);
            fold(self.lpn[s], self.entry[s]);
            next = self.dirty_next[s].get();
        }
    }

    /// Cleans the dirty `slot` alone (`entry` write back, after its translation page's program), the flash
    /// map given its entry.
    fn clean_one(&mut self, slot: u32, by_lpn: &mut LpnTable) {
        debug_assert!(
            self.lazy_fold,
            "`page` write back cleans a page's entries together"
        );
        debug_assert!(
            self.dirty.get(slot as usize),
            "only a dirty entry is cleaned"
        );
        self.settle(slot, by_lpn);
        self.dirty.clear(slot as usize);
    }

    fn is_full(&self) -> bool {
        self.len as usize == self.lpn.len()
    }

    /// The eviction candidate of a full CMT.
    fn victim(&self) -> u32 {
        self.order.victim()
    }

    /// Caches `lpn -> ppn` (clean) as the policy's newest entry, in `slot` (an evicted one) or a fresh slot;
    /// `by_lpn` takes the logical pages' slots.
    fn insert(
        &mut self,
        lpn: Lpn,
        entry: MapEntry,
        reuse: Option<u32>,
        by_lpn: &mut LpnTable,
    ) -> u32 {
        let slot = match reuse {
            Some(slot) => {
                debug_assert!(
                    !self.dirty.get(slot as usize),
                    "an evicted entry is written back first"
                );
                self.order.remove(slot);
                by_lpn.set_slot(self.lpn[slot as usize], Opt::NONE);
                slot
            }
            None => {
                self.len += 1;
                self.len - 1
            }
        };
        let s = slot as usize;
        self.lpn[s] = lpn;
        self.entry[s] = entry;
        self.dirty.clear(s);
        by_lpn.set_slot(lpn, Opt::some(slot));
        self.order.insert(slot);
        slot
    }

    /// The CMT is lost (a power cut): its logical pages have no slot in `by_lpn` any more.
    fn forget_slots(&self, by_lpn: &mut LpnTable) {
        for s in 0..self.len as usize {
            by_lpn.set_slot(self.lpn[s], Opt::NONE);
        }
    }
}

/// Per logical page, side by side in 8 bytes: its entry in the translation pages on flash (the flash map) and
/// its CMT slot. At scale each is a cache miss, and they are read together: a CMT miss loads the flash entry,
/// and a GC move looks up the page's slot and, uncached, rewrites its flash entry in the batch update (§3.3).
/// A simulator's layout: a controller holds the slots in the CMT and the entries in translation pages.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(8))]
struct ByLpn {
    flash: MapEntry,
    slot: Opt<u32>,
}

struct LpnTable(SparseVec<ByLpn>);

impl LpnTable {
    fn new(logical_pages: u32) -> LpnTable {
        LpnTable(SparseVec::new(
            logical_pages as usize,
            ByLpn {
                flash: MapEntry::NONE,
                slot: Opt::NONE,
            },
        ))
    }

    /// What `lpn`'s translation page on flash holds for it.
    #[inline]
    fn flash(&self, lpn: Lpn) -> MapEntry {
        self.0.get(lpn.index()).flash
    }

    #[inline]
    fn flash_mut(&mut self, lpn: Lpn) -> &mut MapEntry {
        &mut self.0.get_mut(lpn.index()).flash
    }

    #[inline]
    fn set_flash(&mut self, lpn: Lpn, entry: MapEntry) {
        *self.flash_mut(lpn) = entry;
    }

    /// `lpn`'s CMT slot, if it is cached.
    #[inline]
    fn slot(&self, lpn: Lpn) -> Option<u32> {
        self.0.get(lpn.index()).slot.get()
    }

    #[inline]
    fn set_slot(&mut self, lpn: Lpn, slot: Opt<u32>) {
        self.0.get_mut(lpn.index()).slot = slot;
    }

    /// A hint: `lpn`'s slot or flash entry will be read soon.
    #[inline]
    fn prefetch(&self, lpn: Lpn) {
        self.0.prefetch(lpn.index());
    }
}

pub struct DftlFtl {
    ppb: u32,
    logical_pages: u32,
    physical_blocks: u32,
    /// Entries per translation page.
    epp: u32,
    reserve: usize,
    store: PageStore,
    /// What the translation pages on flash hold, entry by entry (the chip keeps a token per page, not its
    /// bytes): changed only once the program of a translation page has succeeded, so it is always the content
    /// of each translation page's newest copy (save the uncounted moves of `lazy_copy_dirty = false`), but
    /// for a dirty entry of `entry` write back, which the CMT gives it only when needed ([`Cmt::settle`]). A
    /// CMT miss and the mount read it through a counted page read. Kept beside each logical page's CMT slot.
    by_lpn: LpnTable,
    /// Global translation directory: where each translation page's newest copy is, none if never written.
    gtd: Vec<Opt<Ppn>>,
    /// Dirty CMT entries per translation page.
    dirty_in: Vec<u32>,
    cmt: Cmt,
    /// GC's moves of pages not cached, batched by translation page; capacity one block.
    moved: Vec<Move>,
    /// Mount only (empty otherwise): recovered entries (lpn, page) not yet back in the CMT, sorted by lpn;
    /// none for the page once written back. Like dirty CMT entries they count in `dirty_in`, a write back of
    /// their translation page folds them in, and GC moves them in place (lazy copying).
    pending: Vec<(Lpn, Opt<Ppn>)>,
    /// The translation pages a translation block's GC copied (`entry` write back folds their dirty entries in
    /// once copied); capacity one block.
    copied_tps: Vec<u32>,
    /// The translation pages a translation block's GC finds valid in its victim (scratch).
    victim_tps: Vec<u32>,
    cmt_policy: CmtPolicy,
    writeback: Writeback,
    gc: GcTiming,
    lazy_copy_dirty: bool,
    /// Translation-page reads and writes by cause ([`MapIo`]), as the chip counted them.
    map_io: [MapIoCount; MapIo::ALL.len()],
    /// GC's page copies: data pages, translation pages.
    copies: [u64; 2],
    /// `lazy_copy_dirty = false`: GC moves of clean cached entries left clean (their translation page on flash
    /// took the move without a counted program).
    moves_left_clean: u64,
    /// The profile and the settings of it that ran, for the report.
    profile: Option<Applied>,
}

/// Why translation pages were read or written, for the report's `dftl.translation_reads.*` and
/// `dftl.translation_writes.*`: these partition `map.page_reads` and `map.page_writes`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum MapIo {
    /// A CMT miss reads its translation page.
    Miss,
    /// A dirty eviction's write back (read the old copy, program the new).
    Eviction,
    /// GC of a data block rewrites the translation pages of the uncached pages it moved (§3.3 batch update).
    GcUpdate,
    /// GC of a translation block: its valid pages copied (or, in `page` write back, written back).
    TranslationGc,
    /// The mount reads each translation page once.
    Mount,
}

impl MapIo {
    const ALL: [MapIo; 5] = [
        MapIo::Miss,
        MapIo::Eviction,
        MapIo::GcUpdate,
        MapIo::TranslationGc,
        MapIo::Mount,
    ];

    fn name(self) -> &'static str {
        match self {
            MapIo::Miss => "miss",
            MapIo::Eviction => "eviction",
            MapIo::GcUpdate => "gc_update",
            MapIo::TranslationGc => "translation_gc",
            MapIo::Mount => "mount",
        }
    }
}

#[derive(Clone, Copy, Debug, Default)]
struct MapIoCount {
    reads: u64,
    writes: u64,
}

/// The report keys of DFTL's own figures and what each means (the report's schema lists them).
pub const FIGURES: &[Figure] = &[
    Figure {
        key: "dftl.translation_reads.miss",
        unit: Unit::Count,
        description: "translation-page reads of CMT misses",
        table: true,
    },
    Figure {
        key: "dftl.translation_reads.eviction",
        unit: Unit::Count,
        description: "translation-page reads of dirty evictions' write backs (the old copy, read to be rewritten)",
        table: true,
    },
    Figure {
        key: "dftl.translation_reads.gc_update",
        unit: Unit::Count,
        description: "translation-page reads of GC updates: a data block's GC rewrites the translation pages of the \
                      uncached pages it moved",
        table: true,
    },
    Figure {
        key: "dftl.translation_reads.translation_gc",
        unit: Unit::Count,
        description: "translation-page reads of translation blocks' GC (copies, or write backs of pages with dirty entries)",
        table: true,
    },
    Figure {
        key: "dftl.translation_reads.mount",
        unit: Unit::Count,
        description: "translation-page reads of mounts (each page once)",
        table: true,
    },
    Figure {
        key: "dftl.translation_writes.eviction",
        unit: Unit::Count,
        description: "translation-page writes of dirty evictions' write backs",
        table: true,
    },
    Figure {
        key: "dftl.translation_writes.gc_update",
        unit: Unit::Count,
        description: "translation-page writes of GC updates (one per translation page of the uncached moved pages)",
        table: true,
    },
    Figure {
        key: "dftl.translation_writes.translation_gc",
        unit: Unit::Count,
        description: "translation-page writes of translation blocks' GC (copies and write backs)",
        table: true,
    },
    Figure {
        key: "dftl.copies.data",
        unit: Unit::Count,
        description: "data pages GC copied (with dftl.copies.translation, gc.copied_pages)",
        table: true,
    },
    Figure {
        key: "dftl.copies.translation",
        unit: Unit::Count,
        description: "translation pages GC copied (not counting those written back instead)",
        table: true,
    },
    Figure {
        key: "dftl.moves_left_clean",
        unit: Unit::Count,
        description: "lazy_copy_dirty=false: GC moves of clean cached entries left clean, whose translation page took the \
                      move without a counted write (PSU FlashSim's accounting)",
        table: true,
    },
    Figure {
        key: "dftl.profile",
        unit: Unit::Text,
        description: "the profile given: a named parameter set that behaves as another simulator",
        table: true,
    },
    Figure {
        key: "dftl.profile.<parameter>",
        unit: Unit::Text,
        description: "a parameter the profile sets, as it ran (a value given wins over the profile's)",
        table: true,
    },
];

fn build(params: &SchemeParams, g: &Geometry) -> Result<Built, ConfigError> {
    let p: &DftlParams = params.get("dftl")?;
    Checks::new("dftl")
        .number(
            "over_provisioning",
            p.over_provisioning,
            1.0,
            "a fraction of the logical capacity",
        )
        .at_least("cmt_entries", p.cmt_entries as u64, 1, "the CMT needs an entry")
        .at_least("entry_bytes", p.entry_bytes as u64, 1, "a map entry has bytes")
        .at_most(
            "entry_bytes",
            p.entry_bytes as u64,
            g.page_bytes as u64,
            "a translation page holds at least one entry",
        )
        .at_least(
            "gc_reserve_blocks",
            p.gc_reserve_blocks as u64,
            MIN_RESERVE_PER_WRITE as u64,
            "a host write may open a data and a translation block, and GC then needs a block to copy into",
        )
        .extra_blocks("gc_reserve_blocks", p.gc_reserve_blocks, 3, 0, g)
        .finish()?;
    let epp = g.page_bytes / p.entry_bytes;
    let translation_pages = g.logical_pages().div_ceil(epp);
    let need = translation_pages.div_ceil(g.pages_per_block) + p.gc_reserve_blocks + 3;
    let extra = ((g.logical_blocks as f64 * p.over_provisioning).ceil() as u32).max(need);
    let blocks = g.logical_blocks + extra;
    let pages = blocks as u64 * g.pages_per_block as u64;
    if pages > MapEntry::MAX_PAGES {
        return Err(ConfigError::Param(format!(
            "scheme `dftl`: {pages} physical pages are too many; a map entry keeps its top bit for the trimmed \
             flag, so at most {} pages can be addressed; use a smaller capacity or larger pages",
            MapEntry::MAX_PAGES
        )));
    }
    let ftl = DftlFtl {
        ppb: g.pages_per_block,
        logical_pages: g.logical_pages(),
        physical_blocks: blocks,
        epp,
        reserve: p.gc_reserve_blocks as usize,
        store: PageStore::new(blocks, g.pages_per_block, 2, p.victim).separate_victims(),
        by_lpn: LpnTable::new(g.logical_pages()),
        gtd: vec![Opt::NONE; translation_pages as usize],
        dirty_in: vec![0; translation_pages as usize],
        cmt: Cmt::new(
            p.cmt_entries.min(g.logical_pages()),
            g.logical_pages(),
            epp,
            p.cmt_policy,
            p.writeback,
        ),
        moved: Vec::with_capacity(g.pages_per_block as usize),
        pending: Vec::new(),
        copied_tps: Vec::with_capacity(g.pages_per_block as usize),
        victim_tps: Vec::with_capacity(g.pages_per_block as usize),
        cmt_policy: p.cmt_policy,
        writeback: p.writeback,
        gc: p.gc,
        lazy_copy_dirty: p.lazy_copy_dirty,
        map_io: Default::default(),
        copies: [0; 2],
        moves_left_clean: 0,
        profile: profiles::applied(p.profile.as_deref(), p, PROFILES),
    };
    Ok(Built {
        ftl: Box::new(ftl),
        extra_blocks: extra,
    })
}

impl Ftl for DftlFtl {
    /// Two requests ahead, the CMT's slot of the page and its flash map entry (read on a miss); one ahead,
    /// for a read of a cached page, the record on the chip of the page it names.
    fn prefetch(&self, lpn: Lpn, op: Op, ahead: Ahead, dev: &Device) {
        if ahead == Ahead::Far {
            self.by_lpn.prefetch(lpn);
            // A miss in a full CMT evicts its victim, whose slot entry it clears.
            if self.cmt.is_full() {
                self.by_lpn
                    .prefetch(self.cmt.lpn[self.cmt.victim() as usize]);
            }
        } else if op == Op::Read {
            if let Some(ppn) = self
                .by_lpn
                .slot(lpn)
                .and_then(|s| self.cmt.entry[s as usize].readable())
            {
                dev.prefetch(ppn);
            }
        }
    }

    fn read(&mut self, lpn: Lpn, dev: &mut Device) -> Result<Option<Token>> {
        let slot = self.translate(lpn, dev)?;
        match self.cmt.entry[slot as usize].readable() {
            None => Ok(None),
            Some(ppn) => dev.read_token(ppn),
        }
    }

    fn write(&mut self, lpn: Lpn, token: Token, dev: &mut Device) -> Result<()> {
        if self.gc == GcTiming::PerWrite {
            self.ensure_free(dev)?;
        }
        let slot = self.translate(lpn, dev)?;
        if self.gc == GcTiming::Burst {
            self.collect_for(DATA, dev)?;
        }
        let ppn = self.store.next_page(DATA, dev)?;
        dev.program(ppn, token, lpn)?;
        self.store.place(ppn, lpn.0);
        let s = slot as usize;
        if let Some(old) = self.cmt.entry[s].ppn() {
            self.store.invalidate(old);
        }
        self.cmt
            .set_entry(slot, MapEntry::page(ppn), &mut self.by_lpn);
        self.mark_dirty(slot);
        Ok(())
    }

    fn trim(&mut self, lpn: Lpn, dev: &mut Device) -> Result<()> {
        let slot = self.translate(lpn, dev)?;
        let s = slot as usize;
        if let Some(ppn) = self.cmt.entry[s].readable() {
            self.cmt
                .set_entry(slot, MapEntry::trimmed(ppn), &mut self.by_lpn);
            self.mark_dirty(slot);
        }
        Ok(())
    }

    fn detects_torn_pages(&self) -> bool {
        true
    }

    fn mount(&mut self, dev: &mut Device) -> Result<()> {
        let (blocks, lp, tps) = (
            self.physical_blocks,
            self.logical_pages,
            self.gtd.len() as u32,
        );
        self.store.clear();
        // The translation pages on flash hold what their programs folded in; the CMT is lost.
        self.cmt.settle_all(&mut self.by_lpn);
        self.cmt.forget_slots(&mut self.by_lpn);
        self.cmt = Cmt::new(
            self.cmt.lpn.len() as u32,
            lp,
            self.epp,
            self.cmt_policy,
            self.writeback,
        );
        self.dirty_in.fill(0);
        self.moved.clear();
        self.gtd.fill(Opt::NONE);
        // Mount-time RAM: each logical page's newest data copy ((sequence << 32) | page, 0 for none) and each
        // translation page's newest sequence number.
        let mut newest = SparseVec::new(lp as usize, 0u64);
        let mut tp_seq = vec![0u32; tps as usize];
        let mut open: [Vec<(u32, Pbn, u32)>; 2] = [Vec::new(), Vec::new()];
        let mut full = Vec::new();
        let gtd = &mut self.gtd;
        for pbn in (0..blocks).map(Pbn) {
            let (mut block_seq, mut kind) = (0, DATA);
            let programmed = scan_block(dev, pbn, Extent::UpToFirstErased, |_, ppn, spare| {
                block_seq = block_seq.max(spare.seq);
                let Some(lpn) = spare.lpn() else {
                    // A torn program (cut by a power loss): unreadable, it holds nothing.
                    return;
                };
                if lpn.0 < lp {
                    let l = lpn.index();
                    if spare.seq as u64 > newest.get(l) >> 32 {
                        newest.set(l, (spare.seq as u64) << 32 | ppn.0 as u64);
                    }
                } else {
                    kind = TRANSLATION;
                    let tp = (lpn.0 - lp) as usize;
                    if spare.seq > tp_seq[tp] {
                        tp_seq[tp] = spare.seq;
                        gtd[tp] = Opt::some(ppn);
                    }
                }
            })?;
            match programmed {
                0 => self.store.put_erased(pbn),
                n if n == self.ppb => full.push((pbn, kind)),
                n => open[kind].push((block_seq, pbn, n)),
            }
        }
        // The newest copy of each translation page is read once: its entries tell which data copies it names.
        let since = dev.map_counts();
        for tp in 0..tps {
            if let Some(at) = self.gtd[tp as usize].get() {
                dev.read_token_in(OpClass::Map, at)?;
                self.store.place(at, tp);
            }
        }
        self.tally(MapIo::Mount, since, dev);
        // Every logical page's newest data copy is its current one (GC and trim keep the newest copy live), and
        // a translation page on flash is current as of its program (every write back and every GC move of it
        // folds in the dirty entries). So the entry stands if the copy it names is the newest and older than the
        // translation page; else the entry was dirty at the cut (a newer copy may even sit at the address it
        // names, with its trimmed flag meant for an older one): it is recovered, untrimmed.
        self.pending.clear();
        for lpn in (0..lp).map(Lpn) {
            let n = newest.get(lpn.index());
            if n == 0 {
                continue;
            }
            let (seq, ppn) = ((n >> 32) as u32, Ppn(n as u32));
            self.store.place(ppn, lpn.0);
            let entry = self.by_lpn.flash(lpn);
            let tp = lpn.0 / self.epp;
            if entry.ppn() != Some(ppn) || seq > tp_seq[tp as usize] {
                self.pending.push((lpn, Opt::some(ppn)));
                self.dirty_in[tp as usize] += 1;
            }
        }
        // The newest partly written block of each kind is its frontier again; the others wait for GC (with the
        // valid counts just rebuilt).
        for (kind, blocks) in open.iter_mut().enumerate() {
            blocks.sort_unstable();
            if let Some((_, pbn, next)) = blocks.pop() {
                self.store.open_frontier(kind, pbn, next);
            }
            full.extend(blocks.iter().map(|&(_, pbn, _)| (pbn, kind)));
        }
        for (pbn, kind) in full {
            self.store.add_candidate(pbn, kind);
        }
        // Recovered entries go back into the CMT as dirty, evicting (and so writing back) when it is full; an
        // eviction's write back or GC's may write one back first.
        while let Some(&(_, ppn)) = self.pending.last() {
            let reuse = match ppn.get() {
                None => None,
                Some(_) => self.make_room(dev)?,
            };
            let (lpn, ppn) = self.pending.pop().expect("the loop saw a last entry");
            if let Some(ppn) = ppn.get() {
                let slot = self
                    .cmt
                    .insert(lpn, MapEntry::page(ppn), reuse, &mut self.by_lpn);
                // Already counted in `dirty_in` as pending.
                self.cmt.mark_dirty(slot);
            }
        }
        Ok(())
    }

    fn ram(&self) -> Vec<RamItem> {
        let pages = self.physical_blocks as u64 * self.ppb as u64;
        let ppn_b = address_bytes(pages);
        let lpn_b = address_bytes(self.logical_pages as u64);
        let cmt = self.cmt.lpn.len() as u64;
        let link_b = address_bytes(cmt);
        let tps = self.gtd.len() as u64;
        let mut items = vec![
            RamItem::new(
                "cmt",
                cmt * (lpn_b + ppn_b),
                format!("{cmt} entries x ({lpn_b} B logical + {ppn_b} B physical page)"),
            ),
            match self.cmt_policy {
                CmtPolicy::Slru | CmtPolicy::Lru => RamItem::new(
                    "cmt_lists",
                    cmt * 2 * link_b,
                    format!(
                        "{cmt} entries x 2 links x {link_b} B ({})",
                        if self.cmt_policy == CmtPolicy::Slru {
                            "segmented LRU"
                        } else {
                            "LRU"
                        }
                    ),
                ),
                // PSU FlashSim's int map_age; it finds the lowest age by scanning the table.
                CmtPolicy::Age => RamItem::new(
                    "cmt_ages",
                    cmt * 4,
                    format!("{cmt} entries x 4 B age (age-based replacement)"),
                ),
            },
            RamItem::new(
                "gtd",
                tps * ppn_b,
                format!(
                    "{tps} translation pages ({} entries each) x {ppn_b} B",
                    self.epp
                ),
            ),
        ];
        items.extend(self.store.ram());
        items
    }

    fn reset_counters(&mut self) {
        self.map_io = Default::default();
        self.copies = [0; 2];
        self.moves_left_clean = 0;
    }

    fn extra(&self, out: &mut Extra) {
        for why in MapIo::ALL {
            let io = self.map_io[why as usize];
            out.push((
                format!("dftl.translation_reads.{}", why.name()),
                io.reads.into(),
            ));
        }
        for why in MapIo::ALL
            .into_iter()
            .filter(|&w| w != MapIo::Miss && w != MapIo::Mount)
        {
            let io = self.map_io[why as usize];
            out.push((
                format!("dftl.translation_writes.{}", why.name()),
                io.writes.into(),
            ));
        }
        out.push(("dftl.copies.data".into(), self.copies[DATA].into()));
        out.push((
            "dftl.copies.translation".into(),
            self.copies[TRANSLATION].into(),
        ));
        out.push(("dftl.moves_left_clean".into(), self.moves_left_clean.into()));
        if let Some(profile) = &self.profile {
            profile.report("dftl", out);
        }
    }
}

impl DftlFtl {
    /// The CMT slot holding `lpn`'s entry, loading it on a miss (§3.2).
    fn translate(&mut self, lpn: Lpn, dev: &mut Device) -> Result<u32> {
        if let Some(slot) = self.by_lpn.slot(lpn) {
            dev.record_cache(CacheKind::Cmt, true);
            self.cmt.touch(slot);
            return Ok(slot);
        }
        dev.record_cache(CacheKind::Cmt, false);
        let reuse = self.make_room(dev)?;
        if let Some(at) = self.gtd[(lpn.0 / self.epp) as usize].get() {
            let since = dev.map_counts();
            dev.read_token_in(OpClass::Map, at)?;
            self.tally(MapIo::Miss, since, dev);
        }
        let flash = self.by_lpn.flash(lpn);
        Ok(self.cmt.insert(lpn, flash, reuse, &mut self.by_lpn))
    }

    /// A full CMT gives up its eviction victim (written back first if dirty): the slot to reuse.
    fn make_room(&mut self, dev: &mut Device) -> Result<Option<u32>> {
        if !self.cmt.is_full() {
            return Ok(None);
        }
        let victim = self.cmt.victim();
        if self.cmt.dirty.get(victim as usize) {
            // A read or trim can write too: collect first (GC may write the victim's page back itself).
            self.collect_for(TRANSLATION, dev)?;
            if self.cmt.dirty.get(victim as usize) {
                let since = dev.map_counts();
                let tp = self.cmt.tp_of(victim) as u32;
                self.write_back(tp, 0..0, Some(victim), dev)?;
                self.tally(MapIo::Eviction, since, dev);
            }
        }
        Ok(Some(victim))
    }

    /// GC before a program at `frontier`: while the reserve is reached (`per-write`), or only when the frontier
    /// has no erased page left and must open a block (`burst`). Burst also collects when fewer than `reserve`
    /// blocks are free, which happens only after a power cut inside a burst (outside GC a burst keeps `reserve`
    /// free): the mount resumes the burst the cut stopped, as a controller finishing its GC at boot.
    fn collect_for(&mut self, frontier: usize, dev: &mut Device) -> Result<()> {
        match self.gc {
            GcTiming::PerWrite => self.ensure_free(dev),
            GcTiming::Burst
                if self.store.room(frontier) == 0 || self.store.free_blocks() < self.reserve =>
            {
                self.ensure_free(dev)
            }
            GcTiming::Burst => Ok(()),
        }
    }

    fn mark_dirty(&mut self, slot: u32) {
        if self.cmt.mark_dirty(slot) {
            self.dirty_in[self.cmt.tp_of(slot)] += 1;
        }
    }

    /// Adds the translation-page I/O the chip counted since `since` to `why`.
    fn tally(&mut self, why: MapIo, since: FlashCounts, dev: &Device) {
        if dev.phase() == Some(Cause::Check) {
            return; // the crash test's reads of every page, not the workload's (`Device::workload_map_counts`)
        }
        let done = dev.map_counts().minus(&since);
        let io = &mut self.map_io[why as usize];
        io.reads += done.page_reads;
        io.writes += done.page_writes;
    }

    /// Writes translation page `tp` anew: read the old copy, program the new one at the translation frontier
    /// with GC's moves `self.moved[moves]` and the dirty entries of it folded in ([`DftlFtl::fold_dirty`]; the
    /// dirty eviction `evicted` is one of them).
    fn write_back(
        &mut self,
        tp: u32,
        moves: Range<usize>,
        evicted: Option<u32>,
        dev: &mut Device,
    ) -> Result<()> {
        let old = self.gtd[tp as usize].get();
        if let Some(old) = old {
            dev.read_token_in(OpClass::Map, old)?;
        }
        let to = self.store.next_page(TRANSLATION, dev)?;
        let tag = Lpn(self.logical_pages + tp);
        dev.program_with_aux_in(OpClass::Map, to, 0, Some(tag), None)?;
        for &m in &self.moved[moves] {
            let (lpn, page) = (m.lpn(), m.to());
            let entry = self.by_lpn.flash_mut(lpn);
            *entry = entry.moved(page);
        }
        self.fold_dirty(tp, evicted);
        if let Some(old) = old {
            self.store.invalidate(old);
        }
        self.store.place(to, tp);
        self.gtd[tp as usize] = Opt::some(to);
        Ok(())
    }

    /// A program of translation page `tp` holds every dirty entry of it (cached, or recovered by a mount): the
    /// controller writes what it knows, so the page on flash is current as of its program (the mount relies
    /// on it). With `page` write back they all become clean (§3.3 batch update); with `entry` only the dirty
    /// eviction `evicted` does, and each other dirty entry still costs its own write back when evicted.
    fn fold_dirty(&mut self, tp: u32, evicted: Option<u32>) {
        if self.dirty_in[tp as usize] == 0 {
            return;
        }
        let clean_all = self.writeback == Writeback::Page;
        let first = Lpn(tp * self.epp);
        let end = Lpn((first.0 + self.epp).min(self.logical_pages));
        let by_lpn = &mut self.by_lpn;
        self.cmt
            .fold_dirty(tp, |lpn, entry| by_lpn.set_flash(lpn, entry));
        let lo = self.pending.partition_point(|e| e.0 < first);
        let hi = self.pending.partition_point(|e| e.0 < end);
        for (lpn, page) in &mut self.pending[lo..hi] {
            if let Some(at) = page.get() {
                self.by_lpn.set_flash(*lpn, MapEntry::page(at));
                if clean_all {
                    *page = Opt::NONE;
                }
            }
        }
        if clean_all {
            self.dirty_in[tp as usize] = 0;
        } else if let Some(slot) = evicted.filter(|&s| self.cmt.dirty.get(s as usize)) {
            self.cmt.clean_one(slot, &mut self.by_lpn);
            self.dirty_in[tp as usize] -= 1;
        }
    }

    /// The next GC victim: greedy (or cost-benefit) over data and translation blocks alike (§3.3) while two
    /// or more blocks are free. With fewer, only a run that leaves a free block for the next one starts: a
    /// data block's copies may need a fresh block and, after its erase, the translation pages it rewrites
    /// another; a translation block's copies one. Of the best victim of each kind, the one with fewer valid
    /// pages that fits (translation on a tie).
    fn pick_victim(&mut self, dev: &Device) -> Result<(Pbn, usize)> {
        let free = self.store.free_blocks() as u32;
        if free >= 2 {
            let (victim, _, kind) = self.store.take_victim(dev)?;
            return Ok((victim, kind));
        }
        let ppb = self.ppb;
        let fits = |kind: usize, valid: u32, store: &PageStore| {
            let before = (valid > store.room(kind)) as u32;
            let after = (kind == DATA && valid > store.room(TRANSLATION)) as u32;
            valid < ppb && free >= before && free - before >= after
        };
        let mut best: Option<(u32, Pbn, usize)> = None;
        for kind in [TRANSLATION, DATA] {
            if let Some((pbn, valid)) = self.store.peek_victim(Some(kind)) {
                if fits(kind, valid, &self.store) && best.is_none_or(|(v, _, _)| valid < v) {
                    best = Some((valid, pbn, kind));
                }
            }
        }
        let (_, victim, kind) = best.ok_or_else(|| {
            dev.out_of_space(format!(
                "{free} free block(s) and no block whose GC fits in them (a data block's may need 2: its \
                 copies and the translation pages it rewrites)"
            ))
        })?;
        self.store.take(victim);
        Ok((victim, kind))
    }

    /// Garbage collection until more than `reserve` free blocks remain (§3.3).
    fn ensure_free(&mut self, dev: &mut Device) -> Result<()> {
        while self.store.free_blocks() <= self.reserve {
            let (victim, kind) = self.pick_victim(dev)?;
            let mark = dev.begin_gc();
            if kind == TRANSLATION {
                self.collect_translation_block(victim, dev)?;
            } else {
                self.collect_data_block(victim, dev)?;
            }
            dev.end_gc(mark);
        }
        Ok(())
    }

    /// GC of a translation block: its valid translation pages move to the translation frontier. With `page`
    /// write back a page with dirty entries is written back (they are folded in, §3.3 batch update) rather
    /// than copied, so that every translation page is current as of its program; with `entry` every page is
    /// copied (PSU FlashSim) and the copy holds its dirty entries, which stay dirty.
    fn collect_translation_block(&mut self, victim: Pbn, dev: &mut Device) -> Result<()> {
        let since = dev.map_counts();
        if self.writeback == Writeback::Page {
            // Each translation page has one valid copy, so a write back leaves the others valid.
            self.store
                .valid_keys(dev.ppn(victim, 0), &mut self.victim_tps);
            for k in 0..self.victim_tps.len() {
                let tp = self.victim_tps[k];
                if self.dirty_in[tp as usize] > 0 {
                    self.write_back(tp, 0..0, None, dev)?;
                }
            }
        }
        let before_copies = dev.map_counts();
        self.copied_tps.clear();
        let (gtd, copied_tps) = (&mut self.gtd, &mut self.copied_tps);
        self.store
            .collect(victim, TRANSLATION, OpClass::Map, dev, |tp, to| {
                gtd[tp as usize] = Opt::some(to);
                copied_tps.push(tp);
            })?;
        self.copies[TRANSLATION] += dev.map_counts().page_writes - before_copies.page_writes;
        // With `page` write back the pages with dirty entries were written back above: no copy has any.
        debug_assert!(
            self.writeback == Writeback::Entry
                || self
                    .copied_tps
                    .iter()
                    .all(|&tp| self.dirty_in[tp as usize] == 0)
        );
        if self.writeback == Writeback::Entry {
            for k in 0..self.copied_tps.len() {
                self.fold_dirty(self.copied_tps[k], None);
            }
        }
        self.tally(MapIo::TranslationGc, since, dev);
        Ok(())
    }

    /// GC of a data block: its valid pages move to the data frontier. A cached entry is updated in the CMT
    /// (lazy copying, §3.3: dirty, unless `lazy_copy_dirty` is false); the others through their translation
    /// pages, one write back per translation page ([`DftlFtl::apply_moves`]).
    fn collect_data_block(&mut self, victim: Pbn, dev: &mut Device) -> Result<()> {
        self.moved.clear();
        let data_writes = dev.chip().counts(OpClass::Data).page_writes;
        let mut moves = GcMoves {
            cmt: &mut self.cmt,
            moved: &mut self.moved,
            pending: &mut self.pending,
            dirty_in: &mut self.dirty_in,
            by_lpn: &mut self.by_lpn,
            epp: self.epp,
            lazy_copy_dirty: self.lazy_copy_dirty,
            left_clean: &mut self.moves_left_clean,
        };
        self.store
            .collect_into(victim, DATA, OpClass::Data, dev, &mut moves)?;
        self.copies[DATA] += dev.chip().counts(OpClass::Data).page_writes - data_writes;
        let since = dev.map_counts();
        self.apply_moves(dev)?;
        self.tally(MapIo::GcUpdate, since, dev);
        Ok(())
    }

    /// The uncached entries of pages GC moved, written through their translation pages: one write back per
    /// translation page (§3.3 batch update).
    fn apply_moves(&mut self, dev: &mut Device) -> Result<()> {
        // In the order of their logical pages, so of their translation pages.
        self.moved.sort_unstable();
        let epp = self.epp;
        let tp_of = move |m: &Move| m.lpn().0 / epp;
        let mut i = 0;
        while i < self.moved.len() {
            let tp = tp_of(&self.moved[i]);
            let end = (i + 1..self.moved.len())
                .find(|&k| tp_of(&self.moved[k]) != tp)
                .unwrap_or(self.moved.len());
            self.write_back(tp, i..end, None, dev)?;
            i = end;
        }
        Ok(())
    }
}

/// A GC move of an uncached page, its logical page in the high half: sorted as integers, moves are in the
/// order of their logical pages (a run moves a page once).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Move(u64);

impl Move {
    #[inline]
    fn new(lpn: Lpn, to: Ppn) -> Move {
        Move((lpn.0 as u64) << 32 | to.0 as u64)
    }

    #[inline]
    fn lpn(self) -> Lpn {
        Lpn((self.0 >> 32) as u32)
    }

    #[inline]
    fn to(self) -> Ppn {
        Ppn(self.0 as u32)
    }
}

/// What a data block's GC updates for each page it moves (§3.3): a cached entry in the CMT (lazy copying), a
/// mount's recovered entry in place, any other queued for its translation page's write back.
struct GcMoves<'a> {
    cmt: &'a mut Cmt,
    moved: &'a mut Vec<Move>,
    pending: &'a mut Vec<(Lpn, Opt<Ppn>)>,
    dirty_in: &'a mut Vec<u32>,
    by_lpn: &'a mut LpnTable,
    epp: u32,
    lazy_copy_dirty: bool,
    left_clean: &'a mut u64,
}

impl Relocate for GcMoves<'_> {
    /// The CMT's slot of the moved page, and its flash map entry, which the batch update rewrites when the
    /// page is not cached: one line of `by_lpn`, scattered over the logical pages, a cache miss at scale.
    #[inline]
    fn prefetch(&self, lpn: u32) {
        self.by_lpn.prefetch(Lpn(lpn));
    }

    #[inline]
    fn moved(&mut self, lpn: u32, to: Ppn) {
        let lpn = Lpn(lpn);
        let cmt = &mut *self.cmt;
        match self.by_lpn.slot(lpn) {
            Some(slot) => {
                let s = slot as usize;
                cmt.set_entry(slot, cmt.entry[s].moved(to), self.by_lpn);
                // A dirty entry reaches flash at its eviction, moved or not.
                if !cmt.dirty.get(s) {
                    if self.lazy_copy_dirty {
                        cmt.mark_dirty(slot);
                        self.dirty_in[(lpn.0 / self.epp) as usize] += 1;
                    } else {
                        // PSU FlashSim's accounting: the entry stays clean, so no write ever records the
                        // move; the translation page takes it uncounted, so that reads stay right.
                        self.by_lpn.set_flash(lpn, cmt.entry[s]);
                        *self.left_clean += 1;
                    }
                }
            }
            None => match self.pending.binary_search_by_key(&lpn, |e| e.0) {
                // A mount's recovered entry, not yet in the CMT: moved in place too.
                Ok(k) if self.pending[k].1.is_some() => self.pending[k].1 = Opt::some(to),
                _ => self.moved.push(Move::new(lpn, to)),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `entry` write back folds a translation page's dirty entries in lazily: after any run of writes,
    /// evictions (a program of the victim's page, then the victim cleaned), entries cached dirty (a mount's
    /// recovered ones) and programs of a page alone (a translation block's GC), the flash map settled is the
    /// one an eager fold at every program gives.
    #[test]
    fn a_lazy_fold_leaves_the_flash_map_an_eager_fold_at_every_program_leaves() {
        use rand::{Rng, SeedableRng};
        let (lpns, epp, capacity) = (32u32, 4u32, 8u32);
        let mut rng = rand_pcg::Pcg64::seed_from_u64(7);
        let mut cmt = Cmt::new(capacity, lpns, epp, CmtPolicy::Age, Writeback::Entry);
        let mut flash = LpnTable::new(lpns);
        let mut eager = vec![MapEntry::NONE; lpns as usize];
        // A program of `tp` as the eager fold does it: every dirty entry of it written, all stay dirty.
        let program = |cmt: &mut Cmt, eager: &mut Vec<MapEntry>, tp: u32| {
            for slot in 0..cmt.len {
                if cmt.dirty.get(slot as usize) && cmt.tp_of(slot) == tp as usize {
                    eager[cmt.lpn[slot as usize].index()] = cmt.entry[slot as usize];
                }
            }
            cmt.fold_dirty(tp, |_, _| unreachable!("entry write back folds lazily"));
        };
        for step in 0..20_000u32 {
            let lpn = Lpn(rng.gen_range(0..lpns));
            match rng.gen_range(0..10) {
                0 => program(&mut cmt, &mut eager, rng.gen_range(0..lpns / epp)),
                1 => {
                    cmt.settle_all(&mut flash);
                    for (l, &folded) in eager.iter().enumerate() {
                        assert_eq!(
                            flash.flash(Lpn(l as u32)),
                            folded,
                            "logical page {l} after step {step}"
                        );
                    }
                }
                _ => {
                    let slot = match flash.slot(lpn) {
                        Some(slot) => slot,
                        None => {
                            let reuse = cmt.is_full().then(|| cmt.victim());
                            if let Some(victim) = reuse.filter(|&v| cmt.dirty.get(v as usize)) {
                                let tp = cmt.tp_of(victim) as u32;
                                program(&mut cmt, &mut eager, tp);
                                cmt.clean_one(victim, &mut flash);
                            }
                            if rng.gen_bool(0.2) {
                                // A mount's recovered entry: cached dirty as it is inserted.
                                let slot =
                                    cmt.insert(lpn, MapEntry::page(Ppn(step)), reuse, &mut flash);
                                cmt.mark_dirty(slot);
                                continue;
                            }
                            let entry = flash.flash(lpn);
                            cmt.insert(lpn, entry, reuse, &mut flash)
                        }
                    };
                    cmt.touch(slot);
                    cmt.set_entry(slot, MapEntry::page(Ppn(step)), &mut flash);
                    cmt.mark_dirty(slot);
                }
            }
        }
    }

    #[test]
    fn a_map_entry_is_four_bytes_and_keeps_its_trimmed_flag_through_a_move() {
        assert_eq!(std::mem::size_of::<MapEntry>(), 4);
        let none = MapEntry::NONE;
        assert_eq!(
            (none.ppn(), none.readable(), none.is_trimmed()),
            (None, None, false)
        );
        // Page 0 is a real page, not none.
        let live = MapEntry::page(Ppn(0));
        assert_eq!(
            (live.ppn(), live.readable(), live.is_trimmed()),
            (Some(Ppn(0)), Some(Ppn(0)), false)
        );
        // The highest page an entry names, trimmed: it still names the page, but a read gets nothing.
        let top = Ppn(MapEntry::MAX_PAGES as u32 - 1);
        let trimmed = MapEntry::trimmed(top);
        assert_ne!(trimmed, MapEntry::NONE);
        assert_eq!(
            (trimmed.ppn(), trimmed.readable(), trimmed.is_trimmed()),
            (Some(top), None, true)
        );
        // A GC move keeps the flag; a page never written moves to a live entry.
        assert_eq!(trimmed.moved(Ppn(9)), MapEntry::trimmed(Ppn(9)));
        assert_eq!(live.moved(Ppn(9)), MapEntry::page(Ppn(9)));
        assert_eq!(none.moved(Ppn(9)), MapEntry::page(Ppn(9)));
    }
}
