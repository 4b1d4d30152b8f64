//! The library's typed errors.
//!
//! Every error that comes from a file names the file and, where it is known, the place in it: a byte
//! offset, a trace number (1-based, as seismic software counts traces), or a config line. The binary prints
//! an error once, at the top, and maps it to an exit code with [`Error::exit_code`].

use std::fmt;
use std::path::{Path, PathBuf};

/// Where in a file an error arose.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Location {
    /// Nowhere in particular (or not known).
    #[default]
    File,
    /// A byte offset from the start of the file.
    Byte(u64),
    /// A trace (0-based index internally; displayed 1-based) and the byte offset of its header.
    Trace { index: u64, byte: u64 },
    /// A line and column of a text file (1-based).
    Line { line: usize, column: usize },
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Location::File => Ok(()),
            Location::Byte(b) => write!(f, " at byte {b}"),
            Location::Trace { index, byte } => write!(f, " at trace {} (byte {byte})", index + 1),
            Location::Line { line, column } => write!(f, " at line {line}, column {column}"),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An operating-system I/O error on a named file.
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },

    /// A file whose content is malformed or unsupported.
    #[error("{}{location}: {message}", path.display())]
    Format { path: PathBuf, location: Location, message: String },

    /// A job description (config file or command-line override) that is wrong.
    #[error("{}{location}: {message}", source_name)]
    Config { source_name: String, location: Location, message: String },

    /// A request that does not fit the data (a line number that is not in the survey, an empty box, ...).
    #[error("{0}")]
    Request(String),

    /// The requested compute backend cannot be used here.
    #[error("{0}")]
    Backend(String),

    /// An error from the GPU runtime (driver, NVRTC, cuFFT).
    #[error("GPU: {0}")]
    Gpu(String),

    /// The work was asked to stop (SIGINT, SIGTERM, or its cancellation token).
    #[error("interrupted by {0}; stopped cleanly and removed its temporary files")]
    Interrupted(crate::cancel::Stop),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub fn io(path: impl AsRef<Path>, source: std::io::Error) -> Self {
        Error::Io { path: path.as_ref().to_path_buf(), source }
    }

    pub fn format(path: impl AsRef<Path>, location: Location, message: impl Into<String>) -> Self {
        Error::Format { path: path.as_ref().to_path_buf(), location, message: message.into() }
    }

    pub fn config(source_name: impl Into<String>, location: Location, message: impl Into<String>) -> Self {
        Error::Config { source_name: source_name.into(), location, message: message.into() }
    }

    /// Exit code a scheduler sees: 2 for usage and configuration errors, 130/143 for signals, 1 otherwise.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Config { .. } | Error::Request(_) => 2,
            Error::Interrupted(crate::cancel::Stop::Sigint) => 130,
            Error::Interrupted(crate::cancel::Stop::Sigterm) => 143,
            _ => 1,
        }
    }
}

/// Attach a path to `std::io::Result`s.
pub trait IoContext<T> {
    fn at(self, path: impl AsRef<Path>) -> Result<T>;
}

impl<T> IoContext<T> for std::io::Result<T> {
    fn at(self, path: impl AsRef<Path>) -> Result<T> {
        self.map_err(|e| Error::io(path, e))
    }
}
