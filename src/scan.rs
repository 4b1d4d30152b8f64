//! What a job migrates, once or as a velocity scan, and the panel pictures of a scan.
//!
//! A job with `velocity.scale = [...]` (or a list of constant velocities) migrates once per member of the
//! scan: the same input, window, band and products, the velocity multiplied by the member's factor (or
//! replaced by its constant). [`plan_migrations`] plans them all on one image grid and one request, so that
//! the engine ingests once ([`crate::imaging::Engine::migrate_scan`]). Each member's products carry its
//! suffix (`inline_122_v095.png`) and zero below the depth its own velocity lets the record reach; [`Panels`]
//! keeps a copy of each picture's values as the engines hand them over and, after the last member, draws
//! every picture of the scan side by side in one picture (`inline_122_panel.png`), which shares the clip of
//! the pictures of its kind like any other.

use std::sync::Mutex;

use crate::error::{Error, Result};
use crate::imaging::{image_geometry, ImageRequest, ImagingParams, Method, Plan, ProductSink};
use crate::job::JobConfig;
use crate::products::{self, ProductAxes, ProductKind, ProductSpec, ProductTarget, WrittenProduct};
use crate::render::{Panel, PictureInfo, PlotAxis, SliceData};
use crate::scan_focus::{FocusTally, ScanFocus};
use crate::velocity::{ScanStep, VelocityModel};
use crate::volume::{Domain, Geometry};

/// One migration of a job: its velocity and plan (and its member of the scan, if any).
#[derive(Clone, Debug)]
pub struct Member {
    pub step: Option<ScanStep>,
    pub velocity: VelocityModel,
    pub plan: Plan,
}

/// A job's migrations planned.
pub struct Planned {
    /// The image grid, the same for every member.
    pub image: Geometry,
    /// One per migration (one when the job is not a scan).
    pub members: Vec<Member>,
    /// Every member's products, member after member, the same number each.
    pub products: Vec<ProductSpec>,
    /// The boxes every member images, in the order of its products.
    pub request: ImageRequest,
    /// What the products and the plans changed or doubt, each once.
    pub warnings: Vec<String>,
}

/// Plan the migrations of `job` on `input` (bins `bin`) with the velocity `base`: one, or one per member
/// of its velocity scan, each with its products. Wrong settings name their keys.
pub fn plan_migrations(job: &JobConfig, input: &Geometry, bin: [f64; 2], base: VelocityModel) -> Result<Planned> {
    // Over 100 lines: the members, their plans, their products and the warnings are made in one pass
    // because each step needs the image grid and the members of the step before.
    let steps = job.velocity.scan();
    let models: Vec<(Option<ScanStep>, VelocityModel)> = if steps.is_empty() {
        vec![(None, base)]
    } else {
        steps
            .iter()
            .map(|&s| match s {
                ScanStep::Scale(f) => (Some(s), base.scaled(f)),
                ScanStep::Constant(v) => (Some(s), VelocityModel::Constant(v)),
            })
            .collect()
    };
    let [lo, hi] = job.velocity.range;
    for (step, m) in &models {
        let (slow, fast) = m.range();
        if let (Some(step @ ScanStep::Scale(_)), true) = (step, slow < lo || fast > hi) {
            return Err(Error::at_key(
                "velocity.scale",
                format!(
                    "the model {} spans {slow:.1}..{fast:.1} m/s, outside the plausible {lo}..{hi} m/s (velocity.range)",
                    step.label()
                ),
            ));
        }
    }
    // Every member images the same depths: those of the member whose image reaches deepest (without zmax
    // or nz, the fastest).
    let mut image = None::<Geometry>;
    for (_, m) in &models {
        // What the image cannot be made of is the input's fault: the message names it.
        let g = image_geometry(input, &job.imaging, m).map_err(|e| match e {
            Error::Request(message) => Error::Request(format!("{}: {message}", job.input.path.display())),
            e => e,
        })?;
        if image.as_ref().is_none_or(|i| g.samples.len > i.samples.len) {
            image = Some(g);
        }
    }
    let image = image.expect("at least one member");
    let output = &job.output;
    let mut product_warnings = Vec::new();
    let depth = if output.writes(Domain::Depth) {
        let (specs, warnings) = products::plan_products(output, &image, &job.imaging)?;
        product_warnings.extend(warnings);
        specs
    } else {
        Vec::new()
    };
    let time = if output.writes(Domain::Time) {
        let step = output.time_step_ms.unwrap_or(input.samples.step);
        let velocities: Vec<&VelocityModel> = models.iter().map(|(_, m)| m).collect();
        let lists = products::plan_time_products(output, &image, &job.imaging, &velocities, step)?;
        if !output.attributes.is_empty() || output.roi.iter().any(|r| !r.attributes.is_empty()) {
            product_warnings.push(
                "output.attributes: the complex-trace attributes are products in depth; the products in two-way time \
                 have none"
                    .into(),
            );
        }
        lists
    } else {
        vec![Vec::new(); models.len()]
    };
    let mut products = Vec::new();
    for ((step, _), time) in models.iter().zip(time) {
        for mut spec in depth.iter().cloned().chain(time) {
            if let Some(s) = step {
                spec.stem += &s.suffix();
                spec.scan = Some(*s);
            }
            products.push(spec);
        }
    }
    let per_member = products.len() / models.len();
    let request = products::request(&products[..per_member]);
    let params = ImagingParams { zmax: None, nz: Some(image.samples.len), ..job.imaging.clone() };
    let mut members = models
        .into_iter()
        .map(|(step, velocity)| {
            let mut plan = Plan::new(input, bin, &job.window, &params, &velocity, &request)?;
            plan.nonfinite = job.input.nonfinite;
            Ok(Member { step, velocity, plan })
        })
        .collect::<Result<Vec<_>>>()?;
    // Stolt's kz grid depends on the velocity: the members share the longest, so that they share one
    // device layout (a longer grid is as accurate).
    if members[0].plan.method == Method::Stolt && members.len() > 1 {
        let longest = members.iter().filter_map(|m| m.plan.method.stolt().map(|g| g.nz_fft)).max().unwrap_or(0);
        for m in &mut members {
            if let Some(g) = m.plan.method.stolt_mut() {
                g.nz_fft = longest;
                g.dkz = std::f64::consts::TAU / (longest as f64 * image.samples.step);
            }
        }
    }
    // Each member's products are zero below the depth its velocity lets the record reach. A warning of
    // the members' plans and products is said once, naming the members it concerns.
    let mut of_members = Vec::with_capacity(members.len());
    for (member, specs) in members.iter().zip(products.chunks_mut(per_member.max(1))) {
        for spec in specs.iter_mut() {
            spec.reach = member.plan.reach.map(|depth| products::Reach::of(spec, &image, &member.velocity, depth));
        }
        let mut said = member.plan.warnings.clone();
        said.extend(products::below_reach_warnings(specs, &image));
        of_members.push((member.step, said));
    }
    let mut warnings = crate::scan_warnings::merge(&of_members);
    warnings.extend(product_warnings);
    let mut seen = std::collections::HashSet::new();
    warnings.retain(|w| seen.insert(w.clone()));
    Ok(Planned { image, members, products, request, warnings })
}

/// The copies of the pictured products' values that the panels of a scan are drawn from.
pub struct Panels<'p> {
    products: &'p [ProductSpec],
    members: usize,
    /// `[product of a member][member]`: the values as handed over, for the products with a picture.
    values: Mutex<Vec<Vec<Option<Vec<f32>>>>>,
    /// How sharply each member focuses.
    focus: FocusTally,
}

/// Member `member`'s sink: its products go to the writer at their place in the job's list, and the panels
/// keep a copy of those with a picture.
pub struct MemberSink<'s> {
    writer: &'s dyn ProductSink,
    panels: &'s Panels<'s>,
    member: usize,
}

impl ProductSink for MemberSink<'_> {
    fn complete(&self, index: usize, values: Vec<f32>) {
        let p = self.panels;
        let per_member = p.products.len() / p.members;
        if p.members > 1 {
            p.focus.add(self.member, &p.products[index], &values);
        }
        if p.members > 1 && p.products[index].png {
            let mut kept = p.values.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            kept[index][self.member] = Some(values.clone());
        }
        self.writer.complete(self.member * per_member + index, values);
    }
}

impl<'p> Panels<'p> {
    /// Panels for `products` of `members` migrations on `image` (none when there is one).
    pub fn new(products: &'p [ProductSpec], members: usize, image: &Geometry) -> Self {
        let per_member = products.len() / members.max(1);
        let values = Mutex::new(vec![vec![None; members]; per_member]);
        let focus = FocusTally::new(products, members.max(1), image);
        Panels { products, members: members.max(1), values, focus }
    }

    /// How sharply each member focused, once every member is done (`None` when the job is not a scan).
    pub fn focus(&self) -> Option<ScanFocus> {
        let per_member = self.products.len() / self.members;
        let steps: Vec<ScanStep> =
            (0..self.members).filter_map(|m| self.products.get(m * per_member).and_then(|p| p.scan)).collect();
        self.focus.finish(&steps)
    }

    /// One sink per member, in order, handing its products to `writer`.
    pub fn sinks<'s>(&'s self, writer: &'s dyn ProductSink) -> Vec<MemberSink<'s>> {
        (0..self.members).map(|member| MemberSink { writer, panels: self, member }).collect()
    }

    /// The panels, once every member is done: drawn, or waiting for the clip they share with the pictures
    /// of their kind (see [`crate::products::ProductWriter::finish`]).
    pub fn pictures(self, target: &ProductTarget) -> Result<Vec<WrittenProduct>> {
        if self.members < 2 {
            return Ok(Vec::new());
        }
        let per_member = self.products.len() / self.members;
        let values = self.values.into_inner().unwrap_or_else(|poisoned| poisoned.into_inner());
        let mut panels = Vec::new();
        for (i, kept) in values.into_iter().enumerate().filter(|(i, _)| self.products[*i].png) {
            target.cancel.check()?;
            let specs: Vec<&ProductSpec> = (0..self.members).map(|m| &self.products[m * per_member + i]).collect();
            let slices = specs
                .iter()
                .zip(kept)
                .map(|(spec, v)| {
                    let v = v.ok_or_else(|| {
                        Error::Internal(format!("the engine did not hand over the product {}", spec.stem))
                    })?;
                    products::picture_of(spec, target.image, &v, target.bin_size)
                })
                .collect::<Result<Vec<SliceData>>>()?;
            panels.push(panel(&specs, slices, target)?);
        }
        Ok(panels)
    }
}

/// Bytes the panels of a scan of `members` migrations of `products` take on disk at most, about: as much as
/// the pictures they put side by side (see [`products::estimated_bytes`]).
pub fn panel_bytes(products: &[ProductSpec], members: usize, render: &crate::render::RenderOptions) -> u64 {
    if members < 2 {
        return 0;
    }
    let pictures: Vec<ProductSpec> =
        products.iter().filter(|s| s.png).map(|s| ProductSpec { formats: Vec::new(), ..s.clone() }).collect();
    products::estimated_bytes(&pictures, render)
}

/// The stem of a scan member's product without the member's suffix: `inline_122` of `inline_122_v095`.
fn member_stem(spec: &ProductSpec) -> &str {
    spec.scan.and_then(|step| spec.stem.strip_suffix(&step.suffix())).unwrap_or(&spec.stem)
}

/// The stem of the panel of a scan member's product: `inline_122_panel`.
fn panel_stem(spec: &ProductSpec) -> String {
    format!("{}_panel", member_stem(spec))
}

/// The names of the files of the panels that a velocity scan of `products` draws (a picture and its
/// sidecar for each pictured product of a member); none when the products are not of a scan of several
/// members.
pub fn panel_names(products: &[ProductSpec]) -> Vec<String> {
    let first = products.first().and_then(|p| p.scan);
    if first.is_none() || products.iter().all(|p| p.scan == first) {
        return Vec::new();
    }
    products
        .iter()
        .filter(|p| p.png && p.scan == first)
        .flat_map(|p| {
            let stem = panel_stem(p);
            [format!("{stem}.png"), format!("{stem}.json")]
        })
        .collect()
}

/// Columns of no data between two panels: enough to see, few enough not to waste the picture.
fn gap(cols: usize) -> usize {
    (cols / 20).max(2)
}

/// The pictures of every member side by side, each a panel with its own line numbers, titled by its member.
fn panel(specs: &[&ProductSpec], slices: Vec<SliceData>, target: &ProductTarget) -> Result<WrittenProduct> {
    let first = &slices[0];
    if let Some(other) = slices.iter().find(|s| s.rows != first.rows || s.cols != first.cols) {
        return Err(Error::Internal(format!(
            "the members of the scan of {} have different axes ({} × {} and {} × {} samples)",
            specs[0].stem, first.rows.len, first.cols.len, other.rows.len, other.cols.len
        )));
    }
    let (rows, cols, n) = (first.rows.len, first.cols.len, slices.len());
    let g = gap(cols);
    let width = n * cols + (n - 1) * g;
    let mut data = vec![f32::NAN; rows * width];
    for (k, s) in slices.iter().enumerate() {
        for r in 0..rows {
            let at = r * width + k * (cols + g);
            data[at..at + cols].copy_from_slice(&s.data[r * cols..(r + 1) * cols]);
        }
    }
    let steps: Vec<ScanStep> = specs.iter().map(|s| s.scan.expect("a scan member")).collect();
    // The columns of every panel and the gaps between them only size the picture: each panel is labelled
    // by its own line numbers and its member.
    let axis = PlotAxis {
        name: "column of the panels".into(),
        unit: String::new(),
        origin: 0.0,
        step: 1.0,
        len: width,
        spacing_m: first.cols.spacing_m,
    };
    let panels = steps
        .iter()
        .zip(&slices)
        .enumerate()
        .map(|(k, (step, s))| Panel { title: step.label(), first_col: k * (cols + g), axis: s.cols.clone() })
        .collect();
    let stem = member_stem(specs[0]).to_string();
    let value = |s: &ScanStep| match *s {
        ScanStep::Scale(f) => f,
        ScanStep::Constant(v) => v,
    };
    let numbers: Vec<String> = steps.iter().map(|s| value(s).to_string()).collect();
    let members = match steps[0] {
        ScanStep::Scale(_) => format!("scale {}", numbers.join(", ")),
        ScanStep::Constant(_) => format!("{} m/s", numbers.join(", ")),
    };
    let section = ProductSpec { scan: None, ..specs[0].clone() };
    let info = PictureInfo {
        product: format!("{}: velocity {members} (left to right)", section.label()),
        quantity: section.quantity(),
        provenance: Some(target.report.provenance.clone()),
        clip: None,
        map: first.map.clone(),
        panels,
        remarks: Vec::new(),
    };
    let mut render = target.render.clone();
    render.min_width = render.min_width.saturating_mul(n as u32);
    let path = target.dir.join(format!("{}.png", panel_stem(specs[0])));
    let slice = SliceData { data, rows: first.rows.clone(), cols: axis, map: first.map.clone() };
    let axes = ProductAxes::of(&section.geometry(target.image));
    WrittenProduct::picture(
        ProductKind::Panel { of: stem, scan: steps },
        section.kind.noun(),
        axes,
        path,
        slice,
        info,
        render,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gap_between_panels() {
        assert_eq!((gap(10), gap(100), gap(1000)), (2, 5, 50));
    }
}
