//! What a GPU run of a plan holds on the device, estimated from the plan alone (for `validate`, the checks
//! before a run and the benchmark): the run's own plan ([`crate::memory::DeviceItems`]) for the shape it
//! will have.

use seis_core::error::Result;
use seis_imaging::Plan;

use crate::memory::DeviceItems;

/// Device memory a GPU run of `plan` by `members` migrations of a velocity scan (1: one) holds with its
/// whole share at once, as the engine plans it (cuFFT's work areas come on top).
pub fn device_memory_estimate(plan: &Plan, members: usize) -> Result<u64> {
    let members = members.max(1);
    let launch_levels = super::largest_launch(plan);
    let items = DeviceItems::new(plan, plan.request_bytes() * members as u64, members, 1, super::RING, launch_levels)?;
    Ok(items.plan(plan.frequencies.clone(), u64::MAX, "")?.budget.total())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The device memory the application reports before a run (`estimate`, from the plan alone) is what
    /// the engine plans for that run (from the run's shape: its boxes and its phase-shift launches), for
    /// every method, for one migration and for a velocity scan.
    #[test]
    fn the_estimate_is_what_a_run_plans() {
        use crate::run::{RunSettings, RunShape};
        use seis_core::volume::{Domain, Geometry, LineAxis, SampleAxis};
        use seis_imaging::window::WindowParams;
        use seis_imaging::Plan;
        use seis_imaging::{image_geometry, ImageRequest, ImagingParams, Method};
        use seis_velocity::VelocityModel;
        use seis_velocity::{Interpolation, VelocityTable};

        let g = Geometry::regular(
            LineAxis::new(1, 1, 12),
            LineAxis::new(1, 1, 10),
            SampleAxis { origin: 0.0, step: 4.0, len: 100, domain: Domain::Time },
        );
        let layered = VelocityTable::new(vec![0.0, 200.0], vec![1800.0, 2600.0], Interpolation::Linear).unwrap();
        let cases = [
            (Method::PhaseShift, VelocityModel::Table(layered.clone())),
            (Method::Stolt, VelocityModel::Constant(2000.0)),
            (Method::SplitStep, VelocityModel::Table(layered)),
        ];
        for (method, v) in cases {
            let params =
                ImagingParams { method, nz: Some(40), fmax: 50.0, levels_per_block: Some(7), ..Default::default() };
            let image = image_geometry(&g, &params, &v).unwrap();
            let request = ImageRequest::whole(&image);
            let plan = Plan::new(&g, [10.0, 10.0], &WindowParams::default(), &params, &v, &request).unwrap();
            for members in [1, 3] {
                let shape = RunShape::of(&plan, &request, members, RunSettings::default());
                let planned = shape.device_items(&plan).unwrap().plan(plan.frequencies.clone(), u64::MAX, "").unwrap();
                assert_eq!(
                    device_memory_estimate(&plan, members).unwrap(),
                    planned.budget.total(),
                    "{method:?}, {members} member(s)"
                );
            }
            // A scan adds the other members' boxes and a copy of the spectrum.
            let spectrum = (plan.n_omega() * plan.nk() * 8) as u64;
            let extra = device_memory_estimate(&plan, 3).unwrap() - device_memory_estimate(&plan, 1).unwrap();
            assert_eq!(extra, spectrum + 2 * plan.request_bytes(), "{method:?}");
        }
    }
}
