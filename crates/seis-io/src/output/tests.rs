//! Tests of atomic, exclusive outputs and of folders held open.

use super::*;

#[test]
fn uncommitted_output_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("a.bin");
    {
        let (t, mut f) = TempOutput::create(&target).unwrap();
        f.write_all(b"half").unwrap();
        assert!(t.path().exists());
    }
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "temporary file must be removed on drop");
    write_atomic(&target, b"whole").unwrap();
    assert_eq!(std::fs::read(&target).unwrap(), b"whole");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

/// Records where each write lands.
#[derive(Default)]
struct Recorder {
    bytes: Vec<u8>,
    writes: Vec<(usize, usize)>,
}

impl Write for Recorder {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        // Take at most 3 blocks at once, as a file may: write_all must carry on.
        let n = data.len().min(3 * WRITE_BLOCK);
        self.writes.push((self.bytes.len(), n));
        self.bytes.extend_from_slice(&data[..n]);
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn block_writes_are_whole_aligned_blocks_and_keep_every_byte() {
    // Pieces of every size class: small, about a block, many blocks; the data is a known sequence.
    let sizes = [3600usize, 240, 4000, WRITE_BLOCK - 7, 13, 2 * WRITE_BLOCK + 5, 1, 7 * WRITE_BLOCK, 999_999];
    let total: usize = sizes.iter().sum();
    let data: Vec<u8> = (0..total).map(|i| (i * 7 + i / 251) as u8).collect();
    let mut w = BlockWriter::new(Recorder::default());
    let mut at = 0;
    for n in sizes {
        w.write_all(&data[at..at + n]).unwrap();
        at += n;
    }
    let rec = w.into_inner().unwrap();
    assert_eq!(rec.bytes, data);
    let (last, whole) = rec.writes.split_last().unwrap();
    for &(offset, len) in whole {
        assert_eq!(offset % WRITE_BLOCK, 0, "a write at {offset}");
        assert_eq!(len % WRITE_BLOCK, 0, "a write of {len} bytes at {offset}");
    }
    assert_eq!(last.0 % WRITE_BLOCK, 0);
    assert_eq!(last.0 + last.1, total);
}

#[test]
fn after_a_flush_block_writes_end_on_boundaries_again() {
    let mut w = BlockWriter::new(Recorder::default());
    w.write_all(&[1; 100]).unwrap();
    w.flush().unwrap();
    w.write_all(&vec![2; 2 * WRITE_BLOCK]).unwrap();
    let rec = w.into_inner().unwrap();
    // 100 flushed, then up to the first boundary, then one whole block, then the rest at the end
    let ends: Vec<usize> = rec.writes.iter().map(|&(o, n)| o + n).collect();
    assert_eq!(ends, vec![100, WRITE_BLOCK, 2 * WRITE_BLOCK, 2 * WRITE_BLOCK + 100]);
    assert_eq!(rec.bytes.len(), 2 * WRITE_BLOCK + 100);
    assert!(rec.bytes[..100].iter().all(|&b| b == 1) && rec.bytes[100..].iter().all(|&b| b == 2));
}

#[test]
fn files_committed_together_appear_together() {
    let dir = tempfile::tempdir().unwrap();
    let names = ["a.png", "a.json", "b.h5"];
    let sealed: Vec<_> = names.iter().map(|n| write_sealed(dir.path().join(n), n.as_bytes()).unwrap()).collect();
    // sealed, not yet in place: only the temporary files exist
    assert!(names.iter().all(|n| !dir.path().join(n).exists()));
    let done = commit_together(sealed).unwrap();
    let got: Vec<_> = done.iter().map(|(p, d)| (p.file_name().unwrap().to_str().unwrap(), d.bytes)).collect();
    assert_eq!(got, vec![("a.png", 5), ("a.json", 6), ("b.h5", 4)]);
    for n in names {
        assert_eq!(std::fs::read(dir.path().join(n)).unwrap(), n.as_bytes());
    }
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 3, "no temporary file is left");

    // the second file cannot take its name (a folder with something in it is there): the first is taken
    // back, and nothing else is left
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("y.json").join("inside")).unwrap();
    let sealed: Vec<_> =
        ["x.png", "y.json", "z.h5"].iter().map(|n| write_sealed(dir.path().join(n), b"data").unwrap()).collect();
    let err = commit_together(sealed).unwrap_err().to_string();
    assert!(err.contains("y.json"), "{err}");
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(left, vec![std::ffi::OsString::from("y.json")], "only the folder that was in the way");
}

#[test]
fn files_replaced_by_a_commit_wait_aside_until_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let listing = || {
        let mut names: Vec<String> =
            std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
        names.sort();
        names
    };
    std::fs::write(dir.path().join("a.h5"), b"earlier run").unwrap();
    std::fs::create_dir(dir.path().join("b.h5")).unwrap();
    let sealed = vec![write_sealed(dir.path().join("a.h5"), b"this run").unwrap()];
    let (done, replaced) = commit_together_replacing(sealed).unwrap();
    assert_eq!(done[0].0, dir.path().join("a.h5"));
    assert_eq!(std::fs::read(dir.path().join("a.h5")).unwrap(), b"this run");
    let names = listing();
    assert_eq!(names.len(), 3, "{names:?}");
    let aside = names.iter().find(|n| n.starts_with(".a.h5.replaced-")).expect("the earlier file, moved aside");
    assert_eq!(std::fs::read(dir.path().join(aside)).unwrap(), b"earlier run");
    drop(replaced);
    assert_eq!(listing(), ["a.h5", "b.h5"]);

    // writers of one name at once each find the earlier file or find it gone: all succeed
    std::thread::scope(|s| {
        for _ in 0..8 {
            s.spawn(|| {
                let sealed = vec![write_sealed(dir.path().join("a.h5"), b"again").unwrap()];
                drop(commit_together_replacing(sealed).expect("every writer succeeds"));
            });
        }
    });
    assert_eq!(std::fs::read(dir.path().join("a.h5")).unwrap(), b"again");
    assert_eq!(listing(), ["a.h5", "b.h5"]);

    // a folder in the way is not moved: the commit fails and leaves it
    let sealed = vec![write_sealed(dir.path().join("b.h5"), b"data").unwrap()];
    assert!(commit_together_replacing(sealed).is_err());
    assert_eq!(listing(), ["a.h5", "b.h5"]);
    assert!(dir.path().join("b.h5").is_dir());
}

#[test]
fn temporary_files_are_created_exclusively_and_never_reopened_through_a_link() {
    let dir = tempfile::tempdir().unwrap();
    let victim = dir.path().join("victim.txt");
    std::fs::write(&victim, b"precious").unwrap();
    let (out, mut f) = TempOutput::create(dir.path().join("a.npy")).unwrap();
    let name = out.path().file_name().unwrap().to_str().unwrap().to_string();
    let prefix = format!(".a.npy.partial-{}-", owner_tag());
    assert!(name.starts_with(&prefix) && name.len() == prefix.len() + RANDOM_CHARS, "{name}");
    f.write_all(b"data").unwrap();
    // the temporary file swapped for a link to a file elsewhere: sealing refuses it, and writes nothing
    std::fs::remove_file(out.path()).unwrap();
    std::os::unix::fs::symlink(&victim, out.path()).unwrap();
    let e = out.seal().unwrap_err().to_string();
    assert!(e.contains("a.npy"), "{e}");
    assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
    // two writers of one name never share a temporary file
    let (a, _) = TempOutput::create(dir.path().join("b.h5")).unwrap();
    let (b, _) = TempOutput::create(dir.path().join("b.h5")).unwrap();
    assert_ne!(a.path(), b.path());
}

#[test]
fn stale_names_are_told_by_their_host_and_process() {
    let host = host_tag();
    let name = |n: &str| n.replace("HOST", &host);
    assert_eq!(stale_pid(&name(".inline_3.png.partial-4242-HOST-Xq3ZzA1b"), &host), Some(4242));
    assert_eq!(stale_pid(&name(".roi-a-b.h5.replaced-7-HOST-Xq3ZzA1b"), &host), Some(7), "dashes in the name");
    for other in [
        ".inline_3.png.partial-4242-0badc0de-Xq3ZzA1b", // another host
        ".inline_3.png.partial-4242-HOST-Xq3",          // not seisimage's random part
        ".inline_3.png.backup-4242-HOST-Xq3ZzA1b",      // another tag
        ".inline_3.png.partial-0-HOST-Xq3ZzA1b",        // no process has id 0
        ".inline_3.png.partial--5-HOST-Xq3ZzA1b",
        "inline_3.png.partial-4242-HOST-Xq3ZzA1b", // not hidden
        ".inline_3.png.partial-4242-1",            // the older names: no host, so no telling
    ] {
        assert_eq!(stale_pid(&name(other), &host), None, "{other}");
    }
    assert!(process_runs(std::process::id() as i32));
    // every name this module gives a file is one
    let (out, _) = TempOutput::create(std::env::temp_dir().join("x-y.h5")).unwrap();
    let name = out.path().file_name().unwrap().to_str().unwrap();
    let h = hidden_name(name).unwrap();
    assert_eq!((h.target, h.pid, h.host), ("x-y.h5", std::process::id() as i32, Some(host.as_str())));
    assert_eq!(
        hidden_name(".inline_3.png.partial-4242-7"),
        Some(HiddenName { target: "inline_3.png", pid: 4242, host: None }),
        "the names of earlier versions say no host"
    );
}

/// A held folder renamed and replaced by a link to another: the file being written, files written after,
/// and a group that replaces an earlier file all land in the folder held, none in the link's target.
#[test]
fn files_go_into_the_held_folder_whatever_its_path_leads_to() {
    let dir = tempfile::tempdir().unwrap();
    let (out, moved, elsewhere) = (dir.path().join("out"), dir.path().join("moved"), dir.path().join("elsewhere"));
    std::fs::create_dir(&out).unwrap();
    std::fs::create_dir(&elsewhere).unwrap();
    std::fs::write(out.join("b.png"), b"earlier").unwrap();
    let listing = |d: &Path| {
        let mut names: Vec<String> =
            std::fs::read_dir(d).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
        names.sort();
        names
    };
    let held = hold(&out).unwrap();
    let (early, mut f) = TempOutput::create(out.join("a.npy")).unwrap();
    f.write_all(b"a").unwrap();
    std::fs::rename(&out, &moved).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &out).unwrap();
    assert!(!held.folder().still_at_its_path());

    early.commit().unwrap();
    let (done, replaced) = commit_together_replacing(vec![write_sealed(out.join("b.png"), b"new").unwrap()]).unwrap();
    assert_eq!(done[0].0, out.join("b.png"), "named as the caller named it");
    drop(replaced);
    write_atomic(out.join("manifest.json"), b"{}").unwrap();
    drop(TempOutput::create(out.join("c.h5")).unwrap());
    assert_eq!(listing(&elsewhere), Vec::<String>::new());
    assert_eq!(listing(&moved), ["a.npy", "b.png", "manifest.json"]);
    assert_eq!(std::fs::read(moved.join("b.png")).unwrap(), b"new");

    // Let go, the path is taken as it leads now.
    drop(held);
    write_atomic(out.join("d.txt"), b"d").unwrap();
    assert_eq!(listing(&elsewhere), ["d.txt"]);
}

#[test]
fn a_digested_commit_measures_what_landed() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("abc.txt");
    // SHA-256 of "abc" (FIPS 180-2, appendix B.1)
    let (path, digest) = write_atomic_digested(&target, b"abc").unwrap();
    assert_eq!(path, target);
    assert_eq!(digest.bytes, 3);
    assert_eq!(digest.sha256, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    assert_eq!(std::fs::read(&target).unwrap(), b"abc");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "no temporary file is left");
}

/// The hidden folder of an MDIO dataset whose writer was killed is removed like a file would be; a folder
/// of a run still going, of another host, a link to a folder and a user's folder of another name stay.
#[test]
fn folders_of_runs_that_died_are_removed_with_what_they_hold() {
    let dir = tempfile::tempdir().unwrap();
    let host = host_tag();
    let dead = {
        let mut child = crate::files::child_process("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        pid
    };
    let alive = std::process::id();
    let make = |name: &str| {
        let root = dir.path().join(name);
        std::fs::create_dir_all(root.join("amplitude/c/0/0")).unwrap();
        std::fs::write(root.join("zarr.json"), b"{}").unwrap();
        std::fs::write(root.join("amplitude/c/0/0/0"), b"chunk").unwrap();
        root
    };
    let stale = [format!(".v.mdio.partial-{dead}-{host}-Xq3ZzA1b"), format!(".v.mdio.replaced-{dead}-{host}-7TkLmN0p")];
    for name in &stale {
        make(name);
    }
    // Inside a stale folder, a link to something elsewhere: removed, its target not touched.
    let elsewhere = tempfile::tempdir().unwrap();
    std::fs::write(elsewhere.path().join("keep.txt"), b"precious").unwrap();
    std::os::unix::fs::symlink(elsewhere.path(), dir.path().join(&stale[0]).join("link")).unwrap();
    let kept = [
        format!(".v.mdio.partial-{alive}-{host}-Ab12Cd34"),
        format!(".v.mdio.partial-{dead}-0badc0de-Ab12Cd34"),
        format!(".v.mdio.backup-{dead}-{host}-Ab12Cd34"),
        "survey.mdio".to_string(),
    ];
    for name in &kept {
        make(name);
    }
    let users = make("users");
    std::os::unix::fs::symlink(&users, dir.path().join(format!(".w.mdio.partial-{dead}-{host}-LnK00000"))).unwrap();

    assert_eq!(remove_stale(dir.path()), stale.len());
    let mut left: Vec<String> =
        std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    left.sort();
    for name in &stale {
        assert!(!left.contains(name), "{name} was left: {left:?}");
    }
    for name in kept.iter().chain([&"users".to_string()]) {
        assert!(left.contains(name), "{name} was removed: {left:?}");
    }
    assert!(left.iter().any(|n| n.ends_with("LnK00000")), "the link was removed: {left:?}");
    assert!(users.join("amplitude/c/0/0/0").exists(), "the link's target lost its files");
    assert_eq!(std::fs::read(elsewhere.path().join("keep.txt")).unwrap(), b"precious");
}
