//! Slow, obviously correct references for the unit tests of the FFT-based steps: reproducible random values
//! and a 2-D DFT written from its definition.

use num_complex::Complex64;
use std::f64::consts::TAU;

/// Reproducible values in [−1, 1) (a 64-bit linear congruential generator).
pub fn random(n: usize, seed: u64) -> Vec<f64> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((s >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
        })
        .collect()
}

/// The 2-D DFT of a `rows × cols` row-major array: `Σ x[r][c] exp(sign · 2πi (r kr / rows + c kc / cols))`,
/// unnormalised.
pub(crate) fn dft2(x: &[Complex64], rows: usize, cols: usize, sign: f64) -> Vec<Complex64> {
    let mut out = vec![Complex64::default(); rows * cols];
    for (kk, o) in out.iter_mut().enumerate() {
        let (kr, kc) = (kk / cols, kk % cols);
        *o = x
            .iter()
            .enumerate()
            .map(|(n, v)| {
                let ph = ((n / cols) * kr) as f64 / rows as f64 + ((n % cols) * kc) as f64 / cols as f64;
                v * Complex64::from_polar(1.0, sign * TAU * ph)
            })
            .sum();
    }
    out
}
