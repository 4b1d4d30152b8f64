//! Running the engine without the GIL: the work goes to a thread of its own while the calling thread
//! waits for it, hands its progress to a Python callback, and turns Ctrl-C (KeyboardInterrupt) or an
//! exception raised by the callback into a stop of the run's cancel token.

use std::panic::AssertUnwindSafe;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

use pyo3::prelude::*;
use seisimage::cancel::CancelToken;
use seisimage::error::{Error, Result, Stop};
use seisimage::progress::Progress;

/// How often the waiting thread looks for signals and progress: often enough that Ctrl-C feels immediate.
const POLL: Duration = Duration::from_millis(50);

/// Where the run stands, as the engine reports it; read by the waiting thread.
#[derive(Default)]
struct Position {
    stage: String,
    done: u64,
    total: u64,
    /// Reported since the callback was last told.
    changed: bool,
}

/// The engine's [`Progress`], kept for the waiting thread to pass on.
#[derive(Default)]
struct Shared {
    position: Mutex<Position>,
}

impl Shared {
    fn position(&self) -> MutexGuard<'_, Position> {
        self.position.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Progress for Shared {
    fn begin(&self, stage: &str, total: u64) {
        *self.position() = Position { stage: stage.to_string(), done: 0, total, changed: true };
    }

    fn advance(&self, n: u64) {
        let mut p = self.position();
        p.done += n;
        p.changed = true;
    }

    fn finish(&self) {
        let mut p = self.position();
        p.done = p.total;
        p.changed = true;
    }
}

/// The end of the work, with a wake-up for the waiting thread.
struct Finished<T> {
    result: Mutex<Option<T>>,
    ready: Condvar,
}

/// What ended a run early on the Python side: the exception to raise instead of the run's own error.
pub type Raised = Option<PyErr>;

/// Run `work` on a thread of its own with the GIL released, under a cancel token that Ctrl-C, or an
/// exception from `progress` (called as `progress(stage, done, total)`), stops. Returns the work's result
/// and the exception that stopped it, if one did (the caller raises that one).
pub fn run_detached<T, F>(py: Python<'_>, progress: Option<&Bound<'_, PyAny>>, work: F) -> (Result<T>, Raised)
where
    T: Send,
    F: FnOnce(&dyn Progress, &CancelToken) -> Result<T> + Send,
{
    let cancel = CancelToken::new();
    let shared = Shared::default();
    let finished = Finished { result: Mutex::new(None), ready: Condvar::new() };
    let mut raised: Raised = None;
    std::thread::scope(|scope| {
        scope.spawn(|| {
            // A panic is a fault in seisimage, reported like any other error: the waiting thread must wake.
            let result = std::panic::catch_unwind(AssertUnwindSafe(|| work(&shared, &cancel)))
                .unwrap_or_else(|_| Err(Error::Internal("the thread running the work panicked".into())));
            *finished.result.lock().unwrap_or_else(|p| p.into_inner()) = Some(result);
            finished.ready.notify_all();
        });
        loop {
            let done = py.detach(|| {
                let guard = finished.result.lock().unwrap_or_else(|p| p.into_inner());
                let (guard, _) =
                    finished.ready.wait_timeout_while(guard, POLL, |r| r.is_none()).unwrap_or_else(|p| p.into_inner());
                guard.is_some()
            });
            if raised.is_none() {
                if let Some(callback) = progress {
                    raised = tell(callback, &shared).err();
                }
            }
            if raised.is_none() {
                raised = py.check_signals().err();
                if raised.is_some() {
                    cancel.cancel(Stop::Sigint);
                }
            } else {
                cancel.cancel(Stop::Requested);
            }
            if done {
                break;
            }
        }
    });
    let result = finished.result.into_inner().unwrap_or_else(|p| p.into_inner()).expect("the work ended with a result");
    (result, raised)
}

/// Tell `callback` where the run stands, if that changed since it was last told.
fn tell(callback: &Bound<'_, PyAny>, shared: &Shared) -> PyResult<()> {
    let (stage, done, total) = {
        let mut p = shared.position();
        if !p.changed {
            return Ok(());
        }
        p.changed = false;
        (p.stage.clone(), p.done, p.total)
    };
    callback.call1((stage, done, total)).map(drop)
}
