//! From the `[output]` section to boxes of the image, and from migrated boxes to files.
//!
//! Every product — inline, crossline, depth slice or ROI — is one box of the image grid. The engines only
//! ever see the boxes ([`ImageRequest`]); this module names them, and writes each one as PNG and/or
//! sub-volume files through temporary names, recording a checksum for the manifest.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, Sender};
use std::sync::{Arc, Mutex};

use serde::Serialize;

use crate::cancel::CancelToken;
use crate::error::{Error, Result};
use crate::imaging::{ImageRequest, ProductSink};
use crate::io::output::{commit_together_replacing, FileDigest, Replaced, SealedOutput};
use crate::io::VolumeSink;
use crate::job::{OutputConfig, VolumeFormat};
use crate::progress::Progress;
use crate::render::{self, RenderOptions, SliceData};
use crate::time_domain::TimeForm;
use crate::velocity::{ScanStep, VelocityModel};
use crate::volume::{Domain, Geometry, IndexBox, LineAxis, SampleAxis, ValueBox, Volume};

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
}

/// One requested product: its box of the image and how to write it.
#[derive(Clone, Debug)]
pub struct ProductSpec {
    pub kind: ProductKind,
    /// File stem, e.g. `inline_121`.
    pub stem: String,
    pub region: IndexBox,
    pub formats: Vec<VolumeFormat>,
    pub png: bool,
    /// In two-way time: the box of the depth image converted so (`None`: in depth, as imaged).
    pub time: Option<Arc<TimeForm>>,
    /// The migration of a velocity scan it comes from (`None`: the job migrates once).
    pub scan: Option<ScanStep>,
}

/// The products of `output` on the image grid `image` (depth domain), in a stable order. A product that does
/// not fit the image is a configuration error naming the key that asks for it (`output.inlines`, ...).
pub fn plan_products(output: &OutputConfig, image: &Geometry) -> Result<Vec<ProductSpec>> {
    let all = image.full_box();
    let mut specs = Vec::new();
    let slice = |kind, stem, region| ProductSpec {
        kind,
        stem,
        region,
        formats: output.slice_formats.clone(),
        png: output.png,
        time: None,
        scan: None,
    };
    let at = |key: String| move |e: Error| Error::at_key(key, e.to_string());
    for &il in &output.inlines {
        let i = image.iline_index(il).map_err(at("output.inlines".into()))?;
        specs.push(slice(
            ProductKind::Inline { iline: il },
            format!("inline_{il}"),
            IndexBox { il: i..i + 1, ..all.clone() },
        ));
    }
    for &xl in &output.crosslines {
        let j = image.xline_index(xl).map_err(at("output.crosslines".into()))?;
        specs.push(slice(
            ProductKind::Crossline { xline: xl },
            format!("xline_{xl}"),
            IndexBox { xl: j..j + 1, ..all.clone() },
        ));
    }
    for &z in &output.depth_slices {
        let k = image.sample_index(z).map_err(|_| {
            let deepest = image.samples.last();
            let message =
                format!("depth slice {z} m is below the deepest depth imaged ({deepest} m): raise imaging.zmax");
            Error::at_key("output.depth_slices", message)
        })?;
        let exact = image.samples.value(k);
        specs.push(slice(
            ProductKind::DepthSlice { depth_m: exact },
            format!("depth_{}m", exact.round() as i64),
            IndexBox { s: k..k + 1, ..all.clone() },
        ));
    }
    for (n, r) in output.roi.iter().enumerate() {
        let region = image
            .index_box(&ValueBox { iline: r.iline, xline: r.xline, sample: r.depth })
            .map_err(at(format!("output.roi.{n}")))?;
        specs.push(ProductSpec {
            kind: ProductKind::Roi { name: r.name.clone() },
            stem: format!("roi_{}", r.name),
            region,
            formats: r.formats.clone(),
            png: false,
            time: None,
            scan: None,
        });
    }
    let mut stems = std::collections::HashSet::new();
    if let Some(dup) = specs.iter().find(|s| !stems.insert(s.stem.clone())) {
        let key = match dup.kind {
            ProductKind::Inline { .. } => "output.inlines",
            ProductKind::Crossline { .. } => "output.crosslines",
            ProductKind::DepthSlice { .. } => "output.depth_slices",
            ProductKind::Roi { .. } => "output.roi",
            ProductKind::TimeSlice { .. } => "output.time_slices",
            ProductKind::Panel { .. } => "output",
        };
        return Err(Error::at_key(key, format!("the product {} is requested twice", dup.stem)));
    }
    Ok(specs)
}

/// Most samples per trace of a product in time (a guard against a mistyped `output.time_step_ms`).
const MAX_TIME_SAMPLES: usize = 1_000_000;

/// The products of `output` in two-way time (`output.domain` holds "time"), one list per velocity model
/// (the migrations of a velocity scan), each converted with its model and sampled every `step_ms`: the
/// sections and regions of [`plan_products`] with `_time` after their stem, and a slice per
/// `output.time_slices`. Every list asks for the same boxes of the image.
pub fn plan_time_products(
    output: &OutputConfig,
    image: &Geometry,
    velocities: &[&VelocityModel],
    step_ms: f64,
) -> Result<Vec<Vec<ProductSpec>>> {
    let sections = OutputConfig { depth_slices: Vec::new(), ..output.clone() };
    let boxes = plan_products(&sections, image)?;
    // A time slice's box holds its time at every trace, for every model.
    let mut slices = Vec::new();
    for &t in &output.time_slices {
        let mut s: Option<std::ops::Range<usize>> = None;
        for v in velocities {
            let levels = TimeForm::slice_levels(v, image, t)?;
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
                stem: format!("time_{}ms", t.round() as i64),
                time: Some(Arc::new(TimeForm::at_time(v, image, region, *t))),
                region: region.clone(),
                formats: output.slice_formats.clone(),
                png: output.png,
                scan: None,
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

/// The geometry of a product as written: its box of the image, in time when it is a time product.
pub fn product_geometry(spec: &ProductSpec, image: &Geometry) -> Geometry {
    let mut g = image.subset(&spec.region);
    if let Some(t) = &spec.time {
        g.samples = t.axis;
    }
    g
}

/// The boxes the engines must compute.
pub fn request(specs: &[ProductSpec]) -> ImageRequest {
    ImageRequest { boxes: specs.iter().map(|s| s.region.clone()).collect() }
}

/// Bytes the products will take on disk at most, about (for the free-space check before the migration):
/// 4 bytes per value and 8 KiB of headers per sub-volume file; per PNG, the uncompressed RGB size of the
/// largest picture `render` allows for the slice (at least `min_width²` pixels, as narrow slices are
/// enlarged), plus 64 KiB for the annotation and the sidecar.
pub fn estimated_bytes(specs: &[ProductSpec], render: &RenderOptions) -> u64 {
    const FILE_HEADERS: u64 = 8 << 10;
    const PNG_EXTRAS: u64 = 64 << 10;
    let min_area = u64::from(render.min_width).pow(2);
    specs
        .iter()
        .map(|s| {
            let values = match &s.time {
                Some(t) => (s.region.il.len() * s.region.xl.len() * t.axis.len) as u64,
                None => s.region.len() as u64,
            };
            let files = s.formats.len() as u64 * (4 * values + FILE_HEADERS);
            let png = if s.png { 3 * values.max(min_area).min(render.max_pixels) + PNG_EXTRAS } else { 0 };
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
    /// The migration of a velocity scan it comes from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scan: Option<ScanStep>,
    /// Axes of the product as written.
    pub axes: ProductAxes,
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
    scan: Option<ScanStep>,
    axes: ProductAxes,
    /// Its files with their formats, in the manifest's order.
    files: Vec<(SealedOutput, &'static str)>,
}

impl WrittenProduct {
    /// A picture and its sidecar (`[sidecar, png]`, as the renderer seals them), written under temporary
    /// names, as a product of `kind` with `axes`.
    pub fn picture(kind: ProductKind, axes: ProductAxes, files: [SealedOutput; 2]) -> Self {
        let [sidecar, png] = files;
        WrittenProduct { kind, scan: None, axes, files: vec![(png, "png"), (sidecar, "json")] }
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
}

/// Write one product into the target's folder under temporary names: PNG for slices, and its sub-volume
/// formats.
pub fn write_product(target: &ProductTarget, spec: &ProductSpec, data: &[f32]) -> Result<WrittenProduct> {
    OpenProduct::create(target.dir, spec, target.image)?.write(data, target)
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
    pub fn create(dir: &Path, spec: &ProductSpec, image: &Geometry) -> Result<Self> {
        let geometry = product_geometry(spec, image);
        let mut options = crate::io::WriteOptions::default();
        if spec.time.is_some() {
            options.segy.text = TIME_NOTE.iter().map(|l| l.to_string()).collect();
        }
        let mut sinks = Vec::with_capacity(spec.formats.len());
        for f in &spec.formats {
            let t = std::time::Instant::now();
            let path = dir.join(format!("{}.{}", spec.stem, f.extension()));
            sinks.push((*f, VolumeSink::create(f.file_format(), &path, &geometry, &options)?));
            tracing::trace!("{} as {}: created in {:.1} ms", spec.stem, f.extension(), t.elapsed().as_secs_f64() * 1e3);
        }
        Ok(OpenProduct { spec: spec.clone(), dir: dir.to_path_buf(), geometry, sinks })
    }

    /// Draw the picture and fill the files with `data` (the product's values, `[il][xl][z]`), each left
    /// under its temporary name, checksummed, for [`commit_products`]. Stops between steps once the
    /// target's run is asked to stop.
    pub fn write(self, data: &[f32], target: &ProductTarget) -> Result<WrittenProduct> {
        let OpenProduct { spec, dir, geometry: g, sinks } = self;
        let converted;
        let data = match &spec.time {
            Some(t) if data.len() == spec.region.len() => {
                converted = t.convert(data);
                &converted[..]
            }
            _ => data,
        };
        if data.len() != g.n_values() {
            return Err(Error::Internal(format!(
                "product {}: {} values for a box of {}",
                spec.stem,
                data.len(),
                g.n_values()
            )));
        }
        let cancel = &target.cancel;
        let mut files = Vec::new();
        if spec.png {
            cancel.check()?;
            let path = dir.join(format!("{}.png", spec.stem));
            let slice = slice_of(&spec.kind, Volume { geometry: g.clone(), data: data.to_vec() }, target.bin_size)?;
            let mut opts = target.render.clone();
            if opts.title.is_none() {
                opts.title = Some(title(&spec));
            }
            let [sidecar, png] = render::render_png_sealed(&path, &slice.as_slice(), &opts)?.files;
            files.push((png, "png"));
            files.push((sidecar, "json"));
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
        Ok(WrittenProduct { kind: spec.kind, scan: spec.scan, axes: ProductAxes::of(&g), files })
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
    /// Start writing `specs` into `target`: every product's files are created now, on the pool of `scope`.
    pub fn start(scope: &'r rayon::Scope<'s>, target: &'s ProductTarget<'s>, specs: &'s [ProductSpec]) -> Self {
        let (done, finished) = std::sync::mpsc::channel();
        let slots: Arc<[Mutex<Slot>]> = specs.iter().map(|_| Mutex::new(Slot::Waiting)).collect();
        for (i, spec) in specs.iter().enumerate() {
            let (slots, done) = (slots.clone(), done.clone());
            scope.spawn(move |_| {
                let files = OpenProduct::create(target.dir, spec, target.image);
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
    /// in the order of the specs, or the first error.
    pub fn finish(self, progress: &dyn Progress) -> Result<Written> {
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
        let products = written
            .into_iter()
            .zip(specs)
            .map(|(w, spec)| {
                w.unwrap_or_else(|| {
                    Err(Error::Internal(format!("the engine did not hand over the product {}", spec.stem)))
                })
            })
            .collect::<Result<_>>()?;
        Ok(Written { products, after_migration: t.elapsed() })
    }
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
        heads.push((w.kind, w.scan, w.axes, files.len()));
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
        .map(|((kind, scan, axes, _), files)| ProductRecord {
            kind,
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

/// The title of a product's picture: what it is, its domain when in time, its migration when in a scan.
pub fn title(spec: &ProductSpec) -> String {
    let what = match &spec.kind {
        ProductKind::Inline { iline } => format!("Inline {iline}"),
        ProductKind::Crossline { xline } => format!("Crossline {xline}"),
        ProductKind::DepthSlice { depth_m } => format!("Depth {depth_m} m"),
        ProductKind::Roi { name } => format!("ROI {name}"),
        ProductKind::TimeSlice { twt_ms } => format!("Time {twt_ms} ms"),
        ProductKind::Panel { of, .. } => format!("Velocity scan of {of}"),
    };
    let domain = match (&spec.time, &spec.kind) {
        (Some(_), ProductKind::Inline { .. } | ProductKind::Crossline { .. } | ProductKind::Roi { .. }) => {
            ", two-way time"
        }
        _ => "",
    };
    match spec.scan {
        Some(step) => format!("{what}{domain}, velocity {}", step.label()),
        None => format!("{what}{domain}"),
    }
}

/// The picture of a slice product from its values as the engine hands them over (the depth box): in
/// time when the product is, as its file would be drawn.
pub fn picture_of(spec: &ProductSpec, image: &Geometry, values: &[f32], bin_size: [f64; 2]) -> Result<SliceData> {
    let geometry = product_geometry(spec, image);
    let data = match &spec.time {
        Some(t) => t.convert(values),
        None => values.to_vec(),
    };
    slice_of(&spec.kind, Volume { geometry, data }, bin_size)
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

    #[test]
    fn a_time_axis_too_long_for_a_mistyped_step_is_refused_before_anything_is_allocated() {
        let depth = SampleAxis { origin: 0.0, step: 10.0, len: 100, domain: Domain::Depth };
        let image = Geometry::regular(LineAxis::new(1, 1, 2), LineAxis::new(1, 1, 2), depth);
        let output = OutputConfig { inlines: vec![1], ..Default::default() };
        let v = VelocityModel::Constant(2000.0);
        // 990 m is 990 ms: 9.9 million samples of 0.1 µs.
        let e = plan_time_products(&output, &image, &[&v], 1e-4).unwrap_err();
        assert!(matches!(&e, Error::Setting { key, .. } if key == "output.time_step_ms"), "{e}");
        let specs = plan_time_products(&output, &image, &[&v], 4.0).unwrap();
        assert_eq!((specs[0][0].stem.as_str(), specs[0][0].time.as_ref().unwrap().axis.len), ("inline_1_time", 248));
    }

    #[test]
    fn the_size_estimate_by_hand() {
        let region = IndexBox { il: 0..1, xl: 0..30, s: 0..200 }; // 6000 values
        let spec = |formats: Vec<VolumeFormat>, png| ProductSpec {
            kind: ProductKind::Inline { iline: 1 },
            stem: "inline_1".into(),
            region: region.clone(),
            formats,
            png,
            time: None,
            scan: None,
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
