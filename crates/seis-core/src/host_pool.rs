//! How many threads do a run's memory-bound host work: at most [`HOST_THREADS`], however many cores the
//! host has. The global pool, which opens and scans the input, plans, and draws and writes the products,
//! has no more by default (`crate::threads`). The input's decode, which the CPU engine calls from its
//! own pool of every core, runs through [`install`], on a pool of that many where the caller's is larger.

/// The most threads that scan or decode the input, or draw and write the products, at once.
///
/// Decoding: a chunk is a few tens of megabytes, decoded anew for each chunk by threads that wait in between while
/// the chunk is handed to the device. On a 64-core host (a virtual machine with 4 × H100), the 16 GB phase-shift
/// job of `scripts/gpu-multi.sh` on one GPU read and uploaded its input in 1.53-1.95 s on 64 threads, 0.59-0.82 s
/// on 32, 0.50-0.54 s on 16 and 0.61-0.74 s on 8 (`RAYON_NUM_THREADS`, two alternated runs each); `seisimage bench`
/// took its ingest from 0.20 × to 0.67 × the pinned upload bandwidth with 16 threads instead of 64. A profile of
/// the 64-thread run put most of the pool's time in rayon's work stealing and the kernel's wake-ups, and 6 % in the
/// decode itself: past about 16 threads the decode of a chunk is bound by memory, and every thread more adds only
/// waking and stealing. With this limit, in three runs alternated with a build without it on that host, the job's
/// ingest took 0.52-0.61 s against 1.68-1.79 s, and the job 2.92-3.13 s from command to products against 4.13-4.26
/// s. The CPU engine's read gains as much: on the same kind of host, a 1024 × 1024 × 1000 volume (4.2 GB, phase
/// shift, 10 depth steps, `--backend cpu`) was read in 0.12-0.13 s on 16 threads against 0.41-0.47 s on all 64
/// (three alternated runs).
///
/// Products: drawing a picture is a few passes over a few megabytes (resampling, painting, indexing its
/// colours), and on 64 threads, too, most of the time went to waking threads and stealing work. On the
/// same kind of host, `seisimage bench --backend cuda` wrote its products after the migration in 30-48 ms
/// on 64 threads and 15-19 ms on 16 (`RAYON_NUM_THREADS`, four alternated runs each): 1.53-1.95 × the
/// floor from file to products against 1.22-1.28 ×.
///
/// Scanning: opening that benchmark's 1.1 GB SEG-Y file (262144 trace headers, one page each) and planning
/// the job took 7-80 ms on 64 threads and 5-6 ms on 16 (the same runs).
pub const HOST_THREADS: usize = 16;

/// The pool of the host's work: none when the calling pool has at most [`HOST_THREADS`] threads (it does
/// the work, within the threads it was given), else one of that many, made once (none if it cannot start:
/// the calling pool then does the work).
fn host_pool() -> Option<&'static rayon::ThreadPool> {
    static POOL: std::sync::OnceLock<Option<rayon::ThreadPool>> = std::sync::OnceLock::new();
    if rayon::current_num_threads() <= HOST_THREADS {
        return None;
    }
    POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(HOST_THREADS)
            .thread_name(|i| format!("seisimage-host-{i}"))
            .build()
            .ok()
    })
    .as_ref()
}

/// Run `op` on the host pool (of [`HOST_THREADS`] threads) where there is one, else on the calling thread
/// (and its pool).
pub fn install<R: Send>(op: impl FnOnce() -> R + Send) -> R {
    match host_pool() {
        Some(pool) => pool.install(op),
        None => op(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pool of a few threads decodes on its own threads, whatever another pool did before: a job given
    /// `compute.threads = 4` never decodes on more.
    #[test]
    fn only_a_pool_of_more_than_the_cap_hands_the_decode_over() {
        let pool = |n: usize| rayon::ThreadPoolBuilder::new().num_threads(n).build().unwrap();
        let threads = |n: usize| pool(n).install(|| host_pool().map(|p| p.current_num_threads()));
        assert_eq!(threads(4), None);
        assert_eq!(threads(HOST_THREADS + 8), Some(HOST_THREADS));
        assert_eq!(threads(4), None);
        assert_eq!(threads(HOST_THREADS), None);
    }
}
