//! The seismic's CDP numbers for velocity cards that place their functions by CDP: read from the trace
//! headers of the job's input (bytes 21-24), with the inline and crossline at the bytes the job reads them.

use std::collections::BTreeSet;

use crate::error::{Error, Result};
use crate::io::segy::cdps::{cdp_lines, CdpLines};
use crate::io::segy::SegyFile;
use crate::io::FileFormat;
use crate::job::InputConfig;

/// The lines of the CDPs of `wanted` in the input of a job; an input without trace headers (HDF5, NPY, an
/// array in memory) is refused with the keys that place the functions otherwise.
pub fn input_cdps(input: &InputConfig, wanted: &BTreeSet<i64>) -> Result<CdpLines> {
    let file = match crate::io::detect_format(&input.path, input.read.format) {
        Ok(FileFormat::Segy) => SegyFile::open(&input.path, &input.read.segy())?,
        Ok(FileFormat::Su) => SegyFile::open_su(&input.path, &input.read.segy())?,
        _ => {
            return Err(Error::at_key(
                "velocity.cdp_origin",
                format!(
                    "the velocity cards name CDPs, and {} has no SEG-Y trace headers to find them in: set \
                     velocity.cdp_origin = [cdp, iline, xline] (and velocity.cdp_step), or velocity.locate = \
                     \"coordinates\"",
                    input.path.display()
                ),
            ))
        }
    };
    cdp_lines(&file, wanted)
}
