//! `seisimage bench`: run a whole job on a synthetic volume and set every stage against the floor it could
//! at best reach, with the floors measured in the same process (these machines are shared: only ratios taken
//! in one run mean much). It also times the naive way — the whole volume uploaded from pageable memory, the
//! same compute, the whole image pulled back — and reports the ratio.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::Serialize;

use crate::cancel::CancelToken;
use crate::context::RunContext;
use crate::error::{Error, IoContext, Result};
use crate::imaging::{Collected, Engine, ImageRequest, Method, Migration, ProductSink};
use crate::io::segy::{SegyReader, SegyWriteOptions, WriteFormat};
use crate::io::{FileFormat, VolumeSink, WriteOptions};
use crate::job::{Backend, Job};
use crate::progress::Progress;
use crate::run::{self, Prepared};
use crate::synth::{Event, Medium, Model, ModelSpec};
use crate::volume::{VolumeReader, WriteMode};

/// What to measure.
#[derive(Clone, Debug)]
pub struct BenchConfig {
    pub size: [usize; 3],
    pub method: Method,
    pub backend: Backend,
    pub depth_steps: usize,
    pub fmax: f64,
    pub workdir: PathBuf,
    /// CPU thread counts to measure scaling over (empty: 1, 2, 4, … all cores).
    pub threads: Vec<usize>,
    /// Also time a velocity scan of this many members (0 or 1: none), against one ingest plus that many
    /// migrations.
    pub scales: usize,
}

/// A velocity scan against its parts: one ingest and one migration per member, timed in the same process
/// on the same engine (the products collected in memory, not written).
#[derive(Clone, Debug, Serialize)]
pub struct ScanReport {
    /// The velocity factors of the members.
    pub scales: Vec<f64>,
    /// One migration of the job (ingest included), s.
    pub single_seconds: f64,
    /// What a scan does once of it: read, window, upload, time FFT, store, and each band's load and
    /// spatial FFTs, s.
    pub ingest_seconds: f64,
    /// The whole scan, s.
    pub scan_seconds: f64,
    /// `scan / (ingest + members × (single − ingest))`: 1 when the scan costs one ingest and its migrations.
    pub ratio_to_one_ingest: f64,
    /// `members × single / scan`: how much faster than separate runs.
    pub speedup_over_separate: f64,
    /// The stages of the scan.
    pub stages: crate::stats::RunStats,
}

/// One row of the stage table.
#[derive(Clone, Debug, Serialize)]
pub struct StageRow {
    pub stage: String,
    pub seconds: f64,
    pub bytes: u64,
    /// Bytes / seconds (GB/s), when the stage moves bytes.
    pub gb_per_s: Option<f64>,
    /// What the stage is compared with, and its rate.
    pub floor: Option<String>,
    /// Stage rate ÷ floor rate (1 = at the floor), or floor time ÷ stage time.
    pub ratio: Option<f64>,
}

/// Hardware floors measured in this process.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Floors {
    /// Plain sequential read of the input file (page cache warm), GB/s.
    pub file_read_gbps: f64,
    pub h2d_pinned_gbps: Option<f64>,
    pub h2d_pageable_gbps: Option<f64>,
    pub d2h_pinned_gbps: Option<f64>,
    /// Device-to-device copy, counting bytes read plus bytes written.
    pub d2d_gbps: Option<f64>,
    /// Pinned H2D of the volume's bytes while the host decodes and windows the input into a pinned staging
    /// ring beside it, as the ingest does but with no chunk waiting for another.
    pub h2d_pinned_beside_decode_gbps: Option<f64>,
    /// That decode's time, with the upload running beside it (s).
    pub decode_beside_upload_seconds: Option<f64>,
}

#[derive(Clone, Debug, Serialize)]
pub struct BenchReport {
    pub size: [usize; 3],
    pub input_bytes: u64,
    pub method: &'static str,
    pub backend: String,
    pub device: Option<String>,
    pub plan: Vec<String>,
    pub floors: Floors,
    /// Decode throughput of the whole-file read (GB/s of file bytes), IEEE and IBM.
    pub decode_ieee_gbps: f64,
    pub decode_ibm_gbps: f64,
    pub stages: Vec<StageRow>,
    /// `seisimage run`'s wall time, file in page cache to products on disk.
    pub end_to_end_seconds: f64,
    /// Then, after the manifest, waiting for the engine to release the device (its context, modules and
    /// pinned memory; most of that overlaps writing the products).
    pub release_wait_seconds: f64,
    /// Upload floor (input bytes at pinned H2D) plus the device compute stages.
    pub floor_seconds: Option<f64>,
    pub naive_seconds: Option<f64>,
    /// Phase shift: depth-step updates (ω × k × steps) per second.
    pub updates_per_second: Option<f64>,
    /// Peak resident host memory of the run, and what the plan allows (volume + staging + products).
    pub peak_rss_bytes: Option<u64>,
    pub device_memory_planned_bytes: u64,
    /// CPU: (threads, migrate seconds, updates per second).
    pub cpu_scaling: Vec<(usize, f64, f64)>,
    /// Opening the input (header scan) and planning, before the run starts.
    pub prepare_seconds: f64,
    /// Every stage the run recorded, as the manifest has them (setup stages included).
    pub all_stages: crate::stats::RunStats,
    /// With `--scales N`: the velocity scan against one ingest plus N migrations.
    pub scan: Option<ScanReport>,
    pub notes: Vec<String>,
}

const GB: f64 = 1e9;

/// Run the benchmark.
pub fn run(cfg: &BenchConfig, progress: &dyn Progress) -> Result<BenchReport> {
    std::fs::create_dir_all(&cfg.workdir).at(&cfg.workdir)?;
    let [ni, nx, nt] = cfg.size;
    let input = cfg.workdir.join("bench-ieee.sgy");
    let input_ibm = cfg.workdir.join("bench-ibm.sgy");
    let model = Model::new(model_spec(cfg))?;
    tracing::info!("writing the {ni} × {nx} × {nt} synthetic input (IEEE and IBM SEG-Y) in {}", cfg.workdir.display());
    write_model(&model, &input, WriteFormat::Ieee, progress)?;
    write_model(&model, &input_ibm, WriteFormat::Ibm, progress)?;
    let input_bytes = std::fs::metadata(&input).at(&input)?.len();
    // What crosses the bus: the volume's samples as float32 (the file also holds trace headers).
    let bus_bytes = (ni * nx * nt * 4) as u64;

    let mut notes = Vec::new();
    // The job first, exactly as `seisimage run` does it, so that the peak memory is the job's alone; the
    // floor measurements below hold whole-volume buffers of their own.
    let job = bench_job(cfg, &input)?;
    // As `seisimage run` does: the engine starts while the input is opened and planned.
    let t = Instant::now();
    let engine = run::start_engine(&job, cfg.backend);
    let prepared = run::prepare(job)?;
    let prepare_seconds = t.elapsed().as_secs_f64();
    let manifest = run::execute(&prepared, engine, &mut RunContext::new(progress, CancelToken::process().child()))?;
    // To the manifest on disk; the engine's release that may be waited for after it is reported apart.
    let end_to_end_seconds = manifest.completed.map_or_else(|| t.elapsed(), |c| c - t).as_secs_f64();
    let release_wait_seconds = t.elapsed().as_secs_f64() - end_to_end_seconds;
    let peak_rss_bytes = peak_rss();
    let stats = &manifest.stages;

    let mut floors = Floors { file_read_gbps: plain_read_gbps(&input)?, ..Default::default() };
    let decode_ieee_gbps = decode_gbps(&input)?;
    let decode_ibm_gbps = decode_gbps(&input_ibm)?;
    let on_gpu = manifest.backend.kind == "cuda";

    let mut device = None;
    let mut naive_seconds = None;
    let mut floor_seconds = None;
    if on_gpu {
        let rt = crate::gpu::probe().map_err(|e| Error::Backend(e.0))?;
        let info = rt.devices[prepared.job.config.compute.device].clone();
        device = Some(info.name.clone());
        let gpu_floors = crate::gpu::floors::measure(info.clone(), bus_bytes as usize)?;
        floors.h2d_pinned_gbps = Some(gpu_floors.h2d_pinned / GB);
        floors.h2d_pageable_gbps = Some(gpu_floors.h2d_pageable / GB);
        floors.d2h_pinned_gbps = Some(gpu_floors.d2h_pinned / GB);
        floors.d2d_gbps = Some(gpu_floors.d2d / GB);
        let beside = decode_beside_upload(&prepared, info.clone(), bus_bytes as usize)?;
        floors.h2d_pinned_beside_decode_gbps = Some(beside.h2d_pinned / GB);
        floors.decode_beside_upload_seconds = Some(beside.host_seconds);
        let compute: f64 = ["time-fft", "spatial-fft", "migrate", "inverse-fft", "gather"]
            .iter()
            .filter_map(|s| stats.seconds(s))
            .sum();
        floor_seconds = Some(bus_bytes as f64 / gpu_floors.h2d_pinned + compute);
        naive_seconds = Some(naive_run(&prepared, info)?);
    }

    let cpu_scaling = if on_gpu { Vec::new() } else { cpu_scaling(&prepared, &cfg.threads, progress)? };
    let updates = updates(&prepared);
    let updates_per_second =
        stats.seconds("migrate").filter(|_| prepared.plan.method == Method::PhaseShift).map(|s| updates / s);
    if prepared.plan.padded[0] != ni || prepared.plan.padded[1] != nx {
        notes.push("lateral padding was added; the k grid is larger than the volume".into());
    }
    let stages = stage_rows(&prepared, stats, &floors, input_bytes, bus_bytes);
    let scan = if cfg.scales >= 2 { Some(scan_bench(&prepared, cfg.backend, cfg.scales, progress)?) } else { None };
    Ok(BenchReport {
        size: cfg.size,
        input_bytes,
        method: prepared.plan.method.name(),
        backend: format!("{} ({})", manifest.backend.kind, manifest.backend.detail),
        device,
        plan: prepared.plan.describe(),
        floors,
        decode_ieee_gbps,
        decode_ibm_gbps,
        stages,
        end_to_end_seconds,
        release_wait_seconds,
        floor_seconds,
        naive_seconds,
        updates_per_second,
        peak_rss_bytes,
        device_memory_planned_bytes: prepared.plan.device_memory_bytes(),
        cpu_scaling,
        prepare_seconds,
        all_stages: manifest.stages.clone(),
        scan,
        notes,
    })
}

/// Time one migration of the job and a scan of `members` velocity factors from 0.9 to 1.1, on a fresh
/// engine of the job's backend: the fastest of three runs of each, after a warm-up run.
fn scan_bench(p: &Prepared, backend: Backend, members: usize, progress: &dyn Progress) -> Result<ScanReport> {
    let scales: Vec<f64> = (0..members).map(|i| 0.9 + 0.2 * i as f64 / (members - 1) as f64).collect();
    let mut config = p.job.config.clone();
    config.velocity.scale = scales.clone();
    let planned = crate::scan::plan_migrations(&config, p.reader.geometry(), p.bin_size, p.velocity.clone())?;
    let input = p.reader.as_ref();
    let migrations: Vec<Migration> = planned
        .members
        .iter()
        .map(|m| Migration { input, plan: &m.plan, velocity: &m.velocity, request: &planned.request })
        .collect();
    let mut engine = run::select_engine(&p.job, backend)?.engine;
    let mut timed = |scan: &[Migration]| -> Result<(f64, crate::stats::RunStats)> {
        let collected: Vec<Collected> = scan.iter().map(|_| Collected::new(&planned.request)).collect();
        let sinks: Vec<&dyn ProductSink> = collected.iter().map(|c| c as &dyn ProductSink).collect();
        let mut ctx = RunContext::new(progress, CancelToken::process().child());
        let t = Instant::now();
        engine.migrate_scan(scan, &mut ctx, &sinks)?;
        Ok((t.elapsed().as_secs_f64(), ctx.stats))
    };
    // The fastest of three runs each (after a warm-up): the machine may be shared.
    let mut fastest = |scan: &[Migration]| -> Result<(f64, crate::stats::RunStats)> {
        timed(scan)?;
        let mut best = timed(scan)?;
        for _ in 0..2 {
            let next = timed(scan)?;
            if next.0 < best.0 {
                best = next;
            }
        }
        Ok(best)
    };
    let (single_seconds, single) = fastest(&migrations[..1])?;
    let (scan_seconds, stages) = fastest(&migrations)?;
    // What a scan does once: the ingest (on the CPU its parts: read, time FFT, store), and per band its
    // load from the store and its spatial FFTs.
    let ingest_stages: &[&str] = if single.seconds("ingest").is_some() {
        &["ingest", "band-load", "spatial-fft"]
    } else {
        &["read", "time-fft", "store", "band-load", "spatial-fft"]
    };
    let ingest_seconds: f64 = ingest_stages.iter().filter_map(|s| single.seconds(s)).sum();
    let expected = ingest_seconds + members as f64 * (single_seconds - ingest_seconds);
    Ok(ScanReport {
        scales,
        single_seconds,
        ingest_seconds,
        scan_seconds,
        ratio_to_one_ingest: scan_seconds / expected,
        speedup_over_separate: members as f64 * single_seconds / scan_seconds,
        stages,
    })
}

/// The ingest's two halves side by side: the input decoded and windowed into a pinned staging ring as the
/// GPU ingest does it, while pinned uploads of the volume's bytes run. Where the upload alone reaches the
/// pinned floor, this shows how much of it is left while the host reads beside it.
fn decode_beside_upload(
    p: &Prepared,
    device: crate::gpu::DeviceInfo,
    bytes: usize,
) -> Result<crate::gpu::floors::Beside> {
    let plan = &p.plan;
    let [_, nx, nt] = plan.input.shape();
    let conditioner = crate::window::TraceConditioner::new(&plan.window, plan.nonfinite);
    let mut decoded = Ok(());
    let beside = crate::gpu::floors::upload_beside(
        device,
        bytes,
        crate::gpu::STAGING_RING,
        plan.ingest_inlines * nx * nt,
        &mut |ring| {
            for (c, il) in plan.ingest_chunks().into_iter().enumerate() {
                let out = &mut ring[c % ring.len()].as_mut_slice_unsynced()[..il.len() * nx * nt];
                decoded = crate::window::read_conditioned(&*p.reader, il, out, &conditioner, WriteMode::Streaming);
                if decoded.is_err() {
                    return;
                }
            }
        },
    )?;
    decoded.map(|()| beside)
}

/// Diffractors at three depths and two flat reflectors, in a v(z) gradient.
fn model_spec(cfg: &BenchConfig) -> ModelSpec {
    let [ni, nx, nt] = cfg.size;
    let bin = 12.5;
    let t_end = (nt - 1) as f64 * 0.004;
    let (xc, yc) = ((ni - 1) as f64 * bin / 2.0, (nx - 1) as f64 * bin / 2.0);
    let z = |f: f64| f * t_end * 2000.0 / 2.0;
    ModelSpec {
        ilines: ni,
        xlines: nx,
        samples: nt,
        dt_ms: 4.0,
        bin_m: [bin, bin],
        medium: Medium::Constant { velocity: 2000.0 },
        peak_hz: 25.0,
        events: vec![
            Event::Diffractor { x: xc, y: yc, z: z(0.3), amplitude: 1.0 },
            Event::Diffractor { x: xc * 0.6, y: yc * 1.3, z: z(0.5), amplitude: 1.0 },
            Event::Diffractor { x: xc * 1.2, y: yc * 0.7, z: z(0.7), amplitude: 1.0 },
            Event::Reflector { z: z(0.4), amplitude: 0.5 },
            Event::Reflector { z: z(0.8), amplitude: 0.5 },
        ],
        noise: None,
    }
}

fn write_model(model: &Model, path: &Path, format: WriteFormat, progress: &dyn Progress) -> Result<()> {
    let g = model.geometry().clone();
    let opts = WriteOptions { segy: SegyWriteOptions { format, ..Default::default() }, ..Default::default() };
    let mut sink = VolumeSink::create(FileFormat::Segy, path, &g, &opts)?;
    let [ni, nx, ns] = g.shape();
    let block = ((64usize << 20) / 4 / (nx * ns)).clamp(1, ni);
    let mut buf = vec![0.0f32; block * nx * ns];
    progress.begin("synthesising", ni as u64);
    for il in (0..ni).step_by(block) {
        let n = block.min(ni - il);
        let b = crate::volume::IndexBox { il: il..il + n, xl: 0..nx, s: 0..ns };
        model.read_box(&b, &mut buf[..n * nx * ns])?;
        sink.write_inlines(il, g.shape(), &buf[..n * nx * ns])?;
        progress.advance(n as u64);
    }
    progress.finish();
    sink.finish()?;
    Ok(())
}

/// GB/s of a plain sequential read of the whole file into memory (the second of two reads: page cache warm).
fn plain_read_gbps(path: &Path) -> Result<f64> {
    let len = std::fs::metadata(path).at(path)?.len() as usize;
    let mut buf = vec![0u8; len];
    let mut best = 0.0f64;
    for _ in 0..2 {
        let t = Instant::now();
        std::fs::File::open(path).and_then(|mut f| f.read_exact(&mut buf)).at(path)?;
        best = best.max(len as f64 / t.elapsed().as_secs_f64() / GB);
    }
    Ok(best)
}

/// GB/s of file bytes of opening the file and decoding all of it into one buffer.
fn decode_gbps(path: &Path) -> Result<f64> {
    let len = std::fs::metadata(path).at(path)?.len() as f64;
    let t = Instant::now();
    let r = SegyReader::open(path, &Default::default())?;
    let mut out = vec![0.0f32; r.geometry().n_values()];
    r.read_all(&mut out)?;
    Ok(len / t.elapsed().as_secs_f64() / GB)
}

/// The benchmark's job file, as a user would write it (and parsed by the same code).
fn bench_job(cfg: &BenchConfig, input: &Path) -> Result<Job> {
    let zmax = cfg.depth_steps as f64 * 10.0;
    let velocity = match cfg.method {
        Method::Stolt => "kind = \"constant\"\nvelocity = 2000.0".to_string(),
        _ => format!("kind = \"table\"\ndepths = [0.0, {}]\nvelocities = [1800.0, 3200.0]", zmax.max(10.0)),
    };
    let [ni, nx, _] = cfg.size;
    let (il, xl) = (1 + ni as i64 / 2, 1 + nx as i64 / 2);
    let slice = |f: f64| (zmax * f / 10.0).round() * 10.0;
    let text = format!(
        r#"# written by seisimage bench
[input]
path = {input:?}

[window]
lateral_pad = 0   # the k grid is the volume's, as in the figures the targets come from

[velocity]
{velocity}

[imaging]
method = "{method}"
dz = 10.0
zmax = {zmax:.1}
fmax = {fmax:.1}

[compute]
backend = "{backend}"

[output]
dir = {dir:?}
inlines = [{il}]
crosslines = [{xl}]
depth_slices = [{z1:.1}, {z2:.1}]

[[output.roi]]
name = "centre"
iline = [{il0}, {il1}]
xline = [{xl0}, {xl1}]
formats = ["hdf5"]
"#,
        input = input.display().to_string(),
        method = cfg.method.name(),
        fmax = cfg.fmax,
        backend = format!("{:?}", cfg.backend).to_lowercase(),
        dir = cfg.workdir.join("products").display().to_string(),
        z1 = slice(0.3),
        z2 = slice(0.6),
        il0 = (il - 32).max(1),
        il1 = (il + 31).min(ni as i64),
        xl0 = (xl - 32).max(1),
        xl1 = (xl + 31).min(nx as i64),
    );
    let path = cfg.workdir.join("bench.toml");
    crate::io::output::write_atomic(&path, text.as_bytes())?;
    Job::parse(&text, &path, &[])
}

/// The naive way, timed from the file to the same products on disk.
fn naive_run(p: &Prepared, device: crate::gpu::DeviceInfo) -> Result<f64> {
    let mut engine = crate::gpu::GpuEngine::new(device, false, &crate::gpu::kernel_cache::KernelCache::from_env())?;
    engine.set_naive(true);
    let whole = ImageRequest::whole(&p.image);
    let plan = crate::imaging::Plan::new(
        p.reader.geometry(),
        p.bin_size,
        &p.job.config.window,
        &p.job.config.imaging,
        &p.velocity,
        &whole,
    )?;
    let t = Instant::now();
    let reader = crate::io::open(&p.job.config.input.path, &p.job.config.input.read)?;
    let mut ctx = RunContext::new(&crate::progress::Silent, CancelToken::process().child());
    let migration = Migration { input: reader.as_ref(), plan: &plan, velocity: &p.velocity, request: &whole };
    let image = engine.migrate(&migration, &mut ctx)?;
    let volume =
        crate::volume::Volume { geometry: p.image.clone(), data: image.into_iter().next().unwrap_or_default() };
    let dir = p.job.config.output.dir.join("naive");
    std::fs::create_dir_all(&dir).at(&dir)?;
    let target = crate::products::ProductTarget { dir: &dir, ..p.product_target(ctx.cancel.clone()) };
    let mut written = Vec::new();
    for spec in &p.products {
        written.push(crate::products::write_product(&target, spec, &volume.cut(&spec.region).data)?);
    }
    // Timed as the job's products are: files that an earlier run left are removed after the clock stops.
    let (_records, replaced) = crate::products::commit_products(written)?;
    let seconds = t.elapsed().as_secs_f64();
    drop(replaced);
    Ok(seconds)
}

/// The migration alone on 1, 2, 4, … threads.
fn cpu_scaling(p: &Prepared, threads: &[usize], progress: &dyn Progress) -> Result<Vec<(usize, f64, f64)>> {
    let all = std::thread::available_parallelism().map_or(1, |n| n.get());
    let counts: Vec<usize> = if threads.is_empty() {
        std::iter::successors(Some(1usize), |n| (n * 2 < all).then_some(n * 2)).chain([all]).collect()
    } else {
        threads.to_vec()
    };
    let updates = updates(p);
    let mut out = Vec::new();
    for n in counts {
        let mut engine = crate::imaging::CpuEngine::new(Some(n))?;
        let mut ctx = RunContext::new(progress, CancelToken::process().child());
        engine.migrate(&p.migration(), &mut ctx)?;
        let s = ctx.stats.seconds("migrate").unwrap_or(f64::NAN);
        out.push((n, s, updates / s));
    }
    Ok(out)
}

/// Depth-step updates of the plan: frequencies × wavenumbers × depth steps.
fn updates(p: &Prepared) -> f64 {
    p.plan.n_omega() as f64 * p.plan.nk() as f64 * p.plan.last_level() as f64
}

fn stage_rows(
    p: &Prepared,
    stats: &crate::stats::RunStats,
    floors: &Floors,
    input_bytes: u64,
    bus_bytes: u64,
) -> Vec<StageRow> {
    let plan = &p.plan;
    let (nw, nk) = (plan.n_omega() as u64, plan.nk() as u64);
    let [ni, nx, _] = plan.input.shape();
    let pt = plan.padded[2] as u64;
    let traces = (ni * nx) as u64;
    let spectrum = nw * nk * 8;
    let levels = plan.levels.len() as u64;
    let product_bytes: u64 = p.request.boxes.iter().map(|b| b.len() as u64 * 4).sum();
    let split = plan.method == Method::SplitStep;
    let steps = plan.last_level() as u64;
    // Bytes each device stage must at least read and write.
    let device_bytes = |stage: &str| -> u64 {
        match stage {
            "time-fft" => traces * (pt * 4 + (pt / 2 + 1) * 8) + spectrum,
            "spatial-fft" => 2 * spectrum * if split { 1 + steps } else { 1 },
            "inverse-fft" => 2 * if split { spectrum * steps } else { levels * nk * 8 },
            "gather" => product_bytes,
            _ => 0,
        }
    };
    let rate = |bytes: u64, s: f64| (bytes > 0 && s > 0.0).then(|| bytes as f64 / s / GB);
    let mut rows = Vec::new();
    let mut push = |stage: &str, label: &str, bytes: u64, floor: Option<(String, f64)>| {
        let Some(s) = stats.seconds(stage) else { return };
        let gbps = rate(bytes, s);
        let ratio = match (&floor, gbps) {
            (Some((_, f)), Some(g)) => Some(g / f),
            _ => None,
        };
        rows.push(StageRow {
            stage: label.into(),
            seconds: s,
            bytes,
            gb_per_s: gbps,
            floor: floor.map(|(n, f)| format!("{n} {f:.1} GB/s")),
            ratio,
        });
    };
    push("read", "read, decode, window", input_bytes, Some(("plain file read".into(), floors.file_read_gbps)));
    push("h2d", "H2D", bus_bytes, floors.h2d_pinned_gbps.map(|f| ("pinned H2D".into(), f)));
    // The whole ingest (read, window, upload and t→ω, overlapped) against the bus alone.
    push("ingest", "ingest (file → spectrum)", bus_bytes, floors.h2d_pinned_gbps.map(|f| ("pinned H2D".into(), f)));
    let d2d = floors.d2d_gbps.map(|f| ("device copy".to_string(), f));
    push("time-fft", "t→ω", device_bytes("time-fft"), d2d.clone());
    push("spatial-fft", "spatial FFT", device_bytes("spatial-fft"), d2d.clone());
    push("migrate", "migration", if split { 4 * spectrum * steps } else { 2 * spectrum }, d2d.clone());
    push("inverse-fft", "inverse FFT", device_bytes("inverse-fft"), d2d.clone());
    push("gather", "gather", device_bytes("gather"), d2d);
    push("d2h", "D2H", product_bytes, floors.d2h_pinned_gbps.map(|f| ("pinned D2H".into(), f)));
    push("write", "write", stats.bytes("write").unwrap_or(0), None);
    rows
}

/// Peak resident set size of this process (Linux).
fn peak_rss() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

impl BenchReport {
    /// The report as a table for a terminal or a Markdown file.
    pub fn table(&self) -> String {
        use std::fmt::Write;
        let mut s = String::new();
        let [ni, nx, nt] = self.size;
        let _ = writeln!(
            s,
            "seisimage bench: {ni} × {nx} × {nt} float32 ({:.2} GB), {}, on {}",
            self.input_bytes as f64 / GB,
            self.method,
            self.backend
        );
        for l in &self.plan {
            let _ = writeln!(s, "  plan: {l}");
        }
        let f = &self.floors;
        let _ = writeln!(s, "\nfloors measured in this run:");
        let _ = writeln!(s, "  plain file read          {:>8.2} GB/s", f.file_read_gbps);
        let opt = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.2} GB/s"));
        let _ = writeln!(s, "  H2D pinned / pageable    {:>10} / {}", opt(f.h2d_pinned_gbps), opt(f.h2d_pageable_gbps));
        let _ = writeln!(s, "  D2H pinned               {:>10}", opt(f.d2h_pinned_gbps));
        let _ = writeln!(s, "  device copy (r+w)        {:>10}", opt(f.d2d_gbps));
        if let (Some(h2d), Some(decode)) = (f.h2d_pinned_beside_decode_gbps, f.decode_beside_upload_seconds) {
            let _ = writeln!(
                s,
                "  H2D pinned, host decoding beside it {:.2} GB/s (the decode into pinned staging: {:.1} ms)",
                h2d,
                decode * 1e3
            );
        }
        let _ = writeln!(
            s,
            "  decode IEEE / IBM        {:>8.2} / {:.2} GB/s of file bytes (whole-file read)",
            self.decode_ieee_gbps, self.decode_ibm_gbps
        );
        let _ = writeln!(s, "\n| stage | time (ms) | bytes (MB) | GB/s | floor | ratio to floor |");
        let _ = writeln!(s, "|---|---:|---:|---:|---|---:|");
        for r in &self.stages {
            let _ = writeln!(
                s,
                "| {} | {:.2} | {:.1} | {} | {} | {} |",
                r.stage,
                r.seconds * 1e3,
                r.bytes as f64 / 1e6,
                r.gb_per_s.map_or("-".into(), |g| format!("{g:.1}")),
                r.floor.clone().unwrap_or_else(|| "-".into()),
                r.ratio.map_or("-".into(), |x| format!("{x:.2}"))
            );
        }
        let _ = writeln!(s);
        if let Some(u) = self.updates_per_second {
            let _ = writeln!(s, "phase shift: {:.3e} depth-step updates per second", u);
        }
        let setup = self.all_stages.seconds("engine-setup").unwrap_or(0.0);
        let wait = self.all_stages.seconds("engine-wait").unwrap_or(0.0);
        let _ = writeln!(
            s,
            "end to end (file in page cache → products on disk): {:.3} s, of which {:.3} s waiting for the engine \
             (its set-up took {:.3} s, the rest hidden behind opening and planning)",
            self.end_to_end_seconds, wait, setup
        );
        if self.release_wait_seconds >= 0.0005 {
            let _ = writeln!(
                s,
                "  then {:.3} s waiting for the engine to release the device (it began as the products were written)",
                self.release_wait_seconds
            );
        }
        let running = self.end_to_end_seconds - wait;
        if let Some(fl) = self.floor_seconds {
            let _ = writeln!(
                s,
                "  without that wait: {:.3} s = {:.2} × (upload floor + device compute = {:.3} s)",
                running,
                running / fl,
                fl
            );
        }
        if let Some(n) = self.naive_seconds {
            let _ = writeln!(
                s,
                "  naive path (pageable upload, same compute, whole image back; engine already set up): {:.3} s → \
                 seisimage is {:.2} × faster",
                n,
                n / running
            );
        }
        if let Some(r) = self.peak_rss_bytes {
            let _ =
                writeln!(s, "peak host memory {:.2} GB (input {:.2} GB)", r as f64 / GB, self.input_bytes as f64 / GB);
        }
        let _ = writeln!(s, "device memory planned {:.2} GB", self.device_memory_planned_bytes as f64 / GB);
        for (n, t, u) in &self.cpu_scaling {
            let _ = writeln!(s, "cpu {n:>3} threads: migration {t:.3} s, {u:.3e} updates/s");
        }
        let _ =
            writeln!(s, "\nevery stage of the run (wall or device time, s): open + plan {:.3}", self.prepare_seconds);
        for st in self.all_stages.stages.iter() {
            let _ = writeln!(s, "  {:<20} {:>8.4}  {:>10.1} MB", st.name, st.seconds, st.bytes as f64 / 1e6);
        }
        if let Some(scan) = &self.scan {
            let n = scan.scales.len();
            let _ = writeln!(
                s,
                "\nvelocity scan of {n} (× {:.3} .. × {:.3}), products in memory: {:.3} s; one migration {:.3} s, of \
                 which ingest {:.3} s",
                scan.scales[0],
                scan.scales[n - 1],
                scan.scan_seconds,
                scan.single_seconds,
                scan.ingest_seconds
            );
            let _ = writeln!(
                s,
                "  scan / (one ingest + {n} migrations = {:.3} s) = {:.2}; {:.2} × faster than {n} separate runs",
                scan.ingest_seconds + n as f64 * (scan.single_seconds - scan.ingest_seconds),
                scan.ratio_to_one_ingest,
                scan.speedup_over_separate
            );
            for st in scan.stages.stages.iter() {
                let _ = writeln!(s, "  scan {:<15} {:>8.4}  {:>10.1} MB", st.name, st.seconds, st.bytes as f64 / 1e6);
            }
        }
        for n in &self.notes {
            let _ = writeln!(s, "note: {n}");
        }
        s
    }
}
