//! The chooser of `presence open` with no ID: an inline, fzf-like list of
//! the sessions that can be opened, each with the command Enter runs. Type
//! to filter, arrows (or Ctrl-P/Ctrl-N) to move, Enter to open, Esc or
//! Ctrl-C to cancel. On a terminal that cannot move its cursor (`TERM=dumb`)
//! a numbered list and a question that takes a number, an id or the start
//! of one, and asks again on an answer that names none.
//!
//! Written on the terminal's own raw mode (rustix's termios, already in the
//! build) rather than a prompt crate: the rows must be cut to the width at
//! every redraw, an exact id must come first whatever a fuzzy score says,
//! and every foreign string goes through the one sanitizer, which
//! [`output`] applies. The drawing itself is in [`output`], like all
//! printing.

use std::io::{BufRead as _, IsTerminal as _};

use rustix::termios::{self, InputModes, LocalModes, OptionalActions, SpecialCodeIndex};
use unicode_width::UnicodeWidthStr as _;

use super::output::{self, Paint, Styled};

/// One session that can be opened, as the chooser shows it. Every field is
/// made safe for a terminal already.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    pub id: String,
    pub key: String,
    pub status: String,
    pub host: String,
    pub title: String,
    /// The command Enter runs, as `--print` prints it.
    pub command: String,
}

impl Item {
    /// An item of foreign fields, each made safe; `command` is a line that
    /// `presence open` built ([`Styled::command`] keeps its quoting).
    pub fn new(id: &str, key: &str, status: &str, host: &str, title: &str, command: &str) -> Item {
        let safe = |s: &str| Styled::new(s).as_str().to_string();
        Item {
            id: safe(id),
            key: safe(key),
            status: safe(status),
            host: safe(host),
            title: safe(title),
            command: Styled::default().command(command).as_str().to_string(),
        }
    }

    fn haystack(&self) -> String {
        [
            &self.id,
            &self.key,
            &self.status,
            &self.host,
            &self.title,
            &self.command,
        ]
        .map(|s| s.to_lowercase())
        .join("\n")
    }
}

/// A key, as the chooser reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    Char(char),
    Backspace,
    /// Ctrl-U: empty the filter.
    Clear,
    /// Ctrl-W: the filter's last word off.
    DeleteWord,
    Up,
    Down,
    PageUp,
    PageDown,
    Home,
    End,
    Enter,
    /// Esc, Ctrl-C, Ctrl-G, Ctrl-Q; Ctrl-D on an empty filter.
    Cancel,
    /// Ctrl-D: cancels on an empty filter, else nothing.
    CtrlD,
    /// Anything else: nothing happens.
    Other,
}

/// What a key leads to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Continue,
    /// Open the item of this index.
    Open(usize),
    Cancel,
}

/// The chooser's state: the items, the filter typed so far, the rows that
/// match it (best first) and which of them is selected.
#[derive(Debug)]
pub struct Chooser {
    items: Vec<Item>,
    haystacks: Vec<String>,
    /// `N left out: …`, or empty.
    left_out: String,
    query: String,
    matches: Vec<usize>,
    selected: usize,
    scroll: usize,
}

/// The most rows shown at once.
const MAX_ROWS: usize = 15;

impl Chooser {
    pub fn new(items: Vec<Item>, left_out: String) -> Chooser {
        let haystacks = items.iter().map(Item::haystack).collect();
        let mut c = Chooser {
            items,
            haystacks,
            left_out,
            query: String::new(),
            matches: Vec::new(),
            selected: 0,
            scroll: 0,
        };
        c.refilter();
        c
    }

    /// The indexes of the items the filter matches, best first: an id or
    /// key equal to the filter, then ids and keys that start with it, then
    /// the rest whose text holds every word of it (case aside), each group
    /// in the listing's order.
    fn refilter(&mut self) {
        let q = self.query.trim();
        let words: Vec<String> = q.split_whitespace().map(str::to_lowercase).collect();
        let mut ranked: Vec<(u8, usize)> = Vec::new();
        for (i, (item, hay)) in self.items.iter().zip(&self.haystacks).enumerate() {
            if !words.iter().all(|w| hay.contains(w.as_str())) {
                continue;
            }
            let rank = if !q.is_empty() && (item.id == q || item.key == q) {
                0
            } else if !q.is_empty() && (item.id.starts_with(q) || item.key.starts_with(q)) {
                1
            } else {
                2
            };
            ranked.push((rank, i));
        }
        ranked.sort_by_key(|&(rank, i)| (rank, i));
        self.matches = ranked.into_iter().map(|(_, i)| i).collect();
        self.selected = 0;
        self.scroll = 0;
    }

    /// Applies `key`; `page` is how many rows one page moves.
    pub fn key(&mut self, key: Key, page: usize) -> Outcome {
        let last = self.matches.len().saturating_sub(1);
        match key {
            Key::Char(c) => {
                self.query.push(c);
                self.refilter();
            }
            Key::Backspace => {
                if self.query.pop().is_some() {
                    self.refilter();
                }
            }
            Key::Clear => {
                self.query.clear();
                self.refilter();
            }
            Key::DeleteWord => {
                let kept = self.query.trim_end().len();
                let cut = self.query[..kept].rfind(' ').map_or(0, |i| i + 1);
                self.query.truncate(cut);
                self.refilter();
            }
            Key::Up => self.selected = self.selected.saturating_sub(1),
            Key::Down => self.selected = (self.selected + 1).min(last),
            Key::PageUp => self.selected = self.selected.saturating_sub(page.max(1)),
            Key::PageDown => self.selected = (self.selected + page.max(1)).min(last),
            Key::Home => self.selected = 0,
            Key::End => self.selected = last,
            // Nothing matches: the user changes the filter, or cancels.
            Key::Enter => {
                if let Some(&i) = self.matches.get(self.selected) {
                    return Outcome::Open(i);
                }
            }
            Key::Cancel => return Outcome::Cancel,
            Key::CtrlD if self.query.is_empty() => return Outcome::Cancel,
            Key::CtrlD | Key::Other => {}
        }
        Outcome::Continue
    }

    /// The frame for a terminal of `width` × `height`: the prompt with the
    /// filter, the matching rows (the selected one marked `>`, in bold if
    /// `bold`), and a status line; every line cut to the width. Also the
    /// cursor's place: (line, column), at the end of the filter.
    pub fn frame(
        &mut self,
        width: usize,
        height: usize,
        bold: bool,
    ) -> (Vec<Styled>, (usize, usize)) {
        let width = width.max(20) - 1;
        let room = height.saturating_sub(3).clamp(1, MAX_ROWS);
        if self.selected < self.scroll {
            self.scroll = self.selected;
        } else if self.selected >= self.scroll + room {
            self.scroll = self.selected + 1 - room;
        }
        let prompt = "Open which session? ";
        let query = Styled::new(&self.query);
        let shown_query = output::fit(query.as_str(), width.saturating_sub(prompt.len()));
        let mut lines = vec![Styled::new(prompt).then(&Styled::default().command(&shown_query))];
        let cursor = (0, prompt.len() + shown_query.width());

        let visible: Vec<&Item> = self.matches[self.scroll..]
            .iter()
            .take(room)
            .map(|&i| &self.items[i])
            .collect();
        let cap = |f: fn(&Item) -> &str, max: usize| {
            self.matches
                .iter()
                .map(|&i| f(&self.items[i]).width())
                .max()
                .unwrap_or(0)
                .min(max)
        };
        let w_id = cap(|i| &i.id, 28);
        let w_status = cap(|i| &i.status, 10);
        let w_host = cap(|i| &i.host, 32);
        let w_title = if width >= 80 {
            cap(|i| &i.title, 24)
        } else {
            0
        };
        for (n, item) in visible.iter().enumerate() {
            let selected = self.scroll + n == self.selected;
            let cell = |s: &str, w: usize| {
                let s = output::fit(s, w);
                let pad = w.saturating_sub(s.width());
                format!("{s}{}  ", " ".repeat(pad))
            };
            let mut text = String::from(if selected { "> " } else { "  " });
            text.push_str(&cell(&item.id, w_id));
            text.push_str(&cell(&item.status, w_status));
            text.push_str(&cell(&item.host, w_host));
            if w_title > 0 {
                text.push_str(&cell(&item.title, w_title));
            }
            text.push_str(&item.command);
            let text = output::fit(&text, width);
            // Already safe: each part was made safe when the item was made.
            let line = Styled::default().command(&text);
            let paint = (selected && bold).then_some(Paint::Bold);
            lines.push(Styled::default().then_painted(paint, &line));
        }
        if self.matches.is_empty() {
            lines.push(Styled::new(output::fit(
                "  (no session matches; Backspace or Ctrl-U changes the filter)",
                width,
            )));
        }
        let mut status = format!("  {}/{}", self.matches.len(), self.items.len());
        if !self.left_out.is_empty() {
            status.push_str(&format!(" · {}", self.left_out));
        }
        status.push_str(" · ↑↓ move, Enter open, Esc cancel");
        lines.push(Styled::new(output::fit(&status, width)));
        (lines, cursor)
    }

    /// The line-mode answer `answer` (a number, an id or the start of one):
    /// the item it names, if exactly one.
    pub fn answer(&self, answer: &str) -> Option<usize> {
        let a = answer.trim();
        if a.is_empty() {
            return None;
        }
        if let Ok(n) = a.parse::<usize>()
            && (1..=self.items.len()).contains(&n)
        {
            return Some(n - 1);
        }
        let exact: Vec<usize> = (0..self.items.len())
            .filter(|&i| self.items[i].id == a || self.items[i].key == a)
            .collect();
        if exact.len() == 1 {
            return exact.first().copied();
        }
        let prefixed: Vec<usize> = (0..self.items.len())
            .filter(|&i| self.items[i].id.starts_with(a) || self.items[i].key.starts_with(a))
            .collect();
        match prefixed.as_slice() {
            [one] => Some(*one),
            _ => None,
        }
    }
}

/// Lets the user choose among `items`; the index chosen, or None when
/// cancelled. `left_out` says which sessions are not offered, and why.
pub fn choose(items: Vec<Item>, left_out: String) -> anyhow::Result<Option<usize>> {
    let mut chooser = Chooser::new(items, left_out);
    let dumb = std::env::var_os("TERM").is_none_or(|t| t.is_empty() || t == "dumb");
    if dumb {
        return line_mode(&chooser);
    }
    let raw = match Raw::enter() {
        Ok(raw) => raw,
        // Not a terminal after all, or one without termios: ask by line.
        Err(_) => return line_mode(&chooser),
    };
    let bold = output::color_stderr();
    let mut at = 0;
    let mut size = output::stderr_size().unwrap_or((80, 24));
    let result = loop {
        let (lines, cursor) = chooser.frame(size.0, size.1, bold);
        at = output::redraw(at, &lines, cursor)?;
        let key = loop {
            match read_key(&raw)? {
                Some(key) => break Some(key),
                None => {
                    // No key for a while: redraw if the terminal was resized.
                    let now = output::stderr_size().unwrap_or(size);
                    if now != size {
                        size = now;
                        break None;
                    }
                }
            }
        };
        let Some(key) = key else { continue };
        let page = size.1.saturating_sub(3).clamp(1, MAX_ROWS);
        match chooser.key(key, page) {
            Outcome::Continue => {}
            Outcome::Open(i) => break Some(i),
            Outcome::Cancel => break None,
        }
    };
    output::clear_frame(at)?;
    drop(raw);
    Ok(result)
}

/// The chooser on a terminal that cannot move its cursor: the items
/// numbered, and a question asked again until its answer names one (a
/// number, an id or the start of one) or is empty or the end of input.
fn line_mode(chooser: &Chooser) -> anyhow::Result<Option<usize>> {
    for (n, item) in chooser.items.iter().enumerate() {
        let line = format!(
            "{:>3}  {}  {}  {}  {}",
            n + 1,
            item.id,
            item.status,
            item.host,
            item.command
        );
        output::eline(&Styled::default().command(&line));
    }
    if !chooser.left_out.is_empty() {
        output::eline(&Styled::new(format_args!("     ({})", chooser.left_out)));
    }
    loop {
        output::prompt(&Styled::new(format_args!(
            "Open which session? [1-{}, an id or the start of one; Enter: none] ",
            chooser.items.len()
        )))?;
        let mut answer = String::new();
        let read = std::io::stdin()
            .lock()
            .read_line(&mut answer)
            .map_err(|e| anyhow::anyhow!("cannot read the answer: {e}"))?;
        if read == 0 || answer.trim().is_empty() {
            if read == 0 {
                output::eline(&Styled::default());
            }
            return Ok(None);
        }
        match chooser.answer(&answer) {
            Some(i) => return Ok(Some(i)),
            None => output::eline(&Styled::new(format_args!(
                "'{}' names no one session of these; give its number, its id or more of it",
                answer.trim()
            ))),
        }
    }
}

/// The terminal in raw mode (no echo, no line editing, no signals from
/// keys) while this lives; its settings as they were once dropped.
struct Raw {
    saved: termios::Termios,
}

impl Raw {
    fn enter() -> std::io::Result<Raw> {
        let stdin = std::io::stdin();
        if !stdin.is_terminal() {
            return Err(std::io::ErrorKind::Unsupported.into());
        }
        let saved = termios::tcgetattr(&stdin)?;
        let mut raw = saved.clone();
        raw.local_modes -=
            LocalModes::ICANON | LocalModes::ECHO | LocalModes::ISIG | LocalModes::IEXTEN;
        raw.input_modes -= InputModes::ICRNL | InputModes::IXON;
        raw.special_codes[SpecialCodeIndex::VMIN] = 1;
        raw.special_codes[SpecialCodeIndex::VTIME] = 0;
        termios::tcsetattr(&stdin, OptionalActions::Now, &raw)?;
        Ok(Raw { saved })
    }

    /// One byte, waiting at most `ms` milliseconds (None: none came).
    fn byte(&self, ms: i64) -> std::io::Result<Option<u8>> {
        use rustix::event::{PollFd, PollFlags, Timespec, poll};
        let stdin = std::io::stdin();
        let timeout = Timespec {
            tv_sec: ms / 1000,
            tv_nsec: (ms % 1000) * 1_000_000,
        };
        let mut fds = [PollFd::new(&stdin, PollFlags::IN)];
        match poll(&mut fds, Some(&timeout)) {
            Ok(0) => return Ok(None),
            Ok(_) => {}
            Err(rustix::io::Errno::INTR) => return Ok(None),
            Err(e) => return Err(e.into()),
        }
        let mut buf = [0u8; 1];
        loop {
            match rustix::io::read(&stdin, &mut buf) {
                Ok(0) => return Err(std::io::ErrorKind::UnexpectedEof.into()),
                Ok(_) => return Ok(Some(buf[0])),
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) => return Err(e.into()),
            }
        }
    }
}

impl Drop for Raw {
    fn drop(&mut self) {
        let _ = termios::tcsetattr(std::io::stdin(), OptionalActions::Now, &self.saved);
    }
}

/// The next key; None when none came within a quarter of a second. The end
/// of input cancels.
fn read_key(raw: &Raw) -> std::io::Result<Option<Key>> {
    let b = match raw.byte(250) {
        Ok(Some(b)) => b,
        Ok(None) => return Ok(None),
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(Some(Key::Cancel)),
        Err(e) => return Err(e),
    };
    let key = match b {
        b'\r' | b'\n' => Key::Enter,
        0x7f | 0x08 => Key::Backspace,
        0x15 => Key::Clear,
        0x17 => Key::DeleteWord,
        0x03 | 0x07 | 0x11 => Key::Cancel,
        0x04 => Key::CtrlD,
        0x10 | 0x0b => Key::Up,
        0x0e => Key::Down,
        0x1b => escape(raw)?,
        b if b < 0x20 => Key::Other,
        b if b < 0x80 => Key::Char(char::from(b)),
        b => utf8(raw, b)?,
    };
    Ok(Some(key))
}

/// What follows an ESC: nothing within 50 ms is the Esc key itself; `[` or
/// `O` starts a sequence (arrows, pages, home, end); anything else (Alt and
/// a key) is ignored.
fn escape(raw: &Raw) -> std::io::Result<Key> {
    let Some(intro) = raw.byte(50)? else {
        return Ok(Key::Cancel);
    };
    if intro != b'[' && intro != b'O' {
        return Ok(Key::Other);
    }
    let mut params = Vec::new();
    let fin = loop {
        let Some(b) = raw.byte(50)? else {
            return Ok(Key::Other);
        };
        if (0x40..=0x7e).contains(&b) {
            break b;
        }
        if params.len() > 16 {
            return Ok(Key::Other);
        }
        params.push(b);
    };
    Ok(match (fin, params.as_slice()) {
        (b'A', _) => Key::Up,
        (b'B', _) => Key::Down,
        (b'H', _) | (b'~', b"1" | b"7") => Key::Home,
        (b'F', _) | (b'~', b"4" | b"8") => Key::End,
        (b'~', b"5") => Key::PageUp,
        (b'~', b"6") => Key::PageDown,
        _ => Key::Other,
    })
}

/// The rest of a UTF-8 character that starts with `first`.
fn utf8(raw: &Raw, first: u8) -> std::io::Result<Key> {
    let len = match first {
        0xc2..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf4 => 4,
        _ => return Ok(Key::Other),
    };
    let mut bytes = vec![first];
    for _ in 1..len {
        match raw.byte(50)? {
            Some(b) => bytes.push(b),
            None => return Ok(Key::Other),
        }
    }
    Ok(std::str::from_utf8(&bytes)
        .ok()
        .and_then(|s| s.chars().next())
        .map_or(Key::Other, Key::Char))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(id: &str, host: &str, title: &str, command: &str) -> Item {
        Item::new(id, id, "idle", host, title, command)
    }

    fn chooser() -> Chooser {
        Chooser::new(
            vec![
                item(
                    "work-2",
                    "laptop",
                    "Refactor the parser",
                    "tmux attach -t work",
                ),
                item(
                    "gw-7f2",
                    "desktop",
                    "Review PR #412",
                    "ssh -t -- alice@desktop",
                ),
                item("gw", "desk", "", "ssh -t -- desk"),
                item("web", "laptop", "Docs", "xdg-open https://example.org/"),
            ],
            "2 left out: 1 without an endpoint, 1 with no handler for ftp".into(),
        )
    }

    fn typed(c: &mut Chooser, text: &str) {
        for ch in text.chars() {
            assert_eq!(c.key(Key::Char(ch), 5), Outcome::Continue);
        }
    }

    #[test]
    fn typing_filters_and_an_exact_id_comes_first() {
        let mut c = chooser();
        assert_eq!(c.matches, [0, 1, 2, 3]);
        typed(&mut c, "gw");
        // `gw` is an id: first, before `gw-7f2`, which it starts.
        assert_eq!(c.matches, [2, 1]);
        assert_eq!(c.key(Key::Enter, 5), Outcome::Open(2));
        c.key(Key::Clear, 5);
        typed(&mut c, "PARSER");
        assert_eq!(c.matches, [0]);
        c.key(Key::Clear, 5);
        // Every word, anywhere in the row, the command too.
        typed(&mut c, "alice review");
        assert_eq!(c.matches, [1]);
        c.key(Key::DeleteWord, 5);
        assert_eq!(c.query, "alice ");
        c.key(Key::Clear, 5);
        typed(&mut c, "xdg");
        assert_eq!(c.key(Key::Enter, 5), Outcome::Open(3));
    }

    #[test]
    fn enter_on_nothing_asks_again_and_esc_cancels() {
        let mut c = chooser();
        typed(&mut c, "zzz");
        assert!(c.matches.is_empty());
        assert_eq!(c.key(Key::Enter, 5), Outcome::Continue);
        let (lines, _) = c.frame(80, 24, false);
        assert!(
            lines
                .iter()
                .any(|l| l.as_str().contains("no session matches"))
        );
        c.key(Key::Backspace, 5);
        c.key(Key::Backspace, 5);
        c.key(Key::Backspace, 5);
        assert_eq!(c.matches.len(), 4);
        assert_eq!(c.key(Key::CtrlD, 5), Outcome::Cancel);
        assert_eq!(c.key(Key::Cancel, 5), Outcome::Cancel);
        typed(&mut c, "w");
        assert_eq!(c.key(Key::CtrlD, 5), Outcome::Continue);
    }

    #[test]
    fn arrows_move_within_the_matches() {
        let mut c = chooser();
        c.key(Key::Up, 5);
        assert_eq!(c.selected, 0);
        c.key(Key::Down, 5);
        c.key(Key::Down, 5);
        assert_eq!(c.key(Key::Enter, 5), Outcome::Open(2));
        c.key(Key::PageDown, 5);
        assert_eq!(c.selected, 3);
        c.key(Key::Home, 5);
        assert_eq!(c.selected, 0);
        c.key(Key::End, 5);
        assert_eq!(c.key(Key::Enter, 5), Outcome::Open(3));
    }

    #[test]
    fn the_frame_fits_the_width_shows_each_command_and_scrolls() {
        let mut c = chooser();
        let (lines, cursor) = c.frame(60, 24, false);
        assert_eq!(cursor, (0, "Open which session? ".len()));
        assert_eq!(lines.len(), 6, "{lines:?}");
        for l in &lines {
            assert!(l.as_str().width() < 60, "{l:?}");
        }
        assert!(
            lines[1]
                .as_str()
                .starts_with("> work-2  idle  laptop   tmux attach -t work"),
            "{lines:?}"
        );
        assert!(lines[5].as_str().contains("4/4 · 2 left out"), "{lines:?}");
        // Two rows fit: the selection scrolls them.
        let (lines, _) = c.frame(60, 5, false);
        assert_eq!(lines.len(), 4);
        c.key(Key::End, 1);
        let (lines, _) = c.frame(60, 5, false);
        assert!(lines[2].as_str().starts_with("> web"), "{lines:?}");
    }

    #[test]
    fn foreign_fields_are_made_safe_and_the_line_answer_takes_ids_and_numbers() {
        let c = Chooser::new(
            vec![
                Item::new(
                    "evil\u{202e}",
                    "evil\u{202e}",
                    "idle\x1b[31m",
                    "h",
                    "t",
                    "ssh -t -- h",
                ),
                item("alpha-1", "a", "", "ssh -t -- a"),
                item("alpha-2", "a", "", "ssh -t -- a"),
            ],
            String::new(),
        );
        assert_eq!(c.items[0].id, r"evil\u{202e}");
        assert_eq!(c.items[0].status, r"idle\e[31m");
        assert_eq!(c.answer("2"), Some(1));
        assert_eq!(c.answer("alpha-2\n"), Some(2));
        assert_eq!(c.answer("alpha"), None);
        assert_eq!(c.answer("9"), None);
        assert_eq!(c.answer(""), None);
        assert_eq!(c.answer("ev"), Some(0));
    }
}
