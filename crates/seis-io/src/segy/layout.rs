//! Where things are in a SEG-Y file: the byte order, how large a trace is, where the first one starts and
//! how many there are. Everything here is decided from the headers before any trace is read, and checked
//! against the file size, so no later step trusts a header value the file cannot back.

use serde::Serialize;

use super::binary::{BinaryHeader, BINARY_HEADER_LEN};
use super::byte_order::ByteOrder;
use super::sample_format::SampleFormat;
use super::Endian;

/// How the byte order of a file was decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ByteOrderSource {
    /// Set by the caller (`endian` option).
    Option,
    /// The rev-2 constant 0x01020304 at bytes 3297-3300.
    Constant,
    /// The only order in which the binary header holds a SEG-Y sample format code.
    Detected,
    /// No evidence either way (the sample format was forced): SEG-Y's standard big-endian order.
    Assumed,
    /// Seismic Unix: the order of the machine reading it, as SU writes the order of the machine writing it.
    Native,
    /// Seismic Unix: the only order in which the first trace's sample count divides the file into traces.
    TraceLength,
}

impl ByteOrderSource {
    pub fn describe(self) -> &'static str {
        match self {
            ByteOrderSource::Option => "set by option",
            ByteOrderSource::Constant => "from the byte-order constant at bytes 3297-3300",
            ByteOrderSource::Detected => "detected: the only order giving a valid sample format code",
            ByteOrderSource::Assumed => "assumed big-endian (the SEG-Y standard): no constant, format forced",
            ByteOrderSource::Native => "this machine's, as Seismic Unix writes",
            ByteOrderSource::TraceLength => "detected: the only order whose sample count divides the file into traces",
        }
    }
}

/// The byte order to read a file in, and why.
///
/// An order set by the caller wins; then the rev-2 constant; then the order in which the format code at
/// 3225-3226 is one SEG-Y defines (read in the wrong order, a code of 1-16 becomes a multiple of 256). When
/// the caller forces the sample format and neither order holds a defined code, the standard big-endian
/// order is assumed. Err: why no order fits.
pub fn decide_byte_order(
    header: &[u8; BINARY_HEADER_LEN],
    requested: Endian,
    format_override: Option<SampleFormat>,
) -> Result<(ByteOrder, ByteOrderSource), String> {
    match requested {
        Endian::Big => return Ok((ByteOrder::Big, ByteOrderSource::Option)),
        Endian::Little => return Ok((ByteOrder::Little, ByteOrderSource::Option)),
        Endian::Auto => {}
    }
    match header[96..100] {
        [1, 2, 3, 4] => return Ok((ByteOrder::Big, ByteOrderSource::Constant)),
        [4, 3, 2, 1] => return Ok((ByteOrder::Little, ByteOrderSource::Constant)),
        _ => {}
    }
    let code = |order| BinaryHeader::parse(header, order).format_code;
    let defined = |order| SampleFormat::is_defined_code(code(order) as i32);
    match (defined(ByteOrder::Big), defined(ByteOrder::Little)) {
        (true, _) => Ok((ByteOrder::Big, ByteOrderSource::Detected)),
        (false, true) => Ok((ByteOrder::Little, ByteOrderSource::Detected)),
        (false, false) if format_override.is_some() => Ok((ByteOrder::Big, ByteOrderSource::Assumed)),
        (false, false) => Err(format!(
            "cannot tell the byte order: the sample format code at bytes 3225-3226 reads {} big-endian and {} \
             little-endian, neither a SEG-Y format code. This is not a SEG-Y file, or its binary header is \
             damaged. A Seismic Unix file looks like this, having no 3600-byte file header: read it as one (name \
             it .su, or set the format to \"su\": input.format, --format su). Only for a SEG-Y file with a damaged binary \
             header does giving the byte order and the sample format (endian, sample_format) help",
            code(ByteOrder::Big),
            code(ByteOrder::Little)
        )),
    }
}

/// A header field, for messages: its 0-based offset in the file and how the standard names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Field {
    pub offset: u64,
    pub name: &'static str,
}

pub const SAMPLES_FIELD: Field = Field { offset: 3220, name: "binary header field 3221-3222" };
pub const EXT_SAMPLES_FIELD: Field = Field { offset: 3268, name: "binary header field 3269-3272 (rev 2)" };

/// Samples per trace from the binary header, and the field that gives it: the rev-2 extended count at 3269
/// when set, else 3221-3222 (unsigned). `None` when the header does not say (both 0). Err: an extended count
/// that is negative, as the standard's signed 4-byte field holds values of 2^31 and more.
pub fn samples_per_trace(h: &BinaryHeader) -> Result<Option<(u64, Field)>, (u64, String)> {
    let extended = h.revision().0 >= 2 && h.ext_samples_per_trace != 0;
    match h.ext_samples_per_trace {
        n if extended && n < 0 => Err((
            EXT_SAMPLES_FIELD.offset,
            format!(
                "{} holds {n} samples per trace ({:#010x}); a count must be positive",
                EXT_SAMPLES_FIELD.name, n as u32
            ),
        )),
        n if extended => Ok(Some((n as u64, EXT_SAMPLES_FIELD))),
        _ => Ok((h.samples_per_trace > 0).then_some((h.samples_per_trace as u64, SAMPLES_FIELD))),
    }
}

/// The range of rev-2 double intervals (µs) taken as meant: from a nanosecond to 10 s a sample. Outside it
/// the eight bytes are damage or a field that was never written (a subnormal double from one stray byte
/// would otherwise make an axis of zero length in time).
const PLAUSIBLE_EXT_INTERVAL: std::ops::RangeInclusive<f64> = 1e-3..=1e7;

/// Sample interval from the binary header (µs, or mm in seisimage depth files): the rev-2 double at 3273
/// when it is a plausible interval (see `PLAUSIBLE_EXT_INTERVAL`), else 3217-3218 when positive.
pub fn sample_interval(h: &BinaryHeader) -> Option<f64> {
    if h.revision().0 >= 2 && PLAUSIBLE_EXT_INTERVAL.contains(&h.ext_sample_interval) {
        Some(h.ext_sample_interval)
    } else {
        (h.sample_interval > 0).then_some(h.sample_interval as f64)
    }
}

/// Bytes of one trace: the standard 240-byte header, any additional 240-byte headers, and the samples.
/// `None` when that does not fit in a `u64` (only absurd header values get there).
pub fn trace_size(samples: u64, format: SampleFormat, extra_headers: u64) -> Option<u64> {
    let headers = extra_headers.checked_add(1)?.checked_mul(240)?;
    samples.checked_mul(format.bytes() as u64)?.checked_add(headers)
}

/// How the bytes after the headers divide into traces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceCount {
    Whole(u64),
    /// The file ends inside trace number `complete` (0-based), which starts at byte `at`.
    Partial {
        complete: u64,
        at: u64,
        left: u64,
    },
}

pub fn count_traces(file_len: u64, first_trace: u64, trace_size: u64) -> TraceCount {
    let data = file_len.saturating_sub(first_trace);
    let complete = data / trace_size;
    match data % trace_size {
        0 => TraceCount::Whole(complete),
        left => TraceCount::Partial { complete, at: first_trace + complete * trace_size, left },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(order: ByteOrder, format: i16, samples: u16, mark: [u8; 4]) -> [u8; BINARY_HEADER_LEN] {
        BinaryHeader { format_code: format, samples_per_trace: samples, byte_order_mark: mark, ..Default::default() }
            .to_bytes(order)
    }

    #[test]
    fn byte_order_from_option_constant_or_format_code() {
        for order in [ByteOrder::Big, ByteOrder::Little] {
            let h = header(order, 5, 100, [0; 4]);
            assert_eq!(decide_byte_order(&h, Endian::Auto, None), Ok((order, ByteOrderSource::Detected)));
            // Format 4 is defined (and refused later with its own message), so it still decides the order.
            let h = header(order, 4, 0, [0; 4]);
            assert_eq!(decide_byte_order(&h, Endian::Auto, None), Ok((order, ByteOrderSource::Detected)));
        }
        // The constant is stored in the file's order, so its bytes name the order directly; an explicit
        // option wins over both.
        let h = header(ByteOrder::Big, 5, 100, order_mark(ByteOrder::Little));
        assert_eq!(decide_byte_order(&h, Endian::Auto, None), Ok((ByteOrder::Little, ByteOrderSource::Constant)));
        assert_eq!(decide_byte_order(&h, Endian::Big, None), Ok((ByteOrder::Big, ByteOrderSource::Option)));
        // No defined format code either way.
        let h = header(ByteOrder::Big, 0, 100, [0; 4]);
        let e = decide_byte_order(&h, Endian::Auto, None).unwrap_err();
        assert!(e.contains("reads 0 big-endian and 0 little-endian"), "{e}");
        // With the format forced, a defined code still decides; without one, the standard order is assumed.
        let h = header(ByteOrder::Little, 1, 100, [0; 4]);
        let forced = Some(SampleFormat::IeeeF32);
        assert_eq!(decide_byte_order(&h, Endian::Auto, forced), Ok((ByteOrder::Little, ByteOrderSource::Detected)));
        let h = header(ByteOrder::Little, 0, 100, [0; 4]);
        assert_eq!(decide_byte_order(&h, Endian::Auto, forced), Ok((ByteOrder::Big, ByteOrderSource::Assumed)));
    }

    fn order_mark(order: ByteOrder) -> [u8; 4] {
        order.u32(0x0102_0304)
    }

    #[test]
    fn the_rev2_interval_is_used_only_when_plausible() {
        let h = |ext: f64, int: i16, rev: [u8; 2]| BinaryHeader {
            ext_sample_interval: ext,
            sample_interval: int,
            revision_bytes: rev,
            ..Default::default()
        };
        assert_eq!(sample_interval(&h(250.5, 4000, [2, 0])), Some(250.5));
        assert_eq!(sample_interval(&h(250.5, 4000, [1, 0])), Some(4000.0), "rev 1 has no double");
        // One stray byte in an unwritten double makes a subnormal number: not an interval.
        let subnormal = f64::from_bits(1);
        for bad in [0.0, -4000.0, subnormal, 1e-6, 1e12, f64::NAN, f64::INFINITY] {
            assert_eq!(sample_interval(&h(bad, 4000, [2, 1])), Some(4000.0), "{bad:e}");
            assert_eq!(sample_interval(&h(bad, 0, [2, 1])), None, "{bad:e}");
        }
    }

    #[test]
    fn traces_divide_the_data_or_the_partial_one_is_located() {
        let size = trace_size(50, SampleFormat::IbmF32, 0).unwrap();
        assert_eq!(size, 440);
        assert_eq!(count_traces(3600 + 25 * 440, 3600, size), TraceCount::Whole(25));
        assert_eq!(count_traces(3600, 3600, size), TraceCount::Whole(0));
        assert_eq!(
            count_traces(3600 + 2 * 440 + 7, 3600, size),
            TraceCount::Partial { complete: 2, at: 3600 + 880, left: 7 }
        );
        assert_eq!(trace_size(u64::MAX, SampleFormat::I8, 0), None);
        assert_eq!(trace_size(4, SampleFormat::IbmF32, 2), Some(736));
    }
}
