//! Complex-trace attributes computed by each engine where its image is (on the device for the GPU), against
//! an analytic signal: a flat reflector whose wavelet is a Gaussian-windowed cosine, migrated at constant
//! velocity, images as the same wavelet stretched into depth, whose envelope, phase and frequency are
//! known in closed form. One test body, every backend.

use std::f64::consts::TAU;

use seisimage::attributes::{Attribute, AttributeOutput};
use seisimage::imaging::{ImageRequest, ImagingParams, Method};
use seisimage::velocity::VelocityModel;
use seisimage::volume::{Domain, Geometry, IndexBox, LineAxis, SampleAxis, Volume};
use seisimage::window::{LateralPad, WindowParams};

use crate::common::{envelope, for_each_backend, Job};

const V: f64 = 2000.0;
/// Centre (s), width (s) and frequency (Hz) of the wavelet.
const T0: f64 = 0.3;
const SIGMA: f64 = 0.03;
const F0: f64 = 25.0;
const DZ: f64 = 4.0;

fn wavelet(t: f64) -> f64 {
    let u = t - T0;
    (-u * u / (2.0 * SIGMA * SIGMA)).exp() * (TAU * F0 * u).cos()
}

/// 8 × 8 traces of 300 samples of 2 ms, each the wavelet: a flat reflector at 300 m.
fn input() -> Volume {
    let g = Geometry::regular(
        LineAxis::new(1, 1, 8),
        LineAxis::new(1, 1, 8),
        SampleAxis { origin: 0.0, step: 2.0, len: 300, domain: Domain::Time },
    );
    let mut v = Volume::zeros(g);
    for (k, x) in v.data.iter_mut().enumerate() {
        *x = wavelet((k % 300) as f64 * 0.002) as f32;
    }
    v
}

#[test]
fn attributes_of_a_migrated_gaussian_windowed_cosine_match_their_closed_form_on_every_backend() {
    let src = input();
    // A laterally constant field with no edge taper and no padding migrates exactly: the image at depth z
    // is the wavelet at t = 2z / v.
    let job = Job {
        bin: [10.0, 10.0],
        window: WindowParams { edge_taper_traces: 0, lateral_pad: LateralPad::Traces(0), ..Default::default() },
        params: ImagingParams {
            method: Method::PhaseShift,
            dz: DZ,
            zmax: Some(500.0),
            fmax: 80.0,
            ..Default::default()
        },
        velocity: VelocityModel::Constant(V),
    };
    let image = job.image_geometry(&src);
    let nz = image.samples.len;
    let section = IndexBox { il: 3..4, ..image.full_box() };
    let level = 78; // 312 m, 12 m under the envelope's peak
    let half = 25;
    let window = IndexBox { s: level - half..level + half + 1, ..image.full_box() };
    let whole = |a| Some(AttributeOutput { attribute: a, keep: 0..nz, frequency_scale: 1000.0 / DZ });
    let slice = |a| Some(AttributeOutput { attribute: a, keep: half..half + 1, frequency_scale: 1000.0 / DZ });
    let request = ImageRequest {
        boxes: vec![
            section.clone(),
            section.clone(),
            section.clone(),
            section.clone(),
            section,
            window.clone(),
            window,
        ],
        attributes: vec![
            None,
            whole(Attribute::Envelope),
            whole(Attribute::Phase),
            whole(Attribute::Frequency),
            whole(Attribute::CosPhase),
            slice(Attribute::Envelope),
            slice(Attribute::Phase),
        ],
    };
    for_each_backend(|engine| {
        let out = job.run(engine, &src, &request);
        let name = engine.name().to_string();
        assert_eq!(out[1].len(), 8 * nz, "{name}: one envelope value per sample of the section");
        assert_eq!(out[5].len(), 8 * 8, "{name}: the depth slice keeps one level");
        // The image's own amplitude: the migrated wavelet, A times the input's.
        let trace: Vec<f64> = out[0][2 * nz..3 * nz].iter().map(|&v| f64::from(v)).collect();
        let peak = trace.iter().enumerate().max_by(|a, b| a.1.total_cmp(b.1)).unwrap();
        assert!((peak.0 as f64 * DZ - V * T0 / 2.0).abs() <= DZ, "{name}: peak at level {}", peak.0);
        let a = *peak.1;
        assert!((a - 1.0).abs() < 0.1, "{name}: amplitude {a}");
        // An independent envelope of the amplitude trace (f64 FFT of the test's own).
        let reference = envelope(&trace);
        for k in 55..95 {
            let t = 2.0 * k as f64 * DZ / V;
            let u = t - T0;
            let env = a * (-u * u / (2.0 * SIGMA * SIGMA)).exp();
            let at = |b: usize| f64::from(out[b][2 * nz + k]);
            assert!((at(1) - env).abs() < 0.02, "{name}: envelope at {k}: {} vs {env}", at(1));
            assert!((at(1) - reference[k]).abs() < 0.01, "{name}: envelope at {k}: {} vs {}", at(1), reference[k]);
            let phase = (TAU * F0 * u).to_degrees();
            let dp = ((at(2) - phase).rem_euclid(360.0) + 180.0).rem_euclid(360.0) - 180.0;
            assert!(dp.abs() < 2.0, "{name}: phase at {k}: {} vs {phase}", at(2));
            // 25 Hz at 1000 m/s of exploding-reflector speed: 25 cycles per km.
            let f = F0 * 2.0 / V * 1000.0;
            assert!((at(3) - f).abs() < 0.3, "{name}: frequency at {k}: {} vs {f}", at(3));
            assert!((at(4) - (TAU * F0 * u).cos()).abs() < 0.03, "{name}: cos phase at {k}: {}", at(4));
        }
        // The depth slice's attributes, from its window: every trace at 312 m.
        let u = 2.0 * level as f64 * DZ / V - T0;
        let env = a * (-u * u / (2.0 * SIGMA * SIGMA)).exp();
        let phase = (TAU * F0 * u).to_degrees();
        for (e, p) in out[5].iter().zip(&out[6]) {
            assert!((f64::from(*e) - env).abs() < 0.02, "{name}: slice envelope {e}");
            let dp = ((f64::from(*p) - phase).rem_euclid(360.0) + 180.0).rem_euclid(360.0) - 180.0;
            assert!(dp.abs() < 2.0, "{name}: slice phase {p} vs {phase}");
        }
    });
}
