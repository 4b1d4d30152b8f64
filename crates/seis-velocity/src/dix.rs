//! The Dix table of a velocity function: at each pick, its two-way time, the RMS velocity down to it, the
//! interval velocity between it and the pick above, and its depth, worked out from the interval velocity
//! in depth the function was converted to, whatever form it was given in. A processing geophysicist reads
//! it against the contractor's listing, and sees where a form or unit was misread.
//!
//! The model is integrated exactly between its nodes: in a layer of constant velocity `v`, or one whose
//! velocity is linear in depth (`v = va + g (z - a)`), the two-way time is `2 dz / v` or
//! `(2 / g) ln(v / va)`, and `∫ v² dt = 2 ∫ v dz`. The RMS velocity at time `t` is `√(∫ v² dt / t)`, and
//! the interval velocity between two picks is Dix's `√((V₂² t₂ − V₁² t₁) / (t₂ − t₁))`.

use seis_core::error::{Error, Result};

use super::model::{Interpolation, VelocityTable};
use super::{Kind, VelocitySpec, VerticalDomain};

/// One pick of a Dix table.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DixRow {
    /// Two-way time, ms.
    pub twt_ms: f64,
    /// RMS velocity from the surface down to the pick, m/s.
    pub rms: f64,
    /// Interval velocity between the pick above (or the surface) and this one, m/s.
    pub interval: f64,
    /// Depth, m.
    pub depth_m: f64,
}

/// Where a walk down the model stands: depth (m), two-way time (s), and `∫ v² dt` (m²/s).
#[derive(Clone, Copy, Debug, Default)]
struct Reached {
    z: f64,
    t: f64,
    v2t: f64,
}

/// A stretch of the model whose velocity is constant or linear in depth: from depth `top` down to
/// `bottom` (infinite for the last), `v` at its top and the gradient `g` (1/s).
struct Piece {
    top: f64,
    bottom: f64,
    v: f64,
    g: f64,
}

impl Piece {
    /// From the piece's top down to depth `z` inside it: the two-way time and `∫ v² dt`.
    fn down_to(&self, z: f64) -> (f64, f64) {
        let dz = z - self.top;
        let vz = self.v + self.g * dz;
        let t = if self.g.abs() < 1e-12 { 2.0 * dz / self.v } else { 2.0 * (vz / self.v).ln() / self.g };
        (t, (self.v + vz) * dz)
    }

    /// The depth inside the piece two-way time `dt` below its top.
    fn depth_after(&self, dt: f64) -> f64 {
        if self.g.abs() < 1e-12 {
            self.top + self.v * dt / 2.0
        } else {
            self.top + self.v * ((self.g * dt / 2.0).exp() - 1.0) / self.g
        }
    }
}

/// The pieces of `table` below the surface, in order.
fn pieces(table: &VelocityTable) -> Vec<Piece> {
    let mut tops: Vec<f64> = vec![0.0];
    tops.extend(table.depths().iter().copied().filter(|&d| d > 0.0));
    let mut out = Vec::with_capacity(tops.len());
    for (i, &top) in tops.iter().enumerate() {
        let bottom = tops.get(i + 1).copied().unwrap_or(f64::INFINITY);
        let v = table.at(top);
        let g = match (table.interpolation(), bottom.is_finite()) {
            (Interpolation::Linear, true) => (table.at(bottom) - v) / (bottom - top),
            _ => 0.0,
        };
        out.push(Piece { top, bottom, v, g });
    }
    out
}

/// Walk down `table` to depth `z` (`Some`) or to two-way time `t` in s (`None` for `z`).
fn walk(table: &VelocityTable, z: Option<f64>, t: f64) -> Reached {
    let mut at = Reached::default();
    for piece in pieces(table) {
        let (dt, dv2t) = piece.down_to(piece.bottom.min(1e9));
        let ends_here = match z {
            Some(z) => z <= piece.bottom,
            None => at.t + dt >= t,
        };
        if ends_here {
            let depth = z.unwrap_or_else(|| piece.depth_after(t - at.t)).max(piece.top);
            let (dt, dv2t) = piece.down_to(depth);
            return Reached { z: depth, t: at.t + dt, v2t: at.v2t + dv2t };
        }
        at = Reached { z: piece.bottom, t: at.t + dt, v2t: at.v2t + dv2t };
    }
    at
}

/// The Dix table of `table` at `picks`: two-way times in s (`domain` time) or depths in m, increasing.
pub fn dix_rows(table: &VelocityTable, picks: &[f64], domain: VerticalDomain) -> Vec<DixRow> {
    let reached: Vec<Reached> = picks
        .iter()
        .map(|&p| match domain {
            VerticalDomain::Time => walk(table, None, p.max(0.0)),
            VerticalDomain::Depth => walk(table, Some(p.max(0.0)), 0.0),
        })
        .collect();
    let surface = table.at(0.0);
    let mut above = Reached::default();
    let mut rows = Vec::with_capacity(reached.len());
    for r in reached {
        let rms = if r.t > 0.0 { (r.v2t / r.t).sqrt() } else { surface };
        let interval = if r.t > above.t { ((r.v2t - above.v2t) / (r.t - above.t)).sqrt() } else { rms };
        rows.push(DixRow { twt_ms: r.t * 1000.0, rms, interval, depth_m: r.z });
        above = r;
    }
    rows
}

/// The lines of a Dix table, a header and one row per pick, with units.
pub fn dix_lines(rows: &[DixRow]) -> Vec<String> {
    let mut lines =
        vec![format!("{:>12} {:>12} {:>14} {:>12}", "twt (ms)", "RMS (m/s)", "interval (m/s)", "depth (m)")];
    lines.extend(
        rows.iter().map(|r| format!("{:>12.1} {:>12.1} {:>14.1} {:>12.1}", r.twt_ms, r.rms, r.interval, r.depth_m)),
    );
    lines
}

impl VelocitySpec {
    /// The picks of a table form (`kind = "table"`), in the conversions' units (two-way time in s or depth
    /// in m) with their domain; `None` for the other forms.
    pub fn table_picks(&self) -> Result<Option<(Vec<f64>, VerticalDomain)>> {
        if self.kind != Kind::Table {
            return Ok(None);
        }
        let (at, domain) = match (&self.path, &self.depths, &self.times) {
            (Some(path), ..) => {
                let rows = self.read_text(path, 2, "time or depth, velocity")?;
                let domain = self.domain.ok_or_else(|| Error::at_key("velocity.domain", "a text file needs it"))?;
                (rows.iter().map(|r| r.values[0]).collect::<Vec<f64>>(), domain)
            }
            (None, Some(depths), _) => (depths.clone(), VerticalDomain::Depth),
            (None, None, Some(times)) => (times.clone(), VerticalDomain::Time),
            (None, None, None) => return Ok(None),
        };
        let reading = self.reading(domain);
        Ok(Some((at.iter().map(|&a| reading.vertical_si(a)).collect(), domain)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_layers_give_their_velocities_times_and_depths() {
        // 2000 m/s for 200 m (200 ms), then 3000 m/s for 300 m (200 ms).
        let t = VelocityTable::new(vec![0.0, 200.0], vec![2000.0, 3000.0], Interpolation::Step).unwrap();
        let rows = dix_rows(&t, &[0.2, 0.4], VerticalDomain::Time);
        let rms = ((2000f64.powi(2) * 0.2 + 3000f64.powi(2) * 0.2) / 0.4).sqrt();
        let want = [(200.0, 2000.0, 2000.0, 200.0), (400.0, rms, 3000.0, 500.0)];
        for (r, w) in rows.iter().zip(want) {
            let got = (r.twt_ms, r.rms, r.interval, r.depth_m);
            assert!((got.0 - w.0).abs() < 1e-6 && (got.1 - w.1).abs() < 1e-6, "{got:?} for {w:?}");
            assert!((got.2 - w.2).abs() < 1e-6 && (got.3 - w.3).abs() < 1e-6, "{got:?} for {w:?}");
        }
        let by_depth = dix_rows(&t, &[200.0, 500.0], VerticalDomain::Depth);
        assert!((by_depth[1].twt_ms - 400.0).abs() < 1e-9 && (by_depth[1].rms - rms).abs() < 1e-6);
    }

    #[test]
    fn a_gradient_is_integrated_exactly() {
        // v = 1800 + 2 z: t(z) = ln(v / 1800) s (two-way, gradient 2 /s).
        let t = VelocityTable::new(vec![0.0, 400.0], vec![1800.0, 2600.0], Interpolation::Linear).unwrap();
        let rows = dix_rows(&t, &[400.0], VerticalDomain::Depth);
        assert!((rows[0].twt_ms - 1000.0 * (2600f64 / 1800.0).ln()).abs() < 1e-9, "{rows:?}");
        let back = dix_rows(&t, &[rows[0].twt_ms / 1000.0], VerticalDomain::Time);
        assert!((back[0].depth_m - 400.0).abs() < 1e-6, "{back:?}");
    }
}
