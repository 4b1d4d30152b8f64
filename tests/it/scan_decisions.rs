//! Scans that decide: each member of a velocity scan named by the digits its value needs, panels that keep
//! their line numbers, and a focusing measure that picks the best member.

use std::path::Path;

use crate::cli_common::{names, run, samples, write_job, write_segy};
use crate::velocity_scan::scan_job;

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

/// A scan of five factors of the right velocity on a point diffractor, imaged whole as a region and on an
/// inline: the focus measure of each member is in the manifest and on the page, and the member of scale 1
/// is marked best.
#[test]
fn the_member_of_the_right_velocity_is_marked_best_focused() {
    use seisimage::synth::{Event, Medium, Model, ModelSpec};
    let dir = tempfile::tempdir().unwrap();
    let m = Model::new(ModelSpec {
        ilines: 48,
        xlines: 48,
        samples: 250,
        dt_ms: 4.0,
        bin_m: [12.5, 12.5],
        medium: Medium::Constant { velocity: 2000.0 },
        peak_hz: 25.0,
        events: vec![Event::Diffractor { x: 293.75, y: 293.75, z: 400.0, amplitude: 1.0 }],
        noise: None,
    })
    .unwrap();
    let input = dir.path().join("input.sgy");
    write_segy(&input, &m, &samples(&m));
    let text = format!(
        "[input]\npath = {input:?}\n\n[velocity]\nkind = \"constant\"\nvelocity = 2000.0\n\
         scale = [0.9, 0.95, 1.0, 1.05, 1.1]\n\n[imaging]\ndz = 4.0\nnz = 180\n\n[compute]\nbackend = \"cpu\"\n\n\
         [output]\ndir = \"out\"\ninlines = [24]\n\n[[output.roi]]\nname = \"all\"\niline = [1, 48]\nxline = [1, 48]\n\
         depth = [0.0, 716.0]\nformats = [\"npy\"]\n"
    );
    let job = write_job(&dir.path().join("job.toml"), &text);
    let o = run(&["run", job.to_str().unwrap()]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    let out = dir.path().join("out");
    let manifest = json(&out.join("manifest.json"));
    let focus = &manifest["scan_focus"];
    assert_eq!(focus["measure"], "trace-energy varimax", "{manifest}");
    let members = focus["members"].as_array().unwrap();
    let factors: Vec<f64> = members.iter().map(|m| m["scan"]["scale"].as_f64().unwrap()).collect();
    assert_eq!(factors, [0.9, 0.95, 1.0, 1.05, 1.1]);
    let norms: Vec<f64> = members.iter().map(|m| m["varimax"].as_f64().unwrap()).collect();
    let best: Vec<f64> =
        members.iter().filter(|m| m["best"] == true).map(|m| m["scan"]["scale"].as_f64().unwrap()).collect();
    assert_eq!(best, [1.0], "{norms:?}");
    // Focusing falls off on both sides of the right velocity, and every member is measured on as many
    // traces.
    assert!(norms[0] < norms[1] && norms[1] < norms[2] && norms[2] > norms[3] && norms[3] > norms[4], "{norms:?}");
    assert!(members.iter().all(|m| m["traces"] == members[0]["traces"] && m["traces"].as_u64() > Some(0)));
    let page = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(page.contains("best focused</dt><dd>scale 1</dd>"), "{page}");
}

/// The demo's RMS velocities scanned in five factors: the member of scale 1 is marked best focused.
#[test]
fn a_scan_of_the_demo_marks_its_own_velocity_best() {
    let dir = tempfile::tempdir().unwrap();
    let job = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/demo-rms.toml");
    let out = format!("output.dir={:?}", dir.path().join("out"));
    let scan = "velocity.scale=[0.9, 0.95, 1.0, 1.05, 1.1]";
    let cpu = "compute.backend=\"cpu\"";
    let o = run(&["run", job.to_str().unwrap(), "--set", &out, "--set", scan, "--set", cpu]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    let manifest = json(&dir.path().join("out/manifest.json"));
    let members = manifest["scan_focus"]["members"].as_array().unwrap_or_else(|| panic!("{manifest}"));
    assert_eq!(members.len(), 5);
    let best: Vec<&serde_json::Value> = members.iter().filter(|m| m["best"] == true).collect();
    assert_eq!(best.len(), 1, "{members:?}");
    assert_eq!(best[0]["scan"]["scale"], 1.0, "{members:?}");
}
