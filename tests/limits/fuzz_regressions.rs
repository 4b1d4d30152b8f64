//! The inputs with which the fuzz targets of `fuzz/` found a fault (`tests/data/fuzz/<target>/`), and the
//! hand-made seeds of those targets (`fuzz/seeds/<target>/`), replayed by the normal test suite through the
//! same code the targets run (`fuzz/src/exercise.rs`, included here): no cargo-fuzz or nightly compiler
//! needed. A replay must not panic, must not allocate more than the fuzzer allowed (64 MiB: no input here is
//! larger than a few hundred KiB), and must end as listed below: every input is named with its outcome, so an
//! input added without a decision fails the test.

#[path = "../../fuzz/src/exercise.rs"]
mod exercise;

use std::path::{Path, PathBuf};

use crate::counting_allocator::{exclusive, peak_allocation};
use seisimage::io::segy::text::extended_record_count;

/// libFuzzer's `-malloc_limit_mb` in `fuzz/run.sh`.
const FUZZER_MALLOC_LIMIT: usize = 64 << 20;

/// The files of `tests/data/fuzz/<target>/` and `fuzz/seeds/<target>/`, by name.
fn inputs(target: &str) -> Vec<(String, PathBuf)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut found: Vec<(String, PathBuf)> =
        [root.join("tests/data/fuzz").join(target), root.join("fuzz/seeds").join(target)]
            .iter()
            .filter_map(|dir| std::fs::read_dir(dir).ok())
            .flatten()
            .map(|entry| entry.unwrap().path())
            .map(|path| (path.file_name().unwrap().to_string_lossy().into_owned(), path))
            .collect();
    found.sort();
    assert!(!found.is_empty(), "no inputs for {target}");
    found
}

/// Run `f` on one input, checking its allocations against the fuzzer's limit.
fn replay<T>(name: &str, f: impl FnOnce() -> T) -> T {
    let (out, peak) = peak_allocation(f);
    assert!(peak <= FUZZER_MALLOC_LIMIT, "{name}: {peak} bytes allocated at once");
    out
}

/// The outcome of opening an input: `Ok`, or an error whose message holds the given text.
fn check<T>(name: &str, outcome: &seisimage::Result<T>, expected: Option<&str>) {
    match (outcome, expected) {
        (Ok(_), None) => {}
        (Err(e), Some(says)) if e.to_string().contains(says) => {}
        (Ok(_), Some(says)) => panic!("{name}: opens, where an error saying '{says}' was expected"),
        (Err(e), _) => panic!("{name}: {e}, where {expected:?} was expected"),
    }
}

#[test]
fn segy_open_inputs() {
    let _one_at_a_time = exclusive();
    for (name, path) in inputs("segy_open") {
        // Per option set (auto, petrel, big-ieee, little-4ms): None when the volume opens.
        let expected: [Option<&str>; 4] = match name.as_str() {
            "rev21-little-endtext.sgy" => [
                None,
                Some("not a post-stack grid: traces 1 and 2 both have inline 0 crossline 0 (at bytes 5/21)"),
                Some("3521-3528 puts the first trace at byte 1163899028698562560, outside the file (11632 bytes)"),
                None,
            ],
            other => panic!("no outcome listed for segy_open input {other}"),
        };
        let outcomes = replay(&name, || exercise::segy(&path));
        for ((set, outcome), expected) in outcomes.iter().zip(expected) {
            check(&format!("{name} ({set})"), outcome, expected);
        }
    }
}

#[test]
fn segy_header_inputs() {
    let _one_at_a_time = exclusive();
    for (name, path) in inputs("segy_headers") {
        assert!(["empty-file-with-text-count-minus-1"].contains(&name.as_str()), "no decision for {name}");
        let bytes = std::fs::read(&path).unwrap();
        replay(&name, || exercise::segy_headers(&bytes));
    }
}

#[test]
fn extended_text_headers_of_a_file_shorter_than_its_file_header() {
    // What the empty input found: the count of extended text records indexed past the end of a short file.
    let (at, message) = extended_record_count(&[], -1).unwrap_err();
    assert_eq!(at, 3504);
    assert_eq!(
        message,
        "binary header field 3505-3506 is -1 (extended text headers up to a ((SEG: EndText)) stanza), but no such \
         stanza starts a 3200-byte record anywhere in the file"
    );
    let (_, message) = extended_record_count(&[0; 100], 2).unwrap_err();
    assert_eq!(
        message,
        "binary header field 3505-3506 announces 2 extended text headers (6400 bytes) but only 0 bytes follow the \
         binary header"
    );
    assert_eq!(extended_record_count(&[0; 100], 0), Ok(0));
}

#[test]
fn sample_decode_inputs() {
    let _one_at_a_time = exclusive();
    for (name, path) in inputs("sample_decode") {
        let bytes = std::fs::read(&path).unwrap();
        replay(&name, || exercise::sample_decode(&bytes));
    }
}

#[test]
fn npy_read_inputs() {
    let _one_at_a_time = exclusive();
    let dir = tempfile::tempdir().unwrap();
    for (name, path) in inputs("npy_read") {
        let expected = match name.as_str() {
            "f4-2x3.npy" | "f8-4-v2.npy" | "f4-scalar-v3.npy" | "python2-long.npy" | "empty.npy" => None,
            "fortran.npy" => Some("the array is in Fortran order"),
            other => panic!("no outcome listed for npy_read input {other}"),
        };
        let outcome = replay(&name, || exercise::npy(&path, &dir.path().join("written.npy")));
        check(&name, &outcome, expected);
    }
}

/// `hdf5_open` inputs describe files rather than being files: each kept input (no extension) comes with the
/// HDF5 file it builds (`.h5`, kept with `SEISIMAGE_FUZZ_KEEP`), which is what is replayed here.
#[test]
fn hdf5_open_inputs() {
    let _one_at_a_time = exclusive();
    let all = inputs("hdf5_open");
    let descriptions = all.iter().filter(|(name, _)| !name.ends_with(".h5"));
    for (name, description) in descriptions {
        let (dataset, expected) = match name.as_str() {
            // /seismic of 5 × 1 × 2290649343 int8 and /depth of 2290649343 float32, neither written: the axis
            // was read whole (18 GB) before it was checked. Now neither is read: the volume declares more values
            // than the file holds.
            "unwritten-depth-axis" => {
                ("/seismic", Some("dataset /seismic declares 11453246715 values of 1 byte (shape [5, 1, 2290649343]"))
            }
            // /g/iline holds 0, 3.5e30, 7.1e30 (float32): the step became i64::MAX and line numbers wrapped, so
            // the middle inline's number selected the wrong lines.
            "iline-dataset-beyond-64-bit" => {
                ("/g/seismic", Some("the iline axis of /g/seismic (first 0, step 3.529538"))
            }
            other => panic!("no outcome listed for hdf5_open input {other}"),
        };
        let file = description.with_extension("h5");
        assert!(file.exists(), "{name}: the HDF5 file it builds is missing");
        let outcome = replay(name, || exercise::hdf5(&file, dataset));
        check(name, &outcome, expected);
    }
}

#[test]
fn job_config_inputs() {
    let _one_at_a_time = exclusive();
    for (name, path) in inputs("job_config") {
        let expected = match name.as_str() {
            "stolt-petrel.toml" | "file-velocity-overrides.toml" => None,
            other => panic!("no outcome listed for job_config input {other}"),
        };
        let bytes = std::fs::read(&path).unwrap();
        let outcome = replay(&name, || exercise::job(&bytes));
        check(&name, &outcome, expected);
    }
}
