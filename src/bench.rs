//! `seisimage bench`: run a whole job on a synthetic volume and set every stage against the floor it could
//! at best reach, with the floors measured in the same process (these machines are shared: only ratios taken
//! in one run mean much). It also times the naive way — the whole volume uploaded from pageable memory, the
//! same compute, the whole image pulled back — and reports the ratio.//!
//! The files under `bench/` hold, each using only those listed before it: `setup` (the configuration, the
//! synthetic input and its job), `report` (what is reported, and the table) and `measure` (the floors and
//! the timings besides the run); this file runs the benchmark with them.

mod measure;
mod report;
mod setup;

use std::time::Instant;

use crate::cancel::CancelToken;
use crate::context::RunContext;
use crate::error::{Error, IoContext, Result};
use crate::imaging::Method;
use crate::io::segy::WriteFormat;
use crate::progress::Progress;
use crate::run;
use crate::synth::Model;

use measure::{
    cpu_scaling, decode_beside_upload, decode_gbps, naive_run, peak_rss, plain_read_gbps, scan_bench, updates,
};
use report::{stage_rows, GB};
use setup::{bench_job, model_spec, write_model};

pub use report::{BenchReport, Floors, ScanReport, StageRow};
pub use setup::BenchConfig;

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
    // A benchmark measures this process alone, whatever launched it.
    let engine = run::start_engine(&job, cfg.backend, &run::RunMode::Alone);
    let prepared = run::prepare(job)?;
    let prepare_seconds = t.elapsed().as_secs_f64();
    let manifest = run::execute(
        &prepared,
        engine,
        &run::RunMode::Alone,
        &mut RunContext::new(progress, CancelToken::process().child()),
    )?;
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
        device_memory_planned_bytes: crate::gpu::device_memory_estimate(&prepared.plan, prepared.scan.len())
            .unwrap_or(0),
        cpu_scaling,
        prepare_seconds,
        all_stages: manifest.stages.clone(),
        scan,
        notes,
    })
}
