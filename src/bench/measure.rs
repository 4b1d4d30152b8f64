//! The measurements a benchmark makes besides the run itself: the hardware floors, the naive way, the CPU
//! scaling and the velocity scan, each timed in the same process as the run.

use std::io::Read;
use std::path::Path;
use std::time::Instant;

use crate::cancel::CancelToken;
use crate::context::RunContext;
use crate::error::{IoContext, Result};
use crate::imaging::{Collected, Engine, ImageRequest, Migration, ProductSink};
use crate::io::segy::SegyReader;
use crate::job::Backend;
use crate::progress::Progress;
use crate::run::{self, Prepared};
use crate::volume::{VolumeReader, WriteMode};

use super::report::{ScanReport, GB};

/// Time one migration of the job and a scan of `members` velocity factors from 0.9 to 1.1, on a fresh
/// engine of the job's backend: the fastest of three runs of each, after a warm-up run.
pub(super) fn scan_bench(
    p: &Prepared,
    backend: Backend,
    members: usize,
    progress: &dyn Progress,
) -> Result<ScanReport> {
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
    let mut engine = run::select_engine(&p.job, backend, &run::RunMode::Alone)?.engine;
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
pub(super) fn decode_beside_upload(
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

/// GB/s of a plain sequential read of the whole file into memory (the second of two reads: page cache warm).
pub(super) fn plain_read_gbps(path: &Path) -> Result<f64> {
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
pub(super) fn decode_gbps(path: &Path) -> Result<f64> {
    let len = std::fs::metadata(path).at(path)?.len() as f64;
    let t = Instant::now();
    let r = SegyReader::open(path, &Default::default())?;
    let mut out = vec![0.0f32; r.geometry().n_values()];
    r.read_all(&mut out)?;
    Ok(len / t.elapsed().as_secs_f64() / GB)
}

/// The naive way, timed from the file to the same products on disk.
pub(super) fn naive_run(p: &Prepared, device: crate::gpu::DeviceInfo) -> Result<f64> {
    let mut engine = crate::gpu::NaiveEngine::new(device, false, &crate::gpu::kernel_cache::KernelCache::from_env())?;
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
pub(super) fn cpu_scaling(p: &Prepared, threads: &[usize], progress: &dyn Progress) -> Result<Vec<(usize, f64, f64)>> {
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
pub(super) fn updates(p: &Prepared) -> f64 {
    p.plan.n_omega() as f64 * p.plan.nk() as f64 * p.plan.last_level() as f64
}

/// Peak resident set size of this process (Linux).
pub(super) fn peak_rss() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}
