//! Finding out whether a CUDA device is usable here, without ever letting a missing library panic.
//!
//! cudarc loads libcuda, libnvrtc and libcufft on first use and panics when one is missing, so every entry
//! point of the GPU backend goes through [`probe`] first, which checks each library's presence and turns
//! every failure into a sentence a user can act on.

use serde::Serialize;

use cudarc::driver::{result as cu, sys as cusys};

/// One CUDA device as the driver reports it.
#[derive(Clone, Debug, Serialize)]
pub struct DeviceInfo {
    /// The device's primary context, made to read the free memory and held so that an engine opened on
    /// this device shares it instead of having the driver build it a second time (about 0.1 s).
    #[serde(skip)]
    pub(crate) context: Option<std::sync::Arc<cudarc::driver::CudaContext>>,
    pub ordinal: usize,
    pub name: String,
    pub total_memory_bytes: u64,
    pub free_memory_bytes: u64,
    pub compute_capability: (i32, i32),
    pub multiprocessors: i32,
    pub pci_bus_id: i32,
}

/// What the GPU runtime offers on this machine.
#[derive(Clone, Debug, Serialize)]
pub struct GpuRuntime {
    /// CUDA version supported by the driver, e.g. (13, 0).
    pub driver_cuda_version: (i32, i32),
    pub nvrtc_version: (i32, i32),
    pub cufft_version: i32,
    pub devices: Vec<DeviceInfo>,
}

/// Why no GPU can be used, in words.
#[derive(Clone, Debug, Serialize, thiserror::Error)]
#[error("{0}")]
pub struct Unavailable(pub String);

/// The three dynamically loaded libraries: the driver, the runtime compiler, the FFTs.
const LIBRARIES: [(&str, &str); 3] = [
    ("cuda", "libcuda (the NVIDIA driver)"),
    ("nvrtc", "libnvrtc (CUDA runtime compiler)"),
    ("cufft", "libcufft (CUDA FFT library)"),
];

/// Whether library `i` of [`LIBRARIES`] opens.
///
/// Each is looked for once per process, by the names cudarc loads it by, and the first that opens is kept
/// open: cudarc's own load then finds it in memory. A check that closed it again would make the process
/// load cuFFT and NVRTC, hundreds of megabytes, once per check and once more for use.
fn library_opens(i: usize) -> bool {
    static KEPT: [std::sync::OnceLock<Option<libloading::Library>>; 3] =
        [std::sync::OnceLock::new(), std::sync::OnceLock::new(), std::sync::OnceLock::new()];
    KEPT[i]
        .get_or_init(|| {
            cudarc::get_lib_name_candidates(LIBRARIES[i].0).iter().find_map(|candidate| {
                // SAFETY: loading a CUDA library runs only its initialisers.
                unsafe { libloading::Library::new(candidate) }.ok()
            })
        })
        .is_some()
}

/// Presence of the three dynamically loaded libraries.
pub fn libraries_present() -> [(&'static str, bool); 3] {
    [0, 1, 2].map(|i| (LIBRARIES[i].1, library_opens(i)))
}

/// Check the libraries and the driver, and list the devices.
pub fn probe() -> Result<GpuRuntime, Unavailable> {
    probe_devices(None)
}

/// [`probe`], describing only device `ordinal` (describing a device creates its context, which costs a
/// tenth of a second per device on a node of eight). Err when there is no such device.
pub fn probe_device(ordinal: usize) -> Result<GpuRuntime, Unavailable> {
    probe_devices(Some(cuda_ordinal(ordinal)?))
}

/// The number of CUDA devices this process would see, from the NVIDIA driver's list of its GPUs and
/// `CUDA_VISIBLE_DEVICES`, without initialising CUDA; `None` where the list cannot say (no such list, or
/// devices named by UUID): then [`device_count`] asks the driver.
///
/// `--gpus N` counts before it starts its ranks, and the ranks initialise CUDA themselves. On a host of four
/// H100s, initialising CUDA in the launcher only to count took 0.53-0.93 s, and the ranks started that much
/// later.
pub fn listed_device_count() -> Option<usize> {
    match driver_list()? {
        (gpus, None) => Some(gpus),
        (gpus, Some(list)) => visible_of(&list, gpus),
    }
}

/// The GPUs in the NVIDIA driver's list and `CUDA_VISIBLE_DEVICES` (`None`: not set), read without
/// initialising CUDA; `None` where there is no such list or the variable is not text.
fn driver_list() -> Option<(usize, Option<String>)> {
    let gpus = std::fs::read_dir("/proc/driver/nvidia/gpus").ok()?.count();
    match std::env::var("CUDA_VISIBLE_DEVICES") {
        Err(std::env::VarError::NotPresent) => Some((gpus, None)),
        Err(std::env::VarError::NotUnicode(_)) => None,
        Ok(list) => Some((gpus, Some(list))),
    }
}

/// The `CUDA_VISIBLE_DEVICES` under which device `device` (an ordinal of those this process sees now) is
/// the only device CUDA sees, without initialising CUDA; `None` where the driver's list and the variable
/// cannot say (devices named by UUID, no such list), there is no such device, or it is the only one.
///
/// CUDA's start-up initialises every device it sees, one after another. On a host of four H100s (persistence
/// mode on), a run on one of them spent 0.90 s in it with all four visible and 0.21 s with one, and the
/// command took 1.51 s against 0.75 s. A process that uses one device sets the variable before CUDA starts
/// ([`see_only`] says so to this crate).
pub fn only_device(device: usize) -> Option<String> {
    visible_list(device..device + 1)
}

/// The `CUDA_VISIBLE_DEVICES` under which the first `n` devices this process sees now are all CUDA sees,
/// for processes started from this one (the ranks of `run --gpus N`); `None` as for [`only_device`], and
/// where they are all it sees already.
pub fn first_devices(n: usize) -> Option<String> {
    visible_list(0..n)
}

/// [`only_device`] and [`first_devices`]: the devices `wanted` of those this process sees now.
fn visible_list(wanted: std::ops::Range<usize>) -> Option<String> {
    let (gpus, list) = driver_list()?;
    list_of(list.as_deref(), gpus, wanted)
}

/// The devices `wanted` of the `gpus` devices `CUDA_VISIBLE_DEVICES` = `list` (`None`: not set) leaves
/// visible, as a list for the variable; `None` where the list cannot say, `wanted` goes beyond it, or it
/// holds every device visible (nothing to change).
fn list_of(list: Option<&str>, gpus: usize, wanted: std::ops::Range<usize>) -> Option<String> {
    let (visible, entries): (usize, Vec<String>) = match list {
        None => (gpus, (0..gpus).map(|i| i.to_string()).collect()),
        Some(list) => (visible_of(list, gpus)?, list.split(',').map(|e| e.trim().to_string()).collect()),
    };
    if wanted.is_empty() || wanted.end > visible || wanted == (0..visible) {
        return None;
    }
    Some(entries[wanted].join(","))
}

/// The device this process let CUDA see alone, once it has ([`see_only`]).
static SEEN_ALONE: std::sync::OnceLock<usize> = std::sync::OnceLock::new();

/// This process set `CUDA_VISIBLE_DEVICES` to [`only_device`]`(device)` before CUDA started: from now on
/// CUDA knows device `device` as its device 0, and no other.
pub fn see_only(device: usize) {
    let _ = SEEN_ALONE.set(device);
}

/// CUDA's ordinal of device `device` of this process (see [`see_only`]).
fn cuda_ordinal(device: usize) -> Result<usize, Unavailable> {
    match SEEN_ALONE.get() {
        None => Ok(device),
        Some(&alone) if alone == device => Ok(0),
        Some(&alone) => Err(Unavailable(format!(
            "compute.device = {device}, but this process let CUDA see only device {alone} (jobs run by one command \
             share one device)"
        ))),
    }
}

/// How many of `gpus` devices `CUDA_VISIBLE_DEVICES = list` leaves visible: the indices up to the first
/// that is not a device or repeats one, as CUDA reads the list; `None` for devices named by UUID.
fn visible_of(list: &str, gpus: usize) -> Option<usize> {
    let mut seen = std::collections::HashSet::new();
    let mut visible = 0;
    for entry in list.split(',').map(str::trim) {
        if entry.starts_with("GPU-") || entry.starts_with("MIG-") {
            return None;
        }
        match entry.parse::<usize>() {
            Ok(i) if i < gpus && seen.insert(i) => visible += 1,
            _ => break,
        }
    }
    Some(visible)
}

/// The number of CUDA devices this process can see (after `CUDA_VISIBLE_DEVICES`), without opening them.
/// Only the driver is loaded: counting is what `--gpus` does before it starts its ranks, which load and
/// check the rest.
pub fn device_count() -> Result<usize, Unavailable> {
    if !library_opens(0) {
        return Err(Unavailable(format!("no usable CUDA installation: cannot load {}", LIBRARIES[0].1)));
    }
    cu::init().map_err(|e| Unavailable(format!("the NVIDIA driver did not initialise: {}", driver_error(e))))?;
    cu::device::get_count()
        .map(|n| n as usize)
        .map_err(|e| Unavailable(format!("cannot count CUDA devices: {}", driver_error(e))))
}

fn probe_devices(only: Option<usize>) -> Result<GpuRuntime, Unavailable> {
    let t = std::time::Instant::now();
    let missing: Vec<&str> = libraries_present().iter().filter(|(_, ok)| !ok).map(|(n, _)| *n).collect();
    if !missing.is_empty() {
        return Err(Unavailable(format!(
            "no usable CUDA installation: cannot load {} (install the NVIDIA driver and CUDA 13 libraries, or \
             add their folder to LD_LIBRARY_PATH)",
            missing.join(", ")
        )));
    }
    cu::init().map_err(|e| Unavailable(format!("the NVIDIA driver did not initialise: {}", driver_error(e))))?;
    tracing::debug!("CUDA driver initialised in {:.3} s", t.elapsed().as_secs_f64());
    let count =
        cu::device::get_count().map_err(|e| Unavailable(format!("cannot count CUDA devices: {}", driver_error(e))))?;
    if count == 0 {
        return Err(Unavailable("the NVIDIA driver is installed but reports no CUDA device".into()));
    }
    let mut v = 0;
    // SAFETY: plain out-parameter call into the loaded driver.
    unsafe { cusys::cuDriverGetVersion(&mut v) }
        .result()
        .map_err(|e| Unavailable(format!("cannot read the driver version: {}", driver_error(e))))?;
    let driver_cuda_version = (v / 1000, (v % 1000) / 10);

    let (mut major, mut minor) = (0, 0);
    // SAFETY: out-parameters; libnvrtc is present (checked above).
    unsafe { cudarc::nvrtc::sys::nvrtcVersion(&mut major, &mut minor) }
        .result()
        .map_err(|e| Unavailable(format!("cannot read the NVRTC version: {e:?}")))?;
    let t = std::time::Instant::now();
    let cufft_version = cudarc::cufft::result::get_version()
        .map_err(|e| Unavailable(format!("cannot read the cuFFT version: {e:?}")))?;
    tracing::debug!("cuFFT library loaded in {:.3} s", t.elapsed().as_secs_f64());

    let ordinals = match only {
        Some(n) if n >= count as usize => {
            return Err(Unavailable(format!("compute.device = {n} but only {count} CUDA device(s) exist")))
        }
        Some(n) => n..n + 1,
        None => 0..count as usize,
    };
    let t = std::time::Instant::now();
    let devices = ordinals.map(device_info).collect::<Result<Vec<_>, _>>()?;
    tracing::debug!("{} device(s) opened in {:.3} s", devices.len(), t.elapsed().as_secs_f64());
    Ok(GpuRuntime { driver_cuda_version, nvrtc_version: (major, minor), cufft_version, devices })
}

fn device_info(ordinal: usize) -> Result<DeviceInfo, Unavailable> {
    let fail = |what: &str, e: cu::DriverError| {
        Unavailable(format!("device {ordinal}: cannot read {what}: {}", driver_error(e)))
    };
    let dev = cu::device::get(ordinal as i32).map_err(|e| fail("the handle", e))?;
    let name = cu::device::get_name(dev).map_err(|e| fail("the name", e))?;
    // SAFETY: `dev` is a valid device handle from the driver.
    let attr = |a| unsafe { cu::device::get_attribute(dev, a) };
    use cusys::CUdevice_attribute::*;
    let major = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR).map_err(|e| fail("the compute capability", e))?;
    let minor = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR).map_err(|e| fail("the compute capability", e))?;
    let multiprocessors = attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT).map_err(|e| fail("the SM count", e))?;
    let pci_bus_id = attr(CU_DEVICE_ATTRIBUTE_PCI_BUS_ID).map_err(|e| fail("the PCI bus id", e))?;
    // SAFETY: as above.
    let total = unsafe { cu::device::total_mem(dev) }.map_err(|e| fail("the memory size", e))? as u64;
    // Free memory needs a context: the device's primary context, which an engine on this device shares.
    let context = cudarc::driver::CudaContext::new(ordinal)
        .map_err(|e| fail("the free memory (creating a context failed)", e))?;
    let free = context.mem_get_info().map(|(free, _)| free as u64).map_err(|e| fail("the free memory", e))?;
    Ok(DeviceInfo {
        context: Some(context),
        ordinal,
        name,
        total_memory_bytes: total,
        free_memory_bytes: free,
        compute_capability: (major, minor),
        multiprocessors,
        pci_bus_id,
    })
}

/// A driver error as "NAME: description".
pub fn driver_error(e: cu::DriverError) -> String {
    let name = e.error_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|_| format!("{:?}", e.0));
    let text = e.error_string().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    if text.is_empty() {
        name
    } else {
        format!("{name}: {text}")
    }
}

#[cfg(test)]
mod tests {
    use super::{list_of, visible_of};

    #[test]
    fn the_visible_devices_are_counted_as_cuda_reads_the_list() {
        assert_eq!(visible_of("0,1,2,3", 4), Some(4));
        assert_eq!(visible_of("2", 4), Some(1));
        assert_eq!(visible_of(" 1 , 3 ", 4), Some(2));
        // The list ends at the first index that is no device, or repeats one.
        assert_eq!(visible_of("0,7,1", 4), Some(1));
        assert_eq!(visible_of("1,1,2", 4), Some(1));
        assert_eq!(visible_of("", 4), Some(0));
        assert_eq!(visible_of("-1", 4), Some(0));
        // UUIDs are the driver's to resolve.
        assert_eq!(visible_of("GPU-8d3f0a51", 4), None);
        assert_eq!(visible_of("0,MIG-4c5e", 4), None);
    }

    /// A process of one device lets CUDA see that device alone, and ranks see the devices they use: by
    /// index, or by their entries of the list.
    #[test]
    fn devices_are_named_as_cuda_would_find_them() {
        let only = |list, gpus, d: usize| list_of(list, gpus, d..d + 1);
        assert_eq!(only(None, 4, 0).as_deref(), Some("0"));
        assert_eq!(only(None, 4, 3).as_deref(), Some("3"));
        assert_eq!(only(None, 4, 4), None);
        assert_eq!(only(Some("2,3"), 4, 0).as_deref(), Some("2"));
        assert_eq!(only(Some(" 2 , 3 "), 4, 1).as_deref(), Some("3"));
        assert_eq!(list_of(None, 4, 0..2).as_deref(), Some("0,1"));
        assert_eq!(list_of(Some("3,1,0"), 4, 0..2).as_deref(), Some("3,1"));
        // All that is visible already: nothing to change.
        assert_eq!(list_of(Some("3,1"), 4, 0..2), None);
        assert_eq!(list_of(None, 4, 0..4), None);
        assert_eq!(only(None, 1, 0), None);
        // Beyond the visible devices (the list ends at its first entry that is no device): no such device.
        assert_eq!(only(Some("2,3"), 4, 2), None);
        assert_eq!(only(Some("1,7,2"), 4, 1), None);
        assert_eq!(only(Some(""), 4, 0), None);
        assert_eq!(list_of(None, 4, 0..5), None);
        // UUIDs are left to the driver.
        assert_eq!(only(Some("GPU-8d3f0a51,GPU-77"), 4, 0), None);
    }
}
