//! Where a share's spectrum waits between the ingest and its bands (see [`super::bands`]).
//!
//! The input is read, windowed and transformed in time once. When the share's spectrum fits the engine at
//! once it is the spectrum itself; when it must go through in bands it waits, frequency-major and without
//! the lateral padding (`[ω][il][xl]`, so that a band is one contiguous stretch), in host memory or — when
//! the host cannot hold it — in a cache file on local scratch disk, and each band is read back from there
//! onto the padded grid. The input file is never read twice.
//!
//! The cache file is made by `tempfile` in the scratch folder: created exclusively, with an unpredictable
//! name that is removed at once (or no name at all, where the system can), so it goes with the process
//! however the process ends, and nobody else can open it.

use std::fs::File;
use std::ops::Range;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::time::Instant;

use num_complex::Complex32;
use rayon::prelude::*;

use super::spectrum::Spectrum;
use super::Plan;
use seis_core::alloc::try_host_vec;
use seis_core::context::RunContext;
use seis_core::error::{Error, Result};

/// Where an engine may keep a spectrum that waits for its bands: `[compute]`'s `host_memory_gb` and
/// `scratch_dir`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StoreSettings {
    /// At most this many bytes of host memory for the spectrum and the work on it; `None`: a share of what
    /// the system reports available ([`HOST_HEADROOM`]).
    pub host_memory: Option<u64>,
    /// Folder of the cache file; `None`: the system's temporary folder (`TMPDIR`, else `/tmp`).
    pub scratch_dir: Option<PathBuf>,
}

/// A run may plan to use this fraction of the host memory the system reports available: the page cache
/// of the input, the products being written and other processes need the rest.
pub const HOST_HEADROOM: f64 = 0.8;

impl StoreSettings {
    /// Bytes of host memory a run may plan to use now: the limit, or [`HOST_HEADROOM`] of what the system
    /// reports available (no bound where the system does not say).
    pub fn usable_host_memory(&self) -> u64 {
        let available = available_host_memory().map(|b| (b as f64 * HOST_HEADROOM) as u64);
        match (self.host_memory, available) {
            (Some(limit), Some(a)) => limit.min(a),
            (Some(limit), None) => limit,
            (None, Some(a)) => a,
            (None, None) => u64::MAX,
        }
    }

    pub fn scratch_dir(&self) -> PathBuf {
        self.scratch_dir.clone().unwrap_or_else(std::env::temp_dir)
    }
}

/// Bytes of memory this process could still be given: the least of what the system could give a new
/// program without swapping (Linux: `MemAvailable`), the room under the memory limit of the process's
/// control group (a Slurm allocation, a container) and the room under its address-space limit
/// (`RLIMIT_AS`, `ulimit -v`) beside what it has mapped already. A plan sized by the machine alone made
/// allocations fail, and the process abort, under either limit.
pub fn available_host_memory() -> Option<u64> {
    let available = kib_field("/proc/meminfo", "MemAvailable:")?;
    Some([cgroup_room(), address_space_room()].into_iter().flatten().fold(available, u64::min))
}

/// A `NAME: N kB` line of a file of `/proc`, in bytes.
fn kib_field(file: &str, name: &str) -> Option<u64> {
    let text = std::fs::read_to_string(file).ok()?;
    let line = text.lines().find_map(|l| l.strip_prefix(name))?;
    Some(line.split_whitespace().next()?.parse::<u64>().ok()? * 1024)
}

/// Room left under the memory limit of this process's control group: cgroup v2 (`memory.max`), else v1
/// (`memory.limit_in_bytes`); `None` without a limit.
fn cgroup_room() -> Option<u64> {
    let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let read =
        |dir: &std::path::Path, name: &str| std::fs::read_to_string(dir.join(name)).ok()?.trim().parse::<u64>().ok();
    let root = std::path::Path::new("/sys/fs/cgroup");
    // "max" (no limit) does not parse.
    let v2 = own.lines().find_map(|l| l.strip_prefix("0::")).and_then(|group| {
        let dir = root.join(group.trim().trim_start_matches('/'));
        Some(read(&dir, "memory.max")?.saturating_sub(read(&dir, "memory.current").unwrap_or(0)))
    });
    let v1 = || {
        let group = own.lines().find_map(|l| {
            let (_, rest) = l.split_once(':')?;
            let (controllers, path) = rest.split_once(':')?;
            controllers.split(',').any(|c| c == "memory").then_some(path)
        })?;
        let dir = root.join("memory").join(group.trim().trim_start_matches('/'));
        Some(read(&dir, "memory.limit_in_bytes")?.saturating_sub(read(&dir, "memory.usage_in_bytes").unwrap_or(0)))
    };
    v2.or_else(v1)
}

/// Room left under this process's address-space limit (`RLIMIT_AS`); `None` without a limit.
fn address_space_room() -> Option<u64> {
    let limit = rustix::process::getrlimit(rustix::process::Resource::As).current?;
    Some(limit.saturating_sub(kib_field("/proc/self/status", "VmSize:").unwrap_or(0)))
}

/// Where the spectrum of a share waits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// On the padded grid, all frequencies at once: the share goes through in one band.
    Whole,
    /// In host memory, frequency-major and unpadded.
    Memory,
    /// In a cache file on scratch disk, frequency-major and unpadded.
    Disk,
}

impl Place {
    pub fn name(self) -> &'static str {
        match self {
            Place::Whole => "whole",
            Place::Memory => "host memory",
            Place::Disk => "scratch disk",
        }
    }
}

/// The frequency-major layout of a waiting spectrum: plane `w` (a frequency index of the plan, counted from
/// `first`) holds `traces` values, one per input trace in `[il][xl]` order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    pub first: usize,
    pub frequencies: usize,
    pub traces: usize,
}

impl Layout {
    /// Index of the value of frequency `w` (a plan index) at trace `t`.
    pub fn index(&self, w: usize, t: usize) -> usize {
        (w - self.first) * self.traces + t
    }

    pub fn values(&self) -> usize {
        self.frequencies * self.traces
    }

    pub fn bytes(&self) -> u64 {
        self.values() as u64 * 8
    }
}

/// A spectrum's cache file on scratch disk (see the module comment): complex values at the offsets of a
/// [`Layout`], little-endian as in memory.
pub struct CacheFile {
    file: File,
    /// The folder, for messages (the file has no name).
    dir: PathBuf,
}

impl CacheFile {
    /// An empty cache file in `dir` for `bytes` of spectrum, refused with the numbers when the file system
    /// has not that much room.
    pub fn create(dir: &Path, bytes: u64) -> Result<Self> {
        if !dir.is_dir() {
            let message = format!("the scratch folder {} does not exist or is not a folder", dir.display());
            return Err(Error::at_key("compute.scratch_dir", message));
        }
        if let Ok(s) = rustix::fs::statvfs(dir) {
            let free = s.f_bavail.saturating_mul(s.f_frsize);
            if free < bytes {
                let message = format!(
                    "the spectrum does not fit in host memory and waits for its bands on scratch disk, which needs \
                     {:.2} GB, but the file system has {:.2} GB free: set compute.scratch_dir to a folder with room, \
                     or compute.host_memory_gb higher",
                    bytes as f64 / 1e9,
                    free as f64 / 1e9
                );
                return Err(Error::io(dir, std::io::Error::new(std::io::ErrorKind::StorageFull, message)));
            }
        }
        let file = tempfile::tempfile_in(dir).map_err(|e| Error::io(dir, e))?;
        tracing::debug!("spectrum cache of {:.2} GB in {}", bytes as f64 / 1e9, dir.display());
        Ok(CacheFile { file, dir: dir.to_path_buf() })
    }

    /// Write `values` at value offset `at`.
    pub fn write(&self, at: usize, values: &[Complex32]) -> Result<()> {
        self.file.write_all_at(as_bytes(values), at as u64 * 8).map_err(|e| self.error(e))
    }

    /// Read `out.len()` values from value offset `at`.
    pub fn read(&self, at: usize, out: &mut [Complex32]) -> Result<()> {
        self.file.read_exact_at(as_bytes_mut(out), at as u64 * 8).map_err(|e| self.error(e))
    }

    fn error(&self, e: std::io::Error) -> Error {
        Error::io(self.dir.join("(seisimage spectrum cache)"), e)
    }
}

fn as_bytes(v: &[Complex32]) -> &[u8] {
    // SAFETY: Complex32 is #[repr(C)] { f32, f32 }: 8 bytes, no padding, any bit pattern valid as bytes.
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<u8>(), std::mem::size_of_val(v)) }
}

fn as_bytes_mut(v: &mut [Complex32]) -> &mut [u8] {
    // SAFETY: as above; every byte pattern is a valid pair of f32.
    unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr().cast::<u8>(), std::mem::size_of_val(v)) }
}

/// The CPU engine's spectrum of a share between the ingest and the bands.
pub enum HostStore {
    /// The share at once, on the padded grid: the spectrum of its one band.
    Whole(Spectrum),
    Memory {
        data: Vec<Complex32>,
        layout: Layout,
    },
    Disk {
        file: CacheFile,
        layout: Layout,
        transposed: Vec<Complex32>,
    },
}

impl HostStore {
    /// An empty store of `plan`'s share at `place` (the cache file in `scratch`).
    pub fn new(plan: &Plan, place: Place, scratch: &Path) -> Result<Self> {
        let frequencies = plan.frequencies.clone();
        let [ni, nx, _] = plan.input.shape();
        let layout = Layout { first: frequencies.start, frequencies: frequencies.len(), traces: ni * nx };
        Ok(match place {
            Place::Whole => HostStore::Whole(Spectrum {
                data: try_host_vec(frequencies.len() * plan.nk(), "the spectrum")?,
                nk: plan.nk(),
                first: frequencies.start,
            }),
            Place::Memory => HostStore::Memory { data: try_host_vec(layout.values(), "the spectrum")?, layout },
            Place::Disk => {
                HostStore::Disk { file: CacheFile::create(scratch, layout.bytes())?, layout, transposed: Vec::new() }
            }
        })
    }

    /// Store the spectra of `rows.len() / nw` traces from inline `il0` (`rows` trace-major: the `nw`
    /// frequencies of the first trace, then of the next), `nx` traces per inline, padded rows `nx_pad` long.
    pub fn put_chunk(&mut self, il0: usize, nx: usize, nx_pad: usize, nw: usize, rows: &[Complex32]) -> Result<()> {
        let traces = rows.len() / nw;
        match self {
            HostStore::Whole(spectrum) => spectrum.planes_mut().enumerate().for_each(|(iw, plane)| {
                for (t, row) in rows.chunks(nw).enumerate() {
                    plane[(il0 + t / nx) * nx_pad + t % nx] = row[iw];
                }
            }),
            HostStore::Memory { data, layout } => {
                let (traces_all, start) = (layout.traces, il0 * nx);
                data.par_chunks_mut(traces_all).enumerate().for_each(|(iw, plane)| {
                    for (t, row) in rows.chunks(nw).enumerate() {
                        plane[start + t] = row[iw];
                    }
                })
            }
            HostStore::Disk { file, layout, transposed } => {
                transposed.resize(traces * nw, Complex32::default());
                transposed.par_chunks_mut(traces).enumerate().for_each(|(iw, plane)| {
                    for (t, row) in rows.chunks(nw).enumerate() {
                        plane[t] = row[iw];
                    }
                });
                for (iw, plane) in transposed.chunks(traces).enumerate() {
                    file.write(layout.index(layout.first + iw, il0 * nx), plane)?;
                }
            }
        }
        Ok(())
    }

    /// The spectrum of `band` (plan frequency indices) on the padded grid of `plan`. The whole store gives
    /// its spectrum away (it is one band); the others are read into a new one.
    pub fn band(&mut self, band: Range<usize>, plan: &Plan, ctx: &mut RunContext) -> Result<Spectrum> {
        let [ni, nx, _] = plan.input.shape();
        let (nk, nx_pad) = (plan.nk(), plan.padded[1]);
        let t = Instant::now();
        let mut spectrum = match self {
            HostStore::Whole(s) => {
                debug_assert_eq!(s.first..s.first + s.data.len() / nk, band);
                return Ok(std::mem::replace(s, Spectrum { data: Vec::new(), nk, first: band.start }));
            }
            _ => Spectrum { data: try_host_vec(band.len() * nk, "a band of the spectrum")?, nk, first: band.start },
        };
        let pad = |plane: &mut [Complex32], from: &[Complex32]| {
            for (il, row) in from.chunks(nx).enumerate().take(ni) {
                plane[il * nx_pad..il * nx_pad + nx].copy_from_slice(row);
            }
        };
        let bytes = (band.len() * ni * nx * 8) as u64;
        match self {
            HostStore::Whole(_) => unreachable!("returned above"),
            HostStore::Memory { data, layout } => {
                let from = &data[layout.index(band.start, 0)..layout.index(band.end, 0)];
                spectrum.planes_mut().zip(from.par_chunks(layout.traces)).for_each(|(plane, from)| pad(plane, from));
            }
            HostStore::Disk { file, layout, transposed } => {
                transposed.resize(layout.traces, Complex32::default());
                for (w, plane) in band.clone().zip(spectrum.data.chunks_mut(nk)) {
                    ctx.check()?;
                    file.read(layout.index(w, 0), transposed)?;
                    pad(plane, transposed);
                }
            }
        }
        ctx.stats.add("band-load", t.elapsed(), bytes);
        Ok(spectrum)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cache_file_gives_back_what_was_written_and_leaves_nothing_behind() {
        let dir = tempfile::tempdir().unwrap();
        let layout = Layout { first: 5, frequencies: 3, traces: 4 };
        let file = CacheFile::create(dir.path(), layout.bytes()).unwrap();
        let v = |w: usize, t: usize| Complex32::new(w as f32, t as f32 + 0.5);
        // written plane by plane in two pieces of traces, out of order
        for w in [7, 5, 6] {
            file.write(layout.index(w, 2), &[v(w, 2), v(w, 3)]).unwrap();
            file.write(layout.index(w, 0), &[v(w, 0), v(w, 1)]).unwrap();
        }
        let mut out = vec![Complex32::default(); 8];
        file.read(layout.index(6, 0), &mut out).unwrap();
        let expect: Vec<Complex32> = (6..8).flat_map(|w| (0..4).map(move |t| v(w, t))).collect();
        assert_eq!(out, expect);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "the cache file must have no name");
        let mut past = vec![Complex32::default(); 2];
        assert!(file.read(layout.index(8, 0), &mut past).is_err(), "reading past the end is an error");
    }

    #[test]
    fn a_scratch_folder_that_is_missing_is_a_setting_error() {
        let e = CacheFile::create(Path::new("/nonexistent/seisimage-scratch"), 10).err().unwrap();
        assert!(e.to_string().contains("compute.scratch_dir"), "{e}");
        assert_eq!(e.exit_code(), 2);
    }

    #[test]
    fn the_usable_host_memory_is_the_limit_at_most() {
        let limited = StoreSettings { host_memory: Some(1000), scratch_dir: None };
        assert_eq!(limited.usable_host_memory(), 1000);
        let free = StoreSettings::default().usable_host_memory();
        assert!(free > 1 << 20, "{free}");
        assert!(available_host_memory().is_some(), "Linux reports MemAvailable");
    }
}
