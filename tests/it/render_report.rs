//! Pictures for reports: lettering beyond ASCII, map orientation from the survey coordinates, clips shared
//! by a run's pictures, wiggles, display gain, `seisimage plot`, and the `index.html` of a results folder
//! (parsed by Python's own HTML parser, every link followed). Expected values come from the inputs (the
//! SEG-Y file's coordinates, the sample values), never from the renderer.

use std::path::Path;

use serde_json::Value;

use crate::cli_common::{job_text, model, names, run, samples, write_job, write_segy};
use seisimage::render::text;

fn sidecar(png: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(png.with_extension("json")).unwrap()).unwrap()
}

/// Units and notes a geophysicist writes: degrees, plus-minus, en dash, micro, Greek.
const LABEL: &str = "Δz ±2 m – 30° µs αβγθλπσφω Ω";

#[test]
fn non_ascii_labels_are_drawn_with_their_own_glyphs() {
    assert!(text::missing_glyphs(LABEL).is_empty(), "{:?}", text::missing_glyphs(LABEL));
    let size = 40.0;
    let line = text::rasterise(LABEL, size);
    let replacement = text::rasterise("?", size);
    let notdef = text::notdef(size);
    for (c, x0, advance) in text::char_spans(LABEL, size) {
        if c == ' ' {
            continue;
        }
        // Ink where the glyph is, in the line as drawn.
        let (a, b) = (x0.floor() as usize, ((x0 + advance).ceil() as usize).min(line.width));
        let ink: u32 = (0..line.height)
            .flat_map(|y| (a..b).map(move |x| (x, y)))
            .map(|(x, y)| u32::from(line.coverage[y * line.width + x]))
            .sum();
        assert!(ink > 20, "{c:?}: no ink in columns {a}..{b}");
        // Its own shape: neither the replacement character nor the font's missing-glyph box.
        let alone = text::rasterise(&c.to_string(), size);
        assert_ne!(alone.coverage, replacement.coverage, "{c:?} drawn as '?'");
        assert!(
            alone.width != notdef.width || alone.coverage != notdef.coverage,
            "{c:?} drawn as the missing-glyph box"
        );
    }
    // A character the font lacks becomes '?', never a box.
    assert_eq!(text::rasterise("中", size), replacement);
}

#[test]
fn a_picture_titled_beyond_ascii_keeps_its_title() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t.png");
    let title = format!("Inline 122 – {LABEL}");
    let o =
        run(&["plot", "tests/data/segyio/f3.sgy", "--inline", "122", "--title", &title, "-o", out.to_str().unwrap()]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    assert_eq!(sidecar(&out)["title"], title.as_str());
}

/// The map coordinates of line indexes (il, xl) of a SEG-Y file, from its trace headers.
fn coordinates(path: &str) -> seisimage::volume::CoordTransform {
    let reader = seisimage::io::open(Path::new(path), &Default::default()).unwrap();
    reader.geometry().coords.expect("the file has coordinates")
}

#[test]
fn the_f3_time_slice_is_drawn_north_up_as_on_the_base_map_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    for file in ["tests/data/segyio/f3.sgy", "data/f3.sgy"] {
        let out = dir.path().join("slice.png");
        let o = run(&["plot", file, "--time", "200", "-o", out.to_str().unwrap()]);
        assert_eq!(o.code(), Some(0), "{o:?}");
        let meta = sidecar(&out);
        let c = coordinates(file);
        let (rows, cols) = (&meta["rows"], &meta["cols"]);
        let value = |axis: &Value, p: u64| {
            axis["value_at_pixel_zero"].as_f64().unwrap() + axis["value_per_pixel"].as_f64().unwrap() * p as f64
        };
        let first = |axis: &Value| axis["pixel_first"].as_u64().unwrap();
        let last = |axis: &Value| first(axis) + axis["pixel_count"].as_u64().unwrap() - 1;
        // Map position of a picture pixel, through the line numbers the sidecar gives it.
        let xy = |px: u64, py: u64| {
            let (r, k) = (value(rows, py), value(cols, px));
            let (il, xl) = if rows["name"] == "iline" { (r, k) } else { (k, r) };
            c.xy(il - 111.0, xl - 875.0)
        };
        let (top_left, bottom_left, top_right) =
            (xy(first(cols), first(rows)), xy(first(cols), last(rows)), xy(last(cols), first(rows)));
        // Up the picture is north (y grows), right is east (x grows), each within a few degrees.
        let up = [top_left[0] - bottom_left[0], top_left[1] - bottom_left[1]];
        let right = [top_right[0] - top_left[0], top_right[1] - top_left[1]];
        assert!(up[1] > 0.0 && (up[0] / up[1]).atan().to_degrees().abs() < 3.0, "{file}: up is {up:?}");
        assert!(right[0] > 0.0 && (right[1] / right[0]).atan().to_degrees().abs() < 3.0, "{file}: right is {right:?}");
        // F3's inlines grow to the north: they increase up the picture.
        assert_eq!(rows["name"], "iline");
        assert!(rows["step"].as_f64().unwrap() < 0.0);
        // The picture says so, and draws the arrow at the grid's 1.6° from north.
        let notes: Vec<&str> = meta["notes"].as_array().unwrap().iter().map(|n| n.as_str().unwrap()).collect();
        assert!(notes.iter().any(|n| n.contains("north up")), "{notes:?}");
        let north = meta["map"]["north_deg"].as_f64().unwrap();
        assert!((north.abs() - 1.6).abs() < 0.1, "{north}");
    }
}

#[test]
fn plot_draws_sections_attributes_and_wiggles_and_refuses_lines_not_in_the_survey() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).to_string_lossy().into_owned();
    let f3 = "tests/data/segyio/f3.sgy";
    let o = run(&["plot", f3, "--crossline", "880", "--display", "va", "--agc", "60", "-o", &p("va.png")]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    let meta = sidecar(Path::new(&p("va.png")));
    assert_eq!(meta["display"], "va");
    assert_eq!(meta["gain"]["agc_window"], 60.0);
    assert_eq!(meta["cols"]["name"], "iline");
    let o = run(&["plot", f3, "--inline", "120", "--attribute", "envelope", "-o", &p("env.png")]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    let meta = sidecar(Path::new(&p("env.png")));
    assert_eq!(meta["quantity"]["name"], "envelope");
    assert_eq!(meta["colormap"], "heat");
    assert_eq!(meta["scale"][0], 0.0);
    let o = run(&["plot", f3, "--inline", "9999", "-o", &p("no.png")]);
    assert_eq!(o.code(), Some(2), "{o:?}");
    assert!(o.stderr.contains("9999"), "{o:?}");
    assert!(!Path::new(&p("no.png")).exists());
    let o = run(&["plot", f3, "--depth", "100", "-o", &p("no.png")]);
    assert_eq!(o.code(), Some(2), "{o:?}");
    assert!(o.stderr.contains("--time"), "{o:?}");
}

/// A CPU job on a small synthetic (a diffractor under crossline 8.5, inline 6.5) with two inlines, a depth slice and a region; `render` is the body of
/// `[output.render]`.
fn job(dir: &Path, render: &str, extra: &str) -> std::path::PathBuf {
    let m = model(12, 16, 120);
    let input = dir.join("in.sgy");
    write_segy(&input, &m, &samples(&m));
    let out = dir.join("out");
    let output = format!(
        "inlines = [3, 9]\ndepth_slices = [150.0]\nslice_formats = [\"npy\"]\n{extra}\n[output.render]\n{render}\n\n\
         [[output.roi]]\nname = \"centre\"\niline = [3, 8]\nformats = [\"hdf5\"]\n"
    );
    let text = job_text(&input, &out, "dz = 5.0\nzmax = 300.0\nfmax = 40.0", &output);
    let job = write_job(&dir.join("job.toml"), &text);
    let o = run(&["run", job.to_str().unwrap()]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    out
}

#[test]
fn pictures_of_one_kind_share_their_clip_and_say_so() {
    let dir = tempfile::tempdir().unwrap();
    let out = job(dir.path(), "clip = \"kind\"", "");
    let a = sidecar(&out.join("inline_3.png"));
    let b = sidecar(&out.join("inline_9.png"));
    assert_eq!(a["clip"]["value"], b["clip"]["value"]);
    assert_eq!(a["clip"]["scope"], "kind");
    // The clip is the 99th percentile over both inlines together, from their written values.
    let read = |name: &str| -> Vec<f32> { seisimage::io::npy::read(&out.join(name)).unwrap().1 };
    let mut mags: Vec<f32> = read("inline_3.npy").into_iter().chain(read("inline_9.npy")).map(f32::abs).collect();
    mags.sort_by(f32::total_cmp);
    let rank = 0.99 * (mags.len() - 1) as f64;
    let (lo, frac) = (rank.floor() as usize, (rank - rank.floor()) as f32);
    let expected = mags[lo] + (mags[lo + 1] - mags[lo]) * frac;
    let clip = a["clip"]["value"].as_f64().unwrap() as f32;
    assert!((clip - expected).abs() <= 1e-6 * expected.abs(), "{clip} vs {expected}");
    let notes = a["notes"][0].as_str().unwrap();
    assert!(notes.contains("over the 2 inline pictures"), "{notes}");
    // The only depth slice: its clip is its own, and says so.
    let depth = sidecar(&out.join("depth_150m.png"));
    assert_eq!(depth["clip"]["scope"], "kind");
    let notes = depth["notes"][0].as_str().unwrap();
    assert!(notes.contains("in the only depth slice picture"), "{notes}");
    // Each picture alone: two different clips.
    let dir = tempfile::tempdir().unwrap();
    let out = job(dir.path(), "clip = \"picture\"", "");
    let (a, b) = (sidecar(&out.join("inline_3.png")), sidecar(&out.join("inline_9.png")));
    assert_ne!(a["clip"]["value"], b["clip"]["value"]);
    assert_eq!(a["clip"]["scope"], "picture");
}

#[test]
fn the_index_page_is_valid_html_whose_every_link_is_a_file_of_the_folder() {
    let dir = tempfile::tempdir().unwrap();
    let out = job(dir.path(), "title = \"{product} – {method}\"", "attributes = [\"envelope\"]");
    let files = names(&out);
    assert!(files.contains(&"index.html".to_string()), "{files:?}");
    let manifest: Value = serde_json::from_slice(&std::fs::read(out.join("manifest.json")).unwrap()).unwrap();
    let index =
        manifest["products"].as_array().unwrap().iter().find(|p| p["kind"] == "index").expect("the page is listed");
    assert_eq!(index["files"][0]["path"], "index.html");
    assert_eq!(sidecar(&out.join("inline_3_envelope.png"))["title"], "Inline 3, envelope – phase-shift");
    let script = r#"
import html.parser, json, os, sys
VOID = {"meta", "img", "br", "hr", "link", "input", "area", "base", "col", "embed", "source", "track", "wbr"}
class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.links, self.errors, self.meta, self.doctype = [], [], [], [], False
    def handle_decl(self, decl):
        self.doctype = decl.lower() == "doctype html"
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for k in ("href", "src"):
            if k in a:
                self.links.append(a[k])
        if tag == "meta":
            self.meta.append(a)
        if tag not in VOID:
            self.stack.append(tag)
    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.errors.append("unexpected </%s> with %s open" % (tag, self.stack))
        else:
            self.stack.pop()
folder = sys.argv[1]
p = Page()
p.feed(open(os.path.join(folder, "index.html"), encoding="utf-8").read())
p.close()
missing = [l for l in p.links if "://" in l or not os.path.isfile(os.path.join(folder, l))]
print(json.dumps({"errors": p.errors, "open": p.stack, "missing": missing, "links": p.links,
                  "doctype": p.doctype,
                  "viewport": any(m.get("name") == "viewport" for m in p.meta)}))
"#;
    let o = crate::cli_common::child("python3").arg("-c").arg(script).arg(&out).output().expect("python3 runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let got: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(got["errors"], serde_json::json!([]), "{got}");
    assert_eq!(got["open"], serde_json::json!([]), "{got}");
    assert_eq!(got["missing"], serde_json::json!([]), "{got}");
    assert_eq!(got["doctype"], true);
    assert_eq!(got["viewport"], true);
    let links: Vec<&str> = got["links"].as_array().unwrap().iter().map(|l| l.as_str().unwrap()).collect();
    for expected in ["inline_3.png", "inline_3_envelope.png", "depth_150m.npy", "roi_centre.h5", "manifest.json"] {
        assert!(links.contains(&expected), "{expected} not linked: {links:?}");
    }
}
