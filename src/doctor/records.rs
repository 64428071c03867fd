//! The checks of the records in the directory: per-device counts and clocks
//! (`device`), records forged under this device's id (`device-id`),
//! credentials (`secrets`), files that are not records (`unreadable`) and
//! what `expire` would delete (`garbage`). Apart because all but the last
//! read one census of every record, in every profile, expired or not.

use std::collections::BTreeMap;

use super::{Check, Status, check};
use crate::registry::Registry;
use crate::registry::devices::{Census, Wants};

/// Every record of every profile, expired or not, counted without making
/// a row of each (see `Registry::census`), with the rows of this device's
/// records and the files that carry credentials; a census that fails is
/// the `records` verdict, and the run stops there.
pub(super) fn census(registry: &Registry, now: f64) -> Result<Census, Box<Check>> {
    let wants = Wants {
        local_rows: true,
        secrets: true,
    };
    registry.census(now, wants).map_err(|_| {
        Box::new(check(
            "records",
            Status::Fail,
            format!(
                "cannot list {}",
                registry
                    .profile()
                    .dirs
                    .iter()
                    .map(|d| d.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            None,
        ))
    })
}

/// `device`: one check per device: its records, when the last one arrived,
/// and its clock as that device's minus ours (positive: it runs ahead).
pub(super) fn devices(registry: &Registry, census: &Census, now: f64) -> Vec<Check> {
    // Each record gives a sample of its writer's clock: `updated_at − ctime`
    // is how far the writer's clock runs ahead of ours, minus the delay the
    // copy took to arrive. Delays are never negative, so the largest sample
    // is the best estimate of the offset. Every record counts, live or not:
    // the records of a device whose clock runs far behind may arrive
    // already expired, and are exactly the ones to look at. Forged records
    // count for nobody.
    let p = registry.profile();
    let clocks = registry.local().clocks();
    let mut devices: BTreeMap<String, Seen> = BTreeMap::new();
    for f in census
        .files
        .iter()
        .filter(|f| f.verdict.forgery().is_none())
    {
        let (device_id, host) = (census.string(f.device), census.string(f.host));
        let name = if f.local {
            "this device".to_string()
        } else if device_id.is_empty() {
            format!("host {host}")
        } else {
            format!(
                "device {} ({host})",
                crate::text::prefix_chars(device_id, 8),
            )
        };
        let age = census.age_s(f, now);
        let seen = devices.entry(name).or_insert_with(|| Seen {
            local: f.local,
            count: 0,
            live: 0,
            last: f64::INFINITY,
            offset: None,
            device_id: device_id.to_string(),
            host: host.to_string(),
            ttl: 0.0,
            arrived_expired: false,
        });
        seen.count += 1;
        seen.live += usize::from(f.live);
        if age < seen.last {
            // Named by its newest record.
            seen.last = age;
            seen.device_id = device_id.to_string();
            seen.host = host.to_string();
        }
        if let Some(claimed) = census.claimed_age_s(f, now) {
            let sample = age - claimed;
            if sample.is_finite() {
                seen.offset = Some(seen.offset.map_or(sample, |m: f64| m.max(sample)));
            }
        }
        let ttl = census.ttl(f);
        seen.ttl = seen.ttl.max(ttl);
        seen.arrived_expired |= f.state == crate::liveness::State::Expired && age < ttl;
    }
    let tolerance = p.skew.as_secs_f64();
    devices
        .into_iter()
        .map(|(device, seen)| {
            let records = format!(
                "{device}: {} record(s), {} live, last {} {} ago",
                seen.count,
                seen.live,
                if seen.local { "written" } else { "arrived" },
                super::duration(seen.last),
            );
            let mut c = if seen.local {
                this_device(records, seen.offset, tolerance)
            } else {
                let learned = clocks.estimate(&seen.device_id, now);
                let mut c = other_device(records, &seen, learned, p.skew);
                c.offset_s = learned.map(|e| e.offset).or(seen.offset);
                c.offset_learned = c.offset_s.map(|_| learned.is_some());
                c
            };
            c.device_id = Some(seen.device_id);
            c.host = Some(seen.host);
            c.this_device = Some(seen.local);
            c.records = Some(seen.count);
            c.live = Some(seen.live);
            c.last_seen_s = Some(seen.last);
            c
        })
        .collect()
}

/// What the records of one device in the listing say.
struct Seen {
    local: bool,
    count: usize,
    live: usize,
    /// Seconds since the newest of its records arrived (or was written).
    last: f64,
    /// The largest clock sample of its records.
    offset: Option<f64>,
    device_id: String,
    /// The host of its newest record (the name it is grouped under, but
    /// for this device's).
    host: String,
    /// The longest ttl its records claim.
    ttl: f64,
    /// A record that was already expired when it arrived (within its ttl).
    arrived_expired: bool,
}

const NTP: &str = "set up NTP on that device (`timedatectl set-ntp true`, or install chrony)";

/// The `device` verdict on another device's clock. Its records are read
/// with the learned estimate when there is one, so that is the offset to
/// judge; before there is one, the best sample of the records at hand.
fn other_device(
    records: String,
    seen: &Seen,
    learned: Option<crate::clock::Estimate>,
    skew: std::time::Duration,
) -> Check {
    let Some(offset) = learned.map(|e| e.offset).or(seen.offset) else {
        return check(
            "device",
            Status::Ok,
            format!("{records}; no record says its time"),
            None,
        );
    };
    let clock = match learned {
        Some(e) => format!(
            "clock {} ({}; learned from {} sample(s){})",
            super::signed(offset),
            super::ahead_or_behind(offset),
            e.samples,
            if e.stale { ", none recent" } else { "" }
        ),
        None => format!(
            "clock about {} ({}; not learned yet)",
            super::signed(offset),
            super::ahead_or_behind(offset)
        ),
    };
    let tolerance = skew.as_secs_f64();
    let (status, why, fix) = if learned.is_none() && seen.arrived_expired {
        (
            Status::Fail,
            "its records arrive already expired, so its sessions do not show here".to_string(),
            format!(
                "{NTP}; meanwhile its clock is learned once two of its refreshes have arrived \
                 here (`presence refresh --every` on it)"
            ),
        )
    } else if offset < -seen.ttl {
        (
            Status::Warn,
            "behind by more than its records' ttl: they arrive already expired by their own \
             times, and show only where its clock has been learned (not on a device that meets \
             it first, nor in readers that do not learn clocks)"
                .to_string(),
            NTP.to_string(),
        )
    } else if offset.abs() > tolerance {
        (
            Status::Warn,
            format!(
                "{} by more than the skew tolerance ({})",
                if offset < 0.0 { "behind" } else { "ahead" },
                humantime::format_duration(skew)
            ),
            NTP.to_string(),
        )
    } else {
        return check("device", Status::Ok, format!("{records}; {clock}"), None);
    };
    check(
        "device",
        status,
        format!("{records}; {clock}: {why}"),
        Some(fix),
    )
}

/// The `device` verdict on this device. The times of its own records come
/// from this clock and their ctimes from the file system's, so they differ
/// only when the file system keeps another clock (a network file system
/// whose server's clock is off).
fn this_device(records: String, offset: Option<f64>, tolerance: f64) -> Check {
    match offset {
        Some(o) if o.abs() > tolerance => check(
            "device",
            Status::Warn,
            format!(
                "{records}; the times it writes differ by {} from the times the file system \
                 stamps on its files: the file system keeps another clock (a network file \
                 system whose server's clock is off?)",
                super::signed(o)
            ),
            Some("set up NTP on this device and on the file server".into()),
        ),
        _ => check("device", Status::Ok, records, None),
    }
}

/// `forged`: records that claim a key-derived device id and do not prove
/// it, each named with its file and why (no other check counts them as
/// their claimed device's).
pub(super) fn forged(census: &Census) -> Option<Check> {
    let mut forged: Vec<(&str, &str)> = census
        .files
        .iter()
        .filter_map(|f| {
            let why = f.verdict.forgery()?;
            Some((census.file(f), why.name()))
        })
        .collect();
    if forged.is_empty() {
        return None;
    }
    forged.sort_unstable();
    let named: Vec<String> = forged
        .iter()
        .map(|(file, why)| format!("{file} ({why})"))
        .collect();
    let mut c = check(
        "forged",
        Status::Warn,
        format!(
            "{} record(s) claim a device id they do not prove, and count for nobody: {}",
            forged.len(),
            named.join(", ")
        ),
        Some(
            "a device in the sync group wrote them (`presence devices` counts them under the \
             id they claim); no listing shows them and they end, hide or clock nothing. \
             `presence expire` deletes them once they have stayed unchanged for gc_after"
                .into(),
        ),
    );
    c.files = forged.iter().map(|(f, _)| f.to_string()).collect();
    Some(c)
}

/// `device-id`, when this device moved from the random id of an older
/// version to the one derived from its key: says so once it did.
pub(super) fn moved_id(registry: &Registry) -> Option<Check> {
    let local = registry.local();
    let old = local.previous_device_id()?;
    let new = local.existing_device_id().ok().flatten()?;
    let mut c = check(
        "device-id",
        Status::Ok,
        format!(
            "this device signs its records: its id moved from {} (random, kept in {}) to {}, \
             derived from its key in {}; its records take the new id as they are next written \
             or refreshed, and other devices learn its clock again",
            crate::text::prefix_chars(&old, 8),
            local.previous_device_id_file().display(),
            crate::text::prefix_chars(&new, 8),
            local.device_key_file().display()
        ),
        None,
    );
    c.device_id = Some(new);
    Some(c)
}

/// Records that carry this device's id but that the ledger says this device
/// never wrote: another device forged them, or this home directory was
/// cloned from another machine's (both then have one device id).
pub(super) fn foreign_claims(registry: &Registry, census: &Census) -> Option<Check> {
    let id = registry.local().existing_device_id().ok().flatten()?;
    let mut files: Vec<&str> = census
        .files
        .iter()
        .filter(|f| f.verdict.forgery().is_none())
        .filter(|f| !f.local && census.string(f.device) == id)
        .map(|f| census.file(f))
        .collect();
    files.sort_unstable();
    if files.is_empty() {
        return None;
    }
    let mut c = check(
        "device-id",
        Status::Warn,
        format!(
            "{} record(s) claim this device's id ({}) but this device did not write them: {}",
            files.len(),
            crate::text::prefix_chars(&id, 8),
            files.join(", ")
        ),
        Some(format!(
            "they are shown as another device's and never refreshed or cleared here. If this \
             home directory was copied from another machine (its key with it), give this one \
             its own key and id: delete {} and {} and publish again; otherwise find the device \
             that writes them",
            registry.local().device_key_file().display(),
            registry.local().device_id_file().display()
        )),
    );
    c.files = files.iter().map(|f| f.to_string()).collect();
    c.device_id = Some(id);
    Some(c)
}

/// `secrets`: files that carried credentials, which listings show redacted.
/// Records without a device id come from writers other than `presence`,
/// such as Hermes Agent's own: the fix says where to stop them.
pub(super) fn secrets(census: &Census, profile: &crate::config::Profile) -> Option<Check> {
    let with: Vec<&crate::registry::devices::Counted> = census
        .secrets
        .iter()
        .filter_map(|&i| census.files.get(i))
        .collect();
    let mut secrets: Vec<&str> = with.iter().map(|f| census.file(f)).collect();
    secrets.sort_unstable();
    if secrets.is_empty() {
        return None;
    }
    let foreign = with
        .iter()
        .filter(|f| !f.local && census.string(f.device).is_empty())
        .count();
    let mut fix = String::from("find the writer that published them and stop it");
    if foreign > 0 {
        fix.push_str(&format!(
            "; of these, {foreign} have no device id, as Hermes Agent writes its records: keep \
             credentials out of what Hermes publishes (session titles, endpoints), or let \
             `presence hook hermes` publish its sessions, which redacts them (or, with \
             `strict = true` in the profile, refuses them)"
        ));
    }
    fix.push_str(if profile.expires_others {
        "; `presence expire` or deleting the files removes them"
    } else {
        "; this is Hermes' own directory, which `presence expire` leaves to Hermes: delete \
         the files or let Hermes remove them"
    });
    let mut c = check(
        "secrets",
        Status::Warn,
        format!(
            "{} file(s) carry credentials (shown redacted): {}",
            secrets.len(),
            secrets.join(", ")
        ),
        Some(fix),
    );
    c.files = secrets.iter().map(|f| f.to_string()).collect();
    Some(c)
}

/// `records`: how many record files the directory holds, and how many
/// of them are live (for a profile that reads several directories, one
/// such check per directory).
pub(super) fn count(census: &Census) -> Check {
    let files = census
        .files
        .iter()
        .filter(|f| f.verdict.forgery().is_none());
    let (all, live) = files.fold((0, 0), |(n, l), f| (n + 1, l + usize::from(f.live)));
    check(
        "records",
        Status::Ok,
        format!("{all} record file(s), {live} live"),
        None,
    )
}

/// `unreadable`: files named like records that are not; temp files do not
/// count, as writers leave them in passing.
pub(super) fn unreadable(census: &Census) -> Option<Check> {
    let skipped = census
        .skipped
        .iter()
        .filter(|s| !matches!(s.reason, crate::store::SkipReason::Temp(_)))
        .count();
    if skipped == 0 {
        return None;
    }
    Some(check(
        "unreadable",
        Status::Warn,
        format!("{skipped} file(s) named like records are not records"),
        Some("`presence -v list` names each and says why".into()),
    ))
}

/// `garbage`: what `presence expire` would delete now (a dry run).
pub(super) fn garbage(registry: &Registry, now: f64) -> Check {
    match registry.expire(now, true) {
        Ok(g) if g.removed.is_empty() => check(
            "garbage",
            Status::Ok,
            "nothing for `expire` to delete".into(),
            None,
        ),
        Ok(g) => check(
            "garbage",
            Status::Warn,
            format!("{} file(s) wait for `presence expire`", g.removed.len()),
            Some(
                "run `presence expire` now, and daily from a timer (`presence setup` installs \
                 one)"
                    .into(),
            ),
        ),
        Err(e) => check("garbage", Status::Fail, e.to_string(), None),
    }
}
