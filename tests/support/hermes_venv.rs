// The Hermes Agent release the tests drive, in the virtual environment
// `scripts/test` makes. One file for the two test crates that need it:
// the library's unit tests (`src/discover/hermes.rs`) and
// `tests/integration` include it (by path, and with `include!`).

use std::path::{Path, PathBuf};

/// The release the tests run against; `scripts/test` installs the same
/// (a test in `tests/integration/docs.rs` holds the two together).
pub const HERMES_VERSION: &str = "0.19.0";

/// The marker file `scripts/test` writes once the environment is complete.
pub fn marker() -> String {
    format!("installed-hermes-agent-{HERMES_VERSION}")
}

/// The virtual environment with Hermes in it ($PRESENCE_TEST_HERMES_VENV,
/// else `target/hermes-venv`), or a failure saying how to make it.
pub fn venv() -> PathBuf {
    let venv = std::env::var_os("PRESENCE_TEST_HERMES_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target/hermes-venv"));
    if !venv.join(marker()).is_file() {
        let v = venv.display();
        panic!(
            "these tests need hermes-agent {HERMES_VERSION} in a virtual environment at {v}: \
             run scripts/test, which makes it, or: python3 -m venv {v} && \
             {v}/bin/pip install --no-deps hermes-agent=={HERMES_VERSION} && \
             {v}/bin/pip install pyyaml==6.0.3 python-dotenv==1.2.2 rich==14.3.3 && \
             touch {v}/{}",
            marker()
        );
    }
    venv
}
