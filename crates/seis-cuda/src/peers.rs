//! What a rank of a run over several GPUs needs to know of the others: its place in the run, NCCL's id, and
//! their failures. The application says it (its launchers and rendezvous folder); the rank engine and its
//! communicator only ask.

use std::time::Duration;

use seis_core::cancel::CancelToken;
use seis_core::error::{Error, Result};

/// This process's place in a run over several GPUs, and how it meets the other ranks of the run.
pub trait Peers: Send + Sync {
    /// This rank, counted from 0.
    fn rank(&self) -> usize;
    /// The number of ranks in the run.
    fn world(&self) -> usize;
    /// What started the ranks (a launcher's name), for the log and the manifest.
    fn launcher(&self) -> &str;
    /// The CUDA device of this rank, of `visible` devices.
    fn device(&self, visible: usize) -> Result<usize>;
    /// NCCL's unique id for the run, the same in every rank: made by `make` where the protocol says so
    /// (rank 0), and waited for at most `timeout`, or until `cancel` stops the wait.
    fn share_id(
        &self,
        timeout: Duration,
        cancel: &CancelToken,
        make: &dyn Fn() -> Result<[u8; 128]>,
    ) -> Result<[u8; 128]>;
    /// The failure of another rank, once one has told it or is seen gone without a word, as this rank's
    /// error.
    fn failure(&self) -> Option<Error>;
    /// Tell the other ranks that this one failed with `error`.
    fn tell_failure(&self, error: &Error);
    /// The run ended well (rank 0): what the meeting left may go.
    fn finished(&self);
    /// This rank's part ended well and it may end before the others (not rank 0): its ending is no failure.
    fn leaving(&self) {}
}
