//! Every `presence` example in README.md and docs/*.md is run, and its exit
//! status — and, where a page shows it, its output — checked.
//!
//! The examples are the lines of ```` ```sh ```` blocks that start with
//! `presence ` (a line ending in `\` continues on the next; indented lines
//! are inside a larger construct and not run alone) and the `$ presence …`
//! lines of ```` ```console ```` blocks, whose output is the lines that follow
//! up to the next `$ `. A block after `<!-- check: NAME -->` is left out: its
//! own test runs it whole.
//!
//! Each block runs in a fresh world of devices that share one directory, each
//! in a user and UTS namespace of its own with its name as hostname; the
//! examples run, in order, on the device `laptop`, with bash (`pipefail`)
//! and these variables set: `SESSION_ID`, `SESSION_KEY`, `TITLE`, `MODEL`,
//! `GATEWAY_PID` (a live process), `USER`, `EDITOR`. An example must exit 0,
//! or N when the comment lines right above it (in a console block: its own
//! trailing `# …` comment) say `exit code N`.
//!
//! Output is compared when shown: a table by its header and then cell by
//! cell, except that a relative time (`3s ago`, `in 87s`, `5m`) only has to
//! be one; other lines exactly, except that `…` stands for any text.
//!
//! A comment right before a block may prepare it and mark examples, one item
//! per line; a marked PREFIX applies to the examples that start with it, and
//! each must apply to at least one:
//!
//! ```text
//! <!-- examples
//! given: CMD                  run first, on laptop (must succeed)
//! given on NAME: CMD          run first, on device NAME
//! skip: PREFIX -- REASON      not run
//! interrupt: PREFIX -- REASON runs until stopped: SIGINT once it has printed
//!                             something (it must, within 60 s), and no error
//! unchecked: PREFIX -- REASON run, its output not compared
//! -->
//! ```

use std::path::{Path, PathBuf};
use std::process::Command;

use regex::Regex;

use crate::harness::*;

/// The device the examples run on.
const HERE: &str = "laptop";

/// One fenced block of a page.
#[derive(Debug)]
struct Block {
    /// `page:line` of the opening fence.
    at: String,
    lang: String,
    lines: Vec<String>,
    /// The HTML comment right before the block, if any.
    comment: Option<String>,
}

fn blocks(path: &Path) -> Vec<Block> {
    let text = std::fs::read_to_string(path).unwrap();
    let name = path
        .strip_prefix(env!("CARGO_MANIFEST_DIR"))
        .unwrap()
        .display()
        .to_string();
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let Some(lang) = lines[i].strip_prefix("```") else {
            i += 1;
            continue;
        };
        let start = i;
        let end = (i + 1..lines.len())
            .find(|&j| lines[j].starts_with("```"))
            .unwrap_or_else(|| panic!("{name}:{}: unclosed block", i + 1));
        // The comment ends on the last non-blank line before the fence.
        let mut k = start;
        while k > 0 && lines[k - 1].trim().is_empty() {
            k -= 1;
        }
        let comment = (k > 0 && lines[k - 1].trim_end().ends_with("-->")).then(|| {
            let open = (0..k)
                .rev()
                .find(|&j| lines[j].contains("<!--"))
                .expect("an opening <!--");
            lines[open..k].join("\n")
        });
        out.push(Block {
            at: format!("{name}:{}", start + 1),
            lang: lang.trim().to_string(),
            lines: lines[start + 1..end]
                .iter()
                .map(|l| l.to_string())
                .collect(),
            comment,
        });
        i = end + 1;
    }
    out
}

/// How an example is marked.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Mark {
    Run,
    Skip,
    Interrupt,
    Unchecked,
}

/// The items of an `<!-- examples … -->` comment.
#[derive(Debug, Default)]
struct Marks {
    /// `(device, command)`.
    given: Vec<(String, String)>,
    /// `(mark, prefix)`, and whether it applied.
    marks: Vec<(Mark, String, bool)>,
}

fn marks(block: &Block) -> Marks {
    let mut m = Marks::default();
    let Some(comment) = &block.comment else {
        return m;
    };
    let Some(body) = comment.trim().strip_prefix("<!-- examples") else {
        return m;
    };
    for item in body.trim_end_matches("-->").lines() {
        let item = item.trim();
        if item.is_empty() {
            continue;
        }
        let (key, rest) = item
            .split_once(": ")
            .unwrap_or_else(|| panic!("{}: a marker item without `: `: {item}", block.at));
        if let Some(device) = key.strip_prefix("given on ") {
            m.given.push((device.to_string(), rest.to_string()));
            continue;
        }
        if key == "given" {
            m.given.push((HERE.to_string(), rest.to_string()));
            continue;
        }
        let mark = match key {
            "skip" => Mark::Skip,
            "interrupt" => Mark::Interrupt,
            "unchecked" => Mark::Unchecked,
            _ => panic!("{}: unknown marker item `{key}`", block.at),
        };
        let (prefix, reason) = rest
            .split_once(" -- ")
            .unwrap_or_else(|| panic!("{}: `{item}` gives no reason after ` -- `", block.at));
        assert!(
            !reason.trim().is_empty(),
            "{}: `{item}`: no reason",
            block.at
        );
        m.marks.push((mark, prefix.trim().to_string(), false));
    }
    m
}

impl Marks {
    fn of(&mut self, command: &str) -> Mark {
        for (mark, prefix, used) in &mut self.marks {
            if command.starts_with(prefix.as_str()) {
                *used = true;
                return *mark;
            }
        }
        Mark::Run
    }
}

/// An example: the command, the exit status it must have, and the output
/// shown (console blocks only).
#[derive(Debug)]
struct Example {
    command: String,
    status: i32,
    output: Vec<String>,
}

fn examples(block: &Block) -> Vec<Example> {
    let exit_code = Regex::new(r"exit code (\d+)").unwrap();
    let mut out = Vec::new();
    match block.lang.as_str() {
        "sh" => {
            let mut comments = String::new();
            let mut lines = block.lines.iter();
            while let Some(line) = lines.next() {
                let mut logical = line.clone();
                while logical.ends_with('\\') {
                    logical.pop();
                    logical.push_str(lines.next().map_or("", |l| l.as_str()));
                }
                if logical.starts_with('#') {
                    comments.push_str(&logical);
                    continue;
                }
                if logical.starts_with("presence ") {
                    let status = exit_code
                        .captures(&comments)
                        .map_or(0, |c| c[1].parse().unwrap());
                    out.push(Example {
                        command: logical,
                        status,
                        output: Vec::new(),
                    });
                }
                comments.clear();
            }
        }
        "console" => {
            for line in &block.lines {
                if let Some(command) = line.strip_prefix("$ ") {
                    // A trailing comment may say the status: `# exit code 2`.
                    let status = command
                        .split_once(" # ")
                        .and_then(|(_, comment)| exit_code.captures(comment))
                        .map_or(0, |c| c[1].parse().unwrap());
                    out.push(Example {
                        command: command.to_string(),
                        status,
                        output: Vec::new(),
                    });
                } else if let Some(last) = out.last_mut() {
                    last.output.push(line.clone());
                }
            }
            out.retain(|e| e.command.starts_with("presence "));
            for e in &mut out {
                while e.output.last().is_some_and(|l| l.trim().is_empty()) {
                    e.output.pop();
                }
            }
        }
        _ => {}
    }
    out
}

/// A world of devices sharing `laptop`'s built-in directory; `laptop` itself
/// has no configuration file, so that `config init` works as on a new machine.
struct Devices {
    world: World,
    here: Device,
    tools: [PathBuf; 4],
    owner: std::process::Child,
}

impl Devices {
    fn new() -> Devices {
        let world = World::new();
        let here = world.bare_device(HERE);
        std::fs::create_dir_all(here.default_dir()).unwrap();
        std::fs::create_dir_all(here.root.join("home")).unwrap();
        let tools = [
            require_tool("unshare"),
            require_tool("hostname"),
            require_tool("bash"),
            require_tool("timeout"),
        ];
        require_tool("jq");
        let owner = Command::new(require_tool("sleep"))
            .arg("600")
            .spawn()
            .unwrap();
        Devices {
            world,
            here,
            tools,
            owner,
        }
    }

    fn device(&self, name: &str) -> Device {
        if name == HERE {
            return self.here.clone();
        }
        let d = self.world.bare_device(name);
        if !d.config_path().exists() {
            d.write_config(&format!(
                "[profiles.default]\ndir = {:?}\n",
                self.here.default_dir().display().to_string()
            ));
            std::fs::create_dir_all(d.root.join("home")).unwrap();
        }
        d
    }

    /// Runs `command` with bash on device `name`, with that hostname, under
    /// `timeout`. If `interrupt`, it is stopped with SIGINT as soon as it has
    /// printed something (at most 60 s, by `timeout` itself, if it prints
    /// nothing); else it may run at most 60 s. An interrupted example exits
    /// 124, `timeout`'s own status, however fast or slow it was.
    fn run(&self, name: &str, command: &str, interrupt: bool) -> (i32, String, String) {
        use std::io::Read;
        let [unshare, hostname, bash, timeout] = &self.tools;
        let limit = if interrupt { "-k30 -sINT 60" } else { "-k2 60" };
        let script = format!(
            "{} {name} && exec {} {limit} {} -o pipefail -c \"$0\"",
            hostname.display(),
            timeout.display(),
            bash.display()
        );
        let mut child = self
            .device(name)
            .program(unshare)
            .args(["--user", "--map-root-user", "--uts"])
            .arg(bash)
            .arg("-c")
            .arg(script)
            .arg(command)
            .env("SESSION_ID", "gw-1")
            .env("SESSION_KEY", "agent:main:gw-1")
            .env("TITLE", "Review PR #412")
            .env("MODEL", "example-model")
            .env("GATEWAY_PID", self.owner.id().to_string())
            .env("USER", "alice")
            .env("EDITOR", "true")
            .current_dir(self.world.tmp.path())
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdout = child.stdout.take().unwrap();
        let mut stderr = child.stderr.take().unwrap();
        let errors = std::thread::spawn(move || {
            let mut text = Vec::new();
            stderr.read_to_end(&mut text).unwrap();
            text
        });
        // The first bytes it prints, and the rest until it ends.
        let (first, printed) = std::sync::mpsc::channel();
        let output = std::thread::spawn(move || {
            let mut text = Vec::new();
            let mut buf = [0; 4096];
            loop {
                match stdout.read(&mut buf).unwrap() {
                    0 => break text,
                    n => {
                        text.extend_from_slice(&buf[..n]);
                        let _ = first.send(());
                    }
                }
            }
        });
        if interrupt && printed.recv().is_ok() {
            // unshare and bash exec'd `timeout`, which keeps this pid: its
            // alarm makes it stop the example with SIGINT, as when its
            // time runs out.
            assert!(kill("-ALRM", &[&child.id().to_string()]));
        }
        let code = child.wait().unwrap().code().unwrap_or(-1);
        let stdout = output.join().unwrap();
        let stderr = errors.join().unwrap();
        (
            code,
            String::from_utf8_lossy(&stdout).into_owned(),
            String::from_utf8_lossy(&stderr).into_owned(),
        )
    }
}

impl Drop for Devices {
    fn drop(&mut self) {
        let _ = self.owner.kill();
        let _ = self.owner.wait();
    }
}

/// `3s ago`, `in 87s`, `5m`, `-`: a time relative to now.
fn relative_time(cell: &str) -> bool {
    Regex::new(r"^((in )?\d+[smhd]( ago)?|-)$")
        .unwrap()
        .is_match(cell)
}

/// Whether a line is a table header: three or more words in capitals.
fn header(line: &str) -> bool {
    let words: Vec<&str> = line.split_whitespace().collect();
    words.len() >= 3
        && words
            .iter()
            .all(|w| w.chars().all(|c| c.is_ascii_uppercase() || c == '_'))
}

/// The cells of a table row, cut where the header's words start.
fn cells(header: &str, row: &str) -> Vec<String> {
    let mut starts: Vec<usize> = header
        .char_indices()
        .filter(|&(i, c)| c != ' ' && (i == 0 || header[..i].ends_with(' ')))
        .map(|(i, _)| i)
        .collect();
    starts[0] = 0;
    let chars: Vec<char> = row.chars().collect();
    let mut out = Vec::new();
    for (n, &s) in starts.iter().enumerate() {
        let e = starts
            .get(n + 1)
            .copied()
            .unwrap_or(usize::MAX)
            .min(chars.len());
        let s = s.min(chars.len());
        out.push(chars[s..e].iter().collect::<String>().trim().to_string());
    }
    out
}

/// Whether `got` matches `want`, where `…` in `want` stands for any text.
fn line_matches(want: &str, got: &str) -> bool {
    let mut parts = want.split('…');
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = got.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(i) => rest = &rest[i + part.len()..],
            None => return false,
        }
    }
    rest.ends_with(last)
}

/// Why the output `got` is not what the page shows, if it is not.
fn compare(want: &[String], got: &str) -> Option<String> {
    let got: Vec<&str> = got.lines().collect();
    if want.len() != got.len() {
        return Some(format!("{} lines shown, {} printed", want.len(), got.len()));
    }
    if want.first().is_some_and(|l| header(l)) {
        let (wh, gh) = (&want[0], got[0]);
        let words = |l: &str| l.split_whitespace().map(String::from).collect::<Vec<_>>();
        if words(wh) != words(gh) {
            return Some(format!("header `{wh}` is `{gh}`"));
        }
        for (w, g) in want[1..].iter().zip(&got[1..]) {
            let (wc, gc) = (cells(wh, w), cells(gh, g));
            let same = wc.len() == gc.len()
                && wc
                    .iter()
                    .zip(&gc)
                    .all(|(a, b)| a == b || (relative_time(a) && relative_time(b)));
            if !same {
                return Some(format!("row `{w}` is `{g}`"));
            }
        }
        return None;
    }
    want.iter()
        .zip(&got)
        .find(|(w, g)| !line_matches(w, g))
        .map(|(w, g)| format!("`{w}` is `{g}`"))
}

#[test]
fn every_presence_example_in_the_docs_runs_as_shown() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut pages = vec![root.join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    pages.extend(docs);

    let mut failures = Vec::new();
    let mut ran = 0;
    for page in &pages {
        for block in blocks(page) {
            if block
                .comment
                .as_deref()
                .is_some_and(|c| c.contains("<!-- check:"))
            {
                continue;
            }
            let examples = examples(&block);
            let mut marks = marks(&block);
            if examples.is_empty() {
                assert!(
                    marks.given.is_empty() && marks.marks.is_empty(),
                    "{}: marked, but no examples",
                    block.at
                );
                continue;
            }
            let devices = Devices::new();
            for (device, command) in &marks.given {
                let (code, _, stderr) = devices.run(device, command, false);
                assert_eq!(code, 0, "{}: given `{command}` failed: {stderr}", block.at);
                assert!(
                    !stderr.contains("will not open"),
                    "{}: given `{command}`: {stderr}",
                    block.at
                );
            }
            for e in &examples {
                let mark = marks.of(&e.command);
                if mark == Mark::Skip {
                    continue;
                }
                ran += 1;
                let (code, stdout, stderr) = devices.run(HERE, &e.command, mark == Mark::Interrupt);
                let mut problem = None;
                if mark == Mark::Interrupt {
                    if code != 124 || stdout.is_empty() || !stderr.is_empty() {
                        problem = Some(format!(
                            "exit {code} before the interrupt, or printed nothing or an error"
                        ));
                    }
                } else if code == 124 {
                    problem = Some("ran for 60 s: mark it `interrupt:`".into());
                } else if stderr.contains("will not open") {
                    // An endpoint in the docs is one that opens.
                    problem = Some("publishes an endpoint that will not open".into());
                } else if code != e.status {
                    problem = Some(format!("exit {code}, want {}", e.status));
                } else if mark == Mark::Run && !e.output.is_empty() {
                    problem = compare(&e.output, &stdout);
                }
                if let Some(p) = problem {
                    failures.push(format!(
                        "{}: `{}`: {p}\n  stdout: {stdout}\n  stderr: {stderr}",
                        block.at, e.command
                    ));
                }
            }
            for (mark, prefix, used) in &marks.marks {
                assert!(used, "{}: {mark:?} `{prefix}` matches no example", block.at);
            }
        }
    }
    assert!(
        failures.is_empty(),
        "examples in the docs that do not run as shown (fix the example, or \
         mark it; see tests/integration/docs/examples.rs):\n{}",
        failures.join("\n")
    );
    assert!(ran >= 20, "only {ran} examples ran");
}

#[test]
fn output_comparison_rules() {
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    let table = s(&[
        "SESSION  STATUS   SEEN    TITLE",
        "*a       working  3s ago  Refactor it",
    ]);
    assert_eq!(
        compare(
            &table,
            "SESSION  STATUS   SEEN     TITLE\n*a       working  21s ago  Refactor it\n"
        ),
        None
    );
    assert!(
        compare(
            &table,
            "SESSION  STATUS   SEEN    TITLE\n a       working  3s ago  Refactor it\n"
        )
        .is_some()
    );
    assert!(
        compare(
            &table,
            "SESSION  STATUS  SEEN    TITLE\n*a       idle    3s ago  Refactor it\n"
        )
        .is_some()
    );
    assert!(compare(&table, "SESSION  STATUS   SEEN\n*a       working  3s ago\n").is_some());
    assert!(compare(&s(&["2"]), "2\n").is_none());
    assert!(compare(&s(&["2"]), "3\n").is_some());
    assert!(compare(&s(&["2"]), "2\n2\n").is_some());
    assert!(
        compare(
            &s(&["cleared gw-1 (…gw-1.json)"]),
            "cleared gw-1 (h-1f-2e.gw-1.json)\n"
        )
        .is_none()
    );
    assert!(
        compare(
            &s(&["cleared gw-1 (…gw-1.json)"]),
            "cleared gw-2 (h-1f-2e.gw-1.json)\n"
        )
        .is_some()
    );
}
