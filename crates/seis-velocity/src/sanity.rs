//! Is this a velocity of rock? Values outside a plausible range (`velocity.range`, 300-8000 m/s unless the
//! job says otherwise) are refused with the value and a guess at what went wrong, before they can run to
//! a garbage image: 1.8 read as m/s was meant in km/s, 6500 m/s was probably ft/s. Times get the same
//! check: picks against the record they image, the seismic's sample interval against what records have.

use super::units::{TimeUnit, VelocityUnit};

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

/// How far the deepest pick of a velocity function may lie from the end of the record, as a factor either
/// way: see [`check_times`].
pub const TIME_SPAN_FACTOR: f64 = 50.0;

/// Refuse two-way times whose deepest pick, `deepest` in `unit`, does not fit a record `record_ms` long, with
/// a hint at the unit that would make it fit.
///
/// The picks fit when the deepest lies between 1/[`TIME_SPAN_FACTOR`] (2 %) and [`TIME_SPAN_FACTOR`] times
/// the record. A unit typed wrongly moves every pick by a factor of 1000: seconds read as ms put a function
/// that ends anywhere short of 20 records below 2 %, µs read as ms put one that ends past 5 % of the record
/// beyond 50 records. Real functions stay inside: a shallow one that ends at 10 % of the record, and a
/// regional one that runs several records deeper. A function whose deepest pick is at or above 0 (one pick
/// at 0, or none below it) is a constant whatever the unit, and the callers leave out functions of a single
/// pick for the same reason.
pub fn check_times(deepest: f64, unit: TimeUnit, record_ms: f64) -> Result<(), String> {
    let fits = |ms: f64| (record_ms / TIME_SPAN_FACTOR..=record_ms * TIME_SPAN_FACTOR).contains(&ms);
    let ms = unit.to_ms(deepest);
    if deepest <= 0.0 || record_ms.is_nan() || record_ms <= 0.0 || fits(ms) {
        return Ok(());
    }
    let nearest = [TimeUnit::Seconds, TimeUnit::Milliseconds, TimeUnit::Microseconds]
        .into_iter()
        .filter(|u| *u != unit && fits(u.to_ms(deepest)))
        .min_by(|a, b| (a.to_ms(deepest) / record_ms).ln().abs().total_cmp(&(b.to_ms(deepest) / record_ms).ln().abs()));
    let hint = match nearest {
        Some(u) => format!("if the times are in {0}, set velocity.time_unit = \"{0}\"", u.name()),
        None => "are they two-way times in ms, s or us (velocity.time_unit)?".to_string(),
    };
    let side = if ms < record_ms { "stop at" } else { "reach" };
    Err(format!(
        "the picks {side} {deepest} {}, {} % of the seismic's record of {record_ms} ms: two-way times in {} \
         must end between {} and {} ms to be plausible; {hint}",
        unit.name(),
        rounded(100.0 * ms / record_ms),
        unit.name(),
        rounded(record_ms / TIME_SPAN_FACTOR),
        rounded(record_ms * TIME_SPAN_FACTOR)
    ))
}

/// `x` to three decimals, printed without trailing zeros.
fn rounded(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// The sample intervals of seismic records, ms: from high-resolution site surveys to the coarsest deep
/// crustal records.
pub const SAMPLE_INTERVAL_MS: [f64; 2] = [0.1, 20.0];

/// Refuse a seismic sample interval (ms) no record has, with the interval it was probably meant as (µs or s
/// typed as ms).
pub fn check_sample_interval(dt_ms: f64) -> Result<(), String> {
    let [lo, hi] = SAMPLE_INTERVAL_MS;
    let plausible = |dt: f64| (lo..=hi).contains(&dt);
    if plausible(dt_ms) {
        return Ok(());
    }
    let hint = [dt_ms / 1000.0, dt_ms * 1000.0]
        .into_iter()
        .find(|dt| plausible(*dt))
        .map(|dt| format!(": did you mean {dt} ms?"))
        .unwrap_or_default();
    Err(format!("a sample interval of {dt_ms} ms is outside the {lo}..{hi} ms of seismic records{hint}"))
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
    use crate::units::FOOT;

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

    #[test]
    fn picks_must_fit_the_record_in_their_unit() {
        let record = 596.0;
        // A table to 2 s on a 0.6 s record, one to 10 % of it, one deeper than it.
        for (deepest, unit) in
            [(2000.0, TimeUnit::Milliseconds), (60.0, TimeUnit::Milliseconds), (3.0, TimeUnit::Seconds)]
        {
            assert!(check_times(deepest, unit, record).is_ok(), "{deepest} {unit:?}");
        }
        // A single pick at 0, or none below it: no unit to check.
        assert!(check_times(0.0, TimeUnit::Milliseconds, record).is_ok());
        let e = check_times(0.8, TimeUnit::Milliseconds, record).unwrap_err();
        assert!(e.contains("stop at 0.8 ms, 0.134 %") && e.contains("velocity.time_unit = \"s\""), "{e}");
        let e = check_times(800_000.0, TimeUnit::Milliseconds, record).unwrap_err();
        assert!(e.contains("reach 800000 ms") && e.contains("velocity.time_unit = \"us\""), "{e}");
        let e = check_times(800.0, TimeUnit::Seconds, record).unwrap_err();
        assert!(e.contains("velocity.time_unit = \"ms\""), "{e}");
        // Wrong in every unit: no unit is suggested.
        let e = check_times(1e12, TimeUnit::Milliseconds, record).unwrap_err();
        assert!(e.contains("ms, s or us"), "{e}");
    }

    #[test]
    fn sample_intervals_outside_records_get_the_interval_meant() {
        for dt in [0.1, 0.5, 4.0, 20.0] {
            assert!(check_sample_interval(dt).is_ok(), "{dt}");
        }
        let e = check_sample_interval(4000.0).unwrap_err();
        assert!(e.contains("4000 ms is outside") && e.ends_with("did you mean 4 ms?"), "{e}");
        assert!(check_sample_interval(0.002).unwrap_err().ends_with("did you mean 2 ms?"));
        assert!(!check_sample_interval(50.0).unwrap_err().contains("did you mean"));
    }
}
