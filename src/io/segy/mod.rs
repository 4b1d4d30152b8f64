//! SEG-Y rev 0/1/2 post-stack volumes: headers parsed with `nom`, the file memory-mapped, traces decoded
//! in parallel straight into the caller's buffer.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::volume::{Geometry, IndexBox, VolumeReader};

/// Named sets of trace-header byte locations (1-based, 4-byte integers).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum HeaderPreset {
    /// SEG-Y rev 1: inline 189, crossline 193, CDP x 181, CDP y 185.
    #[default]
    Standard,
    /// Petrel's export: inline 5, crossline 21, x 73, y 77.
    Petrel,
}

/// Byte order of binary and trace headers and samples.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Endian {
    /// The rev-2 constant at bytes 3297-3300 when present, else the order that gives a plausible header.
    #[default]
    Auto,
    Big,
    Little,
}

/// How to read a SEG-Y file's headers.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SegyOptions {
    pub preset: HeaderPreset,
    /// Overrides of single byte locations (1-based); `None` keeps the preset's.
    pub iline_byte: Option<u16>,
    pub xline_byte: Option<u16>,
    pub x_byte: Option<u16>,
    pub y_byte: Option<u16>,
    pub endian: Endian,
}

/// A SEG-Y file opened for reading. (Being written; see issue 2.)
pub struct SegyReader {
    geometry: Geometry,
}

impl SegyReader {
    pub fn open(path: &Path, _opts: &SegyOptions) -> Result<Self> {
        Err(crate::error::Error::format(path, crate::error::Location::File, "SEG-Y reader not written yet"))
    }
}

impl VolumeReader for SegyReader {
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
