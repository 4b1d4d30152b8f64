//! An RGB raster to draw on: filled rectangles, lines, copies of other rasters, and anti-aliased text.

use rayon::prelude::*;

use super::text::{self, Label, COVERAGE_LEVELS};

pub(crate) type Rgb = [u8; 3];

pub(crate) const WHITE: Rgb = [255, 255, 255];
pub(crate) const BLACK: Rgb = [0, 0, 0];
/// Secondary text: notes and the provenance footer.
pub(crate) const GREY: Rgb = [80, 80, 80];

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

    #[cfg(test)]
    pub fn pixel(&self, x: usize, y: usize) -> Rgb {
        let i = (y * self.width + x) * 3;
        [self.rgb[i], self.rgb[i + 1], self.rgb[i + 2]]
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

    /// Mix `colour` into pixel `(x, y)` by `level` of `COVERAGE_LEVELS - 1`; outside the canvas, nothing.
    fn blend(&mut self, x: i64, y: i64, colour: Rgb, level: u8) {
        if level == 0 || x < 0 || y < 0 || x >= self.width as i64 || y >= self.height as i64 {
            return;
        }
        let i = (y as usize * self.width + x as usize) * 3;
        let top = u32::from(COVERAGE_LEVELS - 1);
        let a = u32::from(level.min(COVERAGE_LEVELS - 1));
        for (px, c) in self.rgb[i..i + 3].iter_mut().zip(colour) {
            let under = u32::from(*px);
            *px = ((under * (top - a) + u32::from(c) * a + top / 2) / top) as u8;
        }
    }

    /// A straight line `width` pixels thick from `(x0, y0)` to `(x1, y1)` (pixel centres), drawn as a run
    /// of square dots: for arrows and scale bars, where a pixel of ragged edge does not matter.
    pub fn line(&mut self, (x0, y0): (f64, f64), (x1, y1): (f64, f64), width: usize, colour: Rgb) {
        let steps = (x1 - x0).abs().max((y1 - y0).abs()).ceil().max(1.0) as usize;
        let half = width as f64 / 2.0;
        for s in 0..=steps {
            let t = s as f64 / steps as f64;
            let (x, y) = (x0 + (x1 - x0) * t, y0 + (y1 - y0) * t);
            self.fill_rect(
                (x - half + 0.5).floor() as i64,
                (y - half + 0.5).floor() as i64,
                width as i64,
                width as i64,
                colour,
            );
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

    /// Draw a rasterised label with its box's top-left corner at `(x, y)` (for [`Direction::Up`] the box is
    /// turned: `label.height` wide, `label.width` high).
    pub fn label(&mut self, x: i64, y: i64, label: &Label, colour: Rgb, direction: Direction) {
        for v in 0..label.height {
            for u in 0..label.width {
                let level = label.coverage[v * label.width + u];
                match direction {
                    Direction::Across => self.blend(x + u as i64, y + v as i64, colour, level),
                    Direction::Up => self.blend(x + v as i64, y + (label.width - 1 - u) as i64, colour, level),
                }
            }
        }
    }

    /// Draw `text` at `size` pixels with its box's top-left corner at `(x, y)`; see [`Canvas::label`].
    pub fn text(&mut self, x: i64, y: i64, text: &str, size: f32, colour: Rgb, direction: Direction) {
        self.label(x, y, &text::rasterise(text, size), colour, direction);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The inked pixels of a canvas, as (x, y).
    fn ink(c: &Canvas) -> Vec<(usize, usize)> {
        (0..c.height).flat_map(|y| (0..c.width).map(move |x| (x, y))).filter(|&(x, y)| c.pixel(x, y) != WHITE).collect()
    }

    #[test]
    fn text_is_drawn_inside_its_box_with_grey_edges() {
        let size = 20.0;
        let label = text::rasterise("Ag°", size);
        let mut canvas = Canvas::new(label.width + 20, label.height + 20, WHITE);
        canvas.label(10, 10, &label, BLACK, Direction::Across);
        let inked = ink(&canvas);
        assert!(!inked.is_empty());
        for (x, y) in &inked {
            assert!((10..10 + label.width).contains(x) && (10..10 + label.height).contains(y), "({x}, {y})");
        }
        let greys = inked.iter().filter(|&&(x, y)| canvas.pixel(x, y)[0] > 0).count();
        assert!(greys > 0 && greys < inked.len(), "anti-aliased edges and solid cores");
    }

    #[test]
    fn upward_text_is_the_across_text_turned_anticlockwise() {
        let label = text::rasterise("depth (m)", 16.0);
        let (along, across) = (label.width, label.height);
        let mut flat = Canvas::new(along, across, WHITE);
        flat.label(0, 0, &label, BLACK, Direction::Across);
        let mut up = Canvas::new(across, along, WHITE);
        up.label(0, 0, &label, BLACK, Direction::Up);
        for y in 0..across {
            for x in 0..along {
                // Turning anticlockwise sends (x, y) to (y, along - 1 - x).
                assert_eq!(flat.pixel(x, y), up.pixel(y, along - 1 - x), "({x}, {y})");
            }
        }
        assert!(!ink(&flat).is_empty());
    }

    #[test]
    fn rectangles_and_lines_are_clipped_to_the_canvas() {
        let mut c = Canvas::new(4, 3, WHITE);
        c.fill_rect(-2, 1, 4, 10, BLACK);
        assert_eq!(ink(&c), vec![(0, 1), (1, 1), (0, 2), (1, 2)]);
        c.fill_rect(10, 10, 5, 5, BLACK);
        assert_eq!(ink(&c).len(), 4);
        let mut l = Canvas::new(10, 10, WHITE);
        l.line((0.0, 0.0), (9.0, 9.0), 1, BLACK);
        assert_eq!(ink(&l), (0..10).map(|i| (i, i)).collect::<Vec<_>>());
        l.line((-5.0, 20.0), (30.0, 20.0), 3, BLACK);
        assert_eq!(ink(&l).len(), 10);
    }
}
