//! The drawn picture as a PNG file, written by the `png` crate, with a `Software` tEXt chunk and, where the
//! picture has one, a `Title` iTXt chunk.
//!
//! A picture of at most 256 colours (a colour map holds 225, the lettering 16 greys: most pictures but
//! those of several colour maps, or of text over colours) is written as a palette PNG, one byte a pixel
//! instead of three. Its palette follows a chain of nearest colours ([`chain_order`]), so that pixels
//! close on the colour map get close indices; its rows are then filtered and deflated as RGB rows are,
//! with the adaptive filter (the rows of a picture drawn as cells repeat, which Up predicts, and
//! neighbouring traces are alike, which Sub predicts) and fdeflate's fast compressor. Other pictures are
//! 8-bit RGB, every row filtered with Sub and deflated by fdeflate, for the reasons further below.
//!
//! Why the palette's order and these settings: `cargo bench --bench png_encode` on a 2-core x86-64
//! machine, each candidate's time and size as ratios to seisimage's palette PNG in the same run (level 1
//! and 6: zlib-rs, rows unfiltered; fdeflate: adaptive filter; sorted: the palette sorted by RGB value).
//! The other palette candidates are timed without the making of their palette, which takes half to three quarters
//! of seisimage's time on two threads (it runs on the rayon pool, in chunks of 65536 pixels):
//!
//! | picture (pixels)                 | seisimage        | its palette, level 1 | sorted, fdeflate | sorted, level 6 |
//! |----------------------------------|------------------|----------------|----------------|-----------------|
//! | section 1005 × 1093              | 3.7 ms, 385 kB   | 1.75 ×, 1.22 × | 0.45 ×, 1.11 × | 10.65 ×, 0.88 × |
//! | depth slice 1213 × 1159          | 5.3 ms, 626 kB   | 1.42 ×, 1.22 × | 0.36 ×, 1.17 × | 6.57 ×, 1.08 ×  |
//! | small slice as cells, 970 × 767  | 1.7 ms, 54 kB    | 0.67 ×, 1.28 × | 0.26 ×, 1.11 × | 3.96 ×, 0.79 ×  |
//! | 4096² data area, 4126 × 3961     | 60.0 ms, 5663 kB | 1.73 ×, 1.48 × | 0.41 ×, 1.23 × | 12.30 ×, 1.19 × |
//! | a job's four pictures at once    | 10.3 ms          | 1.53 ×         | 0.38 ×         | 7.79 ×          |
//!
//! Palette PNGs are usually written unfiltered, as their indices need not be ordered, and then only
//! zlib's slower compressors find what repeats. Sorted by RGB value, the two sides of a diverging map
//! interleave; ordered along the chain, the filters predict the indices, and the sorted palette's files
//! are 11 to 23 % larger. Sub alone makes files 1 to 3 % larger than the adaptive filter does, but 3.8 ×
//! as large for a picture drawn as cells. Pictures of wiggles, mostly white with thin black lines, are
//! the exception: zlib finds more in them than fdeflate, and their files are up to twice as large (26 kB
//! instead of 13 kB for an inline of the F3 demo drawn 538 pixels wide). Each change of colour along a
//! row is looked up in a small open-addressed table ([`ColourTable`]): with the standard library's
//! `HashMap` in its place, the whole encoding took 1.1 to 1.8 × as long, and a job's four pictures 1.5 ×
//! (the same bench, the RGB encoder's times unchanged).
//!
//! Why these settings for RGB pictures, and why the `png` crate's own encoder rather than the one
//! seisimage had before (it cut the filtered rows into bands of about 150 KiB and deflated them on the
//! rayon pool at zlib-rs level 1, joined into one zlib stream): `cargo bench --bench png_encode`, with
//! the banded encoder among its candidates then, encoded pictures drawn by `render_png` with every
//! candidate in turn, alternating, and compared them round by round. On a 16-core x86-64 host,
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

use rayon::prelude::*;

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

/// The colours of `rgb` (three bytes each, in [`chain_order`]) and each pixel's index among them, if
/// there are at most 256.
///
/// The pixels are indexed in chunks on the rayon pool, each chunk numbering its colours as they come; the
/// chunks' numbers are then turned into positions in the chain of all the picture's colours, so that the
/// palette depends on the picture only.
fn palette_of(rgb: &[u8]) -> Option<(Vec<u8>, Vec<u8>)> {
    const CHUNK_PIXELS: usize = 1 << 16;
    let mut indices = vec![0u8; rgb.len() / 3];
    let met: Vec<Vec<u32>> = rgb
        .par_chunks(3 * CHUNK_PIXELS)
        .zip(indices.par_chunks_mut(CHUNK_PIXELS))
        .map(|(rgb, indices)| ColourTable::index(rgb, indices))
        .collect::<Option<_>>()?;
    let mut colours: Vec<u32> = met.iter().flatten().copied().collect();
    colours.sort_unstable();
    colours.dedup();
    if colours.len() > 256 {
        return None;
    }
    let chain = chain_order(&colours);
    let mut position = vec![0u8; colours.len()];
    for (at, &colour) in chain.iter().enumerate() {
        position[colour] = at as u8;
    }
    indices.par_chunks_mut(CHUNK_PIXELS).zip(&met).for_each(|(indices, met)| {
        let renumber: Vec<u8> =
            met.iter().map(|c| position[colours.binary_search(c).expect("every colour was collected")]).collect();
        indices.iter_mut().for_each(|index| *index = renumber[usize::from(*index)]);
    });
    let palette = chain.iter().flat_map(|&c| [(colours[c] >> 16) as u8, (colours[c] >> 8) as u8, colours[c] as u8]);
    Some((palette.collect(), indices))
}

/// The colours of part of a picture met so far, each with its number, in an open-addressed table four
/// times the size of the largest palette: a lookup is a multiply, a shift and a probe or two.
struct ColourTable {
    slots: Vec<(u32, u8)>,
    colours: Vec<u32>,
}

impl ColourTable {
    const EMPTY: u32 = u32::MAX;
    const BITS: u32 = 10;

    /// Number the colours of the RGB pixels `rgb` as they come, writing each pixel's number to `indices`:
    /// the colours in the order of their numbers, or `None` if there are more than 256.
    fn index(rgb: &[u8], indices: &mut [u8]) -> Option<Vec<u32>> {
        let mut table = ColourTable { slots: vec![(Self::EMPTY, 0); 1 << Self::BITS], colours: Vec::new() };
        let (mut last, mut index) = (u32::MAX, 0u8);
        for (px, slot) in rgb.chunks_exact(3).zip(indices) {
            let colour = (u32::from(px[0]) << 16) | (u32::from(px[1]) << 8) | u32::from(px[2]);
            if colour != last {
                index = table.number_of(colour)?;
                last = colour;
            }
            *slot = index;
        }
        Some(table.colours)
    }

    /// The number of `colour` (packed `0xRRGGBB`), given to it when first met; `None` once a 257th colour
    /// comes.
    fn number_of(&mut self, colour: u32) -> Option<u8> {
        let mask = (1 << Self::BITS) - 1;
        let mut slot = (colour.wrapping_mul(0x9E37_79B1) >> (32 - Self::BITS)) as usize;
        loop {
            match self.slots[slot] {
                (key, number) if key == colour => return Some(number),
                (Self::EMPTY, _) => break,
                _ => slot = (slot + 1) & mask,
            }
        }
        let number = u8::try_from(self.colours.len()).ok()?;
        self.colours.push(colour);
        self.slots[slot] = (colour, number);
        Some(number)
    }
}

/// An order of `colours` (packed `0xRRGGBB`) in which each colour is followed by the nearest one not yet
/// placed, starting from one end of the set's widest extent: the positions in `colours`, in that order.
///
/// A colour map is a path through colour space and neighbouring pixels lie close on it, so along this
/// chain their indices differ by little, which the PNG filters turn into small numbers that deflate well.
/// Sorted by their RGB value instead, the two sides of a diverging map interleave, and neighbouring
/// pixels' indices jump.
fn chain_order(colours: &[u32]) -> Vec<usize> {
    let rgb = |c: usize| [(colours[c] >> 16) as i32, (colours[c] >> 8 & 0xff) as i32, (colours[c] & 0xff) as i32];
    let distance = |a: usize, b: usize| {
        let (a, b) = (rgb(a), rgb(b));
        (0..3).map(|i| (a[i] - b[i]).pow(2)).sum::<i32>()
    };
    let farthest_from = |from: usize| (0..colours.len()).max_by_key(|&c| (distance(from, c), c)).unwrap_or(0);
    let mut chain = Vec::with_capacity(colours.len());
    let mut placed = vec![false; colours.len()];
    let mut at = farthest_from(farthest_from(0));
    while chain.len() < colours.len() {
        chain.push(at);
        placed[at] = true;
        match (0..colours.len()).filter(|&c| !placed[c]).min_by_key(|&c| (distance(at, c), c)) {
            Some(next) => at = next,
            None => break,
        }
    }
    chain
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
    encoder.set_filter(png::Filter::Adaptive);
    encoder.set_deflate_compression(png::DeflateCompression::FdeflateUltraFast);
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

    /// A picture larger than the chunks it is indexed in: colours met in different chunks are one palette,
    /// and more than 256 over the whole picture make it RGB even where no chunk alone holds that many.
    #[test]
    fn the_palette_spans_the_chunks_a_picture_is_indexed_in() {
        // 204800 pixels: four chunks.
        let (w, h) = (512u32, 400u32);
        // Each stretch of 65536 pixels cycles through `per_chunk` colours of its own.
        let colour = |i: u32, per_chunk: u32| {
            let k = i / 65536 * per_chunk + i % per_chunk;
            [(k % 256) as u8, (k / 256 * 50 + 3) as u8, 77]
        };
        for (per_chunk, indexed) in [(60, true), (100, false)] {
            let rgb: Vec<u8> = (0..w * h).flat_map(|i| colour(i, per_chunk)).collect();
            let mut bytes = Vec::new();
            write_png(&mut bytes, w, h, &rgb, None).unwrap();
            let (colour_type, back) = decode(&bytes);
            let expected = if indexed { png::ColorType::Indexed } else { png::ColorType::Rgb };
            assert_eq!(colour_type, expected, "{per_chunk} colours a chunk");
            assert_eq!(back, rgb, "{per_chunk} colours a chunk");
        }
    }

    /// Along each colour map, consecutive levels get neighbouring palette indices, the order that lets the
    /// filters predict pixels from their neighbours, but for a few breaks where a map comes back close to
    /// itself (near white in `seismic`, around the loop of `phase`). Sorted by RGB value, 63 of `seismic`'s
    /// steps jumped and 119 of `phase`'s.
    #[test]
    fn a_colour_maps_levels_get_neighbouring_indices() {
        use crate::Colormap;
        for map in [Colormap::Seismic, Colormap::Gray, Colormap::Heat, Colormap::Phase] {
            let mut levels: Vec<[u8; 3]> = (0..225).map(|i| map.at(i as f32 / 224.0)).collect();
            levels.dedup();
            if map == Colormap::Phase {
                levels.pop(); // its two ends are one colour
            }
            let rgb: Vec<u8> = levels.iter().flatten().copied().collect();
            let (palette, indices) = palette_of(&rgb).unwrap();
            assert_eq!(palette.len(), rgb.len(), "{map:?}: one entry per level");
            let jumps = indices.windows(2).filter(|pair| pair[0].abs_diff(pair[1]) > 1).count();
            assert!(jumps <= 3, "{map:?}: {jumps} of {} steps along the map jump in the palette", levels.len() - 1);
        }
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
