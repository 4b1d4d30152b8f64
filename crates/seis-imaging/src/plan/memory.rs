//! What following a plan costs in host memory: checked against the machine before a run starts, and
//! reported by `validate`. A GPU engine plans its device memory from these parts (seis-cuda `memory.rs`).

use super::Plan;

impl Plan {
    /// Bytes of the padded spectrum of this plan's share of the frequencies.
    pub(super) fn spectrum_bytes(&self) -> u64 {
        (self.frequencies.len() * self.nk() * 8) as u64
    }

    /// Bytes of the k-domain images of one block (phase shift and Stolt).
    pub(super) fn block_bytes(&self) -> u64 {
        if !self.method.rules().k_images() {
            return 0;
        }
        (self.blocks.iter().map(|b| b.len()).max().unwrap_or(0) * self.nk() * 8) as u64
    }

    /// Bytes of the per-step velocity arrays: the 3-D model itself and what the method holds of it per step.
    fn velocity_bytes(&self) -> u64 {
        (self.velocity_values * 4) as u64 + self.method.rules().lateral_bytes(self)
    }

    /// Bytes of the requested boxes of one migration (each member of a velocity scan fills its own).
    pub fn request_bytes(&self) -> u64 {
        self.request_values as u64 * 4
    }

    /// Memory a velocity scan of `members` migrations of this plan needs besides one migration: the boxes
    /// of the other members, and (`copy`) a copy of the spectrum that each member but the last migrates,
    /// where the method changes it in place.
    pub fn scan_bytes(&self, members: usize, copy: bool) -> u64 {
        if members < 2 {
            return 0;
        }
        (members as u64 - 1) * self.request_bytes() + if copy { self.spectrum_bytes() } else { 0 }
    }

    /// Peak host memory of the CPU engine when the spectrum of its share fits at once: the padded spectrum
    /// and [`Plan::host_fixed_bytes`].
    pub fn host_memory_bytes(&self) -> u64 {
        self.spectrum_bytes() + self.host_fixed_bytes()
    }

    /// Host memory of the CPU engine besides the spectrum: one ingest chunk, one block of k-domain images,
    /// the requested image, the velocity arrays, and per-thread FFT scratch (one plane and its transpose per
    /// thread, counted for every core of this machine).
    pub fn host_fixed_bytes(&self) -> u64 {
        let chunk = (self.ingest_inlines
            * self.input.shape()[1]
            * (self.input.shape()[2] * 4 + self.frequencies.len() * 8)) as u64;
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get()) as u64;
        let per_thread = (2 * self.nk() * 8 + self.padded[2] * 8) as u64;
        chunk + self.block_bytes() + self.request_values as u64 * 4 + self.velocity_bytes() + threads * per_thread
    }
}
