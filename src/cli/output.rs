//! Human output: relative times, color policy and the table that fits the
//! terminal. JSON output is serde's, written by the subcommands.

use std::io::{self, IsTerminal, Write};

use presence::Row;
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

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

/// Writes `value` as pretty JSON and a newline. Serialised first, so that a
/// closed pipe surfaces as the plain `io::Error` it is.
pub fn write_json(out: &mut impl Write, value: &impl serde::Serialize) -> anyhow::Result<()> {
    let mut bytes = serde_json::to_vec_pretty(value)?;
    bytes.push(b'\n');
    out.write_all(&bytes)?;
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

fn cells(row: &Row) -> [String; 8] {
    let r = &row.record;
    let session = format!("{}{}", if row.local { "*" } else { " " }, r.session_id);
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
        r.status.clone(),
        client.clone(),
        r.host.clone(),
        r.profile.clone(),
        ago(row.age_s),
        expires,
        one_line(&r.title),
    ]
}

fn one_line(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
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

/// Column widths for `rows` within `max` columns of terminal (None: no limit).
fn widths(rows: &[[String; 8]], max: Option<usize>) -> [usize; 8] {
    let mut w = HEADERS.map(|h| h.width());
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            w[i] = w[i].max(c.width());
        }
    }
    if let Some(max) = max {
        let gaps = 2 * (w.len() - 1);
        for (col, min) in SQUEEZE {
            let total: usize = w.iter().sum::<usize>() + gaps;
            if total <= max {
                break;
            }
            w[col] = w[col].saturating_sub(total - max).max(min.min(w[col]));
        }
    }
    w
}

/// Writes the table. `width`: the terminal's width, or None when not a terminal.
pub fn table(
    out: &mut impl Write,
    rows: &[Row],
    width: Option<usize>,
    color: bool,
) -> io::Result<()> {
    let texts: Vec<[String; 8]> = rows.iter().map(cells).collect();
    let w = widths(&texts, width);
    let line = |cols: &[String; 8]| -> String {
        let mut s = String::new();
        for (i, c) in cols.iter().enumerate() {
            let c = fit(c, w[i]);
            if i + 1 == cols.len() {
                s.push_str(&c);
            } else {
                s.push_str(&c);
                s.push_str(&" ".repeat(w[i] - c.width() + 2));
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
    terminal_size::terminal_size().map(|(w, _)| usize::from(w.0))
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

    #[test]
    fn widths_squeeze_title_first() {
        let row = [
            "*session-1".to_string(),
            "idle".into(),
            "terminal".into(),
            "laptop".into(),
            "default".into(),
            "1s ago".into(),
            "in 89s".into(),
            "x".repeat(200),
        ];
        let w = widths(std::slice::from_ref(&row), Some(80));
        assert_eq!(w.iter().sum::<usize>() + 14, 80);
        assert_eq!(w[0], 10);
        let unlimited = widths(&[row], None);
        assert_eq!(unlimited[7], 200);
    }
}
