//! `csv`: ftlsim's native trace, `op,offset,length[,tag]` with op R, W or T (read, write, trim), offset and
//! length in bytes, and an optional tag `data` or `metadata`. A header line `op,offset,length[,tag]` is
//! optional. Requests carry no time. [`write`] saves any request source (a built-in workload, another trace)
//! in this format, tags included, so that tagged traces can be replayed.

use super::{field_u64, Fields, FormatInfo, Parsed, RequestSource, TraceError, TraceOptions};
use crate::request::{Op, Request, Tag};
use flate2::write::GzEncoder;
use flate2::Compression;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

pub const FORMAT: FormatInfo = FormatInfo {
    name: "csv",
    summary: "ftlsim native CSV: op,offset,length[,tag]; op R/W/T, bytes; header optional",
    sniff,
    make: |_: &TraceOptions| Ok(Box::new(Csv)),
};

struct Csv;

fn is_header(line: &str) -> bool {
    let f = Fields::<3>::split(line, ',');
    f.get(0).eq_ignore_ascii_case("op")
        && f.get(1).eq_ignore_ascii_case("offset")
        && f.get(2).eq_ignore_ascii_case("length")
}

fn sniff(lines: &[&str]) -> bool {
    let records: Vec<&&str> = lines.iter().filter(|l| !is_header(l)).collect();
    !records.is_empty() && records.iter().all(|l| parse(l).is_ok())
}

fn parse(line: &str) -> Result<Parsed, String> {
    if is_header(line) {
        return Ok(Parsed::Skip);
    }
    let f = Fields::<4>::split(line, ',');
    if !(3..=4).contains(&f.count) {
        return Err(format!(
            "3 or 4 comma-separated fields `op,offset,length[,tag]`, got {}",
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
    Ok(Parsed::Record {
        request: Request {
            time_us: 0.0,
            op,
            offset,
            len,
            tag,
        },
        device: None,
    })
}

impl super::Format for Csv {
    fn parse(&mut self, line: &str) -> Result<Parsed, String> {
        parse(line)
    }
}

/// Writes every request of `source` to `path` as native CSV (header, then `op,offset,length[,tag]`; the tag
/// column is left out for untagged requests), gzip-compressed when the name ends in `.gz`. Returns the number
/// of requests written.
pub fn write(source: &mut dyn RequestSource, path: &Path) -> Result<u64, TraceError> {
    let io = |source| TraceError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = File::create(path).map_err(io)?;
    let gz = path.extension().is_some_and(|e| e == "gz");
    let mut out: Box<dyn Write> = if gz {
        Box::new(BufWriter::new(GzEncoder::new(file, Compression::default())))
    } else {
        Box::new(BufWriter::new(file))
    };
    writeln!(out, "op,offset,length,tag").map_err(io)?;
    let mut n = 0;
    while let Some(request) = source.next_request() {
        let r = request?;
        let op = match r.op {
            Op::Read => 'R',
            Op::Write => 'W',
            Op::Trim => 'T',
        };
        match r.tag {
            Tag::None => writeln!(out, "{op},{},{}", r.offset, r.len),
            Tag::Data => writeln!(out, "{op},{},{},data", r.offset, r.len),
            Tag::Metadata => writeln!(out, "{op},{},{},metadata", r.offset, r.len),
        }
        .map_err(io)?;
        n += 1;
    }
    out.flush().map_err(io)?;
    drop(out);
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::{LineReader, VecSource};

    #[test]
    fn written_traces_read_back_the_same_tags_included_plain_and_gzip() {
        let tagged = |op, offset, len, tag| Request {
            tag,
            ..Request::new(0.0, op, offset, len)
        };
        let requests = vec![
            tagged(Op::Write, 0, 512, Tag::Metadata),
            tagged(Op::Write, 4096, 8192, Tag::Data),
            tagged(Op::Read, 512, 1024, Tag::None),
            tagged(Op::Trim, 1 << 40, 4096, Tag::None),
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
}
