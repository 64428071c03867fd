//! The redaction corpora end to end: benign strings pass through `publish`
//! byte-identical; every secret is redacted on publish, refused under
//! `--strict` and as an id, never printed by `list` or `show` when another
//! device planted it (also when it straddles the read limit), and `doctor`
//! names the files that carry one. Cases are batched, many strings per
//! record, to keep the processes few.

use std::collections::BTreeMap;
use std::path::Path;

use presence::Record;
use presence::limits::MAX_STRING_BYTES;
use presence::{REDACTED, redact_text};
use serde_json::{Value, json};

use crate::harness::*;

const BENIGN: &str = include_str!("../data/redact/benign.txt");
const SECRETS: &str = include_str!("../data/redact/secrets.txt");

include!("../data/redact/corpus.rs");

/// A secret-corpus line as (input, expected output, secret parts): each
/// `⟦…⟧` is a secret part, replaced by `[redacted]` in the expected output.
struct Secret {
    input: String,
    want: String,
    parts: Vec<String>,
}

fn secrets() -> Vec<Secret> {
    corpus(SECRETS)
        .iter()
        .map(|line| {
            let (input, want, parts) = marked(line);
            Secret { input, want, parts }
        })
        .collect()
}

/// The record in `dir`'s only file for `session`, read back with the library's type.
fn read_record(dir: &Path, session: &str) -> Record {
    let file = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.extension().is_some_and(|x| x == "json")
                && Record::from_json(&std::fs::read(p).unwrap())
                    .is_ok_and(|r| r.session_id == session)
        })
        .unwrap_or_else(|| panic!("no record for {session}"));
    Record::from_json(&std::fs::read(file).unwrap()).unwrap()
}

fn meta_args(values: &[String]) -> Vec<String> {
    values
        .iter()
        .enumerate()
        .map(|(i, v)| format!("--meta=m{i:02}={v}"))
        .collect()
}

fn assert_no_leak(secrets: &[Secret], what: &str, text: &str) {
    for s in secrets {
        for part in &s.parts {
            assert!(!text.contains(part.as_str()), "{part:?} leaked in {what}");
        }
    }
}

#[test]
fn benign_corpus_passes_through_publish_byte_identical() {
    let w = World::new();
    let a = w.device("a");
    let lines = corpus(BENIGN);
    assert!(lines.len() >= 500);
    // Task and branch slugs as session ids: published as given.
    let ids: Vec<&String> = lines
        .iter()
        .filter(|l| l.starts_with("task-") || l.starts_with("desk-") || l.starts_with("risk-"))
        .take(20)
        .collect();
    let chunks: Vec<&[String]> = lines.chunks(36).collect();
    assert!(ids.len() >= chunks.len());
    for (chunk, id) in chunks.iter().zip(&ids) {
        // 32 metadata values, and the title, cwd, model and endpoint.
        let (meta, fields) = chunk.split_at(chunk.len().min(32));
        let field = |i: usize| fields.get(i).cloned().unwrap_or_default();
        let endpoint = field(3).trim().to_string();
        // `--flag=value`: a value may start with `-`.
        let mut args: Vec<String> = vec![
            "publish".into(),
            format!("--session={id}"),
            format!("--title={}", field(0)),
            format!("--cwd={}", field(1)),
            format!("--model={}", field(2)),
            format!("--endpoint={endpoint}"),
        ];
        args.extend(meta_args(meta));
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = a.run(&argv).success();
        assert!(!out.stderr.contains("redacted"), "{}", out.stderr);
        let r = read_record(&w.shared(), id);
        assert_eq!(&r.session_id, *id);
        assert_eq!(&r.session_key, *id);
        assert_eq!((r.title, r.cwd, r.model), (field(0), field(1), field(2)));
        assert_eq!(r.endpoint, endpoint);
        let want: BTreeMap<String, String> = meta
            .iter()
            .enumerate()
            .map(|(i, v)| (format!("m{i:02}"), v.clone()))
            .collect();
        assert_eq!(r.metadata, want);
    }
    // The ids are found by show and clear.
    assert_eq!(&a.show(ids[0]).session_id, ids[0]);
    let cleared = a.run(&["clear", "--session", ids[0]]).success();
    assert!(
        cleared.stdout.contains(ids[0].as_str()),
        "{}",
        cleared.stdout
    );
}

#[test]
fn secret_corpus_is_redacted_on_publish_and_refused_under_strict() {
    let w = World::new();
    let a = w.device("a");
    let secrets = secrets();
    assert!(secrets.len() >= 200);
    for (n, chunk) in secrets.chunks(32).enumerate() {
        let session = format!("s{n}");
        let inputs: Vec<String> = chunk.iter().map(|s| s.input.clone()).collect();
        let mut args: Vec<String> = ["publish", "--session", &session]
            .map(String::from)
            .to_vec();
        args.extend(meta_args(&inputs));
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = a.run(&argv).success();
        assert_no_leak(chunk, "publish's stderr", &out.stderr);
        let r = read_record(&w.shared(), &session);
        for (i, s) in chunk.iter().enumerate() {
            let key = format!("m{i:02}");
            assert_eq!(r.metadata[&key], s.want, "{:?}", s.input);
            assert!(
                out.stderr.contains(&format!("metadata.{key}")),
                "{}",
                out.stderr
            );
        }
    }
    let file_text: String = std::fs::read_dir(w.shared())
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
        .collect();
    assert_no_leak(&secrets, "the written files", &file_text);
    let files_before = std::fs::read_dir(w.shared()).unwrap().count();
    for s in &secrets {
        // Alone in the title under --strict: refused, nothing written.
        let title = format!("--title={}", s.input);
        let out = a
            .run(&["publish", "--session", "strict", &title, "--strict"])
            .code(3);
        assert!(out.stderr.contains("title"), "{}", out.stderr);
        assert_no_leak(std::slice::from_ref(s), "--strict's stderr", &out.stderr);
        // As a session id: refused (exit 3), strict or not, and it says why.
        let out = a
            .run(&["publish", &format!("--session={}", s.input)])
            .code(3);
        assert!(
            out.stderr.contains("session_id looks like a credential"),
            "{}",
            out.stderr
        );
        assert_no_leak(std::slice::from_ref(s), "the id refusal", &out.stderr);
    }
    assert_eq!(std::fs::read_dir(w.shared()).unwrap().count(), files_before);
}

#[test]
fn planted_secrets_never_reach_list_show_or_doctor() {
    let w = World::new();
    let a = w.device("a");
    a.publish("mine", &[]);
    let secrets = secrets();
    let t = now();
    let mut files = Vec::new();
    for (n, chunk) in secrets.chunks(30).enumerate() {
        let meta: serde_json::Map<String, Value> = chunk
            .iter()
            .enumerate()
            .map(|(i, s)| (format!("m{i:02}"), Value::from(s.input.clone())))
            .collect();
        let pick = |i: usize| chunk[i % chunk.len()].input.clone();
        let file = format!("other-{n}.r{n}.json");
        write_record(
            &w.shared(),
            &file,
            &json!({"version": 1, "session_id": format!("r{n}"), "session_key": pick(0),
                    "profile": "default", "client": format!("c{n}"), "title": pick(1),
                    "cwd": pick(2), "model": pick(3), "endpoint": pick(4), "host": pick(5),
                    "updated_at": t, "expires_at": t + 90.0, "metadata": meta}),
        );
        files.push(file);
    }
    // Secrets that straddle the 1 KiB cut of a field, and the title's 256
    // characters: the cut comes after redaction, so no half token shows.
    // The token formats: secrets recognised without any context.
    let tokens: Vec<&str> = secrets
        .iter()
        .flat_map(|s| &s.parts)
        .map(String::as_str)
        .filter(|p| p.len() >= 20 && redact_text(p).0 == REDACTED)
        .collect();
    assert!(tokens.len() >= 50, "{}", tokens.len());
    for (n, token) in tokens.iter().enumerate() {
        // A word boundary before the token, as its rule needs.
        let pad = format!("{} ", "x".repeat(MAX_STRING_BYTES - REDACTED.len() - 1));
        let straddling = format!("{pad}{token}");
        let file = format!("long-{n}.l{n}.json");
        write_record(
            &w.shared(),
            &file,
            &json!({"version": 1, "session_id": format!("l{n}"), "profile": "default",
                    "client": "long", "endpoint": format!("e{n}"), "cwd": straddling,
                    "title": format!("{} {token}", "t".repeat(249)),
                    "updated_at": t, "expires_at": t + 90.0,
                    "metadata": {"note": straddling}}),
        );
        files.push(file);
    }
    let straddled = |text: &str, what: &str| {
        for token in &tokens {
            let head = &token[..10];
            assert!(
                !text.contains(head),
                "{head:?} (of a cut secret) shown in {what}"
            );
        }
    };

    let out = a.run(&["list", "--json"]).success();
    assert_no_leak(&secrets, "list --json", &out.stdout);
    assert_no_leak(&secrets, "list's stderr", &out.stderr);
    straddled(&out.stdout, "list --json");
    for file in &files {
        assert!(
            out.stderr.contains(file.as_str()),
            "{file} not named: {}",
            out.stderr
        );
    }
    let rows: Vec<JsonRow> = parse_json(&out.stdout, "list --json");
    assert_eq!(rows.len(), files.len() + 1);
    for r in &rows {
        assert!(r.cwd.len() <= MAX_STRING_BYTES && r.title.chars().count() <= 256);
        if r.client == "long" {
            assert!(r.cwd.ends_with(REDACTED), "{}", &r.cwd[1000..]);
            assert!(r.metadata["note"].ends_with(REDACTED));
        }
    }
    let table = a.run(&["list", "--all"]).success();
    assert_no_leak(&secrets, "list's table", &table.stdout);
    straddled(&table.stdout, "list's table");

    // Every record holding corpus lines, and a few of the long ones.
    let sessions: Vec<&str> = rows
        .iter()
        .map(|r| r.session_id.as_str())
        .filter(|id| id.starts_with('r') || ["l0", "l1", "l2"].contains(id))
        .collect();
    assert_eq!(sessions.len(), secrets.len().div_ceil(30) + 3);
    for id in sessions {
        for json in [true, false] {
            let mut args = vec!["show", id];
            if json {
                args.push("--json");
            }
            let out = a.run(&args).success();
            assert_no_leak(&secrets, "show", &out.stdout);
            assert_no_leak(&secrets, "show's stderr", &out.stderr);
            straddled(&out.stdout, "show");
        }
    }

    let out = a.run(&["doctor", "--json"]).success();
    assert_no_leak(&secrets, "doctor", &out.stdout);
    let checks: Vec<JsonCheck> = parse_json(&out.stdout, "doctor --json");
    let found = checks.iter().find(|c| c.check == "secrets").unwrap();
    let message = &found.message;
    for file in &files {
        assert!(
            message.contains(file.as_str()),
            "{file} not named: {message}"
        );
    }
    assert!(!message.contains("mine"), "{message}");
}

#[test]
fn a_credential_shaped_foreign_id_is_shown_redacted() {
    let w = World::new();
    let a = w.device("a");
    let token = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
    let t = now();
    write_record(
        &w.shared(),
        "other.x.json",
        &json!({"version": 1, "session_id": token, "instance_id": token, "profile": "default",
                "updated_at": t, "expires_at": t + 90.0}),
    );
    let out = a.run(&["list", "--json"]).success();
    assert!(!out.stdout.contains(token), "{}", out.stdout);
    let rows: Vec<JsonRow> = parse_json(&out.stdout, "list --json");
    assert_eq!(rows[0].session_id, REDACTED);
    assert_eq!(rows[0].instance_id, REDACTED);
    let table = a.run(&["list"]).success();
    assert!(!table.stdout.contains(token), "{}", table.stdout);
    // `show` finds it by the id as listed, and never prints the token.
    let shown = a.run(&["show", "--json", REDACTED]).success();
    assert!(!shown.stdout.contains(token), "{}", shown.stdout);
    let row: JsonRow = parse_json(&shown.stdout, "show --json");
    assert_eq!(row.file, "other.x.json");
}

/// A file name from the directory that holds a credential is shown
/// redacted wherever human output names it: `show`, the warning of a
/// listing, `list -v`, `doctor`, `expire`. `--json` keeps it exact.
#[test]
fn credential_shaped_file_names_are_redacted_in_human_output() {
    let w = World::new();
    let a = w.device("a");
    let token = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
    let t = now();
    let live = format!("h-{token}.s1.json");
    write_record(
        &w.shared(),
        &live,
        &json!({"version": 1, "session_id": "s1", "profile": "default",
                "title": "DB_PASSWORD=hunter2x", "updated_at": t, "expires_at": t + 90.0}),
    );
    // An ended conflict copy, which `expire` removes and names.
    write_record(
        &w.shared(),
        &format!("h-{token}.s2.sync-conflict-20261130-101112-ABCDEFG.json"),
        &json!({"version": 1, "session_id": "s2", "profile": "default",
                "updated_at": t - 10.0, "expires_at": t + 80.0, "ended_at": t - 5.0}),
    );
    // Not a record: named by `list -v`.
    std::fs::write(w.shared().join(format!("h-{token}.s3.json")), "not json").unwrap();

    let shown = [
        ("list -v", a.run(&["list", "-v"]).success()),
        ("list --all -v", a.run(&["list", "--all", "-v"]).success()),
        ("show", a.run(&["show", "s1"]).success()),
        ("doctor", a.run(&["doctor"])),
        ("expire", a.run(&["expire"]).success()),
    ];
    for (what, out) in &shown {
        let text = format!("{}{}", out.stdout, out.stderr);
        assert!(!text.contains(token), "{what}:\n{text}");
        assert!(text.contains("h-[redacted].s"), "{what}:\n{text}");
    }
    let (_, expire) = &shown[4];
    assert!(
        expire.stdout.contains("removed") && expire.stdout.contains("h-[redacted].s2"),
        "{}",
        expire.stdout
    );
    let row: JsonRow = parse_json(&a.run(&["show", "--json", "s1"]).success().stdout, "show");
    assert_eq!(row.file, live);
}
