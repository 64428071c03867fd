use std::collections::BTreeMap;

use proptest::prelude::*;

use super::argv::shell_safe;
use super::*;

const HERE: Target<'static> = Target {
    this_host: "laptop",
    session_id: "s-1",
    opener: "xdg-open",
    inside_tmux: false,
};

fn builtin(endpoint: &str) -> Result<Vec<String>, OpenError> {
    argv(endpoint, &Handlers::default(), HERE)
}

fn v(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| s.to_string()).collect()
}

/// The part an error names, or the variant's name.
fn field(e: &OpenError) -> &'static str {
    match e {
        OpenError::Invalid { field, .. } => field,
        OpenError::NoEndpoint => "<none>",
        OpenError::Redacted => "<redacted>",
        OpenError::UnknownScheme { .. } => "<scheme>",
        OpenError::Template { .. } => "<template>",
    }
}

#[test]
fn builtin_handlers() {
    let cases: &[(&str, &[&str])] = &[
        ("tmux://laptop/work", &["tmux", "attach", "-t", "work"]),
        ("tmux://LAPTOP/work", &["tmux", "attach", "-t", "work"]),
        ("tmux://localhost/w-2", &["tmux", "attach", "-t", "w-2"]),
        ("tmux://laptop/work:1", &["tmux", "attach", "-t", "work:1"]),
        (
            "tmux://laptop/work:1.0",
            &["tmux", "attach", "-t", "work:1.0"],
        ),
        (
            "tmux://desk/work",
            &["ssh", "-t", "--", "desk", "tmux", "attach", "-t", "work"],
        ),
        (
            "tmux://bob@laptop:2222/work",
            &[
                "ssh",
                "-t",
                "-p",
                "2222",
                "--",
                "bob@laptop",
                "tmux",
                "attach",
                "-t",
                "work",
            ],
        ),
        ("ssh://desk", &["ssh", "-t", "--", "desk"]),
        (
            "ssh://alice@desk:22/",
            &["ssh", "-t", "-p", "22", "--", "alice@desk"],
        ),
        (
            "ssh://desk/srv/app",
            &[
                "ssh",
                "-t",
                "--",
                "desk",
                "cd -- /srv/app && exec \"${SHELL:-/bin/sh}\" -l",
            ],
        ),
        (
            "ssh://desk/~/my%20code",
            &[
                "ssh",
                "-t",
                "--",
                "desk",
                "cd -- ~/'my code' && exec \"${SHELL:-/bin/sh}\" -l",
            ],
        ),
        (
            "ssh://desk/it's%3Brm%20-rf",
            &[
                "ssh",
                "-t",
                "--",
                "desk",
                "cd -- '/it'\\''s;rm -rf' && exec \"${SHELL:-/bin/sh}\" -l",
            ],
        ),
        (
            "ssh://[::1]:2200",
            &["ssh", "-t", "-p", "2200", "--", "::1"],
        ),
        ("ssh://al@[fe80::1]", &["ssh", "-t", "--", "al@fe80::1"]),
        ("mosh://desk", &["mosh", "--", "desk"]),
        (
            "mosh://al@desk:2222/",
            &["mosh", "--ssh=ssh -p 2222", "--", "al@desk"],
        ),
        (
            "https://example.org/a?b=1#c",
            &["xdg-open", "https://example.org/a?b=1#c"],
        ),
        ("HTTP://example.org", &["xdg-open", "HTTP://example.org"]),
    ];
    for (endpoint, want) in cases {
        assert_eq!(builtin(endpoint), Ok(v(want)), "{endpoint}");
    }
}

/// A `tmux://` host is this machine only by its whole name: a name with a
/// dot is compared whole, a bare name with this machine's first label.
#[test]
fn tmux_hosts_are_compared_whole() {
    let local = |endpoint: &str, this: &str| {
        let target = Target {
            this_host: this,
            ..HERE
        };
        match argv(endpoint, &Handlers::default(), target) {
            Ok(argv) if argv[0] == "tmux" => true,
            Ok(argv) if argv[0] == "ssh" => false,
            other => panic!("{endpoint} on {this}: {other:?}"),
        }
    };
    let cases: &[(&str, &str, bool)] = &[
        ("tmux://vm/main", "vm", true),
        ("tmux://VM/main", "vm", true),
        ("tmux://vm./main", "vm", true),
        ("tmux://localhost/main", "vm", true),
        ("tmux://LocalHost/main", "", true),
        ("tmux://vm/main", "vm.lab.example", true),
        ("tmux://vm.lab.example/main", "vm.lab.example", true),
        ("tmux://VM.Lab.Example./main", "vm.lab.example", true),
        // Another machine whose first label is this one's name.
        ("tmux://vm.attacker.example/main", "vm", false),
        ("tmux://vm.attacker.example/main", "vm.lab.example", false),
        ("tmux://vm.local/main", "vm", false),
        ("tmux://vm.lab/main", "vm.lab.example", false),
        ("tmux://vm2/main", "vm", false),
        ("tmux://v/main", "vm", false),
        ("tmux://vm/main", "", false),
        ("tmux://lab/main", "vm.lab.example", false),
    ];
    for &(endpoint, this, want) in cases {
        assert_eq!(local(endpoint, this), want, "{endpoint} on {this:?}");
    }
}

/// Each attempt and the part its refusal names.
#[test]
fn injection_attempts_are_refused_naming_the_part() {
    let cases: &[(&str, &str)] = &[
        // Leading dashes in every position.
        ("ssh://-oProxyCommand=sh/x", "host"),
        ("ssh://-oProxyCommand=touch%20x/x", "host"),
        ("ssh://--/x", "host"),
        ("ssh://-/x", "host"),
        ("ssh://-oProxyCommand=x@desk", "user"),
        ("ssh://desk:-22", "port"),
        ("tmux://desk/-t", "session"),
        ("tmux://laptop/--help", "session"),
        // tmux targets: SESSION:WINDOW[.PANE] with indexes only.
        ("tmux://laptop/work:", "session"),
        ("tmux://laptop/:1", "session"),
        ("tmux://laptop/work:a", "session"),
        ("tmux://laptop/work:1.", "session"),
        ("tmux://laptop/work:1.0.2", "session"),
        ("tmux://laptop/work:1:2", "session"),
        ("tmux://laptop/work:-1", "session"),
        ("mosh://--ssh=sh@desk", "user"),
        ("mosh://-desk", "host"),
        ("tmux://-L/x", "host"),
        // Percent-encoded dashes and separators.
        ("ssh://%2DoProxyCommand=x/", "host"),
        ("tmux://laptop/%2Dt", "session"),
        ("tmux://laptop/%2d%2dhelp", "session"),
        ("ssh://%2d@desk", "user"),
        ("tmux://desk/a%3Brm%20-rf%20~", "session"),
        // Shell syntax in a session name.
        ("tmux://desk/;rm -rf ~", "endpoint"),
        ("tmux://desk/;rm%20-rf%20~", "session"),
        ("tmux://desk/$(id)", "session"),
        ("tmux://desk/`id`", "session"),
        ("tmux://desk/a|b", "session"),
        ("tmux://desk/a:b", "session"),
        ("tmux://desk/", "session"),
        ("tmux://desk/a/b", "session"),
        // Spaces, newlines, NUL, other controls.
        ("ssh://desk /x", "endpoint"),
        ("ssh://desk\n-oProxyCommand=x", "endpoint"),
        ("ssh://desk\0", "endpoint"),
        ("ssh://desk\t", "endpoint"),
        ("ssh://desk/a%00b", "path"),
        ("ssh://desk/a%0Ab", "path"),
        ("ssh://desk/a%1b[2J", "path"),
        ("ssh://desk/%ZZ", "path"),
        ("ssh://desk/%E2%80%AEgpj.exe", "path"),
        ("ssh://desk/a%E2%80%8Bb", "path"),
        ("ssh://desk/a%5Cb", "path"),
        ("ssh://desk/a%C2%9Bb", "path"),
        ("ssh://desk/%ff", "path"),
        ("https://example.org/ -x", "endpoint"),
        ("https://example.org/\u{7f}", "endpoint"),
        // Unicode lookalikes of '-', '/' and ':' and IDN hosts.
        ("ssh://\u{2010}oProxyCommand=x/", "endpoint"),
        ("ssh://\u{2212}oProxyCommand=x/", "endpoint"),
        ("ssh://\u{ff0d}oProxyCommand=x/", "endpoint"),
        ("tmux://laptop/\u{2013}t", "endpoint"),
        ("ssh://dеsk/", "endpoint"),
        ("ssh:\u{2215}\u{2215}desk", "endpoint"),
        ("ssh://desk\u{a0}/", "endpoint"),
        ("ssh://desk\u{202e}/", "endpoint"),
        // Hosts and ports that are not.
        ("ssh:///x", "host"),
        ("ssh://alice@/x", "host"),
        ("ssh://desk;id/", "host"),
        ("ssh://de$k/", "host"),
        ("ssh://.desk/", "host"),
        ("ssh://[::1/", "host"),
        ("ssh://[-oProxyCommand]/", "host"),
        ("ssh://[]/", "host"),
        ("ssh://[::1]x/", "host"),
        ("ssh://::1/", "host"),
        ("ssh://fe80::1/", "port"),
        ("ssh://desk:0/", "port"),
        ("ssh://desk:65536/", "port"),
        ("ssh://desk:+22/", "port"),
        ("ssh://desk:/", "port"),
        ("ssh://a:secret@desk/", "user"),
        ("ssh://@desk/", "user"),
        ("ssh://a$b@desk/", "user"),
        // Not a URL, or not this scheme's.
        ("desk", "endpoint"),
        ("-oProxyCommand=x", "endpoint"),
        ("://desk", "scheme"),
        ("1ssh://desk", "scheme"),
        ("s;h://desk", "scheme"),
        ("ssh://desk/x?-o", "endpoint"),
        ("tmux://desk/a#b", "endpoint"),
        ("mosh://desk/home", "path"),
        ("gopher://desk/", "<scheme>"),
        ("ssh://alice:[redacted]@desk/", "<redacted>"),
        ("https://example.org/?token=[redacted]", "<redacted>"),
        ("", "<none>"),
    ];
    for (endpoint, want) in cases {
        match builtin(endpoint) {
            Ok(argv) => panic!("{endpoint:?} was not refused: {argv:?}"),
            Err(e) => assert_eq!(field(&e), *want, "{endpoint:?}: {e}"),
        }
    }
}

/// The value is quoted as it is, not escaped: the output layer makes the
/// whole message safe once (an escape here would be escaped again there).
#[test]
fn errors_name_the_part_and_quote_the_value() {
    let e = builtin("ssh://-oProxyCommand=x/").unwrap_err();
    assert_eq!(
        e.to_string(),
        "refused to open: the endpoint's host \"-oProxyCommand=x\" starts with '-' \
         (it would read as an option)"
    );
    let e = builtin("ssh://desk\n").unwrap_err().to_string();
    assert!(e.contains("\"ssh://desk\n\" contains"), "{e}");
    // The whole endpoint is named as itself, never "the endpoint's endpoint".
    let e = builtin("ssh://desk/x?x=1").unwrap_err().to_string();
    assert_eq!(
        e,
        "refused to open: the endpoint \"ssh://desk/x?x=1\" has a query or fragment, \
         which ssh:// does not take"
    );
    let e = builtin("ssh://desk/a%E2%80%AEb").unwrap_err().to_string();
    assert!(e.contains("\"/a\u{202e}b\" contains"), "{e}");
    // The character at fault is named without an escape of its own.
    let e = builtin("ssh://desk\u{202e}/").unwrap_err().to_string();
    assert!(
        e.ends_with("non-ASCII character U+202E (percent-encode it)"),
        "{e}"
    );
    let e = builtin("tmux://desk/it%27s").unwrap_err().to_string();
    assert!(e.contains("\"it's\" contains \"'\";"), "{e}");
    let e = builtin("ssh://de$k/").unwrap_err().to_string();
    assert!(e.contains("\"de$k\" contains '$';"), "{e}");
    let e = builtin("gopher://x").unwrap_err().to_string();
    assert_eq!(
        e,
        "no handler for scheme 'gopher'; handlers exist for: http, https, mosh, ssh, tmux"
    );
}

/// Inside tmux a tmux session of this machine is switched to, as tmux
/// refuses to nest an attach; one elsewhere still goes through ssh; a
/// configured handler's `inside_tmux` runs instead of its `command`.
#[test]
fn inside_tmux_a_local_session_is_switched_to() {
    let inside = Target {
        inside_tmux: true,
        ..HERE
    };
    let d = Handlers::default();
    assert_eq!(
        argv("tmux://laptop/work:1.0", &d, inside),
        Ok(v(&["tmux", "switch-client", "-t", "work:1.0"]))
    );
    assert_eq!(
        argv("tmux://desk/work", &d, inside),
        Ok(v(&[
            "ssh", "-t", "--", "desk", "tmux", "attach", "-t", "work"
        ]))
    );
    let h = handlers("ssh", &["wezterm", "ssh", "{host}"])
        .unwrap()
        .with_inside_tmux(BTreeMap::from([(
            "SSH".to_string(),
            v(&["tmux", "new-window", "ssh {host}"]),
        )]))
        .unwrap();
    assert_eq!(
        argv("ssh://desk", &h, inside),
        Ok(v(&["tmux", "new-window", "ssh desk"]))
    );
    assert_eq!(
        argv("ssh://desk", &h, HERE),
        Ok(v(&["wezterm", "ssh", "desk"]))
    );
    // Checked as `command` is, and only next to one.
    for (scheme, bad) in [
        ("ssh", &[][..]),
        ("ssh", &["{host}"][..]),
        ("ssh", &["x", "{nope}"][..]),
        ("mosh", &["x"][..]),
    ] {
        let e = handlers("ssh", &["x"])
            .unwrap()
            .with_inside_tmux(BTreeMap::from([(scheme.to_string(), v(bad))]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("inside_tmux"), "{bad:?}: {e}");
    }
}

fn handlers(scheme: &str, command: &[&str]) -> Result<Handlers, OpenError> {
    Handlers::new(BTreeMap::from([(scheme.to_string(), v(command))]))
}

#[test]
fn configured_handlers_fill_one_element_per_placeholder() {
    let h = handlers(
        "tmux",
        &[
            "wezterm",
            "ssh",
            "{user_at_host}",
            "--",
            "tmux",
            "attach",
            "-t",
            "{session}",
        ],
    )
    .unwrap();
    assert_eq!(
        argv("tmux://al@desk/work", &h, HERE),
        Ok(v(&[
            "wezterm", "ssh", "al@desk", "--", "tmux", "attach", "-t", "work"
        ]))
    );
    let h = handlers(
        "zed",
        &[
            "zed",
            "--url={url}",
            "{scheme}",
            "{user}",
            "{host}",
            "-p{port}",
            "{path}",
            "{session_id}",
        ],
    )
    .unwrap();
    assert_eq!(
        argv("zed://al@desk:7/src/x", &h, HERE),
        Ok(v(&[
            "zed",
            "--url=zed://al@desk:7/src/x",
            "zed",
            "al",
            "desk",
            "-p7",
            "/src/x",
            "s-1"
        ]))
    );
    assert_eq!(
        h.schemes(),
        v(&["http", "https", "mosh", "ssh", "tmux", "zed"])
    );
    // A configured handler overrides the built-in one.
    let h = handlers("https", &["firefox", "--new-tab", "{url}"]).unwrap();
    assert_eq!(
        argv("https://a.example/", &h, HERE),
        Ok(v(&["firefox", "--new-tab", "https://a.example/"]))
    );
}

#[test]
fn configured_handlers_refuse_what_a_remote_shell_would_read() {
    let h = handlers("ssh", &["kitty", "ssh", "{host}", "cd", "{path}"]).unwrap();
    let e = argv("ssh://desk/a%20b", &h, HERE).unwrap_err();
    assert_eq!(field(&e), "path", "{e}");
    let e = argv("ssh://desk/a%3Bid", &h, HERE).unwrap_err();
    assert_eq!(field(&e), "path", "{e}");
    let e = argv("ssh://desk", &h, HERE).unwrap_err();
    assert!(e.to_string().contains("has no path"), "{e}");
    let h = handlers("ssh", &["x", "{session_id}"]).unwrap();
    let hostile = Target {
        session_id: "-oProxyCommand=x",
        ..HERE
    };
    assert_eq!(
        field(&argv("ssh://desk", &h, hostile).unwrap_err()),
        "session_id"
    );
    let h = handlers("ssh", &["x", "{port}"]).unwrap();
    assert!(
        argv("ssh://desk", &h, HERE)
            .unwrap_err()
            .to_string()
            .contains("has no port")
    );
}

/// `{url}` reaches a remote shell as one word of its command line when a
/// template hands it to `ssh HOST`: checked like every other value.
#[test]
fn configured_url_is_checked_like_every_other_value() {
    let remote = |scheme: &str| handlers(scheme, &["ssh", "desk", "open", "{url}"]).unwrap();
    for endpoint in [
        "zed://desk/x;id",
        "zed://desk/$(id)",
        "zed://desk/`id`",
        "zed://desk/a|id",
        "zed://desk/a&id",
        "zed://desk/a>x",
        "zed://desk/a<x",
        "zed://desk/a'b",
        "zed://desk/a\"b",
        "zed://desk/a(b)",
        "zed://desk/a{b,c}",
        "zed://desk/a!b",
        "zed://desk/*",
        "zed://desk/a~b",
        "zed://desk/a^b",
        "zed://[::1]/x",
        "zed://[::1]:7/x",
    ] {
        let e = argv(endpoint, &remote("zed"), HERE).unwrap_err();
        assert_eq!(field(&e), "url", "{endpoint:?}: {e}");
    }
    // A configured http(s) handler: a query or fragment is refused there…
    for endpoint in [
        "https://example.org/?a=1&id",
        "https://example.org/a?b",
        "https://example.org/a#b",
    ] {
        let e = argv(endpoint, &remote("https"), HERE).unwrap_err();
        assert_eq!(field(&e), "url", "{endpoint:?}: {e}");
    }
    // …and the built-in one, which hands the URL to the opener without a
    // shell, still opens it.
    assert_eq!(
        builtin("https://example.org/?a=1&id"),
        Ok(v(&["xdg-open", "https://example.org/?a=1&id"]))
    );
    for (scheme, endpoint) in [
        ("zed", "zed://al@desk:7/src/x"),
        ("zed", "zed://desk/my%20code%3Bx%27"),
        ("zed", "zed://desk/a=b,c@d+e_f"),
        ("zed+x.y-z", "zed+x.y-z://desk"),
        ("https", "https://example.org/p=1/"),
    ] {
        assert_eq!(
            argv(endpoint, &remote(scheme), HERE),
            Ok(v(&["ssh", "desk", "open", endpoint])),
            "{endpoint:?}"
        );
    }
}

#[test]
fn bad_templates_are_refused() {
    for bad in [
        &[][..],
        &["{host}"],
        &[""],
        &["ssh", "{hots}"],
        &["ssh", "{host"],
        &["ssh", "host}"],
    ] {
        let e = handlers("ssh", bad).unwrap_err();
        assert!(matches!(e, OpenError::Template { .. }), "{bad:?}: {e}");
    }
}

#[test]
fn quoting() {
    let cases = [
        ("plain-1.2:x/y@z,+_", "plain-1.2:x/y@z,+_"),
        ("", "''"),
        ("a b", "'a b'"),
        ("it's", r"'it'\''s'"),
        ("-x", "-x"),
        ("=cmd", "'=cmd'"),
        ("~root", "'~root'"),
        ("$(id)", "'$(id)'"),
        ("a\nb", "'a\nb'"),
    ];
    for (raw, want) in cases {
        assert_eq!(shell_quote(raw), want, "{raw:?}");
    }
    assert_eq!(
        shell_line(&v(&["ssh", "-t", "--", "a b"])),
        "ssh -t -- 'a b'"
    );
}

proptest! {
    /// Whatever the endpoint, an argv that comes out has nothing the
    /// terminal sanitizer would escape, its destination never reads as an option, and what
    /// goes to a remote tmux is in the set that needs no quoting.
    #[test]
    fn no_endpoint_yields_an_unsafe_argv(
        scheme in prop::sample::select(vec!["ssh", "tmux", "mosh", "https", "x"]),
        user in "\\PC{0,6}",
        host in "(\\PC|-|%2[dD]){0,8}",
        port in "\\PC{0,4}",
        path in "(\\PC|-|%[0-9a-fA-F]{2}|%[cCeE][0-9a-fA-F]%[89abAB][0-9a-fA-F]|/){0,10}",
    ) {
        for endpoint in [
            format!("{scheme}://{user}@{host}:{port}/{path}"),
            format!("{scheme}://{host}/{path}"),
            format!("{scheme}://{host}"),
        ] {
            let Ok(argv) = builtin(&endpoint) else { continue };
            for a in &argv {
                prop_assert_eq!(crate::text::terminal_safe(a), a.as_str(), "{:?}", argv);
            }
            if let Some(i) = argv.iter().position(|a| a == "--") {
                prop_assert!(!argv[i + 1].starts_with('-'), "{argv:?}");
                if argv.len() > i + 2 && argv[i + 2] == "tmux" {
                    prop_assert!(shell_safe(&argv[i + 5]), "{argv:?}");
                }
            }
            if argv[0] == "tmux" {
                prop_assert!(!argv[3].starts_with('-'), "{argv:?}");
            }
        }
    }

    #[test]
    fn parsing_never_panics(text in "\\PC{0,40}") {
        let _ = builtin(&text);
    }

    /// Whatever the endpoint, the `{url}` a configured template gets holds
    /// no character a shell reads and does not start as an option.
    #[test]
    fn a_configured_url_is_one_inert_shell_word(
        scheme in prop::sample::select(vec!["zed", "https", "ssh"]),
        rest in "[ -~]{0,24}",
    ) {
        let h = handlers(scheme, &["ssh", "desk", "{url}"]).unwrap();
        if let Ok(argv) = argv(&format!("{scheme}://{rest}"), &h, HERE) {
            let url = &argv[2];
            prop_assert!(!url.starts_with(['-', '=', '~']), "{url:?}");
            prop_assert!(
                !url.contains(|c: char| " \t\n\"'\\`$;&|<>(){}[]*?!#~^".contains(c)),
                "{url:?}"
            );
        }
    }
}
