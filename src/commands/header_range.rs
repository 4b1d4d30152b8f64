//! `seisimage info --headers-range`: every numeric field of the trace headers of a SEG-Y or SU file,
//! surveyed over the whole file (its smallest and largest value and how many distinct values it takes), as
//! Seismic Unix's `surange` does. Fields that are zero on every trace are left out. It is how a user sees at
//! once which bytes a file uses and for what: line numbers that step, coordinates, a CDP that counts.

use std::collections::HashSet;
use std::fmt::Write;

use serde::Serialize;

use seisimage::cancel::CancelToken;
use seisimage::io::segy::{ByteOrder, SegyFile, SegyLayout};

use super::headers::{Kind, TRACE};

/// Distinct values are counted up to this many per field: a field that takes more (a sequence number, a
/// coordinate) is one that changes from trace to trace, and holding all its values would cost memory in
/// proportion to the file.
pub const DISTINCT_CAP: usize = 1000;

/// The survey of one field.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct FieldRange {
    /// First byte, 1-based within the 240-byte trace header.
    pub byte: usize,
    /// Its length in bytes.
    pub length: usize,
    pub name: &'static str,
    pub min: i64,
    pub max: i64,
    /// Distinct values, counted up to [`DISTINCT_CAP`].
    pub distinct: usize,
    /// Whether the field takes more distinct values than [`DISTINCT_CAP`].
    pub distinct_capped: bool,
}

/// The survey of a file.
#[derive(Clone, Debug, Serialize)]
pub struct HeadersRange {
    pub file: String,
    pub traces: usize,
    pub byte_order: &'static str,
    /// The fields not zero on every trace, in header order.
    pub fields: Vec<FieldRange>,
}

/// The numeric fields of the trace header (the undefined and byte-string ones are left out).
fn numeric() -> impl Iterator<Item = (usize, usize, Kind, &'static str)> {
    TRACE.iter().copied().filter(|f| matches!(f.2, Kind::I16 | Kind::U16 | Kind::I32))
}

fn read(bytes: &[u8], kind: Kind, order: ByteOrder) -> i64 {
    match kind {
        Kind::I16 => order.read_i16([bytes[0], bytes[1]]).into(),
        Kind::U16 => order.read_u16([bytes[0], bytes[1]]).into(),
        _ => order.read_i32([bytes[0], bytes[1], bytes[2], bytes[3]]).into(),
    }
}

/// Read every trace header of `file` once.
pub fn survey(file: &SegyFile) -> anyhow::Result<HeadersRange> {
    let fields: Vec<_> = numeric().collect();
    let order = file.byte_order();
    let mut ranges = vec![(i64::MAX, i64::MIN); fields.len()];
    let mut values: Vec<HashSet<i64>> = vec![HashSet::new(); fields.len()];
    let mut capped = vec![false; fields.len()];
    for t in 0..file.trace_count() {
        if t % 4096 == 0 {
            CancelToken::process().check()?;
        }
        file.prefetch_header(t + 32);
        let header = file.trace_header_bytes(t)?;
        for (k, &(at, len, kind, _)) in fields.iter().enumerate() {
            let v = read(&header[at - 1..at - 1 + len], kind, order);
            ranges[k] = (ranges[k].0.min(v), ranges[k].1.max(v));
            if !capped[k] && values[k].insert(v) && values[k].len() > DISTINCT_CAP {
                capped[k] = true;
                values[k] = HashSet::new();
            }
        }
    }
    let fields = fields
        .iter()
        .enumerate()
        .filter(|&(k, _)| ranges[k] != (0, 0) && file.trace_count() > 0)
        .map(|(k, &(byte, length, _, name))| FieldRange {
            byte,
            length,
            name,
            min: ranges[k].0,
            max: ranges[k].1,
            distinct: if capped[k] { DISTINCT_CAP } else { values[k].len() },
            distinct_capped: capped[k],
        })
        .collect();
    Ok(HeadersRange {
        file: file.path().display().to_string(),
        traces: file.trace_count(),
        byte_order: if order == ByteOrder::Big { "big" } else { "little" },
        fields,
    })
}

/// The survey as a table.
pub fn table(r: &HeadersRange, layout: SegyLayout) -> String {
    let mut s = String::new();
    let what = if layout == SegyLayout::SeismicUnix { "Seismic Unix" } else { "SEG-Y" };
    let _ = writeln!(
        s,
        "{}: {what}, {}-endian, {} traces; trace header fields that are not zero on every trace (bytes within the \
         header, values as stored, scalars not applied):",
        r.file, r.byte_order, r.traces
    );
    let _ = writeln!(s, "  {:>7}  {:<50} {:>12} {:>12} {:>9}", "bytes", "field", "min", "max", "distinct");
    for f in &r.fields {
        let bytes = format!("{}-{}", f.byte, f.byte + f.length - 1);
        let distinct = if f.distinct_capped { format!(">{DISTINCT_CAP}") } else { f.distinct.to_string() };
        let _ = writeln!(s, "  {bytes:>7}  {:<50} {:>12} {:>12} {distinct:>9}", f.name, f.min, f.max);
    }
    if r.fields.is_empty() {
        let _ = writeln!(s, "  (every field is zero on every trace)");
    }
    s
}
