//! Requests larger than a machine: open files, threads, pixels, samples and sizes no machine holds.

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::cli_common::{job_text, model, names, run, run_command, samples, seisimage, write_job, write_segy};

use super::{path_str, small_job};

/// More products than the process may have files open: the run may not keep them all open at once.
#[test]
fn more_products_than_open_files_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let m = model(300, 3, 40);
    let input = dir.path().join("input.sgy");
    write_segy(&input, &m, &samples(&m));
    let out = dir.path().join("out");
    let inlines: Vec<String> = (1..=300).map(|il| il.to_string()).collect();
    let output = format!("inlines = [{}]\npng = false\nslice_formats = [\"npy\"]", inlines.join(", "));
    let job = write_job(&dir.path().join("job.toml"), &job_text(&input, &out, "nz = 10", &output));
    let mut cmd = seisimage();
    cmd.args(["-v", "run"]).arg(&job);
    unsafe {
        cmd.pre_exec(|| {
            let limit = libc::rlimit { rlim_cur: 128, rlim_max: 128 };
            match libc::setrlimit(libc::RLIMIT_NOFILE, &limit) {
                0 => Ok(()),
                _ => Err(std::io::Error::last_os_error()),
            }
        });
    }
    let o = run_command(&mut cmd);
    assert_eq!(o.code(), Some(0), "{o:?}");
    assert!(o.stderr.contains("the files of 268 of 300 products are created when their values come"), "{o:?}");
    assert_eq!(names(&out).len(), 302, "300 products, the page and the manifest");
}

#[test]
fn requests_beyond_any_machine_are_refused_by_validate() {
    let dir = tempfile::tempdir().unwrap();
    let (job, _, _) = small_job(dir.path(), "", "inlines = [8]");
    let job = path_str(&job);
    let title = format!("output.render.title=\"{}\"", "T".repeat(100_000));
    let long_roi = format!("output.roi=[{{name = \"{}\"}}]", "r".repeat(300));
    for (set, key) in [
        ("compute.threads=1000000", "compute.threads"),
        (title.as_str(), "output.render.title"),
        (long_roi.as_str(), "output.roi.0.name"),
        ("output.roi=[{name = \"a\", formats = [\"hdf5\", \"npy\", \"hdf5\"]}]", "output.roi.0.formats"),
        ("output.slice_formats=[\"npy\", \"npy\"]", "output.slice_formats"),
        ("input.bin_size=[10.0, 10.0, 10.0]", "input.bin_size"),
        ("output.roi=[{name = \"a\", iline = [2, 4, 6]}]", "output.roi.0.iline"),
    ] {
        let t = Instant::now();
        let o = run(&["validate", job, "--set", set]);
        assert_eq!(o.code(), Some(2), "{key}: {o:?}");
        assert!(o.stderr.contains(key), "{key}: {o:?}");
        assert!(o.stderr.len() < 2000, "{key}: a {}-byte error", o.stderr.len());
        assert!(t.elapsed() < Duration::from_secs(10), "{key}: took {:?}", t.elapsed());
    }
    // bin_size with three numbers, in the file: placed at its line
    let text = std::fs::read_to_string(job).unwrap().replace("[input]\n", "[input]\nbin_size = [10.0, 10.0, 10.0]\n");
    let file_job = write_job(&dir.path().join("bins.toml"), &text);
    let o = run(&["validate", path_str(&file_job)]);
    assert_eq!(o.code(), Some(2), "{o:?}");
    assert!(o.stderr.contains("bins.toml at line 2"), "{o:?}");
}

/// Read the width and height from a PNG's IHDR.
fn png_size(path: &Path) -> (u64, u64) {
    let bytes = std::fs::read(path).unwrap();
    let be = |at: usize| u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap()) as u64;
    (be(16), be(20))
}

#[test]
fn pictures_stay_within_max_pixels_whatever_the_exaggeration() {
    let dir = tempfile::tempdir().unwrap();
    let (job, _, out) = small_job(
        dir.path(),
        "",
        "inlines = [8]\ndepth_slices = [50.0]\n[output.render]\nvertical_exaggeration = 1e9\nmax_pixels = 1000000",
    );
    let o = run(&["run", path_str(&job)]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    for png in ["inline_8.png", "depth_50m.png"] {
        let (w, h) = png_size(&out.join(png));
        assert!(w * h <= 1_000_000, "{png}: {w} × {h} pixels");
    }
}

#[test]
fn sizes_no_machine_holds_are_errors_not_aborts() {
    let dir = tempfile::tempdir().unwrap();
    // One inline of 1.6 GB in 1 GB of address space: an error naming the allocation, no temporary file.
    // With the threads of this machine, and as on a 128-core host: 128 threads, and as many malloc arenas
    // as glibc allows there (eight per core), 64 MiB of addresses reserved each.
    let out = dir.path().join("synth");
    std::fs::create_dir(&out).unwrap();
    for threads in [None, Some("128")] {
        let mut cmd = seisimage();
        cmd.args(["synth", path_str(&out.join("big.sgy")), "--size", "2x20000x20000"]);
        if let Some(threads) = threads {
            cmd.env("RAYON_NUM_THREADS", threads).env("GLIBC_TUNABLES", "glibc.malloc.arena_max=1024");
        }
        unsafe {
            cmd.pre_exec(|| {
                let limit = libc::rlimit { rlim_cur: 1 << 30, rlim_max: 1 << 30 };
                match libc::setrlimit(libc::RLIMIT_AS, &limit) {
                    0 => Ok(()),
                    _ => Err(std::io::Error::last_os_error()),
                }
            });
        }
        let o = run_command(&mut cmd);
        assert_eq!(o.code(), Some(1), "{threads:?} threads: {o:?}");
        assert!(o.stderr.contains("cannot allocate 1.60 GB"), "{threads:?} threads: {o:?}");
        assert_eq!(names(&out), Vec::<String>::new());
    }
    // 10^15 samples (4 PB): refused as the command line is read
    let o = run(&["synth", path_str(&out.join("huge.sgy")), "--size", "1000000x1000000x1000"]);
    assert_eq!(o.code(), Some(2), "{o:?}");
    assert!(o.stderr.contains("--size"), "{o:?}");
    assert_eq!(names(&out), Vec::<String>::new());
}
