//! The library's typed errors.
//!
//! Every error that comes from a file names the file and, where it is known, the place in it: a byte
//! offset, a trace number (1-based, as seismic software counts traces), or a config line. A wrong setting
//! is raised where its value is checked, named by its key ([`Error::at_key`]), and placed at the line of
//! the job file or the `--set` override that gave it by the job (the application's `Job::locate`). The binary
//! prints an error once, at the top, and maps it to an exit code with [`Error::exit_code`].

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

/// Why work was asked to stop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// SIGINT (Ctrl-C).
    Sigint,
    /// SIGTERM (a scheduler ending the job).
    Sigterm,
    /// SIGHUP (the terminal or the ssh connection closed).
    Sighup,
    /// SIGQUIT (Ctrl-\\).
    Sigquit,
    /// [`crate::cancel::CancelToken::cancel`] from the program itself.
    Requested,
}

impl Stop {
    /// The signal that asked for the stop, if one did.
    pub fn signal(self) -> Option<i32> {
        match self {
            Stop::Sigint => Some(libc::SIGINT),
            Stop::Sigterm => Some(libc::SIGTERM),
            Stop::Sighup => Some(libc::SIGHUP),
            Stop::Sigquit => Some(libc::SIGQUIT),
            Stop::Requested => None,
        }
    }

    /// The stop a process ended by `code` (128 + its signal, as a shell reports it) was asked for.
    pub fn from_exit_code(code: i32) -> Option<Stop> {
        [Stop::Sigint, Stop::Sigterm, Stop::Sighup, Stop::Sigquit].into_iter().find(|s| s.exit_code() == Some(code))
    }

    /// 128 + the signal, as a shell reports a process its signal ended: a stop that cleaned up still says
    /// which signal asked for it.
    pub fn exit_code(self) -> Option<i32> {
        self.signal().map(|s| 128 + s)
    }
}

impl std::fmt::Display for Stop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Stop::Sigint => "SIGINT",
            Stop::Sigterm => "SIGTERM",
            Stop::Sighup => "SIGHUP",
            Stop::Sigquit => "SIGQUIT",
            Stop::Requested => "a stop request",
        })
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

    /// A job description (config file or command-line override) that is wrong, placed where it is wrong.
    #[error("{}{location}: {message}", source_name)]
    Config { source_name: String, location: Location, message: String },

    /// A setting whose value is wrong, named by its key: a dotted path of a job file (`imaging.dz`), or
    /// the name of an option of a table that may stand in several places (`iline_byte` of the reading
    /// options, which a job holds in `[input]` and `[velocity.input]`), until the caller puts it under its
    /// table ([`Error::within`]). A rule between settings names the others it involves in `also`: the
    /// job blames the first of them it sets. The application's `Job::locate` turns it into a
    /// [`Error::Config`] at the line of the job file, or the `--set` override, that gave the value.
    #[error("{key}: {message}")]
    Setting { key: String, also: Vec<String>, message: String },

    /// A request that does not fit the data (a line number that is not in the survey, an empty box, ...).
    #[error("{0}")]
    Request(String),

    /// The requested compute backend cannot be used here.
    #[error("{0}")]
    Backend(String),

    /// An error from the GPU runtime (driver, NVRTC, cuFFT).
    #[error("GPU: {0}")]
    Gpu(String),

    /// A fault in seisimage itself, not in the job, the data or the machine: an engine that did not hand
    /// over a product it was asked for, a thread that panicked, a record that cannot be encoded.
    #[error("internal error (a fault in seisimage; please report it): {0}")]
    Internal(String),

    /// The work was asked to stop (SIGINT, SIGTERM, or its cancellation token).
    #[error("interrupted by {0}; stopped cleanly and removed its temporary files")]
    Interrupted(Stop),

    /// Another rank of a run over several GPUs failed or was stopped, so this one stopped too: it exits with
    /// that rank's exit code, so that every rank of the run tells why it ended.
    #[error("rank {rank} of this run failed (exit code {code}), so this rank stopped too: {message}")]
    Peer { rank: usize, code: i32, message: String },
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

    /// The value of setting `key` is wrong (see [`Error::Setting`]).
    pub fn at_key(key: impl Into<String>, message: impl Into<String>) -> Self {
        Error::Setting { key: key.into(), also: Vec::new(), message: message.into() }
    }

    /// A setting error that also involves `key`, blamed when the job does not set the keys named before
    /// it. Other errors pass unchanged.
    pub fn or_key(self, key: impl Into<String>) -> Self {
        match self {
            Error::Setting { key: first, mut also, message } => {
                also.push(key.into());
                Error::Setting { key: first, also, message }
            }
            e => e,
        }
    }

    /// A setting error of a table that sits at `table` in a job (`input`, `velocity.input`,
    /// `output.render`): its keys are put under that table. Other errors pass unchanged.
    pub fn within(self, table: &str) -> Self {
        match self {
            Error::Setting { key, also, message } => Error::Setting {
                key: format!("{table}.{key}"),
                also: also.into_iter().map(|k| format!("{table}.{k}")).collect(),
                message,
            },
            e => e,
        }
    }

    /// Exit code a scheduler sees: 2 for usage and configuration errors and for requests that do not fit
    /// the data, 128 + the signal for a stop a signal asked for (130 SIGINT, 143 SIGTERM, 129 SIGHUP,
    /// 131 SIGQUIT), 1 otherwise (the machine, the data or seisimage failed).
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Config { .. } | Error::Setting { .. } | Error::Request(_) => 2,
            Error::Interrupted(stop) => stop.exit_code().unwrap_or(1),
            Error::Peer { code, .. } if *code == 2 || Stop::from_exit_code(*code).is_some() => *code,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mistakes_exit_2_and_faults_exit_1() {
        let setting = Error::at_key("imaging.dz", "dz must be a positive depth step");
        assert_eq!(setting.exit_code(), 2);
        assert_eq!(Error::config("job.toml", Location::Line { line: 3, column: 6 }, "x").exit_code(), 2);
        assert_eq!(Error::Request("inline 9 is not in the survey".into()).exit_code(), 2);
        let fault = Error::Internal("the engine did not return request box 2".into());
        assert_eq!(fault.exit_code(), 1, "a fault in seisimage is not a mistake in the job");
        assert!(fault.to_string().contains("a fault in seisimage"), "{fault}");
        assert_eq!(Error::Backend("no GPU".into()).exit_code(), 1);
        let peer = |code| Error::Peer { rank: 3, code, message: "interrupted by SIGTERM".into() };
        assert_eq!((peer(143).exit_code(), peer(130).exit_code(), peer(1).exit_code()), (143, 130, 1));
        assert_eq!(peer(77).exit_code(), 1, "a code no run exits with is a failure");
        assert_eq!((peer(129).exit_code(), peer(131).exit_code()), (129, 131));
        let stopped = |why| Error::Interrupted(why).exit_code();
        assert_eq!([Stop::Sighup, Stop::Sigquit, Stop::Requested].map(stopped), [129, 131, 1]);
        assert!(peer(143).to_string().starts_with("rank 3 of this run failed (exit code 143)"));
    }

    #[test]
    fn a_setting_is_named_by_its_key_under_the_table_that_holds_it() {
        let e = Error::at_key("iline_byte", "iline_byte = 300: out of the header").or_key("xline_byte");
        assert_eq!(e.to_string(), "iline_byte: iline_byte = 300: out of the header");
        match e.within("velocity.input") {
            Error::Setting { key, also, .. } => {
                assert_eq!(
                    (key.as_str(), also),
                    ("velocity.input.iline_byte", vec!["velocity.input.xline_byte".into()])
                )
            }
            other => panic!("not a setting error: {other}"),
        }
        // Other errors pass unchanged.
        assert!(matches!(Error::Request("r".into()).within("input").or_key("k"), Error::Request(_)));
    }
}
