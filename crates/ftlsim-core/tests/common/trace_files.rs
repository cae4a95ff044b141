//! Trace-file helpers for the trace reader tests (traces.rs, hostile_traces.rs).

use ftlsim_core::request::Request;
use ftlsim_core::trace::{LineReader, RequestSource, TraceError, TraceOptions};
use std::path::{Path, PathBuf};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/");

/// A file shipped in `tests/fixtures`.
pub fn fixture(name: &str) -> PathBuf {
    Path::new(FIXTURES).join(name)
}

/// A file under the temp dir, unique to this test binary (its process) and `name`.
pub fn temp(name: &str, contents: &[u8]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ftlsim-tests-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, contents).unwrap();
    path
}

/// Options that name the format instead of sniffing it.
pub fn opts(format: &str) -> TraceOptions {
    TraceOptions {
        format: format.into(),
        ..TraceOptions::default()
    }
}

/// Every request of a file, or the first error.
pub fn read(path: &Path, opts: &TraceOptions) -> Result<Vec<Request>, TraceError> {
    let mut reader = LineReader::open(path, opts)?;
    std::iter::from_fn(|| reader.next_request()).collect()
}

/// Every request of a file that must parse; a bad line fails the test with the reader's message.
pub fn read_all(path: &Path, opts: &TraceOptions) -> Vec<Request> {
    read(path, opts).unwrap_or_else(|e| panic!("{e}"))
}
