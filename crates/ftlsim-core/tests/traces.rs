//! Trace readers: every reader on its real file(s) in `../shared/traces` (counts from that folder's README,
//! checked with awk), one tiny trace shipped in every format, bad input for every reader, the device and
//! writes-only filters, the `devices` layouts, sniffing, and `trace::analysis::info`.

use ftlsim_core::request::{Op, Request, Tag};
use ftlsim_core::trace::analysis::info::{info, Distributions, TraceInfo};
use ftlsim_core::trace::layout::devices::Devices;
use ftlsim_core::trace::{self, LineReader, RequestSource, TraceError, TraceOptions, FORMATS};
use std::io::Write;
use std::path::Path;

mod common;
use common::trace_files::{fixture, opts, read, read_all, real, temp, tiny_fixture};

/// (requests, reads, writes, trims)
fn counts(requests: &[Request]) -> (usize, usize, usize, usize) {
    let n = |op| requests.iter().filter(|r| r.op == op).count();
    (requests.len(), n(Op::Read), n(Op::Write), n(Op::Trim))
}

fn sniffed(path: &Path) -> &'static str {
    trace::sniff(path, &TraceOptions::default())
        .unwrap_or_else(|e| panic!("{e}"))
        .name
}

// ---------------------------------------------------------------------------------------------------------
// 1. Real traces

#[test]
fn umass_financial1_as_ssdsim() {
    let path = real("umass_financial1_first10k.ssdsim.ascii");
    assert_eq!(sniffed(&path), "ssdsim");
    let all = read_all(&path, &opts("auto"));
    assert_eq!(counts(&all), (10_000, 4_078, 5_922, 0));
    // README note 1: the first record `0 0 303567 7 0` is SPC `0,303567,3584,w,0.000000`.
    assert_eq!(all[0], Request::new(0.0, Op::Write, 303_567 * 512, 7 * 512));
    // Third line `26214000 0 303574 7 0`: 26,214,000 ns = 26,214 us.
    assert_eq!(
        all[2],
        Request::new(26_214.0, Op::Write, 303_574 * 512, 3584)
    );
    // The last line `259601203125 8 146550 1 1` (README note 1: op 1 in this copy).
    assert_eq!(
        all[9_999],
        Request::new(259_601_203.125, Op::Read, 146_550 * 512, 512)
    );
    // `awk '$2==0'`: ASU 0 has 1,013 requests; ASU 19 and 20 have 1,435 each.
    let asu = |d| {
        read_all(
            &path,
            &TraceOptions {
                device: Some(d),
                ..opts("ssdsim")
            },
        )
    };
    assert_eq!(asu(0).len(), 1_013);
    assert_eq!(asu(19).len(), 1_435);
    // An ASU the trace does not have is an error naming those it has (it read as no request: a run of it
    // reported zeros, or blamed its capacity).
    let none = read(
        &path,
        &TraceOptions {
            device: Some(99),
            ..opts("ssdsim")
        },
    )
    .expect_err("no request is on ASU 99");
    assert_eq!(
        none.to_string(),
        format!(
            "trace {}: no request is on device 99; its devices are 0 (1013 requests), 1 (828 requests), 2 (684 \
             requests), 3 (638 requests), 4 (355 requests), 5 (126 requests), 6 (130 requests), 7 (168 \
             requests), ... (`ftlsim info` lists them; a blkparse or FIU device is numbered major x 256 + minor, e.g. 8,16 \
             is 2064)",
            path.display()
        )
    );
}

/// There is no SPC original in the shared folder; README note 1 says how to rebuild one
/// (`asu,lba,size*512,(r|w),time/1e9`), so the `umass` reader must give exactly what `ssdsim` gives.
#[test]
fn umass_spc_rebuilt_from_financial1_reads_the_same() {
    let path = real("umass_financial1_first10k.ssdsim.ascii");
    let text = std::fs::read_to_string(&path).unwrap();
    let mut spc = String::new();
    for line in text.lines() {
        let f: Vec<u64> = line
            .split_whitespace()
            .map(|x| x.parse().unwrap())
            .collect();
        let op = if f[4] == 1 { "r" } else { "w" };
        let (s, ns) = (f[0] / 1_000_000_000, f[0] % 1_000_000_000);
        spc += &format!("{},{},{},{op},{s}.{ns:09}\n", f[1], f[2], f[3] * 512);
    }
    let rebuilt = temp("Financial1.spc", spc.as_bytes());
    assert_eq!(sniffed(&rebuilt), "umass");
    let from_spc = read_all(&rebuilt, &opts("auto"));
    assert_eq!(from_spc, read_all(&path, &opts("ssdsim")));
    assert_eq!(counts(&from_spc), (10_000, 4_078, 5_922, 0));
    let asu0 = TraceOptions {
        device: Some(0),
        ..opts("umass")
    };
    assert_eq!(read_all(&rebuilt, &asu0).len(), 1_013);
}

#[test]
fn msr_rsrch_1_and_wdev_1() {
    let rsrch = real("msr_rsrch_1.csv");
    assert_eq!(sniffed(&rsrch), "msr");
    let all = read_all(&rsrch, &opts("auto"));
    assert_eq!(counts(&all), (13_780, 42, 13_738, 0));
    // `128166481075232275,rsrch,1,Write,281358336,45056,94872`, the first record, is time 0.
    assert_eq!(all[0], Request::new(0.0, Op::Write, 281_358_336, 45_056));
    // The fifth, `128166624705595699,rsrch,1,Read,279339008,4096,...`: 143,630,363,424 x 100 ns later.
    assert_eq!(all[4].op, Op::Read);
    assert!((all[4].time_us - 14_363_036_342.4).abs() < 1e-3);
    // README note 2: the trace runs over 160.2 hours.
    let hours = all.last().unwrap().time_us / 3.6e9;
    assert!((hours - 160.2).abs() < 0.05, "{hours} h");
    let disk = |d| TraceOptions {
        device: Some(d),
        ..opts("msr")
    };
    assert_eq!(
        read_all(&rsrch, &disk(1)).len(),
        13_780,
        "README note 3: DiskNumber 1"
    );
    assert!(read(&rsrch, &disk(0)).is_err_and(|e| e
        .to_string()
        .contains("no request is on device 0; its devices are 1 (13780")));

    let wdev = real("msr_wdev_1.csv");
    assert_eq!(sniffed(&wdev), "msr");
    let all = read_all(&wdev, &opts("auto"));
    assert_eq!(counts(&all), (1_055, 0, 1_055, 0));
    assert_eq!(all[0], Request::new(0.0, Op::Write, 3_165_323_264, 4096));
}

#[test]
fn fiu_mail() {
    let path = real("fiu_mail_cheetah_2_head9998.blkparse");
    assert_eq!(sniffed(&path), "fiu");
    let all = read_all(&path, &opts("auto"));
    assert_eq!(counts(&all), (9_998, 8_896, 1_102, 0));
    // `89966522969723 4270 rpc.mountd 18579576 8 W 6 0 ...`
    assert_eq!(all[0], Request::new(0.0, Op::Write, 18_579_576 * 512, 4096));
    assert!(
        all.iter().all(|r| r.len == 4096),
        "README: every request is 8 sectors"
    );
    // README note 4: 23.6 s.
    let secs = all.last().unwrap().time_us / 1e6;
    assert!((secs - 23.6).abs() < 0.05, "{secs} s");
    let dev = |d| TraceOptions {
        device: Some(d),
        ..opts("fiu")
    };
    assert_eq!(
        read_all(&path, &dev(6 * 256)).len(),
        9_998,
        "major 6 minor 0"
    );
    assert!(read(&path, &dev(8 * 256 + 16)).is_err_and(|e| e
        .to_string()
        .contains("no request is on device 2064; its devices are 1536 (9998")));
}

#[test]
fn msprod_dtrs_as_ssdsim() {
    let path = real("msprod_dtrs100m.ssdsim.trace");
    assert_eq!(sniffed(&path), "ssdsim");
    let all = read_all(&path, &opts("auto"));
    assert_eq!(counts(&all), (127_043, 113_123, 13_920, 0));
    // `0 0 280605840 2 1`
    assert_eq!(all[0], Request::new(0.0, Op::Read, 280_605_840 * 512, 1024));
    // README note 5: 100,003 requests of 128 sectors, 10,082 of 8; the last at 29,999,951.6 s... in ns.
    assert_eq!(all.iter().filter(|r| r.len == 128 * 512).count(), 100_003);
    assert_eq!(all.iter().filter(|r| r.len == 8 * 512).count(), 10_082);
    assert_eq!(all.last().unwrap().time_us, 29_999_951_600.0);
    let writes = TraceOptions {
        writes_only: true,
        ..opts("ssdsim")
    };
    assert_eq!(counts(&read_all(&path, &writes)), (13_920, 0, 13_920, 0));
}

#[test]
fn cloudphysics_vscsi() {
    let path = real("cloudphysics_vscsi_sample.csv");
    assert_eq!(sniffed(&path), "vscsi");
    let all = read_all(&path, &opts("auto"));
    assert_eq!(counts(&all), (113_872, 46_974, 66_898, 0));
    // `1,5633898368802,2a,512,42932745` then `1,5633898611441,2a,512,42932746` (242,639 us later).
    assert_eq!(all[0], Request::new(0.0, Op::Write, 42_932_745 * 512, 512));
    assert_eq!(
        all[1],
        Request::new(242_639.0, Op::Write, 42_932_746 * 512, 512)
    );
    // README: a 2.0 h span.
    let hours = all.last().unwrap().time_us / 3.6e9;
    assert!((hours - 2.0).abs() < 0.05, "{hours} h");
}

#[test]
fn blkparse_hadoop_by_event() {
    let path = real("blkparse_hadoop_java_sdb_50k.txt");
    assert_eq!(sniffed(&path), "blkparse");
    let event = |e: &str| TraceOptions {
        blkparse_event: e.into(),
        ..opts("auto")
    };
    let d = read_all(&path, &event("D"));
    assert_eq!(counts(&d), (170, 78, 92, 0));
    // `8,16 5 6 0.000031865 18615 D R 1444645666 + 256 [java]`
    assert_eq!(
        d[0],
        Request::new(31.865, Op::Read, 1_444_645_666 * 512, 256 * 512)
    );
    assert_eq!(
        counts(&read_all(&path, &event("Q"))),
        (15_524, 80, 15_444, 0)
    );
    // README says C: 78 R / 93 W. One of those 93, `8,16 5 324 3.832956675 0 C WS 1950885322 [0]`, has no
    // `+ nsect`: a flush completion carrying no data, which the reader skips.
    assert_eq!(counts(&read_all(&path, &event("C"))), (170, 78, 92, 0));
    let sdb = TraceOptions {
        device: Some(8 * 256 + 16),
        ..event("D")
    };
    assert_eq!(read_all(&path, &sdb).len(), 170);
}

#[test]
fn most_android_by_event() {
    let path = real("android_most_chrome_emmc.po");
    assert_eq!(sniffed(&path), "most");
    let event = |e: &str| TraceOptions {
        blkparse_event: e.into(),
        ..opts("auto")
    };
    let d = read_all(&path, &event("D"));
    assert_eq!(counts(&d), (151, 5, 146, 0));
    // `0.000492553 D WAS 23004888 8 4767 IntentService[] M`
    assert_eq!(
        d[0],
        Request {
            tag: Tag::Metadata,
            ..Request::new(492.553, Op::Write, 23_004_888 * 512, 4096)
        }
    );
    // README says C: 5 R / 199 W; 54 of those C rows have 0 sectors (flush completions, e.g.
    // `0.013739323 C WS 4079896 0 137 jbd2/mmcblk0p28 J`), which carry no data and are skipped.
    assert_eq!(counts(&read_all(&path, &event("C"))), (150, 5, 145, 0));
    // D rows by class (awk): 56 D (data), 62 J (journal) + 33 M (metadata).
    let data = d.iter().filter(|r| r.tag == Tag::Data).count();
    let meta = d.iter().filter(|r| r.tag == Tag::Metadata).count();
    assert_eq!((data, meta), (56, 95));
}

#[test]
fn every_real_trace_sniffs_to_its_format() {
    let expected = [
        ("umass_financial1_first10k.ssdsim.ascii", "ssdsim"),
        ("msr_rsrch_1.csv", "msr"),
        ("msr_wdev_1.csv", "msr"),
        ("fiu_mail_cheetah_2_head9998.blkparse", "fiu"),
        ("msprod_dtrs100m.ssdsim.trace", "ssdsim"),
        ("cloudphysics_vscsi_sample.csv", "vscsi"),
        ("android_most_chrome_emmc.po", "most"),
        ("blkparse_hadoop_java_sdb_50k.txt", "blkparse"),
    ];
    for (file, format) in expected {
        let path = real(file);
        assert_eq!(sniffed(&path), format, "{file}");
        // And every other format's sniffer rejects it (disksim never sniffs).
        let head = trace::head_lines(&path, 8).unwrap();
        assert!(head.broken.is_none(), "{file}");
        let head: Vec<&str> = head.lines.iter().map(|(_, l)| l.as_str()).collect();
        for f in FORMATS {
            assert_eq!((f.sniff)(&head), f.name == format, "{} on {file}", f.name);
        }
    }
    assert!(
        trace::sniff(&real("README.md"), &TraceOptions::default()).is_err(),
        "a README is no trace"
    );
}

// ---------------------------------------------------------------------------------------------------------
// 2. One tiny trace in every format

/// The tiny trace: (time_us, op, sector, sectors).
const TINY: [(f64, Op, u64, u64); 8] = [
    (0.0, Op::Write, 0, 8),
    (1_000.0, Op::Write, 16, 1),
    (2_500.0, Op::Read, 0, 8),
    (4_000.0, Op::Write, 2048, 128),
    (10_000.0, Op::Read, 16, 2),
    (12_000.0, Op::Write, 8, 7),
    (20_000.0, Op::Read, 2048, 256),
    (30_000.0, Op::Write, 1000, 3),
];

fn assert_tiny(format: &str, got: &[Request]) {
    let want: Vec<(Op, u64, u64)> = TINY
        .iter()
        .map(|&(_, op, s, n)| (op, s * 512, n * 512))
        .collect();
    let have: Vec<(Op, u64, u64)> = got.iter().map(|r| (r.op, r.offset, r.len)).collect();
    assert_eq!(have, want, "{format}");
    let times: Vec<f64> = got.iter().map(|r| r.time_us).collect();
    let want_times: Vec<f64> = match format {
        "csv" => vec![0.0; 8],
        _ => TINY.iter().map(|t| t.0).collect(),
    };
    assert_eq!(times, want_times, "{format}");
}

#[test]
fn tiny_trace_reads_the_same_in_every_format() {
    // Every row of the format list ships the tiny trace as `tests/fixtures/tiny.<name>` and reads it to the
    // same requests, named and sniffed; a row whose summary says it is never sniffed must be named.
    for f in FORMATS {
        let path = tiny_fixture(f.name);
        assert_tiny(f.name, &read_all(&path, &opts(f.name)));
        let head = trace::head_lines(&path, 8).unwrap();
        let head: Vec<&str> = head.lines.iter().map(|(_, l)| l.as_str()).collect();
        let named_only = f.summary.contains("never sniffed");
        assert_eq!(
            (f.sniff)(&head),
            !named_only,
            "{} sniffs its own fixture",
            f.name
        );
        if !named_only {
            assert_eq!(sniffed(&path), f.name);
            assert_tiny(f.name, &read_all(&path, &opts("auto")));
        }
    }
    // DiskSim lines are SSDsim lines: auto reads them as ssdsim (ns), which is why disksim must be named.
    assert_eq!(sniffed(&tiny_fixture("disksim")), "ssdsim");
}

#[test]
fn every_tiny_fixture_is_a_registered_format() {
    // The other half of the convention: no `tiny.<name>` fixture outlives its format's row.
    let names: Vec<&str> = FORMATS.iter().map(|f| f.name).collect();
    for entry in std::fs::read_dir(fixture("")).unwrap() {
        let file = entry.unwrap().file_name().to_string_lossy().into_owned();
        if let Some(name) = file.strip_prefix("tiny.") {
            assert!(
                names.contains(&name),
                "{file}: no format `{name}` in FORMATS"
            );
        }
    }
}

#[test]
fn every_format_has_a_bad_line_case() {
    let mut covered: Vec<&str> = BAD.iter().map(|b| b.0).collect();
    covered.sort_unstable();
    let mut names: Vec<&str> = FORMATS.iter().map(|f| f.name).collect();
    names.sort_unstable();
    assert_eq!(covered, names, "one row of BAD per format in FORMATS");
}

#[test]
fn tiny_trace_tags_and_events() {
    let tags: Vec<Tag> = read_all(&tiny_fixture("most"), &opts("most"))
        .iter()
        .map(|r| r.tag)
        .collect();
    assert_eq!(
        tags,
        [Tag::Data, Tag::Metadata].repeat(4),
        "MOST class D / M"
    );
    // The C rows of tiny.most are 150 us after each D; one extra 0-sector C (a flush) is skipped.
    let c = read_all(
        &tiny_fixture("most"),
        &TraceOptions {
            blkparse_event: "C".into(),
            ..opts("most")
        },
    );
    assert_eq!(c.len(), 8);
    assert_eq!(c[7].time_us, 30_150.0);
}

#[test]
fn gzip_is_read_transparently() {
    let raw = std::fs::read(tiny_fixture("blkparse")).unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&raw).unwrap();
    let path = temp("tiny.blkparse.gz", &gz.finish().unwrap());
    assert_eq!(sniffed(&path), "blkparse");
    assert_tiny("blkparse", &read_all(&path, &opts("auto")));
}

#[test]
fn time_unit_overrides_the_ascii_time_column() {
    // tiny.disksim read as ssdsim with time_unit "ms" is the tiny trace again.
    let ms = TraceOptions {
        time_unit: Some("ms".into()),
        ..opts("ssdsim")
    };
    assert_tiny("ssdsim", &read_all(&tiny_fixture("disksim"), &ms));
    let s = TraceOptions {
        time_unit: Some("s".into()),
        ..opts("disksim")
    };
    let got = read_all(&tiny_fixture("disksim"), &s);
    assert_eq!(got[2].time_us, 2.5e6, "2.5 s");
}

#[test]
fn an_option_the_trace_s_format_does_not_read_is_refused() {
    // An msr trace has its own time unit (100 ns ticks) and no event column: the options would have no effect.
    let refused = |opts: TraceOptions| match LineReader::open(&tiny_fixture("msr"), &opts) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("{opts:?} was taken"),
    };
    let time_unit = refused(TraceOptions {
        time_unit: Some("ms".into()),
        ..opts("auto")
    });
    assert!(
        time_unit.contains(
            "time_unit=ms applies to ssdsim and disksim traces only, and this trace is read as msr: drop the option"
        ),
        "{time_unit}"
    );
    let event = refused(TraceOptions {
        blkparse_event: "Q".into(),
        ..opts("msr")
    });
    assert!(
        event.contains("blkparse_event=Q applies to most and blkparse traces only"),
        "{event}"
    );
    // The default event is no option given.
    assert!(LineReader::open(&tiny_fixture("msr"), &opts("msr")).is_ok());
}

// ---------------------------------------------------------------------------------------------------------
// 3. Bad input

/// (format, a good line, a bad line, what the error must say was expected): one row per format.
const BAD: [(&str, &str, &str, &str); 9] = [
    ("csv", "W,0,4096", "X,0,4096", "op R, W or T, got `X`"),
    (
        "umass",
        "0,8,4096,w,0.5",
        "0,8,4096,w,soon",
        "Timestamp (field 5) in seconds, got `soon`",
    ),
    (
        "msr",
        "128166481075232275,h,1,Write,0,4096,1",
        "128166481075232276,h,1,Write,12k,4096,1",
        "Offset in bytes (field 5) as an unsigned integer, got `12k`",
    ),
    (
        "ssdsim",
        "0 0 8 1 0",
        "10 0 8 1",
        "`time dev lba size op`: 5 fields, got 4",
    ),
    (
        "disksim",
        "0.5 0 8 1 0",
        "x 0 8 1 0",
        "time (field 1) as a number, got `x`",
    ),
    (
        "fiu",
        "1 2 nfsd 8 8 W 6 0 d6c75ba46e82326fefa545b57a12e221",
        "2 2 nfsd 8 8 W 6 0",
        "`ts pid proc lba size R|W major minor md5`: 9 fields, got 8",
    ),
    (
        "vscsi",
        "1,100,2a,512,8",
        "1,200,2a,512",
        "`version,time,op,size,lbn`: 5 comma-separated fields, got 4",
    ),
    (
        "blkparse",
        "  8,16 5 6 0.1 1 D W 8 + 8 [java]",
        "  8,16 5 7 0.2 1 D W 8 + eight [java]",
        "nsect (field 10) as an unsigned integer, got `eight`",
    ),
    (
        "most",
        "0.1\tD\tW\t8\t8\t1\tcmd\tM",
        "0.2\tD\tW\t8\t8\t1\tcmd\tX",
        "class (field 8) D, M or J, got `X`",
    ),
];

#[test]
fn bad_lines_are_errors_naming_file_line_and_expectation_or_skipped_and_counted() {
    for (format, good, bad, expected_text) in BAD {
        let path = temp(
            &format!("bad.{format}"),
            format!("{good}\n{bad}\n{good}\n").as_bytes(),
        );
        let mut reader = LineReader::open(&path, &opts(format)).unwrap();
        assert!(
            reader.next_request().unwrap().is_ok(),
            "{format}: good line"
        );
        let err = reader.next_request().unwrap().unwrap_err();
        let message = err.to_string();
        match err {
            TraceError::Parse {
                path: p,
                line_no,
                line,
                expected,
            } => {
                assert_eq!(p, path, "{format}");
                assert_eq!(line_no, 2, "{format}");
                assert_eq!(line, bad, "{format}");
                assert!(expected.contains(expected_text), "{format}: {expected}");
            }
            other => panic!("{format}: {other}"),
        }
        assert!(
            message.contains(&format!("{}:2:", path.display())) && message.contains(bad),
            "{format}: {message}"
        );
        assert!(message.contains("skip_bad_lines"), "{format}: says the fix");

        let skip = TraceOptions {
            skip_bad_lines: true,
            ..opts(format)
        };
        let mut reader = LineReader::open(&path, &skip).unwrap();
        let mut n = 0;
        while let Some(r) = reader.next_request() {
            r.unwrap();
            n += 1;
        }
        assert_eq!((n, reader.skipped_lines()), (2, 1), "{format}");
    }
}

#[test]
fn bad_options_and_unknown_formats_name_the_valid_ones() {
    let path = tiny_fixture("blkparse");
    let bad_event = TraceOptions {
        blkparse_event: "X".into(),
        ..opts("blkparse")
    };
    let err = LineReader::open(&path, &bad_event)
        .err()
        .unwrap()
        .to_string();
    assert!(
        err.contains("blkparse_event `X`") && err.contains("valid: D"),
        "{err}"
    );
    let err = LineReader::open(&path, &opts("spc"))
        .err()
        .unwrap()
        .to_string();
    assert!(
        err.contains("unknown trace format `spc`") && err.contains("vscsi"),
        "{err}"
    );
    let err = LineReader::open(&fixture("nope.csv"), &opts("csv"))
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("nope.csv"), "{err}");
}

// ---------------------------------------------------------------------------------------------------------
// 4. Filters

#[test]
fn device_and_writes_only_filters() {
    // Two ASUs in SPC form: ASU 1 gets the reads and one write.
    let spc = "0,8,4096,w,0.0\n1,16,512,r,0.1\n0,24,1024,w,0.2\n1,32,2048,w,0.3\n1,40,512,r,0.4\n";
    let path = temp("two-asus.spc", spc.as_bytes());
    let with = |device, writes_only| TraceOptions {
        device,
        writes_only,
        ..opts("auto")
    };
    assert_eq!(counts(&read_all(&path, &with(None, false))), (5, 2, 3, 0));
    assert_eq!(
        counts(&read_all(&path, &with(Some(1), false))),
        (3, 2, 1, 0)
    );
    assert_eq!(
        counts(&read_all(&path, &with(Some(0), false))),
        (2, 0, 2, 0)
    );
    assert_eq!(counts(&read_all(&path, &with(None, true))), (3, 0, 3, 0));
    let asu1_writes = read_all(&path, &with(Some(1), true));
    assert_eq!(
        asu1_writes,
        [Request::new(300_000.0, Op::Write, 32 * 512, 2048)]
    );
    // writes_only also drops trims.
    let csv = temp("trim.csv", b"W,0,4096\nT,0,4096\nR,0,4096\n");
    assert_eq!(counts(&read_all(&csv, &with(None, true))), (1, 0, 1, 0));
    // A device filter on a format without a device column is an error, not a silent no-op.
    let mut reader = LineReader::open(&csv, &with(Some(1), false)).unwrap();
    let err = reader.next_request().unwrap().unwrap_err().to_string();
    assert!(
        err.contains("no device column") && err.contains("device=1"),
        "{err}"
    );
}

// ---------------------------------------------------------------------------------------------------------
// 5. trace::analysis::info

#[test]
fn info_of_a_handcrafted_csv() {
    // 4 KiB pages, 16 KiB blocks (4 pages).
    let mut csv = String::from("op,offset,length\n");
    csv += "W,0,614400\n"; // pages 0..=149 once each: 150 page writes
    csv += &"W,0,4096\n".repeat(9); // page 0: 9 more
    csv += &"W,4096,4096\n".repeat(4); // page 1: 4 more
    csv += "W,4000,200\n"; // bytes 4000..4200: pages 0 and 1 once more
    csv += "R,1048576,8192\n"; // pages 256, 257 read only
    csv += "T,0,4096\n"; // a trim touches no data
    let path = temp("info.csv", csv.as_bytes());
    let got = info(
        path.to_str().unwrap(),
        &opts("auto"),
        16_384,
        4096,
        &mut |_, _| true,
    )
    .unwrap();
    // Page writes: 150 + 9 + 4 + 2 = 165; page 0 has 1 + 9 + 1 = 11, page 1 has 1 + 4 + 1 = 6.
    // Hottest pages: ceil(150 x 0.2%) = 1 -> 11 / 165; ceil(150 x 1%) = 2 -> (11 + 6) / 165.
    // Blocks: pages 0..=149 fill blocks 0..=37 (38 written blocks); block 0 = 11 + 6 + 1 + 1 = 19, the
    // hottest; ceil(38 x 0.2%) = ceil(38 x 1%) = 1 -> 19 / 165.
    let want = TraceInfo {
        format: "csv".into(),
        requests: 17,
        reads: 1,
        writes: 15,
        trims: 1,
        empty: 0,
        read_bytes: 8192,
        write_bytes: 614_400 + 9 * 4096 + 4 * 4096 + 200,
        trim_bytes: 4096,
        skipped_lines: 0,
        page_bytes: 4096,
        block_bytes: 16_384,
        footprint_bytes: 152 * 4096,
        write_footprint_bytes: 150 * 4096,
        highest_address: 1_048_576 + 8192,
        duration_us: 0.0,
        page_writes: 165,
        written_pages: 150,
        written_blocks: 38,
        write_share_hottest_0_2pct_pages: 11.0 / 165.0,
        write_share_hottest_1pct_pages: 17.0 / 165.0,
        write_share_hottest_0_2pct_blocks: 19.0 / 165.0,
        write_share_hottest_1pct_blocks: 19.0 / 165.0,
        devices: vec![],
        // Log2 bins (k holds [2^(k-1), 2^k)). Sizes: 200 B (bin 8), 13 x 4 KiB and the 4 KiB trim (bin 13),
        // 8 KiB (14), 600 KiB (20). No times: 16 gaps of 0. Reuse (requests since the last request starting
        // on the same page): page 0 nine times at 1, page 1 three times at 1, the 15th request (page 0) at 5
        // since the 10th. Page writes: 148 pages once, page 1 six times (bin 3), page 0 eleven (bin 4).
        distributions: Distributions {
            request_bytes: {
                let mut h = vec![0; 21];
                (h[8], h[13], h[14], h[20]) = (1, 14, 1, 1);
                h
            },
            inter_arrival_us: vec![16],
            reuse_distance_requests: vec![0, 12, 0, 1],
            page_writes: vec![0, 148, 0, 1, 1],
        },
    };
    assert_eq!(got, want);
    let json = serde_json::to_value(&got).unwrap();
    assert_eq!(json["footprint_bytes"], 622_592);

    let writes_only = TraceOptions {
        writes_only: true,
        ..opts("auto")
    };
    let w = info(
        path.to_str().unwrap(),
        &writes_only,
        16_384,
        4096,
        &mut |_, _| true,
    )
    .unwrap();
    assert_eq!((w.requests, w.reads, w.trims), (15, 0, 0));
    assert_eq!(w.highest_address, 614_400);
    assert_eq!(w.footprint_bytes, 150 * 4096);
}

#[test]
fn info_of_the_tiny_trace_and_of_a_workload() {
    let path = tiny_fixture("ssdsim");
    let got = info(
        path.to_str().unwrap(),
        &opts("auto"),
        16_384,
        4096,
        &mut |_, _| true,
    )
    .unwrap();
    // Pages (4 KiB): writes hit 0, 2, 256..=271, 1, 125 (20 pages, once each); reads add 257..=287 beyond
    // them: footprint 0, 1, 2, 125, 256..=287 = 36 pages. Blocks (4 pages): 0 (pages 0-2: 3 writes),
    // 31 (page 125: 1), 64..=67 (4 each): 6 blocks, the hottest holds 4 of 20 page writes.
    assert_eq!((got.requests, got.reads, got.writes), (8, 3, 5));
    assert_eq!((got.read_bytes, got.write_bytes), (266 * 512, 147 * 512));
    assert_eq!(got.footprint_bytes, 36 * 4096);
    assert_eq!(got.write_footprint_bytes, 20 * 4096);
    assert_eq!(got.highest_address, 1_048_576 + 131_072);
    assert_eq!(got.duration_us, 30_000.0);
    assert_eq!(
        (got.page_writes, got.written_pages, got.written_blocks),
        (20, 20, 6)
    );
    assert_eq!(got.write_share_hottest_1pct_pages, 1.0 / 20.0);
    assert_eq!(got.write_share_hottest_1pct_blocks, 4.0 / 20.0);

    // 8 sequential requests of 2 pages from offset 0 (a workload spreads over 64 MiB).
    let w = info(
        "sequential:writes=8,pages=2",
        &TraceOptions::default(),
        8192,
        4096,
        &mut |_, _| true,
    )
    .unwrap();
    assert_eq!((w.requests, w.writes, w.write_bytes), (8, 8, 65_536));
    assert_eq!(
        (w.written_pages, w.written_blocks, w.highest_address),
        (16, 8, 65_536)
    );
    assert_eq!(w.write_share_hottest_1pct_pages, 1.0 / 16.0);

    let err = info(
        path.to_str().unwrap(),
        &opts("auto"),
        2048,
        4096,
        &mut |_, _| true,
    )
    .unwrap_err();
    assert!(
        err.to_string().contains("block_bytes >= page_bytes"),
        "{err}"
    );
}

#[test]
fn info_of_a_real_trace() {
    let path = real("msr_wdev_1.csv");
    let got = info(
        path.to_str().unwrap(),
        &opts("auto"),
        256 << 10,
        4096,
        &mut |_, _| true,
    )
    .unwrap();
    // Worked out independently (a Python Counter over the CSV, 4 KiB pages, 256 KiB blocks): 1,354 page
    // writes on 369 pages in 12 blocks; the hottest page takes 135 of them, the hottest 4 pages
    // (ceil(3.69)) 527, and the hottest block (ceil(0.12) = 1) 527 too.
    assert_eq!((got.requests, got.reads, got.writes), (1_055, 0, 1_055));
    assert_eq!(
        (got.write_bytes, got.highest_address),
        (5_537_792, 54_620_086_272)
    );
    assert_eq!(
        (got.page_writes, got.written_pages, got.written_blocks),
        (1_354, 369, 12)
    );
    assert_eq!(got.footprint_bytes, 369 * 4096);
    assert_eq!(got.write_share_hottest_0_2pct_pages, 135.0 / 1354.0);
    assert_eq!(got.write_share_hottest_1pct_pages, 527.0 / 1354.0);
    assert_eq!(got.write_share_hottest_0_2pct_blocks, 527.0 / 1354.0);
    assert_eq!(got.write_share_hottest_1pct_blocks, 527.0 / 1354.0);
    assert!((got.duration_us - 595_003_214_016.9).abs() < 1e-3);
}

#[test]
fn sector_numbers_beyond_u64_bytes_are_errors_not_panics() {
    // 2^60 sectors is 2^69 bytes.
    let huge = 1u64 << 60;
    let lines = [
        ("umass", format!("0,{huge},512,w,0")),
        ("ssdsim", format!("0 0 {huge} 1 0")),
        (
            "fiu",
            format!("1 2 p {huge} 8 W 6 0 d6c75ba46e82326fefa545b57a12e221"),
        ),
        ("vscsi", format!("1,100,2a,512,{huge}")),
        ("blkparse", format!("8,16 5 6 0.1 1 D W {huge} + 8 [java]")),
        ("most", format!("0.1\tD\tW\t8\t{huge}\t1\tcmd\tM")),
    ];
    for (format, line) in lines {
        let path = temp(&format!("huge.{format}"), format!("{line}\n").as_bytes());
        let err = LineReader::open(&path, &opts(format))
            .unwrap()
            .next_request()
            .unwrap()
            .unwrap_err()
            .to_string();
        assert!(err.contains(&format!("got {huge}")), "{format}: {err}");
    }
}

// ---------------------------------------------------------------------------------------------------------
// 6. devices: fold, concat, a filter

/// Three SPC devices (ASU, LBA in sectors, bytes, op, s): device 0 ends at 100 x 512 + 1024 = 52,224 B,
/// device 2 at 40 x 512 + 512 = 20,992 B, device 5 at 8 x 512 + 8,192 = 12,288 B.
const THREE_DEVICES: &str =
    "2,0,4096,w,0.0\n0,100,1024,w,0.1\n5,8,8192,w,0.2\n2,40,512,r,0.3\n0,0,512,r,0.4\n";

fn with_devices(devices: &str) -> TraceOptions {
    TraceOptions {
        devices: devices.parse().unwrap(),
        ..opts("auto")
    }
}

/// (offset, len) of every request of `path` opened as a run opens it, on 16 KiB blocks.
fn placed(path: &Path, opts: &TraceOptions) -> Result<Vec<(u64, u64)>, TraceError> {
    let mut source = trace::open_on(path.to_str().unwrap(), opts, u64::MAX, 512, 16_384)?;
    std::iter::from_fn(|| source.next_request())
        .map(|r| r.map(|r| (r.offset, r.len)))
        .collect()
}

#[test]
fn devices_concat_gives_each_device_its_block_rounded_range_in_device_order() {
    let path = temp("three.spc", THREE_DEVICES.as_bytes());
    // fold: the offsets as written.
    assert_eq!(
        placed(&path, &with_devices("fold")).unwrap(),
        vec![
            (0, 4096),
            (51_200, 1024),
            (4096, 8192),
            (20_480, 512),
            (0, 512)
        ]
    );
    // concat on 16 KiB blocks: device 0 [0, 64 KiB) (52,224 -> 4 blocks), device 2 [64 KiB, 96 KiB)
    // (20,992 -> 2 blocks), device 5 [96 KiB, 112 KiB) (12,288 -> 1 block).
    assert_eq!(
        placed(&path, &with_devices("concat")).unwrap(),
        vec![
            (65_536, 4096),
            (51_200, 1024),
            (98_304 + 4096, 8192),
            (65_536 + 20_480, 512),
            (0, 512)
        ]
    );
    // A filter keeps its devices in the order given: device 5 [0, 16 KiB), device 2 [16 KiB, 48 KiB).
    assert_eq!(
        placed(&path, &with_devices("5,2")).unwrap(),
        vec![(16_384, 4096), (4096, 8192), (16_384 + 20_480, 512)]
    );
    // One device alone is its own addresses, as device=N.
    assert_eq!(
        placed(&path, &with_devices("2")).unwrap(),
        placed(
            &path,
            &TraceOptions {
                device: Some(2),
                ..opts("auto")
            }
        )
        .unwrap()
    );
}

#[test]
fn devices_errors_name_the_devices_there_are() {
    let path = temp("three-err.spc", THREE_DEVICES.as_bytes());
    let err = placed(&path, &with_devices("5,7")).unwrap_err().to_string();
    assert!(
        err.contains("device 7 is not in the trace, whose devices are 0, 2, 5"),
        "{err}"
    );
    let both = TraceOptions {
        device: Some(2),
        ..with_devices("concat")
    };
    let err = placed(&path, &both).unwrap_err().to_string();
    assert!(err.contains("give one"), "{err}");
    let csv = temp("no-devices.csv", b"W,0,4096\n");
    let err = placed(&csv, &with_devices("concat"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("needs a device column"), "{err}");
    let err = trace::open_on(
        "uniform:writes=10",
        &with_devices("concat"),
        1 << 20,
        512,
        16_384,
    )
    .err()
    .unwrap()
    .to_string();
    assert!(err.contains("a built-in workload has no devices"), "{err}");
    // Config text: a list, one number or text; a bad one names the key.
    let cfg: TraceOptions = serde_json::from_str(r#"{"devices": [5, 2]}"#).unwrap();
    assert_eq!(cfg.devices, Devices::Only(vec![5, 2]));
    let err =
        ftlsim_core::config::from_json::<TraceOptions>("trace options", r#"{"devices": "all"}"#)
            .unwrap_err()
            .to_string();
    assert!(
        err.contains("devices") && err.contains("fold, concat"),
        "{err}"
    );
}

#[test]
fn info_and_a_run_see_the_concatenated_ranges() {
    let path = temp("three-info.spc", THREE_DEVICES.as_bytes());
    let got = info(
        path.to_str().unwrap(),
        &with_devices("concat"),
        16_384,
        512,
        &mut |_, _| true,
    )
    .unwrap();
    let ranges: Vec<_> = got
        .devices
        .iter()
        .map(|d| {
            (
                d.device,
                d.requests,
                d.highest_address,
                d.range_start,
                d.range_bytes,
            )
        })
        .collect();
    assert_eq!(
        ranges,
        vec![
            (0, 2, 52_224, Some(0), Some(65_536)),
            (2, 2, 20_992, Some(65_536), Some(32_768)),
            (5, 1, 12_288, Some(98_304), Some(16_384)),
        ]
    );
    assert_eq!(got.highest_address, 98_304 + 12_288);
    // Folded, the same devices without ranges.
    let folded = info(
        path.to_str().unwrap(),
        &opts("auto"),
        16_384,
        512,
        &mut |_, _| true,
    )
    .unwrap();
    assert_eq!(folded.devices[1].range_start, None);
    assert_eq!(folded.highest_address, 52_224);

    // A run sizes its capacity by the ranges: 112 KiB is 7 blocks of 16 KiB (lee2007 with 16 KiB blocks).
    let cfg = ftlsim_core::sim::SimConfig {
        trace: with_devices("concat"),
        ..Default::default()
    };
    let report = ftlsim_core::sim::run(&cfg, path.to_str().unwrap(), &mut |_| true).unwrap();
    let flat = report.flatten();
    assert_eq!(flat["config.capacity_bytes"], 114_688);
    assert_eq!(flat["config.devices"], "concat");
    assert_eq!(flat["host.write_requests"], 3);
}

#[test]
fn a_trace_rewritten_in_place_is_measured_again() {
    // The capacity pre-pass is remembered per file; a file rewritten at the same path must not reuse it.
    let capacity = |path: &Path| {
        let report =
            ftlsim_core::sim::run(&Default::default(), path.to_str().unwrap(), &mut |_| true)
                .unwrap();
        report.flatten()["config.capacity_bytes"].clone()
    };
    // lee2007: 16 KiB blocks; the furthest byte rounds up to a block.
    let path = temp("rewritten.csv", b"op,offset,length\nW,0,512\nW,20480,512\n");
    assert_eq!(capacity(&path), 32_768);
    assert_eq!(capacity(&path), 32_768, "remembered: the same answer");
    std::fs::write(&path, b"op,offset,length\nW,0,512\nW,65536,512\n").unwrap();
    assert_eq!(capacity(&path), 81_920, "a longer file is a new trace");
}

/// `ftlsim generate WORKLOAD -` read "the extension `.` names no format ftlsim writes".
#[test]
fn a_trace_output_without_an_extension_is_told_it_needs_one() {
    for path in ["-", "/tmp/out"] {
        let e = trace::writer_for(Path::new(path)).err().expect("no format");
        assert!(
            e.to_string().starts_with(&format!(
                "trace {path}: has no extension to name the format to write (a trace is written to a file, \
                 e.g. out.csv; not to standard output); use one of .csv (csv)"
            )),
            "{e}"
        );
    }
    assert!(trace::writer_for(Path::new("out.txt")).is_err_and(|e| e
        .to_string()
        .contains("the extension `.txt` names no format ftlsim writes")));
}

/// `device` takes a number or a blkparse `major,minor` as `ftlsim info` lists it (8,16 is 2064): in a config
/// file or from Python, as on the command line.
#[test]
fn a_device_is_given_by_its_number_or_its_major_and_minor() {
    let device = |given: serde_json::Value| {
        serde_json::from_value::<TraceOptions>(serde_json::json!({ "device": given }))
            .map(|o| o.device)
            .map_err(|e| e.to_string())
    };
    for given in [
        serde_json::json!(2064),
        serde_json::json!("2064"),
        serde_json::json!("8,16"),
        serde_json::json!(" 8, 16 "),
    ] {
        assert_eq!(device(given.clone()), Ok(Some(2064)), "{given}");
    }
    assert_eq!(device(serde_json::Value::Null), Ok(None));
    for refused in [
        serde_json::json!("8,256"),
        serde_json::json!("8;16"),
        serde_json::json!(-1),
        serde_json::json!(1.5),
    ] {
        let said = device(refused.clone()).expect_err("refused");
        assert!(
            said.contains("expected a device number (2064) or a blkparse major,minor (\"8,16\")"),
            "{refused}: {said}"
        );
    }
    // The filter keeps the same requests either way.
    let path = tiny_fixture("blkparse");
    let on = |given: &str| {
        let mut options: TraceOptions =
            serde_json::from_value(serde_json::json!({ "device": given })).unwrap();
        options.format = "blkparse".into();
        read_all(&path, &options)
    };
    assert!(!on("8,16").is_empty());
    assert_eq!(on("8,16"), on("2064"));
}
