//! Runs redaction over the lines of standard input and prints each line it
//! would change (before and after, with the kinds), then a count. A way to
//! check the rules against text of your own:
//!
//! ```sh
//! cargo run --example redact_lines < notes.txt
//! ```
// A program of its own, with its own output.
#![allow(clippy::disallowed_macros, clippy::disallowed_methods)]

use std::io::BufRead;

fn main() -> std::io::Result<()> {
    let (mut lines, mut changed) = (0usize, 0usize);
    for line in std::io::stdin().lock().split(b'\n') {
        let line = String::from_utf8_lossy(&line?).into_owned();
        lines += 1;
        let (out, kinds) = presence::redact_text(&line);
        if !kinds.is_empty() {
            changed += 1;
            println!("- {line}\n+ {out}\n  {}", kinds.join(", "));
        }
    }
    println!("{changed} of {lines} lines changed");
    Ok(())
}
