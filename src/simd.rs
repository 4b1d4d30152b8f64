//! Hot host loops compiled a second time for AVX2, the version chosen when the program runs.
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
