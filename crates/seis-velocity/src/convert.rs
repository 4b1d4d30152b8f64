//! One velocity function, as given, to the interval velocity in depth that the engines use.
//!
//! A function is a list of picks: increasing two-way times or depths, each with a velocity of one
//! [`VelocityType`]. The conversions are the textbook ones, exact for a layered earth:
//!
//! - **interval in depth**: the table itself (linear or step between the nodes);
//! - **interval in time**: each pick's depth is the integral of `v dt / 2` from the surface; with step
//!   interpolation every pick starts a layer, with linear interpolation the velocity is linear in time
//!   between the picks, which is followed in depth by nodes at most [`LINEAR_TIME_STEP`] apart;
//! - **RMS in time** (Dix): the layer between picks `i-1` and `i` has
//!   `v² = (V_i² t_i − V_{i-1}² t_{i-1}) / (t_i − t_{i-1})`, and is `v (t_i − t_{i-1}) / 2` thick;
//! - **average in time**: pick `i` lies at depth `V_i t_i / 2`; the layer above it has the velocity that
//!   crosses it in the time between the picks;
//! - **RMS and average in depth**: the same relations solved for the pick's time (a quadratic for RMS).
//!
//! RMS and average velocities give layers of constant interval velocity between the picks (a step table);
//! the first layer reaches up to the surface, the last one's velocity holds below the deepest pick. A layer
//! whose velocity is not a positive number inside the plausible range is an error naming its two picks:
//! RMS velocities that fall too fast between two picks have no real interval velocity.

use super::model::{Interpolation, VelocityTable};
use super::units::{Reading, VelocityType, VerticalDomain};

/// Two-way time (s) between the nodes that follow a velocity linear in time.
pub const LINEAR_TIME_STEP: f64 = 0.002;
/// At most this many nodes between two picks of an interval velocity linear in time.
const MAX_NODES_PER_PICK: usize = 64;

/// A velocity function in the conversions' units: picks at increasing two-way times (s) or depths (m),
/// velocities in m/s.
pub struct Picks<'a> {
    pub at: &'a [f64],
    pub velocity: &'a [f64],
}

/// A function converted to interval velocity in depth.
#[derive(Clone, Debug, PartialEq)]
pub struct Converted {
    pub table: VelocityTable,
    /// Depth (m) of the deepest pick: below it the last interval velocity is held.
    pub given_to: f64,
}

/// Convert `picks`, read as `reading` says (its units already applied to `picks`), into interval velocity
/// in depth. `name(i)` names pick `i` in messages; interval velocities outside `range` (m/s) are refused.
pub fn interval_in_depth(
    picks: &Picks,
    reading: &Reading,
    interpolation: Interpolation,
    range: [f64; 2],
    name: &dyn Fn(usize) -> String,
) -> Result<Converted, String> {
    let (at, vel) = (picks.at, picks.velocity);
    if at.is_empty() || at.len() != vel.len() {
        return Err(format!(
            "a velocity function needs as many {} as velocities, at least one ({} and {})",
            vertical_name(reading),
            at.len(),
            vel.len()
        ));
    }
    if let Some(i) = (0..at.len()).find(|&i| !at[i].is_finite()) {
        return Err(format!("{} is not a number", name(i)));
    }
    if let Some(i) = (1..at.len()).find(|&i| at[i] <= at[i - 1]) {
        return Err(format!("{} must be {} than {}", name(i), deeper(reading), name(i - 1)));
    }
    if let Some(i) = (0..vel.len()).find(|&i| !(vel[i].is_finite() && vel[i] > 0.0)) {
        return Err(format!("{}: velocity {} m/s is not a positive number", name(i), vel[i]));
    }
    let surface_based = reading.kind != VelocityType::Interval || reading.domain == VerticalDomain::Time;
    if surface_based && at[0] < 0.0 {
        return Err(format!("{} lies above the surface", name(0)));
    }
    let layers = match (reading.domain, reading.kind) {
        (VerticalDomain::Depth, VelocityType::Interval) => {
            let table = VelocityTable::from_nodes(at.to_vec(), vel.to_vec(), interpolation);
            return Ok(Converted { table, given_to: at[at.len() - 1] });
        }
        (VerticalDomain::Time, VelocityType::Interval) => return Ok(interval_in_time(at, vel, interpolation)),
        (VerticalDomain::Time, VelocityType::Rms) => dix(at, vel),
        (VerticalDomain::Time, VelocityType::Average) => average_in_time(at, vel),
        (VerticalDomain::Depth, VelocityType::Rms) => rms_in_depth(at, vel),
        (VerticalDomain::Depth, VelocityType::Average) => average_in_depth(at, vel),
    };
    let between = |l: &Layer| match l.above {
        Some(a) => format!("between {} and {}", name(a), name(l.pick)),
        None => format!("between the surface and {}", name(l.pick)),
    };
    let what = reading.kind.name();
    let (mut depths, mut velocities) = (Vec::with_capacity(layers.len()), Vec::with_capacity(layers.len()));
    for l in &layers {
        if !(l.velocity_squared > 0.0 && l.velocity_squared.is_finite()) {
            let why = match reading.kind {
                VelocityType::Rms => "the RMS velocity falls too fast between them for any real interval velocity",
                _ => "the average velocity changes faster than the picks allow",
            };
            return Err(format!(
                "the {what} velocities {} imply a squared interval velocity of {:.4e} m²/s²: {why}",
                between(l),
                l.velocity_squared
            ));
        }
        let v = l.velocity_squared.sqrt();
        if !(range[0]..=range[1]).contains(&v) {
            return Err(format!(
                "the {what} velocities {} give an interval velocity of {v:.1} m/s, outside {}..{} m/s (velocity.range)",
                between(l),
                range[0],
                range[1]
            ));
        }
        depths.push(l.top);
        velocities.push(v);
    }
    let given_to = layers.last().map_or(0.0, |l| l.bottom);
    if depths.is_empty() {
        // A single pick at the surface: the velocity there, everywhere.
        depths.push(0.0);
        velocities.push(vel[0]);
    }
    Ok(Converted { table: VelocityTable::from_nodes(depths, velocities, Interpolation::Step), given_to })
}

fn vertical_name(reading: &Reading) -> &'static str {
    match reading.domain {
        VerticalDomain::Time => "times",
        VerticalDomain::Depth => "depths",
    }
}

fn deeper(reading: &Reading) -> &'static str {
    match reading.domain {
        VerticalDomain::Time => "later",
        VerticalDomain::Depth => "deeper",
    }
}

/// A layer of constant interval velocity between two picks (or the surface and the first).
struct Layer {
    top: f64,
    bottom: f64,
    velocity_squared: f64,
    /// The pick at its top (`None`: the surface) and the one at its bottom.
    above: Option<usize>,
    pick: usize,
}

/// Picks with their layers, skipping a pick at the surface (it bounds no layer).
fn layers(at: &[f64], mut layer: impl FnMut(usize, Option<usize>) -> (f64, f64)) -> Vec<Layer> {
    let mut out: Vec<Layer> = Vec::with_capacity(at.len());
    let mut above = None;
    let mut top = 0.0;
    for (i, &a) in at.iter().enumerate() {
        if a <= 0.0 {
            above = Some(i);
            continue;
        }
        let (velocity_squared, thickness) = layer(i, above);
        let bottom = top + thickness;
        out.push(Layer { top, bottom, velocity_squared, above, pick: i });
        // NaN included: no layer below one without a velocity.
        if velocity_squared.is_nan() || velocity_squared <= 0.0 {
            break;
        }
        top = bottom;
        above = Some(i);
    }
    out
}

/// Dix's formula on RMS velocities in two-way time.
fn dix(t: &[f64], v: &[f64]) -> Vec<Layer> {
    layers(t, |i, above| {
        let (t0, v0) = above.map_or((0.0, 0.0), |a| (t[a], v[a]));
        let dt = t[i] - t0;
        let v2 = (v[i] * v[i] * t[i] - v0 * v0 * t0) / dt;
        (v2, v2.max(0.0).sqrt() * dt / 2.0)
    })
}

/// Average velocities in two-way time: pick `i` at depth `V_i t_i / 2`.
fn average_in_time(t: &[f64], v: &[f64]) -> Vec<Layer> {
    layers(t, |i, above| {
        let (t0, z0) = above.map_or((0.0, 0.0), |a| (t[a], v[a] * t[a] / 2.0));
        let dz = v[i] * t[i] / 2.0 - z0;
        let vi = 2.0 * dz / (t[i] - t0);
        (vi.signum() * vi * vi, dz)
    })
}

/// RMS velocities at depths: the two-way time of each pick from `V_i² t_i = V_{i-1}² t_{i-1} + v² Δt` with
/// `v = 2 Δz / Δt`, i.e. `V_i² Δt² + (V_i² − V_{i-1}²) t_{i-1} Δt − 4 Δz² = 0`.
fn rms_in_depth(z: &[f64], v: &[f64]) -> Vec<Layer> {
    let mut t_above = 0.0;
    layers(z, |i, above| {
        let (z0, v0) = above.map_or((0.0, 0.0), |a| (z[a], v[a]));
        let t0 = if above.is_some_and(|a| z[a] > 0.0) { t_above } else { 0.0 };
        let dz = z[i] - z0;
        let (a, b) = (v[i] * v[i], (v[i] * v[i] - v0 * v0) * t0);
        let dt = (-b + (b * b + 16.0 * a * dz * dz).sqrt()) / (2.0 * a);
        t_above = t0 + dt;
        let vi = 2.0 * dz / dt;
        (vi * vi, dz)
    })
}

/// Average velocities at depths: pick `i` at two-way time `2 z_i / V_i`.
fn average_in_depth(z: &[f64], v: &[f64]) -> Vec<Layer> {
    layers(z, |i, above| {
        let (z0, t0) = above.map_or((0.0, 0.0), |a| (z[a], 2.0 * z[a] / v[a]));
        let dz = z[i] - z0;
        let dt = 2.0 * z[i] / v[i] - t0;
        let vi = 2.0 * dz / dt;
        (vi.signum() * vi * vi, dz)
    })
}

/// Interval velocity in two-way time, into depth.
fn interval_in_time(t: &[f64], v: &[f64], interpolation: Interpolation) -> Converted {
    // The first velocity holds from the surface to the first pick.
    let mut z = v[0] * t[0] / 2.0;
    let mut depths = vec![z];
    let mut velocities = vec![v[0]];
    for i in 1..t.len() {
        let dt = t[i] - t[i - 1];
        match interpolation {
            Interpolation::Step => z += v[i - 1] * dt / 2.0,
            Interpolation::Linear => {
                let n = ((dt / LINEAR_TIME_STEP).ceil() as usize).clamp(1, MAX_NODES_PER_PICK);
                for k in 1..=n {
                    let f = |k: usize| v[i - 1] + (v[i] - v[i - 1]) * k as f64 / n as f64;
                    z += 0.5 * (f(k - 1) + f(k)) * (dt / n as f64) / 2.0;
                    if k < n {
                        depths.push(z);
                        velocities.push(f(k));
                    }
                }
            }
        }
        depths.push(z);
        velocities.push(v[i]);
    }
    Converted { given_to: z, table: VelocityTable::from_nodes(depths, velocities, interpolation) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::{DepthUnit, TimeUnit, VelocityUnit};

    fn reading(domain: VerticalDomain, kind: VelocityType) -> Reading {
        let time_unit = TimeUnit::Milliseconds;
        Reading { kind, unit: VelocityUnit::MetresPerSecond, domain, depth_unit: DepthUnit::Metres, time_unit }
    }

    const RANGE: [f64; 2] = [300.0, 8000.0];

    fn name(i: usize) -> String {
        format!("pick {}", i + 1)
    }

    fn convert(domain: VerticalDomain, kind: VelocityType, at: &[f64], v: &[f64]) -> Result<Converted, String> {
        let picks = Picks { at, velocity: v };
        interval_in_depth(&picks, &reading(domain, kind), Interpolation::Step, RANGE, &name)
    }

    /// Three layers whose interval velocities and thicknesses are known: their RMS and average velocities
    /// at the layer bottoms, in time and in depth, computed here from the definitions.
    struct Layered {
        v: [f64; 3],
        h: [f64; 3],
    }

    impl Layered {
        fn bottoms(&self) -> (Vec<f64>, Vec<f64>, Vec<f64>, Vec<f64>) {
            let (mut z, mut t, mut sum_v2t) = (0.0, 0.0, 0.0);
            let (mut zs, mut ts, mut rms, mut avg) = (vec![], vec![], vec![], vec![]);
            for (v, h) in self.v.iter().zip(self.h) {
                let dt = 2.0 * h / v;
                z += h;
                t += dt;
                sum_v2t += v * v * dt;
                zs.push(z);
                ts.push(t);
                rms.push((sum_v2t / t).sqrt());
                avg.push(2.0 * z / t);
            }
            (zs, ts, rms, avg)
        }
    }

    fn assert_layers(c: &Converted, m: &Layered) {
        let (zs, ..) = m.bottoms();
        let tops = [0.0, zs[0], zs[1]];
        assert_eq!(c.table.depths().len(), 3, "{c:?}");
        for (k, top) in tops.iter().enumerate() {
            assert!((c.table.depths()[k] - top).abs() < 1e-6, "top {k}: {:?}", c.table.depths());
            assert!((c.table.velocities()[k] - m.v[k]).abs() < 1e-6, "layer {k}: {:?}", c.table.velocities());
        }
        assert!((c.given_to - zs[2]).abs() < 1e-6);
        assert_eq!(c.table.interpolation(), Interpolation::Step);
        // Inside each layer, and below the deepest pick, the layer's velocity.
        assert_eq!(c.table.at(tops[1] + 1.0), m.v[1]);
        assert_eq!(c.table.at(zs[2] + 500.0), m.v[2]);
    }

    #[test]
    fn dix_and_averages_give_back_the_layers_of_an_analytic_model() {
        let m = Layered { v: [1500.0, 2200.0, 3100.0], h: [300.0, 450.0, 800.0] };
        let (zs, ts, rms, avg) = m.bottoms();
        use {VelocityType::*, VerticalDomain::*};
        assert_layers(&convert(Time, Rms, &ts, &rms).unwrap(), &m);
        assert_layers(&convert(Time, Average, &ts, &avg).unwrap(), &m);
        assert_layers(&convert(Depth, Rms, &zs, &rms).unwrap(), &m);
        assert_layers(&convert(Depth, Average, &zs, &avg).unwrap(), &m);
        // Interval velocity in time, each pick starting a layer: the layer tops at the picks' times.
        let tops = [0.0, ts[0], ts[1]];
        assert_layers(
            &convert(Time, Interval, &tops, &m.v)
                .map(|mut c| {
                    c.given_to = zs[2]; // the table gives the top of its last layer; the test model has a bottom
                    c
                })
                .unwrap(),
            &m,
        );
        // A pick at the surface changes nothing.
        let with_surface: Vec<f64> = std::iter::once(0.0).chain(ts.iter().cloned()).collect();
        let rms0: Vec<f64> = std::iter::once(1500.0).chain(rms.iter().cloned()).collect();
        assert_layers(&convert(Time, Rms, &with_surface, &rms0).unwrap(), &m);
    }

    #[test]
    fn an_interval_velocity_linear_in_time_is_followed_in_depth() {
        // v(t) = 1500 + 1000 t (t two-way, s): z(t) = ∫ v dt / 2 = 750 t + 250 t².
        let t = [0.0, 1.0];
        let picks = Picks { at: &t, velocity: &[1500.0, 2500.0] };
        let r = reading(VerticalDomain::Time, VelocityType::Interval);
        let c = interval_in_depth(&picks, &r, Interpolation::Linear, RANGE, &name).unwrap();
        assert!((c.given_to - 1000.0).abs() < 1e-9);
        for tk in [0.1, 0.25, 0.5, 0.9] {
            let z = 750.0 * tk + 250.0 * tk * tk;
            let v = 1500.0 + 1000.0 * tk;
            assert!((c.table.at(z) - v).abs() < 0.05, "t {tk}: {} vs {v}", c.table.at(z));
        }
    }

    #[test]
    fn rms_falling_too_fast_is_refused_naming_the_picks() {
        // 2000 m/s down to 1 s, then 1500 m/s RMS at 1.2 s: v² = (1500² · 1.2 − 2000² · 1) / 0.2 < 0.
        let e = convert(VerticalDomain::Time, VelocityType::Rms, &[1.0, 1.2], &[2000.0, 1500.0]).unwrap_err();
        assert!(e.contains("between pick 1 and pick 2") && e.contains("falls too fast"), "{e}");
        // A rise that is merely absurd: Dix gives far more than 8000 m/s.
        let e = convert(VerticalDomain::Time, VelocityType::Rms, &[1.0, 1.01], &[2000.0, 2400.0]).unwrap_err();
        assert!(e.contains("between pick 1 and pick 2") && e.contains("outside 300..8000"), "{e}");
        // Average velocities that put a deeper pick above a shallower one.
        let e = convert(VerticalDomain::Time, VelocityType::Average, &[1.0, 1.1], &[3000.0, 2000.0]).unwrap_err();
        assert!(e.contains("between pick 1 and pick 2"), "{e}");
        let e = convert(VerticalDomain::Time, VelocityType::Rms, &[1.0, 0.9], &[2000.0, 2100.0]).unwrap_err();
        assert!(e.contains("pick 2 must be later than pick 1"), "{e}");
    }
}
