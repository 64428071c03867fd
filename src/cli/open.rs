//! `presence open [ID]`: act on a live session's endpoint through the
//! handler for its scheme. The library builds the argv; this file picks
//! the session, asks, prints or runs.

use std::io::{BufRead as _, IsTerminal as _};

use anyhow::Context as _;
use clap::Args;
use presence::open::{self, Target};
use presence::{ListOptions, Row};

use super::output::{self, Styled};
use super::{Ctx, Exit, UsageError};

#[derive(Debug, Args)]
pub struct OpenArgs {
    /// Session id, session key, or the start of one [default: on a terminal, choose among the
    /// sessions that can be opened: type to filter, Enter opens, Esc cancels]
    pub id: Option<String>,
    /// Print the command, shell-quoted on one line, and run nothing
    #[arg(long)]
    pub print: bool,
    /// Open another device's session without asking first
    #[arg(short, long)]
    pub yes: bool,
}

pub fn run(ctx: &Ctx, args: OpenArgs) -> anyhow::Result<Exit> {
    let registry = ctx.registry()?;
    let profile = registry.profile();
    let now = presence::unix_now();
    let listing = registry
        .list(ListOptions::default(), now)
        .with_context(|| format!("cannot read {}", output::dirs_shown(profile)))?;
    let interactive = std::io::stdin().is_terminal() && output::stderr_is_terminal();
    let opener = Opener {
        handlers: &profile.open_handlers,
        host: registry.host(),
        inside_tmux: inside_tmux(),
    };
    let row = match &args.id {
        Some(id) => match resolve(&listing.rows, id) {
            Resolved::One(row) => row,
            Resolved::None => {
                let msg = match gone(&registry, id, now)? {
                    Some(msg) => msg,
                    None => format!(
                        "no live session with an id or key that is or starts with '{id}' in \
                         profile '{}'; `presence list` shows the live ones",
                        profile.name
                    ),
                };
                output::notice(msg);
                return Ok(Exit::Failure);
            }
            Resolved::Ambiguous(ids) => {
                return Err(UsageError(format!(
                    "'{id}' starts the ids of several sessions: {}; give more of one",
                    ids.join(", ")
                ))
                .into());
            }
            Resolved::Devices(rows) => {
                let names: Vec<String> = rows.iter().map(|r| whose(r)).collect();
                if !interactive {
                    return Err(UsageError(format!(
                        "session '{id}' is published by {} devices: {}; run `presence open` \
                         on a terminal to choose, or `presence list --all --json` to see them",
                        rows.len(),
                        names.join("; ")
                    ))
                    .into());
                }
                output::notice(format!(
                    "session '{id}' is published by {} devices; choose one",
                    rows.len()
                ));
                match choose(&rows, &opener, true)? {
                    Some(row) => row,
                    None => return Ok(Exit::Failure),
                }
            }
        },
        None if !interactive => {
            return Err(UsageError(
                "name the session to open (`presence open ID`); without one, \
                 `presence open` asks on a terminal, and this is none"
                    .into(),
            )
            .into());
        }
        None => {
            let rows: Vec<&Row> = listing.rows.iter().collect();
            match choose(&rows, &opener, false)? {
                Some(row) => row,
                None => return Ok(Exit::Failure),
            }
        }
    };
    let r = &row.record;
    let argv = opener
        .argv(row)
        .with_context(|| format!("cannot open session '{}'", r.session_id))?;
    let line = open::shell_line(&argv);
    if args.print {
        output::stdout().line(&Styled::default().command(&line))?;
        return Ok(Exit::Ok);
    }
    if !row.local && !args.yes {
        let whose = whose(row);
        if !interactive {
            return Err(UsageError(format!(
                "session '{}' was published by another device, {whose}; pass --yes to \
                 open it without being asked (this is no terminal to ask on)",
                r.session_id
            ))
            .into());
        }
        // Two lines, each made safe once: the record's fields in the first,
        // the command (whose quoting keeps its backslashes) in the second.
        output::eline(&Styled::new(format_args!(
            "Session '{}' was published by another device, {whose}.",
            r.session_id
        )));
        output::eline(&Styled::new("Open it by running: ").command(&line));
        if !yes(&ask("Open it? [y/N] ")?) {
            output::notice("not opened");
            return Ok(Exit::Failure);
        }
    }
    if ctx.global.verbose {
        output::eline(&Styled::new("presence: running: ").command(&line));
    }
    Ok(exec(&argv))
}

/// What to say when `id` names no live session but names one whose last
/// record expired or ended: since when, and where it was last seen. None
/// when no record of any state has that id (or the start of one).
fn gone(registry: &presence::Registry, id: &str, now: f64) -> anyhow::Result<Option<String>> {
    let mut opts = ListOptions::default();
    opts.include_expired = true;
    let listing = registry
        .list(opts, now)
        .with_context(|| format!("cannot read {}", output::dirs_shown(registry.profile())))?;
    let rows: Vec<Row> = listing.rows.into_iter().filter(|r| !r.live).collect();
    let row = match resolve(&rows, id) {
        Resolved::One(row) => row,
        Resolved::Devices(rows) => match rows.first() {
            Some(row) => row,
            None => return Ok(None),
        },
        Resolved::None | Resolved::Ambiguous(_) => return Ok(None),
    };
    let r = &row.record;
    let what = match row.state {
        presence::State::Ended => format!("ended {}", output::ago(row.age_s.max(0.0))),
        _ => {
            let since = row
                .expires_in_s
                .filter(|s| *s <= 0.0)
                .map_or(row.age_s, |s| -s);
            format!("expired {}", output::ago(since.max(0.0)))
        }
    };
    let seen = if r.host.is_empty() {
        String::new()
    } else {
        format!(" (last seen on {})", r.host)
    };
    Ok(Some(format!(
        "session '{}' {what}{seen}; nothing to open",
        r.session_id
    )))
}

/// What `open` runs for a row here: the profile's handlers, this host,
/// inside tmux or not.
struct Opener<'a> {
    handlers: &'a open::Handlers,
    host: &'a str,
    inside_tmux: bool,
}

impl Opener<'_> {
    fn argv(&self, row: &Row) -> Result<Vec<String>, open::OpenError> {
        let target = Target {
            this_host: self.host,
            session_id: &row.record.session_id,
            opener: open::platform_opener(),
            inside_tmux: self.inside_tmux,
        };
        open::argv(&row.record.endpoint, self.handlers, target)
    }
}

/// Lets the user choose among the `rows` that can be opened, each shown
/// with the command Enter runs ([`chooser`]); those that cannot (no
/// endpoint, a refused one, no handler) are left out, and a line says how
/// many and why. With `devices` (one id that several devices publish) the
/// host column names each row's device too. None when there is nothing to
/// choose, or the user cancelled (both said).
fn choose<'a>(
    rows: &[&'a Row],
    opener: &Opener<'_>,
    devices: bool,
) -> anyhow::Result<Option<&'a Row>> {
    if rows.is_empty() {
        output::notice("no live sessions to open");
        return Ok(None);
    }
    let mut offered: Vec<&Row> = Vec::new();
    let mut items = Vec::new();
    let (mut none, mut redacted, mut refused) = (0, 0, 0);
    let mut schemes: Vec<String> = Vec::new();
    let mut unhandled = 0;
    for &row in rows {
        match opener.argv(row) {
            Ok(argv) => {
                let r = &row.record;
                let host = if devices {
                    let id: String = r.device_id.chars().take(8).collect();
                    let proof = if row.verified { "" } else { ", unsigned" };
                    format!("{} (device {id}{proof})", r.host)
                } else {
                    r.host.clone()
                };
                items.push(super::chooser::Item::new(
                    &r.session_id,
                    &r.session_key,
                    &r.status,
                    &host,
                    &r.title,
                    &open::shell_line(&argv),
                ));
                offered.push(row);
            }
            Err(open::OpenError::NoEndpoint) => none += 1,
            Err(open::OpenError::Redacted) => redacted += 1,
            Err(open::OpenError::UnknownScheme { scheme, .. }) => {
                unhandled += 1;
                if !schemes.contains(&scheme) {
                    schemes.push(scheme);
                }
            }
            Err(_) => refused += 1,
        }
    }
    let mut why = Vec::new();
    if none > 0 {
        why.push(format!("{none} without an endpoint"));
    }
    if refused > 0 {
        why.push(format!("{refused} refused"));
    }
    if redacted > 0 {
        why.push(format!("{redacted} redacted"));
    }
    if unhandled > 0 {
        why.push(format!(
            "{unhandled} with no handler ({})",
            schemes.join(", ")
        ));
    }
    let left = rows.len() - offered.len();
    let left_out = if left == 0 {
        String::new()
    } else {
        format!("{left} left out: {}", why.join(", "))
    };
    if offered.is_empty() {
        output::notice(format_args!(
            "no live session can be opened ({left_out}); `presence list --json` says why \
             in each row's open_error"
        ));
        return Ok(None);
    }
    match super::chooser::choose(items, left_out)? {
        Some(i) => Ok(offered.get(i).copied()),
        None => {
            output::notice("not opened");
            Ok(None)
        }
    }
}

/// Asks on stderr and reads one line from stdin (empty at end of input).
fn ask(prompt: &str) -> anyhow::Result<String> {
    output::prompt(&Styled::new(prompt))?;
    let mut answer = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut answer)
        .context("cannot read the answer")?;
    Ok(answer)
}

fn yes(answer: &str) -> bool {
    matches!(answer.trim(), "y" | "Y" | "yes" | "Yes" | "YES")
}

/// Runs the handler in this process's place (a terminal handler such as
/// `tmux attach` takes over the terminal, and its exit status is ours).
#[cfg(unix)]
fn exec(argv: &[String]) -> Exit {
    use std::os::unix::process::CommandExt as _;
    let err = std::process::Command::new(&argv[0]).args(&argv[1..]).exec();
    cannot_run(&argv[0], &err)
}

#[cfg(not(unix))]
fn exec(argv: &[String]) -> Exit {
    match std::process::Command::new(&argv[0])
        .args(&argv[1..])
        .status()
    {
        Ok(status) => match status.code() {
            Some(0) => Exit::Ok,
            Some(code) => Exit::Child(u8::try_from(code).unwrap_or(1)),
            None => Exit::Failure,
        },
        Err(err) => cannot_run(&argv[0], &err),
    }
}

fn cannot_run(program: &str, err: &std::io::Error) -> Exit {
    output::error(format_args!(
        "cannot run {}: {err}",
        open::shell_quote(program)
    ));
    if err.kind() == std::io::ErrorKind::NotFound {
        Exit::NotFound
    } else {
        Exit::CannotRun
    }
}

/// Whether this process runs inside tmux: `$TMUX` set and not empty.
pub fn inside_tmux() -> bool {
    std::env::var_os("TMUX").is_some_and(|v| !v.is_empty())
}

/// The endpoint `publish` and `run` default to, when they can tell one:
/// inside tmux (`$TMUX` set), `tmux://HOST/SESSION:WINDOW.PANE` for this
/// pane, if `presence open` would accept it; None elsewhere. The pane is in
/// it because sessions with one endpoint are successors of each other
/// (dedupe): two agents in two panes of one tmux session must not be.
pub fn here_endpoint(host: &str) -> Option<String> {
    if !inside_tmux() {
        return None;
    }
    let mut tmux = std::process::Command::new("tmux");
    tmux.arg("display-message").arg("-p");
    // The pane this process runs in, not whichever client is active.
    if let Some(pane) = std::env::var_os("TMUX_PANE").filter(|p| !p.is_empty()) {
        tmux.arg("-t").arg(pane);
    }
    let out = tmux
        .arg("#S:#{window_index}.#{pane_index}")
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()
        .filter(|o| o.status.success())?;
    let session = String::from_utf8(out.stdout).ok()?;
    let endpoint = format!("tmux://{host}/{}", session.trim_end_matches('\n'));
    let parsed = open::Endpoint::parse(&endpoint).ok()?;
    parsed.tmux_session().ok()?;
    Some(endpoint)
}

/// Which live row an ID names.
#[derive(Debug, PartialEq)]
pub enum Resolved<'a> {
    /// The record of the one session the ID names ([`pick`]).
    One(&'a Row),
    /// No session id or key is, or starts with, the ID.
    None,
    /// The ID is a prefix of several sessions' ids: these.
    Ambiguous(Vec<String>),
    /// Several devices publish a session of that id, none of them this
    /// one: the newest record of each, for the user to choose from.
    Devices(Vec<&'a Row>),
}

/// Resolves `id` among `rows`: a session id or key equal to it, else the one
/// session whose id or key starts with it; then [`pick`] among its records.
pub fn resolve<'a>(rows: &'a [Row], id: &str) -> Resolved<'a> {
    if id.is_empty() {
        return Resolved::None;
    }
    let exact: Vec<&Row> = rows
        .iter()
        .filter(|r| r.record.session_id == id || r.record.session_key == id)
        .collect();
    if !exact.is_empty() {
        return pick(exact);
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
        1 => pick(prefixed),
        _ => Resolved::Ambiguous(ids),
    }
}

/// Which of one session's records to open. Any device can write a record
/// with any session id, and only a signature proves who wrote one: so this
/// device's own record comes first, then verified ones, then unsigned
/// ones; and when the first of those that has any comes from several
/// devices (by their verified ids, or for unsigned records by the ids and
/// hosts they claim), the user chooses — never the newest `updated_at`,
/// which the writer sets.
fn pick<'a>(matches: Vec<&'a Row>) -> Resolved<'a> {
    let newest = |rows: Vec<&'a Row>| -> Option<&'a Row> {
        rows.into_iter().reduce(|best, r| {
            if r.record.updated_at.unwrap_or(f64::MIN) > best.record.updated_at.unwrap_or(f64::MIN)
            {
                r
            } else {
                best
            }
        })
    };
    let tier = |r: &Row| match (r.local, r.verified) {
        (true, _) => 0,
        (false, true) => 1,
        (false, false) => 2,
    };
    let Some(best) = matches.iter().map(|r| tier(r)).min() else {
        return Resolved::None;
    };
    let top: Vec<&Row> = matches.into_iter().filter(|r| tier(r) == best).collect();
    if best == 0 {
        return newest(top).map_or(Resolved::None, Resolved::One);
    }
    let device = |r: &Row| (r.record.device_id.clone(), r.record.host.clone());
    let mut by_device: Vec<((String, String), Vec<&Row>)> = Vec::new();
    for r in top {
        match by_device.iter_mut().find(|(d, _)| *d == device(r)) {
            Some((_, rows)) => rows.push(r),
            None => by_device.push((device(r), vec![r])),
        }
    }
    let mut each: Vec<&Row> = by_device
        .into_iter()
        .filter_map(|(_, rows)| newest(rows))
        .collect();
    match each.len() {
        0 => Resolved::None,
        1 => Resolved::One(each.remove(0)),
        _ => Resolved::Devices(each),
    }
}

/// How the prompts name the device that published `r`: its host as it
/// claims it, the start of its device id, and whether a signature proves
/// that id (an unsigned record's host and id are only what it says).
fn whose(r: &Row) -> String {
    // Shown through the output layer, which makes them terminal-safe.
    let id: String = r.record.device_id.chars().take(8).collect();
    let proof = if r.verified {
        "signature verified"
    } else {
        "unsigned: who wrote it cannot be checked"
    };
    match (r.record.host.is_empty(), id.is_empty()) {
        (true, true) => format!("an unnamed device ({proof})"),
        (true, false) => format!("device {id} ({proof})"),
        (false, _) => format!("host '{}', device {id} ({proof})", r.record.host),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(args: &[&str]) -> Vec<String> {
        args.iter().map(|s| s.to_string()).collect()
    }

    fn row(id: &str, key: &str, updated: f64) -> Row {
        let mut record = presence::Record::new(id);
        record.session_key = key.into();
        record.updated_at = Some(updated);
        Row {
            record,
            file: format!("{id}-{updated}.json"),
            dir: None,
            dir_index: 0,
            live: true,
            state: presence::State::Live,
            local: false,
            conflict_copy: false,
            age_s: 0.0,
            claimed_age_s: None,
            expires_in_s: None,
            superseded_by: None,
            writer_offset_s: None,
            lost_because: None,
            verified: false,
            forged: None,
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

    fn by(device: &str, host: &str, local: bool, verified: bool, updated: f64) -> Row {
        let mut r = row("main", "main", updated);
        r.record.device_id = device.into();
        r.record.host = host.into();
        r.local = local;
        r.verified = verified;
        r.file = format!("{host}-{updated}.json");
        r
    }

    #[test]
    fn this_devices_record_wins_over_a_newer_twin_from_anyone_else() {
        // A hostile device copies our session id and host name, with a
        // newer `updated_at`: ours is still the one opened.
        let rows = [
            by("me", "laptop", true, true, 10.0),
            by("them", "laptop", false, true, 99.0),
            by("", "laptop", false, false, 100.0),
        ];
        assert_eq!(resolve(&rows, "main"), Resolved::One(&rows[0]));
    }

    #[test]
    fn a_verified_record_wins_over_unsigned_ones_and_several_devices_ask() {
        let rows = [
            by("dev-a", "a", false, true, 10.0),
            by("dev-a", "a", false, true, 20.0),
            by("", "evil", false, false, 100.0),
        ];
        assert_eq!(resolve(&rows, "main"), Resolved::One(&rows[1]));
        let rows = [
            by("dev-a", "a", false, true, 10.0),
            by("dev-b", "b", false, true, 20.0),
            by("dev-b", "b", false, true, 5.0),
        ];
        assert_eq!(
            resolve(&rows, "ma"),
            Resolved::Devices(vec![&rows[0], &rows[1]])
        );
        // Unsigned records claiming two hosts: the user chooses too.
        let rows = [
            by("", "a", false, false, 10.0),
            by("", "b", false, false, 20.0),
        ];
        assert!(matches!(resolve(&rows, "main"), Resolved::Devices(v) if v.len() == 2));
        assert!(whose(&rows[0]).contains("unsigned"), "{}", whose(&rows[0]));
    }
}
