//! How many threads seisimage starts, and the process's global thread pool.
//!
//! `RAYON_NUM_THREADS` is the user's to set, like `compute.threads`, and is bounded like it by
//! [`MAX_THREADS`]: beyond that a machine runs out of threads or address space for their stacks before the
//! work starts. The global pool (which the readers' scans and the velocity model use) is started once,
//! up front, so that a machine that cannot give the threads (`ulimit -u`, `ulimit -v`) is an error naming
//! the limit instead of a panic at the pool's first use.

use crate::error::{Error, Result};
/// The most CPU threads a job may ask for: more than any machine has cores, few enough to start at once.
pub const MAX_THREADS: usize = 1024;

/// The threads of a pool: `asked` (`compute.threads`), else `RAYON_NUM_THREADS`, else one per core; never
/// more than [`MAX_THREADS`].
pub fn thread_count(asked: Option<usize>) -> usize {
    let from_environment =
        || std::env::var("RAYON_NUM_THREADS").ok().and_then(|v| v.trim().parse::<usize>().ok()).filter(|&n| n > 0);
    let cores = || std::thread::available_parallelism().map_or(1, |n| n.get());
    asked.or_else(from_environment).unwrap_or_else(cores).clamp(1, MAX_THREADS)
}

/// Start the global thread pool with [`thread_count`] threads.
pub fn start_global_pool() -> Result<()> {
    fit_allocator_to_address_limit();
    let threads = thread_count(None);
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
