//! Cutting the slices a geophysicist looks at out of a volume: inlines and crosslines (vertical sections,
//! time or depth downwards) and horizontal slices (map view at one time or depth, turned and flipped to
//! the survey coordinates: see [`super::orientation`]).
//!
//! Traces missing from the survey become NaN, so they are drawn in the no-data colour and kept out of the
//! clip instead of showing as zero amplitude.

use seis_core::error::{Error, Result};
use seis_core::volume::Volume;

use super::orientation::{map_view, MapView};
use super::{PlotAxis, Slice};

/// A slice that owns its samples; [`SliceData::as_slice`] lends it to [`super::render_png`].
#[derive(Clone, Debug, PartialEq)]
pub struct SliceData {
    /// Row-major: `rows.len` rows of `cols.len` values.
    pub data: Vec<f32>,
    pub rows: PlotAxis,
    pub cols: PlotAxis,
    /// For a horizontal slice: how it is arranged on the picture.
    pub map: Option<MapView>,
}

impl SliceData {
    /// The inline at grid index `il`: crosslines across, samples downwards.
    pub fn inline(volume: &Volume, il: usize) -> Result<Self> {
        let g = &volume.geometry;
        check_index("inline", il, g.ilines.len)?;
        let rows = PlotAxis::samples(&g.samples);
        let cols = PlotAxis::lines("xline", &g.xlines, bin_size(volume, 1));
        Ok(gather(volume, rows, cols, |row, col| (il, col, row)))
    }

    /// The crossline at grid index `xl`: inlines across, samples downwards.
    pub fn crossline(volume: &Volume, xl: usize) -> Result<Self> {
        let g = &volume.geometry;
        check_index("crossline", xl, g.xlines.len)?;
        let rows = PlotAxis::samples(&g.samples);
        let cols = PlotAxis::lines("iline", &g.ilines, bin_size(volume, 0));
        Ok(gather(volume, rows, cols, |row, col| (col, xl, row)))
    }

    /// Sample `s` of every trace (a time or depth slice), in map orientation from the survey coordinates:
    /// north up and east right as nearly as quarter turns and mirror images of the grid allow (without
    /// coordinates, inlines downwards and crosslines across). `map` says which arrangement was taken.
    pub fn horizontal(volume: &Volume, s: usize) -> Result<Self> {
        let g = &volume.geometry;
        check_index("sample", s, g.samples.len)?;
        let view = map_view(g.coords.as_ref());
        let il = PlotAxis::lines("iline", &g.ilines, bin_size(volume, 0));
        let xl = PlotAxis::lines("xline", &g.xlines, bin_size(volume, 1));
        let (rows, cols) = if view.transposed { (xl, il) } else { (il, xl) };
        let (rows, cols) = (reversed_if(rows, view.rows_reversed), reversed_if(cols, view.cols_reversed));
        let (nr, nc) = (rows.len, cols.len);
        let index = |k: usize, n: usize, reversed: bool| if reversed { n - 1 - k } else { k };
        let mut slice = gather(volume, rows, cols, |row, col| {
            let (r, c) = (index(row, nr, view.rows_reversed), index(col, nc, view.cols_reversed));
            if view.transposed {
                (c, r, s)
            } else {
                (r, c, s)
            }
        });
        slice.map = Some(view);
        Ok(slice)
    }

    /// The slice as borrowed by the renderer.
    pub fn as_slice(&self) -> Slice<'_> {
        Slice { data: &self.data, rows: self.rows.clone(), cols: self.cols.clone() }
    }
}

/// `axis` with its samples in the opposite order.
fn reversed_if(axis: PlotAxis, reversed: bool) -> PlotAxis {
    if reversed {
        PlotAxis { origin: axis.last(), step: -axis.step, ..axis }
    } else {
        axis
    }
}

fn check_index(what: &str, index: usize, len: usize) -> Result<()> {
    if index < len {
        Ok(())
    } else {
        Err(Error::Request(format!("{what} index {index} is outside the volume (0..{len})")))
    }
}

/// Distance between neighbouring inlines (`axis` 0) or crosslines (`axis` 1), where the survey has
/// usable coordinates.
fn bin_size(volume: &Volume, axis: usize) -> Option<f64> {
    volume.geometry.coords.map(|c| c.bin_size()[axis]).filter(|d| d.is_finite() && *d > 0.0)
}

/// Fill a slice whose value at `(row, col)` is the volume sample `at(row, col) = (il, xl, s)`.
fn gather(
    volume: &Volume,
    rows: PlotAxis,
    cols: PlotAxis,
    at: impl Fn(usize, usize) -> (usize, usize, usize),
) -> SliceData {
    let g = &volume.geometry;
    let mut data = Vec::with_capacity(rows.len * cols.len);
    for row in 0..rows.len {
        for col in 0..cols.len {
            let (il, xl, s) = at(row, col);
            let live = g.live[il * g.xlines.len + xl];
            data.push(if live { volume.trace(il, xl)[s] } else { f32::NAN });
        }
    }
    SliceData { data, rows, cols, map: None }
}

#[cfg(test)]
mod tests {
    use super::*;
    use seis_core::volume::{CoordTransform, Domain, Geometry, LineAxis, SampleAxis};

    /// 3 inlines × 4 crosslines × 5 samples whose value encodes its position: 100·il + 10·xl + s.
    fn volume() -> Volume {
        let mut g = Geometry::regular(
            LineAxis::new(200, 2, 3),
            LineAxis::new(1000, 1, 4),
            SampleAxis { origin: 0.0, step: 4.0, len: 5, domain: Domain::Time },
        );
        g.coords = Some(CoordTransform { origin: [0.0, 0.0], per_iline: [0.0, 30.0], per_xline: [12.0, 5.0] });
        g.live[2 * 4 + 3] = false;
        let mut v = Volume::zeros(g);
        for il in 0..3 {
            for xl in 0..4 {
                for (s, x) in v.trace_mut(il, xl).iter_mut().enumerate() {
                    *x = (100 * il + 10 * xl + s) as f32;
                }
            }
        }
        v
    }

    #[test]
    fn sections_put_samples_down_and_lines_across() {
        let v = volume();
        let inline = SliceData::inline(&v, 1).unwrap();
        assert_eq!((inline.rows.len, inline.cols.len), (5, 4));
        assert_eq!((inline.rows.name.as_str(), inline.rows.unit.as_str()), ("twt", "ms"));
        assert_eq!((inline.cols.name.as_str(), inline.cols.origin), ("xline", 1000.0));
        // Row 3 (t = 12 ms), column 2 (xline 1002) of inline 202.
        assert_eq!(inline.data[3 * 4 + 2], 123.0);
        assert_eq!(inline.cols.spacing_m, Some(13.0));
        assert_eq!(inline.rows.spacing_m, None);

        let xline = SliceData::crossline(&v, 3).unwrap();
        assert_eq!((xline.rows.len, xline.cols.len), (5, 3));
        assert_eq!((xline.cols.name.as_str(), xline.cols.step), ("iline", 2.0));
        assert_eq!(xline.data[4 * 3 + 1], 134.0);
        assert_eq!(xline.cols.spacing_m, Some(30.0));
        // The missing trace (inline 204, crossline 1003) is NaN all the way down.
        assert!((0..5).all(|s| xline.data[s * 3 + 2].is_nan()));
    }

    #[test]
    fn horizontal_slices_are_map_views() {
        // Inlines 30 m apart to the north, crosslines 13 m apart to the east-north-east: inlines are drawn
        // upwards (the last inline in the top row), crosslines to the right.
        let h = SliceData::horizontal(&volume(), 4).unwrap();
        assert_eq!((h.rows.name.as_str(), h.cols.name.as_str()), ("iline", "xline"));
        assert_eq!((h.rows.origin, h.rows.step), (204.0, -2.0));
        assert_eq!(h.data[..3], [204.0, 214.0, 224.0]);
        assert!(h.data[3].is_nan(), "inline 204, crossline 1003 is missing");
        assert_eq!(h.data[2 * 4 + 1], 14.0);
        assert_eq!(h.data.iter().filter(|v| v.is_nan()).count(), 1);
        let map = h.map.unwrap();
        assert!((map.north_deg.unwrap() - 0.0).abs() < 1e-9);
        // Without coordinates: the grid as it is.
        let mut v = volume();
        v.geometry.coords = None;
        let h = SliceData::horizontal(&v, 4).unwrap();
        assert_eq!(h.data[..4], [4.0, 14.0, 24.0, 34.0]);
        assert!(h.map.unwrap().note.contains("not a map orientation"));
    }

    #[test]
    fn indexes_outside_the_volume_are_refused() {
        let v = volume();
        let err = SliceData::inline(&v, 3).unwrap_err().to_string();
        assert!(err.contains("inline index 3") && err.contains("0..3"), "{err}");
        assert!(SliceData::crossline(&v, 4).is_err());
        assert!(SliceData::horizontal(&v, 5).is_err());
    }
}
