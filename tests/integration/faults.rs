//! Faults: a full filesystem, a read-only directory, and `kill -9` at random
//! moments. Mounting needs root (CI runs as root); without it those tests
//! print why they did not run.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::harness::*;

/// A small tmpfs, unmounted on drop.
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(at: &Path, size: &str) -> Option<Tmpfs> {
        std::fs::create_dir_all(at).unwrap();
        let ok = Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                &format!("size={size},mode=0700"),
                "tmpfs",
            ])
            .arg(at)
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            println!(
                "SKIPPED: cannot mount a tmpfs at {} (needs root and CAP_SYS_ADMIN)",
                at.display()
            );
            return None;
        }
        Some(Tmpfs(at.to_path_buf()))
    }

    fn remount_ro(&self) {
        let ok = Command::new("mount")
            .args(["-o", "remount,ro"])
            .arg(&self.0)
            .status()
            .unwrap()
            .success();
        assert!(ok, "remount read-only");
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn publish_into_a_full_filesystem_fails_cleanly_and_keeps_the_old_record() {
    let w = World::new();
    let mnt = w.tmp.path().join("full");
    let Some(_fs) = Tmpfs::mount(&mnt, "64k") else {
        return;
    };
    let a = w.bare_device("a");
    a.write_config(&format!(
        "[profiles.default]\ndir = {:?}\n",
        mnt.display().to_string()
    ));
    a.publish("s1", &["--title", "before"]);
    let before = names(&mnt);
    // Fill the filesystem to the last block.
    let _ = Command::new("dd")
        .args(["if=/dev/zero", "bs=4096", "count=64"])
        .arg(format!("of={}", mnt.join("filler").display()))
        .stderr(Stdio::null())
        .status();
    let long = "x".repeat(200);
    let out = a
        .run(&["publish", "--session", "s1", "--title", &long])
        .code(1);
    assert!(
        out.stderr.contains("No space left") && out.stderr.contains(mnt.to_str().unwrap()),
        "{}",
        out.stderr
    );
    // The previous version is intact, and no temp file is left behind.
    let rows = a.list(&[]);
    assert_eq!(rows[0]["title"], "before");
    let mut after = names(&mnt);
    after.retain(|n| n != "filler");
    assert_eq!(after, before);
}

#[test]
fn a_read_only_directory_gives_a_clear_error() {
    let w = World::new();
    let mnt = w.tmp.path().join("ro");
    let Some(fs) = Tmpfs::mount(&mnt, "1m") else {
        return;
    };
    let a = w.bare_device("a");
    a.write_config(&format!(
        "[profiles.default]\ndir = {:?}\n",
        mnt.display().to_string()
    ));
    a.publish("s1", &[]);
    fs.remount_ro();
    let out = a.run(&["publish", "--session", "s2"]).code(1);
    assert!(
        out.stderr.contains("Read-only file system") && out.stderr.contains(mnt.to_str().unwrap()),
        "{}",
        out.stderr
    );
    let out = a.run(&["clear", "--session", "s1"]).code(1);
    assert!(
        out.stderr.contains("Read-only file system"),
        "{}",
        out.stderr
    );
    // Reading still works.
    assert_eq!(sessions(&a.list(&[])), ["s1"]);
}

/// `kill -9` of publish, refresh and clear processes at random moments never
/// leaves a partial record that `list` would meet.
#[test]
fn kill_9_at_random_moments_never_leaves_a_torn_record() {
    let w = World::new();
    let a = w.device("a");
    let owner = Command::new("sleep").arg("60").spawn().unwrap();
    let owner_pid = owner.id().to_string();
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut killed = 0;
    for i in 0..150 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let session = format!("k{}", i % 5);
        let title = "t".repeat((x % 200) as usize);
        let args: Vec<&str> = match i % 3 {
            0 => vec![
                "publish",
                "--session",
                &session,
                "--owner-pid",
                &owner_pid,
                "--title",
                &title,
            ],
            1 => vec!["refresh"],
            _ => vec!["clear", "--session", &session],
        };
        let mut child = a
            .cmd()
            .args(&args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_micros(x % 8000));
        if child.try_wait().unwrap().is_none() {
            let _ = child.kill();
            killed += 1;
        }
        let _ = child.wait();
    }
    let out = a.run(&["-v", "list", "--all", "--json"]).success();
    let torn: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| l.contains("skipped") && !l.contains("temp file"))
        .collect();
    assert!(torn.is_empty(), "{torn:?}");
    let rows: Vec<serde_json::Value> = serde_json::from_str(&out.stdout).unwrap();
    assert!(!rows.is_empty());
    println!(
        "kill -9: {killed} of 150 processes killed mid-run; {} records, none torn",
        rows.len()
    );
    // Leftover temp files of killed writers are expire's to remove (after 10 min).
    let mut owner = owner;
    let _ = owner.kill();
    let _ = owner.wait();
}
