//! MDIO v1 volumes: a Zarr v3 folder laid out as MDIO's post-stack 3-D template lays it out, read and
//! written with the `zarrs` crate (no Python).
//!
//! The layout: a root group whose `zarr.json` carries the dataset's metadata (`apiVersion`, `createdOn`,
//! `name`, and `attributes` with `surveyType = "3D"`, `gatherType = "stacked"` and `defaultVariableName`);
//! the seismic variable (named by `defaultVariableName`, `amplitude` by default), float32 over the
//! dimensions `inline`, `crossline` and `time` or `depth`; a 1-D coordinate array for each dimension;
//! `cdp_x` and `cdp_y`, float64 over `[inline][crossline]`; and `trace_mask`, one bool per trace. Units
//! are the `unitsV1` attribute of an array (`{"time": "ms"}`, `{"length": "m"}`). MDIO also keeps the SEG-Y
//! trace headers in a structured `headers` array: seisimage does not read it and does not write it.
//!
//! A CRS: MDIO v1's schema has no field for one, so seisimage writes and reads it as CF says and as its
//! HDF5 outputs do: the seismic variable and `cdp_x`/`cdp_y` name a grid mapping in their `grid_mapping`
//! attribute, a scalar array (`spatial_ref`) whose attributes give the CRS as `crs_wkt` (a WKT),
//! `spatial_ref` (a WKT or `EPSG:<code>`, as GDAL and rioxarray write it) and `epsg`. xarray keeps these
//! attributes, and rioxarray reads them.
//!
//! Codecs: MDIO writes its arrays through Blosc with zstd inside, so seisimage writes the same and reads
//! Blosc and zstd. The `blosc` feature of `zarrs` builds c-blosc from source with `cc` (the `blosc-src`
//! crate, snappy, lz4, zlib and zstd included) and needs no cmake, so it is the one chosen over the
//! pure-Rust decoder `zarrs` offers only on WebAssembly.
//!
//! A Zarr folder may say anything in its `zarr.json` files: each is read with a bound on its size, every
//! array the reader uses is checked for its rank, data type and dimension names before any chunk is read,
//! and the sizes it announces are bounded ([`MAX_TRACES`], [`MAX_SAMPLES`], [`MAX_CHUNK_VALUES`]) before anything is allocated
//! for them; a chunk that is missing reads as the array's fill value, as Zarr says.

mod meta;
mod reader;
mod writer;

#[cfg(test)]
mod tests;

pub use reader::{read_crs, MdioReader};
pub use writer::{MdioWriteOptions, MdioWriter};

use seis_core::volume::Domain;

/// The seismic variable's name when the dataset does not name one.
pub const DEFAULT_VARIABLE: &str = "amplitude";
/// The names of the two line dimensions and of the coordinate arrays.
const INLINE: &str = "inline";
const CROSSLINE: &str = "crossline";
const CDP_X: &str = "cdp_x";
const CDP_Y: &str = "cdp_y";
const TRACE_MASK: &str = "trace_mask";
/// The root group's attribute that holds the template's attributes, and the key in it naming the variable.
const DATASET_ATTRIBUTES: &str = "attributes";
const DEFAULT_VARIABLE_KEY: &str = "defaultVariableName";
/// The CF attribute of an array naming the array whose attributes hold the CRS of its coordinates, and the
/// name seisimage gives that array.
const GRID_MAPPING: &str = "grid_mapping";
const SPATIAL_REF: &str = "spatial_ref";
/// The attribute holding an array's unit, MDIO's `{"time": "ms"}`.
const UNITS: &str = "unitsV1";

/// The most traces a volume may declare: its live mask and axes are allocated per trace before any data is
/// read, and a Zarr folder needs no bytes for chunks it does not store. 2³¹ traces is a survey of 46 000 ×
/// 46 000 lines, far beyond any post-stack volume.
pub const MAX_TRACES: u64 = 1 << 31;
/// The most samples per trace: the sample axis is read whole.
pub const MAX_SAMPLES: u64 = 1 << 20;

/// The most values a chunk may hold (512 MiB of float64): a chunk is decoded whole, and MDIO's chunks hold
/// 128³ values.
pub const MAX_CHUNK_VALUES: u64 = 1 << 26;

/// The largest `zarr.json` read: metadata of a few arrays fits in kilobytes.
const MAX_METADATA_BYTES: u64 = 1 << 20;

/// The name of the sample dimension of a domain, as MDIO's templates name it.
fn sample_dimension(domain: Domain) -> &'static str {
    match domain {
        Domain::Time => "time",
        Domain::Depth => "depth",
    }
}
