//! The PNG writer of the pictures (`render::write_rgb_png`), its output checked with `png::Decoder` with
//! every checksum verified: pixels, sizes, text chunks, the chunk layout, and the refusal of a wrong size.

use std::io::Cursor;

use seisimage::render::write_rgb_png;

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

fn encode(width: u32, height: u32, rgb: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    write_rgb_png(&mut out, width, height, rgb, Some("Inline 1234 — ü")).unwrap();
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
    let mut png_bytes = encode(40, 30, &rgb);
    let iend = png_bytes.len() - 12;
    let last_idat_crc = iend - 4;
    let last_len = chunks(&png_bytes).iter().rev().find(|(t, _)| t == b"IDAT").unwrap().1.len();
    let crc_start = last_idat_crc - last_len - 4;
    let stored_crc = u32::from_be_bytes(png_bytes[last_idat_crc..iend].try_into().unwrap());
    assert_eq!(png_crc(&png_bytes[crc_start..last_idat_crc]), stored_crc, "test CRC helper disagrees with png");
    png_bytes[last_idat_crc - 1] ^= 1; // last byte of the Adler-32, which ends the last IDAT's data
    let crc = png_crc(&png_bytes[crc_start..last_idat_crc]);
    png_bytes[last_idat_crc..iend].copy_from_slice(&crc.to_be_bytes());
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

/// Encode and decode, and compare the pixels.
fn check(width: u32, height: u32, rgb: &[u8]) -> Vec<u8> {
    let png_bytes = encode(width, height, rgb);
    let (w, h, pixels) = decode(&png_bytes);
    assert_eq!((w, h), (width, height));
    assert!(pixels == rgb, "pixel mismatch for {width}x{height}");
    chunks(&png_bytes);
    png_bytes
}

#[test]
fn round_trip_sizes() {
    for (w, h) in [(1, 1), (3, 1), (1, 7), (17, 5), (1000, 3), (5, 300), (1000, 800), (1001, 799)] {
        let rgb = noisy_rgb(w, h, (w * 31 + h) as u64);
        check(w as u32, h as u32, &rgb);
    }
}

#[test]
fn round_trip_seismic() {
    for (w, h) in [(1000, 800), (1001, 799), (301, 203)] {
        let rgb = seismic::seismic_rgb(w, h);
        let png_bytes = check(w as u32, h as u32, &rgb);
        // A picture of a section compresses well: flat margins, smooth bands.
        assert!(png_bytes.len() < rgb.len() / 2, "{w}x{h}: {} bytes for {} of pixels", png_bytes.len(), rgb.len());
    }
}

#[test]
fn incompressible_data() {
    // Pure noise: the fast compressor would make it larger, and the pixels go into stored blocks instead.
    let (w, h) = (257usize, 611usize);
    let mut s = 0x9E37_79B9_7F4A_7C15u64;
    let rgb: Vec<u8> = (0..w * h * 3)
        .map(|_| {
            s = s.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            (s >> 56) as u8
        })
        .collect();
    let png_bytes = check(w as u32, h as u32, &rgb);
    assert!(png_bytes.len() < rgb.len() + h + 1024, "{} bytes for {} of pixels", png_bytes.len(), rgb.len());
}

#[test]
fn text_chunks() {
    let rgb = noisy_rgb(17, 5, 3);
    let mut out = Vec::new();
    write_rgb_png(&mut out, 17, 5, &rgb, Some("Line 7 — Ω migration")).unwrap();
    let reader = png::Decoder::new(Cursor::new(&out)).read_info().unwrap();
    let info = reader.info();
    let text = &info.uncompressed_latin1_text;
    assert_eq!(text.len(), 1);
    assert_eq!(text[0].keyword, "Software");
    assert_eq!(text[0].text, format!("seisimage {}", env!("CARGO_PKG_VERSION")));
    assert!(info.compressed_latin1_text.is_empty());
    assert_eq!(info.utf8_text.len(), 1);
    assert_eq!(info.utf8_text[0].keyword, "Title");
    assert_eq!(info.utf8_text[0].get_text().unwrap(), "Line 7 — Ω migration");

    // Without a title there is no iTXt chunk.
    let mut out = Vec::new();
    write_rgb_png(&mut out, 17, 5, &rgb, None).unwrap();
    let reader = png::Decoder::new(Cursor::new(&out)).read_info().unwrap();
    assert!(reader.info().utf8_text.is_empty());
    assert_eq!(reader.info().uncompressed_latin1_text.len(), 1);
    // Exactly one IHDR and one IEND, at the end.
    let types: Vec<[u8; 4]> = chunks(&out).into_iter().map(|(t, _)| t).collect();
    assert_eq!(types.iter().filter(|t| *t == b"IEND").count(), 1);
    assert_eq!(types.iter().filter(|t| *t == b"IHDR").count(), 1);
}

#[test]
fn bad_input_is_rejected_before_writing() {
    for (w, h, len) in [(4u32, 4u32, 47usize), (4, 4, 49), (0, 4, 0), (4, 0, 0), (u32::MAX, 1, 0)] {
        let mut out = Vec::new();
        let err = write_rgb_png(&mut out, w, h, &noisy_rgb(len, 1, 1)[..len], None).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput, "{w}x{h} len {len}");
        assert!(out.is_empty());
    }
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
