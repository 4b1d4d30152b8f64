//! Velocity as users hold it, turned into the model the engines use.
//!
//! A job gives the velocity in one of the forms a processing contractor or an interpretation system
//! delivers: a constant, a function of time or depth (in the job or a text file), functions at several
//! locations, or a SEG-Y / HDF5 cube on its own grid; as interval, RMS or average velocities, in m/s, km/s
//! or ft/s, against two-way time or depth in m or ft.
//!
//! What the crate offers:
//! - [`VelocitySpec`], the job's `[velocity]` table, with the words of its keys ([`Kind`], [`Velocities`],
//!   [`FunctionSpec`], [`ScanStep`], the units [`VelocityUnit`], [`VelocityType`], [`DepthUnit`] and
//!   [`VerticalDomain`], and for cubes and functions at locations [`Interpolation`], [`Locate`],
//!   [`Outside`], [`CardFormat`], [`CdpLookup`]); [`VelocitySpec::load`] reads what it names and checks
//!   it, every error naming its key and file, into a [`Loaded`] model;
//! - [`VelocityModel`]: true interval velocities in m/s against depth in m, the same for every form
//!   (a constant, a [`VelocityTable`] of v(z), a [`VelocityGrid`] of v(x, y, z)), so that the plan and the
//!   engines never see how the model was given, and its [`Provenance`], for `validate` and the log;
//! - [`dix_rows`] and [`dix_lines`], the Dix table `validate` prints of a table; [`MAX_SCAN_MEMBERS`],
//!   the most members of a velocity scan; [`check_sample_interval`], which refuses a seismic sample
//!   interval no record has.
//!
//! Inside, the modules follow the data: `spec` (the table, every rule between its keys checked before a
//! file is opened); the readers `text` (columns of picks), `cards` (velocity cards) and `cube` (SEG-Y and
//! HDF5, with the domain override); `units`, `convert` and `dix` (every function to interval velocity in
//! m/s against depth in m: Dix for RMS velocities, the layers between the picks for average ones, the
//! integral of `v dt / 2` for time); `lateral` (cubes cut and mixed onto the seismic's traces, functions
//! at locations interpolated between them); `sanity` (values a rock cannot have, and times the record
//! cannot hold, refused with the unit they were probably meant in) and `columns` (a text file's column
//! names that contradict the job, and columns that look swapped); `model` and `held` (the model, and what
//! holding its deepest velocity below the given depths does).

mod cards;
mod columns;
mod convert;
mod cube;
mod dix;
mod held;
mod lateral;
mod model;
mod sanity;
mod spec;
mod text;
mod units;

use std::path::Path;

pub use cards::CdpLookup;
pub use dix::{dix_lines, dix_rows, DixRow};
pub use lateral::{Locate, Outside};
pub use model::{Interpolation, SlownessSummary, VelocityGrid, VelocityModel, VelocityTable};
pub use sanity::check_sample_interval;
pub use spec::{FunctionSpec, Kind, ScanStep, Velocities, VelocitySpec, MAX_SCAN_MEMBERS};
pub use units::{CardFormat, DepthUnit, VelocityType, VelocityUnit, VerticalDomain};

use convert::{interval_in_depth, Converted, Picks};
use seis_core::cancel::CancelToken;
use seis_core::error::{Error, Result};
use seis_core::volume::{Domain, Geometry, SampleAxis};

/// Where a model came from and what was done to it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Provenance {
    /// One line per step: the source, the conversions, the regridding.
    pub steps: Vec<String>,
    /// Depth (m) down to which every trace of the model is given; below it, its deepest velocity holds.
    /// `None` for a constant.
    pub given_to: Option<f64>,
    /// What a run should warn of: traces that hold a cube's edge (`velocity.outside = "hold"`).
    pub warnings: Vec<String>,
}

impl Provenance {
    /// A warning when the image reaches below `deepest` m, the model does not, and holding `model`'s deepest
    /// velocity there moves reflectors by more than the image's depth step `dz` m (the `held` module says why).
    pub fn shallow_note(&self, model: &VelocityModel, deepest: f64, dz: f64) -> Option<String> {
        let held = held::HeldVelocity::new(self.given_to?, deepest, |z| model.reference_velocity(z))?;
        held.matters(dz).then(|| held.note())
    }
}

/// A model and its provenance.
pub struct Loaded {
    pub model: VelocityModel,
    pub provenance: Provenance,
}

impl VelocitySpec {
    /// Build the model for the seismic grid `seismic`, with bins `bin` (m) and the image depth step `dz`
    /// (m): files are read, every form converted to interval velocity in depth, and values checked against
    /// `velocity.range`. Errors name the key (and the file) they concern.
    pub fn load(&self, seismic: &Geometry, bin: [f64; 2], dz: f64) -> Result<Loaded> {
        self.load_with(seismic, bin, dz, None)
    }

    /// [`VelocitySpec::load`], with `cdps` to place velocity cards by the seismic's CDP headers.
    pub fn load_with(&self, seismic: &Geometry, bin: [f64; 2], dz: f64, cdps: Option<CdpLookup>) -> Result<Loaded> {
        match self.kind {
            Kind::Constant => self.load_constant(),
            Kind::Table => {
                let (function, steps) = match &self.path {
                    None => {
                        if let Some(times) = &self.times {
                            self.check_record(&[times], seismic).map_err(|(_, i, m)| {
                                let unit = self.time_unit.unwrap_or_default().name();
                                let at = format!("velocity.times, pick {} ({} {unit})", i + 1, times[i]);
                                Error::at_key("velocity.time_unit", format!("{at}: {m}")).or_key("velocity.times")
                            })?;
                        }
                        self.inline_function(
                            "velocity",
                            self.depths.as_ref(),
                            self.times.as_ref(),
                            self.velocities.as_deref(),
                        )?
                    }
                    Some(path) => self.text_table(path, seismic)?,
                };
                let provenance = Provenance {
                    steps: steps.into_iter().chain([describe_table(&function)]).collect(),
                    given_to: Some(function.given_to),
                    warnings: Vec::new(),
                };
                Ok(Loaded { model: VelocityModel::Table(function.table), provenance })
            }
            Kind::Functions => self.load_functions(seismic, bin, dz, cdps),
            Kind::File => {
                let path = self.path.as_ref().expect("checked: a file has a path");
                let reader = seis_io::open(path, &self.input).map_err(|e| e.within("velocity.input"))?;
                self.require_segy_domain(path, reader.as_ref())?;
                let how = cube::CubeReading {
                    domain: self.domain,
                    reading: self.reading(VerticalDomain::Depth),
                    interpolation: self.interpolation.unwrap_or_default(),
                    locate: self.locate.unwrap_or_default(),
                    outside: self.outside.unwrap_or_default(),
                    range: self.range,
                    dz,
                    depth_cap: depth_cap(seismic, self.range, dz),
                };
                let c = cube::read_cube(reader.as_ref(), seismic, &how)?;
                let mut steps = c.steps;
                steps.push(c.model.describe());
                let warnings = c.held.into_iter().collect();
                Ok(Loaded { model: c.model, provenance: Provenance { steps, given_to: Some(c.given_to), warnings } })
            }
        }
    }

    fn load_constant(&self) -> Result<Loaded> {
        let list = &self.velocity.as_ref().expect("checked: a constant has a velocity").0;
        for &v in list {
            sanity::check_value(v * self.unit.factor(), self.range, self.unit)
                .map_err(|m| Error::at_key("velocity.velocity", m).or_key("velocity.unit"))?;
        }
        let v = self.constant_value().expect("checked: not empty");
        let model = VelocityModel::constant(v)?;
        let given = if self.unit == VelocityUnit::MetresPerSecond {
            String::new()
        } else {
            format!(" (given as {} {})", list[0], self.unit.name())
        };
        let provenance = Provenance {
            steps: vec![format!("constant {} m/s{given}, from the job file", seis_core::number::number(v))],
            given_to: None,
            warnings: Vec::new(),
        };
        Ok(Loaded { model, provenance })
    }

    /// A function given in the job at `key` (`velocity`, `velocity.functions.3`).
    fn inline_function(
        &self,
        key: &str,
        depths: Option<&Vec<f64>>,
        times: Option<&Vec<f64>>,
        velocities: Option<&[f64]>,
    ) -> Result<(Converted, Vec<String>)> {
        let (at, axis) = match (depths, times) {
            (Some(d), _) => (d, "depths"),
            (None, Some(t)) => (t, "times"),
            (None, None) => unreachable!("checked: a function has times or depths"),
        };
        let velocities = velocities.expect("checked: a function has velocities");
        let domain = if axis == "times" { VerticalDomain::Time } else { VerticalDomain::Depth };
        let reading = self.reading(domain);
        let unit = reading.vertical_unit();
        let name = |i: usize| format!("pick {} ({} {unit})", i + 1, at[i]);
        let blame = |m: String| Error::at_key(format!("{key}.velocities"), m).or_key(format!("{key}.{axis}"));
        let converted = self.convert(at, velocities, &reading, &name).map_err(blame)?;
        let what = format!("{} of {} picks from the job file ({key}.{axis})", reading.describe(), at.len());
        Ok((converted, vec![what]))
    }

    /// A two-column text file.
    fn text_table(&self, path: &Path, seismic: &Geometry) -> Result<(Converted, Vec<String>)> {
        let blame = |m: String| Error::at_key("velocity.path", m);
        let rows = self.read_text(path, 2, "time or depth, velocity")?;
        let at: Vec<f64> = rows.iter().map(|r| r.values[0]).collect();
        let velocities: Vec<f64> = rows.iter().map(|r| r.values[1]).collect();
        let reading = self.reading(self.domain.expect("checked: a text file has a domain"));
        let unit = reading.vertical_unit();
        columns::check_swapped(&at, &velocities, &reading, self.range)
            .map_err(|m| blame(format!("{}: {}: {m}", path.display(), lines(&rows))))?;
        if reading.domain == VerticalDomain::Time {
            self.check_record(&[&at], seismic).map_err(|(_, i, m)| {
                let at = format!("{}: line {} ({} {unit})", path.display(), rows[i].line, at[i]);
                Error::at_key("velocity.time_unit", format!("{at}: {m}")).or_key("velocity.path")
            })?;
        }
        let name = |i: usize| format!("line {} ({} {unit})", rows[i].line, at[i]);
        let converted = self
            .convert(&at, &velocities, &reading, &name)
            .map_err(|m| blame(format!("{}: {m}", path.display())).or_key("velocity.unit"))?;
        let what = format!("{} of {} picks from {}", reading.describe(), rows.len(), path.display());
        Ok((converted, vec![what]))
    }

    /// The rows of a text file of `count` columns (`what` names them), refused where its column names
    /// contradict the job ([`columns::check_header`]).
    fn read_text(&self, path: &Path, count: usize, what: &str) -> Result<Vec<text::Row>> {
        let (rows, header) = text::read_table(path, count, what).map_err(|m| Error::at_key("velocity.path", m))?;
        let reading = self.reading(self.domain.expect("checked: a text file has a domain"));
        if let Some(header) = header {
            columns::check_header(&header, count, &reading, what).map_err(|c| {
                Error::at_key(c.key, format!("{}: {}", path.display(), c.message)).or_key("velocity.path")
            })?;
        }
        Ok(rows)
    }

    /// Refuse two-way times that do not fit the seismic's record in `velocity.time_unit`
    /// ([`sanity::check_times`]), judged by the deepest pick of the functions that have more than one.
    /// The error gives the function and the pick at fault.
    fn check_record(
        &self,
        functions: &[&[f64]],
        seismic: &Geometry,
    ) -> std::result::Result<(), (usize, usize, String)> {
        if seismic.samples.domain != Domain::Time {
            return Ok(());
        }
        let deepest = functions
            .iter()
            .enumerate()
            .filter(|(_, picks)| picks.len() > 1)
            .flat_map(|(f, picks)| picks.iter().enumerate().map(move |(i, &t)| (f, i, t)))
            .reduce(|deepest, pick| if pick.2 > deepest.2 { pick } else { deepest });
        let Some((f, i, t)) = deepest else { return Ok(()) };
        let record_ms = seismic.samples.last().max(seismic.samples.step);
        sanity::check_times(t, self.time_unit.unwrap_or_default(), record_ms).map_err(|m| (f, i, m))
    }

    /// A SEG-Y cube cannot say whether its trace axis is time or depth (other software writes depth into
    /// the time fields): unless it carries seisimage's depth marker, `velocity.domain` must say.
    fn require_segy_domain(&self, path: &Path, reader: &dyn seis_core::volume::VolumeReader) -> Result<()> {
        let samples = reader.geometry().samples;
        if self.domain.is_some()
            || samples.domain != Domain::Time
            || !matches!(
                seis_io::detect_format(path, self.input.format)?,
                seis_io::FileFormat::Segy | seis_io::FileFormat::Su
            )
        {
            return Ok(());
        }
        Err(Error::at_key(
            "velocity.domain",
            format!(
                "{} is a SEG-Y cube, and SEG-Y cannot say whether its trace axis is two-way time or depth (Petrel \
                 and other software write depth into the time fields): set velocity.domain = \"time\" to read its \
                 samples as every {} ms of two-way time, or \"depth\" to read them as every {} m of depth (ft with \
                 velocity.depth_unit = \"ft\")",
                path.display(),
                samples.step,
                samples.step
            ),
        ))
    }

    /// Check the velocities as given, then convert: the units applied, then to interval velocity in depth.
    fn convert(
        &self,
        at: &[f64],
        velocities: &[f64],
        reading: &units::Reading,
        name: &dyn Fn(usize) -> String,
    ) -> std::result::Result<Converted, String> {
        for (i, &v) in velocities.iter().enumerate() {
            sanity::check_value(v * self.unit.factor(), self.range, self.unit)
                .map_err(|m| format!("{}: {m}", name(i)))?;
        }
        let at_si: Vec<f64> = at.iter().map(|&a| reading.vertical_si(a)).collect();
        let v_si: Vec<f64> = velocities.iter().map(|&v| v * self.unit.factor()).collect();
        let picks = Picks { at: &at_si, velocity: &v_si };
        interval_in_depth(&picks, reading, self.interpolation.unwrap_or_default(), self.range, name)
    }

    /// Functions at several locations: each converted, then interpolated onto every seismic trace and
    /// sampled every `dz` m (one location is a v(z) table).
    fn load_functions(&self, seismic: &Geometry, bin: [f64; 2], dz: f64, cdps: Option<CdpLookup>) -> Result<Loaded> {
        // Over 100 lines: the checks of the locations against the survey and the conversion of each function
        // share the located functions built at the start.
        let cancel = CancelToken::process();
        let mut steps = Vec::new();
        let mut functions: Vec<((i64, i64), Converted)> = Vec::new();
        match (&self.path, self.cards()) {
            (Some(path), Some(format)) => {
                (functions, steps) = self.card_functions(path, format, seismic, cdps)?;
            }
            (None, _) => {
                check_function_count(self.functions.len(), seismic)
                    .map_err(|m| Error::at_key("velocity.functions", m))?;
                let times: Vec<&[f64]> =
                    self.functions.iter().map(|f| f.times.as_deref().unwrap_or_default()).collect();
                self.check_record(&times, seismic).map_err(|(f, i, m)| {
                    let key = format!("velocity.functions.{f}.times");
                    let unit = self.time_unit.unwrap_or_default().name();
                    let at = format!("{key}, pick {} ({} {unit})", i + 1, times[f][i]);
                    Error::at_key("velocity.time_unit", format!("{at}: {m}")).or_key(key)
                })?;
                for (i, f) in self.functions.iter().enumerate() {
                    let key = format!("velocity.functions.{i}");
                    let (c, _) =
                        self.inline_function(&key, f.depths.as_ref(), f.times.as_ref(), Some(&f.velocities))?;
                    functions.push(((f.iline, f.xline), c));
                }
                let reading = self.reading(if self.functions[0].times.is_some() {
                    VerticalDomain::Time
                } else {
                    VerticalDomain::Depth
                });
                steps.push(format!("{} at {} locations from the job file", reading.describe(), functions.len()));
            }
            (Some(path), None) => {
                let blame = |m: String| Error::at_key("velocity.path", m);
                let rows = self.read_text(path, 4, "inline, crossline, time or depth, velocity")?;
                let located = text::group_by_location(rows).map_err(|m| blame(format!("{}: {m}", path.display())))?;
                check_function_count(located.len(), seismic).map_err(|m| blame(format!("{}: {m}", path.display())))?;
                let reading = self.reading(self.domain.expect("checked: a text file has a domain"));
                let unit = reading.vertical_unit();
                let picks: Vec<Vec<f64>> =
                    located.iter().map(|l| l.rows.iter().map(|r| r.values[0]).collect()).collect();
                for (l, at) in located.iter().zip(&picks) {
                    let v: Vec<f64> = l.rows.iter().map(|r| r.values[1]).collect();
                    columns::check_swapped(at, &v, &reading, self.range).map_err(|m| {
                        let at = format!("inline {}, crossline {}, {}", l.iline, l.xline, lines(&l.rows));
                        blame(format!("{}: {at}: {m}", path.display()))
                    })?;
                }
                if reading.domain == VerticalDomain::Time {
                    let functions: Vec<&[f64]> = picks.iter().map(Vec::as_slice).collect();
                    self.check_record(&functions, seismic).map_err(|(f, i, m)| {
                        let (l, t) = (&located[f], picks[f][i]);
                        let at =
                            format!("line {} (inline {}, crossline {}, {t} {unit})", l.rows[i].line, l.iline, l.xline);
                        Error::at_key("velocity.time_unit", format!("{}: {at}: {m}", path.display()))
                            .or_key("velocity.path")
                    })?;
                }
                for l in &located {
                    cancel.check()?;
                    let at: Vec<f64> = l.rows.iter().map(|r| r.values[0]).collect();
                    let v: Vec<f64> = l.rows.iter().map(|r| r.values[1]).collect();
                    let name = |i: usize| {
                        format!("line {} (inline {}, crossline {}, {} {unit})", l.rows[i].line, l.iline, l.xline, at[i])
                    };
                    let c = self
                        .convert(&at, &v, &reading, &name)
                        .map_err(|m| blame(format!("{}: {m}", path.display())).or_key("velocity.unit"))?;
                    functions.push(((l.iline, l.xline), c));
                }
                steps.push(format!("{} at {} locations from {}", reading.describe(), functions.len(), path.display()));
            }
        }
        let given_to = functions.iter().map(|(_, c)| c.given_to).fold(f64::INFINITY, f64::min);
        if functions.len() == 1 {
            let (_, c) = functions.pop().expect("one function");
            steps.push(describe_table(&c));
            let provenance = Provenance { steps, given_to: Some(given_to), warnings: Vec::new() };
            return Ok(Loaded { model: VelocityModel::Table(c.table), provenance });
        }
        let locations: Vec<(i64, i64)> = functions.iter().map(|(l, _)| *l).collect();
        let deepest =
            functions.iter().map(|(_, c)| c.given_to).fold(0.0, f64::max).min(depth_cap(seismic, self.range, dz));
        let levels = ((deepest / dz).ceil() as usize + 1).max(2);
        let axis = SampleAxis { origin: 0.0, step: dz, len: levels, domain: Domain::Depth };
        // Each function sampled once on the depth axis, then mixed per trace.
        let mut sampled: Vec<Vec<f64>> = Vec::with_capacity(functions.len());
        for (_, c) in &functions {
            cancel.check()?;
            sampled.push((0..levels).map(|k| c.table.at(axis.value(k))).collect());
        }
        let geometry = Geometry { samples: axis, ..seismic.clone() };
        let name = "the interpolated functions";
        let (grid, how) = match lateral::grid_taps(&locations, seismic) {
            Some(taps) => {
                (VelocityGrid::mixed(geometry, model::GridMix::new(&sampled, taps), name)?, lateral::GRID_MIX)
            }
            None => {
                let (mixes, how) = lateral::function_weights(&locations, seismic, bin, cancel)?;
                let sampled = &sampled;
                let grid = VelocityGrid::from_fn(geometry, name, |t| {
                    let mix = &mixes[t];
                    move |k| mix.iter().map(|&(f, w)| w * sampled[f][k]).sum::<f64>() as f32
                })?;
                (grid, how)
            }
        };
        steps.push(format!(
            "converted to interval velocity in depth and interpolated onto the seismic's {} traces: {how}; sampled \
             every {dz} m down to {} m",
            seismic.n_traces(),
            axis.last()
        ));
        let model = VelocityModel::Grid(grid);
        steps.push(model.describe());
        Ok(Loaded { model, provenance: Provenance { steps, given_to: Some(given_to), warnings: Vec::new() } })
    }
}

/// Refuse more functions than the seismic has traces: each function is sampled on the model's depth
/// axis, so their number sizes the model as the traces do, and a survey is not given more velocity
/// functions than it has traces.
fn check_function_count(functions: usize, seismic: &Geometry) -> std::result::Result<(), String> {
    let traces = seismic.n_traces();
    if functions <= traces {
        return Ok(());
    }
    Err(format!(
        "{functions} velocity functions (locations), more than the seismic's {traces} traces: give at most one \
         function per trace, or the velocity as a cube (velocity.kind = \"file\")"
    ))
}

/// The deepest depth (m) a sampled model needs: where the last sample of the seismic can reach at the
/// fastest plausible velocity. A deeper image holds the model's last sample there, as below any model;
/// the bound keeps a file's absurd depths from sizing the model.
pub(crate) fn depth_cap(seismic: &Geometry, range: [f64; 2], dz: f64) -> f64 {
    range[1] * seismic.samples.last().max(0.0) / 2000.0 + 2.0 * dz
}

/// "lines 4..9" of a function's rows, for messages.
fn lines(rows: &[text::Row]) -> String {
    match rows {
        [one] => format!("line {}", one.line),
        _ => format!("lines {}..{}", rows[0].line, rows[rows.len() - 1].line),
    }
}

fn describe_table(c: &Converted) -> String {
    let (lo, hi) = c.table.range();
    format!(
        "interval velocity in depth: {} nodes ({} between them), {lo:.1}..{hi:.1} m/s, given down to {:.1} m",
        c.table.depths().len(),
        format!("{:?}", c.table.interpolation()).to_lowercase(),
        c.given_to
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use seis_core::volume::LineAxis;

    fn seismic() -> Geometry {
        let t = SampleAxis { origin: 0.0, step: 4.0, len: 250, domain: Domain::Time };
        Geometry::regular(LineAxis::new(100, 1, 21), LineAxis::new(200, 1, 11), t)
    }

    fn spec(text: &str) -> VelocitySpec {
        #[derive(serde::Deserialize)]
        struct T {
            velocity: VelocitySpec,
        }
        let s = toml::from_str::<T>(&format!("[velocity]\n{text}")).unwrap().velocity;
        s.check().unwrap();
        s
    }

    fn load(text: &str) -> Result<Loaded> {
        spec(text).load(&seismic(), [12.5, 12.5], 5.0)
    }

    #[test]
    fn a_velocity_in_km_per_s_typed_as_m_per_s_is_refused_with_a_hint() {
        let e = load("kind = \"constant\"\nvelocity = 1.8").err().unwrap();
        let Error::Setting { key, also, message } = e else { panic!("not a setting error") };
        assert_eq!((key.as_str(), also), ("velocity.velocity", vec!["velocity.unit".to_string()]));
        assert!(message.contains("velocity.unit = \"km/s\""), "{message}");
        let m = load("kind = \"constant\"\nvelocity = 1.8\nunit = \"km/s\"").unwrap();
        assert_eq!(m.model, VelocityModel::Constant(1800.0));
        let e = load("kind = \"table\"\ndepths = [0, 100]\nvelocities = [6000, 9500]").err().unwrap().to_string();
        assert!(e.contains("pick 2 (100 m)") && e.contains("ft/s"), "{e}");
    }

    #[test]
    fn rms_in_time_from_the_job_becomes_layers_in_depth() {
        // 1500 m/s for 400 ms (300 m), then 2500 m/s for 400 ms (500 m): RMS at 800 ms = sqrt((1500² + 2500²)/2).
        let vrms = ((1500f64.powi(2) + 2500f64.powi(2)) / 2.0).sqrt();
        let m = load(&format!("kind = \"table\"\ntimes = [400, 800]\nvelocities = [1500, {vrms}]\ntype = \"rms\""))
            .unwrap();
        assert_eq!(m.model.reference_velocity(299.0), 1500.0);
        assert!((m.model.reference_velocity(301.0) - 2500.0).abs() < 1e-6);
        assert!((m.provenance.given_to.unwrap() - 800.0).abs() < 1e-6);
        let note = |deepest| m.provenance.shallow_note(&m.model, deepest, 5.0);
        assert!(note(1000.0).unwrap().contains("given down to 800.0 m"));
        assert!(note(810.0).is_none());
        assert!(note(700.0).is_none());
    }

    #[test]
    fn absurd_depths_in_a_file_do_not_size_the_model() {
        // A pick at a billion metres: the model is sampled no deeper than the record can reach at the
        // fastest plausible velocity (8000 m/s × 0.996 s / 2 + 2 dz = 3994 m: 800 levels of 5 m).
        let mut text = String::from("kind = \"functions\"\n");
        for (il, xl) in [(100, 200), (120, 210)] {
            text += &format!(
                "[[velocity.functions]]\niline = {il}\nxline = {xl}\ndepths = [0, 1e9]\nvelocities = [1500, 1600]\n"
            );
        }
        let m = load(&text).unwrap();
        assert_eq!(m.model.n_values(), 21 * 11 * 800);
    }

    /// Each function is sampled on the model's depth axis: more of them than traces would size the model
    /// beyond the survey's (a 2 MB file of 100 000 locations took 1.6 GB).
    #[test]
    fn more_functions_than_traces_are_refused() {
        let functions = |n: usize| {
            let mut text = String::from("kind = \"functions\"\n");
            for k in 0..n {
                text += &format!(
                    "[[velocity.functions]]\niline = {}\nxline = {}\ndepths = [0, 1000]\nvelocities = [1500, 1600]\n",
                    100 + k / 11,
                    200 + k % 11 + 20 * (k / 231)
                );
            }
            text
        };
        assert_eq!(load(&functions(21 * 11)).unwrap().model.n_values() % (21 * 11), 0);
        let Error::Setting { key, message, .. } = load(&functions(21 * 11 + 1)).err().unwrap() else {
            panic!("not a setting error")
        };
        assert_eq!(key, "velocity.functions");
        assert!(
            message.contains("232 velocity functions (locations), more than the seismic's 231 traces"),
            "{message}"
        );
    }

    #[test]
    fn functions_on_a_grid_of_locations_interpolate_a_lateral_gradient_exactly() {
        // v = 1500 + 10 (il − 100) + 20 (xl − 200) m/s at every depth, given at the four corners.
        let v = |il: i64, xl: i64| 1500.0 + 10.0 * (il - 100) as f64 + 20.0 * (xl - 200) as f64;
        let mut text = String::from("kind = \"functions\"\n");
        for (il, xl) in [(100, 200), (120, 200), (100, 210), (120, 210)] {
            text += &format!(
                "[[velocity.functions]]\niline = {il}\nxline = {xl}\ndepths = [0, 1000]\nvelocities = [{0}, {0}]\n",
                v(il, xl)
            );
        }
        let m = load(&text).unwrap();
        assert!(m.model.varies_laterally());
        for (i, j) in [(0, 0), (5, 8), (13, 3), (20, 10)] {
            let expect = v(100 + i as i64, 200 + j as i64);
            let got = m.model.trace_velocity(i * 11 + j, 500.0);
            assert!((got - expect).abs() < 1e-3, "({i}, {j}): {got} vs {expect}");
        }
    }
}
