//! The multi-threaded PNG encoder (src/render/png_encode), its output checked with independent decoders: `png::Decoder` for pixels and text, flate2's `ZlibDecoder` for
//! the IDAT stream itself, against a plain sequential filter written here from the PNG spec.

use std::io::{Cursor, Read};

use flate2::read::ZlibDecoder;
use seisimage::render::png_encode::{
    adler32, adler32_combine, adler32_update, write_rgb_png, EncodeOptions, RowFilter,
};

const FILTERS: [RowFilter; 6] =
    [RowFilter::None, RowFilter::Sub, RowFilter::Up, RowFilter::Avg, RowFilter::Paeth, RowFilter::Adaptive];

/// Pixels that exercise every byte value: a gradient plus xorshift noise.
fn noisy_rgb(width: usize, height: usize, seed: u64) -> Vec<u8> {
    let mut s = seed | 1;
    (0..width * height * 3)
        .map(|i| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            if (s >> 60) < 4 {
                (s >> 32) as u8
            } else {
                (i / 3 % 251) as u8
            }
        })
        .collect()
}

fn encode(width: u32, height: u32, rgb: &[u8], opts: &EncodeOptions) -> Vec<u8> {
    let mut out = Vec::new();
    write_rgb_png(&mut out, width, height, rgb, "seisimage test", Some("Inline 1234 — ü"), opts).unwrap();
    out
}

/// Decode with the png crate, with Adler-32 verification on (png 0.18 skips it by default), and return
/// (width, height, RGB pixels).
fn try_decode(png_bytes: &[u8]) -> Result<(u32, u32, Vec<u8>), png::DecodingError> {
    let mut options = png::DecodeOptions::default();
    options.set_ignore_adler32(false);
    options.set_ignore_crc(false);
    let mut reader = png::Decoder::new_with_options(Cursor::new(png_bytes), options).read_info()?;
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let frame = reader.next_frame(&mut buf)?;
    // Reading to the end also consumes the zlib trailer and IEND.
    reader.finish()?;
    assert_eq!(frame.color_type, png::ColorType::Rgb);
    assert_eq!(frame.bit_depth, png::BitDepth::Eight);
    buf.truncate(frame.buffer_size());
    Ok((frame.width, frame.height, buf))
}

fn decode(png_bytes: &[u8]) -> (u32, u32, Vec<u8>) {
    try_decode(png_bytes).unwrap()
}

#[test]
fn corrupted_adler_is_detected() {
    // Makes sure the checks above are live: flip one bit of the Adler-32 trailer and fix the chunk CRC.
    let rgb = noisy_rgb(40, 30, 5);
    let mut png_bytes = encode(40, 30, &rgb, &EncodeOptions { band_bytes: 500, ..EncodeOptions::default() });
    let iend = png_bytes.len() - 12;
    let last_idat_crc = iend - 4;
    png_bytes[last_idat_crc - 1] ^= 1; // last byte of the Adler-32, which ends the last IDAT's data
    let last_len = chunks(&png_bytes).iter().rev().find(|(t, _)| t == b"IDAT").unwrap().1.len();
    let crc_start = last_idat_crc - last_len - 4;
    let stored_crc = u32::from_be_bytes(png_bytes[last_idat_crc..iend].try_into().unwrap());
    png_bytes[last_idat_crc - 1] ^= 1;
    assert_eq!(png_crc(&png_bytes[crc_start..last_idat_crc]), stored_crc, "test CRC helper disagrees with png");
    png_bytes[last_idat_crc - 1] ^= 1;
    let crc = png_crc(&png_bytes[crc_start..last_idat_crc]);
    png_bytes[last_idat_crc..iend].copy_from_slice(&crc.to_be_bytes());

    let mut sink = Vec::new();
    assert!(ZlibDecoder::new(&idat_stream(&png_bytes)[..]).read_to_end(&mut sink).is_err());
    assert!(try_decode(&png_bytes).is_err());
}

/// CRC-32 (ISO 3309, as in PNG) bit by bit.
fn png_crc(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in data {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 != 0 { (crc >> 1) ^ 0xEDB8_8320 } else { crc >> 1 };
        }
    }
    !crc
}

/// Split a PNG into (type, payload) chunks, checking the framing and the chunk order.
fn chunks(png_bytes: &[u8]) -> Vec<([u8; 4], Vec<u8>)> {
    assert_eq!(&png_bytes[..8], b"\x89PNG\r\n\x1a\n");
    let mut rest = &png_bytes[8..];
    let mut out = Vec::new();
    while !rest.is_empty() {
        let len = u32::from_be_bytes(rest[..4].try_into().unwrap()) as usize;
        let ty: [u8; 4] = rest[4..8].try_into().unwrap();
        out.push((ty, rest[8..8 + len].to_vec()));
        rest = &rest[12 + len..];
    }
    assert_eq!(&out[0].0, b"IHDR");
    assert_eq!(&out.last().unwrap().0, b"IEND");
    // IDAT chunks must be consecutive.
    let idat: Vec<usize> = (0..out.len()).filter(|&i| &out[i].0 == b"IDAT").collect();
    assert!(!idat.is_empty());
    assert_eq!(idat.last().unwrap() - idat[0] + 1, idat.len(), "IDAT chunks not consecutive");
    assert_eq!(idat.last().unwrap() + 2, out.len(), "IDAT must be followed directly by IEND");
    out
}

fn idat_stream(png_bytes: &[u8]) -> Vec<u8> {
    chunks(png_bytes).into_iter().filter(|(ty, _)| ty == b"IDAT").flat_map(|(_, d)| d).collect()
}

/// Sequential reference filter, straight from the PNG spec (bpp = 3, row above the image all zeros).
fn reference_filtered(width: usize, rgb: &[u8], filter: RowFilter) -> Vec<u8> {
    let n = width * 3;
    let zeros = vec![0u8; n];
    let mut out = Vec::new();
    for (r, cur) in rgb.chunks_exact(n).enumerate() {
        let prev = if r == 0 { &zeros[..] } else { &rgb[(r - 1) * n..r * n] };
        let run = |ty: u8| -> Vec<u8> {
            (0..n)
                .map(|i| {
                    let x = cur[i] as i32;
                    let a = if i >= 3 { cur[i - 3] as i32 } else { 0 };
                    let b = prev[i] as i32;
                    let c = if i >= 3 { prev[i - 3] as i32 } else { 0 };
                    let pred = match ty {
                        0 => 0,
                        1 => a,
                        2 => b,
                        3 => (a + b) / 2,
                        _ => {
                            let p = a + b - c;
                            let (pa, pb, pc) = ((p - a).abs(), (p - b).abs(), (p - c).abs());
                            if pa <= pb && pa <= pc {
                                a
                            } else if pb <= pc {
                                b
                            } else {
                                c
                            }
                        }
                    };
                    (x - pred) as u8
                })
                .collect()
        };
        let ty = match filter {
            RowFilter::None => 0,
            RowFilter::Sub => 1,
            RowFilter::Up => 2,
            RowFilter::Avg => 3,
            RowFilter::Paeth => 4,
            RowFilter::Adaptive => {
                // First type with the minimal sum of |signed byte|.
                let cost = |v: &[u8]| v.iter().map(|&b| (b as i8 as i32).unsigned_abs() as u64).sum::<u64>();
                (0..5u8).min_by_key(|&t| (cost(&run(t)), t)).unwrap()
            }
        };
        out.push(ty);
        out.extend(run(ty));
    }
    out
}

fn reference_adler(data: &[u8]) -> u32 {
    let (mut a, mut b) = (1u64, 0u64);
    for &x in data {
        a = (a + x as u64) % 65521;
        b = (b + a) % 65521;
    }
    ((b as u32) << 16) | a as u32
}

/// Full check of one encoding: pixels via png::Decoder; the IDAT stream via ZlibDecoder (which also verifies the
/// Adler-32) against the reference filter; the trailer against the Adler-32 by definition.
fn check(width: u32, height: u32, rgb: &[u8], opts: &EncodeOptions) -> Vec<u8> {
    let png_bytes = encode(width, height, rgb, opts);
    let (w, h, pixels) = decode(&png_bytes);
    assert_eq!((w, h), (width, height));
    assert!(pixels == rgb, "pixel mismatch for {width}x{height} {opts:?}");

    let stream = idat_stream(&png_bytes);
    let mut filtered = Vec::new();
    ZlibDecoder::new(&stream[..]).read_to_end(&mut filtered).unwrap();
    assert_eq!(filtered.len(), height as usize * (1 + 3 * width as usize));
    assert!(filtered == reference_filtered(width as usize, rgb, opts.filter), "filtered data differs: {opts:?}");
    let trailer = u32::from_be_bytes(stream[stream.len() - 4..].try_into().unwrap());
    assert_eq!(trailer, reference_adler(&filtered));
    // The header must be a valid zlib header for deflate with a 32 KiB window.
    assert_eq!(stream[0], 0x78);
    assert_eq!(u16::from_be_bytes([stream[0], stream[1]]) % 31, 0);
    png_bytes
}

#[test]
fn round_trip_sizes_default_options() {
    for (w, h) in [(1, 1), (3, 1), (1, 7), (17, 5), (1000, 800), (1001, 799)] {
        let rgb = noisy_rgb(w, h, (w * 31 + h) as u64);
        check(w as u32, h as u32, &rgb, &EncodeOptions::default());
    }
}

#[test]
fn round_trip_seismic_all_filters() {
    for (w, h) in [(1000, 800), (1001, 799)] {
        let rgb = seismic::seismic_rgb(w, h);
        for filter in FILTERS {
            check(w as u32, h as u32, &rgb, &EncodeOptions { filter, ..EncodeOptions::default() });
        }
    }
}

#[test]
fn more_bands_requested_than_rows() {
    // band_bytes = 1 asks for one band per filtered byte; the count is clamped to one band (one IDAT) per row.
    for (w, h) in [(1, 1), (3, 1), (1, 7), (17, 5), (1000, 3), (5, 300)] {
        let rgb = noisy_rgb(w, h, 99);
        for filter in FILTERS {
            let opts = EncodeOptions { filter, band_bytes: 1, ..EncodeOptions::default() };
            let png_bytes = check(w as u32, h as u32, &rgb, &opts);
            let idat_count = chunks(&png_bytes).iter().filter(|(ty, _)| ty == b"IDAT").count();
            assert_eq!(idat_count, h, "{w}x{h}");
        }
    }
}

#[test]
fn all_levels_and_band_sizes() {
    let rgb = seismic::seismic_rgb(301, 203);
    for level in 0..=9 {
        for band_bytes in [1000, 10_000, 64 * 1024, 1 << 30] {
            for filter in [RowFilter::Up, RowFilter::Paeth] {
                check(301, 203, &rgb, &EncodeOptions { filter, level, band_bytes });
            }
        }
    }
}

#[test]
fn incompressible_data() {
    // Pure noise: deflate falls back to stored blocks, which must still flush and join correctly.
    let (w, h) = (257usize, 611usize);
    let mut s = 0x9E37_79B9_7F4A_7C15u64;
    let rgb: Vec<u8> = (0..w * h * 3)
        .map(|_| {
            s = s.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            (s >> 56) as u8
        })
        .collect();
    for level in [0, 1, 6] {
        check(w as u32, h as u32, &rgb, &EncodeOptions { level, band_bytes: 50_000, ..EncodeOptions::default() });
    }
}

#[test]
fn text_chunks() {
    let rgb = noisy_rgb(17, 5, 3);
    let mut out = Vec::new();
    write_rgb_png(&mut out, 17, 5, &rgb, "seisimage 0.3.1", Some("Line 7 — Ω migration"), &EncodeOptions::default())
        .unwrap();
    let reader = png::Decoder::new(Cursor::new(&out)).read_info().unwrap();
    let info = reader.info();
    let text = &info.uncompressed_latin1_text;
    assert_eq!(text.len(), 1);
    assert_eq!((text[0].keyword.as_str(), text[0].text.as_str()), ("Software", "seisimage 0.3.1"));
    assert!(info.compressed_latin1_text.is_empty());
    assert_eq!(info.utf8_text.len(), 1);
    assert_eq!(info.utf8_text[0].keyword, "Title");
    assert_eq!(info.utf8_text[0].get_text().unwrap(), "Line 7 — Ω migration");

    // Without a title there is no iTXt chunk.
    let mut out = Vec::new();
    write_rgb_png(&mut out, 17, 5, &rgb, "seisimage", None, &EncodeOptions::default()).unwrap();
    let reader = png::Decoder::new(Cursor::new(&out)).read_info().unwrap();
    assert!(reader.info().utf8_text.is_empty());
    assert_eq!(reader.info().uncompressed_latin1_text.len(), 1);
    // Exactly one IEND, at the end: finish() must not add anything else.
    let types: Vec<[u8; 4]> = chunks(&out).into_iter().map(|(t, _)| t).collect();
    assert_eq!(types.iter().filter(|t| *t == b"IEND").count(), 1);
    assert_eq!(types.iter().filter(|t| *t == b"IHDR").count(), 1);
}

#[test]
fn output_independent_of_thread_count() {
    let rgb = seismic::seismic_rgb(1000, 800);
    let run_in = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(|| encode(1000, 800, &rgb, &EncodeOptions::default()))
    };
    let one = run_in(1);
    assert_eq!(one, run_in(2));
    assert_eq!(one, run_in(5));
    // Several pictures encoded concurrently from inside a pool, as the CLI does.
    use rayon::prelude::*;
    let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    let many: Vec<Vec<u8>> =
        pool.install(|| (0..4).into_par_iter().map(|_| encode(1000, 800, &rgb, &EncodeOptions::default())).collect());
    assert!(many.iter().all(|png_bytes| *png_bytes == one));
}

#[test]
fn bad_input_is_rejected_before_writing() {
    for (w, h, len) in [(4u32, 4u32, 47usize), (4, 4, 49), (0, 4, 0), (4, 0, 0), (u32::MAX, 1, 0)] {
        let mut out = Vec::new();
        let err = write_rgb_png(&mut out, w, h, &noisy_rgb(len, 1, 1)[..len], "s", None, &EncodeOptions::default())
            .unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput, "{w}x{h} len {len}");
        assert!(out.is_empty());
    }
    let rgb = noisy_rgb(4, 4, 1);
    // tEXt is Latin-1 only.
    let mut out = Vec::new();
    assert!(write_rgb_png(&mut out, 4, 4, &rgb, "Ω", None, &EncodeOptions::default()).is_err());
    assert!(out.is_empty());
    let bad_level = EncodeOptions { level: 10, ..EncodeOptions::default() };
    assert!(write_rgb_png(&mut Vec::new(), 4, 4, &rgb, "s", None, &bad_level).is_err());
}

// Adler-32 against the definition, and the combine formula.

/// Adler-32 straight from the definition: A = 1 + sum of bytes, B = sum of the A's, both mod 65521.
fn reference(data: &[u8]) -> u32 {
    let (mut a, mut b) = (1u64, 0u64);
    for &x in data {
        a = (a + u64::from(x)) % 65521;
        b = (b + a) % 65521;
    }
    ((b as u32) << 16) | a as u32
}

/// Deterministic xorshift64* bytes, so failures reproduce.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| (self.next() >> 56) as u8).collect()
    }
}

#[test]
fn known_values() {
    assert_eq!(adler32(b""), 1);
    assert_eq!(reference(b"Wikipedia"), 0x11E6_0398);
    assert_eq!(adler32(b"Wikipedia"), 0x11E6_0398);
    assert_eq!(adler32(b"a"), 0x0062_0062);
    assert_eq!(adler32(b"abc"), 0x024D_0127);
}

#[test]
fn matches_definition_on_many_lengths() {
    let mut rng = Rng(0x1234_5678_9abc_def1);
    // Lengths around the lane width (16), the textbook NMAX (5552) and the internal block (64 KiB).
    let mut lengths: Vec<usize> = (0..100).collect();
    lengths.extend([5551, 5552, 5553, 65535, 65536, 65537, 65536 * 3 + 7, 1 << 20]);
    for n in lengths {
        let data = rng.bytes(n);
        assert_eq!(adler32(&data), reference(&data), "length {n}");
    }
}

#[test]
fn worst_case_bytes_do_not_overflow() {
    // All 0xff maximises every intermediate sum.
    for n in [15, 16, 5552, 65536, 65536 * 2 + 15, 3 << 20] {
        let data = vec![0xffu8; n];
        assert_eq!(adler32(&data), reference(&data), "length {n}");
    }
}

#[test]
fn update_continues() {
    let mut rng = Rng(42);
    let data = rng.bytes(200_000);
    for split in [0, 1, 15, 16, 17, 5552, 65536, 100_000, 200_000] {
        let (x, y) = data.split_at(split);
        assert_eq!(adler32_update(adler32(x), y), reference(&data), "split {split}");
    }
}

#[test]
fn combine_random_splits() {
    let mut rng = Rng(7);
    for round in 0..300 {
        // Mostly short pieces, sometimes well beyond 5552 and 65536 bytes.
        let max = if round % 10 == 0 { 200_000 } else { 12_000 };
        let len = (rng.next() % max) as usize;
        let data = rng.bytes(len);
        let split = if len == 0 { 0 } else { (rng.next() % (len as u64 + 1)) as usize };
        let (x, y) = data.split_at(split);
        let combined = adler32_combine(adler32(x), adler32(y), y.len() as u64);
        assert_eq!(combined, reference(&data), "len {len} split {split}");
    }
}

#[test]
fn combine_edge_cases() {
    let mut rng = Rng(99);
    let x = rng.bytes(7000);
    let y = rng.bytes(70_000);
    let empty: &[u8] = &[];
    // Empty pieces on either side, and both empty.
    assert_eq!(adler32_combine(adler32(&x), adler32(empty), 0), adler32(&x));
    assert_eq!(adler32_combine(adler32(empty), adler32(&y), y.len() as u64), adler32(&y));
    assert_eq!(adler32_combine(1, 1, 0), 1);
    // Length of the second piece equal to and above the modulus.
    for n in [65521usize, 65522, 2 * 65521 + 3] {
        let z = rng.bytes(n);
        let joined: Vec<u8> = x.iter().chain(&z).copied().collect();
        assert_eq!(adler32_combine(adler32(&x), adler32(&z), n as u64), reference(&joined), "n {n}");
    }
    // A(x) == 0 (i.e. 1 + sum(x) is a multiple of 65521): A(x) - 1 must wrap, not underflow.
    // 1 + 256 * 255 + 240 = 65521.
    let mut zero_a: Vec<u8> = vec![255; 256];
    zero_a.push(240);
    assert_eq!(adler32(&zero_a) & 0xffff, 0);
    let joined: Vec<u8> = zero_a.iter().chain(&y).copied().collect();
    assert_eq!(adler32_combine(adler32(&zero_a), adler32(&y), y.len() as u64), reference(&joined));
    // Folding many pieces, as the encoder does with its bands.
    let mut acc = 1;
    let mut all = Vec::new();
    for i in 0..40 {
        let piece = rng.bytes(i * 977);
        acc = adler32_combine(acc, adler32(&piece), piece.len() as u64);
        all.extend_from_slice(&piece);
    }
    assert_eq!(acc, reference(&all));
}

/// A synthetic picture of a seismic section (smooth bands through a blue-white-red colour map, a white
/// border with black lines for the annotation).
mod seismic {

    /// 256-entry blue-white-red colormap: linear ramps blue (0,0,255) -> white -> red (255,0,0).
    fn colormap() -> [[u8; 3]; 256] {
        let mut map = [[0u8; 3]; 256];
        for (i, rgb) in map.iter_mut().enumerate() {
            let t = i as f64 / 255.0; // 0 = blue, 0.5 = white, 1 = red
            let (r, g, b) = if t < 0.5 {
                let s = t / 0.5;
                (s, s, 1.0)
            } else {
                let s = (1.0 - t) / 0.5;
                (1.0, s, s)
            };
            *rgb = [(r * 255.0).round() as u8, (g * 255.0).round() as u8, (b * 255.0).round() as u8];
        }
        map
    }

    /// A `width` x `height` RGB picture: amplitude sin(0.05 y + 3 sin(0.01 x)) * exp(-((y - 400) / 300)^2) plus LCG noise
    /// of amplitude 0.05, clipped to [-1, 1] and colour-mapped, inside a white 60-px border with a few black lines (axes
    /// and ticks) that mimic annotation.
    pub fn seismic_rgb(width: usize, height: usize) -> Vec<u8> {
        let map = colormap();
        let border = 60usize;
        let mut lcg: u32 = 12345;
        let mut rgb = vec![0u8; width * height * 3];
        for y in 0..height {
            for x in 0..width {
                let inside = x >= border && x + border < width && y >= border && y + border < height;
                let px = if inside {
                    let (xf, yf) = (x as f64, y as f64);
                    lcg = lcg.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                    let noise = ((lcg >> 8) as f64 / (1u32 << 24) as f64 * 2.0 - 1.0) * 0.05;
                    let env = (-((yf - 400.0) / 300.0).powi(2)).exp();
                    let a = ((0.05 * yf + 3.0 * (0.01 * xf).sin()).sin() * env + noise).clamp(-1.0, 1.0);
                    map[(((a + 1.0) * 0.5) * 255.0).round() as usize]
                } else {
                    [255, 255, 255]
                };
                rgb[(y * width + x) * 3..][..3].copy_from_slice(&px);
            }
        }
        // Annotation: a black frame around the plot area and tick marks every 100 px along the top and left axes.
        let mut black = |x: usize, y: usize| {
            if x < width && y < height {
                rgb[(y * width + x) * 3..][..3].copy_from_slice(&[0, 0, 0]);
            }
        };
        if width > 2 * border && height > 2 * border {
            for x in border - 1..=width - border {
                black(x, border - 1);
                black(x, height - border);
            }
            for y in border - 1..=height - border {
                black(border - 1, y);
                black(width - border, y);
            }
            for x in (border..width - border).step_by(100) {
                for dy in 1..10 {
                    black(x, border - 1 - dy);
                }
            }
            for y in (border..height - border).step_by(100) {
                for dx in 1..10 {
                    black(border - 1 - dx, y);
                }
            }
        }
        rgb
    }
}
