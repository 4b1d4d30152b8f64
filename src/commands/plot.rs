//! `seisimage plot`: a picture of one inline, crossline or time/depth slice of any SEG-Y or HDF5 volume,
//! drawn by the same renderer and options as the products of a run, so that an input can be checked (and
//! shown beside its migrated image) before a job is run.

use seisimage::attributes::{frequency_unit, AttributeOutput};
use seisimage::cancel::CancelToken;
use seisimage::error::Error;
use seisimage::io::output::commit_together;
use seisimage::io::{self, InputOptions};
use seisimage::render::{self, ClipSetting, PictureInfo, Provenance, Quantity, RenderOptions, SliceData};
use seisimage::volume::{IndexBox, Volume};

use super::segy_options;
use crate::cli::{PlotArgs, PlotQuantity};

/// Which slice of the volume to draw.
enum Cut {
    Inline(usize),
    Crossline(usize),
    Sample(usize),
}

pub fn run(args: &PlotArgs) -> anyhow::Result<()> {
    // Over 100 lines: the command's steps (open, cut, scale, draw, write) in the order they run, each a few
    // lines over the same arguments.
    let opts = InputOptions::from_parts(
        &segy_options(&args.segy),
        &seisimage::io::hdf5::Hdf5Options { dataset: args.dataset.clone() },
        args.format,
    );
    let reader = io::open(&args.file, &opts)?;
    let input = [("the input", args.file.as_path())];
    for output in [args.output.clone(), render::sidecar_path(&args.output)] {
        seisimage::io::files::check_output_file(&output)?;
        if seisimage::io::files::replaced_input(&output, &input).is_some() {
            return Err(Error::Request(format!(
                "{} is the input {} (the same file): writing it would replace the volume being read; choose another \
                 picture name",
                output.display(),
                args.file.display()
            ))
            .into());
        }
    }
    let render = render_options(args);
    render.validate().map_err(|e| Error::Request(format!("{e}")))?;
    let g = reader.geometry().clone();
    let cut = match (args.inline, args.crossline, args.time.or(args.depth)) {
        (Some(il), None, None) => Cut::Inline(g.iline_index(il)?),
        (None, Some(xl), None) => Cut::Crossline(g.xline_index(xl)?),
        (None, None, Some(v)) => {
            let unit = g.samples.domain.unit();
            let wrong = match g.samples.domain {
                seisimage::volume::Domain::Time => args.depth.is_some(),
                seisimage::volume::Domain::Depth => args.time.is_some(),
            };
            if wrong {
                return Err(Error::Request(format!(
                    "{} is in {} ({unit}): use --{}",
                    args.file.display(),
                    g.samples.domain.axis_name(),
                    if args.time.is_some() { "depth" } else { "time" }
                ))
                .into());
            }
            Cut::Sample(g.sample_index(v)?)
        }
        _ => unreachable!("clap requires exactly one of --inline, --crossline, --time, --depth"),
    };
    let full = g.full_box();
    // The box read: the slice, or for an attribute of a horizontal slice a window of samples around it.
    let window = args.attribute_window;
    let (region, keep) = match cut {
        Cut::Inline(i) => (IndexBox { il: i..i + 1, ..full.clone() }, 0..g.samples.len),
        Cut::Crossline(j) => (IndexBox { xl: j..j + 1, ..full.clone() }, 0..g.samples.len),
        Cut::Sample(k) if args.attribute.is_some() => {
            let (s, keep) = seisimage::attributes::window_around(k, window, g.samples.step, g.samples.len);
            (IndexBox { s, ..full.clone() }, keep)
        }
        Cut::Sample(k) => (IndexBox { s: k..k + 1, ..full.clone() }, 0..1),
    };
    let mut values: Vec<f32> = seisimage::alloc::try_vec(region.len(), &args.file, "the slice")?;
    tracing::debug!("reading {} values of {}", region.len(), reader.describe());
    reader.read_box(&region, &mut values)?;
    let unit = g.samples.domain.unit();
    let drawn_as = args.quantity.unwrap_or_else(|| listed_quantity(&args.file));
    if drawn_as == PlotQuantity::Velocity && args.attribute.is_some() {
        return Err(
            Error::Request("--attribute is a complex-trace attribute of amplitudes, not of a velocity".into()).into()
        );
    }
    let (values, quantity, out_region) = match args.attribute {
        Some(a) => {
            let out = AttributeOutput {
                attribute: a,
                keep: keep.clone(),
                frequency_scale: frequency_unit(unit).0 / g.samples.step.abs(),
            };
            let attr = seisimage::attributes::compute(&values, region.s.len(), &out);
            let kept = IndexBox { s: region.s.start + keep.start..region.s.start + keep.end, ..region.clone() };
            (attr, seisimage::products::attribute_quantity(a, unit), kept)
        }
        None if drawn_as == PlotQuantity::Velocity => (values, Quantity::velocity(), region.clone()),
        None => (values, Quantity::amplitude(), region.clone()),
    };
    let mut product = Volume { geometry: g.subset(&out_region), data: values };
    // Traces missing from the survey are no data, not zero amplitude.
    for (t, live) in product.geometry.live.clone().iter().enumerate() {
        if !live {
            let ns = product.geometry.samples.len;
            product.data[t * ns..(t + 1) * ns].fill(f32::NAN);
        }
    }
    let (slice, name) = match cut {
        Cut::Inline(_) => (SliceData::inline(&product, 0)?, format!("Inline {}", args.inline.unwrap_or_default())),
        Cut::Crossline(_) => {
            (SliceData::crossline(&product, 0)?, format!("Crossline {}", args.crossline.unwrap_or_default()))
        }
        Cut::Sample(_) => {
            let v = product.geometry.samples.origin;
            (
                SliceData::horizontal(&product, 0)?,
                format!("{} {} {unit}", slice_name(g.samples.domain), seisimage::number::number(v)),
            )
        }
    };
    let mut slice = slice;
    // Without coordinates, the spacing of the lines from --bin-size (the picture stays in grid view).
    if let (Some([a, b]), None) = (args.bin_size, product.geometry.coords) {
        for axis in [&mut slice.rows, &mut slice.cols] {
            match axis.name.as_str() {
                "iline" => axis.spacing_m = Some(a),
                "xline" => axis.spacing_m = Some(b),
                _ => {}
            }
        }
    }
    let product_name = match args.attribute {
        Some(a) => format!("{name}, {}", a.title()),
        None if drawn_as == PlotQuantity::Velocity => format!("{name}, {}", quantity.name),
        None => name,
    };
    let info = PictureInfo {
        product: product_name,
        quantity,
        provenance: Some(Provenance { method: Some("as read".into()), ..Provenance::now(&args.file) }),
        clip: None,
        map: slice.map.clone(),
        panels: Vec::new(),
        remarks: Vec::new(),
    };
    let drawn = render::render_png_sealed(&args.output, &slice.as_slice(), &render, &info)?;
    // A signal that came while the picture was read or drawn still stops the command: it never reports
    // success, and what it made is not put under its name.
    CancelToken::process().check()?;
    commit_together(drawn.files.into())?;
    tracing::info!(
        "wrote {} ({} × {} pixels, clip {}) and {}",
        args.output.display(),
        drawn.width,
        drawn.height,
        drawn.clip,
        render::sidecar_path(&args.output).display()
    );
    Ok(())
}

/// The largest manifest read to find what a file is: a run with thousands of products writes a few MB.
const MAX_MANIFEST_BYTES: u64 = 64 << 20;

/// What the manifest of the run folder holding `file` says its values are: velocity for a velocity product
/// (`output.velocity`), else amplitude (also where there is no manifest, or it cannot be read).
fn listed_quantity(file: &std::path::Path) -> PlotQuantity {
    let (Some(dir), Some(name)) = (file.parent(), file.file_name().and_then(|n| n.to_str())) else {
        return PlotQuantity::Amplitude;
    };
    let dir = if dir.as_os_str().is_empty() { std::path::Path::new(".") } else { dir };
    let manifest = dir.join(seisimage::run::MANIFEST);
    let small = std::fs::metadata(&manifest).is_ok_and(|m| m.is_file() && m.len() <= MAX_MANIFEST_BYTES);
    let listing: Option<serde_json::Value> =
        small.then(|| std::fs::read(&manifest).ok()).flatten().and_then(|b| serde_json::from_slice(&b).ok());
    let velocity = listing.as_ref().and_then(|m| m["products"].as_array()).is_some_and(|products| {
        products.iter().any(|p| {
            p["kind"] == "velocity"
                && p["files"].as_array().is_some_and(|files| files.iter().any(|f| f["path"] == name))
        })
    });
    if velocity {
        PlotQuantity::Velocity
    } else {
        PlotQuantity::Amplitude
    }
}

/// What a horizontal slice is at, in a picture's title: "Depth 150 m", "TWT 200 ms".
fn slice_name(domain: seisimage::volume::Domain) -> &'static str {
    match domain {
        seisimage::volume::Domain::Depth => "Depth",
        seisimage::volume::Domain::Time => "TWT",
    }
}

fn render_options(a: &PlotArgs) -> RenderOptions {
    let d = RenderOptions::default();
    RenderOptions {
        colormap: a.colormap,
        clip_percentile: a.clip_percentile,
        clip: a.clip.map_or(ClipSetting::Picture, ClipSetting::Fixed),
        annotate: !a.no_annotate,
        footer: !a.no_footer,
        display: a.display,
        agc_window: a.agc,
        sampling: a.sampling,
        vertical_exaggeration: a.vertical_exaggeration,
        min_width: a.width,
        title: a.title.clone(),
        ..d
    }
}
