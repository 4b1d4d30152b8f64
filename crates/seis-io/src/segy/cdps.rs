//! Where the traces of a SEG-Y or SU file sit by their CDP numbers (bytes 21-24 of the trace header): the
//! inline and crossline of each CDP a caller asks for, as velocity cards that name CDPs need them.

use std::collections::{BTreeSet, HashMap};

use super::file::SegyFile;
use seis_core::cancel::CancelToken;
use seis_core::error::Result;

/// The lines of the CDPs asked for, and the CDP numbers the file holds.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CdpLines {
    /// For each CDP asked for that the file holds, the `(inline, crossline)` of its traces: one, or the
    /// first two distinct places when the number is on several.
    pub lines: HashMap<i64, Vec<(i64, i64)>>,
    /// The smallest and largest CDP number of the file's traces.
    pub range: Option<[i64; 2]>,
}

/// Read every trace header of `file` once and place the CDPs of `wanted`, by the inline and crossline
/// numbers at the byte locations the file was opened with.
pub fn cdp_lines(file: &SegyFile, wanted: &BTreeSet<i64>) -> Result<CdpLines> {
    let cancel = CancelToken::process();
    let mut out = CdpLines::default();
    for i in 0..file.trace_count() {
        if i % 4096 == 0 {
            cancel.check()?;
        }
        let h = file.trace_header(i)?;
        let cdp = i64::from(h.cdp);
        out.range = Some(match out.range {
            None => [cdp, cdp],
            Some([lo, hi]) => [lo.min(cdp), hi.max(cdp)],
        });
        if wanted.contains(&cdp) {
            let at = (i64::from(h.iline), i64::from(h.xline));
            let places = out.lines.entry(cdp).or_default();
            if places.len() < 2 && !places.contains(&at) {
                places.push(at);
            }
        }
    }
    Ok(out)
}
