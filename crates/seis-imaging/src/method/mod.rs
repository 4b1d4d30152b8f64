//! The migration methods, each in a module of its own that holds all the method decides: which velocity
//! models it can migrate through and what it adds to a plan (its planning rules), the memory it holds, how
//! `validate` describes it, and its CPU kernel.
//!
//! A plan carries a [`MethodPlan`]: the method and what was planned for it. The rest of the crate, the GPU
//! engine and the application ask it through [`MethodRules`] instead of branching on the method, so a new
//! method is a module here, a variant of [`Method`] and of [`MethodPlan`], and its GPU kernel.

use seis_core::context::RunContext;
use seis_core::error::Result;
use seis_core::volume::Geometry;
use seis_velocity::VelocityModel;

use crate::image::ImageAssembly;
use crate::spectrum::{Fft2, Spectrum};
use crate::{ImagingParams, Method, Plan};

pub mod phase_shift;
pub mod split_step;
pub mod stolt;

pub use crate::planned::{MethodPlan, StoltGrid};

/// A method's rules, asked of a planned migration by whoever follows the plan.
pub trait MethodRules: Sync {
    /// Why the method needs every frequency of a wavenumber at once, if it does: it then cannot run in
    /// frequency bands, and a share of the frequencies takes all of them or none.
    fn whole_spectrum(&self) -> Option<&'static str> {
        None
    }

    /// Whether the kernel changes the spectrum as it migrates it: then each member of a velocity scan but
    /// the last starts from a copy.
    fn changes_spectrum(&self) -> bool {
        true
    }

    /// Whether the method images a block of levels through k-domain images (one padded plane each); else
    /// it images in space, level by level, in one block.
    fn k_images(&self) -> bool {
        true
    }

    /// The relative cost of migrating frequency `f` (Hz) of a band up to `f_max` (Hz): the frequencies are
    /// shared among ranks and shards at equal cost. Alike by default.
    fn frequency_cost(&self, _f: f64, _f_max: f64) -> f64 {
        1.0
    }

    /// Bytes the kernel holds per depth step for a velocity that varies laterally.
    fn lateral_bytes(&self, _plan: &Plan) -> u64 {
        0
    }

    /// What `validate` says of the method's own part of the plan.
    fn describe(&self, _plan: &Plan) -> Option<String> {
        None
    }

    /// The planes a GPU run of the method holds besides the spectrum: their name and the most it can use
    /// (`launch_levels`: the largest number of levels a GPU launch images at once).
    fn device_planes(&self, plan: &Plan, launch_levels: usize) -> (&'static str, usize);

    /// The CPU kernel: migrate one band of the spectrum and add its image into `asm`.
    fn migrate(
        &self,
        spectrum: &mut Spectrum,
        plan: &Plan,
        velocity: &VelocityModel,
        fft2: &Fft2,
        asm: &mut ImageAssembly<'_>,
        ctx: &RunContext,
    ) -> Result<()>;
}

impl Method {
    /// Why this method cannot migrate through `velocity`, if it cannot.
    pub(crate) fn velocity_refusal(self, velocity: &VelocityModel) -> Option<String> {
        match self {
            Method::PhaseShift => phase_shift::velocity_refusal(velocity),
            Method::Stolt => stolt::velocity_refusal(velocity),
            Method::SplitStep => None,
        }
    }
}

impl MethodPlan {
    /// What `params.method` plans for a time FFT of `nt_pad` samples of `dt` seconds, imaging down to
    /// level `last`; the velocity was checked with [`Method::velocity_refusal`].
    pub(crate) fn new(
        params: &ImagingParams,
        velocity: &VelocityModel,
        input: &Geometry,
        dt: f64,
        nt_pad: usize,
        last: usize,
    ) -> MethodPlan {
        match params.method {
            Method::PhaseShift => MethodPlan::PhaseShift,
            Method::Stolt => MethodPlan::Stolt(stolt::grid(params, velocity, input, dt, nt_pad, last)),
            Method::SplitStep => MethodPlan::SplitStep,
        }
    }

    /// The method's rules.
    pub fn rules(&self) -> &dyn MethodRules {
        match self {
            MethodPlan::PhaseShift => &phase_shift::PhaseShift,
            MethodPlan::Stolt(grid) => grid,
            MethodPlan::SplitStep => &split_step::SplitStep,
        }
    }
}
