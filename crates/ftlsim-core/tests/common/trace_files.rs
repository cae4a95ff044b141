//! Trace-file helpers for the trace reader tests (traces.rs, hostile_traces.rs, trace_io.rs).

use ftlsim_core::request::Request;
use ftlsim_core::trace::{LineReader, RequestSource, TraceError, TraceOptions};
use std::path::{Path, PathBuf};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/");

const REAL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/traces/");

/// A real trace from the shared folder (CI has it beside the clone). A missing one fails the test: a test that
/// passes without its data proves nothing. `FTLSIM_TRACES` names the folder when the repository is not cloned
/// next to `shared/` (a git worktree elsewhere).
pub fn real(name: &str) -> PathBuf {
    let dir = std::env::var_os("FTLSIM_TRACES").map_or_else(|| PathBuf::from(REAL), PathBuf::from);
    let path = dir.join(name);
    assert!(
        path.exists(),
        "{} is missing: clone the repository beside `shared/` or set FTLSIM_TRACES to the traces folder",
        path.display()
    );
    path
}

/// A file shipped in `tests/fixtures`.
pub fn fixture(name: &str) -> PathBuf {
    Path::new(FIXTURES).join(name)
}

/// The tiny trace of the format `name`: every row of `trace::FORMATS` ships one, `tests/fixtures/tiny.<name>`,
/// and the reader tests derive their loops from the rows.
pub fn tiny_fixture(name: &str) -> PathBuf {
    fixture(&format!("tiny.{name}"))
}

/// A file under the temp dir, unique to this test binary (its process), the test (its thread's name: tests
/// run in parallel, and two of them writing files of one name raced) and `name`.
pub fn temp(name: &str, contents: &[u8]) -> PathBuf {
    let test = std::thread::current()
        .name()
        .unwrap_or("unnamed")
        .replace("::", "-");
    let dir = std::env::temp_dir()
        .join(format!("ftlsim-tests-{}", std::process::id()))
        .join(test);
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
