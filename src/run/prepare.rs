//! Preparing a job: its input opened, its velocity loaded, its products and its plan made, with every
//! mistake found on the way placed at the line of the job file (or the `--set` override) it comes from.

use std::path::Path;
use std::time::Instant;

use crate::cancel::CancelToken;
use crate::error::{Error, Result};
use crate::imaging::{ImageRequest, Migration, Plan};
use crate::io::segy::SegyFile;
use crate::io::FileFormat;
use crate::job::Job;
use crate::products::{self, ProductSpec, ProductTarget};
use crate::scan::Member;
use crate::velocity::{Provenance, VelocityModel};
use crate::volume::{Geometry, VolumeReader};

use super::record::{count, FileRecord, FileStamp};

/// A job with its input open, its velocity loaded and its plan made: everything `validate` prints and
/// `run` needs, found before any heavy work.
pub struct Prepared {
    pub job: Job,
    pub reader: Box<dyn VolumeReader>,
    pub bin_size: [f64; 2],
    /// Where the bin size came from ("job file" or "survey coordinates").
    pub bin_size_source: &'static str,
    pub velocity: VelocityModel,
    /// Where the velocity came from and what was done to it.
    pub velocity_provenance: Provenance,
    /// The migrations of a velocity scan, each with its velocity and plan (empty: the job migrates once,
    /// with `velocity` and `plan`; in a scan those are the first member's).
    pub scan: Vec<Member>,
    pub image: Geometry,
    pub products: Vec<ProductSpec>,
    /// The velocity of each migration as products of its own (`output.velocity`): written from the models,
    /// not imaged, so not in the request.
    pub velocity_products: Vec<ProductSpec>,
    pub request: ImageRequest,
    pub plan: Plan,
    /// What the input, the plan and the products changed or doubt in the job, found while preparing it:
    /// `validate` prints them, a run logs them as warnings and records them in its manifest.
    pub warnings: Vec<String>,
    /// The input file's size and modification time as it was opened.
    pub input_file: Option<FileStamp>,
    /// The velocity model's file and its stamp, when the velocity comes from a file.
    pub velocity_file: Option<FileRecord>,
    /// Files the run reads besides the job's own (the partial products `reduce` sums): never removed or
    /// replaced by it.
    pub also_reads: Vec<std::path::PathBuf>,
    /// The CRS of the survey's coordinates (`input.crs`), for the outputs that record it.
    pub crs: Option<crate::io::crs::Crs>,
}

/// Open the job's input. A SEG-Y or SU file whose headers read but whose line numbers, at the header bytes
/// the job reads them from, make no grid is the job's mistake rather than the file's: exit 2, at the key
/// that chose the bytes (`input.iline_byte`, `input.xline_byte` or `input.headers`, whichever the job
/// sets first), with the reader's hint of the bytes that do make a grid.
fn open_input(job: &Job) -> Result<Box<dyn VolumeReader>> {
    let input = &job.config.input;
    crate::io::open(&input.path, &input.read).map_err(|e| {
        let headers_read = match crate::io::detect_format(&input.path, input.read.format) {
            Ok(FileFormat::Segy) => SegyFile::open(&input.path, &input.read.segy()).is_ok(),
            Ok(FileFormat::Su) => SegyFile::open_su(&input.path, &input.read.segy()).is_ok(),
            _ => false,
        };
        let e = match e {
            Error::Format { .. } if headers_read => {
                Error::at_key("iline_byte", e.to_string()).or_key("xline_byte").or_key("headers")
            }
            e => e,
        };
        job.locate(e.within("input"))
    })
}

/// Open the input and plan the job. A wrong setting found on the way names the line of the job file (or
/// the `--set` override) it comes from.
pub fn prepare(job: Job) -> Result<Prepared> {
    let c = &job.config;
    let t = Instant::now();
    let input_file = FileStamp::of(&c.input.path);
    let reader = open_input(&job)?;
    tracing::debug!("{} opened in {:.3} s", c.input.path.display(), t.elapsed().as_secs_f64());
    let mut prepared = prepare_with(job, reader)?;
    prepared.input_file = input_file;
    Ok(prepared)
}

/// [`prepare`] a job whose input is `reader` (a volume in memory, say) instead of its `input.path`.
pub fn prepare_with(job: Job, reader: Box<dyn VolumeReader>) -> Result<Prepared> {
    let c = &job.config;
    let input = reader.geometry().clone();
    check_sample_interval(&job, &input)?;
    let (bin_size, bin_size_source) = match (c.input.bin_size, input.coords) {
        (Some(b), _) => (b, "job file"),
        (None, Some(t)) => (t.bin_size(), "survey coordinates"),
        (None, None) => {
            return Err(job.error_at(
                "input.bin_size",
                format!(
                    "{} has no trace coordinates, so the distance between traces is unknown: set input.bin_size = \
                     [metres between inlines, metres between crosslines]",
                    c.input.path.display()
                ),
            ))
        }
    };
    let maps = !c.output.depth_slices.is_empty() || !c.output.time_slices.is_empty();
    if maps && input.coords.is_none() && c.output.slice_formats.contains(&crate::job::VolumeFormat::Geotiff) {
        let why = format!(
            "\"geotiff\" places maps by the survey's coordinates, and {} has none in its trace headers",
            c.input.path.display()
        );
        return Err(job.error_at("output.slice_formats", why));
    }
    if bin_size.iter().any(|b| !b.is_finite() || *b <= 0.0) {
        return Err(job.error_at(
            "input.bin_size",
            format!("the trace spacing from the {bin_size_source} is {bin_size:?} m; set input.bin_size"),
        ));
    }
    let mut warnings = Vec::new();
    if input.n_missing() > 0 {
        warnings.push(format!(
            "{} of {} traces ({:.1} %) are missing from the input: they are zero in the sub-volume files and drawn \
             as no data in the pictures",
            input.n_missing(),
            input.n_traces(),
            100.0 * input.n_missing() as f64 / input.n_traces() as f64
        ));
    }
    let velocity_file =
        c.velocity.path.as_ref().map(|path| FileRecord { path: path.clone(), stamp: FileStamp::of(path) });
    let planned = || -> Result<_> {
        let t = Instant::now();
        let cdps = |wanted: &std::collections::BTreeSet<i64>| super::cdps::input_cdps(&c.input, wanted);
        let loaded = c.velocity.load_with(&input, bin_size, c.imaging.dz, Some(&cdps))?;
        tracing::debug!("velocity model loaded in {:.3} s", t.elapsed().as_secs_f64());
        let t = Instant::now();
        let planned = crate::scan::plan_migrations(c, &input, bin_size, loaded.model)?;
        tracing::debug!("migrations and products planned in {:.3} s", t.elapsed().as_secs_f64());
        Ok((loaded.provenance, planned))
    };
    let (velocity_provenance, planned) = planned().map_err(|e: Error| job.locate(e))?;
    let crate::scan::Planned { image, mut members, products, request, warnings: planned_warnings } = planned;
    let scan = if members.len() > 1 { members.clone() } else { Vec::new() };
    let models: Vec<_> = members.iter().map(|m| (m.step, &m.velocity)).collect();
    let time_step = c.output.time_step_ms.unwrap_or(input.samples.step);
    let velocity_products =
        products::plan_velocity_products(&c.output, &image, &models, time_step).map_err(|e| job.locate(e))?;
    let written: Vec<ProductSpec> = products.iter().chain(&velocity_products).cloned().collect();
    refuse_writing_inputs(&job, &written)?;
    let Member { velocity, plan, .. } = members.swap_remove(0);
    // The velocity held below the model matters only where the record reaches: the products are zero below.
    let deepest = (plan.last_level() as f64 * plan.depth.step).min(plan.reach.unwrap_or(f64::INFINITY));
    warnings.extend(velocity_provenance.warnings.iter().map(|w| format!("velocity: {w}")));
    warnings.extend(
        velocity_provenance.shallow_note(&velocity, deepest, plan.depth.step).map(|note| format!("velocity: {note}")),
    );
    warnings.extend(planned_warnings);
    let crs = super::input_crs::run_crs(&job, &mut warnings)?;
    Ok(Prepared {
        crs,
        job,
        reader,
        bin_size,
        bin_size_source,
        velocity,
        velocity_provenance,
        scan,
        image,
        products,
        velocity_products,
        request,
        plan,
        warnings,
        input_file: None,
        velocity_file,
        also_reads: Vec::new(),
    })
}

/// Refuse an input in time whose sample interval no seismic record has: µs typed as ms (`sample_interval =
/// 4000`) would otherwise migrate with every time a thousand times too long.
fn check_sample_interval(job: &Job, input: &Geometry) -> Result<()> {
    if input.samples.domain != crate::volume::Domain::Time {
        return Ok(());
    }
    crate::velocity::check_sample_interval(input.samples.step).map_err(|m| {
        let c = &job.config.input;
        let message = match c.read.sample_interval {
            Some(dt) => format!("sample_interval = {dt}: {m}"),
            None => format!(
                "{}: {m} (from its headers; input.sample_interval, in ms, overrides a SEG-Y file's)",
                c.path.display()
            ),
        };
        job.error_at("input.sample_interval", message)
    })
}

/// Refuse a job that would write over its input or its velocity file: the same file by identity (a hard
/// link, a link to its folder), not only by name, under any name the run gives a file in its output folder.
fn refuse_writing_inputs(job: &Job, products: &[ProductSpec]) -> Result<()> {
    let c = &job.config;
    for name in super::folder::written_names(&c.output, products) {
        let output = c.output.dir.join(&name);
        if let Some((what, input)) = crate::io::files::replaced_input(&output, &input_files(job)) {
            return Err(job.error_at(
                "output.dir",
                format!(
                    "{} would replace {what} {} (they are the same file); choose another output.dir or product name",
                    output.display(),
                    input.display()
                ),
            ));
        }
    }
    Ok(())
}

/// The files `job` reads, each with what it is: the input, the velocity file when there is one, and the
/// job file itself.
fn input_files(job: &Job) -> Vec<(&'static str, &Path)> {
    let c = &job.config;
    let mut inputs = vec![("the input", c.input.path.as_path())];
    if let Some(path) = &c.velocity.path {
        inputs.push(("the velocity file", path.as_path()));
    }
    inputs.push(("the job file", job.source.as_path()));
    inputs
}

impl Prepared {
    /// The file of the job (with what it is, "the input", "the velocity file") that writing `output` would
    /// replace, if any: the same file by identity (see [`crate::io::files::replaced_input`]).
    pub fn replaced_input(&self, output: &Path) -> Option<(&str, &Path)> {
        crate::io::files::replaced_input(output, &self.inputs())
    }

    /// Every file the run reads, with what it is: the job's files and [`Prepared::also_reads`]. A run
    /// never removes or replaces one of them.
    pub fn inputs(&self) -> Vec<(&str, &Path)> {
        let mut inputs = input_files(&self.job);
        inputs.extend(self.also_reads.iter().map(|path| ("a partial file being summed", path.as_path())));
        inputs
    }

    /// What `output.existing` would take out of the output folder if the run started now (see
    /// [`super::folder::Clearing`]).
    pub fn clearing(&self) -> super::folder::Clearing {
        let output = &self.job.config.output;
        let written = super::folder::written_names(output, &self.written_products());
        super::folder::Clearing::of(&output.dir, output.existing, &written, &self.inputs())
    }

    /// Every product the run writes: the boxes of the image, then the velocity products.
    pub fn written_products(&self) -> Vec<ProductSpec> {
        self.products.iter().chain(&self.velocity_products).cloned().collect()
    }

    /// The velocity model of the migration of `member` of the scan (`None`: the job's only migration).
    pub fn model_of(&self, member: Option<crate::velocity::ScanStep>) -> &VelocityModel {
        self.scan.iter().find(|m| m.step == member).map_or(&self.velocity, |m| &m.velocity)
    }

    /// The migration this job asks of an engine (the first of a velocity scan).
    pub fn migration(&self) -> Migration<'_> {
        Migration { input: self.reader.as_ref(), plan: &self.plan, velocity: &self.velocity, request: &self.request }
    }

    /// Every migration this job asks of an engine: one, or the members of its velocity scan.
    pub fn migrations(&self) -> Vec<Migration<'_>> {
        if self.scan.is_empty() {
            return vec![self.migration()];
        }
        let input = self.reader.as_ref();
        self.scan
            .iter()
            .map(|m| Migration { input, plan: &m.plan, velocity: &m.velocity, request: &self.request })
            .collect()
    }

    /// The members of the velocity scan with their velocities (empty when the job migrates once).
    pub fn scan_models(&self) -> Vec<(crate::velocity::ScanStep, &VelocityModel)> {
        self.scan.iter().map(|m| (m.step.expect("a member of a scan"), &m.velocity)).collect()
    }

    /// Where this job's products go and how they are drawn, for a run stopped by `cancel`.
    pub fn product_target(&self, cancel: CancelToken) -> ProductTarget<'_> {
        let output = &self.job.config.output;
        let report = products::RunReport::of(&self.job, &self.velocity, &self.scan_models());
        ProductTarget {
            dir: &output.dir,
            image: &self.image,
            bin_size: self.bin_size,
            render: &output.render,
            cancel,
            volume_options: crate::io::WriteOptions {
                segy: crate::io::segy::SegyWriteOptions {
                    text: crate::history::segy_text_lines(&self.job, &report.provenance, self.crs.as_ref()),
                    ..Default::default()
                },
                hdf5: crate::io::hdf5::Hdf5WriteOptions { crs: self.crs.clone(), ..Default::default() },
                crs: self.crs.clone(),
            },
            report,
            edge_tapers: {
                let [_, iline, xline] = self.plan.window.ramp_lengths();
                [iline, xline]
            },
            clip_groups: self.clip_groups(),
        }
    }

    /// The clip groups of this run's pictures, with how many each holds, whose pictures need not wait for
    /// the migration to end: none in a velocity scan, whose panels join the groups of the sections they are
    /// made of.
    fn clip_groups(&self) -> Vec<(products::ClipGroup, usize)> {
        if !self.scan.is_empty() {
            return Vec::new();
        }
        let render = &self.job.config.output.render;
        let mut groups: Vec<(products::ClipGroup, usize)> = Vec::new();
        let pictures = self.products.iter().chain(&self.velocity_products).filter(|spec| spec.png);
        for group in pictures.filter_map(|spec| products::clip_group(render, spec.kind.noun(), &spec.quantity().name)) {
            match groups.iter_mut().find(|(g, _)| *g == group) {
                Some((_, n)) => *n += 1,
                None => groups.push((group, 1)),
            }
        }
        groups
    }

    /// What a batch log says of the job before it runs: the input, the method with its key parameters, and
    /// the products.
    pub fn summary(&self) -> Vec<String> {
        let g = self.reader.geometry();
        let (f0, f1) = self.plan.band_hz();
        let depth = &self.image.samples;
        let velocity = match self.scan_models().as_slice() {
            [] => self.velocity.describe(),
            scan => {
                let steps: Vec<String> = scan.iter().map(|(s, _)| s.label()).collect();
                format!("scan of {} ({})", steps.len(), steps.join(", "))
            }
        };
        let mut method = format!(
            "{}, velocity {velocity}, depth 0..{} m step {} m, {f0:.2}..{f1:.2} Hz",
            self.plan.method.name(),
            depth.last(),
            depth.step
        );
        if let Some(d) = self.plan.dip_limit {
            method.push_str(&format!(", dip limit {:.0}°", d.to_degrees()));
        }
        let stems: Vec<&str> = self.products.iter().map(|p| p.stem.as_str()).collect();
        vec![
            format!(
                "input {}: {} inlines × {} crosslines × {} samples of {} ms, {} missing traces",
                self.job.config.input.path.display(),
                g.ilines.len,
                g.xlines.len,
                g.samples.len,
                g.samples.step,
                g.n_missing()
            ),
            method,
            format!(
                "{} into {}: {}",
                count(self.products.len(), "product"),
                self.job.config.output.dir.display(),
                stems.join(", ")
            ),
        ]
    }

    /// The Dix table of a velocity given as one table, one line per pick (empty for other forms and for a
    /// velocity scan, whose members each have their own).
    fn dix_table(&self) -> Vec<String> {
        let (VelocityModel::Table(table), true) = (&self.velocity, self.scan.is_empty()) else { return Vec::new() };
        match self.job.config.velocity.table_picks() {
            Ok(Some((picks, domain))) => crate::velocity::dix_lines(&crate::velocity::dix_rows(table, &picks, domain)),
            _ => Vec::new(),
        }
    }

    /// What `validate` prints: the input, the plan and the products.
    pub fn describe(&self) -> Vec<String> {
        let g = self.reader.geometry();
        let mut lines = vec![
            format!("input     {}", self.reader.describe()),
            format!(
                "          {} inlines ({}..={}) × {} crosslines ({}..={}) × {} samples of {} ms; {} missing traces",
                g.ilines.len,
                g.ilines.first,
                g.ilines.last(),
                g.xlines.len,
                g.xlines.first,
                g.xlines.last(),
                g.samples.len,
                g.samples.step,
                g.n_missing()
            ),
            format!(
                "          bins {:.2} m between inlines × {:.2} m between crosslines (from the {})",
                self.bin_size[0], self.bin_size[1], self.bin_size_source
            ),
        ];
        lines.extend(self.velocity_provenance.steps.iter().map(|l| format!("velocity  {l}")));
        lines.extend(self.dix_table().into_iter().map(|l| format!("dix       {l}")));
        for m in &self.scan {
            let (lo, hi) = m.velocity.range();
            let step = m.step.expect("a member of a scan");
            let reach = m.plan.reach.map(|z| format!(", reaches {z:.0} m")).unwrap_or_default();
            lines.push(format!(
                "scan      {:<10} {lo:.1}..{hi:.1} m/s{reach}, products *{}",
                step.label(),
                step.suffix()
            ));
        }
        lines.extend(self.plan.describe().into_iter().map(|l| format!("plan      {l}")));
        lines.push(format!("output    {}", self.job.config.output.dir.display()));
        for p in self.products.iter().chain(&self.velocity_products) {
            let [a, b, c] = p.geometry(&self.image).shape();
            let mut what: Vec<String> = Vec::new();
            if p.png {
                what.push("png".into());
            }
            what.extend(p.formats.iter().map(|f| f.extension().to_string()));
            lines.push(format!("          {:<24} {a} × {b} × {c} values → {}", p.stem, what.join(", ")));
        }
        lines.extend(self.warnings.iter().map(|w| format!("warning   {w}")));
        lines
    }
}
