//! `seisimage convert`: SEG-Y ↔ HDF5 ↔ MDIO (and → NPY; from Seismic Unix), optionally cut to a box, streamed a block of inlines at a
//! time so that a volume larger than memory converts in bounded memory.
//!
//! SEG-Y to SEG-Y keeps what the input's headers hold and the output can carry ([`keep_segy_headers`]):
//! the textual file header, each trace's CDP number and its coordinates as stored (with its scalar), not
//! the positions of the grid fitted to them.

use std::os::unix::fs::FileExt;
use std::path::Path;

use anyhow::Context;

use seisimage::io::crs::Crs;
use seisimage::io::hdf5::Hdf5WriteOptions;
use seisimage::io::segy::geometry::MISSING;
use seisimage::io::segy::text::put_card;
use seisimage::io::segy::{ByteOrder, SegyLayout, SegyReader, SegyWriteOptions, WriteFormat};
use seisimage::io::{self, detect_format, FileFormat, InputOptions, TempOutput, VolumeSink, WriteOptions};
use seisimage::volume::{IndexBox, ValueBox, VolumeReader};

use super::{segy_options, Reporting};
use crate::cli::{ConvertArgs, SegyOutFormat};

/// Values read and written per step.
const BLOCK_VALUES: usize = 16 << 20;

fn write_options(args: &ConvertArgs, crs: Option<&Crs>) -> WriteOptions {
    let format = match args.sample_format {
        SegyOutFormat::Ieee => WriteFormat::Ieee,
        SegyOutFormat::Ibm => WriteFormat::Ibm,
    };
    let mut text =
        vec![format!("CONVERTED BY SEISIMAGE {} FROM {}", env!("CARGO_PKG_VERSION"), file_name(&args.input))];
    text.extend(crs.map(crs_card));
    WriteOptions {
        segy: SegyWriteOptions { format, text, ..Default::default() },
        hdf5: Hdf5WriteOptions {
            dataset: args.dataset.clone(),
            compression: args.compress,
            crs: crs.cloned(),
            ..Default::default()
        },
        crs: crs.cloned(),
    }
}

/// The text header line that records the CRS of the coordinates.
fn crs_card(crs: &Crs) -> String {
    format!("CRS OF CDP X/Y: {}", crs.describe())
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
        Some("mdio") => Ok(FileFormat::Mdio),
        Some("su") => Err(seisimage::Error::Request(format!(
            "{}: seisimage reads Seismic Unix files but does not write them; write SEG-Y (.sgy), which Seismic Unix \
             reads with segyread",
            args.output.display()
        ))
        .into()),
        _ => Err(seisimage::Error::Request(format!(
            "cannot tell the output format from {:?}: use an extension .sgy, .h5, .npy or .mdio, or --to",
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
    let in_format = detect_format(&args.input, args.format)?;
    if in_format == FileFormat::Npy {
        anyhow::bail!("{}: NPY has no axes to convert from; convert from SEG-Y or HDF5", args.input.display());
    }
    // The CRS given, else the one an MDIO input records: the output says it as the input did.
    let crs = match &args.crs {
        Some(value) => Some(Crs::parse_at("--crs", value, Path::new(""))?),
        None if in_format == FileFormat::Mdio => seisimage::io::mdio::read_crs(&args.input)?,
        None => None,
    };
    let folder = args.output.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    if !folder.is_dir() {
        return Err(seisimage::Error::Request(format!(
            "cannot write {}: the folder {} does not exist",
            args.output.display(),
            folder.display()
        ))
        .into());
    }
    // An MDIO dataset is a folder: its writer replaces only an earlier dataset.
    if out_format != FileFormat::Mdio {
        seisimage::io::files::check_output_file(&args.output)?;
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
    // A SEG-Y input is kept as such: its headers are copied after the samples.
    let segy = match in_format {
        FileFormat::Segy => Some(SegyReader::open(&args.input, &opts.segy())?),
        FileFormat::Su => Some(SegyReader::open_su(&args.input, &opts.segy())?),
        _ => None,
    };
    let other;
    let src: &dyn VolumeReader = match &segy {
        Some(r) => r,
        None => {
            other = io::open(&args.input, &opts)?;
            other.as_ref()
        }
    };
    let g = src.geometry();
    let cut = g.index_box(&ValueBox { iline: args.iline, xline: args.xline, sample: args.samples })?;
    let out_geometry = g.subset(&cut);
    let [n_il, n_xl, ns] = cut.shape();
    let block_il = (BLOCK_VALUES / (n_xl * ns).max(1)).clamp(1, n_il);

    let options = write_options(args, crs.as_ref());
    let mut sink = VolumeSink::create(out_format, &args.output, &out_geometry, &options)
        .with_context(|| format!("cannot create {}", args.output.display()))?;
    let progress = reporting.progress();
    progress.begin("converting", n_il as u64);
    let mut buf: Vec<f32> = seisimage::alloc::try_vec(block_il * n_xl * ns, &args.input, "a block of inlines")?;
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
    if out_format == FileFormat::Mdio {
        seisimage::cancel::CancelToken::process().check()?;
        let path = sink.finish()?;
        tracing::info!("wrote {}", path.display());
        return Ok(());
    }
    let written = sink.close()?;
    if let (Some(input), FileFormat::Segy) = (&segy, out_format) {
        keep_segy_headers(input, &cut, &written, options.segy.endian, crs.as_ref())?;
    }
    // A signal that came during the last step still stops the command: it never reports success, and
    // the file is not put under its name.
    seisimage::cancel::CancelToken::process().check()?;
    let path = written.commit()?;
    tracing::info!(
        "wrote {} ({} inlines × {} crosslines × {} samples)",
        path.display(),
        out_geometry.ilines.len,
        out_geometry.xlines.len,
        out_geometry.samples.len
    );
    Ok(())
}

/// Copy into the SEG-Y file `out` (written by seisimage from the box `cut` of `input`, still under its
/// temporary name, in byte order `order`) what the input's headers hold that the writer cannot know: the
/// textual file header (with the line of `crs` on one of its cards), and for each trace the CDP number
/// (bytes 21-24, unless the input keeps one of its line numbers or coordinates there) and the coordinates
/// as stored, with their scalar (71-72), at both places the writer puts them (CDP x/y at 181/185, source
/// x/y at 73/77).
fn keep_segy_headers(
    input: &SegyReader,
    cut: &IndexBox,
    out: &TempOutput,
    order: ByteOrder,
    crs: Option<&Crs>,
) -> anyhow::Result<()> {
    let path = out.final_path();
    let io_error = |e| seisimage::Error::io(path, e);
    let file = out.reopen_for_update()?;
    // A Seismic Unix input has no text header: the output keeps the one the writer made.
    if input.file().layout() == SegyLayout::Standard {
        let mut text = [0u8; 3200];
        let source = seisimage::io::files::open_regular(input.file().path())?;
        source.read_exact_at(&mut text, 0).map_err(|e| seisimage::Error::io(input.file().path(), e))?;
        if let Some(crs) = crs {
            let put = put_card(&mut text, &crs_card(crs));
            if let Some(replaced) = put.replaced {
                tracing::warn!(
                    "{}: the CRS line replaces card {} of the input's text header, {replaced:?}",
                    path.display(),
                    put.card
                );
            }
        }
        file.write_all_at(&text, 0).map_err(io_error)?;
    }

    let at = *input.file().locations();
    let in_order = input.file().byte_order();
    let word = |h: &[u8; 240], byte: u16| in_order.read_i32(h[byte as usize - 1..][..4].try_into().expect("4 bytes"));
    let overlaps_cdp = [at.iline, at.xline, at.x, at.y].iter().any(|&b| b < 25 && b + 3 >= 21);
    let grid = input.grid();
    let nx = grid.geometry.xlines.len;
    let trace_bytes = 240 + cut.s.len() as u64 * 4;
    let mut header = [0u8; 240];
    for (t, (i, j)) in cut.il.clone().flat_map(|i| cut.xl.clone().map(move |j| (i, j))).enumerate() {
        let source = grid.cells[i * nx + j];
        if source == MISSING {
            continue;
        }
        let h = input.file().trace_header_bytes(source as usize)?;
        let offset = 3600 + t as u64 * trace_bytes;
        file.read_exact_at(&mut header, offset).map_err(io_error)?;
        let mut put = |byte: usize, bytes: &[u8]| header[byte - 1..byte - 1 + bytes.len()].copy_from_slice(bytes);
        if !overlaps_cdp {
            put(21, &order.i32(word(h, 21)));
        }
        put(71, &order.i16(in_order.read_i16([h[70], h[71]])));
        let (x, y) = (order.i32(word(h, at.x)), order.i32(word(h, at.y)));
        for (xb, yb) in [(73, 77), (181, 185)] {
            put(xb, &x);
            put(yb, &y);
        }
        file.write_all_at(&header, offset).map_err(io_error)?;
    }
    Ok(())
}
