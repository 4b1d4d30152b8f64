//! A file mapped into memory for reading, which may be cut short or rewritten by someone else while it is
//! mapped.
//!
//! SEG-Y is decoded straight from the mapped file: the samples go from the page cache into their place in
//! the caller's buffer (pinned memory on a GPU run) in one pass, which is what keeps the ingest at memory
//! speed. The price of a map is that a page past the end of a file that shrank after it was mapped cannot
//! be read: touching it raises SIGBUS, which kills the process at once, leaving its temporary files and
//! no message. So every map is registered here, and a SIGBUS handler, installed with the first map, turns
//! a fault inside a registered map into a flag: it maps a page of zeros over the faulting page (so that the
//! read goes on and finds zeros) and marks the map. The reader checks the mark after each read
//! ([`MappedFile::changed`]) and fails with an error that names the file. A fault anywhere else is left to
//! the default action, as if the handler were not there.
//!
//! Why not read through `pread`, which reports a short file as an error: the map is what the decode speed
//! rests on, and the watch costs nothing until a fault (the check is one load per read). Measured with
//! `cargo bench --bench segy_decode` (256 MB files in the page cache, on 2 cores shared with other work),
//! six runs alternating with a build without the watch, medians: decoding on one thread 11.7 GB/s (IEEE)
//! and 9.5 GB/s (IBM) with it, 12.1 and 9.8 GB/s without, within the spread of the runs (±0.5 GB/s); on
//! two threads the two builds overlapped (IEEE 16.4-17.0 GB/s against 17.2-17.3 GB/s in the quiet runs).

use std::fs::File;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Once;

use memmap2::Mmap;

/// Maps watched at once at most; a map beyond them is read unwatched (a fault then ends the process, as
/// it would without this module).
const SLOTS: usize = 64;

/// One watched map: the addresses `start..end`, and whether a page of it was replaced by zeros.
struct Slot {
    start: AtomicUsize,
    end: AtomicUsize,
    changed: AtomicBool,
}

#[allow(clippy::declare_interior_mutable_const)] // a pattern to initialise the array below, never used itself
const FREE: Slot = Slot { start: AtomicUsize::new(0), end: AtomicUsize::new(0), changed: AtomicBool::new(false) };
static WATCHED: [Slot; SLOTS] = [FREE; SLOTS];
static PAGE_SIZE: AtomicUsize = AtomicUsize::new(4096);
static INSTALL: Once = Once::new();
/// The SIGBUS action before ours, which a fault outside the watched maps is handed back to.
static PREVIOUS: std::sync::OnceLock<libc::sigaction> = std::sync::OnceLock::new();

/// A read-only map of a file, watched for pages that vanish while it is mapped.
#[derive(Debug)]
pub struct MappedFile {
    map: Mmap,
    /// The slot of [`WATCHED`] it holds, if one was free.
    slot: Option<usize>,
}

impl MappedFile {
    /// Map all of `file` (which must not be empty).
    pub fn map(file: &File) -> std::io::Result<MappedFile> {
        INSTALL.call_once(install_handler);
        // SAFETY: a read-only, private map. Another process may still cut the file short or rewrite it while
        // it is mapped: pages past a new end of the file are caught by the handler (see the module doc);
        // bytes rewritten in place are read as they are, as by any reader of a file being rewritten.
        let map = unsafe { Mmap::map(file)? };
        let (start, end) = (map.as_ptr() as usize, map.as_ptr() as usize + map.len());
        let slot = (0..SLOTS).find(|&i| {
            let claimed = WATCHED[i].start.compare_exchange(0, start, Ordering::AcqRel, Ordering::Relaxed).is_ok();
            if claimed {
                WATCHED[i].changed.store(false, Ordering::Release);
                WATCHED[i].end.store(end, Ordering::Release);
            }
            claimed
        });
        if slot.is_none() {
            tracing::debug!("more than {SLOTS} files mapped at once: this one is read unwatched");
        }
        Ok(MappedFile { map, slot })
    }

    /// Whether a page of the file vanished while it was mapped (the file was cut short): what was read from
    /// it since may hold zeros in place of data.
    pub fn changed(&self) -> bool {
        self.slot.is_some_and(|i| WATCHED[i].changed.load(Ordering::Acquire))
    }
}

impl std::ops::Deref for MappedFile {
    type Target = Mmap;

    fn deref(&self) -> &Mmap {
        &self.map
    }
}

impl Drop for MappedFile {
    fn drop(&mut self) {
        if let Some(i) = self.slot {
            // Unwatched before the map goes (the map field is dropped after this).
            WATCHED[i].end.store(0, Ordering::Release);
            WATCHED[i].start.store(0, Ordering::Release);
        }
    }
}

fn install_handler() {
    // SAFETY: sysconf and sigaction with a handler that only does what a signal handler may (atomics, mmap).
    unsafe {
        let page = libc::sysconf(libc::_SC_PAGESIZE);
        if page > 0 {
            PAGE_SIZE.store(page as usize, Ordering::Relaxed);
        }
        let mut previous: libc::sigaction = std::mem::zeroed();
        if libc::sigaction(libc::SIGBUS, std::ptr::null(), &mut previous) != 0 {
            return;
        }
        let _ = PREVIOUS.set(previous);
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_sigbus as *const () as usize;
        action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
        libc::sigemptyset(&mut action.sa_mask);
        if libc::sigaction(libc::SIGBUS, &action, std::ptr::null_mut()) != 0 {
            tracing::debug!("cannot watch mapped files for SIGBUS: {}", std::io::Error::last_os_error());
        }
    }
}

/// The SIGBUS handler: a fault inside a watched map gets a page of zeros and marks the map; anything else
/// goes back to the action there was before (the default one, unless someone else installed one).
extern "C" fn on_sigbus(signal: libc::c_int, info: *mut libc::siginfo_t, _context: *mut libc::c_void) {
    // SAFETY: `info` is the kernel's description of this signal; only async-signal-safe calls follow.
    unsafe {
        // A fault (si_code > 0), not a SIGBUS sent by kill or raise.
        if (*info).si_code > 0 {
            let addr = (*info).si_addr() as usize;
            for slot in &WATCHED {
                let start = slot.start.load(Ordering::Acquire);
                if start != 0 && start <= addr && addr < slot.end.load(Ordering::Acquire) {
                    let page = addr & !(PAGE_SIZE.load(Ordering::Relaxed) - 1);
                    let zeros = libc::mmap(
                        page as *mut libc::c_void,
                        PAGE_SIZE.load(Ordering::Relaxed),
                        libc::PROT_READ,
                        libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                        -1,
                        0,
                    );
                    if zeros != libc::MAP_FAILED {
                        slot.changed.store(true, Ordering::Release);
                        return;
                    }
                }
            }
        }
        // Not ours: the action before ours, which for a fault takes over as soon as this returns.
        match PREVIOUS.get() {
            Some(previous) => libc::sigaction(signal, previous, std::ptr::null_mut()),
            None => {
                libc::signal(signal, libc::SIG_DFL);
                0
            }
        };
        if (*info).si_code <= 0 {
            libc::raise(signal);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_cut_short_while_mapped_reads_as_zeros_and_is_marked() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data.bin");
        let page = PAGE_SIZE.load(Ordering::Relaxed).max(4096);
        std::fs::write(&path, vec![7u8; 4 * page]).unwrap();
        let file = File::open(&path).unwrap();
        let map = MappedFile::map(&file).unwrap();
        assert_eq!(map[3 * page], 7);
        assert!(!map.changed());
        std::fs::OpenOptions::new().write(true).open(&path).unwrap().set_len(page as u64).unwrap();
        // the first page is still the file's; the last is gone, read as zeros, and the map says so
        assert_eq!(map[10], 7);
        assert_eq!(std::hint::black_box(map[3 * page + 5]), 0);
        assert!(map.changed());
        drop(map);
        // the slot is free again for the next map
        let again = MappedFile::map(&file).unwrap();
        assert!(!again.changed());
    }
}
