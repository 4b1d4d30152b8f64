//! A SEG-Y file seen as a post-stack volume: the grid from the header scan, and boxes of it decoded in
//! parallel straight into the caller's buffer, touching only the traces and samples the box covers.

use std::path::Path;

use rayon::prelude::*;
use serde::Serialize;

use super::byte_order::ByteOrder;
use super::file::SegyFile;
use super::geometry::{Direction, Grid, Sorting, MISSING};
use super::layout::ByteOrderSource;
use super::text::TextEncoding;
use super::trace_header::HeaderLocations;
use super::SegyOptions;
use seis_core::cancel::CancelToken;
use seis_core::error::{Error, Result};
use seis_core::volume::{Domain, Geometry, IndexBox, LineAxis, TraceHook, ValueBox, Volume, VolumeReader, WriteMode};

/// Output bytes each parallel task decodes at most: large enough that scheduling costs nothing.
const TASK_BYTES: usize = 1 << 18;
/// Tasks per thread at least, so that boxes of short traces (a time slice touches one page per trace) still
/// spread over the cores and balance.
const TASKS_PER_THREAD: usize = 4;
/// How many traces ahead of the one being decoded its samples are asked for. Each trace starts on a new page,
/// where the hardware prefetchers stop; asking two traces ahead raised a 16-core decode of a cached file from
/// 44 to 66 GB/s (H200 host; one and four traces ahead: 60 and 65 GB/s).
const PREFETCH_TRACES: usize = 2;

/// A post-stack SEG-Y volume opened for reading.
#[derive(Debug)]
pub struct SegyReader {
    file: SegyFile,
    grid: Grid,
}

impl SegyReader {
    /// Open the file, decode its headers and place every trace in the grid (one pass over the headers).
    pub fn open(path: &Path, opts: &SegyOptions) -> Result<SegyReader> {
        let t = std::time::Instant::now();
        let file = SegyFile::open(path, opts)?;
        tracing::trace!("{}: file headers read in {:.1} ms", path.display(), t.elapsed().as_secs_f64() * 1e3);
        SegyReader::of_file(file)
    }

    /// Open a Seismic Unix file ([`SegyFile::open_su`]) and place its traces as [`SegyReader::open`] does.
    pub fn open_su(path: &Path, opts: &SegyOptions) -> Result<SegyReader> {
        SegyReader::of_file(SegyFile::open_su(path, opts)?)
    }

    fn of_file(file: SegyFile) -> Result<SegyReader> {
        let grid = Grid::scan(&file)?;
        file.check_intact()?;
        Ok(SegyReader { file, grid })
    }

    /// The file underneath: headers and traces by number.
    pub fn file(&self) -> &SegyFile {
        &self.file
    }

    /// Cells of the grid in `[iline][xline]` order and the file trace each is read from.
    pub fn grid(&self) -> &Grid {
        &self.grid
    }

    /// The part of the volume a selection by header values covers (an inline, a crossline, a time slice or
    /// any box), read without decoding the rest.
    pub fn read_selection(&self, selection: &ValueBox) -> Result<Volume> {
        let b = self.grid.geometry.index_box(selection)?;
        let mut data = vec![0.0f32; b.len()];
        self.read_box(&b, &mut data)?;
        Ok(Volume { geometry: self.grid.geometry.subset(&b), data })
    }

    /// What the `info` command reports.
    pub fn summary(&self) -> SegySummary {
        let f = &self.file;
        let g = &self.grid;
        let geometry = &g.geometry;
        let binary = f.binary_header();
        let (major, minor) = binary.revision();
        let samples = geometry.samples;
        let first_header = f.trace_header(0).ok();
        SegySummary {
            path: f.path().display().to_string(),
            file_size: f.file_size(),
            layout: f.layout(),
            byte_order: f.byte_order(),
            byte_order_source: f.byte_order_source(),
            byte_order_decided: f.byte_order_source().describe(),
            revision: format!("{major}.{minor}"),
            sample_format: FormatSummary {
                code: f.format().code(),
                name: f.format().name(),
                bytes: f.format().bytes(),
            },
            fixed_length_traces: binary.fixed_length == 1,
            text_encoding: f.text_header().encoding,
            text: f.text_header().text.clone(),
            extended_text_headers: f.text_header().extended.len(),
            additional_trace_headers: f.extra_trace_headers(),
            trace_count: f.trace_count(),
            samples: SamplesSummary {
                count: samples.len,
                domain: samples.domain,
                unit: samples.domain.unit(),
                interval: samples.step,
                first: samples.origin,
                last: samples.last(),
            },
            sorting: SortingSummary { sorting: g.sorting, iline: g.iline_direction, xline: g.xline_direction },
            ilines: LineSummary::of(&geometry.ilines),
            xlines: LineSummary::of(&geometry.xlines),
            missing_traces: g.missing,
            dead_traces: g.dead,
            header_bytes: *f.locations(),
            coordinate_scalar: first_header.map_or(0, |h| h.coordinate_scalar),
            x_range: g.xy_range[0],
            y_range: g.xy_range[1],
            bin_size: geometry.coords.map(|c| c.bin_size()),
            coordinate_misfit: g.coordinate_misfit,
        }
    }
}

impl VolumeReader for SegyReader {
    fn geometry(&self) -> &Geometry {
        &self.grid.geometry
    }

    fn describe(&self) -> String {
        self.file.path().display().to_string()
    }

    /// Decode the box in parallel, trace by trace, each straight into its place in `out`; missing traces
    /// become zeros. Only the samples inside the box are read from the file.
    fn read_box(&self, b: &IndexBox, out: &mut [f32]) -> Result<()> {
        self.decode_box(b, out, None, WriteMode::Cached)
    }

    fn read_box_each(&self, b: &IndexBox, out: &mut [f32], each: TraceHook, mode: WriteMode) -> Result<()> {
        self.decode_box(b, out, Some(each), mode)
    }

    /// Every trace header as stored, then the sampled traces: two files of one geometry rarely share all
    /// their coordinates, times and counters.
    fn digest_identity(&self, sha: &mut sha2::Sha256) -> Result<()> {
        use sha2::Digest;
        // Blocks of a fixed size hashed in parallel, their digests fed in file order: the same digest on
        // any number of threads.
        let blocks: Vec<_> = (0..self.file.trace_count())
            .into_par_iter()
            .step_by(IDENTITY_BLOCK)
            .map(|first| {
                CancelToken::process().check()?;
                let mut block = sha2::Sha256::new();
                for i in first..(first + IDENTITY_BLOCK).min(self.file.trace_count()) {
                    block.update(self.file.trace_header_bytes(i)?);
                }
                Ok(block.finalize())
            })
            .collect::<Result<_>>()?;
        self.file.check_intact()?;
        blocks.iter().for_each(|b| sha.update(b));
        seis_core::volume::digest_sampled_traces(self, sha)
    }
}

/// Trace headers hashed per task by [`VolumeReader::digest_identity`].
const IDENTITY_BLOCK: usize = 4096;

impl SegyReader {
    /// The decoding loop of [`VolumeReader::read_box`], handing each trace to `each` right after it is
    /// decoded, while it is still in cache. Under [`WriteMode::Streaming`] each trace is decoded and handed
    /// to `each` in a small buffer that stays in cache, then streamed to its place in `out`.
    fn decode_box(&self, b: &IndexBox, out: &mut [f32], each: Option<TraceHook>, mode: WriteMode) -> Result<()> {
        let [n_il, n_xl, n_s] = self.grid.geometry.shape();
        if b.il.end > n_il || b.xl.end > n_xl || b.s.end > n_s || b.il.start > b.il.end || b.xl.start > b.xl.end {
            return Err(Error::Request(format!("read_box: box {b:?} is outside the {n_il} × {n_xl} × {n_s} volume")));
        }
        seis_core::volume::check_box_buffer(b, out)?;
        if b.is_empty() {
            return Ok(());
        }
        if b.len() == self.grid.geometry.n_values() {
            self.file.advise_sequential();
        }
        let trace_len = b.s.len();
        let traces = b.il.len() * b.xl.len();
        let traces_per_task =
            (TASK_BYTES / (trace_len * 4)).min(traces.div_ceil(TASKS_PER_THREAD * rayon::current_num_threads())).max(1);
        let box_xlines = b.xl.len();
        let cell_of = |t: usize| (b.il.start + t / box_xlines) * n_xl + b.xl.start + t % box_xlines;
        let streaming = mode == WriteMode::Streaming;
        let decoded = out.par_chunks_mut(trace_len * traces_per_task).enumerate().try_for_each(|(task, chunk)| {
            CancelToken::process().check()?;
            let mut near = if streaming { vec![0.0f32; trace_len] } else { Vec::new() };
            for (k, trace) in chunk.chunks_mut(trace_len).enumerate() {
                let t = task * traces_per_task + k;
                if t + PREFETCH_TRACES < traces {
                    // A missing cell (MISSING) names no trace of the file: the hint then does nothing.
                    self.file.prefetch_samples(self.grid.cells[cell_of(t + PREFETCH_TRACES)] as usize, b.s.clone());
                }
                let samples = if streaming { &mut near[..] } else { &mut *trace };
                match self.grid.cells[cell_of(t)] {
                    MISSING => samples.fill(0.0),
                    index => self.file.read_samples(index as usize, b.s.clone(), samples)?,
                }
                if let Some(each) = each {
                    each(t, samples);
                }
                if streaming {
                    seis_core::simd::stream_copy(&near, trace);
                }
            }
            if streaming {
                seis_core::simd::stream_fence();
            }
            Ok(())
        });
        // A file cut short while it was read gave zeros for what it lost: that is an error, not data.
        self.file.check_intact()?;
        decoded
    }
}

/// Everything `seisimage info` shows about a SEG-Y volume.
#[derive(Clone, Debug, Serialize)]
pub struct SegySummary {
    pub path: String,
    pub file_size: u64,
    /// SEG-Y with file headers, or Seismic Unix traces alone.
    pub layout: super::SegyLayout,
    pub byte_order: ByteOrder,
    pub byte_order_source: ByteOrderSource,
    /// How the byte order was decided, in words.
    pub byte_order_decided: &'static str,
    pub revision: String,
    pub sample_format: FormatSummary,
    pub fixed_length_traces: bool,
    pub text_encoding: TextEncoding,
    pub text: String,
    pub extended_text_headers: usize,
    pub additional_trace_headers: u64,
    pub trace_count: usize,
    pub samples: SamplesSummary,
    pub sorting: SortingSummary,
    pub ilines: LineSummary,
    pub xlines: LineSummary,
    pub missing_traces: usize,
    pub dead_traces: usize,
    pub header_bytes: HeaderLocations,
    /// Coordinate scalar of the first trace (bytes 71-72).
    pub coordinate_scalar: i16,
    pub x_range: [f64; 2],
    pub y_range: [f64; 2],
    /// Distance between adjacent inlines and between adjacent crosslines, when the file has coordinates.
    pub bin_size: Option<[f64; 2]>,
    /// Largest distance of a trace's coordinates from the fitted grid (0 for a regular grid).
    pub coordinate_misfit: Option<f64>,
}

#[derive(Clone, Debug, Serialize)]
pub struct FormatSummary {
    pub code: u16,
    pub name: &'static str,
    pub bytes: usize,
}

#[derive(Clone, Debug, Serialize)]
pub struct SamplesSummary {
    pub count: usize,
    pub domain: Domain,
    /// Unit of `interval`, `first` and `last`: ms for time, m for depth.
    pub unit: &'static str,
    pub interval: f64,
    pub first: f64,
    pub last: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct SortingSummary {
    /// Which line the consecutive traces of the file share.
    pub sorting: Sorting,
    /// Order in which the file visits inline numbers.
    pub iline: Direction,
    /// Order in which the file visits crossline numbers.
    pub xline: Direction,
}

#[derive(Clone, Debug, Serialize)]
pub struct LineSummary {
    pub first: i64,
    pub last: i64,
    pub step: i64,
    pub count: usize,
}

impl LineSummary {
    fn of(axis: &LineAxis) -> LineSummary {
        LineSummary { first: axis.first, last: axis.last(), step: axis.step, count: axis.len }
    }
}
