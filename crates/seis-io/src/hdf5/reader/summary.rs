//! What the `info` command shows about an HDF5 volume: its dataset, axes and where each was found, and its
//! attributes. Plain values that the rest of the reader fills in.

use std::collections::BTreeMap;
use std::path::PathBuf;

use ::hdf5::filters::Filter;
use ::hdf5::Dataset;
use serde::Serialize;

use crate::hdf5::raw;
use seis_core::volume::CoordTransform;

/// How many attributes of the volume a summary shows at most.
const MAX_LISTED_ATTRIBUTES: usize = 256;

/// What the `info` command shows about an HDF5 volume.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Hdf5Summary {
    pub file: PathBuf,
    pub dataset: String,
    /// The element type as stored (`float32`, `int16`, ...); values are read as f32 whatever it is.
    pub dtype: String,
    pub shape: [usize; 3],
    /// The axis each dimension of the dataset holds, in the dataset's order (`iline`, `xline`, `twt` or
    /// `depth`), as its dimension scales name them: `shape` and the volume are in the order inline,
    /// crossline, sample whatever this is.
    pub dimensions: [&'static str; 3],
    /// In the dataset's order; `None` for a contiguous dataset.
    pub chunk: Option<Vec<usize>>,
    /// The filter pipeline (compression, shuffle, checksums), in order.
    pub filters: Vec<String>,
    pub iline: AxisSummary<i64>,
    pub xline: AxisSummary<i64>,
    pub sample: AxisSummary<f64>,
    pub coords: Option<CoordTransform>,
    /// The dataset the live mask came from, if there is one.
    pub live_mask: Option<String>,
    pub missing_traces: usize,
    /// The attributes of the volume dataset (long or exotic ones described rather than shown).
    pub attributes: BTreeMap<String, serde_json::Value>,
    /// Warnings: axes that were not found and had to be guessed.
    pub notes: Vec<String>,
}

/// One axis of the volume and where it was found.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AxisSummary<T> {
    /// `iline`, `xline`, `twt` or `depth`.
    pub name: &'static str,
    pub first: T,
    pub step: T,
    pub len: usize,
    /// `ms` or `m` for the sample axis.
    pub unit: Option<&'static str>,
    pub source: AxisSource,
}

/// Where an axis was found.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum AxisSource {
    /// A 1-D dataset beside the volume (its path).
    Dataset(String),
    /// Attributes of the volume dataset or of its group (their names).
    Attributes(Vec<String>),
    /// Nothing: line numbers are 1-based indices, samples 0-based indices.
    Index,
}

impl std::fmt::Display for AxisSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AxisSource::Dataset(path) => write!(f, "dataset {path}"),
            AxisSource::Attributes(names) => write!(f, "attributes {}", names.join(", ")),
            AxisSource::Index => write!(f, "indices"),
        }
    }
}

/// The element type of `dataset` as stored, in words.
pub(super) fn describe_dtype(dataset: &Dataset) -> String {
    match dataset.dtype() {
        Ok(t) => {
            let order = match t.byte_order() {
                ::hdf5::datatype::ByteOrder::BigEndian => " (big-endian)",
                _ => "",
            };
            t.to_descriptor().map_or_else(|e| format!("unknown ({e})"), |d| format!("{d}{order}"))
        }
        Err(e) => format!("unknown ({e})"),
    }
}

/// One filter of a dataset's pipeline, in words.
pub(super) fn describe_filter(filter: &Filter) -> String {
    match filter {
        Filter::Deflate(level) => format!("deflate (level {level})"),
        Filter::User(id, _) => format!("filter {id}"),
        other => format!("{other:?}").to_lowercase(),
    }
}

/// The attributes of `dataset` as JSON values; one that cannot be read says why instead. The
/// dimension-scale bookkeeping (`DIMENSION_LIST`, `DIMENSION_LABELS`) is left out: the axes show it.
pub(super) fn attributes_of(dataset: &Dataset) -> BTreeMap<String, serde_json::Value> {
    let names = dataset.attr_names().unwrap_or_default();
    names
        .into_iter()
        .filter(|name| !name.starts_with("DIMENSION_"))
        .take(MAX_LISTED_ATTRIBUTES)
        .map(|name| {
            let value = match dataset.attr(&name).and_then(|a| raw::read_attr(&a)) {
                Ok(v) => v.to_json(),
                Err(e) => format!("unreadable: {e}").into(),
            };
            (name, value)
        })
        .collect()
}
