//! How this process takes part in a run: on its own, as one rank of a run over several GPUs, as one shard
//! of a job split between separate runs, or as the sum of such shards. Resolved once, where a command
//! starts, from its command line and the launcher's environment; the engine's selection and the output
//! folder's set-up are handed the value and read no environment themselves.

use crate::distributed::ranks::RankEnv;
use crate::error::{Error, Result};
use crate::imaging::bands::Share;

/// This process's part in a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RunMode {
    /// A job, or a batch of jobs one after another, run by this process alone.
    Alone,
    /// One rank of a run over several GPUs, as its launcher said.
    Rank(RankEnv),
    /// Share I of N of a job's frequencies, written as partial products (`run --shard I/N`).
    Shard(Share),
    /// The sum of a job's shards (`seisimage reduce`).
    Reduce,
}

impl RunMode {
    /// The mode of `seisimage run` with `shard` from its command line: a rank when a launcher started this
    /// process as one of several, else a shard when one was asked for, else alone. This is where the
    /// launcher's environment is read.
    pub fn of_run(shard: Option<Share>) -> Result<RunMode> {
        match (RankEnv::from_env()?, shard) {
            (Some(_), Some(_)) => {
                Err(Error::Request("--shard splits a job between separate runs: not with ranks or --gpus".into()))
            }
            (Some(env), None) => Ok(RunMode::Rank(env)),
            (None, Some(share)) => Ok(RunMode::Shard(share)),
            (None, None) => Ok(RunMode::Alone),
        }
    }

    /// The rank of a run over several GPUs this process is, if it is one.
    pub fn rank(&self) -> Option<&RankEnv> {
        match self {
            RunMode::Rank(env) => Some(env),
            _ => None,
        }
    }

    /// The launcher's id of the run this process is a rank of (its rendezvous folder is its own).
    pub fn run_id(&self) -> Option<&str> {
        self.rank().and_then(|env| env.run_id.as_deref())
    }
}
