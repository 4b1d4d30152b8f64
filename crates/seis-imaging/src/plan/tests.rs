//! Tests of planning: sizes, band, depth, reach, shares, segments and refusals.

use super::depth::record_reach;
use super::*;
use crate::bands::Share;
use crate::request::ImageRequest;
use crate::window::LateralPad;
use crate::window::WindowParams;
use crate::{ImagingParams, Method};
use seis_core::error::Error;
use seis_core::volume::Domain;
use seis_core::volume::{Geometry, IndexBox, LineAxis, SampleAxis};
use seis_velocity::VelocityModel;
use seis_velocity::{Interpolation, VelocityTable};

fn input(ni: usize, nx: usize, nt: usize, dt_ms: f64) -> Geometry {
    Geometry::regular(
        LineAxis::new(1, 1, ni),
        LineAxis::new(1, 1, nx),
        SampleAxis { origin: 0.0, step: dt_ms, len: nt, domain: Domain::Time },
    )
}

fn slice(level: usize, g: &Geometry) -> ImageRequest {
    ImageRequest::new(vec![IndexBox { s: level..level + 1, ..g.full_box() }])
}

#[test]
fn ingest_chunks_cover_the_inlines_with_small_ends() {
    let v = VelocityModel::Constant(2000.0);
    let params = ImagingParams { dz: 10.0, zmax: Some(100.0), fmax: 50.0, ..Default::default() };
    let chunks = |ni: usize| {
        let g = input(ni, 512, 1000, 4.0); // 2 MB per inline: 16 inlines per chunk
        let image = image_geometry(&g, &params, &v).unwrap();
        let p =
            Plan::new(&g, [12.5, 12.5], &WindowParams::default(), &params, &v, &ImageRequest::whole(&image)).unwrap();
        assert_eq!(p.ingest_inlines, ni.min(16));
        p.ingest_chunks()
    };
    let c = chunks(512);
    assert_eq!(c.len(), 34);
    assert_eq!((c[0].clone(), c[1].clone(), c[32].clone(), c[33].clone()), (0..4, 4..20, 500..508, 508..512));
    for ni in [1, 3, 16, 23, 24, 25, 40, 41, 100, 512] {
        let c = chunks(ni);
        assert_eq!(c[0].start, 0, "{ni}");
        assert_eq!(c[c.len() - 1].end, ni, "{ni}");
        assert!(c.windows(2).all(|w| w[0].end == w[1].start), "{ni}: {c:?}");
        assert!(c.iter().all(|r| !r.is_empty() && r.len() <= 16), "{ni}: {c:?}");
    }
    assert_eq!(chunks(24), [0..16, 16..24]);
    assert_eq!(chunks(25), [0..4, 4..20, 20..21, 21..25]);
}

#[test]
fn sizes_band_and_depth_by_hand() {
    let g = input(100, 60, 500, 4.0); // 2 s
    let v = VelocityModel::Constant(2000.0);
    let params = ImagingParams { dz: 10.0, zmax: Some(1500.0), fmin: 5.0, fmax: 50.0, ..Default::default() };
    let image = image_geometry(&g, &params, &v).unwrap();
    assert_eq!(image.samples.len, 151);
    let whole = ImageRequest::whole(&image);
    let p = Plan::new(&g, [12.5, 25.0], &WindowParams::default(), &params, &v, &whole).unwrap();
    // half aperture at 1500 m: 0.5 · 1500 · tan 60° = 1299 m → 104 inlines (capped at 100), 52 crosslines
    assert_eq!(p.padded, [200, 120, 1000]);
    // df = 1 / (1000 · 4 ms) = 0.25 Hz: bins 20..=200
    assert_eq!(p.band, Band { first: 20, len: 181 });
    assert_eq!(p.levels.len(), 151);
    assert_eq!(p.step_velocity.len(), 150);
    assert_eq!(p.blocks.len(), 2); // 90 levels per block
    assert!((p.omega(0) - 2.0 * std::f64::consts::PI * 5.0).abs() < 1e-9);
    assert_eq!(p.image_scale(), 1.0 / (1000.0 * 200.0 * 120.0));

    // A depth slice at 500 m stops the depth loop there and pads for 500 m.
    let p = Plan::new(&g, [12.5, 25.0], &WindowParams::default(), &params, &v, &slice(50, &image)).unwrap();
    assert_eq!(p.last_level(), 50);
    assert_eq!(p.levels.len(), 1);
    assert_eq!(p.step_velocity.len(), 50);
    // 0.5 · 500 · tan 60° = 433 m → 35 and 18 traces
    assert_eq!(p.padded, [135, 80, 1000]);

    // Without zmax or nz the image reaches v · t_end / 2 = 2000 · 1.996 / 2 = 1996 m: the levels at or
    // above it are 0, 10, ..., 1990 m.
    let auto = ImagingParams { zmax: None, ..params.clone() };
    assert_eq!(image_geometry(&g, &auto, &v).unwrap().samples.len, 200);
    // The plan to 1500 m lies within that reach; one to 2500 m does not.
    assert_eq!(Plan::new(&g, [12.5, 25.0], &WindowParams::default(), &params, &v, &whole).unwrap().reach, None);
    let deep = ImagingParams { zmax: Some(2500.0), ..params.clone() };
    let image = image_geometry(&g, &deep, &v).unwrap();
    let p = Plan::new(&g, [12.5, 25.0], &WindowParams::default(), &deep, &v, &slice(250, &image)).unwrap();
    assert!((p.reach.unwrap() - 1996.0).abs() < 1e-6, "{:?}", p.reach);
    let by_count = ImagingParams { zmax: None, nz: Some(7), ..params.clone() };
    assert_eq!(image_geometry(&g, &by_count, &v).unwrap().samples.len, 7);
}

#[test]
fn fmax_is_clamped_to_nyquist_and_noted() {
    let g = input(8, 8, 100, 8.0); // Nyquist 62.5 Hz
    let v = VelocityModel::Constant(2000.0);
    let params = ImagingParams { nz: Some(10), fmax: 100.0, ..Default::default() };
    let image = image_geometry(&g, &params, &v).unwrap();
    let p = Plan::new(&g, [10.0, 10.0], &WindowParams::default(), &params, &v, &slice(3, &image)).unwrap();
    assert_eq!(p.band, Band { first: 0, len: 101 }); // 200 samples padded: bins 0..=100
    assert!(p.warnings.iter().any(|l| l.starts_with("imaging.fmax: ") && l.contains("clamped to 62.5 Hz")));
}

/// The reach through layers, worked out by hand, and on a 3-D model the fastest trace's. A record of
/// 0.5 s through 1500 m/s stops at 375 m. Through 200 m of 2000 m/s and then 3000 m/s it would stop at
/// 200 + 3000 · 0.3 / 2 = 650 m, but the 5 m step holding the boundary is crossed at the faster velocity
/// (a conservative bound): 1/600 s sooner, so 1500 m/s · 1/600 s = 2.5 m deeper, 652.5 m.
#[test]
fn the_reach_follows_the_fastest_velocity_at_each_depth() {
    use seis_velocity::VelocityGrid;
    let g = input(3, 2, 126, 4.0); // last sample 500 ms
    let reach = |v: &VelocityModel| record_reach(&g, 5.0, 1000, v).unwrap();
    assert!((reach(&VelocityModel::Constant(1500.0)) - 375.0).abs() < 1e-9);
    let layers = VelocityTable::new(vec![0.0, 200.0], vec![2000.0, 3000.0], Interpolation::Step).unwrap();
    assert!((reach(&VelocityModel::Table(layers)) - 652.5).abs() < 1e-9);
    // Six traces, one of them 2000 m/s above 200 m and 3000 m/s below, the others 1500 m/s throughout.
    let depth = SampleAxis { origin: 0.0, step: 5.0, len: 201, domain: Domain::Depth };
    let model = Geometry::regular(g.ilines, g.xlines, depth);
    let mut data = vec![1500.0f32; 6 * 201];
    for (k, v) in data[4 * 201..5 * 201].iter_mut().enumerate() {
        *v = if k * 5 < 200 { 2000.0 } else { 3000.0 };
    }
    let grid = VelocityModel::Grid(VelocityGrid::new(model, data, "model").unwrap());
    assert!((reach(&grid) - 652.5).abs() < 1e-3, "{}", reach(&grid)); // slowness in f32
                                                                      // A record longer than the steps allowed reaches below them.
    assert_eq!(record_reach(&g, 5.0, 10, &VelocityModel::Constant(1500.0)), None);
}

/// A share of the frequencies is a near-equal range for split-step, an equal-cost range for phase
/// shift, noted in the plan; Stolt's first share takes them all.
#[test]
fn shares_restrict_the_frequencies_and_say_so() {
    let g = input(8, 8, 100, 8.0);
    let v = VelocityModel::Constant(2000.0);
    let params = ImagingParams { nz: Some(10), fmax: 100.0, ..Default::default() };
    let image = image_geometry(&g, &params, &v).unwrap();
    let whole = Plan::new(&g, [10.0, 10.0], &WindowParams::default(), &params, &v, &slice(3, &image)).unwrap();
    let note = |p: &Plan| p.describe().into_iter().find(|l| l.starts_with("share ")).unwrap_or_default();
    let split_params = ImagingParams { method: Method::SplitStep, ..params.clone() };
    let split = Plan::new(&g, [10.0, 10.0], &WindowParams::default(), &split_params, &v, &slice(3, &image)).unwrap();
    let mut p = split.clone();
    p.restrict_to(Share { index: 1, count: 3 });
    assert_eq!((p.frequencies.clone(), p.share), (33..67, Share { index: 1, count: 3 }));
    assert_eq!(note(&p), "share 2/3: frequencies 34..67 of 101 (20.62..41.25 Hz)");

    // Phase shift's work per frequency grows as its square over a fixed part: three shares of about equal
    // cost, the last the narrowest.
    assert_eq!(whole.method, Method::PhaseShift);
    let (_, f_max) = whole.band_hz();
    let hz = |i: usize| (whole.band.first + i) as f64 / (whole.padded[2] as f64 * whole.dt);
    let cost = |r: std::ops::Range<usize>| r.map(|i| 0.06 + (hz(i) / f_max).powi(2)).sum::<f64>();
    let total = cost(0..101);
    let shares: Vec<_> = (0..3)
        .map(|index| {
            let mut p = whole.clone();
            p.restrict_to(Share { index, count: 3 });
            p.frequencies
        })
        .collect();
    assert_eq!(
        (shares[0].start, shares[0].end, shares[1].end, shares[2].end),
        (0, shares[1].start, shares[2].start, 101)
    );
    assert!(shares[0].len() > shares[1].len() && shares[1].len() > shares[2].len(), "{shares:?}");
    for s in &shares {
        assert!((cost(s.clone()) - total / 3.0).abs() <= 1.06, "{s:?}: {} of {total}", cost(s.clone()));
    }
    let stolt_params = ImagingParams { method: Method::Stolt, ..params.clone() };
    let stolt = Plan::new(&g, [10.0, 10.0], &WindowParams::default(), &stolt_params, &v, &slice(3, &image)).unwrap();
    let (mut first, mut second) = (stolt.clone(), stolt);
    first.restrict_to(Share { index: 0, count: 3 });
    second.restrict_to(Share { index: 1, count: 3 });
    assert_eq!((first.frequencies.clone(), second.frequencies.clone()), (0..101, 101..101));
    assert_eq!(
        note(&first),
        "share 1/3: Stolt needs every frequency of a wavenumber at once, so this share migrates all 101 \
         frequencies and the other shares none"
    );
    assert_eq!(
        note(&second),
        "share 2/3: Stolt needs every frequency of a wavenumber at once; share 1/3 migrates them all, this \
         one none"
    );
    assert!(p.warnings.iter().all(|w| !w.starts_with("share")), "an ordinary share is no warning");
    assert!(first.warnings.iter().any(|w| w.starts_with("share 1/3: Stolt")));
    let mut empty = whole;
    empty.restrict_to(Share { index: 150, count: 200 });
    assert!(empty.frequencies.is_empty() && note(&empty).contains("no frequency (more shares than the 101"));
}

#[test]
fn segments_group_equal_velocities_and_mark_levels() {
    let g = input(4, 4, 100, 4.0);
    let table = VelocityTable::new(vec![0.0, 35.0], vec![1500.0, 2500.0], Interpolation::Step).unwrap();
    let v = VelocityModel::Table(table);
    let params = ImagingParams { dz: 10.0, nz: Some(10), levels_per_block: Some(2), ..Default::default() };
    let image = image_geometry(&g, &params, &v).unwrap();
    let request = ImageRequest::new(vec![
        IndexBox { s: 0..1, ..image.full_box() },
        IndexBox { s: 2..3, ..image.full_box() },
        IndexBox { s: 6..7, ..image.full_box() },
    ]);
    let p = Plan::new(&g, [10.0, 10.0], &WindowParams::default(), &params, &v, &request).unwrap();
    // mid-step depths 5, 15, 25 m are at 1500 m/s; 35, 45, 55 m at 2500 m/s
    assert_eq!(p.step_velocity, vec![1500.0, 1500.0, 1500.0, 2500.0, 2500.0, 2500.0]);
    assert_eq!(p.blocks, vec![0..2, 2..3]);
    let s = |velocity, thickness, slot| Segment { velocity, thickness, slot };
    assert_eq!(p.segments(0), vec![s(1500.0, 0.0, Some(0)), s(1500.0, 20.0, Some(1))]);
    assert_eq!(p.segments(1), vec![s(1500.0, 10.0, None), s(2500.0, 30.0, Some(0))]);
}

#[test]
fn refusals_are_clear() {
    let g = input(8, 8, 100, 4.0);
    let table = VelocityTable::new(vec![0.0, 500.0], vec![1500.0, 2500.0], Interpolation::Linear).unwrap();
    let vz = VelocityModel::Table(table);
    let c = VelocityModel::Constant(2000.0);
    let params = ImagingParams { nz: Some(10), ..Default::default() };
    let image = image_geometry(&g, &params, &c).unwrap();
    let r = slice(5, &image);
    let w = WindowParams::default();
    let plan = |p: &ImagingParams, v: &VelocityModel, bin| Plan::new(&g, bin, &w, p, v, &r).map(|_| ());
    let stolt = ImagingParams { method: Method::Stolt, ..params.clone() };
    let e = plan(&stolt, &vz, [10.0, 10.0]).unwrap_err().to_string();
    assert!(e.contains("stolt") && e.contains("constant velocity"), "{e}");
    assert!(plan(&stolt, &c, [10.0, 10.0]).is_ok());
    assert!(plan(&params, &c, [0.0, 10.0]).unwrap_err().to_string().contains("bin"));
    let both = ImagingParams { zmax: Some(100.0), ..params.clone() };
    assert!(plan(&both, &c, [10.0, 10.0]).unwrap_err().to_string().contains("not both"));
    // Without zmax or nz an absurd velocity makes the image absurdly deep: the velocity is blamed.
    let auto = ImagingParams { nz: None, ..params.clone() };
    match image_geometry(&g, &auto, &VelocityModel::Constant(1e12)).unwrap_err() {
        Error::Setting { key, message, .. } => {
            assert_eq!(key, "velocity");
            assert!(
                message.contains(CHECK_THE_VELOCITY) && message.contains("1000000000000..1000000000000 m/s"),
                "{message}"
            );
        }
        e => panic!("{e}"),
    }
    let band = ImagingParams { fmin: 30.0, fmax: 20.0, ..params.clone() };
    assert!(plan(&band, &c, [10.0, 10.0]).is_err());
    let dip = ImagingParams { dip_limit_deg: Some(95.0), ..params.clone() };
    assert!(plan(&dip, &c, [10.0, 10.0]).is_err());
    let mut depth_input = g.clone();
    depth_input.samples.domain = Domain::Depth;
    let e = Plan::new(&depth_input, [10.0, 10.0], &w, &params, &c, &r).unwrap_err().to_string();
    assert!(e.contains("already in depth"), "{e}");
    let pad = WindowParams { lateral_pad: LateralPad::Traces(3), ..w };
    let p = Plan::new(&g, [10.0, 10.0], &pad, &params, &c, &r).unwrap();
    assert_eq!(&p.padded[..2], &[12, 12]);
    let spectrum = (p.n_omega() * p.nk() * 8) as u64;
    assert!(p.host_memory_bytes() > spectrum);
}

/// `|k|²` holds kx² + ky² at every point of the padded plane, inlines first, for a plane that is not square
/// (a transposed table would put the inline wavenumbers along the crosslines).
#[test]
fn k_squared_is_the_sum_of_the_two_wavenumbers_squared_inline_first() {
    let g = input(40, 24, 200, 4.0);
    let v = VelocityModel::Constant(2000.0);
    let params = ImagingParams { dz: 10.0, zmax: Some(200.0), fmax: 40.0, ..Default::default() };
    let image = image_geometry(&g, &params, &v).unwrap();
    let p = Plan::new(&g, [12.5, 25.0], &WindowParams::default(), &params, &v, &ImageRequest::whole(&image)).unwrap();
    let [ni, nx, _] = p.padded;
    assert_ne!(ni, nx);
    let k2 = p.k_squared();
    assert_eq!(k2.len(), ni * nx);
    let k = |i: usize, n: usize, d: f64| {
        let m = if i <= n / 2 { i as f64 } else { i as f64 - n as f64 };
        2.0 * std::f64::consts::PI * m / (n as f64 * d)
    };
    for i in 0..ni {
        for j in 0..nx {
            let expected = k(i, ni, 12.5).powi(2) + k(j, nx, 25.0).powi(2);
            assert!((k2[i * nx + j] - expected).abs() <= 1e-12 * expected.max(1e-9), "({i}, {j})");
        }
    }
}
