//! `presence open`: turning a record's endpoint hint into the argv of a
//! handler, and nothing else. Pure functions, no I/O: the binary runs what
//! [`argv`] returns.
//!
//! An endpoint comes from another device and may be hostile, so it is data
//! that fills slots, never a command. It is parsed by its scheme; every part
//! is checked (ASCII only, no control characters, no whitespace, no leading
//! `-`, a character set per part); each placeholder of a handler template
//! becomes part of exactly one argv element; no shell runs on this side.
//! What ssh hands to the remote shell is joined there into one command line,
//! so those values are single-quoted for it (built-in `ssh`) or must stay in
//! a conservative character set (the remote `tmux` session, every value a
//! configured template uses).

use std::collections::BTreeMap;

use crate::redact::REDACTED;
use crate::row::Row;

/// The schemes with a built-in handler.
pub const BUILTIN_SCHEMES: [&str; 5] = ["http", "https", "mosh", "ssh", "tmux"];

/// The placeholders a handler template may use.
pub const PLACEHOLDERS: [&str; 9] = [
    "url",
    "scheme",
    "user",
    "host",
    "port",
    "user_at_host",
    "path",
    "session",
    "session_id",
];

/// Why an endpoint cannot be opened. The message names the part at fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum OpenError {
    /// The record has no endpoint.
    #[error("the session has no endpoint to open (its publisher set none)")]
    NoEndpoint,
    /// The endpoint carried a credential and was redacted.
    #[error("the endpoint was redacted (it carried a credential) and cannot be opened")]
    Redacted,
    /// A part of the endpoint (or a value a handler needs) is refused.
    #[error("refused to open: the endpoint's {field} {value:?} {why}")]
    Invalid {
        /// The part: `endpoint`, `scheme`, `user`, `host`, `port`, `path`,
        /// `session` or `session_id`.
        field: &'static str,
        /// The value as found (shown escaped).
        value: String,
        /// What is wrong with it.
        why: String,
    },
    /// No handler, built-in or configured, for the scheme.
    #[error("no handler for scheme '{scheme}'; handlers exist for: {known}")]
    UnknownScheme {
        /// The endpoint's scheme.
        scheme: String,
        /// The schemes with a handler, comma-separated.
        known: String,
    },
    /// A configured handler template is unusable.
    #[error("handler [open.handlers.{scheme}]: {why}")]
    Template {
        /// The scheme whose handler it is.
        scheme: String,
        /// What is wrong with it.
        why: String,
    },
}

fn invalid(field: &'static str, value: &str, why: impl Into<String>) -> OpenError {
    OpenError::Invalid {
        field,
        value: value.to_string(),
        why: why.into(),
    }
}

/// An endpoint parsed as `SCHEME://[USER@]HOST[:PORT][/PATH]`, every part
/// checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// The endpoint as written.
    pub url: String,
    /// The scheme, lower-cased.
    pub scheme: String,
    /// The user before `@`, if any.
    pub user: Option<String>,
    /// The host; an IPv6 literal without its brackets.
    pub host: String,
    /// The port, if any.
    pub port: Option<u16>,
    /// The path, percent-decoded, with its leading `/`; empty when none.
    pub path: String,
}

impl Endpoint {
    /// Parses and checks `text`. Refuses anything that is not plainly a
    /// URL of this shape: a redacted value, non-ASCII characters (a
    /// lookalike of `-` or `/` is not one), whitespace, control characters,
    /// a `%` outside the path, a query or fragment outside http(s).
    pub fn parse(text: &str) -> Result<Endpoint, OpenError> {
        if text.is_empty() {
            return Err(OpenError::NoEndpoint);
        }
        if text.contains(REDACTED) {
            return Err(OpenError::Redacted);
        }
        plain("endpoint", text)?;
        let Some((scheme, rest)) = text.split_once("://") else {
            return Err(invalid(
                "endpoint",
                text,
                "does not parse as SCHEME://HOST/…",
            ));
        };
        let scheme_ok = scheme.starts_with(|c: char| c.is_ascii_alphabetic())
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
        if !scheme_ok {
            return Err(invalid("scheme", scheme, "is not a URL scheme"));
        }
        let scheme = scheme.to_ascii_lowercase();
        let web = scheme == "http" || scheme == "https";
        let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        let (authority, tail) = rest.split_at(end);
        let (path, query) = match tail.find(['?', '#']) {
            Some(i) => tail.split_at(i),
            None => (tail, ""),
        };
        if !query.is_empty() && !web {
            return Err(invalid(
                "endpoint",
                text,
                format!("has a query or fragment, which {scheme}:// does not take"),
            ));
        }
        let (user, hostport) = match authority.rsplit_once('@') {
            Some((u, h)) => (Some(u), h),
            None => (None, authority),
        };
        if let Some(u) = user {
            check_user(u)?;
        }
        let (host, port) = split_host_port(hostport)?;
        let path = percent_decode(path).ok_or_else(|| {
            invalid(
                "path",
                path,
                "has a bad percent-encoding or is not UTF-8 once decoded",
            )
        })?;
        // What --print and the confirmation show must reach a terminal
        // as it is: nothing the sanitizer would escape (controls, bidi
        // and invisible characters, a backslash).
        if crate::text::terminal_safe(&path) != path {
            return Err(invalid(
                "path",
                &path,
                "contains a control, invisible or bidi character or a backslash once decoded",
            ));
        }
        Ok(Endpoint {
            url: text.to_string(),
            scheme,
            user: user.map(str::to_string),
            host,
            port,
            path,
        })
    }

    /// `USER@HOST`, or `HOST` without a user.
    pub fn user_at_host(&self) -> String {
        match &self.user {
            Some(u) => format!("{u}@{}", self.host),
            None => self.host.clone(),
        }
    }

    /// The tmux session a `tmux://HOST/SESSION` endpoint names, checked.
    pub fn tmux_session(&self) -> Result<String, OpenError> {
        let session = self.path.strip_prefix('/').unwrap_or(&self.path);
        if session.is_empty() {
            return Err(invalid(
                "session",
                session,
                "is empty (write tmux://HOST/SESSION)",
            ));
        }
        let ok = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '+' | '@' | ',');
        no_dash("session", session)?;
        // A tmux target: SESSION, or SESSION:WINDOW[.PANE] with indexes
        // (what `publish` and `run` write, so that two panes of one tmux
        // session are two endpoints).
        let (name, place) = match session.split_once(':') {
            Some((name, place)) => (name, Some(place)),
            None => (session, None),
        };
        if let Some(c) = name.chars().find(|&c| !ok(c)) {
            return Err(invalid(
                "session",
                session,
                format!("contains {c:?}; a session name is letters, digits and _-+@,"),
            ));
        }
        if let Some(place) = place {
            let index =
                |t: &str| !t.is_empty() && t.len() <= 6 && t.bytes().all(|b| b.is_ascii_digit());
            let fits = match place.split_once('.') {
                Some((window, pane)) => index(window) && index(pane),
                None => index(place),
            };
            if name.is_empty() || !fits {
                return Err(invalid(
                    "session",
                    session,
                    "is not SESSION or SESSION:WINDOW[.PANE] with numeric indexes",
                ));
            }
        }
        Ok(session.to_string())
    }
}

/// Refuses what no part of any endpoint may hold.
fn plain(field: &'static str, value: &str) -> Result<(), OpenError> {
    if let Some(c) = value.chars().find(|c| !c.is_ascii()) {
        return Err(invalid(
            field,
            value,
            format!("contains the non-ASCII character {c:?} (percent-encode it)"),
        ));
    }
    if value.chars().any(|c| c.is_ascii_control()) {
        return Err(invalid(field, value, "contains a control character"));
    }
    if value.chars().any(|c| c.is_ascii_whitespace()) {
        return Err(invalid(field, value, "contains whitespace"));
    }
    Ok(())
}

fn no_dash(field: &'static str, value: &str) -> Result<(), OpenError> {
    if value.starts_with('-') {
        return Err(invalid(
            field,
            value,
            "starts with '-' (it would read as an option)",
        ));
    }
    Ok(())
}

fn check_user(user: &str) -> Result<(), OpenError> {
    if user.is_empty() {
        return Err(invalid("user", user, "is empty"));
    }
    no_dash("user", user)?;
    if user.contains(':') {
        return Err(invalid("user", user, "carries a password"));
    }
    let ok = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-');
    if let Some(c) = user.chars().find(|&c| !ok(c)) {
        return Err(invalid(
            "user",
            user,
            format!("contains {c:?}; a user name is letters, digits and ._-"),
        ));
    }
    Ok(())
}

fn split_host_port(hostport: &str) -> Result<(String, Option<u16>), OpenError> {
    let (host, port) = if let Some(inner) = hostport.strip_prefix('[') {
        let Some((v6, after)) = inner.split_once(']') else {
            return Err(invalid("host", hostport, "has '[' without ']'"));
        };
        let ok = |c: char| c.is_ascii_hexdigit() || matches!(c, ':' | '.');
        if v6.is_empty() || !v6.contains(':') || v6.chars().any(|c| !ok(c)) {
            return Err(invalid("host", v6, "is not an IPv6 address"));
        }
        let port = match after {
            "" => None,
            p => Some(p.strip_prefix(':').ok_or_else(|| {
                invalid("host", hostport, "has text after ']' that is not :PORT")
            })?),
        };
        (v6.to_string(), port)
    } else {
        let (host, port) = match hostport.split_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (hostport, None),
        };
        if host.is_empty() {
            return Err(invalid("host", host, "is empty"));
        }
        no_dash("host", host)?;
        let ok = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_');
        if let Some(c) = host.chars().find(|&c| !ok(c)) {
            return Err(invalid(
                "host",
                host,
                format!("contains {c:?}; a host name is letters, digits and .-_"),
            ));
        }
        if host.starts_with('.') || host.len() > 253 {
            return Err(invalid("host", host, "is not a host name"));
        }
        (host.to_string(), port)
    };
    let port = match port {
        None => None,
        Some(p) => match p.parse::<u16>() {
            Ok(n) if n > 0 && p.bytes().all(|b| b.is_ascii_digit()) => Some(n),
            _ => return Err(invalid("port", p, "is not a port number (1-65535)")),
        },
    };
    Ok((host, port))
}

/// Decodes `%XX`; None for a malformed escape or bytes that are not UTF-8.
fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// Whether a value needs no shell quoting: letters, digits and `_-+@,.:/`,
/// not empty, not starting with `=` or `~` (which some shells expand at
/// the start of a word).
fn bare(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with(['=', '~'])
        && s.chars().all(|c| {
            c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '+' | '@' | ',' | '.' | ':' | '/')
        })
}

/// Whether a value may reach a remote shell as it is: [`bare`], and not an
/// option either.
fn shell_safe(s: &str) -> bool {
    bare(s) && !s.starts_with('-')
}

/// Quotes `s` for a POSIX shell: bare when it holds only letters, digits and
/// `_-+@,.:/` (and does not start with `=` or `~`), else in single
/// quotes (a `'` inside becomes `'\''`). Used for what ssh hands to the
/// remote shell, and by `--print`.
pub fn shell_quote(s: &str) -> String {
    if bare(s) {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// An argv as one shell-quoted line.
pub fn shell_line(argv: &[String]) -> String {
    argv.iter()
        .map(|a| shell_quote(a))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The handlers in force: the built-ins, overridden or extended per scheme
/// by the configuration's `[open.handlers.SCHEME] command = [...]`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Handlers {
    configured: BTreeMap<String, Vec<String>>,
}

impl Handlers {
    /// Checks each configured template: not empty, a literal program
    /// (no placeholder in the first element), only known placeholders.
    pub fn new(configured: BTreeMap<String, Vec<String>>) -> Result<Handlers, OpenError> {
        let mut checked = BTreeMap::new();
        for (scheme, command) in configured {
            let bad = |why: String| OpenError::Template {
                scheme: scheme.clone(),
                why,
            };
            let Some(program) = command.first() else {
                return Err(bad("`command` is empty".into()));
            };
            if program.is_empty() || program.contains(['{', '}']) {
                return Err(bad(
                    "the program (the first element of `command`) must be a literal name".into(),
                ));
            }
            for element in &command[1..] {
                pieces(element).map_err(bad)?;
            }
            checked.insert(scheme.to_ascii_lowercase(), command);
        }
        Ok(Handlers {
            configured: checked,
        })
    }

    /// The configured template for `scheme`, if any.
    pub fn configured(&self, scheme: &str) -> Option<&[String]> {
        self.configured.get(scheme).map(Vec::as_slice)
    }

    /// Every scheme with a handler, sorted.
    pub fn schemes(&self) -> Vec<String> {
        let mut all: Vec<String> = BUILTIN_SCHEMES.iter().map(|s| s.to_string()).collect();
        all.extend(self.configured.keys().cloned());
        all.sort();
        all.dedup();
        all
    }
}

/// What a built-in handler runs, for `presence config show`. `opener` is
/// the platform's (see [`platform_opener`]).
pub fn builtin_description(scheme: &str, opener: &str) -> Option<String> {
    // Shell-like notation, `[…]` optional; no shell ever runs it.
    let d = match scheme {
        "tmux" => "tmux attach -t {session}  (HOST is this machine), else \
                   ssh -t [-p {port}] -- {user_at_host} tmux attach -t {session}"
            .to_string(),
        "ssh" => "ssh -t [-p {port}] -- {user_at_host} \
                  ['cd -- {path} && exec \"${SHELL:-/bin/sh}\" -l']"
            .to_string(),
        "mosh" => "mosh [--ssh='ssh -p {port}'] -- {user_at_host}".to_string(),
        "http" | "https" => format!("{opener} {{url}}"),
        _ => return None,
    };
    Some(d)
}

/// The program that opens a URL on this platform.
pub fn platform_opener() -> &'static str {
    if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    }
}

/// One piece of a template element: literal text or a placeholder.
enum Piece<'a> {
    Text(&'a str),
    Slot(&'a str),
}

fn pieces(element: &str) -> Result<Vec<Piece<'_>>, String> {
    let mut out = Vec::new();
    let mut rest = element;
    while let Some(open) = rest.find(['{', '}']) {
        if rest[open..].starts_with('}') {
            return Err(format!("'}}' without '{{' in {element:?}"));
        }
        out.push(Piece::Text(&rest[..open]));
        let Some(close) = rest[open..].find('}') else {
            return Err(format!("'{{' without '}}' in {element:?}"));
        };
        let name = &rest[open + 1..open + close];
        if !PLACEHOLDERS.contains(&name) {
            return Err(format!(
                "unknown placeholder {{{name}}}; known: {}",
                PLACEHOLDERS.map(|p| format!("{{{p}}}")).join(" ")
            ));
        }
        out.push(Piece::Slot(name));
        rest = &rest[open + close + 1..];
    }
    out.push(Piece::Text(rest));
    Ok(out)
}

/// Where the argv will run.
#[derive(Debug, Clone, Copy)]
pub struct Target<'a> {
    /// This machine's host name: a `tmux://` endpoint on it attaches locally.
    pub this_host: &'a str,
    /// The record's session id, for `{session_id}`.
    pub session_id: &'a str,
    /// The URL opener for http(s) ([`platform_opener`]).
    pub opener: &'a str,
}

/// The argv that opens `endpoint` under `handlers`: a configured handler
/// for its scheme wins over the built-in one. Refuses (naming the part)
/// rather than ever passing a doubtful value on.
pub fn argv(
    endpoint: &str,
    handlers: &Handlers,
    target: Target<'_>,
) -> Result<Vec<String>, OpenError> {
    let ep = Endpoint::parse(endpoint)?;
    if let Some(template) = handlers.configured(&ep.scheme) {
        return expand(template, &ep, target);
    }
    let s = |x: &str| x.to_string();
    let mut argv = Vec::new();
    match ep.scheme.as_str() {
        "tmux" => {
            let session = ep.tmux_session()?;
            if ep.user.is_none() && ep.port.is_none() && same_host(&ep.host, target.this_host) {
                argv.extend([s("tmux"), s("attach"), s("-t"), session]);
            } else {
                argv.extend(ssh_prefix(&ep));
                // ssh joins these into one line for the remote shell; the
                // session name is in a set that needs no quoting, quoted anyway.
                argv.extend([s("tmux"), s("attach"), s("-t"), shell_quote(&session)]);
            }
        }
        "ssh" => {
            argv.extend(ssh_prefix(&ep));
            if let Some(cd) = remote_cd(&ep.path) {
                argv.push(format!("{cd} && exec \"${{SHELL:-/bin/sh}}\" -l"));
            }
        }
        "mosh" => {
            if !matches!(ep.path.as_str(), "" | "/") {
                return Err(invalid(
                    "path",
                    &ep.path,
                    "is not used by mosh:// (write mosh://[USER@]HOST[:PORT])",
                ));
            }
            argv.push(s("mosh"));
            if let Some(p) = ep.port {
                argv.push(format!("--ssh=ssh -p {p}"));
            }
            argv.extend([s("--"), ep.user_at_host()]);
        }
        "http" | "https" => argv.extend([s(target.opener), ep.url.clone()]),
        _ => {
            return Err(OpenError::UnknownScheme {
                scheme: ep.scheme.clone(),
                known: handlers.schemes().join(", "),
            });
        }
    }
    Ok(argv)
}

/// `ssh -t [-p PORT] -- [USER@]HOST`: `--` so that nothing after it reads
/// as an option, whatever slipped through.
fn ssh_prefix(ep: &Endpoint) -> Vec<String> {
    let mut argv = vec!["ssh".to_string(), "-t".to_string()];
    if let Some(p) = ep.port {
        argv.extend(["-p".to_string(), p.to_string()]);
    }
    argv.extend(["--".to_string(), ep.user_at_host()]);
    argv
}

/// The remote `cd` for an ssh path, quoted for the remote shell: `/~` and
/// `/~/…` are under the remote home, anything else is absolute. None for
/// no path.
fn remote_cd(path: &str) -> Option<String> {
    match path {
        "" | "/" => None,
        "/~" | "/~/" => Some("cd".to_string()),
        _ => Some(match path.strip_prefix("/~/") {
            Some(rest) => format!("cd -- ~/{}", shell_quote(rest)),
            None => format!("cd -- {}", shell_quote(path)),
        }),
    }
}

fn same_host(host: &str, this: &str) -> bool {
    let first = |h: &str| h.split('.').next().unwrap_or(h).to_ascii_lowercase();
    host.eq_ignore_ascii_case("localhost")
        || host.eq_ignore_ascii_case(this)
        || (!this.is_empty() && first(host) == first(this))
}

/// Fills a configured template. A value is checked when the template uses
/// it: a configured program may hand anything to a remote shell, so every
/// value but `{url}` (one whole argument, checked by the parse) must be in
/// the set that needs no quoting.
fn expand(
    template: &[String],
    ep: &Endpoint,
    target: Target<'_>,
) -> Result<Vec<String>, OpenError> {
    let missing = |name: &str| {
        invalid(
            "endpoint",
            &ep.url,
            format!(
                "has no {name}, which the {} handler's {{{name}}} needs",
                ep.scheme
            ),
        )
    };
    let value = |name: &str| -> Result<String, OpenError> {
        let (field, v): (&'static str, String) = match name {
            "url" => return Ok(ep.url.clone()),
            "scheme" => ("scheme", ep.scheme.clone()),
            "user" => ("user", ep.user.clone().ok_or_else(|| missing("user"))?),
            "host" => ("host", ep.host.clone()),
            "port" => ("port", ep.port.ok_or_else(|| missing("port"))?.to_string()),
            "user_at_host" => ("host", ep.user_at_host()),
            "path" => {
                if ep.path.is_empty() {
                    return Err(missing("path"));
                }
                ("path", ep.path.clone())
            }
            "session" => return ep.tmux_session(),
            _ => ("session_id", target.session_id.to_string()),
        };
        if !shell_safe(&v) {
            return Err(invalid(
                field,
                &v,
                "is refused by a configured handler: it may only hold letters, digits \
                 and _-+@,.:/ and may not start with - = ~",
            ));
        }
        Ok(v)
    };
    let mut argv = vec![template[0].clone()];
    for element in &template[1..] {
        let mut arg = String::new();
        for piece in pieces(element).map_err(|why| OpenError::Template {
            scheme: ep.scheme.clone(),
            why,
        })? {
            match piece {
                Piece::Text(t) => arg.push_str(t),
                Piece::Slot(name) => arg.push_str(&value(name)?),
            }
        }
        argv.push(arg);
    }
    Ok(argv)
}

/// Which live row an ID names.
#[derive(Debug, PartialEq)]
pub enum Resolved<'a> {
    /// The newest record of the one session the ID names.
    One(&'a Row),
    /// No session id or key is, or starts with, the ID.
    None,
    /// The ID is a prefix of several sessions' ids: these.
    Ambiguous(Vec<String>),
}

/// Resolves `id` among `rows`: a session id or key equal to it, else the one
/// session whose id or key starts with it; the newest record (by
/// `updated_at`) of that session.
pub fn resolve<'a>(rows: &'a [Row], id: &str) -> Resolved<'a> {
    if id.is_empty() {
        return Resolved::None;
    }
    let newest = |matches: Vec<&'a Row>| {
        matches.into_iter().reduce(|best, r| {
            if r.record.updated_at.unwrap_or(f64::MIN) > best.record.updated_at.unwrap_or(f64::MIN)
            {
                r
            } else {
                best
            }
        })
    };
    let exact: Vec<&Row> = rows
        .iter()
        .filter(|r| r.record.session_id == id || r.record.session_key == id)
        .collect();
    if let Some(row) = newest(exact) {
        return Resolved::One(row);
    }
    let prefixed: Vec<&Row> = rows
        .iter()
        .filter(|r| r.record.session_id.starts_with(id) || r.record.session_key.starts_with(id))
        .collect();
    let mut ids: Vec<String> = prefixed
        .iter()
        .map(|r| r.record.session_id.clone())
        .collect();
    ids.sort();
    ids.dedup();
    match ids.len() {
        0 => Resolved::None,
        1 => newest(prefixed).map_or(Resolved::None, Resolved::One),
        _ => Resolved::Ambiguous(ids),
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    const HERE: Target<'static> = Target {
        this_host: "laptop",
        session_id: "s-1",
        opener: "xdg-open",
    };

    fn builtin(endpoint: &str) -> Result<Vec<String>, OpenError> {
        argv(endpoint, &Handlers::default(), HERE)
    }

    fn v(args: &[&str]) -> Vec<String> {
        args.iter().map(|s| s.to_string()).collect()
    }

    /// The part an error names, or the variant's name.
    fn field(e: &OpenError) -> &'static str {
        match e {
            OpenError::Invalid { field, .. } => field,
            OpenError::NoEndpoint => "<none>",
            OpenError::Redacted => "<redacted>",
            OpenError::UnknownScheme { .. } => "<scheme>",
            OpenError::Template { .. } => "<template>",
        }
    }

    #[test]
    fn builtin_handlers() {
        let cases: &[(&str, &[&str])] = &[
            ("tmux://laptop/work", &["tmux", "attach", "-t", "work"]),
            (
                "tmux://LAPTOP.local/work",
                &["tmux", "attach", "-t", "work"],
            ),
            ("tmux://localhost/w-2", &["tmux", "attach", "-t", "w-2"]),
            ("tmux://laptop/work:1", &["tmux", "attach", "-t", "work:1"]),
            (
                "tmux://laptop/work:1.0",
                &["tmux", "attach", "-t", "work:1.0"],
            ),
            (
                "tmux://desk/work",
                &["ssh", "-t", "--", "desk", "tmux", "attach", "-t", "work"],
            ),
            (
                "tmux://bob@laptop:2222/work",
                &[
                    "ssh",
                    "-t",
                    "-p",
                    "2222",
                    "--",
                    "bob@laptop",
                    "tmux",
                    "attach",
                    "-t",
                    "work",
                ],
            ),
            ("ssh://desk", &["ssh", "-t", "--", "desk"]),
            (
                "ssh://alice@desk:22/",
                &["ssh", "-t", "-p", "22", "--", "alice@desk"],
            ),
            (
                "ssh://desk/srv/app",
                &[
                    "ssh",
                    "-t",
                    "--",
                    "desk",
                    "cd -- /srv/app && exec \"${SHELL:-/bin/sh}\" -l",
                ],
            ),
            (
                "ssh://desk/~/my%20code",
                &[
                    "ssh",
                    "-t",
                    "--",
                    "desk",
                    "cd -- ~/'my code' && exec \"${SHELL:-/bin/sh}\" -l",
                ],
            ),
            (
                "ssh://desk/it's%3Brm%20-rf",
                &[
                    "ssh",
                    "-t",
                    "--",
                    "desk",
                    "cd -- '/it'\\''s;rm -rf' && exec \"${SHELL:-/bin/sh}\" -l",
                ],
            ),
            (
                "ssh://[::1]:2200",
                &["ssh", "-t", "-p", "2200", "--", "::1"],
            ),
            ("ssh://al@[fe80::1]", &["ssh", "-t", "--", "al@fe80::1"]),
            ("mosh://desk", &["mosh", "--", "desk"]),
            (
                "mosh://al@desk:2222/",
                &["mosh", "--ssh=ssh -p 2222", "--", "al@desk"],
            ),
            (
                "https://example.org/a?b=1#c",
                &["xdg-open", "https://example.org/a?b=1#c"],
            ),
            ("HTTP://example.org", &["xdg-open", "HTTP://example.org"]),
        ];
        for (endpoint, want) in cases {
            assert_eq!(builtin(endpoint), Ok(v(want)), "{endpoint}");
        }
    }

    /// Each attempt and the part its refusal names.
    #[test]
    fn injection_attempts_are_refused_naming_the_part() {
        let cases: &[(&str, &str)] = &[
            // Leading dashes in every position.
            ("ssh://-oProxyCommand=sh/x", "host"),
            ("ssh://-oProxyCommand=touch%20x/x", "host"),
            ("ssh://--/x", "host"),
            ("ssh://-/x", "host"),
            ("ssh://-oProxyCommand=x@desk", "user"),
            ("ssh://desk:-22", "port"),
            ("tmux://desk/-t", "session"),
            ("tmux://laptop/--help", "session"),
            // tmux targets: SESSION:WINDOW[.PANE] with indexes only.
            ("tmux://laptop/work:", "session"),
            ("tmux://laptop/:1", "session"),
            ("tmux://laptop/work:a", "session"),
            ("tmux://laptop/work:1.", "session"),
            ("tmux://laptop/work:1.0.2", "session"),
            ("tmux://laptop/work:1:2", "session"),
            ("tmux://laptop/work:-1", "session"),
            ("mosh://--ssh=sh@desk", "user"),
            ("mosh://-desk", "host"),
            ("tmux://-L/x", "host"),
            // Percent-encoded dashes and separators.
            ("ssh://%2DoProxyCommand=x/", "host"),
            ("tmux://laptop/%2Dt", "session"),
            ("tmux://laptop/%2d%2dhelp", "session"),
            ("ssh://%2d@desk", "user"),
            ("tmux://desk/a%3Brm%20-rf%20~", "session"),
            // Shell syntax in a session name.
            ("tmux://desk/;rm -rf ~", "endpoint"),
            ("tmux://desk/;rm%20-rf%20~", "session"),
            ("tmux://desk/$(id)", "session"),
            ("tmux://desk/`id`", "session"),
            ("tmux://desk/a|b", "session"),
            ("tmux://desk/a:b", "session"),
            ("tmux://desk/", "session"),
            ("tmux://desk/a/b", "session"),
            // Spaces, newlines, NUL, other controls.
            ("ssh://desk /x", "endpoint"),
            ("ssh://desk\n-oProxyCommand=x", "endpoint"),
            ("ssh://desk\0", "endpoint"),
            ("ssh://desk\t", "endpoint"),
            ("ssh://desk/a%00b", "path"),
            ("ssh://desk/a%0Ab", "path"),
            ("ssh://desk/a%1b[2J", "path"),
            ("ssh://desk/%ZZ", "path"),
            ("ssh://desk/%E2%80%AEgpj.exe", "path"),
            ("ssh://desk/a%E2%80%8Bb", "path"),
            ("ssh://desk/a%5Cb", "path"),
            ("ssh://desk/a%C2%9Bb", "path"),
            ("ssh://desk/%ff", "path"),
            ("https://example.org/ -x", "endpoint"),
            ("https://example.org/\u{7f}", "endpoint"),
            // Unicode lookalikes of '-', '/' and ':' and IDN hosts.
            ("ssh://\u{2010}oProxyCommand=x/", "endpoint"),
            ("ssh://\u{2212}oProxyCommand=x/", "endpoint"),
            ("ssh://\u{ff0d}oProxyCommand=x/", "endpoint"),
            ("tmux://laptop/\u{2013}t", "endpoint"),
            ("ssh://dеsk/", "endpoint"),
            ("ssh:\u{2215}\u{2215}desk", "endpoint"),
            ("ssh://desk\u{a0}/", "endpoint"),
            ("ssh://desk\u{202e}/", "endpoint"),
            // Hosts and ports that are not.
            ("ssh:///x", "host"),
            ("ssh://alice@/x", "host"),
            ("ssh://desk;id/", "host"),
            ("ssh://de$k/", "host"),
            ("ssh://.desk/", "host"),
            ("ssh://[::1/", "host"),
            ("ssh://[-oProxyCommand]/", "host"),
            ("ssh://[]/", "host"),
            ("ssh://[::1]x/", "host"),
            ("ssh://::1/", "host"),
            ("ssh://fe80::1/", "port"),
            ("ssh://desk:0/", "port"),
            ("ssh://desk:65536/", "port"),
            ("ssh://desk:+22/", "port"),
            ("ssh://desk:/", "port"),
            ("ssh://a:secret@desk/", "user"),
            ("ssh://@desk/", "user"),
            ("ssh://a$b@desk/", "user"),
            // Not a URL, or not this scheme's.
            ("desk", "endpoint"),
            ("-oProxyCommand=x", "endpoint"),
            ("://desk", "scheme"),
            ("1ssh://desk", "scheme"),
            ("s;h://desk", "scheme"),
            ("ssh://desk/x?-o", "endpoint"),
            ("tmux://desk/a#b", "endpoint"),
            ("mosh://desk/home", "path"),
            ("gopher://desk/", "<scheme>"),
            ("ssh://alice:[redacted]@desk/", "<redacted>"),
            ("https://example.org/?token=[redacted]", "<redacted>"),
            ("", "<none>"),
        ];
        for (endpoint, want) in cases {
            match builtin(endpoint) {
                Ok(argv) => panic!("{endpoint:?} was not refused: {argv:?}"),
                Err(e) => assert_eq!(field(&e), *want, "{endpoint:?}: {e}"),
            }
        }
    }

    #[test]
    fn errors_name_the_part_and_escape_the_value() {
        let e = builtin("ssh://-oProxyCommand=x/").unwrap_err();
        assert_eq!(
            e.to_string(),
            "refused to open: the endpoint's host \"-oProxyCommand=x\" starts with '-' \
             (it would read as an option)"
        );
        let e = builtin("ssh://desk\n").unwrap_err().to_string();
        assert!(e.contains(r"\n") && !e.contains('\n'), "{e}");
        let e = builtin("gopher://x").unwrap_err().to_string();
        assert_eq!(
            e,
            "no handler for scheme 'gopher'; handlers exist for: http, https, mosh, ssh, tmux"
        );
    }

    fn handlers(scheme: &str, command: &[&str]) -> Result<Handlers, OpenError> {
        Handlers::new(BTreeMap::from([(scheme.to_string(), v(command))]))
    }

    #[test]
    fn configured_handlers_fill_one_element_per_placeholder() {
        let h = handlers(
            "tmux",
            &[
                "wezterm",
                "ssh",
                "{user_at_host}",
                "--",
                "tmux",
                "attach",
                "-t",
                "{session}",
            ],
        )
        .unwrap();
        assert_eq!(
            argv("tmux://al@desk/work", &h, HERE),
            Ok(v(&[
                "wezterm", "ssh", "al@desk", "--", "tmux", "attach", "-t", "work"
            ]))
        );
        let h = handlers(
            "zed",
            &[
                "zed",
                "--url={url}",
                "{scheme}",
                "{user}",
                "{host}",
                "-p{port}",
                "{path}",
                "{session_id}",
            ],
        )
        .unwrap();
        assert_eq!(
            argv("zed://al@desk:7/src/x", &h, HERE),
            Ok(v(&[
                "zed",
                "--url=zed://al@desk:7/src/x",
                "zed",
                "al",
                "desk",
                "-p7",
                "/src/x",
                "s-1"
            ]))
        );
        assert_eq!(
            h.schemes(),
            v(&["http", "https", "mosh", "ssh", "tmux", "zed"])
        );
        // A configured handler overrides the built-in one.
        let h = handlers("https", &["firefox", "--new-tab", "{url}"]).unwrap();
        assert_eq!(
            argv("https://a.example/", &h, HERE),
            Ok(v(&["firefox", "--new-tab", "https://a.example/"]))
        );
    }

    #[test]
    fn configured_handlers_refuse_what_a_remote_shell_would_read() {
        let h = handlers("ssh", &["kitty", "ssh", "{host}", "cd", "{path}"]).unwrap();
        let e = argv("ssh://desk/a%20b", &h, HERE).unwrap_err();
        assert_eq!(field(&e), "path", "{e}");
        let e = argv("ssh://desk/a%3Bid", &h, HERE).unwrap_err();
        assert_eq!(field(&e), "path", "{e}");
        let e = argv("ssh://desk", &h, HERE).unwrap_err();
        assert!(e.to_string().contains("has no path"), "{e}");
        let h = handlers("ssh", &["x", "{session_id}"]).unwrap();
        let hostile = Target {
            session_id: "-oProxyCommand=x",
            ..HERE
        };
        assert_eq!(
            field(&argv("ssh://desk", &h, hostile).unwrap_err()),
            "session_id"
        );
        let h = handlers("ssh", &["x", "{port}"]).unwrap();
        assert!(
            argv("ssh://desk", &h, HERE)
                .unwrap_err()
                .to_string()
                .contains("has no port")
        );
    }

    #[test]
    fn bad_templates_are_refused() {
        for bad in [
            &[][..],
            &["{host}"],
            &[""],
            &["ssh", "{hots}"],
            &["ssh", "{host"],
            &["ssh", "host}"],
        ] {
            let e = handlers("ssh", bad).unwrap_err();
            assert!(matches!(e, OpenError::Template { .. }), "{bad:?}: {e}");
        }
    }

    #[test]
    fn quoting() {
        let cases = [
            ("plain-1.2:x/y@z,+_", "plain-1.2:x/y@z,+_"),
            ("", "''"),
            ("a b", "'a b'"),
            ("it's", r"'it'\''s'"),
            ("-x", "-x"),
            ("=cmd", "'=cmd'"),
            ("~root", "'~root'"),
            ("$(id)", "'$(id)'"),
            ("a\nb", "'a\nb'"),
        ];
        for (raw, want) in cases {
            assert_eq!(shell_quote(raw), want, "{raw:?}");
        }
        assert_eq!(
            shell_line(&v(&["ssh", "-t", "--", "a b"])),
            "ssh -t -- 'a b'"
        );
    }

    fn row(id: &str, key: &str, updated: f64) -> Row {
        let mut record = crate::Record::new(id);
        record.session_key = key.into();
        record.updated_at = Some(updated);
        Row {
            record,
            file: format!("{id}-{updated}.json"),
            dir: None,
            dir_index: 0,
            live: true,
            state: crate::State::Live,
            local: false,
            conflict_copy: false,
            age_s: 0.0,
            claimed_age_s: None,
            expires_in_s: None,
            superseded_by: None,
            writer_offset_s: None,
            lost_because: None,
            redactions: Vec::new(),
        }
    }

    #[test]
    fn resolution_by_id_key_and_unique_prefix() {
        let rows = [
            row("alpha-1", "k-a", 10.0),
            row("alpha-1", "k-a", 20.0),
            row("alpha-2", "k-b", 5.0),
            row("beta", "alp", 1.0),
        ];
        let file = |r: Resolved<'_>| match r {
            Resolved::One(row) => row.file.clone(),
            other => format!("{other:?}"),
        };
        assert_eq!(file(resolve(&rows, "alpha-1")), "alpha-1-20.json");
        assert_eq!(file(resolve(&rows, "k-b")), "alpha-2-5.json");
        assert_eq!(file(resolve(&rows, "alpha-2")), "alpha-2-5.json");
        // An exact key wins over ids it prefixes.
        assert_eq!(file(resolve(&rows, "alp")), "beta-1.json");
        assert_eq!(file(resolve(&rows, "be")), "beta-1.json");
        assert_eq!(
            resolve(&rows, "alpha"),
            Resolved::Ambiguous(v(&["alpha-1", "alpha-2"]))
        );
        assert_eq!(resolve(&rows, "gamma"), Resolved::None);
        assert_eq!(resolve(&rows, ""), Resolved::None);
    }

    proptest! {
        /// Whatever the endpoint, an argv that comes out has nothing the
        /// terminal sanitizer would escape, its destination never reads as an option, and what
        /// goes to a remote tmux is in the set that needs no quoting.
        #[test]
        fn no_endpoint_yields_an_unsafe_argv(
            scheme in prop::sample::select(vec!["ssh", "tmux", "mosh", "https", "x"]),
            user in "\\PC{0,6}",
            host in "(\\PC|-|%2[dD]){0,8}",
            port in "\\PC{0,4}",
            path in "(\\PC|-|%[0-9a-fA-F]{2}|%[cCeE][0-9a-fA-F]%[89abAB][0-9a-fA-F]|/){0,10}",
        ) {
            for endpoint in [
                format!("{scheme}://{user}@{host}:{port}/{path}"),
                format!("{scheme}://{host}/{path}"),
                format!("{scheme}://{host}"),
            ] {
                let Ok(argv) = builtin(&endpoint) else { continue };
                for a in &argv {
                    prop_assert_eq!(crate::text::terminal_safe(a), a.as_str(), "{:?}", argv);
                }
                if let Some(i) = argv.iter().position(|a| a == "--") {
                    prop_assert!(!argv[i + 1].starts_with('-'), "{argv:?}");
                    if argv.len() > i + 2 && argv[i + 2] == "tmux" {
                        prop_assert!(shell_safe(&argv[i + 5]), "{argv:?}");
                    }
                }
                if argv[0] == "tmux" {
                    prop_assert!(!argv[3].starts_with('-'), "{argv:?}");
                }
            }
        }

        #[test]
        fn parsing_never_panics(text in "\\PC{0,40}") {
            let _ = builtin(&text);
        }
    }
}
