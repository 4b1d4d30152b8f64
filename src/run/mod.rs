//! Running a job, from its file to the manifest in its output folder.
//!
//! A run goes in this order, so that everything that can fail without the data fails before the heavy
//! work, and an output folder with a manifest is a complete one:
//!
//! 1. The job file is read and checked ([`crate::job::Job`]): every value that can be checked alone.
//! 2. The compute engine starts setting up on a thread of its own ([`start_engine`]) while the job is
//!    prepared ([`prepare`]): the input opened, the velocity loaded, the products and the plan made. A
//!    wrong setting found here is placed at its line of the job file (or its `--set` override).
//! 3. The engine gets ready for the plan; the output folder is made ready ([`OutputFolder`]): made,
//!    locked for this run, checked for room, cleared as `output.existing` says, and an earlier run's
//!    manifest removed ([`execute_on`]). The warnings found so far are logged.
//! 4. The engine migrates, handing each product to the product writer as it is finished; the products
//!    are drawn and written while the deeper levels are migrated, and the engine is released (unless it
//!    is kept for the next job) while the last ones are written.
//! 5. The products are put in place together, then the manifest is written ([`Manifest`]).
//!
//! Whether the process runs alone, as a rank, a shard or a reduce ([`RunMode`]) is decided once, where its
//! command starts, and handed to the engine's selection and the output folder's set-up.
//!
//! A batch of jobs ([`run_jobs`]) checks every job first, and the files each names ([`check_files`]), and
//! refuses two jobs with one output folder, then runs the jobs one after another on a shared engine, each
//! prepared while the one before it migrates.

mod batch;
mod cdps;
mod checks;
mod engine;
mod execute;
mod folder;
mod follow;
mod input_crs;
mod lock;
mod manifest;
mod mode;
pub mod partial;
mod prepare;
mod record;
pub mod reduce;
pub mod shard;

pub use batch::run_jobs;
pub use checks::{check_files, memory_report};
pub use engine::{
    leave_engine_to_exit, select_engine, start_engine, EngineKey, EngineStart, ReadyEngine, Release, Selected,
};
pub use execute::{execute, execute_on, AfterMigration};
pub use folder::{check_free_space, Clearing, OutputFolder};
pub use follow::follow;
pub use lock::{host_name, FolderLock, LOCK_FILE};
pub use manifest::{InputAxes, InputRecord, Manifest, Slurm, Started, Versions, MANIFEST_SCHEMA};
pub use mode::RunMode;
pub use prepare::{prepare, prepare_with, Prepared};
pub use record::{count, utc, FileRecord, FileStamp, MANIFEST};
