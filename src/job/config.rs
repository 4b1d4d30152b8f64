//! The sections of a job file as serde reads them: `[input]` (whose reading options may stand beside its
//! own keys), `[output]` with its regions of interest, and the formats a product is written in.

use std::fmt;
use std::path::PathBuf;

use serde::de::{self, DeserializeSeed, Deserializer, IntoDeserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize};

use crate::attributes::Attribute;
use crate::imaging::ImagingParams;
use crate::io::{FileFormat, InputOptions};
use crate::render::RenderOptions;
use crate::velocity::VelocitySpec;
use crate::volume::Domain;
use crate::window::{NonFinite, WindowParams};

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
    /// ([`super::Job::crs`]); carried into the outputs, never used to project.
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

pub use crate::imaging::compute::{Backend, ComputeConfig};
pub use crate::threads::MAX_THREADS;
/// The longest ROI name: its files and their temporary names (about 45 characters longer) must fit the
/// 255 bytes a file name may have.
pub const MAX_ROI_NAME: usize = 100;

/// Sub-volume file formats a product can be written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum VolumeFormat {
    Segy,
    Hdf5,
    Npy,
    /// Maps only: depth and time slices.
    Geotiff,
    /// MDIO v1, a Zarr v3 folder.
    Mdio,
}

impl VolumeFormat {
    pub fn file_format(self) -> FileFormat {
        match self {
            VolumeFormat::Segy => FileFormat::Segy,
            VolumeFormat::Hdf5 => FileFormat::Hdf5,
            VolumeFormat::Npy => FileFormat::Npy,
            VolumeFormat::Geotiff => FileFormat::GeoTiff,
            VolumeFormat::Mdio => FileFormat::Mdio,
        }
    }

    pub fn extension(self) -> &'static str {
        match self {
            VolumeFormat::Segy => "sgy",
            VolumeFormat::Hdf5 => "h5",
            VolumeFormat::Npy => "npy",
            VolumeFormat::Geotiff => "tif",
            VolumeFormat::Mdio => "mdio",
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
    /// Write the interval velocity the migration used, on the image's grid, in these formats
    /// (`velocity_depth.*`, and `velocity_time.*` with products in time). Default none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub velocity: Vec<VolumeFormat>,
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
            velocity: Vec::new(),
        }
    }
}
