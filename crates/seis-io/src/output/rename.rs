//! A finished temporary entry renamed to its final name, the one step that commits an output file or
//! folder ([`super::TempOutput`], [`super::tree::TempFolder`]), and what both keep of the entry until then.

use std::path::PathBuf;
use std::sync::Arc;

use rustix::fs::FileType;

use super::{move_aside, Folder, Placed};
use crate::files::FileId;
use seis_core::error::{IoContext, Result};

/// A temporary entry of a folder, a file ([`super::TempOutput`]) or a folder ([`super::tree::TempFolder`]),
/// and the final name it takes when committed ([`Staged::place`]).
#[derive(Debug)]
pub(super) struct Staged {
    pub(super) folder: Arc<Folder>,
    pub(super) final_name: String,
    pub(super) temp_name: String,
    /// For messages, and for the caller once committed.
    pub(super) final_path: PathBuf,
    pub(super) temp_path: PathBuf,
    /// What the entry was when it was made: it is reopened, and renamed, only if it still is.
    pub(super) id: FileId,
    /// Renamed into place: nothing is left to remove.
    pub(super) committed: bool,
}

impl Staged {
    /// A new entry `temp_name` of `folder`, `id` as made, to become `final_name` (`final_path`).
    pub(super) fn new(
        folder: Arc<Folder>,
        final_name: String,
        temp_name: String,
        final_path: PathBuf,
        id: FileId,
    ) -> Self {
        let temp_path = folder.join(&temp_name);
        Staged { folder, final_name, temp_name, final_path, temp_path, id, committed: false }
    }

    /// Rename the entry to its final name. Never over a device node, a FIFO or a socket; what is there is
    /// first moved aside when `aside` says so of its type, and put back if the rename fails. Returns where
    /// the entry now is, and the name what was there was moved aside to.
    pub(super) fn place(&mut self, aside: impl Fn(FileType) -> bool) -> Result<(Placed, Option<String>)> {
        let moved = self.rename(aside)?;
        self.committed = true;
        let placed = Placed {
            folder: self.folder.clone(),
            name: std::mem::take(&mut self.final_name),
            path: std::mem::take(&mut self.final_path),
        };
        Ok((placed, moved))
    }

    fn rename(&self, aside: impl Fn(FileType) -> bool) -> Result<Option<String>> {
        let (folder, name, path) = (&self.folder, self.final_name.as_str(), &self.final_path);
        if folder.entry(&self.temp_name).ok().map(|s| FileId::of_stat(&s)) != Some(self.id) {
            let message =
                format!("{} was replaced by something else before it was committed", self.temp_path.display());
            return Err(std::io::Error::other(message)).at(path);
        }
        let there = folder.entry(name).ok().map(|s| FileType::from_raw_mode(s.st_mode));
        if there.is_some_and(|t| ![FileType::RegularFile, FileType::Symlink, FileType::Directory].contains(&t)) {
            let message = "it is not a regular file or folder (a device, a FIFO or a socket): it is not replaced";
            return Err(std::io::Error::new(std::io::ErrorKind::AlreadyExists, message)).at(path);
        }
        let mut moved = None;
        if there.is_some_and(&aside) {
            match move_aside(folder, name) {
                Ok(aside) => moved = Some(aside),
                // Gone since: another writer of the name moved it; there is nothing to move aside.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(e).at(path),
            }
        }
        if let Err(e) = folder.rename(&self.temp_name, name) {
            // The name could not be taken: what was there goes back under it, as if never moved.
            if let Some(aside) = moved {
                let _ = folder.rename(&aside, name);
            }
            return Err(e).at(path);
        }
        Ok(moved)
    }
}
