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
