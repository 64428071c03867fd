//! URLs: the password of a URL's userinfo and its credential query,
//! fragment and matrix parameters, masked in text or removed from an
//! endpoint; and path segments that look random, the secret of a
//! capability URL.

use super::names::is_credential_pair;
use super::values::{is_placeholder, looks_random};
use super::{Mode, REDACTED};

/// Ends a URL in text.
fn is_url_end(c: char) -> bool {
    c.is_whitespace() || matches!(c, '"' | '\'' | '<' | '>' | '`')
}

/// Finds `scheme://…` and scheme-relative `//…` URLs in `text` and takes
/// their credentials out; `None` when nothing changed.
pub(super) fn redact_urls(text: &str, mode: Mode, kinds: &mut Vec<&'static str>) -> Option<String> {
    map_urls(text, |rest| redact_url_rest(rest, mode, kinds))
}

/// Masks the path segments of URLs in `text` that look random (see
/// [`looks_random`]): the secret of a capability URL
/// (`https://share.example.net/s/[redacted]/view`). The host, the query and
/// the fragment are left to the other rules.
pub(super) fn redact_random_segments(text: &str) -> Option<String> {
    map_urls(text, |rest| {
        let path_end = rest.find(['?', '#']).unwrap_or(rest.len());
        let (hostpath, after) = rest.split_at(path_end);
        let auth_end = hostpath.find('/')?;
        let mut out = String::with_capacity(rest.len());
        out.push_str(&hostpath[..auth_end]);
        let mut changed = false;
        for (i, segment) in hostpath[auth_end..].split('/').enumerate() {
            if i > 0 {
                out.push('/');
            }
            let (head, matrix) = match segment.find(';') {
                Some(at) => segment.split_at(at),
                None => (segment, ""),
            };
            if looks_random(head) {
                out.push_str(REDACTED);
                changed = true;
            } else {
                out.push_str(head);
            }
            out.push_str(matrix);
        }
        out.push_str(after);
        changed.then_some(out)
    })
}

/// `text` with what follows the `//` of each URL in it replaced by what
/// `f` makes of it (`None`: kept); `None` when nothing changed.
fn map_urls(text: &str, mut f: impl FnMut(&str) -> Option<String>) -> Option<String> {
    let bytes = text.as_bytes();
    let mut splice_out = String::new();
    let mut last = 0;
    let mut changed = false;
    let mut search = 0;
    while let Some(rel) = text[search..].find("//") {
        let at = search + rel;
        let lead_ok = if at >= 2 && bytes[at - 1] == b':' {
            bytes[at - 2].is_ascii_alphanumeric()
        } else {
            at == 0
                || matches!(
                    bytes[at - 1],
                    b' ' | b'\t' | b'\n' | b'\r' | b'"' | b'\'' | b'(' | b'<' | b'=' | b','
                )
        };
        let start = at + 2;
        let end = text[start..]
            .find(is_url_end)
            .map_or(text.len(), |e| start + e);
        if lead_ok && let Some(new) = f(&text[start..end]) {
            splice_out.push_str(&text[last..start]);
            splice_out.push_str(&new);
            last = end;
            changed = true;
        }
        search = end.max(start);
    }
    if !changed {
        return None;
    }
    splice_out.push_str(&text[last..]);
    Some(splice_out)
}

/// The userinfo of what follows `//`: `(colon, at)` when it holds a password.
/// The password may hold any character (`#`, `?`, `:`, `@`, `%40`); one with
/// a `/` is recognised when a host follows its `@`.
fn find_password(rest: &str) -> Option<(usize, usize)> {
    let region_end = rest.find('/').unwrap_or(rest.len());
    let (colon, at) = if let Some(at) = rest[..region_end].rfind('@') {
        (rest[..at].find(':')?, at)
    } else {
        let colon = rest[..region_end].find(':')?;
        let after = &rest[colon + 1..region_end];
        // `host:8080/…` is a port, not a password.
        if after.is_empty() || after.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let at = region_end + rest[region_end..].find('@')?;
        let host = &rest[at + 1..];
        let host_end = host.find(['/', ':', '?', '#']).unwrap_or(host.len());
        let hostlike = host_end > 0
            && host[..host_end]
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-');
        if !hostlike {
            return None;
        }
        (colon, at)
    };
    // A `?` or `#` before the colon means there is no userinfo at all
    // (`h?next=u:p@x`).
    if rest[..colon].contains(['?', '#']) {
        return None;
    }
    Some((colon, at))
}

fn redact_url_rest(rest: &str, mode: Mode, kinds: &mut Vec<&'static str>) -> Option<String> {
    let mut out = String::with_capacity(rest.len());
    let mut changed = false;
    let mut tail = rest;
    if let Some((colon, at)) = find_password(rest) {
        let password = &rest[colon + 1..at];
        let skip = password.is_empty() || (mode == Mode::Mask && password == REDACTED);
        if skip {
            out.push_str(&rest[..at]);
        } else {
            out.push_str(&rest[..colon]);
            if mode == Mode::Mask {
                out.push(':');
                out.push_str(REDACTED);
            }
            changed = true;
            kinds.push("password in URL");
        }
        tail = &rest[at..];
    }
    let path_end = tail.find(['?', '#']).unwrap_or(tail.len());
    let (hostpath, after) = tail.split_at(path_end);
    let auth_end = hostpath.find('/').unwrap_or(hostpath.len());
    out.push_str(&hostpath[..auth_end]);
    let mut params_changed = false;
    for (i, segment) in hostpath[auth_end..].split('/').enumerate() {
        if i > 0 {
            out.push('/');
        }
        match segment.split_once(';') {
            Some((head, matrix)) => {
                let (kept, ch) = redact_params(matrix, ';', mode);
                params_changed |= ch;
                out.push_str(head);
                if !(ch && kept.is_empty() && mode == Mode::Remove) {
                    out.push(';');
                    out.push_str(&kept);
                }
            }
            None => out.push_str(segment),
        }
    }
    let (query, fragment) = match after.strip_prefix('?') {
        Some(q) => match q.split_once('#') {
            Some((q, f)) => (Some(q), Some(f)),
            None => (Some(q), None),
        },
        None => (None, after.strip_prefix('#')),
    };
    if let Some(q) = query {
        let (kept, ch) = redact_params(q, '&', mode);
        params_changed |= ch;
        if !(ch && kept.is_empty() && mode == Mode::Remove) {
            out.push('?');
            out.push_str(&kept);
        }
    }
    if let Some(f) = fragment {
        // A fragment is data for the page (`#L42`, `#readme`) unless it
        // carries parameters, as OAuth's `#access_token=…` does.
        let (route, params) = match f.split_once('?') {
            Some((route, params)) => (Some(route), params),
            None if f.contains('=') => (None, f),
            None => (Some(f), ""),
        };
        let (kept, ch) = if params.is_empty() {
            (String::new(), false)
        } else {
            redact_params(params, '&', mode)
        };
        params_changed |= ch;
        let drop_params = ch && kept.is_empty() && mode == Mode::Remove;
        match route {
            Some(route) => {
                out.push('#');
                out.push_str(route);
                if f.contains('?') && !drop_params {
                    out.push('?');
                    out.push_str(&kept);
                }
            }
            None if drop_params => {}
            None => {
                out.push('#');
                out.push_str(&kept);
            }
        }
    }
    if params_changed {
        kinds.push("credential URL parameter");
    }
    (changed || params_changed).then_some(out)
}

/// `name=value` pairs separated by `sep`, with the credentials masked or
/// removed; and whether anything changed.
fn redact_params(params: &str, sep: char, mode: Mode) -> (String, bool) {
    let mut changed = false;
    let mut kept: Vec<String> = Vec::new();
    for pair in params.split(sep) {
        // A value already masked carries nothing: kept as it is, so that
        // redacting redacted text changes nothing.
        let credential = pair
            .split_once('=')
            .filter(|(name, value)| *value != REDACTED && is_credential_pair(name, value));
        match (credential, mode) {
            (Some((name, value)), Mode::Mask) if !is_placeholder(value) => {
                kept.push(format!("{name}={REDACTED}"));
                changed = true;
            }
            (Some(_), Mode::Remove) => changed = true,
            _ => kept.push(pair.to_string()),
        }
    }
    (kept.join(&sep.to_string()), changed)
}
