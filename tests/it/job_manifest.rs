//! `seisimage run` end to end on a synthetic volume: the manifest and the products it lists (checksums
//! recomputed here, axes worked out by hand from the job), a re-run over an old output folder, the choice
//! of backend, and what a batch log looks like.

use std::path::{Path, PathBuf};

use crate::cli_common::{gpus_for_tests, job_text, model, names, run, samples, write_job, write_segy, Outcome};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

/// A 20 × 16 × 150 input (inlines 1..=20, crosslines 1..=16, 4 ms) and a job on it: 50 levels of 10 m.
const OUTPUT: &str = "inlines = [5]\ncrosslines = [9]\ndepth_slices = [120.0]\nslice_formats = [\"npy\"]\n\n\
                      [[output.roi]]\nname = \"box\"\niline = [3, 7]\nxline = [2, 4]\ndepth = [100.0, 200.0]\n\
                      formats = [\"segy\", \"hdf5\", \"npy\"]";

fn setup(dir: &Path) -> (PathBuf, PathBuf) {
    let m = model(20, 16, 150);
    let input = dir.join("input.sgy");
    write_segy(&input, &m, &samples(&m));
    let out = dir.join("out");
    (write_job(&dir.join("job.toml"), &job_text(&input, &out, "dz = 10.0\nnz = 50", OUTPUT)), out)
}

fn run_job(job: &Path, extra: &[&str]) -> Outcome {
    run(&[&["run", job.to_str().unwrap()], extra].concat())
}

fn manifest(out: &Path) -> Value {
    let text = std::fs::read_to_string(out.join("manifest.json")).expect("manifest.json");
    serde_json::from_str(&text).expect("manifest.json is JSON")
}

fn sha256(path: &Path) -> String {
    Sha256::digest(std::fs::read(path).unwrap()).iter().map(|b| format!("{b:02x}")).collect()
}

fn line(first: i64, len: u64) -> Value {
    json!({"first": first, "step": 1, "len": len})
}

fn depth(origin: f64, len: u64) -> Value {
    json!({"origin": origin, "step": 10.0, "len": len, "domain": "depth"})
}

#[test]
fn the_manifest_records_the_run_and_vouches_for_every_product() {
    let dir = tempfile::tempdir().unwrap();
    let (job, out) = setup(dir.path());
    let o = run_job(&job, &[]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    let m = manifest(&out);

    assert_eq!(m["schema"], "seisimage-manifest/1");
    assert_eq!(m["versions"]["seisimage"], env!("CARGO_PKG_VERSION"));
    assert!(m["versions"]["hdf5"].as_str().unwrap().split('.').count() == 3, "{}", m["versions"]);
    assert_eq!(m["job_file"], json!(job));
    assert!(m["wall_seconds"].as_f64().unwrap() > 0.0);
    assert!(m["started_utc"].as_str().unwrap().ends_with('Z') && m["finished_utc"].as_str().unwrap().ends_with('Z'));
    // the resolved job: defaults filled in, paths absolute
    assert_eq!(m["config"]["imaging"]["dz"], 10.0);
    assert_eq!(m["config"]["imaging"]["method"], "phase-shift");
    assert_eq!(m["config"]["window"]["time_pad_factor"], 2.0);
    assert_eq!(m["config"]["input"]["path"], json!(dir.path().join("input.sgy")));
    assert_eq!(m["config"]["output"]["dir"], json!(out));
    // the input as read
    assert_eq!(m["input"]["axes"]["iline"], line(1, 20));
    assert_eq!(m["input"]["axes"]["xline"], line(1, 16));
    assert_eq!(m["input"]["axes"]["samples"], json!({"origin": 0.0, "step": 4.0, "len": 150, "domain": "time"}));
    assert_eq!((m["input"]["traces"].as_u64(), m["input"]["missing_traces"].as_u64()), (Some(320), Some(0)));
    assert_eq!(m["input"]["bin_size_source"], "survey coordinates");
    // the input file as it was when read, the machine, and how the run was started
    let input_meta = std::fs::metadata(dir.path().join("input.sgy")).unwrap();
    assert_eq!(m["input"]["file"]["bytes"].as_u64(), Some(input_meta.len()));
    let modified = seisimage::run::utc(input_meta.modified().unwrap());
    assert_eq!(m["input"]["file"]["modified_utc"], modified.as_str());
    assert_eq!(m["velocity_file"], Value::Null, "a constant velocity has no file");
    assert_eq!(m["host"], crate::cli_common::host_name().as_str());
    let command: Vec<&str> = m["command_line"].as_array().unwrap().iter().map(|a| a.as_str().unwrap()).collect();
    assert_eq!(command[1..], ["run", job.to_str().unwrap()]);
    assert_eq!(m["overrides"], json!([]));
    // 10 m steps and bins are coarse for 60 Hz at 2000 m/s: the plan says so.
    let warnings = m["warnings"].as_array().unwrap();
    assert!(warnings.iter().any(|w| w.as_str().unwrap().starts_with("imaging.dz: dz 10 m is coarser")), "{warnings:?}");
    // the CPU moves nothing across a PCIe bus
    assert_eq!(m["backend"]["kind"], "cpu");
    let stages = &m["stages"];
    assert_eq!((stages["host_to_device_bytes"].as_u64(), stages["device_to_host_bytes"].as_u64()), (Some(0), Some(0)));
    assert_eq!(stages["nonfinite_samples"], 0);
    let stage_names: Vec<&str> =
        stages["stages"].as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap()).collect();
    for name in ["read", "time-fft", "spatial-fft", "migrate", "write"] {
        assert!(stage_names.contains(&name), "no stage {name} in {stage_names:?}");
    }
    let read = stages["stages"].as_array().unwrap().iter().find(|s| s["name"] == "read").unwrap();
    assert_eq!(read["bytes"], 20 * 16 * 150 * 4, "the read stage counts the input's samples");

    // Each product: its kind and its axes on the image grid (inlines 1..=20, crosslines 1..=16, depths
    // 0, 10, ..., 490 m), worked out from the job.
    let products = m["products"].as_array().unwrap();
    let expect = [
        (json!({"kind": "inline", "iline": 5}), [line(5, 1), line(1, 16), depth(0.0, 50)]),
        (json!({"kind": "crossline", "xline": 9}), [line(1, 20), line(9, 1), depth(0.0, 50)]),
        (json!({"kind": "depth-slice", "depth_m": 120.0}), [line(1, 20), line(1, 16), depth(120.0, 1)]),
        (json!({"kind": "roi", "name": "box"}), [line(3, 5), line(2, 3), depth(100.0, 11)]),
    ];
    // The products, then the run's page.
    assert_eq!(products.len(), expect.len() + 1);
    assert_eq!(products[expect.len()]["kind"], "index");
    assert_eq!(products[expect.len()]["files"][0]["path"], "index.html");
    for (p, (kind, [il, xl, z])) in products.iter().zip(expect) {
        for (k, v) in kind.as_object().unwrap() {
            assert_eq!(&p[k], v, "{p}");
        }
        assert_eq!(p["axes"], json!({"iline": il, "xline": xl, "depth": z}), "{kind}");
    }

    // Every file listed exists beside the manifest with the size and checksum recorded, and nothing else is
    // in the folder.
    let mut listed = vec!["manifest.json".to_string()];
    let mut total = 0;
    for f in products.iter().flat_map(|p| p["files"].as_array().unwrap()) {
        let name = f["path"].as_str().unwrap();
        let path = out.join(name);
        assert_eq!(f["sha256"].as_str().unwrap(), sha256(&path), "{name}");
        assert_eq!(f["bytes"].as_u64().unwrap(), std::fs::metadata(&path).unwrap().len(), "{name}");
        total += f["bytes"].as_u64().unwrap();
        listed.push(name.to_string());
    }
    listed.sort();
    assert_eq!(names(&out), listed);
    assert_eq!(m["product_bytes"].as_u64(), Some(total));
    let formats: Vec<&str> =
        products[3]["files"].as_array().unwrap().iter().map(|f| f["format"].as_str().unwrap()).collect();
    assert_eq!(formats, ["sgy", "h5", "npy"]);
    let formats: Vec<&str> =
        products[0]["files"].as_array().unwrap().iter().map(|f| f["format"].as_str().unwrap()).collect();
    assert_eq!(formats, ["png", "json", "npy"]);
}

/// A run over an earlier run's folder: the old manifest must not outlive the start of the migration, or a
/// failed re-run would leave new and old products under a manifest that vouches for the old ones. A run
/// that cannot begin (no such backend here) changes nothing.
#[test]
fn a_rerun_removes_the_old_manifest_before_migrating() {
    let dir = tempfile::tempdir().unwrap();
    let (job, out) = setup(dir.path());
    assert_eq!(run_job(&job, &[]).code(), Some(0));
    let first = std::fs::read(out.join("manifest.json")).unwrap();

    if seisimage::gpu::probe().is_err() {
        let o = run_job(&job, &["--backend", "cuda"]);
        assert_eq!(o.code(), Some(1), "{o:?}");
        assert_eq!(std::fs::read(out.join("manifest.json")).unwrap(), first, "a run that never began changed it");
    }

    // The input now holds a NaN and the job refuses NaNs: the re-run fails while reading its input.
    let m = model(20, 16, 150);
    let mut data = samples(&m);
    data[1000] = f32::NAN;
    write_segy(&dir.path().join("input.sgy"), &m, &data);
    let o = run_job(&job, &["--set", "input.nonfinite=refuse"]);
    assert_eq!(o.code(), Some(1), "{o:?}");
    assert!(o.stderr.contains("migrating"), "the re-run must fail during the migration to test this: {o:?}");
    assert!(!out.join("manifest.json").exists(), "the old manifest survived a failed re-run");
    assert!(out.join("inline_5.png").exists(), "old products stay; only the manifest vouched for them");

    let o = run_job(&job, &[]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    assert_eq!(manifest(&out)["stages"]["nonfinite_samples"], 1);
}

/// `auto` runs on the CPU where no GPU is usable, and says why in the log and the manifest; `cuda` where
/// none is usable fails with exit code 1 (this machine cannot run the job; the job itself is fine).
#[test]
fn the_backend_falls_back_to_the_cpu_only_when_asked_to() {
    let dir = tempfile::tempdir().unwrap();
    let (job, out) = setup(dir.path());
    let o = run_job(&job, &["--backend", "auto"]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    let m = manifest(&out);
    match seisimage::gpu::probe() {
        Err(why) => {
            assert_eq!(m["backend"]["kind"], "cpu");
            assert!(m["backend"]["detail"].as_str().unwrap().contains(&why.0), "{}", m["backend"]);
            // One short line says why, once per process, however many jobs; the whole reason at debug level.
            let ([first, second], _, _) = two_jobs(dir.path());
            let o = run(&["run", first.to_str().unwrap(), second.to_str().unwrap(), "--backend", "auto"]);
            assert_eq!(o.code(), Some(0), "{o:?}");
            let said: Vec<&str> = o.stderr.lines().filter(|l| l.contains("no usable GPU")).collect();
            assert_eq!(said.len(), 1, "{o:?}");
            assert!(said[0].len() < 160 && !said[0].contains(&why.0), "{}", said[0]);
            let o = run(&["-v", "run", job.to_str().unwrap(), "--backend", "auto"]);
            assert!(o.stderr.contains(&why.0), "{o:?}");

            let o = run_job(&job, &["--backend", "cuda"]);
            assert_eq!(o.code(), Some(1), "{o:?}");
            let expect = format!("error: the cuda backend was asked for but cannot run here: {}", why.0);
            assert!(o.stderr.contains(&expect), "{o:?}");
            assert!(!o.stderr.contains("migrating"), "{o:?}");
        }
        // With a GPU, `auto` uses it when the CUDA engine can run, else says why it fell back.
        Ok(_) => {
            let kind = m["backend"]["kind"].as_str().unwrap();
            assert!(kind == "cuda" || o.stderr.contains("no usable GPU"), "{o:?}");
        }
    }
}

/// A run on one GPU lets CUDA see that GPU alone, so that CUDA's start-up opens no other: the job runs on
/// the device it names, also when that is not the first, and its products are those of the first device;
/// a device that does not exist is named in the error. Needs `SEISIMAGE_GPU_TESTS=1` and a GPU.
#[test]
fn a_run_on_one_gpu_lets_cuda_see_only_that_gpu() {
    let Some(count) = gpus_for_tests() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (job, out) = setup(dir.path());
    let mut products = Vec::new();
    for device in [0, count - 1] {
        let device_is = format!("compute.device={device}");
        let job = job.to_str().unwrap();
        // Deterministic sums: the two devices must give the same bits.
        let o =
            run(&["-v", "run", job, "--backend", "cuda", "--set", &device_is, "--set", "compute.deterministic=true"]);
        assert_eq!(o.code(), Some(0), "{o:?}");
        // A host of one GPU has nothing to hide.
        assert_eq!(o.stderr.contains(&format!("CUDA sees device {device} alone")), count > 1, "{o:?}");
        assert_eq!(manifest(&out)["backend"]["kind"], "cuda");
        products.push(std::fs::read(out.join("depth_120m.npy")).unwrap());
    }
    assert!(products[0] == products[1], "device {} computed another image than device 0", count - 1);
    let o = run_job(&job, &["--backend", "cuda", "--set", &format!("compute.device={count}")]);
    assert_eq!(o.code(), Some(1), "{o:?}");
    assert!(o.stderr.contains(&format!("compute.device = {count} but only {count} CUDA device(s) exist")), "{o:?}");
}

/// Without a terminal, stderr is a plain batch log: timestamped lines, progress lines at the interval
/// asked for, no colour codes, no progress bar; `--quiet` leaves only warnings and errors. The log alone
/// says what ran: the version, the job file, the input, the method and its key parameters, the products;
/// each progress line counts in a unit and says how long is left.
#[test]
fn a_batch_log_is_plain_lines() {
    let dir = tempfile::tempdir().unwrap();
    let (job, out) = setup(dir.path());
    let o = run(&["--progress-interval", "0", "run", job.to_str().unwrap()]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    assert!(!o.stderr.contains('\x1b') && !o.stderr.contains('\r'), "{o:?}");
    for expect in [
        &format!("INFO seisimage {}: job {}", env!("CARGO_PKG_VERSION"), job.display()),
        &format!(
            "INFO input {}: 20 inlines × 16 crosslines × 150 samples of 4 ms",
            dir.path().join("input.sgy").display()
        ),
        "INFO phase-shift, velocity constant 2000 m/s, depth 0..490 m step 10 m, 0.00..60.00 Hz",
        &format!("INFO 4 products into {}: inline_5, xline_9, depth_120m, roi_box", out.display()),
        "INFO migrating with phase-shift on cpu",
        "INFO writing: 4/4 products (100 %)",
        "INFO done in",
    ] {
        assert!(o.stderr.contains(expect), "{expect:?} missing:\n{}", o.stderr);
    }
    let progress: Vec<&str> = o.stderr.lines().filter(|l| l.contains("INFO phase shift: ")).collect();
    assert!(!progress.is_empty(), "{}", o.stderr);
    for line in progress {
        assert!(line.contains("/50 depth levels ("), "{line}");
        assert!(line.contains("(100 %)") || line.contains(" left"), "{line}");
    }
    assert!(
        o.stderr.lines().all(|l| l.starts_with("20") && l.contains('T')),
        "lines without a timestamp:\n{}",
        o.stderr
    );

    // The job's warnings (coarse steps for its band) stay; nothing else does.
    let o = run(&["--quiet", "run", job.to_str().unwrap()]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    assert!(!o.stderr.is_empty() && o.stderr.lines().all(|l| l.contains(" WARN ")), "{o:?}");
}

/// The job of [`setup`] and a second one on the same input, 30 levels deep, writing into `out2`: the job
/// files, their output folders, and the first job's text.
fn two_jobs(dir: &Path) -> ([PathBuf; 2], [PathBuf; 2], String) {
    let (first, first_out) = setup(dir);
    let text = std::fs::read_to_string(&first).unwrap();
    let second_out = dir.join("out2");
    let second = write_job(
        &dir.join("second.toml"),
        &text.replace(&format!("{first_out:?}"), &format!("{second_out:?}")).replace("nz = 50", "nz = 30"),
    );
    ([first, second], [first_out, second_out], text)
}

/// Several job files in one `run`: each gets its products and manifest as if run alone; a job whose input
/// cannot be read is reported by name and the others still run; the exit code is that failure's.
#[test]
fn several_jobs_run_in_one_process_and_a_failure_ends_only_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let ([first, second], [first_out, second_out], text) = two_jobs(dir.path());
    let broken_input = dir.path().join("truncated.sgy");
    std::fs::write(&broken_input, &std::fs::read(dir.path().join("input.sgy")).unwrap()[..3000]).unwrap();
    let broken_out = dir.path().join("out3");
    let broken = write_job(
        &dir.path().join("broken.toml"),
        &text
            .replace(&format!("{:?}", first_out), &format!("{:?}", broken_out))
            .replace(&format!("{:?}", dir.path().join("input.sgy")), &format!("{broken_input:?}")),
    );

    let o = run(&["run", first.to_str().unwrap(), broken.to_str().unwrap(), second.to_str().unwrap()]);
    assert_eq!(o.code(), Some(1), "a damaged input is a failure of the run (exit 1): {o:?}");
    assert!(o.stderr.contains("job 3 of 3"), "{o:?}");
    assert!(o.stderr.contains("1 of 3 jobs failed") && o.stderr.contains("broken.toml"), "{o:?}");
    assert!(o.stderr.contains("truncated.sgy"), "the failure names the file: {o:?}");
    let (a, b) = (manifest(&first_out), manifest(&second_out));
    assert_eq!(a["job_file"], json!(first));
    assert_eq!(b["job_file"], json!(second));
    assert_eq!(a["products"].as_array().unwrap().len(), b["products"].as_array().unwrap().len());
    // The second job's own depth axis, and its products on disk as its manifest says.
    assert_eq!(b["config"]["imaging"]["nz"], 30);
    for p in b["products"].as_array().unwrap() {
        for f in p["files"].as_array().unwrap() {
            let path = second_out.join(f["path"].as_str().unwrap());
            assert_eq!(sha256(&path), f["sha256"].as_str().unwrap(), "{}", path.display());
        }
    }
    assert!(!broken_out.join("manifest.json").exists());
    // Only the first job waited for the engine to be set up; the next ones used it as it was.
    let stage = |m: &Value, name: &str| m["stages"]["stages"].as_array().unwrap().iter().any(|s| s["name"] == name);
    assert!(stage(&a, "engine-setup") && !stage(&b, "engine-setup"), "{}", b["stages"]);

    // A mistake in any job file, or two jobs sharing an output folder, stops the batch before it starts.
    std::fs::remove_dir_all(&first_out).unwrap();
    let bad = write_job(&dir.path().join("bad.toml"), &text.replace("nz = 50", "nz = \"fifty\""));
    let o = run(&["run", first.to_str().unwrap(), bad.to_str().unwrap()]);
    assert_eq!(o.code(), Some(2), "{o:?}");
    assert!(o.stderr.contains("bad.toml"), "{o:?}");
    let o = run(&["run", first.to_str().unwrap(), second.to_str().unwrap(), first.to_str().unwrap()]);
    assert_eq!(o.code(), Some(2), "{o:?}");
    assert!(o.stderr.contains("output folder"), "{o:?}");
    assert!(!first_out.exists(), "nothing ran: {:?}", names(dir.path()));
}

/// A command's last engine is left whole for the process's exit to free, and only its last: two jobs of one
/// `run` share one engine, left at the end; two jobs of one `--shard` each have their own, and the first is
/// released before the second starts, so that the second has the device to itself. The products, or the
/// partial products, are written whole all the same.
#[test]
fn only_a_commands_last_engine_is_left_for_its_exit() {
    let dir = tempfile::tempdir().unwrap();
    let ([first, second], outs, _) = two_jobs(dir.path());
    let (first, second) = (first.to_str().unwrap(), second.to_str().unwrap());
    let released = |o: &Outcome| o.stderr.matches("compute engine released in").count();
    let left = |o: &Outcome| o.stderr.matches("compute engine left for the process's exit").count();

    let o = run(&["-v", "run", first, second, "--backend", "cpu"]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    assert_eq!((released(&o), left(&o)), (0, 1), "{o:?}");
    for out in &outs {
        assert!(out.join("manifest.json").is_file(), "{o:?}");
    }

    let o = run(&["-v", "run", first, second, "--backend", "cpu", "--shard", "1/2"]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    assert_eq!((released(&o), left(&o)), (1, 1), "{o:?}");
    assert!(o.stderr.find("compute engine released in") < o.stderr.find("left for the process's exit"), "{o:?}");
    for out in &outs {
        assert!(names(out).contains(&"shard-1-of-2.partial".to_string()), "{:?}: {o:?}", names(out));
    }
}

/// The batch runner itself, in this process, on the GPU when `SEISIMAGE_GPU_TESTS=1` (else the CPU): two
/// jobs run on one engine, set up once, and each writes what it writes when run alone (bit for bit on
/// the CPU; on the GPU to the last bits the phase-shift kernel's summation order leaves free).
#[test]
fn jobs_of_one_batch_share_the_engine_and_compute_what_they_compute_alone() {
    use seisimage::cancel::CancelToken;
    use seisimage::context::RunContext;
    use seisimage::job::{Backend, Job};
    use seisimage::progress::Silent;
    use seisimage::run::{execute, prepare, run_jobs, start_engine, RunMode};
    let backend = match std::env::var("SEISIMAGE_GPU_TESTS").as_deref() {
        Ok("1") => Backend::Cuda,
        _ => Backend::Cpu,
    };
    let dir = tempfile::tempdir().unwrap();
    let ([first, second], [first_out, second_out], _) = two_jobs(dir.path());
    let jobs = [Job::load(&first, &[]).unwrap(), Job::load(&second, &[]).unwrap()];
    let finished = std::sync::Mutex::new(Vec::new());
    let failed = run_jobs(&jobs, Some(backend), &RunMode::Alone, &Silent, &CancelToken::new(), &|m| {
        finished.lock().unwrap().push(m.job_file.clone())
    })
    .expect("the batch runs");
    assert!(failed.is_empty(), "{failed:?}");
    assert_eq!(*finished.lock().unwrap(), vec![first.clone(), second.clone()]);
    let (a, b) = (manifest(&first_out), manifest(&second_out));
    let kind = if backend == Backend::Cuda { "cuda" } else { "cpu" };
    assert!(a["backend"]["kind"] == kind && b["backend"]["kind"] == kind, "{} {}", a["backend"], b["backend"]);
    let stage = |m: &Value, name: &str| m["stages"]["stages"].as_array().unwrap().iter().any(|s| s["name"] == name);
    assert!(stage(&a, "engine-setup") && !stage(&b, "engine-setup"), "the second job reuses the engine");

    for (job, out) in [(&jobs[0], &first_out), (&jobs[1], &second_out)] {
        let mut alone = job.clone();
        alone.config.output.dir = out.with_extension("alone");
        let engine = start_engine(&alone, backend, &RunMode::Alone);
        execute(
            &prepare(alone.clone()).unwrap(),
            engine,
            &RunMode::Alone,
            &mut RunContext::new(&Silent, CancelToken::new()),
        )
        .expect("the job alone");
        let products = names(out).into_iter().filter(|n| n.ends_with(".npy")).collect::<Vec<_>>();
        assert_eq!(products.len(), 4, "{products:?}");
        for name in products {
            let (shape, batch) = seisimage::io::npy::read(&out.join(&name)).unwrap();
            let (alone_shape, alone) = seisimage::io::npy::read(&alone.config.output.dir.join(&name)).unwrap();
            assert_eq!(shape, alone_shape, "{name}");
            let diff: f64 = batch.iter().zip(&alone).map(|(x, y)| (*x as f64 - *y as f64).powi(2)).sum();
            let norm: f64 = alone.iter().map(|y| (*y as f64).powi(2)).sum();
            let e = (diff / norm).sqrt();
            match backend {
                Backend::Cpu => assert_eq!(batch, alone, "{name}"),
                _ => assert!(e <= 1e-6, "{name}: relative L2 {e:.2e}"),
            }
        }
    }
}

/// The manifest records how the run was started: the command line, the values `--set` gave, and the
/// Slurm job and array task it ran in.
#[test]
fn the_manifest_records_the_command_line_overrides_and_slurm_ids() {
    let dir = tempfile::tempdir().unwrap();
    let (job, out) = setup(dir.path());
    let o = crate::cli_common::run_command(
        crate::cli_common::seisimage()
            .args(["run", job.to_str().unwrap(), "--set", "imaging.fmax=40", "--set", "output.png=false"])
            .env("SLURM_JOB_ID", "4242")
            .env("SLURM_ARRAY_JOB_ID", "4200")
            .env("SLURM_ARRAY_TASK_ID", "42"),
    );
    assert_eq!(o.code(), Some(0), "{o:?}");
    let m = manifest(&out);
    let command: Vec<&str> = m["command_line"].as_array().unwrap().iter().map(|a| a.as_str().unwrap()).collect();
    assert_eq!(command[1..], ["run", job.to_str().unwrap(), "--set", "imaging.fmax=40", "--set", "output.png=false"]);
    assert_eq!(m["overrides"], json!(["imaging.fmax=40", "output.png=false"]));
    assert_eq!(m["config"]["imaging"]["fmax"], 40.0);
    assert_eq!(m["slurm"], json!({"job_id": "4242", "array_job_id": "4200", "array_task_id": "42"}));
}

/// Run the shipped array script `script` as Slurm's task 1 of a list holding this job, with a stand-in
/// `srun` that runs its command; the folder of the task goes with the `TempDir` handed back.
fn run_array_script(script: &str) -> (crate::cli_common::Outcome, PathBuf, PathBuf, tempfile::TempDir) {
    use std::os::unix::fs::PermissionsExt;
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path().to_path_buf();
    let (job, out) = setup(&dir);
    let bin = dir.join("bin");
    std::fs::create_dir(&bin).unwrap();
    std::fs::write(bin.join("srun"), "#!/bin/sh\nexec \"$@\"\n").unwrap();
    std::fs::set_permissions(bin.join("srun"), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::os::unix::fs::symlink(crate::cli_common::seisimage_path(), bin.join("seisimage")).unwrap();
    let list = dir.join("jobs.txt");
    std::fs::write(&list, format!("{}\n", job.display())).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs").join(script);
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let mut cmd = crate::cli_common::child("bash");
    cmd.arg(&script).arg(&list).env("PATH", path).env("SLURM_ARRAY_TASK_ID", "1");
    (crate::cli_common::run_command(&mut cmd), job, out, temp)
}

/// The shipped Slurm script leaves a log a person can read after a successful task: it does not run
/// with `--quiet`.
#[test]
fn the_slurm_script_leaves_a_log() {
    let (o, job, _, _dir) = run_array_script("slurm-array.sh");
    // Here without a GPU the task fails (the script asks for the cuda backend), with a GPU it succeeds:
    // either way its log names the job.
    assert!(
        o.stderr.contains(&format!("INFO seisimage {}: job {}", env!("CARGO_PKG_VERSION"), job.display())),
        "{o:?}"
    );
}

/// The CPU array script runs its task's job on the CPU, to its manifest.
#[test]
fn the_cpu_slurm_script_runs_its_job_on_the_cpu() {
    let (o, _, out, _dir) = run_array_script("slurm-array-cpu.sh");
    assert_eq!(o.code(), Some(0), "{o:?}");
    let m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(m["backend"]["kind"], "cpu", "{o:?}");
}

/// A velocity read from a file is recorded with the file's size and modification time, as the input is.
#[test]
fn the_manifest_records_the_velocity_file() {
    use seisimage::io::{write_volume, FileFormat, WriteOptions};
    use seisimage::volume::{Domain, Geometry, SampleAxis};
    let dir = tempfile::tempdir().unwrap();
    let (job, out) = setup(dir.path());
    // 2000 m/s on the input's grid (inlines 1..=20, crosslines 1..=16), 0 to 600 m.
    let m = model(20, 16, 150);
    let depth = SampleAxis { origin: 0.0, step: 10.0, len: 61, domain: Domain::Depth };
    let grid = Geometry::regular(m.geometry().ilines, m.geometry().xlines, depth);
    let vint = dir.path().join("vint.h5");
    write_volume(FileFormat::Hdf5, &vint, &grid, &vec![2000.0; grid.n_values()], &WriteOptions::default()).unwrap();
    let text = std::fs::read_to_string(&job)
        .unwrap()
        .replace("kind = \"constant\"\nvelocity = 2000.0", &format!("kind = \"file\"\npath = {vint:?}"));
    let job = write_job(&job, &text);
    let o = run_job(&job, &[]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    let meta = std::fs::metadata(&vint).unwrap();
    let expect = json!({
        "path": vint,
        "bytes": meta.len(),
        "modified_utc": seisimage::run::utc(meta.modified().unwrap()),
    });
    assert_eq!(manifest(&out)["velocity_file"], expect);
}
