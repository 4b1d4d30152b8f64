//! The image depth axis a job asks for, and how deep the input record can image: both follow from the
//! velocity when the job sets no depth, which is why their messages share one wording.

use crate::ImagingParams;
use seis_core::error::{Error, Result};
use seis_core::volume::{Domain, Geometry, SampleAxis};
use seis_velocity::VelocityModel;

/// Largest number of depth levels an image may have (a guard against a mistyped `dz`).
pub const MAX_LEVELS: usize = 1_000_000;

/// The image grid for `input`: the same lateral grid, and the depth axis the parameters ask for.
pub fn image_geometry(input: &Geometry, params: &ImagingParams, velocity: &VelocityModel) -> Result<Geometry> {
    if input.samples.domain != Domain::Time {
        return Err(Error::Request(format!(
            "the input is already in depth ({} m to {} m); migration needs an input in two-way time",
            input.samples.origin,
            input.samples.last()
        )));
    }
    if !(input.samples.step.is_finite() && input.samples.step > 0.0) || input.samples.len < 2 {
        return Err(Error::Request(format!(
            "the input's time axis ({} samples of {} ms) cannot be migrated",
            input.samples.len, input.samples.step
        )));
    }
    let dz = params.dz;
    if !(dz.is_finite() && dz > 0.0) {
        return Err(Error::at_key("imaging.dz", format!("dz must be a positive depth step in metres, not {dz}")));
    }
    let nz = match (params.zmax, params.nz) {
        (Some(_), Some(_)) => return Err(Error::at_key("imaging.zmax", "give zmax or nz, not both")),
        (Some(zmax), None) => {
            if !(zmax.is_finite() && zmax >= 0.0) {
                return Err(Error::at_key("imaging.zmax", format!("zmax must be a depth ≥ 0 in metres, not {zmax}")));
            }
            (zmax / dz + 1e-9).floor() as usize + 1
        }
        (None, Some(nz)) => nz,
        (None, None) => match record_reach(input, dz, MAX_LEVELS, velocity) {
            Some(reach) => (reach / dz + 1e-9).floor() as usize + 1,
            // The velocity, not a depth setting, makes the image this deep: say so.
            None => {
                let (lo, hi) = velocity.range();
                let message = format!(
                    "{DEPTH_FROM_VELOCITY} ({} ms), and through {lo:.0}..{hi:.0} m/s with steps of {dz} m that takes \
                     more than {MAX_LEVELS} levels: {CHECK_THE_VELOCITY}",
                    input.samples.last()
                );
                return Err(Error::at_key("velocity", message).or_key("imaging.dz"));
            }
        },
    };
    if nz == 0 || nz > MAX_LEVELS {
        let levels = format!("the image would have {nz} depth levels (1..={MAX_LEVELS} allowed)");
        return Err(Error::at_key("imaging.nz", levels).or_key("imaging.zmax").or_key("imaging.dz"));
    }
    let mut g = input.clone();
    g.samples = SampleAxis { origin: 0.0, step: dz, len: nz, domain: Domain::Depth };
    Ok(g)
}

/// How the image's depth is set when the job sets none: the one wording of every message the velocity may
/// be the cause of (a model in km/s read as m/s), so that none of them blames a depth setting.
pub const DEPTH_FROM_VELOCITY: &str = "without imaging.zmax or imaging.nz the image ends where the vertical two-way \
                                       time through the velocity reaches the last sample";
/// What to do about it: the velocity's unit is a setting of its own (see `seis_velocity::sanity`).
pub const CHECK_THE_VELOCITY: &str = "check the velocity and its unit (velocity.unit), or set imaging.zmax";

/// The deepest depth the record of `input` can image, if it lies within `steps` depth steps of `dz`: where
/// the vertical two-way time from the surface reaches the last sample. Each step is crossed at the fastest
/// velocity found at its top or bottom, on any trace of a 3-D model: the time is then never longer than
/// along any vertical path, so the depth is never shallower than what some trace can reach.
pub(super) fn record_reach(input: &Geometry, dz: f64, steps: usize, velocity: &VelocityModel) -> Option<f64> {
    let t_end = input.samples.last() / 1000.0;
    let fastest = |z: f64| match velocity {
        VelocityModel::Grid(g) => g.slowness_summary(z).least,
        _ => 1.0 / velocity.reference_velocity(z),
    };
    let (mut t, mut top) = (0.0, fastest(0.0));
    for j in 0..steps {
        let bottom = fastest((j + 1) as f64 * dz);
        let slowness = top.min(bottom);
        let step = 2.0 * dz * slowness;
        if t + step >= t_end {
            return Some(j as f64 * dz + (t_end - t) / (2.0 * slowness));
        }
        (t, top) = (t + step, bottom);
    }
    None
}
