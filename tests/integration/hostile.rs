//! Hostile directory contents: the listing finishes (it never hangs), lists the good
//! records, and reports the bad ones under --verbose.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::symlink;
use std::process::Stdio;

use serde_json::json;

use crate::harness::*;

#[test]
fn hostile_entries_never_hang_or_break_a_listing() {
    let w = World::new();
    let a = w.device("a");
    a.publish("good", &["--title", "fine"]);
    let dir = w.shared();
    let t = now();

    mkfifo(&dir.join("fifo.json"));
    let _socket = std::os::unix::net::UnixListener::bind(dir.join("sock.json")).unwrap();
    symlink("/etc/passwd", dir.join("passwd.json")).unwrap();
    symlink("/dev/zero", dir.join("zero.json")).unwrap();
    symlink("/nonexistent/target", dir.join("dangling.json")).unwrap();
    symlink(dir.join("loop.json"), dir.join("loop.json")).unwrap();
    symlink("/tmp", dir.join("tmpdir.json")).unwrap();
    let good_copy = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().contains(".good."))
        .unwrap();
    symlink(&good_copy, dir.join("link-to-good.json")).unwrap();
    std::fs::create_dir(dir.join("subdir.json")).unwrap();
    std::fs::write(dir.join("big.json"), vec![b' '; 10 * 1024 * 1024]).unwrap();
    let sparse = std::fs::File::create(dir.join("sparse.json")).unwrap();
    sparse.set_len(100 * 1024 * 1024).unwrap();
    std::fs::write(dir.join("empty.json"), "").unwrap();
    std::fs::write(
        dir.join("truncated.json"),
        r#"{"session_id": "t", "updated_"#,
    )
    .unwrap();
    std::fs::write(dir.join("array.json"), "[1,2,3]").unwrap();
    std::fs::write(
        dir.join("deep.json"),
        format!("{}{}", "[".repeat(30_000), "]".repeat(30_000)),
    )
    .unwrap();
    std::fs::write(
        dir.join("deep-field.json"),
        format!(
            "{{\"session_id\":{}{}}}",
            "[".repeat(30_000),
            "]".repeat(30_000)
        ),
    )
    .unwrap();
    std::fs::write(dir.join("binary.json"), b"\xff\xfe\x00garbage").unwrap();
    std::fs::write(
        dir.join("future.json"),
        json!({"version": 2, "session_id": "v2"}).to_string(),
    )
    .unwrap();
    std::fs::write(
        dir.join(OsStr::from_bytes(b"bad-\xff-name.json")),
        json!({"session_id": "badname", "profile": "default", "updated_at": t, "expires_at": t + 90.0}).to_string(),
    )
    .unwrap();
    // Tolerated oddities that still make a record.
    std::fs::write(
        dir.join("bom.json"),
        format!("\u{feff}{}", json!({"session_id": "bom", "profile": "default", "updated_at": t, "expires_at": t + 90.0})),
    )
    .unwrap();
    std::fs::write(
        dir.join("strings.json"),
        json!({"session_id": "strtimes", "profile": "default", "updated_at": t.to_string(),
               "expires_at": (t + 90.0).to_string(), "pid": "nope", "metadata": [1]})
        .to_string(),
    )
    .unwrap();
    std::fs::write(
        dir.join("huge-num.json"),
        r#"{"session_id":"huge","profile":"default","updated_at":1e999}"#,
    )
    .unwrap();
    // A 10 MiB string field, and metadata with 100 000 keys: too large.
    std::fs::write(
        dir.join("bigstring.json"),
        format!(
            r#"{{"session_id":"big","title":"{}"}}"#,
            "x".repeat(10 << 20)
        ),
    )
    .unwrap();
    let keys: Vec<String> = (0..100_000).map(|i| format!("\"k{i}\":\"v\"")).collect();
    std::fs::write(
        dir.join("manykeys.json"),
        format!(
            r#"{{"session_id":"many","metadata":{{{}}}}}"#,
            keys.join(",")
        ),
    )
    .unwrap();
    // Odd numbers and times that still make a record, never a live one.
    std::fs::write(
        dir.join("odd-numbers.json"),
        format!(
            r#"{{"session_id":"odd","profile":"default","seq":-0,"pid":184467440737095516150,
               "updated_at":{},"expires_at":{},"owner_start":1e300}}"#,
            t - 400.0,
            t - 390.0
        ),
    )
    .unwrap();
    std::fs::write(
        dir.join("absurd-ttl.json"),
        json!({"session_id": "absurd", "profile": "default", "updated_at": t - 4000.0,
               "expires_at": t + 1e12})
        .to_string(),
    )
    .unwrap();
    std::fs::write(
        dir.join("negative-ttl.json"),
        json!({"session_id": "negative", "profile": "default", "updated_at": t - 400.0,
               "expires_at": t - 450.0})
        .to_string(),
    )
    .unwrap();
    std::fs::write(dir.join(".hidden.json"), "{}").unwrap();
    std::fs::write(dir.join(".good.json.123.abc.tmp"), "{").unwrap();
    std::fs::write(dir.join("notes.txt"), "hello").unwrap();

    let out = run_bounded(&a, &["-v", "list", "--json"]).success();
    let rows: Vec<JsonRow> = parse_json(&out.stdout, "list --json");
    let mut got = sessions(&rows);
    got.sort();
    // `absurd` claims a 30-year ttl (clamped to 1 h) and arrived just now:
    // live until an hour after arrival, as the rule says. `negative` has
    // expires_at < updated_at: a ttl of 1 s, long past. `odd` parses
    // (an out-of-range pid reads as missing) and is expired.
    assert_eq!(got, ["absurd", "bom", "good", "strtimes"]);
    let stderr = &out.stderr;
    for (file, reason) in [
        ("fifo.json", "FIFO"),
        ("sock.json", "socket"),
        ("passwd.json", "symbolic link"),
        ("zero.json", "symbolic link"),
        ("dangling.json", "symbolic link"),
        ("loop.json", "symbolic link"),
        ("tmpdir.json", "symbolic link"),
        ("link-to-good.json", "symbolic link"),
        ("subdir.json", "directory"),
        ("big.json", "larger than"),
        ("sparse.json", "larger than"),
        ("empty.json", "not a JSON record"),
        ("truncated.json", "not a JSON record"),
        ("array.json", "not a JSON record"),
        ("deep.json", "not a JSON record"),
        ("deep-field.json", "no session_id"),
        ("binary.json", "not a JSON record"),
        ("future.json", "unknown schema version 2"),
        ("huge-num.json", "not a JSON record"),
        ("bigstring.json", "larger than"),
        ("manykeys.json", "larger than"),
        ("bad-\u{FFFD}-name.json", "not valid UTF-8"),
        (".good.json.123.abc.tmp", "temp file"),
    ] {
        let line = stderr
            .lines()
            .find(|l| l.contains(&format!("skipped {file}:")))
            .unwrap_or_else(|| panic!("{file} not reported:\n{stderr}"));
        assert!(line.contains(reason), "{file}: {line}");
    }
    assert!(
        !stderr.contains("hidden.json") && !stderr.contains("notes.txt"),
        "{stderr}"
    );
    // Nothing read /etc/passwd into the output.
    assert!(!out.stdout.contains("root:"));
    // Without -v the listing is quiet about them.
    let quiet = a.run(&["list", "--json"]).success();
    assert!(quiet.stderr.is_empty(), "{}", quiet.stderr);
    // clear and expire leave all of them alone (a dry run names what expire
    // would delete: none of the hostile entries).
    a.run(&["clear", "--session", "good"]).success();
    let dry = a.run(&["expire", "--dry-run"]).success().stdout;
    let before: std::collections::BTreeSet<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    a.run(&["expire"]).success();
    let after: std::collections::BTreeSet<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    let removed: Vec<String> = before
        .difference(&after)
        .map(|n| n.to_string_lossy().into_owned())
        .collect();
    // Only expired records that parse (dead past gc_after or ours) may go,
    // and the dry run said so beforehand.
    for name in &removed {
        assert!(
            dry.contains(name.as_str()),
            "{name} removed without being announced:\n{dry}"
        );
        assert!(
            ["negative-ttl.json", "odd-numbers.json", "future.json"].contains(&name.as_str())
                || name.ends_with(".good.json"),
            "expire removed {name}"
        );
    }
    assert!(std::path::Path::new("/etc/passwd").exists());
    assert!(
        dir.join("passwd.json")
            .symlink_metadata()
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(
        std::fs::metadata(dir.join("big.json")).unwrap().len(),
        10 * 1024 * 1024
    );
}

#[test]
fn a_file_that_is_exactly_at_the_limit_is_read() {
    let w = World::new();
    let a = w.device("a");
    let t = now();
    let mut text = json!({"session_id": "edge", "profile": "default", "updated_at": t,
                          "expires_at": t + 90.0})
    .to_string();
    let pad = 64 * 1024 - text.len() - 1;
    text.insert_str(
        text.len() - 1,
        &format!(",\"pad\":\"{}\"", "x".repeat(pad - 9)),
    );
    assert_eq!(text.len(), 64 * 1024 - 1);
    std::fs::create_dir_all(w.shared()).unwrap();
    std::fs::write(w.shared().join("edge.json"), &text).unwrap();
    assert_eq!(sessions(&a.list(&[])), ["edge"]);
}

/// Runs `presence` with `args`, its output read as it comes; fails the
/// test, killing it, if it has not finished within `PATIENCE`: a hang, on
/// any machine.
fn run_bounded(d: &Device, args: &[&str]) -> Run {
    let child = d
        .cmd()
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id().to_string();
    let (tx, done) = std::sync::mpsc::channel();
    std::thread::spawn(move || tx.send(child.wait_with_output()));
    let Ok(out) = done.recv_timeout(PATIENCE) else {
        kill("-KILL", &[&pid]);
        panic!("{args:?} hung: not finished within {PATIENCE:?}");
    };
    let out = out.unwrap();
    Run {
        args: args.iter().map(|s| s.to_string()).collect(),
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

#[test]
fn a_config_that_is_a_fifo_or_a_device_is_an_error_not_a_hang() {
    let w = World::new();
    let a = w.device("a");
    let fifo = w.tmp.path().join("config-fifo.toml");
    mkfifo(&fifo);
    let fifo = fifo.to_str().unwrap();
    for (path, what) in [(fifo, "a FIFO"), ("/dev/zero", "a device")] {
        for command in [&["list"][..], &["doctor"], &["config", "show"]] {
            let mut args = vec!["--config", path];
            args.extend_from_slice(command);
            let out = run_bounded(&a, &args).code(1);
            let text = format!("{}{}", out.stdout, out.stderr);
            assert!(
                text.contains(path) && text.contains(what) && text.contains("regular TOML file"),
                "{args:?}: {text}"
            );
        }
    }
}

#[test]
fn the_root_home_and_system_dirs_are_refused() {
    let w = World::new();
    let a = w.bare_device("a");
    let home = a.root.join("home");
    std::fs::create_dir_all(&home).unwrap();
    symlink("/", home.join("link")).unwrap();
    let out = a.run(&["--dir", "/", "expire"]).code(2);
    assert!(
        out.stderr.contains("refusing / as the presence directory") && out.stderr.contains("--dir"),
        "{}",
        out.stderr
    );
    a.run(&["--dir", "/usr/./", "list"]).code(2);
    a.run(&["--dir", "/etc/..", "publish", "--session", "s"])
        .code(2);
    let home_dir = home.to_str().unwrap();
    a.run(&["--dir", &format!("{home_dir}/"), "list"]).code(2);
    a.write_config("[profiles.default]\ndir = \"~/link\"\n");
    let out = a.run(&["expire"]).code(1);
    assert!(
        out.stderr.contains("resolves to /") && out.stderr.contains("config.toml"),
        "{}",
        out.stderr
    );
    let doctor = a.run(&["doctor"]).code(1);
    assert!(doctor.stdout.contains("refusing"), "{}", doctor.stdout);
    assert!(!doctor.stdout.contains("chmod"), "{}", doctor.stdout);
}

#[test]
fn a_configured_symlinked_dir_works_for_publish_list_and_expire() {
    let w = World::new();
    let a = w.bare_device("a");
    let real = w.tmp.path().join("real-sync");
    std::fs::create_dir_all(real.join("presence")).unwrap();
    let home = a.root.join("home");
    std::fs::create_dir_all(&home).unwrap();
    symlink(&real, home.join("Sync")).unwrap();
    a.write_config(
        "[profiles.default]\ndir = \"~/Sync/presence\"\nskew = \"0s\"\ngc_after = \"0s\"\n",
    );
    a.publish("s1", &[]);
    assert_eq!(sessions(&a.list(&[])), ["s1"]);
    let t = now();
    write_record(
        &real.join("presence"),
        "other.old.json",
        &json!({"session_id": "old", "profile": "default", "updated_at": t - 1000.0,
                "expires_at": t - 910.0}),
    );
    let files = |dir: &std::path::Path| -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        v.sort();
        v
    };
    assert_eq!(files(&real.join("presence")).len(), 2);
    let out: JsonExpire = a.json(&["expire", "--json"]);
    let removed: Vec<&str> = out.removed.iter().map(|g| g.file.as_str()).collect();
    assert_eq!(removed, ["other.old.json"]);
    let left = files(&real.join("presence"));
    assert_eq!(left.len(), 1);
    assert!(left[0].ends_with(".s1.json"), "{left:?}");
    assert!(
        home.join("Sync")
            .symlink_metadata()
            .unwrap()
            .file_type()
            .is_symlink()
    );
}

/// A record of another label planted at this device's own file name, live or
/// dead, with another device's id: `publish` replaces it (with a warning) and
/// `run` starts its command.
#[test]
fn a_record_planted_at_this_devices_file_name_never_stops_publish_or_run() {
    let w = World::new();
    let a = w.device("a");
    a.publish("mine", &[]);
    let dir = w.shared();
    let own = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .find(|n| n.ends_with(".mine.json"))
        .unwrap();
    for live in [true, false] {
        let t = now();
        let planted = serde_json::json!({
            "version": 1, "session_id": "mine", "profile": "intruder",
            "device_id": "ffffffffffffffffffffffffffffffff",
            "updated_at": t, "expires_at": if live { t + 90.0 } else { t - 10.0 },
        });
        write_record(&dir, &own, &planted);
        let out = a.publish("mine", &["--title", "back"]);
        assert!(out.stderr.contains("replaced"), "{}", out.stderr);
        let rows = a.list(&[]);
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].title, "back");
        assert_eq!(rows[0].profile, "default");

        write_record(&dir, &own, &planted);
        let marker = w.tmp.path().join(format!("ran-{live}"));
        a.run(&[
            "run",
            "--session",
            "mine",
            "--",
            "touch",
            marker.to_str().unwrap(),
        ])
        .success();
        assert!(marker.exists(), "run did not start its command");
    }
}

/// `clear` writes a tombstone whose `expires_at` lies the skew tolerance
/// before `ended_at`, so a reader that only filters on `expires_at > now`
/// (Hermes) hides it even with a clock that far behind; and a Hermes record
/// labelled `""` and ours labelled `default` on one endpoint are one group.
#[test]
fn tombstones_hide_from_expires_at_readers_and_empty_label_is_default() {
    let w = World::new();
    let a = w.device("a");
    a.publish("s", &["--endpoint", "tmux://h/x"]);
    a.run(&["clear", "--session", "s"]).success();
    let file = std::fs::read_dir(w.shared())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(".s.json"))
        .unwrap();
    let r: JsonRecord = parse_json(&std::fs::read_to_string(&file).unwrap(), "a tombstone");
    let (ended, expires) = (r.ended_at.unwrap(), r.expires_at.unwrap());
    assert!(expires <= ended - 300.0, "ended {ended}, expires {expires}");

    // One group: the newer of the two wins, whatever the label's spelling.
    let t = now();
    for (file, label, at) in [("h.old.json", "", t - 5.0), ("h.new.json", "default", t)] {
        write_record(
            &w.shared(),
            file,
            &serde_json::json!({
                "version": 1, "session_id": file, "profile": label, "client": "cli",
                "endpoint": "ssh://h/y", "updated_at": at, "expires_at": at + 90.0,
            }),
        );
    }
    let rows = a.list(&[]);
    assert_eq!(sessions(&rows), ["h.new.json"]);
}

/// A record whose id, host and title carry escape sequences shows them
/// escaped exactly once (`\e`, never the byte, never `\\e`) in every human
/// output: the table, show, devices, watch, clear's message and errors.
#[test]
fn hostile_fields_are_escaped_once_in_every_human_output() {
    let w = World::new();
    let a = w.device("a");
    let t = now();
    let id = "s\x1b[31mred";
    write_record(
        &w.shared(),
        "planted.json",
        &json!({
            "version": 1, "session_id": id, "session_key": id, "status": "idle",
            "title": "t\x1b]0;pwned\x07", "host": "h\x1b[2J", "client": "c",
            "instance_id": "i", "device_id": "d\x1b[1mdevice", "profile": "default",
            "updated_at": t, "expires_at": t + 90.0, "started_at": t,
        }),
    );
    let clean = |what: &str, text: &str, shown: &[&str]| {
        assert!(
            !text.contains('\x1b') && !text.contains('\x07'),
            "{what}: {text:?}"
        );
        assert!(!text.contains("\\\\e"), "{what} escaped twice: {text:?}");
        for s in shown {
            assert!(text.contains(s), "{what}: no {s:?} in {text:?}");
        }
    };
    let list = a.run(&["list"]).success();
    clean(
        "list",
        &list.stdout,
        &["s\\e[31mred", "h\\e[2J", "t\\e]0;pwned\\x07"],
    );
    let show = a.run(&["show", id]).success();
    clean(
        "show",
        &show.stdout,
        &["s\\e[31mred", "h\\e[2J", "t\\e]0;pwned\\x07"],
    );
    let devices = a.run(&["devices"]).success();
    clean("devices", &devices.stdout, &["d\\e[1md", "h\\e[2J"]);
    let missing = a.run(&["show", "x\x1b[31m"]);
    clean("show's error", &missing.stderr, &["x\\e[31m"]);
    let open = a.run(&["open", "--print", "s\x1b"]);
    clean("open's error", &open.stderr, &["s\\e"]);
    let clear = a.run(&["clear", "--session", id]).success();
    clean("clear", &clear.stderr, &["s\\e[31mred"]);
    // Watch until its initial set is out (`ready`), then stop it.
    let mut watch = a
        .program(require_tool("timeout"))
        .args(["-s", "TERM", "600"])
        .arg(env!("CARGO_BIN_EXE_presence"))
        .arg("watch")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = String::new();
    for line in std::io::BufRead::lines(std::io::BufReader::new(watch.stdout.take().unwrap())) {
        let line = line.unwrap();
        out.push_str(&line);
        out.push('\n');
        if line.contains(" ready ") {
            break;
        }
    }
    assert!(kill("-TERM", &[&watch.id().to_string()]), "stop watch");
    watch.wait().unwrap();
    clean(
        "watch",
        &out,
        &["s\\e[31mred", "c@h\\e[2J", "t\\e]0;pwned\\x07"],
    );
}
