//! Volumes written by seisimage's SEG-Y writer and read back by its reader: every writable format, both byte
//! orders, both revisions, time and depth. Expected values come from the formats' definitions (IEEE floats
//! are kept bit for bit, IBM floats round to the nearest IBM value, worked out here independently).

use std::path::Path;

use proptest::prelude::*;
use seisimage::io::segy::{
    write_volume, ByteOrder, SegyOptions, SegyReader, SegyWriteOptions, SegyWriter, WriteFormat,
};
use seisimage::volume::{CoordTransform, Domain, Geometry, LineAxis, SampleAxis, VolumeReader};

/// The IBM value nearest to `v` (ties to even), by arithmetic on the definition value = F × 16^(e − 64) / 2^24:
/// choose e with 16^(e−1) ≤ |v| < 16^e, then round the 24-bit fraction F.
fn nearest_ibm(v: f32) -> f32 {
    if v == 0.0 {
        return v;
    }
    let a = v.abs() as f64;
    let mut e = 0;
    while 16f64.powi(e) <= a {
        e += 1;
    }
    while 16f64.powi(e - 1) > a {
        e -= 1;
    }
    let fraction = a / 16f64.powi(e) * 2f64.powi(24); // exact: a power-of-two scaling
    let floor = fraction.floor();
    let rest = fraction - floor;
    let rounded = if rest > 0.5 || (rest == 0.5 && floor % 2.0 == 1.0) { floor + 1.0 } else { floor };
    (rounded * 16f64.powi(e) / 2f64.powi(24)).copysign(v as f64) as f32
}

#[test]
fn nearest_ibm_reference_rounds_as_defined() {
    assert_eq!(nearest_ibm(-118.625), -118.625);
    let ulp_above_one = 2f32.powi(-20); // leading hex digit 1: 21 significant bits
    assert_eq!(nearest_ibm(1.0 + 2f32.powi(-23)), 1.0);
    assert_eq!(nearest_ibm(1.0 + 0.5 * ulp_above_one), 1.0, "tie to even");
    assert_eq!(nearest_ibm(1.0 + 1.5 * ulp_above_one), 1.0 + 2.0 * ulp_above_one, "tie to even");
    assert_eq!(nearest_ibm(15.999999), 15.999999, "leading hex digit F keeps all 24 bits");
}

#[derive(Clone, Debug)]
struct Case {
    geometry: Geometry,
    data: Vec<f32>,
    opts: SegyWriteOptions,
}

fn finite_f32() -> impl Strategy<Value = f32> {
    prop_oneof![
        any::<u32>().prop_map(f32::from_bits).prop_filter("finite", |v| v.is_finite()),
        (-1000i32..1000).prop_map(|v| v as f32 / 8.0),
        Just(0.0f32),
        Just(-0.0f32),
    ]
}

fn case() -> impl Strategy<Value = Case> {
    let axes = (-2000i64..2000, 1i64..5, 1usize..5, -2000i64..2000, 1i64..5, 1usize..6);
    let samples = (1usize..24, prop_oneof![Just(0.5), Just(1.0), Just(2.0), Just(4.0), Just(12.5)], -300i32..3000);
    let coords = proptest::option::of((0u32..1_000_000, 0.0f64..std::f64::consts::TAU, 1u32..4));
    let options = (any::<bool>(), any::<bool>(), 1u8..=2, any::<bool>());
    (axes, samples, coords, options, any::<u64>()).prop_flat_map(
        |((il0, ils, nil, xl0, xls, nxl), (ns, dt, t0), coords, (ibm, little, revision, depth), live_bits)| {
            let ilines = LineAxis::new(il0, ils, nil);
            let xlines = LineAxis::new(xl0, xls, nxl);
            let domain = if depth { Domain::Depth } else { Domain::Time };
            let samples = SampleAxis { origin: t0 as f64 / 10.0, step: dt, len: ns, domain };
            let coords = coords.map(|(centimetres, angle, bin)| {
                let bin = 12.5 * bin as f64;
                let (s, c) = angle.sin_cos();
                CoordTransform {
                    origin: [600_000.0 + centimetres as f64 / 100.0, 6_700_000.0 - centimetres as f64 / 100.0],
                    per_iline: [bin * c, bin * s],
                    per_xline: [-bin * s, bin * c],
                }
            });
            let live = (0..nil * nxl).map(|k| (live_bits >> (k % 64)) & 7 != 0).collect();
            let geometry = Geometry { ilines, xlines, samples, coords, live };
            let opts = SegyWriteOptions {
                format: if ibm { WriteFormat::Ibm } else { WriteFormat::Ieee },
                endian: if little { ByteOrder::Little } else { ByteOrder::Big },
                revision,
                text: vec!["WRITTEN BY THE ROUND-TRIP TEST".into()],
            };
            proptest::collection::vec(finite_f32(), geometry.n_values()).prop_map(move |data| Case {
                geometry: geometry.clone(),
                data,
                opts: opts.clone(),
            })
        },
    )
}

fn config() -> ProptestConfig {
    ProptestConfig { cases: 128, failure_persistence: None, ..ProptestConfig::default() }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn written_volumes_read_back(case in case()) {
        let Case { geometry, data, opts } = case;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v.sgy");
        write_volume(&path, &geometry, &data, &opts).unwrap();

        let reader = SegyReader::open(&path, &SegyOptions::default()).unwrap();
        let g = reader.geometry();
        // A single line has no step in the file: it reads as 1.
        let as_read = |a: LineAxis| if a.len == 1 { LineAxis::new(a.first, 1, 1) } else { a };
        prop_assert_eq!(g.ilines, as_read(geometry.ilines));
        prop_assert_eq!(g.xlines, as_read(geometry.xlines));
        prop_assert_eq!(g.samples, geometry.samples, "sample axis and domain");
        prop_assert_eq!(&g.live, &geometry.live, "dead traces are flagged (trace id 2)");
        prop_assert_eq!(reader.file().byte_order(), opts.endian);
        prop_assert_eq!(reader.file().format().code(), if opts.format == WriteFormat::Ibm { 1 } else { 5 });
        prop_assert_eq!(reader.file().binary_header().revision(), (opts.revision, 0));
        match (geometry.coords, g.coords) {
            (None, None) => {}
            (Some(written), Some(read)) => {
                // Coordinates are stored as integers under a power-of-ten scalar: the plainest one that keeps
                // every coordinate exact, else the finest that fits (centimetres for northings of millions of
                // metres in 4 bytes). The fit through them is within one stored unit, and exact when the
                // scalar is coarser than centimetres (the writer took it because it was exact).
                let scalar = reader.summary().coordinate_scalar;
                let unit = if scalar < 0 { -1.0 / scalar as f64 } else { scalar as f64 };
                let corners = [(0.0, 0.0), (geometry.ilines.len as f64 - 1.0, geometry.xlines.len as f64 - 1.0)];
                for (i, j) in corners {
                    let (a, b) = (written.xy(i, j), read.xy(i, j));
                    let within = if unit <= 0.01 { unit } else { 1e-6 * a[0].abs().max(a[1].abs()).max(1.0) };
                    prop_assert!(
                        (a[0] - b[0]).abs() <= within && (a[1] - b[1]).abs() <= within,
                        "{:?} vs {:?} under scalar {}", a, b, scalar
                    );
                }
            }
            other => prop_assert!(false, "coordinates {:?}", other),
        }

        let mut back = vec![f32::NAN; g.n_values()];
        reader.read_all(&mut back).unwrap();
        let ns = geometry.samples.len;
        for (k, (&got, &put)) in back.iter().zip(&data).enumerate() {
            let want = match (geometry.live[k / ns], opts.format) {
                (false, _) => 0.0,
                (true, WriteFormat::Ieee) => put,
                (true, WriteFormat::Ibm) => nearest_ibm(put),
            };
            prop_assert_eq!(got.to_bits(), want.to_bits(), "value {} written {} read {} expected {}", k, put, got, want);
        }
    }
}

fn small_geometry(domain: Domain, step: f64) -> Geometry {
    Geometry::regular(
        LineAxis::new(10, 2, 3),
        LineAxis::new(100, 1, 4),
        SampleAxis { origin: 0.0, step, len: 5, domain },
    )
}

#[test]
fn depth_volumes_keep_their_domain_and_say_so() {
    let g = small_geometry(Domain::Depth, 12.5);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("depth.sgy");
    let data: Vec<f32> = (0..g.n_values()).map(|k| k as f32).collect();
    write_volume(&path, &g, &data, &SegyWriteOptions::default()).unwrap();
    let reader = SegyReader::open(&path, &SegyOptions::default()).unwrap();
    assert_eq!(reader.geometry().samples, g.samples);
    assert_eq!(reader.file().binary_header().sample_interval, 12500, "dz in mm where time files hold µs");
    let text = &reader.file().text_header().text;
    assert!(text.contains("SEISIMAGE DEPTH VOLUME: INTERVAL FIELDS HOLD DZ IN MM"), "{text}");
    assert!(text.contains("INLINES 10 TO 14 STEP 2 (3), BYTES 189-192"), "{text}");
    let summary = reader.summary();
    assert_eq!((summary.samples.unit, summary.samples.interval), ("m", 12.5));
}

#[test]
fn fractional_microseconds_need_revision_2() {
    let g = small_geometry(Domain::Time, 0.0125);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fine.sgy");
    let data = vec![1.0; g.n_values()];
    let e = write_volume(&path, &g, &data, &SegyWriteOptions::default()).unwrap_err().to_string();
    assert!(e.contains("sample interval 12.5 µs is not a whole number"), "{e}");
    assert!(!path.exists());
    let rev2 = SegyWriteOptions { revision: 2, ..Default::default() };
    write_volume(&path, &g, &data, &rev2).unwrap();
    let reader = SegyReader::open(&path, &SegyOptions::default()).unwrap();
    assert_eq!(reader.geometry().samples.step, 0.0125, "from the rev-2 double at 3273");
}

#[test]
fn ibm_cannot_hold_nan_and_nothing_is_left_behind() {
    let g = small_geometry(Domain::Time, 4.0);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nan.sgy");
    let mut data = vec![1.0; g.n_values()];
    data[5 * 5 + 2] = f32::NAN; // trace 5 is inline 12 (second), crossline 101 (second)
    let ibm = SegyWriteOptions { format: WriteFormat::Ibm, ..Default::default() };
    let e = write_volume(&path, &g, &data, &ibm).unwrap_err().to_string();
    assert!(e.contains("sample 3 of inline 12 crossline 101 is NaN"), "{e}");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "no output, no temporary file");
}

#[test]
fn an_unfinished_writer_keeps_no_file() {
    let g = small_geometry(Domain::Time, 4.0);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("half.sgy");
    let mut w = SegyWriter::create(&path, &g, &SegyWriteOptions::default()).unwrap();
    w.write_trace(&[0.0; 5]).unwrap();
    assert!(w.write_trace(&[0.0; 4]).unwrap_err().to_string().contains("trace 2 has 4 samples, the volume 5"));
    let e = w.finish().unwrap_err().to_string();
    assert!(e.contains("only 1 of 12 traces were written; the file was not kept"), "{e}");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    let e = write_volume(&path, &g, &[0.0; 3], &SegyWriteOptions::default()).unwrap_err().to_string();
    assert!(e.contains("3 samples given for a [3, 4, 5] volume (60 samples)"), "{e}");
}

#[test]
fn text_lines_are_checked_and_written() {
    let g = small_geometry(Domain::Time, 4.0);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("text.sgy");
    let data = vec![0.5; g.n_values()];
    let long = SegyWriteOptions { text: vec!["X".repeat(77)], ..Default::default() };
    assert!(write_volume(&path, &g, &data, &long).unwrap_err().to_string().contains("longer than 76"));
    let opts = SegyWriteOptions { text: vec!["MIGRATED WITH PHASE SHIFT".into()], ..Default::default() };
    write_volume(&path, &g, &data, &opts).unwrap();
    let reader = SegyReader::open(&path, &SegyOptions::default()).unwrap();
    let text = &reader.file().text_header().text;
    let lines: Vec<&str> = text.split('\n').collect();
    assert_eq!(lines.len(), 40);
    assert!(lines[7].starts_with("C 8 MIGRATED WITH PHASE SHIFT"), "{text}");
    assert_eq!(lines[39], "C40 END EBCDIC");
    assert_eq!(reader.file().text_header().encoding, seisimage::io::segy::TextEncoding::Ebcdic);
    let raw = std::fs::read(&path).unwrap();
    assert_eq!(raw[0], 0xC3, "EBCDIC 'C'");
    assert_eq!(&raw[3296..3300], &[1, 2, 3, 4], "byte-order constant, big-endian");
    assert_eq!(raw.len(), 3600 + 12 * (240 + 5 * 4));
}

#[test]
fn written_headers_sit_at_the_standard_bytes() {
    let mut g = small_geometry(Domain::Time, 2.0);
    g.samples.origin = 250.5;
    g.coords =
        Some(CoordTransform { origin: [620_197.25, 6_074_233.5], per_iline: [0.0, 25.0], per_xline: [25.0, 0.0] });
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("headers.sgy");
    let data = vec![0.0; g.n_values()];
    let opts = SegyWriteOptions { endian: ByteOrder::Little, ..Default::default() };
    write_volume(&path, &g, &data, &opts).unwrap();
    let raw = std::fs::read(&path).unwrap();
    let trace = |k: usize| &raw[3600 + k * (240 + 20)..3600 + k * (240 + 20) + 240];
    let i32_at = |h: &[u8], byte: usize| i32::from_le_bytes(h[byte - 1..byte + 3].try_into().unwrap());
    let i16_at = |h: &[u8], byte: usize| i16::from_le_bytes(h[byte - 1..byte + 1].try_into().unwrap());
    let h = trace(5); // inline 12, crossline 101
    assert_eq!((i32_at(h, 189), i32_at(h, 193)), (12, 101));
    assert_eq!((i32_at(h, 1), i32_at(h, 5)), (2, 6), "sequence numbers in line and in file");
    assert_eq!(i16_at(h, 71), -100, "coordinates in centimetres");
    assert_eq!((i32_at(h, 181), i32_at(h, 185)), (62_022_225, 607_425_850));
    assert_eq!((i32_at(h, 73), i32_at(h, 77)), (62_022_225, 607_425_850), "source x/y too");
    assert_eq!((i16_at(h, 109), i16_at(h, 215)), (2505, -10), "delay 250.5 ms");
    assert_eq!((i16_at(h, 115), i16_at(h, 117)), (5, 2000));
    assert_eq!(i16_at(h, 29), 1, "live seismic trace");
    let read = SegyReader::open(Path::new(&path), &SegyOptions::default()).unwrap();
    assert_eq!(read.geometry().samples.origin, 250.5);
}
