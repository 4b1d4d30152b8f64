//! From the `[output]` section to boxes of the image, and from migrated boxes to files.
//!
//! Every product — inline, crossline, depth slice or ROI — is one box of the image grid. The engines only
//! ever see the boxes ([`ImageRequest`]); this module names them, and writes each one as PNG and/or
//! sub-volume files through temporary names, recording a checksum for the manifest.

use std::path::{Path, PathBuf};

use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::error::{Error, IoContext, Result};
use crate::imaging::ImageRequest;
use crate::job::{OutputConfig, VolumeFormat};
use crate::render::{self, RenderOptions, SliceData};
use crate::volume::{Geometry, IndexBox, ValueBox, Volume};

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

/// The products of `output` on the image grid `image` (depth domain), in a stable order.
pub fn plan_products(output: &OutputConfig, image: &Geometry) -> Result<Vec<ProductSpec>> {
    let all = image.full_box();
    let mut specs = Vec::new();
    let slice =
        |kind, stem, region| ProductSpec { kind, stem, region, formats: output.slice_formats.clone(), png: output.png };
    for &il in &output.inlines {
        let i = image.iline_index(il)?;
        specs.push(slice(
            ProductKind::Inline { iline: il },
            format!("inline_{il}"),
            IndexBox { il: i..i + 1, ..all.clone() },
        ));
    }
    for &xl in &output.crosslines {
        let j = image.xline_index(xl)?;
        specs.push(slice(
            ProductKind::Crossline { xline: xl },
            format!("xline_{xl}"),
            IndexBox { xl: j..j + 1, ..all.clone() },
        ));
    }
    for &z in &output.depth_slices {
        let k = image.sample_index(z).map_err(|_| {
            Error::Request(format!(
                "depth slice {z} m is below the deepest depth imaged ({} m): raise imaging.zmax",
                image.samples.last()
            ))
        })?;
        let exact = image.samples.value(k);
        specs.push(slice(
            ProductKind::DepthSlice { depth_m: exact },
            format!("depth_{}m", exact.round() as i64),
            IndexBox { s: k..k + 1, ..all.clone() },
        ));
    }
    for r in &output.roi {
        let region = image
            .index_box(&ValueBox { iline: r.iline, xline: r.xline, sample: r.depth })
            .map_err(|e| Error::Request(format!("output.roi {:?}: {e}", r.name)))?;
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
        return Err(Error::Request(format!("the product {} is requested twice", dup.stem)));
    }
    Ok(specs)
}

/// The boxes the engines must compute.
pub fn request(specs: &[ProductSpec]) -> ImageRequest {
    ImageRequest { boxes: specs.iter().map(|s| s.region.clone()).collect() }
}

/// Bytes the products will take on disk, roughly (for the up-front free-space check).
pub fn estimated_bytes(specs: &[ProductSpec]) -> u64 {
    specs
        .iter()
        .map(|s| {
            let values = s.region.len() as u64 * 4;
            let files = s.formats.len() as u64 * (values + 8192);
            let png = if s.png { values + 65536 } else { 0 };
            files + png
        })
        .sum()
}

/// A file written, for the manifest.
#[derive(Clone, Debug, Serialize)]
pub struct ProductFile {
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
    /// Axes of the product as written: iline, xline, depth (first, step, count).
    pub geometry: ProductAxes,
    pub files: Vec<ProductFile>,
}

#[derive(Clone, Debug, Serialize)]
pub struct ProductAxes {
    pub iline: [i64; 3],
    pub xline: [i64; 3],
    pub depth_m: [f64; 3],
}

/// Write one product: PNG for slices, and its sub-volume formats.
pub fn write_product(
    dir: &Path,
    spec: &ProductSpec,
    data: &[f32],
    image: &Geometry,
    bin_size: [f64; 2],
    render_opts: &RenderOptions,
) -> Result<ProductRecord> {
    let g = image.subset(&spec.region);
    debug_assert_eq!(data.len(), g.n_values());
    let mut files = Vec::new();
    if spec.png {
        let path = dir.join(format!("{}.png", spec.stem));
        let slice = slice_of(&spec.kind, Volume { geometry: g.clone(), data: data.to_vec() }, bin_size)?;
        let mut opts = render_opts.clone();
        if opts.title.is_none() {
            opts.title = Some(title(&spec.kind));
        }
        let rendered = render::render_png(&path, &slice.as_slice(), &opts)?;
        files.push(file_record(&rendered.png, "png")?);
        files.push(file_record(&rendered.sidecar, "json")?);
    }
    for f in &spec.formats {
        let path = dir.join(format!("{}.{}", spec.stem, f.extension()));
        crate::io::write_volume(f.file_format(), &path, &g, data, &Default::default())?;
        files.push(file_record(&path, f.extension())?);
    }
    Ok(ProductRecord {
        kind: spec.kind.clone(),
        geometry: ProductAxes {
            iline: [g.ilines.first, g.ilines.step, g.ilines.len as i64],
            xline: [g.xlines.first, g.xlines.step, g.xlines.len as i64],
            depth_m: [g.samples.origin, g.samples.step, g.samples.len as f64],
        },
        files,
    })
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

fn file_record(path: &Path, format: &str) -> Result<ProductFile> {
    let bytes = std::fs::read(path).at(path)?;
    let sha = Sha256::digest(&bytes);
    Ok(ProductFile {
        path: path.to_path_buf(),
        format: format.into(),
        bytes: bytes.len() as u64,
        sha256: sha.iter().map(|b| format!("{b:02x}")).collect(),
    })
}
