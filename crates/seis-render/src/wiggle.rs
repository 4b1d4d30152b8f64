//! Wiggle and variable-area displays: each trace a curve swinging sideways from its position with the
//! value, as processors draw small sections for quality control; variable area fills the positive lobes
//! black so that peaks read as solid events.
//!
//! A trace swings half a trace spacing at the clip and is cut at one spacing: below the clip (99 % of the
//! samples by default) two neighbours swinging toward each other at most meet, and the strongest events
//! reach no further than the neighbour's baseline, so that the traces stay apart and every lobe can be
//! told to its trace. The curve is sampled at every pixel row, linearly between samples (a wiggle is a
//! curve, not a set of cells).

use super::canvas::{Canvas, BLACK, WHITE};
use super::{Clip, Quantity};

/// Swing at the clip, in trace spacings.
const SWING_AT_CLIP: f64 = 0.5;
/// Largest swing, in trace spacings.
const MAX_SWING: f64 = 1.0;

/// How far (pixels) a value `v` swings its trace sideways, with `spacing` pixels between traces and `clip`
/// the value that swings [`SWING_AT_CLIP`] spacings.
fn excursion(v: f64, clip: f32, spacing: f64) -> f64 {
    let gain = if clip > 0.0 { SWING_AT_CLIP * spacing / f64::from(clip) } else { 0.0 };
    (v * gain).clamp(-MAX_SWING * spacing, MAX_SWING * spacing)
}

/// `values` (`[rows, cols]`, traces down the columns) as wiggles on `[height, width]` pixels, swinging half
/// a trace spacing at `clip`; with `fill`, positive lobes filled (variable area).
pub(crate) fn draw(
    values: &[f32],
    [rows, cols]: [usize; 2],
    [height, width]: [usize; 2],
    clip: f32,
    fill: bool,
) -> Canvas {
    let mut canvas = Canvas::new(width, height, WHITE);
    let spacing = width as f64 / cols as f64;
    let at = |c: usize, y: usize| -> Option<f64> {
        let pos = ((y as f64 + 0.5) * rows as f64 / height as f64 - 0.5).clamp(0.0, (rows - 1) as f64);
        let (i, frac) = (pos.floor() as usize, pos.fract());
        let (a, b) = (values[i * cols + c], values[(i + 1).min(rows - 1) * cols + c]);
        (a.is_finite() && b.is_finite()).then(|| f64::from(a) + (f64::from(b) - f64::from(a)) * frac)
    };
    for c in 0..cols {
        let centre = (c as f64 + 0.5) * spacing;
        let mut previous: Option<f64> = None;
        for y in 0..height {
            let Some(v) = at(c, y) else {
                previous = None;
                continue;
            };
            let x = centre + excursion(v, clip, spacing);
            if fill && x > centre {
                let (a, b) = (centre.round() as i64, x.round() as i64);
                canvas.fill_rect(a, y as i64, b - a + 1, 1, BLACK);
            }
            // Join this row's point to the last one with a horizontal run, so that the curve has no gaps.
            let from = previous.unwrap_or(x);
            let (a, b) = (from.min(x).round() as i64, from.max(x).round() as i64);
            canvas.fill_rect(a, y as i64, b - a + 1, 1, BLACK);
            previous = Some(x);
        }
    }
    canvas
}

/// The note that says how the swing of the traces was scaled.
pub(crate) fn rule(clip: &Clip, quantity: &Quantity) -> String {
    let scale = clip.rule(quantity);
    let scale = scale.strip_prefix("Colour scale ").unwrap_or(&scale);
    let scale = scale.split(';').next().unwrap_or(scale);
    format!("Wiggles swing half a trace spacing at {scale}; cut at one spacing.")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inked(c: &Canvas, y: usize) -> Vec<usize> {
        (0..c.width).filter(|&x| c.pixel(x, y) != WHITE).collect()
    }

    #[test]
    fn traces_swing_by_half_a_spacing_at_the_clip() {
        // Three constant traces, 20 pixels apart (centres at 10, 30, 50): zero, half the clip, minus the clip.
        let values: Vec<f32> = (0..4).flat_map(|_| [0.0f32, 1.0, -2.0]).collect();
        let c = draw(&values, [4, 3], [40, 60], 2.0, false);
        for y in [0, 17, 39] {
            assert_eq!(inked(&c, y), vec![10, 35, 40], "row {y}");
        }
    }

    /// A section of `cols` traces of `rows` samples: a sparse random reflectivity (each trace its own)
    /// convolved with a 25 Hz Ricker wavelet sampled every 4 ms, as a migrated section looks.
    fn section(rows: usize, cols: usize) -> Vec<f32> {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut uniform = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64
        };
        let ricker = |t: f64| {
            let a = (std::f64::consts::PI * 25.0 * t).powi(2);
            (1.0 - 2.0 * a) * (-a).exp()
        };
        let mut traces = vec![vec![0.0f64; rows]; cols];
        for trace in &mut traces {
            for k in 0..rows {
                if uniform() < 0.1 {
                    let r = 2.0 * uniform() - 1.0;
                    for (j, v) in trace.iter_mut().enumerate() {
                        *v += r * ricker((j as f64 - k as f64) * 0.004);
                    }
                }
            }
        }
        (0..rows).flat_map(|j| traces.iter().map(move |t| t[j] as f32).collect::<Vec<_>>()).collect()
    }

    #[test]
    fn neighbouring_wiggles_of_a_section_at_the_default_clip_rarely_meet() {
        let (rows, cols, spacing) = (400, 60, 8.0);
        let values = section(rows, cols);
        let (clip, _) = crate::clip::symmetric_clip(&values, crate::RenderOptions::default().clip_percentile);
        let e = |j: usize, c: usize| excursion(f64::from(values[j * cols + c]), clip, spacing);
        let mut met = 0;
        for j in 0..rows {
            for c in 0..cols {
                assert!(e(j, c).abs() <= spacing, "row {j}, trace {c}: {} px", e(j, c));
                // Trace c's curve reaches trace c + 1's where it swings right by a spacing more than that one.
                if c + 1 < cols && e(j, c) - e(j, c + 1) >= spacing {
                    met += 1;
                }
            }
        }
        let fraction = met as f64 / (rows * (cols - 1)) as f64;
        assert!(fraction < 0.002, "neighbouring wiggles meet on {:.2} % of the rows", 100.0 * fraction);
        // A typical sample (the median |value|) swings a small part of the spacing.
        let mut swings: Vec<f64> = (0..rows * cols).map(|i| e(i / cols, i % cols).abs()).collect();
        swings.sort_by(f64::total_cmp);
        assert!(swings[swings.len() / 2] < 0.25 * spacing, "median swing {} px", swings[swings.len() / 2]);
    }

    #[test]
    fn variable_area_fills_the_positive_lobes_only() {
        let values = [1.0f32, -1.0];
        let c = draw(&values, [2, 1], [20, 20], 1.0, true);
        // Positive half: filled from the centre (10) out to one spacing; negative half: the curve only.
        assert!(inked(&c, 2).len() >= 9, "{:?}", inked(&c, 2));
        assert!(inked(&c, 18).len() <= 2, "{:?}", inked(&c, 18));
    }
}
