use super::file::{Config, ProfileSettings};
use super::hermes::hermes_dir_from;
use super::paths::{MAX_CONFIG_BYTES, expand_path, same_dir};
use super::*;

fn local() -> LocalDirs {
    LocalDirs::under(Path::new("/home/u"))
}

fn src() -> ConfigSource {
    ConfigSource {
        path: "/home/u/config/presence/config.toml".into(),
        exists: true,
    }
}

fn profile(text: &str, name: Option<&str>) -> Result<Profile, ConfigError> {
    Config::parse(text, &src().path)?.profile(name, &src(), &local())
}

/// The example with the settings of its top and of `[profiles.default]`
/// uncommented, except `dir` (an example of a synced folder); the
/// commented `[profiles.hermes]` example stays as it is.
fn example_uncommented() -> (String, Vec<String>) {
    let mut keys = Vec::new();
    let mut text = String::new();
    let mut in_defaults = true;
    for line in EXAMPLE.lines() {
        in_defaults &= !line.starts_with("# [profiles.");
        let setting = line
            .strip_prefix("# ")
            .filter(|rest| in_defaults && rest.contains(" = "))
            .filter(|rest| !rest.starts_with("dir ") && !rest.starts_with("dirs "));
        match setting {
            Some(rest) => {
                keys.push(rest.split(' ').next().unwrap_or_default().to_string());
                text.push_str(rest);
            }
            None => text.push_str(line),
        }
        text.push('\n');
    }
    (text, keys)
}

#[test]
fn example_sets_nothing_and_uncommented_states_the_defaults() {
    let table: toml::Table = toml::from_str(EXAMPLE).unwrap();
    let mut profiles = toml::Table::new();
    profiles.insert("default".into(), toml::Table::new().into());
    let mut only = toml::Table::new();
    only.insert("profiles".into(), profiles.into());
    assert_eq!(table, only, "the example sets a value");

    let (text, keys) = example_uncommented();
    // Every setting a profile has, as the parser names them when it
    // refuses an unknown one.
    let refusal = toml::from_str::<ProfileSettings>("unknown = 1")
        .unwrap_err()
        .to_string();
    let expected = &refusal[refusal.find("expected one of").unwrap()..];
    let mut want: Vec<&str> = expected.split('`').skip(1).step_by(2).collect();
    assert!(want.len() >= 10, "{refusal}");
    want.retain(|k| *k != "dir" && *k != "dirs");
    want.insert(0, "default_profile");
    assert_eq!(keys, want, "a setting without its default in the example");
    let builtin = Config::default().profile(None, &src(), &local()).unwrap();
    assert_eq!(profile(&text, None).unwrap(), builtin);
}

#[test]
fn hermes_dir_is_found_the_way_hermes_finds_it() {
    let os = |s: &str| Some(std::ffi::OsString::from(s));
    let (home, cwd) = (Path::new("/home/u"), Path::new("/w"));
    let cases = [
        (None, None, "/home/u/.hermes/session-presence/active"),
        (None, os("/srv/h"), "/srv/h/session-presence/active"),
        (None, os("  "), "/home/u/.hermes/session-presence/active"),
        (os("/p/d"), os("/srv/h"), "/p/d"),
        (os(" rel/d "), None, "/w/rel/d"),
        (os(""), os("h"), "/w/h/session-presence/active"),
    ];
    for (dir, hermes_home, want) in cases {
        let what = format!("{dir:?} {hermes_home:?}");
        assert_eq!(
            hermes_dir_from(dir, hermes_home, home, cwd),
            Path::new(want),
            "{what}"
        );
    }
}

#[test]
fn the_same_directory_by_any_path() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    std::fs::create_dir_all(t.join("h/session-presence/active")).unwrap();
    std::fs::create_dir(t.join("other")).unwrap();
    std::os::unix::fs::symlink(t.join("h"), t.join("link")).unwrap();
    let active = t.join("h/session-presence/active");
    assert!(same_dir(&active, &t.join("link/session-presence/active")));
    assert!(same_dir(
        &active,
        &t.join("other/../h/session-presence/active/")
    ));
    assert!(!same_dir(&active, &t.join("other")));
    // One there, one not.
    assert!(!same_dir(&active, &t.join("missing")));
    assert!(!same_dir(&t.join("missing"), &active));
    // Neither there: the same path as far as it resolves.
    assert!(same_dir(&t.join("link/nope/x"), &t.join("h/nope/x")));
    assert!(!same_dir(&t.join("link/nope/x"), &t.join("h/nope/y")));
}

#[test]
fn the_hermes_profile_is_built_in_and_a_defined_one_wins() {
    let p = profile("", Some("hermes")).unwrap();
    assert_eq!(p.dir, hermes_dir(Path::new("/home/u")));
    assert_eq!((p.label.as_str(), &p.show), ("default", &ShowSet::All));
    assert!(!p.dir_is_default && !p.expires_others);
    let p = profile("[profiles.hermes]\ndir = \"/srv/x\"\n", Some("hermes")).unwrap();
    assert_eq!(
        (p.dir.as_path(), p.label.as_str()),
        (Path::new("/srv/x"), "hermes")
    );
    assert!(p.expires_others);
    assert!(profile("", None).unwrap().expires_others);
}

#[test]
fn example_parses_to_the_builtin_defaults() {
    let from_example = profile(EXAMPLE, None).unwrap();
    let builtin = Config::default().profile(None, &src(), &local()).unwrap();
    assert_eq!(from_example, builtin);
    assert_eq!(builtin.dir, Path::new("/home/u/data/presence/default"));
    assert!(builtin.dir_is_default);
    assert_eq!(builtin.ttl, Duration::from_secs(90));
    assert_eq!(builtin.refresh_interval, Duration::from_secs(30));
    assert_eq!(builtin.skew, Duration::from_secs(300));
    assert_eq!(builtin.gc_after, Duration::from_secs(3600));
    assert_eq!(builtin.label, "default");
    assert_eq!(builtin.show, ShowSet::Labels(vec!["default".into()]));
}

#[test]
fn profile_selection_and_settings() {
    let text = r#"
        default_profile = "work"
        [profiles.work]
        dir = "~/Sync/presence"
        ttl = 60
        refresh_interval = "15s"
        label = "team"
        [profiles.hermes]
        dir = "rel/dir"
        label = "default"
        show = ["*"]
    "#;
    let work = profile(text, None).unwrap();
    assert_eq!(work.name, "work");
    assert_eq!(work.dir, Path::new("/home/u/Sync/presence"));
    assert_eq!(work.ttl, Duration::from_secs(60));
    assert_eq!(work.label, "team");
    assert_eq!(work.show, ShowSet::Labels(vec!["team".into()]));
    let hermes = profile(text, Some("hermes")).unwrap();
    assert_eq!(hermes.dir, Path::new("/home/u/config/presence/rel/dir"));
    assert_eq!(hermes.show, ShowSet::All);
    // `default` always exists.
    assert_eq!(profile(text, Some("default")).unwrap().label, "default");
}

#[test]
fn error_table() {
    let cases = [
        ("[profiles.a]\nttl = \"forever\"", "invalid duration"),
        ("[profiles.a]\nttl = \"2h\"", "out of range"),
        (
            "[profiles.a]\nttl = \"30s\"\nrefresh_interval = \"30s\"",
            "is not below the ttl (30s); records would expire",
        ),
        ("[profiles.a]\ntll = \"30s\"", "unknown field `tll`"),
        (
            "[profiles.a]\nclock_margin = \"2m\"",
            "clock_margin = 2m is over a minute",
        ),
        ("[profiles.a]\ndir = \"\"", "dir is empty"),
        ("[profiles.a]\nshow = []", "show must list"),
        (
            "[profiles.a]\ndirs = []",
            "dirs = [] lists no directory; remove it",
        ),
        (
            "[profiles.a]\ndirs = [\"x\", \" \"]",
            "entry 2 of dirs is empty",
        ),
        (
            "[profiles.a]\ndirs = \"x\"",
            "dirs must be an array of directory paths, not string",
        ),
        (
            "[profiles.a]\ndirs = [\"x\", 2]",
            "dirs must list directory paths, each a string",
        ),
        (
            "[profiles.a]\ndirs = [\"x\", \"y\", \"./x/\"]",
            "entry 3 of dirs (./x/) is the same directory as entry 1 of dirs",
        ),
        (
            "[profiles.a]\ndirs = [\"x\", \"/usr\"]",
            "the system directory /usr",
        ),
        ("[profiles.a]\nlabel = \" \"", "label must not be empty"),
        ("[profiles.a\n", "line 1"),
        ("default_profile = 3", "default_profile"),
        (
            "[profiles.a]\ndir = \"/\"",
            "refusing / as the presence directory",
        ),
        ("[profiles.a]\ndir = \"~/\"", "it is the home directory"),
        (
            "[profiles.a]\ndir = \"/etc/\"",
            "it is the system directory /etc",
        ),
    ];
    for (text, want) in cases {
        let err = profile(text, Some("a")).unwrap_err().to_string();
        assert!(err.contains(want), "{text:?}: {err}");
        assert!(err.contains("config.toml"), "{text:?}: {err}");
    }
}

#[test]
fn dirs_are_read_dir_first_and_written_to_dir() {
    let cfg = "/home/u/config/presence";
    // Without `dir`, the first entry is `dir`.
    let p = profile("[profiles.a]\ndirs = [\"~/Sync/p\", \"rel\"]\n", Some("a")).unwrap();
    assert_eq!(p.dir, Path::new("/home/u/Sync/p"));
    assert_eq!(
        p.dirs,
        [
            PathBuf::from("/home/u/Sync/p"),
            PathBuf::from(cfg).join("rel")
        ]
    );
    assert!(!p.dir_is_default);
    // With `dir`, it comes first, and listed again it is read once.
    let text = "[profiles.a]\ndir = \"/srv/w\"\ndirs = [\"/srv/r\", \"/srv/w/\"]\n";
    let p = profile(text, Some("a")).unwrap();
    assert_eq!(p.dir, Path::new("/srv/w"));
    assert_eq!(p.dirs, [PathBuf::from("/srv/w"), PathBuf::from("/srv/r")]);
    // Without `dirs`, just `dir` (or the default).
    assert_eq!(
        profile("", None).unwrap().dirs,
        [local().data.join("default")]
    );
    // `--dir` replaces both.
    let tmp = tempfile::tempdir().unwrap();
    let local = LocalDirs::under(tmp.path());
    let path = tmp.path().join("c.toml");
    std::fs::write(
        &path,
        "[profiles.default]\ndirs = [\"/srv/a\", \"/srv/b\"]\n",
    )
    .unwrap();
    let sel = Selection {
        config: Some(path),
        dir: Some("/srv/only".into()),
        ..Selection::default()
    };
    let (p, _) = resolve(&sel, &local).unwrap();
    assert_eq!(
        (p.dir.as_path(), &p.dirs[..]),
        (Path::new("/srv/only"), &[PathBuf::from("/srv/only")][..])
    );
    // Hermes' own directory among them: expire leaves other writers' records there.
    let hermes = hermes_dir(&local.home);
    assert!(!expires_others_in(&hermes, &local.home));
    assert!(expires_others_in(Path::new("/srv/a"), &local.home));
}

#[test]
fn unknown_profile_lists_known_ones() {
    let err = profile("[profiles.work]\n", Some("wrok"))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("'wrok'") && err.contains("default, work"),
        "{err}"
    );
}

/// What named an unknown profile is named in its message, with the fix for
/// that origin; only the file's `default_profile` is the file's fault.
#[test]
fn an_unknown_profile_says_what_named_it() {
    let text = "[profiles.home]\n";
    let config = Config::parse(text, &src().path).unwrap();
    let select = |name: &str, from_env: bool| {
        let sel = Selection {
            profile: Some(name.into()),
            profile_from_env: from_env,
            ..Selection::default()
        };
        config.selected(&sel, &src(), &local()).unwrap_err()
    };
    let from_flag = select("work", false).to_string();
    assert!(
        from_flag.contains("unknown profile 'work' (known: default, home)")
            && from_flag.contains("define [profiles.work] in /home/u/config")
            && !from_flag.contains("PRESENCE_PROFILE"),
        "{from_flag}"
    );
    let from_env = select("work", true).to_string();
    assert!(
        from_env.contains("unknown profile 'work' (from $PRESENCE_PROFILE; known: default, home)")
            && from_env.contains("unset PRESENCE_PROFILE or define [profiles.work] in"),
        "{from_env}"
    );
    let empty = select("", false).to_string();
    assert!(
        empty.contains("--profile '' names no profile") && !empty.contains("[profiles.]"),
        "{empty}"
    );
    let spaced = select("my work", false).to_string();
    assert!(spaced.contains("[profiles.\"my work\"]"), "{spaced}");
    for e in [select("work", false), select("work", true)] {
        assert!(
            matches!(
                e,
                ConfigError::UnknownProfile {
                    from_command_line: true,
                    ..
                }
            ),
            "{e}"
        );
    }

    let file = "default_profile = \"nope\"\n[profiles.home]\n";
    let e = profile(file, None).unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.contains("default_profile = \"nope\" in /home/u/config/presence/config.toml names no profile (known: default, home)")
            && msg.contains("define [profiles.nope] there or set default_profile to a known one"),
        "{msg}"
    );
    assert!(
        matches!(
            e,
            ConfigError::UnknownProfile {
                from_command_line: false,
                ..
            }
        ),
        "{e}"
    );
    let msg = profile("default_profile = \"\"\n", None)
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains("default_profile = \"\" in") && msg.contains("remove the line"),
        "{msg}"
    );
}

/// A setting of the wrong shape is refused with its key and the forms it
/// takes, not serde's words for the parser's types.
#[test]
fn a_setting_of_the_wrong_shape_names_its_key_and_forms() {
    let cases = [
        (
            "ttl = 1.5",
            "ttl = 1.5 is not a whole number of seconds; write ttl = \"1.5s\"",
        ),
        ("gc_after = -5", "gc_after = -5 is negative"),
        (
            "skew = true",
            "expected skew as a duration: a text such as skew = \"90s\"",
        ),
        (
            "refresh_interval = \"9o s\"",
            "refresh_interval: invalid duration '9o s'",
        ),
        ("clock_margin = nan", "clock_margin = NaN is not a duration"),
        ("show = \"*\"", "write show = [\"*\"]"),
        ("show = \"work\"", "write show = [\"work\"]"),
        ("show = 3", "expected show as a list of labels"),
    ];
    for (line, want) in cases {
        let text = format!("[profiles.a]\n{line}\n");
        let err = profile(&text, Some("a")).unwrap_err().to_string();
        assert!(err.contains(want), "{line}: {err}");
        assert!(
            !err.contains("untagged") && !err.contains("Raw"),
            "{line}: {err}"
        );
    }
    let p = profile("[profiles.a]\nttl = 60\nshow = [\"*\"]\n", Some("a")).unwrap();
    assert_eq!((p.ttl, p.show), (Duration::from_secs(60), ShowSet::All));
}

#[test]
fn show_set_maps_empty_label_to_default() {
    let s = ShowSet::Labels(vec!["default".into()]);
    assert!(s.shows("") && s.shows("default") && !s.shows("work"));
    assert!(ShowSet::All.shows("anything"));
}

#[test]
fn duration_table() {
    for (text, secs) in [
        ("90s", 90.0),
        ("5m", 300.0),
        ("1h 30m", 5400.0),
        ("1.5", 1.5),
        ("0", 0.0),
    ] {
        assert_eq!(parse_duration(text).unwrap().as_secs_f64(), secs, "{text}");
    }
    for bad in [
        "",
        "-1",
        "ten",
        "5 parsecs",
        "inf",
        "1e30",
        "99999999999999999999999",
    ] {
        assert!(parse_duration(bad).is_err(), "{bad}");
    }
}

proptest::proptest! {
    #[test]
    fn config_parsing_never_panics(text in "\\PC{0,200}") {
        if let Ok(c) = Config::parse(&text, Path::new("x.toml")) {
            for name in c.profile_names() {
                let _ = c.profile(Some(&name), &src(), &local());
            }
        }
    }

    #[test]
    fn config_shaped_text_never_panics(
        key in "(ttl|refresh_interval|skew|gc_after|dir|label|show|strict|client|bogus)",
        value in "(\"[0-9a-z ]{0,8}\"|[0-9]{1,20}|-?[0-9.e]{1,8}|true|\\[\"[a-z*]{0,3}\"\\]|\\[\\])",
    ) {
        let text = format!("[profiles.p]\n{key} = {value}\n");
        if let Ok(c) = Config::parse(&text, Path::new("x.toml")) {
            let _ = c.profile(Some("p"), &src(), &local());
        }
    }
}

#[test]
fn refused_dirs_after_normalising() {
    let tmp = tempfile::tempdir().unwrap();
    let home = std::fs::canonicalize(tmp.path()).unwrap();
    std::os::unix::fs::symlink("/", home.join("root-link")).unwrap();
    std::os::unix::fs::symlink(&home, home.join("home-link")).unwrap();
    std::os::unix::fs::symlink("/etc", home.join("etc-link")).unwrap();
    std::fs::create_dir(home.join("Sync")).unwrap();
    let h = |rest: &str| format!("{}/{rest}", home.display());
    let refused = [
        ("/".to_string(), "the root directory"),
        ("//".into(), "the root directory"),
        ("/./.".into(), "the root directory"),
        ("/usr/..".into(), "the root directory"),
        ("/etc/".into(), "the system directory /etc"),
        ("/usr/share/..".into(), "the system directory /usr"),
        ("/tmp".into(), "the system directory /tmp"),
        ("/proc/".into(), "the system directory /proc"),
        (h(""), "the home directory"),
        (h("."), "the home directory"),
        (h("Sync/.."), "the home directory"),
        (h("root-link"), "the root directory"),
        (h("root-link/"), "the root directory"),
        (h("home-link"), "the home directory"),
        (h("etc-link"), "the system directory"),
    ];
    for (dir, want) in refused {
        let (what, _) =
            refused_dir(Path::new(&dir), &home).unwrap_or_else(|| panic!("{dir} was not refused"));
        assert!(what.starts_with(want), "{dir}: {what}");
    }
    let (_, leads) = refused_dir(&home.join("root-link"), &home).unwrap();
    assert_eq!(leads.as_deref(), Some(Path::new("/")));
    for fine in [
        h("Sync"),
        h("Sync/presence"),
        h("root-link/tmp/x"),
        "/tmp/presence".into(),
        "/etc/presence".into(),
    ] {
        assert_eq!(refused_dir(Path::new(&fine), &home), None, "{fine}");
    }
}

#[test]
fn a_refused_dir_on_the_command_line_is_a_usage_error() {
    let tmp = tempfile::tempdir().unwrap();
    let local = LocalDirs::under(tmp.path());
    for dir in ["/", "/var/", "/usr/lib/.."] {
        let sel = Selection {
            dir: Some(dir.into()),
            ..Selection::default()
        };
        for err in [
            resolve(&sel, &local).unwrap_err(),
            resolve_all(&sel, &local).unwrap_err(),
        ] {
            assert!(
                matches!(
                    err,
                    crate::error::Error::Config(ConfigError::RefusedDir {
                        from_command_line: true,
                        ..
                    })
                ),
                "{dir}: {err:?}"
            );
            let msg = err.to_string();
            assert!(msg.contains("refusing") && msg.contains("--dir"), "{msg}");
        }
    }
}

/// Loads the configuration at `path`.
fn load(path: &Path) -> Result<(Config, ConfigSource)> {
    let tmp = tempfile::tempdir().unwrap();
    let sel = Selection {
        config: Some(path.to_path_buf()),
        ..Selection::default()
    };
    Config::load(&sel, &LocalDirs::under(tmp.path()))
}

#[test]
fn config_files_are_bounded_regular_files() {
    let tmp = tempfile::tempdir().unwrap();
    let fifo = tmp.path().join("fifo.toml");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let big = tmp.path().join("big.toml");
    std::fs::File::create(&big)
        .unwrap()
        .set_len(MAX_CONFIG_BYTES + 1)
        .unwrap();
    let huge = tmp.path().join("huge.toml");
    std::fs::File::create(&huge)
        .unwrap()
        .set_len(1 << 40)
        .unwrap();
    let zero_link = tmp.path().join("zero.toml");
    std::os::unix::fs::symlink("/dev/zero", &zero_link).unwrap();
    let binary = tmp.path().join("binary.toml");
    std::fs::write(&binary, [0xff, 0xfe, 0x00]).unwrap();
    let cases = [
        (fifo.as_path(), "it is a FIFO, not a regular file"),
        (
            Path::new("/dev/zero"),
            "it is a device node, not a regular file",
        ),
        (
            zero_link.as_path(),
            "it is a device node, not a regular file",
        ),
        (tmp.path(), "it is a directory, not a regular file"),
        (
            big.as_path(),
            "1048577 bytes, over the 1048576-byte (1 MiB) limit",
        ),
        (huge.as_path(), "over the 1048576-byte (1 MiB) limit"),
        (binary.as_path(), "not UTF-8 text"),
    ];
    for (path, want) in cases {
        let err = load(path).unwrap_err().to_string();
        assert!(err.contains(want), "{}: {err}", path.display());
        assert!(err.contains(&path.display().to_string()), "{err}");
    }
    // Exactly at the limit is fine.
    let full = tmp.path().join("full.toml");
    let mut text = "# padding\n".repeat(MAX_CONFIG_BYTES as usize / 10);
    text.push_str(&"#".repeat(MAX_CONFIG_BYTES as usize - text.len()));
    std::fs::write(&full, text).unwrap();
    assert!(load(&full).unwrap().1.exists);
}

#[test]
fn open_handlers_are_read_and_checked() {
    let path = Path::new("c.toml");
    let text = "[open.handlers.tmux]\ncommand = [\"wezterm\", \"ssh\", \"{user_at_host}\"]\n";
    let config = Config::parse(text, path).unwrap();
    assert_eq!(
        config.open_handlers.configured("tmux"),
        Some(&["wezterm".to_string(), "ssh".into(), "{user_at_host}".into()][..])
    );
    // The example's handler, uncommented, is one.
    let example = EXAMPLE
        .replace("# [open.", "[open.")
        .replace("# command", "command");
    let config = Config::parse(&example, path).unwrap();
    assert!(config.open_handlers.configured("tmux").is_some());
    let text = "[open.handlers.ssh]\ncommand = [\"ssh\", \"{host}\"]\n\
                inside_tmux = [\"tmux\", \"new-window\", \"ssh {host}\"]\n";
    let config = Config::parse(text, path).unwrap();
    assert_eq!(
        config.open_handlers.configured_inside_tmux("ssh"),
        Some(&["tmux".to_string(), "new-window".into(), "ssh {host}".into()][..])
    );
    for bad in [
        "[open.handlers.tmux]\ncommand = [\"x\"]\ninside_tmux = []\n",
        "[open.handlers.tmux]\ncommand = [\"x\"]\ninside_tmux = [\"{host}\"]\n",
        "[open.handlers.tmux]\ncommand = [\"x\"]\ninside_tmux = [\"x\", \"{nope}\"]\n",
        "[open.handlers.tmux]\ninside_tmux = [\"x\"]\n",
    ] {
        let e = Config::parse(bad, path).unwrap_err().to_string();
        assert!(e.contains("inside_tmux"), "{bad}: {e}");
    }
    for bad in [
        "[open.handlers.tmux]\ncommand = []\n",
        "[open.handlers.tmux]\ncommand = [\"{host}\"]\n",
        "[open.handlers.tmux]\ncommand = [\"x\", \"{nope}\"]\n",
        "[open.handlers.tmux]\nargv = [\"x\"]\n",
        "[open]\nhandler = 1\n",
    ] {
        let e = Config::parse(bad, path).unwrap_err();
        assert!(matches!(e, ConfigError::Parse { .. }), "{bad}: {e}");
    }
}

#[test]
fn tilde_expansion() {
    let home = Path::new("/h");
    let base = Path::new("/cfg");
    assert_eq!(expand_path("~", home, base), Path::new("/h"));
    assert_eq!(expand_path("~/x", home, base), Path::new("/h/x"));
    assert_eq!(expand_path("/abs", home, base), Path::new("/abs"));
    assert_eq!(expand_path("rel", home, base), Path::new("/cfg/rel"));
    assert_eq!(
        expand_path("~user/x", home, base),
        Path::new("/cfg/~user/x")
    );
}

#[test]
fn the_refresh_rule_says_one_thing_everywhere() {
    use crate::liveness::{keep_alive_interval, refresh_chances, refresh_margin, refresh_problem};
    let s = Duration::from_secs;
    // An interval is refused exactly when it leaves no chance to refresh.
    for ttl in [s(1), s(9), s(90), s(100), s(3600)] {
        for interval in [
            Duration::ZERO,
            ttl / 3,
            ttl - Duration::from_millis(1),
            ttl,
            ttl * 2,
        ] {
            let what = format!("{interval:?} for {ttl:?}");
            assert_eq!(
                refresh_problem(interval, ttl).is_some(),
                refresh_chances(interval, ttl) == 0,
                "{what}"
            );
            // A keep-alive leaves two chances at least, whatever the profile says.
            if !interval.is_zero() {
                let every = keep_alive_interval(interval, ttl);
                assert!(refresh_chances(every, ttl) >= 2, "{what}");
            }
        }
    }
    assert_eq!(keep_alive_interval(s(30), s(90)), s(30));
    assert_eq!(keep_alive_interval(s(30), s(9)), s(3));
    assert_eq!(refresh_problem(s(30), s(90)), None);
    let why = refresh_problem(s(120), s(90)).unwrap();
    assert!(why.starts_with("is not below the ttl (1m 30s);"), "{why}");
    assert!(why.contains("at most ttl / 3 (here 30s)"), "{why}");
    let why = refresh_problem(Duration::ZERO, s(1)).unwrap();
    assert!(
        why.starts_with("is zero;") && why.contains("(here 333ms)"),
        "{why}"
    );
    assert!(refresh_problem(s(1), s(100)).is_none());
    assert!(
        refresh_problem(s(100), s(100))
            .unwrap()
            .contains("(here 33s)")
    );
    for (interval, ttl, chances) in [
        (30, 90, 2),
        (31, 90, 2),
        (45, 90, 1),
        (10, 90, 8),
        (90, 90, 0),
    ] {
        assert_eq!(
            refresh_chances(s(interval), s(ttl)),
            chances,
            "{interval} {ttl}"
        );
    }
    assert_eq!(
        refresh_margin(s(30), s(90)),
        "two chances to refresh before a record expires"
    );
    assert_eq!(
        refresh_margin(s(50), s(60)),
        "one chance to refresh before a record expires; ttl / 3 (here 20s) leaves two"
    );
    // The resolver refuses what the rule refuses, in its words.
    let err = profile(
        "[profiles.a]\nttl = \"1m\"\nrefresh_interval = \"1m\"",
        Some("a"),
    )
    .unwrap_err()
    .to_string();
    let why = refresh_problem(s(60), s(60)).unwrap();
    assert!(
        err.contains(&format!("refresh_interval = 1m {why}")),
        "{err}"
    );
}

#[test]
fn discover_names_known_agents_once_and_refuses_the_rest() {
    let agents = |text: &str| Config::parse(text, &src().path).map(|c| c.discover);
    assert_eq!(agents("").unwrap(), Vec::<&str>::new());
    assert_eq!(agents("[discover]\n").unwrap(), Vec::<&str>::new());
    assert_eq!(
        agents("[discover]\nagents = []\n").unwrap(),
        Vec::<&str>::new()
    );
    assert_eq!(
        agents("[discover]\nagents = [\"codex\", \"claude-code\", \"codex\"]\n").unwrap(),
        ["codex", "claude-code"]
    );
    // The profile carries it, whichever profile.
    let p = profile("[discover]\nagents = [\"hermes\"]\n", None).unwrap();
    assert_eq!(p.discover, ["hermes"]);
    for (text, says) in [
        (
            "[discover]\nagents = [\"claude\"]\n",
            "names \"claude\", which presence cannot discover",
        ),
        (
            "[discover]\nagents = \"codex\"\n",
            "must be an array of agent names",
        ),
        (
            "[discover]\nagents = [1]\n",
            "holds 1, which is not an agent name",
        ),
        ("[discover]\nagent = [\"codex\"]\n", "unknown field `agent`"),
    ] {
        let e = agents(text).unwrap_err().to_string();
        assert!(e.contains(says), "{text}: {e}");
        assert!(e.contains("config.toml"), "{text}: {e}");
        if !says.starts_with("unknown") {
            assert!(
                e.contains("claude-code, codex, hermes, opencode"),
                "{text}: {e}"
            );
        }
    }
}
