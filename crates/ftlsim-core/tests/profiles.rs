//! Profiles: named parameter sets that make a scheme behave as another simulator (`profile = "psu-flashsim"`),
//! on a real trace, Financial1 (the UMass excerpt in `../shared/traces`), on the device PSU FlashSim models:
//! 2 KiB pages, 64 a block. The figures are recorded from ftlsim (the traffic split and the totals are checked
//! against each other here); `docs/matching-other-simulators.md` gives the commands to compare with PSU.

mod common;

use ftlsim_core::config::DeviceOverrides;
use ftlsim_core::sim::{run, Precondition, SimConfig};
use serde_json::{json, Value};
use std::path::PathBuf;

fn financial1() -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/traces/umass_financial1_first10k.ssdsim.ascii");
    assert!(
        path.exists(),
        "needs the shared traces at {}",
        path.display()
    );
    path.to_string_lossy().into_owned()
}

/// 64 MiB (512 blocks of 64 x 2 KiB pages), every logical page written once first, the trace's addresses
/// wrapped into the capacity.
fn psu_device(ftl: &str, params: Value) -> SimConfig {
    SimConfig {
        ftl: ftl.into(),
        params,
        device: DeviceOverrides {
            page_bytes: Some(2048),
            pages_per_block: Some(64),
            ..Default::default()
        },
        capacity: Some("64MiB".into()),
        precondition: Precondition::Full,
        wrap: true,
        ..Default::default()
    }
}

/// The report's profile echo of `scheme`, in key order.
fn echo(r: &ftlsim_core::report::Report, scheme: &str) -> Vec<(String, String)> {
    r.flatten()
        .into_iter()
        .filter(|(k, _)| k.starts_with(&format!("{scheme}.profile")))
        .map(|(k, v)| (k, v.as_str().unwrap_or_default().to_string()))
        .collect()
}

fn pairs(items: &[(&str, &str)]) -> Vec<(String, String)> {
    items
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn counts(r: &ftlsim_core::report::Report, keys: &[&str]) -> Vec<u64> {
    keys.iter().map(|k| r.count(k)).collect()
}

#[test]
fn page_with_the_psu_profile_on_financial1() {
    let default = run(&psu_device("page", json!({})), &financial1(), &mut |_| true).unwrap();
    let psu = run(
        &psu_device("page", json!({"profile": "psu-flashsim"})),
        &financial1(),
        &mut |_| true,
    )
    .unwrap();
    let keys = [
        "host.write_pages",
        "flash.erases",
        "gc.copied_pages",
        "gc.runs",
    ];
    assert_eq!(counts(&default, &keys), [19_226, 520, 16_217, 520]);
    // GC copies fill blocks of their own (an implicit hot/cold split): 11.5% fewer erases, 24.7% fewer copies.
    assert_eq!(counts(&psu, &keys), [19_226, 460, 12_214, 460]);
    assert_eq!(
        echo(&psu, "page"),
        pairs(&[
            ("page.profile", "psu-flashsim"),
            ("page.profile.gc_frontier", "true"),
            ("page.profile.gc_reserve_blocks", "3"),
        ])
    );
    assert!(echo(&default, "page").is_empty());
}

#[test]
fn dftl_with_the_psu_profile_on_financial1() {
    let r = run(
        &psu_device("dftl", json!({"profile": "psu-flashsim"})),
        &financial1(),
        &mut |_| true,
    )
    .unwrap();
    assert_eq!(
        echo(&r, "dftl"),
        pairs(&[
            ("dftl.profile", "psu-flashsim"),
            ("dftl.profile.cmt_policy", "age"),
            ("dftl.profile.gc", "burst"),
            ("dftl.profile.gc_reserve_blocks", "3"),
            ("dftl.profile.lazy_copy_dirty", "false"),
            ("dftl.profile.writeback", "entry"),
        ])
    );
    assert_eq!(
        counts(&r, &["cache.cmt.hits", "cache.cmt.misses"]),
        [30_095, 11_891]
    );
    let reads = [
        "dftl.translation_reads.miss",
        "dftl.translation_reads.eviction",
        "dftl.translation_reads.gc_update",
        "dftl.translation_reads.translation_gc",
        "dftl.translation_reads.mount",
    ];
    let writes = [
        "dftl.translation_writes.eviction",
        "dftl.translation_writes.gc_update",
        "dftl.translation_writes.translation_gc",
    ];
    // Every dirty eviction writes its translation page (`writeback = "entry"`): 11,773 of the 15,769 writes.
    assert_eq!(counts(&r, &reads), [11_891, 11_757, 328, 3_668, 0]);
    assert_eq!(counts(&r, &writes), [11_773, 328, 3_668]);
    assert_eq!(
        counts(&r, &["map.page_reads", "map.page_writes", "map.erases"]),
        [27_644, 15_769, 276]
    );
    assert_eq!(
        counts(
            &r,
            &[
                "flash.erases",
                "gc.copied_pages",
                "dftl.copies.data",
                "dftl.copies.translation",
                "dftl.moves_left_clean"
            ]
        ),
        [771, 18_103, 14_435, 3_668, 445]
    );
}

/// The PSU profile's `entry` write back keeps a translation page's dirty entries dirty through its programs,
/// and the simulator folds them into what the page on flash holds only when needed: a mount after a power cut
/// must find each translation page as its last program wrote it. The figures are those of the eager fold (every
/// dirty entry written at every program, before the lazy one): a mount from a flash map short of the entries
/// folded in recovers other entries, and every figure below moves.
#[test]
fn dftl_with_the_psu_profile_mounts_from_what_its_translation_pages_hold_on_financial1() {
    let cfg = SimConfig {
        power_cuts: 40,
        power_cut_seed: 7,
        mount_at_end: true,
        ..psu_device("dftl", json!({"profile": "psu-flashsim"}))
    };
    let r = run(&cfg, &financial1(), &mut |_| true).unwrap();
    assert_eq!(
        counts(
            &r,
            &[
                "power.cuts",
                "dftl.translation_reads.mount",
                "dftl.translation_writes.eviction",
                "map.page_writes",
                "flash.erases",
                "gc.copied_pages"
            ]
        ),
        // The translation pages the crash test's check writes back (its reads of every page evict dirty
        // entries) are the check's, not the workload's: 12,672 eviction writes and 17,294 map programs with them.
        [34, 2_225, 552, 3_816, 774, 15_932]
    );
}

#[test]
fn dftl_defaults_on_financial1_write_translation_pages_in_batches() {
    // The same run with ftlsim's own rules: a dirty eviction folds in every dirty entry of its translation
    // page, so evictions write 25 translation pages, not 11,773.
    let r = run(&psu_device("dftl", json!({})), &financial1(), &mut |_| true).unwrap();
    assert_eq!(
        counts(&r, &["cache.cmt.hits", "cache.cmt.misses"]),
        [30_345, 11_641]
    );
    assert_eq!(
        counts(
            &r,
            &[
                "dftl.translation_writes.eviction",
                "dftl.translation_writes.gc_update",
                "dftl.translation_writes.translation_gc",
                "map.page_reads",
                "map.page_writes",
            ]
        ),
        [25, 346, 369, 12_365, 740]
    );
    assert!(echo(&r, "dftl").is_empty());
}

#[test]
fn a_parameter_given_wins_over_the_profile_at_any_value_and_unknown_profiles_are_refused() {
    let run_with = |params: serde_json::Value| {
        run(
            &psu_device("dftl", params),
            "uniform:writes=2000,seed=1",
            &mut |_| true,
        )
        .unwrap()
    };
    let r = run_with(json!({"profile": "psu-flashsim", "gc_reserve_blocks": 4}));
    assert_eq!(r.get("dftl.profile.gc_reserve_blocks"), Some(json!("4")));
    // Given at the scheme's defaults, they win too (a sweep of gc over both values runs both), and the echo says
    // what ran.
    let r =
        run_with(json!({"profile": "psu-flashsim", "gc": "per-write", "lazy_copy_dirty": true}));
    assert_eq!(
        (
            r.get("dftl.profile.gc"),
            r.get("dftl.profile.lazy_copy_dirty")
        ),
        (Some(json!("per-write")), Some(json!("true")))
    );
    let burst = run_with(json!({"profile": "psu-flashsim"}));
    assert_eq!(burst.get("dftl.profile.gc"), Some(json!("burst")));
    assert_ne!(r.get("map.page_writes"), burst.get("map.page_writes"));
    let e = run(
        &psu_device("page", json!({"profile": "mqsim"})),
        "uniform:writes=10",
        &mut |_| true,
    )
    .err()
    .unwrap()
    .to_string();
    assert!(
        e.contains("profile=mqsim is not a profile of this scheme") && e.contains("`psu-flashsim`"),
        "{e}"
    );
}
