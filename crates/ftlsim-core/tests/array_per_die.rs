//! The per-die placement (`ftl/per_die.rs`): a scheme instance per die, pages routed by address. A
//! timeline worked by hand on two dies, every scheme's integrity and power cuts per die on a 2 x 2 array, one
//! die giving exactly the striped counts, and a bad `placement` refused with a fix.

mod common;

use common::{golden_array, mixed, GOLDEN_TIMING as TIMING};
use ftlsim_core::addr::{Lpn, Pbn, Ppn};
use ftlsim_core::array::{FlashOp, Kind, Span, Timeline};
use ftlsim_core::config::{ConfigError, DeviceOverrides, Geometry};
use ftlsim_core::device::{Device, FlashError};
use ftlsim_core::error::SimError;
use ftlsim_core::ftl::SCHEMES;
use ftlsim_core::report::Report;
use ftlsim_core::sim::{ram, run_requests, SimConfig};

/// Two dies on one channel, placed per die: 2 partitions of 4 blocks of 4 pages, die `d` holding the
/// partition's pages `16 d` to `16 d + 15`.
fn two_dies() -> Device {
    let g = Geometry {
        page_bytes: 100,
        spare_bytes: 10,
        pages_per_block: 4,
        logical_blocks: 4,
        sequential_program: true,
    };
    let spec = golden_array(1, 2, 1);
    let mut t = Timeline::new(spec, &TIMING, 100, 10, 4, 8, 1.0);
    t.keep_spans();
    let mut dev = Device::new("test", g, 8, TIMING);
    dev.set_timeline(Some(Box::new(t)));
    dev.split_into_partitions(2);
    dev
}

fn timeline(dev: &mut Device) -> &mut Timeline {
    dev.timeline_mut().unwrap()
}

fn spans(dev: &mut Device) -> Vec<(FlashOp, u32, f64, f64)> {
    dev.timeline_mut()
        .unwrap()
        .spans()
        .iter()
        .map(
            |&Span {
                 op,
                 die,
                 start,
                 end,
                 ..
             }| (op, die, start, end),
        )
        .collect()
}

#[test]
fn a_gc_on_die_0_delays_no_read_on_die_1() {
    use FlashOp::*;
    let mut dev = two_dies();
    // A two-page write at 10 us: one page on each die.
    timeline(&mut dev).begin_request(Kind::Write, Some(10.0), 200);
    dev.enter_partition(0);
    dev.program(Ppn(0), 1, Lpn(0)).unwrap();
    dev.enter_partition(1);
    dev.program(Ppn(0), 2, Lpn(0)).unwrap();
    let write = timeline(&mut dev).end_request();
    // A write at 300 us whose die-0 instance collects block 0 first: copies page 0 to block 1, erases block 0,
    // then programs its page.
    timeline(&mut dev).begin_request(Kind::Write, Some(300.0), 100);
    dev.enter_partition(0);
    dev.copy(Ppn(0), Ppn(4)).unwrap();
    dev.erase(Pbn(0)).unwrap();
    dev.program(Ppn(5), 3, Lpn(1)).unwrap();
    let collecting = timeline(&mut dev).end_request();
    // A read at 600 us of the page on die 1, while die 0 erases.
    timeline(&mut dev).begin_request(Kind::Read, Some(600.0), 100);
    dev.enter_partition(1);
    assert_eq!(dev.read(Ppn(0)).unwrap().token, Some(2));
    let read = timeline(&mut dev).end_request();
    assert_eq!(
        spans(&mut dev),
        vec![
            // Page 0 of each die: die 0's moves 10-20 and programs until 220; die 1's waits for the channel,
            // moves 20-30 and programs until 230, at the same time as die 0's.
            (Program, 0, 10.0, 220.0),
            (Program, 1, 20.0, 230.0),
            // The collection, all on die 0: the copy's read 300-350 and transfer until 360, its program
            // (transfer 360-370) until 570, the erase until 1,570, the write's own program until 1,780.
            (Read, 0, 300.0, 360.0),
            (Program, 0, 360.0, 570.0),
            (Erase, 0, 570.0, 1570.0),
            (Program, 0, 1570.0, 1780.0),
            // The read on die 1 starts when it arrives: its service time alone (a striped erase would
            // have held die 1 too, until 1,570).
            (Read, 1, 600.0, 660.0),
        ]
    );
    assert_eq!([write, collecting, read], [220.0, 1480.0, 60.0]);
    // Die 1's partition starts at chip block 4: its page 0 is the chip's page 16.
    assert_eq!(dev.chip().peek(Ppn(16)).token, Some(2));
    assert_eq!(dev.chip().peek(Ppn(4)).token, Some(1));
}

#[test]
fn a_page_beyond_the_partition_is_refused_not_written_on_the_next_die() {
    let mut dev = two_dies();
    dev.enter_partition(0);
    assert_eq!(dev.physical_blocks(), 4);
    let err = dev.program(Ppn(16), 1, Lpn(0)).unwrap_err();
    assert!(matches!(err, FlashError::NandRule { .. }), "{err}");
    assert_eq!(dev.chip().peek(Ppn(16)).token, None);
}

#[test]
fn a_run_of_copies_per_die_is_timed_and_placed_as_the_copies_one_by_one() {
    use ftlsim_core::nand::OpClass;
    // Die 1's block 0 holds 3 pages; a collection copies them, in another order, to its block 1 while die 0
    // (on the same channel) programs: once as a run in one call, once copy by copy.
    let (mut at_once, mut one_by_one) = (two_dies(), two_dies());
    let from = [Ppn(2), Ppn(0), Ppn(1)];
    for (dev, run) in [(&mut at_once, true), (&mut one_by_one, false)] {
        timeline(dev).begin_request(Kind::Write, Some(10.0), 300);
        dev.enter_partition(1);
        for p in 0..3 {
            dev.program(Ppn(p), 10 + p as u64, Lpn(p)).unwrap();
        }
        timeline(dev).end_request();
        timeline(dev).begin_request(Kind::Write, Some(20.0), 100);
        dev.enter_partition(0);
        dev.program(Ppn(0), 1, Lpn(9)).unwrap();
        dev.enter_partition(1);
        if run {
            assert!(dev.copy_run(OpClass::Data, &from, Ppn(4)));
        } else {
            for (i, &p) in from.iter().enumerate() {
                dev.copy(p, Ppn(4 + i as u32)).unwrap();
            }
        }
        timeline(dev).end_request();
    }
    let spans_at_once = spans(&mut at_once);
    assert_eq!(spans_at_once, spans(&mut one_by_one));
    assert_eq!(spans_at_once.len(), 3 + 1 + 2 * 3);
    assert!(
        spans_at_once[4..].iter().all(|s| s.1 == 1),
        "every copy on die 1"
    );
    assert_eq!(at_once.counts(), one_by_one.counts());
    // The copies are on die 1's chip pages (its partition from chip page 16): block 1 is chip pages 20-23.
    for (i, token) in [12, 10, 11].into_iter().enumerate() {
        let ppn = Ppn(20 + i as u32);
        assert_eq!(at_once.chip().peek(ppn), one_by_one.chip().peek(ppn));
        assert_eq!(at_once.chip().peek(ppn).token, Some(token));
    }
    assert_eq!(
        at_once.chip().peek(Ppn(4)).token,
        None,
        "not die 0's block 1"
    );
    // A run to a page beyond the partition (die 0's 16 pages end at 15) is refused, nothing done: the copies
    // one by one meet the broken rule.
    let counts = at_once.counts();
    at_once.enter_partition(0);
    assert!(!at_once.copy_run(OpClass::Data, &[Ppn(0)], Ppn(16)));
    assert_eq!(at_once.counts(), counts);
    assert_eq!(
        at_once.chip().peek(Ppn(16)).token,
        Some(10),
        "die 1's page 0 untouched"
    );
    let err = at_once.copy(Ppn(0), Ppn(16)).unwrap_err();
    assert!(matches!(err, FlashError::NandRule { .. }), "{err}");
}

#[test]
fn a_run_of_spare_reads_per_die_is_timed_as_the_reads_one_by_one() {
    use ftlsim_core::addr::Opt;
    // Die 1's block 1 holds 3 pages; a merge reads the spare areas of its pages 1 to 3 while die 0 (on the
    // same channel) programs: once as a run in one call, once read by read.
    let (mut at_once, mut one_by_one) = (two_dies(), two_dies());
    let mut seen = Vec::new();
    for (dev, run) in [(&mut at_once, true), (&mut one_by_one, false)] {
        timeline(dev).begin_request(Kind::Write, Some(10.0), 300);
        dev.enter_partition(1);
        for p in 0..3 {
            dev.program(Ppn(4 + p), 10 + p as u64, Lpn(p)).unwrap();
        }
        timeline(dev).end_request();
        timeline(dev).begin_request(Kind::Write, Some(20.0), 100);
        dev.enter_partition(0);
        dev.program(Ppn(0), 1, Lpn(9)).unwrap();
        dev.enter_partition(1);
        let mut lpns = [Opt::NONE; 3];
        if run {
            dev.read_spare_lpns(Pbn(1), 1..4, &mut lpns).unwrap();
        } else {
            for (o, lpn) in (1..4).zip(&mut lpns) {
                *lpn = dev.read_spare(Ppn(4 + o)).unwrap().lpn;
            }
        }
        timeline(dev).end_request();
        seen.push(lpns);
    }
    assert_eq!(seen[0], [Opt::some(Lpn(1)), Opt::some(Lpn(2)), Opt::NONE]);
    assert_eq!(seen[0], seen[1]);
    let spans_at_once = spans(&mut at_once);
    assert_eq!(spans_at_once, spans(&mut one_by_one));
    assert_eq!(spans_at_once.len(), 3 + 1 + 3);
    assert!(
        spans_at_once[4..]
            .iter()
            .all(|s| s.0 == FlashOp::SpareRead && s.1 == 1),
        "every spare read on die 1"
    );
    assert_eq!(at_once.counts(), one_by_one.counts());
}

/// `scheme` on 128 pages of 512 B, 2 a block, on `channels` x `dies` dies placed as `placement` says.
fn config(scheme: &str, channels: u32, dies: u32, placement: Option<&str>) -> SimConfig {
    SimConfig {
        ftl: scheme.into(),
        device: DeviceOverrides {
            pages_per_block: Some(2),
            channels: Some(channels),
            dies_per_chip: Some(dies),
            placement: placement.map(str::to_string),
            ..Default::default()
        },
        capacity: Some(format!("{}", 128 * 512)),
        ..Default::default()
    }
}

#[test]
fn every_scheme_keeps_its_data_per_die_on_a_2x2_array() {
    for scheme in SCHEMES {
        let cfg = SimConfig {
            queue_depth: Some(4),
            ..config(scheme.name, 2, 2, Some("per-die"))
        };
        let requests = mixed(3000);
        let r = run_requests(&cfg, requests.clone())
            .unwrap_or_else(|e| panic!("{} per die on a 2x2 array: {e}", scheme.name));
        // Each instance's block is a physical block, not a stripe; four of them share the spare.
        assert_eq!(r.count("config.pages_per_block"), 2, "{}", scheme.name);
        assert_eq!(r.count("config.physical_blocks") % 4, 0, "{}", scheme.name);
        assert!(r.count("host.read_pages") > 1000, "{}", scheme.name);
        assert!(
            r.count("flash.erases") > 0,
            "{}: no block erased",
            scheme.name
        );
        // Every die works: no die idles while another takes every page.
        assert!(
            r.num("utilization.die.mean") > 0.3 * r.num("utilization.die.max"),
            "{}: die utilization mean {} max {}",
            scheme.name,
            r.num("utilization.die.mean"),
            r.num("utilization.die.max")
        );
        if scheme.mount.is_none() {
            continue;
        }
        let cut = SimConfig {
            power_cuts: 20,
            mount_at_end: true,
            ..cfg.clone()
        };
        let r = run_requests(&cut, requests)
            .unwrap_or_else(|e| panic!("{} with power cuts per die: {e}", scheme.name));
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
fn the_ram_breakdown_is_the_runs_for_either_placement() {
    // `ram` (the `ftlsim ram` command) builds the scheme as a run does: per die, an instance per die's share
    // of the device, summed; it once built one instance for the whole device.
    for scheme in SCHEMES {
        for placement in [None, Some("per-die")] {
            let cfg = config(scheme.name, 2, 2, placement);
            let items: u64 = ram(&cfg).unwrap().iter().map(|i| i.bytes).sum();
            let r = run_requests(&cfg, mixed(200)).unwrap();
            assert_eq!(
                items,
                r.count("ram.total_bytes"),
                "{} {placement:?}",
                scheme.name
            );
        }
    }
}

#[test]
fn bad_blocks_are_skipped_and_replaced_per_die() {
    // Factory bad blocks, and an endurance of half the most-erased block's count on a perfect chip (blocks
    // wear out mid-trace), on 4 dies: a program or erase of a bad block is a NAND-rule error and every read
    // is checked, so a clean run is the proof.
    for scheme in ["page", "dftl", "fast", "nftl"] {
        let mut cfg = config(scheme, 2, 2, Some("per-die"));
        let most = run_requests(&cfg, mixed(6000))
            .unwrap()
            .count("erase_count.max");
        cfg.device.bad_block_ratio = Some(0.05);
        cfg.device.endurance = Some((most / 2).max(1) as u32);
        cfg.device.bad_block_reserve = Some(300);
        cfg.power_cuts = 10;
        let r = run_requests(&cfg, mixed(6000)).unwrap_or_else(|e| panic!("{scheme}: {e}"));
        assert!(r.count("bad_blocks.factory") > 0, "{scheme}");
        assert!(r.count("bad_blocks.grown") > 0, "{scheme}");
        assert_eq!(
            r.count("power.cuts_survived"),
            r.count("power.cuts"),
            "{scheme}"
        );
    }
}

/// Every figure of a report but those that name the run's options or time the simulator itself.
fn figures(r: &Report) -> Vec<(String, serde_json::Value)> {
    r.flatten()
        .into_iter()
        .filter(|(k, _)| !k.starts_with("config.") && !k.starts_with("sim."))
        .collect()
}

#[test]
fn per_die_on_one_die_counts_what_striped_counts() {
    for scheme in SCHEMES {
        let requests = mixed(3000);
        let striped = run_requests(&config(scheme.name, 1, 1, None), requests.clone()).unwrap();
        let per_die = run_requests(&config(scheme.name, 1, 1, Some("per-die")), requests).unwrap();
        assert!(striped.count("flash.erases") > 0, "{}", scheme.name);
        assert_eq!(figures(&per_die), figures(&striped), "{}", scheme.name);
        assert_eq!(
            per_die.get("config.physical_blocks"),
            striped.get("config.physical_blocks")
        );
    }
}

#[test]
fn a_bad_placement_is_refused_with_the_valid_ones() {
    let err = run_requests(&config("page", 2, 1, Some("per_die")), mixed(10)).unwrap_err();
    let SimError::Config(ConfigError::Invalid { problems, .. }) = &err else {
        panic!("not a structured config error: {err:?}");
    };
    assert_eq!(problems.len(), 1, "{err}");
    let p = &problems[0];
    assert_eq!(p.key, "placement");
    assert_eq!(p.value, "per_die");
    assert!(p.expected.contains("striped") && p.expected.contains("per-die"));
    assert_eq!(p.suggestion.as_deref(), Some("per-die"));
    assert!(err.to_string().contains("e.g. placement=per-die"), "{err}");
}

#[test]
fn block_erases_count_the_physical_blocks_each_placement_erases() {
    // 2 channels x 2 dies x 2 planes: a striped erase is a block on each of the 8 plane-units, an erase per
    // die a block on each of its die's 2 planes.
    let mut cfg = config("fast", 2, 2, None);
    cfg.device.planes_per_die = Some(2);
    let striped = run_requests(&cfg, mixed(3000)).unwrap();
    cfg.device.placement = Some("per-die".into());
    let per_die = run_requests(&cfg, mixed(3000)).unwrap();
    for (r, blocks) in [(&striped, 8), (&per_die, 2)] {
        assert!(r.count("flash.erases") > 0);
        assert_eq!(
            r.count("array.block_erases"),
            r.count("flash.erases") * blocks
        );
        assert_eq!(
            r.count("array.pages_per_block") * blocks,
            r.count("config.pages_per_block")
        );
    }
    assert_eq!(
        striped.count("array.pages_per_block"),
        cfg.device.pages_per_block.unwrap() as u64
    );
}

#[test]
fn after_a_power_cut_on_an_array_no_request_is_served_before_the_mount_ends() {
    // At 20 ms a spare read, the page-mapped scheme's mount (it reads the spare areas of the blocks it
    // scans; its collections read none) takes past half a second on 2 x 2 dies (`mount.array_time_us`).
    // Requests arrive 20 ms apart (50 us stretched 400 times), and without cuts none takes 100 ms. The read
    // or write after a cut arrives within a few tens of ms of it, waits for the mount, and its response time
    // is at least the mount's less that.
    for placement in [None, Some("per-die")] {
        let mut cfg = SimConfig {
            queue_depth: Some(4),
            time_scale: Some(400.0),
            ..config("page", 2, 2, placement)
        };
        cfg.device.spare_read_us = Some(20_000.0);
        let run = |cuts| {
            let cfg = SimConfig {
                power_cuts: cuts,
                ..cfg.clone()
            };
            run_requests(&cfg, mixed(3000)).unwrap()
        };
        let longest = |r: &Report| {
            r.num("response_us.read.max")
                .max(r.num("response_us.write.max"))
        };
        let uncut = run(0);
        assert!(
            longest(&uncut) < 100_000.0,
            "{placement:?}: {}",
            longest(&uncut)
        );
        let cut = run(3);
        assert_eq!(cut.count("power.cuts"), 3, "{placement:?}");
        let mount = cut.num("mount.array_time_us.max");
        assert!(mount > 500_000.0, "{placement:?}: {mount}");
        assert!(
            longest(&cut) > mount - 100_000.0,
            "{placement:?}: {} against {mount}",
            longest(&cut)
        );
    }
}

#[test]
fn a_mount_on_an_array_is_timed_with_the_dies_scanning_at_once() {
    // FAST and BAST mount by reading every page's spare area: 200 spare reads of 15 us on the 100 blocks of
    // 2 pages (3,000 us one after another: `mount.time_us`). On 2 channels of 2 dies, 50 reads a die, each
    // 15 us on its die, then its spare area (16 B) over the channel: a command of 0.5 us and 16 B at 32 MB/s,
    // 1 us. A die's reads follow one another every 16 us. The second die of a channel is ready for its first
    // transfer when the first die's begins, and waits 1 us for it; its reads then end 1 us after the first
    // die's. The mount ends at 50 x 16 + 1 = 801 us, striped (the scan goes round the dies) and per die
    // (each instance scans its die after the last, from power-on too).
    for scheme in ["fast", "bast"] {
        for placement in [None, Some("per-die")] {
            let mut cfg = SimConfig {
                mount_at_end: true,
                ..config(scheme, 2, 2, placement)
            };
            cfg.device.spare_read_us = Some(15.0);
            cfg.device.spare_bytes = Some(16);
            cfg.device.command_us = Some(0.5);
            cfg.device.channel_mts = Some(32.0);
            let r = run_requests(&cfg, mixed(3000)).unwrap();
            let run = format!("{scheme} {placement:?}");
            assert_eq!(r.count("mount.spare_reads"), 200, "{run}");
            assert_eq!(r.num("mount.time_us.max"), 3000.0, "{run}");
            assert_eq!(r.num("mount.array_time_us.max"), 801.0, "{run}");
            assert_eq!(r.num("mount.array_time_us.mean"), 801.0, "{run}");
        }
    }
    // On one chip, with the array model off, there is no array time.
    let r = run_requests(
        &SimConfig {
            mount_at_end: true,
            ..config("fast", 1, 1, None)
        },
        mixed(3000),
    )
    .unwrap();
    assert_eq!(r.count("mount.count"), 1);
    assert!(r.get("mount.array_time_us.max").is_none());
}
