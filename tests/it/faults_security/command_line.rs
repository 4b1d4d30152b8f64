//! The command line and its streams: a closed output pipe, a progress interval beyond any run.

use std::process::Stdio;

use crate::cli_common::{run, seisimage};

use super::{path_str, small_job};

#[test]
fn a_closed_output_pipe_ends_the_command_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let (job, input, out) = small_job(dir.path(), "", "depth_slices = [50.0]");
    let picture = dir.path().join("inline.png");
    let commands = [
        vec!["info", path_str(&input)],
        vec!["validate", path_str(&job)],
        vec!["print-config", path_str(&job)],
        vec!["plot", path_str(&input), "--inline", "3", "-o", path_str(&picture)],
        vec!["run", path_str(&job), "--shard", "1/1"],
        vec!["reduce", path_str(&job), "--shards", "1"],
        vec!["run", path_str(&job)],
    ];
    for args in commands {
        let mut fds = [0; 2];
        // SAFETY: pipe(2) fills two descriptors; the read end is closed at once.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        unsafe { libc::close(fds[0]) };
        // SAFETY: the write end is ours alone.
        let write_end = unsafe { <std::os::fd::OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fds[1]) };
        let status = seisimage()
            .args(&args)
            .stdin(Stdio::null())
            .stdout(Stdio::from(write_end.try_clone().unwrap()))
            .stderr(Stdio::from(write_end))
            .status()
            .unwrap();
        assert_eq!(status.code(), Some(0), "{args:?}: {status}");
    }
    assert!(picture.exists(), "the picture was not drawn without its log");
    assert!(out.join("manifest.json").exists(), "the run went on without its log");
}

#[test]
fn a_progress_interval_beyond_any_run_means_never() {
    let dir = tempfile::tempdir().unwrap();
    let (_, input, _) = small_job(dir.path(), "", "depth_slices = [50.0]");
    for interval in ["1e20", "1e300"] {
        let o = run(&["--progress-interval", interval, "info", path_str(&input)]);
        assert_eq!(o.code(), Some(0), "{o:?}");
    }
}
