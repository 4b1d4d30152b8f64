//! One job split between several processes: shares of the frequencies ([`crate::imaging::bands`]), each
//! migrated by one process, and the products of the shares summed in a fixed order.
//!
//! Two ways, one decomposition:
//! - **Ranks** of one run over several GPUs, one process per GPU, started by a launcher (`srun`, `mpirun`,
//!   or `seisimage run --gpus`, [`launcher`]) and talking through NCCL ([`ranks`], `gpu::ranks`): rank 0
//!   sums the products and writes them and the manifest.
//! - **Shards** that run on their own, anywhere and at any time (`seisimage run --shard I/N`,
//!   [`crate::run::shard`]), each writing its partial products to a file ([`crate::run::partial`]);
//!   `seisimage reduce` sums the shards and writes the products and the manifest
//!   ([`crate::run::reduce`]). This needs no GPU and no NCCL: a CPU cluster or a Slurm array with a
//!   dependent reduce job can split one survey.
//!
//! This module holds what the processes of a split job share below the run: the launchers' environment
//! and the ranks' rendezvous; the shard and reduce modes of a run are in [`crate::run`].

mod alive;
pub mod launcher;
pub mod ranks;
pub mod slurm;
pub mod start_up;

pub use crate::imaging::parts::{host_name, part_record, sum_in_order};
