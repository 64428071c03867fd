//! The crate's layers, checked from the source.
//!
//! `src/lib.rs` keeps the layer table, one `// layer N name: module …` line
//! per layer, lowest first. A module is on the layer of its longest listed
//! ancestor (itself included): `record::lenient` is on `record`'s layer. This
//! test reads every file under src/ and fails when
//!
//! - a library module imports a module on a higher layer;
//! - imports form a cycle (an edge between a module and its own ancestor or
//!   descendant does not count: a child file implementing its parent's type
//!   is Rust's normal shape);
//! - library code names an item through the crate root's re-exports
//!   (`crate::Error`) instead of its defining module (`crate::error::Error`);
//! - a library file is on no layer, or the table names a module that no file
//!   defines.
//!
//! The paths read are those starting with `crate::`, `super::` or `self::`,
//! in `use` lines (grouped ones too) and inline. Comments, string literals and
//! `#[cfg(test)]` items are not read: test code may import anything. The
//! binary (src/main.rs and src/cli/**) is a second crate above the whole
//! library; among its modules only the cycle rule applies.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::Path;

use lex::{Tok, Token, crate_paths, live_tokens, strip, tokens, use_paths, word};

mod cases;
mod lex;

#[test]
fn the_source_tree_keeps_the_layer_table() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    read_tree(&src, &src, &mut files);
    assert!(
        files.iter().any(|(p, _)| p == "src/lib.rs"),
        "no src/lib.rs under {}",
        src.display()
    );
    let found = check(&files);
    assert!(found.is_empty(), "{}", report(&found));
}

/// Every `.rs` file under `dir`, as (`src/…` with `/`, text), sorted.
fn read_tree(src: &Path, dir: &Path, out: &mut Vec<(String, String)>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            read_tree(src, &p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            let rel: Vec<String> = p
                .strip_prefix(src)
                .unwrap()
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            let text = std::fs::read_to_string(&p).unwrap();
            out.push((format!("src/{}", rel.join("/")), text));
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Table,
    Unlisted,
    Cycle,
    Up,
    RootReexport,
}

#[derive(Debug)]
struct Violation {
    kind: Kind,
    message: String,
}

fn report(found: &[Violation]) -> String {
    let count = |k| found.iter().filter(|v| v.kind == k).count();
    let mut out = format!(
        "{} violations of the layer rules (the table is in src/lib.rs, \
         one `// layer N name: module …` line per layer):\n\
         {} table or path errors, {} files on no layer, {} import cycles, \
         {} upward imports, {} imports of root re-exports\n",
        found.len(),
        count(Kind::Table),
        count(Kind::Unlisted),
        count(Kind::Cycle),
        count(Kind::Up),
        count(Kind::RootReexport),
    );
    for v in found {
        out.push('\n');
        out.push_str(&v.message);
        out.push('\n');
    }
    out
}

type Module = Vec<String>;

fn name(m: &[String]) -> String {
    if m.is_empty() {
        "the crate root".into()
    } else {
        m.join("::")
    }
}

fn is_ancestor(a: &[String], b: &[String]) -> bool {
    a.len() < b.len() && b.starts_with(a)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Crate {
    Lib,
    Bin,
}

/// The crate and module a file under src/ defines: `src/a.rs` and
/// `src/a/mod.rs` are `a`, `src/a/b.rs` is `a::b`.
fn module_of(path: &str) -> Option<(Crate, Module)> {
    let rel = path.strip_prefix("src/")?.strip_suffix(".rs")?;
    let mut m: Module = rel.split('/').map(String::from).collect();
    if m == ["lib"] {
        return Some((Crate::Lib, Vec::new()));
    }
    if m == ["main"] {
        return Some((Crate::Bin, Vec::new()));
    }
    if m.last().is_some_and(|s| s == "mod") {
        m.pop();
    }
    let krate = if m[0] == "cli" {
        Crate::Bin
    } else {
        Crate::Lib
    };
    Some((krate, m))
}

struct Layer {
    n: usize,
    name: String,
}

impl Layer {
    fn show(&self) -> String {
        format!("layer {} ({})", self.n, self.name)
    }
}

/// The `// layer N name: module …` lines of src/lib.rs.
fn parse_table(lib: &str, found: &mut Vec<Violation>) -> BTreeMap<Module, Layer> {
    let mut table = BTreeMap::new();
    let mut last: Option<usize> = None;
    for (i, line) in lib.lines().enumerate() {
        let Some(rest) = line.trim().strip_prefix("// layer ") else {
            continue;
        };
        if !rest.starts_with(|c: char| c.is_ascii_digit()) {
            continue; // prose that happens to start with "layer"
        }
        let parsed = rest.split_once(':').and_then(|(head, mods)| {
            let (n, name) = head.trim().split_once(' ')?;
            Some((n.parse::<usize>().ok()?, name.trim().to_string(), mods))
        });
        let Some((n, layer_name, mods)) = parsed else {
            found.push(Violation {
                kind: Kind::Table,
                message: format!(
                    "src/lib.rs:{}: cannot read `{}`: a layer line reads \
                     `// layer N name: module module::child …`",
                    i + 1,
                    line.trim()
                ),
            });
            continue;
        };
        if last.is_some_and(|l| n <= l) {
            found.push(Violation {
                kind: Kind::Table,
                message: format!(
                    "src/lib.rs:{}: layer {n} comes after layer {}: list the layers lowest first",
                    i + 1,
                    last.unwrap_or(0)
                ),
            });
        }
        last = Some(n);
        for m in mods.split_whitespace() {
            let path: Module = m.split("::").map(String::from).collect();
            let layer = Layer {
                n,
                name: layer_name.clone(),
            };
            if let Some(before) = table.insert(path, layer) {
                found.push(Violation {
                    kind: Kind::Table,
                    message: format!(
                        "src/lib.rs:{}: `{m}` is listed twice (also on {}): list it once",
                        i + 1,
                        before.show()
                    ),
                });
            }
        }
    }
    if table.is_empty() && last.is_none() {
        found.push(Violation {
            kind: Kind::Table,
            message: "src/lib.rs has no layer table: add one `// layer N name: module …` \
                      line per layer, lowest first"
                .into(),
        });
    }
    table
}

fn layer_of<'t>(m: &[String], table: &'t BTreeMap<Module, Layer>) -> Option<&'t Layer> {
    (1..=m.len()).rev().find_map(|n| table.get(&m[..n]))
}

/// `segs` as seen from module `here`: the longest known module it names, and
/// the rest of the path.
fn resolve(
    segs: &[String],
    here: &[String],
    known: &BTreeSet<Module>,
) -> Option<(Module, Vec<String>)> {
    let (mut full, mut rest): (Module, &[String]) = match segs.first()?.as_str() {
        "crate" => (Vec::new(), &segs[1..]),
        "self" => (here.to_vec(), &segs[1..]),
        _ => (here.to_vec(), segs),
    };
    while rest.first().is_some_and(|s| s == "super") {
        full.pop()?;
        rest = &rest[1..];
    }
    full.extend(rest.iter().filter(|s| *s != "self").cloned());
    let n = (0..=full.len())
        .rev()
        .find(|&n| known.contains(&full[..n]))
        .unwrap_or(0);
    Some((full[..n].to_vec(), full[n..].to_vec()))
}

struct Source {
    path: String,
    krate: Crate,
    module: Module,
    lines: Vec<String>,
    live: Vec<(Token, Module)>,
}

/// Where an import edge is written: its first place and how many more.
#[derive(Debug, Clone)]
struct Edge {
    at: String,
    more: usize,
}

/// Checks the (path, text) files of a source tree against the layer table
/// in its src/lib.rs; every violation, sorted.
fn check(files: &[(String, String)]) -> Vec<Violation> {
    let mut found = Vec::new();
    let sources: Vec<Source> = files
        .iter()
        .filter_map(|(path, text)| {
            let (krate, module) = module_of(path)?;
            Some(Source {
                path: path.clone(),
                krate,
                module,
                lines: text.lines().map(String::from).collect(),
                live: live_tokens(&tokens(&strip(text))),
            })
        })
        .collect();
    let known = |k: Crate| -> BTreeSet<Module> {
        let mut set: BTreeSet<Module> = sources
            .iter()
            .filter(|s| s.krate == k)
            .map(|s| s.module.clone())
            .collect();
        set.insert(Vec::new());
        set
    };
    let (known_lib, known_bin) = (known(Crate::Lib), known(Crate::Bin));

    let lib_text = files
        .iter()
        .find(|(p, _)| p == "src/lib.rs")
        .map_or("", |(_, t)| t.as_str());
    let table = parse_table(lib_text, &mut found);
    for m in table.keys() {
        if !known_lib.contains(m) || m.is_empty() {
            found.push(Violation {
                kind: Kind::Table,
                message: format!(
                    "src/lib.rs: the layer table lists `{}`, which no library file under src/ \
                     defines: rename or remove it",
                    m.join("::")
                ),
            });
        }
    }
    for s in &sources {
        if s.krate == Crate::Lib && !s.module.is_empty() && layer_of(&s.module, &table).is_none() {
            found.push(Violation {
                kind: Kind::Unlisted,
                message: format!(
                    "{} (module {}) is on no layer: add it to the layer table in src/lib.rs",
                    s.path,
                    name(&s.module)
                ),
            });
        }
    }

    // What the crate root re-exports, and what it defines itself.
    let mut reexports: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut root_items = BTreeSet::new();
    if let Some(root) = sources
        .iter()
        .find(|s| s.krate == Crate::Lib && s.module.is_empty())
    {
        for p in use_paths(&root.live) {
            if let Some(last) = p.alias.clone().or_else(|| p.segs.last().cloned()) {
                reexports.insert(last, p.segs);
            }
        }
        for (i, (tok, scope)) in root.live.iter().enumerate() {
            let item = ["fn", "struct", "enum", "const", "static", "type", "trait"];
            if let Tok::Ident(w) = &tok.tok
                && scope.is_empty()
                && item.contains(&w.as_str())
                && let Some(n) = word(&root.live, i + 1)
            {
                root_items.insert(n.to_string());
            }
        }
    }

    let mut edges: [BTreeMap<(Module, Module), Edge>; 2] = [BTreeMap::new(), BTreeMap::new()];
    // (file, path as written) → (kind, message, the further lines it is on)
    let mut refused: BTreeMap<(String, String), (Kind, String, Vec<usize>)> = BTreeMap::new();
    for s in &sources {
        if s.module.is_empty() {
            continue; // a crate root is the ancestor of every module
        }
        let (known, graph) = match s.krate {
            Crate::Lib => (&known_lib, 0),
            Crate::Bin => (&known_bin, 1),
        };
        for p in crate_paths(&s.live) {
            let mut here = s.module.clone();
            here.extend(p.scope.iter().cloned());
            let written = p.segs.join("::");
            let text = s.lines.get(p.line - 1).map_or("", |l| l.trim());
            let at = format!("{}:{} `{}`", s.path, p.line, text);
            let Some((mut target, rest)) = resolve(&p.segs, &here, known) else {
                found.push(Violation {
                    kind: Kind::Table,
                    message: format!("{at}: `{written}` climbs above the crate root"),
                });
                continue;
            };
            let mut refuse = |kind: Kind, tail: String| {
                refused
                    .entry((s.path.clone(), written.clone()))
                    .and_modify(|e| e.2.push(p.line))
                    .or_insert((kind, format!("{at} ({written}): {tail}"), Vec::new()));
            };
            if s.krate == Crate::Lib && target.is_empty() {
                let item = rest.first().cloned().unwrap_or_else(|| "*".into());
                let tail = if let Some(def) = reexports.get(&item) {
                    let defined = format!("crate::{}", def.join("::"));
                    let mut tail = format!(
                        "names `{item}` through the crate root's re-export; import it from \
                         its defining module: `{defined}`"
                    );
                    let mut path = vec!["crate".to_string()];
                    path.extend(def.iter().cloned());
                    if let Some((m, _)) = resolve(&path, &[], known) {
                        if let (Some(ls), Some(lt)) =
                            (layer_of(&s.module, &table), layer_of(&m, &table))
                            && lt.n > ls.n
                        {
                            tail += &format!(
                                " (but {} is on {}, above {}'s {}: move the item down)",
                                name(&m),
                                lt.show(),
                                name(&s.module),
                                ls.show()
                            );
                        }
                        target = m;
                    }
                    tail
                } else if root_items.contains(&item) {
                    format!(
                        "`{item}` is defined in src/lib.rs itself; move it into a module on a \
                         low layer and import it from there"
                    )
                } else {
                    format!(
                        "names `{item}` through the crate root; import it from the module that defines it"
                    )
                };
                refuse(Kind::RootReexport, tail);
            } else if s.krate == Crate::Lib
                && let (Some(ls), Some(lt)) =
                    (layer_of(&s.module, &table), layer_of(&target, &table))
                && lt.n > ls.n
            {
                refuse(
                    Kind::Up,
                    format!(
                        "{} is on {} but imports {} on {}; import from a module on layer ≤ {}, \
                         or move the item down",
                        name(&s.module),
                        ls.show(),
                        name(&target),
                        lt.show(),
                        ls.n
                    ),
                );
            }
            if target.is_empty()
                || target == s.module
                || is_ancestor(&target, &s.module)
                || is_ancestor(&s.module, &target)
            {
                continue;
            }
            edges[graph]
                .entry((s.module.clone(), target))
                .and_modify(|e| e.more += 1)
                .or_insert(Edge {
                    at: at.clone(),
                    more: 0,
                });
        }
    }
    for (kind, message, more) in refused.into_values() {
        let message = if more.is_empty() {
            message
        } else {
            let more: Vec<String> = more.iter().map(|l| l.to_string()).collect();
            format!("{message}; also at lines {}", more.join(", "))
        };
        found.push(Violation { kind, message });
    }
    found.extend(cycles(&edges[0], "library"));
    found.extend(cycles(&edges[1], "binary (src/cli)"));
    found.sort_by(|a, b| (a.kind, &a.message).cmp(&(b.kind, &b.message)));
    found
}

/// One violation per strongly connected group of modules, listing a cycle
/// through each of its edges.
fn cycles(edges: &BTreeMap<(Module, Module), Edge>, which: &str) -> Vec<Violation> {
    let mut adj: BTreeMap<&Module, Vec<&Module>> = BTreeMap::new();
    for (a, b) in edges.keys() {
        adj.entry(a).or_default().push(b);
        adj.entry(b).or_default();
    }
    let mut out = Vec::new();
    for group in strongly_connected(&adj) {
        if group.len() < 2 {
            continue;
        }
        let inside: BTreeSet<&Module> = group.iter().copied().collect();
        let mut found: BTreeSet<Vec<&Module>> = BTreeSet::new();
        for (a, b) in edges.keys() {
            if !inside.contains(a) || !inside.contains(b) {
                continue;
            }
            let Some(back) = shortest_path(&adj, &inside, b, a) else {
                continue;
            };
            let mut cycle = vec![a];
            cycle.extend(back.iter().take(back.len() - 1));
            let min = (0..cycle.len()).min_by_key(|&k| cycle[k]).unwrap_or(0);
            cycle.rotate_left(min);
            found.insert(cycle);
        }
        let names: Vec<String> = group.iter().map(|m| name(m)).collect();
        let mut message = format!(
            "import cycle in the {which} among {} modules ({}); break each cycle below by \
             moving the item one edge imports to a lower module:",
            group.len(),
            names.join(", ")
        );
        for cycle in found {
            let mut ring: Vec<String> = cycle.iter().map(|m| name(m)).collect();
            ring.push(name(cycle[0]));
            message += &format!("\n  {}", ring.join(" → "));
            for k in 0..cycle.len() {
                let (a, b) = (cycle[k], cycle[(k + 1) % cycle.len()]);
                if let Some(e) = edges.get(&(a.clone(), b.clone())) {
                    let more = if e.more > 0 {
                        format!(" (+{} more)", e.more)
                    } else {
                        String::new()
                    };
                    message += &format!("\n      {} → {}: {}{more}", name(a), name(b), e.at);
                }
            }
        }
        out.push(Violation {
            kind: Kind::Cycle,
            message,
        });
    }
    out
}

/// Tarjan's strongly connected components.
fn strongly_connected<'m>(adj: &BTreeMap<&'m Module, Vec<&'m Module>>) -> Vec<Vec<&'m Module>> {
    struct State<'m> {
        index: BTreeMap<&'m Module, usize>,
        low: BTreeMap<&'m Module, usize>,
        stack: Vec<&'m Module>,
        on_stack: BTreeSet<&'m Module>,
        groups: Vec<Vec<&'m Module>>,
    }
    fn visit<'m>(v: &'m Module, adj: &BTreeMap<&'m Module, Vec<&'m Module>>, st: &mut State<'m>) {
        let n = st.index.len();
        st.index.insert(v, n);
        st.low.insert(v, n);
        st.stack.push(v);
        st.on_stack.insert(v);
        for &w in adj.get(v).into_iter().flatten() {
            if !st.index.contains_key(w) {
                visit(w, adj, st);
                let lw = st.low[w];
                let lv = st.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if st.on_stack.contains(w) {
                let iw = st.index[w];
                let lv = st.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if st.low[v] == st.index[v] {
            let mut group = Vec::new();
            while let Some(w) = st.stack.pop() {
                st.on_stack.remove(w);
                group.push(w);
                if w == v {
                    break;
                }
            }
            group.sort();
            st.groups.push(group);
        }
    }
    let mut st = State {
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        groups: Vec::new(),
    };
    for &v in adj.keys() {
        if !st.index.contains_key(v) {
            visit(v, adj, &mut st);
        }
    }
    st.groups.sort();
    st.groups
}

/// The shortest path `from` → … → `to` inside `inside`, both ends included.
fn shortest_path<'m>(
    adj: &BTreeMap<&'m Module, Vec<&'m Module>>,
    inside: &BTreeSet<&'m Module>,
    from: &'m Module,
    to: &'m Module,
) -> Option<Vec<&'m Module>> {
    let mut came: BTreeMap<&Module, &Module> = BTreeMap::new();
    let mut queue = VecDeque::from([from]);
    let mut seen = BTreeSet::from([from]);
    while let Some(v) = queue.pop_front() {
        if v == to {
            let mut path = vec![v];
            let mut at = v;
            while let Some(&prev) = came.get(at) {
                path.push(prev);
                at = prev;
            }
            path.reverse();
            return Some(path);
        }
        for &w in adj.get(v).into_iter().flatten() {
            if inside.contains(w) && seen.insert(w) {
                came.insert(w, v);
                queue.push_back(w);
            }
        }
    }
    None
}
