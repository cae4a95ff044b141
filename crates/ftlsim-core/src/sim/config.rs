//! A run's configuration (`SimConfig`, JSON or TOML) and the device it resolves to: preset, overrides and
//! capacity.

use super::Progress;
use crate::config::{parse_size_of, DeviceOverrides, DeviceSpec, Geometry};
use crate::error::{Result, SimError};
use crate::ftl::{self, Built};
use crate::trace::devices::{self, Layout};
use crate::trace::{self, TraceError, TraceOptions};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::sync::Mutex;

/// Logical capacity for a built-in workload when neither the run nor the preset gives one.
pub const DEFAULT_WORKLOAD_CAPACITY: u64 = 64 << 20;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
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
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum MeasureFrom {
    /// The number of requests served before measuring (0: from the start).
    Request(u64),
    /// A trace time with a unit, e.g. "30s", "1500ms", "200us".
    Time(String),
}

/// Everything a run needs besides the trace. Absent fields take their defaults.
#[derive(Clone, Debug, Serialize, Deserialize)]
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
    /// None: each scheme's own default. See [`build_scheme`].
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

/// A resolved device: its spec, geometry and the logical capacity in bytes, and where the trace's devices lie
/// in it (`devices` other than `fold`).
pub struct Resolved {
    pub spec: DeviceSpec,
    pub geometry: Geometry,
    pub layout: Option<Layout>,
}

/// Resolves the device of a run: preset, overrides and capacity (scanning the trace if it must).
pub fn resolve_device(cfg: &SimConfig, trace_spec: Option<&str>) -> Result<Resolved> {
    resolve_device_with(cfg, trace_spec, &mut |_| true)
}

/// [`resolve_device`], reporting the progress of a capacity scan of the trace (false from `progress` cancels).
pub fn resolve_device_with(
    cfg: &SimConfig,
    trace_spec: Option<&str>,
    progress: &mut dyn FnMut(Progress) -> bool,
) -> Result<Resolved> {
    let spec = DeviceSpec::resolve(cfg.preset.as_deref(), &cfg.device)?;
    // The device layout's pass over the trace also gives the capacity the concatenated devices need.
    let layout = match trace_spec {
        Some(t) => devices::layout(t, &cfg.trace, spec.block_bytes(), &mut |done, total| {
            progress(Progress {
                requests: 0,
                done,
                total,
            })
        })
        .map_err(cancelled)?,
        None => None,
    };
    let capacity = match (&cfg.capacity, spec.preset_capacity_bytes, trace_spec) {
        (Some(text), _, _) => parse_size_of("capacity", text)?,
        (None, Some(bytes), _) => bytes,
        (None, None, Some(t)) if !trace::is_workload(t) => match &layout {
            Some(l) if !cfg.trace.compact => l.total_bytes(),
            _ => remembered_highest_address(t, &cfg.trace, layout.as_ref(), &spec, progress)?,
        },
        _ => DEFAULT_WORKLOAD_CAPACITY,
    };
    if capacity == 0 {
        return Err(SimError::Param("capacity must be more than 0 bytes".into()));
    }
    let geometry = spec.geometry(capacity)?;
    Ok(Resolved {
        spec,
        geometry,
        layout,
    })
}

/// A trace's cancellation as the run's.
pub(crate) fn cancelled(e: TraceError) -> SimError {
    match e {
        TraceError::Cancelled => SimError::Cancelled,
        e => e.into(),
    }
}

/// `highest_address`, remembered per process for an unchanged file (path, length and modification time) read
/// with the same options: a sweep's runs on one trace pay for one capacity pre-pass per worker, not one each.
fn remembered_highest_address(
    path: &str,
    opts: &TraceOptions,
    layout: Option<&Layout>,
    spec: &DeviceSpec,
    progress: &mut dyn FnMut(Progress) -> bool,
) -> Result<u64> {
    type Key = (
        std::path::PathBuf,
        u64,
        std::time::SystemTime,
        String,
        u32,
        u64,
    );
    static SEEN: Mutex<Vec<(Key, u64)>> = Mutex::new(Vec::new());
    const REMEMBERED: usize = 64;
    let key = std::fs::canonicalize(path).and_then(|p| {
        let meta = std::fs::metadata(&p)?;
        Ok((p, meta.len(), meta.modified()?))
    });
    let Ok((file, len, modified)) = key else {
        return highest_address(path, opts, layout, spec, progress);
    };
    let options = serde_json::to_string(opts).expect("plain data");
    let key: Key = (
        file,
        len,
        modified,
        options,
        spec.page_bytes,
        spec.block_bytes(),
    );
    let seen = |key: &Key| {
        SEEN.lock()
            .ok()?
            .iter()
            .find(|(k, _)| k == key)
            .map(|&(_, end)| end)
    };
    if let Some(end) = seen(&key) {
        return Ok(end);
    }
    let end = highest_address(path, opts, layout, spec, progress)?;
    if let Ok(mut seen) = SEEN.lock() {
        if seen.len() == REMEMBERED {
            seen.remove(0);
        }
        seen.push((key, end));
    }
    Ok(end)
}

/// The end of the furthest request in a trace file, in bytes (one streaming pass after `compact`'s, both
/// cancellable).
fn highest_address(
    path: &str,
    opts: &TraceOptions,
    layout: Option<&Layout>,
    spec: &DeviceSpec,
    progress: &mut dyn FnMut(Progress) -> bool,
) -> Result<u64> {
    let mut source = trace::open_in(
        path,
        opts,
        layout,
        u64::MAX,
        spec.page_bytes,
        spec.block_bytes(),
        &mut |done, total| {
            progress(Progress {
                requests: 0,
                done,
                total,
            })
        },
    )
    .map_err(cancelled)?;
    let mut end = 0u64;
    let mut requests = 0u64;
    while let Some(r) = source.next_request() {
        let r = r?;
        end = end.max(r.offset.saturating_add(r.len));
        requests += 1;
        if requests.is_multiple_of(1 << 14) {
            let (done, total) = source.progress();
            if !progress(Progress {
                requests: 0,
                done,
                total,
            }) {
                return Err(SimError::Cancelled);
            }
        }
    }
    Ok(end)
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
                SimError::Param(format!(
                    "measure_from=`{text}`: give a request number (e.g. 10000) or a time with a unit (30s, 1500ms, 200us)"
                ))
            })?;
        match number.trim().parse::<f64>() {
            Ok(v) if v.is_finite() && v >= 0.0 => Ok(Some(v * scale)),
            _ => Err(SimError::Param(format!(
                "measure_from=`{text}`: `{number}` is not a non-negative number; e.g. measure_from=\"30s\""
            ))),
        }
    }
}

/// The largest `over_provisioning` a run accepts: the chip at most twice the logical capacity, as the schemes'
/// own bounds (`ftl/common/bounds.rs`).
pub const MAX_OVER_PROVISIONING: f64 = 1.0;

/// A scheme built for a run, with the chip's spare capacity: `Built::extra_blocks` is what the chip gets,
/// `scheme_extra_blocks` what the scheme itself uses of it.
pub struct BuiltRun {
    pub built: Built,
    pub scheme_extra_blocks: u32,
    /// Every parameter the scheme was built with (the given ones over its defaults, and the spare capacity the
    /// run derived for it): what the report echoes as `config.params`.
    pub params: Value,
}

/// Builds the run's scheme for its geometry, with the spare capacity the run states (`extra_blocks` or
/// `over_provisioning`, the same for every scheme):
/// - a scheme that sizes its spare by an `over_provisioning` parameter (`page`) gets it from the run's figure;
/// - any other scheme takes the blocks its parameters need (`log_blocks`, reserves, map blocks) and the rest of
///   the stated spare stays on the chip unused; a stated spare below the scheme's need is an error that names it.
///
/// With no stated spare, each scheme takes what its parameters need.
pub fn build_scheme(cfg: &SimConfig, g: &Geometry) -> Result<BuiltRun> {
    let stated = match (cfg.extra_blocks, cfg.over_provisioning) {
        (Some(_), Some(_)) => {
            return Err(SimError::Param(
                "give extra_blocks or over_provisioning, not both (one is derived from the other)".into(),
            ))
        }
        (Some(blocks), None) => Some(blocks as u64),
        (None, Some(op)) if op.is_finite() && (0.0..=MAX_OVER_PROVISIONING).contains(&op) => {
            Some((g.logical_blocks as f64 * op).ceil() as u64)
        }
        (None, Some(op)) => {
            return Err(SimError::Param(format!(
                "scheme `{}`: over_provisioning={op} must be a number from 0 to {MAX_OVER_PROVISIONING} (a \
                 fraction of the logical capacity); e.g. over_provisioning=0.07",
                cfg.ftl
            )))
        }
        (None, None) => None,
    };
    let scheme = ftl::scheme(&cfg.ftl)?;
    let Some(stated) = stated else {
        let built = (scheme.build)(&cfg.params, g)?;
        let scheme_extra_blocks = built.extra_blocks;
        return Ok(BuiltRun {
            built,
            scheme_extra_blocks,
            params: ftl::resolve_params(&cfg.ftl, &cfg.params)?,
        });
    };
    let limit = u32::MAX as u64 / g.pages_per_block as u64 - g.logical_blocks as u64;
    if stated > limit {
        return Err(SimError::Param(format!(
            "extra_blocks={stated} makes more physical pages than a 32-bit page address holds; at most {limit} \
             with {} pages a block",
            g.pages_per_block
        )));
    }
    let stated = stated as u32;
    let mut params = cfg.params.clone();
    let takes_op = (scheme.defaults)().get("over_provisioning").is_some();
    if takes_op {
        if params.get("over_provisioning").is_some() {
            return Err(SimError::Param(format!(
                "scheme `{}`: its over_provisioning parameter and the run's extra_blocks / over_provisioning both \
                 state the spare capacity; give one",
                cfg.ftl
            )));
        }
        // The largest fraction whose blocks (rounded up, as the scheme does) are the stated ones.
        let logical = g.logical_blocks as f64;
        let mut op = stated as f64 / logical;
        while (logical * op).ceil() > stated as f64 {
            op = f64::from_bits(op.to_bits() - 1);
        }
        if !params.is_object() {
            params = Value::Object(Default::default());
        }
        params["over_provisioning"] = op.into();
    }
    let built = (scheme.build)(&params, g)?;
    let need = built.extra_blocks;
    if need > stated {
        return Err(SimError::Param(format!(
            "scheme `{}` needs {need} extra blocks with these parameters (its log, reserve or map blocks), but the \
             run gives extra_blocks={stated}; give extra_blocks={need} or more, or parameters that need fewer",
            cfg.ftl
        )));
    }
    Ok(BuiltRun {
        built: Built {
            ftl: built.ftl,
            extra_blocks: stated,
        },
        scheme_extra_blocks: need,
        params: ftl::resolve_params(&cfg.ftl, &params)?,
    })
}
