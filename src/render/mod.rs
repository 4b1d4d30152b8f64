//! Pictures of slices for reports: colour maps or wiggles, shared clips, axes with line numbers and a
//! distance scale, map orientation, provenance, anti-aliased lettering; PNG files with JSON sidecars.
//!
//! A slice becomes a picture in this order: a display gain may be applied (`gain`, pictures only); the clip
//! is taken from the values, over this picture or over a group of pictures ([`clip`]); the data area is
//! sized from the true spacing of the axes and the samples are carried onto it as cells or interpolated
//! (`resample`); values become colours ([`colormap`]) or wiggle traces (`wiggle`); the axes, colour bar,
//! scale bar, north arrow, notes and footer are drawn around it (`annotate`, lettering by `text`); the PNG
//! (`encode`, a palette PNG when the picture has few colours) and its JSON [`sidecar`] are written.
//! [`section`] cuts inline, crossline and horizontal slices out of a volume, the last in map orientation
//! ([`orientation`]); [`page`] writes the `index.html` of a results folder.
//!
//! `docs/rendering.md` describes the conventions (polarity, aspect, clip) and the sidecar for users.

mod annotate;
mod canvas;
pub mod clip;
pub mod colormap;
mod encode;
mod gain;
pub mod orientation;
pub mod page;
pub mod panels;
mod resample;
pub mod section;
pub mod sidecar;
pub mod text;
mod wiggle;

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, IoContext, Result};
use crate::io::output::{commit_together, write_sealed, FileDigest, SealedOutput, TempOutput};
use crate::volume::{Domain, LineAxis, SampleAxis};

use canvas::Canvas;
pub use clip::{ClipScope, ClipSetting, ClipSource};
pub use colormap::Colormap;
pub use encode::{write_png, write_rgb_png};
pub use orientation::MapView;
pub use panels::{Panel, PanelRecord};
pub use resample::{Aspect, Sampling};
pub use section::SliceData;
pub use sidecar::{AxisRecord, ClipRecord, Sidecar};

/// One axis of a slice: sample `i` lies at `origin + i · step`, in `unit`.
#[derive(Clone, Debug, PartialEq)]
pub struct PlotAxis {
    /// `iline`, `xline`, `depth` or `twt` for slices of a volume; any name is drawn as given.
    pub name: String,
    /// `m`, `ms`, or empty for line numbers.
    pub unit: String,
    pub origin: f64,
    pub step: f64,
    pub len: usize,
    /// True distance between neighbouring samples in metres, which sets the aspect; `None` when unknown
    /// (a time axis, or lines of a survey without coordinates).
    pub spacing_m: Option<f64>,
}

impl PlotAxis {
    /// An axis of line numbers, `spacing_m` apart on the ground.
    pub fn lines(name: &str, axis: &LineAxis, spacing_m: Option<f64>) -> Self {
        PlotAxis {
            name: name.into(),
            unit: String::new(),
            origin: axis.first as f64,
            step: axis.step as f64,
            len: axis.len,
            spacing_m,
        }
    }

    /// The sample axis of traces: depth in metres (its step is its spacing) or two-way time in ms.
    pub fn samples(axis: &SampleAxis) -> Self {
        let spacing_m = match axis.domain {
            Domain::Depth => Some(axis.step.abs()),
            Domain::Time => None,
        };
        PlotAxis {
            name: axis.domain.axis_name().into(),
            unit: axis.domain.unit().into(),
            origin: axis.origin,
            step: axis.step,
            len: axis.len,
            spacing_m,
        }
    }

    /// The value at a (possibly fractional) sample index.
    pub fn value(&self, index: f64) -> f64 {
        self.origin + self.step * index
    }

    pub fn last(&self) -> f64 {
        self.value(self.len.saturating_sub(1) as f64)
    }

    /// The axis title: the name, and the unit in parentheses where there is one.
    pub fn title(&self) -> String {
        if self.unit.is_empty() {
            self.name.clone()
        } else {
            format!("{} ({})", self.name, self.unit)
        }
    }

    fn check(&self, role: &str) -> Result<()> {
        let fail = |what: String| Err(Error::Request(format!("cannot render the {role} axis `{}`: {what}", self.name)));
        if self.len == 0 {
            return fail("it has no samples".into());
        }
        if !self.origin.is_finite() || !self.step.is_finite() || self.step == 0.0 {
            return fail(format!("origin {} and step {} must be finite, the step non-zero", self.origin, self.step));
        }
        match self.spacing_m {
            Some(d) if !(d.is_finite() && d > 0.0) => fail(format!("spacing {d} m must be positive")),
            _ => Ok(()),
        }
    }
}

/// A 2-D slice to draw: `data` is row-major, `rows.len` rows of `cols.len` values.
#[derive(Clone, Debug)]
pub struct Slice<'a> {
    pub data: &'a [f32],
    /// Vertical, drawn downwards: the first sample is the top row (the shallowest, for a section).
    pub rows: PlotAxis,
    /// Horizontal, drawn left to right.
    pub cols: PlotAxis,
}

/// How a slice is drawn (the `display` render option).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
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

/// Most traces a wiggle picture draws; a wider slice is drawn as density, with a note.
pub const MAX_WIGGLE_TRACES: usize = 600;
/// Pixels between neighbouring wiggle traces, at least.
const WIGGLE_SPACING_PX: u32 = 4;

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

/// What produced a picture, for its footer, its title template and its sidecar: filled in by the run
/// (see `products.rs`) or by `seisimage plot`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    /// The input file's name.
    pub input: String,
    /// The migration method, or what the picture shows of an unmigrated input.
    pub method: Option<String>,
    /// The velocity in a few words, e.g. `v(z) 1550-2000 m/s`.
    pub velocity: Option<String>,
    pub dz_m: Option<f64>,
    pub fmax_hz: Option<f64>,
    /// `seisimage 0.1.0`.
    pub software: String,
    /// The day of the run, UTC (`2026-11-21`).
    pub date: String,
}

impl Provenance {
    /// Provenance of a picture drawn now from `input`, by nothing but this program.
    pub fn now(input: &Path) -> Self {
        Provenance {
            input: input.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
            software: software(),
            date: today(),
            ..Default::default()
        }
    }

    /// The footer, as lines of text.
    pub fn footer(&self) -> Vec<String> {
        let mut parts = vec![format!("input {}", self.input)];
        if let Some(m) = &self.method {
            parts.push(m.clone());
        }
        if let Some(v) = &self.velocity {
            parts.push(v.clone());
        }
        if let Some(dz) = self.dz_m {
            parts.push(format!("dz {} m", number(dz)));
        }
        if let Some(f) = self.fmax_hz {
            parts.push(format!("fmax {} Hz", number(f)));
        }
        parts.push(self.software.clone());
        parts.push(self.date.clone());
        vec![parts.join(" · ")]
    }
}

/// Today's date, UTC.
pub fn today() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()[..10].to_string()
}

fn number(v: f64) -> String {
    let s = format!("{v:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// How the values of a picture map onto its colour scale.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum ValueRange {
    /// `[-clip, clip]`, zero in the middle (amplitudes).
    Symmetric,
    /// `[0, clip]` (envelopes, frequencies).
    FromZero,
    /// A fixed range whatever the data (phase in degrees, cosine of phase).
    Fixed { lo: f64, hi: f64 },
}

/// What the values of a picture are.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Quantity {
    /// `amplitude`, `envelope`, `instantaneous phase`, ...
    pub name: String,
    /// `°`, `Hz`, `1/km`, or empty.
    pub unit: String,
    pub range: ValueRange,
    /// The colour map this quantity is drawn with; `None`: the `colormap` option.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub colormap: Option<Colormap>,
    /// Whether the display gain applies (it does to amplitudes only).
    #[serde(skip)]
    pub gain: bool,
}

impl Quantity {
    pub fn amplitude() -> Self {
        Quantity {
            name: "amplitude".into(),
            unit: String::new(),
            range: ValueRange::Symmetric,
            colormap: None,
            gain: true,
        }
    }

    /// The name with its unit in parentheses, where it has one.
    pub fn title(&self) -> String {
        if self.unit.is_empty() {
            self.name.clone()
        } else {
            format!("{} ({})", self.name, self.unit)
        }
    }
}

/// The clip of a picture, decided for it alone or for a group of pictures (see [`decide_clip`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Clip {
    pub value: f32,
    pub source: ClipSource,
    /// Over which pictures it was taken; `None` for a fixed clip or range.
    pub scope: Option<ClipScope>,
    /// The pictures it was taken over, in words: "in this picture", "over the 3 inline pictures of this run".
    pub over: String,
}

/// The clip of the values of a group of pictures of one quantity (their values after the display gain;
/// see [`display_values`]). `over` says which pictures they are, for the note under each.
pub fn decide_clip(values: &[&[f32]], quantity: &Quantity, opts: &RenderOptions, scope: ClipScope, over: &str) -> Clip {
    match (quantity.range, opts.clip) {
        (ValueRange::Fixed { hi, .. }, _) => {
            Clip { value: hi as f32, source: ClipSource::Fixed, scope: None, over: "the full range".into() }
        }
        // A fixed clip is in the units of the data: amplitudes and envelopes, not frequencies.
        (_, ClipSetting::Fixed(c)) if quantity.unit.is_empty() => {
            Clip { value: c as f32, source: ClipSource::Fixed, scope: None, over: "fixed".into() }
        }
        _ => {
            let (value, source) = clip::shared_clip(values, opts.clip_percentile);
            Clip { value, source, scope: Some(scope), over: over.to_string() }
        }
    }
}

impl Clip {
    /// The values at the two ends of the colour scale.
    pub fn range(&self, quantity: &Quantity) -> (f32, f32) {
        match quantity.range {
            ValueRange::Symmetric => (-self.value, self.value),
            ValueRange::FromZero => (0.0, self.value),
            ValueRange::Fixed { lo, hi } => (lo as f32, hi as f32),
        }
    }

    /// The rule that set the colour scale, in words.
    pub fn rule(&self, quantity: &Quantity) -> String {
        let (lo, hi) = self.range(quantity);
        let unit = match quantity.unit.as_str() {
            "" => String::new(),
            "°" => "°".into(),
            u => format!(" {u}"),
        };
        let span = match quantity.range {
            ValueRange::Symmetric => format!("±{}{unit}", annotate::amplitude_label(self.value)),
            _ => format!("{} to {}{unit}", annotate::amplitude_label(lo), annotate::amplitude_label(hi)),
        };
        let name = &quantity.name;
        let why = match (self.source, quantity.range) {
            (_, ValueRange::Fixed { .. }) => format!("the whole range of {name}"),
            (ClipSource::Fixed, _) => "a fixed clip".into(),
            (ClipSource::Percentile { percentile }, _) => {
                format!("the {} percentile of |{name}| {}", ordinal(percentile), self.over)
            }
            (ClipSource::MaxAbs { percentile }, _) => format!(
                "the largest |{name}| {} (its {} percentile is zero: most samples are zero)",
                self.over,
                ordinal(percentile)
            ),
        };
        match quantity.range {
            ValueRange::Fixed { .. } => format!("Colour scale {span}: {why}."),
            _ => format!("Colour scale {span}: {why}; values beyond it take the end colours."),
        }
    }
}

/// `99` → `99th`, `99.5` → `99.5th`, `2` → `2nd`.
fn ordinal(p: f64) -> String {
    let n = number(p);
    let suffix = if p.fract() != 0.0 {
        "th"
    } else {
        match (p as i64 % 10, p as i64 % 100) {
            (1, x) if x != 11 => "st",
            (2, x) if x != 12 => "nd",
            (3, x) if x != 13 => "rd",
            _ => "th",
        }
    };
    format!("{n}{suffix}")
}

/// Whether `axis` runs along traces (depth or time), so that a display gain applies along it.
fn along_traces(axis: &PlotAxis) -> bool {
    matches!(axis.unit.as_str(), "m" | "ms" | "s") && matches!(axis.name.as_str(), "depth" | "twt" | "time")
}

/// The values a picture of `slice` shows: the slice itself, or with the display gain applied where it
/// applies (amplitudes of sections).
pub fn display_values<'s>(slice: &Slice<'s>, quantity: &Quantity, opts: &RenderOptions) -> std::borrow::Cow<'s, [f32]> {
    match opts.agc_window {
        Some(w) if quantity.gain && along_traces(&slice.rows) => {
            std::borrow::Cow::Owned(gain::agc(slice.data, &slice.rows, slice.cols.len, w))
        }
        _ => std::borrow::Cow::Borrowed(slice.data),
    }
}

/// What a picture shows besides its samples: given by the caller.
#[derive(Clone, Debug)]
pub struct PictureInfo {
    /// The product's name, e.g. `Inline 120` (the `{product}` of the title).
    pub product: String,
    pub quantity: Quantity,
    pub provenance: Option<Provenance>,
    /// The clip decided for a group of pictures this one belongs to; `None`: its own.
    pub clip: Option<Clip>,
    /// How a horizontal slice is arranged (see [`SliceData::horizontal`]).
    pub map: Option<MapView>,
    /// Slices side by side, each labelled by its own axis (see [`panels`]); empty for one slice.
    pub panels: Vec<Panel>,
}

impl PictureInfo {
    /// An amplitude picture named `product`, with its own clip.
    pub fn amplitude(product: &str) -> Self {
        PictureInfo {
            product: product.into(),
            quantity: Quantity::amplitude(),
            provenance: None,
            clip: None,
            map: None,
            panels: Vec::new(),
        }
    }
}

/// What [`render_png`] wrote.
#[derive(Clone, Debug, PartialEq)]
pub struct RenderedImage {
    pub png: PathBuf,
    /// Size and SHA-256 of the image file.
    pub png_digest: FileDigest,
    pub sidecar: PathBuf,
    pub sidecar_digest: FileDigest,
    /// The clip used: amplitudes in `[-clip, clip]` span the colour map.
    pub clip: f32,
    pub width: u32,
    pub height: u32,
    /// Bytes written, image and sidecar together.
    pub bytes: u64,
}

/// The sidecar of an image: same folder and stem, extension `.json`.
pub fn sidecar_path(png: &Path) -> PathBuf {
    png.with_extension("json")
}

/// An image and its sidecar written under temporary names and measured, not yet in place.
pub struct SealedImage {
    /// The sidecar first, then the image: the order they are to be moved into place.
    pub files: [SealedOutput; 2],
    pub clip: f32,
    pub width: u32,
    pub height: u32,
}

/// Draw `slice` (amplitudes, with its own clip) into a PNG at `path` and write its sidecar next to it.
///
/// Both are flushed to disk together; the sidecar is moved into place first, and removed again if the image
/// cannot follow, so an image is never found without its sidecar nor either one half-written.
pub fn render_png(path: &Path, slice: &Slice, opts: &RenderOptions) -> Result<RenderedImage> {
    render_png_with(path, slice, opts, &PictureInfo::amplitude(""))
}

/// [`render_png`] of any quantity, with what the caller knows of the picture.
pub fn render_png_with(path: &Path, slice: &Slice, opts: &RenderOptions, info: &PictureInfo) -> Result<RenderedImage> {
    let SealedImage { files, clip, width, height } = render_png_sealed(path, slice, opts, info)?;
    let mut done = commit_together(files.into())?.into_iter();
    let (Some((sidecar, sidecar_digest)), Some((png, png_digest))) = (done.next(), done.next()) else {
        unreachable!("two files committed")
    };
    let bytes = png_digest.bytes + sidecar_digest.bytes;
    Ok(RenderedImage { png, png_digest, sidecar, sidecar_digest, clip, width, height, bytes })
}

/// Check a slice can be drawn: its axes and the number of its values.
fn check_slice(slice: &Slice) -> Result<()> {
    slice.rows.check("row")?;
    slice.cols.check("column")?;
    let (n_rows, n_cols) = (slice.rows.len, slice.cols.len);
    if slice.data.len() != n_rows * n_cols {
        return Err(Error::Request(format!(
            "cannot render a slice of {} values as {n_rows} rows × {n_cols} columns",
            slice.data.len()
        )));
    }
    Ok(())
}

/// [`render_png_with`] up to its files complete under temporary names: a caller writing several products
/// commits them all together (see [`commit_together`]).
pub fn render_png_sealed(path: &Path, slice: &Slice, opts: &RenderOptions, info: &PictureInfo) -> Result<SealedImage> {
    opts.validate()?;
    check_slice(slice)?;
    panels::check(&info.panels, slice.cols.len)?;
    let (n_rows, n_cols) = (slice.rows.len, slice.cols.len);
    let sidecar_path = sidecar_path(path);
    if sidecar_path == path {
        return Err(Error::Request(format!("{}: an image cannot be named like its .json sidecar", path.display())));
    }

    let mut steps = crate::stats::Stages::default();
    let quantity = &info.quantity;
    let values = display_values(slice, quantity, opts);
    let gained = matches!(values, std::borrow::Cow::Owned(_));
    let clip = match &info.clip {
        Some(c) => c.clone(),
        None => decide_clip(&[&values], quantity, opts, ClipScope::Picture, "in this picture"),
    };
    let (lo, hi) = clip.range(quantity);
    steps.lap("clip");

    let mut notes = Vec::new();
    let display = match opts.display {
        Display::Density => Display::Density,
        _ if n_cols > MAX_WIGGLE_TRACES || quantity.range != ValueRange::Symmetric => {
            notes.push(format!(
                "Drawn in colour: wiggles are drawn for amplitudes of up to {MAX_WIGGLE_TRACES} traces, this slice has {n_cols}."
            ));
            Display::Density
        }
        d => d,
    };
    let mut sizing = opts.clone();
    if display != Display::Density {
        sizing.min_width = sizing.min_width.max(WIGGLE_SPACING_PX * n_cols as u32);
    }
    let colormap = quantity.colormap.unwrap_or(opts.colormap);
    let title = opts.title.as_deref().unwrap_or("{product}");
    let title = fill_template(title, &|field| Some(title_field(field, info, &clip)))
        .map_err(|e| Error::at_key("title", format!("render option `title`: {e}")))?;
    let title = (!title.trim().is_empty()).then(|| shortened(&title, MAX_TITLE_CHARS));
    notes.push(match display {
        Display::Density => clip.rule(quantity),
        _ => wiggle::rule(&clip, quantity),
    });
    if let (Some(w), true) = (opts.agc_window, gained) {
        notes.push(format!(
            "Display gain: AGC over {} {} (the picture only; the files keep their amplitudes).",
            number(w),
            slice.rows.unit
        ));
    }
    // The aspect does not depend on the size: the note is known before the picture is sized.
    let aspect = resample::plot_size(&slice.rows, &slice.cols, &sizing).aspect;
    if let Some(note) = annotate::aspect_note(&aspect, opts.vertical_exaggeration, info.map.is_some()) {
        notes.push(note);
    }
    if let Some(map) = &info.map {
        notes.push(map.note.clone());
    }
    let footer = match (&info.provenance, opts.footer) {
        (Some(p), true) => p.footer(),
        (None, true) => vec![format!("{} · {}", software(), today())],
        _ => Vec::new(),
    };
    let legend = annotate::Legend {
        title: title.as_deref(),
        bar: (display == Display::Density).then(|| annotate::ColourBar { colormap, lo, hi, title: quantity.title() }),
        notes: &notes,
        footer: &footer,
        metres_across: slice.cols.spacing_m.map(|d| d * n_cols as f64),
        north_deg: info.map.as_ref().and_then(|m| m.north_deg),
        panels: &info.panels,
    };
    let size = data_area(slice, &sizing, &legend)?;
    let cells = [opts.sampling.cells(n_rows, size.height), opts.sampling.cells(n_cols, size.width)];
    let data = match display {
        Display::Density => {
            let resampled = resample::resample(&values, [n_rows, n_cols], [size.height, size.width], opts.sampling);
            let palette = colormap.palette_over(lo, hi);
            Canvas::paint(size.width, size.height, &resampled, |v| palette.colour(v))
        }
        Display::Wiggle | Display::Va => {
            wiggle::draw(&values, [n_rows, n_cols], [size.height, size.width], clip.value, display == Display::Va)
        }
    };
    steps.lap("draw");

    let (canvas, data_left, data_top) = if opts.annotate {
        let framed = annotate::frame(&data, &slice.rows, &slice.cols, &legend);
        (framed.canvas, framed.data_left, framed.data_top)
    } else {
        (data, 0, 0)
    };
    steps.lap("annotate");

    let (png_out, file) = TempOutput::create(path)?;
    encode_png(&png_out, file, &canvas, title.as_deref())?;
    let png = png_out.seal()?;
    steps.lap("encode");

    let sidecar = Sidecar {
        image: path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
        width: canvas.width as u32,
        height: canvas.height as u32,
        rows: AxisRecord::new(&slice.rows, data_top, size.height),
        cols: AxisRecord::new(&slice.cols, data_left, size.width),
        panels: panels::records(&info.panels, n_cols, data_left, size.width),
        quantity: sidecar::QuantityRecord { name: quantity.name.clone(), unit: quantity.unit.clone() },
        display,
        colormap,
        polarity: colormap.polarity().into(),
        clip: ClipRecord { value: clip.value, source: clip.source, scope: clip.scope },
        scale: [lo, hi],
        sampling: sidecar::SamplingRecord::new(cells, [n_rows, n_cols], [size.height, size.width]),
        gain: opts
            .agc_window
            .filter(|_| gained)
            .map(|w| sidecar::GainRecord { agc_window: w, unit: slice.rows.unit.clone() }),
        no_data_rgb: colormap::NO_DATA,
        nonfinite_samples: slice.data.iter().filter(|v| !v.is_finite()).count(),
        aspect: size.aspect,
        vertical_exaggeration: opts.vertical_exaggeration,
        map: info.map.clone(),
        title,
        notes,
        footer,
        provenance: info.provenance.clone(),
        software: software(),
    };
    let json = serde_json::to_vec_pretty(&sidecar).expect("a sidecar always serialises");
    let sidecar = write_sealed(&sidecar_path, &json)?;
    steps.lap("sidecar");
    steps.log_trace(&format!("drawing {}", path.display()));
    Ok(SealedImage {
        files: [sidecar, png],
        clip: clip.value,
        width: canvas.width as u32,
        height: canvas.height as u32,
    })
}

/// The value of a title template field for a picture.
fn title_field(field: &str, info: &PictureInfo, clip: &Clip) -> String {
    let p = info.provenance.clone().unwrap_or_default();
    match field {
        "product" => info.product.clone(),
        "quantity" => info.quantity.name.clone(),
        "method" => p.method.unwrap_or_default(),
        "input" => p.input,
        "velocity" => p.velocity.unwrap_or_default(),
        "dz" => p.dz_m.map(|d| format!("{} m", number(d))).unwrap_or_default(),
        "fmax" => p.fmax_hz.map(|f| format!("{} Hz", number(f))).unwrap_or_default(),
        "scale" => {
            let (lo, hi) = clip.range(&info.quantity);
            match info.quantity.range {
                ValueRange::Symmetric => format!("±{}", annotate::amplitude_label(hi)),
                _ => format!("{} to {}", annotate::amplitude_label(lo), annotate::amplitude_label(hi)),
            }
        }
        "date" => {
            if p.date.is_empty() {
                today()
            } else {
                p.date
            }
        }
        "version" => software(),
        _ => String::new(),
    }
}

fn software() -> String {
    format!("seisimage {}", env!("CARGO_PKG_VERSION"))
}

/// The data area of the picture of `slice` drawn with `opts`: as [`resample::plot_size`] makes it, shrunk
/// until the whole picture, with the frame, labels, colour bar, notes and footer that `legend` adds around
/// it, keeps to `max_pixels`, whatever the proportions of the slice and the vertical exaggeration.
fn data_area(slice: &Slice, opts: &RenderOptions, legend: &annotate::Legend) -> Result<resample::PlotSize> {
    let mut budget = opts.max_pixels;
    loop {
        let size = resample::plot_size(&slice.rows, &slice.cols, &RenderOptions { max_pixels: budget, ..opts.clone() });
        if !opts.annotate {
            return Ok(size);
        }
        let (w, h) = annotate::frame_size(size.width, size.height, &slice.rows, &slice.cols, legend);
        let pixels = (w as u64).saturating_mul(h as u64);
        if pixels <= opts.max_pixels {
            return Ok(size);
        }
        let smaller = (budget as f64 * opts.max_pixels as f64 / pixels as f64 * 0.95) as u64;
        if smaller == 0 || smaller >= budget || size.width * size.height == 1 {
            let message = format!(
                "render option `max_pixels` = {} cannot hold this picture's frame (its labels, colour bar and notes \
                 alone take {w} × {h} pixels): raise it, or set annotate = false",
                opts.max_pixels
            );
            return Err(Error::at_key("max_pixels", message));
        }
        budget = smaller;
    }
}

/// `text` cut to at most `max` characters, an ellipsis marking the cut.
fn shortened(text: &str, max: usize) -> String {
    match text.char_indices().nth(max.saturating_sub(1)) {
        Some((at, _)) if text.chars().count() > max => format!("{}…", &text[..at]),
        _ => text.to_string(),
    }
}

/// Write `canvas` as a PNG to the temporary file of `out`.
fn encode_png(out: &TempOutput, mut file: std::fs::File, canvas: &Canvas, title: Option<&str>) -> Result<()> {
    let name = out.final_path();
    write_png(&mut file, canvas.width as u32, canvas.height as u32, &canvas.rgb, title).at(name)?;
    file.flush().at(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_default_and_reject_unknown_fields() {
        let opts: RenderOptions = toml::from_str("colormap = \"gray\"\nclip_percentile = 98.5").unwrap();
        assert_eq!(opts, RenderOptions { colormap: Colormap::Gray, clip_percentile: 98.5, ..Default::default() });
        let err = toml::from_str::<RenderOptions>("clip_percentil = 98").unwrap_err().to_string();
        assert!(err.contains("clip_percentil"), "{err}");
        assert_eq!(toml::from_str::<RenderOptions>("").unwrap(), RenderOptions::default());
        let opts: RenderOptions = toml::from_str("clip = \"job\"\ndisplay = \"va\"\nagc_window = 250").unwrap();
        assert_eq!((opts.clip, opts.display, opts.agc_window), (ClipSetting::Job, Display::Va, Some(250.0)));
    }

    #[test]
    fn validation_names_the_bad_option() {
        let cases = [
            RenderOptions { clip_percentile: 0.0, ..Default::default() },
            RenderOptions { clip_percentile: 100.5, ..Default::default() },
            RenderOptions { clip_percentile: f64::NAN, ..Default::default() },
            RenderOptions { clip: ClipSetting::Fixed(-1.0), ..Default::default() },
            RenderOptions { vertical_exaggeration: 0.0, ..Default::default() },
            RenderOptions { min_width: 0, ..Default::default() },
            RenderOptions { max_pixels: 0, ..Default::default() },
            RenderOptions { time_aspect_velocity: f64::INFINITY, ..Default::default() },
            RenderOptions { agc_window: Some(0.0), ..Default::default() },
            RenderOptions { title: Some("{product} at {depth}".into()), ..Default::default() },
        ];
        let names = [
            "clip_percentile",
            "clip_percentile",
            "clip_percentile",
            "clip",
            "vertical_exaggeration",
            "min_width",
            "max_pixels",
            "time_aspect_velocity",
            "agc_window",
            "title",
        ];
        for (opts, name) in cases.iter().zip(names) {
            let err = opts.validate().unwrap_err().to_string();
            assert!(err.contains(&format!("`{name}`")), "{err}");
        }
        assert!(RenderOptions::default().validate().is_ok());
        let fixed = RenderOptions { clip_percentile: 100.0, clip: ClipSetting::Fixed(3.0), ..Default::default() };
        assert!(fixed.validate().is_ok());
    }

    #[test]
    fn title_templates_fill_their_fields() {
        let value = |f: &str| Some(format!("<{f}>"));
        assert_eq!(fill_template("{product} PSDM", &value).unwrap(), "<product> PSDM");
        assert_eq!(fill_template("{{literal}} {method}", &value).unwrap(), "{literal} <method>");
        assert_eq!(fill_template("no fields", &value).unwrap(), "no fields");
        assert!(fill_template("{product", &value).unwrap_err().contains("unclosed"));
        assert!(fill_template("{colour}", &value).unwrap_err().contains("{colour}"));
        assert!(fill_template("a } b", &value).is_err());
    }

    #[test]
    fn clip_rules_say_where_the_clip_comes_from() {
        let q = Quantity::amplitude();
        let opts = RenderOptions::default();
        let data = [1.0f32, -2.0, 3.0, -4.0];
        let c = decide_clip(&[&data], &q, &opts, ClipScope::Kind, "over the 3 inline pictures of this run");
        let rule = c.rule(&q);
        assert!(rule.contains("99th percentile of |amplitude| over the 3 inline pictures"), "{rule}");
        assert!(rule.starts_with("Colour scale ±3.97"), "{rule}");
        let fixed = RenderOptions { clip: ClipSetting::Fixed(2.0), ..Default::default() };
        assert_eq!(decide_clip(&[&data], &q, &fixed, ClipScope::Kind, "").value, 2.0);
        let phase = Quantity {
            name: "phase".into(),
            unit: "°".into(),
            range: ValueRange::Fixed { lo: -180.0, hi: 180.0 },
            colormap: Some(Colormap::Phase),
            gain: false,
        };
        let c = decide_clip(&[&data], &phase, &opts, ClipScope::Picture, "in this picture");
        assert_eq!(c.range(&phase), (-180.0, 180.0));
        assert!(c.rule(&phase).contains("-180 to 180°"), "{}", c.rule(&phase));
        assert_eq!(ordinal(99.0), "99th");
        assert_eq!(ordinal(92.0), "92nd");
        assert_eq!(ordinal(99.5), "99.5th");
        assert_eq!(ordinal(11.0), "11th");
    }
}
