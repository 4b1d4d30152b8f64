//! Drawing a slice into a PNG and its JSON sidecar: every step from the values to the files on disk, in
//! the order the crate documentation gives. The top layer of the crate: it uses all the others.

use std::borrow::Cow;
use std::io::Write;
use std::path::{Path, PathBuf};

use seis_core::error::{Error, IoContext, Result};
use seis_io::output::{commit_together, write_sealed, FileDigest, SealedOutput, TempOutput};

use crate::canvas::Canvas;
use crate::clip::ClipScope;
use crate::colormap::{self, Colormap};
use crate::encode::write_png;
use crate::options::{fill_template, Display, RenderOptions, MAX_TITLE_CHARS, MAX_WIGGLE_TRACES, WIGGLE_SPACING_PX};
use crate::orientation::MapView;
use crate::panels::{self, Panel};
use crate::provenance::{number, software, today, Provenance};
use crate::quantity::{decide_clip, display_values, Clip, Quantity, ValueRange};
use crate::sidecar::{self, AxisRecord, ClipRecord, Sidecar};
use crate::slice::Slice;
use crate::{annotate, resample, wiggle};

/// What a picture shows besides its samples: given by the caller.
#[derive(Clone, Debug)]
pub struct PictureInfo {
    /// The product's name, e.g. `Inline 120` (the `{product}` of the title).
    pub product: String,
    pub quantity: Quantity,
    pub provenance: Option<Provenance>,
    /// The clip decided for a group of pictures this one belongs to; `None`: its own.
    pub clip: Option<Clip>,
    /// How a horizontal slice is arranged (see [`crate::SliceData::horizontal`]).
    pub map: Option<MapView>,
    /// Slices side by side, each labelled by its own axis (see [`crate::panels`]); empty for one slice.
    pub panels: Vec<Panel>,
    /// What the caller knows about the data shown and writes among the notes: depths the record does not
    /// reach, traces tapered at the survey's edges.
    pub remarks: Vec<String>,
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
            remarks: Vec::new(),
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

    let mut steps = seis_core::stats::Stages::default();
    let quantity = &info.quantity;
    let values = display_values(slice, quantity, opts);
    let gained = matches!(values, Cow::Owned(_));
    let clip = match &info.clip {
        Some(c) => c.clone(),
        None => decide_clip(&[&values], quantity, opts, ClipScope::Picture, "in this picture"),
    };
    steps.lap("clip");

    let look = decide_look(slice, opts, info, clip, gained)?;
    let legend = look.legend(slice, info);
    let size = data_area(slice, &look.sizing, &legend)?;
    let cells = [opts.sampling.cells(n_rows, size.height), opts.sampling.cells(n_cols, size.width)];
    let (lo, hi) = look.range;
    let draw = || match look.display {
        Display::Density => {
            let resampled = resample::resample(&values, [n_rows, n_cols], [size.height, size.width], opts.sampling);
            let palette = look.colormap.palette_over(lo, hi);
            Canvas::paint(size.width, size.height, &resampled, |v| palette.colour(v))
        }
        Display::Wiggle | Display::Va => wiggle::draw(
            &values,
            [n_rows, n_cols],
            [size.height, size.width],
            look.clip.value,
            look.display == Display::Va,
        ),
    };
    let (canvas, data_left, data_top) = if opts.annotate {
        // The frame does not depend on the data's pixels: it is drawn while they are.
        let frame = || annotate::frame(size.width, size.height, &slice.rows, &slice.cols, &legend);
        let (data, mut framed) = rayon::join(draw, frame);
        framed.canvas.blit(&data, framed.data_left, framed.data_top);
        (framed.canvas, framed.data_left, framed.data_top)
    } else {
        (draw(), 0, 0)
    };
    steps.lap("draw and annotate");

    let (png_out, file) = TempOutput::create(path)?;
    encode_png(&png_out, file, &canvas, look.title.as_deref())?;
    let png = png_out.seal()?;
    steps.lap("encode");

    let (clip, width, height) = (look.clip.value, canvas.width as u32, canvas.height as u32);
    let placement = Placement { width, height, data_left, data_top, size, cells };
    let sidecar = look.sidecar(path, slice, opts, info, placement);
    let json = serde_json::to_vec_pretty(&sidecar).expect("a sidecar always serialises");
    let sidecar = write_sealed(&sidecar_path, &json)?;
    steps.lap("sidecar");
    steps.log_trace(&format!("drawing {}", path.display()));
    Ok(SealedImage { files: [sidecar, png], clip, width, height })
}

/// How a picture is drawn and what it says besides its data: decided before it is sized, since its words
/// take room around the data area.
struct Look {
    display: Display,
    colormap: Colormap,
    clip: Clip,
    /// The values at the two ends of the colour scale.
    range: (f32, f32),
    /// Whether the display gain changed the values shown.
    gained: bool,
    title: Option<String>,
    notes: Vec<String>,
    footer: Vec<String>,
    /// The options the data area is sized by: wiggles need room between their traces.
    sizing: RenderOptions,
}

/// Where the data area lies on the finished picture, and how its samples were carried onto it.
struct Placement {
    width: u32,
    height: u32,
    data_left: usize,
    data_top: usize,
    size: resample::PlotSize,
    cells: [bool; 2],
}

/// The [`Look`] of a picture of `slice` with `clip`: wiggles fall back to colour where they cannot be
/// drawn, and every note says why the picture looks as it does.
fn decide_look(slice: &Slice, opts: &RenderOptions, info: &PictureInfo, clip: Clip, gained: bool) -> Result<Look> {
    let quantity = &info.quantity;
    let n_cols = slice.cols.len;
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
    // Vertical exaggeration stretches a section's vertical axis; a map's rows are ground distance.
    if info.map.is_some() {
        sizing.vertical_exaggeration = 1.0;
    }
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
    notes.extend(info.remarks.iter().cloned());
    let footer = match (&info.provenance, opts.footer) {
        (Some(p), true) => p.footer(),
        (None, true) => vec![format!("{} · {}", software(), today())],
        _ => Vec::new(),
    };
    let range = clip.range(quantity);
    Ok(Look { display, colormap, clip, range, gained, title, notes, footer, sizing })
}

impl Look {
    /// What the frame around the data area of `slice` says.
    fn legend<'a>(&'a self, slice: &Slice, info: &'a PictureInfo) -> annotate::Legend<'a> {
        let (lo, hi) = self.range;
        let colormap = self.colormap;
        annotate::Legend {
            title: self.title.as_deref(),
            bar: (self.display == Display::Density).then(|| annotate::ColourBar {
                colormap,
                lo,
                hi,
                title: info.quantity.title(),
            }),
            notes: &self.notes,
            footer: &self.footer,
            metres_across: slice.cols.spacing_m.map(|d| d * slice.cols.len as f64),
            north_deg: info.map.as_ref().and_then(|m| m.north_deg),
            panels: &info.panels,
        }
    }

    /// The sidecar of the picture at `path`, placed as `placement` says.
    fn sidecar(
        self,
        path: &Path,
        slice: &Slice,
        opts: &RenderOptions,
        info: &PictureInfo,
        placement: Placement,
    ) -> Sidecar {
        let Placement { width, height, data_left, data_top, size, cells } = placement;
        let quantity = &info.quantity;
        let (n_rows, n_cols) = (slice.rows.len, slice.cols.len);
        let (lo, hi) = self.range;
        let Look { display, colormap, clip, gained, title, notes, footer, .. } = self;
        Sidecar {
            image: path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
            width,
            height,
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
        }
    }
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
