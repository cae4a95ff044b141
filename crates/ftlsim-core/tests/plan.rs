//! The run plan: a configuration resolved once, its requests opened through one `open(plan)`, and the report
//! echoing the plan (what ran).

mod common;

use common::trace_files::temp;
use common::{toy, writes};
use ftlsim_core::ftl::{self, SchemeParams};
use ftlsim_core::request::{Op, Request};
use ftlsim_core::sim::plan::MeasureStart;
use ftlsim_core::sim::{self, open, run_requests, Input, MeasureFrom, RunPlan, SimConfig};
use ftlsim_core::trace::{self, TraceOptions};
use serde_json::json;

#[test]
fn the_plan_resolves_the_spare_once_and_the_report_echoes_it() {
    // A millisecond apart, so that measurement starts at the third.
    let reqs: Vec<Request> = writes(&[0, 1, 2, 3, 0])
        .into_iter()
        .enumerate()
        .map(|(i, r)| Request {
            time_us: 1000.0 * i as f64,
            ..r
        })
        .collect();
    // page sizes its spare by a fraction: 16 logical blocks at 0.25 are 4 extra blocks, on the chip and used.
    let cfg = SimConfig {
        over_provisioning: Some(0.25),
        measure_from: Some(MeasureFrom::Time("1.5ms".into())),
        ..toy("page", json!({}), 4, 16)
    };
    let plan = RunPlan::resolve(&cfg, Input::Memory(&reqs), &mut |_| true).unwrap();
    assert_eq!(
        (plan.scheme.chip_extra_blocks, plan.physical_blocks),
        (4, 20)
    );
    let Some(SchemeParams::Page(page)) = &plan.scheme.params else {
        panic!("page's plan holds page's parameters");
    };
    assert_eq!(page.over_provisioning, 0.25);
    assert_eq!(plan.measure_from, Some(MeasureStart::TimeUs(1500.0)));
    let echo = plan.echo();
    let report = run_requests(&cfg, reqs.clone()).unwrap();
    assert_eq!(report.config.params, echo.params);
    assert_eq!(
        (report.config.physical_blocks, report.config.trace.as_str()),
        (20, "memory")
    );
    // fast takes the extra blocks its 3 log blocks need (4) of a stated spare; the rest stays on the chip, unused.
    let cfg = SimConfig {
        extra_blocks: Some(10),
        ..toy("fast", json!({"log_blocks": 3}), 4, 16)
    };
    let plan = RunPlan::resolve(&cfg, Input::Memory(&reqs), &mut |_| true).unwrap();
    assert_eq!(
        (
            plan.scheme.chip_extra_blocks,
            plan.scheme.scheme_extra_blocks
        ),
        (10, 4)
    );
    let report = run_requests(&cfg, reqs.clone()).unwrap();
    assert_eq!(
        (
            report.config.physical_blocks,
            report.config.scheme_extra_blocks
        ),
        (26, 4)
    );
    // A spare stated by over_provisioning below the scheme's need is said on that key, with the blocks it gave
    // and the least fraction in thousandths that would do: 16 logical blocks at 0.1 are 2 blocks, 3 log blocks
    // need 4, and 16 x 0.188 = 3.008 rounds up to 4.
    let cfg = SimConfig {
        over_provisioning: Some(0.1),
        ..toy("fast", json!({"log_blocks": 3}), 4, 16)
    };
    let Err(e) = RunPlan::resolve(&cfg, Input::Memory(&reqs), &mut |_| true) else {
        panic!("a spare below the need resolved");
    };
    assert!(
        e.to_string().contains(
            "over_provisioning=0.1 gives 2 extra blocks on 16 logical blocks, too few: scheme `fast` needs 4 \
             extra blocks with these parameters"
        ) && e.to_string().ends_with(
            "; e.g. over_provisioning=0.188, or extra_blocks=4 (the blocks themselves)"
        ),
        "{e}"
    );
}

#[test]
fn a_bad_option_is_an_error_when_the_plan_is_resolved_before_any_request() {
    let reqs = writes(&[0]);
    let cfg = SimConfig {
        measure_from: Some(MeasureFrom::Time("soon".into())),
        ..toy("page", json!({}), 4, 16)
    };
    let Err(e) = RunPlan::resolve(&cfg, Input::Memory(&reqs), &mut |_| true) else {
        panic!("measure_from=soon resolved");
    };
    assert!(
        e.to_string()
            .contains("measure_from=soon is not a request number"),
        "{e}"
    );
    let cfg = SimConfig {
        nvram_regions: Some("0-4KiB".into()),
        ..toy("page", json!({}), 4, 16)
    };
    let Err(e) = RunPlan::resolve(&cfg, Input::Memory(&reqs), &mut |_| true) else {
        panic!("regions without an NVRAM resolved");
    };
    assert!(
        e.to_string().contains(
            "needs an NVRAM write cache to keep them in, and the run has none: leave it out, or \
                       nvram=128KiB (to give it one of 128 KiB)"
        ),
        "{e}"
    );
    // Options that would do nothing were accepted without a word: a policy with no NVRAM, torn pages with no
    // power cuts; and a negative idle threshold ran.
    let refused = [
        (
            SimConfig {
                nvram_policy: "lru".into(),
                ..toy("page", json!({}), 4, 16)
            },
            "nvram_policy=lru needs an NVRAM write cache to run in, and the run has none: leave it out, or \
             nvram=128KiB (to give it one of 128 KiB)",
        ),
        (
            SimConfig {
                torn_pages: true,
                ..toy("page", json!({}), 4, 16)
            },
            "torn_pages=true needs power cuts: a page is torn by a power cut during its program; e.g. \
             torn_pages=false, or power_cuts=20 (cut the power 20 times in the run)",
        ),
        (
            SimConfig {
                idle_threshold_us: -1.0,
                ..toy("page", json!({}), 4, 16)
            },
            "idle_threshold_us=-1 must not be negative",
        ),
    ];
    for (cfg, said) in refused {
        let Err(e) = RunPlan::resolve(&cfg, Input::Memory(&reqs), &mut |_| true) else {
            panic!("{said}: resolved");
        };
        assert!(e.to_string().contains(said), "{e}");
    }
    // A trace file's option given for a built-in workload, which it would not change.
    for (option, value, trace) in [
        (
            "writes_only",
            "true",
            TraceOptions {
                writes_only: true,
                ..TraceOptions::default()
            },
        ),
        (
            "device",
            "3",
            TraceOptions {
                device: Some(3),
                ..TraceOptions::default()
            },
        ),
    ] {
        let cfg = SimConfig {
            trace,
            ..SimConfig::default()
        };
        let workload = "uniform:writes=10,read_share=0.5";
        let Err(e) = RunPlan::resolve(&cfg, Input::Trace(workload), &mut |_| true) else {
            panic!("{option} on a workload resolved");
        };
        assert_eq!(
            e.to_string(),
            format!(
                "invalid parameter: {option}={value} applies to trace files, and {workload} is a built-in \
                 workload, made rather than read: drop the option (the workload's own parameters shape it: \
                 ftlsim list)"
            )
        );
    }
}

#[test]
fn a_compacted_trace_opens_placed_on_a_device_of_its_highest_address() {
    // Writes 1 TiB apart, one of them 4 KiB into its extent: three extents, the last request ending at
    // 2 MiB + 4 KiB + 8 KiB once compacted; capacity is that rounded up to a 16 KiB block.
    let text = "W,0,4096\nW,1099511627776,8192\nW,2199023259648,8192\nR,0,512\n";
    let path = temp("plan-compact.csv", text.as_bytes());
    let cfg = SimConfig {
        trace: TraceOptions {
            compact: true,
            ..TraceOptions::default()
        },
        ..SimConfig::default()
    };
    let spec = path.to_str().unwrap();
    let plan = RunPlan::resolve(&cfg, Input::Trace(spec), &mut |_| true).unwrap();
    let g = plan.device.geometry;
    let end = (2 << 20) + 4096 + 8192u64;
    assert_eq!(
        g.logical_bytes(),
        end.div_ceil(g.block_bytes()) * g.block_bytes()
    );
    let read = |mut source: Box<dyn trace::RequestSource>| -> Vec<Request> {
        std::iter::from_fn(|| source.next_request())
            .map(|r| r.unwrap())
            .collect()
    };
    let placed = read(open(&plan).unwrap());
    let offsets: Vec<(Op, u64)> = placed.iter().map(|r| (r.op, r.offset)).collect();
    assert_eq!(
        offsets,
        vec![
            (Op::Write, 0),
            (Op::Write, 1 << 20),
            (Op::Write, (2 << 20) + 4096),
            (Op::Read, 0)
        ]
    );
    // The trace opened alone (its own pre-passes) reads the same; the run reads what the plan placed.
    let alone = trace::open_on(spec, &cfg.trace, g.logical_bytes(), g.page_bytes, 0).unwrap();
    assert_eq!(read(alone), placed);
    let report = sim::run(&cfg, spec, &mut |_| true).unwrap();
    assert_eq!(
        (report.host.requests, report.config.capacity_bytes),
        (4, g.logical_bytes())
    );
}

#[test]
fn the_plan_holds_the_typed_scheme_configuration_that_runs_and_the_report_echoes_it() {
    // fast's log_blocks, given once as JSON, is parsed once into FastParams (lazy_merge at its default) when
    // the plan is resolved; ofast's own default (lazy_merge on) is filled in the same way.
    let reqs = writes(&[0, 1, 2, 3, 0]);
    let cfg = toy("fast", json!({"log_blocks": 3}), 4, 16);
    let plan = RunPlan::resolve(&cfg, Input::Memory(&reqs), &mut |_| true).unwrap();
    let Some(SchemeParams::Fast(fast)) = &plan.scheme.params else {
        panic!("fast's plan holds FastParams");
    };
    assert_eq!((fast.log_blocks, fast.lazy_merge), (3, false));
    let report = run_requests(&cfg, reqs.clone()).unwrap();
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&report.config.params).unwrap(),
        json!({"log_blocks": 3, "lazy_merge": false})
    );
    let resolved: serde_json::Value = serde_json::from_str(&report.config.resolved).unwrap();
    assert_eq!(
        resolved["config"]["params"],
        json!({"log_blocks": 3, "lazy_merge": false})
    );
    let ofast = ftl::parse("ofast", &json!({"log_blocks": 4})).unwrap();
    assert_eq!(
        ofast.to_value(),
        json!({"log_blocks": 4, "lazy_merge": true})
    );
    // A scheme's build refuses another scheme's configuration (a caller's mistake), with an error, not a panic.
    let g = ftlsim_core::config::DeviceSpec::resolve(Some("lee2007"), &Default::default())
        .unwrap()
        .geometry(1 << 20)
        .unwrap();
    let page = ftl::parse("page", &json!({})).unwrap();
    let e = (ftl::scheme("fast").unwrap().build)(&page, &g)
        .err()
        .unwrap();
    assert!(
        e.to_string()
            .contains("scheme `fast` was built from a page::PageParams"),
        "{e}"
    );
}

#[test]
fn a_scheme_parameter_out_of_range_is_a_structured_error_with_key_value_expected_and_suggestion() {
    let reqs = writes(&[0]);
    let cfg = toy("fast", json!({"log_blocks": 1}), 4, 16);
    let Err(e) = RunPlan::resolve(&cfg, Input::Memory(&reqs), &mut |_| true) else {
        panic!("log_blocks=1 resolved");
    };
    let problems = e.invalid();
    assert_eq!(problems.len(), 1, "{e}");
    let p = &problems[0];
    assert_eq!(
        (p.key.as_str(), p.value.as_str(), p.suggestion.as_deref()),
        ("log_blocks", "1", Some("2"))
    );
    assert!(
        p.expected.starts_with("is below 2, the least it can be"),
        "{}",
        p.expected
    );
    assert!(
        e.to_string()
            .starts_with("invalid parameter: scheme `fast`: log_blocks=1 is below 2"),
        "{e}"
    );
    // An unknown key and a wrong type are fields too: the key, the value given and, for a known key, its default.
    let e = ftl::parse("fast", &json!({"log_blocks": "many"}))
        .err()
        .unwrap();
    let p = &e.invalid()[0];
    assert_eq!(
        (p.key.as_str(), p.value.as_str(), p.suggestion.as_deref()),
        ("log_blocks", "many", Some("8"))
    );
    let e = ftl::parse("fast", &json!({"logblocks": 8})).err().unwrap();
    let p = &e.invalid()[0];
    assert_eq!((p.key.as_str(), p.value.as_str()), ("logblocks", "8"));
    assert!(
        p.expected
            .contains("its parameters are: lazy_merge, log_blocks"),
        "{}",
        p.expected
    );
}

/// A device whose requests are all reads, under `writes_only`, keeps none: the run says so of the trace and
/// its filters (it said "capacity 0 must be more than 0 bytes", a capacity nobody gave, or that the device was
/// not in the trace).
#[test]
fn filters_that_keep_no_request_are_said_of_the_trace() {
    let lines: String = (0..8u64)
        .map(|i| {
            let (disk, op) = if i % 2 == 0 {
                (0, "Write")
            } else {
                (1, "Read")
            };
            format!(
                "{},host,{disk},{op},{},4096,100\n",
                128166410318060999 + i,
                i * 4096
            )
        })
        .collect();
    let path = temp("reads-on-1.msr", lines.as_bytes());
    let trace = path.to_string_lossy().to_string();
    let mut cfg = SimConfig::default();
    cfg.trace.writes_only = true;
    cfg.trace.device = Some(1);
    let said = sim::run(&cfg, &trace, &mut |_| true)
        .expect_err("no request left")
        .to_string();
    assert!(
        said.contains(
            "has no write on device 1, and writes_only drops its reads and trims: no request is left to run; \
             keep a device with writes (`ftlsim info --writes-only` lists each device's), or drop writes_only"
        ),
        "{said}"
    );
    cfg.trace.device = None;
    cfg.trace.devices = "1".parse().unwrap();
    let said = sim::run(&cfg, &trace, &mut |_| true)
        .expect_err("no request left")
        .to_string();
    assert!(
        said.contains("device 1 is not in the trace, whose devices are 0")
            && said.contains("(with writes_only, a device of reads alone has no request left)"),
        "{said}"
    );
    let reads = temp("reads.csv", b"R,0,4096\nR,8192,4096\n");
    let mut cfg = SimConfig::default();
    cfg.trace.writes_only = true;
    let said = sim::run(&cfg, &reads.to_string_lossy(), &mut |_| true)
        .expect_err("no request left")
        .to_string();
    assert!(
        said.ends_with(
            "holds only reads and trims, which writes_only drops: no request is left to run; drop \
             writes_only"
        ),
        "{said}"
    );
    let empty = temp("empty.csv", b"op,offset,length\n");
    cfg.trace.writes_only = false;
    // Sniffed too, the header alone tells the format (it said "cannot tell the format").
    for format in ["csv", "auto"] {
        cfg.trace.format = format.into();
        let said = sim::run(&cfg, &empty.to_string_lossy(), &mut |_| true)
            .expect_err("no request")
            .to_string();
        assert!(
            said.ends_with("holds no request, so there is nothing to run"),
            "{format}: {said}"
        );
    }
    // A 0-byte request is a request: at byte 0 it ran into "holds no request" where one further on ran, as both
    // now do, on the device their reach sizes (the least one at byte 0).
    for (name, offset) in [("zero_at_0.csv", 0), ("zero_at_8k.csv", 8192)] {
        let trace = temp(name, format!("op,offset,length\nW,{offset},0\n").as_bytes());
        let r = sim::run(&cfg, &trace.to_string_lossy(), &mut |_| true)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(r.count("host.requests"), 1, "{name}");
        assert_eq!(r.count("host.empty_requests"), 1, "{name}");
        assert_eq!(r.count("host.write_pages"), 0, "{name}");
    }
    // Without writes_only device 1 runs.
    let mut cfg = SimConfig::default();
    cfg.trace.devices = "1".parse().unwrap();
    assert_eq!(
        sim::run(&cfg, &trace, &mut |_| true)
            .unwrap()
            .count("host.read_requests"),
        4
    );
}

/// Past a device that blocks per plane sized, the fix is more of them: a capacity beside them is refused, so
/// the error suggested one that would not run.
#[test]
fn a_request_past_a_device_sized_by_blocks_per_plane_asks_for_more_blocks() {
    let mut cfg = SimConfig {
        preset: Some("mqsim-default".into()),
        ..Default::default()
    };
    cfg.device.blocks_per_plane = Some(2);
    // 2 blocks on each of 128 planes, 256 pages of 8 KiB: 512 MiB; a request ending at 1.5 GiB needs 6.
    let past = vec![Request::new(0.0, Op::Write, (3 << 29) - 8192, 8192)];
    let e = run_requests(&cfg, past).expect_err("past the device");
    let problem = &e.invalid()[0];
    assert_eq!(
        (problem.key.as_str(), problem.suggestion.as_deref()),
        ("blocks_per_plane", Some("6"))
    );
    assert!(
        e.to_string().contains(
            "blocks_per_plane=2 gives the device a logical capacity of 512MiB, which ends before byte \
             1,610,612,736, where the request ends"
        ),
        "{e}"
    );
}

#[test]
fn measure_from_reads_a_request_number_or_a_time_and_names_what_it_takes() {
    let read =
        |v: serde_json::Value| serde_json::from_value::<MeasureFrom>(v).map_err(|e| e.to_string());
    assert_eq!(read(json!(10)), Ok(MeasureFrom::Request(10)));
    assert_eq!(read(json!(10.0)), Ok(MeasureFrom::Request(10)));
    assert_eq!(read(json!("30s")), Ok(MeasureFrom::Time("30s".into())));
    // serde's untagged enum said "data did not match any variant of untagged enum MeasureFrom".
    for (given, shown) in [
        (json!(-1), "-1"),
        (json!(1.5), "1.5"),
        (json!(true), "true"),
    ] {
        let e = read(given).unwrap_err();
        assert_eq!(
            e,
            format!("{shown} is not a request number (e.g. 10000) or a time with a unit (30s, 1500ms, 200us)")
        );
    }
    assert!(read(json!([1]))
        .unwrap_err()
        .contains("expected a request number"));
}
