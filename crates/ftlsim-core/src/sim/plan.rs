//! A run's plan: everything the configuration and the trace decide, resolved once before the run starts. The
//! device and its capacity, where the trace lands on it (one pre-pass for the device layout and the highest
//! address, remembered per file), the scheme looked up once with the parameters and spare capacity it runs
//! with, the NVRAM, bad blocks, measurement and power cuts, each as a typed value. The run reads the plan, and
//! the report's `config` echoes it: what ran, not what was asked.

use super::config::{
    cancelled, MeasureFrom, Precondition, SimConfig, DEFAULT_WORKLOAD_CAPACITY,
    MAX_OVER_PROVISIONING,
};
use super::{echo, nvram, Progress};
use crate::bad_blocks::BadBlockOptions;
use crate::config::{parse_size_of, ArrayPlacement, ConfigError, DeviceSpec, Geometry, Invalid};
use crate::error::{Result, SimError};
use crate::ftl::nvram::NvramOptions;
use crate::ftl::per_die::PerDie;
use crate::ftl::{self, Built, Ftl, SchemeParams};
use crate::report::ConfigEcho;
use crate::request::Request;
use crate::trace::{self, Placement, RequestSource, Target, TraceOptions};
use serde_json::Value;
use std::cell::Cell;
use std::sync::Mutex;

/// What a run reads: a trace file or built-in workload spec, or requests held in memory.
#[derive(Clone, Copy)]
pub enum Input<'a> {
    Trace(&'a str),
    Memory(&'a [Request]),
}

impl Input<'_> {
    /// The name the report gives the input.
    fn name(&self) -> &str {
        match self {
            Input::Trace(spec) => spec,
            Input::Memory(_) => "memory",
        }
    }
}

/// The device a run resolves to: preset and overrides, the geometry of its logical capacity, and where the
/// trace lands on it.
pub struct Resolved {
    pub spec: DeviceSpec,
    pub geometry: Geometry,
    pub placement: Placement,
    /// The capacity is a trace file's reach: none was stated (nor a preset's).
    pub capacity_from_trace: bool,
    /// The blocks per plane the run gave, which sized the device (a capacity beside them is refused).
    pub blocks_per_plane_given: Option<u32>,
}

impl Resolved {
    /// The geometry a scheme instance is built for: the device's, or one die's share of it when the scheme
    /// runs per die (`ftl/per_die.rs`).
    pub fn scheme_geometry(&self) -> Geometry {
        crate::ftl::per_die::instance_geometry(&self.geometry, self.spec.partitions())
    }
}

/// Where measurement starts, resolved from `measure_from`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum MeasureStart {
    /// Once this many requests are served.
    Request(u64),
    /// At the first request at or after this trace time (microseconds).
    TimeUs(f64),
}

/// The crash test a run makes.
#[derive(Clone, Copy, Debug, Default)]
pub struct PowerOptions {
    /// Power cuts at flash operations chosen with `seed` among those of a dry run.
    pub cuts: u32,
    pub seed: u64,
    /// A cut on a page program tears the page.
    pub torn_pages: bool,
    /// Mount once after the trace, to measure the boot.
    pub mount_at_end: bool,
}

/// Builds a scheme for a geometry.
type Make<'a> = Box<dyn Fn(&Geometry) -> Result<Built> + 'a>;

/// The run's scheme, looked up once: the typed configuration it runs with and the spare capacity it takes, and
/// how to build it again for a second pass (a power-cut plan's dry run, then the run).
pub struct SchemePlan<'a> {
    pub name: String,
    /// Its map's unit, which routes pages to dies when it runs per die.
    pub mapping: ftl::Mapping,
    /// The scheme's configuration, parsed once: the given parameters over its defaults, its profile applied, and
    /// the spare capacity the run derived for it. None for a scheme outside the registry ([`SchemePlan::custom`]).
    pub params: Option<SchemeParams>,
    /// The parameters as the report's `config.params` echoes them: `params` serialised, or a custom scheme's
    /// as given.
    echoed: Value,
    /// The parameters as asked, resolved (`params` without a spare capacity the run derived): what
    /// `config.resolved` records to repeat the run.
    asked: Value,
    /// Physical blocks beyond the logical ones: those the chip has, and those the scheme uses of them.
    pub chip_extra_blocks: u32,
    pub scheme_extra_blocks: u32,
    build: Make<'a>,
}

impl<'a> SchemePlan<'a> {
    /// The scheme placed on `device` as its array says (`placement`): one instance, or one per die
    /// (`ftl/per_die.rs`), each built for [`Resolved::scheme_geometry`]; `first`, where given, is the first.
    pub(super) fn placed(
        &self,
        device: &Resolved,
        first: Option<Box<dyn Ftl>>,
    ) -> Result<Box<dyn Ftl>> {
        let g = device.scheme_geometry();
        let dies = match device.spec.placement {
            ArrayPlacement::Striped => 1,
            ArrayPlacement::PerDie => device.spec.partitions(),
        };
        let mut instances = Vec::with_capacity(dies as usize);
        instances.extend(first);
        while instances.len() < dies as usize {
            instances.push((self.build)(&g)?.ftl);
        }
        if dies == 1 {
            return Ok(instances.pop().expect("one instance"));
        }
        Ok(Box::new(PerDie::new(
            instances,
            self.mapping,
            device.geometry.pages_per_block,
        )))
    }

    /// The registry's scheme `cfg.ftl` with the spare capacity the run states (`extra_blocks` or
    /// `over_provisioning`, the same for every scheme), built once for `g`:
    /// - a scheme that sizes its spare by an `over_provisioning` parameter (`page`) gets it from the run's figure;
    /// - any other scheme takes the blocks its parameters need (`log_blocks`, reserves, map blocks) and the rest
    ///   of the stated spare stays on the chip unused; a stated spare below the scheme's need is an error.
    ///
    /// With no stated spare, the scheme takes what its parameters need.
    pub fn resolve(cfg: &SimConfig, g: &Geometry) -> Result<(SchemePlan<'a>, Built)> {
        let scheme = ftl::scheme(&cfg.ftl)?;
        let stated = stated_extra_blocks(cfg, g)?;
        let asked = (scheme.parse)(scheme, &cfg.params)?;
        let params = match stated {
            Some(stated) if (scheme.defaults)().get("over_provisioning").is_some() => {
                let derived = with_over_provisioning(cfg, cfg.params.clone(), stated, g)?;
                (scheme.parse)(scheme, &derived)?
            }
            _ => asked.clone(),
        };
        let built = (scheme.build)(&params, g)?;
        let need = built.extra_blocks;
        let chip = match stated {
            Some(stated) if need > stated => return Err(too_few(cfg, g, stated, need).into()),
            Some(stated) => stated,
            None => need,
        };
        let plan = SchemePlan {
            name: cfg.ftl.clone(),
            mapping: scheme.mapping,
            echoed: params.to_value(),
            asked: asked.to_value(),
            params: Some(params.clone()),
            chip_extra_blocks: chip,
            scheme_extra_blocks: need,
            build: Box::new(move |g| {
                let built = (scheme.build)(&params, g)?;
                Ok(Built {
                    extra_blocks: chip,
                    ..built
                })
            }),
        };
        let built = Built {
            extra_blocks: chip,
            ..built
        };
        Ok((plan, built))
    }

    /// A scheme that is not in the registry, made by `make` (tests' deliberately broken ones): it takes the
    /// spare it asks for, and its parameters are echoed as given.
    pub fn custom(
        cfg: &SimConfig,
        g: &Geometry,
        make: impl Fn(&Geometry) -> Result<Built> + 'a,
    ) -> Result<(SchemePlan<'a>, Built)> {
        let built = make(g)?;
        let plan = SchemePlan {
            name: cfg.ftl.clone(),
            mapping: ftl::Mapping::Block,
            params: None,
            echoed: cfg.params.clone(),
            asked: cfg.params.clone(),
            chip_extra_blocks: built.extra_blocks,
            scheme_extra_blocks: built.extra_blocks,
            build: Box::new(make),
        };
        Ok((plan, built))
    }
}

/// The error of a stated spare (`stated` extra blocks) below what scheme `cfg.ftl` needs (`need`), on the key the
/// run stated it by: `extra_blocks`, or `over_provisioning` with the blocks it gave and the fraction that would do.
fn too_few(cfg: &SimConfig, g: &Geometry, stated: u32, need: u32) -> Invalid {
    let why = format!(
        "scheme `{}` needs {}{} with these parameters (its log, reserve or map blocks); give that many or more, \
         or parameters that need fewer",
        cfg.ftl,
        crate::text::count_of(need, "extra block"),
        per_instance(cfg),
    );
    match cfg.over_provisioning {
        Some(op) if cfg.extra_blocks.is_none() => {
            // The least fraction in thousandths whose blocks (rounded up, as stated_extra_blocks does) are enough.
            let logical = g.logical_blocks.max(1) as f64;
            let enough = (1..=1000)
                .map(|t| t as f64 / 1000.0)
                .find(|f| (logical * f).ceil() >= need as f64)
                .map(|f| f.to_string());
            let gives = format!(
                "gives {stated} extra blocks on {} logical blocks, too few: {why}",
                g.logical_blocks
            );
            Invalid::new("over_provisioning", op, gives, enough).or(
                "extra_blocks",
                need,
                "the blocks themselves",
            )
        }
        _ => Invalid::new(
            "extra_blocks",
            stated,
            format!("is too few: {why}"),
            Some(need.to_string()),
        ),
    }
}

/// Where the scheme runs an instance per die, the words that say a spare is each instance's.
fn per_instance(cfg: &SimConfig) -> &'static str {
    if cfg.device.placement.as_deref() == Some(ArrayPlacement::PerDie.name()) {
        " on each die (placement=per-die: each die's instance has the spare stated)"
    } else {
        ""
    }
}

/// The spare capacity the run states, in blocks; None when it leaves it to the scheme.
fn stated_extra_blocks(cfg: &SimConfig, g: &Geometry) -> Result<Option<u32>> {
    let stated = match (cfg.extra_blocks, cfg.over_provisioning) {
        (Some(blocks), Some(_)) => {
            return Err(Invalid::new(
                "extra_blocks",
                blocks,
                "is given with over_provisioning: give one of them, not both (one is derived from the other)",
                None,
            )
            .into())
        }
        (Some(blocks), None) => blocks as u64,
        (None, Some(op)) if op.is_finite() && (0.0..=MAX_OVER_PROVISIONING).contains(&op) => {
            (g.logical_blocks as f64 * op).ceil() as u64
        }
        (None, Some(op)) => {
            return Err(ConfigError::Invalid {
                within: Some(format!("scheme `{}`", cfg.ftl)),
                problems: vec![Invalid::new(
                    "over_provisioning",
                    op,
                    format!(
                        "must be a number from 0 to {MAX_OVER_PROVISIONING} (a fraction of the logical capacity)"
                    ),
                    Some("0.07".into()),
                )],
            }
            .into())
        }
        (None, None) => return Ok(None),
    };
    let limit = u32::MAX as u64 / g.pages_per_block as u64 - g.logical_blocks as u64;
    if stated > limit {
        return Err(Invalid::new(
            "extra_blocks",
            stated,
            format!(
                "makes more physical pages than a 32-bit page address holds: at most {limit} with {} pages a \
                 block",
                g.pages_per_block
            ),
            Some(limit.to_string()),
        )
        .into());
    }
    Ok(Some(stated as u32))
}

/// The scheme's parameters with the `over_provisioning` fraction whose blocks (rounded up, as the scheme does)
/// are the `stated` ones: the run's own fraction where it gave one (its blocks are the stated ones by
/// [`stated_extra_blocks`]), so that the echo says `0.07` as given; else, for `extra_blocks`, the largest such
/// fraction.
fn with_over_provisioning(
    cfg: &SimConfig,
    mut params: Value,
    stated: u32,
    g: &Geometry,
) -> Result<Value> {
    if let Some(given) = params.get("over_provisioning") {
        return Err(ConfigError::Invalid {
            within: Some(format!("scheme `{}`", cfg.ftl)),
            problems: vec![Invalid::new(
                "over_provisioning",
                given,
                "is the scheme's parameter, and the run's extra_blocks / over_provisioning states the spare \
                 capacity too: give one",
                None,
            )],
        }
        .into());
    }
    let logical = g.logical_blocks as f64;
    if cfg.over_provisioning.is_none() && stated > g.logical_blocks {
        // The scheme's over_provisioning is a fraction of at most 1: the error is of the key the run gave.
        return Err(Invalid::new(
            "extra_blocks",
            stated,
            format!(
                "is more than the {} logical blocks{}: scheme `{}` takes a spare of at most its logical capacity \
                 (over_provisioning=1)",
                g.logical_blocks,
                per_instance(cfg),
                cfg.ftl
            ),
            Some(g.logical_blocks.to_string()),
        )
        .into());
    }
    let op = match cfg.over_provisioning {
        Some(given) => given,
        None => {
            let mut op = stated as f64 / logical;
            while (logical * op).ceil() > stated as f64 {
                op = f64::from_bits(op.to_bits() - 1);
            }
            op
        }
    };
    debug_assert_eq!((logical * op).ceil(), stated as f64);
    if !params.is_object() {
        params = Value::Object(Default::default());
    }
    params["over_provisioning"] = op.into();
    Ok(params)
}

/// A run, resolved.
pub struct RunPlan<'a> {
    pub device: Resolved,
    pub input: Input<'a>,
    pub trace_options: TraceOptions,
    pub scheme: SchemePlan<'a>,
    /// The chip's blocks: the logical ones and the scheme's spare.
    pub physical_blocks: u32,
    /// None: a chip without bad blocks.
    pub bad_blocks: Option<BadBlockOptions>,
    /// None: no NVRAM in front of the scheme.
    pub nvram: Option<NvramOptions>,
    pub precondition: Precondition,
    /// None: measure from the start.
    pub measure_from: Option<MeasureStart>,
    pub power: PowerOptions,
    pub rmw: bool,
    pub wrap: bool,
    pub idle_threshold_us: f64,
    /// The multi-chip array's host queue: requests in the device at once, and the factor on arrival times
    /// (`crate::array`); both None with one plane: today's serial timing.
    pub queue_depth: Option<u32>,
    pub time_scale: Option<f64>,
    /// The trace's format, size and hash, as the report records them.
    pub trace_facts: crate::report::TraceFacts,
    /// What repeats the run exactly (`config.resolved`): every option with its default and what the run
    /// resolved where the configuration left it open.
    pub resolved_config: String,
    /// The scheme as resolving built it, kept for the first pass so that a run without power cuts builds it once.
    first_build: Cell<Option<Built>>,
}

impl<'a> RunPlan<'a> {
    /// Resolves `cfg` for `input` with the registry's scheme. `progress` is told how the pre-passes over the
    /// trace go (false cancels).
    pub fn resolve(
        cfg: &SimConfig,
        input: Input<'a>,
        progress: &mut dyn FnMut(Progress) -> bool,
    ) -> Result<RunPlan<'a>> {
        let device = resolve_device_with(cfg, Some(input), progress)?;
        let scheme = SchemePlan::resolve(cfg, &device.scheme_geometry())?;
        RunPlan::with_scheme(cfg, input, device, scheme)
    }

    /// [`RunPlan::resolve`] with a scheme made by `make` (see [`SchemePlan::custom`]).
    pub fn resolve_custom(
        cfg: &SimConfig,
        input: Input<'a>,
        make: impl Fn(&Geometry) -> Result<Built> + 'a,
    ) -> Result<RunPlan<'a>> {
        let device = resolve_device_with(cfg, Some(input), &mut |_| true)?;
        let scheme = SchemePlan::custom(cfg, &device.scheme_geometry(), make)?;
        RunPlan::with_scheme(cfg, input, device, scheme)
    }

    fn with_scheme(
        cfg: &SimConfig,
        input: Input<'a>,
        device: Resolved,
        (scheme, built): (SchemePlan<'a>, Built),
    ) -> Result<RunPlan<'a>> {
        let g = device.geometry;
        if cfg.torn_pages && cfg.power_cuts == 0 {
            // A page is torn by a cut during its program: without cuts the option would do nothing.
            let why = "needs power cuts: a page is torn by a power cut during its program";
            let torn = Invalid::new("torn_pages", true, why, Some("false".into()));
            return Err(torn
                .or("power_cuts", 20, "cut the power 20 times in the run")
                .into());
        }
        if cfg.idle_threshold_us < 0.0 || cfg.idle_threshold_us.is_nan() {
            let why = "must not be negative: it is the idle gap (microseconds) after which background work runs";
            let value = cfg.idle_threshold_us;
            return Err(
                Invalid::new("idle_threshold_us", value, why, Some("100000".into())).into(),
            );
        }
        if cfg.torn_pages && !built.ftl.detects_torn_pages() {
            return Err(Invalid::new(
                "torn_pages",
                true,
                format!(
                    "is not for scheme `{}`: it does not yet detect torn pages when it mounts",
                    cfg.ftl
                ),
                Some("false".into()),
            )
            .into());
        }
        // Per die, each instance has its share of the logical blocks and its own spare.
        let physical_blocks = (device.scheme_geometry().logical_blocks + scheme.chip_extra_blocks)
            * device.spec.partitions();
        let measure_from = match &cfg.measure_from {
            None => None,
            Some(MeasureFrom::Request(n)) => Some(MeasureStart::Request(*n)),
            Some(m @ MeasureFrom::Time(_)) => m.time_us()?.map(MeasureStart::TimeUs),
        };
        let array_problems = crate::array::run_option_problems(cfg.queue_depth, cfg.time_scale);
        if !array_problems.is_empty() {
            return Err(ConfigError::Invalid {
                within: None,
                problems: array_problems,
            }
            .into());
        }
        let trace_facts = crate::report::TraceFacts::of(input.name(), &cfg.trace);
        let resolved_config = echo::resolved_config(
            cfg,
            &scheme.asked,
            device.spec.preset,
            (!device.capacity_from_trace).then(|| g.logical_bytes()),
            &trace_facts.format,
            input.name(),
        );
        Ok(RunPlan {
            trace_facts,
            resolved_config,
            bad_blocks: device.spec.bad_block_options(physical_blocks),
            nvram: nvram::nvram_options(cfg, &g)?,
            device,
            input,
            trace_options: cfg.trace.clone(),
            scheme,
            physical_blocks,
            precondition: cfg.precondition,
            measure_from,
            power: PowerOptions {
                cuts: cfg.power_cuts,
                seed: cfg.power_cut_seed,
                torn_pages: cfg.torn_pages,
                mount_at_end: cfg.mount_at_end,
            },
            rmw: cfg.rmw,
            wrap: cfg.wrap,
            idle_threshold_us: cfg.idle_threshold_us,
            queue_depth: cfg.queue_depth,
            time_scale: cfg.time_scale,
            first_build: Cell::new(Some(built)),
        })
    }

    /// The scheme for a pass of the run, placed on the array: the one resolving built first, then new ones.
    pub(super) fn build_scheme(&self) -> Result<Box<dyn Ftl>> {
        self.scheme
            .placed(&self.device, self.first_build.take().map(|built| built.ftl))
    }

    /// Whether measurement starts at this request, `served` requests into the trace.
    pub(super) fn measures_from(&self, served: u64, request: &Request) -> bool {
        match self.measure_from {
            None => false,
            Some(MeasureStart::Request(n)) => served >= n,
            Some(MeasureStart::TimeUs(t)) => request.time_us >= t,
        }
    }

    /// The error for a `measure_from` (resolved: `start`) that the trace ended before: it served `served`
    /// requests, the last at trace time `last_us`. Counting the whole trace instead would give figures that
    /// say they are measured from a point that never came.
    pub(super) fn measure_from_past_end(
        start: MeasureStart,
        served: u64,
        last_us: f64,
    ) -> SimError {
        let (value, trace, suggestion) = match start {
            MeasureStart::Request(n) => (
                n.to_string(),
                format!("it has {} requests", crate::text::thousands(served)),
                (served > 1).then(|| (served / 2).to_string()),
            ),
            MeasureStart::TimeUs(t) if last_us > 0.0 => (
                format_trace_time(t),
                format!("its last request is at {}", format_trace_time(last_us)),
                Some(format_trace_time((last_us / 2.0).floor())),
            ),
            MeasureStart::TimeUs(t) => (
                format_trace_time(t),
                "its requests have no times: give a number of requests".to_string(),
                (served > 1).then(|| (served / 2).to_string()),
            ),
        };
        let why = format!("is past the end of the trace ({trace}): nothing would be measured");
        ConfigError::from(Invalid::new("measure_from", value, why, suggestion)).into()
    }

    /// The report's `config`: the run as it ran.
    pub fn echo(&self) -> ConfigEcho {
        let g = &self.device.geometry;
        let t = &self.device.spec.timing;
        let name = self.input.name();
        ConfigEcho {
            scheme: self.scheme.name.clone(),
            params: self.scheme.echoed.to_string(),
            preset: self.device.spec.preset.to_string(),
            trace: name.to_string(),
            devices: self.trace_options.devices.to_string(),
            device: self.trace_options.device,
            writes_only: self.trace_options.writes_only,
            seed: trace::workloads::workload::parse_spec(name)
                .ok()
                .flatten()
                .map(|w| w.seed()),
            precondition: serde_json::to_value(self.precondition)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default(),
            page_bytes: g.page_bytes,
            spare_bytes: g.spare_bytes,
            pages_per_block: g.pages_per_block,
            sequential_program: g.sequential_program,
            capacity_bytes: g.logical_bytes(),
            logical_blocks: g.logical_blocks,
            physical_blocks: self.physical_blocks,
            scheme_extra_blocks: self.scheme.scheme_extra_blocks * self.device.spec.partitions(),
            read_us: t.read_us,
            spare_read_us: t.spare_read_us,
            program_us: t.program_us,
            spare_program_us: t.spare_program_us,
            erase_us: t.erase_us,
            rmw: self.rmw,
            resolved: self.resolved_config.clone(),
        }
    }
}

/// The run's requests from the start, placed as the plan says: the one opener of a run (its dry run,
/// preconditioning and replay). A trace file is read on a thread of its own ([`trace::read_ahead::read_ahead`]).
pub fn open(plan: &RunPlan) -> Result<Box<dyn RequestSource>> {
    match plan.input {
        Input::Trace(spec) => Ok(trace::read_ahead::read_ahead(trace::open_placed(
            spec,
            &plan.trace_options,
            &plan.device.placement,
            &target(&plan.device.geometry),
        )?)),
        Input::Memory(requests) => Ok(Box::new(trace::VecSource::new(requests.to_vec()))),
    }
}

/// Opens `trace_spec` as a run of `cfg` would read it (the device it sizes, the layout and compaction it asks
/// for), without building a scheme: `ftlsim generate` writes it out. `progress` as for a run.
pub fn open_trace(
    cfg: &SimConfig,
    trace_spec: &str,
    progress: &mut dyn FnMut(Progress) -> bool,
) -> Result<Box<dyn RequestSource>> {
    let input = Some(Input::Trace(trace_spec));
    let sized = size_device(cfg, input, progress)?;
    // A trace file read whole (no capacity stated) lands on a device of its own reach, which a run needs its
    // geometry to address (a count of blocks under 2^31) but reading the trace does not: `convert` of a
    // trace reaching terabytes on small pages is no error.
    if let (SizedBy::TraceReach, Some(placement)) = (sized.by, &sized.placement) {
        let block_bytes = sized.spec.block_bytes();
        let reach = Target {
            logical_bytes: sized.capacity.div_ceil(block_bytes) * block_bytes,
            page_bytes: sized.spec.page_bytes,
            block_bytes,
        };
        return Ok(trace::open_placed(
            trace_spec, &cfg.trace, placement, &reach,
        )?);
    }
    let device = sized.resolve(cfg, input, progress)?;
    Ok(trace::open_placed(
        trace_spec,
        &cfg.trace,
        &device.placement,
        &target(&device.geometry),
    )?)
}

/// What the trace is read onto.
fn target(g: &Geometry) -> Target {
    Target {
        logical_bytes: g.logical_bytes(),
        page_bytes: g.page_bytes,
        block_bytes: g.block_bytes(),
    }
}

/// What a trace is read onto before its device is sized: `spec`'s pages and blocks, no end.
fn unbounded(spec: &DeviceSpec) -> Target {
    Target {
        logical_bytes: u64::MAX,
        page_bytes: spec.page_bytes,
        block_bytes: spec.block_bytes(),
    }
}

/// Whether a run of `cfg` has the multi-chip array model on ([`DeviceSpec::array_model_on`]: response
/// times, utilization, queues), read from its device and run options alone, without a trace: a front end asks
/// before a sweep whose plot needs response times.
pub fn array_model_on(cfg: &SimConfig) -> Result<bool> {
    let spec = DeviceSpec::resolve(cfg.preset.as_deref(), &cfg.device)?;
    Ok(spec.array_model_on(cfg.queue_depth, cfg.time_scale))
}

/// Resolves the device of a run: preset, overrides and capacity (scanning the trace if it must).
pub fn resolve_device(cfg: &SimConfig, trace_spec: Option<&str>) -> Result<Resolved> {
    resolve_device_with(cfg, trace_spec.map(Input::Trace), &mut |_| true)
}

/// The device of a run on `input`. Its capacity is the one stated (`capacity`, else the preset's), else:
/// a trace file's highest address (from the pre-pass that also lays out its devices), the furthest request
/// held in memory, or [`DEFAULT_WORKLOAD_CAPACITY`] for a workload or no input.
fn resolve_device_with(
    cfg: &SimConfig,
    input: Option<Input>,
    progress: &mut dyn FnMut(Progress) -> bool,
) -> Result<Resolved> {
    size_device(cfg, input, progress)?.resolve(cfg, input, progress)
}

/// Where a device's capacity comes from ([`size_device`]).
#[derive(Clone, Copy, PartialEq)]
enum SizedBy {
    /// Stated (`capacity`, or the preset's), or a workload's or a trace held in memory.
    Given,
    /// A trace file's highest address: no capacity was stated.
    TraceReach,
}

/// A device sized but not yet laid out in blocks ([`Sized::resolve`]).
struct Sized {
    spec: DeviceSpec,
    capacity: u64,
    by: SizedBy,
    /// Where a trace file's or memory's requests land (a workload's is surveyed once the device is known).
    placement: Option<Placement>,
}

/// A trace file that holds no request, or whose filters (`writes_only`, `device`) keep none, so that nothing
/// sizes the device and nothing would run: said of the trace and its filters, not as a capacity of 0 that
/// nobody gave.
fn nothing_kept(path: &str, opts: &trace::TraceOptions) -> SimError {
    let what = match (opts.writes_only, opts.device) {
        (false, None) => "holds no request, so there is nothing to run".to_string(),
        (true, None) => "holds only reads and trims, which writes_only drops: no request is left to run; \
                         drop writes_only"
            .to_string(),
        (true, Some(device)) => format!(
            "has no write on device {device}, and writes_only drops its reads and trims: no request is left \
             to run; keep a device with writes (`ftlsim info --writes-only` lists each device's), or drop \
             writes_only"
        ),
        (false, Some(device)) => {
            format!("has no request on device {device}: nothing is left to run; drop the device filter")
        }
    };
    trace::TraceError::Option {
        spec: path.to_string(),
        what,
    }
    .into()
}

/// The device of a run on `input` and its capacity, as [`resolve_device_with`] says; a trace file's
/// pre-pass (its highest address, its devices' layout) is read here.
fn size_device(
    cfg: &SimConfig,
    input: Option<Input>,
    progress: &mut dyn FnMut(Progress) -> bool,
) -> Result<Sized> {
    let spec = DeviceSpec::resolve(cfg.preset.as_deref(), &cfg.device)?;
    let stated = match (&cfg.capacity, spec.preset_capacity_bytes) {
        (Some(text), _) => Some(parse_size_of("capacity", text)?),
        (None, bytes) => bytes,
    };
    let no_capacity = || -> SimError {
        Invalid::new(
            "capacity",
            0,
            "must be more than 0 bytes",
            Some("64MiB".into()),
        )
        .into()
    };
    if stated == Some(0) {
        return Err(no_capacity());
    }
    if let (Some(blocks), Some(capacity)) = (cfg.device.blocks_per_plane, &cfg.capacity) {
        // Either sizes the device; the capacity would win, and the echo would state blocks that did not run.
        let why = format!(
            "is given with a capacity ({capacity}), which sizes the device too: give one of them"
        );
        return Err(ConfigError::from(Invalid::new("blocks_per_plane", blocks, why, None)).into());
    }
    let workload = match input {
        Some(Input::Trace(spec)) if trace::is_workload(spec) => Some(spec),
        _ => None,
    };
    let trace_file = matches!(input, Some(Input::Trace(_))) && workload.is_none();
    let (capacity, placement) = match input {
        Some(Input::Trace(path)) if trace_file => {
            let facts = remembered_facts(path, &cfg.trace, &spec, stated.is_none(), progress)?;
            match stated.or(facts.highest_address) {
                Some(0) | None if !holds_a_request(path, &cfg.trace, &facts.placement, &spec)? => {
                    return Err(nothing_kept(path, &cfg.trace));
                }
                // Only 0-byte requests at byte 0: nothing sizes the device, so the least one runs them (and the
                // run says they read and wrote nothing), as 0-byte requests further on run on the device their
                // offset sizes.
                Some(0) | None => (1, Some(facts.placement)),
                Some(capacity) => (capacity, Some(facts.placement)),
            }
        }
        Some(Input::Memory(requests)) => {
            let end = requests.iter().map(|r| r.offset + r.len).max().unwrap_or(1);
            (stated.unwrap_or(end), Some(Placement::default()))
        }
        Some(Input::Trace(_)) | None => (stated.unwrap_or(DEFAULT_WORKLOAD_CAPACITY), None),
    };
    if let (Some(workload), Some((option, value))) =
        (workload, cfg.trace.set_for_files_only().first())
    {
        let why = format!(
            "applies to trace files, and {workload} is a built-in workload, made rather than read: drop the \
             option (the workload's own parameters shape it: ftlsim list)"
        );
        return Err(ConfigError::from(Invalid::new(*option, value, why, None)).into());
    }
    let by = if stated.is_none() && trace_file {
        SizedBy::TraceReach
    } else {
        SizedBy::Given
    };
    Ok(Sized {
        spec,
        capacity,
        by,
        placement,
    })
}

impl Sized {
    /// The device in blocks, and where `input`'s requests land on it.
    fn resolve(
        self,
        cfg: &SimConfig,
        input: Option<Input>,
        progress: &mut dyn FnMut(Progress) -> bool,
    ) -> Result<Resolved> {
        let Sized {
            spec,
            capacity,
            by,
            placement,
        } = self;
        let geometry = match by {
            SizedBy::TraceReach => spec.geometry_for_trace(capacity)?,
            SizedBy::Given => spec.geometry(capacity)?,
        };
        // A workload is made for the device, so its placement (compaction) is made once the device is known.
        let placement = match (placement, input) {
            (Some(placement), _) => placement,
            (None, Some(Input::Trace(spec))) => Placement::survey(
                spec,
                &cfg.trace,
                &target(&geometry),
                &mut pre_pass(progress),
            )
            .map_err(cancelled)?,
            (None, _) => Placement::default(),
        };
        Ok(Resolved {
            spec,
            geometry,
            placement,
            capacity_from_trace: by == SizedBy::TraceReach,
            blocks_per_plane_given: cfg.device.blocks_per_plane,
        })
    }
}

/// A run's progress callback as a pre-pass's (done, total) one.
fn pre_pass<'p>(
    progress: &'p mut dyn FnMut(Progress) -> bool,
) -> impl FnMut(u64, u64) -> bool + 'p {
    move |done, total| {
        progress(Progress {
            requests: 0,
            done,
            total,
        })
    }
}

/// What a run needs to know of a trace file before it starts: where it lands ([`Placement`]) and, when the
/// capacity is not stated, its highest address once placed.
#[derive(Clone)]
struct TraceFacts {
    placement: Placement,
    highest_address: Option<u64>,
}

/// [`trace_facts`], remembered per process for an unchanged file (path, length and modification time) read
/// with the same options on the same page and block size: a sweep's runs on one trace pay for its pre-passes
/// once per worker, not once each.
fn remembered_facts(
    path: &str,
    opts: &TraceOptions,
    spec: &DeviceSpec,
    need_highest: bool,
    progress: &mut dyn FnMut(Progress) -> bool,
) -> Result<TraceFacts> {
    type Key = (
        std::path::PathBuf,
        u64,
        std::time::SystemTime,
        String,
        u32,
        u64,
    );
    static SEEN: Mutex<Vec<(Key, TraceFacts)>> = Mutex::new(Vec::new());
    const REMEMBERED: usize = 64;
    let key = std::fs::canonicalize(path).and_then(|p| {
        let meta = std::fs::metadata(&p)?;
        Ok((p, meta.len(), meta.modified()?))
    });
    let Ok((file, len, modified)) = key else {
        return trace_facts(path, opts, spec, need_highest, progress);
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
    let seen = SEEN.lock().ok().and_then(|seen| {
        seen.iter()
            .find(|(k, facts)| *k == key && (facts.highest_address.is_some() || !need_highest))
            .map(|(_, facts)| facts.clone())
    });
    if let Some(facts) = seen {
        return Ok(facts);
    }
    let facts = trace_facts(path, opts, spec, need_highest, progress)?;
    if let Ok(mut seen) = SEEN.lock() {
        seen.retain(|(k, _)| *k != key);
        if seen.len() == REMEMBERED {
            seen.remove(0);
        }
        seen.push((key, facts.clone()));
    }
    Ok(facts)
}

/// The placement of a trace file and, with `need_highest`, its highest address once placed. The placement's
/// pre-pass (the device layout's, else `compact`'s) gives the highest address; a trace with neither is read
/// once for it. Every pass is cancellable through `progress`.
fn trace_facts(
    path: &str,
    opts: &TraceOptions,
    spec: &DeviceSpec,
    need_highest: bool,
    progress: &mut dyn FnMut(Progress) -> bool,
) -> Result<TraceFacts> {
    let on = unbounded(spec);
    let placement =
        Placement::survey(path, opts, &on, &mut pre_pass(progress)).map_err(cancelled)?;
    let highest_address = match placement.highest_address() {
        _ if !need_highest => None,
        Some(end) => Some(end),
        None => {
            let source = trace::open_placed(path, opts, &placement, &on)?;
            Some(highest_address(source, progress)?)
        }
    };
    Ok(TraceFacts {
        placement,
        highest_address,
    })
}

/// Whether trace `path` keeps any request under `opts` (its furthest one ends at byte 0: it holds none, or
/// only 0-byte requests at byte 0). Read up to its first request kept; only where no capacity can be sized.
fn holds_a_request(
    path: &str,
    opts: &TraceOptions,
    placement: &Placement,
    spec: &DeviceSpec,
) -> Result<bool> {
    let mut source = trace::open_placed(path, opts, placement, &unbounded(spec))?;
    Ok(source.next_request().transpose()?.is_some())
}

/// The end of the furthest request of `source`, in bytes (one cancellable streaming pass).
fn highest_address(
    mut source: Box<dyn RequestSource>,
    progress: &mut dyn FnMut(Progress) -> bool,
) -> Result<u64> {
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

/// A trace time in microseconds as `measure_from` takes it: in seconds, milliseconds or microseconds, the
/// largest unit it is a whole number of.
fn format_trace_time(us: f64) -> String {
    if us >= 1e6 && us % 1e6 == 0.0 {
        format!("{}s", us / 1e6)
    } else if us >= 1e3 && us % 1e3 == 0.0 {
        format!("{}ms", us / 1e3)
    } else {
        format!("{us}us")
    }
}
