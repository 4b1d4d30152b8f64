//! Every segyio fixture (tests/data/segyio), read with seisimage and compared with what segyio 1.9 finds in it
//! (`reference.json`, written by scripts/segyio_reference.py), or refused with a message that says why.
//!
//! Where segyio cannot read a fixture, or reads it wrongly, the expectation says so and the values are checked
//! against another fixture holding the same data, read by segyio.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use seisimage::error::Location;
use seisimage::io::segy::{ByteOrder, ByteOrderSource, SegyFile, SegyOptions, SegyReader, TextEncoding};
use seisimage::volume::{Domain, VolumeReader};
use seisimage::Error;
use serde_json::Value;
use sha2::{Digest, Sha256};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/segyio")
}

fn reference() -> BTreeMap<String, Value> {
    let text = std::fs::read_to_string(fixtures().join("reference.json")).expect("reference.json");
    let v: Value = serde_json::from_str(&text).expect("reference.json is JSON");
    v["files"].as_object().expect("files").clone().into_iter().collect()
}

/// What seisimage must do with a fixture.
enum Expect {
    /// A grid with segyio's inlines, crosslines, samples and values.
    Grid,
    /// segyio reads its traces but it is no post-stack grid: the same traces through `SegyFile`, and the
    /// grid refused with a message containing all these words.
    TracesButNoGrid(&'static [&'static str]),
    /// Neither reader can use it: refused on opening, with these words and a byte offset.
    Refused(&'static [&'static str]),
    /// segyio cannot read it, or reads it wrongly: checked by the function, which says why.
    Own(fn(&Path, &BTreeMap<String, Value>)),
}

fn expectation(name: &str) -> Expect {
    const PRESTACK: &[&str] = &["pre-stack data", "differ by offset (byte 37", "stack the gathers"];
    match name {
        "broken.sgy" => Expect::Refused(&["at byte 10768", "ends 68 bytes into trace 4", "truncated"]),
        "mapping-empty.sgy" => Expect::Refused(&["at byte 8208", "ends 128 bytes into trace 19"]),
        "small.su" | "small-lsb.su" => Expect::Own(su_holds_the_grid_of_small_sgy),
        "1x1.sgy" | "1xN.sgy" | "Mx1.sgy" => Expect::TracesButNoGrid(PRESTACK),
        n if n.starts_with("small-ps") => Expect::TracesButNoGrid(PRESTACK),
        "shot-gather.sgy" => Expect::TracesButNoGrid(&[
            "not a post-stack grid",
            "traces 1 and 2 both have inline 0 crossline 0 (at bytes 189/193)",
            "same offset",
            "usual locations (5/21, 9/21) give no grid either",
        ]),
        "long.sgy" => Expect::TracesButNoGrid(&["not a post-stack grid", "grid cells, more than 4 per trace"]),
        "mapping-minimal.sgy" => Expect::TracesButNoGrid(&[
            "not a post-stack grid",
            "bytes 1/5 give a grid of 3 inlines × 2 crosslines with 0 missing traces, as the file's SEG:Layout",
        ]),
        "mapping-shifted.sgy" => Expect::TracesButNoGrid(&[
            "not a post-stack grid",
            "bytes 190/194 give a grid of 3 inlines × 2 crosslines with 0 missing traces, as the file's SEG:Layout",
        ]),
        "mapping-unsupported-type.sgy" => Expect::TracesButNoGrid(&["not a post-stack grid", "bytes 1/5 give a grid"]),
        "multiformats/Format4lsb.sgy" | "multiformats/Format4msb.sgy" => Expect::Own(format_4_is_refused),
        "multiformats/Format7lsb.sgy" | "multiformats/Format7msb.sgy" => Expect::Own(three_byte_signed),
        "multiformats/Format15lsb.sgy" | "multiformats/Format15msb.sgy" => Expect::Own(three_byte_unsigned),
        "decrement.sgy" | "increment.sgy" | "decrement-lsb.sgy" | "increment-lsb.sgy" => {
            Expect::Own(every_field_at_its_limit)
        }
        "rotated-small-rev2.sgy" => Expect::Own(rev2_additional_trace_header),
        "trace-header-extension1.sgy" | "trace-header-extensions.sgy" => Expect::Own(rev21_additional_trace_headers),
        "mapping-all-types.sgy"
        | "mapping-all-types-lsb.sgy"
        | "mapping-encoding-ext1.sgy"
        | "mapping-encoding-private.sgy"
        | "mapping-mixed-order.sgy"
        | "mapping-no-extension1.sgy" => Expect::Own(rev21_lines_only_in_a_layout),
        "stanzas-unknown-count.sgy" => Expect::Own(text_headers_up_to_end_text),
        "interval-neg-bin-neg-trace.sgy" => Expect::Own(no_sample_interval),
        "text.sgy" => Expect::Own(no_traces),
        _ => Expect::Grid,
    }
}

#[test]
fn every_fixture_reads_as_segyio_reads_it_or_is_refused_with_a_reason() {
    let reference = reference();
    let mut on_disk = Vec::new();
    collect(&fixtures(), &mut on_disk);
    let on_disk: Vec<String> =
        on_disk.iter().map(|p| p.strip_prefix(fixtures()).unwrap().to_string_lossy().replace('\\', "/")).collect();
    let listed: Vec<String> = reference.keys().cloned().collect();
    assert_eq!(on_disk, listed, "reference.json must cover exactly the fixtures on disk (rerun the script)");

    let mut failures = Vec::new();
    for name in &listed {
        let path = fixtures().join(name);
        let r = &reference[name];
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match expectation(name) {
            Expect::Grid => same_grid(&path, r),
            Expect::TracesButNoGrid(words) => {
                same_traces(&path, r);
                assert_refused(SegyReader::open(&path, &SegyOptions::default()).err(), name, words);
            }
            Expect::Refused(words) => {
                let error = SegyFile::open(&path, &SegyOptions::default()).err();
                let location = match &error {
                    Some(Error::Format { location, .. }) => *location,
                    _ => Location::File,
                };
                assert!(matches!(location, Location::Byte(_)), "refused at a byte offset: {error:?}");
                assert_refused(error, name, words);
            }
            Expect::Own(check) => check(&path, &reference),
        }));
        if let Err(e) = outcome {
            let why = e.downcast_ref::<String>().cloned().or(e.downcast_ref::<&str>().map(|s| s.to_string()));
            failures.push(format!("{name}: {}", why.unwrap_or_default()));
        }
    }
    assert!(failures.is_empty(), "{} fixtures differ:\n{}", failures.len(), failures.join("\n"));
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            collect(&p, out);
        } else if matches!(p.extension().and_then(|e| e.to_str()), Some("sgy" | "su")) {
            out.push(p);
        }
    }
    out.sort();
}

fn digest(values: &[f32]) -> String {
    let mut h = Sha256::new();
    for v in values {
        h.update(v.to_le_bytes());
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// Every trace of the file in file order.
fn all_traces(file: &SegyFile) -> Vec<f32> {
    let ns = file.samples_per_trace();
    let mut out = vec![0.0; file.trace_count() * ns];
    for (i, trace) in out.chunks_mut(ns).enumerate() {
        file.read_trace(i, trace).unwrap();
    }
    out
}

fn read_all(reader: &SegyReader) -> Vec<f32> {
    let mut out = vec![f32::NAN; reader.geometry().n_values()];
    reader.read_all(&mut out).unwrap();
    out
}

fn open(path: &Path) -> SegyReader {
    SegyReader::open(path, &SegyOptions::default()).unwrap_or_else(|e| panic!("{e}"))
}

/// Format, counts, interval and first sample as segyio states them.
fn same_facts(file: &SegyFile, r: &Value) {
    assert_eq!(file.format().code() as u64, r["format"].as_u64().unwrap(), "sample format");
    assert_eq!(file.trace_count() as u64, r["tracecount"].as_u64().unwrap(), "trace count");
    let axis = file.sample_axis();
    assert_eq!(axis.len as u64, r["samples"].as_u64().unwrap(), "samples per trace");
    assert_eq!(axis.step, r["dt_ms"].as_f64().unwrap(), "sample interval");
    assert_eq!(axis.origin, r["t0_ms"].as_f64().unwrap(), "first sample");
    assert_eq!(axis.domain, Domain::Time);
    let expected_order = if r["endian"] == "little" { ByteOrder::Little } else { ByteOrder::Big };
    assert_eq!(file.byte_order(), expected_order);
}

fn same_traces(path: &Path, r: &Value) {
    let file = SegyFile::open(path, &SegyOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    same_facts(&file, r);
    assert_eq!(digest(&all_traces(&file)), r["traces"]["sha256"].as_str().unwrap(), "trace values in file order");
}

fn same_grid(path: &Path, r: &Value) {
    assert_eq!(r["structured"], true, "segyio reads it as a grid");
    same_traces(path, r);
    let reader = open(path);
    let g = reader.geometry();
    let values = |axis: &seisimage::volume::LineAxis| -> Vec<i64> { (0..axis.len).map(|i| axis.value(i)).collect() };
    let as_i64 = |v: &Value| -> Vec<i64> { v.as_array().unwrap().iter().map(|x| x.as_i64().unwrap()).collect() };
    assert_eq!(values(&g.ilines), as_i64(&r["ilines"]), "inlines");
    assert_eq!(values(&g.xlines), as_i64(&r["xlines"]), "crosslines");
    assert_eq!(g.n_missing(), 0);
    assert_eq!(digest(&read_all(&reader)), r["cube"]["sha256"].as_str().unwrap(), "volume in [il][xl][s] order");
}

/// segyio's SU fixtures hold the traces of small.sgy, big- and little-endian; segyio's SEG-Y reader
/// refuses them (no file headers), seisimage's reads them as SU and refuses them as SEG-Y, pointing to SU.
fn su_holds_the_grid_of_small_sgy(path: &Path, reference: &BTreeMap<String, Value>) {
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    let as_segy = SegyFile::open(path, &SegyOptions::default()).err();
    assert_refused(as_segy, &name, &["cannot tell the byte order", "Seismic Unix", "format to \"su\""]);
    // Their trace headers leave dt at 0 (small.sgy states it in its binary header only).
    let no_interval = SegyReader::open_su(path, &SegyOptions::default()).err();
    assert_refused(no_interval, &name, &["trace header field 117-118 (dt) of trace 1 holds 0", "sample_interval"]);
    let reader = SegyReader::open_su(path, &SegyOptions { sample_interval: Some(4.0), ..Default::default() }).unwrap();
    let order = if name.contains("lsb") { ByteOrder::Little } else { ByteOrder::Big };
    assert_eq!(reader.file().byte_order(), order);
    // These fixtures store the 4-byte line numbers at 189/193 in the other byte order than the sample count
    // and the samples (small.su: bytes 01 00 00 00 for inline 1), so the lines read as their values × 2^24,
    // in the same order.
    let g = reader.geometry();
    assert_eq!((g.ilines.first, g.ilines.len, g.xlines.first, g.xlines.len), (1 << 24, 5, 20 << 24, 5));
    assert_eq!((g.samples.step, g.samples.len), (4.0, 50));
    assert_eq!(digest(&read_all(&reader)), cube_digest(reference, "small.sgy"));
}

fn assert_refused(error: Option<Error>, name: &str, words: &[&str]) {
    let error = error.unwrap_or_else(|| panic!("{name} must be refused"));
    assert!(matches!(error, Error::Format { .. }), "not a format error: {error}");
    let message = error.to_string();
    let file_name = Path::new(name).file_name().unwrap().to_string_lossy();
    assert!(message.contains(&*file_name), "the message names the file: {message}");
    for w in words {
        assert!(message.contains(w), "expected {w:?} in: {message}");
    }
}

fn cube_digest(reference: &BTreeMap<String, Value>, name: &str) -> String {
    reference[name]["cube"]["sha256"].as_str().unwrap().to_string()
}

/// Code 4 (fixed point with gain) is obsolete and refused. segyio warns that it falls back to IBM floats, yet
/// returns F3's values: these files hold the IEEE floats of Format5*.sgy under code 4, and forcing format 5
/// reads them.
fn format_4_is_refused(path: &Path, reference: &BTreeMap<String, Value>) {
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    assert_refused(
        SegyFile::open(path, &SegyOptions::default()).err(),
        &name,
        &["sample format code 4", "not supported", "sample_format = 5"],
    );
    let forced = SegyOptions { sample_format: Some(5), ..Default::default() };
    let reader = SegyReader::open(path, &forced).unwrap();
    assert_eq!(digest(&read_all(&reader)), cube_digest(reference, "f3.sgy"));
}

/// Format 7 (3-byte signed integers), which segyio does not support (it falls back to IBM floats and gets
/// NaNs): the same integers as f3.sgy (2-byte, read by segyio).
fn three_byte_signed(path: &Path, reference: &BTreeMap<String, Value>) {
    let reader = open(path);
    assert_eq!(reader.file().format().code(), 7);
    assert_eq!(digest(&read_all(&reader)), cube_digest(reference, "f3.sgy"));
}

/// Format 15 (3-byte unsigned), not supported by segyio either: F3's 2-byte integers with negative values
/// stored as their 24-bit two's complement, as formats 10, 11 and 16 of the same set store them (their sums
/// in reference.json differ from F3's by whole multiples of 2^32, 2^16 and 2^8).
fn three_byte_unsigned(path: &Path, reference: &BTreeMap<String, Value>) {
    let f3 = open(&fixtures().join("f3.sgy"));
    let f3_values = read_all(&f3);
    assert_eq!(digest(&f3_values), cube_digest(reference, "f3.sgy"));
    let wrapped: Vec<f32> = f3_values.iter().map(|&v| if v < 0.0 { v + 16_777_216.0 } else { v }).collect();
    let reader = open(path);
    assert_eq!(reader.file().format().code(), 15);
    assert_eq!(read_all(&reader), wrapped);
}

/// segyio's test files with every header field at an extreme: revision 218 (decrement) or 36 (increment),
/// 4 samples from the rev-2 extended count, the byte order from the rev-2 constant.
///
/// - decrement: the rev-2 double at 3273-3280 holds more than 10^15 µs, outside what seisimage takes as an
///   interval (1 ns to 10 s), so the interval comes from 3217-3218 (32762 µs); segyio 1.9 ignores the
///   double, and its interval is a 4 ms fallback because 3217 and trace byte 117 disagree.
/// - increment: every interval field is negative. seisimage refuses to guess (as for
///   interval-neg-bin-neg-trace.sgy); segyio assumes 4 ms, which the test then sets explicitly.
/// - The -lsb twins, which segyio 1.9 cannot open (it ignores the extended sample count in little-endian
///   files), hold the same values as the big-endian files.
///
/// Their line numbers span no grid.
fn every_field_at_its_limit(path: &Path, reference: &BTreeMap<String, Value>) {
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    let mut r = reference[&name.replace("-lsb", "")].clone();
    let order = if name.contains("-lsb") { ByteOrder::Little } else { ByteOrder::Big };
    r["endian"] = if order == ByteOrder::Little { "little" } else { "big" }.into();
    assert_eq!(r["dt_ms"], 4.0);
    let opts = if name.starts_with("increment") {
        let error = SegyFile::open(path, &SegyOptions::default()).err();
        assert_refused(error, &name, &["no sample interval", "3217-3218 holds -32763", "set the sample interval"]);
        SegyOptions { sample_interval: Some(4.0), ..Default::default() }
    } else {
        SegyOptions::default()
    };
    let file = SegyFile::open(path, &opts).unwrap();
    assert_eq!((file.byte_order(), file.byte_order_source()), (order, ByteOrderSource::Constant));
    if name.starts_with("decrement") {
        let extended = file.binary_header().ext_sample_interval;
        assert!(extended > 1e15, "{extended}");
        assert_eq!(file.binary_header().sample_interval, 32762);
        r["dt_ms"] = 32.762.into();
    }
    same_facts(&file, &r);
    assert_eq!(digest(&all_traces(&file)), r["traces"]["sha256"].as_str().unwrap());
    assert_refused(SegyReader::open(path, &opts).err(), &name, &["not a post-stack grid"]);
}

/// Rev 2.0 with one additional trace header per trace (bytes 3507-3508), which segyio 1.9 does not skip:
/// small.sgy's volume on a rotated grid (x grows along crosslines, y falls along inlines, 1 m bins).
fn rev2_additional_trace_header(path: &Path, reference: &BTreeMap<String, Value>) {
    let reader = open(path);
    assert_eq!(reader.file().extra_trace_headers(), 1);
    assert_eq!(digest(&read_all(&reader)), cube_digest(reference, "small.sgy"));
    let c = reader.geometry().coords.unwrap();
    assert_eq!((c.per_iline, c.per_xline), ([0.0, -1.0], [1.0, 0.0]));
    assert_eq!(reader.summary().coordinate_misfit, Some(0.0));
}

/// Rev 2.1 with 1 and 2 additional trace headers, which segyio 1.9 does not skip: tiny.sgy's data (3 × 2
/// traces of 4 samples), or its first inline.
fn rev21_additional_trace_headers(path: &Path, reference: &BTreeMap<String, Value>) {
    let reader = open(path);
    let tiny = open(&fixtures().join("tiny.sgy"));
    let tiny_values = read_all(&tiny);
    assert_eq!(digest(&tiny_values), cube_digest(reference, "tiny.sgy"));
    let g = reader.geometry();
    let n = g.n_values();
    assert_eq!((g.ilines.first, g.xlines.first, g.xlines.len), (1, 20, 2));
    assert_eq!(read_all(&reader), tiny_values[..n]);
}

/// Rev 2.1 files whose inline and crossline numbers exist only where their SEG:Layout stanza puts them (bytes
/// 1 and 5; the standard fields are 0), which segyio 1.9 cannot open: two traces, tiny.sgy's first two. At
/// the standard bytes both are at (0, 0) (with offsets 0 and 1 in some, which then look like one pre-stack
/// gather); the message points to the stanza's bytes.
fn rev21_lines_only_in_a_layout(path: &Path, _: &BTreeMap<String, Value>) {
    let file = SegyFile::open(path, &SegyOptions::default()).unwrap();
    let tiny = SegyFile::open(&fixtures().join("tiny.sgy"), &SegyOptions::default()).unwrap();
    assert_eq!(file.trace_count(), 2);
    assert_eq!(all_traces(&file), all_traces(&tiny)[..8]);
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    assert_refused(
        SegyReader::open(path, &SegyOptions::default()).err(),
        &name,
        &["at bytes 189/193", "bytes 1/5 give a grid of 1 inlines × 2 crosslines", "SEG:Layout stanza declares"],
    );
}

/// Extended text header count -1: records up to the ((SEG: EndText)) stanza, three here. segyio 1.9 does not
/// know -1 and reads the text records as traces (56 of them); segyio 2 finds 6 traces, as seisimage does:
/// tiny.sgy's grid.
fn text_headers_up_to_end_text(path: &Path, reference: &BTreeMap<String, Value>) {
    let reader = open(path);
    assert_eq!(reader.file().text_header().extended.len(), 3);
    assert_eq!(reader.file().trace_count(), 6);
    assert_eq!(digest(&read_all(&reader)), cube_digest(reference, "tiny.sgy"));
}

/// Both intervals negative (binary -2000, trace -25000): segyio assumes 4 ms; seisimage refuses to guess.
fn no_sample_interval(path: &Path, _: &BTreeMap<String, Value>) {
    assert_refused(
        SegyFile::open(path, &SegyOptions::default()).err(),
        "interval-neg-bin-neg-trace.sgy",
        &["no sample interval", "3217-3218 holds -2000", "117-118 of the first trace -25000"],
    );
}

/// Headers only. segyio fails with an index error; seisimage opens the file (0 traces) and refuses it as a
/// volume.
fn no_traces(path: &Path, _: &BTreeMap<String, Value>) {
    let file = SegyFile::open(path, &SegyOptions::default()).unwrap();
    assert_eq!(file.trace_count(), 0);
    assert_refused(
        SegyReader::open(path, &SegyOptions::default()).err(),
        "text.sgy",
        &["holds no traces", "at byte 3600"],
    );
}

#[test]
fn text_headers_are_decoded_in_their_encoding() {
    // segyio 1.9 decodes every text header as EBCDIC; delay-scalar.sgy is ASCII.
    let ascii = open(&fixtures().join("delay-scalar.sgy"));
    let t = ascii.file().text_header();
    assert_eq!(t.encoding, TextEncoding::Ascii);
    assert!(t.text.split('\n').all(|line| line.starts_with('C')), "{}", t.text);
    assert_eq!(ascii.geometry().samples.origin, 1000.0, "delay 10000 with time scalar -10");
    let ebcdic = open(&fixtures().join("multi-text.sgy"));
    let t = ebcdic.file().text_header();
    assert_eq!((t.encoding, t.extended.len()), (TextEncoding::Ebcdic, 4));
    assert!(t.text.split('\n').all(|line| line.starts_with('C')), "{}", t.text);
    let stanzas = open(&fixtures().join("stanzas-known-count.sgy"));
    let ext = &stanzas.file().text_header().extended;
    assert!(ext[1].starts_with("((SEGYIO:Test EBCDIC data))"), "an EBCDIC stanza among ASCII ones: {}", ext[1]);
}

#[test]
fn f3_summary_matches_its_headers() {
    let reader = open(&fixtures().join("f3.sgy"));
    let s = reader.summary();
    assert_eq!((s.ilines.first, s.ilines.last, s.ilines.count), (111, 133, 23));
    assert_eq!((s.xlines.first, s.xlines.last, s.xlines.count), (875, 892, 18));
    assert_eq!((s.sample_format.code, s.sample_format.bytes), (3, 2));
    assert_eq!((s.samples.count, s.samples.interval, s.samples.first), (75, 4.0, 4.0));
    assert_eq!(s.coordinate_scalar, -10);
    // CDP x of the first two traces is 6201972 and 6202222 with scalar -10: 25 m crossline spacing, about.
    assert!(s.x_range[0] <= 620_197.2 && s.x_range[1] >= 620_222.2, "{:?}", s.x_range);
    let [il_bin, xl_bin] = s.bin_size.unwrap();
    assert!((xl_bin - 25.0).abs() < 0.1 && (il_bin - 25.0).abs() < 0.1, "{il_bin} {xl_bin}");
    assert_eq!(s.revision, "1.0");
    assert_eq!(s.missing_traces, 0);
    let json = serde_json::to_value(&s).unwrap();
    assert_eq!(json["sorting"]["sorting"], "inline");
    assert_eq!(json["byte_order"], "big");
}
