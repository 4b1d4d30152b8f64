//! SIGTERM (what Slurm sends at a time limit) and SIGINT (Ctrl-C) sent to a running `seisimage run`: the job
//! stops between steps, removes its temporary files, writes no manifest and exits 143 / 130 with a message.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::cli_common::{job_text, model, partial_files, samples, seisimage, write_job, write_segy, Running};

/// A 48 × 48 × 500 synthetic input and a job on it with `imaging` and `output` bodies.
fn job(dir: &Path, imaging: &str, output: &str) -> (PathBuf, PathBuf) {
    let m = model(48, 48, 500);
    let input = dir.join("input.sgy");
    write_segy(&input, &m, &samples(&m));
    let out = dir.join("out");
    (write_job(&dir.join("job.toml"), &job_text(&input, &out, imaging, output)), out)
}

/// Start the job with a progress line at every step, so that the test sees each stage begin.
fn start(job: &Path) -> Running {
    Running::start(seisimage().args(["--progress-interval", "0", "run"]).arg(job))
}

#[test]
fn sigterm_during_the_depth_loop_stops_the_job_with_143() {
    let dir = tempfile::tempdir().unwrap();
    // 600 depth levels in blocks of 8: several seconds of phase shift on two cores, a progress line per block.
    let (job, out) = job(dir.path(), "dz = 5.0\nnz = 600\nlevels_per_block = 8", "inlines = [24]\ncrosslines = [24]");
    let mut p = start(&job);
    p.wait_for("phase shift:", Duration::from_secs(60));
    p.signal(libc::SIGTERM);
    let (status, log) = p.finish(Duration::from_secs(30));

    assert_eq!(status.code(), Some(143), "{log}");
    assert!(log.contains("error: interrupted by SIGTERM; stopped cleanly and removed its temporary files"), "{log}");
    assert!(!log.contains("phase shift: done"), "the signal came after the depth loop:\n{log}");
    // The log says how far the run got before the signal.
    let said = log.lines().find(|l| l.contains(" WARN ") && l.contains("SIGTERM")).unwrap_or_else(|| panic!("{log}"));
    assert!(said.contains("during phase shift at ") && said.contains("/600 depth levels"), "{said}");
    assert_eq!(partial_files(&out), Vec::<String>::new());
    assert!(!out.join("manifest.json").exists());
    assert!(!out.join("inline_24.png").exists(), "no product can exist before the migration ends");
}

#[test]
fn sigterm_after_a_shallow_product_was_written_removes_it_and_the_files_made_ahead() {
    let dir = tempfile::tempdir().unwrap();
    // The depth slice at 20 m is finished after the first block of levels and written while the loop goes
    // on; the region's HDF5 file is created as the run starts. Neither may survive the signal.
    let output = "depth_slices = [20.0]\ninlines = [24]\n\n[[output.roi]]\nname = \"deep\"\ndepth = [1000.0, 2000.0]\n\
                  formats = [\"hdf5\"]";
    let (job, out) = job(dir.path(), "dz = 5.0\nnz = 600\nlevels_per_block = 8", output);
    let mut p = Running::start(seisimage().args(["--progress-interval", "0", "-vv", "run"]).arg(&job));
    p.wait_for("product depth_20m written", Duration::from_secs(60));
    p.signal(libc::SIGTERM);
    let (status, log) = p.finish(Duration::from_secs(30));

    assert_eq!(status.code(), Some(143), "{log}");
    assert!(!log.contains("phase shift: done"), "the signal came after the depth loop:\n{log}");
    assert_eq!(partial_files(&out), Vec::<String>::new());
    assert_eq!(crate::cli_common::names(&out), Vec::<String>::new(), "{log}");
}

#[test]
fn sigint_while_products_are_written_leaves_no_temporary_file_and_no_manifest() {
    let dir = tempfile::tempdir().unwrap();
    // A short migration, then 48 sections written as PNG, SEG-Y and HDF5: seconds of writing.
    let lines: Vec<String> = (1..=24).map(|i| i.to_string()).collect();
    let output = format!("inlines = [{0}]\ncrosslines = [{0}]\nslice_formats = [\"segy\", \"hdf5\"]", lines.join(", "));
    let (job, out) = job(dir.path(), "dz = 10.0\nnz = 40", &output);
    let mut p = start(&job);
    p.wait_for("writing:", Duration::from_secs(60));
    p.signal(libc::SIGINT);
    let (status, log) = p.finish(Duration::from_secs(30));

    assert_eq!(status.code(), Some(130), "{log}");
    assert!(log.contains("error: interrupted by SIGINT"), "{log}");
    assert_eq!(partial_files(&out), Vec::<String>::new());
    assert!(!out.join("manifest.json").exists());
    let pngs = crate::cli_common::names(&out).iter().filter(|n| n.ends_with(".png")).count();
    assert!(pngs < 48, "every product was written: the signal came too late to test anything\n{log}");
}
