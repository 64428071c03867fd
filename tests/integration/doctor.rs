//! `presence doctor` on a healthy directory and on one with each problem:
//! writers whose clocks run 10 minutes behind and ahead (under libfaketime),
//! this device's sessions going stale with no refresher, `.stignore`
//! includes and a directory that no sync engine shares.

use std::os::unix::fs::PermissionsExt;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::harness::*;

fn doctor(dev: &Device, code: i32) -> Vec<JsonCheck> {
    let out = dev.run(&["doctor", "--json"]).code(code);
    parse_json(&out.stdout, "doctor --json")
}

/// `doctor ARGS` with PATH holding only the world's stand-ins: a machine
/// where no systemd user manager answers (unless a stand-in says
/// otherwise) and with no crontab unless [`fake_crontab`] made one. Its
/// exit status and stdout.
fn doctor_here(w: &World, dev: &Device, args: &[&str]) -> (i32, String) {
    if !fake_bin(w).join("systemctl").exists() {
        no_user_manager(w);
    }
    let out = dev
        .cmd()
        .env("PATH", fake_bin(w))
        .arg("doctor")
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// [`doctor_here`] with `--json`, which must exit with `code`.
fn doctor_json_here(w: &World, dev: &Device, code: i32) -> Vec<JsonCheck> {
    let (got, stdout) = doctor_here(w, dev, &["--json"]);
    assert_eq!(got, code, "{stdout}");
    parse_json(&stdout, "doctor --json")
}

/// The crontab lines `presence setup` writes for the default 30 s
/// refresh_interval, as a crontab holds them.
fn setups_crontab(w: &World) {
    let bin = env!("CARGO_BIN_EXE_presence");
    std::fs::write(
        fake_crontab(w),
        format!(
            "# Added by `presence setup` (digest 0)\n\
             * * * * * {bin} --quiet refresh --all-profiles; sleep 30; {bin} --quiet refresh \
             --all-profiles\n17 4 * * * {bin} --quiet expire\n"
        ),
    )
    .unwrap();
}

fn status_of<'a>(checks: &'a [JsonCheck], name: &str) -> Vec<&'a str> {
    checks
        .iter()
        .filter(|c| c.check == name)
        .map(|c| c.status.as_str())
        .collect()
}

/// The checks named `name`.
fn named<'a>(checks: &'a [JsonCheck], name: &str) -> Vec<&'a JsonCheck> {
    checks.iter().filter(|c| c.check == name).collect()
}

/// Makes the world's shared directory a Syncthing folder that ignores temp
/// files, as docs/syncthing.md sets it up.
fn syncthing_folder(w: &World) {
    let dir = w.shared();
    std::fs::create_dir_all(dir.join(".stfolder")).unwrap();
    std::fs::write(dir.join(".stignore"), "(?d).*.tmp\n").unwrap();
}

#[test]
fn doctor_on_a_healthy_directory_is_all_ok() {
    let w = World::new();
    let a = w.device("a");
    a.publish("s1", &[]);
    syncthing_folder(&w);
    // Set up as setup does it where there is cron and no user manager.
    setups_crontab(&w);
    let checks = doctor_json_here(&w, &a, 0);
    let bad: Vec<&JsonCheck> = checks.iter().filter(|c| c.status != "ok").collect();
    assert!(bad.is_empty(), "{bad:#?}");
    for name in [
        "config",
        "refresh-interval",
        "directory",
        "permissions",
        "writable",
        "sync-engine",
        "stignore",
        "device",
        "refresher",
        "garbage",
    ] {
        assert_eq!(status_of(&checks, name), ["ok"], "{name}: {checks:#?}");
    }
    let c = named(&checks, "refresher")[0];
    assert!(c.message.contains("a crontab line, every 30s"), "{c:#?}");
    // Like setup's copy of it, the human output ends with the verdict.
    let (code, human) = doctor_here(&w, &a, &[]);
    assert_eq!(code, 0);
    let (checks, last) = human.trim_end().rsplit_once('\n').unwrap();
    assert!(checks.lines().all(|l| l.starts_with("ok  ")), "{human}");
    assert_eq!(last, "doctor: every check passed", "{human}");
}

/// In a home where nothing was set up, doctor says so and names
/// `presence setup`, and ends with a verdict that is not "every check
/// passed".
#[test]
fn doctor_in_a_fresh_home_suggests_setup() {
    let w = World::new();
    let a = w.bare_device("a");
    let checks = doctor_json_here(&w, &a, 0);
    let c = named(&checks, "directory")[0];
    assert_eq!(c.status, "warn", "{checks:#?}");
    assert!(
        c.message.contains("nothing is set up on this device"),
        "{c:#?}"
    );
    assert!(
        c.fix
            .as_deref()
            .unwrap_or_default()
            .contains("`presence setup`"),
        "{c:#?}"
    );
    let (code, human) = doctor_here(&w, &a, &[]);
    assert_eq!(code, 0);
    assert!(
        human.contains("warn  directory") && human.contains("fix: run `presence setup`"),
        "{human}"
    );
    assert!(
        human.ends_with("doctor: 1 warning(s), nothing failed\n"),
        "{human}"
    );
    // A failure is counted too.
    a.write_config("[profiles.default]\nttl = \"nope\"\n");
    let (code, human) = doctor_here(&w, &a, &[]);
    assert_eq!(code, 1);
    assert!(
        human.ends_with("doctor: 1 check(s) failed, 0 warning(s)\n"),
        "{human}"
    );
}

#[test]
fn doctor_names_each_problem_with_a_fix() {
    let w = World::new();
    let a = w.device("a");
    a.publish("s1", &["--ttl", "1s"]);
    let dir = w.shared();
    let t = now();
    // Other users could read it.
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    // A foreign record with a credential, from a device whose clock is 1000 s behind.
    write_record(
        &dir,
        "slow.s9.json",
        &json!({"session_id": "s9", "profile": "default", "device_id": "0123456789abcdef",
                "host": "slowbox", "endpoint": "https://u:hunter2@h/x",
                "updated_at": t - 1000.0, "expires_at": t + 2600.0}),
    );
    std::fs::write(dir.join("torn.json"), "{\"session_id\": \"x\"").unwrap();
    // A Syncthing folder around it, without the ignore line.
    std::fs::create_dir(dir.join(".stfolder")).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1100)); // s1 expires: garbage
    let checks = doctor(&a, 0);
    for (name, want) in [
        ("permissions", "warn"),
        ("secrets", "warn"),
        ("unreadable", "warn"),
        ("stignore", "warn"),
        ("garbage", "warn"),
    ] {
        assert_eq!(status_of(&checks, name), [want], "{name}: {checks:#?}");
        let c = checks.iter().find(|c| c.check == name).unwrap();
        assert!(c.fix.is_some(), "{name} has no fix: {c:?}");
    }
    let device = checks
        .iter()
        .find(|c| c.check == "device" && c.message.contains("slowbox"))
        .unwrap();
    assert_eq!(device.status, "warn", "{device:?}");
    assert!(device.message.contains("behind"), "{device:?}");
    let secrets = checks.iter().find(|c| c.check == "secrets").unwrap();
    assert!(secrets.message.contains("slow.s9.json"), "{secrets:?}");
    assert!(!format!("{checks:?}").contains("hunter2"));
    let stignore = checks.iter().find(|c| c.check == "stignore").unwrap();
    assert!(stignore.fix.as_ref().unwrap().contains("(?d).*.tmp"));
    // A FIFO planted as `.stignore` (the folder is shared) neither hangs
    // doctor nor counts as the ignore line.
    let fifo = dir.join(".stignore");
    mkfifo(&fifo);
    assert_eq!(status_of(&doctor(&a, 0), "stignore"), ["warn"]);
    std::fs::remove_file(&fifo).unwrap();
    // With the ignore line, that check passes.
    std::fs::write(dir.join(".stignore"), "(?d).*.tmp\n").unwrap();
    assert_eq!(status_of(&doctor(&a, 0), "stignore"), ["ok"]);
}

#[test]
fn doctor_fails_on_a_broken_setup() {
    let w = World::new();
    let a = w.bare_device("a");
    a.write_config("[profiles.default]\nttl = \"nope\"\n");
    let checks = doctor(&a, 1);
    assert_eq!(status_of(&checks, "config"), ["fail"]);
    let file = w.tmp.path().join("a-file");
    std::fs::write(&file, "x").unwrap();
    a.write_config(&format!(
        "[profiles.default]\ndir = {:?}\n",
        file.display().to_string()
    ));
    let checks = doctor(&a, 1);
    assert_eq!(status_of(&checks, "directory"), ["fail"]);
    // A configured directory that does not exist yet is a warning.
    a.write_config(&format!(
        "[profiles.default]\ndir = {:?}\n",
        w.tmp.path().join("later").display().to_string()
    ));
    assert_eq!(status_of(&doctor(&a, 0), "directory"), ["warn"]);
    let human = a.run(&["doctor"]).success().stdout;
    assert!(
        human.contains("warn  directory") && human.contains("fix: "),
        "{human}"
    );
}

#[test]
fn doctor_judges_each_devices_clock_from_every_record_it_sent() {
    let w = World::new();
    let a = w.device("a");
    a.publish("mine", &[]);
    let t = now();
    let record = |sid: &str, device: &str, host: &str, writer_now: f64| {
        json!({"session_id": sid, "profile": "default", "client": "terminal", "device_id": device,
               "host": host, "instance_id": host, "updated_at": writer_now,
               "expires_at": writer_now + 90.0, "started_at": writer_now, "seq": 1})
    };
    // Arriving now from a writer 15 min behind: already expired, never shown.
    write_record(
        &w.shared(),
        "slow.s.json",
        &record("s", &"a".repeat(32), "slow", t - 900.0),
    );
    let checks = doctor(&a, 1);
    let slow: Vec<&JsonCheck> = checks
        .iter()
        .filter(|c| c.message.contains("(slow)"))
        .collect();
    assert_eq!(slow.len(), 1, "{checks:#?}");
    assert_eq!(slow[0].status, "fail", "{slow:#?}");
    assert!(slow[0].message.contains("-900 s (behind"), "{slow:#?}");
    assert!(
        slow[0].fix.as_deref().unwrap_or("").contains("NTP"),
        "{slow:#?}"
    );

    // A writer 15 min ahead: its sessions show; a warning, with the right sign.
    std::fs::remove_file(w.shared().join("slow.s.json")).unwrap();
    write_record(
        &w.shared(),
        "fast.f.json",
        &record("f", &"b".repeat(32), "fast", t + 900.0),
    );
    let checks = doctor(&a, 0);
    let fast: Vec<&JsonCheck> = checks
        .iter()
        .filter(|c| c.message.contains("(fast)"))
        .collect();
    assert_eq!(fast.len(), 1, "{checks:#?}");
    assert_eq!(fast[0].status, "warn", "{fast:#?}");
    assert!(fast[0].message.contains("+900 s (ahead"), "{fast:#?}");
    let mine: Vec<&JsonCheck> = checks
        .iter()
        .filter(|c| c.message.starts_with("this device"))
        .collect();
    assert_eq!(mine[0].status, "ok", "{mine:#?}");
}

/// The `device` check whose message names `device_id`.
fn device_check<'a>(checks: &'a [JsonCheck], device_id: &str) -> &'a JsonCheck {
    let short = &device_id[..8];
    let found = checks
        .iter()
        .filter(|c| c.check == "device" && c.message.contains(short))
        .collect::<Vec<_>>();
    assert_eq!(found.len(), 1, "{device_id}: {checks:#?}");
    found[0]
}

#[test]
fn doctor_judges_writers_ten_minutes_behind_and_ahead_under_faketime() {
    let w = World::new();
    let (a, slow, fast) = (w.device("a"), w.device("slow"), w.device("fast"));
    let publish = |d: &Device, offset: &str, session: &str| {
        run_ok(faked(d.cmd(), offset).args(["publish", "--session", session]));
    };
    a.publish("mine", &[]);
    publish(&slow, "-10m", "behind");
    publish(&fast, "+10m", "ahead");
    let (slow_id, fast_id) = (slow.device_id(), fast.device_id());

    // First contact, nothing learned: the writer behind has its records
    // arrive already expired (a failure naming NTP), the one ahead shows.
    let checks = doctor(&a, 1);
    // An offset is read from a record's time and its arrival here: a
    // loaded machine may put a moment between the two, so the words are
    // checked against the offset given beside them, and that against
    // ten minutes within a few seconds (below).
    // (Rounded as doctor rounds, half away from zero.)
    let said = |c: &JsonCheck| format!("{:+} s", c.offset_s.expect("an offset").round());
    let behind = device_check(&checks, &slow_id);
    assert_eq!(behind.status, "fail", "{behind:#?}");
    assert!(
        behind.message.contains(&format!(
            "about {} (behind ours; not learned yet)",
            said(behind)
        )) && behind.message.contains("arrive already expired")
            && behind.message.contains("last arrived"),
        "{behind:#?}"
    );
    let fix = behind.fix.as_deref().unwrap_or_default();
    assert!(
        fix.contains("NTP") && fix.contains("timedatectl set-ntp true"),
        "{fix}"
    );
    let ahead = device_check(&checks, &fast_id);
    assert_eq!(ahead.status, "warn", "{ahead:#?}");
    assert!(
        ahead
            .message
            .contains(&format!("about {} (ahead of ours", said(ahead))),
        "{ahead:#?}"
    );
    // The same, for programs: which device, and its clock.
    for (c, id, live, around) in [(behind, &slow_id, 0, -600.0), (ahead, &fast_id, 1, 600.0)] {
        assert_eq!(c.device_id.as_deref(), Some(id.as_str()), "{c:#?}");
        let host = c.host.as_deref().unwrap_or_default();
        assert!(
            !host.is_empty() && c.message.contains(&format!("({host})")),
            "{c:#?}"
        );
        assert_eq!(c.this_device, Some(false), "{c:#?}");
        assert_eq!((c.records, c.live), (Some(1), Some(live)), "{c:#?}");
        assert!(
            c.last_seen_s.is_some_and(|s| (0.0..30.0).contains(&s)),
            "{c:#?}"
        );
        let offset = c.offset_s.expect("an offset");
        assert!((offset - around).abs() < 5.0, "{c:#?}");
        assert_eq!(c.offset_learned, Some(false), "{c:#?}");
    }
    // This device's check is told apart by its fields, not by its prose.
    let mine: Vec<&JsonCheck> = checks
        .iter()
        .filter(|c| c.check == "device" && c.this_device == Some(true))
        .collect();
    assert_eq!(mine.len(), 1, "{checks:#?}");
    assert_eq!(mine[0].device_id.as_deref(), Some(a.device_id().as_str()));
    assert_eq!(mine[0].offset_s, None, "{:#?}", mine[0]);
    assert!(sessions(&a.list(&[])).contains(&"ahead".to_string()));
    assert!(!sessions(&a.list(&[])).contains(&"behind".to_string()));

    // Their second refreshes arrive; a read learns both clocks. The writer
    // behind now shows here, but its clock still needs fixing: a warning.
    std::thread::sleep(Duration::from_millis(2500));
    publish(&slow, "-10m", "behind");
    publish(&fast, "+10m", "ahead");
    a.run(&["list"]).success();
    assert!(sessions(&a.list(&[])).contains(&"behind".to_string()));
    let checks = doctor(&a, 0);
    let behind = device_check(&checks, &slow_id);
    assert_eq!(behind.status, "warn", "{behind:#?}");
    assert!(
        behind.message.contains(&format!(
            "clock {} (behind ours; learned from",
            said(behind)
        )) && behind.message.contains("ttl"),
        "{behind:#?}"
    );
    assert!(behind.fix.as_deref().unwrap_or_default().contains("NTP"));
    let ahead = device_check(&checks, &fast_id);
    assert_eq!(ahead.status, "warn", "{ahead:#?}");
    assert!(
        ahead.message.contains(&format!(
            "clock {} (ahead of ours; learned from",
            said(ahead)
        )),
        "{ahead:#?}"
    );
    assert_eq!(ahead.offset_learned, Some(true), "{ahead:#?}");
    for (c, around) in [(behind, -600.0), (ahead, 600.0)] {
        assert!(
            c.offset_s.is_some_and(|o| (o - around).abs() < 2.0),
            "{c:#?}"
        );
    }
    let mine = checks
        .iter()
        .find(|c| c.check == "device" && c.message.starts_with("this device"))
        .unwrap();
    assert_eq!(mine.status, "ok", "{mine:#?}");
    assert!(mine.message.contains("last written"), "{mine:#?}");

    // The same sign in `devices`, its JSON and its table.
    let devices: Vec<JsonDevice> = a.json(&["devices", "--json"]);
    let offset = |id: &str| {
        let d = devices.iter().find(|d| d.device_id == id).unwrap();
        assert!((0.0..10.0).contains(&d.last_seen_s), "{d:?}");
        d.offset_s.expect("learned")
    };
    let (behind, ahead) = (offset(&slow_id), offset(&fast_id));
    assert!((-602.0..=-599.0).contains(&behind), "{behind}");
    assert!((599.0..=601.0).contains(&ahead), "{ahead}");
    let table = a.run(&["devices"]).success().stdout;
    let line = |id: &str| {
        table
            .lines()
            .find(|l| l.contains(&id[..8]))
            .unwrap_or_else(|| panic!("{id} not in {table}"))
            .to_string()
    };
    assert!(
        line(&slow_id).contains(&format!("{behind:+.1} s (behind")),
        "{behind}: {table}"
    );
    assert!(
        line(&fast_id).contains(&format!("{ahead:+.1} s (ahead")),
        "{ahead}: {table}"
    );
}

/// The `refresher` check of `checks`, which must be there.
fn refresher(checks: &[JsonCheck]) -> &JsonCheck {
    let found = named(checks, "refresher");
    assert_eq!(found.len(), 1, "{checks:#?}");
    found[0]
}

#[test]
fn doctor_sees_this_devices_sessions_go_stale_with_no_refresher() {
    let w = World::new();
    let a = w.device("a");
    let owner = KillOnDrop(
        Command::new(require_tool("sleep"))
            .arg("600")
            .spawn()
            .unwrap(),
    );
    let pid = owner.0.id().to_string();
    // Without an owner a record is left to expire; but nothing would
    // refresh an owned one, and doctor says so.
    a.publish("hook", &[]);
    let c = refresher(&doctor_json_here(&w, &a, 0)).clone();
    assert_eq!(c.status, "warn", "{c:#?}");
    assert!(
        c.message.contains("no refresher runs") && c.message.contains("--owner-pid"),
        "{c:#?}"
    );
    assert!(c.sessions.is_empty(), "{c:#?}");

    // Owned, ttl 24 s; nothing refreshes it. Each stage below has seconds
    // to spare on a loaded machine: fresh until 18 s, about to expire from
    // 18 s to 24 s, expired after.
    a.publish("owned", &["--ttl", "24s", "--owner-pid", &pid]);
    let published = Instant::now();
    // The fix fits this machine: no user manager answers and there is no
    // crontab, so it names neither `systemctl --user` nor a crontab line
    // with a placeholder path, but what installs one; and it points to
    // docs a user has outside a checkout.
    let fix_names_the_timer = |c: &JsonCheck| {
        let fix = c.fix.as_deref().unwrap_or_default();
        assert_docs_travel("the refresher's fix", fix);
        assert!(
            fix.contains("install cron")
                && fix.contains("`presence setup`")
                && fix.contains("refresh --all-profiles --every")
                && fix.contains(
                    "https://github.com/presence-dev/presence/blob/main/docs/lifecycle.md"
                )
                && !fix.contains("systemctl --user")
                && !fix.contains("/full/path"),
            "{c:#?}"
        );
    };
    fix_names_the_timer(&c);
    let fresh = doctor_json_here(&w, &a, 0);
    let c = refresher(&fresh);
    assert_eq!(c.status, "warn", "{c:#?}");
    assert!(
        c.message.contains("owned (expires in") && c.message.contains("no refresher runs"),
        "{c:#?}"
    );
    assert!(!c.message.contains("hook"), "{c:#?}");
    fix_names_the_timer(c);

    // Past three quarters of its ttl: about to expire.
    std::thread::sleep(Duration::from_millis(18_300).saturating_sub(published.elapsed()));
    let late = doctor_json_here(&w, &a, 0);
    let c = refresher(&late);
    assert_eq!(c.status, "warn", "{c:#?}");
    assert!(
        c.message.contains("about to expire: owned (last written"),
        "{c:#?}"
    );
    fix_names_the_timer(c);

    // Expired while its owner runs: no device lists it. A failure.
    std::thread::sleep(Duration::from_millis(24_300).saturating_sub(published.elapsed()));
    assert!(!sessions(&a.list(&[])).contains(&"owned".to_string()));
    let expired = doctor_json_here(&w, &a, 1);
    let c = refresher(&expired);
    assert_eq!(c.status, "fail", "{c:#?}");
    assert!(
        c.message.contains("have expired") && c.message.contains("owned (last written"),
        "{c:#?}"
    );
    fix_names_the_timer(c);
    assert_eq!(c.sessions, ["owned"], "{c:#?}");
    let (code, human) = doctor_here(&w, &a, &[]);
    assert_eq!(code, 1);
    assert!(human.contains("FAIL  refresher"), "{human}");

    // A refresher of another device's state (another HOME) does not count.
    let other = w.device("b");
    let _theirs = KillOnDrop(
        other
            .cmd()
            .args(["--quiet", "refresh", "--every", "1s"])
            .spawn()
            .unwrap(),
    );
    std::thread::sleep(Duration::from_millis(300));
    let checks = doctor_json_here(&w, &a, 1);
    let c = refresher(&checks);
    assert!(
        c.status == "fail" && c.message.contains("no refresher runs"),
        "{c:#?}"
    );

    // This device's refresher writes it again; doctor names it.
    let _ours = KillOnDrop(
        a.cmd()
            .args(["--quiet", "refresh", "--every", "1s"])
            .spawn()
            .unwrap(),
    );
    wait_until("the record refreshed", PATIENCE, || {
        sessions(&a.list(&[])).contains(&"owned".to_string())
    });
    let kept = doctor_json_here(&w, &a, 0);
    let c = refresher(&kept);
    assert_eq!(c.status, "ok", "{c:#?}");
    assert!(c.message.contains("`presence refresh --every`"), "{c:#?}");
    drop(owner);
}

/// A crontab line is judged by how often it refreshes, against the
/// profile's refresh_interval and ttl; and the fix when nothing refreshes
/// names what this machine has.
#[test]
fn doctor_judges_a_crontab_line_by_how_often_it_refreshes() {
    let w = World::new();
    let a = w.device("a");
    a.publish("s1", &[]);
    let crontab = fake_crontab(&w);
    let verdict = |line: &str| {
        std::fs::write(&crontab, format!("MAILTO=me\n{line}\n")).unwrap();
        refresher(&doctor_json_here(&w, &a, 0)).clone()
    };
    let c = verdict("* * * * * /usr/bin/presence --quiet refresh --all-profiles");
    assert_eq!(c.status, "warn", "{c:#?}");
    assert!(
        c.message
            .contains("refreshes every 1m, less often than refresh_interval (30s)"),
        "{c:#?}"
    );
    assert!(
        c.fix
            .as_deref()
            .unwrap_or_default()
            .contains("`presence setup` again"),
        "{c:#?}"
    );
    let c = verdict("*/2 * * * * presence refresh");
    assert_eq!(c.status, "warn", "{c:#?}");
    assert!(c.message.contains("not even once a ttl"), "{c:#?}");
    let c = verdict("* * * * * presence refresh; sleep 30; presence refresh");
    assert_eq!(c.status, "ok", "{c:#?}");
    // A schedule doctor does not read is not judged.
    let c = verdict("@reboot presence refresh --every");
    assert_eq!(c.status, "ok", "{c:#?}");
    assert!(c.message.contains("(a crontab line)"), "{c:#?}");
    // A minute is enough for a profile that asks for no more.
    a.write_config(&format!(
        "[profiles.default]\ndir = {:?}\nttl = \"3m\"\nrefresh_interval = \"1m\"\n",
        w.shared().display().to_string()
    ));
    let c = verdict("* * * * * presence refresh");
    assert_eq!(c.status, "ok", "{c:#?}");

    // Nothing refreshes: with cron here, the fix is setup's crontab lines;
    // where a user manager answers, setup's timer.
    let c = verdict("0 1 * * * backup");
    assert_eq!(c.status, "warn", "{c:#?}");
    let fix = c.fix.clone().unwrap_or_default();
    assert!(
        fix.contains("which adds crontab lines") && !fix.contains("install cron"),
        "{fix}"
    );
    fake_program(
        &w,
        "systemctl",
        "#!/bin/sh\necho inactive\necho inactive\nexit 3\n",
    );
    let c = verdict("0 1 * * * backup");
    let fix = c.fix.clone().unwrap_or_default();
    assert!(
        fix.contains("installs and starts presence-refresh.timer"),
        "{fix}"
    );
}

/// The refresh timer is judged by the schedule systemd runs: its unit and
/// drop-ins as `systemctl --user cat` prints them.
#[test]
fn doctor_judges_the_refresh_timer_by_how_often_it_starts() {
    let w = World::new();
    let a = w.device("a");
    a.publish("s1", &[]);
    let unit = w.tmp.path().join("timer-as-systemd-has-it");
    fake_program(
        &w,
        "systemctl",
        &format!(
            "#!/bin/sh
case \"$*\" in
             *is-active*) echo active; echo inactive; exit 0;;
             *' cat '*) while IFS= read -r l; do printf '%s\\n' \"$l\"; done < '{}';;
             *) exit 1;;
esac
",
            unit.display()
        ),
    );
    let verdict_with = |timer: &str, drop_in: &str| {
        std::fs::write(
            &unit,
            format!(
                "# /home/u/.config/systemd/user/presence-refresh.timer\n[Unit]\n\
                 Description=Refresh presence records\n\n[Timer]\nOnActiveSec=0\n{timer}\n\
                 AccuracySec=1s\n\n[Install]\nWantedBy=timers.target\n{drop_in}"
            ),
        )
        .unwrap();
        refresher(&doctor_json_here(&w, &a, 0)).clone()
    };
    let verdict = |timer: &str| verdict_with(timer, "");
    // The shipped 30 s for the default 30 s refresh_interval.
    let c = verdict("OnUnitActiveSec=30s");
    assert_eq!(c.status, "ok", "{c:#?}");
    assert!(c.message.contains("presence-refresh.timer"), "{c:#?}");
    let c = verdict("OnUnitActiveSec=1min");
    assert_eq!(c.status, "warn", "{c:#?}");
    assert!(
        c.message.contains(
            "presence-refresh.timer refreshes every 1m, less often than refresh_interval (30s)"
        ),
        "{c:#?}"
    );
    let fix = c.fix.as_deref().unwrap_or_default();
    assert!(
        fix.contains("`presence setup` again") && fix.contains("OnUnitActiveSec="),
        "{fix}"
    );
    let c = verdict("OnUnitActiveSec=2min");
    assert_eq!(c.status, "warn", "{c:#?}");
    assert!(c.message.contains("not even once a ttl"), "{c:#?}");
    // A drop-in that resets the schedule to one that keeps up.
    let c = verdict(
        "OnUnitActiveSec=2min\n\n# /home/u/.config/systemd/user/presence-refresh.timer.d/\
         override.conf\n[Timer]\nOnUnitActiveSec=\nOnUnitActiveSec=20s",
    );
    assert_eq!(c.status, "ok", "{c:#?}");
    // A schedule doctor does not read is not judged.
    let c = verdict("OnCalendar=*:*:0/30");
    assert_eq!(c.status, "ok", "{c:#?}");
    // systemd may start a timer up to AccuracySec= late each time (a
    // minute unless set): 30 s then is up to 90 s, the whole ttl.
    let c = verdict_with(
        "OnUnitActiveSec=30s",
        "\n# /home/u/.config/systemd/user/presence-refresh.timer.d/override.conf\n\
         [Timer]\nAccuracySec=1min\n",
    );
    assert_eq!(c.status, "warn", "{c:#?}");
    assert!(
        c.message.contains(
            "presence-refresh.timer refreshes every 30s (up to 1m late each time: its \
             AccuracySec=/RandomizedDelaySec=), not even once a ttl"
        ),
        "{c:#?}"
    );
    assert!(
        c.fix
            .as_deref()
            .unwrap_or_default()
            .contains("AccuracySec="),
        "{c:#?}"
    );
}

#[test]
fn a_session_under_presence_run_needs_no_refresher() {
    let w = World::new();
    let a = w.device("a");
    // Its output goes nowhere: should the test fail, a command outliving
    // its killed wrapper holds no pipe of the test run's.
    let mut run = KillOnDrop(
        a.cmd()
            .args(["run", "--session", "wrapped", "--"])
            .arg(require_tool("sleep"))
            .arg("600")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    wait_until("the wrapped session listed", PATIENCE, || {
        sessions(&a.list(&[])).contains(&"wrapped".to_string())
    });
    let c = doctor(&a, 0);
    let c = refresher(&c);
    assert_eq!(c.status, "ok", "{c:#?}");
    assert!(run.0.try_wait().unwrap().is_none(), "run ended early");
    // The wrapper passes SIGTERM on to its command and ends with it.
    assert!(kill("-TERM", &[&run.0.id().to_string()]));
    assert_eq!(run.0.wait().unwrap().code(), Some(128 + 15));
}

#[test]
fn doctor_follows_stignore_includes() {
    let w = World::new();
    let a = w.device("a");
    a.publish("s1", &[]);
    let dir = w.shared();
    std::fs::create_dir(dir.join(".stfolder")).unwrap();
    std::fs::create_dir(dir.join("conf")).unwrap();
    let stignore = |text: &str| std::fs::write(dir.join(".stignore"), text).unwrap();
    let conf = |name: &str, text: &str| std::fs::write(dir.join("conf").join(name), text).unwrap();
    let verdict = |code: i32| {
        let checks = doctor(&a, code);
        let found = named(&checks, "stignore");
        assert_eq!(found.len(), 1, "{checks:#?}");
        found[0].clone()
    };

    // The ignore line in an included file, itself included from one.
    stignore("// shared patterns\n#include conf/all.txt\n");
    conf("all.txt", "#include presence.txt\n");
    conf("presence.txt", "(?d).*.tmp\n");
    let c = verdict(0);
    assert_eq!(c.status, "ok", "{c:#?}");
    assert!(c.message.contains("the 2 file(s) it includes"), "{c:#?}");

    // Without it, a warning.
    conf("presence.txt", "*.bak\n");
    assert_eq!(verdict(0).status, "warn");

    // A `!` line that matches first keeps the temp files in the sync.
    conf("presence.txt", "!.*.tmp\n(?d).*.tmp\n");
    assert_eq!(verdict(0).status, "warn");

    // A pattern that matches the records: they never sync.
    conf("presence.txt", "*.json\n(?d).*.tmp\n");
    let c = verdict(1);
    assert_eq!(c.status, "fail", "{c:#?}");
    assert!(c.message.contains("records themselves"), "{c:#?}");

    // A missing include, and a loop: Syncthing stops syncing the folder.
    conf("presence.txt", "#include gone.txt\n");
    let c = verdict(1);
    assert!(c.message.contains("does not exist"), "{c:#?}");
    conf("presence.txt", "#include ../.stignore\n");
    let c = verdict(1);
    assert!(c.message.contains("more than once"), "{c:#?}");
    assert!(c.fix.is_some(), "{c:#?}");

    // A FIFO and a huge file planted as includes neither hang nor count.
    mkfifo(&dir.join("conf/fifo"));
    conf("presence.txt", "#include fifo\n");
    assert_eq!(verdict(0).status, "warn");
    let huge = dir.join("conf/huge.txt");
    let f = std::fs::File::create(&huge).unwrap();
    f.set_len(1 << 30).unwrap();
    conf("presence.txt", "#include huge.txt\n");
    assert_eq!(verdict(0).status, "warn");
}

#[test]
fn stignore_patterns_are_read_from_the_folder_root() {
    let w = World::new();
    let a = w.device("a");
    a.publish("s1", &[]);
    // The Syncthing folder is the world's root; the records live in shared/.
    let root = w.tmp.path();
    std::fs::create_dir(root.join(".stfolder")).unwrap();
    let status = |text: &str| {
        std::fs::write(root.join(".stignore"), text).unwrap();
        let checks = doctor(&a, 0);
        named(&checks, "stignore")[0].status.clone()
    };
    assert_eq!(status("/.*.tmp\n"), "warn");
    assert_eq!(status("/shared/.*.tmp\n"), "ok");
    assert_eq!(status("(?d).*.tmp\n"), "ok");
}

#[test]
fn a_configured_directory_no_sync_engine_shares_is_a_warning() {
    let w = World::new();
    let a = w.device("a");
    a.publish("s1", &[]);
    let checks = doctor(&a, 0);
    let c = named(&checks, "sync-engine")[0];
    assert_eq!(c.status, "warn", "{c:#?}");
    assert!(c.message.contains("no sync engine shares"), "{c:#?}");
    for c in &checks {
        assert_docs_travel(&c.check, c.fix.as_deref().unwrap_or_default());
    }
    assert!(
        c.fix
            .as_deref()
            .unwrap_or_default()
            .contains("docs/syncthing.md"),
        "{c:#?}"
    );
    // Each engine's mark makes it shared.
    for mark in [".stfolder", ".dropbox"] {
        let path = w.shared().join(mark);
        std::fs::create_dir(&path).unwrap();
        let checks = doctor(&a, 0);
        let c = named(&checks, "sync-engine")[0];
        assert_eq!(c.status, "ok", "{mark}: {c:#?}");
        std::fs::remove_dir(&path).unwrap();
    }
    std::fs::write(w.shared().join(".sync_0123abcd.db"), "").unwrap();
    let checks = doctor(&a, 0);
    let c = named(&checks, "sync-engine")[0];
    assert!(c.message.contains("Nextcloud"), "{c:#?}");
    // The built-in directory is this device's alone by design: no warning.
    let b = w.bare_device("b");
    b.publish("s2", &[]);
    let checks = doctor(&b, 0);
    assert_eq!(named(&checks, "sync-engine")[0].status, "ok");
}
