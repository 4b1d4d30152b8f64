//! What the SEG-Y files of a run say about how they were made: the processing history of their text
//! header, so that a file separated from its manifest still tells the method, the velocity and the run.

use crate::io::crs::Crs;
use crate::job::Job;
use crate::render::Provenance;

/// Characters a line of a SEG-Y text header holds after its `C01 ` prefix.
const LINE: usize = 76;

/// The processing history of `job`'s SEG-Y products, as text header lines of at most 76 characters:
/// method, velocity source and form, fmax, dz, software version, date, job file, and the CRS of the
/// coordinates when the job names one. `provenance` is the
/// run's (its velocity in a few words, date and version).
pub fn segy_text_lines(job: &Job, provenance: &Provenance, crs: Option<&Crs>) -> Vec<String> {
    let c = &job.config;
    let v = &c.velocity;
    let mut form = format!("VELOCITY FORM: {} OF {} VELOCITY", word(&v.kind), v.velocity_type().name());
    if let Some(domain) = v.domain {
        form.push_str(&format!(" IN {}", word(&domain)));
    }
    form.push_str(&format!(", {}", word(&v.unit)));
    let job_name = job.source.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let mut lines = vec![
        format!("PROCESSING: POST-STACK DEPTH MIGRATION, {}", c.imaging.method.name()).to_uppercase(),
        format!("VELOCITY: {}", provenance.velocity.as_deref().unwrap_or("-")),
        form.to_uppercase(),
        format!("FMAX {} HZ, DZ {} M", c.imaging.fmax, c.imaging.dz),
        format!("MADE BY {} ON {} (UTC)", provenance.software, provenance.date).to_uppercase(),
        format!("JOB FILE: {job_name}"),
    ];
    if let Some(crs) = crs {
        lines.push(format!("CRS OF CDP X/Y: {}", crs.describe()));
    }
    for line in &mut lines {
        if line.chars().count() > LINE {
            *line = line.chars().take(LINE - 3).chain("...".chars()).collect();
        }
    }
    lines
}

/// The word a job file uses for a value (its serde name), for lines that quote the job.
fn word<T: serde::Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(s)) => s,
        Ok(other) => other.to_string(),
        Err(_) => String::new(),
    }
}
