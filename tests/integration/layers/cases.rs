//! The checker on small in-memory trees: each rule can fail.

use super::*;

const TABLE: &str = "\
// layer 0 base: error
// layer 1 rules: a b
// layer 2 front: c
pub use error::Error;
pub fn now() -> f64 { 0.0 }
";

fn run(files: &[(&str, &str)]) -> Vec<Violation> {
    let mut all: Vec<(String, String)> = vec![("src/lib.rs".into(), TABLE.into())];
    for name in ["error", "a", "b", "c"] {
        if !files.iter().any(|(p, _)| *p == format!("src/{name}.rs")) {
            all.push((format!("src/{name}.rs"), String::new()));
        }
    }
    all.extend(files.iter().map(|(p, t)| (p.to_string(), t.to_string())));
    check(&all)
}

fn of(found: &[Violation], kind: Kind) -> Vec<&str> {
    found
        .iter()
        .filter(|v| v.kind == kind)
        .map(|v| v.message.as_str())
        .collect()
}

#[test]
fn an_upward_import_is_reported() {
    let found = run(&[("src/a.rs", "use std::fmt;\nuse crate::c::Front;\n")]);
    let up = of(&found, Kind::Up);
    assert_eq!(up.len(), 1, "{}", report(&found));
    assert!(
        up[0].starts_with("src/a.rs:2 `use crate::c::Front;` (crate::c::Front)"),
        "{}",
        up[0]
    );
    assert!(
        up[0].contains("layer 1 (rules)") && up[0].contains("layer 2 (front)"),
        "{}",
        up[0]
    );
    assert!(up[0].contains("import from a module on layer ≤ 1, or move the item down"));
    assert_eq!(found.len(), 1, "{}", report(&found));
}

#[test]
fn a_downward_or_level_import_is_not() {
    let found = run(&[
        ("src/c.rs", "use crate::a::X;\nuse crate::error::Error;\n"),
        ("src/a.rs", "use crate::b::Y;\n"),
    ]);
    assert!(found.is_empty(), "{}", report(&found));
}

#[test]
fn an_inline_path_and_super_are_read() {
    let found = run(&[
        ("src/a.rs", "fn f() {\n    let x = crate::c::state(1);\n}\n"),
        ("src/b.rs", "fn g() { super::c::h() }\n"),
        ("src/a/deep.rs", "use super::super::c::Z;\n"),
    ]);
    let up = of(&found, Kind::Up);
    assert_eq!(up.len(), 3, "{}", report(&found));
    assert!(
        up.iter().any(|m| m.starts_with("src/a.rs:2 ")),
        "{}",
        report(&found)
    );
    assert!(
        up.iter().any(|m| m.starts_with("src/b.rs:1 ")),
        "{}",
        report(&found)
    );
    assert!(
        up.iter()
            .any(|m| m.starts_with("src/a/deep.rs:1 ") && m.contains("a::deep is on layer 1"))
    );
}

#[test]
fn a_cycle_is_reported_with_each_edge() {
    let found = run(&[
        ("src/a.rs", "use crate::b::B;\n"),
        ("src/b.rs", "\n\nuse crate::a::{self, A};\n"),
    ]);
    let cycles = of(&found, Kind::Cycle);
    assert_eq!(cycles.len(), 1, "{}", report(&found));
    assert!(cycles[0].contains("a → b → a"), "{}", cycles[0]);
    assert!(
        cycles[0].contains("a → b: src/a.rs:1 `use crate::b::B;`"),
        "{}",
        cycles[0]
    );
    assert!(
        cycles[0].contains("b → a: src/b.rs:3 `use crate::a::{self, A};` (+1 more)"),
        "{}",
        cycles[0]
    );
}

#[test]
fn a_three_module_cycle_is_printed_in_order() {
    let found = run(&[
        ("src/a.rs", "use crate::b::B;\n"),
        ("src/b.rs", "use crate::error::C;\n"),
        ("src/error.rs", "use crate::a::A;\n"),
    ]);
    let cycles = of(&found, Kind::Cycle);
    assert_eq!(cycles.len(), 1, "{}", report(&found));
    assert!(cycles[0].contains("a → b → error → a"), "{}", cycles[0]);
}

#[test]
fn a_parent_and_its_child_are_no_cycle() {
    let found = run(&[
        (
            "src/a.rs",
            "mod child;\nuse self::child::Helper;\npub struct A;\n",
        ),
        (
            "src/a/child.rs",
            "use super::A;\nuse crate::a::A as Same;\nimpl A {}\n",
        ),
    ]);
    assert!(found.is_empty(), "{}", report(&found));
}

#[test]
fn a_grouped_multi_line_use_is_parsed() {
    let text = "use crate::{\n    error::E,\n    c::{\n        X,\n        deep::{Y, Z as W},\n    },\n    b,\n};\n";
    let found = run(&[("src/a.rs", text), ("src/c/deep.rs", "")]);
    let up = of(&found, Kind::Up);
    assert_eq!(up.len(), 3, "{}", report(&found));
    assert!(
        up[0].starts_with("src/a.rs:4 `X,` (crate::c::X)"),
        "{}",
        up[0]
    );
    assert!(
        up[1].starts_with("src/a.rs:5 `deep::{Y, Z as W},` (crate::c::deep::Y)"),
        "{}",
        up[1]
    );
    assert!(up[2].contains("(crate::c::deep::Z)"), "{}", up[2]);
}

#[test]
fn test_code_is_skipped() {
    let text = "\
pub fn f() {}

#[cfg(test)]
mod tests {
    use crate::c::X;
    fn g() { crate::c::y(); }
}

#[cfg(all(test, unix))]
#[allow(dead_code)]
fn helper() { let _ = crate::c::z(); }

#[cfg(test)]
mod more;

pub fn after() { crate::c::late(); }
";
    let found = run(&[("src/a.rs", text)]);
    let up = of(&found, Kind::Up);
    assert_eq!(up.len(), 1, "{}", report(&found));
    assert!(up[0].starts_with("src/a.rs:16 "), "{}", up[0]);
    assert_eq!(found.len(), 1, "{}", report(&found));
}

#[test]
fn not_test_only_code_is_read() {
    let text = "#[cfg(not(test))]\nuse crate::c::X;\n#[cfg(any(test, unix))]\nuse crate::c::Y;\n";
    let found = run(&[("src/a.rs", text)]);
    assert_eq!(of(&found, Kind::Up).len(), 2, "{}", report(&found));
}

#[test]
fn a_root_reexport_is_reported() {
    let found = run(&[(
        "src/a.rs",
        "use crate::Error;\nfn f() -> f64 { crate::now() }\nuse crate::{b::B, Other};\n",
    )]);
    let root = of(&found, Kind::RootReexport);
    assert_eq!(root.len(), 3, "{}", report(&found));
    assert!(
        root[0].starts_with("src/a.rs:1 `use crate::Error;` (crate::Error)"),
        "{}",
        root[0]
    );
    assert!(root[0].contains("`crate::error::Error`"), "{}", root[0]);
    assert!(
        root.iter()
            .any(|m| m.contains("`Other` through the crate root"))
    );
    assert!(
        root.iter()
            .any(|m| m.contains("`now` is defined in src/lib.rs itself"))
    );
}

#[test]
fn a_root_reexport_of_a_higher_module_says_so() {
    let table = format!("{TABLE}pub use c::Row;\n");
    let found = check(&[
        ("src/lib.rs".into(), table),
        ("src/a.rs".into(), "use crate::Row;\n".into()),
        ("src/c.rs".into(), "use crate::a::A;\n".into()),
        ("src/b.rs".into(), String::new()),
        ("src/error.rs".into(), String::new()),
    ]);
    let root = of(&found, Kind::RootReexport);
    assert_eq!(root.len(), 1, "{}", report(&found));
    assert!(
        root[0].contains("c is on layer 2 (front), above a's layer 1 (rules)"),
        "{}",
        root[0]
    );
    // The re-export still counts as an edge to the defining module.
    assert!(
        of(&found, Kind::Cycle)[0].contains("a → c → a"),
        "{}",
        report(&found)
    );
}

#[test]
fn comments_and_strings_are_ignored() {
    let text = r####"
//! Links [`crate::c`] in docs.
// use crate::c::X;
/* crate::c::Y /* nested crate::c::Q */ crate::c::R */
/// [`crate::c::Z`]
fn f<'a>(s: &'a str) -> char {
    let _ = "crate::c::S \" crate::c::T";
    let _ = r#"crate::c::U " crate::c::V"#;
    let _ = b"crate::c::W";
    let _ = '"';
    let _ = '\'';
    crate::c::real(s);
    '{'
}
"####;
    let found = run(&[("src/a.rs", text)]);
    let up = of(&found, Kind::Up);
    assert_eq!(up.len(), 1, "{}", report(&found));
    assert!(
        up[0].starts_with("src/a.rs:12 `crate::c::real(s);`"),
        "{}",
        up[0]
    );
    assert_eq!(found.len(), 1, "{}", report(&found));
}

#[test]
fn an_inline_module_moves_super() {
    let text = "mod inner {\n    use super::super::super::c::X;\n    use super::Local;\n}\npub struct Local;\n";
    let found = run(&[("src/a/deep.rs", text)]);
    let up = of(&found, Kind::Up);
    assert_eq!(up.len(), 1, "{}", report(&found));
    assert!(up[0].starts_with("src/a/deep.rs:2 "), "{}", up[0]);
}

#[test]
fn a_file_on_no_layer_and_a_stale_entry_are_reported() {
    let found = run(&[("src/d.rs", ""), ("src/d/inner.rs", "")]);
    let unlisted = of(&found, Kind::Unlisted);
    assert_eq!(unlisted.len(), 2, "{}", report(&found));
    assert!(
        unlisted[0].contains(
            "src/d.rs (module d) is on no layer: add it to the layer table in src/lib.rs"
        )
    );
    let mut files: Vec<(String, String)> = vec![("src/lib.rs".into(), TABLE.into())];
    files.push(("src/error.rs".into(), String::new()));
    files.push(("src/a.rs".into(), String::new()));
    files.push(("src/c/mod.rs".into(), String::new()));
    let found = check(&files);
    let table = of(&found, Kind::Table);
    assert_eq!(table.len(), 1, "{}", report(&found));
    assert!(
        table[0].contains("lists `b`, which no library file"),
        "{}",
        table[0]
    );
}

#[test]
fn a_listed_child_has_its_own_layer() {
    let table = "// layer 0 base: w::rule\n// layer 1 top: w\n";
    let found = check(&[
        ("src/lib.rs".into(), table.into()),
        ("src/w.rs".into(), "use self::rule::Diff;\n".into()),
        ("src/w/rule.rs".into(), "use super::Watcher;\n".into()),
        (
            "src/w/rule/more.rs".into(),
            "use crate::w::rule::Diff;\n".into(),
        ),
    ]);
    let up = of(&found, Kind::Up);
    assert_eq!(up.len(), 1, "{}", report(&found));
    assert!(
        up[0].starts_with("src/w/rule.rs:1 ") && up[0].contains("w::rule is on layer 0 (base)")
    );
    assert_eq!(found.len(), 1, "{}", report(&found));
}

#[test]
fn the_binary_is_checked_for_cycles_only() {
    let found = run(&[
        ("src/main.rs", "mod cli;\nuse crate::cli::run;\n"),
        ("src/cli/mod.rs", "mod x;\nmod y;\nuse presence::Error;\n"),
        ("src/cli/x.rs", "use super::y::Y;\nuse super::Ctx;\n"),
        ("src/cli/y.rs", "fn f() { crate::cli::x::g() }\n"),
    ]);
    let cycles = of(&found, Kind::Cycle);
    assert_eq!(cycles.len(), 1, "{}", report(&found));
    assert!(
        cycles[0].contains("in the binary (src/cli)"),
        "{}",
        cycles[0]
    );
    assert!(
        cycles[0].contains("cli::x → cli::y → cli::x"),
        "{}",
        cycles[0]
    );
    assert_eq!(found.len(), 1, "{}", report(&found));
}

#[test]
fn a_malformed_table_is_reported() {
    let found = check(&[
        (
            "src/lib.rs".into(),
            "// layer 1a: a\n// layer 1 x: a\n// layer 0 y: a\n// layer or prose\n".into(),
        ),
        ("src/a.rs".into(), String::new()),
    ]);
    let table = of(&found, Kind::Table);
    assert_eq!(table.len(), 3, "{}", report(&found));
    let found = check(&[("src/lib.rs".into(), "//! no table\n".into())]);
    assert!(
        of(&found, Kind::Table)[0].contains("no layer table"),
        "{}",
        report(&found)
    );
}
