//! Cooperative cancellation: SIGINT / SIGTERM set a flag that long loops poll with [`check`], so a job stops
//! between steps, its temporary outputs are dropped (and so removed), and it exits with a clear message.

use std::sync::atomic::{AtomicUsize, Ordering};

use crate::error::{Error, Result};

/// 0: running; otherwise the signal number that asked us to stop.
static STOP: AtomicUsize = AtomicUsize::new(0);

/// Install the SIGINT and SIGTERM handlers (once, from the binary).
pub fn install_signal_handlers() -> std::io::Result<()> {
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
        unsafe {
            signal_hook::low_level::register(sig, move || STOP.store(sig as usize, Ordering::SeqCst))?;
        }
    }
    Ok(())
}

/// Ask running work to stop, as a signal would (used by tests and by the GPU engine on fatal errors).
pub fn request_stop(signal: i32) {
    STOP.store(signal as usize, Ordering::SeqCst);
}

/// `Err(Interrupted)` once a stop was requested.
pub fn check() -> Result<()> {
    match STOP.load(Ordering::Relaxed) {
        0 => Ok(()),
        s if s == signal_hook::consts::SIGINT as usize => Err(Error::Interrupted("SIGINT")),
        _ => Err(Error::Interrupted("SIGTERM")),
    }
}
