//! The report's contract: the schema describes every key a run produces (every registered scheme, behind an
//! NVRAM cache or not, with power cuts, bad blocks, mounts and profiles) and no key that no run produces; the
//! cause keys partition time and flash operations for every scheme; wear figures add up to the erases counted;
//! the trace's facts are the file's; and the run options `rmw`, `precondition="trace"` and `measure_from` do
//! what they say, with hand-counted figures.

mod common;

use common::{page, toy, writes};
use ftlsim_core::ftl::SCHEMES;
use ftlsim_core::report::{schema, trace::sha256_of, Report};
use ftlsim_core::request::{Op, Request};
use ftlsim_core::sim::{run, run_requests, MeasureFrom, Precondition, SimConfig};
use ftlsim_core::stats::Cause;
use serde_json::{json, Value};
use std::path::PathBuf;

/// Whether schema key `pattern` names `key`: equal, or equal but for one `<...>` part standing for a
/// non-empty name after a non-empty dotted prefix (`ram.<structure>`): a pattern cannot match every key.
fn names(pattern: &str, key: &str) -> bool {
    let Some((prefix, rest)) = pattern.split_once('<') else {
        return pattern == key;
    };
    let suffix = rest.split_once('>').map_or("", |(_, s)| s);
    assert!(
        prefix.contains('.') && !suffix.contains('<'),
        "schema key `{pattern}`: a `<...>` part needs a dotted prefix and comes once"
    );
    key.len() > prefix.len() + suffix.len() && key.starts_with(prefix) && key.ends_with(suffix)
}

fn hotcold() -> &'static str {
    "hotcold:writes=6000,seed=2,sequential_share=0.2,run_pages=32,idle_every=300,idle_gap_us=5000"
}

fn base(scheme: &str) -> SimConfig {
    SimConfig {
        ftl: scheme.into(),
        capacity: Some("4MiB".into()),
        idle_threshold_us: 1000.0,
        ..Default::default()
    }
}

/// Every scheme on a workload with reads, partial writes, trims, sequential runs and idle gaps, behind an
/// NVRAM cache or not.
fn every_scheme() -> Vec<(String, SimConfig, String)> {
    let mut out = Vec::new();
    for scheme in SCHEMES {
        for nvram in [None, Some("16KiB")] {
            let cfg = SimConfig {
                nvram: nvram.map(str::to_string),
                nvram_policy: if nvram.is_some() { "lru" } else { "metadata" }.into(),
                ..base(scheme.name)
            };
            let name = format!(
                "{}{}",
                scheme.name,
                if nvram.is_some() { "+nvram" } else { "" }
            );
            out.push((name, cfg, hotcold().into()));
        }
    }
    out
}

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// The runs that show every feature's keys besides `every_scheme`'s: power cuts and a mount, bad blocks,
/// profiles, a cache a parameter turns on, a deviation from a paper, and a trace file.
fn every_feature() -> Vec<(String, SimConfig, String)> {
    let with = |name: &str, cfg: SimConfig| (name.to_string(), cfg, hotcold().to_string());
    let mut bad = base("page");
    bad.device.bad_block_ratio = Some(0.02);
    bad.device.endurance = Some(40);
    bad.device.bad_block_reserve = Some(8);
    let mut array = base("page");
    array.device.channels = Some(2);
    array.device.dies_per_chip = Some(2);
    // A mount on the array is timed on it too (`mount.array_time_us.*`).
    array.mount_at_end = true;
    vec![
        with("page+array", array),
        with(
            "page+power",
            SimConfig {
                power_cuts: 5,
                mount_at_end: true,
                torn_pages: true,
                ..base("page")
            },
        ),
        with("page+bad-blocks", bad),
        with(
            "page+profile",
            SimConfig {
                params: json!({"profile": "psu-flashsim"}),
                ..base("page")
            },
        ),
        with(
            "dftl+profile",
            SimConfig {
                params: json!({"profile": "psu-flashsim"}),
                ..base("dftl")
            },
        ),
        with(
            "nftl+page-cache",
            SimConfig {
                params: json!({"page_cache": 8}),
                ..base("nftl")
            },
        ),
        with(
            "mast+ca-floor",
            SimConfig {
                params: json!({"ca_min_share": 0.25}),
                ..base("mast")
            },
        ),
        (
            "page+csv-file".into(),
            base("page"),
            fixture("tiny.csv").to_string_lossy().into_owned(),
        ),
    ]
}

fn run_all(runs: Vec<(String, SimConfig, String)>) -> Vec<(String, Report)> {
    runs.into_iter()
        .map(|(name, cfg, trace)| {
            let r = run(&cfg, &trace, &mut |_| true).unwrap_or_else(|e| panic!("{name}: {e}"));
            (name, r)
        })
        .collect()
}

/// Every key a report emits has a description and a unit in the schema, and every key the schema describes
/// is emitted by some run: over every registered scheme, with and without NVRAM, and every feature.
#[test]
fn the_schema_describes_every_key_every_run_emits_and_nothing_else() {
    let schema = schema();
    let mut problems: Vec<String> = schema
        .iter()
        .filter(|k| k.description.trim().is_empty())
        .map(|k| format!("schema key `{}` has no description", k.key))
        .collect();
    let mut emitted = vec![false; schema.len()];
    for (name, r) in run_all([every_scheme(), every_feature()].concat()) {
        for key in r.flatten().keys() {
            let mut described = false;
            for (i, k) in schema.iter().enumerate() {
                if names(&k.key, key) {
                    (emitted[i], described) = (true, true);
                }
            }
            if !described {
                problems.push(format!(
                    "{name}: key `{key}` has no description in the schema (a scheme declares its own \
                     figures on its registry row, `figures`)"
                ));
            }
        }
    }
    for (k, _) in schema.iter().zip(&emitted).filter(|(_, e)| !**e) {
        problems.push(format!(
            "schema key `{}` is described but no run emits it",
            k.key
        ));
    }
    problems.dedup();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The wear figures are the chip's: each block's erase count summed is every erase counted (both zeroed
/// after preconditioning, so a full device's warm-up is in neither), and the histogram holds every physical
/// block.
#[test]
fn erase_counts_add_up_to_the_erases_counted() {
    // A full 1 MiB device: the run erases, and the counters are zeroed after preconditioning.
    let full = every_scheme().into_iter().map(|(name, cfg, trace)| {
        let cfg = SimConfig {
            capacity: Some("1MiB".into()),
            precondition: Precondition::Full,
            ..cfg
        };
        (name, cfg, trace)
    });
    for (name, r) in run_all(full.collect()) {
        let blocks = r.count("device.physical_blocks");
        let erased = r.count("flash.erases");
        let summed = r.num("erase_count.mean") * blocks as f64;
        assert!(
            (summed - erased as f64).abs() < 1e-6 * erased.max(1) as f64,
            "{name}: erase counts sum to {summed}, {erased} erases counted"
        );
        let histogram: u64 =
            serde_json::from_value::<Vec<u64>>(r.get("erase_count.histogram").unwrap())
                .unwrap()
                .iter()
                .sum();
        assert_eq!(histogram, blocks, "{name}: the histogram holds every block");
        assert!(erased > 0, "{name}: the workload erases");
    }
}

/// The trace's facts come from the file: its format (sniffed), its size and its sha256; a workload has none.
#[test]
fn the_report_records_the_trace_file_and_the_resolved_configuration() {
    let dir = std::env::temp_dir().join(format!("ftlsim-report-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let abc = dir.join("abc");
    std::fs::write(&abc, "abc").unwrap();
    // FIPS 180-2's example: sha256("abc").
    assert_eq!(
        sha256_of(&abc).unwrap(),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
    std::fs::remove_dir_all(&dir).unwrap();

    let csv = fixture("tiny.csv");
    let r = run(&base("page"), &csv.to_string_lossy(), &mut |_| true).unwrap();
    assert_eq!(r.get("config.trace_format"), Some(json!("csv")));
    assert_eq!(
        r.count("config.trace_bytes"),
        std::fs::metadata(&csv).unwrap().len()
    );
    assert_eq!(
        r.get("config.trace_sha256"),
        Some(json!(sha256_of(&csv).unwrap()))
    );
    let resolved: Value =
        serde_json::from_str(r.get("config.resolved").unwrap().as_str().unwrap()).unwrap();
    assert_eq!(resolved["trace"], json!(csv.to_string_lossy()));
    assert_eq!(
        resolved["config"]["trace"]["format"],
        json!("csv"),
        "sniffed"
    );
    assert_eq!(resolved["config"]["capacity"], json!("4MiB"), "as given");
    assert_eq!(
        resolved["config"]["preset"],
        json!("lee2007"),
        "the default"
    );
    assert_eq!(
        resolved["config"]["params"]["victim"],
        json!("greedy"),
        "a default parameter"
    );
    // The resolved configuration runs again to the same figures.
    let again: SimConfig = serde_json::from_value(resolved["config"].clone()).unwrap();
    let r2 = run(&again, &csv.to_string_lossy(), &mut |_| true).unwrap();
    assert_eq!(r2.count("flash.page_writes"), r.count("flash.page_writes"));
    assert_eq!(r2.get("config.resolved"), r.get("config.resolved"));

    let w = run(&base("page"), "uniform:writes=100,seed=1", &mut |_| true).unwrap();
    assert_eq!(w.get("config.trace_format"), Some(json!("workload")));
    assert_eq!(w.get("config.trace_bytes"), Some(Value::Null));
    assert_eq!(w.get("config.trace_sha256"), Some(Value::Null));
}

/// A capacity a trace file's reach sized is not recorded: the repeat sizes it again, to the same bytes on the
/// same trace, and to what it reads under another device filter (it refused the requests past the first
/// run's capacity, which nobody gave).
#[test]
fn a_capacity_sized_by_the_trace_is_sized_again_by_the_repeat() {
    let dir = std::env::temp_dir().join(format!("ftlsim-reach-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let msr = dir.join("two.csv");
    // Disk 0 writes its last 4 KiB below 1 MiB, disk 1 below 8 MiB.
    let lines: String = (0..64u64)
        .map(|i| {
            let (disk, reach) = if i % 2 == 0 {
                (0, 1u64 << 20)
            } else {
                (1, 8 << 20)
            };
            let offset = if i < 2 {
                reach - 4096
            } else {
                (i * 7919 * 4096) % reach
            };
            format!(
                "{},host,{disk},Write,{offset},4096,100\n",
                128166410318060999 + i * 1000
            )
        })
        .collect();
    std::fs::write(&msr, lines).unwrap();
    let trace = msr.to_string_lossy().to_string();
    let on_disk_0 = SimConfig {
        capacity: None,
        ..base("page")
    };
    let mut options = on_disk_0.trace.clone();
    options.device = Some(0);
    let on_disk_0 = SimConfig {
        trace: options,
        ..on_disk_0
    };
    let first = run(&on_disk_0, &trace, &mut |_| true).unwrap();
    assert_eq!(first.count("config.capacity_bytes"), 1 << 20);
    let resolved: Value =
        serde_json::from_str(first.get("config.resolved").unwrap().as_str().unwrap()).unwrap();
    assert_eq!(
        resolved["config"]["capacity"],
        Value::Null,
        "the trace's reach"
    );
    let again: SimConfig = serde_json::from_value(resolved["config"].clone()).unwrap();
    let repeat = run(&again, &trace, &mut |_| true).unwrap();
    assert_eq!(repeat.get("config.resolved"), first.get("config.resolved"));
    assert_eq!(repeat.count("config.capacity_bytes"), 1 << 20);
    assert_eq!(
        repeat.count("flash.page_writes"),
        first.count("flash.page_writes")
    );
    let mut on_disk_1 = again;
    on_disk_1.trace.device = Some(1);
    let other = run(&on_disk_1, &trace, &mut |_| true).unwrap();
    assert_eq!(other.count("config.capacity_bytes"), 8 << 20);
    assert_eq!(other.count("host.write_requests"), 32);
    // A capacity given is recorded as given.
    let mut given = on_disk_1;
    given.capacity = Some("16MiB".into());
    let given = run(&given, &trace, &mut |_| true).unwrap();
    let resolved: Value =
        serde_json::from_str(given.get("config.resolved").unwrap().as_str().unwrap()).unwrap();
    assert_eq!(resolved["config"]["capacity"], json!("16MiB"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn causes_partition_time_and_operations_for_every_scheme() {
    for (name, r) in run_all(every_scheme()) {
        let total = r.num("time_us.total");
        let causes: f64 = Cause::ALL
            .iter()
            .map(|c| r.num(&format!("time_us.cause.{}", c.name())))
            .sum();
        assert!(
            (causes - total).abs() <= 1e-9 * total.max(1.0),
            "{name}: causes sum to {causes}, total is {total}"
        );
        for op in [
            "page_reads",
            "spare_reads",
            "page_writes",
            "spare_writes",
            "erases",
        ] {
            let parts: u64 = Cause::ALL
                .iter()
                .filter(|c| **c != Cause::Nvram)
                .map(|c| r.count(&format!("flash.{op}.{}", c.name())))
                .sum();
            assert_eq!(
                parts,
                r.count(&format!("flash.{op}")),
                "{name}: flash.{op} by cause"
            );
        }
        assert_eq!(
            r.num("time_us.cause.map"),
            r.num("time_us.map"),
            "{name}: map time is the map cause"
        );
        // The idle and flush headings also hold map-page and NVRAM work done then, which are map and nvram
        // causes; what is left is the idle and flush causes.
        for phase in ["idle", "flush"] {
            let (cause, heading) = (
                r.num(&format!("time_us.cause.{phase}")),
                r.num(&format!("time_us.{phase}")),
            );
            assert!(
                cause <= heading + 1e-9,
                "{name}: {phase} cause {cause} > heading {heading}"
            );
        }
    }
}

#[test]
fn merges_inside_gc_are_merge_time_not_gc_time() {
    // NFTL folds inside its GC: time_us.gc and time_us.merges overlap; the causes do not.
    let cfg = toy("nftl", json!({}), 4, 8);
    let mut reqs = Vec::new();
    for round in 0..40u32 {
        for lpn in [1, 5, 9, 13, 17, 21] {
            reqs.push(page(Op::Write, (lpn + round) % 32));
        }
    }
    let r = run_requests(&cfg, reqs).unwrap();
    let (gc, merges) = (r.num("time_us.gc"), r.num("time_us.merges"));
    let (cause_gc, cause_merge) = (r.num("time_us.cause.gc"), r.num("time_us.cause.merge"));
    assert!(r.count("gc.runs") > 0 && r.count("merges.fold") > 0);
    // Folds run inside GC: the old headings count them twice, the causes once.
    assert!(
        cause_gc + cause_merge < gc + merges,
        "{cause_gc} + {cause_merge} vs {gc} + {merges}"
    );
    assert!(cause_gc + cause_merge >= gc.max(merges));
}

#[test]
fn rmw_reads_are_counted_apart_and_can_be_turned_off() {
    // 512 B pages. One full write of page 0, then a 256 B write into it: one old-page read, on the host's behalf.
    let reqs = vec![
        Request::new(0.0, Op::Write, 0, 512),
        Request::new(0.0, Op::Write, 0, 256),
        Request::new(0.0, Op::Read, 0, 512),
    ];
    let cfg = toy("page", json!({}), 4, 8);
    let r = run_requests(&cfg, reqs.clone()).unwrap();
    assert_eq!(r.count("host.rmw_page_reads"), 1);
    assert_eq!(r.count("flash.page_reads.rmw"), 1);
    assert_eq!(r.count("flash.page_reads.host"), 1);
    assert_eq!(r.count("flash.page_reads"), 2);
    let off = SimConfig { rmw: false, ..cfg };
    let r = run_requests(&off, reqs).unwrap();
    assert_eq!(
        (r.count("host.rmw_page_reads"), r.count("flash.page_reads")),
        (0, 1)
    );
    assert_eq!(r.get("config.rmw"), Some(Value::Bool(false)));
}

#[test]
fn reads_of_pages_never_written_are_counted() {
    let reqs = vec![
        page(Op::Write, 1),
        page(Op::Read, 1),
        page(Op::Read, 2),
        page(Op::Read, 3),
    ];
    let r = run_requests(&toy("page", json!({}), 4, 8), reqs).unwrap();
    assert_eq!(r.count("host.unwritten_reads"), 2);
}

#[test]
fn requests_of_no_bytes_are_counted_apart_and_do_nothing() {
    let empty = |op| Request::new(0.0, op, 512, 0);
    let reqs = vec![
        page(Op::Write, 1),
        empty(Op::Write),
        empty(Op::Read),
        empty(Op::Trim),
        page(Op::Read, 1),
    ];
    let r = run_requests(&toy("page", json!({}), 4, 8), reqs).unwrap();
    let kinds = ["read", "write", "trim", "empty"].map(|k| r.count(&format!("host.{k}_requests")));
    assert_eq!((r.count("host.requests"), kinds), (5, [1, 1, 0, 3]));
    assert_eq!(
        (r.count("flash.page_writes"), r.count("flash.page_reads")),
        (1, 1)
    );
}

#[test]
fn trace_warm_up_writes_every_request_once_then_counts_the_replay() {
    // Pages 0..4 written and read: the warm-up writes 0, 1, 2, 3 (the read request too) and 1 again.
    let reqs = vec![
        Request::new(0.0, Op::Write, 0, 1024),
        Request::new(0.0, Op::Read, 1024, 1024),
        Request::new(0.0, Op::Write, 512, 512),
    ];
    let cfg = SimConfig {
        precondition: Precondition::Trace,
        ..toy("page", json!({}), 4, 8)
    };
    let r = run_requests(&cfg, reqs).unwrap();
    assert_eq!(r.count("host.requests"), 3);
    assert_eq!(r.count("host.write_pages"), 3);
    assert_eq!(
        r.count("flash.page_writes"),
        3,
        "only the replay is counted"
    );
    assert_eq!(
        r.count("host.unwritten_reads"),
        0,
        "the warm-up wrote the read pages"
    );
    assert_eq!(r.get("config.precondition"), Some(json!("trace")));
}

#[test]
fn measurement_starts_at_a_request_number_or_a_time() {
    let reqs: Vec<Request> = writes(&[0, 1, 2, 3, 4, 5, 6, 7])
        .into_iter()
        .enumerate()
        .map(|(i, r)| Request {
            time_us: i as f64 * 1000.0,
            ..r
        })
        .collect();
    let base = toy("page", json!({}), 4, 8);
    let by_request = SimConfig {
        measure_from: Some(MeasureFrom::Request(5)),
        ..base.clone()
    };
    let r = run_requests(&by_request, reqs.clone()).unwrap();
    assert_eq!(
        (r.count("host.requests"), r.count("flash.page_writes")),
        (3, 3)
    );
    let by_time = SimConfig {
        measure_from: Some(MeasureFrom::Time("2ms".into())),
        ..base.clone()
    };
    let r = run_requests(&by_time, reqs.clone()).unwrap();
    assert_eq!(r.count("host.requests"), 6, "requests at 2 ms and later");
    let bad = SimConfig {
        measure_from: Some(MeasureFrom::Time("2 fortnights".into())),
        ..base.clone()
    };
    let e = run_requests(&bad, reqs.clone()).unwrap_err().to_string();
    assert!(e.contains("measure_from") && e.contains("30s"), "{e}");
    // A start the trace never reaches is an error, not the whole trace counted as if measured from it.
    let past_end = |from| {
        let cfg = SimConfig {
            measure_from: Some(from),
            ..base.clone()
        };
        run_requests(&cfg, reqs.clone()).unwrap_err().to_string()
    };
    assert_eq!(
        past_end(MeasureFrom::Request(8)),
        "invalid parameter: measure_from=8 is past the end of the trace (it has 8 requests): nothing would \
         be measured; e.g. measure_from=4"
    );
    assert_eq!(
        past_end(MeasureFrom::Time("7001us".into())),
        "invalid parameter: measure_from=7001us is past the end of the trace (its last request is at 7ms): \
         nothing would be measured; e.g. measure_from=3500us"
    );
    let untimed: Vec<Request> = reqs
        .iter()
        .map(|r| Request { time_us: 0.0, ..*r })
        .collect();
    let cfg = SimConfig {
        measure_from: Some(MeasureFrom::Time("1s".into())),
        ..base.clone()
    };
    assert_eq!(
        run_requests(&cfg, untimed).unwrap_err().to_string(),
        "invalid parameter: measure_from=1s is past the end of the trace (its requests have no times: give a \
         number of requests): nothing would be measured; e.g. measure_from=4"
    );
    let last = SimConfig {
        measure_from: Some(MeasureFrom::Request(7)),
        ..base
    };
    assert_eq!(run_requests(&last, reqs).unwrap().count("host.requests"), 1);
}

#[test]
fn spare_capacity_is_stated_once_for_every_scheme() {
    // 16 logical blocks of 4 pages. `page` takes the stated spare as its over-provisioning: 5 extra blocks.
    let reqs = writes(&(0..64).chain(0..64).collect::<Vec<_>>());
    let page5 = SimConfig {
        extra_blocks: Some(5),
        ..toy("page", json!({}), 4, 16)
    };
    let r = run_requests(&page5, reqs.clone()).unwrap();
    assert_eq!(
        (
            r.count("device.physical_blocks"),
            r.count("device.extra_blocks"),
            r.count("device.scheme_extra_blocks")
        ),
        (21, 5, 5)
    );
    // The same as a fraction: ceil(16 x 0.3) = 5 blocks.
    let op = SimConfig {
        over_provisioning: Some(0.3),
        ..toy("page", json!({}), 4, 16)
    };
    assert_eq!(
        run_requests(&op, reqs.clone())
            .unwrap()
            .count("device.extra_blocks"),
        5
    );
    // FAST with 2 log blocks needs 3 extra blocks (2 + the merge block); 8 stated leaves 5 unused on the chip,
    // and the counts are those of the scheme's own 3.
    let fast = toy("fast", json!({"log_blocks": 2}), 4, 16);
    let own = run_requests(&fast, reqs.clone()).unwrap();
    let stated = run_requests(
        &SimConfig {
            extra_blocks: Some(8),
            ..fast.clone()
        },
        reqs.clone(),
    )
    .unwrap();
    assert_eq!(
        (
            own.count("device.extra_blocks"),
            stated.count("device.extra_blocks")
        ),
        (3, 8)
    );
    assert_eq!(stated.count("device.scheme_extra_blocks"), 3);
    assert_eq!(own.count("flash.erases"), stated.count("flash.erases"));
    // Too little spare, both ways of stating it, and an absurd fraction are errors that say what to do.
    let e = run_requests(
        &SimConfig {
            extra_blocks: Some(2),
            ..fast.clone()
        },
        reqs.clone(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("needs 3 extra blocks") && e.contains("extra_blocks=3"),
        "{e}"
    );
    let both = SimConfig {
        extra_blocks: Some(8),
        over_provisioning: Some(0.1),
        ..fast.clone()
    };
    assert!(run_requests(&both, reqs.clone())
        .unwrap_err()
        .to_string()
        .contains("not both"));
    let huge = SimConfig {
        over_provisioning: Some(1e9),
        ..fast
    };
    assert!(run_requests(&huge, reqs)
        .unwrap_err()
        .to_string()
        .contains("from 0 to 1 "));
}
