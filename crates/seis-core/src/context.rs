//! What every long piece of work carries besides its data: where it reports progress, whether it was asked
//! to stop, and the record of its stages.

use crate::cancel::CancelToken;
use crate::error::Result;
use crate::progress::Progress;
use crate::stats::RunStats;

/// The context of one run: its progress display, its stop request, and the stages it records.
pub struct RunContext<'a> {
    pub progress: &'a dyn Progress,
    pub cancel: CancelToken,
    pub stats: RunStats,
}

impl<'a> RunContext<'a> {
    pub fn new(progress: &'a dyn Progress, cancel: CancelToken) -> Self {
        RunContext { progress, cancel, stats: RunStats::default() }
    }

    /// `Err(Interrupted)` once the run was asked to stop.
    pub fn check(&self) -> Result<()> {
        self.cancel.check()
    }
}
