//! A block map kept on flash and loaded one zone at a time (TinyFTL paper §II and §VI.B: Logblock with zone
//! switching). Only the current zone's entries are in RAM. Entering another zone flushes the current zone's
//! map pages if they changed (page programs to the map blocks) and loads the new zone's pages (page reads);
//! a change to an entry of a zone that is not loaded is a read-modify-write of the one map page holding it.
//! All of it runs in the map class ([`crate::ftl::common::mechanisms::map_area::MapArea`]), so it is reported as map reads and writes
//! and charged to the request that caused it; zone hits and switches are the `zone` cache's hits and misses.

use crate::addr::{Lbn, Pbn};
use crate::device::Device;
use crate::device::Result;
use crate::ftl::common::mechanisms::map_area::MapArea;
use crate::nand::OpClass;
use crate::stats::CacheKind;

pub struct ZoneMap {
    zone_blocks: u32,
    entry_bytes: u32,
    page_bytes: u32,
    pages_per_zone: u32,
    current: Option<u32>,
    dirty: bool,
    area: MapArea,
    /// The map blocks: `first..first + blocks`.
    first: Pbn,
    blocks: u32,
    zones: u32,
}

impl ZoneMap {
    /// Map pages of one zone: its entries packed into pages.
    pub fn pages_per_zone(zone_blocks: u32, entry_bytes: u32, page_bytes: u32) -> u32 {
        (zone_blocks * entry_bytes).div_ceil(page_bytes)
    }

    /// Map blocks the zones of `logical_blocks` need (with the map area's slack for garbage collection).
    pub fn map_blocks(
        logical_blocks: u32,
        zone_blocks: u32,
        entry_bytes: u32,
        page_bytes: u32,
        ppb: u32,
    ) -> u32 {
        let zones = logical_blocks.div_ceil(zone_blocks);
        MapArea::min_blocks(
            zones * Self::pages_per_zone(zone_blocks, entry_bytes, page_bytes),
            ppb,
        )
    }

    /// Zones of `zone_blocks` logical blocks over `logical_blocks`, their map pages in map blocks
    /// `first..first + map_blocks(..)`.
    pub fn new(
        logical_blocks: u32,
        zone_blocks: u32,
        entry_bytes: u32,
        page_bytes: u32,
        ppb: u32,
        first: Pbn,
    ) -> ZoneMap {
        let zones = logical_blocks.div_ceil(zone_blocks);
        let pages_per_zone = Self::pages_per_zone(zone_blocks, entry_bytes, page_bytes);
        let blocks = Self::map_blocks(logical_blocks, zone_blocks, entry_bytes, page_bytes, ppb);
        ZoneMap {
            zone_blocks,
            entry_bytes,
            page_bytes,
            pages_per_zone,
            current: None,
            dirty: false,
            area: MapArea::new(first, blocks, zones * pages_per_zone, ppb),
            first,
            blocks,
            zones,
        }
    }

    /// Makes the zone of logical block `lbn` the loaded one.
    pub fn enter(&mut self, lbn: Lbn, dev: &mut Device) -> Result<()> {
        let zone = lbn.0 / self.zone_blocks;
        let hit = self.current == Some(zone);
        dev.record_cache(CacheKind::Zone, hit);
        if hit {
            return Ok(());
        }
        self.flush(dev)?;
        for page in self.zone_pages(zone) {
            self.area.read(dev, page)?;
        }
        self.current = Some(zone);
        Ok(())
    }

    /// The block map entry of `lbn` changed.
    pub fn changed(&mut self, lbn: Lbn, dev: &mut Device) -> Result<()> {
        let zone = lbn.0 / self.zone_blocks;
        if self.current == Some(zone) {
            self.dirty = true;
            return Ok(());
        }
        let page = zone * self.pages_per_zone
            + (lbn.0 % self.zone_blocks) * self.entry_bytes / self.page_bytes;
        self.area.read(dev, page)?;
        self.area.write(dev, page)
    }

    /// Writes the loaded zone's map pages back if they changed.
    pub fn flush(&mut self, dev: &mut Device) -> Result<()> {
        if let (Some(zone), true) = (self.current, self.dirty) {
            for page in self.zone_pages(zone) {
                self.area.write(dev, page)?;
            }
        }
        self.dirty = false;
        Ok(())
    }

    /// Mount: the block map was rebuilt from the data and log blocks' spare areas (the map pages hold no
    /// more than those); the map blocks are found by their spare areas (read up to the first erased page),
    /// those holding pages erased, and every zone's map pages written afresh, so that the map area's RAM
    /// (where each map page lives) is rebuilt from the chip. No zone is loaded.
    pub fn mount(&mut self, dev: &mut Device) -> Result<()> {
        let ppb = dev.geometry().pages_per_block;
        for pbn in (self.first.0..self.first.0 + self.blocks).map(Pbn) {
            let mut programmed = false;
            for o in 0..ppb {
                if dev.read_spare_in(OpClass::Map, dev.ppn(pbn, o))?.seq == 0 {
                    break;
                }
                programmed = true;
            }
            if programmed {
                dev.erase_in(OpClass::Map, pbn)?;
            }
        }
        let pages = self.zones * self.pages_per_zone;
        self.area = MapArea::new(self.first, self.blocks, pages, ppb);
        for page in 0..pages {
            self.area.write(dev, page)?;
        }
        self.current = None;
        self.dirty = false;
        Ok(())
    }

    fn zone_pages(&self, zone: u32) -> std::ops::Range<u32> {
        zone * self.pages_per_zone..(zone + 1) * self.pages_per_zone
    }
}
