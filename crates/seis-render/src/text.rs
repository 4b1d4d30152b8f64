//! Lettering: DejaVu Sans, embedded in the binary, rasterised with anti-aliasing by `ab_glyph`.
//!
//! The font file is a subset of DejaVu Sans (Latin, Greek, punctuation, super- and subscripts, arrows,
//! mathematical operators: what axis titles, units and notes use, about 100 kB); its licence is shipped in
//! `fonts/LICENSE-DejaVu.txt`. `ab_glyph` is a small, well-kept pure-Rust rasteriser (no system font
//! library), which keeps the binary free of run-time dependencies.
//!
//! Coverage is kept in 16 steps rather than 256: the edge of a letter looks the same, and a picture of
//! black text on white then holds at most 16 greys, which lets small pictures be written as palette PNGs
//! (see `encode`).

use std::sync::OnceLock;

use ab_glyph::{point, Font, FontRef, PxScale, ScaleFont};

static FONT_FILE: &[u8] = include_bytes!("fonts/DejaVuSans.ttf");

/// Levels of coverage kept (0 = paper, `COVERAGE_LEVELS - 1` = full ink).
pub(crate) const COVERAGE_LEVELS: u8 = 16;

/// Drawn instead of a character the font does not have.
const REPLACEMENT: char = '?';

fn font() -> &'static FontRef<'static> {
    static FONT: OnceLock<FontRef<'static>> = OnceLock::new();
    FONT.get_or_init(|| FontRef::try_from_slice(FONT_FILE).expect("the embedded font parses"))
}

/// Whether the font draws `c` itself (rather than the replacement character).
pub fn has_glyph(c: char) -> bool {
    c == ' ' || font().glyph_id(c).0 != 0
}

/// The characters of `text` the font cannot draw.
pub fn missing_glyphs(text: &str) -> Vec<char> {
    text.chars().filter(|c| !c.is_control() && !has_glyph(*c)).collect()
}

fn shown(c: char) -> char {
    if has_glyph(c) {
        c
    } else {
        REPLACEMENT
    }
}

/// A line of text rasterised: `width × height` coverage values, row-major, each in `0..COVERAGE_LEVELS`.
#[derive(Clone, Debug, PartialEq)]
pub struct Label {
    pub width: usize,
    pub height: usize,
    /// Rows from the top of the box to the baseline.
    pub baseline: usize,
    pub coverage: Vec<u8>,
}

/// Height of the box of a line of text at `size` pixels (ascender to descender).
pub(crate) fn line_height(size: f32) -> usize {
    let f = font().as_scaled(PxScale::from(size));
    (f.ascent() - f.descent()).ceil() as usize
}

/// Height of capitals and digits at `size`: what is centred on a tick mark.
pub(crate) fn cap_height(size: f32) -> f32 {
    let f = font().as_scaled(PxScale::from(size));
    f.ascent() * 0.78
}

/// Where each character of `text` at `size` is drawn by [`rasterise`]: the character, the column its pen
/// starts at and its advance, in pixels.
pub fn char_spans(text: &str, size: f32) -> Vec<(char, f32, f32)> {
    let f = font().as_scaled(PxScale::from(size));
    let (glyphs, _) = layout(text, size);
    text.chars().filter(|c| !c.is_control()).zip(glyphs).map(|(c, (id, x))| (c, x + 1.0, f.h_advance(id))).collect()
}

/// The font's own missing-glyph box (`.notdef`), rasterised at `size`: what a character without a glyph
/// would look like if it were not replaced.
pub fn notdef(size: f32) -> Label {
    rasterise_glyphs(
        &[(ab_glyph::GlyphId(0), 0.0)],
        font().as_scaled(PxScale::from(size)).h_advance(ab_glyph::GlyphId(0)),
        size,
    )
}

/// Pen positions of the characters of `text` at `size`, and the advance of the whole line.
fn layout(text: &str, size: f32) -> (Vec<(ab_glyph::GlyphId, f32)>, f32) {
    let f = font().as_scaled(PxScale::from(size));
    let mut x = 0.0;
    let mut previous = None;
    let mut glyphs = Vec::new();
    for c in text.chars().filter(|c| !c.is_control()) {
        let id = f.glyph_id(shown(c));
        if let Some(p) = previous {
            x += f.kern(p, id);
        }
        glyphs.push((id, x));
        x += f.h_advance(id);
        previous = Some(id);
    }
    (glyphs, x)
}

/// Width in pixels of `text` at `size`.
pub(crate) fn text_width(text: &str, size: f32) -> usize {
    layout(text, size).1.ceil() as usize
}

/// Rasterise one line of `text` at `size` pixels.
pub fn rasterise(text: &str, size: f32) -> Label {
    let (glyphs, advance) = layout(text, size);
    rasterise_glyphs(&glyphs, advance, size)
}

fn rasterise_glyphs(glyphs: &[(ab_glyph::GlyphId, f32)], advance: f32, size: f32) -> Label {
    let scale = PxScale::from(size);
    let f = font().as_scaled(scale);
    let ascent = f.ascent().ceil();
    // One column of room on each side for the anti-aliased edges of the first and last letters.
    let width = advance.ceil() as usize + 2;
    let height = line_height(size);
    let mut cover = vec![0.0f32; width * height];
    for &(id, x) in glyphs {
        let glyph = id.with_scale_and_position(scale, point(x + 1.0, ascent));
        let Some(outline) = font().outline_glyph(glyph) else { continue };
        let b = outline.px_bounds();
        outline.draw(|gx, gy, c| {
            let (px, py) = (b.min.x as i64 + gx as i64, b.min.y as i64 + gy as i64);
            if (0..width as i64).contains(&px) && (0..height as i64).contains(&py) {
                let v = &mut cover[py as usize * width + px as usize];
                *v = (*v + c).min(1.0);
            }
        });
    }
    let top = f32::from(COVERAGE_LEVELS - 1);
    let coverage = cover.iter().map(|c| (c * top).round() as u8).collect();
    Label { width, height, baseline: ascent as usize, coverage }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_font_holds_the_characters_of_units_and_notes() {
        for c in "°±–—µΩαβγδθλπσφωΔΣ×·≈≤≥→↑²³ÅéüøçŁ".chars() {
            assert!(has_glyph(c), "{c:?} is missing from the embedded font");
        }
        assert_eq!(missing_glyphs("depth (m) 中"), vec!['中']);
    }

    #[test]
    fn labels_grow_with_the_size_and_the_text() {
        let small = rasterise("1250", 12.0);
        let large = rasterise("1250", 24.0);
        assert!(large.width > small.width && large.height > small.height);
        assert!(text_width("1250 m", 16.0) > text_width("1250", 16.0));
        assert_eq!(small.coverage.len(), small.width * small.height);
        assert!(small.coverage.iter().all(|&c| c < COVERAGE_LEVELS));
        // Anti-aliased: edges take intermediate levels.
        assert!(large.coverage.iter().any(|&c| c > 0 && c < COVERAGE_LEVELS - 1));
        assert!(large.coverage.contains(&(COVERAGE_LEVELS - 1)));
    }

    #[test]
    fn an_unknown_character_is_drawn_as_the_replacement() {
        assert_eq!(rasterise("中", 20.0), rasterise("?", 20.0));
        assert!(rasterise(" ", 20.0).coverage.iter().all(|&c| c == 0));
    }
}
