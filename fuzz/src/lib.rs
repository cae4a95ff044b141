//! What every fuzz target checks: the input, read as a trace of one format, gives requests that are sane
//! (offset + length within 2^64, a finite time) or an error that names the input and the line, with quotes
//! clipped; never a panic, a hang or unbounded memory.

use ftlsim_core::trace::{LineReader, RequestSource, TraceError, TraceOptions, FORMATS};
use std::io::Cursor;
use std::path::Path;

/// The `read_trace` target's input: a first line naming a format of `trace::FORMATS`, then the trace, read
/// by [`read_trace`]. Another first line is no input (the corpus seeds name every format: `run.sh`), so a
/// format added to the list is fuzzed with no new target.
pub fn read_named_trace(data: &[u8]) {
    let Some(newline) = data.iter().position(|&b| b == b'\n') else {
        return;
    };
    let name = &data[..newline];
    if let Some(format) = FORMATS.iter().find(|f| f.name.as_bytes() == name) {
        read_trace(format.name, &data[newline + 1..]);
    }
}

/// Reads `data` as a trace of `format`, first failing and then skipping bad lines.
pub fn read_trace(format: &str, data: &[u8]) {
    for skip_bad_lines in [false, true] {
        let opts = TraceOptions {
            format: format.into(),
            skip_bad_lines,
            ..TraceOptions::default()
        };
        let label = Path::new("fuzz.input");
        let mut reader =
            LineReader::from_reader(label, Box::new(Cursor::new(data.to_vec())), &opts).expect("a named format opens");
        while let Some(r) = reader.next_request() {
            match r {
                Ok(r) => {
                    assert!(r.offset.checked_add(r.len).is_some(), "{r:?}");
                    assert!(r.time_us.is_finite(), "{r:?}");
                }
                Err(e) => {
                    assert!(!skip_bad_lines, "skipping never fails: {e}");
                    let message = e.to_string();
                    let TraceError::Parse { line_no, .. } = e else {
                        panic!("a line error: {message}");
                    };
                    assert!(message.starts_with(&format!("fuzz.input:{line_no}:")), "{message}");
                    assert!(message.len() < 2_000, "quotes clipped: {} bytes", message.len());
                    break;
                }
            }
        }
    }
}
