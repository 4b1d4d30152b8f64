//! The search for the axes of a volume dataset: companion datasets, else attributes of the dataset or its
//! group, else indices; then its survey coordinates and its live mask, with a note for each guess.

use std::ops::Range;
use std::path::Path;

use ::hdf5::types::TypeDescriptor;
use ::hdf5::{Dataset, File, Group, Location as H5Location, LocationType};

use crate::files::quoted;
use crate::hdf5::guard;
use crate::hdf5::raw::{self, AttrValue, H5Context, QUOTE};
use crate::hdf5::{
    domain_name, join, line_attr_names, parse_domain, parse_sample_unit, ATTR_COORD_ORIGIN, ATTR_COORD_PER_ILINE,
    ATTR_COORD_PER_XLINE, ATTR_DOMAIN, ATTR_SAMPLE_ORIGIN, ATTR_SAMPLE_STEP, ATTR_SAMPLE_UNIT, ATTR_UNITS, LIVE,
    SAMPLE_AXES,
};
use seis_core::error::{Error, Location, Result};
use seis_core::volume::{CoordTransform, Domain, LineAxis, SampleAxis};

use super::order::{AxisOrder, Companion};
use super::summary::AxisSource;

/// Values of an axis dataset read at a time.
const AXIS_BLOCK: usize = 1 << 16;

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
    /// The dataset that is the axis, if there is one: the path of its dimension scale, or the name of a
    /// companion dataset (`twt` or `depth`).
    companion: Option<String>,
    /// The domain attribute `sample_unit` implies, and the factor to the domain's unit.
    unit: Option<(Domain, f64)>,
    /// Whether the file said anything about the domain (time is assumed otherwise).
    stated: bool,
}

/// The search for the axes of one volume dataset.
pub(super) struct Scan<'a> {
    file: &'a Path,
    group: Group,
    group_path: &'a str,
    volume: &'a Dataset,
    volume_path: &'a str,
    file_len: u64,
    /// Which axis each dimension of the volume holds, and where the axes' values are.
    order: AxisOrder,
    pub(super) notes: Vec<String>,
}

impl<'a> Scan<'a> {
    pub(super) fn new(
        file: &'a Path,
        h5: &File,
        group_path: &'a str,
        volume: &'a Dataset,
        volume_path: &'a str,
        file_len: u64,
        order: AxisOrder,
    ) -> Result<Self> {
        let group = h5.group(group_path).doing(file, || format!("opening group {group_path}"))?;
        Ok(Scan { file, group, group_path, volume, volume_path, file_len, order, notes: Vec::new() })
    }

    /// The path of `name`: itself when absolute, else the dataset of that name beside the volume.
    fn path_of(&self, name: &str) -> String {
        if name.starts_with('/') {
            name.to_string()
        } else {
            join(self.group_path, name)
        }
    }

    /// Where the values of axis `axis` (0 inline, 1 crossline, 2 sample) are: the scale attached to its
    /// dimension, else the dataset `name` beside the volume; `None` for a dimension without values.
    fn axis_dataset(&self, axis: usize, name: &str) -> Option<String> {
        match &self.order.companions[axis] {
            Companion::Beside => Some(name.to_string()),
            Companion::Scale(path) => Some(path.clone()),
            Companion::NoValues => None,
        }
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
        guard::check_path(self.file, &self.group, name)?;
        if !self.group.link_exists(name) {
            return Ok(false);
        }
        Ok(matches!(self.group.loc_type_by_name(name), Ok(LocationType::Dataset)))
    }

    /// The companion dataset `name` beside the volume (or at `name` when it is absolute), checked to have
    /// the shape `shape`.
    fn companion(&self, name: &str, shape: &[usize], what: &str) -> Result<Option<(String, Dataset)>> {
        if !self.has_dataset(name)? {
            return Ok(None);
        }
        let path = self.path_of(name);
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
    pub(super) fn line_axis(&mut self, axis: &'static str, len: usize, what: &str) -> Result<(LineAxis, AxisSource)> {
        let index = usize::from(axis != crate::hdf5::ILINE);
        let companion = match self.axis_dataset(index, axis) {
            Some(name) => self.companion(&name, &[len], what)?,
            None => None,
        };
        let dataset = match companion {
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
            if self.order.companions[2] == Companion::Beside && self.has_dataset(domain.axis_name())? {
                present.push(domain);
            }
        }
        let by_name = match present[..] {
            [] => self.order.sample_domain,
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
        let companion = match &self.order.companions[2] {
            Companion::Beside => by_name.map(|d| d.axis_name().to_string()),
            Companion::Scale(path) => Some(path.clone()),
            Companion::NoValues => None,
        };
        let evidence = [
            (by_name, "the name of its axis dataset"),
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
    pub(super) fn sample_axis(&mut self, len: usize) -> Result<(SampleAxis, AxisSource)> {
        let SampleDomain { domain, companion, unit, stated } = self.sample_domain()?;
        let attr_factor = unit.map_or(1.0, |(_, f)| f);
        let companion = match companion {
            Some(name) => self.companion(&name, &[len], "the samples")?,
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
    pub(super) fn coords(&self) -> Result<Option<CoordTransform>> {
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
    /// Its dimension scales or labels may say `[xline][iline]`, as the volume's may.
    pub(super) fn live(&self, n_il: usize, n_xl: usize) -> Result<(Vec<bool>, Option<String>)> {
        let mut shape = [n_il, n_xl];
        let mut crossline_first = false;
        if self.has_dataset(LIVE)? {
            let path = join(self.group_path, LIVE);
            let ds = self.group.dataset(LIVE).doing(self.file, || format!("opening {path}"))?;
            let stored = ds.shape();
            if let Ok(stored) = <[usize; 2]>::try_from(stored.as_slice()) {
                let order = super::order::axis_order(self.file, &ds, &path, &stored)?;
                crossline_first = order.axes == [1, 0];
                if crossline_first {
                    shape = [n_xl, n_il];
                }
            }
        }
        let Some((path, ds)) = self.companion(LIVE, &shape, "a flag per trace")? else {
            return Ok((vec![true; n_il * n_xl], None));
        };
        let flags = match ds.dtype().and_then(|t| t.to_descriptor()) {
            Ok(TypeDescriptor::Boolean) => ds.read_raw::<bool>(),
            Ok(TypeDescriptor::Integer(_) | TypeDescriptor::Unsigned(_)) => {
                ds.read_raw::<i64>().map(|v| v.into_iter().map(|x| x != 0).collect())
            }
            _ => return Err(self.fail(format!("{path} must hold integers or booleans"))),
        };
        let flags = flags.doing(self.file, || format!("reading {path}"))?;
        if crossline_first {
            let by_inline = (0..n_il * n_xl).map(|t| flags[(t % n_xl) * n_il + t / n_xl]).collect();
            return Ok((by_inline, Some(path)));
        }
        Ok((flags, Some(path)))
    }
}
