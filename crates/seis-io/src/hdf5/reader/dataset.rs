//! Finding the volume dataset in a file and checking that it is one, or saying which 3-D datasets the file
//! holds instead.

use std::path::Path;

use ::hdf5::types::TypeDescriptor;
use ::hdf5::{Dataset, File, Group, LinkType, LocationType};

use crate::files::quoted;
use crate::hdf5::guard;
use crate::hdf5::join;
use crate::hdf5::raw::{H5Context, QUOTE};
use seis_core::error::{Error, Location, Result};

/// How many 3-D datasets an error about a missing dataset lists at most.
const MAX_LISTED: usize = 50;
/// How deep the search for 3-D datasets goes into nested groups.
const MAX_GROUP_DEPTH: usize = 32;

/// Open the volume dataset and check that it is one: three non-empty dimensions of numbers, and no more
/// traces than a file of its size can describe (the live mask and the axes are allocated per trace).
pub(super) fn open_volume(
    path: &Path,
    file: &File,
    dataset_path: &str,
    file_len: u64,
) -> Result<(Dataset, [usize; 3])> {
    let fail = |message: String| Error::format(path, Location::File, message);
    guard::check_path(path, file, dataset_path)?;
    let dataset = match file.loc_type_by_name(dataset_path) {
        Ok(LocationType::Dataset) => file.dataset(dataset_path).doing(path, || format!("opening {dataset_path}"))?,
        Ok(other) => {
            let kind = format!("{other:?}").to_lowercase();
            return Err(fail(format!("{} is a {kind}, not a dataset", quoted(dataset_path, QUOTE))));
        }
        Err(_) => {
            let mut found = Vec::new();
            volumes_in(file, "/", 0, &mut found);
            let listing = if found.is_empty() {
                "the file holds no 3-D dataset".to_string()
            } else {
                let found: Vec<String> = found.iter().map(|p| quoted(p, QUOTE)).collect();
                format!("3-D datasets in the file: {}", found.join(", "))
            };
            return Err(fail(format!("no dataset {}; {listing}", quoted(dataset_path, QUOTE))));
        }
    };
    let dims = dataset.shape();
    let Ok(shape) = <[usize; 3]>::try_from(dims.as_slice()) else {
        return Err(fail(format!(
            "dataset {dataset_path} has {} dimensions {dims:?}; a volume needs 3: [iline][xline][sample]",
            dims.len()
        )));
    };
    if shape.contains(&0) {
        return Err(fail(format!("dataset {dataset_path} is empty (shape {shape:?})")));
    }
    match dataset.dtype().and_then(|t| t.to_descriptor()) {
        Ok(TypeDescriptor::Integer(_) | TypeDescriptor::Unsigned(_) | TypeDescriptor::Float(_)) => {}
        Ok(other) => return Err(fail(format!("dataset {dataset_path} holds {other}, not numbers"))),
        Err(e) => return Err(fail(format!("dataset {dataset_path} has a type this program cannot read: {e}"))),
    }
    let traces = shape[0].saturating_mul(shape[1]);
    if traces as u64 > file_len {
        return Err(fail(format!(
            "dataset {dataset_path} declares {traces} traces (shape {shape:?}), more than a file of {file_len} bytes \
             can describe"
        )));
    }
    guard::check_dataset(path, &dataset, dataset_path, file_len)?;
    Ok((dataset, shape))
}

/// Collect the paths of the 3-D datasets under `group`, following hard links only and to a limited depth,
/// so that a link cycle cannot trap the search. Used to say what a file holds, so errors are skipped.
fn volumes_in(group: &Group, prefix: &str, depth: usize, found: &mut Vec<String>) {
    let mut names = Vec::new();
    let _ = group.iter_visit_default(|name, info| {
        if info.link_type == LinkType::Hard {
            names.push(name.to_string());
        }
        Ok(())
    });
    for name in names {
        if found.len() >= MAX_LISTED {
            return;
        }
        let path = join(prefix, &name);
        match group.loc_type_by_name(&name) {
            Ok(LocationType::Group) if depth < MAX_GROUP_DEPTH => {
                if let Ok(child) = group.group(&name) {
                    volumes_in(&child, &path, depth + 1, found);
                }
            }
            Ok(LocationType::Dataset) if group.dataset(&name).is_ok_and(|d| d.ndim() == 3) => found.push(path),
            _ => {}
        }
    }
}
