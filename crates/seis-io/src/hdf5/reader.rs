//! Opening an HDF5 volume: find the 3-D dataset, then its axes (companion datasets, else attributes, else
//! indices), its survey coordinates and its live mask; afterwards read boxes of it by hyperslab.

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};

use ::hdf5::filters::Filter;
use ::hdf5::types::TypeDescriptor;
use ::hdf5::{Dataset, File, Group, LinkType, Location as H5Location, LocationType};
use serde::Serialize;

use super::guard;
use super::raw::{self, AttrValue, H5Context, QUOTE};
use super::{
    check_box, domain_name, join, line_attr_names, parse_domain, parse_sample_unit, split_dataset_path, Hdf5Options,
    ATTR_COORD_ORIGIN, ATTR_COORD_PER_ILINE, ATTR_COORD_PER_XLINE, ATTR_DOMAIN, ATTR_SAMPLE_ORIGIN, ATTR_SAMPLE_STEP,
    ATTR_SAMPLE_UNIT, ATTR_UNITS, ILINE, LIVE, SAMPLE_AXES, XLINE,
};
use crate::files::{library_path, open_regular, quoted};
use seis_core::error::{Error, IoContext, Location, Result};
use seis_core::volume::{CoordTransform, Domain, Geometry, IndexBox, LineAxis, SampleAxis, VolumeReader};

/// How many 3-D datasets an error about a missing dataset lists at most.
const MAX_LISTED: usize = 50;
/// How many attributes of the volume a summary shows at most.
const MAX_LISTED_ATTRIBUTES: usize = 256;
/// How deep the search for 3-D datasets goes into nested groups.
const MAX_GROUP_DEPTH: usize = 32;
/// Values of an axis dataset read at a time.
const AXIS_BLOCK: usize = 1 << 16;

/// An HDF5 volume opened for reading.
pub struct Hdf5Reader {
    path: PathBuf,
    dataset: Dataset,
    geometry: Geometry,
    summary: Hdf5Summary,
}

/// What the `info` command shows about an HDF5 volume.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Hdf5Summary {
    pub file: PathBuf,
    pub dataset: String,
    /// The element type as stored (`float32`, `int16`, ...); values are read as f32 whatever it is.
    pub dtype: String,
    pub shape: [usize; 3],
    /// `None` for a contiguous dataset.
    pub chunk: Option<Vec<usize>>,
    /// The filter pipeline (compression, shuffle, checksums), in order.
    pub filters: Vec<String>,
    pub iline: AxisSummary<i64>,
    pub xline: AxisSummary<i64>,
    pub sample: AxisSummary<f64>,
    pub coords: Option<CoordTransform>,
    /// The dataset the live mask came from, if there is one.
    pub live_mask: Option<String>,
    pub missing_traces: usize,
    /// The attributes of the volume dataset (long or exotic ones described rather than shown).
    pub attributes: BTreeMap<String, serde_json::Value>,
    /// Warnings: axes that were not found and had to be guessed.
    pub notes: Vec<String>,
}

/// One axis of the volume and where it was found.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AxisSummary<T> {
    /// `iline`, `xline`, `twt` or `depth`.
    pub name: &'static str,
    pub first: T,
    pub step: T,
    pub len: usize,
    /// `ms` or `m` for the sample axis.
    pub unit: Option<&'static str>,
    pub source: AxisSource,
}

/// Where an axis was found.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum AxisSource {
    /// A 1-D dataset beside the volume (its path).
    Dataset(String),
    /// Attributes of the volume dataset or of its group (their names).
    Attributes(Vec<String>),
    /// Nothing: line numbers are 1-based indices, samples 0-based indices.
    Index,
}

impl std::fmt::Display for AxisSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AxisSource::Dataset(path) => write!(f, "dataset {path}"),
            AxisSource::Attributes(names) => write!(f, "attributes {}", names.join(", ")),
            AxisSource::Index => write!(f, "indices"),
        }
    }
}

impl Hdf5Reader {
    pub fn open(path: &Path, opts: &Hdf5Options) -> Result<Self> {
        guard::init();
        let (group_path, name) = split_dataset_path(path, &opts.dataset)?;
        let dataset_path = join(&group_path, &name);
        // Opened here first: the operating system says "no such file" more plainly than HDF5 does, and only a
        // regular file is handed on, by the name of this very descriptor.
        let opened = open_regular(path)?;
        let file_len = opened.metadata().at(path)?.len();
        let file = super::unlocked()
            .open(library_path(&opened, path))
            .doing(path, || "cannot open it as HDF5 (not an HDF5 file, or a damaged one)".into())?;
        drop(opened);
        let (dataset, [n_il, n_xl, n_s]) = open_volume(path, &file, &dataset_path, file_len)?;

        let mut scan = Scan::new(path, &file, &group_path, &dataset, &dataset_path, file_len)?;
        let (ilines, il_source) = scan.line_axis(ILINE, n_il, "the inlines")?;
        let (xlines, xl_source) = scan.line_axis(XLINE, n_xl, "the crosslines")?;
        let (samples, s_source) = scan.sample_axis(n_s)?;
        let coords = scan.coords()?;
        let (live, live_mask) = scan.live(n_il, n_xl)?;
        let geometry = Geometry { ilines, xlines, samples, coords, live };

        let line = |name, axis: &LineAxis, source| AxisSummary {
            name,
            first: axis.first,
            step: axis.step,
            len: axis.len,
            unit: None,
            source,
        };
        let summary = Hdf5Summary {
            file: path.to_path_buf(),
            dtype: describe_dtype(&dataset),
            shape: geometry.shape(),
            chunk: dataset.chunk(),
            filters: dataset.filters().iter().map(describe_filter).collect(),
            iline: line(ILINE, &ilines, il_source),
            xline: line(XLINE, &xlines, xl_source),
            sample: AxisSummary {
                name: samples.domain.axis_name(),
                first: samples.origin,
                step: samples.step,
                len: samples.len,
                unit: Some(samples.domain.unit()),
                source: s_source,
            },
            coords,
            live_mask,
            missing_traces: geometry.n_missing(),
            attributes: attributes_of(&dataset),
            notes: scan.notes,
            dataset: dataset_path,
        };
        Ok(Hdf5Reader { path: path.to_path_buf(), dataset, geometry, summary })
    }

    pub fn summary(&self) -> Hdf5Summary {
        self.summary.clone()
    }
}

impl VolumeReader for Hdf5Reader {
    fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    fn describe(&self) -> String {
        format!("{} (HDF5 dataset {})", self.path.display(), self.summary.dataset)
    }

    fn read_box(&self, b: &IndexBox, out: &mut [f32]) -> Result<()> {
        check_box(&self.path, b, self.geometry.shape(), out.len())?;
        if b.is_empty() {
            return Ok(());
        }
        raw::read_box(&self.dataset, b, out).doing(&self.path, || {
            format!(
                "reading inline indices {:?}, crossline indices {:?} of dataset {}",
                b.il, b.xl, self.summary.dataset
            )
        })?;
        // A read stopped between its parts left `out` incomplete.
        seis_core::cancel::CancelToken::process().check()
    }
}

/// Open the volume dataset and check that it is one: three non-empty dimensions of numbers, and no more
/// traces than a file of its size can describe (the live mask and the axes are allocated per trace).
fn open_volume(path: &Path, file: &File, dataset_path: &str, file_len: u64) -> Result<(Dataset, [usize; 3])> {
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

/// What one source (the companion dataset, or attributes) says about an axis, in the model's units.
struct Found {
    first: f64,
    /// `None` for a companion dataset of one value.
    step: Option<f64>,
    source: AxisSource,
}

/// What a file says about the domain of its sample axis.
struct SampleDomain {
    domain: Domain,
    /// The companion dataset (`twt` or `depth`) that is the axis, if there is one.
    companion: Option<Domain>,
    /// The domain attribute `sample_unit` implies, and the factor to the domain's unit.
    unit: Option<(Domain, f64)>,
    /// Whether the file said anything about the domain (time is assumed otherwise).
    stated: bool,
}

/// The search for the axes of one volume dataset.
struct Scan<'a> {
    file: &'a Path,
    group: Group,
    group_path: &'a str,
    volume: &'a Dataset,
    volume_path: &'a str,
    file_len: u64,
    notes: Vec<String>,
}

impl<'a> Scan<'a> {
    fn new(
        file: &'a Path,
        h5: &File,
        group_path: &'a str,
        volume: &'a Dataset,
        volume_path: &'a str,
        file_len: u64,
    ) -> Result<Self> {
        let group = h5.group(group_path).doing(file, || format!("opening group {group_path}"))?;
        Ok(Scan { file, group, group_path, volume, volume_path, file_len, notes: Vec::new() })
    }

    fn fail(&self, message: impl Into<String>) -> Error {
        Error::format(self.file, Location::File, message)
    }

    fn warn(&mut self, note: String) {
        tracing::warn!("{}: {note}", self.file.display());
        self.notes.push(note);
    }

    /// Attribute `name` of the object at `holder_path`, if it has one, with a phrase naming it.
    fn attr_of(&self, holder: &H5Location, holder_path: &str, name: &str) -> Result<Option<(AttrValue, String)>> {
        let names = holder.attr_names().doing(self.file, || format!("listing the attributes of {holder_path}"))?;
        if !names.iter().any(|n| n == name) {
            return Ok(None);
        }
        let what = format!("attribute {name} of {holder_path}");
        let value =
            holder.attr(name).and_then(|a| raw::read_attr(&a)).doing(self.file, || format!("reading {what}"))?;
        Ok(Some((value, what)))
    }

    /// An attribute of the volume dataset, or else of the group that holds it.
    fn attr(&self, name: &str) -> Result<Option<(AttrValue, String)>> {
        match self.attr_of(self.volume, self.volume_path, name)? {
            Some(found) => Ok(Some(found)),
            None => self.attr_of(&self.group, self.group_path, name),
        }
    }

    /// A numeric attribute of exactly `N` finite values.
    fn numbers_attr<const N: usize>(&self, name: &str) -> Result<Option<[f64; N]>> {
        let Some((value, what)) = self.attr(name)? else { return Ok(None) };
        let numbers = value.numbers().filter(|v| v.iter().all(|x| x.is_finite()));
        match numbers.and_then(|v| <[f64; N]>::try_from(v).ok()) {
            Some(array) => Ok(Some(array)),
            None => Err(self.fail(format!("{what} must be {N} finite number(s), found {}", value.describe()))),
        }
    }

    fn number_attr(&self, name: &str) -> Result<Option<f64>> {
        Ok(self.numbers_attr::<1>(name)?.map(|[x]| x))
    }

    /// A text attribute and the phrase naming it.
    fn text_attr(&self, name: &str) -> Result<Option<(String, String)>> {
        self.text(self.attr(name)?)
    }

    fn text(&self, found: Option<(AttrValue, String)>) -> Result<Option<(String, String)>> {
        match found {
            None => Ok(None),
            Some((AttrValue::Text(text), what)) => Ok(Some((text, what))),
            Some((other, what)) => Err(self.fail(format!("{what} must be text, found {}", other.describe()))),
        }
    }

    /// A pair of attributes that give an axis's first value and step: both or neither.
    fn attr_pair(&self, [first_name, step_name]: [&str; 2]) -> Result<Option<(f64, f64)>> {
        match (self.number_attr(first_name)?, self.number_attr(step_name)?) {
            (Some(first), Some(step)) => Ok(Some((first, step))),
            (None, None) => Ok(None),
            _ => Err(self.fail(format!(
                "attributes {first_name} and {step_name} of {} go together; only one of them is there",
                self.volume_path
            ))),
        }
    }

    /// Whether a dataset `name` lies beside the volume; a link there that leaves the file is refused.
    fn has_dataset(&self, name: &str) -> Result<bool> {
        if !self.group.link_exists(name) {
            return Ok(false);
        }
        guard::check_path(self.file, &self.group, name)?;
        Ok(matches!(self.group.loc_type_by_name(name), Ok(LocationType::Dataset)))
    }

    /// The companion dataset `name` beside the volume, checked to have the shape `shape`.
    fn companion(&self, name: &str, shape: &[usize], what: &str) -> Result<Option<(String, Dataset)>> {
        if !self.has_dataset(name)? {
            return Ok(None);
        }
        let path = join(self.group_path, name);
        let dataset = self.group.dataset(name).doing(self.file, || format!("opening {path}"))?;
        guard::check_dataset(self.file, &dataset, &path, self.file_len)?;
        let found = dataset.shape();
        if found != shape {
            return Err(self.fail(format!(
                "{path} has shape {found:?} where {shape:?} was expected ({what} of dataset {})",
                self.volume_path
            )));
        }
        Ok(Some((path, dataset)))
    }

    /// First value and step of the evenly spaced, increasing numbers of a 1-D companion dataset, times
    /// `factor` (a unit conversion).
    ///
    /// Read in blocks: the dataset's length is the volume's, which the file need not back (chunks never
    /// written take no room), so a dataset of fill values longer than the file costs one block of memory,
    /// and is refused once its first and last values are read.
    fn spacing(&self, path: &str, dataset: &Dataset, factor: f64) -> Result<(f64, Option<f64>)> {
        if !matches!(
            dataset.dtype().and_then(|t| t.to_descriptor()),
            Ok(TypeDescriptor::Integer(_) | TypeDescriptor::Unsigned(_) | TypeDescriptor::Float(_))
        ) {
            return Err(self.fail(format!("{path} does not hold numbers")));
        }
        let read = |range: Range<usize>| -> Result<Vec<f64>> {
            let values = dataset.read_slice_1d::<f64, _>(range).doing(self.file, || format!("reading {path}"))?;
            Ok(values.iter().map(|v| v * factor).collect())
        };
        let n = dataset.size();
        let first = read(0..1)?[0];
        if n == 1 {
            return if first.is_finite() { Ok((first, None)) } else { Err(self.fail(format!("{path} holds {first}"))) };
        }
        let last = read(n - 1..n)?[0];
        let step = (last - first) / (n - 1) as f64;
        if !(step > 0.0 && step.is_finite()) {
            return Err(self.fail(format!(
                "{path} must increase (from {first} to {last} over {n} values); seisimage keeps axes ascending"
            )));
        }
        // Values stored as f32 (a time axis in seconds, say) are allowed their rounding; NaN is not.
        let expected = |i: usize| first + i as f64 * step;
        let off_grid = |i: usize, v: f64| {
            let miss = (v - expected(i)).abs();
            miss.is_nan() || miss > 1e-3 * step
        };
        for start in (0..n).step_by(AXIS_BLOCK) {
            let block = read(start..(start + AXIS_BLOCK).min(n))?;
            if let Some((i, v)) =
                block.into_iter().enumerate().map(|(k, v)| (start + k, v)).find(|&(i, v)| off_grid(i, v))
            {
                return Err(self.fail(format!(
                    "{path} is not evenly spaced: value {i} is {v}, but {first} + {i} × {step} = {} was expected",
                    expected(i)
                )));
            }
        }
        Ok((first, Some(step)))
    }

    /// Merge what the companion dataset and the attributes say about an axis: the dataset wins, and where
    /// both speak they must agree.
    fn settle(
        &self,
        axis: &str,
        dataset: Option<Found>,
        attrs: Option<Found>,
    ) -> Result<Option<(f64, f64, AxisSource)>> {
        match (dataset, attrs) {
            (Some(d), Some(a)) => {
                let step = d.step.or(a.step).unwrap_or(1.0);
                let agree = |x: f64, y: f64| (x - y).abs() <= 1e-5 * x.abs().max(y.abs()).max(step);
                if !agree(d.first, a.first) || d.step.is_some_and(|s| !agree(s, a.step.unwrap_or(s))) {
                    return Err(self.fail(format!(
                        "the {axis} axis of {} is described twice, differently: {} gives first {} step {}, \
                         {} give first {} step {}",
                        self.volume_path,
                        d.source,
                        d.first,
                        d.step.map_or("unknown".to_string(), |s| s.to_string()),
                        a.source,
                        a.first,
                        a.step.unwrap_or(f64::NAN),
                    )));
                }
                Ok(Some((d.first, step, d.source)))
            }
            (Some(f), None) | (None, Some(f)) => Ok(Some((f.first, f.step.unwrap_or(1.0), f.source))),
            (None, None) => Ok(None),
        }
    }

    /// An axis of line numbers: whole numbers, ascending.
    fn line_axis(&mut self, axis: &'static str, len: usize, what: &str) -> Result<(LineAxis, AxisSource)> {
        let dataset = match self.companion(axis, &[len], what)? {
            Some((path, ds)) => {
                let (first, step) = self.spacing(&path, &ds, 1.0)?;
                Some(Found { first, step, source: AxisSource::Dataset(path) })
            }
            None => None,
        };
        let names = line_attr_names(axis);
        let attrs = self.attr_pair([&names[0], &names[1]])?.map(|(first, step)| Found {
            first,
            step: Some(step),
            source: AxisSource::Attributes(names.to_vec()),
        });
        let Some((first, step, source)) = self.settle(axis, dataset, attrs)? else {
            self.warn(format!(
                "no {axis} axis found (no dataset {} and no attributes {}/{}); {what} are numbered 1, 2, 3, ...",
                join(self.group_path, axis),
                names[0],
                names[1]
            ));
            return Ok((LineAxis::new(1, 1, len), AxisSource::Index));
        };
        let whole = |x: f64| (x - x.round()).abs() <= 1e-6 * x.abs().max(1.0);
        if !(whole(first) && whole(step) && step >= 1.0 && first.abs() < i64::MAX as f64 / 2.0) {
            return Err(self.fail(format!(
                "the {axis} axis of {} (first {first}, step {step}, from {source}) is not made of ascending whole \
                 line numbers",
                self.volume_path
            )));
        }
        // Line numbers are 64-bit integers: the last one must be one too, or every number past it wraps.
        let last = first + step * (len - 1) as f64;
        if last.abs() >= i64::MAX as f64 / 2.0 {
            return Err(self.fail(format!(
                "the {axis} axis of {} (first {first}, step {step:e}, {len} lines, from {source}) reaches {last:e}, \
                 beyond the line numbers seisimage holds (64-bit integers)",
                self.volume_path
            )));
        }
        Ok((LineAxis::new(first.round() as i64, step.round() as i64, len), source))
    }

    fn sample_unit(&self, (text, what): (String, String)) -> Result<(Domain, f64)> {
        parse_sample_unit(&text).ok_or_else(|| {
            let text = quoted(&text, QUOTE);
            self.fail(format!("{what} is '{text}'; the sample axis is in ms or s (time), m or km (depth)"))
        })
    }

    /// The domain of the sample axis, from the name of its companion dataset, `sample_unit` and `domain`,
    /// which must agree; time when none of them is there.
    fn sample_domain(&self) -> Result<SampleDomain> {
        let unit = match self.text_attr(ATTR_SAMPLE_UNIT)? {
            Some(found) => Some(self.sample_unit(found)?),
            None => None,
        };
        let domain_attr =
            match self.text_attr(ATTR_DOMAIN)? {
                Some((text, what)) => Some(parse_domain(&text).ok_or_else(|| {
                    self.fail(format!("{what} is '{}'; it must be time or depth", quoted(&text, QUOTE)))
                })?),
                None => None,
            };
        let mut present = Vec::new();
        for domain in SAMPLE_AXES {
            if self.has_dataset(domain.axis_name())? {
                present.push(domain);
            }
        }
        let companion = match present[..] {
            [] => None,
            [domain] => Some(domain),
            _ => Some(domain_attr.or(unit.map(|(d, _)| d)).ok_or_else(|| {
                self.fail(format!(
                    "both {} and {} lie beside {}, and neither attribute {ATTR_DOMAIN} nor {ATTR_SAMPLE_UNIT} says \
                     which one is its sample axis",
                    join(self.group_path, "twt"),
                    join(self.group_path, "depth"),
                    self.volume_path
                ))
            })?),
        };
        let evidence = [
            (companion, "the name of its axis dataset"),
            (unit.map(|(d, _)| d), "attribute sample_unit"),
            (domain_attr, "attribute domain"),
        ];
        let mut said = evidence.into_iter().filter_map(|(d, by)| d.map(|d| (d, by)));
        let Some((domain, by)) = said.next() else {
            return Ok(SampleDomain { domain: Domain::Time, companion, unit, stated: false });
        };
        if let Some((other, other_by)) = said.find(|&(d, _)| d != domain) {
            return Err(self.fail(format!(
                "the sample axis of {}: {by} says {}, {other_by} says {}",
                self.volume_path,
                domain_name(domain),
                domain_name(other)
            )));
        }
        Ok(SampleDomain { domain, companion, unit, stated: true })
    }

    /// The sample axis: its values from the companion dataset `twt` or `depth`, or else from
    /// `sample_origin` / `sample_step`, converted to ms or m.
    fn sample_axis(&mut self, len: usize) -> Result<(SampleAxis, AxisSource)> {
        let SampleDomain { domain, companion, unit, stated } = self.sample_domain()?;
        let attr_factor = unit.map_or(1.0, |(_, f)| f);
        let companion = match companion {
            Some(domain) => self.companion(domain.axis_name(), &[len], "the samples")?,
            None => None,
        };
        let dataset = match companion {
            Some((path, ds)) => {
                // The companion's own unit, else the volume's sample_unit, else the domain's unit.
                let factor = match self.text(self.attr_of(&ds, &path, ATTR_UNITS)?)? {
                    Some((text, what)) => match self.sample_unit((text.clone(), what.clone()))? {
                        (unit_domain, factor) if unit_domain == domain => factor,
                        _ => {
                            let text = quoted(&text, QUOTE);
                            let message = format!("{what} is '{text}', which is no unit of {}", domain_name(domain));
                            return Err(self.fail(message));
                        }
                    },
                    None => attr_factor,
                };
                let (first, step) = self.spacing(&path, &ds, factor)?;
                Some(Found { first, step, source: AxisSource::Dataset(path) })
            }
            None => None,
        };
        let attrs = self.attr_pair([ATTR_SAMPLE_ORIGIN, ATTR_SAMPLE_STEP])?.map(|(origin, step)| {
            let mut names = vec![ATTR_SAMPLE_ORIGIN.to_string(), ATTR_SAMPLE_STEP.to_string()];
            names.extend(unit.map(|_| ATTR_SAMPLE_UNIT.to_string()));
            Found { first: origin * attr_factor, step: Some(step * attr_factor), source: AxisSource::Attributes(names) }
        });
        if attrs.is_some() && !stated {
            self.warn(format!(
                "no {ATTR_SAMPLE_UNIT} or {ATTR_DOMAIN} attribute; the sample axis is taken as two-way time in ms"
            ));
        }

        let Some((origin, step, source)) = self.settle(domain.axis_name(), dataset, attrs)? else {
            self.warn(format!(
                "no sample axis found (no dataset twt or depth beside {} and no attributes {ATTR_SAMPLE_ORIGIN}/\
                 {ATTR_SAMPLE_STEP}); samples are numbered 0, 1, 2, ... as {} in {}",
                self.volume_path,
                domain.axis_name(),
                domain.unit()
            ));
            return Ok((SampleAxis { origin: 0.0, step: 1.0, len, domain }, AxisSource::Index));
        };
        if !(step > 0.0 && step.is_finite() && origin.is_finite()) {
            return Err(self.fail(format!(
                "the sample axis of {} (origin {origin}, step {step}, from {source}) must increase",
                self.volume_path
            )));
        }
        Ok((SampleAxis { origin, step, len, domain }, source))
    }

    /// The affine map to survey coordinates, from three attributes that go together.
    fn coords(&self) -> Result<Option<CoordTransform>> {
        let names = [ATTR_COORD_ORIGIN, ATTR_COORD_PER_ILINE, ATTR_COORD_PER_XLINE];
        let [origin, per_iline, per_xline] =
            [self.numbers_attr::<2>(names[0])?, self.numbers_attr::<2>(names[1])?, self.numbers_attr::<2>(names[2])?];
        match (origin, per_iline, per_xline) {
            (Some(origin), Some(per_iline), Some(per_xline)) => {
                Ok(Some(CoordTransform { origin, per_iline, per_xline }))
            }
            (None, None, None) => Ok(None),
            _ => Err(self.fail(format!(
                "attributes {} of {} go together; only some of them are there",
                names.join(", "),
                self.volume_path
            ))),
        }
    }

    /// The live mask: the companion dataset `live` (non-zero = a trace with data), else every trace live.
    fn live(&self, n_il: usize, n_xl: usize) -> Result<(Vec<bool>, Option<String>)> {
        let Some((path, ds)) = self.companion(LIVE, &[n_il, n_xl], "a flag per trace")? else {
            return Ok((vec![true; n_il * n_xl], None));
        };
        let flags = match ds.dtype().and_then(|t| t.to_descriptor()) {
            Ok(TypeDescriptor::Boolean) => ds.read_raw::<bool>(),
            Ok(TypeDescriptor::Integer(_) | TypeDescriptor::Unsigned(_)) => {
                ds.read_raw::<i64>().map(|v| v.into_iter().map(|x| x != 0).collect())
            }
            _ => return Err(self.fail(format!("{path} must hold integers or booleans"))),
        };
        Ok((flags.doing(self.file, || format!("reading {path}"))?, Some(path)))
    }
}

fn describe_dtype(dataset: &Dataset) -> String {
    match dataset.dtype() {
        Ok(t) => {
            let order = match t.byte_order() {
                ::hdf5::datatype::ByteOrder::BigEndian => " (big-endian)",
                _ => "",
            };
            t.to_descriptor().map_or_else(|e| format!("unknown ({e})"), |d| format!("{d}{order}"))
        }
        Err(e) => format!("unknown ({e})"),
    }
}

fn describe_filter(filter: &Filter) -> String {
    match filter {
        Filter::Deflate(level) => format!("deflate (level {level})"),
        Filter::User(id, _) => format!("filter {id}"),
        other => format!("{other:?}").to_lowercase(),
    }
}

/// The attributes of `dataset` as JSON values; one that cannot be read says why instead. The
/// dimension-scale bookkeeping (`DIMENSION_LIST`, `DIMENSION_LABELS`) is left out: the axes show it.
fn attributes_of(dataset: &Dataset) -> BTreeMap<String, serde_json::Value> {
    let names = dataset.attr_names().unwrap_or_default();
    names
        .into_iter()
        .filter(|name| !name.starts_with("DIMENSION_"))
        .take(MAX_LISTED_ATTRIBUTES)
        .map(|name| {
            let value = match dataset.attr(&name).and_then(|a| raw::read_attr(&a)) {
                Ok(v) => v.to_json(),
                Err(e) => format!("unreadable: {e}").into(),
            };
            (name, value)
        })
        .collect()
}
