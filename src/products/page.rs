//! The run's `index.html`, beside its pictures.

use super::written::{ProductTarget, WrittenProduct};
use super::ProductKind;
use crate::error::Result;
use crate::io::output::{write_sealed, SealedOutput};
use crate::render::page::{index_html, Page, PageEntry};

/// The name of a run's page in its output folder.
pub const INDEX_PAGE: &str = "index.html";

/// Facts about a run that the page shows besides those of its report, as (what, value).
pub type Facts = Vec<(String, String)>;

/// The run's `index.html`, as a product of its own.
pub(super) fn index_page(
    products: &[WrittenProduct],
    target: &ProductTarget,
    title: &str,
    job: &str,
    more_facts: Facts,
) -> Result<WrittenProduct> {
    let name =
        |f: &SealedOutput| f.final_path().file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let entries = products
        .iter()
        .map(|p| PageEntry {
            label: p.label.clone(),
            picture: p.files.iter().find(|(_, format)| *format == "png").map(|(f, _)| name(f)),
            files: p
                .files
                .iter()
                .filter(|(_, format)| *format != "png")
                .map(|(f, format)| (format.to_string(), name(f), f.digest().bytes))
                .collect(),
        })
        .collect();
    let p = &target.report.provenance;
    let mut facts = vec![("input".to_string(), p.input.clone())];
    facts.extend(p.method.clone().map(|m| ("method".to_string(), m)));
    facts.extend(p.velocity.clone().map(|v| ("velocity".to_string(), v)));
    facts.extend(p.dz_m.map(|d| ("depth step".to_string(), format!("{} m", crate::number::number(d)))));
    facts.extend(p.fmax_hz.map(|f| ("highest frequency".to_string(), format!("{} Hz", crate::number::number(f)))));
    facts.push(("run".to_string(), format!("{}, {}", p.software, p.date)));
    facts.extend(more_facts);
    let page = Page {
        title: title.to_string(),
        facts,
        warnings: target.report.warnings.clone(),
        job: job.to_string(),
        entries,
        manifest: "manifest.json".into(),
    };
    let file = write_sealed(target.dir.join(INDEX_PAGE), index_html(&page).as_bytes())?;
    Ok(WrittenProduct {
        kind: ProductKind::Index,
        attribute: None,
        scan: None,
        label: "Index".into(),
        axes: None,
        files: vec![(file, "html")],
        pending: None,
    })
}
