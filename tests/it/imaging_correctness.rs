//! The correctness table of the design notes (§5), on the CPU and on every other backend, at sizes a CI
//! machine affords. Inputs come from analytic travel times and ray tracing (`seisimage::synth`), never
//! from the migration code.

use crate::common::{
    energy_fraction_within, envelope, envelope_peak, for_each_backend, nrms, parabolic_peak, slope, Job,
};
use seisimage::imaging::{ImagingParams, Method, StoltInterpolation};
use seisimage::synth::{Event, Layer, Medium, Model, ModelSpec};
use seisimage::velocity::{Interpolation, VelocityModel, VelocityTable};
use seisimage::window::{LateralPad, WindowParams};

const V: f64 = 2000.0;

fn spec(ilines: usize, xlines: usize, samples: usize, medium: Medium, peak_hz: f64, events: Vec<Event>) -> ModelSpec {
    ModelSpec { ilines, xlines, samples, dt_ms: 4.0, bin_m: [10.0, 10.0], medium, peak_hz, events, noise: None }
}

fn job(model: &Model, params: ImagingParams) -> Job {
    Job { bin: model.bin_size(), window: WindowParams::default(), params, velocity: model.velocity_model() }
}

/// Point diffractor, constant velocity: the envelope peaks within one sample of the true position, and at
/// least 95 % of the image energy lies within one wavelength of it (while the unmigrated data, read as
/// depth, hold far less there, which shows the measure can fail).
#[test]
fn point_diffractor_focuses() {
    let (x0, y0, z0) = (320.0, 305.0, 301.0); // il 32, xl 30.5, depth sample 75.25 at dz = 4 m
    let model = Model::new(spec(
        64,
        64,
        200,
        Medium::Constant { velocity: V },
        25.0,
        vec![Event::Diffractor { x: x0, y: y0, z: z0, amplitude: 1.0 }],
    ))
    .unwrap();
    let params = ImagingParams { dz: 4.0, fmax: 80.0, ..Default::default() };
    let wavelength = V / 25.0;
    let centre = [x0 / 10.0, y0 / 10.0, z0 / 4.0];

    // Unmigrated: time sample i lies at depth v t / 2 = 4 i m, the same grid as the image.
    let data = model.generate();
    let before = energy_fraction_within(&data.data, [64, 64, 200], [10.0, 10.0, 4.0], centre, wavelength);
    assert!(before < 0.5, "unmigrated fraction {before}");

    for_each_backend(|engine| {
        let (image, out) = job(&model, params.clone()).run_whole(engine, &model);
        let shape = image.shape();
        let peak = envelope_peak(&out, shape);
        for a in 0..3 {
            assert!((peak[a] as f64 - centre[a]).abs() <= 1.0, "{}: peak {peak:?} vs {centre:?}", engine.name());
        }
        let after = energy_fraction_within(&out, shape, [10.0, 10.0, 4.0], centre, wavelength);
        println!("{}: energy within one wavelength: {after:.4} migrated, {before:.4} unmigrated", engine.name());
        assert!(after >= 0.95, "{}: migrated fraction {after}", engine.name());
    });
}

/// Migrated dip of a plane reflector. The plane is constant along one axis, which has a single line, so
/// the data are an exact 2-D line; the dip is the slope of the depths of the image's peaks along the other
/// axis (the migrated wavelet of a plane is the zero-phase input wavelet).
fn migrated_dip(engine: &mut dyn seisimage::imaging::Engine, dip_deg: f64, along_crosslines: bool) -> f64 {
    let n = 128;
    let (ni, nx, azimuth) = if along_crosslines { (1, n, 90.0) } else { (n, 1, 0.0) };
    // The plane crops out at 100 m and dips down towards the end of the line.
    let plane = Event::Plane { x: 100.0, y: 100.0, z: 0.0, dip_deg, azimuth_deg: azimuth, amplitude: 1.0 };
    let model = Model::new(spec(ni, nx, 300, Medium::Constant { velocity: V }, 15.0, vec![plane])).unwrap();
    let params = ImagingParams { dz: 4.0, fmax: 45.0, nz: Some(300), ..Default::default() };
    let (image, out) = job(&model, params).run_whole(engine, &model);
    let nz = image.samples.len;
    // Migration moves the event recorded at surface position xs updip by d·sin θ (d: normal distance to the
    // plane). Keep reflector points recorded between 250 m and 700 m: clear of the edge taper and of the
    // outcrop, and far from the end of the line, whose truncation smile is tangent to the reflector there.
    let theta = dip_deg.to_radians();
    let updip = |xs: f64| xs - (xs - 100.0) * theta.tan() * theta.cos() * theta.sin();
    let (lo, hi) = (updip(250.0).max(150.0), updip(700.0));
    let (mut xs, mut zs) = (Vec::new(), Vec::new());
    for t in 0..n {
        let x = t as f64 * 10.0;
        if x < lo || x > hi {
            continue;
        }
        let tr: Vec<f64> = out[t * nz..(t + 1) * nz].iter().map(|&v| v as f64).collect();
        let (k, _) = tr.iter().enumerate().max_by(|a, b| a.1.total_cmp(b.1)).unwrap();
        xs.push(x);
        zs.push(parabolic_peak(&tr, k) * 4.0);
    }
    assert!(xs.len() >= 8, "only {} picks between {lo} and {hi} m", xs.len());
    slope(&xs, &zs).atan().to_degrees()
}

#[test]
fn dipping_reflectors_migrate_to_their_true_dip() {
    for_each_backend(|engine| {
        for (dip, along_crosslines) in [(15.0, false), (35.0, false), (60.0, false), (35.0, true)] {
            let got = migrated_dip(engine, dip, along_crosslines);
            println!("{}: dip {dip}° (along crosslines: {along_crosslines}) migrates to {got:.3}°", engine.name());
            assert!((got - dip).abs() <= 0.2, "{}: {dip}° came out {got}°", engine.name());
        }
    });
}

/// A spike at (x0, t0) migrates to a hemisphere of radius v t0 / 2: the mean radial error of the envelope
/// peak, along rays up to 70° from the vertical, is at most dz / 2.
#[test]
fn impulse_response_is_a_hemisphere() {
    let (c, t0_ms) = (40usize, 300.0);
    let radius = V * t0_ms / 2000.0;
    let model = Model::new(spec(
        80,
        80,
        150,
        Medium::Constant { velocity: V },
        20.0,
        vec![Event::Spike { il: c, xl: c, t_ms: t0_ms, amplitude: 1.0 }],
    ))
    .unwrap();
    let dz = 4.0;
    let params = ImagingParams { dz, fmax: 50.0, nz: Some(100), ..Default::default() };
    for_each_backend(|engine| {
        let (image, out) = job(&model, params.clone()).run_whole(engine, &model);
        let [ni, nx, nz] = image.shape();
        // The depth envelope of the vertical section through the spike along the inline axis: smooth, so it
        // can be read between grid points bilinearly.
        let env: Vec<f64> = (0..ni)
            .flat_map(|i| {
                let t = (i * nx + c) * nz;
                envelope(&out[t..t + nz].iter().map(|&v| v as f64).collect::<Vec<_>>())
            })
            .collect();
        let at = |x: f64, z: f64| -> f64 {
            let (fi, fk) = (x / 10.0, z / dz);
            let (i, k) = (fi.floor() as usize, fk.floor() as usize);
            if i + 1 >= ni || k + 1 >= nz {
                return 0.0;
            }
            let (a, b) = (fi - i as f64, fk - k as f64);
            let e = |i: usize, k: usize| env[i * nz + k];
            (1.0 - a) * ((1.0 - b) * e(i, k) + b * e(i, k + 1)) + a * ((1.0 - b) * e(i + 1, k) + b * e(i + 1, k + 1))
        };
        let mut errors = Vec::new();
        for deg in (-70..=70).step_by(5) {
            let th = (deg as f64).to_radians();
            let radii: Vec<f64> = (0..=160).map(|s| radius - 40.0 + 0.5 * s as f64).collect();
            let profile: Vec<f64> = radii.iter().map(|r| at(c as f64 * 10.0 + r * th.sin(), r * th.cos())).collect();
            let (k, _) = profile.iter().enumerate().max_by(|a, b| a.1.total_cmp(b.1)).unwrap();
            errors.push(radii[0] + 0.5 * parabolic_peak(&profile, k) - radius);
        }
        let mean = errors.iter().map(|e| e.abs()).sum::<f64>() / errors.len() as f64;
        println!("{}: impulse response radial errors (m) {errors:.2?}, mean |error| {mean:.3} m", engine.name());
        assert!(mean <= dz / 2.0, "{}: mean radial error {mean} m", engine.name());
    });
}

fn diffractors_and_plane() -> Model {
    Model::new(spec(
        48,
        40,
        200,
        Medium::Constant { velocity: V },
        20.0,
        vec![
            Event::Diffractor { x: 200.0, y: 180.0, z: 250.0, amplitude: 1.0 },
            Event::Diffractor { x: 300.0, y: 220.0, z: 420.0, amplitude: -0.7 },
            Event::Plane { x: 0.0, y: 0.0, z: 150.0, dip_deg: 20.0, azimuth_deg: 30.0, amplitude: 0.5 },
        ],
    ))
    .unwrap()
}

/// Stolt and phase shift at constant velocity agree to 5 % (normalised RMS), with the sinc interpolation at
/// the default 2× time padding and with linear interpolation at 4× padding.
#[test]
fn stolt_matches_phase_shift() {
    let model = diffractors_and_plane();
    for_each_backend(|engine| {
        for (interpolation, pad) in [(StoltInterpolation::Sinc, 2.0), (StoltInterpolation::Linear, 4.0)] {
            let base = ImagingParams { dz: 5.0, fmax: 60.0, nz: Some(100), ..Default::default() };
            let mut j = job(&model, base.clone());
            j.window.time_pad_factor = pad;
            let (_, reference) = j.run_whole(engine, &model);
            j.params = ImagingParams { method: Method::Stolt, stolt_interpolation: interpolation, ..base };
            let (_, stolt) = j.run_whole(engine, &model);
            let d = nrms(&stolt, &reference);
            println!("{}: stolt ({interpolation:?}, pad {pad}×) vs phase shift: NRMS {d:.4}", engine.name());
            assert!(d <= 0.05, "{}: {interpolation:?} NRMS {d}", engine.name());
        }
    });
}

fn layered() -> Vec<Layer> {
    vec![
        Layer { top: 0.0, velocity: 1800.0 },
        Layer { top: 200.0, velocity: 2400.0 },
        Layer { top: 400.0, velocity: 3000.0 },
    ]
}

/// Split-step and phase shift agree to 1e-2 (normalised RMS) when the velocity depends on depth only (here
/// a linear v(z), so every depth step has its own velocity).
#[test]
fn split_step_matches_phase_shift_for_v_of_z() {
    let model = Model::new(spec(
        48,
        40,
        160,
        Medium::Layered { layers: layered() },
        20.0,
        vec![
            Event::Diffractor { x: 240.0, y: 200.0, z: 300.0, amplitude: 1.0 },
            Event::Reflector { z: 450.0, amplitude: 0.5 },
        ],
    ))
    .unwrap();
    let velocity = VelocityModel::Table(
        VelocityTable::new(vec![0.0, 500.0], vec![1800.0, 3000.0], Interpolation::Linear).unwrap(),
    );
    let params = ImagingParams { dz: 5.0, fmax: 60.0, nz: Some(100), ..Default::default() };
    let mut j = Job { bin: model.bin_size(), window: WindowParams::default(), params, velocity };
    for_each_backend(|engine| {
        j.params.method = Method::PhaseShift;
        let (_, reference) = j.run_whole(engine, &model);
        j.params.method = Method::SplitStep;
        let (_, split) = j.run_whole(engine, &model);
        let d = nrms(&split, &reference);
        println!("{}: split-step vs phase shift, v(z): NRMS {d:.2e}", engine.name());
        assert!(d <= 1e-2, "{}: NRMS {d}", engine.name());
    });
}

/// A diffractor below two interfaces, with travel times from exact ray tracing, focuses within one sample
/// with the layered velocity (phase shift and split-step).
#[test]
fn v_of_z_diffractor_focuses() {
    let (x0, y0, z0) = (310.0, 300.0, 522.0); // il 31, xl 30, depth sample 130.5 at dz = 4 m
    let model = Model::new(spec(
        64,
        64,
        200,
        Medium::Layered { layers: layered() },
        20.0,
        vec![Event::Diffractor { x: x0, y: y0, z: z0, amplitude: 1.0 }],
    ))
    .unwrap();
    let centre = [x0 / 10.0, y0 / 10.0, z0 / 4.0];
    for_each_backend(|engine| {
        for method in [Method::PhaseShift, Method::SplitStep] {
            let params = ImagingParams { method, dz: 4.0, fmax: 60.0, nz: Some(180), ..Default::default() };
            let (image, out) = job(&model, params).run_whole(engine, &model);
            let peak = envelope_peak(&out, image.shape());
            println!("{} {}: peak {peak:?}, true {centre:?}", engine.name(), method.name());
            for a in 0..3 {
                assert!((peak[a] as f64 - centre[a]).abs() <= 1.0, "{} {method:?}: {peak:?}", engine.name());
            }
        }
    });
}

/// The window defaults keep wrap-around out: a diffractor near the end of the inline axis leaves no
/// energy on the far side of the image. Without lateral padding some of it wraps there.
#[test]
fn lateral_padding_keeps_wrap_around_out() {
    let model = Model::new(spec(
        64,
        16,
        200,
        Medium::Constant { velocity: V },
        20.0,
        vec![Event::Diffractor { x: 560.0, y: 80.0, z: 300.0, amplitude: 1.0 }],
    ))
    .unwrap();
    let params = ImagingParams { dz: 4.0, fmax: 60.0, nz: Some(150), ..Default::default() };
    for_each_backend(|engine| {
        let mut far_side = |window: WindowParams| {
            let j = Job { window, ..job(&model, params.clone()) };
            let (image, out) = j.run_whole(engine, &model);
            let per_inline = image.shape()[1] * image.shape()[2];
            let energy = |r: std::ops::Range<usize>| out[r].iter().map(|v| (*v as f64).powi(2)).sum::<f64>();
            energy(0..16 * per_inline) / energy(0..out.len())
        };
        let padded = far_side(WindowParams::default());
        let unpadded = far_side(WindowParams { lateral_pad: LateralPad::Traces(0), ..Default::default() });
        println!("{}: far-side energy {padded:.2e} padded, {unpadded:.2e} unpadded", engine.name());
        assert!(padded < 1e-3 && unpadded > 10.0 * padded, "{}: {padded} vs {unpadded}", engine.name());
    });
}
