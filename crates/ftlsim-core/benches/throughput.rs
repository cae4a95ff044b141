//! Engine speed: `cargo bench -p ftlsim-core --bench throughput`. For every registered scheme, at
//! steady state after `precondition="full"` on 1 GiB of 2 KiB pages, 64 pages a block (lee2007 timing), it
//! prints host requests, flash operations (page reads + programs + erases, host and internal) and spare reads
//! per wall second, and bytes of memory per physical page that the chip model and the read oracle hold, on
//! three workloads:
//!   (a) uniform random single-page writes;
//!   (b) hot/cold: 80% of requests to the first 20% of pages, 20% of requests reads;
//!   (c) the Financial1 excerpt in `../shared/traces/`, looped to 2 M requests.
//! The whole loop is measured: generation, splitting into pages, the scheme, the chip, the integrity check.
//! NFTL's spare reads a second run into billions: its garbage collection's scan of every primary's header is
//! counted read by read but done in one call the chip confirms (`Device::read_headers_of`).
//! The machine may be shared: `cpu%` is the share of the run's wall time this thread was on a CPU (from
//! `/proc/thread-self/schedstat`), and `ops/cpu-s` is flash ops/s divided by it, the rate on an idle core.
//! `FTLSIM_BENCH_QUICK=1` runs a tenth of the requests on 64 MiB (a smoke run); `FTLSIM_BENCH_SCHEMES=page,fast`
//! picks schemes and `FTLSIM_BENCH_WORKLOADS=a,b` workloads; `FTLSIM_BENCH_REQUESTS=n` runs n requests a
//! workload (two runs of different lengths under a cache simulator give the cost of the steady state alone,
//! `docs/speed.md`).

use ftlsim_core::config::DeviceOverrides;
use ftlsim_core::ftl::SCHEMES;
use ftlsim_core::request::{Op, Request};
use ftlsim_core::sim::{run, run_requests, Precondition, SimConfig};
use ftlsim_core::trace::{self, TraceOptions};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use std::path::Path;
use std::time::Instant;

const PAGE_BYTES: u64 = 2048;

struct Sizes {
    capacity: &'static str,
    capacity_bytes: u64,
    requests: u64,
}

/// Workload (b): single-page requests, 80% to the first 20% of pages, a fifth of them reads.
fn hotcold(sizes: &Sizes) -> Vec<Request> {
    let pages = sizes.capacity_bytes / PAGE_BYTES;
    let hot = pages / 5;
    let mut rng = Pcg64::seed_from_u64(1);
    (0..sizes.requests)
        .map(|_| {
            let lpn = if rng.gen_bool(0.8) {
                rng.gen_range(0..hot)
            } else {
                rng.gen_range(hot..pages)
            };
            let op = if rng.gen_bool(0.2) {
                Op::Read
            } else {
                Op::Write
            };
            Request::new(0.0, op, lpn * PAGE_BYTES, PAGE_BYTES)
        })
        .collect()
}

/// Workload (c): the Financial1 excerpt repeated (times shifted on) until `requests` requests.
fn financial(sizes: &Sizes) -> Option<Vec<Request>> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/traces/umass_financial1_first10k.ssdsim.ascii");
    let mut source = trace::open(
        path.to_str()?,
        &TraceOptions::default(),
        sizes.capacity_bytes,
        PAGE_BYTES as u32,
    )
    .ok()?;
    let mut once = Vec::new();
    while let Some(r) = source.next_request() {
        once.push(r.ok()?);
    }
    let span = once.last()?.time_us + 1.0;
    let mut out = Vec::with_capacity(sizes.requests as usize);
    for lap in 0.. {
        for r in &once {
            if out.len() as u64 == sizes.requests {
                return Some(out);
            }
            out.push(Request {
                time_us: r.time_us + lap as f64 * span,
                ..*r
            });
        }
    }
    None
}

/// Nanoseconds this thread has been on a CPU, if the kernel says.
fn cpu_ns() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    stat.split_whitespace().next()?.parse().ok()
}

fn main() {
    let quick = std::env::var_os("FTLSIM_BENCH_QUICK").is_some();
    let mut sizes = if quick {
        Sizes {
            capacity: "64MiB",
            capacity_bytes: 64 << 20,
            requests: 200_000,
        }
    } else {
        Sizes {
            capacity: "1GiB",
            capacity_bytes: 1 << 30,
            requests: 2_000_000,
        }
    };
    if let Ok(n) = std::env::var("FTLSIM_BENCH_REQUESTS") {
        sizes.requests = n
            .parse()
            .unwrap_or_else(|_| panic!("FTLSIM_BENCH_REQUESTS={n}: not a number"));
    }
    let only = std::env::var("FTLSIM_BENCH_SCHEMES").ok();
    let only_workloads = std::env::var("FTLSIM_BENCH_WORKLOADS").ok();
    let wanted = |wl: &str| {
        only_workloads
            .as_deref()
            .is_none_or(|o| o.split(',').any(|w| w == wl))
    };
    // Workloads not asked for are not generated (2 M requests each).
    let b = wanted("b").then(|| hotcold(&sizes));
    let c = wanted("c").then(|| financial(&sizes)).flatten();
    if wanted("c") && c.is_none() {
        println!("(c) Financial1 excerpt not found in ../shared/traces: skipped");
    }
    println!(
        "{} requests a workload, {} of 2 KiB pages, 64 pages a block, precondition full",
        sizes.requests, sizes.capacity
    );
    println!(
        "{:<14} {:<3} {:>11} {:>13} {:>13} {:>10} {:>5} {:>13}",
        "scheme", "wl", "requests/s", "flash ops/s", "spare rd/s", "B/phys pg", "cpu%", "ops/cpu-s"
    );
    // (workload, scheme, flash ops/s) of every run, for the summary.
    let mut rates: Vec<(&str, &str, f64)> = Vec::new();
    for scheme in SCHEMES {
        if only
            .as_deref()
            .is_some_and(|o| !o.split(',').any(|s| s == scheme.name))
        {
            continue;
        }
        let cfg = SimConfig {
            ftl: scheme.name.into(),
            capacity: Some(sizes.capacity.into()),
            precondition: Precondition::Full,
            device: DeviceOverrides {
                page_bytes: Some(PAGE_BYTES as u32),
                pages_per_block: Some(64),
                ..Default::default()
            },
            // Financial1 addresses beyond a small device in quick mode.
            wrap: true,
            ..Default::default()
        };
        let uniform = format!("uniform:writes={},seed=1", sizes.requests);
        let workloads: [(&str, Option<&Vec<Request>>); 3] =
            [("a", None), ("b", b.as_ref()), ("c", c.as_ref())];
        for (wl, requests) in workloads {
            if !wanted(wl) || (wl != "a" && requests.is_none()) {
                continue;
            }
            let (wall, cpu) = (Instant::now(), cpu_ns());
            let report = match requests {
                None => run(&cfg, &uniform, &mut |_| true),
                Some(requests) => run_requests(&cfg, requests.clone()),
            };
            let r = report.unwrap_or_else(|e| panic!("{} ({wl}): {e}", scheme.name));
            let share = cpu_ns()
                .zip(cpu)
                .map(|(end, start)| (end - start) as f64 / 1e9 / wall.elapsed().as_secs_f64());
            let physical_pages = r.count("config.physical_blocks") * 64;
            let ops = r.num("sim.flash_ops_per_s");
            rates.push((wl, scheme.name, ops));
            println!(
                "{:<14} {wl:<3} {:>11.0} {ops:>13.0} {:>13.0} {:>10.2} {:>5} {:>13}",
                scheme.name,
                r.num("sim.requests_per_s"),
                r.num("sim.spare_reads_per_s"),
                (r.count("sim.chip_memory_bytes") + r.count("sim.oracle_memory_bytes")) as f64
                    / physical_pages as f64,
                share.map_or("-".into(), |s| format!("{:.0}", 100.0 * s)),
                share.map_or("-".into(), |s| format!("{:.0}", ops / s.max(1e-3))),
            );
        }
    }
    summarize(&rates);
}

/// The speed targets, per workload: the fastest scheme, the schemes under a quarter of its flash ops/s, and
/// on (a) the schemes meant to reach 40 M.
fn summarize(rates: &[(&str, &str, f64)]) {
    for wl in ["a", "b", "c"] {
        let runs: Vec<_> = rates.iter().filter(|r| r.0 == wl).collect();
        let Some(fastest) = runs.iter().max_by(|x, y| x.2.total_cmp(&y.2)) else {
            continue;
        };
        let quarter = fastest.2 / 4.0;
        // "scheme 12.3 M" of the runs that pass `keep`, or None.
        let listed = |keep: &dyn Fn(&str, f64) -> bool| {
            let hits: Vec<_> = runs
                .iter()
                .filter(|r| keep(r.1, r.2))
                .map(|r| format!("{} {:.1} M", r.1, r.2 / 1e6))
                .collect();
            (!hits.is_empty()).then(|| hits.join(", "))
        };
        println!(
            "({wl}) fastest: {} {:.1} M flash ops/s; under a quarter of it ({:.1} M): {}",
            fastest.1,
            fastest.2 / 1e6,
            quarter / 1e6,
            listed(&|_, ops| ops < quarter).unwrap_or_else(|| "none".into())
        );
        if wl == "a" {
            let targeted =
                |s: &str, ops: f64| ["page", "fast", "bast", "tiny"].contains(&s) && ops < 40e6;
            if let Some(short) = listed(&targeted) {
                println!("(a) under the 40 M target: {short}");
            }
        }
    }
}
