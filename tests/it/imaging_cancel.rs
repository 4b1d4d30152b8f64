//! A stop request ends a migration with `Interrupted`, also once the depth loop has begun; it stops that run
//! alone, and the same engine then runs the next one under a fresh token.

use crate::common::{for_each_backend, Job};
use seisimage::cancel::{CancelToken, Stop};
use seisimage::context::RunContext;
use seisimage::imaging::{ImageRequest, ImagingParams, Method, Migration};
use seisimage::progress::{Progress, Silent};
use seisimage::synth::{Event, Medium, Model, ModelSpec};
use seisimage::window::WindowParams;
use seisimage::Error;

/// Progress that stops its run's token as soon as the migration proper (after reading the input) begins.
struct StopAtMigration(CancelToken);

impl Progress for StopAtMigration {
    fn begin(&self, stage: &str, _total: u64) {
        if stage != "read and transform in time" {
            self.0.cancel(Stop::Requested);
        }
    }
    fn advance(&self, _n: u64) {}
    fn finish(&self) {}
}

#[test]
fn a_stop_request_interrupts_every_method_and_only_its_own_run() {
    let model = Model::new(ModelSpec {
        ilines: 16,
        xlines: 16,
        samples: 64,
        dt_ms: 4.0,
        bin_m: [10.0, 10.0],
        medium: Medium::Constant { velocity: 2000.0 },
        peak_hz: 20.0,
        events: vec![Event::Reflector { z: 50.0, amplitude: 1.0 }],
        noise: None,
    })
    .unwrap();
    let batch = CancelToken::new();
    for_each_backend(|engine| {
        for method in [Method::PhaseShift, Method::Stolt, Method::SplitStep] {
            let params = ImagingParams { method, dz: 4.0, nz: Some(30), ..Default::default() };
            let j =
                Job { bin: [10.0, 10.0], window: WindowParams::default(), params, velocity: model.velocity_model() };
            let request = ImageRequest::whole(&j.image_geometry(&model));
            let plan = j.plan(&model, &request);
            let m = Migration { input: &model, plan: &plan, velocity: &j.velocity, request: &request };
            let name = format!("{} {method:?}", engine.name());

            let stopper = StopAtMigration(batch.child());
            let mut ctx = RunContext::new(&stopper, stopper.0.clone());
            let result = engine.migrate(&m, &mut ctx);
            assert!(matches!(result, Err(Error::Interrupted(Stop::Requested))), "{name}");

            // The stop was this run's: the next run, on the same engine, completes.
            let mut ctx = RunContext::new(&Silent, batch.child());
            let images = engine.migrate(&m, &mut ctx).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(images[0].iter().any(|v| *v != 0.0), "{name}");
        }
    });
    assert!(batch.check().is_ok());
}
