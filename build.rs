//! Embeds `git describe` (when built from a git checkout) for `--version`.
// A build script speaks to cargo on stdout.
#![allow(clippy::disallowed_macros)]

fn main() {
    println!("cargo:rerun-if-changed=.git/HEAD");
    println!("cargo:rerun-if-changed=.git/refs");
    let describe = std::process::Command::new("git")
        .args(["describe", "--tags", "--always"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    println!("cargo:rustc-env=PRESENCE_GIT_DESCRIBE={describe}");
}
