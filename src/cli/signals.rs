//! Signals for the long-running commands (`refresh --every`, `run`),
//! delivered on a channel so that the main loop can wait for "the next tick
//! or a signal, whichever comes first".

use std::sync::mpsc::{self, Receiver};

use anyhow::Context as _;
use signal_hook::iterator::exfiltrator::WithOrigin;
use signal_hook::iterator::{Handle, SignalsInfo};
use signal_hook::low_level::siginfo::Origin;

/// A subscription to some signals; unsubscribes when dropped.
pub struct Subscription {
    pub rx: Receiver<Origin>,
    handle: Handle,
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.handle.close();
    }
}

/// Subscribes to `signals`; from now on they no longer end the process.
pub fn subscribe(signals: &[i32]) -> anyhow::Result<Subscription> {
    let mut info =
        SignalsInfo::<WithOrigin>::new(signals).context("cannot install signal handlers")?;
    let handle = info.handle();
    let (tx, rx) = mpsc::channel();
    std::thread::Builder::new()
        .name("presence-signals".into())
        .spawn(move || {
            for origin in info.forever() {
                if tx.send(origin).is_err() {
                    break;
                }
            }
        })
        .context("cannot start the signal thread")?;
    Ok(Subscription { rx, handle })
}
