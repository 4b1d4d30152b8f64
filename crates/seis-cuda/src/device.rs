//! A thin, explicit layer over the CUDA driver: one context, streams, events, device and pinned buffers,
//! and copies (kernel launches are in `launch.rs`).
//!
//! cudarc's safe types track every buffer use with events so that mistakes cannot race; the engine instead
//! orders its streams itself with events it records on purpose, so that no synchronisation happens that the
//! pipeline did not ask for. Event tracking is therefore switched off and buffers here are plain allocations.

use std::ffi::c_void;
use std::marker::PhantomData;
use std::sync::Arc;

use cudarc::driver::{result as cu, sys as cusys, CudaContext, CudaEvent, CudaStream};

use super::runtime::{driver_error, DeviceInfo};
use seis_core::error::{Error, Result};

/// Turn a driver error into our error, saying what we were doing.
pub fn check<T>(what: &str, r: std::result::Result<T, cu::DriverError>) -> Result<T> {
    r.map_err(|e| Error::Gpu(format!("{what}: {}", driver_error(e))))
}

/// One device and its context, which makes the streams, events and buffers.
pub struct Gpu {
    pub ctx: Arc<CudaContext>,
    pub info: DeviceInfo,
}

impl Gpu {
    pub fn open(info: DeviceInfo) -> Result<Self> {
        let ctx = match &info.context {
            Some(ctx) => ctx.clone(),
            None => check("creating a CUDA context", CudaContext::new(info.ordinal))?,
        };
        // SAFETY: every buffer of this backend is ordered by explicit events (see the module comment).
        unsafe { ctx.disable_event_tracking() };
        Ok(Gpu { ctx, info })
    }

    pub fn stream(&self) -> Result<Arc<CudaStream>> {
        check("creating a stream", self.ctx.new_stream())
    }

    /// An event that can time (`CU_EVENT_DEFAULT`).
    pub fn timing_event(&self) -> Result<CudaEvent> {
        check("creating an event", self.ctx.new_event(Some(cusys::CUevent_flags::CU_EVENT_DEFAULT)))
    }

    /// An event used only for ordering streams (cheaper than a timing event).
    pub fn sync_event(&self) -> Result<CudaEvent> {
        check("creating an event", self.ctx.new_event(None))
    }

    pub fn alloc<T: Copy>(&self, len: usize) -> Result<DeviceBuffer<T>> {
        DeviceBuffer::new(&self.ctx, len)
    }

    /// Page-locked host memory, zeroed, that the CPU reads and writes at full speed (not write-combined).
    pub fn alloc_pinned<T: Copy>(&self, len: usize) -> Result<PinnedBuffer<T>> {
        PinnedBuffer::new(&self.ctx, len)
    }

    /// (free, total) device memory in bytes.
    pub fn memory(&self) -> Result<(usize, usize)> {
        check("querying device memory", self.ctx.mem_get_info())
    }
}

/// Device memory from a plain `cuMemAlloc` (never managed memory), freed on drop.
pub struct DeviceBuffer<T> {
    ptr: cusys::CUdeviceptr,
    len: usize,
    ctx: Arc<CudaContext>,
    _t: PhantomData<T>,
}

impl<T: Copy> DeviceBuffer<T> {
    fn new(ctx: &Arc<CudaContext>, len: usize) -> Result<Self> {
        let bytes = len.max(1) * std::mem::size_of::<T>();
        check("binding the context", ctx.bind_to_thread())?;
        // SAFETY: a plain allocation; freed in Drop.
        let ptr = unsafe { cu::malloc_sync(bytes) }.map_err(|e| {
            Error::Gpu(format!("allocating {:.1} MiB of device memory: {}", bytes as f64 / 1048576.0, driver_error(e)))
        })?;
        Ok(DeviceBuffer { ptr, len, ctx: ctx.clone(), _t: PhantomData })
    }

    pub fn ptr(&self) -> u64 {
        self.ptr
    }

    /// Pointer to element `i`.
    pub fn ptr_at(&self, i: usize) -> u64 {
        debug_assert!(i <= self.len);
        self.ptr + (i * std::mem::size_of::<T>()) as u64
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn bytes(&self) -> usize {
        self.len * std::mem::size_of::<T>()
    }

    pub fn zero_async(&self, stream: &CudaStream) -> Result<()> {
        // SAFETY: the range is this allocation.
        check("clearing device memory", unsafe { cu::memset_d8_async(self.ptr, 0, self.bytes(), stream.cu_stream()) })
    }

    /// Copy `src` (pinned for asynchronous behaviour) into elements `offset..` of this buffer.
    pub fn upload_async(&self, offset: usize, src: &PinnedBuffer<T>, n: usize, stream: &CudaStream) -> Result<()>
    where
        T: Default,
    {
        assert!(offset + n <= self.len && n <= src.len());
        // SAFETY: both ranges lie in their allocations; the caller keeps `src` alive and untouched until an
        // event recorded after this copy has completed.
        check("copying host to device", unsafe {
            cu::memcpy_htod_async(self.ptr_at(offset), &src.as_slice_unsynced()[..n], stream.cu_stream())
        })
    }

    /// Copy elements `offset..offset+n` into a pinned buffer.
    pub fn download_async(&self, offset: usize, dst: &mut PinnedBuffer<T>, n: usize, stream: &CudaStream) -> Result<()>
    where
        T: Default,
    {
        assert!(offset + n <= self.len && n <= dst.len());
        // SAFETY: as for upload_async.
        check("copying device to host", unsafe {
            cu::memcpy_dtoh_async(&mut dst.as_mut_slice_unsynced()[..n], self.ptr_at(offset), stream.cu_stream())
        })
    }
}

impl<T: Copy> DeviceBuffer<T> {
    /// A buffer holding `values`, copied synchronously (for small tables: wavenumbers, frequencies, segments).
    pub fn from_slice(gpu: &Gpu, values: &[T]) -> Result<Self> {
        let b = gpu.alloc::<T>(values.len())?;
        if !values.is_empty() {
            // SAFETY: the destination holds `values.len()` elements.
            check("copying a table to the device", unsafe { cu::memcpy_htod_sync(b.ptr, values) })?;
        }
        Ok(b)
    }
}

impl<T> Drop for DeviceBuffer<T> {
    fn drop(&mut self) {
        let _ = self.ctx.bind_to_thread();
        // SAFETY: allocated by cuMemAlloc in `new`; nothing uses it after drop (the engine synchronises its
        // streams before its buffers go).
        unsafe {
            let _ = cu::free_sync(self.ptr);
        }
    }
}

/// Page-locked host memory. The CPU side is not synchronised: the owner orders its use with events.
///
/// The memory is an anonymous mapping, asked for in huge pages, whose pages the pool's threads fault in
/// side by side before the driver registers it (`cuMemHostRegister`); the pages then start zeroed, and
/// copies from and to them run as from `cuMemHostAlloc`'s. The reason is the time to pin gigabytes (a
/// spectrum waiting for its bands): on an H100 host (16 cores, transparent huge pages on request), 4 GB took
/// 1.4-2.4 s to allocate with `cuMemHostAlloc` and 0.4-0.6 s to free, against 0.18-0.19 s to map, touch
/// from 16 threads and register, and 0.07 s to unregister; registering it untouched took 0.7 s, and 0.5 s
/// touched from 8 threads in 4 KiB pages.
pub struct PinnedBuffer<T> {
    ptr: *mut T,
    len: usize,
    /// Owns the pages; unmapped after the driver has let them go.
    map: memmap2::MmapMut,
    ctx: Arc<CudaContext>,
}

// SAFETY: plain memory; access is ordered by the owner.
unsafe impl<T: Send> Send for PinnedBuffer<T> {}
unsafe impl<T: Sync> Sync for PinnedBuffer<T> {}

impl<T: Copy> PinnedBuffer<T> {
    pub(super) fn new(ctx: &Arc<CudaContext>, len: usize) -> Result<Self> {
        use rayon::prelude::*;
        let bytes = len.max(1) * std::mem::size_of::<T>();
        let failed = |what: &str, e: String| {
            Error::Gpu(format!("{what} {:.1} MiB of pinned host memory: {e}", bytes as f64 / 1048576.0))
        };
        let mut map = memmap2::MmapMut::map_anon(bytes).map_err(|e| failed("mapping", e.to_string()))?;
        // Only advice: without huge pages the touch below is slower, nothing else changes.
        #[cfg(target_os = "linux")]
        let _ = map.advise(memmap2::Advice::HugePage);
        const HUGE_PAGE: usize = 2 << 20;
        const PAGE: usize = 4096;
        map.par_chunks_mut(HUGE_PAGE).for_each(|piece| {
            for i in (0..piece.len()).step_by(PAGE) {
                // SAFETY: in bounds. Volatile, so that the store of a zero into a zero page stays.
                unsafe { std::ptr::write_volatile(piece.as_mut_ptr().add(i), 0) };
            }
        });
        check("binding the context", ctx.bind_to_thread())?;
        let ptr = map.as_mut_ptr();
        // SAFETY: `map` is a live mapping of `bytes`, kept until Drop has unregistered it.
        let registered = unsafe { cusys::cuMemHostRegister_v2(ptr.cast(), bytes, 0) };
        registered.result().map_err(|e| failed("registering", driver_error(e)))?;
        Ok(PinnedBuffer { ptr: ptr.cast(), len, map, ctx: ctx.clone() })
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The host view. The caller must have waited for every copy that uses this buffer.
    pub fn as_slice_unsynced(&self) -> &[T] {
        // SAFETY: valid allocation of `len` elements, zeroed at first, and `T` is plain numbers.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }

    pub fn as_mut_slice_unsynced(&mut self) -> &mut [T] {
        // SAFETY: valid allocation of `len` elements, uniquely borrowed.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }

    pub fn host_ptr(&self) -> *const c_void {
        self.ptr as *const c_void
    }

    pub fn host_ptr_mut(&mut self) -> *mut c_void {
        self.ptr as *mut c_void
    }
}

impl<T> Drop for PinnedBuffer<T> {
    fn drop(&mut self) {
        let _ = self.ctx.bind_to_thread();
        // SAFETY: registered in `new`; `map` is unmapped only after this, when the field drops.
        unsafe {
            let _ = cusys::cuMemHostUnregister(self.map.as_mut_ptr().cast());
        }
    }
}

/// Where a pitched copy reads from.
#[derive(Clone, Copy, Debug)]
pub enum Source {
    Host(*const c_void),
    Device(u64),
}

/// Where a pitched copy writes to.
#[derive(Clone, Copy, Debug)]
pub enum Target {
    Host(*mut c_void),
    Device(u64),
}

/// Copy `rows` rows of `row_bytes` with pitch `src_pitch` into memory with pitch `dst_pitch`: how traces of
/// `nt` samples land in rows padded to the FFT length, and how planes move between the padded grid on the
/// device and the unpadded spectrum waiting on the host, with no extra pass over the data.
///
/// # Safety
/// Both ranges must lie in live allocations, and host memory must stay untouched until the copy is done.
pub unsafe fn copy_2d(
    dst: Target,
    dst_pitch: usize,
    src: Source,
    src_pitch: usize,
    row_bytes: usize,
    rows: usize,
    stream: &CudaStream,
) -> Result<()> {
    use cusys::CUmemorytype::{CU_MEMORYTYPE_DEVICE, CU_MEMORYTYPE_HOST};
    let (src_type, src_host, src_device) = match src {
        Source::Host(p) => (CU_MEMORYTYPE_HOST, p, 0),
        Source::Device(p) => (CU_MEMORYTYPE_DEVICE, std::ptr::null(), p),
    };
    let (dst_type, dst_host, dst_device) = match dst {
        Target::Host(p) => (CU_MEMORYTYPE_HOST, p, 0),
        Target::Device(p) => (CU_MEMORYTYPE_DEVICE, std::ptr::null_mut(), p),
    };
    let p = cusys::CUDA_MEMCPY2D {
        srcXInBytes: 0,
        srcY: 0,
        srcMemoryType: src_type,
        srcHost: src_host,
        srcDevice: src_device,
        srcArray: std::ptr::null_mut(),
        srcPitch: src_pitch,
        dstXInBytes: 0,
        dstY: 0,
        dstMemoryType: dst_type,
        dstHost: dst_host,
        dstDevice: dst_device,
        dstArray: std::ptr::null_mut(),
        dstPitch: dst_pitch,
        WidthInBytes: row_bytes,
        Height: rows,
    };
    check("pitched copy", cusys::cuMemcpy2DAsync_v2(&p, stream.cu_stream()).result())
}

/// One side of a [`copy_3d`]: memory holding slabs of `height` rows of `pitch` bytes, the copy starting at
/// row `y` of each slab.
#[derive(Clone, Copy, Debug)]
pub struct Slabs<M> {
    pub at: M,
    pub pitch: usize,
    pub height: usize,
    pub y: usize,
}

/// Copy `depth` slabs of `rows` rows of `row_bytes` from `src` to `dst`: how the planes of a band move
/// between the unpadded `[ω][il][xl]` layout and the padded grid `[ω][il_pad][xl_pad]` in one call.
///
/// # Safety
/// Both boxes must lie in live allocations, and host memory must stay untouched until the copy is done.
pub unsafe fn copy_3d(
    dst: Slabs<Target>,
    src: Slabs<Source>,
    row_bytes: usize,
    rows: usize,
    depth: usize,
    stream: &CudaStream,
) -> Result<()> {
    use cusys::CUmemorytype::{CU_MEMORYTYPE_DEVICE, CU_MEMORYTYPE_HOST};
    let (src_type, src_host, src_device) = match src.at {
        Source::Host(p) => (CU_MEMORYTYPE_HOST, p, 0),
        Source::Device(p) => (CU_MEMORYTYPE_DEVICE, std::ptr::null(), p),
    };
    let (dst_type, dst_host, dst_device) = match dst.at {
        Target::Host(p) => (CU_MEMORYTYPE_HOST, p, 0),
        Target::Device(p) => (CU_MEMORYTYPE_DEVICE, std::ptr::null_mut(), p),
    };
    let p = cusys::CUDA_MEMCPY3D {
        srcXInBytes: 0,
        srcY: src.y,
        srcZ: 0,
        srcLOD: 0,
        srcMemoryType: src_type,
        srcHost: src_host,
        srcDevice: src_device,
        srcArray: std::ptr::null_mut(),
        reserved0: std::ptr::null_mut(),
        srcPitch: src.pitch,
        srcHeight: src.height,
        dstXInBytes: 0,
        dstY: dst.y,
        dstZ: 0,
        dstLOD: 0,
        dstMemoryType: dst_type,
        dstHost: dst_host,
        dstDevice: dst_device,
        dstArray: std::ptr::null_mut(),
        reserved1: std::ptr::null_mut(),
        dstPitch: dst.pitch,
        dstHeight: dst.height,
        WidthInBytes: row_bytes,
        Height: rows,
        Depth: depth,
    };
    check("pitched copy of planes", cusys::cuMemcpy3DAsync_v2(&p, stream.cu_stream()).result())
}

/// Copy a whole pageable host slice to the device and wait (the slow path the benchmark compares with).
pub fn upload_pageable<T: Copy>(dst: &DeviceBuffer<T>, src: &[T]) -> Result<()> {
    assert!(src.len() <= dst.len());
    // SAFETY: the destination holds at least `src.len()` elements.
    check("pageable copy host to device", unsafe { cu::memcpy_htod_sync(dst.ptr(), src) })
}

/// Copy a device buffer into pageable host memory and wait.
pub fn download_pageable<T: Copy>(dst: &mut [T], src: &DeviceBuffer<T>) -> Result<()> {
    assert!(dst.len() <= src.len());
    // SAFETY: the source holds at least `dst.len()` elements.
    check("pageable copy device to host", unsafe { cu::memcpy_dtoh_sync(dst, src.ptr()) })
}

/// Copy `bytes` between two device buffers on `stream`.
///
/// # Safety
/// Both ranges must lie in live allocations.
pub unsafe fn copy_d2d(dst: u64, src: u64, bytes: usize, stream: &CudaStream) -> Result<()> {
    check("device-to-device copy", cu::memcpy_dtod_async(dst, src, bytes, stream.cu_stream()))
}

/// Milliseconds between two recorded timing events (waits for the second).
pub fn elapsed_ms(start: &CudaEvent, end: &CudaEvent) -> Result<f64> {
    check("waiting for an event", end.synchronize())?;
    check("reading an event timer", start.elapsed_ms(end)).map(|ms| ms as f64)
}
