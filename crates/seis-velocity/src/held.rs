//! Whether the velocity held below a model's deepest pick changes the image enough to say so.
//!
//! Below the depth down to which a model is given, its deepest velocity holds. Nearly every table ends a
//! little above the bottom of the record, so holding it there is the ordinary case and no cause for a
//! warning. What holding risks is that the true velocity goes on changing with depth: if it kept the
//! model's own trend (its mean gradient `g` from the surface to the deepest pick, which for compacting
//! sediments overstates the gradient at depth, so the estimate errs on the side of warning), a reflector
//! `h` metres below the deepest pick would lie deeper by about `g h² / (2 v)`, `v` the held velocity. The
//! warning is given when that shift at the bottom of the image exceeds one depth step of the image: the
//! image then looks different from one made with the continued trend. A model that does not change with
//! depth (one pick, or equal velocities) has no trend, and holding its velocity is what it says.

/// How far a reflector at the bottom of the image may move if the velocity below the model kept its trend.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HeldVelocity {
    /// The depth (m) down to which the model is given.
    pub given: f64,
    /// The deepest depth (m) imaged.
    pub deepest: f64,
    /// The velocity (m/s) held below `given`.
    pub held: f64,
    /// The model's mean vertical gradient (m/s per m) from the surface to `given`.
    pub gradient: f64,
    /// The depth shift (m) at `deepest` if the velocity kept that gradient below `given`.
    pub shift: f64,
}

impl HeldVelocity {
    /// The effect of holding `velocity_at(given)` from `given` down to `deepest`, for a model whose
    /// representative velocity at depth z is `velocity_at(z)`. `None` when the image does not reach below
    /// `given`.
    pub fn new(given: f64, deepest: f64, velocity_at: impl Fn(f64) -> f64) -> Option<HeldVelocity> {
        let below = deepest - given;
        if !(below > 1e-6 && given > 0.0) {
            return None;
        }
        let held = velocity_at(given);
        let gradient = (held - velocity_at(0.0)) / given;
        let shift = gradient.abs() * below * below / (2.0 * held);
        Some(HeldVelocity { given, deepest, held, gradient, shift })
    }

    /// Whether the shift is larger than a depth step `dz` (m) of the image.
    pub fn matters(&self, dz: f64) -> bool {
        self.shift > dz
    }

    /// The warning, for a model that holds its velocity where it [`matters`](Self::matters).
    pub fn note(&self) -> String {
        let direction = if self.gradient > 0.0 { "deeper" } else { "shallower" };
        format!(
            "the velocity model is given down to {:.1} m and the image reaches {:.1} m: below {:.1} m its deepest \
             velocity, {:.0} m/s, is held constant; had the velocity gone on changing by {:.2} m/s per m as it does \
             above, reflectors at {:.0} m would image about {:.0} m {direction}",
            self.given,
            self.deepest,
            self.given,
            self.held,
            self.gradient.abs(),
            self.deepest,
            self.shift
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A gradient model: 1600 m/s at the surface, 1 m/s more per metre, given down to 500 m.
    fn gradient(z: f64) -> f64 {
        1600.0 + z.min(500.0)
    }

    #[test]
    fn the_shift_is_the_depth_error_of_a_continued_linear_trend() {
        // With v = v0 + g (z - z0) below z0, a reflector at vertical time τ below z0 lies at
        // z0 + v0 (exp(g τ / 2) - 1) / g; holding v0 puts it at z0 + v0 τ / 2.
        let h = HeldVelocity::new(500.0, 700.0, gradient).unwrap();
        assert_eq!((h.held, h.gradient), (2100.0, 1.0));
        let tau: f64 = 2.0 * 200.0 / 2100.0;
        let exact = 2100.0 * ((tau / 2.0).exp() - 1.0) - 200.0;
        assert!((h.shift - exact).abs() < 0.1 * exact, "{} against {exact}", h.shift);
    }

    #[test]
    fn a_little_below_the_model_does_not_matter_far_below_does() {
        let near = HeldVelocity::new(500.0, 540.0, gradient).unwrap();
        assert!(!near.matters(4.0), "{near:?}");
        let far = HeldVelocity::new(500.0, 900.0, gradient).unwrap();
        assert!(far.matters(4.0), "{far:?}");
        assert!(far.note().contains("given down to 500.0 m and the image reaches 900.0 m"), "{}", far.note());
        assert!(far.note().contains("2100 m/s"), "{}", far.note());
        // A model without a trend holds what it says, however deep the image.
        let constant = HeldVelocity::new(500.0, 5000.0, |_| 2000.0).unwrap();
        assert!(!constant.matters(4.0), "{constant:?}");
        assert!(HeldVelocity::new(500.0, 480.0, gradient).is_none());
    }
}
