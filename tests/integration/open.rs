//! `presence open`: each built-in handler run for real against fake `ssh`,
//! `mosh`, `tmux`, `xdg-open` and a configured program placed earlier on
//! PATH that record the argv they get; refusals of hostile endpoints that
//! run nothing; the confirmation for another device's sessions on a real
//! pseudo-terminal; and a real `tmux attach` for this machine's session.

use crate::harness::{
    Device, PATIENCE, Run, Stream, World, kill, require_tool, wait_for, wait_until,
};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Fake programs that write their argv (NUL-separated) to `argv-NAME` in
/// `dir` and exit with status 7, so that the status is seen to pass through.
fn fakes(dir: &Path, names: &[&str]) -> PathBuf {
    let bin = dir.join("fakebin");
    std::fs::create_dir_all(&bin).unwrap();
    for name in names {
        let script = format!(
            "#!/bin/sh\nprintf '%s\\0' \"$0\" \"$@\" > '{}/argv-{name}'\nexit 7\n",
            dir.display()
        );
        let path = bin.join(name);
        std::fs::write(&path, script).unwrap();
        let mut perm = std::fs::metadata(&path).unwrap().permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o755);
        std::fs::set_permissions(&path, perm).unwrap();
    }
    bin
}

/// What fake `name` was run with (without its own path), None if it never ran.
fn argv_of(dir: &Path, name: &str) -> Option<Vec<String>> {
    let raw = std::fs::read(dir.join(format!("argv-{name}"))).ok()?;
    let text = String::from_utf8(raw).unwrap();
    let mut argv: Vec<String> = text.split_terminator('\0').map(String::from).collect();
    argv.remove(0);
    Some(argv)
}

/// `cmd` with the fakes first on its PATH.
fn with_fakes(mut cmd: Command, bin: &Path) -> Command {
    let path = cmd
        .get_envs()
        .find(|(k, _)| *k == "PATH")
        .and_then(|(_, v)| v)
        .map(|v| v.to_string_lossy().into_owned())
        .unwrap_or_default();
    cmd.env("PATH", format!("{}:{path}", bin.display()));
    cmd
}

fn open(dev: &Device, bin: &Path, args: &[&str]) -> Run {
    let mut cmd = with_fakes(dev.cmd(), bin);
    let out = cmd
        .arg("open")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    Run {
        args: args.iter().map(|s| s.to_string()).collect(),
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

const FAKES: &[&str] = &["ssh", "mosh", "tmux", "xdg-open", "wezterm"];

/// Each built-in handler gets one argv element per part, runs in
/// presence's place (its status is presence's), and `--print` prints the
/// same argv shell-quoted and runs nothing.
#[test]
fn each_builtin_handler_runs_with_its_argv() {
    let w = World::new();
    let laptop = w.device("laptop");
    let desk = w.device("desk");
    let bin = fakes(w.tmp.path(), FAKES);
    let cases: &[(&str, &str, &str, &[&str])] = &[
        (
            "s-tmux",
            "tmux://desk-far/work",
            "ssh",
            &["-t", "--", "desk-far", "tmux", "attach", "-t", "work"],
        ),
        (
            "s-ssh",
            "ssh://alice@desk-far:2222/srv/my%20app",
            "ssh",
            &[
                "-t",
                "-p",
                "2222",
                "--",
                "alice@desk-far",
                "cd -- '/srv/my app' && exec \"${SHELL:-/bin/sh}\" -l",
            ],
        ),
        (
            "s-mosh",
            "mosh://bob@[fe80::1]:22",
            "mosh",
            &["--ssh=ssh -p 22", "--", "bob@fe80::1"],
        ),
        (
            "s-web",
            "https://example.org/board?x=1",
            "xdg-open",
            &["https://example.org/board?x=1"],
        ),
    ];
    for (session, endpoint, _, _) in cases {
        desk.publish(session, &["--endpoint", endpoint]);
    }
    for (session, endpoint, program, want) in cases {
        let printed = open(&laptop, &bin, &[session, "--print"]).success();
        for name in FAKES {
            assert_eq!(argv_of(w.tmp.path(), name), None, "--print ran {name}");
        }
        let r = open(&laptop, &bin, &[session, "--yes"]).code(7);
        let got = argv_of(w.tmp.path(), program)
            .unwrap_or_else(|| panic!("{endpoint}: {program} did not run; stderr: {}", r.stderr));
        assert_eq!(got, *want, "{endpoint}");
        std::fs::remove_file(w.tmp.path().join(format!("argv-{program}"))).unwrap();
        // The printed line, read back by a shell, is the same argv.
        let echoed = Command::new(require_tool("bash"))
            .args([
                "-c",
                &format!("printf '%s\\0' {}", printed.stdout.trim_end()),
            ])
            .output()
            .unwrap();
        let mut back: Vec<String> = String::from_utf8(echoed.stdout)
            .unwrap()
            .split_terminator('\0')
            .map(String::from)
            .collect();
        assert_eq!(back.remove(0), *program, "{}", printed.stdout);
        assert_eq!(back, *want, "{}", printed.stdout);
    }
}

/// Hostile endpoints from another device are refused with exit 1 naming
/// the part, and nothing runs, even with --yes.
#[test]
fn hostile_endpoints_run_nothing() {
    let w = World::new();
    let laptop = w.device("laptop");
    let desk = w.device("desk");
    let bin = fakes(w.tmp.path(), FAKES);
    let cases = [
        ("h1", "ssh://-oProxyCommand=touch%20pwned/x", "host"),
        ("h2", "tmux://desk-far/;rm%20-rf%20~", "session"),
        ("h3", "ssh://--/x", "host"),
        ("h4", "ssh://desk-far/x?-oProxyCommand=y", "endpoint"),
        ("h5", "mosh://%2Dx@desk-far", "user"),
        ("h6", "ssh://desk\u{2010}far/", "endpoint"),
        ("h7", "tmux://desk-far/%2Dt", "session"),
    ];
    for (session, endpoint, _) in cases {
        desk.publish(session, &["--endpoint", endpoint]);
    }
    for (session, endpoint, field) in cases {
        for extra in [&["--yes"][..], &["--print"]] {
            let mut args = vec![session];
            args.extend_from_slice(extra);
            let r = open(&laptop, &bin, &args).code(1);
            assert!(
                r.stderr.contains(&match field {
                    "endpoint" => "the endpoint \"".to_string(),
                    part => format!("the endpoint's {part} "),
                }),
                "{endpoint}: {}",
                r.stderr
            );
            assert_eq!(r.stdout, "");
        }
    }
    for name in FAKES {
        assert_eq!(argv_of(w.tmp.path(), name), None, "{name} ran");
    }
    // A redacted endpoint and an unknown scheme say so.
    let url = "https://example.org/ghp_0123456789abcdefghijABCDEFGHIJ012345";
    desk.publish("red", &["--endpoint", url]);
    assert!(laptop.show("red").endpoint.contains("[redacted]"));
    desk.publish("gopher", &["--endpoint", "gopher://desk-far/"]);
    desk.publish("none", &[]);
    let r = open(&laptop, &bin, &["red", "--yes"]).code(1);
    assert!(r.stderr.contains("redacted"), "{}", r.stderr);
    let r = open(&laptop, &bin, &["gopher", "--yes"]).code(1);
    assert!(
        r.stderr
            .contains("handlers exist for: http, https, mosh, ssh, tmux"),
        "{}",
        r.stderr
    );
    let r = open(&laptop, &bin, &["none", "--yes"]).code(1);
    assert!(r.stderr.contains("no endpoint"), "{}", r.stderr);
}

/// `tmux://HOST/…` attaches locally only when HOST is this machine by its
/// whole name: another host whose first label is this machine's name goes
/// through ssh.
#[test]
fn a_tmux_host_is_this_machine_only_by_its_whole_name() {
    let w = World::new();
    let laptop = w.device("laptop");
    let desk = w.device("desk");
    let bin = fakes(w.tmp.path(), FAKES);
    laptop.publish("mine", &[]);
    let host = laptop.show("mine").host;
    let short = host.split('.').next().unwrap().to_string();
    let lookalike = format!("{short}.attacker.example");
    // Each its own tmux session: one endpoint would make them one session.
    desk.publish("here", &["--endpoint", &format!("tmux://{host}/w1")]);
    let upper = short.to_uppercase();
    desk.publish("short", &["--endpoint", &format!("tmux://{upper}/w2")]);
    desk.publish("far", &["--endpoint", &format!("tmux://{lookalike}/work")]);
    let printed = |id: &str| open(&laptop, &bin, &[id, "--print"]).success().stdout;
    assert_eq!(printed("here"), "tmux attach -t w1\n");
    assert_eq!(printed("short"), "tmux attach -t w2\n");
    assert_eq!(
        printed("far"),
        format!("ssh -t -- {lookalike} tmux attach -t work\n")
    );
    open(&laptop, &bin, &["far", "--yes"]).code(7);
    assert_eq!(argv_of(w.tmp.path(), "tmux"), None);
    assert_eq!(
        argv_of(w.tmp.path(), "ssh").unwrap(),
        ["-t", "--", &lookalike, "tmux", "attach", "-t", "work"]
    );
}

/// Ids, keys and prefixes; this device's sessions open without asking;
/// another device's need --yes off a terminal; no ID off a terminal is a
/// usage error.
#[test]
fn resolution_and_confirmation_off_a_terminal() {
    let w = World::new();
    let laptop = w.device("laptop");
    let desk = w.device("desk");
    let bin = fakes(w.tmp.path(), FAKES);
    laptop.publish(
        "mine-1",
        &["--endpoint", "tmux://desk-far/mine", "--key", "k-mine"],
    );
    desk.publish("theirs-1", &["--endpoint", "tmux://desk-far/theirs"]);
    desk.publish("theirs-2", &["--endpoint", "tmux://desk-far/two"]);

    let tmux_session = |w: &World| argv_of(w.tmp.path(), "ssh").map(|a| a[a.len() - 1].clone());
    open(&laptop, &bin, &["mine"]).code(7);
    assert_eq!(tmux_session(&w).as_deref(), Some("mine"));
    open(&laptop, &bin, &["k-mine"]).code(7);
    let r = open(&laptop, &bin, &["theirs"]).code(2);
    assert!(r.stderr.contains("theirs-1, theirs-2"), "{}", r.stderr);
    std::fs::remove_file(w.tmp.path().join("argv-ssh")).unwrap();
    let r = open(&laptop, &bin, &["theirs-2"]).code(2);
    assert!(r.stderr.contains("--yes"), "{}", r.stderr);
    assert_eq!(tmux_session(&w), None);
    open(&laptop, &bin, &["theirs-2", "--yes"]).code(7);
    assert_eq!(tmux_session(&w).as_deref(), Some("two"));
    open(&laptop, &bin, &["nothing-like-it"]).code(1);
    let r = open(&laptop, &bin, &[]).code(2);
    assert!(r.stderr.contains("presence open ID"), "{}", r.stderr);
}

/// `list --json`, `show --json` and `watch --json` rows carry the argv
/// `presence open` would run, or null and the reason.
#[test]
fn json_rows_say_how_to_open() {
    let w = World::new();
    let laptop = w.device("laptop");
    let desk = w.device("desk");
    desk.publish("good", &["--endpoint", "ssh://al@desk-far:2200/"]);
    desk.publish("bad", &["--endpoint", "ssh://-oProxyCommand=x/"]);
    let want = ["ssh", "-t", "-p", "2200", "--", "al@desk-far"].map(String::from);
    let rows = laptop.list(&[]);
    let good = rows.iter().find(|r| r.session_id == "good").unwrap();
    assert_eq!(good.open.as_deref(), Some(&want[..]));
    assert_eq!(good.open_error, None);
    let bad = laptop.show("bad");
    assert_eq!(bad.open, None);
    assert!(
        bad.open_error.as_deref().unwrap().contains("host"),
        "{bad:?}"
    );
    // The initial set, up to `ready`, has an `up` for each.
    let s = Stream::start(&laptop, &["watch", "--json"]);
    let mut up = None;
    loop {
        let e = s.json();
        if e.event == "ready" {
            break;
        }
        if e.session() == Some("good") {
            up = Some(e);
        }
    }
    let (code, stderr) = s.stop();
    assert_eq!(code, Some(0), "{stderr}");
    let up = up.expect("an up event for the session");
    assert_eq!(up.row().open.as_deref(), Some(&want[..]));
}

/// A configured handler replaces the built-in one for its scheme, and
/// `config show` lists it with the built-ins.
#[test]
fn configured_handlers() {
    let w = World::new();
    let laptop = w.device("laptop");
    let desk = w.device("desk");
    let bin = fakes(w.tmp.path(), FAKES);
    let config = std::fs::read_to_string(laptop.config_path()).unwrap();
    laptop.write_config(&format!(
        "{config}\n[open.handlers.tmux]\ncommand = [\"wezterm\", \"ssh\", \"{{user_at_host}}\", \
         \"--\", \"tmux\", \"attach\", \"-t\", \"{{session}}\"]\n\
         [open.handlers.vnc]\ncommand = [\"wezterm\", \"--host={{host}}\", \"{{port}}\", \"{{session_id}}\"]\n\
         inside_tmux = [\"tmux\", \"new-window\", \"vncviewer {{host}}:{{port}}\"]\n"
    ));
    desk.publish("t", &["--endpoint", "tmux://al@desk-far/work"]);
    desk.publish("v", &["--endpoint", "vnc://desk-far:5901"]);
    desk.publish("v2", &["--endpoint", "vnc://desk-far"]);
    open(&laptop, &bin, &["t", "--yes"]).code(7);
    assert_eq!(
        argv_of(w.tmp.path(), "wezterm").unwrap(),
        ["ssh", "al@desk-far", "--", "tmux", "attach", "-t", "work"]
    );
    open(&laptop, &bin, &["v", "--yes"]).code(7);
    assert_eq!(
        argv_of(w.tmp.path(), "wezterm").unwrap(),
        ["--host=desk-far", "5901", "v"]
    );
    // Inside tmux, its `inside_tmux` runs instead.
    let status = with_fakes(laptop.cmd(), &bin)
        .env("TMUX", "/tmp/tmux-0/default,1,0")
        .args(["open", "v", "--yes"])
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(7));
    assert_eq!(
        argv_of(w.tmp.path(), "tmux").unwrap(),
        ["new-window", "vncviewer desk-far:5901"]
    );
    let r = open(&laptop, &bin, &["v2", "--yes"]).code(1);
    assert!(r.stderr.contains("has no port"), "{}", r.stderr);
    assert_eq!(argv_of(w.tmp.path(), "ssh"), None);

    // `{url}` handed to a remote shell is checked like every other value.
    let handlers = std::fs::read_to_string(laptop.config_path()).unwrap();
    laptop.write_config(&format!(
        "{handlers}\n[open.handlers.zed]\ncommand = [\"ssh\", \"desk-far\", \"zed\", \"{{url}}\"]\n"
    ));
    desk.publish("z-bad", &["--endpoint", "zed://desk-far/x;touch%20pwned"]);
    desk.publish("z-ok", &["--endpoint", "zed://desk-far/src/my%20app"]);
    for extra in ["--yes", "--print"] {
        let r = open(&laptop, &bin, &["z-bad", extra]).code(1);
        assert!(
            r.stderr
                .contains("the endpoint \"zed://desk-far/x;touch%20pwned\" is refused"),
            "{}",
            r.stderr
        );
        assert_eq!(r.stdout, "");
    }
    assert_eq!(argv_of(w.tmp.path(), "ssh"), None);
    open(&laptop, &bin, &["z-ok", "--yes"]).code(7);
    assert_eq!(
        argv_of(w.tmp.path(), "ssh").unwrap(),
        ["desk-far", "zed", "zed://desk-far/src/my%20app"]
    );
    std::fs::remove_file(w.tmp.path().join("argv-ssh")).unwrap();
    laptop.write_config(&handlers);

    let shown = laptop.run(&["config", "show"]).success().stdout;
    assert!(
        shown.contains("[open.handlers.tmux]\ncommand = [\"wezterm\""),
        "{shown}"
    );
    assert!(shown.contains("[open.handlers.vnc]"), "{shown}");
    assert!(
        shown.contains("inside_tmux = [\"tmux\", \"new-window\", \"vncviewer {host}:{port}\"]"),
        "{shown}"
    );
    assert!(shown.contains("# ssh (built-in): ssh -t"), "{shown}");
    assert!(
        shown.contains("# https (built-in): xdg-open {url}"),
        "{shown}"
    );
    // The output is TOML that parses.
    toml_parses(&shown);

    laptop.write_config(&format!(
        "{config}\n[open.handlers.x]\ncommand = [\"{{host}}\"]\n"
    ));
    let r = open(&laptop, &bin, &["t", "--yes"]).code(1);
    assert!(r.stderr.contains("[open.handlers.x]"), "{}", r.stderr);
}

fn toml_parses(text: &str) {
    let out = Command::new(require_tool("python3"))
        .args(["-c", "import sys, tomllib; tomllib.loads(sys.stdin.read())"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write as _;
            child.stdin.take().unwrap().write_all(text.as_bytes())?;
            child.wait_with_output()
        })
        .unwrap();
    assert!(out.status.success(), "not TOML:\n{text}");
}

/// Runs `presence ARGS` on a pseudo-terminal with `input` typed in;
/// returns what the terminal showed and the exit status.
fn on_pty(dev: &Device, bin: &Path, args: &str, input: &str) -> (String, i32) {
    on_pty_as(dev, bin, "xterm-256color", args, input)
}

/// [`on_pty`] on a terminal of type `term`.
fn on_pty_as(dev: &Device, bin: &Path, term: &str, args: &str, input: &str) -> (String, i32) {
    let mut cmd = with_fakes(dev.program(require_tool("script")), bin);
    cmd.env("TERM", term)
        .args([
            "-qec",
            &format!("stty cols 200; presence {args}"),
            "/dev/null",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    {
        use std::io::Write as _;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
    }
    let out = child.wait_with_output().unwrap();
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        out.status.code().unwrap_or(-1),
    )
}

/// On a terminal: another device's session asks first (no runs nothing,
/// yes runs); no ID shows the numbered table and opens the chosen row.
#[test]
fn confirmation_and_choice_on_a_terminal() {
    let w = World::new();
    let laptop = w.device("laptop");
    let desk = w.device("desk");
    let bin = fakes(w.tmp.path(), FAKES);
    desk.publish(
        "far-1",
        &["--endpoint", "ssh://desk-far", "--title", "Far away"],
    );

    let (screen, code) = on_pty(&laptop, &bin, "open far-1", "n\n");
    assert_eq!(code, 1, "{screen}");
    assert!(screen.contains("published by another device"), "{screen}");
    assert!(
        screen.contains("Open it by running: ssh -t -- desk-far"),
        "{screen}"
    );
    assert_eq!(argv_of(w.tmp.path(), "ssh"), None);

    let (screen, code) = on_pty(&laptop, &bin, "open far-1", "y\n");
    assert_eq!(code, 7, "{screen}");
    assert_eq!(
        argv_of(w.tmp.path(), "ssh").unwrap(),
        ["-t", "--", "desk-far"]
    );
    std::fs::remove_file(w.tmp.path().join("argv-ssh")).unwrap();

    let (screen, code) = on_pty(&laptop, &bin, "open far-1 --yes", "");
    assert_eq!(code, 7, "{screen}");
    assert!(!screen.contains("Open it?"), "{screen}");
    std::fs::remove_file(w.tmp.path().join("argv-ssh")).unwrap();

    // No ID on a terminal that cannot move its cursor: the rows numbered,
    // each with its command, and a question that takes a number, an id or
    // the start of one, and asks again when the answer names none.
    laptop.publish("near-1", &["--endpoint", "https://example.org/near"]);
    let (screen, code) = on_pty_as(&laptop, &bin, "dumb", "open", "near\n");
    assert_eq!(code, 7, "{screen}");
    let far = screen
        .lines()
        .find(|l| l.contains("far-1"))
        .unwrap_or_default();
    assert!(far.ends_with("  ssh -t -- desk-far"), "{screen}");
    assert!(
        screen.contains("xdg-open https://example.org/near"),
        "{screen}"
    );
    assert_eq!(
        argv_of(w.tmp.path(), "xdg-open").unwrap(),
        ["https://example.org/near"]
    );
    let (screen, code) = on_pty_as(&laptop, &bin, "dumb", "open", "9\n-1\nfar\ny\n");
    assert_eq!(code, 7, "{screen}");
    assert!(
        screen.contains("'9' names no one session of these"),
        "{screen}"
    );
    assert!(
        screen.contains("'-1' names no one session of these"),
        "{screen}"
    );
    assert!(screen.contains("published by another device"), "{screen}");
    assert_eq!(
        argv_of(w.tmp.path(), "ssh").unwrap(),
        ["-t", "--", "desk-far"]
    );
    let (screen, code) = on_pty_as(&laptop, &bin, "dumb", "open", "\n");
    assert_eq!(code, 1, "{screen}");
    assert!(screen.contains("not opened"), "{screen}");
}

/// With no ID, on a terminal: an inline chooser, in a real tmux pane. Only
/// the sessions that can be opened are offered, each with the command Enter
/// runs, and one line says how many were left out and why; typing filters,
/// Enter opens the first match, Enter on no match asks again, Esc and
/// Ctrl-C cancel (exit 1, "not opened"); another device's session is still
/// confirmed.
#[test]
fn the_chooser_filters_opens_and_cancels() {
    let w = World::new();
    let laptop = w.device("laptop");
    let desk = w.device("desk");
    let bin = fakes(w.tmp.path(), FAKES);
    laptop.publish("c3", &[]);
    laptop.publish("moshx", &["--endpoint", "mosh://alice@desktop/x"]);
    laptop.publish("ftp1", &["--endpoint", "ftp://files/x"]);
    laptop.publish(
        "web-docs",
        &[
            "--endpoint",
            "https://example.org/docs",
            "--title",
            "The docs",
        ],
    );
    laptop.publish("work-2", &["--endpoint", "ssh://desk-far/srv/app"]);
    desk.publish("far-1", &["--endpoint", "ssh://desk-far"]);
    let server = TmuxServer {
        tmux: require_tool("tmux"),
        tmpdir: w.tmp.path().join("tmux"),
    };
    std::fs::create_dir_all(&server.tmpdir).unwrap();
    let rc = w.tmp.path().join("rc");
    let script = format!(
        "presence open; echo $? > '{0}.new'; mv '{0}.new' '{0}'; sleep 300",
        rc.display()
    );
    let ok = with_fakes(laptop.program(&server.tmux), &bin)
        .env("TMUX_TMPDIR", &server.tmpdir)
        .env("TERM", "xterm-256color")
        .args([
            "new-session",
            "-d",
            "-s",
            "pick",
            "-x",
            "120",
            "-y",
            "20",
            &script,
        ])
        .status()
        .unwrap();
    assert!(ok.success());
    let screen = || {
        let out = server
            .cmd()
            .args(["capture-pane", "-p", "-t", "pick"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let keys = |keys: &[&str]| {
        let ok = server
            .cmd()
            .args(["send-keys", "-t", "pick"])
            .args(keys)
            .status()
            .unwrap();
        assert!(ok.success());
    };
    let shows = |what: &str| {
        wait_for(&format!("the pane to show {what:?}"), PATIENCE, || {
            let s = screen();
            if s.contains(what) { Ok(s) } else { Err(s) }
        })
        .0
    };
    let ended = || {
        let (code, _) = wait_for("presence open to end", PATIENCE, || {
            std::fs::read_to_string(&rc).map_err(|e| e.to_string())
        });
        std::fs::remove_file(&rc).unwrap();
        code.trim().to_string()
    };
    // From a client with the fakes on its PATH: tmux gives a respawned
    // pane the PATH of the client that asks.
    let again_with = |script: &str| {
        let ok = with_fakes(laptop.program(&server.tmux), &bin)
            .env("TMUX_TMPDIR", &server.tmpdir)
            .args(["respawn-pane", "-k", "-t", "pick", script])
            .status()
            .unwrap();
        assert!(ok.success());
    };

    let again = || again_with(&script);
    let first = shows("left out");
    assert!(
        first.contains(
            "3/3 · 3 left out: 1 without an endpoint, 1 refused, 1 with no handler (ftp)"
        ),
        "{first}"
    );
    for shown in [
        "xdg-open https://example.org/docs",
        "ssh -t -- desk-far 'cd -- /srv/app && exec \"${SHELL:-/bin/sh}\" -l'",
        "far-1",
        "The docs",
    ] {
        assert!(first.contains(shown), "{shown}: {first}");
    }
    for absent in ["c3", "moshx", "ftp1"] {
        assert!(!first.contains(absent), "{absent}: {first}");
    }
    // Nothing matches: Enter asks again.
    keys(&["-l", "zzz"]);
    shows("no session matches");
    keys(&["Enter"]);
    keys(&["C-u"]);
    keys(&["-l", "doc"]);
    shows("Open which session? doc");
    keys(&["Enter"]);
    assert_eq!(ended(), "7", "{}", screen());
    assert_eq!(
        argv_of(w.tmp.path(), "xdg-open").unwrap(),
        ["https://example.org/docs"]
    );

    again();
    shows("left out");
    keys(&["Escape"]);
    assert_eq!(ended(), "1");
    assert!(screen().contains("presence: not opened"), "{}", screen());

    again();
    shows("left out");
    keys(&["-l", "w"]);
    shows("Open which session? w");
    keys(&["C-c"]);
    assert_eq!(ended(), "1");
    assert_eq!(argv_of(w.tmp.path(), "ssh"), None);

    // Arrows, then another device's session: confirmed first.
    again();
    shows("left out");
    keys(&["-l", "far-"]);
    shows("Open which session? far-");
    keys(&["Down", "Up", "Enter"]);
    shows("Open it? [y/N]");
    keys(&["-l", "y"]);
    keys(&["Enter"]);
    assert_eq!(ended(), "7", "{}", screen());
    assert_eq!(
        argv_of(w.tmp.path(), "ssh").unwrap(),
        ["-t", "--", "desk-far"]
    );

    // An id that two devices publish: the chooser among their records,
    // each naming its device.
    let two = w.device("two");
    two.publish("far-1", &["--endpoint", "ssh://desk-two"]);
    let device = two.device_id()[..8].to_string();
    again_with(&script.replace("presence open", "presence open far-1"));
    let shown = shows("2/2");
    assert!(
        shown.contains("published by 2 devices; choose one"),
        "{shown}"
    );
    assert!(shown.contains(&device), "{shown}");
    keys(&["-l", "desk-two"]);
    shows("1/2");
    keys(&["Enter"]);
    shows("Open it? [y/N]");
    keys(&["-l", "y"]);
    keys(&["Enter"]);
    assert_eq!(ended(), "7", "{}", screen());
    assert_eq!(
        argv_of(w.tmp.path(), "ssh").unwrap(),
        ["-t", "--", "desk-two"]
    );
}

/// The confirmation's and the refusals' foreign fields are made safe once,
/// the tool's own line breaks are real, and the command shown keeps the
/// single backslashes of its quoting (it is what `--print` prints).
#[test]
fn foreign_fields_are_escaped_once_and_the_prompt_has_real_lines() {
    let w = World::new();
    let laptop = w.device("laptop");
    let bin = fakes(w.tmp.path(), FAKES);
    let t = crate::harness::now();
    let record = |id: &str, endpoint: &str| {
        serde_json::json!({
            "version": 1, "session_id": id, "session_key": id, "status": "idle",
            "host": "desk\u{202e}\x1b[31m", "device_id": "evil\u{200b}dev",
            "instance_id": "evil-1", "endpoint": endpoint, "profile": "default",
            "updated_at": t, "expires_at": t + 90.0, "metadata": {},
        })
    };
    let plant = |id: &str, endpoint: &str| {
        crate::harness::write_record(
            &w.shared(),
            &format!("evil-1.{id}.json"),
            &record(id, endpoint),
        );
    };
    plant("far-2", "ssh://desk-far/it's%3Bx");
    plant("bad-1", "ssh://desk\u{202e}far/");
    plant("bad-2", "ssh://desk-far/a%E2%80%AEb");

    let printed = open(&laptop, &bin, &["far-2", "--print"]).success().stdout;
    assert!(printed.contains(r"'\''"), "{printed}");
    let (screen, code) = on_pty(&laptop, &bin, "open far-2", "n\n");
    assert_eq!(code, 1, "{screen}");
    let screen = screen.replace("\r\n", "\n");
    let lines: Vec<&str> = screen.lines().collect();
    let asked = lines
        .iter()
        .position(|l| l.starts_with("Session 'far-2'"))
        .unwrap_or_else(|| panic!("no question: {screen:?}"));
    assert_eq!(
        lines[asked],
        r"Session 'far-2' was published by another device, host 'desk\u{202e}\e[31m', device evil\u{200b}dev (unsigned: who wrote it cannot be checked).",
    );
    assert_eq!(
        format!("{}\n", lines[asked + 1]),
        format!("Open it by running: {printed}")
    );
    assert!(
        !screen.contains(r"\n") && !screen.contains(r"\\"),
        "{screen:?}"
    );
    assert_eq!(argv_of(w.tmp.path(), "ssh"), None);

    for (id, shown) in [
        (
            "bad-1",
            r#"endpoint "ssh://desk\u{202e}far/" contains the non-ASCII character U+202E"#,
        ),
        ("bad-2", r#"path "/a\u{202e}b" contains"#),
    ] {
        for extra in ["--yes", "--print"] {
            let r = open(&laptop, &bin, &[id, extra]).code(1);
            assert!(r.stderr.contains(shown), "{id}: {}", r.stderr);
            assert!(!r.stderr.contains(r"\\"), "{id}: {}", r.stderr);
        }
    }
}

/// `open` of a session whose last record expired or ended says so, since
/// when and where it was last seen, instead of "no live session".
#[test]
fn a_session_that_expired_or_ended_says_so() {
    let w = World::new();
    let laptop = w.device("laptop");
    let bin = fakes(w.tmp.path(), FAKES);
    laptop.publish("gone", &["--ttl", "1s", "--endpoint", "ssh://desk-far"]);
    laptop.publish("done-1", &["--endpoint", "ssh://desk-far/x"]);
    let host = laptop.show("gone").host;
    laptop.run(&["clear", "--session", "done-1"]).success();
    wait_until("gone to expire", PATIENCE, || laptop.list(&[]).is_empty());
    for id in ["gone", "gon"] {
        let r = open(&laptop, &bin, &[id]).code(1);
        assert!(
            r.stderr.starts_with("presence: session 'gone' expired ")
                && r.stderr
                    .ends_with(&format!(" ago (last seen on {host}); nothing to open\n")),
            "{id}: {}",
            r.stderr
        );
    }
    let r = open(&laptop, &bin, &["done-1", "--print"]).code(1);
    assert!(
        r.stderr.starts_with("presence: session 'done-1' ended ")
            && r.stderr.contains("(last seen on "),
        "{}",
        r.stderr
    );
    let r = open(&laptop, &bin, &["nosuch"]).code(1);
    assert!(r.stderr.contains("no live session"), "{}", r.stderr);
    assert_eq!(argv_of(w.tmp.path(), "ssh"), None);
}

/// `publish` runs `open`'s parser over the endpoint it is given, as
/// another device would: one that will not open is published with a
/// warning naming why and what to write, and refused under `--strict`
/// (exit 3, nothing written). A scheme only this device has a handler for
/// is a note that other devices need one too.
#[test]
fn publish_warns_of_an_endpoint_that_will_not_open() {
    let w = World::new();
    let laptop = w.device("laptop");
    let cases = [
        (
            "ssh://@vm/gw-1",
            "the endpoint's user \"\" is empty; write --endpoint as ssh://",
        ),
        (
            "mosh://h/path",
            "the endpoint's path \"/path\" is not used by mosh://",
        ),
        ("ftp://files/x", "no handler for scheme 'ftp'"),
        ("tmux://", "the endpoint's host \"\" is empty"),
        (
            "tmux://vm/a;b",
            "the endpoint's session \"a;b\" contains ';'",
        ),
        (
            "ssh://vm/a b",
            "the endpoint \"ssh://vm/a b\" contains whitespace",
        ),
        (
            "ssh://-oProxyCommand=x/y",
            "the endpoint's host \"-oProxyCommand=x\" starts with '-'",
        ),
        ("zed://vm/x", "no handler for scheme 'zed'"),
        (
            "tmux://localhost/main",
            "its host 'localhost' is whichever machine opens it",
        ),
        (
            "http://127.0.0.1:3000/",
            "its host '127.0.0.1' is whichever machine opens it",
        ),
        (
            "ssh://[::1]",
            "its host '::1' is whichever machine opens it",
        ),
        (
            "https://h/x/ghp_abcdefghijklmnopqrstuvwxyz0123456789",
            "the endpoint was redacted",
        ),
    ];
    for (n, (endpoint, why)) in cases.iter().enumerate() {
        let id = format!("ep-{n}");
        let r = laptop.run(&["publish", "--session", &id, "--endpoint", endpoint]);
        let r = r.success();
        assert!(
            r.stderr.contains(&format!(
                "presence: warning: this endpoint will not open: {why}"
            )),
            "{endpoint}: {}",
            r.stderr
        );
        assert!(!laptop.show(&id).endpoint.is_empty(), "{endpoint}");
        let strict = format!("strict-{n}");
        let r = laptop
            .run(&[
                "publish",
                "--session",
                &strict,
                "--endpoint",
                endpoint,
                "--strict",
            ])
            .code(3);
        assert!(
            r.stderr.contains("nothing was written"),
            "{endpoint}: {}",
            r.stderr
        );
        assert!(
            !laptop
                .list(&["--all"])
                .iter()
                .any(|r| r.session_id == strict),
            "{endpoint}: written under --strict"
        );
    }
    // `run` takes --endpoint too.
    let r = laptop
        .run(&[
            "run",
            "--session",
            "r",
            "--endpoint",
            "mosh://h/path",
            "--",
            "true",
        ])
        .success();
    assert!(
        r.stderr.contains("this endpoint will not open"),
        "{}",
        r.stderr
    );
    let r = laptop
        .run(&[
            "run",
            "--session",
            "r",
            "--endpoint",
            "mosh://h/path",
            "--strict",
            "--",
            "true",
        ])
        .code(3);
    assert!(r.stderr.contains("nothing was written"), "{}", r.stderr);
    // Endpoints that open: no word, also under --strict.
    for endpoint in [
        "ssh://al@vm",
        "ssh://vm/~/src",
        "tmux://vm/work:0.1",
        "mosh://vm:22",
        "https://h/x?a=1#b",
    ] {
        let r = laptop
            .run(&[
                "publish",
                "--session",
                "fine",
                "--endpoint",
                endpoint,
                "--strict",
            ])
            .success();
        assert_eq!(r.stderr, "", "{endpoint}");
    }
    // A handler configured here: a note, and --strict publishes.
    let config = std::fs::read_to_string(laptop.config_path()).unwrap();
    laptop.write_config(&format!(
        "{config}\n[open.handlers.zed]\ncommand = [\"zed\", \"{{host}}\"]\n"
    ));
    let r = laptop
        .run(&[
            "publish",
            "--session",
            "z",
            "--endpoint",
            "zed://vm/x",
            "--strict",
        ])
        .success();
    assert!(
        r.stderr.contains(
            "[open.handlers.zed] is configured: this device has one, other devices need one too"
        ),
        "{}",
        r.stderr
    );
    // So does `strict = true` in the profile.
    laptop.write_config(&config.replace("[profiles.default]", "[profiles.default]\nstrict = true"));
    let r = laptop
        .run(&["publish", "--session", "s", "--endpoint", "mosh://h/path"])
        .code(3);
    assert!(
        r.stderr.contains("strict = true (profile 'default')"),
        "{}",
        r.stderr
    );
}

/// Stops the tmux server of a test, whatever happens to the test.
struct TmuxServer {
    tmux: PathBuf,
    tmpdir: PathBuf,
}

impl TmuxServer {
    fn cmd(&self) -> Command {
        let mut c = Command::new(&self.tmux);
        c.env_clear()
            .env("TMUX_TMPDIR", &self.tmpdir)
            .env("TERM", "xterm-256color")
            .env("PATH", std::env::var_os("PATH").unwrap_or_default());
        c
    }
}

impl Drop for TmuxServer {
    fn drop(&mut self) {
        // The panes' processes first: a hang-up of its terminal does not
        // end a `presence run` that is a pane's own process.
        if let Ok(out) = self
            .cmd()
            .args(["list-panes", "-a", "-F", "#{pane_pid}"])
            .stderr(Stdio::null())
            .output()
        {
            let pids = String::from_utf8_lossy(&out.stdout).into_owned();
            let pids: Vec<&str> = pids.split_whitespace().collect();
            if !pids.is_empty() {
                kill("-TERM", &pids);
            }
        }
        let _ = self.cmd().arg("kill-server").stderr(Stdio::null()).status();
    }
}

/// `tmux://THIS-HOST/SESSION` attaches to the local tmux session for real,
/// on a pseudo-terminal, and `presence open` ends when the client detaches.
#[test]
fn a_local_tmux_session_is_attached_for_real() {
    let w = World::new();
    let laptop = w.device("laptop");
    let server = TmuxServer {
        tmux: require_tool("tmux"),
        tmpdir: w.tmp.path().join("tmux"),
    };
    std::fs::create_dir_all(&server.tmpdir).unwrap();
    let ok = server
        .cmd()
        .args([
            "new-session",
            "-d",
            "-s",
            "work",
            "-x",
            "80",
            "-y",
            "24",
            "sleep 300",
        ])
        .status()
        .unwrap();
    assert!(ok.success());
    laptop.publish("s-work", &[]);
    let host = laptop.show("s-work").host;
    laptop.publish("s-work", &["--endpoint", &format!("tmux://{host}/work")]);

    let mut cmd = laptop.program(require_tool("script"));
    cmd.env("TERM", "xterm-256color")
        .env("TMUX_TMPDIR", &server.tmpdir)
        .args(["-qec", "presence open s-work", "/dev/null"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null());
    let mut child = cmd.spawn().unwrap();
    let clients = || {
        let out = server
            .cmd()
            .args(["list-clients", "-F", "#{client_session}"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    wait_for("a client to attach", PATIENCE, || {
        if clients().trim() == "work" {
            Ok(())
        } else {
            Err(format!("exited: {:?}", child.try_wait()))
        }
    });
    assert_eq!(
        child.try_wait().unwrap(),
        None,
        "presence open ended while attached"
    );
    let ok = server
        .cmd()
        .args(["detach-client", "-s", "work"])
        .status()
        .unwrap();
    assert!(ok.success());
    let (status, _) = wait_for("presence open to end once detached", PATIENCE, || {
        child.try_wait().unwrap().ok_or("still attached")
    });
    assert!(status.success(), "{status:?}");
}

/// Inside tmux, `open` of a tmux session on this machine switches the
/// client to it (tmux refuses an attach there, "sessions should be nested
/// with care"); `--print` and `list --json` say what would run there.
#[test]
fn inside_tmux_open_switches_the_client() {
    let w = World::new();
    let laptop = w.device("laptop");
    let server = TmuxServer {
        tmux: require_tool("tmux"),
        tmpdir: w.tmp.path().join("tmux"),
    };
    std::fs::create_dir_all(&server.tmpdir).unwrap();
    laptop.publish("w", &[]);
    let host = laptop.show("w").host;
    laptop.publish("w", &["--endpoint", &format!("tmux://{host}/work")]);
    let tmux = |args: &[&str]| {
        let ok = laptop
            .program(&server.tmux)
            .env("TMUX_TMPDIR", &server.tmpdir)
            .env("TERM", "xterm-256color")
            .args(args)
            .status()
            .unwrap();
        assert!(ok.success(), "tmux {args:?}");
    };
    tmux(&["new-session", "-d", "-s", "work", "sleep 300"]);
    tmux(&["new-session", "-d", "-s", "other", "sleep 300"]);
    // A client on `other`, as a user in a terminal.
    let mut client = laptop.program(require_tool("script"));
    client
        .env("TERM", "xterm-256color")
        .env("TMUX_TMPDIR", &server.tmpdir)
        .args(["-qec", "tmux attach -t other", "/dev/null"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null());
    let _client = crate::harness::KillOnDrop(client.spawn().unwrap());
    let clients = || {
        let out = server
            .cmd()
            .args(["list-clients", "-F", "#{client_session}"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    wait_for("a client on other", PATIENCE, || {
        let c = clients();
        if c == "other" { Ok(()) } else { Err(c) }
    });
    // In that client's pane, the user opens `w`.
    let rc = w.tmp.path().join("rc");
    tmux(&[
        "respawn-pane",
        "-k",
        "-t",
        "other",
        &format!(
            "presence open w --yes 2> '{0}.err'; echo $? > '{0}.new'; mv '{0}.new' '{0}'; sleep 300",
            rc.display()
        ),
    ]);
    let (code, _) = wait_for("presence open to end in the pane", PATIENCE, || {
        std::fs::read_to_string(&rc).map_err(|e| e.to_string())
    });
    let err = std::fs::read_to_string(format!("{}.err", rc.display())).unwrap_or_default();
    assert_eq!(code.trim(), "0", "{err}");
    wait_for("the client to be on work", PATIENCE, || {
        let c = clients();
        if c == "work" { Ok(()) } else { Err(c) }
    });

    // What would run, inside tmux and outside.
    let inside = |args: &[&str]| {
        let out = laptop
            .cmd()
            .env("TMUX", "/tmp/tmux-0/default,1,0")
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    assert_eq!(
        inside(&["open", "w", "--print"]),
        "tmux switch-client -t work\n"
    );
    let rows: Vec<serde_json::Value> = serde_json::from_str(&inside(&["list", "--json"])).unwrap();
    assert_eq!(
        rows[0]["open"],
        serde_json::json!(["tmux", "switch-client", "-t", "work"])
    );
    let printed = laptop.run(&["open", "w", "--print"]).success().stdout;
    assert_eq!(printed, "tmux attach -t work\n");
}

/// Inside tmux, `publish` and `run` default the endpoint to the tmux
/// session they run in; `--endpoint` wins; a patch keeps the endpoint the
/// record has; outside tmux there is none.
#[test]
fn publish_and_run_inside_tmux_default_to_its_session() {
    let w = World::new();
    let laptop = w.device("laptop");
    let server = TmuxServer {
        tmux: require_tool("tmux"),
        tmpdir: w.tmp.path().join("tmux"),
    };
    std::fs::create_dir_all(&server.tmpdir).unwrap();
    // Another client: the same client on the same endpoint would be the
    // run's predecessor, superseded by it (docs/record-format.md).
    let script = "presence publish --session p-plain --client shell \
        && presence publish --session p-given --endpoint ssh://desk-far/ \
        && presence publish --session p-kept --endpoint https://example.org/ \
        && presence publish --session p-kept --status waiting \
        && presence run --session r-run -- sleep 300";
    let ok = laptop
        .program(&server.tmux)
        .env("TMUX_TMPDIR", &server.tmpdir)
        .env("TERM", "xterm-256color")
        .args(["new-session", "-d", "-s", "dev-1", script])
        .status()
        .unwrap();
    assert!(ok.success());
    // A second pane of the same tmux session, same client: its own endpoint,
    // so not a successor of p-plain.
    let ok = laptop
        .program(&server.tmux)
        .env("TMUX_TMPDIR", &server.tmpdir)
        .args([
            "split-window",
            "-t",
            "dev-1:0",
            "presence publish --session p-pane --client shell; sleep 300",
        ])
        .status()
        .unwrap();
    assert!(ok.success());
    let (rows, _) = wait_for("r-run and p-pane to be listed", PATIENCE, || {
        let rows = laptop.list(&[]);
        if rows.iter().any(|r| r.session_id == "r-run")
            && rows.iter().any(|r| r.session_id == "p-pane")
        {
            Ok(rows)
        } else {
            Err(rows)
        }
    });
    let endpoint = |id: &str| {
        rows.iter()
            .find(|r| r.session_id == id)
            .map(|r| r.endpoint.clone())
            .unwrap_or_else(|| panic!("no {id} in {rows:?}"))
    };
    let host = &rows[0].host;
    assert_eq!(endpoint("p-plain"), format!("tmux://{host}/dev-1:0.0"));
    assert_eq!(endpoint("r-run"), format!("tmux://{host}/dev-1:0.0"));
    assert_eq!(endpoint("p-pane"), format!("tmux://{host}/dev-1:0.1"));
    assert_eq!(endpoint("p-given"), "ssh://desk-far/");
    assert_eq!(endpoint("p-kept"), "https://example.org/");
    // `presence open` on that record attaches locally.
    let printed = laptop.run(&["open", "p-plain", "--print"]).success();
    assert_eq!(printed.stdout, "tmux attach -t dev-1:0.0\n");
    // Outside tmux, none.
    laptop.publish("outside", &[]);
    assert_eq!(laptop.show("outside").endpoint, "");
}
