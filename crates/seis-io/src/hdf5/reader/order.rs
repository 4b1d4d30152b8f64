//! Which axis of the volume each dimension of a dataset holds, as its dimension scales (or, without
//! scales, its dimension labels) say: `iline`, `xline`, and `twt`, `time`, `depth` or `sample` (`samples`)
//! for the sample axis. A dataset that names none of its dimensions is `[iline][xline][sample]`.

use std::path::Path;

use ::hdf5::Dataset;

use crate::files::quoted;
use crate::hdf5::raw::{self, H5Context, ScaleInfo, QUOTE};
use crate::hdf5::{ILINE, XLINE};
use seis_core::error::{Error, Location, Result};
use seis_core::volume::Domain;

/// The axes of a volume, in the order of its model: inline, crossline, sample.
pub(super) const AXIS_NAMES: [&str; 3] = ["inline", "crossline", "sample"];

/// The `NAME` netCDF-4 gives the scale of a dimension that has no coordinate variable: the dataset holds no
/// axis values, only the dimension's name (its own name).
const NETCDF_DIMENSION_ONLY: &str = "This is a netCDF dimension but not a netCDF variable";

/// Where the values of an axis are to be found.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Companion {
    /// No scale says: the dataset of the axis's name beside the volume, if there is one.
    Beside,
    /// The dimension scale attached to the axis's dimension: its path.
    Scale(String),
    /// The dimension is named, but holds no values (a netCDF dimension without a coordinate variable).
    NoValues,
}

/// The dimensions of a dataset, as axes of the volume.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct AxisOrder {
    /// For each dimension of the dataset, the axis it holds (0 inline, 1 crossline, 2 sample).
    pub axes: Vec<usize>,
    /// For each axis of the volume (as many as the dataset has dimensions), where its values are.
    pub companions: Vec<Companion>,
    /// The domain that the name of the sample axis says (`twt`/`time` or `depth`), if it says one.
    pub sample_domain: Option<Domain>,
}

impl AxisOrder {
    /// The order with no names: dimension `d` holds axis `d`.
    fn stored(rank: usize) -> Self {
        AxisOrder { axes: (0..rank).collect(), companions: vec![Companion::Beside; rank], sample_domain: None }
    }

    /// Whether the dataset is stored in the model's order.
    pub(super) fn is_stored_order(&self) -> bool {
        self.axes.iter().enumerate().all(|(d, &a)| d == a)
    }

    /// The shape of the volume, `[n_iline][n_xline]...`, from the dataset's shape.
    pub(super) fn model_shape<const N: usize>(&self, stored: [usize; N]) -> [usize; N] {
        let mut shape = [0; N];
        for (d, &axis) in self.axes.iter().enumerate() {
            shape[axis] = stored[d];
        }
        shape
    }
}

/// The axis a dimension's name means, and for the sample axis the domain the name says.
fn axis_of(name: &str) -> Option<(usize, Option<Domain>)> {
    let is = |n: &str| name.eq_ignore_ascii_case(n);
    if is(ILINE) {
        Some((0, None))
    } else if is(XLINE) {
        Some((1, None))
    } else if is("twt") || is("time") {
        Some((2, Some(Domain::Time)))
    } else if is("depth") {
        Some((2, Some(Domain::Depth)))
    } else if is("sample") || is("samples") {
        Some((2, None))
    } else {
        None
    }
}

/// The last part of an HDF5 path.
fn base_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// How a dimension is named: by a scale, by a label, or not at all.
struct DimensionName {
    name: String,
    /// What gave the name, for messages.
    by: String,
    companion: Companion,
    /// The scale that names it, as a message shows it, and the scale's shape.
    scale: Option<(String, Vec<usize>)>,
}

/// The name of dimension `d` of `data`: its first dimension scale's `NAME` (or, where that is empty or is
/// netCDF's mark of a dimension without values, the scale dataset's own name), else its label.
fn dimension_name(file: &Path, data: &Dataset, data_path: &str, d: usize) -> Result<Option<DimensionName>> {
    let doing = || format!("reading the dimension scales of dimension {d} of {data_path}");
    let scales = raw::dimension_scales(data, d).doing(file, doing)?;
    if let Some(ScaleInfo { path, name, shape }) = scales.into_iter().next() {
        let shown = if path.is_empty() { "(unnamed)".to_string() } else { quoted(&path, QUOTE) };
        let no_values = name.starts_with(NETCDF_DIMENSION_ONLY);
        let name = if name.is_empty() || no_values { base_name(&path).to_string() } else { name };
        let companion = if no_values || path.is_empty() { Companion::NoValues } else { Companion::Scale(path) };
        let by = format!("its dimension scale {shown}");
        return Ok(Some(DimensionName { name, by, companion, scale: Some((shown, shape)) }));
    }
    let label =
        raw::dimension_label(data, d).doing(file, || format!("reading the label of dimension {d} of {data_path}"))?;
    let by = "its label".into();
    Ok((!label.is_empty()).then_some(DimensionName { name: label, by, companion: Companion::Beside, scale: None }))
}

/// The axis each dimension of `data` (at `data_path`, of shape `shape`) holds, from the names its
/// dimension scales or labels give. The axes a dataset of this rank holds are the first `shape.len()` of
/// inline, crossline, sample. Dimensions without a name take the axes no name claims, in that order.
/// Refused: a name that is no axis (or an axis this rank does not hold), a scale whose length is not its
/// dimension's, and two dimensions of one axis.
pub(super) fn axis_order(file: &Path, data: &Dataset, data_path: &str, shape: &[usize]) -> Result<AxisOrder> {
    let rank = shape.len();
    let fail = |message: String| Error::format(file, Location::File, message);
    let mut order = AxisOrder::stored(rank);
    let mut claimed: Vec<Option<(usize, String)>> = vec![None; rank];
    let mut named: Vec<Option<usize>> = vec![None; rank];
    for (d, &len) in shape.iter().enumerate() {
        let Some(DimensionName { name, by, companion, scale }) = dimension_name(file, data, data_path, d)? else {
            continue;
        };
        let shown = quoted(&name, QUOTE);
        let known: Vec<&str> = [ILINE, XLINE, "twt", "time", "depth", "sample"].into_iter().collect();
        let Some((axis, domain)) = axis_of(&name).filter(|&(axis, _)| axis < rank) else {
            let expected = if rank == 3 { known.join(", ") } else { known[..rank].join(", ") };
            return Err(fail(format!(
                "dimension {d} of {data_path} is named '{shown}' by {by}; seisimage reads dimensions named {expected}"
            )));
        };
        if let Some((scale, scale_shape)) = scale.filter(|(_, scale_shape)| scale_shape != &[len]) {
            let what = ["the inlines", "the crosslines", "the samples"][axis];
            return Err(fail(format!(
                "{scale} has shape {scale_shape:?} where [{len}] was expected ({what} of dataset {data_path}); it \
                 is the dimension scale of dimension {d}"
            )));
        }
        if let Some((other, other_name)) = &claimed[axis] {
            return Err(fail(format!(
                "dimensions {other} ('{}') and {d} ('{shown}') of {data_path} both hold the {} axis",
                quoted(other_name, QUOTE),
                AXIS_NAMES[axis]
            )));
        }
        claimed[axis] = Some((d, name));
        named[d] = Some(axis);
        order.companions[axis] = companion;
        if axis == 2 {
            order.sample_domain = domain;
        }
    }
    let mut free = (0..rank).filter(|a| claimed[*a].is_none());
    for (d, axis) in named.into_iter().enumerate() {
        order.axes[d] = match axis {
            Some(axis) => axis,
            None => free.next().expect("as many axes as dimensions"),
        };
    }
    Ok(order)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_mean_axes() {
        assert_eq!(axis_of("iline"), Some((0, None)));
        assert_eq!(axis_of("XLINE"), Some((1, None)));
        assert_eq!(axis_of("twt"), Some((2, Some(Domain::Time))));
        assert_eq!(axis_of("time"), Some((2, Some(Domain::Time))));
        assert_eq!(axis_of("depth"), Some((2, Some(Domain::Depth))));
        assert_eq!(axis_of("samples"), Some((2, None)));
        assert_eq!(axis_of("offset"), None);
        assert_eq!(base_name("/a/b/xline"), "xline");
    }

    #[test]
    fn the_model_shape_follows_the_axes() {
        let order = AxisOrder { axes: vec![2, 0, 1], companions: vec![Companion::Beside; 3], sample_domain: None };
        assert_eq!(order.model_shape([7, 3, 5]), [3, 5, 7]);
        assert!(!order.is_stored_order());
        assert!(AxisOrder::stored(3).is_stored_order());
    }
}
