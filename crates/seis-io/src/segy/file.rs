//! A SEG-Y file as a sequence of traces: headers decoded, layout checked against the file size, any trace
//! readable by number. Nothing here assumes the traces form a grid.

use std::ops::Range;
use std::path::{Path, PathBuf};

use super::binary::{BinaryHeader, BINARY_HEADER_LEN, BINARY_HEADER_START, FILE_HEADER_LEN};
use super::byte_order::ByteOrder;
use super::layout::{self, ByteOrderSource, TraceCount};
use super::sample_format::SampleFormat;
use super::text::{self, TextHeader, TEXT_RECORD_LEN};
use super::trace_header::{HeaderLocations, TraceHeader, TRACE_HEADER_LEN};
use super::{SegyOptions, DEPTH_MARKER};
use crate::mapped::MappedFile;
use seis_core::error::{Error, IoContext, Location, Result};
use seis_core::volume::{Domain, SampleAxis};

mod su;
pub use su::SegyLayout;

/// An open SEG-Y file: text and binary headers, byte order, sample format, trace size and count, and access
/// to every trace header and trace. The file is memory-mapped; reading a trace decodes it from the map.
#[derive(Debug)]
pub struct SegyFile {
    path: PathBuf,
    map: MappedFile,
    layout: SegyLayout,
    text: TextHeader,
    binary: BinaryHeader,
    order: ByteOrder,
    order_source: ByteOrderSource,
    format: SampleFormat,
    samples: usize,
    extra_trace_headers: u64,
    first_trace: u64,
    trace_size: u64,
    trace_count: usize,
    sample_axis: SampleAxis,
    locations: HeaderLocations,
}

impl SegyFile {
    /// Open `path` and decode its headers. Every size a header announces is checked against the file size
    /// before it is used, so a damaged header gives an error naming the byte offset, never a huge allocation.
    pub fn open(path: &Path, opts: &SegyOptions) -> Result<SegyFile> {
        // Over 100 lines: the file headers are read in the order the format lays them out (text, binary,
        // extended text, first trace), each step checked against what the steps before it found.
        let locations = opts.locations()?;
        let format_override = opts.format_override()?;
        let interval_override = opts.interval_override()?;
        let fail = |at: u64, message: String| Error::format(path, Location::Byte(at), message);

        let too_short = |len: u64| {
            let why = format!(
                "the file is {len} bytes long, shorter than the {FILE_HEADER_LEN}-byte SEG-Y file header (text and \
                 binary headers)"
            );
            fail(len, why)
        };
        let file = crate::files::open_regular(path)?;
        if file.metadata().at(path)?.len() < FILE_HEADER_LEN as u64 {
            return Err(too_short(file.metadata().at(path)?.len()));
        }
        // Watched: a file cut short while it is mapped is reported by `check_intact`, not a crash.
        let map = MappedFile::map(&file).at(path)?;
        // The size mapped, against which every offset below is checked (the file may have changed since).
        let len = map.len() as u64;
        if len < FILE_HEADER_LEN as u64 {
            return Err(too_short(len));
        }
        let binary_bytes: &[u8; BINARY_HEADER_LEN] =
            map[BINARY_HEADER_START..FILE_HEADER_LEN].try_into().expect("400 bytes");

        let (order, order_source) =
            layout::decide_byte_order(binary_bytes, opts.endian, format_override).map_err(|m| fail(3224, m))?;
        let binary = BinaryHeader::parse(binary_bytes, order);
        let format = match format_override {
            Some(f) => f,
            None => SampleFormat::from_code(binary.format_code as i32)
                .map_err(|e| fail(3224, format!("binary header field 3225-3226: {e}")))?,
        };

        let n_text = text::extended_record_count(&map, binary.ext_text_headers).map_err(|(at, m)| fail(at, m))?;
        let records: Vec<&[u8]> =
            map[FILE_HEADER_LEN..FILE_HEADER_LEN + n_text * TEXT_RECORD_LEN].chunks(TEXT_RECORD_LEN).collect();
        let text = TextHeader::decode(map[..TEXT_RECORD_LEN].try_into().expect("3200 bytes"), &records);

        let extra_trace_headers = binary.extra_trace_headers();
        let extra_trace_headers = u64::try_from(extra_trace_headers).map_err(|_| {
            fail(3506, format!("binary header field 3507 holds {extra_trace_headers} additional trace headers"))
        })?;
        let mut first_trace = (FILE_HEADER_LEN + n_text * TEXT_RECORD_LEN) as u64;
        if binary.revision().0 >= 2 && binary.first_trace_offset != 0 {
            if !(FILE_HEADER_LEN as u64..=len).contains(&binary.first_trace_offset) {
                return Err(fail(
                    3520,
                    format!(
                        "binary header field 3521-3528 puts the first trace at byte {}, outside the file ({len} bytes) \
                         or inside its 3600-byte header",
                        binary.first_trace_offset
                    ),
                ));
            }
            first_trace = binary.first_trace_offset;
        }

        // The first trace header, when the file has one: fallbacks for the sample count and interval, and the
        // time of the first sample.
        let first = map
            .get(first_trace as usize..first_trace as usize + TRACE_HEADER_LEN)
            .map(|bytes| TraceHeader::parse(bytes.try_into().expect("240 bytes"), order, &locations));
        let first_trace_samples =
            layout::Field { offset: first_trace + 114, name: "trace header field 115-116 of the first trace" };
        let (samples, samples_field) = match layout::samples_per_trace(&binary).map_err(|(at, m)| fail(at, m))? {
            Some(found) => found,
            None => first.map(|h| h.samples as u64).filter(|&n| n > 0).map(|n| (n, first_trace_samples)).ok_or_else(
                || {
                    let why = "the sample count is 0 in binary header field 3221-3222 and in trace header field \
                               115-116 of the first trace";
                    fail(3220, why.into())
                },
            )?,
        };
        let announced = format!("{} announces {samples} samples per trace", samples_field.name);
        let trace_size = layout::trace_size(samples, format, extra_trace_headers)
            .ok_or_else(|| fail(samples_field.offset, format!("{announced}, more than can be addressed")))?;
        let headers = TRACE_HEADER_LEN as u64 * (1 + extra_trace_headers);
        let trace_count = match layout::count_traces(len, first_trace, trace_size) {
            TraceCount::Whole(n) => n,
            // Not even one trace fits: the count of additional headers, else the sample count (or the format),
            // is the likelier culprit.
            TraceCount::Partial { complete: 0, left, .. } if headers > left => {
                let why = format!(
                    "binary header field 3507 announces {extra_trace_headers} additional trace headers: with them a \
                     trace takes {trace_size} bytes, more than the {left} bytes from the first trace (byte \
                     {first_trace}) to the end of the file"
                );
                return Err(fail(3506, why));
            }
            TraceCount::Partial { complete: 0, left, .. } => {
                let why = format!(
                    "{announced}: with {headers} header bytes and {} bytes per sample ({}), a trace takes \
                     {trace_size} bytes, more than the {left} bytes from the first trace (byte {first_trace}) to the \
                     end of the file. The sample count or the format is wrong, or the file is truncated",
                    format.bytes(),
                    format.name()
                );
                return Err(fail(samples_field.offset, why));
            }
            TraceCount::Partial { complete, at, left } => {
                let why = format!(
                    "the file ends {left} bytes into trace {} (of {trace_size} bytes: {headers} header bytes and \
                     {samples} samples of {} bytes); traces start at byte {first_trace}. The file is truncated, its \
                     traces are not all the same length, or the binary header states the sample count or format \
                     wrongly",
                    complete + 1,
                    format.bytes()
                );
                return Err(fail(at, why));
            }
        };
        // Rev 2 states the trace count (0: not stated). Files with other revision numbers are not held to it:
        // some writers leave garbage in the bytes that rev 2 assigned.
        let stated = binary.traces_in_file;
        if binary.revision().0 == 2 && stated != 0 && stated != trace_count {
            let why = if stated > trace_count {
                "the file is truncated, or the field is wrong"
            } else {
                "the rest would be data trailer records, which seisimage does not read, or the field is wrong"
            };
            return Err(fail(
                3512,
                format!(
                    "binary header field 3513-3520 announces {stated} traces, but the file holds {trace_count} \
                     traces of {trace_size} bytes from byte {first_trace}: {why}"
                ),
            ));
        }

        let interval = interval_override
            .or_else(|| layout::sample_interval(&binary))
            .or_else(|| first.map(|h| h.sample_interval as f64).filter(|&dt| dt > 0.0))
            .ok_or_else(|| {
                let extended = binary.revision().0 >= 2 && binary.ext_sample_interval != 0.0;
                fail(
                    3216,
                    format!(
                        "no sample interval: binary header field 3217-3218 holds {}{}{}; set the sample interval \
                         explicitly (sample_interval)",
                        binary.sample_interval,
                        match extended {
                            true => format!(", field 3273-3280 (rev 2) {}", binary.ext_sample_interval),
                            false => String::new(),
                        },
                        match first {
                            Some(h) =>
                                format!(" and trace header field 117-118 of the first trace {}", h.sample_interval),
                            None => String::new(),
                        }
                    ),
                )
            })?;
        let marked = if text.text.contains(DEPTH_MARKER) { Domain::Depth } else { Domain::Time };
        let domain = opts.domain.unwrap_or(marked);
        let sample_axis = SampleAxis {
            origin: first.map_or(0.0, |h| h.first_sample()),
            step: interval / 1000.0,
            len: samples as usize,
            domain,
        };

        let file = SegyFile {
            path: path.to_path_buf(),
            map,
            layout: SegyLayout::Standard,
            text,
            binary,
            order,
            order_source,
            format,
            samples: samples as usize,
            extra_trace_headers,
            first_trace,
            trace_size,
            trace_count: trace_count as usize,
            sample_axis,
            locations,
        };
        file.check_intact()?;
        Ok(file)
    }

    /// Fail if the file was cut short while it was mapped: what was read from it since may hold zeros in
    /// place of its data. Called after every read of the map (the header scan, each box).
    pub fn check_intact(&self) -> Result<()> {
        if self.map.changed() {
            return Err(Error::format(
                &self.path,
                Location::File,
                "the file changed while it was being read (it was cut short or replaced); nothing read from it \
                 since can be trusted, so the work stops here",
            ));
        }
        Ok(())
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn file_size(&self) -> u64 {
        self.map.len() as u64
    }

    /// SEG-Y with its file headers, or Seismic Unix traces alone.
    pub fn layout(&self) -> SegyLayout {
        self.layout
    }

    pub fn text_header(&self) -> &TextHeader {
        &self.text
    }

    pub fn binary_header(&self) -> &BinaryHeader {
        &self.binary
    }

    pub fn byte_order(&self) -> ByteOrder {
        self.order
    }

    pub fn byte_order_source(&self) -> ByteOrderSource {
        self.order_source
    }

    pub fn format(&self) -> SampleFormat {
        self.format
    }

    pub fn samples_per_trace(&self) -> usize {
        self.samples
    }

    /// Sample times (or depths) of every trace: interval from the options, else the binary header (the rev-2
    /// double at 3273 when positive, else 3217), else the first trace header; first sample from the first
    /// trace's delay and time scalar.
    pub fn sample_axis(&self) -> SampleAxis {
        self.sample_axis
    }

    /// Additional 240-byte trace headers that follow each standard one (rev 2).
    pub fn extra_trace_headers(&self) -> u64 {
        self.extra_trace_headers
    }

    /// Byte offset of the first trace header.
    pub fn first_trace_offset(&self) -> u64 {
        self.first_trace
    }

    /// Bytes per trace, headers included.
    pub fn trace_size(&self) -> u64 {
        self.trace_size
    }

    pub fn trace_count(&self) -> usize {
        self.trace_count
    }

    /// The trace header byte locations in use.
    pub fn locations(&self) -> &HeaderLocations {
        &self.locations
    }

    /// Byte offset of trace `index`'s header.
    pub fn trace_offset(&self, index: usize) -> u64 {
        self.first_trace + index as u64 * self.trace_size
    }

    /// The 240 bytes of the standard header of trace `index`.
    pub fn trace_header_bytes(&self, index: usize) -> Result<&[u8; TRACE_HEADER_LEN]> {
        self.check_index(index)?;
        let start = self.trace_offset(index) as usize;
        Ok(self.map[start..start + TRACE_HEADER_LEN].try_into().expect("240 bytes"))
    }

    /// Ask the CPU to start loading trace `index`'s header (a hint; nothing happens past the last trace).
    ///
    /// Why: a scan of every header touches four cache lines per trace, one trace (a few KiB) apart, a stride
    /// the hardware does not predict; hinted a few traces ahead, the loads overlap instead of waiting in turn.
    pub fn prefetch_header(&self, index: usize) {
        if index >= self.trace_count {
            return;
        }
        let start = self.trace_offset(index) as usize;
        for line in (0..TRACE_HEADER_LEN).step_by(64) {
            prefetch(&self.map[start + line]);
        }
    }

    /// Hint that samples `range` of trace `index` will be decoded soon (the hardware prefetchers stop at
    /// page boundaries, and each trace starts on a new page).
    pub fn prefetch_samples(&self, index: usize, range: Range<usize>) {
        if index >= self.trace_count || range.start >= range.end || range.end > self.samples {
            return;
        }
        let (data, bytes) = (self.data_offset(index), self.format.bytes());
        for at in (data + range.start * bytes..data + range.end * bytes).step_by(64) {
            prefetch(&self.map[at]);
        }
    }

    /// The fields of trace `index`'s header, with inline, crossline and coordinates at the configured bytes.
    pub fn trace_header(&self, index: usize) -> Result<TraceHeader> {
        Ok(TraceHeader::parse(self.trace_header_bytes(index)?, self.order, &self.locations))
    }

    /// Decode all samples of trace `index` into `out` (`samples_per_trace()` values).
    pub fn read_trace(&self, index: usize, out: &mut [f32]) -> Result<()> {
        self.read_samples(index, 0..self.samples, out)
    }

    /// Decode samples `range` of trace `index` into `out` (`range.len()` values), touching no other bytes.
    pub fn read_samples(&self, index: usize, range: Range<usize>, out: &mut [f32]) -> Result<()> {
        self.check_index(index)?;
        if range.start > range.end || range.end > self.samples || out.len() != range.len() {
            return Err(Error::Request(format!(
                "{}: samples {range:?} of a {}-sample trace into a buffer of {} values",
                self.path.display(),
                self.samples,
                out.len()
            )));
        }
        let (data, bytes) = (self.data_offset(index), self.format.bytes());
        self.format.decode(self.order, &self.map[data + range.start * bytes..data + range.end * bytes], out);
        Ok(())
    }

    /// Byte offset of trace `index`'s first sample, past its header and any additional headers.
    fn data_offset(&self, index: usize) -> usize {
        self.trace_offset(index) as usize + TRACE_HEADER_LEN * (1 + self.extra_trace_headers as usize)
    }

    fn check_index(&self, index: usize) -> Result<()> {
        if index < self.trace_count {
            Ok(())
        } else {
            Err(Error::Request(format!(
                "{}: trace {} requested, the file has {} traces",
                self.path.display(),
                index + 1,
                self.trace_count
            )))
        }
    }

    /// Ask the kernel to read the whole file ahead (before a whole-volume read).
    pub(crate) fn advise_sequential(&self) {
        // Only a hint: a kernel that ignores it costs speed, not correctness.
        let _ = self.map.advise(memmap2::Advice::Sequential);
    }
}

/// Hint that the cache line holding `byte` will be read soon.
#[inline(always)]
fn prefetch(byte: &u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults and changes no state the program can observe; `byte` is a valid reference.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(byte as *const u8 as *const i8)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = byte;
}
