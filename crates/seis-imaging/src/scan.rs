//! Several migrations of one input from one ingest (a velocity scan): the plans of its migrations differ
//! in the velocity only, so the input is read, windowed, transformed and (on a GPU) uploaded once, and
//! every member migrates each frequency band of that one spectrum (see [`super::bands`]): the band is
//! transformed once and restored for each member from a copy, as the methods change it in place.
//! [`check`] is what makes that sound: every plan must make the same spectrum.

use super::Migration;
use seis_core::error::{Error, Result};

/// Whether plans `a` and `b` make the same spectrum from the same input: the same grid, padding, tapers,
/// frequency band and ingest chunks.
pub(crate) fn same_ingest(a: &super::Plan, b: &super::Plan) -> bool {
    a.input.shape() == b.input.shape()
        && a.input.samples == b.input.samples
        && a.padded == b.padded
        && a.band == b.band
        && a.frequencies == b.frequencies
        && a.dt == b.dt
        && a.t0 == b.t0
        && a.bin == b.bin
        && a.window == b.window
        && a.ingest_inlines == b.ingest_inlines
        && a.nonfinite == b.nonfinite
        && a.method == b.method
}

/// Refuse a scan whose migrations do not share their input, ingest and request, or whose sinks do not match them
/// one to one (a fault in the caller, not in the job).
pub fn check(scan: &[Migration], sinks: usize) -> Result<()> {
    let Some(first) = scan.first() else { return Err(Error::Internal("a velocity scan of no migration".into())) };
    if sinks != scan.len() {
        return Err(Error::Internal(format!("{} migrations and {sinks} product sinks", scan.len())));
    }
    for (i, m) in scan.iter().enumerate().skip(1) {
        if !std::ptr::addr_eq(m.input, first.input) || !same_ingest(m.plan, first.plan) || m.request != first.request {
            return Err(Error::Internal(format!(
                "migration {} of a scan does not share the first one's ingest",
                i + 1
            )));
        }
    }
    Ok(())
}
