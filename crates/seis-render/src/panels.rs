//! Pictures of several slices side by side (the members of a velocity scan): each slice a panel with its
//! own horizontal axis (its line numbers) and its own title, over one data area that shares the rows, the
//! colour scale and the frame.
//!
//! The slice a caller hands over holds the panels' columns one after the other, with columns of no data
//! between them; its column axis only sizes the picture. [`Panel`]s say which columns each panel holds and
//! what they are, so that the frame labels each panel by its own axis and the sidecar records each one.

use super::canvas::{Canvas, Direction, BLACK};
use super::sidecar::{AxisRecord, PanelRecord};
use super::text::text_width;
use super::ticks::{ticks, Tick};
use super::PlotAxis;
use seis_core::error::{Error, Result};

/// One panel of a picture of several side by side.
#[derive(Clone, Debug, PartialEq)]
pub struct Panel {
    /// Drawn above the panel: what sets it apart from the others (`scale 0.95`, `1800 m/s`).
    pub title: String,
    /// The first column of the slice that the panel holds.
    pub first_col: usize,
    /// The panel's own horizontal axis; its length is the number of columns it holds.
    pub axis: PlotAxis,
}

/// Check that `panels` lie in order inside a slice of `n_cols` columns without overlapping.
pub(crate) fn check(panels: &[Panel], n_cols: usize) -> Result<()> {
    let mut next = 0;
    for p in panels {
        p.axis.check("panel column")?;
        if p.first_col < next || p.first_col + p.axis.len > n_cols {
            return Err(Error::Request(format!(
                "cannot render the panel `{}`: columns {}..{} overlap another panel or lie outside the {n_cols} \
                 columns of the picture",
                p.title,
                p.first_col,
                p.first_col + p.axis.len
            )));
        }
        next = p.first_col + p.axis.len;
    }
    Ok(())
}

/// The pixel columns of a data area `width` pixels wide (showing `n_cols` columns) that panel `p` covers:
/// its first and how many.
fn pixels(p: &Panel, n_cols: usize, width: usize) -> (f64, f64) {
    let per_col = width as f64 / n_cols as f64;
    (p.first_col as f64 * per_col, p.axis.len as f64 * per_col)
}

/// Every panel's ticks, at their offsets in the whole data area.
pub(crate) fn panel_ticks(
    panels: &[Panel],
    n_cols: usize,
    width: usize,
    min_gap: impl Fn(&[String]) -> f64,
) -> Vec<Tick> {
    panels
        .iter()
        .flat_map(|p| {
            let (start, span) = pixels(p, n_cols, width);
            ticks(&p.axis, span.round().max(1.0) as usize, &min_gap)
                .into_iter()
                .map(move |t| Tick { offset: start + t.offset, label: t.label })
        })
        .collect()
}

/// Each panel's title on the line at `title_top` and its axis title on the line at `axis_top`, centred over
/// the panel whose data area starts at pixel `left`; a title wider than its panel is cut to its width.
pub(crate) struct Titles<'a> {
    pub panels: &'a [Panel],
    pub n_cols: usize,
    pub left: i64,
    pub width: usize,
    pub title_top: i64,
    pub axis_top: i64,
    pub size: f32,
}

impl Titles<'_> {
    pub(crate) fn draw(&self, canvas: &mut Canvas) {
        for p in self.panels {
            let (start, span) = pixels(p, self.n_cols, self.width);
            for (text, top) in [(p.title.clone(), self.title_top), (p.axis.title(), self.axis_top)] {
                let text = fitted(&text, self.size, span as usize);
                let x = self.left + (start + span / 2.0) as i64 - text_width(&text, self.size) as i64 / 2;
                canvas.text(x, top, &text, self.size, BLACK, Direction::Across);
            }
        }
    }
}

/// `text`, shortened from its end until it fits `width` pixels at `size` (so that neighbouring panels'
/// titles never run into each other).
fn fitted(text: &str, size: f32, width: usize) -> String {
    let mut chars: Vec<char> = text.chars().collect();
    while !chars.is_empty() && text_width(&chars.iter().collect::<String>(), size) > width {
        chars.pop();
    }
    chars.into_iter().collect()
}

/// The sidecar's record of each panel of a data area of `width` pixels from image column `left`.
pub(crate) fn records(panels: &[Panel], n_cols: usize, left: usize, width: usize) -> Vec<PanelRecord> {
    panels
        .iter()
        .map(|p| {
            let (start, span) = pixels(p, n_cols, width);
            let first = left + start.round() as usize;
            let count = ((left as f64 + start + span).round() as usize).saturating_sub(first).max(1);
            PanelRecord { title: p.title.clone(), cols: AxisRecord::new(&p.axis, first, count) }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn panel(title: &str, first_col: usize, origin: f64, len: usize) -> Panel {
        let axis = PlotAxis { name: "xline".into(), unit: String::new(), origin, step: 1.0, len, spacing_m: None };
        Panel { title: title.into(), first_col, axis }
    }

    #[test]
    fn each_panel_is_labelled_by_its_own_lines() {
        // Two panels of lines 100..=119 with 4 columns between them, on 440 pixels: 10 pixels a column.
        let panels = [panel("scale 0.9", 0, 100.0, 20), panel("scale 1.1", 24, 100.0, 20)];
        check(&panels, 44).unwrap();
        let t = panel_ticks(&panels, 44, 440, |_| 45.0);
        let labels: Vec<&str> = t.iter().map(|t| t.label.as_str()).collect();
        assert_eq!(labels, ["100", "105", "110", "115", "100", "105", "110", "115"]);
        // Line 100 of the second panel is its first column: column 24 of the whole, centred.
        assert!((t[4].offset - 245.0).abs() < 1e-9, "{}", t[4].offset);
        let r = records(&panels, 44, 60, 440);
        assert_eq!((r[1].cols.pixel_first, r[1].cols.pixel_count), (60 + 240, 200));
        assert_eq!(r[1].cols.pixel_of_value(119.0), 60 + 240 + 195);
        assert_eq!(r[0].title, "scale 0.9");
    }

    #[test]
    fn panels_that_overlap_or_overflow_are_refused() {
        assert!(check(&[panel("a", 0, 1.0, 20), panel("b", 10, 1.0, 20)], 44).is_err());
        assert!(check(&[panel("a", 30, 1.0, 20)], 44).is_err());
    }

    #[test]
    fn titles_are_cut_to_their_panel() {
        assert_eq!(fitted("scale 0.95", 14.0, 10_000), "scale 0.95");
        let cut = fitted("scale 0.95", 14.0, 30);
        assert!(!cut.is_empty() && cut.len() < 10 && text_width(&cut, 14.0) <= 30, "{cut}");
    }
}
