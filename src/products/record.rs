//! What a run records of its products for the manifest, and the commit of their files.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::{ProductKind, ProductSpec};
use crate::attributes::Attribute;
use crate::io::output::FileDigest;
use crate::job::Job;
use crate::render::Provenance;
use crate::velocity::{ScanStep, VelocityModel};
use crate::volume::{Domain, Geometry, LineAxis, SampleAxis};

/// A file written, for the manifest.
#[derive(Clone, Debug, Serialize)]
pub struct ProductFile {
    /// File name, in the output folder (beside the manifest).
    pub path: PathBuf,
    pub format: String,
    pub bytes: u64,
    pub sha256: String,
}

/// A product written, for the manifest.
#[derive(Clone, Debug, Serialize)]
pub struct ProductRecord {
    #[serde(flatten)]
    pub kind: ProductKind,
    /// The complex-trace attribute the product is, if it is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attribute: Option<Attribute>,
    /// The member of a velocity scan it comes from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scan: Option<ScanStep>,
    /// Axes of the product as written (none for the page).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub axes: Option<ProductAxes>,
    pub files: Vec<ProductFile>,
}

/// The axes of a product: its sample axis is named `depth` (m) or `twt` (ms, a product in time).
#[derive(Clone, Debug, Serialize)]
pub struct ProductAxes {
    pub iline: LineAxis,
    pub xline: LineAxis,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub depth: Option<SampleAxis>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub twt: Option<SampleAxis>,
}

impl ProductAxes {
    pub fn of(g: &Geometry) -> Self {
        let (depth, twt) = match g.samples.domain {
            Domain::Depth => (Some(g.samples), None),
            Domain::Time => (None, Some(g.samples)),
        };
        ProductAxes { iline: g.ilines, xline: g.xlines, depth, twt }
    }
}

/// What the run's pictures and page say about the run.
#[derive(Clone, Debug, Default)]
pub struct RunReport {
    /// Written in every picture's footer.
    pub provenance: Provenance,
    /// The velocity of each member of a velocity scan in a few words, for its pictures' footers (the
    /// provenance's velocity is the whole scan's).
    pub scan: Vec<(ScanStep, String)>,
    /// The page's heading (the job file's name) and the job as run, as TOML; `None`: no `index.html`.
    pub page: Option<(String, String)>,
    /// The run's warnings, listed at the top of the page.
    pub warnings: Vec<String>,
}

impl RunReport {
    /// The report of `job`, run now with the interval velocity `velocity` in depth (converted from the
    /// job's form), or with the members of a velocity scan `scan`.
    pub fn of(job: &Job, velocity: &VelocityModel, scan: &[(ScanStep, &VelocityModel)]) -> Self {
        let c = &job.config;
        let file = c.velocity.path.as_deref().and_then(Path::file_name).map(|f| f.to_string_lossy().into_owned());
        let velocity_summary = |v: &VelocityModel| match &file {
            Some(file) => format!("{} from {file}", velocity_summary(v)),
            None => velocity_summary(v),
        };
        let velocity = match scan {
            [] => velocity_summary(velocity),
            [(first, _), .., (last, _)] => {
                format!("velocity scan of {}: {} to {}", scan.len(), first.label(), last.label())
            }
            [(only, _)] => only.label(),
        };
        let provenance = Provenance {
            method: Some(c.imaging.method.name().to_string()),
            velocity: Some(velocity),
            dz_m: Some(c.imaging.dz),
            fmax_hz: Some(c.imaging.fmax),
            ..Provenance::now(&c.input.path)
        };
        let scan = scan.iter().map(|(step, v)| (*step, format!("{}, {}", velocity_summary(v), step.label()))).collect();
        let name = job.source.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let page = c.output.index.then(|| (name, job.to_toml()));
        RunReport { provenance, scan, page, warnings: Vec::new() }
    }

    /// What produced the pictures of `spec`: the run, with its member's velocity in a scan.
    pub fn provenance_of(&self, spec: &ProductSpec) -> Provenance {
        let member = spec.scan.and_then(|step| self.scan.iter().find(|(s, _)| *s == step));
        match member {
            Some((_, velocity)) => Provenance { velocity: Some(velocity.clone()), ..self.provenance.clone() },
            None => self.provenance.clone(),
        }
    }
}

/// An interval velocity in depth in a few words: `v 2000 m/s`, `v(z) 1500-2600 m/s`, `v(x, y, z)
/// 1480-4200 m/s`.
fn velocity_summary(v: &VelocityModel) -> String {
    let n = |x: f64| format!("{}", (x * 10.0).round() / 10.0);
    let (lo, hi) = v.range();
    match v {
        VelocityModel::Constant(c) => format!("v {} m/s", n(*c)),
        VelocityModel::Table(_) => format!("v(z) {}-{} m/s", n(lo), n(hi)),
        VelocityModel::Grid(_) => format!("v(x, y, z) {}-{} m/s", n(lo), n(hi)),
    }
}

/// Bytes of every file of `records`.
pub fn bytes_of(records: &[ProductRecord]) -> u64 {
    records.iter().flat_map(|r| r.files.iter()).map(|f| f.bytes).sum()
}

/// The manifest's record of a file written (its checksum read back as the disk wrote it).
pub(super) fn file_record(path: &Path, digest: FileDigest, format: &str) -> ProductFile {
    ProductFile {
        path: path.file_name().map(PathBuf::from).unwrap_or_default(),
        format: format.into(),
        bytes: digest.bytes,
        sha256: digest.sha256,
    }
}
