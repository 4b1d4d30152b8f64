//! `seisimage convert`: SEG-Y ↔ HDF5 (and → NPY), optionally cut to a box, streamed a block of inlines at a
//! time so that a volume larger than memory converts in bounded memory.

use std::path::Path;

use anyhow::Context;

use seisimage::io::hdf5::Hdf5WriteOptions;
use seisimage::io::segy::{SegyWriteOptions, WriteFormat};
use seisimage::io::{self, detect_format, FileFormat, InputOptions, VolumeSink, WriteOptions};
use seisimage::volume::{IndexBox, ValueBox};

use super::{segy_options, Reporting};
use crate::cli::{ConvertArgs, SegyOutFormat};

/// Values read and written per step.
const BLOCK_VALUES: usize = 16 << 20;

fn write_options(args: &ConvertArgs) -> WriteOptions {
    let format = match args.sample_format {
        SegyOutFormat::Ieee => WriteFormat::Ieee,
        SegyOutFormat::Ibm => WriteFormat::Ibm,
    };
    WriteOptions {
        segy: SegyWriteOptions {
            format,
            text: vec![format!("CONVERTED BY SEISIMAGE {} FROM {}", env!("CARGO_PKG_VERSION"), file_name(&args.input))],
            ..Default::default()
        },
        hdf5: Hdf5WriteOptions { dataset: args.dataset.clone(), compression: args.compress, ..Default::default() },
    }
}

fn file_name(p: &Path) -> String {
    p.file_name().map(|n| n.to_string_lossy().to_uppercase()).unwrap_or_default()
}

/// The output format: `--to`, else the output's extension.
fn output_format(args: &ConvertArgs) -> anyhow::Result<FileFormat> {
    if args.to != FileFormat::Auto {
        return Ok(args.to);
    }
    let ext = args.output.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
    match ext.as_deref() {
        Some("sgy" | "segy" | "seg") => Ok(FileFormat::Segy),
        Some("h5" | "hdf5" | "hdf" | "he5") => Ok(FileFormat::Hdf5),
        Some("npy") => Ok(FileFormat::Npy),
        _ => Err(seisimage::Error::Request(format!(
            "cannot tell the output format from {:?}: use an extension .sgy, .h5 or .npy, or --to",
            args.output.display()
        ))
        .into()),
    }
}

pub fn run(args: &ConvertArgs, reporting: Reporting) -> anyhow::Result<()> {
    let out_format = output_format(args)?;
    let opts = InputOptions::from_parts(
        &segy_options(&args.segy),
        &seisimage::io::hdf5::Hdf5Options { dataset: args.dataset.clone() },
        args.format,
    );
    if detect_format(&args.input, args.format)? == FileFormat::Npy {
        anyhow::bail!("{}: NPY has no axes to convert from; convert from SEG-Y or HDF5", args.input.display());
    }
    if seisimage::io::files::replaced_input(&args.output, &[("the input", args.input.as_path())]).is_some() {
        return Err(seisimage::Error::Request(format!(
            "{} is the input {} (the same file): writing it would replace the volume being read; choose another \
             output file",
            args.output.display(),
            args.input.display()
        ))
        .into());
    }
    let src = io::open(&args.input, &opts)?;
    let g = src.geometry();
    let cut = g.index_box(&ValueBox { iline: args.iline, xline: args.xline, sample: args.samples })?;
    let out_geometry = g.subset(&cut);
    let [n_il, n_xl, ns] = cut.shape();
    let block_il = (BLOCK_VALUES / (n_xl * ns).max(1)).clamp(1, n_il);

    let mut sink = VolumeSink::create(out_format, &args.output, &out_geometry, &write_options(args))
        .with_context(|| format!("cannot create {}", args.output.display()))?;
    let progress = reporting.progress();
    progress.begin("converting", n_il as u64);
    let mut buf: Vec<f32> = seisimage::io::files::try_vec(block_il * n_xl * ns, &args.input, "a block of inlines")?;
    let mut i = 0;
    while i < n_il {
        seisimage::cancel::CancelToken::process().check()?;
        let n = block_il.min(n_il - i);
        let read = IndexBox { il: cut.il.start + i..cut.il.start + i + n, xl: cut.xl.clone(), s: cut.s.clone() };
        let data = &mut buf[..n * n_xl * ns];
        src.read_box(&read, data)?;
        sink.write_inlines(i, cut.shape(), data)?;
        progress.advance(n as u64);
        i += n;
    }
    progress.finish();
    let path = sink.finish()?;
    tracing::info!(
        "wrote {} ({} inlines × {} crosslines × {} samples)",
        path.display(),
        out_geometry.ilines.len,
        out_geometry.xlines.len,
        out_geometry.samples.len
    );
    Ok(())
}
