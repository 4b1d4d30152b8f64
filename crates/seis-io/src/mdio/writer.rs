//! Writing a volume as an MDIO v1 post-stack dataset (the layout of `mod.rs`), into a hidden folder beside
//! the final name that is renamed into place when complete, as every output of seisimage appears whole or
//! not at all.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{json, Value};
use zarrs::array::{Array, ArrayMetadata, ArraySubset};
use zarrs::filesystem::FilesystemStore;

use super::{
    sample_dimension, CDP_X, CDP_Y, CROSSLINE, DATASET_ATTRIBUTES, DEFAULT_VARIABLE, DEFAULT_VARIABLE_KEY,
    GRID_MAPPING, INLINE, SPATIAL_REF, TRACE_MASK, UNITS,
};
use crate::crs::Crs;
use crate::output::{SealedOutput, TempFolder};
use seis_core::error::{Error, IoContext, Result};
use seis_core::volume::{Domain, Geometry};

/// The chunk of the seismic variable: cubes of 64³ float32 values (1 MiB), as our HDF5 files use, so that an
/// inline, a crossline and a slice read the same moderate excess. Clipped to the volume's shape.
const VARIABLE_CHUNK: [u64; 3] = [64, 64, 64];
/// The chunk of the per-trace arrays (coordinates, live mask).
const TRACE_CHUNK: [u64; 2] = [256, 256];
/// The MDIO API version the layout follows (the `apiVersion` of the datasets MDIO writes).
const API_VERSION: &str = "1.1.3";

/// How to write an MDIO dataset.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MdioWriteOptions {
    /// The dataset's `name`; the final folder's name without its extension when `None`.
    pub name: Option<String>,
    /// The CRS of `cdp_x`/`cdp_y`, written as a CF grid mapping `spatial_ref` (see the module's notes).
    pub crs: Option<Crs>,
}

/// An MDIO dataset being written a block of whole inlines at a time.
pub struct MdioWriter {
    final_path: PathBuf,
    temp: TempFolder,
    array: Array<FilesystemStore>,
    shape: [usize; 3],
}

impl MdioWriter {
    /// Start the dataset `path` (a folder, made under a hidden name beside it) with every array but the
    /// seismic values written.
    pub fn create(path: &Path, geometry: &Geometry, opts: &MdioWriteOptions) -> Result<MdioWriter> {
        let name = dataset_file_name(path)?;
        if let Ok(meta) = std::fs::symlink_metadata(path) {
            if !meta.is_dir() || !path.join("zarr.json").exists() {
                return Err(Error::Request(format!(
                    "{}: something that is not an MDIO dataset is there; seisimage replaces only an earlier dataset",
                    path.display()
                )));
            }
        }
        let temp = TempFolder::create(path)?;
        let store = Arc::new(
            FilesystemStore::new(temp.path()).map_err(|e| Error::Request(format!("{}: {e}", path.display())))?,
        );
        let fail = |e: String| Error::Request(format!("{}: writing MDIO: {e}", path.display()));
        let dataset_name = opts.name.clone().unwrap_or_else(|| name.trim_end_matches(".mdio").to_string());
        write_root(temp.path(), &dataset_name, geometry.samples.domain).at(path)?;
        write_axes(&store, geometry).map_err(fail)?;
        let crs = opts.crs.as_ref();
        write_traces(&store, geometry, crs.is_some()).map_err(fail)?;
        if let Some(crs) = crs {
            write_grid_mapping(&store, crs).map_err(fail)?;
        }
        let shape = geometry.shape();
        let array = variable(&store, geometry, crs.is_some()).map_err(fail)?;
        Ok(MdioWriter { final_path: path.to_path_buf(), temp, array, shape })
    }

    /// Where the dataset will be once finished.
    pub fn final_path(&self) -> &Path {
        &self.final_path
    }

    /// Write inlines `first_il ..` given as whole inlines in `[il][xl][s]` order.
    pub fn write_inlines(&mut self, first_il: usize, data: &[f32]) -> Result<()> {
        let [n_il, nx, ns] = self.shape;
        let count = data.len() / (nx * ns).max(1);
        if data.len() != count * nx * ns || first_il + count > n_il {
            return Err(Error::Request(format!(
                "{}: {} values at inline index {first_il} do not make whole inlines of the shape {:?}",
                self.final_path.display(),
                data.len(),
                self.shape
            )));
        }
        let subset =
            ArraySubset::new_with_ranges(&[first_il as u64..(first_il + count) as u64, 0..nx as u64, 0..ns as u64]);
        self.array
            .store_array_subset(&subset, data)
            .map_err(|e| Error::Request(format!("{}: writing the seismic values: {e}", self.final_path.display())))
    }

    /// Flush every file to disk and move the folder to its final name (an earlier dataset there is
    /// replaced).
    pub fn finish(self) -> Result<PathBuf> {
        self.temp.commit()
    }

    /// The dataset is complete: measure it, to be committed with the other outputs of a run.
    pub fn seal(self) -> Result<SealedOutput> {
        self.temp.seal()
    }
}

/// The name of the folder `path`.
fn dataset_file_name(path: &Path) -> Result<String> {
    let name = path.file_name().and_then(|n| n.to_str()).filter(|n| !n.is_empty());
    let Some(name) = name else {
        return Err(Error::Request(format!("{}: an MDIO dataset needs a folder name", path.display())));
    };
    Ok(name.to_string())
}

/// The root group: MDIO's dataset metadata.
fn write_root(folder: &Path, name: &str, domain: Domain) -> std::io::Result<()> {
    let created = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    let root = json!({
        "zarr_format": 3,
        "node_type": "group",
        "attributes": {
            "apiVersion": API_VERSION,
            "createdOn": created,
            "name": name,
            DATASET_ATTRIBUTES: {
                "surveyType": "3D",
                "gatherType": "stacked",
                DEFAULT_VARIABLE_KEY: DEFAULT_VARIABLE,
                "createdBy": format!("seisimage {}", env!("CARGO_PKG_VERSION")),
                "domain": sample_dimension(domain),
            },
        },
    });
    std::fs::write(folder.join("zarr.json"), serde_json::to_vec_pretty(&root).map_err(std::io::Error::other)?)
}

/// An array's metadata: Blosc (zstd inside, byte shuffle) as MDIO writes, over little-endian values.
fn metadata(shape: &[u64], chunk: &[u64], data_type: &str, fill: Value, dims: &[&str], attributes: Value) -> Value {
    let chunk: Vec<u64> = chunk.iter().zip(shape).map(|(c, n)| (*c).min(*n).max(1)).collect();
    let typesize = match data_type {
        "bool" => 1,
        "float64" => 8,
        _ => 4,
    };
    json!({
        "zarr_format": 3,
        "node_type": "array",
        "shape": shape,
        "data_type": data_type,
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": chunk}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": fill,
        "codecs": [
            {"name": "bytes", "configuration": {"endian": "little"}},
            {"name": "blosc", "configuration": {
                "cname": "zstd", "clevel": 5, "shuffle": if typesize > 1 { "shuffle" } else { "noshuffle" },
                "typesize": typesize, "blocksize": 0
            }},
        ],
        "attributes": attributes,
        "dimension_names": dims,
    })
}

/// Create the array `name` from its metadata and write that metadata.
fn create(
    store: &Arc<FilesystemStore>,
    name: &str,
    meta: Value,
) -> std::result::Result<Array<FilesystemStore>, String> {
    let meta = ArrayMetadata::try_from(meta.to_string().as_str()).map_err(|e| format!("{name}: {e}"))?;
    let array =
        Array::new_with_metadata(store.clone(), &format!("/{name}"), meta).map_err(|e| format!("{name}: {e}"))?;
    array.store_metadata().map_err(|e| format!("{name}: {e}"))?;
    Ok(array)
}

fn store<'a>(
    array: &Array<FilesystemStore>,
    ranges: &[u64],
    data: impl zarrs::array::IntoArrayBytes<'a>,
) -> std::result::Result<(), String> {
    let ranges: Vec<std::ops::Range<u64>> = ranges.iter().map(|&n| 0..n).collect();
    array.store_array_subset(&ArraySubset::new_with_ranges(&ranges), data).map_err(|e| e.to_string())
}

/// The dimension coordinates: line numbers (int32, as MDIO writes them) and the sample axis (float64).
fn write_axes(s: &Arc<FilesystemStore>, g: &Geometry) -> std::result::Result<(), String> {
    for (name, axis) in [(INLINE, &g.ilines), (CROSSLINE, &g.xlines)] {
        let values: Vec<i32> = (0..axis.len)
            .map(|k| i32::try_from(axis.value(k)).map_err(|_| format!("{name} {} does not fit int32", axis.value(k))))
            .collect::<std::result::Result<_, _>>()?;
        let n = axis.len as u64;
        let array = create(s, name, metadata(&[n], &[n], "int32", json!(i32::MAX), &[name], json!({})))?;
        store(&array, &[n], values.as_slice())?;
    }
    let a = &g.samples;
    let name = sample_dimension(a.domain);
    let unit = match a.domain {
        Domain::Time => json!({"time": "ms"}),
        Domain::Depth => json!({"length": "m"}),
    };
    let values: Vec<f64> = (0..a.len).map(|k| a.value(k)).collect();
    let n = a.len as u64;
    let array = create(s, name, metadata(&[n], &[n], "float64", json!("NaN"), &[name], json!({ UNITS: unit })))?;
    store(&array, &[n], values.as_slice())
}

/// The per-trace arrays: the live mask and, when the geometry has them, the coordinates of every trace.
fn write_traces(s: &Arc<FilesystemStore>, g: &Geometry, mapped: bool) -> std::result::Result<(), String> {
    let shape = [g.ilines.len as u64, g.xlines.len as u64];
    let mask =
        create(s, TRACE_MASK, metadata(&shape, &TRACE_CHUNK, "bool", json!(false), &[INLINE, CROSSLINE], json!({})))?;
    store(&mask, &shape, g.live.as_slice())?;
    let Some(c) = g.coords else {
        return Ok(());
    };
    for (axis, name) in [CDP_X, CDP_Y].into_iter().enumerate() {
        let values: Vec<f64> =
            (0..g.ilines.len).flat_map(|i| (0..g.xlines.len).map(move |j| c.xy(i as f64, j as f64)[axis])).collect();
        let mut attributes = json!({ UNITS: {"length": "m"} });
        if mapped {
            attributes[GRID_MAPPING] = json!(SPATIAL_REF);
        }
        let array =
            create(s, name, metadata(&shape, &TRACE_CHUNK, "float64", json!("NaN"), &[INLINE, CROSSLINE], attributes))?;
        store(&array, &shape, values.as_slice())?;
    }
    Ok(())
}

/// The CRS as a CF grid mapping: a scalar `spatial_ref` whose attributes say it as GDAL and rioxarray read
/// it (`spatial_ref`: the WKT, else `EPSG:<code>`), as CF does (`crs_wkt`) and by its code (`epsg`), as the
/// HDF5 outputs say it.
fn write_grid_mapping(s: &Arc<FilesystemStore>, crs: &Crs) -> std::result::Result<(), String> {
    let mut attributes = json!({ "spatial_ref": crs.user_input() });
    if let Some(wkt) = &crs.wkt {
        attributes["crs_wkt"] = json!(wkt);
    }
    if let Some(epsg) = crs.epsg {
        attributes["epsg"] = json!(epsg);
    }
    let array = create(s, SPATIAL_REF, metadata(&[], &[], "int32", json!(0), &[], attributes))?;
    store(&array, &[], [0i32].as_slice())
}

/// The seismic variable, its metadata written, its values still to come.
fn variable(
    s: &Arc<FilesystemStore>,
    g: &Geometry,
    mapped: bool,
) -> std::result::Result<Array<FilesystemStore>, String> {
    let shape = g.shape().map(|n| n as u64);
    let dims = [INLINE, CROSSLINE, sample_dimension(g.samples.domain)];
    let coordinates = if g.coords.is_some() { format!("{CDP_X} {CDP_Y}") } else { String::new() };
    let mut attributes = json!({});
    if !coordinates.is_empty() {
        attributes["coordinates"] = json!(coordinates);
    }
    if mapped {
        attributes[GRID_MAPPING] = json!(SPATIAL_REF);
    }
    create(s, DEFAULT_VARIABLE, metadata(&shape, &VARIABLE_CHUNK, "float32", json!("NaN"), &dims, attributes))
}
