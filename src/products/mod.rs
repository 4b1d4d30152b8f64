//! From the `[output]` section to boxes of the image, and from migrated boxes to files.
//!
//! Every product — inline, crossline, depth slice or ROI, or a complex-trace attribute of one — is one box of
//! the image grid, in depth as imaged or converted to two-way time ([`crate::time_domain`]), from the one
//! migration of the job or from a member of its velocity scan ([`crate::scan`]). The engines only ever see
//! the boxes ([`crate::imaging::ImageRequest`]); this module names them, and writes each one as PNG and/or sub-volume files
//! through temporary names, recording a checksum for the manifest. Pictures that share a clip with others of the run (`output.render.clip = "kind"` or `"job"`)
//! are drawn once all of them are in; the run's `index.html` is written last, beside them.
//!
//! Where the image holds nothing the data can support, every product of every engine holds zeros, in every
//! format ([`deliverable`]): on traces missing from the input (which the pictures draw as no data, and
//! HDF5 and SEG-Y files mark as such), and below the deepest depth the record reaches through the velocity
//! of the product's migration ([`crate::imaging::Plan::reach`]). A product in time is made so in depth
//! first, then converted.

use std::borrow::Cow;
use std::sync::Arc;

use serde::Serialize;

use crate::attributes::AttributeOutput;
use crate::job::VolumeFormat;
use crate::render::Quantity;
use crate::time_domain::TimeForm;
use crate::velocity::ScanStep;
use crate::volume::{Geometry, IndexBox};

mod page;
mod picture;
mod plan;
mod reach;
mod record;
mod remarks;
#[cfg(test)]
mod tests;
mod velocity;
mod write;
mod written;

pub use page::*;
pub use picture::*;
pub use plan::*;
pub use reach::Reach;
pub use record::*;
pub use velocity::*;
pub use write::*;
pub use written::*;

/// What a product is, in the user's terms.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum ProductKind {
    Inline {
        iline: i64,
    },
    Crossline {
        xline: i64,
    },
    DepthSlice {
        depth_m: f64,
    },
    Roi {
        name: String,
    },
    TimeSlice {
        twt_ms: f64,
    },
    /// The same section of every migration of a velocity scan, side by side (`of`: the sections' stem).
    Panel {
        of: String,
        scan: Vec<ScanStep>,
    },
    /// The run's page, `index.html`.
    Index,
    /// The interval velocity (m/s) the migration used, on the image's grid (`output.velocity`).
    Velocity,
}

impl ProductKind {
    /// The kind in words, for the pictures' notes: `inline`, `crossline`, `depth slice`, `ROI`.
    pub(crate) fn noun(&self) -> &'static str {
        match self {
            ProductKind::Inline { .. } => "inline",
            ProductKind::Crossline { .. } => "crossline",
            ProductKind::DepthSlice { .. } => "depth slice",
            ProductKind::Roi { .. } => "ROI",
            ProductKind::TimeSlice { .. } => "time slice",
            ProductKind::Panel { .. } => "panel",
            ProductKind::Index => "page",
            ProductKind::Velocity => "velocity",
        }
    }
}

/// One requested product: its box of the image and how to write it.
#[derive(Clone, Debug)]
pub struct ProductSpec {
    pub kind: ProductKind,
    /// The complex-trace attribute this product is, of the box; `None`: the image itself.
    pub attribute: Option<AttributeOutput>,
    /// File stem, e.g. `inline_121` or `inline_121_envelope`.
    pub stem: String,
    /// The box the engine computes.
    pub region: IndexBox,
    pub formats: Vec<VolumeFormat>,
    pub png: bool,
    /// In two-way time: the box of the depth image converted so (`None`: in depth, as imaged).
    pub time: Option<Arc<TimeForm>>,
    /// The member of a velocity scan it comes from (`None`: the job migrates once).
    pub scan: Option<ScanStep>,
    /// How deep (and, in time, how late) the record reaches through the velocity of its migration, when
    /// the image goes deeper: the product is zero below it.
    pub reach: Option<Reach>,
}

impl ProductSpec {
    /// The box the product's files hold: the region, or the levels an attribute keeps of it.
    pub fn output_region(&self) -> IndexBox {
        match &self.attribute {
            Some(a) => IndexBox {
                s: self.region.s.start + a.keep.start..self.region.s.start + a.keep.end,
                ..self.region.clone()
            },
            None => self.region.clone(),
        }
    }

    /// The product in words: `Inline 120`, `Depth 150 m, envelope`, `Inline 120, two-way time, velocity
    /// scale 0.95`.
    pub fn label(&self) -> String {
        let what = match &self.kind {
            ProductKind::Inline { .. }
            | ProductKind::Crossline { .. }
            | ProductKind::Roi { .. }
            | ProductKind::Velocity
                if self.time.is_some() =>
            {
                format!("{}, two-way time", title(&self.kind))
            }
            _ => title(&self.kind),
        };
        let what = match &self.attribute {
            Some(a) => format!("{what}, {}", a.attribute.title()),
            None => what,
        };
        match self.scan {
            Some(step) => format!("{what}, velocity {}", step.label()),
            None => what,
        }
    }

    /// The geometry of the product as written: its box of the image, in time when it is a product in time.
    pub fn geometry(&self, image: &Geometry) -> Geometry {
        let mut g = image.subset(&self.output_region());
        if let Some(t) = &self.time {
            g.samples = t.axis;
        }
        g
    }

    /// The product's values as written, from those of its box as the engine hands them over: zero where
    /// nothing was recorded ([`deliverable`], in depth), then converted to time when it is in time.
    pub fn values<'a>(&self, image: &Geometry, box_values: &'a [f32]) -> Cow<'a, [f32]> {
        if self.kind == ProductKind::Velocity {
            return velocity::values_as_written(self, box_values);
        }
        let in_depth = image.subset(&self.output_region());
        let values = deliverable(box_values, &in_depth, self.reach.map(|r| r.depth));
        match &self.time {
            Some(t) => Cow::Owned(t.convert(&values)),
            None => values,
        }
    }

    /// What its values are.
    pub(crate) fn quantity(&self) -> Quantity {
        match &self.attribute {
            Some(a) => attribute_quantity(a.attribute, "m"),
            None if self.kind == ProductKind::Velocity => Quantity::velocity(),
            None => Quantity::amplitude(),
        }
    }
}
