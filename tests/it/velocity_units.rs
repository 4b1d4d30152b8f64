//! Velocity input that parses and would migrate to a wrong image: times in seconds or microseconds typed
//! where milliseconds are read, a sample interval in µs, a SEG-Y cube in depth read as time, a text file
//! whose header contradicts the job or whose columns are swapped. Each is refused by `validate` and `run`
//! with exit 2 and the key to set; each corrected job gives the model and plan of the job written right.

use std::path::{Path, PathBuf};

use crate::cli_common::{model, run, samples, write_segy};
use seisimage::io::{write_volume, FileFormat, WriteOptions};
use seisimage::job::Job;
use seisimage::run::{prepare, Prepared};
use seisimage::volume::{Domain, Geometry, LineAxis, SampleAxis};

/// A job in `dir` on a 20 × 16 × 150 synthetic input (inlines 1..=20, crosslines 1..=16, 4 ms: a record of
/// 596 ms) with `velocity` as the body of `[velocity]`, written to `name`.
fn job(dir: &Path, name: &str, velocity: &str) -> PathBuf {
    let input = dir.join("input.sgy");
    if !input.exists() {
        let m = model(20, 16, 150);
        write_segy(&input, &m, &samples(&m));
    }
    let text = format!(
        "[input]\npath = {input:?}\n\n[velocity]\n{velocity}\n\n[imaging]\nmethod = \"split-step\"\ndz = 10.0\nnz = 30\n\n\
         [compute]\nbackend = \"cpu\"\n\n[output]\ndir = {:?}\ninlines = [10]\n",
        dir.join("out")
    );
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// `validate` and `run` of `path` both exit 2, and stderr holds every one of `expect`.
fn refused(path: &Path, expect: &[&str]) {
    for command in ["validate", "run"] {
        let o = run(&[command, path.to_str().unwrap()]);
        assert_eq!(o.code(), Some(2), "{command}: {o:?}");
        for e in expect {
            assert!(o.stderr.contains(e), "{command}: {e:?} missing: {}", o.stderr);
        }
    }
}

fn prepared(path: &Path, overrides: &[&str]) -> Prepared {
    let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    prepare(Job::load(path, &overrides).unwrap()).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The two jobs give the same velocity model and the same plan.
fn same_plan(a: &Prepared, b: &Prepared) {
    assert_eq!(a.velocity, b.velocity);
    assert_eq!(format!("{:?}", a.plan), format!("{:?}", b.plan));
}

#[test]
fn picks_in_seconds_or_microseconds_are_refused_with_the_unit_they_are_in() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let table = |file: &str| format!("kind = \"table\"\npath = \"{file}\"\ndomain = \"time\"\ntype = \"rms\"");
    std::fs::write(d.join("vrms_ms.txt"), "0 1500\n250 1800\n500 2100\n").unwrap();
    std::fs::write(d.join("vrms_s.txt"), "0 1500\n0.3333 1800\n0.5 2100\n").unwrap();
    std::fs::write(d.join("vrms_us.txt"), "0 1500\n250000 1800\n500000 2100\n").unwrap();
    let ms = prepared(&job(d, "ms.toml", &table("vrms_ms.txt")), &[]);

    refused(
        &job(d, "s.toml", &table("vrms_s.txt")),
        &["vrms_s.txt: line 3 (0.5 ms): the picks stop at 0.5 ms", "set velocity.time_unit = \"s\""],
    );
    refused(&job(d, "us.toml", &table("vrms_us.txt")), &["line 3 (500000 ms)", "set velocity.time_unit = \"us\""]);
    // Picks in the job, and functions in a file and in the job, are held to the same rule.
    let inline = "kind = \"table\"\ntimes = [0, 0.3333, 0.5]\nvelocities = [1500, 1800, 2100]";
    refused(
        &job(d, "inline.toml", inline),
        &["velocity.times: ", "velocity.times, pick 3 (0.5 ms)", "velocity.time_unit = \"s\""],
    );
    let mut functions = String::new();
    for (il, xl) in [(1, 1), (20, 16)] {
        functions += &format!("{il} {xl} 0 1500\n{il} {xl} 0.25 1800\n");
    }
    std::fs::write(d.join("functions_s.txt"), functions).unwrap();
    let f = "kind = \"functions\"\npath = \"functions_s.txt\"\ndomain = \"time\"";
    refused(&job(d, "f.toml", f), &["line 2 (inline 1, crossline 1, 0.25 ms)", "velocity.time_unit = \"s\""]);
    let mut f = String::from("kind = \"functions\"\n");
    for (il, xl) in [(1, 1), (20, 16)] {
        f += &format!(
            "[[velocity.functions]]\niline = {il}\nxline = {xl}\ntimes = [0, 0.25]\nvelocities = [1500, 1800]\n"
        );
    }
    refused(&job(d, "fj.toml", &f), &["velocity.functions.0.times, pick 2 (0.25 ms)", "\"s\""]);

    // Corrected, each gives the plan of the table in ms.
    std::fs::write(d.join("vrms_s.txt"), "0 1500\n0.25 1800\n0.5 2100\n").unwrap();
    let s = prepared(&job(d, "s.toml", &(table("vrms_s.txt") + "\ntime_unit = \"s\"")), &[]);
    same_plan(&ms, &s);
    let us = prepared(&job(d, "us.toml", &table("vrms_us.txt")), &["velocity.time_unit=\"us\""]);
    same_plan(&ms, &us);
    let o = run(&["validate", job(d, "s.toml", &(table("vrms_s.txt") + "\ntime_unit = \"s\"")).to_str().unwrap()]);
    assert!(o.stdout.contains("RMS velocity in m/s against two-way time in s of 3 picks"), "{o:?}");

    // What must still run: a single pick at 0, a table that ends at 10 % of the record, one beyond it.
    for (name, text) in
        [("one.txt", "0 1800\n"), ("shallow.txt", "0 1500\n30 1600\n60 1700\n"), ("deep.txt", "0 1500\n4000 3000\n")]
    {
        std::fs::write(d.join(name), text).unwrap();
        let interval = format!("kind = \"table\"\npath = \"{name}\"\ndomain = \"time\"");
        let o = run(&["validate", job(d, "ok.toml", &interval).to_str().unwrap()]);
        assert_eq!(o.code(), Some(0), "{name}: {o:?}");
    }
}

#[test]
fn a_sample_interval_in_microseconds_is_refused_with_the_interval_meant() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let path = job(d, "job.toml", "kind = \"constant\"\nvelocity = 2000");
    for command in ["validate", "run"] {
        let o = run(&[command, path.to_str().unwrap(), "--set", "input.sample_interval=4000"]);
        assert_eq!(o.code(), Some(2), "{o:?}");
        assert!(
            o.stderr.contains("input.sample_interval: sample_interval = 4000: a sample interval of 4000 ms is outside")
                && o.stderr.contains("did you mean 4 ms?"),
            "{o:?}"
        );
    }
    let right = prepared(&path, &["input.sample_interval=4"]);
    same_plan(&right, &prepared(&path, &[]));

    // From a file's headers: 50 µs, no record's interval; the file and the key are named.
    let mut spec = model(4, 4, 50).spec().clone();
    spec.dt_ms = 0.05;
    let m = seisimage::synth::Model::new(spec).unwrap();
    let input = d.join("fine.sgy");
    write_segy(&input, &m, &samples(&m));
    let o = run(&["validate", path.to_str().unwrap(), "--set", &format!("input.path={}", input.display())]);
    assert_eq!(o.code(), Some(2), "{o:?}");
    assert!(
        o.stderr.contains("fine.sgy: a sample interval of 0.05 ms") && o.stderr.contains("from its headers"),
        "{o:?}"
    );
}

/// A cube of v = 1800 + 0.5 z on the seismic's lines, every 10 m, written with `domain` as its trace axis:
/// in time, its headers hold a 10000 µs interval, as a Petrel export of a depth model does.
fn cube(path: &Path, domain: Domain) {
    let axis = SampleAxis { origin: 0.0, step: 10.0, len: 40, domain };
    let g = Geometry::regular(LineAxis::new(1, 1, 20), LineAxis::new(1, 1, 16), axis);
    let trace: Vec<f32> = (0..40).map(|k| 1800.0 + 0.5 * 10.0 * k as f32).collect();
    let data: Vec<f32> = trace.iter().copied().cycle().take(g.n_values()).collect();
    write_volume(FileFormat::Segy, path, &g, &data, &WriteOptions::default()).unwrap();
}

#[test]
fn a_segy_cube_must_say_whether_it_is_in_time_or_depth() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    cube(&d.join("petrel.sgy"), Domain::Time);
    let velocity = "kind = \"file\"\npath = \"petrel.sgy\"";
    refused(
        &job(d, "cube.toml", velocity),
        &[
            "velocity.domain: ",
            "petrel.sgy is a SEG-Y cube, and SEG-Y cannot say",
            "velocity.domain = \"time\" to read its samples as every 10 ms of two-way time",
            "\"depth\" to read them as every 10 m of depth",
        ],
    );
    // Told, it is the model of the same cube written by seisimage in depth, which says so in its header.
    cube(&d.join("declared.sgy"), Domain::Depth);
    let declared = prepared(&job(d, "declared.toml", "kind = \"file\"\npath = \"declared.sgy\""), &[]);
    let told = prepared(&job(d, "cube.toml", &format!("{velocity}\ndomain = \"depth\"")), &[]);
    same_plan(&declared, &told);
    assert_eq!(told.velocity.trace_velocity(37, 155.0), 1800.0 + 0.5 * 155.0);
    let time = prepared(&job(d, "cube.toml", &format!("{velocity}\ndomain = \"time\"")), &[]);
    assert_ne!(time.velocity, told.velocity);
}

#[test]
fn a_header_that_contradicts_the_job_or_swapped_columns_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let depth = |file: &str| format!("kind = \"table\"\npath = \"{file}\"\ndomain = \"depth\"");
    std::fs::write(d.join("vint_ft.txt"), "depth_ft vint\n0 1500\n1000 1800\n2000 2100\n").unwrap();
    refused(
        &job(d, "ft.toml", &depth("vint_ft.txt")),
        &["velocity.path: ", "vint_ft.txt: line 1: column \"depth_ft\" says ft", "set velocity.depth_unit = \"ft\""],
    );
    let ft = prepared(&job(d, "ft.toml", &(depth("vint_ft.txt") + "\ndepth_unit = \"ft\"")), &[]);
    std::fs::write(d.join("vint_m.txt"), "0 1500\n304.8 1800\n609.6 2100\n").unwrap();
    let m = prepared(&job(d, "m.toml", &depth("vint_m.txt")), &[]);
    for z in [0.0, 150.0, 304.8, 500.0, 700.0] {
        let (a, b) = (ft.velocity.trace_velocity(0, z), m.velocity.trace_velocity(0, z));
        assert!((a - b).abs() < 1e-6, "{z} m: {a} and {b} m/s");
    }

    // The header names time, the job reads depth; seconds; km/s; RMS velocities read as interval ones.
    std::fs::write(d.join("twt.txt"), "# twt_ms vint\n0 1500\n500 1800\n").unwrap();
    refused(&job(d, "twt.toml", &depth("twt.txt")), &["twt.txt: line 1: ", "set velocity.domain = \"time\""]);
    let time = |file: &str| format!("kind = \"table\"\npath = \"{file}\"\ndomain = \"time\"");
    for (text, expect) in [
        ("TWT (s)  Vint\n0 1500\n0.5 1800\n", "set velocity.time_unit = \"s\""),
        ("twt_ms vint_km/s\n0 1.5\n500 1.8\n", "set velocity.unit = \"km/s\""),
        ("TWT_ms Vrms_m/s\n0 1500\n500 1800\n", "set velocity.type = \"rms\""),
    ] {
        std::fs::write(d.join("header.txt"), text).unwrap();
        refused(&job(d, "header.toml", &time("header.txt")), &["header.txt: line 1: ", expect]);
    }

    // Swapped columns: by the header's words, and by the values alone.
    std::fs::write(d.join("swapped.txt"), "vint twt\n1500 0\n1800 250\n2100 500\n").unwrap();
    refused(&job(d, "sw.toml", &time("swapped.txt")), &["swapped.txt: line 1: ", "are the columns swapped?"]);
    std::fs::write(d.join("swapped.txt"), "1500 100\n1800 250\n2100 500\n").unwrap();
    refused(
        &job(d, "sw.toml", &time("swapped.txt")),
        &["swapped.txt: lines 1..3: are the columns swapped? The two-way times (1500..2100 ms) look like velocities"],
    );
    std::fs::write(d.join("swapped.txt"), "1 1 1500 100\n1 1 1800 250\n1 1 2100 500\n").unwrap();
    let functions = "kind = \"functions\"\npath = \"swapped.txt\"\ndomain = \"time\"";
    refused(&job(d, "sw.toml", functions), &["inline 1, crossline 1, lines 1..3: are the columns swapped?"]);
}
