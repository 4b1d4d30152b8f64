//! The in-memory model of a post-stack volume: its axes, its survey coordinates, which traces are live, and
//! selections of it by header value.
//!
//! Memory order is always `[iline][xline][sample]` with samples contiguous, and both line axes ascending,
//! whatever the order of the traces in the file: readers reorder at load.

use std::ops::Range;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// A regular axis of line numbers as stored in trace headers (inline or crossline numbers).
///
/// Always ascending: `step > 0`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LineAxis {
    pub first: i64,
    pub step: i64,
    pub len: usize,
}

impl LineAxis {
    pub fn new(first: i64, step: i64, len: usize) -> Self {
        assert!(step > 0, "line axes are ascending");
        LineAxis { first, step, len }
    }

    pub fn value(&self, index: usize) -> i64 {
        self.first + self.step * index as i64
    }

    pub fn last(&self) -> i64 {
        self.value(self.len.saturating_sub(1))
    }

    /// The index of a line number, if that number is on this axis.
    pub fn index_of(&self, value: i64) -> Option<usize> {
        // In 128 bits: a line number far from `first` must not overflow the difference.
        let d = i128::from(value) - i128::from(self.first);
        let step = i128::from(self.step);
        if d < 0 || d % step != 0 {
            return None;
        }
        let i = d / step;
        (i < self.len as i128).then_some(i as usize)
    }

    /// Indices of the lines whose numbers lie in `lo..=hi` (in either order).
    pub fn index_range(&self, lo: i64, hi: i64) -> Range<usize> {
        let (lo, hi) = if lo <= hi { (lo, hi) } else { (hi, lo) };
        // In 128 bits: with a step near the 64-bit limit, rounding up by adding `step - 1` would wrap.
        let (first, step, len) = (i128::from(self.first), i128::from(self.step), self.len as i128);
        let start = ((i128::from(lo) - first).max(0) + step - 1) / step;
        let end = if i128::from(hi) < first { 0 } else { ((i128::from(hi) - first) / step + 1).min(len) };
        let start = start.min(len);
        start as usize..end.max(start) as usize
    }

    pub fn sub(&self, r: Range<usize>) -> LineAxis {
        LineAxis { first: self.value(r.start), step: self.step, len: r.len() }
    }
}

/// Whether the trace axis is two-way time or depth.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Domain {
    /// Two-way time, in milliseconds.
    Time,
    /// Depth, in metres.
    Depth,
}

impl Domain {
    pub fn axis_name(self) -> &'static str {
        match self {
            Domain::Time => "twt",
            Domain::Depth => "depth",
        }
    }

    pub fn unit(self) -> &'static str {
        match self {
            Domain::Time => "ms",
            Domain::Depth => "m",
        }
    }
}

/// The sample axis along each trace: `origin + i * step` in the domain's unit (ms or m).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct SampleAxis {
    pub origin: f64,
    pub step: f64,
    pub len: usize,
    pub domain: Domain,
}

impl SampleAxis {
    pub fn value(&self, index: usize) -> f64 {
        self.origin + self.step * index as f64
    }

    pub fn last(&self) -> f64 {
        self.value(self.len.saturating_sub(1))
    }

    /// The index of the sample nearest to `value`, if `value` lies within half a step of the axis.
    pub fn nearest_index(&self, value: f64) -> Option<usize> {
        let f = (value - self.origin) / self.step;
        let i = f.round();
        (i >= 0.0 && (i as usize) < self.len && (f - i).abs() <= 0.5 + 1e-9).then_some(i as usize)
    }

    /// Indices of the samples whose values lie in `lo..=hi` (in either order), with a small tolerance.
    pub fn index_range(&self, lo: f64, hi: f64) -> Range<usize> {
        let (lo, hi) = if lo <= hi { (lo, hi) } else { (hi, lo) };
        let eps = 1e-6;
        let start = ((lo - self.origin) / self.step - eps).ceil().max(0.0) as usize;
        let end = (((hi - self.origin) / self.step + eps).floor() + 1.0).max(0.0) as usize;
        let start = start.min(self.len);
        start..end.min(self.len).max(start)
    }

    pub fn sub(&self, r: Range<usize>) -> SampleAxis {
        SampleAxis { origin: self.value(r.start), step: self.step, len: r.len(), domain: self.domain }
    }
}

/// Affine map from grid indices to projected survey coordinates (metres or feet, after the SEG-Y
/// coordinate scalar): `(x, y) = origin + il_index * per_iline + xl_index * per_xline`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct CoordTransform {
    pub origin: [f64; 2],
    /// Displacement from one inline to the next (same crossline).
    pub per_iline: [f64; 2],
    /// Displacement from one crossline to the next (same inline).
    pub per_xline: [f64; 2],
}

impl CoordTransform {
    pub fn xy(&self, il_index: f64, xl_index: f64) -> [f64; 2] {
        [
            self.origin[0] + il_index * self.per_iline[0] + xl_index * self.per_xline[0],
            self.origin[1] + il_index * self.per_iline[1] + xl_index * self.per_xline[1],
        ]
    }

    /// Distance between adjacent inlines and between adjacent crosslines.
    pub fn bin_size(&self) -> [f64; 2] {
        [self.per_iline[0].hypot(self.per_iline[1]), self.per_xline[0].hypot(self.per_xline[1])]
    }

    /// The same map for a grid that starts at `(il0, xl0)` of this one.
    pub fn shifted(&self, il0: usize, xl0: usize) -> CoordTransform {
        CoordTransform { origin: self.xy(il0 as f64, xl0 as f64), ..*self }
    }
}

/// The shape and labels of a volume: axes, survey coordinates and which traces hold data.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
pub struct Geometry {
    pub ilines: LineAxis,
    pub xlines: LineAxis,
    pub samples: SampleAxis,
    /// `None` when the file carries no usable coordinates.
    pub coords: Option<CoordTransform>,
    /// One flag per (iline, xline) in memory order: `false` where the file had no trace (filled with zeros).
    pub live: Vec<bool>,
}

/// The live flags are counted, not listed: a survey has millions of traces.
impl std::fmt::Debug for Geometry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let live = self.live.iter().filter(|&&l| l).count();
        f.debug_struct("Geometry")
            .field("ilines", &self.ilines)
            .field("xlines", &self.xlines)
            .field("samples", &self.samples)
            .field("coords", &self.coords)
            .field("live", &format_args!("{live} of {}", self.live.len()))
            .finish()
    }
}

impl Geometry {
    /// A fully live geometry without coordinates.
    pub fn regular(ilines: LineAxis, xlines: LineAxis, samples: SampleAxis) -> Self {
        let n = ilines.len * xlines.len;
        Geometry { ilines, xlines, samples, coords: None, live: vec![true; n] }
    }

    /// `[n_iline, n_xline, n_sample]`.
    pub fn shape(&self) -> [usize; 3] {
        [self.ilines.len, self.xlines.len, self.samples.len]
    }

    pub fn n_traces(&self) -> usize {
        self.ilines.len * self.xlines.len
    }

    pub fn n_values(&self) -> usize {
        self.n_traces() * self.samples.len
    }

    pub fn n_missing(&self) -> usize {
        self.live.iter().filter(|l| !**l).count()
    }

    pub fn full_box(&self) -> IndexBox {
        IndexBox { il: 0..self.ilines.len, xl: 0..self.xlines.len, s: 0..self.samples.len }
    }

    /// The geometry of a box cut from this one.
    pub fn subset(&self, b: &IndexBox) -> Geometry {
        let nx = self.xlines.len;
        let live =
            b.il.clone().flat_map(|i| b.xl.clone().map(move |j| (i, j))).map(|(i, j)| self.live[i * nx + j]).collect();
        Geometry {
            ilines: self.ilines.sub(b.il.clone()),
            xlines: self.xlines.sub(b.xl.clone()),
            samples: self.samples.sub(b.s.clone()),
            coords: self.coords.map(|c| c.shifted(b.il.start, b.xl.start)),
            live,
        }
    }

    pub fn iline_index(&self, value: i64) -> Result<usize> {
        self.ilines.index_of(value).ok_or_else(|| {
            Error::Request(format!(
                "inline {value} is not in the survey (inlines {}..={} step {})",
                self.ilines.first,
                self.ilines.last(),
                self.ilines.step
            ))
        })
    }

    pub fn xline_index(&self, value: i64) -> Result<usize> {
        self.xlines.index_of(value).ok_or_else(|| {
            Error::Request(format!(
                "crossline {value} is not in the survey (crosslines {}..={} step {})",
                self.xlines.first,
                self.xlines.last(),
                self.xlines.step
            ))
        })
    }

    pub fn sample_index(&self, value: f64) -> Result<usize> {
        let a = &self.samples;
        a.nearest_index(value).ok_or_else(|| {
            Error::Request(format!(
                "{} {value} {} is outside the sample axis ({}..={} {} step {})",
                a.domain.axis_name(),
                a.domain.unit(),
                a.origin,
                a.last(),
                a.domain.unit(),
                a.step
            ))
        })
    }

    /// Turn a selection by header values into grid indices, or say why it selects nothing.
    pub fn index_box(&self, sel: &ValueBox) -> Result<IndexBox> {
        let il = match sel.iline {
            Some([a, b]) => self.ilines.index_range(a, b),
            None => 0..self.ilines.len,
        };
        let xl = match sel.xline {
            Some([a, b]) => self.xlines.index_range(a, b),
            None => 0..self.xlines.len,
        };
        let s = match sel.sample {
            Some([a, b]) => self.samples.index_range(a, b),
            None => 0..self.samples.len,
        };
        let b = IndexBox { il, xl, s };
        if b.is_empty() {
            return Err(Error::Request(format!(
                "the box {sel} selects nothing from inlines {}..={}, crosslines {}..={}, {} {}..={} {}",
                self.ilines.first,
                self.ilines.last(),
                self.xlines.first,
                self.xlines.last(),
                self.samples.domain.axis_name(),
                self.samples.origin,
                self.samples.last(),
                self.samples.domain.unit()
            )));
        }
        Ok(b)
    }
}

/// A box of grid indices `[il][xl][s]`; the data of a box is stored in that order, samples contiguous.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexBox {
    pub il: Range<usize>,
    pub xl: Range<usize>,
    pub s: Range<usize>,
}

impl IndexBox {
    pub fn shape(&self) -> [usize; 3] {
        [self.il.len(), self.xl.len(), self.s.len()]
    }

    pub fn len(&self) -> usize {
        self.il.len() * self.xl.len() * self.s.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A selection by header values; `None` on an axis means all of it. Bounds are inclusive, in either order.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ValueBox {
    pub iline: Option<[i64; 2]>,
    pub xline: Option<[i64; 2]>,
    /// Time in ms or depth in m, following the volume's domain.
    pub sample: Option<[f64; 2]>,
}

impl std::fmt::Display for ValueBox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut parts = Vec::new();
        if let Some([a, b]) = self.iline {
            parts.push(format!("iline {a}..={b}"));
        }
        if let Some([a, b]) = self.xline {
            parts.push(format!("xline {a}..={b}"));
        }
        if let Some([a, b]) = self.sample {
            parts.push(format!("sample {a}..={b}"));
        }
        if parts.is_empty() {
            parts.push("everything".into());
        }
        write!(f, "[{}]", parts.join(", "))
    }
}

/// What [`VolumeReader::read_box_each`] calls on each trace as it is decoded: the trace's index in the box
/// (`[il][xl]` order) and its samples, which it may change in place.
pub type TraceHook<'a> = &'a (dyn Fn(usize, &mut [f32]) + Sync);

/// How a reader writes the values it decodes into the caller's buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteMode {
    /// Ordinary stores: the values stay in the CPU's caches for the computation that reads them next.
    Cached,
    /// Stores that go around the caches (see [`crate::simd::stream_copy`]), for a buffer the CPU does not
    /// read again, such as a pinned staging buffer a device copies from. An ordinary store first reads the
    /// cache line it changes; a streaming store of whole lines does not. Decoding into such a buffer then
    /// passes over memory twice (the file's pages read, the buffer written) instead of three times.
    Streaming,
}

/// A source of volume data: a SEG-Y or HDF5 file, or memory.
///
/// `read_box` decodes only what the box covers into a buffer the caller provides (which may be pinned
/// memory); traces missing from the file read as zeros.
pub trait VolumeReader: Send + Sync {
    fn geometry(&self) -> &Geometry;

    /// A short human-readable name of the source (its path).
    fn describe(&self) -> String;

    /// Read `b` into `out`, which must hold exactly `b.len()` values, in `[il][xl][s]` order.
    fn read_box(&self, b: &IndexBox, out: &mut [f32]) -> Result<()>;

    /// Read `b` as [`VolumeReader::read_box`] does and hand each trace of the box to `each(t, samples)` (`t`
    /// counts the box's traces in `[il][xl]` order) while it is fresh; what `each` leaves in the trace is
    /// what `out` receives. Readers that decode trace by trace do both in one pass over memory; this default
    /// reads the box first. `mode` says how `out` is best written: readers may ignore it.
    fn read_box_each(&self, b: &IndexBox, out: &mut [f32], each: TraceHook, mode: WriteMode) -> Result<()> {
        let _ = mode;
        use rayon::prelude::*;
        self.read_box(b, out)?;
        out.par_chunks_mut(b.s.len().max(1)).enumerate().for_each(|(t, trace)| each(t, trace));
        Ok(())
    }

    /// Read the whole volume into `out` (`geometry().n_values()` values).
    fn read_all(&self, out: &mut [f32]) -> Result<()> {
        self.read_box(&self.geometry().full_box(), out)
    }

    /// Feed `sha` what tells this source from another of the same geometry: processes that must read the
    /// same input (the shares of a job) compare it. This default reads a fixed sample of traces; readers
    /// with trace headers add them.
    fn digest_identity(&self, sha: &mut sha2::Sha256) -> Result<()> {
        digest_sampled_traces(self, sha)
    }
}

/// Traces of a source read for its identity, spread evenly over the grid: enough that a source whose
/// values differ is caught unless it differs only away from all of them, few enough to cost nothing.
const IDENTITY_TRACES: usize = 64;

/// Feed `sha` the values of `IDENTITY_TRACES` traces of `src` spread evenly over its grid, as decoded
/// (bit for bit, so that NaNs count too).
pub fn digest_sampled_traces<R: VolumeReader + ?Sized>(src: &R, sha: &mut sha2::Sha256) -> Result<()> {
    use sha2::Digest;
    let g = src.geometry();
    let (traces, n_xl, n_s) = (g.n_traces(), g.xlines.len, g.samples.len);
    let picks = traces.min(IDENTITY_TRACES);
    let mut trace = vec![0.0f32; n_s];
    for k in 0..picks {
        let t = if picks > 1 { k * (traces - 1) / (picks - 1) } else { 0 };
        let (il, xl) = (t / n_xl, t % n_xl);
        src.read_box(&IndexBox { il: il..il + 1, xl: xl..xl + 1, s: 0..n_s }, &mut trace)?;
        let bytes: Vec<u8> = trace.iter().flat_map(|v| v.to_le_bytes()).collect();
        sha.update(&bytes);
    }
    Ok(())
}

/// The error of a [`VolumeReader::read_box`] whose buffer does not hold exactly the box's values.
pub fn check_box_buffer(b: &IndexBox, out: &[f32]) -> Result<()> {
    match out.len() == b.len() {
        true => Ok(()),
        false => Err(Error::Request(format!("read_box: buffer holds {} values, box needs {}", out.len(), b.len()))),
    }
}

/// A volume held in memory: the result of a read, a synthetic model, or a product about to be written.
#[derive(Clone, Debug)]
pub struct Volume {
    pub geometry: Geometry,
    pub data: Vec<f32>,
}

impl Volume {
    pub fn zeros(geometry: Geometry) -> Self {
        let n = geometry.n_values();
        Volume { geometry, data: vec![0.0; n] }
    }

    /// Read a whole source into memory.
    pub fn read(src: &dyn VolumeReader) -> Result<Self> {
        let geometry = src.geometry().clone();
        let mut data = vec![0.0f32; geometry.n_values()];
        src.read_all(&mut data)?;
        Ok(Volume { geometry, data })
    }

    pub fn trace(&self, il: usize, xl: usize) -> &[f32] {
        let ns = self.geometry.samples.len;
        let t = il * self.geometry.xlines.len + xl;
        &self.data[t * ns..(t + 1) * ns]
    }

    pub fn trace_mut(&mut self, il: usize, xl: usize) -> &mut [f32] {
        let ns = self.geometry.samples.len;
        let t = il * self.geometry.xlines.len + xl;
        &mut self.data[t * ns..(t + 1) * ns]
    }

    /// Copy a box out of this volume (in `[il][xl][s]` order).
    pub fn cut(&self, b: &IndexBox) -> Volume {
        let mut data = Vec::with_capacity(b.len());
        for i in b.il.clone() {
            for j in b.xl.clone() {
                data.extend_from_slice(&self.trace(i, j)[b.s.clone()]);
            }
        }
        Volume { geometry: self.geometry.subset(b), data }
    }
}

impl VolumeReader for Volume {
    fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    fn describe(&self) -> String {
        "in-memory volume".into()
    }

    fn read_box(&self, b: &IndexBox, out: &mut [f32]) -> Result<()> {
        check_box_buffer(b, out)?;
        let ns = b.s.len();
        let mut k = 0;
        for i in b.il.clone() {
            for j in b.xl.clone() {
                out[k..k + ns].copy_from_slice(&self.trace(i, j)[b.s.clone()]);
                k += ns;
            }
        }
        Ok(())
    }
}

/// Amplitude statistics of a volume, with non-finite samples (NaN, ±Inf) counted apart.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct AmplitudeStats {
    pub min: f64,
    pub max: f64,
    pub mean: f64,
    pub rms: f64,
    /// Finite samples counted.
    pub finite: u64,
    pub nan: u64,
    pub infinite: u64,
}

impl AmplitudeStats {
    /// Statistics of `values`.
    pub fn of(values: &[f32]) -> Self {
        use rayon::prelude::*;
        let acc = values.par_chunks(1 << 16).map(Accumulator::of).reduce(Accumulator::default, Accumulator::merge);
        acc.finish()
    }

    /// Statistics of a whole source, read a block of inlines at a time (never the whole volume at once).
    pub fn of_reader(src: &dyn VolumeReader, progress: &dyn crate::progress::Progress) -> Result<Self> {
        use rayon::prelude::*;
        let g = src.geometry();
        let per_inline = (g.xlines.len * g.samples.len).max(1);
        let block = ((64usize << 20) / 4 / per_inline).clamp(1, g.ilines.len.max(1));
        let mut buf: Vec<f32> =
            crate::alloc::try_vec(block * per_inline, std::path::Path::new(&src.describe()), "a block of inlines")?;
        let mut acc = Accumulator::default();
        progress.begin("statistics", g.ilines.len as u64);
        let mut il = 0;
        while il < g.ilines.len {
            crate::cancel::CancelToken::process().check()?;
            let n = block.min(g.ilines.len - il);
            let b = IndexBox { il: il..il + n, xl: 0..g.xlines.len, s: 0..g.samples.len };
            let out = &mut buf[..b.len()];
            src.read_box(&b, out)?;
            // Dead traces read as zeros; leave them out of the statistics of real data.
            let ns = g.samples.len.max(1);
            let live = &g.live[il * g.xlines.len..(il + n) * g.xlines.len];
            let part = out
                .par_chunks(ns)
                .zip(live.par_iter())
                .filter(|(_, l)| **l)
                .map(|(t, _)| Accumulator::of(t))
                .reduce(Accumulator::default, Accumulator::merge);
            acc = acc.merge(part);
            progress.advance(n as u64);
            il += n;
        }
        progress.finish();
        Ok(acc.finish())
    }
}

#[derive(Clone, Copy, Default)]
struct Accumulator {
    min: f64,
    max: f64,
    sum: f64,
    sum2: f64,
    finite: u64,
    nan: u64,
    infinite: u64,
}

impl Accumulator {
    fn of(values: &[f32]) -> Self {
        let mut a = Accumulator { min: f64::INFINITY, max: f64::NEG_INFINITY, ..Default::default() };
        for &v in values {
            if v.is_finite() {
                let v = v as f64;
                a.min = a.min.min(v);
                a.max = a.max.max(v);
                a.sum += v;
                a.sum2 += v * v;
                a.finite += 1;
            } else if v.is_nan() {
                a.nan += 1;
            } else {
                a.infinite += 1;
            }
        }
        a
    }

    fn merge(self, o: Self) -> Self {
        if self.finite + self.nan + self.infinite == 0 {
            return o;
        }
        if o.finite + o.nan + o.infinite == 0 {
            return self;
        }
        Accumulator {
            min: self.min.min(o.min),
            max: self.max.max(o.max),
            sum: self.sum + o.sum,
            sum2: self.sum2 + o.sum2,
            finite: self.finite + o.finite,
            nan: self.nan + o.nan,
            infinite: self.infinite + o.infinite,
        }
    }

    fn finish(self) -> AmplitudeStats {
        let n = self.finite.max(1) as f64;
        let any = self.finite > 0;
        AmplitudeStats {
            min: if any { self.min } else { 0.0 },
            max: if any { self.max } else { 0.0 },
            mean: self.sum / n,
            rms: (self.sum2 / n).sqrt(),
            finite: self.finite,
            nan: self.nan,
            infinite: self.infinite,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_buffer_not_the_size_of_the_box_is_refused() {
        let axis = SampleAxis { origin: 0.0, step: 4.0, len: 5, domain: Domain::Time };
        let v = Volume::zeros(Geometry::regular(LineAxis::new(1, 1, 3), LineAxis::new(1, 1, 2), axis));
        let b = v.geometry.full_box();
        let e = v.read_box(&b, &mut [0.0; 29]).unwrap_err().to_string();
        assert!(e.contains("holds 29 values, box needs 30"), "{e}");
        assert!(v.read_box(&b, &mut [1.0; 30]).is_ok());
    }

    #[test]
    fn line_axis_lookup() {
        let a = LineAxis::new(100, 2, 5); // 100 102 104 106 108
        assert_eq!(a.last(), 108);
        assert_eq!(a.index_of(104), Some(2));
        assert_eq!(a.index_of(105), None);
        assert_eq!(a.index_of(110), None);
        assert_eq!(a.index_of(98), None);
        assert_eq!(a.index_range(101, 107), 1..4);
        assert_eq!(a.index_range(107, 101), 1..4);
        assert_eq!(a.index_range(0, 99), 0..0);
        assert_eq!(a.index_range(109, 200), 5..5);
        assert_eq!(a.index_range(0, 1000), 0..5);
        // Steps and numbers near the 64-bit limits (an HDF5 axis may hold them) select without wrapping.
        let wide = LineAxis::new(-(1 << 62), (1 << 62) + 7, 2);
        assert_eq!(wide.index_range(wide.value(1), wide.value(1)), 1..2);
        assert_eq!(wide.index_of(wide.value(1)), Some(1));
        assert_eq!(wide.index_of(i64::MAX), None);
        assert_eq!(wide.index_range(i64::MIN, i64::MAX), 0..2);
    }

    #[test]
    fn sample_axis_lookup() {
        let a = SampleAxis { origin: 4.0, step: 4.0, len: 10, domain: Domain::Time }; // 4..=40
        assert_eq!(a.nearest_index(4.0), Some(0));
        assert_eq!(a.nearest_index(9.9), Some(1));
        assert_eq!(a.nearest_index(41.9), Some(9));
        assert_eq!(a.nearest_index(43.0), None);
        assert_eq!(a.index_range(8.0, 16.0), 1..4);
        assert_eq!(a.index_range(7.0, 17.0), 1..4);
        assert_eq!(a.index_range(100.0, 200.0), 10..10);
    }

    #[test]
    #[allow(clippy::identity_op)] // the index is spelled out as (il · nx + xl) · nt + s
    fn cut_and_subset_agree() {
        let g = Geometry::regular(
            LineAxis::new(1, 1, 3),
            LineAxis::new(10, 5, 4),
            SampleAxis { origin: 0.0, step: 2.0, len: 6, domain: Domain::Time },
        );
        let mut v = Volume::zeros(g);
        for (k, x) in v.data.iter_mut().enumerate() {
            *x = k as f32;
        }
        let b = v
            .geometry
            .index_box(&ValueBox { iline: Some([2, 3]), xline: Some([15, 20]), sample: Some([2.0, 6.0]) })
            .unwrap();
        assert_eq!(b, IndexBox { il: 1..3, xl: 1..3, s: 1..4 });
        let c = v.cut(&b);
        assert_eq!(c.geometry.shape(), [2, 2, 3]);
        assert_eq!(c.geometry.ilines.first, 2);
        assert_eq!(c.geometry.xlines.first, 15);
        assert_eq!(c.geometry.samples.origin, 2.0);
        // element (il=1, xl=1, s=1) of the original is the first of the cut
        assert_eq!(c.data[0], ((1 * 4 + 1) * 6 + 1) as f32);
        let mut out = vec![0.0; b.len()];
        v.read_box(&b, &mut out).unwrap();
        assert_eq!(out, c.data);
        assert!(v.geometry.index_box(&ValueBox { iline: Some([7, 9]), ..Default::default() }).is_err());
    }

    #[test]
    fn amplitude_statistics_count_non_finite_samples_apart() {
        let v = [1.0f32, -3.0, f32::NAN, 2.0, f32::INFINITY, f32::NEG_INFINITY];
        let s = AmplitudeStats::of(&v);
        assert_eq!((s.finite, s.nan, s.infinite), (3, 1, 2));
        assert_eq!((s.min, s.max), (-3.0, 2.0));
        assert!((s.mean - 0.0).abs() < 1e-12);
        assert!((s.rms - (14.0f64 / 3.0).sqrt()).abs() < 1e-12);
        let empty = AmplitudeStats::of(&[]);
        assert_eq!((empty.min, empty.max, empty.finite), (0.0, 0.0, 0));

        // from a reader: the dead trace is left out
        let mut g = Geometry::regular(
            LineAxis::new(1, 1, 2),
            LineAxis::new(1, 1, 2),
            SampleAxis { origin: 0.0, step: 4.0, len: 2, domain: Domain::Time },
        );
        g.live[3] = false;
        let vol = Volume { geometry: g, data: vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 0.0, 0.0] };
        let s = AmplitudeStats::of_reader(&vol, &crate::progress::Silent).unwrap();
        assert_eq!((s.finite, s.min, s.max), (6, 1.0, 6.0));
        assert!((s.mean - 3.5).abs() < 1e-12);
    }
}
