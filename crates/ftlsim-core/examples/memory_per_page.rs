//! The simulator's own memory (chip model + read oracle) per physical page of a fully written drive:
//! `cargo run --release -p ftlsim-core --example memory_per_page [-- SCHEME ...]` (every scheme by default)
//! on the 512 GiB drive of 8 KiB pages, 256 a block; each scheme takes a few seconds and about
//! 1.2 GiB. `FTLSIM_CAPACITY=1GiB FTLSIM_PAGE=2048 FTLSIM_PPB=64` sizes another drive.

use ftlsim_core::config::DeviceOverrides;
use ftlsim_core::ftl::SCHEMES;
use ftlsim_core::sim::{run, Precondition, SimConfig};

fn setting<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .map(|v| {
            v.parse()
                .unwrap_or_else(|_| panic!("{name}={v}: not a number"))
        })
        .unwrap_or(default)
}

fn main() {
    let capacity = std::env::var("FTLSIM_CAPACITY").unwrap_or_else(|_| "512GiB".into());
    let (page_bytes, ppb): (u32, u32) = (setting("FTLSIM_PAGE", 8192), setting("FTLSIM_PPB", 256));
    let mut schemes: Vec<String> = std::env::args().skip(1).collect();
    if schemes.is_empty() {
        schemes = SCHEMES.iter().map(|s| s.name.to_string()).collect();
    }
    println!("{capacity} of {page_bytes} B pages, {ppb} a block, every page written, then 20,000 uniform writes");
    println!(
        "{:<16} {:>10} {:>8} {:>8} {:>14}",
        "scheme", "B/phys pg", "chip", "oracle", "physical pages"
    );
    for scheme in schemes {
        let cfg = SimConfig {
            ftl: scheme.clone(),
            capacity: Some(capacity.clone()),
            precondition: Precondition::Full,
            device: DeviceOverrides {
                page_bytes: Some(page_bytes),
                pages_per_block: Some(ppb),
                ..Default::default()
            },
            ..Default::default()
        };
        match run(&cfg, "uniform:writes=20000,seed=1", &mut |_| true) {
            Ok(r) => {
                let physical = r.count("config.physical_blocks") * ppb as u64;
                let per_page = |key: &str| r.count(key) as f64 / physical as f64;
                let (chip, oracle) = (
                    per_page("sim.chip_memory_bytes"),
                    per_page("sim.oracle_memory_bytes"),
                );
                println!(
                    "{scheme:<16} {:>10.3} {chip:>8.3} {oracle:>8.3} {physical:>14}",
                    chip + oracle
                );
            }
            Err(e) => println!("{scheme:<16} {e}"),
        }
    }
}
