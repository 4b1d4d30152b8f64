//! The output folder of a run: what a run does with the files already in it (`output.existing`), the lock
//! that keeps two runs out of one folder, and the checks made on every job of a batch before the first
//! migrates.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::cli_common::{
    host_name, job_text, model, names, run, samples, seisimage, write_job, write_segy, Outcome, Running,
};

/// A 20 × 16 × 150 input and a job on it writing inline 5 and crossline 9 into `out`.
fn setup(dir: &Path) -> (PathBuf, PathBuf) {
    let m = model(20, 16, 150);
    let input = dir.join("input.sgy");
    write_segy(&input, &m, &samples(&m));
    let out = dir.join("out");
    let output = "inlines = [5]\ncrosslines = [9]\nslice_formats = [\"npy\"]";
    (write_job(&dir.join("job.toml"), &job_text(&input, &out, "dz = 10.0\nnz = 30", output)), out)
}

fn run_job(job: &Path, extra: &[&str]) -> Outcome {
    run(&[&["run", job.to_str().unwrap()], extra].concat())
}

const LOCK: &str = ".seisimage.lock";

/// By default a run replaces what the previous run's manifest listed (also the products it no longer
/// asks for) and leaves other files alone; `refuse` keeps out of a folder that holds anything; `clean`
/// removes what seisimage could have written there, also leftovers of a run that never finished.
#[test]
fn a_run_replaces_what_the_previous_manifest_owned_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let (job, out) = setup(dir.path());
    assert_eq!(run_job(&job, &[]).code(), Some(0));
    std::fs::write(out.join("notes.txt"), b"mine").unwrap();
    let first = names(&out);
    assert!(first.contains(&"inline_5.png".to_string()), "{first:?}");

    // The same job asking for inline 6 instead of 5: inline 5's files go with the old manifest.
    let o = run_job(&job, &["--set", "output.inlines=[6]"]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    let expect: Vec<String> = first.iter().map(|n| n.replace("inline_5", "inline_6")).collect();
    let mut expect = expect;
    expect.sort();
    assert_eq!(names(&out), expect);

    // refuse: anything in the folder stops the run before it starts, at the key.
    let before = names(&out);
    let o = run_job(&job, &["--set", "output.existing=refuse"]);
    assert_eq!(o.code(), Some(2), "{o:?}");
    assert!(
        o.stderr.contains("--set output.existing=refuse: output.existing: ") && o.stderr.contains("not empty"),
        "{o:?}"
    );
    assert_eq!(names(&out), before);

    // clean: a run interrupted before its manifest left a product and a temporary file; both go, and so
    // does everything the last manifest listed, but not notes.txt.
    std::fs::remove_file(out.join("manifest.json")).unwrap();
    std::fs::write(out.join("inline_3.png"), b"old").unwrap();
    std::fs::write(out.join(".inline_3.png.partial-99999-0"), b"old").unwrap();
    std::fs::write(out.join("roi_box.h5"), b"old").unwrap();
    let o = run_job(&job, &["--set", "output.existing=clean", "--set", "output.crosslines=[10]"]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    let left = names(&out);
    for gone in ["inline_3.png", ".inline_3.png.partial-99999-0", "roi_box.h5", "xline_9.png", "xline_9.npy"] {
        assert!(!left.contains(&gone.to_string()), "{gone} survived: {left:?}");
    }
    assert!(left.contains(&"notes.txt".to_string()) && left.contains(&"xline_10.png".to_string()), "{left:?}");
}

/// A manifest is a file in a folder anyone may write: a path in it that leaves the folder is never
/// followed when the run replaces what that manifest listed.
#[test]
fn a_manifest_cannot_make_a_run_remove_files_outside_its_folder() {
    let dir = tempfile::tempdir().unwrap();
    let (job, out) = setup(dir.path());
    std::fs::create_dir_all(&out).unwrap();
    let victim = dir.path().join("victim.txt");
    std::fs::write(&victim, b"keep").unwrap();
    let forged = serde_json::json!({
        "schema": "seisimage-manifest/1",
        "products": [{"kind": "inline", "files": [
            {"path": "../victim.txt"}, {"path": victim}, {"path": "."}, {"path": ".."}
        ]}]
    });
    std::fs::write(out.join("manifest.json"), forged.to_string()).unwrap();
    let o = run_job(&job, &[]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    assert_eq!(std::fs::read(&victim).unwrap(), b"keep");
}

/// A 48 × 48 × 500 input and a job on it whose migration takes seconds.
fn slow_job(dir: &Path) -> (PathBuf, PathBuf) {
    let m = model(48, 48, 500);
    let input = dir.join("input.sgy");
    write_segy(&input, &m, &samples(&m));
    let out = dir.join("out");
    (write_job(&dir.join("job.toml"), &job_text(&input, &out, "dz = 5.0\nnz = 600", "inlines = [24]")), out)
}

/// Two processes run one job into one folder: the second fails at once (exit 1), naming the first's PID
/// and host; the first, stopped by SIGTERM, leaves no lock behind.
#[test]
fn a_second_run_into_a_folder_in_use_fails_at_once_naming_the_first() {
    let dir = tempfile::tempdir().unwrap();
    let (job, out) = slow_job(dir.path());
    let mut first = Running::start(seisimage().args(["--progress-interval", "0", "run"]).arg(&job));
    first.wait_for("phase shift:", Duration::from_secs(60));
    assert!(out.join(LOCK).exists(), "no lock while the first run migrates");

    let t = Instant::now();
    let o = run_job(&job, &[]);
    assert_eq!(o.code(), Some(1), "{o:?}");
    let expect = format!("in use by another seisimage run: PID {} on {}", first.id(), host_name());
    assert!(o.stderr.contains(&expect), "expected {expect:?}\n{o:?}");
    assert!(!o.stderr.contains("migrating"), "{o:?}");
    assert!(t.elapsed() < Duration::from_secs(5), "took {:?}", t.elapsed());

    first.signal(libc::SIGTERM);
    let (status, log) = first.finish(Duration::from_secs(30));
    assert_eq!(status.code(), Some(143), "{log}");
    assert!(!out.join(LOCK).exists(), "the interrupted run left its lock");
}

/// A lock left by a run that was killed (its process is gone, on this host) is taken over with a warning;
/// a lock from another host cannot be checked and stops the run; a lock that is a symbolic link is never
/// written through.
#[test]
fn a_stale_lock_is_taken_over_and_a_foreign_one_is_respected() {
    let dir = tempfile::tempdir().unwrap();
    let (job, out) = setup(dir.path());
    std::fs::create_dir_all(&out).unwrap();
    let mut gone = crate::cli_common::child("true").spawn().unwrap();
    let dead = gone.id();
    gone.wait().unwrap();
    let lock = |pid: u32, host: &str| {
        serde_json::json!({"pid": pid, "host": host, "started_utc": "2026-01-01T00:00:00Z"}).to_string()
    };
    std::fs::write(out.join(LOCK), lock(dead, &host_name())).unwrap();
    let o = run_job(&job, &[]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    let warning =
        o.stderr.lines().find(|l| l.contains(" WARN ") && l.contains("took over")).unwrap_or_else(|| panic!("{o:?}"));
    assert!(warning.contains(&format!("PID {dead}")), "{warning}");
    assert!(!out.join(LOCK).exists());

    std::fs::write(out.join(LOCK), lock(1, "elsewhere-node-7")).unwrap();
    let o = run_job(&job, &[]);
    assert_eq!(o.code(), Some(1), "{o:?}");
    assert!(o.stderr.contains("PID 1 on elsewhere-node-7"), "{o:?}");
    assert!(o.stderr.contains(&out.join(LOCK).display().to_string()), "the message names the lock file: {o:?}");
    std::fs::remove_file(out.join(LOCK)).unwrap();

    let victim = dir.path().join("victim.txt");
    std::fs::write(&victim, b"keep").unwrap();
    std::os::unix::fs::symlink(&victim, out.join(LOCK)).unwrap();
    let o = run_job(&job, &[]);
    assert_eq!(o.code(), Some(1), "{o:?}");
    assert!(o.stderr.contains(LOCK), "{o:?}");
    assert_eq!(std::fs::read(&victim).unwrap(), b"keep");
}

/// `run a b`: b's missing input is found before a migrates.
#[test]
fn every_job_of_a_batch_is_checked_before_the_first_migrates() {
    let dir = tempfile::tempdir().unwrap();
    let (a, a_out) = setup(dir.path());
    let text = std::fs::read_to_string(&a).unwrap();
    let b = write_job(
        &dir.path().join("b.toml"),
        &text
            .replace("input.sgy", "no-such-input.sgy")
            .replace(&format!("{a_out:?}"), &format!("{:?}", dir.path().join("out_b"))),
    );
    let o = run(&["run", a.to_str().unwrap(), b.to_str().unwrap()]);
    assert_eq!(o.code(), Some(2), "{o:?}");
    assert!(o.stderr.contains("b.toml at line 2, column 8: input.path: cannot read "), "{o:?}");
    assert!(!o.stderr.contains("migrating"), "{o:?}");
    assert!(!a_out.join("manifest.json").exists());
}

/// The files of a manifest as `replace` reads them: plain names with their sizes and checksums, as the
/// files are now (a manifest that describes them truly).
fn manifest_listing(dir: &Path, names: &[&str]) -> String {
    use sha2::{Digest, Sha256};
    let files: Vec<serde_json::Value> = names
        .iter()
        .map(|name| {
            let bytes = std::fs::read(dir.join(name)).unwrap();
            let sha: String = Sha256::digest(&bytes).iter().map(|b| format!("{b:02x}")).collect();
            serde_json::json!({"path": name, "format": "x", "bytes": bytes.len(), "sha256": sha})
        })
        .collect();
    serde_json::json!({"schema": "seisimage-manifest/1", "products": [{"kind": "inline", "files": files}]}).to_string()
}

/// A job writing into `out` that reads an input and a v(t) table kept in `out` under the names given, both
/// written here; `output` is the body of `[output]` after its `dir`.
fn job_reading_files_in(out: &Path, input: &str, velocity: &str, output: &str) -> String {
    let m = model(20, 16, 150);
    let (input, velocity) = (out.join(input), out.join(velocity));
    write_segy(&input, &m, &samples(&m));
    std::fs::write(&velocity, "0 2000\n1000 2000\n").unwrap();
    job_text(&input, out, "dz = 10.0\nnz = 30", output).replace(
        "kind = \"constant\"\nvelocity = 2000.0",
        &format!("kind = \"table\"\npath = {velocity:?}\ndomain = \"time\""),
    )
}

/// Run 1 writes a region in time; run 2 migrates that region again, into the same folder. The region is
/// run 2's input, listed by run 1's manifest as one of its products: `replace` must not take it, and says
/// that it leaves it.
#[test]
fn replace_never_removes_the_input_an_earlier_manifest_listed() {
    let dir = tempfile::tempdir().unwrap();
    let m = model(20, 16, 150);
    let input = dir.path().join("input.sgy");
    write_segy(&input, &m, &samples(&m));
    let out = dir.path().join("out");
    let roi = "domain = [\"depth\", \"time\"]\n\n[[output.roi]]\nname = \"c\"\nformats = [\"segy\"]";
    let first = write_job(&dir.path().join("first.toml"), &job_text(&input, &out, "dz = 10.0\nnz = 30", roi));
    let o = run_job(&first, &[]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    let region = out.join("roi_c_time.sgy");
    let before = std::fs::read(&region).expect("run 1 wrote the region in time");

    let second =
        write_job(&dir.path().join("second.toml"), &job_text(&region, &out, "dz = 10.0\nnz = 30", "inlines = [5]"));
    let v = run(&["validate", second.to_str().unwrap()]);
    assert_eq!(v.code(), Some(0), "{v:?}");
    assert!(v.stdout.contains("roi_c_time.sgy: it is the input of this run"), "{}", v.stdout);
    let o = run_job(&second, &[]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    assert_eq!(std::fs::read(&region).unwrap(), before, "the input of run 2 was removed or changed");
    assert!(o.stderr.contains("leaves roi_c_time.sgy: it is the input of this run"), "{}", o.stderr);
}

/// A manifest that lists the job's input, velocity file and job file and a file of the user's: none of
/// them goes, the inputs because they are inputs, the file because it is no longer as listed. A manifest
/// planted by another user (as root: a file chowned to nobody) takes nothing, even files that match it.
#[test]
fn a_planted_manifest_cannot_name_what_replace_removes() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir_all(&out).unwrap();
    // Everything inside the output folder, where a manifest's plain names reach.
    let text = job_reading_files_in(&out, "survey.sgy", "vel.txt", "inlines = [5]");
    std::fs::write(out.join("notes.txt"), b"field notes").unwrap();
    let job = write_job(&out.join("job.toml"), &text);
    let listed = ["survey.sgy", "vel.txt", "job.toml", "notes.txt"];
    let kept = |o: &Outcome| {
        for name in listed {
            assert!(out.join(name).exists(), "{name} was removed: {o:?}");
        }
    };
    // Listed with another size than notes.txt has: nothing is taken, and validate says so first.
    std::fs::write(out.join("manifest.json"), manifest_listing(&out, &listed)).unwrap();
    std::fs::write(out.join("notes.txt"), b"field notes, edited").unwrap();
    let v = run(&["validate", job.to_str().unwrap()]);
    assert_eq!(v.code(), Some(0), "{v:?}");
    for (name, what) in [("survey.sgy", "the input"), ("vel.txt", "the velocity file"), ("job.toml", "the job file")] {
        assert!(v.stdout.contains(&format!("leaves {name}: it is {what} of this run")), "{name}: {}", v.stdout);
    }
    assert!(v.stdout.contains("existing  replace: removes no file"), "{}", v.stdout);
    let o = run_job(&job, &[]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    kept(&o);
    assert!(o.stderr.contains("leaves notes.txt: it has 19 bytes, not the 11 the manifest lists"), "{}", o.stderr);

    // Planted by another user: nothing it lists is taken, even files that match it.
    if rustix::process::geteuid().as_raw() != 0 {
        eprintln!("not root: the manifest of another user is not tried");
        return;
    }
    std::fs::write(out.join("manifest.json"), manifest_listing(&out, &listed)).unwrap();
    std::os::unix::fs::chown(out.join("manifest.json"), Some(65534), Some(65534)).unwrap();
    let o = run_job(&job, &[]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    kept(&o);
    assert!(o.stderr.contains("it belongs to another user (uid 65534)"), "{}", o.stderr);
}

/// `clean` takes files named as products, but never the job's input or velocity file named so, and
/// `validate` says what it takes and what it leaves.
#[test]
fn clean_never_removes_inputs_named_like_products() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir_all(&out).unwrap();
    let text = job_reading_files_in(&out, "inline_7.sgy", "roi_vel.json", "inlines = [5]\nexisting = \"clean\"");
    let (input, velocity) = (out.join("inline_7.sgy"), out.join("roi_vel.json"));
    std::fs::write(out.join("inline_3.png"), b"old").unwrap();
    let job = write_job(&dir.path().join("job.toml"), &text);
    let v = run(&["validate", job.to_str().unwrap()]);
    assert_eq!(v.code(), Some(0), "{v:?}");
    assert!(v.stdout.contains("existing  clean: removes 1 file: inline_3.png"), "{}", v.stdout);
    assert!(v.stdout.contains("leaves inline_7.sgy: it is the input of this run"), "{}", v.stdout);
    assert!(v.stdout.contains("leaves roi_vel.json: it is the velocity file of this run"), "{}", v.stdout);
    let o = run_job(&job, &[]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    assert!(input.exists() && velocity.exists(), "{:?}", names(&out));
    assert!(!out.join("inline_3.png").exists(), "{:?}", names(&out));
}

/// A job file named manifest.json in its own output folder would be replaced by the run's manifest: the
/// job is refused before anything is written, and the file is left as it was.
#[test]
fn a_job_file_that_is_the_manifest_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (job, out) = setup(dir.path());
    std::fs::create_dir_all(&out).unwrap();
    let text = std::fs::read_to_string(&job).unwrap();
    let manifest = out.join("manifest.json");
    std::fs::write(&manifest, &text).unwrap();
    for command in ["validate", "run"] {
        let o = run(&[command, manifest.to_str().unwrap()]);
        assert_eq!(o.code(), Some(2), "{command}: {o:?}");
        assert!(o.stderr.contains("would replace the job file"), "{command}: {}", o.stderr);
        assert_eq!(std::fs::read_to_string(&manifest).unwrap(), text, "{command} changed the job file");
    }
}
