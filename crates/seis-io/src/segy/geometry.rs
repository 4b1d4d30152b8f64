//! One sequential pass over the trace headers places every trace in the inline × crossline grid: axes from
//! the line numbers (any order, any step), a map from grid cell to trace, the live mask and the survey
//! coordinates. Files that are not one trace per grid cell (pre-stack gathers, shot gathers, wrong byte
//! locations) are refused with what was found and which byte locations would give a grid.

use std::sync::atomic::{AtomicU32, Ordering};

use rayon::prelude::*;
use serde::Serialize;

use super::file::SegyFile;
use super::trace_header::{word_at, HeaderLocations, OFFSET_BYTE};

use seis_core::cancel::CancelToken;
use seis_core::error::{Error, Location, Result};
use seis_core::volume::{CoordTransform, Geometry, LineAxis};

/// A grid with more than this many cells per trace in the file is not a survey with missing traces but a
/// set of traces that do not form a grid (or line numbers read from the wrong bytes). The bound also keeps
/// what the grid costs in memory proportional to the file.
const MAX_CELLS_PER_TRACE: u64 = 4;

/// Grid cell without a trace.
pub const MISSING: u32 = u32::MAX;

/// Which line number stays the same from one trace to the next in the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Sorting {
    /// Traces of one inline follow each other (crossline number changes fastest).
    Inline,
    /// Traces of one crossline follow each other (inline number changes fastest).
    Crossline,
}

/// The order in which a file visits the numbers of one line axis.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    Ascending,
    Descending,
}

/// The grid of a file and where each of its cells is stored.
#[derive(Clone, Debug)]
pub struct Grid {
    /// Axes always ascending; live = a trace is in the file and is not flagged dead (trace id 2).
    pub geometry: Geometry,
    /// For each cell in `[iline][xline]` order, the index of its trace in the file, or [`MISSING`].
    pub cells: Vec<u32>,
    pub sorting: Sorting,
    pub iline_direction: Direction,
    pub xline_direction: Direction,
    /// Cells without a trace (read as zeros).
    pub missing: usize,
    /// Traces present but flagged dead (trace identification code 2).
    pub dead: usize,
    /// Extent of the coordinates of all traces, `[[x_min, x_max], [y_min, y_max]]`.
    pub xy_range: [[f64; 2]; 2],
    /// Largest distance between a trace's coordinates and the affine fit stored in the geometry.
    pub coordinate_misfit: Option<f64>,
}

/// How many traces ahead the scan asks for headers to be loaded (see [`SegyFile::prefetch_header`]).
const PREFETCH_AHEAD: usize = 32;

/// Traces per task of the header scan.
const SCAN_BLOCK: usize = 4096;

/// What the scan keeps of each trace header.
#[derive(Clone)]
struct Record {
    iline: i32,
    xline: i32,
    offset: i32,
    xy: [f64; 2],
    dead: bool,
}

/// What the scan adds up over a block of traces.
#[derive(Clone, Copy)]
struct BlockSummary {
    dead: usize,
    /// `[[x_min, x_max], [y_min, y_max]]`
    xy_range: [[f64; 2]; 2],
}

impl BlockSummary {
    const EMPTY: BlockSummary = BlockSummary { dead: 0, xy_range: [[f64::INFINITY, f64::NEG_INFINITY]; 2] };

    fn add(&mut self, r: &Record) {
        self.dead += r.dead as usize;
        for (range, v) in self.xy_range.iter_mut().zip(r.xy) {
            *range = [range[0].min(v), range[1].max(v)];
        }
    }

    fn merge(self, o: BlockSummary) -> BlockSummary {
        let (a, b) = (self.xy_range, o.xy_range);
        BlockSummary {
            dead: self.dead + o.dead,
            xy_range: std::array::from_fn(|k| [a[k][0].min(b[k][0]), a[k][1].max(b[k][1])]),
        }
    }
}

impl Grid {
    /// Scan the trace headers of `file` in file order and build its grid.
    pub fn scan(file: &SegyFile) -> Result<Grid> {
        let n = file.trace_count();
        let fail = |location, message: String| Error::format(file.path(), location, message);
        if n == 0 {
            return Err(fail(
                Location::Byte(file.first_trace_offset()),
                format!("the file holds no traces: it ends after its headers, at byte {}", file.file_size()),
            ));
        }
        if n as u64 >= MISSING as u64 {
            return Err(fail(Location::File, format!("{n} traces are more than this reader indexes")));
        }
        let mut steps = seis_core::stats::Stages::default();
        // The headers are read in parallel, a block of traces per task (on a large file, reading them is
        // mostly page faults and cache misses, which then spread over every core); the records keep file order.
        // Each record is written once, by the task that reads its header: filling the vector first would be a
        // serial pass over as many bytes (10 MB for a 262 144-trace file), page faults included. Each task
        // also sums up its block (dead traces, coordinate extent) while the values are at hand.
        let mut records: Vec<Record> = Vec::with_capacity(n);
        let blocks: Vec<BlockSummary> = records.spare_capacity_mut()[..n]
            .par_chunks_mut(SCAN_BLOCK)
            .enumerate()
            .map(|(block, out)| {
                CancelToken::process().check()?;
                let mut summary = BlockSummary::EMPTY;
                for (k, record) in out.iter_mut().enumerate() {
                    let i = block * SCAN_BLOCK + k;
                    file.prefetch_header(i + PREFETCH_AHEAD);
                    let h = file.trace_header(i)?;
                    let r = record.write(Record {
                        iline: h.iline,
                        xline: h.xline,
                        offset: h.offset,
                        xy: h.xy(),
                        dead: h.is_dead(),
                    });
                    summary.add(r);
                }
                Ok(summary)
            })
            .collect::<Result<_>>()?;
        // SAFETY: the capacity holds n records and the loop above wrote every one of them (an error returns
        // before this line).
        unsafe { records.set_len(n) };
        let summary = blocks.into_iter().fold(BlockSummary::EMPTY, BlockSummary::merge);
        steps.lap("headers");
        let at = *file.locations();
        let placed = place(n, |i| (records[i].iline, records[i].xline));
        let (ilines, xlines, cells) = match placed {
            Ok(p) => p,
            Err(problem) => {
                let message = explain(&problem, &records, &at);
                let location = match problem {
                    Problem::Repeated { second, .. } => {
                        Location::Trace { index: second as u64, byte: file.trace_offset(second) }
                    }
                    Problem::Sparse { .. } => Location::File,
                };
                return Err(fail(location, format!("{message}. {}", suggest_locations(file, &at))));
            }
        };

        steps.lap("grid");
        let live: Vec<bool> = cells.par_iter().map(|&t| t != MISSING && !records[t as usize].dead).collect();
        let missing = cells.par_iter().filter(|&&t| t == MISSING).count();
        let (sorting, iline_direction, xline_direction) = sorting(&records);
        steps.lap("counts");
        let (coords, coordinate_misfit) = fit_coordinates(&records, &ilines, &xlines);
        steps.lap("coordinates");
        steps.log_trace(&format!("scanning the trace headers of {}", file.path().display()));
        // Unmapping the records takes 0.3-0.8 ms for a large file (H200 host, 16 cores), which nothing waits for.
        rayon::spawn(move || drop(records));
        Ok(Grid {
            geometry: Geometry { ilines, xlines, samples: file.sample_axis(), coords, live },
            cells,
            sorting,
            iline_direction,
            xline_direction,
            missing,
            dead: summary.dead,
            xy_range: summary.xy_range,
            coordinate_misfit,
        })
    }
}

/// Why a set of (inline, crossline) pairs is not a grid.
enum Problem {
    /// Two traces share a cell (the first such pair in file order).
    Repeated { first: usize, second: usize, repeats: usize },
    /// The cells spanned by the line numbers outnumber the traces too much.
    Sparse { cells: u128, ilines: LineAxis, xlines: LineAxis },
}

/// Axes and cell → trace map for the pairs `line(i)` of `n` traces, or why they do not form a grid.
fn place(n: usize, line: impl Fn(usize) -> (i32, i32) + Sync) -> Result<(LineAxis, LineAxis, Vec<u32>), Problem> {
    let ilines = axis(n, |i| line(i).0);
    let xlines = axis(n, |i| line(i).1);
    let cells = ilines.len as u128 * xlines.len as u128;
    if cells > MAX_CELLS_PER_TRACE as u128 * n as u128 {
        return Err(Problem::Sparse { cells, ilines, xlines });
    }
    // Each trace claims its cell, in parallel (one pass over a large file's traces takes milliseconds). A cell
    // claimed twice is an error, which the serial pass below describes: it finds the first repeat in file
    // order, whatever order the threads ran in.
    let claims: Vec<AtomicU32> = (0..cells as usize).into_par_iter().map(|_| AtomicU32::new(MISSING)).collect();
    let repeated = (0..n).into_par_iter().with_min_len(SCAN_BLOCK).any(|i| {
        let (il, xl) = line(i);
        let cell = index_on(&ilines, il) * xlines.len + index_on(&xlines, xl);
        claims[cell].compare_exchange(MISSING, i as u32, Ordering::Relaxed, Ordering::Relaxed).is_err()
    });
    if !repeated {
        return Ok((ilines, xlines, claims.into_iter().map(AtomicU32::into_inner).collect()));
    }
    let mut map = vec![MISSING; cells as usize];
    let mut first_repeat = None;
    let mut repeats = 0;
    for i in 0..n {
        let (il, xl) = line(i);
        let cell = index_on(&ilines, il) * xlines.len + index_on(&xlines, xl);
        if map[cell] == MISSING {
            map[cell] = i as u32;
        } else {
            repeats += 1;
            first_repeat.get_or_insert((map[cell] as usize, i));
        }
    }
    match first_repeat {
        None => Ok((ilines, xlines, map)),
        Some((first, second)) => Err(Problem::Repeated { first, second, repeats }),
    }
}

/// The ascending axis through the `n` values `value(i)`: from the smallest to the largest, with the greatest
/// common divisor of their differences as the step (1 when all are equal). In parallel: opening a large file
/// runs this over every trace.
fn axis(n: usize, value: impl Fn(usize) -> i32 + Sync) -> LineAxis {
    let min = (0..n).into_par_iter().map(&value).min().unwrap_or(0) as i64;
    // Most values are multiples of the step found so far: test that with one division, not a gcd.
    let step_with = |g: i64, d: i64| if g != 0 && d % g == 0 { g } else { gcd(g, d) };
    let (max, step) = (0..n)
        .into_par_iter()
        .fold(
            || (min, 0i64),
            |(max, g), i| {
                let v = value(i) as i64;
                (max.max(v), step_with(g, v - min))
            },
        )
        .reduce(|| (min, 0), |(m1, g1), (m2, g2)| (m1.max(m2), gcd(g1, g2)));
    let step = step.max(1);
    LineAxis::new(min, step, ((max - min) / step) as usize + 1)
}

fn index_on(axis: &LineAxis, value: i32) -> usize {
    // Opening a file calls this several times per trace: spare the division in the usual case.
    match axis.step {
        1 => (value as i64 - axis.first) as usize,
        step => ((value as i64 - axis.first) / step) as usize,
    }
}

fn gcd(a: i64, b: i64) -> i64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// What was found, for an error message.
fn explain(problem: &Problem, records: &[Record], at: &HeaderLocations) -> String {
    let bytes = format!("bytes {}/{}", at.iline, at.xline);
    match *problem {
        Problem::Sparse { cells, ilines, xlines } => {
            // Where the extremes are: one stray header often stretches an axis.
            let trace_of = |value: i64, line: fn(&Record) -> i32| {
                records.iter().position(|r| line(r) as i64 == value).map_or(0, |t| t + 1)
            };
            format!(
                "not a post-stack grid: the inline and crossline numbers of the {} traces (at {bytes}) span inlines \
                 {}..={} step {} and crosslines {}..={} step {}, {cells} grid cells, more than {MAX_CELLS_PER_TRACE} \
                 per trace (first traces with the extreme numbers: inlines {} and {}, crosslines {} and {})",
                records.len(),
                ilines.first,
                ilines.last(),
                ilines.step,
                xlines.first,
                xlines.last(),
                xlines.step,
                trace_of(ilines.first, |r| r.iline),
                trace_of(ilines.last(), |r| r.iline),
                trace_of(xlines.first, |r| r.xline),
                trace_of(xlines.last(), |r| r.xline),
            )
        }
        Problem::Repeated { first, second, repeats } => {
            let (a, b) = (&records[first], &records[second]);
            let pair = format!("inline {} crossline {}", a.iline, a.xline);
            if is_prestack(records) {
                let mut offsets: Vec<i32> = records.iter().map(|r| r.offset).collect();
                offsets.sort_unstable();
                offsets.dedup();
                format!(
                    "pre-stack data: {repeats} of {} traces share an (inline, crossline) location with another trace \
                     (at {bytes}) and differ by offset (byte {OFFSET_BYTE}: {} distinct offsets, {}..={}), e.g. \
                     traces {} and {} at {pair}. seisimage migrates post-stack volumes: stack the gathers, or \
                     extract one offset, first",
                    records.len(),
                    offsets.len(),
                    offsets[0],
                    offsets[offsets.len() - 1],
                    first + 1,
                    second + 1
                )
            } else {
                format!(
                    "not a post-stack grid: traces {} and {} both have {pair} (at {bytes}), and {repeats} of {} \
                     traces repeat a location seen before with the same offset (byte {OFFSET_BYTE}: {}); shot or \
                     receiver gathers are not grids, and inline/crossline numbers may be stored elsewhere in this \
                     file",
                    first + 1,
                    second + 1,
                    records.len(),
                    b.offset
                )
            }
        }
    }
}

/// Several traces per location, told apart by their offsets: every (location, offset) pair is unique and
/// there is more than one offset.
fn is_prestack(records: &[Record]) -> bool {
    let mut keys: Vec<(i32, i32, i32)> = records.iter().map(|r| (r.iline, r.xline, r.offset)).collect();
    keys.sort_unstable();
    let unique = keys.windows(2).all(|w| w[0] != w[1]);
    unique && records.iter().any(|r| r.offset != records[0].offset)
}

/// Which byte locations would give a grid: those a rev-2.1 layout stanza of the file declares, then the
/// common ones, each tried with the same placement rules.
fn suggest_locations(file: &SegyFile, used: &HeaderLocations) -> String {
    let declared = file.text_header().declared_line_bytes();
    let mut candidates: Vec<(u16, u16)> = declared.into_iter().collect();
    candidates.extend([(189, 193), (5, 21), (9, 21)]);
    candidates.dedup();
    candidates.retain(|&(il, xl)| (il, xl) != (used.iline, used.xline) && il <= 237 && xl <= 237 && il > 0 && xl > 0);
    let n = file.trace_count();
    let words = |il: u16, xl: u16| {
        move |i: usize| {
            let h = file.trace_header_bytes(i).expect("index below the trace count");
            (word_at(h, il, file.byte_order()), word_at(h, xl, file.byte_order()))
        }
    };
    let working: Vec<String> = candidates
        .iter()
        .filter_map(|&(il, xl)| {
            let (ilines, xlines, cells) = place(n, words(il, xl)).ok()?;
            let missing = cells.iter().filter(|&&t| t == MISSING).count();
            let origin = if Some((il, xl)) == declared { ", as the file's SEG:Layout stanza declares" } else { "" };
            Some(format!(
                "bytes {il}/{xl} give a grid of {} inlines × {} crosslines with {missing} missing traces{origin} \
                 (iline_byte = {il}, xline_byte = {xl}; --iline-byte {il} --xline-byte {xl})",
                ilines.len, xlines.len
            ))
        })
        .collect();
    if working.is_empty() {
        let tried: Vec<String> = candidates.iter().map(|(il, xl)| format!("{il}/{xl}")).collect();
        format!(
            "The other usual locations ({}) give no grid either: if this is a post-stack volume, find where it \
             stores inline and crossline numbers and set iline_byte and xline_byte (--iline-byte, --xline-byte)",
            tried.join(", ")
        )
    } else {
        format!("Try: {}", working.join("; "))
    }
}

/// How the traces are ordered in the file.
fn sorting(records: &[Record]) -> (Sorting, Direction, Direction) {
    let dir = |from: i32, to: i32| if to < from { Direction::Descending } else { Direction::Ascending };
    let (first, last) = (&records[0], &records[records.len() - 1]);
    let next = records.get(1).unwrap_or(first);
    if next.xline == first.xline && next.iline != first.iline {
        (Sorting::Crossline, dir(first.iline, next.iline), dir(first.xline, last.xline))
    } else {
        (Sorting::Inline, dir(first.iline, last.iline), dir(first.xline, next.xline))
    }
}

/// The sum over `records` of the `N` terms `f` gives for each, computed in parallel over fixed blocks and
/// added up in order, so that the result does not depend on the number of threads (the fitted coordinates
/// are printed and recorded).
fn parallel_sum<const N: usize>(records: &[Record], f: impl Fn(&Record) -> [f64; N] + Sync) -> [f64; N] {
    let add = |a: [f64; N], b: [f64; N]| std::array::from_fn(|k| a[k] + b[k]);
    let blocks: Vec<[f64; N]> =
        records.par_chunks(SCAN_BLOCK).map(|block| block.iter().map(&f).fold([0.0; N], add)).collect();
    blocks.into_iter().fold([0.0; N], add)
}

/// Least-squares affine map from grid indices to coordinates, over the traces present, and the largest
/// distance from a trace to it. `None` when every coordinate is zero (the file has none).
fn fit_coordinates(records: &[Record], ilines: &LineAxis, xlines: &LineAxis) -> (Option<CoordTransform>, Option<f64>) {
    if records.iter().all(|r| r.xy == [0.0, 0.0]) {
        return (None, None);
    }
    let at = |r: &Record| [index_on(ilines, r.iline) as f64, index_on(xlines, r.xline) as f64];
    let n = records.len() as f64;
    // Each pass is a parallel sum: a pass over every trace of a large file takes milliseconds on one core.
    let [mi, mj, mx, my] = parallel_sum(records, |r| {
        let [i, j] = at(r);
        [i, j, r.xy[0], r.xy[1]]
    })
    .map(|s| s / n);
    // Centred sums of the normal equations; centring keeps large map coordinates from swamping the fit.
    let [sii, sij, sjj, si0, si1, sj0, sj1] = parallel_sum(records, |r| {
        let [i, j] = at(r);
        let (di, dj) = (i - mi, j - mj);
        let (dx, dy) = (r.xy[0] - mx, r.xy[1] - my);
        [di * di, di * dj, dj * dj, di * dx, di * dy, dj * dx, dj * dy]
    });
    let (si, sj) = ([si0, si1], [sj0, sj1]);
    let det = sii * sjj - sij * sij;
    let (mut per_iline, mut per_xline) = ([0.0; 2], [0.0; 2]);
    for k in 0..2 {
        // A single line on an axis leaves its direction undetermined: fit the other one alone.
        (per_iline[k], per_xline[k]) = if det.abs() > 1e-12 * (sii * sjj).max(1.0) {
            ((si[k] * sjj - sj[k] * sij) / det, (sj[k] * sii - si[k] * sij) / det)
        } else if sii > 0.0 {
            (si[k] / sii, 0.0)
        } else if sjj > 0.0 {
            (0.0, sj[k] / sjj)
        } else {
            (0.0, 0.0)
        };
    }
    let origin = [mx - per_iline[0] * mi - per_xline[0] * mj, my - per_iline[1] * mi - per_xline[1] * mj];
    let transform = CoordTransform { origin, per_iline, per_xline };
    let misfit2 = records
        .par_iter()
        .map(|r| {
            let [i, j] = at(r);
            let [x, y] = transform.xy(i, j);
            (x - r.xy[0]).powi(2) + (y - r.xy[1]).powi(2)
        })
        .reduce(|| 0.0, f64::max);
    (Some(transform), Some(misfit2.sqrt()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axes_take_the_common_step_of_any_order() {
        let of = |v: &[i32]| axis(v.len(), |i| v[i]);
        assert_eq!(of(&[110, 100, 130, 120]), LineAxis::new(100, 10, 4));
        assert_eq!(of(&[7, 7, 7]), LineAxis::new(7, 1, 1));
        assert_eq!(of(&[-4, 2, 8]), LineAxis::new(-4, 6, 3));
        // Many values, most on a coarser step than the last few reveal (the fast path and the gcd both used).
        let many: Vec<i32> = (0..100_000).map(|i| 1000 + 12 * (i % 500)).chain([1004, 1010]).collect();
        assert_eq!(of(&many), LineAxis::new(1000, 2, 2995));
        let a = of(&[i32::MIN, i32::MAX]);
        assert_eq!((a.len, a.step), (2, u32::MAX as i64));
    }

    #[test]
    fn placement_finds_repeats_and_sparse_sets() {
        let pairs = [(1, 10), (1, 12), (2, 10), (2, 12)];
        let (il, xl, cells) = place(4, |i| pairs[i]).ok().unwrap();
        assert_eq!((il, xl), (LineAxis::new(1, 1, 2), LineAxis::new(10, 2, 2)));
        assert_eq!(cells, [0, 1, 2, 3]);
        // descending, crossline-sorted, one missing
        let pairs = [(2, 12), (1, 12), (2, 10)];
        let (_, _, cells) = place(3, |i| pairs[i]).ok().unwrap();
        assert_eq!(cells, [MISSING, 1, 2, 0]);
        let pairs = [(1, 1), (1, 2), (1, 1), (1, 2)];
        assert!(matches!(place(4, |i| pairs[i]), Err(Problem::Repeated { first: 0, second: 2, repeats: 2 })));
        let pairs = [(1, 1), (2, 2), (1000, 1000)];
        assert!(matches!(place(3, |i| pairs[i]), Err(Problem::Sparse { cells: 1_000_000, .. })));
        // Two values always make a dense axis (their difference is the step).
        let pairs = [(1, 1), (1000, 1000)];
        assert!(place(2, |i| pairs[i]).is_ok());
    }

    #[test]
    fn coordinates_fit_a_rotated_grid_exactly() {
        let (il, xl) = (LineAxis::new(100, 2, 3), LineAxis::new(7, 1, 4));
        let (a, b) = (0.6f64, 0.8f64); // rotation by atan(4/3)
        let mut records = Vec::new();
        for i in 0..3 {
            for j in 0..4 {
                let (u, v) = (25.0 * i as f64, 12.5 * j as f64);
                records.push(Record {
                    iline: 100 + 2 * i,
                    xline: 7 + j,
                    offset: 0,
                    xy: [605_000.0 + a * u - b * v, 6_070_000.0 + b * u + a * v],
                    dead: false,
                });
            }
        }
        records.remove(5);
        let (t, misfit) = fit_coordinates(&records, &il, &xl);
        let t = t.unwrap();
        assert!(misfit.unwrap() < 1e-6);
        let bins = t.bin_size();
        assert!((bins[0] - 25.0).abs() < 1e-9 && (bins[1] - 12.5).abs() < 1e-9, "{bins:?}");
        assert!((t.origin[0] - 605_000.0).abs() < 1e-6 && (t.origin[1] - 6_070_000.0).abs() < 1e-6);
    }

    #[test]
    fn the_coordinate_fit_is_the_same_on_any_number_of_threads() {
        // 300 × 200 traces with rounded (centimetre) coordinates, so the sums are not exact in any order.
        let (il, xl) = (LineAxis::new(1, 1, 300), LineAxis::new(1, 1, 200));
        let records: Vec<Record> = (0..300 * 200)
            .map(|t| {
                let (i, j) = ((t / 200) as f64, (t % 200) as f64);
                let xy = [605_000.0 + 20.01 * i - 9.37 * j, 6_070_000.0 + 9.37 * i + 20.01 * j]
                    .map(|c| (c * 100.0).round() / 100.0);
                Record { iline: 1 + t / 200, xline: 1 + t % 200, offset: 0, xy, dead: false }
            })
            .collect();
        let fit_on = |threads| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            pool.install(|| fit_coordinates(&records, &il, &xl))
        };
        let (one, misfit_one) = fit_on(1);
        for threads in [2, 3, 8] {
            let (other, misfit) = fit_on(threads);
            assert_eq!(other, one, "{threads} threads");
            assert_eq!(misfit, misfit_one, "{threads} threads");
        }
    }
}
