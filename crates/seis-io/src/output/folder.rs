//! Folders held open, so that the files of a run are made, renamed and removed in the folder it locked,
//! whatever its path comes to lead to meanwhile.

use std::fs::File;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use rustix::fs::{AtFlags, Mode, OFlags};

use crate::files::FileId;

/// A folder held open: files in it are made, opened, renamed and removed relative to the open folder,
/// never through its path again, so that whatever happens to the path meanwhile (the folder renamed, a
/// link put in its place) they stay in the folder opened.
#[derive(Debug)]
pub struct Folder {
    fd: OwnedFd,
    /// Where the folder was when it was opened: for messages, and to know it again ([`hold`]).
    path: PathBuf,
    id: FileId,
}

impl Folder {
    /// The folder at `dir`, made private to this user (mode 0700) if it is not there, opened without
    /// following a link and checked as opened (see [`crate::files::not_private`]), so that what is
    /// written in it next goes into the folder checked.
    pub fn private(dir: &Path) -> seis_core::error::Result<Folder> {
        use seis_core::error::{Error, IoContext};
        crate::files::make_private_dir(dir)?;
        let folder = Folder::open_no_link(dir).at(dir)?;
        match folder.not_private() {
            Some(why) => Err(Error::io(dir, std::io::Error::new(std::io::ErrorKind::PermissionDenied, why))),
            None => Ok(folder),
        }
    }

    /// Why the folder opened is not private to this user, if it is not, whatever its path leads to now.
    pub fn not_private(&self) -> Option<String> {
        match self.stat() {
            Ok(stat) => crate::files::why_not_private(&self.path, true, stat.st_uid, stat.st_mode),
            Err(e) => Some(format!("{}: {e}", self.path.display())),
        }
    }

    /// Open the folder at `path`, links to it followed (the user may name a folder by a link of theirs).
    pub fn open(path: &Path) -> std::io::Result<Folder> {
        Folder::open_with(path, OFlags::empty())
    }

    /// Open the folder at `path` if it is one, and not a link to one.
    pub fn open_no_link(path: &Path) -> std::io::Result<Folder> {
        Folder::open_with(path, OFlags::NOFOLLOW)
    }

    /// The folder `name` in this one, if it is one and not a link to one.
    pub fn subfolder(&self, name: &str) -> std::io::Result<Folder> {
        Folder::open_at(&self.fd, Path::new(name), self.join(name), OFlags::NOFOLLOW)
    }

    pub(super) fn open_with(path: &Path, flags: OFlags) -> std::io::Result<Folder> {
        let at = if path.as_os_str().is_empty() { Path::new(".") } else { path };
        Folder::open_at(rustix::fs::CWD, at, path.to_path_buf(), flags)
    }

    pub(super) fn open_at(
        dir: impl std::os::fd::AsFd,
        at: &Path,
        path: PathBuf,
        flags: OFlags,
    ) -> std::io::Result<Folder> {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC | flags;
        let fd = match rustix::fs::openat(&dir, at, flags, Mode::empty()) {
            Ok(fd) => fd,
            // O_DIRECTORY refuses a file and, with O_NOFOLLOW, a link: say which.
            Err(rustix::io::Errno::NOTDIR | rustix::io::Errno::LOOP) => {
                let link = rustix::fs::statat(&dir, at, AtFlags::SYMLINK_NOFOLLOW)
                    .is_ok_and(|s| rustix::fs::FileType::from_raw_mode(s.st_mode) == rustix::fs::FileType::Symlink);
                let what = if link { "it is a symbolic link, not a folder" } else { "it is not a folder" };
                return Err(std::io::Error::new(std::io::ErrorKind::NotADirectory, what));
            }
            Err(e) => return Err(e.into()),
        };
        let id = FileId::of_stat(&rustix::fs::fstat(&fd)?);
        Ok(Folder { fd, path, id })
    }

    /// Where the folder was when it was opened.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The folder's owner and mode, as the open folder has them now.
    pub fn stat(&self) -> std::io::Result<rustix::fs::Stat> {
        Ok(rustix::fs::fstat(&self.fd)?)
    }

    /// Whether its path (links followed) still leads to this folder.
    pub fn still_at_its_path(&self) -> bool {
        crate::files::FileId::of_path(&self.path) == Some(self.id)
    }

    /// `name` in the folder, for messages.
    pub fn join(&self, name: &str) -> PathBuf {
        self.path.join(name)
    }

    /// A new file `name` in the folder, created exclusively with `mode` (before the umask): never through
    /// a link, never an existing file.
    pub(super) fn create_new(&self, name: &str, mode: u32) -> std::io::Result<File> {
        let flags = OFlags::RDWR | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        Ok(File::from(rustix::fs::openat(&self.fd, name, flags, Mode::from_raw_mode(mode))?))
    }

    /// A new folder `name` in the folder, made with `mode` (before the umask); never an existing one.
    pub(super) fn create_dir(&self, name: &str, mode: u32) -> std::io::Result<()> {
        Ok(rustix::fs::mkdirat(&self.fd, name, Mode::from_raw_mode(mode))?)
    }

    /// Flush the folder's entries to disk.
    pub(super) fn sync(&self) -> std::io::Result<()> {
        Ok(rustix::fs::fsync(&self.fd)?)
    }

    /// The file `name` in the folder, never through a link; without waiting, so that a FIFO does not block.
    pub fn open_file(&self, name: &str, write: bool) -> std::io::Result<File> {
        let access = if write { OFlags::RDWR } else { OFlags::RDONLY };
        let flags = access | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
        Ok(File::from(rustix::fs::openat(&self.fd, name, flags, Mode::empty())?))
    }

    /// The entry `name` itself, a link not followed.
    pub(super) fn entry(&self, name: &str) -> std::io::Result<rustix::fs::Stat> {
        Ok(rustix::fs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW)?)
    }

    pub(super) fn rename(&self, from: &str, to: &str) -> std::io::Result<()> {
        Ok(rustix::fs::renameat(&self.fd, from, &self.fd, to)?)
    }

    /// Remove the file (or link) `name` in the folder.
    pub fn remove(&self, name: &str) -> std::io::Result<()> {
        Ok(rustix::fs::unlinkat(&self.fd, name, AtFlags::empty())?)
    }

    /// Remove the empty folder `name` in the folder.
    pub fn remove_dir(&self, name: &str) -> std::io::Result<()> {
        Ok(rustix::fs::unlinkat(&self.fd, name, AtFlags::REMOVEDIR)?)
    }

    /// The names in the folder (but `.` and `..`).
    pub fn names(&self) -> std::io::Result<Vec<String>> {
        let mut dir = rustix::fs::Dir::read_from(&self.fd)?;
        let mut names = Vec::new();
        while let Some(entry) = dir.read() {
            let name = entry?.file_name().to_string_lossy().into_owned();
            if name != "." && name != ".." {
                names.push(name);
            }
        }
        Ok(names)
    }
}

/// The folders held by this process ([`hold`]).
static HELD: Mutex<Vec<Arc<Folder>>> = Mutex::new(Vec::new());

/// A folder held open for the files written in it while this lives (see [`hold`]).
#[derive(Debug)]
pub struct HeldFolder(Arc<Folder>);

impl HeldFolder {
    pub fn folder(&self) -> &Folder {
        &self.0
    }
}

impl Drop for HeldFolder {
    fn drop(&mut self) {
        let mut held = HELD.lock().unwrap_or_else(|e| e.into_inner());
        held.retain(|f| !Arc::ptr_eq(f, &self.0));
    }
}

/// Hold the folder at `path` open: while the result lives, every file this module writes under a name in
/// `path` (`path/NAME`, as the run names its outputs) is made in the folder opened now, wherever it is
/// moved and whatever takes its place.
pub fn hold(path: &Path) -> std::io::Result<HeldFolder> {
    let folder = Arc::new(Folder::open(path)?);
    HELD.lock().unwrap_or_else(|e| e.into_inner()).push(folder.clone());
    Ok(HeldFolder(folder))
}

/// The folder of `path`, held or opened now, and the name in it.
pub(super) fn folder_of(path: &Path) -> std::io::Result<(Arc<Folder>, String)> {
    let name = match path.file_name() {
        Some(name) => name.to_string_lossy().into_owned(),
        None => return Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a file name")),
    };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let held = HELD.lock().unwrap_or_else(|e| e.into_inner()).iter().rev().find(|f| f.path == dir).cloned();
    let folder = match held {
        Some(folder) => folder,
        None => Arc::new(Folder::open(dir)?),
    };
    Ok((folder, name))
}

/// Remove the file (or link) at `path`, in its folder as held ([`hold`]) when it is.
pub fn remove_file(path: &Path) -> std::io::Result<()> {
    let (folder, name) = folder_of(path)?;
    folder.remove(&name)
}
