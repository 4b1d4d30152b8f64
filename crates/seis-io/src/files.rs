//! What seisimage opens and what it writes over, seen as files: only regular files are read (a FIFO would
//! wait forever for a writer, a device such as `/dev/zero` never ends), files are told apart by identity
//! (device and inode, whatever their names), text quoted from a file into a message is cut short, and a
//! program seisimage starts inherits none of its open files.

use std::fs::{File, Metadata, OpenOptions};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use seis_core::alloc::human_bytes;
use seis_core::error::{Error, IoContext, Result};

/// Open `path` for reading if it is a regular file (following links); anything else is refused with an
/// error that says what it is.
///
/// The file is opened without waiting (`O_NONBLOCK`), so that a FIFO does not block the open itself, and
/// its type is checked on the open descriptor, so that nothing can be swapped in between.
pub fn open_regular(path: &Path) -> Result<File> {
    let file = OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY).open(path).at(path)?;
    let meta = file.metadata().at(path)?;
    if !meta.file_type().is_file() {
        return Err(not_regular(path, &meta));
    }
    // Back to blocking reads: on a regular file the flag changes nothing, but the descriptor is handed on.
    // SAFETY: fcntl on a descriptor this function owns.
    unsafe {
        use std::os::fd::AsRawFd;
        let fd = file.as_raw_fd();
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags >= 0 {
            libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK);
        }
    }
    Ok(file)
}

/// Read a whole text file of at most `limit` bytes (a job file), refusing anything that is not a regular
/// file or is longer: the size is checked on the open file before anything is read.
pub fn read_text(path: &Path, limit: u64) -> Result<String> {
    let bytes = read_bounded(path, limit, "job file")?;
    String::from_utf8(bytes).map_err(|_| {
        Error::io(path, std::io::Error::new(std::io::ErrorKind::InvalidData, "it is not text (invalid UTF-8)"))
    })
}

/// Read a whole file of at most `limit` bytes, `what` it is named in the error when it is longer ("job
/// file", "velocity text file"); anything but a regular file is refused. The size is checked on the open
/// file before anything is read, and a file that grows meanwhile still stops at the limit.
pub fn read_bounded(path: &Path, limit: u64, what: &str) -> Result<Vec<u8>> {
    use std::io::Read;
    let file = open_regular(path)?;
    let len = file.metadata().at(path)?.len();
    let too_large = |message: String| Error::io(path, std::io::Error::new(std::io::ErrorKind::FileTooLarge, message));
    if len > limit {
        return Err(too_large(format!("{len} bytes, larger than any {what} ({} at most)", human_bytes(limit))));
    }
    let mut bytes = Vec::with_capacity(len as usize);
    file.take(limit + 1).read_to_end(&mut bytes).at(path)?;
    if bytes.len() as u64 > limit {
        return Err(too_large(format!("it grew past {} while it was read", human_bytes(limit))));
    }
    Ok(bytes)
}

fn not_regular(path: &Path, meta: &Metadata) -> Error {
    let message = format!("it is {}; seisimage reads regular files only", what_it_is(meta));
    Error::io(path, std::io::Error::new(std::io::ErrorKind::InvalidInput, message))
}

/// Refuse to write a command's named output (`convert`, `plot`, `synth`, `bench --json`) at `path` when
/// something other than a regular file (or a link, which the rename replaces) is there: the result is
/// renamed onto the name, which would replace a device node, a FIFO or a socket. A job mistake (exit 2).
pub fn check_output_file(path: &Path) -> Result<()> {
    let Ok(meta) = std::fs::symlink_metadata(path) else { return Ok(()) };
    if meta.file_type().is_file() || meta.file_type().is_symlink() {
        return Ok(());
    }
    Err(Error::Request(format!(
        "{}: it is {}; seisimage writes its output as a new file renamed onto this name, which would replace it: \
         name a regular file or a new one",
        path.display(),
        what_it_is(&meta)
    )))
}

/// What a file that is not a regular one is, for a message.
fn what_it_is(meta: &Metadata) -> &'static str {
    let t = meta.file_type();
    if t.is_fifo() {
        "a FIFO (named pipe)"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_dir() {
        "a folder"
    } else {
        "not a regular file"
    }
}

/// A path by which a library that opens files by name (HDF5) reaches exactly the file behind `file`:
/// `/proc/self/fd/N` where the system has it, else `path` itself.
///
/// Why: a name can be made to point elsewhere between our open and the library's (a link planted in a
/// shared folder, a file swapped for a FIFO); the descriptor's own entry cannot.
pub fn library_path(file: &File, path: &Path) -> PathBuf {
    use std::os::fd::AsRawFd;
    let own = PathBuf::from(format!("/proc/self/fd/{}", file.as_raw_fd()));
    match std::fs::metadata(&own) {
        Ok(meta) if FileId::of(&meta) == file.metadata().map(|m| FileId::of(&m)).unwrap_or(FileId::NONE) => own,
        _ => path.to_path_buf(),
    }
}

/// A file by identity: its device and inode. Two paths with the same identity are the same file, whatever
/// their names (hard links, links, `..` in a path).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FileId {
    dev: u64,
    ino: u64,
}

impl FileId {
    /// Matches no file (inode 0 is never given out).
    const NONE: FileId = FileId { dev: u64::MAX, ino: 0 };

    pub fn of(meta: &Metadata) -> FileId {
        FileId { dev: meta.dev(), ino: meta.ino() }
    }

    /// The file `path` leads to, links followed; `None` when there is none.
    pub fn of_path(path: &Path) -> Option<FileId> {
        std::fs::metadata(path).ok().map(|m| FileId::of(&m))
    }

    /// The directory entry `path` itself (a link is not followed): what a rename onto `path` replaces.
    pub fn of_entry(path: &Path) -> Option<FileId> {
        std::fs::symlink_metadata(path).ok().map(|m| FileId::of(&m))
    }

    /// The file a `stat` call described.
    pub fn of_stat(stat: &rustix::fs::Stat) -> FileId {
        FileId { dev: stat.st_dev, ino: stat.st_ino }
    }
}

/// The first of `inputs` (with what it is, "the input", "the velocity file") that writing `output` would
/// replace: the file at `output` is that input, by identity. Writing a file means renaming a new file onto
/// its name, which replaces the entry at `output`, so a link there is not the file it points to.
pub fn replaced_input<'a>(output: &Path, inputs: &[(&'a str, &'a Path)]) -> Option<(&'a str, &'a Path)> {
    let entry = FileId::of_entry(output)?;
    inputs.iter().copied().find(|(_, input)| FileId::of_path(input) == Some(entry))
}

/// The first of `inputs` (with what it is) that the entry at `path` is or leads to, by identity: the file
/// itself, a hard link to it, or a link that points at it. Removing such an entry is never a run's to do.
pub fn input_at<'a>(path: &Path, inputs: &[(&'a str, &'a Path)]) -> Option<(&'a str, &'a Path)> {
    let entry = FileId::of_entry(path)?;
    let target = FileId::of_path(path);
    inputs.iter().copied().find(|(_, input)| FileId::of_path(input).is_some_and(|id| id == entry || Some(id) == target))
}

/// Why `dir` is not a folder private to the user running seisimage, if it is not: it must be a folder of
/// theirs that nobody else may write in. A folder others can write in may hold what they put there (a
/// program for the GPU, an address to connect to), and a file there may be swapped at any time.
pub fn not_private(dir: &Path) -> Option<String> {
    match std::fs::metadata(dir) {
        Ok(meta) => why_not_private(dir, meta.is_dir(), meta.uid(), meta.mode()),
        Err(e) => Some(format!("{}: {e}", dir.display())),
    }
}

/// Why a folder of `uid` and `mode` at `dir` is not private to the user running seisimage, if it is not.
pub(crate) fn why_not_private(dir: &Path, is_dir: bool, uid: u32, mode: u32) -> Option<String> {
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    if !is_dir {
        Some(format!("{} is not a folder", dir.display()))
    } else if uid != me {
        Some(format!("{} belongs to another user (uid {uid})", dir.display()))
    } else if mode & 0o022 != 0 {
        Some(format!("{} is writable by others (mode {:o})", dir.display(), mode & 0o777))
    } else {
        None
    }
}

/// Make `dir` (with the folders above it), mode 0700, unless it is there already.
pub(crate) fn make_private_dir(dir: &Path) -> Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).at(parent)?;
    }
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => Err(Error::io(dir, e)),
        _ => Ok(()),
    }
}

/// Make `dir` (with the folders above it) a folder private to this user, mode 0700, or check that the
/// folder there is one (see [`not_private`]).
pub fn private_dir(dir: &Path) -> Result<()> {
    make_private_dir(dir)?;
    match not_private(dir) {
        Some(why) => Err(Error::io(dir, std::io::Error::new(std::io::ErrorKind::PermissionDenied, why))),
        None => Ok(()),
    }
}

/// Text from a file, cut to at most `max` characters for a message (with how long it was), and with
/// control characters shown as escapes: what a file says is quoted, never trusted to be short or printable.
pub fn quoted(text: &str, max: usize) -> String {
    let mut out = String::new();
    let mut chars = text.chars();
    for c in chars.by_ref().take(max) {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    if chars.next().is_some() {
        out.push_str(&format!("… ({} bytes in all)", text.len()));
    }
    out
}

/// A command for `program` that inherits only the standard streams: every program seisimage starts (the
/// ranks of `--gpus`), and every program its tests start, is made here (clippy's `disallowed-methods`
/// refuses `Command::new` elsewhere). A file open at the moment of the start would otherwise stay open in
/// the child for its whole run, with any lock on it (the `hdf5` crate's own files are locked, and not
/// close-on-exec).
pub fn child_process(program: impl AsRef<std::ffi::OsStr>) -> std::process::Command {
    use std::os::unix::process::CommandExt;
    #[allow(clippy::disallowed_methods)]
    let mut command = std::process::Command::new(program);
    // Found before the fork: between fork and exec only async-signal-safe calls may be made.
    let limit = descriptor_limit();
    // SAFETY: close_range and fcntl are single system calls, safe between fork and exec. Marking the
    // descriptors close-on-exec (rather than closing them) leaves the standard library's own pipe to the
    // child alone.
    unsafe {
        command.pre_exec(move || {
            if libc::close_range(3, libc::c_uint::MAX, libc::CLOSE_RANGE_CLOEXEC as libc::c_int) != 0 {
                // Linux before 5.11 has no CLOSE_RANGE_CLOEXEC (and before 5.9 no close_range).
                mark_close_on_exec(3..limit);
            }
            Ok(())
        });
    }
    command
}

/// One more than the highest descriptor this process may have.
fn descriptor_limit() -> libc::c_int {
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit fills the struct it is given.
    match unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } {
        0 => limit.rlim_cur.min(libc::c_int::MAX as libc::rlim_t) as libc::c_int,
        _ => 1 << 20, // Linux's default ceiling (fs.nr_open)
    }
}

/// Mark each open descriptor in `fds` close-on-exec, one system call or two apiece.
fn mark_close_on_exec(fds: std::ops::Range<libc::c_int>) {
    for fd in fds {
        // SAFETY: fcntl on a number that may or may not be an open descriptor; failures are ignored.
        unsafe {
            let flags = libc::fcntl(fd, libc::F_GETFD);
            if flags >= 0 && flags & libc::FD_CLOEXEC == 0 {
                libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fallback for kernels without `close_range`'s close-on-exec flag marks what a child would inherit.
    #[test]
    fn descriptors_are_marked_close_on_exec_one_by_one() {
        // SAFETY: opening /dev/null without O_CLOEXEC, reading and closing that descriptor.
        let fd = unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDONLY) };
        assert!(fd >= 3);
        let cloexec = || unsafe { libc::fcntl(fd, libc::F_GETFD) } & libc::FD_CLOEXEC != 0;
        assert!(!cloexec());
        mark_close_on_exec(fd..descriptor_limit().min(fd + 64));
        assert!(cloexec());
        unsafe { libc::close(fd) };
    }

    #[test]
    fn only_regular_files_are_opened() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.txt");
        std::fs::write(&file, b"hello").unwrap();
        assert_eq!(read_text(&file, 5).unwrap(), "hello");
        let e = read_text(&file, 4).unwrap_err().to_string();
        assert!(e.contains("5 bytes, larger than any job file (4 bytes at most)"), "{e}");
        let e = open_regular(dir.path()).unwrap_err().to_string();
        assert!(e.contains("it is a folder"), "{e}");
        let e = open_regular(Path::new("/dev/null")).unwrap_err().to_string();
        assert!(e.starts_with("/dev/null: it is a character device"), "{e}");
        // a FIFO without a writer is refused at once, not waited on
        let fifo = dir.path().join("pipe");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = read_bounded(&fifo, 100, "table").unwrap_err().to_string();
        assert!(e.contains("it is a FIFO"), "{e}");
        let e = read_bounded(&file, 4, "velocity text file").unwrap_err().to_string();
        assert!(e.contains("larger than any velocity text file (4 bytes at most)"), "{e}");
    }

    #[test]
    fn private_folders_are_made_private_and_others_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let made = dir.path().join("a").join("b");
        private_dir(&made).unwrap();
        assert_eq!(std::fs::metadata(&made).unwrap().permissions().mode() & 0o077, 0);
        private_dir(&made).unwrap();
        std::fs::set_permissions(&made, std::fs::Permissions::from_mode(0o777)).unwrap();
        let e = private_dir(&made).unwrap_err().to_string();
        assert!(e.contains("writable by others"), "{e}");
        let file = dir.path().join("f");
        std::fs::write(&file, b"").unwrap();
        assert!(not_private(&file).unwrap().contains("not a folder"));
        assert!(not_private(&dir.path().join("none")).is_some());
    }

    #[test]
    fn files_are_known_by_identity_not_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b, c) = (dir.path().join("a"), dir.path().join("b"), dir.path().join("c"));
        std::fs::write(&a, b"1").unwrap();
        std::fs::hard_link(&a, &b).unwrap();
        std::os::unix::fs::symlink(&a, &c).unwrap();
        let inputs = [("the input", a.as_path())];
        assert_eq!(replaced_input(&b, &inputs), Some(("the input", a.as_path())), "a hard link is the file");
        assert_eq!(replaced_input(&a, &inputs).map(|(w, _)| w), Some("the input"));
        assert_eq!(replaced_input(&c, &inputs), None, "a rename onto a link replaces the link");
        assert_eq!(replaced_input(&dir.path().join("d"), &inputs), None);
        // through a link to its folder, the input is still itself
        let via = dir.path().join("via");
        std::os::unix::fs::symlink(dir.path(), &via).unwrap();
        assert!(replaced_input(&via.join("a"), &inputs).is_some());
    }

    #[test]
    fn quotes_are_cut_and_made_printable() {
        assert_eq!(quoted("ms", 80), "ms");
        assert_eq!(quoted("a\nb\u{1b}", 80), "a\\nb\\u{1b}");
        assert_eq!(quoted(&"x".repeat(100), 3), "xxx… (100 bytes in all)");
    }
}
