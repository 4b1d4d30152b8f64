//! From the `[output]` section to the boxes of the image a job asks for: the products of a migration in
//! depth and in time, checked against the survey, and what they hold where the data supports nothing.

use std::borrow::Cow;
use std::sync::Arc;

use super::{ProductKind, ProductSpec};
use crate::attributes::{window_around, Attribute, AttributeOutput};
use crate::error::{Error, Result};
use crate::imaging::plan::{CHECK_THE_VELOCITY, DEPTH_FROM_VELOCITY};
use crate::imaging::{ImageRequest, ImagingParams};
use crate::job::OutputConfig;
use crate::render::RenderOptions;
use crate::time_domain::TimeForm;
use crate::velocity::VelocityModel;
use crate::volume::{Geometry, IndexBox, LineAxis, SampleAxis};

/// The products of `output` on the image grid `image` (depth domain, as `imaging` sets it), in a stable
/// order, with a warning for each request the image could serve only in part or changed (a region clipped
/// or read the other way round, a depth slice moved to the nearest level). A product the image cannot
/// serve at all is a configuration error naming the key, or the element of a list, that asks for it
/// (`output.inlines.2`, `output.roi.0.depth`).
pub fn plan_products(
    output: &OutputConfig,
    image: &Geometry,
    imaging: &ImagingParams,
) -> Result<(Vec<ProductSpec>, Vec<String>)> {
    let all = image.full_box();
    let mut specs = Vec::new();
    let mut warnings = Vec::new();
    let slice = |kind, stem, region| ProductSpec {
        kind,
        attribute: None,
        stem,
        region,
        formats: output.slice_formats.clone(),
        png: output.png,
        time: None,
        scan: None,
        reach: None,
    };
    let at = |key: String| move |e: Error| Error::at_key(key, e.to_string());
    for (n, &il) in output.inlines.iter().enumerate() {
        let i = image.iline_index(il).map_err(at(format!("output.inlines.{n}")))?;
        specs.push(slice(
            ProductKind::Inline { iline: il },
            format!("inline_{il}"),
            IndexBox { il: i..i + 1, ..all.clone() },
        ));
    }
    for (n, &xl) in output.crosslines.iter().enumerate() {
        let j = image.xline_index(xl).map_err(at(format!("output.crosslines.{n}")))?;
        specs.push(slice(
            ProductKind::Crossline { xline: xl },
            format!("xline_{xl}"),
            IndexBox { xl: j..j + 1, ..all.clone() },
        ));
    }
    let depth = &image.samples;
    for (n, &z) in output.depth_slices.iter().enumerate() {
        let key = format!("output.depth_slices.{n}");
        let k = image.sample_index(z).map_err(|_| {
            let message = format!(
                "depth slice {z} m is below the deepest depth imaged ({} m): {}",
                depth.last(),
                deeper(imaging)
            );
            Error::at_key(&key, message)
        })?;
        let exact = depth.value(k);
        if (exact - z).abs() > 1e-6 * depth.step {
            warnings.push(format!(
                "{key}: depth slice {z} m is imaged at {exact} m, the nearest depth level (dz {} m)",
                depth.step
            ));
        }
        specs.push(slice(
            ProductKind::DepthSlice { depth_m: exact },
            format!("depth_{}m", exact.round() as i64),
            IndexBox { s: k..k + 1, ..all.clone() },
        ));
    }
    for (n, r) in output.roi.iter().enumerate() {
        let key = format!("output.roi.{n}");
        let region = IndexBox {
            il: line_range(&format!("{key}.iline"), "inlines", &image.ilines, r.iline, &mut warnings)?,
            xl: line_range(&format!("{key}.xline"), "crosslines", &image.xlines, r.xline, &mut warnings)?,
            s: depth_range(&format!("{key}.depth"), depth, r.depth, imaging, &mut warnings)?,
        };
        specs.push(ProductSpec {
            kind: ProductKind::Roi { name: r.name.clone() },
            attribute: None,
            stem: format!("roi_{}", r.name),
            region,
            formats: r.formats.clone(),
            png: false,
            time: None,
            scan: None,
            reach: None,
        });
    }
    specs.extend(attribute_products(output, image, &specs));
    let mut stems = std::collections::HashSet::new();
    if let Some(dup) = specs.iter().find(|s| !stems.insert(s.stem.clone())) {
        let key = match dup.kind {
            ProductKind::Inline { .. } => "output.inlines",
            ProductKind::Crossline { .. } => "output.crosslines",
            ProductKind::DepthSlice { .. } => "output.depth_slices",
            ProductKind::TimeSlice { .. } => "output.time_slices",
            ProductKind::Velocity => "output.velocity",
            ProductKind::Roi { .. } | ProductKind::Panel { .. } | ProductKind::Index => "output.roi",
        };
        return Err(Error::at_key(key, format!("the product {} is requested twice", dup.stem)));
    }
    Ok((specs, warnings))
}

/// Most samples per trace of a product in time (a guard against a mistyped `output.time_step_ms`).
const MAX_TIME_SAMPLES: usize = 1_000_000;

/// The products of `output` in two-way time (`output.domain` holds "time"), one list per velocity model
/// (the migrations of a velocity scan), each converted with its model and sampled every `step_ms`: the
/// sections and regions of [`plan_products`] with `_time` after their stem, and a slice per
/// `output.time_slices`. Every list asks for the same boxes of the image. The complex-trace attributes are
/// products in depth only: the instantaneous frequency of a depth section is a wavenumber.
pub fn plan_time_products(
    output: &OutputConfig,
    image: &Geometry,
    imaging: &ImagingParams,
    velocities: &[&VelocityModel],
    step_ms: f64,
) -> Result<Vec<Vec<ProductSpec>>> {
    let roi = output.roi.iter().map(|r| crate::job::RoiConfig { attributes: Vec::new(), ..r.clone() }).collect();
    let sections = OutputConfig { depth_slices: Vec::new(), attributes: Vec::new(), roi, ..output.clone() };
    // Their warnings are those of the products in depth, which are the same boxes.
    let (boxes, _) = plan_products(&sections, image, imaging)?;
    // A time slice's box holds its time at every trace, for every model.
    let mut slices = Vec::new();
    for (n, &t) in output.time_slices.iter().enumerate() {
        let mut s: Option<std::ops::Range<usize>> = None;
        for v in velocities {
            let levels = TimeForm::slice_levels(v, image, t, &format!("output.time_slices.{n}"))?;
            s = Some(s.map_or(levels.clone(), |s| s.start.min(levels.start)..s.end.max(levels.end)));
        }
        let s = s.expect("at least one velocity");
        slices.push((t, IndexBox { il: 0..image.ilines.len, xl: 0..image.xlines.len, s }));
    }
    // Every model's form of each box, on one time axis: the members of a scan compare sample by sample.
    let mut forms: Vec<Vec<TimeForm>> = velocities.iter().map(|_| Vec::with_capacity(boxes.len())).collect();
    for spec in &boxes {
        let of_box: Vec<TimeForm> =
            velocities.iter().map(|v| TimeForm::of_box(v, image, &spec.region, step_ms)).collect();
        let first = of_box.iter().map(|f| f.axis.origin).fold(f64::INFINITY, f64::min);
        let last = of_box.iter().map(|f| f.axis.last()).fold(f64::NEG_INFINITY, f64::max);
        let len = ((last - first) / step_ms).round() as usize + 1;
        if len > MAX_TIME_SAMPLES {
            return Err(Error::at_key(
                "output.time_step_ms",
                format!(
                    "{} in time would have {len} samples of {step_ms} ms per trace (at most {MAX_TIME_SAMPLES})",
                    spec.stem
                ),
            ));
        }
        let axis = SampleAxis { origin: first, len, ..of_box[0].axis };
        for (list, form) in forms.iter_mut().zip(of_box) {
            list.push(form.on_axis(axis));
        }
    }
    let mut lists = Vec::with_capacity(velocities.len());
    for (v, forms) in velocities.iter().zip(forms) {
        let mut specs = Vec::new();
        for (spec, form) in boxes.iter().zip(forms) {
            let time = Some(Arc::new(form));
            specs.push(ProductSpec { stem: format!("{}_time", spec.stem), time, ..spec.clone() });
        }
        for (t, region) in &slices {
            specs.push(ProductSpec {
                kind: ProductKind::TimeSlice { twt_ms: *t },
                attribute: None,
                stem: format!("time_{}ms", t.round() as i64),
                time: Some(Arc::new(TimeForm::at_time(v, image, region, *t))),
                region: region.clone(),
                formats: output.slice_formats.clone(),
                png: output.png,
                scan: None,
                reach: None,
            });
        }
        let mut stems = std::collections::HashSet::new();
        if let Some(dup) = specs.iter().find(|s| !stems.insert(s.stem.clone())) {
            return Err(Error::at_key("output.time_slices", format!("the product {} is requested twice", dup.stem)));
        }
        lists.push(specs);
    }
    Ok(lists)
}

/// How to image deeper, in words: the depth axis comes from `imaging.zmax` or `imaging.nz`, else from the
/// velocity, which may then be the real cause (km/s for m/s): said as every such message says it.
fn deeper(imaging: &ImagingParams) -> String {
    match (imaging.zmax, imaging.nz) {
        (None, None) => format!("{DEPTH_FROM_VELOCITY}: {CHECK_THE_VELOCITY}"),
        _ => "raise imaging.zmax (or imaging.nz)".into(),
    }
}

/// Bounds as written, and read the right way round: a reversed pair is swapped with a warning.
fn ordered<T: PartialOrd + Copy + std::fmt::Display>(
    key: &str,
    what: &str,
    [a, b]: [T; 2],
    unit: &str,
    warnings: &mut Vec<String>,
) -> [T; 2] {
    if a <= b {
        return [a, b];
    }
    warnings.push(format!("{key}: [{a}, {b}] is reversed: read as {what} {b}..={a}{unit}"));
    [b, a]
}

/// The indices of the lines of a region's `[first, last]` on `axis` (all of it when not given): clipped to
/// the survey with a warning, refused when none is in it.
fn line_range(
    key: &str,
    what: &str,
    axis: &LineAxis,
    bounds: Option<[i64; 2]>,
    warnings: &mut Vec<String>,
) -> Result<std::ops::Range<usize>> {
    let Some(bounds) = bounds else { return Ok(0..axis.len) };
    let [lo, hi] = ordered(key, what, bounds, "", warnings);
    let range = axis.index_range(lo, hi);
    let (first, last) = (axis.first, axis.last());
    if range.is_empty() {
        let message = format!("{what} {lo}..={hi} are outside the survey ({what} {first}..={last} step {})", axis.step);
        return Err(Error::at_key(key, message));
    }
    if lo < first || hi > last {
        warnings.push(format!(
            "{key}: {what} {lo}..={hi} reach outside the survey ({what} {first}..={last}): clipped to {}..={}",
            axis.value(range.start),
            axis.value(range.end - 1)
        ));
    }
    Ok(range)
}

/// The levels of a region's `[top, bottom]` depths (all of them when not given): clipped to the image with
/// a warning, refused when none is in it.
fn depth_range(
    key: &str,
    axis: &SampleAxis,
    bounds: Option<[f64; 2]>,
    imaging: &ImagingParams,
    warnings: &mut Vec<String>,
) -> Result<std::ops::Range<usize>> {
    let Some(bounds) = bounds else { return Ok(0..axis.len) };
    let [top, bottom] = ordered(key, "depths", bounds, " m", warnings);
    let range = axis.index_range(top, bottom);
    let (first, last) = (axis.origin, axis.last());
    if range.is_empty() {
        let place = if top > last { "below" } else { "outside" };
        let message =
            format!("depths {top}..={bottom} m are {place} the image ({first}..={last} m): {}", deeper(imaging));
        return Err(Error::at_key(key, message));
    }
    let tolerance = 1e-6 * axis.step;
    if top < first - tolerance || bottom > last + tolerance {
        warnings.push(format!(
            "{key}: depths {top}..={bottom} m reach below the image ({first}..={last} m): clipped to {}..={} m",
            axis.value(range.start),
            axis.value(range.end - 1)
        ));
    }
    Ok(range)
}

/// A warning for every product that lies, in whole or in part, below its reach, the deepest depth the
/// record can image ([`crate::imaging::Plan::reach`]), said in time for a product in time: those levels
/// are zero.
pub fn below_reach_warnings(specs: &[ProductSpec], image: &Geometry) -> Vec<String> {
    let depth = &image.samples;
    specs
        .iter()
        .filter_map(|s| s.reach.map(|reach| (s, reach)))
        .filter(|(s, reach)| depth.value(s.region.s.end - 1) > reach.depth)
        .map(|(s, reach)| {
            let how = if depth.value(s.region.s.start) > reach.depth { "lies" } else { "lies partly" };
            let why = match reach.time {
                Some(_) => format!("that of {:.0} m, the deepest depth it reaches", reach.depth),
                None => "the vertical two-way time of its last sample".to_string(),
            };
            format!("{} {how} below {} ({why}): it is zero there", s.stem, reach.words(|v| format!("{v:.0}")))
        })
        .collect()
}

/// Whether level `k` of `depth` lies below `reach`.
fn below(depth: &SampleAxis, k: usize, reach: Option<f64>) -> bool {
    reach.is_some_and(|r| depth.value(k) > r + 1e-9 * depth.step)
}

/// The values a product delivers, from the image's values of its box: zero on the traces missing from the
/// input and below the depth the record reaches, whichever engine computed them. Borrowed unchanged when
/// neither applies.
pub fn deliverable<'a>(values: &'a [f32], product: &Geometry, reach: Option<f64>) -> Cow<'a, [f32]> {
    let nz = product.samples.len;
    let deep = (0..nz).position(|k| below(&product.samples, k, reach)).unwrap_or(nz);
    if deep == nz && product.live.iter().all(|&l| l) {
        return Cow::Borrowed(values);
    }
    let mut out = values.to_vec();
    for (trace, &live) in out.chunks_mut(nz.max(1)).zip(&product.live) {
        let from = if live { deep } else { 0 };
        trace[from..].fill(0.0);
    }
    Cow::Owned(out)
}

/// The attribute products of the slices and regions of `specs`: each attribute of `output.attributes` of
/// every slice, each of `attributes` of every region. A section's attribute is computed over the section;
/// a depth slice's over `output.attribute_window_m` above and below it, of which the slice is kept.
fn attribute_products(output: &OutputConfig, image: &Geometry, specs: &[ProductSpec]) -> Vec<ProductSpec> {
    let nz = image.samples.len;
    let dz = image.samples.step;
    let mut out = Vec::new();
    for spec in specs {
        let attributes: &[Attribute] = match &spec.kind {
            ProductKind::Roi { name } => {
                output.roi.iter().find(|r| &r.name == name).map_or(&[][..], |r| &r.attributes[..])
            }
            _ => &output.attributes,
        };
        for &attribute in attributes {
            let (region, keep) = match spec.kind {
                ProductKind::DepthSlice { .. } => {
                    let (s, keep) = window_around(spec.region.s.start, output.attribute_window_m, dz, nz);
                    (IndexBox { s, ..spec.region.clone() }, keep)
                }
                _ => (spec.region.clone(), 0..spec.region.s.len()),
            };
            out.push(ProductSpec {
                kind: spec.kind.clone(),
                attribute: Some(AttributeOutput { attribute, keep, frequency_scale: 1000.0 / dz }),
                stem: format!("{}_{}", spec.stem, attribute.name()),
                region,
                formats: spec.formats.clone(),
                png: spec.png,
                time: None,
                scan: None,
                reach: None,
            });
        }
    }
    out
}

/// The boxes the engines must compute, with the attribute each hands over.
pub fn request(specs: &[ProductSpec]) -> ImageRequest {
    ImageRequest {
        boxes: specs.iter().map(|s| s.region.clone()).collect(),
        attributes: specs.iter().map(|s| s.attribute.clone()).collect(),
    }
}

/// Bytes the products will take on disk at most, about (for the free-space check before the migration):
/// 4 bytes per value and 8 KiB of headers per sub-volume file; per PNG, the uncompressed RGB size of the
/// largest picture `render` allows for the slice (at least `min_width²` pixels, as narrow slices are
/// enlarged, times the vertical exaggeration or its inverse, never more than `max_pixels`), plus 64 KiB
/// for the sidecar.
pub fn estimated_bytes(specs: &[ProductSpec], render: &RenderOptions) -> u64 {
    const FILE_HEADERS: u64 = 8 << 10;
    const PNG_EXTRAS: u64 = 64 << 10;
    let min_area = u64::from(render.min_width).pow(2);
    let stretch = render.vertical_exaggeration.max(1.0 / render.vertical_exaggeration).min(1e12);
    specs
        .iter()
        .map(|s| {
            let values = match &s.time {
                Some(t) => (s.region.il.len() * s.region.xl.len() * t.axis.len) as u64,
                None => s.output_region().len() as u64,
            };
            let files = s.formats.len() as u64 * (4 * values + FILE_HEADERS);
            let pixels = (values.max(min_area) as f64 * stretch).min(render.max_pixels as f64) as u64;
            let png = if s.png { 3 * pixels + PNG_EXTRAS } else { 0 };
            files + png
        })
        .sum()
}
