//! Planning device memory before anything is allocated: does the share fit at once, or in frequency bands
//! (see [`seis_imaging::bands`]: the spectrum waits on the host and passes through band by band, and only
//! the products stay on the device), or not at all — and if not, say so with the numbers. A velocity scan
//! keeps a copy of the band beside it, which each member starts from: its bands are half as wide.

use std::ops::Range;

use seis_core::error::{Error, Result};
pub use seis_imaging::bands::{bands_for, gib, Bands, Budget};
use seis_imaging::Plan;

/// A run may plan to use this fraction of the free device memory, less [`MEMORY_RESERVE`]: cuFFT's plans and
/// the driver allocate beyond what the plan counts, and every allocation is rounded up to whole pages.
pub const MEMORY_HEADROOM: f64 = 0.92;
/// Device memory left out of every plan whatever the job's size: on a nearly full device 8 % of what is
/// free does not cover the plans and page rounding of a small job (measured: a 24 MiB plan failed to
/// allocate with 28 MiB free).
pub const MEMORY_RESERVE: u64 = 64 << 20;

/// Bytes of device memory a run may plan to use when `free` bytes are free and it may use at most `limit`
/// (`compute.device_memory_gb`; `None`: what is free).
pub fn usable(free: usize, limit: Option<u64>) -> u64 {
    let free = ((MEMORY_HEADROOM * free as f64) as u64).saturating_sub(MEMORY_RESERVE);
    limit.map_or(free, |l| l.min(free))
}

/// How a run uses device memory: the bands of its share, the number of depth levels a phase-shift launch
/// images at once (each holds a k-domain plane), and the memory that takes.
#[derive(Clone, Debug)]
pub struct DevicePlan {
    pub bands: Bands,
    pub slots: usize,
    pub budget: Budget,
}

/// What a run needs besides the spectrum of its band.
pub struct Needs<'a> {
    /// Bytes per frequency of a band (one padded plane).
    pub per_frequency: u64,
    /// Whether the band has a copy beside it (the members of a velocity scan start from it).
    pub scan_copy: bool,
    /// Bytes needed whatever the band, with `slots` k-domain planes.
    pub fixed: &'a dyn Fn(usize) -> Budget,
    /// The most k-domain planes a launch can use.
    pub max_slots: usize,
    /// What running in bands adds (the ingest's staging of the spectrum on its way to the host), or why the
    /// method cannot run in bands.
    pub banded: std::result::Result<(&'static str, u64), &'a str>,
}

/// The device-memory plan of a run of `frequencies`: everything at once with the most k-domain planes; else
/// bands, with as many planes as leave room for bands (halving them down to one); else refused.
pub fn plan(frequencies: Range<usize>, needs: &Needs, available: u64, device: &str) -> Result<DevicePlan> {
    let n_w = frequencies.len() as u64;
    // `budget` with a band of `width` frequencies (and its copy), first.
    let band = |budget: Budget, name: &'static str, width: u64| {
        let budget = if needs.scan_copy {
            budget.with_first("scan copy of the band", needs.per_frequency * width)
        } else {
            budget
        };
        budget.with_first(name, needs.per_frequency * width)
    };
    let per_frequency = needs.per_frequency * (1 + needs.scan_copy as u64);
    let whole = band((needs.fixed)(needs.max_slots), "spectrum", n_w);
    if whole.total() <= available || n_w == 0 {
        return Ok(DevicePlan { bands: Bands::whole(frequencies), slots: needs.max_slots, budget: whole });
    }
    let refuse = |extra: String| {
        Err(Error::Backend(format!(
            "the job needs {} of device memory at once ({}), {device} can give {}{extra}; lower imaging.fmax, the \
             padding or the volume, or run on the CPU (--backend cpu)",
            gib(whole.total()),
            whole.describe(),
            gib(available)
        )))
    };
    let (name, extra) = match needs.banded {
        Ok(extra) => extra,
        Err(why) => return refuse(format!(", and {why}")),
    };
    let mut slots = needs.max_slots.max(1);
    loop {
        let mut fixed = (needs.fixed)(slots);
        fixed.items.push((name, extra));
        if let Some(bands) = bands_for(frequencies.clone(), per_frequency, fixed.total(), available) {
            let budget = band(fixed, "band spectrum", bands.widest() as u64);
            return Ok(DevicePlan { bands, slots, budget });
        }
        if slots == 1 {
            return refuse(format!(
                "; in frequency bands it would still need {} before the first frequency ({})",
                gib(fixed.total()),
                fixed.describe()
            ));
        }
        slots /= 2;
    }
}

/// What a GPU run of a plan holds besides the spectrum of its band, item by item: the one source of the
/// memory a run plans and allocates (`RunBuffers`) and of the estimate the application reports before a
/// run ([`crate::device_memory_estimate`]).
pub struct DeviceItems {
    /// What does not depend on the band or on the number of planes.
    pub common: Vec<(&'static str, u64)>,
    /// The method's planes (see `MethodRules::device_planes`): their name, and the most a launch can use.
    pub planes: &'static str,
    pub max_slots: usize,
    /// Bytes of one padded plane, which is also what a band holds per frequency.
    pub plane_bytes: u64,
    /// A velocity scan: the band has a copy beside it.
    pub scan_copy: bool,
    /// What running in bands adds, or why the method cannot.
    pub banded: std::result::Result<(&'static str, u64), &'static str>,
}

impl DeviceItems {
    /// The items of a run of `plan` by `members` migrations of a velocity scan whose products take
    /// `products` bytes, on `ranks` ranks, with `ring` ingest chunks in flight, whose largest phase-shift
    /// launch images `launch_levels` levels.
    pub fn new(
        plan: &Plan,
        products: u64,
        members: usize,
        ranks: usize,
        ring: usize,
        launch_levels: usize,
    ) -> Result<DeviceItems> {
        let pt = plan.padded[2];
        let (nk, nw, share) = (plan.nk(), plan.n_omega(), plan.frequencies.len());
        let chunk_traces = plan.ingest_inlines * plan.input.shape()[1];
        let bins = pt / 2 + 1;
        let mut common = vec![
            ("ingest ring", (ring * chunk_traces * (pt * 4 + bins * 8)) as u64),
            (if members > 1 { "products of every scan member" } else { "products" }, products),
            ("tables", (nk * 8 + nw * 32) as u64),
        ];
        if ranks > 1 {
            common.push(("rank exchange", (chunk_traces * (nw + ranks * share) * 8) as u64));
        }
        if let Some(grid) = plan.method.stolt() {
            if grid.nz_fft <= plan.last_level() {
                return Err(Error::Request(format!(
                    "the Stolt kz grid ({} samples) is shorter than the deepest level ({})",
                    grid.nz_fft,
                    plan.last_level()
                )));
            }
        }
        let rules = plan.method.rules();
        let (planes, max_slots) = rules.device_planes(plan, launch_levels);
        let banded = match rules.whole_spectrum() {
            Some(why) => Err(why),
            None => Ok(("ingest staging", (chunk_traces * share * 8) as u64)),
        };
        let plane_bytes = (nk * 8) as u64;
        Ok(DeviceItems { common, planes, max_slots, plane_bytes, scan_copy: members > 1, banded })
    }

    /// Bytes needed whatever the band, with `slots` planes.
    pub fn fixed(&self, slots: usize) -> Budget {
        let mut items = self.common.clone();
        items.push((self.planes, slots as u64 * self.plane_bytes));
        Budget { items }
    }

    /// The device-memory plan of a run of `frequencies` with `available` bytes (see [`plan`]).
    pub fn plan(&self, frequencies: Range<usize>, available: u64, device: &str) -> Result<DevicePlan> {
        let fixed = |slots: usize| self.fixed(slots);
        let needs = Needs {
            per_frequency: self.plane_bytes,
            scan_copy: self.scan_copy,
            fixed: &fixed,
            max_slots: self.max_slots,
            banded: self.banded,
        };
        plan(frequencies, &needs, available, device)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_plans_with_part_of_the_free_memory_and_at_most_its_limit() {
        let gib = 1usize << 30;
        assert_eq!(usable(gib, None), (0.92 * gib as f64) as u64 - (64 << 20));
        assert_eq!(usable(gib, Some(100 << 20)), 100 << 20);
        assert_eq!(usable(gib, Some(4 << 30)), usable(gib, None));
        assert_eq!(usable(32 << 20, None), 0, "less than the reserve leaves nothing");
    }

    #[test]
    fn the_plan_falls_back_to_bands_then_fewer_planes_then_refuses_with_the_numbers() {
        // 50 frequencies of 10 bytes; 100 bytes fixed and 20 per k-domain plane, up to 8 planes
        let fixed = |slots: usize| Budget { items: vec![("tables", 100), ("k-domain images", 20 * slots as u64)] };
        let needs =
            Needs { per_frequency: 10, scan_copy: false, fixed: &fixed, max_slots: 8, banded: Ok(("staging", 50)) };
        let p = plan(0..50, &needs, 1000, "GPU").unwrap();
        assert_eq!(p.bands.ranges, vec![0..50]);
        assert_eq!((p.slots, p.budget.total()), (8, 760));
        // 500 bytes: bands with every plane (100 + 160 + 50 fixed leaves room for 19 frequencies)
        let p = plan(0..50, &needs, 500, "GPU").unwrap();
        assert_eq!((p.bands.ranges.len(), p.slots), (3, 8));
        assert!(p.budget.total() <= 500, "{:?}", p.budget);
        // 200 bytes: 8 and 4 planes leave no room for a frequency, 2 planes do (100 + 40 + 50 + 10)
        let p = plan(0..50, &needs, 200, "GPU").unwrap();
        assert_eq!((p.slots, p.bands.widest()), (2, 1));
        // a share keeps its indices
        assert_eq!(plan(20..30, &needs, 400, "GPU").unwrap().bands.ranges.first().map(|r| r.start), Some(20));
        let e = plan(0..50, &needs, 150, "GPU").unwrap_err().to_string();
        assert!(e.contains("in frequency bands it would still need") && e.contains("GPU can give"), "{e}");
        let stolt = Needs { banded: Err("Stolt needs every frequency at once"), ..needs };
        let e = plan(0..50, &stolt, 500, "GPU").unwrap_err().to_string();
        assert!(e.contains("Stolt needs every frequency at once"), "{e}");
        // an empty share needs nothing
        assert!(plan(7..7, &stolt, 0, "GPU").unwrap().bands.ranges.is_empty());
        // A velocity scan's copy of the band counts as much as the band: what fitted at once now takes
        // bands, each half as wide.
        let scan = Needs { scan_copy: true, banded: Ok(("staging", 50)), ..stolt };
        let p = plan(0..50, &scan, 1000, "GPU").unwrap();
        assert_eq!((p.bands.ranges.len(), p.bands.widest()), (2, 25), "{:?}", p.budget);
        assert!(p.budget.describe().contains("scan copy of the band"), "{}", p.budget.describe());
        assert!(p.budget.total() <= 1000);
        assert_eq!(plan(0..50, &scan, 1260, "GPU").unwrap().bands.ranges.len(), 1, "760 + 500 at once");
    }
}
