//! How the command line shows progress: a bar on a terminal and periodic log lines otherwise (batch logs
//! on clusters), each counting in the stage's unit ([`unit_of`]) and saying how long is left.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use seisimage::progress::{Progress, Silent};

/// The unit a stage counts in, by the names the engines and commands give their stages.
pub fn unit_of(stage: &str) -> &'static str {
    match stage {
        "phase shift" | "stolt" => "depth levels",
        "split-step" => "depth steps",
        "writing" => "products",
        "read and transform in time"
        | "read and upload"
        | "transform"
        | "statistics"
        | "synthesising"
        | "converting" => "inlines",
        _ => "steps",
    }
}

/// A duration in the largest units that say it: `45 s`, `3 min 20 s`, `2 h 5 min`.
fn duration(seconds: f64) -> String {
    let s = seconds.max(0.0).round() as u64;
    match s {
        s if s < 60 => format!("{s} s"),
        s if s < 3600 => format!("{} min {} s", s / 60, s % 60),
        s => format!("{} h {} min", s / 3600, (s % 3600) / 60),
    }
}

/// `done/total unit (pct %)`.
fn count_line(done: u64, total: u64, unit: &str) -> String {
    let pct = if total > 0 { 100.0 * done as f64 / total as f64 } else { 0.0 };
    format!("{done}/{total} {unit} ({pct:.0} %)")
}

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
        let template =
            format!("{{msg:>14}} [{{bar:40}}] {{pos}}/{{len}} {} {{elapsed_precise}} (eta {{eta}})", unit_of(stage));
        let style = indicatif::ProgressStyle::with_template(&template)
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

    fn position(&self) -> Option<String> {
        let bar = self.bar.lock().unwrap_or_else(|e| e.into_inner());
        let b = bar.as_ref()?;
        let stage = b.message();
        let total = b.length().unwrap_or(0);
        Some(format!(
            "during {stage} at {}, {} into it",
            count_line(b.position(), total, unit_of(&stage)),
            duration(b.elapsed().as_secs_f64())
        ))
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
    finished: bool,
}

impl LogLines {
    pub fn new(interval: Duration) -> Self {
        let now = Instant::now();
        LogLines {
            interval,
            state: Mutex::new(LogState { stage: String::new(), total: 0, started: now, last: now, finished: false }),
            done: AtomicU64::new(0),
            total: AtomicU64::new(0),
        }
    }
}

impl Progress for LogLines {
    fn begin(&self, stage: &str, total: u64) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        *s = LogState { stage: stage.to_string(), total, started: now, last: now, finished: false };
        self.done.store(0, Ordering::Relaxed);
        self.total.store(total, Ordering::Relaxed);
        tracing::debug!("{stage}: started ({total} {})", unit_of(stage));
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
            let elapsed = s.started.elapsed().as_secs_f64();
            // What is left, at the pace so far.
            let left = match done {
                d if d >= s.total || d == 0 => String::new(),
                d => format!(", about {} left", duration(elapsed * (s.total - d) as f64 / d as f64)),
            };
            tracing::info!(
                "{}: {} after {}{left}",
                s.stage,
                count_line(done, s.total, unit_of(&s.stage)),
                duration(elapsed)
            );
        }
    }

    fn finish(&self) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        s.finished = true;
        let took = s.started.elapsed();
        // Short stages say nothing at the default level; a batch log only needs what takes time.
        if took >= Duration::from_secs(2) {
            tracing::info!("{}: done in {:.1} s", s.stage, took.as_secs_f64());
        } else {
            tracing::debug!("{}: done in {:.3} s", s.stage, took.as_secs_f64());
        }
    }

    fn position(&self) -> Option<String> {
        let s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if s.stage.is_empty() {
            return None;
        }
        if s.finished {
            return Some(format!("after {}", s.stage));
        }
        let done = self.done.load(Ordering::Relaxed);
        Some(format!(
            "during {} at {}, {} into it",
            s.stage,
            count_line(done, s.total, unit_of(&s.stage)),
            duration(s.started.elapsed().as_secs_f64())
        ))
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
        assert!(text.contains("writing: 1/2 products (50 %)"), "{text}");
        assert!(text.contains("writing: 2/2 products (100 %)"), "{text}");
    }

    /// Each line counts in the stage's unit and says what is left at the pace so far; a stopped run can say
    /// where it was.
    #[test]
    fn lines_have_a_unit_and_the_time_left() {
        let p = LogLines::new(Duration::ZERO);
        let text = logged(|| {
            p.begin("phase shift", 400);
            // Back-date the stage: 95 levels in 30 s leave 305 levels, about 96 s.
            p.state.lock().unwrap().started -= Duration::from_secs(30);
            p.advance(95);
        });
        assert!(text.contains("phase shift: 95/400 depth levels (24 %) after 30 s, about 1 min 36 s left"), "{text}");
        assert_eq!(p.position().unwrap(), "during phase shift at 95/400 depth levels (24 %), 30 s into it");
        p.finish();
        assert_eq!(p.position().unwrap(), "after phase shift");
        assert_eq!(duration(7530.0), "2 h 5 min");
    }
}
