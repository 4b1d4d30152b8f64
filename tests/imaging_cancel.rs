//! A stop request (SIGINT / SIGTERM) ends a migration with `Interrupted`, also once the depth loop has
//! begun. In a binary of its own: the stop flag is process-wide and stays set.

mod common;

use common::{for_each_backend, Job};
use seisimage::imaging::{ImageRequest, ImagingParams, Method};
use seisimage::progress::Progress;
use seisimage::stats::RunStats;
use seisimage::synth::{Event, Medium, Model, ModelSpec};
use seisimage::window::WindowParams;
use seisimage::Error;

/// Progress that asks to stop as soon as the migration proper (after reading the input) begins.
struct StopAtMigration;

impl Progress for StopAtMigration {
    fn begin(&self, stage: &str, _total: u64) {
        if stage != "read and transform in time" {
            seisimage::cancel::request_stop(signal_hook::consts::SIGINT);
        }
    }
    fn advance(&self, _n: u64) {}
    fn finish(&self) {}
}

#[test]
fn a_stop_request_interrupts_every_method() {
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
    for_each_backend(|engine| {
        for method in [Method::PhaseShift, Method::Stolt, Method::SplitStep] {
            let params = ImagingParams { method, dz: 4.0, nz: Some(30), ..Default::default() };
            let j =
                Job { bin: [10.0, 10.0], window: WindowParams::default(), params, velocity: model.velocity_model() };
            let request = ImageRequest::whole(&j.image_geometry(&model));
            let plan = j.plan(&model, &request);
            let result =
                engine.migrate(&model, &plan, &j.velocity, &request, &StopAtMigration, &mut RunStats::default());
            assert!(matches!(result, Err(Error::Interrupted("SIGINT"))), "{} {method:?}", engine.name());
        }
    });
}
