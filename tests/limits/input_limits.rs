//! Bounded resources: a header value that sizes something (samples per trace, the interval, the trace count,
//! extended text headers, additional trace headers, an NPY shape, an HDF5 axis) and that the file cannot back
//! gets an error naming the file, the byte offset or dataset, and the field and value; and opening allocates
//! no more than the file justifies, whatever the value asks for (every allocation is counted).
//!
//! The SEG-Y and NPY files are assembled byte by byte here from the formats' definitions; the HDF5 files with
//! the HDF5 library directly.

use std::path::{Path, PathBuf};

use seisimage::error::Location;
use seisimage::io::hdf5::{Hdf5Options, Hdf5Reader};
use seisimage::io::npy;
use seisimage::io::segy::{SegyFile, SegyOptions, SegyReader};
use seisimage::volume::VolumeReader;
use seisimage::Error;

use crate::counting_allocator::{exclusive, peak_allocation};

/// What opening may allocate beyond the size of the file: decoded text, messages, small tables.
const SLACK: usize = 64 << 10;

const SAMPLES: usize = 10;
const TRACE_LEN: usize = 240 + 4 * SAMPLES;

/// A big-endian SEG-Y rev 1 file: a blank EBCDIC text header, a binary header stating a 4 ms interval, 10
/// samples and IEEE floats, then `traces` traces of inline 1 and crosslines 1, 2, ..., each header stating
/// its sample count and interval too.
fn segy(traces: usize) -> Vec<u8> {
    let mut bytes = vec![0x40u8; 3200];
    bytes.resize(3600, 0);
    set(&mut bytes, 3217, &4000i16.to_be_bytes());
    set(&mut bytes, 3221, &(SAMPLES as u16).to_be_bytes());
    set(&mut bytes, 3225, &5i16.to_be_bytes());
    set(&mut bytes, 3501, &[1, 0]);
    for t in 0..traces {
        let mut header = [0u8; 240];
        set(&mut header, 115, &(SAMPLES as u16).to_be_bytes());
        set(&mut header, 117, &4000i16.to_be_bytes());
        set(&mut header, 189, &1i32.to_be_bytes());
        set(&mut header, 193, &(t as i32 + 1).to_be_bytes());
        bytes.extend(header);
        bytes.extend((0..SAMPLES).flat_map(|k| ((t * SAMPLES + k) as f32).to_be_bytes()));
    }
    bytes
}

/// Put `value` at the 1-based byte `byte` (SEG-Y numbering: file bytes for the binary header, header bytes
/// for a trace header).
fn set(bytes: &mut [u8], byte: usize, value: &[u8]) {
    bytes[byte - 1..byte - 1 + value.len()].copy_from_slice(value);
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

/// The file, its byte offset and the message of a format error.
fn format_error(e: Error) -> (PathBuf, Location, String) {
    match e {
        Error::Format { path, location, message } => (path, location, message),
        other => panic!("expected a format error, got {other:?}"),
    }
}

/// Both `SegyFile::open` and `SegyReader::open` refuse `bytes` naming the file, byte `at` and `says`, and
/// allocate at most the file's size (plus slack) while trying.
fn assert_segy_refused(bytes: &[u8], at: u64, says: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "limits.sgy", bytes);
    let opts = SegyOptions::default();
    let (file, peak_file) = peak_allocation(|| SegyFile::open(&path, &opts).map(|_| ()));
    let (reader, peak_reader) = peak_allocation(|| SegyReader::open(&path, &opts).map(|_| ()));
    for (what, result, peak) in [("SegyFile", file, peak_file), ("SegyReader", reader, peak_reader)] {
        let (file, location, message) = format_error(result.expect_err(what));
        assert_eq!(file, path);
        assert_eq!(location, Location::Byte(at), "{what}: {message}");
        for s in says {
            assert!(message.contains(s), "{what}: '{s}' is not in: {message}");
        }
        assert!(peak <= bytes.len() + SLACK, "{what}: {peak} bytes allocated for a {}-byte file", bytes.len());
    }
}

fn assert_segy_opens(bytes: &[u8]) -> SegyReader {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "limits.sgy", bytes);
    SegyReader::open(&path, &SegyOptions::default()).unwrap()
}

#[test]
fn the_probe_file_opens_and_the_allocator_counts() {
    let _one_at_a_time = exclusive();
    let (probe, peak) = peak_allocation(|| vec![1u8; 1 << 20]);
    assert!(peak >= probe.len());
    let reader = assert_segy_opens(&segy(6));
    assert_eq!(reader.geometry().shape(), [1, 6, SAMPLES]);
    assert_eq!(reader.geometry().samples.step, 4.0);
}

#[test]
fn extended_sample_count_of_2_pow_31() {
    let _one_at_a_time = exclusive();
    // Rev 2's extended count is a signed 4-byte integer: 2^31 reads as its most negative value.
    let mut bytes = segy(6);
    set(&mut bytes, 3501, &[2, 0]);
    set(&mut bytes, 3269, &0x8000_0000u32.to_be_bytes());
    assert_segy_refused(&bytes, 3268, &["3269-3272 (rev 2) holds -2147483648 samples per trace (0x80000000)"]);
}

#[test]
fn sample_counts_larger_than_the_file() {
    let _one_at_a_time = exclusive();
    let data = 6 * TRACE_LEN;
    let mut bytes = segy(6);
    set(&mut bytes, 3501, &[2, 0]);
    set(&mut bytes, 3269, &i32::MAX.to_be_bytes());
    let size = 240 + 4 * i32::MAX as u64;
    assert_segy_refused(
        &bytes,
        3268,
        &[
            "3269-3272 (rev 2) announces 2147483647 samples per trace",
            &format!("a trace takes {size} bytes, more than the {data} bytes from the first trace (byte 3600)"),
        ],
    );

    let mut bytes = segy(6);
    set(&mut bytes, 3221, &u16::MAX.to_be_bytes());
    assert_segy_refused(&bytes, 3220, &["3221-3222 announces 65535 samples per trace", "takes 262380 bytes"]);

    // The binary header does not say; the first trace header does.
    let mut bytes = segy(6);
    set(&mut bytes, 3221, &0u16.to_be_bytes());
    set(&mut bytes[3600..], 115, &u16::MAX.to_be_bytes());
    assert_segy_refused(&bytes, 3600 + 114, &["field 115-116 of the first trace announces 65535 samples per trace"]);
}

#[test]
fn negative_or_zero_intervals() {
    let _one_at_a_time = exclusive();
    for dt in [-4000i16, 0] {
        let mut bytes = segy(6);
        set(&mut bytes, 3217, &dt.to_be_bytes());
        set(&mut bytes[3600..], 117, &dt.to_be_bytes());
        assert_segy_refused(
            &bytes,
            3216,
            &["no sample interval", &format!("3217-3218 holds {dt}"), &format!("first trace {dt}")],
        );
    }
    // Rev 2's interval as a double, negative too.
    let mut bytes = segy(6);
    set(&mut bytes, 3501, &[2, 0]);
    set(&mut bytes, 3273, &(-4000.0f64).to_be_bytes());
    set(&mut bytes, 3217, &(-1i16).to_be_bytes());
    set(&mut bytes[3600..], 117, &(-1i16).to_be_bytes());
    assert_segy_refused(&bytes, 3216, &["3217-3218 holds -1, field 3273-3280 (rev 2) -4000"]);
}

#[test]
fn trace_counts_that_disagree_with_the_file_size() {
    let _one_at_a_time = exclusive();
    // The file ends 100 bytes into its third trace.
    let bytes = &segy(4)[..3600 + 2 * TRACE_LEN + 100];
    assert_segy_refused(bytes, 3600 + 2 * TRACE_LEN as u64, &["ends 100 bytes into trace 3"]);

    // Rev 2 states the trace count.
    let stated = |n: u64| {
        let mut bytes = segy(6);
        set(&mut bytes, 3501, &[2, 0]);
        set(&mut bytes, 3513, &n.to_be_bytes());
        bytes
    };
    assert_segy_refused(&stated(10), 3512, &["3513-3520 announces 10 traces", "holds 6 traces of 280", "truncated"]);
    assert_segy_refused(&stated(4), 3512, &["3513-3520 announces 4 traces", "data trailer records"]);
    assert_eq!(assert_segy_opens(&stated(6)).file().trace_count(), 6);
    assert_eq!(assert_segy_opens(&stated(0)).file().trace_count(), 6, "0: the count is not stated");
    // Only files that say they are rev 2 are held to that field.
    let mut bytes = stated(10);
    set(&mut bytes, 3501, &[1, 0]);
    assert_eq!(assert_segy_opens(&bytes).file().trace_count(), 6);
}

#[test]
fn extended_text_header_counts_larger_than_the_file() {
    let _one_at_a_time = exclusive();
    let mut bytes = segy(6);
    set(&mut bytes, 3505, &1000i16.to_be_bytes());
    let after = 6 * TRACE_LEN;
    assert_segy_refused(
        &bytes,
        3504,
        &[&format!(
            "3505-3506 announces 1000 extended text headers (3200000 bytes) but only {after} bytes follow the \
             binary header"
        )],
    );
    set(&mut bytes, 3505, &(-1i16).to_be_bytes());
    assert_segy_refused(&bytes, 3504, &["3505-3506 is -1", "no such stanza"]);
}

#[test]
fn additional_trace_headers_larger_than_the_file() {
    let _one_at_a_time = exclusive();
    let mut bytes = segy(6);
    set(&mut bytes, 3501, &[2, 1]);
    set(&mut bytes, 3507, &u16::MAX.to_be_bytes());
    assert_segy_refused(&bytes, 3506, &["3507 announces 65535 additional trace headers", "more than the 1680 bytes"]);
}

/// An NPY file of version `major` with the header dict `dict`, followed by `data`.
fn npy_bytes(major: u8, dict: &str, data: &[u8]) -> Vec<u8> {
    let mut bytes = b"\x93NUMPY".to_vec();
    bytes.extend([major, 0]);
    match major {
        1 => bytes.extend((dict.len() as u16).to_le_bytes()),
        _ => bytes.extend((dict.len() as u32).to_le_bytes()),
    }
    bytes.extend(dict.as_bytes());
    bytes.extend(data);
    bytes
}

fn assert_npy_refused(bytes: &[u8], at: u64, says: &str) {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "limits.npy", bytes);
    let (result, peak) = peak_allocation(|| npy::read(&path));
    let (file, location, message) = format_error(result.expect_err("refused"));
    assert_eq!((file, location), (path, Location::Byte(at)), "{message}");
    assert!(message.contains(says), "'{says}' is not in: {message}");
    assert!(peak <= bytes.len() + SLACK, "{peak} bytes allocated for a {}-byte file", bytes.len());
}

#[test]
fn huge_npy_shapes() {
    let _one_at_a_time = exclusive();
    let dict = |shape: &str| format!("{{'descr': '<f4', 'fortran_order': False, 'shape': {shape}, }}\n");
    let values: Vec<u8> = (0..4).flat_map(|v| (v as f32).to_le_bytes()).collect();
    // The element count overflows.
    let bytes = npy_bytes(1, &dict("(4294967296, 4294967296, 4294967296)"), &values);
    assert_npy_refused(&bytes, 10, "the shape [4294967296, 4294967296, 4294967296] is too large");
    // 2^30 values announced, 4 present.
    let header = dict("(1073741824,)");
    let bytes = npy_bytes(1, &header, &values);
    let data_start = 10 + header.len() as u64;
    assert_npy_refused(&bytes, data_start, "4294967296 bytes of data, but 16 bytes follow it");
    // A version 2.0 header length of almost 4 GiB.
    let mut bytes = npy_bytes(2, &dict("(4,)"), &values);
    bytes[8..12].copy_from_slice(&0xFFFF_FFF0u32.to_le_bytes());
    assert_npy_refused(&bytes, 8, "the header length 4294967280 runs past the end of the file");
}
#[test]
fn npy_headers_nested_deeper_than_the_stack() {
    let _one_at_a_time = exclusive();
    // 100 000 opening parentheses: one level of the header parser's recursion each, far beyond a test
    // thread's stack.
    let prefix = "{'descr': '<f4', 'fortran_order': False, 'shape': ";
    let bytes = npy_bytes(2, &format!("{prefix}{}", "(".repeat(100_000)), &[]);
    let thirty_third = 12 + prefix.len() as u64 + 32;
    assert_npy_refused(&bytes, thirty_third, "tuples nested more than 32 deep; a shape is a flat tuple");
    // 32 levels are parsed, and refused for what they are, at the 'shape' key (as any other bad value).
    let nested = format!("{}1{}", "(".repeat(32), ",)".repeat(32));
    let bytes = npy_bytes(1, &format!("{prefix}{nested}}}"), &[]);
    let shape_key = 10 + prefix.find("'shape'").unwrap() as u64;
    assert_npy_refused(&bytes, shape_key, "the shape must be a tuple of whole numbers");
}

/// An HDF5 file holding `/seismic` of `shape` (float32, chunked, nothing written: HDF5 stores no values for
/// it) and whatever `more` adds.
fn hdf5_file(dir: &Path, shape: [usize; 3], more: impl FnOnce(&hdf5::File)) -> PathBuf {
    let path = dir.join("limits.h5");
    let file = hdf5::File::create(&path).unwrap();
    let chunk = shape.map(|n| n.min(64));
    file.new_dataset::<f32>().shape(shape).chunk(chunk).create("seismic").unwrap();
    more(&file);
    path
}

fn hdf5_error(path: &Path) -> (String, usize) {
    let (result, peak) = peak_allocation(|| Hdf5Reader::open(path, &Hdf5Options::default()).map(|_| ()));
    let (file, _, message) = format_error(result.expect_err("refused"));
    assert_eq!(file, path);
    (message, peak)
}

/// Chunks never written take no room: a file of a few hundred bytes declares a volume of 2^31 samples (8
/// GB), all fill values, and a twt axis for them. Reading such a volume (`info` reads every sample)
/// allocated 8 GB; it is refused at once.
#[test]
fn hdf5_volume_larger_than_the_file() {
    let _one_at_a_time = exclusive();
    let dir = tempfile::tempdir().unwrap();
    let n = 1usize << 31;
    let path = hdf5_file(dir.path(), [1, 1, n], |f| {
        f.new_dataset::<f64>().shape([n]).chunk([4096]).create("twt").unwrap();
    });
    let len = std::fs::metadata(&path).unwrap().len() as usize;
    assert!(len < 4096, "{len} bytes");
    let (message, peak) = hdf5_error(&path);
    let expect = format!(
        "dataset /seismic declares 2147483648 values of 4 bytes (shape [1, 1, 2147483648], 8.59 GB), more than a \
         file of {len} bytes holds"
    );
    assert!(message.contains(&expect), "{message}");
    assert!(peak <= 1 << 20, "{peak} bytes allocated for a {len}-byte file");
}

/// An axis as long as a volume the file can hold, all one value: it is checked in blocks, never read whole.
#[test]
fn hdf5_sample_axis_is_read_in_blocks() {
    let _one_at_a_time = exclusive();
    let dir = tempfile::tempdir().unwrap();
    let n = 1usize << 20;
    let path = hdf5_file(dir.path(), [1, 1, n], |f| {
        f.new_dataset::<f64>().shape([n]).chunk([4096]).create("twt").unwrap().write_raw(&vec![0.0; n]).unwrap();
    });
    let len = std::fs::metadata(&path).unwrap().len() as usize;
    let (message, peak) = hdf5_error(&path);
    assert!(message.contains("/twt must increase (from 0 to 0 over 1048576 values)"), "{message}");
    // The axis is checked in blocks: reading it allocates a block, never the whole axis.
    assert!(peak <= 1 << 20, "{peak} bytes allocated for a {len}-byte file");
}

#[test]
fn hdf5_axes_are_checked_beyond_their_first_block() {
    let _one_at_a_time = exclusive();
    let dir = tempfile::tempdir().unwrap();
    let n = 200_001;
    let path = hdf5_file(dir.path(), [1, 1, n], |f| {
        let mut twt: Vec<f64> = (0..n).map(|k| 2.0 * k as f64).collect();
        twt[n - 7] += 0.5;
        f.new_dataset_builder().with_data(&twt).create("twt").unwrap();
    });
    let (message, _) = hdf5_error(&path);
    assert!(message.contains("/twt is not evenly spaced: value 199994 is 399988.5"), "{message}");
}
#[test]
fn hdf5_line_axes_beyond_64_bit_line_numbers() {
    let _one_at_a_time = exclusive();
    let dir = tempfile::tempdir().unwrap();
    let path = hdf5_file(dir.path(), [3, 2, 4], |f| {
        let seismic = f.dataset("seismic").unwrap();
        seismic.new_attr::<f64>().create("iline_first").unwrap().write_scalar(&0.0).unwrap();
        seismic.new_attr::<f64>().create("iline_step").unwrap().write_scalar(&1e30).unwrap();
    });
    let (message, _) = hdf5_error(&path);
    assert!(
        message.ends_with(
            "the iline axis of /seismic (first 0, step 1e30, 3 lines, from attributes iline_first, iline_step) \
             reaches 2e30, beyond the line numbers seisimage holds (64-bit integers)"
        ),
        "{message}"
    );
}
