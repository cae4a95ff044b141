//! The event model's cost: `cargo bench -p ftlsim-core --bench array`. For page, dftl and fast on one shared
//! workload (600,000 single-page requests, a fifth of them reads, uniform over 64 MiB of 2 KiB pages, 64
//! pages a physical block, every page written first), it prints flash operations per second with the event
//! model off (today's serial sum), on with 1 die (`queue_depth=32`) and on with 4 dies (2 channels x 2 dies),
//! the scheme's block striped over them (`on, striped`) or an instance per die (`on, per die`). Each is
//! compared with the serial model doing the same flash work (`vs serial`; the bar: at least half): on
//! 1 die with `off`; striped with the serial model on the scheme's striped block (the block times the dies,
//! `off, striped block`); an instance per die with the per-die twin (`off, die twin`): each die's share of the
//! workload, routed as `ftl/per_die.rs` routes it, run alone with the event model off on its share of the
//! device, the runs summed (an instance per die merges and collects its own blocks: other flash work than
//! `off`, fewer operations for the same trace).
//! The bench asserts that each pair's counts are the same. Every mode is also compared with `off` by the
//! trace's requests per second (`trace vs off`). It prints bytes of chip-model memory per physical page too
//! (the bar: unchanged).
//! The machine may be shared: as in `benches/throughput.rs`, `cpu%` is the share of the run's wall time this
//! thread was on a CPU (`/proc/thread-self/schedstat`) and the rates and ratios are per CPU second (flash
//! ops/s divided by that share). Each figure is the best of three runs, taken in turn with the other modes.
//! `FTLSIM_BENCH_QUICK=1` runs a tenth of the requests (a smoke run); `FTLSIM_BENCH_SCHEMES=fast,dftl` only
//! those schemes (a profile of one); `FTLSIM_BENCH_MODE="on, striped"` (any mode's name) runs that one mode
//! once, printing its rate and counts (a profile of one mode under perf or callgrind);
//! `FTLSIM_BENCH_LAYOUT=1x8` lays out other dies: channels x dies a channel (`2x2` the default; `4x1` and
//! `1x4` the same 4 dies otherwise; `1x8` as many on a channel as MQSim's default).

use ftlsim_core::config::DeviceOverrides;
use ftlsim_core::ftl::{scheme, Mapping};
use ftlsim_core::request::{Op, Request};
use ftlsim_core::sim::{run_requests, Precondition, SimConfig};
use std::time::Instant;

const PAGE_BYTES: u64 = 2048;
const CAPACITY_BYTES: u64 = 64 << 20;
/// Pages of the scheme's block (of a physical block, but for `off, striped block`).
const PAGES_PER_BLOCK: u64 = 64;

/// The shared workload: single-page requests at random pages, 3 in 16 reads.
fn workload(requests: usize) -> Vec<Request> {
    let pages = CAPACITY_BYTES / PAGE_BYTES;
    let mut x: u64 = 7;
    (0..requests)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let op = if (x >> 60) < 3 { Op::Read } else { Op::Write };
            Request::new(0.0, op, (x >> 20) % pages * PAGE_BYTES, PAGE_BYTES)
        })
        .collect()
}

/// The event model off (`None`), or on with `queue_depth` 32 on `(channels, dies a chip)`, striped or with
/// an instance per die.
fn config(scheme: &str, array: Option<(u32, u32)>, per_die: bool) -> SimConfig {
    let (channels, dies) = array.unwrap_or((1, 1));
    SimConfig {
        ftl: scheme.into(),
        device: DeviceOverrides {
            page_bytes: Some(PAGE_BYTES as u32),
            pages_per_block: Some(PAGES_PER_BLOCK as u32),
            read_us: Some(50.0),
            program_us: Some(200.0),
            channels: Some(channels),
            dies_per_chip: Some(dies),
            channel_mts: Some(333.0),
            placement: per_die.then(|| "per-die".to_string()),
            ..Default::default()
        },
        capacity: Some(format!("{CAPACITY_BYTES}")),
        precondition: Precondition::Full,
        queue_depth: array.map(|_| 32),
        ..Default::default()
    }
}

/// Nanoseconds this thread has been on a CPU, if the kernel says.
fn cpu_ns() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    stat.split_whitespace().next()?.parse().ok()
}

struct Speed {
    /// Flash operations per wall second, as the report measures them.
    ops: f64,
    /// This thread's share of the wall time on a CPU, if known.
    share: Option<f64>,
    bytes_per_page: f64,
    /// Flash operations (as `ops` counts them) and spare (OOB) reads.
    counts: (u64, u64),
    /// Requests per wall second.
    requests: f64,
}

impl Speed {
    /// Flash operations per CPU second: the rate on an idle core.
    fn per_cpu_s(&self) -> f64 {
        self.ops / self.share.unwrap_or(1.0).max(1e-3)
    }

    /// The trace's requests per CPU second.
    fn requests_per_cpu_s(&self) -> f64 {
        self.requests / self.share.unwrap_or(1.0).max(1e-3)
    }
}

fn measure(cfg: &SimConfig, requests: &[Request]) -> Speed {
    let (wall, cpu) = (Instant::now(), cpu_ns());
    let r = run_requests(cfg, requests.to_vec())
        .unwrap_or_else(|e| panic!("{} ({:?}): {e}", cfg.ftl, cfg.queue_depth));
    let share = cpu_ns()
        .zip(cpu)
        .map(|(end, start)| (end - start) as f64 / 1e9 / wall.elapsed().as_secs_f64());
    let physical_pages = r.count("device.physical_blocks") * r.count("config.pages_per_block");
    Speed {
        ops: r.num("sim.flash_ops_per_s"),
        share,
        bytes_per_page: r.count("sim.chip_memory_bytes") as f64 / physical_pages as f64,
        counts: (
            r.count("flash.page_reads") + r.count("flash.page_writes") + r.count("flash.erases"),
            r.count("flash.spare_reads"),
        ),
        requests: r.num("sim.requests_per_s"),
    }
}

/// Each mode's best of three runs of `scheme`, by flash operations per CPU second. The runs go round the
/// modes three times (not three of one, then three of the next), so that a change in the machine's load falls
/// on every mode alike rather than on one side of a ratio.
fn best(scheme: &str, requests: &[Request]) -> Vec<Speed> {
    let mut best: Vec<Option<Speed>> = MODES.iter().map(|_| None).collect();
    for _ in 0..3 {
        for ((mode, _), best) in MODES.iter().zip(&mut best) {
            let s = measure_mode(scheme, mode, requests);
            if best.as_ref().is_none_or(|b| s.per_cpu_s() > b.per_cpu_s()) {
                *best = Some(s);
            }
        }
    }
    best.into_iter().map(|s| s.expect("three runs")).collect()
}

/// The serial twin of an instance per die: each die's share of the workload, routed and renumbered as
/// `ftl/per_die.rs` routes it (a page-mapped scheme's page `lpn` to die `lpn mod 4` as its page `lpn div 4`; a
/// block-mapped one's block likewise, its offset kept), run alone with the event model off on the die's
/// share of the device. The four runs do the flash work of the per-die run, counted alike (`main` asserts
/// it), with no event model: their flash ops and times summed.
fn measure_twin(name: &str, requests: &[Request]) -> Speed {
    let mapping = scheme(name).expect("a registered scheme").mapping;
    let dies = dies();
    let cfg = SimConfig {
        capacity: Some(format!("{}", CAPACITY_BYTES / dies)),
        ..config(name, None, false)
    };
    let mut shares = vec![Vec::new(); dies as usize];
    for r in requests {
        let lpn = r.offset / PAGE_BYTES;
        let (die, local) = match mapping {
            Mapping::Page => (lpn % dies, lpn / dies),
            Mapping::Block => {
                let (lbn, offset) = (lpn / PAGES_PER_BLOCK, lpn % PAGES_PER_BLOCK);
                (lbn % dies, lbn / dies * PAGES_PER_BLOCK + offset)
            }
        };
        shares[die as usize].push(Request::new(0.0, r.op, local * PAGE_BYTES, r.len));
    }
    let runs: Vec<Speed> = shares.iter().map(|share| measure(&cfg, share)).collect();
    // Each run's wall and CPU time from its rates: its flash ops over ops a second.
    let wall: f64 = runs.iter().map(|s| s.counts.0 as f64 / s.ops).sum();
    let cpu: f64 = runs
        .iter()
        .map(|s| s.counts.0 as f64 / s.ops * s.share.unwrap_or(1.0))
        .sum();
    let sum = |f: fn(&Speed) -> u64| runs.iter().map(f).sum::<u64>();
    let flash_ops = sum(|s| s.counts.0);
    Speed {
        ops: flash_ops as f64 / wall,
        share: Some(cpu / wall),
        bytes_per_page: runs.iter().map(|s| s.bytes_per_page).sum::<f64>() / runs.len() as f64,
        counts: (flash_ops, sum(|s| s.counts.1)),
        requests: requests.len() as f64 / wall,
    }
}

/// The bench's modes: the serial model on the scheme's block, on the striped block (the block times the
/// dies: what the scheme sees on striped dies, so the same flash work) and on each die's share alone (the
/// per-die twin: the flash work of an instance per die), the event model on 1 die, on the dies striped and on
/// the dies with an instance each; each with the serial mode it is compared with.
const MODES: [(&str, &str); 6] = [
    ("off", "off"),
    ("off, striped block", "off, striped block"),
    ("off, die twin", "off, die twin"),
    ("on, 1 die", "off"),
    ("on, striped", "off, striped block"),
    ("on, per die", "off, die twin"),
];

fn measure_mode(scheme: &str, mode: &str, requests: &[Request]) -> Speed {
    let cfg = match mode {
        "off, die twin" => return measure_twin(scheme, requests),
        "off" => config(scheme, None, false),
        "off, striped block" => {
            let mut c = config(scheme, None, false);
            c.device.pages_per_block = Some((dies() * PAGES_PER_BLOCK) as u32);
            c
        }
        "on, 1 die" => config(scheme, Some((1, 1)), false),
        "on, striped" => config(scheme, Some(layout()), false),
        "on, per die" => config(scheme, Some(layout()), true),
        other => panic!(
            "FTLSIM_BENCH_MODE={other}: one of {}",
            MODES.map(|(m, _)| m).join(", ")
        ),
    };
    measure(&cfg, requests)
}

/// The dies' layout as (channels, dies a channel): 2 x 2, or `FTLSIM_BENCH_LAYOUT` (`4x1`, `1x4`, `1x8`,
/// ...). The event model's cost grows with the dies on a channel.
fn layout() -> (u32, u32) {
    let Ok(given) = std::env::var("FTLSIM_BENCH_LAYOUT") else {
        return (2, 2);
    };
    let parsed = given
        .split_once('x')
        .and_then(|(c, d)| Some((c.parse().ok()?, d.parse().ok()?)))
        .filter(|&(c, d): &(u32, u32)| {
            c >= 1 && d >= 1 && (c * d).is_power_of_two() && c * d <= 16
        });
    parsed.unwrap_or_else(|| {
        panic!(
            "FTLSIM_BENCH_LAYOUT={given}: channels x dies a channel, e.g. 2x2, 4x1, 1x4 or 1x8 (2 to 16 \
             dies in all, a power of two, so that they divide the 64 MiB and its blocks)"
        )
    })
}

/// The dies of the striped and per-die modes.
fn dies() -> u64 {
    let (channels, per) = layout();
    u64::from(channels * per)
}

fn main() {
    let quick = std::env::var_os("FTLSIM_BENCH_QUICK").is_some();
    let requests = workload(if quick { 60_000 } else { 600_000 });
    let (channels, per) = layout();
    println!(
        "{} single-page requests (3 in 16 reads) over 64 MiB of 2 KiB pages, 64 pages a physical block, \
         precondition full; {} dies as {channels} channels x {per}; best of 3",
        requests.len(),
        channels * per
    );
    println!(
        "`vs serial`: flash ops/cpu-s against the serial model doing the same flash work (the same counts: \
         the scheme block times the dies for striped dies, each die's share alone for an instance per \
         die); `trace vs off`: the trace's requests/cpu-s against `off`"
    );
    println!(
        "{:<6} {:<18} {:>12} {:>5} {:>12} {:>10} {:>9} {:>12} {:>10}",
        "scheme",
        "event model",
        "flash ops/s",
        "cpu%",
        "ops/cpu-s",
        "vs serial",
        "trace vs",
        "flash ops",
        "B/phys pg"
    );
    println!(
        "{:<6} {:<18} {:>12} {:>5} {:>12} {:>10} {:>9}",
        "", "", "", "", "", "", "off"
    );
    let mut below_half = Vec::new();
    let only = std::env::var("FTLSIM_BENCH_SCHEMES").ok();
    let schemes = ["page", "dftl", "fast"].into_iter().filter(|s| {
        only.as_deref()
            .is_none_or(|o| o.split(',').any(|x| x == *s))
    });
    let one_mode = std::env::var("FTLSIM_BENCH_MODE").ok();
    for scheme in schemes {
        if let Some(mode) = &one_mode {
            let s = measure_mode(scheme, mode, &requests);
            println!(
                "{scheme:<6} {mode:<18} {:>12.0} flash ops/s; {} flash ops, {} spare reads",
                s.ops, s.counts.0, s.counts.1
            );
            continue;
        }
        let speeds = best(scheme, &requests);
        let speed_of =
            |mode: &str| &speeds[MODES.iter().position(|(m, _)| *m == mode).expect("a mode")];
        assert_eq!(
            speed_of("on, 1 die").counts,
            speed_of("off").counts,
            "{scheme}: the event model on one die changes no count"
        );
        assert_eq!(
            speed_of("on, striped").counts,
            speed_of("off, striped block").counts,
            "{scheme}: striped dies do the flash work of the serial model on their block"
        );
        assert_eq!(
            speed_of("on, per die").counts,
            speed_of("off, die twin").counts,
            "{scheme}: an instance per die does the flash work of each die's share run alone"
        );
        let off = speed_of("off");
        for ((mode, serial), s) in MODES.iter().zip(&speeds) {
            let ratio = s.per_cpu_s() / speed_of(serial).per_cpu_s();
            let trace = s.requests_per_cpu_s() / off.requests_per_cpu_s();
            println!(
                "{scheme:<6} {mode:<18} {:>12.0} {:>5} {:>12.0} {:>9.0}% {:>8.0}% {:>12} {:>10.2}",
                s.ops,
                s.share.map_or("-".into(), |x| format!("{:.0}", 100.0 * x)),
                s.per_cpu_s(),
                100.0 * ratio,
                100.0 * trace,
                s.counts.0,
                s.bytes_per_page,
            );
            if ratio < 0.5 {
                below_half.push(format!("{scheme} {mode} ({:.0}%)", 100.0 * ratio));
            }
        }
    }
    if one_mode.is_none() {
        println!(
            "event model at less than half the serial model's speed: {}",
            if below_half.is_empty() {
                "none".to_string()
            } else {
                below_half.join(", ")
            }
        );
    }
}
