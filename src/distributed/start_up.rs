//! What the end of a run over several GPUs tells its user about the ranks' start-up (see "When several
//! GPUs pay" in docs/cluster.md).

use crate::stats::RunStats;

/// What rank 0 says at the end of a run whose ranks took longer to start than to migrate: CUDA's start-up
/// (`engine-setup`) and NCCL's (`nccl-setup`) come before the ranks can trade the input, and one GPU pays
/// only a fraction of the first, so such a job may run faster on one GPU. `None` for a run whose
/// migration outweighs its start-up, or whose stages are not those of ranks.
pub fn start_up_note(stats: &RunStats) -> Option<String> {
    let cuda = stats.seconds("engine-setup")?;
    let nccl = stats.seconds("nccl-setup")?;
    let migration = stats.distributed.as_ref()?.parts.iter().map(|p| p.seconds).reduce(f64::max)?;
    (cuda + nccl > migration).then(|| {
        format!(
            "the ranks took {:.2} s to start (CUDA {cuda:.2} s, then NCCL {nccl:.2} s) and {migration:.2} s to \
             migrate: a job this short may run faster on one GPU (`--backend cuda`; see \"When several GPUs pay\" \
             in docs/cluster.md)",
            cuda + nccl
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// The stages of a run's rank 0, as it records them: its start-up, and each rank's migration.
    fn rank_stats(cuda: f64, nccl: f64, migrations: &[f64]) -> RunStats {
        use crate::stats::{Distribution, PartRecord};
        let mut stats = RunStats::default();
        stats.add("engine-setup", Duration::from_secs_f64(cuda), 0);
        stats.add("nccl-setup", Duration::from_secs_f64(nccl), 0);
        let part = |index, seconds| PartRecord {
            index,
            host: "node".into(),
            backend: "cuda".into(),
            frequencies: [0, 1],
            frequencies_hz: [0.0, 1.0],
            bands: 1,
            seconds,
            stages: Vec::new(),
            nonfinite_samples: 0,
        };
        stats.distributed =
            Some(Distribution::new("ranks", migrations.iter().enumerate().map(|(i, &s)| part(i, s)).collect()));
        stats
    }

    #[test]
    fn a_run_whose_ranks_start_longer_than_they_migrate_says_so() {
        // Phase shift on four H100s: 1.73 s for CUDA, 0.87 s for NCCL, 1.10-1.30 s of migration.
        let note = start_up_note(&rank_stats(1.73, 0.87, &[1.24, 1.30, 1.10, 1.17])).expect("a note");
        assert!(
            note.starts_with("the ranks took 2.60 s to start (CUDA 1.73 s, then NCCL 0.87 s) and 1.30 s"),
            "{note}"
        );
        assert!(note.contains("--backend cuda"), "{note}");
        // Split-step: the same start-up, 13 s of migration.
        assert_eq!(start_up_note(&rank_stats(1.75, 0.92, &[12.6, 12.8, 12.6, 12.6])), None);
        // A run alone has no NCCL stage and no ranks.
        let mut alone = RunStats::default();
        alone.add("engine-setup", Duration::from_secs(2), 0);
        assert_eq!(start_up_note(&alone), None);
    }
}
