//! The simulator's own memory per physical page: the chip model (page records, block states, scheme words)
//! and the read oracle (a token per logical page), on the throughput bench's device, 1 GiB of 2 KiB pages,
//! 64 a block, filled by `precondition="full"`: at most 16 bytes with the page scheme's default spare capacity
//! (so that 512 GiB of 8 KiB pages fit in 1 GiB; measured 15.99), and for every scheme at most 13 bytes a
//! physical page plus the oracle's 4 a logical page (12.25 of block states and 12-byte page records, and the
//! scheme words of the blocks whose pages carry one: FAST 12.41, MAST 12.86). A scheme with few spare blocks
//! pays the oracle's 4 bytes on almost every physical page: FAST 16.41, BAST 16.17 in all.

use ftlsim_core::config::DeviceOverrides;
use ftlsim_core::ftl::SCHEMES;
use ftlsim_core::sim::{run, Precondition, SimConfig};

/// (chip + oracle bytes, logical pages, physical pages) of `scheme` after a full precondition and a few writes.
fn memory(scheme: &str) -> (u64, u64, u64) {
    let cfg = SimConfig {
        ftl: scheme.into(),
        capacity: Some("1GiB".into()),
        precondition: Precondition::Full,
        device: DeviceOverrides {
            page_bytes: Some(2048),
            pages_per_block: Some(64),
            ..Default::default()
        },
        ..Default::default()
    };
    let r = run(&cfg, "uniform:writes=20000,seed=1", &mut |_| true)
        .unwrap_or_else(|e| panic!("{scheme}: {e}"));
    let bytes = r.count("sim.chip_memory_bytes") + r.count("sim.oracle_memory_bytes");
    (
        bytes,
        r.count("config.logical_blocks") * 64,
        r.count("config.physical_blocks") * 64,
    )
}

#[test]
fn the_page_scheme_holds_at_most_16_bytes_a_physical_page() {
    let (bytes, _, physical) = memory("page");
    let per_page = bytes as f64 / physical as f64;
    assert!(per_page <= 16.0, "{per_page:.3} B a physical page");
}

#[test]
fn every_scheme_holds_at_most_13_bytes_a_physical_page_and_4_a_logical_one() {
    for scheme in SCHEMES {
        let (bytes, logical, physical) = memory(scheme.name);
        let bound = 13.0 * physical as f64 + 4.0 * logical as f64;
        assert!(
            bytes as f64 <= bound,
            "{}: {bytes} B for {physical} physical and {logical} logical pages",
            scheme.name
        );
    }
}
