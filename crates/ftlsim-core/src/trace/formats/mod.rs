//! Trace formats: one reader per file behind `RequestSource`, units converted to bytes at the reader.

pub mod blkparse;
pub mod csv;
pub mod fiu;
pub mod most;
pub mod msr;
pub mod ssdsim;
pub mod umass;
pub mod vscsi;

use super::{FormatInfo, FormatWriter};

/// Every trace format, in sniffing order (most specific first). `disksim` never sniffs (its lines are
/// `ssdsim` lines with another time unit), so it must be named.
pub static FORMATS: &[FormatInfo] = &[
    vscsi::FORMAT,
    msr::FORMAT,
    umass::FORMAT,
    fiu::FORMAT,
    most::FORMAT,
    blkparse::FORMAT,
    ssdsim::SSDSIM,
    ssdsim::DISKSIM,
    csv::FORMAT,
];

/// Every format ftlsim writes.
pub static WRITERS: &[FormatWriter] = &[csv::WRITER, ssdsim::WRITER, blkparse::WRITER];

/// Test support: a trace on several devices written by a [`FormatWriter`] and read back.
#[cfg(test)]
pub(crate) mod written {
    use crate::request::Request;
    use crate::trace::{open_on, write, LineReader, RequestSource, TraceError, TraceOptions};

    /// SPC requests on devices 0, 3, 21, 2064 (blkparse's 8,16) and 70,000, in whole sectors, without trims.
    const SPC: &str = "0,8,4096,w,0.000001\n3,16,512,r,0.5\n21,0,1024,w,1.25\n2064,1024,8192,w,2\n\
                       70000,24,512,r,3\n3,0,512,w,3.5\n";

    /// Every request of `source` with the device it names.
    pub fn with_devices(source: &mut dyn RequestSource) -> Vec<(Request, Option<u64>)> {
        std::iter::from_fn(|| Some((source.next_request()?.unwrap(), source.device()))).collect()
    }

    /// The SPC requests read with `opts`, with their devices, and the same written to a file named `name` (its
    /// extension names the format) and read back, or the writer's error.
    #[allow(clippy::type_complexity)]
    pub fn spc_written_as(
        name: &str,
        opts: &TraceOptions,
    ) -> (
        Vec<(Request, Option<u64>)>,
        Result<Vec<(Request, Option<u64>)>, TraceError>,
    ) {
        let dir = std::env::temp_dir();
        let input = dir.join(format!("ftlsim-{}-{name}.spc", std::process::id()));
        let output = dir.join(format!("ftlsim-{}-{name}", std::process::id()));
        std::fs::write(&input, SPC).unwrap();
        let spec = input.to_str().unwrap();
        let source = with_devices(&mut *open_on(spec, opts, 1 << 30, 512, 0).unwrap());
        let back = write(&mut *open_on(spec, opts, 1 << 30, 512, 0).unwrap(), &output).map(|_| {
            let mut reader = LineReader::open(&output, &TraceOptions::default()).unwrap();
            with_devices(&mut reader)
        });
        std::fs::remove_file(&input).unwrap();
        let _ = std::fs::remove_file(&output);
        (source, back)
    }
}
