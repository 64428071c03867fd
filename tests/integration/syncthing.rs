//! Cross-device truth over real Syncthing daemons on loopback.
//!
//! Each test starts its own pair — A and B, each a `syncthing serve` with its
//! own home, sharing one folder that is also the presence directory of a
//! simulated presence device — or a line of three (A – B – C, where B relays
//! between A and C), runs one scenario and stops the daemons, also when
//! the test fails. Only 127.0.0.1 is used: discovery, relays, NAT traversal,
//! usage reporting and upgrades are off, and peers dial static addresses.
//! Daemons run under `timeout`, in their own process group, so they stop by
//! themselves even if this process dies; they are stopped by that group,
//! never by name. The tests take a lock so that only one pair runs at a time.
//!
//! Learned the hard way (see also docs/syncthing.md): a folder written to
//! config.xml by hand gets Go zero values, so `maxConflicts` must be spelled
//! out or conflict copies are silently dropped; `STHASHING=minio` skips a
//! startup benchmark; files arrive as `.syncthing.NAME.tmp` plus a rename, and
//! the receiver's ctime is its own arrival time; a changed file is replaced
//! on the receiver by removing the old one and then renaming the temp file,
//! so its name is briefly absent there; and a file changed more often than
//! `fsWatcherDelayS` is picked up by the sender's watcher only every six
//! delays (6 s here), so a test that needs every version to travel asks for
//! a scan after each.
//!
//! Nothing here depends on how fast the machine is: every wait is for a
//! condition, with [`PATIENCE`]; a record that must stay live across devices
//! gets a ttl ten times what a file took to travel between the daemons (at
//! least 30 s, see [`ttl_beside`]); and where a test is about a record's end,
//! the reader reads with its clock moved past the ttl instead of waiting.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::harness::*;

static ONE_PAIR_AT_A_TIME: Mutex<()> = Mutex::new(());

const FOLDER: &str = "presence-e2e";
/// Upper bound of each daemon's life, whatever happens to the test: well
/// past what a test may take on a slow machine, where each of its waits may
/// last up to [`PATIENCE`].
const DAEMON_TTL_S: u32 = 900;

/// A port free now, never one handed out before in this process: the
/// kernel may give a port just released again, and two daemons (or one
/// daemon's GUI and listener) given the same one would not start.
fn free_port() -> u16 {
    static GIVEN: std::sync::Mutex<Vec<u16>> = std::sync::Mutex::new(Vec::new());
    let mut given = GIVEN.lock().unwrap_or_else(|e| e.into_inner());
    loop {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        if !given.contains(&port) {
            given.push(port);
            return port;
        }
    }
}

fn report(what: &str, d: Duration) {
    println!("syncthing e2e: {what}: {:.2} s", d.as_secs_f64());
}

struct Node {
    name: &'static str,
    home: PathBuf,
    folder: PathBuf,
    id: String,
    apikey: String,
    gui: u16,
    listen: u16,
    daemon: Option<Child>,
}

impl Node {
    fn generate(root: &Path, name: &'static str) -> Node {
        let home = root.join(format!("st-home-{name}"));
        let folder = root.join(format!("st-folder-{name}"));
        std::fs::create_dir_all(&folder).unwrap();
        let out = Command::new(require_tool("syncthing"))
            .args([
                "generate",
                &format!("--home={}", home.display()),
                "--no-default-folder",
                "--skip-port-probing",
            ])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "syncthing generate: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        let id = text
            .lines()
            .find_map(|l| l.split("Device ID: ").nth(1))
            .expect("device id in the output of syncthing generate")
            .trim()
            .to_string();
        let config = std::fs::read_to_string(home.join("config.xml")).unwrap();
        let apikey = config
            .split("<apikey>")
            .nth(1)
            .unwrap()
            .split('<')
            .next()
            .unwrap()
            .to_string();
        // Our recommendation for presence folders: never sync temp files.
        std::fs::write(folder.join(".stignore"), "(?d).*.tmp\n").unwrap();
        Node {
            name,
            home,
            folder,
            id,
            apikey,
            gui: free_port(),
            listen: free_port(),
            daemon: None,
        }
    }

    /// Writes a config that shares the folder with `peers` only, each dialled
    /// at its static loopback address.
    fn write_config(&self, peers: &[&Node], version: &str) {
        let folder_devices: String = peers
            .iter()
            .map(|p| {
                format!(
                    "\n        <device id=\"{}\" introducedBy=\"\"></device>",
                    p.id
                )
            })
            .collect();
        let devices: String = peers
            .iter()
            .map(|p| {
                format!(
                    "\n    <device id=\"{}\" name=\"{}\" compression=\"metadata\" introducer=\"false\"><address>tcp://127.0.0.1:{}</address></device>",
                    p.id, p.name, p.listen
                )
            })
            .collect();
        let config = format!(
            r#"<configuration version="{version}">
    <folder id="{FOLDER}" label="{FOLDER}" path="{folder}" type="sendreceive" rescanIntervalS="10" fsWatcherEnabled="true" fsWatcherDelayS="1" ignorePerms="true" autoNormalize="true">
        <filesystemType>basic</filesystemType>
        <device id="{me}" introducedBy=""></device>{folder_devices}
        <minDiskFree unit="%">1</minDiskFree>
        <versioning><cleanupIntervalS>3600</cleanupIntervalS><fsPath></fsPath><fsType>basic</fsType></versioning>
        <copiers>0</copiers><pullerMaxPendingKiB>0</pullerMaxPendingKiB><hashers>0</hashers><order>random</order>
        <ignoreDelete>false</ignoreDelete><scanProgressIntervalS>0</scanProgressIntervalS><pullerPauseS>0</pullerPauseS>
        <maxConflicts>10</maxConflicts><disableSparseFiles>false</disableSparseFiles><disableTempIndexes>false</disableTempIndexes>
        <paused>false</paused><weakHashThresholdPct>25</weakHashThresholdPct><markerName>.stfolder</markerName>
        <copyOwnershipFromParent>false</copyOwnershipFromParent><modTimeWindowS>0</modTimeWindowS>
        <maxConcurrentWrites>2</maxConcurrentWrites><disableFsync>false</disableFsync><blockPullOrder>standard</blockPullOrder>
        <copyRangeMethod>standard</copyRangeMethod><caseSensitiveFS>false</caseSensitiveFS><junctionsAsDirs>false</junctionsAsDirs>
    </folder>
    <device id="{me}" name="{name}" compression="metadata" introducer="false"><address>dynamic</address></device>{devices}
    <gui enabled="true" tls="false" debugging="false"><address>127.0.0.1:{gui}</address><apikey>{apikey}</apikey><theme>default</theme></gui>
    <options>
        <listenAddress>tcp://127.0.0.1:{listen}</listenAddress>
        <globalAnnounceEnabled>false</globalAnnounceEnabled><localAnnounceEnabled>false</localAnnounceEnabled>
        <announceLANAddresses>false</announceLANAddresses><relaysEnabled>false</relaysEnabled><natEnabled>false</natEnabled>
        <urAccepted>-1</urAccepted><urSeen>3</urSeen><crashReportingEnabled>false</crashReportingEnabled>
        <autoUpgradeIntervalH>0</autoUpgradeIntervalH><startBrowser>false</startBrowser>
        <reconnectionIntervalS>1</reconnectionIntervalS><setLowPriority>false</setLowPriority>
    </options>
</configuration>
"#,
            folder = self.folder.display(),
            me = self.id,
            name = self.name,
            gui = self.gui,
            apikey = self.apikey,
            listen = self.listen,
        );
        std::fs::write(self.home.join("config.xml"), config).unwrap();
    }

    fn start(&mut self) {
        assert!(self.daemon.is_none());
        let log = std::fs::File::options()
            .create(true)
            .append(true)
            .open(self.home.join("daemon.log"))
            .unwrap();
        let child = Command::new(require_tool("timeout"))
            .args(["--kill-after=10", &DAEMON_TTL_S.to_string()])
            .arg(require_tool("syncthing"))
            .arg("serve")
            .arg(format!("--home={}", self.home.display()))
            .args([
                "--no-browser",
                "--no-restart",
                "--no-upgrade",
                "--no-default-folder",
            ])
            .env("STNODEFAULTFOLDER", "1")
            .env("STNOUPGRADE", "1")
            .env("STNORESTART", "1")
            .env("STHASHING", "minio")
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .process_group(0)
            .spawn()
            .unwrap();
        self.daemon = Some(child);
        let name = self.name;
        wait_until(&format!("the REST API of {name}"), PATIENCE, || {
            self.api("GET", "/rest/system/ping")
                .is_some_and(|v| v["ping"] == "pong")
        });
    }

    fn stop(&mut self) {
        let Some(mut child) = self.daemon.take() else {
            return;
        };
        // The daemon and its monitor are in the group led by `timeout`.
        let group = format!("-{}", child.id());
        let signal = |sig: &str| kill(sig, &["--", &group]);
        signal("-TERM");
        let deadline = Instant::now() + Duration::from_secs(10);
        while child.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        signal("-KILL");
        let _ = child.wait();
    }

    /// A REST call on loopback; HTTP/1.0 so the reply is never chunked.
    fn api(&self, method: &str, path: &str) -> Option<Value> {
        let addr = ([127, 0, 0, 1], self.gui).into();
        let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(2)).ok()?;
        // A scan answers when it is done, which a busy machine may delay.
        s.set_read_timeout(Some(PATIENCE)).ok()?;
        write!(
            s,
            "{method} {path} HTTP/1.0\r\nHost: 127.0.0.1\r\nX-API-Key: {}\r\nContent-Length: 0\r\n\r\n",
            self.apikey
        )
        .ok()?;
        let mut buf = Vec::new();
        s.read_to_end(&mut buf).ok()?;
        let text = String::from_utf8_lossy(&buf);
        let (head, body) = text.split_once("\r\n\r\n")?;
        if !head.starts_with("HTTP/1.0 200") && !head.starts_with("HTTP/1.1 200") {
            return None;
        }
        Some(serde_json::from_str(body).unwrap_or(Value::Null))
    }

    fn post(&self, path: &str) {
        assert!(
            self.api("POST", path).is_some(),
            "POST {path} on {} failed",
            self.name
        );
    }

    fn connected_to(&self, peer: &Node) -> bool {
        self.api("GET", "/rest/system/connections")
            .is_some_and(|v| v["connections"][&peer.id]["connected"] == true)
    }

    fn synced_with(&self, peer: &Node) -> bool {
        let status = self.api("GET", &format!("/rest/db/status?folder={FOLDER}"));
        let completion = self.api(
            "GET",
            &format!("/rest/db/completion?folder={FOLDER}&device={}", peer.id),
        );
        status.is_some_and(|s| s["state"] == "idle" && s["needTotalItems"] == 0)
            && completion.is_some_and(|c| c["completion"] == 100)
    }

    /// The config version `syncthing generate` wrote, which ours must carry.
    fn config_version(&self) -> String {
        std::fs::read_to_string(self.home.join("config.xml"))
            .unwrap()
            .split("<configuration version=\"")
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap()
            .to_string()
    }

    /// A synchronous scan: afterwards the daemon knows every local change.
    fn scan(&self) {
        self.post(&format!("/rest/db/scan?folder={FOLDER}"));
    }
}

struct Pair {
    a: Node,
    b: Node,
    /// presence devices whose profile dir is A's and B's folder.
    pa: Device,
    pb: Device,
}

impl Pair {
    /// Generates, configures and starts A and B, and waits until they are
    /// connected and in sync. `extra` is appended to both presence profiles.
    fn up(w: &World, extra: &str) -> Pair {
        let mut a = Node::generate(w.tmp.path(), "A");
        let mut b = Node::generate(w.tmp.path(), "B");
        let version = a.config_version();
        a.write_config(&[&b], &version);
        b.write_config(&[&a], &version);
        let pa = w.bare_device("presence-a");
        let pb = w.bare_device("presence-b");
        for (dev, node) in [(&pa, &a), (&pb, &b)] {
            dev.write_config(&format!(
                "[profiles.default]\ndir = {:?}\n{extra}",
                node.folder.display().to_string()
            ));
        }
        // Start B before A, and A dials B: no reconnection backoff.
        b.start();
        a.start();
        let mut pair = Pair { a, b, pa, pb };
        pair.wait_synced();
        pair
    }

    fn wait_synced(&mut self) {
        let (a, b) = (&self.a, &self.b);
        wait_until("A and B to connect", PATIENCE, || {
            a.connected_to(b) && b.connected_to(a)
        });
        wait_until("A and B to be in sync", PATIENCE, || {
            a.synced_with(b) && b.synced_with(a)
        });
    }

    /// A ttl for the records of a test on this pair: see [`ttl_beside`].
    fn ttl(&self) -> f64 {
        ttl_beside(delivery(&self.a, &self.b).max(delivery(&self.b, &self.a)))
    }
}

impl Drop for Pair {
    fn drop(&mut self) {
        self.a.stop();
        self.b.stop();
    }
}

/// Three daemons in a line, A – B – C: A and C never meet, so everything
/// between them is relayed by B.
struct Line {
    a: Node,
    b: Node,
    c: Node,
    pa: Device,
    pc: Device,
}

impl Line {
    fn up(w: &World) -> Line {
        let mut a = Node::generate(w.tmp.path(), "A");
        let mut b = Node::generate(w.tmp.path(), "B");
        let mut c = Node::generate(w.tmp.path(), "C");
        let version = a.config_version();
        a.write_config(&[&b], &version);
        b.write_config(&[&a, &c], &version);
        c.write_config(&[&b], &version);
        let pa = w.bare_device("presence-a");
        let pc = w.bare_device("presence-c");
        for (dev, node) in [(&pa, &a), (&pc, &c)] {
            dev.write_config(&format!(
                "[profiles.default]\ndir = {:?}\n",
                node.folder.display().to_string()
            ));
        }
        b.start();
        a.start();
        c.start();
        let mut line = Line { a, b, c, pa, pc };
        line.wait_synced();
        line
    }

    fn wait_synced(&mut self) {
        let (a, b, c) = (&self.a, &self.b, &self.c);
        wait_until("A–B and B–C to connect", PATIENCE, || {
            a.connected_to(b) && b.connected_to(a) && b.connected_to(c) && c.connected_to(b)
        });
        wait_until("A, B and C to be in sync", PATIENCE, || {
            a.synced_with(b) && b.synced_with(c) && c.synced_with(b)
        });
    }

    /// A ttl for the records of a test on this line: see [`ttl_beside`].
    fn ttl(&self) -> f64 {
        ttl_beside(delivery(&self.a, &self.c).max(delivery(&self.c, &self.a)))
    }
}

impl Drop for Line {
    fn drop(&mut self) {
        self.a.stop();
        self.b.stop();
        self.c.stop();
    }
}

fn lock() -> std::sync::MutexGuard<'static, ()> {
    ONE_PAIR_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

fn listed(dev: &Device, session: &str) -> Option<JsonRow> {
    dev.list(&[]).into_iter().find(|r| r.session_id == session)
}

/// How long a file written in `from`'s folder took to reach `to`'s: a dot
/// file, which `presence` passes over.
fn delivery(from: &Node, to: &Node) -> Duration {
    let name = format!(".delivery-{}-{}", from.name, to.name);
    let text = format!("{}", now());
    std::fs::write(from.folder.join(&name), &text).unwrap();
    let took = wait_until(
        &format!("a file from {} to reach {}", from.name, to.name),
        PATIENCE,
        || std::fs::read_to_string(to.folder.join(&name)).is_ok_and(|t| t == text),
    );
    report(&format!("a file from {} to {}", from.name, to.name), took);
    took
}

/// A ttl (seconds) that delivery on this machine does not run out while the
/// writer is alive: ten times what a file just took to travel, and never
/// less than half a minute, for a machine that stalls for a while under
/// load. Where a test is about the end of a record, it reads with a clock
/// moved past the ttl rather than waiting it out
/// ([`crate::clocks::stale_one_ttl_after_arrival`]).
fn ttl_beside(delivery: Duration) -> f64 {
    let ttl = (delivery.as_secs_f64() * 10.0).ceil().max(30.0);
    println!("syncthing e2e: records get a ttl of {ttl} s");
    ttl
}

/// The record in the file at `path`, if there is one.
fn record_at(path: &Path) -> Option<Value> {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
}

/// The record's `seq`, if the file at `path` holds one.
fn seq_at(path: &Path) -> Option<u64> {
    record_at(path).and_then(|v| v["seq"].as_u64())
}

/// Sleeps until the Unix time `t`.
fn sleep_until(t: f64) {
    let left = t - now();
    if left > 0.0 {
        std::thread::sleep(Duration::from_secs_f64(left));
    }
}

/// The default `clock_margin`: a reader that knows a writer's clock reads its
/// record as live until `expires_at − offset + CLOCK_MARGIN_S` (its clock).
const CLOCK_MARGIN_S: f64 = 1.0;

#[test]
fn syncthing_publish_update_clear_and_expire_reach_the_other_device() {
    let _one = lock();
    let w = World::new();
    let p = Pair::up(&w, "");
    // 1. publish on A -> listed on B
    p.pa.publish("s1", &["--title", "first", "--status", "idle"]);
    let d = wait_until("s1 on B", PATIENCE, || listed(&p.pb, "s1").is_some());
    report("1 publish on A -> listed on B", d);
    let row = listed(&p.pb, "s1").unwrap();
    assert!(!row.local);
    assert_eq!(row.device_id, p.pa.device_id());

    // 2. update on A -> B shows the change
    p.pa.publish("s1", &["--title", "second", "--status", "working"]);
    let d = wait_until("the update on B", PATIENCE, || {
        listed(&p.pb, "s1").is_some_and(|r| r.title == "second" && r.status == "working")
    });
    report("2 update on A -> shown on B", d);

    // 3. clear on A -> B stops listing it (the tombstone write)
    p.pa.run(&["clear", "--session", "s1"]).success();
    let d = wait_until("s1 to leave B's listing", PATIENCE, || {
        listed(&p.pb, "s1").is_none()
    });
    report("3 clear on A -> gone from B's listing", d);
    let all = p.pb.list(&["--include-expired", "--session", "s1"]);
    assert_eq!(
        all[0].state, "ended",
        "B sees the tombstone, not a deletion"
    );
    // Later, expire on A deletes the tombstone (ten minutes on A's clock) and
    // the deletion reaches B.
    let file = all[0].file.clone();
    let out = run_ok(faked(p.pa.cmd(), "+11m").arg("expire"));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains(&file),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let d = wait_until("the deletion to reach B", PATIENCE, || {
        !p.b.folder.join(&file).exists()
    });
    report("3 expire on A -> file deleted on B", d);
}

#[test]
fn syncthing_a_killed_session_disappears_on_the_other_device_within_its_ttl() {
    let _one = lock();
    let w = World::new();
    let p = Pair::up(&w, "");
    let ttl = p.ttl();
    let pidfile = w.tmp.path().join("child.pid");
    let script = format!("echo $$ > {}; exec sleep 3600", pidfile.display());
    let mut wrapper = KillOnDrop(
        p.pa.cmd()
            .args(["run", "--session", "doomed", "--ttl", &format!("{ttl}s")])
            .args(["--", "sh", "-c", &script])
            .spawn()
            .unwrap(),
    );
    wait_until("doomed on B", PATIENCE, || {
        listed(&p.pb, "doomed").is_some()
    });
    // A refresh of the wrapper's reaches B (it refreshes every ttl / 3), then
    // wrapper and child are killed without a word.
    let file = record_file(&p.a.folder, "doomed");
    let on_b = p.b.folder.join(&file);
    wait_until("a refresh of doomed on B", PATIENCE, || {
        seq_at(&on_b).is_some_and(|seq| seq > 1)
    });
    let (child, _) = wait_for("the child's pid", PATIENCE, || {
        std::fs::read_to_string(&pidfile)
            .map_err(|e| e.to_string())
            .and_then(|t| t.trim().parse::<u32>().map_err(|e| format!("{e}: {t:?}")))
    });
    let killed = Instant::now();
    assert!(kill(
        "-KILL",
        &[&wrapper.0.id().to_string(), &child.to_string()]
    ));
    wrapper.0.wait().unwrap();
    // What A wrote last reaches B: no tombstone, the session's end is its ttl.
    let last = std::fs::read_to_string(p.a.folder.join(&file)).expect("A's record");
    wait_until("A's last copy on B", PATIENCE, || {
        std::fs::read_to_string(&on_b).is_ok_and(|t| t == last)
    });
    assert!(record_at(&on_b).unwrap()["ended_at"].is_null(), "{last}");
    report("4 kill -9 on A -> its last copy on B", killed.elapsed());
    crate::clocks::stale_one_ttl_after_arrival(&p.pb, &on_b, "doomed", ttl);
}

#[test]
fn syncthing_clock_skew_on_the_writer_does_not_fool_the_reader() {
    let _one = lock();
    let w = World::new();
    let p = Pair::up(&w, "");
    let ttl = p.ttl();
    // A's clock runs 10 minutes ahead; its session dies (no refresh).
    run_ok(faked(p.pa.cmd(), "+10m").args([
        "publish",
        "--session",
        "ahead",
        "--ttl",
        &format!("{ttl}s"),
    ]));
    let (row, d) = wait_for("ahead on B", PATIENCE, || {
        listed(&p.pb, "ahead").ok_or("not listed")
    });
    report("5 writer 10 min ahead -> listed on B", d);
    assert!(
        row.claimed_age_s.unwrap() < -500.0,
        "the writer's clock is ahead: {row:?}"
    );
    // B ends it one ttl after it arrived, not by the writer's expires_at.
    let ends_after = row.age_s + row.expires_in_s.unwrap();
    assert!(
        (ends_after - ttl).abs() < 0.01,
        "ends {ends_after} s after arrival, not {ttl}: {row:?}"
    );
    crate::clocks::stale_one_ttl_after_arrival(&p.pb, &p.b.folder.join(&row.file), "ahead", ttl);

    // B's clock runs 2 minutes behind, alive under `refresh --every`; A
    // reads. (Not A again: A's clock ran 10 min ahead a moment ago, and a
    // clock set back is followed only as its old samples leave the window —
    // see clock.rs — which is not what this part is about.)
    let owner = owner();
    run_ok(
        faked(p.pb.cmd(), "-2m")
            .args([
                "publish",
                "--session",
                "behind",
                "--ttl",
                &format!("{ttl}s"),
            ])
            .args(["--owner-pid", &owner.0.id().to_string()]),
    );
    let _refresher = KillOnDrop(
        faked(p.pb.cmd(), "-2m")
            .args(["--quiet", "refresh", "--every", "1s"])
            .spawn()
            .unwrap(),
    );
    wait_until("behind on A", PATIENCE, || {
        listed(&p.pa, "behind").is_some()
    });
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(12) {
        let row = listed(&p.pa, "behind");
        if row.is_none() {
            eprintln!("A: {:#?}", p.pa.list(&["--all", "--include-expired"]));
            eprintln!("B: {:#?}", p.pb.list(&["--all", "--include-expired"]));
        }
        assert!(
            row.is_some(),
            "dropped after {:?} although alive",
            start.elapsed()
        );
        assert!(row.unwrap().claimed_age_s.unwrap() > 100.0);
        std::thread::sleep(Duration::from_millis(250));
    }
    report(
        "5 writer 2 min behind, alive: listed on the other device throughout",
        start.elapsed(),
    );
}

#[test]
fn syncthing_stale_records_of_a_device_back_from_offline_never_show_live() {
    let _one = lock();
    let w = World::new();
    let (skew, gc_after, ttl): (f64, f64, f64) = (2.0, 3.0, 2.0);
    let mut p = Pair::up(
        &w,
        &format!("skew = \"{skew}s\"\ngc_after = \"{gc_after}s\"\n"),
    );
    p.pa.publish("gone", &["--ttl", &format!("{ttl}s")]);
    p.pa.publish("ended", &["--ttl", &format!("{ttl}s")]);
    let (gone, ended) = (
        record_file(&p.a.folder, "gone"),
        record_file(&p.a.folder, "ended"),
    );
    wait_until("both on B", PATIENCE, || {
        p.b.folder.join(&gone).exists() && p.b.folder.join(&ended).exists()
    });
    // B reads them, as a prompt would: a sample of A's clock each. Whatever
    // B makes of A's clock later, its estimate is at least the larger.
    p.pb.run(&["list"]).success();
    let sample = |name: &str| {
        let on_b = p.b.folder.join(name);
        record_at(&on_b).unwrap()["updated_at"].as_f64().unwrap() - crate::clocks::arrived(&on_b)
    };
    let offset_at_least = sample(&gone).max(sample(&ended));
    p.a.stop();
    // While A is offline: one of its sessions ends, another starts and dies
    // unsynced, and B collects A's dead records once dead for gc_after.
    p.pa.run(&["clear", "--session", "ended"]).success();
    p.pa.publish("late", &["--ttl", &format!("{ttl}s")]);
    let late = record_file(&p.a.folder, "late");
    let expired_on_b = |name: &str| {
        let out: JsonExpire = p.pb.json(&["expire", "--dry-run", "--json"]);
        out.removed.iter().any(|g| g.file == name)
    };
    wait_until("A's dead records due for collection on B", PATIENCE, || {
        expired_on_b(&gone) && expired_on_b(&ended)
    });
    let out: JsonExpire = p.pb.json(&["expire", "--json"]);
    let mut removed: Vec<&str> = out.removed.iter().map(|g| g.file.as_str()).collect();
    removed.sort();
    let mut want = [gone.as_str(), ended.as_str()];
    want.sort();
    assert_eq!(removed, want, "{out:?}");
    // A comes back once `late` is expired on B, however B reads A's clock:
    // past its expires_at plus the skew tolerance, or plus the margin less
    // the learned offset.
    let late_expires = record_at(&p.a.folder.join(&late)).unwrap()["expires_at"]
        .as_f64()
        .unwrap();
    sleep_until(late_expires + skew.max(CLOCK_MARGIN_S - offset_at_least) + 1.0);
    p.a.start();
    // From the reconnect until the folders have converged, and a while
    // after, nothing of A's ever shows live on B — not even `late`, which
    // arrives now with a fresh ctime but an expiry long past.
    let start = Instant::now();
    let mut converged = None;
    loop {
        let rows = p.pb.list(&[]);
        assert!(rows.is_empty(), "a stale record showed live on B: {rows:?}");
        if converged.is_none()
            && p.b.folder.join(&late).exists()
            && p.b.folder.join(&ended).exists()
            && !p.a.folder.join(&gone).exists()
        {
            converged = Some(start.elapsed());
        }
        if converged.is_some_and(|c| start.elapsed() > c + Duration::from_secs(2)) {
            break;
        }
        assert!(
            start.elapsed() < PATIENCE,
            "the folders to converge after A's return: not within {PATIENCE:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let converged = converged.unwrap();
    report(
        "6 device back from offline -> converged, nothing stale shown live",
        converged,
    );
    let all = p.pb.list(&["--all"]);
    let state = |session: &str| {
        all.iter()
            .find(|r| r.session_id == session)
            .map(|r| r.state.clone())
    };
    // Arrived, but never live: expired by its writer's clock on arrival,
    // stale by local age since.
    let late_state = state("late").expect("late arrived on B");
    assert!(
        late_state == "expired" || late_state == "stale",
        "{late_state}"
    );
    assert_eq!(state("ended").as_deref(), Some("ended"), "{all:?}");
    assert_eq!(state("gone"), None, "{all:?}");
}

#[test]
fn syncthing_a_conflict_between_two_devices_keeps_both_sessions() {
    let _one = lock();
    let w = World::new();
    let p = Pair::up(&w, "");
    // A ttl that outlasts the test however slowly it goes: it is about
    // which copy wins, not about the end.
    let publish = |dev: &Device, title: &str| {
        dev.publish(
            "shared",
            &["--instance", "gateway", "--title", title, "--ttl", "1h"],
        );
    };
    publish(&p.pa, "base");
    wait_until("shared on B", PATIENCE, || {
        listed(&p.pb, "shared").is_some()
    });
    wait_until("in sync", PATIENCE, || {
        p.a.synced_with(&p.b) && p.b.synced_with(&p.a)
    });
    p.a.post(&format!("/rest/system/pause?device={}", p.b.id));
    wait_until("A and B to disconnect", PATIENCE, || {
        !p.a.connected_to(&p.b) && !p.b.connected_to(&p.a)
    });
    publish(&p.pa, "from A");
    // At least this much later, whatever the machine: B's is the newer.
    std::thread::sleep(Duration::from_millis(200));
    publish(&p.pb, "from B (newer)");
    p.a.scan();
    p.b.scan();
    let resumed = Instant::now();
    p.a.post(&format!("/rest/system/resume?device={}", p.b.id));
    let has_copy = |n: &Node| {
        std::fs::read_dir(&n.folder).unwrap().any(|e| {
            e.unwrap()
                .file_name()
                .to_string_lossy()
                .contains(".sync-conflict-")
        })
    };
    wait_until("a conflict copy on both sides", PATIENCE, || {
        has_copy(&p.a) && has_copy(&p.b)
    });
    report("7 resume -> conflict copy on A and B", resumed.elapsed());
    // The two versions are two devices' records of the session: each speaks
    // only for itself, so neither hides the other (a conflict copy of one
    // device's own record collapses: `expire::tests::expire_table`).
    for dev in [&p.pa, &p.pb] {
        let rows = dev.list(&[]);
        let mut titles: Vec<&str> = rows.iter().map(|r| r.title.as_str()).collect();
        titles.sort();
        assert_eq!(titles, ["from A", "from B (newer)"], "{rows:?}");
        assert!(rows.iter().all(|r| r.verified), "{rows:?}");
        assert!(rows.iter().any(|r| r.conflict_copy), "{rows:?}");
    }
    // Both live: expire on either deletes neither.
    let out = p.pa.run(&["expire", "--dry-run"]).success();
    assert!(!out.stdout.contains("gateway.shared"), "{}", out.stdout);
    assert_eq!(p.pb.list(&[]).len(), 2);
}

#[test]
fn syncthing_watch_on_b_sees_a_publish_and_clear() {
    let _one = lock();
    let w = World::new();
    let p = Pair::up(&w, "");
    let mut watch = KillOnDrop(
        p.pb.cmd()
            .args(["watch", "--json"])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let out = watch.0.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(out).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let ready = JsonEvent::parse(&rx.recv_timeout(PATIENCE).unwrap());
    assert_eq!((ready.event.as_str(), ready.count), ("ready", Some(0)));
    let start = Instant::now();
    p.pa.publish("watched", &[]);
    let up = JsonEvent::parse(&rx.recv_timeout(PATIENCE).unwrap());
    assert_eq!((up.event.as_str(), up.session()), ("up", Some("watched")));
    report("8 publish on A -> up event on B", start.elapsed());
    let start = Instant::now();
    p.pa.run(&["clear", "--session", "watched"]).success();
    let down = JsonEvent::parse(&rx.recv_timeout(PATIENCE).unwrap());
    assert_eq!(down.event, "down");
    assert_eq!(down.reason.as_deref(), Some("cleared"));
    report("8 clear on A -> down (cleared) event on B", start.elapsed());
}

#[test]
fn syncthing_a_burst_of_200_sessions_all_arrive_and_listing_never_fails() {
    let _one = lock();
    let w = World::new();
    let p = Pair::up(&w, "");
    // B lists over and over, from before the first file arrives until it
    // lists all 200 itself: every arrival happens while B is listing.
    let (started, first_listing) = std::sync::mpsc::channel();
    let last_publish = std::sync::Arc::new(std::sync::OnceLock::<Instant>::new());
    let lister = {
        let pb = p.pb.clone();
        let last_publish = last_publish.clone();
        std::thread::spawn(move || {
            let mut counts = Vec::new();
            loop {
                let out = pb.cmd().args(["-v", "list", "--json"]).output().unwrap();
                assert!(
                    out.status.success(),
                    "{}",
                    String::from_utf8_lossy(&out.stderr)
                );
                let rows: Vec<JsonRow> =
                    parse_json(&String::from_utf8_lossy(&out.stdout), "list --json");
                let stderr = String::from_utf8_lossy(&out.stderr);
                assert!(
                    stderr
                        .lines()
                        .all(|l| !l.contains("skipped") || l.contains("temp file")),
                    "{stderr}"
                );
                counts.push(rows.len());
                if counts.len() == 1 {
                    started.send(()).unwrap();
                }
                if rows.len() == 200 {
                    return counts;
                }
                assert!(
                    last_publish.get().is_none_or(|t| t.elapsed() < PATIENCE),
                    "200 sessions on B: not within {PATIENCE:?} of the last publish; \
                     the last listing had {}",
                    rows.len()
                );
            }
        })
    };
    first_listing
        .recv_timeout(PATIENCE)
        .expect("a first listing on B");
    let start = Instant::now();
    // A ttl that outlasts the burst however slowly it is published.
    for i in 0..200 {
        p.pa.publish(&format!("burst-{i:03}"), &["--ttl", "1h"]);
    }
    last_publish.set(Instant::now()).unwrap();
    let published = start.elapsed();
    let counts = lister.join().expect("B's listings never failed");
    let arrived = start.elapsed();
    assert_eq!(counts[0], 0, "B listed before anything arrived");
    report("9 200 publishes on A (sequential processes)", published);
    report("9 first publish on A -> all 200 listed on B", arrived);
    let partial = counts.iter().filter(|&&n| 0 < n && n < 200).count();
    println!(
        "syncthing e2e: 9 listings on B while files arrived: {}, of a part of the burst: {partial}, failures: 0",
        counts.len()
    );
}

#[test]
fn syncthing_a_session_that_died_while_a_device_was_offline_never_flashes_back() {
    let _one = lock();
    let w = World::new();
    // The default skew tolerance (5 min): the rule alone would show the dead
    // session's late copy live for a full ttl on rejoin.
    let mut p = Pair::up(&w, "");
    let ttl = p.ttl();
    let owner = owner();
    p.pa.publish(
        "dies",
        &[
            "--ttl",
            &format!("{ttl}s"),
            "--owner-pid",
            &owner.0.id().to_string(),
        ],
    );
    let refresher = KillOnDrop(
        p.pa.cmd()
            .args(["--quiet", "refresh", "--every", "1s"])
            .spawn()
            .unwrap(),
    );
    // B sees it, and learns A's clock from its refreshes.
    wait_until("dies on B", PATIENCE, || listed(&p.pb, "dies").is_some());
    let (offset, _) = wait_for("A's clock learned on B", PATIENCE, || {
        listed(&p.pb, "dies")
            .and_then(|r| r.writer_offset_s)
            .ok_or("not yet")
    });
    // B goes offline; meanwhile the session refreshes at least once more,
    // then dies without a clear (its refresher is gone).
    let file = record_file(&p.a.folder, "dies");
    let (on_a, on_b) = (p.a.folder.join(&file), p.b.folder.join(&file));
    p.b.stop();
    let seen_by_b = seq_at(&on_b);
    wait_until("a refresh on A that B has not seen", PATIENCE, || {
        seq_at(&on_a) > seen_by_b
    });
    drop(refresher);
    let last = std::fs::read_to_string(&on_a).expect("A's record");
    // B rejoins once the last copy is expired by A's clock as B knows it.
    // (Its estimate only rises with what it learns later.)
    let expires = record_at(&on_a).unwrap()["expires_at"].as_f64().unwrap();
    sleep_until(expires - offset + CLOCK_MARGIN_S + 1.0);
    p.b.start();
    // The stale copy arrives with a fresh ctime and an expires_at inside the
    // tolerance; B knows A's clock, so it never shows it live.
    let start = Instant::now();
    let mut arrived = None;
    loop {
        let row = listed(&p.pb, "dies");
        assert!(row.is_none(), "the dead session flashed back on B: {row:?}");
        if arrived.is_none() && std::fs::read_to_string(&on_b).is_ok_and(|t| t == last) {
            arrived = Some(start.elapsed());
        }
        if arrived.is_some_and(|a| start.elapsed() > a + Duration::from_secs(5)) {
            break;
        }
        assert!(
            start.elapsed() < PATIENCE,
            "the last copy to reach B after it rejoined: not within {PATIENCE:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    report(
        "7 session died while B was offline -> its copy reached B, never shown live",
        arrived.unwrap(),
    );
    drop(owner);
}

/// The file of `session` in `dir` (the one record file whose name holds it).
fn record_file(dir: &Path, session: &str) -> String {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.contains(&format!(".{session}")) && n.ends_with(".json"))
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
    names.remove(0)
}

/// A writer whose clock runs `offset` off (libfaketime syntax), publishing
/// `session` with `ttl` seconds, owned by a `sleep` and refreshed every
/// second; returns the owner and the refresher, which stop when dropped.
fn skewed_writer(dev: &Device, session: &str, offset: &str, ttl: f64) -> (KillOnDrop, KillOnDrop) {
    let owner = owner();
    run_ok(
        faked(dev.cmd(), offset)
            .args(["publish", "--session", session, "--ttl", &format!("{ttl}s")])
            .args(["--owner-pid", &owner.0.id().to_string()]),
    );
    let refresher = KillOnDrop(
        faked(dev.cmd(), offset)
            .args(["--quiet", "refresh", "--every", "1s"])
            .spawn()
            .unwrap(),
    );
    (owner, refresher)
}

#[test]
fn syncthing_writers_ten_minutes_and_an_hour_behind_are_listed_and_go_on_time() {
    let _one = lock();
    let w = World::new();
    let p = Pair::up(&w, "");
    let ttl = p.ttl();
    // B 10 min behind, read on A; then A an hour behind, read on B (each
    // reader meets a writer it has not seen skewed otherwise).
    for (writer, reader, offset, what) in [
        ((&p.pb, &p.b), (&p.pa, &p.a), -600.0, "10 min"),
        ((&p.pa, &p.a), (&p.pb, &p.b), -3600.0, "1 h"),
    ] {
        let session = format!("behind-{offset}");
        let (owner, refresher) = skewed_writer(writer.0, &session, &format!("{offset}"), ttl);
        // First contact: with no estimate of the writer's clock, its record
        // is read with the skew tolerance (5 min) and is expired; its clock is
        // learned from two arrivals at least 2 s apart, then used by the
        // next read (see clock.rs). It is listed only through that clock.
        let seen = |rows: Vec<JsonRow>| {
            let row = rows.into_iter().find(|r| r.session_id == session)?;
            assert!(
                row.writer_offset_s.is_some() || !row.live,
                "listed through the skew tolerance: {row:?}"
            );
            Some(row)
        };
        let (_, arrived) = wait_for("the record reaching the reader", PATIENCE, || {
            seen(reader.0.list(&["--include-expired"])).ok_or("not there")
        });
        let (row, listed_after) = wait_for("listed live on the reader", PATIENCE, || {
            seen(reader.0.list(&[])).ok_or("not listed")
        });
        report(
            &format!("8 writer {what} behind -> listed after arrival"),
            listed_after,
        );
        // The learned offset: the true one less the delay of the quickest
        // copy seen, never more.
        let learned = row.writer_offset_s.unwrap();
        assert!(
            (offset - PATIENCE.as_secs_f64()..=offset + 0.1).contains(&learned),
            "learned {learned}, the clock runs {offset} s off (arrived after {arrived:?})"
        );
        // Listed throughout while it refreshes.
        for _ in 0..12 {
            assert!(listed(reader.0, &session).is_some(), "dropped while alive");
            std::thread::sleep(Duration::from_millis(250));
        }
        // It dies: gone one ttl after its last refresh arrived.
        drop(refresher);
        let file = record_file(&writer.1.folder, &session);
        let last = std::fs::read_to_string(writer.1.folder.join(&file)).unwrap();
        let copy = reader.1.folder.join(&file);
        let d = wait_until("its last copy on the reader", PATIENCE, || {
            std::fs::read_to_string(&copy).is_ok_and(|t| t == last)
        });
        report(
            &format!("8 writer {what} behind, dead -> its last copy on the reader"),
            d,
        );
        crate::clocks::stale_one_ttl_after_arrival(reader.0, &copy, &session, ttl);
        drop(owner);
    }
}

#[test]
fn syncthing_expire_never_deletes_the_live_record_of_a_writer_two_hours_behind() {
    let _one = lock();
    let w = World::new();
    // A short gc_after, so that judging by the writer's times would delete
    // at once.
    let p = Pair::up(&w, "gc_after = \"3s\"\n");
    // A record whose refreshes stop arriving for ttl + gc_after is rightly
    // garbage by arrival; by its writer's times it is at once. The ttl is
    // one that delivery on this machine does not run out.
    let ttl = p.ttl();
    let (_owner, _refresher) = skewed_writer(&p.pb, "slow", "-7200", ttl);
    wait_until("slow listed on A", PATIENCE, || {
        listed(&p.pa, "slow").is_some()
    });
    let file = record_file(&p.a.folder, "slow");
    let start = Instant::now();
    let mut passes = 0;
    while start.elapsed() < Duration::from_secs(10) {
        let out: JsonExpire = p.pa.json(&["expire", "--json"]);
        assert!(
            out.removed.iter().all(|g| g.file != file),
            "expire deleted a live record: {out:?}"
        );
        passes += 1;
        assert!(
            p.b.folder.join(&file).exists(),
            "gone from the writer's folder"
        );
        std::thread::sleep(Duration::from_millis(300));
    }
    wait_until("slow still listed on A", PATIENCE, || {
        listed(&p.pa, "slow").is_some()
    });
    report(
        &format!("9 expire looping ({passes} passes) beside a writer 2 h behind: record kept"),
        start.elapsed(),
    );
}

#[test]
fn syncthing_a_third_device_rejoining_through_b_never_shows_the_dead_session() {
    let _one = lock();
    let w = World::new();
    let mut l = Line::up(&w);
    let ttl = l.ttl();
    let owner = owner();
    l.pa.publish(
        "relayed",
        &[
            "--ttl",
            &format!("{ttl}s"),
            "--owner-pid",
            &owner.0.id().to_string(),
        ],
    );
    let refresher = KillOnDrop(
        l.pa.cmd()
            .args(["--quiet", "refresh", "--every", "1s"])
            .spawn()
            .unwrap(),
    );
    // C sees A's session only through B, and learns A's clock from it.
    wait_until("relayed on C", PATIENCE, || {
        listed(&l.pc, "relayed").is_some()
    });
    let (offset, _) = wait_for("A's clock learned on C", PATIENCE, || {
        listed(&l.pc, "relayed")
            .and_then(|r| r.writer_offset_s)
            .ok_or("not yet")
    });
    // A desktop on C watches throughout.
    let mut watch = KillOnDrop(
        l.pc.cmd()
            .args(["watch", "--json"])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let out = watch.0.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(out).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    // The watcher's next line about the session: its event and reason;
    // `None` once it has printed all it will.
    let next = || loop {
        let line = rx.recv_timeout(PATIENCE).ok()?;
        let e = JsonEvent::parse(&line);
        if e.session() == Some("relayed") {
            return Some((e.event, e.reason.unwrap_or_default()));
        }
    };
    let up = next();
    assert_eq!(up, Some(("up".into(), String::new())), "watch on C");
    // C goes offline; A's session refreshes at least once more, then dies
    // without a clear. B, online, receives every refresh, the last included.
    let file = record_file(&l.a.folder, "relayed");
    let (on_a, on_b, on_c) = (
        l.a.folder.join(&file),
        l.b.folder.join(&file),
        l.c.folder.join(&file),
    );
    l.c.stop();
    let seen_by_c = seq_at(&on_c);
    wait_until("a refresh on A that C has not seen", PATIENCE, || {
        seq_at(&on_a) > seen_by_c
    });
    drop(refresher);
    let last = std::fs::read_to_string(&on_a).expect("A's record");
    wait_until("A's last refresh on B", PATIENCE, || {
        std::fs::read_to_string(&on_b).is_ok_and(|t| t == last)
    });
    // C rejoins through B, which relays the stale copy with a fresh ctime on C
    // and an expires_at inside C's 5-minute tolerance; by then the copy is
    // expired by A's clock as C knows it (its estimate only rises with what
    // it learns later).
    let expires = record_at(&on_a).unwrap()["expires_at"].as_f64().unwrap();
    sleep_until(expires - offset + CLOCK_MARGIN_S + 1.0);
    assert!(
        std::fs::read_to_string(&on_c).is_ok_and(|t| t != last),
        "C must hold an older copy while offline"
    );
    let start = Instant::now();
    l.c.start();
    let mut arrived = None;
    loop {
        let row = listed(&l.pc, "relayed");
        assert!(row.is_none(), "the dead session flashed back on C: {row:?}");
        if arrived.is_none() && std::fs::read_to_string(&on_c).is_ok_and(|t| t == last) {
            arrived = Some(start.elapsed());
        }
        if arrived.is_some_and(|a| start.elapsed() > a + Duration::from_secs(5)) {
            break;
        }
        assert!(
            start.elapsed() < PATIENCE,
            "the last copy to reach C through B after it rejoined: not within {PATIENCE:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    // The watcher saw the session come and go once, and never come back.
    let down = next();
    assert_eq!(down, Some(("down".into(), "expired".into())), "watch on C");
    drop(watch);
    let after: Vec<_> = std::iter::from_fn(next).collect();
    assert!(
        after.is_empty(),
        "watch on C after the session went: {after:?}"
    );
    report(
        "10 session died while C was offline -> relayed through B, never shown live on C",
        arrived.unwrap(),
    );
    drop(owner);
}

#[test]
fn syncthing_an_own_record_deleted_on_the_other_device_is_back_within_a_refresh() {
    let _one = lock();
    let w = World::new();
    let p = Pair::up(&w, "");
    let ttl = p.ttl();
    // Refreshes far enough apart for a delete to travel between two.
    let every = (ttl / 4.0).ceil();
    let owner = owner();
    p.pa.publish(
        "kept",
        &[
            "--ttl",
            &format!("{ttl}s"),
            "--title",
            "ours",
            "--owner-pid",
            &owner.0.id().to_string(),
        ],
    );
    let _refresher = KillOnDrop(
        p.pa.cmd()
            .args(["--quiet", "refresh", "--every", &format!("{every}s")])
            .spawn()
            .unwrap(),
    );
    wait_until("kept on B", PATIENCE, || listed(&p.pb, "kept").is_some());
    let started = listed(&p.pb, "kept").unwrap().started_at;
    // A user on B deletes it (or B's expire did): the delete reaches A, whose
    // refresher writes the same life again, and it reaches B. A write on A
    // that crosses the delete wins in Syncthing, and the delete never reaches
    // A; then B deletes again, until one delete does.
    let file = record_file(&p.b.folder, "kept");
    let (on_a, on_b) = (p.a.folder.join(&file), p.b.folder.join(&file));
    let mut tries = 0;
    let start = loop {
        tries += 1;
        assert!(
            tries <= 5,
            "no delete on B reached A in {} tries",
            tries - 1
        );
        // Just after a refresh reached B, so the delete has the interval to
        // travel.
        let last = seq_at(&on_b);
        wait_until("a refresh to reach B", PATIENCE, || seq_at(&on_b) != last);
        std::fs::remove_file(&on_b).unwrap();
        let start = Instant::now();
        let (reached_a, _) = wait_for(
            "the delete to reach A, or A's next refresh to reach B",
            PATIENCE,
            || match (on_a.exists(), on_b.exists()) {
                (false, _) => Ok(true),
                (true, true) => Ok(false),
                (true, false) => Err("neither yet"),
            },
        );
        if reached_a {
            break start;
        }
    };
    let deleted_on_a = start.elapsed();
    wait_until("kept back on B", PATIENCE, || {
        on_b.exists() && listed(&p.pb, "kept").is_some_and(|r| r.title == "ours")
    });
    let back = start.elapsed();
    let row = listed(&p.pb, "kept").unwrap();
    assert_eq!(row.started_at, started, "the same life goes on");
    report(
        &format!("11 own record deleted on B -> delete reached A (try {tries})"),
        deleted_on_a,
    );
    report(
        "11 own record deleted on B -> written again by A's refresher, listed on B",
        back,
    );
}

/// `watch --json` on `dev`, killed when dropped, and its lines as they come.
fn watch_json(dev: &Device) -> (KillOnDrop, std::sync::mpsc::Receiver<String>) {
    let Stream { child, lines } = Stream::start(dev, &["watch", "--json"]);
    (KillOnDrop(child), lines)
}

/// Reads watch lines until the `ready` one, and returns its count.
fn until_ready(lines: &std::sync::mpsc::Receiver<String>) -> usize {
    loop {
        let line = lines
            .recv_timeout(PATIENCE)
            .unwrap_or_else(|_| panic!("watch printed no `ready` within {PATIENCE:?}"));
        let e = JsonEvent::parse(&line);
        if e.event == "ready" {
            return e.count.unwrap();
        }
    }
}

/// The `down` events among `events`, as `session reason` (for a message).
fn downs(events: &[JsonEvent]) -> Vec<String> {
    events
        .iter()
        .filter(|e| e.event == "down")
        .map(|e| format!("{} {}", e.session().unwrap(), e.reason.as_deref().unwrap()))
        .collect()
}

/// The file at `path` as one version: its record's `seq` and when that
/// version arrived (ctime, Unix seconds); `None` while the file is absent
/// (a sync engine replaces a file by removing it first) or not a record.
fn version_at(path: &Path) -> Option<(u64, f64)> {
    use std::os::unix::fs::MetadataExt;
    let mut f = std::fs::File::open(path).ok()?;
    let m = f.metadata().ok()?;
    let mut text = String::new();
    f.read_to_string(&mut text).ok()?;
    let seq = serde_json::from_str::<Value>(&text).ok()?["seq"].as_u64()?;
    Some((seq, m.ctime() as f64 + m.ctime_nsec() as f64 / 1e9))
}

/// Syncthing replaces a changed file on the receiver by removing it and then
/// renaming its temp file into place, so a record re-published fast is now
/// and then absent on B for a moment. Neither B's listing nor B's watcher
/// takes that for an ending: once listed, the session is in every later
/// listing, the watcher never prints `down` for it, and its last title
/// reaches B. A real clear still reaches B's watcher as `down` (cleared).
#[test]
fn syncthing_a_fast_refreshed_record_never_goes_down_on_the_receiver() {
    let _one = lock();
    let w = World::new();
    let p = Pair::up(&w, "");
    let ttl = format!("{}s", p.ttl());
    let (_watch, lines) = watch_json(&p.pb);
    assert_eq!(until_ready(&lines), 0, "watch on B");
    // A re-publishes the session with a new title every ~0.3 s, and its
    // daemon scans after each publish: its watcher alone would gather a file
    // changed this often into one change every few seconds, and B would
    // replace its copy only that often.
    const TIMES: usize = 80;
    let last_title = format!("t{TIMES}");
    let (polls, first, missed, listed_last) = std::thread::scope(|s| {
        let publisher = s.spawn(|| {
            for i in 1..=TIMES {
                p.pa.publish("flap", &["--title", &format!("t{i}"), "--ttl", &ttl]);
                p.a.scan();
                std::thread::sleep(Duration::from_millis(300));
            }
        });
        // Meanwhile B lists over and over, until the last title is listed.
        let start = Instant::now();
        let (mut polls, mut first, mut missed) = (0, None, Vec::new());
        let mut published = None;
        loop {
            let row = listed(&p.pb, "flap");
            polls += 1;
            match (&row, first) {
                (Some(_), None) => first = Some(polls),
                (None, Some(_)) => missed.push(polls),
                _ => {}
            }
            if published.is_none() && publisher.is_finished() {
                published = Some(start.elapsed());
            }
            if published.is_some() && row.is_some_and(|r| r.title == last_title) {
                break;
            }
            assert!(
                published.is_none_or(|d| start.elapsed() < d + PATIENCE),
                "the last title {last_title} listed on B: not within {PATIENCE:?} of the last publish"
            );
        }
        publisher.join().expect("A's publishes");
        (polls, first, missed, start.elapsed())
    });
    // The watcher's lines so far, then until it shows the last title.
    let mut events: Vec<JsonEvent> = lines.try_iter().map(|l| JsonEvent::parse(&l)).collect();
    let shows_last =
        |e: &JsonEvent| (e.event == "up" || e.event == "update") && e.row().title == last_title;
    while !events.iter().any(shows_last) {
        let line = lines.recv_timeout(PATIENCE).unwrap_or_else(|_| {
            panic!("watch on B: no event with {last_title} within {PATIENCE:?}")
        });
        events.push(JsonEvent::parse(&line));
    }
    let first = first.expect("flap listed on B");
    let titles: std::collections::BTreeSet<&str> = events
        .iter()
        .filter(|e| e.event == "up" || e.event == "update")
        .map(|e| e.row().title.as_str())
        .collect();
    println!(
        "syncthing e2e: 12 {TIMES} publishes on A -> {polls} listings on B, first with flap: #{first}, \
         without it after that: {}; watch events: {}, titles seen: {}, downs: {}",
        missed.len(),
        events.len(),
        titles.len(),
        downs(&events).len()
    );
    assert!(
        missed.is_empty() && downs(&events).is_empty(),
        "a session re-published on A was absent from {} of B's {} later listings ({missed:?}), \
         and B's watcher printed these downs: {:?}",
        missed.len(),
        polls - first,
        downs(&events)
    );
    report(
        "12 first publish on A -> the last of the fast titles listed on B",
        listed_last,
    );
    // A clear is an ending: B's watcher says so.
    let start = Instant::now();
    p.pa.run(&["clear", "--session", "flap"]).success();
    let down = loop {
        let line = lines
            .recv_timeout(PATIENCE)
            .unwrap_or_else(|_| panic!("watch on B: no down within {PATIENCE:?} of the clear"));
        let e = JsonEvent::parse(&line);
        if e.event == "down" {
            break e;
        }
    };
    assert_eq!(
        (down.session(), down.reason.as_deref()),
        (Some("flap"), Some("cleared")),
        "watch on B"
    );
    report("12 clear on A -> down (cleared) on B", start.elapsed());
}

/// 200 sessions refreshed every second on A: 200 files replaced on B every
/// second, each by a remove and a rename. Every listing on B has all 200,
/// and B's watcher prints no `down` while they live; a record file that is
/// really deleted (as another device's `expire` would) still reaches the
/// watcher as `down` (cleared).
#[test]
fn syncthing_200_sessions_refreshed_every_second_are_never_short() {
    let _one = lock();
    let w = World::new();
    let p = Pair::up(&w, "");
    let ttl = format!("{}s", p.ttl());
    let owner = owner();
    let pid = owner.0.id().to_string();
    let start = Instant::now();
    for i in 0..200 {
        p.pa.publish(
            &format!("many-{i:03}"),
            &["--ttl", &ttl, "--owner-pid", &pid],
        );
    }
    report("13 200 publishes on A", start.elapsed());
    // Every second, within the profile's bound (ttl / 3 of 90 s).
    let mut refresher = KillOnDrop(
        p.pa.cmd()
            .args(["--quiet", "refresh", "--every", "1s"])
            .spawn()
            .unwrap(),
    );
    let d = wait_until("all 200 listed on B", PATIENCE, || {
        p.pb.list(&[]).len() == 200
    });
    report("13 200 publishes on A -> all listed on B", d);
    let (_watch, lines) = watch_json(&p.pb);
    let initial = until_ready(&lines);
    // ~20 s of listings on B while A refreshes all 200 every second.
    let start = Instant::now();
    let (mut polls, mut short) = (0, Vec::new());
    while start.elapsed() < Duration::from_secs(20) {
        let rows = p.pb.list(&[]);
        polls += 1;
        if rows.len() != 200 {
            short.push(rows.len());
        }
    }
    let events: Vec<JsonEvent> = lines.try_iter().map(|l| JsonEvent::parse(&l)).collect();
    let rounds = seq_at(&p.a.folder.join(record_file(&p.a.folder, "many-000")));
    println!(
        "syncthing e2e: 13 20 s of 200 sessions refreshed every second (seq of one: {rounds:?}): \
         {polls} listings on B, short: {}, watch initial set {initial}, events after it: {}, downs: {}",
        short.len(),
        events.len(),
        downs(&events).len()
    );
    assert!(
        short.is_empty() && downs(&events).is_empty(),
        "{} of {polls} listings on B did not have all 200 live sessions (counts {short:?}); \
         B's watcher printed {} downs: {:?}",
        short.len(),
        downs(&events).len(),
        downs(&events).iter().take(10).collect::<Vec<_>>()
    );
    // The refresher stops (else it would write a deleted file again: its
    // owner still runs), then one record file is deleted on A.
    assert!(kill("-TERM", &[&refresher.0.id().to_string()]));
    refresher.0.wait().unwrap();
    let file = record_file(&p.a.folder, "many-000");
    let start = Instant::now();
    std::fs::remove_file(p.a.folder.join(&file)).unwrap();
    let down = loop {
        let line = lines
            .recv_timeout(PATIENCE)
            .unwrap_or_else(|_| panic!("watch on B: no down within {PATIENCE:?} of the delete"));
        let e = JsonEvent::parse(&line);
        if e.event == "down" {
            break e;
        }
    };
    assert_eq!(
        (down.session(), down.reason.as_deref()),
        (Some("many-000"), Some("cleared")),
        "watch on B: the first down after the delete"
    );
    report(
        "13 record file deleted on A -> down (cleared) on B",
        start.elapsed(),
    );
    drop(owner);
}

/// A reader device whose only `presence` use is `refresh --every` (it
/// publishes nothing, and nobody on it has ever listed) learns the other
/// devices' clocks from what arrives: writers 1 h and 10 min behind, on
/// time, and 10 min and 1 h ahead are all listed live on its very first
/// `list`, once two refreshes of each (at least two seconds apart, what a
/// first estimate needs) have arrived.
#[test]
fn syncthing_a_writer_an_hour_behind_is_listed_on_a_readers_first_list() {
    let _one = lock();
    let w = World::new();
    let p = Pair::up(&w, "");
    let ttl = p.ttl();
    let mut b_refresher = KillOnDrop(
        p.pb.cmd()
            .args(["--quiet", "refresh", "--every", "1s"])
            .spawn()
            .unwrap(),
    );
    // Five writer devices on A (a clock is a device's, not a session's),
    // each publishing one session and refreshing it every second.
    let writers: Vec<_> = [
        ("-3600", "behind-1h"),
        ("-600", "behind-10m"),
        ("+0", "on-time"),
        ("+600", "ahead-10m"),
        ("+3600", "ahead-1h"),
    ]
    .into_iter()
    .map(|(offset, session)| {
        let dev = w.bare_device(&format!("writer-{session}"));
        dev.write_config(&format!(
            "[profiles.default]\ndir = {:?}\n",
            p.a.folder.display().to_string()
        ));
        let (owner, refresher) = skewed_writer(&dev, session, offset, ttl);
        let on_b = p.b.folder.join(record_file(&p.a.folder, session));
        (session, on_b, owner, refresher)
    })
    .collect();
    // Two refreshes of each reach B, the second at least 2 s after the
    // first copy B had: seen by reading B's folder, never by `presence`.
    let mut firsts: Vec<Option<(u64, f64)>> = vec![None; writers.len()];
    let (_, d) = wait_for("two refreshes of each writer on B", PATIENCE, || {
        let mut waiting = Vec::new();
        for ((session, on_b, ..), first) in writers.iter().zip(firsts.iter_mut()) {
            let now = version_at(on_b);
            if first.is_none() {
                *first = now;
            }
            let arrived = match (*first, now) {
                (Some((seq0, at0)), Some((seq, at))) => seq >= seq0 + 2 && at >= at0 + 2.0,
                _ => false,
            };
            if !arrived {
                waiting.push((*session, *first, now));
            }
        }
        if waiting.is_empty() {
            Ok(())
        } else {
            Err(waiting)
        }
    });
    report(
        "14 five skewed writers on A -> two refreshes of each on B",
        d,
    );
    assert!(
        b_refresher.0.try_wait().unwrap().is_none(),
        "B's refresh --every exited"
    );
    // B's very first listing.
    let rows = p.pb.list(&[]);
    let missing: Vec<&str> = writers
        .iter()
        .map(|(session, ..)| *session)
        .filter(|s| !rows.iter().any(|r| r.session_id == *s && r.live))
        .collect();
    assert!(
        missing.is_empty(),
        "not live on B's first list: {missing:?}; listed: {:?}; with expired ones: {:?}",
        rows.iter()
            .map(|r| (&r.session_id, r.writer_offset_s))
            .collect::<Vec<_>>(),
        p.pb.list(&["--include-expired"])
            .iter()
            .map(|r| (&r.session_id, &r.state, r.writer_offset_s))
            .collect::<Vec<_>>()
    );
    let offsets: Vec<_> = rows
        .iter()
        .map(|r| format!("{} {:?}", r.session_id, r.writer_offset_s))
        .collect();
    println!("syncthing e2e: 14 B's first list, learned offsets: {offsets:?}");
    drop(writers);
}

/// A Claude Code hook sequence on A (`presence hook claude` run by a
/// stand-in for Claude, as claude_hook.rs does) moves the session through
/// idle, working and waiting to gone on B, each within the sync delay.
#[test]
fn syncthing_a_claude_code_hook_sequence_reaches_the_other_device() {
    use crate::claude_hook::{claude_binary, event, json};
    let _one = lock();
    let w = World::new();
    let p = Pair::up(&w, "");
    let claude = claude_binary(w.tmp.path());
    let on_b = |want: Option<&str>, what: &str| {
        let took = wait_until(what, PATIENCE, || {
            listed(&p.pb, "c-sync").map(|r| r.status).as_deref() == want
        });
        report(what, took);
    };
    let (rc, err, _start) = event(
        &p.pa,
        &claude,
        &json("SessionStart", "c-sync", r#","source":"startup""#),
    );
    assert_eq!((rc, err.as_str()), (0, ""));
    on_b(Some("idle"), "SessionStart on A -> idle on B");
    let row = listed(&p.pb, "c-sync").unwrap();
    assert_eq!((row.client.as_str(), row.local), ("claude-code", false));
    let (rc, _, _turn) = event(
        &p.pa,
        &claude,
        &json("UserPromptSubmit", "c-sync", r#","prompt":"x""#),
    );
    assert_eq!(rc, 0);
    on_b(Some("working"), "UserPromptSubmit on A -> working on B");
    let (rc, _, _stop) = event(
        &p.pa,
        &claude,
        &json("Stop", "c-sync", r#","stop_hook_active":false"#),
    );
    assert_eq!(rc, 0);
    on_b(Some("waiting"), "Stop on A -> waiting on B");
    let (rc, _, _end) = event(
        &p.pa,
        &claude,
        &json("SessionEnd", "c-sync", r#","reason":"exit""#),
    );
    assert_eq!(rc, 0);
    on_b(None, "SessionEnd on A -> gone on B");
}

/// Discovery on A: the session is listed on B after one refresh and the
/// sync delay, and gone after its process exits and the next refresh.
#[test]
fn syncthing_a_discovered_session_on_a_is_listed_on_b_and_goes_when_its_process_exits() {
    use crate::discover::{CLAUDE_ID, claude_files, stand_in, start, workdir};
    let _one = lock();
    let w = World::new();
    let p = Pair::up(&w, "\n[discover]\nagents = [\"claude-code\"]\n");
    let cwd = workdir(&w, "parser");
    let claude = stand_in(&w, "sleep", "claude");
    let mut agent = start(p.pa.program(&claude).arg("600").current_dir(&cwd));
    claude_files(&p.pa, agent.0.id(), CLAUDE_ID, &cwd, "busy");
    run_ok(p.pa.cmd().args(["--quiet", "refresh"]));
    let seen = wait_until("the discovered session on B", PATIENCE, || {
        listed(&p.pb, CLAUDE_ID).is_some_and(|r| {
            (r.client.as_str(), r.source.as_str(), r.status.as_str())
                == ("claude-code", "discover", "working")
        })
    });
    report("a refresh with discovery on A -> listed on B", seen);
    agent.0.kill().unwrap();
    agent.0.wait().unwrap();
    let ended = Instant::now();
    run_ok(p.pa.cmd().args(["--quiet", "refresh"]));
    wait_until("the session gone from B", PATIENCE, || {
        listed(&p.pb, CLAUDE_ID).is_none()
    });
    report(
        "its process exits, a refresh on A -> gone on B",
        ended.elapsed(),
    );
}
