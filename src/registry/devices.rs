//! `devices`: every writer seen in the directories, and its clock.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::error::Result;

use super::{ListOptions, Registry, round_ms};

/// One device seen in the directory, and what this machine knows of its clock.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Device {
    /// Its `device_id` (empty for writers that stamp none).
    pub device_id: String,
    /// The hosts its records name.
    pub hosts: Vec<String>,
    /// The instance ids its records name.
    pub instances: Vec<String>,
    /// Records of it in the directory (every label, live or not; forged
    /// ones not counted).
    pub records: usize,
    /// Of them, live.
    pub live: usize,
    /// The fingerprint of its public key (`SHA256:…`, as `ssh-keygen -l`
    /// shows one), from its verified records; null for a device that does
    /// not sign.
    pub fingerprint: Option<String>,
    /// Of its records, those whose signature proves its id.
    pub verified: usize,
    /// Records that claim its id and do not prove it: another device's
    /// forgeries. They are counted here and decide nothing.
    pub forged: usize,
    /// Whether it is this device (it wrote a record the ledger knows).
    pub this_device: bool,
    /// Seconds since the newest of its records arrived here (or, for this
    /// device, was written), on this machine's clock.
    pub last_seen_s: f64,
    /// How far its clock runs ahead of ours (negative: behind), as learned;
    /// null while it has no estimate (its times are then read with the skew
    /// tolerance).
    pub offset_s: Option<f64>,
    /// Records that taught the estimate something when they were read
    /// (a new minute of arrivals, a later arrival, a higher sample).
    pub samples: u64,
    /// No sample arrived within the last 10 minutes: the estimate is the
    /// last one learned, kept.
    pub stale: bool,
}

impl Registry {
    /// Every device with a record in the directory (every label), with what
    /// this machine has learned of its clock, most records first.
    pub fn devices(&self, now: f64) -> Result<Vec<Device>> {
        let opts = ListOptions {
            all: true,
            include_expired: true,
            all_profiles: true,
        };
        let listing = self.list(opts, now)?;
        let clocks = self.local.clocks();
        let mut by_id: BTreeMap<String, Device> = BTreeMap::new();
        for row in &listing.rows {
            let id = row.record.device_id.clone();
            let d = by_id.entry(id.clone()).or_insert_with(|| {
                let estimate = clocks.estimate(&id, now);
                Device {
                    device_id: id,
                    hosts: Vec::new(),
                    instances: Vec::new(),
                    records: 0,
                    live: 0,
                    fingerprint: None,
                    verified: 0,
                    forged: 0,
                    this_device: false,
                    last_seen_s: row.age_s,
                    offset_s: estimate.map(|e| round_ms(e.offset)),
                    samples: estimate.map_or(0, |e| e.samples),
                    stale: estimate.is_some_and(|e| e.stale),
                }
            });
            if row.forged.is_some() {
                d.forged += 1;
                continue;
            }
            if row.verified {
                d.verified += 1;
                if d.fingerprint.is_none() {
                    d.fingerprint = crate::identity::fingerprint(&row.record.key);
                }
            }
            d.records += 1;
            d.live += usize::from(row.live);
            d.this_device |= row.local;
            d.last_seen_s = d.last_seen_s.min(row.age_s);
            if !d.hosts.contains(&row.record.host) {
                d.hosts.push(row.record.host.clone());
            }
            if !d.instances.contains(&row.record.instance_id) {
                d.instances.push(row.record.instance_id.clone());
            }
        }
        let mut out: Vec<Device> = by_id.into_values().collect();
        out.sort_by(|a, b| {
            b.records
                .cmp(&a.records)
                .then(a.device_id.cmp(&b.device_id))
        });
        Ok(out)
    }
}
