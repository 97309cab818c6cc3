//! The layering of `src/` (data → bins → trees → model → boost → python, with the losses below
//! the model): no import cycle between the top-level modules of the crate, nor between the files
//! of `src/tree`. Reads the sources and resolves every `crate::`, `super::` and `self::` path,
//! inside `use` trees and in code (`#[cfg(test)]` modules included: they are compiled too).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

/// One source file: its path under `src/`, its module path (`tree/split.rs` → `["tree",
/// "split"]`, `mod.rs` → its directory's; a `#[path]` module its declarer's child) and its code
/// without comments.
struct Source {
    file: String,
    module: Vec<String>,
    code: String,
}

fn sources() -> Vec<Source> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut out = Vec::new();
    collect(&src, "", &[], &mut out);
    for (file, module) in path_attributes(&out) {
        let source = out.iter_mut().find(|s| s.file == file).unwrap();
        source.module = module;
    }
    out
}

fn collect(dir: &Path, relative: &str, prefix: &[String], out: &mut Vec<Source>) {
    let mut entries: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        let stem = name.trim_end_matches(".rs").to_string();
        let mut module = prefix.to_vec();
        if path.is_dir() {
            module.push(name.clone());
            collect(&path, &format!("{relative}{name}/"), &module, out);
        } else if name.ends_with(".rs") {
            if stem != "mod" && stem != "lib" {
                module.push(stem);
            }
            let code = strip_comments(&fs::read_to_string(&path).unwrap());
            let file = format!("{relative}{name}");
            out.push(Source { file, module, code });
        }
    }
}

/// `#[path = "x.rs"] mod m;` in `dir/f.rs` makes `dir/x.rs` the module `m` of `f`: (file, module).
fn path_attributes(sources: &[Source]) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    for source in sources {
        let dir = &source.file[..source.file.rfind('/').map_or(0, |i| i + 1)];
        for (i, _) in source.code.match_indices("#[path = \"") {
            let rest = &source.code[i + 10..];
            let target = &rest[..rest.find('"').unwrap()];
            let after = rest[target.len() + 1..].trim_start();
            let after = after.strip_prefix(']').unwrap().trim_start();
            let name = after.strip_prefix("mod ").unwrap();
            let name: String = name.chars().take_while(|&c| is_ident(c)).collect();
            let module = source.module.iter().cloned().chain([name]).collect();
            out.push((format!("{dir}{target}"), module));
        }
    }
    out
}

/// The code without `//` and `/* */` comments; string literals are kept (a `#[serde(with =
/// "crate::…")]` is a dependency), and a `//` inside one does not start a comment.
fn strip_comments(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let mut in_string = false;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if in_string {
            out.push(c);
            if c == '\\' {
                if let Some(n) = next {
                    out.push(n);
                }
                i += 2;
                continue;
            }
            in_string = c != '"';
            i += 1;
        } else if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            i += 2;
            while i + 1 < chars.len() && !(chars[i] == '*' && chars[i + 1] == '/') {
                i += 1;
            }
            i += 2;
        } else if c == '\'' && chars.get(i + 2) == Some(&'\'') {
            // A character literal such as '"' or '{' (lifetimes have no closing quote).
            out.extend(&chars[i..i + 3]);
            i += 3;
        } else {
            in_string = c == '"';
            out.push(c);
            i += 1;
        }
    }
    out
}

/// Every path the code names from `crate`, `super` or `self`, made absolute (module segments
/// then item names), plus the `use` paths relative to a submodule the file declares. `super`
/// inside an inline `mod name { … }` is counted from that inline module.
fn absolute_paths(source: &Source) -> Vec<Vec<String>> {
    let code = &source.code;
    let declared: BTreeSet<String> = words_after(code, "mod ");
    let mut paths = Vec::new();
    let mut inline: Vec<(String, usize)> = Vec::new(); // (inline module, brace depth at its `{`)
    let mut depth = 0usize;
    let bytes = code.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if !code.is_char_boundary(i) {
            i += 1;
            continue;
        }
        let rest = &code[i..];
        let at_word = i == 0 || !is_ident(bytes[i - 1] as char);
        if bytes[i] == b'{' {
            depth += 1;
        } else if bytes[i] == b'}' {
            depth -= 1;
            if inline.last().is_some_and(|&(_, d)| d == depth) {
                inline.pop();
            }
        } else if at_word && rest.starts_with("mod ") {
            let name: String = rest[4..]
                .trim_start()
                .chars()
                .take_while(|&c| is_ident(c))
                .collect();
            let after = rest[4..].trim_start()[name.len()..].trim_start();
            if after.starts_with('{') {
                inline.push((name, depth));
            }
        }
        let here: Vec<String> = (source.module.iter().cloned())
            .chain(inline.iter().map(|(m, _)| m.clone()))
            .collect();
        if at_word && rest.starts_with("use ") && starts_statement(&code[..i]) {
            let end = rest.find(';').unwrap();
            let tree = rest[4..end].trim();
            for path in expand_use_tree(tree) {
                if let Some(abs) = resolve(&path, &here) {
                    paths.push(abs);
                } else if declared.contains(&path[0]) {
                    paths.push(here.iter().cloned().chain(path).collect());
                }
            }
            i += end;
            continue;
        }
        if at_word
            && (rest.starts_with("crate::")
                || rest.starts_with("super::")
                || rest.starts_with("self::"))
        {
            let len = rest
                .find(|c: char| !(is_ident(c) || c == ':'))
                .unwrap_or(rest.len());
            let path: Vec<String> = rest[..len]
                .split("::")
                .filter(|s| !s.is_empty())
                .map(String::from)
                .collect();
            if let Some(abs) = resolve(&path, &here) {
                paths.push(abs);
            }
            i += len;
            continue;
        }
        i += 1;
    }
    paths
}

/// True when `before` ends a line with nothing but a visibility since: the `use` that follows
/// starts a statement (and is not a word of a string).
fn starts_statement(before: &str) -> bool {
    let line = before.rsplit('\n').next().unwrap().trim();
    line.is_empty() || line.starts_with("pub") && !line.contains(['"', ';', '{', '}'])
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

fn words_after(code: &str, keyword: &str) -> BTreeSet<String> {
    code.match_indices(keyword)
        .filter(|&(i, _)| i == 0 || !is_ident(code[..i].chars().last().unwrap()))
        .map(|(i, _)| {
            code[i + keyword.len()..]
                .chars()
                .take_while(|&c| is_ident(c))
                .collect()
        })
        .collect()
}

/// A path starting at `crate`, `super` or `self`, from module `here`; `None` for other paths.
fn resolve(path: &[String], here: &[String]) -> Option<Vec<String>> {
    let mut base = match path.first()?.as_str() {
        "crate" => Vec::new(),
        "self" => here.to_vec(),
        "super" => here[..here.len() - 1].to_vec(),
        _ => return None,
    };
    let mut rest = &path[1..];
    while rest.first().is_some_and(|s| s == "super") {
        base.pop();
        rest = &rest[1..];
    }
    base.extend(rest.iter().filter(|s| *s != "self" && *s != "*").cloned());
    Some(base)
}

/// `a::{b, c::{d, e}}` → `[a, b]`, `[a, c, d]`, `[a, c, e]` (renames and globs end their path).
fn expand_use_tree(tree: &str) -> Vec<Vec<String>> {
    let tree = tree.trim();
    let Some(open) = tree.find('{') else {
        let plain = tree.split(" as ").next().unwrap();
        return vec![plain
            .split("::")
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect()];
    };
    let prefix: Vec<String> = tree[..open]
        .split("::")
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect();
    let inner = &tree[open + 1..tree.rfind('}').unwrap()];
    let (mut parts, mut level, mut start) = (Vec::new(), 0, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => level += 1,
            '}' => level -= 1,
            ',' if level == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts
        .into_iter()
        .filter(|p| !p.trim().is_empty())
        .flat_map(expand_use_tree)
        .map(|tail| prefix.iter().cloned().chain(tail).collect())
        .collect()
}

/// Where the names a module file imports come from (`use sub::Name`, `use crate::x::Name`,
/// public or not: child modules see both): name → module path of the import.
fn imported_names(sources: &[Source], module: &[String]) -> BTreeMap<String, Vec<String>> {
    let file = sources.iter().find(|s| s.module == module).unwrap();
    let mut names = BTreeMap::new();
    for path in absolute_paths(file) {
        if let Some((name, from)) = path.split_last() {
            if from != module {
                names.insert(name.clone(), from.to_vec());
            }
        }
    }
    names
}

/// The module whose file defines what an absolute path names: down the submodules, then through
/// the imports of the module reached (re-exports such as lib.rs's), a few steps at most.
fn reached(path: &[String], sources: &[Source], steps: usize) -> Vec<String> {
    let mut module: Vec<String> = Vec::new();
    for name in path {
        let child: Vec<String> = module.iter().cloned().chain([name.clone()]).collect();
        if sources.iter().any(|s| s.module == child) {
            module = child;
            continue;
        }
        if steps > 0 {
            if let Some(from) = imported_names(sources, &module).get(name) {
                let hop: Vec<String> = from.iter().cloned().chain([name.clone()]).collect();
                return reached(&hop, sources, steps - 1);
            }
        }
        break;
    }
    module
}

type Graph = BTreeMap<String, BTreeSet<String>>;

/// Edges between top-level modules (lib.rs, the crate root, only declares and re-exports).
fn top_level_graph(sources: &[Source]) -> Graph {
    let mut graph = Graph::new();
    for source in sources.iter().filter(|s| !s.module.is_empty()) {
        let from = &source.module[0];
        for path in absolute_paths(source) {
            let target = reached(&path, sources, 4);
            if let Some(to) = target.first().filter(|to| *to != from) {
                graph.entry(from.clone()).or_default().insert(to.clone());
            }
        }
    }
    graph
}

/// Edges between the files of `src/tree` (by file name; a `#[path]` child of grower.rs is a file
/// of its own). tree/mod.rs only declares and re-exports: a path through it counts as a path to
/// the file that defines the name.
fn tree_graph(sources: &[Source]) -> Graph {
    let tree_file = |s: &Source| {
        let name = s.file.strip_prefix("tree/")?;
        (!name.contains('/') && name != "mod.rs").then(|| name.trim_end_matches(".rs").to_string())
    };
    let mut graph = Graph::new();
    for source in sources {
        let Some(from) = tree_file(source) else {
            continue;
        };
        for path in absolute_paths(source) {
            let target = reached(&path, sources, 4);
            let file = sources
                .iter()
                .find(|s| s.module == target)
                .and_then(tree_file);
            if let Some(to) = file.filter(|to| *to != from) {
                graph.entry(from.clone()).or_default().insert(to);
            }
        }
    }
    graph
}

/// Every cycle of the graph, once each, as its nodes from the smallest one.
fn cycles(graph: &Graph) -> Vec<Vec<String>> {
    fn walk(
        graph: &Graph,
        start: &str,
        node: &str,
        path: &mut Vec<String>,
        out: &mut Vec<Vec<String>>,
    ) {
        for next in graph.get(node).into_iter().flatten() {
            if next == start {
                out.push(path.clone());
            } else if next.as_str() > start && !path.contains(next) {
                path.push(next.clone());
                walk(graph, start, next, path, out);
                path.pop();
            }
        }
    }
    let mut out = Vec::new();
    for start in graph.keys() {
        walk(graph, start, start, &mut vec![start.clone()], &mut out);
    }
    out
}

fn describe(cycles: &[Vec<String>], graph: &Graph) -> String {
    let lines: Vec<String> = cycles
        .iter()
        .map(|c| format!("{} -> {}", c.join(" -> "), c[0]))
        .collect();
    format!("import cycles:\n{}\nedges: {graph:#?}", lines.join("\n"))
}

#[test]
fn top_level_modules_import_without_cycles() {
    let graph = top_level_graph(&sources());
    // The reader must see real edges, or an empty graph would pass.
    assert!(
        graph["boost"].contains("tree") && graph["model"].contains("tree"),
        "{graph:#?}"
    );
    let found = cycles(&graph);
    assert!(found.is_empty(), "{}", describe(&found, &graph));
}

#[test]
fn tree_files_import_without_cycles() {
    let graph = tree_graph(&sources());
    assert!(
        graph["grower"].contains("histogram") && graph["grower"].contains("split"),
        "{graph:#?}"
    );
    let found = cycles(&graph);
    assert!(found.is_empty(), "{}", describe(&found, &graph));
}

#[test]
fn the_reader_finds_a_planted_cycle() {
    let source = |file: &str, module: &[&str], code: &str| Source {
        file: file.to_string(),
        module: module.iter().map(|s| s.to_string()).collect(),
        code: strip_comments(code),
    };
    let sources = vec![
        source("lib.rs", &[], "mod a;\nmod b;\npub use a::Thing;"),
        source(
            "a.rs",
            &["a"],
            "use crate::b::{x::{Y, Z as W}, self};\npub struct Thing;",
        ),
        source(
            "b/mod.rs",
            &["b"],
            "pub mod x; // use crate::c::Nothing;\n#[cfg(test)]\n\
             mod tests { use super::*; fn f() { crate::Thing; } }",
        ),
        source("b/x.rs", &["b", "x"], "pub struct Y; pub struct Z;"),
        source(
            "tree/mod.rs",
            &["tree"],
            "mod h;\nmod s;\npub use h::H;\nuse s::S;",
        ),
        source("tree/h.rs", &["tree", "h"], "use super::S; pub struct H;"),
        source(
            "tree/s.rs",
            &["tree", "s"],
            "pub struct S; fn f() { let _ = super::h::H; }",
        ),
        source("tree/u.rs", &["tree", "s", "u"], "use super::S;"),
    ];
    let top = top_level_graph(&sources);
    assert_eq!(
        cycles(&top),
        vec![vec!["a".to_string(), "b".to_string()]],
        "{top:#?}"
    );
    let tree = tree_graph(&sources);
    assert_eq!(
        cycles(&tree),
        vec![vec!["h".to_string(), "s".to_string()]],
        "{tree:#?}"
    );
}

/// The house rule that keeps a file readable in one sitting: split a file by concern before it
/// passes 800 lines.
#[test]
fn no_source_file_is_over_800_lines() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let long: Vec<String> = sources()
        .iter()
        .filter_map(|s| {
            let lines = std::fs::read_to_string(src.join(&s.file)).unwrap().lines().count();
            (lines > 800).then(|| format!("{} ({lines} lines)", s.file))
        })
        .collect();
    assert!(long.is_empty(), "over 800 lines: {long:?}");
}
