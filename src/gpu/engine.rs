//! The CUDA engine: the CPU engine's steps (src/imaging) on the device, on the same plan and layout.
//!
//! Ingest: each chunk of inlines is read and windowed on the host straight into one of a few pinned staging
//! buffers, copied to the device by a pitched copy that lands every trace in a row padded to the FFT length
//! (copy stream), and transformed there — R2C along the contiguous traces, then the band transposed into
//! the ω-major spectrum (compute stream) — while the host reads the next chunk. Every input byte crosses the
//! bus once. The 2-D FFTs, the migration and the imaging then run on the device, and only the requested
//! boxes come back.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use cudarc::driver::{CudaEvent, CudaStream, LaunchConfig, PushKernelArg};

use super::device::{self, check, copy_2d, elapsed_ms, DeviceBuffer, Gpu, PinnedBuffer, Source};
use super::fft::{self, Layout};
use super::kernels::{self, Kernels, ParamKind};
use super::runtime::DeviceInfo;
use crate::error::{Error, Result};
use crate::imaging::plan::Segment;
use crate::imaging::{formulas, Engine, ImageRequest, Method, Plan};
use crate::progress::Progress;
use crate::stats::RunStats;
use crate::velocity::VelocityModel;
use crate::volume::{IndexBox, VolumeReader};
use crate::{cancel, window};

/// A complex float as the kernels see it (`cpx` in kernels/common.cuh).
type Cpx = [f32; 2];

/// Pinned staging buffers (and device landing slots) in flight during ingest: while the device transforms
/// one chunk and the bus carries the next, the host fills a third.
const RING: usize = 3;
/// Levels imaged per launch of the phase-shift kernel: its k-domain sums live in shared memory
/// (levels × 32 lanes × 8 bytes = 32 KiB), under the 48 KiB a kernel gets without opting in.
const PS_MAX_SLOTS: usize = 128;
/// Lanes and warps of a phase-shift CTA (PS_LANES, PS_WARPS in kernels/phase_shift.cu).
const PS_LANES: u32 = 32;
const PS_WARPS: u32 = 8;
/// Fraction of the free device memory a run may plan to use (cuFFT and the driver need some slack).
const MEMORY_HEADROOM: f64 = 0.92;

/// A kernel argument; every one is passed to the driver as a pointer to an 8-byte cell.
enum Arg {
    Ptr(u64),
    I32(i32),
    F32(f32),
    F64(f64),
}

pub struct GpuEngine {
    gpu: Gpu,
    kernels: Kernels,
    compute: Arc<CudaStream>,
    copy_in: Arc<CudaStream>,
    copy_out: Arc<CudaStream>,
    /// Seconds NVRTC took to compile the kernels (once per engine).
    pub compile_seconds: f64,
    /// Run the way a straightforward GPU script does (see [`GpuEngine::set_naive`]).
    naive: bool,
}

impl GpuEngine {
    /// Open `device`, compile and load the kernels.
    pub fn new(device: DeviceInfo, fast_math: bool) -> Result<Self> {
        let gpu = Gpu::open(device)?;
        let t = Instant::now();
        let ptx = kernels::compile(kernels::arch_name(gpu.info.compute_capability), fast_math)?;
        let kernels = Kernels::load(&gpu.ctx, ptx)?;
        let compile_seconds = t.elapsed().as_secs_f64();
        Ok(GpuEngine {
            compute: gpu.stream()?,
            copy_in: gpu.stream()?,
            copy_out: gpu.stream()?,
            gpu,
            kernels,
            compile_seconds,
            naive: false,
        })
    }

    /// The reference the benchmark compares with: the whole volume read into ordinary (pageable) memory and
    /// uploaded in one synchronous copy before any device work, the same device compute, and every product
    /// pulled back into pageable memory. Only for measurements.
    pub fn set_naive(&mut self, naive: bool) {
        self.naive = naive;
    }

    pub fn device(&self) -> &DeviceInfo {
        &self.gpu.info
    }

    fn launch(&self, stream: &CudaStream, name: &str, cfg: LaunchConfig, args: &[Arg]) -> Result<()> {
        let expected = self.kernels.signature(name);
        let given: Vec<ParamKind> = args
            .iter()
            .map(|a| match a {
                Arg::Ptr(_) => ParamKind::U64,
                Arg::I32(_) => ParamKind::U32,
                Arg::F32(_) => ParamKind::F32,
                Arg::F64(_) => ParamKind::F64,
            })
            .collect();
        if given != expected {
            return Err(Error::Gpu(format!(
                "launch of {name} with arguments {given:?}, but the kernel takes {expected:?} (a programming error)"
            )));
        }
        // Little-endian cells: an int or float parameter reads the low bytes of its cell.
        let cells: Vec<u64> = args
            .iter()
            .map(|a| match *a {
                Arg::Ptr(p) => p,
                Arg::I32(v) => v as u32 as u64,
                Arg::F32(v) => v.to_bits() as u64,
                Arg::F64(v) => v.to_bits(),
            })
            .collect();
        let mut b = stream.launch_builder(self.kernels.get(name));
        for c in &cells {
            b.arg(c);
        }
        // SAFETY: the argument list matches the kernel's signature in kernels/ (kept together by review and
        // by the GPU tests), and every pointer is a live allocation of the size the kernel indexes.
        check(&format!("launching {name}"), unsafe { b.launch(cfg) }).map(|_| ())
    }

    fn event(&self) -> Result<CudaEvent> {
        self.gpu.timing_event()
    }

    fn record(&self, e: &CudaEvent, stream: &CudaStream) -> Result<()> {
        check("recording an event", e.record(stream))
    }

    fn wait(&self, stream: &CudaStream, e: &CudaEvent) -> Result<()> {
        check("ordering streams", stream.wait(e))
    }

    fn sync(&self, stream: &CudaStream) -> Result<()> {
        check("waiting for the device", stream.synchronize())
    }
}

fn grid_1d(n: usize, block: u32) -> LaunchConfig {
    let blocks = n.div_ceil(block as usize).clamp(1, 1 << 20) as u32;
    LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (block, 1, 1), shared_mem_bytes: 0 }
}

/// The cuFFT plans of a run and the one work area they share.
struct Ffts {
    plans: HashMap<&'static str, fft::Plan>,
    /// Inverse 2-D plans by batch size (the number of levels imaged together).
    inverse_2d: HashMap<usize, fft::Plan>,
    _work: DeviceBuffer<u8>,
}

impl Ffts {
    fn get(&self, name: &str) -> &fft::Plan {
        &self.plans[name]
    }
}

/// Device memory a run needs, item by item, for the refusal message.
struct Budget {
    items: Vec<(&'static str, u64)>,
}

impl Budget {
    fn total(&self) -> u64 {
        self.items.iter().map(|(_, b)| b).sum()
    }

    fn describe(&self) -> String {
        self.items
            .iter()
            .map(|(n, b)| format!("{n} {:.2} GiB", *b as f64 / (1u64 << 30) as f64))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

impl Engine for GpuEngine {
    fn name(&self) -> &str {
        "cuda"
    }

    fn migrate(
        &mut self,
        src: &dyn VolumeReader,
        plan: &Plan,
        velocity: &VelocityModel,
        request: &ImageRequest,
        progress: &dyn Progress,
        stats: &mut RunStats,
    ) -> Result<Vec<Vec<f32>>> {
        plan.check(src.geometry(), request)?;
        let run = Run::new(self, plan, request)?;
        let result = run.execute(src, velocity, progress, stats);
        // Whatever happened, nothing may still be running when the buffers go.
        let _ = self.compute.synchronize();
        let _ = self.copy_in.synchronize();
        let _ = self.copy_out.synchronize();
        result
    }
}

/// One migration on the device: its buffers, plans and tables.
struct Run<'a> {
    e: &'a GpuEngine,
    plan: &'a Plan,
    request: &'a ImageRequest,
    nk: usize,
    nw: usize,
    chunk_traces: usize,
    bins: usize,
    spectrum: DeviceBuffer<Cpx>,
    landing: Vec<DeviceBuffer<f32>>,
    half: Vec<DeviceBuffer<Cpx>>,
    delay: DeviceBuffer<Cpx>,
    /// |k|² and ω in double: the kernels form kz² = (2ω/v)² − |k|² from them without cancellation.
    k2: DeviceBuffer<f64>,
    omega: DeviceBuffer<f64>,
    weight: DeviceBuffer<f32>,
    products: Vec<DeviceBuffer<f32>>,
    /// Phase shift: one block of k-domain images; Stolt: the kz lines; split-step: the level image.
    planes: DeviceBuffer<Cpx>,
    ffts: Ffts,
    /// Device-timed sections (stage name, start, end), summed into the stage table at the end.
    timers: std::cell::RefCell<Vec<(&'static str, CudaEvent, CudaEvent)>>,
}

impl<'a> Run<'a> {
    fn new(e: &'a GpuEngine, plan: &'a Plan, request: &'a ImageRequest) -> Result<Self> {
        let [pi, px, pt] = plan.padded;
        let (nk, nw) = (plan.nk(), plan.n_omega());
        let [_, nx, _] = plan.input.shape();
        let chunk_traces = plan.ingest_inlines * nx;
        let bins = pt / 2 + 1;

        // Size of the method's plane buffer, and the batch sizes of the inverse 2-D FFTs.
        let (plane_count, batches): (usize, Vec<usize>) = match plan.method {
            Method::PhaseShift => {
                let sizes = phase_shift_blocks(plan).iter().map(|b| b.slot_levels.len()).collect::<Vec<_>>();
                (sizes.iter().copied().max().unwrap_or(1), sizes)
            }
            Method::Stolt => {
                let grid = plan.stolt.as_ref().ok_or_else(|| Error::Request("a Stolt plan has no kz grid".into()))?;
                if grid.nz_fft <= plan.last_level() {
                    return Err(Error::Request(format!(
                        "the Stolt kz grid ({} samples) is shorter than the deepest level ({})",
                        grid.nz_fft,
                        plan.last_level()
                    )));
                }
                (grid.nz_fft, vec![plan.last_level() + 1])
            }
            Method::SplitStep => (1, vec![]),
        };

        let products_bytes: u64 = request.boxes.iter().map(|b| b.len() as u64 * 4).sum();
        let budget = Budget {
            items: vec![
                ("spectrum", (nw * nk * 8) as u64),
                ("ingest ring", (RING * chunk_traces * (pt * 4 + bins * 8)) as u64),
                (
                    match plan.method {
                        Method::PhaseShift => "k-domain images",
                        Method::Stolt => "kz lines",
                        Method::SplitStep => "level image",
                    },
                    (plane_count * nk * 8) as u64,
                ),
                ("products", products_bytes),
                ("tables", (nk * 8 + nw * 16) as u64),
            ],
        };
        // The FFT plans come next, their work area on top of the budget.
        let mut plans = HashMap::new();
        plans.insert(
            "r2c",
            fft::Plan::new(
                fft::Kind::R2C,
                &Layout::contiguous(&[pt as i64], pt as i64, bins as i64, chunk_traces as i64),
            )?,
        );
        plans.insert(
            "c2c_2d_all",
            fft::Plan::new(
                fft::Kind::C2C,
                &Layout::contiguous(&[pi as i64, px as i64], nk as i64, nk as i64, nw as i64),
            )?,
        );
        if let Some(grid) = &plan.stolt {
            let n = grid.nz_fft as i64;
            plans.insert(
                "kz",
                fft::Plan::new(
                    fft::Kind::C2C,
                    &Layout {
                        n: vec![n],
                        inembed: vec![n],
                        istride: nk as i64,
                        idist: 1,
                        onembed: vec![n],
                        ostride: nk as i64,
                        odist: 1,
                        batch: nk as i64,
                    },
                )?,
            );
        }
        let mut inverse_2d = HashMap::new();
        for b in batches {
            if let std::collections::hash_map::Entry::Vacant(v) = inverse_2d.entry(b) {
                v.insert(fft::Plan::new(
                    fft::Kind::C2C,
                    &Layout::contiguous(&[pi as i64, px as i64], nk as i64, nk as i64, b as i64),
                )?);
            }
        }
        let work_bytes = plans.values().chain(inverse_2d.values()).map(|p| p.work_bytes).max().unwrap_or(0);
        let (free, total) = e.gpu.memory()?;
        let needed = budget.total() + work_bytes as u64;
        if needed as f64 > MEMORY_HEADROOM * free as f64 {
            return Err(Error::Backend(format!(
                "the job needs {:.2} GiB of device memory ({}, FFT work area {:.2} GiB) but {} has {:.2} GiB free of \
                 {:.2} GiB: lower imaging.fmax, the padding or the volume, or run on the CPU (--backend cpu)",
                needed as f64 / (1u64 << 30) as f64,
                budget.describe(),
                work_bytes as f64 / (1u64 << 30) as f64,
                e.gpu.info.name,
                free as f64 / (1u64 << 30) as f64,
                total as f64 / (1u64 << 30) as f64
            )));
        }
        let work = e.gpu.alloc::<u8>(work_bytes.max(1))?;
        for p in plans.values().chain(inverse_2d.values()) {
            p.bind(&e.compute, work.ptr())?;
        }

        let gpu = &e.gpu;
        let spectrum = gpu.alloc::<Cpx>(nw * nk)?;
        spectrum.zero_async(&e.compute)?;
        let landing = (0..RING).map(|_| gpu.alloc::<f32>(chunk_traces * pt)).collect::<Result<Vec<_>>>()?;
        for l in &landing {
            // The padding of every row stays zero: copies fill only the first nt samples of a row and the R2C
            // is out of place.
            l.zero_async(&e.compute)?;
        }
        let half = (0..RING).map(|_| gpu.alloc::<Cpx>(chunk_traces * bins)).collect::<Result<Vec<_>>>()?;
        let delay: Vec<Cpx> = (0..nw)
            .map(|iw| {
                let phase = -plan.omega(iw) * plan.t0;
                [phase.cos() as f32, phase.sin() as f32]
            })
            .collect();
        let k2: Vec<f64> = plan.k_squared();
        let omega: Vec<f64> = (0..nw).map(|iw| plan.omega(iw)).collect();
        let weight: Vec<f32> = (0..nw).map(|iw| plan.weight(iw) as f32).collect();
        let products = request
            .boxes
            .iter()
            .map(|b| {
                let p = gpu.alloc::<f32>(b.len())?;
                p.zero_async(&e.compute)?;
                Ok(p)
            })
            .collect::<Result<Vec<_>>>()?;
        let planes = gpu.alloc::<Cpx>(plane_count * nk)?;
        // The clears above ran on the compute stream; the copy stream writes the landing slots next.
        e.sync(&e.compute)?;
        Ok(Run {
            e,
            plan,
            request,
            nk,
            nw,
            chunk_traces,
            bins,
            spectrum,
            landing,
            half,
            delay: DeviceBuffer::from_slice(gpu, &delay)?,
            k2: DeviceBuffer::from_slice(gpu, &k2)?,
            omega: DeviceBuffer::from_slice(gpu, &omega)?,
            weight: DeviceBuffer::from_slice(gpu, &weight)?,
            products,
            planes,
            ffts: Ffts { plans, inverse_2d, _work: work },
            timers: Default::default(),
        })
    }

    /// Run `f` on the compute stream as part of stage `name`, timed by device events.
    fn timed<T>(&self, name: &'static str, f: impl FnOnce() -> Result<T>) -> Result<T> {
        let (a, b) = (self.e.event()?, self.e.event()?);
        self.e.record(&a, &self.e.compute)?;
        let out = f()?;
        self.e.record(&b, &self.e.compute)?;
        self.timers.borrow_mut().push((name, a, b));
        Ok(out)
    }

    /// Sum the device-timed sections into `stats` (waits for them).
    fn collect_timers(&self, stats: &mut RunStats) -> Result<()> {
        for (name, a, b) in self.timers.borrow_mut().drain(..) {
            stats.add(name, ms(elapsed_ms(&a, &b)?), 0);
        }
        Ok(())
    }

    fn execute(
        &self,
        src: &dyn VolumeReader,
        velocity: &VelocityModel,
        progress: &dyn Progress,
        stats: &mut RunStats,
    ) -> Result<Vec<Vec<f32>>> {
        let e = self.e;
        if e.naive {
            self.ingest_naive(src, progress, stats)?;
        } else {
            self.ingest(src, progress, stats)?;
        }

        let t = Instant::now();
        // SAFETY: the spectrum holds nw planes of nk values, as the plan says.
        self.timed("spatial-fft", || unsafe {
            self.ffts.get("c2c_2d_all").exec(self.spectrum.ptr(), self.spectrum.ptr(), true)
        })?;
        match self.plan.method {
            Method::PhaseShift => self.phase_shift(progress)?,
            Method::Stolt => self.stolt(progress)?,
            Method::SplitStep => self.split_step(velocity, progress, stats)?,
        }
        e.sync(&e.compute)?;
        stats.add("device-compute", t.elapsed(), 0);
        self.collect_timers(stats)?;
        if e.naive {
            self.download_naive(stats)
        } else {
            self.download(stats)
        }
    }

    /// The naive ingest: read everything, window everything, one pageable upload, then transform.
    fn ingest_naive(&self, src: &dyn VolumeReader, progress: &dyn Progress, stats: &mut RunStats) -> Result<()> {
        let e = self.e;
        let plan = self.plan;
        let [ni, nx, nt] = plan.input.shape();
        let pt = plan.padded[2];
        let wall = Instant::now();
        let t = Instant::now();
        let mut host = vec![0.0f32; ni * nx * nt];
        src.read_all(&mut host)?;
        stats.add("read", t.elapsed(), (host.len() * 4) as u64);
        let t = Instant::now();
        window::apply_to_traces(&plan.window, 0..ni, &mut host);
        stats.add("window", t.elapsed(), 0);
        let raw = e.gpu.alloc::<f32>(host.len())?;
        let t = Instant::now();
        device::upload_pageable(&raw, &host)?;
        let bytes = (host.len() * 4) as u64;
        stats.add("h2d", t.elapsed(), bytes);
        stats.host_to_device_bytes += bytes;
        drop(host);
        progress.begin("transform", ni as u64);
        for il0 in (0..ni).step_by(plan.ingest_inlines) {
            let il = il0..(il0 + plan.ingest_inlines).min(ni);
            let traces = il.len() * nx;
            // SAFETY: `raw` holds the whole volume; the landing slot holds chunk_traces rows of pt floats.
            unsafe {
                let from = Source::Device(raw.ptr_at(il0 * nx * nt));
                copy_2d(self.landing[0].ptr(), pt * 4, from, nt * 4, nt * 4, traces, &e.compute)?;
            }
            self.timed("time-fft", || {
                // SAFETY: as in `ingest`.
                unsafe { self.ffts.get("r2c").exec(self.landing[0].ptr(), self.half[0].ptr(), true)? };
                self.band_transpose(0, traces, il0)
            })?;
            progress.advance(il.len() as u64);
        }
        e.sync(&e.compute)?;
        progress.finish();
        stats.add("ingest", wall.elapsed(), bytes);
        Ok(())
    }

    /// The naive download: every product into pageable memory, one synchronous copy each.
    fn download_naive(&self, stats: &mut RunStats) -> Result<Vec<Vec<f32>>> {
        let t = Instant::now();
        let mut out = Vec::with_capacity(self.products.len());
        let mut bytes = 0u64;
        for p in &self.products {
            let mut host = vec![0.0f32; p.len()];
            device::download_pageable(&mut host, p)?;
            bytes += (p.len() * 4) as u64;
            out.push(host);
        }
        stats.add("d2h", t.elapsed(), bytes);
        stats.device_to_host_bytes += bytes;
        Ok(out)
    }

    /// Move the band of the R2C output in half-spectrum slot `slot` (`traces` traces from inline `il0`) into
    /// the spectrum.
    fn band_transpose(&self, slot: usize, traces: usize, il0: usize) -> Result<()> {
        let plan = self.plan;
        let tile = 32u32;
        let cfg = LaunchConfig {
            grid_dim: ((self.nw as u32).div_ceil(tile), (traces as u32).div_ceil(tile), 1),
            block_dim: (tile, 8, 1),
            shared_mem_bytes: 0,
        };
        self.e.launch(
            &self.e.compute,
            "band_transpose",
            cfg,
            &[
                Arg::Ptr(self.half[slot].ptr()),
                Arg::Ptr(self.spectrum.ptr()),
                Arg::Ptr(self.delay.ptr()),
                Arg::I32(traces as i32),
                Arg::I32(self.bins as i32),
                Arg::I32(plan.band.first as i32),
                Arg::I32(self.nw as i32),
                Arg::I32(plan.input.shape()[1] as i32),
                Arg::I32(il0 as i32),
                Arg::I32(plan.padded[0] as i32),
                Arg::I32(plan.padded[1] as i32),
            ],
        )
    }

    /// Read, window, upload and transform the input chunk by chunk, overlapping the three.
    fn ingest(&self, src: &dyn VolumeReader, progress: &dyn Progress, stats: &mut RunStats) -> Result<()> {
        let e = self.e;
        let plan = self.plan;
        let [ni, nx, nt] = plan.input.shape();
        let pt = plan.padded[2];
        let staging: Vec<PinnedBuffer<f32>> =
            (0..RING).map(|_| e.gpu.alloc_pinned::<f32>(self.chunk_traces * nt)).collect::<Result<_>>()?;
        let copied: Vec<CudaEvent> = (0..RING).map(|_| e.gpu.sync_event()).collect::<Result<_>>()?;
        let transformed: Vec<CudaEvent> = (0..RING).map(|_| e.gpu.sync_event()).collect::<Result<_>>()?;
        let chunks: Vec<usize> = (0..ni).step_by(plan.ingest_inlines).collect();
        let timers: Vec<[CudaEvent; 4]> =
            chunks.iter().map(|_| Ok([e.event()?, e.event()?, e.event()?, e.event()?])).collect::<Result<_>>()?;
        let mut staging = staging;
        let (mut read_s, mut window_s, mut bytes) = (0.0, 0.0, 0u64);
        let wall = Instant::now();
        progress.begin("read and upload", ni as u64);
        for (c, &il0) in chunks.iter().enumerate() {
            cancel::check()?;
            let slot = c % RING;
            let il = il0..(il0 + plan.ingest_inlines).min(ni);
            let traces = il.len() * nx;
            if c >= RING {
                // The copy out of this staging buffer (chunk c − RING) must be over before we refill it.
                check("waiting for a staging buffer", copied[slot].synchronize())?;
            }
            let host = &mut staging[slot].as_mut_slice_unsynced()[..traces * nt];
            let t = Instant::now();
            src.read_box(&IndexBox { il: il.clone(), xl: 0..nx, s: 0..nt }, host)?;
            read_s += t.elapsed().as_secs_f64();
            let t = Instant::now();
            window::apply_to_traces(&plan.window, il.clone(), host);
            window_s += t.elapsed().as_secs_f64();

            let [c0, c1, f0, f1] = &timers[c];
            if c >= RING {
                e.wait(&e.copy_in, &transformed[slot])?;
            }
            e.record(c0, &e.copy_in)?;
            // SAFETY: the staging buffer holds `traces` rows of nt floats and stays untouched until
            // `copied[slot]` completes; the landing slot holds chunk_traces rows of pt floats.
            unsafe {
                let from = Source::Host(staging[slot].host_ptr());
                copy_2d(self.landing[slot].ptr(), pt * 4, from, nt * 4, nt * 4, traces, &e.copy_in)?;
            }
            e.record(c1, &e.copy_in)?;
            e.record(&copied[slot], &e.copy_in)?;
            bytes += (traces * nt * 4) as u64;

            e.wait(&e.compute, &copied[slot])?;
            e.record(f0, &e.compute)?;
            // SAFETY: landing and half slots are laid out as the R2C plan says (chunk_traces rows); rows past
            // `traces` in a last, partial chunk are transformed but never read.
            unsafe { self.ffts.get("r2c").exec(self.landing[slot].ptr(), self.half[slot].ptr(), true)? };
            self.band_transpose(slot, traces, il0)?;
            e.record(f1, &e.compute)?;
            e.record(&transformed[slot], &e.compute)?;
            progress.advance(il.len() as u64);
        }
        e.sync(&e.compute)?;
        progress.finish();
        let (mut h2d_ms, mut fft_ms) = (0.0, 0.0);
        for [c0, c1, f0, f1] in &timers {
            h2d_ms += elapsed_ms(c0, c1)?;
            fft_ms += elapsed_ms(f0, f1)?;
        }
        stats.add("read", secs(read_s), bytes);
        stats.add("window", secs(window_s), 0);
        stats.add("h2d", ms(h2d_ms), bytes);
        stats.add("time-fft", ms(fft_ms), 0);
        stats.add("ingest", wall.elapsed(), bytes);
        stats.host_to_device_bytes += bytes;
        Ok(())
    }

    /// Cut every box's levels held by `planes` (plane `slot` = level `slot_levels[slot]`) into the products.
    fn gather(&self, planes: u64, slot_levels: &DeviceBuffer<i32>, levels: &[usize], scale: f64) -> Result<()> {
        let [_, px, _] = self.plan.padded;
        for (b, product) in self.request.boxes.iter().zip(&self.products) {
            if !levels.iter().any(|l| b.s.contains(l)) {
                continue;
            }
            let pixels = b.il.len() * b.xl.len();
            let cfg = LaunchConfig {
                grid_dim: (pixels.div_ceil(256).clamp(1, 4096) as u32, levels.len().clamp(1, 65535) as u32, 1),
                block_dim: (256, 1, 1),
                shared_mem_bytes: 0,
            };
            self.e.launch(
                &self.e.compute,
                "gather_box",
                cfg,
                &[
                    Arg::Ptr(planes),
                    Arg::Ptr(slot_levels.ptr()),
                    Arg::I32(levels.len() as i32),
                    Arg::I32(self.plan.padded[0] as i32),
                    Arg::I32(px as i32),
                    Arg::Ptr(product.ptr()),
                    Arg::I32(b.il.start as i32),
                    Arg::I32(b.il.len() as i32),
                    Arg::I32(b.xl.start as i32),
                    Arg::I32(b.xl.len() as i32),
                    Arg::I32(b.s.start as i32),
                    Arg::I32(b.s.len() as i32),
                    Arg::F32(scale as f32),
                ],
            )?;
        }
        Ok(())
    }

    /// Inverse 2-D FFT of the first `n` planes of `planes`, in place.
    fn inverse_planes(&self, planes: u64, n: usize) -> Result<()> {
        let p =
            self.ffts.inverse_2d.get(&n).ok_or_else(|| Error::Gpu(format!("no inverse FFT plan for {n} planes")))?;
        // SAFETY: `planes` holds at least n planes of nk values.
        unsafe { p.exec(planes, planes, false) }
    }

    fn phase_shift(&self, progress: &dyn Progress) -> Result<()> {
        let e = self.e;
        let plan = self.plan;
        let (max, rolloff) = dip_args(plan);
        progress.begin("phase shift", plan.levels.len() as u64);
        for block in phase_shift_blocks(plan) {
            cancel::check()?;
            let segs = DeviceBuffer::from_slice(&e.gpu, &block.segments)?;
            let slot_velocity = DeviceBuffer::from_slice(&e.gpu, &block.slot_velocity)?;
            let slot_levels: Vec<i32> = block.slot_levels.iter().map(|&l| l as i32).collect();
            let slot_levels_dev = DeviceBuffer::from_slice(&e.gpu, &slot_levels)?;
            let n_slots = block.slot_levels.len();
            let cfg = LaunchConfig {
                grid_dim: ((self.nk as u32).div_ceil(PS_LANES), 1, 1),
                block_dim: (PS_LANES, PS_WARPS, 1),
                shared_mem_bytes: (n_slots * PS_LANES as usize * 8) as u32,
            };
            self.timed("migrate", || {
                e.launch(
                    &e.compute,
                    "phase_shift_block",
                    cfg,
                    &[
                        Arg::Ptr(self.spectrum.ptr()),
                        Arg::Ptr(self.planes.ptr()),
                        Arg::Ptr(self.k2.ptr()),
                        Arg::Ptr(self.omega.ptr()),
                        Arg::Ptr(self.weight.ptr()),
                        Arg::I32(self.nw as i32),
                        Arg::I32(self.nk as i32),
                        Arg::Ptr(segs.ptr()),
                        Arg::I32(block.segments.len() as i32),
                        Arg::Ptr(slot_velocity.ptr()),
                        Arg::I32(n_slots as i32),
                        Arg::F32(max),
                        Arg::F32(rolloff),
                    ],
                )
            })?;
            self.timed("inverse-fft", || self.inverse_planes(self.planes.ptr(), n_slots))?;
            self.timed("gather", || {
                self.gather(self.planes.ptr(), &slot_levels_dev, &block.slot_levels, plan.image_scale())
            })?;
            // The small tables of this block must outlive the kernels that read them.
            e.sync(&e.compute)?;
            progress.advance(n_slots as u64);
        }
        progress.finish();
        Ok(())
    }

    fn stolt(&self, progress: &dyn Progress) -> Result<()> {
        let e = self.e;
        let plan = self.plan;
        let grid = plan.stolt.as_ref().expect("checked in Run::new");
        let (max, rolloff) = dip_args(plan);
        progress.begin("stolt", plan.levels.len() as u64);
        // Centre the record on t = 0 (see src/imaging/stolt.rs): every plane times exp(+iω t_c).
        let centring: Vec<Cpx> = (0..self.nw)
            .map(|iw| {
                let ph = plan.omega(iw) * grid.time_centre;
                [ph.cos() as f32, ph.sin() as f32]
            })
            .collect();
        let centring = DeviceBuffer::from_slice(&e.gpu, &centring)?;
        self.timed("migrate", || {
            e.launch(
                &e.compute,
                "scale_planes",
                grid_1d(self.nw * self.nk, 256),
                &[
                    Arg::Ptr(self.spectrum.ptr()),
                    Arg::Ptr(centring.ptr()),
                    Arg::I32(self.nw as i32),
                    Arg::I32(self.nk as i32),
                ],
            )
        })?;
        let step = if self.nw > 1 { plan.omega(1) - plan.omega(0) } else { 1.0 };
        let cfg = LaunchConfig {
            grid_dim: ((self.nk as u32).div_ceil(128), grid.nz_fft.min(65535) as u32, 1),
            block_dim: (128, 1, 1),
            shared_mem_bytes: 0,
        };
        self.timed("migrate", || {
            e.launch(
                &e.compute,
                "stolt_remap",
                cfg,
                &[
                    Arg::Ptr(self.spectrum.ptr()),
                    Arg::Ptr(self.planes.ptr()),
                    Arg::Ptr(self.k2.ptr()),
                    Arg::I32(self.nw as i32),
                    Arg::I32(self.nk as i32),
                    Arg::I32(grid.nz_fft as i32),
                    Arg::F64(plan.omega(0)),
                    Arg::F64(step),
                    Arg::F64(grid.velocity),
                    Arg::F64(grid.dkz),
                    Arg::F64(grid.time_centre),
                    Arg::I32(matches!(grid.interpolation, crate::imaging::StoltInterpolation::Sinc) as i32),
                    Arg::F32(max),
                    Arg::F32(rolloff),
                ],
            )
        })?;
        // The inverse FFT over kz turns line m into depth level m, as the CPU's per-column FFT does.
        // SAFETY: planes holds nz_fft planes of nk values, laid out as the "kz" plan says.
        self.timed("inverse-fft", || unsafe { self.ffts.get("kz").exec(self.planes.ptr(), self.planes.ptr(), false) })?;
        let levels: Vec<usize> = (0..=plan.last_level()).collect();
        self.timed("inverse-fft", || self.inverse_planes(self.planes.ptr(), levels.len()))?;
        let ids: Vec<i32> = levels.iter().map(|&l| l as i32).collect();
        let ids = DeviceBuffer::from_slice(&e.gpu, &ids)?;
        self.timed("gather", || self.gather(self.planes.ptr(), &ids, &levels, plan.image_scale()))?;
        e.sync(&e.compute)?;
        progress.advance(plan.levels.len() as u64);
        progress.finish();
        Ok(())
    }

    fn split_step(&self, velocity: &VelocityModel, progress: &dyn Progress, stats: &mut RunStats) -> Result<()> {
        let e = self.e;
        let plan = self.plan;
        let (nw, nk) = (self.nw, self.nk);
        let [ni, nx, _] = plan.input.shape();
        let [_, px, pt] = plan.padded;
        let dz = plan.depth.step;
        let (max, rolloff) = dip_args(plan);
        let all = self.ffts.get("c2c_2d_all");

        // Into space, normalised (as the CPU engine does before its depth loop).
        // SAFETY: the spectrum holds nw planes of nk values.
        self.timed("spatial-fft", || unsafe { all.exec(self.spectrum.ptr(), self.spectrum.ptr(), false) })?;
        let norm = DeviceBuffer::from_slice(&e.gpu, &vec![[1.0 / nk as f32, 0.0f32]; nw])?;
        e.launch(
            &e.compute,
            "scale_planes",
            grid_1d(nw * nk, 256),
            &[Arg::Ptr(self.spectrum.ptr()), Arg::Ptr(norm.ptr()), Arg::I32(nw as i32), Arg::I32(nk as i32)],
        )?;

        let lateral = plan.lateral_velocity;
        let mut lens_host: Vec<PinnedBuffer<f32>> =
            if lateral { (0..2).map(|_| e.gpu.alloc_pinned::<f32>(nk)).collect::<Result<_>>()? } else { Vec::new() };
        let lens_dev: Vec<DeviceBuffer<f32>> =
            if lateral { (0..2).map(|_| e.gpu.alloc::<f32>(nk)).collect::<Result<_>>()? } else { Vec::new() };
        let lens_ready: Vec<CudaEvent> = (0..2).map(|_| e.gpu.sync_event()).collect::<Result<_>>()?;
        let lens_used: Vec<CudaEvent> = (0..2).map(|_| e.gpu.sync_event()).collect::<Result<_>>()?;
        let mut slowness = vec![0.0f32; if lateral { ni * nx } else { 0 }];
        let mut level_ids: HashMap<usize, DeviceBuffer<i32>> = HashMap::new();

        let image_level = |level: usize, lens: u64, level_ids: &mut HashMap<usize, DeviceBuffer<i32>>| -> Result<()> {
            let wanted = self.request.boxes.iter().any(|b| b.s.contains(&level));
            if lens == 0 && !wanted {
                return Ok(());
            }
            self.timed("migrate", || {
                e.launch(
                    &e.compute,
                    "split_step_lens_image",
                    grid_1d(nk, 256),
                    &[
                        Arg::Ptr(self.spectrum.ptr()),
                        Arg::Ptr(lens),
                        Arg::Ptr(self.omega.ptr()),
                        Arg::Ptr(self.weight.ptr()),
                        Arg::I32(nw as i32),
                        Arg::I32(nk as i32),
                        Arg::Ptr(if wanted { self.planes.ptr() } else { 0 }),
                    ],
                )
            })?;
            if wanted {
                let ids = match level_ids.entry(level) {
                    std::collections::hash_map::Entry::Occupied(o) => o.into_mut(),
                    std::collections::hash_map::Entry::Vacant(v) => {
                        v.insert(DeviceBuffer::from_slice(&e.gpu, &[level as i32])?)
                    }
                };
                // Split-step's planes are normalised laterally already: only the time normalisation remains.
                self.timed("gather", || self.gather(self.planes.ptr(), ids, &[level], 1.0 / pt as f64))?;
            }
            Ok(())
        };
        image_level(0, 0, &mut level_ids)?;

        progress.begin("split-step", plan.step_velocity.len() as u64);
        let mut lens_bytes = 0u64;
        for (j, &v_ref) in plan.step_velocity.iter().enumerate() {
            cancel::check()?;
            let mut lens_ptr = 0;
            if lateral {
                let slot = j % 2;
                if j >= 2 {
                    check("waiting for a lens buffer", lens_used[slot].synchronize())?;
                }
                velocity.slowness_slice((j as f64 + 0.5) * dz, &mut slowness);
                let s0 = 2.0 / v_ref;
                let host = lens_host[slot].as_mut_slice_unsynced();
                host.fill(0.0);
                for (row, s) in slowness.chunks(nx).enumerate() {
                    for (l, &s) in host[row * px..row * px + nx].iter_mut().zip(s) {
                        *l = ((2.0 * s as f64 - s0) * dz) as f32;
                    }
                }
                lens_dev[slot].upload_async(0, &lens_host[slot], nk, &e.copy_in)?;
                e.record(&lens_ready[slot], &e.copy_in)?;
                e.wait(&e.compute, &lens_ready[slot])?;
                lens_bytes += (nk * 4) as u64;
                lens_ptr = lens_dev[slot].ptr();
            }
            // SAFETY: the spectrum holds nw planes of nk values.
            self.timed("spatial-fft", || unsafe { all.exec(self.spectrum.ptr(), self.spectrum.ptr(), true) })?;
            self.timed("migrate", || {
                e.launch(
                    &e.compute,
                    "split_step_shift",
                    grid_1d(nw * nk, 256),
                    &[
                        Arg::Ptr(self.spectrum.ptr()),
                        Arg::Ptr(self.k2.ptr()),
                        Arg::Ptr(self.omega.ptr()),
                        Arg::I32(nw as i32),
                        Arg::I32(nk as i32),
                        Arg::F64(v_ref),
                        Arg::F64(dz),
                        Arg::F32(1.0 / nk as f32),
                        Arg::F32(max),
                        Arg::F32(rolloff),
                    ],
                )
            })?;
            // SAFETY: as above.
            self.timed("inverse-fft", || unsafe { all.exec(self.spectrum.ptr(), self.spectrum.ptr(), false) })?;
            image_level(j + 1, lens_ptr, &mut level_ids)?;
            if lateral {
                e.record(&lens_used[j % 2], &e.compute)?;
            }
            progress.advance(1);
        }
        e.sync(&e.compute)?;
        progress.finish();
        stats.host_to_device_bytes += lens_bytes;
        if lens_bytes > 0 {
            stats.add("h2d-velocity", std::time::Duration::ZERO, lens_bytes);
        }
        Ok(())
    }

    /// Pull the products back: only the requested boxes cross the bus.
    fn download(&self, stats: &mut RunStats) -> Result<Vec<Vec<f32>>> {
        let e = self.e;
        let ready = e.gpu.sync_event()?;
        e.record(&ready, &e.compute)?;
        e.wait(&e.copy_out, &ready)?;
        let (d0, d1) = (e.event()?, e.event()?);
        e.record(&d0, &e.copy_out)?;
        let mut pinned = Vec::with_capacity(self.products.len());
        let mut bytes = 0u64;
        for p in &self.products {
            let mut host = e.gpu.alloc_pinned::<f32>(p.len())?;
            p.download_async(0, &mut host, p.len(), &e.copy_out)?;
            bytes += (p.len() * 4) as u64;
            pinned.push(host);
        }
        e.record(&d1, &e.copy_out)?;
        stats.add("d2h", ms(elapsed_ms(&d0, &d1)?), bytes);
        stats.device_to_host_bytes += bytes;
        Ok(pinned.iter().map(|p| p.as_slice_unsynced().to_vec()).collect())
    }
}

fn ms(v: f64) -> std::time::Duration {
    std::time::Duration::from_secs_f64(v / 1000.0)
}

fn secs(v: f64) -> std::time::Duration {
    std::time::Duration::from_secs_f64(v)
}

/// The dip limit as the kernels take it: (max angle, roll-off) in radians, or (−1, 0) for none.
fn dip_args(plan: &Plan) -> (f32, f32) {
    match plan.dip_limit {
        Some(max) => (max as f32, formulas::DIP_ROLLOFF_DEG.to_radians().min(max) as f32),
        None => (-1.0, 0.0),
    }
}

/// A launch of the phase-shift kernel: the segments from the previous launch's last level down to this
/// one's, with slots renumbered from 0.
struct PsBlock {
    /// `Segment` as kernels/phase_shift.cu lays it out: velocity, thickness (f64 bits), slot (−1: none)
    /// and padding (the low and high 32 bits of the last word).
    segments: Vec<[u64; 3]>,
    slot_levels: Vec<usize>,
    slot_velocity: Vec<f32>,
}

/// The plan's blocks cut so that no launch images more than [`PS_MAX_SLOTS`] levels.
fn phase_shift_blocks(plan: &Plan) -> Vec<PsBlock> {
    let mut out = Vec::new();
    for (b, block) in plan.blocks.iter().enumerate() {
        let levels = &plan.levels[block.clone()];
        let mut cur = PsBlock { segments: Vec::new(), slot_levels: Vec::new(), slot_velocity: Vec::new() };
        for s in plan.segments(b) {
            let slot = s.slot.map(|i| {
                cur.slot_levels.push(levels[i].index);
                cur.slot_velocity.push(levels[i].velocity as f32);
                (cur.slot_levels.len() - 1) as i32
            });
            cur.segments.push(encode(&s, slot.unwrap_or(-1)));
            if cur.slot_levels.len() == PS_MAX_SLOTS {
                out.push(std::mem::replace(
                    &mut cur,
                    PsBlock { segments: Vec::new(), slot_levels: Vec::new(), slot_velocity: Vec::new() },
                ));
            }
        }
        if !cur.slot_levels.is_empty() {
            out.push(cur);
        }
    }
    out
}

fn encode(s: &Segment, slot: i32) -> [u64; 3] {
    [s.velocity.to_bits(), s.thickness.to_bits(), slot as u32 as u64]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::imaging::{image_geometry, ImagingParams};
    use crate::velocity::{Interpolation, VelocityTable};
    use crate::volume::{Domain, Geometry, LineAxis, SampleAxis};
    use crate::window::WindowParams;

    /// The launches of a plan carry every segment and image every planned level once, in order, with no
    /// launch over the shared-memory limit.
    #[test]
    fn phase_shift_launches_cover_the_plan() {
        let g = Geometry::regular(
            LineAxis::new(1, 1, 8),
            LineAxis::new(1, 1, 8),
            SampleAxis { origin: 0.0, step: 4.0, len: 200, domain: Domain::Time },
        );
        let velocity = VelocityModel::Table(
            VelocityTable::new(vec![0.0, 300.0, 900.0], vec![1500.0, 2000.0, 2600.0], Interpolation::Linear).unwrap(),
        );
        let params = ImagingParams { dz: 5.0, zmax: Some(1500.0), levels_per_block: Some(200), ..Default::default() };
        let image = image_geometry(&g, &params, &velocity).unwrap();
        let plan =
            Plan::new(&g, [10.0, 10.0], &WindowParams::default(), &params, &velocity, &ImageRequest::whole(&image))
                .unwrap();
        let launches = phase_shift_blocks(&plan);
        let levels: Vec<usize> = launches.iter().flat_map(|b| b.slot_levels.iter().copied()).collect();
        assert_eq!(levels, plan.levels.iter().map(|l| l.index).collect::<Vec<_>>());
        assert!(launches.iter().all(|b| b.slot_levels.len() <= PS_MAX_SLOTS));
        assert!(launches.len() > plan.blocks.len(), "blocks of 200 levels must be cut");
        let thickness: f64 = launches.iter().flat_map(|b| &b.segments).map(|s| f64::from_bits(s[1])).sum();
        assert!((thickness - plan.last_level() as f64 * 5.0).abs() < 1e-3, "{thickness}");
        for b in &launches {
            let slots: Vec<i32> = b.segments.iter().map(|s| s[2] as u32 as i32).filter(|&s| s >= 0).collect();
            assert_eq!(slots, (0..b.slot_levels.len() as i32).collect::<Vec<_>>());
        }
    }
}
