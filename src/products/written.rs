//! A product written under temporary names and not yet in place, where it goes, and the commit that puts
//! the products of a run in place together.

use std::path::{Path, PathBuf};

use super::record::{file_record, ProductAxes, ProductFile, ProductRecord, RunReport};
use super::ProductKind;
use crate::attributes::Attribute;
use crate::cancel::CancelToken;
use crate::error::Result;
use crate::io::output::{commit_together_replacing, Replaced, SealedOutput};
use crate::render::{self, ClipScope, PictureInfo, RenderOptions, SliceData};
use crate::velocity::ScanStep;
use crate::volume::Geometry;

/// A product written under temporary names and measured: [`commit_products`] puts it in place.
pub struct WrittenProduct {
    pub(super) kind: ProductKind,
    pub(super) attribute: Option<Attribute>,
    pub(super) scan: Option<ScanStep>,
    /// The product in words, for the page.
    pub(super) label: String,
    pub(super) axes: Option<ProductAxes>,
    /// Its files with their formats, in the manifest's order.
    pub(super) files: Vec<(SealedOutput, &'static str)>,
    /// Its picture, when it waits for the clip it shares with other pictures of the run.
    pub(super) pending: Option<PendingPicture>,
}

/// A picture to draw once the clip of its group is known.
pub(crate) struct PendingPicture {
    pub(super) path: PathBuf,
    pub(super) slice: SliceData,
    pub(super) info: PictureInfo,
    /// How it is drawn: the run's options, or a panel's (wider).
    pub(super) render: RenderOptions,
    /// The pictures that share its clip: its kind (for `clip = "kind"`) and its quantity.
    pub(super) group: ClipGroup,
}

impl WrittenProduct {
    /// A product that is only a picture, `slice` of `info` drawn with `render` at `path` as `kind`: drawn
    /// now, or once the pictures it shares a clip with are in (those of `noun`'s kind, or of the run).
    pub(crate) fn picture(
        kind: ProductKind,
        noun: &'static str,
        axes: ProductAxes,
        path: PathBuf,
        slice: SliceData,
        info: PictureInfo,
        render: RenderOptions,
    ) -> Result<Self> {
        let label = info.product.clone();
        let (files, pending) = picture_files(path, slice, info, render, noun)?;
        Ok(WrittenProduct { kind, attribute: None, scan: None, label, axes: Some(axes), files, pending })
    }
}

/// A picture's files, drawn now when it has a clip of its own; else nothing yet, and the picture pending
/// until its group's clip is known (see [`draw_shared_pictures`]).
#[allow(clippy::type_complexity)]
pub(super) fn picture_files(
    path: PathBuf,
    slice: SliceData,
    info: PictureInfo,
    render: RenderOptions,
    noun: &'static str,
) -> Result<(Vec<(SealedOutput, &'static str)>, Option<PendingPicture>)> {
    match clip_group(&render, noun, &info.quantity.name) {
        None => Ok((drawn_files(render::render_png_sealed(&path, &slice.as_slice(), &render, &info)?), None)),
        Some(group) => Ok((Vec::new(), Some(PendingPicture { path, slice, info, render, group }))),
    }
}

/// The clip shared by `pending`, every picture of one group (at least one): the percentile over all their
/// values.
pub(super) fn group_clip(pending: &[&PendingPicture]) -> render::Clip {
    let (kind, quantity) = &pending[0].group;
    let values: Vec<std::borrow::Cow<[f32]>> =
        pending.iter().map(|p| render::display_values(&p.slice.as_slice(), &p.info.quantity, &p.render)).collect();
    let parts: Vec<&[f32]> = values.iter().map(|v| v.as_ref()).collect();
    let n = pending.len();
    let (scope, over) = match kind {
        Some(kind) if n == 1 => (ClipScope::Kind, format!("in the only {kind} picture of {quantity} of this run")),
        Some(kind) => (ClipScope::Kind, format!("over the {n} {kind} pictures of {quantity} of this run")),
        None if n == 1 => (ClipScope::Job, format!("in the only picture of {quantity} of this run")),
        None => (ClipScope::Job, format!("over all {n} pictures of {quantity} of this run")),
    };
    render::decide_clip(&parts, &pending[0].info.quantity, &pending[0].render, scope, &over)
}

/// A drawn picture's files in the product's order: the picture, then its sidecar.
pub(super) fn drawn_files(image: render::SealedImage) -> Vec<(SealedOutput, &'static str)> {
    let [sidecar, png] = image.files;
    vec![(png, "png"), (sidecar, "json")]
}

/// Where a run's products go and how they are drawn: what writing any of them needs besides its spec and
/// its values.
pub struct ProductTarget<'a> {
    /// The output folder.
    pub dir: &'a Path,
    /// The image grid the products are boxes of.
    pub image: &'a Geometry,
    /// Metres between inlines and between crosslines, which set the pictures' aspect (the image grid may
    /// not carry them when the survey has no coordinates).
    pub bin_size: [f64; 2],
    pub render: &'a RenderOptions,
    /// The run's stop request, honoured between the steps of writing.
    pub cancel: CancelToken,
    /// What the pictures and the page say about the run.
    pub report: RunReport,
    /// Traces tapered at each edge of the input's inlines and of its crosslines, which pictures note.
    pub edge_tapers: [usize; 2],
    /// How sub-volume files are written: the processing history of SEG-Y text headers, among others.
    pub volume_options: crate::io::WriteOptions,
    /// The clip groups ([`ClipGroup`]) whose every picture is a product of the run, each with how many
    /// pictures it holds: a group's pictures are drawn as soon as the last of them comes, while the
    /// migration goes on. A group that is not here is drawn once the run has handed over every product.
    pub clip_groups: Vec<(ClipGroup, usize)>,
}

/// Which pictures share a clip: a kind's (for `clip = "kind"`; `None` for `clip = "job"`) of a quantity.
pub type ClipGroup = (Option<&'static str>, String);

/// The group of a picture of `noun`'s kind and of `quantity` drawn with `render`, if it shares its clip.
pub fn clip_group(render: &RenderOptions, noun: &'static str, quantity: &str) -> Option<ClipGroup> {
    match render.clip.scope() {
        Some(ClipScope::Kind) => Some((Some(noun), quantity.to_string())),
        Some(ClipScope::Job) => Some((None, quantity.to_string())),
        _ => None,
    }
}

/// Put written products in place, every file flushed to disk at once (see [`commit_together_replacing`]),
/// and record them for the manifest, with the files of an earlier run they replaced, to be removed. A
/// picture's sidecar is moved into place before the picture, so that a picture is never found without its
/// sidecar.
pub fn commit_products(written: Vec<WrittenProduct>) -> Result<(Vec<ProductRecord>, Replaced)> {
    // The files in the order they are moved into place, each with its product and its place in that
    // product's list.
    let mut order = Vec::new();
    let mut heads = Vec::with_capacity(written.len());
    for (p, w) in written.into_iter().enumerate() {
        let mut files: Vec<_> =
            w.files.into_iter().enumerate().map(|(i, (file, format))| ((p, i, format), file)).collect();
        files.sort_by_key(|((.., format), _)| *format != "json");
        heads.push((w.kind, w.attribute, w.scan, w.axes, files.len()));
        order.extend(files);
    }
    let (places, sealed): (Vec<_>, Vec<_>) = order.into_iter().unzip();
    let mut files: Vec<Vec<Option<ProductFile>>> = heads.iter().map(|(.., n)| vec![None; *n]).collect();
    let (done, replaced) = commit_together_replacing(sealed)?;
    for ((p, i, format), (path, digest)) in places.into_iter().zip(done) {
        files[p][i] = Some(file_record(&path, digest, format));
    }
    let records = heads
        .into_iter()
        .zip(files)
        .map(|((kind, attribute, scan, axes, _), files)| ProductRecord {
            kind,
            attribute,
            scan,
            axes,
            files: files.into_iter().flatten().collect(),
        })
        .collect();
    Ok((records, replaced))
}
