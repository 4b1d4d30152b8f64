//! Seismic Unix (SU) files: SEG-Y traces with no file headers in front, written in the byte order of the
//! machine that made them. Opened as a [`SegyFile`] of their own layout, so that the grid, the header
//! fields, the reads and every later error are those of SEG-Y.

use std::path::Path;

use serde::Serialize;

use super::SegyFile;
use crate::mapped::MappedFile;
use crate::segy::binary::BinaryHeader;
use crate::segy::byte_order::ByteOrder;
use crate::segy::layout::{self, ByteOrderSource, TraceCount};
use crate::segy::sample_format::SampleFormat;
use crate::segy::text::{TextEncoding, TextHeader};
use crate::segy::trace_header::{TraceHeader, TRACE_HEADER_LEN};
use crate::segy::{Endian, SegyOptions};
use seis_core::error::{Error, IoContext, Location, Result};
use seis_core::volume::{Domain, SampleAxis};

/// What precedes the traces of a file, and so where its sample count, interval and format are stated.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SegyLayout {
    /// SEG-Y: a 3200-byte text header and a 400-byte binary header, then the traces.
    #[default]
    Standard,
    /// Seismic Unix: traces from the first byte; each trace header states its sample count (115-116) and
    /// interval (117-118); samples are IEEE floats.
    SeismicUnix,
}

/// Bytes 115-116 of a trace header: the sample count (0-based offset 114).
const NS_OFFSET: usize = 114;

/// The byte order of an SU file: the caller's, else the machine's, unless only the other order's sample
/// count at 115-116 of the first trace divides the file into whole traces (a file from a machine of the
/// other order).
fn byte_order(first: &[u8], len: u64, requested: Endian, format: SampleFormat) -> (ByteOrder, ByteOrderSource) {
    match requested {
        Endian::Big => return (ByteOrder::Big, ByteOrderSource::Option),
        Endian::Little => return (ByteOrder::Little, ByteOrderSource::Option),
        Endian::Auto => {}
    }
    let native = if cfg!(target_endian = "big") { ByteOrder::Big } else { ByteOrder::Little };
    let other = if native == ByteOrder::Big { ByteOrder::Little } else { ByteOrder::Big };
    let whole_traces = |order: ByteOrder| {
        let ns = order.read_u16([first[NS_OFFSET], first[NS_OFFSET + 1]]) as u64;
        ns > 0 && layout::trace_size(ns, format, 0).is_some_and(|size| len % size == 0)
    };
    if !whole_traces(native) && whole_traces(other) {
        (other, ByteOrderSource::TraceLength)
    } else {
        (native, ByteOrderSource::Native)
    }
}

impl SegyFile {
    /// Open the Seismic Unix file `path`. The reading options are those of SEG-Y; `sample_format` replaces
    /// SU's IEEE floats and `sample_interval` the interval of the trace headers. Every trace must hold the
    /// sample count of the first (SU allows otherwise; a grid does not).
    pub fn open_su(path: &Path, opts: &SegyOptions) -> Result<SegyFile> {
        let locations = opts.locations()?;
        let format = opts.format_override()?.unwrap_or(SampleFormat::IeeeF32);
        let interval_override = opts.interval_override()?;
        let fail = |at: u64, message: String| Error::format(path, Location::Byte(at), message);

        let file = crate::files::open_regular(path)?;
        // Watched: a file cut short while it is mapped is reported by `check_intact`, not a crash.
        let map = MappedFile::map(&file).at(path)?;
        let len = map.len() as u64;
        let Some(first_bytes) = map.get(..TRACE_HEADER_LEN) else {
            return Err(fail(len, format!("the file is {len} bytes long, shorter than one 240-byte SU trace header")));
        };
        let first_bytes: &[u8; TRACE_HEADER_LEN] = first_bytes.try_into().expect("240 bytes");
        let (order, order_source) = byte_order(first_bytes, len, opts.endian, format);
        let first = TraceHeader::parse(first_bytes, order, &locations);
        let samples = first.samples as u64;
        if samples == 0 {
            return Err(fail(NS_OFFSET as u64, "trace header field 115-116 (ns) of trace 1 holds 0 samples".into()));
        }
        let trace_size = layout::trace_size(samples, format, 0).expect("65535 samples of at most 8 bytes");
        let ns_of = |trace: u64| {
            let at = (trace * trace_size) as usize + NS_OFFSET;
            order.read_u16([map[at], map[at + 1]]) as u64
        };
        let counted = layout::count_traces(len, 0, trace_size);
        let complete = match counted {
            TraceCount::Whole(n) | TraceCount::Partial { complete: n, .. } => n,
        };
        if let Some(other) = (1..complete).find(|&t| ns_of(t) != samples) {
            let why = format!(
                "trace {} holds {} samples in trace header field 115-116 (ns), trace 1 holds {samples}: seisimage \
                 reads SU files whose traces all have the same length",
                other + 1,
                ns_of(other)
            );
            return Err(fail(other * trace_size + NS_OFFSET as u64, why));
        }
        let trace_count = match counted {
            TraceCount::Whole(n) => n,
            TraceCount::Partial { complete, at, left } => {
                let why = format!(
                    "the file ends {left} bytes into trace {} (of {trace_size} bytes: 240 header bytes and {samples} \
                     samples of {} bytes, as trace 1 states at 115-116): the file is truncated",
                    complete + 1,
                    format.bytes()
                );
                return Err(fail(at, why));
            }
        };
        let interval = interval_override.or((first.sample_interval > 0).then_some(first.sample_interval as f64));
        let interval = interval.ok_or_else(|| {
            let why = format!(
                "no sample interval: trace header field 117-118 (dt) of trace 1 holds {}; set the sample interval \
                 explicitly (sample_interval)",
                first.sample_interval
            );
            fail(116, why)
        })?;
        let sample_axis = SampleAxis {
            origin: first.first_sample(),
            step: interval / 1000.0,
            len: samples as usize,
            domain: opts.domain.unwrap_or(Domain::Time),
        };
        // What a SEG-Y binary header would state about these traces, for the summaries that show one.
        let binary = BinaryHeader {
            samples_per_trace: samples as u16,
            sample_interval: interval.round().clamp(0.0, i16::MAX as f64) as i16,
            format_code: format.code() as i16,
            ..Default::default()
        };
        let file = SegyFile {
            path: path.to_path_buf(),
            map,
            layout: SegyLayout::SeismicUnix,
            text: TextHeader { encoding: TextEncoding::Ascii, text: String::new(), extended: Vec::new() },
            binary,
            order,
            order_source,
            format,
            samples: samples as usize,
            extra_trace_headers: 0,
            first_trace: 0,
            trace_size,
            trace_count: trace_count as usize,
            sample_axis,
            locations,
        };
        file.check_intact()?;
        Ok(file)
    }
}
