//! A job split into parts (the ranks of a run over several GPUs, or shards): the record of a part for the
//! manifest, and the sum of the parts' products in a fixed order.

use crate::formulas::angular_frequency;
use crate::Plan;
use seis_core::stats::{PartRecord, RunStats};

/// The products of several parts, summed part after part in the order given: `parts[0] + parts[1] + …`,
/// box by box. The result depends on how the work was split only through float rounding.
pub fn sum_in_order(parts: Vec<Vec<Vec<f32>>>) -> Vec<Vec<f32>> {
    let mut parts = parts.into_iter();
    let mut sum = parts.next().unwrap_or_default();
    for part in parts {
        for (s, p) in sum.iter_mut().zip(part) {
            s.iter_mut().zip(p).for_each(|(a, b)| *a += b);
        }
    }
    sum
}

/// The record of part `index` of a job (a rank, or a shard counted from 1), which migrated `plan`'s share
/// on `backend` in `seconds`, for the manifest.
pub fn part_record(index: usize, plan: &Plan, backend: &str, seconds: f64, stats: &RunStats) -> PartRecord {
    let f = &plan.frequencies;
    let hz = |i: usize| angular_frequency(plan.band.first + i, plan.padded[2], plan.dt) / std::f64::consts::TAU;
    let frequencies_hz = if f.is_empty() { [0.0, 0.0] } else { [hz(f.start), hz(f.end - 1)] };
    PartRecord {
        index,
        host: host_name(),
        backend: backend.to_string(),
        frequencies: [f.start, f.end],
        frequencies_hz,
        bands: stats.frequency_bands,
        seconds,
        stages: stats.stages.iter().cloned().collect(),
        nonfinite_samples: stats.nonfinite_samples,
    }
}

/// This machine's name, for the records of parts.
pub fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "unknown".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_are_summed_box_by_box_in_order() {
        let parts =
            vec![vec![vec![1.0, 2.0], vec![3.0]], vec![vec![10.0, 20.0], vec![30.0]], vec![vec![0.5, 0.5], vec![0.5]]];
        assert_eq!(sum_in_order(parts), vec![vec![11.5, 22.5], vec![33.5]]);
        assert!(sum_in_order(Vec::new()).is_empty());
        // the order is the one given: (1e8 + 1) − 1e8 loses the 1 in float, 1e8 − 1e8 + 1 does not
        let a = sum_in_order(vec![vec![vec![1e8]], vec![vec![1.0]], vec![vec![-1e8]]]);
        let b = sum_in_order(vec![vec![vec![1e8]], vec![vec![-1e8]], vec![vec![1.0]]]);
        assert_eq!((a[0][0], b[0][0]), (0.0, 1.0));
    }
}
