//! The examples in docs/ are checked against the real program.

use std::collections::BTreeSet;
use std::path::Path;

use crate::harness::*;

mod examples;

/// The fenced block that follows `<!-- check: NAME -->` in a docs page.
pub(crate) fn example(page: &str, name: &str) -> String {
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

/// Every file under `dir` (recursively) whose name ends with one of `exts`.
fn files_under(dir: &Path, exts: &[&str], out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            files_under(&p, exts, out);
        } else if exts.iter().any(|x| p.to_string_lossy().ends_with(x)) {
            out.push(p);
        }
    }
}

/// The repository documents itself: no page, comment or message points to a
/// design document that is not in it.
#[test]
fn nothing_refers_to_a_design_document_outside_the_repository() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![root.join("README.md")];
    files_under(
        &root.join("docs"),
        &[".md", ".1", ".service", ".timer", ".plist"],
        &mut files,
    );
    files_under(&root.join("src"), &[".rs"], &mut files);
    assert!(files.len() > 20, "{files:?}");
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        for (n, line) in text.lines().enumerate() {
            assert!(
                !line.contains("DESIGN") && !line.contains('§'),
                "{}:{}: {line}",
                f.display(),
                n + 1
            );
        }
    }
}

#[test]
fn record_format_example_is_a_record_we_read_and_write() {
    let w = World::new();
    let a = w.device("a");
    let mut doc: serde_json::Value =
        serde_json::from_str(&example("record-format.md", "record")).unwrap();
    let file = format!(
        "{}.s-20261130-a1.json",
        doc["instance_id"].as_str().unwrap()
    );
    // As documented, in its one-line form: it verifies (long expired).
    write_record(&w.shared(), &file, &doc);
    let rows = a.list(&["--all"]);
    assert_eq!(rows.len(), 1, "{rows:#?}");
    assert!(
        rows[0].verified && rows[0].forged.is_none(),
        "{:?}",
        rows[0]
    );
    assert_eq!(rows[0].key.as_deref(), doc["key"].as_str());
    // Made live now, keeping its ttl, it no longer proves its writer.
    let t = now();
    let ttl = doc["expires_at"].as_f64().unwrap() - doc["updated_at"].as_f64().unwrap();
    doc["updated_at"] = t.into();
    doc["expires_at"] = (t + ttl).into();
    write_record(&w.shared(), &file, &doc);
    assert!(a.list(&[]).is_empty());
    let rows = a.list(&["--all"]);
    assert_eq!(rows[0].forged.as_deref(), Some("bad_signature"));
    // Unsigned (no key-derived id), as Hermes writes it: listed live.
    for field in ["device_id", "key", "sig"] {
        doc.as_object_mut().unwrap().remove(field);
    }
    write_record(&w.shared(), &file, &doc);
    let rows = a.list(&[]);
    assert_eq!(rows.len(), 1);
    assert!(!rows[0].verified);
    assert_eq!(rows[0].session_id, doc["session_id"]);
    assert_eq!(
        serde_json::to_value(&rows[0].metadata).unwrap(),
        doc["metadata"]
    );
    let mut doc: serde_json::Value =
        serde_json::from_str(&example("record-format.md", "record")).unwrap();
    doc["updated_at"] = t.into();
    // Same fields as what we write.
    a.publish("x", &[]);
    let ours = std::fs::read_dir(w.shared())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(".x.json"))
        .unwrap();
    let ours: serde_json::Value = serde_json::from_slice(&std::fs::read(ours).unwrap()).unwrap();
    assert_eq!(keys(&doc), keys(&ours));
    // That is also the shape `publish --json` prints.
    let _: JsonRecord = parse_json(&doc.to_string(), "record-format.md");
}

/// The documented examples have the typed shape that the tests read the real
/// output with (every field, and no other).
#[test]
fn json_output_example_has_the_fields_list_prints() {
    let w = World::new();
    let a = w.device("a");
    let doc: Vec<JsonRow> = parse_json(&example("json-output.md", "list"), "list example");
    assert_eq!(doc.len(), 1);
    assert!(doc[0].superseded_by.is_none() && doc[0].lost_because.is_none());
    a.publish("s", &[]);
    assert_eq!(a.list(&[]).len(), 1);
    let doc_loser: JsonRow = parse_json(&example("json-output.md", "loser"), "loser example");
    assert!(doc_loser.superseded_by.is_some() && doc_loser.lost_because.is_some());
    let t = now();
    let dir = w.shared();
    let rec = |u: f64| serde_json::json!({"session_id": "c", "profile": "default", "updated_at": u, "expires_at": u + 90.0});
    write_record(&dir, "i.c.json", &rec(t - 1.0));
    write_record(&dir, "i.c.sync-conflict-20261130-101112-ABC.json", &rec(t));
    let all = a.list(&["--all", "--session", "c"]);
    let loser = all.iter().find(|r| r.superseded_by.is_some()).unwrap();
    assert_eq!(loser.lost_because.as_deref(), Some("older"));
}

#[test]
fn refresh_expire_and_doctor_examples_have_the_printed_shape() {
    let _: JsonRefresh = parse_json(&example("json-output.md", "refresh"), "refresh example");
    let _: JsonExpire = parse_json(&example("json-output.md", "expire"), "expire example");
    let checks: Vec<JsonCheck> = parse_json(&example("json-output.md", "doctor"), "doctor example");
    assert!(checks.iter().any(|c| c.fix.is_some()));
}

#[test]
fn watch_example_has_the_printed_shape() {
    let w = World::new();
    let a = w.device("a");
    a.publish("s", &[]);
    let row = a.run(&["list", "--json"]).success().stdout;
    let row = serde_json::from_str::<serde_json::Value>(&row).unwrap()[0].to_string();
    let events: Vec<JsonEvent> = example("json-output.md", "watch")
        .lines()
        .map(|l| JsonEvent::parse(&l.replace("{…}", &row)))
        .collect();
    let initial = events
        .iter()
        .take_while(|e| e.initial == Some(true))
        .count();
    assert_eq!(events[initial].event, "ready");
    assert_eq!(events[initial].count, Some(initial));
    let seqs: Vec<u64> = events.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, (1..=events.len() as u64).collect::<Vec<_>>());
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

/// `config init` sets nothing, and uncommenting its defaults (every
/// `# key = value` before the commented example profile, but the example
/// `dir`) changes nothing that `config show` prints.
#[test]
fn config_init_pins_no_default_and_states_each_one() {
    let w = World::new();
    let a = w.bare_device("a");
    let builtin = a.run(&["config", "show"]).success().stdout;
    a.run(&["config", "init"]).success();
    let written = std::fs::read_to_string(a.config_path()).unwrap();
    let table: toml::Table = toml::from_str(&written).unwrap();
    assert_eq!(
        table.to_string().trim(),
        "[profiles.default]",
        "config init set a value"
    );
    let mut uncommented = String::new();
    let mut keys = BTreeSet::new();
    let mut in_defaults = true;
    let mut stated_elsewhere = BTreeSet::new();
    for line in written.lines() {
        in_defaults &= !line.starts_with("# [profiles.");
        // A table of its own after the profiles (`[discover]`) states its
        // defaults too, commented, without being uncommented here.
        if let Some(setting) = line
            .strip_prefix("# ")
            .filter(|s| !in_defaults && s.contains(" = ") && !s.starts_with("dir "))
        {
            stated_elsewhere.insert(setting.split(' ').next().unwrap().to_string());
        }
        match line.strip_prefix("# ") {
            Some(setting)
                if in_defaults
                    && setting.contains(" = ")
                    && !setting.starts_with("dir ")
                    && !setting.starts_with("dirs ") =>
            {
                keys.insert(setting.split(' ').next().unwrap().to_string());
                uncommented.push_str(setting);
            }
            _ => uncommented.push_str(line),
        }
        uncommented.push('\n');
    }
    a.write_config(&uncommented);
    let stated = a.run(&["config", "show"]).success().stdout;
    let settings = |s: &str| s.lines().skip(1).map(String::from).collect::<Vec<_>>();
    assert_eq!(settings(&stated), settings(&builtin));
    // Every setting `config show` prints, `dir` aside, has its default stated.
    for line in settings(&builtin).iter().filter(|l| l.contains(" = ")) {
        let key = line.split(' ').next().unwrap();
        assert!(
            key == "dir"
                || keys.contains(key)
                || (key == "agents" && stated_elsewhere.contains(key)),
            "no default for {key}"
        );
    }
}

/// What README and configuration.md say `--all-profiles` means: for `list`
/// every label in the selected profile's directory and no other directory,
/// for `refresh` every profile's directory.
#[test]
fn all_profiles_means_labels_for_list_and_directories_for_refresh() {
    let w = World::new();
    let a = w.bare_device("a");
    let d1 = w.tmp.path().join("d1").display().to_string();
    let d2 = w.tmp.path().join("d2").display().to_string();
    a.write_config(&format!(
        "[profiles.default]\ndir = {d1:?}\n[profiles.side]\ndir = {d1:?}\n\
         [profiles.work]\ndir = {d2:?}\n"
    ));
    let owner = std::process::id().to_string();
    a.publish("here", &["--owner-pid", &owner]);
    a.publish("label", &["--owner-pid", &owner, "--profile", "side"]);
    a.publish("there", &["--owner-pid", &owner, "--profile", "work"]);
    assert_eq!(sessions(&a.list(&[])), ["here"]);
    let mut all = sessions(&a.list(&["--all-profiles"]));
    all.sort();
    assert_eq!(all, ["here", "label"]);
    let refreshed = |args: &[&str]| a.json::<JsonRefresh>(args).refreshed;
    assert_eq!(refreshed(&["refresh", "--json"]), 1);
    assert_eq!(refreshed(&["refresh", "--json", "--all-profiles"]), 3);
}

/// The install recipe of lifecycle.md, run as written (with a `systemctl`
/// that only notes its arguments) from the repository's root: it installs
/// the units with the `presence` found on PATH, and `systemd-analyze verify`
/// accepts them.
#[test]
fn systemd_units_install_as_documented_and_verify() {
    use std::os::unix::fs::PermissionsExt;
    let systemd_analyze = require_tool("systemd-analyze");
    let w = World::new();
    let a = w.bare_device("a");
    let fake = w.tmp.path().join("fake-bin");
    std::fs::create_dir(&fake).unwrap();
    let calls = w.tmp.path().join("systemctl-calls");
    let systemctl = fake.join("systemctl");
    std::fs::write(
        &systemctl,
        format!("#!/bin/sh\necho \"$*\" >> '{}'\n", calls.display()),
    )
    .unwrap();
    std::fs::set_permissions(&systemctl, std::fs::Permissions::from_mode(0o755)).unwrap();
    let bin = Path::new(env!("CARGO_BIN_EXE_presence"));
    let path = format!(
        "{}:{}:{}",
        fake.display(),
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = run_ok(
        a.program("sh")
            .arg("-ec")
            .arg(example("lifecycle.md", "systemd"))
            .env("PATH", path)
            .current_dir(root),
    );
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(&calls).unwrap(),
        "--user daemon-reload\n\
         --user enable --now presence-refresh.timer presence-expire.timer\n"
    );

    let installed = a.root.join("home/.config/systemd/user");
    let mut files = Vec::new();
    for e in std::fs::read_dir(root.join("docs/systemd")).unwrap() {
        let name = e.unwrap().file_name();
        let shipped = std::fs::read_to_string(root.join("docs/systemd").join(&name)).unwrap();
        let text = std::fs::read_to_string(installed.join(&name)).unwrap();
        for (s, t) in shipped.lines().zip(text.lines()) {
            match s.strip_prefix("ExecStart=") {
                // Shipped with a bare name, installed with the absolute path.
                Some(cmd) => {
                    assert!(cmd.starts_with("presence "), "{s}");
                    assert_eq!(
                        t,
                        format!("ExecStart={}{}", bin.display(), &cmd["presence".len()..])
                    );
                }
                None => assert_eq!(s, t),
            }
        }
        assert_eq!(shipped.lines().count(), text.lines().count());
        files.push(installed.join(name));
    }
    files.sort();
    assert_eq!(files.len(), 4);
    let out = std::process::Command::new(systemd_analyze)
        .arg("verify")
        .args(&files)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    // Unknown keys are only warnings: any word about our units is a failure.
    assert!(!stderr.contains("presence-"), "{stderr}");
}

#[test]
fn launchd_plists_are_well_formed() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/launchd");
    let script = r#"
import plistlib, sys
for path in sys.argv[1:]:
    with open(path, "rb") as f:
        p = plistlib.load(f)
    assert p["Label"] in path, path
    assert p["ProgramArguments"][-1].startswith('exec "$HOME/.cargo/bin/presence"'), path
    print(p["Label"])
"#;
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    let out = run_ok(
        std::process::Command::new(require_tool("python3"))
            .arg("-c")
            .arg(script)
            .args(&files),
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "dev.presence.expire\ndev.presence.refresh\n"
    );
}

#[test]
fn the_gateway_hook_example_works() {
    let w = World::new();
    let a = w.device("a");
    let hook = w.tmp.path().join("presence-hook.sh");
    std::fs::write(&hook, example("lifecycle.md", "hook")).unwrap();
    let owner = std::process::Command::new(require_tool("sleep"))
        .arg("600")
        .spawn()
        .unwrap();
    let run = |args: &[&str]| {
        let out = a.program("sh").arg(&hook).args(args).output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    run(&["start", "gw-1", "Review PR", &owner.id().to_string()]);
    let rows = a.list(&[]);
    assert_eq!(sessions(&rows), ["gw-1"]);
    assert_eq!(rows[0].client, "gateway");
    assert_eq!(rows[0].pid, owner.id());
    run(&["end", "gw-1"]);
    assert!(a.list(&[]).is_empty());
    // Called wrongly, under `set -u` too: the usage line, exit 2.
    for args in [&[][..], &["stop"][..]] {
        let out = a.program("sh").arg(&hook).args(args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.starts_with("usage: "), "{args:?}: {stderr}");
    }
    let mut owner = owner;
    owner.kill().unwrap();
    owner.wait().unwrap();
}

#[test]
fn the_prompt_segment_example_works() {
    let w = World::new();
    let a = w.device("a");
    let snippet = example("integrations.md", "prompt");
    let run = || {
        let out = run_ok(
            a.program("sh")
                .arg("-c")
                .arg(format!("{snippet}\npresence_segment")),
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    assert_eq!(run(), "");
    a.publish("build-7", &[]);
    a.publish("chat-2", &[]);
    assert_eq!(run(), "[2 live: chat-2 build-7] ");
}

/// The `(program, package)` pairs of scripts/test's `tools` list.
fn set_up_tools() -> Vec<(String, String)> {
    let script =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/test"))
            .unwrap();
    let list = &script[script.find("\ntools=(\n").expect("tools=( in scripts/test")..];
    let list = &list[..list.find("\n)\n").unwrap()];
    list.lines()
        .filter_map(|l| l.trim().strip_prefix('"'))
        .map(|l| {
            let mut words = l.split_whitespace();
            (words.next().unwrap().into(), words.next().unwrap().into())
        })
        .collect()
}

#[test]
fn scripts_test_knows_every_tool_the_tests_use() {
    let listed = set_up_tools();
    for (tool, package) in TOOLS {
        assert!(
            listed.iter().any(|(t, p)| t == tool && p == package),
            "scripts/test does not install {tool} ({package}), which tests require"
        );
    }
    // libfaketime comes with the faketime package.
    assert!(
        listed
            .iter()
            .any(|(t, p)| t == "faketime" && p == "faketime")
    );
}

/// `scripts/test` installs the Hermes release the tests expect.
#[test]
fn scripts_test_installs_the_hermes_release_the_tests_drive() {
    let script =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/test"))
            .unwrap();
    let pinned: Vec<&str> = script
        .lines()
        .filter_map(|l| l.strip_prefix("hermes_version="))
        .collect();
    assert_eq!(pinned, [crate::hermes_venv::HERMES_VERSION], "scripts/test");
}

/// A Hermes environment under `root` that `scripts/test` takes as made
/// here: its marker, a `bin/hermes` naming this venv's python (one naming
/// another path was moved, and is made again) and that python.
fn made_hermes_venv(root: &Path) -> std::path::PathBuf {
    let venv = root.join("venv");
    std::fs::create_dir_all(venv.join("bin")).unwrap();
    std::fs::write(venv.join(crate::hermes_venv::marker()), "").unwrap();
    std::fs::write(
        venv.join("bin/hermes"),
        format!("#!{}/bin/python\n", venv.display()),
    )
    .unwrap();
    // ...and its python can run.
    let python = venv.join("bin/python");
    std::fs::write(&python, "#!/bin/sh\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&python, std::fs::Permissions::from_mode(0o755)).unwrap();
    venv
}

/// A fresh machine, imitated with a PATH that lacks syncthing (and fakes of
/// apt-get and cargo that note their calls): `--check` fails with the
/// install line; as root, the script installs and then runs `cargo test
/// --locked ARGS`; as another user, it prints `sudo apt-get …` and fails
/// without calling either. With this machine's PATH nothing is missing.
#[test]
fn scripts_test_installs_what_is_missing_or_says_how() {
    use std::os::unix::fs::PermissionsExt;
    let (bash, unshare, setpriv) = (
        require_tool("bash"),
        require_tool("unshare"),
        require_tool("setpriv"),
    );
    let syncthing = require_tool("syncthing");
    let w = World::new();
    let root = w.tmp.path();
    // Others must reach the copy of the script and the fakes (see below).
    std::fs::set_permissions(root, std::fs::Permissions::from_mode(0o755)).unwrap();
    let repo = root.join("repo");
    std::fs::create_dir_all(repo.join("scripts")).unwrap();
    let script = repo.join("scripts/test");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/test"),
        &script,
    )
    .unwrap();
    let bin = root.join("bin");
    std::fs::create_dir(&bin).unwrap();
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o777)).unwrap();
    let real_path = std::env::var_os("PATH").unwrap_or_default();
    for (tool, _) in set_up_tools() {
        let found = std::env::split_paths(&real_path)
            .map(|d| d.join(&tool))
            .find(|p| p.is_file())
            .unwrap_or_else(|| panic!("{tool} is not installed: run scripts/test"));
        if tool != "syncthing" {
            std::os::unix::fs::symlink(found, bin.join(&tool)).unwrap();
        }
    }
    // The Hermes environment counts as made: this test is about apt-get.
    let venv = made_hermes_venv(root);
    let log = root.join("calls");
    let fake = |name: &str, body: &str| {
        let p = bin.join(name);
        std::fs::write(
            &p,
            format!("#!/bin/sh\necho \"{name} $*\" >> \"$LOG\"\n{body}"),
        )
        .unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    };
    fake("cargo", "");
    fake(
        "apt-get",
        "[ \"$DEBIAN_FRONTEND\" = noninteractive ] || exit 9\n\
         [ \"$1\" = install ] && /bin/ln -s \"$REAL\" \"$BIN/syncthing\"\nexit 0\n",
    );
    let run = |wrapper: &[&std::ffi::OsStr], args: &[&str]| {
        let mut cmd = match wrapper.split_first() {
            Some((program, rest)) => {
                let mut c = std::process::Command::new(program);
                c.args(rest).arg(&bash);
                c
            }
            None => std::process::Command::new(&bash),
        };
        cmd.arg(&script)
            .args(args)
            .env_clear()
            .env("PATH", &bin)
            .env("LOG", &log)
            .env("BIN", &bin)
            .env("REAL", &syncthing)
            .env("PRESENCE_TEST_HERMES_VENV", &venv)
            .current_dir(root);
        let out = cmd.output().unwrap();
        let calls = std::fs::read_to_string(&log).unwrap_or_default();
        let _ = std::fs::remove_file(&log);
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
            calls,
        )
    };
    let is_root = rustix::process::geteuid().is_root();
    let sudo = if is_root { "" } else { "sudo " };
    let line = "apt-get install -y --no-install-recommends syncthing";
    let direct: &[&std::ffi::OsStr] = &[];

    let (code, stderr, calls) = run(direct, &["--check"]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!("\n    {sudo}{line}\n")),
        "{stderr}"
    );
    assert!(stderr.contains("not installed: syncthing\n"), "{stderr}");
    assert_eq!(calls, "");

    // Root (of a user namespace, if need be): installs, then tests.
    let as_root: &[&std::ffi::OsStr] = &[
        unshare.as_os_str(),
        "--user".as_ref(),
        "--map-root-user".as_ref(),
    ];
    let (code, stderr, calls) = run(as_root, &["--test", "integration", "some_test"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(
        calls,
        format!(
            "apt-get update\napt-get {}\ncargo test --locked --no-fail-fast --test integration some_test\n",
            &line[8..]
        )
    );
    std::fs::remove_file(bin.join("syncthing")).unwrap();

    // Another user: the line to run, and nothing run.
    let nobody: &[&std::ffi::OsStr] = &[
        setpriv.as_os_str(),
        "--reuid=65534".as_ref(),
        "--regid=65534".as_ref(),
        "--clear-groups".as_ref(),
    ];
    let (code, stderr, calls) = run(if is_root { nobody } else { direct }, &[]);
    assert_eq!(code, Some(1), "{stderr}");
    // (More may be missing for that user: tools installed under root's home.)
    assert!(stderr.contains(&format!("\n    sudo {line}")), "{stderr}");
    assert_eq!(calls, "");

    // This machine runs the tests, so it has everything.
    let out = run_ok(
        std::process::Command::new(&bash)
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/test"))
            .arg("--check"),
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "scripts/test: every program the tests use is installed\n"
    );
}

/// A run in which two test binaries fail, one of them without naming a test
/// (as a crash does): scripts/test lets cargo go on past the first failure
/// (`--no-fail-fast`), passes cargo's status on, and ends with every failing
/// test and binary, the totals and the wall time, even when a process left
/// behind holds cargo's output open. With `--under-load` it builds first,
/// runs the tests beside busy loops, and stops the loops.
#[test]
fn scripts_test_names_every_failure_and_stops_its_load() {
    use std::os::unix::fs::PermissionsExt;
    let bash = require_tool("bash");
    require_tool("pgrep");
    let w = World::new();
    let root = w.tmp.path();
    let bin = root.join("bin");
    std::fs::create_dir(&bin).unwrap();
    let venv = made_hermes_venv(root);
    let log = root.join("calls");
    let loops = root.join("loops");
    // The fake cargo notes its calls and, while the tests "run", the busy
    // loops beside it: the script's children (cargo's parent, or the
    // parent's parent when cargo runs in a subshell) that spin, once $WANT
    // of them have started (a loop just forked may not have exec'd yet).
    std::fs::write(
        bin.join("cargo"),
        "#!/bin/bash\necho \"cargo $*\" >> \"$LOG\"\n\
         [[ $* == *--no-run* ]] && exit 0\n\
         [[ -n $LEAK ]] && { sleep 60 & echo $! > \"$LEAK\"; }\n\
         read -r _ _ _ up _ < /proc/$PPID/stat\n\
         for _ in $(seq 600); do\n\
         \x20 pgrep -f -P $PPID,$up '^bash -c while :; do :; done$' > \"$LOOPS\"\n\
         \x20 [ \"$(wc -l < \"$LOOPS\")\" -ge \"$WANT\" ] && break\n\
         \x20 sleep 0.1\n\
         done\n\
         cat <<'X'\n\
         \x20    Running unittests src/lib.rs (target/debug/deps/presence-0123)\n\
         test a::fine ... ok\n\
         test watch::fs_tests::broken ... FAILED\n\
         test watch::fs_tests::split ... a child's output\n\
         FAILED\n\
         \n\
         failures:\n\
         \n\
         ---- watch::fs_tests::broken stdout ----\n\
         \x20    not_a_test_name\n\
         \n\
         failures:\n\
         \x20   watch::fs_tests::broken\n\
         \x20   watch::fs_tests::split\n\
         \n\
         test result: FAILED. 1 passed; 2 failed; 0 ignored; 0 measured; 0 filtered out; finished in 1.00s\n\
         error: test failed, to rerun pass `--lib`\n\
         \x20    Running tests/integration/main.rs (target/debug/deps/integration-0123)\n\
         error: test failed, to rerun pass `--test integration`\n\
         \x20  Doc-tests presence\n\
         test result: ok. 6 passed; 0 failed; 2 ignored; 0 measured; 0 filtered out; finished in 0.08s\n\
         error: 2 targets failed:\n\
         X\nexit 101\n",
    )
    .unwrap();
    std::fs::set_permissions(bin.join("cargo"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = std::env::join_paths(std::iter::once(bin.clone()).chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .unwrap();
    let leak = root.join("leak");
    let run = |args: &[&str], loops_wanted: &str, leak: &Path| {
        let out = std::process::Command::new(&bash)
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/test"))
            .args(args)
            .env("WANT", loops_wanted)
            .env("LEAK", leak)
            .env("PATH", &path)
            .env("LOG", &log)
            .env("LOOPS", &loops)
            .env("PRESENCE_TEST_HERMES_VENV", &venv)
            .output()
            .unwrap();
        let calls = std::fs::read_to_string(&log).unwrap_or_default();
        let _ = std::fs::remove_file(&log);
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            calls,
        )
    };

    // A process left behind holds cargo's output open: the run still ends
    // once cargo has.
    let (code, stdout, calls) = run(&["--lib"], "0", &leak);
    let leaked = std::fs::read_to_string(&leak).unwrap();
    assert!(
        Path::new("/proc").join(leaked.trim()).exists(),
        "the process left behind ended first"
    );
    assert!(kill("-KILL", &[leaked.trim()]));
    assert_eq!(code, Some(101), "{stdout}");
    assert_eq!(calls, "cargo test --locked --no-fail-fast --lib\n");
    // Every failing test once, named with its binary (the one whose result
    // line a child's output broke up from the list at the binary's end),
    // the crashed binary, the wall time and the totals.
    let summary = regex::Regex::new(
        "\nscripts/test: failing tests:\n    \
         unittests src/lib.rs: watch::fs_tests::broken\n    \
         unittests src/lib.rs: watch::fs_tests::split\n\
         scripts/test: test binaries that failed without naming a failing test \\(a crash\\?\\):\n    \
         tests/integration/main.rs \\(cargo test `--test integration`\\)\n\
         scripts/test: took [0-9]+m[0-9]{2}s on a machine left to itself\n\
         scripts/test: 7 passed, 2 failed, 2 skipped\n$",
    )
    .unwrap();
    assert!(summary.is_match(&stdout), "{stdout}");
    assert_eq!(std::fs::read_to_string(&loops).unwrap(), "");

    let (code, stdout, calls) = run(&["--under-load", "--lib"], "2", Path::new(""));
    assert_eq!(code, Some(101), "{stdout}");
    assert_eq!(
        calls,
        "cargo test --locked --no-run --lib\ncargo test --locked --no-fail-fast --lib\n"
    );
    assert!(stdout.contains(" with 2 busy loop(s)\n"), "{stdout}");
    let pids = std::fs::read_to_string(&loops).unwrap();
    assert_eq!(pids.lines().count(), 2, "{pids}");
    // Stopped when the run ended (and reaped: no process is left).
    for pid in pids.lines() {
        assert!(
            !Path::new("/proc").join(pid).exists(),
            "busy loop {pid} still runs"
        );
    }
}
