//! `nvram`: a nonvolatile write cache in front of any scheme (hot-write-reference paper, 003 §3 and §4.1:
//! 128 KB of FeRAM that absorbs the VFAT file system's metadata writes).
//!
//! ```text
//! write(lpn): if the policy admits it: keep it in the NVRAM (overwrite in place if cached; else take a free
//!             slot, evicting the least recently used entry to the inner scheme when none is free)
//!             else: write through to the inner scheme, then drop any cached copy of lpn (it is now stale)
//! read(lpn):  the cached token if lpn is in the NVRAM (no flash read), else the inner scheme's read
//! finish:     write every cached page to the inner scheme (unless flush_at_end = false), then inner.finish
//! ```
//! Policies: `metadata` admits writes whose host request is tagged metadata (003 §3: "we take the write
//! references for file system metadata such as File Allocation Table and DOS DIR ENTRY"); `region` admits
//! writes to given byte ranges; `lru` admits every write (a write-back page cache); `bplru` admits every write
//! and manages whole logical blocks (Kim and Ahn, BPLRU, FAST 2008 §3): the victim is the least recently
//! written logical block, and it is written out whole and in page order, the pages it lacks read from the
//! inner scheme and written again ("page padding") so that a log-block scheme can switch-merge it.
//!
//! NVRAM time: `read_us` / `write_us` per page access, charged through [`Device::charge_nvram`]. Default:
//! FeRAM, Ramtron/Cypress FM22L16 (4 Mbit parallel F-RAM, 16-bit bus, 110 ns read and write cycle):
//! page_bytes / 2 cycles x 0.110 us, 28.16 us for a 512 B page. An access is a host read served from the
//! NVRAM, an admitted host write, and reading a cached page out to write it to flash.
//!
//! RAM: the NVRAM is not controller RAM; its index is (lpn and two LRU links per slot), counted as
//! `nvram_index`. Spare area: none (the inner scheme's).
//!
//! Choices where the papers are silent:
//! - The cache holds dirty pages only; reads do not allocate.
//! - A hit is a host read or an admitted write that finds its page cached; a miss is a read that does not or an
//!   admitted write that needs a new slot. Writes a policy does not admit are not cache accesses.
//! - Trim of a cached page keeps the cached data (dropping it would expose an older version on flash; the
//!   `Ftl` contract allows ignoring a trim); trims of other pages go to the inner scheme.
//! - BPLRU: no "LRU compensation" for sequentially written blocks (BPLRU §3.3); padding skips pages that
//!   were never written (there is nothing to copy). The end-of-trace flush writes blocks whole as well.
//! - `evictions` counts eviction events: a page for the page policies, a whole logical block for `bplru`.
//! - `absorbed_share` = 1 - (host page writes that reached the inner scheme: written through, evicted or
//!   flushed) / host page writes. Pages still cached when `flush_at_end = false` count as absorbed.

use super::common::structures::slot_list::SlotList;
use super::{address_bytes, Extra, Ftl, RamItem};
use crate::addr::{Lbn, Lpn, Opt, Token};
use crate::config::{check_op_us, parse_size_of, ConfigError, Geometry, Invalid};
use crate::device::Result;
use crate::device::{Device, RequestInfo};
use crate::figure::{Figure, Unit};
use crate::request::Tag;
use crate::sparse::SparseVec;
use crate::stats::CacheKind;
use serde_json::Value;

/// FM22L16 F-RAM read/write cycle, microseconds per 16-bit word.
pub const FERAM_CYCLE_US: f64 = 0.110;

/// The report keys of the NVRAM cache's own figures (it wraps any scheme) and what each means.
pub const FIGURES: &[Figure] = &[
    Figure {
        key: "nvram.bytes",
        unit: Unit::Bytes,
        description: "size of the NVRAM write cache (nvram)",
        table: false,
    },
    Figure {
        key: "nvram.policy",
        unit: Unit::Text,
        description: "what the NVRAM absorbs (nvram_policy): metadata, region, lru or bplru",
        table: false,
    },
    Figure {
        key: "nvram.slots",
        unit: Unit::Pages,
        description: "pages the NVRAM holds",
        table: false,
    },
    Figure {
        key: "nvram.writes_absorbed",
        unit: Unit::Pages,
        description: "host page writes the NVRAM admitted",
        table: false,
    },
    Figure {
        key: "nvram.absorbed_share",
        unit: Unit::Ratio,
        description: "1 - host page writes that reached the scheme (written through, evicted or flushed) / host page writes",
        table: false,
    },
    Figure {
        key: "nvram.flush_writes",
        unit: Unit::Pages,
        description: "cached pages written to flash by the end-of-trace flush (nvram_flush_at_end)",
        table: false,
    },
    Figure {
        key: "nvram.evictions",
        unit: Unit::Count,
        description: "evictions: a page for the page policies, a whole logical block for bplru",
        table: false,
    },
    Figure {
        key: "nvram.padding_writes",
        unit: Unit::Pages,
        description: "bplru: pages read from flash and rewritten to write an evicted block whole",
        table: false,
    },
    Figure {
        key: "nvram.read_us",
        unit: Unit::Us,
        description: "NVRAM time per page read (nvram_read_us)",
        table: false,
    },
    Figure {
        key: "nvram.write_us",
        unit: Unit::Us,
        description: "NVRAM time per page write (nvram_write_us)",
        table: false,
    },
    Figure {
        key: "time_us.nvram",
        unit: Unit::Us,
        description: "time of NVRAM accesses (time_us.cause.nvram)",
        table: false,
    },
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    Metadata,
    Region,
    Lru,
    Bplru,
}

pub const POLICIES: &[(&str, Policy)] = &[
    ("metadata", Policy::Metadata),
    ("region", Policy::Region),
    ("lru", Policy::Lru),
    ("bplru", Policy::Bplru),
];

/// A resolved NVRAM configuration.
#[derive(Clone, Debug)]
pub struct NvramOptions {
    pub bytes: u64,
    pub policy: Policy,
    /// `region`: admitted logical pages, as half-open ranges [first, end).
    pub regions: Vec<(u32, u32)>,
    pub read_us: f64,
    pub write_us: f64,
    pub flush_at_end: bool,
}

impl NvramOptions {
    /// Parses the run options: `size` like "128KiB", `policy` a name of [`POLICIES`], `regions` (for `region`)
    /// like "0-64KiB,1MiB-2MiB" (byte ranges, end exclusive), latencies in microseconds per page access.
    pub fn parse(
        size: &str,
        policy: &str,
        regions: Option<&str>,
        read_us: Option<f64>,
        write_us: Option<f64>,
        flush_at_end: bool,
        g: &Geometry,
    ) -> Result<NvramOptions, ConfigError> {
        let bytes = parse_size_of("nvram", size)?;
        if bytes < g.page_bytes as u64 {
            return Err(Invalid::new(
                "nvram",
                size,
                format!(
                    "holds no page: it must be at least one page ({} bytes)",
                    g.page_bytes
                ),
                Some("128KiB".into()),
            )
            .into());
        }
        let policy = POLICIES
            .iter()
            .find(|(n, _)| *n == policy)
            .map(|(_, p)| *p)
            .ok_or_else(|| ConfigError::Unknown {
                kind: "nvram policy",
                key: "nvram_policy",
                name: policy.to_string(),
                valid: POLICIES
                    .iter()
                    .map(|(n, _)| *n)
                    .collect::<Vec<_>>()
                    .join(", "),
            })?;
        let mut parsed = Vec::new();
        match (policy, regions) {
            (Policy::Region, None) => {
                return Err(Invalid::new(
                    "nvram_policy",
                    "region",
                    "needs nvram_regions, byte ranges like \"0-64KiB,1MiB-2MiB\"",
                    None,
                )
                .or(
                    "nvram_regions",
                    "0-64KiB",
                    "to name the byte ranges it keeps",
                )
                .into())
            }
            (Policy::Region, Some(text)) => {
                let page = g.page_bytes as u64;
                for range in text.split(',').filter(|r| !r.trim().is_empty()) {
                    let bad = || {
                        ConfigError::from(Invalid::new(
                            "nvram_regions",
                            text,
                            format!("has `{range}`, which is not a byte range START-END with START < END"),
                            Some("0-64KiB".into()),
                        ))
                    };
                    let (a, b) = range.split_once('-').ok_or_else(bad)?;
                    let (a, b) = (
                        parse_size_of("nvram_regions", a)?,
                        parse_size_of("nvram_regions", b)?,
                    );
                    if a >= b {
                        return Err(bad());
                    }
                    let device_end = g.logical_pages() as u64 * page;
                    if a >= device_end {
                        // It would keep nothing, without a word: the run's figures would be the NVRAM's at rest.
                        return Err(ConfigError::from(Invalid::new(
                            "nvram_regions",
                            text,
                            format!(
                                "has `{range}`, which starts at or past the device's end (byte {device_end}, \
                                 its logical capacity) and would keep nothing; name ranges on the device"
                            ),
                            Some(format!("0-{}", device_end.min(64 << 10))),
                        )));
                    }
                    let end = b.div_ceil(page).min(g.logical_pages() as u64);
                    parsed.push(((a / page).min(end) as u32, end as u32));
                }
            }
            (_, Some(_)) => {
                return Err(Invalid::new(
                    "nvram_regions",
                    regions.unwrap_or_default(),
                    "is only used by nvram_policy=\"region\"",
                    None,
                )
                .or(
                    "nvram_policy",
                    "region",
                    "to keep those byte ranges in the NVRAM",
                )
                .into())
            }
            (_, None) => {}
        }
        let feram = g.page_bytes as f64 / 2.0 * FERAM_CYCLE_US;
        for (name, v) in [("nvram_read_us", read_us), ("nvram_write_us", write_us)] {
            if let Some(v) = v {
                check_op_us(name, v, feram)?;
            }
        }
        Ok(NvramOptions {
            bytes,
            policy,
            regions: parsed,
            read_us: read_us.unwrap_or(feram),
            write_us: write_us.unwrap_or(feram),
            flush_at_end,
        })
    }

    fn name(&self) -> &'static str {
        POLICIES
            .iter()
            .find(|(_, p)| *p == self.policy)
            .map(|(n, _)| *n)
            .unwrap_or("?")
    }
}

pub struct Nvram {
    inner: Box<dyn Ftl>,
    opts: NvramOptions,
    ppb: u32,
    logical_pages: u32,
    /// Cached token per slot and the logical page it holds.
    slot_token: Vec<Token>,
    slot_lpn: Vec<Lpn>,
    slot_of: SparseVec<Opt<u32>>,
    free_slots: Vec<u32>,
    /// Page policies: LRU over slots. BPLRU: LRU over block nodes. Most recent at the front, victim at the back.
    lru: SlotList,
    /// BPLRU: the node of each cached logical block, the block of each node and its cached page count.
    node_of: SparseVec<Opt<u32>>,
    node_lbn: Vec<Lbn>,
    node_pages: Vec<u32>,
    free_nodes: Vec<u32>,
    host_writes: u64,
    absorbed: u64,
    to_flash: u64,
    evictions: u64,
    flush_writes: u64,
    padding_writes: u64,
    nvram_us: f64,
    /// Tag of the host request being served (the `metadata` policy's input).
    request_tag: Tag,
}

impl Nvram {
    pub fn new(inner: Box<dyn Ftl>, opts: NvramOptions, g: &Geometry) -> Nvram {
        let slots = (opts.bytes / g.page_bytes as u64).min(g.logical_pages() as u64) as usize;
        let logical_blocks = g.logical_blocks as usize;
        let bplru = opts.policy == Policy::Bplru;
        Nvram {
            inner,
            ppb: g.pages_per_block,
            logical_pages: g.logical_pages(),
            slot_token: vec![0; slots],
            slot_lpn: vec![Lpn(0); slots],
            slot_of: SparseVec::new(g.logical_pages() as usize, Opt::NONE),
            free_slots: (0..slots as u32).rev().collect(),
            lru: SlotList::new(slots),
            node_of: SparseVec::new(if bplru { logical_blocks } else { 0 }, Opt::NONE),
            node_lbn: vec![Lbn(0); if bplru { slots } else { 0 }],
            node_pages: vec![0; if bplru { slots } else { 0 }],
            free_nodes: if bplru {
                (0..slots as u32).rev().collect()
            } else {
                Vec::new()
            },
            opts,
            host_writes: 0,
            absorbed: 0,
            to_flash: 0,
            evictions: 0,
            flush_writes: 0,
            padding_writes: 0,
            nvram_us: 0.0,
            request_tag: Tag::None,
        }
    }

    fn charge(&mut self, us: f64, dev: &mut Device) {
        self.nvram_us += us;
        dev.charge_nvram(us);
    }

    fn admits(&self, lpn: Lpn) -> bool {
        match self.opts.policy {
            Policy::Metadata => self.request_tag == Tag::Metadata,
            Policy::Region => self
                .opts
                .regions
                .iter()
                .any(|&(a, b)| (a..b).contains(&lpn.0)),
            Policy::Lru | Policy::Bplru => true,
        }
    }

    fn free_slot(&mut self, slot: u32) {
        self.slot_of
            .set(self.slot_lpn[slot as usize].index(), Opt::NONE);
        self.free_slots.push(slot);
    }

    /// Writes a cached page out to the inner scheme and frees its slot.
    fn write_out(&mut self, slot: u32, dev: &mut Device) -> Result<()> {
        let lpn = self.slot_lpn[slot as usize];
        let token = self.slot_token[slot as usize];
        self.charge(self.opts.read_us, dev);
        self.inner.write(lpn, token, dev)?;
        self.to_flash += 1;
        self.free_slot(slot);
        Ok(())
    }

    /// Page policies: evicts the least recently written page. Returns the pages written out.
    fn evict_page(&mut self, dev: &mut Device) -> Result<u64> {
        let victim = self.lru.back().expect("evicting with pages cached");
        // Unlinked only once written out: a power cut in between leaves it cached and still the victim.
        self.write_out(victim, dev)?;
        self.lru.unlink(victim);
        Ok(1)
    }

    /// BPLRU: writes the least recently written logical block out whole, in page order, padding the pages the
    /// NVRAM lacks with reads from the inner scheme (BPLRU §3.2). Returns the cached pages written out.
    fn evict_block(&mut self, dev: &mut Device) -> Result<u64> {
        let node = self.lru.back().expect("evicting with blocks cached");
        let lbn = self.node_lbn[node as usize];
        let first = lbn.first_lpn(self.ppb).0;
        let end = (first + self.ppb).min(self.logical_pages);
        let mut written = 0;
        for lpn in (first..end).map(Lpn) {
            if let Some(slot) = self.slot_of.get(lpn.index()).get() {
                self.write_out(slot, dev)?;
                written += 1;
            } else if let Some(token) = self.inner.read(lpn, dev)? {
                self.inner.write(lpn, token, dev)?;
                self.padding_writes += 1;
            }
        }
        // Unlinked only once written out: a power cut in between leaves the rest cached and the block the victim.
        self.lru.unlink(node);
        self.node_of.set(lbn.index(), Opt::NONE);
        self.node_pages[node as usize] = 0;
        self.free_nodes.push(node);
        Ok(written)
    }

    fn evict(&mut self, dev: &mut Device) -> Result<u64> {
        if self.opts.policy == Policy::Bplru {
            self.evict_block(dev)
        } else {
            self.evict_page(dev)
        }
    }

    /// Caches a new page (no slot held yet), evicting first if the NVRAM is full.
    fn insert(&mut self, lpn: Lpn, token: Token, dev: &mut Device) -> Result<()> {
        // BPLRU also needs a free block node: a block whose eviction a power cut interrupted keeps its node.
        while self.free_slots.is_empty()
            || (self.opts.policy == Policy::Bplru && self.free_nodes.is_empty())
        {
            self.evictions += 1;
            self.evict(dev)?;
        }
        let slot = self.free_slots.pop().expect("a slot was freed");
        self.slot_lpn[slot as usize] = lpn;
        self.slot_token[slot as usize] = token;
        self.slot_of.set(lpn.index(), Opt::some(slot));
        if self.opts.policy == Policy::Bplru {
            let lbn = lpn.lbn(self.ppb);
            let node = match self.node_of.get(lbn.index()).get() {
                Some(node) => {
                    self.lru.move_to_front(node);
                    node
                }
                None => {
                    // Fewer blocks than pages are cached, so a node is free whenever a slot is.
                    let node = self.free_nodes.pop().expect("a node per cached page");
                    self.node_of.set(lbn.index(), Opt::some(node));
                    self.node_lbn[node as usize] = lbn;
                    self.lru.push_front(node);
                    node
                }
            };
            self.node_pages[node as usize] += 1;
        } else {
            self.lru.push_front(slot);
        }
        Ok(())
    }
}

impl Ftl for Nvram {
    /// Pages the cache holds none of (an untouched chunk of its slots), as far as the scheme behind maps none.
    fn unmapped_from(&self, lpn: Lpn, pages: u32) -> u32 {
        match self.slot_of.untouched_from(lpn.index()) {
            0 => 0,
            uncached => self.inner.unmapped_from(lpn, pages.min(uncached as u32)),
        }
    }

    /// A miss a page, as [`Ftl::read`] counts.
    fn count_unmapped_reads(&mut self, pages: u32, dev: &mut Device) {
        dev.record_cache_n(CacheKind::Nvram, false, pages as u64);
        self.inner.count_unmapped_reads(pages, dev);
    }

    fn begin_request(&mut self, req: &RequestInfo) {
        self.request_tag = req.tag;
        self.inner.begin_request(req);
    }

    fn listens_to_requests(&self) -> bool {
        true
    }

    /// `measure_from` reached: the cache keeps its pages, its figures start again.
    fn reset_counters(&mut self) {
        self.inner.reset_counters();
        self.host_writes = 0;
        self.absorbed = 0;
        self.to_flash = 0;
        self.evictions = 0;
        self.flush_writes = 0;
        self.padding_writes = 0;
        self.nvram_us = 0.0;
    }

    fn read(&mut self, lpn: Lpn, dev: &mut Device) -> Result<Option<Token>> {
        let slot = self.slot_of.get(lpn.index()).get();
        dev.record_cache(CacheKind::Nvram, slot.is_some());
        if let Some(slot) = slot {
            self.charge(self.opts.read_us, dev);
            return Ok(Some(self.slot_token[slot as usize]));
        }
        self.inner.read(lpn, dev)
    }

    /// A host write; counted (`host_writes`, `absorbed`, `to_flash`) once it is done, as `host.write_pages` counts
    /// it: one a power cut stops (in an eviction it caused) is the run's `power.write_pages_dropped`.
    fn write(&mut self, lpn: Lpn, token: Token, dev: &mut Device) -> Result<()> {
        let slot = self.slot_of.get(lpn.index()).get();
        if !self.admits(lpn) {
            self.inner.write(lpn, token, dev)?;
            self.host_writes += 1;
            self.to_flash += 1;
            if let Some(slot) = slot {
                // Not in BPLRU (it admits all): the stale cached copy must not shadow the flash one. Dropped only
                // once the flash holds the new data: a power cut during that write leaves the cached copy, the
                // last acknowledged one, readable.
                self.lru.unlink(slot);
                self.free_slot(slot);
            }
            return Ok(());
        }
        self.charge(self.opts.write_us, dev);
        dev.record_cache(CacheKind::Nvram, slot.is_some());
        if let Some(slot) = slot {
            (self.host_writes, self.absorbed) = (self.host_writes + 1, self.absorbed + 1);
            self.slot_token[slot as usize] = token;
            let entry = if self.opts.policy == Policy::Bplru {
                self.node_of
                    .get(lpn.lbn(self.ppb).index())
                    .get()
                    .expect("a cached page's block has a node")
            } else {
                slot
            };
            self.lru.move_to_front(entry);
            return Ok(());
        }
        self.insert(lpn, token, dev)?;
        (self.host_writes, self.absorbed) = (self.host_writes + 1, self.absorbed + 1);
        Ok(())
    }

    fn trim(&mut self, lpn: Lpn, dev: &mut Device) -> Result<()> {
        if self.slot_of.get(lpn.index()).is_some() {
            return Ok(());
        }
        self.inner.trim(lpn, dev)
    }

    fn idle(&mut self, dev: &mut Device) -> Result<()> {
        self.inner.idle(dev)
    }

    /// The NVRAM and its index are non-volatile (003 §3): they survive a power cut as they are; the scheme
    /// behind them mounts from flash.
    fn mount(&mut self, dev: &mut Device) -> Result<()> {
        self.inner.mount(dev)
    }

    fn detects_torn_pages(&self) -> bool {
        self.inner.detects_torn_pages()
    }

    fn finish(&mut self, dev: &mut Device) -> Result<()> {
        if self.opts.flush_at_end {
            while !self.lru.is_empty() {
                self.flush_writes += self.evict(dev)?;
            }
        }
        self.inner.finish(dev)
    }

    fn ram(&self) -> Vec<RamItem> {
        let mut items = self.inner.ram();
        let slots = self.slot_lpn.len() as u64;
        let lpn = address_bytes(self.logical_pages as u64);
        let link = address_bytes(slots + 1);
        items.push(RamItem::new(
            "nvram_index",
            slots * (lpn + 2 * link),
            format!("{slots} NVRAM slots x (logical page {lpn} B + 2 LRU links of {link} B)"),
        ));
        items
    }

    fn extra(&self, out: &mut Extra) {
        self.inner.extra(out);
        let share = if self.host_writes == 0 {
            0.0
        } else {
            1.0 - self.to_flash as f64 / self.host_writes as f64
        };
        for (k, v) in [
            ("nvram.bytes", Value::from(self.opts.bytes)),
            ("nvram.policy", Value::from(self.opts.name())),
            ("nvram.slots", Value::from(self.slot_lpn.len() as u64)),
            ("nvram.writes_absorbed", Value::from(self.absorbed)),
            ("nvram.absorbed_share", Value::from(share)),
            ("nvram.flush_writes", Value::from(self.flush_writes)),
            ("nvram.evictions", Value::from(self.evictions)),
            ("nvram.padding_writes", Value::from(self.padding_writes)),
            ("nvram.read_us", Value::from(self.opts.read_us)),
            ("nvram.write_us", Value::from(self.opts.write_us)),
            ("time_us.nvram", Value::from(self.nvram_us)),
        ] {
            out.push((k.to_string(), v));
        }
    }
}
