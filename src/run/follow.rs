//! A rank other than 0 of a run over several GPUs (see [`crate::distributed`]).

use crate::cancel::CancelToken;
use crate::error::Result;

/// A rank other than 0 of a run over several GPUs: it migrates its share of `job` with the others, and
/// writes nothing (rank 0 writes the products and the manifest). `rank` is this process's place in the run.
pub fn follow(
    job: &crate::job::Job,
    rank: &crate::distributed::ranks::RankEnv,
    progress: &dyn crate::progress::Progress,
    cancel: &CancelToken,
) -> Result<()> {
    struct Discard;
    impl crate::imaging::ProductSink for Discard {
        fn complete(&self, _index: usize, _values: Vec<f32>) {}
    }
    let mut engine = super::start_engine(job, crate::job::Backend::Cuda, &super::RunMode::Rank(rank.clone()));
    let prepared = super::prepare(job.clone())?;
    engine.plan_ready(&prepared);
    let mut engine = engine.ready()?;
    tracing::info!("{}: {}", engine.choice.kind, engine.choice.detail);
    let mut ctx = crate::context::RunContext::new(progress, cancel.child());
    // Every member of a velocity scan, as rank 0 migrates them: the ranks trade the input and sum the
    // products of the whole scan together.
    let scan = prepared.migrations();
    let sinks: Vec<&dyn crate::imaging::ProductSink> = scan.iter().map(|_| &Discard as _).collect();
    let result = engine.migrate_scan(&scan, &mut ctx, &sinks);
    engine.release().wait()?;
    result
}
