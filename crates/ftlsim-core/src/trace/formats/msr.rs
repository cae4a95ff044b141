//! `msr`: MSR Cambridge CSV (SNIA IOTTA set 388), `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`:
//! Timestamp is a Windows FILETIME (100 ns units since 1601), made relative to the first record (which is at
//! time 0); Type `Read` or `Write` (any case); Offset and Size in bytes; ResponseTime is ignored.
//! device = DiskNumber. A header line starting with `Timestamp` is skipped.

use crate::request::{Op, Request};
use crate::trace::{field_u64, Fields, FormatInfo, Origin, Parsed, TraceOptions};

pub const FORMAT: FormatInfo = FormatInfo {
    name: "msr",
    options: &[],
    summary: "MSR Cambridge CSV: Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime; FILETIME, bytes",
    sniff,
    make: |_: &TraceOptions| Ok(Box::new(Msr::default())),
};

const LAYOUT: &str = "an MSR line `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`";

#[derive(Default)]
struct Msr {
    origin: Origin,
}

fn sniff(lines: &[&str]) -> bool {
    let mut msr = Msr::default();
    let mut records = 0;
    for line in lines {
        match msr.parse_line(line) {
            Ok(Parsed::Record { .. }) => records += 1,
            Ok(Parsed::Skip) => {}
            Err(_) => return false,
        }
    }
    records > 0
}

impl Msr {
    fn parse_line(&mut self, line: &str) -> Result<Parsed, String> {
        let f = Fields::<7>::split(line, ',');
        if f.count != 7 {
            return Err(format!(
                "{LAYOUT}: 7 comma-separated fields, got {}",
                f.count
            ));
        }
        if f.get(0).eq_ignore_ascii_case("timestamp") {
            return Ok(Parsed::Skip);
        }
        let fields = f.as_slice();
        let in_layout = |e: String| format!("{LAYOUT}: {e}");
        let filetime = field_u64(fields, 0, "Timestamp (FILETIME)").map_err(in_layout)?;
        let disk = field_u64(fields, 2, "DiskNumber").map_err(in_layout)?;
        let op = match f.get(3) {
            t if t.eq_ignore_ascii_case("read") => Op::Read,
            t if t.eq_ignore_ascii_case("write") => Op::Write,
            other => {
                return Err(format!(
                    "{LAYOUT}: Type (field 4) Read or Write, got `{other}`"
                ))
            }
        };
        let offset = field_u64(fields, 4, "Offset in bytes").map_err(in_layout)?;
        let size = field_u64(fields, 5, "Size in bytes").map_err(in_layout)?;
        Ok(Parsed::Record {
            request: Request::new(self.origin.since(filetime) / 10.0, op, offset, size),
            device: Some(disk),
        })
    }
}

impl crate::trace::Format for Msr {
    fn parse(&mut self, line: &str) -> Result<Parsed, String> {
        self.parse_line(line)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filetime_becomes_us_since_the_first_record() {
        let mut msr = Msr::default();
        let first = msr
            .parse_line("128166481075232275,rsrch,1,Write,281358336,45056,94872")
            .unwrap();
        assert_eq!(
            first,
            Parsed::Record {
                request: Request::new(0.0, Op::Write, 281_358_336, 45_056),
                device: Some(1),
            }
        );
        // 128166624705595699 - 128166481075232275 = 143630363424 hundred-ns = 14363036342.4 us.
        let Parsed::Record { request, .. } = msr
            .parse_line("128166624705595699,rsrch,1,Read,279339008,4096,122805")
            .unwrap()
        else {
            panic!("a record")
        };
        assert_eq!(request.op, Op::Read);
        assert!((request.time_us - 14_363_036_342.4).abs() < 1e-3);
        let err = msr.parse_line("1,rsrch,1,Erase,0,4096,1").unwrap_err();
        assert!(
            err.contains("Type (field 4) Read or Write, got `Erase`"),
            "{err}"
        );
    }
}
