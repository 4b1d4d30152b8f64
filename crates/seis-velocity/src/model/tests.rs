use std::sync::Arc;

use super::*;
use seis_core::volume::Domain;

#[test]
fn table_interpolation_by_hand() {
    let d = vec![0.0, 100.0, 300.0];
    let v = vec![1500.0, 2000.0, 3000.0];
    let lin = VelocityTable::new(d.clone(), v.clone(), Interpolation::Linear).unwrap();
    assert_eq!(lin.at(-10.0), 1500.0);
    assert_eq!(lin.at(0.0), 1500.0);
    assert_eq!(lin.at(50.0), 1750.0);
    assert_eq!(lin.at(100.0), 2000.0);
    assert_eq!(lin.at(250.0), 2750.0);
    assert_eq!(lin.at(1000.0), 3000.0);
    let step = VelocityTable::new(d, v, Interpolation::Step).unwrap();
    assert_eq!(step.at(50.0), 1500.0);
    assert_eq!(step.at(99.999), 1500.0);
    assert_eq!(step.at(100.0), 2000.0);
    assert_eq!(step.at(299.0), 2000.0);
    assert_eq!(step.at(300.0), 3000.0);
    assert_eq!(step.at(5000.0), 3000.0);
}

#[test]
fn table_errors() {
    assert!(VelocityTable::new(vec![0.0, 0.0], vec![1.0, 2.0], Interpolation::Linear).is_err());
    assert!(VelocityTable::new(vec![0.0], vec![1.0, 2.0], Interpolation::Linear).is_err());
    assert!(VelocityTable::new(vec![0.0], vec![-1.0], Interpolation::Linear).is_err());
    assert!(VelocityModel::constant(0.0).is_err());
    let flat = VelocityTable::new(vec![0.0, 10.0], vec![2000.0, 2000.0], Interpolation::Step).unwrap();
    assert_eq!(VelocityModel::Table(flat).constant_velocity(), Some(2000.0));
}

/// Values given trace after trace land where the depth slices read them, over several blocks of slices
/// and a last block that is not full.
#[test]
fn a_grid_of_many_samples_reads_every_trace_at_every_depth() {
    use seis_core::volume::{LineAxis, SampleAxis};
    let ns = 37;
    let depth = SampleAxis { origin: 0.0, step: 10.0, len: ns, domain: Domain::Depth };
    let g = Geometry::regular(LineAxis::new(1, 1, 5), LineAxis::new(1, 1, 7), depth);
    let value = |t: usize, k: usize| 1500.0 + 10.0 * t as f32 + k as f32;
    let data: Vec<f32> = (0..35).flat_map(|t| (0..ns).map(move |k| value(t, k))).collect();
    let m = VelocityModel::Grid(VelocityGrid::new(g.clone(), data, "test").unwrap());
    let mut s = vec![0.0; 35];
    for k in [0, 15, 16, 17, 33, 36] {
        m.slowness_slice(k as f64 * 10.0, &mut s);
        for (t, &slowness) in s.iter().enumerate() {
            assert_eq!(m.trace_velocity(t, k as f64 * 10.0), value(t, k) as f64, "trace {t}, sample {k}");
            assert_eq!(slowness, 1.0 / value(t, k), "trace {t}, sample {k}");
        }
    }
    assert!(m.varies_laterally());
    let layered: Vec<f32> = (0..35).flat_map(|_| (0..ns).map(|k| value(0, k))).collect();
    assert!(!VelocityModel::Grid(VelocityGrid::new(g, layered, "test").unwrap()).varies_laterally());
}

#[test]
fn a_computed_grid_equals_the_grid_read_trace_by_trace() {
    use seis_core::volume::{LineAxis, SampleAxis};
    let (ni, nx, nz) = (3, 4, 5);
    let depth = SampleAxis { origin: 0.0, step: 25.0, len: nz, domain: Domain::Depth };
    let g = Geometry::regular(LineAxis::new(10, 1, ni), LineAxis::new(100, 2, nx), depth);
    let value = |t: usize, k: usize| 1500.0 + 100.0 * t as f32 + 7.0 * k as f32;
    let by_trace: Vec<f32> = (0..ni * nx).flat_map(|t| (0..nz).map(move |k| value(t, k))).collect();
    let by_depth: Vec<f32> = (0..nz).flat_map(|k| (0..ni * nx).map(move |t| value(t, k))).collect();
    let a = VelocityGrid::new(g.clone(), by_trace, "traces").unwrap();
    let b = VelocityGrid::from_fn(g.clone(), "computed", |t| move |k| value(t, k)).unwrap();
    assert!(a == b && a.values_digest() == b.values_digest());
    assert_eq!(a.stored().unwrap(), by_depth);

    // depth 50 m, trace 5: inline 11, crossline 102
    let bad = |t| move |k| if (t, k) == (5, 2) { f32::NAN } else { value(t, k) };
    let e = VelocityGrid::from_fn(g.clone(), "computed", bad).unwrap_err().to_string();
    assert!(e.contains("computed") && e.contains("inline 11, crossline 102, depth 50 m"), "{e}");
    let e = VelocityGrid::new(g, vec![2000.0; 7], "short").unwrap_err().to_string();
    assert!(e.contains("7 values for a [3, 4, 5] grid"), "{e}");
}

/// Models wider than a tile of traces and deeper than a block of slices, with neither a multiple of the
/// other, are laid out as a plain transpose of their traces.
#[test]
fn a_computed_grid_of_many_tiles_and_blocks_is_the_transpose_of_its_traces() {
    use seis_core::volume::{LineAxis, SampleAxis};
    let (ni, nx, nz) = (7, 5003, 37);
    let depth = SampleAxis { origin: 0.0, step: 10.0, len: nz, domain: Domain::Depth };
    let g = Geometry::regular(LineAxis::new(1, 1, ni), LineAxis::new(1, 1, nx), depth);
    let value = |t: usize, k: usize| 1500.0 + (t % 1009) as f32 + 0.5 * k as f32;
    let grid = VelocityGrid::from_fn(g, "computed", |t| move |k| value(t, k)).unwrap();
    let by_depth: Vec<f32> = (0..nz).flat_map(|k| (0..ni * nx).map(move |t| value(t, k))).collect();
    assert!(grid.stored().unwrap() == by_depth);
}

/// What planning asks of every level, the least and the mean slowness of a depth, is that of the slice
/// the engines use, bit for bit, on any number of threads and for scaled copies too; asked again, it is
/// remembered per scale.
#[test]
fn a_slowness_summary_is_that_of_the_slice() {
    use seis_core::volume::{LineAxis, SampleAxis};
    let (ni, nx, nz) = (123, 457, 4);
    let depth = SampleAxis { origin: 0.0, step: 100.0, len: nz, domain: Domain::Depth };
    let g = Geometry::regular(LineAxis::new(1, 1, ni), LineAxis::new(1, 1, nx), depth);
    let value = |t: usize, k: usize| 1500.0 + ((t * 7919 + k * 104729) % 100003) as f32 * 0.0137;
    let grid = VelocityGrid::from_fn(g, "test", |t| move |k| value(t, k)).unwrap();
    let mut slice = vec![0.0f32; ni * nx];
    for g in [grid.clone(), VelocityGrid { scale: 1.07, ..grid.clone() }] {
        for z in [0.0, 50.0, 137.5, 300.0] {
            g.slowness_slice(z, &mut slice);
            let least = slice.iter().fold(f32::INFINITY, |m, &s| m.min(s)) as f64;
            let mean = slice.iter().map(|&s| s as f64).sum::<f64>() / slice.len() as f64;
            for threads in [1, 3] {
                let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
                let values = g.stored().unwrap().to_vec();
                let fresh =
                    VelocityGrid { scale: g.scale, ..VelocityGrid::depth_major_unchecked(g.geometry.clone(), values) };
                assert_eq!(pool.install(|| fresh.slowness_summary(z)), SlownessSummary { least, mean }, "z {z}");
            }
            assert_eq!(g.slowness_summary(z), SlownessSummary { least, mean }, "z {z}, scale {}", g.scale);
        }
    }
    assert_eq!(grid.data.summaries.lock().unwrap().len(), 8, "four depths at two scales");
}

/// Shards of one job compare their models by identity: any value, the scale or the grid changes it,
/// and the form printed stays short whatever the size (it once listed every value, minutes for a
/// model of billions).
#[test]
fn a_grid_is_identified_by_a_digest_of_its_values() {
    use seis_core::volume::{LineAxis, SampleAxis};
    use sha2::{Digest, Sha256};
    let (ni, nx, nz) = (40, 50, 600);
    let depth = SampleAxis { origin: 0.0, step: 10.0, len: nz, domain: Domain::Depth };
    let g = Geometry::regular(LineAxis::new(1, 1, ni), LineAxis::new(1, 1, nx), depth);
    let value = |t: usize, k: usize| 1500.0 + (t % 7) as f32 + 0.5 * k as f32;
    let data: Vec<f32> = (0..ni * nx).flat_map(|t| (0..nz).map(move |k| value(t, k))).collect();
    let grid = VelocityGrid::new(g.clone(), data.clone(), "test").unwrap();

    // One piece: the digest of the digest of the depth slices' bytes, slice after slice.
    let bytes: Vec<u8> = (0..nz).flat_map(|k| (0..ni * nx).flat_map(move |t| value(t, k).to_le_bytes())).collect();
    let expected: [u8; 32] = Sha256::digest(Sha256::digest(&bytes)).into();
    assert_eq!(grid.values_digest(), expected);

    let model = VelocityModel::Grid(grid);
    let same = VelocityModel::Grid(VelocityGrid::new(g.clone(), data.clone(), "again").unwrap());
    assert_eq!(model.identity(), same.identity());
    let mut changed = data.clone();
    changed[ni * nx * nz / 2] += 0.25;
    assert_ne!(model.identity(), VelocityModel::Grid(VelocityGrid::new(g, changed, "test").unwrap()).identity());
    assert_ne!(model.identity(), model.scaled(1.05).identity());
    // The members of a velocity scan are scaled copies: their values are digested once, not per member.
    let VelocityModel::Grid(member) = model.scaled(0.95) else { unreachable!() };
    assert_eq!(member.data.digest.get(), Some(&expected));
    let shifted = SampleAxis { origin: 5.0, step: 10.0, len: nz, domain: Domain::Depth };
    let moved = Geometry::regular(LineAxis::new(1, 1, ni), LineAxis::new(1, 1, nx), shifted);
    assert_ne!(model.identity(), VelocityModel::Grid(VelocityGrid::new(moved, data, "test").unwrap()).identity());

    // 1.2 million values, summarised.
    assert!(model.identity().len() < 2000, "{} characters", model.identity().len());
    assert!(format!("{model:?}").len() < 2000, "{} characters", format!("{model:?}").len());
}

/// The reference velocity of a 3-D grid enters the plan and so the fingerprint that the shards of one
/// job compare: it must not depend on how many threads the machine has. (The f32 slownesses add up
/// exactly in f64, in any order, as long as the sum is taken in f64.)
#[test]
fn a_grids_reference_velocity_is_the_same_on_any_number_of_threads() {
    use seis_core::volume::{LineAxis, SampleAxis};
    let (ni, nx, nz) = (300, 301, 3);
    let depth = SampleAxis { origin: 0.0, step: 100.0, len: nz, domain: Domain::Depth };
    let g = Geometry::regular(LineAxis::new(1, 1, ni), LineAxis::new(1, 1, nx), depth);
    // Irregular values, so that the order of the additions shows in the last bits.
    let value = |t: usize, k: usize| 1500.0 + ((t * 7919 + k * 104729) % 100003) as f32 * 0.0137;
    let data: Vec<f32> = (0..ni * nx).flat_map(|t| (0..nz).map(move |k| value(t, k))).collect();
    let m = VelocityModel::Grid(VelocityGrid::new(g, data, "test").unwrap());
    let on = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(|| [0.0, 37.0, 150.0, 199.0].map(|z| m.reference_velocity(z).to_bits()))
    };
    let one = on(1);
    for threads in [2, 3, 5, 8] {
        assert_eq!(on(threads), one, "{threads} threads");
    }
    // And it is the mean slowness's inverse.
    let mean: f64 = (0..ni * nx).map(|t| 1.0 / value(t, 1) as f64).sum::<f64>() / (ni * nx) as f64;
    assert!((m.reference_velocity(100.0) - 1.0 / mean).abs() < 1e-6 * m.reference_velocity(100.0));
}

#[test]
fn a_grid_interpolates_in_depth_and_scales_without_copying() {
    use seis_core::volume::{LineAxis, SampleAxis};
    let depth = SampleAxis { origin: 0.0, step: 100.0, len: 3, domain: Domain::Depth };
    let g = Geometry::regular(LineAxis::new(10, 1, 2), LineAxis::new(100, 2, 3), depth);
    let data: Vec<f32> = (0..6).flat_map(|t| [1000.0 + t as f32, 2000.0, 3000.0]).collect();
    let m = VelocityModel::Grid(VelocityGrid::new(g.clone(), data, "test").unwrap());
    assert!(m.varies_laterally());
    assert_eq!(m.range(), (1000.0, 3000.0));
    let mut s = vec![0.0; 6];
    m.slowness_slice(150.0, &mut s);
    assert!((s[0] - 1.0 / 2500.0).abs() < 1e-9);
    m.slowness_slice(-50.0, &mut s);
    assert!((s[5] - 1.0 / 1005.0).abs() < 1e-9);
    assert_eq!(m.trace_velocity(5, 50.0), 0.5 * (1005.0 + 2000.0));
    // reference velocity: the mean slowness at 0 m of 1000..1005 m/s
    let mean: f64 = (0..6).map(|t| 1.0 / (1000.0 + t as f64)).sum::<f64>() / 6.0;
    assert!((m.reference_velocity(0.0) - 1.0 / mean).abs() < 1e-3);

    let fast = m.scaled(1.1);
    let (lo, hi) = fast.range();
    assert!((lo - 1100.0).abs() < 1e-9 && (hi - 3300.0).abs() < 1e-9, "{lo} {hi}");
    assert!((fast.trace_velocity(5, 50.0) - 1.1 * 0.5 * (1005.0 + 2000.0)).abs() < 1e-3);
    let (VelocityModel::Grid(a), VelocityModel::Grid(b)) = (&m, &fast) else { unreachable!() };
    assert!(Arc::ptr_eq(&a.data, &b.data), "a scaled grid shares the values");
    assert_eq!(VelocityModel::Constant(2000.0).scaled(0.9), VelocityModel::Constant(1800.0));

    let time = SampleAxis { origin: 0.0, step: 4.0, len: 3, domain: Domain::Time };
    let in_time = Geometry::regular(LineAxis::new(10, 1, 2), LineAxis::new(100, 2, 3), time);
    assert!(VelocityGrid::new(in_time, vec![2000.0; 18], "t").unwrap_err().to_string().contains("depth model"));
    let mut zero: Vec<f32> = vec![2000.0; 18];
    zero[4] = 0.0; // trace 1 (inline 10, crossline 102), depth 100 m
    let e = VelocityGrid::new(g, zero, "test").unwrap_err().to_string();
    assert!(e.contains("crossline 102") && e.contains("depth 100 m"), "{e}");
}

/// Functions on a full grid of locations, mixed where asked for, are the grid made whole from the same
/// functions: every value, slice, summary and range, on seismic lines that skip lines, and
/// reach beyond the locations (where the edge holds).
#[test]
fn a_mixed_grid_is_the_stored_grid_of_the_same_functions() {
    use crate::lateral::{function_weights, grid_taps};
    use seis_core::cancel::CancelToken;
    use seis_core::volume::{LineAxis, SampleAxis};
    let depth = SampleAxis { origin: 0.0, step: 10.0, len: 23, domain: Domain::Depth };
    let seismic = Geometry::regular(LineAxis::new(31, 3, 37), LineAxis::new(195, 2, 29), depth);
    // Locations every 17, 30 and 9 lines apart: uneven, and the survey's last lines beyond them.
    let (ils, xls) = ([40, 57, 87, 96], [200, 209, 233]);
    let locations: Vec<(i64, i64)> = xls.iter().flat_map(|&xl| ils.iter().map(move |&il| (il, xl))).collect();
    let sampled: Vec<Vec<f64>> = (0..locations.len())
        .map(|f| (0..depth.len).map(|k| 1500.0 + 37.0 * f as f64 + 11.5 * k as f64 + (f * k % 5) as f64).collect())
        .collect();
    let (mixes, _) = function_weights(&locations, &seismic, [12.5, 12.5], &CancelToken::new()).unwrap();
    let stored = VelocityGrid::from_fn(seismic.clone(), "stored", |t| {
        let (mix, sampled) = (&mixes[t], &sampled);
        move |k| mix.iter().map(|&(f, w)| w * sampled[f][k]).sum::<f64>() as f32
    })
    .unwrap();
    let taps = grid_taps(&locations, &seismic).expect("a full grid");
    let mixed = VelocityGrid::mixed(seismic.clone(), GridMix::new(&sampled, taps), "mixed").unwrap();
    assert!(mixed.stored().is_none() && mixed.held_values() == sampled.len() * depth.len);

    let close = |a: f64, b: f64| (a - b).abs() <= 1e-6 * b.abs();
    for scale in [1.0, 0.93] {
        let (s, m) = (VelocityGrid { scale, ..stored.clone() }, VelocityGrid { scale, ..mixed.clone() });
        let (mut a, mut b) = (vec![0.0f32; seismic.n_traces()], vec![0.0f32; seismic.n_traces()]);
        for z in [0.0, 5.0, 10.0, 47.3, 220.0, 400.0] {
            s.slowness_slice(z, &mut a);
            m.slowness_slice(z, &mut b);
            for (t, (x, y)) in a.iter().zip(&b).enumerate() {
                assert!(close(*y as f64, *x as f64), "z {z}, trace {t}: {y} vs {x}");
            }
            let (ss, ms) = (s.slowness_summary(z), m.slowness_summary(z));
            assert!(close(ms.least, ss.least) && close(ms.mean, ss.mean), "z {z}: {ms:?} vs {ss:?}");
            for t in [0, 1, 28, 29, 500, seismic.n_traces() - 1] {
                assert!(close(m.at(t, z), s.at(t, z)), "z {z}, trace {t}");
            }
        }
        let (sr, mr) = (s.range(), m.range());
        assert!(close(mr.0, sr.0) && close(mr.1, sr.1), "{mr:?} vs {sr:?}");
        assert!(!m.laterally_constant() && !s.laterally_constant());
    }
    // The same functions everywhere: laterally constant.
    let same: Vec<Vec<f64>> = vec![sampled[0].clone(); locations.len()];
    let flat = GridMix::new(&same, grid_taps(&locations, &seismic).unwrap());
    assert!(VelocityGrid::mixed(seismic.clone(), flat, "flat").unwrap().laterally_constant());
    // A function that is no velocity is refused, naming it and its depth.
    let mut bad = sampled.clone();
    bad[4][3] = -1.0;
    let e = VelocityGrid::mixed(seismic.clone(), GridMix::new(&bad, grid_taps(&locations, &seismic).unwrap()), "m");
    let e = e.unwrap_err().to_string();
    assert!(e.contains("function 5 at depth 30 m"), "{e}");
}
