//! Drives host requests through a scheme on the simulated chip, checks every read against the last write,
//! charges each request the flash work done on its behalf, and builds the [`Report`].

use crate::addr::{Lpn, Token};
use crate::config::{format_size, parse_size, DeviceOverrides, DeviceSpec, Geometry};
use crate::device::{Device, RequestInfo};
use crate::error::{Result, SimError};
use crate::ftl::nvram::{Nvram, NvramOptions};
use crate::ftl::{self, Ftl, RamItem};
use crate::report::{num, Report};
use crate::request::{Op, Request};
use crate::sparse::SparseVec;
use crate::stats::{CACHE_KINDS, MERGE_KINDS};
use crate::trace::{self, TraceOptions};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::time::Instant;

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
        }
    }
}

/// Progress of a run, for progress bars.
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    pub requests: u64,
    /// (done, total) in the source's own unit (bytes of the file, or requests of a workload).
    pub done: u64,
    pub total: u64,
}

/// Calls the progress callback every this many requests.
const PROGRESS_EVERY: u64 = 1 << 16;

/// A resolved device: its spec, geometry and the logical capacity in bytes.
pub struct Resolved {
    pub spec: DeviceSpec,
    pub geometry: Geometry,
}

/// Resolves the device of a run: preset, overrides and capacity (scanning the trace if it must).
pub fn resolve_device(cfg: &SimConfig, trace_spec: Option<&str>) -> Result<Resolved> {
    let spec = DeviceSpec::resolve(cfg.preset.as_deref(), &cfg.device)?;
    let capacity = match (&cfg.capacity, spec.preset_capacity_bytes, trace_spec) {
        (Some(text), _, _) => parse_size(text)?,
        (None, Some(bytes), _) => bytes,
        (None, None, Some(t)) if !trace::is_workload(t) => {
            highest_address(t, &cfg.trace, spec.page_bytes)?
        }
        _ => DEFAULT_WORKLOAD_CAPACITY,
    };
    if capacity == 0 {
        return Err(SimError::Param("capacity must be more than 0 bytes".into()));
    }
    let geometry = spec.geometry(capacity)?;
    Ok(Resolved { spec, geometry })
}

/// The end of the furthest request in a trace file, in bytes (one streaming pass).
fn highest_address(path: &str, opts: &TraceOptions, page_bytes: u32) -> Result<u64> {
    let mut source = trace::open(path, opts, u64::MAX, page_bytes)?;
    let mut end = 0;
    while let Some(r) = source.next_request() {
        let r = r?;
        end = end.max(r.offset + r.len);
    }
    Ok(end)
}

/// The RAM breakdown of a scheme on a device, without a trace.
pub fn ram(cfg: &SimConfig) -> Result<Vec<RamItem>> {
    let dev = resolve_device(cfg, None)?;
    let ftl = ftl::build(&cfg.ftl, &cfg.params, &dev.geometry)?.ftl;
    Ok(with_nvram(cfg, &dev.geometry, ftl)?.ram())
}

/// The NVRAM options of a run, if it has an NVRAM.
fn nvram_options(cfg: &SimConfig, g: &Geometry) -> Result<Option<NvramOptions>> {
    match &cfg.nvram {
        None => {
            if cfg.nvram_regions.is_some() {
                return Err(SimError::Param(
                    "nvram_regions is set but there is no NVRAM; pass nvram=SIZE too".into(),
                ));
            }
            Ok(None)
        }
        Some(size) => NvramOptions::parse(
            size,
            &cfg.nvram_policy,
            cfg.nvram_regions.as_deref(),
            cfg.nvram_read_us,
            cfg.nvram_write_us,
            cfg.nvram_flush_at_end,
            g,
        )
        .map(Some),
    }
}

/// Puts the run's NVRAM write cache, if any, in front of a scheme.
fn with_nvram(cfg: &SimConfig, g: &Geometry, ftl: Box<dyn Ftl>) -> Result<Box<dyn Ftl>> {
    Ok(match nvram_options(cfg, g)? {
        Some(opts) => Box::new(Nvram::new(ftl, opts, g)),
        None => ftl,
    })
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
}

#[derive(Default)]
struct HostCounts {
    requests: u64,
    read_requests: u64,
    write_requests: u64,
    trim_requests: u64,
    read_pages: u64,
    write_pages: u64,
    trim_pages: u64,
    rmw_page_reads: u64,
    read_bytes: u64,
    write_bytes: u64,
}

/// Runs `trace` (a file or a built-in workload spec) under `cfg`. `progress` is called every few tens of
/// thousands of requests; returning false cancels the run.
pub fn run(
    cfg: &SimConfig,
    trace_spec: &str,
    progress: &mut dyn FnMut(Progress) -> bool,
) -> Result<Report> {
    let started = Instant::now();
    let resolved = resolve_device(cfg, Some(trace_spec))?;
    let built = ftl::build(&cfg.ftl, &cfg.params, &resolved.geometry)?;
    let source = trace::open_on(
        trace_spec,
        &cfg.trace,
        resolved.geometry.logical_bytes(),
        resolved.geometry.page_bytes,
        resolved.geometry.block_bytes(),
    )?;
    run_source(cfg, resolved, built, source, trace_spec, started, progress)
}

/// Runs requests held in memory (tests, generated sequences). The capacity comes from the config, else the
/// furthest request rounded up to a block.
pub fn run_requests(cfg: &SimConfig, requests: Vec<Request>) -> Result<Report> {
    run_custom(cfg, |g| ftl::build(&cfg.ftl, &cfg.params, g), requests)
}

/// Runs requests held in memory through a scheme made by `make` for the resolved geometry: the way tests run
/// a scheme that is not in the registry (a deliberately broken one, say).
pub fn run_custom(
    cfg: &SimConfig,
    make: impl FnOnce(&Geometry) -> Result<ftl::Built>,
    requests: Vec<Request>,
) -> Result<Report> {
    let started = Instant::now();
    let mut resolved = resolve_device(cfg, None)?;
    if cfg.capacity.is_none() && resolved.spec.preset_capacity_bytes.is_none() {
        let end = requests.iter().map(|r| r.offset + r.len).max().unwrap_or(1);
        resolved.geometry = resolved.spec.geometry(end)?;
    }
    let built = make(&resolved.geometry)?;
    let source = Box::new(trace::VecSource::new(requests));
    run_source(cfg, resolved, built, source, "memory", started, &mut |_| {
        true
    })
}

fn run_source(
    cfg: &SimConfig,
    resolved: Resolved,
    built: ftl::Built,
    mut source: Box<dyn trace::RequestSource>,
    trace_spec: &str,
    started: Instant,
    progress: &mut dyn FnMut(Progress) -> bool,
) -> Result<Report> {
    let g = resolved.geometry;
    let physical_blocks = g.logical_blocks + built.extra_blocks;
    let nvram = nvram_options(cfg, &g)?;
    let mut ftl = built.ftl;
    let mut dev = Device::new(&cfg.ftl, g, physical_blocks, resolved.spec.timing);
    let mut shadow = SparseVec::new(g.logical_pages() as usize, 0);
    let mut next_token = 0;
    let mut precondition_erases = 0;
    if cfg.precondition == Precondition::Full {
        // Straight to the scheme: the NVRAM is put in front afterwards, so it starts empty.
        for lpn in 0..g.logical_pages() {
            next_token += 1;
            ftl.write(Lpn(lpn), next_token, &mut dev)?;
            shadow.set(lpn as usize, next_token);
        }
        precondition_erases = dev.counts().erases;
        dev.reset_counters();
        ftl.reset_counters();
    }
    if let Some(opts) = nvram {
        ftl = Box::new(Nvram::new(ftl, opts, &g));
    }
    let mut run = Run {
        ftl,
        dev,
        shadow,
        next_token,
        page_bytes: g.page_bytes as u64,
        capacity: g.logical_bytes(),
        cfg,
        host: HostCounts::default(),
        read_latency: Latencies::new(),
        write_latency: Latencies::new(),
        request_us: 0.0,
    };
    let setup_s = started.elapsed().as_secs_f64();
    let loop_started = Instant::now();
    let mut idle_us = 0.0;
    let mut last_time: Option<f64> = None;
    while let Some(request) = source.next_request() {
        let request = request?;
        if let Some(prev) = last_time {
            if request.time_us - prev > cfg.idle_threshold_us {
                let before = run.dev.elapsed_us();
                run.ftl.idle(&mut run.dev)?;
                idle_us += run.dev.elapsed_us() - before;
            }
        }
        last_time = Some(request.time_us);
        run.serve(&request)?;
        if run.host.requests.is_multiple_of(PROGRESS_EVERY) {
            let (done, total) = source.progress();
            if !progress(Progress {
                requests: run.host.requests,
                done,
                total,
            }) {
                return Err(SimError::Cancelled);
            }
        }
    }
    let before = run.dev.elapsed_us();
    run.ftl.finish(&mut run.dev)?;
    let flush_us = run.dev.elapsed_us() - before;
    let loop_s = loop_started.elapsed().as_secs_f64();
    let (done, total) = source.progress();
    progress(Progress {
        requests: run.host.requests,
        done,
        total,
    });

    let mut r = run.report(&resolved, trace_spec);
    r.set("time_us.idle", num(idle_us));
    r.set("time_us.flush", num(flush_us));
    r.set("precondition.erases", precondition_erases);
    r.set("sim.skipped_lines", source.skipped_lines());
    r.set("sim.setup_s", num(setup_s));
    r.set("sim.wall_s", num(loop_s));
    r.set(
        "sim.requests_per_s",
        num(run.host.requests as f64 / loop_s.max(1e-9)),
    );
    r.set("sim.chip_memory_bytes", run.dev.chip().heap_bytes() as u64);
    Ok(r)
}

/// Latencies of one kind of request: exact count, mean and max, and percentiles from a histogram in
/// nanoseconds with 3 significant figures (up to an hour; longer ones saturate).
struct Latencies {
    hist: Histogram<u64>,
    sum_us: f64,
    max_us: f64,
}

impl Latencies {
    fn new() -> Latencies {
        Latencies {
            hist: Histogram::new_with_bounds(1, 3_600_000_000_000, 3).expect("valid bounds"),
            sum_us: 0.0,
            max_us: 0.0,
        }
    }

    fn record(&mut self, us: f64) {
        self.hist.saturating_record((us * 1000.0).round() as u64);
        self.sum_us += us;
        self.max_us = self.max_us.max(us);
    }

    fn report(&self, r: &mut Report, name: &str) {
        let n = self.hist.len();
        // The histogram keeps 3 significant figures, so a percentile is reported to 3 (a bucket edge would
        // show 200 us as 200.063), and never above the exact maximum.
        let quantile = |q: f64| {
            num(round_to_3_figures(self.hist.value_at_quantile(q) as f64 / 1000.0).min(self.max_us))
        };
        r.set(format!("latency_us.{name}.count"), n);
        r.set(
            format!("latency_us.{name}.mean"),
            num(if n == 0 { 0.0 } else { self.sum_us / n as f64 }),
        );
        r.set(format!("latency_us.{name}.p50"), quantile(0.5));
        r.set(format!("latency_us.{name}.p99"), quantile(0.99));
        r.set(format!("latency_us.{name}.max"), num(self.max_us));
    }
}

fn round_to_3_figures(v: f64) -> f64 {
    if v <= 0.0 {
        return 0.0;
    }
    let scale = 10f64.powi(2 - v.log10().floor() as i32);
    (v * scale).round() / scale
}

impl Run<'_> {
    fn write_page(&mut self, lpn: Lpn) -> Result<()> {
        self.next_token += 1;
        self.ftl.write(lpn, self.next_token, &mut self.dev)?;
        self.shadow.set(lpn.index(), self.next_token);
        Ok(())
    }

    fn read_page(&mut self, lpn: Lpn) -> Result<()> {
        let got = self.ftl.read(lpn, &mut self.dev)?;
        let expected = self.shadow.get(lpn.index());
        let ok = if expected & TRIMMED != 0 {
            got.is_none() || got == Some(expected & !TRIMMED)
        } else {
            got == (expected != 0).then_some(expected)
        };
        if ok {
            return Ok(());
        }
        let show =
            |t: Option<Token>| t.map_or("nothing (never written)".to_string(), |t| t.to_string());
        Err(SimError::Integrity {
            scheme: self.cfg.ftl.clone(),
            lpn: lpn.0,
            expected: if expected & TRIMMED != 0 {
                format!("{} or nothing (trimmed)", expected & !TRIMMED)
            } else {
                show((expected != 0).then_some(expected))
            },
            returned: show(got),
            request: self.host.requests,
        })
    }

    fn serve(&mut self, request: &Request) -> Result<()> {
        self.host.requests += 1;
        if request.len == 0 {
            return Ok(());
        }
        let mut offset = request.offset;
        let end = offset.saturating_add(request.len);
        if end > self.capacity {
            if !self.cfg.wrap || request.len > self.capacity {
                return Err(SimError::BeyondCapacity {
                    request: self.host.requests,
                    end,
                    capacity: self.capacity,
                    suggest: format_size(end.div_ceil(1 << 20) << 20),
                });
            }
            offset %= self.capacity;
            if offset + request.len > self.capacity {
                offset = self.capacity - request.len;
            }
        }
        let end = offset + request.len;
        let first = offset / self.page_bytes;
        let last = (end - 1) / self.page_bytes;
        self.dev.request = RequestInfo {
            index: self.host.requests,
            op: request.op,
            first_lpn: Lpn(first as u32),
            pages: (last - first + 1) as u32,
            bytes: request.len,
            tag: request.tag,
            time_us: request.time_us,
        };
        let start_us = self.dev.elapsed_us();
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
                    if partial {
                        self.host.rmw_page_reads += 1;
                        self.read_page(Lpn(lpn as u32))?;
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
        let latency_us = self.dev.elapsed_us() - start_us;
        self.request_us += latency_us;
        match request.op {
            Op::Read => self.read_latency.record(latency_us),
            Op::Write => self.write_latency.record(latency_us),
            Op::Trim => {}
        }
        Ok(())
    }

    fn report(&self, resolved: &crate::sim::Resolved, trace_spec: &str) -> Report {
        let mut r = Report::default();
        let g = &resolved.geometry;
        let spec = &resolved.spec;
        let dev = &self.dev;
        let h = &self.host;
        let c = dev.counts();
        let map = dev.map_counts();
        let t = dev.timing();
        let stats = &dev.stats;

        r.set("version", crate::VERSION);
        r.set("config.scheme", self.cfg.ftl.clone());
        r.set("config.params", self.cfg.params.to_string());
        r.set("config.preset", spec.preset);
        r.set("config.trace", trace_spec);
        if let Ok(Some(w)) = trace::workload::parse_spec(trace_spec) {
            r.set("config.seed", w.seed());
        }
        r.set(
            "config.precondition",
            serde_json::to_value(self.cfg.precondition).unwrap_or(Value::Null),
        );
        r.set("config.page_bytes", g.page_bytes);
        r.set("config.spare_bytes", g.spare_bytes);
        r.set("config.pages_per_block", g.pages_per_block);
        r.set("config.sequential_program", g.sequential_program);
        r.set("config.capacity_bytes", g.logical_bytes());
        r.set("config.logical_blocks", g.logical_blocks);
        r.set("config.physical_blocks", dev.physical_blocks());
        r.set("config.read_us", num(t.read_us));
        r.set("config.spare_read_us", num(t.spare_read_us));
        r.set("config.program_us", num(t.program_us));
        r.set("config.spare_program_us", num(t.spare_program_us));
        r.set("config.erase_us", num(t.erase_us));

        r.set("host.requests", h.requests);
        r.set("host.read_requests", h.read_requests);
        r.set("host.write_requests", h.write_requests);
        r.set("host.trim_requests", h.trim_requests);
        r.set("host.read_pages", h.read_pages);
        r.set("host.write_pages", h.write_pages);
        r.set("host.trim_pages", h.trim_pages);
        r.set("host.rmw_page_reads", h.rmw_page_reads);
        r.set("host.read_bytes", h.read_bytes);
        r.set("host.write_bytes", h.write_bytes);

        r.set("flash.page_reads", c.page_reads);
        r.set("flash.spare_reads", c.spare_reads);
        r.set("flash.page_writes", c.page_writes);
        r.set("flash.spare_writes", c.spare_writes);
        r.set("flash.erases", c.erases);
        r.set("map.page_reads", map.page_reads);
        r.set("map.spare_reads", map.spare_reads);
        r.set("map.page_writes", map.page_writes);
        r.set("map.erases", map.erases);

        let mut merges = 0;
        let mut merge_erases = 0;
        for kind in MERGE_KINDS {
            let m = stats.merges[kind as usize];
            r.set(format!("merges.{}", kind.name()), m.count);
            r.set(format!("merges.{}.erases", kind.name()), m.erases);
            r.set(
                format!("merges.{}.copied_pages", kind.name()),
                m.copied_pages,
            );
            merges += m.count;
            merge_erases += m.erases;
        }
        r.set("merges.total", merges);
        r.set(
            "merges.erases_per_merge",
            num(merge_erases as f64 / merges as f64),
        );
        r.set("gc.runs", stats.gc_runs);
        r.set("gc.copied_pages", stats.gc_copied_pages);
        for kind in CACHE_KINDS {
            let (hits, misses) = stats.cache[kind as usize];
            if hits + misses > 0 {
                r.set(format!("cache.{}.hits", kind.name()), hits);
                r.set(format!("cache.{}.misses", kind.name()), misses);
                r.set(
                    format!("cache.{}.miss_ratio", kind.name()),
                    num(misses as f64 / (hits + misses) as f64),
                );
            }
        }
        let replaced: u64 = stats.log_utilization.iter().sum();
        if replaced > 0 {
            let written: u64 = stats
                .log_utilization
                .iter()
                .enumerate()
                .map(|(i, n)| i as u64 * n)
                .sum();
            r.set("log_utilization.replacements", replaced);
            r.set(
                "log_utilization.mean",
                num(written as f64 / (replaced * g.pages_per_block as u64) as f64),
            );
            r.set(
                "log_utilization.histogram",
                serde_json::to_value(&stats.log_utilization).unwrap_or(Value::Null),
            );
        }

        r.set(
            "write_amplification",
            num(c.page_writes as f64 / h.write_pages as f64),
        );
        let (mut min, mut max, mut sum, mut blocks) = (u32::MAX, 0, 0u64, 0u64);
        for e in dev.chip().erase_counts() {
            (min, max, sum, blocks) = (min.min(e), max.max(e), sum + e as u64, blocks + 1);
        }
        r.set("erase_count.max", max);
        r.set("erase_count.min", if blocks == 0 { 0 } else { min });
        r.set("erase_count.mean", num(sum as f64 / blocks.max(1) as f64));

        r.set("time_us.total", num(dev.elapsed_us()));
        r.set("time_us.requests", num(self.request_us));
        r.set("time_us.merges", num(stats.merge_ops.time_us(t)));
        r.set("time_us.gc", num(stats.gc_ops.time_us(t)));
        r.set("time_us.map", num(map.time_us(t)));
        self.read_latency.report(&mut r, "read");
        self.write_latency.report(&mut r, "write");
        // The NFTL paper's Table 5 figures: time charged to reads (writes) per page (sector) read (written).
        r.set(
            "time_us.per_read_page",
            num(self.read_latency.sum_us / h.read_pages as f64),
        );
        r.set(
            "time_us.per_write_page",
            num(self.write_latency.sum_us / h.write_pages as f64),
        );

        let ram = self.ftl.ram();
        r.set("ram.total_bytes", ram.iter().map(|i| i.bytes).sum::<u64>());
        for item in &ram {
            r.set(format!("ram.{}", item.name), item.bytes);
        }
        let mut extra = Vec::new();
        self.ftl.extra(&mut extra);
        for (k, v) in extra {
            r.set(k, v);
        }
        r
    }
}
