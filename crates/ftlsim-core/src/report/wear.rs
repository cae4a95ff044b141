//! Wear (the Wear and RAM section): erase counts over the blocks in service
//! ([`crate::device::Device::in_service_erase_counts`]).

use super::keys::{num, Component, Keys, Section, Unit};
use serde_json::Value;

/// Erase counts over the chip, and the erases preconditioning did before the counters were zeroed.
pub(crate) struct Wear<'a> {
    pub min: u32,
    pub max: u32,
    pub mean: f64,
    /// Chip blocks by erase count, in 10 buckets of `histogram_width` counts each (the last one open).
    pub histogram: &'a [u64],
    pub histogram_width: u32,
    pub precondition_erases: u64,
}

impl Component for Wear<'_> {
    fn visit(&self, k: &mut Keys) {
        k.section(Section::WearAndRam);
        k.shown(true).put(
            "erase_count.max",
            Unit::Count,
            "highest erase count of a block in service",
            self.max,
        );
        k.shown(false).put(
            "erase_count.min",
            Unit::Count,
            "lowest erase count of a block in service",
            self.min,
        );
        k.shown(true).put(
            "erase_count.mean",
            Unit::Count,
            "mean erase count over the blocks in service (with bad blocks: not those bad from the factory nor the \
             unused reserve)",
            num(self.mean),
        );
        k.shown(false).put(
            "erase_count.histogram",
            Unit::Histogram,
            "blocks in service by erase count in 10 buckets of erase_count.histogram_width counts (the last open)",
            serde_json::to_value(self.histogram).unwrap_or(Value::Null),
        );
        k.put(
            "erase_count.histogram_width",
            Unit::Count,
            "erase counts per bucket of erase_count.histogram",
            self.histogram_width,
        );
        k.put(
            "precondition.erases",
            Unit::Count,
            "erases during preconditioning, before the counters were zeroed",
            self.precondition_erases,
        );
    }
}
