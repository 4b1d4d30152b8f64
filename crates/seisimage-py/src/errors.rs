//! seisimage's errors as Python exceptions: `JobError` for what the command line exits 2 with (a mistake in
//! the job or the request), `RunError` for what it exits 1 with (the data, the machine or seisimage
//! failed), with the command line's message and where the mistake is.

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use seisimage::error::{Error, Location};

create_exception!(seisimage, SeisimageError, PyException, "Any error seisimage reports.");
create_exception!(
    seisimage,
    JobError,
    SeisimageError,
    "A mistake in the job or the request (the command line exits 2): `key`, `source`, `line` and `column` say \
     where."
);
create_exception!(
    seisimage,
    RunError,
    SeisimageError,
    "A run that failed (the command line exits 1): the data, the machine or seisimage itself."
);

/// The Python exception for `e`, with `exit_code`, `key` (the job key at fault, when one is), `source` (the
/// job file, override or data file) and `line`/`column` (in a job file) as attributes.
pub fn to_py(py: Python<'_>, e: Error) -> PyErr {
    let message = e.to_string();
    let exit_code = e.exit_code();
    let (key, source, line, column) = match &e {
        Error::Config { source_name, location, message } => {
            let (line, column) = match location {
                Location::Line { line, column } => (Some(*line), Some(*column)),
                _ => (None, None),
            };
            (key_of(message), Some(source_name.clone()), line, column)
        }
        Error::Setting { key, .. } => (Some(key.clone()), None, None, None),
        Error::Io { path, .. } | Error::Format { path, .. } => (None, Some(path.display().to_string()), None, None),
        _ => (None, None, None, None),
    };
    let err = if exit_code == 2 { JobError::new_err(message) } else { RunError::new_err(message) };
    let value = err.value(py);
    // Setting attributes on a fresh exception instance does not fail; if it did, the message still stands.
    let _ = value.setattr("exit_code", exit_code);
    let _ = value.setattr("key", key);
    let _ = value.setattr("source", source);
    let _ = value.setattr("line", line);
    let _ = value.setattr("column", column);
    err
}

/// The key a job error's message starts with (`imaging.dz: must be positive`), if it starts with one.
fn key_of(message: &str) -> Option<String> {
    let (head, _) = message.split_once(": ")?;
    let is_key =
        !head.is_empty() && head.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '[' | ']'));
    is_key.then(|| head.to_string())
}
