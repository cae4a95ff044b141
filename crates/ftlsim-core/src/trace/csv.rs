//! `csv`: ftlsim's native trace, `op,offset,length[,tag]` with op R, W or T (read, write, trim), offset and
//! length in bytes, and an optional tag `data` or `metadata`. A header line `op,offset,length[,tag]` is
//! optional. Requests carry no time.

use super::{field_u64, Fields, FormatInfo, Parsed, TraceOptions};
use crate::request::{Op, Request, Tag};

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
