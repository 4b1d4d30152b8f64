//! Work bounded by what the machine gives, and failures that are errors rather than aborts or panics:
//! requests and files that ask for more memory or threads than a process may have, run under a lowered
//! address-space limit (`RLIMIT_AS`, set in the child), must end with an error naming what did not fit
//! (exit 1 or 2), never with an abort (134) or a panic (101).

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::cli_common::{model, run, run_command, samples, seisimage, write_segy, Outcome};

/// A small synthetic SEG-Y in `dir`.
fn input(dir: &Path) -> PathBuf {
    let m = model(16, 12, 100);
    let path = dir.join("input.sgy");
    write_segy(&path, &m, &samples(&m));
    path
}

/// Run `cmd` with at most `bytes` of address space.
fn run_within_address_space(cmd: &mut Command, bytes: u64) -> Outcome {
    // SAFETY: only setrlimit, which is async-signal-safe, runs between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            let limit = libc::rlimit { rlim_cur: bytes, rlim_max: bytes };
            match libc::setrlimit(libc::RLIMIT_AS, &limit) {
                0 => Ok(()),
                _ => Err(std::io::Error::last_os_error()),
            }
        });
    }
    run_command(cmd)
}

/// An attribute window far longer than the trace (1e20 ms) takes the whole trace; it made the slice's
/// index wrap around and `plot` panic.
#[test]
fn an_attribute_window_longer_than_the_trace_takes_the_whole_trace() {
    let dir = tempfile::tempdir().unwrap();
    let input = input(dir.path());
    for window in ["1e20", "inf", "200"] {
        let png = dir.path().join(format!("slice-{window}.png"));
        let o = run(&[
            "plot",
            input.to_str().unwrap(),
            "--time",
            "200",
            "--attribute",
            "envelope",
            "--attribute-window",
            window,
            "-o",
            png.to_str().unwrap(),
        ]);
        assert_eq!(o.code(), Some(0), "--attribute-window {window}: {o:?}");
        assert!(std::fs::metadata(&png).unwrap().len() > 0, "{window}");
    }
}

/// Threads that cannot be started (`ulimit -u`: the kernel refuses a user more processes and threads than
/// its limit) are an error that names the limit, not a panic of the thread pool. The limit does not hold
/// for root, so as root the command runs as nobody (uid 65534).
#[test]
fn threads_that_cannot_be_started_are_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let input = input(dir.path());
    std::fs::set_permissions(dir.path(), std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let as_nobody = rustix::process::geteuid().is_root();
    let mut cmd = seisimage();
    cmd.args(["info", input.to_str().unwrap()]).env("RAYON_NUM_THREADS", "64");
    // SAFETY: only setrlimit, setgroups, setgid and setuid, which are async-signal-safe, run between fork
    // and exec.
    unsafe {
        cmd.pre_exec(move || {
            let one = libc::rlimit { rlim_cur: 1, rlim_max: 1 };
            let refused = libc::setrlimit(libc::RLIMIT_NPROC, &one) != 0
                || (as_nobody
                    && (libc::setgroups(0, std::ptr::null()) != 0
                        || libc::setgid(65534) != 0
                        || libc::setuid(65534) != 0));
            match refused {
                true => Err(std::io::Error::last_os_error()),
                false => Ok(()),
            }
        });
    }
    let o = run_command(&mut cmd);
    assert_eq!(o.code(), Some(1), "{o:?}");
    assert!(o.stderr.contains("cannot start 64 threads") && o.stderr.contains("ulimit -u"), "{o:?}");
}

/// `RAYON_NUM_THREADS` is bounded like `compute.threads` (1024): a hundred thousand threads did not start
/// and the pool panicked.
#[test]
fn rayon_num_threads_is_bounded_like_compute_threads() {
    let dir = tempfile::tempdir().unwrap();
    let input = input(dir.path());
    let mut cmd = seisimage();
    cmd.args(["info", input.to_str().unwrap()]).env("RAYON_NUM_THREADS", "100000").env("MALLOC_ARENA_MAX", "2");
    let o = run_within_address_space(&mut cmd, 8 << 30);
    assert_eq!(o.code(), Some(0), "{o:?}");
    assert!(o.stdout.contains("traces       192 in the file"), "{o:?}");
}

/// The memory a plan is checked against is what this process may have: under `ulimit -v` (here 1 GiB),
/// no more than the limit, where the machine's available memory alone said a plan "fits" that then
/// aborted.
#[test]
fn the_memory_check_counts_the_address_space_limit() {
    let dir = tempfile::tempdir().unwrap();
    let input = input(dir.path());
    let job = dir.path().join("job.toml");
    let out = dir.path().join("out");
    std::fs::write(&job, crate::cli_common::job_text(&input, &out, "dz = 10.0", "inlines = [8]")).unwrap();
    let mut cmd = seisimage();
    cmd.args(["validate", job.to_str().unwrap()]).env("MALLOC_ARENA_MAX", "2");
    let o = run_within_address_space(&mut cmd, 1 << 30);
    assert_eq!(o.code(), Some(0), "{o:?}");
    let have =
        o.stdout.split("this machine has ").nth(1).and_then(|s| s.split(" available").next()).expect("memory line");
    let (value, unit) = have.split_once(' ').unwrap();
    let bytes = value.parse::<f64>().unwrap() * if unit == "GB" { 1e9 } else { 1e6 };
    assert!(bytes <= (1u64 << 30) as f64, "{have}: {o:?}");
}
