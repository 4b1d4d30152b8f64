//! The hardware floors the benchmark compares stages with, measured on the device in use: pinned and
//! pageable host-to-device bandwidth, pinned device-to-host bandwidth, and device-to-device copy bandwidth;
//! and the pinned upload with the host's decode running beside it, as it does during the ingest.

use std::time::Instant;

use super::device::{self, elapsed_ms, Gpu, PinnedBuffer};
use super::runtime::DeviceInfo;
use seis_core::error::Result;

/// Rates in bytes per second.
#[derive(Clone, Copy, Debug)]
pub struct Floors {
    pub h2d_pinned: f64,
    pub h2d_pageable: f64,
    pub d2h_pinned: f64,
    /// Bytes read plus bytes written per second.
    pub d2d: f64,
}

/// Pinned buffers used for the measurement (the total moved is `bytes`, in pieces of this size).
const PIECE: usize = 256 << 20;

/// Move `bytes` each way (the input's size, so the floors are for the same byte count the job moves).
pub fn measure(info: DeviceInfo, bytes: usize) -> Result<Floors> {
    let gpu = Gpu::open(info)?;
    let stream = gpu.stream()?;
    let piece = bytes.clamp(4 << 20, PIECE) / 4;
    let pieces = bytes.div_ceil(piece * 4).max(1);
    let dev = gpu.alloc::<f32>(piece)?;
    let mut pinned = gpu.alloc_pinned::<f32>(piece)?;
    pinned.as_mut_slice_unsynced().iter_mut().enumerate().for_each(|(i, x)| *x = i as f32);
    let moved = (pieces * piece * 4) as f64;

    let timed = |f: &mut dyn FnMut() -> Result<()>| -> Result<f64> {
        f()?; // warm-up
        let (a, b) = (gpu.timing_event()?, gpu.timing_event()?);
        device::check("recording", a.record(&stream))?;
        for _ in 0..pieces {
            f()?;
        }
        device::check("recording", b.record(&stream))?;
        Ok(elapsed_ms(&a, &b)? / 1000.0)
    };
    let h2d = timed(&mut || dev.upload_async(0, &pinned, piece, &stream))?;
    let d2h = timed(&mut || dev.download_async(0, &mut pinned, piece, &stream))?;

    // Pageable: an ordinary Vec, synchronous copies (what cudaMemcpy from a Python array does).
    let pageable = vec![1.0f32; piece];
    device::upload_pageable(&dev, &pageable)?;
    let t = Instant::now();
    for _ in 0..pieces {
        device::upload_pageable(&dev, &pageable)?;
    }
    let h2d_pageable = t.elapsed().as_secs_f64();

    // Device copy of a large buffer (bytes read + bytes written).
    let n = (bytes / 4).max(piece);
    let (src, dst) = (gpu.alloc::<f32>(n)?, gpu.alloc::<f32>(n)?);
    src.zero_async(&stream)?;
    // SAFETY: both buffers hold n floats.
    let d2d = timed(&mut || unsafe { device::copy_d2d(dst.ptr(), src.ptr(), n * 4, &stream) })? / pieces as f64;
    device::check("waiting for the device", stream.synchronize())?;
    Ok(Floors {
        h2d_pinned: moved / h2d,
        h2d_pageable: moved / h2d_pageable,
        d2h_pinned: moved / d2h,
        d2d: 2.0 * (n * 4) as f64 / d2d,
    })
}

/// A pinned upload measured while the host works beside it.
#[derive(Clone, Copy, Debug)]
pub struct Beside {
    /// Bytes per second of the upload.
    pub h2d_pinned: f64,
    /// How long the host's work took with the upload running.
    pub host_seconds: f64,
}

/// Queue pinned uploads of `bytes` (in pieces of the staging ring's size, read from a ring of `ring` pinned
/// buffers) and, while the bus carries them, run `host` on the CPU with another ring of `ring` pinned
/// buffers of `values` floats to fill. The two share the host's memory: the DMA reads it while the host
/// reads the file and writes the buffers. This is the ingest without its dependencies (no chunk waits for
/// another), so its times are what the machine allows the ingest's two halves when they run together.
pub fn upload_beside(
    info: DeviceInfo,
    bytes: usize,
    ring: usize,
    values: usize,
    host: &mut dyn FnMut(&mut [PinnedBuffer<f32>]),
) -> Result<Beside> {
    let gpu = Gpu::open(info)?;
    let stream = gpu.stream()?;
    let pinned_ring = || (0..ring.max(1)).map(|_| gpu.alloc_pinned::<f32>(values)).collect::<Result<Vec<_>>>();
    let mut buffers = pinned_ring()?;
    // The uploads read a ring of their own, written with streaming stores as the ingest writes its staging,
    // so that the DMA finds the bytes in memory, not in the CPU caches, as it does there. One source buffer
    // written with ordinary stores stays partly cached and let the upload reach 0.90-0.95 × pinned beside
    // the decode; read from a ring in memory it reached 0.81-0.83 × on an H200 host, as the ingest's own
    // copies do.
    let mut sources = pinned_ring()?;
    let ones = vec![1.0f32; values.min(1 << 16)];
    for source in &mut sources {
        for part in source.as_mut_slice_unsynced().chunks_mut(ones.len()) {
            seis_core::simd::stream_copy(&ones[..part.len()], part);
        }
    }
    seis_core::simd::stream_fence();
    let dev = gpu.alloc::<f32>(values)?;
    let pieces = bytes.div_ceil(values * 4).max(1);
    dev.upload_async(0, &sources[0], values, &stream)?; // warm-up
    device::check("waiting for the device", stream.synchronize())?;
    let (a, b) = (gpu.timing_event()?, gpu.timing_event()?);
    device::check("recording", a.record(&stream))?;
    for k in 0..pieces {
        dev.upload_async(0, &sources[k % sources.len()], values, &stream)?;
    }
    device::check("recording", b.record(&stream))?;
    let t = Instant::now();
    host(&mut buffers);
    let host_seconds = t.elapsed().as_secs_f64();
    device::check("waiting for the device", stream.synchronize())?;
    Ok(Beside { h2d_pinned: (pieces * values * 4) as f64 / (elapsed_ms(&a, &b)? / 1000.0), host_seconds })
}
