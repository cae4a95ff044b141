//! Parameter bounds: every registered scheme's parameters (read from the registry's defaults), every device
//! override, the NVRAM options and the capacity, at 0, 1, the bound, bound + 1, 2^31-1, 2^32-1, 2^64-1, -1, NaN,
//! infinity and a wrong type, written as JSON text (as a JSON config file gives them). Never a panic or an abort:
//! either a clean run (and a clean RAM breakdown, `ftlsim ram`) on a toy device, or an error naming the key.
//! Where a key has an upper bound on the toy device, it is worked out here by hand from `ftl/common/bounds.rs`
//! and the scheme's `build`: the bound runs, bound + 1 is refused with the bound in the message.

mod common;

use common::random_op;
use ftlsim_core::config::{from_json, parse_size, DeviceOverrides};
use ftlsim_core::ftl::SCHEMES;
use ftlsim_core::request::Request;
use ftlsim_core::sim::{self, run_requests, SimConfig};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// The toy device: 16 logical blocks of 8 pages of 512 B (128 logical pages). A scheme may add at most
/// max(16, 128) = 128 blocks beyond the logical ones.
const PPB: u32 = 8;
const BLOCKS: u32 = 16;
const CAPACITY: u32 = 512 * PPB * BLOCKS;

/// The upper bound of a key on the toy device, None where the key has none (a flag, a string, a count the
/// scheme clamps to the device, a threshold any value of which is meaningful).
fn bound(scheme: &str, key: &str) -> Option<&'static str> {
    Some(match (scheme, key) {
        // 128 extra blocks at most: over_provisioning <= 1; gc_reserve_blocks + 2 <= 128.
        ("page", "over_provisioning") => "1.0",
        ("page", "gc_reserve_blocks") => "126",
        // log_blocks + 1 <= 128.
        ("bast" | "fast" | "ofast" | "last", "log_blocks") => "127",
        // log_blocks + 1 + 3 map blocks (one zone of 16 one-byte entries: 1 map page + 2 for GC) <= 128.
        ("logblock-zoned", "log_blocks") => "124",
        // seq_log_blocks <= log_blocks (8) - 2.
        ("last", "seq_log_blocks") => "6",
        ("nftl", "spare_blocks") => "128",
        // One cache entry per logical page.
        ("nftl", "page_cache") | ("superblock", "cache_entries") => "128",
        ("replacement", "replacement_blocks") => "127",
        // 128 - 8 log blocks (393 clamped to 16 / 2) - 4 map blocks (256 clamped to 16 / 4).
        ("tiny", "reserved_free_blocks") => "116",
        ("tiny", "block_table_cache_units") => "64",
        ("tiny", "page_table_cache_entries") => "512",
        // The chip's blocks beyond the logical ones: max(24 per 1,024 of 16 = 1, 8 log blocks + 1) = 9.
        ("superblock", "extra_blocks_per_superblock") => "9",
        ("mast", "migrate_valid_pages") => "8",
        ("mast", "ca_util_low" | "ha_util_high" | "ca_min_share") => "1.0",
        _ => return None,
    })
}

/// `bound` + 1, as JSON text.
fn above(bound: &str) -> String {
    match bound.parse::<u64>() {
        Ok(n) => (n + 1).to_string(),
        Err(_) => format!("{}", bound.parse::<f64>().unwrap() + 1.0),
    }
}

/// The hostile values every key is tried at, as JSON text (bound and bound + 1 are added per key).
const VALUES: &[&str] = &[
    "0",
    "1",
    "2147483647",
    "4294967295",
    "18446744073709551615",
    "-1",
    "NaN",
    "Infinity",
    "-Infinity",
    "\"wrong\"",
    "true",
];

fn workload() -> Vec<Request> {
    let mut seed = 7u64;
    (0..300)
        .map(|_| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let lpn = (seed >> 33) % (PPB * BLOCKS) as u64;
            let pages = 1 + (seed >> 20) % 4;
            let pages = pages.min((PPB * BLOCKS) as u64 - lpn);
            Request::new(0.0, random_op((seed >> 8) as u8), lpn * 512, pages * 512)
        })
        .collect()
}

/// What a configuration did: parsed, ran and gave its RAM (Ok), or the first error's message.
fn outcome(config_json: &str) -> Result<(), String> {
    let cfg: SimConfig = from_json("run configuration", config_json).map_err(|e| e.to_string())?;
    sim::ram(&cfg).map_err(|e| e.to_string())?;
    run_requests(&cfg, workload()).map_err(|e| e.to_string())?;
    Ok(())
}

/// Runs `config_json` catching any panic, and checks the outcome: a clean run, or an error naming `key`.
/// Returns the outcome for the caller's bound checks.
fn try_case(config_json: &str, key: &str) -> Result<(), String> {
    let result = catch_unwind(AssertUnwindSafe(|| outcome(config_json)))
        .unwrap_or_else(|_| panic!("panicked on {config_json}"));
    if let Err(msg) = &result {
        assert!(
            msg.contains(key),
            "the error does not name `{key}` for {config_json}: {msg}"
        );
        assert!(
            msg.len() < 2000,
            "an overlong error for {config_json}: {msg}"
        );
    }
    result
}

/// A run configuration as JSON text: `scheme` on the toy device, with `entry` (`"key": value`) in `section`
/// ("params", "device", or "run" for a top-level key) and `more` top-level entries.
fn config(scheme: &str, section: &str, entry: &str, more: &str) -> String {
    let pick = |s: &str| if section == s { entry } else { "" };
    let device = match pick("device") {
        "" => format!(r#""pages_per_block": {PPB}"#),
        d => d.to_string(),
    };
    let mut top = vec![format!(r#""capacity": "{CAPACITY}""#)];
    if section == "run" {
        if entry.starts_with(r#""capacity""#) {
            top.clear();
        }
        top.push(entry.to_string());
    }
    if !more.is_empty() {
        top.push(more.to_string());
    }
    format!(
        r#"{{"ftl": "{scheme}", "params": {{{}}}, "device": {{{device}}}, {}}}"#,
        pick("params"),
        top.join(", ")
    )
}

fn entry(key: &str, value: &str) -> String {
    format!(r#""{key}": {value}"#)
}

#[test]
fn every_scheme_parameter_at_hostile_values_runs_cleanly_or_names_the_key() {
    let mut cases = 0;
    let mut refused = 0;
    for scheme in SCHEMES {
        let defaults = (scheme.defaults)();
        let keys = defaults.as_object().expect("defaults are an object");
        for key in keys.keys() {
            let bound = bound(scheme.name, key);
            let mut values: Vec<String> = VALUES.iter().map(|v| v.to_string()).collect();
            if let Some(b) = bound {
                values.push(b.to_string());
                values.push(above(b));
            }
            for value in &values {
                let text = config(scheme.name, "params", &entry(key, value), "");
                let result = try_case(&text, key);
                cases += 1;
                if let Err(msg) = &result {
                    refused += 1;
                    // The scheme's own check names the scheme; the JSON parser names the key's path.
                    assert!(
                        msg.contains(&format!("scheme `{}`", scheme.name))
                            || msg.contains(&format!("bad run configuration: params.{key}: ")),
                        "{text}: {msg}"
                    );
                }
                if let Some(b) = bound {
                    if value == b {
                        assert!(result.is_ok(), "{text} is within the bound: {result:?}");
                    } else if *value == above(b) {
                        let msg = result.expect_err(&text);
                        let limit = b.trim_end_matches(".0");
                        assert!(
                            msg.contains(&format!("{key}={value}")) && msg.contains(limit),
                            "{text}: the error names neither the value nor the limit {limit}: {msg}"
                        );
                    }
                }
            }
            // Keys that take numbers take their default: the scheme runs.
            let default = keys[key].to_string();
            assert!(
                try_case(
                    &config(scheme.name, "params", &entry(key, &default), ""),
                    key
                )
                .is_ok(),
                "{} {key}={default}",
                scheme.name
            );
        }
    }
    // 12 schemes; every key at 11 values, bounded ones at 13.
    assert!(cases > 400, "{cases} cases");
    assert!(refused > cases / 3, "{refused} of {cases} refused");
}

#[test]
fn the_issue_reproducers_are_clean_errors() {
    for (scheme, key, value, limit) in [
        ("fast", "log_blocks", "4294967295", "127"),
        ("bast", "log_blocks", "65536", "127"),
        ("last", "seq_log_blocks", "4294967295", "log_blocks=8"),
        ("tiny", "reserved_free_blocks", "2147483647", "116"),
        ("page", "over_provisioning", "1e9", "from 0 to 1"),
        (
            "superblock",
            "extra_blocks_per_superblock",
            "4294967294",
            "9",
        ),
        ("superblock", "cache_entries", "4294967295", "128"),
        ("nftl", "page_cache", "4294967295", "128"),
        ("replacement", "replacement_blocks", "4294967295", "127"),
        ("mast", "ca_min_share", "-0.5", "from 0 to 1"),
        (
            "mast",
            "la_blocks",
            "4294967295",
            "la_blocks=4294967295 with ha_blocks",
        ),
    ] {
        let mut text = config(scheme, "params", &entry(key, value), "");
        if (scheme, key) == ("mast", "la_blocks") {
            // A device larger than the log, so that la_blocks is not clamped.
            text = text.replace(&format!("\"{CAPACITY}\""), "\"8MiB\"");
        }
        let msg = try_case(&text, key).expect_err(&text);
        assert!(msg.contains(limit), "{text}: {msg}");
        assert!(msg.contains(&format!("scheme `{scheme}`")), "{msg}");
    }
}

#[test]
fn device_overrides_at_hostile_values_run_cleanly_or_name_the_key() {
    let keys = serde_json::to_value(DeviceOverrides::default()).unwrap();
    for key in keys.as_object().unwrap().keys() {
        let bound = match key.as_str() {
            "page_bytes" => Some("1048576"),
            "spare_bytes" => Some("512"),
            "pages_per_block" => Some("4096"),
            // A word, not a number: every number given is refused, naming the key.
            "sequential_program" | "bad_block_seed" | "placement" => None,
            "bad_block_ratio" => Some("0.5"),
            "endurance" => Some("4294967295"),
            // The toy device has 4 blocks: a reserve may reach 1,024 blocks there.
            "bad_block_reserve" => Some("1024"),
            // An array has at most 4,096 planes (config/array.rs); one count may take them all.
            "channels" | "chips_per_channel" | "dies_per_chip" | "planes_per_die" => Some("4096"),
            // Striped blocks of the preset's 32 pages: u32::MAX / 2 / 32 blocks a plane.
            "blocks_per_plane" => Some("67108863"),
            "channel_mts" => Some("1000000.0"),
            "channel_width_bytes" => None,
            _ => Some("1000000000.0"),
        };
        let mut values: Vec<String> = VALUES.iter().map(|v| v.to_string()).collect();
        values.extend(bound.into_iter().flat_map(|b| [b.to_string(), above(b)]));
        for value in &values {
            let text = config("fast", "device", &entry(key, value), "");
            let result = try_case(&text, key);
            if let Some(b) = bound {
                if key == "blocks_per_plane" {
                    // It sizes the device, which the case's capacity does too: refused for that at the bound,
                    // for its range above it (a run at the bound would be 2^31 pages).
                    let said = if value == b {
                        "is given with a capacity"
                    } else {
                        "must be from 1 to"
                    };
                    if value == b || *value == above(b) {
                        assert!(
                            result.as_ref().is_err_and(|e| e.contains(said)),
                            "{text}: {result:?}"
                        );
                    }
                } else if value == b {
                    assert!(result.is_ok(), "{text}: {result:?}");
                } else if *value == above(b) {
                    assert!(result.is_err(), "{text}");
                }
            }
        }
    }
}

#[test]
fn run_options_and_the_capacity_at_hostile_values_run_cleanly_or_name_the_key() {
    for key in [
        "capacity",
        "nvram",
        "nvram_read_us",
        "nvram_write_us",
        "nvram_regions",
    ] {
        let quoted = ["capacity", "nvram", "nvram_regions"].contains(&key);
        for value in VALUES {
            let value = if quoted && !value.starts_with('"') {
                format!("\"{value}\"")
            } else {
                value.to_string()
            };
            let more = match key {
                "nvram_regions" => r#""nvram": "4KiB", "nvram_policy": "region""#,
                "nvram_read_us" | "nvram_write_us" => r#""nvram": "4KiB", "nvram_policy": "lru""#,
                _ => "",
            };
            let text = config("page", "run", &entry(key, &value), more);
            let _ = try_case(&text, key);
        }
    }
}

#[test]
fn parse_size_never_panics_on_hostile_values() {
    for value in
        VALUES
            .iter()
            .chain(&["1e400", "99999999999999999999TiB", ".", "1..2", "-0", "0.5"])
    {
        let _ = catch_unwind(|| parse_size(value))
            .unwrap_or_else(|_| panic!("parse_size({value}) panicked"));
    }
}

#[test]
fn a_long_key_is_quoted_to_80_characters() {
    // Found by the parse_config fuzz target: a 2 KB key was quoted whole, twice (a 2,262-byte error).
    let long = format!("{{\"ftl\": \"page\", \"{}\": 1}}", "k".repeat(5000));
    let message = from_json::<SimConfig>("run configuration", &long)
        .unwrap_err()
        .to_string();
    assert!(message.len() < 600, "{} bytes: {message}", message.len());
    assert!(message.contains("unknown field"), "{message}");
    let crash = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/fuzz-config-long-key.json"
    ))
    .unwrap();
    let message = from_json::<SimConfig>("run configuration", &crash)
        .unwrap_err()
        .to_string();
    assert!(message.len() < 600, "{} bytes: {message}", message.len());
}

/// A run on 64 logical blocks of 8 pages, every page written first, with `extra_blocks` stated or not.
fn spare_run(
    scheme: &str,
    params: serde_json::Value,
    extra: Option<u32>,
    trace: &str,
) -> Result<ftlsim_core::report::Report, String> {
    let cfg = SimConfig {
        ftl: scheme.into(),
        params,
        device: DeviceOverrides {
            pages_per_block: Some(PPB),
            ..Default::default()
        },
        capacity: Some(format!("{}", 512 * PPB * 64)),
        precondition: sim::Precondition::Full,
        extra_blocks: extra,
        ..Default::default()
    };
    sim::run(&cfg, trace, &mut |_| true).map_err(|e| e.to_string())
}

#[test]
fn every_scheme_runs_on_the_fewest_extra_blocks_it_accepts_and_refuses_one_fewer() {
    // Going down from each scheme's default chip to the fewest extra blocks a run may state: one fewer is
    // refused with the number it needs, and on the fewest a full device takes uniform overwrites and reads
    // (every read checked) without running out of blocks.
    for scheme in SCHEMES {
        let accepts = |extra| {
            spare_run(
                scheme.name,
                serde_json::json!({}),
                Some(extra),
                "uniform:writes=1",
            )
            .is_ok()
        };
        let default = spare_run(scheme.name, serde_json::json!({}), None, "uniform:writes=1")
            .unwrap()
            .count("device.extra_blocks") as u32;
        let mut fewest = default;
        while fewest > 0 && accepts(fewest - 1) {
            fewest -= 1;
        }
        assert!(fewest > 0, "{}: accepts no extra block", scheme.name);
        let refused = spare_run(
            scheme.name,
            serde_json::json!({}),
            Some(fewest - 1),
            "uniform:writes=1",
        )
        .err()
        .unwrap();
        assert!(
            refused.contains(&format!("extra_blocks={fewest}")),
            "{}: {refused}",
            scheme.name
        );
        let r = spare_run(
            scheme.name,
            serde_json::json!({}),
            Some(fewest),
            "uniform:writes=3000,seed=3,read_share=0.2",
        )
        .unwrap_or_else(|e| panic!("{} on {fewest} extra blocks: {e}", scheme.name));
        assert_eq!(
            r.count("device.extra_blocks"),
            fewest as u64,
            "{}",
            scheme.name
        );
    }
}

#[test]
fn bast_takes_flashsims_chip_of_1040_blocks() {
    // MatiasBjorling/flashsim's BAST: 1,024 logical blocks, 16 log blocks, 1,040 blocks. ftlsim's default chip
    // is the TinyFTL layout (25 extra blocks); a run may state down to the 17 BAST uses (16 log blocks and the
    // free block a full merge copies into).
    let run_with = |extra| {
        let cfg = SimConfig {
            ftl: "bast".into(),
            params: serde_json::json!({"log_blocks": 16}),
            capacity: Some("16MiB".into()),
            extra_blocks: extra,
            ..Default::default()
        };
        sim::run(&cfg, "uniform:writes=20000,seed=1", &mut |_| true).map_err(|e| e.to_string())
    };
    assert_eq!(run_with(None).unwrap().count("device.extra_blocks"), 25);
    assert_eq!(
        run_with(Some(17)).unwrap().count("device.physical_blocks"),
        1_041
    );
    let e = run_with(Some(16)).err().unwrap();
    assert!(
        e.contains("needs 17 extra blocks") && e.contains("extra_blocks=17"),
        "{e}"
    );
}

#[test]
fn tiny_and_superblock_take_fewer_extra_blocks_than_the_tinyftl_layout() {
    // 1,024 logical blocks: the layout gives 25 extra blocks. tiny with 4 log blocks and 4 map blocks uses
    // those and its 3 reserved free blocks: 11; superblock with 4 log blocks uses those and its 1 reserve: 5.
    for (scheme, params, fewest) in [
        (
            "tiny",
            serde_json::json!({"log_blocks": 4, "map_blocks": 4}),
            11,
        ),
        ("superblock", serde_json::json!({"log_blocks": 4}), 5),
    ] {
        let run_with = |extra| {
            let cfg = SimConfig {
                ftl: scheme.into(),
                params: params.clone(),
                capacity: Some("16MiB".into()),
                extra_blocks: extra,
                ..Default::default()
            };
            sim::run(&cfg, "uniform:writes=20000,seed=1", &mut |_| true).map_err(|e| e.to_string())
        };
        assert_eq!(
            run_with(None).unwrap().count("device.extra_blocks"),
            25,
            "{scheme}"
        );
        assert_eq!(
            run_with(Some(fewest)).unwrap().count("device.extra_blocks"),
            fewest as u64,
            "{scheme}"
        );
        let e = run_with(Some(fewest - 1)).err().unwrap();
        assert!(
            e.contains(&format!("needs {fewest} extra blocks")),
            "{scheme}: {e}"
        );
    }
}

/// Random requests (a quarter reads, an eighth trims, the rest writes, 1-3 pages) over `pages` logical pages.
fn random_requests(n: usize, pages: u64, seed: u64) -> Vec<Request> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut next = move || {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        x >> 33
    };
    (0..n)
        .map(|_| {
            let op = random_op(next() as u8);
            let first = next() % pages;
            let len = (next() % 3 + 1).min(pages - first);
            Request::new(0.0, op, first * 512, len * 512)
        })
        .collect()
}

#[test]
fn dftl_burst_gc_refuses_a_reserve_below_2_and_runs_on_2() {
    use ftlsim_core::SimError;
    // 16 logical blocks of 4 pages, tiny CMTs over translation pages of 2 to 8 entries: misses, dirty
    // evictions and translation-block GC everywhere.
    let toy = |params: serde_json::Value| SimConfig {
        ftl: "dftl".into(),
        params,
        device: DeviceOverrides {
            pages_per_block: Some(4),
            ..Default::default()
        },
        capacity: Some(format!("{}", 512 * 4 * 16)),
        ..Default::default()
    };
    let err = run_requests(
        &toy(serde_json::json!({"gc": "burst", "gc_reserve_blocks": 1})),
        random_requests(10, 64, 1),
    )
    .map(|_| ())
    .unwrap_err();
    let SimError::Config(config) = &err else {
        panic!("a configuration error: {err}");
    };
    let [problem] = config.invalid() else {
        panic!("one structured problem: {err}");
    };
    assert_eq!(
        (
            problem.key.as_str(),
            problem.value.as_str(),
            problem.suggestion.as_deref()
        ),
        ("gc_reserve_blocks", "1", Some("2"))
    );
    assert!(err.to_string().contains("scheme `dftl`"), "{err}");
    // On the least reserve, burst GC does not run out of free blocks: on a full device, and through power
    // cuts (a cut inside a burst leaves a block fewer free: the mount's first write resumes the burst).
    for params in [
        serde_json::json!({"cmt_entries": 3, "over_provisioning": 0.0}),
        serde_json::json!({"cmt_entries": 2, "entry_bytes": 256, "over_provisioning": 0.5}),
        serde_json::json!({"cmt_entries": 3, "entry_bytes": 128, "cmt_policy": "age",
                           "writeback": "entry", "lazy_copy_dirty": false}),
        serde_json::json!({}),
    ] {
        let mut params = params;
        params["gc"] = "burst".into();
        params["gc_reserve_blocks"] = 2.into();
        for seed in 0..8 {
            let full = SimConfig {
                precondition: sim::Precondition::Full,
                ..toy(params.clone())
            };
            let r = run_requests(&full, random_requests(3000, 64, seed))
                .unwrap_or_else(|e| panic!("{params} seed {seed}: {e}"));
            assert!(r.count("gc.runs") > 100, "{params}: GC ran");
            let cut = SimConfig {
                power_cuts: 40,
                power_cut_seed: seed,
                ..toy(params.clone())
            };
            let r = run_requests(&cut, random_requests(600, 64, seed))
                .unwrap_or_else(|e| panic!("{params} seed {seed}, power cuts: {e}"));
            assert_eq!(
                r.count("power.cuts_survived"),
                r.count("power.cuts"),
                "{params}"
            );
        }
    }
}
