//! Human output: relative times, color policy and the table that fits the
//! terminal. JSON output is serde's, written by the subcommands.

use std::io::{self, IsTerminal, Write};

use presence::Row;
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

use super::safe;

/// `--color`: when to colour human output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ColorWhen {
    /// On a terminal, unless NO_COLOR is set; CLICOLOR_FORCE=1 also into a pipe
    #[default]
    Auto,
    /// Always, also into a pipe (for a pager: less -R)
    Always,
    /// Never
    Never,
}

/// Whether to color stdout when nothing on the command line says (`auto`).
pub fn color_stdout() -> bool {
    color(ColorWhen::Auto)
}

/// Whether to color stdout under `when`, with this process's environment.
pub fn color(when: ColorWhen) -> bool {
    decide_color(when, io::stdout().is_terminal(), |k| std::env::var_os(k))
}

/// The colour policy. A flag on the command line is the most specific
/// wish and wins; then `NO_COLOR` (set and not empty: no colour, see
/// no-color.org); then `CLICOLOR_FORCE` (set, not empty and not `0`:
/// colour even into a pipe, for `less -R`); else colour only on a terminal
/// that is not `TERM=dumb`.
fn decide_color(
    when: ColorWhen,
    tty: bool,
    env: impl Fn(&str) -> Option<std::ffi::OsString>,
) -> bool {
    match when {
        ColorWhen::Always => true,
        ColorWhen::Never => false,
        ColorWhen::Auto => {
            if env("NO_COLOR").is_some_and(|v| !v.is_empty()) {
                false
            } else if env("CLICOLOR_FORCE").is_some_and(|v| !v.is_empty() && v != "0") {
                true
            } else {
                tty && env("TERM").is_none_or(|t| t != "dumb")
            }
        }
    }
}

/// `12s`, `3m`, `2h`, `5d` — the largest unit that fits, rounded down.
pub fn short_duration(secs: f64) -> String {
    let s = secs.abs().floor() as u64;
    match s {
        0..120 => format!("{s}s"),
        120..3600 => format!("{}m", s / 60),
        3600..86_400 => format!("{}h", s / 3600),
        _ => format!("{}d", s / 86_400),
    }
}

/// Writes `value` as pretty JSON and a newline, streamed through a buffer.
/// A closed pipe surfaces as the plain `io::Error` it is.
pub fn write_json(out: &mut impl Write, value: &impl serde::Serialize) -> anyhow::Result<()> {
    let mut w = io::BufWriter::with_capacity(1 << 16, out);
    serde_json::to_writer_pretty(&mut w, value).map_err(|e| match e.io_error_kind() {
        Some(kind) => anyhow::Error::from(io::Error::new(kind, e)),
        None => anyhow::Error::from(e),
    })?;
    w.write_all(b"\n")?;
    w.flush()?;
    Ok(())
}

/// The directories a profile reads, for messages: `dir`, or each of them
/// joined by `, `.
pub fn dirs_shown(profile: &presence::Profile) -> String {
    profile
        .dirs
        .iter()
        .map(|d| d.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// A session id as an error message names it: redacted, since the id may be
/// the very credential a publish was refused for.
pub fn id_in_error(id: &str) -> String {
    presence::redact_text(id).0
}

/// "12s ago" for a past age, "in 12s" for a time to come.
pub fn ago(secs: f64) -> String {
    if secs < 0.0 {
        format!("in {}", short_duration(secs))
    } else {
        format!("{} ago", short_duration(secs))
    }
}

const HEADERS: [&str; 9] = [
    "SESSION", "STATUS", "CLIENT", "HOST", "PROFILE", "UP", "SEEN", "EXPIRES", "TITLE",
];
const SESSION: usize = 0;
const STATUS: usize = 1;
const CLIENT: usize = 2;
const HOST: usize = 3;
const PROFILE: usize = 4;
const UP: usize = 5;
const SEEN: usize = 6;
const EXPIRES: usize = 7;
const TITLE: usize = 8;

/// One way a too-wide table gives way.
#[derive(Debug, Clone, Copy)]
enum Give {
    /// Cut the column's cells to this many columns (with `…`), no fewer.
    Squeeze(usize, usize),
    /// Leave the column out.
    Hide(usize),
}

/// How a table gives way on a narrow terminal, in this order, until it
/// fits: the title first, then the columns that matter least; the session
/// id last of all, so that an id is only ever cut when it alone is wider
/// than the terminal.
const GIVE_WAY: [Give; 14] = [
    Give::Squeeze(TITLE, 12),
    Give::Hide(PROFILE),
    Give::Squeeze(CLIENT, 10),
    Give::Squeeze(HOST, 12),
    Give::Hide(EXPIRES),
    Give::Hide(SEEN),
    Give::Hide(CLIENT),
    Give::Hide(UP),
    Give::Squeeze(TITLE, 5),
    Give::Hide(TITLE),
    Give::Squeeze(HOST, 6),
    Give::Hide(HOST),
    Give::Hide(STATUS),
    Give::Squeeze(SESSION, 1),
];

/// Seconds since the session started, on this machine's clock (`started_at`
/// is the writer's: its learned offset is taken off; a start that looks
/// to come is shown as 0). None for a record without `started_at`.
pub fn up_s(row: &Row, now: f64) -> Option<f64> {
    let started = row.record.started_at? - row.writer_offset_s.unwrap_or(0.0);
    Some((now - started).max(0.0))
}

fn cells(row: &Row, now: f64) -> [String; 9] {
    let r = &row.record;
    let session = format!(
        "{}{}",
        if row.local { "*" } else { " " },
        safe(&r.session_id)
    );
    let expires = if row.superseded_by.is_some() {
        "superseded".to_string()
    } else if row.live {
        row.expires_in_s
            .map_or_else(String::new, |e| format!("in {}", short_duration(e)))
    } else {
        row.state.to_string()
    };
    [
        session,
        safe(&r.status).into_owned(),
        safe(r.client_or_source()).into_owned(),
        safe(&r.host).into_owned(),
        safe(&r.profile).into_owned(),
        up_s(row, now).map_or_else(String::new, short_duration),
        ago(row.age_s),
        expires,
        safe(&r.title).into_owned(),
    ]
}

/// Cuts `s` to `width` columns, ending with `…` when it was cut.
fn fit(s: &str, width: usize) -> String {
    if s.width() <= width {
        return s.to_string();
    }
    let mut out = String::new();
    let mut w = 0;
    for c in s.chars() {
        let cw = c.width().unwrap_or(0);
        if w + cw + 1 > width {
            break;
        }
        out.push(c);
        w += cw;
    }
    out.push('…');
    out
}

/// Visible columns and their widths for `rows` within `max` terminal columns
/// (None: no limit), given way as [`GIVE_WAY`] says.
fn layout<R: std::borrow::Borrow<[String; 9]>>(
    rows: &[R],
    max: Option<usize>,
) -> Vec<(usize, usize)> {
    let mut w = HEADERS.map(|h| h.width());
    for r in rows {
        for (i, c) in r.borrow().iter().enumerate() {
            w[i] = w[i].max(c.width());
        }
    }
    let mut cols: Vec<(usize, usize)> = w.iter().copied().enumerate().collect();
    let Some(max) = max else {
        return cols;
    };
    let total = |cols: &[(usize, usize)]| {
        cols.iter().map(|c| c.1).sum::<usize>() + 2 * cols.len().saturating_sub(1)
    };
    for give in GIVE_WAY {
        let excess = total(&cols).saturating_sub(max);
        if excess == 0 {
            break;
        }
        match give {
            Give::Squeeze(col, min) => {
                if let Some(c) = cols.iter_mut().find(|c| c.0 == col) {
                    c.1 = c.1.saturating_sub(excess).max(min.min(c.1));
                }
            }
            Give::Hide(col) => cols.retain(|c| c.0 != col),
        }
    }
    // Hiding a column may have freed more room than the title gave up.
    let room = max.saturating_sub(total(&cols));
    if let Some(c) = cols.iter_mut().find(|c| c.0 == TITLE) {
        c.1 = w[TITLE].min(c.1 + room);
    }
    cols
}

/// How to draw a table.
#[derive(Debug, Clone, Copy)]
pub struct TableStyle {
    /// The terminal's width; None: no limit (not a terminal, or `--no-trunc`).
    pub width: Option<usize>,
    /// Colour the header and the rows by status.
    pub color: bool,
    /// Print the header line.
    pub header: bool,
    /// The time that `UP` counts to.
    pub now: f64,
}

/// Writes the table.
pub fn table(out: &mut impl Write, rows: &[Row], style: TableStyle) -> io::Result<()> {
    let lines: Vec<TableLine> = rows.iter().map(|r| TableLine::of(r, style.now)).collect();
    table_lines(out, &lines, style)
}

/// What the table shows of one row: its cells and its colour. A listing
/// that streams its rows keeps only these, not the rows.
pub struct TableLine {
    cells: [String; 9],
    color: &'static str,
}

impl TableLine {
    /// The line of `row` at `now`.
    pub fn of(row: &Row, now: f64) -> TableLine {
        let color = if !row.live {
            "\x1b[2m"
        } else {
            match row.record.status.as_str() {
                "working" | "busy" | "running" => "\x1b[32m",
                "waiting" | "blocked" => "\x1b[33m",
                "error" | "failed" => "\x1b[31m",
                _ => "",
            }
        };
        TableLine {
            cells: cells(row, now),
            color,
        }
    }
}

/// [`table`] of lines made with [`TableLine::of`].
pub fn table_lines(out: &mut impl Write, lines: &[TableLine], style: TableStyle) -> io::Result<()> {
    let texts: Vec<&[String; 9]> = lines.iter().map(|l| &l.cells).collect();
    let cols = layout(&texts, style.width);
    let line = |cells: &[String; 9]| -> String {
        let mut s = String::new();
        for (n, &(i, w)) in cols.iter().enumerate() {
            let c = fit(&cells[i], w);
            s.push_str(&c);
            if n + 1 < cols.len() {
                s.push_str(&" ".repeat(w - c.width() + 2));
            }
        }
        s.trim_end().to_string()
    };
    if style.header {
        let header = line(&HEADERS.map(String::from));
        if style.color {
            writeln!(out, "\x1b[1m{header}\x1b[0m")?;
        } else {
            writeln!(out, "{header}")?;
        }
    }
    for l in lines {
        let text = line(&l.cells);
        if !style.color || l.color.is_empty() {
            writeln!(out, "{text}")?;
        } else {
            writeln!(out, "{}{text}\x1b[0m", l.color)?;
        }
    }
    Ok(())
}

/// The terminal width of stdout, if it is a terminal.
pub fn terminal_width() -> Option<usize> {
    if !io::stdout().is_terminal() {
        return None;
    }
    terminal_size::terminal_size()
        .map(|(w, _)| usize::from(w.0))
        .filter(|&w| w > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_times() {
        assert_eq!(ago(12.7), "12s ago");
        assert_eq!(ago(-78.2), "in 78s");
        assert_eq!(ago(3600.0 * 5.0), "5h ago");
        assert_eq!(short_duration(119.0), "119s");
        assert_eq!(short_duration(120.0), "2m");
        assert_eq!(short_duration(86_400.0 * 2.0), "2d");
    }

    #[test]
    fn fit_cuts_with_an_ellipsis() {
        assert_eq!(fit("abcdef", 6), "abcdef");
        assert_eq!(fit("abcdef", 4), "abc…");
        assert_eq!(fit("日本語テキスト", 5), "日本…");
    }

    fn row(id: &str, title_len: usize) -> [String; 9] {
        [
            format!("*{id}"),
            "working".into(),
            "terminal".into(),
            "laptop".into(),
            "default".into(),
            "12m".into(),
            "1s ago".into(),
            "in 89s".into(),
            "x".repeat(title_len),
        ]
    }

    fn width_of(cols: &[(usize, usize)]) -> usize {
        cols.iter().map(|c| c.1).sum::<usize>() + 2 * (cols.len() - 1)
    }

    fn shown(cols: &[(usize, usize)]) -> Vec<&'static str> {
        cols.iter().map(|c| HEADERS[c.0]).collect()
    }

    #[test]
    fn layout_squeezes_the_title_first() {
        let rows = [row("s-20261130-a1", 200)];
        let cols = layout(&rows, Some(100));
        assert_eq!(width_of(&cols), 100);
        assert_eq!(cols.len(), 9);
        assert_eq!(cols[SESSION], (SESSION, 14));
        assert_eq!(layout(&rows, None)[TITLE], (TITLE, 200));
        // Nothing gives way when everything fits.
        let narrow = [row("s1", 5)];
        assert_eq!(layout(&narrow, Some(200)), layout(&narrow, None));
    }

    #[test]
    fn narrow_terminals_keep_ids_and_hosts_whole() {
        let rows = [row("s-20261130-a1", 200), row("gw-7f2", 3)];
        let cols = layout(&rows, Some(40));
        assert!(width_of(&cols) <= 40, "{cols:?}");
        assert_eq!(shown(&cols), ["SESSION", "STATUS", "HOST", "TITLE"]);
        assert_eq!(cols[0], (SESSION, 14), "the id is whole");
        assert_eq!(cols[2], (HOST, 6), "the host is whole");
        // The title takes back what hiding a column freed.
        assert_eq!(width_of(&layout(&rows, Some(60))), 60);
        // Down to the id alone, whole while it fits.
        let cols = layout(&rows, Some(15));
        assert_eq!(shown(&cols), ["SESSION"]);
        assert_eq!(cols[0].1, 14);
        // Cut only when the id alone is wider than the terminal.
        assert_eq!(layout(&rows, Some(10)), [(SESSION, 10)]);
    }

    #[test]
    fn colour_policy() {
        use std::ffi::OsString;
        let env = |pairs: &'static [(&str, &str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| OsString::from(v))
            }
        };
        let (auto, always, never) = (ColorWhen::Auto, ColorWhen::Always, ColorWhen::Never);
        assert!(decide_color(auto, true, env(&[])));
        assert!(!decide_color(auto, false, env(&[])));
        assert!(!decide_color(auto, true, env(&[("NO_COLOR", "1")])));
        assert!(decide_color(auto, true, env(&[("NO_COLOR", "")])));
        assert!(!decide_color(auto, true, env(&[("TERM", "dumb")])));
        assert!(decide_color(auto, false, env(&[("CLICOLOR_FORCE", "1")])));
        assert!(!decide_color(auto, false, env(&[("CLICOLOR_FORCE", "0")])));
        assert!(!decide_color(
            auto,
            false,
            env(&[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")])
        ));
        assert!(decide_color(always, false, env(&[("NO_COLOR", "1")])));
        assert!(!decide_color(never, true, env(&[("CLICOLOR_FORCE", "1")])));
    }
}
