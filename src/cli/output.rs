//! Everything the binary prints goes through here: this is the one file
//! that holds stdout and stderr (clippy's `disallowed_macros` and
//! `disallowed_methods`, set in clippy.toml, refuse `println!` and
//! `std::io::stdout()` anywhere else).
//!
//! Human output is made of [`Styled`] text, whose only way in is the
//! sanitizer ([`presence::terminal_safe`]), after redaction
//! ([`presence::redact_text`]): a field or file name from the directory can
//! reach a terminal only with its credentials redacted and its control and
//! invisible characters shown as escapes. Our own colours are [`Paint`]s, added after the text is made
//! safe. JSON goes through serde, which escapes control characters and keeps
//! every value exact. Also here: relative times, the colour policy and the
//! table that fits the terminal.

// The one place that may print.
#![allow(clippy::disallowed_macros, clippy::disallowed_methods)]

use std::fmt::Display;
use std::io::{self, IsTerminal, Write};

use std::borrow::Cow;

use presence::Row;
use presence::terminal_safe as safe;
use unicode_properties::{EmojiStatus, UnicodeEmoji};
use unicode_segmentation::UnicodeSegmentation;
use unicode_width::UnicodeWidthStr;

/// A colour or weight of our own, written around text already made safe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Paint {
    Bold,
    Dim,
    Green,
    Yellow,
    Red,
}

impl Paint {
    fn code(self) -> &'static str {
        match self {
            Paint::Bold => "\x1b[1m",
            Paint::Dim => "\x1b[2m",
            Paint::Green => "\x1b[32m",
            Paint::Yellow => "\x1b[33m",
            Paint::Red => "\x1b[31m",
        }
    }
}

const RESET: &str = "\x1b[0m";

/// Text for a terminal. Whatever is added is made safe first; the only
/// escapes in it are the [`Paint`]s it was given.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Styled(String);

impl Styled {
    /// `text`, made safe.
    pub fn new(text: impl Display) -> Styled {
        Styled::default().text(text)
    }

    /// Adds `text`, made safe.
    pub fn text(mut self, text: impl Display) -> Styled {
        self.push(text);
        self
    }

    /// Adds `text`, redacted and made safe, in place. The fields of a
    /// record are redacted already; a file name from the directory, and a
    /// message that quotes one, is not until here.
    pub fn push(&mut self, text: impl Display) {
        let (text, _) = presence::redact_text(&text.to_string());
        self.0.push_str(&safe(&text));
    }

    /// Adds free text from a record (its title), redacted and made safe
    /// as [`safe_text`] makes it: its emoji sequences as they are.
    pub fn prose(mut self, text: &str) -> Styled {
        let (text, _) = presence::redact_text(text);
        self.0.push_str(&safe_text(&text));
        self
    }

    /// Adds `text`, made safe, painted with `paint` (as it is, with none).
    pub fn painted(mut self, paint: Option<Paint>, text: impl Display) -> Styled {
        match paint {
            Some(p) => {
                self.0.push_str(p.code());
                self.push(text);
                self.0.push_str(RESET);
            }
            None => self.push(text),
        }
        self
    }

    /// Adds a command line that `presence open` built
    /// ([`presence::open::shell_line`]): as it is when the only characters
    /// in it the sanitizer would escape are its quoting's backslashes
    /// (`open` checks every part of the argv for that), so that it reads as
    /// exactly what runs and runs the same when pasted; made safe otherwise.
    pub fn command(mut self, line: &str) -> Styled {
        if line
            .split('\\')
            .all(|part| matches!(safe(part), std::borrow::Cow::Borrowed(_)))
        {
            self.0.push_str(line);
        } else {
            self.push(line);
        }
        self
    }

    /// Adds `other`, already safe.
    pub fn then(mut self, other: &Styled) -> Styled {
        self.0.push_str(&other.0);
        self
    }

    /// Adds `other`, already safe, painted with `paint` (as it is, with none).
    pub fn then_painted(mut self, paint: Option<Paint>, other: &Styled) -> Styled {
        match paint {
            Some(p) => {
                self.0.push_str(p.code());
                self.0.push_str(&other.0);
                self.0.push_str(RESET);
            }
            None => self.0.push_str(&other.0),
        }
        self
    }

    /// Adds text the user typed among this command's own arguments (the
    /// literal parts of a `--format` template, its `\t` and `\n` already
    /// turned into a tab and a newline): theirs, printed as they typed it.
    pub fn typed_by_user(&mut self, text: &str) {
        self.0.push_str(text);
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Without trailing spaces (padding before an empty last column).
    pub fn trimmed(mut self) -> Styled {
        self.0.truncate(self.0.trim_end_matches(' ').len());
        self
    }

    /// Writes the text and a newline to `out`.
    pub fn write_line(&self, out: &mut impl Write) -> io::Result<()> {
        writeln!(out, "{}", self.0)
    }
}

/// Free text from the directory (a title) made safe for a terminal as
/// [`safe`] makes it, except in an emoji sequence: the emoji presentation
/// selector (VS16, U+FE0F) and the zero width joiner (ZWJ, U+200D) that
/// make `⚠️`, `👩‍💻`, `🏳️‍🌈` or a keycap `1️⃣` are shown as they are. The
/// same characters anywhere else (between letters, leading, trailing, in a
/// session id, host or file name, which always go through [`safe`]) are
/// still shown as escapes: it is there that an invisible character can make
/// two different names look alike. A sequence is one grapheme cluster made
/// only of emoji (see [`is_emoji_sequence`]); a tag sequence (the flag of
/// Scotland) stays escaped, since tag characters can spell hidden text.
pub fn safe_text(text: &str) -> Cow<'_, str> {
    let escaped = safe(text);
    if matches!(escaped, Cow::Borrowed(_)) || !text.contains(['\u{fe0f}', '\u{200d}']) {
        return escaped;
    }
    // `safe` escapes character by character, so escaping each grapheme on
    // its own is escaping the whole.
    let mut out = String::with_capacity(escaped.len());
    for g in text.graphemes(true) {
        if is_emoji_sequence(g) {
            out.push_str(g);
        } else {
            out.push_str(&safe(g));
        }
    }
    Cow::Owned(out)
}

/// Whether the grapheme cluster `g` is an emoji sequence with a VS16 or a
/// ZWJ in it: a keycap (`0`–`9`, `#` or `*`, VS16, U+20E3), or emoji joined
/// by single ZWJs, each a pictographic emoji alone, with VS16, or with a
/// skin tone. Nothing but those characters is in it, so it can be printed as
/// it is.
fn is_emoji_sequence(g: &str) -> bool {
    if !g.contains(['\u{fe0f}', '\u{200d}']) {
        return false;
    }
    let mut chars = g.chars();
    if let (Some(key), Some('\u{fe0f}'), Some('\u{20e3}'), None) =
        (chars.next(), chars.next(), chars.next(), chars.next())
    {
        return matches!(key, '0'..='9' | '#' | '*');
    }
    g.split('\u{200d}').all(|element| {
        let mut chars = element.chars();
        let Some(base) = chars.next() else {
            return false;
        };
        let pictographic = base.is_emoji_char() && !base.is_ascii() && !is_skin_tone(base);
        match (chars.next(), chars.next()) {
            (None, _) | (Some('\u{fe0f}'), None) => pictographic,
            (Some(tone), None) if is_skin_tone(tone) => {
                pictographic
                    && matches!(
                        base.emoji_status(),
                        EmojiStatus::EmojiModifierBase
                            | EmojiStatus::EmojiPresentationAndModifierBase
                    )
            }
            _ => false,
        }
    })
}

/// An emoji modifier: one of the five skin tones.
fn is_skin_tone(c: char) -> bool {
    matches!(c, '\u{1f3fb}'..='\u{1f3ff}')
}

/// Standard output, locked: the only way to it.
pub struct Out(io::StdoutLock<'static>);

/// Standard output.
pub fn stdout() -> Out {
    Out(io::stdout().lock())
}

impl Out {
    /// Writes `line` and a newline.
    pub fn line(&mut self, line: &Styled) -> io::Result<()> {
        line.write_line(&mut self.0)
    }

    /// Writes `text`, made safe, and a newline.
    pub fn say(&mut self, text: impl Display) -> io::Result<()> {
        self.line(&Styled::new(text))
    }

    /// Writes `prompt` with no newline and flushes: a question whose
    /// answer is typed after it.
    pub fn prompt(&mut self, prompt: &Styled) -> io::Result<()> {
        self.0.write_all(prompt.as_str().as_bytes())?;
        self.0.flush()
    }

    /// Writes an empty line.
    pub fn blank(&mut self) -> io::Result<()> {
        writeln!(self.0)
    }

    /// Writes text this program made whole and that has no field of a
    /// record in it as it is: a shell completion script, the configuration
    /// printed as TOML (whose strings escape their control characters).
    pub fn verbatim(&mut self, text: &str) -> io::Result<()> {
        self.0.write_all(text.as_bytes())
    }

    /// Writes `value` as pretty JSON and a newline.
    pub fn json(&mut self, value: &impl serde::Serialize) -> anyhow::Result<()> {
        write_json(&mut self.0, value)
    }

    /// Writes `value` as one line of JSON (NDJSON).
    pub fn json_line(&mut self, value: &impl serde::Serialize) -> anyhow::Result<()> {
        serde_json::to_writer(&mut self.0, value).map_err(json_error)?;
        writeln!(self.0)?;
        Ok(())
    }

    /// A JSON array written one element at a time, each on its own line.
    pub fn json_array(&mut self) -> io::Result<JsonArray<'_>> {
        let mut w = io::BufWriter::with_capacity(1 << 16, &mut self.0);
        w.write_all(b"[")?;
        Ok(JsonArray { w, first: true })
    }

    /// Moves the cursor home and clears the screen, before the first
    /// [`Out::redraw`].
    pub fn clear_screen(&mut self) -> io::Result<()> {
        write!(self.0, "\x1b[H\x1b[2J")
    }

    /// Draws `lines` over the screen from its top left corner, each line
    /// cleared to its end, and clears what is below the last: a redraw in
    /// place that never blanks the screen in between, as a full clear does.
    /// No newline follows the last line, so that a frame as tall as the
    /// window does not scroll; lines narrower than the window stay clear of
    /// the last column, whose pending wrap an erase would take back.
    pub fn redraw(&mut self, lines: &[Styled]) -> io::Result<()> {
        write!(self.0, "\x1b[H")?;
        for (i, line) in lines.iter().enumerate() {
            if i > 0 {
                writeln!(self.0)?;
            }
            write!(self.0, "{}\x1b[K", line.as_str())?;
        }
        write!(self.0, "\x1b[J")
    }

    /// Ends a run of [`Out::redraw`]s: the cursor on the line below the
    /// last frame, where the shell's prompt then comes.
    pub fn end_redraw(&mut self) -> io::Result<()> {
        writeln!(self.0)?;
        self.0.flush()
    }

    /// Writes `lines`, each and a newline.
    pub fn lines(&mut self, lines: &[Styled]) -> io::Result<()> {
        for line in lines {
            self.line(line)?;
        }
        Ok(())
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

/// See [`Out::json_array`].
pub struct JsonArray<'a> {
    w: io::BufWriter<&'a mut io::StdoutLock<'static>>,
    first: bool,
}

impl JsonArray<'_> {
    /// Writes the next element.
    pub fn push(&mut self, value: &impl serde::Serialize) -> io::Result<()> {
        let sep: &[u8] = if self.first { b"\n" } else { b",\n" };
        self.first = false;
        self.w.write_all(sep)?;
        serde_json::to_writer(&mut self.w, value).map_err(io::Error::from)
    }

    /// Ends the array.
    pub fn finish(mut self) -> io::Result<()> {
        self.w
            .write_all(if self.first { b"]\n" } else { b"\n]\n" })?;
        self.w.flush()
    }
}

/// Writes `line` and a newline on stderr.
pub fn eline(line: &Styled) {
    let _ = line.write_line(&mut io::stderr().lock());
}

/// `presence: TEXT` on stderr, the text made safe.
pub fn notice(text: impl Display) {
    eline(&Styled::new(format_args!("presence: {text}")));
}

/// `presence: warning: TEXT` on stderr.
pub fn warning(text: impl Display) {
    eline(&Styled::new(format_args!("presence: warning: {text}")));
}

/// `presence: error: TEXT` on stderr.
pub fn error(text: impl Display) {
    eline(&Styled::new(format_args!("presence: error: {text}")));
}

/// `presence: error: ` and `err` with its causes on stderr, in the lines
/// of [`error_lines`].
pub fn report(err: &anyhow::Error) {
    let lines = error_lines(err.chain());
    let mut lines = lines.iter();
    error(lines.next().map_or("", String::as_str));
    for line in lines {
        eline(&Styled::new(line));
    }
}

/// An error and its causes as anyhow's `{:#}` joins them (`context: cause:
/// cause`), as lines for a person, not yet made safe: the first line, then
/// the lines of a message that has them (a TOML error's caret diagram:
/// [`keeps_its_lines`]), each already indented by the message. A newline
/// anywhere else (one in a file name from the directory) stays in its
/// line, where [`Styled`] shows it as `\n`.
pub fn error_lines<'a>(
    chain: impl Iterator<Item = &'a (dyn std::error::Error + 'static)>,
) -> Vec<String> {
    let mut lines = vec![String::new()];
    for (i, cause) in chain.enumerate() {
        let text = cause.to_string();
        let mut parts: Vec<&str> = if keeps_its_lines(cause) {
            text.split('\n').collect()
        } else {
            vec![&text]
        };
        let first = parts.remove(0);
        if let Some(last) = lines.last_mut() {
            if i > 0 {
                last.push_str(": ");
            }
            last.push_str(first);
        }
        lines.extend(parts.into_iter().map(String::from));
    }
    lines
}

/// Whether `cause`'s message is lines of its own: a configuration file
/// that does not parse, whose message (the parser's) points at the line
/// with a caret diagram under it. Its text comes from the configuration
/// file and the parser, never from the shared directory; every line is
/// still made safe on its own.
fn keeps_its_lines(cause: &(dyn std::error::Error + 'static)) -> bool {
    use presence::{ConfigError, Error};
    let config = match cause.downcast_ref::<Error>() {
        Some(Error::Config(c)) => Some(c),
        _ => cause.downcast_ref::<ConfigError>(),
    };
    matches!(config, Some(ConfigError::Parse { .. }))
}

/// Asks `prompt` (made safe) on stderr, with no newline, and flushes.
pub fn prompt(prompt: &Styled) -> io::Result<()> {
    let mut err = io::stderr().lock();
    write!(err, "{}", prompt.as_str())?;
    err.flush()
}

/// Whether stdout is a terminal.
pub fn stdout_is_terminal() -> bool {
    io::stdout().is_terminal()
}

/// Whether stderr is a terminal.
pub fn stderr_is_terminal() -> bool {
    io::stderr().is_terminal()
}

/// The size of the terminal on stderr, (columns, rows), if it is one.
pub fn stderr_size() -> Option<(usize, usize)> {
    terminal_size::terminal_size_of(io::stderr()).map(|(w, h)| (usize::from(w.0), usize::from(h.0)))
}

/// Whether to colour (or embolden) what is drawn on stderr: the policy of
/// [`color`] for stderr.
pub fn color_stderr() -> bool {
    decide_color(ColorWhen::Auto, io::stderr().is_terminal(), |k| {
        std::env::var_os(k)
    })
}

/// Draws `lines` (already safe) on stderr as an inline frame in place of
/// the one drawn before, whose cursor was left `at` lines below its first;
/// leaves the cursor at `cursor` (line, column) and returns that line. A
/// line must be narrower than the terminal, and the frame lower than it.
pub fn redraw(at: usize, lines: &[Styled], cursor: (usize, usize)) -> io::Result<usize> {
    let mut out = String::from("\r");
    if at > 0 {
        out.push_str(&format!("\x1b[{at}A"));
    }
    out.push_str("\x1b[J");
    let joined: Vec<&str> = lines.iter().map(Styled::as_str).collect();
    out.push_str(&joined.join("\r\n"));
    let (line, column) = cursor;
    let up = lines.len().saturating_sub(1).saturating_sub(line);
    if up > 0 {
        out.push_str(&format!("\x1b[{up}A"));
    }
    out.push('\r');
    if column > 0 {
        out.push_str(&format!("\x1b[{column}C"));
    }
    let mut err = io::stderr().lock();
    err.write_all(out.as_bytes())?;
    err.flush()?;
    Ok(line.min(lines.len().saturating_sub(1)))
}

/// Clears a frame drawn by [`redraw`] whose cursor is `at` lines below its
/// first, leaving the cursor where the frame began.
pub fn clear_frame(at: usize) -> io::Result<()> {
    let mut out = String::from("\r");
    if at > 0 {
        out.push_str(&format!("\x1b[{at}A"));
    }
    out.push_str("\x1b[J");
    let mut err = io::stderr().lock();
    err.write_all(out.as_bytes())?;
    err.flush()
}

/// Whether stdout is a pipe whose reader has gone. A status bar that
/// restarts closes its end and starts a new watcher; this one would only
/// learn of it at its next write, which may be hours away.
pub fn reader_gone() -> bool {
    use rustix::event::{PollFd, PollFlags, Timespec, poll};
    let stdout = io::stdout();
    let mut fds = [PollFd::new(&stdout, PollFlags::empty())];
    let now = Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    matches!(poll(&mut fds, Some(&now)), Ok(n) if n > 0)
        && fds[0].revents().intersects(PollFlags::ERR | PollFlags::HUP)
}

fn json_error(e: serde_json::Error) -> anyhow::Error {
    match e.io_error_kind() {
        Some(kind) => anyhow::Error::from(io::Error::new(kind, e)),
        None => anyhow::Error::from(e),
    }
}

/// `--color`: when to colour human output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ColorWhen {
    /// On a terminal, unless NO_COLOR is set or CLICOLOR=0; FORCE_COLOR or CLICOLOR_FORCE
    /// also into a pipe
    #[default]
    Auto,
    /// Always, also into a pipe (for a pager: less -R)
    Always,
    /// Never
    Never,
}

/// The `--color` of this process, set once from the command line.
static COLOR_WHEN: std::sync::OnceLock<ColorWhen> = std::sync::OnceLock::new();

/// Sets the `--color` every later [`color_stdout`] follows (once: the
/// first call wins).
pub fn set_color(when: ColorWhen) {
    let _ = COLOR_WHEN.set(when);
}

/// Whether to colour stdout: as `--color` says, with this process's
/// environment and stdout.
pub fn color_stdout() -> bool {
    let when = COLOR_WHEN.get().copied().unwrap_or_default();
    decide_color(when, io::stdout().is_terminal(), |k| std::env::var_os(k))
}

/// The colour policy. A flag on the command line is the most specific
/// wish and wins; then `NO_COLOR` (set and not empty: no colour, see
/// no-color.org); then `CLICOLOR_FORCE` or `FORCE_COLOR` (set, not empty
/// and not `0`: colour even into a pipe, for `less -R`); then `CLICOLOR=0`
/// (no colour, on a terminal too); else colour only on a terminal that is
/// not `TERM=dumb`.
fn decide_color(
    when: ColorWhen,
    tty: bool,
    env: impl Fn(&str) -> Option<std::ffi::OsString>,
) -> bool {
    let forced = |k: &str| env(k).is_some_and(|v| !v.is_empty() && v != "0");
    match when {
        ColorWhen::Always => true,
        ColorWhen::Never => false,
        ColorWhen::Auto => {
            if env("NO_COLOR").is_some_and(|v| !v.is_empty()) {
                false
            } else if forced("CLICOLOR_FORCE") || forced("FORCE_COLOR") {
                true
            } else if env("CLICOLOR").is_some_and(|v| v == "0") {
                false
            } else {
                tty && env("TERM").is_none_or(|t| t != "dumb")
            }
        }
    }
}

/// `12s`, `3m`, `2h`, `5d` — the largest unit that fits, rounded down;
/// `>100y` for a time a century or more away (a broken or hostile
/// record's), `?` for none: never wider than six columns.
pub use presence::short_duration;

/// Writes `value` as pretty JSON and a newline, streamed through a buffer.
/// A closed pipe surfaces as the plain `io::Error` it is.
fn write_json(out: &mut impl Write, value: &impl serde::Serialize) -> anyhow::Result<()> {
    let mut w = io::BufWriter::with_capacity(1 << 16, out);
    serde_json::to_writer_pretty(&mut w, value).map_err(json_error)?;
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
/// to come is shown as 0). None for a record without `started_at`; NaN
/// (shown as `?`) when the writer's learned offset is a century or more,
/// which no clock is off by: a hostile record taught it, and it places
/// nothing on this clock.
pub fn up_s(row: &Row, now: f64) -> Option<f64> {
    let started_at = row.record.started_at?;
    let offset = row.writer_offset_s.unwrap_or(0.0);
    if !presence::within_a_century(offset) {
        return Some(f64::NAN);
    }
    Some((now - (started_at - offset)).max(0.0))
}

/// The `EXPIRES` cell: `in 89s` for a live row, else its state
/// (`superseded` for a loser of `--all`).
pub fn expires(row: &Row) -> String {
    if row.superseded_by.is_some() {
        "superseded".to_string()
    } else if row.live {
        row.expires_in_s
            .map_or_else(String::new, |e| format!("in {}", short_duration(e)))
    } else {
        row.state.to_string()
    }
}

fn cells(row: &Row, now: f64) -> [String; 9] {
    let r = &row.record;
    // `*` this device's; `?` unsigned (Hermes Agent, an older version): no
    // signature proves which device wrote it (README, docs/security.md).
    let mark = match (row.local, row.verified) {
        (true, _) => "*",
        (false, true) => " ",
        (false, false) => "?",
    };
    let session = format!("{mark}{}", safe(&r.session_id));
    let expires = expires(row);
    [
        session,
        safe(&r.status).into_owned(),
        safe(r.client_or_source()).into_owned(),
        safe(&r.host).into_owned(),
        safe(&r.profile).into_owned(),
        up_s(row, now).map_or_else(String::new, short_duration),
        ago(row.age_s),
        expires,
        safe_text(&r.title).into_owned(),
    ]
}

/// Cuts `s` to `width` columns, ending with `…` when it was cut, between
/// grapheme clusters: never inside an emoji sequence, nor between a
/// letter and its combining mark.
pub fn fit(s: &str, width: usize) -> String {
    if s.width() <= width {
        return s.to_string();
    }
    let mut out = String::new();
    let mut w = 0;
    for g in s.graphemes(true) {
        let gw = g.width();
        if w + gw + 1 > width {
            break;
        }
        out.push_str(g);
        w += gw;
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

/// The table's lines (the header first, unless left out) of `rows`.
pub fn table(rows: &[Row], style: TableStyle) -> Vec<Styled> {
    let lines: Vec<TableLine> = rows.iter().map(|r| TableLine::of(r, style.now)).collect();
    table_lines(&lines, style)
}

/// What the table shows of one row: its cells, made safe, and its colour.
/// A listing that streams its rows keeps only these, not the rows.
pub struct TableLine {
    cells: [String; 9],
    paint: Option<Paint>,
}

impl TableLine {
    /// The line of `row` at `now`.
    pub fn of(row: &Row, now: f64) -> TableLine {
        let paint = if !row.live {
            Some(Paint::Dim)
        } else {
            match row.record.status.as_str() {
                "working" | "busy" | "running" => Some(Paint::Green),
                "waiting" | "blocked" => Some(Paint::Yellow),
                "error" | "failed" => Some(Paint::Red),
                _ => None,
            }
        };
        TableLine {
            cells: cells(row, now),
            paint,
        }
    }
}

/// [`table`] of lines made with [`TableLine::of`].
pub fn table_lines(lines: &[TableLine], style: TableStyle) -> Vec<Styled> {
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
    // The cells are safe already (`cells`), the headers are ours: the
    // lines are made whole here, and only painted.
    let paint = |p: Option<Paint>, text: String| match p.filter(|_| style.color) {
        Some(p) => Styled(format!("{}{text}{RESET}", p.code())),
        None => Styled(text),
    };
    let mut out = Vec::with_capacity(lines.len() + 1);
    if style.header {
        out.push(paint(Some(Paint::Bold), line(&HEADERS.map(String::from))));
    }
    for l in lines {
        out.push(paint(l.paint, line(&l.cells)));
    }
    out
}

/// `left`, made safe and cut to fit, then `right` at the right edge of
/// `width` columns (after two spaces, when there is no width): a title line.
pub fn title_line(left: impl Display, right: &str, width: Option<usize>) -> Styled {
    let left = Styled::new(left);
    let Some(width) = width else {
        return Styled(format!("{}  {right}", left.0));
    };
    let room = width.saturating_sub(right.width() + 2);
    let left = fit(&left.0, room);
    let pad = width.saturating_sub(left.width() + right.width()).max(2);
    if left.width() + pad + right.width() > width {
        return Styled(fit(&left, width));
    }
    Styled(format!("{left}{:pad$}{right}", ""))
}

/// `text`, made safe and cut to `width` columns (with `…`) when there is one.
pub fn cut_line(text: impl Display, width: Option<usize>) -> Styled {
    let text = Styled::new(text);
    match width {
        Some(w) => Styled(fit(&text.0, w)),
        None => text,
    }
}

/// The terminal height of stdout, if it is a terminal.
pub fn terminal_height() -> Option<usize> {
    if !io::stdout().is_terminal() {
        return None;
    }
    terminal_size::terminal_size()
        .map(|(_, h)| usize::from(h.0))
        .filter(|&h| h > 0)
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
        assert_eq!(ago(1e300), ">100y ago");
        assert_eq!(ago(-1e300), "in >100y");
        assert_eq!(ago(f64::NAN), "? ago");
    }

    fn record_row(started_at: Option<f64>, writer_offset_s: Option<f64>) -> Row {
        let mut record = presence::Record::new("s");
        record.started_at = started_at;
        Row {
            record,
            file: "f.json".into(),
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
            writer_offset_s,
            lost_because: None,
            verified: false,
            forged: None,
            redactions: Vec::new(),
        }
    }

    /// A hostile record's times: the UP cell stays short, or says it
    /// cannot tell.
    #[test]
    fn up_is_clamped_for_absurd_times() {
        let now = 1_800_000_000.0;
        let up = |started, offset| cells(&record_row(started, offset), now)[UP].clone();
        assert_eq!(up(Some(now - 7300.0), None), "2h");
        assert_eq!(up(Some(now - 7300.0), Some(-100.0)), "2h");
        assert_eq!(up(Some(-1e300), None), ">100y");
        assert_eq!(up(Some(f64::MIN), Some(5.0)), ">100y");
        assert_eq!(up(Some(1e300), None), "0s");
        // An offset no clock has: the start cannot be placed on ours.
        assert_eq!(up(Some(1e300), Some(1e300)), "?");
        assert_eq!(up(Some(now), Some(-1e300)), "?");
        assert_eq!(up(None, Some(1e300)), "");
    }

    #[test]
    fn fit_cuts_with_an_ellipsis() {
        assert_eq!(fit("abcdef", 6), "abcdef");
        assert_eq!(fit("abcdef", 4), "abc…");
        assert_eq!(fit("日本語テキスト", 5), "日本…");
    }

    /// A cut falls between grapheme clusters: never inside an emoji ZWJ
    /// sequence, a flag or a letter with its combining marks.
    #[test]
    fn fit_never_cuts_inside_a_grapheme() {
        let coder = "👩\u{200d}💻";
        assert_eq!(fit(&coder.repeat(3), 4), format!("{coder}…"));
        assert_eq!(fit(&coder.repeat(3), 3), format!("{coder}…"));
        assert_eq!(fit("🇫🇷🇩🇪", 2), "…");
        assert_eq!(fit("🇫🇷🇩🇪", 3), "🇫🇷…");
        assert_eq!(fit("ae\u{301}\u{323}xyz", 3), "ae\u{301}\u{323}…");
        assert_eq!(fit("⚠\u{fe0f}⚠\u{fe0f}", 3), "⚠\u{fe0f}…");
    }

    /// Emoji sequences in free text keep their VS16 and ZWJ; the same
    /// characters anywhere else are escaped as [`safe`] escapes them.
    #[test]
    fn free_text_shows_emoji_sequences_and_escapes_the_rest() {
        let shown = [
            "⚠\u{fe0f} tests failing ✔\u{fe0f} lint ok",
            "pairing 👩\u{200d}💻 with 🏳\u{fe0f}\u{200d}🌈 team",
            "1\u{fe0f}\u{20e3} #\u{fe0f}\u{20e3} *\u{fe0f}\u{20e3}",
            "🏃🏽\u{200d}♀\u{fe0f} 👁\u{fe0f}\u{200d}🗨\u{fe0f}",
            "👨\u{200d}👩\u{200d}👧\u{200d}👦 ❤\u{fe0f}\u{200d}🔥 ©\u{fe0f}",
            "plain 日本語 🎉 ✓",
        ];
        for text in shown {
            assert_eq!(safe_text(text), text, "{text:?}");
        }
        let escaped = [
            ("a\u{200d}b", "a\\u{200d}b"),
            ("x\u{fe0f}", "x\\u{fe0f}"),
            ("1\u{fe0f}", "1\\u{fe0f}"),
            ("\u{200d}👩", "\\u{200d}👩"),
            ("👩\u{200d}", "👩\\u{200d}"),
            ("👩\u{200d}\u{200d}💻", "👩\\u{200d}\\u{200d}💻"),
            ("👩\u{200d}x", "👩\\u{200d}x"),
            ("\u{fe0f}\u{fe0f}", "\\u{fe0f}\\u{fe0f}"),
            ("⚠\u{fe0f}\u{fe0f}", "⚠\\u{fe0f}\\u{fe0f}"),
            ("🌈🏽\u{200d}👩", "🌈🏽\\u{200d}👩"),
            ("👩\u{200d}💻\u{202e}", "👩\u{200d}💻\\u{202e}"),
            (
                "🏴\u{e0067}\u{e0062}\u{e007f}",
                "🏴\\u{e0067}\\u{e0062}\\u{e007f}",
            ),
            ("⚠\u{fe0f}\n\x1b[2J", "⚠\u{fe0f}\\n\\e[2J"),
            ("back\\slash ⚠\u{fe0f}", "back\\\\slash ⚠\u{fe0f}"),
        ];
        for (text, want) in escaped {
            assert_eq!(safe_text(text), want, "{text:?}");
        }
        assert!(matches!(safe_text("clean ⚠"), Cow::Borrowed(_)));
    }

    proptest::proptest! {
        /// Whatever the text, what reaches the terminal is what [`safe`]
        /// makes of it but for whole emoji sequences: no other character
        /// that [`safe`] escapes, and a VS16 or ZWJ only inside one.
        #[test]
        fn free_text_lets_through_only_whole_emoji_sequences(
            chars in proptest::collection::vec(proptest::sample::select(vec![
                'a', '1', '#', '\\', '\n', '\x1b', '⚠', '👩', '💻', '🏽', '🏳', '🌈', '\u{fe0f}',
                '\u{200d}', '\u{20e3}', '\u{e0067}', '\u{202e}', '\u{301}', '🇫',
            ]), 0..24)
        ) {
            let text: String = chars.into_iter().collect();
            let out = safe_text(&text);
            for g in out.graphemes(true) {
                if g.contains(['\u{fe0f}', '\u{200d}']) {
                    proptest::prop_assert!(is_emoji_sequence(g), "{:?} in {:?}", g, out);
                } else {
                    for c in g.chars().filter(|&c| c != '\\') {
                        let one = c.to_string();
                        proptest::prop_assert!(
                            matches!(safe(&one), Cow::Borrowed(_)),
                            "{:?} in {:?}", c, out
                        );
                    }
                }
            }
            let kept: String = text
                .graphemes(true)
                .map(|g| if is_emoji_sequence(g) { g.into() } else { safe(g) })
                .collect();
            proptest::prop_assert_eq!(out.as_ref(), kept.as_str());
        }
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
        // CLICOLOR=0: none on a terminal either; forcing still wins over it.
        assert!(!decide_color(auto, true, env(&[("CLICOLOR", "0")])));
        assert!(decide_color(auto, true, env(&[("CLICOLOR", "1")])));
        assert!(!decide_color(auto, false, env(&[("CLICOLOR", "1")])));
        assert!(decide_color(
            auto,
            true,
            env(&[("CLICOLOR", "0"), ("CLICOLOR_FORCE", "1")])
        ));
        assert!(decide_color(always, true, env(&[("CLICOLOR", "0")])));
        // FORCE_COLOR, as CLICOLOR_FORCE; NO_COLOR still wins.
        assert!(decide_color(auto, false, env(&[("FORCE_COLOR", "1")])));
        assert!(decide_color(auto, false, env(&[("FORCE_COLOR", "3")])));
        assert!(!decide_color(auto, false, env(&[("FORCE_COLOR", "0")])));
        assert!(!decide_color(auto, false, env(&[("FORCE_COLOR", "")])));
        assert!(!decide_color(
            auto,
            false,
            env(&[("FORCE_COLOR", "1"), ("NO_COLOR", "1")])
        ));
        assert!(!decide_color(never, false, env(&[("FORCE_COLOR", "1")])));
    }
}
