//! `umass`: the UMass Trace Repository's SPC format, `ASU,LBA,Size,Opcode,Timestamp[,...]`: ASU (application
//! specific unit, the device), LBA in 512 B sectors, Size in bytes, Opcode `r`/`w` (either case), Timestamp in
//! seconds from the trace's start (kept as is). Fields after the fifth are optional in the SPC spec and
//! ignored. A header line starting with `ASU` is skipped. device = ASU.

use crate::request::{Op, Request};
use crate::trace::{
    field_sectors, field_u64, seconds_to_us, Fields, FormatInfo, Parsed, TraceOptions,
};

pub const FORMAT: FormatInfo = FormatInfo {
    name: "umass",
    options: &[],
    summary:
        "UMass SPC: ASU,LBA,Size,Opcode,Timestamp; LBA in sectors, size in bytes, op r/w, time in s",
    sniff,
    make: |_: &TraceOptions| Ok(Box::new(Umass)),
};

const LAYOUT: &str = "a UMass SPC line `ASU,LBA,Size,Opcode,Timestamp`";

struct Umass;

fn sniff(lines: &[&str]) -> bool {
    let mut records = 0;
    for line in lines {
        match parse(line) {
            Ok(Parsed::Record { .. }) => records += 1,
            Ok(Parsed::Skip) => {}
            Err(_) => return false,
        }
    }
    records > 0
}

fn parse(line: &str) -> Result<Parsed, String> {
    let f = Fields::<6>::split(line, ',');
    let fields = f.as_slice();
    if f.count < 5 {
        return Err(format!(
            "{LAYOUT}: at least 5 comma-separated fields, got {}",
            f.count
        ));
    }
    if f.get(0).eq_ignore_ascii_case("asu") {
        return Ok(Parsed::Skip);
    }
    let in_layout = |e: String| format!("{LAYOUT}: {e}");
    let asu = field_u64(fields, 0, "ASU").map_err(in_layout)?;
    let offset = field_sectors(fields, 1, "LBA in sectors").map_err(in_layout)?;
    let size = field_u64(fields, 2, "Size in bytes").map_err(in_layout)?;
    let op = match f.get(3) {
        "r" | "R" => Op::Read,
        "w" | "W" => Op::Write,
        other => return Err(format!("{LAYOUT}: Opcode (field 4) r or w, got `{other}`")),
    };
    let time_us = seconds_to_us(f.get(4)).ok_or_else(|| {
        format!(
            "{LAYOUT}: Timestamp (field 5) in seconds, got `{}`",
            f.get(4)
        )
    })?;
    Ok(Parsed::Record {
        request: Request::new(time_us, op, offset, size),
        device: Some(asu),
    })
}

impl crate::trace::Format for Umass {
    fn parse(&mut self, line: &str) -> Result<Parsed, String> {
        parse(line)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spc_record_converts_sectors_to_bytes_and_seconds_to_us() {
        // README note 1: SPC `0,303567,3584,w,0.000000` is the first Financial1 request.
        let Parsed::Record { request, device } = parse("0,303567,3584,w,0.026214").unwrap() else {
            panic!("a record")
        };
        assert_eq!(device, Some(0));
        assert_eq!(
            request,
            Request::new(26_214.0, Op::Write, 303_567 * 512, 3584)
        );
        assert_eq!(parse("ASU,LBA,Size,Opcode,Timestamp"), Ok(Parsed::Skip));
        let err = parse("0,303567,3584,x,0.0").unwrap_err();
        assert!(err.contains("Opcode (field 4) r or w, got `x`"), "{err}");
        assert!(sniff(&[
            "0,303567,3584,w,0.000000",
            "1,55590,3072,R,0.000000"
        ]));
        assert!(!sniff(&[
            "version,time,op,size,lbn",
            "1,5633898368802,2a,512,42932745"
        ]));
    }
}
