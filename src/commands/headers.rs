//! `seisimage info --raw-headers`: the headers of a SEG-Y file as stored, field by field with their bytes, for
//! any file the SEG-Y layer can open, grid or not. It is how a user finds where a file keeps its line
//! numbers and coordinates when seisimage cannot find a grid at the usual bytes.
//!
//! The field tables follow the SEG-Y standard's byte positions (rev 1, with the rev 2 additions of the
//! binary header); the values are read from the file's bytes in its byte order, scalars not applied.

use std::fmt::Write;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use seisimage::io::segy::{ByteOrder, HeaderLocations, SegyFile, SegyLayout};

/// How a field's bytes read.
#[derive(Clone, Copy)]
pub(super) enum Kind {
    I16,
    U16,
    I32,
    U64,
    F64,
    U8,
    /// Shown as hexadecimal bytes.
    Hex,
}

/// A header field: its first byte (1-based, in the header), its length, how it reads, and its name.
pub(super) type Field = (usize, usize, Kind, &'static str);

/// The binary file header, bytes 3201-3600 of the file.
const BINARY: &[Field] = &[
    (3201, 4, Kind::I32, "job identification number"),
    (3205, 4, Kind::I32, "line number"),
    (3209, 4, Kind::I32, "reel number"),
    (3213, 2, Kind::I16, "data traces per ensemble"),
    (3215, 2, Kind::I16, "auxiliary traces per ensemble"),
    (3217, 2, Kind::I16, "sample interval (µs; mm in depth files)"),
    (3219, 2, Kind::I16, "sample interval of the original recording"),
    (3221, 2, Kind::U16, "samples per data trace"),
    (3223, 2, Kind::U16, "samples per trace of the original recording"),
    (3225, 2, Kind::I16, "data sample format code"),
    (3227, 2, Kind::I16, "ensemble fold"),
    (3229, 2, Kind::I16, "trace sorting code"),
    (3231, 2, Kind::I16, "vertical sum code"),
    (3233, 2, Kind::I16, "sweep frequency at start (Hz)"),
    (3235, 2, Kind::I16, "sweep frequency at end (Hz)"),
    (3237, 2, Kind::I16, "sweep length (ms)"),
    (3239, 2, Kind::I16, "sweep type code"),
    (3241, 2, Kind::I16, "trace number of sweep channel"),
    (3243, 2, Kind::I16, "sweep taper length at start (ms)"),
    (3245, 2, Kind::I16, "sweep taper length at end (ms)"),
    (3247, 2, Kind::I16, "taper type"),
    (3249, 2, Kind::I16, "correlated data traces"),
    (3251, 2, Kind::I16, "binary gain recovered"),
    (3253, 2, Kind::I16, "amplitude recovery method"),
    (3255, 2, Kind::I16, "measurement system (1 metres, 2 feet)"),
    (3257, 2, Kind::I16, "impulse signal polarity"),
    (3259, 2, Kind::I16, "vibratory polarity code"),
    (3261, 4, Kind::I32, "extended data traces per ensemble (rev 2)"),
    (3265, 4, Kind::I32, "extended auxiliary traces per ensemble (rev 2)"),
    (3269, 4, Kind::I32, "extended samples per data trace (rev 2)"),
    (3273, 8, Kind::F64, "extended sample interval (rev 2)"),
    (3281, 8, Kind::F64, "extended sample interval of the original recording (rev 2)"),
    (3289, 4, Kind::I32, "extended samples per trace of the original recording (rev 2)"),
    (3293, 4, Kind::I32, "extended ensemble fold (rev 2)"),
    (3297, 4, Kind::Hex, "byte-order constant (01020304 as written; rev 2)"),
    (3501, 1, Kind::U8, "major revision"),
    (3502, 1, Kind::U8, "minor revision"),
    (3503, 2, Kind::I16, "fixed length trace flag"),
    (3505, 2, Kind::I16, "extended textual file headers"),
    (3507, 4, Kind::I32, "additional trace headers (rev 2)"),
    (3511, 2, Kind::I16, "time basis code"),
    (3513, 8, Kind::U64, "traces in this file (rev 2)"),
    (3521, 8, Kind::U64, "byte offset of the first trace (rev 2)"),
    (3529, 4, Kind::I32, "data trailer stanza records (rev 2)"),
];

/// The 240-byte trace header.
pub(super) const TRACE: &[Field] = &[
    (1, 4, Kind::I32, "trace sequence number within line"),
    (5, 4, Kind::I32, "trace sequence number within file"),
    (9, 4, Kind::I32, "original field record number"),
    (13, 4, Kind::I32, "trace number within the field record"),
    (17, 4, Kind::I32, "energy source point number"),
    (21, 4, Kind::I32, "ensemble (CDP) number"),
    (25, 4, Kind::I32, "trace number within the ensemble"),
    (29, 2, Kind::I16, "trace identification code (1 seismic, 2 dead)"),
    (31, 2, Kind::I16, "vertically summed traces"),
    (33, 2, Kind::I16, "horizontally stacked traces"),
    (35, 2, Kind::I16, "data use"),
    (37, 4, Kind::I32, "source-receiver offset"),
    (41, 4, Kind::I32, "receiver group elevation"),
    (45, 4, Kind::I32, "surface elevation at source"),
    (49, 4, Kind::I32, "source depth below surface"),
    (53, 4, Kind::I32, "datum elevation at receiver group"),
    (57, 4, Kind::I32, "datum elevation at source"),
    (61, 4, Kind::I32, "water depth at source"),
    (65, 4, Kind::I32, "water depth at group"),
    (69, 2, Kind::I16, "scalar for elevations and depths"),
    (71, 2, Kind::I16, "scalar for coordinates"),
    (73, 4, Kind::I32, "source x"),
    (77, 4, Kind::I32, "source y"),
    (81, 4, Kind::I32, "group x"),
    (85, 4, Kind::I32, "group y"),
    (89, 2, Kind::I16, "coordinate units"),
    (91, 2, Kind::I16, "weathering velocity"),
    (93, 2, Kind::I16, "subweathering velocity"),
    (95, 2, Kind::I16, "uphole time at source (ms)"),
    (97, 2, Kind::I16, "uphole time at group (ms)"),
    (99, 2, Kind::I16, "source static correction (ms)"),
    (101, 2, Kind::I16, "group static correction (ms)"),
    (103, 2, Kind::I16, "total static applied (ms)"),
    (105, 2, Kind::I16, "lag time A (ms)"),
    (107, 2, Kind::I16, "lag time B (ms)"),
    (109, 2, Kind::I16, "delay recording time (ms)"),
    (111, 2, Kind::I16, "mute time start (ms)"),
    (113, 2, Kind::I16, "mute time end (ms)"),
    (115, 2, Kind::U16, "samples in this trace"),
    (117, 2, Kind::I16, "sample interval (µs)"),
    (119, 2, Kind::I16, "gain type"),
    (121, 2, Kind::I16, "instrument gain constant (dB)"),
    (123, 2, Kind::I16, "instrument early gain (dB)"),
    (125, 2, Kind::I16, "correlated"),
    (127, 2, Kind::I16, "sweep frequency at start (Hz)"),
    (129, 2, Kind::I16, "sweep frequency at end (Hz)"),
    (131, 2, Kind::I16, "sweep length (ms)"),
    (133, 2, Kind::I16, "sweep type"),
    (135, 2, Kind::I16, "sweep taper length at start (ms)"),
    (137, 2, Kind::I16, "sweep taper length at end (ms)"),
    (139, 2, Kind::I16, "taper type"),
    (141, 2, Kind::I16, "alias filter frequency (Hz)"),
    (143, 2, Kind::I16, "alias filter slope"),
    (145, 2, Kind::I16, "notch filter frequency (Hz)"),
    (147, 2, Kind::I16, "notch filter slope"),
    (149, 2, Kind::I16, "low-cut frequency (Hz)"),
    (151, 2, Kind::I16, "high-cut frequency (Hz)"),
    (153, 2, Kind::I16, "low-cut slope"),
    (155, 2, Kind::I16, "high-cut slope"),
    (157, 2, Kind::I16, "year"),
    (159, 2, Kind::I16, "day of year"),
    (161, 2, Kind::I16, "hour"),
    (163, 2, Kind::I16, "minute"),
    (165, 2, Kind::I16, "second"),
    (167, 2, Kind::I16, "time basis code"),
    (169, 2, Kind::I16, "trace weighting factor"),
    (171, 2, Kind::I16, "geophone group of roll switch position one"),
    (173, 2, Kind::I16, "geophone group of the first trace"),
    (175, 2, Kind::I16, "geophone group of the last trace"),
    (177, 2, Kind::I16, "gap size"),
    (179, 2, Kind::I16, "over travel"),
    (181, 4, Kind::I32, "CDP x"),
    (185, 4, Kind::I32, "CDP y"),
    (189, 4, Kind::I32, "inline number"),
    (193, 4, Kind::I32, "crossline number"),
    (197, 4, Kind::I32, "shotpoint number"),
    (201, 2, Kind::I16, "scalar for the shotpoint number"),
    (203, 2, Kind::I16, "trace value measurement unit"),
    (205, 4, Kind::I32, "transduction constant, mantissa"),
    (209, 2, Kind::I16, "transduction constant, power of ten"),
    (211, 2, Kind::I16, "transduction units"),
    (213, 2, Kind::I16, "device / trace identifier"),
    (215, 2, Kind::I16, "scalar for times"),
    (217, 2, Kind::I16, "source type / orientation"),
    (219, 6, Kind::Hex, "source energy direction"),
    (225, 4, Kind::I32, "source measurement, mantissa"),
    (229, 2, Kind::I16, "source measurement, power of ten"),
    (231, 2, Kind::I16, "source measurement unit"),
    (233, 8, Kind::Hex, "unassigned (rev 2: header name)"),
];

/// The value of a field whose bytes are `b`, in `order`.
fn value(b: &[u8], kind: Kind, order: ByteOrder) -> String {
    let big = order == ByteOrder::Big;
    let array = |n: usize| -> [u8; 8] {
        let mut a = [0u8; 8];
        a[..n].copy_from_slice(&b[..n]);
        if !big {
            a[..n].reverse();
        }
        a
    };
    match kind {
        Kind::I16 => {
            let a = array(2);
            i16::from_be_bytes([a[0], a[1]]).to_string()
        }
        Kind::U16 => {
            let a = array(2);
            u16::from_be_bytes([a[0], a[1]]).to_string()
        }
        Kind::I32 => {
            let a = array(4);
            i32::from_be_bytes([a[0], a[1], a[2], a[3]]).to_string()
        }
        Kind::U64 => u64::from_be_bytes(array(8)).to_string(),
        Kind::F64 => f64::from_be_bytes(array(8)).to_string(),
        Kind::U8 => b[0].to_string(),
        Kind::Hex => b.iter().map(|x| format!("{x:02x}")).collect(),
    }
}

/// The lines of a header table: bytes (as in the file for the binary header, within the header for a
/// trace), name, value. `note` may add to a field's name (which bytes seisimage reads as what).
fn table(
    out: &mut String,
    header: &[u8],
    first_byte: usize,
    fields: &[Field],
    order: ByteOrder,
    note: impl Fn(usize) -> Option<&'static str>,
) {
    for &(at, len, kind, name) in fields {
        let bytes = &header[at - first_byte..at - first_byte + len];
        let place = if len == 1 { at.to_string() } else { format!("{at}-{}", at + len - 1) };
        let name = match note(at) {
            Some(n) => format!("{name} [{n}]"),
            None => name.to_string(),
        };
        let _ = writeln!(out, "  {place:>9}  {name:<58} {}", value(bytes, kind, order));
    }
}

/// The headers of the SEG-Y file `path` opened as `file`: text, binary, and the header of trace `trace`
/// (1-based), with the fields at `locations` marked as what seisimage reads there.
pub fn describe(path: &Path, file: &SegyFile, locations: &HeaderLocations, trace: usize) -> anyhow::Result<String> {
    let count = file.trace_count();
    if trace == 0 || trace > count {
        return Err(seisimage::Error::Request(format!(
            "{}: there is no trace {trace}; the file holds {count} traces (1..={count})",
            path.display()
        ))
        .into());
    }
    let order = file.byte_order();
    let mut s = String::new();
    let seismic_unix = file.layout() == SegyLayout::SeismicUnix;
    let _ = writeln!(
        s,
        "{}: {}, {}-endian, {} traces of {} samples ({}, {} bytes each with its header)",
        path.display(),
        if seismic_unix { "Seismic Unix (no file headers)" } else { "SEG-Y" },
        format!("{order:?}").to_lowercase(),
        count,
        file.samples_per_trace(),
        file.format().name(),
        file.trace_size()
    );
    if !seismic_unix {
        let mut binary = [0u8; 400];
        let mut f = seisimage::io::files::open_regular(path)?;
        f.seek(SeekFrom::Start(3200))
            .and_then(|_| f.read_exact(&mut binary))
            .map_err(|e| seisimage::Error::io(path, e))?;
        let text = file.text_header();
        let _ = writeln!(s, "\ntextual file header ({}):", format!("{:?}", text.encoding).to_lowercase());
        let _ = writeln!(s, "{}", text.text);
        for (k, record) in text.extended.iter().enumerate() {
            let _ = writeln!(s, "extended textual header {}:\n{record}", k + 1);
        }
        let _ = writeln!(s, "\nbinary file header (bytes 3201-3600 of the file):");
        table(&mut s, &binary, 3201, BINARY, order, |_| None);
    }
    let header = file.trace_header_bytes(trace - 1)?;
    let _ = writeln!(
        s,
        "\ntrace header of trace {trace} of {count} (bytes {}-{} of the file; positions within the header):",
        file.trace_offset(trace - 1) + 1,
        file.trace_offset(trace - 1) + 240
    );
    let marks = [
        (locations.iline, "read as the inline number"),
        (locations.xline, "read as the crossline number"),
        (locations.x, "read as x"),
        (locations.y, "read as y"),
    ];
    table(&mut s, header, 1, TRACE, order, |at| {
        marks.iter().find(|(byte, _)| usize::from(*byte) == at).map(|(_, what)| *what)
    });
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tables_cover_their_headers_in_order_without_overlap() {
        for (fields, start, end) in [(BINARY, 3201, 3532), (TRACE, 1, 240)] {
            assert_eq!(fields[0].0, start);
            let last = fields[fields.len() - 1];
            assert_eq!(last.0 + last.1 - 1, end);
            for w in fields.windows(2) {
                assert!(w[0].0 + w[0].1 <= w[1].0, "{} overlaps {}", w[0].3, w[1].3);
            }
        }
        // The trace header has no gap.
        assert!(TRACE.windows(2).all(|w| w[0].0 + w[0].1 == w[1].0));
    }

    #[test]
    fn values_read_in_either_byte_order() {
        assert_eq!(value(&[0xff, 0xfe], Kind::I16, ByteOrder::Big), "-2");
        assert_eq!(value(&[0xfe, 0xff], Kind::I16, ByteOrder::Little), "-2");
        assert_eq!(value(&[0, 0, 1, 0], Kind::I32, ByteOrder::Big), "256");
        assert_eq!(value(&[0, 1, 0, 0], Kind::I32, ByteOrder::Little), "256");
        assert_eq!(value(&[0xff, 0xff], Kind::U16, ByteOrder::Big), "65535");
        assert_eq!(value(&4000f64.to_le_bytes(), Kind::F64, ByteOrder::Little), "4000");
        assert_eq!(value(&[1, 2, 3, 4], Kind::Hex, ByteOrder::Little), "01020304");
    }
}
