//! The native half of the Python package `seisimage`: the library's calls with numpy arrays and JSON text
//! in and out. The package's Python half (`python/seisimage/__init__.py`) builds xarray objects and plain
//! dictionaries from them.

mod detach;
mod errors;

use std::path::{Path, PathBuf};

use numpy::ndarray::Array3;
use numpy::{IntoPyArray, PyArray2, PyArray3, PyReadonlyArray2, PyReadonlyArray3, PyUntypedArrayMethods};
use pyo3::prelude::*;
use serde::Deserialize;

use seisimage::embed::{self, Borrowed};
use seisimage::error::Error;
use seisimage::info::GeometryInfo;
use seisimage::job::Job;
use seisimage::volume::{CoordTransform, Domain, Geometry, LineAxis, SampleAxis};

use detach::run_detached;
use errors::{to_py, JobError, RunError, SeisimageError};

/// The result of a detached run, or the exception to raise: the one that stopped it from Python, else the
/// run's own error.
fn finish<T>(py: Python<'_>, (result, raised): (seisimage::Result<T>, detach::Raised)) -> PyResult<T> {
    match (result, raised) {
        (_, Some(e)) => Err(e),
        (Ok(v), None) => Ok(v),
        (Err(e), None) => Err(to_py(py, e)),
    }
}

fn json(py: Python<'_>, value: &impl serde::Serialize) -> PyResult<String> {
    serde_json::to_string(value).map_err(|e| to_py(py, Error::Internal(format!("a result cannot be encoded: {e}"))))
}

/// What [`open`] hands back: the values, the live-trace mask and a description (JSON).
type Opened<'py> = (Bound<'py, PyArray3<f32>>, Bound<'py, PyArray2<bool>>, String);

/// `(values, live, description)`: the volume at `path` read whole, as a float32 array `(iline, xline,
/// sample)`, its live-trace mask `(iline, xline)`, and a JSON object with its geometry (as `info`
/// gives it), container, reader and text header. `reading` is a JSON object of `[input]` reading keys.
#[pyfunction]
fn open<'py>(py: Python<'py>, path: PathBuf, reading: &str) -> PyResult<Opened<'py>> {
    let opts = embed::input_options_from_json(reading).map_err(|e| to_py(py, e))?;
    let opened = py.detach(|| embed::read_volume(&path, &opts)).map_err(|e| to_py(py, e))?;
    let g = opened.volume.geometry;
    let description = serde_json::json!({
        "path": path.display().to_string(),
        "container": opened.container,
        "source": opened.source,
        "text_header": opened.text_header,
        "geometry": GeometryInfo::of(&g),
    });
    let [ni, nx, ns] = g.shape();
    let values = array3(py, [ni, nx, ns], opened.volume.data)?;
    let live = numpy::ndarray::Array2::from_shape_vec((ni, nx), g.live)
        .map_err(|e| to_py(py, Error::Internal(e.to_string())))?
        .into_pyarray(py);
    Ok((values, live, json(py, &description)?))
}

/// A float32 array of `shape` that takes over `values`, without a copy.
fn array3(py: Python<'_>, shape: [usize; 3], values: Vec<f32>) -> PyResult<Bound<'_, PyArray3<f32>>> {
    let array = Array3::from_shape_vec(shape, values).map_err(|e| to_py(py, Error::Internal(e.to_string())))?;
    Ok(array.into_pyarray(py))
}

/// `info --json` of the volume at `path`, as JSON text.
#[pyfunction]
#[pyo3(signature = (path, reading, text_header=false, stats=true))]
fn info(py: Python<'_>, path: PathBuf, reading: &str, text_header: bool, stats: bool) -> PyResult<String> {
    let opts = embed::input_options_from_json(reading).map_err(|e| to_py(py, e))?;
    let described = py.detach(|| {
        let format = seisimage::io::detect_format(&path, opts.format)?;
        let silent = seisimage::progress::Silent;
        seisimage::info::describe(&path, format, &opts, text_header, stats.then_some(&silent as _))
    });
    json(py, &described.map_err(|e| to_py(py, e))?)
}

/// A job from a file (`path`) or from a JSON object shaped like a job file (`text`), with overrides.
fn load_job(path: Option<&Path>, text: Option<&str>, overrides: &[String]) -> seisimage::Result<Job> {
    match (path, text) {
        (Some(path), _) => Job::load(path, overrides),
        (None, Some(text)) => embed::job_from_json(text, Path::new("job"), overrides),
        (None, None) => Err(Error::Request("give a job file or a job".into())),
    }
}

/// Run a job to its manifest (JSON text); `progress(stage, done, total)` is told how it goes.
#[pyfunction]
#[pyo3(signature = (path, text, overrides, progress=None))]
fn run(
    py: Python<'_>,
    path: Option<PathBuf>,
    text: Option<&str>,
    overrides: Vec<String>,
    progress: Option<Bound<'_, PyAny>>,
) -> PyResult<String> {
    let job = load_job(path.as_deref(), text, &overrides).map_err(|e| to_py(py, e))?;
    let manifest = finish(
        py,
        run_detached(py, progress.as_ref(), |progress, cancel| embed::run_job(&job, None, progress, cancel)),
    )?;
    json(py, &manifest)
}

/// Check a job as `seisimage validate` does; its plan as JSON text.
#[pyfunction]
fn validate(py: Python<'_>, path: Option<PathBuf>, text: Option<&str>, overrides: Vec<String>) -> PyResult<String> {
    let job = load_job(path.as_deref(), text, &overrides).map_err(|e| to_py(py, e))?;
    let plan = finish(py, run_detached(py, None, |_, cancel| embed::validate_job(job, cancel)))?;
    json(py, &plan)
}

/// The axes of an array to migrate, from the Python side: `[first, step]` of the line numbers, `[origin,
/// step]` of the samples, and the survey coordinates when known.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Axes {
    ilines: [i64; 2],
    xlines: [i64; 2],
    samples: [f64; 2],
    domain: Domain,
    coords: Option<CoordTransform>,
}

impl Axes {
    fn geometry(&self, shape: [usize; 3], live: Option<Vec<bool>>) -> seisimage::Result<Geometry> {
        if self.ilines[1] <= 0 || self.xlines[1] <= 0 {
            return Err(Error::Request("inline and crossline numbers must ascend".into()));
        }
        if !(self.samples[1].is_finite() && self.samples[1] > 0.0) {
            return Err(Error::Request(format!("the sample interval must be positive, not {}", self.samples[1])));
        }
        let samples = SampleAxis { origin: self.samples[0], step: self.samples[1], len: shape[2], domain: self.domain };
        let mut g = Geometry::regular(
            LineAxis::new(self.ilines[0], self.ilines[1], shape[0]),
            LineAxis::new(self.xlines[0], self.xlines[1], shape[1]),
            samples,
        );
        g.coords = self.coords;
        if let Some(live) = live {
            g.live = live;
        }
        Ok(g)
    }
}

/// Migrate `data` `(iline, xline, sample)`, float32 and C-contiguous (read in place), with the axes
/// `axes` (JSON, see [`Axes`]) and the live-trace mask `live`, as the job `job` (JSON, whose first
/// product is a region of the whole image) says. Returns the image `(iline, xline, depth)` and a JSON
/// object with its geometry, the warnings and the engine that ran.
#[pyfunction]
#[pyo3(signature = (data, axes, live, job, progress=None))]
fn migrate<'py>(
    py: Python<'py>,
    data: PyReadonlyArray3<'py, f32>,
    axes: &str,
    live: Option<PyReadonlyArray2<'py, bool>>,
    job: &str,
    progress: Option<Bound<'py, PyAny>>,
) -> PyResult<(Bound<'py, PyArray3<f32>>, String)> {
    let axes: Axes = serde_json::from_str(axes).map_err(|e| to_py(py, Error::Request(format!("axes: {e}"))))?;
    let shape = <[usize; 3]>::try_from(data.shape()).map_err(|_| to_py(py, Error::Request("not 3-D".into())))?;
    let live = match &live {
        Some(l) if l.shape() != [shape[0], shape[1]] => {
            return Err(to_py(py, Error::Request("the live mask is not (iline, xline) of the data".into())))
        }
        Some(l) => Some(l.as_array().iter().copied().collect()),
        None => None,
    };
    let geometry = axes.geometry(shape, live).map_err(|e| to_py(py, e))?;
    let job = embed::job_from_json(job, Path::new("seisimage.migrate"), &[]).map_err(|e| to_py(py, e))?;
    let values = data.as_slice().map_err(|_| to_py(py, Error::Request("the data are not C-contiguous".into())))?;
    let migrated = finish(
        py,
        run_detached(py, progress.as_ref(), |progress, cancel| {
            embed::migrate_volume(job, Borrowed { geometry, data: values }, progress, cancel)
        }),
    )?;
    let description = serde_json::json!({
        "geometry": GeometryInfo::of(&migrated.geometry),
        "warnings": migrated.warnings,
        "backend": migrated.backend,
        "backend_detail": migrated.backend_detail,
    });
    let image = array3(py, migrated.geometry.shape(), migrated.data)?;
    Ok((image, json(py, &description)?))
}

/// Write `data` `(iline, xline, depth)`, float32 and C-contiguous, with the axes `axes` (JSON, see
/// [`Axes`]) as an HDF5 volume at `path`: a velocity model given as an array becomes the cube a job's
/// `[velocity]` reads, with its axes declared.
#[pyfunction]
fn write_cube(py: Python<'_>, data: PyReadonlyArray3<'_, f32>, axes: &str, path: PathBuf) -> PyResult<()> {
    let axes: Axes = serde_json::from_str(axes).map_err(|e| to_py(py, Error::Request(format!("axes: {e}"))))?;
    let shape = <[usize; 3]>::try_from(data.shape()).map_err(|_| to_py(py, Error::Request("not 3-D".into())))?;
    let geometry = axes.geometry(shape, None).map_err(|e| to_py(py, e))?;
    let values = data.as_slice().map_err(|_| to_py(py, Error::Request("the data are not C-contiguous".into())))?;
    let options = seisimage::io::hdf5::Hdf5WriteOptions::default();
    seisimage::io::hdf5::write_volume(&path, &geometry, values, &options).map(|_| ()).map_err(|e| to_py(py, e))
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // As the command line does before it opens any file: HDF5 plugins are never loaded.
    seisimage::io::hdf5::init();
    // A pool started already (by an earlier import in this process) is as good.
    let _ = seisimage::threads::start_global_pool(1);
    let py = m.py();
    m.add("SeisimageError", py.get_type::<SeisimageError>())?;
    m.add("JobError", py.get_type::<JobError>())?;
    m.add("RunError", py.get_type::<RunError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(open, m)?)?;
    m.add_function(wrap_pyfunction!(info, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(migrate, m)?)?;
    m.add_function(wrap_pyfunction!(write_cube, m)?)?;
    Ok(())
}
