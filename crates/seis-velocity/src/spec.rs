//! The job's `[velocity]` table: which form the model comes in, and what its numbers are.
//!
//! One flat table rather than one per form, so that every key keeps its line and column in the job file
//! (serde reads a tagged enum as a whole) and a key that the chosen `kind` does not use is refused by name.
//! Every rule between keys is checked here, before any file is opened ([`VelocitySpec::check`]).

use std::path::PathBuf;

use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::{Deserialize, Serialize, Serializer};

use super::lateral::{Locate, Outside};
use super::model::Interpolation;
use super::sanity::{check_range, DEFAULT_RANGE};
use super::units::CardFormat;
use super::units::{DepthUnit, Reading, TimeUnit, VelocityType, VelocityUnit, VerticalDomain};
use seis_core::error::{Error, Result};
use seis_io::InputOptions;

/// The form of the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// One velocity everywhere (`velocity`), or a list of them to scan.
    Constant,
    /// One function of time or depth: `times` or `depths` with `velocities`, or a two-column text file.
    Table,
    /// Functions at several (inline, crossline) locations: `[[velocity.functions]]`, or a four-column text
    /// file; interpolated laterally into a 3-D model.
    Functions,
    /// A cube: SEG-Y or HDF5.
    File,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Constant => "constant",
            Kind::Table => "table",
            Kind::Functions => "functions",
            Kind::File => "file",
        }
    }
}

/// `[velocity]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VelocitySpec {
    pub kind: Kind,
    /// `constant`: the velocity, or a list of velocities to scan.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub velocity: Option<Velocities>,
    /// `table`: depths of the picks (in `depth_unit`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub depths: Option<Vec<f64>>,
    /// `table`: two-way times of the picks (ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub times: Option<Vec<f64>>,
    /// `table`: the velocity of each pick.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub velocities: Option<Vec<f64>>,
    /// `table` and `functions`: a text file; `file`: a SEG-Y or HDF5 cube.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<PathBuf>,
    /// `functions`: one function per location.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub functions: Vec<FunctionSpec>,
    /// Interval, RMS or average velocity: interval unless given, RMS for velocity cards
    /// ([`VelocitySpec::velocity_type`]).
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub velocity_type: Option<VelocityType>,
    /// m/s (default), km/s or ft/s.
    #[serde(default)]
    pub unit: VelocityUnit,
    /// Whether the picks or samples are two-way time (ms) or depth: required for text files; for a cube,
    /// instead of what its headers say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domain: Option<VerticalDomain>,
    /// m (default) or ft, for depths.
    #[serde(default)]
    pub depth_unit: DepthUnit,
    /// ms (default), s or us, for the two-way times of picks in the job or a text file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_unit: Option<TimeUnit>,
    /// Interval velocities between picks: linear (default) or step. RMS and average velocities always give
    /// layers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interpolation: Option<Interpolation>,
    /// `file`: lay the cube on the seismic by line numbers (default) or map coordinates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub locate: Option<Locate>,
    /// `file`: seismic traces outside the cube are refused (default), or hold its nearest edge (`hold`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outside: Option<Outside>,
    /// Plausible interval velocities, m/s: others are refused.
    #[serde(default = "default_range")]
    pub range: [f64; 2],
    /// A velocity scan: migrate once per factor, each velocity of the model multiplied by it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scale: Vec<f64>,
    /// `file`: how to read it (the reading keys of `[input]`).
    #[serde(default, skip_serializing_if = "is_default")]
    pub input: InputOptions,
    /// `functions` from a file: columns of numbers (default), or HANDVEL or VELF cards.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<CardFormat>,
    /// Cards: the CDP number at an inline and crossline, `[cdp, iline, xline]`, instead of the seismic's
    /// CDP headers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cdp_origin: Option<[i64; 3]>,
    /// Cards with `cdp_origin`: how much the CDP number grows from one inline of the seismic to the next and
    /// from one crossline to the next.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cdp_step: Option<[i64; 2]>,
}

/// The most members a velocity scan may have: a scan multiplies the files a job writes and the images it
/// holds by its members, and its panels draw them side by side; a finer scan is a second job.
pub const MAX_SCAN_MEMBERS: usize = 100;

fn default_range() -> [f64; 2] {
    DEFAULT_RANGE
}

fn is_default(o: &InputOptions) -> bool {
    *o == InputOptions::default()
}

/// `[[velocity.functions]]`: the function at one location.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FunctionSpec {
    pub iline: i64,
    pub xline: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub depths: Option<Vec<f64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub times: Option<Vec<f64>>,
    pub velocities: Vec<f64>,
}

/// One velocity, or a list of them (`velocity = 2000.0` or `velocity = [1800.0, 1900.0, 2000.0]`).
#[derive(Clone, Debug, PartialEq)]
pub struct Velocities(pub Vec<f64>);

impl Serialize for Velocities {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        match self.0.as_slice() {
            [one] => s.serialize_f64(*one),
            many => many.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for Velocities {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Velocities;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a velocity, or a list of velocities to scan")
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> std::result::Result<Velocities, E> {
                Ok(Velocities(vec![v]))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> std::result::Result<Velocities, E> {
                Ok(Velocities(vec![v as f64]))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> std::result::Result<Velocities, E> {
                Ok(Velocities(vec![v as f64]))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<Velocities, A::Error> {
                let mut out = Vec::new();
                while let Some(v) = seq.next_element::<f64>()? {
                    out.push(v);
                }
                Ok(Velocities(out))
            }
        }
        d.deserialize_any(V)
    }
}

/// One migration of a velocity scan.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ScanStep {
    /// Every velocity of the model times this.
    Scale(f64),
    /// This constant velocity, m/s.
    Constant(f64),
}

impl ScanStep {
    /// What names the products of this step: `_v095` for 95 % of the model, `_v1800` for 1800 m/s, with
    /// the digits a value needs after `p` for its decimal point: `_v097p5` for 97.5 %, `_v1800p5`.
    pub fn suffix(self) -> String {
        match self {
            ScanStep::Scale(f) => format!("_v{}", decimal_name(f * 100.0, 3)),
            ScanStep::Constant(v) => format!("_v{}", decimal_name(v, 1)),
        }
    }

    /// A label for pictures and logs: "scale 0.95", "1800 m/s" (plain ASCII, as the pictures' font has).
    pub fn label(self) -> String {
        match self {
            ScanStep::Scale(f) => format!("scale {}", seis_core::number::number(f)),
            ScanStep::Constant(v) => format!("{} m/s", seis_core::number::number(v)),
        }
    }
}

/// `value` in the digits a file name may hold: its whole part padded with zeros to `width` digits, then `p`
/// and its decimals when it has any. Values are taken to six decimals, which keeps what a job writes
/// (1.15 · 100 is 114.99999999999999 in binary) and drops the noise of unit conversions (1.8 km/s is
/// 1800.0000000000002 m/s).
fn decimal_name(value: f64, width: usize) -> String {
    let text = format!("{value:.6}");
    let (whole, decimals) = text.split_once('.').unwrap_or((&text, ""));
    let decimals = decimals.trim_end_matches('0');
    let whole = format!("{whole:0>width$}");
    if decimals.is_empty() {
        whole
    } else {
        format!("{whole}p{decimals}")
    }
}

impl VelocitySpec {
    /// The type of the velocities: as given, else RMS for velocity cards (their convention) and interval
    /// for every other form.
    pub fn velocity_type(&self) -> VelocityType {
        self.velocity_type.unwrap_or(if self.cards().is_some() { VelocityType::Rms } else { VelocityType::Interval })
    }

    /// How the numbers are to be read; `domain` is the vertical domain once known (from `times` or
    /// `depths`, `velocity.domain`, or the file).
    pub fn reading(&self, domain: VerticalDomain) -> Reading {
        Reading {
            kind: self.velocity_type(),
            unit: self.unit,
            domain,
            depth_unit: self.depth_unit,
            time_unit: self.time_unit.unwrap_or_default(),
        }
    }

    /// A velocity as given, in m/s: to the micrometre per second, so that 1.8 km/s is 1800 m/s, not
    /// 1800.0000000000002.
    fn metres_per_second(&self, v: f64) -> f64 {
        (v * self.unit.factor() * 1e6).round() / 1e6
    }

    /// The velocity of a constant model (the first of a list), m/s.
    pub fn constant_value(&self) -> Option<f64> {
        self.velocity.as_ref().and_then(|v| v.0.first()).map(|&v| self.metres_per_second(v))
    }

    /// The migrations of a velocity scan, in order; empty when the job migrates once.
    pub fn scan(&self) -> Vec<ScanStep> {
        match &self.velocity {
            Some(Velocities(list)) if list.len() > 1 => {
                list.iter().map(|&v| ScanStep::Constant(self.metres_per_second(v))).collect()
            }
            _ => self.scale.iter().map(|&f| ScanStep::Scale(f)).collect(),
        }
    }

    /// Every rule between the keys, before any file is read. Errors name the key at fault.
    pub fn check(&self) -> Result<()> {
        // Over 100 lines: one check after another of the [velocity] keys, in the order a job file lists
        // them; each is a few lines and none depends on the next.
        check_range(self.range).map_err(|m| Error::at_key("velocity.range", m))?;
        let kind = self.kind.name();
        let unused = |key: &str, what: &str| {
            Error::at_key(format!("velocity.{key}"), format!("kind = \"{kind}\" does not use {key}{what}"))
        };
        let needs = |key: &str, what: &str| {
            Error::at_key("velocity.kind", format!("kind = \"{kind}\" needs {what}")).or_key(format!("velocity.{key}"))
        };
        let set: Vec<(&str, bool)> = vec![
            ("velocity", self.velocity.is_some()),
            ("depths", self.depths.is_some()),
            ("times", self.times.is_some()),
            ("velocities", self.velocities.is_some()),
            ("path", self.path.is_some()),
            ("functions", !self.functions.is_empty()),
            ("locate", self.locate.is_some()),
            ("outside", self.outside.is_some()),
            ("input", !is_default(&self.input)),
            ("format", self.format.is_some()),
            ("cdp_origin", self.cdp_origin.is_some()),
            ("cdp_step", self.cdp_step.is_some()),
        ];
        let allowed: &[&str] = match self.kind {
            Kind::Constant => &["velocity"],
            Kind::Table => &["depths", "times", "velocities", "path"],
            Kind::Functions => &["functions", "path", "format", "cdp_origin", "cdp_step", "locate"],
            Kind::File => &["path", "locate", "outside", "input"],
        };
        if let Some((key, _)) = set.iter().find(|(k, on)| *on && !allowed.contains(k)) {
            let hint = match *key {
                "velocity" => " (a constant velocity is kind = \"constant\")",
                "functions" => " (functions at several locations are kind = \"functions\")",
                "locate" | "outside" | "input" => " (it reads a cube: kind = \"file\")",
                _ => "",
            };
            return Err(unused(key, hint));
        }
        match self.kind {
            Kind::Constant => {
                let list = self.velocity.as_ref().ok_or_else(|| needs("velocity", "velocity = a number in m/s"))?;
                if list.0.is_empty() {
                    return Err(Error::at_key("velocity.velocity", "the list of velocities to scan is empty"));
                }
                if list.0.len() > 1 && !self.scale.is_empty() {
                    return Err(Error::at_key(
                        "velocity.scale",
                        "give a list of velocities or velocity.scale, not both: each is a velocity scan",
                    ));
                }
            }
            Kind::Table => {
                let inline = self.depths.is_some() || self.times.is_some() || self.velocities.is_some();
                if inline && self.path.is_some() {
                    return Err(Error::at_key(
                        "velocity.path",
                        "a table is either in the job (times or depths, and velocities) or in a text file (path), \
                         not both",
                    ));
                }
                if !inline && self.path.is_none() {
                    return Err(needs(
                        "velocities",
                        "times or depths with velocities, or path = a two-column text file",
                    ));
                }
                if inline {
                    self.check_picks("velocity", self.depths.as_ref(), self.times.as_ref(), self.velocities.as_ref())?;
                }
            }
            Kind::Functions => {
                if self.functions.is_empty() == self.path.is_none() {
                    return Err(needs(
                        "functions",
                        "[[velocity.functions]] tables, each with iline, xline, times or depths, and velocities; or \
                         path = a four-column text file (not both)",
                    ));
                }
                for (i, f) in self.functions.iter().enumerate() {
                    let at = format!("velocity.functions.{i}");
                    self.check_picks(&at, f.depths.as_ref(), f.times.as_ref(), Some(&f.velocities))?;
                    let first = self.functions.iter().position(|g| (g.iline, g.xline) == (f.iline, f.xline));
                    if first != Some(i) {
                        return Err(Error::at_key(
                            format!("{at}.iline"),
                            format!("a second function at inline {}, crossline {}", f.iline, f.xline),
                        ));
                    }
                }
            }
            Kind::File => {
                if self.path.is_none() {
                    return Err(needs("path", "path = a SEG-Y or HDF5 cube"));
                }
            }
        }
        self.check_cards()?;
        if self.path.is_some() && self.kind != Kind::File && self.domain.is_none() && self.cards().is_none() {
            return Err(Error::at_key(
                "velocity.domain",
                "say what the first column of the text file is: velocity.domain = \"time\" (two-way time in ms) or \
                 \"depth\"",
            )
            .or_key("velocity.path"));
        }
        self.check_time_unit()?;
        if let Some(i) = self.interpolation {
            if self.velocity_type() != VelocityType::Interval {
                return Err(Error::at_key(
                    "velocity.interpolation",
                    format!(
                        "interpolation = \"{}\" applies to interval velocities; {} velocities convert to layers of \
                         constant interval velocity between the picks",
                        format!("{i:?}").to_lowercase(),
                        self.velocity_type().name()
                    ),
                ));
            }
        }
        for (i, f) in self.scale.iter().enumerate() {
            if !(f.is_finite() && *f > 0.0) {
                return Err(Error::at_key(
                    "velocity.scale",
                    format!("scale {} is {f}: factors must be positive", i + 1),
                ));
            }
        }
        let steps = self.scan();
        let scan_key = if self.scale.is_empty() { "velocity.velocity" } else { "velocity.scale" };
        if steps.len() > MAX_SCAN_MEMBERS {
            return Err(Error::at_key(
                scan_key,
                format!(
                    "a velocity scan of {} members: at most {MAX_SCAN_MEMBERS} (each member writes every product \
                     and keeps its own image, and a panel puts every member side by side)",
                    steps.len()
                ),
            ));
        }
        for (i, s) in steps.iter().enumerate() {
            if let Some(j) = steps[..i].iter().position(|o| o.suffix() == s.suffix()) {
                return Err(Error::at_key(
                    scan_key,
                    format!(
                        "{} and {} would both name their products {}: give distinct values",
                        steps[j].label(),
                        s.label(),
                        s.suffix()
                    ),
                ));
            }
        }
        Ok(())
    }

    /// `velocity.time_unit` applies only to picks in two-way time, in the job or a text file: a cube's axis
    /// comes from its headers (or `velocity.input.sample_interval`).
    fn check_time_unit(&self) -> Result<()> {
        let Some(unit) = self.time_unit else { return Ok(()) };
        let in_time = match self.kind {
            Kind::Constant | Kind::File => false,
            Kind::Table => self.times.is_some() || self.domain == Some(VerticalDomain::Time),
            Kind::Functions => {
                self.functions.iter().any(|f| f.times.is_some()) || self.domain == Some(VerticalDomain::Time)
            }
        };
        if in_time {
            return Ok(());
        }
        let why = match self.kind {
            Kind::File => "a cube's time axis comes from its headers (velocity.input.sample_interval overrides them)",
            Kind::Constant => "a constant has no picks",
            _ => "the picks are depths",
        };
        Err(Error::at_key(
            "velocity.time_unit",
            format!("time_unit = \"{}\" applies to picks in two-way time, and {why}", unit.name()),
        ))
    }

    /// The picks of an inline function (at `key`): times or depths (one of them, agreeing with
    /// `velocity.domain` if given), as many as velocities.
    fn check_picks(
        &self,
        key: &str,
        depths: Option<&Vec<f64>>,
        times: Option<&Vec<f64>>,
        velocities: Option<&Vec<f64>>,
    ) -> Result<()> {
        let (at, name, domain) = match (depths, times) {
            (Some(_), Some(_)) => {
                return Err(Error::at_key(format!("{key}.times"), "give times or depths, not both"));
            }
            (Some(d), None) => (d, "depths", VerticalDomain::Depth),
            (None, Some(t)) => (t, "times", VerticalDomain::Time),
            (None, None) => {
                return Err(Error::at_key(
                    format!("{key}.velocities"),
                    "the velocities need times (two-way, ms) or depths",
                ))
            }
        };
        if self.domain.is_some_and(|d| d != domain) {
            return Err(Error::at_key(
                "velocity.domain",
                format!("velocity.domain says {:?}, and {key}.{name} gives the other", self.domain.unwrap())
                    .to_lowercase(),
            ));
        }
        let velocities = velocities
            .ok_or_else(|| Error::at_key(format!("{key}.{name}"), format!("{name} need velocities = one per pick")))?;
        if at.is_empty() || at.len() != velocities.len() {
            return Err(Error::at_key(
                format!("{key}.velocities"),
                format!("{} {name} and {} velocities: give one velocity per pick", at.len(), velocities.len()),
            )
            .or_key(format!("{key}.{name}")));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize)]
    struct T {
        velocity: VelocitySpec,
    }

    fn spec(text: &str) -> VelocitySpec {
        toml::from_str::<T>(&format!("[velocity]\n{text}")).unwrap_or_else(|e| panic!("{e}")).velocity
    }

    fn refused(text: &str) -> String {
        match spec(text).check() {
            Err(Error::Setting { key, message, .. }) => format!("{key}: {message}"),
            other => panic!("{text}: {other:?}"),
        }
    }

    #[test]
    fn every_form_reads() {
        let s = spec("kind = \"constant\"\nvelocity = 2000");
        assert_eq!((s.constant_value(), s.scan()), (Some(2000.0), vec![]));
        s.check().unwrap();
        let s = spec("kind = \"constant\"\nvelocity = [1.8, 2.0]\nunit = \"km/s\"");
        assert_eq!(s.scan(), vec![ScanStep::Constant(1800.0), ScanStep::Constant(2000.0)]);
        let s = spec("kind = \"table\"\ntimes = [0, 1000]\nvelocities = [1500, 2000]\ntype = \"rms\"");
        s.check().unwrap();
        assert_eq!(s.velocity_type(), VelocityType::Rms);
        spec("kind = \"table\"\npath = \"v.txt\"\ndomain = \"time\"").check().unwrap();
        let s = spec(
            "kind = \"functions\"\n[[velocity.functions]]\niline = 1\nxline = 2\ndepths = [0]\nvelocities = [1500]",
        );
        s.check().unwrap();
        let s = spec(
            "kind = \"file\"\npath = \"v.sgy\"\ndomain = \"depth\"\nlocate = \"coordinates\"\nscale = [0.9, 1.0, 1.1]",
        );
        s.check().unwrap();
        assert_eq!(s.scan()[0].suffix(), "_v090");
        assert_eq!(ScanStep::Constant(1800.0).suffix(), "_v1800");
    }

    #[test]
    fn member_names_keep_the_digits_their_values_need() {
        let names = |steps: &[ScanStep]| steps.iter().map(|s| s.suffix()).collect::<Vec<_>>();
        // Whole percents and whole m/s keep the names they always had.
        let scale = [0.9, 0.95, 1.0, 1.1, 2.5, 10.0].map(ScanStep::Scale);
        assert_eq!(names(&scale), ["_v090", "_v095", "_v100", "_v110", "_v250", "_v1000"]);
        assert_eq!(names(&[0.05].map(ScanStep::Scale)), ["_v005"]);
        // Finer factors keep their digits.
        let fine = [0.975, 0.98, 1.0125, 0.9999, 1.15, 1.005].map(ScanStep::Scale);
        assert_eq!(names(&fine), ["_v097p5", "_v098", "_v101p25", "_v099p99", "_v115", "_v100p5"]);
        let constant = [1800.0, 1800.5, 1.8 * 1000.0 * (1.0 + f64::EPSILON)].map(ScanStep::Constant);
        assert_eq!(names(&constant), ["_v1800", "_v1800p5", "_v1800"]);
        spec("kind = \"constant\"\nvelocity = 2000\nscale = [0.975, 0.98, 0.985]").check().unwrap();
        let km = spec("kind = \"constant\"\nvelocity = [1.8, 1.85]\nunit = \"km/s\"");
        assert_eq!(names(&km.scan()), ["_v1800", "_v1850"]);
        assert!(toml::from_str::<T>("[velocity]\nkind = \"constant\"\nvelocity = 1.0\nspeed = 2.0").is_err());
        assert!(toml::from_str::<T>("[velocity]\nkind = \"constant\"\nvelocity = \"fast\"").is_err());
    }

    #[test]
    fn rules_between_keys_name_the_key() {
        assert!(refused("kind = \"constant\"\ndepths = [0]").starts_with("velocity.depths: kind = \"constant\""));
        assert!(refused("kind = \"constant\"").starts_with("velocity.kind: kind = \"constant\" needs velocity"));
        assert!(refused("kind = \"table\"\npath = \"v.txt\"").starts_with("velocity.domain"));
        assert!(refused("kind = \"table\"\ntimes = [0, 1]\nvelocities = [1]").starts_with("velocity.velocities"));
        assert!(refused("kind = \"table\"\ntimes = [0]\ndepths = [0]\nvelocities = [1]").starts_with("velocity.times"));
        assert!(refused("kind = \"table\"\ntimes = [0]\nvelocities = [1]\ntype = \"rms\"\ninterpolation = \"linear\"")
            .starts_with("velocity.interpolation"));
        assert!(refused("kind = \"constant\"\nvelocity = 2000\nscale = [0.9, 0.9000000001]").contains("_v090"));
        assert!(refused("kind = \"constant\"\nvelocity = 2000\nscale = [0.0]").starts_with("velocity.scale"));
        assert!(refused("kind = \"constant\"\nvelocity = [1, 2]\nscale = [1.0, 2.0]").starts_with("velocity.scale"));
        assert!(refused("kind = \"constant\"\nvelocity = 2000\nrange = [5000, 100]").starts_with("velocity.range"));
        assert!(refused("kind = \"table\"\npath = \"v.txt\"\ndomain = \"time\"\nlocate = \"lines\"")
            .starts_with("velocity.locate"));
        let two = "kind = \"functions\"\n[[velocity.functions]]\niline = 1\nxline = 2\ntimes = [0]\nvelocities = [1]\n\
                   [[velocity.functions]]\niline = 1\nxline = 2\ntimes = [0]\nvelocities = [1]";
        assert!(refused(two).starts_with("velocity.functions.1.iline"));
        for (text, why) in [
            ("kind = \"table\"\ndepths = [0, 1]\nvelocities = [1, 2]\ntime_unit = \"s\"", "the picks are depths"),
            ("kind = \"file\"\npath = \"v.sgy\"\ndomain = \"time\"\ntime_unit = \"s\"", "a cube's time axis"),
            ("kind = \"constant\"\nvelocity = 2000\ntime_unit = \"us\"", "a constant"),
        ] {
            let e = refused(text);
            assert!(e.starts_with("velocity.time_unit: time_unit = ") && e.contains(why), "{e}");
        }
        spec("kind = \"table\"\ntimes = [0, 1]\nvelocities = [1, 2]\ntime_unit = \"s\"").check().unwrap();
        spec("kind = \"functions\"\npath = \"f.txt\"\ndomain = \"time\"\ntime_unit = \"µs\"").check().unwrap();
    }
}
