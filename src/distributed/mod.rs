//! One job split between several processes: shares of the frequencies ([`crate::imaging::bands`]), each
//! migrated by one process, and the products of the shares summed in a fixed order.
//!
//! Two ways, one decomposition:
//! - **Ranks** of one run over several GPUs, one process per GPU, started by a launcher (`srun`, `mpirun`,
//!   or `seisimage run --gpus`, [`launcher`]) and talking through NCCL ([`ranks`], `gpu::ranks`): rank 0
//!   sums the products and writes them and the manifest.
//! - **Shards** that run on their own, anywhere and at any time (`seisimage run --shard I/N`, [`shard`]),
//!   each writing its partial products to a file ([`partial`]); `seisimage reduce` sums the shards and
//!   writes the products and the manifest ([`reduce`]). This needs no GPU and no NCCL: a CPU cluster or a
//!   Slurm array with a dependent reduce job can split one survey.

mod alive;
pub mod launcher;
pub mod partial;
pub mod ranks;
pub mod reduce;
pub mod shard;
pub mod slurm;

pub use crate::imaging::parts::{host_name, part_record, sum_in_order};
