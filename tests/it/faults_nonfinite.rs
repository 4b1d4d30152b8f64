//! NaN and infinite input samples: by default set to zero, counted in the log and the manifest, and kept out
//! of the image (one of them left in would turn the whole image into NaN through the FFTs); with
//! `input.nonfinite = "refuse"` the run stops at the first one, naming its trace and sample.

use std::path::{Path, PathBuf};

use crate::cli_common::{job_text, model, run, samples, write_job, write_segy};

/// A 16 × 12 × 100 input (inlines and crosslines numbered from 1, 4 ms) with NaN and infinite samples at
/// known places, and a job writing one inline and one depth slice as NPY.
fn setup(dir: &Path) -> (PathBuf, PathBuf) {
    let m = model(16, 12, 100);
    let mut data = samples(&m);
    let at = |il: usize, xl: usize, s: usize| (il * 12 + xl) * 100 + s;
    data[at(3, 5, 40)] = f32::NAN; // the first in memory order: inline 4, crossline 6, sample 41 (160 ms)
    data[at(3, 5, 41)] = f32::INFINITY;
    data[at(9, 0, 0)] = f32::NEG_INFINITY;
    data[at(15, 11, 99)] = f32::NAN;
    let input = dir.join("input.sgy");
    write_segy(&input, &m, &data);
    let out = dir.join("out");
    let output = "inlines = [4]\ndepth_slices = [100.0]\nslice_formats = [\"npy\"]";
    (write_job(&dir.join("job.toml"), &job_text(&input, &out, "dz = 10.0\nnz = 30", output)), out)
}

#[test]
fn nonfinite_samples_are_zeroed_counted_and_kept_out_of_the_image() {
    let dir = tempfile::tempdir().unwrap();
    let (job, out) = setup(dir.path());
    let o = run(&["run", job.to_str().unwrap()]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    let said = "input.nonfinite: 4 NaN, infinite or out-of-range input samples were set to zero";
    assert!(o.stderr.contains(&format!("WARN {said}")), "{o:?}");
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["stages"]["nonfinite_samples"], 4);
    assert!(manifest["warnings"].as_array().unwrap().iter().any(|w| w.as_str().unwrap().starts_with(said)));
    assert_eq!(manifest["config"]["input"]["nonfinite"], "zero");
    for product in ["inline_4.npy", "depth_100m.npy"] {
        let (shape, values) = seisimage::io::npy::read(&out.join(product)).unwrap();
        assert_eq!(values.len(), shape.iter().product::<usize>());
        assert!(values.iter().all(|v| v.is_finite()), "{product} holds non-finite values");
        assert!(values.iter().any(|v| *v != 0.0), "{product} is all zeros");
    }
}

#[test]
fn refused_nonfinite_samples_stop_the_run_at_the_first() {
    let dir = tempfile::tempdir().unwrap();
    let (job, out) = setup(dir.path());
    let o = run(&["run", job.to_str().unwrap(), "--set", "input.nonfinite=refuse"]);
    assert_eq!(o.code(), Some(1), "{o:?}");
    let expect = format!(
        "error: {}: sample 41 (160 ms) of the trace at inline 4, crossline 6 is NaN; input.nonfinite = \"refuse\"",
        dir.path().join("input.sgy").display()
    );
    assert!(o.stderr.contains(&expect), "{o:?}");
    assert!(!out.join("manifest.json").exists());
    assert_eq!(crate::cli_common::partial_files(&out), Vec::<String>::new());
}
