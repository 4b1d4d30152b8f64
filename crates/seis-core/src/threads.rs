//! How many threads seisimage starts, and the process's global thread pool.
//!
//! `RAYON_NUM_THREADS` is the user's to set, like `compute.threads`, and is bounded like it by
//! [`MAX_THREADS`]: beyond that a machine runs out of threads or address space for their stacks before the
//! work starts. The global pool (which the readers' scans and the velocity model use) is started once,
//! up front, so that a machine that cannot give the threads (`ulimit -u`, `ulimit -v`) is an error naming
//! the limit instead of a panic at the pool's first use.
//!
//! Several ranks of a run on one host (`seisimage run --gpus`, torchrun, `mpirun`) each start a pool: one
//! thread per core each would put several threads on every core, and the ranks' reads of the input, which
//! run at the same time, slow each other down. Unless a launcher has already bound each rank to its own
//! cores, a rank takes its share of them. On a 64-core host with 4 ranks reading a 16 GB SEG-Y file from
//! the page cache, each rank reading its quarter took 0.8-1.5 s with 64 threads each and 0.54-0.56 s with
//! 16 (`run --gpus 4`, phase shift, two runs of each).
//!
//! The global pool does the host's work around the migration (opening the input, planning, the velocity
//! model, drawing and writing products), which is bound by memory, not by the cores: unless
//! `RAYON_NUM_THREADS` says otherwise it has at most [`HOST_THREADS`] threads, for the reasons given there.
//! The CPU engine's transforms, which are bound by arithmetic, run on a pool of their own with every core
//! ([`thread_count`]). On a 64-core host with one H100, `seisimage bench --backend cuda` took 1.22-1.28 ×
//! its floor from file to products with 16 threads in the global pool against 1.53-1.95 × with 64
//! (`RAYON_NUM_THREADS`, four alternated runs each); opening and planning took 5-6 ms against 7-80 ms.

use crate::error::{Error, Result};
use crate::host_pool::HOST_THREADS;
/// The most CPU threads a job may ask for: more than any machine has cores, few enough to start at once.
pub const MAX_THREADS: usize = 1024;

/// The threads of a pool: `asked` (`compute.threads`), else `RAYON_NUM_THREADS`, else one per core this
/// process may use; never more than [`MAX_THREADS`].
pub fn thread_count(asked: Option<usize>) -> usize {
    rank_thread_count(asked, 1)
}

/// [`thread_count`] for a process that is one of `ranks_on_host` ranks of a run on this host: without a
/// number asked for, its share of the cores (see the module comment).
fn rank_thread_count(asked: Option<usize>, ranks_on_host: usize) -> usize {
    let cores = || {
        let usable = std::thread::available_parallelism().map_or(1, |n| n.get());
        // SAFETY: sysconf reads a system constant.
        let online = usize::try_from(unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) }).unwrap_or(usable);
        cores_of_a_rank(usable, online, ranks_on_host)
    };
    asked.or_else(environment_threads).unwrap_or_else(cores).clamp(1, MAX_THREADS)
}

/// The threads `RAYON_NUM_THREADS` asks for, if it is set to a positive number.
fn environment_threads() -> Option<usize> {
    std::env::var("RAYON_NUM_THREADS").ok().and_then(|v| v.trim().parse::<usize>().ok()).filter(|&n| n > 0)
}

/// The global pool's threads, from a process's `threads` (its own or its share of the cores): what the
/// user set in the environment, else at most [`HOST_THREADS`].
fn global_pool_threads(threads: usize, set_by_user: bool) -> usize {
    match set_by_user {
        true => threads,
        false => threads.min(HOST_THREADS),
    }
}

/// The threads of one of `ranks` ranks on a host of `online` cores, of which this process may use `usable`:
/// a rank already bound to fewer cores than the host has uses them all; otherwise it takes its share.
fn cores_of_a_rank(usable: usize, online: usize, ranks: usize) -> usize {
    match usable < online {
        true => usable,
        false => (usable / ranks.max(1)).max(1),
    }
}

/// Start the global thread pool of a process that is one of `ranks_on_host` ranks of a run on this host (1
/// for a process alone): `RAYON_NUM_THREADS` threads if set, else its share of the cores, at most
/// [`HOST_THREADS`].
pub fn start_global_pool(ranks_on_host: usize) -> Result<()> {
    fit_allocator_to_address_limit();
    let threads = global_pool_threads(rank_thread_count(None, ranks_on_host), environment_threads().is_some());
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("seisimage-{i}"))
        .build_global()
        .map_err(|e| cannot_start(threads, &e))
}

/// The error for a pool of `threads` threads that did not start.
pub fn cannot_start(threads: usize, e: &rayon::ThreadPoolBuildError) -> Error {
    Error::Backend(format!(
        "cannot start {threads} threads: {e}; the process's limits (ulimit -u, ulimit -v) do not allow them: raise \
         them, or ask for fewer threads (compute.threads, RAYON_NUM_THREADS)"
    ))
}

/// The addresses glibc's malloc reserves for each arena it adds for threads (`HEAP_MAX_SIZE` on 64-bit).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const ARENA_ADDRESSES: u64 = 64 << 20;

/// Under a limit on address space (`ulimit -v`), keep the allocator's arenas to a sixteenth of it.
///
/// glibc's malloc gives threads arenas of their own, up to eight per core, each reserving
/// [`ARENA_ADDRESSES`] it mostly never uses: the pool of a 64-core host reserves 4 GiB that way, so under a
/// 1 GiB limit the threads take every address, and then a small allocation fails (which aborts the
/// process) or the pool does not start, where a request too large for the limit should fail on its own
/// with an error naming it. Threads share the arenas there are instead; without a limit nothing changes.
fn fit_allocator_to_address_limit() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
        // SAFETY: getrlimit on this process, with a valid struct.
        if unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut limit) } != 0 || limit.rlim_cur == libc::RLIM_INFINITY {
            return;
        }
        let arenas = (limit.rlim_cur / (16 * ARENA_ADDRESSES)).clamp(1, 1 << 16) as libc::c_int;
        // SAFETY: M_ARENA_MAX only bounds the arenas malloc adds from now on; mallopt takes malloc's own
        // lock, so threads already running are safe.
        unsafe { libc::mallopt(libc::M_ARENA_MAX, arenas) };
    }
}

#[cfg(test)]
mod tests {
    use super::{cores_of_a_rank, global_pool_threads, HOST_THREADS};

    #[test]
    fn the_global_pool_has_at_most_the_host_threads_unless_the_user_asks_for_more() {
        assert_eq!(global_pool_threads(64, false), HOST_THREADS);
        assert_eq!(global_pool_threads(8, false), 8);
        assert_eq!(global_pool_threads(64, true), 64);
    }

    #[test]
    fn ranks_of_one_host_share_its_cores_unless_already_bound() {
        // Four ranks on a 64-core host, none bound: 16 threads each.
        assert_eq!(cores_of_a_rank(64, 64, 4), 16);
        // Bound by their launcher (Slurm, mpirun) to 16 cores each: those 16, not a quarter of them.
        assert_eq!(cores_of_a_rank(16, 64, 4), 16);
        // A process alone, and more ranks than cores.
        assert_eq!(cores_of_a_rank(8, 8, 1), 8);
        assert_eq!(cores_of_a_rank(2, 2, 8), 1);
    }
}
