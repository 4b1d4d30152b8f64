//! Outputs are written under a temporary name in the destination folder and renamed into place only when
//! complete, so an interrupted or failed job never leaves a file that looks finished.
//!
//! Output folders may be shared (a project folder on a cluster), so nothing here trusts a name in them:
//! every temporary file is created exclusively (`O_CREAT | O_EXCL`, which also refuses a link planted at
//! the name) under a name with a random part; a file is reopened only without following links and only if
//! it is still the file created; and a final name is taken by rename, which replaces whatever entry is
//! there rather than writing through it. The names carry the process and its host, so that a later run
//! can tell the temporary files of a run that died from those of one still going ([`remove_stale`]).
//!
//! Nor is a folder's name trusted to keep leading to the same folder: every file is created, renamed and
//! removed relative to its folder held open ([`Folder`]), and a run holds its output folder open from the
//! moment it locks it ([`hold`]), so that a folder renamed and replaced by a link meanwhile does not send
//! the run's files into the link's target.

use std::fs::File;
use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::files::FileId;
use seis_core::error::{IoContext, Result};

mod folder;
mod rename;
mod tree;
use folder::folder_of;
pub use folder::{hold, remove_file, Folder, HeldFolder};
use rename::Staged;
use rustix::fs::FileType;
pub use tree::{tree_digest, TempFolder};

/// The tags of seisimage's hidden files: `.NAME.partial-PID-HOST-RANDOM` while a file is written,
/// `.NAME.replaced-PID-HOST-RANDOM` for an earlier run's file moved aside.
const PARTIAL: &str = "partial";
const REPLACED: &str = "replaced";
/// Random characters in a hidden name.
const RANDOM_CHARS: usize = 8;
/// Tries at a free hidden name before giving up (each has 62^8 names to choose from).
const NAME_TRIES: usize = 64;

/// A file being written under a temporary name; removed on drop unless [`TempOutput::commit`] was called.
#[derive(Debug)]
pub struct TempOutput {
    staged: Staged,
}

impl TempOutput {
    /// Create the temporary file of `final_path` in its folder (so that the rename is atomic), for writing.
    /// Its permissions are what the umask leaves of read and write for all, like any file a program creates.
    pub fn create(final_path: impl AsRef<Path>) -> Result<(TempOutput, File)> {
        Self::create_with_mode(final_path.as_ref(), 0o666)
    }

    /// [`TempOutput::create`] for a file only its owner may read and write (0600).
    pub fn create_private(final_path: impl AsRef<Path>) -> Result<(TempOutput, File)> {
        Self::create_with_mode(final_path.as_ref(), 0o600)
    }

    fn create_with_mode(final_path: &Path, mode: u32) -> Result<(TempOutput, File)> {
        let (folder, final_name) = folder_of(final_path).at(final_path)?;
        Self::create_in(folder, final_name, final_path.to_path_buf(), mode)
    }

    /// [`TempOutput::create`] for the file `name` in `folder`, whatever its path leads to now.
    pub fn create_in_folder(folder: &Arc<Folder>, name: &str, mode: u32) -> Result<(TempOutput, File)> {
        Self::create_in(folder.clone(), name.to_string(), folder.join(name), mode)
    }

    fn create_in(
        folder: Arc<Folder>,
        final_name: String,
        final_path: PathBuf,
        mode: u32,
    ) -> Result<(TempOutput, File)> {
        let (file, temp_name) = hidden_file(&folder, &final_name, PARTIAL, mode).at(&final_path)?;
        let id = FileId::of(&file.metadata().at(&final_path)?);
        Ok((TempOutput { staged: Staged::new(folder, final_name, temp_name, final_path, id) }, file))
    }

    /// Where the file is written now.
    pub fn path(&self) -> &Path {
        &self.staged.temp_path
    }

    /// Where the file will be once committed.
    pub fn final_path(&self) -> &Path {
        &self.staged.final_path
    }

    /// The temporary file again, for reading and writing (to complete what a writer left, such as headers
    /// copied from an input): never through a link, and only if it is the file created.
    pub fn reopen_for_update(&self) -> Result<File> {
        self.reopen_with(true).at(self.final_path())
    }

    /// The temporary file again, for reading: never through a link, and only if it is the file created.
    fn reopen(&self) -> std::io::Result<File> {
        self.reopen_with(false)
    }

    fn reopen_with(&self, write: bool) -> std::io::Result<File> {
        let s = &self.staged;
        let file = s.folder.open_file(&s.temp_name, write)?;
        if FileId::of(&file.metadata()?) != s.id {
            return Err(std::io::Error::other(format!(
                "{} was replaced by another file while it was written",
                s.temp_path.display()
            )));
        }
        Ok(file)
    }

    /// Flush the temporary file to disk and move it to its final name.
    pub fn commit(self) -> Result<PathBuf> {
        self.reopen().and_then(|f| f.sync_all()).at(self.final_path())?;
        self.into_place(None).map(|placed| placed.path)
    }

    /// [`TempOutput::commit`], measuring the file: its size and SHA-256, read back while the disk writes it.
    pub fn commit_digested(self) -> Result<(PathBuf, FileDigest)> {
        self.seal()?.commit()
    }

    /// The temporary file is complete: start writing it to disk and measure it (size and SHA-256, read back
    /// while the disk writes). Committed later, alone or with others ([`commit_together`]). The file is
    /// closed again, so that a run with many products does not hold a descriptor for each until the end.
    pub fn seal(self) -> Result<SealedOutput> {
        let mut file = self.reopen().at(self.final_path())?;
        start_writeback(&file);
        let digest = FileDigest::read(&mut file).at(self.final_path())?;
        Ok(SealedOutput { out: tree::Pending::File(self), digest })
    }

    /// Move the (flushed) temporary file to its final name. With `replaced`, a file already there is first
    /// moved aside into it, so that the rename does not wait for the file system to free that file.
    fn into_place(mut self, replaced: Option<&mut Replaced>) -> Result<Placed> {
        // A folder already there is not moved aside: the rename into it fails, as it should.
        let keep = replaced.is_some();
        let (placed, aside) = self.staged.place(|t| keep && t != FileType::Directory)?;
        if let Some(replaced) = replaced {
            replaced.0.extend(aside.map(|name| (placed.folder.clone(), name)));
        }
        Ok(placed)
    }
}

/// A file moved to its final name.
struct Placed {
    folder: Arc<Folder>,
    name: String,
    path: PathBuf,
}

/// The part of a hidden name that says which process on which host made it: `PID-HOST`, the host as the
/// first 8 hexadecimal digits of the SHA-256 of its name (short, and free of characters a name cannot
/// hold).
fn owner_tag() -> &'static str {
    static TAG: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    TAG.get_or_init(|| format!("{}-{}", std::process::id(), host_tag()))
}

/// `bytes` in lower-case hexadecimal, two digits each: how digests are written.
pub fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes.iter().fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// This host's tag in hidden names.
fn host_tag() -> String {
    use sha2::{Digest, Sha256};
    let mut name = [0u8; 256];
    // SAFETY: gethostname writes at most `name.len()` bytes into the buffer.
    let len = match unsafe { libc::gethostname(name.as_mut_ptr().cast(), name.len()) } {
        0 => name.iter().position(|&b| b == 0).unwrap_or(name.len()),
        _ => 0,
    };
    hex(&Sha256::digest(&name[..len])[..4])
}

/// `.NAME.TAG-PID-HOST-`: the start of a hidden name for the file `name`.
fn hidden_prefix(name: &str, tag: &str) -> String {
    format!(".{name}.{tag}-{}-", owner_tag())
}

/// A hidden name for the file `name` that is not yet taken in `folder` (`.NAME.TAG-PID-HOST-RANDOM`), as
/// `take` finds: it takes the name it is given, or says `AlreadyExists`.
fn hidden_name_for<T>(
    folder: &Folder,
    name: &str,
    tag: &str,
    mut take: impl FnMut(&str) -> std::io::Result<T>,
) -> std::io::Result<(T, String)> {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    let prefix = hidden_prefix(name, tag);
    for _ in 0..NAME_TRIES {
        let mut random = [0u8; RANDOM_CHARS];
        rustix::rand::getrandom(&mut random, rustix::rand::GetRandomFlags::empty())?;
        let hidden: String =
            prefix.chars().chain(random.iter().map(|b| ALPHABET[*b as usize % ALPHABET.len()] as char)).collect();
        match take(&hidden) {
            Ok(taken) => return Ok((taken, hidden)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    let message = format!("no free hidden name for {} after {NAME_TRIES} tries", folder.join(name).display());
    Err(std::io::Error::new(std::io::ErrorKind::AlreadyExists, message))
}

/// A new file for `name` in `folder` under a hidden name of its own (`.NAME.TAG-PID-HOST-RANDOM`), created
/// exclusively with `mode` (before the umask).
fn hidden_file(folder: &Folder, name: &str, tag: &str, mode: u32) -> std::io::Result<(File, String)> {
    hidden_name_for(folder, name, tag, |hidden| folder.create_new(hidden, mode))
}

/// Move the file `name` in `folder` aside to a hidden name of its own (`.NAME.replaced-PID-HOST-RANDOM`),
/// and return that name.
fn move_aside(folder: &Folder, name: &str) -> std::io::Result<String> {
    // The random part makes the name one nobody has taken; a rename would replace it if someone had.
    let free = |hidden: &str| match folder.entry(hidden) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Ok(_) => Err(std::io::Error::from(std::io::ErrorKind::AlreadyExists)),
        Err(e) => Err(e),
    };
    let ((), hidden) = hidden_name_for(folder, name, REPLACED, free)?;
    folder.rename(name, &hidden)?;
    Ok(hidden)
}

/// Remove the hidden files that runs of seisimage on this host left in `dir` when they were killed
/// (SIGKILL, a crash, a power cut, a folder made read-only before they could clean up): files named
/// `.NAME.partial-PID-HOST-RANDOM` or `.NAME.replaced-PID-HOST-RANDOM` whose host is this one and whose
/// process no longer runs. Only regular files and folders (an MDIO dataset being written, see
/// [`TempFolder`]) owned by the user running seisimage are touched, a folder with everything in it, links
/// inside it removed and never followed; a link, a file or folder of another user or of another host, and
/// one of a process still running are left alone. Returns how many were removed.
pub fn remove_stale(dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else { return 0 };
    let host = host_tag();
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|n| stale_pid(n, &host)) else { continue };
        if process_runs(pid) {
            continue;
        }
        let path = entry.path();
        let gone = match std::fs::symlink_metadata(&path) {
            Ok(m) if m.file_type().is_file() && m.uid() == me => std::fs::remove_file(&path).is_ok(),
            Ok(m) if tree::stale_folder(&m, me) => Folder::open_no_link(dir)
                .and_then(|parent| tree::remove_tree(&parent, &name.to_string_lossy(), 0))
                .is_ok(),
            _ => continue,
        };
        removed += usize::from(gone);
    }
    if removed > 0 {
        tracing::info!("removed {removed} temporary file(s) left in {} by runs that ended abruptly", dir.display());
    }
    removed
}

/// A hidden name of seisimage's, taken apart: `.NAME.TAG-PID-HOST-RANDOM`, a file being written under
/// the name NAME or one moved aside from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HiddenName<'a> {
    /// The name the file is written for (or was moved aside from).
    pub target: &'a str,
    pub pid: i32,
    /// The tag of the host whose process made it; `None` for the shorter names of earlier versions of
    /// seisimage, `.NAME.TAG-PID-N`, which do not say.
    pub host: Option<&'a str>,
}

/// `name` taken apart, if it is a hidden name seisimage gives a file while it writes it or when it moves
/// it aside (see [`HiddenName`]): the one definition of those names, for the clean-up of debris here and
/// for `output.existing = "clean"`.
pub fn hidden_name(name: &str) -> Option<HiddenName<'_>> {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let rest = name.strip_prefix('.')?;
    let (rest, last) = rest.rsplit_once('-')?;
    let (rest, before) = rest.rsplit_once('-')?;
    let (rest, pid, host) = match rest.rsplit_once('-') {
        // `.NAME.TAG-PID-HOST-RANDOM`
        Some((rest, pid))
            if digits(pid)
                && before.len() == 8
                && before.bytes().all(|b| b.is_ascii_hexdigit())
                && last.len() >= RANDOM_CHARS
                && last.bytes().all(|b| b.is_ascii_alphanumeric()) =>
        {
            (rest, pid, Some(before))
        }
        // `.NAME.TAG-PID-N`
        _ if digits(before) && digits(last) => (rest, before, None),
        _ => return None,
    };
    let target = [PARTIAL, REPLACED].iter().find_map(|tag| rest.strip_suffix(tag)?.strip_suffix('.'))?;
    let pid: i32 = pid.parse().ok().filter(|&p| p > 0)?;
    (!target.is_empty()).then_some(HiddenName { target, pid, host })
}

/// The process id in a hidden name of this host (`.NAME.partial-PID-HOST-RANDOM`), if `name` is one.
fn stale_pid(name: &str, host: &str) -> Option<i32> {
    hidden_name(name).filter(|h| h.host == Some(host)).map(|h| h.pid)
}

/// Whether process `pid` runs on this host (a process of another user counts as running).
fn process_runs(pid: i32) -> bool {
    // SAFETY: signal 0 only checks that the process exists; `pid` is positive, so it names one process.
    let rc = unsafe { libc::kill(pid, 0) };
    rc == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

/// Files that a commit moved aside from the names it took (an earlier run's outputs); removed when dropped.
///
/// Why apart: removing a file frees its blocks, and when a rename replaces a file the rename waits for
/// that. Replacing the products of an earlier run of the benchmark job (an 8 MB HDF5 region and pictures)
/// kept the manifest waiting 5-8 ms on an H200 host's virtual disk (ext4), against under 1 ms into an
/// empty folder. A caller with nothing left to wait for drops this once its own outputs are complete.
#[must_use = "dropping it removes the replaced files at once"]
#[derive(Debug, Default)]
pub struct Replaced(Vec<(Arc<Folder>, String)>);

impl Drop for Replaced {
    fn drop(&mut self) {
        for (folder, name) in &self.0 {
            let _ = tree::remove_entry(folder, name);
        }
    }
}

/// A complete file under its temporary name, measured, its writing to disk begun, and closed; removed on
/// drop unless committed.
#[derive(Debug)]
pub struct SealedOutput {
    out: tree::Pending,
    digest: FileDigest,
}

impl SealedOutput {
    pub fn digest(&self) -> &FileDigest {
        &self.digest
    }

    pub fn final_path(&self) -> &Path {
        self.out.final_path()
    }

    /// Flush the file to disk and move it to its final name.
    pub fn commit(self) -> Result<(PathBuf, FileDigest)> {
        let mut done = commit_together(vec![self])?;
        Ok(done.remove(0))
    }
}

/// Flush `files` to disk all at once, then move them to their final names in the order given; files already
/// at those names are removed.
pub fn commit_together(files: Vec<SealedOutput>) -> Result<Vec<(PathBuf, FileDigest)>> {
    commit_together_replacing(files).map(|(done, _replaced)| done)
}

/// [`commit_together`], handing the files it replaced back to be removed when the caller is ready.
///
/// Why together: every flush waits for the file system's journal to commit and for the disk to empty its
/// cache; flushes issued at the same time share those, where one after another each pays for its own (on
/// the virtual disks of cloud machines 1-8 ms apiece). When a flush fails nothing is moved; when a move
/// fails the files already moved are removed again, so the group appears whole or not at all.
pub fn commit_together_replacing(files: Vec<SealedOutput>) -> Result<(Vec<(PathBuf, FileDigest)>, Replaced)> {
    use rayon::prelude::*;
    let t = std::time::Instant::now();
    files.par_iter().try_for_each(|s| s.out.sync().at(s.final_path()))?;
    tracing::trace!("{} file(s) flushed to disk in {:.1} ms", files.len(), t.elapsed().as_secs_f64() * 1e3);
    let mut done: Vec<(Placed, FileDigest)> = Vec::with_capacity(files.len());
    let mut replaced = Replaced::default();
    for SealedOutput { out, digest } in files {
        match out.into_place(Some(&mut replaced)) {
            Ok(placed) => done.push((placed, digest)),
            Err(e) => {
                for (placed, _) in &done {
                    let _ = tree::remove_entry(&placed.folder, &placed.name);
                }
                return Err(e);
            }
        }
    }
    Ok((done.into_iter().map(|(placed, digest)| (placed.path, digest)).collect(), replaced))
}

/// Ask the kernel to start writing `file`'s pages to disk now, without waiting, so that a later `fsync` finds
/// most of the work done (only a hint: where it is not available, `fsync` does it all).
fn start_writeback(file: &File) {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        // SAFETY: a valid open descriptor; the call only schedules writeback of the whole file.
        let _ = unsafe { libc::sync_file_range(file.as_raw_fd(), 0, 0, libc::SYNC_FILE_RANGE_WRITE) };
    }
    #[cfg(not(target_os = "linux"))]
    let _ = file;
}

/// Size and SHA-256 of a file as written (for the manifest).
#[derive(Clone, Debug, PartialEq)]
pub struct FileDigest {
    pub bytes: u64,
    /// Lower-case hexadecimal, as `sha256sum` prints it.
    pub sha256: String,
}

impl FileDigest {
    /// Read `file` from its start to its end.
    ///
    /// Through a memory map: the hash then reads the cached pages in place, where reading them into a buffer
    /// first added a fifth to its time (an 8 MB file: 7.3 ms instead of 6.0 ms).
    pub fn read(file: &mut File) -> std::io::Result<FileDigest> {
        use sha2::{Digest, Sha256};
        let bytes = file.metadata()?.len();
        let digest = if bytes == 0 {
            Sha256::digest([])
        } else {
            // SAFETY: the file is one of this process's temporary outputs, which nothing else writes.
            let map = unsafe { memmap2::Mmap::map(&*file)? };
            Sha256::digest(&map[..])
        };
        Ok(FileDigest { bytes, sha256: hex(&digest) })
    }
}

impl Drop for TempOutput {
    fn drop(&mut self) {
        if !self.staged.committed {
            let _ = self.staged.folder.remove(&self.staged.temp_name);
        }
    }
}

/// Write `bytes` to `path` atomically.
pub fn write_atomic(path: impl AsRef<Path>, bytes: &[u8]) -> Result<PathBuf> {
    written(path, bytes)?.commit()
}

/// [`write_atomic`], with the size and SHA-256 of what was written.
pub fn write_atomic_digested(path: impl AsRef<Path>, bytes: &[u8]) -> Result<(PathBuf, FileDigest)> {
    written(path, bytes)?.commit_digested()
}

/// `bytes` written to `path`'s temporary file and sealed, to be committed with others.
pub fn write_sealed(path: impl AsRef<Path>, bytes: &[u8]) -> Result<SealedOutput> {
    written(path, bytes)?.seal()
}

/// `bytes` in the temporary file of `path`, not yet committed.
fn written(path: impl AsRef<Path>, bytes: &[u8]) -> Result<TempOutput> {
    let (out, mut f) = TempOutput::create(path)?;
    f.write_all(bytes).at(out.final_path())?;
    Ok(out)
}

/// [`write_atomic`] for the file `name` in `folder` held open, only its owner may read and write (0600).
pub fn write_atomic_in(folder: &Arc<Folder>, name: &str, bytes: &[u8]) -> Result<PathBuf> {
    let (out, mut f) = TempOutput::create_in_folder(folder, name, 0o600)?;
    f.write_all(bytes).at(out.final_path())?;
    out.commit()
}

/// [`write_atomic`] for a file only its owner may read and write (0600).
pub fn write_atomic_private(path: impl AsRef<Path>, bytes: &[u8]) -> Result<PathBuf> {
    let (out, mut f) = TempOutput::create_private(path)?;
    f.write_all(bytes).at(out.final_path())?;
    out.commit()
}

/// Bytes per write of a [`BlockWriter`].
pub const WRITE_BLOCK: usize = 4 << 20;

/// A buffered writer for large files whose writes to the file are whole blocks of [`WRITE_BLOCK`] bytes at
/// offsets that are multiples of it (but for the last, and for what is written after an explicit flush).
///
/// Why: Linux keeps the pages of a file written in large aligned pieces in large folios (2 MiB), which a
/// later memory map of the cached file maps with one entry each instead of one per 4 KiB page. Reading the
/// 262 144 trace headers of a cached 1.1 GB SEG-Y file (which maps every page) took 5.6 ms on one core when
/// the file had been written in aligned pieces of 2 MiB or more, 9.5 ms in pieces of 1 MiB and 34 ms in
/// pieces of 64 KiB (Linux 6.18, ext4). The same holds for a file cached by reading it (read-ahead builds
/// large folios), so this only keeps the files seisimage writes as quick to reopen as any other.
///
/// Unlike `BufWriter`, dropping it without [`BlockWriter::into_inner`] discards what is buffered: every
/// caller writes to a temporary file that is removed in that case anyway.
pub struct BlockWriter<W: Write> {
    inner: W,
    buf: Vec<u8>,
    /// Bytes handed to `inner` so far.
    written: u64,
}

impl<W: Write> BlockWriter<W> {
    pub fn new(inner: W) -> Self {
        BlockWriter { inner, buf: Vec::with_capacity(WRITE_BLOCK), written: 0 }
    }

    /// Write what is buffered and return the inner writer.
    pub fn into_inner(mut self) -> std::io::Result<W> {
        self.flush()?;
        Ok(self.inner)
    }

    /// Bytes from the end of what is buffered to the next block boundary.
    fn room(&self) -> usize {
        WRITE_BLOCK - ((self.written + self.buf.len() as u64) % WRITE_BLOCK as u64) as usize
    }

    fn write_buffered(&mut self) -> std::io::Result<()> {
        self.inner.write_all(&self.buf)?;
        self.written += self.buf.len() as u64;
        self.buf.clear();
        Ok(())
    }
}

impl<W: Write> Write for BlockWriter<W> {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        let room = self.room();
        if self.buf.is_empty() && room == WRITE_BLOCK && data.len() >= WRITE_BLOCK {
            // Whole blocks at a boundary go straight through.
            let n = data.len() / WRITE_BLOCK * WRITE_BLOCK;
            self.inner.write_all(&data[..n])?;
            self.written += n as u64;
            return Ok(n);
        }
        let n = room.min(data.len());
        self.buf.extend_from_slice(&data[..n]);
        if n == room {
            self.write_buffered()?;
        }
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if !self.buf.is_empty() {
            self.write_buffered()?;
        }
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests;
