//! `most`: the `.po` files of the MOST tool (ESOS Lab, Lee & Won, EMSOFT 2012): blkparse output with the custom
//! format `-f "%5T.%9t\t%a\t%d\t%8S\t%4n\t%4p\t%20C"` plus MOST's columns, tab-separated and space-padded:
//! `time action rwbs sector nsectors pid command [class [path]]`. Time in seconds from the blktrace's start
//! (kept as is), sector and nsectors in 512 B sectors.
//!
//! Events are chosen and classified as in [`crate::trace::formats::blkparse`] (`blkparse_event`: D, Q or C; RWBS D/W/R;
//! 0-sector events such as flush completions are skipped). MOST's block class becomes the request's tag:
//! `D` (file data) is data, `M` (metadata) and `J` (ext4 journal) are metadata. No device column (one eMMC).

use crate::request::{Request, Tag};
use crate::trace::formats::blkparse::{event, rwbs_op};
use crate::trace::{field_sectors, seconds_to_us, Fields, FormatInfo, Parsed, TraceOptions};

pub const FORMAT: FormatInfo = FormatInfo {
    name: "most",
    options: &["blkparse_event"],
    summary: "MOST .po: tab-separated time action rwbs sector nsectors pid command class path; D events by default (blkparse_event)",
    sniff,
    make: |opts: &TraceOptions| {
        Ok(Box::new(Most {
            event: event(opts)?,
        }))
    },
};

const LAYOUT: &str =
    "a MOST .po line `time<TAB>action<TAB>rwbs<TAB>sector<TAB>nsectors<TAB>pid<TAB>command[<TAB>class[<TAB>path]]`";

struct Most {
    event: &'static str,
}

fn sniff(lines: &[&str]) -> bool {
    let mut most = Most { event: "D" };
    !lines.is_empty() && lines.iter().all(|l| most.parse_line(l).is_ok())
}

impl Most {
    fn parse_line(&mut self, line: &str) -> Result<Parsed, String> {
        let f = Fields::<9>::split(line, '\t');
        if !(7..=9).contains(&f.count) {
            return Err(format!(
                "{LAYOUT}: 7 to 9 tab-separated fields, got {}",
                f.count
            ));
        }
        let time_us = seconds_to_us(f.get(0))
            .ok_or_else(|| format!("{LAYOUT}: time (field 1) in seconds, got `{}`", f.get(0)))?;
        let action = f.get(1);
        if action.len() != 1 || !action.bytes().all(|b| b.is_ascii_alphabetic()) {
            return Err(format!(
                "{LAYOUT}: a one-letter action (field 2), got `{action}`"
            ));
        }
        if action != self.event {
            return Ok(Parsed::Skip);
        }
        let Some(op) = rwbs_op(f.get(2)) else {
            return Ok(Parsed::Skip);
        };
        let in_layout = |e: String| format!("{LAYOUT}: {e}");
        let offset = field_sectors(f.as_slice(), 3, "sector").map_err(in_layout)?;
        let len = field_sectors(f.as_slice(), 4, "nsectors").map_err(in_layout)?;
        let tag = match f.get(7) {
            "" => Tag::None,
            "D" => Tag::Data,
            "M" | "J" => Tag::Metadata,
            other => {
                return Err(format!(
                    "{LAYOUT}: class (field 8) D, M or J, got `{other}`"
                ))
            }
        };
        if len == 0 {
            return Ok(Parsed::Skip);
        }
        Ok(Parsed::Record {
            request: Request {
                tag,
                ..Request::new(time_us, op, offset, len)
            },
            device: None,
        })
    }
}

impl crate::trace::Format for Most {
    fn parse(&mut self, line: &str) -> Result<Parsed, String> {
        self.parse_line(line)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::Op;

    #[test]
    fn dispatch_rows_with_class_tags() {
        let mut d = Most { event: "D" };
        let line = "    0.007717657\tD\tWAS\t 4079792\t 104\t 137\t     jbd2/mmcblk0p28\tJ";
        assert_eq!(
            d.parse_line(line),
            Ok(Parsed::Record {
                request: Request {
                    tag: Tag::Metadata,
                    ..Request::new(7_717.657, Op::Write, 4_079_792 * 512, 104 * 512)
                },
                device: None,
            })
        );
        let data = "    7.152101611\tC\tWA\t 4800240\t  24\t 135\t  flush-179:0\tD\t/data/x/data_1";
        assert_eq!(d.parse_line(data), Ok(Parsed::Skip));
        let Ok(Parsed::Record { request, .. }) = Most { event: "C" }.parse_line(data) else {
            panic!("a record")
        };
        assert_eq!(request.tag, Tag::Data);
        let flush = "    0.013739323\tC\tWS\t 4079896\t   0\t 137\t     jbd2/mmcblk0p28\tJ";
        assert_eq!(Most { event: "C" }.parse_line(flush), Ok(Parsed::Skip));
        let err = d
            .parse_line("    0.1\tD\tW\t 12x\t 8\t 1\t  cmd\tM")
            .unwrap_err();
        assert!(
            err.contains("sector (field 4) as an unsigned integer, got `12x`"),
            "{err}"
        );
    }
}
