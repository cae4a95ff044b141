//! `fiu`: the FIU IODedup traces (SNIA IOTTA set 390), `ts pid proc lba size R|W major minor md5`,
//! whitespace-separated: ts in nanoseconds (a machine clock, made relative to the first record), LBA and size
//! in 512 B sectors, the MD5 of the block's content (ignored). A process name may contain spaces: the first
//! two fields and the last six are positional, whatever lies between is the name.
//! device = major * 256 + minor (Linux's old `dev_t` encoding, the same as `blkparse`'s).

use crate::request::{Op, Request};
use crate::trace::{
    device_number, field_sectors, field_u64, Fields, FormatInfo, Origin, Parsed, TraceOptions,
};

pub const FORMAT: FormatInfo = FormatInfo {
    name: "fiu",
    options: &[],
    summary: "FIU IODedup: ts pid proc lba size R|W major minor md5; ns, sectors",
    sniff,
    make: |_: &TraceOptions| Ok(Box::new(Fiu::default())),
};

const LAYOUT: &str = "an FIU line `ts pid proc lba size R|W major minor md5`";

#[derive(Default)]
struct Fiu {
    origin: Origin,
}

fn sniff(lines: &[&str]) -> bool {
    let mut fiu = Fiu::default();
    !lines.is_empty() && lines.iter().all(|l| fiu.parse_line(l).is_ok())
}

impl Fiu {
    fn parse_line(&mut self, line: &str) -> Result<Parsed, String> {
        let all = Fields::<16>::whitespace(line);
        if all.count < 9 || all.count > 16 {
            return Err(format!("{LAYOUT}: 9 fields, got {}", all.count));
        }
        // Field k of the six after the process name, counted from the end.
        let tail = |k: usize| all.get(all.count - 6 + k);
        let fields = [all.get(0), all.get(1), tail(0), tail(1), tail(3), tail(4)];
        let in_layout = |e: String| format!("{LAYOUT}: {e}");
        let ts = field_u64(&fields, 0, "ts in ns").map_err(in_layout)?;
        field_u64(&fields, 1, "pid").map_err(in_layout)?;
        let offset = field_sectors(&fields, 2, "lba in sectors").map_err(in_layout)?;
        let len = field_sectors(&fields, 3, "size in sectors").map_err(in_layout)?;
        let major = field_u64(&fields, 4, "major").map_err(in_layout)?;
        let minor = field_u64(&fields, 5, "minor").map_err(in_layout)?;
        let op = match tail(2) {
            "R" | "r" => Op::Read,
            "W" | "w" => Op::Write,
            other => return Err(format!("{LAYOUT}: R or W (field 6), got `{other}`")),
        };
        let md5 = tail(5);
        if md5.len() != 32 || !md5.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(format!(
                "{LAYOUT}: md5 (last field) as 32 hex digits, got `{md5}`"
            ));
        }
        let device = device_number(major, minor)
            .ok_or_else(|| format!("{LAYOUT}: major (field 7) below 2^56, got {major}"))?;
        Ok(Parsed::Record {
            request: Request::new(self.origin.since(ts) / 1e3, op, offset, len),
            device: Some(device),
        })
    }
}

impl crate::trace::Format for Fiu {
    fn parse(&mut self, line: &str) -> Result<Parsed, String> {
        self.parse_line(line)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_in_bytes_and_us_since_first() {
        let mut fiu = Fiu::default();
        fiu.parse_line(
            "89966522969723 4270 rpc.mountd 18579576 8 W 6 0 d6c75ba46e82326fefa545b57a12e221",
        )
        .unwrap();
        // 89966527950584 - 89966522969723 = 4980861 ns = 4980.861 us.
        let got = fiu
            .parse_line(
                "89966527950584 4253 my nfsd 508516672 8 R 8 16 88b93b628d84082186026d9da044f173",
            )
            .unwrap();
        let Parsed::Record { request, device } = got else {
            panic!("a record")
        };
        assert_eq!(request.op, Op::Read);
        assert_eq!((request.offset, request.len), (508_516_672 * 512, 4096));
        assert!((request.time_us - 4_980.861).abs() < 1e-6);
        assert_eq!(
            device,
            Some(8 * 256 + 16),
            "a process name with a space is allowed"
        );
        let err = fiu
            .parse_line("1 2 p 3 8 X 6 0 d6c75ba46e82326fefa545b57a12e221")
            .unwrap_err();
        assert!(err.contains("R or W (field 6), got `X`"), "{err}");
        assert!(!sniff(&["0 0 303567 7 0"]));
    }
}
