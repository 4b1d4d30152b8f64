//! What the user wants to see of the image: a list of boxes on the image grid.
//!
//! Every product is a box `[il index][xl index][depth index]`: an inline is one il and everything else, a
//! depth slice one depth index and everything else, a region any box. The plan reads the boxes to find the
//! deepest level to compute and the levels to image; the engine returns one buffer per box.
//!
//! A box may ask for a complex-trace attribute of its values instead of the values themselves
//! ([`crate::attributes`]): the engine computes it where the box is (on the device for the GPU engine) and
//! hands over the attribute of the levels the box keeps.

use crate::attributes::AttributeOutput;
use seis_core::error::{Error, Result};
use seis_core::volume::{Geometry, IndexBox, ValueBox};

#[derive(Clone, Debug, Default, PartialEq)]
pub struct ImageRequest {
    pub boxes: Vec<IndexBox>,
    /// Per box, the attribute to hand over instead of its values; boxes past the end of this list have none.
    pub attributes: Vec<Option<AttributeOutput>>,
}

impl ImageRequest {
    pub fn new(boxes: Vec<IndexBox>) -> Self {
        ImageRequest { boxes, attributes: Vec::new() }
    }

    /// The whole image.
    pub fn whole(image: &Geometry) -> Self {
        ImageRequest::new(vec![image.full_box()])
    }

    /// The attribute box `i` hands over, if it has one.
    pub fn attribute(&self, i: usize) -> Option<&AttributeOutput> {
        self.attributes.get(i).and_then(Option::as_ref)
    }

    /// What box `i` hands over, from its migrated `values`: the values, or its attribute's over the levels
    /// it keeps. Where the boxes of several parts are summed first (shards, ranks), the attribute is taken
    /// of the sum.
    pub fn handed_over(&self, i: usize, values: Vec<f32>) -> Vec<f32> {
        match self.attribute(i) {
            Some(a) => crate::attributes::compute(&values, self.boxes[i].s.len(), a),
            None => values,
        }
    }

    /// Values box `i` hands over: its values, or its attribute's over the levels it keeps.
    pub fn output_len(&self, i: usize) -> usize {
        let b = &self.boxes[i];
        match self.attribute(i) {
            Some(a) => a.len(b.il.len() * b.xl.len()),
            None => b.len(),
        }
    }

    /// Add the inline numbered `iline` (its header value).
    pub fn add_inline(&mut self, image: &Geometry, iline: i64) -> Result<()> {
        let i = image.iline_index(iline)?;
        self.boxes.push(IndexBox { il: i..i + 1, ..image.full_box() });
        Ok(())
    }

    /// Add the crossline numbered `xline`.
    pub fn add_crossline(&mut self, image: &Geometry, xline: i64) -> Result<()> {
        let j = image.xline_index(xline)?;
        self.boxes.push(IndexBox { xl: j..j + 1, ..image.full_box() });
        Ok(())
    }

    /// Add the depth slice nearest to `depth` metres.
    pub fn add_depth_slice(&mut self, image: &Geometry, depth: f64) -> Result<()> {
        let k = image.sample_index(depth)?;
        self.boxes.push(IndexBox { s: k..k + 1, ..image.full_box() });
        Ok(())
    }

    /// Add a region given by header values and depths (m).
    pub fn add_region(&mut self, image: &Geometry, sel: &ValueBox) -> Result<()> {
        self.boxes.push(image.index_box(sel)?);
        Ok(())
    }

    /// Check the request is not empty and every box is non-empty and inside the image.
    pub fn check(&self, image: &Geometry) -> Result<()> {
        if self.boxes.is_empty() {
            return Err(Error::Request("nothing was requested from the image".into()));
        }
        let [ni, nx, nz] = image.shape();
        if self.attributes.len() > self.boxes.len() {
            return Err(Error::Request(format!("{} attributes for {} boxes", self.attributes.len(), self.boxes.len())));
        }
        for (n, b) in self.boxes.iter().enumerate() {
            if let Some(a) = self.attribute(n).filter(|a| a.keep.is_empty() || a.keep.end > b.s.len()) {
                return Err(Error::Request(format!(
                    "request box {} keeps levels {:?} of its {} for its {}",
                    n + 1,
                    a.keep,
                    b.s.len(),
                    a.attribute.name()
                )));
            }
            if b.is_empty() || b.il.end > ni || b.xl.end > nx || b.s.end > nz {
                return Err(Error::Request(format!(
                    "request box {} (il {:?}, xl {:?}, depth {:?}) is empty or outside the image of {ni} × {nx} × {nz}",
                    n + 1,
                    b.il,
                    b.xl,
                    b.s
                )));
            }
        }
        Ok(())
    }

    /// The depth levels some box needs, ascending and without repeats.
    pub fn levels(&self) -> Vec<usize> {
        let mut levels: Vec<usize> = self.boxes.iter().flat_map(|b| b.s.clone()).collect();
        levels.sort_unstable();
        levels.dedup();
        levels
    }

    /// Values in all the boxes together.
    pub fn n_values(&self) -> usize {
        self.boxes.iter().map(|b| b.len()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use seis_core::volume::{Domain, LineAxis, SampleAxis};

    #[test]
    fn products_by_header_value_become_boxes() {
        let image = Geometry::regular(
            LineAxis::new(100, 2, 10),
            LineAxis::new(1, 1, 20),
            SampleAxis { origin: 0.0, step: 10.0, len: 50, domain: Domain::Depth },
        );
        let mut r = ImageRequest::default();
        assert!(r.check(&image).is_err());
        r.add_inline(&image, 104).unwrap();
        r.add_crossline(&image, 20).unwrap();
        r.add_depth_slice(&image, 122.0).unwrap();
        r.add_region(&image, &ValueBox { iline: Some([110, 114]), xline: None, sample: Some([300.0, 350.0]) }).unwrap();
        assert!(r.add_inline(&image, 105).is_err());
        assert!(r.add_depth_slice(&image, 600.0).is_err());
        assert_eq!(r.boxes[0], IndexBox { il: 2..3, xl: 0..20, s: 0..50 });
        assert_eq!(r.boxes[1], IndexBox { il: 0..10, xl: 19..20, s: 0..50 });
        assert_eq!(r.boxes[2], IndexBox { il: 0..10, xl: 0..20, s: 12..13 });
        assert_eq!(r.boxes[3], IndexBox { il: 5..8, xl: 0..20, s: 30..36 });
        r.check(&image).unwrap();
        assert_eq!(r.levels(), (0..50).collect::<Vec<_>>());
        let slices = ImageRequest::new(vec![r.boxes[2].clone(), r.boxes[3].clone()]);
        assert_eq!(slices.levels(), vec![12, 30, 31, 32, 33, 34, 35]);
        assert_eq!(slices.n_values(), 200 + 3 * 20 * 6);
        let outside = ImageRequest::new(vec![IndexBox { il: 0..11, xl: 0..1, s: 0..1 }]);
        assert!(outside.check(&image).unwrap_err().to_string().contains("box 1"));
    }
}
