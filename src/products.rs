//! From the `[output]` section to boxes of the image, and from migrated boxes to files.
//!
//! Every product — inline, crossline, depth slice or ROI, or a complex-trace attribute of one — is one box of
//! the image grid, in depth as imaged or converted to two-way time ([`crate::time_domain`]), from the one
//! migration of the job or from a member of its velocity scan ([`crate::scan`]). The engines only ever see
//! the boxes ([`ImageRequest`]); this module names them, and writes each one as PNG and/or sub-volume files
//! through temporary names, recording a checksum for the manifest. Pictures that share a clip with others of the run (`output.render.clip = "kind"` or `"job"`)
//! are drawn once all of them are in; the run's `index.html` is written last, beside them.
//!
//! Where the image holds nothing the data can support, every product of every engine holds zeros, in every
//! format ([`deliverable`]): on traces missing from the input (which the pictures draw as no data, and
//! HDF5 and SEG-Y files mark as such), and below the deepest depth the record reaches through the velocity
//! of the product's migration ([`crate::imaging::Plan::reach`]). A product in time is made so in depth
//! first, then converted.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, Sender};
use std::sync::{Arc, Mutex};

use serde::Serialize;

use crate::attributes::{window_around, Attribute, AttributeOutput};
use crate::cancel::CancelToken;
use crate::error::{Error, Result};
use crate::imaging::plan::{CHECK_THE_VELOCITY, DEPTH_FROM_VELOCITY};
use crate::imaging::{ImageRequest, ImagingParams, ProductSink};
use crate::io::output::{commit_together_replacing, write_sealed, FileDigest, Replaced, SealedOutput};
use crate::io::VolumeSink;
use crate::job::{Job, OutputConfig, VolumeFormat};
use crate::progress::Progress;
use crate::render::page::{index_html, Page, PageEntry};
use crate::render::{self, ClipScope, PictureInfo, Provenance, Quantity, RenderOptions, SliceData};
use crate::time_domain::TimeForm;
use crate::velocity::{ScanStep, VelocityModel};
use crate::volume::{Domain, Geometry, IndexBox, LineAxis, SampleAxis, Volume};

/// What a product is, in the user's terms.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum ProductKind {
    Inline {
        iline: i64,
    },
    Crossline {
        xline: i64,
    },
    DepthSlice {
        depth_m: f64,
    },
    Roi {
        name: String,
    },
    TimeSlice {
        twt_ms: f64,
    },
    /// The same section of every migration of a velocity scan, side by side (`of`: the sections' stem).
    Panel {
        of: String,
        scan: Vec<ScanStep>,
    },
    /// The run's page, `index.html`.
    Index,
}

impl ProductKind {
    /// The kind in words, for the pictures' notes: `inline`, `crossline`, `depth slice`, `ROI`.
    pub(crate) fn noun(&self) -> &'static str {
        match self {
            ProductKind::Inline { .. } => "inline",
            ProductKind::Crossline { .. } => "crossline",
            ProductKind::DepthSlice { .. } => "depth slice",
            ProductKind::Roi { .. } => "ROI",
            ProductKind::TimeSlice { .. } => "time slice",
            ProductKind::Panel { .. } => "panel",
            ProductKind::Index => "page",
        }
    }
}

/// One requested product: its box of the image and how to write it.
#[derive(Clone, Debug)]
pub struct ProductSpec {
    pub kind: ProductKind,
    /// The complex-trace attribute this product is, of the box; `None`: the image itself.
    pub attribute: Option<AttributeOutput>,
    /// File stem, e.g. `inline_121` or `inline_121_envelope`.
    pub stem: String,
    /// The box the engine computes.
    pub region: IndexBox,
    pub formats: Vec<VolumeFormat>,
    pub png: bool,
    /// In two-way time: the box of the depth image converted so (`None`: in depth, as imaged).
    pub time: Option<Arc<TimeForm>>,
    /// The member of a velocity scan it comes from (`None`: the job migrates once).
    pub scan: Option<ScanStep>,
    /// The deepest depth (m) the record reaches through the velocity of its migration, when the image goes
    /// deeper ([`crate::imaging::Plan::reach`]): the product is zero below it (see [`deliverable`]).
    pub reach: Option<f64>,
}

impl ProductSpec {
    /// The box the product's files hold: the region, or the levels an attribute keeps of it.
    pub fn output_region(&self) -> IndexBox {
        match &self.attribute {
            Some(a) => IndexBox {
                s: self.region.s.start + a.keep.start..self.region.s.start + a.keep.end,
                ..self.region.clone()
            },
            None => self.region.clone(),
        }
    }

    /// The product in words: `Inline 120`, `Depth 150 m, envelope`, `Inline 120, two-way time, velocity
    /// scale 0.95`.
    pub fn label(&self) -> String {
        let what = match &self.kind {
            ProductKind::Inline { .. } | ProductKind::Crossline { .. } | ProductKind::Roi { .. }
                if self.time.is_some() =>
            {
                format!("{}, two-way time", title(&self.kind))
            }
            _ => title(&self.kind),
        };
        let what = match &self.attribute {
            Some(a) => format!("{what}, {}", a.attribute.title()),
            None => what,
        };
        match self.scan {
            Some(step) => format!("{what}, velocity {}", step.label()),
            None => what,
        }
    }

    /// The geometry of the product as written: its box of the image, in time when it is a product in time.
    pub fn geometry(&self, image: &Geometry) -> Geometry {
        let mut g = image.subset(&self.output_region());
        if let Some(t) = &self.time {
            g.samples = t.axis;
        }
        g
    }

    /// The product's values as written, from those of its box as the engine hands them over: zero where
    /// nothing was recorded ([`deliverable`], in depth), then converted to time when it is in time.
    pub fn values<'a>(&self, image: &Geometry, box_values: &'a [f32]) -> Cow<'a, [f32]> {
        let in_depth = image.subset(&self.output_region());
        let values = deliverable(box_values, &in_depth, self.reach);
        match &self.time {
            Some(t) => Cow::Owned(t.convert(&values)),
            None => values,
        }
    }

    /// What its values are.
    pub(crate) fn quantity(&self) -> Quantity {
        match &self.attribute {
            Some(a) => a.attribute.quantity("m"),
            None => Quantity::amplitude(),
        }
    }
}

/// The products of `output` on the image grid `image` (depth domain, as `imaging` sets it), in a stable
/// order, with a warning for each request the image could serve only in part or changed (a region clipped
/// or read the other way round, a depth slice moved to the nearest level). A product the image cannot
/// serve at all is a configuration error naming the key, or the element of a list, that asks for it
/// (`output.inlines.2`, `output.roi.0.depth`).
pub fn plan_products(
    output: &OutputConfig,
    image: &Geometry,
    imaging: &ImagingParams,
) -> Result<(Vec<ProductSpec>, Vec<String>)> {
    let all = image.full_box();
    let mut specs = Vec::new();
    let mut warnings = Vec::new();
    let slice = |kind, stem, region| ProductSpec {
        kind,
        attribute: None,
        stem,
        region,
        formats: output.slice_formats.clone(),
        png: output.png,
        time: None,
        scan: None,
        reach: None,
    };
    let at = |key: String| move |e: Error| Error::at_key(key, e.to_string());
    for (n, &il) in output.inlines.iter().enumerate() {
        let i = image.iline_index(il).map_err(at(format!("output.inlines.{n}")))?;
        specs.push(slice(
            ProductKind::Inline { iline: il },
            format!("inline_{il}"),
            IndexBox { il: i..i + 1, ..all.clone() },
        ));
    }
    for (n, &xl) in output.crosslines.iter().enumerate() {
        let j = image.xline_index(xl).map_err(at(format!("output.crosslines.{n}")))?;
        specs.push(slice(
            ProductKind::Crossline { xline: xl },
            format!("xline_{xl}"),
            IndexBox { xl: j..j + 1, ..all.clone() },
        ));
    }
    let depth = &image.samples;
    for (n, &z) in output.depth_slices.iter().enumerate() {
        let key = format!("output.depth_slices.{n}");
        let k = image.sample_index(z).map_err(|_| {
            let message = format!(
                "depth slice {z} m is below the deepest depth imaged ({} m): {}",
                depth.last(),
                deeper(imaging)
            );
            Error::at_key(&key, message)
        })?;
        let exact = depth.value(k);
        if (exact - z).abs() > 1e-6 * depth.step {
            warnings.push(format!(
                "{key}: depth slice {z} m is imaged at {exact} m, the nearest depth level (dz {} m)",
                depth.step
            ));
        }
        specs.push(slice(
            ProductKind::DepthSlice { depth_m: exact },
            format!("depth_{}m", exact.round() as i64),
            IndexBox { s: k..k + 1, ..all.clone() },
        ));
    }
    for (n, r) in output.roi.iter().enumerate() {
        let key = format!("output.roi.{n}");
        let region = IndexBox {
            il: line_range(&format!("{key}.iline"), "inlines", &image.ilines, r.iline, &mut warnings)?,
            xl: line_range(&format!("{key}.xline"), "crosslines", &image.xlines, r.xline, &mut warnings)?,
            s: depth_range(&format!("{key}.depth"), depth, r.depth, imaging, &mut warnings)?,
        };
        specs.push(ProductSpec {
            kind: ProductKind::Roi { name: r.name.clone() },
            attribute: None,
            stem: format!("roi_{}", r.name),
            region,
            formats: r.formats.clone(),
            png: false,
            time: None,
            scan: None,
            reach: None,
        });
    }
    specs.extend(attribute_products(output, image, &specs));
    let mut stems = std::collections::HashSet::new();
    if let Some(dup) = specs.iter().find(|s| !stems.insert(s.stem.clone())) {
        let key = match dup.kind {
            ProductKind::Inline { .. } => "output.inlines",
            ProductKind::Crossline { .. } => "output.crosslines",
            ProductKind::DepthSlice { .. } => "output.depth_slices",
            ProductKind::TimeSlice { .. } => "output.time_slices",
            ProductKind::Roi { .. } | ProductKind::Panel { .. } | ProductKind::Index => "output.roi",
        };
        return Err(Error::at_key(key, format!("the product {} is requested twice", dup.stem)));
    }
    Ok((specs, warnings))
}

/// Most samples per trace of a product in time (a guard against a mistyped `output.time_step_ms`).
const MAX_TIME_SAMPLES: usize = 1_000_000;

/// The products of `output` in two-way time (`output.domain` holds "time"), one list per velocity model
/// (the migrations of a velocity scan), each converted with its model and sampled every `step_ms`: the
/// sections and regions of [`plan_products`] with `_time` after their stem, and a slice per
/// `output.time_slices`. Every list asks for the same boxes of the image. The complex-trace attributes are
/// products in depth only: the instantaneous frequency of a depth section is a wavenumber.
pub fn plan_time_products(
    output: &OutputConfig,
    image: &Geometry,
    imaging: &ImagingParams,
    velocities: &[&VelocityModel],
    step_ms: f64,
) -> Result<Vec<Vec<ProductSpec>>> {
    let roi = output.roi.iter().map(|r| crate::job::RoiConfig { attributes: Vec::new(), ..r.clone() }).collect();
    let sections = OutputConfig { depth_slices: Vec::new(), attributes: Vec::new(), roi, ..output.clone() };
    // Their warnings are those of the products in depth, which are the same boxes.
    let (boxes, _) = plan_products(&sections, image, imaging)?;
    // A time slice's box holds its time at every trace, for every model.
    let mut slices = Vec::new();
    for (n, &t) in output.time_slices.iter().enumerate() {
        let mut s: Option<std::ops::Range<usize>> = None;
        for v in velocities {
            let levels = TimeForm::slice_levels(v, image, t, &format!("output.time_slices.{n}"))?;
            s = Some(s.map_or(levels.clone(), |s| s.start.min(levels.start)..s.end.max(levels.end)));
        }
        let s = s.expect("at least one velocity");
        slices.push((t, IndexBox { il: 0..image.ilines.len, xl: 0..image.xlines.len, s }));
    }
    // Every model's form of each box, on one time axis: the members of a scan compare sample by sample.
    let mut forms: Vec<Vec<TimeForm>> = velocities.iter().map(|_| Vec::with_capacity(boxes.len())).collect();
    for spec in &boxes {
        let of_box: Vec<TimeForm> =
            velocities.iter().map(|v| TimeForm::of_box(v, image, &spec.region, step_ms)).collect();
        let first = of_box.iter().map(|f| f.axis.origin).fold(f64::INFINITY, f64::min);
        let last = of_box.iter().map(|f| f.axis.last()).fold(f64::NEG_INFINITY, f64::max);
        let len = ((last - first) / step_ms).round() as usize + 1;
        if len > MAX_TIME_SAMPLES {
            return Err(Error::at_key(
                "output.time_step_ms",
                format!(
                    "{} in time would have {len} samples of {step_ms} ms per trace (at most {MAX_TIME_SAMPLES})",
                    spec.stem
                ),
            ));
        }
        let axis = SampleAxis { origin: first, len, ..of_box[0].axis };
        for (list, form) in forms.iter_mut().zip(of_box) {
            list.push(form.on_axis(axis));
        }
    }
    let mut lists = Vec::with_capacity(velocities.len());
    for (v, forms) in velocities.iter().zip(forms) {
        let mut specs = Vec::new();
        for (spec, form) in boxes.iter().zip(forms) {
            let time = Some(Arc::new(form));
            specs.push(ProductSpec { stem: format!("{}_time", spec.stem), time, ..spec.clone() });
        }
        for (t, region) in &slices {
            specs.push(ProductSpec {
                kind: ProductKind::TimeSlice { twt_ms: *t },
                attribute: None,
                stem: format!("time_{}ms", t.round() as i64),
                time: Some(Arc::new(TimeForm::at_time(v, image, region, *t))),
                region: region.clone(),
                formats: output.slice_formats.clone(),
                png: output.png,
                scan: None,
                reach: None,
            });
        }
        let mut stems = std::collections::HashSet::new();
        if let Some(dup) = specs.iter().find(|s| !stems.insert(s.stem.clone())) {
            return Err(Error::at_key("output.time_slices", format!("the product {} is requested twice", dup.stem)));
        }
        lists.push(specs);
    }
    Ok(lists)
}

/// How to image deeper, in words: the depth axis comes from `imaging.zmax` or `imaging.nz`, else from the
/// velocity, which may then be the real cause (km/s for m/s): said as every such message says it.
fn deeper(imaging: &ImagingParams) -> String {
    match (imaging.zmax, imaging.nz) {
        (None, None) => format!("{DEPTH_FROM_VELOCITY}: {CHECK_THE_VELOCITY}"),
        _ => "raise imaging.zmax (or imaging.nz)".into(),
    }
}

/// Bounds as written, and read the right way round: a reversed pair is swapped with a warning.
fn ordered<T: PartialOrd + Copy + std::fmt::Display>(
    key: &str,
    what: &str,
    [a, b]: [T; 2],
    unit: &str,
    warnings: &mut Vec<String>,
) -> [T; 2] {
    if a <= b {
        return [a, b];
    }
    warnings.push(format!("{key}: [{a}, {b}] is reversed: read as {what} {b}..={a}{unit}"));
    [b, a]
}

/// The indices of the lines of a region's `[first, last]` on `axis` (all of it when not given): clipped to
/// the survey with a warning, refused when none is in it.
fn line_range(
    key: &str,
    what: &str,
    axis: &LineAxis,
    bounds: Option<[i64; 2]>,
    warnings: &mut Vec<String>,
) -> Result<std::ops::Range<usize>> {
    let Some(bounds) = bounds else { return Ok(0..axis.len) };
    let [lo, hi] = ordered(key, what, bounds, "", warnings);
    let range = axis.index_range(lo, hi);
    let (first, last) = (axis.first, axis.last());
    if range.is_empty() {
        let message = format!("{what} {lo}..={hi} are outside the survey ({what} {first}..={last} step {})", axis.step);
        return Err(Error::at_key(key, message));
    }
    if lo < first || hi > last {
        warnings.push(format!(
            "{key}: {what} {lo}..={hi} reach outside the survey ({what} {first}..={last}): clipped to {}..={}",
            axis.value(range.start),
            axis.value(range.end - 1)
        ));
    }
    Ok(range)
}

/// The levels of a region's `[top, bottom]` depths (all of them when not given): clipped to the image with
/// a warning, refused when none is in it.
fn depth_range(
    key: &str,
    axis: &SampleAxis,
    bounds: Option<[f64; 2]>,
    imaging: &ImagingParams,
    warnings: &mut Vec<String>,
) -> Result<std::ops::Range<usize>> {
    let Some(bounds) = bounds else { return Ok(0..axis.len) };
    let [top, bottom] = ordered(key, "depths", bounds, " m", warnings);
    let range = axis.index_range(top, bottom);
    let (first, last) = (axis.origin, axis.last());
    if range.is_empty() {
        let place = if top > last { "below" } else { "outside" };
        let message =
            format!("depths {top}..={bottom} m are {place} the image ({first}..={last} m): {}", deeper(imaging));
        return Err(Error::at_key(key, message));
    }
    let tolerance = 1e-6 * axis.step;
    if top < first - tolerance || bottom > last + tolerance {
        warnings.push(format!(
            "{key}: depths {top}..={bottom} m reach below the image ({first}..={last} m): clipped to {}..={} m",
            axis.value(range.start),
            axis.value(range.end - 1)
        ));
    }
    Ok(range)
}

/// A warning for every product that lies, in whole or in part, below `reach`, the deepest depth the record
/// can image ([`crate::imaging::Plan::reach`]): those levels are zero.
pub fn below_reach_warnings(specs: &[ProductSpec], image: &Geometry, reach: Option<f64>) -> Vec<String> {
    let Some(reach) = reach else { return Vec::new() };
    let depth = &image.samples;
    specs
        .iter()
        .filter(|s| depth.value(s.region.s.end - 1) > reach)
        .map(|s| {
            let how = if depth.value(s.region.s.start) > reach { "lies" } else { "lies partly" };
            format!(
                "{} {how} below {reach:.0} m, the deepest depth the record reaches (the vertical two-way time of its \
                 last sample): it is zero there",
                s.stem
            )
        })
        .collect()
}

/// Whether level `k` of `depth` lies below `reach`.
fn below(depth: &SampleAxis, k: usize, reach: Option<f64>) -> bool {
    reach.is_some_and(|r| depth.value(k) > r + 1e-9 * depth.step)
}

/// The values a product delivers, from the image's values of its box: zero on the traces missing from the
/// input and below the depth the record reaches, whichever engine computed them. Borrowed unchanged when
/// neither applies.
pub fn deliverable<'a>(values: &'a [f32], product: &Geometry, reach: Option<f64>) -> Cow<'a, [f32]> {
    let nz = product.samples.len;
    let deep = (0..nz).position(|k| below(&product.samples, k, reach)).unwrap_or(nz);
    if deep == nz && product.live.iter().all(|&l| l) {
        return Cow::Borrowed(values);
    }
    let mut out = values.to_vec();
    for (trace, &live) in out.chunks_mut(nz.max(1)).zip(&product.live) {
        let from = if live { deep } else { 0 };
        trace[from..].fill(0.0);
    }
    Cow::Owned(out)
}

/// The attribute products of the slices and regions of `specs`: each attribute of `output.attributes` of
/// every slice, each of `attributes` of every region. A section's attribute is computed over the section;
/// a depth slice's over `output.attribute_window_m` above and below it, of which the slice is kept.
fn attribute_products(output: &OutputConfig, image: &Geometry, specs: &[ProductSpec]) -> Vec<ProductSpec> {
    let nz = image.samples.len;
    let dz = image.samples.step;
    let mut out = Vec::new();
    for spec in specs {
        let attributes: &[Attribute] = match &spec.kind {
            ProductKind::Roi { name } => {
                output.roi.iter().find(|r| &r.name == name).map_or(&[][..], |r| &r.attributes[..])
            }
            _ => &output.attributes,
        };
        for &attribute in attributes {
            let (region, keep) = match spec.kind {
                ProductKind::DepthSlice { .. } => {
                    let (s, keep) = window_around(spec.region.s.start, output.attribute_window_m, dz, nz);
                    (IndexBox { s, ..spec.region.clone() }, keep)
                }
                _ => (spec.region.clone(), 0..spec.region.s.len()),
            };
            out.push(ProductSpec {
                kind: spec.kind.clone(),
                attribute: Some(AttributeOutput { attribute, keep, frequency_scale: 1000.0 / dz }),
                stem: format!("{}_{}", spec.stem, attribute.name()),
                region,
                formats: spec.formats.clone(),
                png: spec.png,
                time: None,
                scan: None,
                reach: None,
            });
        }
    }
    out
}

/// The boxes the engines must compute, with the attribute each hands over.
pub fn request(specs: &[ProductSpec]) -> ImageRequest {
    ImageRequest {
        boxes: specs.iter().map(|s| s.region.clone()).collect(),
        attributes: specs.iter().map(|s| s.attribute.clone()).collect(),
    }
}

/// Bytes the products will take on disk at most, about (for the free-space check before the migration):
/// 4 bytes per value and 8 KiB of headers per sub-volume file; per PNG, the uncompressed RGB size of the
/// largest picture `render` allows for the slice (at least `min_width²` pixels, as narrow slices are
/// enlarged, times the vertical exaggeration or its inverse, never more than `max_pixels`), plus 64 KiB
/// for the sidecar.
pub fn estimated_bytes(specs: &[ProductSpec], render: &RenderOptions) -> u64 {
    const FILE_HEADERS: u64 = 8 << 10;
    const PNG_EXTRAS: u64 = 64 << 10;
    let min_area = u64::from(render.min_width).pow(2);
    let stretch = render.vertical_exaggeration.max(1.0 / render.vertical_exaggeration).min(1e12);
    specs
        .iter()
        .map(|s| {
            let values = match &s.time {
                Some(t) => (s.region.il.len() * s.region.xl.len() * t.axis.len) as u64,
                None => s.output_region().len() as u64,
            };
            let files = s.formats.len() as u64 * (4 * values + FILE_HEADERS);
            let pixels = (values.max(min_area) as f64 * stretch).min(render.max_pixels as f64) as u64;
            let png = if s.png { 3 * pixels + PNG_EXTRAS } else { 0 };
            files + png
        })
        .sum()
}

/// A file written, for the manifest.
#[derive(Clone, Debug, Serialize)]
pub struct ProductFile {
    /// File name, in the output folder (beside the manifest).
    pub path: PathBuf,
    pub format: String,
    pub bytes: u64,
    pub sha256: String,
}

/// A product written, for the manifest.
#[derive(Clone, Debug, Serialize)]
pub struct ProductRecord {
    #[serde(flatten)]
    pub kind: ProductKind,
    /// The complex-trace attribute the product is, if it is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attribute: Option<Attribute>,
    /// The member of a velocity scan it comes from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scan: Option<ScanStep>,
    /// Axes of the product as written (none for the page).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub axes: Option<ProductAxes>,
    pub files: Vec<ProductFile>,
}

/// The axes of a product: its sample axis is named `depth` (m) or `twt` (ms, a product in time).
#[derive(Clone, Debug, Serialize)]
pub struct ProductAxes {
    pub iline: LineAxis,
    pub xline: LineAxis,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub depth: Option<SampleAxis>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub twt: Option<SampleAxis>,
}

impl ProductAxes {
    pub fn of(g: &Geometry) -> Self {
        let (depth, twt) = match g.samples.domain {
            Domain::Depth => (Some(g.samples), None),
            Domain::Time => (None, Some(g.samples)),
        };
        ProductAxes { iline: g.ilines, xline: g.xlines, depth, twt }
    }
}

/// Values written per step of a sub-volume file: a stop request is honoured between steps.
const WRITE_BLOCK_VALUES: usize = 4 << 20;

/// A product written under temporary names and measured: [`commit_products`] puts it in place.
pub struct WrittenProduct {
    kind: ProductKind,
    attribute: Option<Attribute>,
    scan: Option<ScanStep>,
    /// The product in words, for the page.
    label: String,
    axes: Option<ProductAxes>,
    /// Its files with their formats, in the manifest's order.
    files: Vec<(SealedOutput, &'static str)>,
    /// Its picture, when it waits for the clip it shares with other pictures of the run.
    pending: Option<PendingPicture>,
}

/// A picture to draw once the clip of its group is known.
pub(crate) struct PendingPicture {
    path: PathBuf,
    slice: SliceData,
    info: PictureInfo,
    /// How it is drawn: the run's options, or a panel's (wider).
    render: RenderOptions,
    /// The pictures that share its clip: its kind (for `clip = "kind"`) and its quantity.
    group: (Option<&'static str>, String),
}

impl WrittenProduct {
    /// A product that is only a picture, `slice` of `info` drawn with `render` at `path` as `kind`: drawn
    /// now, or once the pictures it shares a clip with are in (those of `noun`'s kind, or of the run).
    pub(crate) fn picture(
        kind: ProductKind,
        noun: &'static str,
        axes: ProductAxes,
        path: PathBuf,
        slice: SliceData,
        info: PictureInfo,
        render: RenderOptions,
    ) -> Result<Self> {
        let label = info.product.clone();
        let (files, pending) = picture_files(path, slice, info, render, noun)?;
        Ok(WrittenProduct { kind, attribute: None, scan: None, label, axes: Some(axes), files, pending })
    }
}

/// A picture's files, drawn now when it has a clip of its own; else nothing yet, and the picture pending
/// until its group's clip is known (see [`draw_shared_pictures`]).
#[allow(clippy::type_complexity)]
fn picture_files(
    path: PathBuf,
    slice: SliceData,
    info: PictureInfo,
    render: RenderOptions,
    noun: &'static str,
) -> Result<(Vec<(SealedOutput, &'static str)>, Option<PendingPicture>)> {
    match render.clip.scope() {
        Some(ClipScope::Kind) | Some(ClipScope::Job) => {
            let kind = (render.clip.scope() == Some(ClipScope::Kind)).then_some(noun);
            let group = (kind, info.quantity.name.clone());
            Ok((Vec::new(), Some(PendingPicture { path, slice, info, render, group })))
        }
        _ => {
            let [sidecar, png] = render::render_png_sealed(&path, &slice.as_slice(), &render, &info)?.files;
            Ok((vec![(png, "png"), (sidecar, "json")], None))
        }
    }
}

/// What the run's pictures and page say about the run.
#[derive(Clone, Debug, Default)]
pub struct RunReport {
    /// Written in every picture's footer.
    pub provenance: Provenance,
    /// The velocity of each member of a velocity scan in a few words, for its pictures' footers (the
    /// provenance's velocity is the whole scan's).
    pub scan: Vec<(ScanStep, String)>,
    /// The page's heading (the job file's name) and the job as run, as TOML; `None`: no `index.html`.
    pub page: Option<(String, String)>,
}

impl RunReport {
    /// The report of `job`, run now with the interval velocity `velocity` in depth (converted from the
    /// job's form), or with the members of a velocity scan `scan`.
    pub fn of(job: &Job, velocity: &VelocityModel, scan: &[(ScanStep, &VelocityModel)]) -> Self {
        let c = &job.config;
        let file = c.velocity.path.as_deref().and_then(Path::file_name).map(|f| f.to_string_lossy().into_owned());
        let velocity_summary = |v: &VelocityModel| match &file {
            Some(file) => format!("{} from {file}", velocity_summary(v)),
            None => velocity_summary(v),
        };
        let velocity = match scan {
            [] => velocity_summary(velocity),
            [(first, _), .., (last, _)] => {
                format!("velocity scan of {}: {} to {}", scan.len(), first.label(), last.label())
            }
            [(only, _)] => only.label(),
        };
        let provenance = Provenance {
            method: Some(c.imaging.method.name().to_string()),
            velocity: Some(velocity),
            dz_m: Some(c.imaging.dz),
            fmax_hz: Some(c.imaging.fmax),
            ..Provenance::now(&c.input.path)
        };
        let scan = scan.iter().map(|(step, v)| (*step, format!("{}, {}", velocity_summary(v), step.label()))).collect();
        let name = job.source.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let page = c.output.index.then(|| (name, job.to_toml()));
        RunReport { provenance, scan, page }
    }

    /// What produced the pictures of `spec`: the run, with its member's velocity in a scan.
    pub fn provenance_of(&self, spec: &ProductSpec) -> Provenance {
        let member = spec.scan.and_then(|step| self.scan.iter().find(|(s, _)| *s == step));
        match member {
            Some((_, velocity)) => Provenance { velocity: Some(velocity.clone()), ..self.provenance.clone() },
            None => self.provenance.clone(),
        }
    }
}

/// An interval velocity in depth in a few words: `v 2000 m/s`, `v(z) 1500-2600 m/s`, `v(x, y, z)
/// 1480-4200 m/s`.
fn velocity_summary(v: &VelocityModel) -> String {
    let n = |x: f64| format!("{}", (x * 10.0).round() / 10.0);
    let (lo, hi) = v.range();
    match v {
        VelocityModel::Constant(c) => format!("v {} m/s", n(*c)),
        VelocityModel::Table(_) => format!("v(z) {}-{} m/s", n(lo), n(hi)),
        VelocityModel::Grid(_) => format!("v(x, y, z) {}-{} m/s", n(lo), n(hi)),
    }
}

/// Where a run's products go and how they are drawn: what writing any of them needs besides its spec and
/// its values.
pub struct ProductTarget<'a> {
    /// The output folder.
    pub dir: &'a Path,
    /// The image grid the products are boxes of.
    pub image: &'a Geometry,
    /// Metres between inlines and between crosslines, which set the pictures' aspect (the image grid may
    /// not carry them when the survey has no coordinates).
    pub bin_size: [f64; 2],
    pub render: &'a RenderOptions,
    /// The run's stop request, honoured between the steps of writing.
    pub cancel: CancelToken,
    /// What the pictures and the page say about the run.
    pub report: RunReport,
    /// How sub-volume files are written: the processing history of SEG-Y text headers, among others.
    pub volume_options: crate::io::WriteOptions,
}

/// Write one product into the target's folder under temporary names: PNG for slices, and its sub-volume
/// formats.
pub fn write_product(target: &ProductTarget, spec: &ProductSpec, data: &[f32]) -> Result<WrittenProduct> {
    let mut written = [OpenProduct::create(target, spec)?.write(data, target)?];
    draw_shared_pictures(&mut written, target)?;
    let [written] = written;
    Ok(written)
}

/// A product whose sub-volume files are created (headers and labels written, under temporary names) and
/// wait for its values: the files can be made while the engine computes them.
pub struct OpenProduct {
    spec: ProductSpec,
    dir: PathBuf,
    /// The product's own geometry.
    geometry: Geometry,
    sinks: Vec<(VolumeFormat, VolumeSink)>,
}

impl OpenProduct {
    pub fn create(target: &ProductTarget, spec: &ProductSpec) -> Result<Self> {
        let (dir, geometry) = (target.dir, spec.geometry(target.image));
        let mut options = target.volume_options.clone();
        if spec.time.is_some() {
            options.segy.text.extend(TIME_NOTE.iter().map(|l| l.to_string()));
        }
        let mut sinks = Vec::with_capacity(spec.formats.len());
        // GeoTIFF holds maps: sections list it with the other slice formats and are written without it.
        let maps_only = |f: &&VolumeFormat| **f != VolumeFormat::Geotiff || geometry.samples.len == 1;
        for f in spec.formats.iter().filter(maps_only) {
            let t = std::time::Instant::now();
            let path = dir.join(format!("{}.{}", spec.stem, f.extension()));
            sinks.push((*f, VolumeSink::create(f.file_format(), &path, &geometry, &options)?));
            tracing::trace!("{} as {}: created in {:.1} ms", spec.stem, f.extension(), t.elapsed().as_secs_f64() * 1e3);
        }
        Ok(OpenProduct { spec: spec.clone(), dir: dir.to_path_buf(), geometry, sinks })
    }

    /// Draw the picture and fill the files with `data` (the values of the product's box as the engine hands
    /// them over, `[il][xl][z]`, in depth), each left under its temporary name, checksummed, for
    /// [`commit_products`]. Stops between steps once the target's run is asked to stop.
    pub fn write(self, data: &[f32], target: &ProductTarget) -> Result<WrittenProduct> {
        let OpenProduct { spec, dir, geometry: g, sinks } = self;
        let in_depth = spec.output_region().len();
        if data.len() != in_depth {
            return Err(Error::Internal(format!(
                "product {}: {} values for a box of {in_depth}",
                spec.stem,
                data.len()
            )));
        }
        let data = &*spec.values(target.image, data);
        let cancel = &target.cancel;
        let mut files = Vec::new();
        let mut pending = None;
        if spec.png {
            cancel.check()?;
            let path = dir.join(format!("{}.png", spec.stem));
            let slice = slice_of(&spec.kind, Volume { geometry: g.clone(), data: data.to_vec() }, target.bin_size)?;
            let info = PictureInfo {
                product: spec.label(),
                quantity: spec.quantity(),
                provenance: Some(target.report.provenance_of(&spec)),
                clip: None,
                map: slice.map.clone(),
            };
            (files, pending) = picture_files(path, slice, info, target.render.clone(), spec.kind.noun())?;
        }
        for (f, mut sink) in sinks {
            let mut steps = crate::stats::Stages::default();
            let inline_values = g.xlines.len * g.samples.len;
            let block_inlines = (WRITE_BLOCK_VALUES / inline_values).max(1);
            for (i, block) in data.chunks(block_inlines * inline_values).enumerate() {
                cancel.check()?;
                sink.write_inlines(i * block_inlines, g.shape(), block)?;
            }
            steps.lap("values");
            let closed = sink.close()?;
            steps.lap("close");
            files.push((closed.seal()?, f.extension()));
            steps.lap("checksum");
            steps.log_trace(&format!("{} as {}", spec.stem, f.extension()));
        }
        Ok(WrittenProduct {
            label: spec.label(),
            kind: spec.kind,
            attribute: spec.attribute.map(|a| a.attribute),
            scan: spec.scan,
            axes: Some(ProductAxes::of(&g)),
            files,
            pending,
        })
    }
}

/// Writes a run's products while the engine computes them: the run hands it to the engine as its
/// [`ProductSink`], then asks it for the products with [`ProductWriter::finish`].
///
/// Each product's files are created as the writer starts, and each product is drawn and written as soon
/// as the engine hands it over (see [`crate::imaging::delivery`]), so that the shallow ones are done before
/// the migration is. That work runs on the rayon pool, in a scope the run opens around the migration and
/// the writing: none of it outlives the run, and a product given up (the migration failed, or was
/// stopped) is dropped with its temporary files before the run returns.
pub struct ProductWriter<'r, 's> {
    scope: &'r rayon::Scope<'s>,
    target: &'s ProductTarget<'s>,
    specs: &'s [ProductSpec],
    /// Shared with the tasks that create the files.
    slots: Arc<[Mutex<Slot>]>,
    done: Done,
    /// Behind a lock only so that the writer, which the engine may call from any thread, is `Sync`:
    /// [`ProductWriter::finish`] alone receives.
    finished: Mutex<Receiver<(usize, Result<WrittenProduct>)>>,
}

/// Where one product stands: whichever of its files and its values comes second starts the writing.
// One slot per product: the size of the larger variant costs nothing worth a box.
#[allow(clippy::large_enum_variant)]
enum Slot {
    Waiting,
    /// Its files are made when its values come, not ahead of them (see [`open_files_ahead`]).
    Deferred,
    Files(Result<OpenProduct>),
    Values(Vec<f32>),
    Started,
}

/// What [`ProductWriter::finish`] gives back.
pub struct Written {
    /// Every product, in the order of the specs, written under temporary names.
    pub products: Vec<WrittenProduct>,
    /// From the migration's end until the last product was written.
    pub after_migration: std::time::Duration,
}

type Done = Sender<(usize, Result<WrittenProduct>)>;

impl<'r, 's> ProductWriter<'r, 's> {
    /// Start writing `specs` into `target`: the products' files are created now, on the pool of `scope`, as
    /// many as the process may keep open (`open_files_ahead`); the files of the others when their values
    /// come.
    pub fn start(scope: &'r rayon::Scope<'s>, target: &'s ProductTarget<'s>, specs: &'s [ProductSpec]) -> Self {
        let (done, finished) = std::sync::mpsc::channel();
        let mut ahead = open_files_ahead();
        let slots: Arc<[Mutex<Slot>]> = specs
            .iter()
            .map(|spec| {
                let now = spec.formats.len() <= ahead;
                ahead = ahead.saturating_sub(spec.formats.len());
                Mutex::new(if now { Slot::Waiting } else { Slot::Deferred })
            })
            .collect();
        let deferred = slots.iter().filter(|s| matches!(*lock(s), Slot::Deferred)).count();
        if deferred > 0 {
            tracing::debug!(
                "the files of {deferred} of {} products are created when their values come (open-file limit)",
                specs.len()
            );
        }
        for (i, spec) in specs.iter().enumerate() {
            if matches!(*lock(&slots[i]), Slot::Deferred) {
                continue;
            }
            let (slots, done) = (slots.clone(), done.clone());
            scope.spawn(move |_| {
                let files = OpenProduct::create(target, spec);
                let mut slot = lock(&slots[i]);
                match std::mem::replace(&mut *slot, Slot::Started) {
                    Slot::Values(values) => {
                        drop(slot);
                        let _ = done.send((i, write(target, spec, files, &values)));
                    }
                    _ => *slot = Slot::Files(files),
                }
            });
        }
        ProductWriter { scope, target, specs, slots, done, finished: Mutex::new(finished) }
    }

    /// Wait for every product, once the engine has handed them all over: written under temporary names,
    /// in the order of the specs and followed by `more` (pictures made of several products: the panels of
    /// a velocity scan), or the first error.
    pub fn finish(self, progress: &dyn Progress, more: Vec<WrittenProduct>) -> Result<Written> {
        let t = std::time::Instant::now();
        let ProductWriter { specs, done, finished, .. } = self;
        // The channel closes once every task that may still send is done.
        drop(done);
        let finished = finished.into_inner().unwrap_or_else(|poisoned| poisoned.into_inner());
        progress.begin("writing", specs.len() as u64);
        let mut written: Vec<Option<Result<WrittenProduct>>> = specs.iter().map(|_| None).collect();
        for (i, result) in finished.iter().take(specs.len()) {
            written[i] = Some(result);
            progress.advance(1);
        }
        progress.finish();
        let mut products = written
            .into_iter()
            .zip(specs)
            .map(|(w, spec)| {
                w.unwrap_or_else(|| {
                    Err(Error::Internal(format!("the engine did not hand over the product {}", spec.stem)))
                })
            })
            .collect::<Result<Vec<_>>>()?;
        products.extend(more);
        let target = self.target;
        draw_shared_pictures(&mut products, target)?;
        if let Some((title, job)) = &target.report.page {
            target.cancel.check()?;
            products.push(index_page(&products, target, title, job)?);
        }
        Ok(Written { products, after_migration: t.elapsed() })
    }
}

/// Draw the pictures that wait for a shared clip: each group's clip is the percentile over the values of
/// all its pictures, then they are drawn side by side.
fn draw_shared_pictures(products: &mut [WrittenProduct], target: &ProductTarget) -> Result<()> {
    use rayon::prelude::*;
    // Each group of pictures (see `PendingPicture::group`) with the products that hold them.
    type Group = (Option<&'static str>, String);
    let mut groups: Vec<(Group, Vec<usize>)> = Vec::new();
    for (i, p) in products.iter().enumerate() {
        if let Some(pending) = &p.pending {
            match groups.iter_mut().find(|(g, _)| *g == pending.group) {
                Some((_, members)) => members.push(i),
                None => groups.push((pending.group.clone(), vec![i])),
            }
        }
    }
    let mut clips = vec![None; products.len()];
    for ((kind, quantity), members) in &groups {
        target.cancel.check()?;
        let pending: Vec<&PendingPicture> = members.iter().filter_map(|&i| products[i].pending.as_ref()).collect();
        let values: Vec<std::borrow::Cow<[f32]>> =
            pending.iter().map(|p| render::display_values(&p.slice.as_slice(), &p.info.quantity, &p.render)).collect();
        let parts: Vec<&[f32]> = values.iter().map(|v| v.as_ref()).collect();
        let n = members.len();
        let (scope, over) = match kind {
            Some(kind) if n == 1 => (ClipScope::Kind, format!("in the only {kind} picture of {quantity} of this run")),
            Some(kind) => (ClipScope::Kind, format!("over the {n} {kind} pictures of {quantity} of this run")),
            None if n == 1 => (ClipScope::Job, format!("in the only picture of {quantity} of this run")),
            None => (ClipScope::Job, format!("over all {n} pictures of {quantity} of this run")),
        };
        let clip = render::decide_clip(&parts, &pending[0].info.quantity, &pending[0].render, scope, &over);
        for &i in members {
            clips[i] = Some(clip.clone());
        }
    }
    let drawn: Vec<(usize, Result<render::SealedImage>)> = products
        .par_iter()
        .enumerate()
        .filter_map(|(i, p)| p.pending.as_ref().map(|pending| (i, pending)))
        .map(|(i, pending)| {
            let info = PictureInfo { clip: clips[i].clone(), ..pending.info.clone() };
            let drawn = target.cancel.check().and_then(|()| {
                render::render_png_sealed(&pending.path, &pending.slice.as_slice(), &pending.render, &info)
            });
            (i, drawn)
        })
        .collect();
    for (i, image) in drawn {
        let [sidecar, png] = image?.files;
        let p = &mut products[i];
        p.pending = None;
        p.files.insert(0, (sidecar, "json"));
        p.files.insert(0, (png, "png"));
    }
    Ok(())
}

/// The name of a run's page in its output folder.
pub const INDEX_PAGE: &str = "index.html";

/// The run's `index.html`, as a product of its own.
fn index_page(products: &[WrittenProduct], target: &ProductTarget, title: &str, job: &str) -> Result<WrittenProduct> {
    let name =
        |f: &SealedOutput| f.final_path().file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let entries = products
        .iter()
        .map(|p| PageEntry {
            label: p.label.clone(),
            picture: p.files.iter().find(|(_, format)| *format == "png").map(|(f, _)| name(f)),
            files: p
                .files
                .iter()
                .filter(|(_, format)| *format != "png")
                .map(|(f, format)| (format.to_string(), name(f), f.digest().bytes))
                .collect(),
        })
        .collect();
    let p = &target.report.provenance;
    let mut facts = vec![("input".to_string(), p.input.clone())];
    facts.extend(p.method.clone().map(|m| ("method".to_string(), m)));
    facts.extend(p.velocity.clone().map(|v| ("velocity".to_string(), v)));
    facts.extend(p.dz_m.map(|d| ("depth step".to_string(), format!("{d} m"))));
    facts.extend(p.fmax_hz.map(|f| ("highest frequency".to_string(), format!("{f} Hz"))));
    facts.push(("run".to_string(), format!("{}, {}", p.software, p.date)));
    let page =
        Page { title: title.to_string(), facts, job: job.to_string(), entries, manifest: "manifest.json".into() };
    let file = write_sealed(target.dir.join(INDEX_PAGE), index_html(&page).as_bytes())?;
    Ok(WrittenProduct {
        kind: ProductKind::Index,
        attribute: None,
        scan: None,
        label: "Index".into(),
        axes: None,
        files: vec![(file, "html")],
        pending: None,
    })
}

impl ProductSink for ProductWriter<'_, '_> {
    fn complete(&self, index: usize, values: Vec<f32>) {
        let mut slot = lock(&self.slots[index]);
        match std::mem::replace(&mut *slot, Slot::Started) {
            Slot::Files(files) => {
                drop(slot);
                let (target, spec, done) = (self.target, &self.specs[index], self.done.clone());
                self.scope.spawn(move |_| {
                    let _ = done.send((index, write(target, spec, files, &values)));
                });
            }
            Slot::Deferred => {
                drop(slot);
                let (target, spec, done) = (self.target, &self.specs[index], self.done.clone());
                self.scope.spawn(move |_| {
                    let files = OpenProduct::create(target, spec);
                    let _ = done.send((index, write(target, spec, files, &values)));
                });
            }
            _ => *slot = Slot::Values(values),
        }
    }
}

/// Write a product whose files and values are both there.
fn write(
    target: &ProductTarget,
    spec: &ProductSpec,
    files: Result<OpenProduct>,
    values: &[f32],
) -> Result<WrittenProduct> {
    let t = std::time::Instant::now();
    let written = target.cancel.check().and_then(|()| files?.write(values, target));
    tracing::debug!("product {} written in {:.3} s", spec.stem, t.elapsed().as_secs_f64());
    written
}

/// How many sub-volume files may be created ahead of their values and held open while the engine
/// migrates: half of the files the process may open, less a reserve for everything else (the input, HDF5,
/// the pictures and files being written). A run with more products makes the files of the rest when their
/// values come, so it never meets the limit however many products it has.
fn open_files_ahead() -> usize {
    const RESERVE: u64 = 64;
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit with a valid struct.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return 0;
    }
    usize::try_from(limit.rlim_cur.saturating_sub(RESERVE) / 2).unwrap_or(usize::MAX)
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Bytes of every file of `records`.
pub fn bytes_of(records: &[ProductRecord]) -> u64 {
    records.iter().flat_map(|r| r.files.iter()).map(|f| f.bytes).sum()
}

/// Put written products in place, every file flushed to disk at once (see [`commit_together_replacing`]),
/// and record them for the manifest, with the files of an earlier run they replaced, to be removed. A
/// picture's sidecar is moved into place before the picture, so that a picture is never found without its
/// sidecar.
pub fn commit_products(written: Vec<WrittenProduct>) -> Result<(Vec<ProductRecord>, Replaced)> {
    // The files in the order they are moved into place, each with its product and its place in that
    // product's list.
    let mut order = Vec::new();
    let mut heads = Vec::with_capacity(written.len());
    for (p, w) in written.into_iter().enumerate() {
        let mut files: Vec<_> =
            w.files.into_iter().enumerate().map(|(i, (file, format))| ((p, i, format), file)).collect();
        files.sort_by_key(|((.., format), _)| *format != "json");
        heads.push((w.kind, w.attribute, w.scan, w.axes, files.len()));
        order.extend(files);
    }
    let (places, sealed): (Vec<_>, Vec<_>) = order.into_iter().unzip();
    let mut files: Vec<Vec<Option<ProductFile>>> = heads.iter().map(|(.., n)| vec![None; *n]).collect();
    let (done, replaced) = commit_together_replacing(sealed)?;
    for ((p, i, format), (path, digest)) in places.into_iter().zip(done) {
        files[p][i] = Some(file_record(&path, digest, format));
    }
    let records = heads
        .into_iter()
        .zip(files)
        .map(|((kind, attribute, scan, axes, _), files)| ProductRecord {
            kind,
            attribute,
            scan,
            axes,
            files: files.into_iter().flatten().collect(),
        })
        .collect();
    Ok((records, replaced))
}

/// Lines of the text header of a SEG-Y product in time: the file says how its time axis was made.
const TIME_NOTE: [&str; 2] = [
    "TWO-WAY TIME, CONVERTED FROM THE DEPTH IMAGE WITH THE MIGRATION",
    "VELOCITY MODEL: T(Z) = 2 * INTEGRAL OF DZ / V",
];

fn title(kind: &ProductKind) -> String {
    match kind {
        ProductKind::Inline { iline } => format!("Inline {iline}"),
        ProductKind::Crossline { xline } => format!("Crossline {xline}"),
        ProductKind::DepthSlice { depth_m } => format!("Depth {depth_m} m"),
        ProductKind::Roi { name } => format!("ROI {name}"),
        ProductKind::TimeSlice { twt_ms } => format!("Time {twt_ms} ms"),
        ProductKind::Panel { of, .. } => format!("Velocity scan of {of}"),
        ProductKind::Index => "Index".into(),
    }
}

/// The picture of a product from the values of its box as the engine hands them over, as its file
/// would be drawn: with what was not recorded zeroed, and in time when the product is.
pub fn picture_of(spec: &ProductSpec, image: &Geometry, box_values: &[f32], bin_size: [f64; 2]) -> Result<SliceData> {
    let values = spec.values(image, box_values).into_owned();
    slice_of(&spec.kind, Volume { geometry: spec.geometry(image), data: values }, bin_size)
}

/// A slice product as an image: depth downwards for sections, inlines downwards for maps, with the true
/// trace spacing (which the image geometry may not carry when the survey has no coordinates).
fn slice_of(kind: &ProductKind, product: Volume, bin_size: [f64; 2]) -> Result<SliceData> {
    Ok(match kind {
        ProductKind::Inline { .. } => {
            let mut s = SliceData::inline(&product, 0)?;
            s.cols.spacing_m = Some(bin_size[1]);
            s
        }
        ProductKind::Crossline { .. } => {
            let mut s = SliceData::crossline(&product, 0)?;
            s.cols.spacing_m = Some(bin_size[0]);
            s
        }
        _ => {
            let mut s = SliceData::horizontal(&product, 0)?;
            s.rows.spacing_m = Some(bin_size[0]);
            s.cols.spacing_m = Some(bin_size[1]);
            s
        }
    })
}

/// The manifest's record of a file written (its checksum read back as the disk wrote it).
fn file_record(path: &Path, digest: FileDigest, format: &str) -> ProductFile {
    ProductFile {
        path: path.file_name().map(PathBuf::from).unwrap_or_default(),
        format: format.into(),
        bytes: digest.bytes,
        sha256: digest.sha256,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::volume::Domain;

    /// Missing traces are zero from top to bottom, every trace is zero below the reach, and the values
    /// are borrowed untouched when neither applies.
    #[test]
    fn deliverable_values_are_zero_where_nothing_was_recorded() {
        let depth = SampleAxis { origin: 100.0, step: 10.0, len: 4, domain: Domain::Depth };
        let mut g = Geometry::regular(LineAxis::new(1, 1, 1), LineAxis::new(1, 1, 3), depth);
        let values: Vec<f32> = (1..=12).map(|v| v as f32).collect();
        assert!(matches!(deliverable(&values, &g, None), Cow::Borrowed(_)));
        assert!(matches!(deliverable(&values, &g, Some(130.0)), Cow::Borrowed(_)), "the last level is at the reach");
        g.live[1] = false;
        let expect = [1.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 9.0, 10.0, 0.0, 0.0];
        assert_eq!(&*deliverable(&values, &g, Some(115.0)), &expect);
    }

    #[test]
    fn a_time_axis_too_long_for_a_mistyped_step_is_refused_before_anything_is_allocated() {
        let depth = SampleAxis { origin: 0.0, step: 10.0, len: 100, domain: Domain::Depth };
        let image = Geometry::regular(LineAxis::new(1, 1, 2), LineAxis::new(1, 1, 2), depth);
        let output = OutputConfig { inlines: vec![1], ..Default::default() };
        let v = VelocityModel::Constant(2000.0);
        let imaging = ImagingParams::default();
        // 990 m is 990 ms: 9.9 million samples of 0.1 µs.
        let e = plan_time_products(&output, &image, &imaging, &[&v], 1e-4).unwrap_err();
        assert!(matches!(&e, Error::Setting { key, .. } if key == "output.time_step_ms"), "{e}");
        let specs = plan_time_products(&output, &image, &imaging, &[&v], 4.0).unwrap();
        assert_eq!((specs[0][0].stem.as_str(), specs[0][0].time.as_ref().unwrap().axis.len), ("inline_1_time", 248));
    }

    /// A product in time is made deliverable in depth (missing traces and what lies below the reach zeroed),
    /// then converted: a dead trace stays dead and times below the reach are zero.
    #[test]
    fn a_product_in_time_is_zero_where_nothing_was_recorded() {
        let depth = SampleAxis { origin: 0.0, step: 10.0, len: 10, domain: Domain::Depth };
        let mut image = Geometry::regular(LineAxis::new(1, 1, 1), LineAxis::new(1, 1, 2), depth);
        image.live[1] = false;
        let v = VelocityModel::Constant(2000.0);
        let output = OutputConfig { inlines: vec![1], ..Default::default() };
        let mut spec =
            plan_time_products(&output, &image, &ImagingParams::default(), &[&v], 10.0).unwrap()[0].remove(0);
        // 10 m at 2000 m/s is 10 ms two-way: the time axis is the depth axis in ms.
        assert_eq!(
            spec.geometry(&image).samples,
            SampleAxis { origin: 0.0, step: 10.0, len: 10, domain: Domain::Time }
        );
        spec.reach = Some(45.0);
        let values = vec![1.0f32; 20];
        let got = spec.values(&image, &values);
        let expect: Vec<f32> = (0..10).map(|k| if k <= 4 { 1.0 } else { 0.0 }).chain([0.0; 10]).collect();
        assert_eq!(&*got, &expect[..]);
    }

    #[test]
    fn the_size_estimate_by_hand() {
        let region = IndexBox { il: 0..1, xl: 0..30, s: 0..200 }; // 6000 values
        let spec = |formats: Vec<VolumeFormat>, png| ProductSpec {
            kind: ProductKind::Inline { iline: 1 },
            attribute: None,
            stem: "inline_1".into(),
            region: region.clone(),
            formats,
            png,
            time: None,
            scan: None,
            reach: None,
        };
        let render = RenderOptions::default(); // min_width 800, max_pixels 4096²
                                               // two files of 24000 + 8192 bytes
        assert_eq!(estimated_bytes(&[spec(vec![VolumeFormat::Npy, VolumeFormat::Hdf5], false)], &render), 64_384);
        // a picture of at least 800² pixels, 3 bytes each, and 65536 bytes besides
        assert_eq!(estimated_bytes(&[spec(vec![], true)], &render), 1_985_536);
        let small = RenderOptions { min_width: 10, max_pixels: 5000, ..render };
        assert_eq!(estimated_bytes(&[spec(vec![], true)], &small), 15_000 + 65_536);
    }
}
