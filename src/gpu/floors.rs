//! The hardware floors the benchmark compares stages with, measured on the device in use: pinned and
//! pageable host-to-device bandwidth, pinned device-to-host bandwidth, and device-to-device copy bandwidth.

use std::time::Instant;

use super::device::{self, elapsed_ms, Gpu};
use super::runtime::DeviceInfo;
use crate::error::Result;

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
