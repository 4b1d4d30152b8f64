//! The Slurm job a process runs in, recorded in its manifest: read here, with the rest of the launchers'
//! environment.

use serde::Serialize;

/// The Slurm identifiers of the process (`SLURM_JOB_ID`, `SLURM_ARRAY_JOB_ID`, `SLURM_ARRAY_TASK_ID`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Slurm {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub job_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub array_job_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub array_task_id: Option<String>,
}

impl Slurm {
    /// The identifiers of this process, if it runs under Slurm.
    pub fn of_process() -> Option<Slurm> {
        let var = |name| std::env::var(name).ok().filter(|v| !v.is_empty());
        let s = Slurm {
            job_id: var("SLURM_JOB_ID"),
            array_job_id: var("SLURM_ARRAY_JOB_ID"),
            array_task_id: var("SLURM_ARRAY_TASK_ID"),
        };
        (s != Slurm { job_id: None, array_job_id: None, array_task_id: None }).then_some(s)
    }
}
