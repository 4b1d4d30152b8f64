//! A job file (TOML) and command-line overrides, validated into one [`Job`] before any work starts.
//!
//! Every section is a serde struct with `deny_unknown_fields`, so a misspelt key is an error with its line
//! and column. Relative paths in a job file are relative to the job file's folder, so a job can be
//! submitted from anywhere (a cluster's batch system rarely starts in the folder you expect).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Location, Result};
use crate::imaging::ImagingParams;
use crate::io::{FileFormat, InputOptions};
use crate::render::RenderOptions;
use crate::velocity::VelocitySpec;
use crate::window::WindowParams;

/// Where a job computes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    /// The GPU when one is usable, else the CPU (saying why).
    #[default]
    Auto,
    Cpu,
    Cuda,
}

/// The whole job file.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JobConfig {
    pub input: InputConfig,
    #[serde(default)]
    pub window: WindowParams,
    pub velocity: VelocitySpec,
    #[serde(default)]
    pub imaging: ImagingParams,
    #[serde(default)]
    pub compute: ComputeConfig,
    pub output: OutputConfig,
}

/// `[input]`: the volume to migrate and how to read it.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct InputConfig {
    /// SEG-Y or HDF5 file (relative to the job file's folder).
    pub path: PathBuf,
    /// Metres between adjacent inlines and between adjacent crosslines. Default: from the survey
    /// coordinates; required when the file has none.
    #[serde(default)]
    pub bin_size: Option<[f64; 2]>,
    /// How to read the file (format, SEG-Y header bytes and byte order, HDF5 dataset). Unknown keys are
    /// refused here, so a misspelt key of `[input]` is an error.
    #[serde(flatten)]
    pub read: InputOptions,
}

/// `[compute]`: where and how.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ComputeConfig {
    pub backend: Backend,
    /// CPU threads; 0 = all cores.
    pub threads: usize,
    /// CUDA device ordinal.
    pub device: usize,
    /// GPU: fast (less accurate) sin/cos/sqrt in the kernels.
    pub fast_math: bool,
}

impl Default for ComputeConfig {
    fn default() -> Self {
        ComputeConfig { backend: Backend::Auto, threads: 0, device: 0, fast_math: false }
    }
}

/// Sub-volume file formats a product can be written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum VolumeFormat {
    Segy,
    Hdf5,
    Npy,
}

impl VolumeFormat {
    pub fn file_format(self) -> FileFormat {
        match self {
            VolumeFormat::Segy => FileFormat::Segy,
            VolumeFormat::Hdf5 => FileFormat::Hdf5,
            VolumeFormat::Npy => FileFormat::Npy,
        }
    }

    pub fn extension(self) -> &'static str {
        match self {
            VolumeFormat::Segy => "sgy",
            VolumeFormat::Hdf5 => "h5",
            VolumeFormat::Npy => "npy",
        }
    }
}

/// `[[output.roi]]`: a box of the image written as sub-volume files.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RoiConfig {
    /// Names the files (`roi_NAME.h5`, ...).
    pub name: String,
    /// Inline numbers [first, last]; default all.
    #[serde(default)]
    pub iline: Option<[i64; 2]>,
    /// Crossline numbers [first, last]; default all.
    #[serde(default)]
    pub xline: Option<[i64; 2]>,
    /// Depths [top, bottom] in metres; default the whole depth axis.
    #[serde(default)]
    pub depth: Option<[f64; 2]>,
    /// Default ["hdf5"].
    #[serde(default = "default_roi_formats")]
    pub formats: Vec<VolumeFormat>,
}

fn default_roi_formats() -> Vec<VolumeFormat> {
    vec![VolumeFormat::Hdf5]
}

/// `[output]`: what to write, and where.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutputConfig {
    /// Output folder (created if missing; relative to the job file's folder).
    pub dir: PathBuf,
    /// Inline numbers to image as vertical sections.
    #[serde(default)]
    pub inlines: Vec<i64>,
    /// Crossline numbers to image as vertical sections.
    #[serde(default)]
    pub crosslines: Vec<i64>,
    /// Depths (m) of horizontal slices.
    #[serde(default)]
    pub depth_slices: Vec<f64>,
    /// Also write every slice as these sub-volume formats (besides its PNG).
    #[serde(default)]
    pub slice_formats: Vec<VolumeFormat>,
    /// Write a PNG of every slice.
    #[serde(default = "yes")]
    pub png: bool,
    /// How slices are drawn.
    #[serde(default)]
    pub render: RenderOptions,
    #[serde(default)]
    pub roi: Vec<RoiConfig>,
}

fn yes() -> bool {
    true
}

/// A job ready to plan: the config with paths resolved and every value checked that can be checked
/// without opening the input.
#[derive(Clone, Debug)]
pub struct Job {
    /// The job file, or a description of where the job came from.
    pub source: PathBuf,
    pub config: JobConfig,
}

impl Job {
    /// Read a job file and apply `--set KEY=VALUE` overrides.
    pub fn load(path: &Path, overrides: &[String]) -> Result<Job> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        Job::parse(&text, path, overrides)
    }

    /// Parse job text; `path` names it in errors and anchors relative paths.
    pub fn parse(text: &str, path: &Path, overrides: &[String]) -> Result<Job> {
        let name = path.display().to_string();
        // Parse the text itself first, so that errors carry the line and column of the user's file.
        let mut config: JobConfig = toml::from_str(text).map_err(|e| toml_error(&name, text, &e))?;
        if !overrides.is_empty() {
            let mut table: toml::Table = toml::from_str(text).map_err(|e| toml_error(&name, text, &e))?;
            for o in overrides {
                apply_override(&mut table, o)?;
            }
            config = JobConfig::deserialize(table).map_err(|e| {
                Error::config("--set", Location::File, format!("after the overrides, {}", e.message().trim()))
            })?;
        }
        let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
        config.input.path = resolve(&base, &config.input.path);
        config.output.dir = resolve(&base, &config.output.dir);
        if let VelocitySpec::File { path, .. } = &mut config.velocity {
            *path = resolve(&base, path);
        }
        let job = Job { source: path.to_path_buf(), config };
        job.check()?;
        Ok(job)
    }

    /// Checks that need no file: ranges and consistency of values.
    fn check(&self) -> Result<()> {
        let c = &self.config;
        let err = |msg: String| Err(Error::config(self.source.display().to_string(), Location::File, msg));
        if let Some([a, b]) = c.input.bin_size {
            if !(a > 0.0 && b > 0.0 && a.is_finite() && b.is_finite()) {
                return err(format!("input.bin_size must be two positive distances in metres, got [{a}, {b}]"));
            }
        }
        let o = &c.output;
        if o.inlines.is_empty() && o.crosslines.is_empty() && o.depth_slices.is_empty() && o.roi.is_empty() {
            return err("the job asks for no product: set output.inlines, output.crosslines, output.depth_slices \
                        or add an [[output.roi]]"
                .into());
        }
        if let Some(z) = o.depth_slices.iter().find(|z| !z.is_finite() || **z < 0.0) {
            return err(format!("output.depth_slices must be depths in metres ≥ 0, got {z}"));
        }
        let mut names = std::collections::HashSet::new();
        for r in &o.roi {
            if r.name.is_empty() || !r.name.chars().all(|ch| ch.is_ascii_alphanumeric() || "-_.".contains(ch)) {
                return err(format!("output.roi name {:?} must be letters, digits, '-', '_' or '.'", r.name));
            }
            if !names.insert(&r.name) {
                return err(format!("two [[output.roi]] are named {:?}", r.name));
            }
            if r.formats.is_empty() {
                return err(format!("output.roi {:?} has no formats", r.name));
            }
        }
        if !o.png
            && o.slice_formats.is_empty()
            && (!o.inlines.is_empty() || !o.crosslines.is_empty() || !o.depth_slices.is_empty())
        {
            return err("slices are requested but output.png = false and output.slice_formats is empty".into());
        }
        Ok(())
    }

    /// The fully resolved config as TOML (every default shown).
    pub fn to_toml(&self) -> String {
        toml::to_string_pretty(&self.config).unwrap_or_else(|e| format!("# cannot print the config: {e}\n"))
    }
}

fn resolve(base: &Path, p: &Path) -> PathBuf {
    if p.as_os_str().is_empty() || p.is_absolute() {
        p.to_path_buf()
    } else {
        base.join(p)
    }
}

/// A TOML error as a config error with the line and column of the offending text.
fn toml_error(name: &str, text: &str, e: &toml::de::Error) -> Error {
    let location = match e.span() {
        Some(span) => {
            let before = &text[..span.start.min(text.len())];
            let line = before.matches('\n').count() + 1;
            let column = before.rsplit('\n').next().map(|l| l.chars().count()).unwrap_or(0) + 1;
            Location::Line { line, column }
        }
        None => Location::File,
    };
    Error::config(name, location, e.message().trim().to_string())
}

/// Apply one `KEY=VALUE` override to the parsed table. VALUE is TOML (`50`, `"cpu"`, `[1, 2]`); a bare word
/// that is not valid TOML is taken as a string, so `--set compute.backend=cpu` works unquoted.
fn apply_override(table: &mut toml::Table, item: &str) -> Result<()> {
    let bad = |msg: String| Error::config("--set", Location::File, msg);
    let (key, value) = item.split_once('=').ok_or_else(|| bad(format!("{item:?} is not KEY=VALUE")))?;
    let key = key.trim();
    let parsed: toml::Value = match toml::from_str::<toml::Table>(&format!("v = {value}")) {
        Ok(mut t) => t.remove("v").expect("the key just written"),
        Err(_) => toml::Value::String(value.to_string()),
    };
    let parts: Vec<&str> = key.split('.').collect();
    if parts.iter().any(|p| p.is_empty()) {
        return Err(bad(format!("{key:?} is not a dotted key such as imaging.fmax")));
    }
    let mut t = table;
    for p in &parts[..parts.len() - 1] {
        let entry = t.entry(p.to_string()).or_insert_with(|| toml::Value::Table(Default::default()));
        t = entry.as_table_mut().ok_or_else(|| bad(format!("{key}: {p} is not a table")))?;
    }
    t.insert(parts[parts.len() - 1].to_string(), parsed);
    Ok(())
}
