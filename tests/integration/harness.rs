//! A small harness: every test gets its own temp dir; each simulated device
//! is a set of HOME / XDG_* dirs inside it, and the real `presence` binary
//! runs with a scrubbed environment. Nothing touches the real home directory.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

pub struct World {
    pub tmp: tempfile::TempDir,
}

impl World {
    pub fn new() -> Self {
        World {
            tmp: tempfile::tempdir().expect("temp dir"),
        }
    }

    /// The shared (synced) presence directory of this world.
    pub fn shared(&self) -> PathBuf {
        self.tmp.path().join("shared")
    }

    /// A device with no config file: it uses the embedded default dir.
    pub fn bare_device(&self, name: &str) -> Device {
        let root = self.tmp.path().join(name);
        std::fs::create_dir_all(&root).unwrap();
        Device { root }
    }

    /// A device whose default profile points at the shared dir.
    pub fn device(&self, name: &str) -> Device {
        let d = self.bare_device(name);
        d.write_config(&format!(
            "[profiles.default]\ndir = {:?}\n",
            self.shared().display().to_string()
        ));
        d
    }
}

#[derive(Clone)]
pub struct Device {
    pub root: PathBuf,
}

impl Device {
    pub fn config_path(&self) -> PathBuf {
        self.root.join("config/presence/config.toml")
    }

    pub fn write_config(&self, text: &str) {
        let p = self.config_path();
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    /// The embedded default records dir of this device.
    pub fn default_dir(&self) -> PathBuf {
        self.root.join("data/presence/default")
    }

    pub fn device_id(&self) -> String {
        std::fs::read_to_string(self.root.join("data/presence/device-id"))
            .unwrap()
            .trim()
            .to_string()
    }

    /// Signs `record` as this device would (its key made by a first
    /// `presence` run): sets `device_id` and `key`, then `sig` over the
    /// canonical JSON of the rest, as docs/record-format.md describes. For
    /// tests that write a newer copy of a record "by its own writer".
    pub fn sign(&self, record: &mut Value) {
        use base64::Engine as _;
        use ed25519_dalek::Signer as _;
        let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        let hex = std::fs::read_to_string(self.root.join("data/presence/device-key")).unwrap();
        let seed: Vec<u8> = (0..32)
            .map(|i| u8::from_str_radix(&hex.trim()[2 * i..2 * i + 2], 16).unwrap())
            .collect();
        let key = ed25519_dalek::SigningKey::from_bytes(&seed.try_into().unwrap());
        let object = record.as_object_mut().unwrap();
        object.remove("sig");
        object.insert("device_id".into(), Value::from(self.device_id()));
        object.insert(
            "key".into(),
            Value::from(b64.encode(key.verifying_key().as_bytes())),
        );
        let mut message = b"presence record v1\0".to_vec();
        message.extend(serde_json::to_vec(&*object).unwrap());
        let sig = key.sign(&message);
        object.insert("sig".into(), Value::from(b64.encode(sig.to_bytes())));
    }

    pub fn cmd(&self) -> Command {
        self.program(env!("CARGO_BIN_EXE_presence"))
    }

    /// Any program (a shell, `script`) in this device's scrubbed
    /// environment, with the `presence` under test first on PATH.
    pub fn program(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let bin_dir = Path::new(env!("CARGO_BIN_EXE_presence")).parent().unwrap();
        let path = format!(
            "{}:{}",
            bin_dir.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let mut c = Command::new(program);
        c.env_clear()
            .env("PATH", path)
            .env("HOME", self.root.join("home"))
            .env("XDG_CONFIG_HOME", self.root.join("config"))
            .env("XDG_DATA_HOME", self.root.join("data"))
            .env("XDG_CACHE_HOME", self.root.join("cache"))
            .env("XDG_RUNTIME_DIR", self.root.join("runtime"));
        c
    }

    pub fn run(&self, args: &[&str]) -> Run {
        let out = self.cmd().args(args).output().expect("run presence");
        Run::from(out, args)
    }

    /// Runs, asserts success, returns stdout read as `T` (one of the `Json*`
    /// types below).
    pub fn json<T: DeserializeOwned>(&self, args: &[&str]) -> T {
        let r = self.run(args).success();
        parse_json(&r.stdout, &format!("{args:?}"))
    }

    /// `list --json` plus extra args: the rows.
    pub fn list(&self, extra: &[&str]) -> Vec<JsonRow> {
        let mut args = vec!["list", "--json"];
        args.extend_from_slice(extra);
        self.json(&args)
    }

    /// `show ID --json`: the row.
    pub fn show(&self, id: &str) -> JsonRow {
        self.json(&["show", id, "--json"])
    }

    pub fn publish(&self, session: &str, extra: &[&str]) -> Run {
        let mut args = vec!["publish", "--session", session];
        args.extend_from_slice(extra);
        self.run(&args).success()
    }
}

pub struct Run {
    pub args: Vec<String>,
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    fn from(out: Output, args: &[&str]) -> Self {
        Run {
            args: args.iter().map(|s| s.to_string()).collect(),
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    pub fn success(self) -> Self {
        assert_eq!(
            self.code, 0,
            "{:?} failed:\nstdout: {}\nstderr: {}",
            self.args, self.stdout, self.stderr
        );
        self
    }

    pub fn code(self, want: i32) -> Self {
        assert_eq!(
            self.code, want,
            "{:?}: want exit {want}\nstdout: {}\nstderr: {}",
            self.args, self.stdout, self.stderr
        );
        self
    }
}

/// Runs `cmd`, asserts that it succeeded (showing its stderr if not), and
/// returns its output.
pub fn run_ok(cmd: &mut Command) -> Output {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The external tools the tests use, with the Debian package of each
/// (scripts/test installs them; a test checks that it knows each one).
pub const TOOLS: &[(&str, &str)] = &[
    ("syncthing", "syncthing"),
    ("systemd-analyze", "systemd"),
    ("python3", "python3"),
    ("script", "bsdutils"),
    ("unshare", "util-linux"),
    ("setpriv", "util-linux"),
    ("bash", "bash"),
    ("jq", "jq"),
    ("hostname", "hostname"),
    ("mkfifo", "coreutils"),
    ("timeout", "coreutils"),
    ("kill", "procps"),
    ("env", "coreutils"),
    ("pgrep", "procps"),
    ("sleep", "coreutils"),
    ("bash", "bash"),
    ("tmux", "tmux"),
    ("strace", "strace"),
    ("man", "man-db"),
    ("zsh", "zsh"),
    ("fish", "fish"),
];

/// Fails the test because `what` is missing: a test that needs a tool never
/// skips, or a machine without it would pass without testing anything.
pub fn missing(what: &str, package: &str) -> ! {
    panic!("{what} is required for this test: apt-get install -y {package} (or run scripts/test)")
}

/// The path of the external program `name` on PATH; fails the test when it
/// is not there.
pub fn require_tool(name: &str) -> PathBuf {
    require_tool_on(name, &std::env::var_os("PATH").unwrap_or_default())
}

fn require_tool_on(name: &str, path: &std::ffi::OsStr) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let package = TOOLS
        .iter()
        .find(|(tool, _)| *tool == name)
        .map(|(_, package)| *package)
        .unwrap_or_else(|| panic!("{name} is not in harness::TOOLS; add it with its package"));
    std::env::split_paths(path)
        .map(|dir| dir.join(name))
        .find(|p| {
            p.metadata()
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
        .unwrap_or_else(|| missing(name, package))
}

/// The world's directory of stand-in programs (`crontab`, `systemctl`),
/// made on first use; put it first on PATH, or alone for a machine that
/// has none of the real ones.
pub fn fake_bin(w: &World) -> PathBuf {
    let bin = w.tmp.path().join("fake-bin");
    std::fs::create_dir_all(&bin).unwrap();
    bin
}

/// Writes the stand-in program `name` into [`fake_bin`].
pub fn fake_program(w: &World, name: &str, script: &str) {
    use std::os::unix::fs::PermissionsExt;
    let path = fake_bin(w).join(name);
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A stand-in `crontab` in [`fake_bin`] that keeps the crontab in a file
/// (returned; it does not exist until a crontab is installed): `-l` prints
/// it (or fails with "no crontab for …"), `crontab FILE` and `crontab`
/// (stdin) install one. Only shell builtins, so that it works
/// with PATH set to [`fake_bin`] alone.
pub fn fake_crontab(w: &World) -> PathBuf {
    let store = w.tmp.path().join("crontab");
    let copy = r#"while IFS= read -r l || [ -n "$l" ]; do printf '%s\n' "$l"; done"#;
    let script = format!(
        "#!/bin/sh\nstore='{store}'\ncase \"$1\" in\n\
         -l) [ -f \"$store\" ] || {{ echo 'no crontab for tester' >&2; exit 1; }}; \
         {copy} < \"$store\";;\n\
         -*) echo 'crontab: bad option' >&2; exit 1;;\n\
         '') {copy} > \"$store\";;\n\
         *) {copy} < \"$1\" > \"$store\";;\n\
         esac\n",
        store = store.display()
    );
    fake_program(w, "crontab", &script);
    store
}

/// A stand-in `systemctl` in [`fake_bin`] for a machine with no systemd
/// user manager: every call fails as `systemctl --user` does there.
pub fn no_user_manager(w: &World) {
    fake_program(
        w,
        "systemctl",
        "#!/bin/sh\necho 'Failed to connect to bus: No medium found' >&2\nexit 1\n",
    );
}

/// The anchor GitHub gives a Markdown heading: lowercased, with what is not
/// a letter, digit, space, `-` or `_` dropped and spaces made `-`.
fn heading_anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// Asserts that `text` (a `--help`, a man page, a doctor fix) points to the
/// documentation only as it travels, never to a checkout's `docs/` path:
/// every `docs/` is part of the project's address or of
/// /usr/share/doc/presence, and each address of the project names a file
/// of the repository and, after `#`, one of its headings.
pub fn assert_docs_travel(what: &str, text: &str) {
    let text = text.replace("\\-", "-");
    for (at, _) in text.match_indices("docs/") {
        let before = &text[..at];
        assert!(
            ["/blob/main/", "/tree/main/", "/usr/share/doc/presence/"]
                .iter()
                .any(|p| before.ends_with(p)),
            "{what} points to a checkout path: …{}",
            &text[at.saturating_sub(40)..(at + 40).min(text.len())]
        );
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let page = "https://github.com/presence-dev/presence/blob/main/";
    for (at, _) in text.match_indices(page) {
        let rest = &text[at + page.len()..];
        let end = rest
            .find(|c: char| c.is_whitespace() || matches!(c, ')' | '`' | '"' | ','))
            .unwrap_or(rest.len());
        let (path, anchor) = match rest[..end].split_once('#') {
            Some((p, a)) => (p, Some(a)),
            None => (&rest[..end], None),
        };
        let file = root.join(path);
        let doc = std::fs::read_to_string(&file)
            .unwrap_or_else(|e| panic!("{what} points to {path}, which is not there: {e}"));
        if let Some(anchor) = anchor {
            assert!(
                doc.lines()
                    .filter_map(|l| l.strip_prefix('#'))
                    .any(|h| heading_anchor(h.trim_start_matches('#')) == anchor),
                "{what} points to {path}#{anchor}, a heading it does not have"
            );
        }
    }
}

/// Makes a FIFO at `path` with mkfifo(1).
pub fn mkfifo(path: &Path) {
    let ok = Command::new(require_tool("mkfifo"))
        .arg(path)
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "mkfifo {}", path.display());
}

/// Sends `signal` (`-TERM`, `-KILL`, …) to `targets` with kill(1); whether
/// it reached them is the caller's to check.
pub fn kill(signal: &str, targets: &[&str]) -> bool {
    Command::new(require_tool("kill"))
        .arg(signal)
        .args(targets)
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// How long a test waits for something the code promises will happen soon:
/// long enough for a one-core machine with a busy loop beside the suite, so
/// that a deadline is reached only when the promise is broken. A test that
/// passes never waits this long; a waited condition returns as soon as it
/// holds.
pub const PATIENCE: std::time::Duration = std::time::Duration::from_secs(60);

/// Polls `ok` every 20 ms until it holds and returns how long that took;
/// fails the test after `limit`, naming `what`.
pub fn wait_until(
    what: &str,
    limit: std::time::Duration,
    mut ok: impl FnMut() -> bool,
) -> std::time::Duration {
    wait_for(what, limit, || if ok() { Ok(()) } else { Err("not yet") }).1
}

/// Polls `seen` every 20 ms until it returns `Ok`, and returns that value with
/// how long it took; fails the test after `limit` with the last `Err` it saw,
/// so a timeout says what the code did instead.
pub fn wait_for<T, S: std::fmt::Debug>(
    what: &str,
    limit: std::time::Duration,
    mut seen: impl FnMut() -> Result<T, S>,
) -> (T, std::time::Duration) {
    let start = std::time::Instant::now();
    loop {
        match seen() {
            Ok(value) => return (value, start.elapsed()),
            Err(last) => assert!(
                start.elapsed() < limit,
                "{what}: not within {limit:?}; last seen: {last:?}"
            ),
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// A child process killed and reaped when the test ends, however it ends.
pub struct KillOnDrop(pub std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// An owner process for a session: lives far longer than any test, and is
/// killed when the test ends.
pub fn owner() -> KillOnDrop {
    KillOnDrop(
        std::process::Command::new(require_tool("sleep"))
            .arg("3600")
            .spawn()
            .unwrap(),
    )
}

/// Session ids of a listing, in order.
pub fn sessions(rows: &[JsonRow]) -> Vec<String> {
    rows.iter().map(|r| r.session_id.clone()).collect()
}

pub fn now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

/// Writes a record file by hand, as another tool or device would.
pub fn write_record(dir: &Path, file: &str, json: &Value) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join(file), serde_json::to_vec(json).unwrap()).unwrap();
}

/// Reads `text` as `T`, naming `what` printed it when it does not fit.
pub fn parse_json<T: DeserializeOwned>(text: &str, what: &str) -> T {
    serde_json::from_str(text).unwrap_or_else(|e| {
        panic!(
            "{what}: output does not have the documented shape of {} ({e}): {text}",
            std::any::type_name::<T>()
        )
    })
}

// The `--json` output, typed. Every struct denies unknown fields and every
// field that is always printed is required (`always`), so a field that is
// added, renamed or dropped fails the tests until docs/json-output.md and
// these types follow.

/// A field that must be present even when its type could default (an
/// `Option` is otherwise `None` when missing).
fn always<'de, D: serde::Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<T, D::Error> {
    T::deserialize(d)
}

/// Declares a struct with the record's fields (docs/record-format.md) and
/// then `$extra`, as flat fields: `serde(flatten)` would let unknown fields
/// through.
macro_rules! with_record_fields {
    ($(#[$meta:meta])* pub struct $name:ident { $($extra:tt)* }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct $name {
            pub client: String,
            pub cwd: String,
            pub device_id: String,
            #[serde(deserialize_with = "always")]
            pub ended_at: Option<f64>,
            pub endpoint: String,
            #[serde(deserialize_with = "always")]
            pub expires_at: Option<f64>,
            pub host: String,
            pub instance_id: String,
            /// The writer's public key, on a signed record.
            #[serde(default)]
            pub key: Option<String>,
            pub metadata: BTreeMap<String, String>,
            pub model: String,
            #[serde(deserialize_with = "always")]
            pub owner_start: Option<u64>,
            pub pid: u32,
            pub profile: String,
            pub seq: u64,
            pub session_id: String,
            pub session_key: String,
            pub source: String,
            #[serde(deserialize_with = "always")]
            pub started_at: Option<f64>,
            pub status: String,
            pub title: String,
            #[serde(deserialize_with = "always")]
            pub updated_at: Option<f64>,
            pub version: u32,
            $($extra)*
        }
    };
}

with_record_fields! {
    /// `publish --json`: the record as written to its file.
    pub struct JsonRecord {
        /// The signature, on a signed record.
        #[serde(default)]
        pub sig: Option<String>,
    }
}

with_record_fields! {
    /// An element of `list --json`, the object of `show --json`, the
    /// `record` of a `watch --json` event: the record plus what this device
    /// computed.
    pub struct JsonRow {
        pub file: String,
        /// Only for a profile that reads several directories (`dirs`).
        #[serde(default)]
        pub dir: Option<String>,
        pub live: bool,
        pub state: String,
        pub local: bool,
        pub conflict_copy: bool,
        pub age_s: f64,
        #[serde(deserialize_with = "always")]
        pub claimed_age_s: Option<f64>,
        #[serde(deserialize_with = "always")]
        pub expires_in_s: Option<f64>,
        #[serde(deserialize_with = "always")]
        pub writer_offset_s: Option<f64>,
        /// Whether a signature proves the record's `device_id`.
        pub verified: bool,
        /// Only on forged records, which only `list --all` shows.
        #[serde(default)]
        pub forged: Option<String>,
        /// Only on the losers of `list --all`.
        #[serde(default)]
        pub superseded_by: Option<String>,
        /// Only on the losers of `list --all`.
        #[serde(default)]
        pub lost_because: Option<String>,
        /// The argv `presence open` would run; null when it would refuse.
        #[serde(deserialize_with = "always")]
        pub open: Option<Vec<String>>,
        /// Why `presence open` would refuse; null when it would run `open`.
        #[serde(deserialize_with = "always")]
        pub open_error: Option<String>,
    }
}

/// A line of `watch --json`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JsonEvent {
    /// `up`, `update`, `down` or `ready`.
    pub event: String,
    pub seq: u64,
    pub epoch: String,
    pub time: f64,
    /// On every event but `ready` (see [`JsonEvent::row`]).
    #[serde(default)]
    pub record: Option<JsonRow>,
    /// Only on `ready`: the size of the initial live set.
    #[serde(default)]
    pub count: Option<usize>,
    /// Only on the lines of the initial live set, and then `true`.
    #[serde(default)]
    pub initial: Option<bool>,
    /// Only on `down`.
    #[serde(default)]
    pub reason: Option<String>,
    /// Only on `update`.
    #[serde(default)]
    pub changed: Option<Vec<String>>,
}

impl JsonEvent {
    /// Reads one line, and checks that each optional field comes with the
    /// event it belongs to.
    pub fn parse(line: &str) -> JsonEvent {
        let e: JsonEvent = parse_json(line, "watch --json");
        let about_a_record = e.record.is_some() && e.count.is_none();
        let fits = match e.event.as_str() {
            "up" => {
                about_a_record
                    && e.reason.is_none()
                    && e.changed.is_none()
                    && e.initial != Some(false)
            }
            "update" => {
                about_a_record && e.reason.is_none() && e.changed.is_some() && e.initial.is_none()
            }
            "down" => {
                about_a_record && e.reason.is_some() && e.changed.is_none() && e.initial.is_none()
            }
            "ready" => {
                e.record.is_none()
                    && e.count.is_some()
                    && e.reason.is_none()
                    && e.changed.is_none()
                    && e.initial.is_none()
            }
            _ => false,
        };
        assert!(
            fits,
            "watch --json: fields that do not fit the event: {line}"
        );
        e
    }

    /// The record of an `up`, `update` or `down`.
    pub fn row(&self) -> &JsonRow {
        self.record
            .as_ref()
            .unwrap_or_else(|| panic!("a `{}` event has no record", self.event))
    }

    /// The session the event is about; `None` for `ready`.
    pub fn session(&self) -> Option<&str> {
        self.record.as_ref().map(|r| r.session_id.as_str())
    }
}

/// `expire --json`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JsonExpire {
    pub dry_run: bool,
    pub removed: Vec<JsonGarbage>,
    pub changed: usize,
    pub kept: usize,
}

/// A file `expire` removed (or would remove).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JsonGarbage {
    pub file: String,
    /// Only for a profile that reads several directories (`dirs`).
    #[serde(default)]
    pub dir: Option<String>,
    pub reason: String,
}

/// A line of `refresh --json`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JsonRefresh {
    pub refreshed: usize,
    pub cleared: usize,
    pub left: usize,
    pub changed: usize,
    pub refreshed_files: Vec<String>,
    pub cleared_files: Vec<String>,
    /// What discovery did; null when it did not run.
    #[serde(deserialize_with = "always")]
    pub discover: Option<JsonDiscover>,
}

/// The `discover` object of a `refresh --json` line.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JsonDiscover {
    pub agents: Vec<String>,
    pub found: usize,
    pub published: usize,
    pub cleared: usize,
    pub kept: usize,
    pub hooked: usize,
    pub published_files: Vec<String>,
    pub cleared_files: Vec<String>,
    pub warnings: Vec<String>,
}

/// An element of `doctor --json`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JsonCheck {
    pub check: String,
    /// `ok`, `warn` or `fail`.
    pub status: String,
    pub message: String,
    /// Only when there is something to do.
    #[serde(default)]
    pub fix: Option<String>,
    /// The details of a check about a device (`device`, `device-id`).
    #[serde(default)]
    pub device_id: Option<String>,
    #[serde(default)]
    pub host: Option<String>,
    #[serde(default)]
    pub this_device: Option<bool>,
    #[serde(default)]
    pub records: Option<usize>,
    #[serde(default)]
    pub live: Option<usize>,
    #[serde(default)]
    pub last_seen_s: Option<f64>,
    #[serde(default)]
    pub offset_s: Option<f64>,
    #[serde(default)]
    pub offset_learned: Option<bool>,
    /// The sessions (`refresher`) and files (`secrets`, `forged`,
    /// `device-id`) a check names.
    #[serde(default)]
    pub sessions: Vec<String>,
    #[serde(default)]
    pub files: Vec<String>,
    /// The agents `discovery` names.
    #[serde(default)]
    pub agents: Vec<String>,
}

/// The typed readers fail on a field that is missing, renamed or added,
/// so the tests that use them notice a change of the output.
#[test]
fn json_types_reject_missing_renamed_and_added_fields() {
    let w = World::new();
    let a = w.device("a");
    a.publish("s", &[]);
    let out = a.run(&["list", "--json"]).success().stdout;
    let _: Vec<JsonRow> = parse_json(&out, "list --json");
    let Value::Array(rows) = serde_json::from_str::<Value>(&out).unwrap() else {
        panic!("list --json is not an array: {out}");
    };
    let Value::Object(row) = rows[0].clone() else {
        panic!("not an object: {out}");
    };
    let fails = |row: &serde_json::Map<String, Value>| {
        serde_json::from_value::<JsonRow>(Value::Object(row.clone())).is_err()
    };
    for field in ["ended_at", "claimed_age_s", "title"] {
        let mut missing = row.clone();
        missing.remove(field);
        assert!(fails(&missing), "a row without {field} was accepted");
        let mut renamed = row.clone();
        let v = renamed.remove(field).unwrap();
        renamed.insert(format!("{field}_x"), v);
        assert!(fails(&renamed), "a row with {field} renamed was accepted");
    }
    let mut added = row.clone();
    added.insert("extra".into(), Value::Bool(true));
    assert!(fails(&added), "a row with an added field was accepted");
}

#[test]
fn require_tool_finds_an_executable_and_passes_over_other_files() {
    use std::os::unix::fs::PermissionsExt;
    let w = World::new();
    let (plain, bin) = (w.tmp.path().join("plain"), w.tmp.path().join("bin"));
    for (dir, mode) in [(&plain, 0o644), (&bin, 0o755)] {
        std::fs::create_dir(dir).unwrap();
        let tool = dir.join("syncthing");
        std::fs::write(&tool, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(mode)).unwrap();
    }
    let path = std::env::join_paths([&plain, &bin]).unwrap();
    assert_eq!(require_tool_on("syncthing", &path), bin.join("syncthing"));
}

#[test]
#[should_panic(
    expected = "syncthing is required for this test: apt-get install -y syncthing (or run scripts/test)"
)]
fn require_tool_fails_the_test_when_the_tool_is_missing() {
    let w = World::new();
    require_tool_on("syncthing", w.tmp.path().as_os_str());
}

/// `cmd` with this device's wall clock shifted by `offset` (libfaketime
/// syntax, e.g. `+10m`). The monotonic clock stays true, as on a real device
/// whose wall clock is wrong.
pub fn faked(mut cmd: Command, offset: &str) -> Command {
    cmd.env("LD_PRELOAD", libfaketime())
        .env("FAKETIME", offset)
        .env("FAKETIME_DONT_FAKE_MONOTONIC", "1");
    cmd
}

/// libfaketime's preload library (Debian package `faketime`).
pub fn libfaketime() -> String {
    for p in [
        "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1",
        "/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1",
        "/usr/lib/faketime/libfaketime.so.1",
    ] {
        if Path::new(p).exists() {
            return p.to_string();
        }
    }
    missing("libfaketime", "faketime")
}

/// An element of `devices --json`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JsonDevice {
    pub device_id: String,
    pub hosts: Vec<String>,
    pub instances: Vec<String>,
    pub records: usize,
    pub live: usize,
    pub this_device: bool,
    pub last_seen_s: f64,
    #[serde(deserialize_with = "always")]
    pub fingerprint: Option<String>,
    pub verified: usize,
    pub forged: usize,
    #[serde(deserialize_with = "always")]
    pub offset_s: Option<f64>,
    pub samples: u64,
    pub stale: bool,
}

/// A long-running `presence` command's stdout, line by line (`watch`,
/// `list --watch`).
pub struct Stream {
    pub child: std::process::Child,
    pub lines: std::sync::mpsc::Receiver<String>,
}

impl Stream {
    pub fn start(dev: &Device, args: &[&str]) -> Stream {
        let mut child = dev
            .cmd()
            .args(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let out = child.stdout.take().unwrap();
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufRead::lines(std::io::BufReader::new(out)) {
                if tx.send(line.unwrap()).is_err() {
                    break;
                }
            }
        });
        Stream { child, lines }
    }

    pub fn next(&self) -> String {
        self.lines
            .recv_timeout(PATIENCE)
            .unwrap_or_else(|_| panic!("no line within {PATIENCE:?}"))
    }

    pub fn json(&self) -> JsonEvent {
        JsonEvent::parse(&self.next())
    }

    /// Asserts that nothing is printed for a while.
    pub fn quiet_for(&self, d: std::time::Duration) {
        if let Ok(line) = self.lines.recv_timeout(d) {
            panic!("unexpected line: {line}");
        }
    }

    pub fn stop(self) -> (Option<i32>, String) {
        assert!(kill("-TERM", &[&self.child.id().to_string()]));
        let out = self.child.wait_with_output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }
}
