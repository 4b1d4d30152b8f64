//! Post-stack depth migration: the plan, the methods and the CPU engine.
//!
//! The work splits into steps an engine runs in order, each written so a GPU engine can mirror it:
//! 1. [`Plan`]: every size and number decided once from the input geometry, the windows, the parameters,
//!    the velocity and the request (no data).
//! 2. The host window ([`crate::window`]), applied per chunk of inlines as they are read.
//! 3. The spectrum layout ([`spectrum`]): a real FFT along each (contiguous) trace, only the bins of the
//!    frequency band kept, transposed to ω-major `[ω][il_pad][xl_pad]`, then a 2-D FFT per ω.
//! 4. The method kernels on that layout: [`phase_shift`], [`stolt`], [`split_step`], built from the
//!    per-element functions of [`formulas`].
//! 5. Image assembly ([`image`]): the imaging condition (sum over ω, inverse 2-D FFT, real part) and the cut
//!    of the requested boxes.
//!
//! A share of the frequencies that does not fit at once goes through steps 3 to 5 in frequency bands, the
//! spectrum waiting in a [`store`] between the time transform and its band ([`bands`]).
//!
//! Only what the request needs is computed: the depth loop stops at the deepest requested level, and only
//! requested levels are imaged.

use seis_core::choice::Choice;

pub mod attributes;
pub mod bands;
pub mod compute;
pub mod cpu;
pub mod delivery;
pub mod formulas;
pub mod image;
pub mod method;
#[cfg(test)]
pub(crate) mod naive;
pub mod parts;
pub mod plan;
mod planned;
pub mod request;
pub mod scan;
pub mod spectrum;
pub mod store;
pub mod time_domain;
pub mod window;

use serde::{Deserialize, Serialize};

use seis_core::context::RunContext;
use seis_core::error::Result;
use seis_core::volume::VolumeReader;
use seis_velocity::VelocityModel;

pub use cpu::CpuEngine;
pub use delivery::{Collected, Completion, ProductSink};
pub use method::{phase_shift, split_step, stolt, MethodPlan, MethodRules};
pub use plan::{image_geometry, Plan};
pub use request::ImageRequest;

/// The migration method.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// Gazdag phase shift: exact for v(z), all dips.
    #[default]
    PhaseShift,
    /// Stolt f-k: constant velocity only, one remap of the whole spectrum.
    Stolt,
    /// Split-step Fourier: v(x, y, z) through a thin-lens correction around a reference velocity per depth.
    SplitStep,
}

impl Choice for Method {
    const CHOICES: &'static [(Self, &'static str, &'static str)] = &[
        (Method::PhaseShift, "phase-shift", "Gazdag phase shift: exact for v(z), all dips."),
        (Method::Stolt, "stolt", "Stolt f-k: constant velocity only, one remap of the whole spectrum."),
        (
            Method::SplitStep,
            "split-step",
            "Split-step Fourier: v(x, y, z) through a thin-lens correction around a reference velocity per depth.",
        ),
    ];
}

impl Method {
    pub fn name(self) -> &'static str {
        match self {
            Method::PhaseShift => "phase-shift",
            Method::Stolt => "stolt",
            Method::SplitStep => "split-step",
        }
    }
}

/// How Stolt reads the spectrum between frequency samples.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StoltInterpolation {
    /// An 8-point Hann-windowed sinc (accurate with the default 2× time padding).
    #[default]
    Sinc,
    /// Linear between the two nearest samples (cheaper; needs about 4× time padding to be as accurate).
    Linear,
}

impl Choice for StoltInterpolation {
    const CHOICES: &'static [(Self, &'static str, &'static str)] = &[
        (
            StoltInterpolation::Sinc,
            "sinc",
            "An 8-point Hann-windowed sinc (accurate with the default 2× time padding).",
        ),
        (
            StoltInterpolation::Linear,
            "linear",
            "Linear between the two nearest samples (cheaper; needs about 4× time padding to be as accurate).",
        ),
    ];
}

/// Imaging parameters: the `[imaging]` table of a job file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ImagingParams {
    /// Default `phase-shift`.
    pub method: Method,
    /// Depth step (m). Default 10 m.
    pub dz: f64,
    /// Deepest depth of the image (m). Give `zmax` or `nz`, not both; with neither, the image reaches the
    /// depth whose vertical two-way time (through the reference velocity) is the last input sample.
    pub zmax: Option<f64>,
    /// Number of depth levels of the image (the first at 0 m).
    pub nz: Option<usize>,
    /// Lowest frequency migrated (Hz). Default 0.
    pub fmin: f64,
    /// Highest frequency migrated (Hz), clamped to the Nyquist frequency. Default 60 Hz.
    pub fmax: f64,
    /// Largest dip (propagation angle from the vertical, degrees) kept in the image, with a cosine roll-off
    /// over the last 5°. Default: none.
    pub dip_limit_deg: Option<f64>,
    /// Default `sinc`.
    pub stolt_interpolation: StoltInterpolation,
    /// Depth levels imaged per block (phase shift and Stolt hold one k-domain image per level of a block).
    /// Default: as many as fit in half the size of the padded spectrum.
    pub levels_per_block: Option<usize>,
}

impl Default for ImagingParams {
    fn default() -> Self {
        ImagingParams {
            method: Method::PhaseShift,
            dz: 10.0,
            zmax: None,
            nz: None,
            fmin: 0.0,
            fmax: 60.0,
            dip_limit_deg: None,
            stolt_interpolation: StoltInterpolation::Sinc,
            levels_per_block: None,
        }
    }
}

/// One migration, as an engine receives it: the input, its plan, the velocity and the boxes to image.
#[derive(Clone, Copy)]
pub struct Migration<'a> {
    pub input: &'a dyn VolumeReader,
    pub plan: &'a Plan,
    pub velocity: &'a VelocityModel,
    pub request: &'a ImageRequest,
}

/// Which engine runs, and why.
#[derive(Clone, Debug, Serialize)]
pub struct BackendChoice {
    pub kind: &'static str,
    pub detail: String,
}

/// A compute backend that migrates a planned job.
pub trait Engine {
    fn name(&self) -> &str;

    /// Migrate, handing each request box to `sink` as soon as its last level is imaged (see
    /// [`ProductSink`]): in `[il][xl][z]` order (depth contiguous), on the plan's image grid. Every box is
    /// handed over once when the migration succeeds; after an error, some may not be. The stages go into
    /// `ctx.stats`; the migration stops at its next step once `ctx.cancel` is stopped.
    fn migrate_into(&mut self, m: &Migration, ctx: &mut RunContext, sink: &dyn ProductSink) -> Result<()> {
        self.migrate_scan(std::slice::from_ref(m), ctx, &[sink])
    }

    /// Run the migrations of a velocity scan ([`scan`]): migrations of one input whose plans differ in the
    /// velocity only (one migration is a scan of one). The input is read, windowed and transformed (and
    /// uploaded) once; then each frequency band of the spectrum is migrated by every member in turn, each
    /// from the band as transformed, adding into its own boxes, which it hands to its own sink (`sinks[i]`
    /// for `scan[i]`, as [`Engine::migrate_into`] says). The stages of all of them go into `ctx.stats`, the
    /// ingest's once.
    fn migrate_scan(&mut self, scan: &[Migration], ctx: &mut RunContext, sinks: &[&dyn ProductSink]) -> Result<()>;

    /// Migrate and return one buffer per request box, in the request's order.
    fn migrate(&mut self, m: &Migration, ctx: &mut RunContext) -> Result<Vec<Vec<f32>>> {
        let collected = Collected::new(m.request);
        self.migrate_into(m, ctx, &collected)?;
        collected.into_images()
    }

    /// Make ready what a `migrate` of `plan` and `request` (by `members` migrations of a scan) will need
    /// (device buffers, FFT plans), so that it starts at once; called while nothing else waits for the
    /// engine. An engine without such set-up does nothing. An error here is not fatal: `migrate` tries
    /// again and reports it.
    fn prepare(&mut self, _plan: &Plan, _request: &ImageRequest, _members: usize) -> Result<()> {
        Ok(())
    }

    /// Free what the engine holds for runs. An engine may keep a run's buffers after returning its images,
    /// so that freeing them does not delay the products and a next run of the same shape can use them;
    /// they go with the engine, at a `migrate` of another shape, or here (between jobs, so that the device
    /// is not held while the engine waits).
    fn release_last_run(&mut self) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn imaging_table_spellings_and_defaults() {
        #[derive(Deserialize)]
        struct T {
            imaging: ImagingParams,
        }
        let t: T = toml::from_str("[imaging]\nmethod = \"split-step\"\ndz = 5.0\nzmax = 3000.0").unwrap();
        assert_eq!(t.imaging.method, Method::SplitStep);
        assert_eq!((t.imaging.dz, t.imaging.zmax, t.imaging.fmax), (5.0, Some(3000.0), 60.0));
        let t: T = toml::from_str("[imaging]\nmethod = \"stolt\"\nstolt_interpolation = \"linear\"").unwrap();
        assert_eq!(t.imaging.stolt_interpolation, StoltInterpolation::Linear);
        assert!(toml::from_str::<T>("[imaging]\nmethod = \"kirchhoff\"").is_err());
        assert!(toml::from_str::<T>("[imaging]\ndepth_step = 5.0").is_err());
    }

    #[test]
    fn choice_names_are_the_job_file_names() {
        seis_core::choice::assert_names_match_serde::<Method>();
        seis_core::choice::assert_names_match_serde::<StoltInterpolation>();
        seis_core::choice::assert_names_match_serde::<crate::attributes::Attribute>();
    }
}
