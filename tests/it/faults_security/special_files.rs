//! Files that are not regular files (FIFOs, devices) where a file is expected or planted in an output
//! folder: refused at once, never waited on.

use std::ffi::CString;
use std::path::Path;
use std::time::Duration;

use crate::cli_common::{seisimage, write_job};

use super::{path_str, run_within, small_job};

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

    // a job naming one is a mistake in the job, found with its other files, placed at the key
    let text = std::fs::read_to_string(&job).unwrap();
    let as_input = write_job(&dir.path().join("fifo-input.toml"), &text.replace(path_str(&input), path_str(&fifo)));
    let o = run_within(seisimage().args(["run", path_str(&as_input)]), limit);
    assert_eq!(o.code(), Some(2), "{o:?}");
    assert!(o.stderr.contains("input.path") && o.stderr.contains("FIFO"), "{o:?}");

    let constant = "kind = \"constant\"\nvelocity = 2000.0";
    for (form, velocity) in [
        ("cube", format!("kind = \"file\"\npath = {fifo:?}")),
        ("text table", format!("kind = \"table\"\npath = {fifo:?}\ndomain = \"time\"")),
        ("text functions", format!("kind = \"functions\"\npath = {fifo:?}\ndomain = \"depth\"")),
        ("device", "kind = \"table\"\npath = \"/dev/zero\"\ndomain = \"time\"".to_string()),
    ] {
        let as_velocity = write_job(&dir.path().join("fifo-velocity.toml"), &text.replace(constant, &velocity));
        for command in ["validate", "run"] {
            let o = run_within(seisimage().args([command, path_str(&as_velocity)]), limit);
            assert_eq!(o.code(), Some(2), "{form}, {command}: {o:?}");
            assert!(o.stderr.contains("velocity.path"), "{form}, {command}: {o:?}");
            assert!(o.stderr.contains("FIFO") || o.stderr.contains("character device"), "{form}: {o:?}");
        }
    }

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

/// FIFOs planted in a shared output folder under the names a run reads there (the folder's lock, the
/// manifest of the run before) would block the run for ever on opening them: the lock is refused with a
/// message, the manifest is not read.
#[test]
fn fifos_planted_in_the_output_folder_do_not_hang_a_run() {
    let dir = tempfile::tempdir().unwrap();
    let (job, _, out) = small_job(dir.path(), "", "depth_slices = [50.0]");
    std::fs::create_dir(&out).unwrap();
    let limit = Duration::from_secs(20);

    mkfifo(&out.join("manifest.json"));
    let o = run_within(seisimage().args(["run", path_str(&job)]), limit);
    assert_eq!(o.code(), Some(0), "{o:?}");
    assert!(o.stderr.contains("is not a manifest seisimage can read") && o.stderr.contains("FIFO"), "{o:?}");
    assert!(std::fs::symlink_metadata(out.join("manifest.json")).unwrap().is_file());

    mkfifo(&out.join(".seisimage.lock"));
    let o = run_within(seisimage().args(["run", path_str(&job)]), limit);
    assert_eq!(o.code(), Some(1), "{o:?}");
    assert!(o.stderr.contains(".seisimage.lock") && o.stderr.contains("not a plain file"), "{o:?}");
}
