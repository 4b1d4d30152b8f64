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

use crate::cli_common::{job_text, model, names, run, run_command, samples, seisimage, write_job, write_segy, Outcome};
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
// Shared output folders: planted links, debris of dead runs

/// Symbolic links planted at every name a run would have written under its former predictable temporary
/// names (process id and a count) all point at a file elsewhere: the run must write around them, and the
/// file elsewhere must stay as it was. The links are planted by a shell that then becomes seisimage, so
/// that they carry its process id.
#[test]
fn links_planted_in_the_output_folder_are_never_written_through() {
    let dir = tempfile::tempdir().unwrap();
    let (job, _, out) = small_job(dir.path(), "", "inlines = [8]\nslice_formats = [\"npy\", \"hdf5\"]");
    std::fs::create_dir(&out).unwrap();
    let victim = dir.path().join("victim.txt");
    std::fs::write(&victim, b"precious").unwrap();
    let plant = format!(
        "for name in inline_8.png inline_8.json inline_8.npy inline_8.h5 manifest.json; do \
           for n in $(seq 0 40); do ln -s {victim} {out}/.$name.partial-$$-$n; ln -s {victim} {out}/.$name.replaced-$$-$n; done; \
         done; ln -s {victim} {out}/.seisimage-write-test-$$; exec \"$0\" run {job}",
        victim = victim.display(),
        out = out.display(),
        job = job.display()
    );
    let mut cmd = Command::new("sh");
    cmd.arg("-c").arg(plant).arg(env!("CARGO_BIN_EXE_seisimage"));
    let o = run_command(&mut cmd);
    assert_eq!(o.code(), Some(0), "{o:?}");
    assert_eq!(std::fs::read(&victim).unwrap(), b"precious", "the run wrote through a planted link");
    for name in ["inline_8.png", "inline_8.json", "inline_8.npy", "inline_8.h5", "manifest.json"] {
        let meta = std::fs::symlink_metadata(out.join(name)).unwrap();
        assert!(meta.file_type().is_file(), "{name} is not a regular file");
    }
}

/// The tag of this host in temporary names: the first 8 hexadecimal digits of the SHA-256 of its name.
fn host_tag() -> String {
    use sha2::Digest;
    let mut name = [0u8; 256];
    // SAFETY: gethostname writes at most `name.len()` bytes into the buffer.
    assert_eq!(unsafe { libc::gethostname(name.as_mut_ptr().cast(), name.len()) }, 0);
    let len = name.iter().position(|&b| b == 0).unwrap_or(name.len());
    sha2::Sha256::digest(&name[..len]).iter().take(4).map(|b| format!("{b:02x}")).collect()
}

#[test]
fn temporary_files_of_runs_that_died_are_removed_by_the_next_run() {
    let dir = tempfile::tempdir().unwrap();
    let (job, _, out) = small_job(dir.path(), "", "depth_slices = [50.0]");
    std::fs::create_dir(&out).unwrap();
    let dead = {
        let mut child = Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        pid
    };
    let alive = std::process::id();
    let host = host_tag();
    let debris =
        [format!(".inline_3.png.partial-{dead}-{host}-Xq3ZzA1b"), format!(".roi_a.h5.replaced-{dead}-{host}-7TkLmN0p")];
    let kept = [
        // a run that is still going
        format!(".inline_3.png.partial-{alive}-{host}-Ab12Cd34"),
        // a run on another host sharing the folder
        format!(".inline_3.png.partial-{dead}-0badc0de-Ab12Cd34"),
        // not seisimage's
        format!(".notes.txt.backup-{dead}-{host}-Ab12Cd34"),
        "inline_3.png.partial-1-2".to_string(),
    ];
    for name in debris.iter().chain(&kept) {
        std::fs::write(out.join(name), b"x").unwrap();
    }
    // a link with the pattern, and a file of another user (where the test may give one away)
    std::os::unix::fs::symlink(dir.path().join("job.toml"), out.join(format!(".a.partial-{dead}-{host}-LnK00000")))
        .unwrap();
    let foreign = out.join(format!(".b.partial-{dead}-{host}-0ther000"));
    std::fs::write(&foreign, b"x").unwrap();
    let gave_away = unsafe { libc::geteuid() } == 0 && std::os::unix::fs::chown(&foreign, Some(65534), None).is_ok();

    let o = run(&["run", path_str(&job)]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    let left = names(&out);
    for name in &debris {
        assert!(!left.contains(name), "{name} was left: {left:?}");
    }
    for name in &kept {
        assert!(left.contains(name), "{name} was removed: {left:?}");
    }
    assert!(left.iter().any(|n| n.ends_with("LnK00000")), "the link was removed: {left:?}");
    if gave_away {
        assert!(foreign.exists(), "another user's file was removed");
    }
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
