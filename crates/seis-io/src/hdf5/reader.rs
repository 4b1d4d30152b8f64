//! Opening an HDF5 volume: find the 3-D dataset, then its axes (companion datasets, else attributes, else
//! indices), its survey coordinates and its live mask; afterwards read boxes of it by hyperslab.
//!
//! The files under `reader/` hold, each using only those listed before it: `summary` (what `info` shows),
//! `dataset` (finding the volume dataset) and `scan` (finding its axes); this file opens a volume with them
//! and reads it.

mod dataset;
mod scan;
mod summary;

use std::path::{Path, PathBuf};

use ::hdf5::Dataset;

use super::guard;
use super::raw::{self, H5Context};
use super::{check_box, join, split_dataset_path, Hdf5Options, ILINE, XLINE};
use crate::files::{library_path, open_regular};
use seis_core::error::{IoContext, Result};
use seis_core::volume::{Geometry, IndexBox, LineAxis, VolumeReader};

use dataset::open_volume;
use scan::Scan;
use summary::{attributes_of, describe_dtype, describe_filter};

pub use summary::{AxisSource, AxisSummary, Hdf5Summary};

/// An HDF5 volume opened for reading.
pub struct Hdf5Reader {
    path: PathBuf,
    dataset: Dataset,
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
        let (dataset, [n_il, n_xl, n_s]) = open_volume(path, &file, &dataset_path, file_len)?;

        let mut scan = Scan::new(path, &file, &group_path, &dataset, &dataset_path, file_len)?;
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
        Ok(Hdf5Reader { path: path.to_path_buf(), dataset, geometry, summary })
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
        raw::read_box(&self.dataset, b, out).doing(&self.path, || {
            format!(
                "reading inline indices {:?}, crossline indices {:?} of dataset {}",
                b.il, b.xl, self.summary.dataset
            )
        })?;
        // A read stopped between its parts left `out` incomplete.
        seis_core::cancel::CancelToken::process().check()
    }
}
