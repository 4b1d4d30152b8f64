//! Wiggle and variable-area displays: each trace a curve swinging sideways from its position with the
//! value, as processors draw small sections for quality control; variable area fills the positive lobes
//! black so that peaks read as solid events.
//!
//! A trace swings one trace spacing at the clip and is cut at one and a half spacings, so that strong
//! events overlap their neighbours a little but never cross the section. The curve is sampled at every
//! pixel row, linearly between samples (a wiggle is a curve, not a set of cells).

use super::canvas::{Canvas, BLACK, WHITE};
use super::{Clip, Quantity};

/// Largest swing, in trace spacings.
const MAX_SWING: f64 = 1.5;

/// `values` (`[rows, cols]`, traces down the columns) as wiggles on `[height, width]` pixels, swinging one
/// trace spacing at `clip`; with `fill`, positive lobes filled (variable area).
pub(crate) fn draw(
    values: &[f32],
    [rows, cols]: [usize; 2],
    [height, width]: [usize; 2],
    clip: f32,
    fill: bool,
) -> Canvas {
    let mut canvas = Canvas::new(width, height, WHITE);
    let spacing = width as f64 / cols as f64;
    let gain = if clip > 0.0 { spacing / f64::from(clip) } else { 0.0 };
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
            let x = centre + (v * gain).clamp(-MAX_SWING * spacing, MAX_SWING * spacing);
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
    format!("Wiggles swing one trace spacing at {scale}; cut at {MAX_SWING} spacings.")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inked(c: &Canvas, y: usize) -> Vec<usize> {
        (0..c.width).filter(|&x| c.pixel(x, y) != WHITE).collect()
    }

    #[test]
    fn traces_swing_by_one_spacing_at_the_clip() {
        // Three constant traces, 20 pixels apart (centres at 10, 30, 50): zero, half the clip, minus the clip.
        let values: Vec<f32> = (0..4).flat_map(|_| [0.0f32, 1.0, -2.0]).collect();
        let c = draw(&values, [4, 3], [40, 60], 2.0, false);
        for y in [0, 17, 39] {
            assert_eq!(inked(&c, y), vec![10, 30, 40], "row {y}");
        }
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
