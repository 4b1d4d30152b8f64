//! How the frequencies of a migration are split: into shares between processes, and into bands within one.
//!
//! The imaging condition is a sum over frequency, and every frequency travels down on its own: any set of
//! frequencies can be migrated over every depth level by itself, and the images of the sets added up give
//! the image of all of them. seisimage uses that one decomposition for everything that does not fit one
//! pass of one engine:
//!
//! - a **share** is the part of the plan's frequencies one process migrates: share `I/N` of a job split
//!   with `--shard I/N`, or the share of rank `r` of a run over several GPUs ([`Share`]). Shares are
//!   near-equal contiguous ranges of the frequency indices, in order ([`split_even`]); with more shares than
//!   frequencies the last ones are empty. Each frequency keeps its own imaging weight whichever share it
//!   falls in (the weights depend on the frequency's bin, not on its place in the share).
//! - a **band** is the part of a share an engine migrates at once, when the share's spectrum does not fit
//!   its memory ([`bands_for`]): the spectrum waits on the host (or on scratch disk) and each band goes
//!   through the engine in turn.
//!
//! A band is migrated over all the depth levels a request needs; per level, its image is cut into the
//! requested boxes, which add into the products. Products are summed band after band, share after share,
//! always in the same order, so a result does not depend on the thread schedule; it depends on the number
//! of bands and shares only through the rounding of float sums.
//!
//! Stolt does not split: it remaps every frequency of a wavenumber onto the vertical wavenumber grid at
//! once. Its first share migrates every frequency and the others none (see [`super::Plan::restrict_to`]).

use std::fmt;
use std::ops::Range;
use std::str::FromStr;

use serde::Serialize;

/// `n` items in `parts` near-equal contiguous ranges, in order: range `i` is `i·n/parts .. (i+1)·n/parts`.
/// Lengths differ by at most one; with more parts than items some ranges are empty.
pub fn split_even(n: usize, parts: usize) -> Vec<Range<usize>> {
    let parts = parts.max(1);
    (0..parts).map(|i| i * n / parts..(i + 1) * n / parts).collect()
}

/// `costs.len()` items in `parts` contiguous ranges of about equal total cost, in order; every range has an
/// item while there are at least as many items as ranges. Equal costs give [`split_even`]'s ranges.
pub fn split_by_cost(costs: &[f64], parts: usize) -> Vec<Range<usize>> {
    let (n, parts) = (costs.len(), parts.max(1));
    if costs.iter().all(|&c| c == costs[0]) {
        return split_even(n, parts);
    }
    let total: f64 = costs.iter().sum();
    let mut ends = Vec::with_capacity(parts);
    let (mut at, mut so_far) = (0usize, 0.0f64);
    for k in 1..parts {
        let goal = total * k as f64 / parts as f64;
        // Give this range an item and leave one for each range after it; with fewer items than ranges, the
        // first ranges take one each.
        let most = if n >= parts { n - (parts - k) } else { k.min(n) }.max(at);
        let least = k.min(most);
        // Take items while that brings the range's end nearer its goal.
        while at < most && (at < least || (so_far + costs[at] - goal).abs() <= (so_far - goal).abs()) {
            so_far += costs[at];
            at += 1;
        }
        ends.push(at);
    }
    ends.push(n);
    let mut start = 0;
    ends.into_iter()
        .map(|end| {
            let r = start..end.max(start);
            start = r.end;
            r
        })
        .collect()
}

/// Share `index` (0-based) of `count` shares of a job's frequencies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Share {
    pub index: usize,
    pub count: usize,
}

impl Share {
    /// The whole job: share 1 of 1.
    pub fn whole() -> Self {
        Share { index: 0, count: 1 }
    }

    /// Share `index` of `count`, or `None` unless `index < count`.
    pub fn new(index: usize, count: usize) -> Option<Self> {
        (index < count).then_some(Share { index, count })
    }

    /// The frequency indices of this share among `n` frequencies of equal cost.
    pub fn range(self, n: usize) -> Range<usize> {
        split_even(n, self.count).swap_remove(self.index)
    }

    /// The indices of this share among items of `costs`, cut at equal cost ([`split_by_cost`]).
    pub(crate) fn range_by_cost(self, costs: &[f64]) -> Range<usize> {
        split_by_cost(costs, self.count).swap_remove(self.index)
    }

    pub(crate) fn is_whole(self) -> bool {
        self.count == 1
    }
}

/// Written as on the command line: `I/N`, counting shares from 1.
impl fmt::Display for Share {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index + 1, self.count)
    }
}

/// Largest number of shares a job may be split into: far more than there are frequencies in any survey.
pub const MAX_SHARES: usize = 1 << 20;

/// Reads `I/N` with `1 ≤ I ≤ N`, as `--shard 3/8` gives it.
impl FromStr for Share {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("expected I/N with 1 ≤ I ≤ N (share I of N, counted from 1), such as 3/8; got {s:?}");
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let (i, n): (usize, usize) = (i.trim().parse().map_err(|_| bad())?, n.trim().parse().map_err(|_| bad())?);
        if i == 0 || i > n {
            return Err(bad());
        }
        if n > MAX_SHARES {
            return Err(format!("at most {MAX_SHARES} shares, not {n}"));
        }
        Ok(Share { index: i - 1, count: n })
    }
}

/// The bands an engine takes a share's frequencies in: ranges of the plan's frequency indices, in order.
/// One band when the share fits at once; none for an empty share.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bands {
    pub ranges: Vec<Range<usize>>,
}

impl Bands {
    /// All of `frequencies` at once (none when it is empty).
    pub fn whole(frequencies: Range<usize>) -> Self {
        Bands { ranges: if frequencies.is_empty() { Vec::new() } else { vec![frequencies] } }
    }

    pub fn banded(&self) -> bool {
        self.ranges.len() > 1
    }

    pub fn widest(&self) -> usize {
        self.ranges.iter().map(|r| r.len()).max().unwrap_or(0)
    }
}

/// Split `frequencies` into as few bands as fit: `fixed` bytes are needed whatever the band, each frequency
/// of a band takes `per_frequency` bytes, and `available` bytes can be used. The bands are near equal, so
/// the last is not a sliver. `None` when not even one frequency fits.
pub fn bands_for(frequencies: Range<usize>, per_frequency: u64, fixed: u64, available: u64) -> Option<Bands> {
    let n_w = frequencies.len();
    if n_w == 0 {
        return Some(Bands { ranges: Vec::new() });
    }
    if fixed >= available {
        return None;
    }
    let widest = ((available - fixed) / per_frequency.max(1)).min(n_w as u64) as usize;
    if widest == 0 {
        return None;
    }
    let count = n_w.div_ceil(widest);
    let start = frequencies.start;
    Some(Bands { ranges: split_even(n_w, count).into_iter().map(|r| start + r.start..start + r.end).collect() })
}

/// Memory a run needs, item by item (for the messages).
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

    /// This budget with `bytes` more for `name`, first.
    pub fn with_first(&self, name: &'static str, bytes: u64) -> Budget {
        let mut items = vec![(name, bytes)];
        items.extend(self.items.iter().cloned());
        Budget { items }
    }
}

pub fn gib(bytes: u64) -> String {
    format!("{:.2} GiB", bytes as f64 / (1u64 << 30) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_by_cost_cover_everything_once_at_about_equal_cost() {
        assert_eq!(split_by_cost(&[2.0; 10], 3), split_even(10, 3));
        // Costs growing as the square of the index: the later ranges are narrower, and each range's cost is
        // within one item's cost of an equal share.
        let costs: Vec<f64> = (0..481).map(|i| 0.06 + (i as f64 / 480.0).powi(2)).collect();
        let total: f64 = costs.iter().sum();
        for parts in [2, 3, 4, 7] {
            let ranges = split_by_cost(&costs, parts);
            assert_eq!(ranges.len(), parts);
            assert_eq!((ranges[0].start, ranges[parts - 1].end), (0, costs.len()));
            for (a, b) in ranges.iter().zip(&ranges[1..]) {
                assert_eq!(a.end, b.start);
                assert!(a.len() > b.len(), "{ranges:?}");
            }
            for r in &ranges {
                let cost: f64 = costs[r.clone()].iter().sum();
                assert!((cost - total / parts as f64).abs() <= 1.0, "{parts} parts: {r:?} costs {cost}");
            }
        }
        // As many ranges as items or more: each item alone, then empty ranges.
        assert_eq!(split_by_cost(&[1.0, 5.0, 9.0], 3), vec![0..1, 1..2, 2..3]);
        assert_eq!(split_by_cost(&[1.0, 9.0], 3), vec![0..1, 1..2, 2..2]);
        assert_eq!(split_by_cost(&[100.0, 1.0, 1.0, 1.0], 2), vec![0..1, 1..4]);
    }

    #[test]
    fn even_splits_cover_everything_once_in_order() {
        assert_eq!(split_even(10, 3), vec![0..3, 3..6, 6..10]);
        assert_eq!(split_even(3, 5), vec![0..0, 0..1, 1..1, 1..2, 2..3]);
        for n in [0, 1, 7, 97, 100] {
            for parts in 1..12 {
                let r = split_even(n, parts);
                assert_eq!(r.len(), parts);
                assert_eq!(r[0].start, 0);
                assert_eq!(r[parts - 1].end, n);
                assert!(r.windows(2).all(|w| w[0].end == w[1].start));
                let (lo, hi) = (r.iter().map(|x| x.len()).min().unwrap(), r.iter().map(|x| x.len()).max().unwrap());
                assert!(hi - lo <= 1, "{n} in {parts}: {r:?}");
            }
        }
    }

    #[test]
    fn shares_are_read_counting_from_one() {
        assert_eq!("3/8".parse::<Share>(), Ok(Share { index: 2, count: 8 }));
        assert_eq!(" 1 / 1 ".parse::<Share>(), Ok(Share::whole()));
        for bad in ["0/4", "5/4", "3", "a/4", "3/", "-1/4", "1/0"] {
            assert!(bad.parse::<Share>().is_err(), "{bad}");
        }
        assert!(format!("{}/{}", 1, MAX_SHARES + 1).parse::<Share>().unwrap_err().contains("at most"));
        assert_eq!(Share { index: 2, count: 8 }.to_string(), "3/8");
        assert_eq!(Share { index: 3, count: 4 }.range(10), 7..10);
        assert_eq!(Share { index: 0, count: 4 }.range(2), 0..0);
    }

    #[test]
    fn bands_are_as_few_and_as_even_as_the_memory_allows() {
        // 100 frequencies of 10 bytes, 1000 fixed: everything fits in 2000
        assert_eq!(bands_for(0..100, 10, 1000, 2000).unwrap().ranges, vec![0..100]);
        // room for 30 frequencies: 4 bands of 25, not 30 + 30 + 30 + 10
        let b = bands_for(0..100, 10, 1000, 1300).unwrap();
        assert_eq!(b.ranges, vec![0..25, 25..50, 50..75, 75..100]);
        assert!(b.banded() && b.widest() == 25);
        // every frequency exactly once, in order, whatever the numbers; a share keeps its indices
        for avail in [1010u64, 1011, 1099, 1155, 1999] {
            let b = bands_for(40..137, 10, 1000, avail).unwrap();
            let all: Vec<usize> = b.ranges.iter().flat_map(|r| r.clone()).collect();
            assert_eq!(all, (40..137).collect::<Vec<_>>());
            assert!(b.widest() as u64 * 10 + 1000 <= avail);
        }
        assert!(bands_for(0..100, 10, 1000, 1009).is_none());
        assert!(bands_for(0..100, 10, 2000, 1000).is_none());
        assert_eq!(bands_for(5..5, 10, 2000, 1000).unwrap().ranges, Vec::<Range<usize>>::new());
    }
}
