//! The imaging plan: every size and number a migration needs, decided once, before any data is read.
//!
//! The plan fixes the padded grid, the tapers, the frequency band, the image depth axis, which depth levels
//! are imaged and how deep the depth loop must go, the velocity of every depth step, and how the levels are
//! grouped into blocks that bound the memory. Engines (CPU now, GPU later) follow it to the letter, so both
//! compute the same thing on the same layout.

use std::ops::Range;

use super::bands::Share;
use super::formulas::{angular_frequency, imaging_weight, wavenumber};
use super::request::ImageRequest;
use super::{ImagingParams, Method, StoltInterpolation};
use crate::window::{fast_len, NonFinite, WindowParams, WindowPlan};
use seis_core::error::{Error, Result};
use seis_core::volume::{Domain, Geometry, SampleAxis};
use seis_velocity::VelocityModel;

/// Largest number of depth levels an image may have (a guard against a mistyped `dz`).
pub const MAX_LEVELS: usize = 1_000_000;
/// Input read per chunk, before windowing and the time FFT.
pub const INGEST_CHUNK_BYTES: usize = 32 << 20;
/// Aperture angle the automatic lateral pad assumes when no dip limit is given.
const DEFAULT_APERTURE_DEG: f64 = 60.0;

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

#[derive(Clone, Debug)]
pub struct Plan {
    pub method: Method,
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
    pub stolt: Option<StoltGrid>,
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
    image: Geometry,
    request_values: usize,
    velocity_values: usize,
}

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
fn record_reach(input: &Geometry, dz: f64, steps: usize, velocity: &VelocityModel) -> Option<f64> {
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
        let reach = record_reach(input, dz, image.samples.len - 1, velocity);

        check_velocity(params.method, velocity, input)?;
        let dip_limit = match params.dip_limit_deg {
            None => None,
            Some(d) if d > 0.0 && d <= 90.0 => Some(d.to_radians()),
            Some(d) => {
                let message = format!("dip_limit_deg must be in (0, 90], not {d}");
                return Err(Error::at_key("imaging.dip_limit_deg", message));
            }
        };

        let requested = request.levels();
        let last = *requested.last().expect("a checked request has a level");
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
        let (nt_pad, nyquist) = (padded[2], 0.5 / dt);
        let df = 1.0 / (nt_pad as f64 * dt);
        if !(params.fmin >= 0.0 && params.fmax > params.fmin) {
            let message = format!("need 0 ≤ fmin < fmax, not fmin {} Hz, fmax {} Hz", params.fmin, params.fmax);
            return Err(Error::at_key("imaging.fmin", message).or_key("imaging.fmax"));
        }
        let fmax = if params.fmax > nyquist {
            warnings.push(format!(
                "imaging.fmax: fmax {} Hz is above the Nyquist frequency of the {} ms samples: clamped to {nyquist} Hz",
                params.fmax, input.samples.step
            ));
            nyquist
        } else {
            params.fmax
        };
        let first = (params.fmin / df - 1e-9).ceil() as usize;
        let last_bin = ((fmax / df + 1e-9).floor() as usize).min(nt_pad / 2);
        if first > last_bin {
            let message = format!(
                "no frequency sample lies between fmin {} Hz and fmax {fmax} Hz (spacing {df} Hz)",
                params.fmin
            );
            return Err(Error::at_key("imaging.fmin", message).or_key("imaging.fmax"));
        }
        let band = Band { first, len: last_bin - first + 1 };

        let (vmin, _) = velocity.range();
        let unaliased = vmin / (4.0 * fmax);
        if dz > unaliased {
            warnings.push(format!(
                "imaging.dz: dz {dz} m is coarser than vmin / (4 fmax) = {unaliased:.1} m: steep high-frequency events \
                 alias in depth"
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

        let stolt = (params.method == Method::Stolt).then(|| {
            let v = velocity.constant_velocity().expect("checked above");
            let depth_period = 0.5 * v * nt_pad as f64 * dt;
            let nz_fft = fast_len(((depth_period / dz).ceil() as usize).max(last + 1), false);
            StoltGrid {
                velocity: v,
                nz_fft,
                dkz: std::f64::consts::TAU / (nz_fft as f64 * dz),
                interpolation: params.stolt_interpolation,
                time_centre: input.samples.origin / 1000.0 + 0.5 * (shape[2] - 1) as f64 * dt,
            }
        });

        let per_block = match params.levels_per_block {
            Some(0) => return Err(Error::at_key("imaging.levels_per_block", "levels_per_block must be at least 1")),
            // Split-step images in space, level by level: it holds no k-domain images.
            _ if params.method == Method::SplitStep => levels.len(),
            Some(n) => n,
            // Half the spectrum's size: a block of k-domain images of nk values each.
            None => (band.len / 2).max(1),
        };
        let blocks = (0..levels.len()).step_by(per_block).map(|s| s..(s + per_block).min(levels.len())).collect();

        let trace_bytes = shape[1] * shape[2] * 4;
        let ingest_inlines = (INGEST_CHUNK_BYTES / trace_bytes.max(1)).clamp(1, shape[0]);

        Ok(Plan {
            method: params.method,
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
            stolt,
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

    /// Migrate only `share` of the frequencies (see [`super::bands`]). Stolt, which needs every frequency
    /// of a wavenumber at once, does not split: its first share migrates them all and the others none, which
    /// the plan's warnings say.
    pub fn restrict_to(&mut self, share: Share) {
        self.share = share;
        self.frequencies = self.share_frequencies(share);
        if let Some(note) = self.share_note() {
            if self.method == Method::Stolt || self.frequencies.is_empty() {
                self.warnings.push(note);
            }
        }
    }

    /// What this plan's share of the frequencies is, in words; `None` for the whole band.
    fn share_note(&self) -> Option<String> {
        let (share, n) = (self.share, self.band.len);
        if share.is_whole() {
            return None;
        }
        Some(match (self.method, self.frequencies.is_empty()) {
            (Method::Stolt, false) => format!(
                "share {share}: Stolt needs every frequency of a wavenumber at once, so this share migrates all \
                 {n} frequencies and the other shares none"
            ),
            (Method::Stolt, true) => format!(
                "share {share}: Stolt needs every frequency of a wavenumber at once; share 1/{} migrates them all, \
                 this one none",
                share.count
            ),
            (_, true) => format!("share {share}: no frequency (more shares than the {n} frequencies)"),
            (_, false) => {
                let df = 1.0 / (self.padded[2] as f64 * self.dt);
                let f = |i: usize| (self.band.first + i) as f64 * df;
                format!(
                    "share {share}: frequencies {}..{} of {n} ({:.2}..{:.2} Hz)",
                    self.frequencies.start + 1,
                    self.frequencies.end,
                    f(self.frequencies.start),
                    f(self.frequencies.end - 1)
                )
            }
        })
    }

    /// The frequencies (indices into the band) that `share` migrates (see [`Plan::restrict_to`]).
    pub fn share_frequencies(&self, share: Share) -> Range<usize> {
        let n = self.band.len;
        match self.method {
            Method::Stolt if share.index == 0 => 0..n,
            Method::Stolt => n..n,
            _ => share.range(n),
        }
    }

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
    pub fn k_squared(&self) -> Vec<f64> {
        let [ni, nx, _] = self.padded;
        let kx: Vec<f64> = (0..ni).map(|i| wavenumber(i, ni, self.bin[0]).powi(2)).collect();
        let ky: Vec<f64> = (0..nx).map(|j| wavenumber(j, nx, self.bin[1]).powi(2)).collect();
        kx.iter().flat_map(|a| ky.iter().map(move |b| a + b)).collect()
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

    fn spectrum_bytes(&self) -> u64 {
        (self.frequencies.len() * self.nk() * 8) as u64
    }

    /// Bytes of the k-domain images of one block (phase shift and Stolt).
    fn block_bytes(&self) -> u64 {
        match self.method {
            Method::SplitStep => 0,
            _ => (self.blocks.iter().map(|b| b.len()).max().unwrap_or(0) * self.nk() * 8) as u64,
        }
    }

    /// Bytes of the per-step velocity arrays: the 3-D model itself and split-step's slowness and lens slices.
    fn velocity_bytes(&self) -> u64 {
        let slices = if self.method == Method::SplitStep { self.input.n_traces() * 4 + self.nk() * 4 } else { 0 };
        (self.velocity_values * 4 + slices) as u64
    }

    /// Bytes of the requested boxes of one migration (each member of a velocity scan fills its own).
    pub fn request_bytes(&self) -> u64 {
        self.request_values as u64 * 4
    }

    /// Memory a velocity scan of `members` migrations of this plan needs besides one migration: the boxes
    /// of the other members, and (`copy`) a copy of the spectrum that each member but the last migrates,
    /// where the method changes it in place.
    pub fn scan_bytes(&self, members: usize, copy: bool) -> u64 {
        if members < 2 {
            return 0;
        }
        (members as u64 - 1) * self.request_bytes() + if copy { self.spectrum_bytes() } else { 0 }
    }

    /// Peak host memory of the CPU engine when the spectrum of its share fits at once: the padded spectrum
    /// and [`Plan::host_fixed_bytes`].
    pub fn host_memory_bytes(&self) -> u64 {
        self.spectrum_bytes() + self.host_fixed_bytes()
    }

    /// Host memory of the CPU engine besides the spectrum: one ingest chunk, one block of k-domain images,
    /// the requested image, the velocity arrays, and per-thread FFT scratch (one plane and its transpose per
    /// thread, counted for every core of this machine).
    pub fn host_fixed_bytes(&self) -> u64 {
        let chunk = (self.ingest_inlines
            * self.input.shape()[1]
            * (self.input.shape()[2] * 4 + self.frequencies.len() * 8)) as u64;
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get()) as u64;
        let per_thread = (2 * self.nk() * 8 + self.padded[2] * 8) as u64;
        chunk + self.block_bytes() + self.request_values as u64 * 4 + self.velocity_bytes() + threads * per_thread
    }

    /// Device memory of an engine that follows this plan on a GPU: the padded spectrum, one ingest chunk as
    /// padded real traces and their half spectra, one block of k-domain images, the requested image and the
    /// velocity arrays. cuFFT's work areas come on top (they are about one batch of planes).
    pub fn device_memory_bytes(&self) -> u64 {
        let chunk_traces = (self.ingest_inlines * self.input.shape()[1]) as u64;
        let r2c = chunk_traces * (self.padded[2] as u64 * 4 + (self.padded[2] as u64 / 2 + 1) * 8);
        self.spectrum_bytes() + r2c + self.block_bytes() + self.request_values as u64 * 4 + self.velocity_bytes()
    }

    /// Human-readable summary for `validate`.
    pub fn describe(&self) -> Vec<String> {
        let [ni, nx, nt] = self.input.shape();
        let [pi, px, pt] = self.padded;
        let ramps = self.window.ramp_lengths();
        let df = 1.0 / (pt as f64 * self.dt);
        let (f0, f1) = self.band_hz();
        let mib = |b: u64| b as f64 / (1u64 << 20) as f64;
        let mut lines = vec![
            format!("method: {}", self.method.name()),
            format!(
                "input: {ni} × {nx} traces × {nt} samples of {} ms; bins {:.2} × {:.2} m",
                self.input.samples.step, self.bin[0], self.bin[1]
            ),
            format!(
                "padded: {pi} × {px} traces × {pt} samples; tapers: last {} samples, {} / {} edge traces",
                ramps[0], ramps[1], ramps[2]
            ),
            format!("band: {f0:.2}..{f1:.2} Hz, {} frequencies {df:.4} Hz apart", self.band.len),
            format!(
                "depth: 0..{} m step {} m ({} levels); computed down to {} m, {} level(s) imaged in {} block(s)",
                self.depth.last(),
                self.depth.step,
                self.depth.len,
                self.last_level() as f64 * self.depth.step,
                self.levels.len(),
                self.blocks.len()
            ),
        ];
        lines.push(match self.reach {
            Some(z) => format!(
                "reach: the last sample ({} ms) reaches {z:.0} m (vertical two-way time through the fastest \
                 velocity); the products are zero below",
                self.input.samples.last()
            ),
            None => "reach: the record reaches below the deepest level".to_string(),
        });
        lines.extend(self.share_note());
        if let Some(d) = self.dip_limit {
            lines.push(format!("dip limit: {:.1}° (cosine roll-off over the last 5°)", d.to_degrees()));
        }
        if let Some(s) = &self.stolt {
            lines.push(format!(
                "stolt: {} m/s, {} interpolation, {} kz samples (image period {} m)",
                s.velocity,
                format!("{:?}", s.interpolation).to_lowercase(),
                s.nz_fft,
                s.nz_fft as f64 * self.depth.step
            ));
        }
        lines.push(format!(
            "memory: host ≈ {:.1} MiB (spectrum {:.1} MiB, k-image block {:.1} MiB, requested image {:.1} MiB), \
             device ≈ {:.1} MiB",
            mib(self.host_memory_bytes()),
            mib(self.spectrum_bytes()),
            mib(self.block_bytes()),
            mib(self.request_values as u64 * 4),
            mib(self.device_memory_bytes())
        ));
        lines
    }
}

/// Refuse a method the velocity model cannot serve.
fn check_velocity(method: Method, velocity: &VelocityModel, input: &Geometry) -> Result<()> {
    velocity.check_grid(input)?;
    let message = match method {
        Method::Stolt if velocity.constant_velocity().is_none() => format!(
            "the stolt method needs a constant velocity, and the model is a {}: use phase-shift for v(z) or \
             split-step for v(x, y, z)",
            velocity.describe()
        ),
        Method::PhaseShift if velocity.varies_laterally() => format!(
            "the phase-shift method needs a velocity that depends on depth only, and the model ({}) varies \
             laterally: use split-step",
            velocity.describe()
        ),
        _ => return Ok(()),
    };
    // The method is blamed where the job sets it; else the kind of velocity the job gives.
    Err(Error::at_key("imaging.method", message).or_key("velocity.kind"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::window::LateralPad;
    use seis_core::volume::{IndexBox, LineAxis};
    use seis_velocity::{Interpolation, VelocityTable};

    fn input(ni: usize, nx: usize, nt: usize, dt_ms: f64) -> Geometry {
        Geometry::regular(
            LineAxis::new(1, 1, ni),
            LineAxis::new(1, 1, nx),
            SampleAxis { origin: 0.0, step: dt_ms, len: nt, domain: Domain::Time },
        )
    }

    fn slice(level: usize, g: &Geometry) -> ImageRequest {
        ImageRequest::new(vec![IndexBox { s: level..level + 1, ..g.full_box() }])
    }

    #[test]
    fn ingest_chunks_cover_the_inlines_with_small_ends() {
        let v = VelocityModel::Constant(2000.0);
        let params = ImagingParams { dz: 10.0, zmax: Some(100.0), fmax: 50.0, ..Default::default() };
        let chunks = |ni: usize| {
            let g = input(ni, 512, 1000, 4.0); // 2 MB per inline: 16 inlines per chunk
            let image = image_geometry(&g, &params, &v).unwrap();
            let p = Plan::new(&g, [12.5, 12.5], &WindowParams::default(), &params, &v, &ImageRequest::whole(&image))
                .unwrap();
            assert_eq!(p.ingest_inlines, ni.min(16));
            p.ingest_chunks()
        };
        let c = chunks(512);
        assert_eq!(c.len(), 34);
        assert_eq!((c[0].clone(), c[1].clone(), c[32].clone(), c[33].clone()), (0..4, 4..20, 500..508, 508..512));
        for ni in [1, 3, 16, 23, 24, 25, 40, 41, 100, 512] {
            let c = chunks(ni);
            assert_eq!(c[0].start, 0, "{ni}");
            assert_eq!(c[c.len() - 1].end, ni, "{ni}");
            assert!(c.windows(2).all(|w| w[0].end == w[1].start), "{ni}: {c:?}");
            assert!(c.iter().all(|r| !r.is_empty() && r.len() <= 16), "{ni}: {c:?}");
        }
        assert_eq!(chunks(24), [0..16, 16..24]);
        assert_eq!(chunks(25), [0..4, 4..20, 20..21, 21..25]);
    }

    #[test]
    fn sizes_band_and_depth_by_hand() {
        let g = input(100, 60, 500, 4.0); // 2 s
        let v = VelocityModel::Constant(2000.0);
        let params = ImagingParams { dz: 10.0, zmax: Some(1500.0), fmin: 5.0, fmax: 50.0, ..Default::default() };
        let image = image_geometry(&g, &params, &v).unwrap();
        assert_eq!(image.samples.len, 151);
        let whole = ImageRequest::whole(&image);
        let p = Plan::new(&g, [12.5, 25.0], &WindowParams::default(), &params, &v, &whole).unwrap();
        // half aperture at 1500 m: 0.5 · 1500 · tan 60° = 1299 m → 104 inlines (capped at 100), 52 crosslines
        assert_eq!(p.padded, [200, 120, 1000]);
        // df = 1 / (1000 · 4 ms) = 0.25 Hz: bins 20..=200
        assert_eq!(p.band, Band { first: 20, len: 181 });
        assert_eq!(p.levels.len(), 151);
        assert_eq!(p.step_velocity.len(), 150);
        assert_eq!(p.blocks.len(), 2); // 90 levels per block
        assert!((p.omega(0) - 2.0 * std::f64::consts::PI * 5.0).abs() < 1e-9);
        assert_eq!(p.image_scale(), 1.0 / (1000.0 * 200.0 * 120.0));

        // A depth slice at 500 m stops the depth loop there and pads for 500 m.
        let p = Plan::new(&g, [12.5, 25.0], &WindowParams::default(), &params, &v, &slice(50, &image)).unwrap();
        assert_eq!(p.last_level(), 50);
        assert_eq!(p.levels.len(), 1);
        assert_eq!(p.step_velocity.len(), 50);
        // 0.5 · 500 · tan 60° = 433 m → 35 and 18 traces
        assert_eq!(p.padded, [135, 80, 1000]);

        // Without zmax or nz the image reaches v · t_end / 2 = 2000 · 1.996 / 2 = 1996 m: the levels at or
        // above it are 0, 10, ..., 1990 m.
        let auto = ImagingParams { zmax: None, ..params.clone() };
        assert_eq!(image_geometry(&g, &auto, &v).unwrap().samples.len, 200);
        // The plan to 1500 m lies within that reach; one to 2500 m does not.
        assert_eq!(Plan::new(&g, [12.5, 25.0], &WindowParams::default(), &params, &v, &whole).unwrap().reach, None);
        let deep = ImagingParams { zmax: Some(2500.0), ..params.clone() };
        let image = image_geometry(&g, &deep, &v).unwrap();
        let p = Plan::new(&g, [12.5, 25.0], &WindowParams::default(), &deep, &v, &slice(250, &image)).unwrap();
        assert!((p.reach.unwrap() - 1996.0).abs() < 1e-6, "{:?}", p.reach);
        let by_count = ImagingParams { zmax: None, nz: Some(7), ..params.clone() };
        assert_eq!(image_geometry(&g, &by_count, &v).unwrap().samples.len, 7);
    }

    #[test]
    fn fmax_is_clamped_to_nyquist_and_noted() {
        let g = input(8, 8, 100, 8.0); // Nyquist 62.5 Hz
        let v = VelocityModel::Constant(2000.0);
        let params = ImagingParams { nz: Some(10), fmax: 100.0, ..Default::default() };
        let image = image_geometry(&g, &params, &v).unwrap();
        let p = Plan::new(&g, [10.0, 10.0], &WindowParams::default(), &params, &v, &slice(3, &image)).unwrap();
        assert_eq!(p.band, Band { first: 0, len: 101 }); // 200 samples padded: bins 0..=100
        assert!(p.warnings.iter().any(|l| l.starts_with("imaging.fmax: ") && l.contains("clamped to 62.5 Hz")));
    }

    /// The reach through layers, worked out by hand, and on a 3-D model the fastest trace's. A record of
    /// 0.5 s through 1500 m/s stops at 375 m. Through 200 m of 2000 m/s and then 3000 m/s it would stop at
    /// 200 + 3000 · 0.3 / 2 = 650 m, but the 5 m step holding the boundary is crossed at the faster velocity
    /// (a conservative bound): 1/600 s sooner, so 1500 m/s · 1/600 s = 2.5 m deeper, 652.5 m.
    #[test]
    fn the_reach_follows_the_fastest_velocity_at_each_depth() {
        use seis_velocity::VelocityGrid;
        let g = input(3, 2, 126, 4.0); // last sample 500 ms
        let reach = |v: &VelocityModel| record_reach(&g, 5.0, 1000, v).unwrap();
        assert!((reach(&VelocityModel::Constant(1500.0)) - 375.0).abs() < 1e-9);
        let layers = VelocityTable::new(vec![0.0, 200.0], vec![2000.0, 3000.0], Interpolation::Step).unwrap();
        assert!((reach(&VelocityModel::Table(layers)) - 652.5).abs() < 1e-9);
        // Six traces, one of them 2000 m/s above 200 m and 3000 m/s below, the others 1500 m/s throughout.
        let depth = SampleAxis { origin: 0.0, step: 5.0, len: 201, domain: Domain::Depth };
        let model = Geometry::regular(g.ilines, g.xlines, depth);
        let mut data = vec![1500.0f32; 6 * 201];
        for (k, v) in data[4 * 201..5 * 201].iter_mut().enumerate() {
            *v = if k * 5 < 200 { 2000.0 } else { 3000.0 };
        }
        let grid = VelocityModel::Grid(VelocityGrid::new(model, data, "model").unwrap());
        assert!((reach(&grid) - 652.5).abs() < 1e-3, "{}", reach(&grid)); // slowness in f32
                                                                          // A record longer than the steps allowed reaches below them.
        assert_eq!(record_reach(&g, 5.0, 10, &VelocityModel::Constant(1500.0)), None);
    }

    /// A share of the frequencies is a near-equal range, noted in the plan; Stolt's first share takes
    /// them all.
    #[test]
    fn shares_restrict_the_frequencies_and_say_so() {
        let g = input(8, 8, 100, 8.0);
        let v = VelocityModel::Constant(2000.0);
        let params = ImagingParams { nz: Some(10), fmax: 100.0, ..Default::default() };
        let image = image_geometry(&g, &params, &v).unwrap();
        let whole = Plan::new(&g, [10.0, 10.0], &WindowParams::default(), &params, &v, &slice(3, &image)).unwrap();
        let note = |p: &Plan| p.describe().into_iter().find(|l| l.starts_with("share ")).unwrap_or_default();
        let mut p = whole.clone();
        p.restrict_to(Share { index: 1, count: 3 });
        assert_eq!((p.frequencies.clone(), p.share), (33..67, Share { index: 1, count: 3 }));
        assert_eq!(note(&p), "share 2/3: frequencies 34..67 of 101 (20.62..41.25 Hz)");
        let stolt = Plan { method: Method::Stolt, ..whole.clone() };
        let (mut first, mut second) = (stolt.clone(), stolt);
        first.restrict_to(Share { index: 0, count: 3 });
        second.restrict_to(Share { index: 1, count: 3 });
        assert_eq!((first.frequencies.clone(), second.frequencies.clone()), (0..101, 101..101));
        assert_eq!(
            note(&first),
            "share 1/3: Stolt needs every frequency of a wavenumber at once, so this share migrates all 101 \
             frequencies and the other shares none"
        );
        assert_eq!(
            note(&second),
            "share 2/3: Stolt needs every frequency of a wavenumber at once; share 1/3 migrates them all, this \
             one none"
        );
        assert!(p.warnings.iter().all(|w| !w.starts_with("share")), "an ordinary share is no warning");
        assert!(first.warnings.iter().any(|w| w.starts_with("share 1/3: Stolt")));
        let mut empty = whole;
        empty.restrict_to(Share { index: 0, count: 200 });
        assert!(empty.frequencies.is_empty() && note(&empty).contains("no frequency (more shares than the 101"));
    }

    #[test]
    fn segments_group_equal_velocities_and_mark_levels() {
        let g = input(4, 4, 100, 4.0);
        let table = VelocityTable::new(vec![0.0, 35.0], vec![1500.0, 2500.0], Interpolation::Step).unwrap();
        let v = VelocityModel::Table(table);
        let params = ImagingParams { dz: 10.0, nz: Some(10), levels_per_block: Some(2), ..Default::default() };
        let image = image_geometry(&g, &params, &v).unwrap();
        let request = ImageRequest::new(vec![
            IndexBox { s: 0..1, ..image.full_box() },
            IndexBox { s: 2..3, ..image.full_box() },
            IndexBox { s: 6..7, ..image.full_box() },
        ]);
        let p = Plan::new(&g, [10.0, 10.0], &WindowParams::default(), &params, &v, &request).unwrap();
        // mid-step depths 5, 15, 25 m are at 1500 m/s; 35, 45, 55 m at 2500 m/s
        assert_eq!(p.step_velocity, vec![1500.0, 1500.0, 1500.0, 2500.0, 2500.0, 2500.0]);
        assert_eq!(p.blocks, vec![0..2, 2..3]);
        let s = |velocity, thickness, slot| Segment { velocity, thickness, slot };
        assert_eq!(p.segments(0), vec![s(1500.0, 0.0, Some(0)), s(1500.0, 20.0, Some(1))]);
        assert_eq!(p.segments(1), vec![s(1500.0, 10.0, None), s(2500.0, 30.0, Some(0))]);
    }

    #[test]
    fn refusals_are_clear() {
        let g = input(8, 8, 100, 4.0);
        let table = VelocityTable::new(vec![0.0, 500.0], vec![1500.0, 2500.0], Interpolation::Linear).unwrap();
        let vz = VelocityModel::Table(table);
        let c = VelocityModel::Constant(2000.0);
        let params = ImagingParams { nz: Some(10), ..Default::default() };
        let image = image_geometry(&g, &params, &c).unwrap();
        let r = slice(5, &image);
        let w = WindowParams::default();
        let plan = |p: &ImagingParams, v: &VelocityModel, bin| Plan::new(&g, bin, &w, p, v, &r).map(|_| ());
        let stolt = ImagingParams { method: Method::Stolt, ..params.clone() };
        let e = plan(&stolt, &vz, [10.0, 10.0]).unwrap_err().to_string();
        assert!(e.contains("stolt") && e.contains("constant velocity"), "{e}");
        assert!(plan(&stolt, &c, [10.0, 10.0]).is_ok());
        assert!(plan(&params, &c, [0.0, 10.0]).unwrap_err().to_string().contains("bin"));
        let both = ImagingParams { zmax: Some(100.0), ..params.clone() };
        assert!(plan(&both, &c, [10.0, 10.0]).unwrap_err().to_string().contains("not both"));
        // Without zmax or nz an absurd velocity makes the image absurdly deep: the velocity is blamed.
        let auto = ImagingParams { nz: None, ..params.clone() };
        match image_geometry(&g, &auto, &VelocityModel::Constant(1e12)).unwrap_err() {
            Error::Setting { key, message, .. } => {
                assert_eq!(key, "velocity");
                assert!(
                    message.contains(CHECK_THE_VELOCITY) && message.contains("1000000000000..1000000000000 m/s"),
                    "{message}"
                );
            }
            e => panic!("{e}"),
        }
        let band = ImagingParams { fmin: 30.0, fmax: 20.0, ..params.clone() };
        assert!(plan(&band, &c, [10.0, 10.0]).is_err());
        let dip = ImagingParams { dip_limit_deg: Some(95.0), ..params.clone() };
        assert!(plan(&dip, &c, [10.0, 10.0]).is_err());
        let mut depth_input = g.clone();
        depth_input.samples.domain = Domain::Depth;
        let e = Plan::new(&depth_input, [10.0, 10.0], &w, &params, &c, &r).unwrap_err().to_string();
        assert!(e.contains("already in depth"), "{e}");
        let pad = WindowParams { lateral_pad: LateralPad::Traces(3), ..w };
        let p = Plan::new(&g, [10.0, 10.0], &pad, &params, &c, &r).unwrap();
        assert_eq!(&p.padded[..2], &[12, 12]);
        let spectrum = (p.n_omega() * p.nk() * 8) as u64;
        assert!(p.host_memory_bytes() > spectrum && p.device_memory_bytes() > spectrum);
    }
}
