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
