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
use std::ops::Range;
use std::path::{Path, PathBuf};

use serde::de::{self, DeserializeSeed, Deserializer, IntoDeserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize};

use crate::attributes::Attribute;
use crate::error::{Error, Location, Result};
use crate::imaging::ImagingParams;
use crate::io::{FileFormat, InputOptions};
use crate::render::RenderOptions;
use crate::velocity::VelocitySpec;
use crate::volume::Domain;
use crate::window::{NonFinite, WindowParams};

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
#[derive(Clone, Debug, Default, Serialize)]
pub struct InputConfig {
    /// SEG-Y or HDF5 file.
    pub path: PathBuf,
    /// Metres between adjacent inlines and between adjacent crosslines. Default: from the survey
    /// coordinates; required when the file has none.
    pub bin_size: Option<[f64; 2]>,
    /// NaN and infinite samples: set to zero and counted (default), or refused.
    pub nonfinite: NonFinite,
    /// The coordinate reference system of the survey's coordinates: `EPSG:<code>` or a WKT file
    /// ([`Job::crs`]); carried into the outputs, never used to project.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub crs: Option<String>,
    /// How to read the file (format, SEG-Y header bytes and byte order, HDF5 dataset), as keys of the same
    /// table.
    #[serde(flatten)]
    pub read: InputOptions,
}

/// The keys of `[input]` that belong to the job rather than to [`InputOptions`].
const INPUT_KEYS: [&str; 4] = ["path", "bin_size", "nonfinite", "crs"];

/// `[input]` holds the job's own keys beside the reading keys of [`InputOptions`]. serde's `flatten` would
/// buffer the table, losing the position of every key (and letting misspelt keys through), so the table is
/// read in one pass instead: the job's keys are taken aside and every other key goes straight to
/// `InputOptions`, whose errors then keep their line and column.
impl<'de> Deserialize<'de> for InputConfig {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        deserializer.deserialize_map(InputVisitor)
    }
}

struct InputVisitor;

impl<'de> Visitor<'de> for InputVisitor {
    type Value = InputConfig;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an [input] table")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> std::result::Result<InputConfig, A::Error> {
        let mut own = InputConfig::default();
        let mut has_path = false;
        let read = InputOptions::deserialize(ReadingKeys { map, own: &mut own, has_path: &mut has_path })?;
        if !has_path {
            return Err(de::Error::missing_field("path"));
        }
        Ok(InputConfig { read, ..own })
    }
}

/// The `[input]` table as [`InputOptions`] sees it: the job's own keys are stored in `own` on the way.
struct ReadingKeys<'a, A> {
    map: A,
    own: &'a mut InputConfig,
    has_path: &'a mut bool,
}

impl<'de, A: MapAccess<'de>> Deserializer<'de> for ReadingKeys<'_, A> {
    type Error = A::Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> std::result::Result<V::Value, A::Error> {
        visitor.visit_map(self)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option unit
        unit_struct newtype_struct seq tuple tuple_struct map struct enum identifier ignored_any
    }
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for ReadingKeys<'_, A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> std::result::Result<Option<K::Value>, A::Error> {
        let mut seed = Some(seed);
        loop {
            match self.map.next_key_seed(KeySeed { reading: &mut seed })? {
                None => return Ok(None),
                Some(Key::Reading(k)) => return Ok(Some(k)),
                Some(Key::Job("path")) => {
                    self.own.path = self.map.next_value()?;
                    *self.has_path = true;
                }
                Some(Key::Job("bin_size")) => self.own.bin_size = Some(self.map.next_value::<Pair<f64>>()?.0),
                Some(Key::Job("crs")) => self.own.crs = Some(self.map.next_value()?),
                Some(Key::Job(_)) => self.own.nonfinite = self.map.next_value()?,
            }
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> std::result::Result<V::Value, A::Error> {
        self.map.next_value_seed(seed)
    }
}

enum Key<K> {
    Job(&'static str),
    Reading(K),
}

/// Reads one key name: one of [`INPUT_KEYS`], or a key handed to `InputOptions`'s own key reader (inside the
/// TOML reader's key call, so that an unknown key is reported at its position).
struct KeySeed<'s, K> {
    reading: &'s mut Option<K>,
}

impl<'de, K: DeserializeSeed<'de>> DeserializeSeed<'de> for KeySeed<'_, K> {
    type Value = Key<K::Value>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> std::result::Result<Self::Value, D::Error> {
        let name = String::deserialize(deserializer)?;
        if let Some(own) = INPUT_KEYS.iter().find(|k| **k == name) {
            return Ok(Key::Job(own));
        }
        let seed = self.reading.take().expect("a reading key ends the key search");
        seed.deserialize(name.into_deserializer()).map(Key::Reading)
    }
}

/// Exactly two values, `[a, b]`: serde reads an array of two from the first two values of a longer array
/// and ignores the rest, so `bin_size = [10, 10, 10]` would pass unnoticed.
struct Pair<T>([T; 2]);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Pair<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        let values = Vec::<T>::deserialize(deserializer)?;
        let n = values.len();
        <[T; 2]>::try_from(values).map(Pair).map_err(|_| de::Error::invalid_length(n, &"exactly two values"))
    }
}

/// An optional [`Pair`], for `deserialize_with`.
fn pair<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> std::result::Result<Option<[T; 2]>, D::Error> {
    Pair::deserialize(d).map(|p| Some(p.0))
}

/// The most CPU threads a job may ask for: more than any machine has cores, few enough to start at once.
pub const MAX_THREADS: usize = 1024;
/// The longest ROI name: its files and their temporary names (about 45 characters longer) must fit the
/// 255 bytes a file name may have.
pub const MAX_ROI_NAME: usize = 100;

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
    /// GPU: use at most this much device memory (GB), e.g. on a shared card. A job whose spectrum does not
    /// fit runs in frequency bands, the spectrum waiting on the host. Default: what is free.
    pub device_memory_gb: Option<f64>,
    /// Use at most this much host memory (GB) for the spectrum and the work on it; a spectrum that does not
    /// fit waits for its frequency bands in a cache file in `scratch_dir`. Default: 80 % of what the system
    /// reports available.
    pub host_memory_gb: Option<f64>,
    /// Folder of the spectrum's cache file, on a local disk with room for the spectrum. Default: the
    /// system's temporary folder (`TMPDIR`, else `/tmp`).
    pub scratch_dir: Option<PathBuf>,
    /// Several GPU ranks: how long (s) a rank waits for the others to start and meet (NCCL's set-up).
    pub rank_timeout_s: f64,
}

impl Default for ComputeConfig {
    fn default() -> Self {
        ComputeConfig {
            backend: Backend::Auto,
            threads: 0,
            device: 0,
            fast_math: false,
            device_memory_gb: None,
            host_memory_gb: None,
            scratch_dir: None,
            rank_timeout_s: 300.0,
        }
    }
}

impl ComputeConfig {
    /// Where the engine may keep a spectrum that waits for its frequency bands.
    pub fn store_settings(&self) -> crate::imaging::store::StoreSettings {
        crate::imaging::store::StoreSettings {
            host_memory: self.host_memory_gb.map(|gb| (gb * 1e9) as u64),
            scratch_dir: self.scratch_dir.clone(),
        }
    }
}

/// Sub-volume file formats a product can be written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum VolumeFormat {
    Segy,
    Hdf5,
    Npy,
    /// Maps only: depth and time slices.
    Geotiff,
}

impl VolumeFormat {
    pub fn file_format(self) -> FileFormat {
        match self {
            VolumeFormat::Segy => FileFormat::Segy,
            VolumeFormat::Hdf5 => FileFormat::Hdf5,
            VolumeFormat::Npy => FileFormat::Npy,
            VolumeFormat::Geotiff => FileFormat::GeoTiff,
        }
    }

    pub fn extension(self) -> &'static str {
        match self {
            VolumeFormat::Segy => "sgy",
            VolumeFormat::Hdf5 => "h5",
            VolumeFormat::Npy => "npy",
            VolumeFormat::Geotiff => "tif",
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
    #[serde(default, deserialize_with = "pair")]
    pub iline: Option<[i64; 2]>,
    /// Crossline numbers [first, last]; default all.
    #[serde(default, deserialize_with = "pair")]
    pub xline: Option<[i64; 2]>,
    /// Depths [top, bottom] in metres; default the whole depth axis.
    #[serde(default, deserialize_with = "pair")]
    pub depth: Option<[f64; 2]>,
    /// Default ["hdf5"].
    #[serde(default = "default_roi_formats")]
    pub formats: Vec<VolumeFormat>,
    /// Complex-trace attributes of the box, each written in `formats` as `roi_NAME_ATTRIBUTE`. Default none.
    #[serde(default)]
    pub attributes: Vec<Attribute>,
}

fn default_roi_formats() -> Vec<VolumeFormat> {
    vec![VolumeFormat::Hdf5]
}

/// `[output]`: what to write, and where.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutputConfig {
    /// Output folder (created if missing).
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
    /// Gigabytes (10⁹ bytes) that must stay free on the output file system once the products are written;
    /// the run refuses to start otherwise. Default 0: the products only have to fit.
    #[serde(default)]
    pub keep_free_gb: f64,
    /// What the run does with files already in the folder.
    #[serde(default)]
    pub existing: Existing,
    /// How slices are drawn.
    #[serde(default)]
    pub render: RenderOptions,
    /// Complex-trace attributes of every slice (envelope, phase, frequency, cos_phase), each a product of
    /// its own (`inline_120_envelope`), drawn and written like the slice. Default none.
    #[serde(default)]
    pub attributes: Vec<Attribute>,
    /// Half-height (m) of the window of depth levels over which the attributes of a depth slice are
    /// computed. Default 200 m.
    #[serde(default = "default_attribute_window")]
    pub attribute_window_m: f64,
    /// Write `index.html`, a page of the run's pictures, files and parameters. Default true.
    #[serde(default = "yes")]
    pub index: bool,
    #[serde(default)]
    pub roi: Vec<RoiConfig>,
    /// The domains every product is written in: depth as imaged, and/or two-way time converted with the
    /// velocity model. Default depth only.
    #[serde(default = "depth_only")]
    pub domain: Vec<Domain>,
    /// Sample interval (ms) of products in time. Default: the input's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_step_ms: Option<f64>,
    /// Two-way times (ms) of horizontal slices in time.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub time_slices: Vec<f64>,
}

fn yes() -> bool {
    true
}

/// The largest job file read: a job with thousands of products takes a few hundred kilobytes.
pub const MAX_JOB_FILE_BYTES: u64 = 4 << 20;

fn depth_only() -> Vec<Domain> {
    vec![Domain::Depth]
}

impl OutputConfig {
    /// Whether products are written in `domain` (an empty list, as in a config made in code, is depth).
    pub fn writes(&self, domain: Domain) -> bool {
        self.domain.contains(&domain) || (self.domain.is_empty() && domain == Domain::Depth)
    }
}

/// `output.existing`: what a run does with the files already in its output folder.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Existing {
    /// Replace what the folder's manifest lists (the previous run's products, also those this run does not
    /// write again); leave every other file alone.
    #[default]
    Replace,
    /// Refuse to run in a folder that holds anything.
    Refuse,
    /// Remove every file seisimage could have written there (products, manifests, temporary files of an
    /// interrupted run), listed or not; leave other files alone.
    Clean,
}

fn default_attribute_window() -> f64 {
    200.0
}

impl Default for OutputConfig {
    /// The defaults of the job file's keys (with an empty `dir`).
    fn default() -> Self {
        OutputConfig {
            dir: PathBuf::new(),
            inlines: Vec::new(),
            crosslines: Vec::new(),
            depth_slices: Vec::new(),
            slice_formats: Vec::new(),
            png: true,
            keep_free_gb: 0.0,
            existing: Existing::default(),
            render: RenderOptions::default(),
            attributes: Vec::new(),
            attribute_window_m: default_attribute_window(),
            index: true,
            roi: Vec::new(),
            domain: depth_only(),
            time_step_ms: None,
            time_slices: Vec::new(),
        }
    }
}

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

/// How an error names the override `item`: `--set KEY=VALUE`, the value cut short.
fn set_source(item: &str) -> String {
    format!("--set {}", crate::io::files::quoted(item, 100))
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

/// Where the values of a job came from: the job file's text and the overrides, in order.
#[derive(Clone, Debug)]
struct Origin {
    /// The job file, as errors name it.
    name: String,
    text: String,
    overrides: Vec<Override>,
}

/// One `--set KEY=VALUE`.
#[derive(Clone, Debug)]
struct Override {
    key: String,
    item: String,
}

impl Origin {
    /// The last override that set `key` or a table holding it: the one whose value stood.
    fn overridden(&self, key: &str) -> Option<&Override> {
        self.overrides.iter().rev().find(|o| o.key == key || key.starts_with(&format!("{}.", o.key)))
    }

    /// Whether the job gives `key` a value: an override, or the job file.
    fn sets(&self, key: &str) -> bool {
        self.overridden(key).is_some() || entries(&self.text).iter().any(|e| e.path == key)
    }

    fn error_at(&self, key: &str, message: &str) -> Error {
        let message = if key.is_empty() { message.to_string() } else { format!("{key}: {message}") };
        match self.overridden(key) {
            Some(o) => Error::config(set_source(&o.item), Location::File, message),
            None => Error::config(&self.name, position(&self.text, key), message),
        }
    }

    /// A TOML error in the job file: at its own position, prefixed by the key it concerns.
    fn toml_error(&self, e: &toml::de::Error) -> Error {
        let Some(span) = e.span() else { return Error::config(&self.name, Location::File, e.message().trim()) };
        let entries = entries(&self.text);
        let mut key = key_at(&entries, &span);
        let mut at = span.start;
        // A table read as a whole (a tagged enum) reports an unknown key at the table: find the key itself.
        if let (Some(table), Some(field)) = (&key, unknown_field(e.message())) {
            if let Some(k) = entries.iter().find(|en| en.path == format!("{table}.{field}")) {
                at = k.key.as_ref().map_or(k.value.start, |r| r.start);
                key = Some(k.path.clone());
            }
        }
        let message = match (key, e.message().trim()) {
            (Some(k), m) => format!("{k}: {m}"),
            (None, m) if m.starts_with("missing field") => format!("{m}: the job file needs this table"),
            (None, m) => m.to_string(),
        };
        Error::config(&self.name, line_column(&self.text, at), message)
    }

    /// An error in the job after the overrides, read from the merged text: blame the override that set the
    /// key at fault (or a key inside it); else the file's own error, when the file alone had one (the
    /// overrides may also complete a file that lacks something); else the file's line of that key.
    fn merged_error(&self, merged: &str, e: &toml::de::Error, file_only: Option<&toml::de::Error>) -> Error {
        let entries = entries(merged);
        let key = e.span().and_then(|s| key_at(&entries, &s)).unwrap_or_default();
        let key = match unknown_field(e.message()) {
            Some(field) if entries.iter().any(|en| en.path == format!("{key}.{field}")) => format!("{key}.{field}"),
            _ => key,
        };
        let message = e.message().trim();
        let inside = self.overrides.iter().rev().find(|o| o.key.starts_with(&format!("{key}.")));
        match (self.overridden(&key), inside, file_only) {
            (Some(_), _, _) => self.error_at(&key, message),
            (None, Some(o), _) => Error::config(set_source(&o.item), Location::File, format!("{key}: {message}")),
            (None, None, Some(own)) => self.toml_error(own),
            (None, None, None) => self.error_at(&key, &format!("{message} (once the --set overrides are applied)")),
        }
    }
}

/// `unknown field `x`` → `x`.
fn unknown_field(message: &str) -> Option<&str> {
    message.strip_prefix("unknown field `")?.split('`').next()
}

/// One key of a TOML document: its dotted path (array elements by index), where the key is written (none
/// for array elements) and where its value is.
struct Entry {
    path: String,
    key: Option<Range<usize>>,
    value: Range<usize>,
    table: bool,
}

/// Every key of a TOML document, parents before children. Empty when the text does not parse.
fn entries(text: &str) -> Vec<Entry> {
    fn walk(path: &str, key: Option<Range<usize>>, value: &toml::Spanned<toml::de::DeValue>, out: &mut Vec<Entry>) {
        let child = |name: &str| if path.is_empty() { name.to_string() } else { format!("{path}.{name}") };
        let table = matches!(value.get_ref(), toml::de::DeValue::Table(_));
        if !path.is_empty() {
            out.push(Entry { path: path.to_string(), key, value: value.span(), table });
        }
        match value.get_ref() {
            toml::de::DeValue::Table(t) => {
                for (k, v) in t.iter() {
                    walk(&child(k.get_ref()), Some(k.span()), v, out);
                }
            }
            toml::de::DeValue::Array(a) => {
                for (i, v) in a.iter().enumerate() {
                    walk(&child(&i.to_string()), None, v, out);
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    if let Ok(doc) = toml::de::DeTable::parse(text) {
        let span = doc.span();
        let root = toml::Spanned::new(span, toml::de::DeValue::Table(doc.into_inner()));
        walk("", None, &root, &mut out);
    }
    out
}

/// The deepest key whose written key or value holds the whole of `span`. An empty span is the document's
/// (a missing top-level table), no key's.
fn key_at(entries: &[Entry], span: &Range<usize>) -> Option<String> {
    if span.is_empty() {
        return None;
    }
    let holds = |r: &Range<usize>| r.start <= span.start && span.end <= r.end.max(r.start + 1);
    entries
        .iter()
        .filter(|e| e.key.as_ref().is_some_and(holds) || holds(&e.value))
        .max_by_key(|e| e.path.split('.').count())
        .map(|e| e.path.clone())
}

/// Where the value of `key` is written (for a table, its key in the header), or failing that the nearest
/// enclosing table's.
fn position(text: &str, key: &str) -> Location {
    let entries = entries(text);
    let mut path = key;
    loop {
        if let Some(e) = entries.iter().find(|e| e.path == path) {
            let at = match (&e.key, e.table) {
                (Some(k), true) => k.start,
                _ => e.value.start,
            };
            return line_column(text, at);
        }
        match path.rsplit_once('.') {
            Some((parent, _)) => path = parent,
            None => return Location::File,
        }
    }
}

/// The 1-based line and column (in characters) of byte `at` of `text`.
fn line_column(text: &str, at: usize) -> Location {
    let before = &text[..at.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    Location::Line { line, column }
}

/// Apply one `KEY=VALUE` override to the parsed table. VALUE is TOML (`50`, `"cpu"`, `[1, 2]`); a bare word
/// that is not valid TOML is taken as a string, so `--set compute.backend=cpu` works unquoted.
fn apply_override(table: &mut toml::Table, item: &str) -> Result<Override> {
    let bad = |msg: String| Error::config(set_source(item), Location::File, msg);
    let (key, value) = item.split_once('=').ok_or_else(|| bad("expected KEY=VALUE".into()))?;
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
    for (i, p) in parts[..parts.len() - 1].iter().enumerate() {
        let entry = t.entry(p.to_string()).or_insert_with(|| toml::Value::Table(Default::default()));
        t = entry.as_table_mut().ok_or_else(|| bad(format!("{} is not a table", parts[..=i].join("."))))?;
    }
    t.insert(parts[parts.len() - 1].to_string(), parsed);
    Ok(Override { key: key.to_string(), item: item.to_string() })
}
