//! The per-element arithmetic of the migrations, as small pure functions.
//!
//! Engines apply these to every (ω, kx, ky) or (ω, x, y) element of the spectrum layout; a GPU kernel
//! repeats them formula for formula, so they take plain numbers and hide no state. The constants the kernels
//! use are handed to them from here (see `seis-cuda prelude.rs`), never written twice. Conventions (see
//! `docs/imaging.md`):
//! - forward transforms use `exp(−i(ωt + kx·x + ky·y))`, so continuing the recorded field *down* by `Δz`
//!   multiplies it by `exp(+i kz Δz)`;
//! - velocities passed in are true medium velocities `v`; the exploding-reflector velocity `v / 2` is applied
//!   here, inside the formulas, as the slowness `2 / v`;
//! - angles are in radians.

use num_complex::Complex64;

use super::StoltInterpolation;

/// Width of the cosine roll-off of the dip limit, below the limit itself.
pub const DIP_ROLLOFF_DEG: f64 = 5.0;

/// Angular frequency (rad/s) of bin `bin` of an `n`-point time FFT of samples `dt` seconds apart.
pub(crate) fn angular_frequency(bin: usize, n: usize, dt: f64) -> f64 {
    std::f64::consts::TAU * bin as f64 / (n as f64 * dt)
}

/// Wavenumber (rad/m) of index `i` of an `n`-point FFT along an axis sampled every `d` metres: indices past
/// the middle are the negative wavenumbers.
pub fn wavenumber(i: usize, n: usize, d: f64) -> f64 {
    let m = if i <= n / 2 { i as f64 } else { i as f64 - n as f64 };
    std::f64::consts::TAU * m / (n as f64 * d)
}

/// Weight of time-frequency bin `bin` (of an `n`-point FFT) in the imaging sum over ω ≥ 0 of a real
/// signal: 2 for the bins that stand for a ± pair, 1 for DC and (for even `n`) Nyquist.
pub fn imaging_weight(bin: usize, n: usize) -> f64 {
    if bin == 0 || 2 * bin == n {
        1.0
    } else {
        2.0
    }
}

/// `kz²` for the exploding-reflector medium: `(2ω / v)² − |k|²` (positive: propagating).
pub fn kz_squared(omega: f64, k2: f64, v: f64) -> f64 {
    let s = 2.0 * omega / v;
    s * s - k2
}

/// Waves with `kz² ≤ GRAZING · (2ω/v)²` (within 0.002° of horizontal) count as evanescent.
///
/// On a regular (ω, k) grid a wave can sit exactly at 90° (`|k| = 2ω/v`), where `kz²` is zero up to the
/// rounding of its last bit: whether it propagates (unchanged, so it adds the same value at every depth) or
/// is dropped would then be decided by the order of floating-point operations, and two correct engines
/// (CPU and GPU) would disagree. The margin is far above rounding and far below any dip a survey records.
pub const GRAZING: f64 = 1e-9;

/// The factor that continues a plane wave down by `dz` metres of velocity `v`: `exp(i kz dz)`, or 0 for an
/// evanescent wave (see [`GRAZING`]), which is dropped rather than left to grow or decay.
pub fn phase_factor(omega: f64, k2: f64, v: f64, dz: f64) -> Complex64 {
    let s = 2.0 * omega / v;
    let a = s * s - k2;
    if a <= GRAZING * s * s {
        return Complex64::new(0.0, 0.0);
    }
    Complex64::from_polar(1.0, a.sqrt() * dz)
}

/// Weight of a plane wave in the dip-limited image: 1 while its propagation angle from the vertical
/// `θ = asin(|k| v / (2ω))` is below `max − roll-off`, a half cosine down to 0 at `max`, 0 beyond. The
/// roll-off is [`DIP_ROLLOFF_DEG`] (or `max` itself when the limit is smaller).
pub(crate) fn dip_weight(omega: f64, k2: f64, v: f64, max: f64) -> f64 {
    if omega <= 0.0 {
        return 0.0;
    }
    let sin = k2.sqrt() * v / (2.0 * omega);
    if sin >= 1.0 {
        return 0.0;
    }
    let theta = sin.asin();
    let rolloff = DIP_ROLLOFF_DEG.to_radians().min(max);
    let start = max - rolloff;
    if theta <= start {
        1.0
    } else if theta >= max {
        0.0
    } else {
        0.5 * (1.0 + (std::f64::consts::PI * (theta - start) / rolloff).cos())
    }
}

/// The split-step thin-lens factor `exp(i ω (s − s0) dz)`, given `lens = (s − s0) dz` in exploding-reflector
/// slowness (`2 / v`, s/m) times metres.
pub(crate) fn thin_lens(omega: f64, lens: f64) -> Complex64 {
    Complex64::from_polar(1.0, omega * lens)
}

/// Stolt: the frequency that maps to vertical wavenumber `kz` at lateral wavenumber `|k|²`:
/// `ω = (v / 2) sqrt(kz² + |k|²)`.
pub(crate) fn stolt_source_frequency(kz: f64, k2: f64, v: f64) -> f64 {
    0.5 * v * (kz * kz + k2).sqrt()
}

/// Stolt: the Jacobian `dω/dkz` divided by `v / 2`: `kz / sqrt(kz² + |k|²)` (the cosine of the propagation
/// angle; 0 at `kz = 0`).
pub(crate) fn stolt_obliquity(kz: f64, k2: f64) -> f64 {
    let r = (kz * kz + k2).sqrt();
    if r == 0.0 {
        0.0
    } else {
        kz / r
    }
}

/// Stolt's remap interpolates from this many frequency samples past the band's last or before its first bin.
pub const STOLT_REACH: f64 = 4.0;

/// `(cos, sin)` of `π n / 4` for the distances `n = 3 − j` of the eight sinc taps `j` (see
/// [`interpolation_taps`]).
pub const SINC_QUARTER_TURNS: [(f64, f64); 8] = {
    use std::f64::consts::FRAC_1_SQRT_2 as H;
    [(-H, H), (0.0, 1.0), (H, H), (1.0, 0.0), (H, -H), (0.0, -1.0), (-H, -H), (-1.0, 0.0)]
};

/// Interpolation taps for a value at fractional position `u` of a regularly sampled sequence: the first
/// index, the weights, and how many of them are used (2 for linear, 8 for sinc).
///
/// The sinc kernel is `sinc(x) · (1 + cos(π x / 4)) / 2` over the eight nearest samples (a Hann-windowed
/// sinc), normalised so the weights add up to one.
pub fn interpolation_taps(u: f64, kind: StoltInterpolation) -> (isize, [f64; 8], usize) {
    let base = u.floor();
    let frac = u - base;
    let mut w = [0.0; 8];
    match kind {
        StoltInterpolation::Linear => {
            w[0] = 1.0 - frac;
            w[1] = frac;
            (base as isize, w, 2)
        }
        StoltInterpolation::Sinc => {
            use std::f64::consts::PI;
            // Tap j sits at distance x = frac + n from u, n = 3 − j. Both sines follow from the fraction alone:
            // sin(π x) = (−1)ⁿ sin(π frac), and cos(π x / 4) by the angle-sum rule with cos, sin(π n / 4).
            let first = base as isize - 3;
            let sin_frac = (PI * frac).sin();
            let (sin_q, cos_q) = (PI * frac / 4.0).sin_cos();
            let mut sum = 0.0;
            for (j, wj) in w.iter_mut().enumerate() {
                let x = frac + 3.0 - j as f64;
                let sign = if j % 2 == 0 { -1.0 } else { 1.0 }; // (−1)ⁿ with n = 3 − j
                let sinc = if x == 0.0 { 1.0 } else { sign * sin_frac / (PI * x) };
                let (cos_n, sin_n) = SINC_QUARTER_TURNS[j];
                *wj = sinc * 0.5 * (1.0 + cos_q * cos_n - sin_q * sin_n);
                sum += *wj;
            }
            w.iter_mut().for_each(|wj| *wj /= sum);
            (first, w, 8)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::f64::consts::PI;

    #[test]
    fn grids() {
        assert!((angular_frequency(5, 100, 0.004) - 2.0 * PI * 12.5).abs() < 1e-12);
        assert_eq!(wavenumber(0, 8, 10.0), 0.0);
        assert!((wavenumber(4, 8, 10.0) - PI / 10.0).abs() < 1e-15);
        assert!((wavenumber(5, 8, 10.0) + 3.0 * 2.0 * PI / 80.0).abs() < 1e-15);
        assert!((wavenumber(2, 5, 1.0) - 2.0 * 2.0 * PI / 5.0).abs() < 1e-15);
        assert!((wavenumber(3, 5, 1.0) + 2.0 * 2.0 * PI / 5.0).abs() < 1e-15);
        assert_eq!((imaging_weight(0, 8), imaging_weight(3, 8), imaging_weight(4, 8)), (1.0, 2.0, 1.0));
        assert_eq!(imaging_weight(2, 5), 2.0);
    }

    #[test]
    fn waves_at_ninety_degrees_are_dropped_whatever_the_rounding() {
        // |k| = 2ω/v to within a few ulps either way: propagating or not must not depend on those ulps.
        let (omega, v): (f64, f64) = (157.07963267948966, 2000.0);
        let k2 = (2.0 * omega / v).powi(2);
        for k2 in [k2 * (1.0 - 4.0 * f64::EPSILON), k2, k2 * (1.0 + 4.0 * f64::EPSILON)] {
            assert_eq!(phase_factor(omega, k2, v, 10.0), Complex64::new(0.0, 0.0));
        }
        // 89.9° still propagates
        let k2 = (2.0 * omega / v * 89.9f64.to_radians().sin()).powi(2);
        assert!((phase_factor(omega, k2, v, 10.0).norm() - 1.0).abs() < 1e-12);
    }

    #[test]
    fn phase_factor_by_hand() {
        // ω = 100 rad/s, v = 2000 m/s: 2ω/v = 0.1; |k| = 0.06 → kz = 0.08
        let f = phase_factor(100.0, 0.0036, 2000.0, 10.0);
        assert!((f - Complex64::from_polar(1.0, 0.8)).norm() < 1e-12);
        assert_eq!(phase_factor(100.0, 0.011, 2000.0, 10.0), Complex64::new(0.0, 0.0));
        assert_eq!(phase_factor(0.0, 0.0, 2000.0, 10.0), Complex64::new(0.0, 0.0));
    }

    #[test]
    fn dip_weight_rolls_off_below_the_limit() {
        let (omega, v) = (100.0, 2000.0); // |k| = 0.1 sin θ
        let at = |deg: f64| dip_weight(omega, (0.1 * deg.to_radians().sin()).powi(2), v, 40f64.to_radians());
        assert_eq!(at(0.0), 1.0);
        assert_eq!(at(34.9), 1.0);
        assert!((at(37.5) - 0.5).abs() < 1e-9);
        assert!(at(39.9) < 0.01);
        assert_eq!(at(40.1), 0.0);
        assert_eq!(at(80.0), 0.0);
    }

    #[test]
    fn stolt_map_inverts_the_dispersion_relation() {
        let (v, k2) = (2400.0, 0.0004);
        let omega = 120.0;
        let kz = kz_squared(omega, k2, v).sqrt();
        assert!((stolt_source_frequency(kz, k2, v) - omega).abs() < 1e-12);
        // dω/dkz by finite differences equals (v / 2) · obliquity
        let h = 1e-6;
        let d = (stolt_source_frequency(kz + h, k2, v) - stolt_source_frequency(kz - h, k2, v)) / (2.0 * h);
        assert!((d - 0.5 * v * stolt_obliquity(kz, k2)).abs() < 1e-6);
        assert_eq!(stolt_obliquity(0.0, 0.0), 0.0);
    }

    /// The fast sinc weights equal the textbook formula `sinc(x) (1 + cos(π x / 4)) / 2`, normalised.
    #[test]
    fn sinc_weights_follow_the_formula() {
        for u in [0.0, 2.3, 7.5, 10.99, -1.25] {
            let (first, w, _) = interpolation_taps(u, StoltInterpolation::Sinc);
            let direct: Vec<f64> = (0..8)
                .map(|j| {
                    let x = u - (first + j) as f64;
                    let sinc = if x == 0.0 { 1.0 } else { (PI * x).sin() / (PI * x) };
                    sinc * 0.5 * (1.0 + (PI * x / 4.0).cos())
                })
                .collect();
            let sum: f64 = direct.iter().sum();
            for (a, b) in w.iter().zip(&direct) {
                assert!((a - b / sum).abs() < 1e-12, "{u}: {a} vs {}", b / sum);
            }
        }
    }

    #[test]
    fn interpolation_is_exact_on_samples_and_for_lines() {
        for kind in [StoltInterpolation::Linear, StoltInterpolation::Sinc] {
            let f = |i: isize| 3.0 + 0.5 * i as f64;
            for u in [4.0, 4.25, 4.5, 7.9] {
                let (first, w, n) = interpolation_taps(u, kind);
                let value: f64 = (0..n).map(|j| w[j] * f(first + j as isize)).sum();
                let tol = if kind == StoltInterpolation::Linear || u.fract() == 0.0 { 1e-12 } else { 0.02 };
                assert!((value - f(0) - 0.5 * u).abs() < tol, "{kind:?} {u}: {value}");
            }
        }
        let (first, w, _) = interpolation_taps(6.0, StoltInterpolation::Sinc);
        assert_eq!(first, 3);
        assert!((w[3] - 1.0).abs() < 1e-12 && w.iter().enumerate().all(|(j, x)| j == 3 || x.abs() < 1e-12));
    }
}
