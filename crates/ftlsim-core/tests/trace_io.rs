//! Traces as files of every kind: zstd and xz copies read as the plain file does, an empty trace called
//! empty, `info` totals that pass 2^64 without wrapping, a request of terabytes that neither aborts nor
//! allocates its size, and `trace::write` through a symlink and into a FIFO, with the umask's mode.

mod common;

use common::trace_files::{fixture, opts, read, read_all, real, temp};
use ftlsim_core::request::{Op, Request};
use ftlsim_core::sim::{run_requests, SimConfig};
use ftlsim_core::trace::analysis::info::info;
use ftlsim_core::trace::analysis::refs::write_refs;
use ftlsim_core::trace::{self, TraceError, TraceOptions, VecSource};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// Counts the bytes each thread allocates, so tests running side by side do not see each other's.
struct Counting;

thread_local! {
    static ALLOCATED: Cell<u64> = const { Cell::new(0) };
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = ALLOCATED.try_with(|a| a.set(a.get() + layout.size() as u64));
        System.alloc(layout)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocated_by(f: impl FnOnce()) -> u64 {
    let before = ALLOCATED.with(Cell::get);
    f();
    ALLOCATED.with(Cell::get) - before
}

fn no_progress() -> impl FnMut(u64, u64) -> bool {
    |_, _| true
}

fn zstd(data: &[u8]) -> Vec<u8> {
    ruzstd::encoding::compress_to_vec(data, ruzstd::encoding::CompressionLevel::Fastest)
}

fn xz(data: &[u8]) -> Vec<u8> {
    let mut out =
        lzma_rust2::XzWriter::new(Vec::new(), lzma_rust2::XzOptions::with_preset(1)).unwrap();
    out.write_all(data).unwrap();
    out.finish().unwrap()
}

#[test]
fn zstd_and_xz_copies_of_a_shared_trace_give_the_same_info_as_the_plain_one() {
    let plain = real("msr_rsrch_1.csv");
    let data = std::fs::read(&plain).unwrap();
    let want = info(
        plain.to_str().unwrap(),
        &opts("auto"),
        16_384,
        512,
        &mut no_progress(),
    )
    .unwrap();
    assert_eq!((want.format.as_str(), want.requests), ("msr", 13_780));
    // Named .csv, not .zst / .xz: the content is told by its magic number, as a spooled pipe's must be.
    for (name, packed) in [
        ("rsrch.zst", zstd(&data)),
        ("rsrch.xz", xz(&data)),
        ("rsrch.csv", zstd(&data)),
    ] {
        assert!(packed.len() < data.len() / 3, "{name} is compressed");
        let path = temp(name, &packed);
        let got = info(
            path.to_str().unwrap(),
            &opts("auto"),
            16_384,
            512,
            &mut no_progress(),
        )
        .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(got, want, "{name}");
    }
}

#[test]
fn a_zstd_stream_of_several_frames_and_a_skippable_frame_reads_whole() {
    // `zstd` and `pzstd` may write several frames; a skippable frame (magic 0x184D2A5?) may sit between them.
    let text = std::fs::read(fixture("tiny.csv")).unwrap();
    let half = text
        .iter()
        .take(text.len() / 2)
        .rposition(|&b| b == b'\n')
        .unwrap()
        + 1;
    let mut packed = zstd(&text[..half]);
    packed.extend([0x50, 0x2a, 0x4d, 0x18, 3, 0, 0, 0, 1, 2, 3]);
    packed.extend(zstd(&text[half..]));
    let path = temp("frames.zst", &packed);
    assert_eq!(
        read_all(&path, &opts("csv")),
        read_all(&fixture("tiny.csv"), &opts("csv"))
    );
}

#[test]
fn a_corrupt_compressed_trace_is_an_error_that_names_the_file() {
    let data = std::fs::read(fixture("tiny.csv")).unwrap();
    for (name, mut packed) in [("cut.zst", zstd(&data)), ("cut.xz", xz(&data))] {
        packed.truncate(packed.len() / 2);
        let path = temp(name, &packed);
        let err = read(&path, &opts("csv")).unwrap_err();
        assert!(
            matches!(err, TraceError::Io { .. }) && err.to_string().contains(name),
            "{name}: {err}"
        );
    }
}

#[test]
fn a_bzip2_or_lz4_trace_is_refused_by_name() {
    for (name, magic, undo) in [
        ("t.csv.bz2", &b"BZh91AY&SY"[..], "bunzip2"),
        (
            "t.csv.lz4",
            &[0x04, 0x22, 0x4d, 0x18, 0x64, 0x40][..],
            "unlz4",
        ),
    ] {
        let path = temp(name, magic);
        let err = info(
            path.to_str().unwrap(),
            &opts("auto"),
            16_384,
            512,
            &mut no_progress(),
        )
        .unwrap_err();
        let message = err.to_string();
        assert!(
            message.contains(name) && message.contains(undo),
            "{message}"
        );
    }
}

#[test]
fn an_empty_trace_is_called_empty() {
    let cases: [(&str, Vec<u8>); 4] = [
        ("empty.csv", vec![]),
        ("blank.csv", b"\n  \n\r\n".to_vec()),
        ("empty.zst", zstd(b"")),
        ("empty.xz", xz(b"")),
    ];
    for (name, bytes) in cases {
        let path = temp(name, &bytes);
        let err = info(
            path.to_str().unwrap(),
            &opts("auto"),
            16_384,
            512,
            &mut no_progress(),
        )
        .unwrap_err();
        assert!(matches!(err, TraceError::Empty { .. }), "{name}: {err}");
        assert!(
            err.to_string().contains("is empty") && err.to_string().contains(name),
            "{err}"
        );
    }
    // A named format skips sniffing, and still calls a file without a byte empty.
    let err = read(&temp("empty.msr", b""), &opts("msr")).unwrap_err();
    assert!(matches!(err, TraceError::Empty { .. }), "{err}");
}

#[test]
fn info_totals_pass_2_pow_64_without_wrapping() {
    // Each line writes every byte but the last: 2^55 pages of 512 B. 600 of them are 600 * 2^55 page writes,
    // about 2^64.2; the footprint is exactly 2^64 bytes (it wrapped to 0 in u64).
    let line = format!("W,0,{}\n", u64::MAX);
    let path = temp("wide.csv", line.repeat(600).as_bytes());
    let t = info(
        path.to_str().unwrap(),
        &opts("csv"),
        16_384,
        512,
        &mut no_progress(),
    )
    .unwrap();
    assert_eq!(t.footprint_bytes, 1u128 << 64);
    assert_eq!(t.write_footprint_bytes, 1u128 << 64);
    assert_eq!(t.write_bytes, 600 * u64::MAX as u128);
    assert_eq!(t.page_writes, 600u128 << 55);
    assert_eq!(t.written_pages, 1 << 55);
    assert_eq!(
        t.write_share_hottest_1pct_pages,
        (1u128 << 55).div_ceil(100) as f64 / (1u128 << 55) as f64
    );
    let json = serde_json::to_string(&t).unwrap();
    assert!(
        json.contains("\"footprint_bytes\":\"18446744073709551616\""),
        "{json}"
    );
}

#[test]
fn a_request_of_terabytes_is_refused_by_write_refs_before_it_is_counted_block_by_block() {
    // 4 TiB in 16 KiB blocks is 2^28 map entries (gigabytes); the picture refuses it and says what to pass.
    let path = temp("tera.csv", b"W,0,4398046511104\n");
    let mut err = None;
    let bytes = allocated_by(|| {
        err = write_refs(
            path.to_str().unwrap(),
            &TraceOptions::default(),
            16_384,
            512,
            1000,
        )
        .err()
    });
    let message = err.expect("refused").to_string();
    assert!(
        message.contains("268435456 logical blocks") && message.contains("block_bytes=1048576"),
        "{message}"
    );
    assert!(bytes < 1 << 20, "{bytes} bytes allocated");
    let refs = write_refs(
        path.to_str().unwrap(),
        &TraceOptions::default(),
        1 << 30,
        512,
        1000,
    )
    .unwrap();
    assert_eq!((refs.blocks.len(), refs.writes[0]), (4096, 1 << 21));
}

#[test]
fn a_run_allocates_nothing_per_page_of_a_request() {
    // One request over the whole 64 MiB device against 128 requests of 512 KiB over the same pages: the same
    // tables are touched, so the single request may not cost more (it kept a list of its 131,072 pages,
    // 3 MiB here and 1.5 GiB for a 1 TiB request of 16 KiB pages, which aborted the process).
    let cfg = SimConfig {
        capacity: Some("64MiB".into()),
        ..Default::default()
    };
    let whole = vec![Request::new(0.0, Op::Write, 0, 64 << 20)];
    let split = (0..128u64)
        .map(|i| Request::new(0.0, Op::Write, i << 19, 1 << 19))
        .collect::<Vec<_>>();
    let mut writes = (0, 0);
    let one = allocated_by(|| writes.0 = run_requests(&cfg, whole).unwrap().host.write_pages);
    let many = allocated_by(|| writes.1 = run_requests(&cfg, split).unwrap().host.write_pages);
    assert_eq!(writes, (131_072, 131_072));
    assert!(
        one < many + (256 << 10),
        "one request: {one} bytes, 128 requests: {many} bytes"
    );
}

/// A new folder under the tests' temp dir.
fn folder(name: &str) -> std::path::PathBuf {
    let dir = temp("x", b"").parent().unwrap().join(name);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn write_replaces_a_symlinks_target_keeps_a_files_mode_and_gives_a_new_file_the_umask_mode() {
    let requests = || VecSource::new(vec![Request::new(0.0, Op::Write, 0, 4096)]);
    let dir = folder("links");
    // A file made by File::create has the umask's mode: so must a new output.
    let probe = dir.join("probe");
    std::fs::File::create(&probe).unwrap();
    let fresh = dir.join("fresh.csv");
    let _ = std::fs::remove_file(&fresh);
    trace::write(&mut requests(), &fresh).unwrap();
    assert_eq!(mode(&fresh), mode(&probe));
    // A symlink stays a link; the file it names gets the requests, and keeps its own mode.
    let target = dir.join("target.csv");
    std::fs::write(&target, "old").unwrap();
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o640)).unwrap();
    let link = dir.join("link.csv");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink("target.csv", &link).unwrap();
    assert_eq!(trace::write(&mut requests(), &link).unwrap(), 1);
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(
        std::fs::read_to_string(&target).unwrap(),
        std::fs::read_to_string(&fresh).unwrap()
    );
    assert_eq!(mode(&target), 0o640);
    // A link to a file not made yet makes it.
    let dangling = dir.join("dangling.csv");
    let _ = std::fs::remove_file(&dangling);
    let _ = std::fs::remove_file(dir.join("later.csv"));
    std::os::unix::fs::symlink("later.csv", &dangling).unwrap();
    trace::write(&mut requests(), &dangling).unwrap();
    assert!(dir.join("later.csv").is_file());
}

#[test]
fn write_into_a_fifo_writes_through_it() {
    let dir = folder("fifo");
    let fifo = dir.join("out.csv");
    let _ = std::fs::remove_file(&fifo);
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            let mut text = String::new();
            std::fs::File::open(fifo)
                .unwrap()
                .read_to_string(&mut text)
                .unwrap();
            text
        })
    };
    let sent = vec![
        Request::new(0.0, Op::Write, 0, 4096),
        Request::new(1.0, Op::Read, 8192, 512),
    ];
    assert_eq!(trace::write(&mut VecSource::new(sent), &fifo).unwrap(), 2);
    let text = reader.join().unwrap();
    assert_eq!(text.lines().count(), 3, "a header and two requests: {text}");
    let kind = std::fs::symlink_metadata(&fifo).unwrap().file_type();
    assert!(
        std::os::unix::fs::FileTypeExt::is_fifo(&kind),
        "the FIFO is still a FIFO"
    );
}
