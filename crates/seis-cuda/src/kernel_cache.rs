//! Compiled kernels kept on disk between runs, so that only the first run on a machine pays for NVRTC.
//!
//! NVRTC takes about 20 ms to compile the kernels to device code on an H200 host, which every process
//! would pay again; loading them from here takes 1 ms. A compiled program is stored under a name derived
//! from everything that decides its contents (its [`Recipe`]: the kernel source, the architecture, the
//! NVRTC options and version, the seisimage version), so a new seisimage, NVRTC or GPU model simply finds
//! no entry and compiles.
//!
//! Whatever is loaded from here runs on the GPU, so the cache trusts nothing it did not make itself:
//! - The folder is created private (0700); a folder that is not the user's, or that others may write in,
//!   is not used at all (each run then compiles, with a warning).
//! - An entry is loaded only if it is a regular file (a link is not followed) owned by the user and
//!   writable by nobody else.
//! - An entry holds the recipe it was built from in full and a checksum over the recipe and the code: an
//!   entry for another source or other options, and a damaged one, are ignored and replaced, never loaded.
//! - Entries are written private (0600) under a random temporary name, created exclusively, then renamed.
//!
//! Where: `$SEISIMAGE_KERNEL_CACHE` if set (`off` turns the cache off), else `$XDG_CACHE_HOME/seisimage`,
//! else `~/.cache/seisimage`.

use std::io::Read;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::kernels::Compiled;

/// The environment variable that moves (a folder) or disables (`off`) the cache.
pub const CACHE_ENV: &str = "SEISIMAGE_KERNEL_CACHE";

/// First bytes of an entry; raised when the layout changes.
const MAGIC: &[u8; 20] = b"seisimage-kernels/2\n";
/// Magic, the three lengths and the checksum.
const HEADER_BYTES: usize = MAGIC.len() + 3 * 8 + 32;
/// An entry larger than this is not read (the kernels' code is a few hundred kilobytes).
const MAX_ENTRY_BYTES: u64 = 64 << 20;

/// Everything that decides what a compiled program holds, in one text: kept whole in each entry, and
/// compared with what a run would compile before the entry is used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Recipe(String);

impl Recipe {
    /// The recipe of `source` compiled for `arch` with `options` by NVRTC `nvrtc` (major, minor).
    pub fn new(source: &str, arch: &str, options: &[String], nvrtc: (i32, i32)) -> Recipe {
        let mut text = String::new();
        for part in [
            concat!("seisimage ", env!("CARGO_PKG_VERSION")),
            arch,
            &options.join(" "),
            &format!("nvrtc {}.{}", nvrtc.0, nvrtc.1),
            source,
        ] {
            // Each part with its length, so that no two different lists of parts make the same text.
            text.push_str(&format!("{}:{part}\n", part.len()));
        }
        Recipe(text)
    }

    /// The name the program is stored under: a digest of the recipe.
    pub fn key(&self) -> String {
        seis_io::output::hex(&Sha256::digest(self.0.as_bytes()))
    }
}

/// Where compiled kernels are kept, if anywhere.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelCache {
    dir: Option<PathBuf>,
}

impl KernelCache {
    /// The cache this process uses: see the module documentation.
    pub fn from_env() -> Self {
        Self::from_vars(|name| std::env::var_os(name))
    }

    /// [`KernelCache::from_env`] with the environment given as a lookup.
    fn from_vars(lookup: impl Fn(&str) -> Option<std::ffi::OsString>) -> Self {
        let var = |name: &str| lookup(name).filter(|v| !v.is_empty()).map(PathBuf::from);
        let dir = match var(CACHE_ENV) {
            Some(v) if v.as_os_str() == "off" => None,
            Some(v) => Some(v),
            None => var("XDG_CACHE_HOME")
                .or_else(|| var("HOME").map(|h| h.join(".cache")))
                .map(|base| base.join("seisimage")),
        };
        KernelCache { dir }
    }

    /// A cache in `dir`.
    pub fn at(dir: impl Into<PathBuf>) -> Self {
        KernelCache { dir: Some(dir.into()) }
    }

    /// No cache: every engine compiles.
    pub fn off() -> Self {
        KernelCache { dir: None }
    }

    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    fn entry(&self, recipe: &Recipe) -> Option<PathBuf> {
        self.dir.as_ref().map(|d| d.join(format!("kernels-{}.bin", recipe.key())))
    }

    /// The program built from `recipe`, if the cache holds an intact entry for it that only this user could
    /// have written.
    pub fn load(&self, recipe: &Recipe) -> Option<Compiled> {
        let path = self.entry(recipe)?;
        if let Err(why) = private_folder(self.dir.as_deref()?) {
            if path.parent().is_some_and(Path::exists) {
                tracing::warn!("the kernel cache is not used: {why}; the kernels are compiled");
            }
            return None;
        }
        let bytes = match read_private(&path) {
            Ok(Some(bytes)) => bytes,
            Ok(None) => return None,
            Err(why) => {
                tracing::warn!("ignoring the kernel cache entry {}: {why}; the kernels are compiled", path.display());
                return None;
            }
        };
        match decode(&bytes) {
            Some((built_from, program)) if built_from == recipe.0.as_bytes() => Some(program),
            Some(_) => {
                tracing::warn!(
                    "ignoring the kernel cache entry {}: it was built from another source or other options; the \
                     kernels are compiled again",
                    path.display()
                );
                None
            }
            None => {
                tracing::warn!(
                    "ignoring the damaged kernel cache entry {}: the kernels are compiled again",
                    path.display()
                );
                None
            }
        }
    }

    /// Keep `program`, built from `recipe`. Written private to a temporary name and renamed, so a reader
    /// never sees half an entry, and two jobs storing the same entry at once both succeed.
    pub fn store(&self, recipe: &Recipe, program: &Compiled) -> seis_core::error::Result<()> {
        let Some(path) = self.entry(recipe) else { return Ok(()) };
        let dir = path.parent().expect("an entry lies in the folder");
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|e| seis_core::error::Error::io(dir, e))?;
        private_folder(dir).map_err(|why| {
            seis_core::error::Error::io(dir, std::io::Error::new(std::io::ErrorKind::PermissionDenied, why))
        })?;
        // The temporary files of a process killed while storing an entry.
        seis_io::output::remove_stale(dir);
        seis_io::output::write_atomic_private(&path, &encode(recipe, program)).map(|_| ())
    }
}

/// The ids of the user running seisimage.
fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() }
}

/// Refuse a cache folder that is not the user's or that others may write in: anyone who can write there
/// could put code in it that a later run would load onto the GPU.
fn private_folder(dir: &Path) -> Result<(), String> {
    match seis_io::files::not_private(dir) {
        Some(why) => Err(format!("{why}; make it private (chmod 700) or set {CACHE_ENV} to a private folder")),
        None => Ok(()),
    }
}

/// The bytes of the entry at `path`: `None` when there is none; an error when it is not a regular file of
/// this user that only this user can write, or is too large to be one.
fn read_private(path: &Path) -> Result<Option<Vec<u8>>, String> {
    let file = match std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK).open(path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => return Err("it is a link".into()),
        Err(e) => return Err(e.to_string()),
    };
    let meta = file.metadata().map_err(|e| e.to_string())?;
    if !meta.file_type().is_file() {
        return Err("it is not a regular file".into());
    }
    if meta.uid() != euid() {
        return Err(format!("it belongs to another user (uid {})", meta.uid()));
    }
    if meta.mode() & 0o022 != 0 {
        return Err(format!("others may write it (mode {:o})", meta.mode() & 0o777));
    }
    if meta.len() > MAX_ENTRY_BYTES {
        return Err(format!("{} bytes, more than an entry holds", meta.len()));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(MAX_ENTRY_BYTES).read_to_end(&mut bytes).map_err(|e| e.to_string())?;
    Ok(Some(bytes))
}

fn checksum(recipe: &[u8], ptx: &[u8], cubin: &[u8]) -> [u8; 32] {
    let mut h = Sha256::new();
    for part in [recipe, ptx, cubin] {
        h.update((part.len() as u64).to_le_bytes());
        h.update(part);
    }
    h.finalize().into()
}

/// An entry: magic, recipe, PTX and CUBIN lengths (little-endian u64), their SHA-256, then the recipe,
/// the PTX and the CUBIN.
fn encode(recipe: &Recipe, program: &Compiled) -> Vec<u8> {
    let (recipe, ptx) = (recipe.0.as_bytes(), program.ptx.as_bytes());
    let mut out = Vec::with_capacity(HEADER_BYTES + recipe.len() + ptx.len() + program.cubin.len());
    out.extend_from_slice(MAGIC);
    for part in [recipe, ptx, &program.cubin] {
        out.extend_from_slice(&(part.len() as u64).to_le_bytes());
    }
    out.extend_from_slice(&checksum(recipe, ptx, &program.cubin));
    out.extend_from_slice(recipe);
    out.extend_from_slice(ptx);
    out.extend_from_slice(&program.cubin);
    out
}

/// The recipe an entry was built from, and its program; `None` for a damaged entry.
fn decode(bytes: &[u8]) -> Option<(&[u8], Compiled)> {
    let rest = bytes.strip_prefix(MAGIC.as_slice())?;
    let (lengths, rest) = rest.split_at_checked(24)?;
    let len = |i: usize| usize::try_from(u64::from_le_bytes(lengths[8 * i..8 * i + 8].try_into().ok()?)).ok();
    let (recipe_len, ptx_len, cubin_len) = (len(0)?, len(1)?, len(2)?);
    let (sum, rest) = rest.split_at_checked(32)?;
    if recipe_len.checked_add(ptx_len)?.checked_add(cubin_len)? != rest.len() {
        return None;
    }
    let (recipe, rest) = rest.split_at(recipe_len);
    let (ptx, cubin) = rest.split_at(ptx_len);
    if checksum(recipe, ptx, cubin) != sum || cubin.is_empty() {
        return None;
    }
    Some((recipe, Compiled { ptx: String::from_utf8(ptx.to_vec()).ok()?, cubin: cubin.to_vec() }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn program() -> Compiled {
        Compiled { ptx: ".version 9.0\n.entry k()\n{ ret; }\n".into(), cubin: (0..=255u8).cycle().take(5000).collect() }
    }

    fn recipe(source: &str, arch: &str) -> Recipe {
        Recipe::new(source, arch, &[format!("--gpu-architecture={arch}"), "--std=c++17".into()], (13, 0))
    }

    fn mode(path: &Path) -> u32 {
        std::fs::symlink_metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn an_entry_reads_back_as_stored() {
        let dir = tempfile::tempdir().unwrap();
        let cache = KernelCache::at(dir.path().join("nested"));
        let r = recipe("src", "sm_90");
        assert_eq!(cache.load(&r), None, "an empty cache has nothing");
        cache.store(&r, &program()).unwrap();
        assert_eq!(cache.load(&r), Some(program()));
        assert_eq!(cache.load(&recipe("src", "sm_80")), None);
    }

    #[test]
    fn the_recipe_changes_with_everything_that_changes_the_code() {
        let base = recipe("src", "sm_90");
        assert_eq!(base, recipe("src", "sm_90"));
        assert_eq!(base.key().len(), 64);
        let opts = |o: &[&str]| o.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        for other in [
            recipe("src ", "sm_90"),
            recipe("src", "sm_89"),
            Recipe::new(
                "src",
                "sm_90",
                &opts(&["--gpu-architecture=sm_90", "--std=c++17", "--use_fast_math"]),
                (13, 0),
            ),
            Recipe::new("src", "sm_90", &opts(&["--gpu-architecture=sm_90", "--std=c++17"]), (13, 1)),
            Recipe::new("sm_90", "src", &opts(&["--gpu-architecture=sm_90", "--std=c++17"]), (13, 0)),
        ] {
            assert_ne!(base, other);
            assert_ne!(base.key(), other.key());
        }
    }

    #[test]
    fn a_damaged_entry_is_never_loaded() {
        let r = recipe("src", "sm_90");
        let good = encode(&r, &program());
        assert_eq!(decode(&good), Some((r.0.as_bytes(), program())));
        // Every truncation, and a flipped bit anywhere, is refused.
        for len in [0, 10, MAGIC.len(), HEADER_BYTES - 1, HEADER_BYTES, good.len() - 1] {
            assert_eq!(decode(&good[..len]), None, "truncated to {len} bytes");
        }
        for at in [0, MAGIC.len() + 3, MAGIC.len() + 12, MAGIC.len() + 20, HEADER_BYTES + 5, good.len() - 1] {
            let mut bad = good.clone();
            bad[at] ^= 0x10;
            assert_eq!(decode(&bad), None, "bit flipped at byte {at}");
        }
        let mut longer = good.clone();
        longer.push(0);
        assert_eq!(decode(&longer), None, "trailing bytes");

        let dir = tempfile::tempdir().unwrap();
        let cache = KernelCache::at(dir.path());
        cache.store(&r, &program()).unwrap();
        let entry = cache.entry(&r).unwrap();
        std::fs::write(&entry, &good[..good.len() / 2]).unwrap();
        assert_eq!(cache.load(&r), None);
    }

    /// An intact entry (its checksum right) stored under the name of one recipe but built from another:
    /// what someone who knows how names are made could plant. It is not loaded.
    #[test]
    fn an_entry_built_from_another_recipe_is_never_loaded() {
        let dir = tempfile::tempdir().unwrap();
        let cache = KernelCache::at(dir.path());
        let (wanted, other) = (recipe("the kernels", "sm_90"), recipe("other code", "sm_90"));
        let planted = Compiled { ptx: "other".into(), cubin: vec![9; 100] };
        seis_io::output::write_atomic_private(cache.entry(&wanted).unwrap(), &encode(&other, &planted)).unwrap();
        assert_eq!(cache.load(&wanted), None);
        cache.store(&wanted, &program()).unwrap();
        assert_eq!(cache.load(&wanted), Some(program()), "replaced by the right one");
    }

    #[test]
    fn writers_of_one_entry_at_once_leave_an_intact_entry() {
        let dir = tempfile::tempdir().unwrap();
        let cache = KernelCache::at(dir.path());
        let r = recipe("src", "sm_90");
        std::thread::scope(|s| {
            for _ in 0..8 {
                s.spawn(|| cache.store(&r, &program()).expect("every writer succeeds"));
            }
        });
        assert_eq!(cache.load(&r), Some(program()));
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names.len(), 1, "no temporary file is left: {names:?}");
    }

    #[test]
    fn the_cache_is_private_to_its_user() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("home/.cache/seisimage");
        let cache = KernelCache::at(&folder);
        let r = recipe("src", "sm_90");
        cache.store(&r, &program()).unwrap();
        assert_eq!(mode(&folder), 0o700, "the folder is the user's alone");
        assert_eq!(mode(&cache.entry(&r).unwrap()), 0o600, "the entry is the user's alone");
    }

    #[test]
    fn entries_others_could_have_written_are_never_loaded() {
        let dir = tempfile::tempdir().unwrap();
        let cache = KernelCache::at(dir.path().join("cache"));
        let r = recipe("src", "sm_90");
        cache.store(&r, &program()).unwrap();
        let entry = cache.entry(&r).unwrap();
        assert_eq!(cache.load(&r), Some(program()));

        // writable by the group or by others
        for loose in [0o620, 0o602] {
            std::fs::set_permissions(&entry, std::fs::Permissions::from_mode(loose)).unwrap();
            assert_eq!(cache.load(&r), None, "mode {loose:o}");
        }
        std::fs::set_permissions(&entry, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(cache.load(&r), Some(program()));

        // a link to an intact entry elsewhere
        let elsewhere = dir.path().join("elsewhere.bin");
        std::fs::rename(&entry, &elsewhere).unwrap();
        std::os::unix::fs::symlink(&elsewhere, &entry).unwrap();
        assert_eq!(cache.load(&r), None, "a link is not followed");
        std::fs::remove_file(&entry).unwrap();

        // owned by another user (only root can give a file away)
        std::fs::rename(&elsewhere, &entry).unwrap();
        if std::os::unix::fs::chown(&entry, Some(65534), None).is_ok() {
            assert_eq!(cache.load(&r), None, "an entry of another user");
        }
    }

    #[test]
    fn a_folder_others_can_write_is_not_used() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("shared");
        let cache = KernelCache::at(&folder);
        let r = recipe("src", "sm_90");
        cache.store(&r, &program()).unwrap();
        std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o777)).unwrap();
        assert_eq!(cache.load(&r), None, "anyone could have put that entry there");
        let e = cache.store(&r, &program()).unwrap_err().to_string();
        assert!(e.contains("writable by others"), "{e}");
    }

    #[test]
    fn the_folder_comes_from_the_environment() {
        let vars = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| pairs.iter().find(|(n, _)| *n == name).map(|(_, v)| std::ffi::OsString::from(v))
        };
        let dir = |pairs| KernelCache::from_vars(vars(pairs)).dir().map(Path::to_path_buf);
        assert_eq!(dir(&[("HOME", "/home/u")]), Some(PathBuf::from("/home/u/.cache/seisimage")));
        assert_eq!(dir(&[("HOME", "/home/u"), ("XDG_CACHE_HOME", "/c")]), Some(PathBuf::from("/c/seisimage")));
        assert_eq!(dir(&[("HOME", "/home/u"), (CACHE_ENV, "/k")]), Some(PathBuf::from("/k")));
        assert_eq!(dir(&[("HOME", "/home/u"), (CACHE_ENV, "off")]), None);
        assert_eq!(dir(&[("HOME", "/home/u"), (CACHE_ENV, "")]), Some(PathBuf::from("/home/u/.cache/seisimage")));
        assert_eq!(dir(&[]), None, "no home, no cache");
    }

    #[test]
    fn an_unusable_folder_is_an_error_to_store_and_a_miss_to_load() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a-file");
        std::fs::write(&file, b"").unwrap();
        let cache = KernelCache::at(&file);
        let r = recipe("src", "sm_90");
        assert_eq!(cache.load(&r), None);
        assert!(cache.store(&r, &program()).is_err());
        assert_eq!(KernelCache::off().load(&r), None);
        assert!(KernelCache::off().store(&r, &program()).is_ok(), "storing nowhere is not an error");
    }
}
