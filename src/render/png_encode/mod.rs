//! A PNG encoder for 8-bit RGB pictures whose compression runs on several threads.
//!
//! The `png` crate writes the signature, IHDR and text chunks; the image data is produced here. The filtered rows
//! are cut into bands of whole rows, each band is filtered, checksummed and deflated on its own rayon task, and the
//! pieces are joined into ONE zlib stream, so the result is an ordinary single-image PNG:
//!
//! ```text
//! 78 01 | band 0 (raw deflate, ends with a sync flush) | band 1 ... | last band (final block) | Adler-32 (BE)
//! ```
//!
//! A sync flush ends a band's deflate data at a byte boundary with an empty non-final stored block, so the next
//! band's blocks can simply be appended. Each band starts with an empty history (no back-references into the
//! previous band), which costs a little ratio but makes the bands independent. The filters, in contrast, are
//! exactly those of a sequential encoder: a band's first row is filtered against the previous band's last row,
//! read from the unfiltered input.
//!
//! The output does not depend on the number of threads: the band layout is a function of the image size only.

mod adler;
mod filter;

use std::io::{self, Write};
use std::ops::Range;

use flate2::{Compress, Compression, FlushCompress, Status};
use rayon::prelude::*;

pub use adler::{adler32, adler32_combine, adler32_update};
pub use filter::RowFilter;

/// Encoder settings. `Default` is what seisimage's pictures use.
#[derive(Clone, Copy, Debug)]
pub struct EncodeOptions {
    /// Row filter, applied to every row.
    pub filter: RowFilter,
    /// Deflate level, 0-9 (zlib's levels: flate2 runs on its zlib-rs back end).
    pub level: u32,
    /// Target size of the filtered data of one band, in bytes; the band count is about
    /// `filtered size / band_bytes`, at least 1 and at most the row count.
    pub band_bytes: usize,
}

/// Defaults measured on a 1000 × 800 picture of a seismic section (a blue-white-red colour map, 2-core build
/// machine, 2026-11):
/// - `Sub` gives the smallest output at level 1 and is among the cheapest filters (671 KB with miniz_oxide;
///   Up 686 KB, Paeth 690 KB, per-row adaptive 728 KB and 7 ms more filtering): neighbouring traces are
///   similar, so "left" predicts well.
/// - Level 1 of zlib-rs: 8.1 ms of one core for 831 KB (miniz_oxide level 1: 12.6 ms, 671 KB; the `png`
///   crate's own fast mode, which cannot be split: 5.5 ms, 1.13 MB). Level 2 halves the size for 1.5 × time.
/// - 150 KiB bands give 16 bands for 1000 × 800 (two per thread on eight); splitting costs < 0.1 % in size.
impl Default for EncodeOptions {
    fn default() -> Self {
        EncodeOptions { filter: RowFilter::Sub, level: 1, band_bytes: 150 * 1024 }
    }
}

/// Write an 8-bit RGB image (`rgb.len() == 3 * width * height`, rows top to bottom) as a PNG to `w`,
/// with a `Software` tEXt chunk and, if given, a `Title` iTXt chunk, compressed as `opts` says.
///
/// Compression runs on the current rayon pool (the global one unless called inside `ThreadPool::install` or from
/// a rayon task). `software` must be Latin-1 (a tEXt requirement), otherwise an error is returned.
pub fn write_rgb_png<W: Write>(
    w: W,
    width: u32,
    height: u32,
    rgb: &[u8],
    software: &str,
    title: Option<&str>,
    opts: &EncodeOptions,
) -> io::Result<()> {
    // Check the input before anything is written, so a bad call leaves `w` untouched.
    let row_bytes = checked_row_bytes(width, height, rgb.len())?;
    // png would only notice this half-way through the header.
    if software.chars().any(|c| u32::from(c) > 0xff) {
        return Err(invalid_input("the Software text must be Latin-1 (tEXt)"));
    }
    if opts.level > 9 {
        return Err(invalid_input("compression level must be 0-9"));
    }

    // png issues several small writes per chunk (length, type, data, CRC); buffer them in case `w` is a bare file.
    // Band-sized data bypasses the buffer.
    let mut encoder = png::Encoder::new(io::BufWriter::with_capacity(16 * 1024, w), width, height);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    encoder.add_text_chunk("Software".to_string(), software.to_string())?;
    if let Some(title) = title {
        encoder.add_itxt_chunk("Title".to_string(), title.to_string())?;
    }

    // Compress before writing the header: if compression fails, nothing has been written.
    let idat = compress_image(rgb, row_bytes, opts)?;

    let mut writer = encoder.write_header()?;
    for piece in &idat {
        writer.write_chunk(png::chunk::IDAT, piece)?;
    }
    // With `validate_sequence` off (the default), `finish` only writes IEND and flushes (which also empties the
    // BufWriter); it does not care that no image went through `write_image_data`.
    writer.finish()?;
    Ok(())
}

fn invalid_input(msg: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, msg.to_string())
}

/// Bytes per unfiltered row, after checking the dimensions against PNG's limits and the buffer length.
fn checked_row_bytes(width: u32, height: u32, rgb_len: usize) -> io::Result<usize> {
    const PNG_MAX_DIM: u32 = i32::MAX as u32;
    if width == 0 || height == 0 || width > PNG_MAX_DIM || height > PNG_MAX_DIM {
        return Err(invalid_input("PNG width and height must be in 1..=2^31-1"));
    }
    let row_bytes = (width as usize).checked_mul(3).ok_or_else(|| invalid_input("image too large"))?;
    let expected = row_bytes.checked_mul(height as usize).ok_or_else(|| invalid_input("image too large"))?;
    if rgb_len != expected {
        return Err(invalid_input("rgb.len() must be 3 * width * height"));
    }
    Ok(row_bytes)
}

/// The zlib stream of the filtered image, as pieces to be written one IDAT chunk each: the zlib header is the start
/// of the first piece and the Adler-32 trailer the end of the last, so joining them needs no copy.
fn compress_image(rgb: &[u8], row_bytes: usize, opts: &EncodeOptions) -> io::Result<Vec<Vec<u8>>> {
    let height = rgb.len() / row_bytes;
    let bands = band_ranges(height, row_bytes + 1, opts.band_bytes);
    let last = bands.len() - 1;
    let level = Compression::new(opts.level);

    // Each task returns its deflate data, the Adler-32 and the length of its filtered data. `collect` keeps order.
    let results: Vec<io::Result<(Vec<u8>, u32, usize)>> = bands
        .par_iter()
        .enumerate()
        .map(|(i, rows)| {
            // Room for the zlib header in front of the first band avoids a later copy.
            let header: &[u8] = if i == 0 { &zlib_header(opts.level) } else { &[] };
            encode_band(rgb, row_bytes, rows.clone(), opts.filter, level, i == last, header)
        })
        .collect();

    let mut pieces = Vec::with_capacity(results.len());
    let mut adler = 1; // Adler-32 of the empty string.
    for result in results {
        let (data, band_adler, band_len) = result?;
        adler = adler32_combine(adler, band_adler, band_len as u64);
        pieces.push(data);
    }
    pieces.last_mut().expect("at least one band").extend_from_slice(&adler.to_be_bytes());
    Ok(pieces)
}

/// Split `height` rows of `filtered_row_bytes` each into bands of about `band_bytes`, as evenly as possible.
fn band_ranges(height: usize, filtered_row_bytes: usize, band_bytes: usize) -> Vec<Range<usize>> {
    let total = height.saturating_mul(filtered_row_bytes);
    let count = total.div_ceil(band_bytes.max(1)).clamp(1, height);
    (0..count).map(|i| i * height / count..(i + 1) * height / count).collect()
}

/// The two zlib header bytes (RFC 1950): CM = 8 (deflate), CINFO = 7 (32 KiB window), FLEVEL from the level (only
/// informative), FCHECK making the 16-bit value a multiple of 31.
fn zlib_header(level: u32) -> [u8; 2] {
    const CMF: u16 = 0x78;
    let flevel: u16 = match level {
        0 | 1 => 0,
        2..=5 => 1,
        6 => 2,
        _ => 3,
    };
    let without_check = (CMF << 8) | (flevel << 6);
    let header = without_check + (31 - without_check % 31) % 31;
    header.to_be_bytes()
}

/// Filter rows `rows` of the image, checksum and deflate them. Returns `header ++ deflate data`, the Adler-32 of
/// the filtered data, and its length.
fn encode_band(
    rgb: &[u8],
    row_bytes: usize,
    rows: Range<usize>,
    filter: RowFilter,
    level: Compression,
    is_last: bool,
    header: &[u8],
) -> io::Result<(Vec<u8>, u32, usize)> {
    let filtered = filter_band(rgb, row_bytes, rows, filter);
    let adler = adler32(&filtered);

    // A fresh compressor per band: creating one costs about as much as resetting one (~7 us, measured), so
    // caching them per thread would not pay.
    let mut compressor = Compress::new(level, false);
    let mut out = Vec::with_capacity(header.len() + filtered.len() / 2 + 64);
    out.extend_from_slice(header);
    let flush = if is_last { FlushCompress::Finish } else { FlushCompress::Sync };
    deflate_all(&mut compressor, &filtered, &mut out, flush)?;
    Ok((out, adler, filtered.len()))
}

/// Filter rows `rows` into a new buffer of `rows.len() * (row_bytes + 1)` bytes.
fn filter_band(rgb: &[u8], row_bytes: usize, rows: Range<usize>, filter: RowFilter) -> Vec<u8> {
    let mut filtered = vec![0u8; rows.len() * (row_bytes + 1)];
    let mut scratch = if filter == RowFilter::Adaptive { vec![0u8; row_bytes] } else { Vec::new() };
    // The row above the image is all zeros (PNG spec); every other row uses the real unfiltered row above, which
    // for the first row of a band belongs to the previous band.
    let zeros = if rows.start == 0 { vec![0u8; row_bytes] } else { Vec::new() };
    for (r, out) in rows.zip(filtered.chunks_exact_mut(row_bytes + 1)) {
        let cur = &rgb[r * row_bytes..(r + 1) * row_bytes];
        let prev = if r == 0 { &zeros[..] } else { &rgb[(r - 1) * row_bytes..r * row_bytes] };
        filter::filter_row(filter, prev, cur, out, &mut scratch);
    }
    filtered
}

/// Feed all of `input` to `compressor` and flush with `flush` (`Sync` or `Finish`), growing `out` as needed.
fn deflate_all(compressor: &mut Compress, input: &[u8], out: &mut Vec<u8>, flush: FlushCompress) -> io::Result<()> {
    let start_in = compressor.total_in();
    loop {
        if out.capacity() - out.len() < 64 {
            out.reserve(out.capacity().max(4096));
        }
        let consumed = (compressor.total_in() - start_in) as usize;
        let out_before = out.len();
        let status = compressor
            .compress_vec(&input[consumed..], out, flush)
            .map_err(|e| io::Error::other(format!("deflate failed: {e}")))?;
        let all_consumed = (compressor.total_in() - start_in) as usize == input.len();
        let progress = out.len() > out_before || (compressor.total_in() - start_in) as usize > consumed;
        if status == Status::BufError && !progress {
            // Cannot happen with output space available; guards against looping forever on a backend quirk.
            return Err(io::Error::other("deflate made no progress"));
        }
        let done = match flush {
            FlushCompress::Finish => status == Status::StreamEnd,
            // As with zlib, a flush is complete once it returns with output space left over.
            _ => all_consumed && out.len() < out.capacity(),
        };
        if done {
            return Ok(());
        }
    }
}
