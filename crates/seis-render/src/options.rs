//! How a slice is drawn: the `[render]` options of a job, their limits and their checks, and the title
//! template they may give. Kept apart from the drawing so that a job can be checked without drawing.

use serde::{Deserialize, Serialize};

use seis_core::choice::Choice;
use seis_core::error::{Error, Result};

use crate::clip::ClipSetting;
use crate::colormap::Colormap;

/// How a slice is drawn (the `display` render option).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Display {
    /// Every sample coloured by the colour map.
    #[default]
    Density,
    /// One curve per trace, swinging sideways with the value.
    Wiggle,
    /// Wiggles with the positive lobes filled black (variable area).
    Va,
}

impl Choice for Display {
    const CHOICES: &'static [(Self, &'static str, &'static str)] = &[
        (Display::Density, "density", "Every sample coloured by the colour map."),
        (Display::Wiggle, "wiggle", "One curve per trace, swinging sideways with the value."),
        (Display::Va, "va", "Wiggles with the positive lobes filled black (variable area)."),
    ];
}

/// Most traces a wiggle picture draws; a wider slice is drawn as density, with a note.
pub const MAX_WIGGLE_TRACES: usize = 600;
/// Pixels between neighbouring wiggle traces, at least.
pub(crate) const WIGGLE_SPACING_PX: u32 = 4;

/// How to draw a slice. Deserialised from the `[render]` table of a job file; every field may be left out.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RenderOptions {
    /// Colour map of amplitudes (and of the cosine of phase). Default `seismic`.
    pub colormap: Colormap,
    /// The clip is this percentile of |value| over the finite samples, in (0, 100]. Default 99.
    pub clip_percentile: f64,
    /// Which pictures share a percentile clip (`"picture"`, `"kind"`, `"job"`), or a fixed clip (a number).
    /// Default `"kind"`.
    pub clip: ClipSetting,
    /// Draw the frame, ticks, axis titles, title, colour bar, scale bar and notes; `false` gives the data
    /// area alone. Default true.
    pub annotate: bool,
    /// Write what produced the picture (input, method, velocity, dz, fmax, version, date) under it.
    /// Default true.
    pub footer: bool,
    /// `density` (colours), `wiggle` or `va` (variable area). Default `density`.
    pub display: Display,
    /// Automatic gain control of the picture (not of the files): the window, in the unit of the vertical
    /// axis (m for depth sections, ms for time sections). Default none.
    pub agc_window: Option<f64>,
    /// How an enlarged axis is drawn: `auto`, `nearest` (cells) or `linear`. Default `auto`.
    pub sampling: Sampling,
    /// Stretch of the vertical axis relative to the true aspect. Default 1.
    pub vertical_exaggeration: f64,
    /// The data area is enlarged to at least this many pixels wide (unless that breaks `max_pixels`).
    /// Default 800.
    pub min_width: u32,
    /// The whole picture (its frame, labels, colour bar, notes and footer included) is kept to at most this
    /// many pixels, the data area shrunk as needed. Default 16 777 216 (4096²); at least 262 144 with
    /// `annotate`.
    pub max_pixels: u64,
    /// Velocity in m/s that gives a two-way-time axis a length for the aspect (depth = v · t / 2).
    /// Default 2000, so that 1 ms is drawn as long as 1 m.
    pub time_aspect_velocity: f64,
    /// Title drawn above the image, a template: `{product}`, `{quantity}`, `{method}`, `{input}`,
    /// `{velocity}`, `{dz}`, `{fmax}`, `{scale}`, `{date}`, `{version}` are replaced by their values.
    /// Default `{product}`.
    pub title: Option<String>,
}

impl Default for RenderOptions {
    fn default() -> Self {
        RenderOptions {
            colormap: Colormap::Seismic,
            clip_percentile: 99.0,
            clip: ClipSetting::Kind,
            annotate: true,
            footer: true,
            display: Display::Density,
            agc_window: None,
            sampling: Sampling::Auto,
            vertical_exaggeration: 1.0,
            min_width: 800,
            max_pixels: 1 << 24,
            time_aspect_velocity: 2000.0,
            title: None,
        }
    }
}

/// The fewest pixels a picture with a frame may be given: the frame, labels, colour bar, notes, footer and
/// a title of [`MAX_TITLE_CHARS`] around a small data area.
const MIN_FRAMED_PIXELS: u64 = 1 << 18;

/// The longest title, as a template and filled in: one line across a picture.
pub const MAX_TITLE_CHARS: usize = 200;

/// The most pixels a picture may be given: 256 Mi pixels is 768 MiB of RGB.
const MAX_PIXELS_LIMIT: u64 = 1 << 28;

/// The fields a title template may name.
pub const TITLE_FIELDS: [&str; 10] =
    ["product", "quantity", "method", "input", "velocity", "dz", "fmax", "scale", "date", "version"];

impl RenderOptions {
    /// Reject options that cannot give an image, naming the option (by its key in these options: a job
    /// puts it under `output.render`).
    pub fn validate(&self) -> Result<()> {
        let fail = |name: &str, rule: &str, value: String| {
            Err(Error::at_key(name, format!("render option `{name}` must be {rule}, got {value}")))
        };
        if !(self.clip_percentile > 0.0 && self.clip_percentile <= 100.0) {
            return fail("clip_percentile", "in (0, 100]", self.clip_percentile.to_string());
        }
        if let ClipSetting::Fixed(c) = self.clip {
            if !(c > 0.0 && c <= f32::MAX as f64) {
                return fail(
                    "clip",
                    "a positive single-precision number or \"picture\", \"kind\", \"job\"",
                    c.to_string(),
                );
            }
        }
        if !(self.vertical_exaggeration.is_finite() && self.vertical_exaggeration > 0.0) {
            return fail("vertical_exaggeration", "a positive number", self.vertical_exaggeration.to_string());
        }
        if self.min_width == 0 {
            return fail("min_width", "at least 1", "0".into());
        }
        if !(1..=MAX_PIXELS_LIMIT).contains(&self.max_pixels) {
            return fail("max_pixels", &format!("in 1..={MAX_PIXELS_LIMIT}"), self.max_pixels.to_string());
        }
        if self.annotate && self.max_pixels < MIN_FRAMED_PIXELS {
            let rule = format!(
                "at least {MIN_FRAMED_PIXELS} with annotate = true (the frame, labels and colour bar need room)"
            );
            return fail("max_pixels", &rule, self.max_pixels.to_string());
        }
        if !(self.time_aspect_velocity.is_finite() && self.time_aspect_velocity > 0.0) {
            return fail("time_aspect_velocity", "a positive number", self.time_aspect_velocity.to_string());
        }
        if let Some(w) = self.agc_window.filter(|w| !(w.is_finite() && *w > 0.0)) {
            return fail("agc_window", "a positive length (m for depth, ms for time)", w.to_string());
        }
        if let Some(t) = &self.title {
            if t.chars().count() > MAX_TITLE_CHARS {
                let rule = format!("at most {MAX_TITLE_CHARS} characters (one line above the picture)");
                return fail("title", &rule, format!("{} characters", t.chars().count()));
            }
            if let Err(e) = fill_template(t, &|_| Some(String::new())) {
                return fail("title", &format!("a template with fields from {}", TITLE_FIELDS.join(", ")), e);
            }
        }
        Ok(())
    }
}

/// Replace every `{field}` of `template` by `value(field)`; `{{` and `}}` are literal braces. An unknown
/// field (for which `value` gives `None`) or an unclosed brace is an error naming it.
pub fn fill_template(template: &str, value: &dyn Fn(&str) -> Option<String>) -> std::result::Result<String, String> {
    let mut out = String::new();
    let mut rest = template;
    while let Some(i) = rest.find(['{', '}']) {
        out.push_str(&rest[..i]);
        let tail = &rest[i..];
        if tail.starts_with("{{") || tail.starts_with("}}") {
            out.push_str(&tail[..1]);
            rest = &tail[2..];
        } else if let Some(field) = tail.strip_prefix('{') {
            let close = field.find('}').ok_or_else(|| format!("{template:?} has an unclosed `{{`"))?;
            let name = &field[..close];
            if !TITLE_FIELDS.contains(&name) {
                return Err(format!("{template:?} names an unknown field {{{name}}}"));
            }
            out.push_str(&value(name).ok_or_else(|| format!("{template:?} names an unknown field {{{name}}}"))?);
            rest = &field[close + 1..];
        } else {
            return Err(format!("{template:?} has a `}}` without its `{{` (write `}}}}` for a brace)"));
        }
    }
    out.push_str(rest);
    Ok(out)
}

/// How an enlarged axis carries its samples onto pixels (the `sampling` render option).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Sampling {
    /// Cells where a sample gets at least two pixels, interpolation below that.
    #[default]
    Auto,
    /// Every sample a cell of one colour.
    Nearest,
    /// Linear interpolation between sample centres.
    Linear,
}

impl Choice for Sampling {
    const CHOICES: &'static [(Self, &'static str, &'static str)] = &[
        (Sampling::Auto, "auto", "Cells where a sample gets at least two pixels, interpolation below that."),
        (Sampling::Nearest, "nearest", "Every sample a cell of one colour."),
        (Sampling::Linear, "linear", "Linear interpolation between sample centres."),
    ];
}

/// Pixels per sample from which `auto` draws cells.
const CELLS_FROM: f64 = 2.0;

impl Sampling {
    /// Whether an axis of `n_in` samples on `n_out` pixels is drawn as cells.
    pub(crate) fn cells(self, n_in: usize, n_out: usize) -> bool {
        let enlargement = n_out as f64 / n_in as f64;
        match self {
            Sampling::Auto => enlargement >= CELLS_FROM,
            Sampling::Nearest => enlargement > 1.0,
            Sampling::Linear => false,
        }
    }
}
