//! Simulated requests per second: `cargo bench -p ftlsim-core`. Prints one line per (scheme, workload):
//! requests, wall seconds, requests per second. Measures the whole loop (trace reading or generation,
//! splitting into pages, the scheme, the chip, the integrity check).

use ftlsim_core::sim::{run, Precondition, SimConfig};
use std::path::Path;

fn bench(label: &str, cfg: &SimConfig, trace: &str) {
    let r = run(cfg, trace, &mut |_| true).unwrap_or_else(|e| panic!("{label}: {e}"));
    let requests = r.count("host.requests");
    let wall = r.num("sim.wall_s");
    println!(
        "{label:<44} {:>5} {requests:>10} requests {wall:>8.3} s {:>12.0} requests/s ({:.0} pages/s)",
        cfg.ftl,
        r.num("sim.requests_per_s"),
        (r.count("host.write_pages") + r.count("host.read_pages")) as f64 / wall
    );
}

fn main() {
    let schemes = ["page", "block"];
    for ftl in schemes {
        let cfg = SimConfig {
            ftl: ftl.into(),
            capacity: Some("1GiB".into()),
            ..Default::default()
        };
        bench(
            "uniform 1M single-page writes, 1 GiB",
            &cfg,
            "uniform:writes=1000000,seed=1",
        );
        let cfg = SimConfig {
            precondition: Precondition::Full,
            ..cfg
        };
        bench(
            "same, device preconditioned full",
            &cfg,
            "uniform:writes=1000000,seed=1",
        );
    }
    let traces = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces");
    for name in [
        "msprod_dtrs100m.ssdsim.trace",
        "cloudphysics_vscsi_sample.csv",
    ] {
        let path = traces.join(name);
        if !path.exists() {
            println!("{name}: not found at {}, skipped", path.display());
            continue;
        }
        for ftl in schemes {
            let cfg = SimConfig {
                ftl: ftl.into(),
                ..Default::default()
            };
            bench(name, &cfg, path.to_str().expect("utf-8 path"));
        }
    }
}
