//! An output folder that cannot take the products, and a bad input: the run fails with a clear message,
//! before the migration where that can be known up front, and never leaves a partial product or a manifest.

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::cli_common::{
    job_text, model, names, partial_files, run, run_command, samples, seisimage, write_job, write_segy, Running,
};
use seisimage::run::check_free_space;

/// A 48 × 48 × 500 input and a job whose migration alone takes seconds (600 depth levels), with the
/// output folder `out` and `extra` added to `[output]`.
fn slow_job(dir: &Path, out: &Path, extra: &str) -> PathBuf {
    let m = model(48, 48, 500);
    let input = dir.join("input.sgy");
    write_segy(&input, &m, &samples(&m));
    let output = format!("inlines = [24]\n{extra}");
    write_job(&dir.join("job.toml"), &job_text(&input, out, "dz = 5.0\nnz = 600", &output))
}

/// The failure came before any work: the run never announced the migration, and ended in far less time
/// than the migration takes (over five seconds on two cores).
fn assert_failed_up_front(stderr: &str, elapsed: Duration) {
    assert!(!stderr.contains("migrating"), "the migration had started:\n{stderr}");
    assert!(elapsed < Duration::from_secs(3), "took {elapsed:?}:\n{stderr}");
}

#[test]
fn an_output_folder_without_write_permission_is_refused_before_the_migration() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o555)).unwrap();
    let job = slow_job(dir.path(), &out, "");

    let mut cmd = seisimage();
    cmd.arg("run").arg(&job);
    // Root writes through any permission bits, so as root the job runs as the unprivileged user `nobody`
    // (uid 65534), for whom the folder is read-only, as it is for any user on a cluster. That user must be
    // able to reach the binary and the test's files (made readable above).
    if unsafe { libc::geteuid() } == 0 {
        cmd.uid(65534).gid(65534);
    }
    let t = Instant::now();
    let o = run_command(&mut cmd);
    assert_eq!(o.code(), Some(2), "{o:?}");
    // output.dir is on line 16 of the job file, its value at column 7
    let expect =
        format!("job.toml at line 16, column 7: output.dir: cannot write in {}: Permission denied", out.display());
    assert!(o.stderr.contains(&expect), "{o:?}");
    assert_failed_up_front(&o.stderr, t.elapsed());
    assert!(names(&out).is_empty());
}

#[test]
fn an_output_path_that_is_a_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("results");
    std::fs::write(&file, b"not a folder").unwrap();
    for (out, why) in [(file.clone(), "it is a file, not a folder"), (file.join("run1"), "Not a directory")] {
        let job = slow_job(dir.path(), &out, "");
        let t = Instant::now();
        let o = run(&["run", job.to_str().unwrap()]);
        assert_eq!(o.code(), Some(2), "{o:?}");
        assert!(o.stderr.contains("output.dir: cannot write in") && o.stderr.contains(why), "{o:?}");
        assert_failed_up_front(&o.stderr, t.elapsed());
    }
    assert_eq!(std::fs::read(&file).unwrap(), b"not a folder");
}

#[test]
fn missing_output_folders_are_created() {
    let dir = tempfile::tempdir().unwrap();
    let m = model(16, 12, 100);
    let input = dir.path().join("input.sgy");
    write_segy(&input, &m, &samples(&m));
    let out = dir.path().join("a/b/c");
    let job = write_job(&dir.path().join("job.toml"), &job_text(&input, &out, "nz = 20", "depth_slices = [100.0]"));
    let o = run(&["run", job.to_str().unwrap()]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    assert_eq!(names(&out), ["depth_100m.json", "depth_100m.png", "index.html", "manifest.json"]);
    assert!(o.stderr.contains("1 product,") && !o.stderr.contains("1 products"), "{o:?}");
}

/// The free-space rule with the free-space figure given, as the run gets it from the file system.
#[test]
fn the_free_space_check_needs_room_for_the_products_and_the_reserve() {
    let dir = Path::new("out");
    assert!(check_free_space(dir, 5_000_000, 5_000_000, 0).is_ok());
    assert!(check_free_space(dir, 5_000_000, 3_000_000, 2_000_000).is_ok());
    let e = check_free_space(dir, 4_999_999, 5_000_000, 0).unwrap_err();
    assert_eq!(e.exit_code(), 1, "a full disk is not a mistake in the job");
    assert_eq!(e.to_string(), "out: the file system has 5.00 MB free, the products need about 5.00 MB");
    let e = check_free_space(dir, 5_000_000, 3_000_000, 2_500_000_000).unwrap_err().to_string();
    assert!(e.ends_with("the products need about 3.00 MB, and output.keep_free_gb asks to keep 2.50 GB free"), "{e}");
    assert!(check_free_space(dir, u64::MAX, u64::MAX, u64::MAX).is_ok(), "no overflow");
}

#[test]
fn too_little_free_space_is_refused_before_the_migration() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    // No file system has an exabyte free: the check must refuse, as it would on a nearly full disk.
    let job = slow_job(dir.path(), &out, "keep_free_gb = 1e9");
    let t = Instant::now();
    let o = run(&["run", job.to_str().unwrap()]);
    assert_eq!(o.code(), Some(1), "{o:?}");
    assert!(o.stderr.contains("output.keep_free_gb asks to keep 1000000000.00 GB free"), "{o:?}");
    assert_failed_up_front(&o.stderr, t.elapsed());
    assert!(names(&out).is_empty());
}

/// The disk fills while products are written: every file the run began is removed, none is left under its
/// final name half-written, and there is no manifest. The limit on file size (RLIMIT_FSIZE, with SIGXFSZ
/// ignored so that a write past it fails with EFBIG) stands in for a full disk: the write fails midway just
/// the same, also for root.
#[test]
fn a_disk_that_fills_while_writing_leaves_no_partial_product_and_no_manifest() {
    let dir = tempfile::tempdir().unwrap();
    let m = model(24, 20, 200);
    let input = dir.path().join("input.sgy");
    write_segy(&input, &m, &samples(&m));
    let out = dir.path().join("out");
    let job = write_job(
        &dir.path().join("job.toml"),
        &job_text(&input, &out, "nz = 60", "inlines = [12]\ncrosslines = [10]\nslice_formats = [\"segy\", \"hdf5\"]"),
    );
    const LIMIT: libc::rlim_t = 24_000; // bytes: more than the NPY/SEG-Y of a slice, less than its PNG
    let o = run_command(with_file_size_limit(seisimage().arg("run").arg(&job), LIMIT));
    assert_eq!(o.code(), Some(1), "{o:?}");
    assert!(o.stderr.contains("File too large"), "{o:?}");
    assert_eq!(partial_files(&out), Vec::<String>::new());
    assert!(!out.join("manifest.json").exists());
    for name in names(&out) {
        let len = std::fs::metadata(out.join(&name)).unwrap().len();
        assert!(len < LIMIT, "{name} ({len} bytes) reached the limit and cannot be complete");
    }
}

/// `cmd`, whose files may grow to `limit` bytes at most (RLIMIT_FSIZE), a write past it failing with EFBIG
/// (SIGXFSZ ignored) as it would on a full disk, for root too.
fn with_file_size_limit(cmd: &mut Command, limit: libc::rlim_t) -> &mut Command {
    // SAFETY: signal(2) and setrlimit(2) are async-signal-safe, as the child side of fork requires.
    unsafe {
        cmd.pre_exec(move || {
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            let rlimit = libc::rlimit { rlim_cur: limit, rlim_max: limit };
            match libc::setrlimit(libc::RLIMIT_FSIZE, &rlimit) {
                0 => Ok(()),
                _ => Err(std::io::Error::last_os_error()),
            }
        })
    }
}

/// A disk without room even for the folder's lock: the run fails as a run (exit 1, not 2: the job is
/// right), naming the lock, and leaves no lock, so the next run with room runs. An empty lock, as a run
/// could leave one before, is taken over with a warning. Before, the lock stayed empty and refused every
/// later run, and the first failure was called a mistake in the job.
#[test]
fn a_lock_that_cannot_be_written_is_not_left_behind() {
    let dir = tempfile::tempdir().unwrap();
    let m = model(12, 12, 100);
    let input = dir.path().join("input.sgy");
    write_segy(&input, &m, &samples(&m));
    let out = dir.path().join("out");
    let job = write_job(&dir.path().join("job.toml"), &job_text(&input, &out, "nz = 20", "inlines = [6]"));

    let o = run_command(with_file_size_limit(seisimage().arg("run").arg(&job), 0));
    assert_eq!(o.code(), Some(1), "{o:?}");
    assert!(o.stderr.contains(".seisimage.lock") && o.stderr.contains("File too large"), "{o:?}");
    assert_eq!(names(&out), Vec::<String>::new(), "no lock and no temporary file are left");
    let o = run(&["run", job.to_str().unwrap()]);
    assert_eq!(o.code(), Some(0), "{o:?}");

    std::fs::write(out.join(".seisimage.lock"), b"").unwrap();
    let o = run(&["run", job.to_str().unwrap()]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    assert!(o.stderr.contains("took over a lock of 0 bytes"), "{o:?}");
    assert!(!out.join(".seisimage.lock").exists());
}

/// The output folder renamed and replaced by a link while the run migrates: nothing is written into the
/// link's target; the run, which holds the folder it locked, fails (exit 1) naming the folder, and its
/// products are not put in place anywhere.
#[test]
fn an_output_folder_swapped_for_a_link_during_the_run_gets_nothing_written_through_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let job = slow_job(dir.path(), &out, "crosslines = [24]\nindex = true");
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    let mut p = Running::start(seisimage().args(["--progress-interval", "0", "run"]).arg(&job));
    // The folder is locked and held before the migration starts; the swap is made while the run is stopped,
    // at its first step of the depth loop, long before its products are written.
    p.wait_for("phase shift:", Duration::from_secs(60));
    p.signal(libc::SIGSTOP);
    let moved = dir.path().join("moved");
    std::fs::rename(&out, &moved).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &out).unwrap();
    p.signal(libc::SIGCONT);
    let (status, log) = p.finish(Duration::from_secs(120));

    assert_eq!(names(&elsewhere), Vec::<String>::new(), "{log}");
    assert_eq!(status.code(), Some(1), "{log}");
    assert!(log.contains("the output folder was moved, or replaced by something else"), "{log}");
    assert!(log.contains(&out.display().to_string()), "{log}");
    assert_eq!(names(&moved), Vec::<String>::new(), "no product, no manifest, no temporary file: {log}");
}

#[test]
fn a_truncated_input_is_refused_naming_the_file_and_the_byte() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let job = slow_job(dir.path(), &out, "");
    let input = dir.path().join("input.sgy");
    let len = std::fs::metadata(&input).unwrap().len();
    std::fs::OpenOptions::new().write(true).open(&input).unwrap().set_len(len - 1000).unwrap();

    let o = run(&["run", job.to_str().unwrap()]);
    assert_eq!(o.code(), Some(1), "{o:?}");
    // 3600 header bytes, then traces of 240 + 500 · 4 bytes: the last (2304th) loses 1000 of its 2240 bytes.
    let expect =
        format!("{} at byte {}: the file ends 1240 bytes into trace 2304", input.display(), 3600 + 2303 * 2240);
    assert!(o.stderr.contains(&expect), "{o:?}");
    assert!(!out.join("manifest.json").exists());
}
