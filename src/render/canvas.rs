//! An RGB raster to draw on: filled rectangles, copies of other rasters, and text in the built-in font.

use rayon::prelude::*;

use super::font::{self, ADVANCE, GLYPH_HEIGHT, GLYPH_WIDTH};

pub(crate) type Rgb = [u8; 3];

pub(crate) const WHITE: Rgb = [255, 255, 255];
pub(crate) const BLACK: Rgb = [0, 0, 0];

/// Which way text runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Direction {
    /// Left to right.
    Across,
    /// Bottom to top, letters turned a quarter anticlockwise (the usual title of a vertical axis).
    Up,
}

/// Row-major 8-bit RGB pixels, top row first.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Canvas {
    pub width: usize,
    pub height: usize,
    pub rgb: Vec<u8>,
}

impl Canvas {
    pub fn new(width: usize, height: usize, fill: Rgb) -> Self {
        Canvas { width, height, rgb: fill.repeat(width * height) }
    }

    /// A canvas whose pixel `i` (row-major) is `colour(values[i])`.
    pub fn paint(width: usize, height: usize, values: &[f32], colour: impl Fn(f32) -> Rgb + Sync) -> Self {
        assert_eq!(values.len(), width * height, "one value per pixel");
        let mut rgb = vec![0u8; width * height * 3];
        rgb.par_chunks_exact_mut(3).zip(values.par_iter()).for_each(|(px, &v)| px.copy_from_slice(&colour(v)));
        Canvas { width, height, rgb }
    }

    /// Fill `w × h` pixels from `(x, y)`; whatever falls outside the canvas is dropped.
    pub fn fill_rect(&mut self, x: i64, y: i64, w: i64, h: i64, colour: Rgb) {
        let x0 = x.clamp(0, self.width as i64) as usize;
        let x1 = (x + w).clamp(0, self.width as i64) as usize;
        let y0 = y.clamp(0, self.height as i64) as usize;
        let y1 = (y + h).clamp(0, self.height as i64) as usize;
        for row in y0..y1 {
            let line = &mut self.rgb[(row * self.width + x0) * 3..(row * self.width + x1) * 3];
            line.chunks_exact_mut(3).for_each(|px| px.copy_from_slice(&colour));
        }
    }

    /// Copy `src` with its top-left corner at `(x, y)`; it must fit.
    pub fn blit(&mut self, src: &Canvas, x: usize, y: usize) {
        assert!(x + src.width <= self.width && y + src.height <= self.height, "blit out of bounds");
        for row in 0..src.height {
            let dst = ((y + row) * self.width + x) * 3;
            self.rgb[dst..dst + src.width * 3]
                .copy_from_slice(&src.rgb[row * src.width * 3..(row + 1) * src.width * 3]);
        }
    }

    /// Draw `text` with each font pixel as a `scale × scale` block. `(x, y)` is the top-left corner of the
    /// box [`text_extent`] gives (for [`Direction::Up`] that box is turned: `across` wide, `along` high).
    pub fn text(&mut self, x: i64, y: i64, text: &str, scale: usize, colour: Rgb, direction: Direction) {
        let s = scale as i64;
        let along = text_extent(text, scale).0 as i64;
        for (k, c) in text.chars().enumerate() {
            for (row, bits) in font::glyph(c).iter().enumerate() {
                for col in 0..GLYPH_WIDTH {
                    if bits & (1 << (GLYPH_WIDTH - 1 - col)) == 0 {
                        continue;
                    }
                    // Position of this font pixel in the unturned text box, in font pixels.
                    let (u, v) = ((k * ADVANCE + col) as i64, row as i64);
                    match direction {
                        Direction::Across => self.fill_rect(x + u * s, y + v * s, s, s, colour),
                        Direction::Up => self.fill_rect(x + v * s, y + along - (u + 1) * s, s, s, colour),
                    }
                }
            }
        }
    }
}

/// Size of the box `text` occupies at `scale`: (along the writing direction, across it).
pub(crate) fn text_extent(text: &str, scale: usize) -> (usize, usize) {
    let n = text.chars().count();
    ((n * ADVANCE).saturating_sub(ADVANCE - GLYPH_WIDTH) * scale, GLYPH_HEIGHT * scale)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pixel(c: &Canvas, x: usize, y: usize) -> Rgb {
        let i = (y * c.width + x) * 3;
        [c.rgb[i], c.rgb[i + 1], c.rgb[i + 2]]
    }

    /// The inked pixels of a canvas, as (x, y).
    fn ink(c: &Canvas) -> Vec<(usize, usize)> {
        (0..c.height)
            .flat_map(|y| (0..c.width).map(move |x| (x, y)))
            .filter(|&(x, y)| pixel(c, x, y) != WHITE)
            .collect()
    }

    #[test]
    fn each_glyph_draws_inside_its_scaled_cell() {
        let scale = 3;
        for code in b'!'..=b'~' {
            let c = char::from(code);
            let mut canvas = Canvas::new(40, 50, WHITE);
            canvas.text(7, 5, &c.to_string(), scale, BLACK, Direction::Across);
            let inked = ink(&canvas);
            let lit_bits: u32 = font::glyph(c).iter().map(|r| r.count_ones()).sum();
            assert_eq!(inked.len() as u32, lit_bits * (scale * scale) as u32, "{c:?}");
            for (x, y) in inked {
                assert!(
                    (7..7 + GLYPH_WIDTH * scale).contains(&x) && (5..5 + GLYPH_HEIGHT * scale).contains(&y),
                    "{c:?}"
                );
            }
        }
    }

    #[test]
    fn upward_text_is_the_across_text_turned_anticlockwise() {
        let text = "depth (m)";
        let (along, across) = text_extent(text, 2);
        let mut flat = Canvas::new(along, across, WHITE);
        flat.text(0, 0, text, 2, BLACK, Direction::Across);
        let mut up = Canvas::new(across, along, WHITE);
        up.text(0, 0, text, 2, BLACK, Direction::Up);
        for y in 0..across {
            for x in 0..along {
                // Turning anticlockwise sends (x, y) to (y, along - 1 - x).
                assert_eq!(pixel(&flat, x, y), pixel(&up, y, along - 1 - x), "({x}, {y})");
            }
        }
        assert!(!ink(&flat).is_empty());
    }

    #[test]
    fn text_extent_has_no_trailing_gap() {
        assert_eq!(text_extent("", 2), (0, 18));
        assert_eq!(text_extent("a", 1), (5, 9));
        assert_eq!(text_extent("100", 2), (2 * (3 * 6 - 1), 18));
    }

    #[test]
    fn rectangles_are_clipped_to_the_canvas() {
        let mut c = Canvas::new(4, 3, WHITE);
        c.fill_rect(-2, 1, 4, 10, BLACK);
        assert_eq!(ink(&c), vec![(0, 1), (1, 1), (0, 2), (1, 2)]);
        c.fill_rect(10, 10, 5, 5, BLACK);
        assert_eq!(ink(&c).len(), 4);
    }
}
