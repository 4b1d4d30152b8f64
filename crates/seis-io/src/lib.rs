//! Getting volumes in and out: SEG-Y, HDF5 and NPY, and the atomic-output discipline every writer follows.

pub mod crs;
pub mod files;
pub mod geotiff;
pub mod hdf5;
pub mod mapped;
pub mod mdio;
pub mod npy;
pub mod output;
pub mod segy;

use std::path::Path;

use serde::{Deserialize, Serialize};

use seis_core::error::{Error, IoContext, Result};
use seis_core::volume::VolumeReader;

pub use output::TempOutput;
use seis_core::choice::Choice;

/// The container of a volume file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FileFormat {
    /// Decide from the extension, then from the file's first bytes.
    #[default]
    Auto,
    Segy,
    /// Seismic Unix: SEG-Y traces without file headers (read only).
    Su,
    Hdf5,
    Npy,
    /// GeoTIFF maps (written only, for depth and time slices).
    #[serde(rename = "geotiff")]
    GeoTiff,
    /// MDIO v1: a Zarr v3 folder (`.mdio`).
    Mdio,
}

impl Choice for FileFormat {
    const CHOICES: &'static [(Self, &'static str, &'static str)] = &[
        (FileFormat::Auto, "auto", "Decide from the extension, then from the file's first bytes."),
        (FileFormat::Segy, "segy", ""),
        (FileFormat::Su, "su", "Seismic Unix: SEG-Y traces without file headers (read only)."),
        (FileFormat::Hdf5, "hdf5", ""),
        (FileFormat::Npy, "npy", ""),
        (FileFormat::GeoTiff, "geotiff", "GeoTIFF maps (written only, for depth and time slices)."),
        (FileFormat::Mdio, "mdio", "MDIO v1: a Zarr v3 folder (.mdio)."),
    ];
}

/// How to open an input volume: the reading keys of a job file's `[input]` table (and of a velocity file),
/// flat so that a job file says `headers = "petrel"` rather than a nested table per container.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct InputOptions {
    pub format: FileFormat,
    /// SEG-Y: trace-header byte preset, "standard" or "petrel".
    pub headers: segy::HeaderPreset,
    /// SEG-Y: byte overrides (1-based, 4-byte integers).
    pub iline_byte: Option<u16>,
    pub xline_byte: Option<u16>,
    pub x_byte: Option<u16>,
    pub y_byte: Option<u16>,
    pub endian: segy::Endian,
    /// SEG-Y: sample format code to use instead of the binary header's.
    pub sample_format: Option<u16>,
    /// SEG-Y: sample interval (ms; m for depth) to use instead of the headers'.
    pub sample_interval: Option<f64>,
    /// HDF5: path of the 3-D dataset.
    pub dataset: String,
    /// SEG-Y: the trace axis's domain instead of the file's (see [`segy::SegyOptions::domain`]); not a key
    /// of a job file.
    #[serde(skip)]
    pub domain: Option<seis_core::volume::Domain>,
}

impl Default for InputOptions {
    fn default() -> Self {
        InputOptions::from_parts(&segy::SegyOptions::default(), &hdf5::Hdf5Options::default(), FileFormat::Auto)
    }
}

impl InputOptions {
    pub fn from_parts(s: &segy::SegyOptions, h: &hdf5::Hdf5Options, format: FileFormat) -> Self {
        InputOptions {
            format,
            headers: s.preset,
            iline_byte: s.iline_byte,
            xline_byte: s.xline_byte,
            x_byte: s.x_byte,
            y_byte: s.y_byte,
            endian: s.endian,
            sample_format: s.sample_format,
            sample_interval: s.sample_interval,
            dataset: h.dataset.clone(),
            domain: s.domain,
        }
    }

    pub fn segy(&self) -> segy::SegyOptions {
        segy::SegyOptions {
            preset: self.headers,
            iline_byte: self.iline_byte,
            xline_byte: self.xline_byte,
            x_byte: self.x_byte,
            y_byte: self.y_byte,
            endian: self.endian,
            sample_format: self.sample_format,
            sample_interval: self.sample_interval,
            domain: self.domain,
        }
    }

    pub fn hdf5(&self) -> hdf5::Hdf5Options {
        hdf5::Hdf5Options { dataset: self.dataset.clone() }
    }
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
        Some("su") => return Ok(FileFormat::Su),
        Some("h5" | "hdf5" | "hdf" | "he5") => return Ok(FileFormat::Hdf5),
        Some("npy") => return Ok(FileFormat::Npy),
        Some("tif" | "tiff") => return Ok(FileFormat::GeoTiff),
        Some("mdio") => return Ok(FileFormat::Mdio),
        _ => {}
    }
    if path.is_dir() && path.join("zarr.json").exists() {
        return Ok(FileFormat::Mdio);
    }
    let mut head = [0u8; 8];
    let n = {
        use std::io::Read;
        let mut f = files::open_regular(path)?;
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

/// Open a volume for reading, by format. A reading option that cannot be used is an [`Error::Setting`] named
/// by its key among the reading options (`iline_byte`); a job puts it under the table that holds them
/// (`input`, `velocity.input`) with [`Error::within`].
pub fn open(path: &Path, opts: &InputOptions) -> Result<Box<dyn VolumeReader>> {
    match detect_format(path, opts.format)? {
        FileFormat::Segy => Ok(Box::new(segy::SegyReader::open(path, &opts.segy())?)),
        FileFormat::Su => Ok(Box::new(segy::SegyReader::open_su(path, &opts.segy())?)),
        FileFormat::Hdf5 => Ok(Box::new(hdf5::Hdf5Reader::open(path, &opts.hdf5())?)),
        FileFormat::Mdio => Ok(Box::new(mdio::MdioReader::open(path)?)),
        FileFormat::Npy => Err(Error::format(
            path,
            seis_core::error::Location::File,
            "NPY files carry no axes (line numbers, sample interval); convert to HDF5 or SEG-Y to use them as input",
        )),
        FileFormat::GeoTiff => Err(Error::format(
            path,
            seis_core::error::Location::File,
            "seisimage writes GeoTIFF maps but does not read them; give a SEG-Y, Seismic Unix or HDF5 volume",
        )),
        FileFormat::Auto => unreachable!("detect_format resolves Auto"),
    }
}

/// How to write each container.
#[derive(Clone, Debug, Default)]
pub struct WriteOptions {
    pub segy: segy::SegyWriteOptions,
    pub hdf5: hdf5::Hdf5WriteOptions,
    /// The CRS GeoTIFF maps and MDIO datasets name.
    pub crs: Option<crs::Crs>,
}

/// A volume being written a block of whole inlines at a time, in any container; nothing is visible under
/// the final name until [`VolumeSink::finish`].
// One sink per product file, made once: the size of the larger variant costs nothing worth a box.
#[allow(clippy::large_enum_variant)]
pub enum VolumeSink {
    Segy(segy::SegyWriter),
    Hdf5(hdf5::Hdf5Writer),
    Npy(npy::NpyWriter),
    GeoTiff(geotiff::GeoTiffWriter),
    Mdio(mdio::MdioWriter),
}

impl VolumeSink {
    pub fn create(
        format: FileFormat,
        path: &Path,
        geometry: &seis_core::volume::Geometry,
        opts: &WriteOptions,
    ) -> Result<Self> {
        Ok(match format {
            FileFormat::Segy => VolumeSink::Segy(segy::SegyWriter::create(path, geometry, &opts.segy)?),
            FileFormat::Hdf5 => VolumeSink::Hdf5(hdf5::Hdf5Writer::create(path, geometry, &opts.hdf5)?),
            FileFormat::Npy => VolumeSink::Npy(npy::NpyWriter::create(path, &geometry.shape())?),
            FileFormat::GeoTiff => {
                VolumeSink::GeoTiff(geotiff::GeoTiffWriter::create(path, geometry, opts.crs.as_ref())?)
            }
            FileFormat::Mdio => {
                let mdio = mdio::MdioWriteOptions { crs: opts.crs.clone(), ..Default::default() };
                VolumeSink::Mdio(mdio::MdioWriter::create(path, geometry, &mdio)?)
            }
            FileFormat::Auto => {
                return Err(Error::Request(format!("{}: say which format to write", path.display())));
            }
            FileFormat::Su => {
                return Err(Error::Request(format!(
                    "{}: seisimage reads Seismic Unix files but does not write them; write SEG-Y (.sgy), which \
                     Seismic Unix reads with segyread",
                    path.display()
                )));
            }
        })
    }

    /// Write inlines `first_il ..` (indices of the output grid), given as whole inlines in `[il][xl][s]`
    /// order; blocks must come in order.
    pub fn write_inlines(&mut self, first_il: usize, shape: [usize; 3], data: &[f32]) -> Result<()> {
        let [_, nx, ns] = shape;
        let n_il = data.len() / (nx * ns).max(1);
        match self {
            VolumeSink::Segy(w) => data.chunks(ns.max(1)).try_for_each(|t| w.write_trace(t)),
            VolumeSink::Hdf5(w) => {
                w.write_box(&seis_core::volume::IndexBox { il: first_il..first_il + n_il, xl: 0..nx, s: 0..ns }, data)
            }
            VolumeSink::Npy(w) => w.write(data),
            VolumeSink::GeoTiff(w) => w.write(data),
            VolumeSink::Mdio(w) => w.write_inlines(first_il, data),
        }
    }

    /// Complete the file and move it to its name.
    pub fn finish(self) -> Result<std::path::PathBuf> {
        match self {
            VolumeSink::Mdio(w) => w.finish(),
            other => other.close()?.commit(),
        }
    }

    /// Complete the file, leaving it under its temporary name (to be committed, measured or not). An MDIO
    /// dataset is a folder, not a file: it completes with [`VolumeSink::finish`] or [`VolumeSink::seal`].
    pub fn close(self) -> Result<TempOutput> {
        match self {
            VolumeSink::Mdio(w) => Err(Error::Request(format!(
                "{}: an MDIO dataset is a folder; it is completed by finish, not kept as a temporary file",
                w.final_path().display()
            ))),
            VolumeSink::Segy(w) => w.close(),
            VolumeSink::Hdf5(w) => w.close(),
            VolumeSink::Npy(w) => w.close(),
            VolumeSink::GeoTiff(w) => w.close(),
        }
    }

    /// Complete the file (or MDIO folder) and measure it, still under its temporary name, to be committed
    /// with other outputs.
    pub fn seal(self) -> Result<output::SealedOutput> {
        match self {
            VolumeSink::Mdio(w) => w.seal(),
            other => other.close()?.seal(),
        }
    }
}

/// Write a whole in-memory volume.
pub fn write_volume(
    format: FileFormat,
    path: &Path,
    geometry: &seis_core::volume::Geometry,
    data: &[f32],
    opts: &WriteOptions,
) -> Result<std::path::PathBuf> {
    let mut sink = VolumeSink::create(format, path, geometry, opts)?;
    sink.write_inlines(0, geometry.shape(), data)?;
    sink.finish()
}
