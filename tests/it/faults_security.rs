//! Hostile inputs and shared folders: what seisimage refuses to do with them, and the resources a request
//! or a header can make it use. Every hostile file is made here, by the test, from the formats' own
//! definitions (HDF5 files through the HDF5 library); nothing is shipped.
//!
//! The attacks: an HDF5 file that names a filter plugin, stores its values in another file, maps another
//! file's dataset or links to one; symbolic links planted at the names a run writes in a shared output
//! folder; an output that is the input; FIFOs and devices where a file is expected; requests that ask for
//! more than a machine has (threads, pixels, samples, open files, names longer than a file system holds);
//! finite samples so large that the transforms overflow; an input that shrinks while it is read.//!
//! The attacks are grouped by kind in the files under `faults_security/`; the helpers they share are here.

mod command_line;
mod hdf5_files;
mod input_values;
mod machine_limits;
mod outputs_as_inputs;
mod shared_folders;
mod special_files;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::cli_common::{job_text, model, samples, write_job, write_segy, Outcome};

// Other tests write raw HDF5 too.
pub(crate) use hdf5_files::h5raw;

/// Run `cmd` to its end, killing it (and failing) after `limit`: for attacks whose symptom is a hang.
pub(super) fn run_within(cmd: &mut Command, limit: Duration) -> Outcome {
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

/// `p` as text: test paths are made from UTF-8.
pub(super) fn path_str(p: &Path) -> &str {
    p.to_str().expect("test paths are UTF-8")
}

/// A small input (16 × 12 traces of 100 samples) in `dir` and a job writing into `dir/out`, with `output`
/// added to `[output]` and `imaging` to `[imaging]`.
pub(super) fn small_job(dir: &Path, imaging: &str, output: &str) -> (PathBuf, PathBuf, PathBuf) {
    let m = model(16, 12, 100);
    let input = dir.join("input.sgy");
    write_segy(&input, &m, &samples(&m));
    let out = dir.join("out");
    let job = write_job(&dir.join("job.toml"), &job_text(&input, &out, &format!("nz = 20\n{imaging}"), output));
    (job, input, out)
}
