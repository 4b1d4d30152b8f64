//! Synthetic post-stack volumes with known answers: point diffractors, dipping planes, spikes (for impulse
//! responses) and flat reflectors, in a constant or flat-layered medium, convolved with a Ricker wavelet.
//!
//! Every trace is computed on its own from analytic zero-offset travel times (straight rays in a constant
//! medium, [`raytrace`] through layers) with exact sub-sample delays: nothing here runs a migration
//! backwards. Because a trace needs nothing but its own position, a model is also a [`VolumeReader`]: a
//! benchmark can migrate a volume of any size straight from the formulas, holding no copy of the input.
//!
//! Positions are in metres on the survey grid: trace `(il, xl)` (0-based indices) sits at
//! `x = il · bin[0]`, `y = xl · bin[1]`, and the first sample is at time 0.

pub mod folded;
pub mod raytrace;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Location, Result};
use crate::velocity::{Interpolation, VelocityModel, VelocityTable};
use crate::volume::{CoordTransform, Domain, Geometry, IndexBox, LineAxis, SampleAxis, Volume, VolumeReader};

pub use raytrace::Layer;

/// The medium the synthetic waves travel through (true velocities, m/s).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum Medium {
    Constant {
        velocity: f64,
    },
    /// Flat layers, the first with its top at the surface.
    Layered {
        layers: Vec<Layer>,
    },
}

/// Something that reflects or diffracts, or an impulse placed directly in the data.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum Event {
    /// A point scatterer at `(x, y, z)` m. Its zero-offset response is a hyperboloid (in a constant medium
    /// `t = sqrt(t0² + 4 r² / v²)`), with amplitude falling as `t0 / t` (spherical spreading).
    Diffractor { x: f64, y: f64, z: f64, amplitude: f64 },
    /// A plane through `(x, y, z)` m, dipping by `dip_deg` towards the azimuth `azimuth_deg` (0: towards
    /// increasing inline index, 90: towards increasing crossline index). Constant medium only. Its zero-offset
    /// time is twice the normal distance to the plane over `v`, so the time dip obeys `sin θ = (v/2) dt/dx`.
    Plane { x: f64, y: f64, z: f64, dip_deg: f64, azimuth_deg: f64, amplitude: f64 },
    /// One wavelet on one trace (0-based indices) at `t_ms`: migrating it gives the impulse response.
    Spike { il: usize, xl: usize, t_ms: f64, amplitude: f64 },
    /// A horizontal reflector at depth `z` m.
    Reflector { z: f64, amplitude: f64 },
}

/// Gaussian noise of a given RMS, reproducible from a seed trace by trace.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Noise {
    pub rms: f64,
    pub seed: u64,
}

/// Everything that defines a synthetic volume.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelSpec {
    pub ilines: usize,
    pub xlines: usize,
    pub samples: usize,
    pub dt_ms: f64,
    /// Distance between inlines and between crosslines (m).
    pub bin_m: [f64; 2],
    pub medium: Medium,
    /// Peak frequency of the Ricker wavelet (Hz).
    pub peak_hz: f64,
    #[serde(default)]
    pub events: Vec<Event>,
    #[serde(default)]
    pub noise: Option<Noise>,
}

/// A validated synthetic volume.
#[derive(Clone, Debug)]
pub struct Model {
    spec: ModelSpec,
    geometry: Geometry,
    layers: Vec<Layer>,
}

/// The Ricker wavelet of peak frequency `f` at time `t` (s): `(1 − 2π²f²t²) exp(−π²f²t²)`.
pub fn ricker(f: f64, t: f64) -> f64 {
    let a = (std::f64::consts::PI * f * t).powi(2);
    (1.0 - 2.0 * a) * (-a).exp()
}

/// Half-length of the stretch of trace a Ricker wavelet touches: beyond it the wavelet is below 1e-9.
fn ricker_support(f: f64) -> f64 {
    1.5 / f
}

impl Model {
    pub fn new(spec: ModelSpec) -> Result<Model> {
        let bad = |m: String| Err(Error::config("synthetic model", Location::File, m));
        if spec.ilines == 0 || spec.xlines == 0 || spec.samples < 2 {
            return bad(format!("a volume of {} × {} × {} samples is empty", spec.ilines, spec.xlines, spec.samples));
        }
        let positive = |x: f64| x.is_finite() && x > 0.0;
        if !positive(spec.dt_ms) || !positive(spec.bin_m[0]) || !positive(spec.bin_m[1]) || !positive(spec.peak_hz) {
            return bad("dt_ms, bin_m and peak_hz must be positive".into());
        }
        let layers = match &spec.medium {
            Medium::Constant { velocity } => vec![Layer { top: 0.0, velocity: *velocity }],
            Medium::Layered { layers } => layers.clone(),
        };
        if layers.first().map(|l| l.top) != Some(0.0) {
            return bad("the first layer must start at the surface (top = 0)".into());
        }
        if layers.windows(2).any(|w| !(w[0].top < w[1].top && w[1].top.is_finite()))
            || layers.iter().any(|l| !positive(l.velocity))
        {
            return bad("layer tops must increase and velocities be positive".into());
        }
        let layered = layers.len() > 1;
        if layered && spec.events.iter().any(|e| matches!(e, Event::Plane { .. })) {
            return bad("dipping planes need a constant medium".into());
        }
        let mut geometry = Geometry::regular(
            LineAxis::new(1, 1, spec.ilines),
            LineAxis::new(1, 1, spec.xlines),
            SampleAxis { origin: 0.0, step: spec.dt_ms, len: spec.samples, domain: Domain::Time },
        );
        geometry.coords = Some(CoordTransform {
            origin: [0.0, 0.0],
            per_iline: [spec.bin_m[0], 0.0],
            per_xline: [0.0, spec.bin_m[1]],
        });
        Ok(Model { spec, geometry, layers })
    }

    pub fn spec(&self) -> &ModelSpec {
        &self.spec
    }

    pub fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    pub fn bin_size(&self) -> [f64; 2] {
        self.spec.bin_m
    }

    /// The velocity model the migration should use to image this volume: constant, or a step v(z) table
    /// with one node per layer top.
    pub fn velocity_model(&self) -> VelocityModel {
        match &self.spec.medium {
            Medium::Constant { velocity } => VelocityModel::Constant(*velocity),
            Medium::Layered { layers } => VelocityModel::Table(
                VelocityTable::new(
                    layers.iter().map(|l| l.top).collect(),
                    layers.iter().map(|l| l.velocity).collect(),
                    Interpolation::Step,
                )
                .expect("layers were validated"),
            ),
        }
    }

    /// Arrival time (s) and amplitude of `event` on the trace at `(il, xl)`, if it reaches that trace.
    fn arrival(&self, event: &Event, il: usize, xl: usize) -> Option<(f64, f64)> {
        let (x, y) = (il as f64 * self.spec.bin_m[0], xl as f64 * self.spec.bin_m[1]);
        match *event {
            Event::Diffractor { x: x0, y: y0, z, amplitude } => {
                let t = raytrace::two_way_time(&self.layers, f64::hypot(x - x0, y - y0), z);
                let t0 = raytrace::vertical_two_way_time(&self.layers, z);
                Some((t, amplitude * t0 / t))
            }
            Event::Plane { x: x0, y: y0, z, dip_deg, azimuth_deg, amplitude } => {
                let (dip, az) = (dip_deg.to_radians(), azimuth_deg.to_radians());
                let depth_below = z + dip.tan() * ((x - x0) * az.cos() + (y - y0) * az.sin());
                let v = self.layers[0].velocity;
                (depth_below > 0.0).then(|| (2.0 * depth_below * dip.cos() / v, amplitude))
            }
            Event::Spike { il: i, xl: j, t_ms, amplitude } => {
                (i == il && j == xl).then_some((t_ms / 1000.0, amplitude))
            }
            Event::Reflector { z, amplitude } => Some((raytrace::vertical_two_way_time(&self.layers, z), amplitude)),
        }
    }

    /// The trace at 0-based grid position `(il, xl)`; `out` holds one value per sample.
    pub fn trace(&self, il: usize, xl: usize, out: &mut [f32]) {
        let dt = self.spec.dt_ms / 1000.0;
        let f = self.spec.peak_hz;
        let half = ricker_support(f);
        out.fill(0.0);
        for e in &self.spec.events {
            let Some((tau, amp)) = self.arrival(e, il, xl) else { continue };
            let first = ((tau - half) / dt).ceil().max(0.0) as usize;
            let last = (((tau + half) / dt).floor() as usize).min(out.len().saturating_sub(1));
            for (i, o) in out.iter_mut().enumerate().take(last + 1).skip(first) {
                *o += (amp * ricker(f, i as f64 * dt - tau)) as f32;
            }
        }
        if let Some(noise) = self.spec.noise {
            let mut rng = SplitMix64::for_trace(noise.seed, (il * self.spec.xlines + xl) as u64);
            for o in out.iter_mut() {
                *o += (noise.rms * rng.normal()) as f32;
            }
        }
    }

    /// The whole volume in memory, computed in parallel over traces.
    pub fn generate(&self) -> Volume {
        let mut v = Volume::zeros(self.geometry.clone());
        let (ns, nx) = (self.spec.samples, self.spec.xlines);
        v.data.par_chunks_mut(ns).enumerate().for_each(|(t, tr)| self.trace(t / nx, t % nx, tr));
        v
    }

    /// Where each event is, in depth and in time, for tests and for people looking at the images.
    pub fn truth(&self) -> serde_json::Value {
        let events: Vec<_> = self
            .spec
            .events
            .iter()
            .map(|e| match *e {
                Event::Diffractor { x, y, z, amplitude } => serde_json::json!({
                    "kind": "diffractor", "x_m": x, "y_m": y, "depth_m": z, "amplitude": amplitude,
                    "il_index": x / self.spec.bin_m[0], "xl_index": y / self.spec.bin_m[1],
                    "apex_time_ms": 1000.0 * raytrace::vertical_two_way_time(&self.layers, z),
                }),
                Event::Plane { x, y, z, dip_deg, azimuth_deg, amplitude } => serde_json::json!({
                    "kind": "plane", "x_m": x, "y_m": y, "depth_m": z, "dip_deg": dip_deg,
                    "azimuth_deg": azimuth_deg, "amplitude": amplitude,
                    "time_dip_ms_per_m": 2000.0 * dip_deg.to_radians().sin() / self.layers[0].velocity,
                }),
                Event::Spike { il, xl, t_ms, amplitude } => serde_json::json!({
                    "kind": "spike", "il_index": il, "xl_index": xl, "time_ms": t_ms, "amplitude": amplitude,
                    "hemisphere_radius_m": (self.layers.len() == 1)
                        .then(|| self.layers[0].velocity * t_ms / 2000.0),
                }),
                Event::Reflector { z, amplitude } => serde_json::json!({
                    "kind": "reflector", "depth_m": z, "amplitude": amplitude,
                    "time_ms": 1000.0 * raytrace::vertical_two_way_time(&self.layers, z),
                }),
            })
            .collect();
        serde_json::json!({
            "medium": serde_json::to_value(&self.spec.medium).expect("plain data"),
            "ricker_peak_hz": self.spec.peak_hz,
            "bin_m": self.spec.bin_m,
            "events": events,
        })
    }
}

impl VolumeReader for Model {
    fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    fn describe(&self) -> String {
        format!("synthetic model ({} events)", self.spec.events.len())
    }

    fn read_box(&self, b: &IndexBox, out: &mut [f32]) -> Result<()> {
        crate::volume::check_box_buffer(b, out)?;
        let ns = b.s.len();
        if ns == 0 {
            return Ok(());
        }
        let nx = b.xl.len();
        out.par_chunks_mut(ns).enumerate().for_each_init(
            || vec![0.0f32; self.spec.samples],
            |full, (t, tr)| {
                self.trace(b.il.start + t / nx, b.xl.start + t % nx, full);
                tr.copy_from_slice(&full[b.s.clone()]);
            },
        );
        Ok(())
    }
}

/// A small, fast, seedable generator (SplitMix64), enough for reproducible noise.
///
/// Its state walks a fixed sequence in steps of [`GOLDEN_GAMMA`], so two traces must start far apart on
/// that walk: a start that differs from the next trace's by a multiple of the step gives the same noise
/// shifted by samples. Each trace therefore starts at the mixed hash of the seed and its index.
struct SplitMix64(u64);

/// SplitMix64's increment, 2^64 divided by the golden ratio.
const GOLDEN_GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

impl SplitMix64 {
    /// The generator of trace `index` (in `[il][xl]` order) under `seed`.
    fn for_trace(seed: u64, index: u64) -> Self {
        SplitMix64(mix(mix(seed).wrapping_add(mix(index.wrapping_add(GOLDEN_GAMMA)))))
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(GOLDEN_GAMMA);
        mix(self.0)
    }

    /// Uniform in (0, 1].
    fn uniform(&mut self) -> f64 {
        ((self.next() >> 11) + 1) as f64 / (1u64 << 53) as f64
    }

    /// Standard normal (Box-Muller).
    fn normal(&mut self) -> f64 {
        let (a, b) = (self.uniform(), self.uniform());
        (-2.0 * a.ln()).sqrt() * (std::f64::consts::TAU * b).cos()
    }
}

/// SplitMix64's output function: a bijection of 64-bit words that spreads every input bit over the output.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(events: Vec<Event>) -> ModelSpec {
        ModelSpec {
            ilines: 5,
            xlines: 4,
            samples: 200,
            dt_ms: 2.0,
            bin_m: [10.0, 20.0],
            medium: Medium::Constant { velocity: 2000.0 },
            peak_hz: 25.0,
            events,
            noise: None,
        }
    }

    #[test]
    fn ricker_values() {
        assert_eq!(ricker(30.0, 0.0), 1.0);
        // zero crossings at t = ±1 / (π f √2)
        let t0 = 1.0 / (std::f64::consts::PI * 30.0 * 2f64.sqrt());
        assert!(ricker(30.0, t0).abs() < 1e-12);
        assert!(ricker(30.0, ricker_support(30.0)).abs() < 1e-8);
    }

    #[test]
    fn diffractor_apex_and_flank_times() {
        let m = Model::new(spec(vec![Event::Diffractor { x: 20.0, y: 20.0, z: 150.0, amplitude: 1.0 }])).unwrap();
        let mut tr = vec![0.0; 200];
        m.trace(2, 1, &mut tr); // apex: t0 = 2·150/2000 = 150 ms = sample 75
        let peak = tr.iter().enumerate().max_by(|a, b| a.1.total_cmp(b.1)).unwrap();
        assert_eq!((peak.0, *peak.1), (75, 1.0));
        m.trace(4, 1, &mut tr); // 20 m away: t = 2·hypot(20, 150)/2000 s, amplitude t0 / t
        let t = 2.0 * f64::hypot(20.0, 150.0) / 2000.0;
        let i = (t / 0.002).round() as usize;
        let expect = (0.15 / t) * ricker(25.0, i as f64 * 0.002 - t);
        assert!((tr[i] as f64 - expect).abs() < 1e-6);
    }

    #[test]
    fn plane_time_dip_and_spike() {
        let dip = 30f64;
        let m = Model::new(spec(vec![
            Event::Plane { x: 0.0, y: 0.0, z: 100.0, dip_deg: dip, azimuth_deg: 0.0, amplitude: 1.0 },
            Event::Spike { il: 1, xl: 3, t_ms: 50.0, amplitude: 2.0 },
        ]))
        .unwrap();
        let a = m.arrival(&m.spec.events[0], 0, 0).unwrap().0;
        let b = m.arrival(&m.spec.events[0], 4, 0).unwrap().0;
        // sin θ = (v / 2) dt/dx
        assert!(((b - a) / 40.0 * 1000.0 - dip.to_radians().sin()).abs() < 1e-12);
        let c = m.arrival(&m.spec.events[0], 1, 3).unwrap().0;
        let mut tr = vec![0.0; 200];
        m.trace(1, 3, &mut tr);
        assert!((tr[25] - (2.0 + ricker(25.0, 0.05 - c)) as f32).abs() < 1e-6);
    }

    #[test]
    fn reader_generate_and_noise_agree() {
        let mut s = spec(vec![Event::Reflector { z: 100.0, amplitude: 1.0 }]);
        s.noise = Some(Noise { rms: 0.1, seed: 7 });
        let m = Model::new(s).unwrap();
        let v = m.generate();
        let b = IndexBox { il: 1..3, xl: 2..4, s: 10..60 };
        let mut out = vec![0.0; b.len()];
        m.read_box(&b, &mut out).unwrap();
        assert_eq!(out, v.cut(&b).data);
        // noise RMS over the volume, away from the reflector at 100 ms
        let quiet: Vec<f32> = v.data.chunks(200).flat_map(|t| t[120..].to_vec()).collect();
        let rms = (quiet.iter().map(|x| (x * x) as f64).sum::<f64>() / quiet.len() as f64).sqrt();
        assert!((rms - 0.1).abs() < 0.01, "{rms}");
        assert_eq!(m.truth()["events"][0]["time_ms"], 100.0);
    }

    /// Noise is drawn independently for every trace: the normalised cross-correlation of neighbouring traces
    /// (one, two and four crosslines apart, one and two inlines apart, diagonally) is near zero at every lag
    /// of up to four samples, not only the variance right.
    #[test]
    fn noise_is_independent_between_traces() {
        let mut s = spec(Vec::new());
        (s.ilines, s.xlines, s.samples) = (16, 16, 400);
        s.noise = Some(Noise { rms: 1.0, seed: 1 });
        let v = Model::new(s).unwrap().generate();
        let trace = |il: usize, xl: usize| &v.data[(il * 16 + xl) * 400..][..400];
        let correlation = |a: &[f32], b: &[f32], lag: isize| {
            let pairs = (0..400isize).filter_map(|k| {
                let j = k + lag;
                (0..400).contains(&j).then(|| (a[k as usize] as f64, b[j as usize] as f64))
            });
            let (mut ab, mut aa, mut bb) = (0.0, 0.0, 0.0);
            for (x, y) in pairs {
                (ab, aa, bb) = (ab + x * y, aa + x * x, bb + y * y);
            }
            ab / (aa * bb).sqrt()
        };
        for (di, dj) in [(0, 1), (0, 2), (0, 4), (1, 0), (2, 0), (1, 1)] {
            for lag in -4..=4 {
                let r: Vec<f64> = (0..16 - di)
                    .flat_map(|i| (0..16 - dj).map(move |j| (i, j)))
                    .map(|(i, j)| correlation(trace(i, j), trace(i + di, j + dj), lag))
                    .collect();
                let mean = r.iter().sum::<f64>() / r.len() as f64;
                let largest = r.iter().fold(0.0f64, |m, x| m.max(x.abs()));
                // 400 samples: one correlation has a spread of 1/20; the mean of 100-256 of them, 1/200.
                assert!(mean.abs() < 0.03, "traces ({di}, {dj}) apart at lag {lag}: mean correlation {mean:.3}");
                assert!(largest < 0.3, "traces ({di}, {dj}) apart at lag {lag}: a correlation of {largest:.3}");
            }
        }
    }

    /// A model of benchmark size (here 1 GiB of samples) costs nothing until it is read, and reads any
    /// chunk on its own.
    #[test]
    fn benchmark_scale_models_stream() {
        let mut s = spec(vec![Event::Diffractor { x: 5000.0, y: 5000.0, z: 200.0, amplitude: 1.0 }]);
        (s.ilines, s.xlines, s.samples) = (1024, 1024, 256);
        let m = Model::new(s).unwrap();
        assert_eq!(m.geometry().n_values() * 4, 1 << 30);
        let b = IndexBox { il: 500..501, xl: 0..1024, s: 0..256 };
        let mut inline = vec![0.0; b.len()];
        m.read_box(&b, &mut inline).unwrap();
        let mut tr = vec![0.0; 256];
        m.trace(500, 250, &mut tr);
        assert_eq!(&inline[250 * 256..251 * 256], &tr[..]);
        assert!(tr.iter().any(|&x| x != 0.0));
    }

    #[test]
    fn invalid_models_are_refused() {
        let mut s = spec(vec![Event::Plane { x: 0.0, y: 0.0, z: 1.0, dip_deg: 1.0, azimuth_deg: 0.0, amplitude: 1.0 }]);
        s.medium = Medium::Layered {
            layers: vec![Layer { top: 0.0, velocity: 1500.0 }, Layer { top: 100.0, velocity: 2000.0 }],
        };
        assert!(Model::new(s.clone()).is_err());
        s.events.clear();
        assert!(Model::new(s.clone()).is_ok());
        s.medium = Medium::Layered { layers: vec![Layer { top: 10.0, velocity: 1500.0 }] };
        assert!(Model::new(s).is_err());
    }
}
