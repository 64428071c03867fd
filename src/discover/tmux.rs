//! The endpoint of an agent that runs in a tmux pane:
//! `tmux://HOST/SESSION:WINDOW.PANE`, the shape `presence publish` and
//! `run` write and `presence open` attaches to.
//!
//! The process's own `TMUX` (`SOCKET,PID,SESSION`) names the server and
//! `TMUX_PANE` (`%N`) its pane; the server is asked for the pane's place
//! (`tmux -S SOCKET display-message -p -t PANE FORMAT`, an argv, never a
//! shell line, within two seconds). A session name that `presence open`
//! would refuse (whitespace, `.`, `:`, quotes, anything but letters, digits
//! and `_-+@,`) gives no endpoint rather than one no device could open.

use std::collections::HashMap;
use std::process::Command;
use std::time::Duration;

use super::Proc;

/// How long the tmux server may take to answer.
const TIMEOUT: Duration = Duration::from_secs(2);

/// The endpoint of `p` on `host`, if it runs in a tmux pane whose place
/// makes an endpoint `presence open` accepts. `asked` remembers the answers
/// of one pass: two agents in one pane ask once.
pub(super) fn endpoint(
    p: &Proc,
    host: &str,
    asked: &mut HashMap<(String, String), Option<String>>,
) -> Option<String> {
    let socket = p.tmux.as_deref()?.split(',').next()?.to_string();
    let pane = p.tmux_pane.clone()?;
    let plain_pane = pane
        .strip_prefix('%')
        .is_some_and(|n| !n.is_empty() && n.len() <= 9 && n.bytes().all(|b| b.is_ascii_digit()));
    if !socket.starts_with('/') || socket.contains('\0') || !plain_pane {
        return None;
    }
    asked
        .entry((socket, pane))
        .or_insert_with_key(|(socket, pane)| {
            let place = place(socket, pane)?;
            of(host, &place)
        })
        .clone()
}

/// `tmux://HOST/PLACE`, if `presence open` accepts it as a tmux endpoint.
pub(super) fn of(host: &str, place: &str) -> Option<String> {
    let endpoint = format!("tmux://{host}/{place}");
    crate::open::Endpoint::parse(&endpoint)
        .ok()?
        .tmux_session()
        .ok()?;
    Some(endpoint)
}

/// `SESSION:WINDOW.PANE` of `pane` on the server at `socket`.
fn place(socket: &str, pane: &str) -> Option<String> {
    let out = crate::child::output_within(
        Command::new("tmux")
            .arg("-S")
            .arg(socket)
            .args(["display-message", "-p", "-t", pane])
            .arg("#{session_name}:#{window_index}.#{pane_index}"),
        TIMEOUT,
        4096,
    )?;
    let place = out.stdout.strip_suffix('\n').unwrap_or(&out.stdout);
    (out.status.success() && !place.is_empty()).then(|| place.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_place_open_accepts_makes_an_endpoint() {
        assert_eq!(of("h", "work:0.1").as_deref(), Some("tmux://h/work:0.1"));
        assert_eq!(
            of("h", "a-b_c@d:12.3").as_deref(),
            Some("tmux://h/a-b_c@d:12.3")
        );
        for odd in [
            "my work:0.0",
            "-x:0.0",
            "a'b:0.0",
            "a;rm -rf:0.0",
            "a$(x):0.0",
            "é:0.0",
            "a\nb:0.0",
            "a/b:0.0",
            "a%20b:0.0",
            "work:x.0",
            ":0.0",
        ] {
            assert_eq!(of("h", odd), None, "{odd:?}");
        }
        assert_eq!(of("bad host", "w:0.0"), None);
    }

    #[test]
    fn no_tmux_variables_or_odd_ones_ask_no_server() {
        let mut asked = HashMap::new();
        let mut p = Proc::default();
        assert_eq!(endpoint(&p, "h", &mut asked), None);
        for (tmux, pane) in [
            ("relative/sock,1,0", "%1"),
            ("/tmp/s,1,0", "1"),
            ("/tmp/s,1,0", "%1;x"),
            ("/tmp/s,1,0", "%"),
            ("/tmp/s,1,0", "-t"),
        ] {
            p.tmux = Some(tmux.into());
            p.tmux_pane = Some(pane.into());
            assert_eq!(endpoint(&p, "h", &mut asked), None, "{tmux} {pane}");
        }
        assert!(asked.is_empty());
    }
}
