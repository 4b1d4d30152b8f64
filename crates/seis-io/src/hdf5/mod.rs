//! HDF5 volumes (through the statically linked HDF5 of `hdf5-metno`): a 3-D float dataset with its axes.
//!
//! The layout (docs/hdf5.md has the full description): the volume is a dataset of shape
//! `[n_iline][n_xline][n_sample]`; its axes are 1-D datasets beside it, named `iline`, `xline` and `twt` or
//! `depth`, attached to it as HDF5 dimension scales so that h5py, netCDF and xarray label its dimensions;
//! the same axes are also stored as attributes of the volume (`iline_first`, `iline_step`, ...), which are
//! what a file from elsewhere most often carries. A `live` dataset beside the volume flags the traces that
//! hold data when some do not.
//!
//! `reader` finds the axes of any file that follows this layout in part; `writer` writes all of it;
//! `raw` holds the few HDF5 calls that `hdf5-metno` does not wrap (hyperslab I/O into caller buffers,
//! dimension scales, attribute values of any type).

mod geo;
mod guard;
mod raw;
mod reader;
mod writer;

use std::path::Path;

use serde::{Deserialize, Serialize};

use seis_core::error::{Error, Location};
use seis_core::volume::{Domain, IndexBox};

pub use guard::init;
pub use reader::{AxisSource, AxisSummary, Hdf5Reader, Hdf5Summary};
pub use writer::{write_volume, Hdf5WriteOptions, Hdf5Writer, DEFAULT_CHUNK, ONE_CHUNK_MAX_BYTES};

/// The dataset path used when none is given.
pub const DEFAULT_DATASET: &str = "/seismic";

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Hdf5Options {
    /// Path of the 3-D dataset inside the file.
    pub dataset: String,
}

impl Default for Hdf5Options {
    fn default() -> Self {
        Hdf5Options { dataset: DEFAULT_DATASET.into() }
    }
}

/// Names of the companion datasets, which live in the same group as the volume dataset.
const ILINE: &str = "iline";
const XLINE: &str = "xline";
const LIVE: &str = "live";
const SAMPLE_AXES: [Domain; 2] = [Domain::Time, Domain::Depth];

/// Attributes of the volume dataset (line axes use `<axis>_first` and `<axis>_step`).
const ATTR_DOMAIN: &str = "domain";
const ATTR_SAMPLE_ORIGIN: &str = "sample_origin";
const ATTR_SAMPLE_STEP: &str = "sample_step";
const ATTR_SAMPLE_UNIT: &str = "sample_unit";
const ATTR_COORD_ORIGIN: &str = "coord_origin";
const ATTR_COORD_PER_ILINE: &str = "coord_per_iline";
const ATTR_COORD_PER_XLINE: &str = "coord_per_xline";
/// The unit attribute of the sample axis dataset (the netCDF / CF convention).
const ATTR_UNITS: &str = "units";

/// How every HDF5 file is opened and created: without HDF5's file locks. A file being written is private
/// to its writer (created exclusively under a temporary name, renamed when whole), so a lock protects
/// nothing there. On a file being read, a lock only keeps HDF5 writers out, and HDF5 still refuses a file
/// its superblock marks open for writing. Locks, on the other hand, fail on file systems that do not
/// support them, and one can be held by a process that is only starting: between fork and exec a child
/// holds every descriptor of its parent, so a file closed by the parent a moment before could not be
/// opened again. `HDF5_USE_FILE_LOCKING=TRUE` in the environment overrides this.
fn unlocked() -> ::hdf5::FileBuilder {
    let mut builder = ::hdf5::File::with_options();
    builder.with_fapl(|fapl| fapl.file_locking(false));
    builder
}

fn line_attr_names(axis: &str) -> [String; 2] {
    [format!("{axis}_first"), format!("{axis}_step")]
}

fn domain_name(domain: Domain) -> &'static str {
    match domain {
        Domain::Time => "time",
        Domain::Depth => "depth",
    }
}

fn parse_domain(text: &str) -> Option<Domain> {
    SAMPLE_AXES.into_iter().find(|d| text.eq_ignore_ascii_case(domain_name(*d)))
}

/// The domain a unit of the sample axis implies and the factor that converts it to that domain's unit
/// (ms or m), which is what the volume model uses.
pub(crate) fn parse_sample_unit(text: &str) -> Option<(Domain, f64)> {
    match text.trim().to_ascii_lowercase().as_str() {
        "ms" | "millisecond" | "milliseconds" => Some((Domain::Time, 1.0)),
        "s" | "second" | "seconds" => Some((Domain::Time, 1000.0)),
        "m" | "meter" | "meters" | "metre" | "metres" => Some((Domain::Depth, 1.0)),
        "km" | "kilometer" | "kilometers" | "kilometre" | "kilometres" => Some((Domain::Depth, 1000.0)),
        _ => None,
    }
}

/// A dataset path made absolute and split into its group and its name: `"a/b"` → `("/a", "b")`.
fn split_dataset_path(file: &Path, dataset: &str) -> seis_core::Result<(String, String)> {
    let trimmed = dataset.trim_start_matches('/');
    if trimmed.split('/').any(str::is_empty) {
        return Err(Error::format(file, Location::File, format!("'{dataset}' is not a valid HDF5 dataset path")));
    }
    Ok(match trimmed.rsplit_once('/') {
        Some((group, name)) => (format!("/{group}"), name.to_string()),
        None => ("/".to_string(), trimmed.to_string()),
    })
}

/// Refuse a box that is not inside `shape`, or a buffer that does not hold exactly the box's values.
fn check_box(file: &Path, b: &IndexBox, shape: [usize; 3], values: usize) -> seis_core::Result<()> {
    let ranges = [&b.il, &b.xl, &b.s];
    if ranges.iter().zip(shape).any(|(r, n)| r.start > r.end || r.end > n) {
        return Err(Error::Request(format!(
            "{}: the box {b:?} is not inside the volume's shape {shape:?}",
            file.display()
        )));
    }
    if values != b.len() {
        return Err(Error::Request(format!("{}: {values} values for a box of {}", file.display(), b.len())));
    }
    Ok(())
}

/// The path of a dataset named `name` in `group`.
fn join(group: &str, name: &str) -> String {
    if group.ends_with('/') {
        format!("{group}{name}")
    } else {
        format!("{group}/{name}")
    }
}

/// The version of the HDF5 library seisimage is built with (major, minor, release), for the manifest.
pub fn library_version() -> (u8, u8, u8) {
    hdf5::library_version()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dataset_paths_split_into_group_and_name() {
        let f = Path::new("x.h5");
        assert_eq!(split_dataset_path(f, "/seismic").unwrap(), ("/".into(), "seismic".into()));
        assert_eq!(split_dataset_path(f, "seismic").unwrap(), ("/".into(), "seismic".into()));
        assert_eq!(split_dataset_path(f, "/a/b/cube").unwrap(), ("/a/b".into(), "cube".into()));
        assert_eq!(join("/", "iline"), "/iline");
        assert_eq!(join("/a/b", "iline"), "/a/b/iline");
        for bad in ["", "/", "/a/", "/a//b"] {
            assert!(split_dataset_path(f, bad).is_err(), "{bad:?} must be refused");
        }
    }

    #[test]
    fn units_decide_the_domain_and_the_scale() {
        assert_eq!(parse_sample_unit("ms"), Some((Domain::Time, 1.0)));
        assert_eq!(parse_sample_unit(" S "), Some((Domain::Time, 1000.0)));
        assert_eq!(parse_sample_unit("metres"), Some((Domain::Depth, 1.0)));
        assert_eq!(parse_sample_unit("km"), Some((Domain::Depth, 1000.0)));
        assert_eq!(parse_sample_unit("ft"), None);
        assert_eq!(parse_domain("Depth"), Some(Domain::Depth));
        assert_eq!(parse_domain("twt"), None);
    }
}
