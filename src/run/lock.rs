//! The lock of an output folder: one run at a time writes into a folder.
//!
//! A run creates `.seisimage.lock` in its output folder before it touches anything there, and removes it
//! when it ends, whether it finished, failed or was stopped. The lock is written whole under a temporary
//! name, then given its name by a hard link, which fails if any file or link has it (as `O_EXCL` would, and
//! also on NFS): a lock that cannot be written (a full disk) is never left behind, half written, to keep
//! every later run out. A lock file that names no run (empty or cut short, as an older version could
//! leave it) is taken over with a warning.
//! The file says who holds the folder: the process id, the host, when the run started, and on Linux the
//! boot and the process' start time, which tell a live holder from a later process that reuses its id.
//!
//! A second run into the folder reads the lock and fails at once, naming the holder. A lock whose holder
//! is gone (killed by SIGKILL, or its node rebooted) is taken over when the holder ran on this host, with
//! a warning; a lock from another host cannot be checked from here, and is left for a person to remove.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::io::output::TempOutput;

/// Name of the lock file in an output folder.
pub const LOCK_FILE: &str = ".seisimage.lock";

/// A lock file larger than this is not one seisimage wrote.
const MAX_LOCK_BYTES: u64 = 64 << 10;

/// Who holds a folder, as its lock file says (JSON).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Holder {
    pid: u32,
    host: String,
    started_utc: String,
    /// The Linux boot the holder ran in (`/proc/sys/kernel/random/boot_id`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    boot_id: Option<String>,
    /// The holder's start time in clock ticks since boot (`/proc/PID/stat`, field 22).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    start_ticks: Option<u64>,
}

impl Holder {
    fn this_process() -> Holder {
        let pid = std::process::id();
        Holder {
            pid,
            host: host_name(),
            started_utc: super::record::utc(SystemTime::now()),
            boot_id: boot_id(),
            start_ticks: start_ticks(pid),
        }
    }

    /// Whether the process that wrote this lock still runs, as far as this host can tell: `None` for a
    /// holder on another host.
    fn running(&self) -> Option<bool> {
        if self.host != host_name() {
            return None;
        }
        if let (Some(theirs), Some(ours)) = (&self.boot_id, boot_id()) {
            if *theirs != ours {
                return Some(false);
            }
        }
        let Some(pid) = i32::try_from(self.pid).ok().and_then(rustix::process::Pid::from_raw) else {
            return Some(false);
        };
        // Signal 0 checks that the process exists; EPERM says it does, under another user.
        let exists = match rustix::process::test_kill_process(pid) {
            Ok(()) => true,
            Err(e) => e == rustix::io::Errno::PERM,
        };
        Some(exists && (self.start_ticks.is_none() || start_ticks(self.pid) == self.start_ticks))
    }

    fn describe(&self) -> String {
        format!("PID {} on {}, started {}", self.pid, self.host, self.started_utc)
    }
}

/// This machine's host name.
pub fn host_name() -> String {
    rustix::system::uname().nodename().to_string_lossy().into_owned()
}

fn boot_id() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok().map(|s| s.trim().to_string())
}

/// Start time of process `pid` in clock ticks since boot, from `/proc/PID/stat` (field 22, counted after
/// the command name, which may hold spaces and parentheses).
fn start_ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(19)?.parse().ok()
}

/// A held output folder; the lock file is removed when this is dropped.
#[derive(Debug)]
pub struct FolderLock {
    path: PathBuf,
}

/// Why a folder could not be locked.
#[derive(Debug)]
pub enum LockError {
    /// The lock file could not be created: the folder cannot be written.
    Create(std::io::Error),
    /// Another run holds the folder, its lock cannot be read, or the disk has no room for the lock: a run
    /// failure, whose error names the lock file.
    Refused(Error),
}

impl FolderLock {
    /// Lock `dir` (an existing folder) for this process. Returns the lock, and a warning when it took over
    /// the lock of a run that is gone.
    pub fn acquire(dir: &Path) -> std::result::Result<(FolderLock, Option<String>), LockError> {
        let path = dir.join(LOCK_FILE);
        let me = Holder::this_process();
        let text = serde_json::to_string_pretty(&me).expect("plain data") + "\n";
        let mut took_over = None;
        // A stale lock is removed and the creation tried again; a run that takes the folder in between
        // wins, and is then the holder named.
        for _ in 0..3 {
            match create_whole(&path, text.as_bytes()) {
                Ok(()) => return Ok((FolderLock { path }, took_over)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) if no_room(&e) => return Err(LockError::Refused(Error::io(&path, e))),
                Err(e) => return Err(LockError::Create(e)),
            }
            // Gone since the creation failed: try again.
            let Some((found, raw)) = read_holder(&path).map_err(LockError::Refused)? else { continue };
            let warning = match found {
                Found::Holder(holder) if holder.running() == Some(false) => format!(
                    "output.dir: took over the lock of {}, which is no longer running: that run was stopped before \
                     it could finish, and any products of it here are incomplete",
                    holder.describe()
                ),
                Found::Holder(holder) => return Err(LockError::Refused(busy(&path, &holder))),
                Found::Unreadable => format!(
                    "output.dir: took over a lock of {} bytes that names no run ({}): seisimage writes its lock whole, \
                     so it was left by a run that could not (a full disk) or by an older version, and any \
                     products of that run here are incomplete",
                    raw.len(),
                    path.display()
                ),
            };
            // Remove it only if it is still the lock just judged: another run may have taken over.
            if read_holder(&path).is_ok_and(|again| again.is_some_and(|(_, bytes)| bytes == raw)) {
                std::fs::remove_file(&path).map_err(|e| LockError::Refused(Error::io(&path, e)))?;
            }
            took_over = Some(warning);
        }
        match read_holder(&path).map_err(LockError::Refused)? {
            Some((Found::Holder(holder), _)) => Err(LockError::Refused(busy(&path, &holder))),
            _ => Err(LockError::Create(std::io::Error::other("the lock was taken and released by others meanwhile"))),
        }
    }
}

impl Drop for FolderLock {
    fn drop(&mut self) {
        // From the folder the run holds: not through whatever its path leads to by now.
        let _ = crate::io::output::remove_file(&self.path);
    }
}

/// Whether `e` says the file system has no room: full (`ENOSPC`), over a quota (`EDQUOT`), or a file past
/// the size this process may write (`EFBIG`). None of them is a mistake in the job.
pub fn no_room(e: &std::io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::ENOSPC | libc::EDQUOT | libc::EFBIG))
}

/// Create the lock at `path` holding `text`, only if no file (or link) has that name, and never in part:
/// it is written under a temporary name, then linked to its name, which fails if anything is there. A
/// failed write (a full disk) leaves no lock. On a file system without hard links it is created in place
/// and removed again if it cannot be written whole.
fn create_whole(path: &Path, text: &[u8]) -> std::io::Result<()> {
    let io = |e: Error| match e {
        Error::Io { source, .. } => source,
        other => std::io::Error::other(other.to_string()),
    };
    // Dropped unfinished, the temporary file is removed.
    let (temp, mut file) = TempOutput::create(path).map_err(io)?;
    file.write_all(text)?;
    match std::fs::hard_link(temp.path(), path) {
        Err(e) if matches!(e.raw_os_error(), Some(libc::EPERM | libc::EOPNOTSUPP | libc::ENOSYS)) => {
            drop(temp);
            create_in_place(path, text)
        }
        linked => linked,
    }
}

fn create_in_place(path: &Path, text: &[u8]) -> std::io::Result<()> {
    let mut file = create_exclusive(path)?;
    file.write_all(text).inspect_err(|_| {
        let _ = std::fs::remove_file(path);
    })
}

/// Create `path` for writing only if no file (or link) has that name.
fn create_exclusive(path: &Path) -> std::io::Result<File> {
    OpenOptions::new().write(true).create_new(true).mode(0o644).custom_flags(libc::O_NOFOLLOW).open(path)
}

/// What a lock file says.
enum Found {
    /// The run that holds the folder.
    Holder(Holder),
    /// A plain file that names no run (empty, cut short, or not a lock at all).
    Unreadable,
}

/// What the lock file says, and its bytes; `None` when there is no lock (any more). A lock written by an
/// older version may be seen before it is whole: it is read again for a moment before it is called
/// unreadable. A link or anything but a plain file under the lock's name is an error.
fn read_holder(path: &Path) -> Result<Option<(Found, Vec<u8>)>> {
    let unreadable = |why: String| {
        let message = format!(
            "{why}; seisimage keeps this file in an output folder while a run writes there: if no run uses the \
             folder, delete it"
        );
        Error::io(path, std::io::Error::other(message))
    };
    let mut last = Vec::new();
    for attempt in 0..5 {
        if attempt > 0 {
            std::thread::sleep(Duration::from_millis(100));
        }
        // Without waiting: a FIFO planted under the name would block the open until someone writes to it.
        let flags = libc::O_NOFOLLOW | libc::O_NONBLOCK;
        let mut file = match OpenOptions::new().read(true).custom_flags(flags).open(path) {
            Ok(f) => f,
            Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
                return Err(unreadable("a symbolic link has the name of the folder's lock".into()))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::io(path, e)),
        };
        if !file.metadata().map_err(|e| Error::io(path, e))?.is_file() {
            return Err(unreadable("the folder's lock is not a plain file".into()));
        }
        let mut bytes = Vec::new();
        (&mut file).take(MAX_LOCK_BYTES).read_to_end(&mut bytes).map_err(|e| Error::io(path, e))?;
        if let Ok(holder) = serde_json::from_slice::<Holder>(&bytes) {
            return Ok(Some((Found::Holder(holder), bytes)));
        }
        last = bytes;
    }
    Ok(Some((Found::Unreadable, last)))
}

/// The error of a folder held by `holder`.
fn busy(path: &Path, holder: &Holder) -> Error {
    let message = format!(
        "the output folder is in use by another seisimage run: {}; wait for it to end, or give this job another \
         output.dir (if that run is gone, its node having failed, delete this lock file)",
        holder.describe()
    );
    Error::io(path, std::io::Error::new(std::io::ErrorKind::ResourceBusy, message))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lock names this process, keeps a second taker out, and is gone once dropped.
    #[test]
    fn a_lock_is_exclusive_until_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let (lock, took_over) = FolderLock::acquire(dir.path()).unwrap();
        assert_eq!(took_over, None);
        let Some((Found::Holder(holder), _)) = read_holder(&dir.path().join(LOCK_FILE)).unwrap() else {
            panic!("the lock names no holder")
        };
        assert_eq!((holder.pid, holder.host.as_str()), (std::process::id(), host_name().as_str()));
        assert_eq!(holder.running(), Some(true));
        match FolderLock::acquire(dir.path()) {
            Err(LockError::Refused(e)) => {
                assert!(e.to_string().contains(&format!("PID {} on {}", std::process::id(), host_name())), "{e}")
            }
            other => panic!("a second lock was granted: {other:?}"),
        }
        drop(lock);
        assert!(!dir.path().join(LOCK_FILE).exists());
        assert!(FolderLock::acquire(dir.path()).is_ok());
    }

    /// A process id that another process took after a reboot, or after the holder ended, is told apart by
    /// its boot and start time.
    #[test]
    fn a_reused_process_id_is_not_the_holder() {
        let mut holder = Holder::this_process();
        assert_eq!(holder.running(), Some(true));
        holder.start_ticks = holder.start_ticks.map(|t| t + 1);
        assert_eq!(holder.running(), Some(false));
        let mut holder = Holder::this_process();
        holder.boot_id = Some("another-boot".into());
        assert_eq!(holder.running(), Some(false));
        holder.host = "another-host".into();
        assert_eq!(holder.running(), None);
    }
}
