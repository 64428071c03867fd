//! Faults: a full filesystem, a read-only directory, and `kill -9` at random
//! moments. The filesystem faults mount a small tmpfs inside a user and mount
//! namespace of their own (`unshare --user --map-root-user --mount`), so they
//! run, and can fail, without root; a machine where that namespace cannot be
//! made fails them with the reason instead of skipping them.

use std::path::Path;
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use crate::harness::*;

/// Runs `script` (sh, `-e`) in a fresh user and mount namespace in which it
/// is root, with `presence` on PATH, `$MNT` an empty directory to mount on
/// and `$OUT` a directory for its results, both outside the namespace.
fn in_namespace(dev: &Device, mnt: &Path, out: &Path, script: &str) -> Output {
    std::fs::create_dir_all(mnt).unwrap();
    std::fs::create_dir_all(out).unwrap();
    let result = dev
        .program(require_tool("unshare"))
        .args(["--user", "--map-root-user", "--mount", "sh", "-ec", script])
        .env("MNT", mnt)
        .env("OUT", out)
        .output()
        .unwrap();
    assert!(
        result.status.success(),
        "the fault scenario failed (when `unshare` itself is refused, unprivileged \
         user namespaces must be enabled: sysctl kernel.unprivileged_userns_clone=1, \
         user.max_user_namespaces > 0): {}",
        String::from_utf8_lossy(&result.stderr)
    );
    result
}

fn read(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[test]
fn publish_into_a_full_filesystem_fails_cleanly_and_keeps_the_old_record() {
    let w = World::new();
    let (mnt, out) = (w.tmp.path().join("full"), w.tmp.path().join("out"));
    let a = w.bare_device("a");
    a.write_config(&format!(
        "[profiles.default]\ndir = {:?}\n",
        mnt.display().to_string()
    ));
    in_namespace(
        &a,
        &mnt,
        &out,
        r#"
        mount -t tmpfs -o size=64k,mode=0700 tmpfs "$MNT"
        presence publish --session s1 --title before >/dev/null
        ls -A "$MNT" > "$OUT/before"
        # Fill the filesystem to the last block.
        dd if=/dev/zero bs=4096 count=64 of="$MNT/filler" 2>/dev/null || true
        code=0
        presence publish --session s1 --title "$(printf 'x%.0s' $(seq 200))" 2> "$OUT/err" || code=$?
        echo "$code" > "$OUT/code"
        presence list --json > "$OUT/list"
        ls -A "$MNT" | grep -vx filler > "$OUT/after" || true
        "#,
    );
    let err = read(&out, "err");
    assert_eq!(read(&out, "code").trim(), "1", "{err}");
    assert!(
        err.contains("No space left") && err.contains(mnt.to_str().unwrap()),
        "{err}"
    );
    // The previous version is intact, and no temp file is left behind.
    let rows: Vec<JsonRow> = parse_json(&read(&out, "list"), "list --json");
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].title, "before");
    assert_eq!(read(&out, "after"), read(&out, "before"));
}

#[test]
fn a_read_only_directory_gives_a_clear_error() {
    let w = World::new();
    let (mnt, out) = (w.tmp.path().join("ro"), w.tmp.path().join("out"));
    let a = w.bare_device("a");
    a.write_config(&format!(
        "[profiles.default]\ndir = {:?}\n",
        mnt.display().to_string()
    ));
    in_namespace(
        &a,
        &mnt,
        &out,
        r#"
        mount -t tmpfs -o size=1m,mode=0700 tmpfs "$MNT"
        presence publish --session s1 >/dev/null
        # Read-only as a mount, not as a superblock: a superblock remount
        # re-passes uid=/gid= of the outer user, which a namespace made
        # without root does not map.
        mount -o remount,ro,bind "$MNT"
        code=0; presence publish --session s2 2> "$OUT/publish" || code=$?
        echo "$code" > "$OUT/publish-code"
        code=0; presence clear --session s1 2> "$OUT/clear" || code=$?
        echo "$code" > "$OUT/clear-code"
        presence list --json > "$OUT/list"
        "#,
    );
    let err = read(&out, "publish");
    assert_eq!(read(&out, "publish-code").trim(), "1", "{err}");
    assert!(
        err.contains("Read-only file system") && err.contains(mnt.to_str().unwrap()),
        "{err}"
    );
    let err = read(&out, "clear");
    assert_eq!(read(&out, "clear-code").trim(), "1", "{err}");
    assert!(err.contains("Read-only file system"), "{err}");
    // Reading still works.
    let rows: Vec<JsonRow> = parse_json(&read(&out, "list"), "list --json");
    assert_eq!(sessions(&rows), ["s1"]);
}

/// `kill -9` of publish, refresh and clear processes at random moments never
/// leaves a partial record that `list` would meet.
#[test]
fn kill_9_at_random_moments_never_leaves_a_torn_record() {
    let w = World::new();
    let a = w.device("a");
    let owner = owner();
    let owner_pid = owner.0.id().to_string();
    // Half the sessions are published to the end first: every later write
    // of theirs, however it is interrupted, replaces a whole record. The
    // other half may or may not come to exist.
    const SESSIONS: usize = 10;
    let written: Vec<String> = (0..SESSIONS / 2).map(|i| format!("k{i}")).collect();
    for session in &written {
        a.publish(session, &["--owner-pid", &owner_pid]);
    }
    // How long a process runs here: the kills are spread over that and a
    // half more, so that they fall before, during and after its writes on a
    // fast machine and a slow one alike. One process in ten runs to its end
    // to measure it again.
    let mut life = Duration::ZERO;
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let (mut killed, mut ended) = (0, 0);
    for i in 0..150 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let session = format!("k{}", i % SESSIONS);
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
        let start = Instant::now();
        let mut child = a
            .cmd()
            .args(&args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        if i % 10 == 0 {
            let _ = child.wait();
            life = start.elapsed();
            continue;
        }
        std::thread::sleep(life.mul_f64((x % 1000) as f64 / 1000.0 * 1.5));
        if child.try_wait().unwrap().is_none() {
            let _ = child.kill();
            killed += 1;
        } else {
            ended += 1;
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
    // Nothing removes a record file here: each one written before the kills
    // is still there, whole, whatever was interrupted over it.
    let rows: Vec<JsonRow> = parse_json(&out.stdout, "list --all --json");
    let listed = sessions(&rows);
    for session in &written {
        assert!(
            listed.contains(session),
            "the record of {session} is gone or unreadable: {listed:?}\n{}",
            out.stderr
        );
    }
    // Otherwise the test proved nothing about interrupted writes, or the
    // kills all came before anything was written.
    assert!(
        killed > 0 && ended > 0,
        "{killed} processes killed mid-run, {ended} ended first"
    );
    println!(
        "kill -9: {killed} of 135 processes killed mid-run, {ended} ended first \
         (a run takes about {life:?}); {} records, none torn",
        rows.len()
    );
    // Leftover temp files of killed writers are expire's to remove (after 10 min).
    drop(owner);
}
