//! What a picture says about the parts of it that the data do not support fully: the depths below the
//! deepest depth the record reaches, or in time the times after the latest time it reaches (zero there), and the traces of the survey's edges, which the window
//! tapers to zero before the migration (their amplitudes are weakened, and the migration's smile from the
//! edge shows there).

use super::Reach;
use crate::volume::{Domain, Geometry, LineAxis};

/// The notes of the picture of a product of grid `product`, on an image whose lateral grid is `image`'s,
/// whose product is zero below `reach`, and whose input is tapered over `edge_tapers` traces at each edge
/// of its inlines and its crosslines.
pub fn picture_remarks(
    product: &Geometry,
    image: &Geometry,
    reach: Option<Reach>,
    edge_tapers: [usize; 2],
) -> Vec<String> {
    let mut remarks = Vec::new();
    let vertical = &product.samples;
    let reached = reach.and_then(|r| match vertical.domain {
        Domain::Depth => Some((r.depth, r)),
        Domain::Time => r.time.map(|t| (t, r)),
    });
    if let Some((end, reach)) = reached {
        let words = reach.words(seis_core::number::number);
        if vertical.value(0) > end {
            remarks.push(format!("Below {words}: zero here."));
        } else if vertical.last() > end {
            remarks.push(format!("Zero below {words}."));
        }
    }
    let tapered: Vec<String> = [
        ("inlines", &product.ilines, &image.ilines, edge_tapers[0]),
        ("crosslines", &product.xlines, &image.xlines, edge_tapers[1]),
    ]
    .into_iter()
    .flat_map(|(what, shown, survey, width)| tapered_lines(shown, survey, width).map(|lines| format!("{what} {lines}")))
    .collect();
    if !tapered.is_empty() {
        remarks.push(format!("Edge taper (amplitudes weakened toward the survey's edge): {}.", tapered.join("; ")));
    }
    remarks
}

/// The lines of `shown` that lie within `width` lines of an end of `survey`, as ranges: `100-103 and 120-123`.
fn tapered_lines(shown: &LineAxis, survey: &LineAxis, width: usize) -> Option<String> {
    if width == 0 || survey.len == 0 {
        return None;
    }
    let width = width.min(survey.len);
    let edges = [(survey.first, survey.value(width - 1)), (survey.value(survey.len - width), survey.last())];
    let ranges: Vec<String> = edges
        .iter()
        .filter_map(|&(lo, hi)| {
            let (lo, hi) = (lo.max(shown.first), hi.min(shown.last()));
            (lo <= hi).then(|| if lo == hi { lo.to_string() } else { format!("{lo}-{hi}") })
        })
        .collect();
    let mut ranges = ranges;
    ranges.dedup();
    (!ranges.is_empty()).then(|| ranges.join(" and "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::volume::SampleAxis;

    const DEPTH_300: Reach = Reach { depth: 300.0, time: None };

    fn survey() -> Geometry {
        let z = SampleAxis { origin: 0.0, step: 5.0, len: 100, domain: Domain::Depth };
        Geometry::regular(LineAxis::new(100, 1, 20), LineAxis::new(200, 2, 30), z)
    }

    #[test]
    fn an_inline_notes_its_tapered_crosslines_and_the_depths_below_the_reach() {
        let image = survey();
        let inline = Geometry::regular(LineAxis::new(110, 1, 1), image.xlines, image.samples);
        let remarks = picture_remarks(&inline, &image, Some(DEPTH_300), [3, 4]);
        assert_eq!(
            remarks,
            [
                "Zero below 300 m, the deepest depth the record reaches.",
                "Edge taper (amplitudes weakened toward the survey's edge): crosslines 200-206 and 252-258.",
            ]
        );
        // An inline at the edge is tapered all along; a slice deeper than the reach is zero.
        let edge = Geometry::regular(LineAxis::new(101, 1, 1), LineAxis::new(220, 2, 5), image.samples.sub(70..71));
        assert_eq!(
            picture_remarks(&edge, &image, Some(DEPTH_300), [3, 4]),
            [
                "Below 300 m, the deepest depth the record reaches: zero here.",
                "Edge taper (amplitudes weakened toward the survey's edge): inlines 101.",
            ]
        );
        assert!(picture_remarks(&edge, &image, None, [0, 0]).is_empty());
    }

    #[test]
    fn a_product_in_time_notes_the_times_after_the_reach_in_ms() {
        let image = survey();
        let t = SampleAxis { origin: 0.0, step: 4.0, len: 126, domain: Domain::Time };
        let inline = Geometry::regular(LineAxis::new(110, 1, 1), image.xlines, t);
        let reach = Reach { depth: 300.0, time: Some(320.0) };
        let remarks = picture_remarks(&inline, &image, Some(reach), [0, 0]);
        assert_eq!(remarks, ["Zero below 320 ms, the latest two-way time the record reaches."]);
        let slice = Geometry::regular(image.ilines, image.xlines, SampleAxis { origin: 400.0, len: 1, ..t });
        let remarks = picture_remarks(&slice, &image, Some(reach), [0, 0]);
        assert_eq!(remarks, ["Below 320 ms, the latest two-way time the record reaches: zero here."]);
        let shallow = Geometry::regular(image.ilines, image.xlines, SampleAxis { origin: 300.0, len: 1, ..t });
        assert!(picture_remarks(&shallow, &image, Some(reach), [0, 0]).is_empty());
    }
}
