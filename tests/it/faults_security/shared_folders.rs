//! Shared output folders: links planted at the names a run writes, and the debris of runs that died.

use crate::cli_common::{child, names, run, run_command};

use super::{path_str, small_job};

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
        "for name in inline_8.png inline_8.json inline_8.npy inline_8.h5 index.html manifest.json; do \
           for n in $(seq 0 40); do ln -s {victim} {out}/.$name.partial-$$-$n; ln -s {victim} {out}/.$name.replaced-$$-$n; done; \
         done; exec \"$0\" run {job}",
        victim = victim.display(),
        out = out.display(),
        job = job.display()
    );
    let mut cmd = child("sh");
    cmd.arg("-c").arg(plant).arg(crate::cli_common::seisimage_path());
    let o = run_command(&mut cmd);
    assert_eq!(o.code(), Some(0), "{o:?}");
    assert_eq!(std::fs::read(&victim).unwrap(), b"precious", "the run wrote through a planted link");
    for name in ["inline_8.png", "inline_8.json", "inline_8.npy", "inline_8.h5", "index.html", "manifest.json"] {
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
        let mut child = child("true").spawn().unwrap();
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
