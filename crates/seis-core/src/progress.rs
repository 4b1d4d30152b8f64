//! Progress of long work. Engines report through [`Progress`]; the application shows it (a bar on a
//! terminal, periodic log lines in a batch log).

/// A sink for progress of one stage at a time.
pub trait Progress: Sync {
    /// A new stage of `total` units begins.
    fn begin(&self, stage: &str, total: u64);
    /// `n` more units of the current stage are done.
    fn advance(&self, n: u64);
    /// The current stage is done.
    fn finish(&self);
    /// Where the work stands, in words (`during phase shift at 95/400 depth levels (24 %), 31 s into it`),
    /// for a log that must say how far a stopped run got; `None` when nothing is known.
    fn position(&self) -> Option<String> {
        None
    }
}

/// Progress that goes nowhere (tests, library use).
pub struct Silent;

impl Progress for Silent {
    fn begin(&self, _stage: &str, _total: u64) {}
    fn advance(&self, _n: u64) {}
    fn finish(&self) {}
}
