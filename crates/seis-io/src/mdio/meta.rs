//! The `zarr.json` files of an MDIO folder, read with a bound on their size and checked before `zarrs`
//! opens an array, so that an error names the array and the key that is wrong.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Map, Value};
use zarrs::array::Array;
use zarrs::filesystem::FilesystemStore;

use super::{DATASET_ATTRIBUTES, DEFAULT_VARIABLE, DEFAULT_VARIABLE_KEY, MAX_CHUNK_VALUES, MAX_METADATA_BYTES};
use crate::files::{quoted, read_bounded};
use seis_core::error::{Error, Location, Result};

/// How much of what a file says an error quotes.
const QUOTE: usize = 80;

/// The metadata of one array, as its `zarr.json` declares it.
pub(super) struct ArrayMeta {
    pub name: String,
    pub shape: Vec<u64>,
    pub data_type: String,
    pub dimension_names: Vec<Option<String>>,
    pub attributes: Map<String, Value>,
}

impl ArrayMeta {
    /// The dimension names, `?` for an unnamed one, for messages.
    pub fn dims(&self) -> String {
        let names: Vec<&str> = self.dimension_names.iter().map(|d| d.as_deref().unwrap_or("?")).collect();
        format!("[{}]", names.join(", "))
    }
}

/// The folder of an MDIO dataset, its store and the root group's attributes.
pub(super) struct Dataset {
    pub folder: PathBuf,
    pub store: Arc<FilesystemStore>,
    pub attributes: Map<String, Value>,
}

impl Dataset {
    pub fn open(folder: &Path) -> Result<Dataset> {
        let meta = folder.metadata().map_err(|e| Error::io(folder, e))?;
        if !meta.is_dir() {
            return Err(Error::format(folder, Location::File, "an MDIO dataset is a folder (Zarr v3), not a file"));
        }
        let root = read_json(folder, None)?;
        if root.get("node_type").and_then(Value::as_str) != Some("group") {
            return Err(Error::format(
                folder,
                Location::File,
                "zarr.json: node_type is not \"group\"; an MDIO dataset is a Zarr v3 group",
            ));
        }
        let attributes = object(&root, "attributes");
        let store = FilesystemStore::new(folder)
            .map_err(|e| Error::format(folder, Location::File, format!("cannot open it as a Zarr store: {e}")))?;
        Ok(Dataset { folder: folder.to_path_buf(), store: Arc::new(store), attributes })
    }

    /// The name of the seismic variable: the dataset's `attributes.defaultVariableName`, else `amplitude`.
    pub fn variable(&self) -> Result<String> {
        let declared = self.attributes.get(DATASET_ATTRIBUTES).and_then(|a| a.get(DEFAULT_VARIABLE_KEY));
        match declared {
            None => Ok(DEFAULT_VARIABLE.to_string()),
            Some(Value::String(name)) if valid_name(name) => Ok(name.clone()),
            Some(other) => Err(Error::format(
                &self.folder,
                Location::File,
                format!(
                    "zarr.json: attributes.{DEFAULT_VARIABLE_KEY} is {}, not the name of an array",
                    quoted(&other.to_string(), QUOTE)
                ),
            )),
        }
    }

    /// Whether the dataset holds an array `name`.
    pub fn has(&self, name: &str) -> bool {
        self.folder.join(name).join("zarr.json").exists()
    }

    /// The metadata of the array `name`, checked to be a Zarr v3 array.
    pub fn array_meta(&self, name: &str) -> Result<ArrayMeta> {
        let json = read_json(&self.folder, Some(name))?;
        let fail = |message: String| Error::format(self.folder.join(name).join("zarr.json"), Location::File, message);
        if json.get("node_type").and_then(Value::as_str) != Some("array") {
            return Err(fail(format!("{name} is not a Zarr array (node_type is not \"array\")")));
        }
        if json.get("zarr_format").and_then(Value::as_u64) != Some(3) {
            return Err(fail(format!("{name}: zarr_format is not 3 (MDIO v1 is Zarr v3)")));
        }
        let shape = json
            .get("shape")
            .and_then(Value::as_array)
            .and_then(|s| s.iter().map(Value::as_u64).collect::<Option<Vec<u64>>>())
            .ok_or_else(|| fail(format!("{name}: shape is not a list of sizes")))?;
        let data_type = match json.get("data_type") {
            Some(Value::String(t)) => t.clone(),
            Some(other) => other.get("name").and_then(Value::as_str).unwrap_or("?").to_string(),
            None => return Err(fail(format!("{name}: no data_type"))),
        };
        check_chunks(&json, &shape).map_err(|why| fail(format!("{name}: {why}")))?;
        let dimension_names = match json.get("dimension_names") {
            Some(Value::Array(names)) => names.iter().map(|n| n.as_str().map(str::to_string)).collect(),
            _ => vec![None; shape.len()],
        };
        if dimension_names.len() != shape.len() {
            return Err(fail(format!(
                "{name}: {} dimension_names for a shape of {} dimensions",
                dimension_names.len(),
                shape.len()
            )));
        }
        Ok(ArrayMeta {
            name: name.to_string(),
            shape,
            data_type,
            dimension_names,
            attributes: object(&json, "attributes"),
        })
    }

    /// The array `name` opened by `zarrs`, for reading its chunks.
    pub fn open_array(&self, name: &str) -> Result<Array<FilesystemStore>> {
        Array::open(self.store.clone(), &format!("/{name}")).map_err(|e| {
            Error::format(self.folder.join(name), Location::File, format!("cannot open the Zarr array {name}: {e}"))
        })
    }
}

/// Refuse a chunk grid other than a regular one whose chunks have the array's rank and at most
/// [`MAX_CHUNK_VALUES`] values: a chunk is decoded whole into memory, whatever part of it a read needs.
fn check_chunks(json: &Value, shape: &[u64]) -> std::result::Result<(), String> {
    let grid = json.get("chunk_grid");
    if grid.and_then(|g| g.get("name")).and_then(Value::as_str) != Some("regular") {
        return Err("chunk_grid is not \"regular\" (the only grid MDIO writes)".into());
    }
    let chunk = grid
        .and_then(|g| g.pointer("/configuration/chunk_shape"))
        .and_then(Value::as_array)
        .and_then(|c| c.iter().map(Value::as_u64).collect::<Option<Vec<u64>>>())
        .ok_or("chunk_grid.configuration.chunk_shape is not a list of sizes")?;
    if chunk.len() != shape.len() || chunk.contains(&0) {
        return Err(format!("chunk_shape {chunk:?} does not fit the shape {shape:?}"));
    }
    let values = chunk.iter().try_fold(1u64, |n, c| n.checked_mul(*c)).unwrap_or(u64::MAX);
    if values > MAX_CHUNK_VALUES {
        return Err(format!("chunk_shape {chunk:?} makes chunks of {values} values, more than {MAX_CHUNK_VALUES}"));
    }
    Ok(())
}

/// A name that is one component of a path inside the folder.
pub(super) fn valid_name(name: &str) -> bool {
    !name.is_empty() && name != "." && name != ".." && !name.contains(['/', '\\', '\0'])
}

/// The object at `key`, or an empty one.
fn object(json: &Value, key: &str) -> Map<String, Value> {
    json.get(key).and_then(Value::as_object).cloned().unwrap_or_default()
}

/// The `zarr.json` of the root (`None`) or of the array `name`, parsed.
fn read_json(folder: &Path, name: Option<&str>) -> Result<Value> {
    let path = match name {
        Some(name) => folder.join(name).join("zarr.json"),
        None => folder.join("zarr.json"),
    };
    if !path.exists() {
        let what = match name {
            Some(name) => format!("no array {name} (no {name}/zarr.json)"),
            None => "no zarr.json: not a Zarr v3 folder".to_string(),
        };
        return Err(Error::format(folder, Location::File, what));
    }
    let bytes = read_bounded(&path, MAX_METADATA_BYTES, "Zarr metadata")?;
    serde_json::from_slice(&bytes)
        .map_err(|e| Error::format(&path, Location::File, format!("not valid JSON metadata: {e}")))
}
