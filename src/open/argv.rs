//! The argv that opens an endpoint: a configured template filled, or the
//! built-in handler of its scheme; and shell quoting for what a remote
//! shell or `--print` sees.

use super::{Endpoint, Handlers, OpenError, PLACEHOLDERS, invalid};

/// Whether a value needs no shell quoting: letters, digits and `_-+@,.:/`,
/// not empty, not starting with `=` or `~` (which some shells expand at
/// the start of a word).
pub(super) fn bare(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with(['=', '~'])
        && s.chars().all(|c| {
            c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '+' | '@' | ',' | '.' | ':' | '/')
        })
}

/// Whether a value may reach a remote shell as it is: [`bare`], and not an
/// option either.
pub(super) fn shell_safe(s: &str) -> bool {
    bare(s) && !s.starts_with('-')
}

/// Whether a whole endpoint may reach a remote shell as it is, for `{url}`
/// in a configured template: [`shell_safe`]'s set and `%` and `=`, which no
/// common shell (sh, bash, zsh, fish, csh) reads inside a word — a URL
/// starts with its scheme, a letter, so neither is ever at the start. A
/// query (`?`, `&`), a fragment (`#`), IPv6 brackets and every other
/// character a shell reads are refused.
pub(super) fn url_safe(s: &str) -> bool {
    s.starts_with(|c: char| c.is_ascii_alphabetic())
        && s.chars().all(|c| {
            c.is_ascii_alphanumeric()
                || matches!(c, '_' | '-' | '+' | '@' | ',' | '.' | ':' | '/' | '%' | '=')
        })
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

/// One piece of a template element: literal text or a placeholder.
pub(super) enum Piece<'a> {
    Text(&'a str),
    Slot(&'a str),
}

pub(super) fn pieces(element: &str) -> Result<Vec<Piece<'_>>, String> {
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
    /// The URL opener for http(s) ([`platform_opener`](super::platform_opener)).
    pub opener: &'a str,
    /// Whether the argv runs inside tmux (`$TMUX` set): a tmux session on
    /// this machine is then switched to (`tmux switch-client`, as tmux
    /// refuses to nest an attach), and a configured handler's
    /// `inside_tmux` runs instead of its `command`.
    pub inside_tmux: bool,
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
    if let Some(template) = handlers.template(&ep.scheme, target.inside_tmux) {
        return expand(template, &ep, target);
    }
    let s = |x: &str| x.to_string();
    let mut argv = Vec::new();
    match ep.scheme.as_str() {
        "tmux" => {
            let session = ep.tmux_session()?;
            if ep.user.is_none() && ep.port.is_none() && same_host(&ep.host, target.this_host) {
                // Inside tmux an attach would nest, which tmux refuses:
                // the client switches to the session instead.
                let verb = if target.inside_tmux {
                    "switch-client"
                } else {
                    "attach"
                };
                argv.extend([s("tmux"), s(verb), s("-t"), session]);
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

/// Whether a `tmux://` endpoint's host is this machine, `this` being its
/// host name as `gethostname` gives it (what `publish` writes into the
/// endpoints of this machine). Case and one trailing dot aside, the whole
/// name is compared: `localhost`; `this` itself; or a name without a dot
/// that is the first label of `this` (`laptop` on `laptop.example.com`).
/// A name with a dot names this machine only when it is `this`:
/// `laptop.attacker.example` is not the machine `laptop`, and
/// `laptop.local` is not `laptop` either (it goes through ssh, which
/// reaches this machine all the same if that is what it is).
fn same_host(host: &str, this: &str) -> bool {
    let norm = |h: &str| h.strip_suffix('.').unwrap_or(h).to_ascii_lowercase();
    let (host, this) = (norm(host), norm(this));
    if host == "localhost" {
        return true;
    }
    if host.is_empty() || this.is_empty() {
        return false;
    }
    host == this || (!host.contains('.') && this.split('.').next() == Some(host.as_str()))
}

/// Fills a configured template. A value is checked when the template uses
/// it: a configured program may hand anything to a remote shell (`ssh HOST
/// {url}` has the remote shell read it), so every value must be in the set
/// that needs no quoting ([`shell_safe`]; for `{url}`, [`url_safe`]).
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
            "url" => {
                if !url_safe(&ep.url) {
                    return Err(invalid(
                        "url",
                        &ep.url,
                        "is refused by a configured handler's {url}: it may only hold \
                         letters, digits and _-+@,.:/%= (no query, fragment, IPv6 brackets \
                         or other character a shell reads); use the other placeholders, \
                         or the built-in handler",
                    ));
                }
                return Ok(ep.url.clone());
            }
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
