//! The CPU engine: the plan's steps with rustfft / realfft, in parallel with rayon, in a thread pool of its
//! own (so a benchmark or a caller can choose the number of threads).
//!
//! A migration reads the input once into a store of the share's spectrum ([`super::store`]) and takes it
//! through in frequency bands ([`super::bands`]): one band when the padded spectrum fits the host memory the
//! run may use, else as many as needed, the spectrum waiting in host memory or, when not even that fits, in
//! a cache file on scratch disk.

use std::time::Instant;

use super::bands::{bands_for, gib, Bands, Budget};
use super::image::ImageAssembly;
use super::spectrum::TraceTransform;
use super::spectrum::{forward_planes, Fft2, Spectrum};
use super::store::{HostStore, Place, StoreSettings};
use super::{Engine, Migration, Plan, ProductSink};
use crate::window;
use num_complex::Complex32;
use rayon::prelude::*;
use seis_core::alloc::try_host_vec;
use seis_core::context::RunContext;
use seis_core::error::{Error, Result};
use seis_core::volume::{VolumeReader, WriteMode};

pub struct CpuEngine {
    pool: rayon::ThreadPool,
    store: StoreSettings,
}

impl CpuEngine {
    /// An engine running on `threads` threads (all cores when `None`).
    pub fn new(threads: Option<usize>) -> Result<Self> {
        let threads = seis_core::threads::thread_count(threads);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("seisimage-cpu-{i}"))
            .build()
            .map_err(|e| seis_core::threads::cannot_start(threads, &e))?;
        Ok(CpuEngine { pool, store: StoreSettings::default() })
    }

    pub fn threads(&self) -> usize {
        self.pool.current_num_threads()
    }

    /// How much host memory a run may use, and where a spectrum that does not fit waits.
    pub fn set_store(&mut self, store: StoreSettings) {
        self.store = store;
    }

    /// How a migration of `plan` (by `members` migrations of a velocity scan) would hold its spectrum with
    /// the host memory it may use now.
    pub fn host_plan(&self, plan: &Plan, members: usize) -> Result<HostPlan> {
        host_plan(plan, members, self.store.usable_host_memory(), self.store.host_memory.is_some())
    }
}

/// How the CPU engine holds a share's spectrum: in which bands, waiting where, and the memory that takes.
#[derive(Clone, Debug)]
pub struct HostPlan {
    pub bands: Bands,
    pub place: Place,
    pub budget: Budget,
}

/// The CPU engine's memory plan for `plan`, migrated by `members` migrations of a velocity scan (1: once),
/// with `available` bytes of host memory (`limited` when that is the job's `compute.host_memory_gb`): the
/// padded spectrum of the share at once if it fits; else bands, with the unpadded spectrum waiting in
/// memory, or on scratch disk if it does not fit either; else refused with the numbers. Stolt does not
/// split. A scan keeps the boxes of every member, and a copy of the band each member but the last migrates
/// (phase shift and split-step change it in place; Stolt reads it only).
pub fn host_plan(plan: &Plan, members: usize, available: u64, limited: bool) -> Result<HostPlan> {
    let frequencies = plan.frequencies.clone();
    let n_w = frequencies.len() as u64;
    let padded = plan.nk() as u64 * 8;
    let unpadded = plan.input.n_traces() as u64 * 8;
    let mut fixed = Budget { items: vec![("working set", plan.host_fixed_bytes())] };
    if members > 1 {
        fixed.items.push(("the other scan members' boxes", (members as u64 - 1) * plan.request_bytes()));
    }
    let copies = members > 1 && plan.method.rules().changes_spectrum();
    let per_frequency = padded * (1 + copies as u64);
    // `budget` with a band of `width` frequencies (and its copy), first.
    let band = |budget: &Budget, name: &'static str, width: u64| {
        let budget = if copies { budget.with_first("scan copy of the band", padded * width) } else { budget.clone() };
        budget.with_first(name, padded * width)
    };
    let whole = band(&fixed, "spectrum", n_w);
    if whole.total() <= available || frequencies.is_empty() {
        return Ok(HostPlan { bands: Bands::whole(frequencies), place: Place::Whole, budget: whole });
    }
    let refuse = |extra: String| -> Result<HostPlan> {
        let message = format!(
            "the job needs {} of host memory at once ({}), and {} can be used{extra}",
            gib(whole.total()),
            whole.describe(),
            gib(available)
        );
        Err(if limited { Error::at_key("compute.host_memory_gb", message) } else { Error::Backend(message) })
    };
    if let Some(why) = plan.method.rules().whole_spectrum() {
        return refuse(format!("; {why}, so it cannot run in bands"));
    }
    let in_memory = fixed.with_first("waiting spectrum", n_w * unpadded);
    if let Some(bands) = bands_for(frequencies.clone(), per_frequency, in_memory.total(), available) {
        let budget = band(&in_memory, "band", bands.widest() as u64);
        return Ok(HostPlan { bands, place: Place::Memory, budget });
    }
    match bands_for(frequencies, per_frequency, fixed.total(), available) {
        Some(bands) => {
            let budget = band(&fixed, "band", bands.widest() as u64);
            Ok(HostPlan { bands, place: Place::Disk, budget })
        }
        None => refuse(format!(
            "; in frequency bands, with the spectrum waiting on scratch disk, it would still need {} before the \
             first frequency ({})",
            gib(fixed.total() + per_frequency),
            band(&fixed, "one frequency", 1).describe()
        )),
    }
}

impl Engine for CpuEngine {
    fn name(&self) -> &str {
        "cpu"
    }

    fn migrate_scan(&mut self, scan: &[Migration], ctx: &mut RunContext, sinks: &[&dyn ProductSink]) -> Result<()> {
        super::scan::check(scan, sinks.len())?;
        for m in scan {
            m.plan.check(m.input.geometry(), m.request)?;
        }
        let Migration { input, plan, request, .. } = scan[0];
        let host = self.host_plan(plan, scan.len())?;
        let scratch = self.store.scratch_dir();
        self.pool.install(|| {
            let count = host.bands.ranges.len();
            ctx.stats.frequency_bands = count;
            if count == 0 {
                // An empty share: its part of every product is zero.
                for sink in sinks {
                    for (i, b) in request.boxes.iter().enumerate() {
                        sink.complete(i, vec![0.0; b.len()]);
                    }
                }
                return Ok(());
            }
            if host.bands.banded() {
                tracing::info!(
                    "the spectrum does not fit the host memory at once: {count} frequency bands of up to {} \
                     frequencies, the spectrum waiting in {} ({})",
                    host.bands.widest(),
                    host.place.name(),
                    host.budget.describe()
                );
            }
            let mut store = HostStore::new(plan, host.place, &scratch)?;
            ingest(input, plan, &mut store, ctx)?;
            let fft2 = Fft2::new([plan.padded[0], plan.padded[1]]);
            let mut members: Vec<ImageAssembly> = scan
                .iter()
                .zip(sinks)
                .map(|(m, sink)| ImageAssembly::new(m.request, m.plan, *sink))
                .collect::<Result<_>>()?;
            // What a member migrates when others follow it in the band (see below).
            let mut copy = Spectrum::default();
            for (b, band) in host.bands.ranges.iter().enumerate() {
                ctx.check()?;
                if count > 1 {
                    tracing::debug!("frequency band {} of {count}: {} frequencies", b + 1, band.len());
                }
                let mut spectrum = store.band(band.clone(), plan, ctx)?;
                forward_planes(&mut spectrum, &fft2, ctx);
                for (i, (m, asm)) in scan.iter().zip(&mut members).enumerate() {
                    ctx.check()?;
                    asm.begin_band(b + 1 == count);
                    // Phase shift and split-step carry the band down in place: every member but the last
                    // starts from a copy of it (the memory plan counts one).
                    let last = i + 1 == scan.len();
                    if last || !m.plan.method.rules().changes_spectrum() {
                        migrate_band(&mut spectrum, m, &fft2, asm, ctx)?;
                    } else {
                        let bytes = (spectrum.data.len() * 8) as u64;
                        if copy.data.len() != spectrum.data.len() {
                            copy.data =
                                try_host_vec(spectrum.data.len(), "the copy of a band a velocity scan migrates")?;
                        }
                        ctx.stats.time("scan-copy", bytes, || {
                            copy.data.copy_from_slice(&spectrum.data);
                            (copy.nk, copy.first) = (spectrum.nk, spectrum.first);
                        });
                        migrate_band(&mut copy, m, &fft2, asm, ctx)?;
                    }
                }
            }
            members.into_iter().try_for_each(ImageAssembly::finish)
        })
    }
}

/// One member's migration of a band of the spectrum, its values added into its boxes.
fn migrate_band(
    spectrum: &mut Spectrum,
    m: &Migration,
    fft2: &Fft2,
    asm: &mut ImageAssembly,
    ctx: &mut RunContext,
) -> Result<()> {
    let Migration { plan, velocity, request, .. } = *m;
    let t = Instant::now();
    plan.method.rules().migrate(spectrum, plan, velocity, fft2, asm, ctx)?;
    ctx.stats.add("migrate", t.elapsed(), (request.n_values() * 4) as u64);
    Ok(())
}

/// Each method's kernels and the image assembly, on a small random spectrum, against a naive evaluation of
/// the same formulas with plain DFTs and step-by-step factors.
/// Read `src` chunk by chunk, window it, transform it in time and put the plan's share of the frequencies
/// into `store`.
pub fn ingest(src: &dyn VolumeReader, plan: &Plan, store: &mut HostStore, ctx: &mut RunContext) -> Result<()> {
    let [ni, nx, nt] = plan.input.shape();
    let nw = plan.frequencies.len();
    let transform = TraceTransform::new(plan, plan.frequencies.clone());
    let mut chunk: Vec<f32> = try_host_vec(plan.ingest_inlines * nx * nt, "the input's traces being read")?;
    let mut bands: Vec<Complex32> = try_host_vec(plan.ingest_inlines * nx * nw, "the traces' spectra")?;

    let conditioner = window::TraceConditioner::new(&plan.window, plan.nonfinite);
    ctx.progress.begin("read and transform in time", ni as u64);
    for il0 in (0..ni).step_by(plan.ingest_inlines) {
        ctx.check()?;
        let il = il0..(il0 + plan.ingest_inlines).min(ni);
        let traces = il.len() * nx;
        let data = &mut chunk[..traces * nt];
        let t = Instant::now();
        window::read_conditioned(src, il.clone(), data, &conditioner, WriteMode::Cached)?;
        conditioner.check(src)?;
        ctx.stats.add("read", t.elapsed(), (data.len() * 4) as u64);

        let t = Instant::now();
        let band = &mut bands[..traces * nw];
        band.par_chunks_mut(nw)
            .zip(data.par_chunks(nt))
            .for_each_init(|| transform.scratch(), |s, (out, trace)| transform.forward(trace, s, out));
        ctx.stats.add("time-fft", t.elapsed(), 0);
        let t = Instant::now();
        store.put_chunk(il0, nx, plan.padded[1], nw, band)?;
        ctx.stats.add("store", t.elapsed(), (band.len() * 8) as u64);
        ctx.progress.advance(il.len() as u64);
    }
    ctx.progress.finish();
    ctx.stats.nonfinite_samples += conditioner.check(src)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use num_complex::{Complex32, Complex64};
    use std::f64::consts::TAU;

    use super::*;
    use crate::formulas::phase_factor;
    use crate::naive::{dft2, random};
    use crate::spectrum::Spectrum;
    use crate::stolt;
    use crate::store::Place;
    use crate::window::{LateralPad, WindowParams};
    use crate::{image_geometry, ImagingParams, Method};
    use crate::{ImageRequest, Plan};
    use seis_core::progress::Silent;
    use seis_core::volume::{Domain, Geometry, LineAxis, SampleAxis, Volume};
    use seis_velocity::VelocityModel;
    use seis_velocity::{Interpolation, VelocityTable};
    use std::path::Path;

    fn setup(method: Method, velocity: &VelocityModel) -> (Plan, ImageRequest, Vec<Complex64>) {
        let g = Geometry::regular(
            LineAxis::new(1, 1, 5),
            LineAxis::new(1, 1, 3),
            SampleAxis { origin: 0.0, step: 4.0, len: 12, domain: Domain::Time },
        );
        let window = WindowParams { lateral_pad: LateralPad::Traces(1), ..Default::default() };
        let params = ImagingParams {
            method,
            dz: 10.0,
            nz: Some(4),
            fmin: 20.0,
            fmax: 90.0,
            levels_per_block: Some(2),
            ..Default::default()
        };
        let image = image_geometry(&g, &params, velocity).unwrap();
        let request = ImageRequest::whole(&image);
        let plan = Plan::new(&g, [10.0, 10.0], &window, &params, velocity, &request).unwrap();
        let n = plan.n_omega() * plan.nk();
        let (re, im) = (random(n, 5), random(n, 6));
        let spectrum = re.iter().zip(&im).map(|(a, b)| Complex64::new(*a, *b)).collect();
        (plan, request, spectrum)
    }

    fn run(plan: &Plan, request: &ImageRequest, velocity: &VelocityModel, spectrum: &[Complex64]) -> Vec<f32> {
        let data = spectrum.iter().map(|c| Complex32::new(c.re as f32, c.im as f32)).collect();
        let mut spectrum = Spectrum { data, nk: plan.nk(), first: 0 };
        let fft2 = Fft2::new([plan.padded[0], plan.padded[1]]);
        let collected = crate::Collected::new(request);
        let mut asm = ImageAssembly::new(request, plan, &collected).unwrap();
        let ctx = RunContext::new(&Silent, Default::default());
        plan.method.rules().migrate(&mut spectrum, plan, velocity, &fft2, &mut asm, &ctx).unwrap();
        asm.finish().unwrap();
        collected.into_images().unwrap().remove(0)
    }

    /// `[il][xl][z]` image from one k-domain or space-domain plane per level.
    fn compare(got: &[f32], planes: &[Vec<f64>], plan: &Plan) {
        let [ni, nx, _] = plan.input.shape();
        let nz = planes.len();
        let peak = planes.iter().flatten().fold(0.0f64, |a, v| a.max(v.abs()));
        for (l, plane) in planes.iter().enumerate() {
            assert!(plane.iter().any(|v| v.abs() > 0.1 * peak), "level {l} is all but empty");
            for i in 0..ni {
                for j in 0..nx {
                    let expect = plane[i * plan.padded[1] + j];
                    let value = got[(i * nx + j) * nz + l] as f64;
                    assert!((value - expect).abs() <= 1e-4 * peak, "level {l} ({i}, {j}): {value} vs {expect}");
                }
            }
        }
    }

    fn linear_vz() -> VelocityModel {
        VelocityModel::Table(VelocityTable::new(vec![0.0, 40.0], vec![1800.0, 2600.0], Interpolation::Linear).unwrap())
    }

    #[test]
    fn phase_shift_matches_a_naive_step_by_step_sum() {
        let v = linear_vz();
        let (plan, request, s) = setup(Method::PhaseShift, &v);
        let (nk, [rows, cols, _]) = (plan.nk(), plan.padded);
        let k2 = plan.k_squared();
        let planes: Vec<Vec<f64>> = (0..4)
            .map(|level| {
                let mut sum = vec![Complex64::default(); nk];
                for iw in 0..plan.n_omega() {
                    for k in 0..nk {
                        let mut p = s[iw * nk + k];
                        for j in 0..level {
                            p *= phase_factor(plan.omega(iw), k2[k], plan.step_velocity[j], 10.0);
                        }
                        sum[k] += p * plan.weight(iw);
                    }
                }
                dft2(&sum, rows, cols, 1.0).iter().map(|c| c.re * plan.image_scale()).collect()
            })
            .collect();
        compare(&run(&plan, &request, &v, &s), &planes, &plan);
    }

    #[test]
    fn split_step_matches_naive_dfts_per_step() {
        let v = linear_vz();
        let (plan, request, s) = setup(Method::SplitStep, &v);
        let (nk, [rows, cols, nt]) = (plan.nk(), plan.padded);
        let k2 = plan.k_squared();
        let mut fields: Vec<Vec<Complex64>> = (0..plan.n_omega())
            .map(|iw| dft2(&s[iw * nk..(iw + 1) * nk], rows, cols, 1.0).iter().map(|c| c / nk as f64).collect())
            .collect();
        let image = |fields: &[Vec<Complex64>]| -> Vec<f64> {
            (0..nk)
                .map(|p| (0..fields.len()).map(|iw| plan.weight(iw) * fields[iw][p].re).sum::<f64>() / nt as f64)
                .collect()
        };
        let mut planes = vec![image(&fields)];
        for j in 0..3 {
            for (iw, f) in fields.iter_mut().enumerate() {
                let mut k = dft2(f, rows, cols, -1.0);
                for (x, &k2) in k.iter_mut().zip(&k2) {
                    *x *= phase_factor(plan.omega(iw), k2, plan.step_velocity[j], 10.0) / nk as f64;
                }
                *f = dft2(&k, rows, cols, 1.0);
            }
            planes.push(image(&fields));
        }
        compare(&run(&plan, &request, &v, &s), &planes, &plan);
    }

    /// The memory plan: at once when it fits; else bands with the spectrum waiting in memory, then on disk;
    /// else refused with the numbers and the key that limits it. Stolt does not split.
    #[test]
    fn the_host_plan_bands_then_spills_then_refuses() {
        let v = linear_vz();
        let (plan, _, _) = setup(Method::PhaseShift, &v);
        let (n, padded) = (plan.frequencies.len() as u64, plan.nk() as u64 * 8);
        let (fixed, store) = (plan.host_fixed_bytes(), n * plan.input.n_traces() as u64 * 8);
        let at = |available| host_plan(&plan, 1, available, true);
        let whole = at(fixed + n * padded).unwrap();
        assert_eq!((whole.place, whole.bands.ranges.len()), (Place::Whole, 1));
        let memory = at(fixed + store + padded * 2).unwrap();
        assert_eq!((memory.place, memory.bands.widest()), (Place::Memory, 2));
        let disk = at(fixed + padded * 2).unwrap();
        assert_eq!((disk.place, disk.bands.widest()), (Place::Disk, 2));
        let e = at(fixed + padded - 1).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        let text = e.to_string();
        assert!(text.starts_with("compute.host_memory_gb: the job needs"), "{text}");
        assert!(text.contains("it would still need") && text.contains("before the first frequency"), "{text}");
        let e = host_plan(&plan, 1, fixed + padded - 1, false).unwrap_err();
        assert_eq!(e.exit_code(), 1, "without a limit of the job's, a machine too small is no mistake in the job");
        let (stolt, _, _) = setup(Method::Stolt, &VelocityModel::Constant(2000.0));
        let e = host_plan(&stolt, 1, stolt.host_fixed_bytes() + store + padded * 2, true).unwrap_err().to_string();
        assert!(e.contains("Stolt needs every frequency"), "{e}");
    }

    #[test]
    fn stolt_matches_a_naive_kz_sum() {
        let v = VelocityModel::Constant(2000.0);
        let (plan, request, s) = setup(Method::Stolt, &v);
        let grid = *plan.method.stolt().unwrap();
        let (nk, [rows, cols, _]) = (plan.nk(), plan.padded);
        let k2 = plan.k_squared();
        let freq = stolt::FrequencyGrid { first: plan.omega(0), step: plan.omega(1) - plan.omega(0) };
        let mut kimg = vec![vec![Complex64::default(); nk]; 4];
        for k in 0..nk {
            let column: Vec<Complex64> = (0..plan.n_omega())
                .map(|iw| s[iw * nk + k] * Complex64::from_polar(1.0, plan.omega(iw) * grid.time_centre))
                .collect();
            // the column goes through f32 storage in the engine
            let column: Vec<Complex64> =
                column.iter().map(|c| Complex64::new(c.re as f32 as f64, c.im as f32 as f64)).collect();
            let mut line = vec![Complex64::default(); grid.nz_fft];
            stolt::remap_column(&column, freq, k2[k], &grid, None, &mut line);
            for (level, img) in kimg.iter_mut().enumerate() {
                img[k] = line
                    .iter()
                    .enumerate()
                    .map(|(m, x)| x * Complex64::from_polar(1.0, TAU * (m * level) as f64 / grid.nz_fft as f64))
                    .sum();
            }
        }
        let planes: Vec<Vec<f64>> = kimg
            .iter()
            .map(|img| dft2(img, rows, cols, 1.0).iter().map(|c| c.re * plan.image_scale()).collect())
            .collect();
        compare(&run(&plan, &request, &v, &s), &planes, &plan);
    }

    fn close(a: &[Complex32], b: &[Complex64], tol: f64) {
        let scale = b.iter().map(|x| x.norm()).fold(0.0, f64::max);
        for (x, y) in a.iter().zip(b) {
            let d = (Complex64::new(x.re as f64, x.im as f64) - y).norm();
            assert!(d <= tol * scale, "{x} vs {y}");
        }
    }

    fn small_plan(origin_ms: f64) -> (Plan, Volume) {
        let g = Geometry::regular(
            LineAxis::new(1, 1, 5),
            LineAxis::new(1, 1, 3),
            SampleAxis { origin: origin_ms, step: 4.0, len: 12, domain: Domain::Time },
        );
        let values = random(g.n_values(), 11);
        let v = Volume { data: values.iter().map(|&x| x as f32).collect(), geometry: g.clone() };
        let window = WindowParams {
            time_taper_ms: 0.0,
            edge_taper_traces: 0,
            time_pad_factor: 2.0,
            lateral_pad: LateralPad::Traces(1),
        };
        let params =
            ImagingParams { nz: Some(2), fmin: 20.0, fmax: 90.0, levels_per_block: Some(1), ..Default::default() };
        let velocity = VelocityModel::Constant(2000.0);
        let image = crate::image_geometry(&g, &params, &velocity).unwrap();
        let plan = Plan::new(&g, [10.0, 10.0], &window, &params, &velocity, &ImageRequest::whole(&image)).unwrap();
        (plan, v)
    }

    /// The whole forward chain (window, zero padding, real FFT, band, t0 delay, ω-major transpose, 2-D FFT)
    /// against a naive 3-D DFT of the zero-padded input.
    #[test]
    fn ingest_matches_a_naive_3d_dft() {
        for origin_ms in [0.0, 40.0] {
            let (plan, v) = small_plan(origin_ms);
            assert_eq!(plan.padded, [6, 4, 24]);
            let mut ctx = RunContext::new(&Silent, Default::default());
            let mut store = HostStore::new(&plan, crate::store::Place::Whole, Path::new("")).unwrap();
            ingest(&v, &plan, &mut store, &mut ctx).unwrap();
            let mut s = store.band(plan.frequencies.clone(), &plan, &mut ctx).unwrap();
            forward_planes(&mut s, &Fft2::new([plan.padded[0], plan.padded[1]]), &mut ctx);
            let [pi, px, pt] = plan.padded;
            for iw in 0..plan.n_omega() {
                let bin = plan.band.first + iw;
                let omega = plan.omega(iw);
                let mut plane = vec![Complex64::default(); pi * px];
                for il in 0..5 {
                    for xl in 0..3 {
                        let tr = v.trace(il, xl);
                        let x: Complex64 = tr
                            .iter()
                            .enumerate()
                            .map(|(j, &a)| a as f64 * Complex64::from_polar(1.0, -TAU * (j * bin) as f64 / pt as f64))
                            .sum();
                        plane[il * px + xl] = x * Complex64::from_polar(1.0, -omega * origin_ms / 1000.0);
                    }
                }
                close(&s.data[iw * s.nk..(iw + 1) * s.nk], &dft2(&plane, pi, px, -1.0), 1e-5);
            }
            assert!(ctx.stats.seconds("read").is_some() && ctx.stats.seconds("spatial-fft").is_some());
        }
    }
}
