//! The one interface to volume data, whatever holds it (a SEG-Y or HDF5 file, or memory), and the checks
//! and identity digest every reader shares.

use super::geometry::{Geometry, IndexBox};
use crate::error::{Error, Result};

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
