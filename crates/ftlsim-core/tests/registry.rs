//! The files that adding a scheme or a trace format touches, as `docs/adding-a-scheme.md` lists them, checked
//! against the two registries (`ftl::SCHEMES`, `trace::FORMATS`): the lists in the guide are the ones this test
//! reads, and every row already in a registry has each file the guide asks of a new one.

use ftlsim_core::ftl::SCHEMES;
use ftlsim_core::trace::FORMATS;
use std::path::{Path, PathBuf};

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../");

fn repo(path: &str) -> PathBuf {
    Path::new(ROOT).join(path)
}

fn read(path: &str) -> String {
    std::fs::read_to_string(repo(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The paths of the guide's fenced list that follows `heading` (a `text` block, a path first on each line).
fn listed(heading: &str) -> Vec<String> {
    let guide = read("docs/adding-a-scheme.md");
    let after = guide
        .split_once(heading)
        .unwrap_or_else(|| panic!("docs/adding-a-scheme.md has no `{heading}`"))
        .1;
    let block = after
        .split_once("```text\n")
        .and_then(|(_, rest)| rest.split_once("```"))
        .unwrap_or_else(|| panic!("no file list after `{heading}`"))
        .0;
    block
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_string)
        .collect()
}

/// The file under `folder` (searched through its subfolders) that declares the registry row named `name`: a
/// constant `NAME: <row> = <row> { name: "<name>", ...`.
fn declaring_file(folder: &str, row: &str, name: &str) -> Option<String> {
    let needle = format!(": {row} = {row} {{\n    name: \"{name}\",");
    let mut dirs = vec![repo(folder)];
    while let Some(dir) = dirs.pop() {
        for path in std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()) {
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|x| x == "rs")
                && std::fs::read_to_string(&path).unwrap().contains(&needle)
            {
                return Some(path.file_name().unwrap().to_string_lossy().into_owned());
            }
        }
    }
    None
}

#[test]
fn the_guide_lists_three_files_for_a_scheme() {
    assert_eq!(
        listed("## Files a new scheme touches"),
        [
            "crates/ftlsim-core/src/ftl/<scheme>.rs",
            "crates/ftlsim-core/src/ftl/mod.rs",
            "crates/ftlsim-core/tests/golden_<scheme>.rs",
        ]
    );
}

#[test]
fn every_scheme_has_its_file_and_a_golden_test_that_runs_it_by_name() {
    // A scheme's row lives in its own file, or beside the scheme it is a variant of (`ofast` in fast.rs,
    // `logblock-zoned` in bast.rs). A golden test runs it by name: `golden_<scheme>.rs`, or the golden file of
    // the paper whose examples it replays (BAST's in golden_fast.rs).
    let goldens: Vec<(String, String)> = std::fs::read_dir(repo("crates/ftlsim-core/tests"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            name.starts_with("golden_") && name.ends_with(".rs")
        })
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read_to_string(&p).unwrap())
        })
        .collect();
    for s in SCHEMES {
        let file = declaring_file("crates/ftlsim-core/src/ftl", "Scheme", s.name)
            .unwrap_or_else(|| panic!("`{}`: no file under src/ftl/ declares its row", s.name));
        let own = format!("{}.rs", s.name);
        assert!(
            file == own || SCHEMES.iter().any(|o| format!("{}.rs", o.name) == file),
            "`{}`'s row is in {file}: a scheme's row goes in {own} (or in the file of the scheme it varies)",
            s.name
        );
        let quoted = format!("\"{}\"", s.name);
        assert!(
            goldens.iter().any(|(_, text)| text.contains(&quoted)),
            "`{}` has no golden test: add tests/golden_{}.rs with a hand-worked ledger",
            s.name,
            s.name
        );
    }
}

#[test]
fn the_guide_lists_the_files_for_a_format_and_every_format_has_them() {
    assert_eq!(
        listed("## Files a new trace format touches"),
        [
            "crates/ftlsim-core/src/trace/formats/<format>.rs",
            "crates/ftlsim-core/src/trace/formats/mod.rs",
            "crates/ftlsim-core/tests/fixtures/tiny.<format>",
            "crates/ftlsim-core/tests/traces.rs",
        ]
    );
    for f in FORMATS {
        let file = declaring_file("crates/ftlsim-core/src/trace", "FormatInfo", f.name)
            .unwrap_or_else(|| panic!("`{}`: no file under src/trace/ declares its row", f.name));
        assert!(
            file == format!("{}.rs", f.name)
                || FORMATS.iter().any(|o| format!("{}.rs", o.name) == file),
            "`{}`'s row is in {file}",
            f.name
        );
        let fixture = format!("crates/ftlsim-core/tests/fixtures/tiny.{}", f.name);
        assert!(repo(&fixture).exists(), "`{}` has no {fixture}", f.name);
        // Its row of BAD in tests/traces.rs: `every_format_has_a_bad_line_case` there checks it.
    }
}
