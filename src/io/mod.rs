//! Getting volumes in and out: SEG-Y, HDF5 and NPY, and the atomic-output discipline every writer follows.

pub mod hdf5;
pub mod npy;
pub mod output;
pub mod segy;

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Error, IoContext, Result};
use crate::volume::VolumeReader;

pub use output::TempOutput;

/// The container of a volume file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum FileFormat {
    /// Decide from the extension, then from the file's first bytes.
    #[default]
    Auto,
    Segy,
    Hdf5,
    Npy,
}

/// How to open an input volume.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct InputOptions {
    pub format: FileFormat,
    #[serde(flatten)]
    pub segy: segy::SegyOptions,
    #[serde(flatten)]
    pub hdf5: hdf5::Hdf5Options,
}

const HDF5_SIGNATURE: &[u8; 8] = b"\x89HDF\r\n\x1a\n";

/// The format of `path`: from `hint` unless it is `Auto`, else the extension, else the first bytes.
pub fn detect_format(path: &Path, hint: FileFormat) -> Result<FileFormat> {
    if hint != FileFormat::Auto {
        return Ok(hint);
    }
    let ext = path.extension().and_then(|e| e.to_str()).map(|e| e.to_ascii_lowercase());
    match ext.as_deref() {
        Some("sgy" | "segy" | "seg") => return Ok(FileFormat::Segy),
        Some("h5" | "hdf5" | "hdf" | "he5") => return Ok(FileFormat::Hdf5),
        Some("npy") => return Ok(FileFormat::Npy),
        _ => {}
    }
    let mut head = [0u8; 8];
    let n = {
        use std::io::Read;
        let mut f = std::fs::File::open(path).at(path)?;
        f.read(&mut head).at(path)?
    };
    if n == 8 && &head == HDF5_SIGNATURE {
        Ok(FileFormat::Hdf5)
    } else if head.starts_with(b"\x93NUMPY") {
        Ok(FileFormat::Npy)
    } else {
        Ok(FileFormat::Segy)
    }
}

/// Open a volume for reading, by format.
pub fn open(path: &Path, opts: &InputOptions) -> Result<Box<dyn VolumeReader>> {
    match detect_format(path, opts.format)? {
        FileFormat::Segy => Ok(Box::new(segy::SegyReader::open(path, &opts.segy)?)),
        FileFormat::Hdf5 => Ok(Box::new(hdf5::Hdf5Reader::open(path, &opts.hdf5)?)),
        FileFormat::Npy => Err(Error::format(
            path,
            crate::error::Location::File,
            "NPY files carry no axes (line numbers, sample interval); convert to HDF5 or SEG-Y to use them as input",
        )),
        FileFormat::Auto => unreachable!("detect_format resolves Auto"),
    }
}
