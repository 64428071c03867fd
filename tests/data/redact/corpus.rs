// Reading the redaction corpora, shared by the unit tests (`src/redact/tests.rs`)
// and the end-to-end tests (`tests/integration/redact.rs`) through
// `include!`; `REDACTED` must be in scope where it is included.

/// The strings of a corpus file: one per line, `\n` a newline and `\\` a
/// backslash; blank lines and lines starting with `# ` are comments.
fn corpus(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| !l.is_empty() && !l.starts_with("# "))
        .map(|l| {
            l.replace("\\\\", "\u{0}")
                .replace("\\n", "\n")
                .replace('\u{0}', "\\")
        })
        .collect()
}

/// A secret-corpus line: the input (markers removed), the expected output
/// (each `⟦…⟧` part replaced by `REDACTED`) and the marked parts.
fn marked(line: &str) -> (String, String, Vec<String>) {
    let (mut input, mut want, mut parts) = (String::new(), String::new(), Vec::new());
    let mut rest = line;
    while let Some(open) = rest.find('⟦') {
        let close = open + rest[open..].find('⟧').expect("closed marker");
        let part = &rest[open + '⟦'.len_utf8()..close];
        input.push_str(&rest[..open]);
        want.push_str(&rest[..open]);
        input.push_str(part);
        want.push_str(REDACTED);
        parts.push(part.to_string());
        rest = &rest[close + '⟧'.len_utf8()..];
    }
    input.push_str(rest);
    want.push_str(rest);
    (input, want, parts)
}
