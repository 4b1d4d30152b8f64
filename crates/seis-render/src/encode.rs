//! The drawn picture as a PNG file, written by the `png` crate, with a `Software` tEXt chunk and, where the
//! picture has one, a `Title` iTXt chunk.
//!
//! A picture of at most 256 colours (a colour map holds 225, the lettering 16 greys: most pictures but
//! those of several colour maps, or of text over colours) is written as a palette PNG: one byte a pixel
//! instead of three, rows unfiltered (filters predict neighbouring values, which palette indices are not),
//! so a small slice drawn as cells makes a file of a few kilobytes. Other pictures are 8-bit RGB, every
//! row filtered with Sub and deflated by fdeflate's fast compressor, for the reasons below.
//!
//! Why these settings, and why the `png` crate's own encoder rather than the one seisimage had before (it
//! cut the filtered rows into bands of about 150 KiB and deflated them on the rayon pool at zlib-rs level
//! 1, joined into one zlib stream): `cargo bench --bench png_encode` encoded pictures drawn by `render_png`
//! with every candidate in turn, alternating, and compared them round by round. On a 16-core x86-64 host,
//! the banded encoder's time and size, and each fdeflate candidate's as ratios to them in the same run:
//!
//! | picture (RGB pixels)          | banded, 16 threads | fdeflate + Sub | + Up           | + adaptive     |
//! |-------------------------------|--------------------|----------------|----------------|----------------|
//! | section 1077 × 1058           | 3.6 ms, 1673 kB    | 2.35 ×, 0.81 × | 2.31 ×, 1.15 × | 3.17 ×, 0.81 × |
//! | depth slice 1289 × 1118       | 4.7 ms, 2526 kB    | 2.18 ×, 0.83 × | 2.14 ×, 0.84 × | 2.96 ×, 0.80 × |
//! | 4096² data area, 4698 × 4332  | 82 ms, 40.5 MB     | 2.66 ×, 0.83 × | 2.72 ×, 0.83 × | 3.23 ×, 0.81 × |
//! | a job's four pictures at once | 11.2 ms            | 1.13 ×         | 1.13 ×         | 1.50 ×         |
//!
//! (The four pictures, two sections and two depth slices, are encoded concurrently on the rayon pool, as a
//! run writes its products.) The banded encoder finished a lone picture sooner only by keeping all 16 cores
//! busy: on one thread it took 3.4 to 4.7 × as long as fdeflate + Sub (29.8, 49.4 and 747 ms), so with a
//! job's pictures side by side it was no faster, and its files were 20 to 23 % larger. On a 2-core machine
//! fdeflate + Sub took 0.23 to 0.31 × the banded encoder's time for each picture and 0.24 × for the four
//! at once. Sub and Up cost the same, but Up makes sections 42 % larger (neighbouring traces are alike, so
//! "the pixel to the left" predicts well); the adaptive filter saves at most 3 % more for 1.3 to 1.4 × the
//! time. zlib-rs level 1 through the `png` crate gave the banded encoder's sizes at 7 to 10 × its time on
//! 16 cores; level 2 files 30 % smaller at 13 to 18 ×.
//!
//! What it costs a run on a many-core GPU host: in five alternating pairs of `seisimage bench` runs on an
//! H100 host with 16 cores, the write stage after the last depth level (two section and two depth-slice
//! pictures, a region as HDF5) took 23.5 ms instead of 16.9 ms (medians; per pair 0.77 to 2.68 ×, median
//! 1.13 ×), and its files were 0.9 MB smaller (11.9 MB instead of 12.8 MB).

use std::io::{self, Write};

/// Write an 8-bit RGB picture as a PNG to `w`: a palette PNG when it has at most 256 colours, else RGB
/// (see [`write_rgb_png`]).
pub fn write_png<W: Write>(w: W, width: u32, height: u32, rgb: &[u8], title: Option<&str>) -> io::Result<()> {
    check_size(width, height, rgb)?;
    match palette_of(rgb) {
        Some((palette, indices)) => write_indexed_png(w, width, height, &palette, &indices, title),
        None => write_rgb_png(w, width, height, rgb, title),
    }
}

fn check_size(width: u32, height: u32, rgb: &[u8]) -> io::Result<()> {
    let expected = (width as usize).checked_mul(height as usize).and_then(|n| n.checked_mul(3));
    if width == 0 || height == 0 || expected != Some(rgb.len()) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} bytes are not an RGB picture of {width} × {height} pixels", rgb.len()),
        ));
    }
    Ok(())
}

/// The colours of `rgb` (sorted, three bytes each) and each pixel's index among them, if there are at most
/// 256.
fn palette_of(rgb: &[u8]) -> Option<(Vec<u8>, Vec<u8>)> {
    let key = |px: &[u8]| (u32::from(px[0]) << 16) | (u32::from(px[1]) << 8) | u32::from(px[2]);
    // One bit per possible colour: 2 MiB, cheaper than hashing every pixel.
    let mut seen = vec![0u64; 1 << 18];
    let mut colours = Vec::new();
    let mut last = u32::MAX;
    for px in rgb.chunks_exact(3) {
        let k = key(px);
        if k == last {
            continue;
        }
        last = k;
        let (word, bit) = ((k >> 6) as usize, k & 63);
        if seen[word] & (1 << bit) == 0 {
            seen[word] |= 1 << bit;
            colours.push(k);
            if colours.len() > 256 {
                return None;
            }
        }
    }
    colours.sort_unstable();
    let mut indices = Vec::with_capacity(rgb.len() / 3);
    let (mut last, mut index) = (u32::MAX, 0u8);
    for px in rgb.chunks_exact(3) {
        let k = key(px);
        if k != last {
            index = colours.binary_search(&k).expect("every colour was collected") as u8;
            last = k;
        }
        indices.push(index);
    }
    let palette = colours.iter().flat_map(|k| [(k >> 16) as u8, (k >> 8) as u8, *k as u8]).collect();
    Some((palette, indices))
}

/// Deflate level for a palette picture of `pixels`: small pictures get zlib level 6 (the smallest files,
/// in a few milliseconds), larger ones level 1. For a 1100 × 1100 picture of 225 colours (unfiltered,
/// `cargo test --release --lib` timing on a 2-core x86-64 machine) level 6 took 37 ms for 332 kB and level
/// 1 took 9.5 ms for 574 kB, still a quarter of the RGB file; a job's depth slices are pictures of that
/// size, drawn after the migration when their clip is shared, where every millisecond is waited for.
fn palette_compression(pixels: usize) -> png::DeflateCompression {
    const SMALL_PICTURE: usize = 1 << 18;
    match pixels <= SMALL_PICTURE {
        true => png::DeflateCompression::Level(6),
        false => png::DeflateCompression::Level(1),
    }
}

fn write_indexed_png<W: Write>(
    w: W,
    width: u32,
    height: u32,
    palette: &[u8],
    indices: &[u8],
    title: Option<&str>,
) -> io::Result<()> {
    let mut encoder = png::Encoder::new(io::BufWriter::with_capacity(64 * 1024, w), width, height);
    encoder.set_color(png::ColorType::Indexed);
    encoder.set_depth(png::BitDepth::Eight);
    encoder.set_palette(palette);
    encoder.set_filter(png::Filter::NoFilter);
    encoder.set_deflate_compression(palette_compression(indices.len()));
    encoder.add_text_chunk("Software".into(), super::software())?;
    if let Some(title) = title {
        encoder.add_itxt_chunk("Title".into(), title.into())?;
    }
    let mut writer = encoder.write_header()?;
    writer.write_image_data(indices)?;
    writer.finish()?;
    Ok(())
}

/// Write an 8-bit RGB picture (`rgb.len() == 3 · width · height`, rows top to bottom) as a PNG to `w`, with
/// a `Software` tEXt chunk naming this seisimage and, if given, a `Title` iTXt chunk.
///
/// A wrong size is refused before anything is written.
pub fn write_rgb_png<W: Write>(w: W, width: u32, height: u32, rgb: &[u8], title: Option<&str>) -> io::Result<()> {
    check_size(width, height, rgb)?;
    // The crate writes each chunk's length, type, data and CRC separately.
    let mut encoder = png::Encoder::new(io::BufWriter::with_capacity(64 * 1024, w), width, height);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    encoder.set_filter(png::Filter::Sub);
    encoder.set_deflate_compression(png::DeflateCompression::FdeflateUltraFast);
    encoder.add_text_chunk("Software".into(), super::software())?;
    if let Some(title) = title {
        encoder.add_itxt_chunk("Title".into(), title.into())?;
    }
    let mut writer = encoder.write_header()?;
    writer.write_image_data(rgb)?;
    writer.finish()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(bytes: &[u8]) -> (png::ColorType, Vec<u8>) {
        let mut decoder = png::Decoder::new(io::Cursor::new(bytes));
        decoder.set_transformations(png::Transformations::EXPAND);
        let mut reader = decoder.read_info().unwrap();
        let colour = reader.info().color_type;
        let mut out = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut out).unwrap();
        out.truncate(info.buffer_size());
        (colour, out)
    }

    #[test]
    fn few_colours_make_a_palette_png_that_decodes_to_the_same_pixels() {
        let (w, h) = (97u32, 61u32);
        let rgb: Vec<u8> = (0..w * h).flat_map(|i| [(i % 7 * 30) as u8, (i / w % 5 * 50) as u8, 9]).collect();
        let mut bytes = Vec::new();
        write_png(&mut bytes, w, h, &rgb, Some("t")).unwrap();
        let (colour, back) = decode(&bytes);
        assert_eq!(colour, png::ColorType::Indexed);
        assert_eq!(back, rgb);
    }

    #[test]
    fn many_colours_stay_rgb() {
        let (w, h) = (40u32, 30u32);
        let rgb: Vec<u8> = (0..w * h).flat_map(|i| [(i % 256) as u8, (i / 256) as u8, 7]).collect();
        let mut bytes = Vec::new();
        write_png(&mut bytes, w, h, &rgb, None).unwrap();
        let (colour, back) = decode(&bytes);
        assert_eq!(colour, png::ColorType::Rgb);
        assert_eq!(back, rgb);
    }
}
