//! What is done with one input, and what must hold afterwards: the body of every fuzz target, shared with
//! `tests/fuzz_regressions.rs` (which includes this file), so that a saved input is replayed by the normal
//! test suite exactly as the fuzzer ran it.
//!
//! Each function uses only seisimage's public API. It panics when an invariant breaks (that is what the
//! fuzzer reports) and returns the outcome of opening the input, so that a regression test can also check
//! the precise error a fixed input now gets.

use std::path::Path;

use seisimage::error::Location;
use seisimage::io::hdf5::{Hdf5Options, Hdf5Reader};
use seisimage::io::npy;
use seisimage::io::segy::binary::{BinaryHeader, BINARY_HEADER_LEN, BINARY_HEADER_START, FILE_HEADER_LEN};
use seisimage::io::segy::layout::{self, TraceCount};
use seisimage::io::segy::sample_format::{f32_to_ibm, ibm_to_f32};
use seisimage::io::segy::text::{self, TextHeader, TEXT_RECORD_LEN};
use seisimage::io::segy::trace_header::{HeaderLocations, TraceHeader, TRACE_HEADER_LEN};
use seisimage::io::segy::{
    ByteOrder, ByteOrderSource, Endian, HeaderPreset, SampleFormat, SegyFile, SegyOptions, SegyReader,
};
use seisimage::job::Job;
use seisimage::volume::{IndexBox, ValueBox, VolumeReader};
use seisimage::{Error, Result};

/// Volumes up to this many values are read whole and compared with the boxes cut from them.
const WHOLE_READ_VALUES: usize = 1 << 20;
/// Trace headers parsed directly by [`segy_headers`], at most.
const HEADER_WINDOWS: usize = 64;

/// The ways every SEG-Y input is opened: automatic, the Petrel byte locations, and each byte order forced
/// (with a forced format and a forced interval, which take other paths through the header checks).
fn segy_option_sets() -> [(&'static str, SegyOptions); 4] {
    [
        ("auto", SegyOptions::default()),
        ("petrel", SegyOptions { preset: HeaderPreset::Petrel, ..Default::default() }),
        ("big-ieee", SegyOptions { endian: Endian::Big, sample_format: Some(5), ..Default::default() }),
        ("little-4ms", SegyOptions { endian: Endian::Little, sample_interval: Some(4.0), ..Default::default() }),
    ]
}

/// Open a SEG-Y file with every option set, as a trace file and as a volume. Returns, per option set, the
/// outcome of `SegyReader::open`.
pub fn segy(path: &Path) -> Vec<(&'static str, Result<()>)> {
    segy_option_sets()
        .into_iter()
        .map(|(name, opts)| {
            let file = segy_file(path, &opts);
            let volume = segy_volume(path, &opts);
            if let (Err(file_error), Ok(())) = (&file, &volume) {
                panic!("{name}: SegyFile::open failed ({file_error}) where SegyReader::open succeeded");
            }
            (name, volume)
        })
        .collect()
}

/// An error from opening `path` must name it.
fn names_file(e: Error, path: &Path) -> Error {
    let name = path.file_name().expect("a file name").to_string_lossy();
    assert!(e.to_string().contains(name.as_ref()), "the error does not name the file: {e}");
    e
}

fn same_bits(a: &[f32], b: &[f32]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
}

/// The layout a `SegyFile` settles on is backed by the file, and traces read alike whole or in part.
fn segy_file(path: &Path, opts: &SegyOptions) -> Result<()> {
    let file = SegyFile::open(path, opts).map_err(|e| names_file(e, path))?;
    let n = file.trace_count();
    let headers = TRACE_HEADER_LEN as u64 * (1 + file.extra_trace_headers());
    assert_eq!(file.trace_size(), headers + (file.samples_per_trace() * file.format().bytes()) as u64);
    assert_eq!(
        file.first_trace_offset() + n as u64 * file.trace_size(),
        file.file_size(),
        "every byte after the file headers belongs to a whole trace"
    );
    let ns = file.samples_per_trace();
    let mut trace = vec![0.0f32; ns];
    for i in [0, n / 2, n.saturating_sub(1)].into_iter().filter(|&i| i < n) {
        file.trace_header(i).expect("the header of a trace below the count");
        file.read_trace(i, &mut trace).expect("a trace below the count");
        let part = ns / 3..ns - ns / 4;
        let mut cut = vec![0.0f32; part.len()];
        file.read_samples(i, part.clone(), &mut cut).expect("samples inside the trace");
        assert!(same_bits(&cut, &trace[part]), "samples read in part differ from the whole trace");
    }
    assert!(file.trace_header(n).is_err(), "a trace past the end must be refused");
    Ok(())
}

/// The grid a `SegyReader` builds is proportional to the file, and every box reads as the same cut of the
/// whole volume.
fn segy_volume(path: &Path, opts: &SegyOptions) -> Result<()> {
    let reader = SegyReader::open(path, opts).map_err(|e| names_file(e, path))?;
    let g = reader.geometry();
    let traces = reader.file().trace_count();
    assert_eq!(g.live.len(), g.n_traces());
    assert!(g.n_traces() <= 4 * traces, "{} cells for {traces} traces", g.n_traces());
    let placed: Vec<u32> = reader.grid().cells.iter().copied().filter(|&t| t != u32::MAX).collect();
    assert_eq!(placed.len(), traces, "every trace is placed in one cell");
    assert!(placed.iter().all(|&t| (t as usize) < traces));
    serde_json::to_string(&reader.summary()).expect("the summary serializes");
    check_boxes(&reader);
    Ok(())
}

/// Boxes of a volume (an inline, a crossline, a sample slice, the traces around the middle) against the
/// whole volume, or only read when the volume is too large to read whole here.
fn check_boxes(reader: &dyn VolumeReader) {
    let g = reader.geometry();
    let [ni, nx, ns] = g.shape();
    let boxes = [
        IndexBox { il: 0..1, xl: 0..nx, s: 0..ns },
        IndexBox { il: 0..ni, xl: nx - 1..nx, s: 0..ns },
        IndexBox { il: 0..ni, xl: 0..nx, s: ns / 2..ns / 2 + 1 },
        IndexBox { il: ni / 2..ni, xl: nx / 3..nx / 2 + 1, s: ns / 4..ns },
    ];
    let whole = if g.n_values() <= WHOLE_READ_VALUES {
        let mut all = vec![0.0f32; g.n_values()];
        reader.read_all(&mut all).unwrap_or_else(|e| panic!("reading an open volume: {e}"));
        Some(seisimage::volume::Volume { geometry: g.clone(), data: all })
    } else {
        None
    };
    for b in boxes {
        if b.len() > WHOLE_READ_VALUES {
            continue;
        }
        let mut part = vec![0.0f32; b.len()];
        reader.read_box(&b, &mut part).unwrap_or_else(|e| panic!("box {b:?} of an open volume: {e}"));
        if let Some(whole) = &whole {
            assert!(same_bits(&part, &whole.cut(&b).data), "box {b:?} differs from the same cut of the volume");
        }
    }
    // A selection by header values: the middle inline.
    let il = g.ilines.value(ni / 2);
    let selected = g.index_box(&ValueBox { iline: Some([il, il]), ..Default::default() });
    assert_eq!(selected.expect("an inline of the volume").il, ni / 2..ni / 2 + 1);
}

/// The header parsers on the raw bytes of a would-be SEG-Y file, however short: the binary header (at its
/// place, else the first 400 bytes), the byte-order decision, the layout arithmetic, the text headers and
/// the trace headers that follow the file header.
pub fn segy_headers(bytes: &[u8]) {
    let window = |start: usize, len: usize| {
        let mut w = vec![0u8; len];
        let have = bytes.get(start..).unwrap_or(bytes);
        let n = have.len().min(len);
        w[..n].copy_from_slice(&have[..n]);
        w
    };
    let binary: [u8; BINARY_HEADER_LEN] = if bytes.len() >= FILE_HEADER_LEN {
        bytes[BINARY_HEADER_START..FILE_HEADER_LEN].try_into().expect("400 bytes")
    } else {
        window(0, BINARY_HEADER_LEN).try_into().expect("400 bytes")
    };

    for order in [ByteOrder::Big, ByteOrder::Little] {
        let h = BinaryHeader::parse(&binary, order);
        // Fields written and parsed again are the same (the rev 2.0 view of 3507-3510 is not written).
        let again = BinaryHeader::parse(&h.to_bytes(order), order);
        let comparable = |h: &BinaryHeader| format!("{:?}", BinaryHeader { extra_trace_headers_rev20: 0, ..h.clone() });
        assert_eq!(comparable(&again), comparable(&h));
        let samples = match layout::samples_per_trace(&h) {
            Ok(found) => found.map_or(0, |(n, _)| n),
            Err((at, _)) => {
                assert!(at == layout::EXT_SAMPLES_FIELD.offset && h.ext_samples_per_trace < 0);
                0
            }
        };
        if let Some(dt) = layout::sample_interval(&h) {
            assert!(dt > 0.0 && dt.is_finite(), "interval {dt}");
        }
        let extra = h.extra_trace_headers().max(0) as u64;
        for format in SampleFormat::ALL {
            if let Some(size) = layout::trace_size(samples, format, extra) {
                assert!(size >= TRACE_HEADER_LEN as u64);
                match layout::count_traces(bytes.len() as u64, FILE_HEADER_LEN as u64, size) {
                    TraceCount::Whole(n) => {
                        assert_eq!(FILE_HEADER_LEN as u64 + n * size, (bytes.len() as u64).max(FILE_HEADER_LEN as u64))
                    }
                    TraceCount::Partial { complete, at, left } => {
                        assert!(left > 0 && left < size && at == FILE_HEADER_LEN as u64 + complete * size)
                    }
                }
            }
        }
        for declared in [h.ext_text_headers, -1, i16::MAX] {
            if let Ok(n) = text::extended_record_count(bytes, declared) {
                assert!(n == 0 || FILE_HEADER_LEN + n * TEXT_RECORD_LEN <= bytes.len(), "{n} records announced");
            }
        }
    }
    for endian in [Endian::Auto, Endian::Big, Endian::Little] {
        for forced in [None, Some(SampleFormat::IeeeF32)] {
            if let Ok((order, ByteOrderSource::Detected)) = layout::decide_byte_order(&binary, endian, forced) {
                let code = BinaryHeader::parse(&binary, order).format_code;
                assert!(SampleFormat::is_defined_code(code as i32), "order chosen for code {code}");
            }
        }
    }

    let main: [u8; TEXT_RECORD_LEN] = window(0, TEXT_RECORD_LEN).try_into().expect("3200 bytes");
    let records: Vec<&[u8]> =
        bytes.get(FILE_HEADER_LEN..).unwrap_or_default().chunks(TEXT_RECORD_LEN).take(8).collect();
    let t = TextHeader::decode(&main, &records);
    t.declared_line_bytes();
    for record in &t.extended {
        text::is_end_text(record);
    }

    let standard = HeaderPreset::Standard.locations();
    let traces = bytes.get(FILE_HEADER_LEN..).unwrap_or_default().chunks_exact(TRACE_HEADER_LEN);
    for header in traces.take(HEADER_WINDOWS) {
        let header: &[u8; TRACE_HEADER_LEN] = header.try_into().expect("240 bytes");
        // Locations taken from the header's own first bytes: anywhere a 4-byte field fits.
        let at = |k: usize| u16::from_le_bytes([header[2 * k], header[2 * k + 1]]) % (TRACE_HEADER_LEN as u16 - 3) + 1;
        let anywhere = HeaderLocations { iline: at(0), xline: at(1), x: at(2), y: at(3) };
        assert_eq!(anywhere.invalid(), None);
        for order in [ByteOrder::Big, ByteOrder::Little] {
            for locations in [standard, HeaderPreset::Petrel.locations(), anywhere] {
                let h = TraceHeader::parse(header, order, &locations);
                assert!(h.xy().iter().all(|v| v.is_finite()) && h.first_sample().is_finite());
            }
            let h = TraceHeader::parse(header, order, &standard);
            assert_eq!(TraceHeader::parse(&h.to_bytes(order), order, &standard), h, "written and parsed again");
        }
    }
}

/// Decode arbitrary bytes in the format and order the first byte selects, and compare every value with a
/// decoder written here from the standard's definitions. Where the bytes are IEEE floats, they also go
/// through the IBM encoder and back.
pub fn sample_decode(bytes: &[u8]) {
    let Some((&selector, data)) = bytes.split_first() else { return };
    let format = SampleFormat::ALL[selector as usize % SampleFormat::ALL.len()];
    let order = if selector as usize / SampleFormat::ALL.len() % 2 == 0 { ByteOrder::Big } else { ByteOrder::Little };
    let size = format.bytes();
    let data = &data[..data.len() / size * size];
    let mut out = vec![0.0f32; data.len() / size];
    format.decode(order, data, &mut out);
    for (k, (value, word)) in out.iter().zip(data.chunks_exact(size)).enumerate() {
        let expected = reference_sample(format, order, word);
        assert!(
            value.to_bits() == expected.to_bits() || (value.is_nan() && expected.is_nan()),
            "{format:?} {order:?} sample {k} {word:02x?}: decoded {value:e}, the definition gives {expected:e}"
        );
    }
    if format == SampleFormat::IeeeF32 {
        for &v in out.iter().filter(|v| v.is_finite()) {
            let back = ibm_to_f32(f32_to_ibm(v).expect("finite values have an IBM word"));
            // Leading hex digit 1 leaves 21 significant bits: half an IBM unit is at most 2^-21 of the value;
            // a subnormal result may be rounded once more, by at most half the smallest subnormal.
            let error = (back as f64 - v as f64).abs();
            assert!(error <= (v as f64).abs() * 2f64.powi(-21) + 2f64.powi(-150), "{v:e} became {back:e} through IBM");
        }
    }
}

/// One sample as the SEG-Y standard defines it, computed the plain way.
fn reference_sample(format: SampleFormat, order: ByteOrder, word: &[u8]) -> f32 {
    // Most significant byte first.
    let mut be = word.to_vec();
    if order == ByteOrder::Little {
        be.reverse();
    }
    let unsigned = be.iter().fold(0u128, |acc, &b| acc << 8 | b as u128);
    let bits = 8 * be.len() as u32;
    let signed = if unsigned >> (bits - 1) == 1 { unsigned as i128 - (1i128 << bits) } else { unsigned as i128 };
    match format {
        SampleFormat::IbmF32 => {
            // (-1)^sign × 0.fraction (24 bits, hexadecimal) × 16^(exponent − 64)
            let sign = if be[0] & 0x80 != 0 { -1.0 } else { 1.0 };
            let exponent = (be[0] & 0x7f) as i32 - 64;
            let fraction = (unsigned & 0xff_ffff) as f64 / 16_777_216.0;
            (sign * fraction * 16f64.powi(exponent)) as f32
        }
        SampleFormat::IeeeF32 => f32::from_bits(unsigned as u32),
        SampleFormat::IeeeF64 => f64::from_bits(unsigned as u64) as f32,
        SampleFormat::I8 | SampleFormat::I16 | SampleFormat::I24 | SampleFormat::I32 | SampleFormat::I64 => {
            signed as f32
        }
        SampleFormat::U8 | SampleFormat::U16 | SampleFormat::U24 | SampleFormat::U32 | SampleFormat::U64 => {
            unsigned as f32
        }
    }
}

/// Read an NPY file; an array that reads writes back and reads again unchanged.
pub fn npy(path: &Path, scratch: &Path) -> Result<()> {
    let (shape, values) = npy::read(path).map_err(|e| names_file(e, path))?;
    assert_eq!(shape.iter().product::<usize>(), values.len());
    npy::write(scratch, &shape, &values)?;
    let (shape_again, again) = npy::read(scratch)?;
    assert_eq!(shape_again, shape);
    assert!(same_bits(&again, &values), "values changed through write and read");
    Ok(())
}

/// Open an HDF5 volume; one that opens has a consistent geometry and summary and reads like a volume.
pub fn hdf5(path: &Path, dataset: &str) -> Result<()> {
    let reader = Hdf5Reader::open(path, &Hdf5Options { dataset: dataset.into() }).map_err(|e| names_file(e, path))?;
    let g = reader.geometry();
    let summary = reader.summary();
    assert_eq!(summary.shape, g.shape());
    assert_eq!(g.live.len(), g.n_traces());
    assert_eq!(summary.missing_traces, g.n_missing());
    assert!(g.samples.step > 0.0 && g.samples.step.is_finite() && g.samples.origin.is_finite());
    assert!(g.ilines.step > 0 && g.xlines.step > 0);
    serde_json::to_string(&summary).expect("the summary serializes");
    check_boxes(&reader);
    Ok(())
}

/// A job file and its `--set` overrides: the bytes up to the first NUL are the file, each further NUL-separated
/// piece an override (at most 8). A job that parses prints (`print-config`) as a job that parses to the same.
pub fn job(bytes: &[u8]) -> Result<()> {
    let mut pieces = bytes.split(|&b| b == 0);
    let text = String::from_utf8_lossy(pieces.next().unwrap_or_default());
    let overrides: Vec<String> = pieces.take(8).map(|p| String::from_utf8_lossy(p).into_owned()).collect();
    let path = Path::new("job.toml");
    let job = Job::parse(&text, path, &overrides).inspect_err(|e| match e {
        Error::Config { source_name, location, .. } => {
            assert!(source_name == "job.toml" || source_name == "--set", "errors name the job file: {e}");
            if let Location::Line { line, column } = *location {
                assert!(line >= 1 && line <= text.lines().count() + 1 && column >= 1, "no such place: {e}");
            }
        }
        other => panic!("a job text gives configuration errors only, not: {other}"),
    })?;
    let printed = job.to_toml();
    let again =
        Job::parse(&printed, path, &[]).unwrap_or_else(|e| panic!("the printed job does not parse: {e}\n{printed}"));
    assert_eq!(again.to_toml(), printed, "the printed job parses to another job");
    Ok(())
}
