//! The crontab lines setup installs where no systemd user manager runs: a
//! refresh at least every `refresh_interval` (cron starts jobs once a
//! minute at most, so a shorter interval is several refreshes a minute with
//! `sleep` between them) and a daily `expire`.
//!
//! Setup's lines sit between two comment lines in the user's crontab; the
//! first carries a digest of the lines between, so that setup updates or
//! removes its own lines and leaves them alone, unless `--force`, once
//! somebody edited them. Nothing else in the crontab is touched.

use std::ops::Range;
use std::path::Path;
use std::time::Duration;

use super::plan::{Action, Change, Crontab, Note, read_crontab};
use super::timers::{cron_command, digest};

/// The comment line above setup's lines: `OPEN`, the digest of the lines
/// up to [`END`], `CLOSE`.
const OPEN: &str = "# Added by `presence setup` (digest ";
const CLOSE: &str = " of the lines below, up to the end mark): they keep this device's presence \
                     records refreshed and the directory clean; `presence setup --uninstall` \
                     removes them.";
/// The comment line below setup's lines.
const END: &str = "# End of the lines `presence setup` added.";

/// The divisors of 60 below 60: the spacings that repeat evenly in a
/// minute, and the minute steps that repeat evenly in an hour.
const EVEN: [u64; 11] = [1, 2, 3, 4, 5, 6, 10, 12, 15, 20, 30];

/// The crontab line that runs `refresh` (a shell command) at least every
/// `interval`, and how often it does (seconds).
pub(super) fn refresh_line(refresh: &str, interval: Duration) -> (String, u64) {
    let secs = interval.as_secs().max(1);
    if secs >= 60 {
        let step = EVEN
            .iter()
            .copied()
            .filter(|m| m * 60 <= secs)
            .max()
            .unwrap_or(1);
        let minute = if step == 1 {
            "*".to_string()
        } else {
            format!("*/{step}")
        };
        return (format!("{minute} * * * * {refresh}"), step * 60);
    }
    let every = EVEN
        .iter()
        .copied()
        .filter(|s| *s <= secs)
        .max()
        .unwrap_or(1);
    let runs = 60 / every;
    let line = if runs == 2 {
        format!("* * * * * {refresh}; sleep {every}; {refresh}")
    } else {
        let rest: Vec<String> = (2..=runs).map(|i| i.to_string()).collect();
        format!(
            "* * * * * {refresh}; for i in {}; do sleep {every}; {refresh}; done",
            rest.join(" ")
        )
    };
    (line, every)
}

/// Setup's lines for `binary`, refreshing at least every `interval`
/// (without the marks), and how often they refresh (seconds).
pub(super) fn lines(binary: &Path, interval: Duration) -> anyhow::Result<(Vec<String>, u64)> {
    let bin = cron_command(binary)?;
    let (refresh, every) = refresh_line(&format!("{bin} --quiet refresh --all-profiles"), interval);
    Ok((
        vec![refresh, format!("17 4 * * * {bin} --quiet expire")],
        every,
    ))
}

/// `lines` between setup's marks.
fn block(lines: &[String]) -> String {
    let body: String = lines.iter().map(|l| format!("{l}\n")).collect();
    format!("{OPEN}{}{CLOSE}\n{body}{END}\n", digest(&body))
}

/// Setup's lines in `text`: where they are (from the first mark to the end
/// mark, or the first mark alone when the end mark is gone) and whether
/// they are as setup wrote them.
fn find(text: &str) -> Option<(Range<usize>, bool)> {
    let mut at = 0;
    let mut open: Option<(usize, usize, String)> = None;
    for line in text.split_inclusive('\n') {
        let bare = line.strip_suffix('\n').unwrap_or(line);
        match &open {
            None => {
                if let Some(d) = bare.strip_prefix(OPEN).and_then(|l| l.strip_suffix(CLOSE)) {
                    open = Some((at, at + line.len(), d.to_string()));
                }
            }
            Some((start, body, d)) if bare == END => {
                let unedited = *d == digest(&text[*body..at]);
                return Some((*start..at + line.len(), unedited));
            }
            Some(_) => {}
        }
        at += line.len();
    }
    open.map(|(start, body, _)| (start..body, false))
}

/// Whether `line` runs `presence refresh` (what doctor's `refresher` check
/// looks for in a crontab).
fn runs_refresh(line: &str) -> bool {
    let l = line.trim();
    !l.starts_with('#') && l.contains("presence") && l.contains(" refresh")
}

/// How often, in words: `30s`, `2m`.
fn every_words(secs: u64) -> String {
    humantime::format_duration(Duration::from_secs(secs)).to_string()
}

/// What setup's cron step needs to know.
pub(super) struct Want<'a> {
    pub(super) binary: &'a Path,
    /// The shortest `refresh_interval` of the profiles.
    pub(super) interval: Duration,
    pub(super) force: bool,
}

/// Plans setup's lines into the crontab: nothing when they are there as
/// setup writes them now, an update of setup's older ones, and only with
/// `force` a replacement of lines edited since. Returns `Some(why)` when,
/// after the plan, nothing will refresh the records through cron.
pub(super) fn cron_plan(
    want: &Want,
    plan: &mut Vec<Change>,
    notes: &mut Vec<Note>,
) -> anyhow::Result<Option<String>> {
    let text = match read_crontab() {
        Crontab::Text(text) => text,
        Crontab::NotInstalled => {
            return Ok(Some(
                "`crontab` is not installed here, and no systemd user manager answers: install \
                 cron (e.g. `sudo apt install cron`) and run `presence setup` again, or run \
                 `presence --quiet refresh --all-profiles --every` under your session manager \
                 (or from your desktop's autostart)"
                    .into(),
            ));
        }
        Crontab::Unreadable(why) => {
            return Ok(Some(format!(
                "cannot read your crontab: {why}; fix that and run `presence setup` again, or \
                 run `presence --quiet refresh --all-profiles --every` under your session \
                 manager"
            )));
        }
    };
    let (lines, every) = lines(want.binary, want.interval)?;
    let wanted = block(&lines);
    let how = format!(
        "a refresh every {}{}, and an expire daily at 04:17",
        every_words(every),
        if every == want.interval.as_secs() {
            ", as refresh_interval asks".to_string()
        } else {
            format!(
                " (refresh_interval is {})",
                humantime::format_duration(want.interval)
            )
        }
    );
    let (what, after) = match find(&text) {
        Some((range, _)) if text[range.clone()] == wanted => return Ok(None),
        Some((range, unedited)) if unedited || want.force => (
            format!(
                "{} setup's lines in your crontab ({how}):",
                if unedited {
                    "update"
                } else {
                    "replace (edited since setup wrote them)"
                }
            ),
            format!("{}{wanted}{}", &text[..range.start], &text[range.end..]),
        ),
        Some(_) => {
            notes.push(Note::Say(
                "left setup's lines in your crontab alone: they were edited since setup wrote \
                 them; to replace them with setup's (your edits are lost), pass --force, or \
                 remove them (`crontab -e`) and run setup again"
                    .into(),
            ));
            return Ok(None);
        }
        None if text.lines().any(runs_refresh) => {
            notes.push(Note::Say(
                "your crontab already runs `presence refresh` (a line setup did not add): left \
                 it as it is"
                    .into(),
            ));
            return Ok(None);
        }
        None => {
            let sep = if text.is_empty() || text.ends_with('\n') {
                ""
            } else {
                "\n"
            };
            (
                format!("add these lines to your crontab ({how}):"),
                format!("{text}{sep}{wanted}"),
            )
        }
    };
    plan.push(Change {
        what,
        action: Action::Crontab {
            before: text,
            after,
            lines,
        },
    });
    Ok(None)
}

/// What `--uninstall` takes out of the crontab: setup's lines, unless
/// edited since (then only with `force`). A line of the user's own that
/// runs `presence refresh` is named, never removed.
pub(super) fn uninstall_plan(
    force: bool,
    plan: &mut Vec<Change>,
    notes: &mut Vec<Note>,
) -> anyhow::Result<()> {
    let Crontab::Text(text) = read_crontab() else {
        return Ok(());
    };
    let found = find(&text);
    let outside = match &found {
        Some((range, _)) => format!("{}{}", &text[..range.start], &text[range.end..]),
        None => text.clone(),
    };
    if outside.lines().any(runs_refresh) {
        notes.push(Note::Say(
            "your crontab runs `presence refresh` in a line setup did not add: remove it with \
             `crontab -e`"
                .into(),
        ));
    }
    match found {
        None => {}
        Some((_, false)) if !force => notes.push(Note::Say(
            "left setup's lines in your crontab alone: they were edited since setup wrote them; \
             remove them with `crontab -e`, or pass --force to have setup remove them"
                .into(),
        )),
        Some(_) => plan.push(Change {
            what: "remove setup's lines from your crontab".into(),
            action: Action::Crontab {
                before: text,
                after: outside,
                lines: Vec::new(),
            },
        }),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_refresh_line_keeps_up_with_the_interval() {
        let line = |s: u64| refresh_line("R", Duration::from_secs(s));
        assert_eq!(line(30), ("* * * * * R; sleep 30; R".into(), 30));
        assert_eq!(line(45), ("* * * * * R; sleep 30; R".into(), 30));
        assert_eq!(line(60), ("* * * * * R".into(), 60));
        assert_eq!(line(90), ("* * * * * R".into(), 60));
        assert_eq!(line(120), ("*/2 * * * * R".into(), 120));
        assert_eq!(line(7 * 60), ("*/6 * * * * R".into(), 360));
        assert_eq!(
            line(10),
            (
                "* * * * * R; for i in 2 3 4 5 6; do sleep 10; R; done".into(),
                10
            )
        );
        assert_eq!(line(7).1, 6);
        assert_eq!(line(0).1, 1);
        // Never less often than asked, and the runs fill each minute evenly.
        for s in 1..3600 {
            let (text, every) = line(s);
            assert!(
                every <= s && (60 % every == 0 || every % 60 == 0),
                "{s}: {text}"
            );
            assert!(text.len() < 300, "{s}: {text}");
        }
    }

    #[test]
    fn setups_lines_are_found_and_told_from_edited_ones() {
        let lines = vec!["* * * * * a".to_string(), "17 4 * * * b".to_string()];
        let ours = block(&lines);
        let text = format!("MAILTO=me\n0 1 * * * backup\n{ours}# mine\n");
        let (range, unedited) = find(&text).unwrap();
        assert!(unedited);
        assert_eq!(&text[range], ours);
        let edited = text.replace("* * * * * a", "*/5 * * * * a");
        assert!(!find(&edited).unwrap().1);
        let no_end = text.replace(END, "# gone");
        let (range, unedited) = find(&no_end).unwrap();
        assert!(!unedited && no_end[range].starts_with(OPEN));
        assert!(find("0 1 * * * backup\n").is_none());
        assert!(runs_refresh("* * * * * /usr/bin/presence refresh"));
        assert!(!runs_refresh("# * * * * * presence refresh"));
    }
}
