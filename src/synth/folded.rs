//! Folded, faulted layers: a volume with structure an interpreter recognises, and an answer known in closed
//! form. Four reflectors, folded into an anticline and a syncline along the crosslines, are cut by a normal
//! fault that drops the far side; every trace is modelled from the reflectors alone by Kirchhoff
//! (diffraction-sum) modelling, so that where a reflector ends at the fault its edge diffracts: the
//! unmigrated section shows the hyperbolas that migration collapses.
//!
//! The structure does not change along the inlines (cylindrical folds, a fault striking along them), which
//! turns the surface integral of Kirchhoff modelling into a line integral along each reflector: in the
//! exploding-reflector medium of half the velocity `ve = v / 2`, a trace at crossline position `y0` is
//!
//! ```text
//! u(y0, t) = Σ over points s of the reflectors  R(s) cos θ(s) Δl / sqrt(2π ve ρ(s)) · h(t − ρ(s) / ve)
//! ```
//!
//! with `ρ` the distance from the trace to `s` in the (crossline, depth) plane, `θ` the angle between that
//! ray and the reflector's normal, `Δl` the length of reflector each point stands for, and `h` the half
//! derivative of the Ricker wavelet (the stationary phase along the inlines turns a point's `1/r` spreading
//! into the cylindrical `1/sqrt(ρ)` and a quarter-turn of phase). Over a long flat reflector at depth `z`
//! the sum is the Ricker wavelet at `t = 2z / v` with amplitude `R`; at an edge it is half that, and a
//! diffraction beyond. Nothing here runs a migration.

use std::f64::consts::PI;

use num_complex::Complex64;
use rayon::prelude::*;
use rustfft::FftPlanner;
use serde::{Deserialize, Serialize};

use super::ricker;
use crate::error::{Error, Location, Result};
use crate::volume::{CoordTransform, Domain, Geometry, IndexBox, LineAxis, SampleAxis, VolumeReader};

/// The size and medium of a folded, faulted volume; the structure scales with it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FoldedSpec {
    pub ilines: usize,
    pub xlines: usize,
    pub samples: usize,
    pub dt_ms: f64,
    /// Distance between neighbouring traces (m), along both axes.
    pub bin_m: f64,
    /// Constant velocity (m/s).
    pub velocity: f64,
    /// Peak frequency of the Ricker wavelet (Hz).
    pub peak_hz: f64,
}

/// Reflection coefficients of the reflectors, shallowest first.
const REFLECTIVITY: [f64; 4] = [1.0, -0.7, 0.8, -0.6];
/// Their depths at the fold's hinge lines, as fractions of the deepest depth the record reaches.
const DEPTHS: [f64; 4] = [0.3, 0.45, 0.6, 0.75];
/// Fold amplitude, as a fraction of the deepest depth; it grows with depth by half over the four layers.
const FOLD: f64 = 0.06;
/// Dip of the fault plane from the horizontal.
const FAULT_DIP_DEG: f64 = 60.0;
/// Vertical throw of the fault, as a fraction of the deepest depth.
const THROW: f64 = 0.05;
/// Points along a reflector, metres apart: fine enough that neighbouring points' arrivals stay well within
/// a period at every angle (no aliasing of the sum).
const POINT_SPACING_M: f64 = 1.0;

/// A validated folded, faulted model, its traces computed.
#[derive(Clone, Debug)]
pub struct FoldedModel {
    spec: FoldedSpec,
    geometry: Geometry,
    /// One trace per crossline: the structure does not change along the inlines.
    traces: Vec<f32>,
}

/// One point of a reflector: crossline position and depth (m), the unit normal, its weight `R Δl`.
#[derive(Clone, Copy, Debug)]
struct Point {
    y: f64,
    z: f64,
    normal: [f64; 2],
    weight: f64,
}

impl FoldedModel {
    pub fn new(spec: FoldedSpec) -> Result<Self> {
        let positive = |x: f64| x.is_finite() && x > 0.0;
        if spec.ilines == 0 || spec.xlines < 2 || spec.samples < 2 {
            return Err(Error::config(
                "synthetic model",
                Location::File,
                "a folded model needs 2 crosslines and samples",
            ));
        }
        if !positive(spec.dt_ms) || !positive(spec.bin_m) || !positive(spec.velocity) || !positive(spec.peak_hz) {
            return Err(Error::config(
                "synthetic model",
                Location::File,
                "dt, bin, velocity and frequency must be positive",
            ));
        }
        let mut geometry = Geometry::regular(
            LineAxis::new(1, 1, spec.ilines),
            LineAxis::new(1, 1, spec.xlines),
            SampleAxis { origin: 0.0, step: spec.dt_ms, len: spec.samples, domain: Domain::Time },
        );
        geometry.coords =
            Some(CoordTransform { origin: [0.0, 0.0], per_iline: [spec.bin_m, 0.0], per_xline: [0.0, spec.bin_m] });
        let points = points(&spec);
        let wavelet = HalfDerivative::new(spec.peak_hz, spec.dt_ms / 1000.0);
        let ns = spec.samples;
        let mut traces = vec![0.0f32; spec.xlines * ns];
        traces.par_chunks_mut(ns).enumerate().for_each(|(j, trace)| {
            trace_at(&spec, &points, &wavelet, j as f64 * spec.bin_m, trace);
        });
        Ok(FoldedModel { spec, geometry, traces })
    }

    pub fn spec(&self) -> &FoldedSpec {
        &self.spec
    }

    /// The trace at 0-based grid position `(il, xl)`.
    pub fn trace(&self, _il: usize, xl: usize) -> &[f32] {
        &self.traces[xl * self.spec.samples..(xl + 1) * self.spec.samples]
    }

    /// Where the reflectors and the fault are, for tests and for people looking at the pictures.
    pub fn truth(&self) -> serde_json::Value {
        let s = &self.spec;
        let (zmax, width) = extent(s);
        serde_json::json!({
            "medium": { "kind": "constant", "velocity": s.velocity },
            "ricker_peak_hz": s.peak_hz,
            "reflectors": (0..4).map(|k| serde_json::json!({
                "depth_at_hinges_m": DEPTHS[k] * zmax,
                "reflectivity": REFLECTIVITY[k],
            })).collect::<Vec<_>>(),
            "fold": { "amplitude_m": FOLD * zmax, "wavelength_m": width, "along": "crosslines" },
            "fault": {
                "crossline_m_at_surface": fault_top(s),
                "dip_deg": FAULT_DIP_DEG,
                "throw_m": THROW * zmax,
                "down_side": "increasing crosslines",
            },
        })
    }

    /// Depth (m) of reflector `k` under crossline position `y` (m), and whether that point is on the
    /// fault's dropped side.
    pub fn reflector_depth(&self, k: usize, y: f64) -> (f64, bool) {
        surface(&self.spec, k, y)
    }
}

/// Deepest depth the record reaches (m), and the width of the survey across the crosslines (m).
fn extent(s: &FoldedSpec) -> (f64, f64) {
    let t_end = (s.samples - 1) as f64 * s.dt_ms / 1000.0;
    (s.velocity * t_end / 2.0, (s.xlines - 1) as f64 * s.bin_m)
}

/// Crossline position (m) where the fault plane meets the surface: it reaches the middle of the survey at
/// the depth of the second reflector.
fn fault_top(s: &FoldedSpec) -> f64 {
    let (zmax, width) = extent(s);
    0.58 * width - DEPTHS[1] * zmax / FAULT_DIP_DEG.to_radians().tan()
}

/// Depth of reflector `k` at `y`, and whether the point lies on the dropped side of the fault.
fn surface(s: &FoldedSpec, k: usize, y: f64) -> (f64, bool) {
    let (zmax, width) = extent(s);
    let amplitude = FOLD * zmax * (1.0 + 0.5 * k as f64 / 3.0);
    // An anticline a third of the way across, a syncline two thirds across.
    let fold = amplitude * (2.0 * PI * (y / width - 1.0 / 3.0)).cos();
    let z = DEPTHS[k] * zmax - fold;
    let fault_y = |z: f64| fault_top(s) + z / FAULT_DIP_DEG.to_radians().tan();
    let dropped = z + THROW * zmax;
    if y > fault_y(dropped) {
        (dropped, true)
    } else {
        (z, false)
    }
}

/// Points along every reflector, from an aperture beyond one edge of the survey to an aperture beyond the
/// other, tapered to nothing at the far ends so that the ends of the model do not diffract.
fn points(s: &FoldedSpec) -> Vec<Point> {
    let (zmax, width) = extent(s);
    let aperture = zmax;
    let (y0, y1) = (-aperture, width + aperture);
    let n = ((y1 - y0) / POINT_SPACING_M).ceil() as usize;
    let mut out = Vec::new();
    for (k, reflectivity) in REFLECTIVITY.iter().enumerate() {
        for i in 0..n {
            let y = y0 + (i as f64 + 0.5) * POINT_SPACING_M;
            let (z, side) = surface(s, k, y);
            // The local slope, from the neighbours on the same side of the fault; a point whose neighbours
            // lie across the fault is at an edge, and keeps the slope of its own side.
            let h = 0.25 * POINT_SPACING_M;
            let (za, sa) = surface(s, k, y - h);
            let (zb, sb) = surface(s, k, y + h);
            let slope = match (sa == side, sb == side) {
                (true, true) => (zb - za) / (2.0 * h),
                (true, false) => (z - za) / h,
                (false, true) => (zb - z) / h,
                (false, false) => 0.0,
            };
            let norm = (1.0 + slope * slope).sqrt();
            let dl = POINT_SPACING_M * norm;
            let ramp = aperture * 0.5;
            let edge = (y - y0).min(y1 - y).clamp(0.0, ramp) / ramp;
            let taper = 0.5 - 0.5 * (PI * edge).cos();
            out.push(Point { y, z, normal: [-slope / norm, 1.0 / norm], weight: reflectivity * dl * taper });
        }
    }
    out
}

/// The half derivative of the Ricker wavelet, tabulated finely for lookups at any delay.
struct HalfDerivative {
    table: Vec<f64>,
    /// Table step (s) and the delay of its first entry (s, negative).
    step: f64,
    start: f64,
}

impl HalfDerivative {
    fn new(f: f64, dt: f64) -> Self {
        let step = dt / 16.0;
        let half = 8.0 / f;
        let n = ((4.0 * half / step).ceil() as usize).next_power_of_two();
        // Ricker centred at zero, wrapped: index i is time i·step for i < n/2, (i − n)·step beyond.
        let mut x: Vec<Complex64> = (0..n)
            .map(|i| Complex64::new(ricker(f, if i < n / 2 { i } else { i.wrapping_sub(n) } as i64 as f64 * step), 0.0))
            .collect();
        let mut planner = FftPlanner::new();
        planner.plan_fft_forward(n).process(&mut x);
        for (i, v) in x.iter_mut().enumerate() {
            // (iω)^½ with the principal root: √|ω| e^{±iπ/4}; numpy's and rustfft's forward sign.
            let k = if i <= n / 2 { i as f64 } else { i as f64 - n as f64 };
            let w = 2.0 * PI * k / (n as f64 * step);
            let root = Complex64::from_polar(w.abs().sqrt(), PI / 4.0 * w.signum());
            *v *= root / n as f64;
        }
        planner.plan_fft_inverse(n).process(&mut x);
        let m = (half / step).ceil() as usize;
        let table = (0..=2 * m)
            .map(|j| {
                let i = j as i64 - m as i64;
                x[i.rem_euclid(n as i64) as usize].re
            })
            .collect();
        HalfDerivative { table, step, start: -(m as f64) * step }
    }

    fn support(&self) -> f64 {
        -self.start
    }

    /// The value at delay `t` (s): linear between table entries, zero beyond the table.
    fn at(&self, t: f64) -> f64 {
        let pos = (t - self.start) / self.step;
        if pos < 0.0 || pos >= (self.table.len() - 1) as f64 {
            return 0.0;
        }
        let i = pos.floor() as usize;
        let f = pos - i as f64;
        self.table[i] * (1.0 - f) + self.table[i + 1] * f
    }
}

/// The trace at crossline position `y0` (m).
fn trace_at(s: &FoldedSpec, points: &[Point], h: &HalfDerivative, y0: f64, out: &mut [f32]) {
    let ve = s.velocity / 2.0;
    let dt = s.dt_ms / 1000.0;
    let mut acc = vec![0.0f64; out.len()];
    let support = h.support();
    for p in points {
        let (dy, dz) = (p.y - y0, p.z);
        let rho = dy.hypot(dz);
        if rho <= 0.0 {
            continue;
        }
        let cos = ((-dy) * p.normal[0] + (-dz) * p.normal[1]).abs() / rho;
        let amp = p.weight * cos / (2.0 * PI * ve * rho).sqrt();
        let tau = rho / ve;
        let first = ((tau - support) / dt).ceil().max(0.0) as usize;
        let last = (((tau + support) / dt).floor() as usize).min(out.len().saturating_sub(1));
        for (i, a) in acc.iter_mut().enumerate().take(last + 1).skip(first) {
            *a += amp * h.at(i as f64 * dt - tau);
        }
    }
    for (o, a) in out.iter_mut().zip(acc) {
        *o = a as f32;
    }
}

impl VolumeReader for FoldedModel {
    fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    fn describe(&self) -> String {
        "synthetic model (folded, faulted layers)".into()
    }

    fn read_box(&self, b: &IndexBox, out: &mut [f32]) -> Result<()> {
        crate::volume::check_box_buffer(b, out)?;
        let ns = b.s.len();
        if ns == 0 {
            return Ok(());
        }
        let nx = b.xl.len();
        for (t, tr) in out.chunks_mut(ns).enumerate() {
            tr.copy_from_slice(&self.trace(b.il.start + t / nx, b.xl.start + t % nx)[b.s.clone()]);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> FoldedSpec {
        FoldedSpec { ilines: 2, xlines: 121, samples: 251, dt_ms: 4.0, bin_m: 12.5, velocity: 2000.0, peak_hz: 20.0 }
    }

    #[test]
    fn the_half_derivative_applied_twice_is_the_derivative() {
        // Stationary phase over a flat reflector turns h back into the Ricker wavelet: check h's spectrum
        // instead, by its energy peak lying above the Ricker's (a half derivative raises the frequency).
        let h = HalfDerivative::new(25.0, 0.004);
        let peak = h.table.iter().copied().fold(0.0f64, |m, v| m.max(v.abs()));
        assert!(peak > 0.0);
        assert!(h.at(h.support() + 0.01) == 0.0 && h.at(-h.support() - 0.01) == 0.0);
    }

    #[test]
    fn a_flat_stretch_reflects_the_ricker_wavelet_at_its_depth_with_its_reflectivity() {
        let s = spec();
        let m = FoldedModel::new(s.clone()).unwrap();
        // At the anticline's crest (a third of the way across) the first reflector is flat; its depth there
        // is the hinge depth minus the fold's amplitude.
        let j = 40;
        let y = j as f64 * s.bin_m;
        let (z, dropped) = m.reflector_depth(0, y);
        assert!(!dropped);
        let t = 2.0 * z / s.velocity;
        let trace = m.trace(0, j);
        let i = (t / 0.004).round() as usize;
        let (k, peak) = (i - 3..=i + 3).map(|k| (k, trace[k])).max_by(|a, b| a.1.total_cmp(&b.1)).unwrap();
        assert!((k as f64 * 0.004 - t).abs() <= 0.004, "peak at {k}, expected near {i}");
        // Reflectivity 1 at a curved crest focuses a little: within 25 % of 1.
        assert!((peak - 1.0).abs() < 0.25, "peak {peak}");
    }

    #[test]
    fn the_fault_drops_the_far_side_and_its_edges_diffract() {
        let s = spec();
        let m = FoldedModel::new(s.clone()).unwrap();
        let (zmax, width) = extent(&s);
        // Far from the fault on the dropped side, the reflectors lie deeper by the throw.
        let (z, dropped) = m.reflector_depth(2, 0.9 * width);
        assert!(dropped);
        let unfolded = DEPTHS[2] * zmax;
        assert!(z > unfolded - FOLD * zmax * 1.5 + THROW * zmax - 1e-9, "{z}");
        // Energy before the first reflection's time under the fault's edge: only a diffraction puts it
        // there. Compare a trace near the edge of the second reflector with one far from any edge.
        let fault_at = |k: usize| {
            (0..s.xlines).find(|&j| m.reflector_depth(k, j as f64 * s.bin_m).1).expect("the fault is in the survey")
        };
        let j = fault_at(3);
        assert!(j > 10 && j < s.xlines - 10, "fault at crossline index {j}");
        // A trace two hundred metres beyond the deepest edge on the upthrown side sees the edge's
        // diffraction after the reflector itself.
        let before = j - (200.0 / s.bin_m) as usize;
        let (z3, _) = m.reflector_depth(3, before as f64 * s.bin_m);
        let t_reflection = 2.0 * z3 / s.velocity;
        let edge_z = m.reflector_depth(3, (j - 1) as f64 * s.bin_m).0;
        let t_diffraction = 2.0 * ((j - 1 - before) as f64 * s.bin_m).hypot(edge_z) / s.velocity;
        assert!(t_diffraction > t_reflection + 0.02, "{t_diffraction} vs {t_reflection}");
        let trace = m.trace(0, before);
        let window = |t: f64| {
            let i = (t / 0.004).round() as usize;
            (i.saturating_sub(5)..(i + 5).min(s.samples)).map(|k| trace[k].abs()).fold(0.0f32, f32::max)
        };
        assert!(window(t_diffraction) > 0.02, "no diffraction at {t_diffraction} s: {}", window(t_diffraction));
    }
}
