//! The examples in docs/ are checked against the real program.

use std::collections::BTreeSet;
use std::path::Path;

use crate::harness::*;

/// The fenced block that follows `<!-- check: NAME -->` in a docs page.
fn example(page: &str, name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("docs")
        .join(page);
    let text = std::fs::read_to_string(&path).unwrap();
    let marker = format!("<!-- check: {name} -->");
    let after = &text[text
        .find(&marker)
        .unwrap_or_else(|| panic!("{marker} missing in {page}"))..];
    let start = after.find("```").unwrap();
    let body = &after[start..];
    let body = &body[body.find('\n').unwrap() + 1..];
    body[..body.find("```").unwrap()].to_string()
}

fn keys(v: &serde_json::Value) -> BTreeSet<String> {
    v.as_object().unwrap().keys().cloned().collect()
}

#[test]
fn record_format_example_is_a_record_we_read_and_write() {
    let w = World::new();
    let a = w.device("a");
    let mut doc: serde_json::Value =
        serde_json::from_str(&example("record-format.md", "record")).unwrap();
    // Make it live now, keeping its ttl.
    let t = now();
    let ttl = doc["expires_at"].as_f64().unwrap() - doc["updated_at"].as_f64().unwrap();
    doc["updated_at"] = t.into();
    doc["expires_at"] = (t + ttl).into();
    write_record(&w.shared(), "laptop-3f9c2a1b.s-20261130-a1.json", &doc);
    let rows = a.list(&[]);
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["session_id"], doc["session_id"]);
    assert_eq!(rows[0]["metadata"], doc["metadata"]);
    // Same fields as what we write.
    a.publish("x", &[]);
    let ours = std::fs::read_dir(w.shared())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(".x.json"))
        .unwrap();
    let ours: serde_json::Value = serde_json::from_slice(&std::fs::read(ours).unwrap()).unwrap();
    assert_eq!(keys(&doc), keys(&ours));
}

#[test]
fn json_output_example_has_the_fields_list_prints() {
    let w = World::new();
    let a = w.device("a");
    let doc: serde_json::Value = serde_json::from_str(&example("json-output.md", "list")).unwrap();
    let doc_row = &doc.as_array().unwrap()[0];
    a.publish("s", &[]);
    let row = a.list(&[]).remove(0);
    assert_eq!(keys(doc_row), keys(&row));
    let doc_all: serde_json::Value =
        serde_json::from_str(&example("json-output.md", "loser")).unwrap();
    let t = now();
    let dir = w.shared();
    let rec = |u: f64| serde_json::json!({"session_id": "c", "profile": "default", "updated_at": u, "expires_at": u + 90.0});
    write_record(&dir, "i.c.json", &rec(t - 1.0));
    write_record(&dir, "i.c.sync-conflict-20261130-101112-ABC.json", &rec(t));
    let all = a.list(&["--all", "--session", "c"]);
    let loser = all
        .iter()
        .find(|r| r.get("superseded_by").is_some())
        .unwrap();
    assert_eq!(keys(&doc_all), keys(loser));
}

#[test]
fn configuration_example_is_valid() {
    let w = World::new();
    let a = w.bare_device("a");
    let text = example("configuration.md", "config");
    a.write_config(&text);
    for profile in ["default", "hermes", "team"] {
        let out = a.run(&["--profile", profile, "config", "show"]).success();
        assert!(
            out.stdout.contains(&format!("[profiles.{profile}]")),
            "{}",
            out.stdout
        );
    }
    let hermes = a
        .run(&["--profile", "hermes", "config", "show"])
        .success()
        .stdout;
    assert!(hermes.contains("show = [\"*\"]"), "{hermes}");
    assert!(
        hermes.contains(".hermes/session-presence/active"),
        "{hermes}"
    );
}

#[test]
fn config_init_writes_the_documented_example() {
    let w = World::new();
    let a = w.bare_device("a");
    a.run(&["config", "init"]).success();
    let written = std::fs::read_to_string(a.config_path()).unwrap();
    assert_eq!(written.trim(), example("configuration.md", "init").trim());
}
