use super::*;
use seis_core::volume::{Domain, SampleAxis};

fn grid(il: LineAxis, xl: LineAxis) -> Geometry {
    Geometry::regular(il, xl, SampleAxis { origin: 0.0, step: 4.0, len: 2, domain: Domain::Time })
}

#[test]
fn a_coarser_larger_model_is_read_in_part_and_mixed_bilinearly() {
    // Model every 4th line over 100..=140 and 200..=240; seismic every line over 110..=117, 205..=210.
    let model = grid(LineAxis::new(100, 4, 11), LineAxis::new(200, 4, 11));
    let seismic = grid(LineAxis::new(110, 1, 8), LineAxis::new(205, 1, 6));
    let taps = cube_taps(&model, &seismic, Locate::Lines, Outside::Refuse).unwrap().0;
    // Lines 108..=120 and 204..=212 are read.
    assert_eq!((taps.read.il.clone(), taps.read.xl.clone()), (2..6, 1..4));
    // A model linear in line numbers comes back exactly: v = 1000 + 3 il + 5 xl, two samples (v, 2v).
    let (ri, rx) = (taps.read.il.clone(), taps.read.xl.clone());
    let v = |il: i64, xl: i64| 1000.0 + 3.0 * il as f64 + 5.0 * xl as f64;
    let values: Vec<f32> = ri
        .flat_map(|i| rx.clone().map(move |j| (i, j)))
        .flat_map(|(i, j)| {
            let x = v(model.ilines.value(i), model.xlines.value(j)) as f32;
            [x, 2.0 * x]
        })
        .collect();
    let out = apply_cube_taps(&values, &taps, 2);
    for i in 0..8 {
        for j in 0..6 {
            let t = i * 6 + j;
            let expect = v(seismic.ilines.value(i), seismic.xlines.value(j));
            assert!((out[2 * t] as f64 - expect).abs() < 1e-3 && (out[2 * t + 1] as f64 - 2.0 * expect).abs() < 1e-2);
        }
    }
}

#[test]
fn a_model_that_does_not_cover_the_seismic_says_which_lines_are_missing() {
    let model = grid(LineAxis::new(100, 2, 6), LineAxis::new(200, 1, 20));
    let seismic = grid(LineAxis::new(96, 1, 20), LineAxis::new(205, 1, 5));
    let e = cube_taps(&model, &seismic, Locate::Lines, Outside::Refuse).unwrap_err();
    assert!(e.contains("inlines 100..=110") && e.contains("96..=99 and 111..=115"), "{e}");
    let mut dead = grid(LineAxis::new(100, 1, 3), LineAxis::new(200, 1, 3));
    dead.live[4] = false;
    let e = cube_taps(&dead, &grid(LineAxis::new(101, 1, 1), LineAxis::new(201, 1, 1)), Locate::Lines, Outside::Refuse)
        .unwrap_err();
    assert!(e.contains("no trace at inline 101, crossline 201"), "{e}");
}

#[test]
fn by_coordinates_a_rotated_model_lands_where_the_map_says() {
    // The model: 25 m bins rotated by 30°; the seismic: 12.5 m bins on the same axes, offset by half a bin.
    let (c, s) = (30f64.to_radians().cos(), 30f64.to_radians().sin());
    let mut model = grid(LineAxis::new(1, 1, 10), LineAxis::new(1, 1, 10));
    model.coords = Some(CoordTransform {
        origin: [1000.0, 2000.0],
        per_iline: [25.0 * c, 25.0 * s],
        per_xline: [-25.0 * s, 25.0 * c],
    });
    let mut seismic = grid(LineAxis::new(500, 1, 4), LineAxis::new(800, 1, 4));
    let o = model.coords.unwrap().xy(2.5, 3.0);
    seismic.coords =
        Some(CoordTransform { origin: o, per_iline: [12.5 * c, 12.5 * s], per_xline: [-12.5 * s, 12.5 * c] });
    let taps = cube_taps(&model, &seismic, Locate::Coordinates, Outside::Refuse).unwrap().0;
    // Seismic trace (1, 2) is at model index (2.5 + 0.5, 3 + 1) = (3, 4).
    let t = taps.taps[4 + 2];
    let (fi, fj) = ((t[0].lo + taps.read.il.start) as f64 + t[0].w, (t[1].lo + taps.read.xl.start) as f64 + t[1].w);
    assert!((fi - 3.0).abs() < 1e-9 && (fj - 4.0).abs() < 1e-9, "{fi} {fj}");
    seismic.coords.as_mut().unwrap().origin = [0.0, 0.0];
    assert!(cube_taps(&model, &seismic, Locate::Coordinates, Outside::Refuse)
        .unwrap_err()
        .contains("16 of the seismic's 16 traces"));
    seismic.coords = None;
    assert!(cube_taps(&model, &seismic, Locate::Coordinates, Outside::Refuse)
        .unwrap_err()
        .contains("the seismic has none"));
}

#[test]
fn functions_on_a_grid_mix_bilinearly_and_scattered_ones_by_distance() {
    let seismic = grid(LineAxis::new(100, 1, 21), LineAxis::new(200, 1, 11));
    let locations = [(100, 200), (120, 200), (100, 210), (120, 210)];
    let (mixes, how) = function_weights(&locations, &seismic, [10.0, 10.0], &CancelToken::new()).unwrap();
    assert!(how.starts_with("bilinear"));
    // inline 105, crossline 208: 3/4 · 1/5 from (100, 200), ...
    let m = &mixes[5 * 11 + 8];
    let weight = |k: usize| m.iter().find(|(f, _)| *f == k).map_or(0.0, |(_, w)| *w);
    assert!((weight(0) - 0.75 * 0.2).abs() < 1e-12 && (weight(3) - 0.25 * 0.8).abs() < 1e-12, "{m:?}");
    let (mixes, how) =
        function_weights(&[(100, 200), (120, 210), (110, 205)], &seismic, [10.0, 10.0], &CancelToken::new()).unwrap();
    assert!(how.starts_with("inverse"));
    assert_eq!(mixes[10 * 11 + 5], vec![(2, 1.0)]);
    assert!((mixes[0].iter().map(|(_, w)| w).sum::<f64>() - 1.0).abs() < 1e-12);
}

/// Scattered locations, some outside the survey, some in clusters, on unequal bins: each trace mixes the
/// [`NEAREST`] locations a search through all of them finds (ties to the first in the file), weighted by
/// inverse squared distance as when every location was mixed.
#[test]
fn scattered_functions_mix_the_nearest_locations_found_by_a_full_search() {
    let seismic = grid(LineAxis::new(100, 2, 40), LineAxis::new(500, 1, 30));
    let bin = [25.0, 12.5];
    let mut seed = 12345u64;
    let mut next = |n: i64| {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (seed >> 33) as i64 % n
    };
    let mut locations: Vec<(i64, i64)> = Vec::new();
    while locations.len() < 300 {
        let l =
            if locations.len() % 3 == 0 { (150 + next(20), 510 + next(10)) } else { (60 + next(140), 480 + next(70)) };
        if !locations.contains(&l) {
            locations.push(l);
        }
    }
    let (mixes, how) = function_weights(&locations, &seismic, bin, &CancelToken::new()).unwrap();
    assert!(how.starts_with("inverse squared distance between the nearest"), "{how}");
    let ground = Ground { seismic: &seismic, bin };
    for (t, mix) in mixes.iter().enumerate() {
        let at = (seismic.ilines.value(t / 30), seismic.xlines.value(t % 30));
        let mut all: Vec<(f64, usize)> =
            locations.iter().enumerate().map(|(k, &l)| (ground.squared_distance(l, at), k)).collect();
        all.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let mut nearest: Vec<usize> = all[..NEAREST].iter().map(|&(_, k)| k).collect();
        if all[0].0 == 0.0 {
            nearest.truncate(1);
        }
        nearest.sort_unstable();
        assert_eq!(mix.iter().map(|&(k, _)| k).collect::<Vec<_>>(), nearest, "trace {t}");
        let total: f64 = mix.iter().map(|&(k, _)| 1.0 / ground.squared_distance(locations[k], at)).sum();
        for &(k, w) in mix.iter().filter(|_| mix.len() > 1) {
            assert_eq!(w, 1.0 / ground.squared_distance(locations[k], at) / total, "trace {t}");
        }
    }
}

#[test]
fn building_the_mix_stops_when_cancelled() {
    let seismic = grid(LineAxis::new(100, 1, 20), LineAxis::new(200, 1, 20));
    let cancel = CancelToken::new();
    cancel.cancel(seis_core::cancel::Stop::Sigterm);
    let e = function_weights(&[(100, 200), (119, 219), (110, 205)], &seismic, [10.0, 10.0], &cancel).unwrap_err();
    assert!(matches!(e, seis_core::error::Error::Interrupted(seis_core::cancel::Stop::Sigterm)), "{e}");
}
