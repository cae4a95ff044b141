//! The regression fixture: a recorded report for every registered scheme on four workloads (uniform random
//! with reads on full data blocks, hot/cold with sequential runs and idle gaps, a FAT camera, and the Financial1
//! excerpt), plus two NVRAM runs and three DFTL runs with a small CMT (one with cost-benefit victims). The cases
//! follow the registry: a scheme without a recorded report fails here by name. Every key recorded must come back
//! with the same value; new keys may appear. A refactor or a speed-up changes no count. A change made on purpose
//! is re-recorded with `FTLSIM_BLESS=1 cargo test --release -p ftlsim-core --test regression` and listed in its
//! commit message.

use ftlsim_core::ftl::SCHEMES;
use ftlsim_core::sim::{run, Precondition, SimConfig};
use serde_json::{json, Map, Value};
use std::path::PathBuf;

fn fixture_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/regression.json")
}

fn financial1() -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/traces/umass_financial1_first10k.ssdsim.ascii");
    assert!(
        path.exists(),
        "the regression fixture needs the shared traces at {} (CI has them beside the clone)",
        path.display()
    );
    path.to_string_lossy().into_owned()
}

/// (case name, trace, config) for every recorded run.
fn cases() -> Vec<(String, String, SimConfig)> {
    let workloads: [(&str, String, &str, bool); 4] = [
        ("uniform", "uniform:writes=20000,seed=3,read_share=0.2".into(), "8MiB", true),
        (
            "hotcold",
            "hotcold:writes=20000,seed=4,sequential_share=0.1,run_pages=32,run_as_request=true,idle_every=500"
                .into(),
            "8MiB",
            false,
        ),
        ("camera", "fat-camera:transactions=2,seed=1".into(), "32MiB", false),
        ("financial1", financial1(), "64MiB", false),
    ];
    let mut out = Vec::new();
    let on =
        |scheme: &str, params: Value, (_, trace, capacity, full): &(&str, String, &str, bool)| {
            let cfg = SimConfig {
                ftl: scheme.into(),
                params,
                capacity: Some(capacity.to_string()),
                precondition: if *full {
                    Precondition::Full
                } else {
                    Precondition::None
                },
                wrap: true,
                ..Default::default()
            };
            (trace.clone(), cfg)
        };
    for scheme in SCHEMES {
        for w in &workloads {
            let (trace, cfg) = on(scheme.name, json!({}), w);
            out.push((format!("{}/{}", scheme.name, w.0), trace, cfg));
        }
    }
    // DFTL with a CMT of 256 entries (1/64 of the 8 MiB devices' pages, 1/256 of Financial1's 64 MiB):
    // misses, dirty evictions and translation-block GC all show.
    for (label, params, w) in [
        ("dftl-cmt256", json!({"cmt_entries": 256}), &workloads[0]),
        ("dftl-cmt256", json!({"cmt_entries": 256}), &workloads[3]),
        (
            "dftl-cmt256-cost-benefit",
            json!({"cmt_entries": 256, "victim": "cost-benefit"}),
            &workloads[1],
        ),
    ] {
        let (trace, cfg) = on("dftl", params, w);
        out.push((format!("{label}/{}", w.0), trace, cfg));
    }
    for (scheme, policy) in [("bast", "metadata"), ("fast", "lru")] {
        let cfg = SimConfig {
            ftl: scheme.into(),
            params: json!({"log_blocks": 16}),
            capacity: Some("32MiB".into()),
            nvram: Some("128KiB".into()),
            nvram_policy: policy.into(),
            ..Default::default()
        };
        out.push((
            format!("{scheme}+nvram-{policy}/camera"),
            "fat-camera:transactions=2,seed=1".into(),
            cfg,
        ));
    }
    out
}

/// A report without the figures that vary from run to run (wall-clock speed, version).
fn recorded(trace: &str, cfg: &SimConfig) -> Value {
    let report =
        run(cfg, trace, &mut |_| true).unwrap_or_else(|e| panic!("{} on {trace}: {e}", cfg.ftl));
    let kept: Map<String, Value> = report
        .flatten()
        .into_iter()
        .filter(|(k, _)| !k.starts_with("sim.") && k != "version" && k != "config.trace")
        .collect();
    Value::Object(kept)
}

/// Integers and strings exactly; floats to 12 significant digits (JSON text does not round-trip the last bit).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) if x.is_f64() || y.is_f64() => {
            let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            (x - y).abs() <= 1e-12 * x.abs().max(y.abs())
        }
        _ => a == b,
    }
}

#[test]
fn reports_match_the_recorded_fixture() {
    let cases = cases();
    let now: Map<String, Value> = cases
        .iter()
        .map(|(name, trace, cfg)| (name.clone(), recorded(trace, cfg)))
        .collect();
    if std::env::var_os("FTLSIM_BLESS").is_some() {
        let text = serde_json::to_string_pretty(&now).unwrap();
        std::fs::write(fixture_path(), text + "\n").unwrap();
        return;
    }
    let text = std::fs::read_to_string(fixture_path()).expect("the recorded fixture");
    let before: Map<String, Value> = serde_json::from_str(&text).unwrap();
    let unrecorded: Vec<&str> = cases
        .iter()
        .map(|(name, ..)| name.as_str())
        .filter(|name| !before.contains_key(*name))
        .collect();
    assert!(
        unrecorded.is_empty(),
        "no recorded report for {} (a new scheme's row or a new case): once its counts are settled, record it \
         with FTLSIM_BLESS=1 cargo test --release -p ftlsim-core --test regression and list its figures in the \
         commit message",
        unrecorded.join(", ")
    );
    let mut diffs = Vec::new();
    for (case, old) in &before {
        let Some(new) = now.get(case) else {
            diffs.push(format!("{case}: no longer run"));
            continue;
        };
        for (key, value) in old.as_object().unwrap() {
            match new.get(key) {
                Some(v) if same(v, value) => {}
                got => diffs.push(format!("{case}: {key} was {value}, now {got:?}")),
            }
        }
    }
    assert!(
        diffs.is_empty(),
        "{} figures moved from the recorded fixture (re-record only on purpose, see the header):\n{}",
        diffs.len(),
        diffs.iter().take(60).cloned().collect::<Vec<_>>().join("\n")
    );
}
