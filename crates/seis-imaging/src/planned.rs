//! The plan as decided: its types, what was planned for the method, and what the engines read from it as
//! they follow it (the frequencies and wavenumbers of the padded grid, the ingest chunks and the depth
//! segments of each block).
//!
//! It sits below the methods and the plan's making: [`crate::plan`] decides a plan, asking the methods'
//! rules ([`crate::method`]), and the methods' kernels, the image assembly and the engines follow it, so
//! what they share lives here, where it needs neither.

use std::ops::Range;

use crate::bands::Share;
use crate::formulas::{angular_frequency, imaging_weight, wavenumber};
use crate::request::ImageRequest;
use crate::window::{NonFinite, WindowPlan};
use crate::{Method, StoltInterpolation};
use seis_core::error::{Error, Result};
use seis_core::volume::{Geometry, SampleAxis};

/// The frequency bins kept: `first .. first + len` of the padded time FFT.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Band {
    pub first: usize,
    pub len: usize,
}

/// A depth level that is imaged, and the velocity at its depth (for the dip limit).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Level {
    pub index: usize,
    pub velocity: f64,
}

/// A stretch of depth steps of one velocity, continued as one phase shift. When `slot` is set, the level at
/// the bottom of the stretch is imaged into that slot of the block.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Segment {
    pub velocity: f64,
    pub thickness: f64,
    pub slot: Option<usize>,
}

#[derive(Clone, Debug)]
pub struct Plan {
    /// The method, and what was planned for it.
    pub method: MethodPlan,
    /// The input grid (time axis in ms).
    pub input: Geometry,
    /// Sample interval and time of the first sample (s).
    pub dt: f64,
    pub t0: f64,
    /// Distance between inlines and between crosslines (m).
    pub bin: [f64; 2],
    /// Padded `[iline, xline, time]` lengths of the transforms.
    pub padded: [usize; 3],
    pub window: WindowPlan,
    pub band: Band,
    /// The share of the band's frequencies this process migrates (indices into the band): all of them,
    /// unless the job is split between processes ([`Plan::restrict_to`]).
    pub frequencies: Range<usize>,
    /// Which share that is.
    pub share: Share,
    /// The image depth axis (m), starting at 0.
    pub depth: SampleAxis,
    /// The imaged levels, ascending. The depth loop stops at the last one.
    pub levels: Vec<Level>,
    /// Velocity (m/s) of each depth step `j → j + 1`, sampled at mid-step; for a 3-D model the reference
    /// velocity (mean slowness) of the step.
    pub step_velocity: Vec<f64>,
    /// Ranges of `levels` imaged together.
    pub blocks: Vec<Range<usize>>,
    /// Dip limit (radians).
    pub dip_limit: Option<f64>,
    /// Whether the velocity changes laterally (split-step then applies its thin lens).
    pub lateral_velocity: bool,
    /// Inlines read, windowed and transformed together.
    pub ingest_inlines: usize,
    /// What the ingest does with NaN and infinite input samples (an input property: `Zero` unless the
    /// caller sets it).
    pub nonfinite: NonFinite,
    /// The deepest depth (m) the record can image, when it lies above the image's last level: where the
    /// vertical two-way time from the surface reaches the last input sample, through the fastest velocity
    /// at each depth (on a 3-D model the fastest trace, so that no trace reaches deeper). Below it an image
    /// holds only what the transforms wrap around, so the products are zero there.
    pub reach: Option<f64>,
    /// What the plan changed or doubts in the job, each a sentence led by the key it concerns: the run logs
    /// them as warnings and records them in the manifest.
    pub warnings: Vec<String>,
    pub(crate) image: Geometry,
    pub(crate) request_values: usize,
    pub(crate) velocity_values: usize,
}

/// The method of a plan and what was planned for it.
#[derive(Clone, Debug, PartialEq)]
pub enum MethodPlan {
    PhaseShift,
    Stolt(StoltGrid),
    SplitStep,
}

impl MethodPlan {
    /// The method.
    pub fn kind(&self) -> Method {
        match self {
            MethodPlan::PhaseShift => Method::PhaseShift,
            MethodPlan::Stolt(_) => Method::Stolt,
            MethodPlan::SplitStep => Method::SplitStep,
        }
    }

    /// The method's name in a job file.
    pub fn name(&self) -> &'static str {
        self.kind().name()
    }

    /// Stolt's kz grid, for a Stolt plan.
    pub fn stolt(&self) -> Option<&StoltGrid> {
        match self {
            MethodPlan::Stolt(grid) => Some(grid),
            _ => None,
        }
    }

    /// Stolt's kz grid, to change (the members of a velocity scan share the longest).
    pub fn stolt_mut(&mut self) -> Option<&mut StoltGrid> {
        match self {
            MethodPlan::Stolt(grid) => Some(grid),
            _ => None,
        }
    }
}

/// A plan's method compares with the method a job names.
impl PartialEq<Method> for MethodPlan {
    fn eq(&self, other: &Method) -> bool {
        self.kind() == *other
    }
}

/// Stolt's vertical-wavenumber grid.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StoltGrid {
    /// The constant medium velocity (m/s).
    pub velocity: f64,
    /// Length of the inverse FFT over kz; the image repeats every `nz_fft · dz` metres.
    pub nz_fft: usize,
    /// kz sample interval (rad/m): `2π / (nz_fft · dz)`.
    pub dkz: f64,
    pub interpolation: StoltInterpolation,
    /// Centre of the input's time span (s). The spectrum is interpolated after a shift of this much towards
    /// t = 0, where the interpolation kernels are most accurate.
    pub time_centre: f64,
}

impl Plan {
    /// The image grid: the input's lateral grid and the depth axis.
    pub fn image_geometry(&self) -> Geometry {
        self.image.clone()
    }

    /// The lowest and highest frequency kept (Hz).
    pub fn band_hz(&self) -> (f64, f64) {
        let df = 1.0 / (self.padded[2] as f64 * self.dt);
        (self.band.first as f64 * df, (self.band.first + self.band.len - 1) as f64 * df)
    }

    /// Number of kept frequencies.
    pub fn n_omega(&self) -> usize {
        self.band.len
    }

    /// Number of lateral wavenumbers (points of one padded plane).
    pub fn nk(&self) -> usize {
        self.padded[0] * self.padded[1]
    }

    /// Angular frequency (rad/s) of kept frequency `iw` (0-based within the band).
    pub fn omega(&self, iw: usize) -> f64 {
        angular_frequency(self.band.first + iw, self.padded[2], self.dt)
    }

    /// Weight of kept frequency `iw` in the imaging sum.
    pub fn weight(&self, iw: usize) -> f64 {
        imaging_weight(self.band.first + iw, self.padded[2])
    }

    /// Factor that turns a sum over the kept frequencies of an unnormalised inverse 2-D FFT into image
    /// amplitude: the inverse time FFT at t = 0 and the inverse lateral FFT are both normalised by length.
    pub fn image_scale(&self) -> f64 {
        1.0 / (self.padded[2] as f64 * self.nk() as f64)
    }

    /// The inlines of each ingest chunk, in order: at most `ingest_inlines` each, the first and the last a
    /// quarter of that. While the first chunk is read nothing can be uploaded, and after the last one is
    /// read its upload and transform are all that is left: small ends keep both waits short.
    pub fn ingest_chunks(&self) -> Vec<Range<usize>> {
        let ni = self.input.shape()[0];
        let (full, end) = (self.ingest_inlines, self.ingest_inlines.div_ceil(4));
        if ni <= full + 2 * end {
            return (0..ni).step_by(full).map(|s| s..(s + full).min(ni)).collect();
        }
        let middle = end..ni - end;
        std::iter::once(0..end)
            .chain(middle.clone().step_by(full).map(|s| s..(s + full).min(middle.end)))
            .chain(std::iter::once(ni - end..ni))
            .collect()
    }

    /// `|k|² = kx² + ky²` of every point of the padded plane, in `[il][xl]` order.
    ///
    /// Row by row on the rayon pool, into a table of its final size: a GPU run makes it before it reads its
    /// input. For a 2400 × 2400 plane, collecting it from an iterator took 17 ms on two cores (the table
    /// grown by doubling, its pages touched on one thread), filling it row by row 8-9 ms.
    pub fn k_squared(&self) -> Vec<f64> {
        use rayon::prelude::*;
        let [ni, nx, _] = self.padded;
        let kx: Vec<f64> = (0..ni).map(|i| wavenumber(i, ni, self.bin[0]).powi(2)).collect();
        let ky: Vec<f64> = (0..nx).map(|j| wavenumber(j, nx, self.bin[1]).powi(2)).collect();
        let mut k2 = vec![0.0; ni * nx];
        k2.par_chunks_mut(nx.max(1)).zip(&kx).for_each(|(row, a)| {
            row.iter_mut().zip(&ky).for_each(|(k, b)| *k = a + b);
        });
        k2
    }

    /// The deepest level computed.
    pub fn last_level(&self) -> usize {
        self.levels.last().map_or(0, |l| l.index)
    }

    /// The depth stretches of block `b`, from the last level of the previous block (or the surface) down to
    /// the block's last level.
    pub fn segments(&self, b: usize) -> Vec<Segment> {
        let block = self.blocks[b].clone();
        let dz = self.depth.step;
        let mut current = if block.start == 0 { 0 } else { self.levels[block.start - 1].index };
        let mut segments = Vec::new();
        for (slot, level) in self.levels[block].iter().enumerate() {
            let mut j = current;
            while j < level.index {
                let v = self.step_velocity[j];
                let n = self.step_velocity[j..level.index].iter().take_while(|&&x| x == v).count();
                segments.push(Segment { velocity: v, thickness: n as f64 * dz, slot: None });
                j += n;
            }
            if current < level.index {
                segments.last_mut().expect("pushed above").slot = Some(slot);
            } else {
                segments.push(Segment { velocity: level.velocity, thickness: 0.0, slot: Some(slot) });
            }
            current = level.index;
        }
        segments
    }

    /// Check that `src` is the input this plan was made for and `request` asks only for planned levels.
    pub fn check(&self, src: &Geometry, request: &ImageRequest) -> Result<()> {
        if src.shape() != self.input.shape() || src.samples != self.input.samples {
            return Err(Error::Request(format!(
                "the plan was made for an input of {:?} samples, the source has {:?}",
                self.input.shape(),
                src.shape()
            )));
        }
        request.check(&self.image)?;
        let planned: Vec<usize> = self.levels.iter().map(|l| l.index).collect();
        if let Some(l) = request.levels().iter().find(|l| planned.binary_search(l).is_err()) {
            return Err(Error::Request(format!("depth level {l} is requested but was not planned")));
        }
        Ok(())
    }
}
