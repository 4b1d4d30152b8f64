//! A job file (TOML) and command-line overrides, validated into one [`Job`] before any work starts.
//!
//! Every section is a serde struct that refuses unknown keys. Every error about a value says where the value
//! was set: the line and column in the job file, or the `--set` override that gave it. That holds for the
//! errors found while the job is read and for those found later, while it is planned: those are raised with
//! the key of the setting they concern ([`Error::Setting`]), which [`Job::locate`] finds in the job.
//!
//! Relative paths in a job file are relative to the job file's folder, so a job can be submitted from
//! anywhere (a cluster's batch system rarely starts in the folder you expect); relative paths given with
//! `--set` are relative to the current folder, like any path on a command line. Both are made absolute
//! when the job is loaded, so the resolved job means the same wherever it is printed or recorded.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::error::{Error, Location, Result};
use crate::volume::Domain;

mod config;
mod origin;

pub use config::*;
use origin::{apply_override, Origin};

/// A job ready to plan: the config with paths resolved and every value checked that can be checked
/// without opening the input.
#[derive(Clone, Debug)]
pub struct Job {
    /// The job file, or a description of where the job came from.
    pub source: PathBuf,
    pub config: JobConfig,
    origin: Origin,
}

impl Job {
    /// Read a job file and apply `--set KEY=VALUE` overrides. A job file that cannot be read is a mistake on
    /// the command line, like one that does not parse; so is one that is not a regular file (a FIFO, a
    /// device) or is larger than [`MAX_JOB_FILE_BYTES`].
    pub fn load(path: &Path, overrides: &[String]) -> Result<Job> {
        let text = crate::io::files::read_text(path, MAX_JOB_FILE_BYTES).map_err(|e| {
            let why = match e {
                Error::Io { source, .. } => source.to_string(),
                other => other.to_string(),
            };
            Error::config(path.display().to_string(), Location::File, format!("cannot read the job file: {why}"))
        })?;
        Job::parse(&text, path, overrides)
    }

    /// Parse job text; `path` names it in errors and anchors relative paths.
    pub fn parse(text: &str, path: &Path, overrides: &[String]) -> Result<Job> {
        let mut origin = Origin { name: path.display().to_string(), text: text.to_string(), overrides: Vec::new() };
        // The text on its own, so that its errors carry their exact line and column in the user's file.
        let file_only = toml::from_str::<JobConfig>(text);
        let config = if overrides.is_empty() {
            file_only.map_err(|e| origin.toml_error(&e))?
        } else {
            let mut table: toml::Table = toml::from_str(text).map_err(|e| origin.toml_error(&e))?;
            for item in overrides {
                origin.overrides.push(apply_override(&mut table, item)?);
            }
            // Read the merged table back as TOML text: an error then has a position, hence a key, which
            // leads back to the override (or the line of the file) that set it.
            let merged = toml::to_string(&table).map_err(|e| Error::config("--set", Location::File, e.to_string()))?;
            toml::from_str(&merged).map_err(|e| origin.merged_error(&merged, &e, file_only.err().as_ref()))?
        };
        let mut job = Job { source: path.to_path_buf(), config, origin };
        job.resolve_paths()?;
        job.check()?;
        Ok(job)
    }

    /// An error about the value at `key` (a dotted path such as `imaging.dz`), placed where that value was
    /// set: the `--set` override, else the line and column of the job file.
    pub fn error_at(&self, key: &str, message: impl fmt::Display) -> Error {
        self.origin.error_at(key, &message.to_string())
    }

    /// Place an error raised while the job is checked or planned: a wrong setting ([`Error::Setting`]) moves
    /// to the line and column of its key, or to the override that set it. Of the keys a rule between
    /// settings names, the first that the file or an override sets is blamed (`fmin` when the file sets
    /// `fmin` and `fmax`, `fmax` when it sets only `fmax`). Other errors pass unchanged.
    pub fn locate(&self, e: Error) -> Error {
        match e {
            Error::Setting { key, also, message } => {
                let blamed = std::iter::once(&key).chain(&also).find(|k| self.origin.sets(k)).unwrap_or(&key);
                self.origin.error_at(blamed, &message)
            }
            e => e,
        }
    }

    /// The `--set KEY=VALUE` overrides applied, in order.
    pub fn overrides(&self) -> Vec<String> {
        self.origin.overrides.iter().map(|o| o.item.clone()).collect()
    }

    /// Make every path absolute: relative to the job file's folder, or to the current folder when the path
    /// came from `--set`; `.` and `..` are resolved in the text of the path (see [`normalise`]).
    fn resolve_paths(&mut self) -> Result<()> {
        let folder = self.source.parent().map(Path::to_path_buf).unwrap_or_default();
        let c = &mut self.config;
        let mut paths = vec![("input.path", &mut c.input.path), ("output.dir", &mut c.output.dir)];
        if let Some(path) = &mut c.velocity.path {
            paths.push(("velocity.path", path));
        }
        if let Some(path) = &mut c.compute.scratch_dir {
            paths.push(("compute.scratch_dir", path));
        }
        for (key, path) in paths {
            if path.as_os_str().is_empty() {
                return Err(self.origin.error_at(key, "the path is empty"));
            }
            let base = if self.origin.overridden(key).is_some() { Path::new("") } else { folder.as_path() };
            *path = normalise(&std::path::absolute(base.join(&*path)).map_err(|e| Error::io(&*path, e))?);
        }
        Ok(())
    }

    /// The CRS `input.crs` names, its WKT file read (a relative path from the job file's folder, or from
    /// the current folder when `--set` gave it). Err: at `input.crs`, exit 2.
    pub fn crs(&self) -> Result<Option<crate::io::crs::Crs>> {
        let Some(value) = &self.config.input.crs else { return Ok(None) };
        let folder = self.source.parent().map(Path::to_path_buf).unwrap_or_default();
        let base = if self.origin.overridden("input.crs").is_some() { PathBuf::new() } else { folder };
        crate::io::crs::Crs::parse(value, &base).map(Some).map_err(|e| self.locate(e))
    }

    /// Checks that need no file: ranges and consistency of values.
    fn check(&self) -> Result<()> {
        // Over 100 lines: one check after another of values that need no file, in the order of the job
        // file's sections; each is a few lines.
        let c = &self.config;
        if let Some([a, b]) = c.input.bin_size {
            if !(a > 0.0 && b > 0.0 && a.is_finite() && b.is_finite()) {
                return Err(self
                    .error_at("input.bin_size", format!("must be two positive distances in metres, not [{a}, {b}]")));
            }
        }
        self.crs()?;
        c.window.validate().map_err(|e| self.locate(e))?;
        c.velocity.check().map_err(|e| self.locate(e))?;
        let o = &c.output;
        let slices = !o.inlines.is_empty()
            || !o.crosslines.is_empty()
            || !o.depth_slices.is_empty()
            || !o.time_slices.is_empty();
        if !slices && o.roi.is_empty() {
            return Err(self.error_at(
                "output",
                "the job asks for no product: set output.inlines, output.crosslines, output.depth_slices or add an \
                 [[output.roi]]",
            ));
        }
        self.check_domains()?;
        if let Some((n, z)) = o.depth_slices.iter().enumerate().find(|(_, z)| !z.is_finite() || **z < 0.0) {
            let key = format!("output.depth_slices.{n}");
            return Err(self.error_at(&key, format!("depths must be in metres, ≥ 0, not {z}")));
        }
        if slices && !o.png && o.slice_formats.is_empty() {
            return Err(self.error_at("output.png", "slices are requested but png = false and slice_formats is empty"));
        }
        if self.config.compute.threads > MAX_THREADS {
            return Err(self.error_at(
                "compute.threads",
                format!("{} threads: at most {MAX_THREADS} (0 uses every core)", self.config.compute.threads),
            ));
        }
        if let Some(f) = duplicate(&o.slice_formats) {
            return Err(self.error_at("output.slice_formats", format!("{} is listed twice", f.extension())));
        }
        if let Some(gb) = self.config.compute.device_memory_gb {
            if !(gb.is_finite() && gb > 0.0) {
                return Err(self.error_at("compute.device_memory_gb", format!("must be gigabytes > 0, not {gb}")));
            }
        }
        if !(o.attribute_window_m.is_finite() && o.attribute_window_m >= 0.0) {
            return Err(self.error_at(
                "output.attribute_window_m",
                format!("must be a length in metres ≥ 0, not {}", o.attribute_window_m),
            ));
        }
        if let Some(a) = o.attributes.iter().enumerate().find_map(|(i, a)| o.attributes[..i].contains(a).then_some(a)) {
            return Err(self.error_at("output.attributes", format!("{} is listed twice", a.name())));
        }
        if !o.attributes.is_empty() && !slices {
            return Err(self.error_at(
                "output.attributes",
                "attributes of slices are asked for, but no slice is: set output.inlines, output.crosslines or \
                 output.depth_slices (an [[output.roi]] takes its own `attributes`)",
            ));
        }
        if let Some(gb) = self.config.compute.host_memory_gb {
            if !(gb.is_finite() && gb > 0.0) {
                return Err(self.error_at("compute.host_memory_gb", format!("must be gigabytes > 0, not {gb}")));
            }
        }
        let timeout = self.config.compute.rank_timeout_s;
        if !(timeout.is_finite() && timeout > 0.0) {
            return Err(self.error_at("compute.rank_timeout_s", format!("must be seconds > 0, not {timeout}")));
        }
        if !(o.keep_free_gb.is_finite() && o.keep_free_gb >= 0.0) {
            return Err(self.error_at("output.keep_free_gb", format!("must be gigabytes ≥ 0, not {}", o.keep_free_gb)));
        }
        let mut names = std::collections::HashSet::new();
        for (i, r) in o.roi.iter().enumerate() {
            let key = format!("output.roi.{i}");
            if r.name.is_empty() || !r.name.chars().all(|ch| ch.is_ascii_alphanumeric() || "-_.".contains(ch)) {
                return Err(self.error_at(
                    &format!("{key}.name"),
                    format!("{} must be letters, digits, '-', '_' or '.'", quote(&r.name)),
                ));
            }
            if r.name.len() > MAX_ROI_NAME {
                return Err(self.error_at(
                    &format!("{key}.name"),
                    format!(
                        "{} is {} characters long; at most {MAX_ROI_NAME} fit a file name",
                        quote(&r.name),
                        r.name.len()
                    ),
                ));
            }
            if !names.insert(&r.name) {
                return Err(
                    self.error_at(&format!("{key}.name"), format!("two [[output.roi]] are named {}", quote(&r.name)))
                );
            }
            if r.formats.is_empty() {
                return Err(self.error_at(&format!("{key}.formats"), "an ROI needs at least one format"));
            }
            if r.formats.contains(&VolumeFormat::Geotiff) {
                let why = "GeoTIFF holds maps: list it in output.slice_formats for depth and time slices";
                return Err(self.error_at(&format!("{key}.formats"), why));
            }
            if let Some(f) = duplicate(&r.formats) {
                return Err(self.error_at(&format!("{key}.formats"), format!("{} is listed twice", f.extension())));
            }
        }
        o.render.validate().map_err(|e| self.locate(e.within("output.render")))
    }

    /// `output.domain` and the keys of products in time.
    fn check_domains(&self) -> Result<()> {
        let o = &self.config.output;
        if o.domain.is_empty() {
            return Err(self.error_at("output.domain", "list the domains to write: [\"depth\"], [\"time\"] or both"));
        }
        if o.domain.len() == 2 && o.domain[0] == o.domain[1] {
            return Err(self.error_at("output.domain", "a domain is listed twice"));
        }
        if !o.writes(Domain::Time) {
            if !o.time_slices.is_empty() {
                return Err(self.error_at(
                    "output.time_slices",
                    "time slices are products in two-way time: add \"time\" to output.domain",
                ));
            }
            if o.time_step_ms.is_some() {
                return Err(
                    self.error_at("output.time_step_ms", "applies to products in time: add \"time\" to output.domain")
                );
            }
        }
        if !o.writes(Domain::Depth) && !o.depth_slices.is_empty() {
            return Err(self.error_at(
                "output.depth_slices",
                "depth slices are products in depth, and output.domain does not list \"depth\" (in time, ask for \
                 output.time_slices in ms)",
            ));
        }
        if let Some((n, t)) = o.time_slices.iter().enumerate().find(|(_, t)| !t.is_finite() || **t < 0.0) {
            let key = format!("output.time_slices.{n}");
            return Err(self.error_at(&key, format!("times must be in ms, ≥ 0, not {t}")));
        }
        if let Some(dt) = o.time_step_ms.filter(|dt| !(dt.is_finite() && *dt > 0.0)) {
            return Err(self.error_at("output.time_step_ms", format!("must be a sample interval in ms > 0, not {dt}")));
        }
        Ok(())
    }

    /// The fully resolved config as TOML (every default shown, paths absolute).
    pub fn to_toml(&self) -> String {
        toml::to_string_pretty(&self.config).unwrap_or_else(|e| format!("# cannot print the config: {e}\n"))
    }
}

/// The first format listed twice (its files would be written twice under one name).
fn duplicate(formats: &[VolumeFormat]) -> Option<VolumeFormat> {
    formats.iter().enumerate().find(|(i, f)| formats[..*i].contains(f)).map(|(_, f)| *f)
}

/// A value of the job quoted in a message: cut short, as it may be long.
fn quote(text: &str) -> String {
    format!("\"{}\"", crate::io::files::quoted(text, 60))
}

/// An absolute path with `.` and `..` resolved in its text, as a person writes it (`/data/jobs/../f3.sgy`
/// is `/data/f3.sgy`). Where `jobs` is a symbolic link this can name another file than the system would
/// reach, but the job names paths, and the printed job and the manifest should show the path meant.
fn normalise(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            c => out.push(c),
        }
    }
    out
}
