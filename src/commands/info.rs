//! `seisimage info`: what a volume file holds, for a person or (with `--json`) for a program.
//! The JSON fields are documented in docs/info-json.md; keep the two in step.

use seisimage::info::{describe, Info};
use seisimage::io::hdf5::Hdf5Options;
use seisimage::io::segy::{SegyFile, SegyLayout};
use seisimage::io::{detect_format, FileFormat, InputOptions};

use super::{segy_options, Reporting};
use crate::cli::InfoArgs;

pub fn run(args: &InfoArgs, reporting: Reporting) -> anyhow::Result<()> {
    let format = detect_format(&args.file, args.format)?;
    if args.raw_headers || args.trace.is_some() {
        return raw_headers(args, format);
    }
    if args.headers_range {
        return headers_range(args, format);
    }
    if format == FileFormat::Npy {
        anyhow::bail!(
            "{}: an NPY array has no axes to describe; `python -c \"import numpy; print(numpy.load(...).shape)\"` tells its shape",
            args.file.display()
        );
    }
    let opts =
        InputOptions::from_parts(&segy_options(&args.segy), &Hdf5Options { dataset: args.dataset.clone() }, format);
    // JSON goes to programs, which read stdout only: keep stderr clean for them too.
    let progress = Reporting { quiet: reporting.quiet || args.json, ..reporting }.progress();
    let stats = (!args.no_stats).then_some(progress.as_ref());
    let info =
        describe(&args.file, format, &opts, args.text_header || !args.json, stats).map_err(|e| match format {
            FileFormat::Segy => not_a_grid(e, args),
            _ => e,
        })?;
    if args.json {
        super::println(&serde_json::to_string_pretty(&info)?)?;
    } else {
        super::print(&human(&info, args.text_header))?;
    }
    Ok(())
}

/// `info --raw-headers`: the headers of a SEG-Y file, grid or not.
fn raw_headers(args: &InfoArgs, format: FileFormat) -> anyhow::Result<()> {
    if format == FileFormat::Su {
        let file = SegyFile::open_su(&args.file, &segy_options(&args.segy))?;
        let at = segy_options(&args.segy).locations()?;
        super::print(&super::headers::describe(&args.file, &file, &at, args.trace.unwrap_or(1))?)?;
        return Ok(());
    }
    if format != FileFormat::Segy {
        return Err(seisimage::Error::Request(format!(
            "{}: --raw-headers shows the headers of SEG-Y files; this is {}",
            args.file.display(),
            format!("{format:?}").to_uppercase()
        ))
        .into());
    }
    let options = segy_options(&args.segy);
    let file = SegyFile::open(&args.file, &options)?;
    super::print(&super::headers::describe(&args.file, &file, &options.locations()?, args.trace.unwrap_or(1))?)?;
    Ok(())
}

/// `info --headers-range`: every trace header field's range over a SEG-Y or SU file, grid or not.
fn headers_range(args: &InfoArgs, format: FileFormat) -> anyhow::Result<()> {
    let options = segy_options(&args.segy);
    let file = match format {
        FileFormat::Segy => SegyFile::open(&args.file, &options)?,
        FileFormat::Su => SegyFile::open_su(&args.file, &options)?,
        _ => {
            return Err(seisimage::Error::Request(format!(
                "{}: --headers-range surveys the trace headers of SEG-Y and SU files; this is {}",
                args.file.display(),
                format!("{format:?}").to_uppercase()
            ))
            .into())
        }
    };
    let range = super::header_range::survey(&file)?;
    if args.json {
        super::println(&serde_json::to_string_pretty(&range)?)
    } else {
        super::print(&super::header_range::table(&range, file.layout()))
    }
}

/// A SEG-Y file that opens but holds no grid at the header bytes given: say how to look at its headers.
fn not_a_grid(e: seisimage::Error, args: &InfoArgs) -> seisimage::Error {
    match e {
        seisimage::Error::Format { path, location, message }
            if SegyFile::open(&args.file, &segy_options(&args.segy)).is_ok() =>
        {
            let message = format!(
                "{message}. `seisimage info --raw-headers --trace N {}` shows the header of any trace, field by field",
                args.file.display()
            );
            seisimage::Error::Format { path, location, message }
        }
        e => e,
    }
}

fn human(info: &Info, text_header: bool) -> String {
    // Over 100 lines: the report is written line by line in the order it is read; each line is its own
    // few statements.
    use std::fmt::Write;
    let mut s = String::new();
    let g = &info.geometry;
    match (&info.segy, &info.hdf5) {
        (Some(y), _) if y.layout == SegyLayout::SeismicUnix => {
            let _ = writeln!(
                s,
                "{}: Seismic Unix (no file headers), {}-endian ({}), {} ({} bytes), {} traces",
                info.path,
                format!("{:?}", y.byte_order).to_lowercase(),
                y.byte_order_decided,
                y.sample_format.name,
                y.sample_format.bytes,
                y.trace_count
            );
        }
        (Some(y), _) => {
            let _ = writeln!(
                s,
                "{}: SEG-Y rev {}, {}-endian ({}), {} (format {}, {} bytes), {} text header{}",
                info.path,
                y.revision,
                format!("{:?}", y.byte_order).to_lowercase(),
                y.byte_order_decided,
                y.sample_format.name,
                y.sample_format.code,
                y.sample_format.bytes,
                format!("{:?}", y.text_encoding).to_lowercase(),
                match y.extended_text_headers {
                    0 => String::new(),
                    n => format!(" + {n} extended"),
                }
            );
            let lower = |x: &dyn std::fmt::Debug| format!("{x:?}").to_lowercase();
            let _ = writeln!(
                s,
                "  traces       {} in the file, sorted by {} (inlines {}, crosslines {}); {} missing from the grid, {} dead",
                y.trace_count,
                lower(&y.sorting.sorting),
                lower(&y.sorting.iline),
                lower(&y.sorting.xline),
                y.missing_traces,
                y.dead_traces
            );
            let _ = writeln!(
                s,
                "  header bytes inline {}, crossline {}, x {}, y {} (coordinate scalar {})",
                y.header_bytes.iline, y.header_bytes.xline, y.header_bytes.x, y.header_bytes.y, y.coordinate_scalar
            );
        }
        (_, Some(h)) => {
            let _ = writeln!(
                s,
                "{}: HDF5 dataset {} ({}, {} × {} × {}), chunks {}, filters {}",
                info.path,
                h.dataset,
                h.dtype,
                h.shape[0],
                h.shape[1],
                h.shape[2],
                h.chunk.as_ref().map(|c| format!("{c:?}")).unwrap_or_else(|| "none (contiguous)".into()),
                if h.filters.is_empty() { "none".to_string() } else { h.filters.join(", ") }
            );
            if h.dimensions != [h.iline.name, h.xline.name, h.sample.name] {
                let _ =
                    writeln!(s, "  stored as    [{}], read as [inline][crossline][sample]", h.dimensions.join("]["));
            }
            for (name, source) in
                [("inline", &h.iline.source), ("crossline", &h.xline.source), ("sample", &h.sample.source)]
            {
                let _ = writeln!(s, "  {name:<12} axis from {}", serde_json::to_string(source).unwrap_or_default());
            }
            for n in &h.notes {
                let _ = writeln!(s, "  note: {n}");
            }
        }
        _ => {}
    }
    let _ = writeln!(
        s,
        "  inlines      {}..={} step {} ({})\n  crosslines   {}..={} step {} ({})",
        g.ilines.first,
        g.ilines.last,
        g.ilines.step,
        g.ilines.count,
        g.xlines.first,
        g.xlines.last,
        g.xlines.step,
        g.xlines.count
    );
    let _ = writeln!(
        s,
        "  samples      {} × {} {} from {} to {} {} ({})",
        g.samples.count,
        g.samples.step,
        g.samples.unit,
        g.samples.first,
        g.samples.last,
        g.samples.unit,
        if g.samples.domain == seisimage::volume::Domain::Time { "two-way time" } else { "depth" }
    );
    let _ = writeln!(
        s,
        "  grid         {}, {} missing (filled with zeros)",
        seisimage::run::count(g.traces, "trace"),
        g.missing_traces
    );
    match (&info.segy, g.bin_size_m) {
        (Some(y), Some(b)) => {
            let _ = writeln!(
                s,
                "  coordinates  x {:.2}..{:.2}, y {:.2}..{:.2}; bins {:.2} m between inlines × {:.2} m between crosslines{}",
                y.x_range[0],
                y.x_range[1],
                y.y_range[0],
                y.y_range[1],
                b[0],
                b[1],
                y.coordinate_misfit.filter(|m| *m > 0.01).map(|m| format!(" (largest misfit {} m)", seisimage::number::fixed(m, 2))).unwrap_or_default()
            );
        }
        (_, Some(b)) => {
            let _ = writeln!(s, "  coordinates  bins {:.2} m between inlines × {:.2} m between crosslines", b[0], b[1]);
        }
        (_, None) => {
            let _ = writeln!(s, "  coordinates  none: give input.bin_size in a job file to migrate this volume");
        }
    }
    if let Some(a) = &info.amplitudes {
        let _ = writeln!(
            s,
            "  amplitudes   min {:.6e}, max {:.6e}, mean {:.6e}, rms {:.6e} over {} samples of live traces",
            a.min, a.max, a.mean, a.rms, a.finite
        );
        if a.nan + a.infinite > 0 {
            let _ = writeln!(s, "  WARNING      {} NaN and {} infinite samples", a.nan, a.infinite);
        }
    }
    if text_header {
        if let Some(y) = &info.segy {
            let _ = writeln!(s, "\ntextual file header:\n{}", y.text);
        }
    }
    s
}
