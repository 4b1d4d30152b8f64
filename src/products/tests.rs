use super::*;
use crate::error::Error;
use crate::imaging::ImagingParams;
use crate::job::OutputConfig;
use crate::render::RenderOptions;
use crate::velocity::VelocityModel;
use crate::volume::{Domain, LineAxis, SampleAxis};

/// Missing traces are zero from top to bottom, every trace is zero below the reach, and the values
/// are borrowed untouched when neither applies.
#[test]
fn deliverable_values_are_zero_where_nothing_was_recorded() {
    let depth = SampleAxis { origin: 100.0, step: 10.0, len: 4, domain: Domain::Depth };
    let mut g = Geometry::regular(LineAxis::new(1, 1, 1), LineAxis::new(1, 1, 3), depth);
    let values: Vec<f32> = (1..=12).map(|v| v as f32).collect();
    assert!(matches!(deliverable(&values, &g, None), Cow::Borrowed(_)));
    assert!(matches!(deliverable(&values, &g, Some(130.0)), Cow::Borrowed(_)), "the last level is at the reach");
    g.live[1] = false;
    let expect = [1.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 9.0, 10.0, 0.0, 0.0];
    assert_eq!(&*deliverable(&values, &g, Some(115.0)), &expect);
}

#[test]
fn a_time_axis_too_long_for_a_mistyped_step_is_refused_before_anything_is_allocated() {
    let depth = SampleAxis { origin: 0.0, step: 10.0, len: 100, domain: Domain::Depth };
    let image = Geometry::regular(LineAxis::new(1, 1, 2), LineAxis::new(1, 1, 2), depth);
    let output = OutputConfig { inlines: vec![1], ..Default::default() };
    let v = VelocityModel::Constant(2000.0);
    let imaging = ImagingParams::default();
    // 990 m is 990 ms: 9.9 million samples of 0.1 µs.
    let e = plan_time_products(&output, &image, &imaging, &[&v], 1e-4).unwrap_err();
    assert!(matches!(&e, Error::Setting { key, .. } if key == "output.time_step_ms"), "{e}");
    let specs = plan_time_products(&output, &image, &imaging, &[&v], 4.0).unwrap();
    assert_eq!((specs[0][0].stem.as_str(), specs[0][0].time.as_ref().unwrap().axis.len), ("inline_1_time", 248));
}

/// A product in time is made deliverable in depth (missing traces and what lies below the reach zeroed),
/// then converted: a dead trace stays dead and times below the reach are zero.
#[test]
fn a_product_in_time_is_zero_where_nothing_was_recorded() {
    let depth = SampleAxis { origin: 0.0, step: 10.0, len: 10, domain: Domain::Depth };
    let mut image = Geometry::regular(LineAxis::new(1, 1, 1), LineAxis::new(1, 1, 2), depth);
    image.live[1] = false;
    let v = VelocityModel::Constant(2000.0);
    let output = OutputConfig { inlines: vec![1], ..Default::default() };
    let mut spec = plan_time_products(&output, &image, &ImagingParams::default(), &[&v], 10.0).unwrap()[0].remove(0);
    // 10 m at 2000 m/s is 10 ms two-way: the time axis is the depth axis in ms.
    assert_eq!(spec.geometry(&image).samples, SampleAxis { origin: 0.0, step: 10.0, len: 10, domain: Domain::Time });
    spec.reach = Some(Reach { depth: 45.0, time: None });
    let values = vec![1.0f32; 20];
    let got = spec.values(&image, &values);
    let expect: Vec<f32> = (0..10).map(|k| if k <= 4 { 1.0 } else { 0.0 }).chain([0.0; 10]).collect();
    assert_eq!(&*got, &expect[..]);
}

#[test]
fn the_size_estimate_by_hand() {
    let region = IndexBox { il: 0..1, xl: 0..30, s: 0..200 }; // 6000 values
    let spec = |formats: Vec<VolumeFormat>, png| ProductSpec {
        kind: ProductKind::Inline { iline: 1 },
        attribute: None,
        stem: "inline_1".into(),
        region: region.clone(),
        formats,
        png,
        time: None,
        scan: None,
        reach: None,
    };
    let render = RenderOptions::default(); // min_width 800, max_pixels 4096²
                                           // two files of 24000 + 8192 bytes
    assert_eq!(estimated_bytes(&[spec(vec![VolumeFormat::Npy, VolumeFormat::Hdf5], false)], &render), 64_384);
    // a picture of at least 800² pixels, 3 bytes each, and 65536 bytes besides
    assert_eq!(estimated_bytes(&[spec(vec![], true)], &render), 1_985_536);
    let small = RenderOptions { min_width: 10, max_pixels: 5000, ..render };
    assert_eq!(estimated_bytes(&[spec(vec![], true)], &small), 15_000 + 65_536);
}
