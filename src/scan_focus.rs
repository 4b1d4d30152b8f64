//! How sharply each member of a velocity scan focuses, as one number per member, so that a scan ends in a
//! number as well as in pictures: the varimax norm of its traces' energies.
//!
//! Each trace of a member's products in depth (a column of a section, a trace of a region, a sample of a
//! depth slice) has an energy `E`, the sum of its squared amplitudes down to the depth every member's record
//! reaches; the varimax norm of the `M` energies is `M · ΣE² / (ΣE)²`: 1 when every trace holds as much,
//! `M` when one trace holds it all. A migration with the right velocity collapses a diffraction's energy
//! onto the traces of its point and so raises it; too slow or too fast a velocity leaves the energy spread
//! along a curve over many traces. Summing along the trace first makes the measure blind to how a faster
//! velocity stretches the image in depth (the varimax norm of the samples themselves falls as the depth
//! axis stretches, and so favours the slowest member). Only amplitudes count (not attributes, not the
//! products in time), on live traces. `configs/README.md` says what it cannot tell.

use std::sync::Mutex;

use serde::Serialize;

use crate::products::ProductSpec;
use crate::velocity::ScanStep;
use crate::volume::Geometry;

/// Sums over one member's traces.
#[derive(Clone, Copy, Debug, Default)]
struct Sums {
    traces: u64,
    energy: f64,
    energy_squared: f64,
}

impl Sums {
    fn add(&mut self, trace_energy: f64) {
        self.traces += 1;
        self.energy += trace_energy;
        self.energy_squared += trace_energy * trace_energy;
    }

    fn varimax(&self) -> Option<f64> {
        (self.energy > 0.0).then(|| self.traces as f64 * self.energy_squared / (self.energy * self.energy))
    }
}

/// The sums of every member, added to as the engines hand over their products.
pub struct FocusTally {
    /// The deepest depth every member's record reaches, when the image goes deeper.
    deepest: Option<f64>,
    image: Geometry,
    members: Mutex<Vec<Sums>>,
}

/// One member's measure.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MemberFocus {
    pub scan: ScanStep,
    /// `None` when the member's measured traces are all zero.
    pub varimax: Option<f64>,
    /// How many traces it was taken over.
    pub traces: u64,
    /// The member of the highest varimax norm.
    pub best: bool,
}

/// Every member's measure, for the manifest and the page.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ScanFocus {
    pub measure: &'static str,
    /// The depth it was taken down to, when that is less than the image's: the deepest depth every
    /// member's record reaches.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deepest_m: Option<f64>,
    pub members: Vec<MemberFocus>,
}

impl FocusTally {
    /// A tally for `members` migrations of `products` (every member's, member after member) on `image`.
    pub fn new(products: &[ProductSpec], members: usize, image: &Geometry) -> Self {
        let deepest = products.iter().filter_map(|p| p.reach.map(|r| r.depth)).min_by(f64::total_cmp);
        FocusTally { deepest, image: image.clone(), members: Mutex::new(vec![Sums::default(); members]) }
    }

    /// Add the values of `spec` as the engine handed them over for `member`, if it is measured.
    pub fn add(&self, member: usize, spec: &ProductSpec, values: &[f32]) {
        if spec.scan.is_none() || spec.time.is_some() || spec.attribute.is_some() {
            return;
        }
        let g = spec.geometry(&self.image);
        let nz = g.samples.len;
        let reached = match self.deepest {
            Some(r) => (0..nz).take_while(|&k| g.samples.value(k) <= r + 1e-9 * g.samples.step).count(),
            None => nz,
        };
        let mut sums = Sums::default();
        for (trace, _) in values.chunks(nz.max(1)).zip(&g.live).filter(|(_, &live)| live) {
            sums.add(trace[..reached.min(trace.len())].iter().map(|&v| f64::from(v) * f64::from(v)).sum());
        }
        let mut members = self.members.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let m = &mut members[member];
        m.traces += sums.traces;
        m.energy += sums.energy;
        m.energy_squared += sums.energy_squared;
    }

    /// Every member's measure, the best marked; `None` for fewer than two members or nothing measured.
    pub fn finish(&self, steps: &[ScanStep]) -> Option<ScanFocus> {
        let members = self.members.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if steps.len() < 2 || members.iter().all(|s| s.traces == 0) {
            return None;
        }
        let norms: Vec<Option<f64>> = members.iter().map(Sums::varimax).collect();
        let best = norms.iter().enumerate().filter_map(|(i, v)| v.map(|v| (i, v))).max_by(|a, b| a.1.total_cmp(&b.1));
        let members = steps
            .iter()
            .zip(members.iter().zip(norms))
            .enumerate()
            .map(|(i, (&scan, (sums, varimax)))| MemberFocus {
                scan,
                varimax,
                traces: sums.traces,
                best: best.is_some_and(|(b, _)| b == i),
            })
            .collect();
        let deepest_m = self.deepest.filter(|&r| self.image.samples.value(self.image.samples.len - 1) > r);
        Some(ScanFocus { measure: "trace-energy varimax", deepest_m, members })
    }
}

impl ScanFocus {
    /// The best member, if any.
    pub fn best(&self) -> Option<ScanStep> {
        self.members.iter().find(|m| m.best).map(|m| m.scan)
    }

    /// What the page says of it: the measure of each member, the best marked.
    pub fn page_facts(&self) -> Vec<(String, String)> {
        let each: Vec<String> = self
            .members
            .iter()
            .map(|m| {
                let value = m.varimax.map_or("no signal".to_string(), |v| format!("{v:.3}"));
                let mark = if m.best { " (best)" } else { "" };
                format!("{} {value}{mark}", m.scan.label())
            })
            .collect();
        let depth = self.deepest_m.map(|d| format!(", down to {d:.0} m")).unwrap_or_default();
        let mut facts = vec![(format!("focus (trace-energy varimax{depth})"), each.join(" · "))];
        if let Some(best) = self.best() {
            facts.push(("best focused".into(), best.label()));
        }
        facts
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_varimax_norm_of_known_signals() {
        let of = |energies: &[f64]| {
            let mut s = Sums::default();
            energies.iter().for_each(|&e| s.add(e));
            s.varimax()
        };
        assert_eq!(of(&[2.0; 8]), Some(1.0));
        assert_eq!(of(&[0.0, 0.0, 5.0, 0.0]), Some(4.0));
        assert_eq!(of(&[0.0; 4]), None);
    }
}
