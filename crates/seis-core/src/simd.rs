//! What the baseline x86-64 build does not do on its own: hot host loops compiled a second time for AVX2
//! (the version chosen when the program runs), and stores that go around the caches.
//!
//! The binary targets the baseline x86-64 (SSE2) so that it runs on any 64-bit x86 machine. There the byte
//! swap of big-endian samples has no byte shuffle and takes about a dozen instructions per 16 bytes; with
//! AVX2 it is one shuffle per 32 bytes. On the 16-core H200 host, decoding a cached SEG-Y file into the
//! staging buffers was bound by that arithmetic as much as by memory (see docs/benchmarks.md).
//!
//! The pattern, used by `SampleFormat::decode` and `TraceConditioner::apply`: the loop lives in a
//! `#[inline(always)]` body; an `unsafe` twin marked `#[target_feature(enable = "avx2")]` calls the body, so
//! the body is compiled there with AVX2; the public function calls the twin when [`has_avx2`] says so.
//! Both versions compute the same values: enabling instructions changes how a loop is vectorised, not its
//! arithmetic (Rust forms no fused multiply-adds on its own). Tests compare the two bit for bit.

/// Whether this CPU runs AVX2 code. After the first call this is a load of a cached flag, cheap enough to
/// ask once per trace.
#[inline]
pub fn has_avx2() -> bool {
    #[cfg(target_arch = "x86_64")]
    return std::arch::is_x86_feature_detected!("avx2");
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// Copy `src` into `dst` (of the same length) with streaming (non-temporal) stores: they fill whole cache
/// lines in write-combining buffers and send them to memory, without first reading each line as an
/// ordinary store does, and without displacing what the caches hold. For buffers the CPU does not read
/// again soon (see [`crate::volume::WriteMode::Streaming`]). Call [`stream_fence`] after the last copy of
/// a batch, before anything else (another thread, a device copy) may read `dst`.
pub fn stream_copy(src: &[f32], dst: &mut [f32]) {
    assert_eq!(src.len(), dst.len(), "stream_copy: source and destination sizes disagree");
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_loadu_ps, _mm_stream_ps};
        // Ordinary stores up to the first 16-byte boundary of `dst` (a streaming store needs one) and after
        // the last whole group of four.
        let n = dst.len();
        let head = dst.as_ptr().align_offset(16).min(n);
        let end = head + (n - head) / 4 * 4;
        dst[..head].copy_from_slice(&src[..head]);
        for i in (head..end).step_by(4) {
            // SAFETY: i + 4 <= n for both slices; dst + i is 16-byte aligned; SSE is part of x86-64.
            unsafe { _mm_stream_ps(dst.as_mut_ptr().add(i), _mm_loadu_ps(src.as_ptr().add(i))) };
        }
        dst[end..].copy_from_slice(&src[end..]);
    }
    #[cfg(not(target_arch = "x86_64"))]
    dst.copy_from_slice(src);
}

/// Order this thread's streaming stores before its later stores (and so before any release that hands the
/// buffer on): they are weakly ordered otherwise.
pub fn stream_fence() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SSE is part of x86-64; a fence has no other effect.
    unsafe {
        std::arch::x86_64::_mm_sfence()
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_copy_copies_every_value_at_any_alignment_and_length() {
        let src: Vec<f32> = (0..70).map(|i| i as f32 * 0.5 - 3.0).collect();
        for offset in 0..4 {
            for len in [0, 1, 3, 4, 5, 17, 64, 66] {
                let mut backing = vec![f32::NAN; len + offset];
                stream_copy(&src[..len], &mut backing[offset..]);
                stream_fence();
                assert_eq!(&backing[offset..], &src[..len], "offset {offset}, length {len}");
                assert!(backing[..offset].iter().all(|v| v.is_nan()), "nothing before the destination");
            }
        }
    }
}
