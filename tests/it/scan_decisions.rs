//! Scans that decide: each member of a velocity scan named by the digits its value needs, panels that keep
//! their line numbers, and a focusing measure that picks the best member.

use std::path::{Path, PathBuf};

use crate::cli_common::{model, names, run, samples, write_job, write_segy};

/// A 24 × 20 × 150 input (a diffractor at 150 m and a reflector at 300 m in 2000 m/s) and a job scanning it
/// with `velocity` (a `[velocity]` body), writing inline 12 and crossline 10 as pictures.
fn scan_job(dir: &Path, velocity: &str) -> PathBuf {
    let m = model(24, 20, 150);
    let input = dir.join("input.sgy");
    write_segy(&input, &m, &samples(&m));
    let text = format!(
        "[input]\npath = {input:?}\n\n[velocity]\n{velocity}\n\n[imaging]\ndz = 5.0\nnz = 90\n\n\
         [compute]\nbackend = \"cpu\"\n\n[output]\ndir = \"out\"\ninlines = [12]\ncrosslines = [10]\n"
    );
    write_job(&dir.join("job.toml"), &text)
}

#[test]
fn members_of_close_factors_keep_their_digits_in_their_names() {
    let dir = tempfile::tempdir().unwrap();
    let job = scan_job(dir.path(), "kind = \"constant\"\nvelocity = 2000.0\nscale = [0.975, 0.98, 1.0]");
    let o = run(&["validate", job.to_str().unwrap()]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    for member in ["products *_v097p5", "products *_v098", "products *_v100"] {
        assert!(o.stdout.contains(member), "{member}: {}", o.stdout);
    }
    let o = run(&["run", job.to_str().unwrap()]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    let files = names(&dir.path().join("out"));
    for f in ["inline_12_v097p5.png", "inline_12_v098.png", "inline_12_v100.png", "inline_12_panel.png"] {
        assert!(files.contains(&f.to_string()), "{f} missing: {files:?}");
    }
    // A second run cleaning the folder recognises the members' names as its own.
    let o = run(&["run", job.to_str().unwrap(), "--set", "output.existing=\"clean\"", "--set", "velocity.scale=[1.0]"]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    let files = names(&dir.path().join("out"));
    assert!(!files.iter().any(|f| f.contains("_v097p5")), "{files:?}");
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))).unwrap()
}

#[test]
fn each_panel_of_a_scan_keeps_its_line_numbers_and_names_its_member() {
    let dir = tempfile::tempdir().unwrap();
    let job = scan_job(dir.path(), "kind = \"constant\"\nvelocity = 2000.0\nscale = [0.9, 0.975, 1.1]");
    let o = run(&["run", job.to_str().unwrap()]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    let out = dir.path().join("out");
    for (stem, line_axis) in [("inline_12", "xline"), ("xline_10", "iline")] {
        let panel = json(&out.join(format!("{stem}_panel.json")));
        let panels = panel["panels"].as_array().unwrap_or_else(|| panic!("no panels: {panel}"));
        let titles: Vec<&str> = panels.iter().map(|p| p["title"].as_str().unwrap()).collect();
        assert_eq!(titles, ["scale 0.9", "scale 0.975", "scale 1.1"], "{panel}");
        let mut end = 0;
        for (p, member) in panels.iter().zip(["_v090", "_v097p5", "_v110"]) {
            // Each panel's axis is its member's own picture's: the same lines, in the same order.
            let own = json(&out.join(format!("{stem}{member}.json")));
            for field in ["name", "first", "last", "step", "n"] {
                assert_eq!(p["cols"][field], own["cols"][field], "{stem}{member}: {field}");
            }
            assert_eq!(p["cols"]["name"], line_axis);
            // Side by side, left to right, inside the data area of the picture.
            let first = p["cols"]["pixel_first"].as_u64().unwrap();
            let count = p["cols"]["pixel_count"].as_u64().unwrap();
            assert!(first > end && count > 0, "{stem}{member}: panel at {first}, after {end}");
            end = first + count;
        }
        let data_end = panel["cols"]["pixel_first"].as_u64().unwrap() + panel["cols"]["pixel_count"].as_u64().unwrap();
        assert!(end <= data_end, "{stem}: panels end at {end}, the data at {data_end}");
    }
}
