//! SEG-Y files built byte by byte in this test from the standard's definitions (not by seisimage's writer),
//! in every sample format, both byte orders, any trace order, with missing and dead traces: the reader must
//! place every value at its (inline, crossline) and decode it as the format defines.

use std::path::{Path, PathBuf};

use proptest::prelude::*;
use seisimage::io::segy::{SegyFile, SegyOptions, SegyReader};
use seisimage::volume::{LineAxis, ValueBox, Volume, VolumeReader, WriteMode};

/// Sample format codes and their sizes in bytes, from the SEG-Y rev 2 table.
const FORMATS: [(u16, usize); 13] =
    [(1, 4), (2, 4), (3, 2), (5, 4), (6, 8), (7, 3), (8, 1), (9, 8), (10, 4), (11, 2), (12, 8), (15, 3), (16, 1)];

/// One trace of a test file.
#[derive(Clone, Debug)]
struct Trace {
    iline: i32,
    xline: i32,
    offset: i32,
    dead: bool,
    /// Random bits from which each sample of the format is made.
    raw: Vec<u64>,
}

/// A file described field by field.
#[derive(Clone, Debug)]
struct Encoded {
    little: bool,
    /// Write the rev-2 byte-order constant, or leave the order to be detected.
    order_constant: bool,
    format: u16,
    samples: usize,
    interval_us: i16,
    delay_ms: i16,
    traces: Vec<Trace>,
}

impl Encoded {
    fn bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        let mut text = vec![b' '; 3200];
        text[..20].copy_from_slice(b"C 1 TEST ENCODER    ");
        out.extend(text);
        let mut bin = vec![0u8; 400];
        put(&mut bin, 3217 - 3201, &self.i16(self.interval_us));
        put(&mut bin, 3221 - 3201, &self.i16(self.samples as i16));
        put(&mut bin, 3225 - 3201, &self.i16(self.format as i16));
        if self.order_constant {
            put(&mut bin, 3297 - 3201, &self.i32(0x0102_0304));
            bin[300] = 2; // rev 2.0, which defines the constant
        }
        out.extend(bin);
        for t in &self.traces {
            let mut h = vec![0u8; 240];
            put(&mut h, 28, &self.i16(if t.dead { 2 } else { 1 }));
            put(&mut h, 36, &self.i32(t.offset));
            put(&mut h, 108, &self.i16(self.delay_ms));
            put(&mut h, 114, &self.i16(self.samples as i16));
            put(&mut h, 116, &self.i16(self.interval_us));
            put(&mut h, 188, &self.i32(t.iline));
            put(&mut h, 192, &self.i32(t.xline));
            out.extend(h);
            for &raw in &t.raw {
                out.extend(encode_sample(self.format, raw, self.little));
            }
        }
        out
    }

    fn i16(&self, v: i16) -> Vec<u8> {
        ordered(&v.to_be_bytes(), self.little)
    }

    fn i32(&self, v: i32) -> Vec<u8> {
        ordered(&v.to_be_bytes(), self.little)
    }

    fn write(&self, dir: &Path) -> PathBuf {
        let path = dir.join("encoded.sgy");
        std::fs::write(&path, self.bytes()).unwrap();
        path
    }
}

fn put(buf: &mut [u8], at: usize, bytes: &[u8]) {
    buf[at..at + bytes.len()].copy_from_slice(bytes);
}

/// Big-endian bytes in the requested order.
fn ordered(big_endian: &[u8], little: bool) -> Vec<u8> {
    let mut v = big_endian.to_vec();
    if little {
        v.reverse();
    }
    v
}

/// The bytes of one sample made from `raw` (truncated to the format's width), most significant first unless
/// `little`.
fn encode_sample(format: u16, raw: u64, little: bool) -> Vec<u8> {
    let width = FORMATS.iter().find(|f| f.0 == format).unwrap().1;
    let be = raw.to_be_bytes();
    ordered(&be[8 - width..], little)
}

/// The value a sample made from `raw` stands for, by the format's definition.
fn expected_value(format: u16, raw: u64) -> f32 {
    match format {
        1 => ibm_by_definition(raw as u32),
        2 => raw as u32 as i32 as f32,
        3 => raw as u16 as i16 as f32,
        5 => f32::from_bits(raw as u32),
        6 => f64::from_bits(raw) as f32,
        7 => (((raw as u32) << 8) as i32 >> 8) as f32,
        8 => raw as u8 as i8 as f32,
        9 => raw as i64 as f32,
        10 => raw as u32 as f32,
        11 => raw as u16 as f32,
        12 => raw as f32,
        15 => (raw as u32 & 0x00ff_ffff) as f32,
        16 => raw as u8 as f32,
        _ => unreachable!(),
    }
}

/// IBM float to the nearest f32 worked out bit by bit: value = fraction × 2^(4(exponent − 64) − 24); shift
/// the fraction until its leading one is bit 23, then build the f32 (rounding half to even where the
/// result is subnormal, overflowing to infinity).
fn ibm_by_definition(word: u32) -> f32 {
    let sign = word & 0x8000_0000;
    let mut fraction = word & 0x00ff_ffff;
    if fraction == 0 {
        return f32::from_bits(sign);
    }
    let mut exp2 = 4 * (((word >> 24) & 0x7f) as i32 - 64) - 24;
    while fraction < 1 << 23 {
        fraction <<= 1;
        exp2 -= 1;
    }
    let unbiased = exp2 + 23; // value = 1.fff × 2^unbiased
    let magnitude = if unbiased > 127 {
        0x7f80_0000
    } else if unbiased >= -126 {
        ((unbiased + 127) as u32) << 23 | (fraction & 0x007f_ffff)
    } else {
        let shift = (-126 - unbiased) as u32; // subnormal: mantissa = fraction / 2^(shift) in units of 2^-149
        if shift > 24 {
            0
        } else {
            let kept = fraction >> shift;
            let rest = fraction & ((1 << shift) - 1);
            let half = 1 << (shift - 1);
            kept + (rest > half || (rest == half && kept & 1 == 1)) as u32
        }
    };
    f32::from_bits(sign | magnitude)
}

fn same(a: f32, b: f32) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

/// A grid and a way of storing it: line numbers, trace order, holes and dead traces.
#[derive(Clone, Debug)]
struct Layout {
    ilines: LineAxis,
    xlines: LineAxis,
    crossline_sorted: bool,
    ilines_descending: bool,
    xlines_descending: bool,
    /// Cells (il index, xl index) left out of the file; never on the first inline or crossline, so that
    /// every line number stays in the file and the axes are known by construction.
    missing: Vec<(usize, usize)>,
    dead: Vec<(usize, usize)>,
}

impl Layout {
    /// The cells in file order.
    fn file_order(&self) -> Vec<(usize, usize)> {
        let order = |n: usize, descending: bool| -> Vec<usize> {
            if descending {
                (0..n).rev().collect()
            } else {
                (0..n).collect()
            }
        };
        let ils = order(self.ilines.len, self.ilines_descending);
        let xls = order(self.xlines.len, self.xlines_descending);
        let cells: Vec<(usize, usize)> = if self.crossline_sorted {
            xls.iter().flat_map(|&j| ils.iter().map(move |&i| (i, j))).collect()
        } else {
            ils.iter().flat_map(|&i| xls.iter().map(move |&j| (i, j))).collect()
        };
        cells.into_iter().filter(|c| !self.missing.contains(c)).collect()
    }
}

fn layout() -> impl Strategy<Value = Layout> {
    (-500i64..500, 1i64..4, 1usize..6, -500i64..500, 1i64..4, 1usize..6, any::<[bool; 3]>(), any::<u64>()).prop_map(
        |(il0, ils, nil, xl0, xls, nxl, [cross, ildesc, xldesc], holes)| {
            let inner: Vec<(usize, usize)> = (1..nil).flat_map(|i| (1..nxl).map(move |j| (i, j))).collect();
            let pick = |salt: u64| -> Vec<(usize, usize)> {
                inner
                    .iter()
                    .enumerate()
                    .filter(|(k, _)| (holes.rotate_left(salt as u32) >> (k % 64)) & 3 == 0)
                    .map(|(_, c)| *c)
                    .collect()
            };
            let missing = pick(0);
            let dead = pick(17).into_iter().filter(|c| !missing.contains(c)).collect();
            Layout {
                // A single line has no step to find: the reader reports 1.
                ilines: LineAxis::new(il0, if nil > 1 { ils } else { 1 }, nil),
                xlines: LineAxis::new(xl0, if nxl > 1 { xls } else { 1 }, nxl),
                crossline_sorted: cross,
                ilines_descending: ildesc,
                xlines_descending: xldesc,
                missing,
                dead,
            }
        },
    )
}

fn config() -> ProptestConfig {
    ProptestConfig { cases: 96, failure_persistence: None, ..ProptestConfig::default() }
}

proptest! {
    #![proptest_config(config())]

    /// Every format in both byte orders (detected, or from the constant), any trace order: each value lands
    /// at its (inline, crossline), decoded as the format defines; holes read as zeros and are not live; dead
    /// traces are decoded but not live.
    #[test]
    fn every_format_any_order_lands_in_place(
        layout in layout(),
        format_index in 0..FORMATS.len(),
        little in any::<bool>(),
        order_constant in any::<bool>(),
        samples in 1usize..12,
        seed in any::<u64>(),
    ) {
        let format = FORMATS[format_index].0;
        let cells = layout.file_order();
        let mut state = seed | 1;
        let mut next = move || { state ^= state << 13; state ^= state >> 7; state ^= state << 17; state };
        let traces: Vec<Trace> = cells.iter().map(|&(i, j)| Trace {
            iline: layout.ilines.value(i) as i32,
            xline: layout.xlines.value(j) as i32,
            offset: 0,
            dead: layout.dead.contains(&(i, j)),
            raw: (0..samples).map(|_| next()).collect(),
        }).collect();
        let file = Encoded { little, order_constant, format, samples, interval_us: 2000, delay_ms: 100, traces };
        let dir = tempfile::tempdir().unwrap();
        let path = file.write(dir.path());

        let reader = SegyReader::open(&path, &SegyOptions::default()).unwrap();
        let g = reader.geometry();
        prop_assert_eq!(g.ilines, layout.ilines);
        prop_assert_eq!(g.xlines, layout.xlines);
        prop_assert_eq!((g.samples.len, g.samples.step, g.samples.origin), (samples, 2.0, 100.0));
        let mut data = vec![f32::NAN; g.n_values()];
        reader.read_all(&mut data).unwrap();
        let nx = layout.xlines.len;
        for (t, &(i, j)) in cells.iter().enumerate() {
            let cell = i * nx + j;
            prop_assert_eq!(g.live[cell], !layout.dead.contains(&(i, j)));
            for (s, &raw) in file.traces[t].raw.iter().enumerate() {
                let (got, want) = (data[cell * samples + s], expected_value(format, raw));
                prop_assert!(same(got, want), "format {} il {} xl {} sample {}: {} != {}", format, i, j, s, got, want);
            }
        }
        for &(i, j) in &layout.missing {
            let cell = i * nx + j;
            prop_assert!(!g.live[cell]);
            prop_assert!(data[cell * samples..(cell + 1) * samples].iter().all(|&v| v == 0.0));
        }
        prop_assert_eq!(g.n_missing(), layout.missing.len() + layout.dead.len());
        prop_assert_eq!(reader.grid().missing, layout.missing.len());

        // Read for a device copy (streamed around the caches) into a buffer off the 16-byte grid, each
        // trace passing through a hook on the way: the hook's values, in the same places.
        let mut backing = vec![f32::NAN; g.n_values() + 1];
        let hooked = |_: usize, trace: &mut [f32]| trace.iter_mut().for_each(|v| *v = -*v);
        reader.read_box_each(&g.full_box(), &mut backing[1..], &hooked, WriteMode::Streaming).unwrap();
        let differ = backing[1..].iter().zip(&data).position(|(a, b)| !same(*a, -*b));
        prop_assert_eq!(differ, None);

        // Any selection by header values reads what the same cut of the whole volume holds.
        let whole = Volume { geometry: g.clone(), data };
        let il = layout.ilines.value(layout.ilines.len / 2);
        let xl = layout.xlines.value(layout.xlines.len - 1);
        let t = 100.0 + 2.0 * (samples / 2) as f64;
        for sel in [
            ValueBox { iline: Some([il, il]), ..Default::default() },
            ValueBox { xline: Some([xl, xl]), ..Default::default() },
            ValueBox { sample: Some([t, t]), ..Default::default() },
            ValueBox { iline: Some([il, layout.ilines.last()]), xline: Some([xl, layout.xlines.first]), sample: Some([100.0, t]) },
        ] {
            let part = reader.read_selection(&sel).unwrap();
            let expected = whole.cut(&g.index_box(&sel).unwrap());
            prop_assert_eq!(&part.geometry, &expected.geometry);
            prop_assert!(part.data.iter().zip(&expected.data).all(|(a, b)| same(*a, *b)), "selection {}", sel);
        }
    }

    /// IBM words of every kind, unnormalised ones included, decode to the nearest f32.
    #[test]
    fn any_ibm_word_decodes_to_the_nearest_f32(words in proptest::collection::vec(any::<u32>(), 1..64), little in any::<bool>()) {
        let traces = vec![Trace { iline: 1, xline: 1, offset: 0, dead: false, raw: words.iter().map(|&w| w as u64).collect() }];
        let file = Encoded { little, order_constant: false, format: 1, samples: words.len(), interval_us: 4000, delay_ms: 0, traces };
        let dir = tempfile::tempdir().unwrap();
        let segy = SegyFile::open(&file.write(dir.path()), &SegyOptions::default()).unwrap();
        let mut out = vec![0.0; words.len()];
        segy.read_trace(0, &mut out).unwrap();
        for (w, v) in words.iter().zip(&out) {
            prop_assert!(same(*v, ibm_by_definition(*w)), "{:#010x}: {} != {}", w, v, ibm_by_definition(*w));
        }
    }
}

#[test]
fn ibm_reference_agrees_with_worked_examples() {
    assert_eq!(ibm_by_definition(0xC276_A000), -118.625);
    assert_eq!(ibm_by_definition(0x4110_0000), 1.0);
    assert_eq!(ibm_by_definition(0x4100_1000), 1.0 / 256.0, "unnormalised");
    assert_eq!(ibm_by_definition(0x7FFF_FFFF), f32::INFINITY);
    // 0.5 × 16^-37 = 2^-149, the smallest f32 subnormal; a quarter is a tie, rounding to even (zero); three
    // quarters are 1.5 × 2^-149, a tie rounding up to the even 2 × 2^-149.
    assert_eq!(ibm_by_definition(0x1B80_0000), f32::from_bits(1));
    assert_eq!(ibm_by_definition(0x1B40_0000), 0.0);
    assert_eq!(ibm_by_definition(0x1BC0_0000), f32::from_bits(2));
}

/// A small inline-sorted file with the given (iline, xline, offset) per trace.
fn small_file(dir: &Path, traces: &[(i32, i32, i32)], format: u16) -> PathBuf {
    let traces = traces
        .iter()
        .map(|&(iline, xline, offset)| Trace { iline, xline, offset, dead: false, raw: vec![0x4110_0000; 3] })
        .collect();
    Encoded { little: false, order_constant: false, format, samples: 3, interval_us: 4000, delay_ms: 0, traces }
        .write(dir)
}

fn refusal(path: &Path) -> String {
    SegyReader::open(path, &SegyOptions::default()).unwrap_err().to_string()
}

#[test]
fn duplicate_locations_are_refused_with_the_traces_named() {
    let dir = tempfile::tempdir().unwrap();
    let path = small_file(dir.path(), &[(1, 1, 0), (1, 2, 0), (2, 1, 0), (1, 2, 0), (2, 2, 0)], 5);
    let message = refusal(&path);
    assert!(message.contains("at trace 4 (byte 4356)"), "{message}"); // 3600 + 3 × (240 + 3 × 4)
    assert!(message.contains("traces 2 and 4 both have inline 1 crossline 2 (at bytes 189/193)"), "{message}");
    assert!(message.contains("1 of 5 traces repeat a location"), "{message}");
}

#[test]
fn several_offsets_per_location_are_refused_as_prestack() {
    let dir = tempfile::tempdir().unwrap();
    let traces: Vec<(i32, i32, i32)> =
        (1..=2).flat_map(|il| (1..=2).flat_map(move |xl| (1..=3).map(move |off| (il, xl, off * 100)))).collect();
    let message = refusal(&small_file(dir.path(), &traces, 5));
    assert!(message.contains("pre-stack data"), "{message}");
    assert!(message.contains("3 distinct offsets, 100..=300"), "{message}");
}

#[test]
fn line_numbers_that_span_no_grid_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let message = refusal(&small_file(dir.path(), &[(1, 1, 0), (2, 2, 0), (5000, 7000, 0)], 5));
    assert!(message.contains("not a post-stack grid"), "{message}");
    assert!(message.contains("inlines 1..=5000 step 1 and crosslines 1..=7000 step 1"), "{message}");
    assert!(message.contains("extreme numbers: inlines 1 and 3, crosslines 1 and 3"), "{message}");
}

#[test]
fn format_4_and_unknown_codes_are_refused_at_the_format_field() {
    let dir = tempfile::tempdir().unwrap();
    let path = small_file(dir.path(), &[(1, 1, 0)], 5);
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[3224..3226].copy_from_slice(&4i16.to_be_bytes());
    std::fs::write(&path, &bytes).unwrap();
    let message = SegyFile::open(&path, &SegyOptions::default()).unwrap_err().to_string();
    assert!(message.contains("at byte 3224"), "{message}");
    assert!(message.contains("sample format code 4 (4-byte fixed point with gain"), "{message}");
    bytes[3224..3226].copy_from_slice(&13i16.to_be_bytes());
    std::fs::write(&path, &bytes).unwrap();
    // Code 13 is defined in neither byte order, so the order cannot be told either ...
    let message = SegyFile::open(&path, &SegyOptions::default()).unwrap_err().to_string();
    assert!(message.contains("reads 13 big-endian and 3328 little-endian, neither a SEG-Y format code"), "{message}");
    // ... unless it is given.
    let big = SegyOptions { endian: seisimage::io::segy::Endian::Big, ..Default::default() };
    let message = SegyFile::open(&path, &big).unwrap_err().to_string();
    assert!(
        message.contains("at byte 3224: binary header field 3225-3226: unknown sample format code 13"),
        "{message}"
    );
}

#[test]
fn a_truncated_file_is_refused_at_the_incomplete_trace() {
    let dir = tempfile::tempdir().unwrap();
    let path = small_file(dir.path(), &[(1, 1, 0), (1, 2, 0), (1, 3, 0)], 5);
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() - 5]).unwrap();
    let message = SegyFile::open(&path, &SegyOptions::default()).unwrap_err().to_string();
    // traces of 240 + 3 × 4 bytes from byte 3600: the third starts at 4104 and lacks 5 of its 252 bytes
    assert!(message.contains("at byte 4104: the file ends 247 bytes into trace 3"), "{message}");
}
