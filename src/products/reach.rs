//! How far the record reaches into a product: the depth below which the product is zero and, for a
//! product in two-way time, the time after which it is, which the product's note and warning give instead
//! of the depth.

use super::ProductSpec;
use crate::time_domain::TimeForm;
use crate::velocity::VelocityModel;
use crate::volume::Geometry;

/// The deepest depth (m) the record reaches through the velocity of a migration, when the image goes
/// deeper ([`crate::imaging::Plan::reach`]): a product is zero below it (see [`super::deliverable`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Reach {
    pub depth: f64,
    /// For a product in two-way time, the time (ms) of `depth` at the product's trace where it is latest:
    /// every trace of the product is zero after it.
    pub time: Option<f64>,
}

impl Reach {
    /// The reach `depth` (m) of the migration of `spec`, through its `velocity`.
    pub fn of(spec: &ProductSpec, image: &Geometry, velocity: &VelocityModel, depth: f64) -> Reach {
        let time = spec.time.as_ref().map(|_| TimeForm::latest_time_at_depth(velocity, image, &spec.region, depth));
        Reach { depth, time }
    }

    /// The reach in the product's own vertical unit, `rounded`: `596 m, the deepest depth the record
    /// reaches`, or for a product in time `596 ms, the latest two-way time the record reaches`.
    pub fn words(&self, rounded: impl Fn(f64) -> String) -> String {
        match self.time {
            Some(t) => format!("{} ms, the latest two-way time the record reaches", rounded(t)),
            None => format!("{} m, the deepest depth the record reaches", rounded(self.depth)),
        }
    }
}
