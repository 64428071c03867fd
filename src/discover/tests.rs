//! The framework's rules: the reader table, which process runs which
//! program, the shared readers' helpers, and the pass that turns what the
//! readers found into this device's records.

use std::cell::RefCell;
use std::path::Path;

use super::*;
use crate::registry::refresh::tests::{T, all, fixture, req};

/// A process running `name`, started at tick 1.
pub(crate) fn proc_named(pid: u32, name: &str) -> Proc {
    Proc {
        pid,
        comm: name.to_string(),
        argv: vec![format!("/usr/bin/{name}")],
        start: 1,
        ..Proc::default()
    }
}

/// A temp directory for a reader's tests: a HOME, the agent's data
/// directory beside it (named to the reader by the variable `var`, as
/// `HERMES_HOME` or `XDG_DATA_HOME` would), and project directories.
pub(crate) struct Sandbox {
    pub(crate) tmp: tempfile::TempDir,
    var: &'static str,
    var_dir: &'static str,
}

impl Sandbox {
    /// `var` names `<tmp>/<var_dir>`; `make` (under the temp directory)
    /// and `proj` are made.
    pub(crate) fn new(var: &'static str, var_dir: &'static str, make: &str) -> Sandbox {
        let s = Sandbox {
            tmp: tempfile::tempdir().unwrap(),
            var,
            var_dir,
        };
        std::fs::create_dir_all(s.dir(make)).unwrap();
        std::fs::create_dir_all(s.dir("proj")).unwrap();
        s
    }

    /// The HOME the readers are given (not made: no agent is there).
    pub(crate) fn home(&self) -> std::path::PathBuf {
        self.dir("home")
    }

    /// `name` under the temp directory.
    pub(crate) fn dir(&self, name: &str) -> std::path::PathBuf {
        self.tmp.path().join(name)
    }

    /// What a reader is given: the HOME, the variable, these processes
    /// and this machine's clock.
    pub(crate) fn cx(&self, procs: Vec<Proc>) -> Context {
        let mut env = HashMap::new();
        env.insert(
            self.var.to_string(),
            self.dir(self.var_dir).into_os_string(),
        );
        Context {
            home: self.home(),
            env,
            procs,
            now: crate::local::unix_now(),
        }
    }
}

/// Writes `text` at `path`, making its directories.
pub(crate) fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[test]
fn the_reader_table_names_every_agent_in_order() {
    let names: Vec<&str> = AGENTS_READ.iter().map(|a| a.name).collect();
    assert_eq!(names, AGENTS);
}

#[test]
fn which_program_a_process_runs() {
    let p = |comm: &str, argv: &[&str]| Proc {
        comm: comm.into(),
        argv: argv.iter().map(|a| a.to_string()).collect(),
        ..Proc::default()
    };
    assert!(p("claude", &[]).named("claude"));
    assert!(p("2.1.220", &["claude", "--resume"]).named("claude"));
    assert!(p("2.1.220", &["/home/u/.local/bin/claude"]).named("claude"));
    assert!(p("node", &["node", "/usr/bin/codex", "exec"]).named("codex"));
    assert!(
        p(
            "python3",
            &["/usr/bin/python3", "-u", "/home/u/.local/bin/hermes"]
        )
        .named("hermes")
    );
    assert!(p("python3.12", &["python3.12", "/x/hermes", "gateway"]).named("hermes"));
    assert!(p("bun", &["bun", "/x/opencode"]).named("opencode"));
    assert!(!p("vim", &["vim", "claude"]).named("claude"));
    assert!(!p("node", &["node", "server.js", "claude"]).named("claude"));
    assert!(!p("claudette", &["claudette"]).named("claude"));
    assert!(!p("pythonista", &["pythonista", "hermes"]).named("hermes"));
    assert!(!p("", &[]).named("codex"));
}

#[test]
fn agent_directories_the_processes_own_first() {
    let mut cx = Context {
        home: "/h".into(),
        ..Context::default()
    };
    let mut p = proc_named(1, "codex");
    assert_eq!(
        cx.agent_dir(Some(&p), "CODEX_HOME", ".codex"),
        Path::new("/h/.codex")
    );
    cx.env.insert("CODEX_HOME".into(), "/env".into());
    assert_eq!(
        cx.agent_dir(Some(&p), "CODEX_HOME", ".codex"),
        Path::new("/env")
    );
    p.env.insert("CODEX_HOME".into(), "/own".into());
    assert_eq!(
        cx.agent_dir(Some(&p), "CODEX_HOME", ".codex"),
        Path::new("/own")
    );
    // Empty or relative: not a directory to read.
    p.env.insert("CODEX_HOME".into(), "".into());
    assert_eq!(
        cx.agent_dir(Some(&p), "CODEX_HOME", ".codex"),
        Path::new("/env")
    );
    p.env.insert("CODEX_HOME".into(), "rel".into());
    assert_eq!(
        cx.agent_dir(Some(&p), "CODEX_HOME", ".codex"),
        Path::new("/h/.codex")
    );
}

#[test]
fn lines_of_a_span_are_whole_lines_only() {
    let span = |bytes: &[u8], offset: u64, size: u64| store::bounded::Span {
        bytes: bytes.to_vec(),
        offset,
        size,
    };
    let n = |s: &store::bounded::Span| json_lines(s).len();
    assert_eq!(n(&span(b"{}\n{}\n", 0, 6)), 2);
    // A tail: the first line is cut.
    assert_eq!(n(&span(b"1}\n{}\n", 4, 10)), 1);
    // A head: the last line is cut.
    assert_eq!(n(&span(b"{}\n{\"a\":", 0, 100)), 1);
    // The last line, unfinished at the end of the file: kept if it parses.
    assert_eq!(n(&span(b"{}\n{}", 0, 5)), 2);
    assert_eq!(n(&span(b"\n\n  \n\x00\xff\n[", 0, 8)), 0);
}

#[test]
fn ids_and_texts_as_agents_write_them() {
    use serde_json::json;
    assert_eq!(session_id(&json!("0f8e-1d")).as_deref(), Some("0f8e-1d"));
    for bad in [
        json!(""),
        json!("a b"),
        json!("a\u{7}"),
        json!(7),
        json!(null),
        json!("x".repeat(129)),
    ] {
        assert_eq!(session_id(&bad), None, "{bad}");
    }
    assert!(file_safe("0f8e1d2c-3b4a_x") && !file_safe("../x") && !file_safe("a.b"));
    assert_eq!(text(&json!("  a\tb\u{1b} "), 10).as_deref(), Some("ab"));
    assert_eq!(text(&json!(" \u{7} "), 10), None);
    assert_eq!(text(&json!("abcdef"), 3).as_deref(), Some("abc"));
    assert_eq!(
        millis(&json!(1_767_000_000_123u64), 1.8e9),
        Some(1_767_000_000.123)
    );
    assert_eq!(millis(&json!(5), 1.8e9), None);
    assert_eq!(millis(&json!(9e15), 1.8e9), None);
}

#[test]
fn a_request_is_the_whole_record_owned_by_the_agent() {
    let f = Found {
        status: Status::Waiting,
        cwd: Some("/w/parser".into()),
        model: Some("m".into()),
        started_at: Some(5.0),
        ..Found::new("codex", "s-1", 77)
    };
    let r = request(&f, Some("tmux://h/w:0.1".into()));
    assert_eq!(
        (
            r.session_id.as_str(),
            r.session_key.as_deref(),
            r.client.as_deref()
        ),
        ("s-1", Some("s-1"), Some("codex"))
    );
    assert_eq!(
        (r.source.as_deref(), r.status.as_deref()),
        (Some("discover"), Some("waiting"))
    );
    assert_eq!(
        (r.title.as_deref(), r.cwd.as_deref()),
        (Some("parser"), Some("/w/parser"))
    );
    assert_eq!(
        (r.owner_pid, r.replace, r.started_at),
        (Some(77), true, Some(5.0))
    );
    assert_eq!(r.endpoint.as_deref(), Some("tmux://h/w:0.1"));
    let titled = request(
        &Found {
            title: Some("Mine".into()),
            ..f
        },
        None,
    );
    assert_eq!(
        (titled.title.as_deref(), titled.endpoint),
        (Some("Mine"), None)
    );
}

/// This test process as a discovered agent.
fn me() -> Proc {
    let pid = std::process::id();
    Proc {
        start: crate::owner::process_info(pid).unwrap().start,
        ..proc_named(pid, "claude")
    }
}

/// A finder that returns what `now` holds at each call.
struct Finder(RefCell<Vec<Vec<Found>>>);

impl Finder {
    fn of(calls: Vec<Vec<Found>>) -> Finder {
        Finder(RefCell::new(calls))
    }
    fn call(&self) -> Vec<Found> {
        let mut calls = self.0.borrow_mut();
        match calls.len() {
            0 => Vec::new(),
            1 => calls[0].clone(),
            _ => calls.remove(0),
        }
    }
}

fn pass(
    f: &crate::registry::refresh::tests::Fixture,
    cx: &Context,
    finder: &Finder,
    now: f64,
) -> DiscoverOutcome {
    let own = f.reg.own_records().unwrap();
    apply(&f.reg, &own, cx, &|| finder.call(), now).unwrap().0
}

#[test]
fn a_found_session_is_published_once_and_rewritten_only_when_it_changes() {
    let f = fixture();
    let cx = Context {
        procs: vec![me()],
        ..Context::default()
    };
    let found = Found {
        status: Status::Working,
        title: Some("Fix it".into()),
        started_at: Some(T - 100.0),
        ..Found::new("claude-code", "c-1", std::process::id())
    };
    let finder = Finder::of(vec![vec![found.clone()]]);
    let out = pass(&f, &cx, &finder, T);
    assert_eq!(
        (out.found, out.published.len(), out.kept),
        (1, 1, 0),
        "{out:?}"
    );
    let r = &all(&f.reg, T)[0];
    assert_eq!(
        (
            r.client.as_str(),
            r.source.as_str(),
            r.status.as_str(),
            r.title.as_str()
        ),
        ("claude-code", "discover", "working", "Fix it")
    );
    assert_eq!(
        (r.pid, r.started_at, r.seq),
        (std::process::id(), Some(T - 100.0), 1)
    );
    // Nothing changed: not rewritten.
    let out = pass(&f, &cx, &finder, T + 1.0);
    assert_eq!((out.published.len(), out.kept), (0, 1));
    assert_eq!(all(&f.reg, T + 1.0)[0].seq, 1);
    // The status changed: rewritten, the same life.
    let finder = Finder::of(vec![vec![Found {
        status: Status::Waiting,
        ..found
    }]]);
    let out = pass(&f, &cx, &finder, T + 2.0);
    assert_eq!(out.published.len(), 1);
    let r = &all(&f.reg, T + 2.0)[0];
    assert_eq!(
        (r.status.as_str(), r.seq, r.started_at),
        ("waiting", 2, Some(T - 100.0))
    );
}

#[test]
fn a_credential_in_a_title_is_redacted_and_does_not_rewrite_every_pass() {
    let f = fixture();
    let cx = Context {
        procs: vec![me()],
        ..Context::default()
    };
    let finder = Finder::of(vec![vec![Found {
        title: Some("use ghp_0123456789abcdefghijklmnopqrstuvwxyzAB".into()),
        ..Found::new("codex", "x-1", std::process::id())
    }]]);
    let out = pass(&f, &cx, &finder, T);
    assert_eq!(out.published.len(), 1);
    assert_eq!(out.warnings.len(), 1, "{out:?}");
    assert!(!all(&f.reg, T)[0].title.contains("ghp_"));
    let out = pass(&f, &cx, &finder, T + 1.0);
    assert_eq!((out.published.len(), out.kept), (0, 1), "{out:?}");
}

#[test]
fn a_hooks_live_record_wins_and_discovery_takes_over_when_it_ends() {
    let f = fixture();
    let cx = Context {
        procs: vec![me()],
        ..Context::default()
    };
    let mut hook = req("c-1", Some(std::process::id()));
    hook.status = Some("working".into());
    hook.client = Some("claude-code".into());
    f.reg.publish(&hook, T).unwrap();
    let finder = Finder::of(vec![vec![Found {
        status: Status::Waiting,
        ..Found::new("claude-code", "c-1", std::process::id())
    }]]);
    let out = pass(&f, &cx, &finder, T + 1.0);
    assert_eq!((out.hooked, out.published.len()), (1, 0));
    let recs = all(&f.reg, T + 1.0);
    assert_eq!(recs.len(), 1);
    assert_eq!(
        (recs[0].status.as_str(), recs[0].source.as_str()),
        ("working", "")
    );
    // The hook ended it (SessionEnd) while the process runs on.
    f.reg.clear(Some("c-1"), None, T + 2.0).unwrap();
    let out = pass(&f, &cx, &finder, T + 3.0);
    assert_eq!((out.hooked, out.published.len()), (0, 1));
    let live: Vec<Record> = all(&f.reg, T + 3.0)
        .into_iter()
        .filter(|r| r.ended_at.is_none())
        .collect();
    assert_eq!(live.len(), 1);
    assert_eq!(
        (live[0].source.as_str(), live[0].started_at),
        ("discover", Some(T + 3.0))
    );
}

#[test]
fn a_session_no_longer_found_while_its_process_runs_is_cleared_after_a_second_look() {
    let f = fixture();
    let cx = Context {
        procs: vec![me()],
        ..Context::default()
    };
    let old = Found::new("claude-code", "old", std::process::id());
    let new = Found::new("claude-code", "new", std::process::id());
    pass(&f, &cx, &Finder::of(vec![vec![old.clone()]]), T);
    // A torn read misses it once: the second look finds it, nothing ends.
    let out = pass(&f, &cx, &Finder::of(vec![vec![], vec![old]]), T + 1.0);
    assert!(out.cleared.is_empty(), "{out:?}");
    // The process moved on to a new session.
    let out = pass(&f, &cx, &Finder::of(vec![vec![new]]), T + 2.0);
    assert_eq!((out.published.len(), out.cleared.len()), (1, 1), "{out:?}");
    let recs = all(&f.reg, T + 2.0);
    let get = |s: &str| recs.iter().find(|r| r.session_id == s).unwrap();
    assert!(get("old").ended_at.is_some());
    assert!(get("new").ended_at.is_none());
    // Discovery turned off: its records go, others stay.
    f.reg
        .publish(&req("by-hand", Some(std::process::id())), T + 3.0)
        .unwrap();
    let out = pass(&f, &Context::default(), &Finder::of(vec![]), T + 4.0);
    assert_eq!(out.cleared.len(), 1, "{out:?}");
    let live: Vec<String> = all(&f.reg, T + 4.0)
        .into_iter()
        .filter(|r| r.ended_at.is_none())
        .map(|r| r.session_id)
        .collect();
    assert_eq!(live, ["by-hand"]);
}

#[test]
fn a_session_whose_process_is_gone_is_not_published() {
    let f = fixture();
    let finder = Finder::of(vec![vec![Found::new("codex", "x", 4_000_000)]]);
    let out = pass(&f, &Context::default(), &finder, T);
    assert!(out.published.is_empty());
    assert!(all(&f.reg, T).is_empty());
}

#[test]
fn the_refresh_of_a_pass_does_not_rewrite_what_discovery_wrote() {
    let f = fixture();
    f.reg
        .publish(&req("other", Some(std::process::id())), T)
        .unwrap();
    let written: HashSet<String> = f
        .reg
        .own_records()
        .unwrap()
        .iter()
        .map(|r| store::file_name(&r.instance_id, &r.session_id))
        .collect();
    let out = f.reg.refresh_except(false, &written, T + 1.0).unwrap();
    assert!(out.refreshed.is_empty());
    assert_eq!(all(&f.reg, T + 1.0)[0].seq, 1);
}

#[test]
fn a_new_life_never_takes_the_start_of_an_ended_one() {
    let f = fixture();
    let mut r = req("s", Some(std::process::id()));
    r.started_at = Some(T - 50.0);
    assert_eq!(
        f.reg.publish(&r, T).unwrap().record.started_at,
        Some(T - 50.0)
    );
    f.reg.clear(Some("s"), None, T + 1.0).unwrap();
    // The same start again would be the ended life: a new one starts now.
    assert_eq!(
        f.reg.publish(&r, T + 2.0).unwrap().record.started_at,
        Some(T + 2.0)
    );
    // A start in the future is not one.
    let mut later = req("t", None);
    later.started_at = Some(T + 100.0);
    assert_eq!(f.reg.publish(&later, T).unwrap().record.started_at, Some(T));
}
