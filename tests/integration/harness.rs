//! A small harness: every test gets its own temp dir; each simulated device
//! is a set of HOME / XDG_* dirs inside it, and the real `presence` binary
//! runs with a scrubbed environment. Nothing touches the real home directory.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

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

    /// Runs, asserts success, returns stdout parsed as JSON.
    pub fn json(&self, args: &[&str]) -> Value {
        let r = self.run(args).success();
        serde_json::from_str(&r.stdout)
            .unwrap_or_else(|e| panic!("{args:?}: stdout is not JSON ({e}): {}", r.stdout))
    }

    /// `list --json` plus extra args: the array.
    pub fn list(&self, extra: &[&str]) -> Vec<Value> {
        let mut args = vec!["list", "--json"];
        args.extend_from_slice(extra);
        match self.json(&args) {
            Value::Array(a) => a,
            other => panic!("list --json printed {other}"),
        }
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

/// Session ids of a listing, in order.
pub fn sessions(rows: &[Value]) -> Vec<String> {
    rows.iter()
        .map(|r| r["session_id"].as_str().unwrap().to_string())
        .collect()
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
