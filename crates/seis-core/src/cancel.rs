//! Cooperative cancellation: a [`CancelToken`] is the stop request of one piece of work (a job's run, a
//! command). Long loops poll it with [`CancelToken::check`] between steps, so the work stops at a step's end,
//! its temporary outputs are dropped (and so removed), and the caller gets [`Error::Interrupted`].
//!
//! Tokens form a tree: a token made with [`CancelToken::child`] stops when its parent does, and can be
//! stopped on its own without touching its parent or its siblings. SIGINT, SIGTERM, SIGHUP and SIGQUIT stop the
//! root of the process ([`CancelToken::process`]) and with it every token made under it; a test harness or a
//! program that runs many jobs makes one child per job and cancels it alone, and the next job's fresh token
//! runs.
//!
//! The readers and writers of `io` poll the root: their long loops (a header scan, one large read) serve
//! whoever called them, and a run checks its own token between the chunks it reads and writes.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, OnceLock};

pub use crate::error::Stop;
use crate::error::{Error, Result};

/// A stop reason as the token's atomic stores it (0: running).
fn code(why: Stop) -> u8 {
    match why {
        Stop::Sigint => 1,
        Stop::Sigterm => 2,
        Stop::Requested => 3,
        Stop::Sighup => 4,
        Stop::Sigquit => 5,
    }
}

fn from_code(code: u8) -> Option<Stop> {
    match code {
        1 => Some(Stop::Sigint),
        2 => Some(Stop::Sigterm),
        3 => Some(Stop::Requested),
        4 => Some(Stop::Sighup),
        5 => Some(Stop::Sigquit),
        _ => None,
    }
}

struct Node {
    /// 0 while running; otherwise a [`Stop`] code.
    stop: AtomicU8,
    parent: Option<Arc<Node>>,
}

/// The stop request of one piece of work; clones share it.
#[derive(Clone)]
pub struct CancelToken(Arc<Node>);

impl Default for CancelToken {
    fn default() -> Self {
        CancelToken::new()
    }
}

impl std::fmt::Debug for CancelToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CancelToken({:?})", self.stopped())
    }
}

impl CancelToken {
    /// A token of its own, stopped only by [`CancelToken::cancel`] (not by signals).
    pub fn new() -> Self {
        CancelToken(Arc::new(Node { stop: AtomicU8::new(0), parent: None }))
    }

    /// The root of the process: the signals of [`install_signal_handlers`] stop it once it has run.
    pub fn process() -> &'static CancelToken {
        static ROOT: OnceLock<CancelToken> = OnceLock::new();
        ROOT.get_or_init(CancelToken::new)
    }

    /// A new token that stops with this one, or on its own.
    pub fn child(&self) -> Self {
        CancelToken(Arc::new(Node { stop: AtomicU8::new(0), parent: Some(self.0.clone()) }))
    }

    /// Ask the work under this token (and its children) to stop. The first reason given stands.
    pub fn cancel(&self, why: Stop) {
        let _ = self.0.stop.compare_exchange(0, code(why), Ordering::SeqCst, Ordering::SeqCst);
    }

    /// Why this token was stopped, if it was: its own request, else its nearest stopped ancestor's.
    pub fn stopped(&self) -> Option<Stop> {
        let mut node = Some(&self.0);
        while let Some(n) = node {
            if let Some(why) = from_code(n.stop.load(Ordering::Relaxed)) {
                return Some(why);
            }
            node = n.parent.as_ref();
        }
        None
    }

    /// `Err(Interrupted)` once a stop was requested.
    pub fn check(&self) -> Result<()> {
        match self.stopped() {
            None => Ok(()),
            Some(why) => Err(Error::Interrupted(why)),
        }
    }
}

/// Install the handlers of SIGINT, SIGTERM, SIGHUP and SIGQUIT (once, from the binary): they stop
/// [`CancelToken::process`]. A closed terminal (SIGHUP) or Ctrl-\\ (SIGQUIT) would otherwise end the process
/// on the spot, leaving its temporary files and its output folder's lock.
pub fn install_signal_handlers() -> std::io::Result<()> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGQUIT, SIGTERM};
    // The handler only stores to an atomic, which is async-signal-safe; the root exists before it can run.
    let root = CancelToken::process().0.clone();
    let stops = [(SIGINT, Stop::Sigint), (SIGTERM, Stop::Sigterm), (SIGHUP, Stop::Sighup), (SIGQUIT, Stop::Sigquit)];
    for (sig, why) in stops {
        let root = root.clone();
        // SAFETY: the handler does nothing but an atomic compare-and-swap.
        unsafe {
            signal_hook::low_level::register(sig, move || {
                let _ = root.stop.compare_exchange(0, code(why), Ordering::SeqCst, Ordering::SeqCst);
            })?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_stops_with_its_parent_and_alone_without_it() {
        let parent = CancelToken::new();
        let (a, b) = (parent.child(), parent.child());
        a.cancel(Stop::Requested);
        assert!(matches!(a.check(), Err(Error::Interrupted(Stop::Requested))));
        assert!(b.check().is_ok() && parent.check().is_ok());
        parent.cancel(Stop::Sigterm);
        assert_eq!(b.stopped(), Some(Stop::Sigterm));
        // A token's own reason stands over its parent's, and the first reason given stands.
        a.cancel(Stop::Sigint);
        assert_eq!(a.stopped(), Some(Stop::Requested));
        // A fresh token under a live root runs.
        assert!(CancelToken::new().child().check().is_ok());
    }
}
