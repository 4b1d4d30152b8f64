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

/// The unit of two-way times in a velocity table or text file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum TimeUnit {
    #[default]
    #[serde(rename = "ms")]
    Milliseconds,
    #[serde(rename = "s")]
    Seconds,
    #[serde(rename = "us", alias = "µs")]
    Microseconds,
}

impl TimeUnit {
    /// Units of this kind in a second: a divisor, so that 250 ms is exactly 0.25 s.
    pub fn per_second(self) -> f64 {
        match self {
            TimeUnit::Milliseconds => 1e3,
            TimeUnit::Seconds => 1.0,
            TimeUnit::Microseconds => 1e6,
        }
    }

    /// A time given in this unit, in ms.
    pub fn to_ms(self, value: f64) -> f64 {
        value / self.per_second() * 1e3
    }

    pub fn name(self) -> &'static str {
        match self {
            TimeUnit::Milliseconds => "ms",
            TimeUnit::Seconds => "s",
            TimeUnit::Microseconds => "us",
        }
    }
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
    pub time_unit: TimeUnit,
}

impl Reading {
    /// A vertical value as given (time or depth unit) in the conversions' units: two-way time in s, depth in
    /// m.
    pub fn vertical_si(&self, value: f64) -> f64 {
        match self.domain {
            VerticalDomain::Time => value / self.time_unit.per_second(),
            VerticalDomain::Depth => value * self.depth_unit.factor(),
        }
    }

    /// The unit of vertical values as given, for messages.
    pub fn vertical_unit(&self) -> &'static str {
        match self.domain {
            VerticalDomain::Time => self.time_unit.name(),
            VerticalDomain::Depth => self.depth_unit.name(),
        }
    }

    /// "RMS velocity in km/s against two-way time in ms", for `validate` and messages.
    pub fn describe(&self) -> String {
        let axis = match self.domain {
            VerticalDomain::Time => format!("two-way time in {}", self.time_unit.name()),
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
            time_unit: TimeUnit::Milliseconds,
        };
        assert_eq!(r.vertical_si(1000.0), 304.8);
        assert_eq!(r.describe(), "average velocity in ft/s against depth in ft");
        let t = Reading { domain: VerticalDomain::Time, ..r };
        assert_eq!(t.vertical_si(250.0), 0.25);
        let s = Reading { time_unit: TimeUnit::Seconds, ..t };
        assert_eq!((s.vertical_si(0.25), s.vertical_unit()), (0.25, "s"));
        let us = Reading { time_unit: TimeUnit::Microseconds, ..t };
        assert_eq!((us.vertical_si(250_000.0), TimeUnit::Microseconds.to_ms(250_000.0)), (0.25, 250.0));
        assert_eq!(us.describe(), "average velocity in ft/s against two-way time in us");
    }
}

/// The card format of a velocity file (`velocity.format`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CardFormat {
    /// Columns of numbers (read as the `text` module reads them).
    #[default]
    Columns,
    /// ProMAX/Omega `HANDVEL` cards.
    Handvel,
    /// SEG / Western `SPNT` and `VELF` cards.
    Velf,
}

impl seis_core::choice::Choice for CardFormat {
    const CHOICES: &'static [(Self, &'static str, &'static str)] = &[
        (CardFormat::Columns, "columns", "columns of numbers, one pick per line"),
        (CardFormat::Handvel, "handvel", "ProMAX/Omega HANDVEL cards"),
        (CardFormat::Velf, "velf", "SEG / Western SPNT and VELF cards"),
    ];
}

impl CardFormat {
    pub fn name(self) -> &'static str {
        seis_core::choice::Choice::choice_name(self)
    }
}
