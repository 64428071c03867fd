//! One integration test binary driving the real `presence` executable.
#![allow(clippy::unwrap_used, clippy::expect_used)]
// Tests print what they measured and drive terminals of their own.
#![allow(clippy::disallowed_macros, clippy::disallowed_methods)]

mod harness;

mod authorship;
mod claude_hook;
mod cli;
mod clocks;
mod differential;
mod dirs;
mod discover;
mod docs;
mod doctor;
mod errors;
mod faults;
mod hermes;
/// The Hermes release and its virtual environment (shared with the
/// library's unit tests).
#[path = "../support/hermes_venv.rs"]
mod hermes_venv;
mod hostile;
mod layers;
mod lifecycle;
mod list;
mod lives;
mod no_panic;
mod notify;
mod open;
mod patch;
mod redact;
mod scan_cache;
mod setup;
mod syncthing;
mod table;
mod terminal;
mod watch;
