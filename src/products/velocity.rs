//! The velocity model as a product (`output.velocity`): the interval velocity in m/s that a migration
//! used, sampled on the image's grid (its lines, coordinates and depth levels) as `velocity_depth.*`, and
//! against two-way time on the grid of the products in time as `velocity_time.*`, written by the same
//! writers as the image's products.
//!
//! The engines never compute these: the values come from the model itself, once the migration is done.
//! A velocity scan writes the model of each member (its suffix after the stem, its member in the
//! manifest), so that every member's image can be laid over the velocity that made it.

use std::borrow::Cow;
use std::sync::Arc;

use rayon::prelude::*;

use super::{write_product, ProductKind, ProductSpec, ProductTarget, WrittenProduct};
use crate::error::{Error, Result};
use crate::job::{OutputConfig, VolumeFormat};
use crate::time_domain::TimeForm;
use crate::velocity::{ScanStep, VelocityModel};
use crate::volume::{Domain, Geometry, SampleAxis};

/// Stem of the velocity in depth (`velocity_depth.sgy`, ...).
pub const VELOCITY_DEPTH: &str = "velocity_depth";
/// Stem of the velocity against two-way time.
pub const VELOCITY_TIME: &str = "velocity_time";
/// A line of the text header of a SEG-Y velocity product: its samples are velocities, not amplitudes.
pub(super) const VELOCITY_NOTE: &str = "SAMPLES: INTERVAL VELOCITY (M/S) THE MIGRATION USED";

/// The velocity products `output` asks for, for the migrations `members` (each with its member of the
/// scan, `None` for a job that migrates once) on the image grid `image`: in depth, and in two-way time
/// every `step_ms` when the job writes products in time. Every member's form in time shares one time
/// axis, as its products in time do.
pub fn plan_velocity_products(
    output: &OutputConfig,
    image: &Geometry,
    members: &[(Option<ScanStep>, &VelocityModel)],
    step_ms: f64,
) -> Result<Vec<ProductSpec>> {
    if output.velocity.is_empty() {
        return Ok(Vec::new());
    }
    if output.velocity.contains(&VolumeFormat::Geotiff) {
        return Err(Error::at_key(
            "output.velocity",
            "\"geotiff\" holds maps, and the velocity is a volume: choose among \"segy\", \"hdf5\" and \"npy\"",
        ));
    }
    let region = image.full_box();
    let spec = |stem: &str, step: Option<ScanStep>, time: Option<Arc<TimeForm>>| ProductSpec {
        kind: ProductKind::Velocity,
        attribute: None,
        stem: format!("{stem}{}", step.map(|s| s.suffix()).unwrap_or_default()),
        region: region.clone(),
        formats: output.velocity.clone(),
        png: false,
        time,
        scan: step,
        reach: None,
    };
    let mut specs: Vec<ProductSpec> = members.iter().map(|(step, _)| spec(VELOCITY_DEPTH, *step, None)).collect();
    if output.writes(Domain::Time) {
        let forms: Vec<TimeForm> = members.iter().map(|(_, v)| TimeForm::of_box(v, image, &region, step_ms)).collect();
        let first = forms.iter().map(|f| f.axis.origin).fold(f64::INFINITY, f64::min);
        let last = forms.iter().map(|f| f.axis.last()).fold(f64::NEG_INFINITY, f64::max);
        let len = ((last - first) / step_ms).round() as usize + 1;
        let axis = SampleAxis { origin: first, len, ..forms[0].axis };
        for ((step, _), form) in members.iter().zip(forms) {
            specs.push(spec(VELOCITY_TIME, *step, Some(Arc::new(form.on_axis(axis)))));
        }
    }
    Ok(specs)
}

/// The interval velocity (m/s) of `model` at every depth level of every trace of `image`, `[il][xl][z]`:
/// the velocity of the medium at the level's depth, as the model gives it to the migration.
pub fn velocity_on_grid(model: &VelocityModel, image: &Geometry) -> Result<Vec<f32>> {
    let nz = image.samples.len;
    let mut values: Vec<f32> = crate::alloc::try_host_vec(image.n_values(), "the velocity product")?;
    values.par_chunks_mut(nz.max(1)).enumerate().for_each(|(trace, column)| {
        for (k, v) in column.iter_mut().enumerate() {
            *v = model.trace_velocity(trace, image.samples.value(k)) as f32;
        }
    });
    Ok(values)
}

/// A velocity product's values as written, from its values in depth: unchanged in depth, read at the
/// times of its axis in time (the deepest velocity held below a trace's deepest level).
pub(super) fn values_as_written<'a>(spec: &ProductSpec, in_depth: &'a [f32]) -> Cow<'a, [f32]> {
    match &spec.time {
        Some(t) => Cow::Owned(t.convert_holding(in_depth)),
        None => Cow::Borrowed(in_depth),
    }
}

/// Write the velocity products `specs` into `target`, each from the model of its migration
/// (`model_of(member)`), under temporary names as the other products are.
pub fn write_velocity_products<'m>(
    target: &ProductTarget,
    specs: &[ProductSpec],
    model_of: impl Fn(Option<ScanStep>) -> &'m VelocityModel,
) -> Result<Vec<WrittenProduct>> {
    let mut written = Vec::with_capacity(specs.len());
    for spec in specs {
        target.cancel.check()?;
        let values = velocity_on_grid(model_of(spec.scan), target.image)?;
        written.push(write_product(target, spec, &values)?);
    }
    Ok(written)
}
