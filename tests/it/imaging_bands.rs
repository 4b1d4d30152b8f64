//! The one decomposition (crates/seis-imaging/src/bands.rs): frequencies migrated in bands, or in shares by separate
//! processes, add up to the image of all of them (relative L2 ≤ 1e-5, float rounding), whatever the split:
//! bands forced on an engine by its memory (the spectrum waiting in host memory or on scratch disk),
//! share counts that do not divide the frequencies, more shares than frequencies, and the DC and Nyquist
//! frequencies — whose imaging weight is 1, not 2 — landing in the first and the last share.

use crate::common::{gpu_engine, migrate, Job};
use seisimage::distributed::sum_in_order;
use seisimage::imaging::bands::Share;
use seisimage::imaging::store::{Place, StoreSettings};
use seisimage::imaging::{CpuEngine, Engine, ImageRequest, ImagingParams, Method, Plan};
use seisimage::progress::Silent;
use seisimage::stats::RunStats;
use seisimage::synth::{Event, Medium, Model, ModelSpec, Noise};
use seisimage::velocity::{Interpolation, VelocityModel, VelocityTable};
use seisimage::volume::{IndexBox, Volume};
use seisimage::window::WindowParams;

fn model(ilines: usize, xlines: usize, samples: usize) -> Volume {
    let spec = ModelSpec {
        ilines,
        xlines,
        samples,
        dt_ms: 4.0,
        bin_m: [12.5, 15.0],
        medium: Medium::Constant { velocity: 2000.0 },
        peak_hz: 25.0,
        events: vec![
            Event::Diffractor { x: 150.0, y: 160.0, z: 200.0, amplitude: 1.0 },
            Event::Plane { x: 100.0, y: 120.0, z: 120.0, dip_deg: 20.0, azimuth_deg: 30.0, amplitude: 0.5 },
        ],
        noise: Some(Noise { rms: 0.02, seed: 3 }),
    };
    Model::new(spec).expect("model").generate()
}

fn layered() -> VelocityModel {
    VelocityModel::Table(
        VelocityTable::new(vec![0.0, 150.0, 300.0], vec![1800.0, 2100.0, 2500.0], Interpolation::Linear).unwrap(),
    )
}

fn job(method: Method, params: ImagingParams) -> Job {
    let velocity = if method == Method::Stolt { VelocityModel::Constant(2000.0) } else { layered() };
    Job { bin: [12.5, 15.0], window: WindowParams::default(), params: ImagingParams { method, ..params }, velocity }
}

/// Two inlines, a depth slice and a box in the middle: what a job asks for.
fn boxes(g: &seisimage::volume::Geometry) -> ImageRequest {
    let [ni, nx, nz] = g.shape();
    ImageRequest::new(vec![
        IndexBox { il: 3..4, xl: 0..nx, s: 0..nz },
        IndexBox { il: ni / 2..ni / 2 + 1, xl: 0..nx, s: 0..nz },
        IndexBox { il: 0..ni, xl: 0..nx, s: nz / 2..nz / 2 + 1 },
        IndexBox { il: 2..ni - 3, xl: 4..nx - 2, s: nz / 4..nz * 3 / 4 },
    ])
}

/// The largest relative L2 difference over the boxes.
fn worst_l2(a: &[Vec<f32>], b: &[Vec<f32>]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| {
            let d: f64 = x.iter().zip(y).map(|(p, q)| (*p as f64 - *q as f64).powi(2)).sum();
            let n: f64 = y.iter().map(|q| (*q as f64).powi(2)).sum();
            (d / n).sqrt()
        })
        .fold(0.0, f64::max)
}

/// What every backend shows: a migration in bands (`banded`, set up by the caller to need at least three)
/// computes what the same engine computes at once.
fn bands_give_the_whole_image(
    label: &str,
    whole: (Vec<Vec<f32>>, RunStats),
    banded: (seisimage::Result<Vec<Vec<f32>>>, RunStats),
) {
    let (reference, stats) = whole;
    assert_eq!(stats.frequency_bands, 1, "{label}: the reference must run at once");
    let (image, stats) = banded;
    let image = image.unwrap_or_else(|e| panic!("{label}: {e}"));
    assert!(stats.frequency_bands >= 3, "{label}: {} bands, not the three forced", stats.frequency_bands);
    let e = worst_l2(&image, &reference);
    eprintln!("{label}: {} bands, relative L2 {e:.2e}", stats.frequency_bands);
    assert!(e <= 1e-5, "{label}: in {} bands, relative L2 {e:.2e} > 1e-5", stats.frequency_bands);
}

/// A limit of host memory with which `plan` goes through at least three bands, its spectrum waiting at
/// `place`, found with the engine's own memory plan (no migration needed).
fn host_limit_for(plan: &Plan, place: Place, scratch: &std::path::Path) -> StoreSettings {
    let mut cpu = CpuEngine::new(None).unwrap();
    let settings = |bytes: u64| StoreSettings { host_memory: Some(bytes), scratch_dir: Some(scratch.to_path_buf()) };
    let mut limit = plan.host_memory_bytes();
    while limit > 1000 {
        cpu.set_store(settings(limit));
        if cpu.host_plan(plan, 1).is_ok_and(|h| h.place == place && h.bands.ranges.len() >= 3) {
            return settings(limit);
        }
        limit = limit * 97 / 100;
    }
    panic!("no host memory limit makes {place:?} with three bands");
}

/// Phase shift and split-step on the CPU, the spectrum waiting for its bands in host memory and in a cache
/// file on scratch disk, which leaves nothing behind.
#[test]
fn cpu_bands_give_the_whole_image() {
    let src = model(24, 20, 200);
    let scratch = tempfile::tempdir().unwrap();
    for method in [Method::PhaseShift, Method::SplitStep] {
        let j = job(method, ImagingParams { dz: 10.0, zmax: Some(350.0), fmax: 60.0, ..Default::default() });
        let req = boxes(&j.image_geometry(&src));
        let plan = j.plan(&src, &req);
        let mut whole = CpuEngine::new(None).unwrap();
        let (reference, stats) = migrate(&mut whole, &src, &plan, &j.velocity, &req, &Silent);
        let reference = (reference.unwrap(), stats);
        for place in [Place::Memory, Place::Disk] {
            let mut cpu = CpuEngine::new(None).unwrap();
            cpu.set_store(host_limit_for(&plan, place, scratch.path()));
            let banded = migrate(&mut cpu, &src, &plan, &j.velocity, &req, &Silent);
            bands_give_the_whole_image(&format!("cpu {method:?}, spectrum in {place:?}"), reference.clone(), banded);
            let left: Vec<_> = std::fs::read_dir(scratch.path()).unwrap().collect();
            assert!(left.is_empty(), "the cache file must not outlive the run: {left:?}");
        }
    }
}

/// The same on the GPU: bands forced by a device-memory limit, the spectrum waiting in pinned host memory,
/// and with a host-memory limit too, on scratch disk.
#[test]
fn gpu_bands_give_the_whole_image() {
    let Some(mut gpu) = gpu_engine() else { return };
    let src = model(24, 20, 200);
    let scratch = tempfile::tempdir().unwrap();
    for method in [Method::PhaseShift, Method::SplitStep] {
        let j = job(method, ImagingParams { dz: 10.0, zmax: Some(350.0), fmax: 60.0, ..Default::default() });
        let req = boxes(&j.image_geometry(&src));
        let plan = j.plan(&src, &req);
        gpu.set_memory_limit(None);
        gpu.set_store(StoreSettings::default());
        let (reference, stats) = migrate(&mut gpu, &src, &plan, &j.velocity, &req, &Silent);
        let reference = (reference.unwrap(), stats);
        // The largest device limit that needs three bands.
        let mut limit = 1u64 << 30;
        loop {
            gpu.set_memory_limit(Some(limit));
            match migrate(&mut gpu, &src, &plan, &j.velocity, &req, &Silent) {
                (Ok(_), stats) if stats.frequency_bands >= 3 => break,
                (Ok(_), _) => limit = limit * 9 / 10,
                (Err(e), _) => panic!("{method:?} refused at {limit} bytes before running in 3 bands: {e}"),
            }
        }
        let banded = migrate(&mut gpu, &src, &plan, &j.velocity, &req, &Silent);
        bands_give_the_whole_image(&format!("gpu {method:?}, spectrum in pinned memory"), reference.clone(), banded);
        gpu.set_store(StoreSettings { host_memory: Some(1 << 10), scratch_dir: Some(scratch.path().to_path_buf()) });
        let banded = migrate(&mut gpu, &src, &plan, &j.velocity, &req, &Silent);
        bands_give_the_whole_image(&format!("gpu {method:?}, spectrum on scratch disk"), reference.clone(), banded);
        assert_eq!(std::fs::read_dir(scratch.path()).unwrap().count(), 0, "the cache file must not outlive the run");
    }
    gpu.set_memory_limit(None);
    gpu.set_store(StoreSettings::default());
    gpu.release_last_run();
}

/// The shares of a job, migrated one by one as separate processes would and summed in share order, give
/// the image of the whole job on every backend, for share counts that divide the frequencies or not and
/// for more shares than frequencies; the band holds the DC and Nyquist frequencies (imaging weight 1), so
/// a share that weighted its first frequency as DC, or its last as Nyquist, would show. Stolt does not
/// split: its first share migrates every frequency.
#[test]
fn shares_add_up_to_the_whole_image() {
    // 20 samples padded to 40: bins 0 (DC) to 20 (Nyquist), 21 frequencies.
    let src = model(18, 16, 20);
    let params = ImagingParams { dz: 10.0, zmax: Some(120.0), fmin: 0.0, fmax: 125.0, ..Default::default() };
    crate::common::for_each_backend(|engine| {
        for method in [Method::PhaseShift, Method::SplitStep, Method::Stolt] {
            let j = job(method, params.clone());
            let req = boxes(&j.image_geometry(&src));
            let plan = j.plan(&src, &req);
            assert_eq!((plan.band.first, plan.band.len, plan.padded[2]), (0, 21, 40), "DC to Nyquist");
            let (whole, _) = migrate(engine, &src, &plan, &j.velocity, &req, &Silent);
            let whole = whole.unwrap();
            for count in [2, 4, 21, 25] {
                let mut parts = Vec::new();
                let mut covered = Vec::new();
                for index in 0..count {
                    let mut share = plan.clone();
                    share.restrict_to(Share { index, count });
                    covered.extend(share.frequencies.clone());
                    let (out, stats) = migrate(engine, &src, &share, &j.velocity, &req, &Silent);
                    let out = out.unwrap_or_else(|e| panic!("{method:?} share {}/{count}: {e}", index + 1));
                    if share.frequencies.is_empty() {
                        assert!(out.iter().flatten().all(|v| *v == 0.0), "an empty share adds nothing");
                        assert_eq!(stats.frequency_bands, 0);
                    }
                    parts.push(out);
                }
                assert_eq!(covered, (0..21).collect::<Vec<_>>(), "{method:?} {count}: every frequency once");
                let e = worst_l2(&sum_in_order(parts), &whole);
                eprintln!("{} {method:?} in {count} shares: relative L2 {e:.2e}", engine.name());
                assert!(e <= 1e-5, "{} {method:?} in {count} shares: relative L2 {e:.2e}", engine.name());
            }
        }
    });
}
