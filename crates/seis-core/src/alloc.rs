//! Memory a run asks for by size: a size that comes from a file or a request must not abort the process
//! when it is too large, so every large buffer is taken through [`try_vec`] or [`try_host_vec`].

use std::path::Path;

use crate::error::{Error, Result};

/// `n` bytes for a person: "1.60 GB", "16.0 MB", "912 bytes".
pub fn human_bytes(n: u64) -> String {
    match n {
        n if n >= 1_000_000_000 => format!("{:.2} GB", n as f64 / 1e9),
        n if n >= 1_000_000 => format!("{:.1} MB", n as f64 / 1e6),
        n if n >= 10_000 => format!("{:.1} kB", n as f64 / 1e3),
        n => format!("{n} bytes"),
    }
}

/// `n` zeros, or an error naming `what` they were for and `path` when the memory cannot be had: a size
/// that comes from a file or a request must not abort the process when it is too large.
///
/// The zeros are the allocator's zeroed pages, not written here: the threads that fill a buffer of
/// gigabytes then fault its pages in side by side, where a fill with zeros first did it on one core (a
/// quarter of the time to build a 2048 × 2048-trace velocity model on two cores).
pub fn try_vec<T: ZeroIsValid>(n: usize, path: &Path, what: &str) -> Result<Vec<T>> {
    zeroed(n).ok_or_else(|| {
        let message = format!("cannot allocate {} for {what}", human_bytes(bytes_of::<T>(n)));
        Error::io(path, std::io::Error::new(std::io::ErrorKind::OutOfMemory, message))
    })
}

/// `n` zeros for `what` a run computes (the image, the spectrum, a velocity scan's copy), or an error that
/// says so when the memory cannot be had, as [`try_vec`] for what no file sizes.
pub fn try_host_vec<T: ZeroIsValid>(n: usize, what: &str) -> Result<Vec<T>> {
    zeroed(n).ok_or_else(|| {
        Error::Backend(format!(
            "cannot allocate {} of host memory for {what}: the machine's available memory, the process's \
             memory limits (ulimit -v, a control group) or the addresses left do not hold it",
            human_bytes(bytes_of::<T>(n))
        ))
    })
}

fn bytes_of<T>(n: usize) -> u64 {
    (n as u64).saturating_mul(std::mem::size_of::<T>() as u64)
}

/// `n` zeros from the allocator's zeroed pages, or `None` when they cannot be had.
fn zeroed<T: ZeroIsValid>(n: usize) -> Option<Vec<T>> {
    if n == 0 {
        return Some(Vec::new());
    }
    let layout = std::alloc::Layout::array::<T>(n).ok()?;
    // SAFETY: the layout's size is not zero (every `ZeroIsValid` type has a size).
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) }.cast::<T>();
    if ptr.is_null() {
        return None;
    }
    // SAFETY: allocated by the global allocator with the layout of `n` values of T, which a Vec of capacity
    // `n` frees with; all bits zero is a valid T (the trait's promise).
    Some(unsafe { Vec::from_raw_parts(ptr, n, n) })
}

/// Types of a nonzero size whose value of all bits zero is valid (and zero): what [`try_vec`] may hand out
/// as allocated.
///
/// # Safety
/// An implementation promises that the type has a nonzero size and that all bits zero is a valid value.
pub unsafe trait ZeroIsValid {}
// SAFETY: floats and pairs of floats (`Complex` is `#[repr(C)]`): all bits zero is 0.0.
unsafe impl ZeroIsValid for f32 {}
// SAFETY: as above.
unsafe impl ZeroIsValid for f64 {}
// SAFETY: as above.
unsafe impl ZeroIsValid for num_complex::Complex32 {}
// SAFETY: as above.
unsafe impl ZeroIsValid for num_complex::Complex64 {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_allocation_too_large_is_an_error() {
        let e = try_vec::<f32>(usize::MAX / 8, Path::new("big.sgy"), "one inline").unwrap_err().to_string();
        assert!(e.starts_with("big.sgy: cannot allocate") && e.contains("for one inline"), "{e}");
        assert_eq!(try_vec::<f32>(3, Path::new("x"), "y").unwrap(), vec![0.0; 3]);
    }
}
