//! Pictures of slices for reports: colour maps or wiggles, shared clips, axes with line numbers and a
//! distance scale, map orientation, provenance, anti-aliased lettering; PNG files with JSON sidecars.
//!
//! A slice becomes a picture in this order: a display gain may be applied (`gain`, pictures only); the clip
//! is taken from the values, over this picture or over a group of pictures ([`clip`]); the data area is
//! sized from the true spacing of the axes and the samples are carried onto it as cells or interpolated
//! (`resample`); values become colours ([`colormap`]) or wiggle traces (`wiggle`); the axes, colour bar,
//! scale bar, north arrow, notes and footer are drawn around it (`annotate`, lettering by `text`); the PNG
//! (`encode`, a palette PNG when the picture has few colours) and its JSON [`sidecar`] are written.
//! [`section`] cuts inline, crossline and horizontal slices out of a volume, the last in map orientation
//! ([`orientation`]); [`page`] writes the `index.html` of a results folder.
//!
//! `docs/rendering.md` describes the conventions (polarity, aspect, clip) and the sidecar for users.
//!
//! The root's own items are layered in files of their own, each using only those listed before it: `slice`
//! (what is drawn), `options` (how), `provenance` (what produced it), `quantity` (what the values are and
//! their clip) and `picture` (drawing and writing the files).

mod annotate;
mod canvas;
pub mod clip;
pub mod colormap;
mod encode;
mod gain;
mod options;
pub mod orientation;
pub mod page;
pub mod panels;
mod picture;
mod provenance;
mod quantity;
mod resample;
pub mod section;
pub mod sidecar;
mod slice;
pub mod text;
mod ticks;
mod wiggle;

pub use clip::{ClipScope, ClipSetting, ClipSource};
pub use colormap::Colormap;
pub use encode::{write_png, write_rgb_png};
pub use options::{fill_template, Display, RenderOptions, Sampling, MAX_TITLE_CHARS, MAX_WIGGLE_TRACES, TITLE_FIELDS};
pub use orientation::MapView;
pub use panels::Panel;
pub use picture::{
    render_png, render_png_sealed, render_png_with, sidecar_path, PictureInfo, RenderedImage, SealedImage,
};
pub use provenance::{today, Provenance};
// The modules drawing a picture's parts write numbers and name this program the same way.
use provenance::{number, software};
pub use quantity::{decide_clip, display_values, Clip, Quantity, ValueRange};
pub use resample::Aspect;
pub use section::SliceData;
pub use sidecar::{AxisRecord, ClipRecord, PanelRecord, Sidecar};
pub use slice::{PlotAxis, Slice};

#[cfg(test)]
mod tests;
