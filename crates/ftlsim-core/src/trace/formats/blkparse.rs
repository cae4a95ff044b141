//! `blkparse`: the default text output of Linux `blkparse`, one event a line:
//! `maj,min cpu seq time pid action rwbs sector + nsect [proc]`, time in seconds from the start of the
//! blktrace (kept as is), sector and nsect in 512 B sectors.
//!
//! A request is one event of the kind `blkparse_event` picks: `D` (issued to the device, the default), `Q`
//! (queued, before the scheduler merges them) or `C` (completed). RWBS: a `D` (discard) makes a trim, else `W`
//! a write, else `R` a read; events with none of them (`N`, a flush-only `FN`) are skipped, and so are events
//! without `+ nsect` (flush completions, SCSI pass-through) or with 0 sectors: they carry no data. Lines that
//! are not events (the per-CPU and total summaries blkparse prints at the end, `Events (8,16): ...`) all contain
//! a colon and are skipped; other actions (`A`, `G`, `I`, `M`, `P`, `U`, `m` scheduler messages) are skipped.
//! device = major * 256 + minor (`8,16` is 2064; Linux's old `dev_t` encoding).

use crate::request::{Op, Request};
use crate::trace::{
    device_number, field_sectors, seconds_to_us, sectors_of, Fields, FormatInfo, FormatWriter,
    Parsed, TraceOptions,
};
use std::io::Write;

pub const FORMAT: FormatInfo = FormatInfo {
    name: "blkparse",
    options: &["blkparse_event"],
    summary: "blkparse default text: maj,min cpu seq time pid action rwbs sector + nsect [proc]; D events by default (blkparse_event)",
    sniff,
    make: |opts: &TraceOptions| {
        Ok(Box::new(Blkparse {
            event: event(opts)?,
        }))
    },
};

const LAYOUT: &str = "a blkparse event `maj,min cpu seq time pid action rwbs sector + nsect [proc]` (or a summary line, which has a colon)";

struct Blkparse {
    event: &'static str,
}

/// The action letter `blkparse_event` picks.
pub fn event(opts: &TraceOptions) -> Result<&'static str, String> {
    match opts.blkparse_event.as_str() {
        "D" => Ok("D"),
        "Q" => Ok("Q"),
        "C" => Ok("C"),
        other => Err(format!(
            "blkparse_event `{other}` is not a request event; valid: D (dispatch), Q (queue), C (completion)"
        )),
    }
}

/// The request kind of a blktrace RWBS string; `None` for events that move no data.
pub fn rwbs_op(rwbs: &str) -> Option<Op> {
    if rwbs.contains('D') {
        Some(Op::Trim)
    } else if rwbs.contains('W') {
        Some(Op::Write)
    } else if rwbs.contains('R') {
        Some(Op::Read)
    } else {
        None
    }
}

/// `maj,min` as major * 256 + minor.
fn device(text: &str) -> Option<u64> {
    let (major, minor) = text.split_once(',')?;
    device_number(major.parse().ok()?, minor.parse().ok()?)
}

fn sniff(lines: &[&str]) -> bool {
    let mut blkparse = Blkparse { event: "D" };
    lines
        .iter()
        .any(|l| device(l.split_whitespace().next().unwrap_or("")).is_some())
        && lines.iter().all(|l| blkparse.parse_line(l).is_ok())
}

impl Blkparse {
    fn parse_line(&mut self, line: &str) -> Result<Parsed, String> {
        let f = Fields::<11>::whitespace(line);
        let Some(dev) = device(f.get(0)) else {
            return if line.contains(':') {
                Ok(Parsed::Skip)
            } else {
                Err(format!("{LAYOUT}: `maj,min` first, got `{}`", f.get(0)))
            };
        };
        if f.count < 7 {
            return Err(format!("{LAYOUT}: at least 7 fields, got {}", f.count));
        }
        let time_us = seconds_to_us(f.get(3))
            .ok_or_else(|| format!("{LAYOUT}: time (field 4) in seconds, got `{}`", f.get(3)))?;
        if f.get(5) != self.event {
            return Ok(Parsed::Skip);
        }
        let Some(op) = rwbs_op(f.get(6)) else {
            return Ok(Parsed::Skip);
        };
        match f.get(8) {
            "+" => {}
            "" => return Ok(Parsed::Skip),
            other if other.starts_with(['[', '(']) => return Ok(Parsed::Skip),
            other => return Err(format!("{LAYOUT}: `+` (field 9), got `{other}`")),
        }
        let in_layout = |e: String| format!("{LAYOUT}: {e}");
        let offset = field_sectors(f.as_slice(), 7, "sector").map_err(in_layout)?;
        let len = field_sectors(f.as_slice(), 9, "nsect").map_err(in_layout)?;
        if len == 0 {
            return Ok(Parsed::Skip);
        }
        Ok(Parsed::Record {
            request: Request::new(time_us, op, offset, len),
            device: Some(dev),
        })
    }
}

impl crate::trace::Format for Blkparse {
    fn parse(&mut self, line: &str) -> Result<Parsed, String> {
        self.parse_line(line)
    }
}

/// blkparse-like output (`.blkparse`): one `D` event a request on its device as `device / 256,device % 256`
/// (8,0 where the source names none), times in seconds to the nanosecond, sectors. It has no tags; a request
/// off the 512 B grid is refused rather than changed.
pub const WRITER: FormatWriter = FormatWriter {
    name: "blkparse",
    extensions: &["blkparse"],
    header: "",
    keeps_device: true,
    keeps_tags: false,
    check: |r| sectors_of(r).map(|_| ()),
    line: |out: &mut dyn Write, r: &Request, device: Option<u64>, _timed| {
        let (major, minor) = device.map_or((8, 0), |d| (d / 256, d % 256));
        let (sector, nsect) = sectors_of(r).unwrap_or_default();
        let rwbs = match r.op {
            Op::Read => "R",
            Op::Write => "W",
            Op::Trim => "D",
        };
        let nanos = (r.time_us * 1e3).round() as u64;
        let (secs, nanos) = (nanos / 1_000_000_000, nanos % 1_000_000_000);
        writeln!(
            out,
            "{major},{minor} 0 0 {secs}.{nanos:09} 0 D {rwbs} {sector} + {nsect} [ftlsim]"
        )
    },
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_rwbs_and_non_event_lines() {
        let mut d = Blkparse { event: "D" };
        assert_eq!(
            d.parse_line(
                "  8,16   5        6     0.000031865 18615  D   R 1444645666 + 256 [java]"
            ),
            Ok(Parsed::Record {
                request: Request::new(31.865, Op::Read, 1_444_645_666 * 512, 256 * 512),
                device: Some(2064),
            })
        );
        let q = "  8,16   5        2     0.000001850 18615  Q   R 1444645666 + 256 [java]";
        assert_eq!(d.parse_line(q), Ok(Parsed::Skip));
        assert!(matches!(
            Blkparse { event: "Q" }.parse_line(q),
            Ok(Parsed::Record { .. })
        ));
        let discard = "  8,0    1        9     1.5 7  D  DS 2048 + 8 [fstrim]";
        let Ok(Parsed::Record { request, .. }) = d.parse_line(discard) else {
            panic!("a record")
        };
        assert_eq!(request.op, Op::Trim);
        for skipped in [
            "  8,16   5        0     0.000012990     0  m   N cfq18615S / insert_request",
            "  8,16   5        4     0.000008750 18615  P   N [java]",
            "  8,16   5      324     3.832956675     0  D  WS 1950885322 [0]",
            "  8,16   5      325     3.9     0  D  FN [kworker]",
            "CPU0 (8,16):",
            " Reads Queued:          80,    10240KiB\t Writes Queued:       15444,    61776KiB",
            "Events (8,16): 50000 entries",
        ] {
            assert_eq!(d.parse_line(skipped), Ok(Parsed::Skip), "{skipped}");
        }
        let err = d
            .parse_line("  8,16 5 6 0.1 18615 D R 1444645666 x 256 [java]")
            .unwrap_err();
        assert!(err.contains("`+` (field 9), got `x`"), "{err}");
        assert!(d.parse_line("hello world").is_err());
        let bad = TraceOptions {
            blkparse_event: "I".into(),
            ..TraceOptions::default()
        };
        assert!((FORMAT.make)(&bad).err().unwrap().contains("valid: D"));
    }
}
