//! Rows for the binary's unit tests.

use presence::Row;

/// A live row of another device's session `session`, in `f.json`.
pub fn row(session: &str) -> Row {
    let mut r = presence::Record::new(session);
    r.profile = "default".into();
    r.client = "terminal".into();
    r.host = "laptop".into();
    Row {
        record: r,
        file: "f.json".into(),
        dir: None,
        dir_index: 0,
        live: true,
        state: presence::State::Live,
        local: false,
        conflict_copy: false,
        age_s: 1.0,
        claimed_age_s: None,
        expires_in_s: Some(89.0),
        superseded_by: None,
        lost_because: None,
        verified: false,
        forged: None,
        writer_offset_s: None,
        redactions: Vec::new(),
    }
}
