//! Map slices (depth and time slices) as GeoTIFF: one band of float32, a row per inline and a column per
//! crossline, georeferenced by the survey's coordinates (rotation included) and, when the job names one,
//! the EPSG code of its CRS, so that a GIS places every pixel on its bin.

use std::fs::File;
use std::path::Path;

use tiff::encoder::{colortype, TiffEncoder};
use tiff::tags::Tag;

use crate::crs::Crs;
use crate::TempOutput;
use seis_core::error::{Error, Result};
use seis_core::volume::{CoordTransform, Geometry};

/// GeoTIFF key ids and values (GeoTIFF 1.1, OGC 19-008r4).
const GT_MODEL_TYPE: u16 = 1024;
const GT_RASTER_TYPE: u16 = 1025;
const PROJECTED_CRS: u16 = 3072;
const PROJ_LINEAR_UNITS: u16 = 3076;
const MODEL_TYPE_PROJECTED: u16 = 1;
/// Raster coordinates name pixel centres: seisimage's coordinates are those of the bin centres.
const RASTER_PIXEL_IS_POINT: u16 = 2;
const LINEAR_METRE: u16 = 9001;

/// A map slice being written: its values are gathered, then encoded at [`GeoTiffWriter::close`].
pub struct GeoTiffWriter {
    output: TempOutput,
    file: File,
    shape: [usize; 2],
    coords: CoordTransform,
    crs: Option<Crs>,
    values: Vec<f32>,
}

impl GeoTiffWriter {
    /// Create the (temporary) file for a slice of `geometry`, which must be one sample deep and have
    /// coordinates.
    pub fn create(path: &Path, geometry: &Geometry, crs: Option<&Crs>) -> Result<Self> {
        let refuse = |why: &str| Error::Request(format!("cannot write {} as GeoTIFF: {why}", path.display()));
        if geometry.samples.len != 1 {
            return Err(refuse("GeoTIFF holds maps (depth and time slices), not volumes or sections"));
        }
        let coords = geometry
            .coords
            .ok_or_else(|| refuse("the survey has no coordinates to place the map by (its trace headers hold none)"))?;
        if crs.is_some_and(|c| c.epsg.is_none()) {
            tracing::warn!("{}: the CRS has no EPSG code, so the GeoTIFF names none", path.display());
        }
        let (output, file) = TempOutput::create(path)?;
        let shape = [geometry.ilines.len, geometry.xlines.len];
        let values = seis_core::alloc::try_vec(0, path, "a map")?;
        Ok(GeoTiffWriter { output, file, shape, coords, crs: crs.cloned(), values })
    }

    /// Append whole inlines of the map (`[il][xl]` order).
    pub fn write(&mut self, data: &[f32]) -> Result<()> {
        self.values.extend_from_slice(data);
        Ok(())
    }

    /// Encode the map into the file, leaving it under its temporary name.
    pub fn close(self) -> Result<TempOutput> {
        let GeoTiffWriter { output, file, shape: [rows, cols], coords, crs, values } = self;
        let path = output.final_path().to_path_buf();
        if values.len() != rows * cols {
            return Err(Error::Internal(format!(
                "{}: {} values for a {rows} × {cols} map",
                path.display(),
                values.len()
            )));
        }
        let fail = |e: tiff::TiffError| Error::Request(format!("{}: cannot encode the GeoTIFF: {e}", path.display()));
        let mut writer = std::io::BufWriter::new(file);
        let mut encoder = TiffEncoder::new(&mut writer).map_err(fail)?;
        let mut image = encoder.new_image::<colortype::Gray32Float>(cols as u32, rows as u32).map_err(fail)?;
        let tags = image.encoder();
        match scale_and_tiepoint(&coords) {
            Some((scale, tiepoint)) => {
                tags.write_tag(Tag::ModelPixelScaleTag, &scale[..]).map_err(fail)?;
                tags.write_tag(Tag::ModelTiepointTag, &tiepoint[..]).map_err(fail)?;
            }
            None => tags.write_tag(Tag::ModelTransformationTag, &transformation(&coords)[..]).map_err(fail)?,
        }
        tags.write_tag(Tag::GeoKeyDirectoryTag, &geo_keys(crs.as_ref().and_then(|c| c.epsg))[..]).map_err(fail)?;
        image.write_data(&values).map_err(fail)?;
        use std::io::Write;
        writer.flush().map_err(|e| Error::io(&path, e))?;
        Ok(output)
    }
}

/// Raster (column j = crossline index, row i = inline index) to map: x = origin + i·per_iline + j·per_xline.
/// As a 4 × 4 row-major ModelTransformation matrix.
fn transformation(c: &CoordTransform) -> [f64; 16] {
    [
        c.per_xline[0],
        c.per_iline[0],
        0.0,
        c.origin[0], //
        c.per_xline[1],
        c.per_iline[1],
        0.0,
        c.origin[1], //
        0.0,
        0.0,
        0.0,
        0.0, //
        0.0,
        0.0,
        0.0,
        1.0,
    ]
}

/// The same as ModelPixelScale and ModelTiepoint, which more readers know, when the grid is north-up:
/// crosslines along x eastwards, inlines along y southwards. `None` for any other grid.
fn scale_and_tiepoint(c: &CoordTransform) -> Option<([f64; 3], [f64; 6])> {
    let north_up = c.per_xline[1] == 0.0 && c.per_iline[0] == 0.0 && c.per_xline[0] > 0.0 && c.per_iline[1] < 0.0;
    north_up.then(|| ([c.per_xline[0], -c.per_iline[1], 0.0], [0.0, 0.0, 0.0, c.origin[0], c.origin[1], 0.0]))
}

/// The GeoKey directory: version 1.1.0, then the keys in ascending order. With an EPSG code, a projected
/// CRS in metres; without, only the raster type.
fn geo_keys(epsg: Option<u32>) -> Vec<u16> {
    let mut keys = vec![[GT_RASTER_TYPE, 0, 1, RASTER_PIXEL_IS_POINT]];
    if let Some(code) = epsg.and_then(|c| u16::try_from(c).ok()) {
        keys.insert(0, [GT_MODEL_TYPE, 0, 1, MODEL_TYPE_PROJECTED]);
        keys.push([PROJECTED_CRS, 0, 1, code]);
        keys.push([PROJ_LINEAR_UNITS, 0, 1, LINEAR_METRE]);
    }
    let mut directory = vec![1, 1, 0, keys.len() as u16];
    directory.extend(keys.into_iter().flatten());
    directory
}
