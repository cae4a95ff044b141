//! A run's configuration (`SimConfig`, JSON or TOML), as given: [`super::plan`] resolves it.

use crate::config::{DeviceOverrides, Invalid};
use crate::error::{Result, SimError};
use crate::trace::{TraceError, TraceOptions};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Logical capacity for a built-in workload when neither the run nor the preset gives one.
pub const DEFAULT_WORKLOAD_CAPACITY: u64 = 64 << 20;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Precondition {
    /// Start from an erased device.
    #[default]
    None,
    /// Write every logical page once, in order, then zero the counters (the papers assume full data blocks).
    Full,
    /// Write every request of the trace once (reads too, trims skipped), in trace order, then zero the counters
    /// and replay the trace: PSU FlashSim's warm-up.
    Trace,
}

/// Where measurement starts: counters are zeroed when the run reaches it (a warm-up window inside the trace).
/// Read by hand rather than as serde's untagged enum, whose error for `-1` or `true` named no form it takes.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum MeasureFrom {
    /// The number of requests served before measuring (0: from the start).
    Request(u64),
    /// A trace time with a unit, e.g. "30s", "1500ms", "200us".
    Time(String),
}

/// What `measure_from` takes, said after the value given.
const MEASURE_FROM_TAKES: &str =
    "is not a request number (e.g. 10000) or a time with a unit (30s, 1500ms, 200us)";

impl<'de> Deserialize<'de> for MeasureFrom {
    fn deserialize<D: serde::Deserializer<'de>>(de: D) -> std::result::Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = MeasureFrom;

            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str(
                    "a request number (e.g. 10000) or a time with a unit (30s, 1500ms, 200us)",
                )
            }

            fn visit_u64<E: serde::de::Error>(self, v: u64) -> std::result::Result<MeasureFrom, E> {
                Ok(MeasureFrom::Request(v))
            }

            fn visit_i64<E: serde::de::Error>(self, v: i64) -> std::result::Result<MeasureFrom, E> {
                u64::try_from(v)
                    .map(MeasureFrom::Request)
                    .map_err(|_| E::custom(format!("{v} {MEASURE_FROM_TAKES}")))
            }

            fn visit_f64<E: serde::de::Error>(self, v: f64) -> std::result::Result<MeasureFrom, E> {
                if v >= 0.0 && v.fract() == 0.0 && v < u64::MAX as f64 {
                    Ok(MeasureFrom::Request(v as u64))
                } else {
                    Err(E::custom(format!("{v} {MEASURE_FROM_TAKES}")))
                }
            }

            fn visit_bool<E: serde::de::Error>(
                self,
                v: bool,
            ) -> std::result::Result<MeasureFrom, E> {
                Err(E::custom(format!("{v} {MEASURE_FROM_TAKES}")))
            }

            fn visit_str<E: serde::de::Error>(
                self,
                v: &str,
            ) -> std::result::Result<MeasureFrom, E> {
                Ok(MeasureFrom::Time(v.to_string()))
            }
        }
        de.deserialize_any(Visitor)
    }
}

/// Everything a run needs besides the trace. Absent fields take their defaults.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct SimConfig {
    /// Scheme name from the registry.
    pub ftl: String,
    /// The scheme's parameters, a JSON object.
    pub params: Value,
    /// Device preset (default `lee2007`).
    pub preset: Option<String>,
    /// Per-run overrides of the preset's geometry and timing.
    pub device: DeviceOverrides,
    /// Logical capacity, e.g. "34MiB"; default: the preset's, else the trace's highest address rounded up
    /// to a block (64 MiB for a built-in workload).
    pub capacity: Option<String>,
    pub precondition: Precondition,
    pub trace: TraceOptions,
    /// Fold requests beyond the capacity into it (offset modulo capacity) instead of failing.
    pub wrap: bool,
    /// A gap between two requests longer than this lets the scheme work in idle time.
    pub idle_threshold_us: f64,
    /// Size of an NVRAM write cache in front of the scheme, e.g. "128KiB" (`ftl/nvram.rs`); None: no NVRAM.
    pub nvram: Option<String>,
    /// What the NVRAM absorbs: `metadata` (writes tagged metadata), `region`, `lru` or `bplru`.
    pub nvram_policy: String,
    /// `region` policy: byte ranges, e.g. "0-64KiB,1MiB-2MiB" (end exclusive).
    pub nvram_regions: Option<String>,
    /// NVRAM time per page access in microseconds; default FeRAM (see `ftl/nvram.rs`).
    pub nvram_read_us: Option<f64>,
    pub nvram_write_us: Option<f64>,
    /// Write the NVRAM's dirty pages to flash at the end of the trace (reported as `time_us.flush`).
    pub nvram_flush_at_end: bool,
    /// A partial-page write reads the old page first (counted as `host.rmw_page_reads` and
    /// `flash.page_reads.rmw`); false writes the page without reading it.
    pub rmw: bool,
    /// Zero the counters once the run reaches this request number or trace time.
    pub measure_from: Option<MeasureFrom>,
    /// Spare capacity, stated the same way for every scheme: physical blocks beyond the logical ones.
    /// None: each scheme's own default. See [`super::plan::SchemePlan::resolve`].
    pub extra_blocks: Option<u32>,
    /// The same as a fraction of the logical blocks (give this or `extra_blocks`, not both).
    pub over_provisioning: Option<f64>,
    /// Crash test: cut the power at this many flash operations chosen at random over the run, mount the
    /// scheme from flash after each, check every logical page, and go on with the trace.
    pub power_cuts: u32,
    pub power_cut_seed: u64,
    /// Mount the scheme from flash once after the trace, to measure its boot cost (`mount.*` keys).
    pub mount_at_end: bool,
    /// A power cut that lands on a page program tears it: the page reads back uncorrectable and the scheme
    /// must ignore it when it mounts.
    pub torn_pages: bool,
    /// Multi-chip array model (`array/`): most requests in the device at once (default 32 when the model is
    /// on); giving it turns the model on.
    pub queue_depth: Option<u32>,
    /// Requests arrive at trace time x this (0.5: twice as fast); giving it turns the array model on.
    pub time_scale: Option<f64>,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            ftl: "page".into(),
            params: Value::Object(Default::default()),
            preset: None,
            device: DeviceOverrides::default(),
            capacity: None,
            precondition: Precondition::None,
            trace: TraceOptions::default(),
            wrap: false,
            idle_threshold_us: 100_000.0,
            nvram: None,
            nvram_policy: "metadata".into(),
            nvram_regions: None,
            nvram_read_us: None,
            nvram_write_us: None,
            nvram_flush_at_end: true,
            rmw: true,
            measure_from: None,
            extra_blocks: None,
            over_provisioning: None,
            power_cuts: 0,
            power_cut_seed: 1,
            mount_at_end: false,
            torn_pages: false,
            queue_depth: None,
            time_scale: None,
        }
    }
}

/// A trace's cancellation as the run's.
pub(crate) fn cancelled(e: TraceError) -> SimError {
    match e {
        TraceError::Cancelled => SimError::Cancelled,
        e => e.into(),
    }
}

impl MeasureFrom {
    /// The trace time in microseconds, for a time; None for a request number.
    pub fn time_us(&self) -> Result<Option<f64>> {
        let MeasureFrom::Time(text) = self else {
            return Ok(None);
        };
        let t = text.trim();
        let (number, scale) = [("us", 1.0), ("ms", 1e3), ("s", 1e6)]
            .iter()
            .find_map(|(unit, scale)| t.strip_suffix(unit).map(|n| (n, *scale)))
            .ok_or_else(|| {
                Invalid::new("measure_from", text, MEASURE_FROM_TAKES, Some("30s".into()))
            })?;
        match number.trim().parse::<f64>() {
            Ok(v) if v.is_finite() && v >= 0.0 => Ok(Some(v * scale)),
            _ => Err(Invalid::new(
                "measure_from",
                text,
                format!("is not a time: `{number}` is not a non-negative number"),
                Some("30s".into()),
            )
            .into()),
        }
    }
}

/// The largest `over_provisioning` a run accepts: the chip at most twice the logical capacity, as the schemes'
/// own bounds (`ftl/common/bounds.rs`).
pub const MAX_OVER_PROVISIONING: f64 = 1.0;
