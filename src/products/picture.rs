//! A product as a picture: its slice, its title and the quantity its values are.

use super::written::{group_clip, ClipGroup, PendingPicture, ProductTarget, WrittenProduct};
use super::{ProductKind, ProductSpec};
use crate::attributes::Attribute;
use crate::error::Result;
use crate::render::{self, PictureInfo, Quantity, SliceData};
use crate::volume::{Geometry, Volume};

/// Draw the pictures that wait for a shared clip: each group's clip is the percentile over the values of
/// all its pictures, then they are drawn side by side.
pub(super) fn draw_shared_pictures(products: &mut [WrittenProduct], target: &ProductTarget) -> Result<()> {
    use rayon::prelude::*;
    // Each group of pictures (see `PendingPicture::group`) with the products that hold them.
    let mut groups: Vec<(ClipGroup, Vec<usize>)> = Vec::new();
    for (i, p) in products.iter().enumerate() {
        if let Some(pending) = &p.pending {
            match groups.iter_mut().find(|(g, _)| *g == pending.group) {
                Some((_, members)) => members.push(i),
                None => groups.push((pending.group.clone(), vec![i])),
            }
        }
    }
    let mut clips = vec![None; products.len()];
    for (_, members) in &groups {
        target.cancel.check()?;
        let pending: Vec<&PendingPicture> = members.iter().filter_map(|&i| products[i].pending.as_ref()).collect();
        let clip = group_clip(&pending);
        for &i in members {
            clips[i] = Some(clip.clone());
        }
    }
    let drawn: Vec<(usize, Result<render::SealedImage>)> = products
        .par_iter()
        .enumerate()
        .filter_map(|(i, p)| p.pending.as_ref().map(|pending| (i, pending)))
        .map(|(i, pending)| {
            let info = PictureInfo { clip: clips[i].clone(), ..pending.info.clone() };
            let drawn = target.cancel.check().and_then(|()| {
                render::render_png_sealed(&pending.path, &pending.slice.as_slice(), &pending.render, &info)
            });
            (i, drawn)
        })
        .collect();
    for (i, image) in drawn {
        let p = &mut products[i];
        p.pending = None;
        p.files.splice(0..0, super::written::drawn_files(image?));
    }
    Ok(())
}

/// Lines of the text header of a SEG-Y product in time: the file says how its time axis was made.
pub(super) const TIME_NOTE: [&str; 2] = [
    "TWO-WAY TIME, CONVERTED FROM THE DEPTH IMAGE WITH THE MIGRATION",
    "VELOCITY MODEL: T(Z) = 2 * INTEGRAL OF DZ / V",
];

pub(super) fn title(kind: &ProductKind) -> String {
    match kind {
        ProductKind::Inline { iline } => format!("Inline {iline}"),
        ProductKind::Crossline { xline } => format!("Crossline {xline}"),
        ProductKind::DepthSlice { depth_m } => format!("Depth {} m", crate::number::number(*depth_m)),
        ProductKind::Roi { name } => format!("ROI {name}"),
        ProductKind::TimeSlice { twt_ms } => format!("TWT {} ms", crate::number::number(*twt_ms)),
        ProductKind::Panel { of, .. } => format!("Velocity scan of {of}"),
        ProductKind::Index => "Index".into(),
        ProductKind::Velocity => "Interval velocity".into(),
    }
}

/// The picture of a product from the values of its box as the engine hands them over, as its file
/// would be drawn: with what was not recorded zeroed, and in time when the product is.
pub fn picture_of(spec: &ProductSpec, image: &Geometry, box_values: &[f32], bin_size: [f64; 2]) -> Result<SliceData> {
    let values = spec.values(image, box_values).into_owned();
    slice_of(&spec.kind, Volume { geometry: spec.geometry(image), data: values }, bin_size)
}

/// A slice product as an image: depth downwards for sections, inlines downwards for maps, with the true
/// trace spacing (which the image geometry may not carry when the survey has no coordinates).
pub(super) fn slice_of(kind: &ProductKind, product: Volume, bin_size: [f64; 2]) -> Result<SliceData> {
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

/// What `attribute`'s values are, for an axis in `axis_unit` (`m`, `ms`, `s`): its name, unit, colour
/// scale and colour map (sequential for the envelope and the frequency, cyclic for the phase).
pub fn attribute_quantity(attribute: Attribute, axis_unit: &str) -> Quantity {
    let (unit, range, colormap) = match attribute {
        Attribute::Envelope => ("", crate::render::ValueRange::FromZero, Some(crate::render::Colormap::Heat)),
        Attribute::Phase => {
            ("°", crate::render::ValueRange::Fixed { lo: -180.0, hi: 180.0 }, Some(crate::render::Colormap::Phase))
        }
        Attribute::Frequency => (
            crate::attributes::frequency_unit(axis_unit).1,
            crate::render::ValueRange::FromZero,
            Some(crate::render::Colormap::Heat),
        ),
        Attribute::CosPhase => ("", crate::render::ValueRange::Fixed { lo: -1.0, hi: 1.0 }, None),
    };
    Quantity { name: attribute.title().into(), unit: unit.into(), range, colormap, gain: false }
}
