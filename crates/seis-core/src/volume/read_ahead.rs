//! A reader that holds the first inlines of a range in memory, read there while the process waits for
//! something else.
//!
//! A GPU run cannot ingest the input before its engine is set up: the CUDA context, and for a rank of a
//! run over several GPUs the meeting with the others (NCCL), which together take from a few tenths of a
//! second on one GPU to about two seconds on four. The host is idle meanwhile. [`ReadAhead::fill`] reads
//! the inlines the ingest takes first into memory until the engine is ready, and the ingest then finds them
//! decoded: from a file in the page cache, copying them costs a fraction of decoding them again, and from a
//! disk or a network file system the wait for the device hid the wait for the file.
//!
//! What is held is exactly what the reader below returns: every read of held inlines equals a read of the
//! file, values and missing traces alike, and so does the source's identity.

use std::ops::Range;

use rayon::prelude::*;

use super::geometry::{Geometry, IndexBox};
use super::reader::{check_box_buffer, TraceHook, VolumeReader, WriteMode};
use crate::error::Result;

/// A reader, and some of its inlines read ahead into memory (none until [`ReadAhead::fill`]).
pub struct ReadAhead {
    inner: Box<dyn VolumeReader>,
    /// The inlines held, whole, and their values in `[il][xl][s]` order.
    held: Range<usize>,
    values: Vec<f32>,
}

impl ReadAhead {
    pub fn new(inner: Box<dyn VolumeReader>) -> Self {
        ReadAhead { inner, held: 0..0, values: Vec::new() }
    }

    /// The inlines held in memory.
    pub fn held(&self) -> Range<usize> {
        self.held.clone()
    }

    /// Read `inlines` into memory from their first, `step` inlines at a time, until `stop()` says so,
    /// `max_bytes` would be exceeded or all are held; what was held before is let go. Returns the inlines
    /// held. Memory that cannot be had, or a read that fails, ends the reading ahead quietly: the inlines
    /// not held are read from the source when asked for, where a failure is reported in its context.
    pub fn fill(
        &mut self,
        inlines: Range<usize>,
        step: usize,
        max_bytes: u64,
        stop: &dyn Fn() -> bool,
    ) -> Range<usize> {
        let g = self.inner.geometry();
        let per_inline = g.xlines.len * g.samples.len;
        let inlines = inlines.start.min(g.ilines.len)..inlines.end.min(g.ilines.len);
        let room = usize::try_from(max_bytes / 4).unwrap_or(usize::MAX) / per_inline.max(1);
        let wanted = inlines.len().min(room);
        let (step, full) = (step.max(1), g.full_box());
        self.held = inlines.start..inlines.start;
        self.values = Vec::new();
        if wanted == 0 || self.values.try_reserve_exact(wanted * per_inline).is_err() {
            return self.held();
        }
        while self.held.len() < wanted && !stop() {
            let next = self.held.end..(self.held.end + step).min(inlines.start + wanted);
            let at = self.values.len();
            self.values.resize(at + next.len() * per_inline, 0.0);
            let b = IndexBox { il: next.clone(), ..full.clone() };
            if self.inner.read_box(&b, &mut self.values[at..]).is_err() {
                self.values.truncate(at);
                break;
            }
            self.held.end = next.end;
        }
        self.held()
    }

    /// Copy the held inlines `il` of box `b` into `out` (their part of the box), handing each trace to
    /// `each` with its index in the box; streaming stores for `mode` `Streaming`.
    fn copy_held(&self, b: &IndexBox, il: Range<usize>, out: &mut [f32], each: Option<TraceHook>, mode: WriteMode) {
        let g = self.inner.geometry();
        let (nx, ns) = (g.xlines.len, g.samples.len);
        let (bx, bs) = (b.xl.len(), b.s.len());
        // The index in the box of the first trace copied.
        let first = (il.start - b.il.start) * bx;
        out.par_chunks_mut(bs.max(1)).enumerate().for_each(|(k, trace)| {
            let (i, x) = (il.start + k / bx, b.xl.start + k % bx);
            let from = ((i - self.held.start) * nx + x) * ns + b.s.start;
            let from = &self.values[from..from + bs];
            match mode {
                WriteMode::Streaming => crate::simd::stream_copy(from, trace),
                WriteMode::Cached => trace.copy_from_slice(from),
            }
            if let Some(each) = each {
                each(first + k, trace);
            }
        });
        if mode == WriteMode::Streaming {
            crate::simd::stream_fence();
        }
    }

    /// Read `b` piece by piece: the inlines before those held, the held ones, and those after, each from
    /// where it is.
    fn read_pieces(&self, b: &IndexBox, out: &mut [f32], each: Option<TraceHook>, mode: WriteMode) -> Result<()> {
        let g = self.inner.geometry();
        let inside = b.xl.end <= g.xlines.len && b.s.end <= g.samples.len;
        let held = b.il.start.max(self.held.start)..b.il.end.min(self.held.end);
        if !inside || held.is_empty() {
            return self.read_source(b, out, each, mode);
        }
        check_box_buffer(b, out)?;
        let per_inline = b.xl.len() * b.s.len();
        let (before, rest) = out.split_at_mut((held.start - b.il.start) * per_inline);
        let (middle, after) = rest.split_at_mut(held.len() * per_inline);
        if !before.is_empty() {
            let part = IndexBox { il: b.il.start..held.start, ..b.clone() };
            self.read_source(&part, before, each, mode)?;
        }
        self.copy_held(b, held.clone(), middle, each, mode);
        if !after.is_empty() {
            let part = IndexBox { il: held.end..b.il.end, ..b.clone() };
            // The hook counts the traces of the whole box: this part's start later.
            let offset = (held.end - b.il.start) * b.xl.len();
            let shifted = each.map(|each| move |t: usize, trace: &mut [f32]| each(offset + t, trace));
            match &shifted {
                Some(hook) => self.inner.read_box_each(&part, after, hook, mode)?,
                None => self.inner.read_box(&part, after)?,
            }
        }
        Ok(())
    }

    fn read_source(&self, b: &IndexBox, out: &mut [f32], each: Option<TraceHook>, mode: WriteMode) -> Result<()> {
        match each {
            Some(each) => self.inner.read_box_each(b, out, each, mode),
            None => self.inner.read_box(b, out),
        }
    }
}

impl VolumeReader for ReadAhead {
    fn geometry(&self) -> &Geometry {
        self.inner.geometry()
    }

    fn describe(&self) -> String {
        self.inner.describe()
    }

    fn read_box(&self, b: &IndexBox, out: &mut [f32]) -> Result<()> {
        self.read_pieces(b, out, None, WriteMode::Cached)
    }

    fn read_box_each(&self, b: &IndexBox, out: &mut [f32], each: TraceHook, mode: WriteMode) -> Result<()> {
        self.read_pieces(b, out, Some(each), mode)
    }

    fn digest_identity(&self, sha: &mut sha2::Sha256) -> Result<()> {
        self.inner.digest_identity(sha)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::volume::{Domain, LineAxis, SampleAxis, Volume};
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    /// 7 inlines × 5 crosslines × 6 samples; the value tells where it is.
    fn volume() -> Volume {
        let samples = SampleAxis { origin: 0.0, step: 4.0, len: 6, domain: Domain::Time };
        let mut v = Volume::zeros(Geometry::regular(LineAxis::new(1, 1, 7), LineAxis::new(10, 2, 5), samples));
        for il in 0..7 {
            for xl in 0..5 {
                for (s, x) in v.trace_mut(il, xl).iter_mut().enumerate() {
                    *x = (il * 100 + xl * 10 + s) as f32;
                }
            }
        }
        v
    }

    /// A source that counts the values it is asked for, to show what came from memory.
    struct Counting(Volume, Arc<AtomicUsize>);

    impl VolumeReader for Counting {
        fn geometry(&self) -> &Geometry {
            &self.0.geometry
        }
        fn describe(&self) -> String {
            "counting".into()
        }
        fn read_box(&self, b: &IndexBox, out: &mut [f32]) -> Result<()> {
            self.1.fetch_add(b.len(), Ordering::Relaxed);
            let [ni, nx, ns] = self.0.geometry.shape();
            if b.il.end > ni || b.xl.end > nx || b.s.end > ns {
                return Err(crate::error::Error::Request(format!("{b:?} is beyond the volume")));
            }
            self.0.read_box(b, out)
        }
    }

    fn boxes() -> Vec<IndexBox> {
        let b = |il: Range<usize>, xl: Range<usize>, s: Range<usize>| IndexBox { il, xl, s };
        vec![
            b(0..7, 0..5, 0..6), // across all three pieces
            b(2..5, 0..5, 0..6), // only what is held
            b(3..4, 1..3, 2..5), // a part of held traces
            b(0..3, 2..5, 0..6), // before, then held
            b(4..7, 0..5, 1..2), // held, then after
            b(5..7, 0..5, 0..6), // only after
        ]
    }

    /// Every read, with and without a hook, in both write modes, equals the source's; held inlines come
    /// from memory.
    #[test]
    fn reads_of_held_inlines_equal_the_source_and_cost_it_nothing() {
        let source = volume();
        let asked = Arc::new(AtomicUsize::new(0));
        let mut ahead = ReadAhead::new(Box::new(Counting(volume(), asked.clone())));
        assert_eq!(ahead.fill(2..5, 2, u64::MAX, &|| false), 2..5);
        asked.store(0, Ordering::Relaxed);
        for b in boxes() {
            let mut expected = vec![0.0; b.len()];
            source.read_box(&b, &mut expected).unwrap();
            let mut got = vec![-1.0; b.len()];
            ahead.read_box(&b, &mut got).unwrap();
            assert_eq!(got, expected, "{b:?}");
            // The hook sees each trace of the box once, by its index in the box, and what it leaves is read.
            let hook = |t: usize, trace: &mut [f32]| trace.iter_mut().for_each(|x| *x = -(*x) - t as f32 * 1e4);
            source.read_box_each(&b, &mut expected, &hook, WriteMode::Cached).unwrap();
            for mode in [WriteMode::Cached, WriteMode::Streaming] {
                let mut got = vec![-1.0; b.len()];
                ahead.read_box_each(&b, &mut got, &hook, mode).unwrap();
                assert_eq!(got, expected, "{b:?} {mode:?}");
            }
        }
        // Only the inlines not held were read from the source: before 2 and from 5 on.
        let outside: usize = boxes()
            .iter()
            .map(|b| {
                let held = b.il.start.max(2)..b.il.end.min(5);
                (b.il.len() - held.len().min(b.il.len())) * b.xl.len() * b.s.len()
            })
            .sum();
        // One read_box and two read_box_each of each box.
        assert_eq!(asked.load(Ordering::Relaxed), outside * 3);
    }

    /// Reading ahead stops when asked to and within its memory; a box beyond the volume is the source's to
    /// refuse.
    #[test]
    fn reading_ahead_stops_when_asked_and_within_its_memory() {
        let asked = Arc::new(AtomicUsize::new(0));
        let mut ahead = ReadAhead::new(Box::new(Counting(volume(), asked.clone())));
        let calls = AtomicUsize::new(0);
        // Stop after the second look: two steps of 2 inlines.
        let stop = || calls.fetch_add(1, Ordering::Relaxed) >= 2;
        assert_eq!(ahead.fill(1..7, 2, u64::MAX, &stop), 1..5);
        // 3 inlines of 5 × 6 values fit in 400 bytes (360), 4 do not.
        assert_eq!(ahead.fill(0..7, 1, 400, &|| false), 0..3);
        assert_eq!(ahead.fill(0..7, 1, 100, &|| false), 0..0);
        assert_eq!(ahead.fill(3..99, 10, u64::MAX, &|| false), 3..7);
        let before = asked.load(Ordering::Relaxed);
        let b = IndexBox { il: 3..5, xl: 0..5, s: 0..7 };
        let e = ahead.read_box(&b, &mut vec![0.0; b.len()]).unwrap_err();
        assert!(e.to_string().contains("beyond the volume"), "{e}");
        assert_eq!(asked.load(Ordering::Relaxed), before + b.len());
    }
}
