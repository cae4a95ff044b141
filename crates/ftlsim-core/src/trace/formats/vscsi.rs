//! `vscsi`: CloudPhysics VMware vSCSI traces as CSV (the SHARDS / Mimircache / libCacheSim sample), header
//! `version,time,op,size,lbn`: time in microseconds (a host clock, made relative to the first request), op
//! the SCSI command's opcode in hex (`0x` prefix and case optional), size in bytes, lbn in 512 B sectors.
//!
//! Opcodes: READ(6/10/12/16) `08 28 a8 88` are reads, WRITE(6/10/12/16) `0a 2a aa 8a` writes, UNMAP `42` (or
//! the word `UNMAP`) a trim. Every other opcode (INQUIRY, SYNCHRONIZE CACHE, WRITE SAME, VERIFY, ...) moves no
//! host data an FTL would store, or not in a way the trace's size says, so its line is skipped; a non-hex op
//! is an error. The header is optional; no device column.

use crate::request::{Op, Request};
use crate::trace::{
    field_sectors, field_u64, trim, Fields, FormatInfo, Origin, Parsed, TraceOptions,
};

pub const FORMAT: FormatInfo = FormatInfo {
    name: "vscsi",
    options: &[],
    summary:
        "CloudPhysics vSCSI CSV: version,time,op,size,lbn; us, SCSI opcode hex, bytes, sectors",
    sniff,
    make: |_: &TraceOptions| Ok(Box::new(Vscsi::default())),
};

const LAYOUT: &str = "a vSCSI CSV line `version,time,op,size,lbn`";

#[derive(Default)]
struct Vscsi {
    origin: Origin,
}

fn is_header(line: &str) -> bool {
    trim(line).eq_ignore_ascii_case("version,time,op,size,lbn")
}

fn sniff(lines: &[&str]) -> bool {
    let mut vscsi = Vscsi::default();
    let mut records = 0;
    for line in lines {
        match vscsi.parse_line(line) {
            Ok(Parsed::Record { .. }) => records += 1,
            Ok(Parsed::Skip) => {}
            Err(_) => return false,
        }
    }
    records > 0
}

/// The request kind of a SCSI opcode; `None` for commands that are not host data transfers.
fn scsi_op(text: &str) -> Result<Option<Op>, String> {
    if text.eq_ignore_ascii_case("unmap") {
        return Ok(Some(Op::Trim));
    }
    let hex = text
        .strip_prefix("0x")
        .or_else(|| text.strip_prefix("0X"))
        .unwrap_or(text);
    let code = u8::from_str_radix(hex, 16).map_err(|_| {
        format!("{LAYOUT}: op (field 3) as a hex SCSI opcode (28 read, 2a write, 42 unmap), got `{text}`")
    })?;
    Ok(match code {
        0x08 | 0x28 | 0xa8 | 0x88 => Some(Op::Read),
        0x0a | 0x2a | 0xaa | 0x8a => Some(Op::Write),
        0x42 => Some(Op::Trim),
        _ => None,
    })
}

impl Vscsi {
    fn parse_line(&mut self, line: &str) -> Result<Parsed, String> {
        if is_header(line) {
            return Ok(Parsed::Skip);
        }
        let f = Fields::<5>::split(line, ',');
        if f.count != 5 {
            return Err(format!(
                "{LAYOUT}: 5 comma-separated fields, got {}",
                f.count
            ));
        }
        let fields = f.as_slice();
        let in_layout = |e: String| format!("{LAYOUT}: {e}");
        field_u64(fields, 0, "version").map_err(in_layout)?;
        let time = field_u64(fields, 1, "time in us").map_err(in_layout)?;
        let op = scsi_op(f.get(2))?;
        let size = field_u64(fields, 3, "size in bytes").map_err(in_layout)?;
        let offset = field_sectors(fields, 4, "lbn in sectors").map_err(in_layout)?;
        let Some(op) = op else {
            return Ok(Parsed::Skip);
        };
        Ok(Parsed::Record {
            request: Request::new(self.origin.since(time), op, offset, size),
            device: None,
        })
    }
}

impl crate::trace::Format for Vscsi {
    fn parse(&mut self, line: &str) -> Result<Parsed, String> {
        self.parse_line(line)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opcodes_and_units() {
        let mut v = Vscsi::default();
        assert_eq!(v.parse_line("version,time,op,size,lbn"), Ok(Parsed::Skip));
        assert_eq!(
            v.parse_line("1,5633898368802,2a,512,42932745"),
            Ok(Parsed::Record {
                request: Request::new(0.0, Op::Write, 42_932_745 * 512, 512),
                device: None
            })
        );
        let Ok(Parsed::Record { request, .. }) = v.parse_line("1,5633898611441,0x28,6656,7") else {
            panic!("a record")
        };
        // 5633898611441 - 5633898368802 = 242639 us.
        assert_eq!(request, Request::new(242_639.0, Op::Read, 7 * 512, 6656));
        let Ok(Parsed::Record { request, .. }) = v.parse_line("1,5633898611441,42,4096,8") else {
            panic!("a record")
        };
        assert_eq!(request.op, Op::Trim);
        assert_eq!(
            v.parse_line("1,5633898611441,35,0,0"),
            Ok(Parsed::Skip),
            "SYNCHRONIZE CACHE"
        );
        let err = v.parse_line("1,5633898611441,zz,0,0").unwrap_err();
        assert!(err.contains("hex SCSI opcode"), "{err}");
    }
}
