//! Drives host requests through a scheme on the simulated chip: checks every read against the last write,
//! charges each request the flash work done on its behalf, and hands the counts to the [`Report`].
//! The run's configuration is in [`config`], resolved once into a [`RunPlan`] ([`plan`]); the NVRAM wiring is in
//! `nvram`, latency figures in `latency`.

pub mod config;
mod echo;
mod latency;
mod lookahead;
mod nvram;
pub mod plan;
mod shadow;

pub use config::{MeasureFrom, Precondition, SimConfig, DEFAULT_WORKLOAD_CAPACITY};
pub use nvram::ram;
pub use plan::{array_model_on, open, open_trace, resolve_device, Input, Resolved, RunPlan};

use crate::addr::{Lpn, Token};
use crate::config::{format_size, ArrayPlacement, Geometry};
use crate::device::{CutPoint, Device, FlashError, RequestInfo};
use crate::error::{DurabilityBroken, Fixes, Result, SimError};
use crate::ftl::{self, Ahead, Ftl};
use crate::nand::OpClass;
use crate::report::{BadBlockFigures, HostCounts, PowerFigures, Report, SimFigures, Times};
use crate::request::{Op, Request};
use crate::stats::Cause;
use crate::trace::TraceError;
use latency::Latencies;
use lookahead::Lookahead;
use shadow::Shadow;
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
    let plan = RunPlan::resolve(cfg, Input::Trace(trace_spec), &mut *progress)?;
    execute(&plan, started, Ticker::new(progress))
}

/// Runs requests held in memory (tests, generated sequences). The capacity comes from the config, else the
/// furthest request.
pub fn run_requests(cfg: &SimConfig, requests: Vec<Request>) -> Result<Report> {
    let started = Instant::now();
    let plan = RunPlan::resolve(cfg, Input::Memory(&requests), &mut |_| true)?;
    execute(&plan, started, Ticker::new(&mut |_| true))
}

/// Runs requests held in memory through a scheme made by `make` for the resolved geometry: the way tests run
/// a scheme that is not in the registry (a deliberately broken one, say).
pub fn run_custom(
    cfg: &SimConfig,
    make: impl Fn(&Geometry) -> Result<ftl::Built>,
    requests: Vec<Request>,
) -> Result<Report> {
    let started = Instant::now();
    let plan = RunPlan::resolve_custom(cfg, Input::Memory(&requests), make)?;
    execute(&plan, started, Ticker::new(&mut |_| true))
}

/// Runs a resolved plan: the power cuts' dry run first when it has any, then the run.
fn execute(plan: &RunPlan, started: Instant, mut ticker: Ticker) -> Result<Report> {
    let cuts = if plan.power.cuts > 0 {
        plan_power_cuts(plan, &mut ticker)?
    } else {
        Vec::new()
    };
    drive(plan, Pass::Run(cuts), started, &mut ticker)
}

/// The shadow map's marker for a page trimmed after its last write: a read may return that write or nothing.
const TRIMMED: u64 = 1 << 63;

/// The device's page size, for cutting byte ranges into logical pages: a shift where it is a power of two
/// (every preset's), else a division; a few of them on every request.
#[derive(Clone, Copy)]
struct PageBytes {
    bytes: u64,
    shift: Option<u32>,
}

impl PageBytes {
    fn new(bytes: u64) -> PageBytes {
        PageBytes {
            bytes,
            shift: bytes.is_power_of_two().then(|| bytes.trailing_zeros()),
        }
    }

    /// The logical page byte `byte` is in.
    #[inline]
    fn page_of(self, byte: u64) -> u64 {
        match self.shift {
            Some(shift) => byte >> shift,
            None => byte / self.bytes,
        }
    }

    /// Whether byte `byte` is the first of a page.
    #[inline]
    fn starts_page(self, byte: u64) -> bool {
        match self.shift {
            Some(_) => byte & (self.bytes - 1) == 0,
            None => byte.is_multiple_of(self.bytes),
        }
    }
}

struct Run<'p> {
    plan: &'p RunPlan<'p>,
    ftl: Box<dyn Ftl>,
    dev: Device,
    shadow: Shadow,
    next_token: Token,
    page_bytes: PageBytes,
    capacity: u64,
    host: HostCounts,
    read_latency: Latencies,
    write_latency: Latencies,
    request_us: f64,
    idle_us: f64,
    /// Whether `inflight` is kept: only a run with power cuts checks it (without, the list would grow with the
    /// request: a single 1 TiB request is 2^26 entries of 16 KiB pages, and the allocation fails).
    track_inflight: bool,
    /// Pages written by the request being served: (logical page, token before, token written). After a power
    /// cut each may read either.
    inflight: Vec<(u32, Token, Token)>,
    cuts: Cuts,
    power: PowerFigures,
    /// Flash operations from the end of preconditioning to `measure_from` (0 without it), as the dry run counts.
    ops_before_measuring: u64,
    /// Mount once after the trace (not in a dry run).
    mount_at_end: bool,
    /// Whether the trace's requests carry arrival times ([`crate::trace::RequestSource::timed`]): the array
    /// model then has a request at time 0 arrive at the start, not when the host can submit it.
    trace_timed: bool,
}

/// A pass over the trace: the dry run that counts the flash operations a power-cut plan chooses from, or the
/// run with the cut points chosen.
enum Pass {
    DryRun,
    Run(Vec<u64>),
}

/// What a step of the run came to: done, or cut short by the power cut armed on the chip.
enum Step {
    Done,
    PowerCut(CutPoint),
}

/// A step's result with the power cut taken out of the errors: the one place that knows how the chip reports
/// a cut.
fn step<E: Into<SimError>>(result: std::result::Result<(), E>) -> Result<Step> {
    match result.map_err(Into::into) {
        Ok(()) => Ok(Step::Done),
        Err(SimError::Flash(FlashError::PowerCut(at))) => Ok(Step::PowerCut(at)),
        Err(e) => Err(e),
    }
}

/// The planned power cuts still to come: flash operation numbers counted from the end of preconditioning.
struct Cuts(std::iter::Peekable<std::vec::IntoIter<u64>>);

impl Cuts {
    /// The first cut, counted from the end of preconditioning.
    fn first(&mut self) -> Option<u64> {
        self.0.peek().copied()
    }

    /// Takes the cut that happened; the next one, counted from it.
    fn after_cut(&mut self) -> Option<u64> {
        let cut = self.0.next().expect("a cut was armed");
        self.0.peek().map(|next| next - cut)
    }
}

/// One pass over the trace, in its steps: build the chip and the scheme, precondition, wrap the scheme in the
/// NVRAM, arm the first power cut, serve the trace, finish (flush), mount, report.
fn drive(plan: &RunPlan, pass: Pass, started: Instant, ticker: &mut Ticker) -> Result<Report> {
    drive_from(plan, pass, started, ticker, 0)
}

/// [`drive`] with the host's write tokens counting on from `tokens_before` rather than 0 (a test starts a
/// run just short of 2^32 to cross the oracle's and the chip's token widths in seconds).
fn drive_from(
    plan: &RunPlan,
    pass: Pass,
    started: Instant,
    ticker: &mut Ticker,
    tokens_before: Token,
) -> Result<Report> {
    drive_counting(plan, pass, started, ticker, tokens_before).map(|(report, _)| report)
}

/// [`drive_from`], and the flash operations before `measure_from` (after preconditioning; 0 without it), which
/// the report's counts leave out.
fn drive_counting(
    plan: &RunPlan,
    pass: Pass,
    started: Instant,
    ticker: &mut Ticker,
    tokens_before: Token,
) -> Result<(Report, u64)> {
    let mut run = Run::build(plan, pass)?;
    run.next_token = tokens_before;
    let precondition_erases = run.precondition(ticker)?;
    let mut run = run.wrap_nvram();
    let first_cut = run.cuts.first();
    run.dev.arm_power_cut(first_cut);
    let mut source = Lookahead::new(open(plan)?);
    let setup_s = started.elapsed().as_secs_f64();
    let loop_started = Instant::now();
    let served = run.serve_trace(&mut source, ticker)?;
    let flush_us = run.finish(served)?;
    if run.mount_at_end {
        run.mount()?;
    }
    let wall_s = loop_started.elapsed().as_secs_f64();
    let (done, total) = source.progress();
    (ticker.on_progress)(Progress {
        requests: served,
        done,
        total,
    });
    let sim = run.sim_figures(source.skipped_lines(), setup_s, wall_s);
    let ops_before_measuring = run.ops_before_measuring;
    Ok((
        run.report(precondition_erases, flush_us, sim),
        ops_before_measuring,
    ))
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

/// The capacity to suggest for requests that reach byte `reach`: rounded up to a MiB.
fn capacity_for(reach: u64) -> String {
    format_size(reach.div_ceil(1 << 20) << 20)
}

/// What a shadow map entry allows a read to return, in words.
fn describe(expected: Token) -> String {
    if expected & TRIMMED != 0 {
        format!("{} or nothing (trimmed)", expected & !TRIMMED)
    } else {
        show((expected != 0).then_some(expected))
    }
}

/// The flash operations of a run without cuts that its report counts (from `measure_from`, if given), and
/// `power_cuts` distinct ones among them chosen by the seed (all of them when the run has fewer): a dry run of
/// the same trace counts them. Cut points are numbered from the end of preconditioning, so past the operations
/// before `measure_from`: the cuts, mounts and checks are in the part of the run the report covers.
fn plan_power_cuts(plan: &RunPlan, ticker: &mut Ticker) -> Result<Vec<u64>> {
    use rand::SeedableRng;
    // The run's own callback: an interrupt during the dry run is honoured as in the run.
    let (dry, before) = drive_counting(plan, Pass::DryRun, Instant::now(), ticker, 0)?;
    let f = dry.flash;
    let total = f.page_reads + f.spare_reads + f.page_writes + f.spare_writes + f.erases;
    let mut rng = rand_pcg::Pcg64::seed_from_u64(plan.power.seed);
    // Distinct points, so that `power_cuts` are planned whenever the run has that many operations.
    let wanted = (plan.power.cuts as u64).min(total) as usize;
    let span = usize::try_from(total).unwrap_or(usize::MAX);
    let mut points: Vec<u64> = rand::seq::index::sample(&mut rng, span, wanted)
        .into_iter()
        .map(|i| before + i as u64 + 1)
        .collect();
    points.sort_unstable();
    Ok(points)
}

impl<'p> Run<'p> {
    /// The chip (with its bad blocks) and the scheme, fresh, for a pass.
    fn build(plan: &'p RunPlan<'p>, pass: Pass) -> Result<Run<'p>> {
        let g = plan.device.geometry;
        let ftl = plan.build_scheme()?;
        let timing = plan.device.spec.timing;
        let blocks = plan.physical_blocks;
        let name = &plan.scheme.name;
        let mut dev = match plan.bad_blocks {
            None => Device::new(name, g, blocks, timing),
            Some(opts) => Device::with_bad_blocks(name, g, blocks, timing, opts)?,
        };
        dev.set_torn_pages(plan.power.torn_pages);
        dev.set_timeline(crate::array::timeline_for(
            &plan.device.spec,
            &g,
            plan.queue_depth,
            plan.time_scale,
        ));
        if plan.device.spec.placement == ArrayPlacement::PerDie {
            dev.split_into_partitions(plan.device.spec.partitions());
        }
        let (cuts, dry) = match pass {
            Pass::DryRun => (Vec::new(), true),
            Pass::Run(cuts) => (cuts, false),
        };
        Ok(Run {
            plan,
            ftl,
            dev,
            shadow: Shadow::new(g.logical_pages() as usize),
            next_token: 0,
            page_bytes: PageBytes::new(g.page_bytes as u64),
            capacity: g.logical_bytes(),
            host: HostCounts::default(),
            read_latency: Latencies::new(),
            write_latency: Latencies::new(),
            request_us: 0.0,
            idle_us: 0.0,
            track_inflight: plan.power.cuts > 0 && !dry,
            inflight: Vec::new(),
            power: PowerFigures {
                cuts_planned: cuts.len() as u64,
                ..PowerFigures::default()
            },
            mount_at_end: plan.power.mount_at_end && !dry,
            cuts: Cuts(cuts.into_iter().peekable()),
            ops_before_measuring: 0,
            trace_timed: false,
        })
    }

    /// Preconditions the device as the plan says, straight through the scheme (the NVRAM is put in front
    /// afterwards, so it starts empty), then zeroes the counters. Returns the erases it took.
    fn precondition(&mut self, ticker: &mut Ticker) -> Result<u64> {
        match self.plan.precondition {
            Precondition::None => return Ok(self.dev.counts().erases),
            Precondition::Full => {
                let pages = self.plan.device.geometry.logical_pages();
                for lpn in 0..pages {
                    self.write_page(Lpn(lpn))?;
                    ticker.tick(lpn as u64, || Progress {
                        requests: 0,
                        done: lpn as u64,
                        total: pages as u64,
                    })?;
                }
            }
            Precondition::Trace => {
                let mut source = open(self.plan)?;
                let mut n = 0;
                while let Some(request) = source.next_request() {
                    if let Err(e) = self.warm_up(&request?) {
                        let e = e.located(source.position());
                        let next = || source.next_request().map(|r| (r, source.progress()));
                        return Err(self.reaching_trace_end(e, 0, next, ticker));
                    }
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
        let erases = self.dev.counts().erases;
        self.reset_measurement();
        Ok(erases)
    }

    /// Puts the plan's NVRAM, if any, in front of the scheme.
    fn wrap_nvram(mut self) -> Run<'p> {
        let g = self.plan.device.geometry;
        self.ftl = nvram::with_nvram(self.ftl, self.plan.nvram.clone(), &g);
        self
    }

    /// Serves the trace, one request a step; a power cut is survived and the trace goes on. Returns the
    /// requests served.
    fn serve_trace(&mut self, source: &mut Lookahead, ticker: &mut Ticker) -> Result<u64> {
        let mut last_time: Option<f64> = None;
        let mut measuring = self.plan.measure_from.is_none();
        let mut served = 0u64;
        // A gap between arrivals as the array model sees them (`time_scale`; 1 on the single chip), past
        // which the device is idle.
        let scale = self.plan.time_scale.unwrap_or(1.0);
        let idle_threshold_us = self.plan.idle_threshold_us;
        while let Some(request) = source.next_request() {
            let request = request?;
            if served == 0 {
                // Known once the first request is read (a CSV trace is timed when its first request is).
                self.trace_timed = source.timed();
            }
            if !measuring && self.plan.measures_from(served, &request) {
                // No cut lands before this point, so the device counts every operation since it was armed.
                self.ops_before_measuring = self.dev.ops_since_armed();
                self.reset_measurement();
                measuring = true;
            }
            self.inflight.clear();
            let idle =
                last_time.is_some_and(|prev| (request.time_us - prev) * scale > idle_threshold_us);
            last_time = Some(request.time_us);
            let mut outcome = if idle { self.idle()? } else { Step::Done };
            if let Some(r) = source.peek(1) {
                self.prefetch(r, Ahead::Far);
            }
            if let Some(r) = source.peek(0) {
                self.prefetch(r, Ahead::Near);
            }
            if let Step::Done = outcome {
                outcome = match self.serve(&request) {
                    Ok(outcome) => outcome,
                    Err(e) => {
                        let e = e.located(source.position());
                        let next = || source.next_request().map(|r| (r, source.progress()));
                        return Err(self.reaching_trace_end(e, served, next, ticker));
                    }
                };
            }
            served += 1;
            if let Step::PowerCut(at) = outcome {
                self.power_cut(at, served)?;
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
        if let Some(start) = self.plan.measure_from.filter(|_| !measuring && served > 0) {
            let last_us = last_time.unwrap_or(0.0);
            return Err(RunPlan::measure_from_past_end(start, served, last_us));
        }
        Ok(served)
    }

    /// The end-of-trace flush, timed. It can be cut too (the dry run counted its operations among the cut
    /// points): after the mount the flush starts again from what the NVRAM and the chip still hold.
    fn finish(&mut self, served: u64) -> Result<f64> {
        self.inflight.clear();
        let mut flush_us = 0.0;
        loop {
            self.dev.enter_phase(Cause::Flush);
            let before = self.dev.elapsed_us();
            let outcome = step(self.in_background(|run| run.ftl.finish(&mut run.dev)));
            flush_us += self.dev.elapsed_us() - before;
            match outcome? {
                Step::Done => break,
                Step::PowerCut(at) => self.power_cut(at, served)?,
            }
        }
        self.dev.arm_power_cut(None);
        Ok(flush_us)
    }

    /// The simulator's own figures for the pass.
    fn sim_figures(&self, skipped_lines: u64, setup_s: f64, wall_s: f64) -> SimFigures {
        let flash = self.dev.counts();
        let per_s = |n: u64| n as f64 / wall_s.max(1e-9);
        SimFigures {
            skipped_lines,
            setup_s,
            wall_s,
            requests_per_s: per_s(self.host.requests),
            flash_ops_per_s: per_s(flash.page_reads + flash.page_writes + flash.erases),
            spare_reads_per_s: per_s(flash.spare_reads),
            chip_memory_bytes: self.dev.chip().heap_bytes() as u64,
            oracle_memory_bytes: self.shadow.heap_bytes() as u64,
        }
    }

    /// The power was cut at `at` while serving request `request`: survive it, and arm the next cut.
    fn power_cut(&mut self, at: CutPoint, request: u64) -> Result<()> {
        if let Some(t) = self.dev.timeline_mut() {
            t.abandon();
        }
        let next = self.cuts.after_cut();
        let mount_us = self.survive_power_cut(at, request)?;
        if let (Some(t), Some(us)) = (self.dev.timeline_mut(), mount_us) {
            t.power_on_after(us);
        }
        self.dev.arm_power_cut(next);
        Ok(())
    }

    fn write_page(&mut self, lpn: Lpn) -> Result<()> {
        self.next_token += 1;
        // The shadow entry is a cache miss of its own: fetched while the scheme works, read after it (the
        // scheme cannot change it), and entered in flight before a power cut's error goes up.
        self.shadow.prefetch(lpn.index());
        let written = self.ftl.write(lpn, self.next_token, &mut self.dev);
        if self.track_inflight {
            self.inflight
                .push((lpn.0, self.shadow.get(lpn.index()), self.next_token));
        }
        written?;
        self.shadow.set(lpn.index(), self.next_token);
        Ok(())
    }

    /// Reads pages `first..=last`, checking each against the oracle; a run of pages the oracle knows were
    /// never written and the scheme knows it does not map ([`Ftl::unmapped_from`]) is counted read at once:
    /// the scheme would return nothing for each without a flash operation, which is what the oracle expects.
    fn read_pages(&mut self, first: u64, last: u64) -> Result<()> {
        let mut lpn = first;
        while lpn <= last {
            let left = (last - lpn + 1).min(u32::MAX as u64) as u32;
            #[cfg(test)]
            let one_by_one = tests::READS_ONE_BY_ONE.with(|c| c.get());
            #[cfg(not(test))]
            let one_by_one = false;
            let unwritten = match self.shadow.unwritten_from(lpn as usize) {
                _ if one_by_one => 0,
                0 => 0,
                run => self
                    .ftl
                    .unmapped_from(Lpn(lpn as u32), left.min(run as u32)),
            };
            if unwritten > 0 {
                self.ftl.count_unmapped_reads(unwritten, &mut self.dev);
                self.host.read_pages += unwritten as u64;
                self.host.unwritten_reads += unwritten as u64;
                lpn += unwritten as u64;
                continue;
            }
            self.read_page(Lpn(lpn as u32))?;
            self.host.read_pages += 1;
            lpn += 1;
        }
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
            scheme: self.plan.scheme.name.clone(),
            lpn: lpn.0,
            expected: describe(expected),
            returned: show(got),
            request: self.host.requests,
        })
    }

    /// Rebuilds the scheme's RAM from the chip (a boot), counting what it costs; returns its time on the
    /// array from power-on (None without the event model).
    fn mount(&mut self) -> Result<Option<f64>> {
        self.dev.enter_phase(Cause::Mount);
        let (before, before_us) = (self.dev.counts(), self.dev.elapsed_us());
        // On an array the mount is also timed by the event model, from power-on.
        let run_timeline = self.dev.begin_timing_apart();
        let mounted = self
            .dev
            .mount_bad_blocks()
            .and_then(|()| self.ftl.mount(&mut self.dev));
        let array_us = self.dev.end_timing_apart(run_timeline);
        mounted?;
        let cost = self.dev.counts().minus(&before);
        let us = self.dev.elapsed_us() - before_us;
        let p = &mut self.power;
        p.mounts += 1;
        p.mount_spare_reads += cost.spare_reads;
        p.mount_page_reads += cost.page_reads;
        p.mount_time_us_sum += us;
        p.mount_time_us_max = p.mount_time_us_max.max(us);
        if let Some(us) = array_us {
            p.mount_array_us_sum += us;
            p.mount_array_us_max = p.mount_array_us_max.max(us);
            p.mounts_on_array += 1;
        }
        self.dev.enter_phase(Cause::Host);
        Ok(array_us)
    }

    /// The power was cut at `at` while serving request `request`: mount, then check the durability contract
    /// on every logical page: an acknowledged write reads back its token; a page the request in flight was
    /// writing reads its old or its new token (and is that from now on); a trimmed page may read nothing.
    /// Returns the mount's time on the array ([`Run::mount`]).
    fn survive_power_cut(&mut self, at: CutPoint, request: u64) -> Result<Option<f64>> {
        self.power.cuts += 1;
        self.power.cuts_in_merge_or_gc += (at.open_marks > 0) as u64;
        self.power.cuts_in_map_io += (at.class == OpClass::Map) as u64;
        self.power.torn_pages += at.torn as u64;
        self.power.torn_in_merge_or_gc += (at.torn && at.open_marks > 0) as u64;
        let mount_us = self.mount()?;
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
                    scheme: self.plan.scheme.name.clone(),
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
        Ok(mount_us)
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

    /// `work` on the array's timeline as background work (idle time, the flush): it delays the requests that
    /// need its dies, and is no request's response time.
    fn in_background<T>(&mut self, work: impl FnOnce(&mut Self) -> T) -> T {
        if let Some(t) = self.dev.timeline_mut() {
            t.begin_background();
        }
        let outcome = work(self);
        if let Some(t) = self.dev.timeline_mut() {
            t.end_background();
        }
        outcome
    }

    /// The trace is idle: the scheme may work in the background; the time is idle time.
    fn idle(&mut self) -> Result<Step> {
        self.dev.enter_phase(Cause::Idle);
        let before = self.dev.elapsed_us();
        let outcome = step(self.in_background(|run| run.ftl.idle(&mut run.dev)))?;
        self.idle_us += self.dev.elapsed_us() - before;
        self.dev.enter_phase(Cause::Host);
        Ok(outcome)
    }

    /// The byte range a request covers on the device: checked against the capacity, folded in with `wrap`.
    /// Beyond it, the capacity suggested holds the whole trace where a pre-pass made its end known (compacted,
    /// or its devices laid out), else this request.
    fn locate(&self, request: &Request) -> Result<(u64, u64)> {
        self.fold(request).ok_or_else(|| {
            let end = request.offset.saturating_add(request.len);
            let needed = self
                .plan
                .device
                .placement
                .highest_address()
                .map_or(end, |h| h.max(end));
            SimError::BeyondCapacity {
                at: format!("request #{}", self.host.requests),
                end,
                reach: needed,
                capacity: self.capacity,
                suggest: capacity_for(needed),
                used: Fixes {
                    wrap: self.plan.wrap,
                    compact: self.plan.trace_options.compact,
                },
                blocks_per_plane: self.plan.device.blocks_per_plane_given,
            }
        })
    }

    /// A request beyond the capacity (`e`, from [`Run::locate`]) of a trace read without a pre-pass knows only its
    /// own end: the rest of the trace is read (parsed, not run; `next` gives its requests, each with the source's
    /// progress, which `ticker` is told with the `requests` served) for its furthest request, so that the
    /// capacity suggested holds the whole trace, where it would fail again further on. The reading stops at a
    /// line that does not parse or when `ticker`'s callback cancels, with what it found. A run that wraps is
    /// told the capacity its longest request needs as it was; any other error passes through.
    fn reaching_trace_end(
        &self,
        e: SimError,
        requests: u64,
        mut next: impl FnMut() -> Option<(std::result::Result<Request, TraceError>, (u64, u64))>,
        ticker: &mut Ticker,
    ) -> SimError {
        let SimError::BeyondCapacity {
            at,
            end,
            mut reach,
            capacity,
            used,
            blocks_per_plane,
            ..
        } = e
        else {
            return e;
        };
        if !used.wrap && self.plan.device.placement.highest_address().is_none() {
            let mut read = 0u64;
            while let Some((Ok(request), (done, total))) = next() {
                reach = reach.max(request.offset.saturating_add(request.len));
                read += 1;
                let progress = || Progress {
                    requests,
                    done,
                    total,
                };
                if ticker.tick(read, progress).is_err() {
                    break;
                }
            }
        }
        SimError::BeyondCapacity {
            at,
            end,
            reach,
            capacity,
            suggest: capacity_for(reach),
            used,
            blocks_per_plane,
        }
    }

    /// [`Run::locate`]'s byte range, None for a request beyond the capacity that `wrap` does not fold in.
    #[inline]
    fn fold(&self, request: &Request) -> Option<(u64, u64)> {
        let mut offset = request.offset;
        if offset.saturating_add(request.len) > self.capacity {
            if !self.plan.wrap || request.len > self.capacity {
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
        let lpn = self.page_bytes.page_of(offset);
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
        for lpn in self.page_bytes.page_of(offset)..=self.page_bytes.page_of(end - 1) {
            self.write_page(Lpn(lpn as u32))?;
        }
        Ok(())
    }

    /// Serves one request: done, or cut by the power. A cut write's pages not yet written are dropped (the host
    /// never had them acknowledged): counted in `power.write_pages_dropped`, not in `host.write_pages`.
    fn serve(&mut self, request: &Request) -> Result<Step> {
        let written_before = self.host.write_pages;
        let outcome = step(self.serve_pages(request))?;
        if let (Step::PowerCut(_), Op::Write) = (&outcome, request.op) {
            let (offset, end) = self.locate(request)?;
            let pages = self.page_bytes.page_of(end - 1) - self.page_bytes.page_of(offset) + 1;
            self.power.write_pages_dropped += pages - (self.host.write_pages - written_before);
        }
        Ok(outcome)
    }

    /// [`Run::serve`]'s work: checks the range, then reads, writes or trims its pages, timing the request.
    fn serve_pages(&mut self, request: &Request) -> Result<()> {
        self.host.requests += 1;
        if request.len == 0 {
            self.host.empty_requests += 1;
            return Ok(());
        }
        let (offset, end) = self.locate(request)?;
        let first = self.page_bytes.page_of(offset);
        let last = self.page_bytes.page_of(end - 1);
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
            let arrival = (self.trace_timed || request.time_us > 0.0).then_some(request.time_us);
            t.begin_request(request.op.into(), arrival, request.len);
        }
        match request.op {
            Op::Read => {
                self.host.read_requests += 1;
                self.host.read_bytes += request.len;
                self.read_pages(first, last)?;
            }
            Op::Write => {
                self.host.write_requests += 1;
                self.host.write_bytes += request.len;
                self.write_pages(offset, end)?;
            }
            Op::Trim => {
                self.host.trim_requests += 1;
                self.trim_pages(offset, end)?;
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

    /// Writes the pages of bytes `offset..end`, reading a partly written one first when the run says `rmw`.
    #[inline]
    fn write_pages(&mut self, offset: u64, end: u64) -> Result<()> {
        let pb = self.page_bytes;
        let (first, last) = (pb.page_of(offset), pb.page_of(end - 1));
        let (head_partial, tail_partial) = (!pb.starts_page(offset), !pb.starts_page(end));
        for lpn in first..=last {
            let partial = (lpn == first && head_partial) || (lpn == last && tail_partial);
            if partial && self.plan.rmw {
                self.host.rmw_page_reads += 1;
                self.dev.enter_phase(Cause::Rmw);
                self.read_page(Lpn(lpn as u32))?;
                self.dev.enter_phase(Cause::Host);
            }
            self.write_page(Lpn(lpn as u32))?;
            self.host.write_pages += 1;
        }
        Ok(())
    }

    /// Trims the whole pages of bytes `offset..end`; a partly covered page keeps its data.
    #[inline]
    fn trim_pages(&mut self, offset: u64, end: u64) -> Result<()> {
        let first_whole = offset.div_ceil(self.page_bytes.bytes);
        let end_whole = self.page_bytes.page_of(end);
        for lpn in first_whole..end_whole {
            self.ftl.trim(Lpn(lpn as u32), &mut self.dev)?;
            self.host.trim_pages += 1;
            let s = self.shadow.get(lpn as usize);
            if s != 0 {
                self.shadow.set(lpn as usize, s | TRIMMED);
            }
        }
        Ok(())
    }

    fn report(mut self, precondition_erases: u64, flush_us: f64, sim: SimFigures) -> Report {
        let t = *self.dev.timing();
        let by_cause_us = self.dev.time_by_cause_us();
        let flash_by_cause = self.dev.counts_by_cause();
        let array = self.dev.timeline_mut().map(|t| t.figures());
        let dev = &self.dev;
        let stats = &dev.stats;
        let (mut min, mut max, mut sum, mut blocks) = (u32::MAX, 0, 0u64, 0u64);
        let erase_counts = dev.in_service_erase_counts();
        for &e in &erase_counts {
            (min, max, sum, blocks) = (min.min(e), max.max(e), sum + e as u64, blocks + 1);
        }
        let histogram_width = (max / 10 + 1).max(1);
        let mut erase_histogram = vec![0u64; 10];
        for &e in &erase_counts {
            erase_histogram[((e / histogram_width) as usize).min(9)] += 1;
        }
        let mut extra = Vec::new();
        self.ftl.extra(&mut extra);
        Report {
            version: crate::VERSION.to_string(),
            config: self.plan.echo(),
            trace: self.plan.trace_facts.clone(),
            host: self.host,
            flash: dev.counts(),
            map: dev.workload_map_counts(),
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
                map: dev.workload_map_counts().time_us(&t),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::DeviceOverrides;
    use std::cell::Cell;

    thread_local! {
        /// Read every page through the scheme, none counted at once ([`Run::read_pages`]).
        pub(super) static READS_ONE_BY_ONE: Cell<bool> = const { Cell::new(false) };
    }

    /// Reads over space never written (a trace's reads of data from before it began), counted at once where
    /// the oracle and the scheme both know it holds nothing, give the report page by page reading gives: the
    /// long reads cross untouched chunks of the maps and oracle, touched ones, logical blocks without a
    /// physical one, written and trimmed pages, and (with 96 pages a block) logical blocks across the
    /// oracle's chunks, where a mapped block's pages in an untouched chunk are still read (the block baseline
    /// reads a page never programmed in a mapped block), and behind an LRU NVRAM cache (its misses counted at
    /// once). Every scheme: page, block, BAST, the FAST family, NFTL and the replacement scheme count at once;
    /// the others read page by page either way.
    #[test]
    fn reads_of_space_never_written_count_as_page_by_page_reading_does() {
        let bytes = 64u64 << 20;
        let pages = bytes / 2048;
        let mut x = 5u64;
        let requests: Vec<Request> = (0..4_000)
            .map(|i| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let (op, len) = match i % 4 {
                    0 | 1 => (Op::Write, 1 + (x >> 10) % 8),
                    2 => (Op::Read, 1 + (x >> 10) % 12_000),
                    _ => (Op::Trim, 1 + (x >> 10) % 64),
                };
                // Writes and trims in the first eighth; reads anywhere.
                let span = if op == Op::Read { pages } else { pages / 8 };
                let at = (x >> 24) % (span - len);
                Request::new(0.0, op, at * 2048, len * 2048)
            })
            .collect();
        let schemes = ftl::SCHEMES.iter().map(|s| s.name);
        let setups = schemes.flat_map(|s| [(s, 64, false), (s, 96, false), (s, 64, true)]);
        for (scheme, pages_per_block, nvram) in setups {
            let cfg = SimConfig {
                ftl: scheme.into(),
                capacity: Some(format!("{bytes}")),
                device: DeviceOverrides {
                    page_bytes: Some(2048),
                    pages_per_block: Some(pages_per_block),
                    ..Default::default()
                },
                nvram: nvram.then(|| "256KiB".to_string()),
                nvram_policy: if nvram { "lru" } else { "metadata" }.into(),
                ..Default::default()
            };
            let run = |one_by_one: bool| {
                READS_ONE_BY_ONE.with(|c| c.set(one_by_one));
                let plan = RunPlan::resolve(&cfg, Input::Memory(&requests), &mut |_| true)
                    .expect("a valid config");
                let mut go_on = |_| true;
                let report = drive_from(
                    &plan,
                    Pass::Run(Vec::new()),
                    Instant::now(),
                    &mut Ticker::new(&mut go_on),
                    1,
                )
                .expect("every read exact");
                READS_ONE_BY_ONE.with(|c| c.set(false));
                let mut keys = report.flatten();
                keys.retain(|k, _| !k.starts_with("sim."));
                (report.host.unwritten_reads, keys)
            };
            let (unwritten, at_once) = run(false);
            let (_, one_by_one) = run(true);
            let setup = format!("{scheme}, {pages_per_block} pages a block, NVRAM {nvram}");
            assert!(unwritten > 5_000_000, "{setup}: {unwritten}");
            if nvram {
                let misses = at_once["cache.nvram.misses"].as_u64();
                assert!(misses > Some(5_000_000), "{setup}: {misses:?}");
            }
            assert_eq!(at_once, one_by_one, "{setup}");
        }
    }

    /// A run whose tokens start just short of 2^32 (past the oracle entries' 31 bits, and crossing the
    /// chip records' 32): every read is checked against the last write, so a wide token that came back
    /// wrong fails the run. The oracle and the chip keep the tokens' high bits in 2 bits a page or a record.
    #[test]
    fn runs_past_four_billion_host_writes_keep_every_token_exact() {
        let bytes = 8u64 << 20;
        for scheme in ["page", "fast", "nftl"] {
            let cfg = SimConfig {
                ftl: scheme.into(),
                capacity: Some(format!("{bytes}")),
                precondition: Precondition::Full,
                ..Default::default()
            };
            let mut x = 11u64;
            let requests: Vec<Request> = (0..10_000)
                .map(|_| {
                    x = x
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    let op = if x >> 62 == 0 { Op::Read } else { Op::Write };
                    let len = 1 + (x >> 10) % 4;
                    let pages = bytes / 2048;
                    Request::new(0.0, op, (x >> 20) % (pages - len) * 2048, len * 2048)
                })
                .collect();
            let plan = RunPlan::resolve(&cfg, Input::Memory(&requests), &mut |_| true)
                .expect("a valid config");
            let logical_pages = plan.device.geometry.logical_pages() as usize;
            let mut go_on = |_| true;
            let mut ticker = Ticker::new(&mut go_on);
            let first = (1 << 32) - 5_000;
            let report = drive_from(
                &plan,
                Pass::Run(Vec::new()),
                Instant::now(),
                &mut ticker,
                first,
            )
            .expect("every read exact");
            assert_eq!(report.host.requests, 10_000, "{scheme}");
            assert!(report.host.write_pages > 10_000, "{scheme}");
            // The requests' writes alone (preconditioning's come before them) take the tokens past 2^32.
            assert!(
                first + report.host.write_pages > 1 << 32,
                "{scheme}: the run crossed 2^32 tokens"
            );
            // The chunk table, entries of 4 bytes and 2 bits a page for the high bits.
            let oracle = report.sim.oracle_memory_bytes as usize;
            let entries = logical_pages.div_ceil(4096) * 16 + logical_pages * 4;
            assert_eq!(oracle, entries + logical_pages / 16 * 4, "{scheme}");
            // The chip: 11-byte records, their tokens' high bits in 2 bits a record, the block states and the
            // scheme words of the blocks that carry them: 11.8 B a physical page (page, NFTL) and 14.3 (FAST's
            // log blocks carry words), where a map entry a wide token made it 35.4 to 37.8.
            let physical_pages =
                (report.config.physical_blocks * report.config.pages_per_block) as f64;
            let chip = report.sim.chip_memory_bytes as f64 / physical_pages;
            assert!(chip < 15.0, "{scheme}: {chip} B a physical page");
        }
    }

    #[test]
    fn a_page_size_cuts_bytes_into_pages_by_shift_or_by_division_alike() {
        for bytes in [512, 2048, 3000, 1536] {
            let pb = PageBytes::new(bytes);
            assert_eq!(pb.shift.is_some(), bytes.is_power_of_two());
            for byte in [
                0,
                1,
                bytes - 1,
                bytes,
                bytes + 1,
                7 * bytes,
                7 * bytes - 1,
                1 << 40,
            ] {
                assert_eq!(
                    pb.page_of(byte),
                    byte / bytes,
                    "{bytes} B pages, byte {byte}"
                );
                assert_eq!(
                    pb.starts_page(byte),
                    byte % bytes == 0,
                    "{bytes} B, byte {byte}"
                );
            }
        }
    }
}
