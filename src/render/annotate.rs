//! The frame around a slice image: tick marks with round values on both axes, axis titles with units, an
//! optional title, and a colour bar labelled with the clip.
//!
//! Layout, outside in: the column axis (title, labels, ticks) sits above the data because depth and time
//! grow downwards from the top edge; the row axis is on the left with its title turned upwards; the colour
//! bar is on the right, positive clip at the top, with the clip method written under it.

use super::canvas::{text_extent, Canvas, Direction, BLACK, WHITE};
use super::clip::ClipSource;
use super::font::{CAP_HEIGHT, GLYPH_HEIGHT};
use super::{Colormap, PlotAxis};

/// A data image placed in its annotated frame.
pub(crate) struct Framed {
    pub canvas: Canvas,
    /// Top-left pixel of the data area in `canvas`.
    pub data_left: usize,
    pub data_top: usize,
}

/// What the annotation says besides the axes.
pub(crate) struct Legend<'a> {
    pub colormap: Colormap,
    pub clip: f32,
    pub clip_source: ClipSource,
    pub title: Option<&'a str>,
}

/// Sizes of the annotation, all proportional to the text scale.
struct Metrics {
    scale: usize,
    text: usize,
    cap: usize,
    pad: usize,
    tick: usize,
    frame: usize,
    bar: usize,
}

impl Metrics {
    /// Text grows with the image so that labels stay readable when the image is shown whole.
    fn for_data(width: usize, height: usize) -> Self {
        let scale = (width.max(height) / 400).clamp(1, 4);
        Metrics {
            scale,
            text: GLYPH_HEIGHT * scale,
            cap: CAP_HEIGHT * scale,
            pad: 6 * scale,
            tick: 5 * scale,
            frame: scale,
            bar: 16 * scale,
        }
    }

    fn width_of(&self, text: &str) -> usize {
        text_extent(text, self.scale).0
    }
}

/// A labelled position along an axis of the data area.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Tick {
    /// Pixels from the start (left or top edge) of the data area.
    pub offset: f64,
    pub label: String,
}

/// Most ticks an axis gets, however much room there is.
const MAX_TICKS: f64 = 50.0;

/// Round tick values (1, 2 or 5 times a power of ten, never finer than the sample step) along `axis`
/// drawn on `pixels`, as dense as `min_gap` (pixels wanted between neighbours, given the labels) allows.
pub(crate) fn ticks(axis: &PlotAxis, pixels: usize, min_gap: impl Fn(&[String]) -> f64) -> Vec<Tick> {
    let (a, b) = (axis.value(0.0), axis.last());
    let (lo, hi) = (a.min(b), a.max(b));
    let pixels_per_unit = pixels as f64 / (axis.len as f64 * axis.step.abs());
    let offset = |v: f64| ((v - axis.origin) / axis.step + 0.5) * pixels as f64 / axis.len as f64;
    let mut step = NiceStep::at_least(axis.step.abs().max((hi - lo) / MAX_TICKS));
    loop {
        let value = step.value();
        let first = (lo / value - 1e-9).ceil() as i64;
        let last = (hi / value + 1e-9).floor() as i64;
        let labels: Vec<(f64, String)> = (first..=last).map(|k| (k as f64 * value, step.label(k))).collect();
        let texts: Vec<String> = labels.iter().map(|(_, l)| l.clone()).collect();
        if labels.len() > 1 && value * pixels_per_unit < min_gap(&texts) {
            step = step.next();
            continue;
        }
        if labels.is_empty() {
            // An axis too short to hold a round value: label its first sample as it is.
            return vec![Tick { offset: offset(a), label: plain_number(a) }];
        }
        return labels.into_iter().map(|(v, label)| Tick { offset: offset(v), label }).collect();
    }
}

/// `mantissa · 10^exponent` with a mantissa of 1, 2 or 5.
#[derive(Clone, Copy, Debug, PartialEq)]
struct NiceStep {
    mantissa: u8,
    exponent: i32,
}

impl NiceStep {
    fn at_least(x: f64) -> Self {
        let mut step = NiceStep { mantissa: 1, exponent: x.log10().floor() as i32 };
        while step.value() < x * (1.0 - 1e-9) {
            step = step.next();
        }
        step
    }

    fn next(self) -> Self {
        match self.mantissa {
            1 => NiceStep { mantissa: 2, ..self },
            2 => NiceStep { mantissa: 5, ..self },
            _ => NiceStep { mantissa: 1, exponent: self.exponent + 1 },
        }
    }

    fn value(self) -> f64 {
        self.mantissa as f64 * 10f64.powi(self.exponent)
    }

    /// The label of the `k`-th multiple, with as many decimals as the step needs.
    fn label(self, k: i64) -> String {
        let decimals = (-self.exponent).max(0) as usize;
        no_negative_zero(format!("{:.*}", decimals, k as f64 * self.value()))
    }
}

fn no_negative_zero(s: String) -> String {
    if s.starts_with('-') && s[1..].chars().all(|c| c == '0' || c == '.') {
        s[1..].to_string()
    } else {
        s
    }
}

/// The shortest decimal form of `v`.
fn plain_number(v: f64) -> String {
    no_negative_zero(format!("{v}"))
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

fn clip_note(source: ClipSource) -> String {
    match source {
        ClipSource::Percentile { percentile } => format!("p{}", plain_number(percentile)),
        ClipSource::MaxAbs { .. } => "max".into(),
        ClipSource::Fixed => "fixed".into(),
    }
}

/// Where everything of a frame goes around a data area of `w × h` pixels.
struct Layout {
    m: Metrics,
    col_ticks: Vec<Tick>,
    row_ticks: Vec<Tick>,
    bar_labels: Vec<(f64, String)>,
    note: String,
    bar_height: usize,
    /// The data area's top-left pixel.
    top: usize,
    left: usize,
    bar_left: usize,
    row_title: String,
    row_title_top: usize,
    /// The whole picture.
    width: usize,
    height: usize,
}

fn layout(w: usize, h: usize, rows: &PlotAxis, cols: &PlotAxis, legend: &Legend) -> Layout {
    let m = Metrics::for_data(w, h);
    let col_ticks =
        ticks(cols, w, |labels| (labels.iter().map(|l| m.width_of(l)).max().unwrap_or(0) + 3 * m.width_of("0")) as f64);
    let row_ticks = ticks(rows, h, |_| (3 * m.text) as f64);
    let row_label_width = row_ticks.iter().map(|t| m.width_of(&t.label)).max().unwrap_or(0);
    let clip = amplitude_label(legend.clip);
    let bar_labels: Vec<(f64, String)> = if legend.clip > 0.0 {
        vec![(0.0, format!("+{clip}")), (0.5, "0".into()), (1.0, format!("-{clip}"))]
    } else {
        vec![(0.5, "0".into())]
    };
    let note = clip_note(legend.clip_source);
    let bar_text_width = bar_labels.iter().map(|(_, l)| m.width_of(l)).max().unwrap_or(0);
    let bar_height = h.max(4 * m.text);

    let title_band = legend.title.map_or(0, |_| m.text + m.pad);
    let top = m.pad + title_band + m.text + m.pad + m.text + m.scale + m.tick + m.frame;
    let left = m.pad + m.text + m.pad + row_label_width + m.scale + m.tick + m.frame;
    let bar_left = left + w + m.frame + 3 * m.pad;
    let bar_block = m.frame + m.bar + m.frame + m.tick / 2 + m.scale + bar_text_width;
    let right_edge = bar_left + bar_block.max(m.width_of(&note)) + m.pad;
    let title_width = legend.title.map_or(0, |t| m.width_of(t) + 2 * m.pad);
    let width = right_edge.max(title_width);
    // The row title is centred on the data, but moved down and given room when it is longer than the data.
    let row_title = rows.title();
    let row_title_length = m.width_of(&row_title);
    let row_title_top = (top + h / 2).saturating_sub(row_title_length / 2).max(m.pad);
    let height = (top + bar_height + m.frame + m.pad + m.text + m.pad).max(row_title_top + row_title_length + m.pad);
    Layout {
        m,
        col_ticks,
        row_ticks,
        bar_labels,
        note,
        bar_height,
        top,
        left,
        bar_left,
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

/// Put `data` (the slice already resampled and coloured) into an annotated frame.
pub(crate) fn frame(data: &Canvas, rows: &PlotAxis, cols: &PlotAxis, legend: &Legend) -> Framed {
    let (w, h) = (data.width, data.height);
    let Layout {
        m,
        col_ticks,
        row_ticks,
        bar_labels,
        note,
        bar_height,
        top,
        left,
        bar_left,
        row_title,
        row_title_top,
        width,
        height,
    } = layout(w, h, rows, cols, legend);

    let mut canvas = Canvas::new(width, height, WHITE);
    let (left_i, top_i, f) = (left as i64, top as i64, m.frame as i64);
    let (s, tick, pad) = (m.scale as i64, m.tick as i64, m.pad as i64);

    canvas.fill_rect(left_i - f, top_i - f, w as i64 + 2 * f, h as i64 + 2 * f, BLACK);
    canvas.blit(data, left, top);

    // Column axis, above the data.
    let label_top = top_i - f - tick - s - m.text as i64;
    for t in &col_ticks {
        let x = left_i + (t.offset.floor() as i64).clamp(0, w as i64 - 1);
        canvas.fill_rect(x, top_i - f - tick, s, tick, BLACK);
        let lw = m.width_of(&t.label) as i64;
        canvas.text(x - lw / 2, label_top, &t.label, m.scale, BLACK, Direction::Across);
    }
    let col_title = cols.title();
    let x = left_i + w as i64 / 2 - m.width_of(&col_title) as i64 / 2;
    canvas.text(x, label_top - pad - m.text as i64, &col_title, m.scale, BLACK, Direction::Across);
    if let Some(title) = legend.title {
        let x = (width as i64 - m.width_of(title) as i64) / 2;
        canvas.text(x, pad, title, m.scale, BLACK, Direction::Across);
    }

    // Row axis, left of the data.
    for t in &row_ticks {
        let y = top_i + (t.offset.floor() as i64).clamp(0, h as i64 - 1);
        canvas.fill_rect(left_i - f - tick, y, tick, s, BLACK);
        let x = left_i - f - tick - s - m.width_of(&t.label) as i64;
        canvas.text(x, y - m.cap as i64 / 2, &t.label, m.scale, BLACK, Direction::Across);
    }
    canvas.text(pad, row_title_top as i64, &row_title, m.scale, BLACK, Direction::Up);

    // Colour bar, right of the data: the positive clip at the top.
    let bar_x = bar_left as i64;
    canvas.fill_rect(bar_x, top_i - f, m.bar as i64 + 2 * f, bar_height as i64 + 2 * f, BLACK);
    for r in 0..bar_height {
        let t = 1.0 - (r as f32 + 0.5) / bar_height as f32;
        canvas.fill_rect(bar_x + f, top_i + r as i64, m.bar as i64, 1, legend.colormap.at(t));
    }
    let bar_right = bar_x + f + m.bar as i64 + f;
    for (fraction, label) in &bar_labels {
        let y = top_i + ((fraction * bar_height as f64).floor() as i64).min(bar_height as i64 - s);
        canvas.fill_rect(bar_right, y, tick / 2, s, BLACK);
        canvas.text(bar_right + tick / 2 + s, y - m.cap as i64 / 2, label, m.scale, BLACK, Direction::Across);
    }
    let note_y = top_i + bar_height as i64 + f + pad;
    canvas.text(bar_x, note_y, &note, m.scale, BLACK, Direction::Across);

    Framed { canvas, data_left: left, data_top: top }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn axis(origin: f64, step: f64, len: usize) -> PlotAxis {
        PlotAxis { name: "x".into(), unit: String::new(), origin, step, len, spacing_m: None }
    }

    fn labels(ticks: &[Tick]) -> Vec<&str> {
        ticks.iter().map(|t| t.label.as_str()).collect()
    }

    #[test]
    fn ticks_take_round_steps_that_fit() {
        // Lines 100..=300 on 1000 pixels (about 5 per line), labels wanting 120 pixels apart: steps of 50.
        let t = ticks(&axis(100.0, 1.0, 201), 1000, |_| 120.0);
        assert_eq!(labels(&t), ["100", "150", "200", "250", "300"]);
        // A tick sits on the centre of its sample's cell: line 150 is sample 50 of 201.
        assert!((t[1].offset - 50.5 * 1000.0 / 201.0).abs() < 1e-9);
        // Depth 0..=1000 m on 502 pixels (half a pixel per metre), 60 pixels wanted apart: steps of 200 m.
        let t = ticks(&axis(0.0, 4.0, 251), 502, |_| 60.0);
        assert_eq!(labels(&t), ["0", "200", "400", "600", "800", "1000"]);
    }

    #[test]
    fn ticks_are_never_finer_than_the_samples_and_handle_fractions() {
        // Three lines with lots of room: still one tick per line at most.
        assert_eq!(labels(&ticks(&axis(10.0, 1.0, 3), 900, |_| 1.0)), ["10", "11", "12"]);
        let t = ticks(&axis(-0.3, 0.1, 7), 700, |_| 150.0);
        assert_eq!(labels(&t), ["-0.2", "0.0", "0.2"]);
        // Time samples of 4 ms starting at 2 ms: ticks land between samples.
        let t = ticks(&axis(2.0, 4.0, 100), 400, |_| 70.0);
        assert_eq!(labels(&t)[..3], ["100", "200", "300"]);
        assert!((t[0].offset - (98.0 / 4.0 + 0.5) * 4.0).abs() < 1e-9);
    }

    #[test]
    fn a_single_sample_gets_a_single_tick() {
        assert_eq!(labels(&ticks(&axis(120.0, 1.0, 1), 800, |_| 50.0)), ["120"]);
        let t = ticks(&axis(12.5, 4.0, 1), 800, |_| 50.0);
        assert_eq!(labels(&t), ["12.5"]);
        assert_eq!(t[0].offset, 400.0);
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
