//! How errors read: a configuration error keeps the lines of its caret
//! diagram, an OS error is told once, and a value that came from the
//! environment or the configuration file is named with its source and the
//! fix for that source.

use crate::harness::{Device, Run, World};

/// `presence ARGS` with `env` set on top of the device's environment.
fn run_with(dev: &Device, env: &[(&str, &str)], args: &[&str]) -> Run {
    let mut cmd = dev.cmd();
    cmd.args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("run presence");
    Run {
        args: args.iter().map(|s| s.to_string()).collect(),
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The config with a typo on its third line.
const TYPO: &str = "default_profile = \"default\"\n[profiles.default]\ntll = \"90s\"\n";

/// The caret diagram of [`TYPO`] as its own lines after `head`, indented by
/// `indent`: no `\n` written out.
fn assert_diagram(text: &str, head: &str, indent: &str) {
    assert!(!text.contains("\\n"), "a newline written out:\n{text}");
    let lines: Vec<&str> = text.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.starts_with(head))
        .unwrap_or_else(|| panic!("no line starts with {head:?}:\n{text}"));
    assert!(
        lines[at].ends_with("is invalid: TOML parse error at line 3, column 1"),
        "{text}"
    );
    let want = [
        "  |".to_string(),
        "3 | tll = \"90s\"".to_string(),
        "  | ^^^".to_string(),
        "unknown field `tll`, expected one of `dir`".to_string(),
    ];
    for (i, want) in want.iter().enumerate() {
        let line = lines.get(at + 1 + i).copied().unwrap_or_default();
        let rest = line
            .strip_prefix(indent)
            .unwrap_or_else(|| panic!("line {line:?} is not indented by {indent:?}:\n{text}"));
        assert!(
            rest.starts_with(want.as_str()),
            "{line:?}, want {want:?}:\n{text}"
        );
    }
}

#[test]
fn a_config_typo_shows_its_caret_diagram_in_lines_in_every_command() {
    let w = World::new();
    let a = w.bare_device("a");
    a.write_config(TYPO);
    for args in [
        &["list"][..],
        &["publish", "--session", "s"],
        &["show", "s"],
        &["expire"],
    ] {
        let out = a.run(args).code(1);
        assert_diagram(
            &out.stderr,
            "presence: error: cannot load the configuration: config file ",
            "  ",
        );
    }
}

#[test]
fn doctor_shows_the_diagram_in_lines_and_a_fix_for_where_the_file_came_from() {
    let w = World::new();
    let a = w.bare_device("a");
    a.write_config(TYPO);
    let config = a.config_path();
    let config = config.to_str().unwrap();
    let column = " ".repeat(23);
    let fix = |out: &Run| {
        out.stdout
            .lines()
            .find_map(|l| l.trim_start().strip_prefix("fix: ").map(String::from))
            .unwrap_or_else(|| panic!("no fix:\n{}", out.stdout))
    };

    let out = a.run(&["doctor"]).code(1);
    assert_diagram(
        &out.stdout,
        "FAIL  config           config file ",
        &format!("{column}  "),
    );
    assert_eq!(fix(&out), "fix the line shown in the file");

    let out = a.run(&["--config", config, "doctor"]).code(1);
    assert_diagram(&out.stdout, "FAIL  config", &format!("{column}  "));
    assert_eq!(
        fix(&out),
        "fix the line shown in the file, or drop --config to use the default file"
    );

    let out = run_with(&a, &[("PRESENCE_CONFIG", config)], &["doctor"]).code(1);
    assert_eq!(
        fix(&out),
        "fix the line shown in the file, or unset PRESENCE_CONFIG to use the default file"
    );

    // JSON keeps the whole message in one string.
    let out = a.run(&["doctor", "--json"]).code(1);
    let checks: Vec<crate::harness::JsonCheck> = crate::harness::parse_json(&out.stdout, "doctor");
    assert!(
        checks[0].message.contains("\n  3 | tll = \"90s\"\n"),
        "{checks:?}"
    );
}

/// Only the parser's diagram keeps its lines: a newline in a path (or a
/// file name) in any other message is still shown as `\n`.
#[test]
fn a_newline_in_a_path_stays_written_out() {
    let w = World::new();
    let a = w.bare_device("a");
    let file = w.tmp.path().join("two\nlines");
    std::fs::write(&file, "x").unwrap();
    let out = a.run(&["--dir", file.to_str().unwrap(), "list"]).code(1);
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    assert!(out.stderr.contains("two\\nlines"), "{}", out.stderr);
}

#[test]
fn an_os_error_is_told_once_and_a_file_given_as_dir_is_named_with_the_fix() {
    let w = World::new();
    let a = w.bare_device("a");
    let file = w.tmp.path().join("afile");
    std::fs::write(&file, "x").unwrap();
    let file = file.to_str().unwrap();

    let under = format!("{file}/config.toml");
    let out = a.run(&["--config", &under, "list"]).code(1);
    assert_eq!(
        out.stderr.matches("Not a directory (os error 20)").count(),
        1,
        "{}",
        out.stderr
    );

    for args in [&["list"][..], &["publish", "--session", "s"]] {
        let mut all = vec!["--dir", file];
        all.extend_from_slice(args);
        let out = a.run(&all).code(1);
        assert!(
            out.stderr.contains(&format!(
                "{file} is not a directory; point --dir (or the profile's `dir` in the config \
                 file) at a directory"
            )),
            "{}",
            out.stderr
        );
        assert!(
            out.stderr.matches("os error").count() <= 1,
            "{}",
            out.stderr
        );
    }
}

#[test]
fn a_profile_from_the_environment_is_named_with_its_fix() {
    let w = World::new();
    let a = w.bare_device("a");
    let config = a.config_path();
    let config = config.to_str().unwrap();

    let out = run_with(&a, &[("PRESENCE_PROFILE", "work")], &["list"]).code(2);
    assert!(
        out.stderr.contains(&format!(
            "unknown profile 'work' (from $PRESENCE_PROFILE; known: default); unset \
             PRESENCE_PROFILE or define [profiles.work] in {config}"
        )),
        "{}",
        out.stderr
    );
    // --profile says nothing of the environment.
    let out = a.run(&["--profile", "work", "list"]).code(2);
    assert!(
        out.stderr
            .contains("unknown profile 'work' (known: default)")
            && !out.stderr.contains("PRESENCE_PROFILE"),
        "{}",
        out.stderr
    );
    // --profile given on top of the environment is what is named.
    let out = run_with(
        &a,
        &[("PRESENCE_PROFILE", "default")],
        &["--profile", "work", "list"],
    )
    .code(2);
    assert!(!out.stderr.contains("PRESENCE_PROFILE"), "{}", out.stderr);

    let out = a.run(&["--profile", "", "list"]).code(2);
    assert!(
        out.stderr
            .contains("--profile '' names no profile (known: default)")
            && !out.stderr.contains("[profiles.]"),
        "{}",
        out.stderr
    );
    // Set but empty is unset.
    run_with(&a, &[("PRESENCE_PROFILE", "")], &["list"]).success();

    let missing = w.tmp.path().join("nope.toml");
    let missing = missing.to_str().unwrap();
    let out = run_with(&a, &[("PRESENCE_CONFIG", missing)], &["list"]).code(2);
    assert!(
        out.stderr.contains(&format!(
            "config file {missing} (from $PRESENCE_CONFIG) does not exist"
        )) && out
            .stderr
            .contains("unset PRESENCE_CONFIG to use the defaults")
            && !out.stderr.contains("--config"),
        "{}",
        out.stderr
    );
}

#[test]
fn config_file_mistakes_name_the_key_and_exit_1() {
    let w = World::new();
    let a = w.bare_device("a");
    let cases = [
        (
            "default_profile = \"nope\"\n",
            "default_profile = \"nope\" in ",
        ),
        (
            "[profiles.default]\nttl = 1.5\n",
            "ttl = 1.5 is not a whole number of seconds; write ttl = \"1.5s\"",
        ),
        (
            "[profiles.default]\nshow = \"*\"\n",
            "show = \"*\" is one text, and show is a list of labels: write show = [\"*\"]",
        ),
    ];
    for (text, want) in cases {
        a.write_config(text);
        let out = a.run(&["list"]).code(1);
        assert!(out.stderr.contains(want), "{text:?}:\n{}", out.stderr);
        assert!(!out.stderr.contains("untagged"), "{}", out.stderr);
    }
}

#[test]
fn a_ttl_out_of_range_names_the_flag() {
    let w = World::new();
    let a = w.device("a");
    for (ttl, shown) in [("0", "0s"), ("2h", "2h")] {
        let out = a.run(&["publish", "--session", "s", "--ttl", ttl]).code(2);
        assert!(
            out.stderr.contains(&format!(
                "'--ttl <DUR>': {shown} is out of range; use 1s to 1h"
            )),
            "{}",
            out.stderr
        );
        assert!(!out.stderr.contains("invalid record"), "{}", out.stderr);
    }
    assert!(a.list(&[]).is_empty());
}

/// `config edit`: the example written when there is no file, the file
/// opened in `$VISUAL` (else `$EDITOR`, which may carry arguments), and
/// what was saved checked: a mistake is shown as every command shows it,
/// with the way back, and exits 1; an editor that fails is said.
#[test]
fn config_edit_opens_the_editor_and_checks_what_was_saved() {
    let w = World::new();
    let a = w.bare_device("a");
    // The editor appends $EXTRA (and its first argument, when it has two,
    // exits with that status).
    crate::harness::fake_program(
        &w,
        "editor",
        "#!/bin/sh\nif [ $# -eq 2 ]; then code=$1; shift; fi\n\
         printf '%b' \"$EXTRA\" >> \"$1\"\n\
         if [ -n \"$WAIT\" ]; then : > \"$WAIT.started\"; \
         while [ ! -e \"$WAIT\" ]; do sleep 0.05; done; fi\n\
         exit ${code:-0}\n",
    );
    let editor = crate::harness::fake_bin(&w)
        .join("editor")
        .display()
        .to_string();
    let config = a.config_path();
    assert!(!config.exists());
    let extra = "\n[profiles.work]\ndir = \"~/work-presence\"\n";
    let out = run_with(
        &a,
        &[("EDITOR", &editor), ("EXTRA", extra)],
        &["config", "edit"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let text = std::fs::read_to_string(&config).unwrap();
    assert!(text.ends_with(extra), "{text}");
    assert!(
        out.stdout.contains(&format!(
            "wrote {} (the commented example)",
            config.display()
        )),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains(&format!("{}: ok (", config.display())) && out.stdout.contains("work"),
        "{}",
        out.stdout
    );
    // A typo: the caret diagram in lines, exit 1, the way back.
    a.write_config("");
    let out = run_with(
        &a,
        &[("VISUAL", &editor), ("EDITOR", "false"), ("EXTRA", TYPO)],
        &["config", "edit"],
    );
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert_diagram(
        &out.stderr,
        &format!(
            "presence: error: {} as saved is not a configuration presence can use: config file ",
            config.display()
        ),
        "  ",
    );
    assert!(
        out.stderr.contains("run `presence config edit` again"),
        "{}",
        out.stderr
    );
    // What commands pick is checked too: a default_profile that names no
    // profile.
    a.write_config("");
    let out = run_with(
        &a,
        &[
            ("EDITOR", &editor),
            ("EXTRA", "default_profile = \"wrok\"\n"),
        ],
        &["config", "edit"],
    );
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(out.stderr.contains("wrok"), "{}", out.stderr);
    // A FIFO is never handed to the editor (it would hang).
    std::fs::remove_file(&config).unwrap();
    rustix::fs::mknodat(
        rustix::fs::CWD,
        &config,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
    let out = run_with(
        &a,
        &[("EDITOR", &editor), ("EXTRA", "x")],
        &["config", "edit"],
    );
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("is not a regular file"),
        "{}",
        out.stderr
    );
    std::fs::remove_file(&config).unwrap();
    a.write_config("");
    // A Ctrl-C while the editor runs is the editor's: presence waits on
    // and checks what was saved.
    let wait = w.tmp.path().join("done-editing");
    let mut child = a
        .cmd()
        .args(["config", "edit"])
        .env("EDITOR", &editor)
        .env("EXTRA", "")
        .env("WAIT", &wait)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = wait.with_extension("started");
    crate::harness::wait_until("the editor started", crate::harness::PATIENCE, || {
        started.exists()
    });
    rustix::process::kill_process(
        rustix::process::Pid::from_child(&child),
        rustix::process::Signal::INT,
    )
    .unwrap();
    std::fs::write(&wait, "").unwrap();
    let code = child.wait().unwrap().code();
    let mut stdout = String::new();
    std::io::Read::read_to_string(child.stdout.as_mut().unwrap(), &mut stdout).unwrap();
    assert_eq!(code, Some(0), "{stdout}");
    assert!(
        stdout.contains(&format!("{}: ok (", config.display())),
        "{stdout}"
    );
    // An editor that fails: said, and nothing checked.
    let out = run_with(
        &a,
        &[("EDITOR", &format!("{editor} 3")), ("EXTRA", "")],
        &["config", "edit"],
    );
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("exited with exit status: 3") && out.stderr.contains("was not checked"),
        "{}",
        out.stderr
    );
}
