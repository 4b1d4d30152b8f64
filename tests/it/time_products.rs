//! Products in two-way time, from a job whose velocity is what processing delivers: RMS velocities in time,
//! in a text file. The input is a flat reflector under two layers, timed by ray tracing (1600 m/s for
//! 240 m, then 2400 m/s: the reflector at 480 m is at 300 + 200 = 500 ms), and the RMS velocities are
//! those of the two layers, worked out here from their definition. The depth products must put the
//! reflector at 480 m (Dix's conversion is right) and the time products at 500 ms (the time conversion is
//! right), in files that say which domain they are in. The line is 2-D and wide (1.2 km) so that the
//! reflector is flat over many Fresnel zones around the traces measured.

use std::path::Path;

use crate::cli_common::{names, run, write_job};
use crate::common::{envelope, parabolic_peak};
use seisimage::io::{write_volume, FileFormat, WriteOptions};
use seisimage::synth::{Event, Layer, Medium, Model, ModelSpec};
use seisimage::volume::{Domain, VolumeReader};
use serde_json::Value;

/// The envelope peak of a trace, in samples (fractional).
fn peak(trace: &[f32]) -> f64 {
    let e = envelope(&trace.iter().map(|&v| v as f64).collect::<Vec<_>>());
    let i = (0..e.len()).max_by(|&a, &b| e[a].total_cmp(&e[b])).unwrap();
    parabolic_peak(&e, i)
}

fn read(path: &Path) -> (seisimage::volume::Geometry, Vec<f32>) {
    let r = seisimage::io::open(path, &Default::default()).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut data = vec![0.0; r.geometry().n_values()];
    r.read_all(&mut data).unwrap();
    (r.geometry().clone(), data)
}

#[test]
fn rms_velocities_in_time_place_a_flat_reflector_at_its_depth_and_its_time() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let layers = vec![Layer { top: 0.0, velocity: 1600.0 }, Layer { top: 240.0, velocity: 2400.0 }];
    let m = Model::new(ModelSpec {
        ilines: 96,
        xlines: 1,
        samples: 200,
        dt_ms: 4.0,
        bin_m: [12.5, 12.5],
        medium: Medium::Layered { layers },
        peak_hz: 25.0,
        events: vec![Event::Reflector { z: 480.0, amplitude: 1.0 }],
        noise: None,
    })
    .unwrap();
    let mut data = vec![0.0; m.geometry().n_values()];
    m.read_all(&mut data).unwrap();
    let input = d.join("input.sgy");
    write_volume(FileFormat::Segy, &input, m.geometry(), &data, &WriteOptions::default()).unwrap();
    // RMS velocity at the base of each layer: sqrt(Σ v² Δt / t).
    let vrms = ((1600f64.powi(2) * 0.3 + 2400f64.powi(2) * 0.2) / 0.5).sqrt();
    std::fs::write(d.join("vrms.txt"), format!("# twt_ms vrms_m/s\n300 1600\n500 {vrms}\n")).unwrap();
    let text = format!(
        "[input]\npath = {input:?}\nbin_size = [12.5, 12.5]\n\n[velocity]\nkind = \"table\"\npath = \"vrms.txt\"\ndomain = \"time\"\n\
         type = \"rms\"\n\n[imaging]\ndz = 4.0\nnz = 200\n\n[compute]\nbackend = \"cpu\"\n\n[output]\ndir = \"out\"\n\
         crosslines = [1]\ntime_slices = [500.0]\nslice_formats = [\"segy\"]\ndomain = [\"depth\", \"time\"]\n\n\
         [[output.roi]]\nname = \"c\"\niline = [47, 49]\nformats = [\"segy\", \"hdf5\", \"npy\"]\n"
    );
    let job = write_job(&d.join("job.toml"), &text);
    let o = run(&["validate", job.to_str().unwrap()]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    for expect in [
        "RMS velocity in m/s against two-way time in ms of 2 picks from",
        "interval velocity in depth: 2 nodes (step between them), 1600.0..2400.0 m/s, given down to 480.0 m",
        "warning   velocity: the velocity model is given down to 480.0 m and the image reaches 796.0 m",
        "xline_1_time",
        "time_500ms",
    ] {
        assert!(o.stdout.contains(expect), "{expect:?} missing:\n{}", o.stdout);
    }
    let o = run(&["run", job.to_str().unwrap()]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    let out = d.join("out");
    let files = names(&out);
    for f in ["xline_1.png", "xline_1.sgy", "xline_1_time.png", "xline_1_time.json", "xline_1_time.sgy"] {
        assert!(files.contains(&f.to_string()), "{f} missing: {files:?}");
    }
    for f in ["time_500ms.png", "time_500ms.sgy", "roi_c.h5", "roi_c_time.sgy", "roi_c_time.h5", "roi_c_time.npy"] {
        assert!(files.contains(&f.to_string()), "{f} missing: {files:?}");
    }

    // In depth: the reflector at 480 m (the centre trace of the region).
    let (g, depth) = read(&out.join("roi_c.h5"));
    assert_eq!(g.samples.domain, Domain::Depth);
    let nz = g.samples.len;
    let z = peak(&depth[nz..2 * nz]) * g.samples.step;
    assert!((z - 480.0).abs() <= 4.0, "reflector at {z} m, not 480 m");

    // In time: at 500 ms, in SEG-Y (time axis in ms, a note in the text header) and HDF5 (a twt axis).
    let (g, time) = read(&out.join("roi_c_time.sgy"));
    assert_eq!((g.samples.domain, g.samples.origin, g.samples.step), (Domain::Time, 0.0, 4.0));
    let nt = g.samples.len;
    let t = peak(&time[nt..2 * nt]) * 4.0;
    assert!((t - 500.0).abs() <= 4.0, "reflector at {t} ms, not 500 ms");
    let text_header = std::fs::read(out.join("roi_c_time.sgy")).unwrap()[..3200].to_vec();
    let ascii: String = text_header.iter().map(|&b| ebcdic_to_ascii(b)).collect();
    assert!(ascii.contains("TWO-WAY TIME, CONVERTED FROM THE DEPTH IMAGE"), "{ascii}");
    let (g, same) = read(&out.join("roi_c_time.h5"));
    assert_eq!(g.samples.domain, Domain::Time);
    assert_eq!(same, time);
    // The time slice at 500 ms is the reflector's crest: near the largest amplitude of the section.
    let (g, slice) = read(&out.join("time_500ms.sgy"));
    assert_eq!((g.samples.origin, g.samples.len), (500.0, 1));
    let crest = time.iter().fold(0.0f32, |a, v| a.max(v.abs()));
    assert!(slice[30..66].iter().all(|v| v.abs() > 0.8 * crest), "{slice:?} against a crest of {crest}");

    // The picture and the manifest say the domain.
    let sidecar: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("xline_1_time.json")).unwrap()).unwrap();
    assert_eq!(sidecar["rows"]["name"], "twt", "{sidecar}");
    let manifest: Value = serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    // The velocity's warning is one of the run's: in its log and its manifest.
    let shallow = "velocity: the velocity model is given down to 480.0 m and the image reaches 796.0 m";
    assert!(o.stderr.contains(shallow), "{o:?}");
    let warnings = manifest["warnings"].as_array().unwrap();
    assert!(warnings.iter().any(|w| w.as_str().unwrap().starts_with(shallow)), "{warnings:?}");
    let products = manifest["products"].as_array().unwrap();
    let in_time = products.iter().find(|p| p["files"][0]["path"] == "xline_1_time.png").expect("in the manifest");
    assert_eq!(in_time["axes"]["twt"]["domain"], "time", "{in_time}");
    assert!(in_time["axes"].get("depth").is_none(), "{in_time}");
    let in_depth = products.iter().find(|p| p["files"][0]["path"] == "xline_1.png").expect("in the manifest");
    assert_eq!(in_depth["axes"]["depth"]["step"], 4.0, "{in_depth}");
}

/// The text header of seisimage's SEG-Y files is EBCDIC: the letters, digits and punctuation it uses.
fn ebcdic_to_ascii(b: u8) -> char {
    match b {
        0x40 => ' ',
        0x4B => '.',
        0x6B => ',',
        0x60 => '-',
        0x5C => '*',
        0x61 => '/',
        0x7A => ':',
        0x81..=0x89 => (b'a' + b - 0x81) as char,
        0x91..=0x99 => (b'j' + b - 0x91) as char,
        0xA2..=0xA9 => (b's' + b - 0xA2) as char,
        0xC1..=0xC9 => (b'A' + b - 0xC1) as char,
        0xD1..=0xD9 => (b'J' + b - 0xD1) as char,
        0xE2..=0xE9 => (b'S' + b - 0xE2) as char,
        0xF0..=0xF9 => (b'0' + b - 0xF0) as char,
        _ => '?',
    }
}
