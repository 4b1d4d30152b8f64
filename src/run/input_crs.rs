//! The CRS of a run: `input.crs`, else the one an MDIO input records (a CF grid mapping, see
//! [`crate::io::mdio`]); a run whose job names one that differs from its input's is warned.

use crate::error::Result;
use crate::io::crs::Crs;
use crate::io::{detect_format, FileFormat};
use crate::job::Job;

/// The CRS the run's outputs record, with a warning pushed to `warnings` when `input.crs` and the input
/// disagree (the job's is used: it is what the user said).
pub(super) fn run_crs(job: &Job, warnings: &mut Vec<String>) -> Result<Option<Crs>> {
    let given = job.crs()?;
    let input = &job.config.input;
    // An MDIO dataset is a folder; the input of a run from memory (the Python package) is no file at all.
    let mdio = input.path.is_dir() && matches!(detect_format(&input.path, input.read.format), Ok(FileFormat::Mdio));
    if !mdio {
        return Ok(given);
    }
    let recorded = crate::io::mdio::read_crs(&input.path).map_err(|e| job.locate(e))?;
    Ok(match (given, recorded) {
        (Some(given), Some(recorded)) => {
            if !given.same_as(&recorded) {
                warnings.push(format!(
                    "input.crs is {}, but {} records {}: the outputs record input.crs",
                    given.describe(),
                    input.path.display(),
                    recorded.describe()
                ));
            }
            Some(given)
        }
        (Some(given), None) => Some(given),
        (None, recorded) => recorded,
    })
}
