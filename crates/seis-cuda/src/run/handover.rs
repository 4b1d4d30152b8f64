//! The hand-over of finished products (see [`seis_imaging::delivery`]): once the gather that fills a
//! box's last level is queued, the box is copied to its pinned buffer on the copy-out stream while the
//! device goes on with the deeper levels, and the host hands it to the sink when the copy is done. The
//! members of a velocity scan are handed over one after the other, each to its own sink.

use std::cell::{Cell, RefCell};
use std::time::Duration;

use cudarc::driver::CudaEvent;
use rayon::prelude::*;

use super::buffers::RunBuffers;
use crate::attributes::DeviceAttributes;
use crate::device::{check, Gpu};
use crate::launch::Launcher;
use crate::timer::DeviceTimer;
use seis_core::error::{Error, Result};
use seis_core::stats::RunStats;
use seis_imaging::{Completion, ImageRequest, ProductSink};

/// Where the finished products go, and how far they are on their way there.
pub(super) struct Handover<'a> {
    /// One per member of the run, in order.
    pub(super) sinks: Vec<&'a dyn ProductSink>,
    request: &'a ImageRequest,
    /// The member being migrated, whose products the gathers fill and the copies take.
    member: Cell<usize>,
    /// Counts the levels gathered into each box of the member during the last band (earlier bands only add
    /// to them).
    pub(super) completion: RefCell<Completion>,
    pub(super) last_band: Cell<bool>,
    /// Copies queued and not yet handed over.
    copies: RefCell<Vec<ProductCopy>>,
    /// The products' host memory, being made ready on a thread of its own (see `writable_buffers`), for the
    /// member being handed over.
    host: RefCell<HostMemory>,
    /// The device time of the copies (stage "d2h").
    timer: DeviceTimer<'a>,
    /// Bytes of the copies handed over.
    bytes: Cell<u64>,
    /// The attributes some boxes hand over instead of their values.
    attributes: DeviceAttributes,
}

/// A product's copy to its pinned buffer, queued on the copy-out stream.
struct ProductCopy {
    index: usize,
    /// Values copied.
    len: usize,
    /// Recorded after the copy.
    copied: CudaEvent,
}

enum HostMemory {
    NotYet,
    Making(std::thread::JoinHandle<Vec<Vec<f32>>>),
    Ready(Vec<Vec<f32>>),
}

impl<'a> Handover<'a> {
    pub(super) fn new(gpu: &'a Gpu, sinks: Vec<&'a dyn ProductSink>, request: &'a ImageRequest) -> Self {
        Handover {
            sinks,
            request,
            member: Cell::new(0),
            completion: RefCell::new(Completion::new(request)),
            last_band: Cell::new(false),
            copies: Default::default(),
            host: RefCell::new(HostMemory::NotYet),
            timer: DeviceTimer::new(gpu),
            bytes: Cell::new(0),
            attributes: DeviceAttributes::new(request),
        }
    }

    /// Start making the products' host memory ready on a thread of its own (see `writable_buffers`), unless
    /// that has begun: the device migrates meanwhile.
    pub(super) fn make_host_memory(&self, buffers: &RunBuffers) {
        let mut host = self.host.borrow_mut();
        if matches!(*host, HostMemory::NotYet) {
            let lens: Vec<usize> = buffers.member_products(0).iter().map(|p| p.len()).collect();
            *host = HostMemory::Making(std::thread::spawn(move || writable_buffers(&lens)));
        }
    }

    /// Member `member` migrates next; in the `last` band its boxes are finished and handed over (the
    /// previous member's all are, see [`Handover::hand_over_the_rest`]).
    pub(super) fn begin_member(&self, member: usize, last: bool, buffers: &RunBuffers) {
        if last && member != self.member.get() {
            *self.completion.borrow_mut() = Completion::new(self.request);
            // The previous member took the host memory made ready: make it again for this one.
            let mut host = self.host.borrow_mut();
            if matches!(*host, HostMemory::Ready(_)) {
                *host = HostMemory::NotYet;
            }
            drop(host);
            self.make_host_memory(buffers);
        }
        self.member.set(member);
        self.last_band.set(last);
    }

    /// The member being migrated.
    pub(super) fn member(&self) -> usize {
        self.member.get()
    }
}

impl Handover<'_> {
    /// Queue the copy of product `i`, finished by the work queued so far on the compute stream, to its pinned
    /// buffer.
    pub(super) fn start_copy(&self, dev: &Launcher, buffers: &RunBuffers, i: usize) -> Result<()> {
        let product = &buffers.member_products(self.member.get())[i];
        // A box with an attribute: the attribute, computed on the device over the start of the box's buffer.
        let len = self.attributes.apply(dev, i, product)?;
        let ready = dev.gpu.sync_event()?;
        dev.record(&ready, &dev.compute)?;
        dev.wait(&dev.copy_out, &ready)?;
        self.timer.time("d2h", &dev.copy_out, || {
            product.download_async(0, &mut buffers.products_host.borrow_mut()[i], len, &dev.copy_out)
        })?;
        let copied = dev.gpu.sync_event()?;
        dev.record(&copied, &dev.copy_out)?;
        self.copies.borrow_mut().push(ProductCopy { index: i, len, copied });
        Ok(())
    }

    /// Hand the products whose copies are done to the sink; with `wait`, wait for every copy queued.
    pub(super) fn hand_over_copied(&self, buffers: &RunBuffers, wait: bool) -> Result<()> {
        loop {
            let next = {
                let mut copies = self.copies.borrow_mut();
                match copies.iter().position(|c| wait || c.copied.is_complete()) {
                    Some(k) => copies.remove(k),
                    None => return Ok(()),
                }
            };
            check("waiting for a product's copy", next.copied.synchronize())?;
            let len = next.len;
            self.bytes.set(self.bytes.get() + (len * 4) as u64);
            let mut host = self.host_buffer(next.index, len)?;
            // The product leaves the pinned buffer in parallel pieces.
            const PIECE: usize = 1 << 18;
            let pinned = buffers.products_host.borrow();
            let from = &pinned[next.index].as_slice_unsynced()[..host.len()];
            host.par_chunks_mut(PIECE).zip(from.par_chunks(PIECE)).for_each(|(t, f)| t.copy_from_slice(f));
            drop(pinned);
            self.sinks[self.member.get()].complete(next.index, host);
        }
    }

    /// Product `i`'s host buffer of `len` values, from the ones made ready while the device migrated.
    fn host_buffer(&self, i: usize, len: usize) -> Result<Vec<f32>> {
        let mut host = self.host.borrow_mut();
        if let HostMemory::Making(_) = &*host {
            let HostMemory::Making(thread) = std::mem::replace(&mut *host, HostMemory::NotYet) else { unreachable!() };
            let buffers = thread.join().map_err(|_| Error::Gpu("a thread preparing host memory panicked".into()))?;
            *host = HostMemory::Ready(buffers);
        }
        Ok(match &mut *host {
            HostMemory::Ready(buffers) if buffers[i].len() == len => std::mem::take(&mut buffers[i]),
            _ => vec![0.0; len],
        })
    }

    /// After the migration: wait for the copies still under way and hand their products over. Only the
    /// requested boxes cross the bus. Every box was finished by a gather, as in the CPU engine's assembly.
    pub(super) fn hand_over_the_rest(&self, buffers: &RunBuffers, stats: &mut RunStats) -> Result<()> {
        self.completion.borrow().check_all_finished()?;
        self.hand_over_copied(buffers, true)?;
        self.collect(stats)
    }

    /// Hand over every member's products as they are on the device now, member after member: those of a
    /// run that kept them there ([`super::Finish::Keep`]) and has since summed them with the other ranks'.
    pub(super) fn hand_over_kept(&self, dev: &Launcher, buffers: &RunBuffers, stats: &mut RunStats) -> Result<()> {
        for member in 0..self.sinks.len() {
            self.begin_member(member, true, buffers);
            for i in 0..buffers.member_products(member).len() {
                self.start_copy(dev, buffers, i)?;
            }
            self.hand_over_copied(buffers, true)?;
        }
        self.collect(stats)
    }

    /// The copies' device time and bytes, into `stats`.
    fn collect(&self, stats: &mut RunStats) -> Result<()> {
        self.timer.collect(stats)?;
        let bytes = self.bytes.take();
        // The timer knows times, not bytes: the copies' bytes join their stage here.
        stats.add("d2h", Duration::ZERO, bytes);
        stats.device_to_host_bytes += bytes;
        Ok(())
    }
}

/// Zeroed buffers of `lens` values whose memory has been written once, so that copying into them runs at the
/// speed of memory: the first write to a fresh page costs the kernel a page fault (about 1-2 µs per 4 KiB
/// page on a virtual machine: 5.6 ms for 12 MB of products in one measurement), which is better paid while
/// the device migrates than after it.
fn writable_buffers(lens: &[usize]) -> Vec<Vec<f32>> {
    lens.iter()
        .map(|&n| {
            let mut v: Vec<f32> = Vec::with_capacity(n);
            // A plain zero fill of new memory may be turned into a request for zeroed pages, which the kernel
            // maps lazily: touch every page with a volatile write first.
            for x in v.spare_capacity_mut().iter_mut().step_by(1024) {
                // SAFETY: a valid, aligned slot of the vector's capacity.
                unsafe { std::ptr::write_volatile(x.as_mut_ptr(), 0.0) };
            }
            v.resize(n, 0.0);
            v
        })
        .collect()
}
