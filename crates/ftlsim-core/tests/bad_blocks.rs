//! Bad blocks (TinyFTL paper §V.D): factory bad blocks are never touched, blocks that wear out mid-trace are
//! replaced from the reserve with no data lost, the map of replacements is rebuilt after a power cut from
//! the chip's markers alone, and a used-up reserve ends the run with an error that says what went bad.

mod common;

use common::{full, toy};
use ftlsim_core::ftl::SCHEMES;
use ftlsim_core::request::{Op, Request};
use ftlsim_core::sim::{run_requests, SimConfig};
use serde_json::json;

/// `cfg` on a chip with bad blocks: `ratio` of its blocks bad from the factory, blocks going bad at their
/// `endurance + 1`-th erase, `reserve` blocks to replace them.
fn worn(mut cfg: SimConfig, ratio: f64, endurance: u32, reserve: u32) -> SimConfig {
    cfg.device.bad_block_ratio = Some(ratio);
    cfg.device.endurance = Some(endurance);
    cfg.device.bad_block_reserve = Some(reserve);
    cfg
}

/// Uniform single-page reads and writes over `pages` logical pages, then a read of every page (the
/// simulator checks every read against the last write).
fn uniform_then_read_all(requests: u64, pages: u64) -> Vec<Request> {
    let mut seed = 99u64;
    let mut reqs: Vec<Request> = (0..requests)
        .map(|i| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let lpn = (seed >> 33) % pages;
            let op = if i % 4 == 0 { Op::Read } else { Op::Write };
            Request::new(0.0, op, lpn * 512, 512)
        })
        .collect();
    reqs.extend((0..pages).map(|l| Request::new(0.0, Op::Read, l * 512, 512)));
    reqs
}

fn histogram(r: &ftlsim_core::report::Report) -> Vec<u64> {
    serde_json::from_value(r.get("erase_count.histogram").expect("a wear histogram")).unwrap()
}

#[test]
fn every_scheme_skips_factory_bad_blocks_and_keeps_its_data_when_blocks_wear_out() {
    // 16 logical blocks of 8 pages, full, 5,000 requests, and an endurance of half the most-erased block's
    // count in the same run on a perfect chip: blocks go bad mid-trace in every scheme. A program or erase
    // of a bad block is a NAND-rule error of the chip, and every read is checked, so a clean run is the proof.
    let reqs = uniform_then_read_all(5000, 128);
    for scheme in SCHEMES {
        let perfect = full(toy(scheme.name, json!({}), 8, 16));
        let most = run_requests(&perfect, reqs.clone())
            .unwrap()
            .count("erase_count.max");
        let endurance = (most / 2).max(1);
        let cfg = worn(perfect, 0.1, endurance as u32, 400);
        let r = run_requests(&cfg, reqs.clone()).unwrap_or_else(|e| panic!("{}: {e}", scheme.name));
        let chip_blocks = r.count("config.physical_blocks") + 400;
        assert_eq!(
            r.count("bad_blocks.factory"),
            (0.1 * chip_blocks as f64).round() as u64,
            "{}",
            scheme.name
        );
        assert!(r.count("bad_blocks.grown") > 0, "{}", scheme.name);
        assert_eq!(r.count("bad_blocks.reserve"), 400);
        // No block outlives its endurance (the failing erase is not counted in the block's wear); the
        // histogram covers the blocks in service: the scheme's and the failed ones each replaced.
        assert!(r.count("erase_count.max") <= endurance, "{}", scheme.name);
        assert_eq!(
            histogram(&r).iter().sum::<u64>(),
            r.count("config.physical_blocks") + r.count("bad_blocks.grown")
        );
    }
}

#[test]
fn without_bad_block_options_nothing_changes() {
    // No ratio, endurance or reserve: no bad-block layer, no `bad_blocks.*` keys, the same counts as a chip
    // with an endurance that is never reached.
    let reqs = uniform_then_read_all(3000, 128);
    let plain = run_requests(&full(toy("fast", json!({}), 8, 16)), reqs.clone()).unwrap();
    assert!(plain.get("bad_blocks.factory").is_none());
    let roomy = worn(full(toy("fast", json!({}), 8, 16)), 0.0, 1_000_000, 0);
    let r = run_requests(&roomy, reqs).unwrap();
    assert_eq!(r.count("bad_blocks.grown"), 0);
    for key in [
        "flash.erases",
        "flash.page_writes",
        "flash.page_reads",
        "merges.full.erases",
    ] {
        assert_eq!(r.count(key), plain.count(key), "{key}");
    }
    // Nor do the wear figures with factory bad blocks and a large unused reserve: they are over the blocks in
    // service. They were averaged over every chip block (mean 2.88 to 0.46 with 1,000 reserve blocks) and the
    // least was a factory-bad block's 0.
    let aside = worn(full(toy("fast", json!({}), 8, 16)), 0.2, 1_000_000, 100);
    let r = run_requests(&aside, uniform_then_read_all(3000, 128)).unwrap();
    assert!(r.count("bad_blocks.factory") > 0);
    for key in ["flash.erases", "erase_count.min", "erase_count.max"] {
        assert_eq!(r.count(key), plain.count(key), "{key}");
    }
    assert!(plain.count("erase_count.min") > 0);
    let mean =
        |r: &ftlsim_core::report::Report| r.get("erase_count.mean").unwrap().as_f64().unwrap();
    assert_eq!(mean(&r), mean(&plain));
    assert_eq!(histogram(&r), histogram(&plain));
}

#[test]
fn power_cuts_rebuild_the_replacements_from_the_markers() {
    // Schemes that mount: after each cut the bad-block map is read back from one marker per chip block
    // (spare reads of the mount), and every logical page is checked.
    for (scheme, endurance) in [
        ("page", 25),
        ("block", 25),
        ("nftl", 25),
        ("replacement", 4),
    ] {
        let mut cfg = worn(full(toy(scheme, json!({}), 8, 16)), 0.1, endurance, 400);
        cfg.power_cuts = 40;
        cfg.power_cut_seed = 3;
        let r = run_requests(&cfg, uniform_then_read_all(4000, 128))
            .unwrap_or_else(|e| panic!("{scheme}: {e}"));
        assert_eq!(r.count("power.cuts"), r.count("power.cuts_survived"));
        assert!(r.count("power.cuts") >= 30, "{scheme}");
        assert!(r.count("bad_blocks.grown") > 0, "{scheme}");
        let chip_blocks = r.count("config.physical_blocks") + 400;
        assert!(
            r.count("mount.spare_reads") >= r.count("power.cuts") * chip_blocks,
            "{scheme}"
        );
    }
}

#[test]
fn a_used_up_reserve_ends_the_run_and_says_what_went_bad() {
    let cfg = worn(full(toy("page", json!({}), 8, 16)), 0.0, 3, 2);
    let e = run_requests(&cfg, uniform_then_read_all(5000, 128))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains(
            "the chip ran out of good blocks: 3 blocks went bad (0 from the factory, 3 worn out"
        ),
        "{e}"
    );
    assert!(
        e.contains("the reserve of 2 replacement blocks is used up"),
        "{e}"
    );
    assert!(e.contains("raise bad_block_reserve"), "{e}");
}

#[test]
fn bad_block_options_are_bounded() {
    for (key, value, says) in [
        (
            "bad_block_ratio",
            json!(0.6),
            "must be a fraction from 0 to 0.5",
        ),
        (
            "bad_block_ratio",
            json!(-0.1),
            "must be a fraction from 0 to 0.5",
        ),
        (
            "endurance",
            json!(0),
            "endurance=0 would fail the first erase",
        ),
        (
            "bad_block_reserve",
            json!(4_000_000_000u64),
            "more than the",
        ),
    ] {
        let mut cfg = toy("page", json!({}), 8, 16);
        let mut device = serde_json::to_value(&cfg.device).unwrap();
        device[key] = value;
        cfg.device = serde_json::from_value(device).unwrap();
        let e = run_requests(&cfg, uniform_then_read_all(10, 128))
            .unwrap_err()
            .to_string();
        assert!(e.contains(says), "{key}: {e}");
    }
    // Half the chip bad and no room for it.
    let cfg = worn(toy("page", json!({}), 8, 16), 0.5, 10, 1);
    let e = run_requests(&cfg, uniform_then_read_all(10, 128))
        .unwrap_err()
        .to_string();
    assert!(e.contains("are bad from the factory, leaving"), "{e}");
    // It says the least reserve that runs (the bad share grows with the chip, so raising the reserve to the
    // bad blocks counted is not enough): that reserve runs, one fewer does not.
    let least = |e: &str| {
        let at = e.find("a reserve of ").expect(e) + "a reserve of ".len();
        e[at..].split(' ').next().unwrap().parse::<u32>().unwrap()
    };
    let r = least(&e);
    let physical = run_requests(&worn(toy("page", json!({}), 8, 16), 0.0, 10, 0), vec![])
        .unwrap()
        .count("config.physical_blocks") as u32;
    assert_eq!(
        r, physical,
        "half the chip bad: a reserve as large as the scheme's blocks"
    );
    assert!(run_requests(
        &worn(toy("page", json!({}), 8, 16), 0.5, 10, r),
        uniform_then_read_all(10, 128)
    )
    .is_ok());
    let e = run_requests(&worn(toy("page", json!({}), 8, 16), 0.5, 10, r - 1), vec![])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains(&format!("a reserve of {r} leaves enough")),
        "{e}"
    );
}
