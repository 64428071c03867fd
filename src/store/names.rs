//! File names in the presence directory: the name a record gets
//! ([`file_name`]) and what a name found there says it is ([`classify`]).
//!
//! Pure string rules, no I/O: kept apart from the directory code so that the
//! naming contract — our own names are always plain records, distinct ids
//! never share a name even ignoring case — can be read and tested on its own.

use sha2::{Digest, Sha256};

/// Longest reduced id part of a file name, in bytes (before the hash suffix).
pub(crate) const MAX_ID_BYTES: usize = 100;

/// Base names Windows reserves whatever follows the first dot (`con.x.json`
/// cannot be created on a Windows share, so it would never sync).
const WINDOWS_RESERVED: [&str; 22] = [
    "con", "prn", "aux", "nul", "com1", "com2", "com3", "com4", "com5", "com6", "com7", "com8",
    "com9", "lpt1", "lpt2", "lpt3", "lpt4", "lpt5", "lpt6", "lpt7", "lpt8", "lpt9",
];

/// Reduces a session id for use in a file name (see [`file_name`]).
pub(crate) fn reduce_id(id: &str) -> String {
    reduce(id, false)
}

/// Reduces an instance id for use in a file name: as [`reduce_id`], and dots
/// become `_` too, so that the first dot of a record name always ends the
/// instance part (`a.b` + `c` and `a` + `b.c` must not share `a.b.c.json`).
pub(crate) fn reduce_instance_id(id: &str) -> String {
    reduce(id, true)
}

/// The reduction rule: characters outside `[A-Za-z0-9._-]` become `_`, letters
/// are lowercased, leading dots are stripped, the result is cut to
/// [`MAX_ID_BYTES`], and shapes that would make the name look like something
/// else are neutralised (`sync-conflict` becomes `sync_conflict`, a trailing
/// `.tmp` becomes `_tmp`, an empty id `_`, a Windows device name gets a `_`).
/// When that changed the id — or the id already ends like a hash suffix —
/// `-<8 hex of SHA-256 of the original>` is appended. So a reduced name is
/// either the id itself or ends in a suffix that only the hash writes: two
/// ids differing in anything, letter case included, never share a name, even
/// on a case-insensitive filesystem.
fn reduce(id: &str, instance: bool) -> String {
    let mut out: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '-') || (c == '.' && !instance) {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    let stripped = out.trim_start_matches('.').len();
    out.drain(..out.len() - stripped);
    out.truncate(MAX_ID_BYTES);
    // Same length, so the cut above still holds.
    out = out.replace("sync-conflict", "sync_conflict");
    if out.ends_with(".tmp") {
        let dot = out.len() - 4;
        out.replace_range(dot..=dot, "_");
    }
    if out.is_empty() {
        out.push('_');
    }
    if instance && WINDOWS_RESERVED.contains(&out.as_str()) {
        out.push('_');
    }
    if out != id || ends_like_hash(&out) {
        out.push('-');
        out.push_str(&hash8(id));
    }
    out
}

/// The first 8 hex digits of the SHA-256 of `id`.
fn hash8(id: &str) -> String {
    Sha256::digest(id.as_bytes())[..4]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Whether `s` ends in `-` and 8 lowercase hex digits, the shape of a suffix.
fn ends_like_hash(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 9
        && b[b.len() - 9] == b'-'
        && b[b.len() - 8..]
            .iter()
            .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(c))
}

/// The file name of a record: `<instance>.<session>.json`, the instance part
/// reduced by [`reduce_instance_id`] and the session part by [`reduce_id`].
/// [`classify`] always calls it a [`NameKind::Record`], and distinct
/// `(instance, session)` pairs give names that differ even under ASCII case
/// folding (short of a collision of the 32-bit hash suffix). At most 224 bytes.
pub(crate) fn file_name(instance_id: &str, session_id: &str) -> String {
    format!(
        "{}.{}.json",
        reduce_instance_id(instance_id),
        reduce_id(session_id)
    )
}

/// What a directory entry's name says it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NameKind {
    /// `<instance>.<session>.json`: a record.
    Record,
    /// A sync engine's conflict copy of a record; parsed like a record.
    ConflictCopy(Engine),
    /// Our own temp file (`.<record name>.<pid>.<random>.tmp`), left by a crash if old.
    OwnTemp,
    /// A sync engine's temp or placeholder file.
    SyncTemp(Engine),
    /// Another dot file (`.stfolder`, `.stignore`, …).
    Hidden,
    /// Not a `*.json` file.
    Other,
}

/// Classifies a file name (see the module docs of the directory rules).
pub(crate) fn classify(name: &str) -> NameKind {
    if let Some(rest) = name.strip_prefix('.') {
        if rest.starts_with("syncthing.") && rest.ends_with(".tmp") {
            return NameKind::SyncTemp(Engine::Syncthing);
        }
        if rest.ends_with(".icloud") {
            return NameKind::SyncTemp(Engine::ICloud);
        }
        if let Some((_, tail)) = rest.rsplit_once(".~")
            && !tail.is_empty()
            && tail.chars().all(|c| c.is_ascii_hexdigit())
        {
            return NameKind::SyncTemp(Engine::Nextcloud);
        }
        if is_own_temp(rest) {
            return NameKind::OwnTemp;
        }
        return NameKind::Hidden;
    }
    if name.starts_with("~syncthing~") {
        return NameKind::SyncTemp(Engine::Syncthing);
    }
    let Some(stem) = name.strip_suffix(".json") else {
        return NameKind::Other;
    };
    if stem.is_empty() {
        return NameKind::Other;
    }
    if stem.contains(".sync-conflict-") {
        return NameKind::ConflictCopy(Engine::Syncthing);
    }
    if stem.contains("'s conflicted copy") {
        return NameKind::ConflictCopy(Engine::Dropbox);
    }
    if stem.contains("(conflicted copy") {
        return NameKind::ConflictCopy(Engine::Nextcloud);
    }
    // Our own names never hold a space; every engine's copy names do.
    if let Some((_, n)) = stem.rsplit_once(' ') {
        if !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()) {
            return NameKind::ConflictCopy(Engine::ICloud);
        }
        return NameKind::ConflictCopy(Engine::Unknown);
    }
    NameKind::Record
}

/// The record file a sync engine's temp file `name` is about to become,
/// if it is one: Syncthing's `.syncthing.<name>.tmp` and
/// `~syncthing~<name>.tmp`, Nextcloud's `.<name>.~<hex>`. An engine that
/// replaces a file by deleting it and then renaming its temp file into
/// place (Syncthing does) leaves the name missing for a moment while its
/// temp file is there; readers wait that moment out (see `settle`).
/// iCloud's `.<name>.icloud` is a placeholder for a file not downloaded,
/// not one being replaced.
pub(crate) fn replaced_by(name: &str) -> Option<&str> {
    let target = if let Some(rest) = name.strip_prefix(".syncthing.") {
        rest.strip_suffix(".tmp")?
    } else if let Some(rest) = name.strip_prefix("~syncthing~") {
        rest.strip_suffix(".tmp")?
    } else {
        let (body, tail) = name.strip_prefix('.')?.rsplit_once(".~")?;
        if tail.is_empty() || !tail.chars().all(|c| c.is_ascii_hexdigit()) {
            return None;
        }
        body
    };
    matches!(
        classify(target),
        NameKind::Record | NameKind::ConflictCopy(_)
    )
    .then_some(target)
}

/// The names of the temp files Syncthing gives a file it is receiving as
/// `name` (one per spelling it has used), to look for by name.
pub(crate) fn syncthing_temps(name: &str) -> [String; 2] {
    [
        format!(".syncthing.{name}.tmp"),
        format!("~syncthing~{name}.tmp"),
    ]
}

/// Whether `rest` (a name without its leading dot) is `<record name>.<pid>.<random>.tmp`,
/// the shape [`super::Dir::replace_if_unchanged`] gives its temp files: only those are ours
/// to delete, not any dot file that happens to end in `.tmp`.
fn is_own_temp(rest: &str) -> bool {
    let Some((body, random)) = rest.strip_suffix(".tmp").and_then(|b| b.rsplit_once('.')) else {
        return false;
    };
    let Some((target, pid)) = body.rsplit_once('.') else {
        return false;
    };
    !random.is_empty()
        && random.bytes().all(|b| b.is_ascii_alphanumeric())
        && !pid.is_empty()
        && pid.bytes().all(|b| b.is_ascii_digit())
        && classify(target) == NameKind::Record
}

/// A name that stays in the directory: one path component, not `.` or `..`.
pub(super) fn is_plain_name(name: &str) -> bool {
    !name.is_empty() && name != "." && name != ".." && !name.contains(['/', '\0'])
}

/// A sync engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Engine {
    /// Syncthing.
    Syncthing,
    /// Dropbox.
    Dropbox,
    /// Nextcloud or ownCloud.
    Nextcloud,
    /// iCloud Drive.
    ICloud,
    /// Resilio Sync.
    ResilioSync,
    /// A macOS File Provider folder (`~/Library/CloudStorage/<provider>`).
    CloudStorage,
    /// A copy of unknown origin (a name with a space in it).
    Unknown,
}

impl Engine {
    /// Its short name, as file names show it (`iCloud`, not `iCloud Drive`).
    pub fn as_str(self) -> &'static str {
        match self {
            Engine::Syncthing => "Syncthing",
            Engine::Dropbox => "Dropbox",
            Engine::Nextcloud => "Nextcloud/ownCloud",
            Engine::ICloud => "iCloud",
            Engine::ResilioSync => "Resilio Sync",
            Engine::CloudStorage => "cloud storage",
            Engine::Unknown => "unknown engine",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reduce_id_table() {
        // Digests from `printf '%s' ID | sha256sum`, not from the code under test.
        let cases = [
            ("abc-def_1.2", "abc-def_1.2".to_string()),
            ("abc-DEF_1.2", "abc-def_1.2-832ae800".to_string()),
            ("ABC", "abc-b5d4045c".to_string()),
            ("a b", "a_b-c8687a08".to_string()),
            ("a/b", "a_b-c14cddc0".to_string()),
            ("", "_-e3b0c442".to_string()),
            // Already shaped like a suffix: suffixed, so no id can take its name.
            ("laptop-3f9c2a1b", "laptop-3f9c2a1b-8edc2e6c".to_string()),
            ("..hidden", format!("hidden-{}", hash8("..hidden"))),
            ("é", format!("_-{}", hash8("é"))),
            (
                "x.sync-conflict-1",
                format!("x.sync_conflict-1-{}", hash8("x.sync-conflict-1")),
            ),
            ("x.tmp", format!("x_tmp-{}", hash8("x.tmp"))),
            ("x.tmp.y", "x.tmp.y".to_string()),
        ];
        for (id, want) in cases {
            assert_eq!(reduce_id(id), want, "{id:?}");
        }
        let long = "x".repeat(150);
        let r = reduce_id(&long);
        assert_eq!(r.len(), MAX_ID_BYTES + 9);
        assert!(r.starts_with(&"x".repeat(100)));
    }

    #[test]
    fn instance_parts_hold_no_dot_and_no_device_name() {
        let cases = [
            ("laptop", "laptop".to_string()),
            ("a.b", format!("a_b-{}", hash8("a.b"))),
            ("con", format!("con_-{}", hash8("con"))),
            ("LPT1", format!("lpt1_-{}", hash8("LPT1"))),
            ("con1", "con1".to_string()),
        ];
        for (id, want) in cases {
            assert_eq!(reduce_instance_id(id), want, "{id:?}");
        }
        assert_ne!(file_name("a.b", "c"), file_name("a", "b.c"));
    }

    #[test]
    fn hash_is_stable() {
        // SHA-256("a b") begins c8687a08 (`printf 'a b' | sha256sum`): pinned
        // so that names stay the same across versions and platforms.
        assert_eq!(hash8("a b"), "c8687a08");
        assert_eq!(reduce_id("a b"), "a_b-c8687a08");
        assert_eq!(file_name("h-1234", "s1"), "h-1234.s1.json");
    }

    #[test]
    fn a_sync_temp_names_the_record_it_replaces() {
        let cases = [
            (".syncthing.host-1.sess.json.tmp", Some("host-1.sess.json")),
            ("~syncthing~host-1.sess.json.tmp", Some("host-1.sess.json")),
            (".host-1.sess.json.~1a2b3c", Some("host-1.sess.json")),
            (
                ".syncthing.host-1.sess.sync-conflict-20261130-101112-ABCDEFG.json.tmp",
                Some("host-1.sess.sync-conflict-20261130-101112-ABCDEFG.json"),
            ),
            // Not records: nothing waits for them.
            (".syncthing..stignore.tmp", None),
            (".syncthing.notes.txt.tmp", None),
            (".host-1.sess.json.~", None),
            (".host-1.sess.json.~xyz", None),
            (".host-1.sess.json.icloud", None),
            (".host-1.sess.json.1234.abcdef.tmp", None),
            ("host-1.sess.json", None),
        ];
        for (name, want) in cases {
            assert_eq!(replaced_by(name), want, "{name}");
        }
        for temp in syncthing_temps("h.s.json") {
            assert_eq!(replaced_by(&temp), Some("h.s.json"), "{temp}");
        }
    }

    #[test]
    fn classify_table() {
        use Engine::*;
        use NameKind::*;
        let cases = [
            ("host-1.sess.json", Record),
            (
                "host-1.sess.sync-conflict-20261130-101112-ABCDEFG.json",
                ConflictCopy(Syncthing),
            ),
            (
                "host-1.sess.sync-conflict-20261130-101112-.json",
                ConflictCopy(Syncthing),
            ),
            (
                "host-1.sess (laptop's conflicted copy 2026-11-30).json",
                ConflictCopy(Dropbox),
            ),
            (
                "host-1.sess (conflicted copy 2026-11-30 101112).json",
                ConflictCopy(Nextcloud),
            ),
            ("host-1.sess 2.json", ConflictCopy(ICloud)),
            ("host-1.sess (1).json", ConflictCopy(Unknown)),
            (".host-1.sess.json.1234.abcdef.tmp", OwnTemp),
            // Only a temp named after a record, with a pid and a random part, is ours.
            (".notes.tmp", Hidden),
            (".host-1.sess.json.tmp", Hidden),
            (".host-1.sess.json.12a.abcdef.tmp", Hidden),
            (".host-1.sess.json.1234..tmp", Hidden),
            (".host-1.sess 2.json.1234.abcdef.tmp", Hidden),
            ("..host-1.sess.json.1234.abcdef.tmp", Hidden),
            (".syncthing.host-1.sess.json.tmp", SyncTemp(Syncthing)),
            ("~syncthing~host-1.sess.json.tmp", SyncTemp(Syncthing)),
            (".host-1.sess.json.~1a2b3c", SyncTemp(Nextcloud)),
            (".host-1.sess.json.icloud", SyncTemp(ICloud)),
            (".stfolder", Hidden),
            (".hidden.json", Hidden),
            ("notes.txt", Other),
            (".json", Hidden),
            ("x.json.bak", Other),
        ];
        for (name, want) in cases {
            assert_eq!(classify(name), want, "{name}");
        }
    }

    #[test]
    fn own_names_classify_as_records() {
        for id in [
            "a b",
            "..x",
            "x (1)",
            "x 2",
            "sync-conflict",
            "",
            ".",
            "x.tmp",
        ] {
            assert_eq!(classify(&file_name("h", id)), NameKind::Record, "{id}");
            assert_eq!(classify(&file_name(id, "s")), NameKind::Record, "{id}");
        }
        assert_eq!(
            classify(&file_name("h", "sync-conflict-20261130-101112-A")),
            NameKind::Record
        );
    }

    /// Ids built from the shapes that could make a name mistaken: conflict
    /// infixes, temp and json suffixes, dots, spaces, case variants, device
    /// names, suffix look-alikes, non-ASCII.
    fn adversarial_id() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let token = prop::sample::select(vec![
            "a",
            "A",
            "b",
            "B",
            ".",
            "..",
            " ",
            "-",
            "_",
            "/",
            "~",
            "é",
            "É",
            ".sync-conflict-",
            "SYNC-CONFLICT",
            " (conflicted copy ",
            "'s conflicted copy",
            " 2.json",
            ".tmp",
            ".TMP",
            ".json",
            "~syncthing~",
            ".icloud",
            ".~1a",
            "con",
            "NUL",
            "-1a2b3c4d",
            "-e3b0c442",
        ]);
        prop_oneof![
            prop::collection::vec(token, 0..8).prop_map(|v| v.concat()),
            "\\PC{0,40}",
            "[a-zA-Z0-9._-]{0,120}",
            "[a-z0-9._-]{0,12}",
        ]
    }

    /// Two `(instance, session)` pairs, the second often a near neighbour of
    /// the first: its letter case toggled here and there, the dot between the
    /// parts moved, or the parts swapped.
    fn pair_and_neighbour()
    -> impl proptest::strategy::Strategy<Value = ((String, String), (String, String))> {
        use proptest::prelude::*;
        let ids = || (adversarial_id(), adversarial_id());
        (ids(), ids(), any::<u64>()).prop_map(|((i, s), other, bits)| {
            let toggle = |t: &str, salt: u32| -> String {
                t.chars()
                    .enumerate()
                    .map(|(k, c)| {
                        if bits.rotate_left(salt + k as u32) & 1 == 1 {
                            if c.is_ascii_lowercase() {
                                c.to_ascii_uppercase()
                            } else {
                                c.to_ascii_lowercase()
                            }
                        } else {
                            c
                        }
                    })
                    .collect()
            };
            let joined = format!("{i}.{s}");
            let dots: Vec<usize> = joined.match_indices('.').map(|(p, _)| p).collect();
            let neighbour = match bits % 4 {
                0 => other,
                1 => (toggle(&i, 0), toggle(&s, 17)),
                2 => {
                    let p = dots[(bits / 4) as usize % dots.len()];
                    (joined[..p].to_string(), joined[p + 1..].to_string())
                }
                _ => (s.clone(), i.clone()),
            };
            ((i, s), neighbour)
        })
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(3000))]

        #[test]
        fn own_names_are_plain_records(
            name in "\\PC{0,60}",
            instance in adversarial_id(),
            session in adversarial_id(),
        ) {
            let _ = classify(&name);
            let own = file_name(&instance, &session);
            proptest::prop_assert_eq!(classify(&own), NameKind::Record, "{}", own);
            proptest::prop_assert!(own.len() <= 255, "{} bytes", own.len());
            proptest::prop_assert!(
                own.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-')),
                "{}", own
            );
            // Its temp file is ours, and only ours.
            let temp = format!(".{own}.4242.aB3xYz.tmp");
            proptest::prop_assert_eq!(classify(&temp), NameKind::OwnTemp, "{}", temp);
        }

        #[test]
        fn distinct_ids_never_share_a_name_even_ignoring_case((a, b) in pair_and_neighbour()) {
            if a != b {
                let (x, y) = (file_name(&a.0, &a.1), file_name(&b.0, &b.1));
                proptest::prop_assert!(!x.eq_ignore_ascii_case(&y), "{:?} {:?} -> {}", a, b, x);
            }
        }
    }

    #[test]
    fn near_ids_never_share_a_name_even_ignoring_case() {
        // Every pair from ids that differ by case, a dot's position or a
        // reduced character: the collisions a random search rarely meets.
        let ids = [
            "a",
            "A",
            "a.b",
            "a_b",
            "a b",
            "A.B",
            "a.B",
            "b",
            "b.c",
            "a.b.c",
            "c",
            "",
            ".",
            "_",
            "con",
            "CON",
            "x.tmp",
            "x_tmp",
            "x.TMP",
            "sync-conflict",
            "sync_conflict",
            "é",
            "_-",
            "a-1a2b3c4d",
            "a_b-c8687a08",
        ];
        let mut seen = std::collections::HashMap::new();
        for i in ids {
            for s in ids {
                let name = file_name(i, s).to_ascii_lowercase();
                if let Some(prev) = seen.insert(name.clone(), (i, s)) {
                    panic!("{prev:?} and {:?} share {name}", (i, s));
                }
            }
        }
    }
}
