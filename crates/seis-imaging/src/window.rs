//! Host windows: the tapers applied to the input before its transforms, and the padding that keeps FFT
//! wrap-around out of the image.
//!
//! A trace ends abruptly where the recording stops, and the survey ends abruptly at its edges; the FFTs see
//! those steps as broadband events and the migration spreads them into smiles. So the last samples of each
//! trace and the outer traces of each lateral edge are brought to zero with a cosine ramp, and the transforms
//! run over padded lengths whose zeros absorb the energy that would otherwise wrap around to the far side.
//!
//! The tapers are applied trace by trace as the input is read ([`read_conditioned`]): each trace is
//! decoded, cleared of NaN and infinite samples (which the FFTs would spread over the whole image) and
//! tapered in one pass while it is in cache, straight into the engine's buffer — for the GPU engine, a pinned
//! staging buffer about to be uploaded.

use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use seis_core::error::{Error, Location, Result};
use seis_core::volume::{IndexBox, VolumeReader, WriteMode};

/// How the input is tapered and padded. Used as the `[window]` table of a job file.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WindowParams {
    /// Length of the cosine ramp that brings the end of each trace to zero, in ms. Clamped to a quarter of
    /// the trace. Default 100 ms: long enough to suppress the step at the end of the record for wavelets down
    /// to about 10 Hz, short enough to leave most of the record untouched.
    pub time_taper_ms: f64,
    /// Number of outer traces on each lateral edge ramped to zero. Clamped to a quarter of the axis.
    /// Default 20 traces.
    pub edge_taper_traces: usize,
    /// The padded trace holds at least this many times the input samples (≥ 1). Default 2: the deepest
    /// events then wrap around into zeros, never onto the top of the record.
    pub time_pad_factor: f64,
    /// Zero traces appended to each lateral axis: `"auto"` (default) or a number of traces.
    pub lateral_pad: LateralPad,
}

impl Default for WindowParams {
    fn default() -> Self {
        WindowParams {
            time_taper_ms: 100.0,
            edge_taper_traces: 20,
            time_pad_factor: 2.0,
            lateral_pad: LateralPad::Auto,
        }
    }
}

/// How many zero traces are appended to each lateral axis before the 2-D FFTs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "LateralPadRepr", into = "LateralPadRepr")]
pub enum LateralPad {
    /// About half the migration aperture at the deepest computed depth (the imaging plan decides it), and
    /// never more than the axis itself.
    #[default]
    Auto,
    /// Exactly this many traces (before rounding the padded length up to a fast FFT size).
    Traces(usize),
}

/// The job-file spelling of [`LateralPad`]: the word `"auto"` or a number.
#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum LateralPadRepr {
    Word(String),
    Traces(usize),
}

impl TryFrom<LateralPadRepr> for LateralPad {
    type Error = String;
    fn try_from(r: LateralPadRepr) -> Result<Self, String> {
        match r {
            LateralPadRepr::Word(w) if w == "auto" => Ok(LateralPad::Auto),
            LateralPadRepr::Word(w) => Err(format!("lateral_pad must be \"auto\" or a number of traces, not \"{w}\"")),
            LateralPadRepr::Traces(n) => Ok(LateralPad::Traces(n)),
        }
    }
}

impl From<LateralPad> for LateralPadRepr {
    fn from(p: LateralPad) -> Self {
        match p {
            LateralPad::Auto => LateralPadRepr::Word("auto".into()),
            LateralPad::Traces(n) => LateralPadRepr::Traces(n),
        }
    }
}

impl WindowParams {
    pub fn validate(&self) -> Result<()> {
        if !(self.time_taper_ms.is_finite() && self.time_taper_ms >= 0.0) {
            let message = format!("time_taper_ms must be ≥ 0, not {}", self.time_taper_ms);
            return Err(Error::at_key("window.time_taper_ms", message));
        }
        if !(self.time_pad_factor.is_finite() && self.time_pad_factor >= 1.0) {
            let message = format!("time_pad_factor must be ≥ 1, not {}", self.time_pad_factor);
            return Err(Error::at_key("window.time_pad_factor", message));
        }
        Ok(())
    }

    /// Padded `[iline, xline, sample]` lengths for an input of `shape`. `auto_pad` is the number of traces
    /// [`LateralPad::Auto`] stands for on each lateral axis. Every length is rounded up to a product of 2, 3
    /// and 5 (the trace length to an even one, for the real FFT). An axis of a single line is never padded:
    /// the data are then a 2-D line, taken as invariant along that axis.
    pub(crate) fn padded_shape(&self, shape: [usize; 3], auto_pad: [usize; 2]) -> [usize; 3] {
        let lateral = |axis: usize| {
            if shape[axis] == 1 {
                return 1;
            }
            let pad = match self.lateral_pad {
                LateralPad::Auto => auto_pad[axis].min(shape[axis]),
                LateralPad::Traces(n) => n,
            };
            fast_len(shape[axis] + pad, false)
        };
        let nt = (shape[2] as f64 * self.time_pad_factor).ceil() as usize;
        [lateral(0), lateral(1), fast_len(nt.max(shape[2]), true)]
    }
}

/// The smallest length ≥ `n` whose only prime factors are 2, 3 and 5 (and even when `even`).
pub(crate) fn fast_len(n: usize, even: bool) -> usize {
    let mut m = n.max(1);
    loop {
        let mut r = m;
        for p in [2, 3, 5] {
            while r % p == 0 {
                r /= p;
            }
        }
        if r == 1 && (!even || m % 2 == 0) {
            return m;
        }
        m += 1;
    }
}

/// Weight of the trace or sample `d` places in from the outer end of a cosine ramp `width` long:
/// `(1 − cos(π (d + ½) / width)) / 2`. Symmetric pairs add up to one, and no sample of the ramp is exactly
/// zero or one.
pub(crate) fn cosine_ramp(d: usize, width: usize) -> f32 {
    if d >= width {
        return 1.0;
    }
    let x = std::f64::consts::PI * (d as f64 + 0.5) / width as f64;
    (0.5 * (1.0 - x.cos())) as f32
}

/// The taper weights for one input grid: one per sample, one per inline and one per crossline.
#[derive(Clone, Debug, PartialEq)]
pub struct WindowPlan {
    pub time: Vec<f32>,
    pub iline: Vec<f32>,
    pub xline: Vec<f32>,
}

impl WindowPlan {
    /// Tapers for an input of `shape = [n_iline, n_xline, n_sample]` sampled every `dt_ms`.
    pub fn new(shape: [usize; 3], dt_ms: f64, params: &WindowParams) -> WindowPlan {
        let time_width = ((params.time_taper_ms / dt_ms).round() as usize).min(shape[2] / 4);
        let time = (0..shape[2]).map(|i| cosine_ramp(shape[2] - 1 - i, time_width)).collect();
        let edges = |n: usize| {
            let w = params.edge_taper_traces.min(n / 4);
            (0..n).map(|i| cosine_ramp(i.min(n - 1 - i), w)).collect()
        };
        WindowPlan { time, iline: edges(shape[0]), xline: edges(shape[1]) }
    }

    /// Lengths of the ramps actually used: `[time samples, traces per lateral edge (iline), (xline)]`.
    pub fn ramp_lengths(&self) -> [usize; 3] {
        let ramp = |w: &[f32]| w.iter().take_while(|&&x| x < 1.0).count();
        let time_ramp = self.time.iter().rev().take_while(|&&x| x < 1.0).count();
        [time_ramp, ramp(&self.iline), ramp(&self.xline)]
    }
}

/// Input samples larger than this in magnitude are treated like NaN: finite, but the transforms sum
/// millions of samples in single precision (whose largest value is 3.4e38), so one such sample overflows
/// to infinity and turns the whole image into NaN. Byte-order confusion gives such values (1e34 and more);
/// real amplitudes, even of 32-bit integer samples, stay far below.
pub const MAX_AMPLITUDE: f32 = 1e20;

/// A sample the transforms cannot take: NaN, infinite, or beyond ±[`MAX_AMPLITUDE`].
#[inline(always)]
fn unusable(x: f32) -> bool {
    x.is_nan() || x.abs() > MAX_AMPLITUDE
}

/// What to do with NaN, infinite and out-of-range input samples (beyond ±[`MAX_AMPLITUDE`]): one of them,
/// left in, turns the whole image into NaN. Used as `input.nonfinite` of a job file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NonFinite {
    /// Set them to zero and count them (the run reports the count).
    #[default]
    Zero,
    /// Stop at the first one, naming its trace and sample.
    Refuse,
}

/// What happens to each input trace as it is read: non-finite samples are zeroed and counted (or the first
/// one is recorded for refusal), then the time and lateral tapers are applied.
pub struct TraceConditioner<'a> {
    window: &'a WindowPlan,
    policy: NonFinite,
    /// The first sample the time taper changes: before it the time weights are exactly 1.
    time_taper_start: usize,
    zeroed: AtomicU64,
    /// Under [`NonFinite::Refuse`]: the first non-finite sample in memory order, (il, xl, sample, value).
    first_bad: Mutex<Option<(usize, usize, usize, f32)>>,
}

impl<'a> TraceConditioner<'a> {
    pub fn new(window: &'a WindowPlan, policy: NonFinite) -> Self {
        let time_taper_start = window.time.len() - window.ramp_lengths()[0];
        TraceConditioner { window, policy, time_taper_start, zeroed: AtomicU64::new(0), first_bad: Mutex::new(None) }
    }

    /// Condition the trace at grid indices (`il`, `xl`) whose samples from index `s0` are in `trace`.
    ///
    /// This runs on every sample of the input, so the usual case is kept to two passes the compiler
    /// vectorises: a branch-free count of non-finite samples, and the taper, which inside the lateral
    /// tapers touches only the samples of the time taper. Both run as compiled for AVX2 where the CPU
    /// has it ([`seis_core::simd`]).
    pub fn apply(&self, il: usize, xl: usize, s0: usize, trace: &mut [f32]) {
        #[cfg(target_arch = "x86_64")]
        if seis_core::simd::has_avx2() {
            // SAFETY: the CPU has AVX2.
            return unsafe { self.apply_avx2(il, xl, s0, trace) };
        }
        self.apply_body(il, xl, s0, trace)
    }

    /// [`TraceConditioner::apply`] compiled for AVX2 (see [`seis_core::simd`]). Unsafe: the CPU must have AVX2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn apply_avx2(&self, il: usize, xl: usize, s0: usize, trace: &mut [f32]) {
        self.apply_body(il, xl, s0, trace)
    }

    /// The body of [`TraceConditioner::apply`], inlined into both of its versions.
    #[inline(always)]
    fn apply_body(&self, il: usize, xl: usize, s0: usize, trace: &mut [f32]) {
        let bad: u32 = trace.iter().map(|&x| u32::from(unusable(x))).sum();
        if bad > 0 {
            self.zero_nonfinite(il, xl, s0, trace);
        }
        let lateral = self.window.iline[il] * self.window.xline[xl];
        let first = if lateral == 1.0 { self.time_taper_start.saturating_sub(s0).min(trace.len()) } else { 0 };
        for (x, w) in trace[first..].iter_mut().zip(&self.window.time[s0 + first..]) {
            *x *= lateral * w;
        }
    }

    fn zero_nonfinite(&self, il: usize, xl: usize, s0: usize, trace: &mut [f32]) {
        let mut zeroed = 0;
        for (k, x) in trace.iter_mut().enumerate() {
            if unusable(*x) {
                if self.policy == NonFinite::Refuse {
                    let mut first = self.first_bad.lock().unwrap_or_else(|e| e.into_inner());
                    let here = (il, xl, s0 + k, *x);
                    if first.is_none_or(|f| (here.0, here.1, here.2) < (f.0, f.1, f.2)) {
                        *first = Some(here);
                    }
                }
                *x = 0.0;
                zeroed += 1;
            }
        }
        self.zeroed.fetch_add(zeroed, Ordering::Relaxed);
    }

    /// The number of samples zeroed so far, or, under [`NonFinite::Refuse`], an error naming the first
    /// non-finite sample of `src`.
    pub fn check(&self, src: &dyn VolumeReader) -> Result<u64> {
        let first = *self.first_bad.lock().unwrap_or_else(|e| e.into_inner());
        match first {
            None => Ok(self.zeroed.load(Ordering::Relaxed)),
            Some((il, xl, s, value)) => {
                let g = src.geometry();
                Err(Error::format(
                    src.describe(),
                    Location::File,
                    format!(
                        "sample {} ({} {}) of the trace at inline {}, crossline {} is {value:e}; input.nonfinite = \
                         \"refuse\" stops at the first NaN, infinite or out-of-range sample (beyond ±{MAX_AMPLITUDE:e}, \
                         which single precision cannot transform; \"zero\" sets them to zero)",
                        s + 1,
                        g.samples.value(s),
                        g.samples.domain.unit(),
                        g.ilines.value(il),
                        g.xlines.value(xl),
                    ),
                ))
            }
        }
    }
}

/// Read the whole inlines `il` of `src` into `out` (`[il][xl][sample]`) and condition every trace as it is
/// decoded: one pass over the data, on at most 16 threads (see [`seis_core::host_pool`]). `mode` says whether `out`
/// is read next by this CPU or by a device copy.
pub fn read_conditioned(
    src: &dyn VolumeReader,
    il: Range<usize>,
    out: &mut [f32],
    conditioner: &TraceConditioner,
    mode: WriteMode,
) -> Result<()> {
    let [_, nx, nt] = src.geometry().shape();
    let first = il.start;
    let read = || {
        src.read_box_each(
            &IndexBox { il, xl: 0..nx, s: 0..nt },
            out,
            &|t, trace| conditioner.apply(first + t / nx, t % nx, 0, trace),
            mode,
        )
    };
    seis_core::host_pool::install(read)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fast_lengths() {
        assert_eq!(fast_len(7, false), 8);
        assert_eq!(fast_len(97, false), 100);
        assert_eq!(fast_len(121, false), 125);
        assert_eq!(fast_len(125, true), 128);
        assert_eq!(fast_len(1000, true), 1000);
        assert_eq!(fast_len(1001, true), 1024);
    }

    #[test]
    fn ramp_values_by_hand() {
        // width 2: (1 − cos(π/4)) / 2 and (1 − cos(3π/4)) / 2
        assert!((cosine_ramp(0, 2) - 0.146_446_6).abs() < 1e-6);
        assert!((cosine_ramp(1, 2) - 0.853_553_4).abs() < 1e-6);
        assert_eq!(cosine_ramp(2, 2), 1.0);
        for w in [3, 8, 21] {
            for d in 0..w {
                assert!((cosine_ramp(d, w) + cosine_ramp(w - 1 - d, w) - 1.0).abs() < 1e-6);
            }
        }
    }

    #[test]
    fn plan_tapers_ends_and_edges_only() {
        let params = WindowParams { time_taper_ms: 8.0, edge_taper_traces: 2, ..Default::default() };
        let w = WindowPlan::new([10, 3, 20], 2.0, &params); // 4 samples; xline axis too short for a ramp
        assert_eq!(w.ramp_lengths(), [4, 2, 0]);
        assert!(w.time[..16].iter().all(|&x| x == 1.0));
        assert_eq!(w.time[19], cosine_ramp(0, 4));
        assert_eq!(w.time[16], cosine_ramp(3, 4));
        assert_eq!(w.iline[0], cosine_ramp(0, 2));
        assert_eq!(w.iline[9], cosine_ramp(0, 2));
        assert_eq!(w.iline[8], cosine_ramp(1, 2));
        assert!(w.xline.iter().all(|&x| x == 1.0));
        // A taper longer than a quarter of the trace is clamped.
        let long = WindowPlan::new([4, 4, 20], 2.0, &WindowParams { time_taper_ms: 1000.0, ..params });
        assert_eq!(long.ramp_lengths()[0], 5);
    }

    #[test]
    fn reading_conditioned_applies_the_product_of_weights() {
        use seis_core::volume::{Domain, Geometry, LineAxis, SampleAxis, Volume};
        let params = WindowParams { time_taper_ms: 6.0, edge_taper_traces: 2, ..Default::default() };
        let shape = [9, 8, 12];
        let w = WindowPlan::new(shape, 2.0, &params);
        let g = Geometry::regular(
            LineAxis::new(1, 1, 9),
            LineAxis::new(1, 1, 8),
            SampleAxis { origin: 0.0, step: 2.0, len: 12, domain: Domain::Time },
        );
        let src = Volume { data: vec![1.0; g.n_values()], geometry: g };
        let mut chunk = vec![0.0f32; 3 * 8 * 12]; // inlines 6..9
        let c = TraceConditioner::new(&w, NonFinite::Zero);
        read_conditioned(&src, 6..9, &mut chunk, &c, WriteMode::Cached).unwrap();
        for il in 0..3 {
            for xl in 0..8 {
                for s in 0..12 {
                    let expect = w.iline[6 + il] * w.xline[xl] * w.time[s];
                    assert_eq!(chunk[(il * 8 + xl) * 12 + s], expect);
                }
            }
        }
        assert!(chunk[(2 * 8 + 4) * 12] < 0.2); // the last inline is on the ramp
        assert_eq!(c.check(&src).unwrap(), 0);
    }

    #[test]
    fn conditioning_applies_every_taper_weight_to_every_sample_and_part_of_a_trace() {
        // 12 × 10 traces of 40 samples: edge ramps of 2 traces, a time ramp of 10 samples.
        let params = WindowParams { time_taper_ms: 40.0, edge_taper_traces: 2, ..Default::default() };
        let w = WindowPlan::new([12, 10, 40], 4.0, &params);
        assert_eq!(w.ramp_lengths(), [10, 2, 2]);
        let c = TraceConditioner::new(&w, NonFinite::Zero);
        let value = |il: usize, xl: usize, k: usize| 1.0 + (il * 400 + xl * 40 + k) as f32 * 0.25;
        for (version, apply) in apply_versions() {
            for il in 0..12 {
                for xl in 0..10 {
                    // The whole trace, and parts starting before, at and inside the time ramp.
                    for s0 in [0, 25, 30, 35] {
                        let mut trace: Vec<f32> = (s0..40).map(|k| value(il, xl, k)).collect();
                        // A NaN in every seventh trace, zeroed before the taper.
                        let nan = (il * 10 + xl) % 7 == 0;
                        if nan {
                            trace[3] = f32::NAN;
                        }
                        apply(&c, il, xl, s0, &mut trace);
                        for (i, x) in trace.iter().enumerate() {
                            let k = s0 + i;
                            let input = if nan && i == 3 { 0.0 } else { value(il, xl, k) };
                            let expected = input * (w.iline[il] * w.xline[xl] * w.time[k]);
                            assert_eq!(*x, expected, "{version}: inline {il}, crossline {xl}, sample {k} from {s0}");
                        }
                    }
                }
            }
        }
    }

    type Apply = fn(&TraceConditioner, usize, usize, usize, &mut [f32]);

    /// The compiled versions of [`TraceConditioner::apply`] this CPU can run (see [`seis_core::simd`]).
    fn apply_versions() -> Vec<(&'static str, Apply)> {
        let mut versions: Vec<(&'static str, Apply)> =
            vec![("baseline", |c, il, xl, s0, t| c.apply_body(il, xl, s0, t))];
        #[cfg(target_arch = "x86_64")]
        if seis_core::simd::has_avx2() {
            // SAFETY: the CPU has AVX2.
            versions.push(("avx2", |c, il, xl, s0, t| unsafe { c.apply_avx2(il, xl, s0, t) }));
        }
        versions
    }

    #[test]
    #[allow(clippy::identity_op)] // the indices are spelled out as (il · nx + xl) · nt + s
    fn nonfinite_samples_are_zeroed_and_counted_or_refused_by_position() {
        use seis_core::volume::{Domain, Geometry, LineAxis, SampleAxis, Volume};
        let g = Geometry::regular(
            LineAxis::new(100, 2, 4),
            LineAxis::new(10, 1, 3),
            SampleAxis { origin: 0.0, step: 4.0, len: 5, domain: Domain::Time },
        );
        let mut data: Vec<f32> = (0..g.n_values()).map(|i| 1.0 + i as f32).collect();
        // inline index 1, crossline index 2, sample index 3 (12 ms, the 4th sample); then two more, later
        data[(1 * 3 + 2) * 5 + 3] = f32::NAN;
        data[(2 * 3 + 1) * 5] = f32::INFINITY;
        data[(3 * 3) * 5 + 4] = f32::NEG_INFINITY;
        let clean: Vec<f32> = data.iter().map(|x| if x.is_finite() { *x } else { 0.0 }).collect();
        let src = Volume { data, geometry: g.clone() };
        // no tapers, so the values pass through unchanged but for the non-finite ones
        let flat = WindowParams { time_taper_ms: 0.0, edge_taper_traces: 0, ..Default::default() };
        let w = WindowPlan::new(g.shape(), 4.0, &flat);

        let refuse = TraceConditioner::new(&w, NonFinite::Refuse);
        let mut out = vec![0.0f32; g.n_values()];
        read_conditioned(&src, 0..4, &mut out, &refuse, WriteMode::Cached).unwrap();
        let e = refuse.check(&src).unwrap_err().to_string();
        // inline index 1 → 102, crossline index 2 → 12, sample index 3 → 12 ms, the 4th sample
        assert!(e.contains("sample 4 (12 ms) of the trace at inline 102, crossline 12 is NaN"), "{e}");

        let zero = TraceConditioner::new(&w, NonFinite::Zero);
        read_conditioned(&src, 0..4, &mut out, &zero, WriteMode::Cached).unwrap();
        assert_eq!(zero.check(&src).unwrap(), 3);
        assert_eq!(out, clean);
    }

    #[test]
    fn samples_beyond_single_precision_sums_are_unusable() {
        for bad in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 1e35, -3e38, 1.1e20] {
            assert!(unusable(bad), "{bad}");
        }
        for good in [0.0, -0.0, 1.0, -2.5e9, 1e20, f32::MIN_POSITIVE] {
            assert!(!unusable(good), "{good}");
        }
    }

    #[test]
    fn padding_rounds_up_and_caps_auto() {
        let p = WindowParams::default();
        assert_eq!(p.padded_shape([100, 50, 251], [30, 80]), [135, 100, 512]);
        let fixed = WindowParams { lateral_pad: LateralPad::Traces(0), time_pad_factor: 4.0, ..p };
        assert_eq!(fixed.padded_shape([97, 8, 100], [30, 80]), [100, 8, 400]);
        assert_eq!(p.padded_shape([100, 1, 250], [30, 80]), [135, 1, 500]); // a 2-D line
    }

    #[test]
    fn lateral_pad_spellings() {
        #[derive(Deserialize)]
        struct T {
            window: WindowParams,
        }
        let t: T = toml::from_str("[window]\nlateral_pad = \"auto\"").unwrap();
        assert_eq!(t.window.lateral_pad, LateralPad::Auto);
        let t: T = toml::from_str("[window]\nlateral_pad = 32\ntime_pad_factor = 3.0").unwrap();
        assert_eq!(t.window.lateral_pad, LateralPad::Traces(32));
        assert_eq!(t.window.time_pad_factor, 3.0);
        assert!(toml::from_str::<T>("[window]\nlateral_pad = \"wide\"").is_err());
        assert!(toml::from_str::<T>("[window]\nedge_taper = 3").is_err());
        assert!(WindowParams { time_pad_factor: 0.5, ..Default::default() }.validate().is_err());
    }
}
