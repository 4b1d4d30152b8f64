//! The output folder of a run: made ready before the migration, held while the run writes there.
//!
//! Before the engine starts, the run makes the folder (with its parents), locks it ([`FolderLock`]), checks
//! that the file system has room for the products, and clears what `output.existing` says must go:
//!
//! - `replace` (the default): the files the folder's manifest lists that this run does not write again,
//!   so that a re-run with fewer products leaves none of the old ones behind. Only a manifest of this
//!   user's is taken, and only files that are still as it lists them (size and SHA-256): a manifest
//!   anyone can write must not be able to name what a run deletes.
//! - `refuse`: a folder that holds anything is refused.
//! - `clean`: every file of this user's whose name seisimage gives its outputs (products, sidecars,
//!   manifests, and the hidden temporary files of a run that never finished), listed or not; other files
//!   stay.
//!
//! Neither mode ever removes a file the run reads (its input, velocity file, job file, the partial
//! products `reduce` sums), compared by device and inode through links, whatever it is named: what stays
//! is said in a warning. [`Clearing`] decides all of this before anything is removed, so that `validate`
//! reports it too.
//!
//! In every case the hidden temporary files of runs on this host that died there (killed, or stopped by a
//! power cut) are removed ([`crate::io::output::remove_stale`]), and the manifest goes before the
//! migration starts: a folder without one is not a finished run.
//! The manifest read here is a file anyone may have written: only plain names of files in the folder are
//! taken from it, and only its file records are kept in memory.
//!
//! The folder is held open from before its lock is taken ([`crate::io::output::hold`]): every product, the
//! page and the manifest are made and renamed in the folder the run locked, even if its path comes to lead
//! elsewhere (the folder renamed and a link put in its place), and such a run fails before its products take
//! their names ([`OutputFolder::check_in_place`]).

use std::path::{Component, Path};

use crate::error::{Error, Result};
use crate::io::output::{Folder, HeldFolder};
use crate::job::{Existing, Job, OutputConfig};
use crate::products::{ProductSpec, INDEX_PAGE};

use super::lock::{FolderLock, LockError, LOCK_FILE};
use super::record::{count, MANIFEST};
use super::RunMode;

/// A manifest larger than this is not read for the files it lists.
const MAX_MANIFEST_BYTES: u64 = 64 << 20;

/// The output folder of a run, locked for it and held open until dropped.
#[derive(Debug)]
pub struct OutputFolder {
    // Dropped in this order: the lock is removed from the folder while it is still held.
    _lock: FolderLock,
    held: HeldFolder,
}

impl OutputFolder {
    /// Make the output folder of `job` ready for `products` of about `needed_bytes`: made, locked, with
    /// room, and cleared as `output.existing` says, leaving every file of `inputs` (what the run reads).
    /// Warnings (a stale lock taken over, files left in place) are pushed to `warnings`. The rendezvous
    /// folders of failed runs over several GPUs go, except that of the run `mode` is a rank of.
    pub fn prepare(
        job: &Job,
        mode: &RunMode,
        products: &[ProductSpec],
        inputs: &[(&str, &Path)],
        needed_bytes: u64,
        warnings: &mut Vec<String>,
    ) -> Result<OutputFolder> {
        let dir = &job.config.output.dir;
        let cannot_write =
            |e: std::io::Error| job.error_at("output.dir", format!("cannot write in {}: {e}", dir.display()));
        if dir.exists() && !dir.is_dir() {
            return Err(cannot_write(std::io::Error::new(
                std::io::ErrorKind::NotADirectory,
                "it is a file, not a folder",
            )));
        }
        std::fs::create_dir_all(dir).map_err(cannot_write)?;
        let held = crate::io::output::hold(dir).map_err(cannot_write)?;
        let lock = match FolderLock::acquire(dir) {
            Ok((lock, took_over)) => {
                warnings.extend(took_over);
                lock
            }
            Err(LockError::Create(e)) => return Err(cannot_write(e)),
            Err(LockError::Refused(e)) => return Err(e),
        };
        let folder = OutputFolder { _lock: lock, held };
        // The lock was taken by the folder's path: in the folder held, or the run stops here.
        folder.check_in_place()?;
        // Held now: the temporary files of runs on this host that died here can go.
        crate::io::output::remove_stale(dir);
        crate::distributed::ranks::remove_failed(folder.held.folder(), mode.run_id());
        let keep = (job.config.output.keep_free_gb * 1e9) as u64;
        if let Some(free) = free_bytes(dir) {
            check_free_space(dir, free, needed_bytes, keep)?;
        }
        let existing = job.config.output.existing;
        if existing == Existing::Refuse {
            refuse_unless_empty(job)?;
        }
        let clearing = Clearing::of(dir, existing, &written_names(&job.config.output, products), inputs);
        warnings.extend(clearing.warnings(existing));
        let held = folder.held.folder();
        clearing.apply(held)?;
        // A manifest left from an earlier run would vouch for products this run is about to replace.
        remove_file_named(held, MANIFEST)?;
        Ok(folder)
    }

    /// Fail when the output folder's path no longer leads to the folder the run locked (it was moved, or
    /// something else put in its place): the products would not be where the job says.
    pub fn check_in_place(&self) -> Result<()> {
        let folder = self.held.folder();
        if folder.still_at_its_path() {
            return Ok(());
        }
        let message = "the output folder was moved, or replaced by something else, while the run used it: its \
                       products were discarded, and nothing was put at this path";
        Err(Error::io(folder.path(), std::io::Error::other(message)))
    }
}

/// With `output.existing = "refuse"`, refuse an output folder that holds anything besides a lock.
pub fn refuse_unless_empty(job: &Job) -> Result<()> {
    let dir = &job.config.output.dir;
    if job.config.output.existing != Existing::Refuse {
        return Ok(());
    }
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(_) => return Ok(()), // missing: made empty later; unreadable: found when it is written
    };
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n != LOCK_FILE)
        .collect();
    if names.is_empty() {
        return Ok(());
    }
    names.sort();
    let shown = names.iter().take(3).cloned().collect::<Vec<_>>().join(", ");
    let more = if names.len() > 3 { ", ..." } else { "" };
    Err(job.error_at(
        "output.existing",
        format!(
            "output.existing is \"refuse\" and {} is not empty ({} entries: {shown}{more}): empty it, give the job \
             another output.dir, or set output.existing = \"replace\"",
            dir.display(),
            names.len()
        ),
    ))
}

/// The names of the files `spec` is written to.
fn file_names(spec: &ProductSpec) -> Vec<String> {
    let pictures = if spec.png { vec!["png", "json"] } else { Vec::new() };
    pictures
        .into_iter()
        .chain(spec.formats.iter().map(|f| f.extension()))
        .map(|ext| format!("{}.{ext}", spec.stem))
        .collect()
}

/// Every name a run of `products` gives a file in its output folder: each product's files, the panels of
/// a velocity scan, the page (when `output` asks for one) and the manifest.
pub(crate) fn written_names(output: &OutputConfig, products: &[ProductSpec]) -> Vec<String> {
    let mut names: Vec<String> = products.iter().flat_map(file_names).collect();
    names.extend(crate::scan::panel_names(products));
    if output.index {
        names.push(INDEX_PAGE.into());
    }
    names.push(MANIFEST.into());
    names
}

/// What `output.existing` takes out of an output folder before a run, decided before anything goes, so
/// that `validate` says the same as the run does.
#[derive(Debug, Default, PartialEq)]
pub struct Clearing {
    /// The files to remove: plain names in the folder.
    pub remove: Vec<String>,
    /// The files the mode would have removed but leaves, each with why: `name: reason`.
    pub kept: Vec<String>,
}

impl Clearing {
    /// What `existing` takes out of `dir` for a run that writes `written` (plain names) and reads `inputs`.
    ///
    /// `replace` takes only the files an earlier run of this user listed in its manifest and that are
    /// still as it wrote them; `clean` takes the files named as seisimage names its outputs that belong to
    /// this user. Neither takes a file the run reads, whatever its name, nor a folder.
    pub fn of(dir: &Path, existing: Existing, written: &[String], inputs: &[(&str, &Path)]) -> Clearing {
        let mut clearing = Clearing::default();
        match existing {
            Existing::Refuse => {}
            Existing::Replace => clearing.listed_files(dir, written, inputs),
            Existing::Clean => clearing.seisimage_files(dir, inputs),
        }
        clearing
    }

    /// `replace`: the files the folder's manifest lists, as it lists them, that the run does not write again.
    fn listed_files(&mut self, dir: &Path, written: &[String], inputs: &[(&str, &Path)]) {
        let listed = match ListedFile::read_manifest(&dir.join(MANIFEST)) {
            Ok(listed) => listed,
            Err(why) => {
                self.kept.push(format!("the files {MANIFEST} lists: {why}"));
                return;
            }
        };
        let mut seen = std::collections::HashSet::new();
        for file in listed {
            if !plain_name(&file.path) || written.contains(&file.path) || !seen.insert(file.path.clone()) {
                continue;
            }
            let path = dir.join(&file.path);
            match std::fs::symlink_metadata(&path) {
                Err(_) => {} // gone already
                Ok(meta) => match why_kept(&path, &meta, inputs).or_else(|| file.changed(&path, &meta)) {
                    Some(why) => self.kept.push(format!("{}: {why}", file.path)),
                    None => self.remove.push(file.path),
                },
            }
        }
    }

    /// `clean`: every file whose name seisimage gives its outputs.
    fn seisimage_files(&mut self, dir: &Path, inputs: &[(&str, &Path)]) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        let mut names: Vec<String> = entries
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|name| written_by_seisimage(name))
            .collect();
        names.sort();
        for name in names {
            let path = dir.join(&name);
            match std::fs::symlink_metadata(&path) {
                Ok(meta) if meta.is_dir() => {}
                Ok(meta) => match why_kept(&path, &meta, inputs) {
                    Some(why) => self.kept.push(format!("{name}: {why}")),
                    None => self.remove.push(name),
                },
                Err(_) => {}
            }
        }
    }

    /// Remove the files of [`Clearing::remove`] from the folder the run holds.
    fn apply(&self, folder: &Folder) -> Result<()> {
        self.remove.iter().try_for_each(|name| remove_file_named(folder, name))
    }

    /// The files kept, as warnings: a few by name, then how many more.
    pub fn warnings(&self, existing: Existing) -> Vec<String> {
        const SHOWN: usize = 8;
        let mode = mode_name(existing);
        let mut warnings: Vec<String> =
            self.kept.iter().take(SHOWN).map(|kept| format!("output.existing = \"{mode}\" leaves {kept}")).collect();
        if self.kept.len() > SHOWN {
            warnings.push(format!("output.existing = \"{mode}\" leaves {} more files", self.kept.len() - SHOWN));
        }
        warnings
    }

    /// What the clearing takes, for `validate`: `replace: removes 2 files: inline_5.png, inline_5.json`.
    pub fn summary(&self, existing: Existing) -> String {
        const SHOWN: usize = 8;
        let removes = match self.remove.as_slice() {
            [] => "removes no file".to_string(),
            names => {
                let more = names.len().saturating_sub(SHOWN);
                let more = if more > 0 { format!(", and {more} more") } else { String::new() };
                let shown = names.iter().take(SHOWN).map(String::as_str).collect::<Vec<_>>().join(", ");
                format!("removes {}: {shown}{more}", count(names.len(), "file"))
            }
        };
        format!("{}: {removes}", mode_name(existing))
    }
}

/// `output.existing` as the job file spells it.
fn mode_name(existing: Existing) -> String {
    format!("{existing:?}").to_lowercase()
}

/// Why the entry at `path` is not a run's to remove, if it is not: it is (or leads to) a file the run
/// reads, or it belongs to another user.
fn why_kept(path: &Path, meta: &std::fs::Metadata, inputs: &[(&str, &Path)]) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    if let Some((what, input)) = crate::io::files::input_at(path, inputs) {
        return Some(format!("it is {what} of this run ({})", input.display()));
    }
    let me = rustix::process::geteuid().as_raw();
    (meta.uid() != me).then(|| format!("it belongs to another user (uid {})", meta.uid()))
}

/// A file as a manifest lists it: its name in the folder, size and checksum.
#[derive(Debug, serde::Deserialize)]
struct ListedFile {
    path: String,
    bytes: u64,
    sha256: String,
}

impl ListedFile {
    /// The files the manifest at `path` lists; none when there is no manifest, Err (why nothing is taken)
    /// when it is not one this user's run wrote or cannot be read as one.
    fn read_manifest(path: &Path) -> std::result::Result<Vec<ListedFile>, String> {
        use std::io::Read;
        use std::os::unix::fs::MetadataExt;
        #[derive(serde::Deserialize)]
        struct Listing {
            products: Vec<Product>,
        }
        #[derive(serde::Deserialize)]
        struct Product {
            files: Vec<ListedFile>,
        }
        let unreadable =
            |e: &dyn std::fmt::Display| format!("it is not a manifest seisimage can read ({e}), so they stay");
        // A regular file only (a FIFO planted under the name would wait forever), read within its bound.
        let file = match crate::io::files::open_regular(path) {
            Ok(f) => f,
            Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(Error::Io { source, .. }) => return Err(unreadable(&source)),
            Err(e) => return Err(unreadable(&e)),
        };
        let meta = file.metadata().map_err(|e| unreadable(&e))?;
        let me = rustix::process::geteuid().as_raw();
        if meta.uid() != me {
            return Err(format!("it belongs to another user (uid {}), so they stay", meta.uid()));
        }
        if meta.len() > MAX_MANIFEST_BYTES {
            return Err(format!("it is {} bytes, more than a manifest holds, so they stay", meta.len()));
        }
        // Only the file records are kept from the document, so that its memory is bounded by them.
        let reader = std::io::BufReader::new(file.take(MAX_MANIFEST_BYTES));
        let listing: Listing = serde_json::from_reader(reader).map_err(|e| unreadable(&e))?;
        Ok(listing.products.into_iter().flat_map(|p| p.files).collect())
    }

    /// How the file at `path` differs from what the manifest says was written, if it does: a link or
    /// other entry where a file was written, another size, other contents.
    fn changed(&self, path: &Path, meta: &std::fs::Metadata) -> Option<String> {
        if !meta.file_type().is_file() {
            return Some("it is not the file the manifest lists (a link or a special file)".into());
        }
        if meta.len() != self.bytes {
            return Some(format!("it has {} bytes, not the {} the manifest lists", meta.len(), self.bytes));
        }
        match sha256_of(path) {
            Ok(sha) if sha.eq_ignore_ascii_case(&self.sha256) => None,
            Ok(_) => Some("its contents are not those the manifest lists".into()),
            Err(e) => Some(format!("it cannot be read to compare it with the manifest ({e})")),
        }
    }
}

/// SHA-256 (hex) of a file by streaming it: the file is someone's, so it is not mapped (a file truncated
/// under a map ends the process).
fn sha256_of(path: &Path) -> std::io::Result<String> {
    use sha2::{Digest, Sha256};
    let mut file = match crate::io::files::open_regular(path) {
        Ok(file) => file,
        Err(e) => return Err(std::io::Error::other(e.to_string())),
    };
    let mut hasher = Sha256::new();
    std::io::copy(&mut file, &mut hasher)?;
    Ok(crate::io::output::hex(&hasher.finalize()))
}

/// A name of a file right in the folder, as seisimage names its outputs: one component, not hidden, not the
/// manifest.
fn plain_name(name: &str) -> bool {
    let mut components = Path::new(name).components();
    matches!((components.next(), components.next()), (Some(Component::Normal(_)), None))
        && !name.starts_with('.')
        && name != MANIFEST
}

/// Remove `name` from the folder the run holds if it is a file or a link (never a folder); a file already
/// gone is fine.
fn remove_file_named(folder: &Folder, name: &str) -> Result<()> {
    use std::io::ErrorKind::{IsADirectory, NotFound};
    match folder.remove(name) {
        Err(e) if !matches!(e.kind(), NotFound | IsADirectory) => Err(Error::io(folder.join(name), e)),
        _ => Ok(()),
    }
}

/// Whether `name` is one seisimage gives an output of a run: a product file (`inline_120.png`,
/// `xline_884.json`, `depth_150m.npy`, `time_500ms.sgy`, `roi_centre.h5`, ..., with an attribute, `_time`,
/// a velocity scan's member or panel after the stem: `inline_120_envelope_v095.png`,
/// `inline_120_time_panel.png`), the page, the manifest, or the hidden temporary name of any of them
/// (`.inline_120.png.partial-PID-HOST-RANDOM`, see [`crate::io::output::hidden_name`]).
fn written_by_seisimage(name: &str) -> bool {
    let name = match name.strip_prefix('.') {
        Some(_) => match crate::io::output::hidden_name(name) {
            Some(hidden) => hidden.target,
            None => return false,
        },
        None => name,
    };
    if name == MANIFEST || name == INDEX_PAGE {
        return true;
    }
    let Some((stem, ext)) = name.rsplit_once('.') else { return false };
    if !matches!(ext, "png" | "json" | "sgy" | "h5" | "npy") {
        return false;
    }
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let integer = |s: &str| digits(s.strip_prefix('-').unwrap_or(s));
    // What may follow a product's stem, last first: a scan's member (`_v095`, `_v1800`) or panel (a
    // picture only), an attribute, `_time`.
    let mut stem = stem;
    if let Some(base) = stem.strip_suffix("_panel").filter(|_| matches!(ext, "png" | "json")) {
        stem = base;
    } else if let Some((base, _)) = stem.rsplit_once("_v").filter(|(_, member)| {
        let (whole, decimals) = member.split_once('p').unwrap_or((member, "0"));
        digits(whole) && digits(decimals)
    }) {
        stem = base;
    }
    // The longest attribute name that ends the stem (`_cos_phase`, not `_phase`).
    let attribute = crate::attributes::Attribute::ALL
        .iter()
        .filter_map(|a| stem.strip_suffix(a.name()).and_then(|s| s.strip_suffix('_')))
        .min_by_key(|base| base.len());
    stem = attribute.unwrap_or(stem);
    stem = stem.strip_suffix("_time").unwrap_or(stem);
    match stem.split_once('_') {
        Some(("inline" | "xline", n)) => integer(n),
        Some(("depth", z)) => z.strip_suffix('m').is_some_and(integer),
        Some(("time", t)) => t.strip_suffix("ms").is_some_and(integer),
        Some(("roi", n)) => !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c)),
        _ => false,
    }
}

/// Free bytes for an unprivileged writer on the file system of `dir`, if the system says: `statvfs`
/// through rustix, which the build already holds (clap's terminal support uses it) and which wraps the
/// call safely.
fn free_bytes(dir: &Path) -> Option<u64> {
    let s = rustix::fs::statvfs(dir).ok()?;
    Some(s.f_bavail.saturating_mul(s.f_frsize))
}

/// Refuse when `free_bytes` on the output file system cannot hold `needed_bytes` of products and still keep
/// `keep_bytes` free. An environment problem, not a job error: exit code 1.
pub fn check_free_space(dir: &Path, free_bytes: u64, needed_bytes: u64, keep_bytes: u64) -> Result<()> {
    if free_bytes >= needed_bytes.saturating_add(keep_bytes) {
        return Ok(());
    }
    let keep = match keep_bytes {
        0 => String::new(),
        k => format!(", and output.keep_free_gb asks to keep {} free", human_bytes(k)),
    };
    let message = format!(
        "the file system has {} free, the products need about {}{keep}",
        human_bytes(free_bytes),
        human_bytes(needed_bytes)
    );
    Err(Error::io(dir, std::io::Error::new(std::io::ErrorKind::StorageFull, message)))
}

pub(super) fn human_bytes(b: u64) -> String {
    match b {
        b if b >= 1_000_000_000 => format!("{:.2} GB", b as f64 / 1e9),
        b if b >= 1_000_000 => format!("{:.2} MB", b as f64 / 1e6),
        b => format!("{b} bytes"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_names_seisimage_gives_its_outputs() {
        for name in [
            "inline_120.png",
            "xline_-3.json",
            "depth_150m.npy",
            "roi_centre.h5",
            "roi_a.b-c_d.sgy",
            "manifest.json",
            ".inline_120.png.partial-4242-0",
            ".inline_120.png.partial-4242-0badc0de-Xq3ZzA1b",
            ".roi_a-b.h5.replaced-7-0badc0de-Xq3ZzA1b",
            ".manifest.json.partial-1-17",
            ".roi_box.h5.replaced-77-3",
            // Attributes, products in time, members and panels of a velocity scan, and the page.
            "inline_120_envelope.png",
            "depth_150m_cos_phase.npy",
            "inline_120_time.sgy",
            "time_500ms.png",
            "xline_884_time_v095.json",
            "inline_120_envelope_v1800.h5",
            "inline_120_v097p5.png",
            "depth_150m_v1800p25.npy",
            "inline_120_panel.png",
            "time_500ms_panel.json",
            "index.html",
            ".index.html.partial-12-1",
        ] {
            assert!(written_by_seisimage(name), "{name}");
        }
        for name in [
            "notes.txt",
            "inline_120.txt",
            "inline_x.png",
            "depth_150.png",
            "roi_.h5",
            "seismic.sgy",
            ".inline_120.png.partial-x-0",
            ".inline_120.png.partial-4242-0badc0de-Xq3",
            ".shard-1-of-2.partial.partial-4242-0badc0de-Xq3ZzA1b",
            ".notes.txt.partial-1-0",
            ".seisimage.lock",
            "inline_120",
            "inline_120_notes.png",
            "inline_120_v.png",
            "inline_120_v090p.png",
            "inline_120_vp5.png",
            "time_500.png",
            "index.htm",
            "inline_120_panel.sgy",
        ] {
            assert!(!written_by_seisimage(name), "{name}");
        }
    }

    #[test]
    fn only_plain_names_are_taken_from_a_manifest() {
        for name in ["inline_1.png", "notes.txt"] {
            assert!(plain_name(name), "{name}");
        }
        for name in ["../victim.txt", "/etc/passwd", "a/b.png", ".", "..", "", ".hidden", "manifest.json"] {
            assert!(!plain_name(name), "{name}");
        }
    }
}
