//! Hostile trace input: every way a trace file can be wrong ends in an error that
//! names the file and line (or is skipped with `skip_bad_lines`), never in a panic, a hang, an allocation the
//! size of an address, or a silently wrong request. Also the lossless writers and `compact`,
//! and a deterministic mutation test over real lines of every format.

use ftlsim_core::request::{Op, Request, Tag};
use ftlsim_core::sim::{self, SimConfig};
use ftlsim_core::trace::analysis::info::info;
use ftlsim_core::trace::{
    self, LineReader, RequestSource, TraceError, TraceOptions, VecSource, FORMATS,
};
use rand::{Rng, SeedableRng};
use std::path::Path;
use std::time::Instant;

mod common;
use common::trace_files::{fixture, opts, read, temp, tiny_fixture};

fn skipping(format: &str) -> TraceOptions {
    TraceOptions {
        skip_bad_lines: true,
        ..opts(format)
    }
}

fn no_progress() -> impl FnMut(u64, u64) -> bool {
    |_, _| true
}

#[test]
fn a_file_without_newlines_ends_in_a_clean_error_in_bounded_memory() {
    // /dev/zero: sniffing reads one 64 KiB line and stops; a named format reads it as line 1 and fails.
    let err = info("/dev/zero", &opts("auto"), 16_384, 512, &mut no_progress()).unwrap_err();
    let message = err.to_string();
    assert!(
        message.contains("line 1") && message.contains("65536 bytes"),
        "{message}"
    );
    assert!(
        message.len() < 1_000,
        "quotes are clipped: {} bytes",
        message.len()
    );
    let mut reader = LineReader::open(Path::new("/dev/zero"), &opts("csv")).unwrap();
    let err = reader.next_request().unwrap().unwrap_err();
    assert!(err.to_string().starts_with("/dev/zero:1:"), "{err}");

    // A 200 KB line between good ones: an error at line 2, or skipped, and the next line still read.
    let mut text = b"W,0,4096\n".to_vec();
    text.extend(std::iter::repeat_n(b'7', 200_000));
    text.extend(b"\nW,4096,4096\n");
    let path = temp("long.csv", &text);
    let err = read(&path, &opts("csv")).unwrap_err();
    assert!(matches!(err, TraceError::Parse { line_no: 2, .. }), "{err}");
    let got = read(&path, &skipping("csv")).unwrap();
    assert_eq!(
        got.iter().map(|r| r.offset).collect::<Vec<_>>(),
        vec![0, 4096]
    );
}

#[test]
fn non_utf8_bytes_name_the_line_and_are_skipped_on_request() {
    // The real FIU trace has a Latin-1 byte in a process name.
    let good = "89966523969723 4201 nfsd 16 1 W 8 16 88b93b628d84082186026d9da044f173";
    let mut text = format!("{good}\n").into_bytes();
    text.extend(b"89966523969724 4201 caf\xe9 24 1 W 8 16 88b93b628d84082186026d9da044f173\n");
    text.extend(format!("{good}\n").as_bytes());
    let path = temp("latin1.fiu", &text);
    let err = read(&path, &opts("fiu")).unwrap_err();
    let message = err.to_string();
    assert!(
        message.starts_with(&format!("{}:2:", path.display()))
            && message.contains("0xe9 at column 24")
            && message.contains("4201 caf\\xe9 24 1 W"),
        "{message}"
    );
    // A binary file's bytes are quoted escaped, so that a terminal neither shows replacement characters nor takes
    // its escape codes, when it is read with a format and when its format is sniffed.
    let binary = temp("binary.dat", b"\xd9\x1b[2J\x00\x07garbage\xff\n");
    for format in ["csv", "auto"] {
        let message = read(&binary, &opts(format)).unwrap_err().to_string();
        assert!(
            message.contains("`\\xd9\\u{1b}[2J\\u{0}\\u{7}garbage\\xff`")
                && !message.contains(['\u{fffd}', '\u{1b}', '\0']),
            "{format}: {message}"
        );
    }
    let mut reader = LineReader::open(&path, &skipping("auto")).unwrap();
    let n = std::iter::from_fn(|| reader.next_request())
        .map(Result::unwrap)
        .count();
    assert_eq!((n, reader.skipped_lines()), (2, 1));
}

#[test]
fn offsets_near_2_pow_64_and_non_finite_times_are_errors_not_wraps() {
    let cases = [
        (
            "csv",
            "W,18446744073709551000,4096".to_string(),
            "offset + length within 2^64",
        ),
        (
            "msr",
            "128166372003061629,h,0,Write,18446744073709551615,512,0".into(),
            "within 2^64",
        ),
        (
            "blkparse",
            "8,0 0 0 1e308 0 D W 0 + 8 [x]".into(),
            "a finite time",
        ),
        ("umass", "0,0,512,w,1e308".into(), "a finite time"),
        ("csv", "W,0,4096,,1e309".into(), "time_us (field 5)"),
    ];
    for (format, line, expected) in cases {
        let path = temp(&format!("edge.{format}"), format!("{line}\n").as_bytes());
        let err = read(&path, &opts(format)).unwrap_err();
        let message = err.to_string();
        assert!(
            message.starts_with(&format!("{}:1:", path.display())),
            "{message}"
        );
        assert!(message.contains(expected), "{format}: {message}");
        assert_eq!(read(&path, &skipping(format)).unwrap(), vec![], "{format}");
    }
}

#[test]
fn a_long_field_is_quoted_to_80_characters() {
    let field = "x".repeat(20_000);
    let path = temp(
        "field.csv",
        format!("W,0,4096\nW,{field},4096\n").as_bytes(),
    );
    let message = read(&path, &opts("csv")).unwrap_err().to_string();
    assert!(message.len() < 600, "{} bytes: {message}", message.len());
    assert!(
        message.contains("(20000 bytes)") && message.contains("(20007 bytes)"),
        "{message}"
    );
}

#[test]
fn backquotes_inside_a_field_do_not_unclip_the_message() {
    // Found by the read_disksim fuzz target: a line of backquotes broke the pairing of quoted pieces, and the
    // error quoted 2,104 bytes of it.
    let path = fixture("fuzz-disksim-backquotes.disksim");
    let message = read(&path, &opts("disksim")).unwrap_err().to_string();
    // The path, 400 characters of message, and the hint to skip bad lines.
    assert!(message.len() < 800, "{} bytes: {message}", message.len());
    assert!(
        message.contains("fuzz-disksim-backquotes.disksim:1:"),
        "{message}"
    );
}

#[test]
fn sniffing_skips_a_byte_order_mark_and_names_the_line_that_broke_the_best_candidate() {
    let path = temp(
        "bom.csv",
        b"\xef\xbb\xbfop,offset,length\nW,0,4096\nR,512,512\n",
    );
    assert_eq!(
        trace::sniff(&path, &TraceOptions::default()).unwrap().name,
        "csv"
    );
    assert_eq!(read(&path, &opts("auto")).unwrap().len(), 2);

    // Line 4 is no CSV; every other line is: the format is plain, and line 4 is the fault (with the way to
    // skip it), where "cannot tell the format" asked for a format that would change nothing.
    let path = temp(
        "bad4.csv",
        b"op,offset,length\nW,0,4096\nR,512,512\nW,zero,4096\nW,8192,512\n",
    );
    let message = read(&path, &opts("auto")).unwrap_err().to_string();
    assert!(
        message.ends_with(
            "bad4.csv:4: cannot parse `W,zero,4096`: expected offset in bytes (field 2) as an unsigned integer, \
             got `zero` (pass skip_bad_lines=true to skip such lines)"
        ),
        "{message}"
    );
    // Two such lines: no format takes the head but them, and sniffing names the first that broke the best.
    let two = temp(
        "bad45.csv",
        b"op,offset,length\nW,0,4096\nR,512,512\nW,zero,4096\nW,one,512\n",
    );
    let message = read(&two, &opts("auto")).unwrap_err().to_string();
    assert!(
        message.contains("best candidate `csv`")
            && message.contains("line 4")
            && message.contains("`W,zero,4096`")
            && message.contains("got `zero`"),
        "{message}"
    );
    // With skip_bad_lines the candidate is taken and the line skipped.
    let mut reader = LineReader::open(&path, &skipping("auto")).unwrap();
    let n = std::iter::from_fn(|| reader.next_request())
        .map(Result::unwrap)
        .count();
    assert_eq!(
        (reader.format_name(), n, reader.skipped_lines()),
        ("csv", 3, 1)
    );
}

#[test]
fn info_costs_requests_not_addresses() {
    let started = Instant::now();
    let path = temp("tib.csv", b"W,0,1099511627776\n");
    let got = info(
        path.to_str().unwrap(),
        &opts("auto"),
        16_384,
        512,
        &mut no_progress(),
    )
    .unwrap();
    // 1 TiB written once: 2^31 pages of 512 B, 2^26 blocks of 16 KiB.
    assert_eq!((got.written_pages, got.written_blocks), (1 << 31, 1 << 26));
    assert_eq!((got.page_writes, got.footprint_bytes), (1 << 31, 1 << 40));
    // ceil(1% of 2^31) pages hold that many of the 2^31 page writes.
    assert_eq!(
        got.write_share_hottest_1pct_pages,
        21_474_837.0 / (1u64 << 31) as f64
    );

    let path = temp(
        "16tib.csv",
        b"W,17592186044416,4096\nW,17592186044416,512\n",
    );
    let got = info(
        path.to_str().unwrap(),
        &opts("auto"),
        16_384,
        512,
        &mut no_progress(),
    )
    .unwrap();
    assert_eq!(got.highest_address, (16u64 << 40) + 4096);
    // Pages: the first written twice, 7 once; one block holds all 9 page writes.
    assert_eq!(
        (got.page_writes, got.written_pages, got.written_blocks),
        (9, 8, 1)
    );
    assert_eq!(got.write_share_hottest_0_2pct_pages, 2.0 / 9.0);
    assert!(
        started.elapsed().as_secs_f64() < 1.0,
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn info_is_cancelled_by_its_progress_callback() {
    let mut text = String::new();
    for i in 0..40_000u64 {
        text += &format!("W,{},4096\n", i * 4096);
    }
    let path = temp("cancel.csv", text.as_bytes());
    let mut calls = 0;
    let err = info(
        path.to_str().unwrap(),
        &opts("csv"),
        16_384,
        4096,
        &mut |_, _| {
            calls += 1;
            false
        },
    )
    .unwrap_err();
    assert!(matches!(err, TraceError::Cancelled), "{err}");
    assert_eq!(calls, 1, "stopped at the first call, after 16,384 requests");
}

#[test]
fn info_names_the_format_and_the_devices() {
    let path = tiny_fixture("msr");
    let got = info(
        path.to_str().unwrap(),
        &opts("auto"),
        16_384,
        4096,
        &mut no_progress(),
    )
    .unwrap();
    assert_eq!(got.format, "msr");
    let devices: Vec<(u64, u64)> = got.devices.iter().map(|d| (d.device, d.requests)).collect();
    assert_eq!(devices.iter().map(|d| d.1).sum::<u64>(), got.requests);
    assert!(!devices.is_empty());
    let w = info(
        "uniform:writes=10",
        &TraceOptions::default(),
        16_384,
        4096,
        &mut no_progress(),
    )
    .unwrap();
    assert_eq!((w.format.as_str(), w.devices.len()), ("workload", 0));
}

#[test]
fn a_capacity_error_names_the_file_and_line_and_offers_compact() {
    let path = temp("far.csv", b"W,0,4096\nW,1099511627776,4096\n");
    let cfg = SimConfig {
        capacity: Some("64MiB".into()),
        ..SimConfig::default()
    };
    let message = sim::run(&cfg, path.to_str().unwrap(), &mut |_| true)
        .unwrap_err()
        .to_string();
    assert!(
        message.starts_with(&format!("{}:2:", path.display())) && message.contains("compact=true"),
        "{message}"
    );
    // With compact the two extents lie in the first 2 MiB: the run fits 64 MiB and reads back.
    let cfg = SimConfig {
        trace: TraceOptions {
            compact: true,
            ..TraceOptions::default()
        },
        ..cfg
    };
    let report = sim::run(&cfg, path.to_str().unwrap(), &mut |_| true).unwrap();
    assert_eq!(report.host.requests, 2);
}

#[test]
fn compact_runs_a_sparse_terabyte_trace_on_a_device_of_its_footprint() {
    // Four writes 4 TiB apart and their reads: a 4 MiB footprint, the capacity inferred from it.
    let mut text = String::new();
    for i in 0..4u64 {
        text += &format!("W,{},8192\n", (i << 42) + 4096);
    }
    for i in 0..4u64 {
        text += &format!("R,{},8192\n", (i << 42) + 4096);
    }
    let path = temp("sparse.csv", text.as_bytes());
    let cfg = SimConfig {
        trace: TraceOptions {
            compact: true,
            ..TraceOptions::default()
        },
        ..SimConfig::default()
    };
    let report = sim::run(&cfg, path.to_str().unwrap(), &mut |_| true).unwrap();
    assert_eq!(report.host.requests, 8);
    assert!(
        report.config.capacity_bytes <= 4 << 20,
        "{}",
        report.config.capacity_bytes
    );
}

fn sample() -> Vec<Request> {
    let tagged = |time_us, op, offset, len, tag| Request {
        tag,
        ..Request::new(time_us, op, offset, len)
    };
    vec![
        tagged(0.0, Op::Write, 0, 4096, Tag::None),
        tagged(250.0, Op::Read, 512, 1024, Tag::None),
        tagged(30_000_000_000.0, Op::Write, 1 << 40, 8192, Tag::None),
        tagged(30_000_000_007.0, Op::Read, 1 << 40, 512, Tag::None),
    ]
}

#[test]
fn every_writer_reads_back_the_same_requests_at_the_same_times() {
    // Every row of WRITERS, under each of its extensions, plain and gzipped.
    let names = trace::WRITERS
        .iter()
        .flat_map(|w| w.extensions)
        .flat_map(|ext| [format!("out.{ext}"), format!("out.{ext}.gz")]);
    for name in names {
        let name = name.as_str();
        let path = temp(name, b"");
        let n = trace::write(&mut VecSource::new(sample()), &path).unwrap();
        assert_eq!(n, 4);
        let writer = trace::writer_for(&path).unwrap();
        assert_eq!(
            trace::sniff(&path, &TraceOptions::default()).unwrap().name,
            writer.name,
            "{name}"
        );
        assert_eq!(read(&path, &opts("auto")).unwrap(), sample(), "{name}");
    }
}

#[test]
fn a_trace_reaching_beyond_what_a_run_can_address_converts_as_it_is() {
    // 1.6 TB in the default device's 16 KiB blocks is more blocks than a run's geometry addresses: a run must
    // be given a capacity, `compact` or `wrap`, but `convert` needs no device, and it refused the file, naming
    // a --capacity nobody gave.
    let text = "W,0,4096\nR,1748314411520,4096\n";
    let source = temp("far.csv", text.as_bytes());
    let copy = temp("far-copy.csv", b"");
    let run = sim::run(&SimConfig::default(), source.to_str().unwrap(), &mut |_| {
        true
    });
    assert!(run.unwrap_err().to_string().contains("more than the"));
    let written = ftlsim_core::generate::generate(
        source.to_str().unwrap(),
        &copy,
        &SimConfig::default(),
        &mut || true,
    );
    assert_eq!(written.unwrap().requests, 2);
    assert_eq!(
        read(&copy, &opts("auto")).unwrap(),
        read(&source, &opts("auto")).unwrap()
    );
}

#[test]
fn a_source_of_no_request_is_not_written() {
    // `generate uniform:writes=0 z.csv` wrote the header alone, which `info z.csv` could not tell the format of.
    let out = temp("none.csv", b"");
    std::fs::remove_file(&out).unwrap();
    let err = trace::write(&mut VecSource::new(vec![]), &out).unwrap_err();
    assert!(
        err.to_string()
            .contains("not written: the source has no request"),
        "{err}"
    );
    assert!(!out.exists());
}

#[test]
fn an_ssdsim_trace_converted_to_ssdsim_is_the_same_text() {
    // Nanosecond times that are not whole in microseconds: each read as an f64 of microseconds and written
    // back in whole nanoseconds (33647136083 came back as 33647136082.999996 when written as time_us x 1000).
    let mut x: u64 = 1;
    let text: String = (0..2000)
        .map(|i| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            format!(
                "{} 0 {} 8 {}\n",
                (x >> 20) % 10_000_000_000_000,
                8 * i,
                i % 2
            )
        })
        .chain(["33647136083 0 0 8 0\n".to_string()])
        .collect();
    let source = temp("ns.trace", text.as_bytes());
    let copy = temp("ns-copy.trace", b"");
    trace::write(
        &mut LineReader::open(&source, &opts("ssdsim")).unwrap(),
        &copy,
    )
    .unwrap();
    assert_eq!(std::fs::read_to_string(&copy).unwrap(), text);
}

#[test]
fn every_writer_keeps_each_request_on_its_device_or_refuses_a_trace_on_several() {
    // SPC requests on devices 0, 3, 2064 (blkparse's 8,16) and 70,000.
    let spc = temp(
        "devices.spc",
        b"0,8,4096,w,0.5\n3,16,512,r,1\n2064,0,1024,w,1.5\n70000,8,512,w,2\n",
    );
    let on_devices = |path: &Path| -> Vec<(Request, Option<u64>)> {
        let mut reader = LineReader::open(path, &opts("auto")).unwrap();
        std::iter::from_fn(|| Some((reader.next_request()?.unwrap(), reader.device()))).collect()
    };
    let want = on_devices(&spc);
    for writer in trace::WRITERS {
        for ext in writer.extensions {
            let path = temp(&format!("devices.{ext}"), b"");
            std::fs::remove_file(&path).unwrap();
            let written = trace::write(&mut LineReader::open(&spc, &opts("auto")).unwrap(), &path);
            if writer.keeps_device {
                assert_eq!(written.unwrap(), 4, "{ext}");
                assert_eq!(on_devices(&path), want, "{ext}");
            } else {
                let err = written.unwrap_err().to_string();
                assert!(
                    err.contains("is on device 3, the first on device 0"),
                    "{err}"
                );
                assert!(!path.exists(), "no half-written file");
            }
        }
    }
}

#[test]
fn writers_refuse_what_their_format_cannot_hold_and_leave_no_file() {
    let unknown = temp("out.msr", b"keep");
    let err = trace::write(&mut VecSource::new(sample()), &unknown).unwrap_err();
    assert!(
        err.to_string().contains("`.msr` names no format") && err.to_string().contains(".blkparse"),
        "{err}"
    );
    assert_eq!(
        std::fs::read(&unknown).unwrap(),
        b"keep",
        "an unknown extension leaves the file alone"
    );

    let trim = vec![Request::new(0.0, Op::Trim, 0, 4096)];
    let path = temp("trim.trace", b"");
    std::fs::remove_file(&path).unwrap();
    let err = trace::write(&mut VecSource::new(trim), &path).unwrap_err();
    assert!(
        err.to_string().contains("request #1") && err.to_string().contains("a trim"),
        "{err}"
    );
    assert!(!path.exists(), "no half-written file");

    let odd = vec![Request::new(0.0, Op::Write, 100, 4096)];
    let err = trace::write(&mut VecSource::new(odd), &temp("odd.blkparse", b"")).unwrap_err();
    assert!(err.to_string().contains("not whole 512 B sectors"), "{err}");
}

// ---------------------------------------------------------------------------------------------------------
// Deterministic mutation test over the real lines of every format.

/// An independent reading of the formats whose lines are plain enough: (op, offset, len) in bytes.
fn reference(format: &str, line: &str) -> Option<(Op, u64, u64)> {
    let line = line.trim_start_matches('\u{feff}');
    let op = |c: &str| match c {
        "R" | "r" => Some(Op::Read),
        "W" | "w" => Some(Op::Write),
        "T" | "t" => Some(Op::Trim),
        _ => None,
    };
    match format {
        "csv" => {
            let f: Vec<&str> = line.split(',').map(str::trim).collect();
            if !(3..=5).contains(&f.len()) {
                return None;
            }
            Some((op(f[0])?, f[1].parse().ok()?, f[2].parse().ok()?))
        }
        "ssdsim" | "disksim" => {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() != 5 {
                return None;
            }
            let flags: u64 = f[4].parse().ok()?;
            let op = if flags & 1 == 1 { Op::Read } else { Op::Write };
            let sectors = |s: &str| s.parse::<u64>().ok()?.checked_mul(512);
            Some((op, sectors(f[2])?, sectors(f[3])?))
        }
        "msr" => {
            let f: Vec<&str> = line.split(',').map(str::trim).collect();
            if f.len() != 7 {
                return None;
            }
            let op = match f[3].to_ascii_lowercase().as_str() {
                "read" => Op::Read,
                "write" => Op::Write,
                _ => return None,
            };
            Some((op, f[4].parse().ok()?, f[5].parse().ok()?))
        }
        _ => None,
    }
}

/// One mutation of a line's bytes, picked by the generator.
fn mutate(line: &[u8], rng: &mut impl Rng) -> Vec<u8> {
    const SPLICES: &[&[u8]] = &[
        b"18446744073709551615",
        b"18446744073709551616",
        b"-1",
        b"1e308",
        b"NaN",
        b"inf",
        b"\xff",
        b"\xc3",
        b"\xef\xbb\xbf",
        b",",
        b" ",
        b"\t",
        b"\r",
        b"0x",
        b"",
    ];
    let mut out = line.to_vec();
    let at = |rng: &mut dyn rand::RngCore, n: usize| if n == 0 { 0 } else { rng.gen_range(0..n) };
    match rng.gen_range(0..7) {
        0 if !out.is_empty() => {
            let i = at(rng, out.len());
            out[i] ^= 1 << rng.gen_range(0..8);
        }
        1 => {
            let i = at(rng, out.len() + 1);
            out.insert(i, rng.gen());
        }
        2 if !out.is_empty() => {
            let i = at(rng, out.len());
            out.remove(i);
        }
        3 => {
            // Replace a run of digits by a splice.
            let digits: Vec<usize> = (0..out.len())
                .filter(|&i| out[i].is_ascii_digit())
                .collect();
            if let Some(&i) = digits.get(at(rng, digits.len())) {
                let end = (i..out.len())
                    .find(|&j| !out[j].is_ascii_digit())
                    .unwrap_or(out.len());
                let splice = SPLICES[rng.gen_range(0..SPLICES.len())];
                out.splice(i..end, splice.iter().copied());
            }
        }
        4 => {
            let i = at(rng, out.len() + 1);
            let splice = SPLICES[rng.gen_range(0..SPLICES.len())];
            out.splice(i..i, splice.iter().copied());
        }
        5 => out.truncate(at(rng, out.len() + 1)),
        _ => {
            let i = at(rng, out.len() + 1);
            let piece = out[..i].to_vec();
            out.extend(piece);
        }
    }
    out
}

#[test]
fn mutated_real_lines_give_a_placed_error_or_the_reference_request() {
    let started = Instant::now();
    let mut rng = rand_pcg::Pcg64::seed_from_u64(15);
    let (mut errors, mut requests, mut checked) = (0u64, 0u64, 0u64);
    for info in FORMATS {
        let fixture = tiny_fixture(info.name);
        let text = std::fs::read(&fixture).unwrap();
        let lines: Vec<&[u8]> = text
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .collect();
        for round in 0..60 {
            let victim = round % lines.len();
            let mut bad = lines[victim].to_vec();
            for _ in 0..rng.gen_range(1..4) {
                bad = mutate(&bad, &mut rng);
            }
            // The mutated line between two good lines, as line 2.
            let mut file = lines[0].to_vec();
            file.push(b'\n');
            file.extend(&bad);
            file.push(b'\n');
            file.extend(lines[lines.len() - 1]);
            file.push(b'\n');
            let path = temp(&format!("mutant.{}", info.name), &file);
            let first = read(&path, &opts(info.name));
            match LineReader::open(&path, &opts(info.name)) {
                Err(e) => panic!("{}: a named format opens: {e}", info.name),
                Ok(mut reader) => {
                    let mut line_requests = Vec::new();
                    while let Some(r) = reader.next_request() {
                        match r {
                            Ok(r) => {
                                assert!(
                                    r.offset.checked_add(r.len).is_some() && r.time_us.is_finite()
                                );
                                if reader.position() == Some(format!("{}:2", path.display())) {
                                    line_requests.push(r);
                                }
                            }
                            Err(e) => {
                                let message = e.to_string();
                                assert!(
                                    matches!(e, TraceError::Parse { line_no: 2, .. })
                                        && message.starts_with(&format!("{}:2:", path.display()))
                                        && message.len() < 1_500,
                                    "{}: {:?} -> {message}",
                                    info.name,
                                    String::from_utf8_lossy(&bad)
                                );
                                errors += 1;
                                break;
                            }
                        }
                    }
                    requests += line_requests.len() as u64;
                    if let (Some(got), Ok(text)) =
                        (line_requests.first(), std::str::from_utf8(&bad))
                    {
                        if let Some(want) = reference(info.name, text) {
                            assert_eq!(
                                (got.op, got.offset, got.len),
                                want,
                                "{}: {text:?}",
                                info.name
                            );
                            checked += 1;
                        }
                    }
                }
            }
            // Skipping never fails and reads the good lines.
            let mut reader = LineReader::open(&path, &skipping(info.name)).unwrap();
            for r in std::iter::from_fn(|| reader.next_request()) {
                r.unwrap();
            }
            drop(first);
            // Sniffing either picks a format or says why not, never panics.
            let _ = trace::sniff(&path, &TraceOptions::default());
        }
    }
    eprintln!("mutants: {errors} placed errors, {requests} requests, {checked} checked against the reference");
    assert!(
        errors > 100 && checked > 20,
        "{errors} errors, {checked} checked"
    );
    assert!(started.elapsed().as_secs() < 10, "{:?}", started.elapsed());
}

#[test]
fn the_compact_pre_pass_of_a_run_is_cancelled_by_its_progress_callback() {
    // 40,000 requests: the compact pre-pass reports progress after 16,384 of them; false there stops the
    // run before it serves a request, whether the capacity is given or scanned (a pass that reports too).
    let mut text = String::new();
    for i in 0..40_000u64 {
        text += &format!("W,{},4096\n", i * 4096);
    }
    let path = temp("cancel-compact.csv", text.as_bytes());
    for capacity in [Some("1GiB".to_string()), None] {
        let cfg = SimConfig {
            capacity: capacity.clone(),
            trace: TraceOptions {
                compact: true,
                ..opts("csv")
            },
            ..SimConfig::default()
        };
        let mut calls = Vec::new();
        let err = sim::run(&cfg, path.to_str().unwrap(), &mut |p| {
            calls.push(p.requests);
            false
        })
        .unwrap_err();
        assert!(
            matches!(err, ftlsim_core::error::SimError::Cancelled),
            "{capacity:?}: {err}"
        );
        assert_eq!(calls, vec![0], "{capacity:?}: one call, in the pre-pass");
    }
}
