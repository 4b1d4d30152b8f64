//! Is this a velocity of rock? Values outside a plausible range (`velocity.range`, 300-8000 m/s unless the
//! job says otherwise) are refused with the value and a guess at what went wrong, before they can run to
//! a garbage image: 1.8 read as m/s was meant in km/s, 6500 m/s was probably ft/s.

use super::units::VelocityUnit;

/// The default plausible range of interval velocities, m/s: from soft, shallow sediment (and water at
/// 1450-1550 m/s) to the fastest common rocks (salt about 4500, anhydrite and dolomite to 6500, basement
/// up to 7000).
pub const DEFAULT_RANGE: [f64; 2] = [300.0, 8000.0];

/// Refuse `v` (m/s, given in `unit`) outside `range`, with a hint at the unit that would make it plausible.
pub fn check_value(v: f64, range: [f64; 2], unit: VelocityUnit) -> Result<(), String> {
    if !v.is_finite() || v <= 0.0 {
        return Err(format!("velocity {v} m/s is not a positive number"));
    }
    if (range[0]..=range[1]).contains(&v) {
        return Ok(());
    }
    let given = v / unit.factor();
    let side = if v < range[0] { "below" } else { "above" };
    let hint = [VelocityUnit::KilometresPerSecond, VelocityUnit::FeetPerSecond, VelocityUnit::MetresPerSecond]
        .into_iter()
        .find(|u| *u != unit && (range[0]..=range[1]).contains(&(given * u.factor())))
        .map(|u| format!("if it is {} in {}, set velocity.unit = \"{}\"", given, u.name(), u.name()))
        .unwrap_or_else(|| "km/s or ft/s?".to_string());
    let shown = if unit == VelocityUnit::MetresPerSecond {
        format!("{v} m/s")
    } else {
        format!("{given} {} ({v:.1} m/s)", unit.name())
    };
    Err(format!(
        "velocity {shown} is {side} the plausible {}..{} m/s: {hint} (velocity.range = [low, high] in m/s allows \
         other values, for unusual media)",
        range[0], range[1]
    ))
}

/// Check a `velocity.range` itself.
pub fn check_range(range: [f64; 2]) -> Result<(), String> {
    let [lo, hi] = range;
    if lo.is_finite() && hi.is_finite() && lo > 0.0 && lo < hi {
        Ok(())
    } else {
        Err(format!("must be [low, high] in m/s with 0 < low < high, not [{lo}, {hi}]"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::velocity::units::FOOT;

    #[test]
    fn implausible_values_get_a_unit_hint() {
        let r = DEFAULT_RANGE;
        assert!(check_value(1800.0, r, VelocityUnit::MetresPerSecond).is_ok());
        let e = check_value(1.8, r, VelocityUnit::MetresPerSecond).unwrap_err();
        assert!(e.contains("1.8 m/s is below") && e.contains("velocity.unit = \"km/s\""), "{e}");
        let e = check_value(9800.0, r, VelocityUnit::MetresPerSecond).unwrap_err();
        assert!(e.contains("above") && e.contains("\"ft/s\""), "{e}");
        // 1.8 km/s given as ft/s: 0.55 m/s.
        let e = check_value(1.8 * FOOT, r, VelocityUnit::FeetPerSecond).unwrap_err();
        assert!(e.contains("1.8 ft/s") && e.contains("\"km/s\""), "{e}");
        let e = check_value(90_000.0, r, VelocityUnit::MetresPerSecond).unwrap_err();
        assert!(e.contains("km/s or ft/s?"), "{e}");
        assert!(check_value(f64::NAN, r, VelocityUnit::MetresPerSecond).is_err());
        assert!(check_value(9000.0, [300.0, 10_000.0], VelocityUnit::MetresPerSecond).is_ok());
        assert!(check_range([0.0, 1.0]).is_err() && check_range([2.0, 1.0]).is_err());
    }
}
