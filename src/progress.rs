//! Progress of long work. Engines report through [`Progress`]; the binary shows a bar on a terminal and
//! periodic log lines otherwise (batch logs on clusters).

/// A sink for progress of one stage at a time.
pub trait Progress: Sync {
    /// A new stage of `total` units begins.
    fn begin(&self, stage: &str, total: u64);
    /// `n` more units of the current stage are done.
    fn advance(&self, n: u64);
    /// The current stage is done.
    fn finish(&self);
}

/// Progress that goes nowhere (tests, library use).
pub struct Silent;

impl Progress for Silent {
    fn begin(&self, _stage: &str, _total: u64) {}
    fn advance(&self, _n: u64) {}
    fn finish(&self) {}
}

use std::io::IsTerminal;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// A bar on an interactive terminal; in a batch log (stderr not a terminal), a line at most every
/// `interval`; nothing with `quiet`.
pub fn for_stderr(quiet: bool, interval: Duration) -> Box<dyn Progress> {
    if quiet {
        Box::new(Silent)
    } else if std::io::stderr().is_terminal() {
        Box::new(Bar::default())
    } else {
        Box::new(LogLines::new(interval))
    }
}

/// An indicatif progress bar per stage.
#[derive(Default)]
pub struct Bar {
    bar: Mutex<Option<indicatif::ProgressBar>>,
}

impl Progress for Bar {
    fn begin(&self, stage: &str, total: u64) {
        let bar = indicatif::ProgressBar::new(total);
        let style =
            indicatif::ProgressStyle::with_template("{msg:>14} [{bar:40}] {percent:>3}% {elapsed_precise} (eta {eta})")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
                .progress_chars("=> ");
        bar.set_style(style);
        bar.set_message(stage.to_string());
        if let Some(old) = self.bar.lock().unwrap_or_else(|e| e.into_inner()).replace(bar) {
            old.finish_and_clear();
        }
    }

    fn advance(&self, n: u64) {
        if let Some(b) = self.bar.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
            b.inc(n);
        }
    }

    fn finish(&self) {
        if let Some(b) = self.bar.lock().unwrap_or_else(|e| e.into_inner()).take() {
            b.finish_and_clear();
        }
    }
}

/// A log line when a stage starts, at most every `interval` while it runs, and when it ends: what a batch
/// log on a cluster should show.
pub struct LogLines {
    interval: Duration,
    state: Mutex<LogState>,
    done: AtomicU64,
    /// The stage's total, readable without the lock.
    total: AtomicU64,
}

struct LogState {
    stage: String,
    total: u64,
    started: Instant,
    last: Instant,
}

impl LogLines {
    pub fn new(interval: Duration) -> Self {
        let now = Instant::now();
        LogLines {
            interval,
            state: Mutex::new(LogState { stage: String::new(), total: 0, started: now, last: now }),
            done: AtomicU64::new(0),
            total: AtomicU64::new(0),
        }
    }
}

impl Progress for LogLines {
    fn begin(&self, stage: &str, total: u64) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        *s = LogState { stage: stage.to_string(), total, started: now, last: now };
        self.done.store(0, Ordering::Relaxed);
        self.total.store(total, Ordering::Relaxed);
        tracing::debug!("{stage}: started ({total} steps)");
    }

    fn advance(&self, n: u64) {
        let done = self.done.fetch_add(n, Ordering::Relaxed) + n;
        // Workers do not wait for each other's log lines, except the one that completes the stage: its
        // line (100 %) must not be lost to another worker holding the lock.
        let mut s = if done >= self.total.load(Ordering::Relaxed) {
            self.state.lock().unwrap_or_else(|e| e.into_inner())
        } else {
            let Ok(s) = self.state.try_lock() else { return };
            s
        };
        if s.last.elapsed() >= self.interval {
            s.last = Instant::now();
            let pct = if s.total > 0 { 100.0 * done as f64 / s.total as f64 } else { 0.0 };
            tracing::info!(
                "{}: {done}/{} ({pct:.0} %) after {:.0} s",
                s.stage,
                s.total,
                s.started.elapsed().as_secs_f64()
            );
        }
    }

    fn finish(&self) {
        let s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let took = s.started.elapsed();
        // Short stages say nothing at the default level; a batch log only needs what takes time.
        if took >= Duration::from_secs(2) {
            tracing::info!("{}: done in {:.1} s", s.stage, took.as_secs_f64());
        } else {
            tracing::debug!("{}: done in {:.3} s", s.stage, took.as_secs_f64());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    /// Log lines written by `f` on this thread.
    fn logged(f: impl FnOnce()) -> String {
        let buffer = Arc::new(Mutex::new(Vec::<u8>::new()));
        let sink = buffer.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(move || Writer(sink.clone()))
            .with_max_level(tracing::Level::INFO)
            .with_ansi(false)
            .finish();
        tracing::subscriber::with_default(subscriber, f);
        let bytes = buffer.lock().unwrap().clone();
        String::from_utf8(bytes).unwrap()
    }

    struct Writer(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Writer {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// The unit that completes a stage is always logged, even while another worker holds the log (which
    /// makes every other unit skip its line rather than wait).
    #[test]
    fn the_last_unit_of_a_stage_is_never_lost() {
        let p = Arc::new(LogLines::new(Duration::ZERO));
        let text = logged(|| {
            p.begin("writing", 2);
            p.advance(1);
            let (held, release) = (Arc::new(std::sync::Barrier::new(2)), Arc::new(std::sync::Barrier::new(2)));
            let holder = {
                let (p, held, release) = (p.clone(), held.clone(), release.clone());
                std::thread::spawn(move || {
                    let _busy = p.state.lock().unwrap();
                    held.wait();
                    release.wait();
                    std::thread::sleep(Duration::from_millis(20));
                })
            };
            held.wait();
            release.wait();
            p.advance(1);
            holder.join().unwrap();
        });
        assert!(text.contains("writing: 1/2 (50 %)"), "{text}");
        assert!(text.contains("writing: 2/2 (100 %)"), "{text}");
    }
}
