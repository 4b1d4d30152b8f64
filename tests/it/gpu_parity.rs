//! The CUDA engine computes what the CPU engine computes: relative L2 difference ≤ 1e-4 (float32) for every
//! method, on inputs that exercise every code path (a delayed record start, a dip limit, a lateral velocity
//! change, sparse depth slices and boxes cut from the middle of the image).
//!
//! Runs only with `SEISIMAGE_GPU_TESTS=1` on a machine with a CUDA device (see tests/common); elsewhere it
//! says it skipped.

use crate::common::{gpu_engine, migrate, Job};
use seisimage::imaging::{CpuEngine, Engine, ImageRequest, ImagingParams, Method, StoltInterpolation};
use seisimage::progress::Silent;
use seisimage::synth::{Event, Medium, Model, ModelSpec, Noise};
use seisimage::velocity::{Interpolation, VelocityGrid, VelocityModel, VelocityTable};
use seisimage::volume::{Domain, IndexBox, SampleAxis, Volume};
use seisimage::window::WindowParams;

/// The largest relative L2 difference between the GPU's boxes and the CPU's, box by box.
fn worst_l2(gpu: &[Vec<f32>], cpu: &[Vec<f32>]) -> f64 {
    assert_eq!(gpu.len(), cpu.len());
    gpu.iter().zip(cpu).map(|(g, c)| relative_l2(g, c)).fold(0.0, f64::max)
}

/// Relative L2 difference of two images.
fn relative_l2(a: &[f32], b: &[f32]) -> f64 {
    assert_eq!(a.len(), b.len());
    let d: f64 = a.iter().zip(b).map(|(x, y)| (*x as f64 - *y as f64).powi(2)).sum();
    let n: f64 = b.iter().map(|y| (*y as f64).powi(2)).sum();
    (d / n).sqrt()
}

fn model(origin_ms: f64, noise: bool) -> Volume {
    let spec = ModelSpec {
        ilines: 40,
        xlines: 36,
        samples: 250,
        dt_ms: 4.0,
        bin_m: [12.5, 15.0],
        medium: Medium::Constant { velocity: 2000.0 },
        peak_hz: 25.0,
        events: vec![
            Event::Diffractor { x: 200.0, y: 260.0, z: 300.0, amplitude: 1.0 },
            Event::Diffractor { x: 330.0, y: 150.0, z: 420.0, amplitude: -0.7 },
            Event::Plane { x: 250.0, y: 270.0, z: 200.0, dip_deg: 25.0, azimuth_deg: 30.0, amplitude: 0.5 },
        ],
        noise: noise.then_some(Noise { rms: 0.02, seed: 7 }),
    };
    let mut v = Model::new(spec).expect("model").generate();
    v.geometry.samples.origin = origin_ms;
    v
}

/// The same job on both engines; returns the worst relative L2 over the request's boxes.
fn compare(
    gpu: &mut dyn Engine,
    src: &Volume,
    job: &Job,
    request: impl Fn(&seisimage::volume::Geometry) -> ImageRequest,
) -> f64 {
    let req = request(&job.image_geometry(src));
    let mut cpu = CpuEngine::new(None).unwrap();
    let a = job.run(&mut cpu, src, &req);
    let b = job.run(gpu, src, &req);
    assert!(b.iter().flatten().all(|v| v.is_finite()), "the GPU image has non-finite values");
    worst_l2(&b, &a)
}

fn whole(g: &seisimage::volume::Geometry) -> ImageRequest {
    ImageRequest::whole(g)
}

/// Two inlines, a crossline, two sparse depth slices and a box cut from the middle.
fn sparse(g: &seisimage::volume::Geometry) -> ImageRequest {
    let [ni, nx, nz] = g.shape();
    ImageRequest::new(vec![
        IndexBox { il: 7..8, xl: 0..nx, s: 0..nz },
        IndexBox { il: 21..22, xl: 0..nx, s: 0..nz },
        IndexBox { il: 0..ni, xl: 17..18, s: 0..nz },
        IndexBox { il: 0..ni, xl: 0..nx, s: nz * 3 / 5..nz * 3 / 5 + 1 },
        IndexBox { il: 0..ni, xl: 0..nx, s: nz * 4 / 5..nz * 4 / 5 + 1 },
        IndexBox { il: 5..19, xl: 9..30, s: nz / 4..nz * 3 / 4 },
    ])
}

fn job(method: Method, velocity: VelocityModel) -> Job {
    Job {
        bin: [12.5, 15.0],
        window: WindowParams::default(),
        params: ImagingParams { method, dz: 10.0, zmax: Some(500.0), fmax: 55.0, ..Default::default() },
        velocity,
    }
}

fn layered() -> VelocityModel {
    VelocityModel::Table(
        VelocityTable::new(vec![0.0, 220.0, 400.0], vec![1800.0, 2100.0, 2500.0], Interpolation::Linear).unwrap(),
    )
}

#[test]
fn gpu_matches_cpu_for_every_method() {
    let Some(mut gpu) = gpu_engine() else { return };
    let src = model(0.0, true);
    let mut worst = Vec::new();
    for (name, j, req) in [
        ("phase shift v(z), whole image", job(Method::PhaseShift, layered()), whole as fn(&_) -> _),
        ("phase shift v(z), sparse boxes", job(Method::PhaseShift, layered()), sparse),
        ("stolt sinc, whole image", job(Method::Stolt, VelocityModel::Constant(2000.0)), whole),
        ("split-step v(z), sparse boxes", job(Method::SplitStep, layered()), sparse),
    ] {
        let e = compare(&mut gpu, &src, &j, req);
        eprintln!("{name}: relative L2 {e:.2e}");
        worst.push((name, e));
    }
    for (name, e) in worst {
        assert!(e <= 1e-4, "{name}: GPU vs CPU relative L2 {e:.2e} > 1e-4");
    }
}

#[test]
fn gpu_matches_cpu_with_a_delayed_start_a_dip_limit_and_linear_stolt() {
    let Some(mut gpu) = gpu_engine() else { return };
    let src = model(40.0, false);
    let mut ps = job(Method::PhaseShift, layered());
    ps.params.dip_limit_deg = Some(40.0);
    let mut st = job(Method::Stolt, VelocityModel::Constant(2000.0));
    st.params.stolt_interpolation = StoltInterpolation::Linear;
    st.window.time_pad_factor = 4.0;
    st.params.dip_limit_deg = Some(50.0);
    for (name, j) in [("phase shift, dip limit, t0 = 40 ms", ps), ("stolt linear 4x pad, dip limit", st)] {
        let e = compare(&mut gpu, &src, &j, sparse);
        eprintln!("{name}: relative L2 {e:.2e}");
        assert!(e <= 1e-4, "{name}: GPU vs CPU relative L2 {e:.2e} > 1e-4");
    }
}

#[test]
fn gpu_split_step_matches_cpu_through_a_lateral_velocity_change() {
    let Some(mut gpu) = gpu_engine() else { return };
    let src = model(0.0, false);
    // v(x, z) = 1900 + 0.6 x + 0.5 z on the input's lateral grid, 60 depth samples of 10 m.
    let mut g = src.geometry.clone();
    g.samples = SampleAxis { origin: 0.0, step: 10.0, len: 60, domain: Domain::Depth };
    let [ni, nx, nz] = g.shape();
    let mut data = Vec::with_capacity(ni * nx * nz);
    for i in 0..ni {
        for _ in 0..nx {
            for k in 0..nz {
                data.push((1900.0 + 0.6 * i as f64 * 12.5 + 0.5 * k as f64 * 10.0) as f32);
            }
        }
    }
    let velocity = VelocityModel::Grid(VelocityGrid::new(g, data, "test gradient").unwrap());
    let mut j = job(Method::SplitStep, velocity);
    j.params.zmax = Some(400.0);
    let e = compare(&mut gpu, &src, &j, sparse);
    eprintln!("split-step through a lateral gradient: relative L2 {e:.2e}");
    assert!(e <= 1e-4, "GPU vs CPU relative L2 {e:.2e} > 1e-4");
}

/// The stage table of a GPU run: each step of the device's work has a device time, the ingest's stages come
/// before the migration's, and the bus stages count what crossed the bus: the input once, each requested
/// box once.
#[test]
fn gpu_stages_time_the_device_work_and_count_the_bus() {
    let Some(mut gpu) = gpu_engine() else { return };
    let src = model(0.0, false);
    let [ni, nx, nt] = src.geometry.shape();
    let input = (ni * nx * nt * 4) as u64;
    for (name, j) in [
        ("phase shift", job(Method::PhaseShift, layered())),
        ("stolt", job(Method::Stolt, VelocityModel::Constant(2000.0))),
        ("split-step", job(Method::SplitStep, layered())),
    ] {
        let req = sparse(&j.image_geometry(&src));
        let boxes: u64 = req.boxes.iter().map(|b| b.len() as u64 * 4).sum();
        let plan = j.plan(&src, &req);
        let (out, stats) = migrate(&mut gpu, &src, &plan, &j.velocity, &req, &Silent);
        out.unwrap_or_else(|e| panic!("{name}: {e}"));
        let names: Vec<&str> = stats.stages.iter().map(|s| s.name.as_str()).collect();
        for stage in ["h2d", "time-fft", "spatial-fft", "migrate", "inverse-fft", "gather", "d2h"] {
            let seconds = stats.seconds(stage).unwrap_or_else(|| panic!("{name}: no stage {stage} in {names:?}"));
            assert!(seconds > 0.0, "{name}: stage {stage} took no device time");
        }
        let at = |stage: &str| names.iter().position(|n| *n == stage).unwrap_or_else(|| panic!("{name}: {stage}"));
        let order = ["read", "h2d", "time-fft", "ingest", "ingest+compute", "spatial-fft"];
        assert!(order.windows(2).all(|w| at(w[0]) < at(w[1])), "{name}: stages in the order {names:?}");
        assert_eq!((stats.bytes("h2d"), stats.host_to_device_bytes), (Some(input), input), "{name}");
        assert_eq!((stats.bytes("d2h"), stats.device_to_host_bytes), (Some(boxes), boxes), "{name}");
    }
}

/// A job whose spectrum does not fit the device memory it may use runs in frequency bands and still
/// computes what the CPU computes; Stolt, which needs the whole spectrum, is refused with the numbers.
#[test]
fn gpu_frequency_bands_give_the_same_image() {
    let Some(mut gpu) = gpu_engine() else { return };
    let src = model(0.0, true);
    for method in [Method::PhaseShift, Method::SplitStep] {
        let j = job(method, layered());
        let image = j.image_geometry(&src);
        let req = sparse(&image);
        let plan = j.plan(&src, &req);
        let mut cpu = CpuEngine::new(None).unwrap();
        let reference = j.run(&mut cpu, &src, &req);
        // Lower the memory the engine may use until the spectrum no longer fits at once.
        let mut limit = 1u64 << 30;
        let (bands, image) = loop {
            gpu.set_memory_limit(Some(limit));
            match migrate(&mut gpu, &src, &plan, &j.velocity, &req, &Silent) {
                (Ok(out), stats) if stats.frequency_bands >= 3 => break (stats.frequency_bands, out),
                (Ok(_), _) => limit = limit * 9 / 10,
                (Err(e), _) => panic!("{method:?} refused at {limit} bytes before running in 3 bands: {e}"),
            }
        };
        let e = worst_l2(&image, &reference);
        eprintln!("{method:?} in {bands} frequency bands ({limit} bytes allowed): relative L2 {e:.2e}");
        assert!(e <= 1e-4, "{method:?} in {bands} bands: GPU vs CPU relative L2 {e:.2e}");
    }
    let stolt = job(Method::Stolt, VelocityModel::Constant(2000.0));
    let req = whole(&stolt.image_geometry(&src));
    let plan = stolt.plan(&src, &req);
    gpu.set_memory_limit(Some(1 << 20));
    let err = migrate(&mut gpu, &src, &plan, &stolt.velocity, &req, &Silent).0.unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("Stolt needs every frequency") && msg.contains("GiB"), "{msg}");
    gpu.set_memory_limit(None);
}

/// Device memory taken by another user between runs (here a buffer of this process, which the driver counts
/// the same way): the next run plans with what is left, so it runs in frequency bands and still computes
/// what the CPU computes; with almost nothing left it is refused with the numbers. Never a hang or a panic.
#[test]
fn gpu_memory_taken_by_another_user_gives_bands_or_a_clear_error() {
    let Some(mut gpu) = gpu_engine() else { return };
    let src = model(0.0, true);
    let j = job(Method::PhaseShift, layered());
    let req = sparse(&j.image_geometry(&src));
    let plan = j.plan(&src, &req);
    let mut cpu = CpuEngine::new(None).unwrap();
    let reference = j.run(&mut cpu, &src, &req);
    let run = |gpu: &mut seisimage::gpu::GpuEngine| {
        let (out, stats) = migrate(gpu, &src, &plan, &j.velocity, &req, &Silent);
        out.map(|image| (image, stats.frequency_bands))
    };
    // The memory at which this job runs in 3 bands.
    let mut limit = 1u64 << 30;
    loop {
        gpu.set_memory_limit(Some(limit));
        match run(&mut gpu) {
            Ok((_, bands)) if bands >= 3 => break,
            Ok(_) => limit = limit * 9 / 10,
            Err(e) => panic!("refused at {limit} bytes before running in 3 bands: {e}"),
        }
    }
    // Below that, how far it still runs: the memory plan first images fewer levels a launch, then takes
    // more bands, so the window in which this job runs in bands is narrow. Aim for its middle, where the
    // few MiB by which the memory taken below misses its target cannot make the job fit at once.
    let mut lowest = limit;
    while lowest > 1 << 20 {
        gpu.set_memory_limit(Some(lowest * 19 / 20));
        match run(&mut gpu) {
            Ok(_) => lowest = lowest * 19 / 20,
            Err(_) => break,
        }
    }
    let limit = (limit + lowest) / 2;
    gpu.set_memory_limit(None);
    // The engine keeps a run's buffers until told otherwise: between jobs it gives them back.
    gpu.release_last_run();

    // Someone takes all but about that much (the engine plans with 92 % of what is free, less a reserve).
    let rt = seisimage::gpu::probe().unwrap();
    let other = seisimage::gpu::device::Gpu::open(rt.devices[0].clone()).unwrap();
    // Allocations cost more than their size (page rounding, the driver's tables), so take the memory in
    // steps until what is free is just above that.
    use seisimage::gpu::memory::{MEMORY_HEADROOM, MEMORY_RESERVE};
    let target = ((limit + MEMORY_RESERVE) as f64 / MEMORY_HEADROOM) as usize + (1 << 20);
    let mut taken = Vec::new();
    for _ in 0..20 {
        let (free, _) = other.memory().unwrap();
        if free <= target + (4 << 20) {
            break;
        }
        taken.push(other.alloc::<u8>(free - target - (2 << 20)).expect("taking the device's memory"));
    }
    let (leave, _) = other.memory().unwrap();
    let (image, bands) = run(&mut gpu).unwrap_or_else(|e| panic!("with {leave} bytes left: {e}"));
    let e = worst_l2(&image, &reference);
    eprintln!("with {leave} bytes of device memory left: {bands} frequency bands, relative L2 {e:.2e}");
    assert!(bands >= 2, "the run should have needed bands with {leave} bytes left");
    assert!(e <= 1e-4, "in {bands} bands: GPU vs CPU relative L2 {e:.2e}");

    // Then almost everything: a clear refusal that says what was needed and what was there. (The engine
    // keeps a run's buffers for a next run of the same shape, which would then need no more memory: they
    // go back first, as between jobs.)
    gpu.release_last_run();
    let (free, _) = other.memory().unwrap();
    let rest = other.alloc::<u8>(free.saturating_sub(4 << 20)).expect("taking the rest");
    let err = run(&mut gpu).expect_err("a run with 4 MiB of device memory left");
    let msg = err.to_string();
    eprintln!("with 4 MiB left: {msg}");
    assert!(msg.contains("device memory") && msg.contains("GiB"), "{msg}");
    drop((taken, rest));
    // The engine is still usable once the memory is back.
    let (image, bands) = run(&mut gpu).expect("a run once the memory is free again");
    assert_eq!(bands, 1);
    let e = worst_l2(&image, &reference);
    assert!(e <= 1e-4, "after the memory came back: relative L2 {e:.2e}");
}

/// The engine makes a run's buffers ahead (`prepare`, as the job is planned) and keeps them for a next run
/// of the same shape: runs on buffers made ahead, on buffers kept from a run before, and on new ones after
/// a run of another shape all compute what the CPU computes.
#[test]
fn runs_on_buffers_made_ahead_or_kept_compute_what_the_cpu_computes() {
    let Some(mut gpu) = gpu_engine() else { return };
    let src = model(0.0, true);
    let mut cpu = CpuEngine::new(None).unwrap();
    for (name, j) in [
        ("phase shift", job(Method::PhaseShift, layered())),
        ("stolt", job(Method::Stolt, VelocityModel::Constant(2000.0))),
        ("split-step", job(Method::SplitStep, layered())),
    ] {
        let req = sparse(&j.image_geometry(&src));
        let reference = j.run(&mut cpu, &src, &req);
        gpu.prepare(&j.plan(&src, &req), &req, 1).expect("buffers made ahead");
        for buffers in ["made ahead", "kept from the run before"] {
            let image = j.run(&mut gpu, &src, &req);
            let e = worst_l2(&image, &reference);
            eprintln!("{name}, buffers {buffers}: relative L2 {e:.2e}");
            assert!(e <= 1e-4, "{name}, buffers {buffers}: GPU vs CPU relative L2 {e:.2e}");
        }
    }
}

/// The GPU ingest reads, uploads and transforms the input chunk by chunk, with small first and last chunks:
/// an input read in many chunks (40 inlines by 3, ends of 1) gives what the CPU computes from one.
#[test]
fn an_ingest_in_many_chunks_computes_what_the_cpu_computes() {
    let Some(mut gpu) = gpu_engine() else { return };
    let src = model(0.0, true);
    let mut cpu = CpuEngine::new(None).unwrap();
    for (name, j, request) in [
        ("phase shift, whole image", job(Method::PhaseShift, layered()), whole as fn(&_) -> _),
        ("split-step, sparse boxes", job(Method::SplitStep, layered()), sparse),
    ] {
        let req = request(&j.image_geometry(&src));
        let one = j.plan(&src, &req);
        assert_eq!(one.ingest_chunks(), std::iter::once(0..40).collect::<Vec<_>>(), "the test input fits one chunk");
        let mut many = j.plan(&src, &req);
        many.ingest_inlines = 3;
        let chunks = many.ingest_chunks();
        assert_eq!((chunks.len(), chunks[0].clone(), chunks[chunks.len() - 1].clone()), (15, 0..1, 39..40));
        let reference = migrate(&mut cpu, &src, &one, &j.velocity, &req, &Silent).0.unwrap();
        let image = migrate(&mut gpu, &src, &many, &j.velocity, &req, &Silent).0.unwrap();
        let e = worst_l2(&image, &reference);
        eprintln!("{name}, 15 chunks: relative L2 {e:.2e}");
        assert!(e <= 1e-4, "{name}, 15 chunks: GPU vs CPU relative L2 {e:.2e}");
    }
}

/// Kernels read back from the kernel cache are the kernels NVRTC makes: an engine whose kernels come from the
/// cache computes what a freshly compiled one computes (to the last bits that the order of the phase-shift
/// kernel's shared-memory sums leaves free from run to run), and a damaged entry is compiled again and
/// replaced instead of being handed to the driver.
#[test]
fn kernels_from_the_cache_compute_what_fresh_kernels_compute() {
    use seisimage::gpu::kernel_cache::KernelCache;
    if gpu_engine().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let cache = KernelCache::at(dir.path());
    let device = seisimage::gpu::probe().unwrap().devices[0].clone();
    let src = model(0.0, false);
    let j = job(Method::PhaseShift, layered());
    let req = sparse(&j.image_geometry(&src));
    let run = |cache: &KernelCache| {
        let mut gpu = seisimage::gpu::GpuEngine::new(device.clone(), false, cache).expect("engine");
        (gpu.kernels_cached, gpu.kernel_seconds, j.run(&mut gpu, &src, &req))
    };
    let (cached, compile_s, fresh) = run(&cache);
    assert!(!cached, "an empty cache cannot supply the kernels");
    let entries: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(entries.len(), 1, "one entry after the first engine: {entries:?}");
    let (cached, load_s, again) = run(&cache);
    assert!(cached, "the second engine should load the kernels from the cache");
    let e = worst_l2(&again, &fresh);
    assert!(e <= 1e-6, "kernels from the cache must compute what fresh ones compute: relative L2 {e:.2e}");
    eprintln!("kernels compiled in {compile_s:.3} s, loaded from the cache in {load_s:.3} s");

    let bytes = std::fs::read(&entries[0]).unwrap();
    std::fs::write(&entries[0], &bytes[..bytes.len() - 100]).unwrap();
    let (cached, _, repaired) = run(&cache);
    assert!(!cached, "a damaged entry must not be used");
    assert!(worst_l2(&repaired, &fresh) <= 1e-6);
    let (cached, _, after) = run(&cache);
    assert!(cached, "the damaged entry should have been replaced by a good one");
    assert!(worst_l2(&after, &fresh) <= 1e-6);
}
