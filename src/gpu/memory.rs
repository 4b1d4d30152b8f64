//! Planning device memory before anything is allocated: does the job fit at once, or in frequency bands
//! (the image resident, the spectrum passing through band by band), or not at all — and if not, say so with
//! the numbers.

use std::ops::Range;

use crate::error::{Error, Result};

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

/// Device memory a run needs, item by item (for the messages).
#[derive(Clone, Debug, Default)]
pub struct Budget {
    pub items: Vec<(&'static str, u64)>,
}

impl Budget {
    pub fn total(&self) -> u64 {
        self.items.iter().map(|(_, b)| b).sum()
    }

    pub fn describe(&self) -> String {
        self.items.iter().map(|(n, b)| format!("{n} {}", gib(*b))).collect::<Vec<_>>().join(", ")
    }
}

pub fn gib(bytes: u64) -> String {
    format!("{:.2} GiB", bytes as f64 / (1u64 << 30) as f64)
}

/// How a run holds its spectrum.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bands {
    /// Ranges of the plan's frequency indices, processed one after the other; one range when it all fits.
    pub ranges: Vec<Range<usize>>,
}

impl Bands {
    pub fn banded(&self) -> bool {
        self.ranges.len() > 1
    }

    pub fn widest(&self) -> usize {
        self.ranges.iter().map(|r| r.len()).max().unwrap_or(0)
    }
}

/// Split `n_w` frequencies into as few bands as fit: `fixed` bytes are needed whatever the band, each
/// frequency of a band takes `per_frequency` bytes, and `available` bytes can be used. The bands are near
/// equal, so the last is not a sliver. `None` when not even one frequency fits.
pub fn bands_for(n_w: usize, per_frequency: u64, fixed: u64, available: u64) -> Option<Bands> {
    if n_w == 0 || fixed >= available {
        return None;
    }
    let widest = ((available - fixed) / per_frequency.max(1)).min(n_w as u64) as usize;
    if widest == 0 {
        return None;
    }
    let count = n_w.div_ceil(widest);
    let size = n_w.div_ceil(count);
    Some(Bands { ranges: (0..count).map(|b| b * size..((b + 1) * size).min(n_w)).filter(|r| !r.is_empty()).collect() })
}

/// The device-memory plan of a run: try everything at once (`whole`), else bands (`banded`, whose fixed
/// part may be larger: a phase-shift image for every level stays resident), else refuse.
pub fn plan(
    n_w: usize,
    per_frequency: u64,
    whole: &Budget,
    banded: Option<&Budget>,
    available: u64,
    device: &str,
    why_not_banded: &str,
) -> Result<(Bands, Budget)> {
    let spectrum = per_frequency * n_w as u64;
    if whole.total() + spectrum <= available {
        return Ok((Bands { ranges: std::iter::once(0..n_w).collect() }, with_spectrum(whole, spectrum)));
    }
    let refuse = |extra: String| {
        Err(Error::Backend(format!(
            "the job needs {} of device memory at once ({}), {device} can give {}{extra}; lower imaging.fmax, the \
             padding or the volume, or run on the CPU (--backend cpu)",
            gib(whole.total() + spectrum),
            with_spectrum(whole, spectrum).describe(),
            gib(available)
        )))
    };
    match banded {
        None => refuse(format!(", and {why_not_banded}")),
        Some(b) => match bands_for(n_w, per_frequency, b.total(), available) {
            Some(bands) => {
                let widest = per_frequency * bands.widest() as u64;
                Ok((bands, with_spectrum(b, widest)))
            }
            None => refuse(format!(
                "; in frequency bands it would still need {} before the first frequency ({})",
                gib(b.total()),
                b.describe()
            )),
        },
    }
}

fn with_spectrum(b: &Budget, spectrum: u64) -> Budget {
    let mut items = vec![("spectrum", spectrum)];
    items.extend(b.items.iter().cloned());
    Budget { items }
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
    fn bands_are_as_few_and_as_even_as_the_memory_allows() {
        // 100 frequencies of 10 bytes, 1000 fixed: everything fits in 2000
        assert_eq!(bands_for(100, 10, 1000, 2000).unwrap().ranges, vec![0..100]);
        // room for 30 frequencies: 4 bands of 25, not 30 + 30 + 30 + 10
        let b = bands_for(100, 10, 1000, 1300).unwrap();
        assert_eq!(b.ranges, vec![0..25, 25..50, 50..75, 75..100]);
        assert!(b.banded() && b.widest() == 25);
        // every frequency exactly once, in order, whatever the numbers
        for avail in [1010u64, 1011, 1099, 1155, 1999] {
            let b = bands_for(97, 10, 1000, avail).unwrap();
            let all: Vec<usize> = b.ranges.iter().flat_map(|r| r.clone()).collect();
            assert_eq!(all, (0..97).collect::<Vec<_>>());
            assert!(b.widest() as u64 * 10 + 1000 <= avail);
        }
        assert!(bands_for(100, 10, 1000, 1009).is_none());
        assert!(bands_for(100, 10, 2000, 1000).is_none());
    }

    #[test]
    fn the_plan_falls_back_to_bands_then_refuses_with_the_numbers() {
        let whole = Budget { items: vec![("k-domain images", 100)] };
        let banded = Budget { items: vec![("k-domain images", 400)] };
        let (b, used) = plan(50, 10, &whole, Some(&banded), 1000, "GPU", "").unwrap();
        assert_eq!(b.ranges, vec![0..50]);
        assert_eq!(used.total(), 600);
        let (b, used) = plan(50, 10, &whole, Some(&banded), 500, "GPU", "").unwrap();
        assert!(b.banded() && used.total() <= 500, "{b:?}");
        let e = plan(50, 10, &whole, Some(&banded), 400, "GPU", "").unwrap_err().to_string();
        assert!(e.contains("in frequency bands it would still need") && e.contains("GPU can give"), "{e}");
        let e = plan(50, 10, &whole, None, 500, "GPU", "Stolt needs every frequency at once").unwrap_err().to_string();
        assert!(e.contains("Stolt needs every frequency at once"), "{e}");
    }
}
