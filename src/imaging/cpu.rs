//! The CPU engine: the plan's steps with rustfft / realfft, in parallel with rayon, in a thread pool of its
//! own (so a benchmark or a caller can choose the number of threads).

use std::time::Instant;

use super::image::ImageAssembly;
use super::spectrum::{ingest, Fft2, Spectrum};
use super::{phase_shift, split_step, stolt, Engine, Method, Migration, ProductSink};
use crate::context::RunContext;
use crate::error::{Error, Result};

pub struct CpuEngine {
    pool: rayon::ThreadPool,
}

impl CpuEngine {
    /// An engine running on `threads` threads (all cores when `None`).
    pub fn new(threads: Option<usize>) -> Result<Self> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads.unwrap_or(0))
            .thread_name(|i| format!("seisimage-cpu-{i}"))
            .build()
            .map_err(|e| Error::Backend(format!("cannot start the CPU thread pool: {e}")))?;
        Ok(CpuEngine { pool })
    }

    pub fn threads(&self) -> usize {
        self.pool.current_num_threads()
    }
}

impl Engine for CpuEngine {
    fn name(&self) -> &str {
        "cpu"
    }

    fn migrate_into(&mut self, m: &Migration, ctx: &mut RunContext, sink: &dyn ProductSink) -> Result<()> {
        self.migrate_scan(std::slice::from_ref(m), ctx, &[sink])
    }

    fn migrate_scan(&mut self, scan: &[Migration], ctx: &mut RunContext, sinks: &[&dyn ProductSink]) -> Result<()> {
        super::scan::check(scan, sinks.len())?;
        for m in scan {
            m.plan.check(m.input.geometry(), m.request)?;
        }
        let first = &scan[0];
        self.pool.install(|| {
            ctx.stats.frequency_bands = 1;
            let mut spectrum = ingest(first.input, first.plan, ctx)?;
            let fft2 = Fft2::new([first.plan.padded[0], first.plan.padded[1]]);
            for (i, (m, sink)) in scan.iter().zip(sinks).enumerate() {
                // Phase shift and split-step change the spectrum: each migration but the last takes a copy.
                let mut copy;
                let own = if i + 1 == scan.len() || m.plan.method == Method::Stolt {
                    &mut spectrum
                } else {
                    copy = ctx.stats.time("scan-copy", (spectrum.data.len() * 8) as u64, || Spectrum {
                        data: spectrum.data.clone(),
                        nk: spectrum.nk,
                    });
                    &mut copy
                };
                migrate_spectrum(own, m, &fft2, ctx, *sink)?;
            }
            Ok(())
        })
    }
}

/// One migration of a spectrum: the method, then the cut of its boxes into `sink`.
fn migrate_spectrum(
    spectrum: &mut Spectrum,
    m: &Migration,
    fft2: &Fft2,
    ctx: &mut RunContext,
    sink: &dyn ProductSink,
) -> Result<()> {
    let Migration { plan, velocity, request, .. } = *m;
    let mut asm = ImageAssembly::new(request, plan, sink);
    let t = Instant::now();
    match plan.method {
        Method::PhaseShift => phase_shift::migrate(spectrum, plan, fft2, &mut asm, ctx)?,
        Method::Stolt => stolt::migrate(spectrum, plan, fft2, &mut asm, ctx)?,
        Method::SplitStep => split_step::migrate(spectrum, plan, velocity, fft2, &mut asm, ctx)?,
    }
    ctx.stats.add("migrate", t.elapsed(), (request.n_values() * 4) as u64);
    asm.finish()
}

/// Each method's kernels and the image assembly, on a small random spectrum, against a naive evaluation of
/// the same formulas with plain DFTs and step-by-step factors.
#[cfg(test)]
mod tests {
    use num_complex::{Complex32, Complex64};
    use std::f64::consts::TAU;

    use super::*;
    use crate::imaging::formulas::phase_factor;
    use crate::imaging::naive::{dft2, random};
    use crate::imaging::{image_geometry, ImagingParams};
    use crate::imaging::{ImageRequest, Plan};
    use crate::progress::Silent;
    use crate::velocity::VelocityModel;
    use crate::velocity::{Interpolation, VelocityTable};
    use crate::volume::{Domain, Geometry, LineAxis, SampleAxis};
    use crate::window::{LateralPad, WindowParams};

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
        let mut spectrum = Spectrum { data, nk: plan.nk() };
        let fft2 = Fft2::new([plan.padded[0], plan.padded[1]]);
        let collected = crate::imaging::Collected::new(request);
        let mut asm = ImageAssembly::new(request, plan, &collected);
        let ctx = RunContext::new(&Silent, Default::default());
        match plan.method {
            Method::PhaseShift => phase_shift::migrate(&mut spectrum, plan, &fft2, &mut asm, &ctx).unwrap(),
            Method::Stolt => stolt::migrate(&spectrum, plan, &fft2, &mut asm, &ctx).unwrap(),
            Method::SplitStep => split_step::migrate(&mut spectrum, plan, velocity, &fft2, &mut asm, &ctx).unwrap(),
        }
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

    #[test]
    fn stolt_matches_a_naive_kz_sum() {
        let v = VelocityModel::Constant(2000.0);
        let (plan, request, s) = setup(Method::Stolt, &v);
        let grid = plan.stolt.unwrap();
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
}
