//! `presence list`: its filters, `--watch` on a real terminal (tmux) and as
//! JSON, and `--format`'s computed fields.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::harness::*;

/// The session ids `list ARGS` prints, one per line.
fn ids(dev: &Device, args: &[&str]) -> Vec<String> {
    let mut all = vec!["list", "--format", "{session_id}"];
    all.extend(args);
    dev.run(&all)
        .success()
        .stdout
        .lines()
        .map(String::from)
        .collect()
}

/// A record of another device (unsigned), live for ten minutes.
fn other(dir: &std::path::Path, session: &str, host: &str, status: &str) {
    let t = now();
    let json = serde_json::json!({
        "version": 1, "session_id": session, "client": "terminal", "profile": "default",
        "host": host, "status": status, "started_at": t, "updated_at": t,
        "expires_at": t + 600.0,
    });
    write_record(dir, &format!("{host}.{session}.json"), &json);
}

#[test]
fn status_filters_repeat_and_apply_to_every_output() {
    let w = World::new();
    let a = w.device("a");
    a.publish("w1", &["--status", "waiting"]);
    a.publish("k1", &["--status", "working"]);
    a.publish("i1", &["--status", "idle"]);
    a.publish("w2", &["--status", "waiting"]);
    assert_eq!(ids(&a, &["--status", "waiting"]), ["w2", "w1"]);
    assert_eq!(
        ids(&a, &["--status", "waiting", "--status", "working"]),
        ["w2", "k1", "w1"]
    );
    let count = |extra: &[&str]| {
        let mut args = vec!["list", "--count"];
        args.extend(extra);
        a.run(&args).success().stdout
    };
    assert_eq!(count(&["--status", "waiting"]), "2\n");
    assert_eq!(count(&["--status", "idle", "--status", "working"]), "2\n");
    assert_eq!(sessions(&a.list(&["--status", "idle"])), ["i1"]);
    let table = a.run(&["list", "--status", "working"]).success().stdout;
    assert!(
        table.starts_with("SESSION") && table.lines().count() == 2,
        "{table}"
    );
    assert!(table.contains("*k1"), "{table}");

    // And with --watch: a status bar's "2 waiting".
    let s = Stream::start(&a, &["list", "--watch", "--count", "--status", "waiting"]);
    assert_eq!(s.next(), "2");
    a.publish("k1", &["--status", "waiting"]);
    assert_eq!(s.next(), "3");
    a.publish("i1", &["--title", "still idle"]);
    s.quiet_for(Duration::from_millis(700));
    // The next line is the next change of the count (a line for the title
    // would have said 3 first).
    a.publish("k1", &["--status", "idle"]);
    assert_eq!(s.next(), "2");
    let (code, stderr) = s.stop();
    assert_eq!(code, Some(0), "{stderr}");
}

#[test]
fn host_matches_in_any_case() {
    let w = World::new();
    let a = w.device("a");
    other(&w.shared(), "d1", "desktop", "idle");
    other(&w.shared(), "d2", "Desktop", "idle");
    other(&w.shared(), "l1", "laptop", "idle");
    let mut got = ids(&a, &["--host", "DESKTOP"]);
    got.sort();
    assert_eq!(got, ["d1", "d2"]);
    assert_eq!(ids(&a, &["--host", "laptop"]), ["l1"]);
}

/// `--session` takes what `presence open` takes: an id or key, else the
/// start of one; an exact id wins over the ids it starts.
#[test]
fn session_takes_a_prefix_and_an_exact_id_wins() {
    let w = World::new();
    let a = w.device("a");
    a.publish("gw-7f2", &[]);
    a.publish("gw-8a1", &[]);
    a.publish("other", &["--key", "gwkey"]);
    assert_eq!(ids(&a, &["--session", "gw-7"]), ["gw-7f2"]);
    assert_eq!(ids(&a, &["--session", "gw-"]), ["gw-8a1", "gw-7f2"]);
    assert_eq!(ids(&a, &["--session", "gw"]), ["other", "gw-8a1", "gw-7f2"]);
    assert_eq!(ids(&a, &["--session", "gwkey"]), ["other"]);
    a.publish("gw", &[]);
    assert_eq!(ids(&a, &["--session", "gw"]), ["gw"]);
    assert_eq!(sessions(&a.list(&["--session", "gw-8"])), ["gw-8a1"]);
    assert_eq!(
        a.run(&["list", "--count", "--session", "gw-"])
            .success()
            .stdout,
        "2\n"
    );
    let table = a.run(&["list", "--session", "gw-"]).success().stdout;
    assert_eq!(table.lines().count(), 3, "{table}");
    assert_eq!(ids(&a, &["--session", "x"]), Vec::<String>::new());
}

/// A filter that passes nothing while sessions are live says which filter
/// and how to see them, not that nothing is live.
#[test]
fn a_filter_that_matches_nothing_says_so() {
    let w = World::new();
    let a = w.device("a");
    a.publish("s1", &[]);
    a.publish("s2", &[]);
    other(&w.shared(), "d1", "desktop", "idle");
    let out = a.run(&["list", "--host", "nosuch"]).success();
    assert_eq!(out.stdout, "");
    assert_eq!(
        out.stderr,
        "no session matches --host nosuch (3 live: presence list)\n"
    );
    let out = a
        .run(&[
            "list",
            "--status",
            "waiting",
            "--session",
            "s",
            "--sort",
            "host",
        ])
        .success();
    assert_eq!(
        out.stderr,
        "no session matches --session s --status waiting (3 live: presence list)\n"
    );
    let out = a
        .run(&["--profile", "default", "list", "--all", "--client", "a b"])
        .success();
    assert_eq!(
        out.stderr,
        "no session matches --client 'a b' (3 record(s): presence --profile default list --all)\n"
    );
    assert_eq!(
        a.run(&["list", "-q", "--host", "nosuch"]).success().stderr,
        ""
    );
    // Nothing live at all: the profile says so, as before.
    let b = w.bare_device("b");
    let out = b.run(&["list", "--host", "nosuch"]).success();
    assert!(
        out.stderr
            .starts_with("no live sessions in profile 'default'"),
        "{}",
        out.stderr
    );
}

/// `list --watch --json`: one JSON array per change, each on one line, with
/// the rows of `list --json`; a plain refresh prints nothing, and neither
/// does a change of a row the filters leave out.
#[test]
fn list_watch_json_prints_one_array_per_change() {
    let w = World::new();
    let a = w.device("a");
    a.publish("s1", &["--status", "waiting"]);
    let s = Stream::start(&a, &["list", "--watch", "--json", "--status", "waiting"]);
    let first: Vec<JsonRow> = parse_json(&s.next(), "list --watch --json");
    assert_eq!(sessions(&first), ["s1"]);
    assert_eq!(first[0].file, a.list(&[]).remove(0).file);
    a.publish("s2", &["--status", "waiting"]);
    let second: Vec<JsonRow> = parse_json(&s.next(), "list --watch --json");
    assert_eq!(sessions(&second), ["s2", "s1"]);
    a.publish("s1", &[]);
    a.publish("idle", &["--status", "idle"]);
    s.quiet_for(Duration::from_millis(700));
    a.run(&["clear", "--session", "s2"]).success();
    let third: Vec<JsonRow> = parse_json(&s.next(), "list --watch --json");
    assert_eq!(sessions(&third), ["s1"]);
    a.run(&["clear", "--session", "s1"]).success();
    assert_eq!(s.next(), "[]");
    let (code, stderr) = s.stop();
    assert_eq!(code, Some(0), "{stderr}");
}

/// A tmux server of this test's own, stopped whatever happens to the test.
struct Tmux {
    tmux: PathBuf,
    tmpdir: PathBuf,
}

impl Tmux {
    fn new(w: &World) -> Tmux {
        let tmpdir = w.tmp.path().join("tmux");
        std::fs::create_dir_all(&tmpdir).unwrap();
        Tmux {
            tmux: require_tool("tmux"),
            tmpdir,
        }
    }

    /// tmux in `dev`'s environment (a server it starts keeps it).
    fn cmd(&self, dev: &Device) -> Command {
        let mut c = dev.program(&self.tmux);
        c.env("TMUX_TMPDIR", &self.tmpdir)
            .env("TERM", "xterm-256color");
        c
    }

    fn run(&self, dev: &Device, args: &[&str]) -> String {
        String::from_utf8(run_ok(self.cmd(dev).args(args)).stdout).unwrap()
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new(&self.tmux)
            .env("TMUX_TMPDIR", &self.tmpdir)
            .arg("kill-server")
            .stderr(Stdio::null())
            .status();
    }
}

/// `list --watch` in a real 80×12 tmux pane with 25 sessions: the title,
/// the header and the newest rows, then a line that counts the rest; each
/// redraw is made in place (no clearing of the screen after the first);
/// and the shell's next line starts below the last frame.
#[test]
fn list_watch_fits_its_pane_under_a_title() {
    let w = World::new();
    let a = w.device("a");
    for i in 1..=25 {
        a.publish(
            &format!("many-{i}"),
            &["--ttl", "10m", "--title", &format!("row {i}")],
        );
    }
    let tmux = Tmux::new(&w);
    let pid = w.tmp.path().join("watch.pid");
    let raw = w.tmp.path().join("pane.raw");
    let script = format!(
        "presence list --watch & echo $! > {pid}; wait $!; echo \"rc=$?\"; sleep 300",
        pid = pid.display()
    );
    tmux.run(
        &a,
        &[
            "new-session",
            "-d",
            "-s",
            "w",
            "-x",
            "80",
            "-y",
            "12",
            "bash",
            "-c",
            &script,
        ],
    );
    let screen = || tmux.run(&a, &["capture-pane", "-p", "-t", "w"]);
    let (lines, _) = wait_for("the frame", PATIENCE, || {
        let text = screen();
        let lines: Vec<String> = text.lines().map(String::from).collect();
        if lines.last().is_some_and(|l| l.starts_with('…')) {
            Ok(lines)
        } else {
            Err(text)
        }
    });
    assert_eq!(lines.len(), 12, "{lines:#?}");
    assert!(
        lines[0].starts_with("presence list --watch: 25 live in profile 'default' ("),
        "{lines:#?}"
    );
    let clock = lines[0].rsplit(' ').next().unwrap();
    assert!(
        clock.len() == 8 && clock.chars().filter(|&c| c == ':').count() == 2,
        "{lines:#?}"
    );
    assert!(lines[1].starts_with("SESSION "), "{lines:#?}");
    assert!(lines[2].starts_with("*many-25 "), "{lines:#?}");
    assert!(lines[10].starts_with("*many-17 "), "{lines:#?}");
    assert_eq!(lines[11], "… 16 more (presence list)");

    // From now on, what the pane is sent.
    tmux.run(
        &a,
        &[
            "pipe-pane",
            "-O",
            "-t",
            "w",
            &format!("cat > {}", raw.display()),
        ],
    );
    a.publish("many-26", &["--ttl", "10m"]);
    wait_for("the new row on top", PATIENCE, || {
        let text = screen();
        if text
            .lines()
            .nth(2)
            .is_some_and(|l| l.starts_with("*many-26 "))
            && text.contains("… 17 more (presence list)")
        {
            Ok(())
        } else {
            Err(text)
        }
    });
    let sent = || std::fs::read(&raw).unwrap_or_default();
    wait_for("a redraw after the new row", PATIENCE, || {
        let n = sent().windows(3).filter(|w| w == b"\x1b[H").count();
        if n >= 2 { Ok(()) } else { Err(n) }
    });
    let sent = sent();
    assert!(
        !sent.windows(4).any(|w| w == b"\x1b[2J"),
        "the screen was cleared: {:?}",
        String::from_utf8_lossy(&sent)
    );

    let pid = std::fs::read_to_string(&pid).unwrap();
    assert!(kill("-TERM", &[pid.trim()]));
    let (text, _) = wait_for("the shell after list --watch", PATIENCE, || {
        let text = screen();
        if text.contains("rc=") {
            Ok(text)
        } else {
            Err(text)
        }
    });
    let lines: Vec<&str> = text.lines().collect();
    let rc = lines.iter().position(|l| l.starts_with("rc=")).unwrap();
    assert_eq!(lines[rc], "rc=0", "{text}");
    assert!(lines[rc - 1].starts_with("… 17 more"), "{text}");
}

/// `--format` takes every field `list --json` has, `{open}` (the command
/// line `open --print` prints) and `{open_error}` included, and the
/// table's times as the table shows them.
#[test]
fn format_takes_open_and_the_tables_times() {
    let w = World::new();
    let a = w.device("a");
    a.publish("t1", &["--endpoint", "tmux://desk-far/work"]);
    a.publish("none", &[]);
    let printed = a.run(&["open", "t1", "--print"]).success().stdout;
    let out = a
        .run(&[
            "list",
            "--format",
            "{session_id}|{open}|{open_error}|{up}|{seen}|{expires}",
        ])
        .success()
        .stdout;
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    let none: Vec<&str> = lines[0].split('|').collect();
    assert_eq!(
        &none[..3],
        [
            "none",
            "",
            "the session has no endpoint to open (its publisher set none)"
        ]
    );
    let t1: Vec<&str> = lines[1].split('|').collect();
    assert_eq!(format!("{}\n", t1[1]), printed);
    assert_eq!(t1[2], "");
    assert!(t1[3].ends_with('s'), "{out}");
    assert!(t1[4].ends_with("s ago"), "{out}");
    // Some seconds of the 90 s ttl may have gone by on a loaded machine.
    assert!(
        t1[5].starts_with("in ") && t1[5].ends_with('s') && t1[5] != "in 0s",
        "{out}"
    );
    let err = a.run(&["list", "--format", "{upp}"]).code(2).stderr;
    assert!(
        err.contains("open, open_error") && err.contains("times: up, seen, expires"),
        "{err}"
    );
}
