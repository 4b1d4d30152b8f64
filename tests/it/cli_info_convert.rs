//! `seisimage info --json` against facts known independently of seisimage (segyio's reading of F3, the
//! spec of a synthetic volume), and `seisimage convert` SEG-Y → HDF5 → SEG-Y with a box cut against the
//! same box cut by the library.

use std::path::{Path, PathBuf};

use crate::cli_common::{model, run, samples};
use seisimage::io::{self, write_volume, FileFormat, InputOptions, WriteOptions};
use seisimage::volume::{ValueBox, Volume};
use serde_json::Value;

fn f3() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data/f3.sgy")
}

fn info_json(args: &[&str]) -> Value {
    let o = run(&[&["info", "--json"], args].concat());
    assert_eq!(o.code(), Some(0), "{o:?}");
    serde_json::from_str(&o.stdout).unwrap_or_else(|e| panic!("info --json is not JSON ({e}):\n{}", o.stdout))
}

fn read(path: &Path) -> Volume {
    let r = io::open(path, &InputOptions::default()).unwrap();
    let mut data = vec![0.0; r.geometry().n_values()];
    r.read_all(&mut data).unwrap();
    Volume { geometry: r.geometry().clone(), data }
}

/// What segyio 1.9 reports for F3 (tests/data/segyio/reference.json): 23 inlines 111..=133, 18 crosslines
/// 875..=892, 414 traces of 75 samples of 2-byte integers (format 3), 4 ms from 4 ms, big-endian, inline
/// sorted, and the samples sum to 780251 over 31050 values.
#[test]
fn info_json_on_f3_agrees_with_segyio() {
    let j = info_json(&[f3().to_str().unwrap()]);
    assert_eq!(j["schema"], "seisimage-info/1");
    assert_eq!(j["container"], "segy");
    let g = &j["geometry"];
    assert_eq!(g["ilines"], serde_json::json!({"first": 111, "last": 133, "step": 1, "count": 23}));
    assert_eq!(g["xlines"], serde_json::json!({"first": 875, "last": 892, "step": 1, "count": 18}));
    assert_eq!(g["samples"]["domain"], "time");
    assert_eq!(g["samples"]["unit"], "ms");
    assert_eq!((g["samples"]["first"].as_f64(), g["samples"]["step"].as_f64()), (Some(4.0), Some(4.0)));
    assert_eq!((g["samples"]["last"].as_f64(), g["samples"]["count"].as_u64()), (Some(300.0), Some(75)));
    assert_eq!((g["traces"].as_u64(), g["missing_traces"].as_u64()), (Some(414), Some(0)));
    let y = &j["segy"];
    assert_eq!(y["sample_format"]["code"], 3);
    assert_eq!(y["byte_order"], "big");
    assert_eq!(y["trace_count"], 414);
    assert_eq!(y["file_size"], 165060);
    assert_eq!(y["sorting"]["sorting"], "inline");
    assert_eq!(y["header_bytes"], serde_json::json!({"iline": 189, "xline": 193, "x": 181, "y": 185}));
    assert_eq!(y["text"], "", "the text header is left out unless asked for");
    let a = &j["amplitudes"];
    assert_eq!((a["finite"].as_u64(), a["nan"].as_u64(), a["infinite"].as_u64()), (Some(31050), Some(0), Some(0)));
    assert!((a["mean"].as_f64().unwrap() - 780251.0 / 31050.0).abs() < 1e-9);
    // F3's bins are 25 m.
    let bins = g["bin_size_m"].as_array().unwrap();
    assert!(bins.iter().all(|b| (b.as_f64().unwrap() - 25.0).abs() < 0.01), "{bins:?}");

    let with_text = info_json(&["--text-header", "--no-stats", f3().to_str().unwrap()]);
    // F3's textual header, as any EBCDIC viewer shows it
    assert!(with_text["segy"]["text"].as_str().unwrap().starts_with("C 1 Cropped F3 2-byte integer data set\n"));
    assert_eq!(with_text["amplitudes"], Value::Null);
}

/// The header options reach `info`: swapping the inline and crossline bytes swaps the axes, and a sample
/// interval given replaces the file's.
#[test]
fn info_takes_the_segy_header_options() {
    let j = info_json(&["--no-stats", "--iline-byte", "193", "--xline-byte", "189", f3().to_str().unwrap()]);
    assert_eq!(j["geometry"]["ilines"]["first"], 875);
    assert_eq!(j["geometry"]["ilines"]["count"], 18);
    assert_eq!(j["geometry"]["xlines"]["first"], 111);
    assert_eq!(j["segy"]["header_bytes"]["iline"], 193);
    let j = info_json(&["--no-stats", "--sample-interval", "2", f3().to_str().unwrap()]);
    assert_eq!(j["geometry"]["samples"]["step"].as_f64(), Some(2.0));
    assert_eq!(j["geometry"]["samples"]["last"].as_f64(), Some(4.0 + 74.0 * 2.0));
}

/// An HDF5 volume written from a synthetic model: the geometry is the model's spec, the amplitude range
/// that of the samples as made.
#[test]
fn info_json_on_hdf5_describes_the_volume_written() {
    let dir = tempfile::tempdir().unwrap();
    let m = model(12, 10, 50);
    let data = samples(&m);
    let path = dir.path().join("synthetic.h5");
    write_volume(FileFormat::Hdf5, &path, m.geometry(), &data, &WriteOptions::default()).unwrap();

    let j = info_json(&[path.to_str().unwrap()]);
    assert_eq!(j["container"], "hdf5");
    assert_eq!(j["geometry"]["ilines"], serde_json::json!({"first": 1, "last": 12, "step": 1, "count": 12}));
    assert_eq!(j["geometry"]["xlines"], serde_json::json!({"first": 1, "last": 10, "step": 1, "count": 10}));
    assert_eq!(j["geometry"]["samples"]["count"], 50);
    assert_eq!(j["geometry"]["samples"]["last"].as_f64(), Some(196.0));
    assert_eq!(j["hdf5"]["dataset"], "/seismic");
    assert_eq!(j["hdf5"]["shape"], serde_json::json!([12, 10, 50]));
    assert_eq!(j["hdf5"]["dtype"], "float32");
    let max = data.iter().fold(f32::MIN, |a, &v| a.max(v)) as f64;
    let min = data.iter().fold(f32::MAX, |a, &v| a.min(v)) as f64;
    let close = |key: &str, expect: f64| (j["amplitudes"][key].as_f64().unwrap() - expect).abs() <= 1e-9 * expect.abs();
    assert!(close("max", max) && close("min", min), "{} vs {min}..{max}", j["amplitudes"]);
    assert_eq!(j["amplitudes"]["finite"], 12 * 10 * 50);
    let bins = j["geometry"]["bin_size_m"].as_array().unwrap();
    assert!(bins.iter().all(|b| (b.as_f64().unwrap() - 10.0).abs() < 1e-6), "{bins:?}");
}

#[test]
fn convert_segy_to_hdf5_and_back_keeps_the_box_cut() {
    let dir = tempfile::tempdir().unwrap();
    let h5 = dir.path().join("cut.h5");
    let sgy = dir.path().join("back.sgy");
    let f3 = f3();
    let o = run(&[
        "convert",
        f3.to_str().unwrap(),
        h5.to_str().unwrap(),
        "--iline",
        "115:120",
        "--xline",
        "880:885",
        "--samples",
        "40:200",
    ]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    let o = run(&["convert", h5.to_str().unwrap(), sgy.to_str().unwrap()]);
    assert_eq!(o.code(), Some(0), "{o:?}");

    let whole = read(&f3);
    let cut = whole.geometry.index_box(&ValueBox {
        iline: Some([115, 120]),
        xline: Some([880, 885]),
        sample: Some([40.0, 200.0]),
    });
    let expect = whole.cut(&cut.unwrap());
    assert_eq!(expect.geometry.shape(), [6, 6, 41]);
    for path in [&h5, &sgy] {
        let got = read(path);
        assert_eq!(got.geometry.ilines, expect.geometry.ilines, "{}", path.display());
        assert_eq!(got.geometry.xlines, expect.geometry.xlines, "{}", path.display());
        assert_eq!(got.geometry.samples, expect.geometry.samples, "{}", path.display());
        assert_eq!(got.data, expect.data, "{}", path.display());
    }
    assert_eq!(crate::cli_common::partial_files(dir.path()), Vec::<String>::new());
}

#[test]
fn convert_refuses_a_box_outside_the_survey() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("cut.h5");
    let o = run(&["convert", f3().to_str().unwrap(), out.to_str().unwrap(), "--iline", "900:910"]);
    assert_eq!(o.code(), Some(2), "{o:?}");
    assert!(o.stderr.contains("selects nothing"), "{o:?}");
    assert!(!out.exists());
}

/// The trace headers of a big-endian SEG-Y file with a 3600-byte file header, read here byte by byte.
struct RawSegy {
    bytes: Vec<u8>,
    trace_size: usize,
}

impl RawSegy {
    fn open(path: &Path) -> RawSegy {
        let bytes = std::fs::read(path).unwrap();
        let samples = u16::from_be_bytes([bytes[3220], bytes[3221]]) as usize;
        let per_sample = match i16::from_be_bytes([bytes[3224], bytes[3225]]) {
            3 => 2,
            8 => 1,
            _ => 4,
        };
        RawSegy { trace_size: 240 + samples * per_sample, bytes }
    }

    fn traces(&self) -> usize {
        (self.bytes.len() - 3600) / self.trace_size
    }

    /// The 4-byte field at 1-based byte `at` of trace `t` (0-based).
    fn i32(&self, t: usize, at: usize) -> i32 {
        let o = 3600 + t * self.trace_size + at - 1;
        i32::from_be_bytes(self.bytes[o..o + 4].try_into().unwrap())
    }

    fn i16(&self, t: usize, at: usize) -> i16 {
        let o = 3600 + t * self.trace_size + at - 1;
        i16::from_be_bytes(self.bytes[o..o + 2].try_into().unwrap())
    }

    /// CDP x and y (181, 185) with the coordinate scalar (71) applied.
    fn xy(&self, t: usize) -> [f64; 2] {
        let s = self.i16(t, 71) as f64;
        let scale = |v: i32| {
            if s < 0.0 {
                v as f64 / -s
            } else if s > 0.0 {
                v as f64 * s
            } else {
                v as f64
            }
        };
        [scale(self.i32(t, 181)), scale(self.i32(t, 185))]
    }
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/segyio").join(name)
}

/// A file that is not a grid (a shot gather) cannot be described as a volume, but its headers can be
/// shown: the text header, the binary header and any trace's header, each field with its bytes.
#[test]
fn info_shows_the_headers_of_a_file_that_is_not_a_grid() {
    let path = fixture("shot-gather.sgy");
    let o = run(&["info", path.to_str().unwrap()]);
    assert_ne!(o.code(), Some(0), "{o:?}");
    assert!(o.stderr.contains("not a post-stack grid") && o.stderr.contains("info --raw-headers --trace N"), "{o:?}");

    let raw = RawSegy::open(&path);
    let o = run(&["info", "--raw-headers", "--trace", "2", path.to_str().unwrap()]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    assert!(o.stdout.contains("textual file header") && o.stdout.contains("binary file header"), "{o:?}");
    assert!(o.stdout.contains(&format!("trace header of trace 2 of {}", raw.traces())), "{o:?}");
    let field = |bytes: &str| {
        o.stdout.lines().find(|l| l.trim_start().starts_with(bytes)).unwrap_or_else(|| panic!("no {bytes}: {o:?}"))
    };
    assert!(field("3221-3222").ends_with(" 25"), "{}", field("3221-3222"));
    for (bytes, at) in [("37-40", 37), ("189-192", 189), ("193-196", 193)] {
        let value = raw.i32(1, at);
        assert!(field(bytes).ends_with(&format!(" {value}")), "{} should hold {value}", field(bytes));
    }
    let o = run(&["info", "--trace", "62", path.to_str().unwrap()]);
    assert_eq!(o.code(), Some(2), "{o:?}");
    assert!(o.stderr.contains("trace 62") && o.stderr.contains("61 traces"), "{o:?}");
}

/// The summary speaks plainly: the byte order and sorting in lower case, one trace in the singular.
#[test]
fn info_words_the_summary_plainly() {
    let o = run(&["info", "--no-stats", f3().to_str().unwrap()]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    assert!(o.stdout.contains("SEG-Y rev 1.0, big-endian (detected: "), "{o:?}");
    assert!(o.stdout.contains("414 in the file, sorted by inline (inlines ascending, crosslines ascending)"), "{o:?}");

    let dir = tempfile::tempdir().unwrap();
    let m = model(1, 1, 50);
    let path = dir.path().join("one.h5");
    write_volume(FileFormat::Hdf5, &path, m.geometry(), &samples(&m), &WriteOptions::default()).unwrap();
    let o = run(&["info", "--no-stats", path.to_str().unwrap()]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    assert!(o.stdout.contains("grid         1 trace, 0 missing"), "{o:?}");
}

/// Converting into a folder that does not exist says so, as a mistake on the command line (exit 2),
/// without the HDF5 library's internals.
#[test]
fn convert_into_a_missing_folder_says_so() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["cut.h5", "cut.sgy", "cut.npy"] {
        let out = dir.path().join("no/such/folder").join(name);
        let o = run(&["convert", f3().to_str().unwrap(), out.to_str().unwrap()]);
        assert_eq!(o.code(), Some(2), "{o:?}");
        let expect = format!("the folder {} does not exist", dir.path().join("no/such/folder").display());
        assert!(o.stderr.contains(&expect), "expected {expect:?}\n{o:?}");
        assert!(!o.stderr.contains("H5") && !o.stderr.contains("HDF5-DIAG"), "{o:?}");
        assert_eq!(o.stderr.lines().count(), 1, "{o:?}");
    }
}

/// SEG-Y to SEG-Y keeps what the input had and the output can carry: the text header, each trace's CDP
/// number and its coordinates as stored (F3's do not lie exactly on a fitted grid).
#[test]
fn convert_keeps_the_text_header_cdp_numbers_and_coordinates() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("cut.sgy");
    let o = run(&["convert", f3().to_str().unwrap(), out.to_str().unwrap(), "--iline", "115:120"]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    let (input, output) = (RawSegy::open(&f3()), RawSegy::open(&out));
    assert_eq!(output.bytes[..3200], input.bytes[..3200], "the text header changed");
    let by_line: std::collections::HashMap<(i32, i32), usize> =
        (0..input.traces()).map(|t| ((input.i32(t, 189), input.i32(t, 193)), t)).collect();
    assert_eq!(output.traces(), 6 * 18);
    let mut moved = 0;
    for t in 0..output.traces() {
        let source = by_line[&(output.i32(t, 189), output.i32(t, 193))];
        assert_eq!(output.i32(t, 21), input.i32(source, 21), "CDP of output trace {t}");
        assert_eq!(output.xy(t), input.xy(source), "coordinates of output trace {t}");
        moved += (input.i32(source, 21) != t as i32 + 1) as usize;
    }
    assert!(moved > 0, "the test needs CDP numbers that differ from a renumbering");
}

/// `convert`, `plot` and `synth` rename their result onto the output's name: one that is not a regular
/// file there (a FIFO, a folder, and, as root, a device node of the test's own) is refused with exit 2
/// naming it and what it is, and is left as it was.
#[test]
fn outputs_that_are_not_regular_files_are_refused_and_left_alone() {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("input.sgy");
    let m = model(6, 5, 40);
    crate::cli_common::write_segy(&input, &m, &samples(&m));
    let make = |folder: &str, name: &str, kind: &str| -> Option<PathBuf> {
        let path = dir.path().join(folder).join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
        // SAFETY: valid NUL-terminated paths; mknod makes a node of the test's own (1, 3: what /dev/null is).
        let made = match kind {
            "fifo" => (unsafe { libc::mkfifo(c.as_ptr(), 0o600) }) == 0,
            "folder" => std::fs::create_dir(&path).is_ok(),
            _ => (unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o600, libc::makedev(1, 3)) }) == 0,
        };
        made.then_some(path)
    };
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    if !root {
        eprintln!("device nodes skipped: making one needs root");
    }
    let kinds: &[(&str, &str)] = if root {
        &[("fifo", "a FIFO"), ("folder", "a folder"), ("device", "a character device")]
    } else {
        &[("fifo", "a FIFO"), ("folder", "a folder")]
    };
    for (kind, what) in kinds {
        for command in ["convert", "plot", "synth"] {
            let name = if command == "plot" { "out.png" } else { "out.sgy" };
            let node = make(&format!("{command}-{kind}"), name, kind).unwrap_or_else(|| panic!("cannot make {kind}"));
            let before = std::fs::symlink_metadata(&node).unwrap();
            let (i, o) = (input.to_str().unwrap(), node.to_str().unwrap());
            let args: Vec<&str> = match command {
                "convert" => vec!["convert", i, o],
                "plot" => vec!["plot", i, "--inline", "3", "-o", o],
                _ => vec!["synth", o, "--size", "4x4x20"],
            };
            let out = run(&args);
            assert_eq!(out.code(), Some(2), "{command} onto {what}: {out:?}");
            assert!(out.stderr.contains(o) && out.stderr.contains(&format!("it is {what}")), "{out:?}");
            let after = std::fs::symlink_metadata(&node).unwrap();
            assert_eq!((after.ino(), after.rdev()), (before.ino(), before.rdev()), "{command} replaced {what}");
            let t = after.file_type();
            assert!(t.is_fifo() || t.is_dir() || t.is_char_device(), "{command}: {what} is now {t:?}");
            let left: Vec<_> = std::fs::read_dir(node.parent().unwrap()).unwrap().collect();
            assert_eq!(left.len(), 1, "{command} left files beside {what}");
        }
    }
}
