//! Products written as their values come: each one's files through temporary names, as many at once as
//! the open-file limit allows, a picture that shares its clip with others drawn once all of them are in.
//!
//! A product whose picture shares its clip waits, written but for its picture, until the last picture of
//! its group comes; whoever brings that one draws the group's pictures and hands the products over. Groups
//! the run cannot count ahead (a velocity scan's) are drawn once every product is in.

use std::path::PathBuf;
use std::sync::mpsc::{Receiver, Sender};
use std::sync::{Arc, Mutex};

use super::page::{index_page, Facts};
use super::picture::{draw_shared_pictures, slice_of, TIME_NOTE};
use super::record::ProductAxes;
use super::written::{picture_files, ProductTarget, WrittenProduct};
use super::ProductSpec;
use crate::error::{Error, Result};
use crate::imaging::ProductSink;
use crate::io::VolumeSink;
use crate::job::VolumeFormat;
use crate::progress::Progress;
use crate::render::PictureInfo;
use crate::volume::{Geometry, Volume};

/// Values written per step of a sub-volume file: a stop request is honoured between steps.
const WRITE_BLOCK_VALUES: usize = 4 << 20;

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
        if spec.kind == super::ProductKind::Velocity {
            options.segy.text.push(super::velocity::VELOCITY_NOTE.into());
        }
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
    /// [`super::commit_products`]. Stops between steps once the target's run is asked to stop.
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
                panels: Vec::new(),
                remarks: super::remarks::picture_remarks(&g, target.image, spec.reach, target.edge_tapers),
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
            files.push((sink.seal()?, f.extension()));
            steps.lap("close and checksum");
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
    /// Written products whose pictures wait for the rest of their clip group, shared with the tasks that
    /// write them.
    waiting: Waiting,
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
type Waiting = Arc<Mutex<Vec<(usize, WrittenProduct)>>>;

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
        let waiting = Waiting::default();
        for (i, spec) in specs.iter().enumerate() {
            if matches!(*lock(&slots[i]), Slot::Deferred) {
                continue;
            }
            let (slots, waiting, done) = (slots.clone(), waiting.clone(), done.clone());
            scope.spawn(move |_| {
                let files = OpenProduct::create(target, spec);
                let mut slot = lock(&slots[i]);
                match std::mem::replace(&mut *slot, Slot::Started) {
                    Slot::Values(values) => {
                        drop(slot);
                        hand_over(target, &waiting, &done, i, write(target, spec, files, &values));
                    }
                    _ => *slot = Slot::Files(files),
                }
            });
        }
        ProductWriter { scope, target, specs, slots, waiting, done, finished: Mutex::new(finished) }
    }

    /// Wait for every product, once the engine has handed them all over: written under temporary names,
    /// in the order of the specs and followed by `more` (pictures made of several products: the panels of
    /// a velocity scan), or the first error; the page shows `facts` besides the report's.
    pub fn finish(self, progress: &dyn Progress, more: Vec<WrittenProduct>, facts: Facts) -> Result<Written> {
        let t = std::time::Instant::now();
        let ProductWriter { specs, waiting, done, finished, .. } = self;
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
        // Those of a group that never came whole, because another of its products failed.
        for (i, product) in lock(&waiting).drain(..) {
            written[i] = Some(Ok(product));
        }
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
            products.push(index_page(&products, target, title, job, facts)?);
        }
        Ok(Written { products, after_migration: t.elapsed() })
    }
}

impl ProductSink for ProductWriter<'_, '_> {
    fn complete(&self, index: usize, values: Vec<f32>) {
        let mut slot = lock(&self.slots[index]);
        match std::mem::replace(&mut *slot, Slot::Started) {
            Slot::Files(files) => {
                drop(slot);
                let (target, spec) = (self.target, &self.specs[index]);
                let (waiting, done) = (self.waiting.clone(), self.done.clone());
                self.scope.spawn(move |_| {
                    hand_over(target, &waiting, &done, index, write(target, spec, files, &values));
                });
            }
            Slot::Deferred => {
                drop(slot);
                let (target, spec) = (self.target, &self.specs[index]);
                let (waiting, done) = (self.waiting.clone(), self.done.clone());
                self.scope.spawn(move |_| {
                    let files = OpenProduct::create(target, spec);
                    hand_over(target, &waiting, &done, index, write(target, spec, files, &values));
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

/// Hand written product `index` to [`ProductWriter::finish`]; one whose picture waits for a clip group the
/// run counted ([`ProductTarget::clip_groups`]) waits in `waiting` until the group's last picture comes,
/// and then the group's pictures are drawn, here, and its products handed over together.
fn hand_over(target: &ProductTarget, waiting: &Waiting, done: &Done, index: usize, written: Result<WrittenProduct>) {
    let group = written.as_ref().ok().and_then(|w| w.pending.as_ref()).map(|p| p.group.clone());
    let Some((group, size)) = group.and_then(|g| target.clip_groups.iter().find(|(c, _)| *c == g)) else {
        let _ = done.send((index, written));
        return;
    };
    let Ok(written) = written else { unreachable!("only a written product has a picture") };
    let in_group = |w: &WrittenProduct| w.pending.as_ref().is_some_and(|p| p.group == *group);
    let complete: Vec<(usize, WrittenProduct)> = {
        let mut held = lock(waiting);
        held.push((index, written));
        if held.iter().filter(|(_, w)| in_group(w)).count() < *size {
            return;
        }
        let (complete, others) = std::mem::take(&mut *held).into_iter().partition(|(_, w)| in_group(w));
        *held = others;
        complete
    };
    let (indices, mut products): (Vec<usize>, Vec<WrittenProduct>) = complete.into_iter().unzip();
    let t = std::time::Instant::now();
    let mut drawn = draw_shared_pictures(&mut products, target);
    tracing::debug!("clip group of {} picture(s) drawn in {:.3} s", products.len(), t.elapsed().as_secs_f64());
    for (i, product) in indices.into_iter().zip(products) {
        // Where the drawing failed, the run fails with its error, carried by the first product.
        let _ = done.send((i, std::mem::replace(&mut drawn, Ok(())).map(|()| product)));
    }
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
