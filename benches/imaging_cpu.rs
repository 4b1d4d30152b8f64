//! CPU imaging throughput and its scaling with threads.
//!
//! Migrates a synthetic volume (computed on the fly from its formulas, so the input is never held in
//! memory) with each method on 1, 2, 4, … and all threads, each count in a rayon pool of its own, and
//! reports depth-step updates per second: `n_ω · n_kx · n_ky · n_z / time`, counting the padded wavenumber
//! grid and the depth steps computed. The request is an inline, a crossline and the deepest depth slice, so
//! every level down to the bottom is continued and imaged.
//!
//! Settings (environment):
//! - `SEISIMAGE_BENCH_SHAPE`: inlines x crosslines x samples, default `128x128x500` (4 ms, 12.5 m bins)
//! - `SEISIMAGE_BENCH_METHODS`: default `phase-shift,stolt,split-step`
//! - `SEISIMAGE_BENCH_THREADS`: comma-separated counts, default 1, 2, 4, … up to all cores
//! - `SEISIMAGE_BENCH_SPLIT_STEP_LEVELS`: depth levels for split-step, which runs two 2-D FFTs per frequency
//!   and step (default 40, so a run stays short on a small machine)
//!
//! Run: `cargo bench --bench imaging_cpu`

use std::time::Instant;

use seisimage::cancel::CancelToken;
use seisimage::context::RunContext;
use seisimage::imaging::{CpuEngine, Engine, ImageRequest, ImagingParams, Method, Migration, Plan};
use seisimage::progress::Silent;
use seisimage::synth::{Event, Medium, Model, ModelSpec};
use seisimage::volume::{Geometry, IndexBox};
use seisimage::window::WindowParams;

fn env_or(name: &str, default: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| default.to_string())
}

fn model(shape: [usize; 3]) -> Model {
    let [ni, nx, _] = shape;
    let (bx, by) = (12.5 * ni as f64, 12.5 * nx as f64);
    let diffractor = |fx: f64, fy: f64, z: f64| Event::Diffractor { x: fx * bx, y: fy * by, z, amplitude: 1.0 };
    Model::new(ModelSpec {
        ilines: ni,
        xlines: nx,
        samples: shape[2],
        dt_ms: 4.0,
        bin_m: [12.5, 12.5],
        medium: Medium::Constant { velocity: 2000.0 },
        peak_hz: 25.0,
        events: vec![
            diffractor(0.3, 0.4, 300.0),
            diffractor(0.6, 0.5, 700.0),
            diffractor(0.5, 0.7, 1200.0),
            Event::Plane { x: 0.0, y: 0.0, z: 200.0, dip_deg: 20.0, azimuth_deg: 30.0, amplitude: 0.5 },
            Event::Reflector { z: 900.0, amplitude: 0.7 },
        ],
        noise: None,
    })
    .expect("benchmark model")
}

/// An inline and a crossline through the middle and the deepest depth slice.
fn request(image: &Geometry, levels: usize) -> ImageRequest {
    let [ni, nx, _] = image.shape();
    ImageRequest::new(vec![
        IndexBox { il: ni / 2..ni / 2 + 1, xl: 0..nx, s: 0..levels },
        IndexBox { il: 0..ni, xl: nx / 2..nx / 2 + 1, s: 0..levels },
        IndexBox { il: 0..ni, xl: 0..nx, s: levels - 1..levels },
    ])
}

fn main() {
    let shape: Vec<usize> = env_or("SEISIMAGE_BENCH_SHAPE", "128x128x500")
        .split('x')
        .map(|s| s.trim().parse().expect("SEISIMAGE_BENCH_SHAPE is NxNxN"))
        .collect();
    let shape = [shape[0], shape[1], shape[2]];
    let methods: Vec<Method> = env_or("SEISIMAGE_BENCH_METHODS", "phase-shift,stolt,split-step")
        .split(',')
        .map(|m| <Method as seisimage::choice::Choice>::from_name(m.trim()).expect("a method name"))
        .collect();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads: Vec<usize> = match std::env::var("SEISIMAGE_BENCH_THREADS") {
        Ok(list) => list.split(',').map(|t| t.trim().parse().expect("thread counts")).collect(),
        Err(_) => {
            let mut t: Vec<usize> =
                std::iter::successors(Some(1), |n| Some(n * 2)).take_while(|&n| n < cores).collect();
            t.push(cores);
            t
        }
    };
    let split_levels: usize = env_or("SEISIMAGE_BENCH_SPLIT_STEP_LEVELS", "40").parse().expect("a level count");

    let model = model(shape);
    println!(
        "imaging_cpu: {} x {} x {} samples of 4 ms, 12.5 m bins, v 2000 m/s, dz 4 m, 0-60 Hz; {cores} cores",
        shape[0], shape[1], shape[2]
    );
    println!(
        "{:<12} {:>7} {:>9} {:>9} {:>9} {:>14} {:>8} {:>9}",
        "method", "threads", "total s", "ingest s", "migrate s", "updates/s", "speed-up", "host MiB"
    );
    for &method in &methods {
        let params = ImagingParams { method, dz: 4.0, fmax: 60.0, ..Default::default() };
        let velocity = model.velocity_model();
        let image = seisimage::imaging::image_geometry(model.geometry(), &params, &velocity).expect("image");
        let levels = if method == Method::SplitStep { split_levels.min(image.samples.len) } else { image.samples.len };
        let request = request(&image, levels);
        let plan =
            Plan::new(model.geometry(), model.bin_size(), &WindowParams::default(), &params, &velocity, &request)
                .expect("plan");
        let updates = (plan.n_omega() * plan.nk() * plan.last_level()) as f64;
        let mut base = None;
        for &n in &threads {
            let mut engine = CpuEngine::new(Some(n)).expect("thread pool");
            let mut ctx = RunContext::new(&Silent, CancelToken::new());
            let migration = Migration { input: &model, plan: &plan, velocity: &velocity, request: &request };
            let t = Instant::now();
            engine.migrate(&migration, &mut ctx).expect("migration");
            let total = t.elapsed().as_secs_f64();
            let migrate = ctx.stats.seconds("migrate").unwrap_or(0.0);
            let ingest = total - migrate;
            let rate = updates / total;
            let speedup = base.map_or(1.0, |b: f64| b / total);
            base.get_or_insert(total);
            println!(
                "{:<12} {:>7} {:>9.2} {:>9.2} {:>9.2} {:>14.3e} {:>8.2} {:>9.0}",
                method.name(),
                n,
                total,
                ingest,
                migrate,
                rate,
                speedup,
                plan.host_memory_bytes() as f64 / (1u64 << 20) as f64
            );
        }
        println!(
            "  ({}: {} frequencies x {} x {} wavenumbers x {} depth steps)",
            method.name(),
            plan.n_omega(),
            plan.padded[0],
            plan.padded[1],
            plan.last_level()
        );
    }
}
