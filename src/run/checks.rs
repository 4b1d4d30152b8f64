//! What can be checked of a job against this machine before anything runs: the files it names, and (for
//! `validate`) whether its plan fits the machine's memory.
//!
//! A missing input or velocity file, or an output folder that cannot be made or written, is a mistake in
//! the job, placed at the key that names the path (exit code 2), found with the job's other mistakes: for
//! `seisimage run a.toml b.toml`, before job a migrates. Nothing is created or changed here.

use std::path::Path;

use crate::error::Result;
use crate::job::Job;

use super::folder::human_bytes;
use super::folder::refuse_unless_empty;
use super::Prepared;
use crate::imaging::cpu::host_plan;
use crate::imaging::store::{Place, HOST_HEADROOM};

/// Check the files `job` names: its input and velocity files can be read, its output folder is (or can be
/// made) a folder this process can write in, and `output.existing = "refuse"` finds it empty.
pub fn check_files(job: &Job) -> Result<()> {
    let c = &job.config;
    readable_file(job, "input.path", &c.input.path)?;
    // A text table, a text file of functions, or a cube.
    if let Some(path) = &c.velocity.path {
        readable_file(job, "velocity.path", path)?;
    }
    let dir = &c.output.dir;
    writable_folder(dir).map_err(|e| job.error_at("output.dir", format!("cannot write in {}: {e}", dir.display())))?;
    refuse_unless_empty(job)
}

/// Whether `path` is a regular file this process can open (without waiting: a FIFO is refused, not opened),
/// or an MDIO dataset (a folder) whose root `zarr.json` is one.
fn readable_file(job: &Job, key: &str, path: &Path) -> Result<()> {
    let zarr_root = path.join("zarr.json");
    let file = if path.is_dir() && zarr_root.exists() { zarr_root.as_path() } else { path };
    match crate::io::files::open_regular(file) {
        Ok(_) => Ok(()),
        Err(e) => {
            let why = match e {
                crate::Error::Io { source, .. } => source.to_string(),
                other => other.to_string(),
            };
            Err(job.error_at(key, format!("cannot read {}: {why}", path.display())))
        }
    }
}

/// Whether `dir` is a folder this process can write in, or the nearest folder above it that exists is
/// (so that it can be made).
fn writable_folder(dir: &Path) -> std::io::Result<()> {
    let mut at = dir;
    loop {
        match std::fs::metadata(at) {
            Ok(m) if m.is_dir() => {
                use rustix::fs::Access;
                return rustix::fs::access(at, Access::WRITE_OK | Access::EXEC_OK).map_err(Into::into);
            }
            Ok(_) if at == dir => {
                return Err(std::io::Error::new(std::io::ErrorKind::NotADirectory, "it is a file, not a folder"))
            }
            Ok(_) => return Err(std::io::Error::from_raw_os_error(libc::ENOTDIR)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => match at.parent() {
                Some(parent) if !parent.as_os_str().is_empty() => at = parent,
                _ => return Err(e),
            },
            Err(e) => return Err(e),
        }
    }
}

/// What `validate` says of the plan's memory against this machine: the host memory the CPU engine needs
/// (and the host side of a GPU run) against what it may use, and the device memory against the GPU's.
pub fn memory_report(p: &Prepared) -> Vec<String> {
    let plan = &p.plan;
    let members = p.scan.len().max(1);
    let mut lines = vec![host_memory_line(p, members)];
    let device = match crate::gpu::device_memory_estimate(plan, members) {
        Ok(bytes) => bytes,
        Err(e) => {
            lines.push(format!("device memory: {e}"));
            return lines;
        }
    };
    let compute = &p.job.config.compute;
    lines.push(match crate::gpu::runtime::probe_device(compute.device) {
        Ok(rt) => {
            let d = &rt.devices[0];
            let limit = compute.device_memory_gb.map(|gb| (gb * 1e9) as u64);
            let have = limit.map_or(d.free_memory_bytes, |l| l.min(d.free_memory_bytes));
            let verdict = match (device <= have, plan.method.rules().whole_spectrum()) {
                (true, _) => "fits".to_string(),
                (false, Some(why)) => format!("does not fit, and {why}: it cannot run in bands"),
                (false, _) => "does not fit at once: the GPU runs it in frequency bands, reading the input once \
                               per band"
                    .to_string(),
            };
            format!(
                "device memory: the plan needs ≈ {} (and cuFFT's work areas), GPU {} ({}) has {} free{}: {verdict}",
                human_bytes(device),
                compute.device,
                d.name,
                human_bytes(d.free_memory_bytes),
                limit.map(|l| format!(", compute.device_memory_gb allows {}", human_bytes(l))).unwrap_or_default()
            )
        }
        Err(why) => format!(
            "device memory: the plan needs ≈ {} on a GPU; there is no usable GPU here ({})",
            human_bytes(device),
            super::engine::short_reason(&why.0)
        ),
    });
    lines
}

/// The CPU engine's memory plan as the run will make it: the same bound (`compute.host_memory_gb`, or
/// [`HOST_HEADROOM`] of what this process could still be given, counting `ulimit -v` and a control group's
/// limit) and the same choice between the whole spectrum, frequency bands and a refusal, so that what
/// `validate` calls "fits" is what the run can have.
fn host_memory_line(p: &Prepared, members: usize) -> String {
    let store = p.job.config.compute.store_settings();
    let usable = store.usable_host_memory();
    let have = match (crate::imaging::store::available_host_memory(), store.host_memory) {
        (Some(available), None) => format!(
            "this machine has {} available, of which a run uses at most {:.0} %",
            human_bytes(available),
            HOST_HEADROOM * 100.0
        ),
        (Some(available), Some(_)) => format!(
            "this machine has {} available, and compute.host_memory_gb allows {}",
            human_bytes(available),
            human_bytes(usable)
        ),
        (None, _) => "what is available is unknown here".to_string(),
    };
    let limited = store.host_memory.is_some();
    match host_plan(&p.plan, members, usable, limited) {
        Ok(hp) => {
            let verdict = match hp.place {
                Place::Whole => "fits".to_string(),
                Place::Memory => {
                    format!("fits in {} frequency bands, the spectrum waiting in memory", hp.bands.ranges.len())
                }
                Place::Disk => {
                    format!("fits in {} frequency bands, the spectrum waiting on scratch disk", hp.bands.ranges.len())
                }
            };
            format!(
                "host memory: the plan needs ≈ {} ({}), {have}: {verdict}",
                human_bytes(hp.budget.total()),
                hp.budget.describe()
            )
        }
        Err(why) => format!("host memory: {have}: does not fit: {why}"),
    }
}
