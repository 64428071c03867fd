//! The scan cache (PRESENCE_SCAN_CACHE=on forces it on small directories):
//! a listing judged from the cache is the listing read from the files, and
//! a file changed after it was cached is read again.

use std::time::Duration;

use serde_json::{Value, json};

use crate::harness::*;

/// `list --json` rows as JSON values without the fields that move with the
/// clock, and the `-v` report of skipped files.
fn listing(dev: &Device, cache: &str, extra: &[&str]) -> (Vec<Value>, String) {
    let mut args = vec!["-v", "list", "--json"];
    args.extend_from_slice(extra);
    let out = dev
        .cmd()
        .env("PRESENCE_SCAN_CACHE", cache)
        .args(&args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut rows: Vec<Value> = parse_json(&String::from_utf8_lossy(&out.stdout), "list");
    for r in &mut rows {
        let o = r.as_object_mut().unwrap();
        for k in ["age_s", "claimed_age_s", "expires_in_s"] {
            o.remove(k);
        }
    }
    let mut skipped: Vec<String> = String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| l.contains("skipped"))
        .map(str::to_owned)
        .collect();
    skipped.sort();
    (rows, skipped.join("\n"))
}

fn record(session: &str, t: f64, extra: Value) -> Value {
    let mut r = json!({
        "version": 1, "session_id": session, "instance_id": "peer-1",
        "device_id": "0123456789abcdef0123456789abcdef", "host": "peer",
        "profile": "default", "client": "terminal", "status": "working",
        "title": format!("title of {session}"), "started_at": t - 100.0,
        "updated_at": t, "expires_at": t + 3600.0, "seq": 1,
    });
    for (k, v) in extra.as_object().unwrap() {
        r[k] = v.clone();
    }
    r
}

/// A directory of every kind of file a listing meets, old enough to be cached.
fn mixed(w: &World) -> Device {
    let a = w.device("a");
    a.publish("own", &["--title", "mine"]);
    let dir = w.shared();
    let t = now();
    for i in 0..12 {
        let s = format!("s{i}");
        let extra = match i % 4 {
            0 => json!({}),
            1 => json!({"expires_at": t - 10.0, "updated_at": t - 100.0}),
            2 => json!({"ended_at": t - 5.0}),
            _ => json!({"endpoint": "ssh://peer/shared"}),
        };
        write_record(&dir, &format!("peer-1.{s}.json"), &record(&s, t, extra));
    }
    // A conflict copy, an older successor, a tombstone of a life elsewhere.
    write_record(
        &dir,
        "peer-1.s0.sync-conflict-20261201-101010-ABCDEFG.json",
        &record("s0", t - 1.0, json!({"title": "older copy"})),
    );
    write_record(
        &dir,
        "peer-1.s3b.json",
        &record("s3b", t - 50.0, json!({"endpoint": "ssh://peer/shared"})),
    );
    write_record(
        &dir,
        "peer-1.s4-moved.json",
        &record(
            "s4",
            t,
            json!({"endpoint": "ssh://elsewhere/x", "ended_at": t - 1.0}),
        ),
    );
    std::fs::write(dir.join("broken.json"), "{\"session_id\": ").unwrap();
    std::fs::write(dir.join("noid.json"), "{\"title\": \"no id\"}").unwrap();
    a
}

#[test]
fn a_listing_judged_from_the_cache_equals_one_read_from_the_files() {
    let w = World::new();
    let a = mixed(&w);
    // Files that changed in the last 2 s are never cached.
    std::thread::sleep(Duration::from_millis(2300));
    // A first read sees the writer's clock (which dates its expired copies
    // back); every listing compared below judges with what it learned.
    let _ = listing(&a, "off", &[]);
    let want = listing(&a, "off", &[]);
    // The copies dated more than their ttl back (s1, s5, s9) are stale
    // once the writer's clock has been seen.
    assert!(want.0.len() >= 4, "{:?}", want.0);
    assert!(want.1.contains("broken.json") && want.1.contains("noid.json"));
    let cache_dir = a.root.join("home/.local/state/presence/scan-cache");
    assert!(!cache_dir.exists(), "off writes no cache");
    // The first run writes the cache, the second is judged from it.
    assert_eq!(listing(&a, "on", &[]), want);
    let caches: Vec<_> = std::fs::read_dir(&cache_dir).unwrap().collect();
    assert_eq!(caches.len(), 1);
    assert_eq!(listing(&a, "on", &[]), want);
    for extra in [&["--include-expired"][..], &["--all-profiles"]] {
        assert_eq!(listing(&a, "on", extra), listing(&a, "off", extra));
    }
    // `show` reads the cache too, and finds what it finds without it.
    for id in ["s0", "s1", "s2", "s3", "s4", "own", "nosuch"] {
        let show = |cache: &str| {
            let out = a
                .cmd()
                .env("PRESENCE_SCAN_CACHE", cache)
                .args(["show", "--json", id])
                .output()
                .unwrap();
            let mut v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
            if let Some(o) = v.as_object_mut() {
                for k in ["age_s", "claimed_age_s", "expires_in_s"] {
                    o.remove(k);
                }
            }
            (
                out.status.code(),
                v,
                String::from_utf8_lossy(&out.stderr).into_owned(),
            )
        };
        assert_eq!(show("on"), show("off"), "show {id}");
    }
    // A cache that is garbage is ignored (and rewritten).
    let path = caches[0].as_ref().unwrap().path();
    std::fs::write(&path, b"PRSCAN\0\x01garbage").unwrap();
    assert_eq!(listing(&a, "on", &[]), want);
    assert!(std::fs::metadata(&path).unwrap().len() > 100);
}

#[test]
fn a_file_changed_after_it_was_cached_is_read_again() {
    let w = World::new();
    let a = mixed(&w);
    let dir = w.shared();
    std::thread::sleep(Duration::from_millis(2300));
    // A first read sees the writer's clock; see above.
    let _ = listing(&a, "off", &[]);
    let before = listing(&a, "on", &[]);
    assert_eq!(listing(&a, "on", &[]), before);
    let t = now();
    // The same size, another title: only the ctime tells.
    let s0 = std::fs::read_to_string(dir.join("peer-1.s0.json")).unwrap();
    std::fs::write(
        dir.join("peer-1.s0.json"),
        s0.replace("title of s0", "TITLE OF S0"),
    )
    .unwrap();
    // An expired session made live again in a file of the same size.
    let s1 = std::fs::read_to_string(dir.join("peer-1.s1.json")).unwrap();
    let v: Value = serde_json::from_str(&s1).unwrap();
    let old = v["expires_at"].as_f64().unwrap();
    let (int, frac) = (
        old.trunc() as u64,
        format!("{old}").split('.').nth(1).unwrap_or("").to_owned(),
    );
    let was = if frac.is_empty() {
        int.to_string()
    } else {
        format!("{int}.{frac}")
    };
    let now_ = if frac.is_empty() {
        (int + 3610).to_string()
    } else {
        format!("{}.{frac}", int + 3610)
    };
    assert_eq!(was.len(), now_.len());
    assert!(s1.contains(&was), "{s1} {was}");
    std::fs::write(dir.join("peer-1.s1.json"), s1.replace(&was, &now_)).unwrap();
    // A live session ended; another removed; a new one.
    write_record(
        &dir,
        "peer-1.s8.json",
        &record("s8", t, json!({"ended_at": t})),
    );
    std::fs::remove_file(dir.join("peer-1.s11.json")).unwrap();
    write_record(&dir, "peer-1.new.json", &record("new", t, json!({})));
    // Arrivals 2 s apart teach the writer's clock: a first listing learns
    // it, so that the two compared below judge alike.
    let _ = listing(&a, "off", &[]);
    let after = listing(&a, "on", &[]);
    assert_eq!(after, listing(&a, "off", &[]));
    let titles: Vec<&str> = after.0.iter().filter_map(|r| r["title"].as_str()).collect();
    assert!(titles.contains(&"TITLE OF S0"), "{titles:?}");
    let ids: Vec<&str> = after
        .0
        .iter()
        .filter_map(|r| r["session_id"].as_str())
        .collect();
    assert!(
        ids.contains(&"new") && !ids.contains(&"s8") && !ids.contains(&"s11"),
        "{ids:?}"
    );
    // And once they have settled, from the cache again.
    std::thread::sleep(Duration::from_millis(2300));
    let _ = listing(&a, "on", &[]);
    assert_eq!(listing(&a, "on", &[]), listing(&a, "off", &[]));
}

/// `doctor`'s `secrets` check, and its `records`-wide counts, with the
/// cache on or off: which files it names.
fn secrets_named(dev: &Device, cache: &str) -> Vec<String> {
    let out = dev
        .cmd()
        .env("PRESENCE_SCAN_CACHE", cache)
        .args(["doctor", "--json"])
        .output()
        .unwrap();
    let checks: Vec<JsonCheck> = parse_json(&String::from_utf8_lossy(&out.stdout), "doctor");
    let mut files: Vec<String> = checks
        .into_iter()
        .filter(|c| c.check == "secrets")
        .flat_map(|c| c.files)
        .collect();
    files.sort();
    files
}

#[test]
fn doctor_remembers_which_records_carry_credentials_in_each_version() {
    let w = World::new();
    let a = mixed(&w);
    let dir = w.shared();
    let t = now();
    let leaky = json!({"endpoint": "https://u:hunter2@h/x"});
    write_record(&dir, "peer-1.k1.json", &record("k1", t, leaky.clone()));
    write_record(&dir, "peer-1.k2.json", &record("k2", t, leaky));
    std::thread::sleep(Duration::from_millis(2300));
    let want = vec!["peer-1.k1.json".to_string(), "peer-1.k2.json".to_string()];
    assert_eq!(secrets_named(&a, "off"), want);
    // The first run with the cache redacts every record and keeps what it
    // found with each file's facts; the next finds the same in the cache.
    assert_eq!(secrets_named(&a, "on"), want);
    let cache_dir = a.root.join("home/.local/state/presence/scan-cache");
    assert_eq!(std::fs::read_dir(&cache_dir).unwrap().count(), 1);
    assert_eq!(secrets_named(&a, "on"), want);
    // A listing that rewrites the cache keeps what doctor found.
    let _ = listing(&a, "on", &[]);
    assert_eq!(secrets_named(&a, "on"), want);
    // A file rewritten without the credential is another version: read again.
    write_record(&dir, "peer-1.k1.json", &record("k1", t, json!({})));
    assert_eq!(secrets_named(&a, "on"), want[1..]);
    std::thread::sleep(Duration::from_millis(2300));
    assert_eq!(secrets_named(&a, "on"), want[1..]);
    assert_eq!(secrets_named(&a, "off"), want[1..]);
}

#[test]
fn a_device_that_ended_a_life_reads_its_cache() {
    let w = World::new();
    let a = mixed(&w);
    // The ledger now holds a life this device ended, which every read pass
    // digests: with the cache's own key, or the cache is of no use.
    a.publish("gone", &[]);
    a.run(&["clear", "--session", "gone"]).success();
    std::thread::sleep(Duration::from_millis(2300));
    // A first read learns the writer's clock (see the test above).
    let _ = listing(&a, "off", &[]);
    let want = listing(&a, "off", &[]);
    assert_eq!(listing(&a, "on", &[]), want);
    let cache_dir = a.root.join("home/.local/state/presence/scan-cache");
    let cache = std::fs::read_dir(&cache_dir)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let written = std::fs::read(&cache).unwrap();
    // Nothing changed: the next listing is judged from the cache and has
    // no reason to write it again (one that could not use it would, with
    // a new key).
    assert_eq!(listing(&a, "on", &[]), want);
    assert_eq!(std::fs::read(&cache).unwrap(), written);
}

#[test]
fn watch_starts_from_the_cache_with_the_set_list_shows() {
    let w = World::new();
    let a = mixed(&w);
    // A directory large enough for the cache (1 000 files), most not live.
    let dir = w.shared();
    let t = now();
    for i in 0..1000 {
        let s = format!("b{i}");
        let extra = match i % 5 {
            0 => json!({}),
            1 | 2 => json!({"expires_at": t - 10.0, "updated_at": t - 100.0}),
            3 => json!({"ended_at": t - 5.0}),
            _ => json!({"endpoint": format!("ssh://peer/b{}", i % 50)}),
        };
        write_record(&dir, &format!("peer-1.{s}.json"), &record(&s, t, extra));
    }
    std::thread::sleep(Duration::from_millis(2300));
    let _ = listing(&a, "off", &[]);
    // The default at this size: the first listing writes the cache.
    let (rows, _) = listing(&a, "auto", &[]);
    let cache_dir = a.root.join("home/.local/state/presence/scan-cache");
    assert!(
        cache_dir.exists(),
        "a listing of 1 000 files writes a cache"
    );
    let mut want: Vec<String> = rows
        .iter()
        .map(|r| r["session_id"].as_str().unwrap().to_string())
        .collect();
    want.sort();
    assert!(want.len() > 200, "{}", want.len());
    let s = Stream::start(&a, &["watch", "--json"]);
    let mut up = Vec::new();
    let ready = loop {
        let e = s.json();
        if e.event == "ready" {
            break e;
        }
        up.push(e.session().unwrap().to_string());
    };
    s.stop();
    up.sort();
    assert_eq!(up, want);
    assert_eq!(ready.count, Some(want.len()));
}
