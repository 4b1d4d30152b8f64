//! Tests of the volume model: axes, boxes, in-memory reads and statistics.

use super::*;

#[test]
fn a_buffer_not_the_size_of_the_box_is_refused() {
    let axis = SampleAxis { origin: 0.0, step: 4.0, len: 5, domain: Domain::Time };
    let v = Volume::zeros(Geometry::regular(LineAxis::new(1, 1, 3), LineAxis::new(1, 1, 2), axis));
    let b = v.geometry.full_box();
    let e = v.read_box(&b, &mut [0.0; 29]).unwrap_err().to_string();
    assert!(e.contains("holds 29 values, box needs 30"), "{e}");
    assert!(v.read_box(&b, &mut [1.0; 30]).is_ok());
}

#[test]
fn line_axis_lookup() {
    let a = LineAxis::new(100, 2, 5); // 100 102 104 106 108
    assert_eq!(a.last(), 108);
    assert_eq!(a.index_of(104), Some(2));
    assert_eq!(a.index_of(105), None);
    assert_eq!(a.index_of(110), None);
    assert_eq!(a.index_of(98), None);
    assert_eq!(a.index_range(101, 107), 1..4);
    assert_eq!(a.index_range(107, 101), 1..4);
    assert_eq!(a.index_range(0, 99), 0..0);
    assert_eq!(a.index_range(109, 200), 5..5);
    assert_eq!(a.index_range(0, 1000), 0..5);
    // Steps and numbers near the 64-bit limits (an HDF5 axis may hold them) select without wrapping.
    let wide = LineAxis::new(-(1 << 62), (1 << 62) + 7, 2);
    assert_eq!(wide.index_range(wide.value(1), wide.value(1)), 1..2);
    assert_eq!(wide.index_of(wide.value(1)), Some(1));
    assert_eq!(wide.index_of(i64::MAX), None);
    assert_eq!(wide.index_range(i64::MIN, i64::MAX), 0..2);
}

#[test]
fn sample_axis_lookup() {
    let a = SampleAxis { origin: 4.0, step: 4.0, len: 10, domain: Domain::Time }; // 4..=40
    assert_eq!(a.nearest_index(4.0), Some(0));
    assert_eq!(a.nearest_index(9.9), Some(1));
    assert_eq!(a.nearest_index(41.9), Some(9));
    assert_eq!(a.nearest_index(43.0), None);
    assert_eq!(a.index_range(8.0, 16.0), 1..4);
    assert_eq!(a.index_range(7.0, 17.0), 1..4);
    assert_eq!(a.index_range(100.0, 200.0), 10..10);
}

#[test]
#[allow(clippy::identity_op)] // the index is spelled out as (il · nx + xl) · nt + s
fn cut_and_subset_agree() {
    let g = Geometry::regular(
        LineAxis::new(1, 1, 3),
        LineAxis::new(10, 5, 4),
        SampleAxis { origin: 0.0, step: 2.0, len: 6, domain: Domain::Time },
    );
    let mut v = Volume::zeros(g);
    for (k, x) in v.data.iter_mut().enumerate() {
        *x = k as f32;
    }
    let b = v
        .geometry
        .index_box(&ValueBox { iline: Some([2, 3]), xline: Some([15, 20]), sample: Some([2.0, 6.0]) })
        .unwrap();
    assert_eq!(b, IndexBox { il: 1..3, xl: 1..3, s: 1..4 });
    let c = v.cut(&b);
    assert_eq!(c.geometry.shape(), [2, 2, 3]);
    assert_eq!(c.geometry.ilines.first, 2);
    assert_eq!(c.geometry.xlines.first, 15);
    assert_eq!(c.geometry.samples.origin, 2.0);
    // element (il=1, xl=1, s=1) of the original is the first of the cut
    assert_eq!(c.data[0], ((1 * 4 + 1) * 6 + 1) as f32);
    let mut out = vec![0.0; b.len()];
    v.read_box(&b, &mut out).unwrap();
    assert_eq!(out, c.data);
    assert!(v.geometry.index_box(&ValueBox { iline: Some([7, 9]), ..Default::default() }).is_err());
}

#[test]
fn amplitude_statistics_count_non_finite_samples_apart() {
    let v = [1.0f32, -3.0, f32::NAN, 2.0, f32::INFINITY, f32::NEG_INFINITY];
    let s = AmplitudeStats::of(&v);
    assert_eq!((s.finite, s.nan, s.infinite), (3, 1, 2));
    assert_eq!((s.min, s.max), (-3.0, 2.0));
    assert!((s.mean - 0.0).abs() < 1e-12);
    assert!((s.rms - (14.0f64 / 3.0).sqrt()).abs() < 1e-12);
    let empty = AmplitudeStats::of(&[]);
    assert_eq!((empty.min, empty.max, empty.finite), (0.0, 0.0, 0));

    // from a reader: the dead trace is left out
    let mut g = Geometry::regular(
        LineAxis::new(1, 1, 2),
        LineAxis::new(1, 1, 2),
        SampleAxis { origin: 0.0, step: 4.0, len: 2, domain: Domain::Time },
    );
    g.live[3] = false;
    let vol = Volume { geometry: g, data: vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 0.0, 0.0] };
    let s = AmplitudeStats::of_reader(&vol, &crate::progress::Silent).unwrap();
    assert_eq!((s.finite, s.min, s.max), (6, 1.0, 6.0));
    assert!((s.mean - 3.5).abs() < 1e-12);
}
