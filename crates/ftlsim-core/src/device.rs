//! The device a scheme works on: the chip, the timing, and the small API through which a scheme records
//! merges, garbage collection, cache hits and log-block utilization. Every flash operation goes through
//! here to the chip, which counts it; a scheme never counts its own operations.

use crate::addr::{Lpn, Opt, Pbn, Ppn, SourcePage, Token};
use crate::array::{FlashOp, Timeline};
use crate::bad_blocks::{factory_positions, BadBlockMap, BadBlockOptions};
use crate::config::{ConfigError, Geometry, Timing};
use crate::nand::{Nand, OpClass, PageRead, Spare, Violation, FACTORY_BAD};
use crate::request::{Op, Tag};
use crate::stats::{CacheKind, Cause, FlashCounts, MergeKind, Stats};
use thiserror::Error;

/// An error of the flash layer: a scheme broke a NAND rule, ran out of blocks, wore the chip out or could not
/// mount; or the power was cut, which unwinds the scheme's call stack to the run loop.
#[derive(Debug, Error)]
pub enum FlashError {
    #[error("NAND rule broken by scheme `{scheme}`: {what} (block {block}, page {page})")]
    NandRule {
        scheme: String,
        what: String,
        block: u32,
        page: u32,
    },

    #[error("scheme `{scheme}` ran out of free blocks: {what}; give it more spare blocks or a larger over-provisioning")]
    OutOfSpace { scheme: String, what: String },

    #[error(
        "the chip ran out of good blocks: {} went bad ({factory} from the factory, {grown} worn out, the last at \
         chip erase #{at_erase} of block {block}) and the reserve of {} is used up; raise bad_block_reserve, \
         endurance, or lower bad_block_ratio",
        crate::text::count_of(*.went_bad, "block"),
        crate::text::count_of(*.reserve, "replacement block")
    )]
    WornOut {
        went_bad: u32,
        factory: u32,
        grown: u32,
        reserve: u32,
        at_erase: u64,
        block: u32,
    },

    #[error(
        "scheme `{scheme}` cannot yet rebuild itself from flash after a power cut (no mount); \
         run it without power_cuts / mount_at_end"
    )]
    NoMount { scheme: String },

    #[error(
        "scheme `{scheme}` cannot mount: the chip holds {what}, which its writes never leave behind; this is \
         a bug in the scheme: report it with the trace and the power_cut_seed"
    )]
    Mount { scheme: String, what: String },

    /// The power was cut (a crash test): the scheme's RAM is gone, the chip keeps what it holds. Not a failure:
    /// the run loop catches it, mounts the scheme and goes on.
    #[error("power cut before flash operation {} while {}", .0.op, .0.doing())]
    PowerCut(CutPoint),
}

/// The result of a flash operation, and of a scheme's reads, writes and mount.
pub type Result<T, E = FlashError> = std::result::Result<T, E>;

/// The host request about to be served, given to a scheme through [`crate::ftl::Ftl::begin_request`] (LAST
/// looks at its size, the NVRAM policies at its tag).
#[derive(Clone, Copy, Debug)]
pub struct RequestInfo {
    pub index: u64,
    pub op: Op,
    pub first_lpn: Lpn,
    pub pages: u32,
    pub bytes: u64,
    pub tag: Tag,
    pub time_us: f64,
}

impl Default for RequestInfo {
    fn default() -> Self {
        RequestInfo {
            index: 0,
            op: Op::Write,
            first_lpn: Lpn(0),
            pages: 1,
            bytes: 0,
            tag: Tag::None,
            time_us: 0.0,
        }
    }
}

/// A merge or a garbage collection begun (its counts are on the device's stack of open marks); closing it
/// records what it cost.
#[must_use = "close the mark with end_merge or end_gc"]
pub struct Mark {
    copies: u64,
}

/// A merge or garbage collection open now: its cause, and the counts when it began (all operations; data-class
/// operations and those already given to an inner merge or GC, for the cause partition). A power cut inside it
/// gives it what it did so far ([`Device::cut`]).
#[derive(Clone, Copy, Debug)]
struct OpenMark {
    cause: Cause,
    counts: FlashCounts,
    data: FlashCounts,
    inner: FlashCounts,
}

/// The work done up to a moment ([`Device::work_mark`]).
#[derive(Clone, Copy, Debug)]
pub struct WorkMark {
    counts: FlashCounts,
    nvram_us: f64,
}

/// Where a power cut is due: the flash operation it lands before, counted from when it was armed.
#[derive(Clone, Debug)]
struct PowerSwitch {
    ops: u64,
    /// The operation the cut lands before, `u64::MAX` when none is armed (one compare per operation).
    cut_before: u64,
    /// Merges and GC runs open now, the innermost last (a cut inside one leaves it half done).
    open: Vec<OpenMark>,
    /// A cut that lands on a page program leaves the page torn ([`Nand::tear`]).
    tear: bool,
}

/// Where a power cut landed, for the durability report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CutPoint {
    /// The flash operation (counted from when the cut was armed) that did not happen.
    pub op: u64,
    pub class: OpClass,
    /// The run's phase then (host, rmw, idle, flush).
    pub phase: Cause,
    /// Merges or garbage collections that were open.
    pub open_marks: u32,
    /// The cut tore the page program it landed on (`torn_pages`).
    pub torn: bool,
}

impl CutPoint {
    /// What the scheme was doing, in words.
    pub fn doing(&self) -> String {
        let what = if self.class == OpClass::Map {
            "writing or reading its mapping pages"
        } else if self.open_marks > 0 {
            "in the middle of a merge or garbage collection"
        } else {
            "serving the request itself"
        };
        format!("{what} ({} phase)", self.phase.name())
    }
}

/// The partition of data-class operations by [`Cause`]: the phase the run is in (host, rmw, idle, flush) takes
/// every operation not claimed by a merge or GC mark closed inside it (in the host and rmw phases only).
#[derive(Clone, Debug, Default)]
struct CauseLedger {
    by_cause: [FlashCounts; Cause::COUNT],
    phase: Option<Cause>,
    /// Data-class counts when the phase began, and what marks closed in it have claimed since.
    phase_start: FlashCounts,
    claimed: FlashCounts,
    /// Map-class counts when the phase began, and those done in mounts and crash-test checks: those phases'
    /// own, not the workload's map traffic (`map.*`).
    map_phase_start: FlashCounts,
    map_of_mount_and_check: FlashCounts,
}

pub struct Device {
    chip: Nand,
    /// The blocks the scheme sees (one partition's, `ftl/per_die.rs`); the chip has more when it has bad
    /// blocks and a reserve for them, or several partitions.
    blocks: u32,
    /// The partitions of the scheme's blocks, one per scheme instance (1: the whole chip, one scheme), and
    /// where the current one starts: its first block and page. A scheme's block `b` is the partition's block
    /// `base + b`, which the bad-block map, if any, then places on the chip.
    partitions: u32,
    partition_base: u32,
    partition_base_page: u32,
    /// Pages of a partition: `blocks` blocks.
    partition_pages: u32,
    /// Where the scheme's blocks live on the chip, when the chip has bad blocks (`bad_blocks.rs`).
    bad_blocks: Option<Box<BadBlockMap>>,
    geometry: Geometry,
    timing: Timing,
    scheme: String,
    pub stats: Stats,
    causes: CauseLedger,
    power: PowerSwitch,
    /// Pages moved by [`Device::copy`]; merges and GC report their copies from this.
    copies: u64,
    /// A run's source pages on the chip, where blocks are remapped around bad ones ([`Device::copy_run`];
    /// kept between calls).
    run_on_chip: Vec<Ppn>,
    /// [`Device::read_headers_of`]'s holders on the chip, where blocks are remapped (kept between calls).
    blocks_on_chip: Vec<Pbn>,
    /// Tests: [`Device::read_headers_of`] always declines, so that both ways of reading headers can be compared.
    #[cfg(test)]
    pub(crate) headers_one_by_one: bool,
    /// Time spent in an NVRAM write cache in front of the scheme ([`Device::charge_nvram`]). The chip counts
    /// only flash operations, so the cache's own accesses are charged here and [`Device::elapsed_us`] adds them.
    nvram_us: f64,
    /// The event-driven timing of a multi-chip array (`array/`), told of every operation; None: the serial
    /// sum alone (one chip, no queueing).
    timeline: Option<Box<Timeline>>,
}

impl Device {
    pub fn new(scheme: &str, geometry: Geometry, physical_blocks: u32, timing: Timing) -> Device {
        Device {
            chip: Nand::new(
                physical_blocks,
                geometry.pages_per_block,
                geometry.sequential_program,
            ),
            blocks: physical_blocks,
            partitions: 1,
            partition_base: 0,
            partition_base_page: 0,
            partition_pages: physical_blocks.saturating_mul(geometry.pages_per_block),
            bad_blocks: None,
            geometry,
            timing,
            scheme: scheme.to_string(),
            stats: Stats::new(geometry.pages_per_block),
            causes: CauseLedger::default(),
            power: PowerSwitch {
                ops: 0,
                cut_before: u64::MAX,
                open: Vec::with_capacity(8),
                tear: false,
            },
            copies: 0,
            run_on_chip: Vec::new(),
            blocks_on_chip: Vec::new(),
            #[cfg(test)]
            headers_one_by_one: false,
            nvram_us: 0.0,
            timeline: None,
        }
    }

    /// A device of `physical_blocks` good blocks for the scheme over a chip with bad blocks: `opts.reserve`
    /// more chip blocks, factory bad blocks marked at seeded positions, and an endurance if given.
    pub fn with_bad_blocks(
        scheme: &str,
        geometry: Geometry,
        physical_blocks: u32,
        timing: Timing,
        opts: BadBlockOptions,
    ) -> Result<Device, ConfigError> {
        let most = physical_blocks.max(1024);
        if opts.reserve > most {
            return Err(crate::config::Invalid::new(
                "bad_block_reserve",
                opts.reserve,
                format!(
                    "is more than the scheme's {physical_blocks} blocks (or 1,024 on a small device); a reserve \
                     is a small share of the chip"
                ),
                Some(physical_blocks.div_ceil(50).to_string()),
            )
            .into());
        }
        let chip_blocks = physical_blocks
            .checked_add(opts.reserve)
            .filter(|&b| b as u64 * geometry.pages_per_block as u64 <= u32::MAX as u64)
            .ok_or_else(|| {
                ConfigError::from(crate::config::Invalid::new(
                    "bad_block_reserve",
                    opts.reserve,
                    format!(
                        "beside the scheme's {physical_blocks} blocks is more pages than a chip address holds; \
                         give a smaller reserve"
                    ),
                    None,
                ))
            })?;
        let factory = opts.factory_count(chip_blocks);
        if chip_blocks - factory < physical_blocks {
            // The least reserve that leaves the scheme its blocks: the bad share grows with the chip.
            let least =
                (opts.reserve..=most).find(|&r| r >= opts.factory_count(physical_blocks + r));
            return Err(crate::config::Invalid::new(
                "bad_block_reserve",
                opts.reserve,
                format!(
                    "is too few: {factory} of the chip's {chip_blocks} blocks are bad from the factory, leaving {} \
                     good ones for the scheme's {physical_blocks}; {}",
                    chip_blocks - factory,
                    match least {
                        Some(r) => format!("a reserve of {r} leaves enough, or lower bad_block_ratio"),
                        None => "lower bad_block_ratio".to_string(),
                    }
                ),
                least.map(|r| r.to_string()),
            )
            .into());
        }
        let mut dev = Device::new(scheme, geometry, chip_blocks, timing);
        dev.blocks = physical_blocks;
        let mut markers = vec![0; chip_blocks as usize];
        for b in factory_positions(chip_blocks, opts.factory_count(chip_blocks), opts.seed) {
            dev.chip.mark_bad(Pbn(b), FACTORY_BAD, None);
            markers[b as usize] = FACTORY_BAD;
        }
        if let Some(endurance) = opts.endurance {
            dev.chip.set_endurance(endurance);
        }
        let map = BadBlockMap::from_markers(physical_blocks, &markers)
            .expect("the factory-bad blocks leave the scheme its blocks (checked above)");
        dev.bad_blocks = Some(Box::new(map));
        Ok(dev)
    }

    /// Rebuilds the bad-block map from the chip's markers after a power cut (one spare read per chip block).
    pub fn mount_bad_blocks(&mut self) -> Result<()> {
        if self.bad_blocks.is_none() {
            return Ok(());
        }
        let mut markers = Vec::with_capacity(self.chip.blocks() as usize);
        for b in 0..self.chip.blocks() {
            self.step(OpClass::Data)?;
            markers.push(self.chip.bad_marker(Pbn(b), OpClass::Data));
        }
        // The markers are the format's, so they leave as many good blocks as they did then.
        let blocks = self.blocks * self.partitions;
        let map =
            BadBlockMap::from_markers(blocks, &markers).map_err(|good| FlashError::Mount {
                scheme: self.scheme.clone(),
                what: format!(
                    "bad-block markers that leave {good} good blocks for the scheme's {blocks}"
                ),
            })?;
        self.bad_blocks = Some(Box::new(map));
        Ok(())
    }

    /// Factory bad blocks, grown bad blocks and the reserve's size, when the chip has bad blocks.
    /// The erase counts of the chip's blocks in service: the scheme's, those that went bad in its service and
    /// the reserve blocks that replaced them; not the blocks bad from the factory or the reserve still unused.
    pub fn in_service_erase_counts(&self) -> Vec<u32> {
        let mut unused = vec![false; self.chip.blocks() as usize];
        for b in self.bad_blocks.iter().flat_map(|m| m.unused_reserve()) {
            unused[b as usize] = true;
        }
        self.chip
            .erase_counts()
            .enumerate()
            .filter(|&(b, _)| !unused[b] && !self.chip.is_factory_bad(b))
            .map(|(_, erases)| erases)
            .collect()
    }

    pub fn bad_block_counts(&self) -> Option<(u32, u32, u32)> {
        self.bad_blocks
            .as_ref()
            .map(|m| (m.factory, m.grown, m.reserve_blocks))
    }

    /// Splits the scheme's blocks into `count` equal partitions, one per scheme instance (`ftl/per_die.rs`),
    /// and enters the first. The timeline, if any, then places partition `i` on die `i`.
    pub fn split_into_partitions(&mut self, count: u32) {
        assert!(
            count >= 1 && self.blocks.is_multiple_of(count) && self.partitions == 1,
            "the plan gives every partition the same blocks"
        );
        self.blocks /= count;
        self.partitions = count;
        self.partition_pages = self.blocks * self.geometry.pages_per_block;
        if let Some(t) = self.timeline.as_deref_mut() {
            t.place_per_die(self.partition_pages);
        }
        self.enter_partition(0);
    }

    /// Makes partition `index` the blocks the scheme sees, until another is entered.
    #[inline]
    pub fn enter_partition(&mut self, index: u32) {
        debug_assert!(index < self.partitions);
        self.partition_base = index * self.blocks;
        self.partition_base_page = self.partition_base * self.geometry.pages_per_block;
    }

    /// The chip block behind the scheme's block `pbn` (past the chip for a block beyond the scheme's).
    #[inline]
    fn block_on_chip(&self, pbn: Pbn) -> Pbn {
        match &self.bad_blocks {
            _ if pbn.0 >= self.blocks => Pbn(self.chip.blocks().max(pbn.0)),
            None => Pbn(pbn.0 + self.partition_base),
            Some(map) => map.chip_block(Pbn(pbn.0 + self.partition_base)),
        }
    }

    /// The chip page behind the scheme's page `ppn`.
    #[inline]
    fn on_chip(&self, ppn: Ppn) -> Ppn {
        if self.bad_blocks.is_none() {
            // A partition's pages follow one another on the chip: an add. A page beyond the partition goes
            // past the chip, whose range check refuses it.
            return if ppn.0 < self.partition_pages {
                Ppn(ppn.0 + self.partition_base_page)
            } else {
                Ppn(ppn
                    .0
                    .max(self.chip.blocks() * self.geometry.pages_per_block))
            };
        }
        let ppb = self.geometry.pages_per_block;
        let block = self.block_on_chip(Pbn(ppn.0 / ppb));
        Ppn(block.0.saturating_mul(ppb).saturating_add(ppn.0 % ppb))
    }

    /// How many times the scheme's block `pbn` has been erased (reported erases: zeroed after
    /// preconditioning).
    pub fn erase_count(&self, pbn: Pbn) -> u32 {
        self.chip.erase_count(self.block_on_chip(pbn))
    }

    /// A toy device for unit tests: `blocks` blocks of 4 pages of 512 B (in-order programming), every
    /// operation 1 us.
    #[cfg(test)]
    pub(crate) fn toy(blocks: u32) -> Device {
        let g = Geometry {
            page_bytes: 512,
            spare_bytes: 16,
            pages_per_block: 4,
            logical_blocks: 1,
            sequential_program: true,
        };
        let t = Timing::uniform(1.0);
        Device::new("test", g, blocks, t)
    }

    pub fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    pub fn timing(&self) -> &Timing {
        &self.timing
    }

    /// The blocks the scheme may use.
    pub fn physical_blocks(&self) -> u32 {
        self.blocks
    }

    pub fn chip(&self) -> &Nand {
        &self.chip
    }

    pub fn scheme(&self) -> &str {
        &self.scheme
    }

    #[inline]
    pub fn ppn(&self, pbn: Pbn, offset: u32) -> Ppn {
        Ppn(pbn.0 * self.geometry.pages_per_block + offset)
    }

    /// All operations counted so far, every class.
    pub fn counts(&self) -> FlashCounts {
        self.chip.total_counts()
    }

    /// Time spent so far, in microseconds: flash operations plus NVRAM accesses.
    pub fn elapsed_us(&self) -> f64 {
        self.chip.total_counts().time_us(&self.timing) + self.nvram_us
    }

    /// The work done so far, for [`Device::us_since`].
    #[inline]
    pub fn work_mark(&self) -> WorkMark {
        WorkMark {
            counts: self.chip.total_counts(),
            nvram_us: self.nvram_us,
        }
    }

    /// Time spent since `mark`, in microseconds (a request's latency): the time of the flash operations done
    /// since, plus NVRAM accesses.
    #[inline]
    pub fn us_since(&self, mark: &WorkMark) -> f64 {
        self.chip
            .total_counts()
            .minus(&mark.counts)
            .time_us(&self.timing)
            + (self.nvram_us - mark.nvram_us)
    }

    /// Charges the time of an NVRAM access (the NVRAM write cache, `ftl/nvram.rs`); only that wrapper calls it.
    #[inline]
    pub fn charge_nvram(&mut self, us: f64) {
        self.nvram_us += us;
        if let Some(t) = self.timeline.as_deref_mut() {
            t.controller(us);
        }
    }

    /// Puts the event-driven timing of a multi-chip array under the device (None takes it away).
    pub fn set_timeline(&mut self, timeline: Option<Box<Timeline>>) {
        self.timeline = timeline;
    }

    pub fn timeline_mut(&mut self) -> Option<&mut Timeline> {
        self.timeline.as_deref_mut()
    }

    /// Times the operations from now on from power-on, apart from the run's requests (a mount: every die and
    /// channel idle at its start, [`Timeline::at_power_on`]), till [`Device::end_timing_apart`] is handed
    /// what this returns: the run's timeline, set aside (None without a timeline: nothing is timed).
    pub fn begin_timing_apart(&mut self) -> Option<Box<Timeline>> {
        let at_power_on = Box::new(self.timeline.as_deref()?.at_power_on());
        self.timeline.replace(at_power_on)
    }

    /// Puts back the run's timeline that [`Device::begin_timing_apart`] set aside, and returns how long the
    /// operations timed apart took from power-on (None without a timeline).
    pub fn end_timing_apart(&mut self, run: Option<Box<Timeline>>) -> Option<f64> {
        let apart = self.timeline.replace(run?)?;
        Some(apart.work_end())
    }

    /// Tells the timeline, if any, of an operation on the scheme's page `ppn` (a block's: any of its pages).
    #[inline(always)]
    fn time(&mut self, op: FlashOp, ppn: Ppn) {
        if let Some(t) = self.timeline.as_deref_mut() {
            t.op(op, ppn.0 + self.partition_base_page);
        }
    }

    #[cold]
    #[inline(never)]
    fn rule(&self, v: Violation) -> FlashError {
        FlashError::NandRule {
            scheme: self.scheme.clone(),
            what: v.what.to_string(),
            block: v.block,
            page: v.page,
        }
    }

    /// A hint that `ppn` is about to be read or copied: the host CPU fetches its record early, so that a loop
    /// over scattered pages overlaps the memory latency. Not a flash operation: nothing is counted.
    #[inline]
    pub fn prefetch(&self, ppn: Ppn) {
        self.chip.prefetch(self.on_chip(ppn));
    }

    /// [`Device::prefetch`] for every page of block `pbn` (a merge or a GC about to go through it).
    #[inline]
    pub fn prefetch_block(&self, pbn: Pbn) {
        self.chip.prefetch_block(self.block_on_chip(pbn));
    }

    /// Reads a page of host data (one page read).
    #[inline]
    pub fn read(&mut self, ppn: Ppn) -> Result<PageRead> {
        self.read_in(OpClass::Data, ppn)
    }

    /// Reads a page, counted in `class`.
    #[inline]
    pub fn read_in(&mut self, class: OpClass, ppn: Ppn) -> Result<PageRead> {
        self.step(class)?;
        self.time(FlashOp::Read, ppn);
        self.chip
            .read(self.on_chip(ppn), class)
            .map_err(|v| self.rule(v))
    }

    /// Reads a page of host data for its data alone (one page read): [`Device::read`]'s token.
    #[inline]
    pub fn read_token(&mut self, ppn: Ppn) -> Result<Option<Token>> {
        self.read_token_in(OpClass::Data, ppn)
    }

    /// Reads a page for its data alone, counted in `class`: [`Device::read_in`]'s token, without the spare
    /// area.
    #[inline]
    pub fn read_token_in(&mut self, class: OpClass, ppn: Ppn) -> Result<Option<Token>> {
        self.step(class)?;
        self.time(FlashOp::Read, ppn);
        self.chip
            .read_token(self.on_chip(ppn), class)
            .map_err(|v| self.rule(v))
    }

    /// Reads the spare area of a host data page (one spare read).
    #[inline]
    pub fn read_spare(&mut self, ppn: Ppn) -> Result<Spare> {
        self.read_spare_in(OpClass::Data, ppn)
    }

    /// Reads a spare area, counted in `class`.
    #[inline(always)]
    pub fn read_spare_in(&mut self, class: OpClass, ppn: Ppn) -> Result<Spare> {
        self.step(class)?;
        self.time(FlashOp::SpareRead, ppn);
        self.chip
            .read_spare(self.on_chip(ppn), class)
            .map_err(|v| self.rule(v))
    }

    /// Reads the scheme word of block `pbn`'s first page, its header (one spare read, data class): what
    /// [`Device::read_spare`] of page 0 gives as `aux()`, at the cost of a block's state rather than a page's
    /// record (NFTL's garbage collection reads every primary's header).
    #[inline]
    pub fn read_header(&mut self, pbn: Pbn) -> Result<Option<u32>> {
        self.step(OpClass::Data)?;
        self.time(FlashOp::SpareRead, self.ppn(pbn, 0));
        self.chip
            .read_header(self.block_on_chip(pbn), OpClass::Data)
            .map_err(|v| self.rule(v))
    }

    /// Reads the headers of `scanned` blocks ([`Device::read_header`] each, data class) in one call when the
    /// caller knows which of them hold one: `holders`, distinct scheme blocks. The chip confirms it before it
    /// counts the reads: every holder's header is programmed and no other block's is; a wrong list is a
    /// broken rule (a scheme whose index disagrees with its flash). NFTL's garbage collection reads every
    /// primary's header to find the few that have a replacement block; the counts and times are those of the
    /// reads one by one.
    ///
    /// Where blocks are remapped around bad ones, the chip is given the holders' blocks through the map. Returns
    /// false, doing nothing, when a timeline times each operation, or when an armed power cut could land
    /// within the next `span` operations: at most what the caller does from the first read to the end of the
    /// work whose order the one call changes (NFTL: the scan and the folds it leads to). A cut lands on one
    /// particular operation, so there the caller reads header by header in its own order.
    pub fn read_headers_of(&mut self, scanned: u64, holders: &[Pbn], span: u64) -> Result<bool> {
        if !self.no_cut_within(span) || self.timeline.is_some() || self.partitions > 1 {
            return Ok(false);
        }
        #[cfg(test)]
        if self.headers_one_by_one {
            return Ok(false);
        }
        let confirmed = if self.bad_blocks.is_some() {
            let mut on_chip = std::mem::take(&mut self.blocks_on_chip);
            on_chip.clear();
            on_chip.extend(holders.iter().map(|&b| self.block_on_chip(b)));
            let confirmed = self.chip.confirm_headers(scanned, &on_chip, OpClass::Data);
            self.blocks_on_chip = on_chip;
            confirmed
        } else {
            self.chip.confirm_headers(scanned, holders, OpClass::Data)
        };
        confirmed.map_err(|v| self.rule(v))?;
        self.power.ops += scanned;
        Ok(true)
    }

    /// Programs a page holding `token` for logical page `lpn`.
    #[inline]
    pub fn program(&mut self, ppn: Ppn, token: Token, lpn: Lpn) -> Result<()> {
        self.step_program(OpClass::Data, ppn)?;
        self.time(FlashOp::Program, ppn);
        self.chip
            .program(
                self.on_chip(ppn),
                token,
                Opt::some(lpn),
                Opt::NONE,
                OpClass::Data,
            )
            .map_err(|v| self.rule(v))
    }

    /// Programs a page for logical page `lpn` (none: a page the scheme writes for itself, as a map page)
    /// with a scheme word `aux` in its spare area as well (none: left erased), counted in `class`.
    pub fn program_with_aux_in(
        &mut self,
        class: OpClass,
        ppn: Ppn,
        token: Token,
        lpn: Option<Lpn>,
        aux: Option<u32>,
    ) -> Result<()> {
        self.step_program(class, ppn)?;
        self.time(FlashOp::Program, ppn);
        self.chip
            .program(self.on_chip(ppn), token, lpn.into(), aux.into(), class)
            .map_err(|v| self.rule(v))
    }

    /// Programs a host data page with a scheme word in its spare area as well (a log block's kind).
    pub fn program_with_aux(&mut self, ppn: Ppn, token: Token, lpn: Lpn, aux: u32) -> Result<()> {
        self.program_with_aux_in(OpClass::Data, ppn, token, Some(lpn), Some(aux))
    }

    /// Programs only the spare area: set the scheme word once, clear flags.
    pub fn program_spare(&mut self, ppn: Ppn, aux: Option<u32>, clear_flags: u8) -> Result<()> {
        self.step(OpClass::Data)?;
        self.time(FlashOp::SpareProgram, ppn);
        self.chip
            .program_spare(self.on_chip(ppn), aux, clear_flags, OpClass::Data)
            .map_err(|v| self.rule(v))
    }

    /// Erases a block of host data.
    pub fn erase(&mut self, pbn: Pbn) -> Result<()> {
        self.erase_in(OpClass::Data, pbn)
    }

    /// Erases a block, counted in `class`.
    pub fn erase_in(&mut self, class: OpClass, pbn: Pbn) -> Result<()> {
        self.step(class)?;
        self.time(FlashOp::Erase, self.ppn(pbn, 0));
        let on_chip = self.block_on_chip(pbn);
        if !self.chip.erase(on_chip, class).map_err(|v| self.rule(v))? {
            self.replace_worn_out(pbn, on_chip, class)?;
        }
        Ok(())
    }

    /// The erase of the scheme's block `pbn` (chip block `failed`) failed: mark the chip block bad and give the
    /// scheme an erased reserve block in its place (`bad_blocks.rs`).
    fn replace_worn_out(&mut self, pbn: Pbn, failed: Pbn, class: OpClass) -> Result<()> {
        let map = self
            .bad_blocks
            .as_mut()
            .expect("only a chip with an endurance fails an erase, and it has a bad-block map");
        self.chip.mark_bad(failed, map.grown + 1, Some(class));
        if map.replace(Pbn(pbn.0 + self.partition_base)).is_none() {
            return Err(FlashError::WornOut {
                went_bad: map.factory + map.grown + 1,
                factory: map.factory,
                grown: map.grown + 1,
                reserve: map.reserve_blocks,
                at_erase: self.chip.total_counts().erases,
                block: failed.0,
            });
        }
        Ok(())
    }

    /// Counts a page the scheme moved by its own read and program (MAST's moves to CA, which append the page to
    /// a log block) as a copy of the merge or GC open now.
    pub fn count_moved_page(&mut self) {
        self.copies += 1;
    }

    /// Copies a page: one page read and one program, the data and logical page carried over. Schemes move
    /// pages with this, so that merges and GC can report how many they copied.
    /// Returns the logical page copied, or None if the source was erased (nothing is programmed then).
    #[inline]
    pub fn copy(&mut self, from: Ppn, to: Ppn) -> Result<Option<Lpn>> {
        self.copy_in(OpClass::Data, from, to)
    }

    /// Copies a page (as [`Device::copy`]), counted in `class`; the scheme word is not carried over.
    #[inline(always)]
    pub fn copy_in(&mut self, class: OpClass, from: Ppn, to: Ppn) -> Result<Option<Lpn>> {
        // The read and the program in one call to the chip where they can be. (After a broken rule the
        // operation count no longer matters: the run stops.)
        if !self.no_cut_within(2) {
            return self.copy_step_by_step(class, from, to);
        }
        let copied = self
            .chip
            .copy(self.on_chip(from), self.on_chip(to), class)
            .map_err(|v| self.rule(v))?;
        self.time(FlashOp::Read, from);
        if copied.is_some() {
            self.time(FlashOp::Program, to);
        }
        self.power.ops += 1 + copied.is_some() as u64;
        self.copies += copied.is_some() as u64;
        Ok(copied.and_then(Opt::get))
    }

    /// Copies the pages `from` to the pages from `to` on, in order, in one call to the chip (a merge's or a GC
    /// run's copies into a block), and to the timeline if any: what [`Device::copy_in`] of each does, and
    /// true. Where blocks are remapped around bad ones, each page goes through the map first. False, doing
    /// nothing, where it cannot: a power cut could land among the operations, or the chip finds a source
    /// without data, a page beyond the partition or a rule a copy would break. The caller then copies them one
    /// by one, and meets the same outcome.
    #[inline]
    pub fn copy_run(&mut self, class: OpClass, from: &[impl SourcePage], to: Ppn) -> bool {
        let ops = 2 * from.len() as u64;
        if !self.no_cut_within(ops) {
            return false;
        }
        let copied = if self.bad_blocks.is_none() {
            let (base, pages) = (self.partition_base_page, self.partition_pages);
            self.chip.copy_run(from, to, class, base, pages)
        } else {
            self.copy_run_remapped(class, from, to)
        };
        if !copied {
            return false;
        }
        if let Some(t) = self.timeline.as_deref_mut() {
            t.copy_run(from, to.0, self.partition_base_page);
        }
        self.power.ops += ops;
        self.copies += from.len() as u64;
        true
    }

    /// [`Device::copy_run`]'s call to the chip where blocks are remapped around bad ones: each source through
    /// the map to its chip page, and the target (a run stays in its block). Out of line: the merges' hot path
    /// stays small.
    #[cold]
    #[inline(never)]
    fn copy_run_remapped(&mut self, class: OpClass, from: &[impl SourcePage], to: Ppn) -> bool {
        let mut on_chip = std::mem::take(&mut self.run_on_chip);
        on_chip.clear();
        on_chip.extend(from.iter().map(|s| self.on_chip(Ppn(s.page()))));
        let chip_pages = self.chip.blocks() * self.geometry.pages_per_block;
        let copied = self
            .chip
            .copy_run(&on_chip, self.on_chip(to), class, 0, chip_pages);
        self.run_on_chip = on_chip;
        copied
    }

    /// Whether no power cut is armed to land among the next `ops` flash operations (a cut lands on one
    /// particular operation): the chip may then do them in one call, each page through the map where blocks
    /// are remapped around bad ones.
    #[inline]
    fn no_cut_within(&self, ops: u64) -> bool {
        self.power.cut_before - self.power.ops > ops
    }

    /// Whether a scheme may issue its next `ops` flash operations in another order than the one it describes
    /// (all of a merge's spare reads first, then its copies), with the same outcome: no power cut can land
    /// among them and no timeline times them. The chip's state after them is the same in any order that keeps
    /// the programs' order (spare reads change nothing), and so are the counts and the serial time.
    #[inline]
    pub fn may_reorder(&self, ops: u64) -> bool {
        self.no_cut_within(ops) && self.timeline.is_none()
    }

    /// [`Device::copy_in`] as a read, then a program, each its own flash operation for the power switch.
    #[inline(never)]
    fn copy_step_by_step(&mut self, class: OpClass, from: Ppn, to: Ppn) -> Result<Option<Lpn>> {
        let page = self.read_in(class, from)?;
        match page.token {
            Some(token) => {
                self.step_program(class, to)?;
                self.time(FlashOp::Program, to);
                self.chip
                    .program(self.on_chip(to), token, page.spare.lpn, Opt::NONE, class)
                    .map_err(|v| self.rule(v))?;
                self.copies += 1;
                Ok(page.spare.lpn())
            }
            None => Ok(None),
        }
    }

    /// Reads the spare areas of the pages `offsets` of block `pbn` in order (a [`Device::read_spare`] each)
    /// and sets `lpns[i]` to the logical page the `i`-th holds (none: erased, torn or the scheme's own page).
    /// One call to the chip where it can (a merge that asks which of the data block's pages hold data), and
    /// one to the timeline if any (the block through the map where blocks are remapped around bad ones); page
    /// by page where a power cut could land among them. The counts, times, and a cut's place are those of the
    /// reads one by one.
    pub fn read_spare_lpns(
        &mut self,
        pbn: Pbn,
        offsets: std::ops::Range<u32>,
        lpns: &mut [Opt<Lpn>],
    ) -> Result<()> {
        if !self.no_cut_within(offsets.len() as u64) {
            for (o, lpn) in offsets.zip(lpns) {
                *lpn = self.read_spare(self.ppn(pbn, o))?.lpn;
            }
            return Ok(());
        }
        self.chip
            .read_spare_lpns(
                self.block_on_chip(pbn),
                offsets.clone(),
                OpClass::Data,
                lpns,
            )
            .map_err(|v| self.rule(v))?;
        let first = self.ppn(pbn, offsets.start).0 + self.partition_base_page;
        if let Some(t) = self.timeline.as_deref_mut() {
            t.spare_read_run(first, offsets.len() as u32);
        }
        self.power.ops += offsets.len() as u64;
        Ok(())
    }

    /// Reads the spare areas of block `pbn` from page `below - 1` down (a [`Device::read_spare`] each), telling
    /// `visit` each page's offset and logical page (none: erased, torn or the scheme's own page), until it
    /// returns false or page 0 is read; returns the offset of the last page read (`below` if none was). One
    /// call to the chip where it can (a fold's scan of a replacement block), else page by page; the counts,
    /// times and a cut's place are those of the reads one by one.
    pub fn scan_spare_lpns_down(
        &mut self,
        pbn: Pbn,
        below: u32,
        mut visit: impl FnMut(u32, Opt<Lpn>) -> bool,
    ) -> Result<u32> {
        // One call where the reads need not each be timed or counted apart: what lets a scheme reorder.
        if !self.may_reorder(below as u64) {
            let mut at = below;
            while at > 0 {
                at -= 1;
                let lpn = self.read_spare(self.ppn(pbn, at))?.lpn;
                if !visit(at, lpn) {
                    break;
                }
            }
            return Ok(at);
        }
        let at = self
            .chip
            .scan_spare_lpns_down(self.block_on_chip(pbn), below, OpClass::Data, visit)
            .map_err(|v| self.rule(v))?;
        self.power.ops += (below - at) as u64;
        Ok(at)
    }

    pub fn map_counts(&self) -> FlashCounts {
        self.chip.counts(OpClass::Map)
    }

    /// The flash operations since the power cut was last armed ([`Device::arm_power_cut`]).
    pub fn ops_since_armed(&self) -> u64 {
        self.power.ops
    }

    /// Cuts the power before the `op`-th flash operation from now (1: the next one); None disarms.
    pub fn arm_power_cut(&mut self, op: Option<u64>) {
        self.power.ops = 0;
        self.power.cut_before = op.unwrap_or(u64::MAX);
        self.power.open.clear();
    }

    /// Counts a flash operation; the one a power cut lands before fails with [`FlashError::PowerCut`].
    #[inline]
    fn step(&mut self, class: OpClass) -> Result<()> {
        self.power.ops += 1;
        if self.power.ops == self.power.cut_before {
            return Err(self.cut(class, None));
        }
        Ok(())
    }

    /// [`Device::step`] for a program of `ppn`: a cut that lands on it tears the page when torn pages are on.
    #[inline]
    fn step_program(&mut self, class: OpClass, ppn: Ppn) -> Result<()> {
        self.power.ops += 1;
        if self.power.ops == self.power.cut_before {
            return Err(self.cut(class, Some(ppn)));
        }
        Ok(())
    }

    /// The power cut lands now, before an operation of `class` (a program of the given page, if one).
    #[cold]
    #[inline(never)]
    fn cut(&mut self, class: OpClass, program: Option<Ppn>) -> FlashError {
        self.power.cut_before = u64::MAX;
        let open_marks = self.power.open.len() as u32;
        // What the merges and GC runs the cut interrupts did is theirs, as if each closed now (innermost first):
        // their cause's in the partition, their time in `time_us.merges` or `time_us.gc`. They are not counted as
        // merges or GC runs (`merges.*`, `gc.runs`), which they did not finish.
        while let Some(open) = self.power.open.pop() {
            self.claim(open);
        }
        let torn = self.power.tear && program.is_some();
        if let Some(ppn) = program.filter(|_| torn) {
            let on_chip = self.on_chip(ppn);
            self.chip.tear(on_chip);
        }
        FlashError::PowerCut(CutPoint {
            op: self.power.ops,
            class,
            phase: self.causes.phase.unwrap_or(Cause::Host),
            open_marks,
            torn,
        })
    }

    /// Whether a power cut tears the page program it lands on (the scheme must then detect the page, which
    /// reads back as uncorrectable, and ignore it at mount).
    pub fn set_torn_pages(&mut self, tear: bool) {
        self.power.tear = tear;
    }

    /// Opens a merge: close it with [`Device::end_merge`].
    pub fn begin_merge(&mut self) -> Mark {
        self.begin(Cause::Merge)
    }

    /// Opens a garbage collection: close it with [`Device::end_gc`].
    pub fn begin_gc(&mut self) -> Mark {
        self.begin(Cause::Gc)
    }

    fn begin(&mut self, cause: Cause) -> Mark {
        self.power.open.push(OpenMark {
            cause,
            counts: self.chip.total_counts(),
            data: self.chip.counts(OpClass::Data),
            inner: self.causes.claimed,
        });
        Mark {
            copies: self.copies,
        }
    }

    /// Records a merge of `kind` begun at `mark`: its erases and copied pages are what the chip counted since.
    pub fn end_merge(&mut self, mark: Mark, kind: MergeKind) {
        let d = self.close(Cause::Merge);
        let m = &mut self.stats.merges[kind as usize];
        m.count += 1;
        m.erases += d.erases;
        m.copied_pages += self.copies - mark.copies;
    }

    /// Records one garbage-collection run begun at `mark`.
    pub fn end_gc(&mut self, mark: Mark) {
        self.close(Cause::Gc);
        self.stats.gc_runs += 1;
        self.stats.gc_copied_pages += self.copies - mark.copies;
    }

    /// Closes the innermost open merge or GC, which must be of `cause`: what it did, claimed for its cause.
    fn close(&mut self, cause: Cause) -> FlashCounts {
        let open = self
            .power
            .open
            .pop()
            .expect("a merge or GC closed that was not begun");
        assert_eq!(
            open.cause, cause,
            "the innermost open mark is not the one closed"
        );
        self.claim(open)
    }

    /// Gives a closing mark's operations to its cause, and returns them: all of them to `time_us.merges` or
    /// `time_us.gc`; its data-class operations, less those of marks closed inside it, to the cause partition (in
    /// the host and rmw phases; idle and flush keep everything done in them).
    fn claim(&mut self, open: OpenMark) -> FlashCounts {
        let d = self.chip.total_counts().minus(&open.counts);
        match open.cause {
            Cause::Merge => self.stats.merge_ops = self.stats.merge_ops.plus(&d),
            _ => self.stats.gc_ops = self.stats.gc_ops.plus(&d),
        }
        let ledger = &mut self.causes;
        if matches!(
            ledger.phase,
            None | Some(Cause::Host) | Some(Cause::Rmw) | Some(Cause::Mount)
        ) {
            let all = self.chip.counts(OpClass::Data).minus(&open.data);
            let own = all.minus(&ledger.claimed.minus(&open.inner));
            ledger.by_cause[open.cause as usize] = ledger.by_cause[open.cause as usize].plus(&own);
            ledger.claimed = ledger.claimed.plus(&own);
        }
        d
    }

    /// The run enters a phase (host requests, a partial-page read, idle time, the end-of-trace flush): what the
    /// previous phase did that no merge or GC claimed is given to it.
    pub fn enter_phase(&mut self, phase: Cause) {
        let now = self.chip.counts(OpClass::Data);
        let ledger = &mut self.causes;
        let done = now.minus(&ledger.phase_start).minus(&ledger.claimed);
        let previous = ledger.phase.unwrap_or(Cause::Host);
        ledger.by_cause[previous as usize] = ledger.by_cause[previous as usize].plus(&done);
        // A mount's and a check's mapping-page I/O is theirs: the scheme rebuilding its map, the crash test reading
        // every page through it. Counted as `map`, it made DFTL's map traffic 30 times larger under power cuts.
        let map_now = self.chip.counts(OpClass::Map);
        if matches!(previous, Cause::Mount | Cause::Check) {
            let map_done = map_now.minus(&ledger.map_phase_start);
            ledger.by_cause[previous as usize] = ledger.by_cause[previous as usize].plus(&map_done);
            ledger.map_of_mount_and_check = ledger.map_of_mount_and_check.plus(&map_done);
        }
        ledger.map_phase_start = map_now;
        ledger.phase = Some(phase);
        ledger.phase_start = now;
        ledger.claimed = FlashCounts::default();
    }

    /// The phase the run is in (None before the first).
    pub fn phase(&self) -> Option<Cause> {
        self.causes.phase
    }

    /// Every operation so far by cause (map-class operations are `map`, but in mounts and checks theirs),
    /// closing the current phase's books.
    pub fn counts_by_cause(&mut self) -> [FlashCounts; Cause::COUNT] {
        let phase = self.causes.phase.unwrap_or(Cause::Host);
        self.enter_phase(phase);
        let mut out = self.causes.by_cause;
        out[Cause::Map as usize] = self.workload_map_counts();
        out
    }

    /// The scheme's mapping-page I/O for the workload: all of it but what mounts and crash-test checks did, as
    /// of the last phase change ([`Device::counts_by_cause`] closes the books first).
    pub fn workload_map_counts(&self) -> FlashCounts {
        self.chip
            .counts(OpClass::Map)
            .minus(&self.causes.map_of_mount_and_check)
    }

    /// Time so far by cause, in microseconds; the entries sum to [`Device::elapsed_us`].
    pub fn time_by_cause_us(&mut self) -> [f64; Cause::COUNT] {
        let counts = self.counts_by_cause();
        let mut out = [0.0; Cause::COUNT];
        for cause in Cause::ALL {
            out[*cause as usize] = counts[*cause as usize].time_us(&self.timing);
        }
        out[Cause::Nvram as usize] += self.nvram_us;
        out
    }

    /// Counts a cache hit or miss of the workload; the crash test's check reads every page through the scheme
    /// and is not counted (it made DFTL's miss ratio under power cuts the check's).
    #[inline]
    pub fn record_cache(&mut self, cache: CacheKind, hit: bool) {
        self.record_cache_n(cache, hit, 1);
    }

    /// [`Device::record_cache`] of `n` lookups alike.
    #[inline]
    pub fn record_cache_n(&mut self, cache: CacheKind, hit: bool, n: u64) {
        if self.causes.phase == Some(Cause::Check) {
            return;
        }
        let c = &mut self.stats.cache[cache as usize];
        if hit {
            c.0 += n;
        } else {
            c.1 += n;
        }
    }

    /// Records the pages written in a log block at the moment it is replaced (FAST paper Fig. 4).
    pub fn record_log_utilization(&mut self, written_pages: u32) {
        let bins = self.stats.log_utilization.len() - 1;
        self.stats.log_utilization[(written_pages as usize).min(bins)] += 1;
    }

    /// Zeroes every counter after preconditioning; data on the chip stays.
    pub fn reset_counters(&mut self) {
        self.chip.reset_counters();
        self.stats = Stats::new(self.geometry.pages_per_block);
        self.causes = CauseLedger::default();
        self.copies = 0;
        self.nvram_us = 0.0;
        if let Some(t) = self.timeline.as_deref_mut() {
            t.reset();
        }
    }

    /// An error for a scheme that found no free block where it needed one.
    pub fn out_of_space(&self, what: impl Into<String>) -> FlashError {
        FlashError::OutOfSpace {
            scheme: self.scheme.clone(),
            what: what.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spare_reads_of_a_run_at_once_count_and_cut_where_reads_one_by_one_do() {
        // Block 1 of 4-page blocks holds lpns 4 and 5 at pages 0 and 1 and lpn 7 at page 3.
        let mut dev = Device::toy(4);
        for (page, lpn) in [(0, 4), (1, 5), (3, 7)] {
            dev.program(Ppn(4 + page), 1, Lpn(lpn)).unwrap();
        }
        let mut lpns = [Opt::NONE; 4];
        dev.read_spare_lpns(Pbn(1), 1..4, &mut lpns[..3]).unwrap();
        assert_eq!(lpns[..3], [Opt::some(Lpn(5)), Opt::NONE, Opt::some(Lpn(7))]);
        assert_eq!(dev.counts().spare_reads, 3);
        // A cut armed on the second read lands there: the first read is counted, the rest not done.
        lpns = [Opt::NONE; 4];
        dev.arm_power_cut(Some(2));
        assert!(dev.read_spare_lpns(Pbn(1), 0..4, &mut lpns).is_err());
        assert_eq!(dev.counts().spare_reads, 4);
        assert_eq!(lpns, [Opt::some(Lpn(4)), Opt::NONE, Opt::NONE, Opt::NONE]);
        // One past the run: done in one call, and the cut still comes on the operation after it.
        dev.arm_power_cut(Some(5));
        dev.read_spare_lpns(Pbn(1), 0..4, &mut lpns).unwrap();
        assert_eq!(lpns[..2], [Opt::some(Lpn(4)), Opt::some(Lpn(5))]);
        assert!(dev.read_spare(Ppn(4)).is_err());
        assert_eq!(dev.counts().spare_reads, 8);
    }

    #[test]
    fn a_backward_scan_counts_and_cuts_where_reads_one_by_one_do() {
        // Block 1 of 4-page blocks holds lpns 4 and 5 at pages 0 and 1 and lpn 7 at page 3.
        let mut dev = Device::toy(4);
        for (page, lpn) in [(0, 4), (1, 5), (3, 7)] {
            dev.program(Ppn(4 + page), 1, Lpn(lpn)).unwrap();
        }
        // In one call: down from page 3 until lpn 5 is met (pages 3, 2 and 1 read).
        let mut seen = Vec::new();
        let until_5 = |seen: &mut Vec<_>, o, lpn: Opt<Lpn>| {
            seen.push((o, lpn.get().map(|l| l.0)));
            lpn != Opt::some(Lpn(5))
        };
        let at = dev
            .scan_spare_lpns_down(Pbn(1), 4, |o, lpn| until_5(&mut seen, o, lpn))
            .unwrap();
        assert_eq!(at, 1);
        assert_eq!(seen, [(3, Some(7)), (2, None), (1, Some(5))]);
        assert_eq!(dev.counts().spare_reads, 3);
        // Page by page with a cut armed past the scan: the same reads, and the cut comes after them.
        seen.clear();
        dev.arm_power_cut(Some(4));
        let at = dev
            .scan_spare_lpns_down(Pbn(1), 4, |o, lpn| until_5(&mut seen, o, lpn))
            .unwrap();
        assert_eq!(at, 1);
        assert_eq!(seen, [(3, Some(7)), (2, None), (1, Some(5))]);
        assert!(dev.read_spare(Ppn(4)).is_err());
        // A cut on the scan's second read lands there: one read counted and seen.
        seen.clear();
        dev.arm_power_cut(Some(2));
        assert!(dev
            .scan_spare_lpns_down(Pbn(1), 4, |o, lpn| until_5(&mut seen, o, lpn))
            .is_err());
        assert_eq!(seen, [(3, Some(7))]);
        assert_eq!(dev.counts().spare_reads, 7);
    }
}
