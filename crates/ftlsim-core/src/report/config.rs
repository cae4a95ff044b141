//! The Config section: the version and the run's configuration as it ran (the device's blocks included).

use super::keys::{num, Component, Keys, Section, Unit};
use serde_json::Value;

/// The run's configuration as the report echoes it.
#[derive(Clone, Debug, Default)]
pub struct ConfigEcho {
    pub scheme: String,
    /// The scheme's parameters as they ran, JSON text.
    pub params: String,
    pub preset: String,
    pub trace: String,
    /// How the trace's devices share the address space: fold, concat, or the devices kept.
    pub devices: String,
    /// The one device / ASU kept (`device`), if any.
    pub device: Option<u64>,
    /// Reads and trims dropped (`writes_only`).
    pub writes_only: bool,
    /// A built-in workload's seed.
    pub seed: Option<u64>,
    pub precondition: String,
    pub page_bytes: u32,
    pub spare_bytes: u32,
    pub pages_per_block: u32,
    pub sequential_program: bool,
    pub capacity_bytes: u64,
    pub logical_blocks: u32,
    pub physical_blocks: u32,
    /// Of the physical blocks beyond the logical ones, those the scheme uses (the rest are unused spare).
    pub scheme_extra_blocks: u32,
    pub read_us: f64,
    pub spare_read_us: f64,
    pub program_us: f64,
    pub spare_program_us: f64,
    pub erase_us: f64,
    /// Whether a partial-page write reads the old page first.
    pub rmw: bool,
    /// The complete resolved configuration, JSON text `{"trace": ..., "config": ...}`: every option with its
    /// default, the scheme's parameters, the capacity, the preset and the trace format that ran.
    pub resolved: String,
}

/// The version and the configuration echo, the first keys of a report.
pub(crate) struct Config<'a> {
    pub version: &'a str,
    pub echo: &'a ConfigEcho,
}

impl Component for Config<'_> {
    fn visit(&self, k: &mut Keys) {
        let c = self.echo;
        k.section(Section::Config);
        k.put(
            "version",
            Unit::Text,
            "ftlsim version that made the report",
            self.version,
        );
        k.put("config.scheme", Unit::Text, "scheme name", c.scheme.clone());
        k.put(
            "config.params",
            Unit::Text,
            "the scheme's parameters (JSON): those given over its defaults, a profile applied, a spare capacity \
             derived; one a scheme fits to a small device ran as its own key says (tiny.log_blocks, ...)",
            c.params.clone(),
        );
        k.put(
            "config.preset",
            Unit::Text,
            "device preset",
            c.preset.clone(),
        );
        k.put(
            "config.trace",
            Unit::Text,
            "trace file or built-in workload",
            c.trace.clone(),
        );
        k.put(
            "config.devices",
            Unit::Text,
            "how the trace's devices share the address space: fold, concat, or the devices kept (concatenated)",
            c.devices.clone(),
        );
        k.put(
            "config.device",
            Unit::Count,
            "the one device / ASU of the trace kept (device; a blkparse major,minor as major x 256 + minor), null \
             for every device",
            c.device.map_or(Value::Null, Value::from),
        );
        k.put(
            "config.writes_only",
            Unit::Flag,
            "the trace's reads and trims dropped (writes_only)",
            c.writes_only,
        );
        if c.seed.is_some() || k.schema() {
            k.put(
                "config.seed",
                Unit::Count,
                "a built-in workload's seed",
                c.seed.unwrap_or(0),
            );
        }
        k.put(
            "config.precondition",
            Unit::Text,
            "none; full: every logical page written once before counting; trace: every request of the trace \
             written once first (PSU FlashSim's warm-up), then the trace counted",
            c.precondition.clone(),
        );
        self.geometry(k);
        self.blocks(k);
        self.timing(k);
        k.put(
            "config.rmw",
            Unit::Flag,
            "a partial-page write reads the old page first",
            c.rmw,
        );
        k.put(
            "config.resolved",
            Unit::Text,
            "the complete resolved configuration, JSON (every option with its default, the scheme's parameters, \
             the capacity unless the trace's reach sized it, the preset, the trace format read): `ftlsim run -c \
             report.json` repeats the run",
            c.resolved.clone(),
        );
    }
}

impl Config<'_> {
    fn geometry(&self, k: &mut Keys) {
        let c = self.echo;
        k.put(
            "config.page_bytes",
            Unit::Bytes,
            "data bytes per page",
            c.page_bytes,
        );
        k.put(
            "config.spare_bytes",
            Unit::Bytes,
            "spare (OOB) bytes per page",
            c.spare_bytes,
        );
        k.put(
            "config.pages_per_block",
            Unit::Pages,
            "pages per erase block",
            c.pages_per_block,
        );
        k.put(
            "config.sequential_program",
            Unit::Flag,
            "MLC rule: pages of a block programmed in increasing order",
            c.sequential_program,
        );
        k.put(
            "config.capacity_bytes",
            Unit::Bytes,
            "logical capacity the host sees",
            c.capacity_bytes,
        );
        k.put(
            "config.logical_blocks",
            Unit::Count,
            "blocks the host can address",
            c.logical_blocks,
        );
    }

    /// The chip's blocks: logical, extra, and the extra ones the scheme uses.
    fn blocks(&self, k: &mut Keys) {
        let c = self.echo;
        let physical = "blocks on the chip: logical plus the scheme's extra blocks";
        k.put(
            "config.physical_blocks",
            Unit::Count,
            physical,
            c.physical_blocks,
        );
        k.put(
            "device.physical_blocks",
            Unit::Count,
            physical,
            c.physical_blocks,
        );
        k.put(
            "device.extra_blocks",
            Unit::Count,
            "physical blocks beyond the logical capacity (log, reserve, map and free blocks)",
            c.physical_blocks.saturating_sub(c.logical_blocks),
        );
        k.put(
            "device.scheme_extra_blocks",
            Unit::Count,
            "of the extra blocks, those the scheme's parameters use (log, reserve, map blocks); the rest of a \
             stated extra_blocks stays unused",
            c.scheme_extra_blocks,
        );
    }

    fn timing(&self, k: &mut Keys) {
        let c = self.echo;
        for (key, value, what) in [
            ("config.read_us", c.read_us, "page read latency"),
            (
                "config.spare_read_us",
                c.spare_read_us,
                "spare read latency",
            ),
            ("config.program_us", c.program_us, "page program latency"),
            (
                "config.spare_program_us",
                c.spare_program_us,
                "spare program latency",
            ),
            ("config.erase_us", c.erase_us, "block erase latency"),
        ] {
            k.put(key, Unit::Us, what, num(value));
        }
    }
}
