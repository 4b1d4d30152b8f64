//! What a benchmark measures and the input it measures on: the synthetic volume, written as IEEE and IBM
//! SEG-Y, and the job file a user would write for it.

use std::path::{Path, PathBuf};

use crate::error::Result;
use crate::imaging::Method;
use crate::io::segy::{SegyWriteOptions, WriteFormat};
use crate::io::{FileFormat, VolumeSink, WriteOptions};
use crate::job::{Backend, Job};
use crate::progress::Progress;
use crate::synth::{Event, Medium, Model, ModelSpec};
use crate::volume::VolumeReader;

/// What to measure.
#[derive(Clone, Debug)]
pub struct BenchConfig {
    pub size: [usize; 3],
    pub method: Method,
    pub backend: Backend,
    pub depth_steps: usize,
    pub fmax: f64,
    pub workdir: PathBuf,
    /// CPU thread counts to measure scaling over (empty: 1, 2, 4, … all cores).
    pub threads: Vec<usize>,
    /// Also time a velocity scan of this many members (0 or 1: none), against one ingest plus that many
    /// migrations.
    pub scales: usize,
}

/// Diffractors at three depths and two flat reflectors, in a v(z) gradient.
pub(super) fn model_spec(cfg: &BenchConfig) -> ModelSpec {
    let [ni, nx, nt] = cfg.size;
    let bin = 12.5;
    let t_end = (nt - 1) as f64 * 0.004;
    let (xc, yc) = ((ni - 1) as f64 * bin / 2.0, (nx - 1) as f64 * bin / 2.0);
    let z = |f: f64| f * t_end * 2000.0 / 2.0;
    ModelSpec {
        ilines: ni,
        xlines: nx,
        samples: nt,
        dt_ms: 4.0,
        bin_m: [bin, bin],
        medium: Medium::Constant { velocity: 2000.0 },
        peak_hz: 25.0,
        events: vec![
            Event::Diffractor { x: xc, y: yc, z: z(0.3), amplitude: 1.0 },
            Event::Diffractor { x: xc * 0.6, y: yc * 1.3, z: z(0.5), amplitude: 1.0 },
            Event::Diffractor { x: xc * 1.2, y: yc * 0.7, z: z(0.7), amplitude: 1.0 },
            Event::Reflector { z: z(0.4), amplitude: 0.5 },
            Event::Reflector { z: z(0.8), amplitude: 0.5 },
        ],
        noise: None,
    }
}

pub(super) fn write_model(model: &Model, path: &Path, format: WriteFormat, progress: &dyn Progress) -> Result<()> {
    let g = model.geometry().clone();
    let opts = WriteOptions { segy: SegyWriteOptions { format, ..Default::default() }, ..Default::default() };
    let mut sink = VolumeSink::create(FileFormat::Segy, path, &g, &opts)?;
    let [ni, nx, ns] = g.shape();
    let block = ((64usize << 20) / 4 / (nx * ns)).clamp(1, ni);
    let mut buf = vec![0.0f32; block * nx * ns];
    progress.begin("synthesising", ni as u64);
    for il in (0..ni).step_by(block) {
        let n = block.min(ni - il);
        let b = crate::volume::IndexBox { il: il..il + n, xl: 0..nx, s: 0..ns };
        model.read_box(&b, &mut buf[..n * nx * ns])?;
        sink.write_inlines(il, g.shape(), &buf[..n * nx * ns])?;
        progress.advance(n as u64);
    }
    progress.finish();
    sink.finish()?;
    Ok(())
}

/// The benchmark's job file, as a user would write it (and parsed by the same code).
pub(super) fn bench_job(cfg: &BenchConfig, input: &Path) -> Result<Job> {
    let zmax = cfg.depth_steps as f64 * 10.0;
    let velocity = match cfg.method {
        Method::Stolt => "kind = \"constant\"\nvelocity = 2000.0".to_string(),
        _ => format!("kind = \"table\"\ndepths = [0.0, {}]\nvelocities = [1800.0, 3200.0]", zmax.max(10.0)),
    };
    let [ni, nx, _] = cfg.size;
    let (il, xl) = (1 + ni as i64 / 2, 1 + nx as i64 / 2);
    let slice = |f: f64| (zmax * f / 10.0).round() * 10.0;
    let text = format!(
        r#"# written by seisimage bench
[input]
path = {input:?}

[window]
lateral_pad = 0   # the k grid is the volume's, as in the figures the targets come from

[velocity]
{velocity}

[imaging]
method = "{method}"
dz = 10.0
zmax = {zmax:.1}
fmax = {fmax:.1}

[compute]
backend = "{backend}"

[output]
dir = {dir:?}
inlines = [{il}]
crosslines = [{xl}]
depth_slices = [{z1:.1}, {z2:.1}]

[[output.roi]]
name = "centre"
iline = [{il0}, {il1}]
xline = [{xl0}, {xl1}]
formats = ["hdf5"]
"#,
        input = input.display().to_string(),
        method = cfg.method.name(),
        fmax = cfg.fmax,
        backend = format!("{:?}", cfg.backend).to_lowercase(),
        dir = cfg.workdir.join("products").display().to_string(),
        z1 = slice(0.3),
        z2 = slice(0.6),
        il0 = (il - 32).max(1),
        il1 = (il + 31).min(ni as i64),
        xl0 = (xl - 32).max(1),
        xl1 = (xl + 31).min(nx as i64),
    );
    let path = cfg.workdir.join("bench.toml");
    crate::io::output::write_atomic(&path, text.as_bytes())?;
    Job::parse(&text, &path, &[])
}
