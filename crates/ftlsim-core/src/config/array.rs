//! The array's shape and its channel timing: channels x chips per channel x dies per chip x planes per die,
//! where a page of the scheme's (striped) block lives on it, and the two placements of schemes on the array
//! ([`ArrayPlacement`]).
//!
//! A plane-unit is one plane of one die. Unit `u` is on die `u mod dies` and that die on channel
//! `die mod channels`: successive units go over every channel first, then the chips of a channel, then the
//! dies of a chip, then the planes of a die (MQSim's CWDP plane-allocation order), so that successive pages of
//! a striped block land on different channels and dies before two share one.

use crate::config::Invalid;
use serde::{Deserialize, Serialize};

/// Geometry and channel timing of a multi-chip array. The default is one chip with one die and one plane whose
/// transfers take no time: today's single chip, whose operation times already include the transfer.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ArraySpec {
    pub channels: u32,
    pub chips_per_channel: u32,
    pub dies_per_chip: u32,
    pub planes_per_die: u32,
    /// Channel transfer rate in mega-transfers per second; None: transfers take no time.
    pub channel_mts: Option<f64>,
    /// Bytes moved per transfer (the channel's width).
    pub channel_width_bytes: u32,
    /// Command and address cycles of every operation on the channel, in microseconds.
    pub command_us: f64,
}

impl ArraySpec {
    /// One chip, one die, one plane, transfers free.
    pub const SINGLE: ArraySpec = ArraySpec {
        channels: 1,
        chips_per_channel: 1,
        dies_per_chip: 1,
        planes_per_die: 1,
        channel_mts: None,
        channel_width_bytes: 1,
        command_us: 0.0,
    };

    /// The most plane-units an array may have (a striped block has one physical block on each).
    pub const MAX_UNITS: u32 = 4096;

    pub fn dies(&self) -> u32 {
        self.channels * self.chips_per_channel * self.dies_per_chip
    }

    /// Plane-units: one physical block of each makes the scheme's block.
    pub fn units(&self) -> u32 {
        self.dies() * self.planes_per_die
    }

    /// The die of plane-unit `unit`.
    #[inline]
    pub fn die_of_unit(&self, unit: u32) -> u32 {
        unit % self.dies()
    }

    /// The channel of die `die`.
    #[inline]
    pub fn channel_of_die(&self, die: u32) -> u32 {
        die % self.channels
    }

    /// Microseconds to move `bytes` over a channel (the command overhead not included).
    pub fn transfer_us(&self, bytes: u32) -> f64 {
        match self.channel_mts {
            None => 0.0,
            Some(mts) => bytes as f64 / (mts * self.channel_width_bytes as f64),
        }
    }

    /// Every problem with the counts and rates, each with a fix.
    pub fn problems(&self) -> Vec<Invalid> {
        let mut out = Vec::new();
        for (key, v) in [
            ("channels", self.channels),
            ("chips_per_channel", self.chips_per_channel),
            ("dies_per_chip", self.dies_per_chip),
            ("planes_per_die", self.planes_per_die),
            ("channel_width_bytes", self.channel_width_bytes),
        ] {
            if v == 0 {
                let why = if key == "channel_width_bytes" {
                    "must be at least 1: a channel moves at least a byte a transfer"
                } else {
                    "must be at least 1: an array has at least one of each"
                };
                out.push(Invalid::new(key, 0, why, Some("1".into())));
            }
        }
        if out.is_empty() {
            let units = self.channels as u64
                * self.chips_per_channel as u64
                * self.dies_per_chip as u64
                * self.planes_per_die as u64;
            if units > Self::MAX_UNITS as u64 {
                // The largest of the four is the one to lower: to what fits beside the others.
                let shape = [
                    ("channels", self.channels),
                    ("chips_per_channel", self.chips_per_channel),
                    ("dies_per_chip", self.dies_per_chip),
                    ("planes_per_die", self.planes_per_die),
                ];
                let (key, most) = shape.into_iter().max_by_key(|&(_, v)| v).expect("four");
                let fits = Self::MAX_UNITS as u64 / (units / most as u64);
                out.push(Invalid::new(
                    key,
                    most,
                    format!(
                        "makes {} x {} x {} x {} = {} planes (channels x chips_per_channel x dies_per_chip x \
                         planes_per_die), more than the {} an array may have (MQSim's default is 8 x 4 x 2 x 2)",
                        self.channels,
                        self.chips_per_channel,
                        self.dies_per_chip,
                        self.planes_per_die,
                        crate::text::thousands(units),
                        crate::text::thousands(Self::MAX_UNITS.into()),
                    ),
                    (fits > 0).then(|| fits.to_string()),
                ));
            }
        }
        if let Some(mts) = self.channel_mts {
            if !(mts.is_finite() && mts > 0.0 && mts <= 1e6) {
                out.push(Invalid::new(
                    "channel_mts",
                    mts,
                    "must be a transfer rate in MT/s above 0 and at most 1e6",
                    Some("333".into()),
                ));
            }
        }
        if let Err(e) = crate::config::check_op_us("command_us", self.command_us, 0.0) {
            out.push(e);
        }
        out
    }
}

impl Default for ArraySpec {
    fn default() -> Self {
        ArraySpec::SINGLE
    }
}

/// How schemes run on an array (`array/mod.rs`): one instance over a striped superblock, or one instance per
/// die, the die chosen by the logical address (`ftl/per_die.rs`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ArrayPlacement {
    /// A scheme block is one physical block on every plane-unit; successive pages go to successive dies
    /// (MQSim's dynamic CWDP allocation).
    #[default]
    Striped,
    /// One scheme instance per die on that die's blocks; a logical page goes to the die its address selects
    /// (MQSim's static `Plane_Allocation_Scheme`), and GC, merges and wear levelling run per die.
    PerDie,
}

impl ArrayPlacement {
    /// Every placement, as the configuration spells it.
    pub const ALL: [ArrayPlacement; 2] = [ArrayPlacement::Striped, ArrayPlacement::PerDie];

    pub fn name(self) -> &'static str {
        match self {
            ArrayPlacement::Striped => "striped",
            ArrayPlacement::PerDie => "per-die",
        }
    }

    /// The placement `text` names; a problem with the nearest valid one otherwise.
    pub fn parse(text: &str) -> Result<ArrayPlacement, Invalid> {
        if let Some(p) = Self::ALL.iter().find(|p| p.name() == text) {
            return Ok(*p);
        }
        // `per_die`, `perdie`, `Per-Die`, `die`: the second mode misspelt.
        let nearest = if text.to_ascii_lowercase().contains("die") {
            ArrayPlacement::PerDie
        } else {
            ArrayPlacement::Striped
        };
        Err(Invalid::new(
            "placement",
            text,
            "must be striped (a scheme block striped over every plane, the default) or per-die (a scheme \
             instance per die, chosen by address)",
            Some(nearest.name().into()),
        ))
    }
}
