//! The frame around a picture: tick marks with round values on both axes, axis titles with units, the
//! title, a colour bar with ticks and the name and unit of its values, a scale bar of ground distance, a
//! north arrow for maps, and under it all the notes (how the colour scale was set, the aspect, the map
//! orientation) and the provenance footer.
//!
//! Layout, outside in: the column axis (title, labels, ticks) sits above the data because depth and time
//! grow downwards from the top edge; the row axis is on the left with its title turned upwards; the colour
//! bar is on the right, the top of the scale at the top; the scale bar and the north arrow are under the
//! data, then the notes and the footer, wrapped to the width of the picture. Every size follows the text
//! size, which follows the size of the data area.

use super::canvas::{Canvas, Direction, Rgb, BLACK, GREY, WHITE};
use super::resample::Aspect;
use super::text::{self, line_height, text_width};
use super::ticks::{plain_number, ticks, NiceStep, Tick};
use super::{Colormap, PlotAxis};

/// A data image placed in its annotated frame.
pub(crate) struct Framed {
    pub canvas: Canvas,
    /// Top-left pixel of the data area in `canvas`.
    pub data_left: usize,
    pub data_top: usize,
}

/// The colour bar: the map from `lo` (bottom) to `hi` (top) and what the values are.
pub(crate) struct ColourBar {
    pub colormap: Colormap,
    pub lo: f32,
    pub hi: f32,
    /// The quantity and its unit, written along the bar.
    pub title: String,
}

/// What the annotation says besides the axes.
pub(crate) struct Legend<'a> {
    pub title: Option<&'a str>,
    /// None for wiggles, whose scale is a note.
    pub bar: Option<ColourBar>,
    pub notes: &'a [String],
    pub footer: &'a [String],
    /// Ground distance across the whole data area, where the columns have a known spacing: sets the scale
    /// bar.
    pub metres_across: Option<f64>,
    /// Direction of north on the picture, degrees clockwise from up: draws the north arrow.
    pub north_deg: Option<f64>,
    /// Panels side by side, each labelled by its own axis and title instead of the column axis.
    pub panels: &'a [super::panels::Panel],
}

/// Sizes of the annotation, all following the text size.
struct Metrics {
    size: f32,
    line: usize,
    pad: usize,
    tick: usize,
    frame: usize,
    bar: usize,
}

impl Metrics {
    /// Text grows with the picture so that labels stay readable when the picture is shown whole.
    fn for_data(width: usize, height: usize) -> Self {
        let size = (width.max(height) as f32 / 55.0).clamp(12.0, 40.0);
        Metrics {
            size,
            line: line_height(size),
            pad: (size * 0.5).round() as usize,
            tick: (size * 0.35).round() as usize,
            frame: (size / 14.0).round().max(1.0) as usize,
            bar: size.round() as usize,
        }
    }

    fn width_of(&self, text: &str) -> usize {
        text_width(text, self.size)
    }

    fn note_size(&self) -> f32 {
        self.size * 0.8
    }

    fn footer_size(&self) -> f32 {
        self.size * 0.7
    }
}

/// The note on how the vertical axis is scaled, when there is something to say.
pub(crate) fn aspect_note(aspect: &Aspect, vertical_exaggeration: f64, map: bool) -> Option<String> {
    let ve = if vertical_exaggeration == 1.0 {
        String::new()
    } else {
        format!("; vertical exaggeration {}×", super::number(vertical_exaggeration))
    };
    match aspect {
        Aspect::TrueSpacing if map => None,
        Aspect::TrueSpacing if ve.is_empty() => Some("True scale: no vertical exaggeration.".into()),
        Aspect::TrueSpacing => Some(format!("Vertical exaggeration {}×.", super::number(vertical_exaggeration))),
        Aspect::TimeAtVelocity { velocity_m_s } => Some(format!(
            "Time drawn as depth at {} m/s (1 ms as {} m){ve}.",
            super::number(*velocity_m_s),
            super::number(velocity_m_s / 2000.0)
        )),
        Aspect::SquareSamples => Some("Trace spacing unknown: every sample is drawn as a square.".into()),
    }
}

/// An amplitude for the colour bar: four significant digits, scientific beyond the usual range.
pub(crate) fn amplitude_label(v: f32) -> String {
    let a = v.abs();
    if a == 0.0 {
        "0".into()
    } else if (1e-3..1e5).contains(&a) {
        let decimals = (3 - a.log10().floor() as i32).max(0) as usize;
        let s = format!("{:.*}", decimals, v);
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    } else {
        format!("{v:.3e}")
    }
}

/// Split `text` into lines no wider than `width` pixels at `size`, at spaces.
fn wrap(text: &str, size: f32, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        let candidate = if line.is_empty() { word.to_string() } else { format!("{line} {word}") };
        if !line.is_empty() && text_width(&candidate, size) > width {
            lines.push(std::mem::replace(&mut line, word.to_string()));
        } else {
            line = candidate;
        }
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

/// A ground distance for the scale bar: 1, 2 or 5 × 10ⁿ metres, at most `max_m`; its label.
fn scale_length(max_m: f64) -> Option<(f64, String)> {
    if !(max_m.is_finite() && max_m > 0.0) {
        return None;
    }
    let mut step = NiceStep { mantissa: 1, exponent: max_m.log10().floor() as i32 };
    for candidate in [5, 2, 1] {
        step.mantissa = candidate;
        if step.value() <= max_m * (1.0 + 1e-9) {
            break;
        }
    }
    let m = step.value();
    let label = if m >= 1000.0 { format!("{} km", plain_number(m / 1000.0)) } else { format!("{} m", plain_number(m)) };
    Some((m, label))
}

/// Where everything of a frame goes around a data area of `w × h` pixels.
struct Layout {
    m: Metrics,
    col_ticks: Vec<Tick>,
    row_ticks: Vec<Tick>,
    /// Colour bar ticks: the fraction of the scale from its bottom, and the label.
    bar_ticks: Vec<(f64, String)>,
    bar_label_width: usize,
    /// The data area's top-left pixel.
    top: usize,
    left: usize,
    bar_left: usize,
    /// The scale bar's length in pixels and its label; the north arrow's size.
    scale: Option<(f64, String)>,
    arrow: Option<usize>,
    /// The notes and the footer, wrapped, and where the first note goes.
    notes: Vec<String>,
    footer: Vec<String>,
    below: usize,
    row_title: String,
    row_title_top: usize,
    /// The whole picture.
    width: usize,
    height: usize,
}

fn layout(w: usize, h: usize, rows: &PlotAxis, cols: &PlotAxis, legend: &Legend) -> Layout {
    let m = Metrics::for_data(w, h);
    let (line, pad, tick, f) = (m.line, m.pad, m.tick, m.frame);

    let col_gap =
        |labels: &[String]| (labels.iter().map(|l| m.width_of(l)).max().unwrap_or(0) + 2 * m.width_of("0")) as f64;
    let col_ticks = match legend.panels {
        [] => ticks(cols, w, col_gap),
        panels => super::panels::panel_ticks(panels, cols.len, w, col_gap),
    };
    let row_ticks = ticks(rows, h, |_| (2 * line) as f64);
    let row_label_width = row_ticks.iter().map(|t| m.width_of(&t.label)).max().unwrap_or(0);

    // Colour bar ticks: round values of the scale, at least two text lines apart.
    let bar_ticks: Vec<(f64, String)> = match &legend.bar {
        Some(bar) if bar.hi > bar.lo => {
            let span = PlotAxis {
                name: String::new(),
                unit: String::new(),
                origin: f64::from(bar.lo),
                step: f64::from(bar.hi - bar.lo) / 1000.0,
                len: 1001,
                spacing_m: None,
            };
            ticks(&span, h, |_| (2 * line) as f64)
                .into_iter()
                .map(|t| ((t.offset / h as f64).clamp(0.0, 1.0), t.label))
                .collect()
        }
        Some(_) => vec![(0.5, "0".into())],
        None => Vec::new(),
    };
    let bar_label_width = bar_ticks.iter().map(|(_, l)| m.width_of(l)).max().unwrap_or(0);

    let title_size = m.size * 1.2;
    let title_band = legend.title.map_or(0, |_| line_height(title_size) + pad);
    let panel_band = if legend.panels.is_empty() { 0 } else { line + pad / 3 };
    let top = pad + title_band + panel_band + line + pad / 3 + line + tick + f;
    let left = pad + line + pad + row_label_width + pad / 3 + tick + f;
    let bar_left = left + w + f + 2 * pad;
    let right_edge = match &legend.bar {
        Some(_) => bar_left + f + m.bar + f + tick + pad / 3 + bar_label_width + pad + line + pad,
        None => left + w + f + pad,
    };
    let title_width = legend.title.map_or(0, |t| text_width(t, title_size) + 2 * pad);
    let width = right_edge.max(title_width).max(left + w + f + pad);

    // Under the data: the scale bar (and the north arrow beside it), then notes and footer.
    let scale = legend
        .metres_across
        .map(|across| across / w as f64)
        .and_then(|mpp| scale_length(0.3 * w as f64 * mpp).map(|(len, label)| (len / mpp, label)));
    let arrow = legend.north_deg.map(|_| 3 * line);
    let scale_band =
        if scale.is_some() || arrow.is_some() { (tick + 2 * f + line).max(arrow.unwrap_or(0)) + pad } else { 0 };
    let text_width_avail = width.saturating_sub(2 * pad).max(1);
    let notes: Vec<String> = legend.notes.iter().flat_map(|n| wrap(n, m.note_size(), text_width_avail)).collect();
    let footer: Vec<String> = legend.footer.iter().flat_map(|n| wrap(n, m.footer_size(), text_width_avail)).collect();
    let note_line = line_height(m.note_size());
    let footer_line = line_height(m.footer_size());
    let below = top + h + f + pad + scale_band;
    let mut height = below
        + notes.len() * note_line
        + if footer.is_empty() { 0 } else { pad / 2 + footer.len() * footer_line }
        + pad;
    // The row title is centred on the data, but moved down and given room when it is longer than the data.
    let row_title = rows.title();
    let row_title_length = m.width_of(&row_title) + 2;
    let row_title_top = (top + h / 2).saturating_sub(row_title_length / 2).max(pad);
    height = height.max(row_title_top + row_title_length + pad);

    Layout {
        m,
        col_ticks,
        row_ticks,
        bar_ticks,
        bar_label_width,
        top,
        left,
        bar_left,
        scale,
        arrow,
        notes,
        footer,
        below,
        row_title,
        row_title_top,
        width,
        height,
    }
}

/// The size in pixels of the whole picture that [`frame`] makes around a data area of `w × h` pixels.
pub(crate) fn frame_size(w: usize, h: usize, rows: &PlotAxis, cols: &PlotAxis, legend: &Legend) -> (usize, usize) {
    let l = layout(w, h, rows, cols, legend);
    (l.width, l.height)
}

/// The annotated frame around a data area of `w × h` pixels. Nothing of the frame is drawn inside that
/// area, so the data can be drawn beside the frame and copied in at `(data_left, data_top)`.
pub(crate) fn frame(w: usize, h: usize, rows: &PlotAxis, cols: &PlotAxis, legend: &Legend) -> Framed {
    // Over 100 lines: the frame is drawn part by part (axes, ticks, labels, legend) in one coordinate
    // system laid out once above; each part is a few lines of it.
    let Layout {
        m,
        col_ticks,
        row_ticks,
        bar_ticks,
        bar_label_width,
        top,
        left,
        bar_left,
        scale,
        arrow,
        notes,
        footer,
        below,
        row_title,
        row_title_top,
        width,
        height,
    } = layout(w, h, rows, cols, legend);
    let (line, pad, tick, f) = (m.line, m.pad, m.tick, m.frame);
    let title_size = m.size * 1.2;
    let note_line = line_height(m.note_size());
    let footer_line = line_height(m.footer_size());

    let mut canvas = Canvas::new(width, height, WHITE);
    let (left_i, top_i, fi) = (left as i64, top as i64, f as i64);
    let (ti, padi) = (tick as i64, pad as i64);
    let cap = text::cap_height(m.size) as i64;
    // The label box starts above the capitals by the gap between ascent and cap height.
    let cap_offset = (text::rasterise("0", m.size).baseline as i64) - cap;

    // The border around the data area, not under it: the data is copied in afterwards.
    let (wi, hi) = (w as i64, h as i64);
    canvas.fill_rect(left_i - fi, top_i - fi, wi + 2 * fi, fi, BLACK);
    canvas.fill_rect(left_i - fi, top_i + hi, wi + 2 * fi, fi, BLACK);
    canvas.fill_rect(left_i - fi, top_i, fi, hi, BLACK);
    canvas.fill_rect(left_i + wi, top_i, fi, hi, BLACK);

    // Column axis, above the data.
    let label_top = top_i - fi - ti - line as i64;
    for t in &col_ticks {
        let x = left_i + (t.offset.floor() as i64).clamp(0, w as i64 - 1);
        canvas.fill_rect(x, top_i - fi - ti, fi, ti, BLACK);
        let lw = m.width_of(&t.label) as i64;
        canvas.text(x - lw / 2, label_top, &t.label, m.size, BLACK, Direction::Across);
    }
    let col_title_top = label_top - (pad / 3) as i64 - line as i64;
    if legend.panels.is_empty() {
        let col_title = cols.title();
        let x = left_i + w as i64 / 2 - m.width_of(&col_title) as i64 / 2;
        canvas.text(x, col_title_top, &col_title, m.size, BLACK, Direction::Across);
    } else {
        super::panels::Titles {
            panels: legend.panels,
            n_cols: cols.len,
            left: left_i,
            width: w,
            title_top: col_title_top - (pad / 3) as i64 - line as i64,
            axis_top: col_title_top,
            size: m.size,
        }
        .draw(&mut canvas);
    }
    if let Some(title) = legend.title {
        let x = (width as i64 - text_width(title, title_size) as i64) / 2;
        canvas.text(x, padi, title, title_size, BLACK, Direction::Across);
    }

    // Row axis, left of the data.
    for t in &row_ticks {
        let y = top_i + (t.offset.floor() as i64).clamp(0, h as i64 - 1);
        canvas.fill_rect(left_i - fi - ti, y, ti, fi, BLACK);
        let x = left_i - fi - ti - (pad / 3) as i64 - m.width_of(&t.label) as i64;
        canvas.text(x, y - cap_offset - cap / 2, &t.label, m.size, BLACK, Direction::Across);
    }
    canvas.text(padi, row_title_top as i64, &row_title, m.size, BLACK, Direction::Up);

    // Colour bar, right of the data: the top of the scale at the top.
    if let Some(bar) = &legend.bar {
        let bar_x = bar_left as i64;
        canvas.fill_rect(bar_x, top_i - fi, m.bar as i64 + 2 * fi, h as i64 + 2 * fi, BLACK);
        let palette = bar.colormap.palette_over(bar.lo, bar.hi);
        for r in 0..h {
            let t = 1.0 - (r as f32 + 0.5) / h as f32;
            let v = bar.lo + (bar.hi - bar.lo) * t;
            let colour = if bar.hi > bar.lo { palette.colour(v) } else { bar.colormap.at(0.5) };
            canvas.fill_rect(bar_x + fi, top_i + r as i64, m.bar as i64, 1, colour);
        }
        let bar_right = bar_x + fi + m.bar as i64 + fi;
        for (fraction, label) in &bar_ticks {
            // `fraction` runs from the bottom of the scale; the bar's top is its top.
            let y = top_i + (((1.0 - fraction) * h as f64).floor() as i64).clamp(0, (h as i64 - fi).max(0));
            canvas.fill_rect(bar_right, y, ti, fi, BLACK);
            canvas.text(
                bar_right + ti + (pad / 3) as i64,
                y - cap_offset - cap / 2,
                label,
                m.size,
                BLACK,
                Direction::Across,
            );
        }
        let title_x = bar_right + ti + (pad / 3) as i64 + bar_label_width as i64 + padi;
        let title_len = m.width_of(&bar.title) as i64;
        let title_y = (top_i + h as i64 / 2 - title_len / 2).max(padi);
        canvas.text(title_x, title_y, &bar.title, m.size, BLACK, Direction::Up);
    }

    // Scale bar and north arrow, under the data.
    let band_top = top_i + h as i64 + fi + padi;
    if let Some((length_px, label)) = &scale {
        let thick = ti.max(3);
        let x0 = left_i;
        let length = length_px.round().max(4.0) as i64;
        canvas.fill_rect(x0 - fi, band_top - fi, length + 2 * fi, thick + 2 * fi, BLACK);
        for k in 0..4 {
            let (a, b) = (x0 + length * k / 4, x0 + length * (k + 1) / 4);
            if k % 2 == 1 {
                canvas.fill_rect(a, band_top, b - a, thick, WHITE);
            }
        }
        let text_top = band_top + thick + fi + 1;
        canvas.text(x0 - m.width_of("0") as i64 / 2, text_top, "0", m.size, BLACK, Direction::Across);
        canvas.text(x0 + length - m.width_of(label) as i64 / 2, text_top, label, m.size, BLACK, Direction::Across);
    }
    if let (Some(north), Some(side)) = (legend.north_deg, arrow) {
        north_arrow(
            &mut canvas,
            left_i + w as i64 - side as i64 / 2,
            band_top + side as i64 / 2 + line as i64 / 4,
            side,
            north,
            &m,
        );
    }

    // Notes and footer.
    let mut y = below as i64;
    for n in &notes {
        canvas.text(padi, y, n, m.note_size(), BLACK, Direction::Across);
        y += note_line as i64;
    }
    y += padi / 2;
    for n in &footer {
        canvas.text(padi, y, n, m.footer_size(), GREY, Direction::Across);
        y += footer_line as i64;
    }

    Framed { canvas, data_left: left, data_top: top }
}

/// An arrow pointing `north_deg` clockwise from up, centred at `(cx, cy)` in a box of `side` pixels, with
/// an N at its head.
fn north_arrow(canvas: &mut Canvas, cx: i64, cy: i64, side: usize, north_deg: f64, m: &Metrics) {
    let (s, c) = north_deg.to_radians().sin_cos();
    let half = side as f64 * 0.32;
    // Picture direction of north: (sin, −cos) in (right, down).
    let (dx, dy) = (s, -c);
    let (cx, cy) = (cx as f64, cy as f64);
    let tail = (cx - dx * half, cy - dy * half);
    let head = (cx + dx * half, cy + dy * half);
    let colour: Rgb = BLACK;
    canvas.line(tail, head, m.frame.max(2), colour);
    let barb = half * 0.45;
    for turn in [150f64, -150.0] {
        let (ts, tc) = turn.to_radians().sin_cos();
        let (bx, by) = (dx * tc - dy * ts, dx * ts + dy * tc);
        canvas.line(head, (head.0 + bx * barb, head.1 + by * barb), m.frame.max(2), colour);
    }
    let label = text::rasterise("N", m.size);
    let (lx, ly) = (cx + dx * (half + m.line as f64 * 0.6), cy + dy * (half + m.line as f64 * 0.6));
    canvas.label(
        lx as i64 - label.width as i64 / 2,
        ly as i64 - label.height as i64 / 2,
        &label,
        colour,
        Direction::Across,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The invariant that lets a picture's data be painted while its frame is drawn: nothing of the frame,
    /// with every part of the legend and panels or not, falls inside the data area.
    #[test]
    fn the_frame_leaves_the_data_area_untouched() {
        let axis = |name: &str, unit: &str, len| PlotAxis {
            name: name.into(),
            unit: unit.into(),
            origin: 100.0,
            step: 1.0,
            len,
            spacing_m: Some(12.5),
        };
        let (rows, cols) = (axis("depth", "m", 90), axis("xline", "", 60));
        let (notes, footer) = (
            vec!["A note long enough to wrap over the picture's width, twice over.".to_string()],
            vec!["footer".to_string()],
        );
        let panels = [
            super::super::panels::Panel { title: "scale 0.95".into(), first_col: 0, axis: axis("xline", "", 30) },
            super::super::panels::Panel { title: "scale 1.05".into(), first_col: 30, axis: axis("xline", "", 30) },
        ];
        for panels in [&panels[..0], &panels[..]] {
            let legend = Legend {
                title: Some("Inline 122, a title wider than the data area"),
                bar: Some(ColourBar { colormap: Colormap::Seismic, lo: -1.0, hi: 1.0, title: "amplitude".into() }),
                notes: &notes,
                footer: &footer,
                metres_across: Some(750.0),
                north_deg: Some(30.0),
                panels,
            };
            let (w, h) = (120, 90);
            let framed = frame(w, h, &rows, &cols, &legend);
            let inked = (0..h)
                .flat_map(|y| (0..w).map(move |x| (x, y)))
                .filter(|&(x, y)| framed.canvas.pixel(framed.data_left + x, framed.data_top + y) != WHITE)
                .count();
            assert_eq!(inked, 0, "{} panels: the frame drew inside the data area", panels.len());
        }
    }

    #[test]
    fn scale_bars_take_round_lengths() {
        assert_eq!(scale_length(730.0), Some((500.0, "500 m".into())));
        assert_eq!(scale_length(2600.0), Some((2000.0, "2 km".into())));
        assert_eq!(scale_length(120.0), Some((100.0, "100 m".into())));
        assert_eq!(scale_length(0.0), None);
    }

    #[test]
    fn notes_wrap_at_spaces_to_the_width() {
        let text = "Colour scale ±0.5: the 99th percentile of |amplitude| over the 3 inline pictures of this run";
        let lines = wrap(text, 14.0, 300);
        assert!(lines.len() > 1);
        assert!(lines.iter().all(|l| text_width(l, 14.0) <= 300), "{lines:?}");
        assert_eq!(lines.join(" "), text);
    }

    #[test]
    fn amplitude_labels_keep_four_significant_digits() {
        assert_eq!(amplitude_label(1.0), "1");
        assert_eq!(amplitude_label(1234.567), "1235");
        assert_eq!(amplitude_label(0.0123456), "0.01235");
        assert_eq!(amplitude_label(2.5), "2.5");
        assert_eq!(amplitude_label(123456.0), "1.235e5");
        assert_eq!(amplitude_label(0.0), "0");
    }
}
