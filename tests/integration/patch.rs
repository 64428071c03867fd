//! Publish is a patch: re-publishing a session this device has going
//! changes only what is named; `--replace` writes exactly what is given;
//! `--unset` and `--meta KEY=` remove. Never patched from: a record another
//! device wrote, one changed since this device wrote it, an ended life.

use std::path::Path;
use std::process::Stdio;

use serde_json::{Value, json};

use crate::harness::*;

/// A process that stays alive until dropped (an owner for records).
struct Owner(std::process::Child);

impl Owner {
    fn start() -> Self {
        let child = std::process::Command::new(require_tool("sleep"))
            .arg("600")
            .spawn()
            .unwrap();
        Owner(child)
    }
    fn pid(&self) -> String {
        self.0.id().to_string()
    }
}

impl Drop for Owner {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn publish(d: &Device, args: &[&str]) -> JsonRecord {
    let mut all = vec!["publish", "--json"];
    all.extend_from_slice(args);
    d.json(&all)
}

/// Every flag that names a field, with the owner `owner`.
fn full(owner: &str) -> Vec<&str> {
    vec![
        "--session",
        "s",
        "--key",
        "durable-s",
        "--status",
        "working",
        "--title",
        "Refactor the parser",
        "--model",
        "gpt-5",
        "--cwd",
        "/src/parser",
        "--client",
        "gateway",
        "--source",
        "telegram",
        "--endpoint",
        "ssh://alice@laptop/s",
        "--meta",
        "branch=main",
        "--meta",
        "ticket=42",
        "--ttl",
        "60s",
        "--owner-pid",
        owner,
    ]
}

fn ttl(r: &JsonRecord) -> f64 {
    r.expires_at.unwrap() - r.updated_at.unwrap()
}

fn file_of(dir: &Path, session: &str) -> String {
    let names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(&format!(".{session}.json")) && !n.starts_with('.'))
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
    names.into_iter().next().unwrap()
}

#[test]
fn a_status_only_publish_keeps_every_other_field() {
    let w = World::new();
    let a = w.device("a");
    let owner = Owner::start();
    let first = publish(&a, &full(&owner.pid()));
    let second = publish(&a, &["--session", "s", "--status", "waiting"]);
    assert_eq!(second.status, "waiting");
    assert_eq!(second.seq, first.seq + 1);
    assert!(second.updated_at > first.updated_at);
    // Everything not named is as it was: the fields, the life, the owner, the ttl.
    let mut expected = first.clone();
    expected.status = "waiting".into();
    expected.seq = second.seq;
    expected.updated_at = second.updated_at;
    expected.expires_at = second.expires_at;
    // Signed anew: the same key, a signature of the new fields.
    assert_eq!(second.key, first.key);
    assert!(second.sig.is_some() && second.sig != first.sig);
    expected.sig = second.sig.clone();
    assert_eq!(second, expected);
    assert_eq!(ttl(&second), 60.0);
    assert_eq!(second.pid, owner.0.id());
    // And that is what every reader lists.
    let row = a.show("s");
    assert_eq!(
        (row.title.as_str(), row.model.as_str(), row.status.as_str()),
        ("Refactor the parser", "gpt-5", "waiting")
    );
    assert_eq!(row.metadata.len(), 2);
    // A patch that names a field changes that field only.
    let third = publish(&a, &["--session", "s", "--title", "Review", "--ttl", "30s"]);
    assert_eq!(
        (third.title.as_str(), third.status.as_str(), ttl(&third)),
        ("Review", "waiting", 30.0)
    );
    assert_eq!(third.metadata, first.metadata);
    assert_eq!(third.started_at, first.started_at);
}

#[test]
fn replace_writes_exactly_what_is_given() {
    let w = World::new();
    let a = w.device("a");
    let owner = Owner::start();
    let first = publish(&a, &full(&owner.pid()));
    let replaced = publish(&a, &["--session", "s", "--replace", "--title", "only this"]);
    assert_eq!(replaced.title, "only this");
    assert_eq!(replaced.status, "idle");
    assert_eq!(replaced.client, "terminal", "the profile's default client");
    assert_eq!(replaced.session_key, "s");
    for (field, value) in [
        ("model", &replaced.model),
        ("cwd", &replaced.cwd),
        ("source", &replaced.source),
        ("endpoint", &replaced.endpoint),
    ] {
        assert_eq!(value, "", "{field} was kept by --replace");
    }
    assert!(replaced.metadata.is_empty());
    assert_eq!(ttl(&replaced), 90.0, "the profile's ttl");
    assert_eq!(replaced.owner_start, None, "no owner given");
    // Still the same session life, ranked above the one it replaced.
    assert_eq!(replaced.started_at, first.started_at);
    assert_eq!(replaced.seq, first.seq + 1);
}

#[test]
fn unset_and_an_empty_meta_value_remove() {
    let w = World::new();
    let a = w.device("a");
    let owner = Owner::start();
    publish(&a, &full(&owner.pid()));
    let r = publish(
        &a,
        &[
            "--session",
            "s",
            "--unset",
            "model",
            "--unset",
            "endpoint",
            "--meta",
            "ticket=",
        ],
    );
    assert_eq!((r.model.as_str(), r.endpoint.as_str()), ("", ""));
    assert_eq!(r.metadata.keys().collect::<Vec<_>>(), ["branch"]);
    assert_eq!(r.title, "Refactor the parser");
    assert_eq!(r.cwd, "/src/parser");
    // --unset metadata, then the entries given: they are all that is left.
    let r = publish(
        &a,
        &["--session", "s", "--unset", "metadata", "--meta", "pr=7"],
    );
    assert_eq!(
        serde_json::to_value(&r.metadata).unwrap(),
        json!({"pr": "7"})
    );
    // A first publish with KEY= writes no such entry.
    let fresh = publish(&a, &["--session", "t", "--meta", "a=", "--meta", "b=1"]);
    assert_eq!(
        serde_json::to_value(&fresh.metadata).unwrap(),
        json!({"b": "1"})
    );

    // Only the optional text fields and the metadata can be unset; the
    // error names them.
    let bad = a
        .run(&["publish", "--session", "s", "--unset", "status"])
        .code(2);
    for name in [
        "title", "model", "cwd", "client", "source", "endpoint", "metadata",
    ] {
        assert!(
            bad.stderr.contains(name),
            "{name} not named: {}",
            bad.stderr
        );
    }
    // A field both given and unset is refused, and nothing is written.
    let before = a.show("s");
    let both = a
        .run(&[
            "publish",
            "--session",
            "s",
            "--unset",
            "title",
            "--title",
            "x",
        ])
        .code(2);
    assert!(both.stderr.contains("title"), "{}", both.stderr);
    assert_eq!(a.show("s").seq, before.seq);
}

#[test]
fn a_record_another_device_wrote_is_never_patched_from() {
    let w = World::new();
    let (a, b) = (w.device("a"), w.device("b"));
    // Device b writes at the file name a will publish to (the same
    // instance id on two devices).
    publish(
        &b,
        &["--instance", "shared", "--session", "x", "--title", "b's"],
    );
    let r = publish(
        &a,
        &["--instance", "shared", "--session", "x", "--status", "w"],
    );
    assert_eq!(r.status, "w");
    assert_eq!(r.title, "", "a patched b's record: {r:?}");
    assert_eq!(r.device_id, a.device_id());

    // A file of a's own, rewritten by someone else keeping its life's ids,
    // no longer holds what a wrote: no base either.
    let owner = Owner::start();
    let ours = publish(&a, &full(&owner.pid()));
    let file = file_of(&w.shared(), "s");
    let path = w.shared().join(&file);
    let mut planted: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    planted["title"] = json!("planted");
    planted["metadata"] = json!({"planted": "yes"});
    write_record(&w.shared(), &file, &planted);
    let r = publish(&a, &["--session", "s", "--status", "waiting"]);
    assert_eq!(r.status, "waiting");
    assert_eq!(
        (r.title.as_str(), r.model.as_str(), r.metadata.len()),
        ("", "", 0),
        "patched from a rewritten file: {r:?}"
    );
    assert_eq!(
        r.owner_start, None,
        "the owner came from the rewritten file"
    );
    assert_eq!(r.started_at, ours.started_at, "still a's life");
}

#[test]
fn an_ended_life_is_not_patched_from() {
    let w = World::new();
    let a = w.device("a");
    let owner = Owner::start();
    let first = publish(&a, &full(&owner.pid()));
    a.run(&["clear", "--session", "s"]).success();
    let r = publish(&a, &["--session", "s", "--status", "working"]);
    assert_eq!(r.title, "");
    assert!(r.metadata.is_empty());
    assert_ne!(r.started_at, first.started_at, "a new life");
    assert_eq!(r.ended_at, None);
}

#[test]
fn redaction_and_strict_apply_to_the_merged_record() {
    let w = World::new();
    let a = w.device("a");
    publish(&a, &["--session", "s", "--title", "T", "--model", "M"]);
    let token = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
    let out = a
        .run(&[
            "publish",
            "--session",
            "s",
            "--meta",
            &format!("note={token}"),
        ])
        .success();
    assert!(out.stderr.contains("metadata"), "{}", out.stderr);
    let row = a.show("s");
    assert_eq!(row.metadata["note"], "[redacted]");
    assert_eq!((row.title.as_str(), row.model.as_str()), ("T", "M"));
    // --strict refuses the patch and leaves the record as it was.
    let before = std::fs::read(w.shared().join(file_of(&w.shared(), "s"))).unwrap();
    a.run(&["publish", "--session", "s", "--strict", "--title", token])
        .code(3);
    let after = std::fs::read(w.shared().join(file_of(&w.shared(), "s"))).unwrap();
    assert_eq!(before, after);
    assert!(!String::from_utf8_lossy(&after).contains(token));
}

/// Concurrent patches of one record each add their own metadata entry: the
/// merge happens under the record's lock, against the record as it is then,
/// so none is lost.
#[test]
fn concurrent_patches_lose_no_update() {
    let w = World::new();
    let a = w.device("a");
    publish(&a, &["--session", "s", "--title", "T"]);
    let writers: Vec<_> = (0..12)
        .map(|i| {
            a.cmd()
                .args(["publish", "--session", "s", "--meta", &format!("k{i}=v{i}")])
                .stdout(Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut c in writers {
        assert!(c.wait().unwrap().success());
    }
    let row = a.show("s");
    assert_eq!(row.metadata.len(), 12, "{:?}", row.metadata);
    assert_eq!(row.title, "T");
    assert_eq!(row.seq, 13);
}

/// The fenced block after `<!-- check: NAME -->` in a docs page.
fn doc_example(page: &str, name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("docs")
        .join(page);
    let text = std::fs::read_to_string(&path).unwrap();
    let marker = format!("<!-- check: {name} -->");
    let after = &text[text.find(&marker).expect("marker")..];
    let body = &after[after.find("```").unwrap()..];
    let body = &body[body.find('\n').unwrap() + 1..];
    body[..body.find("```").unwrap()].to_string()
}

#[test]
fn the_hook_example_sets_the_status_and_keeps_the_rest() {
    let w = World::new();
    let a = w.device("a");
    let hook = w.tmp.path().join("presence-hook.sh");
    std::fs::write(&hook, doc_example("lifecycle.md", "hook")).unwrap();
    let owner = Owner::start();
    let run = |args: &[&str]| a.program("sh").arg(&hook).args(args).output().unwrap();
    let ok = |args: &[&str]| {
        let out = run(args);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    ok(&["start", "gw-1", "Review PR", &owner.pid()]);
    let started = a.show("gw-1");
    ok(&["status", "gw-1", "waiting"]);
    let row = a.show("gw-1");
    assert_eq!(row.status, "waiting");
    assert_eq!(
        (row.title.as_str(), row.client.as_str(), row.pid),
        ("Review PR", "gateway", owner.0.id())
    );
    assert_eq!(row.metadata, started.metadata);
    assert_eq!(row.started_at, started.started_at);
    ok(&["end", "gw-1"]);
    assert!(a.list(&[]).is_empty());
    // Without arguments: the usage line and exit 2, not an unbound variable.
    let out = run(&[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("usage"));
}
