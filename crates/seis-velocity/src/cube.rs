//! A velocity cube from a SEG-Y or HDF5 file, onto the seismic's traces and the image's depth axis.
//!
//! The file's trace axis is two-way time or depth as its headers say (seisimage's depth marker in SEG-Y, the
//! axis of an HDF5 volume), unless `velocity.domain` says otherwise: other software stores depth models in
//! SEG-Y's time fields (a "10000 µs" interval for 10 m, or 10 ft with `depth_unit = "ft"`). The cube is cut
//! to the lines the seismic needs and mixed onto its traces ([`super::lateral`]); each trace is then
//! converted to interval velocity in depth ([`super::convert`]). A cube of interval velocities in depth keeps
//! its own depth axis; any other cube is sampled on the image's depth step from the surface down to its
//! deepest converted sample.

use std::path::Path;

use rayon::prelude::*;

use super::convert::{interval_in_depth, Picks};
use super::lateral::{apply_cube_taps, cube_taps, Locate, Outside};
use super::model::{Interpolation, VelocityGrid, VelocityModel};
use super::sanity;
use super::units::{Reading, VelocityType, VerticalDomain};
use seis_core::alloc::try_vec;
use seis_core::error::{Error, Result};
use seis_core::volume::{Domain, Geometry, SampleAxis, VolumeReader};

/// A cube read and converted.
pub struct CubeModel {
    pub model: VelocityModel,
    /// The shallowest depth (m) down to which every trace is given.
    pub given_to: f64,
    /// What was done, for `validate`.
    pub steps: Vec<String>,
    /// Seismic lines outside the cube that hold its nearest edge (`velocity.outside = "hold"`): a warning.
    pub held: Option<String>,
}

/// How to read a cube besides its file: what its numbers are, how to lay it on the seismic, and the checks.
pub struct CubeReading {
    /// The vertical domain to use instead of the file's (`velocity.domain`).
    pub domain: Option<VerticalDomain>,
    pub reading: Reading,
    pub interpolation: Interpolation,
    pub locate: Locate,
    /// Seismic traces outside the cube: refused, or holding its nearest edge.
    pub outside: Outside,
    pub range: [f64; 2],
    /// The image's depth step (m).
    pub dz: f64,
    /// A converted cube is sampled no deeper than this (m): see [`super::depth_cap`].
    pub depth_cap: f64,
}

/// Read the cube of `reader` onto the seismic grid `seismic`. Errors are about `velocity.path` and name
/// the file.
pub fn read_cube(reader: &dyn VolumeReader, seismic: &Geometry, how: &CubeReading) -> Result<CubeModel> {
    // Over 100 lines: the cube's checks against the seismic grid, then its conversion block by block, share
    // the grids and units worked out at the start.
    let name = reader.describe();
    let at_path = |message: String| Error::at_key("velocity.path", format!("{name}: {message}"));
    let g = reader.geometry();
    let file_domain = match g.samples.domain {
        Domain::Time => VerticalDomain::Time,
        Domain::Depth => VerticalDomain::Depth,
    };
    let reading = Reading { domain: how.domain.unwrap_or(file_domain), ..how.reading };
    let mut steps = vec![format!("{name}: {} traces of {} samples", g.n_traces(), g.samples.len)];
    if reading.domain != file_domain {
        steps.push(format!(
            "its trace axis read as {} (velocity.domain), not as the file's {}",
            match reading.domain {
                VerticalDomain::Time => "two-way time in ms",
                VerticalDomain::Depth => "depth",
            },
            g.samples.domain.axis_name()
        ));
    }
    let (taps, held) =
        cube_taps(g, seismic, how.locate, how.outside).map_err(|e| at_path(e).or_key("velocity.locate"))?;
    let held = held.map(|why| format!("{name}: {why}"));
    let same_grid = g.ilines == seismic.ilines && g.xlines == seismic.xlines;
    if !same_grid {
        steps.push(format!(
            "laid on the seismic's {} traces by {}, bilinearly, from inlines {}..={} and crosslines {}..={} of the \
             model",
            seismic.n_traces(),
            match how.locate {
                Locate::Lines => "line numbers",
                Locate::Coordinates => "map coordinates",
            },
            g.ilines.value(taps.read.il.start),
            g.ilines.value(taps.read.il.end - 1),
            g.xlines.value(taps.read.xl.start),
            g.xlines.value(taps.read.xl.end - 1)
        ));
    }
    let ns = g.samples.len;
    let mut values: Vec<f32> = try_vec(taps.read.len(), Path::new(&name), "the velocity cube")?;
    reader.read_box(&taps.read, &mut values)?;

    // The values as given, in m/s, each checked where it lies in the model.
    let factor = how.reading.unit.factor();
    let read_nx = taps.read.xl.len();
    let vertical = |k: usize| format!("{} {}", g.samples.value(k), reading.vertical_unit());
    let bad = values.par_chunks(ns).enumerate().find_map_first(|(t, tr)| {
        tr.iter().enumerate().find_map(|(k, &v)| {
            sanity::check_value(v as f64 * factor, how.range, how.reading.unit).err().map(|why| {
                let (i, j) = (taps.read.il.start + t / read_nx, taps.read.xl.start + t % read_nx);
                format!("at inline {}, crossline {}, {}: {why}", g.ilines.value(i), g.xlines.value(j), vertical(k))
            })
        })
    });
    if let Some(message) = bad {
        return Err(at_path(message).or_key("velocity.unit"));
    }
    let traces = if same_grid && taps.read == g.full_box() { values } else { apply_cube_taps(&values, &taps, ns) };
    let lateral = |samples: SampleAxis| Geometry { samples, ..seismic.clone() };

    if reading.domain == VerticalDomain::Depth && reading.kind == VelocityType::Interval {
        let depth_factor = reading.depth_unit.factor();
        let axis = SampleAxis {
            origin: g.samples.origin * depth_factor,
            step: g.samples.step * depth_factor,
            len: ns,
            domain: Domain::Depth,
        };
        let mut data = traces;
        data.par_iter_mut().for_each(|v| *v = (*v as f64 * factor) as f32);
        let grid = VelocityGrid::new(lateral(axis), data, &name).map_err(|e| at_path(e.to_string()))?;
        return Ok(CubeModel { model: VelocityModel::Grid(grid), given_to: axis.last(), steps, held });
    }

    // Each trace converted on its own, then sampled on the image's depth step.
    let at: Vec<f64> = (0..ns).map(|k| reading.vertical_si(g.samples.value(k))).collect();
    let nx = seismic.xlines.len;
    let converted: Vec<_> = traces
        .par_chunks(ns)
        .enumerate()
        .map(|(t, tr)| {
            let velocity: Vec<f64> = tr.iter().map(|&v| v as f64 * factor).collect();
            let name = |k: usize| {
                format!(
                    "{} (the seismic's inline {}, crossline {})",
                    vertical(k),
                    seismic.ilines.value(t / nx),
                    seismic.xlines.value(t % nx)
                )
            };
            interval_in_depth(&Picks { at: &at, velocity: &velocity }, &reading, how.interpolation, how.range, &name)
        })
        .collect::<std::result::Result<_, String>>()
        .map_err(at_path)?;
    let deepest = converted.iter().map(|c| c.given_to).fold(0.0, f64::max).min(how.depth_cap);
    let given_to = converted.iter().map(|c| c.given_to).fold(f64::INFINITY, f64::min);
    let levels = ((deepest / how.dz).ceil() as usize + 1).max(2);
    let axis = SampleAxis { origin: 0.0, step: how.dz, len: levels, domain: Domain::Depth };
    steps.push(format!(
        "{} converted to interval velocity in depth, sampled every {} m down to {} m",
        reading.describe(),
        how.dz,
        axis.last()
    ));
    let grid = VelocityGrid::from_fn(lateral(axis), &name, |t| {
        let table = &converted[t].table;
        move |k| table.at(axis.value(k)) as f32
    })
    .map_err(|e| at_path(e.to_string()))?;
    Ok(CubeModel { model: VelocityModel::Grid(grid), given_to, steps, held })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::{DepthUnit, TimeUnit, VelocityUnit};
    use seis_core::volume::{LineAxis, Volume};

    fn how(domain: Option<VerticalDomain>, kind: VelocityType, unit: VelocityUnit) -> CubeReading {
        CubeReading {
            domain,
            reading: Reading {
                kind,
                unit,
                domain: VerticalDomain::Depth,
                depth_unit: DepthUnit::Metres,
                time_unit: TimeUnit::Milliseconds,
            },
            interpolation: Interpolation::Linear,
            locate: Locate::Lines,
            outside: Outside::Refuse,
            range: [300.0, 8000.0],
            dz: 10.0,
            depth_cap: 1e4,
        }
    }

    fn seismic() -> Geometry {
        let t = SampleAxis { origin: 0.0, step: 4.0, len: 50, domain: Domain::Time };
        Geometry::regular(LineAxis::new(10, 1, 2), LineAxis::new(100, 2, 3), t)
    }

    #[test]
    fn a_depth_cube_in_km_per_s_keeps_its_axis() {
        let depth = SampleAxis { origin: 0.0, step: 100.0, len: 3, domain: Domain::Depth };
        let mut cube = Volume::zeros(Geometry { samples: depth, ..seismic() });
        for tr in cube.data.chunks_mut(3) {
            tr.copy_from_slice(&[1.5, 2.0, 3.0]);
        }
        let c = read_cube(&cube, &seismic(), &how(None, VelocityType::Interval, VelocityUnit::KilometresPerSecond))
            .unwrap();
        assert_eq!(c.model.range(), (1500.0, 3000.0));
        assert_eq!(c.model.trace_velocity(3, 150.0), 2500.0);
        assert_eq!(c.given_to, 200.0);
        // The same numbers read as m/s are refused, with the unit hint and the place.
        let e = read_cube(&cube, &seismic(), &how(None, VelocityType::Interval, VelocityUnit::MetresPerSecond))
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("velocity.path") && e.contains("inline 10, crossline 100, 0 m") && e.contains("km/s"),
            "{e}"
        );
    }

    #[test]
    fn a_time_cube_of_rms_velocities_becomes_interval_velocity_in_depth() {
        // Two layers: 2000 m/s for 200 ms (200 m), then 3000 m/s: RMS at 400 ms is sqrt((4e6 + 9e6) / 2).
        let time = SampleAxis { origin: 0.0, step: 200.0, len: 3, domain: Domain::Time };
        let mut cube = Volume::zeros(Geometry { samples: time, ..seismic() });
        let rms2 = ((2000f64.powi(2) + 3000f64.powi(2)) / 2.0).sqrt() as f32;
        for tr in cube.data.chunks_mut(3) {
            tr.copy_from_slice(&[2000.0, 2000.0, rms2]);
        }
        let c = read_cube(&cube, &seismic(), &how(None, VelocityType::Rms, VelocityUnit::MetresPerSecond)).unwrap();
        assert!((c.given_to - 500.0).abs() < 1e-3, "{}", c.given_to);
        assert_eq!(c.model.trace_velocity(0, 150.0), 2000.0);
        assert!((c.model.trace_velocity(5, 300.0) - 3000.0).abs() < 0.5);
        // Read as depth (the file's time fields holding metres), the same numbers are a different model.
        let d = read_cube(
            &cube,
            &seismic(),
            &how(Some(VerticalDomain::Depth), VelocityType::Interval, VelocityUnit::MetresPerSecond),
        )
        .unwrap();
        assert_eq!(d.model.trace_velocity(0, 300.0), 0.5 * (2000.0 + rms2 as f64));
        assert!(d.steps.iter().any(|s| s.contains("velocity.domain")));
    }
}
