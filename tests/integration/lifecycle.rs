//! Lifecycle end to end: run, refresh, expire, and a multi-process stress test.

use std::collections::HashMap;
use std::process::{Child, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::harness::*;

/// A process that stays alive until killed (an owner for records).
struct Owner(Child);

impl Owner {
    fn start() -> Self {
        Owner(
            std::process::Command::new(require_tool("sleep"))
                .arg("3600")
                .spawn()
                .unwrap(),
        )
    }
    fn pid(&self) -> String {
        self.0.id().to_string()
    }
    fn kill(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Drop for Owner {
    fn drop(&mut self) {
        self.kill();
    }
}

fn signal(pid: u32, sig: &str) {
    assert!(kill(sig, &[&pid.to_string()]), "kill {sig} {pid}");
}

#[test]
fn run_lists_while_the_command_runs_and_passes_its_status_through() {
    let w = World::new();
    let a = w.device("a");
    let marker = w.tmp.path().join("go");
    let script = format!(
        "while [ ! -e {} ]; do sleep 0.02; done; exit 7",
        marker.display()
    );
    let mut child = a
        .cmd()
        .args([
            "run",
            "--session",
            "wrapped",
            "--title",
            "T",
            "--",
            "sh",
            "-c",
            &script,
        ])
        .spawn()
        .unwrap();
    wait_until("the wrapped session to be listed", PATIENCE, || {
        sessions(&a.list(&[])) == ["wrapped"]
    });
    let row = a.list(&[]).remove(0);
    assert_eq!(row.title, "T");
    // The owner is the wrapped command, not the wrapper.
    assert_ne!(row.pid, child.id());
    assert!(row.owner_start.is_some());
    std::fs::write(&marker, "").unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(7));
    // Gone right after, as a tombstone.
    assert!(a.list(&[]).is_empty());
    assert_eq!(a.list(&["--include-expired"])[0].state, "ended");
}

#[test]
fn run_reports_a_signal_death_as_128_plus_the_signal() {
    let w = World::new();
    let a = w.device("a");
    a.run(&["run", "--session", "s", "--", "sh", "-c", "kill -TERM $$"])
        .code(143);
    assert!(a.list(&[]).is_empty());
    a.run(&["run", "--session", "s", "--", "/nonexistent/program"])
        .code(127);
    a.run(&["run", "--session", "s"]).code(2);
}

#[test]
fn run_forwards_sigterm_from_another_process_and_clears() {
    let w = World::new();
    let a = w.device("a");
    let ready = w.tmp.path().join("ready");
    let trap = format!(
        "trap 'exit 42' TERM; echo > {}; while :; do sleep 0.05; done",
        ready.display()
    );
    let mut child = a
        .cmd()
        .args(["run", "--session", "fw", "--", "sh", "-c", &trap])
        .spawn()
        .unwrap();
    // Listed, and the command's trap is set: a TERM before it would end
    // the shell with 143 instead.
    wait_until("the session to be listed", PATIENCE, || {
        a.list(&[]).len() == 1
    });
    read_when_written(&ready);
    signal(child.id(), "-TERM");
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(42), "the child's own exit status");
    assert!(a.list(&[]).is_empty());
}

/// The state letter of process `pid` (`T`: stopped), if it exists.
fn proc_state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat[stat.rfind(')')? + 1..].trim_start().chars().next()
}

/// The parent of process `pid`.
fn parent_of(pid: u32) -> u32 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let rest = &stat[stat.rfind(')').unwrap() + 1..];
    rest.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// Reads a file the command writes, once it is complete (ends in a newline).
fn read_when_written(path: &std::path::Path) -> String {
    let mut text = String::new();
    wait_until(
        &format!("{} to be written", path.display()),
        PATIENCE,
        || {
            text = std::fs::read_to_string(path).unwrap_or_default();
            text.ends_with('\n')
        },
    );
    text
}

#[test]
fn run_gives_its_command_its_record_and_publishes_it_working() {
    let w = World::new();
    let a = w.device("a");
    let (env, go) = (w.tmp.path().join("env"), w.tmp.path().join("go"));
    let script = format!(
        "env > {}.tmp && mv {0}.tmp {0}; while [ ! -e {} ]; do sleep 0.02; done",
        env.display(),
        go.display()
    );
    let mut wrapper = a
        .cmd()
        .args(["run", "--session", "envs", "--", "sh", "-c", &script])
        .spawn()
        .unwrap();
    let env = read_when_written(&env);
    let vars: HashMap<&str, &str> = env
        .lines()
        .filter_map(|l| l.split_once('='))
        .filter(|(k, _)| k.starts_with("PRESENCE_"))
        .collect();
    // The command starts under the record's lock, before the record is
    // written: it may be running before the session is listed.
    let (row, _) = wait_for("the session to be listed", PATIENCE, || {
        let mut rows = a.list(&[]);
        if rows.len() == 1 {
            Ok(rows.remove(0))
        } else {
            Err(rows)
        }
    });
    assert_eq!(row.status, "working", "run's default status");
    let shared = w.shared().display().to_string();
    let want = HashMap::from([
        ("PRESENCE_SESSION", "envs"),
        ("PRESENCE_INSTANCE", row.instance_id.as_str()),
        ("PRESENCE_PROFILE", "default"),
        ("PRESENCE_DIR", shared.as_str()),
    ]);
    assert_eq!(vars, want);
    std::fs::write(&go, "").unwrap();
    assert_eq!(wrapper.wait().unwrap().code(), Some(0));
    assert!(a.list(&[]).is_empty());
}

#[test]
fn a_bare_publish_inside_run_updates_the_same_record() {
    // A named profile from a named config file, and a one-off --dir: the
    // command's own `presence` must find all three from its environment.
    let w = World::new();
    let a = w.bare_device("a");
    let config = w.tmp.path().join("elsewhere.toml");
    let home = w.tmp.path().join("home-dir");
    std::fs::create_dir(&home).unwrap();
    std::fs::write(
        &config,
        format!(
            "[profiles.work]\nttl = \"60s\"\n[profiles.home]\ndir = {:?}\n",
            home.display().to_string()
        ),
    )
    .unwrap();
    let dir = w.tmp.path().join("one-off");
    let (listed, other) = (
        w.tmp.path().join("listed.json"),
        w.tmp.path().join("other.json"),
    );
    // Another profile named inside lists its own directory, not the run's.
    let script = format!(
        "presence publish --status waiting --meta step=2 >/dev/null && \
         presence list --json > {} && presence --profile home list --json > {}",
        listed.display(),
        other.display()
    );
    let dir_arg = dir.display().to_string();
    let config_arg = config.display().to_string();
    let args = [
        "--config",
        &config_arg,
        "--profile",
        "work",
        "--dir",
        &dir_arg,
        "run",
        "--session",
        "inner",
        "--title",
        "T",
        "--meta",
        "step=1",
        "--",
        "sh",
        "-c",
        &script,
    ];
    let out = a.run(&args).success();
    assert!(out.stderr.is_empty(), "{}", out.stderr);
    let rows: Vec<JsonRow> = parse_json(&std::fs::read_to_string(&listed).unwrap(), "list");
    assert_eq!(rows.len(), 1, "{rows:?}");
    let r = &rows[0];
    assert_eq!(
        (r.session_id.as_str(), r.status.as_str(), r.title.as_str()),
        ("inner", "waiting", "T")
    );
    assert_eq!(r.metadata["step"], "2");
    assert_eq!(r.profile, "work");
    assert!(r.local);
    let other: Vec<JsonRow> = parse_json(&std::fs::read_to_string(&other).unwrap(), "list");
    assert!(other.is_empty(), "{other:?}");
    // One record, in the one-off directory, ended with the command.
    let files: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
    assert_eq!(files.len(), 1);
    assert!(!a.default_dir().exists());
}

/// Gives `dev` a profile whose records are refreshed every 100 ms but live
/// for the default ttl: `run` refreshes often, and no wait of a loaded
/// machine lets a record expire.
/// Inside `run`, stdout is the wrapped command's own output: a bare
/// publish (a status update) prints nothing there, `-v` says it on stderr,
/// and `--json`, asked for, is still on stdout. A publish that names its
/// session says so as anywhere.
#[test]
fn a_bare_publish_inside_run_keeps_the_commands_stdout_its_own() {
    let w = World::new();
    let a = w.device("a");
    let script = "presence publish --status waiting --title inner && echo built && \
                  presence -v publish --status working && \
                  presence publish --title J --json | grep -c '\"title\": \"J\"' && \
                  presence publish --session other --title O";
    let out = a
        .run(&["run", "--session", "b", "--", "sh", "-c", script])
        .success();
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{}", out.stdout);
    assert_eq!(&lines[..2], ["built", "1"], "{}", out.stdout);
    assert!(lines[2].starts_with("published other ("), "{}", out.stdout);
    let said: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(said.len(), 1, "{}", out.stderr);
    assert!(
        said[0].starts_with("presence: published b ("),
        "{}",
        out.stderr
    );
}

fn refresh_often(w: &World, dev: &Device) {
    dev.write_config(&format!(
        "[profiles.default]\ndir = {:?}\nrefresh_interval = \"100ms\"\n",
        w.shared().display().to_string()
    ));
}

#[test]
fn a_bare_clear_inside_run_ends_its_record() {
    let w = World::new();
    let a = w.device("a");
    refresh_often(&w, &a);
    let (cleared, go) = (w.tmp.path().join("cleared"), w.tmp.path().join("go"));
    let script = format!(
        "presence clear && echo > {}; while [ ! -e {} ]; do sleep 0.02; done",
        cleared.display(),
        go.display()
    );
    let wrapper = a
        .cmd()
        .args(["run", "--session", "c", "--", "sh", "-c", &script])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    read_when_written(&cleared);
    // Ended while its command still runs, and the wrapper does not bring it
    // back in the refreshes it would make meanwhile (it ends it again when
    // the command exits, so this is looked at before).
    assert_eq!(a.show("c").state, "ended");
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(a.show("c").state, "ended", "the wrapper brought it back");
    std::fs::write(&go, "").unwrap();
    let out = wrapper.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
    // Like a bare publish, a bare clear says nothing into the command's
    // stdout.
    assert_eq!(String::from_utf8_lossy(&out.stdout), "");
    assert_eq!(a.show("c").state, "ended");
}

#[test]
fn a_status_the_command_sets_survives_runs_refresh() {
    let w = World::new();
    let a = w.device("a");
    refresh_often(&w, &a);
    let (set, go) = (w.tmp.path().join("set"), w.tmp.path().join("go"));
    let script = format!(
        "presence publish --status waiting >/dev/null && echo > {}; \
         while [ ! -e {} ]; do sleep 0.02; done",
        set.display(),
        go.display()
    );
    let mut wrapper = a
        .cmd()
        .args([
            "run",
            "--session",
            "kept",
            "--title",
            "T",
            "--meta",
            "k=v",
            "--",
            "sh",
            "-c",
            &script,
        ])
        .spawn()
        .unwrap();
    read_when_written(&set);
    let after_set = a.show("kept");
    assert_eq!(after_set.status, "waiting");
    wait_until("two refreshes by the wrapper", PATIENCE, || {
        a.show("kept").seq >= after_set.seq + 2
    });
    let row = a.show("kept");
    assert_eq!(
        row.status, "waiting",
        "the wrapper's refresh undid the status"
    );
    assert_eq!((row.title.as_str(), row.metadata["k"].as_str()), ("T", "v"));
    assert_eq!(row.started_at, after_set.started_at);
    assert!(row.live);
    std::fs::write(&go, "").unwrap();
    assert_eq!(wrapper.wait().unwrap().code(), Some(0));
    assert_eq!(a.show("kept").state, "ended");
}

#[test]
fn a_command_that_cannot_start_is_never_published() {
    use std::os::unix::fs::PermissionsExt;
    let w = World::new();
    let a = w.device("a");
    std::fs::create_dir_all(w.shared()).unwrap();
    let plain = w.tmp.path().join("not-executable");
    std::fs::write(&plain, "#!/bin/sh\n").unwrap();
    std::fs::set_permissions(&plain, std::fs::Permissions::from_mode(0o644)).unwrap();
    let plain = plain.display().to_string();
    let dir = w.tmp.path().display().to_string();
    for (program, code) in [
        ("no-such-command-anywhere", 127),
        ("/nonexistent/program", 127),
        (plain.as_str(), 126),
        (dir.as_str(), 126),
    ] {
        let out = a
            .run(&[
                "run",
                "--session",
                "never",
                "--title",
                "T",
                "--",
                program,
                "x",
            ])
            .code(code);
        assert!(
            out.stderr.contains(&format!("cannot run '{program}'"))
                && out.stderr.contains("nothing was published"),
            "{}",
            out.stderr
        );
        if code == 127 {
            assert!(out.stderr.contains("command not found"), "{}", out.stderr);
        }
        let files: Vec<_> = std::fs::read_dir(w.shared()).unwrap().collect();
        assert!(files.is_empty(), "{program}: written {files:?}");
    }
    assert!(a.list(&["--all"]).is_empty());
}

#[test]
fn run_forwards_catchable_signals_and_survives_them() {
    let w = World::new();
    let a = w.device("a");
    let (log, ready, go) = (
        w.tmp.path().join("log"),
        w.tmp.path().join("ready"),
        w.tmp.path().join("go"),
    );
    const SIGNALS: [&str; 9] = [
        "USR1", "USR2", "HUP", "INT", "QUIT", "ALRM", "WINCH", "CONT", "URG",
    ];
    let mut script = String::new();
    for s in SIGNALS {
        script += &format!("trap 'echo {s} >> {}' {s}; ", log.display());
    }
    script += &format!(
        "echo > {}; while [ ! -e {} ]; do sleep 0.02; done",
        ready.display(),
        go.display()
    );
    // With SIGINT and SIGQUIT at their defaults, whatever started the
    // tests: a wrapper keeps a signal ignored on entry ignored, and a
    // shell ignores those two for the commands it starts in the background.
    let mut wrapper = a
        .program(require_tool("env"))
        .arg("--default-signal=INT,QUIT")
        .arg(env!("CARGO_BIN_EXE_presence"))
        .args(["run", "--session", "sig", "--", "sh", "-c", &script])
        .spawn()
        .unwrap();
    read_when_written(&ready);
    for (i, s) in SIGNALS.iter().enumerate() {
        signal(wrapper.id(), &format!("-{s}"));
        wait_until(&format!("the command to get SIG{s}"), PATIENCE, || {
            let got = std::fs::read_to_string(&log).unwrap_or_default();
            got.lines().nth(i) == Some(*s)
        });
        assert!(
            wrapper.try_wait().unwrap().is_none(),
            "SIG{s} ended the wrapper"
        );
    }
    assert_eq!(sessions(&a.list(&[])), ["sig"]);
    std::fs::write(&go, "").unwrap();
    assert_eq!(wrapper.wait().unwrap().code(), Some(0));
    // Each signal reached the command once: none twice, none lost.
    let got = std::fs::read_to_string(&log).unwrap();
    assert_eq!(got.lines().collect::<Vec<_>>(), SIGNALS);
    assert!(a.list(&[]).is_empty());
}

#[test]
fn sigtstp_to_run_stops_it_with_its_command_and_sigcont_resumes_both() {
    use std::os::unix::process::CommandExt;
    let w = World::new();
    let a = w.device("a");
    let pidfile = w.tmp.path().join("child.pid");
    let script = format!("echo $$ > {}; exec sleep 60", pidfile.display());
    // A process group of its own, in this session: stop signals to an
    // orphaned group would be discarded.
    let mut wrapper = a
        .cmd()
        .args(["run", "--session", "jc", "--", "sh", "-c", &script])
        .process_group(0)
        .spawn()
        .unwrap();
    let child: u32 = read_when_written(&pidfile).trim().parse().unwrap();
    assert_eq!(parent_of(child), wrapper.id());
    let both =
        |state: char| proc_state(child) == Some(state) && proc_state(wrapper.id()) == Some(state);
    signal(wrapper.id(), "-TSTP");
    wait_until("the command and the wrapper to stop", PATIENCE, || {
        both('T')
    });
    signal(wrapper.id(), "-CONT");
    wait_until("both to run again", PATIENCE, || both('S'));
    // Stopped and continued again, a different way: the command's group.
    signal(wrapper.id(), "-TSTP");
    wait_until("both to stop again", PATIENCE, || both('T'));
    assert!(kill("-CONT", &["--", &format!("-{}", wrapper.id())]));
    wait_until("both to run once more", PATIENCE, || both('S'));
    signal(wrapper.id(), "-TERM");
    assert_eq!(wrapper.wait().unwrap().code(), Some(143));
    assert!(a.list(&[]).is_empty());
}

#[test]
fn job_control_on_a_terminal_suspends_and_resumes_run() {
    use std::io::Write;
    let w = World::new();
    let a = w.device("a");
    let pidfile = w.tmp.path().join("child.pid");
    // An interactive shell on a pseudo-terminal, typed into: Ctrl-Z, fg and
    // Ctrl-C come from the terminal, as a person would send them.
    // SIGINT at its default, however the tests were started (see above).
    let mut term = a
        .program(require_tool("env"))
        .arg("--default-signal=INT,QUIT")
        .arg(require_tool("script"))
        .args(["-qec", "sh -i", "/dev/null"])
        .env("TERM", "dumb")
        .env("PS1", "$ ")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut keys = term.stdin.take().unwrap();
    let mut type_in = |text: &str| {
        keys.write_all(text.as_bytes()).unwrap();
        keys.flush().unwrap();
    };
    type_in(&format!(
        "presence run --session tty -- sh -c 'echo $$ > {}; exec sleep 60'\n",
        pidfile.display()
    ));
    let child: u32 = read_when_written(&pidfile).trim().parse().unwrap();
    let wrapper = parent_of(child);
    wait_until("the session to be listed", PATIENCE, || {
        sessions(&a.list(&[])) == ["tty"]
    });
    let both = |state: char| proc_state(child) == Some(state) && proc_state(wrapper) == Some(state);
    type_in("\x1a");
    wait_until("Ctrl-Z to stop the job", PATIENCE, || both('T'));
    type_in("fg\n");
    wait_until("fg to resume it", PATIENCE, || both('S'));
    type_in("\x03");
    wait_until("Ctrl-C to end it", PATIENCE, || {
        proc_state(wrapper).is_none() || proc_state(wrapper) == Some('Z')
    });
    type_in("echo status=$?\nexit\n");
    drop(keys);
    let out = term.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("Stopped"), "{text}");
    assert!(text.contains("status=130"), "{text}");
    assert!(a.list(&[]).is_empty());
}

#[test]
fn a_sigkilled_wrapper_leaves_a_record_that_refresh_clears_once_the_child_is_gone() {
    let w = World::new();
    let a = w.device("a");
    let pidfile = w.tmp.path().join("child.pid");
    let script = format!("echo $$ > {}; exec sleep 60", pidfile.display());
    let mut wrapper = a
        .cmd()
        .args(["run", "--session", "orphan", "--", "sh", "-c", &script])
        .spawn()
        .unwrap();
    wait_until(
        "the session to be listed with its child as owner",
        PATIENCE,
        || {
            let rows = a.list(&[]);
            rows.len() == 1
                && std::fs::read_to_string(&pidfile)
                    .is_ok_and(|p| rows[0].pid.to_string() == p.trim())
        },
    );
    let child_pid: u32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    signal(wrapper.id(), "-KILL");
    wrapper.wait().unwrap();
    // The child runs on: refresh keeps the session.
    let out = a.run(&["refresh"]).success();
    assert!(
        out.stdout.starts_with("refreshed 1, cleared 0"),
        "{}",
        out.stdout
    );
    assert_eq!(a.list(&[]).len(), 1);
    signal(child_pid, "-KILL");
    wait_until("the child to exit", PATIENCE, || {
        !std::path::Path::new(&format!("/proc/{child_pid}")).exists()
            || std::fs::read_to_string(format!("/proc/{child_pid}/stat"))
                .is_ok_and(|s| s.contains(") Z"))
    });
    let out = a.run(&["refresh"]).success();
    assert!(
        out.stdout.starts_with("refreshed 0, cleared 1"),
        "{}",
        out.stdout
    );
    assert!(a.list(&[]).is_empty());
}

#[test]
fn refresh_clears_a_killed_owner_and_leaves_ownerless_records() {
    let w = World::new();
    let a = w.device("a");
    let mut owner = Owner::start();
    a.publish("owned", &["--owner-pid", &owner.pid()]);
    a.publish("free", &[]);
    let out: JsonRefresh = a.json(&["refresh", "--json"]);
    assert_eq!((out.refreshed, out.left), (1, 1));
    assert_eq!(out.refreshed_files.len(), 1);
    let owned = out.refreshed_files;
    owner.kill();
    let out: JsonRefresh = a.json(&["refresh", "--json"]);
    assert_eq!((out.refreshed, out.cleared, out.left), (0, 1, 1));
    assert_eq!(out.cleared_files, owned);
    assert_eq!(sessions(&a.list(&[])), ["free"]);
    // Other devices' records are never touched.
    let b = w.device("b");
    assert_eq!(b.json::<JsonRefresh>(&["refresh", "--json"]).left, 0);
}

#[test]
fn refresh_every_keeps_a_short_ttl_record_alive_across_many_ttls() {
    let w = World::new();
    let a = w.device("a");
    let mut owner = Owner::start();
    a.publish("short", &["--ttl", "1s", "--owner-pid", &owner.pid()]);
    let first = a.show("short");
    let mut refresher = a
        .cmd()
        .args(["refresh", "--every", "250ms"])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    // Listed until it is seen live with a refresh four ttls after the
    // publish. Each refresh keeps the record's own ttl, and the record is
    // live whenever its last refresh is less than a ttl old, by its
    // writer's clock and by its arrival here: only a refresher that a busy
    // machine held back longer may let it lapse, until its next pass.
    let mut looks = 0;
    let (last, _) = wait_for(
        "the record to be refreshed live across four ttls",
        PATIENCE,
        || {
            looks += 1;
            let rows = a.list(&["--include-expired"]);
            let row = rows
                .iter()
                .find(|r| r.session_id == "short")
                .unwrap_or_else(|| panic!("dropped after {looks} looks: {rows:?}"))
                .clone();
            let (updated, expires) = (row.updated_at.unwrap(), row.expires_at.unwrap());
            assert!(
                (expires - updated - 1.0).abs() < 1e-3,
                "the refresh changed the ttl: {row:?}"
            );
            assert_ne!(row.state, "ended", "{row:?}");
            let since = row.age_s.max(row.claimed_age_s.unwrap());
            assert!(
                row.live || since >= 1.0 - 1e-3,
                "not live {since:.3} s after a refresh: {row:?}"
            );
            if row.live && updated >= first.updated_at.unwrap() + 4.0 {
                Ok(row)
            } else {
                Err(Box::new(row))
            }
        },
    );
    assert!(last.seq > first.seq, "{last:?}");
    assert_eq!(last.started_at, first.started_at, "the same life goes on");
    owner.kill();
    // Ended by the refresher, not merely expired.
    wait_until("the dead owner's record to be cleared", PATIENCE, || {
        a.show("short").state == "ended"
    });
    signal(refresher.id(), "-TERM");
    assert_eq!(refresher.wait().unwrap().code(), Some(0));
}

#[test]
fn refresh_every_must_stay_below_the_ttl() {
    let w = World::new();
    let a = w.device("a");
    let out = a.run(&["refresh", "--every", "90s"]).code(2);
    assert!(out.stderr.contains("not below the ttl"), "{}", out.stderr);
    a.run(&["refresh", "--every", "0s"]).code(2);
    // Without a value, the profile's refresh_interval applies; SIGTERM,
    // once the loop runs, ends it with 0.
    let s = Stream::start(&a, &["refresh", "--every"]);
    assert_eq!(s.next(), "refreshed 0, cleared 0, left 0");
    let (code, stderr) = s.stop();
    assert_eq!(code, Some(0), "{stderr}");
    // `--json` prints every pass: a second one this soon would come from an
    // interval shorter than the profile's 30 s.
    let s = Stream::start(&a, &["refresh", "--json", "--every"]);
    let pass: JsonRefresh = parse_json(&s.next(), "refresh --json --every");
    assert_eq!((pass.refreshed, pass.cleared, pass.left), (0, 0, 0));
    s.quiet_for(Duration::from_millis(700));
    let (code, stderr) = s.stop();
    assert_eq!(code, Some(0), "{stderr}");
    // And a profile's own refresh_interval is the one used.
    let quick = w.bare_device("quick");
    quick.write_config(&format!(
        "[profiles.default]\ndir = {:?}\nrefresh_interval = \"1s\"\n",
        w.shared().display().to_string()
    ));
    let s = Stream::start(&quick, &["refresh", "--json", "--every"]);
    let mut first = None;
    for _ in 0..2 {
        let pass: JsonRefresh = parse_json(&s.next(), "refresh --json --every");
        assert_eq!((pass.refreshed, pass.cleared, pass.left), (0, 0, 0));
        first.get_or_insert_with(Instant::now);
    }
    // The second pass a second after the first, not the default 30 s
    // (half of that is time enough for a loaded machine).
    let gap = first.map(|t| t.elapsed()).unwrap_or_default();
    assert!(gap < Duration::from_secs(15), "{gap:?} between the passes");
    let (code, stderr) = s.stop();
    assert_eq!(code, Some(0), "{stderr}");
}

#[test]
fn refresh_all_profiles_covers_every_directory_and_label() {
    let w = World::new();
    let a = w.bare_device("a");
    let d1 = w.tmp.path().join("d1").display().to_string();
    let d2 = w.tmp.path().join("d2").display().to_string();
    a.write_config(&format!(
        "[profiles.default]\ndir = {d1:?}\n[profiles.work]\ndir = {d2:?}\n[profiles.side]\ndir = {d1:?}\n"
    ));
    let owner = Owner::start();
    a.publish("x", &["--owner-pid", &owner.pid()]);
    a.publish("y", &["--owner-pid", &owner.pid(), "--profile", "work"]);
    a.publish("z", &["--owner-pid", &owner.pid(), "--profile", "side"]);
    assert_eq!(a.json::<JsonRefresh>(&["refresh", "--json"]).refreshed, 1);
    assert_eq!(
        a.json::<JsonRefresh>(&["refresh", "--json", "--all-profiles"])
            .refreshed,
        3
    );
}

/// `clear --all` ends every live record of this device in the profile,
/// and with `--all-profiles` in every profile's directory, whatever its
/// label; another device's records, even in the same directory, stay.
#[test]
fn clear_all_ends_every_record_of_this_device_and_no_other() {
    let w = World::new();
    let (a, b) = (w.bare_device("a"), w.bare_device("b"));
    let d1 = w.tmp.path().join("d1").display().to_string();
    let d2 = w.tmp.path().join("d2").display().to_string();
    let config = format!(
        "[profiles.default]\ndir = {d1:?}\n[profiles.work]\ndir = {d2:?}\n[profiles.side]\ndir = {d1:?}\n"
    );
    a.write_config(&config);
    b.write_config(&config);
    a.publish("x1", &[]);
    a.publish("x2", &["--status", "working"]);
    a.publish("y", &["--profile", "work"]);
    a.publish("z", &["--profile", "side"]);
    b.publish("theirs", &[]);
    let live = |profile: &str| sessions(&a.list(&["--profile", profile]));
    let out = a.run(&["clear", "--all"]).success();
    let mut said: Vec<&str> = out.stdout.lines().collect();
    said.sort();
    assert_eq!(said.len(), 2, "{}", out.stdout);
    assert!(
        said[0].starts_with("cleared x1 (") && said[1].starts_with("cleared x2 ("),
        "{}",
        out.stdout
    );
    assert_eq!(live("default"), ["theirs"]);
    assert_eq!(a.show("x1").state, "ended");
    assert_eq!(live("work"), ["y"]);
    assert_eq!(live("side"), ["z"]);
    // Again: nothing left to clear, and it says so.
    let again = a.run(&["clear", "--all"]).success();
    assert_eq!(again.stdout, "");
    assert!(
        again
            .stderr
            .contains("nothing to clear: no live record of this device in profile 'default'"),
        "{}",
        again.stderr
    );
    let out = a.run(&["clear", "--all", "--all-profiles"]).success();
    let mut said: Vec<&str> = out.stdout.lines().collect();
    said.sort();
    assert_eq!(said.len(), 2, "{}", out.stdout);
    assert!(
        said[0].starts_with("cleared y (") && said[1].starts_with("cleared z ("),
        "{}",
        out.stdout
    );
    assert!(live("work").is_empty() && live("side").is_empty());
    assert_eq!(live("default"), ["theirs"]);
    assert_eq!(sessions(&b.list(&[])), ["theirs"]);
    // A directory that fails (here `work`'s, now a file) is said, even with
    // --quiet, and does not keep the others from being cleared: exit 1.
    a.publish("x3", &[]);
    a.publish("y2", &["--profile", "work"]);
    let d2 = w.tmp.path().join("d2");
    std::fs::rename(&d2, w.tmp.path().join("d2-away")).unwrap();
    std::fs::write(&d2, "not a directory").unwrap();
    let out = a
        .run(&[
            "--quiet",
            "--profile",
            "work",
            "clear",
            "--all",
            "--all-profiles",
        ])
        .code(1);
    assert!(
        out.stderr
            .contains(&format!("cannot clear records in {}", d2.display())),
        "{}",
        out.stderr
    );
    assert_eq!(out.stdout, "");
    assert_eq!(live("default"), ["theirs"], "x3 was cleared all the same");
    // Named records and --all do not mix; --all-profiles needs --all.
    for args in [
        &["clear", "--all", "--session", "x1"][..],
        &["clear", "--all", "--instance", "i"],
        &["clear", "--all-profiles"],
    ] {
        let r = a.run(args).code(2);
        assert!(
            r.stderr.contains("cannot be used with") || r.stderr.contains("required"),
            "{args:?}: {}",
            r.stderr
        );
    }
}

#[test]
fn expire_removes_exactly_the_garbage() {
    let w = World::new();
    let a = w.device("a");
    let dir = w.shared();
    let t = now();
    a.publish("live-own", &[]);
    a.publish("ended-recently", &[]);
    a.run(&["clear", "--session", "ended-recently"]).success();
    let me = {
        a.publish("probe", &[]);
        let id = a.device_id();
        a.run(&["clear", "--session", "probe"]).success();
        id
    };
    // This device's records are published for real (so its ledger knows
    // them exactly as written), by a clock set back `ago` seconds; a record
    // merely edited in place would be another writer's.
    let own = |sid: &str, ago: u32, end: bool| {
        let back = format!("-{ago}");
        let before = now();
        run_ok(faked(a.cmd(), &back).args(["publish", "--session", sid, "--instance", "h-own"]));
        if end {
            run_ok(faked(a.cmd(), &back).args(["clear", "--session", sid]));
        }
        let after = now();
        let path = dir.join(format!("h-own.{sid}.json"));
        let r: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(r["device_id"], me.as_str());
        // Written between `before` and `after`, `ago` seconds back (a
        // second either side for the clock's rounding).
        let updated = r["updated_at"].as_f64().unwrap() + f64::from(ago);
        assert!(
            before - 1.0 <= updated && updated <= after + 1.0,
            "the clock was not set back {ago} s: {r}"
        );
    };
    let foreign = |sid: &str, updated: f64| {
        json!({"session_id": sid, "profile": "default", "client": "terminal", "device_id": "other",
               "instance_id": "h-other", "updated_at": updated, "expires_at": updated + 90.0, "seq": 1})
    };
    own("old-tomb", 700, true);
    own("expired-own", 1000, false);
    write_record(&dir, "h-other.live.json", &foreign("live", t - 5.0));
    write_record(&dir, "h-other.recent.json", &foreign("recent", t - 500.0));
    write_record(
        &dir,
        "h-other.ancient.json",
        &foreign("ancient", t - 5000.0),
    );
    write_record(&dir, "h-other.c.json", &foreign("c", t - 2.0));
    write_record(
        &dir,
        "h-other.c.sync-conflict-20261130-101112-ABC.json",
        &foreign("c", t - 4.0),
    );
    write_record(
        &dir,
        "h-other.d (conflicted copy 2026-11-30 101112).json",
        &foreign("d", t - 1000.0),
    );
    std::fs::write(dir.join(".h-other.e.json.123.abcdef.tmp"), "{").unwrap();
    std::os::unix::fs::symlink("/etc/hostname", dir.join("link.json")).unwrap();
    std::fs::create_dir(dir.join("subdir.json")).unwrap();
    let outside = w.tmp.path().join("outside.json");
    std::fs::write(&outside, foreign("outside", t - 9000.0).to_string()).unwrap();
    std::os::unix::fs::symlink(&outside, dir.join("to-outside.json")).unwrap();

    let names = || {
        let mut v: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        v.sort();
        v
    };
    let before = names();
    let dry: JsonExpire = a.json(&["expire", "--dry-run", "--json"]);
    assert_eq!(names(), before, "a dry run deletes nothing");
    assert!(dry.dry_run);
    let mut would: Vec<(String, String)> = dry
        .removed
        .iter()
        .map(|g| (g.file.clone(), g.reason.clone()))
        .collect();
    would.sort();
    // `ancient` carries times 5000 s old but arrived just now (its writer's
    // clock may run hours behind): garbage is judged by how long a record
    // has been dead since it last arrived here, never by its writer's
    // times alone (expire::tests::expire_table covers its deletion after
    // gc_after on this machine's clock).
    let want = vec![
        (
            "h-other.c.sync-conflict-20261130-101112-ABC.json",
            "conflict_lost",
        ),
        (
            "h-other.d (conflicted copy 2026-11-30 101112).json",
            "conflict_expired",
        ),
        ("h-own.expired-own.json", "own_expired"),
        ("h-own.old-tomb.json", "own_tombstone"),
    ];
    let want: Vec<(String, String)> = want
        .into_iter()
        .map(|(a, b)| (a.into(), b.into()))
        .collect();
    assert_eq!(would, want);

    let out = a.run(&["expire"]).success();
    assert!(out.stdout.contains("removed 4 files"), "{}", out.stdout);
    let after = names();
    let removed: Vec<&String> = before.iter().filter(|n| !after.contains(n)).collect();
    let mut removed: Vec<String> = removed.into_iter().cloned().collect();
    removed.sort();
    assert_eq!(
        removed,
        want.iter().map(|w| w.0.clone()).collect::<Vec<_>>()
    );
    // Live records, recent tombstones, recent foreign garbage, the fresh temp
    // file and everything that is not a regular file stay.
    for kept in [
        "h-other.ancient.json",
        "h-other.live.json",
        "h-other.recent.json",
        "h-other.c.json",
        "link.json",
        "subdir.json",
        "to-outside.json",
        ".h-other.e.json.123.abcdef.tmp",
    ] {
        assert!(after.contains(&kept.to_string()), "{kept} was removed");
    }
    assert!(
        outside.exists(),
        "never follows a symlink out of the directory"
    );
    assert_eq!(sessions(&a.list(&[])), ["live-own", "c", "live"]);
    // A second run finds nothing more.
    assert!(
        a.run(&["expire"])
            .success()
            .stdout
            .contains("removed 0 files")
    );
}

/// Several processes publishing, refreshing, clearing and expiring
/// overlapping records while others list: no list fails or shows a torn
/// record, no ended life comes back.
#[test]
fn stress_no_torn_record_no_resurrection() {
    let w = World::new();
    let a = Arc::new(w.device("a"));
    let owner = Owner::start();
    let owner_pid = owner.pid();
    // Until at least 3 s have passed and the work below is done, however
    // long a busy machine takes for it.
    let start = Instant::now();
    let done = Arc::new(AtomicBool::new(false));
    let ops = Arc::new(AtomicUsize::new(0));
    let failures = Arc::new(Mutex::new(Vec::<String>::new()));
    let observations = Arc::new(Mutex::new(Vec::<Vec<(String, f64, bool, u64)>>::new()));
    let mut threads = Vec::new();
    const WRITERS: usize = 8;
    for n in 0..WRITERS {
        let (a, ops, failures, owner_pid) =
            (a.clone(), ops.clone(), failures.clone(), owner_pid.clone());
        let done = done.clone();
        threads.push(std::thread::spawn(move || {
            let mut i = n;
            while !done.load(Ordering::Relaxed) {
                let session = format!("s{}", i % 3);
                let r = match i % 4 {
                    0 | 1 => a.run(&[
                        "publish",
                        "--session",
                        &session,
                        "--owner-pid",
                        &owner_pid,
                        "--ttl",
                        "5s",
                    ]),
                    2 => a.run(&["refresh"]),
                    _ => a.run(&["clear", "--session", &session]),
                };
                if r.code != 0 {
                    failures
                        .lock()
                        .unwrap()
                        .push(format!("{:?}: {}", r.args, r.stderr));
                }
                ops.fetch_add(1, Ordering::Relaxed);
                i += 1 + n;
            }
        }));
    }
    {
        let (a, ops, failures) = (a.clone(), ops.clone(), failures.clone());
        let done = done.clone();
        threads.push(std::thread::spawn(move || {
            while !done.load(Ordering::Relaxed) {
                let r = a.run(&["publish", "--session", "short", "--ttl", "1s"]);
                let e = a.run(&["expire"]);
                for r in [r, e] {
                    if r.code != 0 {
                        failures
                            .lock()
                            .unwrap()
                            .push(format!("{:?}: {}", r.args, r.stderr));
                    }
                }
                ops.fetch_add(2, Ordering::Relaxed);
            }
        }));
    }
    let listings = Arc::new(AtomicUsize::new(0));
    for _ in 0..2 {
        let (a, failures, observations, listings) = (
            a.clone(),
            failures.clone(),
            observations.clone(),
            listings.clone(),
        );
        let done = done.clone();
        threads.push(std::thread::spawn(move || {
            let mut seen = Vec::new();
            while !done.load(Ordering::Relaxed) {
                let r = a.run(&["-v", "list", "--all", "--json"]);
                listings.fetch_add(1, Ordering::Relaxed);
                if r.code != 0 {
                    failures
                        .lock()
                        .unwrap()
                        .push(format!("list failed: {}", r.stderr));
                    continue;
                }
                for line in r
                    .stderr
                    .lines()
                    .filter(|l| l.contains("skipped") && !l.contains("temp file"))
                {
                    failures
                        .lock()
                        .unwrap()
                        .push(format!("torn or unreadable record: {line}"));
                }
                let rows: Vec<JsonRow> = match serde_json::from_str(&r.stdout) {
                    Ok(v) => v,
                    Err(e) => {
                        failures
                            .lock()
                            .unwrap()
                            .push(format!("list printed bad JSON: {e}"));
                        continue;
                    }
                };
                for row in rows {
                    seen.push((
                        row.file,
                        row.started_at.unwrap_or(0.0),
                        row.ended_at.is_some(),
                        row.seq,
                    ));
                }
            }
            observations.lock().unwrap().push(seen);
        }));
    }
    const OPS: usize = 60;
    const LISTINGS: usize = 12;
    wait_until("the stress work to be done", PATIENCE, || {
        ops.load(Ordering::Relaxed) >= OPS && listings.load(Ordering::Relaxed) >= LISTINGS
    });
    std::thread::sleep(Duration::from_secs(3).saturating_sub(start.elapsed()));
    done.store(true, Ordering::Relaxed);
    for t in threads {
        t.join().unwrap();
    }
    // No ended life is ever seen live again at a higher seq.
    let mut anomalies = failures.lock().unwrap().clone();
    let mut ended_at_seq: HashMap<(String, u64), u64> = HashMap::new();
    let all: Vec<_> = observations
        .lock()
        .unwrap()
        .iter()
        .flatten()
        .cloned()
        .collect();
    for (file, started, ended, seq) in &all {
        if *ended {
            let k = (file.clone(), started.to_bits());
            let e = ended_at_seq.entry(k).or_insert(*seq);
            *e = (*e).min(*seq);
        }
    }
    for (file, started, ended, seq) in &all {
        if !ended
            && let Some(&end_seq) = ended_at_seq.get(&(file.clone(), started.to_bits()))
            && *seq > end_seq
        {
            anomalies.push(format!(
                "resurrected {file} (life {started}) at seq {seq} after its end at seq {end_seq}"
            ));
        }
    }
    // Every file left is a valid record.
    let final_list = a.run(&["-v", "list", "--all", "--json"]).success();
    for line in final_list.stderr.lines().filter(|l| l.contains("skipped")) {
        anomalies.push(format!("final directory: {line}"));
    }
    let ops = ops.load(Ordering::Relaxed);
    let listings = listings.load(Ordering::Relaxed);
    println!(
        "stress: {} writer processes + 1 publish/expire loop + 2 listers, {ops} writer operations, \
         {listings} listings, {} observations, anomalies {}",
        WRITERS,
        all.len(),
        anomalies.len()
    );
    assert!(anomalies.is_empty(), "{anomalies:#?}");
    assert!(
        ops >= OPS && listings >= LISTINGS,
        "the stress test did too little: {ops} ops, {listings} listings"
    );
    drop(owner);
}

#[test]
fn clear_by_instance_and_session_also_ends_the_life_keyed_by_it() {
    let w = World::new();
    let a = w.device("a");
    a.publish("s1", &["--instance", "gw"]);
    a.publish("s2", &["--instance", "gw", "--key", "s1"]);
    a.run(&["clear", "--instance", "gw", "--session", "s1"])
        .success();
    assert!(a.list(&[]).is_empty(), "{:?}", sessions(&a.list(&[])));
    assert_eq!(a.show("s2").state, "ended");
}

/// `presence run` as the leader of its terminal's session (`exec presence
/// run …` on a terminal, as a tmux pane's command or `ssh -t host presence
/// run …` start it): the kernel sends the terminal's hang-up to the leader
/// alone, so the wrapper passes it on; its command ends, and so does the
/// record.
#[test]
fn run_leading_its_terminals_session_passes_a_hang_up_on() {
    let w = World::new();
    let a = w.device("a");
    let pidfile = w.tmp.path().join("command-pid");
    let inner = format!(
        "exec {} run --session hup -- sh -c 'echo $$ > {}; exec sleep 600'",
        env!("CARGO_BIN_EXE_presence"),
        pidfile.display()
    );
    // `script` gives the command a terminal whose session it leads (with
    // SIGHUP at its default, also under nohup: an ignored one stays so).
    let mut terminal = Owner(
        a.program(require_tool("env"))
            .arg("--default-signal=HUP,INT,QUIT")
            .arg(require_tool("script"))
            .args(["-qfec", &inner, "/dev/null"])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let command: u32 = read_when_written(&pidfile).trim().parse().unwrap();
    wait_until("the session to be listed", PATIENCE, || {
        sessions(&a.list(&[])) == ["hup"]
    });
    // The terminal goes away: its master side closes, the slave hangs up.
    terminal.kill();
    wait_until("the command to end on the hang-up", PATIENCE, || {
        proc_state(command).is_none_or(|s| s == 'Z')
    });
    let (row, _) = wait_for("the record ended", PATIENCE, || {
        let rows = a.list(&["--include-expired", "--session", "hup"]);
        match rows.first() {
            Some(r) if r.state == "ended" => Ok(r.clone()),
            other => Err(format!("{other:?}")),
        }
    });
    assert!(!row.live, "{row:?}");
}
