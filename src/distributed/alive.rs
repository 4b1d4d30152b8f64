//! Ranks seen alive: each rank leaves its host and process id in the rendezvous folder, so that a rank
//! killed without a word (SIGKILL, the kernel's out-of-memory killer) is seen gone by the ranks on its
//! host, instead of leaving them waiting on it in NCCL, which does not notice a peer that vanished. Ranks on
//! other hosts cannot be seen this way; their launcher (Slurm, mpirun) ends the job.

use std::path::Path;
use std::sync::Arc;

use crate::error::Error;
use crate::io::output::Folder;

/// The start of the name of a rank's process note (its host and process id); the rank follows.
const PROCESS_PREFIX: &str = "process-rank-";

/// Leave this rank's host and process id in `dir`.
pub(super) fn note_process(dir: &Path, rank: usize) {
    let note = format!("{}\n{}", super::host_name(), std::process::id());
    let written = crate::io::output::Folder::private(dir).and_then(|folder| {
        crate::io::output::write_atomic_in(&Arc::new(folder), &format!("{PROCESS_PREFIX}{rank}"), note.as_bytes())
    });
    if let Err(e) = written {
        tracing::debug!("could not leave this rank's process id for the others: {e}");
    }
}

/// A rank other than `me` whose process note names this host and a process that is gone, as this rank's
/// error. Ranks on other hosts cannot be seen this way.
pub(super) fn vanished_peer(folder: &Folder, me: usize) -> Option<Error> {
    let host = super::host_name();
    let mut names = folder.names().unwrap_or_default();
    names.sort();
    names.into_iter().find_map(|name| {
        let rank = name.strip_prefix(PROCESS_PREFIX)?.parse::<usize>().ok().filter(|&r| r != me)?;
        let text = read_note(folder, &name, 512).ok()?;
        let text = String::from_utf8_lossy(&text);
        let (on, pid) = text.split_once('\n')?;
        let pid = pid.trim().parse::<i32>().ok().filter(|_| on == host)?;
        let gone = rustix::process::Pid::from_raw(pid)
            .is_some_and(|p| rustix::process::test_kill_process(p) == Err(rustix::io::Errno::SRCH));
        gone.then(|| Error::Peer {
            rank,
            code: 1,
            message: format!(
                "rank {rank} (process {pid} on this host) ended without a word: killed (by a signal, or for want \
                 of memory)"
            ),
        })
    })
}

/// This rank ended well and may end before the others: its process note goes.
pub(super) fn leave(folder: &Folder, rank: usize) {
    let _ = folder.remove(&format!("{PROCESS_PREFIX}{rank}"));
}

/// The first `limit` bytes of the file `name` in `folder`, if it is a regular file (a link is not followed).
pub(super) fn read_note(folder: &Folder, name: &str, limit: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let file = folder.open_file(name, false)?;
    if !file.metadata()?.file_type().is_file() {
        return Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a regular file"));
    }
    let mut bytes = Vec::new();
    file.take(limit).read_to_end(&mut bytes)?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rank_whose_process_is_gone_is_a_failure_unless_it_left() {
        let dir = tempfile::tempdir().unwrap();
        let folder = || Folder::open_no_link(dir.path()).unwrap();
        note_process(dir.path(), 0);
        assert!(vanished_peer(&folder(), 1).is_none(), "rank 0, this process, is alive");
        // A process that has ended: a child waited for.
        let mut child = crate::io::files::child_process("true").spawn().unwrap();
        let gone = child.id();
        child.wait().unwrap();
        std::fs::write(dir.path().join("process-rank-3"), format!("{}\n{gone}", crate::distributed::host_name()))
            .unwrap();
        let e = vanished_peer(&folder(), 0).expect("rank 3 is gone");
        assert!(matches!(e, Error::Peer { rank: 3, code: 1, .. }), "{e}");
        assert!(e.to_string().contains(&format!("process {gone} on this host")), "{e}");
        assert!(super::super::ranks::peer_failure(dir.path(), 0).is_some(), "seen by the ranks' watch");
        assert!(vanished_peer(&folder(), 3).is_none(), "its own note is not another's failure");
        // Another host's process cannot be seen; a rank that left is no failure.
        std::fs::write(dir.path().join("process-rank-3"), format!("elsewhere\n{gone}")).unwrap();
        assert!(vanished_peer(&folder(), 0).is_none());
        std::fs::write(dir.path().join("process-rank-3"), format!("{}\n{gone}", crate::distributed::host_name()))
            .unwrap();
        leave(&folder(), 3);
        assert!(vanished_peer(&folder(), 0).is_none());
    }
}
