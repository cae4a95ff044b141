//! Trace reading speed: `cargo bench -p ftlsim-core --bench parse`. For each real trace in `../shared/traces/`
//! (one a format), it writes the trace's lines repeated to about 32 MB into a temporary file, then reads that
//! file through `trace::open` (the format sniffed, as `ftlsim run` reads it) and prints lines, megabytes and
//! requests a second: the best of three readings. What it times is what every run of a trace file pays before
//! the scheme sees a request: reading lines, checking them, splitting fields, parsing numbers.
//! `FTLSIM_BENCH_QUICK=1` writes about 4 MB a trace (a smoke run).

use ftlsim_core::trace::{self, TraceOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// One trace of each line format in the shared traces.
const TRACES: &[&str] = &[
    "msr_rsrch_1.csv",
    "umass_financial1_first10k.ssdsim.ascii",
    "msprod_dtrs100m.ssdsim.trace",
    "cloudphysics_vscsi_sample.csv",
    "fiu_mail_cheetah_2_head9998.blkparse",
    "blkparse_hadoop_java_sdb_50k.txt",
    "android_most_chrome_emmc.po",
];

/// The trace `name`'s lines repeated to at least `bytes`, in a file of the system's temporary directory
/// (a header line, if any, repeats too: the formats skip it wherever it is).
fn repeated(source: &Path, bytes: u64) -> std::io::Result<(PathBuf, u64)> {
    let text = std::fs::read(source)?;
    let name = source.file_name().unwrap().to_string_lossy();
    let path = std::env::temp_dir().join(format!("ftlsim-parse-{}-{name}", std::process::id()));
    let mut out = std::io::BufWriter::new(std::fs::File::create(&path)?);
    let mut written = 0;
    while written < bytes {
        out.write_all(&text)?;
        if !text.ends_with(b"\n") {
            out.write_all(b"\n")?;
        }
        written += text.len() as u64;
    }
    out.flush()?;
    Ok((path, written))
}

fn main() {
    let quick = std::env::var_os("FTLSIM_BENCH_QUICK").is_some();
    let bytes: u64 = if quick { 4 << 20 } else { 32 << 20 };
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces");
    println!(
        "each trace repeated to {} MB, read through trace::open (format sniffed); best of 3",
        bytes >> 20
    );
    println!(
        "{:<40} {:>10} {:>10} {:>8} {:>12}",
        "trace", "lines", "lines/s", "MB/s", "requests/s"
    );
    for name in TRACES {
        let source = dir.join(name);
        if !source.exists() {
            println!("{name:<40} (not found: skipped)");
            continue;
        }
        let (path, written) = repeated(&source, bytes).expect("the temporary copy is written");
        let lines = std::fs::read(&path)
            .unwrap()
            .iter()
            .filter(|&&b| b == b'\n')
            .count() as u64;
        let spec = path.to_str().unwrap();
        let mut best = f64::INFINITY;
        let mut requests = 0u64;
        for _ in 0..3 {
            let started = Instant::now();
            let mut reader = trace::open(spec, &TraceOptions::default(), 1 << 50, 4096)
                .expect("the trace opens");
            requests = 0;
            while let Some(r) = reader.next_request() {
                r.expect("every line reads");
                requests += 1;
            }
            best = best.min(started.elapsed().as_secs_f64());
        }
        std::fs::remove_file(&path).ok();
        println!(
            "{name:<40} {lines:>10} {:>10.0} {:>8.1} {:>12.0}",
            lines as f64 / best,
            written as f64 / 1e6 / best,
            requests as f64 / best
        );
    }
}
