//! Reading the input ahead while the compute engine sets up (see [`crate::volume::ReadAhead`]): which
//! inlines the engine's ingest takes first, and how much memory they may have.

use std::ops::Range;
use std::time::{Duration, Instant};

use super::{Prepared, RunMode};
use crate::imaging::bands::split_even;

/// The most a process reads ahead. The engine's set-up lasts seconds at most, and reads from the page cache
/// run at several GB/s.
const MOST: u64 = 8 << 30;

/// Read the inlines the engine ingests first into `p`'s reader, until `ready()` says the engine is ready
/// (or the memory allowed is full); how long that took and the bytes held.
pub(super) fn while_waiting(p: &mut Prepared, mode: &RunMode, ready: &dyn Fn() -> bool) -> (Duration, u64) {
    let t = Instant::now();
    let [ni, nx, ns] = p.plan.input.shape();
    let held = p.reader.fill(first_ingested(ni, mode), p.plan.ingest_inlines, allowance(p, mode), ready);
    let bytes = (held.len() * nx * ns * 4) as u64;
    if !held.is_empty() {
        tracing::debug!(
            "inlines {}..{} ({:.2} GB) read ahead in {:.3} s while the engine was set up",
            held.start,
            held.end,
            bytes as f64 / 1e9,
            t.elapsed().as_secs_f64()
        );
    }
    (t.elapsed(), bytes)
}

/// The inlines a run of `ni` inlines in `mode` ingests, in the order it reads them: a rank of several reads
/// its slab (the others' go to them), any other run all of them.
fn first_ingested(ni: usize, mode: &RunMode) -> Range<usize> {
    match mode {
        RunMode::Rank(env) => split_even(ni, env.world).swap_remove(env.rank.min(env.world - 1)),
        RunMode::Alone | RunMode::Shard(_) | RunMode::Reduce => 0..ni,
    }
}

/// Bytes a process may read ahead: an eighth of the memory the host has to spare (of `compute.host_memory_gb`
/// where set), shared by the ranks of a run, and never more than [`MOST`].
fn allowance(p: &Prepared, mode: &RunMode) -> u64 {
    let spare = crate::imaging::store::available_host_memory().unwrap_or(0);
    let spare = match p.job.config.compute.host_memory_gb {
        Some(gb) => spare.min((gb * 1e9) as u64),
        None => spare,
    };
    let ranks = match mode {
        RunMode::Rank(env) => env.world.max(1) as u64,
        _ => 1,
    };
    (spare / 8 / ranks).min(MOST)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::distributed::ranks::RankEnv;

    #[test]
    fn a_rank_reads_ahead_its_slab_and_any_other_run_from_the_first_inline() {
        let rank =
            |rank, world| RunMode::Rank(RankEnv { rank, world, local_rank: rank, launcher: "test", run_id: None });
        assert_eq!(first_ingested(2048, &rank(0, 4)), 0..512);
        assert_eq!(first_ingested(2048, &rank(3, 4)), 1536..2048);
        assert_eq!(first_ingested(10, &rank(1, 3)), 3..6);
        assert_eq!(first_ingested(10, &RunMode::Alone), 0..10);
        let share = crate::imaging::bands::Share { index: 1, count: 2 };
        assert_eq!(first_ingested(10, &RunMode::Shard(share)), 0..10);
    }
}
