//! What a volume file holds, as `seisimage info --json` prints it and the Python package's `info` returns
//! it. The JSON fields are documented in docs/info-json.md; keep the two in step.

use std::path::Path;

use serde::Serialize;

use crate::error::Result;
use crate::io::hdf5::{Hdf5Reader, Hdf5Summary};
use crate::io::segy::{SegyReader, SegySummary};
use crate::io::{FileFormat, InputOptions};
use crate::progress::Progress;
use crate::volume::{AmplitudeStats, CoordTransform, Domain, Geometry, LineAxis, VolumeReader};

/// Version of the JSON layout; raised when a field changes meaning or goes away.
pub const SCHEMA: &str = "seisimage-info/1";

/// A volume file's description.
#[derive(Serialize)]
pub struct Info {
    pub schema: &'static str,
    pub path: String,
    pub container: &'static str,
    pub geometry: GeometryInfo,
    pub amplitudes: Option<AmplitudeStats>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub segy: Option<SegySummary>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hdf5: Option<Hdf5Summary>,
}

#[derive(Serialize)]
pub struct GeometryInfo {
    pub ilines: LineInfo,
    pub xlines: LineInfo,
    pub samples: SampleInfo,
    pub traces: usize,
    pub missing_traces: usize,
    /// Metres between adjacent inlines and between adjacent crosslines (from the coordinates).
    pub bin_size_m: Option<[f64; 2]>,
    /// Grid index → x/y map: x = origin + il_index · per_iline + xl_index · per_xline.
    pub coordinates: Option<CoordTransform>,
}

#[derive(Serialize)]
pub struct LineInfo {
    pub first: i64,
    pub last: i64,
    pub step: i64,
    pub count: usize,
}

#[derive(Serialize)]
pub struct SampleInfo {
    pub domain: Domain,
    pub unit: &'static str,
    pub first: f64,
    pub last: f64,
    pub step: f64,
    pub count: usize,
}

impl GeometryInfo {
    pub fn of(g: &Geometry) -> Self {
        let line = |a: &LineAxis| LineInfo { first: a.first, last: a.last(), step: a.step, count: a.len };
        GeometryInfo {
            ilines: line(&g.ilines),
            xlines: line(&g.xlines),
            samples: SampleInfo {
                domain: g.samples.domain,
                unit: g.samples.domain.unit(),
                first: g.samples.origin,
                last: g.samples.last(),
                step: g.samples.step,
                count: g.samples.len,
            },
            traces: g.n_traces(),
            missing_traces: g.n_missing(),
            bin_size_m: g.coords.map(|c| c.bin_size()),
            coordinates: g.coords,
        }
    }
}

impl Info {
    /// The description of the volume at `path` in `container` ("segy", "hdf5"), without its summaries
    /// and statistics.
    pub fn new(path: &Path, container: &'static str, g: &Geometry) -> Info {
        Info {
            schema: SCHEMA,
            path: path.display().to_string(),
            container,
            geometry: GeometryInfo::of(g),
            amplitudes: None,
            segy: None,
            hdf5: None,
        }
    }
}

/// Describe the SEG-Y or HDF5 volume at `path` (of `format`, already detected), read with `opts`: its
/// geometry and container summary, the SEG-Y text header only when `text_header` says so, and the
/// amplitude statistics (which read every sample) when `stats` gives their progress display.
pub fn describe(
    path: &Path,
    format: FileFormat,
    opts: &InputOptions,
    text_header: bool,
    stats: Option<&dyn Progress>,
) -> Result<Info> {
    let (reader, mut info): (Box<dyn VolumeReader>, Info) = match format {
        FileFormat::Segy | FileFormat::Su => {
            let r = match format {
                FileFormat::Su => SegyReader::open_su(path, &opts.segy())?,
                _ => SegyReader::open(path, &opts.segy())?,
            };
            let mut summary = r.summary();
            if !text_header {
                summary.text.clear();
            }
            let container = if format == FileFormat::Su { "su" } else { "segy" };
            let info = Info::new(path, container, r.geometry());
            (Box::new(r), Info { segy: Some(summary), ..info })
        }
        FileFormat::Hdf5 => {
            let r = Hdf5Reader::open(path, &opts.hdf5())?;
            let info = Info::new(path, "hdf5", r.geometry());
            let summary = r.summary();
            (Box::new(r), Info { hdf5: Some(summary), ..info })
        }
        FileFormat::Mdio => {
            let r = crate::io::mdio::MdioReader::open(path)?;
            let info = Info::new(path, "mdio", r.geometry());
            (Box::new(r), info)
        }
        FileFormat::GeoTiff => {
            return Err(crate::Error::format(
                path,
                crate::error::Location::File,
                "seisimage writes GeoTIFF maps but does not read them; a GIS or `gdalinfo` describes them",
            ))
        }
        FileFormat::Npy | FileFormat::Auto => {
            return Err(crate::Error::format(
                path,
                crate::error::Location::File,
                "an NPY array has no axes to describe; numpy.load(...).shape tells its shape",
            ))
        }
    };
    if let Some(progress) = stats {
        info.amplitudes = Some(AmplitudeStats::of_reader(reader.as_ref(), progress)?);
    }
    Ok(info)
}
