//! Interpretable images of slices: colour maps, clipping, PNG with axis annotation, JSON sidecars.
//!
//! A slice becomes an image in this order: the symmetric clip is taken from the amplitudes ([`clip`]); the
//! data area is sized from the true spacing of the axes and the samples are interpolated onto it
//! (`resample`); amplitudes become colours ([`colormap`]); the axes, title and colour bar are drawn
//! around it (`annotate`, with the built-in bitmap font of `font`); the PNG (`encode`) and its JSON
//! [`sidecar`] are written. [`section`] cuts inline, crossline and horizontal slices out of a volume.
//!
//! `docs/rendering.md` describes the conventions (polarity, aspect, clip) and the sidecar for users.

mod annotate;
mod canvas;
pub mod clip;
pub mod colormap;
mod encode;
mod font;
mod resample;
pub mod section;
pub mod sidecar;

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, IoContext, Result};
use crate::io::output::{commit_together, write_sealed, FileDigest, SealedOutput, TempOutput};
use crate::volume::{Domain, LineAxis, SampleAxis};

use canvas::Canvas;
pub use clip::ClipSource;
pub use colormap::Colormap;
pub use encode::write_rgb_png;
pub use resample::Aspect;
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

/// How to draw a slice. Deserialised from the `[render]` table of a job file; every field may be left out.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RenderOptions {
    /// Colour map. Default `seismic`.
    pub colormap: Colormap,
    /// The clip is this percentile of |amplitude| over the finite samples, in (0, 100]. Default 99.
    pub clip_percentile: f64,
    /// A fixed clip instead of the percentile, to draw several slices on one scale. Default none.
    pub clip: Option<f64>,
    /// Draw the frame, ticks, axis titles, title and colour bar; `false` gives the data area alone.
    /// Default true.
    pub annotate: bool,
    /// Stretch of the vertical axis relative to the true aspect. Default 1.
    pub vertical_exaggeration: f64,
    /// The data area is enlarged to at least this many pixels wide (unless that breaks `max_pixels`).
    /// Default 800.
    pub min_width: u32,
    /// The whole picture (its frame, labels and colour bar included) is kept to at most this many pixels,
    /// the data area shrunk as needed. Default 16 777 216 (4096²); at least 262 144 with `annotate`.
    pub max_pixels: u64,
    /// Velocity in m/s that gives a two-way-time axis a length for the aspect (depth = v · t / 2).
    /// Default 2000, so that 1 ms is drawn as long as 1 m.
    pub time_aspect_velocity: f64,
    /// Title drawn above the image and recorded in the sidecar. Default none.
    pub title: Option<String>,
}

impl Default for RenderOptions {
    fn default() -> Self {
        RenderOptions {
            colormap: Colormap::Seismic,
            clip_percentile: 99.0,
            clip: None,
            annotate: true,
            vertical_exaggeration: 1.0,
            min_width: 800,
            max_pixels: 1 << 24,
            time_aspect_velocity: 2000.0,
            title: None,
        }
    }
}

/// The fewest pixels a picture with a frame may be given: the frame, labels, colour bar and a title of
/// [`MAX_TITLE_CHARS`] around a small data area.
const MIN_FRAMED_PIXELS: u64 = 1 << 18;

/// The longest title: one line across a picture.
const MAX_TITLE_CHARS: usize = 200;

/// The most pixels a data area may be given: 256 Mi pixels is 768 MiB of RGB.
const MAX_PIXELS_LIMIT: u64 = 1 << 28;

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
        if let Some(c) = self.clip.filter(|c| !(*c > 0.0 && *c <= f32::MAX as f64)) {
            return fail("clip", "a positive single-precision number", c.to_string());
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
        if let Some(title) = self.title.as_ref().filter(|t| t.chars().count() > MAX_TITLE_CHARS) {
            let rule = format!("at most {MAX_TITLE_CHARS} characters (one line above the picture)");
            return fail("title", &rule, format!("{} characters", title.chars().count()));
        }
        Ok(())
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

/// Draw `slice` into a PNG at `path` and write its sidecar next to it.
///
/// Both are flushed to disk together; the sidecar is moved into place first, and removed again if the image
/// cannot follow, so an image is never found without its sidecar nor either one half-written.
pub fn render_png(path: &Path, slice: &Slice, opts: &RenderOptions) -> Result<RenderedImage> {
    let SealedImage { files, clip, width, height } = render_png_sealed(path, slice, opts)?;
    let mut done = commit_together(files.into())?.into_iter();
    let (Some((sidecar, sidecar_digest)), Some((png, png_digest))) = (done.next(), done.next()) else {
        unreachable!("two files committed")
    };
    let bytes = png_digest.bytes + sidecar_digest.bytes;
    Ok(RenderedImage { png, png_digest, sidecar, sidecar_digest, clip, width, height, bytes })
}

/// [`render_png`] up to its files complete under temporary names: a caller writing several products
/// commits them all together (see [`commit_together`]).
pub fn render_png_sealed(path: &Path, slice: &Slice, opts: &RenderOptions) -> Result<SealedImage> {
    opts.validate()?;
    slice.rows.check("row")?;
    slice.cols.check("column")?;
    let (n_rows, n_cols) = (slice.rows.len, slice.cols.len);
    if slice.data.len() != n_rows * n_cols {
        return Err(Error::Request(format!(
            "cannot render a slice of {} values as {n_rows} rows × {n_cols} columns",
            slice.data.len()
        )));
    }
    let sidecar_path = sidecar_path(path);
    if sidecar_path == path {
        return Err(Error::Request(format!("{}: an image cannot be named like its .json sidecar", path.display())));
    }

    let mut steps = crate::stats::Stages::default();
    let (clip, clip_source) = match opts.clip {
        Some(c) => (c as f32, ClipSource::Fixed),
        None => clip::symmetric_clip(slice.data, opts.clip_percentile),
    };
    steps.lap("clip");
    let legend = annotate::Legend { colormap: opts.colormap, clip, clip_source, title: opts.title.as_deref() };
    let size = data_area(slice, opts, &legend)?;
    let amplitudes = resample::resample(slice.data, [n_rows, n_cols], [size.height, size.width]);
    steps.lap("resample");
    let palette = opts.colormap.palette(clip);
    let data = Canvas::paint(size.width, size.height, &amplitudes, |v| palette.colour(v));
    steps.lap("colour");
    let (canvas, data_left, data_top) = if opts.annotate {
        let framed = annotate::frame(&data, &slice.rows, &slice.cols, &legend);
        (framed.canvas, framed.data_left, framed.data_top)
    } else {
        (data, 0, 0)
    };

    steps.lap("annotate");
    let (png_out, file) = TempOutput::create(path)?;
    encode_png(&png_out, file, &canvas, opts.title.as_deref())?;
    let png = png_out.seal()?;
    steps.lap("encode");

    let sidecar = Sidecar {
        image: path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
        width: canvas.width as u32,
        height: canvas.height as u32,
        rows: AxisRecord::new(&slice.rows, data_top, size.height),
        cols: AxisRecord::new(&slice.cols, data_left, size.width),
        colormap: opts.colormap,
        polarity: opts.colormap.polarity().into(),
        clip: ClipRecord { value: clip, source: clip_source },
        no_data_rgb: colormap::NO_DATA,
        nonfinite_samples: slice.data.iter().filter(|v| !v.is_finite()).count(),
        aspect: size.aspect,
        vertical_exaggeration: opts.vertical_exaggeration,
        title: opts.title.clone(),
        software: software(),
    };
    let json = serde_json::to_vec_pretty(&sidecar).expect("a sidecar always serialises");
    let sidecar = write_sealed(&sidecar_path, &json)?;
    steps.lap("sidecar");
    steps.log_trace(&format!("drawing {}", path.display()));
    Ok(SealedImage { files: [sidecar, png], clip, width: canvas.width as u32, height: canvas.height as u32 })
}

/// The data area of the picture of `slice`: as [`resample::plot_size`] makes it, shrunk until the whole
/// picture, with the frame, labels and colour bar that `legend` adds around it, keeps to `max_pixels`.
fn data_area(slice: &Slice, opts: &RenderOptions, legend: &annotate::Legend) -> Result<resample::PlotSize> {
    let mut budget = opts.max_pixels;
    loop {
        let opts_within = RenderOptions { max_pixels: budget, title: None, ..opts.clone() };
        let size = resample::plot_size(&slice.rows, &slice.cols, &opts_within);
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
                "render option `max_pixels` = {} cannot hold this picture's frame (its labels and colour bar \
                 alone take {w} × {h} pixels): raise it, or set annotate = false",
                opts.max_pixels
            );
            return Err(Error::at_key("max_pixels", message));
        }
        budget = smaller;
    }
}

fn software() -> String {
    format!("seisimage {}", env!("CARGO_PKG_VERSION"))
}

/// Write `canvas` as an 8-bit RGB PNG to the temporary file of `out`.
fn encode_png(out: &TempOutput, mut file: std::fs::File, canvas: &Canvas, title: Option<&str>) -> Result<()> {
    let name = out.final_path();
    write_rgb_png(&mut file, canvas.width as u32, canvas.height as u32, &canvas.rgb, title).at(name)?;
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
    }

    #[test]
    fn validation_names_the_bad_option() {
        let cases = [
            RenderOptions { clip_percentile: 0.0, ..Default::default() },
            RenderOptions { clip_percentile: 100.5, ..Default::default() },
            RenderOptions { clip_percentile: f64::NAN, ..Default::default() },
            RenderOptions { clip: Some(-1.0), ..Default::default() },
            RenderOptions { vertical_exaggeration: 0.0, ..Default::default() },
            RenderOptions { min_width: 0, ..Default::default() },
            RenderOptions { max_pixels: 0, ..Default::default() },
            RenderOptions { time_aspect_velocity: f64::INFINITY, ..Default::default() },
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
        ];
        for (opts, name) in cases.iter().zip(names) {
            let err = opts.validate().unwrap_err().to_string();
            assert!(err.contains(&format!("`{name}`")), "{err}");
        }
        assert!(RenderOptions::default().validate().is_ok());
        assert!(RenderOptions { clip_percentile: 100.0, clip: Some(3.0), ..Default::default() }.validate().is_ok());
    }
}
