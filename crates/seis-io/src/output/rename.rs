//! Renaming a finished temporary entry to its final name, the one step that commits an output file or
//! folder ([`super::TempOutput`], [`super::tree::TempFolder`]).

use std::path::Path;

use rustix::fs::FileType;

use super::{move_aside, Folder};
use crate::files::FileId;
use seis_core::error::{IoContext, Result};

/// A temporary entry of a folder, to be renamed to its final name ([`Renaming::rename`]): a file
/// ([`TempOutput`]) or a folder ([`tree::TempFolder`]).
pub(super) struct Renaming<'a> {
    pub(super) temp: &'a str,
    /// For messages.
    pub(super) temp_path: &'a Path,
    /// What the entry was when it was made: the rename refuses anything else under its name.
    pub(super) id: FileId,
}

impl Renaming<'_> {
    /// Rename the entry to `name` (`path` for messages) in `folder`. Never over a device node, a FIFO or a
    /// socket; what is there is first moved aside when `aside` says so of its type, and put back if the
    /// rename fails. Returns the name it was moved aside to.
    pub(super) fn rename(
        &self,
        folder: &Folder,
        name: &str,
        path: &Path,
        aside: impl Fn(FileType) -> bool,
    ) -> Result<Option<String>> {
        if folder.entry(self.temp).ok().map(|s| FileId::of_stat(&s)) != Some(self.id) {
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
        if let Err(e) = folder.rename(self.temp, name) {
            // The name could not be taken: what was there goes back under it, as if never moved.
            if let Some(aside) = moved {
                let _ = folder.rename(&aside, name);
            }
            return Err(e).at(path);
        }
        Ok(moved)
    }
}
