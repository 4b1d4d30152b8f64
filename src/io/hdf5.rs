//! HDF5 volumes (through the statically linked HDF5 of `hdf5-metno`): a 3-D float dataset with its axes.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::volume::{Geometry, IndexBox, VolumeReader};

/// The dataset path used when none is given.
pub const DEFAULT_DATASET: &str = "/seismic";

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Hdf5Options {
    /// Path of the 3-D dataset inside the file.
    pub dataset: String,
}

impl Default for Hdf5Options {
    fn default() -> Self {
        Hdf5Options { dataset: DEFAULT_DATASET.into() }
    }
}

/// An HDF5 volume opened for reading. (Being written; see issue 2.)
pub struct Hdf5Reader {
    geometry: Geometry,
}

impl Hdf5Reader {
    pub fn open(path: &Path, _opts: &Hdf5Options) -> Result<Self> {
        Err(crate::error::Error::format(path, crate::error::Location::File, "HDF5 reader not written yet"))
    }
}

impl VolumeReader for Hdf5Reader {
    fn geometry(&self) -> &Geometry {
        &self.geometry
    }
    fn describe(&self) -> String {
        String::new()
    }
    fn read_box(&self, _b: &IndexBox, _out: &mut [f32]) -> Result<()> {
        unimplemented!()
    }
}
