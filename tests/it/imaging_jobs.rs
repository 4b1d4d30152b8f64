//! Imaging jobs beyond the correctness table: requested products are exact cuts of the full image and cost
//! only the depth they need, the dip limit, a laterally varying medium for split-step, a delayed record
//! start, and the refusals.

use std::sync::Mutex;

use crate::common::{envelope_peak, for_each_backend, migrate, nrms, Job};
use seisimage::cancel::CancelToken;
use seisimage::context::RunContext;
use seisimage::imaging::{Engine, ImageRequest, ImagingParams, Method, Migration, ProductSink};
use seisimage::progress::{Progress, Silent};
use seisimage::synth::{ricker, Event, Medium, Model, ModelSpec};
use seisimage::velocity::{VelocityGrid, VelocityModel};
use seisimage::volume::{Domain, Geometry, IndexBox, SampleAxis, ValueBox, Volume};
use seisimage::window::WindowParams;

const V: f64 = 2000.0;

fn model(ilines: usize, xlines: usize, samples: usize, peak_hz: f64, events: Vec<Event>) -> Model {
    Model::new(ModelSpec {
        ilines,
        xlines,
        samples,
        dt_ms: 4.0,
        bin_m: [10.0, 10.0],
        medium: Medium::Constant { velocity: V },
        peak_hz,
        events,
        noise: None,
    })
    .unwrap()
}

fn job(params: ImagingParams, velocity: VelocityModel) -> Job {
    Job { bin: [10.0, 10.0], window: WindowParams::default(), params, velocity }
}

/// Progress that remembers each stage's announced total and the units done.
#[derive(Default)]
struct Recorder(Mutex<Vec<(String, u64, u64)>>);

impl Progress for Recorder {
    fn begin(&self, stage: &str, total: u64) {
        self.0.lock().unwrap().push((stage.to_string(), total, 0));
    }
    fn advance(&self, n: u64) {
        self.0.lock().unwrap().last_mut().unwrap().2 += n;
    }
    fn finish(&self) {}
}

/// An inline, a crossline, two depth slices and a region, asked for together (and imaged in blocks of two
/// levels), are exactly the corresponding cuts of the whole image; the depth loop goes only as deep as
/// the deepest of them.
#[test]
fn requested_products_are_cuts_of_the_whole_image() {
    let m = model(
        40,
        36,
        160,
        20.0,
        vec![
            Event::Diffractor { x: 150.0, y: 170.0, z: 200.0, amplitude: 1.0 },
            Event::Plane { x: 0.0, y: 0.0, z: 100.0, dip_deg: 25.0, azimuth_deg: 40.0, amplitude: 0.5 },
        ],
    );
    for_each_backend(|engine| {
        for method in [Method::PhaseShift, Method::Stolt, Method::SplitStep] {
            let params = ImagingParams { method, dz: 5.0, nz: Some(90), ..Default::default() };
            let mut j = job(params, m.velocity_model());
            let (image, whole) = j.run_whole(engine, &m);
            let mut request = ImageRequest::default();
            request.add_inline(&image, 16).unwrap();
            request.add_crossline(&image, 3).unwrap();
            request.add_depth_slice(&image, 200.0).unwrap();
            request.add_depth_slice(&image, 122.0).unwrap(); // nearest level: 120 m
            request
                .add_region(
                    &image,
                    &ValueBox { iline: Some([20, 30]), xline: Some([10, 12]), sample: Some([50.0, 70.0]) },
                )
                .unwrap();
            j.params.levels_per_block = Some(2);
            let plan = j.plan(&m, &request);
            // split-step images level by level in space and needs no blocks
            assert_eq!(plan.blocks.len() > 10, method != Method::SplitStep);
            let recorder = Recorder::default();
            let out = migrate(engine, &m, &plan, &j.velocity, &request, &recorder).0.unwrap();
            let whole = Volume { geometry: image.clone(), data: whole };
            let peak = whole.data.iter().fold(0.0f32, |a, v| a.max(v.abs()));
            for (b, got) in request.boxes.iter().zip(&out) {
                let expect = whole.cut(b).data;
                let worst = got.iter().zip(&expect).fold(0.0f32, |a, (x, y)| a.max((x - y).abs()));
                assert!(worst <= 1e-5 * peak, "{} {method:?} box {b:?}: {worst} vs peak {peak}", engine.name());
            }
            // The inline and crossline need every level, so here the loop goes to the bottom; with the depth
            // slices and region alone it stops at 200 m.
            let shallow = ImageRequest::new(request.boxes[2..].to_vec());
            let plan = j.plan(&m, &shallow);
            assert_eq!(plan.last_level(), 40);
            let recorder = Recorder::default();
            migrate(engine, &m, &plan, &j.velocity, &shallow, &recorder).0.unwrap();
            let stages = recorder.0.lock().unwrap();
            let (stage, total, done) = stages.last().unwrap().clone();
            // phase shift and Stolt count imaged levels (2 slices + 5 region levels), split-step depth steps
            let expect = if method == Method::SplitStep { 40 } else { 7 };
            assert_eq!((total, done), (expect, expect), "{} {method:?} stage {stage}", engine.name());
        }
    });
}

/// A product handed over: its index, the migration's progress at that moment (stage, done, total), its values.
type Arrival = (usize, (String, u64, u64), Vec<f32>);

/// Records each product the engine hands over, with how far the migration's progress was at that moment.
struct Arrivals<'a> {
    progress: &'a Recorder,
    got: Mutex<Vec<Arrival>>,
}

impl ProductSink for Arrivals<'_> {
    fn complete(&self, index: usize, values: Vec<f32>) {
        let now = self.progress.0.lock().unwrap().last().cloned().unwrap_or_default();
        self.got.lock().unwrap().push((index, now, values));
    }
}

/// Each product leaves the engine once, with the values `migrate` returns; with the depth methods, a shallow
/// depth slice leaves while the deeper levels are still being migrated, before the section that needs
/// them all.
#[test]
fn products_leave_the_engine_as_soon_as_their_last_level_is_imaged() {
    let m = model(24, 20, 120, 20.0, vec![Event::Diffractor { x: 110.0, y: 90.0, z: 150.0, amplitude: 1.0 }]);
    for_each_backend(|engine| {
        for method in [Method::PhaseShift, Method::Stolt, Method::SplitStep] {
            let params =
                ImagingParams { method, dz: 5.0, nz: Some(60), levels_per_block: Some(2), ..Default::default() };
            let j = job(params, m.velocity_model());
            let image = j.image_geometry(&m);
            let mut request = ImageRequest::default();
            request.add_inline(&image, 12).unwrap(); // every level
            request.add_depth_slice(&image, 20.0).unwrap(); // level 4
            request
                .add_region(
                    &image,
                    &ValueBox { iline: Some([5, 9]), xline: Some([3, 6]), sample: Some([100.0, 160.0]) },
                )
                .unwrap();
            let plan = j.plan(&m, &request);
            let expected = migrate(engine, &m, &plan, &j.velocity, &request, &Silent).0.unwrap();

            let progress = Recorder::default();
            let arrivals = Arrivals { progress: &progress, got: Mutex::new(Vec::new()) };
            let migration = Migration { input: &m, plan: &plan, velocity: &j.velocity, request: &request };
            let mut ctx = RunContext::new(&progress, CancelToken::new());
            engine.migrate_into(&migration, &mut ctx, &arrivals).unwrap();
            let got = arrivals.got.into_inner().unwrap();
            let name = format!("{} {method:?}", engine.name());

            let mut order: Vec<usize> = got.iter().map(|(i, ..)| *i).collect();
            order.sort_unstable();
            assert_eq!(order, vec![0, 1, 2], "{name}: each product once");
            let peak = expected.iter().flatten().fold(0.0f32, |a, v| a.max(v.abs()));
            for (i, _, values) in &got {
                let worst = values.iter().zip(&expected[*i]).fold(0.0f32, |a, (x, y)| a.max((x - y).abs()));
                assert_eq!(values.len(), expected[*i].len(), "{name} product {i}");
                assert!(worst <= 1e-6 * peak, "{name} product {i}: {worst} vs peak {peak}");
            }
            if method != Method::Stolt {
                let migration = progress.0.lock().unwrap().last().unwrap().0.clone();
                let (_, (stage, total, done), _) = got.iter().find(|(i, ..)| *i == 1).unwrap();
                assert!(
                    *stage == migration && done < total,
                    "{name}: the depth slice arrived at {stage} {done} of {total}, not during {migration}"
                );
                let at = |k: usize| got.iter().position(|(i, ..)| *i == k).unwrap();
                assert!(at(1) < at(0), "{name}: the depth slice arrives before the inline");
            }
        }
    });
}

/// With a dip limit of 30°, a 50° reflector all but vanishes from the image and a 15° one stays.
#[test]
fn dip_limit_removes_steep_dips_only() {
    for_each_backend(|engine| {
        for method in [Method::PhaseShift, Method::Stolt, Method::SplitStep] {
            let energy = |engine: &mut dyn Engine, dip_deg: f64, limit: Option<f64>| {
                let plane = Event::Plane { x: 100.0, y: 0.0, z: 0.0, dip_deg, azimuth_deg: 0.0, amplitude: 1.0 };
                let m = model(96, 1, 200, 15.0, vec![plane]);
                let params = ImagingParams {
                    method,
                    dz: 5.0,
                    nz: Some(100),
                    fmax: 45.0,
                    dip_limit_deg: limit,
                    ..Default::default()
                };
                let (_, out) = job(params, m.velocity_model()).run_whole(engine, &m);
                out.iter().map(|v| (*v as f64).powi(2)).sum::<f64>()
            };
            let steep = energy(engine, 50.0, Some(30.0)) / energy(engine, 50.0, None);
            let gentle = energy(engine, 15.0, Some(30.0)) / energy(engine, 15.0, None);
            println!(
                "{} {method:?}: energy kept by a 30° limit: 50° dip {steep:.2e}, 15° dip {gentle:.3}",
                engine.name()
            );
            assert!(steep < 0.02 && gentle > 0.95, "{} {method:?}: {steep} {gentle}", engine.name());
        }
    });
}

/// Split-step through a lateral velocity gradient `v = v0 + g x`. The data come from the exact travel time
/// of a linear-gradient medium, `t = (1/g) acosh(1 + g² R² / (2 v_a v_b))` each way; the diffractor focuses
/// within one sample, where a constant velocity (the reference at its depth) misplaces it by three traces.
/// Phase shift and Stolt refuse the model.
#[test]
fn split_step_focuses_through_a_lateral_gradient() {
    let (ni, nx, nt) = (64, 48, 200);
    let (v0, g) = (2000.0, 0.8); // 2000 m/s at x = 0, 2504 m/s at x = 630 m
    let vel = |x: f64| v0 + g * x;
    let (x0, y0, z0) = (320.0, 240.0, 346.0); // il 32, xl 24, depth sample 86.5 at dz = 4 m
    let mut data = Volume::zeros(Geometry::regular(
        seisimage::volume::LineAxis::new(1, 1, ni),
        seisimage::volume::LineAxis::new(1, 1, nx),
        SampleAxis { origin: 0.0, step: 4.0, len: nt, domain: Domain::Time },
    ));
    let t_vertical = 2.0 / g * (1.0 + g * g * z0 * z0 / (2.0 * vel(x0) * vel(x0))).acosh();
    for il in 0..ni {
        for xl in 0..nx {
            let (x, y) = (il as f64 * 10.0, xl as f64 * 10.0);
            let r2 = (x - x0).powi(2) + (y - y0).powi(2) + z0 * z0;
            let t = 2.0 / g * (1.0 + g * g * r2 / (2.0 * vel(x) * vel(x0))).acosh();
            for (k, s) in data.trace_mut(il, xl).iter_mut().enumerate() {
                *s = (t_vertical / t * ricker(20.0, k as f64 * 0.004 - t)) as f32;
            }
        }
    }
    let mut model = Volume::zeros(Geometry::regular(
        data.geometry.ilines,
        data.geometry.xlines,
        SampleAxis { origin: 0.0, step: 1000.0, len: 2, domain: Domain::Depth },
    ));
    for il in 0..ni {
        for xl in 0..nx {
            model.trace_mut(il, xl).fill(vel(il as f64 * 10.0) as f32);
        }
    }
    let velocity = VelocityModel::Grid(VelocityGrid::new(model.geometry, model.data, "gradient").unwrap());
    let params = ImagingParams { method: Method::SplitStep, dz: 4.0, nz: Some(120), fmax: 60.0, ..Default::default() };
    let centre = [x0 / 10.0, y0 / 10.0, z0 / 4.0];
    for_each_backend(|engine| {
        let (image, out) = job(params.clone(), velocity.clone()).run_whole(engine, &data);
        let peak = envelope_peak(&out, image.shape());
        let constant = VelocityModel::Constant(velocity.reference_velocity(z0));
        let naive = ImagingParams { method: Method::PhaseShift, ..params.clone() };
        let (_, out) = job(naive, constant).run_whole(engine, &data);
        let misplaced = envelope_peak(&out, image.shape());
        println!("{}: split-step peak {peak:?}, constant velocity {misplaced:?}, true {centre:?}", engine.name());
        for a in 0..3 {
            assert!((peak[a] as f64 - centre[a]).abs() <= 1.0, "{}: {peak:?} vs {centre:?}", engine.name());
        }
        assert!(misplaced[0] as f64 - centre[0] >= 2.0, "{}: {misplaced:?}", engine.name());
    });
    for method in [Method::PhaseShift, Method::Stolt] {
        let j = job(ImagingParams { method, ..params.clone() }, velocity.clone());
        let request = ImageRequest::whole(&j.image_geometry(&data));
        let plan = seisimage::imaging::Plan::new(&data.geometry, j.bin, &j.window, &j.params, &j.velocity, &request);
        let e = plan.unwrap_err().to_string();
        assert!(e.contains(method.name()) && e.contains("split-step"), "{e}");
    }
}

/// A record that starts late (the first sample at 100 ms, as a delay recording time gives) migrates to
/// the same image as the record that starts at 0 ms.
#[test]
fn delayed_record_start_is_honoured() {
    let m = model(40, 40, 250, 20.0, vec![Event::Diffractor { x: 200.0, y: 190.0, z: 400.0, amplitude: 1.0 }]);
    let full = m.generate();
    let late = full.cut(&IndexBox { il: 0..40, xl: 0..40, s: 25..250 });
    assert_eq!(late.geometry.samples.origin, 100.0);
    let params = ImagingParams { dz: 5.0, nz: Some(110), ..Default::default() };
    for_each_backend(|engine| {
        let (image, a) = job(params.clone(), m.velocity_model()).run_whole(engine, &full);
        let (_, b) = job(params.clone(), m.velocity_model()).run_whole(engine, &late);
        let d = nrms(&b, &a);
        println!("{}: delayed start vs full record: NRMS {d:.4}", engine.name());
        assert!(d < 0.05, "{}: {d}", engine.name());
        assert_eq!(envelope_peak(&a, image.shape()), [20, 19, 80]);
        assert_eq!(envelope_peak(&b, image.shape()), [20, 19, 80]);
    });
}

/// An engine refuses a source the plan was not made for and a request the plan did not plan.
#[test]
fn engines_refuse_mismatched_inputs() {
    let m = model(16, 16, 100, 20.0, vec![]);
    let other = model(16, 17, 100, 20.0, vec![]);
    let j = job(ImagingParams { nz: Some(20), ..Default::default() }, m.velocity_model());
    let image = j.image_geometry(&m);
    let slice = ImageRequest::new(vec![IndexBox { s: 5..6, ..image.full_box() }]);
    let plan = j.plan(&m, &slice);
    for_each_backend(|engine| {
        let e = migrate(engine, &other, &plan, &j.velocity, &slice, &Silent).0.unwrap_err();
        assert!(e.to_string().contains("plan was made for"), "{e}");
        let deeper = ImageRequest::new(vec![IndexBox { s: 9..10, ..image.full_box() }]);
        let e = migrate(engine, &m, &plan, &j.velocity, &deeper, &Silent).0.unwrap_err();
        assert!(e.to_string().contains("not planned"), "{e}");
    });
}

/// A volume whose inlines from `bad` on cannot be read, as a file cut short would.
struct UnreadableFrom {
    volume: Volume,
    bad: usize,
}

impl seisimage::volume::VolumeReader for UnreadableFrom {
    fn geometry(&self) -> &Geometry {
        &self.volume.geometry
    }
    fn describe(&self) -> String {
        "a volume cut short".into()
    }
    fn read_box(&self, b: &IndexBox, out: &mut [f32]) -> seisimage::error::Result<()> {
        if b.il.end > self.bad {
            return Err(seisimage::error::Error::Request(format!("inline {} cannot be read", self.bad + 1)));
        }
        self.volume.read_box(b, out)
    }
}

/// An input that fails part of the way through, read in many chunks (on the GPU while earlier chunks are
/// uploaded), stops the migration with its error; the engine then runs the next job as usual.
#[test]
fn an_input_failing_part_way_stops_the_migration_with_its_error() {
    let m = model(40, 36, 160, 20.0, vec![Event::Diffractor { x: 150.0, y: 170.0, z: 200.0, amplitude: 1.0 }]);
    let j = job(ImagingParams { dz: 5.0, nz: Some(60), ..Default::default() }, m.velocity_model());
    let volume = m.generate();
    let request = ImageRequest::whole(&j.image_geometry(&volume));
    let cut_short = UnreadableFrom { volume: volume.clone(), bad: 20 };
    let mut plan = j.plan(&cut_short, &request);
    plan.ingest_inlines = 3;
    for_each_backend(|engine| {
        let e = migrate(engine, &cut_short, &plan, &j.velocity, &request, &Silent).0.unwrap_err();
        assert!(e.to_string().contains("inline 21 cannot be read"), "{}: {e}", engine.name());
        let image = j.run(engine, &volume, &request);
        assert!(image[0].iter().any(|v| *v != 0.0), "{}: the next run images", engine.name());
    });
}
