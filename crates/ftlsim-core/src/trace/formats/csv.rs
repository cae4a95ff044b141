//! `csv`: ftlsim's native trace, `op,offset,length[,tag[,time_us]]` with op R, W or T (read, write, trim),
//! offset and length in bytes, an optional tag `data` or `metadata` (empty for none) and an optional arrival
//! time in microseconds from the trace's start (0 when absent). A header line `op,offset,length[,...]` is
//! optional. The trace is timed ([`crate::trace::RequestSource::timed`]) when its first request has a time,
//! 0 included: its requests at time 0 arrive together at the start rather than as a closed loop. [`WRITER`] saves any request source (a built-in workload, another trace) in this format, tags and
//! times included, so that converted traces replay the same requests at the same times.

use crate::request::{Op, Request, Tag};
use crate::trace::{field_u64, Fields, FormatInfo, FormatWriter, Parsed, TraceOptions};
use std::io::Write;

pub const FORMAT: FormatInfo = FormatInfo {
    name: "csv",
    options: &[],
    summary:
        "ftlsim native CSV: op,offset,length[,tag[,time_us]]; op R/W/T, bytes; header optional",
    sniff,
    make: |_: &TraceOptions| Ok(Box::new(Csv { timed: None })),
};

/// The reader: whether the first request had a time, once it is read.
struct Csv {
    timed: Option<bool>,
}

fn is_header(line: &str) -> bool {
    let f = Fields::<3>::split(line, ',');
    f.get(0).eq_ignore_ascii_case("op")
        && f.get(1).eq_ignore_ascii_case("offset")
        && f.get(2).eq_ignore_ascii_case("length")
}

/// Records that all parse, or this format's header alone: a trace of no request is then said to hold none,
/// not to be of a format nobody can tell.
fn sniff(lines: &[&str]) -> bool {
    let records: Vec<&&str> = lines.iter().filter(|l| !is_header(l)).collect();
    let headed = records.len() < lines.len();
    (headed || !records.is_empty()) && records.iter().all(|l| parse(l).is_ok())
}

fn parse(line: &str) -> Result<Parsed, String> {
    if is_header(line) {
        return Ok(Parsed::Skip);
    }
    let f = Fields::<5>::split(line, ',');
    if !(3..=5).contains(&f.count) {
        return Err(format!(
            "3 to 5 comma-separated fields `op,offset,length[,tag[,time_us]]`, got {}",
            f.count
        ));
    }
    let fields = f.as_slice();
    let op = match f.get(0) {
        "R" | "r" => Op::Read,
        "W" | "w" => Op::Write,
        "T" | "t" => Op::Trim,
        other => return Err(format!("op R, W or T, got `{other}`")),
    };
    let offset = field_u64(fields, 1, "offset in bytes")?;
    let len = field_u64(fields, 2, "length in bytes")?;
    let tag = match f.get(3) {
        "" => Tag::None,
        "data" => Tag::Data,
        "metadata" => Tag::Metadata,
        other => return Err(format!("tag `data` or `metadata`, got `{other}`")),
    };
    let time_us = match f.get(4) {
        "" => 0.0,
        t => t
            .parse::<f64>()
            .ok()
            .filter(|t| t.is_finite() && *t >= 0.0)
            .ok_or_else(|| format!("time_us (field 5) as a number >= 0, got `{t}`"))?,
    };
    Ok(Parsed::Record {
        request: Request {
            time_us,
            op,
            offset,
            len,
            tag,
        },
        device: None,
    })
}

impl crate::trace::Format for Csv {
    fn parse(&mut self, line: &str) -> Result<Parsed, String> {
        let parsed = parse(line)?;
        if self.timed.is_none() && matches!(parsed, Parsed::Record { .. }) {
            self.timed = Some(!Fields::<5>::split(line, ',').get(4).is_empty());
        }
        Ok(parsed)
    }

    fn timed(&self) -> bool {
        self.timed == Some(true)
    }
}

/// Native CSV output: every request is representable, but it has no device column, so a source on more than one
/// device is refused.
pub const WRITER: FormatWriter = FormatWriter {
    name: "csv",
    extensions: &["csv"],
    header: "op,offset,length,tag,time_us\n",
    keeps_device: false,
    keeps_tags: true,
    check: |_| Ok(()),
    line: write_line,
};

/// One request; the time column is left out at time 0 of a source without times, and the tag column when both
/// are empty. `{}` prints the shortest decimal that reads back as the same `f64`.
fn write_line(
    out: &mut dyn Write,
    r: &Request,
    _device: Option<u64>,
    timed: bool,
) -> std::io::Result<()> {
    let op = match r.op {
        Op::Read => 'R',
        Op::Write => 'W',
        Op::Trim => 'T',
    };
    let tag = match r.tag {
        Tag::None => "",
        Tag::Data => "data",
        Tag::Metadata => "metadata",
    };
    let t = r.time_us;
    if timed || t != 0.0 {
        writeln!(out, "{op},{},{},{tag},{t}", r.offset, r.len)
    } else if tag.is_empty() {
        writeln!(out, "{op},{},{}", r.offset, r.len)
    } else {
        writeln!(out, "{op},{},{},{tag}", r.offset, r.len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::{write, Format, LineReader, RequestSource, VecSource};

    #[test]
    fn a_trace_on_several_devices_is_refused_one_device_or_one_space_is_written() {
        use crate::trace::formats::written::spc_written_as;
        use crate::trace::layout::devices::Devices;
        let (_, back) = spc_written_as("devices.csv", &TraceOptions::default());
        let err = back.unwrap_err().to_string();
        assert!(
            err.contains(
                "csv has no device column, but the trace has more than one device: request #2"
            ) && err.contains("is on device 3, the first on device 0")
                && err.contains("write .trace (ssdsim), .ascii (ssdsim), .blkparse (blkparse)"),
            "{err}"
        );
        let one = TraceOptions {
            device: Some(3),
            ..TraceOptions::default()
        };
        let (source, back) = spc_written_as("device-3.csv", &one);
        assert_eq!(source.len(), 2);
        let requests =
            |v: Vec<(Request, Option<u64>)>| v.into_iter().map(|(r, _)| r).collect::<Vec<_>>();
        assert_eq!(requests(back.unwrap()), requests(source));
        let concat = TraceOptions {
            devices: Devices::Concat,
            ..TraceOptions::default()
        };
        let (source, back) = spc_written_as("concat.csv", &concat);
        assert!(
            source.iter().all(|(_, d)| d.is_none()),
            "laid out: one space"
        );
        assert_eq!(requests(back.unwrap()), requests(source));
    }

    #[test]
    fn written_traces_read_back_the_same_tags_and_times_included_plain_and_gzip() {
        let tagged = |time_us, op, offset, len, tag| Request {
            tag,
            ..Request::new(time_us, op, offset, len)
        };
        let requests = vec![
            tagged(0.0, Op::Write, 0, 512, Tag::Metadata),
            tagged(0.1, Op::Write, 4096, 8192, Tag::Data),
            tagged(2.5e9 + 1.0 / 3.0, Op::Read, 512, 1024, Tag::None),
            tagged(0.0, Op::Trim, 1 << 40, 4096, Tag::None),
        ];
        let dir = std::env::temp_dir();
        for name in ["ftlsim-csv-write-test.csv", "ftlsim-csv-write-test.csv.gz"] {
            let path = dir.join(format!("{}-{name}", std::process::id()));
            let n = write(&mut VecSource::new(requests.clone()), &path).unwrap();
            assert_eq!(n, 4);
            let mut back = LineReader::open(&path, &TraceOptions::default()).unwrap();
            let got: Vec<Request> = std::iter::from_fn(|| back.next_request())
                .map(Result::unwrap)
                .collect();
            std::fs::remove_file(&path).unwrap();
            assert_eq!(got, requests, "{name}");
        }
    }

    #[test]
    fn the_header_alone_is_a_csv_trace_and_a_bad_record_is_not() {
        assert!(sniff(&["op,offset,length"]));
        assert!(sniff(&["op,offset,length", "W,0,512"]));
        assert!(!sniff(&["op,offset,length", "X,0,512"]));
        assert!(!sniff(&[]));
    }

    #[test]
    fn a_trace_is_timed_when_its_first_request_has_a_time_and_a_timed_source_is_written_so() {
        let timed = |text: &str| {
            let mut csv = Csv { timed: None };
            for line in text.lines() {
                csv.parse(line).unwrap();
            }
            Format::timed(&csv)
        };
        assert!(timed("op,offset,length,tag,time_us\nW,0,512,,0\nW,512,512"));
        assert!(!timed("W,0,512\nW,512,512,,10"));
        assert!(!timed("op,offset,length,tag,time_us"));
        // A timed source's requests at time 0 keep their time, so that the file reads back timed.
        let path =
            std::env::temp_dir().join(format!("{}-ftlsim-csv-timed.csv", std::process::id()));
        let burst = vec![
            Request::new(0.0, Op::Write, 0, 512),
            Request::new(0.0, Op::Write, 512, 512),
            Request::new(10.0, Op::Write, 0, 512),
        ];
        write(&mut VecSource::new(burst), &path).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let back = LineReader::open(&path, &TraceOptions::default()).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(
            text,
            "op,offset,length,tag,time_us\nW,0,512,,0\nW,512,512,,0\nW,0,512,,10\n"
        );
        let mut back = back;
        back.next_request().unwrap().unwrap();
        assert!(back.timed());
    }
}
