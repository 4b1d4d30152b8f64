//! PNG encoder settings on the pictures seisimage writes: time and file size of each candidate, run
//! alternately. The first candidate is seisimage's own `render::write_png` (a palette PNG, as the pictures
//! drawn here have at most 256 colours), the second its RGB encoder `render::write_rgb_png` for pictures of
//! more colours; the others are the `png` crate with other palettes, filters and deflate settings
//! (crates/seis-render/src/encode.rs gives the choice and the numbers).
//!
//! The pictures are real products: slices of a synthetic layered volume (dipping, folded reflectors made of
//! Ricker wavelets, with a little noise) drawn by `render_png` with the default options, then decoded back
//! to their RGB pixels. Each round encodes every picture once with every candidate, in an order that
//! rotates from round to round, so that a noisy machine slows all candidates alike; the report gives the
//! median time of each, the median over rounds of its time divided by the first candidate's in the same
//! round, and the file size. Last, a job's products (two sections and two depth slices) are encoded at
//! once on the rayon pool, as a run writes them.
//!
//! Run with `cargo bench --bench png_encode`. `SEISIMAGE_BENCH_ROUNDS` sets the rounds (default 9; the
//! 4096² picture gets a third of them, at least 3).

use std::io::Cursor;
use std::time::Instant;

use std::collections::BTreeMap;

use seisimage::render::{render_png, write_png, write_rgb_png, PlotAxis, RenderOptions, Slice};

/// A Ricker wavelet of peak wavelength `lambda` samples, at `t` samples from its centre.
fn ricker(t: f32, lambda: f32) -> f32 {
    let a = (std::f32::consts::PI * t / lambda).powi(2);
    (1.0 - 2.0 * a) * (-a).exp()
}

/// The layered volume at lateral position (`x`, `y`) and depth `z`, all in samples.
fn layered(x: f32, y: f32, z: f32, noise: &mut u64) -> f32 {
    let mut sum = 0.0;
    for k in 0..40 {
        let kf = k as f32;
        // Reflectors 25 samples apart, dipping and folded, with amplitudes of both signs.
        let depth = 12.0 + 25.0 * kf + 0.08 * x - 0.05 * y
            + 14.0 * (0.006 * x + 0.7 * kf).sin()
            + 9.0 * (0.009 * y - 0.3 * kf).cos();
        let amplitude = (1.7 * kf + 0.4).sin() * (0.6 + 0.4 * (0.31 * kf).cos());
        let t = z - depth;
        if t.abs() < 30.0 {
            sum += amplitude * ricker(t, 9.0);
        }
    }
    *noise ^= *noise << 13;
    *noise ^= *noise >> 7;
    *noise ^= *noise << 17;
    sum + 0.05 * ((*noise >> 40) as f32 / (1u64 << 24) as f32 - 0.5)
}

fn axis(name: &str, unit: &str, len: usize, spacing_m: f64) -> PlotAxis {
    PlotAxis { name: name.into(), unit: unit.into(), origin: 0.0, step: spacing_m, len, spacing_m: Some(spacing_m) }
}

/// A picture as seisimage draws it: its name, width, height and RGB pixels.
struct Picture {
    name: &'static str,
    width: u32,
    height: u32,
    rgb: Vec<u8>,
    /// The picture's colours sorted by RGB value, and each pixel's index among them.
    sorted: Indexed,
    /// The palette and indices of seisimage's palette PNG of the picture.
    chained: Indexed,
}

/// A palette (three bytes a colour) and each pixel's index in it, made once per picture: the candidates
/// that encode one are timed without the making of their palette.
struct Indexed {
    palette: Vec<u8>,
    indices: Vec<u8>,
}

/// What a candidate of the `png` crate encodes.
#[derive(Clone, Copy)]
enum Pixels {
    Rgb,
    Sorted,
    Chained,
}

/// Draw `rows × cols` values of `value(row, col)` with the default options and read the pixels back.
fn picture(name: &'static str, rows: PlotAxis, cols: PlotAxis, value: impl Fn(usize, usize) -> f32) -> Picture {
    let data: Vec<f32> = (0..rows.len * cols.len).map(|i| value(i / cols.len, i % cols.len)).collect();
    let dir = tempfile::tempdir().expect("a temporary folder");
    let path = dir.path().join("picture.png");
    render_png(&path, &Slice { data: &data, rows, cols }, &RenderOptions::default()).expect("the slice draws");
    let file = std::io::BufReader::new(std::fs::File::open(&path).expect("the picture exists"));
    let mut reader = expanding(file).read_info().expect("a PNG");
    assert_eq!(reader.output_color_type(), (png::ColorType::Rgb, png::BitDepth::Eight));
    let mut rgb = vec![0; reader.output_buffer_size().expect("a small picture")];
    let frame = reader.next_frame(&mut rgb).expect("the pixels decode");
    rgb.truncate(frame.buffer_size());
    let (width, height) = (frame.width, frame.height);
    let mut bytes = Vec::new();
    write_png(&mut bytes, width, height, &rgb, None).expect("encodes");
    let chained = indexed(&bytes);
    Picture { name, width, height, sorted: palette_by_rgb_value(&rgb), chained, rgb }
}

/// The palette and indices of a palette PNG.
fn indexed(bytes: &[u8]) -> Indexed {
    let mut decoder = png::Decoder::new(Cursor::new(bytes));
    decoder.set_transformations(png::Transformations::IDENTITY);
    let mut reader = decoder.read_info().expect("a PNG");
    let palette = reader.info().palette.as_ref().expect("the pictures drawn here have at most 256 colours").to_vec();
    let mut indices = vec![0; reader.output_buffer_size().expect("a small picture")];
    let frame = reader.next_frame(&mut indices).expect("the pixels decode");
    indices.truncate(frame.buffer_size());
    Indexed { palette, indices }
}

fn pictures() -> Vec<Picture> {
    let noise = std::cell::Cell::new(0x9E37_79B9_7F4A_7C15u64);
    let at = |x: f32, y: f32, z: f32| {
        let mut n = noise.get();
        let v = layered(x, y, z, &mut n);
        noise.set(n);
        v
    };
    vec![
        // An inline: 320 crosslines of 12.5 m, 4.7 km deep in 5 m steps; a data area of 800 × 940 pixels.
        picture("section", axis("depth", "m", 940, 5.0), axis("xline", "", 320, 12.5), |r, c| {
            at(c as f32 * 2.5, 100.0, r as f32 * 0.5)
        }),
        // A depth slice of 1000 × 1000 bins.
        picture("depth slice", axis("iline", "", 1000, 25.0), axis("xline", "", 1000, 25.0), |r, c| {
            at(c as f32, r as f32, 480.0)
        }),
        // A small depth slice, 150 × 120 bins drawn as cells.
        picture("small slice", axis("iline", "", 120, 25.0), axis("xline", "", 150, 25.0), |r, c| {
            at(c as f32 * 2.0, r as f32 * 2.0, 480.0)
        }),
        // The largest data area the default options allow: 4096 × 4096 pixels.
        picture("largest", axis("iline", "", 4096, 25.0), axis("xline", "", 4096, 25.0), |r, c| {
            at(c as f32 * 0.25, r as f32 * 0.25, 480.0)
        }),
    ]
}

/// Encodes a picture to the bytes of a PNG file.
type Encode = Box<dyn Fn(&Picture) -> Vec<u8> + Send + Sync>;

/// One way of encoding a picture.
struct Candidate {
    name: &'static str,
    encode: Encode,
}

fn seisimage_png() -> Encode {
    Box::new(|p: &Picture| {
        let mut out = Vec::new();
        write_png(&mut out, p.width, p.height, &p.rgb, None).expect("encodes");
        out
    })
}

fn seisimage_rgb() -> Encode {
    Box::new(|p: &Picture| {
        let mut out = Vec::new();
        write_rgb_png(&mut out, p.width, p.height, &p.rgb, None).expect("encodes");
        out
    })
}

/// The `png` crate's encoder with these settings.
fn png_crate(pixels: Pixels, deflate: png::DeflateCompression, filter: png::Filter) -> Encode {
    Box::new(move |p: &Picture| {
        let mut out = Vec::new();
        let mut encoder = png::Encoder::new(&mut out, p.width, p.height);
        encoder.set_depth(png::BitDepth::Eight);
        encoder.add_text_chunk("Software".into(), "seisimage".into()).expect("Latin-1");
        encoder.set_deflate_compression(deflate);
        encoder.set_filter(filter);
        let indexed = match pixels {
            Pixels::Rgb => None,
            Pixels::Sorted => Some(&p.sorted),
            Pixels::Chained => Some(&p.chained),
        };
        match indexed {
            Some(indexed) => {
                encoder.set_color(png::ColorType::Indexed);
                encoder.set_palette(indexed.palette.clone());
            }
            None => encoder.set_color(png::ColorType::Rgb),
        }
        let mut writer = encoder.write_header().expect("the header writes");
        writer.write_image_data(indexed.map_or(&p.rgb, |indexed| &indexed.indices)).expect("encodes");
        writer.finish().expect("finishes");
        out
    })
}

/// The picture's colours sorted by RGB value, and each pixel's index among them.
fn palette_by_rgb_value(rgb: &[u8]) -> Indexed {
    let mut index: BTreeMap<[u8; 3], u8> = rgb.chunks_exact(3).map(|px| ([px[0], px[1], px[2]], 0)).collect();
    assert!(index.len() <= 256, "the pictures drawn here have at most 256 colours");
    for (i, slot) in index.values_mut().enumerate() {
        *slot = i as u8;
    }
    let indices = rgb.chunks_exact(3).map(|px| index[&[px[0], px[1], px[2]]]).collect();
    Indexed { palette: index.keys().flatten().copied().collect(), indices }
}

fn candidates() -> Vec<Candidate> {
    use png::{DeflateCompression as D, Filter as F};
    use Pixels::{Chained, Rgb, Sorted};
    let candidate = |name, encode| Candidate { name, encode };
    vec![
        candidate("seisimage: palette", seisimage_png()),
        candidate("seisimage: RGB, fdeflate, Sub", seisimage_rgb()),
        candidate("its palette, fdeflate, adaptive", png_crate(Chained, D::FdeflateUltraFast, F::Adaptive)),
        candidate("its palette, fdeflate, Sub", png_crate(Chained, D::FdeflateUltraFast, F::Sub)),
        candidate("its palette, level 1, none", png_crate(Chained, D::Level(1), F::NoFilter)),
        candidate("sorted palette, fdeflate, adapt.", png_crate(Sorted, D::FdeflateUltraFast, F::Adaptive)),
        candidate("sorted palette, level 1, none", png_crate(Sorted, D::Level(1), F::NoFilter)),
        candidate("sorted palette, level 6, none", png_crate(Sorted, D::Level(6), F::NoFilter)),
        candidate("RGB, fdeflate, adaptive", png_crate(Rgb, D::FdeflateUltraFast, F::Adaptive)),
        candidate("RGB, flate2 level 1, Sub", png_crate(Rgb, D::Level(1), F::Sub)),
    ]
}

/// A decoder that gives palette pictures' pixels as RGB.
fn expanding<R: std::io::BufRead + std::io::Seek>(r: R) -> png::Decoder<R> {
    let mut decoder = png::Decoder::new(r);
    decoder.set_transformations(png::Transformations::EXPAND);
    decoder
}

fn check_decodes(bytes: &[u8], p: &Picture, candidate: &str) {
    let mut reader = expanding(Cursor::new(bytes)).read_info().expect("a PNG");
    let mut rgb = vec![0; reader.output_buffer_size().expect("a small picture")];
    let frame = reader.next_frame(&mut rgb).expect("the pixels decode");
    assert!(rgb[..frame.buffer_size()] == p.rgb[..], "{candidate} changed the pixels of {}", p.name);
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The products of a typical job (an inline, a crossline and two depth slices) encoded at once on the
/// rayon pool, as the products of a run are: median seconds over `rounds` for each candidate, alternating.
fn batch(candidates: &[Candidate], pictures: &[Picture], rounds: usize) {
    use rayon::prelude::*;
    let job: Vec<&Picture> = [0, 0, 1, 1].iter().map(|&i| &pictures[i]).collect();
    let n = candidates.len();
    let mut seconds = vec![Vec::new(); n];
    for round in 0..rounds {
        for k in 0..n {
            let i = (k + round) % n;
            let t = Instant::now();
            let sizes: Vec<usize> = job.par_iter().map(|p| (candidates[i].encode)(p).len()).collect();
            seconds[i].push(t.elapsed().as_secs_f64());
            std::hint::black_box(sizes);
        }
    }
    println!("\na job's products at once (2 × {}, 2 × {}), {rounds} rounds", pictures[0].name, pictures[1].name);
    println!("  {:<32} {:>10} {:>12}", "candidate", "median ms", "time / first");
    for (i, c) in candidates.iter().enumerate() {
        let ratio = median(seconds[i].iter().zip(&seconds[0]).map(|(t, base)| t / base).collect());
        println!("  {:<32} {:>10.1} {:>12.2}", c.name, median(seconds[i].clone()) * 1e3, ratio);
    }
}

fn main() {
    let rounds: usize = std::env::var("SEISIMAGE_BENCH_ROUNDS").map_or(9, |r| r.parse().expect("a round count"));
    let candidates = candidates();
    println!("rayon pool: {} threads", rayon::current_num_threads());
    let pictures = pictures();
    for p in &pictures {
        let n = candidates.len();
        let rounds = if p.width * p.height > 4 << 20 { (rounds / 3).max(3) } else { rounds };
        let mut seconds = vec![Vec::new(); n];
        let mut sizes = vec![0; n];
        for round in 0..rounds {
            for k in 0..n {
                let i = (k + round) % n;
                let t = Instant::now();
                let bytes = (candidates[i].encode)(p);
                seconds[i].push(t.elapsed().as_secs_f64());
                if round == 0 {
                    check_decodes(&bytes, p, candidates[i].name);
                }
                sizes[i] = bytes.len();
            }
        }
        println!(
            "\n{}: {} × {} RGB, {:.1} MB raw, {rounds} rounds",
            p.name,
            p.width,
            p.height,
            p.rgb.len() as f64 / 1e6
        );
        println!("  {:<32} {:>10} {:>12} {:>10} {:>9}", "candidate", "median ms", "time / first", "kB", "size / 1st");
        for (i, c) in candidates.iter().enumerate() {
            let ratio = median(seconds[i].iter().zip(&seconds[0]).map(|(t, base)| t / base).collect());
            println!(
                "  {:<32} {:>10.1} {:>12.2} {:>10.0} {:>9.2}",
                c.name,
                median(seconds[i].clone()) * 1e3,
                ratio,
                sizes[i] as f64 / 1e3,
                sizes[i] as f64 / sizes[0] as f64
            );
        }
    }
    batch(&candidates, &pictures, rounds);
}
