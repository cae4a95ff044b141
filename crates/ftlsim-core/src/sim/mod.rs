//! Drives host requests through a scheme on the simulated chip: checks every read against the last write,
//! charges each request the flash work done on its behalf, and hands the counts to the [`Report`].
//! The run's configuration is in [`config`], the NVRAM wiring in `nvram`, latency figures in `latency`.

pub mod config;
mod latency;
mod lookahead;
mod nvram;

pub use config::{
    build_scheme, resolve_device, BuiltRun, MeasureFrom, Precondition, Resolved, SimConfig,
    DEFAULT_WORKLOAD_CAPACITY,
};
pub use nvram::ram;

use crate::addr::{Lpn, Token};
use crate::config::{format_size, Geometry};
use crate::device::{CutPoint, Device, RequestInfo};
use crate::error::{DurabilityBroken, Result, SimError};
use crate::ftl::nvram::Nvram;
use crate::ftl::{self, Ahead, Ftl};
use crate::nand::OpClass;
use crate::report::{
    BadBlockFigures, ConfigEcho, HostCounts, PowerFigures, Report, SimFigures, Times,
};
use crate::request::{Op, Request};
use crate::sparse::SparseVec;
use crate::stats::Cause;
use crate::trace::{self, RequestSource};
use latency::Latencies;
use lookahead::Lookahead;
use std::time::{Duration, Instant};

/// Progress of a run, for progress bars.
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    pub requests: u64,
    /// (done, total) in the source's own unit (bytes of the file, or requests of a workload).
    pub done: u64,
    pub total: u64,
}

/// The callback a run reports progress to; returning false cancels the run.
pub type OnProgress<'a> = &'a mut dyn FnMut(Progress) -> bool;

/// How often the loop looks at the clock (in requests or preconditioning pages), and how often it then calls
/// the progress callback (which is where an interrupt is noticed): Ctrl-C is honoured within about this long.
const CLOCK_EVERY: u64 = 1 << 10;
const PROGRESS_INTERVAL: Duration = Duration::from_millis(50);

/// Calls a progress callback at most every [`PROGRESS_INTERVAL`].
struct Ticker<'a> {
    on_progress: OnProgress<'a>,
    last: Instant,
}

impl<'a> Ticker<'a> {
    /// Reports the progress of a pre-pass over the trace as it comes (every few thousand requests); false
    /// when the callback cancels.
    fn pre_pass(&mut self, done: u64, total: u64) -> bool {
        (self.on_progress)(Progress {
            requests: 0,
            done,
            total,
        })
    }

    fn new(on_progress: OnProgress<'a>) -> Ticker<'a> {
        Ticker {
            on_progress,
            last: Instant::now(),
        }
    }

    /// Call every step; looks at the clock every [`CLOCK_EVERY`] steps. Err(Cancelled) when the callback says so.
    #[inline]
    fn tick(&mut self, step: u64, progress: impl FnOnce() -> Progress) -> Result<()> {
        if !step.is_multiple_of(CLOCK_EVERY) || self.last.elapsed() < PROGRESS_INTERVAL {
            return Ok(());
        }
        self.last = Instant::now();
        if (self.on_progress)(progress()) {
            Ok(())
        } else {
            Err(SimError::Cancelled)
        }
    }
}

/// Runs `trace` (a file or a built-in workload spec) under `cfg`. `progress` is called about every 50 ms;
/// returning false cancels the run.
pub fn run(cfg: &SimConfig, trace_spec: &str, progress: OnProgress) -> Result<Report> {
    let started = Instant::now();
    let ticker = Ticker::new(progress);
    let resolved =
        config::resolve_device_with(cfg, Some(trace_spec), &mut |p| (ticker.on_progress)(p))?;
    let open = |pre_pass: &mut dyn FnMut(u64, u64) -> bool| -> Result<Box<dyn RequestSource>> {
        trace::open_in(
            trace_spec,
            &cfg.trace,
            resolved.layout.as_ref(),
            resolved.geometry.logical_bytes(),
            resolved.geometry.page_bytes,
            resolved.geometry.block_bytes(),
            pre_pass,
        )
        .map_err(config::cancelled)
    };
    let make = |g: &Geometry| build_scheme(cfg, g);
    drive(cfg, &resolved, &make, &open, trace_spec, started, ticker)
}

/// Runs requests held in memory (tests, generated sequences). The capacity comes from the config, else the
/// furthest request rounded up to a block.
pub fn run_requests(cfg: &SimConfig, requests: Vec<Request>) -> Result<Report> {
    run_built(cfg, |g| build_scheme(cfg, g), requests)
}

/// Runs requests held in memory through a scheme made by `make` for the resolved geometry: the way tests run
/// a scheme that is not in the registry (a deliberately broken one, say).
pub fn run_custom(
    cfg: &SimConfig,
    make: impl Fn(&Geometry) -> Result<ftl::Built>,
    requests: Vec<Request>,
) -> Result<Report> {
    run_built(
        cfg,
        |g| {
            let built = make(g)?;
            let scheme_extra_blocks = built.extra_blocks;
            Ok(BuiltRun {
                built,
                scheme_extra_blocks,
                params: cfg.params.clone(),
            })
        },
        requests,
    )
}

fn run_built(
    cfg: &SimConfig,
    make: impl Fn(&Geometry) -> Result<BuiltRun>,
    requests: Vec<Request>,
) -> Result<Report> {
    let started = Instant::now();
    let mut resolved = resolve_device(cfg, None)?;
    if cfg.capacity.is_none() && resolved.spec.preset_capacity_bytes.is_none() {
        let end = requests.iter().map(|r| r.offset + r.len).max().unwrap_or(1);
        resolved.geometry = resolved.spec.geometry(end)?;
    }
    let open = |_: &mut dyn FnMut(u64, u64) -> bool| -> Result<Box<dyn RequestSource>> {
        Ok(Box::new(trace::VecSource::new(requests.clone())))
    };
    drive(
        cfg,
        &resolved,
        &make,
        &open,
        "memory",
        started,
        Ticker::new(&mut |_| true),
    )
}

/// The shadow map's marker for a page trimmed after its last write: a read may return that write or nothing.
const TRIMMED: u64 = 1 << 63;

struct Run<'a> {
    ftl: Box<dyn Ftl>,
    dev: Device,
    shadow: SparseVec<Token>,
    next_token: Token,
    page_bytes: u64,
    capacity: u64,
    cfg: &'a SimConfig,
    host: HostCounts,
    read_latency: Latencies,
    write_latency: Latencies,
    request_us: f64,
    idle_us: f64,
    /// Pages written by the request being served: (logical page, token before, token written). After a power
    /// cut each may read either.
    inflight: Vec<(u32, Token, Token)>,
    power: PowerFigures,
    /// Extra blocks the scheme uses (of the chip's extra blocks).
    scheme_extra_blocks: u32,
    /// The scheme's parameters as it was built with them, for the report's echo.
    params: serde_json::Value,
}

/// Builds the run's scheme for a geometry.
type Make<'a> = &'a dyn Fn(&Geometry) -> Result<BuiltRun>;
/// Opens the run's requests from the start, telling the progress (done, total) of a pre-pass (`compact`'s) to
/// its argument; false from it cancels.
type Open<'a> = &'a dyn Fn(&mut dyn FnMut(u64, u64) -> bool) -> Result<Box<dyn RequestSource>>;

fn drive(
    cfg: &SimConfig,
    resolved: &Resolved,
    make: Make,
    open: Open,
    trace_spec: &str,
    started: Instant,
    mut ticker: Ticker,
) -> Result<Report> {
    let g = resolved.geometry;
    let planned = if cfg.power_cuts > 0 {
        plan_power_cuts(cfg, resolved, make, open, &mut *ticker.on_progress)?
    } else {
        Vec::new()
    };
    let cuts_planned = planned.len() as u64;
    let mut cut_points = planned.into_iter().peekable();
    let built = make(&g)?;
    let scheme_extra_blocks = built.scheme_extra_blocks;
    let built_params = built.params;
    let built = built.built;
    let physical_blocks = g.logical_blocks + built.extra_blocks;
    let nvram = nvram::nvram_options(cfg, &g)?;
    let measure_from_us = match &cfg.measure_from {
        Some(m) => m.time_us()?,
        None => None,
    };
    let timing = resolved.spec.timing;
    let mut dev = match resolved.spec.bad_block_options(physical_blocks) {
        None => Device::new(&cfg.ftl, g, physical_blocks, timing),
        Some(opts) => Device::with_bad_blocks(&cfg.ftl, g, physical_blocks, timing, opts)?,
    };
    if cfg.torn_pages && !built.ftl.detects_torn_pages() {
        return Err(SimError::Param(format!(
            "scheme `{}` does not yet detect torn pages when it mounts; run it without torn_pages / --torn-pages",
            cfg.ftl
        )));
    }
    dev.set_torn_pages(cfg.torn_pages);
    dev.set_timeline(crate::array::timeline_for(
        &resolved.spec,
        &g,
        cfg.queue_depth,
        cfg.time_scale,
    )?);
    let mut run = Run {
        ftl: built.ftl,
        dev,
        shadow: SparseVec::new(g.logical_pages() as usize, 0),
        next_token: 0,
        page_bytes: g.page_bytes as u64,
        capacity: g.logical_bytes(),
        cfg,
        host: HostCounts::default(),
        read_latency: Latencies::new(),
        write_latency: Latencies::new(),
        request_us: 0.0,
        idle_us: 0.0,
        inflight: Vec::new(),
        power: PowerFigures {
            cuts_planned,
            ..PowerFigures::default()
        },
        scheme_extra_blocks,
        params: built_params,
    };
    // Preconditioning goes straight to the scheme: the NVRAM is put in front afterwards, so it starts empty.
    match cfg.precondition {
        Precondition::None => {}
        Precondition::Full => {
            let pages = g.logical_pages();
            for lpn in 0..pages {
                run.write_page(Lpn(lpn))?;
                ticker.tick(lpn as u64, || Progress {
                    requests: 0,
                    done: lpn as u64,
                    total: pages as u64,
                })?;
            }
        }
        Precondition::Trace => {
            let mut source = open(&mut |done, total| ticker.pre_pass(done, total))?;
            let mut n = 0;
            while let Some(request) = source.next_request() {
                run.warm_up(&request?)
                    .map_err(|e| e.located(source.position()))?;
                n += 1;
                ticker.tick(n, || {
                    let (done, total) = source.progress();
                    Progress {
                        requests: 0,
                        done,
                        total,
                    }
                })?;
            }
        }
    }
    let precondition_erases = run.dev.counts().erases;
    if cfg.precondition != Precondition::None {
        run.reset_measurement();
    }
    if let Some(opts) = nvram {
        run.ftl = Box::new(Nvram::new(run.ftl, opts, &g));
    }
    run.dev.arm_power_cut(cut_points.peek().copied());
    let mut source = Lookahead::new(open(&mut |done, total| ticker.pre_pass(done, total))?);
    let setup_s = started.elapsed().as_secs_f64();
    let loop_started = Instant::now();
    let mut last_time: Option<f64> = None;
    let mut measuring = cfg.measure_from.is_none();
    let mut served = 0u64;
    while let Some(request) = source.next_request() {
        let request = request?;
        if !measuring {
            let from_request =
                matches!(cfg.measure_from, Some(MeasureFrom::Request(n)) if served >= n);
            let from_time = measure_from_us.is_some_and(|t| request.time_us >= t);
            if from_request || from_time {
                run.reset_measurement();
                measuring = true;
            }
        }
        run.inflight.clear();
        let mut outcome = Ok(());
        if let Some(prev) = last_time {
            if request.time_us - prev > cfg.idle_threshold_us {
                outcome = run.idle();
            }
        }
        last_time = Some(request.time_us);
        if let Some(r) = source.peek(1) {
            run.prefetch(r, Ahead::Far);
        }
        if let Some(r) = source.peek(0) {
            run.prefetch(r, Ahead::Near);
        }
        if outcome.is_ok() {
            outcome = run
                .serve(&request)
                .map_err(|e| e.located(source.position()));
        }
        served += 1;
        if let Err(SimError::PowerCut(at)) = outcome {
            if let Some(t) = run.dev.timeline_mut() {
                t.abandon();
            }
            // The cut's position in the planned numbering, then the next one relative to it.
            let cut = cut_points.next().expect("a cut was armed");
            run.survive_power_cut(at, served)?;
            run.dev
                .arm_power_cut(cut_points.peek().map(|next| next - cut));
        } else {
            outcome?;
        }
        ticker.tick(served, || {
            let (done, total) = source.progress();
            Progress {
                requests: served,
                done,
                total,
            }
        })?;
    }
    // The end-of-trace flush can be cut too (the dry run counted its operations among the cut points): after
    // the mount the flush starts again from what the NVRAM and the chip still hold.
    run.inflight.clear();
    let mut flush_us = 0.0;
    loop {
        run.dev.enter_phase(Cause::Flush);
        let before = run.dev.elapsed_us();
        if let Some(t) = run.dev.timeline_mut() {
            t.begin_background();
        }
        let outcome = run.ftl.finish(&mut run.dev);
        if let Some(t) = run.dev.timeline_mut() {
            t.end_background();
        }
        flush_us += run.dev.elapsed_us() - before;
        match outcome {
            Err(SimError::PowerCut(at)) => {
                let cut = cut_points.next().expect("a cut was armed");
                run.survive_power_cut(at, served)?;
                run.dev
                    .arm_power_cut(cut_points.peek().map(|next| next - cut));
            }
            outcome => break outcome?,
        }
    }
    run.dev.arm_power_cut(None);
    if cfg.mount_at_end {
        run.mount()?;
    }
    let wall_s = loop_started.elapsed().as_secs_f64();
    let (done, total) = source.progress();
    (ticker.on_progress)(Progress {
        requests: served,
        done,
        total,
    });
    let flash = run.dev.counts();
    let per_s = |n: u64| n as f64 / wall_s.max(1e-9);
    let sim = SimFigures {
        skipped_lines: source.skipped_lines(),
        setup_s,
        wall_s,
        requests_per_s: per_s(run.host.requests),
        flash_ops_per_s: per_s(flash.page_reads + flash.page_writes + flash.erases),
        spare_reads_per_s: per_s(flash.spare_reads),
        chip_memory_bytes: run.dev.chip().heap_bytes() as u64,
    };
    Ok(run.report(resolved, trace_spec, precondition_erases, flush_us, sim))
}

/// Whether a read that returned `got` agrees with the shadow map's entry.
fn reads_as(got: Option<Token>, expected: Token) -> bool {
    if expected & TRIMMED != 0 {
        got.is_none() || got == Some(expected & !TRIMMED)
    } else {
        got == (expected != 0).then_some(expected)
    }
}

fn show(t: Option<Token>) -> String {
    t.map_or("nothing (never written)".to_string(), |t| t.to_string())
}

/// What a shadow map entry allows a read to return, in words.
fn describe(expected: Token) -> String {
    if expected & TRIMMED != 0 {
        format!("{} or nothing (trimmed)", expected & !TRIMMED)
    } else {
        show((expected != 0).then_some(expected))
    }
}

/// The flash operations of a run without cuts, and `power_cuts` distinct ones among them chosen by the seed (all
/// of them when the run has fewer): a dry run of the same trace counts them. Cut points are numbered from the end
/// of preconditioning.
fn plan_power_cuts(
    cfg: &SimConfig,
    resolved: &Resolved,
    make: Make,
    open: Open,
    on_progress: OnProgress,
) -> Result<Vec<u64>> {
    use rand::SeedableRng;
    let dry_cfg = SimConfig {
        power_cuts: 0,
        mount_at_end: false,
        ..cfg.clone()
    };
    let dry = drive(
        &dry_cfg,
        resolved,
        make,
        open,
        "dry run",
        Instant::now(),
        // The run's own callback: an interrupt during the dry run is honoured as in the run.
        Ticker::new(on_progress),
    )?;
    let f = dry.flash;
    let total = f.page_reads + f.spare_reads + f.page_writes + f.spare_writes + f.erases;
    let mut rng = rand_pcg::Pcg64::seed_from_u64(cfg.power_cut_seed);
    // Distinct points, so that `power_cuts` are planned whenever the run has that many operations.
    let wanted = (cfg.power_cuts as u64).min(total) as usize;
    let span = usize::try_from(total).unwrap_or(usize::MAX);
    let mut points: Vec<u64> = rand::seq::index::sample(&mut rng, span, wanted)
        .into_iter()
        .map(|i| i as u64 + 1)
        .collect();
    points.sort_unstable();
    Ok(points)
}

impl Run<'_> {
    fn write_page(&mut self, lpn: Lpn) -> Result<()> {
        self.next_token += 1;
        // The shadow entry is a cache miss of its own: fetched while the scheme works, read after it (the
        // scheme cannot change it), and entered in flight before a power cut's error goes up.
        self.shadow.prefetch(lpn.index());
        let written = self.ftl.write(lpn, self.next_token, &mut self.dev);
        // Only a run with power cuts checks them: without, the list would grow with the request (a single
        // 1 TiB request is 2^26 entries of 16 KiB pages, and the allocation fails).
        if self.cfg.power_cuts > 0 {
            self.inflight
                .push((lpn.0, self.shadow.get(lpn.index()), self.next_token));
        }
        written?;
        self.shadow.set(lpn.index(), self.next_token);
        Ok(())
    }

    fn read_page(&mut self, lpn: Lpn) -> Result<()> {
        self.shadow.prefetch(lpn.index());
        let got = self.ftl.read(lpn, &mut self.dev)?;
        let expected = self.shadow.get(lpn.index());
        if expected == 0 {
            self.host.unwritten_reads += 1;
        }
        if reads_as(got, expected) {
            return Ok(());
        }
        Err(SimError::Integrity {
            scheme: self.cfg.ftl.clone(),
            lpn: lpn.0,
            expected: describe(expected),
            returned: show(got),
            request: self.host.requests,
        })
    }

    /// Rebuilds the scheme's RAM from the chip (a boot), counting what it costs.
    fn mount(&mut self) -> Result<()> {
        self.dev.enter_phase(Cause::Mount);
        let (before, before_us) = (self.dev.counts(), self.dev.elapsed_us());
        self.dev.mount_bad_blocks()?;
        self.ftl.mount(&mut self.dev)?;
        let cost = self.dev.counts().minus(&before);
        let us = self.dev.elapsed_us() - before_us;
        let p = &mut self.power;
        p.mounts += 1;
        p.mount_spare_reads += cost.spare_reads;
        p.mount_page_reads += cost.page_reads;
        p.mount_time_us_sum += us;
        p.mount_time_us_max = p.mount_time_us_max.max(us);
        self.dev.enter_phase(Cause::Host);
        Ok(())
    }

    /// The power was cut at `at` while serving request `request`: mount, then check the durability contract
    /// on every logical page: an acknowledged write reads back its token; a page the request in flight was
    /// writing reads its old or its new token (and is that from now on); a trimmed page may read nothing.
    fn survive_power_cut(&mut self, at: CutPoint, request: u64) -> Result<()> {
        self.power.cuts += 1;
        self.power.cuts_in_merge_or_gc += (at.open_marks > 0) as u64;
        self.power.cuts_in_map_io += (at.class == OpClass::Map) as u64;
        self.power.torn_pages += at.torn as u64;
        self.power.torn_in_merge_or_gc += (at.torn && at.open_marks > 0) as u64;
        self.mount()?;
        self.dev.enter_phase(Cause::Check);
        let mut inflight = std::mem::take(&mut self.inflight);
        inflight.sort_unstable();
        let pages = self.shadow.len() as u32;
        for lpn in 0..pages {
            let got = self.ftl.read(Lpn(lpn), &mut self.dev)?;
            let expected = self.shadow.get(lpn as usize);
            let newer = inflight
                .binary_search_by_key(&lpn, |e| e.0)
                .ok()
                .map(|i| inflight[i]);
            let ok = match newer {
                Some((_, old, new)) => {
                    // Either copy is durable from now on.
                    let now = if got == Some(new) { new } else { old };
                    self.shadow.set(lpn as usize, now);
                    got == Some(new) || reads_as(got, old)
                }
                None => reads_as(got, expected),
            };
            if !ok {
                let allowed = match newer {
                    Some((_, old, new)) => {
                        format!("{} or {new} (the write in flight)", describe(old))
                    }
                    None => describe(expected),
                };
                return Err(SimError::Durability(Box::new(DurabilityBroken {
                    scheme: self.cfg.ftl.clone(),
                    cut: self.power.cuts,
                    op: at.op,
                    request,
                    doing: at.doing(),
                    lpn,
                    expected: allowed,
                    returned: show(got),
                })));
            }
        }
        self.power.pages_checked += pages as u64;
        self.power.cuts_survived += 1;
        self.dev.enter_phase(Cause::Host);
        Ok(())
    }

    /// Zeroes every counter (device, scheme, host, latency): preconditioning is over, or `measure_from` reached.
    fn reset_measurement(&mut self) {
        self.dev.reset_counters();
        self.ftl.reset_counters();
        self.host = HostCounts::default();
        self.read_latency = Latencies::new();
        self.write_latency = Latencies::new();
        self.request_us = 0.0;
        self.idle_us = 0.0;
    }

    /// The trace is idle: the scheme may work in the background; the time is idle time.
    fn idle(&mut self) -> Result<()> {
        self.dev.enter_phase(Cause::Idle);
        let before = self.dev.elapsed_us();
        if let Some(t) = self.dev.timeline_mut() {
            t.begin_background();
        }
        let outcome = self.ftl.idle(&mut self.dev);
        if let Some(t) = self.dev.timeline_mut() {
            t.end_background();
        }
        outcome?;
        self.idle_us += self.dev.elapsed_us() - before;
        self.dev.enter_phase(Cause::Host);
        Ok(())
    }

    /// The byte range a request covers on the device: checked against the capacity, folded in with `wrap`.
    fn locate(&self, request: &Request) -> Result<(u64, u64)> {
        self.fold(request).ok_or_else(|| {
            let end = request.offset.saturating_add(request.len);
            SimError::BeyondCapacity {
                at: format!("request #{}", self.host.requests),
                end,
                capacity: self.capacity,
                suggest: format_size(end.div_ceil(1 << 20) << 20),
            }
        })
    }

    /// [`Run::locate`]'s byte range, None for a request beyond the capacity that `wrap` does not fold in.
    #[inline]
    fn fold(&self, request: &Request) -> Option<(u64, u64)> {
        let mut offset = request.offset;
        if offset.saturating_add(request.len) > self.capacity {
            if !self.cfg.wrap || request.len > self.capacity {
                return None;
            }
            offset %= self.capacity;
            if offset + request.len > self.capacity {
                offset = self.capacity - request.len;
            }
        }
        Some((offset, offset + request.len))
    }

    /// Hints for a coming request (see [`Lookahead`]): the memory its first page will touch, the shadow
    /// map's entry and the scheme's. Nothing is counted or changed.
    #[inline]
    fn prefetch(&self, request: &Request, ahead: Ahead) {
        let Some((offset, _)) = self.fold(request).filter(|_| request.len > 0) else {
            return;
        };
        let lpn = offset / self.page_bytes;
        if ahead == Ahead::Far {
            self.shadow.prefetch(lpn as usize);
        }
        self.ftl
            .prefetch(Lpn(lpn as u32), request.op, ahead, &self.dev);
    }

    /// `precondition="trace"`: every page a read or write request covers is written once.
    fn warm_up(&mut self, request: &Request) -> Result<()> {
        if request.len == 0 || request.op == Op::Trim {
            return Ok(());
        }
        let (offset, end) = self.locate(request)?;
        for lpn in offset / self.page_bytes..=(end - 1) / self.page_bytes {
            self.write_page(Lpn(lpn as u32))?;
        }
        Ok(())
    }

    fn serve(&mut self, request: &Request) -> Result<()> {
        self.host.requests += 1;
        if request.len == 0 {
            return Ok(());
        }
        let (offset, end) = self.locate(request)?;
        let first = offset / self.page_bytes;
        let last = (end - 1) / self.page_bytes;
        self.ftl.begin_request(&RequestInfo {
            index: self.host.requests,
            op: request.op,
            first_lpn: Lpn(first as u32),
            pages: (last - first + 1) as u32,
            bytes: request.len,
            tag: request.tag,
            time_us: request.time_us,
        });
        let start = self.dev.work_mark();
        if let Some(t) = self.dev.timeline_mut() {
            t.begin_request(request.op.into(), request.time_us, request.len);
        }
        match request.op {
            Op::Read => {
                self.host.read_requests += 1;
                self.host.read_bytes += request.len;
                for lpn in first..=last {
                    self.host.read_pages += 1;
                    self.read_page(Lpn(lpn as u32))?;
                }
            }
            Op::Write => {
                self.host.write_requests += 1;
                self.host.write_bytes += request.len;
                for lpn in first..=last {
                    let partial = (lpn == first && !offset.is_multiple_of(self.page_bytes))
                        || (lpn == last && !end.is_multiple_of(self.page_bytes));
                    if partial && self.cfg.rmw {
                        self.host.rmw_page_reads += 1;
                        self.dev.enter_phase(Cause::Rmw);
                        self.read_page(Lpn(lpn as u32))?;
                        self.dev.enter_phase(Cause::Host);
                    }
                    self.host.write_pages += 1;
                    self.write_page(Lpn(lpn as u32))?;
                }
            }
            Op::Trim => {
                self.host.trim_requests += 1;
                // Only whole pages are trimmed; a partly covered page keeps its data.
                let first_whole = offset.div_ceil(self.page_bytes);
                let end_whole = end / self.page_bytes;
                for lpn in first_whole..end_whole {
                    self.host.trim_pages += 1;
                    self.ftl.trim(Lpn(lpn as u32), &mut self.dev)?;
                    let s = self.shadow.get(lpn as usize);
                    if s != 0 {
                        self.shadow.set(lpn as usize, s | TRIMMED);
                    }
                }
            }
        }
        let latency_us = self.dev.us_since(&start);
        self.request_us += latency_us;
        match request.op {
            Op::Read => self.read_latency.record(latency_us),
            Op::Write => self.write_latency.record(latency_us),
            Op::Trim => {}
        }
        if let Some(t) = self.dev.timeline_mut() {
            t.end_request();
        }
        Ok(())
    }

    fn report(
        mut self,
        resolved: &Resolved,
        trace_spec: &str,
        precondition_erases: u64,
        flush_us: f64,
        sim: SimFigures,
    ) -> Report {
        let g = &resolved.geometry;
        let t = *self.dev.timing();
        let by_cause_us = self.dev.time_by_cause_us();
        let flash_by_cause = self.dev.counts_by_cause();
        let array = self.dev.timeline_mut().map(|t| t.figures());
        let dev = &self.dev;
        let stats = &dev.stats;
        let (mut min, mut max, mut sum, mut blocks) = (u32::MAX, 0, 0u64, 0u64);
        for e in dev.chip().erase_counts() {
            (min, max, sum, blocks) = (min.min(e), max.max(e), sum + e as u64, blocks + 1);
        }
        let histogram_width = (max / 10 + 1).max(1);
        let mut erase_histogram = vec![0u64; 10];
        for e in dev.chip().erase_counts() {
            erase_histogram[((e / histogram_width) as usize).min(9)] += 1;
        }
        let mut extra = Vec::new();
        self.ftl.extra(&mut extra);
        Report {
            version: crate::VERSION.to_string(),
            config: ConfigEcho {
                scheme: self.cfg.ftl.clone(),
                params: self.params.to_string(),
                preset: resolved.spec.preset.to_string(),
                trace: trace_spec.to_string(),
                devices: self.cfg.trace.devices.to_string(),
                seed: trace::workload::parse_spec(trace_spec)
                    .ok()
                    .flatten()
                    .map(|w| w.seed()),
                precondition: serde_json::to_value(self.cfg.precondition)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default(),
                page_bytes: g.page_bytes,
                spare_bytes: g.spare_bytes,
                pages_per_block: g.pages_per_block,
                sequential_program: g.sequential_program,
                capacity_bytes: g.logical_bytes(),
                logical_blocks: g.logical_blocks,
                physical_blocks: dev.physical_blocks(),
                scheme_extra_blocks: self.scheme_extra_blocks,
                read_us: t.read_us,
                spare_read_us: t.spare_read_us,
                program_us: t.program_us,
                spare_program_us: t.spare_program_us,
                erase_us: t.erase_us,
                rmw: self.cfg.rmw,
            },
            host: self.host,
            flash: dev.counts(),
            map: dev.map_counts(),
            flash_by_cause,
            merges: stats.merges,
            gc_runs: stats.gc_runs,
            gc_copied_pages: stats.gc_copied_pages,
            cache: stats.cache,
            log_utilization: stats.log_utilization.clone(),
            erase_count_min: if blocks == 0 { 0 } else { min },
            erase_count_max: max,
            erase_count_mean: sum as f64 / blocks.max(1) as f64,
            erase_histogram,
            erase_histogram_width: histogram_width,
            bad_blocks: dev
                .bad_block_counts()
                .map(|(factory, grown, reserve)| BadBlockFigures {
                    factory,
                    grown,
                    reserve,
                }),
            time_us: Times {
                total: dev.elapsed_us(),
                requests: self.request_us,
                merges: stats.merge_ops.time_us(&t),
                gc: stats.gc_ops.time_us(&t),
                map: dev.map_counts().time_us(&t),
                idle: self.idle_us,
                flush: flush_us,
                by_cause: by_cause_us,
            },
            latency_read: self.read_latency.summary(),
            latency_write: self.write_latency.summary(),
            array,
            precondition_erases,
            power: self.power,
            ram: self.ftl.ram(),
            extra,
            sim,
        }
    }
}
