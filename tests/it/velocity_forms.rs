//! Velocity as users hold it: cubes written by other software (segyio) with depth in their time fields,
//! on a larger and coarser grid than the seismic; functions at several locations; and the mistakes a user
//! makes (km/s typed as m/s, a model that does not cover the survey, RMS picks no rock can have), each
//! refused with its key and its file. Every expected model is an analytic formula evaluated here.
//!
//! The segyio test runs Python with `PYTHONPATH` from `SEISIMAGE_PYTHONPATH`; without segyio it says why
//! and passes, unless `SEISIMAGE_INTEROP_TESTS=1` (as in CI).

use std::path::Path;

use crate::cli_common::{model, run, samples, write_job, write_segy};
use seisimage::job::Job;
use seisimage::run::prepare;

/// A 20 × 16 × 150 synthetic input (inlines 1..=20, crosslines 1..=16, 4 ms) in `dir`, and a job on it
/// with `velocity` as its `[velocity]` body and `imaging` and `output` bodies.
fn job(dir: &Path, velocity: &str, imaging: &str, output: &str) -> std::path::PathBuf {
    let m = model(20, 16, 150);
    let input = dir.join("input.sgy");
    if !input.exists() {
        write_segy(&input, &m, &samples(&m));
    }
    let text = format!(
        "[input]\npath = {input:?}\n\n[velocity]\n{velocity}\n\n[imaging]\n{imaging}\n\n[compute]\nbackend = \"cpu\"\n\n\
         [output]\ndir = {:?}\n{output}\n",
        dir.join("out")
    );
    write_job(&dir.join("job.toml"), &text)
}

/// Run `script` under python3 with `args`; `false` when segyio cannot be imported and that is allowed.
fn python(script: &str, args: &[String]) -> bool {
    let mut cmd = crate::cli_common::child("python3");
    if let Some(p) = std::env::var_os("SEISIMAGE_PYTHONPATH") {
        cmd.env("PYTHONPATH", p);
    }
    let required = std::env::var("SEISIMAGE_INTEROP_TESTS").is_ok_and(|v| v == "1");
    let out = match cmd.arg("-c").arg(script).args(args).output() {
        Ok(out) => out,
        Err(e) if !required => {
            eprintln!("segyio test skipped: python3 cannot run ({e}); set SEISIMAGE_INTEROP_TESTS=1 to require it");
            return false;
        }
        Err(e) => panic!("python3 cannot run: {e}"),
    };
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() && stderr.contains("No module named") && !required {
        eprintln!("segyio test skipped: {}", stderr.lines().last().unwrap_or_default());
        return false;
    }
    assert!(out.status.success(), "the segyio script failed: {stderr}");
    true
}

/// A velocity cube as a Petrel or OpendTect export holds one in depth: SEG-Y whose "time" fields carry the
/// depth (a 10000 µs interval for 10 m), written by segyio. v = 1800 + 0.5 z + 2 il + 3 xl m/s.
const SEGYIO_DEPTH_CUBE: &str = r#"
import sys
import numpy as np
import segyio
path = sys.argv[1]
ilines, xlines, ns, dz = list(range(0, 25, 4)), list(range(0, 21, 4)), 40, 10.0
spec = segyio.spec()
spec.ilines, spec.xlines = ilines, xlines
spec.samples = [k * dz for k in range(ns)]
spec.format = 5
spec.sorting = segyio.TraceSortingFormat.INLINE_SORTING
z = np.arange(ns) * dz
with segyio.create(path, spec) as f:
    t = 0
    for il in ilines:
        for xl in xlines:
            f.header[t] = {
                segyio.TraceField.INLINE_3D: il,
                segyio.TraceField.CROSSLINE_3D: xl,
                segyio.TraceField.TRACE_SAMPLE_COUNT: ns,
                segyio.TraceField.TRACE_SAMPLE_INTERVAL: int(dz * 1000),
            }
            f.trace[t] = (1800.0 + 0.5 * z + 2.0 * il + 3.0 * xl).astype(np.float32)
            t += 1
    f.bin.update(hns=ns, hdt=int(dz * 1000), format=5)
"#;

fn cube_velocity(il: i64, xl: i64, z: f64) -> f64 {
    1800.0 + 0.5 * z + 2.0 * il as f64 + 3.0 * xl as f64
}

#[test]
fn a_segyio_depth_cube_with_depth_in_its_time_fields_is_read_as_depth_cut_and_interpolated() {
    let dir = tempfile::tempdir().unwrap();
    let cube = dir.path().join("vint_depth.sgy");
    if !python(SEGYIO_DEPTH_CUBE, &[cube.display().to_string()]) {
        return;
    }
    let velocity = format!("kind = \"file\"\npath = {cube:?}\ndomain = \"depth\"");
    let path = job(dir.path(), &velocity, "method = \"split-step\"\ndz = 10.0\nnz = 30", "inlines = [10]");
    let p = prepare(Job::load(&path, &[]).unwrap()).unwrap();
    // The model on every seismic trace (inlines 1..=20, crosslines 1..=16; every 4th line in the cube,
    // which also reaches beyond the survey), against the formula.
    let mut worst = 0.0f64;
    for i in 0..20 {
        for j in 0..16 {
            for z in [0.0, 55.0, 123.0, 290.0] {
                let got = p.velocity.trace_velocity(i * 16 + j, z);
                worst = worst.max((got - cube_velocity(1 + i as i64, 1 + j as i64, z)).abs());
            }
        }
    }
    assert!(worst < 0.02, "largest difference from the formula: {worst} m/s");
    let o = run(&["validate", path.to_str().unwrap()]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    for expect in ["its trace axis read as depth (velocity.domain)", "laid on the seismic's 320 traces by line numbers"]
    {
        assert!(o.stdout.contains(expect), "{expect:?} missing:\n{}", o.stdout);
    }
    assert!(o.stdout.contains("velocity  3-D grid 20 × 16 × 40 (depth step 10 m), 1805..2083 m/s"), "{}", o.stdout);

    // SEG-Y cannot say which it is: without velocity.domain the file is refused; read as time, it is another
    // model, and validate says so.
    let imaging = "method = \"split-step\"\ndz = 10.0\nnz = 30";
    let path = job(dir.path(), &format!("kind = \"file\"\npath = {cube:?}"), imaging, "inlines = [10]");
    let o = run(&["validate", path.to_str().unwrap()]);
    assert_eq!(o.code(), Some(2), "{o:?}");
    assert!(o.stderr.contains("velocity.domain: ") && o.stderr.contains("every 10 m of depth"), "{o:?}");
    let path =
        job(dir.path(), &format!("kind = \"file\"\npath = {cube:?}\ndomain = \"time\""), imaging, "inlines = [10]");
    let p = prepare(Job::load(&path, &[]).unwrap()).unwrap();
    let got = p.velocity.trace_velocity(0, 100.0);
    assert!((got - cube_velocity(1, 1, 100.0)).abs() > 1.0, "read as time, yet {got} m/s");
    let o = run(&["validate", path.to_str().unwrap()]);
    assert!(o.stdout.contains("interval velocity in m/s against two-way time in ms converted"), "{}", o.stdout);
}

#[test]
fn functions_at_four_locations_from_a_text_file_interpolate_a_lateral_gradient() {
    let dir = tempfile::tempdir().unwrap();
    // v = 1600 + 5 il + 8 xl, in km/s, at the corners of the survey, in two-way time.
    let v = |il: i64, xl: i64| 1600.0 + 5.0 * il as f64 + 8.0 * xl as f64;
    let mut text = String::from("# inline crossline twt_ms vint_kms\n");
    for (il, xl) in [(1, 1), (20, 1), (1, 16), (20, 16)] {
        for t in [0, 400, 1200] {
            text += &format!("{il} {xl} {t} {}\n", v(il, xl) / 1000.0);
        }
    }
    std::fs::write(dir.path().join("functions.txt"), text).unwrap();
    let velocity = "kind = \"functions\"\npath = \"functions.txt\"\ndomain = \"time\"\nunit = \"km/s\"";
    let path = job(dir.path(), velocity, "method = \"split-step\"\ndz = 10.0\nnz = 30", "inlines = [10]");
    let p = prepare(Job::load(&path, &[]).unwrap()).unwrap();
    for (i, j) in [(0, 0), (4, 11), (19, 15), (12, 3)] {
        let got = p.velocity.trace_velocity(i * 16 + j, 150.0);
        let expect = v(1 + i as i64, 1 + j as i64);
        assert!((got - expect).abs() < 0.05, "({i}, {j}): {got} vs {expect}");
    }
    let o = run(&["validate", path.to_str().unwrap()]);
    assert!(o.stdout.contains("at 4 locations from") && o.stdout.contains("bilinear"), "{}", o.stdout);
}

/// Each mistake: exit 2, the key, the file where there is one, and the place in it.
#[test]
fn implausible_and_inconsistent_velocities_are_refused_with_their_key_and_file() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // km/s typed as m/s, and no zmax: the velocity is blamed, not zmax.
    let path = job(d, "kind = \"constant\"\nvelocity = 1.8", "dz = 10.0", "depth_slices = [150.0]");
    let o = run(&["run", path.to_str().unwrap()]);
    assert_eq!(o.code(), Some(2), "{o:?}");
    assert!(
        o.stderr.contains("velocity.velocity: velocity 1.8 m/s is below") && o.stderr.contains("\"km/s\""),
        "{o:?}"
    );
    assert!(!o.stderr.contains("zmax"), "{o:?}");

    std::fs::write(d.join("vint.txt"), "# depth velocity\n0 1.5\n500 2.1\n").unwrap();
    let path = job(d, "kind = \"table\"\npath = \"vint.txt\"\ndomain = \"depth\"", "nz = 20", "inlines = [3]");
    let o = run(&["validate", path.to_str().unwrap()]);
    assert_eq!(o.code(), Some(2), "{o:?}");
    for expect in ["velocity.path: ", "vint.txt: line 2 (0 m): velocity 1.5 m/s is below", "\"km/s\""] {
        assert!(o.stderr.contains(expect), "{expect:?}: {o:?}");
    }

    // The domain of a cube is a key of [velocity], not of its reading options: the message names the key as
    // written, in its table.
    let velocity = "kind = \"file\"\npath = \"vint.txt\"\n\n[velocity.input]\ndomain = \"depth\"";
    let o = run(&["validate", job(d, velocity, "nz = 20", "inlines = [3]").to_str().unwrap()]);
    assert_eq!(o.code(), Some(2), "{o:?}");
    assert!(o.stderr.contains("at line 9, column 1: velocity.input.domain: unknown field `domain`"), "{o:?}");

    // RMS velocities falling faster than any rock allows: the two picks are named.
    std::fs::write(d.join("vrms.txt"), "1000 2000\n1200 1500\n").unwrap();
    let velocity = "kind = \"table\"\npath = \"vrms.txt\"\ndomain = \"time\"\ntype = \"rms\"";
    let o = run(&["validate", job(d, velocity, "nz = 20", "inlines = [3]").to_str().unwrap()]);
    assert_eq!(o.code(), Some(2), "{o:?}");
    assert!(o.stderr.contains("between line 1 (1000 ms) and line 2 (1200 ms)"), "{o:?}");

    // A cube that does not cover the survey names the lines it lacks.
    let g = seisimage::volume::Geometry::regular(
        seisimage::volume::LineAxis::new(5, 1, 20),
        seisimage::volume::LineAxis::new(1, 1, 16),
        seisimage::volume::SampleAxis { origin: 0.0, step: 50.0, len: 5, domain: seisimage::volume::Domain::Depth },
    );
    let cube = d.join("small.h5");
    seisimage::io::write_volume(
        seisimage::io::FileFormat::Hdf5,
        &cube,
        &g,
        &vec![2000.0; g.n_values()],
        &Default::default(),
    )
    .unwrap();
    let o = run(&[
        "validate",
        job(d, "kind = \"file\"\npath = \"small.h5\"", "nz = 20", "inlines = [3]").to_str().unwrap(),
    ]);
    assert_eq!(o.code(), Some(2), "{o:?}");
    assert!(o.stderr.contains("velocity.path: ") && o.stderr.contains("small.h5"), "{o:?}");
    assert!(
        o.stderr.contains("the model covers inlines 5..=24 (step 1), and the seismic's inlines 1..=4 are outside it"),
        "{o:?}"
    );
    // Asked to, the lines outside hold the cube's nearest edge, with a warning naming them; the run
    // records it, and the image is that of the cube's velocity everywhere (here one constant).
    let held = job(d, "kind = \"file\"\npath = \"small.h5\"\noutside = \"hold\"", "nz = 20", "inlines = [3]");
    let o = run(&["validate", held.to_str().unwrap()]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    let said = "the seismic's inlines 1..=4 are outside it: they take the velocity of the model's nearest edge";
    assert!(o.stdout.contains(said), "{o:?}");
    let o = run(&["run", held.to_str().unwrap()]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    assert!(o.stderr.contains(said), "{o:?}");
    // `outside` belongs to cubes.
    let o = run(&[
        "validate",
        job(d, "kind = \"constant\"\nvelocity = 2000.0\noutside = \"hold\"", "nz = 20", "inlines = [3]")
            .to_str()
            .unwrap(),
    ]);
    assert_eq!(o.code(), Some(2), "{o:?}");
    assert!(o.stderr.contains("velocity.outside"), "{o:?}");
}

/// The shipped RMS demo runs as a user runs it, and images the F3 cut as the v(z) demo does: its RMS
/// velocities are those of demo.toml's v(z), so the two inlines must agree closely.
#[test]
fn the_rms_demo_runs_and_images_like_the_interval_velocity_demo() {
    let dir = tempfile::tempdir().unwrap();
    let configs = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs");
    let mut inlines = Vec::new();
    for (job, out) in [("demo.toml", "vz"), ("demo-rms.toml", "rms")] {
        let out = dir.path().join(out);
        let o = run(&[
            "run",
            configs.join(job).to_str().unwrap(),
            "--backend",
            "cpu",
            "--set",
            &format!("output.dir={}", out.display()),
            "--set",
            "output.slice_formats=[\"segy\"]",
        ]);
        assert_eq!(o.code(), Some(0), "{o:?}");
        let r = seisimage::io::open(&out.join("inline_122.sgy"), &Default::default()).unwrap();
        let mut data = vec![0.0f32; r.geometry().n_values()];
        r.read_all(&mut data).unwrap();
        inlines.push(data);
    }
    let files = crate::cli_common::names(&dir.path().join("rms"));
    for f in ["inline_122_time.png", "xline_884_time.sgy", "time_200ms.png", "manifest.json"] {
        assert!(files.contains(&f.to_string()), "{f} missing: {files:?}");
    }
    let dot = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| *x as f64 * *y as f64).sum::<f64>();
    let (a, b) = (&inlines[0], &inlines[1]);
    let correlation = dot(a, b) / (dot(a, a) * dot(b, b)).sqrt();
    assert!(correlation > 0.95, "the two demos' inline 122 correlate at {correlation}");
    let o = run(&["validate", configs.join("demo-rms.toml").to_str().unwrap()]);
    assert!(o.stdout.contains("1581.5..1956.9 m/s"), "{}", o.stdout);
}
