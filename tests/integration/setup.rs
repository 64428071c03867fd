//! `presence setup` and `--uninstall` against a temp home: a Syncthing
//! folder (a fake `config.xml` and `.stfolder`, no daemon), an existing
//! configuration with comments and another profile, an existing
//! `.stignore`. No systemd user manager can run in the test environment, so
//! the units are checked as files (`systemd-analyze verify`) and
//! `systemctl` is a stand-in that notes its calls; the Debian package's
//! copies of the units are checked against docs/systemd here too.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::harness::{
    Device, Run, World, fake_bin, fake_crontab, fake_program, parse_json, require_tool,
};

/// A stand-in `systemctl` first on PATH: it appends its arguments to
/// `calls`; with `works`, `--user` calls succeed (a user manager answers),
/// and `is-enabled` succeeds (and `is-active` says the timer is) once
/// `enable` was called.
struct Systemctl {
    bin: PathBuf,
    calls: PathBuf,
}

impl Systemctl {
    fn new(w: &World, works: bool) -> Self {
        let bin = fake_bin(w);
        let calls = w.tmp.path().join("systemctl-calls");
        let script = if works {
            format!(
                "#!/bin/sh\necho \"$*\" >> '{c}'\n\
                 case \"$*\" in *is-enabled*) grep -q 'enable --now' '{c}' || exit 1; \
                 echo enabled; echo enabled;;\n\
                 *is-active*) grep -q 'enable --now' '{c}' || {{ echo inactive; echo inactive; \
                 exit 3; }}; echo active; echo inactive;; esac\nexit 0\n",
                c = calls.display()
            )
        } else {
            format!(
                "#!/bin/sh\necho \"$*\" >> '{}'\necho 'Failed to connect to bus' >&2\nexit 1\n",
                calls.display()
            )
        };
        std::fs::write(bin.join("systemctl"), script).unwrap();
        std::fs::set_permissions(
            bin.join("systemctl"),
            std::fs::Permissions::from_mode(0o755),
        )
        .unwrap();
        Systemctl { bin, calls }
    }

    /// The calls that change something (not the questions).
    fn changes(&self) -> Vec<String> {
        std::fs::read_to_string(&self.calls)
            .unwrap_or_default()
            .lines()
            .filter(|l| {
                !l.contains("show-environment")
                    && !l.contains("is-enabled")
                    && !l.contains("is-active")
                    && !l.starts_with("--user cat ")
            })
            .map(str::to_string)
            .collect()
    }
}

fn setup(d: &Device, sc: &Systemctl, args: &[&str]) -> Run {
    setup_by(d, sc, Path::new(env!("CARGO_BIN_EXE_presence")), args)
}

/// `setup` run by the binary at `bin` (a copy of presence's).
fn setup_by(d: &Device, sc: &Systemctl, bin: &Path, args: &[&str]) -> Run {
    let path = format!(
        "{}:{}",
        sc.bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    setup_on(d, &path, bin, args)
}

/// `setup` run by the binary at `bin` with PATH set to `path`.
fn setup_on(d: &Device, path: &str, bin: &Path, args: &[&str]) -> Run {
    let mut cmd = d.program(bin);
    cmd.env("PATH", path).arg("setup").args(args);
    let out = cmd.output().unwrap();
    let mut all = vec!["setup"];
    all.extend_from_slice(args);
    let r = Run {
        args: all.iter().map(|s| s.to_string()).collect(),
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    assert!(r.stderr.is_empty() || r.code != 0, "{}", r.stderr);
    r
}

/// Every file and directory under `root`: its mode, and a file's bytes
/// (a link's: where it leads).
fn tree(root: &Path) -> BTreeMap<PathBuf, (u32, Option<Vec<u8>>)> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            let m = std::fs::symlink_metadata(&p).unwrap();
            let mode = m.permissions().mode();
            if m.is_dir() {
                stack.push(p.clone());
                out.insert(p, (mode, None));
            } else if m.is_symlink() {
                let to = std::fs::read_link(&p).unwrap();
                out.insert(p, (mode, Some(to.into_os_string().into_encoded_bytes())));
            } else if m.is_file() {
                out.insert(p.clone(), (mode, Some(std::fs::read(&p).unwrap())));
            } else {
                // A FIFO, which a read would wait on.
                out.insert(p, (mode, None));
            }
        }
    }
    out
}

const CONFIG: &str = "# My presence settings.\n\
default_profile = \"default\"   # keep this\n\
\n\
[profiles.default]\n\
# ttl: how long a record lives without a refresh\n\
ttl = \"90s\"\n\
\n\
[profiles.work]   # the team's folder\n\
dir = \"~/Work/presence\"\n\
label = \"team\"\n";

const STIGNORE: &str = "// my own ignores\n*.bak\n!keep.tmp\n";

/// A device whose home has a Syncthing folder `~/Sync` (named in
/// Syncthing's config.xml, marked with `.stfolder`), a configuration with
/// comments and a second profile, and a `.stignore` of its own.
fn syncthing_home(w: &World) -> (Device, PathBuf) {
    let d = w.bare_device("a");
    let home = d.root.join("home");
    let sync = home.join("Sync");
    std::fs::create_dir_all(&sync).unwrap();
    std::fs::write(sync.join(".stfolder"), "").unwrap();
    std::fs::write(sync.join(".stignore"), STIGNORE).unwrap();
    let st = d.root.join("config/syncthing");
    std::fs::create_dir_all(&st).unwrap();
    std::fs::write(
        st.join("config.xml"),
        "<configuration version=\"37\">\n    <folder id=\"default\" label=\"Default Folder\" \
         path=\"~/Sync\" type=\"sendreceive\">\n    </folder>\n</configuration>\n",
    )
    .unwrap();
    d.write_config(CONFIG);
    (d, sync)
}

#[test]
fn setup_writes_in_place_is_idempotent_and_uninstalls() {
    let systemd_analyze = require_tool("systemd-analyze");
    let w = World::new();
    let (d, sync) = syncthing_home(&w);
    let sc = Systemctl::new(&w, false);
    let dir = sync.join("presence");
    let dir_arg = dir.display().to_string();
    let args = ["--yes", "--dir", &dir_arg, "--timer", "systemd"];

    // --dry-run: the whole plan printed, nothing touched.
    let before = tree(&d.root);
    let mut dry = args.to_vec();
    dry.push("--dry-run");
    let r = setup(&d, &sc, &dry).success();
    assert_eq!(tree(&d.root), before, "--dry-run changed files");
    let plan: Vec<&str> = r
        .stdout
        .lines()
        .filter(|l| l.starts_with("would "))
        .collect();
    assert_eq!(plan.len(), 7, "{}", r.stdout);
    assert!(
        r.stdout
            .contains("set [profiles.default] dir = \"~/Sync/presence\"")
    );
    assert!(r.stdout.contains("(mode 0700)"), "{}", r.stdout);
    assert!(r.stdout.contains(".stignore"), "{}", r.stdout);

    // The first run.
    let r = setup(&d, &sc, &args).success();
    assert!(r.stdout.contains("doctor: "), "{}", r.stdout);
    assert!(!r.stdout.contains("FAIL"), "{}", r.stdout);
    // Only the one key was added; comments, order and the other profile stay.
    let config = std::fs::read_to_string(d.config_path()).unwrap();
    assert_eq!(
        config,
        CONFIG.replace(
            "ttl = \"90s\"\n",
            "ttl = \"90s\"\ndir = \"~/Sync/presence\"\n"
        )
    );
    let mode = std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700);
    let stignore = std::fs::read_to_string(sync.join(".stignore")).unwrap();
    assert_eq!(
        stignore.lines().filter(|l| *l == "(?d).*.tmp").count(),
        1,
        "{stignore}"
    );
    assert!(stignore.ends_with(STIGNORE), "{stignore}");
    // Above the user's `!keep.tmp`, so doctor finds temp files ignored.
    assert!(
        r.stdout.contains("temp files are kept out of the sync"),
        "{}",
        r.stdout
    );

    // The units start this very binary and verify.
    let bin = std::fs::canonicalize(env!("CARGO_BIN_EXE_presence")).unwrap();
    let units = d.root.join("config/systemd/user");
    let mut files = Vec::new();
    for name in [
        "presence-refresh.service",
        "presence-refresh.timer",
        "presence-expire.service",
        "presence-expire.timer",
    ] {
        let text = std::fs::read_to_string(units.join(name)).unwrap();
        if name.ends_with(".service") {
            let exec = text.lines().find(|l| l.starts_with("ExecStart=")).unwrap();
            assert!(
                exec.starts_with(&format!("ExecStart={} ", bin.display())),
                "{exec}"
            );
        }
        files.push(units.join(name));
    }
    let out = std::process::Command::new(systemd_analyze)
        .arg("verify")
        .args(&files)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && !stderr.contains("presence-"),
        "{stderr}"
    );
    // No user manager: nothing was enabled, and the command to do it is shown.
    assert!(sc.changes().is_empty(), "{:?}", sc.changes());
    assert!(
        r.stdout
            .contains("systemctl --user enable --now presence-refresh.timer presence-expire.timer"),
        "{}",
        r.stdout
    );

    // The second run changes nothing and says so, and that nothing
    // refreshes yet.
    let after_first = tree(&d.root);
    let r = setup(&d, &sc, &args).success();
    assert!(
        r.stdout.starts_with(
            "nothing to change, but nothing refreshes records: no systemd user manager answers"
        ),
        "{}",
        r.stdout
    );
    assert_eq!(tree(&d.root), after_first, "a second run changed files");
    // Without --dir it keeps the configured directory.
    let r = setup(&d, &sc, &["--yes", "--timer", "systemd"]).success();
    assert!(r.stdout.starts_with("nothing to change"), "{}", r.stdout);

    // A record, then --uninstall: units and the .stignore lines go; the
    // configuration and the record stay.
    d.publish("s1", &[]);
    let records = std::fs::read_dir(&dir).unwrap().count();
    assert!(records > 0);
    let before = tree(&d.root);
    let r = setup(&d, &sc, &["--uninstall", "--dry-run"]).success();
    assert_eq!(
        r.stdout
            .lines()
            .filter(|l| l.starts_with("would remove"))
            .count(),
        5
    );
    assert_eq!(tree(&d.root), before, "--uninstall --dry-run changed files");
    setup(&d, &sc, &["--uninstall", "--yes"]).success();
    assert_eq!(
        std::fs::read_to_string(sync.join(".stignore")).unwrap(),
        STIGNORE
    );
    for f in &files {
        assert!(!f.exists(), "{} is left", f.display());
    }
    assert_eq!(std::fs::read_to_string(d.config_path()).unwrap(), config);
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), records);
    let r = setup(&d, &sc, &["--uninstall", "--yes"]).success();
    assert!(r.stdout.starts_with("nothing to change"), "{}", r.stdout);
}

#[test]
fn setup_enables_the_timers_where_a_user_manager_answers() {
    let w = World::new();
    let (d, sync) = syncthing_home(&w);
    let sc = Systemctl::new(&w, true);
    let dir = sync.join("presence").display().to_string();
    // No --timer: systemd, because `systemctl --user` answers.
    setup(&d, &sc, &["--yes", "--dir", &dir]).success();
    assert_eq!(
        sc.changes(),
        [
            "--user daemon-reload",
            "--user enable --now presence-refresh.timer presence-expire.timer"
        ]
    );
    let r = setup(&d, &sc, &["--yes"]).success();
    assert!(r.stdout.starts_with("nothing to change"), "{}", r.stdout);
    assert_eq!(sc.changes().len(), 2, "a second run called systemctl again");
    setup(&d, &sc, &["--uninstall", "--yes"]).success();
    assert_eq!(
        sc.changes()[2..],
        [
            "--user disable --now presence-refresh.timer presence-expire.timer",
            "--user daemon-reload"
        ]
    );
}

#[test]
fn setup_finds_synced_folders() {
    let w = World::new();
    let sc = Systemctl::new(&w, false);
    // Syncthing's newer place for its configuration, and a Dropbox folder.
    let d = w.bare_device("a");
    let home = d.root.join("home");
    let shared = home.join("Shared Stuff");
    std::fs::create_dir_all(&shared).unwrap();
    std::fs::create_dir_all(home.join("Dropbox")).unwrap();
    let st = home.join(".local/state/syncthing");
    std::fs::create_dir_all(&st).unwrap();
    std::fs::write(
        st.join("config.xml"),
        "<configuration>\n<folder id=\"x1\" label=\"Tom &amp; Jerry\" path=\"~/Shared Stuff\">\
         </folder>\n<folder id=\"gone\" path=\"/nonexistent/folder\"></folder>\n</configuration>\n",
    )
    .unwrap();
    let r = setup(&d, &sc, &["--dry-run", "--no-timer"]).success();
    assert!(
        r.stdout.contains("dir = \"~/Shared Stuff/presence\""),
        "{}",
        r.stdout
    );
    // The folder is Syncthing's by its configuration, though it has no .stfolder yet.
    assert!(r.stdout.contains("Shared Stuff/.stignore"), "{}", r.stdout);

    // Only Dropbox: proposed, and no .stignore (not Syncthing's).
    let d = w.bare_device("b");
    std::fs::create_dir_all(d.root.join("home/Dropbox")).unwrap();
    let r = setup(&d, &sc, &["--dry-run", "--no-timer"]).success();
    assert!(
        r.stdout.contains("dir = \"~/Dropbox/presence\""),
        "{}",
        r.stdout
    );
    assert!(!r.stdout.contains(".stignore"), "{}", r.stdout);

    // Nothing synced and no --dir: a usage error.
    let d = w.bare_device("c");
    let r = setup(&d, &sc, &["--yes", "--no-timer"]).code(2);
    assert!(r.stderr.contains("--dir"), "{}", r.stderr);
    // Not a terminal and no --yes: asks for it, changes nothing.
    let r = setup(&d, &sc, &["--dir", "/nonexistent/x"]).code(2);
    assert!(r.stderr.contains("--yes"), "{}", r.stderr);
}

#[test]
fn setup_follows_stignore_includes_and_never_duplicates() {
    let w = World::new();
    let (d, sync) = syncthing_home(&w);
    let sc = Systemctl::new(&w, false);
    std::fs::write(sync.join(".stignore"), "#include .stignore-shared\n").unwrap();
    std::fs::write(sync.join(".stignore-shared"), "(?d).*.tmp\n").unwrap();
    let dir = sync.join("presence").display().to_string();
    let r = setup(&d, &sc, &["--yes", "--no-timer", "--dir", &dir]).success();
    assert!(!r.stdout.contains("add the line"), "{}", r.stdout);
    assert!(
        r.stdout.contains("the 1 file(s) it includes"),
        "{}",
        r.stdout
    );
    assert_eq!(
        std::fs::read_to_string(sync.join(".stignore")).unwrap(),
        "#include .stignore-shared\n"
    );
    // An include that is missing: left alone, and said.
    std::fs::remove_file(sync.join(".stignore-shared")).unwrap();
    let r = setup(&d, &sc, &["--yes", "--no-timer", "--dir", &dir]);
    assert!(
        r.stdout.contains("left ") && r.stdout.contains("alone"),
        "{}",
        r.stdout
    );
    assert_eq!(
        std::fs::read_to_string(sync.join(".stignore")).unwrap(),
        "#include .stignore-shared\n"
    );
}

/// The Debian package's units (packaging/systemd) are docs/systemd's with
/// `ExecStart=/usr/bin/presence …`; regenerate them with
/// `for f in docs/systemd/*.service; do sed 's|^ExecStart=presence |ExecStart=/usr/bin/presence |' "$f" > packaging/systemd/"${f##*/}"; done`.
#[test]
fn packaged_units_match_docs_systemd() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut n = 0;
    for e in std::fs::read_dir(root.join("docs/systemd")).unwrap() {
        let name = e.unwrap().file_name();
        if !name.to_string_lossy().ends_with(".service") {
            continue;
        }
        let shipped = std::fs::read_to_string(root.join("docs/systemd").join(&name)).unwrap();
        let want = shipped.replace("\nExecStart=presence ", "\nExecStart=/usr/bin/presence ");
        assert_ne!(want, shipped);
        let packaged = std::fs::read_to_string(root.join("packaging/systemd").join(&name))
            .unwrap_or_else(|e| panic!("packaging/systemd/{}: {e}", name.to_string_lossy()));
        assert_eq!(packaged, want, "packaging/systemd/{name:?} is out of date");
        n += 1;
    }
    assert_eq!(n, 2);
    let cargo = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    for unit in [
        "packaging/systemd/presence-refresh.service",
        "packaging/systemd/presence-expire.service",
        "docs/systemd/presence-refresh.timer",
        "docs/systemd/presence-expire.timer",
    ] {
        assert!(
            cargo.contains(&format!("[\"{unit}\", \"usr/lib/systemd/user/\"")),
            "{unit} is not in the package's assets"
        );
    }
}

/// Where the Debian package installs a file of the repository, from the
/// `assets` of `[package.metadata.deb]` (a `*` stands for any file name in
/// its directory; a target ending in `/` is a directory).
fn packaged_as(assets: &[(String, String)], file: &str) -> Vec<String> {
    assets
        .iter()
        .filter_map(|(source, target)| {
            let matches = match source.split_once('*') {
                Some((dir, rest)) => file.strip_prefix(dir).is_some_and(|name| {
                    !name.contains('/') && name.ends_with(rest) && name.len() >= rest.len()
                }),
                None => source == file,
            };
            let name = file.rsplit('/').next().unwrap_or(file);
            matches.then(|| match target.strip_suffix('/') {
                Some(dir) => format!("/{dir}/{name}"),
                None => format!("/{target}"),
            })
        })
        .collect()
}

/// The project's pages are named in Cargo.toml, and the package carries the
/// documentation where README.md's relative links (and those between the
/// docs) lead once installed: the README, every docs/*.md and the unit and
/// agent examples, laid out as in the repository under
/// /usr/share/doc/presence.
#[test]
fn the_package_installs_the_docs_where_their_links_lead() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let cargo: toml::Table = std::fs::read_to_string(root.join("Cargo.toml"))
        .unwrap()
        .parse()
        .unwrap();
    let package = cargo["package"].as_table().unwrap();
    let url = "https://github.com/presence-dev/presence";
    assert_eq!(package["repository"].as_str(), Some(url));
    assert_eq!(package["homepage"].as_str(), Some(url));
    assert_eq!(
        package["documentation"].as_str(),
        Some(format!("{url}/tree/main/docs").as_str())
    );
    let assets: Vec<(String, String)> = package["metadata"]["deb"]["assets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            let a = a.as_array().unwrap();
            (
                a[0].as_str().unwrap().to_string(),
                a[1].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let doc = "/usr/share/doc/presence";
    let mut docs = vec!["README.md".to_string(), "CHANGELOG.md".to_string()];
    for sub in ["docs", "docs/systemd", "docs/launchd"] {
        for e in std::fs::read_dir(root.join(sub)).unwrap() {
            let e = e.unwrap();
            let name = e.file_name().into_string().unwrap();
            if e.file_type().unwrap().is_file() && (sub != "docs" || name.ends_with(".md")) {
                docs.push(format!("{sub}/{name}"));
            }
        }
    }
    for file in &docs {
        let at = packaged_as(&assets, file);
        assert!(
            at.contains(&format!("{doc}/{file}")),
            "{file} is not installed as {doc}/{file} (but as {at:?})"
        );
    }
    // Every relative link of the installed documents leads to an installed
    // file (or to a directory of them).
    let installed: Vec<String> = docs.iter().map(|f| format!("{doc}/{f}")).collect();
    let mut links = 0;
    for file in docs.iter().filter(|f| f.ends_with(".md")) {
        let text = std::fs::read_to_string(root.join(file)).unwrap();
        let base = Path::new(doc).join(file);
        let base = base.parent().unwrap();
        for (at, _) in text.match_indices("](") {
            let rest = &text[at + 2..];
            let target = &rest[..rest.find(')').unwrap_or(rest.len())];
            let target = target.split('#').next().unwrap();
            if target.is_empty() || target.contains("://") || target.contains('$') {
                continue;
            }
            let mut path = base.to_path_buf();
            for part in target.trim_end_matches('/').split('/') {
                match part {
                    ".." => {
                        path.pop();
                    }
                    "." => {}
                    part => path.push(part),
                }
            }
            let path = path.display().to_string();
            assert!(
                installed
                    .iter()
                    .any(|i| *i == path || i.starts_with(&format!("{path}/"))),
                "{file} links to {target}, which the package does not install ({path})"
            );
            links += 1;
        }
    }
    assert!(links > 40, "only {links} links followed");
}

/// On a terminal, setup lists the synced folders it found, takes a number,
/// shows its plan and asks before changing anything.
#[test]
fn setup_asks_on_a_terminal() {
    let script = require_tool("script");
    let w = World::new();
    let sc = Systemctl::new(&w, false);
    let d = w.bare_device("a");
    let home = d.root.join("home");
    std::fs::create_dir_all(home.join("Sync")).unwrap();
    std::fs::write(home.join("Sync/.stfolder"), "").unwrap();
    std::fs::create_dir_all(home.join("Dropbox")).unwrap();
    let on_terminal = |answers: &str| {
        let path = format!("{}:{}", sc.bin.display(), path_without_agents());
        let mut cmd = d.program(&script);
        cmd.env("PATH", path)
            .env("TERM", "dumb")
            .arg("-qec")
            .arg(format!(
                "{} setup --no-timer",
                env!("CARGO_BIN_EXE_presence")
            ))
            .arg("/dev/null")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        use std::io::Write as _;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(answers.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success());
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let before = tree(&d.root);
    let out = on_terminal("2\nn\n");
    assert!(
        out.contains("1) ") && out.contains("Sync/presence"),
        "{out}"
    );
    assert!(
        out.contains("2) ") && out.contains("Dropbox/presence  (Dropbox)"),
        "{out}"
    );
    assert!(
        out.contains("Make these changes? [Y/n]") && out.contains("nothing changed"),
        "{out}"
    );
    assert_eq!(tree(&d.root), before, "answering no changed files");
    let out = on_terminal("2\ny\n");
    assert!(out.contains("doctor: "), "{out}");
    let config = std::fs::read_to_string(d.config_path()).unwrap();
    assert!(config.contains("dir = \"~/Dropbox/presence\""), "{config}");
    crate::harness::assert_docs_travel("the configuration setup writes", &config);
    assert!(home.join("Dropbox/presence").is_dir());
}

/// A Syncthing folder whose label and path carry terminal escapes (its
/// config.xml is anyone's to write, and a folder name is anyone's to pick):
/// setup prints both shown as escapes, never the raw bytes, whether it
/// lists its plan or, on a terminal, the folders it found.
#[test]
fn setup_prints_hostile_folder_names_escaped() {
    let w = World::new();
    let sc = Systemctl::new(&w, false);
    let d = w.bare_device("a");
    let home = d.root.join("home");
    let name = "evil\u{1b}]0;pwned\u{7}";
    std::fs::create_dir_all(home.join(name)).unwrap();
    let st = d.root.join("config/syncthing");
    std::fs::create_dir_all(&st).unwrap();
    std::fs::write(
        st.join("config.xml"),
        format!(
            "<configuration>\n<folder id=\"x\" label=\"team\u{1b}[2J\" path=\"~/{name}\">\
             </folder>\n</configuration>\n"
        ),
    )
    .unwrap();
    let raw = |text: &str| text.contains('\u{1b}') || text.contains('\u{7}');

    let r = setup(&d, &sc, &["--dry-run", "--no-timer"]).success();
    assert!(
        !raw(&r.stdout) && !raw(&r.stderr),
        "{:?} {:?}",
        r.stdout,
        r.stderr
    );
    assert!(
        r.stdout
            .contains("dir = \"~/evil\\e]0;pwned\\x07/presence\""),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("evil\\e]0;pwned\\x07/.stignore"),
        "{}",
        r.stdout
    );

    // On a terminal the list of folders names the label too.
    let script = require_tool("script");
    let path = format!(
        "{}:{}",
        sc.bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut cmd = d.program(&script);
    cmd.env("PATH", path)
        .env("TERM", "dumb")
        .arg("-qec")
        .arg(format!(
            "{} setup --no-timer",
            env!("CARGO_BIN_EXE_presence")
        ))
        .arg("/dev/null")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    use std::io::Write as _;
    child.stdin.take().unwrap().write_all(b"1\nn\n").unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let out = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(!raw(&out), "{out:?}");
    assert!(
        out.contains("evil\\e]0;pwned\\x07/presence  (Syncthing folder \"team\\e[2J\")"),
        "{out}"
    );
    assert!(out.contains("nothing changed"), "{out}");
}

/// A FIFO planted as the shared folder's `.stignore` neither hangs setup
/// nor gets written through.
#[test]
fn setup_leaves_a_planted_fifo_alone() {
    let w = World::new();
    let (d, sync) = syncthing_home(&w);
    let sc = Systemctl::new(&w, false);
    std::fs::remove_file(sync.join(".stignore")).unwrap();
    crate::harness::mkfifo(&sync.join(".stignore"));
    let dir = sync.join("presence").display().to_string();
    let path = format!("{}:{}", sc.bin.display(), std::env::var("PATH").unwrap());
    let bounded = |args: &[&str]| {
        crate::harness::run_ok(
            d.program("timeout")
                .arg("60")
                .arg(env!("CARGO_BIN_EXE_presence"))
                .args(args)
                .env("PATH", &path)
                .stdin(std::process::Stdio::null()),
        )
    };
    let out = bounded(&["setup", "--yes", "--no-timer", "--dir", &dir]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("left ") && stdout.contains("alone"),
        "{stdout}"
    );
    let kind = std::fs::symlink_metadata(sync.join(".stignore")).unwrap();
    use std::os::unix::fs::FileTypeExt;
    assert!(kind.file_type().is_fifo());
    // --uninstall reads .stignore itself: the FIFO is skipped there too.
    let out = bounded(&["setup", "--uninstall", "--yes"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.starts_with("nothing to change"), "{stdout}");
    assert!(
        std::fs::symlink_metadata(sync.join(".stignore"))
            .unwrap()
            .file_type()
            .is_fifo()
    );
}

/// Every regular file under `root` whose bytes contain `needle`.
fn files_containing(root: &Path, needle: &str) -> Vec<PathBuf> {
    tree(root)
        .into_iter()
        .filter(|(p, (_, bytes))| {
            !std::fs::symlink_metadata(p).unwrap().is_symlink()
                && bytes
                    .as_ref()
                    .is_some_and(|b| String::from_utf8_lossy(b).contains(needle))
        })
        .map(|(p, _)| p)
        .collect()
}

/// A `.stignore` planted in the shared folder as a symlink to a file of this
/// device is never read: setup neither takes the patterns of the file it
/// points to nor copies that file into the folder, and `--uninstall` does
/// not find setup's lines in it. A configuration in the shared folder that
/// is a symlink is refused the same way, never edited through.
#[test]
fn setup_never_reads_through_a_planted_symlink() {
    const SECRET: &str = "SECRET-7f3a9c";
    let w = World::new();
    let (d, sync) = syncthing_home(&w);
    let sc = Systemctl::new(&w, false);
    // Read, it would change what setup does: its patterns already ignore
    // the temp files (no line to add), and it holds setup's own two lines
    // (for --uninstall to take out, writing the rest into the folder).
    let target = d.root.join("home/private-notes");
    let planted = format!(
        "// {SECRET}\n// presence's temp files (added by `presence setup`; `presence setup \
         --uninstall` removes these two lines)\n(?d).*.tmp\n"
    );
    std::fs::write(&target, &planted).unwrap();
    std::fs::remove_file(sync.join(".stignore")).unwrap();
    std::os::unix::fs::symlink(&target, sync.join(".stignore")).unwrap();
    let dir = sync.join("presence").display().to_string();

    let r = setup(&d, &sc, &["--yes", "--no-timer", "--dir", &dir]).success();
    assert!(
        r.stdout.contains("left ")
            && r.stdout.contains("alone")
            && r.stdout.contains("symbolic link"),
        "{}",
        r.stdout
    );
    let r2 = setup(&d, &sc, &["--uninstall", "--yes"]).success();
    assert!(r2.stdout.starts_with("nothing to change"), "{}", r2.stdout);
    for out in [&r.stdout, &r2.stdout] {
        assert!(!out.contains(SECRET), "{out}");
    }
    assert!(
        std::fs::symlink_metadata(sync.join(".stignore"))
            .unwrap()
            .is_symlink()
    );
    assert_eq!(std::fs::read_to_string(&target).unwrap(), planted);
    assert_eq!(files_containing(&sync, SECRET), Vec::<PathBuf>::new());

    // A configuration named in the shared folder, planted as a symlink to a
    // TOML file of this device: refused, not rewritten into the folder.
    let toml_target = d.root.join("home/private.toml");
    let toml = format!("# {SECRET}\n[profiles.default]\nttl = \"90s\"\n");
    std::fs::write(&toml_target, &toml).unwrap();
    let config = sync.join("presence.toml");
    std::os::unix::fs::symlink(&toml_target, &config).unwrap();
    let config_arg = config.display().to_string();
    let r = setup(
        &d,
        &sc,
        &[
            "--config",
            &config_arg,
            "--yes",
            "--no-timer",
            "--dir",
            &dir,
        ],
    );
    assert_ne!(r.code, 0, "{}", r.stdout);
    assert!(r.stderr.contains("symbolic link"), "{}", r.stderr);
    assert!(
        !r.stdout.contains(SECRET) && !r.stderr.contains(SECRET),
        "{}{}",
        r.stdout,
        r.stderr
    );
    assert!(std::fs::symlink_metadata(&config).unwrap().is_symlink());
    assert_eq!(std::fs::read_to_string(&toml_target).unwrap(), toml);
    assert_eq!(files_containing(&sync, SECRET), Vec::<PathBuf>::new());
}

/// Another device shares the records directory, so it can put anything in
/// it: here a `.stfolder`, to pass the records directory off as the
/// Syncthing folder's root, and a `.stignore` that is a symbolic link to a
/// key of this device (`../../.ssh/id_ed25519`). Setup takes the real root
/// (Syncthing's configuration names it, and, without that, the outermost
/// `.stfolder`), edits only its `.stignore`, and never reads, copies or
/// changes the key; doctor judges the real root's patterns too.
#[test]
fn setup_takes_no_root_from_marks_planted_in_the_records_directory() {
    const SECRET: &str = "-----BEGIN OPENSSH PRIVATE KEY----- 9c1e77d2";
    let w = World::new();
    let (d, sync) = syncthing_home(&w);
    let sc = Systemctl::new(&w, false);
    let home = d.root.join("home");
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    let key = home.join(".ssh/id_ed25519");
    std::fs::write(&key, format!("{SECRET}\n")).unwrap();
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
    let dir = sync.join("presence");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::create_dir(dir.join(".stfolder")).unwrap();
    std::os::unix::fs::symlink("../../.ssh/id_ed25519", dir.join(".stignore")).unwrap();
    let dir_arg = dir.display().to_string();
    let planted = |dir: &Path| std::fs::read_link(dir.join(".stignore")).unwrap();
    let unchanged = |r: &Run| {
        assert!(
            !r.stdout.contains(SECRET) && !r.stderr.contains(SECRET),
            "{}{}",
            r.stdout,
            r.stderr
        );
        assert_eq!(planted(&dir), Path::new("../../.ssh/id_ed25519"));
        assert_eq!(
            std::fs::read_to_string(&key).unwrap(),
            format!("{SECRET}\n")
        );
        let mode = std::fs::metadata(&key).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        assert_eq!(
            files_containing(&sync, "PRIVATE KEY"),
            Vec::<PathBuf>::new()
        );
    };

    let r = setup(&d, &sc, &["--yes", "--no-timer", "--dir", &dir_arg]).success();
    unchanged(&r);
    let root_stignore = sync.join(".stignore");
    let text = std::fs::read_to_string(&root_stignore).unwrap();
    assert!(
        text.starts_with(&format!("{}\n(?d).*.tmp\n", text.lines().next().unwrap()))
            && text.ends_with(STIGNORE),
        "{text}"
    );
    assert!(
        r.stdout.contains(&format!(
            "temp files are kept out of the sync ({})",
            root_stignore.display()
        )),
        "{}",
        r.stdout
    );
    let r = setup(&d, &sc, &["--uninstall", "--yes"]).success();
    unchanged(&r);
    assert_eq!(std::fs::read_to_string(&root_stignore).unwrap(), STIGNORE);

    // Without Syncthing's configuration the outermost `.stfolder` decides,
    // and a plain planted `.stignore` is not edited either.
    std::fs::remove_file(d.root.join("config/syncthing/config.xml")).unwrap();
    let r = setup(&d, &sc, &["--yes", "--no-timer", "--dir", &dir_arg]).success();
    unchanged(&r);
    assert!(
        std::fs::read_to_string(&root_stignore)
            .unwrap()
            .contains("\n(?d).*.tmp\n")
    );
    std::fs::remove_file(dir.join(".stignore")).unwrap();
    std::fs::write(dir.join(".stignore"), "// planted\n").unwrap();
    std::fs::write(&root_stignore, STIGNORE).unwrap();
    let r = setup(&d, &sc, &["--yes", "--no-timer", "--dir", &dir_arg]).success();
    assert!(r.stdout.contains(&root_stignore.display().to_string()));
    assert_eq!(
        std::fs::read_to_string(dir.join(".stignore")).unwrap(),
        "// planted\n"
    );
}

/// A configuration kept in a dotfiles repository, linked into place: setup
/// edits the file the link leads to (as an editor does) and the link stays.
#[test]
fn setup_edits_a_symlinked_config_where_it_leads() {
    let w = World::new();
    let (d, sync) = syncthing_home(&w);
    let sc = Systemctl::new(&w, false);
    let dotfiles = d.root.join("home/dotfiles");
    std::fs::create_dir_all(&dotfiles).unwrap();
    let target = dotfiles.join("presence.toml");
    std::fs::write(&target, CONFIG).unwrap();
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o600)).unwrap();
    let link = d.config_path();
    std::fs::remove_file(&link).unwrap();
    std::os::unix::fs::symlink("../../home/dotfiles/presence.toml", &link).unwrap();
    let dir = sync.join("presence").display().to_string();

    let r = setup(&d, &sc, &["--yes", "--no-timer", "--dir", &dir]).success();
    assert!(
        r.stdout.contains(&target.display().to_string()),
        "{}",
        r.stdout
    );
    assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
    assert_eq!(
        std::fs::read_to_string(&target).unwrap(),
        CONFIG.replace(
            "ttl = \"90s\"\n",
            "ttl = \"90s\"\ndir = \"~/Sync/presence\"\n"
        )
    );
    let mode = std::fs::metadata(&target).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let r = setup(&d, &sc, &["--yes", "--no-timer"]).success();
    assert!(r.stdout.starts_with("nothing to change"), "{}", r.stdout);
    assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
}

const LEGACY_UNIT_MARK: &str =
    "# Installed by `presence setup`; `presence setup --uninstall` removes it.";

/// `refresh --all-profiles` must keep up with the shortest
/// refresh_interval of the profiles: setup writes the refresh timer at
/// it (systemd verifies the unit), and at the shipped 30 s again when the
/// profiles no longer ask for less.
#[test]
fn setup_writes_the_refresh_timer_at_the_shortest_refresh_interval() {
    let systemd_analyze = require_tool("systemd-analyze");
    let w = World::new();
    let (d, sync) = syncthing_home(&w);
    let sc = Systemctl::new(&w, false);
    let dir = sync.join("presence").display().to_string();
    let args = ["--yes", "--timer", "systemd", "--dir", &dir];
    let timer = d.root.join("config/systemd/user/presence-refresh.timer");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let shipped =
        std::fs::read_to_string(root.join("docs/systemd/presence-refresh.timer")).unwrap();
    let body = |text: &str| text.split_once('\n').unwrap().1.to_string();

    let fast = CONFIG.replace(
        "label = \"team\"\n",
        "label = \"team\"\nttl = \"30s\"\nrefresh_interval = \"10s\"\n",
    );
    d.write_config(&fast);
    setup(&d, &sc, &args).success();
    let text = std::fs::read_to_string(&timer).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines.contains(&"OnUnitActiveSec=10s"), "{text}");
    assert!(lines.contains(&"AccuracySec=1s"), "{text}");
    assert!(
        lines.contains(&"Description=Refresh presence records every 10s"),
        "{text}"
    );
    assert!(!body(&text).contains("30"), "{text}");
    let verify = |path: &Path| {
        let out = std::process::Command::new(&systemd_analyze)
            .arg("verify")
            .arg(path)
            .arg(path.with_file_name("presence-refresh.service"))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(
            out.status.success() && !stderr.contains("presence-"),
            "{stderr}"
        );
    };
    verify(&timer);
    // Doctor, run by setup, reads the schedule from systemd, which does not
    // run here: nothing to judge, no failure.

    // Under a second: milliseconds, and a finer accuracy.
    d.write_config(&CONFIG.replace(
        "label = \"team\"\n",
        "label = \"team\"\nttl = \"2s\"\nrefresh_interval = \"500ms\"\n",
    ));
    let r = setup(&d, &sc, &args).success();
    assert!(
        r.stdout.contains(&format!("update {}", timer.display())),
        "{}",
        r.stdout
    );
    let text = std::fs::read_to_string(&timer).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines.contains(&"OnUnitActiveSec=500ms") && lines.contains(&"AccuracySec=50ms"),
        "{text}"
    );
    verify(&timer);

    // Back to the default: the shipped timer, its path put in nowhere
    // (a timer names no program).
    d.write_config(CONFIG);
    setup(&d, &sc, &args).success();
    let text = std::fs::read_to_string(&timer).unwrap();
    assert_eq!(body(&text), shipped);
}

/// Units setup wrote are updated and removed; a unit the user edited, or one
/// setup did not write, is left alone (and said) unless `--force`, and
/// `--uninstall` removes only setup's own.
#[test]
fn setup_leaves_units_the_user_edited_alone() {
    let w = World::new();
    let (d, sync) = syncthing_home(&w);
    let sc = Systemctl::new(&w, false);
    let dir = sync.join("presence").display().to_string();
    let args = ["--yes", "--timer", "systemd", "--dir", &dir];
    let units = d.root.join("config/systemd/user");
    let unit = |name: &str| units.join(name);
    let bin = std::fs::canonicalize(env!("CARGO_BIN_EXE_presence")).unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));

    // Units from an earlier version (its marker, no digest) are setup's:
    // updated, not left alone.
    std::fs::create_dir_all(&units).unwrap();
    for name in [
        "presence-refresh.service",
        "presence-refresh.timer",
        "presence-expire.service",
        "presence-expire.timer",
    ] {
        let shipped = std::fs::read_to_string(root.join("docs/systemd").join(name)).unwrap();
        let body = shipped.replace(
            "\nExecStart=presence ",
            &format!("\nExecStart={} ", bin.display()),
        );
        std::fs::write(unit(name), format!("{LEGACY_UNIT_MARK}\n{body}")).unwrap();
    }
    let r = setup(&d, &sc, &args).success();
    assert_eq!(r.stdout.matches("\nupdate ").count(), 4, "{}", r.stdout);
    assert!(!r.stdout.contains("left "), "{}", r.stdout);
    let ours = std::fs::read_to_string(unit("presence-refresh.service")).unwrap();
    assert!(
        ours.starts_with("# Installed by `presence setup` (digest "),
        "{ours}"
    );

    // One edited, one replaced by the user's own.
    let edited = ours.replace("--all-profiles", "--all-profiles --verbose");
    std::fs::write(unit("presence-refresh.service"), &edited).unwrap();
    let own = "[Unit]\nDescription=mine\n[Timer]\nOnCalendar=hourly\n";
    std::fs::write(unit("presence-expire.timer"), own).unwrap();
    let before = tree(&d.root);
    let r = setup(&d, &sc, &args).success();
    assert_eq!(tree(&d.root), before, "setup changed a unit the user owns");
    for name in ["presence-refresh.service", "presence-expire.timer"] {
        let line = format!("left {} alone: ", unit(name).display());
        assert!(r.stdout.contains(&line), "{}", r.stdout);
    }
    assert!(
        r.stdout.contains("was edited since setup wrote it"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("setup did not write it"), "{}", r.stdout);
    assert!(r.stdout.contains("--force"), "{}", r.stdout);

    // --uninstall removes setup's two and keeps the user's two.
    let r = setup(&d, &sc, &["--uninstall", "--yes"]).success();
    assert!(!unit("presence-refresh.timer").exists());
    assert!(!unit("presence-expire.service").exists());
    assert_eq!(
        std::fs::read_to_string(unit("presence-refresh.service")).unwrap(),
        edited
    );
    assert_eq!(
        std::fs::read_to_string(unit("presence-expire.timer")).unwrap(),
        own
    );
    assert!(
        r.stdout.contains(&format!(
            "left {} alone: setup wrote it, but it was edited since",
            unit("presence-refresh.service").display()
        )) && r.stdout.contains("--force"),
        "{}",
        r.stdout
    );
    // With --force the edited one goes; the user's own stays.
    setup(&d, &sc, &["--uninstall", "--yes", "--force"]).success();
    assert!(!unit("presence-refresh.service").exists());
    assert_eq!(
        std::fs::read_to_string(unit("presence-expire.timer")).unwrap(),
        own
    );
    // setup --force replaces it with setup's.
    let r = setup(&d, &sc, &[&args[..], &["--force"]].concat()).success();
    assert!(
        r.stdout.contains(&format!(
            "replace {} (setup did not write it)",
            unit("presence-expire.timer").display()
        )),
        "{}",
        r.stdout
    );
    let timer = std::fs::read_to_string(unit("presence-expire.timer")).unwrap();
    assert!(timer.starts_with("# Installed by `presence setup` (digest "));
    let r = setup(&d, &sc, &args).success();
    assert!(r.stdout.starts_with("nothing to change"), "{}", r.stdout);
}

/// Setup's lines in a crontab: the refresh line and the expire line.
fn cron_lines(crontab: &Path) -> Vec<String> {
    std::fs::read_to_string(crontab)
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.starts_with('#') && l.contains("presence --quiet"))
        .map(str::to_string)
        .collect()
}

/// Where no systemd user manager answers and there is cron, setup adds its
/// lines to the crontab as part of its plan: shown by --dry-run, a refresh
/// as often as refresh_interval asks (several a minute with `sleep`), which
/// doctor then finds and agrees with; idempotent; updated when the
/// interval changes; an edited copy left alone unless --force; and
/// --uninstall takes out exactly those lines.
#[test]
fn setup_installs_its_crontab_lines_where_no_user_manager_answers() {
    let w = World::new();
    let (d, sync) = syncthing_home(&w);
    let sc = Systemctl::new(&w, false);
    let crontab = fake_crontab(&w);
    let theirs = "MAILTO=me\n0 1 * * * backup --all\n";
    std::fs::write(&crontab, theirs).unwrap();
    let dir = sync.join("presence").display().to_string();
    let bin = std::fs::canonicalize(env!("CARGO_BIN_EXE_presence")).unwrap();
    let bin = bin.display();
    let refresh = format!("{bin} --quiet refresh --all-profiles");
    let every_30s = format!("* * * * * {refresh}; sleep 30; {refresh}");
    let expire = format!("17 4 * * * {bin} --quiet expire");

    // No --timer: cron, since no user manager answers. --dry-run shows
    // the lines and writes nothing.
    let r = setup(&d, &sc, &["--yes", "--dir", &dir, "--dry-run"]).success();
    assert!(
        r.stdout
            .contains("would add these lines to your crontab (a refresh every 30s"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains(&format!("\n    {every_30s}\n    {expire}\n")),
        "{}",
        r.stdout
    );
    assert_eq!(std::fs::read_to_string(&crontab).unwrap(), theirs);

    let r = setup(&d, &sc, &["--yes", "--dir", &dir]).success();
    let installed = std::fs::read_to_string(&crontab).unwrap();
    assert!(installed.starts_with(theirs), "{installed}");
    assert_eq!(cron_lines(&crontab), [every_30s.clone(), expire.clone()]);
    assert!(
        r.stdout
            .contains("ok    refresher        a refresher runs (a crontab line, every 30s)"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.ends_with("doctor: every check passed\n"),
        "{}",
        r.stdout
    );
    assert!(
        !r.stdout.contains("no systemd user manager"),
        "{}",
        r.stdout
    );

    // Again: nothing to change.
    let r = setup(&d, &sc, &["--yes"]).success();
    assert!(
        r.stdout
            .starts_with("nothing to change: presence is set up\n"),
        "{}",
        r.stdout
    );
    assert_eq!(std::fs::read_to_string(&crontab).unwrap(), installed);

    // A shorter refresh_interval: setup updates its lines, and doctor
    // finds them as often as the profile asks.
    let config = std::fs::read_to_string(d.config_path()).unwrap();
    d.write_config(&config.replace(
        "ttl = \"90s\"\n",
        "ttl = \"60s\"\nrefresh_interval = \"20s\"\n",
    ));
    let r = setup(&d, &sc, &["--yes"]).success();
    assert!(
        r.stdout
            .contains("update setup's lines in your crontab (a refresh every 20s"),
        "{}",
        r.stdout
    );
    assert_eq!(
        cron_lines(&crontab),
        [
            format!("* * * * * {refresh}; for i in 2 3; do sleep 20; {refresh}; done"),
            expire.clone()
        ]
    );
    // Each command is one that `sh` reads (cron hands it to `sh -c`).
    for line in cron_lines(&crontab).iter().chain([&every_30s]) {
        let command = line.splitn(6, ' ').nth(5).unwrap();
        let ok = d
            .program("sh")
            .args(["-n", "-c", &as_cron_runs_it(command)])
            .status()
            .unwrap()
            .success();
        assert!(ok, "sh cannot read {command}");
    }
    assert!(
        r.stdout
            .contains("ok    refresher        a refresher runs (a crontab line, every 20s)"),
        "{}",
        r.stdout
    );
    d.write_config(&config);
    setup(&d, &sc, &["--yes"]).success();
    assert_eq!(std::fs::read_to_string(&crontab).unwrap(), installed);

    // Edited since: left alone, by setup and by --uninstall, unless --force.
    let edited = installed.replace("17 4 * * *", "18 4 * * *");
    std::fs::write(&crontab, &edited).unwrap();
    let r = setup(&d, &sc, &["--yes"]).success();
    assert!(
        r.stdout
            .contains("left setup's lines in your crontab alone"),
        "{}",
        r.stdout
    );
    setup(&d, &sc, &["--uninstall", "--yes"]).success();
    assert_eq!(std::fs::read_to_string(&crontab).unwrap(), edited);
    let r = setup(&d, &sc, &["--uninstall", "--yes", "--dry-run", "--force"]).success();
    assert!(
        r.stdout
            .contains("would remove setup's lines from your crontab"),
        "{}",
        r.stdout
    );
    assert_eq!(std::fs::read_to_string(&crontab).unwrap(), edited);
    setup(&d, &sc, &["--yes", "--force"]).success();
    assert_eq!(std::fs::read_to_string(&crontab).unwrap(), installed);

    // --uninstall takes out exactly setup's lines; a line of the user's
    // that runs presence is named and kept.
    std::fs::write(
        &crontab,
        format!("{installed}@reboot presence refresh --every\n"),
    )
    .unwrap();
    let r = setup(&d, &sc, &["--uninstall", "--yes"]).success();
    assert!(
        r.stdout
            .contains("runs `presence refresh` in a line setup did not add"),
        "{}",
        r.stdout
    );
    assert_eq!(
        std::fs::read_to_string(&crontab).unwrap(),
        format!("{theirs}@reboot presence refresh --every\n")
    );
    // With that line of its own, setup adds none.
    let r = setup(&d, &sc, &["--yes"]).success();
    assert!(
        r.stdout
            .contains("your crontab already runs `presence refresh`"),
        "{}",
        r.stdout
    );
    std::fs::write(&crontab, theirs).unwrap();

    // --timer cron where a user manager answers: the lines, and no word of
    // a missing user manager.
    let sc = Systemctl::new(&w, true);
    let r = setup(&d, &sc, &["--yes", "--timer", "cron"]).success();
    assert!(
        !r.stdout.contains("no systemd user manager"),
        "{}",
        r.stdout
    );
    assert_eq!(cron_lines(&crontab), [every_30s, expire]);
    assert!(sc.changes().is_empty(), "{:?}", sc.changes());
}

/// With neither a systemd user manager nor cron, setup says that nothing
/// refreshes the records and what to do, its doctor ends with a warning,
/// and a second run says what is missing instead of "presence is set up".
#[test]
fn setup_says_so_when_nothing_will_refresh() {
    let w = World::new();
    let (d, sync) = syncthing_home(&w);
    let _ = Systemctl::new(&w, false);
    // Only the stand-ins: no crontab program, whatever this machine has.
    let path = fake_bin(&w).display().to_string();
    let bin = Path::new(env!("CARGO_BIN_EXE_presence"));
    let dir = sync.join("presence").display().to_string();
    let r = setup_on(&d, &path, bin, &["--yes", "--dir", &dir]).success();
    assert!(
        r.stdout.contains(
            "nothing refreshes records yet: `crontab` is not installed here, and no systemd \
             user manager answers: install cron"
        ) && r
            .stdout
            .contains("`presence --quiet refresh --all-profiles --every`"),
        "{}",
        r.stdout
    );
    assert!(!r.stdout.contains("crontab -e"), "{}", r.stdout);
    assert!(r.stdout.contains("\nwarn  refresher "), "{}", r.stdout);
    assert!(
        r.stdout.ends_with("doctor: 1 warning(s), nothing failed\n"),
        "{}",
        r.stdout
    );
    let r = setup_on(&d, &path, bin, &["--yes"]).success();
    assert!(
        r.stdout.starts_with(
            "nothing to change, but nothing refreshes records: `crontab` is not installed here"
        ),
        "{}",
        r.stdout
    );
    assert!(!r.stdout.contains("presence is set up"), "{}", r.stdout);
    // --no-timer and an unanswered systemd are no different.
    for timer in [&["--no-timer"][..], &["--timer", "systemd"]] {
        let r = setup_on(&d, &path, bin, &[&["--yes"][..], timer].concat()).success();
        assert!(
            r.stdout.contains("nothing refreshes records"),
            "{timer:?}: {}",
            r.stdout
        );
        assert!(
            !r.stdout.contains("presence is set up"),
            "{timer:?}: {}",
            r.stdout
        );
        assert!(
            !r.stdout.contains("every check passed"),
            "{timer:?}: {}",
            r.stdout
        );
    }
}

/// What cron does with a crontab line's command before `sh` gets it: a `%`
/// ends the command (the rest is its input), `\%` is a `%`.
fn as_cron_runs_it(command: &str) -> String {
    let mut out = String::new();
    let mut chars = command.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'%') => out.push(chars.next().unwrap()),
            '%' => break,
            c => out.push(c),
        }
    }
    out
}

/// A binary whose path holds a space and a `%`: the systemd units verify
/// and start it, the crontab lines run it (as cron and as a cron that
/// passes `\%` on would), and the launchd agents are well-formed and their
/// command runs it.
#[test]
fn a_binary_path_with_a_space_and_a_percent_sign_is_quoted() {
    let systemd_analyze = require_tool("systemd-analyze");
    let python = require_tool("python3");
    let w = World::new();
    let (d, sync) = syncthing_home(&w);
    let sc = Systemctl::new(&w, false);
    let bin_dir = w.tmp.path().join("my tools 100%");
    std::fs::create_dir_all(&bin_dir).unwrap();
    let bin = bin_dir.join("presence");
    if std::fs::hard_link(env!("CARGO_BIN_EXE_presence"), &bin).is_err() {
        std::fs::copy(env!("CARGO_BIN_EXE_presence"), &bin).unwrap();
    }
    let dir = sync.join("presence").display().to_string();

    let r = setup_by(
        &d,
        &sc,
        &bin,
        &["--yes", "--timer", "systemd", "--dir", &dir],
    )
    .success();
    assert!(!r.stdout.contains("FAIL"), "{}", r.stdout);
    let units = d.root.join("config/systemd/user");
    let service = std::fs::read_to_string(units.join("presence-refresh.service")).unwrap();
    let want = format!(
        "\nExecStart=\"{}\" --quiet refresh --all-profiles\n",
        bin.display().to_string().replace('%', "%%")
    );
    assert!(service.contains(&want), "{service}");
    let files: Vec<PathBuf> = [
        "presence-refresh.service",
        "presence-refresh.timer",
        "presence-expire.service",
        "presence-expire.timer",
    ]
    .iter()
    .map(|n| units.join(n))
    .collect();
    let out = std::process::Command::new(&systemd_analyze)
        .arg("verify")
        .args(&files)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && !stderr.contains("presence-"),
        "{stderr}"
    );
    // A path systemd refuses is refused with the fix, before anything is written.
    let odd_dir = w.tmp.path().join("it's");
    std::fs::create_dir_all(&odd_dir).unwrap();
    let odd = odd_dir.join("presence");
    if std::fs::hard_link(env!("CARGO_BIN_EXE_presence"), &odd).is_err() {
        std::fs::copy(env!("CARGO_BIN_EXE_presence"), &odd).unwrap();
    }
    let before = tree(&d.root);
    let r = setup_by(&d, &sc, &odd, &["--yes", "--timer", "systemd", "--force"]);
    assert_ne!(r.code, 0);
    assert!(
        r.stderr.contains("systemd refuses `'`") && r.stderr.contains("--timer"),
        "{}",
        r.stderr
    );
    assert_eq!(tree(&d.root), before);

    // The crontab lines, as installed (and as shown).
    let crontab = fake_crontab(&w);
    let r = setup_by(&d, &sc, &bin, &["--yes", "--timer", "cron"]).success();
    let installed = std::fs::read_to_string(&crontab).unwrap();
    let lines: Vec<&str> = installed
        .lines()
        .filter(|l| l.starts_with("* * * * * ") || l.starts_with("17 4 * * * "))
        .collect();
    assert_eq!(lines.len(), 2, "{installed}");
    for line in &lines {
        assert!(r.stdout.contains(&format!("    {line}\n")), "{}", r.stdout);
    }
    let expire = lines[1].splitn(6, ' ').nth(5).unwrap();
    for command in [as_cron_runs_it(expire), expire.to_string()] {
        let out = d
            .program("sh")
            .arg("-c")
            .arg(format!("{command} --json --dry-run"))
            .output()
            .unwrap();
        assert!(
            out.status.success() && out.stdout.starts_with(b"{"),
            "{command}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    // The launchd agents: well-formed plists whose command runs the binary.
    let r = setup_by(&d, &sc, &bin, &["--yes", "--timer", "launchd"]).success();
    assert!(!r.stdout.contains("left "), "{}", r.stdout);
    let agents = d.root.join("home/Library/LaunchAgents");
    let script = "import plistlib, sys\n\
                  for path in sys.argv[1:]:\n    \
                      command = plistlib.load(open(path, 'rb'))['ProgramArguments'][2]\n\
                  print(command)";
    let out = std::process::Command::new(&python)
        .arg("-c")
        .arg(script)
        .arg(agents.join("dev.presence.refresh.plist"))
        .arg(agents.join("dev.presence.expire.plist"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let command = String::from_utf8(out.stdout).unwrap();
    let out = d
        .program("sh")
        .arg("-c")
        .arg(format!("{} --json --dry-run", command.trim_end()))
        .output()
        .unwrap();
    assert!(
        out.status.success() && out.stdout.starts_with(b"{"),
        "{command}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// This machine's PATH without the directories that hold an agent's
/// program (`claude`, `codex`…): where setup finds one, it asks about it
/// on a terminal.
fn path_without_agents() -> String {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let kept: Vec<PathBuf> = std::env::split_paths(&path)
        .filter(|d| {
            !["claude", "codex", "hermes", "opencode"]
                .iter()
                .any(|p| d.join(p).exists())
        })
        .collect();
    std::env::join_paths(kept)
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

/// `setup` with PATH set to `path` and the variables `vars` (the agents'
/// own: `HERMES_HOME`, `CLAUDE_CONFIG_DIR`…).
fn setup_env(d: &Device, path: &str, vars: &[(&str, &Path)], args: &[&str]) -> Run {
    let mut cmd = d.program(env!("CARGO_BIN_EXE_presence"));
    cmd.env("PATH", path).arg("setup").args(args);
    for (k, v) in vars {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let mut all = vec!["setup"];
    all.extend_from_slice(args);
    Run {
        args: all.iter().map(|s| s.to_string()).collect(),
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The command setup writes into Claude Code's settings: the binary setup
/// runs as, by its real path.
fn hook_command() -> String {
    let bin = std::fs::canonicalize(env!("CARGO_BIN_EXE_presence")).unwrap();
    format!("{} hook claude", bin.display())
}

/// A home with the Syncthing folder and configuration of
/// [`syncthing_home`], Claude Code's program on PATH (a stand-in, first on
/// PATH, which is the world's stand-ins alone, so that no agent of this
/// machine is found), Codex's `~/.codex`: the PATH and the records
/// directory as `--dir` takes it.
fn agents_home(w: &World) -> (Device, String, String) {
    let (d, sync) = syncthing_home(w);
    fake_program(w, "claude", "#!/bin/sh\nexit 0\n");
    std::fs::create_dir_all(d.root.join("home/.codex/sessions")).unwrap();
    let path = fake_bin(w).display().to_string();
    (d, path, sync.join("presence").display().to_string())
}

/// Setup finds the agents installed here — by their state directory
/// (`~/.codex`, `$HERMES_HOME`) or their program on PATH (`claude`) — and
/// says what discovery would publish; without `--agents` it turns nothing
/// on, even with `--yes`, and says how to.
#[test]
fn setup_finds_the_agents_here_and_turns_on_nothing_unasked() {
    let w = World::new();
    let (d, path, dir) = agents_home(&w);
    let hermes = w.tmp.path().join("hermes-home");
    std::fs::create_dir_all(&hermes).unwrap();
    let vars = [("HERMES_HOME", hermes.as_path())];
    let before = tree(&d.root);
    let r = setup_env(
        &d,
        &path,
        &vars,
        &["--yes", "--no-timer", "--dir", &dir, "--dry-run"],
    );
    let r = r.success();
    assert_eq!(tree(&d.root), before, "--dry-run changed files");
    let found = format!(
        "found claude-code ({}/claude), codex ({}), hermes ({}) here; discovery of their \
         sessions is off. `presence setup --agents found` turns it on ([discover] agents = \
         [\"claude-code\", \"codex\", \"hermes\"] in the configuration): the refresher then \
         publishes each of their live sessions, with the agent's name, its status (working, \
         waiting or idle) and the session's title (the agent's own, else the directory's name), \
         never what you type",
        path,
        d.root.join("home/.codex").display(),
        hermes.display()
    );
    assert!(r.stdout.contains(&found), "{}", r.stdout);
    assert!(!r.stdout.contains("opencode"), "{}", r.stdout);
    assert!(
        r.stdout
            .contains("Claude Code found: `presence setup --claude-hooks` adds"),
        "{}",
        r.stdout
    );
    // A real run with --yes alone: the directory is set, nothing is discovered.
    let r = setup_env(&d, &path, &vars, &["--yes", "--no-timer", "--dir", &dir]).success();
    assert!(r.stdout.contains(&found), "{}", r.stdout);
    let config = std::fs::read_to_string(d.config_path()).unwrap();
    assert!(!config.contains("discover"), "{config}");
    assert!(!d.root.join("home/.claude").exists());
    let checks: Vec<crate::harness::JsonCheck> =
        parse_json(&d.run(&["doctor", "--json"]).stdout, "doctor --json");
    let c = checks.iter().find(|c| c.check == "discovery").unwrap();
    assert!(c.message.starts_with("off"), "{c:?}");
    assert!(c.agents.is_empty());
    // Opencode's data directory is found too.
    std::fs::create_dir_all(d.root.join("data/opencode")).unwrap();
    let r = setup_env(&d, &path, &vars, &["--yes", "--no-timer"]).success();
    assert!(r.stdout.contains("opencode ("), "{}", r.stdout);
}

/// `--agents` writes `[discover] agents` into the commented configuration,
/// every other byte kept; a second run changes nothing; an `agents` already
/// there is changed in its place, its comment kept; `config show` and
/// `doctor` read it back.
#[test]
fn setup_agents_writes_the_discover_table_and_nothing_else() {
    let w = World::new();
    let (d, path, dir) = agents_home(&w);
    let before = tree(&d.root);
    let args = [
        "--yes",
        "--no-timer",
        "--dir",
        &dir,
        "--agents",
        "claude-code,codex",
    ];
    let r = setup_env(&d, &path, &[], &[&args[..], &["--dry-run"]].concat()).success();
    assert_eq!(tree(&d.root), before, "--dry-run changed files");
    assert!(
        r.stdout.contains(
            "would set [profiles.default] dir = \"~/Sync/presence\" and set [discover] agents = \
             [\"claude-code\", \"codex\"] in "
        ),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("the refresher then publishes each live session of claude-code, codex"),
        "{}",
        r.stdout
    );
    setup_env(&d, &path, &[], &args).success();
    let expected = CONFIG.replace(
        "ttl = \"90s\"\n",
        "ttl = \"90s\"\ndir = \"~/Sync/presence\"\n",
    ) + "\n[discover]\nagents = [\"claude-code\", \"codex\"]\n";
    assert_eq!(std::fs::read_to_string(d.config_path()).unwrap(), expected);
    let r = setup_env(&d, &path, &[], &args).success();
    assert!(r.stdout.starts_with("nothing to change"), "{}", r.stdout);
    assert!(
        r.stdout.contains("discovery is on for claude-code, codex"),
        "{}",
        r.stdout
    );
    let shown = d.run(&["config", "show"]).success().stdout;
    assert!(
        shown.contains("[discover]\nagents = [\"claude-code\", \"codex\"]\n"),
        "{shown}"
    );
    let checks: Vec<crate::harness::JsonCheck> =
        parse_json(&d.run(&["doctor", "--json"]).stdout, "doctor --json");
    let c = checks.iter().find(|c| c.check == "discovery").unwrap();
    assert_eq!(c.agents, ["claude-code", "codex"]);
    assert!(c.message.starts_with("on for claude-code, codex"), "{c:?}");

    // A [discover] table of the user's own: only `agents` changes.
    let mine = "[discover]   # what runs here\n# the agents\nagents = [\"hermes\"]   # keep this\n\n\
                [profiles.default]\ndir = \"~/Sync/presence\"\n";
    d.write_config(mine);
    setup_env(
        &d,
        &path,
        &[],
        &["--yes", "--no-timer", "--agents", "found"],
    )
    .success();
    assert_eq!(
        std::fs::read_to_string(d.config_path()).unwrap(),
        mine.replace("[\"hermes\"]", "[\"claude-code\", \"codex\"]")
    );
    let r = setup_env(&d, &path, &[], &["--yes", "--no-timer", "--agents", "none"]).success();
    assert!(
        r.stdout
            .contains("turn discovery off: [discover] agents = []"),
        "{}",
        r.stdout
    );
    assert_eq!(
        std::fs::read_to_string(d.config_path()).unwrap(),
        mine.replace("[\"hermes\"]", "[]")
    );
    // Names and words mixed are refused before anything is read.
    let r = setup_env(&d, &path, &[], &["--yes", "--agents", "codex,none"]).code(2);
    assert!(r.stderr.contains("`found` or `none` alone"), "{}", r.stderr);
    let r = setup_env(&d, &path, &[], &["--yes", "--agents", "claude"]).code(2);
    assert!(
        r.stderr.contains("possible values: claude-code"),
        "{}",
        r.stderr
    );
}

/// An invalid configuration is refused, naming the error, and left as it
/// is; a configuration that is a symbolic link is edited where it leads,
/// and stays a link.
#[test]
fn setup_agents_refuses_an_invalid_config_and_follows_a_linked_one() {
    let w = World::new();
    let (d, path, dir) = agents_home(&w);
    let bad = "# mine\n[discover]\nagents = [\"claude\"]\n";
    d.write_config(bad);
    let before = tree(&d.root);
    let r = setup_env(
        &d,
        &path,
        &[],
        &["--yes", "--no-timer", "--dir", &dir, "--agents", "codex"],
    );
    let r = r.code(1);
    assert!(
        r.stderr.contains(&d.config_path().display().to_string())
            && r.stderr
                .contains("names \"claude\", which presence cannot discover"),
        "{}",
        r.stderr
    );
    assert_eq!(
        tree(&d.root),
        before,
        "an invalid configuration was touched"
    );

    let dotfiles = d.root.join("home/dotfiles");
    std::fs::create_dir_all(&dotfiles).unwrap();
    std::fs::write(dotfiles.join("presence.toml"), CONFIG).unwrap();
    std::fs::remove_file(d.config_path()).unwrap();
    std::os::unix::fs::symlink(dotfiles.join("presence.toml"), d.config_path()).unwrap();
    setup_env(
        &d,
        &path,
        &[],
        &["--yes", "--no-timer", "--dir", &dir, "--agents", "codex"],
    )
    .success();
    assert!(
        std::fs::symlink_metadata(d.config_path())
            .unwrap()
            .is_symlink()
    );
    let text = std::fs::read_to_string(dotfiles.join("presence.toml")).unwrap();
    assert!(text.starts_with("# My presence settings.\n"), "{text}");
    assert!(
        text.ends_with("\n[discover]\nagents = [\"codex\"]\n"),
        "{text}"
    );
}

/// Settings of a user's own: keys in their order, a hook of theirs, a
/// field setup knows nothing of, a private mode.
const SETTINGS: &str = "{\n  \"theme\": \"dark\",\n  \"env\": {\n    \"FOO\": \"1\"\n  },\n  \
    \"hooks\": {\n    \"Stop\": [\n      {\n        \"matcher\": \"\",\n        \"hooks\": [\n          \
    {\n            \"type\": \"command\",\n            \"command\": \"notify-send 'Claude is done'\"\n          \
    }\n        ]\n      }\n    ]\n  },\n  \"model\": \"opus\"\n}\n";

fn write_private(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).unwrap();
}

/// Claude Code's hooks are added only when asked for (`--claude-hooks`),
/// merged into the user's settings: their keys in their order, their own
/// hook first, a backup of the old file beside it, the mode kept; a second
/// run adds nothing; `--uninstall` takes out exactly what setup added.
#[test]
fn setup_claude_hooks_merge_into_the_users_settings_and_come_out_again() {
    let w = World::new();
    let (d, path, dir) = agents_home(&w);
    let claude = w.tmp.path().join("claude-config");
    let settings = claude.join("settings.json");
    write_private(&settings, SETTINGS);
    let vars = [("CLAUDE_CONFIG_DIR", claude.as_path())];
    let base = ["--yes", "--no-timer", "--dir", &dir];
    setup_env(&d, &path, &vars, &base).success();
    assert_eq!(
        std::fs::read_to_string(&settings).unwrap(),
        SETTINGS,
        "added unasked"
    );

    let before = tree(&d.root);
    let mut args = base.to_vec();
    args.push("--claude-hooks");
    let r = setup_env(&d, &path, &vars, &[&args[..], &["--dry-run"]].concat()).success();
    assert_eq!(tree(&d.root), before, "--dry-run changed files");
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), SETTINGS);
    let command = hook_command();
    assert!(
        r.stdout.contains(&format!(
            "would add presence's hook `{command}` for SessionStart, UserPromptSubmit, \
             PostToolUse, Stop, Notification, PermissionRequest, SessionEnd to {} (the old file \
             kept as {}.presence-backup)",
            settings.display(),
            settings.display()
        )),
        "{}",
        r.stdout
    );

    setup_env(&d, &path, &vars, &args).success();
    let text = std::fs::read_to_string(&settings).unwrap();
    let backup = claude.join("settings.json.presence-backup");
    assert_eq!(std::fs::read_to_string(&backup).unwrap(), SETTINGS);
    for p in [&settings, &backup] {
        let mode = std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{}", p.display());
    }
    // The user's lines are all there, in their order, and theirs comes first.
    let mut at = 0;
    for line in SETTINGS.lines() {
        at += text[at..]
            .find(line)
            .unwrap_or_else(|| panic!("{line:?} missing or moved in:\n{text}"));
    }
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
    assert_eq!(keys.len(), 4);
    for event in [
        "SessionStart",
        "UserPromptSubmit",
        "PostToolUse",
        "Stop",
        "Notification",
        "PermissionRequest",
        "SessionEnd",
    ] {
        let groups = v["hooks"][event].as_array().unwrap();
        let last = &groups[groups.len() - 1];
        assert_eq!(
            *last,
            serde_json::json!({"hooks": [{"type": "command", "command": command}]}),
            "{event}"
        );
    }
    assert_eq!(
        v["hooks"]["Stop"][0]["hooks"][0]["command"],
        "notify-send 'Claude is done'"
    );
    // Again: nothing to add, nothing written (the backup is the first one).
    let r = setup_env(&d, &path, &vars, &args).success();
    assert!(r.stdout.starts_with("nothing to change"), "{}", r.stdout);
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), text);
    assert_eq!(std::fs::read_to_string(&backup).unwrap(), SETTINGS);

    // --uninstall: the user's file as it was, byte for byte.
    let r = setup_env(&d, &path, &vars, &["--yes", "--uninstall"]).success();
    assert!(
        r.stdout.contains(&format!(
            "remove presence's hooks for Stop, SessionStart, UserPromptSubmit, PostToolUse, \
             Notification, PermissionRequest, SessionEnd from {}",
            settings.display()
        )),
        "{}",
        r.stdout
    );
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), SETTINGS);
    assert_eq!(std::fs::read_to_string(&backup).unwrap(), text);
    let r = setup_env(&d, &path, &vars, &["--yes", "--uninstall"]).success();
    assert!(
        r.stdout.contains("setup has nothing installed here"),
        "{}",
        r.stdout
    );
}

/// A hook the user added by hand from the docs (`presence hook claude`,
/// looked up on PATH) counts: setup adds none beside it, and `--uninstall`
/// leaves it, as it leaves `[discover]` (saying how to turn it off).
#[test]
fn setup_claude_hooks_leave_the_users_own_presence_hook() {
    let w = World::new();
    let (d, path, dir) = agents_home(&w);
    let settings = d.root.join("home/.claude/settings.json");
    let own = "{\"hooks\": {\"SessionStart\": [{\"hooks\": [{\"type\": \"command\", \"command\": \
               \"presence hook claude\"}]}]}}";
    write_private(&settings, own);
    let args = [
        "--yes",
        "--no-timer",
        "--dir",
        &dir,
        "--claude-hooks",
        "--agents",
        "found",
    ];
    let r = setup_env(&d, &path, &[], &args).success();
    assert!(
        r.stdout
            .contains("for UserPromptSubmit, PostToolUse, Stop,"),
        "{}",
        r.stdout
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    assert_eq!(v["hooks"]["SessionStart"].as_array().unwrap().len(), 1);
    assert_eq!(v["hooks"].as_object().unwrap().len(), 7);
    let r = setup_env(&d, &path, &[], &["--yes", "--uninstall"]).success();
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), own);
    assert!(
        r.stdout
            .contains("discovery stays on for claude-code, codex ([discover] agents in ")
            && r.stdout
                .contains("`presence setup --agents none` turns it off"),
        "{}",
        r.stdout
    );
    let config = std::fs::read_to_string(d.config_path()).unwrap();
    assert!(
        config.contains("agents = [\"claude-code\", \"codex\"]"),
        "{config}"
    );
}

/// With no settings file, setup writes the block docs/integrations.md
/// shows, naming the binary by its path, and the file is private.
#[test]
fn setup_claude_hooks_write_the_documented_block() {
    let w = World::new();
    let (d, path, dir) = agents_home(&w);
    setup_env(
        &d,
        &path,
        &[],
        &["--yes", "--no-timer", "--dir", &dir, "--claude-hooks"],
    )
    .success();
    let settings = d.root.join("home/.claude/settings.json");
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    let documented = crate::docs::example("integrations.md", "claude-hooks").replace(
        "\"presence hook claude\"",
        &serde_json::to_string(&hook_command()).unwrap(),
    );
    let documented: serde_json::Value = serde_json::from_str(&documented).unwrap();
    assert_eq!(written, documented);
    let mode = std::fs::metadata(&settings).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    assert!(
        !d.root
            .join("home/.claude/settings.json.presence-backup")
            .exists()
    );
}

/// Settings setup cannot edit are refused with the path, what is wrong
/// and what to do, and nothing at all is changed; without --claude-hooks,
/// setup goes on and says why it leaves them alone. A settings file that
/// is a link to a plain file is edited where it leads.
#[test]
fn setup_claude_hooks_refuse_settings_they_cannot_edit() {
    let w = World::new();
    let (d, path, dir) = agents_home(&w);
    let claude = d.root.join("home/.claude");
    let settings = claude.join("settings.json");
    let args = ["--yes", "--no-timer", "--dir", &dir, "--claude-hooks"];
    type Make<'a> = Box<dyn Fn() + 'a>;
    let cases: Vec<(&str, Make, &str)> = vec![
        (
            "invalid JSON",
            Box::new(|| write_private(&settings, "{\"model\": \"opus\",}\n")),
            "is not valid JSON (trailing comma at line 1 column 18), so setup leaves it as it is: \
             fix it (Claude Code cannot read it either), then run setup again",
        ),
        (
            "hooks of the wrong shape",
            Box::new(|| write_private(&settings, "{\"hooks\": [\"presence hook claude\"]}")),
            "is an array, not an object of events: fix it (docs/integrations.md#claude-code \
             shows the block), then run setup again",
        ),
        (
            "an event of the wrong shape",
            Box::new(|| write_private(&settings, "{\"hooks\": {\"Stop\": \"x\"}}")),
            "`hooks.Stop` in ",
        ),
        (
            "a directory",
            Box::new(|| std::fs::create_dir_all(&settings).unwrap()),
            "not a regular file (a directory)",
        ),
        (
            "a FIFO",
            Box::new(|| {
                std::fs::create_dir_all(&claude).unwrap();
                crate::harness::mkfifo(&settings)
            }),
            "not a regular file (a FIFO)",
        ),
        (
            "too large",
            Box::new(|| {
                write_private(
                    &settings,
                    &format!("{{\"a\": \"{}\"}}", "x".repeat(5 << 20)),
                )
            }),
            "larger than 4194304",
        ),
        (
            "a link that leads nowhere",
            Box::new(|| {
                std::fs::create_dir_all(&claude).unwrap();
                std::os::unix::fs::symlink("gone.json", &settings).unwrap()
            }),
            "is a symbolic link that leads to no file",
        ),
    ];
    for (what, make, said) in cases {
        let _ = std::fs::remove_dir_all(&claude);
        make();
        let before = tree(&d.root);
        let r = setup_env(&d, &path, &[], &args).code(1);
        assert!(
            r.stderr.contains(&settings.display().to_string()) && r.stderr.contains(said),
            "{what}: {}",
            r.stderr
        );
        assert_eq!(tree(&d.root), before, "{what}: files changed");
        // Unasked, setup goes on and says so.
        let r = setup_env(&d, &path, &[], &args[..4]).success();
        assert!(
            r.stdout
                .contains("Claude Code found, but setup cannot add presence's hooks")
                && r.stdout.contains(said),
            "{what}: {}",
            r.stdout
        );
    }
    // A link to a plain file: that file is edited, the link stays.
    let _ = std::fs::remove_dir_all(&claude);
    std::fs::create_dir_all(&claude).unwrap();
    let target = d.root.join("home/dotfiles/claude.json");
    write_private(&target, SETTINGS);
    std::os::unix::fs::symlink(&target, &settings).unwrap();
    let r = setup_env(&d, &path, &[], &args).success();
    assert!(
        r.stdout.contains(&format!(
            "{} (where the link {} leads)",
            target.display(),
            settings.display()
        )),
        "{}",
        r.stdout
    );
    assert!(std::fs::symlink_metadata(&settings).unwrap().is_symlink());
    let text = std::fs::read_to_string(&target).unwrap();
    assert!(text.contains(&hook_command()), "{text}");
    setup_env(&d, &path, &[], &["--yes", "--uninstall"]).success();
    assert_eq!(std::fs::read_to_string(&target).unwrap(), SETTINGS);
    assert!(std::fs::symlink_metadata(&settings).unwrap().is_symlink());
}

/// On a terminal, setup asks about discovery and Claude Code's hooks,
/// saying what each publishes; only a yes turns either on (an empty
/// answer is a no).
#[test]
fn setup_asks_about_discovery_and_hooks_on_a_terminal() {
    let script = require_tool("script");
    let w = World::new();
    let (d, path, dir) = agents_home(&w);
    let on_terminal = |answers: &str| {
        let mut cmd = d.program(&script);
        cmd.env("PATH", &path)
            .env("TERM", "dumb")
            .arg("-qec")
            .arg(format!(
                "{} setup --no-timer --dir {dir}",
                env!("CARGO_BIN_EXE_presence")
            ))
            .arg("/dev/null")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        use std::io::Write as _;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(answers.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success());
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    // Enter, Enter, then yes to the plan: the directory only.
    let out = on_terminal("\n\ny\n");
    assert!(
        out.contains("Agents found here: claude-code (")
            && out.contains("never what you type.")
            && out.contains("Turn on discovery for claude-code, codex? [y/N]")
            && out.contains("Add presence's hooks to Claude Code's settings? [y/N]"),
        "{out}"
    );
    let config = std::fs::read_to_string(d.config_path()).unwrap();
    assert!(config.contains("dir = \"~/Sync/presence\""), "{config}");
    assert!(!config.contains("discover"), "{config}");
    assert!(!d.root.join("home/.claude").exists());
    // Yes to both, and to the plan.
    let out = on_terminal("y\ny\ny\n");
    assert!(out.contains("Make these changes? [Y/n]"), "{out}");
    let config = std::fs::read_to_string(d.config_path()).unwrap();
    assert!(
        config.contains("agents = [\"claude-code\", \"codex\"]"),
        "{config}"
    );
    let settings = std::fs::read_to_string(d.root.join("home/.claude/settings.json")).unwrap();
    assert!(settings.contains(&hook_command()), "{settings}");
    // Nothing left to ask.
    let out = on_terminal("");
    assert!(!out.contains("[y/N]"), "{out}");
    assert!(out.contains("nothing to change"), "{out}");
}
