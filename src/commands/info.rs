//! `seisimage info`: what a volume file holds, for a person or (with `--json`) for a program.
//! The JSON fields are documented in docs/info-json.md; keep the two in step.

use serde::Serialize;

use seisimage::io::hdf5::{Hdf5Reader, Hdf5Summary};
use seisimage::io::segy::{SegyFile, SegyLayout, SegyReader, SegySummary};
use seisimage::io::{detect_format, FileFormat};
use seisimage::volume::{AmplitudeStats, Geometry, VolumeReader};

use super::{segy_options, Reporting};
use crate::cli::InfoArgs;

/// Version of the JSON layout; raised when a field changes meaning or goes away.
const SCHEMA: &str = "seisimage-info/1";

#[derive(Serialize)]
struct Info {
    schema: &'static str,
    path: String,
    container: &'static str,
    geometry: GeometryInfo,
    amplitudes: Option<AmplitudeStats>,
    #[serde(skip_serializing_if = "Option::is_none")]
    segy: Option<SegySummary>,
    #[serde(skip_serializing_if = "Option::is_none")]
    hdf5: Option<Hdf5Summary>,
}

#[derive(Serialize)]
struct GeometryInfo {
    ilines: LineInfo,
    xlines: LineInfo,
    samples: SampleInfo,
    traces: usize,
    missing_traces: usize,
    /// Metres between adjacent inlines and between adjacent crosslines (from the coordinates).
    bin_size_m: Option<[f64; 2]>,
    /// Grid index → x/y map: x = origin + il_index · per_iline + xl_index · per_xline.
    coordinates: Option<seisimage::volume::CoordTransform>,
}

#[derive(Serialize)]
struct LineInfo {
    first: i64,
    last: i64,
    step: i64,
    count: usize,
}

#[derive(Serialize)]
struct SampleInfo {
    domain: seisimage::volume::Domain,
    unit: &'static str,
    first: f64,
    last: f64,
    step: f64,
    count: usize,
}

impl GeometryInfo {
    fn of(g: &Geometry) -> Self {
        let line =
            |a: &seisimage::volume::LineAxis| LineInfo { first: a.first, last: a.last(), step: a.step, count: a.len };
        GeometryInfo {
            ilines: line(&g.ilines),
            xlines: line(&g.xlines),
            samples: SampleInfo {
                domain: g.samples.domain,
                unit: g.samples.domain.unit(),
                first: g.samples.origin,
                last: g.samples.last(),
                step: g.samples.step,
                count: g.samples.len,
            },
            traces: g.n_traces(),
            missing_traces: g.n_missing(),
            bin_size_m: g.coords.map(|c| c.bin_size()),
            coordinates: g.coords,
        }
    }
}

pub fn run(args: &InfoArgs, reporting: Reporting) -> anyhow::Result<()> {
    let format = detect_format(&args.file, args.format)?;
    if args.raw_headers || args.trace.is_some() {
        return raw_headers(args, format);
    }
    let (reader, mut info): (Box<dyn VolumeReader>, Info) = match format {
        FileFormat::Segy | FileFormat::Su => {
            let opts = segy_options(&args.segy);
            let r = match format {
                FileFormat::Su => SegyReader::open_su(&args.file, &opts),
                _ => SegyReader::open(&args.file, &opts).map_err(|e| not_a_grid(e, args)),
            }?;
            let mut summary = r.summary();
            if !args.text_header && args.json {
                summary.text.clear();
            }
            let container = if format == FileFormat::Su { "su" } else { "segy" };
            let info = new_info(&args.file, container, r.geometry());
            (Box::new(r), Info { segy: Some(summary), ..info })
        }
        FileFormat::Hdf5 => {
            let opts = seisimage::io::hdf5::Hdf5Options { dataset: args.dataset.clone() };
            let r = Hdf5Reader::open(&args.file, &opts)?;
            let info = new_info(&args.file, "hdf5", r.geometry());
            let summary = r.summary();
            (Box::new(r), Info { hdf5: Some(summary), ..info })
        }
        FileFormat::GeoTiff => anyhow::bail!(
            "{}: seisimage writes GeoTIFF maps but does not read them; a GIS or `gdalinfo` describes them",
            args.file.display()
        ),
        FileFormat::Npy => anyhow::bail!(
            "{}: an NPY array has no axes to describe; `python -c \"import numpy; print(numpy.load(...).shape)\"` tells its shape",
            args.file.display()
        ),
        FileFormat::Auto => unreachable!("detect_format resolves Auto"),
    };
    if !args.no_stats {
        // JSON goes to programs, which read stdout only: keep stderr clean for them too.
        let progress = Reporting { quiet: reporting.quiet || args.json, ..reporting }.progress();
        info.amplitudes = Some(AmplitudeStats::of_reader(reader.as_ref(), progress.as_ref())?);
    }
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

fn new_info(path: &std::path::Path, container: &'static str, g: &Geometry) -> Info {
    Info {
        schema: SCHEMA,
        path: path.display().to_string(),
        container,
        geometry: GeometryInfo::of(g),
        amplitudes: None,
        segy: None,
        hdf5: None,
    }
}

fn human(info: &Info, text_header: bool) -> String {
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
                y.coordinate_misfit.filter(|m| *m > 0.01).map(|m| format!(" (largest misfit {m:.2})")).unwrap_or_default()
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
