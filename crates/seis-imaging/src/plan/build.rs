//! Deciding a plan from a job: each choice (dip limit, band, Stolt grid, blocks) in a function of its own,
//! taken in the order that decides which mistake of a job is reported first.

use std::ops::Range;

use seis_core::number::number;

use super::depth::{image_geometry, record_reach};
use super::{Band, Level, Plan};
use crate::bands::Share;
use crate::method::MethodPlan;
use crate::request::ImageRequest;
use crate::window::{NonFinite, WindowParams, WindowPlan};
use crate::{ImagingParams, Method};
use seis_core::error::{Error, Result};
use seis_core::volume::Geometry;
use seis_velocity::VelocityModel;

/// Input read per chunk, before windowing and the time FFT.
pub const INGEST_CHUNK_BYTES: usize = 32 << 20;
/// Aperture angle the automatic lateral pad assumes when no dip limit is given.
const DEFAULT_APERTURE_DEG: f64 = 60.0;

impl Plan {
    pub fn new(
        input: &Geometry,
        bin_size: [f64; 2],
        window: &WindowParams,
        params: &ImagingParams,
        velocity: &VelocityModel,
        request: &ImageRequest,
    ) -> Result<Plan> {
        let image = image_geometry(input, params, velocity)?;
        if !bin_size.iter().all(|b| b.is_finite() && *b > 0.0) {
            let message = format!("bin sizes must be positive distances in metres, not {bin_size:?}");
            return Err(Error::at_key("input.bin_size", message));
        }
        window.validate()?;
        request.check(&image)?;
        let mut warnings = Vec::new();
        let dz = params.dz;
        check_velocity(params.method, velocity, input)?;
        let dip_limit = dip_limit(params)?;

        let requested = request.levels();
        let last = *requested.last().expect("a checked request has a level");
        // The depths the reach and the reference velocities below ask of a 3-D model, found in one pass.
        let level_depths = (0..image.samples.len).map(|k| k as f64 * dz);
        velocity.summarise_depths(&level_depths.chain((0..last).map(|j| (j as f64 + 0.5) * dz)).collect::<Vec<_>>());
        let reach = record_reach(input, dz, image.samples.len - 1, velocity);
        let levels: Vec<Level> = requested
            .into_iter()
            .map(|index| Level { index, velocity: velocity.reference_velocity(index as f64 * dz) })
            .collect();
        let step_velocity: Vec<f64> = (0..last).map(|j| velocity.reference_velocity((j as f64 + 0.5) * dz)).collect();

        // Lateral pad: about half the aperture at the deepest computed level.
        let aperture = dip_limit.unwrap_or(DEFAULT_APERTURE_DEG.to_radians()).min(89f64.to_radians());
        let half_aperture = 0.5 * last as f64 * dz * aperture.tan();
        let auto_pad = [0, 1].map(|a| (half_aperture / bin_size[a]).ceil() as usize);
        let shape = input.shape();
        let padded = window.padded_shape(shape, auto_pad);

        let dt = input.samples.step / 1000.0;
        let (band, fmax) = frequency_band(params, input, dt, padded[2], &mut warnings)?;
        warn_of_aliasing(dz, fmax, velocity, bin_size, dip_limit, &mut warnings);
        let method = MethodPlan::new(params, velocity, input, dt, padded[2], last);
        let blocks = level_blocks(params, &method, band, levels.len())?;

        let trace_bytes = shape[1] * shape[2] * 4;
        let ingest_inlines = (INGEST_CHUNK_BYTES / trace_bytes.max(1)).clamp(1, shape[0]);

        Ok(Plan {
            method,
            input: input.clone(),
            dt,
            t0: input.samples.origin / 1000.0,
            bin: bin_size,
            padded,
            window: WindowPlan::new(shape, input.samples.step, window),
            band,
            frequencies: 0..band.len,
            share: Share::whole(),
            depth: image.samples,
            levels,
            step_velocity,
            blocks,
            dip_limit,
            lateral_velocity: velocity.varies_laterally(),
            ingest_inlines,
            nonfinite: NonFinite::Zero,
            reach,
            warnings,
            image,
            request_values: request.n_values(),
            velocity_values: velocity.n_values(),
        })
    }
}

/// The dip limit (radians) the job asks for, if any.
fn dip_limit(params: &ImagingParams) -> Result<Option<f64>> {
    match params.dip_limit_deg {
        None => Ok(None),
        Some(d) if d > 0.0 && d <= 90.0 => Ok(Some(d.to_radians())),
        Some(d) => {
            let message = format!("dip_limit_deg must be in (0, 90], not {d}");
            Err(Error::at_key("imaging.dip_limit_deg", message))
        }
    }
}

/// The frequency bins of a time FFT of `nt_pad` samples of `dt` seconds that lie in the job's band, and the
/// highest frequency (Hz) kept: fmax, clamped to the Nyquist frequency with a warning.
fn frequency_band(
    params: &ImagingParams,
    input: &Geometry,
    dt: f64,
    nt_pad: usize,
    warnings: &mut Vec<String>,
) -> Result<(Band, f64)> {
    let nyquist = 0.5 / dt;
    let df = 1.0 / (nt_pad as f64 * dt);
    if !(params.fmin >= 0.0 && params.fmax > params.fmin) {
        let message = format!("need 0 ≤ fmin < fmax, not fmin {} Hz, fmax {} Hz", params.fmin, params.fmax);
        return Err(Error::at_key("imaging.fmin", message).or_key("imaging.fmax"));
    }
    let fmax = if params.fmax > nyquist {
        warnings.push(format!(
            "imaging.fmax: fmax {} Hz is above the Nyquist frequency of the {} ms samples: clamped to {} Hz",
            number(params.fmax),
            number(input.samples.step),
            number(nyquist)
        ));
        nyquist
    } else {
        params.fmax
    };
    let first = (params.fmin / df - 1e-9).ceil() as usize;
    let last_bin = ((fmax / df + 1e-9).floor() as usize).min(nt_pad / 2);
    if first > last_bin {
        let message = format!(
            "no frequency sample lies between fmin {} Hz and fmax {} Hz (spacing {} Hz)",
            number(params.fmin),
            number(fmax),
            number(df)
        );
        return Err(Error::at_key("imaging.fmin", message).or_key("imaging.fmax"));
    }
    Ok((Band { first, len: last_bin - first + 1 }, fmax))
}

/// Warn where the depth step or the bins are too coarse for the highest frequency at the slowest velocity.
fn warn_of_aliasing(
    dz: f64,
    fmax: f64,
    velocity: &VelocityModel,
    bin_size: [f64; 2],
    dip_limit: Option<f64>,
    warnings: &mut Vec<String>,
) {
    let (vmin, _) = velocity.range();
    let unaliased = vmin / (4.0 * fmax);
    if dz > unaliased {
        warnings.push(format!(
            "imaging.dz: dz {} m is coarser than vmin / (4 fmax) = {unaliased:.1} m: steep high-frequency events \
             alias in depth",
            number(dz)
        ));
    }
    // The largest lateral wavenumber kept is 2 ω sin θ / v: unaliased while a bin is below v / (4 f sin θ).
    let steepest = dip_limit.unwrap_or(std::f64::consts::FRAC_PI_2);
    let unaliased_bin = unaliased / steepest.sin();
    if bin_size.iter().any(|&b| b > unaliased_bin) {
        warnings.push(format!(
            "bins {:.2} × {:.2} m are coarser than vmin / (4 fmax sin {:.0}°) = {unaliased_bin:.1} m: the steepest dips \
             alias laterally",
            bin_size[0],
            bin_size[1],
            steepest.to_degrees()
        ));
    }
}

/// The ranges of `n_levels` imaged levels imaged together.
fn level_blocks(params: &ImagingParams, method: &MethodPlan, band: Band, n_levels: usize) -> Result<Vec<Range<usize>>> {
    let per_block = match params.levels_per_block {
        Some(0) => return Err(Error::at_key("imaging.levels_per_block", "levels_per_block must be at least 1")),
        // A method that images in space, level by level, holds no k-domain images.
        _ if !method.rules().k_images() => n_levels,
        Some(n) => n,
        // Half the spectrum's size: a block of k-domain images of nk values each.
        None => (band.len / 2).max(1),
    };
    Ok((0..n_levels).step_by(per_block).map(|s| s..(s + per_block).min(n_levels)).collect())
}

/// Refuse a method the velocity model cannot serve.
fn check_velocity(method: Method, velocity: &VelocityModel, input: &Geometry) -> Result<()> {
    velocity.check_grid(input)?;
    let Some(message) = method.velocity_refusal(velocity) else {
        return Ok(());
    };
    // The method is blamed where the job sets it; else the kind of velocity the job gives.
    Err(Error::at_key("imaging.method", message).or_key("velocity.kind"))
}
