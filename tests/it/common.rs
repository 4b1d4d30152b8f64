//! What the imaging tests share: the list of backends every numerical test runs on, a one-call
//! migration, and the measurements the tests make on images (envelopes, peaks, energies, differences).
#![allow(dead_code)] // each test binary uses its own subset

use num_complex::Complex64;
use rustfft::FftPlanner;
use seisimage::cancel::CancelToken;
use seisimage::context::RunContext;
use seisimage::imaging::{Engine, ImageRequest, ImagingParams, Migration, Plan};
use seisimage::progress::{Progress, Silent};
use seisimage::stats::RunStats;
use seisimage::velocity::VelocityModel;
use seisimage::volume::{Geometry, VolumeReader};
use seisimage::window::WindowParams;

/// Run `f` once on every available engine: the CPU always, the GPU when [`gpu_engine`] gives one.
pub fn for_each_backend(mut f: impl FnMut(&mut dyn Engine)) {
    let mut cpu = seisimage::imaging::CpuEngine::new(None).expect("CPU engine");
    f(&mut cpu);
    if let Some(mut gpu) = gpu_engine() {
        f(&mut gpu);
    }
}

/// The CUDA engine on device 0 when `SEISIMAGE_GPU_TESTS=1`. Without that variable, or without a usable
/// GPU, GPU runs are skipped with a message — except that with the variable set a missing GPU is a failure,
/// so a GPU test run can never pass by skipping.
pub fn gpu_engine() -> Option<seisimage::gpu::GpuEngine> {
    let wanted = std::env::var("SEISIMAGE_GPU_TESTS").as_deref() == Ok("1");
    if !wanted {
        eprintln!("GPU run skipped: set SEISIMAGE_GPU_TESTS=1 on a machine with a CUDA device to run it");
        return None;
    }
    let rt = seisimage::gpu::probe().unwrap_or_else(|e| panic!("SEISIMAGE_GPU_TESTS=1 but no usable GPU: {e}"));
    // Compiled afresh, so that the tests exercise the kernels of this source (the cache has its own test).
    let cache = seisimage::gpu::kernel_cache::KernelCache::off();
    let engine = seisimage::gpu::GpuEngine::new(rt.devices[0].clone(), false, &cache)
        .unwrap_or_else(|e| panic!("SEISIMAGE_GPU_TESTS=1 but the CUDA engine cannot start: {e}"));
    Some(engine)
}

/// Everything a migration needs besides the engine and the input.
#[derive(Clone)]
pub struct Job {
    pub bin: [f64; 2],
    pub window: WindowParams,
    pub params: ImagingParams,
    pub velocity: VelocityModel,
}

impl Job {
    pub fn image_geometry(&self, src: &dyn VolumeReader) -> Geometry {
        seisimage::imaging::image_geometry(src.geometry(), &self.params, &self.velocity).expect("image geometry")
    }

    pub fn plan(&self, src: &dyn VolumeReader, request: &ImageRequest) -> Plan {
        Plan::new(src.geometry(), self.bin, &self.window, &self.params, &self.velocity, request).expect("plan")
    }

    /// Migrate and return one buffer per box of `request`.
    pub fn run(&self, engine: &mut dyn Engine, src: &dyn VolumeReader, request: &ImageRequest) -> Vec<Vec<f32>> {
        let plan = self.plan(src, request);
        migrate(engine, src, &plan, &self.velocity, request, &Silent).0.expect("migration")
    }

    /// Migrate and return the whole image with its geometry.
    pub fn run_whole(&self, engine: &mut dyn Engine, src: &dyn VolumeReader) -> (Geometry, Vec<f32>) {
        let image = self.image_geometry(src);
        let mut out = self.run(engine, src, &ImageRequest::whole(&image));
        (image, out.remove(0))
    }
}

/// One migration on `engine` in a context of its own: what it returned and the stages it recorded.
pub fn migrate(
    engine: &mut dyn Engine,
    input: &dyn VolumeReader,
    plan: &Plan,
    velocity: &VelocityModel,
    request: &ImageRequest,
    progress: &dyn Progress,
) -> (seisimage::Result<Vec<Vec<f32>>>, RunStats) {
    let mut ctx = RunContext::new(progress, CancelToken::new());
    let out = engine.migrate(&Migration { input, plan, velocity, request }, &mut ctx);
    (out, ctx.stats)
}

/// Envelope (magnitude of the analytic signal) of a real sequence, by FFT.
pub fn envelope(x: &[f64]) -> Vec<f64> {
    let n = x.len();
    let mut planner = FftPlanner::<f64>::new();
    let mut a: Vec<Complex64> = x.iter().map(|&v| Complex64::new(v, 0.0)).collect();
    planner.plan_fft_forward(n).process(&mut a);
    for (i, v) in a.iter_mut().enumerate() {
        let w = if i == 0 || 2 * i == n {
            1.0
        } else if 2 * i < n {
            2.0
        } else {
            0.0
        };
        *v *= w / n as f64;
    }
    planner.plan_fft_inverse(n).process(&mut a);
    a.iter().map(|v| v.norm()).collect()
}

/// Position of the largest depth-envelope value of a `[il][xl][z]` volume, as `[il, xl, z]` indices.
pub fn envelope_peak(data: &[f32], shape: [usize; 3]) -> [usize; 3] {
    let nz = shape[2];
    let mut best = (0.0, [0; 3]);
    for (t, tr) in data.chunks(nz).enumerate() {
        let e = envelope(&tr.iter().map(|&v| v as f64).collect::<Vec<_>>());
        for (k, &v) in e.iter().enumerate() {
            if v > best.0 {
                best = (v, [t / shape[1], t % shape[1], k]);
            }
        }
    }
    best.1
}

/// Fractional position of the peak of `y` near index `i`, by a parabola through three points.
pub fn parabolic_peak(y: &[f64], i: usize) -> f64 {
    if i == 0 || i + 1 >= y.len() {
        return i as f64;
    }
    let (a, b, c) = (y[i - 1], y[i], y[i + 1]);
    let d = a - 2.0 * b + c;
    if d == 0.0 {
        i as f64
    } else {
        i as f64 + 0.5 * (a - c) / d
    }
}

/// Fraction of the energy of a `[il][xl][z]` volume within `radius` metres of `centre` (grid indices,
/// fractional), with grid spacings `step` (m).
pub fn energy_fraction_within(data: &[f32], shape: [usize; 3], step: [f64; 3], centre: [f64; 3], radius: f64) -> f64 {
    let (mut inside, mut total) = (0.0, 0.0);
    for (n, &v) in data.iter().enumerate() {
        let idx = [n / (shape[1] * shape[2]), (n / shape[2]) % shape[1], n % shape[2]];
        let d2: f64 = (0..3).map(|a| ((idx[a] as f64 - centre[a]) * step[a]).powi(2)).sum();
        let e = (v as f64).powi(2);
        total += e;
        if d2 <= radius * radius {
            inside += e;
        }
    }
    inside / total
}

/// `‖a − b‖ / ‖b‖`.
pub fn nrms(a: &[f32], b: &[f32]) -> f64 {
    assert_eq!(a.len(), b.len());
    let num: f64 = a.iter().zip(b).map(|(x, y)| ((x - y) as f64).powi(2)).sum();
    let den: f64 = b.iter().map(|y| (*y as f64).powi(2)).sum();
    (num / den).sqrt()
}

/// Straight-line least-squares slope of `y` against `x`.
pub fn slope(x: &[f64], y: &[f64]) -> f64 {
    let n = x.len() as f64;
    let (mx, my) = (x.iter().sum::<f64>() / n, y.iter().sum::<f64>() / n);
    let sxy: f64 = x.iter().zip(y).map(|(a, b)| (a - mx) * (b - my)).sum();
    let sxx: f64 = x.iter().map(|a| (a - mx).powi(2)).sum();
    sxy / sxx
}
