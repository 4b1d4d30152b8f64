//! What the products of a run hold where the data cannot tell: traces missing from the survey, depths the
//! record cannot reach, and regions or slices the job asks for outside the image or between its levels.
//! Each is one rule for every format and every engine, and each is said: a warning in the log and in the
//! manifest.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::cli_common::{job_text, model, run, samples, write_job, write_segy, Outcome};
use crate::common::envelope_peak;
use seisimage::io::{self, InputOptions};
use seisimage::synth::{Event, Medium, Model, ModelSpec};

fn manifest(out: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).expect("manifest.json")).unwrap()
}

fn warnings(m: &Value) -> Vec<String> {
    m["warnings"]
        .as_array()
        .unwrap_or_else(|| panic!("no warnings list in the manifest"))
        .iter()
        .map(|w| w.to_string())
        .collect()
}

/// The log's WARN lines.
fn warn_lines(o: &Outcome) -> Vec<&str> {
    o.stderr.lines().filter(|l| l.contains(" WARN ")).collect()
}

/// Values and live flags of a product file, read back with seisimage's readers (NPY: values only, all
/// traces taken as live).
fn read_product(path: &Path) -> (Vec<f32>, Vec<bool>, [usize; 3]) {
    if path.extension().is_some_and(|e| e == "npy") {
        let (shape, data) = seisimage::io::npy::read(path).unwrap();
        let live = vec![true; shape[0] * shape[1]];
        return (data, live, [shape[0], shape[1], shape[2]]);
    }
    let r = io::open(path, &InputOptions::default()).unwrap();
    let mut data = vec![0.0; r.geometry().n_values()];
    r.read_all(&mut data).unwrap();
    (data, r.geometry().live.clone(), r.geometry().shape())
}

/// A survey with two traces missing (inline 4, crosslines 5 and 6 of a 12 × 10 grid): every product that
/// covers them holds zeros there in every format, marks them where the format can (HDF5 `live`, SEG-Y trace
/// identification 2), draws them as no data, and the log and manifest say how much is missing.
#[test]
fn missing_traces_are_zero_in_every_format_and_no_data_in_pictures() {
    let dir = tempfile::tempdir().unwrap();
    let m = model(12, 10, 100);
    let input = dir.path().join("gappy.sgy");
    write_segy(&input, &m, &samples(&m));
    // Cut traces 35 and 36 (0-based 34, 35: inline index 3, crossline indices 4 and 5) out of the file.
    let bytes = std::fs::read(&input).unwrap();
    let trace = 240 + 100 * 4;
    let cut = 3600 + 34 * trace..3600 + 36 * trace;
    std::fs::write(&input, [&bytes[..cut.start], &bytes[cut.end..]].concat()).unwrap();

    let out = dir.path().join("out");
    let output = "inlines = [4]\ndepth_slices = [100.0]\nslice_formats = [\"segy\", \"hdf5\", \"npy\"]\n\n\
                  [[output.roi]]\nname = \"gap\"\niline = [3, 5]\nxline = [4, 7]\nformats = [\"segy\", \"hdf5\", \"npy\"]";
    let job = write_job(&dir.path().join("job.toml"), &job_text(&input, &out, "dz = 10.0\nnz = 30", output));
    let o = run(&["run", job.to_str().unwrap()]);
    assert_eq!(o.code(), Some(0), "{o:?}");

    // (file, the missing traces as [il][xl] indices of the product)
    let products: [(&str, &[(usize, usize)]); 3] =
        [("inline_4", &[(0, 4), (0, 5)]), ("depth_100m", &[(3, 4), (3, 5)]), ("roi_gap", &[(1, 1), (1, 2)])];
    for (stem, gaps) in products {
        for ext in ["npy", "h5", "sgy"] {
            let path = out.join(format!("{stem}.{ext}"));
            let (data, live, [_, nx, nz]) = read_product(&path);
            let t = |il: usize, xl: usize| &data[(il * nx + xl) * nz..][..nz];
            for &(il, xl) in gaps {
                assert!(t(il, xl).iter().all(|&v| v == 0.0), "{}: trace ({il}, {xl}) is not zero", path.display());
                if ext != "npy" {
                    assert!(!live[il * nx + xl], "{}: trace ({il}, {xl}) is marked live", path.display());
                }
            }
            let live_energy: f64 = (0..data.len() / nz)
                .filter(|n| !gaps.contains(&(n / nx, n % nx)))
                .flat_map(|n| data[n * nz..][..nz].iter())
                .map(|v| (*v as f64).powi(2))
                .sum();
            assert!(live_energy > 0.0, "{}: the live traces are empty", path.display());
        }
    }
    // The pictures draw the missing traces as no data: 2 traces of 30 levels, and 2 points of the slice.
    for (stem, no_data) in [("inline_4", 60), ("depth_100m", 2)] {
        let sidecar: Value =
            serde_json::from_str(&std::fs::read_to_string(out.join(format!("{stem}.json"))).unwrap()).unwrap();
        assert_eq!(sidecar["nonfinite_samples"], no_data, "{stem}");
    }
    let said = "2 of 120 traces (1.7 %) are missing from the input";
    assert!(warn_lines(&o).iter().any(|l| l.contains(said)), "{o:?}");
    assert!(warnings(&manifest(&out)).iter().any(|w| w.contains(said)), "{:?}", manifest(&out)["warnings"]);
}

/// A diffractor 300 samples of 4 ms deep in 2000 m/s: the record reaches 1196 m. Migrated to 3000 m by
/// phase shift, whose frequency-domain continuation wraps energy around below that depth, the products are
/// zero below 1196 m (one rule on every engine: the GPU too when `SEISIMAGE_GPU_TESTS=1`), the focus is where
/// it belongs, and `validate` and the manifest say which products lie below the reach.
#[test]
fn nothing_is_imaged_below_the_depth_the_record_reaches() {
    use seisimage::cancel::CancelToken;
    use seisimage::job::{Backend, Job};
    use seisimage::progress::Silent;
    let backend = match std::env::var("SEISIMAGE_GPU_TESTS").as_deref() {
        Ok("1") => Backend::Cuda,
        _ => Backend::Cpu,
    };
    let dir = tempfile::tempdir().unwrap();
    let m = Model::new(ModelSpec {
        ilines: 25,
        xlines: 25,
        samples: 300,
        dt_ms: 4.0,
        bin_m: [12.5, 12.5],
        medium: Medium::Constant { velocity: 2000.0 },
        peak_hz: 25.0,
        events: vec![Event::Diffractor { x: 150.0, y: 150.0, z: 478.4, amplitude: 1.0 }],
        noise: None,
    })
    .unwrap();
    let input = dir.path().join("diffractor.sgy");
    write_segy(&input, &m, &samples(&m));
    let out = dir.path().join("out");
    let output = "inlines = [13]\ndepth_slices = [2500.0]\nslice_formats = [\"npy\"]\npng = false\n\n\
                  [[output.roi]]\nname = \"focus\"\ndepth = [380.0, 580.0]\nformats = [\"npy\"]";
    let job: PathBuf =
        write_job(&dir.path().join("job.toml"), &job_text(&input, &out, "dz = 10.0\nzmax = 3000.0", output));

    let o = run(&["validate", job.to_str().unwrap()]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    assert!(o.stdout.lines().any(|l| l.contains("reach") && l.contains("1196 m")), "{o:?}");

    let jobs = [Job::load(&job, &[]).unwrap()];
    let failed = seisimage::run::run_jobs(
        &jobs,
        Some(backend),
        &seisimage::run::RunMode::Alone,
        &Silent,
        &CancelToken::new(),
        &|_| {},
    )
    .unwrap();
    assert!(failed.is_empty(), "{failed:?}");

    let npy = |name: &str| seisimage::io::npy::read(&out.join(name)).unwrap();
    let (_, slice) = npy("depth_2500m.npy");
    assert!(slice.iter().all(|&v| v == 0.0), "the 2500 m slice holds wrapped-around energy");
    let (shape, section) = npy("inline_13.npy");
    assert_eq!(shape, [1, 25, 301]);
    for (n, &v) in section.iter().enumerate() {
        let k = n % 301;
        if k as f64 * 10.0 > 1196.0 {
            assert_eq!(v, 0.0, "level {k} ({} m) of inline 13 is below the reach", k * 10);
        }
    }
    assert!(section.iter().any(|&v| v != 0.0));
    let (shape, focus) = npy("roi_focus.npy");
    assert_eq!(shape, [25, 25, 21]);
    let [il, xl, z] = envelope_peak(&focus, [25, 25, 21]);
    assert_eq!((il, xl), (12, 12));
    assert!((380.0 + 10.0 * z as f64 - 478.4).abs() <= 10.0, "focus at {} m", 380 + 10 * z);

    let w = warnings(&manifest(&out));
    assert!(w.iter().any(|w| w.contains("depth_2500m") && w.contains("1196 m")), "{w:?}");
    assert!(w.iter().any(|w| w.contains("inline_13") && w.contains("partly")), "{w:?}");
    assert!(!w.iter().any(|w| w.contains("roi_focus")), "{w:?}");
}

/// A region partly outside the survey or the image is clipped, a reversed range read the right way round,
/// a depth slice between levels moved to the nearest one, fmax above Nyquist clamped: each a warning in
/// the log and in the manifest, and the products as clipped.
#[test]
fn what_the_plan_changes_is_a_warning_in_the_log_and_the_manifest() {
    let dir = tempfile::tempdir().unwrap();
    let f3 = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/f3.sgy");
    let out = dir.path().join("out");
    let output = "depth_slices = [152.0]\n\n[[output.roi]]\nname = \"a\"\niline = [100, 120]\nxline = [890, 880]\n\
                  depth = [150.0, 250.0]\nformats = [\"npy\"]";
    let job =
        write_job(&dir.path().join("job.toml"), &job_text(&f3, &out, "dz = 5.0\nzmax = 200.0\nfmax = 200.0", output));
    let o = run(&["run", job.to_str().unwrap()]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    let m = manifest(&out);
    let logged = warn_lines(&o);
    let recorded = warnings(&m);
    for said in [
        "output.roi.0.iline: inlines 100..=120 reach outside the survey (inlines 111..=133): clipped to 111..=120",
        "output.roi.0.xline: [890, 880] is reversed: read as crosslines 880..=890",
        "output.roi.0.depth: depths 150..=250 m reach below the image (0..=200 m): clipped to 150..=200 m",
        "output.depth_slices.0: depth slice 152 m is imaged at 150 m, the nearest depth level (dz 5 m)",
        "imaging.fmax: fmax 200 Hz is above the Nyquist frequency of the 4 ms samples: clamped to 125 Hz",
    ] {
        assert!(logged.iter().any(|l| l.contains(said)), "not logged: {said:?}\n{o:?}");
        assert!(recorded.iter().any(|w| w.contains(said)), "not recorded: {said:?}\n{recorded:?}");
    }
    let roi = m["products"].as_array().unwrap().iter().find(|p| p["kind"] == "roi").unwrap();
    assert_eq!(roi["axes"]["iline"], serde_json::json!({"first": 111, "step": 1, "len": 10}));
    assert_eq!(roi["axes"]["xline"], serde_json::json!({"first": 880, "step": 1, "len": 11}));
    assert_eq!(roi["axes"]["depth"]["origin"], 150.0);
    assert_eq!(roi["axes"]["depth"]["len"], 11);
}
