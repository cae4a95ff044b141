//! The array model in whole runs: physical limits (throughput at the dies' or the channels' bound,
//! utilization never above 1, Little's law), every scheme's integrity and power cuts on a 2 x 2 array, and
//! today's single chip unchanged when the model is off.

mod common;

use common::mixed;
use common::trace_files::real;
use ftlsim_core::config::DeviceOverrides;
use ftlsim_core::ftl::SCHEMES;
use ftlsim_core::report::Report;
use ftlsim_core::request::{Op, Request};
use ftlsim_core::sim::{run, run_requests, Precondition, SimConfig};

/// 2 KiB pages, 64 a block, 200 us program, 50 us read, on `channels` x `chips` single-die chips whose
/// channels move `mts` MB/s; page-mapped, 16 MiB.
fn array(channels: u32, chips: u32, mts: f64) -> SimConfig {
    SimConfig {
        ftl: "page".into(),
        device: DeviceOverrides {
            page_bytes: Some(2048),
            pages_per_block: Some(64),
            read_us: Some(50.0),
            program_us: Some(200.0),
            channels: Some(channels),
            chips_per_channel: Some(chips),
            channel_mts: Some(mts),
            ..Default::default()
        },
        capacity: Some("16MiB".into()),
        queue_depth: Some(32),
        ..Default::default()
    }
}

fn sequential(op: Op, pages: u64) -> Vec<Request> {
    (0..pages)
        .map(|p| Request::new(0.0, op, p * 2048, 2048))
        .collect()
}

fn mb_per_s(cfg: &SimConfig, op: Op) -> f64 {
    let mut cfg = cfg.clone();
    if op == Op::Read {
        cfg.precondition = Precondition::Full;
    }
    let r = run_requests(&cfg, sequential(op, 8192)).unwrap();
    check_limits(&r);
    r.num("throughput.mb_per_s")
}

/// Utilization is a share of the span, queue depth and response times are consistent (Little's law).
fn check_limits(r: &Report) {
    for key in [
        "utilization.die.mean",
        "utilization.die.max",
        "utilization.channel.mean",
        "utilization.channel.max",
    ] {
        let u = r.num(key);
        assert!((0.0..=1.0).contains(&u), "{key} = {u}");
    }
    let (reads, writes) = (
        r.count("response_us.read.count") as f64,
        r.count("response_us.write.count") as f64,
    );
    // The sum of the response times of each kind (a kind with no request has no mean).
    let total = |n: f64, key: &str| if n > 0.0 { n * r.num(key) } else { 0.0 };
    let mean_response = (total(reads, "response_us.read.mean")
        + total(writes, "response_us.write.mean"))
        / (reads + writes);
    let little = r.num("throughput.iops") / 1e6 * mean_response;
    let depth = r.num("queue.depth.mean");
    assert!(
        (depth - little).abs() <= 0.01 * little,
        "Little's law: mean depth {depth} vs throughput x response {little}"
    );
}

fn within(got: f64, want: f64, share: f64) {
    assert!(
        (got - want).abs() <= share * want,
        "{got} is not within {}% of {want}",
        share * 100.0
    );
}

#[test]
fn sequential_writes_run_at_the_dies_bound_or_the_channels() {
    // 4 dies on 2 fast channels (2,048 MT/s: a page moves in 1 us): the dies bound it, 4 x 2 KiB / 200 us.
    within(
        mb_per_s(&array(2, 2, 2048.0), Op::Write),
        4.0 * 2048.0 / 200.0,
        0.02,
    );
    // 8 dies on 1 slow channel (10 MT/s): the channel bounds it, 10 MB/s.
    within(mb_per_s(&array(1, 8, 10.0), Op::Write), 10.0, 0.02);
}

#[test]
fn sequential_reads_run_at_the_dies_bound_or_the_channels() {
    within(
        mb_per_s(&array(2, 2, 20480.0), Op::Read),
        4.0 * 2048.0 / 50.0,
        0.02,
    );
    within(mb_per_s(&array(1, 8, 10.0), Op::Read), 10.0, 0.02);
}

#[test]
fn multi_plane_programs_double_the_dies_bound() {
    // 2 dies of 2 planes on 2 fast channels (a page moves in 1 us), writes of 8 pages: each die gets two
    // pairs of pages at one offset on its two planes, each pair one multi-plane program of 2 x 1 us transfer
    // and 200 us array, so 2 dies x 2 planes x 2 KiB every 202 us.
    let mut cfg = array(2, 1, 2048.0);
    cfg.device.planes_per_die = Some(2);
    let pages: u64 = 8192;
    let writes = (0..pages / 8)
        .map(|i| Request::new(0.0, Op::Write, i * 8 * 2048, 8 * 2048))
        .collect();
    let r = run_requests(&cfg, writes).unwrap();
    check_limits(&r);
    within(
        r.num("throughput.mb_per_s"),
        2.0 * 2.0 * 2048.0 / 202.0,
        0.02,
    );
}

#[test]
fn more_dies_serve_a_loaded_trace_faster() {
    // Financial1 with arrivals 20 times as fast: queueing on one die, less on 16.
    let run_on = |chips: u32| {
        let cfg = SimConfig {
            ftl: "page".into(),
            preset: Some("mlc-k9gag08".into()),
            device: DeviceOverrides {
                chips_per_channel: Some(chips),
                ..Default::default()
            },
            time_scale: Some(0.05),
            wrap: true,
            capacity: Some("1GiB".into()),
            ..Default::default()
        };
        let trace = real("umass_financial1_first10k.ssdsim.ascii");
        let r = run(&cfg, trace.to_str().unwrap(), &mut |_| true).unwrap();
        check_limits(&r);
        r
    };
    let (one, many) = (run_on(1), run_on(16));
    assert!(one.num("response_us.write.p99") > 2.0 * many.num("response_us.write.p99"));
    // Service time (the serial sum charged to each request) does not depend on the dies; queueing does.
    assert_eq!(
        one.num("latency_us.read.mean"),
        many.num("latency_us.read.mean")
    );
    assert!(one.num("response_us.read.mean") >= one.num("latency_us.read.mean"));
}

#[test]
fn the_single_chip_has_no_array_keys_and_the_same_counts_with_queueing_on() {
    let mut cfg = array(1, 1, 100.0);
    cfg.queue_depth = None;
    let requests = sequential(Op::Write, 512);
    let off = run_requests(&cfg, requests.clone()).unwrap();
    assert!(off.get("response_us.write.mean").is_none());
    cfg.queue_depth = Some(1);
    let on = run_requests(&cfg, requests).unwrap();
    assert_eq!(on.get("flash.page_writes"), off.get("flash.page_writes"));
    assert_eq!(on.get("time_us.total"), off.get("time_us.total"));
    // One die, one request at a time: the response is the service time plus the page's transfer (20.48 us).
    within(
        on.num("response_us.write.mean"),
        off.num("latency_us.write.mean") + 20.48,
        1e-9,
    );
}

/// The keys of a serial report that differ with the timeline on: the simulator's own speed, and the configuration
/// as resolved (it says the queue depth).
const NOT_COUNTS: [&str; 2] = ["sim.", "config.resolved"];

/// On one die, the timeline on (queueing at depth 1) and off give every scheme, under its defaults and its
/// stress variants, the same report but for the array's own keys and the simulator's speed: every count,
/// serial time and scheme figure. Off, a scheme may issue a merge's operations in another order
/// (`Device::may_reorder`: the replacement block scheme's spare reads a block at a time, then its copies;
/// NFTL's fold's copies after its scan); on, it keeps the order it describes, whose times the timeline
/// needs. A reordering that dropped or added one operation, or moved a cache's hit, fails here.
#[test]
fn every_scheme_counts_the_same_on_one_die_with_the_timeline_on_or_off() {
    for scheme in SCHEMES {
        let mut variants = vec![serde_json::json!({})];
        variants.extend((scheme.stress_variants)());
        for params in variants {
            let mut cfg = SimConfig {
                ftl: scheme.name.into(),
                params: params.clone(),
                device: DeviceOverrides {
                    pages_per_block: Some(8),
                    ..Default::default()
                },
                capacity: Some(format!("{}", 128 * 512)),
                ..Default::default()
            };
            let requests = mixed(3000);
            let off = run_requests(&cfg, requests.clone()).unwrap().flatten();
            cfg.queue_depth = Some(1);
            let on = run_requests(&cfg, requests).unwrap().flatten();
            let what = format!("{} {params}", scheme.name);
            let counted: Vec<_> = off
                .iter()
                .filter(|(key, _)| !NOT_COUNTS.iter().any(|c| key.starts_with(c)))
                .collect();
            for (key, value) in &counted {
                assert_eq!(on.get(*key), Some(*value), "{what}: {key}");
            }
            assert!(counted.len() > 50, "{what}: {} keys", counted.len());
            let erases = off["flash.erases"].as_u64().unwrap();
            assert!(erases > 10, "{what}: {erases} erases");
        }
    }
}

#[test]
fn response_times_are_read_to_the_figures_latencies_are() {
    // One die, one request at a time, a channel that takes no time: each response is the request's service
    // time, so the two distributions are one and must read alike. Response percentiles were a bucket's edge
    // (p50 1600.511 where the latency's read 1600).
    let mut cfg = array(1, 1, 100.0);
    cfg.device.channel_mts = None;
    cfg.queue_depth = Some(1);
    // Without arrival times: a closed loop, so no request waits for another.
    let untimed = mixed(3000)
        .into_iter()
        .map(|r| Request { time_us: 0.0, ..r });
    let r = run_requests(&cfg, untimed.collect()).unwrap();
    for kind in ["read", "write"] {
        assert!(r.count(&format!("latency_us.{kind}.count")) > 300, "{kind}");
        for q in ["p50", "p99"] {
            let (response, latency) = (
                format!("response_us.{kind}.{q}"),
                format!("latency_us.{kind}.{q}"),
            );
            assert_eq!(r.num(&response), r.num(&latency), "{response}");
        }
        within(
            r.num(&format!("response_us.{kind}.max")),
            r.num(&format!("latency_us.{kind}.max")),
            1e-12,
        );
        // The CDF's last point is the exact maximum.
        let cdf = r.get(&format!("response_us.{kind}.cdf")).unwrap();
        let last = cdf.as_array().unwrap().last().unwrap();
        assert_eq!(
            last[0].as_f64(),
            Some(r.num(&format!("response_us.{kind}.max")))
        );
        assert_eq!(last[1].as_f64(), Some(1.0));
    }
}

#[test]
fn every_scheme_keeps_its_data_through_power_cuts_on_a_2x2_array() {
    for scheme in SCHEMES {
        let cfg = SimConfig {
            ftl: scheme.name.into(),
            device: DeviceOverrides {
                pages_per_block: Some(2),
                channels: Some(2),
                dies_per_chip: Some(2),
                ..Default::default()
            },
            capacity: Some(format!("{}", 128 * 512)),
            queue_depth: Some(4),
            ..Default::default()
        };
        let requests = mixed(3000);
        let r = run_requests(&cfg, requests.clone())
            .unwrap_or_else(|e| panic!("{} on a 2x2 array: {e}", scheme.name));
        assert_eq!(r.count("config.pages_per_block"), 8, "{}", scheme.name);
        check_limits(&r);
        let cut = SimConfig {
            power_cuts: 20,
            ..cfg.clone()
        };
        let r = run_requests(&cut, requests)
            .unwrap_or_else(|e| panic!("{} with power cuts on a 2x2 array: {e}", scheme.name));
        // A cut that loses the write in flight shortens the run: a few planned cuts may not land.
        assert!(r.count("power.cuts") >= 15, "{}", scheme.name);
        assert_eq!(
            r.count("power.cuts_survived"),
            r.count("power.cuts"),
            "{}",
            scheme.name
        );
    }
}

#[test]
fn bad_array_settings_say_what_is_wrong_and_how_to_fix_it() {
    let mut cfg = array(0, 2, -5.0);
    cfg.queue_depth = Some(0);
    cfg.time_scale = Some(f64::NAN);
    let err = run_requests(&cfg, sequential(Op::Write, 4))
        .map(|_| ())
        .unwrap_err()
        .to_string();
    for says in ["channels=0", "e.g. channels=1", "channel_mts=-5"] {
        assert!(err.contains(says), "{says}: {err}");
    }
    let mut cfg = array(1, 1, 100.0);
    cfg.queue_depth = Some(0);
    cfg.time_scale = Some(-1.0);
    let err = run_requests(&cfg, sequential(Op::Write, 4))
        .map(|_| ())
        .unwrap_err()
        .to_string();
    for says in ["queue_depth=0", "time_scale=-1", "e.g. time_scale=1"] {
        assert!(err.contains(says), "{says}: {err}");
    }
    let mut cfg = array(8, 8, 100.0);
    cfg.device.dies_per_chip = Some(8);
    cfg.device.planes_per_die = Some(16);
    let err = run_requests(&cfg, sequential(Op::Write, 4))
        .map(|_| ())
        .unwrap_err()
        .to_string();
    // The largest factor, lowered to what fits beside the others.
    assert!(
        err.contains("planes_per_die=16 makes 8 x 8 x 8 x 16 = 8,192 planes")
            && err.contains("more than the 4,096 an array may have")
            && err.ends_with("e.g. planes_per_die=8"),
        "{err}"
    );
}

#[test]
fn mqsim_default_stripes_128_planes_and_shrinks_with_blocks_per_plane() {
    let spec = ftlsim_core::config::DeviceSpec::resolve(
        Some("mqsim-default"),
        &DeviceOverrides {
            blocks_per_plane: Some(4),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(spec.array.units(), 128);
    assert_eq!(spec.scheme_pages_per_block(), 256 * 128);
    // 4 blocks per plane x 128 planes x 256 pages x 8 KiB = 1 GiB.
    assert_eq!(spec.preset_capacity_bytes, Some(1 << 30));
    let err = ftlsim_core::config::DeviceSpec::resolve(
        Some("mqsim-default"),
        &DeviceOverrides {
            blocks_per_plane: Some(0),
            ..Default::default()
        },
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("blocks_per_plane=0 must be from 1"), "{err}");
    // With a capacity too, the capacity sized the device and the echo stated blocks per plane that did not run.
    let cfg = SimConfig {
        preset: Some("mqsim-default".into()),
        device: DeviceOverrides {
            blocks_per_plane: Some(2),
            channels: Some(2),
            chips_per_channel: Some(1),
            ..Default::default()
        },
        capacity: Some("100MiB".into()),
        ..Default::default()
    };
    let err = run_requests(&cfg, vec![]).unwrap_err().to_string();
    assert!(
        err.contains("blocks_per_plane=2 is given with a capacity (100MiB), which sizes the device too: give one"),
        "{err}"
    );
    // The channel's timing as it ran is in the report: the preset's 333 MT/s x 1 byte, or an override.
    let cfg = SimConfig {
        capacity: None,
        ..cfg
    };
    let r = run_requests(&cfg, mixed(100)).unwrap();
    assert_eq!(r.num("array.channel_mb_per_s"), 333.0);
    assert_eq!(r.num("array.command_us"), 0.0);
    let mut faster = cfg.clone();
    (faster.device.channel_mts, faster.device.channel_width_bytes) = (Some(100.0), Some(2));
    faster.device.command_us = Some(0.5);
    let r = run_requests(&faster, mixed(100)).unwrap();
    assert_eq!(r.num("array.channel_mb_per_s"), 200.0);
    assert_eq!(r.num("array.command_us"), 0.5);
}

/// 20 writes at `start` and one a second later, on one die taking a request at a time: the burst waits in the
/// host, whether it is at the trace's start (time 0) or a microsecond after.
#[test]
fn a_burst_at_time_zero_of_a_timed_trace_waits_in_the_host_as_one_a_moment_later_does() {
    let mut cfg = array(1, 1, 100.0);
    cfg.queue_depth = Some(1);
    let burst = |start: f64| -> Report {
        let mut requests: Vec<Request> = (0..20)
            .map(|p| Request::new(start, Op::Write, p * 2048, 2048))
            .collect();
        requests.push(Request::new(start + 1e6, Op::Write, 0, 2048));
        run_requests(&cfg, requests).unwrap()
    };
    let (at_zero, later) = (burst(0.0), burst(1.0));
    for key in [
        "response_us.write.mean",
        "response_us.write.max",
        "queue.depth.max",
    ] {
        within(at_zero.num(key), later.num(key), 1e-9);
    }
    // Service is 220.48 us (the page's transfer, then its program): the 20th waits for the 19 before it.
    within(at_zero.num("response_us.write.max"), 20.0 * 220.48, 1e-9);
    assert_eq!(at_zero.num("queue.depth.max"), 20.0);
    assert_eq!(at_zero.count("array.timed_requests"), 21);
    // A source without times is a closed loop: one request in the system at a time.
    let untimed = run_requests(&cfg, sequential(Op::Write, 20)).unwrap();
    assert_eq!(untimed.count("array.timed_requests"), 0);
    assert_eq!(untimed.num("queue.depth.max"), 1.0);
}

/// Idle time is a gap between arrivals as the array sees them, x time_scale: Financial1 compressed to one
/// instant has no idle time, where MAST merges in its gaps at the trace's own pace.
#[test]
fn idle_gaps_are_those_of_the_scaled_arrivals() {
    let run_at = |time_scale: f64| {
        let cfg = SimConfig {
            ftl: "mast".into(),
            device: DeviceOverrides {
                channels: Some(2),
                dies_per_chip: Some(2),
                placement: Some("per-die".into()),
                ..Default::default()
            },
            time_scale: Some(time_scale),
            wrap: true,
            capacity: Some("64MiB".into()),
            ..Default::default()
        };
        let trace = real("umass_financial1_first10k.ssdsim.ascii");
        run(&cfg, trace.to_str().unwrap(), &mut |_| true).unwrap()
    };
    assert!(run_at(1.0).num("time_us.idle") > 0.0);
    assert_eq!(run_at(0.0).num("time_us.idle"), 0.0);
}
