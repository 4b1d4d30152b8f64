//! NCCL, the communication between the ranks of a run over several GPUs: loaded at run time like the rest of
//! CUDA, and never allowed to panic or to hang.
//!
//! The declarations (the unique id, the communicator handle, the configuration record, the data types)
//! are cudarc's (`nccl` feature, NCCL 2.28). Its loader is not used: it panics when the library is
//! missing, and it does not look for `libnccl.so.2`, the only name NVIDIA's `nvidia-nccl-cu13` wheel ships.
//! [`Nccl::load`] looks for `libnccl.so.2` and `libnccl.so` itself and turns a missing library or symbol
//! into an error; the functions are called through its own table, declared to return the plain integer
//! NCCL returns (a newer NCCL may return codes the bindings' enum does not know).
//!
//! The communicator is made non-blocking: every call returns at once and the host polls for its end, so a
//! rank that never arrives, fails, or is signalled ends a wait (see [`Watch`]) instead of hanging it, and
//! the communicator is aborted. Joining the other ranks is non-blocking too: NCCL sets the communicator
//! up on a thread of its own (its topology, connections and kernels take a large part of a second), and
//! the rank reads and transforms its slab meanwhile; the first call that needs the communicator waits
//! for it ([`Comm::join`]). Most of NCCL's set-up is loading its kernels, one at a time as it asks CUDA
//! about each; loading every module whole instead (`CUDA_MODULE_LOADING=EAGER`) took that out of NCCL's
//! set-up but put as much into opening the rank's GPU, which nothing overlaps: on four H100s, alternated
//! four times, the runs were no faster.
//!
//! The communicator uses at most [`CHANNELS`] channels (NCCL's CTAs). NCCL connects each channel to each
//! peer on its first transfer, with device buffers of its own whose handles pass between the processes.
//! On four H100s joined by NVLink its default there is 32 channels per peer, and the ingest exchange of a
//! 16 GB volume over 4 ranks then took 1.35-1.47 s, against 0.50-0.54 s with 4 channels; the sum of the
//! products took the same with either. How many channels are best depends on how NCCL reaches the other
//! GPUs (see `nccl_through_cuda_ipc` of the command line): rank 0's part of that exchange took, in device
//! time,
//! - through NCCL's cuMem mappings: 0.26 s with 4 channels, 0.37 s with 8, 0.61-0.64 s with 16 (also with
//!   the 16 connected while NCCL joined the ranks, `NCCL_RUNTIME_CONNECT=0`);
//! - through CUDA IPC handles: 0.107-0.116 s with 4 channels, 0.086-0.090 s with 8, 0.097-0.099 s with 16.
//!
//! `NCCL_MAX_CTAS` set in the environment overrides it.

use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use cudarc::driver::{CudaEvent, CudaStream};
use cudarc::nccl::sys::{cudaStream_t, ncclComm_t, ncclConfig_t, ncclDataType_t, ncclUniqueId};

use super::device::{check, DeviceBuffer, Gpu};
use seis_core::cancel::CancelToken;
use seis_core::error::{Error, Result};

/// The names NCCL's library goes by: the versioned one every installation has, and the development link.
pub const LIBRARY_NAMES: [&str; 2] = ["libnccl.so.2", "libnccl.so"];
/// The oldest NCCL with every call used here (non-blocking communicators that can be aborted).
const OLDEST: (i32, i32) = (2, 18);

const SUCCESS: c_int = 0;
const IN_PROGRESS: c_int = 7;
const CONFIG_MAGIC: u32 = 0xcafe_beef;
const CONFIG_UNDEF_INT: c_int = c_int::MIN;
/// The most channels the communicator uses (see the module comment).
pub const CHANNELS: c_int = 8;

type Code = c_int;

/// The NCCL functions seisimage calls.
struct Api {
    get_version: unsafe extern "C" fn(*mut c_int) -> Code,
    get_unique_id: unsafe extern "C" fn(*mut ncclUniqueId) -> Code,
    init_rank_config: unsafe extern "C" fn(*mut ncclComm_t, c_int, ncclUniqueId, c_int, *mut ncclConfig_t) -> Code,
    get_async_error: unsafe extern "C" fn(ncclComm_t, *mut Code) -> Code,
    abort: unsafe extern "C" fn(ncclComm_t) -> Code,
    finalize: unsafe extern "C" fn(ncclComm_t) -> Code,
    destroy: unsafe extern "C" fn(ncclComm_t) -> Code,
    group_start: unsafe extern "C" fn() -> Code,
    group_end: unsafe extern "C" fn() -> Code,
    send: unsafe extern "C" fn(*const c_void, usize, ncclDataType_t, c_int, ncclComm_t, cudaStream_t) -> Code,
    recv: unsafe extern "C" fn(*mut c_void, usize, ncclDataType_t, c_int, ncclComm_t, cudaStream_t) -> Code,
    error_string: unsafe extern "C" fn(Code) -> *const c_char,
    last_error: unsafe extern "C" fn(ncclComm_t) -> *const c_char,
    /// The library the functions live in, held for the life of the process.
    _library: libloading::Library,
}

/// NCCL, loaded.
pub struct Nccl {
    api: Api,
    /// Where it was found, and its version.
    pub library: String,
    pub version: (i32, i32, i32),
}

impl Nccl {
    /// The NCCL library of this process, loaded on first use; a clear error when it is missing or too old.
    pub fn load() -> Result<&'static Nccl> {
        static NCCL: OnceLock<std::result::Result<Nccl, String>> = OnceLock::new();
        NCCL.get_or_init(|| Nccl::open(&LIBRARY_NAMES)).as_ref().map_err(|e| Error::Backend(e.clone()))
    }

    fn open(names: &[&str]) -> std::result::Result<Nccl, String> {
        let mut tried = Vec::new();
        let (library, name) = names
            .iter()
            .find_map(|name| {
                // SAFETY: loading NCCL runs its initialisers, which only set up the library.
                match unsafe { libloading::Library::new(*name) } {
                    Ok(lib) => Some((lib, *name)),
                    Err(e) => {
                        tried.push(format!("{name}: {e}"));
                        None
                    }
                }
            })
            .ok_or_else(|| {
                format!(
                    "NCCL is needed to run over several GPUs and was not found ({}): install NCCL 2.18 or newer (the \
                     nvidia-nccl-cu13 wheel, or NVIDIA's packages) and add its folder to LD_LIBRARY_PATH; without \
                     it, split the job with --shard I/N and `seisimage reduce`",
                    tried.join("; ")
                )
            })?;
        macro_rules! symbol {
            ($name:literal) => {
                // SAFETY: the declared type is the function's C signature in nccl.h (results as int).
                *unsafe { library.get($name.as_bytes()) }.map_err(|e| {
                    format!("{name} has no {} ({e}): NCCL {}.{} or newer is needed", $name, OLDEST.0, OLDEST.1)
                })?
            };
        }
        let api = Api {
            get_version: symbol!("ncclGetVersion"),
            get_unique_id: symbol!("ncclGetUniqueId"),
            init_rank_config: symbol!("ncclCommInitRankConfig"),
            get_async_error: symbol!("ncclCommGetAsyncError"),
            abort: symbol!("ncclCommAbort"),
            finalize: symbol!("ncclCommFinalize"),
            destroy: symbol!("ncclCommDestroy"),
            group_start: symbol!("ncclGroupStart"),
            group_end: symbol!("ncclGroupEnd"),
            send: symbol!("ncclSend"),
            recv: symbol!("ncclRecv"),
            error_string: symbol!("ncclGetErrorString"),
            last_error: symbol!("ncclGetLastError"),
            _library: library,
        };
        let mut code = 0;
        // SAFETY: an out-parameter.
        if unsafe { (api.get_version)(&mut code) } != SUCCESS {
            return Err(format!("{name} does not say its version"));
        }
        let version = (code / 10000, (code % 10000) / 100, code % 100);
        if (version.0, version.1) < OLDEST {
            return Err(format!(
                "{name} is NCCL {}.{}.{}; NCCL {}.{} or newer is needed",
                version.0, version.1, version.2, OLDEST.0, OLDEST.1
            ));
        }
        let library = library_path(name).unwrap_or_else(|| name.to_string());
        Ok(Nccl { api, library, version })
    }

    /// A new unique id: rank 0's, which starts NCCL's rendezvous (or, with `NCCL_COMM_ID` set, the id of
    /// that address, the same in every rank).
    pub fn unique_id(&self) -> Result<[u8; 128]> {
        let mut id = ncclUniqueId { internal: [0; 128] };
        // SAFETY: an out-parameter.
        self.call("making the NCCL unique id", None, unsafe { (self.api.get_unique_id)(&mut id) })?;
        Ok(id.internal.map(|c| c as u8))
    }

    fn describe(&self, code: Code, comm: Option<ncclComm_t>) -> String {
        // SAFETY: NCCL returns static strings (or null).
        let text = |p: *const c_char| {
            if p.is_null() {
                String::new()
            } else {
                unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
            }
        };
        let mut s = format!("{} (code {code})", text(unsafe { (self.api.error_string)(code) }));
        let last = text(unsafe { (self.api.last_error)(comm.unwrap_or(std::ptr::null_mut())) });
        if !last.is_empty() {
            s = format!("{s}: {last}");
        }
        s
    }

    fn call(&self, what: &str, comm: Option<ncclComm_t>, code: Code) -> Result<()> {
        match code {
            SUCCESS | IN_PROGRESS => Ok(()),
            e => Err(Error::Backend(format!("NCCL, {what}: {}", self.describe(e, comm)))),
        }
    }
}

/// The full path of a loaded library, from the process's map of loaded objects.
fn library_path(name: &str) -> Option<String> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    maps.lines().filter_map(|l| l.split_whitespace().nth(5)).find(|p| p.ends_with(name)).map(str::to_string)
}

/// What ends a wait on the other ranks: this run's stop request, a note from a rank that failed, the
/// deadline of a set-up step.
#[derive(Clone)]
pub struct Watch {
    pub cancel: CancelToken,
    /// The other ranks, which tell of their failures.
    pub peers: std::sync::Arc<dyn super::peers::Peers>,
}

impl Watch {
    /// `Err` once this run was asked to stop or another rank failed.
    pub fn check(&self) -> Result<()> {
        self.cancel.check()?;
        self.peers.failure().map_or(Ok(()), Err)
    }
}

/// How often a wait looks at NCCL, the stop request and the other ranks.
const POLL: Duration = Duration::from_millis(1);
/// The first look again, doubled up to [`POLL`].
const FIRST_POLL: Duration = Duration::from_micros(40);
/// A wait looks for another rank's failure note at most this often (it is a file).
const WATCH_EVERY: Duration = Duration::from_millis(100);

/// One rank's NCCL communicator, non-blocking.
pub struct Comm {
    nccl: &'static Nccl,
    comm: ncclComm_t,
    rank: usize,
    world: usize,
    watch: Watch,
    aborted: std::cell::Cell<bool>,
    joining: std::cell::Cell<Joining>,
}

/// Where the communicator's set-up stands.
#[derive(Clone, Copy)]
enum Joining {
    /// Begun at `began`; the other ranks must all have arrived by `deadline`.
    Pending { began: Instant, deadline: Instant },
    /// Every rank had joined `after` it began (as first seen by this rank).
    Joined { after: Duration },
}

// SAFETY: the communicator is used from one thread at a time (the engine's); NCCL allows that.
unsafe impl Send for Comm {}

impl Comm {
    /// Begin joining the communicator of `world` ranks as `rank`, with rank 0's unique id `id`; the CUDA
    /// context of this rank's device must be current. Returns while NCCL sets it up; the set-up fails once
    /// `timeout` has passed without every rank joining.
    pub fn new(
        nccl: &'static Nccl,
        id: [u8; 128],
        rank: usize,
        world: usize,
        timeout: Duration,
        watch: Watch,
    ) -> Result<Comm> {
        let mut config = empty_config();
        config.blocking = 0;
        config.maxCTAs = CHANNELS;
        let mut comm: ncclComm_t = std::ptr::null_mut();
        let id = ncclUniqueId { internal: id.map(|b| b as c_char) };
        // SAFETY: out-parameter and a config record of the bindings' layout, magic and version.
        let code = unsafe { (nccl.api.init_rank_config)(&mut comm, world as c_int, id, rank as c_int, &mut config) };
        nccl.call("joining the ranks", None, code)?;
        if comm.is_null() {
            return Err(Error::Backend("NCCL made no communicator".into()));
        }
        let began = Instant::now();
        let joining = std::cell::Cell::new(Joining::Pending { began, deadline: began + timeout });
        Ok(Comm { nccl, comm, rank, world, watch, aborted: std::cell::Cell::new(false), joining })
    }

    /// Whether every rank has joined, without waiting; an error if the set-up failed or timed out.
    pub fn is_joined(&self) -> Result<bool> {
        match self.joining.get() {
            Joining::Joined { .. } => Ok(true),
            Joining::Pending { began, deadline } => {
                let what = "joining the ranks";
                if self.state(what).inspect_err(|_| self.abort())? {
                    self.joined(began);
                    return Ok(true);
                }
                if Instant::now() >= deadline {
                    // The wait reports the deadline, and the other ranks' failure if one is the cause.
                    self.join()?;
                }
                Ok(false)
            }
        }
    }

    /// Wait until every rank has joined (see [`Comm::new`]).
    pub fn join(&self) -> Result<()> {
        if let Joining::Pending { began, deadline } = self.joining.get() {
            self.until_ready("joining the ranks", Some(deadline))?;
            self.joined(began);
        }
        Ok(())
    }

    fn joined(&self, began: Instant) {
        let after = began.elapsed();
        self.joining.set(Joining::Joined { after });
        tracing::debug!("rank {} of {} joined the others in {:.3} s", self.rank, self.world, after.as_secs_f64());
    }

    /// How long the set-up took from [`Comm::new`] until this rank saw every rank joined, once it has.
    pub fn joined_after(&self) -> Option<Duration> {
        match self.joining.get() {
            Joining::Joined { after } => Some(after),
            Joining::Pending { .. } => None,
        }
    }

    pub fn rank(&self) -> usize {
        self.rank
    }

    pub fn world(&self) -> usize {
        self.world
    }

    /// The communicator's state: `Ok(true)` ready, `Ok(false)` still working.
    fn state(&self, what: &str) -> Result<bool> {
        let mut state = SUCCESS;
        // SAFETY: a live communicator and an out-parameter.
        let code = unsafe { (self.nccl.api.get_async_error)(self.comm, &mut state) };
        self.nccl.call(what, Some(self.comm), code)?;
        match state {
            SUCCESS => Ok(true),
            IN_PROGRESS => Ok(false),
            e => Err(Error::Backend(format!("NCCL, {what}: {}", self.nccl.describe(e, Some(self.comm))))),
        }
    }

    /// Wait until the calls made so far are done (enqueued, for those on a stream), polling; on an error, a
    /// stop, another rank's failure or the deadline, abort the communicator.
    fn until_ready(&self, what: &str, deadline: Option<Instant>) -> Result<()> {
        self.poll(what, deadline, || self.state(what))
    }

    /// Wait for `done` to say true, looking at NCCL's state, the stop request and the other ranks meanwhile.
    fn poll(&self, what: &str, deadline: Option<Instant>, mut done: impl FnMut() -> Result<bool>) -> Result<()> {
        let mut watched = Instant::now();
        let mut polls = 0u32;
        loop {
            let result = done().and_then(|ok| {
                if !ok {
                    // NCCL's own view of the other ranks: a peer that died shows as an error here.
                    self.state(what)?;
                }
                Ok(ok)
            });
            let result = match result {
                Ok(true) => return Ok(()),
                Ok(false) if watched.elapsed() >= WATCH_EVERY => {
                    watched = Instant::now();
                    self.watch.check().map(|()| false)
                }
                other => other,
            };
            let result = match (result, deadline) {
                (Ok(false), Some(d)) if Instant::now() >= d => Err(Error::Backend(format!(
                    "NCCL, {what}: the other ranks did not all arrive in time (compute.rank_timeout_s); is every rank \
                     started, with the same job?"
                ))),
                (r, _) => r,
            };
            if let Err(e) = result {
                self.abort();
                // A rank that failed leaves its note before its connections close: its own error says more
                // than NCCL's view of the closed connection.
                return Err(match e {
                    Error::Backend(_) => self.watch.check().err().unwrap_or(e),
                    e => e,
                });
            }
            // Short waits are the common case (a transfer queued a moment ago): look again soon, then less often.
            std::thread::sleep(POLL.min(FIRST_POLL * (1 << polls.min(5))));
            polls += 1;
        }
    }

    /// Abort the communicator (once): every call of this rank on it ends.
    pub fn abort(&self) {
        if !self.aborted.replace(true) {
            // SAFETY: a live communicator, not used after this.
            let _ = unsafe { (self.nccl.api.abort)(self.comm) };
        }
    }

    /// Wait on the host for the work queued on `stream`, watching the communicator and the other ranks.
    fn wait_stream(&self, gpu: &Gpu, stream: &CudaStream, what: &str) -> Result<()> {
        let done = gpu.sync_event()?;
        check("recording an event", done.record(stream))?;
        self.poll(what, None, || Ok(done.is_complete()))
    }

    /// Wait on the host for `event`, watching the communicator and the other ranks: the wait of a host that
    /// queued transfers without waiting for them ([`Comm::enqueue_exchange`]).
    pub fn wait_event(&self, event: &CudaEvent, what: &str) -> Result<()> {
        self.poll(what, None, || Ok(event.is_complete()))
    }

    /// One grouped round of point-to-point transfers on `stream`: `sends` (peer, device address, bytes) and
    /// `recvs` (peer, device address, bytes); a transfer to this rank itself is a device copy. Returns once
    /// every transfer is done.
    pub fn exchange(
        &self,
        gpu: &Gpu,
        sends: &[(usize, u64, usize)],
        recvs: &[(usize, u64, usize)],
        stream: &CudaStream,
    ) -> Result<()> {
        self.enqueue_exchange(sends, recvs, stream)?;
        self.wait_stream(gpu, stream, "exchanging data between the ranks")
    }

    /// [`Comm::exchange`], returning once the transfers are queued on `stream`: the host goes on (reading the
    /// next chunk) while they run, and what follows on `stream` runs after them. Buffers they use must not
    /// be touched by the host until an event recorded after them is waited for with [`Comm::wait_event`].
    pub fn enqueue_exchange(
        &self,
        sends: &[(usize, u64, usize)],
        recvs: &[(usize, u64, usize)],
        stream: &CudaStream,
    ) -> Result<()> {
        self.join()?;
        let what = "exchanging data between the ranks";
        let s = stream.cu_stream() as cudaStream_t;
        let api = &self.nccl.api;
        // SAFETY: the group brackets only send and recv calls on live device buffers of the sizes given,
        // which stay untouched until the stream has done them (waited for below).
        unsafe {
            self.nccl.call(what, Some(self.comm), (api.group_start)())?;
            for &(peer, ptr, bytes) in sends.iter().filter(|t| t.0 != self.rank) {
                let code =
                    (api.send)(ptr as *const c_void, bytes, ncclDataType_t::ncclUint8, peer as c_int, self.comm, s);
                self.nccl.call(what, Some(self.comm), code)?;
            }
            for &(peer, ptr, bytes) in recvs.iter().filter(|t| t.0 != self.rank) {
                let code =
                    (api.recv)(ptr as *mut c_void, bytes, ncclDataType_t::ncclUint8, peer as c_int, self.comm, s);
                self.nccl.call(what, Some(self.comm), code)?;
            }
            self.nccl.call(what, Some(self.comm), (api.group_end)())?;
        }
        self.until_ready(what, None)?;
        let to_me = |t: &&(usize, u64, usize)| t.0 == self.rank;
        if let (Some(&(_, from, bytes)), Some(&(_, to, room))) = (sends.iter().find(to_me), recvs.iter().find(to_me)) {
            // SAFETY: both are live device buffers of at least `bytes`.
            unsafe { super::device::copy_d2d(to, from, bytes.min(room), stream)? };
        }
        Ok(())
    }

    /// Every rank's `bytes` on rank 0, in rank order (`None` on the others): records of a few kilobytes.
    pub fn gather_bytes(&self, gpu: &Gpu, bytes: &[u8], stream: &CudaStream) -> Result<Option<Vec<Vec<u8>>>> {
        // Lengths first, as 8-byte words, then the records.
        let len = DeviceBuffer::<u64>::from_slice(gpu, &[bytes.len() as u64])?;
        let lens: DeviceBuffer<u64> = gpu.alloc(self.world)?;
        let root = self.rank == 0;
        let (sends, recvs): (Vec<_>, Vec<_>) = if root {
            (Vec::new(), (1..self.world).map(|p| (p, lens.ptr_at(p), 8)).collect())
        } else {
            (vec![(0, len.ptr(), 8)], Vec::new())
        };
        self.exchange(gpu, &sends, &recvs, stream)?;
        let data = DeviceBuffer::<u8>::from_slice(gpu, bytes)?;
        if !root {
            self.exchange(gpu, &[(0, data.ptr(), bytes.len())], &[], stream)?;
            return Ok(None);
        }
        let mut sizes = vec![0u64; self.world];
        // SAFETY: `lens` holds world words; the stream is idle.
        check("copying to the host", unsafe { cudarc::driver::result::memcpy_dtoh_sync(&mut sizes, lens.ptr()) })?;
        sizes[0] = bytes.len() as u64;
        const MAX_RECORD: u64 = 16 << 20;
        if let Some(s) = sizes.iter().find(|&&s| s > MAX_RECORD) {
            return Err(Error::Backend(format!("a rank sent a record of {s} bytes, more than a rank's record can be")));
        }
        let inbox: Vec<DeviceBuffer<u8>> = sizes.iter().map(|&s| gpu.alloc::<u8>(s as usize)).collect::<Result<_>>()?;
        let recvs: Vec<_> = (1..self.world).map(|p| (p, inbox[p].ptr(), sizes[p] as usize)).collect();
        self.exchange(gpu, &[], &recvs, stream)?;
        let mut out = vec![bytes.to_vec()];
        for p in 1..self.world {
            let mut v = vec![0u8; sizes[p] as usize];
            if !v.is_empty() {
                // SAFETY: the inbox of rank p holds sizes[p] bytes; the stream is idle.
                check("copying to the host", unsafe {
                    cudarc::driver::result::memcpy_dtoh_sync(&mut v, inbox[p].ptr())
                })?;
            }
            out.push(v);
        }
        Ok(Some(out))
    }
}

impl Drop for Comm {
    fn drop(&mut self) {
        if self.aborted.get() {
            return;
        }
        if matches!(self.joining.get(), Joining::Pending { .. }) {
            // Never used: nothing to finalise, and its set-up may still be waiting for the others.
            self.abort();
            return;
        }
        // A clean end: finalise (non-blocking: poll, for a few seconds at most), then destroy; anything else
        // aborts.
        let api = &self.nccl.api;
        // SAFETY: a live communicator, used by nothing else any more.
        let finalized = unsafe { (api.finalize)(self.comm) };
        let deadline = Instant::now() + Duration::from_secs(10);
        let ok = matches!(finalized, SUCCESS | IN_PROGRESS)
            && loop {
                match self.state("finalising") {
                    Ok(true) => break true,
                    Ok(false) if Instant::now() < deadline => std::thread::sleep(POLL),
                    _ => break false,
                }
            };
        if ok {
            // SAFETY: finalised; not used after this.
            let _ = unsafe { (api.destroy)(self.comm) };
        } else {
            self.abort();
        }
    }
}

/// A configuration record as `NCCL_CONFIG_INITIALIZER` makes it: every field undefined (NCCL's defaults).
fn empty_config() -> ncclConfig_t {
    ncclConfig_t {
        size: std::mem::size_of::<ncclConfig_t>(),
        magic: CONFIG_MAGIC,
        version: 22800,
        blocking: CONFIG_UNDEF_INT,
        cgaClusterSize: CONFIG_UNDEF_INT,
        minCTAs: CONFIG_UNDEF_INT,
        maxCTAs: CONFIG_UNDEF_INT,
        netName: std::ptr::null(),
        splitShare: CONFIG_UNDEF_INT,
        trafficClass: CONFIG_UNDEF_INT,
        commName: std::ptr::null(),
        collnetEnable: CONFIG_UNDEF_INT,
        CTAPolicy: CONFIG_UNDEF_INT,
        shrinkShare: CONFIG_UNDEF_INT,
        nvlsCTAs: CONFIG_UNDEF_INT,
        nChannelsPerNetPeer: CONFIG_UNDEF_INT,
        nvlinkCentricSched: CONFIG_UNDEF_INT,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Without NCCL the loader says what is missing and what to do, and never panics; a library that is not
    /// NCCL is refused by its missing symbols.
    #[test]
    fn a_missing_or_foreign_library_is_an_error_not_a_panic() {
        let e = Nccl::open(&["libseisimage-no-such-nccl.so.2"]).err().unwrap();
        assert!(e.contains("NCCL is needed") && e.contains("--shard"), "{e}");
        let e = Nccl::open(&["libm.so.6"]).err().unwrap();
        assert!(e.contains("has no ncclGetVersion") && e.contains("2.18"), "{e}");
    }

    #[test]
    fn the_configuration_is_the_bindings_layout_with_every_field_undefined() {
        let c = empty_config();
        assert_eq!(c.size, std::mem::size_of::<ncclConfig_t>());
        assert_eq!((c.magic, c.version), (0xcafebeef, 22800));
        assert_eq!(c.blocking, i32::MIN);
    }
}
