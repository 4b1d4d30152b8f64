//! SIGTERM (what Slurm sends at a time limit), SIGINT (Ctrl-C), SIGHUP (a closed terminal or ssh connection)
//! and SIGQUIT sent to a running `seisimage run`: the job stops between steps, removes its temporary files
//! and its lock, writes no manifest and exits 128 + the signal with a message. `convert` and `plot` stop the
//! same way, and never put a result under its name once signalled.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::cli_common::{job_text, model, names, partial_files, samples, seisimage, write_job, write_segy, Running};

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

/// SIGHUP and SIGQUIT stop a run as SIGTERM does: exit 129 / 131 with a message, no temporary file, no
/// manifest, no lock. Before, either ended the process on the spot (no exit code, a core for SIGQUIT),
/// leaving its debris and the lock.
#[test]
fn sighup_and_sigquit_stop_a_run_cleanly() {
    for (signal, name, code) in [(libc::SIGHUP, "SIGHUP", 129), (libc::SIGQUIT, "SIGQUIT", 131)] {
        let dir = tempfile::tempdir().unwrap();
        let (job, out) = job(dir.path(), "dz = 5.0\nnz = 600\nlevels_per_block = 8", "inlines = [24]");
        let mut p = start(&job);
        p.wait_for("phase shift:", Duration::from_secs(60));
        p.signal(signal);
        let (status, log) = p.finish(Duration::from_secs(30));

        assert_eq!(status.code(), Some(code), "{name}: {log}");
        let said = format!("error: interrupted by {name}; stopped cleanly and removed its temporary files");
        assert!(log.contains(&said), "{name}: {log}");
        assert!(!log.contains("phase shift: done"), "{name} came after the depth loop:\n{log}");
        assert_eq!(names(&out), Vec::<String>::new(), "{name}: no lock, temporary file or manifest");
    }
}

/// Values for a volume of `n` samples that cost nothing to make (the synthetic model's events would take
/// longer than the commands here).
fn ramp(n: usize) -> Vec<f32> {
    (0..n).map(|i| ((i % 997) as f32 - 498.0) / 100.0).collect()
}

/// `convert` of a cut of an HDF5 volume to compressed HDF5, sent SIGTERM once the first of its two blocks
/// is written: exit 143, no output file and no temporary file. Before, the signal was never looked at
/// after the last block began (the HDF5 reader does not look at it), and the command exited 0 with a
/// complete file.
#[test]
fn sigterm_stops_convert_to_hdf5_and_leaves_no_file() {
    use seisimage::io::{write_volume, FileFormat, WriteOptions};
    let dir = tempfile::tempdir().unwrap();
    let m = model(320, 200, 500);
    let input = dir.path().join("input.h5");
    write_volume(FileFormat::Hdf5, &input, m.geometry(), &ramp(m.geometry().n_values()), &WriteOptions::default())
        .unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let output = out.join("cut.h5");
    // 300 inlines of 200 × 500 values: two blocks of 16 Mi values, compressed.
    let mut p =
        Running::start(seisimage().args(["--progress-interval", "0", "convert"]).args([&input, &output]).args([
            "--iline",
            "1:300",
            "--compress",
            "9",
        ]));
    p.wait_for("converting:", Duration::from_secs(60));
    p.signal(libc::SIGTERM);
    let (status, log) = p.finish(Duration::from_secs(60));

    assert_eq!(status.code(), Some(143), "{log}");
    assert!(log.contains("error: interrupted by SIGTERM"), "{log}");
    assert_eq!(names(&out), Vec::<String>::new(), "{log}");
}

/// `plot` of a time slice of an HDF5 volume stored a trace per chunk (40 000 chunks to read), sent SIGINT
/// as it starts reading: exit 130, no picture and no sidecar. Before, the read and the drawing went on
/// and the picture was written with exit 0.
#[test]
fn sigint_stops_plot_of_a_large_hdf5_and_leaves_no_picture() {
    use seisimage::io::{hdf5::Hdf5WriteOptions, write_volume, FileFormat, WriteOptions};
    let dir = tempfile::tempdir().unwrap();
    let m = model(200, 200, 500);
    let input = dir.path().join("input.h5");
    let options = WriteOptions {
        hdf5: Hdf5WriteOptions { chunk: Some([1, 1, 500]), ..Default::default() },
        ..Default::default()
    };
    write_volume(FileFormat::Hdf5, &input, m.geometry(), &ramp(m.geometry().n_values()), &options).unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let picture = out.join("slice.png");
    let mut p =
        Running::start(seisimage().args(["-v", "plot"]).arg(&input).args(["--time", "1000", "-o"]).arg(&picture));
    p.wait_for("reading", Duration::from_secs(60));
    p.signal(libc::SIGINT);
    let (status, log) = p.finish(Duration::from_secs(60));

    assert_eq!(status.code(), Some(130), "{log}");
    assert!(log.contains("error: interrupted by SIGINT"), "{log}");
    assert_eq!(names(&out), Vec::<String>::new(), "{log}");
}
