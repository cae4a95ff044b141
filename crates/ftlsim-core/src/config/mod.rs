//! Device geometry, timing and the papers' presets.
//!
//! A preset sets geometry and timing together; every field can be overridden per run ([`DeviceOverrides`]),
//! so that a test can build the papers' toy devices (4 pages a block, a handful of blocks).

mod array;
pub use array::{ArrayPlacement, ArraySpec};

use crate::text::clip;
pub use crate::text::{format_size, parse_size, SizeError};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// The shape of the device as the host and the scheme see it. Physical blocks are
/// `logical_blocks + the scheme's extra blocks`; the scheme says how many extra it needs.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Geometry {
    pub page_bytes: u32,
    pub spare_bytes: u32,
    pub pages_per_block: u32,
    /// Blocks the host can address (logical capacity / block size).
    pub logical_blocks: u32,
    /// MLC rule: the pages of a block are programmed in increasing order.
    pub sequential_program: bool,
}

impl Geometry {
    pub fn block_bytes(&self) -> u64 {
        self.page_bytes as u64 * self.pages_per_block as u64
    }

    pub fn logical_pages(&self) -> u32 {
        self.logical_blocks * self.pages_per_block
    }

    pub fn logical_bytes(&self) -> u64 {
        self.logical_blocks as u64 * self.block_bytes()
    }
}

/// Latency of each flash operation in microseconds. Elapsed time is the sum over operations of count x latency.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Timing {
    pub read_us: f64,
    pub spare_read_us: f64,
    pub program_us: f64,
    pub spare_program_us: f64,
    pub erase_us: f64,
}

impl Timing {
    /// Every operation takes `us` microseconds (toy devices in tests, where time is a count of operations).
    pub fn uniform(us: f64) -> Timing {
        Timing {
            read_us: us,
            spare_read_us: us,
            program_us: us,
            spare_program_us: us,
            erase_us: us,
        }
    }
}

/// A named device from one of the papers.
#[derive(Clone, Debug, Serialize)]
pub struct Preset {
    pub name: &'static str,
    pub summary: &'static str,
    pub page_bytes: u32,
    pub spare_bytes: u32,
    pub pages_per_block: u32,
    /// Logical capacity the paper used, if it names one.
    pub capacity_bytes: Option<u64>,
    pub sequential_program: bool,
    pub timing: Timing,
    /// Channels, chips, dies and planes, and the channel's timing ([`ArraySpec::SINGLE`]: one chip).
    pub array: ArraySpec,
    /// Blocks in each plane, for an array preset: its capacity is this many striped blocks.
    pub blocks_per_plane: Option<u32>,
}

/// The preset used when none is given.
pub const DEFAULT_PRESET: &str = "lee2007";

/// Every preset, in the order `ftlsim list` shows them.
pub const PRESETS: &[Preset] = &[
    Preset {
        name: "lee2007",
        summary: "FAST paper (Lee et al. 2007) section 4: 512 B sectors, 32 a block; 15 us read, 200 us write, 2 ms erase. \
                  The paper gives no spare timings: a spare access costs what a sector access does.",
        page_bytes: 512,
        spare_bytes: 16,
        pages_per_block: 32,
        capacity_bytes: None,
        sequential_program: false,
        timing: Timing { read_us: 15.0, spare_read_us: 15.0, program_us: 200.0, spare_program_us: 200.0, erase_us: 2000.0 },
        array: ArraySpec::SINGLE,
        blocks_per_plane: None,
    },
    Preset {
        name: "samsung-k9f2808",
        summary: "NFTL paper (Choudhuri & Givargis 2007) Table 1, Samsung 16 MB: 512 B + 16 B pages, 16 KB blocks; \
                  36 us read, 10 us OOB read, 200 us write and OOB write, 2 ms erase",
        page_bytes: 512,
        spare_bytes: 16,
        pages_per_block: 32,
        capacity_bytes: Some(16 << 20),
        sequential_program: false,
        timing: Timing { read_us: 36.0, spare_read_us: 10.0, program_us: 200.0, spare_program_us: 200.0, erase_us: 2000.0 },
        array: ArraySpec::SINGLE,
        blocks_per_plane: None,
    },
    Preset {
        name: "toshiba-tc58dvm72",
        summary: "NFTL paper (Choudhuri & Givargis 2007) Table 1, Toshiba 16 MB: 512 B + 16 B pages, 16 KB blocks; \
                  52 us read, 26 us OOB read, 200 us write and OOB write, 2 ms erase",
        page_bytes: 512,
        spare_bytes: 16,
        pages_per_block: 32,
        capacity_bytes: Some(16 << 20),
        sequential_program: false,
        timing: Timing { read_us: 52.0, spare_read_us: 26.0, program_us: 200.0, spare_program_us: 200.0, erase_us: 2000.0 },
        array: ArraySpec::SINGLE,
        blocks_per_plane: None,
    },
    Preset {
        name: "mlc-k9gag08",
        summary: "TinyFTL paper (Lee et al.) Table II, MLC: 2 KB + 64 B pages, 128 a block, in-order programming; \
                  112.8 us read, 61.6 us spare read, 852.8 us program, 1.5 ms erase. A spare-only program is \
                  charged a full page program (the table gives none).",
        page_bytes: 2048,
        spare_bytes: 64,
        pages_per_block: 128,
        capacity_bytes: None,
        sequential_program: true,
        timing: Timing { read_us: 112.8, spare_read_us: 61.6, program_us: 852.8, spare_program_us: 852.8, erase_us: 1500.0 },
        array: ArraySpec::SINGLE,
        blocks_per_plane: None,
    },
    Preset {
        name: "tinyftl-16g",
        summary: "TinyFTL paper (Lee et al.) §V.E and §VI.B, the 16 GB MLC DOM: 2 KB + 64 B pages, 128 a block, \
                  65,536 blocks of which 24 in every 1,024 (1,536) are non-data, so the host sees 64,000 blocks \
                  (16,777,216,000 bytes); Table II timing as mlc-k9gag08, in-order programming. Table IV's RAM of \
                  the log-block schemes is for 393 log blocks: -p log_blocks=393 (tiny takes 393 here by itself; \
                  bast, fast and the others keep their own default unless told)",
        page_bytes: 2048,
        spare_bytes: 64,
        pages_per_block: 128,
        capacity_bytes: Some(64_000 * 256 * 1024),
        sequential_program: true,
        timing: Timing { read_us: 112.8, spare_read_us: 61.6, program_us: 852.8, spare_program_us: 852.8, erase_us: 1500.0 },
        array: ArraySpec::SINGLE,
        blocks_per_plane: None,
    },
    Preset {
        name: "mqsim-default",
        summary: "MQSim's shipped ssdconfig.xml (CMU-SAFARI/MQSim @ 7172c5c): 8 channels x 4 chips x 2 dies x 2 \
                  planes, 2,048 blocks per plane of 256 pages of 8 KiB + 448 B; 75 us read, 750 us program, \
                  3.8 ms erase; channels 1 byte wide at 333 MT/s. Every scheme runs striped over the 128 planes \
                  (a block of 32,768 pages); shrink it to fit a laptop with -p blocks_per_plane=16. MQSim gives \
                  spare accesses no time of their own: a spare access costs a page access.",
        page_bytes: 8192,
        spare_bytes: 448,
        pages_per_block: 256,
        capacity_bytes: None,
        sequential_program: true,
        timing: Timing { read_us: 75.0, spare_read_us: 75.0, program_us: 750.0, spare_program_us: 750.0, erase_us: 3800.0 },
        array: ArraySpec {
            channels: 8,
            chips_per_channel: 4,
            dies_per_chip: 2,
            planes_per_die: 2,
            channel_mts: Some(333.0),
            channel_width_bytes: 1,
            command_us: 0.0,
        },
        blocks_per_plane: Some(2048),
    },
];

pub fn preset(name: &str) -> Result<&'static Preset> {
    PRESETS
        .iter()
        .find(|p| p.name == name)
        .ok_or_else(|| ConfigError::Unknown {
            kind: "preset",
            key: "preset",
            name: name.to_string(),
            valid: PRESETS
                .iter()
                .map(|p| p.name)
                .collect::<Vec<_>>()
                .join(", "),
        })
}

/// The largest page: 1 MiB, 512 times the papers' largest (2 KiB); a block of 4,096 of them is 4 GiB.
pub const MAX_PAGE_BYTES: u32 = 1 << 20;

/// The bytes of a page's spare area the chip writes with every page ([`crate::nand::Spare`]): its logical page
/// (4), program sequence number (4), scheme word (4) and flag bits (1). Mount, the crash test and the schemes
/// that look a page up by its spare area read them back, so a smaller spare area could not hold what they read.
pub const MIN_SPARE_BYTES: u32 = 13;

/// The most pages a striped block (pages per physical block x plane-units) may have.
pub const MAX_STRIPED_PAGES: u32 = 1 << 20;

/// The longest flash or NVRAM operation, in microseconds: 1,000 s. Totals over any run stay finite.
pub const MAX_OP_US: f64 = 1e9;

/// Checks the latency `key` = `us` of one operation: a finite number of microseconds from 0 to [`MAX_OP_US`].
pub fn check_op_us(key: &str, us: f64, typical: f64) -> std::result::Result<(), Invalid> {
    if us.is_finite() && (0.0..=MAX_OP_US).contains(&us) {
        Ok(())
    } else {
        Err(Invalid::new(
            key,
            us,
            format!("must be a finite number of microseconds from 0 to {MAX_OP_US:e}"),
            Some(typical.to_string()),
        ))
    }
}

/// Per-run overrides of a preset's fields. Absent fields keep the preset's value.
#[derive(Clone, Debug, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct DeviceOverrides {
    /// Bytes, as a number or a size with a unit (`"2KiB"`, see [`parse_size`]).
    #[serde(deserialize_with = "bytes_u32")]
    pub page_bytes: Option<u32>,
    #[serde(deserialize_with = "bytes_u32")]
    pub spare_bytes: Option<u32>,
    pub pages_per_block: Option<u32>,
    pub sequential_program: Option<bool>,
    pub read_us: Option<f64>,
    pub spare_read_us: Option<f64>,
    pub program_us: Option<f64>,
    pub spare_program_us: Option<f64>,
    pub erase_us: Option<f64>,
    /// Fraction of the chip's blocks bad from the factory (`bad_blocks.rs`), 0 to 0.5.
    pub bad_block_ratio: Option<f64>,
    /// Erases a block survives before an erase fails and it goes bad (e.g. 10,000 MLC, 100,000 SLC).
    pub endurance: Option<u32>,
    /// Chip blocks kept to replace bad blocks; default: the factory share plus 2% when `endurance` is set.
    pub bad_block_reserve: Option<u32>,
    /// Seed of the factory bad blocks' positions (default 1).
    pub bad_block_seed: Option<u64>,
    /// A multi-chip array (`array/`): its counts (default 1 each, one chip) ...
    pub channels: Option<u32>,
    pub chips_per_channel: Option<u32>,
    pub dies_per_chip: Option<u32>,
    pub planes_per_die: Option<u32>,
    /// ... the capacity in blocks per plane (the scheme's spare blocks come on top) ...
    pub blocks_per_plane: Option<u32>,
    /// ... and the channel: transfer rate in MT/s, width in bytes, command overhead per operation in us.
    pub channel_mts: Option<f64>,
    pub channel_width_bytes: Option<u32>,
    pub command_us: Option<f64>,
    /// How schemes run on the array: `striped` (default) or `per-die` ([`ArrayPlacement`]).
    pub placement: Option<String>,
}

/// A preset with its overrides applied: everything but the logical capacity.
#[derive(Clone, Debug, Serialize)]
pub struct DeviceSpec {
    pub preset: &'static str,
    pub page_bytes: u32,
    pub spare_bytes: u32,
    pub pages_per_block: u32,
    pub sequential_program: bool,
    pub preset_capacity_bytes: Option<u64>,
    pub timing: Timing,
    pub bad_block_ratio: f64,
    pub endurance: Option<u32>,
    pub bad_block_reserve: Option<u32>,
    pub bad_block_seed: u64,
    pub array: ArraySpec,
    pub blocks_per_plane: Option<u32>,
    pub placement: ArrayPlacement,
}

impl DeviceSpec {
    /// Resolves a preset and overrides, reporting every problem at once.
    pub fn resolve(preset_name: Option<&str>, o: &DeviceOverrides) -> Result<DeviceSpec> {
        let p = preset(preset_name.unwrap_or(DEFAULT_PRESET))?;
        let placement = o
            .placement
            .as_deref()
            .map_or(Ok(ArrayPlacement::Striped), ArrayPlacement::parse);
        let spec = DeviceSpec {
            preset: p.name,
            page_bytes: o.page_bytes.unwrap_or(p.page_bytes),
            spare_bytes: o.spare_bytes.unwrap_or(p.spare_bytes),
            pages_per_block: o.pages_per_block.unwrap_or(p.pages_per_block),
            sequential_program: o.sequential_program.unwrap_or(p.sequential_program),
            preset_capacity_bytes: p.capacity_bytes,
            timing: Timing {
                read_us: o.read_us.unwrap_or(p.timing.read_us),
                spare_read_us: o.spare_read_us.unwrap_or(p.timing.spare_read_us),
                program_us: o.program_us.unwrap_or(p.timing.program_us),
                spare_program_us: o.spare_program_us.unwrap_or(p.timing.spare_program_us),
                erase_us: o.erase_us.unwrap_or(p.timing.erase_us),
            },
            bad_block_ratio: o.bad_block_ratio.unwrap_or(0.0),
            endurance: o.endurance,
            bad_block_reserve: o.bad_block_reserve,
            bad_block_seed: o.bad_block_seed.unwrap_or(1),
            array: ArraySpec {
                channels: o.channels.unwrap_or(p.array.channels),
                chips_per_channel: o.chips_per_channel.unwrap_or(p.array.chips_per_channel),
                dies_per_chip: o.dies_per_chip.unwrap_or(p.array.dies_per_chip),
                planes_per_die: o.planes_per_die.unwrap_or(p.array.planes_per_die),
                channel_mts: o.channel_mts.or(p.array.channel_mts),
                channel_width_bytes: o.channel_width_bytes.unwrap_or(p.array.channel_width_bytes),
                command_us: o.command_us.unwrap_or(p.array.command_us),
            },
            blocks_per_plane: o.blocks_per_plane.or(p.blocks_per_plane),
            placement: *placement.as_ref().unwrap_or(&ArrayPlacement::Striped),
        };
        let mut problems: Vec<Invalid> = placement.err().into_iter().collect();
        if !(512..=MAX_PAGE_BYTES).contains(&spec.page_bytes) || !spec.page_bytes.is_power_of_two()
        {
            problems.push(Invalid::new(
                "page_bytes",
                spec.page_bytes,
                format!("must be a power of two from 512 to {MAX_PAGE_BYTES} (1 MiB)"),
                Some("2048".into()),
            ));
        } else if spec.spare_bytes < MIN_SPARE_BYTES {
            problems.push(Invalid::new(
                "spare_bytes",
                spec.spare_bytes,
                format!(
                    "is less than the {MIN_SPARE_BYTES} bytes written in every page's spare area (logical page 4, \
                     sequence number 4, scheme word 4, flag bits 1), which mount and the schemes read back"
                ),
                Some("16".into()),
            ));
        } else if spec.spare_bytes > spec.page_bytes {
            problems.push(Invalid::new(
                "spare_bytes",
                spec.spare_bytes,
                format!(
                    "is more than the page's {} bytes; a spare area is a small part of a page",
                    spec.page_bytes
                ),
                Some((spec.page_bytes / 32).to_string()),
            ));
        }
        if !(2..=4096).contains(&spec.pages_per_block) {
            problems.push(Invalid::new(
                "pages_per_block",
                spec.pages_per_block,
                "must be between 2 and 4096",
                Some("64".into()),
            ));
        }
        let (t, lee) = (&spec.timing, &PRESETS[0].timing);
        for (name, v, typical) in [
            ("read_us", t.read_us, lee.read_us),
            ("spare_read_us", t.spare_read_us, lee.spare_read_us),
            ("program_us", t.program_us, lee.program_us),
            ("spare_program_us", t.spare_program_us, lee.spare_program_us),
            ("erase_us", t.erase_us, lee.erase_us),
        ] {
            if let Err(e) = check_op_us(name, v, typical) {
                problems.push(e);
            }
        }
        let array_problems = spec.array.problems();
        let array_ok = array_problems.is_empty();
        problems.extend(array_problems);
        if array_ok && problems.is_empty() {
            let striped = spec.pages_per_block as u64 * spec.array.units() as u64;
            if striped > MAX_STRIPED_PAGES as u64 {
                problems.push(Invalid::new(
                    "pages_per_block",
                    spec.pages_per_block,
                    format!(
                        "x {} planes is a striped block of {striped} pages, more than {MAX_STRIPED_PAGES}; use fewer \
                         pages per block or fewer planes",
                        spec.array.units()
                    ),
                    None,
                ));
            } else if let Some(b) = spec.blocks_per_plane {
                let limit = u32::MAX as u64 / 2 / striped;
                if b == 0 || b as u64 > limit {
                    problems.push(Invalid::new(
                        "blocks_per_plane",
                        b,
                        format!("must be from 1 to {limit} for this array"),
                        Some("16".into()),
                    ));
                }
            }
        }
        if !(0.0..=0.5).contains(&spec.bad_block_ratio) {
            problems.push(Invalid::new(
                "bad_block_ratio",
                spec.bad_block_ratio,
                "must be a fraction from 0 to 0.5",
                Some("0.02".into()),
            ));
        }
        if spec.endurance == Some(0) {
            problems.push(Invalid::new(
                "endurance",
                0,
                "would fail the first erase; give erases per block",
                Some("10000".into()),
            ));
        }
        if let Some(reserve) = spec.bad_block_reserve {
            let limit = u32::MAX / 2 / spec.scheme_pages_per_block().max(1);
            if reserve > limit {
                problems.push(Invalid::new(
                    "bad_block_reserve",
                    reserve,
                    format!("is more than the {limit} blocks this geometry can address"),
                    Some("32".into()),
                ));
            }
        }
        if problems.is_empty() {
            let mut spec = spec;
            if let Some(blocks) = spec.blocks_per_plane {
                // Blocks per plane on every plane-unit, whichever block the scheme sees.
                spec.preset_capacity_bytes = Some(
                    blocks as u64
                        * spec.page_bytes as u64
                        * spec.pages_per_block as u64
                        * spec.array.units() as u64,
                );
            }
            Ok(spec)
        } else {
            Err(ConfigError::Invalid {
                within: Some("device".into()),
                problems,
            })
        }
    }

    /// The chip's bad-block options for a scheme of `physical_blocks` blocks; None for a chip without bad
    /// blocks (no ratio, endurance or reserve given), which then has no bad-block layer at all.
    pub fn bad_block_options(&self, physical_blocks: u32) -> Option<BadBlockOptions> {
        if self.bad_block_ratio == 0.0
            && self.endurance.is_none()
            && self.bad_block_reserve.is_none()
        {
            return None;
        }
        Some(BadBlockOptions {
            ratio: self.bad_block_ratio,
            endurance: self.endurance,
            reserve: self.bad_block_reserve.unwrap_or_else(|| {
                BadBlockOptions::default_reserve(
                    physical_blocks,
                    self.bad_block_ratio,
                    self.endurance,
                )
            }),
            seed: self.bad_block_seed,
        })
    }

    /// Bytes of the scheme's block (striped over every plane-unit of an array).
    pub fn block_bytes(&self) -> u64 {
        self.page_bytes as u64 * self.scheme_pages_per_block() as u64
    }

    /// Pages of the scheme's block: a physical block's on one chip, one physical block per plane-unit on an
    /// array (the striped superblock, `array/mod.rs`), one per plane of its die per die (`ftl/per_die.rs`).
    pub fn scheme_pages_per_block(&self) -> u32 {
        match self.placement {
            ArrayPlacement::Striped => self.pages_per_block * self.array.units(),
            ArrayPlacement::PerDie => self.pages_per_block * self.array.planes_per_die,
        }
    }

    /// The scheme instances a run has: one per die with `placement = "per-die"`, else one.
    pub fn partitions(&self) -> u32 {
        match self.placement {
            ArrayPlacement::Striped => 1,
            ArrayPlacement::PerDie => self.array.dies(),
        }
    }

    /// Whether the array model (event-driven timing, `array/`) runs: more than one plane-unit, or queueing
    /// asked for.
    pub fn array_model_on(&self, queue_depth: Option<u32>, time_scale: Option<f64>) -> bool {
        self.array.units() > 1 || queue_depth.is_some() || time_scale.is_some()
    }

    /// The geometry for a logical capacity in bytes, rounded up to a whole block.
    pub fn geometry(&self, capacity_bytes: u64) -> Result<Geometry> {
        self.geometry_of(capacity_bytes, false)
    }

    /// [`DeviceSpec::geometry`] for a capacity that is a trace's furthest byte (no capacity was stated), which
    /// a capacity too large for the geometry says.
    pub fn geometry_for_trace(&self, trace_end: u64) -> Result<Geometry> {
        self.geometry_of(trace_end, true)
    }

    fn geometry_of(&self, capacity_bytes: u64, from_trace: bool) -> Result<Geometry> {
        let blocks = capacity_bytes.div_ceil(self.block_bytes()).max(1);
        let max_blocks = (u32::MAX / 2 / self.scheme_pages_per_block()) as u64;
        if blocks > max_blocks {
            // A capacity the trace gave (none was stated) is not made smaller without folding the trace in.
            let (whence, smaller) = if from_trace {
                (
                    " (where the trace's furthest request ends: the capacity when none is given)",
                    "",
                )
            } else {
                ("", " or a smaller capacity")
            };
            let problem = Invalid::new(
                "capacity",
                capacity_bytes,
                format!(
                    "bytes{whence} is {blocks} blocks, more than the {max_blocks} this geometry can address; use \
                     larger pages (page_bytes){smaller}"
                ),
                None,
            )
            .or(
                "compact",
                true,
                "to map only the 1 MiB extents a sparse trace touches",
            );
            return Err(if from_trace {
                problem.or(
                    "wrap",
                    true,
                    "with a smaller capacity, to fold the trace's addresses into it",
                )
            } else {
                problem
            }
            .into());
        }
        Ok(Geometry {
            page_bytes: self.page_bytes,
            spare_bytes: self.spare_bytes,
            pages_per_block: self.scheme_pages_per_block(),
            logical_blocks: blocks as u32,
            sequential_program: self.sequential_program,
        })
    }
}

/// The bad-block options of a device, resolved.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct BadBlockOptions {
    /// Fraction of the chip's blocks that are bad from the factory.
    pub ratio: f64,
    /// Erases a block survives; None: unlimited.
    pub endurance: Option<u32>,
    /// Chip blocks beyond the scheme's, for factory and grown bad blocks.
    pub reserve: u32,
    pub seed: u64,
}

impl BadBlockOptions {
    /// The default reserve for `blocks` scheme blocks: the factory bad blocks plus 2% of the blocks for
    /// blocks that wear out (NAND data sheets promise at least 98% good blocks over the rated endurance).
    pub fn default_reserve(blocks: u32, ratio: f64, endurance: Option<u32>) -> u32 {
        let grown = if endurance.is_some() { 0.02 } else { 0.0 };
        // The factory share is of the whole chip (blocks + reserve): solve r = ratio (blocks + r) + grown.
        let reserve = (blocks as f64 * (ratio + grown)) / (1.0 - ratio);
        reserve.ceil() as u32 + (ratio > 0.0) as u32
    }

    /// Factory bad blocks on a chip of `chip_blocks` blocks.
    pub fn factory_count(&self, chip_blocks: u32) -> u32 {
        (self.ratio * chip_blocks as f64).round() as u32
    }
}

/// `bytes` as a device field, or the error of one too large, which names the value as it was `given` (`5TiB`).
fn at_most_u32<E: serde::de::Error>(
    bytes: u64,
    given: impl std::fmt::Display,
) -> std::result::Result<Option<u32>, E> {
    u32::try_from(bytes).map(Some).map_err(|_| {
        E::custom(format!(
            "{given} must be at most {} bytes, 4 GiB less one byte (a device field holds 32 bits)",
            crate::text::thousands(u32::MAX.into())
        ))
    })
}

/// A device field in bytes given as a number (`2048`) or a size with a unit (`"2KiB"`): a config names a page
/// size the way a datasheet does. Each error reads "{the value given} {what is wrong}", which a front end splits
/// into its key's problem (`-p page_bytes=big does not parse; ...`).
fn bytes_u32<'de, D: serde::Deserializer<'de>>(
    de: D,
) -> std::result::Result<Option<u32>, D::Error> {
    use serde::de::{Error, Visitor};

    struct Bytes;
    impl<'de> Visitor<'de> for Bytes {
        type Value = Option<u32>;

        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a number of bytes or a size such as \"2KiB\"")
        }

        fn visit_u64<E: Error>(self, v: u64) -> std::result::Result<Self::Value, E> {
            at_most_u32(v, v)
        }

        fn visit_i64<E: Error>(self, v: i64) -> std::result::Result<Self::Value, E> {
            match u64::try_from(v) {
                Ok(v) => self.visit_u64(v),
                Err(_) => Err(E::custom(format!(
                    "{v} must not be negative; give a size such as 2048 or \"2KiB\""
                ))),
            }
        }

        fn visit_f64<E: Error>(self, v: f64) -> std::result::Result<Self::Value, E> {
            if v.fract() == 0.0 && (0.0..=u32::MAX as f64).contains(&v) {
                Ok(Some(v as u32))
            } else {
                Err(E::custom(format!(
                    "{v} is not a whole number of bytes; give a size such as 2048 or \"2KiB\""
                )))
            }
        }

        fn visit_str<E: Error>(self, v: &str) -> std::result::Result<Self::Value, E> {
            let bytes = parse_size_of("", v)
                .map_err(|e| E::custom(format!("{} {}", e.value, e.expected)))?;
            at_most_u32(bytes, v)
        }

        fn visit_none<E: Error>(self) -> std::result::Result<Self::Value, E> {
            Ok(None)
        }

        fn visit_unit<E: Error>(self) -> std::result::Result<Self::Value, E> {
            Ok(None)
        }

        fn visit_some<D: serde::Deserializer<'de>>(
            self,
            de: D,
        ) -> std::result::Result<Self::Value, D::Error> {
            de.deserialize_any(Bytes)
        }
    }
    de.deserialize_option(Bytes)
}

/// At most 400 characters of a parser's message (it quotes the offending key or value whole).
fn clip_message(message: &str) -> String {
    match message.char_indices().nth(400) {
        None => message.to_string(),
        Some((cut, _)) => format!("{}... (message clipped)", &message[..cut]),
    }
}

/// Parses a JSON configuration (`what`: "run configuration", "trace options") into `T`. An error names the
/// key (`device.page_bytes`, `params.log_blocks`) and what was expected; a NaN or an infinity (which Python's
/// `json` writes) is named as such, not as a bad character.
pub fn from_json<T: DeserializeOwned>(what: &str, text: &str) -> Result<T> {
    let mut de = serde_json::Deserializer::from_str(text);
    let value = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        // A key can be any length: quote at most 80 characters of it (the fuzzer sent a 2 KB key).
        let key = match e.path().to_string().as_str() {
            "." => String::new(),
            path => format!("{}: ", clip(path)),
        };
        let inner = e.into_inner();
        // serde_json stops at the token's first letter (after a minus sign).
        let line = text
            .lines()
            .nth(inner.line().saturating_sub(1))
            .unwrap_or("");
        let at = |back: usize| {
            line.get(inner.column().saturating_sub(back)..)
                .unwrap_or("")
        };
        let token = [("-Infinity", 2), ("NaN", 1), ("Infinity", 1)]
            .into_iter()
            .find(|&(t, back)| inner.is_syntax() && at(back).starts_with(t));
        match token.map(|(t, _)| t) {
            Some(token) => ConfigError::Param(format!(
                "bad {what}: {key}{token} is not a finite number; give a finite number"
            )),
            None => {
                // The key is named: the position in the JSON the front end generated means nothing to the user.
                let message = inner.to_string();
                let position = format!(" at line {} column {}", inner.line(), inner.column());
                let message = match message.strip_suffix(&position) {
                    Some(bare) if inner.is_data() && !key.is_empty() => bare,
                    _ => &message,
                };
                ConfigError::Param(format!("bad {what}: {key}{}", clip_message(message)))
            }
        }
    })?;
    de.end()
        .map_err(|e| ConfigError::Param(format!("bad {what}: {e}")))?;
    Ok(value)
}

/// An error in a run's configuration: a name that is not known, or a parameter whose value is not allowed.
#[derive(Debug, Error)]
pub enum ConfigError {
    #[error("unknown {kind} `{name}`; valid names: {valid}")]
    Unknown {
        kind: &'static str,
        /// The configuration key that names it (`ftl` for a scheme), for a front end's fields.
        key: &'static str,
        name: String,
        valid: String,
    },

    /// Parameters whose values are not allowed, every one reported at once; `within` names the group they
    /// belong to ("device"), if any.
    #[error("invalid parameter: {}{}", within.as_ref().map(|w| format!("{w}: ")).unwrap_or_default(), join(problems))]
    Invalid {
        within: Option<String>,
        problems: Vec<Invalid>,
    },

    /// A parameter problem said in free text: several parameters together, or a value that did not parse.
    #[error("invalid parameter: {0}")]
    Param(String),

    /// A scheme's build was handed another scheme's typed configuration: a caller's mistake, not a user's.
    #[error(
        "scheme `{scheme}` was built from a {given}; parse its parameters with its own registry row's `parse`"
    )]
    WrongParams { scheme: String, given: &'static str },
}

/// A parameter whose value is not allowed. Its parts let a front end spell the key its own way (`--page-bytes`
/// on the command line, `page_bytes=` in Python); Display spells it as the configuration does:
/// `page_bytes=4000 must be a power of two ...; e.g. page_bytes=2048`.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("{key}={value} {expected}{}{}", suggestion.as_ref().map(|s| format!("; e.g. {key}={s}")).unwrap_or_default(), alternatives.iter().map(|a| format!(", or {}={} ({})", a.key, a.value, a.does)).collect::<String>())]
pub struct Invalid {
    /// The parameter, as the configuration names it (`page_bytes`, `bad_block_reserve`).
    pub key: String,
    /// The value given, as text.
    pub value: String,
    /// What is wrong with the value and what is allowed ("must be a power of two from 512 to 1048576").
    pub expected: String,
    /// A value of the same key that would do, e.g. `2048`.
    pub suggestion: Option<String>,
    /// Other settings that would do instead (`wrap=true` for a capacity too small), in the order to try them.
    pub alternatives: Vec<Alternative>,
}

/// A setting of another key that fixes an [`Invalid`] value instead of changing it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Alternative {
    pub key: String,
    pub value: String,
    /// What it does, e.g. "to fold addresses into the device".
    pub does: String,
}

impl Invalid {
    pub fn new(
        key: impl Into<String>,
        value: impl std::fmt::Display,
        expected: impl Into<String>,
        suggestion: Option<String>,
    ) -> Invalid {
        Invalid {
            key: key.into(),
            value: value.to_string(),
            expected: expected.into(),
            suggestion,
            alternatives: Vec::new(),
        }
    }

    /// With `key=value` as another way to fix it, which `does` what it says.
    pub fn or(mut self, key: &str, value: impl std::fmt::Display, does: &str) -> Invalid {
        self.alternatives.push(Alternative {
            key: key.into(),
            value: value.to_string(),
            does: does.into(),
        });
        self
    }
}

fn join(problems: &[Invalid]) -> String {
    problems
        .iter()
        .map(Invalid::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

impl ConfigError {
    /// The parameters whose values were not allowed (empty for any other error).
    pub fn invalid(&self) -> &[Invalid] {
        match self {
            ConfigError::Invalid { problems, .. } => problems,
            _ => &[],
        }
    }
}

impl From<Invalid> for ConfigError {
    fn from(problem: Invalid) -> ConfigError {
        ConfigError::Invalid {
            within: None,
            problems: vec![problem],
        }
    }
}

impl From<SizeError> for ConfigError {
    fn from(SizeError(message): SizeError) -> ConfigError {
        ConfigError::Param(message)
    }
}

/// [`parse_size`] of option `key` (`capacity`, `nvram`, ...): an error is a problem of that key, with the
/// value given, what is wrong with it, and for a bare `M` (`K`, `G`, `T`) the binary unit as the suggestion.
pub fn parse_size_of(key: &str, text: &str) -> Result<u64, Invalid> {
    parse_size(text).map_err(|SizeError(msg)| {
        let quoted = format!("size `{}` ", crate::text::clip(text));
        let expected = msg.strip_prefix(&quoted).unwrap_or(&msg).to_string();
        let t = text.trim();
        let rest = t.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.');
        let (number, unit) = (&t[..t.len() - rest.len()], rest.trim());
        let binary = ["k", "m", "g", "t"]
            .contains(&unit.to_ascii_lowercase().as_str())
            .then(|| format!("{number}{}iB", unit.to_ascii_uppercase()));
        Invalid::new(key, crate::text::clip(text), expected, binary)
    })
}

/// The result of the configuration layer.
pub type Result<T, E = ConfigError> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_size_that_does_not_parse_is_a_problem_of_its_key() {
        let parsecs = parse_size_of("nvram", "2 parsecs").unwrap_err();
        assert_eq!(
            (parsecs.key.as_str(), parsecs.value.as_str()),
            ("nvram", "2 parsecs")
        );
        assert_eq!(
            parsecs.expected,
            "does not parse; write a number with an optional unit B, KiB, MiB, GiB, TiB (powers of 1024) or kB, \
             MB, GB, TB (powers of 1000), e.g. \"34MiB\", of at most 16 EiB - 1 byte"
        );
        assert_eq!(parsecs.suggestion, None);
        let bare = parse_size_of("capacity", "64M").unwrap_err();
        assert!(bare
            .expected
            .starts_with("has the unit `M`, which could mean MiB"));
        assert_eq!(bare.suggestion.as_deref(), Some("64MiB"));
    }

    #[test]
    fn device_sizes_take_units() {
        let o: DeviceOverrides =
            from_json("device", r#"{"page_bytes": "2KiB", "spare_bytes": 64}"#).unwrap();
        assert_eq!((o.page_bytes, o.spare_bytes), (Some(2048), Some(64)));
        let o: DeviceOverrides = from_json("device", r#"{"page_bytes": null}"#).unwrap();
        assert_eq!(o.page_bytes, None);
        for (json, says) in [
            (
                r#"{"page_bytes": "2 parsecs"}"#,
                "page_bytes: 2 parsecs does not parse",
            ),
            (
                r#"{"page_bytes": "8GiB"}"#,
                "page_bytes: 8GiB must be at most 4,294,967,295 bytes",
            ),
            (
                r#"{"spare_bytes": -1}"#,
                "spare_bytes: -1 must not be negative",
            ),
            (
                r#"{"page_bytes": 512.5}"#,
                "page_bytes: 512.5 is not a whole number",
            ),
        ] {
            let err = from_json::<DeviceOverrides>("device", json)
                .unwrap_err()
                .to_string();
            assert!(err.contains(says), "{json}: {err}");
        }
    }

    #[test]
    fn overrides_replace_preset_fields_and_bad_values_are_all_reported() {
        let o = DeviceOverrides {
            pages_per_block: Some(4),
            erase_us: Some(1.0),
            ..Default::default()
        };
        let s = DeviceSpec::resolve(Some("samsung-k9f2808"), &o).unwrap();
        assert_eq!(
            (s.pages_per_block, s.timing.erase_us, s.timing.spare_read_us),
            (4, 1.0, 10.0)
        );
        let bad = DeviceOverrides {
            page_bytes: Some(500),
            read_us: Some(-1.0),
            ..Default::default()
        };
        let msg = DeviceSpec::resolve(None, &bad).unwrap_err().to_string();
        assert!(
            msg.contains("page_bytes=500") && msg.contains("read_us=-1"),
            "{msg}"
        );
        assert!(DeviceSpec::resolve(Some("nope"), &o)
            .unwrap_err()
            .to_string()
            .contains("lee2007"));
    }

    #[test]
    fn a_spare_area_too_small_for_what_the_chip_writes_in_it_is_refused() {
        let spare = |bytes| DeviceOverrides {
            spare_bytes: Some(bytes),
            ..Default::default()
        };
        for bytes in [0, 12] {
            let e = DeviceSpec::resolve(None, &spare(bytes)).unwrap_err();
            assert_eq!(e.invalid()[0].key, "spare_bytes");
            assert!(e
                .to_string()
                .contains(&format!("spare_bytes={bytes} is less than the 13 bytes")));
            assert_eq!(e.invalid()[0].suggestion.as_deref(), Some("16"));
        }
        assert_eq!(
            DeviceSpec::resolve(None, &spare(13)).unwrap().spare_bytes,
            13
        );
    }

    #[test]
    fn a_bad_value_is_reported_as_its_key_value_expectation_and_suggestion() {
        let bad = DeviceOverrides {
            page_bytes: Some(4000),
            endurance: Some(0),
            ..Default::default()
        };
        let e = DeviceSpec::resolve(None, &bad).unwrap_err();
        assert_eq!(
            e.invalid()[0],
            Invalid {
                key: "page_bytes".into(),
                value: "4000".into(),
                expected: "must be a power of two from 512 to 1048576 (1 MiB)".into(),
                suggestion: Some("2048".into()),
                alternatives: Vec::new(),
            }
        );
        assert_eq!(e.invalid()[1].key, "endurance");
        assert_eq!(
            e.to_string(),
            "invalid parameter: device: page_bytes=4000 must be a power of two from 512 to 1048576 (1 MiB); \
             e.g. page_bytes=2048; endurance=0 would fail the first erase; give erases per block; e.g. \
             endurance=10000"
        );
    }

    #[test]
    fn json_errors_name_the_key_the_expected_type_and_non_finite_numbers() {
        let msg = |text: &str| {
            from_json::<DeviceOverrides>("device overrides", text)
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            msg(r#"{"pages_per_block": "big"}"#),
            "invalid parameter: bad device overrides: pages_per_block: invalid type: string \"big\", expected u32"
        );
        assert!(msg(r#"{"page_bytes": "big"}"#).starts_with(
            "invalid parameter: bad device overrides: page_bytes: big does not parse"
        ));
        assert!(msg(r#"{"read_us": NaN}"#).contains("read_us: NaN is not a finite number"));
        assert!(
            msg(r#"{"read_us": -Infinity}"#).contains("read_us: -Infinity is not a finite number")
        );
        assert!(msg(r#"{"pages_per_block": -1}"#)
            .contains("pages_per_block: invalid value: integer `-1`, expected u32"));
        assert!(msg(r#"{"page_bytes": -1}"#).contains("page_bytes: -1 must not be negative"));
        assert!(msg(r#"{"pagebytes": 1}"#)
            .contains("unknown field `pagebytes`, expected one of `page_bytes`"));
        assert!(msg(r#"{} x"#).contains("trailing characters"));
        let ok: DeviceOverrides = from_json("device overrides", r#"{"erase_us": 1.5}"#).unwrap();
        assert_eq!(ok.erase_us, Some(1.5));
    }
}
