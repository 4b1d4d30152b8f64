//! Job files and `--set` overrides through the command line: every mistake is exit code 2 with the line and
//! column (or the override) at fault, `print-config` prints a job that reads back as the same job,
//! `validate` prints the plan and writes nothing, and relative paths follow the documented rule.

use std::path::{Path, PathBuf};

use crate::cli_common::{gpus_for_tests, run, run_command, seisimage, write_job};
use seisimage::job::Job;

/// The F3 cut shipped with the project (23 inlines 111..=133, 18 crosslines 875..=892, 75 samples).
fn f3() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data/f3.sgy")
}

/// A valid job on F3, with `imaging` and `output` lines of its own.
fn job(imaging: &str, output: &str) -> String {
    format!(
        "[input]\npath = {:?}\n\n[velocity]\nkind = \"constant\"\nvelocity = 2000.0\n\n[imaging]\ndz = 5.0\n{imaging}\n\n\
         [output]\ndir = \"out\"\ninlines = [120]\n{output}\n",
        f3()
    )
}

/// `job.toml at line L, column C` for the first occurrence of `needle` in `text`, counted independently of
/// the code under test.
fn position(text: &str, needle: &str) -> String {
    let at = text.find(needle).unwrap_or_else(|| panic!("{needle:?} is not in the job"));
    let line = text[..at].matches('\n').count() + 1;
    let column = at - text[..at].rfind('\n').map_or(0, |n| n + 1) + 1;
    format!("job.toml at line {line}, column {column}")
}

fn validate(dir: &Path, text: &str, overrides: &[&str]) -> crate::cli_common::Outcome {
    let path = write_job(&dir.join("job.toml"), text);
    let mut cmd = seisimage();
    cmd.arg("validate").arg(&path);
    for o in overrides {
        cmd.args(["--set", o]);
    }
    run_command(&mut cmd)
}

#[test]
fn the_base_job_is_valid() {
    let dir = tempfile::tempdir().unwrap();
    let o = validate(dir.path(), &job("", ""), &[]);
    assert_eq!(o.code(), Some(0), "{o:?}");
}

#[test]
fn mistakes_in_the_file_are_exit_2_at_their_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    // (the job, where the error must point, what it must say)
    let cases: Vec<(String, &str, &str)> = vec![
        (job("dz2 = 3.0", ""), "dz2", "imaging.dz2: unknown field `dz2`"),
        (job("", "").replace("[input]\n", "[input]\nbogus = 1\n"), "bogus", "input.bogus: unknown field `bogus`"),
        (job("", "").replace("[input]\n", "[input]\niline_byte = \"x\"\n"), "\"x\"", "input.iline_byte: invalid type"),
        (
            job("", "").replace("[input]\n", "[input]\nsample_interval = -4.0\n"),
            "-4.0",
            "input.sample_interval: sample_interval = -4: must be a positive number",
        ),
        (job("", "[output.render]\ncolour = \"red\""), "colour", "output.render.colour: unknown field `colour`"),
        (job("", "") + "[imagin]\ndz = 3.0\n", "imagin]", "imagin: unknown field `imagin`"),
        (job("fmax = \"high\"", ""), "\"high\"", "imaging.fmax: invalid type: string \"high\", expected f64"),
        (job("method = \"kirchhoff\"", ""), "\"kirchhoff\"", "imaging.method: unknown variant `kirchhoff`"),
        (job("", "").replace("dz = 5.0", "dz = -5.0"), "-5.0", "imaging.dz: dz must be a positive depth step"),
        (job("fmin = 90.0\nfmax = 50.0", ""), "90.0", "imaging.fmin: need 0 ≤ fmin < fmax, not fmin 90 Hz, fmax 50 Hz"),
        // fmin is not in the file: the message points at the key that is
        (job("fmax = 0e0", ""), "0e0", "imaging.fmax: need 0 ≤ fmin < fmax, not fmin 0 Hz, fmax 0 Hz"),
        (job("zmax = 500.0\nnz = 20", ""), "500.0", "imaging.zmax: give zmax or nz, not both"),
        (
            job("", "").replace("velocity = 2000.0", "velocity = -2000.0"),
            "-2000.0",
            "velocity.velocity: velocity -2000 m/s is not a positive number",
        ),
        (job("", "").replace("kind = \"constant\"", "kind = \"cubic\""), "\"cubic\"", "velocity.kind: unknown variant"),
        (job("", "[window]\ntime_pad_factor = 0.5"), "0.5", "window.time_pad_factor: time_pad_factor must be ≥ 1"),
        (job("", "[output.render]\nclip_percentile = 120.0"), "120.0", "output.render.clip_percentile: render option"),
        // An element of a list is located at the element, under its index.
        (job("", "depth_slices = [-10.0]"), "-10.0", "output.depth_slices.0: depths must be in metres, ≥ 0"),
        (job("", "").replace("[120]", "[9999]"), "9999", "output.inlines.0: inline 9999 is not in the survey"),
        (
            job("", "").replace("[120]", "[120, 121, 7000]"),
            "7000",
            "output.inlines.2: inline 7000 is not in the survey",
        ),
        (
            job("", "depth_slices = [100.0, 1000.0]"),
            "1000.0",
            // Without zmax the velocity sets the image's depth: it is named as the possible cause.
            "output.depth_slices.1: depth slice 1000 m is below the deepest depth imaged (300 m): without \
             imaging.zmax or imaging.nz the image ends where the vertical two-way time through the velocity \
             reaches the last sample: check the velocity and its unit (velocity.unit), or set imaging.zmax",
        ),
        // Reading keys are checked by the reader, which names them; the job puts them under their table.
        (
            job("", "").replace("[input]\n", "[input]\niline_byte = 300\n"),
            "300",
            "input.iline_byte: iline_byte = 300: a 4-byte trace header field must start at byte 1 to 237",
        ),
        (
            job("", "").replace(
                "kind = \"constant\"\nvelocity = 2000.0",
                &format!("kind = \"file\"\npath = {:?}\n\n[velocity.input]\nxline_byte = 240", f3()),
            ),
            "240",
            "velocity.input.xline_byte: xline_byte = 240: a 4-byte trace header field",
        ),
        (
            job("", "").replace(
                "kind = \"constant\"\nvelocity = 2000.0",
                "kind = \"table\"\ndepths = [0.0, 500.0]\nvelocities = [1500.0, -1.0]",
            ),
            "[1500.0, -1.0]",
            "velocity.velocities: pick 2 (500 m): velocity -1 m/s is not a positive number",
        ),
        (job("", "crosslines = [880, 100]"), "100]", "output.crosslines.1: crossline 100 is not in the survey"),
        (job("", "[[output.roi]]\nname = \"a b\""), "\"a b\"", "output.roi.0.name: \"a b\" must be letters, digits"),
        // A region outside the image is blamed on the axis that puts it there, in the axis' own terms.
        (
            job("zmax = 200.0", "[[output.roi]]\nname = \"deep\"\ndepth = [5000.0, 6000.0]"),
            "[5000.0, 6000.0]",
            "output.roi.0.depth: depths 5000..=6000 m are below the image (0..=200 m)",
        ),
        (
            job("", "[[output.roi]]\nname = \"west\"\niline = [1, 5]"),
            "[1, 5]",
            "output.roi.0.iline: inlines 1..=5 are outside the survey (inlines 111..=133 step 1)",
        ),
    ];
    for (text, needle, message) in cases {
        let o = validate(dir.path(), &text, &[]);
        assert_eq!(o.code(), Some(2), "{text}\n{o:?}");
        let expect = format!("{}: {message}", position(&text, needle));
        assert!(o.stderr.contains(&expect), "expected {expect:?} for\n{text}\n{o:?}");
    }
    // A missing table has no line of its own: the message says which.
    let text = job("", "").replace("[velocity]\nkind = \"constant\"\nvelocity = 2000.0\n", "");
    let o = validate(dir.path(), &text, &[]);
    assert_eq!(o.code(), Some(2), "{o:?}");
    assert!(o.stderr.contains("missing field `velocity`: the job file needs this table"), "{o:?}");
}

/// A mistake found only once the input is open stops `run` as it stops `validate`: exit 2 at its line,
/// before any output is made.
#[test]
fn a_mistake_found_while_planning_stops_a_run_with_2() {
    let dir = tempfile::tempdir().unwrap();
    let text = job("fmin = 70.0\nfmax = 40.0", "");
    let path = write_job(&dir.path().join("job.toml"), &text);
    let o = run(&["run", path.to_str().unwrap(), "--backend", "cpu"]);
    assert_eq!(o.code(), Some(2), "{o:?}");
    let expect = format!("{}: imaging.fmin: need 0 ≤ fmin < fmax, not fmin 70 Hz, fmax 40 Hz", position(&text, "70.0"));
    assert!(o.stderr.contains(&expect), "expected {expect:?}\n{o:?}");
    assert!(!dir.path().join("out").exists(), "the run made its output folder");
}

#[test]
fn overrides_change_the_job_and_a_bad_one_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_job(&dir.path().join("job.toml"), &job("", ""));
    let o = run(&["print-config", path.to_str().unwrap(), "--set", "imaging.fmax=45", "--set", "compute.backend=cpu"]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    assert!(o.stdout.contains("fmax = 45.0") && o.stdout.contains("backend = \"cpu\""), "{o:?}");
    let o = run(&["validate", path.to_str().unwrap(), "--set", "output.inlines=[111, 133]", "--set", "imaging.nz=9"]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    assert!(o.stdout.contains("inline_111") && o.stdout.contains("inline_133"), "{o:?}");
    assert!(o.stdout.contains("(9 levels)"), "{o:?}");

    for (item, message) in [
        ("imaging.fmax=high", "imaging.fmax: invalid type: string \"high\", expected f64"),
        ("imaging.fmaxx=3", "imaging.fmaxx: unknown field `fmaxx`"),
        ("imaging.dz=-1", "imaging.dz: dz must be a positive depth step in metres, not -1"),
        ("output.inlines=[9999]", "output.inlines.0: inline 9999 is not in the survey"),
        ("velocity.velocity.x=1", "velocity.velocity is not a table"),
        ("imaging", "expected KEY=VALUE"),
        ("imaging..dz=1", "\"imaging..dz\" is not a dotted key"),
    ] {
        let o = validate(dir.path(), &job("", ""), &[item]);
        assert_eq!(o.code(), Some(2), "{item}: {o:?}");
        let expect = format!("error: --set {item}: {message}");
        assert!(o.stderr.contains(&expect), "expected {expect:?}\n{o:?}");
    }
    // Overrides can complete a file: here they supply the whole [velocity] table.
    let without_velocity = job("", "").replace("[velocity]\nkind = \"constant\"\nvelocity = 2000.0\n", "");
    let o = validate(dir.path(), &without_velocity, &["velocity.kind=constant", "velocity.velocity=1800"]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    let o = validate(dir.path(), &without_velocity, &["velocity.kind=constant"]);
    assert_eq!(o.code(), Some(2), "{o:?}");
    assert!(
        o.stderr.contains("--set velocity.kind=constant: velocity.kind: kind = \"constant\" needs velocity"),
        "{o:?}"
    );
    let o = validate(dir.path(), &without_velocity, &["imaging.fmax=50"]);
    assert_eq!(o.code(), Some(2), "{o:?}");
    assert!(o.stderr.contains("missing field `velocity`: the job file needs this table"), "{o:?}");

    // An override that makes a key of the file wrong: the file's line is named, with the reason.
    let o = validate(dir.path(), &job("", ""), &["velocity.kind=table"]);
    assert_eq!(o.code(), Some(2), "{o:?}");
    let text = job("", "");
    let expect = format!("{}: velocity.velocity: kind = \"table\" does not use velocity", position(&text, "2000.0"));
    assert!(o.stderr.contains(&expect), "{o:?}");
}

#[test]
fn print_config_reads_back_as_the_same_job() {
    let dir = tempfile::tempdir().unwrap();
    let text = job("method = \"split-step\"\nzmax = 250.0\nfmax = 45.0\ndip_limit_deg = 50.0", "")
        .replace("[input]\n", "[input]\nnonfinite = \"refuse\"\nbin_size = [25.0, 25.0]\n")
        + "slice_formats = [\"npy\"]\n\n[output.render]\ncolormap = \"gray\"\n\n[[output.roi]]\nname = \"box\"\n\
           iline = [115, 120]\ndepth = [100.0, 200.0]\n\n[window]\nlateral_pad = 16\n";
    let path = write_job(&dir.path().join("job.toml"), &text);
    let printed = run(&["print-config", path.to_str().unwrap()]);
    assert_eq!(printed.code(), Some(0), "{printed:?}");

    // Saved in another folder, the printed job is the same job (its paths are absolute) and prints the same.
    std::fs::create_dir(dir.path().join("elsewhere")).unwrap();
    let copy = write_job(&dir.path().join("elsewhere/resolved.toml"), &printed.stdout);
    let again = run(&["print-config", copy.to_str().unwrap()]);
    assert_eq!(again.code(), Some(0), "{again:?}");
    assert_eq!(again.stdout, printed.stdout);
    let original = Job::load(&path, &[]).unwrap();
    let reread = Job::load(&copy, &[]).unwrap();
    let json = |j: &Job| serde_json::to_value(&j.config).unwrap();
    assert_eq!(json(&reread), json(&original));
    // and every default is there to read
    for key in ["time_taper_ms = 100.0", "edge_taper_traces = 20", "threads = 0", "png = true", "keep_free_gb = 0.0"] {
        assert!(printed.stdout.contains(key), "{key} missing from\n{}", printed.stdout);
    }
    assert!(printed.stdout.contains(&format!("dir = {:?}", dir.path().join("out"))), "{}", printed.stdout);
}

#[test]
fn relative_paths_follow_the_job_file_and_overrides_the_current_folder() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("jobs")).unwrap();
    std::fs::create_dir_all(dir.path().join("data")).unwrap();
    std::fs::create_dir_all(dir.path().join("elsewhere")).unwrap();
    std::fs::copy(f3(), dir.path().join("data/f3.sgy")).unwrap();
    let text = job("", "").replace(&format!("{:?}", f3()), "\"../data/f3.sgy\"");
    let path = write_job(&dir.path().join("jobs/job.toml"), &text);

    // Run from another folder: the input is found next to the job file, not next to the caller.
    let o = run_command(seisimage().current_dir(dir.path().join("elsewhere")).args(["validate", "../jobs/job.toml"]));
    assert_eq!(o.code(), Some(0), "{o:?}");
    let o = run_command(seisimage().current_dir(dir.path().join("elsewhere")).args([
        "print-config",
        path.to_str().unwrap(),
        "--set",
        "output.dir=results",
    ]));
    assert_eq!(o.code(), Some(0), "{o:?}");
    let config: toml::Table = toml::from_str(&o.stdout).unwrap();
    let input = PathBuf::from(config["input"]["path"].as_str().unwrap());
    let out = PathBuf::from(config["output"]["dir"].as_str().unwrap());
    assert!(input.is_absolute() && out.is_absolute());
    // `jobs/../data/f3.sgy` is written as the path it means, without `..`.
    assert_eq!(input, dir.path().join("data/f3.sgy"));
    assert_eq!(out, dir.path().join("elsewhere/results"));
}

#[test]
fn validate_prints_the_plan_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let text = job("zmax = 200.0\nfmax = 50.0", "depth_slices = [100.0]");
    let path = write_job(&dir.path().join("job.toml"), &text);
    let o = run(&["validate", path.to_str().unwrap()]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    for expect in [
        "job.toml: valid",
        "23 inlines (111..=133) × 18 crosslines (875..=892) × 75 samples of 4 ms",
        "padded: ",
        "band: 0.00..",
        "depth: 0..200 m step 5 m (41 levels)",
        "memory: host ≈",
        "inline_120",
        "1 × 18 × 41 values → png",
        "depth_100m",
    ] {
        assert!(o.stdout.contains(expect), "{expect:?} missing:\n{o:?}");
    }
    assert!(!dir.path().join("out").exists(), "validate created the output folder");
}

#[test]
fn usage_errors_are_exit_2() {
    assert_eq!(run(&["run"]).code(), Some(2));
    assert_eq!(run(&["run", "job.toml", "--backend", "opencl"]).code(), Some(2));
    assert_eq!(run(&["--progress-interval", "-1", "run", "job.toml"]).code(), Some(2));
    let o = run(&["validate", "/nonexistent/job.toml"]);
    assert_eq!(o.code(), Some(2), "{o:?}");
    assert!(o.stderr.contains("/nonexistent/job.toml: cannot read the job file: No such file or directory"), "{o:?}");
}

/// Files the job names are checked with the job: a missing input or velocity file, or an output folder
/// that is a file, is a mistake in the job (exit 2 at its line), found by `validate` as by `run`.
#[test]
fn missing_files_and_an_output_file_are_mistakes_at_their_line() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.sgy");
    let cases = [
        (job("", "").replace(&format!("{:?}", f3()), &format!("{missing:?}")), format!("{missing:?}"), "input.path"),
        (
            job("", "").replace("kind = \"constant\"\nvelocity = 2000.0", "kind = \"file\"\npath = \"vint.h5\""),
            "\"vint.h5\"".to_string(),
            "velocity.path",
        ),
    ];
    for (text, needle, key) in cases {
        for command in ["validate", "run"] {
            let path = write_job(&dir.path().join("job.toml"), &text);
            let job = path.to_str().unwrap();
            let o = if command == "run" { run(&["run", job, "--backend", "cpu"]) } else { run(&["validate", job]) };
            assert_eq!(o.code(), Some(2), "{command}: {o:?}");
            let expect = format!("{}: {key}: cannot read ", position(&text, &needle));
            assert!(o.stderr.contains(&expect), "{command}: expected {expect:?}\n{o:?}");
            assert!(o.stderr.contains("No such file or directory"), "{o:?}");
        }
    }
    assert!(!dir.path().join("out").exists(), "a job with a missing file made its output folder");

    std::fs::write(dir.path().join("out"), b"a file").unwrap();
    let text = job("", "");
    let o = validate(dir.path(), &text, &[]);
    assert_eq!(o.code(), Some(2), "{o:?}");
    let expect = format!("{}: output.dir: cannot write in ", position(&text, "\"out\""));
    assert!(o.stderr.contains(&expect) && o.stderr.contains("it is a file, not a folder"), "{o:?}");
}

/// `validate` sets the plan's memory against this machine's, and says when it does not fit.
#[test]
fn validate_compares_the_memory_of_the_plan_with_the_machine() {
    let dir = tempfile::tempdir().unwrap();
    let o = validate(dir.path(), &job("zmax = 200.0", ""), &[]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    let line = o.stdout.lines().find(|l| l.contains("host memory")).unwrap_or_else(|| panic!("{o:?}"));
    assert!(line.contains("available") && line.contains("fits"), "{o:?}");
    assert!(o.stdout.contains("device memory"), "{o:?}");
    // A time padding of ten million: a spectrum of terabytes, which no test machine holds.
    let o = validate(dir.path(), &job("zmax = 200.0", "[window]\ntime_pad_factor = 1e7"), &[]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    let line = o.stdout.lines().find(|l| l.contains("host memory")).unwrap_or_else(|| panic!("{o:?}"));
    assert!(line.contains("does not fit"), "{o:?}");
}

/// `validate` asks about the job's GPU alone, as a run does, so that CUDA's start-up opens no other GPU of
/// the host; its report names the GPU as the job does. Needs `SEISIMAGE_GPU_TESTS=1` and a GPU.
#[test]
fn validate_lets_cuda_see_only_the_jobs_gpu() {
    let Some(count) = gpus_for_tests() else { return };
    let dir = tempfile::tempdir().unwrap();
    let path = write_job(&dir.path().join("job.toml"), &job("zmax = 200.0", ""));
    for device in [0, count - 1] {
        let device_is = format!("compute.device={device}");
        let o = run(&["-v", "validate", path.to_str().unwrap(), "--set", &device_is]);
        assert_eq!(o.code(), Some(0), "{o:?}");
        // A host of one GPU has nothing to hide.
        assert_eq!(o.stderr.contains(&format!("CUDA sees device {device} alone")), count > 1, "{o:?}");
        let line = o.stdout.lines().find(|l| l.contains("device memory")).unwrap_or_else(|| panic!("{o:?}"));
        assert!(line.contains(&format!("GPU {device} (")) && line.contains("fits"), "{o:?}");
    }
}

/// What the plan changed or doubts (fmax above Nyquist, a depth slice moved to the nearest level) is a
/// warning in `validate`'s output, not a note.
#[test]
fn validate_lists_the_warnings_of_the_plan() {
    let dir = tempfile::tempdir().unwrap();
    let o = validate(dir.path(), &job("zmax = 200.0\nfmax = 200.0", "depth_slices = [152.0]"), &[]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    let warnings: Vec<&str> = o.stdout.lines().filter(|l| l.trim_start().starts_with("warning")).collect();
    assert!(warnings.iter().any(|l| l.contains("imaging.fmax") && l.contains("clamped to 125 Hz")), "{o:?}");
    assert!(warnings.iter().any(|l| l.contains("output.depth_slices.0") && l.contains("imaged at 150 m")), "{o:?}");
    assert!(!o.stdout.contains("note:"), "{o:?}");
}

/// Every key a job can hold is documented: each key `print-config` writes for the shipped jobs (every
/// default filled in) is named, as `key`, in configs/README.md.
#[test]
fn every_job_key_is_documented_in_the_configs_readme() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("configs/README.md")).unwrap();
    fn keys(prefix: &str, value: &toml::Value, out: &mut Vec<String>) {
        match value {
            toml::Value::Table(table) => {
                for (key, v) in table {
                    out.push(format!("{prefix}{key}"));
                    keys(&format!("{prefix}{key}."), v, out);
                }
            }
            toml::Value::Array(items) => items.iter().for_each(|v| keys(prefix, v, out)),
            _ => {}
        }
    }
    let mut missing = Vec::new();
    let mut seen = 0;
    for job in ["demo.toml", "demo-rms.toml", "folded.toml"] {
        let o = run(&["print-config", root.join("configs").join(job).to_str().unwrap()]);
        assert_eq!(o.code(), Some(0), "{job}: {o:?}");
        let mut found = Vec::new();
        keys("", &toml::Value::Table(toml::from_str(&o.stdout).unwrap()), &mut found);
        seen += found.len();
        for key in found {
            let name = key.rsplit('.').next().unwrap();
            if !readme.contains(&format!("`{name}`")) && !readme.contains(&format!("[{key}]")) {
                missing.push(key);
            }
        }
    }
    missing.sort();
    missing.dedup();
    assert!(seen > 50, "only {seen} keys seen");
    assert!(missing.is_empty(), "keys not in configs/README.md: {missing:?}");
}

/// Header bytes that make no grid of a file whose headers read are the job's mistake: exit 2 at the key
/// that chose them, in the file or on the command line, with the reader's hint of the bytes that work.
#[test]
fn header_bytes_that_make_no_grid_are_exit_2_at_their_key() {
    let dir = tempfile::tempdir().unwrap();
    let text = job("", "").replacen("[input]\n", "[input]\nheaders = \"standard\"\niline_byte = 5\n", 1);
    let out = validate(dir.path(), &text, &[]);
    assert_eq!(out.code(), Some(2), "{out:?}");
    assert!(out.stderr.contains(&position(&text, "iline_byte = 5")), "{out:?}");
    assert!(out.stderr.contains("input.iline_byte") && out.stderr.contains("bytes 189/193"), "{out:?}");
    // Only the preset is set: the blame is on it.
    let text = job("", "").replacen("[input]\n", "[input]\nheaders = \"petrel\"\n", 1);
    let out = validate(dir.path(), &text, &[]);
    assert_eq!(out.code(), Some(2), "{out:?}");
    assert!(out.stderr.contains(&position(&text, "headers = \"petrel\"")), "{out:?}");
    // On the command line, the override is named.
    let out = validate(dir.path(), &job("", ""), &["input.xline_byte=9"]);
    assert_eq!(out.code(), Some(2), "{out:?}");
    assert!(out.stderr.contains("--set input.xline_byte=9"), "{out:?}");
}
