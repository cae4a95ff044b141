//! `ssdsim` and `disksim`: the five-column ASCII trace of SSDsim, MQSim and DiskSim, `time dev lba size op`,
//! whitespace-separated: LBA and size in 512 B sectors, op 1 = read and 0 = write. The two rows differ only in
//! the time unit: nanoseconds for SSDsim / MQSim, milliseconds for DiskSim (times may be decimal); the
//! `time_unit` option ("ns", "us", "ms", "s") overrides it. Times are already relative to the trace's start
//! and are kept as they are. device = dev.
//!
//! DiskSim's op column is a flags word whose bit 0 means read; the other bits are ignored. SSDsim's must be 0
//! or 1. `disksim` never sniffs: nothing in a line tells milliseconds from nanoseconds, so such a trace is
//! read as `ssdsim` unless `format="disksim"` is given.

use crate::request::{Op, Request};
use crate::trace::{
    field_sectors, field_u64, sectors_of, Fields, FormatInfo, FormatWriter, Parsed, TraceOptions,
};
use std::io::Write;

pub const SSDSIM: FormatInfo = FormatInfo {
    name: "ssdsim",
    options: &["time_unit"],
    summary: "SSDsim / MQSim ASCII: time dev lba size op; time in ns, sectors, op 1=read 0=write",
    sniff,
    make: |opts: &TraceOptions| Ok(Box::new(Ascii::new(opts, "ns", false)?)),
};

pub const DISKSIM: FormatInfo = FormatInfo {
    name: "disksim",
    options: &["time_unit"],
    summary: "DiskSim ASCII: time dev lba size flags; time in ms, sectors, flags bit 0 = read (never sniffed)",
    sniff: |_| false,
    make: |opts: &TraceOptions| Ok(Box::new(Ascii::new(opts, "ms", true)?)),
};

const LAYOUT: &str = "a five-column ASCII line `time dev lba size op`";

struct Ascii {
    ns_per_unit: f64,
    flags_word: bool,
}

/// Nanoseconds in one unit of a time column (exact in `f64`, so that `t * ns / 1e3` is correctly rounded).
pub fn ns_per_unit(unit: &str) -> Result<f64, String> {
    match unit {
        "ns" => Ok(1.0),
        "us" => Ok(1e3),
        "ms" => Ok(1e6),
        "s" => Ok(1e9),
        other => Err(format!(
            "time_unit `{other}` is not a time unit; valid: ns, us, ms, s"
        )),
    }
}

impl Ascii {
    fn new(opts: &TraceOptions, default_unit: &str, flags_word: bool) -> Result<Ascii, String> {
        Ok(Ascii {
            ns_per_unit: ns_per_unit(opts.time_unit.as_deref().unwrap_or(default_unit))?,
            flags_word,
        })
    }
}

fn sniff(lines: &[&str]) -> bool {
    let mut ascii = Ascii {
        ns_per_unit: 1.0,
        flags_word: false,
    };
    !lines.is_empty() && lines.iter().all(|l| ascii.parse_line(l).is_ok())
}

impl Ascii {
    fn parse_line(&mut self, line: &str) -> Result<Parsed, String> {
        let f = Fields::<5>::whitespace(line);
        if f.count != 5 {
            return Err(format!("{LAYOUT}: 5 fields, got {}", f.count));
        }
        let fields = f.as_slice();
        let in_layout = |e: String| format!("{LAYOUT}: {e}");
        let time = f
            .get(0)
            .parse::<f64>()
            .ok()
            .filter(|t| t.is_finite() && *t >= 0.0)
            .ok_or_else(|| format!("{LAYOUT}: time (field 1) as a number, got `{}`", f.get(0)))?;
        let dev = field_u64(fields, 1, "dev").map_err(in_layout)?;
        let offset = field_sectors(fields, 2, "lba in sectors").map_err(in_layout)?;
        let len = field_sectors(fields, 3, "size in sectors").map_err(in_layout)?;
        let op = field_u64(fields, 4, "op").map_err(in_layout)?;
        let op = match (op, self.flags_word) {
            (1, false) => Op::Read,
            (0, false) => Op::Write,
            (flags, true) if flags & 1 == 1 => Op::Read,
            (_, true) => Op::Write,
            (other, false) => {
                return Err(format!(
                    "{LAYOUT}: op (field 5) 1 (read) or 0 (write), got `{other}`"
                ))
            }
        };
        Ok(Parsed::Record {
            request: Request::new(time * self.ns_per_unit / 1e3, op, offset, len),
            device: Some(dev),
        })
    }
}

impl crate::trace::Format for Ascii {
    fn parse(&mut self, line: &str) -> Result<Parsed, String> {
        self.parse_line(line)
    }
}

/// SSDsim / MQSim ASCII output (`.trace`, `.ascii`): times in ns, the request's device (0 where the source names
/// none), sectors. It has no trims and no tags, and counts whole sectors, so a trim or a request off the 512 B
/// grid is refused rather than changed.
pub const WRITER: FormatWriter = FormatWriter {
    name: "ssdsim",
    extensions: &["trace", "ascii"],
    header: "",
    keeps_device: true,
    keeps_tags: false,
    check: |r| {
        if r.op == Op::Trim {
            return Err(
                "a trim, which SSDsim / MQSim ASCII cannot express (write .csv or .blkparse)"
                    .into(),
            );
        }
        sectors_of(r).map(|_| ())
    },
    line: |out: &mut dyn Write, r: &Request, device: Option<u64>, _timed| {
        let (lba, size) = sectors_of(r).unwrap_or_default();
        let op = if r.op == Op::Read { 1 } else { 0 };
        let dev = device.unwrap_or(0);
        // Whole nanoseconds: `time_us * 1e3` of a time read in ns is off by a rounding as often as not
        // (33647136083 came back as 33647136082.999996), which no reader of the format expects.
        let ns = crate::stats::nearest_ns(r.time_us);
        writeln!(out, "{ns} {dev} {lba} {size} {op}")
    },
};

#[cfg(test)]
mod tests {
    use super::*;

    fn record(format: &FormatInfo, opts: &TraceOptions, line: &str) -> (Request, Option<u64>) {
        match (format.make)(opts).unwrap().parse(line).unwrap() {
            Parsed::Record { request, device } => (request, device),
            Parsed::Skip => panic!("`{line}` skipped"),
        }
    }

    #[test]
    fn units_per_row_and_time_unit_override() {
        let opts = TraceOptions::default();
        // README: the first Financial1 record, SPC `0,303567,3584,w,...`, is `0 0 303567 7 0`.
        let (r, dev) = record(&SSDSIM, &opts, "26214000 3 303567 7 0");
        assert_eq!(r, Request::new(26_214.0, Op::Write, 303_567 * 512, 7 * 512));
        assert_eq!(dev, Some(3));
        let (r, _) = record(&DISKSIM, &opts, "2.5 0 8 1 1");
        assert_eq!((r.time_us, r.op), (2_500.0, Op::Read));
        let (r, _) = record(&DISKSIM, &opts, "2.5 0 8 1 2");
        assert_eq!(r.op, Op::Write, "flags 2 has bit 0 clear");
        let us = TraceOptions {
            time_unit: Some("us".into()),
            ..TraceOptions::default()
        };
        assert_eq!(record(&SSDSIM, &us, "7 0 0 1 1").0.time_us, 7.0);
        let bad = TraceOptions {
            time_unit: Some("min".into()),
            ..TraceOptions::default()
        };
        let err = (SSDSIM.make)(&bad).err().unwrap();
        assert!(err.contains("valid: ns, us, ms, s"), "{err}");
        let err = (SSDSIM.make)(&opts)
            .unwrap()
            .parse("0 0 8 1 2")
            .unwrap_err();
        assert!(
            err.contains("op (field 5) 1 (read) or 0 (write), got `2`"),
            "{err}"
        );
    }
}
