//! Hostile inputs and shared folders: what seisimage refuses to do with them, and the resources a request
//! or a header can make it use. Every hostile file is made here, by the test, from the formats' own
//! definitions (HDF5 files through the HDF5 library); nothing is shipped.
//!
//! The attacks: an HDF5 file that names a filter plugin, stores its values in another file, maps another
//! file's dataset or links to one; symbolic links planted at the names a run writes in a shared output
//! folder; an output that is the input; FIFOs and devices where a file is expected; requests that ask for
//! more than a machine has (threads, pixels, samples, open files, names longer than a file system holds);
//! finite samples so large that the transforms overflow; an input that shrinks while it is read.

use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::cli_common::{job_text, model, run, samples, seisimage, write_job, write_segy, Outcome};
use seisimage::volume::{Domain, Geometry, SampleAxis};

/// Run `cmd` to its end, killing it (and failing) after `limit`: for attacks whose symptom is a hang.
fn run_within(cmd: &mut Command, limit: Duration) -> Outcome {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {:?}: {e}", cmd.get_program()));
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > limit {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!("still running after {limit:?}: {}", String::from_utf8_lossy(&out.stderr));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    Outcome {
        status: out.status,
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn path_str(p: &Path) -> &str {
    p.to_str().expect("test paths are UTF-8")
}

/// A small input (16 × 12 traces of 100 samples) in `dir` and a job writing into `dir/out`, with `output`
/// added to `[output]` and `imaging` to `[imaging]`.
fn small_job(dir: &Path, imaging: &str, output: &str) -> (PathBuf, PathBuf, PathBuf) {
    let m = model(16, 12, 100);
    let input = dir.join("input.sgy");
    write_segy(&input, &m, &samples(&m));
    let out = dir.join("out");
    let job = write_job(&dir.join("job.toml"), &job_text(&input, &out, &format!("nz = 20\n{imaging}"), output));
    (job, input, out)
}

// ---------------------------------------------------------------------------------------------------------
// Outputs that are inputs

#[test]
fn a_product_that_is_the_input_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    // The input lies in the output folder under the name of the ROI's file.
    let m = model(16, 12, 100);
    let input = out.join("roi_centre.sgy");
    write_segy(&input, &m, &samples(&m));
    let before = std::fs::read(&input).unwrap();
    let job = write_job(
        &dir.path().join("job.toml"),
        &job_text(&input, &out, "nz = 20", "[[output.roi]]\nname = \"centre\"\nformats = [\"segy\"]"),
    );
    for command in ["validate", "run"] {
        let o = run(&[command, path_str(&job)]);
        assert_eq!(o.code(), Some(2), "{command}: {o:?}");
        assert!(o.stderr.contains("would replace the input"), "{o:?}");
        assert!(o.stderr.contains(path_str(&input)), "{o:?}");
    }
    assert_eq!(std::fs::read(&input).unwrap(), before, "the input was replaced");

    // A hard link to the input under the product's name is the input too.
    let other = dir.path().join("input.sgy");
    std::fs::rename(&input, &other).unwrap();
    std::fs::hard_link(&other, &input).unwrap();
    let job = write_job(
        &dir.path().join("job.toml"),
        &job_text(&other, &out, "nz = 20", "[[output.roi]]\nname = \"centre\"\nformats = [\"segy\"]"),
    );
    let o = run(&["run", path_str(&job)]);
    assert_eq!(o.code(), Some(2), "{o:?}");
    assert_eq!(std::fs::read(&other).unwrap(), before);
}

#[test]
fn a_product_that_is_the_velocity_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let m = model(16, 12, 100);
    let input = dir.path().join("input.sgy");
    write_segy(&input, &m, &samples(&m));
    let g = m.geometry();
    let velocity = out.join("roi_v.h5");
    let depth = SampleAxis { origin: 0.0, step: 10.0, len: 50, domain: Domain::Depth };
    let vg = Geometry::regular(g.ilines, g.xlines, depth);
    seisimage::io::write_volume(
        seisimage::io::FileFormat::Hdf5,
        &velocity,
        &vg,
        &vec![2000.0f32; vg.n_values()],
        &Default::default(),
    )
    .unwrap();
    let before = std::fs::read(&velocity).unwrap();
    let text = job_text(&input, &out, "nz = 20", "[[output.roi]]\nname = \"v\"\nformats = [\"hdf5\"]")
        .replace("kind = \"constant\"\nvelocity = 2000.0", &format!("kind = \"file\"\npath = {velocity:?}"));
    let job = write_job(&dir.path().join("job.toml"), &text);
    let o = run(&["run", path_str(&job)]);
    assert_eq!(o.code(), Some(2), "{o:?}");
    assert!(o.stderr.contains("would replace the velocity file"), "{o:?}");
    assert_eq!(std::fs::read(&velocity).unwrap(), before);
}

#[test]
fn convert_onto_its_own_input_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let m = model(6, 5, 40);
    let input = dir.path().join("a.sgy");
    write_segy(&input, &m, &samples(&m));
    let before = std::fs::read(&input).unwrap();
    let link = dir.path().join("b.sgy");
    std::fs::hard_link(&input, &link).unwrap();
    for output in [&input, &link] {
        let o = run(&["convert", path_str(&input), path_str(output), "--iline", "2:3"]);
        assert_eq!(o.code(), Some(2), "{o:?}");
        assert!(o.stderr.contains("is the input"), "{o:?}");
        assert_eq!(std::fs::read(&input).unwrap(), before);
    }
}

// ---------------------------------------------------------------------------------------------------------
// Files that are not regular files

fn mkfifo(path: &Path) {
    let c = CString::new(path_str(path)).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

#[test]
fn fifos_and_devices_are_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let (job, input, out) = small_job(dir.path(), "", "depth_slices = [50.0]");
    let fifo = dir.path().join("pipe.sgy");
    mkfifo(&fifo);
    let limit = Duration::from_secs(20);

    // as the input of `info` and of a job, as a velocity file, as the job file itself
    let o = run_within(seisimage().args(["info", path_str(&fifo)]), limit);
    assert_eq!(o.code(), Some(1), "{o:?}");
    assert!(o.stderr.contains(path_str(&fifo)) && o.stderr.contains("FIFO"), "{o:?}");

    let text = std::fs::read_to_string(&job).unwrap();
    let as_input = write_job(&dir.path().join("fifo-input.toml"), &text.replace(path_str(&input), path_str(&fifo)));
    let o = run_within(seisimage().args(["run", path_str(&as_input)]), limit);
    assert_eq!(o.code(), Some(1), "{o:?}");
    assert!(o.stderr.contains("FIFO"), "{o:?}");

    let as_velocity = write_job(
        &dir.path().join("fifo-velocity.toml"),
        &text.replace("kind = \"constant\"\nvelocity = 2000.0", &format!("kind = \"file\"\npath = {fifo:?}")),
    );
    let o = run_within(seisimage().args(["run", path_str(&as_velocity)]), limit);
    assert_eq!(o.code(), Some(1), "{o:?}");
    assert!(o.stderr.contains("FIFO"), "{o:?}");

    let job_fifo = dir.path().join("job-pipe.toml");
    mkfifo(&job_fifo);
    let o = run_within(seisimage().args(["run", path_str(&job_fifo)]), limit);
    assert_eq!(o.code(), Some(2), "{o:?}");
    assert!(o.stderr.contains("FIFO"), "{o:?}");

    // a device that never ends
    let o = run_within(seisimage().args(["validate", "/dev/zero"]), limit);
    assert_eq!(o.code(), Some(2), "{o:?}");
    assert!(o.stderr.contains("/dev/zero") && o.stderr.contains("character device"), "{o:?}");
    let o = run_within(seisimage().args(["info", "/dev/zero", "--format", "segy"]), limit);
    assert_eq!(o.code(), Some(1), "{o:?}");

    // a job file far larger than any job
    let huge = dir.path().join("huge.toml");
    std::fs::write(&huge, format!("{text}\n# {}\n", "x".repeat(20 << 20))).unwrap();
    let o = run_within(seisimage().args(["validate", path_str(&huge)]), limit);
    assert_eq!(o.code(), Some(2), "{o:?}");
    assert!(o.stderr.contains("larger than"), "{o:?}");
    assert!(!out.exists());
}
