//! Damaged SEG-Y files: truncated, with flipped header bytes, absurd sample counts, trace sizes and text header
//! counts. Opening them must never panic, and never allocate more than the file could hold, whatever the
//! headers announce; this binary counts every allocation to prove it. Files that still open must read.

use std::path::Path;

use proptest::prelude::*;
use seisimage::io::segy::{write_volume, ByteOrder, SegyFile, SegyOptions, SegyReader, SegyWriteOptions, WriteFormat};
use seisimage::volume::{CoordTransform, Domain, Geometry, LineAxis, SampleAxis, ValueBox, VolumeReader};

use crate::counting_allocator::{exclusive, peak_allocation};

/// What opening may allocate beyond the size of the file: decoded text, messages, small tables.
const SLACK: usize = 64 << 10;

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/segyio").join(name)).unwrap()
}

/// Valid files to damage: some written by seisimage (rev 1 and 2, both orders, IBM and IEEE, dead traces),
/// some segyio fixtures (extended text headers, a -1 count, additional trace headers, 2- and 3-byte samples).
fn originals() -> Vec<Vec<u8>> {
    let dir = tempfile::tempdir().unwrap();
    let mut out = Vec::new();
    for (k, (format, endian, revision)) in [
        (WriteFormat::Ieee, ByteOrder::Big, 1),
        (WriteFormat::Ibm, ByteOrder::Little, 2),
        (WriteFormat::Ieee, ByteOrder::Little, 1),
    ]
    .into_iter()
    .enumerate()
    {
        let mut g = Geometry::regular(
            LineAxis::new(100, 2, 4),
            LineAxis::new(7, 1, 5),
            SampleAxis { origin: 8.0, step: 4.0, len: 16, domain: Domain::Time },
        );
        g.coords = Some(CoordTransform { origin: [1000.0, 2000.0], per_iline: [0.0, 25.0], per_xline: [12.5, 0.0] });
        g.live[3] = false;
        let data: Vec<f32> = (0..g.n_values()).map(|v| (v as f32 * 0.37).sin()).collect();
        let path = dir.path().join(format!("{k}.sgy"));
        write_volume(&path, &g, &data, &SegyWriteOptions { format, endian, revision, text: vec![] }).unwrap();
        out.push(std::fs::read(&path).unwrap());
    }
    for name in [
        "small.sgy",
        "multi-text.sgy",
        "stanzas-unknown-count.sgy",
        "rotated-small-rev2.sgy",
        "trace-header-extensions.sgy",
        "f3-lsb.sgy",
        "multiformats/Format7msb.sgy",
    ] {
        out.push(fixture(name));
    }
    out
}

/// One kind of damage.
#[derive(Clone, Debug)]
enum Damage {
    Truncate(usize),
    /// Replace bytes at positions (taken modulo the file length, biased to the headers).
    Flip(Vec<(usize, u8)>),
    /// Write a big-endian or little-endian number into a binary or trace header field.
    Field {
        at: usize,
        value: u64,
        width: usize,
        little: bool,
    },
}

fn damage() -> impl Strategy<Value = Damage> {
    // Binary header fields that size things, and trace header fields the reader uses.
    let fields = prop_oneof![
        Just(3216usize),  // interval
        Just(3220),       // samples per trace
        Just(3224),       // format
        Just(3268),       // extended samples per trace
        Just(3272),       // extended interval
        Just(3296),       // byte-order constant
        Just(3500),       // revision
        Just(3504),       // extended text headers
        Just(3506),       // additional trace headers
        Just(3520),       // first trace offset
        Just(3600 + 114), // first trace: samples
        Just(3600 + 188), // first trace: inline
        Just(3600 + 70),  // first trace: coordinate scalar
    ];
    prop_oneof![
        (0usize..40_000).prop_map(Damage::Truncate),
        proptest::collection::vec((0usize..4400, any::<u8>()), 1..12).prop_map(Damage::Flip),
        proptest::collection::vec((0usize..200_000, any::<u8>()), 1..12).prop_map(Damage::Flip),
        (fields, any::<u64>(), prop_oneof![Just(1usize), Just(2), Just(4), Just(8)], any::<bool>())
            .prop_map(|(at, value, width, little)| Damage::Field { at, value, width, little }),
    ]
}

fn apply(mut bytes: Vec<u8>, damage: &[Damage]) -> Vec<u8> {
    for d in damage {
        match d {
            Damage::Truncate(n) => bytes.truncate(*n % (bytes.len() + 1)),
            Damage::Flip(changes) => {
                for &(at, v) in changes {
                    if !bytes.is_empty() {
                        let n = bytes.len();
                        bytes[at % n] = v;
                    }
                }
            }
            Damage::Field { at, value, width, little } => {
                let be = value.to_be_bytes();
                let mut field = be[8 - width..].to_vec();
                if *little {
                    field.reverse();
                }
                if at + width <= bytes.len() {
                    bytes[*at..at + width].copy_from_slice(&field);
                }
            }
        }
    }
    bytes
}

fn options() -> impl Strategy<Value = SegyOptions> {
    (any::<bool>(), proptest::option::of(prop_oneof![Just(1u16), Just(3), Just(8), Just(6)])).prop_map(
        |(petrel, sample_format)| SegyOptions {
            preset: if petrel { seisimage::io::segy::HeaderPreset::Petrel } else { Default::default() },
            sample_format,
            ..Default::default()
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 600, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn damaged_files_never_panic_nor_overallocate(
        original in 0usize..10,
        damage in proptest::collection::vec(damage(), 1..4),
        opts in options(),
    ) {
        let _one_at_a_time = exclusive();
        let (probe, peak) = peak_allocation(|| vec![1u8; 1 << 16]);
        prop_assert!(peak >= probe.len(), "the counting allocator sees allocations");
        let originals = ORIGINALS.with(|o| o.clone());
        let bytes = apply(originals[original % originals.len()].clone(), &damage);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("damaged.sgy");
        std::fs::write(&path, &bytes).unwrap();
        let len = bytes.len();
        drop(bytes);

        let (file, peak) = peak_allocation(|| SegyFile::open(&path, &opts));
        prop_assert!(peak <= len + SLACK, "SegyFile::open allocated {} bytes for a {}-byte file", peak, len);
        if let Ok(file) = &file {
            let mut trace = vec![0.0; file.samples_per_trace()];
            prop_assert!(trace.len() * file.trace_count() * 4 <= 4 * len, "samples are backed by the file");
            for i in 0..file.trace_count() {
                file.read_trace(i, &mut trace).unwrap();
                file.trace_header(i).unwrap();
            }
        }
        let (reader, peak) = peak_allocation(|| SegyReader::open(&path, &opts));
        prop_assert!(peak <= len + SLACK, "SegyReader::open allocated {} bytes for a {}-byte file", peak, len);
        match reader {
            Ok(reader) => {
                let g = reader.geometry();
                // The grid has at most 4 cells per trace and 4-byte floats replace samples of at least 1 byte.
                prop_assert!(g.n_values() * 4 <= 16 * len, "{} values from a {}-byte file", g.n_values(), len);
                let mut all = vec![0.0f32; g.n_values()];
                let ((), peak) = peak_allocation(|| reader.read_all(&mut all).unwrap());
                prop_assert!(peak <= SLACK, "read_all allocated {} bytes", peak);
                let middle = g.samples.value(g.samples.len / 2);
                let slice = reader.read_selection(&ValueBox { sample: Some([middle, middle]), ..Default::default() });
                prop_assert!(slice.is_ok(), "{:?}", slice.err());
                serde_json::to_string(&reader.summary()).unwrap();
            }
            Err(e) => {
                let message = e.to_string();
                prop_assert!(message.contains("damaged.sgy"), "the error names the file: {}", message);
            }
        }
    }
}

thread_local! {
    static ORIGINALS: Vec<Vec<u8>> = originals();
}
