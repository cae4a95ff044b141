//! The engine's modules form layers: imports run one way, from `sim` down to the leaves, and no top-level
//! module reaches, through any chain of imports, back to itself. This test reads the `crate::` paths of
//! every source file (test modules and comments aside) and fails on a cycle, naming it.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

fn src() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The code of a file without its unit-test module (which may import anything) and without comments.
fn code(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let end = lines
        .windows(2)
        .position(|w| w[0].trim() == "#[cfg(test)]" && w[1].trim_start().starts_with("mod "))
        .unwrap_or(lines.len());
    lines[..end]
        .iter()
        .map(|line| line.split("//").next().unwrap())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The names after each `crate::` in `code`; a `crate::{a, b::c}` group gives each of its first segments.
fn crate_paths(code: &str) -> Vec<String> {
    let ident = |s: &str| -> String {
        s.trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    let mut names = Vec::new();
    for (i, _) in code.match_indices("crate::") {
        let rest = &code[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let body = &group[..group.find('}').unwrap_or(group.len())];
            names.extend(body.split(',').map(ident).filter(|n| !n.is_empty()));
        } else {
            names.push(ident(rest));
        }
    }
    names
}

/// The top-level module each file belongs to, and the top-level modules it imports. A name the crate root
/// re-exports (`crate::SimError`) counts as an import of the module it comes from.
fn module_graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let lib = fs::read_to_string(src.join("lib.rs")).unwrap();
    let mut root_names: BTreeMap<String, String> = BTreeMap::new();
    let mut modules = BTreeSet::new();
    for line in code(&lib).lines() {
        if let Some(name) = line.trim().strip_prefix("pub mod ") {
            modules.insert(name.trim_end_matches(';').to_string());
        } else if let Some(path) = line.trim().strip_prefix("pub use ") {
            let (module, name) = path.trim_end_matches(';').split_once("::").unwrap();
            root_names.insert(name.to_string(), module.to_string());
        }
    }
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in files {
        let relative = file.strip_prefix(src).unwrap();
        let first = relative
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy();
        let module = first.trim_end_matches(".rs").to_string();
        if module == "lib" {
            continue;
        }
        let imports = graph.entry(module.clone()).or_default();
        for name in crate_paths(&code(&fs::read_to_string(&file).unwrap())) {
            let target = root_names.get(&name).cloned().unwrap_or(name);
            if modules.contains(&target) && target != module {
                imports.insert(target);
            }
        }
    }
    graph
}

/// A cycle of the graph, as the modules along it with the first repeated at the end; None if it has none.
fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|n| n == node) {
            let mut cycle = path[at..].to_vec();
            cycle.push(node.to_string());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, graph, path, done) {
                return Some(cycle);
            }
        }
        path.pop();
        done.insert(node.to_string());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|node| visit(node, graph, &mut Vec::new(), &mut done))
}

/// The modules in layers from the bottom: each layer imports only layers below it.
fn layers(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    let mut placed = BTreeSet::new();
    let mut layers = Vec::new();
    while placed.len() < graph.len() {
        let layer: Vec<String> = graph
            .iter()
            .filter(|(m, imports)| !placed.contains(*m) && imports.is_subset(&placed))
            .map(|(m, _)| m.clone())
            .collect();
        assert!(!layer.is_empty(), "a cycle among {graph:?}");
        placed.extend(layer.iter().cloned());
        layers.push(layer);
    }
    layers
}

#[test]
fn no_top_level_module_imports_itself_through_others() {
    let graph = module_graph(&src());
    assert!(graph.len() > 10, "read too few modules: {graph:?}");
    if let Some(cycle) = find_cycle(&graph) {
        panic!(
            "import circle among the engine's modules: {}; the imports of each module: {graph:#?}",
            cycle.join(" -> ")
        );
    }
    let layers = layers(&graph);
    for (i, layer) in layers.iter().enumerate().rev() {
        eprintln!("layer {i}: {}", layer.join(", "));
    }
    // The foundation sits below everything that uses it.
    let level = |m: &str| {
        layers
            .iter()
            .position(|l| l.iter().any(|x| x == m))
            .unwrap()
    };
    assert_eq!(level("text"), 0);
    assert!(level("config") < level("nand") && level("nand") < level("device"));
    assert!(level("device") < level("ftl") && level("ftl") < level("sim"));
    assert!(level("trace") < level("sim") && level("error") < level("sim"));
}

#[test]
fn the_cycle_finder_finds_a_cycle_and_the_path_reader_reads_groups() {
    let graph: BTreeMap<String, BTreeSet<String>> = [
        ("a", vec!["b"]),
        ("b", vec!["c"]),
        ("c", vec!["a"]),
        ("d", vec![]),
    ]
    .into_iter()
    .map(|(m, i)| (m.to_string(), i.into_iter().map(String::from).collect()))
    .collect();
    assert_eq!(find_cycle(&graph).unwrap(), ["a", "b", "c", "a"]);
    assert_eq!(
        crate_paths("use crate::{addr::Lpn, config};\n x = crate::nand::FACTORY_BAD;"),
        ["addr", "config", "nand"]
    );
    assert_eq!(
        code("use crate::a; // crate::b\n#[cfg(test)]\nmod tests {\n use crate::c;\n}"),
        "use crate::a; "
    );
}
