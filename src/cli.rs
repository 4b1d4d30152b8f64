//! Command-line definitions (clap). Nothing here does work: each command's arguments are validated into
//! the library's types by the command modules.

use std::path::PathBuf;
use std::time::Duration;

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::{Args, Parser, Subcommand, ValueEnum};
use seisimage::choice::Choice;

use seisimage::io::segy::{Endian, HeaderPreset};
use seisimage::io::FileFormat;

#[derive(Parser, Debug)]
#[command(
    name = "seisimage",
    version,
    about = "Depth-migrate 3-D post-stack seismic volumes on the GPU (or CPU) and write only the slices you ask for.",
    long_about = "seisimage reads a post-stack 3-D volume (SEG-Y or HDF5), tapers and pads it on the host, uploads \
it to the GPU once, migrates it there (phase shift, Stolt or split-step Fourier), and pulls back only the \
inlines, crosslines, depth slices and boxes a job asks for, written as PNG images and SEG-Y / HDF5 / NPY \
sub-volumes with a JSON manifest. Without a GPU the same job runs on the CPU.\n\n\
A typical session:\n  \
seisimage info data/f3.sgy                 # what is in the file\n  \
seisimage validate configs/demo.toml       # check a job and print its plan\n  \
seisimage run configs/demo.toml            # run it (products in the job's output folder)\n\n\
Exit codes: 0 done, 1 failed, 2 usage or configuration error, 130/143/129/131 stopped by \
SIGINT/SIGTERM/SIGHUP/SIGQUIT.",
    after_help = "Run `seisimage <command> --help` for the options of each command."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,

    /// More log output (-v: debug, -vv: trace). The RUST_LOG variable overrides it.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,

    /// Only errors and warnings on stderr; no progress bar.
    #[arg(short, long, global = true)]
    pub quiet: bool,

    /// When stderr is not a terminal (a batch log), write a progress line at most this often (0: at every
    /// step; a very large number: never). A terminal shows a progress bar instead.
    #[arg(long, global = true, value_name = "SECONDS", default_value = "30", value_parser = parse_seconds)]
    pub progress_interval: Duration,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Describe a SEG-Y, Seismic Unix or HDF5 volume: format, geometry, sample axis, coordinates, amplitudes; or show a
    /// SEG-Y file's headers as stored (--raw-headers, --trace N), grid or not, or the range of every trace
    /// header field over the file (--headers-range).
    Info(InfoArgs),
    /// Convert between SEG-Y, HDF5, MDIO and NPY (and from Seismic Unix), optionally cutting a box.
    Convert(ConvertArgs),
    /// Run migration jobs described by TOML files.
    Run(RunArgs),
    /// Sum the partial products of a job's shares (`run --shard I/N`) and write the products and the manifest.
    Reduce(ReduceArgs),
    /// Check a job file and the files it names, and print the plan (sizes, band, depth axis, the depth the
    /// record reaches, products, warnings) and its memory against this machine's, without running.
    Validate(JobArgs),
    /// Print a job file fully resolved, with every default shown.
    PrintConfig(JobArgs),
    /// Draw an inline, crossline or time/depth slice of any SEG-Y or HDF5 volume as a PNG (with its JSON
    /// sidecar), with the renderer of a run's products: to check an input, or show it beside its image.
    Plot(PlotArgs),
    /// Write a synthetic volume with known answers (diffractors, dipping planes, spikes, layers) and its truth file.
    Synth(SynthArgs),
    /// List the CUDA devices seisimage can use, or say why there are none.
    Devices(DevicesArgs),
    /// Measure every stage of a migration against its hardware floor, on a synthetic volume.
    Bench(BenchArgs),
}

/// How to read SEG-Y headers (used by every command that reads SEG-Y).
#[derive(Args, Debug, Clone, Default)]
#[command(next_help_heading = "SEG-Y headers")]
pub struct SegyArgs {
    /// Trace-header byte locations: standard (il 189, xl 193, x 181, y 185) or petrel (il 5, xl 21, x 73, y 77).
    #[arg(long, value_parser = choice::<HeaderPreset>(), default_value = default_name::<HeaderPreset>())]
    pub headers: HeaderPreset,
    /// Byte (1-based) of the 4-byte inline number in each trace header; overrides --headers.
    #[arg(long, value_name = "BYTE")]
    pub iline_byte: Option<u16>,
    /// Byte (1-based) of the 4-byte crossline number; overrides --headers.
    #[arg(long, value_name = "BYTE")]
    pub xline_byte: Option<u16>,
    /// Byte (1-based) of the 4-byte x coordinate; overrides --headers.
    #[arg(long, value_name = "BYTE")]
    pub x_byte: Option<u16>,
    /// Byte (1-based) of the 4-byte y coordinate; overrides --headers.
    #[arg(long, value_name = "BYTE")]
    pub y_byte: Option<u16>,
    /// Byte order. auto: the SEG-Y rev-2 constant when present, else whichever order gives plausible headers.
    #[arg(long, value_parser = choice::<Endian>(), default_value = default_name::<Endian>())]
    pub endian: Endian,
    /// SEG-Y sample format code to read with instead of the binary header's (bytes 3225-3226), for files
    /// that state it wrongly: 1 IBM float, 2/3/8 signed integers of 4/2/1 bytes, 5 IEEE float, ...
    #[arg(long, value_name = "CODE")]
    pub format_code: Option<u16>,
    /// Sample interval (ms; m for depth) to read with instead of the headers', for files without a usable one.
    #[arg(long, value_name = "INTERVAL")]
    pub sample_interval: Option<f64>,
    /// The trace axis of a SEG-Y or SU file: depth for files that keep depths in the time fields (Petrel
    /// and other software write a depth volume's 10 m as a "10000 µs" interval), time to read a file
    /// seisimage marked depth as time. A job's velocity cube says the same with velocity.domain.
    #[arg(long, value_name = "DOMAIN", value_parser = parse_domain)]
    pub domain: Option<seisimage::volume::Domain>,
}

/// What `plot` draws the values of a volume as.
#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum PlotQuantity {
    /// Amplitudes: a symmetric clip at a percentile of |value|.
    Amplitude,
    /// Velocity in m/s: the smallest to the largest value.
    Velocity,
}

fn parse_domain(s: &str) -> Result<seisimage::volume::Domain, String> {
    match s {
        "time" => Ok(seisimage::volume::Domain::Time),
        "depth" => Ok(seisimage::volume::Domain::Depth),
        _ => Err(format!("expected time or depth, got {s:?}")),
    }
}

#[derive(Args, Debug)]
pub struct InfoArgs {
    /// The volume to describe (.sgy/.segy or .h5/.hdf5; other names are recognised by content).
    pub file: PathBuf,
    /// Machine-readable output (fields documented in docs/info-json.md).
    #[arg(long)]
    pub json: bool,
    /// Also print the textual file header (and extended text headers).
    #[arg(long)]
    pub text_header: bool,
    /// Skip the amplitude statistics (which read every sample).
    #[arg(long)]
    pub no_stats: bool,
    /// SEG-Y: show the file's headers as stored instead of a summary: the textual and binary file headers
    /// and the header of one trace, every field with its bytes and value. Works on files that are not a
    /// grid (shot gathers, files that keep their line numbers at other bytes), to find where they keep what.
    #[arg(long, conflicts_with = "json")]
    pub raw_headers: bool,
    /// SEG-Y or SU: survey every numeric trace header field over the whole file, as Seismic Unix's surange
    /// does: its bytes, name, smallest and largest value and how many distinct values it takes (counted up to
    /// 1000), for the fields that are not zero on every trace. A table, or JSON with --json.
    #[arg(long, conflicts_with_all = ["raw_headers", "trace", "text_header"])]
    pub headers_range: bool,
    /// With --raw-headers (which it implies): the trace whose header to show, 1-based in file order.
    #[arg(long, value_name = "N", conflicts_with = "json")]
    pub trace: Option<usize>,
    /// Input container, when the name does not tell.
    #[arg(long, value_parser = choice::<FileFormat>(), default_value = default_name::<FileFormat>())]
    pub format: FileFormat,
    /// HDF5: path of the 3-D dataset.
    #[arg(long, default_value = seisimage::io::hdf5::DEFAULT_DATASET)]
    pub dataset: String,
    #[command(flatten)]
    pub segy: SegyArgs,
}

#[derive(Args, Debug)]
pub struct ConvertArgs {
    /// Input volume (SEG-Y, Seismic Unix, HDF5 or an MDIO folder).
    pub input: PathBuf,
    /// Output file; its extension picks the format (.sgy/.segy, .h5/.hdf5, .mdio, .npy) unless --to is given.
    pub output: PathBuf,
    /// Output format.
    #[arg(long, value_parser = choice::<FileFormat>(), default_value = default_name::<FileFormat>())]
    pub to: FileFormat,
    /// Input container, when the name does not tell.
    #[arg(long, value_parser = choice::<FileFormat>(), default_value = default_name::<FileFormat>())]
    pub format: FileFormat,
    /// HDF5 dataset path, for input and output.
    #[arg(long, default_value = seisimage::io::hdf5::DEFAULT_DATASET)]
    pub dataset: String,
    /// Cut: inline numbers FIRST:LAST (inclusive, header values).
    #[arg(long, value_name = "FIRST:LAST", value_parser = parse_int_range)]
    pub iline: Option<[i64; 2]>,
    /// Cut: crossline numbers FIRST:LAST.
    #[arg(long, value_name = "FIRST:LAST", value_parser = parse_int_range)]
    pub xline: Option<[i64; 2]>,
    /// Cut: sample range FIRST:LAST in ms (time) or m (depth).
    #[arg(long, value_name = "FIRST:LAST", value_parser = parse_float_range)]
    pub samples: Option<[f64; 2]>,
    /// SEG-Y output: sample format.
    #[arg(long, value_enum, default_value_t)]
    pub sample_format: SegyOutFormat,
    /// HDF5 output: deflate level 1-9 (default: uncompressed).
    #[arg(long, value_name = "LEVEL", value_parser = clap::value_parser!(u8).range(1..=9))]
    pub compress: Option<u8>,
    /// The CRS of the survey's coordinates, recorded in the output (HDF5 and MDIO: a CF `spatial_ref` grid
    /// mapping; SEG-Y: a line of the text header): EPSG:CODE, or the path of a WKT file. Default: the CRS an
    /// MDIO input records, else none. Never used to project.
    #[arg(long, value_name = "EPSG:CODE|WKT-FILE")]
    pub crs: Option<String>,
    #[command(flatten)]
    pub segy: SegyArgs,
}

/// Sample format of SEG-Y output.
#[derive(Clone, Copy, Debug, Default, ValueEnum, PartialEq, Eq)]
pub enum SegyOutFormat {
    /// 4-byte IEEE float (format 5).
    #[default]
    Ieee,
    /// 4-byte IBM float (format 1), for old software.
    Ibm,
}

#[derive(Args, Debug)]
pub struct JobArgs {
    /// The job file (TOML). See configs/README.md for every section and key.
    pub job: PathBuf,
    /// Override a job value: KEY=VALUE with a dotted key and a TOML value, e.g. --set imaging.fmax=50
    /// --set 'output.inlines=[120, 130]'. Repeatable; applied in order after the file is read.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub overrides: Vec<String>,
}

#[derive(Args, Debug)]
pub struct RunArgs {
    /// The job file (TOML), or several: they run one after another in this process and share the compute
    /// engine, so on a GPU only the first pays for the CUDA start-up (about 0.3 s), and each job's input is
    /// opened while the job before it migrates. Every job file, and the files each names, is checked
    /// before the first job starts; a job that fails is reported and the others still run, and the exit
    /// code is the first failure's. A run locks its output folder (.seisimage.lock) while it writes there.
    #[arg(required = true, value_name = "JOB")]
    pub jobs: Vec<PathBuf>,
    /// Override a job value (in every job): KEY=VALUE with a dotted key and a TOML value, e.g. --set
    /// imaging.fmax=50 --set 'output.inlines=[120, 130]'. Repeatable; applied in order after the file is read.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub overrides: Vec<String>,
    /// Where to compute: auto (GPU when one is usable, else CPU, with a message), cpu, or cuda.
    /// Overrides compute.backend of the job file.
    #[arg(long, value_parser = choice::<seisimage::job::Backend>())]
    pub backend: Option<seisimage::job::Backend>,
    /// Migrate only share I of N of the job's frequencies (I from 1 to N) and write its partial products
    /// (shard-I-of-N.partial) instead of the products; `seisimage reduce JOB --shards N` sums the shares
    /// and writes the products and the manifest. The shares can run anywhere, at any time, on the CPU or a
    /// GPU: a Slurm array of N tasks and a reduce job that depends on it split one survey.
    #[arg(long, value_name = "I/N", value_parser = parse_share, conflicts_with = "gpus")]
    pub shard: Option<seisimage::imaging::bands::Share>,
    /// With --shard: write the partial products into this folder instead of the job's output folder.
    #[arg(long, value_name = "DIR", requires = "shard")]
    pub partials: Option<PathBuf>,
    /// Run the job over several GPUs of this machine: one rank per GPU (`all`, or the first N), each
    /// migrating a share of the frequencies, the products summed on rank 0. Needs NCCL. On a cluster,
    /// start the ranks with srun or mpirun instead (see docs/cluster.md).
    #[arg(long, value_name = "all|N", value_parser = parse_gpus)]
    pub gpus: Option<seisimage::distributed::launcher::Gpus>,
}

#[derive(Args, Debug)]
pub struct ReduceArgs {
    /// The job file the shares ran (the same file and --set overrides).
    pub job: PathBuf,
    /// The number of shares the job was split into (the N of --shard I/N).
    #[arg(long, value_name = "N")]
    pub shards: usize,
    /// The folder holding the partial products (default: the job's output folder).
    #[arg(long, value_name = "DIR")]
    pub partials: Option<PathBuf>,
    /// Remove the shares' partial-products files once their sum is written (they are kept otherwise, to
    /// reduce again, e.g. with other [output.render] settings).
    #[arg(long)]
    pub remove_partials: bool,
    /// Override a job value, as for `run` (the shares must have run with the same overrides).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub overrides: Vec<String>,
}

#[derive(Args, Debug)]
#[command(
    group(clap::ArgGroup::new("slice").required(true).args(["inline", "crossline", "time", "depth"])),
    after_help = "Examples:\n  \
seisimage plot data/f3.sgy --inline 122 -o inline_122.png\n  \
seisimage plot data/f3.sgy --time 200 -o t200.png            # a map view, north up from the coordinates\n  \
seisimage plot out/demo/roi_centre.h5 --crossline 884 --display va -o va.png\n  \
seisimage plot petrel_vint.sgy --domain depth --quantity velocity --inline 122 -o v.png\n  \
seisimage plot in.sgy --inline 120 --attribute envelope --agc 250 -o env.png\n\n\
The options are those of a job's [output.render] table (docs/rendering.md shows each with a picture); the \
picture's sidecar (.json beside it) records its axes, clip and notes."
)]
pub struct PlotArgs {
    /// The volume (SEG-Y or HDF5; a run's sub-volumes too).
    pub file: std::path::PathBuf,
    /// Draw this inline (header value): crosslines across, time or depth down.
    #[arg(long, value_name = "N")]
    pub inline: Option<i64>,
    /// Draw this crossline (header value): inlines across.
    #[arg(long, value_name = "N")]
    pub crossline: Option<i64>,
    /// Draw the time slice nearest this time (ms), in map view.
    #[arg(long, value_name = "MS")]
    pub time: Option<f64>,
    /// Draw the depth slice nearest this depth (m), in map view.
    #[arg(long, value_name = "M")]
    pub depth: Option<f64>,
    /// The picture (PNG); its sidecar is written beside it with the extension .json.
    #[arg(short, long, value_name = "PNG")]
    pub output: std::path::PathBuf,
    /// What the volume's values are: amplitude (a symmetric clip, the --colormap), or velocity (m/s, from
    /// the smallest to the largest value on a sequential map). Default: velocity for a file that the
    /// manifest beside it lists as a velocity product (output.velocity), else amplitude.
    #[arg(long, value_enum)]
    pub quantity: Option<PlotQuantity>,
    /// Draw a complex-trace attribute of the slice instead of its amplitudes.
    #[arg(long, value_parser = choice::<seisimage::attributes::Attribute>())]
    pub attribute: Option<seisimage::attributes::Attribute>,
    /// Half-height of the window of samples (ms or m) over which the attribute of a time or depth slice is
    /// computed.
    #[arg(long, value_name = "LENGTH", default_value_t = 200.0)]
    pub attribute_window: f64,
    /// Colour map of amplitudes.
    #[arg(long, value_parser = choice::<seisimage::render::Colormap>(), default_value = default_name::<seisimage::render::Colormap>())]
    pub colormap: seisimage::render::Colormap,
    /// A fixed clip: values in [-CLIP, CLIP] span the colour map (default: the --clip-percentile of |value|).
    #[arg(long, value_name = "CLIP")]
    pub clip: Option<f64>,
    /// The clip is this percentile of |value|.
    #[arg(long, value_name = "P", default_value_t = 99.0)]
    pub clip_percentile: f64,
    /// density (colours), wiggle, or va (variable area: positive lobes filled).
    #[arg(long, value_parser = choice::<seisimage::render::Display>(), default_value = default_name::<seisimage::render::Display>())]
    pub display: seisimage::render::Display,
    /// Automatic gain control of the picture, over this window (ms for time, m for depth).
    #[arg(long, value_name = "WINDOW")]
    pub agc: Option<f64>,
    /// How an enlarged axis is drawn: auto (cells where a sample gets two pixels or more), nearest, linear.
    #[arg(long, value_parser = choice::<seisimage::render::Sampling>(), default_value = default_name::<seisimage::render::Sampling>())]
    pub sampling: seisimage::render::Sampling,
    /// Vertical exaggeration over the true aspect.
    #[arg(long = "ve", value_name = "FACTOR", default_value_t = 1.0)]
    pub vertical_exaggeration: f64,
    /// Smallest width of the data area, pixels.
    #[arg(long, value_name = "PIXELS", default_value_t = 800)]
    pub width: u32,
    /// Title, a template: {product}, {quantity}, {input}, {scale}, {date}, {version}.
    #[arg(long)]
    pub title: Option<String>,
    /// No provenance footer.
    #[arg(long)]
    pub no_footer: bool,
    /// The data area alone: no axes, colour bar, notes or footer.
    #[arg(long)]
    pub no_annotate: bool,
    /// Metres between inlines and between crosslines, for a volume without coordinates: IL,XL.
    #[arg(long, value_name = "IL,XL", value_parser = parse_pair)]
    pub bin_size: Option<[f64; 2]>,
    /// Input container, when the name does not tell.
    #[arg(long, value_parser = choice::<FileFormat>(), default_value = default_name::<FileFormat>())]
    pub format: FileFormat,
    /// HDF5: path of the 3-D dataset.
    #[arg(long, default_value = seisimage::io::hdf5::DEFAULT_DATASET)]
    pub dataset: String,
    #[command(flatten)]
    pub segy: SegyArgs,
}

fn parse_pair(s: &str) -> Result<[f64; 2], String> {
    let (a, b) = s.split_once(',').ok_or_else(|| format!("expected IL,XL such as 12.5,25, got {s:?}"))?;
    let p = |x: &str| match x.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err(format!("expected two positive distances IL,XL, got {s:?}")),
    };
    Ok([p(a)?, p(b)?])
}

#[derive(Args, Debug)]
pub struct SynthArgs {
    /// Output volume (.sgy or .h5); the truth is written next to it as NAME.truth.json.
    pub output: PathBuf,
    /// What the volume contains.
    #[arg(long, value_enum, default_value_t = SynthModelKind::Diffractor)]
    pub model: SynthModelKind,
    /// Grid size: INLINESxCROSSLINESxSAMPLES (at most 2^40 samples in all).
    #[arg(long, default_value = "64x64x500", value_parser = parse_size)]
    pub size: [usize; 3],
    /// Sample interval in ms.
    #[arg(long, default_value_t = 4.0)]
    pub dt: f64,
    /// Distance between traces (m), the same along inlines and crosslines.
    #[arg(long, default_value_t = 12.5)]
    pub bin: f64,
    /// Constant velocity (m/s), unless --layers is given.
    #[arg(long, default_value_t = 2000.0)]
    pub velocity: f64,
    /// Layered velocity: DEPTH:VELOCITY,... (m, m/s), each velocity holding from its depth down; travel times
    /// are then ray-traced through the layers.
    #[arg(long, value_name = "Z:V,...")]
    pub layers: Option<String>,
    /// Peak frequency of the Ricker wavelet (Hz).
    #[arg(long, default_value_t = 25.0)]
    pub frequency: f64,
    /// Dip of the dipping-plane model, in degrees.
    #[arg(long, default_value_t = 30.0)]
    pub dip: f64,
    /// Gaussian noise, as a fraction of the peak amplitude.
    #[arg(long, default_value_t = 0.0)]
    pub noise: f64,
    /// Seed of the noise generator.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// SEG-Y output: sample format.
    #[arg(long, value_enum, default_value_t)]
    pub sample_format: SegyOutFormat,
}

/// Synthetic models (see `seisimage synth --help`).
#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum SynthModelKind {
    /// One point diffractor in the middle of the grid, at the depth 40 % of the record reaches through the
    /// top velocity: 40 % of the time window with --velocity, earlier where --layers are faster below (the
    /// truth file gives its depth and time).
    Diffractor,
    /// A plane dipping along the crossline axis.
    Dip,
    /// A single spike (the impulse response of a migration).
    Spike,
    /// Flat reflectors at a few depths.
    Layers,
    /// Four reflectors folded along the crosslines and cut by a normal fault, whose edges diffract
    /// (constant velocity; the structure is the same on every inline).
    Folded,
}

#[derive(Args, Debug)]
pub struct DevicesArgs {
    /// Machine-readable output.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Volume size INLINESxCROSSLINESxSAMPLES (4 ms samples; at most 2^40 in all).
    #[arg(long, default_value = "512x512x1000", value_parser = parse_size)]
    pub size: [usize; 3],
    /// Migration method.
    #[arg(long, value_parser = choice::<seisimage::imaging::Method>(), default_value = default_name::<seisimage::imaging::Method>())]
    pub method: seisimage::imaging::Method,
    /// Where to compute.
    #[arg(long, value_parser = choice::<seisimage::job::Backend>(), default_value = default_name::<seisimage::job::Backend>())]
    pub backend: seisimage::job::Backend,
    /// Number of depth steps (10 m each), at most 1000000.
    #[arg(long, default_value_t = 500, value_parser = parse_depth_steps)]
    pub depth_steps: usize,
    /// Highest frequency migrated (Hz).
    #[arg(long, default_value_t = 60.0)]
    pub fmax: f64,
    /// Folder for the generated input and the products (default: a temporary folder, removed afterwards).
    #[arg(long)]
    pub workdir: Option<PathBuf>,
    /// Also write the results as JSON.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// CPU mode: thread counts to measure scaling over (default 1, 2, 4, … all cores), each at most 1024.
    #[arg(long, value_delimiter = ',', value_parser = parse_thread_count)]
    pub threads: Vec<usize>,
    /// Also time a velocity scan of N members (velocity × 0.9 … × 1.1) from one ingest, against one ingest
    /// plus N migrations and against N separate runs; N is at most 100, as in a job's velocity scan.
    #[arg(long, value_name = "N", default_value_t = 0, value_parser = parse_scan_members)]
    pub scales: usize,
}

/// The most samples a synthetic or benchmark volume may have: 2^40 (4.4 TB of 4-byte samples).
const MAX_SAMPLES: u64 = 1 << 40;

fn parse_size(s: &str) -> Result<[usize; 3], String> {
    let parts: Vec<&str> = s.split(['x', 'X']).collect();
    let bad = || format!("expected INLINESxCROSSLINESxSAMPLES such as 512x512x1000, got {s:?}");
    if parts.len() != 3 {
        return Err(bad());
    }
    let mut out = [0usize; 3];
    for (o, p) in out.iter_mut().zip(parts) {
        *o = p.trim().parse().map_err(|_| bad())?;
        if *o == 0 {
            return Err(format!("sizes must be at least 1, got {s:?}"));
        }
    }
    let samples = out.iter().try_fold(1u64, |n, &d| n.checked_mul(d as u64)).unwrap_or(u64::MAX);
    if samples > MAX_SAMPLES {
        return Err(format!("{s} is {samples} samples; at most {MAX_SAMPLES} (2^40, 4.4 TB) are made"));
    }
    Ok(out)
}

/// A count of at most `most`: the benchmark's sizes are bounded like a job's, so that a mistyped one is
/// refused (exit 2) instead of asking for more memory than a machine has.
fn parse_count(s: &str, most: usize, why: &str) -> Result<usize, String> {
    let n: usize = s.trim().parse().map_err(|_| format!("expected a whole number, got {s:?}"))?;
    match n <= most {
        true => Ok(n),
        false => Err(format!("{n} is more than {most}, {why}")),
    }
}

fn parse_depth_steps(s: &str) -> Result<usize, String> {
    parse_count(s, seisimage::imaging::plan::MAX_LEVELS, "the most depth levels an image may have")
}

fn parse_thread_count(s: &str) -> Result<usize, String> {
    parse_count(s, seisimage::job::MAX_THREADS, "the most threads seisimage starts")
}

fn parse_scan_members(s: &str) -> Result<usize, String> {
    parse_count(s, seisimage::velocity::MAX_SCAN_MEMBERS, "the most members a velocity scan may have")
}

fn parse_share(s: &str) -> Result<seisimage::imaging::bands::Share, String> {
    s.parse()
}

fn parse_gpus(s: &str) -> Result<seisimage::distributed::launcher::Gpus, String> {
    s.parse()
}

/// Seconds as a duration; a number too large for one means "never".
fn parse_seconds(s: &str) -> Result<Duration, String> {
    match s.trim().parse::<f64>() {
        Ok(x) if x >= 0.0 => Ok(Duration::try_from_secs_f64(x).unwrap_or(Duration::MAX)),
        _ => Err(format!("expected a number of seconds ≥ 0, got {s:?}")),
    }
}

fn parse_int_range(s: &str) -> Result<[i64; 2], String> {
    let (a, b) = s.split_once(':').ok_or_else(|| format!("expected FIRST:LAST, got {s:?}"))?;
    let p = |x: &str| x.trim().parse::<i64>().map_err(|_| format!("expected integers in FIRST:LAST, got {s:?}"));
    Ok([p(a)?, p(b)?])
}

fn parse_float_range(s: &str) -> Result<[f64; 2], String> {
    let (a, b) = s.split_once(':').ok_or_else(|| format!("expected FIRST:LAST, got {s:?}"))?;
    let p = |x: &str| x.trim().parse::<f64>().map_err(|_| format!("expected numbers in FIRST:LAST, got {s:?}"));
    Ok([p(a)?, p(b)?])
}

/// The parser of a setting of named values (see `seisimage::choice`), each value with its help for
/// `--help`.
fn choice<T: Choice>() -> impl TypedValueParser<Value = T> {
    let values = T::CHOICES.iter().map(|&(_, name, help)| {
        let value = PossibleValue::new(name).aliases(T::ALIASES.iter().filter(|a| a.1 == name).map(|a| a.0));
        if help.is_empty() {
            value
        } else {
            value.help(help)
        }
    });
    PossibleValuesParser::new(values).map(|name| T::from_name(&name).expect("clap passes only the names listed"))
}

/// The name of a setting's default value.
fn default_name<T: Choice + Default>() -> &'static str {
    T::default().choice_name()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cli_definition_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }

    #[test]
    fn sizes_and_ranges_parse() {
        assert_eq!(parse_size("512x256x1000"), Ok([512, 256, 1000]));
        assert!(parse_size("512x256").is_err());
        assert!(parse_size("0x1x1").is_err());
        assert!(parse_size("1048576x1048576x1").is_ok());
        assert!(parse_size("1048576x1048576x2").unwrap_err().contains("at most 1099511627776"));
        assert!(parse_size("99999999999x99999999999x99999999999").is_err(), "no overflow");
        assert_eq!(parse_seconds("0.5"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_seconds("1e300"), Ok(Duration::MAX));
        assert_eq!(parse_seconds("inf"), Ok(Duration::MAX));
        assert!(parse_seconds("-1").is_err() && parse_seconds("NaN").is_err());
        assert_eq!(parse_int_range("120:130"), Ok([120, 130]));
        assert!(parse_int_range("120").is_err());
        assert_eq!(parse_float_range("0:1.5"), Ok([0.0, 1.5]));
    }
}
