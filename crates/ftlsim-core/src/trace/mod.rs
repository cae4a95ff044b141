//! Host requests from trace files and built-in workloads.
//!
//! Every trace format is one file behind the [`Format`] trait: it parses one line into a [`Request`] in bytes
//! (units are converted at the reader). [`LineReader`] does the rest once for all formats: streaming, gzip, zstd
//! and xz (told by their magic number), line numbers, errors that quote the line, `skip_bad_lines`, the device
//! filter, the device layout ([`devices`]) and `writes_only`.
//! `format = "auto"` sniffs the first lines against each format in [`FORMATS`] order.
//!
//! A trace is opened by path several times (sniffing, the pre-passes of its [`Placement`] and capacity, the
//! run), so it must be a file that can be read again: the Python layer copies a pipe, a FIFO or `-` to a temporary file first.

pub mod analysis;
pub mod formats;
pub mod layout;
pub mod read_ahead;
pub mod workloads;

pub use formats::{FORMATS, WRITERS};
use layout::{compact, devices};
use workloads::workload;

use crate::request::{Op, Request};
use devices::{Devices, Layout};
use flate2::read::MultiGzDecoder;
use flate2::write::GzEncoder;
use flate2::Compression;
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Read, Write};
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

    #[error("{path}:{line_no}: cannot parse `{line}`: expected {expected} (pass skip_bad_lines=true to skip such lines)")]
    Parse {
        path: PathBuf,
        line_no: u64,
        line: String,
        expected: String,
    },

    #[error(
        "cannot tell the format of {path}: its first lines match none of {tried}{detail}; pass format=NAME"
    )]
    Sniff {
        path: PathBuf,
        tried: String,
        /// Which line broke the best candidate, and why ("" when no format took even the first line).
        detail: String,
    },

    #[error("trace {path} is empty: it has no line that is not blank (after decompression); give a trace with at least one request")]
    Empty { path: PathBuf },

    #[error("unknown trace format `{name}`; valid formats: {valid}")]
    UnknownFormat { name: String, valid: String },

    #[error("workload `{spec}`: {what}")]
    Workload { spec: String, what: String },

    #[error("trace {spec}: {what}")]
    Option { spec: String, what: String },

    #[error("cancelled")]
    Cancelled,
}

impl TraceError {
    /// The settings the message names as `key=value` (`skip_bad_lines=true`), so that a front end can spell
    /// them its own way (`--skip-bad-lines` on the command line).
    pub fn settings(&self) -> &'static [(&'static str, &'static str)] {
        match self {
            TraceError::Parse { .. } => &[("skip_bad_lines", "true")],
            TraceError::Sniff { .. } => &[("format", "NAME")],
            _ => &[],
        }
    }
}

/// How a trace is read. Absent fields take their defaults.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct TraceOptions {
    /// A format name from [`FORMATS`], or "auto" to sniff.
    pub format: String,
    /// Keep only the requests of this device / ASU / disk number (multi-device traces): a number, or a blkparse
    /// or FIU device's `"major,minor"` (`"8,16"` is 2064, as `ftlsim info` lists it).
    #[serde(deserialize_with = "device_option")]
    #[schemars(schema_with = "device_schema")]
    pub device: Option<u64>,
    /// How the devices of a multi-device trace share the address space: `fold` (one space, the default),
    /// `concat` (a range per device) or a list of devices to keep, concatenated in that order ([`devices`]).
    pub devices: Devices,
    /// Drop reads and trims.
    pub writes_only: bool,
    /// Count lines that do not parse and go on, instead of failing.
    pub skip_bad_lines: bool,
    /// Unit of the time column of `ssdsim` / `disksim` traces: "ns", "us", "ms" or "s". None: the format's own
    /// (ns for ssdsim, ms for disksim).
    pub time_unit: Option<String>,
    /// blkparse: which event is the request: "D" (dispatch, default), "Q" (queue) or "C" (completion).
    pub blkparse_event: String,
    /// Map the 1 MiB extents the trace touches densely onto the device, in address order (a pre-pass reads the
    /// trace once more): a trace spanning terabytes runs on a device of its footprint.
    pub compact: bool,
}

/// What a config may give for `device` ([`device_option`]): a whole number, a blkparse `"major,minor"`, or none.
fn device_schema(_: &mut schemars::gen::SchemaGenerator) -> schemars::schema::Schema {
    use schemars::schema::{InstanceType, SchemaObject};
    SchemaObject {
        instance_type: Some(
            vec![
                InstanceType::Integer,
                InstanceType::String,
                InstanceType::Null,
            ]
            .into(),
        ),
        ..Default::default()
    }
    .into()
}

/// The device number `text` names: a whole number (`2064`) or a blkparse `major,minor` (`8,16`, a minor under
/// 256, as [`device_number`] numbers them).
pub fn parse_device(text: &str) -> Option<u64> {
    match text.split_once(',') {
        Some((major, minor)) => {
            let minor: u64 = minor.trim().parse().ok().filter(|m| *m < 256)?;
            device_number(major.trim().parse().ok()?, minor)
        }
        None => text.trim().parse().ok(),
    }
}

/// `device` from a number or from text ([`parse_device`]); none when absent or null.
fn device_option<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    use serde::de::{Error, Unexpected, Visitor};

    struct DeviceVisitor;
    impl<'de> Visitor<'de> for DeviceVisitor {
        type Value = Option<u64>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a device number (2064) or a blkparse major,minor (\"8,16\")")
        }
        fn visit_none<E: Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_unit<E: Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            d.deserialize_any(self)
        }
        fn visit_u64<E: Error>(self, v: u64) -> Result<Self::Value, E> {
            Ok(Some(v))
        }
        fn visit_i64<E: Error>(self, v: i64) -> Result<Self::Value, E> {
            u64::try_from(v)
                .map(Some)
                .map_err(|_| E::invalid_value(Unexpected::Signed(v), &self))
        }
        fn visit_str<E: Error>(self, v: &str) -> Result<Self::Value, E> {
            parse_device(v)
                .map(Some)
                .ok_or_else(|| E::invalid_value(Unexpected::Str(v), &self))
        }
    }
    d.deserialize_option(DeviceVisitor)
}

impl Default for TraceOptions {
    fn default() -> Self {
        TraceOptions {
            format: "auto".into(),
            device: None,
            devices: Devices::Fold,
            writes_only: false,
            skip_bad_lines: false,
            time_unit: None,
            blkparse_event: "D".into(),
            compact: false,
        }
    }
}

impl TraceOptions {
    /// The options set here that only reading a trace file uses (compaction aside), each with its value as
    /// text: a built-in workload is made, not read, and none of them changes it.
    pub fn set_for_files_only(&self) -> Vec<(&'static str, String)> {
        let default = TraceOptions::default();
        let text = |v: &dyn std::fmt::Display| v.to_string();
        [
            (
                "format",
                (self.format != default.format).then(|| text(&self.format)),
            ),
            ("device", self.device.map(|d| text(&d))),
            (
                "devices",
                (self.devices != default.devices).then(|| text(&self.devices)),
            ),
            ("writes_only", self.writes_only.then(|| text(&true))),
            ("skip_bad_lines", self.skip_bad_lines.then(|| text(&true))),
            ("time_unit", self.time_unit.clone()),
            (
                "blkparse_event",
                (self.blkparse_event != default.blkparse_event)
                    .then(|| self.blkparse_event.clone()),
            ),
        ]
        .into_iter()
        .filter_map(|(option, value)| Some((option, value?)))
        .collect()
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
    /// Whether the records carry arrival times, so that a time of 0 is an arrival at the trace's start
    /// ([`RequestSource::timed`]): every format but `csv` has a time column.
    fn timed(&self) -> bool {
        true
    }
}

/// A row of the format registry.
pub struct FormatInfo {
    pub name: &'static str,
    pub summary: &'static str,
    /// True when these first non-empty lines of a file look like this format.
    pub sniff: fn(&[&str]) -> bool,
    pub make: fn(&TraceOptions) -> Result<Box<dyn Format>, String>,
    /// The trace options of one format or a few that it reads (`time_unit`, `blkparse_event`): setting any
    /// other of them is an error, not an option silently without effect.
    pub options: &'static [&'static str],
}

impl FormatInfo {
    /// The format's reader for `opts`, or what is wrong with them: an option it does not read is named
    /// with the formats that do.
    fn reader(&self, opts: &TraceOptions) -> Result<Box<dyn Format>, String> {
        let readers = |option: &str| -> Vec<&str> {
            FORMATS
                .iter()
                .filter(|f| f.options.contains(&option))
                .map(|f| f.name)
                .collect()
        };
        // The options set that some format reads, this one not.
        let unread = opts
            .set_for_files_only()
            .into_iter()
            .find(|(option, _)| !self.options.contains(option) && !readers(option).is_empty());
        if let Some((option, value)) = unread {
            return Err(format!(
                "{option}={value} applies to {} traces only, and this trace is read as {}: drop the option \
                 (or name the trace's format with format=... if it is not {})",
                readers(option).join(" and "),
                self.name,
                self.name
            ));
        }
        (self.make)(opts)
    }
}

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

/// A trace format ftlsim writes (`generate` / `convert`), chosen by the output's extension.
pub struct FormatWriter {
    /// The reader's name in [`FORMATS`] that reads the output back.
    pub name: &'static str,
    /// Extensions that name the format (before an optional `.gz`).
    pub extensions: &'static [&'static str],
    pub header: &'static str,
    /// Whether a line holds the request's device, read back as the same number. A writer without one refuses
    /// a source on more than one device ([`write`]).
    pub keeps_device: bool,
    /// Whether a line holds the request's tag (data, metadata); a writer without one drops it
    /// ([`crate::generate::Written::tags_dropped`]).
    pub keeps_tags: bool,
    /// Why a request cannot be written in this format without changing it.
    pub check: fn(&Request) -> Result<(), String>,
    /// One request, its device ([`RequestSource::device`]; None: the format's default device) and whether
    /// its source is timed ([`RequestSource::timed`]).
    pub line: fn(&mut dyn Write, &Request, Option<u64>, bool) -> std::io::Result<()>,
}

/// A request's (offset, length) in 512 B sectors, or why it is not on that grid.
pub fn sectors_of(r: &Request) -> Result<(u64, u64), String> {
    if !r.offset.is_multiple_of(512) || !r.len.is_multiple_of(512) {
        return Err(format!(
            "offset {} and length {} that are not whole 512 B sectors (write .csv, which keeps bytes)",
            r.offset, r.len
        ));
    }
    Ok((r.offset / 512, r.len / 512))
}

/// The writer an output path names by its extension (`.gz` compresses on top), or the valid extensions.
pub fn writer_for(path: &Path) -> Result<&'static FormatWriter, TraceError> {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let name = name.strip_suffix(".gz").unwrap_or(name);
    let ext = name.rsplit_once('.').map_or("", |(_, e)| e);
    WRITERS
        .iter()
        .find(|w| w.extensions.contains(&ext))
        .ok_or_else(|| TraceError::Option {
            spec: path.display().to_string(),
            what: format!(
                "{}; use one of {} (each optionally .gz)",
                if ext.is_empty() {
                    // `-` (standard output) or a FIFO without one: the format is named by the extension.
                    "has no extension to name the format to write (a trace is written to a file, e.g. \
                     out.csv; not to standard output)"
                        .to_string()
                } else {
                    format!("the extension `.{}` names no format ftlsim writes", clip(ext))
                },
                WRITERS
                    .iter()
                    .flat_map(|w| w.extensions.iter().map(move |e| format!(".{e} ({})", w.name)))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        })
}

/// Writes every request of `source` to `path` in the format its extension names (gzip when it ends in `.gz`).
/// A regular file (new or old) is written through a temporary file renamed into place, so a failure leaves no
/// half-written output; a symlink is written through to the file it names (the link stays); a FIFO or device
/// is written directly. A new file gets the umask's mode, a replaced one keeps its mode. Refuses a request the
/// format cannot hold unchanged, naming it, and a source on more than one device when the format has no device
/// column, and a source of no request. Returns the number of requests written.
pub fn write(source: &mut dyn RequestSource, path: &Path) -> Result<u64, TraceError> {
    let writer = writer_for(path)?;
    let io = |source| TraceError::Io {
        path: path.to_path_buf(),
        source,
    };
    let gz = path.extension().is_some_and(|e| e == "gz");
    let target = follow_links(path).map_err(io)?;
    let existing = std::fs::metadata(&target).ok();
    let direct = existing.as_ref().is_some_and(|m| !m.is_file());
    let tmp = if direct {
        target.clone()
    } else {
        let mut tmp_name = target.file_name().unwrap_or_default().to_os_string();
        tmp_name.push(format!(".tmp-{}", std::process::id()));
        target.with_file_name(tmp_name)
    };
    let result = (|| {
        let file = if direct {
            std::fs::OpenOptions::new().write(true).open(&tmp)
        } else {
            File::create(&tmp)
        }
        .map_err(io)?;
        if let Some(old) = existing.as_ref().filter(|_| !direct) {
            file.set_permissions(old.permissions()).map_err(io)?;
        }
        let mut out: Box<dyn Write> = if gz {
            Box::new(BufWriter::new(GzEncoder::new(file, Compression::default())))
        } else {
            Box::new(BufWriter::new(file))
        };
        out.write_all(writer.header.as_bytes()).map_err(io)?;
        let mut n = 0u64;
        // The device of the first request, for a writer without a device column.
        let mut first_device = None;
        while let Some(request) = source.next_request() {
            let r = request?;
            let device = source.device();
            let first = *first_device.get_or_insert(device);
            if !writer.keeps_device && device != first {
                return Err(devices_lost(writer, path, n + 1, &*source, first, device));
            }
            (writer.check)(&r).map_err(|what| TraceError::Option {
                spec: path.display().to_string(),
                what: format!(
                    "{} cannot hold request #{} ({}): it has {what}",
                    writer.name,
                    n + 1,
                    source.position().unwrap_or_else(|| "generated".into())
                ),
            })?;
            (writer.line)(&mut *out, &r, device, source.timed()).map_err(io)?;
            n += 1;
        }
        if n == 0 {
            // A file of no request is no trace: nothing reads it back (a trace file is sniffed by its lines).
            return Err(TraceError::Option {
                spec: path.display().to_string(),
                what:
                    "not written: the source has no request to write (a workload of writes=0, or a \
                       filter such as writes_only that kept none)"
                        .into(),
            });
        }
        out.flush().map_err(io)?;
        drop(out);
        if !direct {
            std::fs::rename(&tmp, &target).map_err(io)?;
        }
        Ok(n)
    })();
    if result.is_err() && !direct {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Why `writer`, which has no device column, refuses request #`n` of `source`, on another device than the first.
/// Refused rather than written with a warning: the devices would be lost without a trace in the file, and a
/// later run with `devices` or `device` would give other figures than the original (or fail far from here).
#[cold]
fn devices_lost(
    writer: &FormatWriter,
    path: &Path,
    n: u64,
    source: &dyn RequestSource,
    first: Option<u64>,
    device: Option<u64>,
) -> TraceError {
    let shown = |d: Option<u64>| d.map_or_else(|| "none".to_string(), |d| d.to_string());
    let keeping: Vec<String> = WRITERS
        .iter()
        .filter(|w| w.keeps_device)
        .flat_map(|w| {
            w.extensions
                .iter()
                .map(move |e| format!(".{e} ({})", w.name))
        })
        .collect();
    TraceError::Option {
        spec: path.display().to_string(),
        what: format!(
            "{} has no device column, but the trace has more than one device: request #{n} ({}) is on device {}, \
             the first on device {}; write {}, which keep each request's device, or pass devices=concat (or \
             device=N) to write the devices as one address space",
            writer.name,
            source.position().unwrap_or_else(|| "generated".into()),
            shown(device),
            shown(first),
            keeping.join(", ")
        ),
    }
}

/// The file `path` names once its symlinks are followed (the link's target, even one that does not exist yet),
/// so an output written through a link replaces the target, not the link.
fn follow_links(path: &Path) -> std::io::Result<PathBuf> {
    let mut at = path.to_path_buf();
    // Linux's own limit on links followed (ELOOP past it).
    for _ in 0..40 {
        match std::fs::symlink_metadata(&at) {
            Ok(m) if m.file_type().is_symlink() => {
                let to = std::fs::read_link(&at)?;
                at = at.parent().unwrap_or(Path::new("")).join(to);
            }
            _ => return Ok(at),
        }
    }
    Err(std::io::Error::other("too many levels of symbolic links"))
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
    /// The device (ASU, disk number) the last request was issued to, where the source keeps devices apart: None
    /// for generated requests, a format without a device column, and requests a layout (`devices` other than
    /// `fold`) has moved into one address space.
    fn device(&self) -> Option<u64> {
        None
    }
    /// Where the last request came from ("path:line"), for errors about it; None for generated requests.
    fn position(&self) -> Option<String> {
        None
    }
    /// A cheap mark of where the last request came from (its line), kept by a reader that reads on before it
    /// serves a request; [`RequestSource::position_at`] turns it into a position when an error needs one.
    fn mark(&self) -> u64 {
        0
    }
    /// [`RequestSource::position`] of the request that was the last one read when `mark` was taken.
    fn position_at(&self, _mark: u64) -> Option<String> {
        self.position()
    }
    /// Whether the requests carry arrival times: a request at time 0 then arrives at the trace's start, where
    /// in a source without times (most built-in workloads) it arrives when the host can submit it. Known once
    /// the first request is read.
    fn timed(&self) -> bool {
        false
    }
    /// [`RequestSource::position_at`] as a function that does not hold the source, for a reader that moves
    /// the source to a thread of its own ([`read_ahead::read_ahead`]); None where positions are not kept.
    fn position_namer(&self) -> Option<PositionNamer> {
        None
    }
}

/// Names the position of a mark ([`RequestSource::position_namer`]).
pub type PositionNamer = Arc<dyn Fn(u64) -> Option<String> + Send + Sync>;

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

/// Like [`open`] on a device whose erase blocks hold `block_bytes` (FAT workloads' `align` needs it; device
/// ranges are rounded up to it, to a page when it is 0), making the [`Placement`] the options ask for first.
pub fn open_on(
    spec: &str,
    opts: &TraceOptions,
    logical_bytes: u64,
    page_bytes: u32,
    block_bytes: u64,
) -> Result<Box<dyn RequestSource>, TraceError> {
    let on = Target {
        logical_bytes,
        page_bytes,
        block_bytes,
    };
    let placement = Placement::survey(spec, opts, &on, &mut |_, _| true)?;
    open_placed(spec, opts, &placement, &on)
}

/// The device a trace is read onto: its logical capacity (a workload spreads over it), its page and its
/// erase block (a FAT workload's `align`; device ranges are rounded up to it, to a page when it is 0).
#[derive(Clone, Copy, Debug)]
pub struct Target {
    pub logical_bytes: u64,
    pub page_bytes: u32,
    pub block_bytes: u64,
}

/// Where a trace's requests land on the device: the layout of a multi-device trace's devices
/// ([`devices`], `devices` other than `fold`) and the compaction map ([`compact`], `compact = true`), each
/// made by one pre-pass over the trace and shared by every reading of it.
#[derive(Clone, Debug, Default)]
pub struct Placement {
    pub layout: Option<Layout>,
    pub compaction: Option<Arc<compact::Compaction>>,
}

impl Placement {
    /// The end of the trace's furthest request once placed, where a pre-pass made it known: the compacted
    /// image's end, else the devices' laid end to end.
    pub fn highest_address(&self) -> Option<u64> {
        match (&self.compaction, &self.layout) {
            (Some(map), _) => Some(map.highest_address()),
            (None, Some(layout)) => Some(layout.total_bytes()),
            (None, None) => None,
        }
    }

    /// The pre-passes `opts` asks of `spec`: the device layout, then the compaction map of the laid-out
    /// requests. `progress(done, total)` is told how they go; false cancels with [`TraceError::Cancelled`].
    pub fn survey(
        spec: &str,
        opts: &TraceOptions,
        on: &Target,
        progress: &mut dyn FnMut(u64, u64) -> bool,
    ) -> Result<Placement, TraceError> {
        let block_bytes = on.block_bytes.max(on.page_bytes as u64);
        Placement {
            layout: devices::layout(spec, opts, block_bytes, progress)?,
            compaction: None,
        }
        .compacted(spec, opts, on, progress)
    }

    /// This placement with the compaction map `opts.compact` asks for (one pass over the trace read with the
    /// layout), unless it has one.
    pub fn compacted(
        mut self,
        spec: &str,
        opts: &TraceOptions,
        on: &Target,
        progress: &mut dyn FnMut(u64, u64) -> bool,
    ) -> Result<Placement, TraceError> {
        if opts.compact && self.compaction.is_none() {
            let scan = open_laid_out(spec, opts, self.layout.as_ref(), on)?;
            self.compaction = Some(Arc::new(compact::Compaction::scan(scan, progress)?));
        }
        Ok(self)
    }
}

/// Opens `spec` from its start with the placement made for it ([`Placement::survey`]): the one opener of a
/// trace that is read more than once.
pub fn open_placed(
    spec: &str,
    opts: &TraceOptions,
    placement: &Placement,
    on: &Target,
) -> Result<Box<dyn RequestSource>, TraceError> {
    let source = open_laid_out(spec, opts, placement.layout.as_ref(), on)?;
    Ok(match &placement.compaction {
        Some(map) if opts.compact => compact::compacted(source, map.clone()),
        _ => source,
    })
}

/// A workload built on the device, or the file read with the device layout (not compacted).
fn open_laid_out(
    spec: &str,
    opts: &TraceOptions,
    layout: Option<&Layout>,
    on: &Target,
) -> Result<Box<dyn RequestSource>, TraceError> {
    if let Some(w) = workload::parse_spec(spec)? {
        return Ok(Box::new(w.build_on(
            on.logical_bytes,
            on.page_bytes,
            on.block_bytes,
        )?));
    }
    Ok(Box::new(
        LineReader::open(Path::new(spec), opts)?.with_layout(layout.cloned()),
    ))
}

/// True when `spec` names a built-in workload rather than a file.
pub fn is_workload(spec: &str) -> bool {
    matches!(workload::parse_spec(spec), Ok(Some(_)))
}

/// Another source's requests passed through `step` (which pulls the next one from the source it is given and
/// may change or refuse it); skipped lines, progress, devices and positions are the inner source's.
pub struct Wrapped<F> {
    inner: Box<dyn RequestSource>,
    step: F,
}

impl<F> Wrapped<F>
where
    F: FnMut(&mut dyn RequestSource) -> Option<Result<Request, TraceError>> + Send,
{
    pub fn new(inner: Box<dyn RequestSource>, step: F) -> Wrapped<F> {
        Wrapped { inner, step }
    }
}

impl<F> RequestSource for Wrapped<F>
where
    F: FnMut(&mut dyn RequestSource) -> Option<Result<Request, TraceError>> + Send,
{
    fn next_request(&mut self) -> Option<Result<Request, TraceError>> {
        (self.step)(self.inner.as_mut())
    }

    fn skipped_lines(&self) -> u64 {
        self.inner.skipped_lines()
    }

    fn progress(&self) -> (u64, u64) {
        self.inner.progress()
    }

    fn device(&self) -> Option<u64> {
        self.inner.device()
    }

    fn position(&self) -> Option<String> {
        self.inner.position()
    }

    fn mark(&self) -> u64 {
        self.inner.mark()
    }

    fn position_at(&self, mark: u64) -> Option<String> {
        self.inner.position_at(mark)
    }

    fn position_namer(&self) -> Option<PositionNamer> {
        self.inner.position_namer()
    }

    fn timed(&self) -> bool {
        self.inner.timed()
    }
}

/// Requests held in memory; timed when any of them has a time.
pub struct VecSource {
    requests: std::vec::IntoIter<Request>,
    total: u64,
    timed: bool,
}

impl VecSource {
    pub fn new(requests: Vec<Request>) -> VecSource {
        VecSource {
            total: requests.len() as u64,
            timed: requests.iter().any(|r| r.time_us > 0.0),
            requests: requests.into_iter(),
        }
    }
}

impl RequestSource for VecSource {
    fn next_request(&mut self) -> Option<Result<Request, TraceError>> {
        self.requests.next().map(Ok)
    }

    fn timed(&self) -> bool {
        self.timed
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
    format_name: &'static str,
    /// The device of the last request, where the format names one.
    device: Option<u64>,
    /// Where each kept device's range starts (`devices` other than `fold`).
    layout: Option<Layout>,
    line: Vec<u8>,
    /// The last line was too long and its rest is still to be skipped.
    rest_of_line: bool,
    line_no: u64,
    skipped: u64,
    read_bytes: Arc<AtomicU64>,
    total_bytes: u64,
    /// With `device` asked for: whether a request was on it, and the first [`OTHER_DEVICES`] other devices
    /// met, each with its requests, to say which there are when none is ([`LineReader::no_such_device`]).
    met_device: bool,
    other_devices: Vec<(u64, u64)>,
}

/// How many other devices a reader asked for one device counts, to name them when the trace has none of it.
const OTHER_DEVICES: usize = 8;

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
    let file = File::open(path).map_err(io)?;
    let total = file.metadata().map_err(io)?.len();
    let count = Arc::new(AtomicU64::new(0));
    let mut raw = BufReader::with_capacity(
        1 << 16,
        CountingReader {
            inner: file,
            count: count.clone(),
        },
    );
    let codec = Codec::of(peek(&mut raw).map_err(io)?);
    let lines: Box<dyn BufRead + Send> = match codec {
        Codec::None => Box::new(raw),
        Codec::Gzip => Box::new(BufReader::with_capacity(1 << 16, MultiGzDecoder::new(raw))),
        Codec::Zstd => Box::new(BufReader::with_capacity(1 << 16, ZstdFrames::new(raw))),
        Codec::Xz => Box::new(BufReader::with_capacity(
            1 << 16,
            lzma_rust2::XzReader::new(raw, true),
        )),
        Codec::Unread(name, undo) => {
            return Err(TraceError::Option {
                spec: path.display().to_string(),
                what: format!(
                    "it is compressed with {name}, which ftlsim does not read; decompress it ({undo}), or \
                     recompress it with gzip, zstd or xz"
                ),
            })
        }
    };
    Ok(OpenedLines {
        lines,
        read_bytes: count,
        total_bytes: total,
    })
}

/// How a trace file is compressed, told by its first bytes (not its name, so a pipe spooled to a nameless
/// file reads as well): gzip, zstd and xz are decompressed as they are read; other compressors are named in a
/// refusal rather than parsed as text.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Codec {
    None,
    Gzip,
    Zstd,
    Xz,
    /// A compressor ftlsim does not read, by name, and the command that undoes it.
    Unread(&'static str, &'static str),
}

impl Codec {
    fn of(magic: &[u8]) -> Codec {
        if magic.starts_with(&[0x1f, 0x8b]) {
            Codec::Gzip
        } else if magic.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
            Codec::Zstd
        } else if magic.starts_with(&[0xfd, b'7', b'z', b'X', b'Z', 0x00]) {
            Codec::Xz
        } else if magic.starts_with(b"BZh") {
            Codec::Unread("bzip2", "bunzip2")
        } else if magic.starts_with(&[0x04, 0x22, 0x4d, 0x18]) {
            Codec::Unread("lz4", "unlz4")
        } else {
            Codec::None
        }
    }
}

/// A zstd stream of one or more frames, decompressed: ruzstd's `StreamingDecoder` reads one frame, and `zstd`
/// and `pzstd` may write several, with skippable frames (RFC 8878 §3.1.2) anywhere between them.
struct ZstdFrames<R: BufRead> {
    source: R,
    decoder: ruzstd::decoding::FrameDecoder,
    /// A frame's header has been read and its blocks are being decoded.
    in_frame: bool,
}

impl<R: BufRead> ZstdFrames<R> {
    fn new(source: R) -> Self {
        ZstdFrames {
            source,
            decoder: ruzstd::decoding::FrameDecoder::new(),
            in_frame: false,
        }
    }

    /// Reads the next frame's header; false at the end of the input.
    fn next_frame(&mut self) -> std::io::Result<bool> {
        use ruzstd::decoding::errors::{FrameDecoderError, ReadFrameHeaderError};
        loop {
            if peek(&mut self.source)?.is_empty() {
                return Ok(false);
            }
            match self.decoder.reset(&mut self.source) {
                Ok(()) => return Ok(true),
                Err(FrameDecoderError::ReadFrameHeaderError(ReadFrameHeaderError::SkipFrame {
                    length,
                    ..
                })) => {
                    std::io::copy(
                        &mut (&mut self.source).take(length as u64),
                        &mut std::io::sink(),
                    )?;
                }
                Err(e) => return Err(std::io::Error::new(std::io::ErrorKind::InvalidData, e)),
            }
        }
    }
}

impl<R: BufRead> Read for ZstdFrames<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        use ruzstd::decoding::BlockDecodingStrategy;
        loop {
            if !self.in_frame {
                if !self.next_frame()? {
                    return Ok(0);
                }
                self.in_frame = true;
            }
            while self.decoder.can_collect() == 0 && !self.decoder.is_finished() {
                self.decoder
                    .decode_blocks(&mut self.source, BlockDecodingStrategy::UptoBlocks(1))
                    .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))?;
            }
            let n = self.decoder.read(buf)?;
            if n > 0 || buf.is_empty() {
                return Ok(n);
            }
            // The frame is finished and drained: on to the next one.
            self.in_frame = false;
        }
    }
}

/// The first bytes of `input`, left unread: one fill of its buffer, which holds the whole magic number for a
/// file (a read of a regular file is short only at its end); a pipe is spooled to a file before it is read.
fn peek(input: &mut impl BufRead) -> std::io::Result<&[u8]> {
    loop {
        match input.fill_buf() {
            Ok(_) => break,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
    input.fill_buf()
}

/// Longest line a reader holds, in bytes: a longer line is an error (or skipped), so a file without newlines
/// (`/dev/zero`) cannot grow memory.
pub const MAX_LINE_BYTES: usize = 64 << 10;

pub use crate::text::{clip, quote_bytes, MAX_QUOTE_CHARS};

/// The longest reader message, in characters: a reader's own words are far shorter, so only quoted input
/// (backquotes inside the input itself defeat [`clip_quoted`]'s pairing: the fuzzer found it) reaches it.
const MAX_MESSAGE_CHARS: usize = 400;

/// Clips every backquoted piece of a reader's message to [`MAX_QUOTE_CHARS`], whatever the reader quoted, and
/// the whole message to [`MAX_MESSAGE_CHARS`].
fn clip_quoted(message: &str) -> String {
    let clipped = message
        .split('`')
        .enumerate()
        .map(|(i, part)| {
            if i % 2 == 1 {
                clip(part)
            } else {
                part.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("`");
    match clipped.char_indices().nth(MAX_MESSAGE_CHARS) {
        None => clipped,
        Some((cut, _)) => format!("{}... (message clipped)", &clipped[..cut]),
    }
}

/// How one bounded line read ended.
enum LineRead {
    /// End of input.
    Eof,
    /// A line (without its newline) is in the buffer.
    Line,
    /// The line is longer than [`MAX_LINE_BYTES`]; its first bytes are in the buffer, the rest is still unread.
    TooLong,
}

/// Reads one line into `buf` as bytes, holding at most [`MAX_LINE_BYTES`].
fn read_bounded(input: &mut dyn BufRead, buf: &mut Vec<u8>) -> std::io::Result<LineRead> {
    buf.clear();
    loop {
        let chunk = match input.fill_buf() {
            Ok(c) => c,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if chunk.is_empty() {
            return Ok(if buf.is_empty() {
                LineRead::Eof
            } else {
                LineRead::Line
            });
        }
        let room = MAX_LINE_BYTES - buf.len();
        match memchr::memchr(b'\n', &chunk[..chunk.len().min(room + 1)]) {
            Some(i) => {
                buf.extend_from_slice(&chunk[..i]);
                input.consume(i + 1);
                return Ok(LineRead::Line);
            }
            None if chunk.len() > room => {
                buf.extend_from_slice(&chunk[..room]);
                input.consume(room);
                return Ok(LineRead::TooLong);
            }
            None => {
                let n = chunk.len();
                buf.extend_from_slice(chunk);
                input.consume(n);
            }
        }
    }
}

/// Discards input up to and including the next newline; false at end of input.
fn skip_rest_of_line(input: &mut dyn BufRead) -> std::io::Result<bool> {
    loop {
        let chunk = match input.fill_buf() {
            Ok(c) => c,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if chunk.is_empty() {
            return Ok(false);
        }
        match memchr::memchr(b'\n', chunk) {
            Some(i) => {
                input.consume(i + 1);
                return Ok(true);
            }
            None => {
                let n = chunk.len();
                input.consume(n);
            }
        }
    }
}

/// A line's bytes as text: the UTF-8 byte-order mark dropped on line 1, the newline's `\r` dropped, or what is
/// wrong with it.
fn line_text(buf: &[u8], line_no: u64) -> Result<&str, String> {
    let bytes = if line_no == 1 {
        buf.strip_prefix(b"\xef\xbb\xbf").unwrap_or(buf)
    } else {
        buf
    };
    let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
    std::str::from_utf8(bytes).map_err(|e| {
        format!(
            "UTF-8 text, got the byte 0x{:02x} at column {}",
            bytes[e.valid_up_to()],
            e.valid_up_to() + 1
        )
    })
}

/// What is wrong with a line longer than [`MAX_LINE_BYTES`].
fn too_long() -> String {
    format!("a line of at most {MAX_LINE_BYTES} bytes (no newline within that many)")
}

/// The first lines of a file, and the line that ended them early.
pub struct Head {
    /// (line number, trimmed text) of each non-empty line.
    pub lines: Vec<(u64, String)>,
    /// (line number, the line as far as it can be shown, what was expected) of a line that cannot be text.
    pub broken: Option<(u64, String, String)>,
}

/// Up to `n` non-empty lines from the start of a file (gzip or not) with their line numbers, for sniffing. A
/// line that is too long or not UTF-8 ends the head with its error (line number and what was expected).
pub fn head_lines(path: &Path, n: usize) -> Result<Head, TraceError> {
    let mut lines = open_lines(path)?.lines;
    let mut out = Vec::new();
    let mut buf = Vec::new();
    let mut line_no = 0;
    while out.len() < n {
        let read = read_bounded(&mut *lines, &mut buf).map_err(|source| TraceError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        line_no += 1;
        let text = match read {
            LineRead::Eof => break,
            LineRead::TooLong => {
                let shown = quote_bytes(&buf[..MAX_QUOTE_CHARS * 4]);
                return Ok(Head {
                    lines: out,
                    broken: Some((line_no, shown, too_long())),
                });
            }
            LineRead::Line => match line_text(&buf, line_no) {
                Ok(t) => t.trim().to_string(),
                Err(e) => {
                    let shown = quote_bytes(&buf);
                    return Ok(Head {
                        lines: out,
                        broken: Some((line_no, shown, e)),
                    });
                }
            },
        };
        if !text.is_empty() {
            out.push((line_no, text));
        }
    }
    Ok(Head {
        lines: out,
        broken: None,
    })
}

/// Lines sniffing looks at.
const SNIFF_LINES: usize = 8;

/// Picks the format of a file by its first lines: the first format in [`FORMATS`] order that takes them all.
/// When none does, the best candidate is the format taking the longest run of first lines; with
/// `skip_bad_lines` it is chosen if it takes every line but the one that broke it (the reader then skips that
/// line), else the error names that line and the candidate's complaint.
pub fn sniff(path: &Path, opts: &TraceOptions) -> Result<&'static FormatInfo, TraceError> {
    let Head {
        lines: head,
        broken,
    } = head_lines(path, SNIFF_LINES)?;
    if head.is_empty() && broken.is_none() {
        return Err(TraceError::Empty {
            path: path.to_path_buf(),
        });
    }
    let refs: Vec<&str> = head.iter().map(|(_, l)| l.as_str()).collect();
    if broken.is_none() || opts.skip_bad_lines {
        if let Some(f) = FORMATS
            .iter()
            .find(|f| !refs.is_empty() && (f.sniff)(&refs))
        {
            return Ok(f);
        }
    }
    let tried = FORMATS
        .iter()
        .map(|f| f.name)
        .collect::<Vec<_>>()
        .join(", ");
    // The longest run of first lines each format takes (whole head when the run is all of it).
    let run = |f: &FormatInfo| {
        (1..=refs.len())
            .rev()
            .find(|&k| (f.sniff)(&refs[..k]))
            .unwrap_or(0)
    };
    let best =
        FORMATS
            .iter()
            .map(|f| (run(f), f))
            .fold(None::<(usize, &FormatInfo)>, |acc, (k, f)| match acc {
                Some((best_k, _)) if best_k >= k => acc,
                _ if k == 0 => acc,
                _ => Some((k, f)),
            });
    let detail = match (best, &broken) {
        (Some((k, f)), _) if k < refs.len() => {
            let (line_no, line) = &head[k];
            let rest: Vec<&str> = refs
                .iter()
                .enumerate()
                .filter(|&(i, _)| i != k)
                .map(|(_, l)| *l)
                .collect();
            let one_bad_line = (f.sniff)(&rest);
            if opts.skip_bad_lines && one_bad_line {
                return Ok(f);
            }
            let complaint = (f.make)(opts)
                .ok()
                .and_then(|mut parser| {
                    refs[..=k]
                        .iter()
                        .map(|l| parser.parse(l))
                        .last()
                        .and_then(Result::err)
                })
                .unwrap_or_else(|| "a line that agrees with the lines before it".into());
            if one_bad_line {
                // The candidate takes every other line: the format is plain, and this line is what is wrong
                // (said as a line deeper in the file is, with the way to skip it).
                return Err(TraceError::Parse {
                    path: path.to_path_buf(),
                    line_no: *line_no,
                    line: clip(line),
                    expected: complaint,
                });
            }
            format!(
                "; the best candidate `{}` took the lines before line {line_no}, which it rejects: `{}`: expected {}",
                f.name,
                clip(line),
                clip_quoted(&complaint)
            )
        }
        (_, Some((line_no, line, complaint))) => {
            format!("; line {line_no} `{}`: expected {complaint}", clip(line))
        }
        _ => String::new(),
    };
    Err(TraceError::Sniff {
        path: path.to_path_buf(),
        tried,
        detail,
    })
}

impl LineReader {
    pub fn open(path: &Path, opts: &TraceOptions) -> Result<LineReader, TraceError> {
        let info = if opts.format == "auto" {
            sniff(path, opts)?
        } else {
            format(&opts.format)?
        };
        let format = info.reader(opts).map_err(|what| TraceError::Option {
            spec: path.display().to_string(),
            what,
        })?;
        let OpenedLines {
            mut lines,
            read_bytes,
            total_bytes,
        } = open_lines(path)?;
        let empty = peek(&mut lines)
            .map_err(|source| TraceError::Io {
                path: path.to_path_buf(),
                source,
            })?
            .is_empty();
        if empty {
            return Err(TraceError::Empty {
                path: path.to_path_buf(),
            });
        }
        Ok(LineReader {
            path: path.to_path_buf(),
            format_name: info.name,
            device: None,
            layout: None,
            lines,
            format,
            opts: opts.clone(),
            line: Vec::with_capacity(256),
            rest_of_line: false,
            line_no: 0,
            skipped: 0,
            read_bytes,
            total_bytes,
            met_device: false,
            other_devices: Vec::new(),
        })
    }

    /// Reads lines from `input` (already decompressed) in the format `opts.format` names (sniffing needs a
    /// file); `label` names the input in errors. For input that is not a file: fuzzing, tests, pipes.
    pub fn from_reader(
        label: &Path,
        input: Box<dyn BufRead + Send>,
        opts: &TraceOptions,
    ) -> Result<LineReader, TraceError> {
        let info = format(&opts.format)?;
        let format = info.reader(opts).map_err(|what| TraceError::Option {
            spec: label.display().to_string(),
            what,
        })?;
        Ok(LineReader {
            path: label.to_path_buf(),
            format_name: info.name,
            device: None,
            layout: None,
            lines: input,
            format,
            opts: opts.clone(),
            line: Vec::with_capacity(256),
            rest_of_line: false,
            line_no: 0,
            skipped: 0,
            read_bytes: Arc::new(AtomicU64::new(0)),
            total_bytes: 0,
            met_device: false,
            other_devices: Vec::new(),
        })
    }

    /// Moves each request into its device's range of `layout` and drops the devices it does not keep.
    pub fn with_layout(mut self, layout: Option<Layout>) -> LineReader {
        self.layout = layout;
        self
    }

    /// The name of the format being read (the sniffed one for `format = "auto"`).
    pub fn format_name(&self) -> &'static str {
        self.format_name
    }

    fn parse_error(&self, line: String, expected: String) -> TraceError {
        TraceError::Parse {
            path: self.path.clone(),
            line_no: self.line_no,
            line,
            expected,
        }
    }

    /// Counts a request on device `d`, not the one asked for, while none was on that one.
    #[cold]
    fn count_other_device(&mut self, d: u64) {
        if let Some(seen) = self.other_devices.iter_mut().find(|(x, _)| *x == d) {
            seen.1 += 1;
        } else if self.other_devices.len() < OTHER_DEVICES {
            self.other_devices.push((d, 1));
        }
    }

    /// At the end of a trace with requests, none on the device asked for: that device is not in the trace,
    /// and the error names those that are (a run of no request would report zeros, or blame its capacity).
    fn no_such_device(&mut self) -> Option<TraceError> {
        let wanted = self.opts.device?;
        if self.met_device {
            return None;
        }
        // Taken, so that it is said once.
        let devices: Vec<String> = std::mem::take(&mut self.other_devices)
            .into_iter()
            .map(|(d, n)| format!("{d} ({n} requests)"))
            .collect();
        if devices.is_empty() {
            return None;
        }
        let more = if devices.len() == OTHER_DEVICES {
            ", ..."
        } else {
            ""
        };
        Some(TraceError::Option {
            spec: self.path.display().to_string(),
            what: format!(
                "no request is on device {wanted}; its devices are {}{more} (`ftlsim info` lists them; a \
                 blkparse or FIU device is numbered major x 256 + minor, e.g. 8,16 is 2064)",
                devices.join(", ")
            ),
        })
    }

    /// The current line as a request, `Ok(None)` for a line that holds none, or what is wrong with it.
    fn parse_line(&mut self) -> Result<Option<Request>, TraceError> {
        let text = match line_text(&self.line, self.line_no) {
            Ok(t) => t,
            Err(expected) => {
                let shown = quote_bytes(&self.line);
                return Err(self.parse_error(shown, expected));
            }
        };
        if trim(text).is_empty() {
            return Ok(None);
        }
        let bad = |expected: String| (clip(text), clip_quoted(&expected));
        let parsed = self.format.parse(text).map_err(bad).and_then(|p| match p {
            Parsed::Record { request, .. } if request.offset.checked_add(request.len).is_none() => {
                Err(bad(format!(
                    "offset + length within 2^64 bytes, got offset {} and length {}",
                    request.offset, request.len
                )))
            }
            Parsed::Record { request, .. } if !request.time_us.is_finite() => {
                Err(bad("a finite time".to_string()))
            }
            p => Ok(p),
        });
        match parsed {
            Ok(Parsed::Skip) => Ok(None),
            Ok(Parsed::Record {
                mut request,
                device,
            }) => {
                self.device = device;
                if self.opts.device.is_some() || self.layout.is_some() {
                    let Some(d) = device else {
                        let asked = match self.opts.device {
                            Some(wanted) => format!("device={wanted}"),
                            None => format!("devices={}", self.opts.devices),
                        };
                        return Err(TraceError::Option {
                            spec: self.path.display().to_string(),
                            what: format!(
                                "{asked} was asked for, but this format has no device column (line {}); drop \
                                 the device option",
                                self.line_no
                            ),
                        });
                    };
                    if self.opts.device.is_some_and(|wanted| wanted != d) {
                        if !self.met_device {
                            self.count_other_device(d);
                        }
                        return Ok(None);
                    }
                    self.met_device = true;
                    if let Some(layout) = &self.layout {
                        // The layout's scan saw this request, so its range holds it; a file changed since
                        // lands past the capacity, where the run says so.
                        match layout.start_of(d) {
                            Some(start) => request.offset = request.offset.saturating_add(start),
                            None => return Ok(None),
                        }
                    }
                }
                if self.opts.writes_only && request.op != Op::Write {
                    return Ok(None);
                }
                Ok(Some(request))
            }
            Err((line, expected)) => Err(self.parse_error(line, expected)),
        }
    }
}

impl RequestSource for LineReader {
    fn next_request(&mut self) -> Option<Result<Request, TraceError>> {
        loop {
            let io = |source| TraceError::Io {
                path: self.path.clone(),
                source,
            };
            if self.rest_of_line {
                self.rest_of_line = false;
                match skip_rest_of_line(&mut *self.lines) {
                    Ok(true) => {}
                    Ok(false) => return None,
                    Err(e) => return Some(Err(io(e))),
                }
            }
            let read = match read_bounded(&mut *self.lines, &mut self.line) {
                Ok(r) => r,
                Err(e) => return Some(Err(io(e))),
            };
            self.line_no += 1;
            let result = match read {
                LineRead::Eof => return self.no_such_device().map(Err),
                LineRead::TooLong => {
                    self.rest_of_line = true;
                    let shown = quote_bytes(&self.line[..MAX_QUOTE_CHARS * 4]);
                    Err(self.parse_error(shown, too_long()))
                }
                LineRead::Line => self.parse_line(),
            };
            match result {
                Ok(None) => continue,
                Ok(Some(request)) => return Some(Ok(request)),
                Err(TraceError::Parse { .. }) if self.opts.skip_bad_lines => {
                    self.skipped += 1;
                    continue;
                }
                Err(e) => return Some(Err(e)),
            }
        }
    }

    fn skipped_lines(&self) -> u64 {
        self.skipped
    }

    fn progress(&self) -> (u64, u64) {
        (self.read_bytes.load(Ordering::Relaxed), self.total_bytes)
    }

    /// The device the format names for the last request, unless a layout moved it into one address space.
    fn device(&self) -> Option<u64> {
        self.device.filter(|_| self.layout.is_none())
    }

    fn position(&self) -> Option<String> {
        self.position_at(self.line_no)
    }

    fn mark(&self) -> u64 {
        self.line_no
    }

    fn position_at(&self, line_no: u64) -> Option<String> {
        Some(line_position(&self.path, line_no))
    }

    fn position_namer(&self) -> Option<PositionNamer> {
        let path = self.path.clone();
        Some(Arc::new(move |line_no| Some(line_position(&path, line_no))))
    }

    fn timed(&self) -> bool {
        self.format.timed()
    }
}

/// Where line `line_no` of the trace file at `path` is: "path:line".
fn line_position(path: &Path, line_no: u64) -> String {
    format!("{}:{line_no}", path.display())
}

/// Parses a field as an unsigned integer, or says which field was wrong.
pub fn field_u64(fields: &[&str], i: usize, name: &str) -> Result<u64, String> {
    let f = fields
        .get(i)
        .ok_or_else(|| format!("at least {} fields (missing {name})", i + 1))?;
    trim(f).parse().map_err(|_| {
        format!(
            "{name} (field {}) as an unsigned integer, got `{}`",
            i + 1,
            trim(f)
        )
    })
}

/// Whether an ASCII byte is white space as [`char::is_whitespace`] says (tab, line feed, vertical tab, form
/// feed, carriage return, space).
#[inline]
fn is_space(b: u8) -> bool {
    b == b' ' || (b'\t'..=b'\r').contains(&b)
}

/// `s.trim()`, answered at once in the common case: each end an ASCII byte that is not white space (an ASCII
/// byte is a whole character in UTF-8, so neither end is then trimmed).
#[inline]
pub(crate) fn trim(s: &str) -> &str {
    match s.as_bytes() {
        [first, .., last] | [first @ last]
            if first.is_ascii() && last.is_ascii() && !is_space(*first) && !is_space(*last) =>
        {
            s
        }
        _ => s.trim(),
    }
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

    /// Splits on a separator character (empty fields kept). An ASCII separator is found byte by byte with
    /// `memchr` (its byte is never inside another character's encoding): the fields `str::split` gives.
    pub fn split(line: &'a str, sep: char) -> Self {
        if !sep.is_ascii() {
            return Self::new(line.split(sep));
        }
        let mut start = 0;
        let ends = memchr::memchr_iter(sep as u8, line.as_bytes()).chain([line.len()]);
        Self::new(ends.map(|end| {
            let field = &line[start..end];
            start = end + 1;
            field
        }))
    }

    /// Splits on runs of whitespace. An ASCII line is split byte by byte, on the bytes [`char::is_whitespace`]
    /// names: the fields `str::split_whitespace` gives.
    pub fn whitespace(line: &'a str) -> Self {
        if !line.is_ascii() {
            return Self::new(line.split_whitespace());
        }
        let bytes = line.as_bytes();
        let mut at = 0;
        Self::new(std::iter::from_fn(|| {
            while at < bytes.len() && is_space(bytes[at]) {
                at += 1;
            }
            let start = at;
            while at < bytes.len() && !is_space(bytes[at]) {
                at += 1;
            }
            (at > start).then(|| &line[start..at])
        }))
    }

    /// The kept fields.
    pub fn as_slice(&self) -> &[&'a str] {
        &self.fields[..self.count.min(N)]
    }

    /// Field `i` trimmed, or "" when absent.
    pub fn get(&self, i: usize) -> &'a str {
        if i < self.count.min(N) {
            trim(self.fields[i])
        } else {
            ""
        }
    }
}

/// Parses a decimal number of seconds (`12.000031865`) into microseconds, exactly when it has at most 9
/// decimals (blkparse and SPC times), else through `f64`.
pub fn seconds_to_us(text: &str) -> Option<f64> {
    let text = trim(text);
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Lines of the characters where the byte-wise splitting and trimming could part from `str`'s: every ASCII
    /// white space (the vertical tab among them), Unicode white space (no-break space, ideographic space, next
    /// line), the separators, a multi-byte letter, digits.
    fn line() -> impl Strategy<Value = String> {
        let chars = prop::sample::select(vec![
            ' ', '\t', '\n', '\u{b}', '\u{c}', '\r', '\u{a0}', '\u{3000}', '\u{85}', ',', ';', 'é',
            '1', 'a',
        ]);
        prop::collection::vec(chars, 0..24).prop_map(|c| c.into_iter().collect())
    }

    fn fields<const N: usize>(f: &Fields<'_, N>) -> (Vec<String>, usize, Vec<String>) {
        let kept = f.as_slice().iter().map(|s| s.to_string()).collect();
        let got = (0..N + 1).map(|i| f.get(i).to_string()).collect();
        (kept, f.count, got)
    }

    proptest! {
        #[test]
        fn fields_and_trims_are_those_of_str(line in line()) {
            prop_assert_eq!(trim(&line), line.trim());
            prop_assert_eq!(
                fields(&Fields::<3>::whitespace(&line)),
                fields(&Fields::<3>::new(line.split_whitespace()))
            );
            for sep in [',', '\t', 'é'] {
                prop_assert_eq!(
                    fields(&Fields::<3>::split(&line, sep)),
                    fields(&Fields::<3>::new(line.split(sep)))
                );
            }
        }
    }
}
