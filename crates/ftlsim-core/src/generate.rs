//! `ftlsim generate`: a built-in workload or a trace file written out as a trace file, read exactly as a run
//! reads it (the run's device sizes a workload; `compact`, `devices` and `writes_only` apply).

use crate::error::{Result, SimError};
use crate::request::{Request, Tag};
use crate::sim::{open_trace, SimConfig};
use crate::trace::{self, RequestSource, TraceError, Wrapped};
use std::path::Path;

/// Writes `trace` (a path or a workload spec) to `output` in the format its extension names (`.csv` native
/// with tags and times, `.trace` / `.ascii` SSDsim, `.blkparse`, both with each request's device; `.gz` on top
/// compresses), on the device of `cfg`. Returns the requests written. An empty output, or an output that is the
/// input, is refused before anything is read. `keep_going` is asked every [`CHECK_EVERY`] requests (and during
/// a `compact` pre-pass); false stops with [`TraceError::Cancelled`].
pub fn generate(
    trace: &str,
    output: &Path,
    cfg: &SimConfig,
    keep_going: &mut (dyn FnMut() -> bool + Send),
) -> Result<Written> {
    if output.as_os_str().is_empty() {
        return Err(SimError::param(
            "generate: the output path is empty; name a file such as out.csv",
        ));
    }
    if let (Ok(a), Ok(b)) = (std::fs::canonicalize(trace), std::fs::canonicalize(output)) {
        if a == b {
            return Err(SimError::param(format!(
                "generate: the output {} is the input trace; write to another file",
                output.display()
            )));
        }
    }
    let writer = trace::writer_for(output)?;
    let inner = open_trace(cfg, trace, &mut |_| keep_going())?;
    let mut tagged = 0;
    let requests = trace::write(&mut cancellable(inner, keep_going, &mut tagged), output)?;
    Ok(Written {
        requests,
        tags_dropped: if writer.keeps_tags { 0 } else { tagged },
    })
}

/// What [`generate`] wrote.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Written {
    pub requests: u64,
    /// Requests tagged data or metadata (which an NVRAM's `metadata` policy reads) written in a format that
    /// has no tag column: their tags are lost.
    pub tags_dropped: u64,
}

/// How often a long `generate` asks whether to go on: a fraction of a second of writing.
pub const CHECK_EVERY: u64 = 1 << 14;

/// `inner`, asking `keep_going` every [`CHECK_EVERY`] requests and ending with `Cancelled` when told, and
/// counting the tagged requests in `tagged`.
fn cancellable<'a>(
    inner: Box<dyn RequestSource>,
    keep_going: &'a mut (dyn FnMut() -> bool + Send),
    tagged: &'a mut u64,
) -> Wrapped<
    impl FnMut(&mut dyn RequestSource) -> Option<std::result::Result<Request, TraceError>> + Send + 'a,
> {
    let mut read = 0u64;
    Wrapped::new(inner, move |inner: &mut dyn RequestSource| {
        read += 1;
        if read.is_multiple_of(CHECK_EVERY) && !keep_going() {
            return Some(Err(TraceError::Cancelled));
        }
        let next = inner.next_request();
        if let Some(Ok(request)) = &next {
            *tagged += (request.tag != Tag::None) as u64;
        }
        next
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn out(name: &str) -> std::path::PathBuf {
        std::env::temp_dir().join(format!("ftlsim-generate-{}-{name}", std::process::id()))
    }

    #[test]
    fn writes_a_workload_and_reads_it_back_request_for_request() {
        let cfg = SimConfig {
            capacity: Some("4MiB".into()),
            ..SimConfig::default()
        };
        let path = out("w.csv");
        let written = generate("uniform:writes=300,seed=1", &path, &cfg, &mut || true)
            .unwrap()
            .requests;
        assert_eq!(written, 300);
        let again = out("again.csv");
        let spec = path.to_str().unwrap();
        assert_eq!(
            generate(spec, &again, &cfg, &mut || true).unwrap().requests,
            300
        );
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            std::fs::read_to_string(&again).unwrap()
        );
        // The output is the input: refused before anything is written.
        let err = generate(spec, &path, &cfg, &mut || true).unwrap_err();
        assert!(err.to_string().contains("is the input trace"), "{err}");
        std::fs::remove_file(path).unwrap();
        std::fs::remove_file(again).unwrap();
    }

    #[test]
    fn refuses_an_empty_output_and_stops_when_told() {
        let cfg = SimConfig::default();
        let err = generate("uniform:writes=10", Path::new(""), &cfg, &mut || true).unwrap_err();
        assert!(err.to_string().contains("output path is empty"), "{err}");
        let path = out("cancelled.csv");
        let err = generate("uniform:writes=100000", &path, &cfg, &mut || false).unwrap_err();
        assert!(
            matches!(err, SimError::Trace(TraceError::Cancelled)),
            "{err}"
        );
        let _ = std::fs::remove_file(path);
    }
}
