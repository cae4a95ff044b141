//! `devices`: how the devices of a multi-device trace (Financial1's 22 ASUs, an MSR server's disks) share the
//! simulated device.
//!
//! - `fold` (the default): the device column is ignored; every device's offsets land in one address space.
//! - `concat`: each device gets its own range, in device-number order; a range is sized by that device's
//!   highest address (max offset + length) rounded up to an erase block, so ranges start on block boundaries
//!   and a request keeps its alignment.
//! - a list of device numbers (`"0,3"`, `"2"`, or `[0, 3]` in a config file): only those devices' requests,
//!   concatenated the same way in the order given. One device is then its own addresses (its range starts
//!   at 0), the same as `device = N`.
//!
//! Choices: a filter concatenates rather than folds (folding two devices mixes unrelated data on the same
//! pages; to fold, leave the option at `fold` and keep one device with `device = N`); ranges are sized by the
//! requests that are kept (after `writes_only`, trims included, since a trim addresses the range too); a trace
//! without a device column, or a workload, is an error for anything but `fold`. The layout comes from one
//! streaming pass ([`layout`]) that also counts each device's requests for `ftlsim info`; a request is placed by
//! a bisection over the few devices (no hashing).

use crate::trace::{clip, workload, LineReader, RequestSource, TraceError, TraceOptions};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::Path;

/// The `devices` trace option.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "DevicesSpec", into = "String")]
pub enum Devices {
    #[default]
    Fold,
    Concat,
    /// Only these devices, concatenated in this order.
    Only(Vec<u64>),
}

/// What a config may give for `devices`: text, one device number, or a list of them.
#[derive(Deserialize)]
#[serde(untagged)]
enum DevicesSpec {
    Text(String),
    One(u64),
    List(Vec<u64>),
}

impl TryFrom<DevicesSpec> for Devices {
    type Error = String;

    fn try_from(spec: DevicesSpec) -> Result<Devices, String> {
        match spec {
            DevicesSpec::Text(text) => text.parse(),
            DevicesSpec::One(d) => Ok(Devices::Only(vec![d])),
            DevicesSpec::List(list) => {
                let text = format!("{list:?}");
                Devices::only(list, &text)
            }
        }
    }
}

impl Devices {
    fn only(list: Vec<u64>, text: &str) -> Result<Devices, String> {
        if list.is_empty() {
            return Err(format!(
                "devices={}: name at least one device (e.g. devices=\"0,3\"), or use fold or concat",
                clip(text)
            ));
        }
        if let Some(d) = list
            .iter()
            .enumerate()
            .find_map(|(i, d)| list[..i].contains(d).then_some(d))
        {
            return Err(format!(
                "devices={}: device {d} is named twice; name each device once",
                clip(text)
            ));
        }
        Ok(Devices::Only(list))
    }
}

impl std::str::FromStr for Devices {
    type Err = String;

    fn from_str(text: &str) -> Result<Devices, String> {
        match text.trim() {
            "fold" => Ok(Devices::Fold),
            "concat" => Ok(Devices::Concat),
            list => {
                let numbers: Result<Vec<u64>, _> =
                    list.split(',').map(|d| d.trim().parse::<u64>()).collect();
                match numbers {
                    Ok(numbers) => Devices::only(numbers, text),
                    Err(_) => Err(format!(
                        "devices=`{}`: expected fold, concat, or device numbers separated by commas (e.g. \
                         devices=\"0,3\")",
                        clip(text)
                    )),
                }
            }
        }
    }
}

impl fmt::Display for Devices {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Devices::Fold => f.write_str("fold"),
            Devices::Concat => f.write_str("concat"),
            Devices::Only(list) => {
                let text: Vec<String> = list.iter().map(u64::to_string).collect();
                f.write_str(&text.join(","))
            }
        }
    }
}

impl From<Devices> for String {
    fn from(d: Devices) -> String {
        d.to_string()
    }
}

/// One device of a trace: its requests, its highest address, and where `concat` or a filter places it.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct DeviceRequests {
    pub device: u64,
    pub requests: u64,
    /// The device's own furthest byte: max(offset + len) of its requests.
    pub highest_address: u64,
    /// With `concat` or a filter: the first byte of the device's range in the simulated address space, and the
    /// range's size (`highest_address` rounded up to a block). None when folded or filtered out.
    pub range_start: Option<u64>,
    pub range_bytes: Option<u64>,
}

/// Where each kept device's range starts.
#[derive(Clone, Debug, PartialEq)]
pub struct Layout {
    /// (device, first byte of its range), sorted by device.
    starts: Vec<(u64, u64)>,
    total_bytes: u64,
}

impl Layout {
    /// The first byte of `device`'s range; None for a device that is not kept.
    #[inline]
    pub fn start_of(&self, device: u64) -> Option<u64> {
        self.starts
            .binary_search_by_key(&device, |&(d, _)| d)
            .ok()
            .map(|i| self.starts[i].1)
    }

    /// Bytes of all ranges together: the capacity the concatenated trace needs.
    pub fn total_bytes(&self) -> u64 {
        self.total_bytes
    }

    /// Lays out `seen` (sorted by device) as `devices` asks, ranges rounded up to `block_bytes`, and records
    /// each placed device's range in `seen`. None for `fold`.
    pub fn new(
        devices: &Devices,
        seen: &mut [DeviceRequests],
        block_bytes: u64,
    ) -> Result<Option<Layout>, String> {
        let order: Vec<u64> = match devices {
            Devices::Fold => return Ok(None),
            Devices::Concat => seen.iter().map(|d| d.device).collect(),
            Devices::Only(list) => {
                if let Some(missing) = list
                    .iter()
                    .find(|&&d| seen.binary_search_by_key(&d, |s| s.device).is_err())
                {
                    return Err(format!(
                        "devices={devices}: device {missing} is not in the trace, whose devices are {}; name \
                         some of those",
                        names(seen)
                    ));
                }
                list.clone()
            }
        };
        let block = block_bytes.max(1);
        let mut starts = Vec::with_capacity(order.len());
        let mut at = 0u64;
        for d in order {
            let i = seen
                .binary_search_by_key(&d, |s| s.device)
                .expect("every device in the order was seen");
            let bytes = seen[i]
                .highest_address
                .div_ceil(block)
                .checked_mul(block)
                .filter(|b| at.checked_add(*b).is_some())
                .ok_or_else(|| {
                    format!(
                        "devices={devices}: the ranges of the devices up to device {d} need more than 2^64 bytes; \
                         keep fewer devices (e.g. devices=\"{d}\") or use devices=fold"
                    )
                })?;
            seen[i].range_start = Some(at);
            seen[i].range_bytes = Some(bytes);
            starts.push((d, at));
            at += bytes;
        }
        starts.sort_unstable();
        Ok(Some(Layout {
            starts,
            total_bytes: at,
        }))
    }
}

/// The device numbers of `seen`, at most 32 of them named.
fn names(seen: &[DeviceRequests]) -> String {
    let mut text: Vec<String> = seen.iter().take(32).map(|d| d.device.to_string()).collect();
    if seen.len() > 32 {
        text.push(format!("... ({} devices)", seen.len()));
    }
    text.join(", ")
}

/// Requests between two calls of a progress callback.
const PROGRESS_EVERY: u64 = 1 << 14;

/// One streaming pass over a trace file: every device it names, with its requests and highest address, sorted
/// by device (empty for a format without a device column). The `device` filter and `devices` are not applied,
/// the other options are. `progress(done, total)` every 16,384 requests; false cancels.
pub fn scan(
    path: &Path,
    opts: &TraceOptions,
    progress: &mut dyn FnMut(u64, u64) -> bool,
) -> Result<(Vec<DeviceRequests>, u64), TraceError> {
    let all = TraceOptions {
        device: None,
        devices: Devices::Fold,
        compact: false,
        ..opts.clone()
    };
    let mut reader = LineReader::open(path, &all)?;
    let mut seen: Vec<DeviceRequests> = Vec::new();
    let mut n = 0u64;
    while let Some(r) = reader.next_request() {
        let r = r?;
        n += 1;
        if let Some(device) = reader.device() {
            let i = match seen.binary_search_by_key(&device, |d| d.device) {
                Ok(i) => i,
                Err(i) => {
                    seen.insert(
                        i,
                        DeviceRequests {
                            device,
                            ..DeviceRequests::default()
                        },
                    );
                    i
                }
            };
            seen[i].requests += 1;
            seen[i].highest_address = seen[i].highest_address.max(r.offset + r.len);
        }
        if n.is_multiple_of(PROGRESS_EVERY) {
            let (done, total) = reader.progress();
            if !progress(done, total) {
                return Err(TraceError::Cancelled);
            }
        }
    }
    Ok((seen, n))
}

/// The layout `opts.devices` asks for on `spec`, from one [`scan`] (none for `fold`, without reading). Ranges
/// are rounded up to `block_bytes`. Errors: a workload or a format without a device column, `device` given
/// too, a filter naming a device the trace does not have (the error lists the ones it has).
pub fn layout(
    spec: &str,
    opts: &TraceOptions,
    block_bytes: u64,
    progress: &mut dyn FnMut(u64, u64) -> bool,
) -> Result<Option<Layout>, TraceError> {
    if opts.devices == Devices::Fold {
        return Ok(None);
    }
    Ok(survey(spec, opts, block_bytes, progress)?.1)
}

/// The devices of `spec` ([`scan`]; none for a workload) and the layout `opts.devices` makes of them, in one
/// pass, for `ftlsim info`, which lists the devices whatever the option.
pub fn survey(
    spec: &str,
    opts: &TraceOptions,
    block_bytes: u64,
    progress: &mut dyn FnMut(u64, u64) -> bool,
) -> Result<(Vec<DeviceRequests>, Option<Layout>), TraceError> {
    let bad = |what: String| TraceError::Option {
        spec: spec.to_string(),
        what,
    };
    let laid_out = opts.devices != Devices::Fold;
    if let Some(d) = opts.device.filter(|_| laid_out) {
        return Err(bad(format!(
            "device={d} and devices={} both choose devices; give one (devices=\"{d}\" keeps device {d} alone)",
            opts.devices
        )));
    }
    if workload::parse_spec(spec)?.is_some() {
        if laid_out {
            return Err(bad(format!(
                "devices={}: a built-in workload has no devices; drop the devices option",
                opts.devices
            )));
        }
        return Ok((Vec::new(), None));
    }
    let (mut seen, requests) = scan(Path::new(spec), opts, progress)?;
    if laid_out && seen.is_empty() && requests > 0 {
        return Err(bad(format!(
            "devices={} needs a device column, and this trace's format has none; drop the devices option",
            opts.devices
        )));
    }
    let layout = Layout::new(&opts.devices, &mut seen, block_bytes).map_err(|what| {
        match opts.writes_only {
            true => bad(format!(
                "{what} (with writes_only, a device of reads alone has no request left)"
            )),
            false => bad(what),
        }
    })?;
    Ok((seen, layout))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seen(list: &[(u64, u64)]) -> Vec<DeviceRequests> {
        list.iter()
            .map(|&(device, highest_address)| DeviceRequests {
                device,
                requests: 1,
                highest_address,
                ..DeviceRequests::default()
            })
            .collect()
    }

    #[test]
    fn the_option_reads_and_writes_back() {
        assert_eq!("fold".parse(), Ok(Devices::Fold));
        assert_eq!(" concat ".parse(), Ok(Devices::Concat));
        assert_eq!("3, 0".parse(), Ok(Devices::Only(vec![3, 0])));
        assert_eq!(Devices::Only(vec![3, 0]).to_string(), "3,0");
        let err = "0,x".parse::<Devices>().unwrap_err();
        assert!(
            err.contains("`0,x`") && err.contains("fold, concat"),
            "{err}"
        );
        let err = "1,2,1".parse::<Devices>().unwrap_err();
        assert!(err.contains("device 1 is named twice"), "{err}");
        let from = |json: &str| serde_json::from_str::<Devices>(json);
        assert_eq!(from("2").unwrap(), Devices::Only(vec![2]));
        assert_eq!(from("[4, 1]").unwrap(), Devices::Only(vec![4, 1]));
        assert!(from("[]").is_err());
        assert_eq!(
            serde_json::to_string(&Devices::Concat).unwrap(),
            "\"concat\""
        );
    }

    #[test]
    fn concat_rounds_ranges_to_blocks_in_device_order_and_a_filter_keeps_its_order() {
        // Blocks of 100 B: device 2 ends at 250 -> 300 B, device 5 at 100 -> 100 B, device 9 at 0 -> 0 B.
        let mut s = seen(&[(2, 250), (5, 100), (9, 0)]);
        let l = Layout::new(&Devices::Concat, &mut s, 100).unwrap().unwrap();
        assert_eq!(
            (l.start_of(2), l.start_of(5), l.start_of(9), l.start_of(3)),
            (Some(0), Some(300), Some(400), None)
        );
        assert_eq!(l.total_bytes(), 400);
        assert_eq!((s[1].range_start, s[1].range_bytes), (Some(300), Some(100)));

        let mut s = seen(&[(2, 250), (5, 100), (9, 0)]);
        let l = Layout::new(&Devices::Only(vec![5, 2]), &mut s, 100)
            .unwrap()
            .unwrap();
        assert_eq!(
            (l.start_of(5), l.start_of(2), l.start_of(9)),
            (Some(0), Some(100), None)
        );
        assert_eq!((l.total_bytes(), s[2].range_start), (400, None));

        let err = Layout::new(&Devices::Only(vec![5, 7]), &mut s, 100).unwrap_err();
        assert!(
            err.contains("device 7 is not in the trace, whose devices are 2, 5, 9"),
            "{err}"
        );
        assert_eq!(Layout::new(&Devices::Fold, &mut s, 100), Ok(None));
        let mut huge = seen(&[(0, u64::MAX / 2 + 1), (1, u64::MAX / 2 + 1)]);
        let err = Layout::new(&Devices::Concat, &mut huge, 1).unwrap_err();
        assert!(
            err.contains("up to device 1 need more than 2^64 bytes"),
            "{err}"
        );
    }
}
