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

// ---------------------------------------------------------------------------------------------------------
// Requests and files that ask for more memory than the process may have (issue: aborts under `ulimit -v`)

/// The address space the runs below get, as `ulimit -v 2000000` gives.
const LIMIT: u64 = 2_048_000_000;

/// `seisimage ARGS` under [`LIMIT`], with few threads and malloc arenas so that the process's own mappings
/// stay small whatever the machine.
fn limited(args: &[&str]) -> Outcome {
    let mut cmd = seisimage();
    cmd.args(args).env("MALLOC_ARENA_MAX", "2").env("RAYON_NUM_THREADS", "2");
    run_within_address_space(&mut cmd, LIMIT)
}

/// An outcome that is an answer (done, failed, or a mistake in the job), not an abort, a panic or a kill.
fn assert_answered(o: &Outcome, what: &str) {
    assert!(matches!(o.code(), Some(0..=2)), "{what}: {o:?}");
    assert!(!o.stderr.contains("panicked") && !o.stderr.contains("memory allocation of"), "{what}: {o:?}");
}

/// A job on `input` with `imaging` keys, `compute` keys besides two threads, and `output` keys (and the
/// sections after them), written in `dir`.
fn job(dir: &Path, input: &Path, imaging: &str, compute: &str, output: &str) -> PathBuf {
    let out = dir.join("out");
    let text = crate::cli_common::job_text(input, &out, imaging, output).replace(
        "[compute]
",
        &format!(
            "[compute]
threads = 2
{compute}
"
        ),
    );
    crate::cli_common::write_job(&dir.join("job.toml"), &text)
}

/// `validate`'s verdict on host memory: its line, and whether it says the plan fits.
fn host_memory_verdict(o: &Outcome) -> (String, bool) {
    let line = o.stdout.lines().find(|l| l.contains("host memory:")).expect("a host memory line").to_string();
    let fits = !line.contains("does not fit");
    (line, fits)
}

/// `validate` and `run` of the same job under [`LIMIT`] agree: a job `validate` says fits runs, and one it
/// says does not fit fails cleanly (exit 1, or 2 at `compute.host_memory_gb`) before migrating, leaving no
/// manifest. Returns whether it fit.
fn validate_and_run_agree(dir: &Path, job: &Path) -> bool {
    let checked = limited(&["validate", job.to_str().unwrap()]);
    assert_eq!(checked.code(), Some(0), "{checked:?}");
    let (line, fits) = host_memory_verdict(&checked);
    let ran = limited(&["run", job.to_str().unwrap()]);
    assert_answered(&ran, "run");
    if fits {
        assert_eq!(ran.code(), Some(0), "validate said \"{line}\": {ran:?}");
    } else {
        assert_ne!(ran.code(), Some(0), "validate said \"{line}\": {ran:?}");
        assert!(ran.stderr.contains("of host memory"), "{ran:?}");
        assert!(!dir.join("out/manifest.json").exists());
    }
    fits
}

/// `imaging.dz = 0.001` makes an image of hundreds of thousands of levels. `validate` judges it by the
/// bound the run uses (here `compute.host_memory_gb`, which it ignored and called the plan "fits"), and the
/// run refuses it at once, whether by that bound or by the address space.
#[test]
fn a_millimetre_depth_step_is_judged_by_validate_as_the_run_judges_it() {
    let dir = tempfile::tempdir().unwrap();
    let m = model(16, 16, 100);
    let input = dir.path().join("input.sgy");
    write_segy(&input, &m, &samples(&m));
    // The whole image, 396 001 levels of 256 traces: about 0.4 GB.
    let whole = |name: &str| format!("[[output.roi]]\nname = \"{name}\"\nformats = [\"npy\"]\n");
    let imaging = "dz = 0.001\nfmax = 5.0";
    let bounded = job(dir.path(), &input, imaging, "host_memory_gb = 0.2", &whole("all"));
    let checked = limited(&["validate", bounded.to_str().unwrap()]);
    let (line, fits) = host_memory_verdict(&checked);
    assert!(!fits && line.contains("compute.host_memory_gb"), "{checked:?}");
    assert!(!validate_and_run_agree(dir.path(), &bounded));
    // Six such boxes: more than the address space.
    let boxes: String = (0..6).map(|i| whole(&format!("box{i}"))).collect();
    let job = job(dir.path(), &input, imaging, "", &boxes);
    assert!(!validate_and_run_agree(dir.path(), &job));
}

/// `window.time_pad_factor = 1000` pads every trace to a thousand times its length: a spectrum of
/// hundreds of thousands of frequencies that neither fits at once nor in bands.
#[test]
fn a_time_pad_factor_of_1000_is_refused_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let m = model(64, 64, 500);
    let input = dir.path().join("input.sgy");
    write_segy(&input, &m, &samples(&m));
    let job = job(dir.path(), &input, "dz = 10.0", "", "inlines = [8]\n\n[window]\ntime_pad_factor = 1000.0");
    assert!(!validate_and_run_agree(dir.path(), &job));
}

/// A 1 MB HDF5 file of 16 × 16 × 10⁶ zeros, deflated, declares 1 GB of samples: reading, plotting,
/// validating and migrating it (few frequencies, few levels) stay within the address space or stop with
/// an error.
#[test]
fn a_small_deflated_hdf5_of_a_billion_bytes_of_zeros_is_read_within_bounds() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("zeros.h5");
    let shape = [16, 16, 1_000_000];
    {
        let file = hdf5::File::create(&input).unwrap();
        let ds = file.new_dataset::<f32>().shape(shape).chunk([1, 16, 1_000_000]).deflate(1).create("seismic").unwrap();
        let zeros = vec![0f32; shape[1] * shape[2]];
        for il in 0..shape[0] {
            crate::faults_security::h5raw::write_inline(&ds, il, shape, &zeros);
        }
    }
    assert!(std::fs::metadata(&input).unwrap().len() < 8 << 20);
    let name = input.to_str().unwrap();
    let info = limited(&["info", name]);
    assert_eq!(info.code(), Some(0), "{info:?}");
    let png = dir.path().join("slice.png");
    let plot = limited(&["plot", name, "--time", "500000", "-o", png.to_str().unwrap()]);
    assert_eq!(plot.code(), Some(0), "{plot:?}");
    let imaging = "dz = 10.0\nzmax = 20.0\nfmax = 1.0";
    let job = job(dir.path(), &input, imaging, "", "inlines = [8]").to_str().unwrap().to_string();
    let text = std::fs::read_to_string(&job).unwrap().replace("[velocity]", "bin_size = [12.5, 12.5]\n\n[velocity]");
    std::fs::write(&job, text).unwrap();
    assert!(validate_and_run_agree(dir.path(), Path::new(&job)));
}

/// A velocity scan of 6000 members wrote 42 006 files and took 3.7 GB: a scan has at most 100 members,
/// refused at its key before anything is read or written.
#[test]
fn a_velocity_scan_has_at_most_100_members() {
    let dir = tempfile::tempdir().unwrap();
    let input = input(dir.path());
    let out = dir.path().join("out");
    let velocities: Vec<String> = (0..6000).map(|i| format!("{}.0", 1500 + i)).collect();
    let scans = [
        ("velocity.velocity", "6000 members", format!("velocity = [{}]", velocities.join(", "))),
        (
            "velocity.scale",
            "101 members",
            format!(
                "velocity = 2000.0\nscale = [{}]",
                (0..101).map(|i| format!("{:.2}", 0.5 + 0.01 * i as f64)).collect::<Vec<_>>().join(", ")
            ),
        ),
    ];
    for (key, members, velocity) in scans {
        let text = crate::cli_common::job_text(&input, &out, "dz = 10.0", "inlines = [8]")
            .replace("velocity = 2000.0", &velocity);
        let job = crate::cli_common::write_job(&dir.path().join("scan.toml"), &text);
        for command in ["validate", "run"] {
            let o = limited(&[command, job.to_str().unwrap()]);
            assert_eq!(o.code(), Some(2), "{command} {key}: {o:?}");
            assert!(o.stderr.contains(key) && o.stderr.contains(members) && o.stderr.contains("at most 100"), "{o:?}");
        }
        assert!(!out.exists(), "{key}");
    }
}

/// A 47 MB manifest planted in the output folder, of a million records of files that are not there, is
/// read within the address space: the run replaces it with its own and removes nothing else.
#[test]
fn a_planted_manifest_of_47_mb_is_read_within_bounds() {
    let dir = tempfile::tempdir().unwrap();
    let input = input(dir.path());
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join("notes.txt"), "mine").unwrap();
    let mut manifest = String::from("{\"products\":[");
    let mut i = 0;
    while manifest.len() < 47_000_000 {
        manifest.push_str(&format!("{{\"files\":[{{\"path\":\"f{i}\",\"bytes\":0,\"sha256\":\"\"}}]}},"));
        i += 1;
    }
    manifest.push_str("{\"files\":[{\"path\":\"notes.txt\",\"bytes\":1,\"sha256\":\"\"}]}]}");
    std::fs::write(out.join("manifest.json"), &manifest).unwrap();
    let job = job(dir.path(), &input, "dz = 10.0", "", "inlines = [8]");
    let o = limited(&["run", job.to_str().unwrap()]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    assert!(o.stderr.contains("leaves notes.txt: it has 4 bytes, not the 1"), "{o:?}");
    assert_eq!(std::fs::read_to_string(out.join("notes.txt")).unwrap(), "mine");
    assert!(std::fs::metadata(out.join("manifest.json")).unwrap().len() < 1 << 20);
}

/// A velocity table of 255 MiB (twenty million picks, under the 256 MiB a text file may have) held about
/// 64 bytes per pick and aborted: more than 4 194 304 picks are refused, naming the file and the line.
#[test]
fn a_velocity_table_of_20_million_picks_is_refused_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let input = input(dir.path());
    let table = dir.path().join("vel.txt");
    {
        use std::io::Write;
        let mut w = std::io::BufWriter::new(std::fs::File::create(&table).unwrap());
        let mut written = 0;
        let mut t = 0u64;
        while written < (255 << 20) - 64 {
            let line = format!("{t} 2000\n");
            w.write_all(line.as_bytes()).unwrap();
            written += line.len();
            t += 1;
        }
    }
    let job = job(dir.path(), &input, "dz = 10.0", "", "inlines = [8]");
    let velocity = format!("kind = \"table\"\npath = {table:?}\ndomain = \"time\"");
    let text = std::fs::read_to_string(&job).unwrap().replace("kind = \"constant\"\nvelocity = 2000.0", &velocity);
    std::fs::write(&job, text).unwrap();
    for command in ["validate", "run"] {
        let o = limited(&[command, job.to_str().unwrap()]);
        assert_eq!(o.code(), Some(2), "{command}: {o:?}");
        assert!(o.stderr.contains("velocity.path") && o.stderr.contains("vel.txt: line 4194305"), "{o:?}");
        assert!(o.stderr.contains("more than 4194304 picks"), "{o:?}");
    }
}

/// `bench --scales 1000000000` took every byte of the machine; its counts are bounded like a job's
/// (exit 2, naming the option), before anything is made.
#[test]
fn bench_sizes_are_bounded_like_a_job() {
    for (option, value) in [("--scales", "1000000000"), ("--depth-steps", "2000000"), ("--threads", "1,100000")] {
        let o = limited(&["bench", "--size", "4x4x20", "--backend", "cpu", option, value]);
        assert_eq!(o.code(), Some(2), "{option}: {o:?}");
        assert!(o.stderr.contains(option) && o.stderr.contains("is more than"), "{o:?}");
    }
}
