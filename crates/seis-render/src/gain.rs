//! Display gain: automatic gain control (AGC) down the vertical axis of a section, so that weak deep
//! reflections and strong shallow ones show at one contrast. It changes the picture only: the sub-volume
//! files of a product keep the migrated amplitudes.
//!
//! Each sample is divided by the RMS of the finite samples of its trace within half a window above and
//! below it (fewer at the ends of the trace). A window with no energy leaves its samples at zero.

use super::PlotAxis;

/// `data` (`rows × cols`, row-major, traces down the columns) with AGC of `window` (in the unit of `rows`)
/// applied to every column.
pub(crate) fn agc(data: &[f32], rows: &PlotAxis, cols: usize, window: f64) -> Vec<f32> {
    let n = rows.len;
    let half = ((window / rows.step.abs()) / 2.0).round().max(0.0) as usize;
    let mut out = vec![0.0f32; data.len()];
    // Running sums of the squares and counts of finite samples, one trace at a time.
    let mut energy = vec![0.0f64; n + 1];
    let mut count = vec![0usize; n + 1];
    for c in 0..cols {
        for r in 0..n {
            let v = data[r * cols + c];
            let finite = v.is_finite();
            energy[r + 1] = energy[r] + if finite { f64::from(v) * f64::from(v) } else { 0.0 };
            count[r + 1] = count[r] + usize::from(finite);
        }
        for r in 0..n {
            let (a, b) = (r.saturating_sub(half), (r + half + 1).min(n));
            let k = count[b] - count[a];
            let rms = if k > 0 { ((energy[b] - energy[a]) / k as f64).sqrt() } else { 0.0 };
            let v = data[r * cols + c];
            out[r * cols + c] = if !v.is_finite() {
                v
            } else if rms > 0.0 {
                (f64::from(v) / rms) as f32
            } else {
                0.0
            };
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn depth(n: usize) -> PlotAxis {
        PlotAxis { name: "depth".into(), unit: "m".into(), origin: 0.0, step: 5.0, len: n, spacing_m: Some(5.0) }
    }

    #[test]
    fn a_decaying_trace_comes_out_at_one_level() {
        // A ±1 square wave of period 4 samples decaying a hundredfold over the trace, on two traces.
        let n = 400;
        let data: Vec<f32> = (0..n)
            .flat_map(|r| {
                let v = (if (r / 2) % 2 == 0 { 1.0 } else { -1.0 }) * 100f32.powf(-(r as f32) / n as f32);
                [v, 2.0 * v]
            })
            .collect();
        let out = agc(&data, &depth(n), 2, 100.0);
        for r in 20..n - 20 {
            for c in 0..2 {
                let v = out[r * 2 + c].abs();
                assert!((v - 1.0).abs() < 0.2, "row {r}, trace {c}: {v}");
            }
        }
        // The sign is kept.
        assert!(out[0] > 0.0 && out[2 * 2] < 0.0);
    }

    #[test]
    fn gaps_and_silence_stay_as_they_are() {
        let mut data = vec![0.0f32; 50];
        data[10] = f32::NAN;
        data[30] = 3.0;
        let out = agc(&data, &depth(50), 1, 20.0);
        assert!(out[10].is_nan());
        assert_eq!(out[0], 0.0);
        // The lone spike over a window of 5 samples: RMS 3/√5.
        assert!((out[30] - 5f32.sqrt()).abs() < 1e-5, "{}", out[30]);
    }
}
