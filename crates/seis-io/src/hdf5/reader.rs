//! Opening an HDF5 volume: find the 3-D dataset, then its axes (companion datasets, else attributes, else
//! indices), its survey coordinates and its live mask; afterwards read boxes of it by hyperslab.
//!
//! The files under `reader/` hold, each using only those listed before it: `summary` (what `info` shows),
//! `dataset` (finding the volume dataset), `order` (which axis each of its dimensions holds), `scan`
//! (finding its axes) and `permuted` (reading a dataset stored in another order); this file opens a volume
//! with them and reads it.

mod dataset;
mod order;
mod permuted;
mod scan;
mod summary;
#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};

use ::hdf5::Dataset;

use super::guard;
use super::raw::{self, H5Context};
use super::{check_box, join, split_dataset_path, Hdf5Options, ILINE, XLINE};
use crate::files::{library_path, open_regular};
use seis_core::error::{IoContext, Result};
use seis_core::volume::{Geometry, IndexBox, LineAxis, VolumeReader};

use dataset::open_volume;
use order::axis_order;
use scan::Scan;
use summary::{attributes_of, describe_dtype, describe_filter};

pub use summary::{AxisSource, AxisSummary, Hdf5Summary};

/// An HDF5 volume opened for reading.
pub struct Hdf5Reader {
    path: PathBuf,
    dataset: Dataset,
    /// For each dimension of the dataset, the axis of the model it holds; `None` in the model's order.
    axes: Option<[usize; 3]>,
    geometry: Geometry,
    summary: Hdf5Summary,
}

impl Hdf5Reader {
    pub fn open(path: &Path, opts: &Hdf5Options) -> Result<Self> {
        guard::init();
        let (group_path, name) = split_dataset_path(path, &opts.dataset)?;
        let dataset_path = join(&group_path, &name);
        // Opened here first: the operating system says "no such file" more plainly than HDF5 does, and only a
        // regular file is handed on, by the name of this very descriptor.
        let opened = open_regular(path)?;
        let file_len = opened.metadata().at(path)?.len();
        let file = super::unlocked()
            .open(library_path(&opened, path))
            .doing(path, || "cannot open it as HDF5 (not an HDF5 file, or a damaged one)".into())?;
        drop(opened);
        let (dataset, stored_shape) = open_volume(path, &file, &dataset_path, file_len)?;
        let order = axis_order(path, &dataset, &dataset_path, &stored_shape)?;
        let [n_il, n_xl, n_s] = order.model_shape(stored_shape);
        let stored_axes = [order.axes[0], order.axes[1], order.axes[2]];
        let axes = (!order.is_stored_order()).then_some(stored_axes);
        let dataset = match (axes, dataset.chunk()) {
            (Some(permuted::SAMPLES_LAST), Some(chunk)) => {
                let chunk = <[usize; 3]>::try_from(chunk).unwrap_or(stored_shape);
                let (slots, bytes) =
                    permuted::samples_last_cache(stored_shape, chunk, dataset.dtype().map_or(4, |t| t.size()));
                raw::open_with_chunk_cache(&file, &dataset_path, slots, bytes)
                    .doing(path, || format!("opening {dataset_path} with a chunk cache"))?
            }
            _ => dataset,
        };

        let mut scan = Scan::new(path, &file, &group_path, &dataset, &dataset_path, file_len, order)?;
        let (ilines, il_source) = scan.line_axis(ILINE, n_il, "the inlines")?;
        let (xlines, xl_source) = scan.line_axis(XLINE, n_xl, "the crosslines")?;
        let (samples, s_source) = scan.sample_axis(n_s)?;
        let coords = scan.coords()?;
        let (live, live_mask) = scan.live(n_il, n_xl)?;
        let geometry = Geometry { ilines, xlines, samples, coords, live };

        let line = |name, axis: &LineAxis, source| AxisSummary {
            name,
            first: axis.first,
            step: axis.step,
            len: axis.len,
            unit: None,
            source,
        };
        let summary = Hdf5Summary {
            file: path.to_path_buf(),
            dtype: describe_dtype(&dataset),
            shape: geometry.shape(),
            dimensions: stored_axes.map(|axis| [ILINE, XLINE, samples.domain.axis_name()][axis]),
            chunk: dataset.chunk(),
            filters: dataset.filters().iter().map(describe_filter).collect(),
            iline: line(ILINE, &ilines, il_source),
            xline: line(XLINE, &xlines, xl_source),
            sample: AxisSummary {
                name: samples.domain.axis_name(),
                first: samples.origin,
                step: samples.step,
                len: samples.len,
                unit: Some(samples.domain.unit()),
                source: s_source,
            },
            coords,
            live_mask,
            missing_traces: geometry.n_missing(),
            attributes: attributes_of(&dataset),
            notes: scan.notes,
            dataset: dataset_path,
        };
        Ok(Hdf5Reader { path: path.to_path_buf(), dataset, axes, geometry, summary })
    }

    pub fn summary(&self) -> Hdf5Summary {
        self.summary.clone()
    }
}

impl VolumeReader for Hdf5Reader {
    fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    fn describe(&self) -> String {
        format!("{} (HDF5 dataset {})", self.path.display(), self.summary.dataset)
    }

    fn read_box(&self, b: &IndexBox, out: &mut [f32]) -> Result<()> {
        check_box(&self.path, b, self.geometry.shape(), out.len())?;
        if b.is_empty() {
            return Ok(());
        }
        match self.axes {
            None => raw::read_box(&self.dataset, b, out),
            Some(axes) => permuted::read_box(&self.dataset, axes, b, out),
        }
        .doing(&self.path, || {
            format!(
                "reading inline indices {:?}, crossline indices {:?} of dataset {}",
                b.il, b.xl, self.summary.dataset
            )
        })?;
        // A read stopped between its parts left `out` incomplete.
        seis_core::cancel::CancelToken::process().check()
    }
}
