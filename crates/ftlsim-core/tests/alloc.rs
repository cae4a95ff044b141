//! The hot loop allocates nothing per request: for every scheme, a run of 8,000 requests makes (almost) no
//! more heap allocations than a run of 2,000 on the same preconditioned device. Chunks of sparse tables
//! touched for the first time, histogram growth and the like are bounded, not per request.

mod common;

use common::{full, toy};
use ftlsim_core::ftl::SCHEMES;
use ftlsim_core::request::{Op, Request};
use ftlsim_core::sim::run_requests;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        System.alloc(layout)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn requests(n: u64) -> Vec<Request> {
    let mut seed = 7u64;
    (0..n)
        .map(|i| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let lpn = (seed >> 33) % 2048;
            let op = if i % 4 == 0 { Op::Read } else { Op::Write };
            Request::new(0.0, op, lpn * 512, 512)
        })
        .collect()
}

/// Allocations made by a whole run (setup included) of `n` requests, behind an NVRAM cache of `policy` if given.
fn allocations(scheme: &str, n: u64, nvram_policy: Option<&str>) -> u64 {
    let mut cfg = full(toy(scheme, serde_json::json!({}), 16, 128));
    if let Some(policy) = nvram_policy {
        cfg.nvram = Some("8KiB".into());
        cfg.nvram_policy = policy.into();
    }
    let reqs = requests(n);
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    run_requests(&cfg, reqs).unwrap_or_else(|e| panic!("{scheme}: {e}"));
    ALLOCATIONS.load(Ordering::Relaxed) - before
}

#[test]
fn no_scheme_allocates_per_request() {
    let plain = SCHEMES.iter().map(|s| (s.name, None));
    let cached = ["metadata", "lru", "bplru"].map(|p| ("fast", Some(p)));
    for (scheme, policy) in plain.chain(cached) {
        let short = allocations(scheme, 2_000, policy);
        let long = allocations(scheme, 8_000, policy);
        assert!(
            long.saturating_sub(short) < 100,
            "{scheme} (nvram {policy:?}): {short} allocations for 2,000 requests, {long} for 8,000"
        );
    }
}
