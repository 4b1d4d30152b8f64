//! `seisimage synth`: a synthetic volume with known answers, written as SEG-Y or HDF5 a block of inlines at
//! a time (so benchmark-sized volumes never need more memory than one block), plus a truth file.

use std::path::{Path, PathBuf};

use seisimage::io::segy::{SegyWriteOptions, WriteFormat};
use seisimage::io::{FileFormat, VolumeSink, WriteOptions};
use seisimage::progress::Progress;
use seisimage::synth::folded::{FoldedModel, FoldedSpec};
use seisimage::synth::{Event, Layer, Medium, Model, ModelSpec, Noise};
use seisimage::volume::{IndexBox, VolumeReader};

use super::Reporting;
use crate::cli::{SegyOutFormat, SynthArgs, SynthModelKind};

/// Values generated and written per block.
const BLOCK_VALUES: usize = 16 << 20;

pub fn run(args: &SynthArgs, reporting: Reporting) -> anyhow::Result<()> {
    seisimage::io::files::check_output_file(&args.output)?;
    seisimage::io::files::check_output_file(&truth_path(&args.output))?;
    let (model, truth): (Box<dyn VolumeReader>, serde_json::Value) = if args.model == SynthModelKind::Folded {
        if args.layers.is_some() || args.noise > 0.0 {
            anyhow::bail!("--model folded takes a constant --velocity and no --layers or --noise");
        }
        let [ilines, xlines, samples] = args.size;
        let spec = FoldedSpec {
            ilines,
            xlines,
            samples,
            dt_ms: args.dt,
            bin_m: args.bin,
            velocity: args.velocity,
            peak_hz: args.frequency,
        };
        let model = FoldedModel::new(spec)?;
        let truth = serde_json::json!({ "model": model.spec(), "truth": model.truth() });
        (Box::new(model), truth)
    } else {
        let model = Model::new(spec(args)?)?;
        let truth = serde_json::json!({ "model": model.spec(), "truth": model.truth() });
        (Box::new(model), truth)
    };
    let format = match seisimage::io::detect_format(&args.output, FileFormat::Auto) {
        Ok(FileFormat::Hdf5) => FileFormat::Hdf5,
        Ok(FileFormat::Segy) => FileFormat::Segy,
        _ => anyhow::bail!("{}: name the output .sgy or .h5", args.output.display()),
    };
    let progress = reporting.progress();
    let path = write(model.as_ref(), &args.output, format, args.sample_format, progress.as_ref())?;
    let truth_path = truth_path(&path);
    seisimage::io::output::write_atomic(&truth_path, serde_json::to_string_pretty(&truth)?.as_bytes())?;
    tracing::info!("wrote {} and {}", path.display(), truth_path.display());
    Ok(())
}

/// `NAME.truth.json` beside `NAME.sgy`.
fn truth_path(volume: &Path) -> PathBuf {
    let stem = volume.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    volume.with_file_name(format!("{stem}.truth.json"))
}

fn spec(a: &SynthArgs) -> anyhow::Result<ModelSpec> {
    let [ni, nx, ns] = a.size;
    let medium = match &a.layers {
        None => Medium::Constant { velocity: a.velocity },
        Some(text) => Medium::Layered { layers: parse_layers(text)? },
    };
    let t_end = (ns - 1) as f64 * a.dt / 1000.0;
    let v0 = match &medium {
        Medium::Constant { velocity } => *velocity,
        Medium::Layered { layers } => layers[0].velocity,
    };
    // Events sit at 40 % of the record (in depth through the top velocity), in the middle of the grid.
    let (xc, yc) = ((ni - 1) as f64 / 2.0 * a.bin, (nx - 1) as f64 / 2.0 * a.bin);
    let z = 0.4 * t_end * v0 / 2.0;
    let events = match a.model {
        SynthModelKind::Diffractor => vec![Event::Diffractor { x: xc, y: yc, z, amplitude: 1.0 }],
        SynthModelKind::Dip => {
            vec![Event::Plane { x: xc, y: yc, z, dip_deg: a.dip, azimuth_deg: 90.0, amplitude: 1.0 }]
        }
        SynthModelKind::Spike => {
            vec![Event::Spike { il: ni / 2, xl: nx / 2, t_ms: 0.4 * t_end * 1000.0, amplitude: 1.0 }]
        }
        SynthModelKind::Layers => {
            [0.25, 0.45, 0.65].iter().map(|f| Event::Reflector { z: f * t_end * v0 / 2.0, amplitude: 1.0 }).collect()
        }
        SynthModelKind::Folded => unreachable!("made by FoldedModel"),
    };
    let noise = (a.noise > 0.0).then_some(Noise { rms: a.noise, seed: a.seed });
    Ok(ModelSpec {
        ilines: ni,
        xlines: nx,
        samples: ns,
        dt_ms: a.dt,
        bin_m: [a.bin, a.bin],
        medium,
        peak_hz: a.frequency,
        events,
        noise,
    })
}

/// `0:1500,400:2200` → layers with tops 0 m and 400 m.
fn parse_layers(text: &str) -> anyhow::Result<Vec<Layer>> {
    text.split(',')
        .map(|item| {
            let (z, v) =
                item.split_once(':').ok_or_else(|| anyhow::anyhow!("--layers: {item:?} is not DEPTH:VELOCITY"))?;
            Ok(Layer {
                top: z.trim().parse().map_err(|_| anyhow::anyhow!("--layers: bad depth in {item:?}"))?,
                velocity: v.trim().parse().map_err(|_| anyhow::anyhow!("--layers: bad velocity in {item:?}"))?,
            })
        })
        .collect()
}

fn write(
    model: &dyn VolumeReader,
    path: &Path,
    format: FileFormat,
    sample_format: SegyOutFormat,
    progress: &dyn Progress,
) -> anyhow::Result<PathBuf> {
    let g = model.geometry().clone();
    let [ni, nx, ns] = g.shape();
    let format_code = match sample_format {
        SegyOutFormat::Ieee => WriteFormat::Ieee,
        SegyOutFormat::Ibm => WriteFormat::Ibm,
    };
    let text = vec![format!("SYNTHETIC VOLUME MADE BY SEISIMAGE {}", env!("CARGO_PKG_VERSION"))];
    let opts = WriteOptions {
        segy: SegyWriteOptions { format: format_code, text, ..Default::default() },
        ..Default::default()
    };
    let mut sink = VolumeSink::create(format, path, &g, &opts)?;
    let block = (BLOCK_VALUES / (nx * ns)).clamp(1, ni);
    let mut buf: Vec<f32> = seisimage::alloc::try_vec(block * nx * ns, path, "the samples of one block of inlines")?;
    progress.begin("synthesising", ni as u64);
    let mut il = 0;
    while il < ni {
        seisimage::cancel::CancelToken::process().check()?;
        let n = block.min(ni - il);
        let data = &mut buf[..n * nx * ns];
        model.read_box(&IndexBox { il: il..il + n, xl: 0..nx, s: 0..ns }, data)?;
        sink.write_inlines(il, g.shape(), data)?;
        progress.advance(n as u64);
        il += n;
    }
    progress.finish();
    Ok(sink.finish()?)
}
