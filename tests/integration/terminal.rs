//! On a real pseudo-terminal: hostile text — records and file names planted
//! the way another device could plant them, carrying escape sequences,
//! controls, bidi overrides and invisible characters, shown by every command
//! that prints for a person (the only escape sequences that may reach the
//! terminal are the tool's own colour codes and `list --watch`'s redraw) —
//! and the table's fit to the terminal's width and its colour policy.

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

use serde_json::json;

use crate::harness::{
    Device, PATIENCE, World, kill, mkfifo, now, require_tool, sessions, wait_for, wait_until,
    write_record,
};

/// Payloads that do something to a terminal when printed raw.
const PAYLOADS: &[&str] = &[
    "\x1b]52;c;SGVsbG8=\x07clip", // OSC 52: write the clipboard
    "\x1b[2J\x1b[Hclear",         // clear the screen
    "\x1b]0;pwned\x07title",      // window title
    "\x1b]8;;https://evil\x1b\\link\x1b]8;;\x1b\\", // OSC 8 hyperlink
    "\x1bPq#0;2;0;0;0\x1b\\dcs",  // DCS
    "ok\rOVERWRITTEN",            // line overwrite
    "row\n*fake-row  working",    // a fake row
    "tab\there\x00nul\x7fdel",    // C0 and DEL
    "c1\u{9b}31mcsi\u{9d}osc\u{85}nel", // C1 controls
    "\u{202e}gnp.exe",            // bidi override
    "\u{2066}iso\u{2069}\u{200f}rlm", // bidi isolates and marks
    "zero\u{200b}width\u{200d}\u{feff}", // zero-width characters
    "soft\u{ad}hyphen\u{2028}sep\u{e0041}", // other invisible format characters
];

/// Characters that must never reach the terminal from a record.
fn forbidden(c: char) -> bool {
    (c.is_control() && c != '\n')
        || matches!(c,
            '\u{ad}' | '\u{200b}'..='\u{200f}' | '\u{2028}'..='\u{202e}'
            | '\u{2060}'..='\u{206f}' | '\u{feff}' | '\u{e0000}'..='\u{e007f}')
}

/// The terminal output with the tool's own escape sequences removed; fails
/// the test on any other control byte or format character.
fn assert_clean(what: &str, raw: &str, redraw: bool) {
    let own = regex::Regex::new(r"\x1b\[(?:0|1|2|3[0-7])m").unwrap();
    let mut text = own.replace_all(raw, "").into_owned();
    if redraw {
        // `list --watch`'s own: home, clear the screen (once), clear to the
        // end of the line and of the screen.
        for own in ["\x1b[H", "\x1b[2J", "\x1b[K", "\x1b[J"] {
            text = text.replace(own, "");
        }
    }
    // The terminal's line discipline turns each \n into \r\n.
    let text = text.replace("\r\n", "\n");
    if let Some((i, c)) = text.char_indices().find(|&(_, c)| forbidden(c)) {
        let from = text[..i].char_indices().rev().nth(60).map_or(0, |(j, _)| j);
        panic!(
            "{what}: {c:?} reached the terminal, after {:?}\nwhole output: {text:?}",
            &text[from..i]
        );
    }
}

/// Runs a shell `script` on a pseudo-terminal (util-linux `script`), in the
/// device's environment, and returns what the terminal received.
fn on_pty(dev: &Device, env: &[(&str, &str)], shell: &str) -> String {
    on_pty_of(200, dev, env, shell)
}

/// [`on_pty`] on a terminal `cols` columns wide.
fn on_pty_of(cols: usize, dev: &Device, env: &[(&str, &str)], shell: &str) -> String {
    let out = pty_command(cols, dev, env, shell).output().unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// util-linux `script` running the shell code `shell` on a terminal `cols`
/// columns wide, in the device's environment.
fn pty_command(cols: usize, dev: &Device, env: &[(&str, &str)], shell: &str) -> Command {
    let file = dev.root.join("cmd.sh");
    std::fs::write(&file, format!("stty rows 40 cols {cols}\n{shell}\n")).unwrap();
    let mut cmd: Command = dev.program(require_tool("script"));
    cmd.env("TERM", "xterm-256color").args([
        "-qec",
        &format!("sh {}", file.display()),
        "/dev/null",
    ]);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}

/// A long-running `presence` on a pseudo-terminal, what the terminal
/// received read as it comes; `exec` in its shell makes it the process that
/// `stop` interrupts.
struct LivePty {
    child: std::process::Child,
    received: Arc<Mutex<Vec<u8>>>,
    reader: std::thread::JoinHandle<()>,
    pid: String,
}

impl LivePty {
    /// Runs `presence ARGS` (a shell word list) on a terminal 200 columns wide.
    fn start(dev: &Device, env: &[(&str, &str)], args: &str) -> LivePty {
        let pidfile = dev.root.join("live.pid");
        let _ = std::fs::remove_file(&pidfile);
        let shell = format!("echo $$ > \"{}\"; exec presence {args}", pidfile.display());
        let mut child = pty_command(200, dev, env, &shell)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdout = child.stdout.take().unwrap();
        let received = Arc::new(Mutex::new(Vec::new()));
        let sink = received.clone();
        let reader = std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = std::io::Read::read(&mut stdout, &mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        });
        let (pid, _) = wait_for(&format!("presence {args} to start"), PATIENCE, || {
            let text = std::fs::read_to_string(&pidfile).unwrap_or_default();
            text.strip_suffix('\n')
                .map(str::to_string)
                .ok_or("no pid file yet")
        });
        LivePty {
            child,
            received,
            reader,
            pid,
        }
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.received.lock().unwrap()).into_owned()
    }

    /// Waits until the terminal has received what `seen` looks for.
    fn wait_for(&self, what: &str, seen: impl Fn(&str) -> bool) {
        wait_until(what, PATIENCE, || seen(&self.text()));
    }

    /// Interrupts it as Ctrl-C would and returns all the terminal received.
    fn stop(self) -> String {
        let LivePty {
            mut child,
            received,
            reader,
            pid,
        } = self;
        assert!(kill("-INT", &[&pid]), "kill -INT {pid}");
        child.wait().unwrap();
        reader.join().unwrap();
        String::from_utf8_lossy(&received.lock().unwrap()).into_owned()
    }
}

fn plant(dir: &Path) -> Vec<String> {
    let t = now();
    let mut ids = Vec::new();
    for (i, p) in PAYLOADS.iter().enumerate() {
        let id = format!("s{i}-{p}");
        let meta = json!({ format!("k{p}"): format!("v{p}"), "plain": p });
        let rec = json!({
            "version": 1, "session_id": id, "session_key": format!("key{i}-{p}"),
            "status": p, "title": format!("title {p}"), "model": p, "cwd": p,
            "client": format!("c{p}"), "source": p, "endpoint": format!("ssh://h/{p}"),
            "host": format!("host{p}"), "pid": 1, "instance_id": format!("i{p}"),
            "device_id": format!("aéééééé{p}"), "profile": "default",
            "updated_at": t, "expires_at": t + 90.0, "started_at": t - i as f64,
            "metadata": meta,
        });
        // Half of them under hostile file names.
        let name_part = p.replace(['/', '\0'], "_");
        let file = if i % 2 == 0 {
            format!("f{i}{name_part}.json")
        } else {
            format!("f{i}.json")
        };
        write_record(dir, &file, &rec);
        // Garbage for expire: long dead, under a hostile name.
        let mut dead = rec.clone();
        dead["session_id"] = json!(format!("dead{i}-{p}"));
        dead["updated_at"] = json!(t - 20_000.0);
        dead["expires_at"] = json!(t - 19_910.0);
        write_record(
            dir,
            &format!("dead{i}{name_part}.sync-conflict-x.json"),
            &dead,
        );
        ids.push(id);
    }
    // Files that are skipped, with hostile names: `-v` and doctor name them.
    std::fs::write(dir.join("broken\x1b]52;c;QQ==\x07.json"), b"{not json").unwrap();
    let fifo = dir.join("fifo\x1b[2J\u{202e}.json");
    mkfifo(&fifo);
    ids
}

#[test]
fn nothing_from_the_directory_reaches_a_terminal_raw() {
    let w = World::new();
    let dev = w.device("a");
    let dir = w.shared();
    // This device publishes once, so that its own record, then a planted
    // copy at its own file name, are part of the picture.
    dev.publish("mine", &["--title", "my own"]);
    let ids = plant(&dir);
    let own_file = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap_or_default())
        .find(|n| n.ends_with(".mine.json"))
        .expect("own record file");

    let id0 = ids[0].as_str();
    let id9 = ids[9].as_str();
    let env = [
        ("ID0", id0),
        ("ID9", id9),
        ("PAYLOAD", PAYLOADS[0]),
        ("DIR", dir.to_str().unwrap()),
    ];
    // (what, shell, whether output must show an escaped payload, redraw)
    let cases: Vec<(&str, String, bool, bool)> = vec![
        ("list", "presence list".into(), true, false),
        ("list --all -v", "presence list --all --include-expired -v".into(), true, false),
        (
            "list --format",
            "presence list --format '{session_id}|{host}|{client}|{status}|{model}|{cwd}|{metadata}|{title}|{file}|{device_id}'".into(),
            true,
            false,
        ),
        ("show", r#"presence show "$ID0"; presence show "$ID9""#.into(), true, false),
        ("show missing", r#"presence show "x$PAYLOAD""#.into(), true, false),
        (
            "open",
            r#"presence open --yes "$ID0"; presence open --print "$ID9"; presence open "x$PAYLOAD""#.into(),
            true,
            false,
        ),
    ];
    let check = |what: &str, out: &str, shows: bool, redraw: bool| {
        assert!(!out.contains("panicked"), "{what}: {out}");
        assert_clean(what, out, redraw);
        if shows {
            assert!(
                out.contains("\\e") || out.contains("\\u{") || out.contains("\\r"),
                "{what}: no escaped payload in the output, so the test saw nothing: {out:?}"
            );
        }
    };
    for (what, shell, shows, redraw) in cases {
        check(what, &on_pty(&dev, &env, &shell), shows, redraw);
    }
    // The initial set, `ready`, and a record going down.
    let watch = LivePty::start(&dev, &env, "watch -v");
    watch.wait_for("the initial set and `ready`", |out| out.contains(" ready "));
    std::fs::remove_file(dir.join("f1.json")).unwrap();
    watch.wait_for("the deleted record's `down`", |out| {
        out.contains("down (cleared)")
    });
    check("watch", &watch.stop(), true, false);
    // A whole table (interrupted only once it is drawn).
    let table = LivePty::start(&dev, &env, "list --watch");
    table.wait_for("the table", |out| out.contains("SESSION"));
    check("list --watch", &table.stop(), true, true);
    let cases: Vec<(&str, String, bool, bool)> = vec![
        ("doctor", "presence doctor".into(), true, false),
        ("devices", "presence devices".into(), true, false),
        ("expire --dry-run", "presence expire --dry-run -v".into(), true, false),
        (
            "publish over a planted own file",
            format!(
                "cp \"$DIR\"/f3.json \"$DIR\"/{own_file}; presence publish --session mine --title t; \
                 presence publish --session \"p$PAYLOAD\" --title \"$PAYLOAD\" --meta \"k=$PAYLOAD\""
            ),
            true,
            false,
        ),
        ("refresh", "presence refresh -v".into(), false, false),
        ("clear", r#"presence clear --session "p$PAYLOAD"; presence clear --session "$ID0""#.into(), true, false),
        ("run", r#"presence run --session "r$PAYLOAD" -- true; presence run --session "$PAYLOAD" -- /nonexistent/$PAYLOAD"#.into(), true, false),
        ("expire", "presence expire -v".into(), true, false),
    ];
    for (what, shell, shows, redraw) in cases {
        check(what, &on_pty(&dev, &env, &shell), shows, redraw);
    }
}

#[test]
fn json_output_keeps_exact_values() {
    let w = World::new();
    let dev = w.device("a");
    let ids = plant(&w.shared());
    let rows = dev.list(&[]);
    let mut got = sessions(&rows);
    got.sort();
    let mut want = ids.clone();
    want.sort();
    assert_eq!(got, want);
    assert_eq!(dev.show(&ids[0]).title, format!("title {}", PAYLOADS[0]));
}

/// Three sessions of other devices, with long titles.
fn plant_table(dir: &Path) {
    let t = now();
    let rows = [
        (
            "s-20261130-a1",
            "laptop",
            "working",
            "Refactor the parser for the new grammar, then the lexer",
        ),
        (
            "gw-7f2",
            "desktop",
            "waiting",
            "Review PR #412: the sync engine's conflict copies",
        ),
        ("chat-2a9f41", "nas", "idle", "Nightly release notes"),
    ];
    for (i, (id, host, status, title)) in rows.into_iter().enumerate() {
        let rec = json!({
            "version": 1, "session_id": id, "status": status, "title": title,
            "client": "terminal", "host": host, "profile": "default",
            "device_id": format!("dev{i}"), "instance_id": format!("{host}-dev{i}"),
            "updated_at": t, "expires_at": t + 90.0, "started_at": t - 600.0 * i as f64,
        });
        write_record(dir, &format!("{host}-dev{i}.{id}.json"), &rec);
    }
}

/// The lines a terminal shows, colour codes off.
fn screen(raw: &str) -> Vec<String> {
    let colour = regex::Regex::new(r"\x1b\[[0-9;]*m").unwrap();
    colour
        .replace_all(raw, "")
        .replace("\r\n", "\n")
        .lines()
        .map(str::to_string)
        .collect()
}

fn width(line: &str) -> usize {
    unicode_width::UnicodeWidthStr::width(line)
}

#[test]
fn the_table_fits_40_and_200_columns_keeping_ids_whole() {
    let w = World::new();
    let dev = w.device("a");
    plant_table(&w.shared());
    let ids = ["s-20261130-a1", "gw-7f2", "chat-2a9f41"];

    let narrow = screen(&on_pty_of(40, &dev, &[], "presence list"));
    assert_eq!(narrow.len(), 4, "{narrow:#?}");
    for line in &narrow {
        assert!(width(line) <= 40, "wider than 40 columns: {line:?}");
    }
    let header: Vec<&str> = narrow[0].split_whitespace().collect();
    assert_eq!(
        header,
        ["SESSION", "STATUS", "HOST", "TITLE"],
        "{narrow:#?}"
    );
    for (line, id) in narrow[1..].iter().zip(ids) {
        assert!(
            // `?`: planted by hand, the records are unsigned.
            line.starts_with(&format!("?{id} ")),
            "the id is cut: {line:?}"
        );
    }
    assert!(
        narrow[1].contains(" laptop ") && narrow[3].contains(" nas "),
        "{narrow:#?}"
    );
    assert!(narrow[1].ends_with('…'), "the title gives way: {narrow:#?}");

    let wide = screen(&on_pty_of(200, &dev, &[], "presence list"));
    let header: Vec<&str> = wide[0].split_whitespace().collect();
    assert_eq!(
        header,
        [
            "SESSION", "STATUS", "CLIENT", "HOST", "PROFILE", "UP", "SEEN", "EXPIRES", "TITLE"
        ]
    );
    assert!(wide[1].ends_with("then the lexer"), "{wide:#?}");
    assert!(
        wide[2].contains(" 10m ") && wide[3].contains(" 20m "),
        "UP: {wide:#?}"
    );
    assert!(!wide.iter().any(|l| l.contains('…')), "{wide:#?}");

    // --no-trunc: everything, whatever the width (the terminal wraps).
    let raw = on_pty_of(40, &dev, &[], "presence list --no-trunc");
    let all = screen(&raw);
    assert!(
        all[0].contains("PROFILE") && all[0].contains("EXPIRES"),
        "{all:#?}"
    );
    assert!(all[1].ends_with("then the lexer"), "{all:#?}");
    assert!(width(&all[1]) > 40);
}

#[test]
fn colour_follows_the_flag_then_no_color_then_clicolor_force() {
    let w = World::new();
    let dev = w.device("a");
    plant_table(&w.shared());
    let bold = "\x1b[1mSESSION";
    let green = "\x1b[32m?s-20261130-a1";
    // (shell, whether the output is coloured)
    let cases = [
        ("presence list", true),
        ("NO_COLOR=1 presence list", false),
        ("NO_COLOR= presence list", true),
        ("TERM=dumb presence list", false),
        ("presence list --color never", false),
        ("NO_COLOR=1 presence list --color always", true),
        // Into a pipe (a pager): plain, unless forced.
        ("presence list | cat", false),
        ("presence list --color always | cat", true),
        ("CLICOLOR_FORCE=1 presence list | cat", true),
        ("CLICOLOR_FORCE=0 presence list | cat", false),
        ("CLICOLOR_FORCE=1 NO_COLOR=1 presence list | cat", false),
        ("CLICOLOR_FORCE=1 presence list --color never | cat", false),
    ];
    for (shell, coloured) in cases {
        let out = on_pty(&dev, &[], shell);
        if coloured {
            assert!(
                out.contains(bold) && out.contains(green),
                "{shell}: {out:?}"
            );
        } else {
            assert!(!out.contains('\x1b'), "{shell}: {out:?}");
            assert!(out.contains("SESSION"), "{shell}: {out:?}");
        }
    }
}

/// clap's own help and usage errors follow the same flag and variables as
/// the rest of the output.
#[test]
fn help_and_usage_errors_follow_the_colour_flag() {
    let w = World::new();
    let dev = w.device("a");
    // (shell, whether the output is coloured)
    let cases = [
        ("presence --help", true),
        ("presence --help --color never", false),
        ("presence --color=never list --help", false),
        ("NO_COLOR=1 presence --help", false),
        ("presence --help | cat", false),
        ("presence --color always --help | cat", true),
        ("FORCE_COLOR=1 presence --help | cat", true),
        ("FORCE_COLOR=1 NO_COLOR=1 presence --help | cat", false),
        ("presence list --bogus", true),
        ("presence list --bogus --color never", false),
        ("presence --color never list --bogus", false),
        ("presence list --bogus 2>&1 | cat", false),
        ("presence --color=always list --bogus 2>&1 | cat", true),
    ];
    for (shell, coloured) in cases {
        let out = on_pty(&dev, &[], shell);
        assert!(
            out.contains("Usage") || out.contains("usage"),
            "{shell}: {out:?}"
        );
        assert_eq!(out.contains('\x1b'), coloured, "{shell}: {out:?}");
    }
}

/// Titles as chat apps write them: emoji with VS16 (U+FE0F) and ZWJ
/// (U+200D) inside their sequences. They reach the terminal as they are,
/// while the same characters outside an emoji sequence, and in an id, are
/// still escaped; a title cut to the terminal's width is never cut inside
/// a sequence.
#[test]
fn emoji_sequences_in_titles_reach_the_terminal_whole() {
    let w = World::new();
    let dev = w.device("a");
    let warn = "⚠\u{fe0f} tests failing ✔\u{fe0f} lint ok";
    let pair = "pairing 👩\u{200d}💻 with 🏳\u{fe0f}\u{200d}🌈 team 1\u{fe0f}\u{20e3}";
    dev.publish("g4", &["--title", warn]);
    dev.publish("g5", &["--title", pair]);
    dev.publish("z\u{200d}w", &["--title", "a\u{200d}b x\u{fe0f}"]);
    let coder = "👩\u{200d}💻";
    dev.publish("long", &["--title", &coder.repeat(40)]);

    let shell = "presence list; presence show g4; presence show g5; \
                 presence list --format '{session_id}|{title}'";
    let shown = screen(&on_pty(&dev, &[], shell)).join("\n");
    for title in [warn, pair] {
        // The table, `show` and --format.
        assert_eq!(shown.matches(title).count(), 3, "{title}:\n{shown}");
    }
    for escaped in ["*z\\u{200d}w ", "z\\u{200d}w|a\\u{200d}b x\\u{fe0f}"] {
        assert!(shown.contains(escaped), "{escaped}:\n{shown}");
    }
    assert!(!shown.contains("\\u{fe0f}\u{20e3}"), "{shown}");

    let narrow = screen(&on_pty_of(60, &dev, &[], "presence list"));
    let long = narrow
        .iter()
        .find(|l| l.starts_with("*long "))
        .unwrap_or_else(|| panic!("{narrow:#?}"));
    assert!(width(long) <= 60, "{long:?}");
    assert!(
        long.ends_with(&format!("{coder}…")),
        "cut inside a sequence: {long:?}"
    );
}

/// `CLICOLOR=0` turns colour off on a terminal, `FORCE_COLOR` turns it on
/// into a pipe (as `CLICOLOR_FORCE`; `NO_COLOR` still wins), and `--color`
/// is a global flag that `doctor` follows as `list` does.
#[test]
fn colour_follows_clicolor_and_force_color_for_every_command() {
    let w = World::new();
    let dev = w.device("a");
    plant_table(&w.shared());
    let list = ["\x1b[1mSESSION", "\x1b[32m?s-20261130-a1"];
    let doctor = ["\x1b[32mok  \x1b[0m"];
    // (shell, the marks of colour it shows, or none: plain)
    let cases: [(&str, Option<&[&str]>); 18] = [
        ("CLICOLOR=0 presence list", None),
        ("CLICOLOR=1 presence list", Some(&list)),
        ("CLICOLOR=1 presence list | cat", None),
        ("CLICOLOR=0 CLICOLOR_FORCE=1 presence list", Some(&list)),
        ("CLICOLOR=0 presence list --color always", Some(&list)),
        ("FORCE_COLOR=1 presence list | cat", Some(&list)),
        ("FORCE_COLOR=0 presence list | cat", None),
        ("FORCE_COLOR=1 NO_COLOR=1 presence list | cat", None),
        ("FORCE_COLOR=1 presence list --color never | cat", None),
        ("presence --color never list", None),
        ("presence --color always list | cat", Some(&list)),
        ("presence doctor", Some(&doctor)),
        ("CLICOLOR=0 presence doctor", None),
        ("NO_COLOR=1 presence doctor", None),
        ("presence doctor --color never", None),
        ("presence doctor | cat", None),
        ("presence doctor --color always | cat", Some(&doctor)),
        ("FORCE_COLOR=1 presence doctor | cat", Some(&doctor)),
    ];
    for (shell, colour) in cases {
        let out = on_pty(&dev, &[], shell);
        match colour {
            Some(marks) => assert!(marks.iter().all(|m| out.contains(m)), "{shell}: {out:?}"),
            None => {
                assert!(!out.contains('\x1b'), "{shell}: {out:?}");
                assert!(
                    out.contains("SESSION") || out.contains("ok  "),
                    "{shell}: {out:?}"
                );
            }
        }
    }
}
