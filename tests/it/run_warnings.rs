//! The warnings of a run are said once, and only where they matter: a velocity scan gives each warning of
//! its members once, naming the members it concerns; a velocity table that ends a little above the bottom
//! of the image gives no warning, one that ends far above it does.

use std::path::{Path, PathBuf};

use crate::cli_common::{model, run, samples, write_job, write_segy};
use crate::velocity_scan::scan_job;
use serde_json::Value;

fn manifest_warnings(out: &Path) -> Vec<String> {
    let manifest: Value = serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    manifest["warnings"].as_array().unwrap().iter().map(|w| w.as_str().unwrap().to_string()).collect()
}

#[test]
fn a_scan_of_three_says_each_warning_once_in_the_log_and_the_manifest() {
    let dir = tempfile::tempdir().unwrap();
    // 10 m bins are coarser than vmin / (4 fmax) for every member: each member's plan warns of aliasing.
    let job = scan_job(dir.path(), "kind = \"constant\"\nvelocity = 2000.0\nscale = [0.9, 1.0, 1.1]");
    let o = run(&["run", job.to_str().unwrap()]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    let warnings = manifest_warnings(&dir.path().join("out"));
    let aliasing: Vec<&String> = warnings.iter().filter(|w| w.contains("alias laterally")).collect();
    assert_eq!(aliasing.len(), 1, "{warnings:?}");
    assert!(aliasing[0].starts_with("velocity scan, every member (figures for scale 0.9): "), "{aliasing:?}");
    for w in &warnings {
        let logged = o.stderr.lines().filter(|line| line.contains(w.as_str())).count();
        assert_eq!(logged, 1, "{w:?} logged {logged} times:\n{}", o.stderr);
    }
    let in_log = o.stderr.lines().filter(|line| line.contains("alias laterally")).count();
    assert_eq!(in_log, 1, "{}", o.stderr);
}

/// `validate` of a job on a 600 ms record (2000 m/s) whose interval velocity is given in depth down to
/// 200 m (1800 m/s at the surface, 2200 m/s there) and whose image reaches `zmax`.
fn validate_table_job(dir: &Path, zmax: f64) -> String {
    let m = model(12, 10, 150);
    let input = dir.join("input.sgy");
    write_segy(&input, &m, &samples(&m));
    let text = format!(
        "[input]\npath = {input:?}\n\n[velocity]\nkind = \"table\"\ndepths = [0.0, 200.0]\n\
         velocities = [1800.0, 2200.0]\n\n[imaging]\ndz = 5.0\nzmax = {zmax:.1}\n\n[output]\ndir = \"out\"\n\
         inlines = [6]\n"
    );
    let job = write_job(&dir.join("job.toml"), &text);
    let o = run(&["validate", job.to_str().unwrap()]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    o.stdout
}

#[test]
fn the_held_velocity_is_said_only_when_the_image_reaches_far_below_the_model() {
    let dir = tempfile::tempdir().unwrap();
    // 40 m below the model: holding 2200 m/s instead of going on by 2 m/s per m moves reflectors < 1 m.
    let near = validate_table_job(dir.path(), 240.0);
    assert!(!near.contains("given down to 200.0 m and the image"), "{near}");
    // 300 m below: about 40 m, eight depth steps.
    let far = validate_table_job(dir.path(), 500.0);
    let expect = "warning   velocity: the velocity model is given down to 200.0 m and the image reaches 500.0 m";
    assert!(far.contains(expect), "{far}");
    assert!(far.contains("2200 m/s, is held constant"), "{far}");
}

/// Run, on the CPU, a job whose image goes deeper than its record reaches: the last sample at 596 ms
/// reaches 596 m in 2000 m/s, and the image goes on to 745 m; inline 12 and `output` (more keys of the
/// job's `[output]`) are written. Its output folder.
fn run_beyond_the_reach(dir: &Path, output: &str) -> PathBuf {
    let m = model(24, 20, 150);
    let input = dir.join("input.sgy");
    write_segy(&input, &m, &samples(&m));
    let text = format!(
        "[input]\npath = {input:?}\n\n[velocity]\nkind = \"constant\"\nvelocity = 2000.0\n\n[imaging]\ndz = 5.0\n\
         nz = 150\n\n[compute]\nbackend = \"cpu\"\n\n[output]\ndir = \"out\"\ninlines = [12]\n{output}"
    );
    let job = write_job(&dir.join("job.toml"), &text);
    let o = run(&["run", job.to_str().unwrap()]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    dir.join("out")
}

#[test]
fn the_page_lists_the_warnings_and_a_picture_notes_its_zero_depths_and_tapered_edges() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_beyond_the_reach(dir.path(), "");
    let warnings = manifest_warnings(&out);
    assert!(warnings.iter().any(|w| w.contains("alias laterally")), "{warnings:?}");
    let page = std::fs::read_to_string(out.join("index.html")).unwrap();
    let listed = page.split_once("<ul class=\"warnings\">").map(|(_, rest)| rest).expect("a list of warnings");
    for w in &warnings {
        let html = w.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;");
        assert!(listed.contains(&format!("<li>{html}</li>")), "{w:?} not on the page:\n{page}");
    }
    // The list comes before the pictures.
    assert!(page.find("<h2>Warnings</h2>").unwrap() < page.find("<h2>Pictures</h2>").unwrap(), "{page}");
    let sidecar: Value = serde_json::from_str(&std::fs::read_to_string(out.join("inline_12.json")).unwrap()).unwrap();
    let notes: Vec<&str> = sidecar["notes"].as_array().unwrap().iter().map(|n| n.as_str().unwrap()).collect();
    assert!(notes.contains(&"Zero below 596 m, the deepest depth the record reaches."), "{notes:?}");
    let taper = notes.iter().find(|n| n.starts_with("Edge taper")).expect("a note on the tapered crosslines");
    assert!(taper.contains("crosslines 1-") && !taper.contains("inlines"), "{taper}");
}

/// A product in time is zero after the two-way time the record reaches, and says so in ms: its picture's
/// note and the run's warning give that time, not the depth (596 ms in 2000 m/s, where the depth product
/// says 596 m).
#[test]
fn a_product_in_time_notes_the_time_the_record_reaches() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_beyond_the_reach(dir.path(), "time_slices = [700.0]\ndomain = [\"depth\", \"time\"]\n");
    let warnings = manifest_warnings(&out);
    let about = |stem: &str| warnings.iter().find(|w| w.starts_with(&format!("{stem} "))).cloned();
    let depth = about("inline_12").expect("a warning on inline_12");
    assert!(depth.contains("partly below 596 m, the deepest depth the record reaches"), "{depth}");
    for (stem, how) in [("inline_12_time", "partly below"), ("time_700ms", "below")] {
        let w = about(stem).unwrap_or_else(|| panic!("no warning on {stem}: {warnings:?}"));
        assert!(w.contains(&format!("{how} 596 ms, the latest two-way time the record reaches")), "{w}");
        assert!(!w.contains("below 596 m,"), "{w}");
    }
    let notes = |stem: &str| -> Vec<String> {
        let text = std::fs::read_to_string(out.join(format!("{stem}.json"))).unwrap();
        let sidecar: Value = serde_json::from_str(&text).unwrap();
        sidecar["notes"].as_array().unwrap().iter().map(|n| n.as_str().unwrap().to_string()).collect()
    };
    let section = notes("inline_12_time");
    assert!(
        section.contains(&"Zero below 596 ms, the latest two-way time the record reaches.".to_string()),
        "{section:?}"
    );
    let slice = notes("time_700ms");
    let expect = "Below 596 ms, the latest two-way time the record reaches: zero here.";
    assert!(slice.contains(&expect.to_string()), "{slice:?}");
}
