//! Outputs that are folders (an MDIO dataset is a Zarr folder): written under a hidden name of the same
//! form as a file's (`.NAME.partial-PID-HOST-RANDOM`, so that [`super::remove_stale`] knows the folder of a
//! run that died), measured, and renamed into place with the files of their run.
//!
//! Everything is done relative to folders held open and never through a link: the folder is made, walked,
//! flushed, renamed and removed by its name in its parent held open, and every entry inside it by its name
//! in the folder above it opened without following links.

use std::path::{Path, PathBuf};

use rustix::fs::FileType;

use super::folder::folder_of;
use super::rename::Staged;
use super::PARTIAL;
use super::{hidden_name_for, start_writeback, FileDigest, Folder, Placed, Replaced, SealedOutput};
use crate::files::FileId;
use seis_core::error::{IoContext, Result};

/// How deep a folder output may nest: an MDIO array's chunks are `ARRAY/c/I/J/K`.
const MAX_DEPTH: usize = 16;

/// A folder being written under a temporary name; removed with all it holds on drop unless committed.
#[derive(Debug)]
pub struct TempFolder {
    staged: Staged,
}

impl TempFolder {
    /// Make the temporary folder of `final_path` beside it (so that the rename is atomic). Its permissions
    /// are what the umask leaves of all, like any folder a program makes.
    pub fn create(final_path: impl AsRef<Path>) -> Result<TempFolder> {
        let final_path = final_path.as_ref();
        let (folder, final_name) = folder_of(final_path).at(final_path)?;
        let make = |hidden: &str| folder.create_dir(hidden, 0o777);
        let ((), temp_name) = hidden_name_for(&folder, &final_name, PARTIAL, make).at(final_path)?;
        let id = FileId::of_stat(&folder.entry(&temp_name).at(final_path)?);
        Ok(TempFolder { staged: Staged::new(folder, final_name, temp_name, final_path.to_path_buf(), id) })
    }

    /// Where the folder is written now.
    pub fn path(&self) -> &Path {
        &self.staged.temp_path
    }

    /// Where the folder will be once committed.
    pub fn final_path(&self) -> &Path {
        &self.staged.final_path
    }

    /// The temporary folder opened, if it is still the folder made.
    fn open(&self) -> std::io::Result<Folder> {
        let s = &self.staged;
        let opened = s.folder.subfolder(&s.temp_name)?;
        if FileId::of_stat(&opened.stat()?) != s.id {
            let message = format!("{} was replaced by something else while it was written", s.temp_path.display());
            return Err(std::io::Error::other(message));
        }
        Ok(opened)
    }

    /// The folder is complete: start writing its files to disk and measure it ([`tree_digest`]).
    pub fn seal(self) -> Result<SealedOutput> {
        let digest = self.open().and_then(|f| tree_digest(&f)).at(self.final_path())?;
        Ok(SealedOutput { out: Pending::Folder(self), digest })
    }

    /// Flush the folder to disk and move it to its final name (an earlier dataset there is replaced).
    pub fn commit(self) -> Result<PathBuf> {
        self.sync().at(self.final_path())?;
        let mut replaced = Replaced::default();
        let placed = self.into_place(Some(&mut replaced))?;
        drop(replaced);
        Ok(placed.path)
    }

    fn sync(&self) -> std::io::Result<()> {
        sync_tree(&self.open()?, 0)
    }

    /// Move the (flushed) folder to its final name. Only a folder (an earlier output) or a file or link is
    /// replaced there; with `replaced` it is first moved aside into it.
    fn into_place(mut self, replaced: Option<&mut Replaced>) -> Result<Placed> {
        // A rename puts a folder only over an empty folder: whatever is there is moved aside first.
        let (placed, aside) = self.staged.place(|_| true)?;
        match replaced {
            Some(replaced) => replaced.0.extend(aside.map(|name| (placed.folder.clone(), name))),
            None => {
                if let Some(name) = aside {
                    let _ = remove_entry(&placed.folder, &name);
                }
            }
        }
        // The rename is on disk once the parent folder is.
        let _ = placed.folder.sync();
        Ok(placed)
    }
}

impl Drop for TempFolder {
    fn drop(&mut self) {
        if !self.staged.committed {
            let _ = remove_tree(&self.staged.folder, &self.staged.temp_name, 0);
        }
    }
}

/// What a [`SealedOutput`] holds: a file or a folder under its temporary name.
#[derive(Debug)]
pub(super) enum Pending {
    File(super::TempOutput),
    Folder(TempFolder),
}

impl Pending {
    pub(super) fn final_path(&self) -> &Path {
        match self {
            Pending::File(f) => f.final_path(),
            Pending::Folder(f) => f.final_path(),
        }
    }

    /// Flush it to disk.
    pub(super) fn sync(&self) -> std::io::Result<()> {
        match self {
            Pending::File(f) => f.reopen().and_then(|f| f.sync_all()),
            Pending::Folder(f) => f.sync(),
        }
    }

    pub(super) fn into_place(self, replaced: Option<&mut Replaced>) -> Result<Placed> {
        match self {
            Pending::File(f) => f.into_place(replaced),
            Pending::Folder(f) => f.into_place(replaced),
        }
    }
}

/// Remove the entry `name` of `folder`: a file or link, or a folder with everything in it.
pub(super) fn remove_entry(folder: &Folder, name: &str) -> std::io::Result<()> {
    match folder.remove(name) {
        Err(e) if e.kind() == std::io::ErrorKind::IsADirectory || e.raw_os_error() == Some(libc::EPERM) => {
            remove_tree(folder, name, 0)
        }
        other => other,
    }
}

/// Remove the folder `name` of `folder` and everything in it, links removed and never followed.
pub(super) fn remove_tree(folder: &Folder, name: &str, depth: usize) -> std::io::Result<()> {
    if depth > MAX_DEPTH {
        return Err(std::io::Error::other(format!("{} nests too deep", folder.join(name).display())));
    }
    let inner = folder.subfolder(name)?;
    for entry in inner.names()? {
        let is_dir = inner.entry(&entry).is_ok_and(|s| FileType::from_raw_mode(s.st_mode) == FileType::Directory);
        if is_dir {
            remove_tree(&inner, &entry, depth + 1)?;
        } else {
            inner.remove(&entry)?;
        }
    }
    folder.remove_dir(name)
}

/// The paths of the files in `folder` and below it, from `prefix`.
fn walk(folder: &Folder, prefix: &str, depth: usize, out: &mut Vec<String>) -> std::io::Result<()> {
    if depth > MAX_DEPTH {
        return Err(std::io::Error::other(format!("{} nests too deep", folder.path().display())));
    }
    for name in folder.names()? {
        let kind = FileType::from_raw_mode(folder.entry(&name)?.st_mode);
        let path = format!("{prefix}/{name}");
        match kind {
            FileType::Directory => walk(&folder.subfolder(&name)?, &path, depth + 1, out)?,
            FileType::RegularFile => out.push(path),
            _ => return Err(std::io::Error::other(format!("{path}: neither a file nor a folder"))),
        }
    }
    Ok(())
}

/// Size and SHA-256 of a folder: its bytes are those of all its files; its SHA-256 that of the list
/// `sha256sum` prints for its files, their paths from inside it (`./amplitude/zarr.json`) in byte order,
/// as `find . -type f | LC_ALL=C sort | xargs sha256sum | sha256sum` computes it inside the folder.
pub fn tree_digest(folder: &Folder) -> std::io::Result<FileDigest> {
    use sha2::{Digest, Sha256};
    let mut files = Vec::new();
    walk(folder, ".", 0, &mut files)?;
    files.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
    let mut listing = Sha256::new();
    let mut bytes = 0;
    for path in &files {
        let (dir, name) = path.rsplit_once('/').expect("every path starts with ./");
        let parent = open_relative(folder, dir)?;
        let mut file = parent.open_file(name, false)?;
        start_writeback(&file);
        let digest = FileDigest::read(&mut file)?;
        bytes += digest.bytes;
        listing.update(format!("{}  {path}\n", digest.sha256).as_bytes());
    }
    Ok(FileDigest { bytes, sha256: super::hex(&listing.finalize()) })
}

/// The folder at the relative path `dir` (`./a/b`) inside `folder`, opened without following links.
fn open_relative(folder: &Folder, dir: &str) -> std::io::Result<Folder> {
    let mut parts = dir.split('/').skip(1);
    let Some(first) = parts.next() else { return folder.subfolder(".") };
    parts.try_fold(folder.subfolder(first)?, |f, part| f.subfolder(part))
}

/// Flush every file under `folder` to disk, then the folders themselves.
fn sync_tree(folder: &Folder, depth: usize) -> std::io::Result<()> {
    if depth > MAX_DEPTH {
        return Err(std::io::Error::other(format!("{} nests too deep", folder.path().display())));
    }
    for name in folder.names()? {
        match FileType::from_raw_mode(folder.entry(&name)?.st_mode) {
            FileType::Directory => sync_tree(&folder.subfolder(&name)?, depth + 1)?,
            FileType::RegularFile => folder.open_file(&name, false)?.sync_all()?,
            _ => {}
        }
    }
    folder.sync()
}

/// Whether `name` in `folder` is the folder of a run that died, as [`super::remove_stale`] may remove it:
/// a folder (not a link) of this user's.
pub(super) fn stale_folder(meta: &std::fs::Metadata, me: u32) -> bool {
    use std::os::unix::fs::MetadataExt;
    meta.file_type().is_dir() && meta.uid() == me
}
