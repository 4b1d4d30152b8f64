//! Opening an MDIO v1 post-stack volume: check the seismic variable, read its axes from the dimension
//! coordinates, its survey coordinates from three corners of `cdp_x`/`cdp_y` and its live traces from
//! `trace_mask`; afterwards read boxes of it chunk by chunk.

use std::ops::Range;
use std::path::{Path, PathBuf};

use zarrs::array::{Array, ArraySubset};
use zarrs::filesystem::FilesystemStore;

use super::meta::{ArrayMeta, Dataset};
use super::{
    sample_dimension, CDP_X, CDP_Y, CROSSLINE, GRID_MAPPING, INLINE, MAX_SAMPLES, MAX_TRACES, TRACE_MASK, UNITS,
};
use crate::crs::Crs;
use crate::hdf5::parse_sample_unit;
use seis_core::error::{Error, Location, Result};
use seis_core::volume::{CoordTransform, Domain, Geometry, IndexBox, LineAxis, SampleAxis, VolumeReader};

/// How far a sample axis may stray from a regular one, relative to its step.
const SAMPLE_TOLERANCE: f64 = 1e-4;

/// An MDIO v1 volume opened for reading.
pub struct MdioReader {
    path: PathBuf,
    variable: String,
    array: Array<FilesystemStore>,
    geometry: Geometry,
}

impl MdioReader {
    pub fn open(path: &Path) -> Result<Self> {
        let ds = Dataset::open(path)?;
        let variable = ds.variable()?;
        let meta = ds.array_meta(&variable)?;
        let (shape, domain) = check_variable(path, &meta)?;
        let [n_il, n_xl, n_s] = shape;
        let ilines = line_axis(&ds, INLINE, n_il)?;
        let xlines = line_axis(&ds, CROSSLINE, n_xl)?;
        let samples = sample_axis(&ds, domain, n_s)?;
        let coords = coordinates(&ds, [n_il, n_xl])?;
        let live = live_traces(&ds, [n_il, n_xl])?;
        let array = ds.open_array(&variable)?;
        let geometry = Geometry { ilines, xlines, samples, coords, live };
        Ok(MdioReader { path: path.to_path_buf(), variable, array, geometry })
    }

    /// The name of the seismic variable read.
    pub fn variable(&self) -> &str {
        &self.variable
    }
}

impl VolumeReader for MdioReader {
    fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    fn describe(&self) -> String {
        format!("{} (MDIO variable {})", self.path.display(), self.variable)
    }

    fn read_box(&self, b: &IndexBox, out: &mut [f32]) -> Result<()> {
        seis_core::volume::check_box_buffer(b, out)?;
        let shape = self.geometry.shape();
        if [&b.il, &b.xl, &b.s].iter().zip(shape).any(|(r, n)| r.start > r.end || r.end > n) {
            return Err(Error::Request(format!(
                "{}: the box {b:?} is not inside the volume's shape {shape:?}",
                self.path.display()
            )));
        }
        if b.is_empty() {
            return Ok(());
        }
        let subset = ArraySubset::new_with_ranges(&[wide(&b.il), wide(&b.xl), wide(&b.s)]);
        let values: Vec<f32> = self.array.retrieve_array_subset(&subset).map_err(|e| {
            Error::format(
                &self.path,
                Location::File,
                format!("reading inline indices {:?}, crossline indices {:?} of {}: {e}", b.il, b.xl, self.variable),
            )
        })?;
        out.copy_from_slice(&values);
        // A trace the mask calls dead is whatever the writer left (MDIO: the fill value, NaN): it reads as
        // zeros, as a missing trace of any other format does.
        let (nx, ns, n_xl) = (b.xl.len(), b.s.len(), shape[1]);
        for (t, trace) in out.chunks_mut(ns).enumerate() {
            let (i, j) = (b.il.start + t / nx, b.xl.start + t % nx);
            if !self.geometry.live[i * n_xl + j] {
                trace.fill(0.0);
            }
        }
        seis_core::cancel::CancelToken::process().check()
    }
}

fn wide(r: &Range<usize>) -> Range<u64> {
    r.start as u64..r.end as u64
}

/// The shape and domain of the seismic variable, or why it is not a post-stack volume seisimage reads.
fn check_variable(path: &Path, meta: &ArrayMeta) -> Result<([usize; 3], Domain)> {
    let fail = |message: String| Error::format(path.join(&meta.name), Location::File, message);
    let name = &meta.name;
    if meta.shape.len() != 3 {
        return Err(fail(format!(
            "{name} has {} dimensions {}; a post-stack volume has 3: [inline, crossline, time or depth]",
            meta.shape.len(),
            meta.dims()
        )));
    }
    let dims: Vec<&str> = meta.dimension_names.iter().map(|d| d.as_deref().unwrap_or("")).collect();
    let domain = [Domain::Time, Domain::Depth].into_iter().find(|d| dims[2] == sample_dimension(*d));
    let Some(domain) = domain.filter(|_| dims[0] == INLINE && dims[1] == CROSSLINE) else {
        return Err(fail(format!(
            "{name} has the dimensions {}; seisimage reads post-stack volumes over [inline, crossline, time] or \
             [inline, crossline, depth]",
            meta.dims()
        )));
    };
    if meta.data_type != "float32" {
        return Err(fail(format!("{name} holds {}; seisimage reads float32 seismic variables", meta.data_type)));
    }
    let [n_il, n_xl, n_s] = [meta.shape[0], meta.shape[1], meta.shape[2]];
    if n_il == 0 || n_xl == 0 || n_s == 0 {
        return Err(fail(format!("{name} is empty (shape {:?})", meta.shape)));
    }
    if n_il.saturating_mul(n_xl) > MAX_TRACES || n_s > MAX_SAMPLES {
        return Err(fail(format!(
            "{name} declares a shape of {:?}: more than {MAX_TRACES} traces or {MAX_SAMPLES} samples a trace, \
             larger than any survey seisimage reads",
            meta.shape
        )));
    }
    Ok(([n_il as usize, n_xl as usize, n_s as usize], domain))
}

/// The values of the 1-D array `name`, which must hold `n` numbers, as f64.
fn read_axis(ds: &Dataset, name: &str, n: usize) -> Result<Vec<f64>> {
    let meta = ds.array_meta(name)?;
    let fail = |message: String| Error::format(ds.folder.join(name), Location::File, message);
    if meta.shape != [n as u64] {
        return Err(fail(format!("{name} has the shape {:?}; the seismic variable has {n} along it", meta.shape)));
    }
    let array = ds.open_array(name)?;
    let all = ArraySubset::new_with_shape(vec![n as u64]);
    let read_error = |e: zarrs::array::ArrayError| fail(format!("reading {name}: {e}"));
    macro_rules! as_f64 {
        ($t:ty) => {
            array.retrieve_array_subset::<Vec<$t>>(&all).map_err(read_error)?.into_iter().map(f64::from).collect()
        };
    }
    Ok(match meta.data_type.as_str() {
        "int16" => as_f64!(i16),
        "int32" => as_f64!(i32),
        "int64" => {
            array.retrieve_array_subset::<Vec<i64>>(&all).map_err(read_error)?.into_iter().map(|v| v as f64).collect()
        }
        "uint16" => as_f64!(u16),
        "uint32" => as_f64!(u32),
        "float32" => as_f64!(f32),
        "float64" => as_f64!(f64),
        other => return Err(fail(format!("{name} holds {other}, not numbers seisimage reads as an axis"))),
    })
}

/// The regular, ascending axis of line numbers in the coordinate array `name`.
fn line_axis(ds: &Dataset, name: &str, n: usize) -> Result<LineAxis> {
    let values = read_axis(ds, name, n)?;
    let fail = |message: String| Error::format(ds.folder.join(name), Location::File, message);
    if values.iter().any(|v| v.fract() != 0.0 || v.abs() > 2f64.powi(53)) {
        return Err(fail(format!("{name} holds values that are not whole line numbers")));
    }
    let first = values[0] as i64;
    let step = if n > 1 { values[1] as i64 - first } else { 1 };
    if step <= 0 {
        return Err(fail(format!("{name} does not ascend ({first}, then {})", first + step)));
    }
    if let Some(k) = (0..n).find(|&k| values[k] as i64 != first + step * k as i64) {
        return Err(fail(format!(
            "{name} is not regular: value {k} is {}, not {} (first {first}, step {step})",
            values[k],
            first + step * k as i64
        )));
    }
    Ok(LineAxis::new(first, step, n))
}

/// The sample axis: the dimension coordinate of `domain`, in its unit (`unitsV1`) converted to ms or m.
fn sample_axis(ds: &Dataset, domain: Domain, n: usize) -> Result<SampleAxis> {
    let name = sample_dimension(domain);
    let values = read_axis(ds, name, n)?;
    let fail = |message: String| Error::format(ds.folder.join(name), Location::File, message);
    let meta = ds.array_meta(name)?;
    let scale = match meta.attributes.get(UNITS).and_then(|u| u.as_object()).and_then(|u| u.values().next()) {
        None => 1.0,
        Some(unit) => match unit.as_str().and_then(parse_sample_unit) {
            Some((d, scale)) if d == domain => scale,
            _ => {
                return Err(fail(format!(
                    "{name}: {UNITS} is {unit}; seisimage reads a {} axis in {}",
                    name,
                    match domain {
                        Domain::Time => "ms or s",
                        Domain::Depth => "m or km",
                    }
                )))
            }
        },
    };
    let origin = values[0] * scale;
    let step = if n > 1 { (values[1] - values[0]) * scale } else { 1.0 };
    if !(step > 0.0 && step.is_finite() && origin.is_finite()) {
        return Err(fail(format!("{name} does not ascend by a finite step")));
    }
    if let Some(k) = (0..n).find(|&k| (values[k] * scale - (origin + step * k as f64)).abs() > SAMPLE_TOLERANCE * step)
    {
        return Err(fail(format!("{name} is not regular: value {k} is {}", values[k])));
    }
    Ok(SampleAxis { origin, step, len: n, domain })
}

/// The grid-to-survey map of `cdp_x`/`cdp_y`, from the traces at three corners; `None` when the dataset
/// has no coordinates or holds none there.
fn coordinates(ds: &Dataset, [n_il, n_xl]: [usize; 2]) -> Result<Option<CoordTransform>> {
    if !ds.has(CDP_X) || !ds.has(CDP_Y) {
        return Ok(None);
    }
    let mut at = Vec::new();
    for name in [CDP_X, CDP_Y] {
        let meta = ds.array_meta(name)?;
        let fail = |message: String| Error::format(ds.folder.join(name), Location::File, message);
        if meta.shape != [n_il as u64, n_xl as u64] {
            return Err(fail(format!(
                "{name} has the shape {:?}, not that of the traces [{n_il}, {n_xl}]",
                meta.shape
            )));
        }
        if meta.data_type != "float64" && meta.data_type != "float32" {
            return Err(fail(format!("{name} holds {}, not coordinates (float64)", meta.data_type)));
        }
        let array = ds.open_array(name)?;
        let corners = [(0, 0), (n_il - 1, 0), (0, n_xl - 1)];
        let mut values = [0.0; 3];
        for (v, (i, j)) in values.iter_mut().zip(corners) {
            let one = ArraySubset::new_with_ranges(&[i as u64..i as u64 + 1, j as u64..j as u64 + 1]);
            *v = match meta.data_type.as_str() {
                "float64" => array.retrieve_array_subset::<Vec<f64>>(&one).map(|v| v[0]),
                _ => array.retrieve_array_subset::<Vec<f32>>(&one).map(|v| f64::from(v[0])),
            }
            .map_err(|e| fail(format!("reading {name}: {e}")))?;
        }
        at.push(values);
    }
    let (x, y) = (at[0], at[1]);
    if x.iter().chain(&y).any(|v| !v.is_finite()) {
        return Ok(None);
    }
    let per = |k: usize, n: usize| {
        if n > 1 {
            [(x[k] - x[0]) / (n - 1) as f64, (y[k] - y[0]) / (n - 1) as f64]
        } else {
            [0.0; 2]
        }
    };
    Ok(Some(CoordTransform { origin: [x[0], y[0]], per_iline: per(1, n_il), per_xline: per(2, n_xl) }))
}

/// Which traces hold data: `trace_mask` (bool, or int8/uint8 with 0 for a dead trace, as MDIO's own SEG-Y
/// ingestion writes it), else all of them.
fn live_traces(ds: &Dataset, [n_il, n_xl]: [usize; 2]) -> Result<Vec<bool>> {
    if !ds.has(TRACE_MASK) {
        return Ok(vec![true; n_il * n_xl]);
    }
    let meta = ds.array_meta(TRACE_MASK)?;
    let fail = |message: String| Error::format(ds.folder.join(TRACE_MASK), Location::File, message);
    if meta.shape != [n_il as u64, n_xl as u64] || !["bool", "int8", "uint8"].contains(&meta.data_type.as_str()) {
        return Err(fail(format!(
            "{TRACE_MASK} is {} of shape {:?}; it must be bool (or int8) over the traces [{n_il}, {n_xl}]",
            meta.data_type, meta.shape
        )));
    }
    let array = ds.open_array(TRACE_MASK)?;
    let all = ArraySubset::new_with_ranges(&[0..n_il as u64, 0..n_xl as u64]);
    let read_error = |e: zarrs::array::ArrayError| fail(format!("reading {TRACE_MASK}: {e}"));
    Ok(match meta.data_type.as_str() {
        "bool" => array.retrieve_array_subset::<Vec<bool>>(&all).map_err(read_error)?,
        "int8" => array.retrieve_array_subset::<Vec<i8>>(&all).map_err(read_error)?.iter().map(|&v| v != 0).collect(),
        _ => array.retrieve_array_subset::<Vec<u8>>(&all).map_err(read_error)?.iter().map(|&v| v != 0).collect(),
    })
}

/// The CRS the MDIO dataset `path` records for its coordinates, if it records one: the array its seismic
/// variable names in `grid_mapping`, read as [`Crs::from_text`] reads it from `crs_wkt`, else
/// `spatial_ref` (with `epsg` beside it). Err: a grid mapping that is named but missing, or says no CRS
/// seisimage can read.
pub fn read_crs(path: &Path) -> Result<Option<Crs>> {
    let ds = Dataset::open(path)?;
    let variable = ds.variable()?;
    let meta = ds.array_meta(&variable)?;
    let Some(mapping) = meta.attributes.get(GRID_MAPPING) else { return Ok(None) };
    let fail = |message: String| Error::format(path.join(&variable), Location::File, message);
    let Some(name) = mapping.as_str().filter(|n| super::meta::valid_name(n)) else {
        return Err(fail(format!("{variable}: {GRID_MAPPING} is {mapping}, not the name of an array")));
    };
    let attributes = ds.array_meta(name)?.attributes;
    let text = ["crs_wkt", "spatial_ref"].iter().find_map(|key| attributes.get(*key).and_then(|v| v.as_str()));
    let epsg = attributes.get("epsg").and_then(|v| v.as_u64()).and_then(|v| u32::try_from(v).ok()).filter(|&v| v > 0);
    let crs = match (text, epsg) {
        (Some(text), _) => Crs::from_text(&format!("{} ({name})", path.display()), text, epsg),
        (None, Some(code)) => Ok(Crs { name: format!("EPSG:{code}"), epsg: Some(code), wkt: None }),
        (None, None) => Err("it has no crs_wkt, spatial_ref or epsg attribute".to_string()),
    };
    crs.map(Some)
        .map_err(|why| Error::format(path.join(name), Location::File, format!("the grid mapping {name}: {why}")))
}
