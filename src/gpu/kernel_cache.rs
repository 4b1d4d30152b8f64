//! Compiled kernels kept on disk between runs, so that only the first run on a machine pays for NVRTC.
//!
//! NVRTC takes about 20 ms to compile the kernels to device code on an H200 host, which every process
//! would pay again; loading them from here takes 1 ms. A compiled program is stored under a name derived
//! from everything that decides its contents (the kernel source, the architecture, the options, the NVRTC
//! and seisimage versions), so a new seisimage, NVRTC or GPU model simply finds no entry and compiles.
//! Entries carry a checksum: a damaged one is ignored and replaced, never loaded.
//!
//! Where: `$SEISIMAGE_KERNEL_CACHE` if set (`off` turns the cache off), else `$XDG_CACHE_HOME/seisimage`,
//! else `~/.cache/seisimage`.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::kernels::Compiled;

/// The environment variable that moves (a folder) or disables (`off`) the cache.
pub const CACHE_ENV: &str = "SEISIMAGE_KERNEL_CACHE";

/// First bytes of an entry; raised when the layout changes.
const MAGIC: &[u8; 20] = b"seisimage-kernels/1\n";
/// Magic, the two lengths and the checksum.
const HEADER_BYTES: usize = MAGIC.len() + 8 + 8 + 32;

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

    fn entry(&self, key: &str) -> Option<PathBuf> {
        self.dir.as_ref().map(|d| d.join(format!("kernels-{key}.bin")))
    }

    /// The program stored under `key`, if there is an intact one.
    pub fn load(&self, key: &str) -> Option<Compiled> {
        let path = self.entry(key)?;
        let bytes = std::fs::read(&path).ok()?;
        let program = decode(&bytes);
        if program.is_none() {
            tracing::warn!(
                "ignoring the damaged kernel cache entry {}: the kernels are compiled again",
                path.display()
            );
        }
        program
    }

    /// Keep `program` under `key`. Written to a temporary name and renamed, so a reader never sees half an
    /// entry, and two jobs storing the same entry at once both succeed.
    pub fn store(&self, key: &str, program: &Compiled) -> crate::error::Result<()> {
        let Some(path) = self.entry(key) else { return Ok(()) };
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| crate::error::Error::io(dir, e))?;
        }
        crate::io::output::write_atomic(&path, &encode(program)).map(|_| ())
    }
}

/// The name a program is stored under: a digest of everything that decides its contents.
pub fn key(source: &str, arch: &str, fast_math: bool, nvrtc: (i32, i32)) -> String {
    let mut h = Sha256::new();
    for part in [
        env!("CARGO_PKG_VERSION"),
        arch,
        if fast_math { "fast-math" } else { "accurate" },
        &format!("nvrtc {}.{}", nvrtc.0, nvrtc.1),
        source,
    ] {
        // Each part with its length, so that no two different lists of parts hash the same bytes.
        h.update((part.len() as u64).to_le_bytes());
        h.update(part.as_bytes());
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

fn checksum(ptx: &[u8], cubin: &[u8]) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(ptx);
    h.update(cubin);
    h.finalize().into()
}

/// An entry: magic, PTX length, CUBIN length (little-endian u64), SHA-256 of both, PTX, CUBIN.
fn encode(program: &Compiled) -> Vec<u8> {
    let ptx = program.ptx.as_bytes();
    let mut out = Vec::with_capacity(HEADER_BYTES + ptx.len() + program.cubin.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&(ptx.len() as u64).to_le_bytes());
    out.extend_from_slice(&(program.cubin.len() as u64).to_le_bytes());
    out.extend_from_slice(&checksum(ptx, &program.cubin));
    out.extend_from_slice(ptx);
    out.extend_from_slice(&program.cubin);
    out
}

fn decode(bytes: &[u8]) -> Option<Compiled> {
    let rest = bytes.strip_prefix(MAGIC.as_slice())?;
    let (lengths, rest) = rest.split_at_checked(16)?;
    let ptx_len = usize::try_from(u64::from_le_bytes(lengths[..8].try_into().ok()?)).ok()?;
    let cubin_len = usize::try_from(u64::from_le_bytes(lengths[8..].try_into().ok()?)).ok()?;
    let (sum, rest) = rest.split_at_checked(32)?;
    if ptx_len.checked_add(cubin_len)? != rest.len() {
        return None;
    }
    let (ptx, cubin) = rest.split_at(ptx_len);
    if checksum(ptx, cubin) != sum || cubin.is_empty() {
        return None;
    }
    Some(Compiled { ptx: String::from_utf8(ptx.to_vec()).ok()?, cubin: cubin.to_vec() })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn program() -> Compiled {
        Compiled { ptx: ".version 9.0\n.entry k()\n{ ret; }\n".into(), cubin: (0..=255u8).cycle().take(5000).collect() }
    }

    #[test]
    fn an_entry_reads_back_as_stored() {
        let dir = tempfile::tempdir().unwrap();
        let cache = KernelCache::at(dir.path().join("nested"));
        let k = key("src", "sm_90", false, (13, 0));
        assert_eq!(cache.load(&k), None, "an empty cache has nothing");
        cache.store(&k, &program()).unwrap();
        assert_eq!(cache.load(&k), Some(program()));
        assert_eq!(cache.load(&key("src", "sm_80", false, (13, 0))), None);
    }

    #[test]
    fn the_key_changes_with_everything_that_changes_the_code() {
        let base = key("src", "sm_90", false, (13, 0));
        assert_eq!(base, key("src", "sm_90", false, (13, 0)));
        assert_eq!(base.len(), 64);
        for other in [
            key("src ", "sm_90", false, (13, 0)),
            key("src", "sm_89", false, (13, 0)),
            key("src", "sm_90", true, (13, 0)),
            key("src", "sm_90", false, (13, 1)),
            key("", "src", false, (13, 0)),
        ] {
            assert_ne!(base, other);
        }
    }

    #[test]
    fn a_damaged_entry_is_never_loaded() {
        let good = encode(&program());
        assert_eq!(decode(&good), Some(program()));
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
        let k = key("src", "sm_90", false, (13, 0));
        cache.store(&k, &program()).unwrap();
        let entry = cache.entry(&k).unwrap();
        std::fs::write(&entry, &good[..good.len() / 2]).unwrap();
        assert_eq!(cache.load(&k), None);
    }

    #[test]
    fn writers_of_one_entry_at_once_leave_an_intact_entry() {
        let dir = tempfile::tempdir().unwrap();
        let cache = KernelCache::at(dir.path());
        let k = key("src", "sm_90", false, (13, 0));
        std::thread::scope(|s| {
            for _ in 0..8 {
                s.spawn(|| cache.store(&k, &program()).expect("every writer succeeds"));
            }
        });
        assert_eq!(cache.load(&k), Some(program()));
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names.len(), 1, "no temporary file is left: {names:?}");
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
        let k = key("src", "sm_90", false, (13, 0));
        assert_eq!(cache.load(&k), None);
        assert!(cache.store(&k, &program()).is_err());
        assert_eq!(KernelCache::off().load(&k), None);
        assert!(KernelCache::off().store(&k, &program()).is_ok(), "storing nowhere is not an error");
    }
}
