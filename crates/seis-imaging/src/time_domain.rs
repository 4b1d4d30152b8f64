//! Products in two-way time: boxes of the depth image converted with the velocity model that migrated
//! them, so that interpreters can tie wells and compare with time-migrated volumes.
//!
//! The two-way time of depth level `k` of a trace is the sum over the depth steps above it of
//! `2 dz / v`, with `v` the model's velocity at mid-step: the same velocities the migration stepped with,
//! so a reflector the migration put at depth `z` comes back at the time it had in the input. Each trace
//! of the box is then read at the times of the output axis (the input's sample interval unless
//! `output.time_step_ms` says otherwise), linearly between its depth levels; times outside the box are
//! zero. The conversion runs on the host after the depth box comes back from the engine: the box is small
//! and the time axis of every trace is different.

use std::ops::Range;

use rayon::prelude::*;

use seis_core::error::{Error, Result};
use seis_core::volume::{Domain, Geometry, IndexBox, SampleAxis};
use seis_velocity::VelocityModel;

/// How one product's depth box becomes a box in time.
#[derive(Debug, PartialEq)]
pub struct TimeForm {
    /// The output's time axis (ms).
    pub axis: SampleAxis,
    /// `[trace][level]`: the two-way time (ms) of each depth level of the box, for each trace of the box.
    times: Vec<f32>,
    levels: usize,
}

/// Two-way times (ms) of depth levels `0..levels` of trace `trace` of the image grid.
fn trace_times(model: &VelocityModel, trace: usize, dz: f64, levels: usize) -> Vec<f64> {
    let mut t = Vec::with_capacity(levels);
    let mut now = 0.0;
    for k in 0..levels {
        t.push(now);
        now += 2000.0 * dz / model.trace_velocity(trace, (k as f64 + 0.5) * dz);
    }
    t
}

/// Per trace of `region` (of the image grid `image`), the two-way times of its depth levels: computed once
/// when the model does not vary from trace to trace.
fn box_times(model: &VelocityModel, image: &Geometry, region: &IndexBox) -> Vec<f32> {
    let dz = image.samples.step;
    let nx = image.xlines.len;
    let traces: Vec<usize> = region.il.clone().flat_map(|i| region.xl.clone().map(move |j| i * nx + j)).collect();
    let column = |trace: usize| -> Vec<f32> {
        trace_times(model, trace, dz, region.s.end)[region.s.clone()].iter().map(|&t| t as f32).collect()
    };
    match model {
        VelocityModel::Grid(_) => traces.par_iter().flat_map_iter(|&t| column(t)).collect(),
        _ => {
            let one = column(0);
            traces.iter().flat_map(|_| one.iter().copied()).collect()
        }
    }
}

impl TimeForm {
    /// The time form of a box of the depth image: its time axis runs, every `step` ms, from the earliest
    /// time of its top level to the latest time of its bottom level over its traces.
    pub fn of_box(model: &VelocityModel, image: &Geometry, region: &IndexBox, step: f64) -> TimeForm {
        let times = box_times(model, image, region);
        let levels = region.s.len();
        let top = times.par_chunks(levels).map(|t| t[0] as f64).reduce(|| f64::INFINITY, f64::min);
        let bottom = times.par_chunks(levels).map(|t| t[levels - 1] as f64).reduce(|| 0.0, f64::max);
        let origin = (top / step - 1e-6).ceil() * step;
        let len = ((bottom - origin) / step + 1e-6).floor().max(0.0) as usize + 1;
        TimeForm { axis: SampleAxis { origin, step, len, domain: Domain::Time }, times, levels }
    }

    /// The same conversion onto another time axis (of the same step): samples outside the box are zero.
    pub fn on_axis(self, axis: SampleAxis) -> TimeForm {
        TimeForm { axis, ..self }
    }

    /// The depth levels that hold two-way time `twt` (ms) at every trace of the image (a time slice's box
    /// spans them). An error of the setting `key` when some trace's image ends above that time.
    pub fn slice_levels(model: &VelocityModel, image: &Geometry, twt: f64, key: &str) -> Result<Range<usize>> {
        let dz = image.samples.step;
        let nz = image.samples.len;
        let nx = image.xlines.len;
        let traces = if matches!(model, VelocityModel::Grid(_)) { image.n_traces() } else { 1 };
        // The level just above twt at each trace, or the trace whose image ends above it.
        let brackets: Vec<std::result::Result<usize, (usize, f64)>> = (0..traces)
            .into_par_iter()
            .map(|trace| {
                let t = trace_times(model, trace, dz, nz);
                match t.partition_point(|&x| x <= twt) {
                    k if k == nz && t[nz - 1] < twt => Err((trace, t[nz - 1])),
                    k => Ok(k.saturating_sub(1)),
                }
            })
            .collect();
        if let Some(&Err((trace, end))) = brackets.iter().find(|b| b.is_err()) {
            return Err(Error::at_key(
                key,
                format!(
                    "time slice {twt} ms is below the image at inline {}, crossline {}, which ends at {end:.1} ms \
                     ({} m): raise imaging.zmax",
                    image.ilines.value(trace / nx),
                    image.xlines.value(trace % nx),
                    image.samples.last()
                ),
            ));
        }
        let levels: Vec<usize> = brackets.into_iter().map(|b| b.expect("checked")).collect();
        let first = *levels.iter().min().expect("a trace");
        let last = (*levels.iter().max().expect("a trace") + 2).min(nz);
        Ok(first..last)
    }

    /// The two-way time (ms) of depth `z` m at the trace of `region` where it is latest: a product in time
    /// of that box is, at every trace, past depth `z` after that time.
    pub fn latest_time_at_depth(model: &VelocityModel, image: &Geometry, region: &IndexBox, z: f64) -> f64 {
        let dz = image.samples.step;
        let above = (z / dz).floor().max(0.0) as usize;
        let time_at = |trace: usize| {
            let t = trace_times(model, trace, dz, above + 2);
            t[above] + (z / dz - above as f64) * (t[above + 1] - t[above])
        };
        let nx = image.xlines.len;
        match model {
            VelocityModel::Grid(_) => region
                .il
                .clone()
                .into_par_iter()
                .flat_map_iter(|i| region.xl.clone().map(move |j| time_at(i * nx + j)))
                .reduce(|| 0.0, f64::max),
            _ => time_at(0),
        }
    }

    /// The form of a time slice at `twt` ms cut from `region` (which holds that time at every trace).
    pub fn at_time(model: &VelocityModel, image: &Geometry, region: &IndexBox, twt: f64) -> TimeForm {
        let times = box_times(model, image, region);
        let axis = SampleAxis { origin: twt, step: 1.0, len: 1, domain: Domain::Time };
        TimeForm { axis, times, levels: region.s.len() }
    }

    /// Values of the output: each trace of `depth` (the box, `[trace][level]`) read at the output times.
    pub fn convert(&self, depth: &[f32]) -> Vec<f32> {
        self.convert_with(depth, false)
    }

    /// [`TimeForm::convert`] for a property of the medium rather than an image (the velocity): times
    /// outside a trace's box take the value at its nearer end instead of zero, as the medium goes on.
    pub fn convert_holding(&self, depth: &[f32]) -> Vec<f32> {
        self.convert_with(depth, true)
    }

    fn convert_with(&self, depth: &[f32], hold: bool) -> Vec<f32> {
        let (levels, n) = (self.levels, self.axis.len);
        let mut out = vec![0.0f32; depth.len() / levels.max(1) * n];
        out.par_chunks_mut(n).zip(depth.par_chunks(levels).zip(self.times.par_chunks(levels))).for_each(
            |(o, (values, times))| {
                let mut k = 0;
                for (m, o) in o.iter_mut().enumerate() {
                    let t = self.axis.value(m) as f32;
                    if t < times[0] || t > times[levels - 1] {
                        if hold {
                            *o = if t < times[0] { values[0] } else { values[levels - 1] };
                        }
                        continue;
                    }
                    while k + 1 < levels && times[k + 1] < t {
                        k += 1;
                    }
                    *o = if k + 1 == levels {
                        values[k]
                    } else {
                        let w = (t - times[k]) / (times[k + 1] - times[k]);
                        values[k] + w * (values[k + 1] - values[k])
                    };
                }
            },
        );
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use seis_core::volume::LineAxis;
    use seis_velocity::{Interpolation, VelocityTable};

    fn image(nz: usize) -> Geometry {
        let depth = SampleAxis { origin: 0.0, step: 5.0, len: nz, domain: Domain::Depth };
        Geometry::regular(LineAxis::new(1, 1, 3), LineAxis::new(1, 1, 2), depth)
    }

    #[test]
    fn a_two_layer_section_lands_at_its_vertical_times() {
        // 2000 m/s to 100 m (100 ms), then 2500 m/s: 200 m is at 100 + 80 = 180 ms.
        let v = VelocityModel::Table(
            VelocityTable::new(vec![0.0, 100.0], vec![2000.0, 2500.0], Interpolation::Step).unwrap(),
        );
        let g = image(41);
        let region = IndexBox { il: 1..2, xl: 0..2, s: 0..41 };
        let f = TimeForm::of_box(&v, &g, &region, 4.0);
        assert_eq!((f.axis.origin, f.axis.len), (0.0, 46)); // 0..=180 ms every 4 ms
                                                            // A spike at 200 m on both traces, a ramp in depth: read back in time.
        let mut depth = vec![0.0f32; 82];
        for tr in 0..2 {
            for k in 0..41 {
                depth[tr * 41 + k] = k as f32;
            }
        }
        let t = f.convert(&depth);
        assert_eq!(t.len(), 2 * 46);
        // 100 ms is 100 m (level 20); 140 ms is 150 m (level 30); 180 ms is level 40.
        assert!((t[25] - 20.0).abs() < 1e-5 && (t[35] - 30.0).abs() < 1e-4 && (t[45] - 40.0).abs() < 1e-4, "{t:?}");
        assert_eq!(t[46 + 25], t[25]);
        // A slice at 140 ms: the levels around 150 m.
        let levels = TimeForm::slice_levels(&v, &g, 140.0, "output.time_slices.0").unwrap();
        assert_eq!(levels, 30..32);
        let s = TimeForm::at_time(&v, &g, &IndexBox { il: 0..3, xl: 0..2, s: levels }, 140.0);
        let values: Vec<f32> = (0..6).flat_map(|_| [30.0f32, 31.0]).collect();
        assert_eq!(s.convert(&values), vec![30.0; 6]);
        let e = TimeForm::slice_levels(&v, &g, 500.0, "output.time_slices.0").unwrap_err().to_string();
        assert!(e.contains("below the image") && e.contains("180.0 ms"), "{e}");
        // 150 m is 100 + 40 ms; 102.5 m lies halfway through the first step at 2500 m/s, of 4 ms.
        let at = |z| TimeForm::latest_time_at_depth(&v, &g, &region, z);
        assert!((at(150.0) - 140.0).abs() < 1e-9 && (at(102.5) - 102.0).abs() < 1e-9, "{} {}", at(150.0), at(102.5));
    }
}
