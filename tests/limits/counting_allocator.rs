//! A global allocator that counts the bytes in use and their peak, for tests that prove a reader allocates
//! no more than its input justifies. A test binary installs it by including this file as a module
//! (`mod counting_allocator;`); its tests take [`exclusive`] first,
//! because the count is process-wide and tests otherwise run in parallel.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

/// The system allocator, counting the bytes in use and their peak.
struct Counting;

static IN_USE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let now = IN_USE.fetch_add(layout.size(), Ordering::SeqCst) + layout.size();
            PEAK.fetch_max(now, Ordering::SeqCst);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        IN_USE.fetch_sub(layout.size(), Ordering::SeqCst);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            if new_size > layout.size() {
                let now = IN_USE.fetch_add(new_size - layout.size(), Ordering::SeqCst) + new_size - layout.size();
                PEAK.fetch_max(now, Ordering::SeqCst);
            } else {
                IN_USE.fetch_sub(layout.size() - new_size, Ordering::SeqCst);
            }
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Hold this while measuring: no other test of the binary allocates meanwhile.
pub fn exclusive() -> MutexGuard<'static, ()> {
    // A test that failed while holding the lock poisons it; the count is still right.
    ONE_AT_A_TIME.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Bytes allocated at most while `f` runs, beyond what was in use before.
pub fn peak_allocation<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let before = IN_USE.load(Ordering::SeqCst);
    PEAK.store(before, Ordering::SeqCst);
    let out = f();
    (out, PEAK.load(Ordering::SeqCst) - before)
}
