use super::super::*;
use crate::lateral::grid_taps;
use seis_core::volume::{Domain, Geometry, LineAxis, SampleAxis};

/// The least and the mean slowness at depth `z` over every trace, trace by trace: the two depth samples
/// around `z` of each trace on their own, mixed in depth and inverted as the engines' slices are.
fn swept(g: &VelocityGrid, z: f64) -> SlownessSummary {
    let (k0, k1, w) = g.bracket(z);
    let scale = g.scale as f32;
    let traces = g.geometry.n_traces();
    let slowness = |t: usize| {
        let (a, b) = (g.value(k0, t), g.value(k1, t));
        1.0 / (scale * (a + w * (b - a)))
    };
    let least = (0..traces).map(slowness).fold(f32::INFINITY, f32::min) as f64;
    let mean = (0..traces).map(|t| slowness(t) as f64).sum::<f64>() / traces as f64;
    SlownessSummary { least, mean }
}

/// Depths of a 10 m plan's levels and steps on a model sampled every 10 m down to 220 m, and others:
/// above it, between its samples, on them and far below it (where its last sample holds).
fn plan_depths() -> Vec<f64> {
    let levels = (0..40).map(|k| k as f64 * 10.0);
    let steps = (0..39).map(|j| (j as f64 + 0.5) * 10.0);
    levels.chain(steps).chain([-5.0, 47.3, 47.3, 133.33, 1000.0, 1e6]).collect()
}

/// A grid of functions on a full grid of locations, with irregular values (so that the order of the
/// additions would show in the last bits) on seismic lines that skip lines and reach beyond the locations;
/// most locations lie between seismic lines.
fn mixed_grid() -> VelocityGrid {
    let depth = SampleAxis { origin: 0.0, step: 10.0, len: 23, domain: Domain::Depth };
    let seismic = Geometry::regular(LineAxis::new(31, 3, 37), LineAxis::new(195, 2, 29), depth);
    let (ils, xls) = ([40, 57, 87, 96], [200, 210, 233]);
    let locations: Vec<(i64, i64)> = xls.iter().flat_map(|&xl| ils.iter().map(move |&il| (il, xl))).collect();
    let sampled: Vec<Vec<f64>> = (0..locations.len())
        .map(|f| (0..depth.len).map(|k| 1500.0 + 37.3 * ((f * 7 + k * 3) % 11) as f64 + 11.57 * k as f64).collect())
        .collect();
    let taps = grid_taps(&locations, &seismic).expect("a full grid");
    VelocityGrid::mixed(seismic, GridMix::new(&sampled, taps), "mixed").unwrap()
}

/// A grid whose every value is its own (a cube read from a file): no lateral interpolation to exploit.
fn stored_grid() -> VelocityGrid {
    let depth = SampleAxis { origin: 0.0, step: 10.0, len: 23, domain: Domain::Depth };
    let g = Geometry::regular(LineAxis::new(1, 1, 41), LineAxis::new(1, 1, 57), depth);
    let value = |t: usize, k: usize| 1500.0 + ((t * 7919 + k * 104729) % 100003) as f32 * 0.0137;
    VelocityGrid::from_fn(g, "cube", |t| move |k| value(t, k)).unwrap()
}

/// The summaries of a plan's depths, found together, are bit for bit those of a sweep over every trace at
/// each depth, for functions mixed where asked for and for a grid stored whole, at any scale and on any
/// number of threads; depths between the same two samples at the same weight share one summary.
#[test]
fn summaries_found_together_are_those_of_a_sweep_of_every_trace() {
    for grid in [mixed_grid as fn() -> VelocityGrid, stored_grid] {
        for scale in [1.0, 0.93] {
            for threads in [1, 3] {
                // A grid of its own: copies share what is found.
                let g = VelocityGrid { scale, ..grid() };
                let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
                pool.install(|| g.summarise_depths(&plan_depths()));
                // Above the model its first sample holds; below it, its last: -5 m is 0 m, and 220 m and
                // deeper are one summary.
                let distinct = 23 + 22 + 2;
                assert_eq!(g.data.summaries.lock().unwrap().len(), distinct, "{threads} threads");
                for z in plan_depths() {
                    assert_eq!(g.slowness_summary(z), swept(&g, z), "z {z}, scale {scale}, {threads} threads");
                }
                assert_eq!(g.data.summaries.lock().unwrap().len(), distinct, "asked again, nothing is added");
            }
        }
    }
}

/// A depth asked for alone is summarised as when asked for with others.
#[test]
fn a_depth_asked_for_alone_is_summarised_as_with_the_others() {
    let (together, alone) = (mixed_grid(), mixed_grid());
    together.summarise_depths(&plan_depths());
    for z in [0.0, 47.3, 105.0, 1000.0] {
        assert_eq!(alone.slowness_summary(z), together.slowness_summary(z), "z {z}");
    }
}

/// The range of functions mixed where asked for, found from the ends of each run of crosslines, is that
/// of every value of the model: also where the seismic stops short of a location, so that a run's extreme
/// lies at its end, not at a location.
#[test]
fn the_range_of_mixed_functions_is_that_of_every_value() {
    let depth = SampleAxis { origin: 0.0, step: 10.0, len: 3, domain: Domain::Depth };
    let short = Geometry::regular(LineAxis::new(31, 3, 5), LineAxis::new(195, 2, 7), depth);
    let locations = [(40, 200), (57, 200), (40, 210), (57, 210)];
    // Faster towards crossline 210 at the top, slower at the bottom.
    let functions =
        [[2000.0, 2100.0, 2400.0], [2010.0, 2110.0, 2300.0], [2500.0, 2100.0, 1500.0], [2490.0, 2090.0, 1510.0]];
    let functions: Vec<Vec<f64>> = functions.iter().map(|f| f.to_vec()).collect();
    let taps = grid_taps(&locations, &short).expect("a full grid");
    let cut = VelocityGrid::mixed(short, GridMix::new(&functions, taps), "cut").unwrap();
    for g in [mixed_grid(), cut] {
        let values = (0..g.geometry.samples.len).flat_map(|k| (0..g.geometry.n_traces()).map(move |t| (k, t)));
        let all: Vec<f32> = values.map(|(k, t)| g.value(k, t)).collect();
        let (lo, hi) = all.iter().fold((f32::INFINITY, 0.0f32), |(lo, hi), &v| (lo.min(v), hi.max(v)));
        for scale in [1.0, 0.93] {
            let scaled = VelocityGrid { scale, ..g.clone() };
            assert_eq!(scaled.range(), (scale * lo as f64, scale * hi as f64), "scale {scale}");
        }
    }
}
