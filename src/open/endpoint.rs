//! An endpoint parsed by its scheme, every part checked.

use super::{OpenError, REDACTED, invalid};

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
                format!(
                    "contains {}; a session name is letters, digits and _-+@,",
                    shown(c)
                ),
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

/// A character a message names: `'x'` for a visible ASCII one (`"'"` for
/// the quote), `U+202E` for any other. Nothing in it needs escaping, so the
/// output layer, which makes the whole message safe, shows it as it is.
fn shown(c: char) -> String {
    match c {
        '\'' => "\"'\"".to_string(),
        c if c.is_ascii_graphic() => format!("'{c}'"),
        c => format!("U+{:04X}", u32::from(c)),
    }
}

/// Refuses what no part of any endpoint may hold.
fn plain(field: &'static str, value: &str) -> Result<(), OpenError> {
    if let Some(c) = value.chars().find(|c| !c.is_ascii()) {
        return Err(invalid(
            field,
            value,
            format!(
                "contains the non-ASCII character {} (percent-encode it)",
                shown(c)
            ),
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
            format!(
                "contains {}; a user name is letters, digits and ._-",
                shown(c)
            ),
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
                format!(
                    "contains {}; a host name is letters, digits and .-_",
                    shown(c)
                ),
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
