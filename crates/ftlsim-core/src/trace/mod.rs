//! Host requests from trace files and built-in workloads.
//!
//! Every trace format is one file behind the [`Format`] trait: it parses one line into a [`Request`] in bytes
//! (units are converted at the reader). [`LineReader`] does the rest once for all formats: streaming, gzip,
//! line numbers, errors that quote the line, `skip_bad_lines`, the device filter and `writes_only`.
//! `format = "auto"` sniffs the first lines against each format in [`FORMATS`] order.

pub mod blkparse;
pub mod csv;
pub mod fat;
pub mod fiu;
pub mod info;
pub mod most;
pub mod msr;
pub mod refs;
pub mod ssdsim;
pub mod umass;
pub mod vscsi;
pub mod workload;

use crate::request::{Op, Request};
use flate2::read::MultiGzDecoder;
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum TraceError {
    #[error("cannot read trace {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },

    #[error("{path}:{line_no}: cannot parse `{line}`: expected {expected} (pass skip_bad_lines=true / --skip-bad-lines to skip such lines)")]
    Parse {
        path: PathBuf,
        line_no: u64,
        line: String,
        expected: String,
    },

    #[error(
        "cannot tell the format of {path}: its first lines match none of {tried}; pass format=NAME"
    )]
    Sniff { path: PathBuf, tried: String },

    #[error("unknown trace format `{name}`; valid formats: {valid}")]
    UnknownFormat { name: String, valid: String },

    #[error("workload `{spec}`: {what}")]
    Workload { spec: String, what: String },

    #[error("trace {spec}: {what}")]
    Option { spec: String, what: String },
}

/// How a trace is read. Absent fields take their defaults.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TraceOptions {
    /// A format name from [`FORMATS`], or "auto" to sniff.
    pub format: String,
    /// Keep only the requests of this device / ASU / disk number (multi-device traces).
    pub device: Option<u64>,
    /// Drop reads and trims.
    pub writes_only: bool,
    /// Count lines that do not parse and go on, instead of failing.
    pub skip_bad_lines: bool,
    /// Unit of the time column of `ssdsim` / `disksim` traces: "ns", "us", "ms" or "s". None: the format's own
    /// (ns for ssdsim, ms for disksim).
    pub time_unit: Option<String>,
    /// blkparse: which event is the request: "D" (dispatch, default), "Q" (queue) or "C" (completion).
    pub blkparse_event: String,
}

impl Default for TraceOptions {
    fn default() -> Self {
        TraceOptions {
            format: "auto".into(),
            device: None,
            writes_only: false,
            skip_bad_lines: false,
            time_unit: None,
            blkparse_event: "D".into(),
        }
    }
}

/// What a format makes of one line.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Parsed {
    /// A header, comment or event that is not a request.
    Skip,
    /// A request, and the device it was issued to where the format says.
    Record {
        request: Request,
        device: Option<u64>,
    },
}

/// One trace format: parses a line, or says what it expected.
pub trait Format: Send {
    fn parse(&mut self, line: &str) -> Result<Parsed, String>;
}

/// A row of the format registry.
pub struct FormatInfo {
    pub name: &'static str,
    pub summary: &'static str,
    /// True when these first non-empty lines of a file look like this format.
    pub sniff: fn(&[&str]) -> bool,
    pub make: fn(&TraceOptions) -> Result<Box<dyn Format>, String>,
}

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

pub fn format(name: &str) -> Result<&'static FormatInfo, TraceError> {
    FORMATS
        .iter()
        .find(|f| f.name == name)
        .ok_or_else(|| TraceError::UnknownFormat {
            name: name.to_string(),
            valid: FORMATS
                .iter()
                .map(|f| f.name)
                .collect::<Vec<_>>()
                .join(", "),
        })
}

/// A stream of host requests.
pub trait RequestSource: Send {
    fn next_request(&mut self) -> Option<Result<Request, TraceError>>;
    /// Lines skipped because they did not parse (with `skip_bad_lines`).
    fn skipped_lines(&self) -> u64 {
        0
    }
    /// (done, total) in whatever unit the source counts progress, for progress bars.
    fn progress(&self) -> (u64, u64);
}

/// Opens a trace file or a built-in workload (`name:k=v,...`). `logical_bytes` is the device's logical
/// capacity (workloads spread over it) and `page_bytes` its page size.
pub fn open(
    spec: &str,
    opts: &TraceOptions,
    logical_bytes: u64,
    page_bytes: u32,
) -> Result<Box<dyn RequestSource>, TraceError> {
    open_on(spec, opts, logical_bytes, page_bytes, 0)
}

/// Like [`open`] on a device whose erase blocks hold `block_bytes` (FAT workloads' `align` needs it).
pub fn open_on(
    spec: &str,
    opts: &TraceOptions,
    logical_bytes: u64,
    page_bytes: u32,
    block_bytes: u64,
) -> Result<Box<dyn RequestSource>, TraceError> {
    if let Some(w) = workload::parse_spec(spec)? {
        return Ok(Box::new(w.build_on(
            logical_bytes,
            page_bytes,
            block_bytes,
        )?));
    }
    Ok(Box::new(LineReader::open(Path::new(spec), opts)?))
}

/// True when `spec` names a built-in workload rather than a file.
pub fn is_workload(spec: &str) -> bool {
    matches!(workload::parse_spec(spec), Ok(Some(_)))
}

/// Requests held in memory.
pub struct VecSource {
    requests: std::vec::IntoIter<Request>,
    total: u64,
}

impl VecSource {
    pub fn new(requests: Vec<Request>) -> VecSource {
        VecSource {
            total: requests.len() as u64,
            requests: requests.into_iter(),
        }
    }
}

impl RequestSource for VecSource {
    fn next_request(&mut self) -> Option<Result<Request, TraceError>> {
        self.requests.next().map(Ok)
    }

    fn progress(&self) -> (u64, u64) {
        (self.total - self.requests.len() as u64, self.total)
    }
}

/// Counts the bytes pulled from the file (compressed bytes for gzip), for progress.
struct CountingReader {
    inner: File,
    count: Arc<AtomicU64>,
}

impl Read for CountingReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// Streams a line-oriented trace through a [`Format`].
pub struct LineReader {
    path: PathBuf,
    lines: Box<dyn BufRead + Send>,
    format: Box<dyn Format>,
    opts: TraceOptions,
    line: String,
    line_no: u64,
    skipped: u64,
    read_bytes: Arc<AtomicU64>,
    total_bytes: u64,
}

/// A trace file opened for reading lines: the lines (decompressed if gzip), the bytes pulled from the file so
/// far, and the file's size.
struct OpenedLines {
    lines: Box<dyn BufRead + Send>,
    read_bytes: Arc<AtomicU64>,
    total_bytes: u64,
}

fn open_lines(path: &Path) -> Result<OpenedLines, TraceError> {
    let io = |source| TraceError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut file = File::open(path).map_err(io)?;
    let total = file.metadata().map_err(io)?.len();
    let mut magic = [0u8; 2];
    let gz = file.read_exact(&mut magic).is_ok() && magic == [0x1f, 0x8b];
    let file = File::open(path).map_err(io)?;
    let count = Arc::new(AtomicU64::new(0));
    let counting = CountingReader {
        inner: file,
        count: count.clone(),
    };
    let lines: Box<dyn BufRead + Send> = if gz {
        Box::new(BufReader::with_capacity(
            1 << 16,
            MultiGzDecoder::new(BufReader::new(counting)),
        ))
    } else {
        Box::new(BufReader::with_capacity(1 << 16, counting))
    };
    Ok(OpenedLines {
        lines,
        read_bytes: count,
        total_bytes: total,
    })
}

/// Reads up to `n` non-empty lines from the start of a file (gzip or not), for sniffing.
pub fn head_lines(path: &Path, n: usize) -> Result<Vec<String>, TraceError> {
    let mut lines = open_lines(path)?.lines;
    let mut out = Vec::new();
    let mut buf = Vec::new();
    while out.len() < n {
        buf.clear();
        let got = lines
            .read_until(b'\n', &mut buf)
            .map_err(|source| TraceError::Io {
                path: path.to_path_buf(),
                source,
            })?;
        if got == 0 {
            break;
        }
        let text = String::from_utf8_lossy(&buf).trim().to_string();
        if !text.is_empty() {
            out.push(text);
        }
    }
    Ok(out)
}

/// Picks the format of a file by its first lines.
pub fn sniff(path: &Path) -> Result<&'static FormatInfo, TraceError> {
    let head = head_lines(path, 8)?;
    let refs: Vec<&str> = head.iter().map(String::as_str).collect();
    FORMATS
        .iter()
        .find(|f| (f.sniff)(&refs))
        .ok_or_else(|| TraceError::Sniff {
            path: path.to_path_buf(),
            tried: FORMATS
                .iter()
                .map(|f| f.name)
                .collect::<Vec<_>>()
                .join(", "),
        })
}

impl LineReader {
    pub fn open(path: &Path, opts: &TraceOptions) -> Result<LineReader, TraceError> {
        let info = if opts.format == "auto" {
            sniff(path)?
        } else {
            format(&opts.format)?
        };
        let format = (info.make)(opts).map_err(|what| TraceError::Option {
            spec: path.display().to_string(),
            what,
        })?;
        let OpenedLines {
            lines,
            read_bytes,
            total_bytes,
        } = open_lines(path)?;
        Ok(LineReader {
            path: path.to_path_buf(),
            lines,
            format,
            opts: opts.clone(),
            line: String::with_capacity(256),
            line_no: 0,
            skipped: 0,
            read_bytes,
            total_bytes,
        })
    }
}

impl RequestSource for LineReader {
    fn next_request(&mut self) -> Option<Result<Request, TraceError>> {
        loop {
            self.line.clear();
            match self.lines.read_line(&mut self.line) {
                Ok(0) => return None,
                Ok(_) => {}
                Err(source) => {
                    return Some(Err(TraceError::Io {
                        path: self.path.clone(),
                        source,
                    }))
                }
            }
            self.line_no += 1;
            let line = self.line.trim_end_matches(['\n', '\r']);
            if line.trim().is_empty() {
                continue;
            }
            match self.format.parse(line) {
                Ok(Parsed::Skip) => continue,
                Ok(Parsed::Record { request, device }) => {
                    if let Some(wanted) = self.opts.device {
                        match device {
                            Some(d) if d != wanted => continue,
                            Some(_) => {}
                            None => {
                                return Some(Err(TraceError::Option {
                                    spec: self.path.display().to_string(),
                                    what: format!(
                                        "device={wanted} was asked for, but this format has no device column \
                                         (line {}); drop the device option",
                                        self.line_no
                                    ),
                                }))
                            }
                        }
                    }
                    if self.opts.writes_only && request.op != Op::Write {
                        continue;
                    }
                    return Some(Ok(request));
                }
                Err(_) if self.opts.skip_bad_lines => {
                    self.skipped += 1;
                    continue;
                }
                Err(expected) => {
                    return Some(Err(TraceError::Parse {
                        path: self.path.clone(),
                        line_no: self.line_no,
                        line: line.chars().take(200).collect(),
                        expected,
                    }))
                }
            }
        }
    }

    fn skipped_lines(&self) -> u64 {
        self.skipped
    }

    fn progress(&self) -> (u64, u64) {
        (self.read_bytes.load(Ordering::Relaxed), self.total_bytes)
    }
}

/// Parses a field as an unsigned integer, or says which field was wrong.
pub fn field_u64(fields: &[&str], i: usize, name: &str) -> Result<u64, String> {
    let f = fields
        .get(i)
        .ok_or_else(|| format!("at least {} fields (missing {name})", i + 1))?;
    f.trim().parse().map_err(|_| {
        format!(
            "{name} (field {}) as an unsigned integer, got `{}`",
            i + 1,
            f.trim()
        )
    })
}

/// Parses a field counting 512 B sectors into bytes.
pub fn field_sectors(fields: &[&str], i: usize, name: &str) -> Result<u64, String> {
    let sectors = field_u64(fields, i, name)?;
    sectors.checked_mul(512).ok_or_else(|| {
        format!(
            "{name} (field {}) of at most {} sectors, got {sectors}",
            i + 1,
            u64::MAX / 512
        )
    })
}

/// A Linux device number from major and minor, as major * 256 + minor (the old `dev_t` encoding).
pub fn device_number(major: u64, minor: u64) -> Option<u64> {
    major.checked_mul(256)?.checked_add(minor)
}

/// Parses a field as a number (integer or decimal).
pub fn field_f64(fields: &[&str], i: usize, name: &str) -> Result<f64, String> {
    let f = fields
        .get(i)
        .ok_or_else(|| format!("at least {} fields (missing {name})", i + 1))?;
    f.trim()
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
        .ok_or_else(|| format!("{name} (field {}) as a number, got `{}`", i + 1, f.trim()))
}

/// The fields of a line split without allocating: the first `N` are kept, `count` says how many there were.
pub struct Fields<'a, const N: usize> {
    fields: [&'a str; N],
    pub count: usize,
}

impl<'a, const N: usize> Fields<'a, N> {
    pub fn new(parts: impl Iterator<Item = &'a str>) -> Self {
        let mut fields = [""; N];
        let mut count = 0;
        for part in parts {
            if count < N {
                fields[count] = part;
            }
            count += 1;
        }
        Fields { fields, count }
    }

    /// Splits on a separator character (empty fields kept).
    pub fn split(line: &'a str, sep: char) -> Self {
        Self::new(line.split(sep))
    }

    /// Splits on runs of whitespace.
    pub fn whitespace(line: &'a str) -> Self {
        Self::new(line.split_whitespace())
    }

    /// The kept fields.
    pub fn as_slice(&self) -> &[&'a str] {
        &self.fields[..self.count.min(N)]
    }

    /// Field `i` trimmed, or "" when absent.
    pub fn get(&self, i: usize) -> &'a str {
        if i < self.count.min(N) {
            self.fields[i].trim()
        } else {
            ""
        }
    }
}

/// Parses a decimal number of seconds (`12.000031865`) into microseconds, exactly when it has at most 9
/// decimals (blkparse and SPC times), else through `f64`.
pub fn seconds_to_us(text: &str) -> Option<f64> {
    let text = text.trim();
    let (whole, frac) = text.split_once('.').unwrap_or((text, ""));
    if frac.len() <= 9 && frac.bytes().all(|b| b.is_ascii_digit()) {
        if let Ok(secs) = whole.parse::<u64>() {
            let mut nanos = 0u64;
            for b in frac.bytes() {
                nanos = nanos * 10 + (b - b'0') as u64;
            }
            nanos *= 10u64.pow(9 - frac.len() as u32);
            if let Some(total) = secs
                .checked_mul(1_000_000_000)
                .and_then(|n| n.checked_add(nanos))
            {
                return Some(total as f64 / 1e3);
            }
        }
    }
    text.parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v >= 0.0)
        .map(|s| s * 1e6)
}

/// Makes an absolute trace clock relative: the first record's time becomes 0.
#[derive(Default)]
pub struct Origin(Option<u64>);

impl Origin {
    /// `t` minus the first time seen, in the clock's own units (negative if the trace steps back).
    pub fn since(&mut self, t: u64) -> f64 {
        let first = *self.0.get_or_insert(t);
        (t as i128 - first as i128) as f64
    }
}
