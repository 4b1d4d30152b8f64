//! What the numbers of a velocity model are: the unit of the velocities, the kind of velocity (interval,
//! RMS, average), the vertical axis (two-way time or depth) and the unit of depths. The conversions in
//! [`super::convert`] turn every combination into interval velocity in m/s against depth in m.

use serde::{Deserialize, Serialize};

/// Metres in a foot (international foot).
pub const FOOT: f64 = 0.3048;

/// The unit velocities are given in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum VelocityUnit {
    #[default]
    #[serde(rename = "m/s")]
    MetresPerSecond,
    #[serde(rename = "km/s")]
    KilometresPerSecond,
    #[serde(rename = "ft/s")]
    FeetPerSecond,
}

impl VelocityUnit {
    /// m/s per unit.
    pub fn factor(self) -> f64 {
        match self {
            VelocityUnit::MetresPerSecond => 1.0,
            VelocityUnit::KilometresPerSecond => 1000.0,
            VelocityUnit::FeetPerSecond => FOOT,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            VelocityUnit::MetresPerSecond => "m/s",
            VelocityUnit::KilometresPerSecond => "km/s",
            VelocityUnit::FeetPerSecond => "ft/s",
        }
    }
}

/// Which velocity the numbers are.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum VelocityType {
    /// The velocity of the rock between two depths (or times): what the migration needs.
    #[default]
    Interval,
    /// Root-mean-square velocity down to each time or depth (stacking velocities, as processing delivers
    /// them): converted to interval velocity by Dix's formula.
    Rms,
    /// Average velocity down to each time or depth (depth divided by one-way time): converted to interval
    /// velocity between the picks.
    Average,
}

impl VelocityType {
    pub fn name(self) -> &'static str {
        match self {
            VelocityType::Interval => "interval",
            VelocityType::Rms => "RMS",
            VelocityType::Average => "average",
        }
    }
}

/// The vertical axis of a velocity function or cube.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum VerticalDomain {
    /// Two-way time in ms.
    Time,
    /// Depth, in [`DepthUnit`].
    Depth,
}

/// The unit of depths in a velocity table or file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum DepthUnit {
    #[default]
    #[serde(rename = "m")]
    Metres,
    #[serde(rename = "ft")]
    Feet,
}

impl DepthUnit {
    /// Metres per unit.
    pub fn factor(self) -> f64 {
        match self {
            DepthUnit::Metres => 1.0,
            DepthUnit::Feet => FOOT,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            DepthUnit::Metres => "m",
            DepthUnit::Feet => "ft",
        }
    }
}

/// How the numbers of a velocity model are to be read: everything but the numbers themselves.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Reading {
    pub kind: VelocityType,
    pub unit: VelocityUnit,
    pub domain: VerticalDomain,
    pub depth_unit: DepthUnit,
}

impl Reading {
    /// A vertical value as given (ms or depth unit) in the conversions' units: two-way time in s, depth in m.
    pub fn vertical_si(&self, value: f64) -> f64 {
        match self.domain {
            VerticalDomain::Time => value / 1000.0,
            VerticalDomain::Depth => value * self.depth_unit.factor(),
        }
    }

    /// The unit of vertical values as given, for messages.
    pub fn vertical_unit(&self) -> &'static str {
        match self.domain {
            VerticalDomain::Time => "ms",
            VerticalDomain::Depth => self.depth_unit.name(),
        }
    }

    /// "RMS velocity in km/s against two-way time in ms", for `validate` and messages.
    pub fn describe(&self) -> String {
        let axis = match self.domain {
            VerticalDomain::Time => "two-way time in ms".to_string(),
            VerticalDomain::Depth => format!("depth in {}", self.depth_unit.name()),
        };
        format!("{} velocity in {} against {axis}", self.kind.name(), self.unit.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings_and_factors() {
        #[derive(Deserialize)]
        struct T {
            unit: VelocityUnit,
            kind: VelocityType,
            depth_unit: DepthUnit,
            domain: VerticalDomain,
        }
        let t: T = toml::from_str("unit = \"km/s\"\nkind = \"rms\"\ndepth_unit = \"ft\"\ndomain = \"time\"").unwrap();
        assert_eq!(
            (t.unit, t.kind, t.depth_unit, t.domain),
            (VelocityUnit::KilometresPerSecond, VelocityType::Rms, DepthUnit::Feet, VerticalDomain::Time)
        );
        assert!(toml::from_str::<T>("unit = \"mps\"\nkind = \"rms\"\ndepth_unit = \"m\"\ndomain = \"time\"").is_err());
        assert_eq!(VelocityUnit::FeetPerSecond.factor() * 10_000.0, 3048.0);
        let r = Reading {
            kind: VelocityType::Average,
            unit: VelocityUnit::FeetPerSecond,
            domain: VerticalDomain::Depth,
            depth_unit: DepthUnit::Feet,
        };
        assert_eq!(r.vertical_si(1000.0), 304.8);
        assert_eq!(r.describe(), "average velocity in ft/s against depth in ft");
    }
}
