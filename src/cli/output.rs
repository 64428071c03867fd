//! Human output: relative times, color policy and the table that fits the
//! terminal. JSON output is serde's, written by the subcommands.

use std::io::{self, IsTerminal, Write};

use presence::Row;
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

use super::safe;

/// Whether to color stdout: only on a terminal, never with `NO_COLOR`.
pub fn color_stdout() -> bool {
    io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
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

/// "12s ago" for a past age, "in 12s" for a time to come.
pub fn ago(secs: f64) -> String {
    if secs < 0.0 {
        format!("in {}", short_duration(secs))
    } else {
        format!("{} ago", short_duration(secs))
    }
}

const HEADERS: [&str; 8] = [
    "SESSION", "STATUS", "CLIENT", "HOST", "PROFILE", "SEEN", "EXPIRES", "TITLE",
];
/// Narrowest each column may be squeezed to, in the order they give way.
const SQUEEZE: [(usize, usize); 5] = [(7, 12), (0, 14), (2, 8), (3, 8), (4, 8)];
/// Columns hidden, in this order, when squeezing is not enough.
const HIDE: [usize; 5] = [4, 2, 6, 3, 5];

fn cells(row: &Row) -> [String; 8] {
    let r = &row.record;
    let session = format!(
        "{}{}",
        if row.local { "*" } else { " " },
        safe(&r.session_id)
    );
    let client = if r.client.is_empty() {
        &r.source
    } else {
        &r.client
    };
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
        safe(client).into_owned(),
        safe(&r.host).into_owned(),
        safe(&r.profile).into_owned(),
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
/// (None: no limit). Long cells give way first (TITLE, then SESSION, then the
/// names, down to a minimum); if that is not enough, whole columns are hidden.
fn layout(rows: &[[String; 8]], max: Option<usize>) -> Vec<(usize, usize)> {
    let mut w = HEADERS.map(|h| h.width());
    for r in rows {
        for (i, c) in r.iter().enumerate() {
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
    for (col, min) in SQUEEZE {
        let excess = total(&cols).saturating_sub(max);
        if excess == 0 {
            return cols;
        }
        if let Some(c) = cols.iter_mut().find(|c| c.0 == col) {
            c.1 = c.1.saturating_sub(excess).max(min.min(c.1));
        }
    }
    for hide in HIDE {
        if total(&cols) <= max {
            break;
        }
        cols.retain(|c| c.0 != hide);
    }
    cols
}

/// Writes the table. `width`: the terminal's width, or None when not a terminal.
pub fn table(
    out: &mut impl Write,
    rows: &[Row],
    width: Option<usize>,
    color: bool,
) -> io::Result<()> {
    let texts: Vec<[String; 8]> = rows.iter().map(cells).collect();
    let cols = layout(&texts, width);
    let line = |cells: &[String; 8]| -> String {
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
    let header = line(&HEADERS.map(String::from));
    if color {
        writeln!(out, "\x1b[1m{header}\x1b[0m")?;
    } else {
        writeln!(out, "{header}")?;
    }
    for (row, text) in rows.iter().zip(&texts) {
        let l = line(text);
        let style = if !color {
            ""
        } else if !row.live {
            "\x1b[2m"
        } else {
            match row.record.status.as_str() {
                "working" | "busy" | "running" => "\x1b[32m",
                "waiting" | "blocked" => "\x1b[33m",
                "error" | "failed" => "\x1b[31m",
                _ => "",
            }
        };
        if style.is_empty() {
            writeln!(out, "{l}")?;
        } else {
            writeln!(out, "{style}{l}\x1b[0m")?;
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

    fn row() -> [String; 8] {
        [
            "*session-1".to_string(),
            "idle".into(),
            "terminal".into(),
            "laptop".into(),
            "default".into(),
            "1s ago".into(),
            "in 89s".into(),
            "x".repeat(200),
        ]
    }

    fn width_of(cols: &[(usize, usize)]) -> usize {
        cols.iter().map(|c| c.1).sum::<usize>() + 2 * (cols.len() - 1)
    }

    #[test]
    fn layout_squeezes_title_first() {
        let cols = layout(&[row()], Some(80));
        assert_eq!(width_of(&cols), 80);
        assert_eq!(cols.len(), 8);
        assert_eq!(cols[0], (0, 10));
        assert_eq!(layout(&[row()], None)[7], (7, 200));
    }

    #[test]
    fn layout_hides_columns_on_narrow_terminals() {
        let cols = layout(&[row()], Some(50));
        assert!(width_of(&cols) <= 50, "{cols:?}");
        let shown: Vec<usize> = cols.iter().map(|c| c.0).collect();
        assert!(
            !shown.contains(&4) && shown.contains(&0) && shown.contains(&7),
            "{shown:?}"
        );
        // At the extreme, SESSION, STATUS and TITLE remain.
        let tiny = layout(&[row()], Some(20));
        assert_eq!(tiny.iter().map(|c| c.0).collect::<Vec<_>>(), [0, 1, 7]);
    }
}
