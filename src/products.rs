//! From the `[output]` section to boxes of the image, and from migrated boxes to files.
//!
//! Every product — inline, crossline, depth slice or ROI — is one box of the image grid. The engines only
//! ever see the boxes ([`ImageRequest`]); this module names them, and writes each one as PNG and/or
//! sub-volume files through temporary names, recording a checksum for the manifest.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::cancel;
use crate::error::{Error, Location, Result};
use crate::imaging::ImageRequest;
use crate::io::output::{commit_together, FileDigest, SealedOutput};
use crate::io::VolumeSink;
use crate::job::{OutputConfig, VolumeFormat};
use crate::render::{self, RenderOptions, SliceData};
use crate::volume::{Geometry, IndexBox, LineAxis, SampleAxis, ValueBox, Volume};

/// What a product is, in the user's terms.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum ProductKind {
    Inline { iline: i64 },
    Crossline { xline: i64 },
    DepthSlice { depth_m: f64 },
    Roi { name: String },
}

/// One requested product: its box of the image and how to write it.
#[derive(Clone, Debug)]
pub struct ProductSpec {
    pub kind: ProductKind,
    /// File stem, e.g. `inline_121`.
    pub stem: String,
    pub region: IndexBox,
    pub formats: Vec<VolumeFormat>,
    pub png: bool,
}

/// The products of `output` on the image grid `image` (depth domain), in a stable order. A product that does
/// not fit the image is a configuration error naming the key that asks for it (`output.inlines`, ...).
pub fn plan_products(output: &OutputConfig, image: &Geometry) -> Result<Vec<ProductSpec>> {
    let all = image.full_box();
    let mut specs = Vec::new();
    let slice =
        |kind, stem, region| ProductSpec { kind, stem, region, formats: output.slice_formats.clone(), png: output.png };
    let at = |key: String| move |e: Error| Error::config(key, Location::File, e.to_string());
    for &il in &output.inlines {
        let i = image.iline_index(il).map_err(at("output.inlines".into()))?;
        specs.push(slice(
            ProductKind::Inline { iline: il },
            format!("inline_{il}"),
            IndexBox { il: i..i + 1, ..all.clone() },
        ));
    }
    for &xl in &output.crosslines {
        let j = image.xline_index(xl).map_err(at("output.crosslines".into()))?;
        specs.push(slice(
            ProductKind::Crossline { xline: xl },
            format!("xline_{xl}"),
            IndexBox { xl: j..j + 1, ..all.clone() },
        ));
    }
    for &z in &output.depth_slices {
        let k = image.sample_index(z).map_err(|_| {
            Error::config(
                "output.depth_slices",
                Location::File,
                format!(
                    "depth slice {z} m is below the deepest depth imaged ({} m): raise imaging.zmax",
                    image.samples.last()
                ),
            )
        })?;
        let exact = image.samples.value(k);
        specs.push(slice(
            ProductKind::DepthSlice { depth_m: exact },
            format!("depth_{}m", exact.round() as i64),
            IndexBox { s: k..k + 1, ..all.clone() },
        ));
    }
    for (n, r) in output.roi.iter().enumerate() {
        let region = image
            .index_box(&ValueBox { iline: r.iline, xline: r.xline, sample: r.depth })
            .map_err(at(format!("output.roi.{n}")))?;
        specs.push(ProductSpec {
            kind: ProductKind::Roi { name: r.name.clone() },
            stem: format!("roi_{}", r.name),
            region,
            formats: r.formats.clone(),
            png: false,
        });
    }
    let mut stems = std::collections::HashSet::new();
    if let Some(dup) = specs.iter().find(|s| !stems.insert(s.stem.clone())) {
        let key = match dup.kind {
            ProductKind::Inline { .. } => "output.inlines",
            ProductKind::Crossline { .. } => "output.crosslines",
            ProductKind::DepthSlice { .. } => "output.depth_slices",
            ProductKind::Roi { .. } => "output.roi",
        };
        return Err(Error::config(key, Location::File, format!("the product {} is requested twice", dup.stem)));
    }
    Ok(specs)
}

/// The boxes the engines must compute.
pub fn request(specs: &[ProductSpec]) -> ImageRequest {
    ImageRequest { boxes: specs.iter().map(|s| s.region.clone()).collect() }
}

/// Bytes the products will take on disk at most, about (for the free-space check before the migration):
/// 4 bytes per value and 8 KiB of headers per sub-volume file; per PNG, the uncompressed RGB size of the
/// largest picture `render` allows for the slice (at least `min_width²` pixels, as narrow slices are
/// enlarged), plus 64 KiB for the annotation and the sidecar.
pub fn estimated_bytes(specs: &[ProductSpec], render: &RenderOptions) -> u64 {
    const FILE_HEADERS: u64 = 8 << 10;
    const PNG_EXTRAS: u64 = 64 << 10;
    let min_area = u64::from(render.min_width).pow(2);
    specs
        .iter()
        .map(|s| {
            let values = s.region.len() as u64;
            let files = s.formats.len() as u64 * (4 * values + FILE_HEADERS);
            let png = if s.png { 3 * values.max(min_area).min(render.max_pixels) + PNG_EXTRAS } else { 0 };
            files + png
        })
        .sum()
}

/// A file written, for the manifest.
#[derive(Clone, Debug, Serialize)]
pub struct ProductFile {
    /// File name, in the output folder (beside the manifest).
    pub path: PathBuf,
    pub format: String,
    pub bytes: u64,
    pub sha256: String,
}

/// A product written, for the manifest.
#[derive(Clone, Debug, Serialize)]
pub struct ProductRecord {
    #[serde(flatten)]
    pub kind: ProductKind,
    /// Axes of the product as written.
    pub axes: ProductAxes,
    pub files: Vec<ProductFile>,
}

#[derive(Clone, Debug, Serialize)]
pub struct ProductAxes {
    pub iline: LineAxis,
    pub xline: LineAxis,
    pub depth: SampleAxis,
}

/// Values written per step of a sub-volume file: a stop request is honoured between steps.
const WRITE_BLOCK_VALUES: usize = 4 << 20;

/// A product written under temporary names and measured: [`commit_products`] puts it in place.
pub struct WrittenProduct {
    kind: ProductKind,
    axes: ProductAxes,
    /// Its files with their formats, in the manifest's order.
    files: Vec<(SealedOutput, &'static str)>,
}

/// Write one product into `dir` under temporary names: PNG for slices, and its sub-volume formats.
pub fn write_product(
    dir: &Path,
    spec: &ProductSpec,
    data: &[f32],
    image: &Geometry,
    bin_size: [f64; 2],
    render_opts: &RenderOptions,
) -> Result<WrittenProduct> {
    let g = image.subset(&spec.region);
    debug_assert_eq!(data.len(), g.n_values());
    let mut files = Vec::new();
    if spec.png {
        cancel::check()?;
        let path = dir.join(format!("{}.png", spec.stem));
        let slice = slice_of(&spec.kind, Volume { geometry: g.clone(), data: data.to_vec() }, bin_size)?;
        let mut opts = render_opts.clone();
        if opts.title.is_none() {
            opts.title = Some(title(&spec.kind));
        }
        let [sidecar, png] = render::render_png_sealed(&path, &slice.as_slice(), &opts)?.files;
        files.push((png, "png"));
        files.push((sidecar, "json"));
    }
    for f in &spec.formats {
        let mut laps = crate::stats::Laps::start(format!("{} as {}", spec.stem, f.extension()));
        let path = dir.join(format!("{}.{}", spec.stem, f.extension()));
        let mut sink = VolumeSink::create(f.file_format(), &path, &g, &Default::default())?;
        laps.lap("create");
        let inline_values = g.xlines.len * g.samples.len;
        let block_inlines = (WRITE_BLOCK_VALUES / inline_values).max(1);
        for (i, block) in data.chunks(block_inlines * inline_values).enumerate() {
            cancel::check()?;
            sink.write_inlines(i * block_inlines, g.shape(), block)?;
        }
        laps.lap("values");
        let closed = sink.close()?;
        laps.lap("close");
        files.push((closed.seal()?, f.extension()));
        laps.lap("checksum");
    }
    Ok(WrittenProduct {
        kind: spec.kind.clone(),
        axes: ProductAxes { iline: g.ilines, xline: g.xlines, depth: g.samples },
        files,
    })
}

/// Put written products in place, every file flushed to disk at once (see [`commit_together`]), and record
/// them for the manifest. A picture's sidecar is moved into place before the picture, so that a picture is
/// never found without its sidecar.
pub fn commit_products(written: Vec<WrittenProduct>) -> Result<Vec<ProductRecord>> {
    // The files in the order they are moved into place, each with its product and its place in that
    // product's list.
    let mut order = Vec::new();
    let mut heads = Vec::with_capacity(written.len());
    for (p, w) in written.into_iter().enumerate() {
        let mut files: Vec<_> =
            w.files.into_iter().enumerate().map(|(i, (file, format))| ((p, i, format), file)).collect();
        files.sort_by_key(|((.., format), _)| *format != "json");
        heads.push((w.kind, w.axes, files.len()));
        order.extend(files);
    }
    let (places, sealed): (Vec<_>, Vec<_>) = order.into_iter().unzip();
    let mut files: Vec<Vec<Option<ProductFile>>> = heads.iter().map(|&(.., n)| vec![None; n]).collect();
    for ((p, i, format), (path, digest)) in places.into_iter().zip(commit_together(sealed)?) {
        files[p][i] = Some(file_record(&path, digest, format));
    }
    Ok(heads
        .into_iter()
        .zip(files)
        .map(|((kind, axes, _), files)| ProductRecord { kind, axes, files: files.into_iter().flatten().collect() })
        .collect())
}

fn title(kind: &ProductKind) -> String {
    match kind {
        ProductKind::Inline { iline } => format!("Inline {iline}"),
        ProductKind::Crossline { xline } => format!("Crossline {xline}"),
        ProductKind::DepthSlice { depth_m } => format!("Depth {depth_m} m"),
        ProductKind::Roi { name } => format!("ROI {name}"),
    }
}

/// A slice product as an image: depth downwards for sections, inlines downwards for maps, with the true
/// trace spacing (which the image geometry may not carry when the survey has no coordinates).
fn slice_of(kind: &ProductKind, product: Volume, bin_size: [f64; 2]) -> Result<SliceData> {
    Ok(match kind {
        ProductKind::Inline { .. } => {
            let mut s = SliceData::inline(&product, 0)?;
            s.cols.spacing_m = Some(bin_size[1]);
            s
        }
        ProductKind::Crossline { .. } => {
            let mut s = SliceData::crossline(&product, 0)?;
            s.cols.spacing_m = Some(bin_size[0]);
            s
        }
        _ => {
            let mut s = SliceData::horizontal(&product, 0)?;
            s.rows.spacing_m = Some(bin_size[0]);
            s.cols.spacing_m = Some(bin_size[1]);
            s
        }
    })
}

/// The manifest's record of a file written (its checksum read back as the disk wrote it).
fn file_record(path: &Path, digest: FileDigest, format: &str) -> ProductFile {
    ProductFile {
        path: path.file_name().map(PathBuf::from).unwrap_or_default(),
        format: format.into(),
        bytes: digest.bytes,
        sha256: digest.sha256,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_size_estimate_by_hand() {
        let region = IndexBox { il: 0..1, xl: 0..30, s: 0..200 }; // 6000 values
        let spec = |formats: Vec<VolumeFormat>, png| ProductSpec {
            kind: ProductKind::Inline { iline: 1 },
            stem: "inline_1".into(),
            region: region.clone(),
            formats,
            png,
        };
        let render = RenderOptions::default(); // min_width 800, max_pixels 4096²
                                               // two files of 24000 + 8192 bytes
        assert_eq!(estimated_bytes(&[spec(vec![VolumeFormat::Npy, VolumeFormat::Hdf5], false)], &render), 64_384);
        // a picture of at least 800² pixels, 3 bytes each, and 65536 bytes besides
        assert_eq!(estimated_bytes(&[spec(vec![], true)], &render), 1_985_536);
        let small = RenderOptions { min_width: 10, max_pixels: 5000, ..render };
        assert_eq!(estimated_bytes(&[spec(vec![], true)], &small), 15_000 + 65_536);
    }
}
