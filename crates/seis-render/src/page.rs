//! `index.html`: the page a results folder opens with. Every picture as a thumbnail that links to the
//! full picture, each product's files with their sizes, the run's parameters and a link to the manifest.
//!
//! The page is one self-contained file (its style inline, no script, nothing fetched from a network), so
//! that a folder copied off a cluster opens anywhere, and it reflows to one column on a phone. Every link
//! is a file name in the same folder.

use std::fmt::Write;

/// One product on the page.
#[derive(Clone, Debug, PartialEq)]
pub struct PageEntry {
    /// What it is, e.g. `Inline 120` or `Depth 150 m, envelope`.
    pub label: String,
    /// Its picture, if it has one (a file name in the folder).
    pub picture: Option<String>,
    /// Its other files: (format, file name, bytes).
    pub files: Vec<(String, String, u64)>,
}

/// Everything the page shows.
#[derive(Clone, Debug, PartialEq)]
pub struct Page {
    /// The page's heading, e.g. the job file's name.
    pub title: String,
    /// Short facts about the run, as (what, value): input, method, velocity, ...
    pub facts: Vec<(String, String)>,
    /// The run's warnings, listed under the facts.
    pub warnings: Vec<String>,
    /// The job as run, as TOML.
    pub job: String,
    pub entries: Vec<PageEntry>,
    /// The manifest's file name.
    pub manifest: String,
}

/// Text made safe to put between tags or in an attribute value.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A file name as a relative link: every byte outside the unreserved characters percent-encoded, so that
/// no name can become a path elsewhere or a scheme.
fn link(name: &str) -> String {
    let mut out = String::new();
    for b in name.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    // A name starting with a dot stays in the folder; make sure it cannot read as `..`.
    if out == "." || out == ".." {
        out = out.replace('.', "%2E");
    }
    out
}

fn size(bytes: u64) -> String {
    match bytes {
        b if b >= 1_000_000_000 => format!("{:.1} GB", b as f64 / 1e9),
        b if b >= 1_000_000 => format!("{:.1} MB", b as f64 / 1e6),
        b if b >= 1_000 => format!("{:.1} kB", b as f64 / 1e3),
        b => format!("{b} B"),
    }
}

const STYLE: &str = "\
body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;margin:0 auto;max-width:1200px;padding:1em;\
color:#222;line-height:1.4}\
h1{font-size:1.4em;margin:.2em 0 .6em}h2{font-size:1.15em;margin:1.4em 0 .5em}\
dl{display:grid;grid-template-columns:max-content 1fr;gap:.2em 1em;margin:0}dt{font-weight:600}dd{margin:0}\
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(260px,1fr));gap:1em}\
figure{margin:0;border:1px solid #ddd;border-radius:6px;padding:.5em;background:#fafafa}\
figure img{width:100%;height:auto;display:block}figcaption{margin-top:.4em;font-size:.95em}\
ul.files{list-style:none;padding:0;margin:.3em 0 0;font-size:.9em}\
pre{background:#f4f4f4;padding:.8em;overflow-x:auto;font-size:.85em;border-radius:6px}\
@media (max-width:600px){.grid{grid-template-columns:1fr}body{padding:.6em}}";

/// The page as HTML.
pub fn index_html(page: &Page) -> String {
    let mut h = String::new();
    let title = escape(&page.title);
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{title}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<h1>{title}</h1>\n"
    );
    if !page.facts.is_empty() {
        h.push_str("<dl>\n");
        for (k, v) in &page.facts {
            let _ = writeln!(h, "<dt>{}</dt><dd>{}</dd>", escape(k), escape(v));
        }
        h.push_str("</dl>\n");
    }
    if !page.warnings.is_empty() {
        let _ = writeln!(h, "<h2>Warnings</h2>\n<ul class=\"warnings\">");
        for w in &page.warnings {
            let _ = writeln!(h, "<li>{}</li>", escape(w));
        }
        h.push_str("</ul>\n");
    }
    let pictures: Vec<&PageEntry> = page.entries.iter().filter(|e| e.picture.is_some()).collect();
    if !pictures.is_empty() {
        h.push_str("<h2>Pictures</h2>\n<div class=\"grid\">\n");
        for e in pictures {
            let png = e.picture.as_deref().unwrap_or_default();
            let label = escape(&e.label);
            let _ = write!(
                h,
                "<figure><a href=\"{href}\"><img src=\"{href}\" alt=\"{label}\" loading=\"lazy\"></a>\
                 <figcaption>{label}",
                href = link(png)
            );
            entry_files(&mut h, &e.files);
            h.push_str("</figcaption></figure>\n");
        }
        h.push_str("</div>\n");
    }
    let others: Vec<&PageEntry> = page.entries.iter().filter(|e| e.picture.is_none()).collect();
    if !others.is_empty() {
        h.push_str("<h2>Sub-volumes</h2>\n");
        for e in others {
            let _ = write!(h, "<p><strong>{}</strong>", escape(&e.label));
            entry_files(&mut h, &e.files);
            h.push_str("</p>\n");
        }
    }
    let _ = write!(
        h,
        "<h2>The run</h2>\n<p><a href=\"{}\">{}</a>: every file of this folder with its checksum, the \
         stages and their times.</p>\n<pre>{}</pre>\n</body>\n</html>\n",
        link(&page.manifest),
        escape(&page.manifest),
        escape(&page.job)
    );
    h
}

fn entry_files(h: &mut String, files: &[(String, String, u64)]) {
    if files.is_empty() {
        return;
    }
    h.push_str("<ul class=\"files\">");
    for (format, name, bytes) in files {
        let _ = write!(
            h,
            "<li><a href=\"{}\">{}</a> ({}, {})</li>",
            link(name),
            escape(name),
            escape(format),
            size(*bytes)
        );
    }
    h.push_str("</ul>");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_text_cannot_escape_their_place() {
        assert_eq!(escape("<b>\"a\" & 'b'</b>"), "&lt;b&gt;&quot;a&quot; &amp; &#39;b&#39;&lt;/b&gt;");
        assert_eq!(link("inline_120.png"), "inline_120.png");
        assert_eq!(link("../x y.png"), "..%2Fx%20y.png");
        assert_eq!(link("javascript:alert(1)"), "javascript%3Aalert%281%29");
        assert_eq!(link(".."), "%2E%2E");
    }

    #[test]
    fn the_page_holds_every_product_and_the_manifest() {
        let page = Page {
            title: "demo <job>".into(),
            facts: vec![("input".into(), "f3.sgy".into())],
            warnings: vec!["bins <25 m> are coarse".into()],
            job: "[input]\npath = \"a<b\"".into(),
            entries: vec![
                PageEntry {
                    label: "Inline 122".into(),
                    picture: Some("inline_122.png".into()),
                    files: vec![("npy".into(), "inline_122.npy".into(), 2048)],
                },
                PageEntry {
                    label: "ROI centre".into(),
                    picture: None,
                    files: vec![("hdf5".into(), "roi_centre.h5".into(), 5)],
                },
            ],
            manifest: "manifest.json".into(),
        };
        let html = index_html(&page);
        assert!(html.starts_with("<!DOCTYPE html>"));
        assert!(html.contains("<h2>Warnings</h2>\n<ul class=\"warnings\">\n<li>bins &lt;25 m&gt; are coarse</li>"));
        assert!(html.contains("<meta name=\"viewport\""));
        assert!(html.contains("<title>demo &lt;job&gt;</title>"));
        assert!(html.contains("<img src=\"inline_122.png\""));
        assert!(html.contains("href=\"inline_122.npy\">inline_122.npy</a> (npy, 2.0 kB)"));
        assert!(html.contains("href=\"roi_centre.h5\""));
        assert!(html.contains("href=\"manifest.json\""));
        assert!(html.contains("path = &quot;a&lt;b&quot;"));
        assert!(!html.contains("http"), "nothing fetched from a network");
    }
}
