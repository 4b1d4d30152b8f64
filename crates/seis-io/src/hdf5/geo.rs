//! Where the traces of a volume are on the ground, as xarray, segysak and GDAL look for it: 2-D `cdp_x` and
//! `cdp_y` datasets over the inline and crossline dimension scales, named by the volume's `coordinates`
//! attribute, and the CRS as a CF grid mapping variable `spatial_ref` named by its `grid_mapping`.

use ::hdf5::{Dataset, Group};

use super::raw;
use super::{ILINE, XLINE};
use crate::crs::Crs;
use seis_core::volume::Geometry;

pub(super) const CDP_X: &str = "cdp_x";
pub(super) const CDP_Y: &str = "cdp_y";
pub(super) const SPATIAL_REF: &str = "spatial_ref";

/// Write `cdp_x`/`cdp_y` (the bin centres of the grid fitted to the trace headers' coordinates, when the
/// geometry has them) and, when `crs` is given, the `spatial_ref` grid mapping, beside `volume` in `group`
/// (where its dimension scales already are).
pub(super) fn write_geography(group: &Group, volume: &Dataset, g: &Geometry, crs: Option<&Crs>) -> ::hdf5::Result<()> {
    if let Some(c) = &g.coords {
        let (n_il, n_xl) = (g.ilines.len, g.xlines.len);
        let (iline, xline) = (group.dataset(ILINE)?, group.dataset(XLINE)?);
        let axes = [(CDP_X, "projection_x_coordinate", "easting"), (CDP_Y, "projection_y_coordinate", "northing")];
        for (k, (name, standard_name, long_name)) in axes.into_iter().enumerate() {
            let values: Vec<f64> =
                (0..n_il).flat_map(|i| (0..n_xl).map(move |j| c.xy(i as f64, j as f64)[k])).collect();
            let dataset = group.new_dataset::<f64>().shape([n_il, n_xl]).create(name)?;
            dataset.write_raw(&values)?;
            raw::attach_scale(&dataset, 0, &iline, ILINE)?;
            raw::attach_scale(&dataset, 1, &xline, XLINE)?;
            raw::write_text_attr(&dataset, "units", "m")?;
            raw::write_text_attr(&dataset, "standard_name", standard_name)?;
            raw::write_text_attr(&dataset, "long_name", long_name)?;
            if crs.is_some() {
                raw::write_text_attr(&dataset, "grid_mapping", SPATIAL_REF)?;
            }
        }
        raw::write_text_attr(volume, "coordinates", &format!("{CDP_X} {CDP_Y}"))?;
    }
    if let Some(crs) = crs {
        let mapping = group.new_dataset::<i32>().shape(()).create(SPATIAL_REF)?;
        mapping.write_scalar(&0)?;
        // GDAL and rioxarray read `spatial_ref`, CF `crs_wkt`; both take the WKT, and `spatial_ref` also
        // takes `EPSG:<code>` when no WKT was given.
        raw::write_text_attr(&mapping, "spatial_ref", &crs.user_input())?;
        if let Some(wkt) = &crs.wkt {
            raw::write_text_attr(&mapping, "crs_wkt", wkt)?;
        }
        if let Some(epsg) = crs.epsg {
            mapping.new_attr::<i64>().create("epsg")?.write_scalar(&i64::from(epsg))?;
        }
        raw::write_text_attr(volume, "grid_mapping", SPATIAL_REF)?;
    }
    Ok(())
}
