//! One job split between processes, through the command line: shares run as separate `seisimage run
//! --shard I/N` processes and summed by `seisimage reduce` write the products of the one-process run
//! (relative L2 ≤ 1e-5) and a manifest that records the shares; a share that is missing, or that belongs
//! to another job, is refused. The ranks of a run over several GPUs: launcher variables that make no sense
//! are refused, and without NCCL a rank says so instead of panicking. With `SEISIMAGE_GPU_TESTS=1` the
//! NCCL path itself runs: several ranks sharing one GPU as emulated hosts compute the one-process image
//! (of one migration, and of every member of a velocity scan), and a rank that fails or is signalled ends
//! every rank.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::cli_common::{model, names, run, run_command, samples, seisimage, write_job, write_segy, Running};

/// The products the jobs here write: every one as NPY, so that the values can be compared.
const OUTPUT: &str =
    "inlines = [4]\ncrosslines = [7]\ndepth_slices = [100.0]\nslice_formats = [\"npy\"]\npng = false\n\n\
                      [[output.roi]]\nname = \"middle\"\niline = [3, 9]\nxline = [2, 10]\ndepth = [40.0, 160.0]\n\
                      formats = [\"npy\"]";

/// A 12 × 14 × 48 survey and a job on it writing into `out`: 48 samples of 4 ms padded to 96, so the band
/// from 0 Hz to Nyquist holds 49 frequencies, the first (DC) and the last (Nyquist) weighted 1.
fn setup(dir: &Path, imaging: &str, out: &str, backend: &str) -> (PathBuf, PathBuf) {
    let input = dir.join("survey.sgy");
    if !input.exists() {
        let m = model(12, 14, 48);
        write_segy(&input, &m, &samples(&m));
    }
    let out = dir.join(out);
    // Stolt migrates a constant velocity only.
    let velocity = match imaging.contains("\"stolt\"") {
        true => "kind = \"constant\"\nvelocity = 2000.0",
        false => "kind = \"table\"\ndepths = [0.0, 100.0]\nvelocities = [1800.0, 2300.0]",
    };
    let text = format!(
        "[input]\npath = {input:?}\n\n[velocity]\n{velocity}\n\n\
         [imaging]\n{imaging}\n\n[compute]\nbackend = \"{backend}\"\n\n[output]\ndir = {out:?}\n{OUTPUT}\n"
    );
    let job = write_job(&dir.join(format!("{}.toml", out.file_name().unwrap().to_string_lossy())), &text);
    (job, out)
}

const IMAGING: &str = "method = \"phase-shift\"\ndz = 10.0\nzmax = 200.0\nfmin = 0.0\nfmax = 125.0";

/// Every NPY product of `a` against the same file of `b`: the worst relative L2 difference.
fn compare_products(a: &Path, b: &Path) -> f64 {
    let products: Vec<String> = names(b).into_iter().filter(|n| n.ends_with(".npy")).collect();
    assert_eq!(products.len(), 4, "{products:?}");
    products
        .iter()
        .map(|name| {
            let (shape_a, x) = seisimage::io::npy::read(&a.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
            let (shape_b, y) = seisimage::io::npy::read(&b.join(name)).unwrap();
            assert_eq!(shape_a, shape_b, "{name}");
            let d: f64 = x.iter().zip(&y).map(|(p, q)| (*p as f64 - *q as f64).powi(2)).sum();
            let n: f64 = y.iter().map(|q| (*q as f64).powi(2)).sum();
            assert!(n > 0.0, "{name} is all zero");
            (d / n).sqrt()
        })
        .fold(0.0, f64::max)
}

fn manifest(dir: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).expect("manifest")).expect("manifest JSON")
}

/// Shares run as separate processes, some at the same time, summed by `reduce`: the products of the
/// one-process run, whether the share count divides the 49 frequencies or not; the manifest records the
/// shares and their frequencies, which cover the band once, DC in the first share and Nyquist in the last.
#[test]
fn shards_and_reduce_write_the_products_of_one_run() {
    let dir = tempfile::tempdir().unwrap();
    let (job, whole) = setup(dir.path(), IMAGING, "whole", "cpu");
    let out = run(&["--quiet", "run", job.to_str().unwrap()]);
    assert_eq!(out.code(), Some(0), "{out:?}");
    for count in [3usize, 7] {
        let (job, split) = setup(dir.path(), IMAGING, &format!("split{count}"), "cpu");
        let partials = dir.path().join(format!("partials{count}"));
        let shards: Vec<Running> = (1..=count)
            .map(|i| {
                Running::start(
                    seisimage()
                        .args(["run", job.to_str().unwrap(), "--shard", &format!("{i}/{count}")])
                        .args(["--partials", partials.to_str().unwrap()]),
                )
            })
            .collect();
        for (i, s) in shards.into_iter().enumerate() {
            let (status, log) = s.finish(Duration::from_secs(120));
            assert!(status.success(), "share {}/{count}: {log}", i + 1);
        }
        assert!(!split.join("manifest.json").exists(), "a share writes no manifest");
        let expected: Vec<String> = (1..=count).map(|i| format!("shard-{i}-of-{count}.partial")).collect();
        let mut expected_sorted = expected.clone();
        expected_sorted.sort();
        assert_eq!(names(&partials), expected_sorted);
        let n = count.to_string();
        let out = run(&["reduce", job.to_str().unwrap(), "--shards", &n, "--partials", partials.to_str().unwrap()]);
        assert_eq!(out.code(), Some(0), "{out:?}");
        let e = compare_products(&split, &whole);
        eprintln!("{count} shards: relative L2 {e:.2e}");
        assert!(e <= 1e-5, "{count} shards: relative L2 {e:.2e} against one run");
        let m = manifest(&split);
        assert_eq!(m["backend"]["kind"], "reduce");
        let d = &m["stages"]["distributed"];
        assert_eq!(d["kind"], "shards");
        let parts = d["parts"].as_array().unwrap();
        assert_eq!(parts.len(), count);
        let ranges: Vec<[u64; 2]> = parts
            .iter()
            .map(|p| [p["frequencies"][0].as_u64().unwrap(), p["frequencies"][1].as_u64().unwrap()])
            .collect();
        assert_eq!(ranges[0][0], 0, "DC is in the first share");
        assert_eq!(ranges[count - 1][1], 49, "Nyquist is in the last share");
        assert!(ranges.windows(2).all(|w| w[0][1] == w[1][0]), "{ranges:?}");
        assert!(d["imbalance"].as_f64().unwrap() >= 1.0);
        assert_eq!(parts[0]["frequencies_hz"][0].as_f64().unwrap(), 0.0);
        assert!((parts[count - 1]["frequencies_hz"][1].as_f64().unwrap() - 125.0).abs() < 1e-9);
    }
}

/// More shares than frequencies: 2 Hz to 9 Hz holds three frequencies (2.6 Hz apart); of six shares three
/// migrate nothing (and say so), and the sum is still the one-process image. The shares here run one after
/// another, as a loop in a batch script would.
#[test]
fn more_shards_than_frequencies_still_add_up() {
    let dir = tempfile::tempdir().unwrap();
    let imaging = "method = \"split-step\"\ndz = 10.0\nzmax = 200.0\nfmin = 2.0\nfmax = 9.0";
    let (job, whole) = setup(dir.path(), imaging, "whole", "cpu");
    assert_eq!(run(&["--quiet", "run", job.to_str().unwrap()]).code(), Some(0));
    let (job, split) = setup(dir.path(), imaging, "split", "cpu");
    for i in 1..=6 {
        let out = run(&["run", job.to_str().unwrap(), "--shard", &format!("{i}/6")]);
        assert_eq!(out.code(), Some(0), "{out:?}");
        // split_even(3, 6): shares 1, 3 and 5 are empty
        assert_eq!(out.stderr.contains("no frequency"), i % 2 == 1, "share {i}/6: {out:?}");
    }
    let partials = |dir: &Path| -> usize {
        std::fs::read_dir(dir)
            .unwrap()
            .filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().ends_with(".partial"))
            .count()
    };
    let out = run(&["reduce", job.to_str().unwrap(), "--shards", "6"]);
    assert_eq!(out.code(), Some(0), "{out:?}");
    assert_eq!(partials(&split), 6, "reduce keeps the partial products unless asked");
    let e = compare_products(&split, &whole);
    assert!(e <= 1e-5, "relative L2 {e:.2e}");
    // Asked, it removes them once the sum is written, and the products stay the same.
    let out = run(&["reduce", job.to_str().unwrap(), "--shards", "6", "--remove-partials"]);
    assert_eq!(out.code(), Some(0), "{out:?}");
    assert_eq!(partials(&split), 0, "{out:?}");
    assert!(compare_products(&split, &whole) <= 1e-5);
}

/// The complex-trace attributes of a job run in shards are those of the one-process run: the shares hold
/// the migrated boxes, and the attributes are taken of their sum (the envelope of a sum is not the sum of
/// the envelopes).
#[test]
fn shards_and_reduce_take_the_attributes_of_the_sum() {
    let dir = tempfile::tempdir().unwrap();
    let attributes = ["--set", "output.attributes=[\"envelope\"]"];
    let (job, whole) = setup(dir.path(), IMAGING, "whole", "cpu");
    let o = run(&["--quiet", "run", job.to_str().unwrap(), attributes[0], attributes[1]]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    let (job, split) = setup(dir.path(), IMAGING, "split", "cpu");
    for i in 1..=3 {
        let share = format!("{i}/3");
        let o = run(&["--quiet", "run", job.to_str().unwrap(), "--shard", &share, attributes[0], attributes[1]]);
        assert_eq!(o.code(), Some(0), "share {share}: {o:?}");
    }
    let o = run(&["reduce", job.to_str().unwrap(), "--shards", "3", attributes[0], attributes[1]]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    let products: Vec<String> = names(&whole).into_iter().filter(|n| n.ends_with(".npy")).collect();
    assert_eq!(products.len(), 7, "four products and the envelopes of three slices: {products:?}");
    for name in &products {
        let (shape_a, x) = seisimage::io::npy::read(&split.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        let (shape_b, y) = seisimage::io::npy::read(&whole.join(name)).unwrap();
        assert_eq!(shape_a, shape_b, "{name}");
        let d: f64 = x.iter().zip(&y).map(|(p, q)| (*p as f64 - *q as f64).powi(2)).sum();
        let n: f64 = y.iter().map(|q| (*q as f64).powi(2)).sum();
        assert!(n > 0.0 && (d / n).sqrt() <= 1e-4, "{name}: relative L2 {:.2e}", (d / n).sqrt());
    }
}

/// `reduce` refuses, with exit code 2 and the reason, a share count with shares missing and a share made
/// for another job; a damaged share is a failure (exit 1) naming the file. Nothing is written.
#[test]
fn reduce_refuses_missing_foreign_and_damaged_shares() {
    let dir = tempfile::tempdir().unwrap();
    let (job, out_dir) = setup(dir.path(), IMAGING, "split", "cpu");
    let job_s = job.to_str().unwrap();
    for i in [1, 3] {
        assert_eq!(run(&["--quiet", "run", job_s, "--shard", &format!("{i}/3")]).code(), Some(0));
    }
    let out = run(&["reduce", job_s, "--shards", "3"]);
    assert_eq!(out.code(), Some(2), "{out:?}");
    assert!(out.stderr.contains("1 of the 3 shares") && out.stderr.contains("2/3"), "{out:?}");
    // Said before the job is prepared (minutes for a large 3-D velocity model): here the input is not read.
    let out = run(&["reduce", job_s, "--shards", "3", "--set", "input.path=\"absent.sgy\""]);
    assert_eq!(out.code(), Some(2), "{out:?}");
    assert!(out.stderr.contains("1 of the 3 shares") && !out.stderr.contains("absent.sgy"), "{out:?}");
    // Share 2 from another job: the same file with another zmax.
    let out = run(&["--quiet", "run", job_s, "--shard", "2/3", "--set", "imaging.zmax=190.0"]);
    assert_eq!(out.code(), Some(0), "{out:?}");
    let out = run(&["reduce", job_s, "--shards", "3"]);
    assert_eq!(out.code(), Some(2), "{out:?}");
    assert!(out.stderr.contains("shard-2-of-3.partial") && out.stderr.contains("another job"), "{out:?}");
    // The right share 2, then a damaged share 3.
    assert_eq!(run(&["--quiet", "run", job_s, "--shard", "2/3"]).code(), Some(0));
    let third = out_dir.join("shard-3-of-3.partial");
    let mut bytes = std::fs::read(&third).unwrap();
    let last = bytes.len() - 3;
    bytes[last] ^= 0x40;
    std::fs::write(&third, &bytes).unwrap();
    let out = run(&["reduce", job_s, "--shards", "3"]);
    assert_eq!(out.code(), Some(1), "{out:?}");
    assert!(out.stderr.contains("shard-3-of-3.partial") && out.stderr.contains("checksum"), "{out:?}");
    assert!(!out_dir.join("manifest.json").exists());
    assert!(names(&out_dir).iter().all(|n| n.ends_with(".partial")), "{:?}", names(&out_dir));
    let out = run(&["run", job_s, "--shard", "4/3"]);
    assert_eq!(out.code(), Some(2), "{out:?}");
}

/// Run shares `which` of `count` of `job` into its output folder, each to the end.
fn run_shares(job: &Path, which: std::ops::RangeInclusive<usize>, count: usize) {
    for i in which {
        let o = run(&["--quiet", "run", job.to_str().unwrap(), "--shard", &format!("{i}/{count}")]);
        assert_eq!(o.code(), Some(0), "share {i}/{count}: {o:?}");
    }
}

/// Shares computed from another input of the same geometry and size are another job's: one whose samples
/// and trace headers differ but whose modification time was set to the first's, and the first input
/// touched after its share ran. Before, the job's fingerprint held only the input's size.
#[test]
fn reduce_refuses_shares_of_another_input_of_the_same_geometry() {
    let dir = tempfile::tempdir().unwrap();
    let (job, out_dir) = setup(dir.path(), IMAGING, "split", "cpu");
    let input = dir.path().join("survey.sgy");
    run_shares(&job, 1..=1, 2);
    // Another survey of the same grid, samples twice as strong, under the same name and time.
    let modified = std::fs::metadata(&input).unwrap().modified().unwrap();
    let other = dir.path().join("other.sgy");
    let m = model(12, 14, 48);
    write_segy(&other, &m, &samples(&m).iter().map(|v| v * 2.0).collect::<Vec<_>>());
    assert_eq!(std::fs::metadata(&other).unwrap().len(), std::fs::metadata(&input).unwrap().len());
    std::fs::File::options().write(true).open(&other).unwrap().set_modified(modified).unwrap();
    std::fs::rename(&other, &input).unwrap();
    run_shares(&job, 2..=2, 2);
    let out = run(&["reduce", job.to_str().unwrap(), "--shards", "2"]);
    assert_eq!(out.code(), Some(2), "{out:?}");
    assert!(out.stderr.contains("shard-1-of-2.partial") && out.stderr.contains("another job"), "{out:?}");
    // Both shares of the one input, then the input touched: its shares no longer vouch for it.
    run_shares(&job, 1..=1, 2);
    assert_eq!(run(&["--quiet", "reduce", job.to_str().unwrap(), "--shards", "2"]).code(), Some(0));
    std::fs::remove_file(out_dir.join("manifest.json")).unwrap();
    let later = modified + Duration::from_secs(5);
    std::fs::File::options().write(true).open(&input).unwrap().set_modified(later).unwrap();
    let out = run(&["reduce", job.to_str().unwrap(), "--shards", "2"]);
    assert_eq!(out.code(), Some(2), "{out:?}");
    assert!(out.stderr.contains("another job"), "{out:?}");
}

/// Rewrite the values of the partial file at `path` with `forge`, and its checksum with them, as anyone who
/// can write the file can.
fn forge_share(path: &Path, forge: impl Fn(&mut [f32])) {
    use sha2::Digest;
    let bytes = std::fs::read(path).unwrap();
    let header_end = bytes.iter().enumerate().filter(|(_, b)| **b == b'\n').nth(1).unwrap().0 + 1;
    let mut values: Vec<f32> =
        bytes[header_end..].chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
    forge(&mut values);
    let body: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    let header = std::str::from_utf8(&bytes[..header_end]).unwrap();
    let mut json: serde_json::Value = serde_json::from_str(header.lines().nth(1).unwrap()).unwrap();
    json["values_sha256"] = seisimage::io::output::hex(&sha2::Sha256::digest(&body)).into();
    let first = header.lines().next().unwrap();
    std::fs::write(path, [format!("{first}\n{json}\n").as_bytes(), &body].concat()).unwrap();
}

/// A share whose values were forged with their checksum recomputed: a NaN (or an infinity) in the sum is
/// refused naming the product, with exit 1 and nothing written; before, the products and a manifest
/// vouching for them were written with exit 0. (A forged finite value cannot be told from a migrated one.)
#[test]
fn reduce_refuses_forged_values_that_are_not_finite() {
    let dir = tempfile::tempdir().unwrap();
    let (job, out_dir) = setup(dir.path(), IMAGING, "split", "cpu");
    run_shares(&job, 1..=2, 2);
    let second = out_dir.join("shard-2-of-2.partial");
    // The last box is the region's.
    forge_share(&second, |v| *v.last_mut().unwrap() = f32::NAN);
    let out = run(&["reduce", job.to_str().unwrap(), "--shards", "2"]);
    assert_eq!(out.code(), Some(1), "{out:?}");
    assert!(out.stderr.contains("NaN or infinite") && out.stderr.contains("product roi_middle"), "{out:?}");
    assert!(!out_dir.join("manifest.json").exists());
    assert!(names(&out_dir).iter().all(|n| n.ends_with(".partial")), "{:?}", names(&out_dir));
}

/// A share another user owns is refused by name, whatever it holds: its values carry no proof of where they
/// came from. Needs a second user: as root the file is given to uid 65534.
#[test]
fn reduce_refuses_shares_another_user_owns() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: giving a file to another user needs root");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (job, out_dir) = setup(dir.path(), IMAGING, "split", "cpu");
    run_shares(&job, 1..=2, 2);
    std::os::unix::fs::chown(out_dir.join("shard-2-of-2.partial"), Some(65534), None).unwrap();
    let out = run(&["reduce", job.to_str().unwrap(), "--shards", "2"]);
    assert_eq!(out.code(), Some(1), "{out:?}");
    assert!(out.stderr.contains("shard-2-of-2.partial") && out.stderr.contains("belong to user 65534"), "{out:?}");
    assert!(!out_dir.join("manifest.json").exists());
}

/// Launcher variables that make no sense are refused before any work, naming the variable; a rank without
/// NCCL (this machine has none in CI) fails with a sentence, and CPU ranks are refused.
#[test]
fn ranks_without_sense_or_nccl_are_refused_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let (job, _) = setup(dir.path(), IMAGING, "ranks", "cuda");
    let job_s = job.to_str().unwrap();
    let out = run_command(seisimage().args(["run", job_s]).env("RANK", "3").env("WORLD_SIZE", "2"));
    assert_eq!(out.code(), Some(2), "{out:?}");
    assert!(out.stderr.contains("RANK=3") && out.stderr.contains("WORLD_SIZE=2"), "{out:?}");
    let out = run_command(seisimage().args(["run", job_s, "--backend", "cpu"]).env("RANK", "0").env("WORLD_SIZE", "2"));
    assert_eq!(out.code(), Some(2), "{out:?}");
    assert!(out.stderr.contains("--shard"), "{out:?}");
    if std::env::var("SEISIMAGE_GPU_TESTS").as_deref() != Ok("1") {
        // No GPU and no NCCL here: an error that says what is missing, never a panic.
        let out = run_command(
            seisimage().args(["run", job_s]).env("RANK", "1").env("WORLD_SIZE", "2").env("SEISIMAGE_RUN_ID", "t"),
        );
        assert_eq!(out.code(), Some(1), "{out:?}");
        assert!(!out.stderr.contains("panicked"), "{out:?}");
        assert!(out.stderr.contains("NCCL") || out.stderr.contains("CUDA"), "{out:?}");
        // A rank has NCCL reach the other GPUs through CUDA IPC (a faster exchange), unless the user chose.
        let rank_1 = |cumem: Option<&str>| {
            let mut c = seisimage();
            c.args(["-v", "run", job_s]).env("RANK", "1").env("WORLD_SIZE", "2").env("SEISIMAGE_RUN_ID", "t");
            match cumem {
                Some(v) => c.env("NCCL_CUMEM_ENABLE", v),
                None => c.env_remove("NCCL_CUMEM_ENABLE"),
            };
            run_command(&mut c)
        };
        let out = rank_1(None);
        assert!(out.stderr.contains("NCCL_CUMEM_ENABLE=0"), "{out:?}");
        let out = rank_1(Some("1"));
        assert!(!out.stderr.contains("NCCL_CUMEM_ENABLE=0"), "{out:?}");
    }
}

/// A link planted at a run's rendezvous folder, to a private folder of the user's, is not written through
/// by a rank that fails; the rendezvous folder a failed run leaves is removed by the next run in the folder.
#[test]
fn a_failing_rank_writes_nothing_through_a_link_and_its_folder_goes_with_the_next_run() {
    use std::os::unix::fs::DirBuilderExt;
    if std::env::var("SEISIMAGE_GPU_TESTS").as_deref() == Ok("1") {
        eprintln!("skipped: the rank must fail for want of a GPU or NCCL, which this machine has");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (job, out) = setup(dir.path(), IMAGING, "ranks", "cuda");
    let job_s = job.to_str().unwrap();
    let victim = dir.path().join("victim");
    std::fs::DirBuilder::new().mode(0o700).create(&victim).unwrap();
    std::fs::create_dir(&out).unwrap();
    let rendezvous = out.join(".seisimage-ranks-t");
    std::os::unix::fs::symlink(&victim, &rendezvous).unwrap();
    let rank_1 = || {
        run_command(
            seisimage().args(["run", job_s]).env("RANK", "1").env("WORLD_SIZE", "2").env("SEISIMAGE_RUN_ID", "t"),
        )
    };
    let failed = rank_1();
    assert_eq!(failed.code(), Some(1), "{failed:?}");
    assert_eq!(names(&victim), Vec::<String>::new(), "a note was written through the link: {failed:?}");
    assert!(std::fs::symlink_metadata(&rendezvous).unwrap().file_type().is_symlink());

    std::fs::remove_file(&rendezvous).unwrap();
    assert_eq!(rank_1().code(), Some(1));
    assert!(rendezvous.join("failed-rank-1").is_file(), "the failed rank tells the others");
    let o = run(&["--quiet", "run", job_s, "--backend", "cpu"]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    assert!(!rendezvous.exists(), "the folder of the failed run stays: {:?}", names(&out));
}

/// Start ranks `which` of a run of `world` ranks of `job`, sharing one GPU of this machine as emulated hosts,
/// as NCCL allows with a host id per rank and sockets on the loopback interface. `extra(rank)` adds
/// arguments to a rank.
fn start_ranks(
    job: &Path,
    world: usize,
    which: std::ops::Range<usize>,
    run_id: &str,
    extra: impl Fn(usize) -> Vec<String>,
) -> Vec<Running> {
    which
        .map(|r| {
            let mut c: Command = seisimage();
            c.args(["run", job.to_str().unwrap()])
                .args(extra(r))
                .env("RANK", r.to_string())
                .env("WORLD_SIZE", world.to_string())
                .env("LOCAL_RANK", r.to_string())
                .env("SEISIMAGE_RUN_ID", run_id)
                .env("NCCL_HOSTID", format!("seisimage-test-host-{r}"))
                .env("NCCL_NET", "Socket")
                .env("NCCL_SOCKET_IFNAME", "lo")
                .env("NCCL_NVLS_ENABLE", "0")
                // Every rank on the first GPU, as a host of one GPU has it, whatever this host has.
                .env("CUDA_VISIBLE_DEVICES", first_gpu());
            Running::start(&mut c)
        })
        .collect()
}

/// The first GPU this process may use, as `CUDA_VISIBLE_DEVICES` names it.
fn first_gpu() -> String {
    let visible = std::env::var("CUDA_VISIBLE_DEVICES").unwrap_or_default();
    match visible.split(',').next().map(str::trim) {
        Some(first) if !first.is_empty() => first.to_string(),
        _ => "0".to_string(),
    }
}

fn gpu_ranks_wanted() -> bool {
    let wanted = std::env::var("SEISIMAGE_GPU_TESTS").as_deref() == Ok("1");
    if !wanted {
        eprintln!("NCCL rank run skipped: set SEISIMAGE_GPU_TESTS=1 on a machine with a CUDA device and NCCL");
    }
    wanted
}

/// Two and three ranks on the one GPU compute the one-process image (GPU against CPU: relative L2 ≤ 1e-4),
/// rank 0 alone writes the products and a manifest recording every rank, and the rendezvous folder is
/// gone afterwards; a Stolt job runs on rank 0 with the others reading their slabs.
#[test]
fn gpu_ranks_on_emulated_hosts_compute_the_one_process_image() {
    if !gpu_ranks_wanted() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (cpu_job, whole) = setup(dir.path(), IMAGING, "whole", "cpu");
    assert_eq!(run(&["--quiet", "run", cpu_job.to_str().unwrap()]).code(), Some(0));
    for (world, imaging) in
        [(2, IMAGING.to_string()), (3, IMAGING.to_string()), (2, IMAGING.replace("phase-shift", "stolt"))]
    {
        let name = format!("ranks{world}-{}", if imaging.contains("stolt") { "stolt" } else { "ps" });
        let (job, out) = setup(dir.path(), &imaging, &name, "cuda");
        let reference = if imaging.contains("stolt") {
            let (j, o) = setup(dir.path(), &imaging, "whole-stolt", "cpu");
            assert_eq!(run(&["--quiet", "run", j.to_str().unwrap()]).code(), Some(0));
            o
        } else {
            whole.clone()
        };
        let t = Instant::now();
        let ranks = start_ranks(&job, world, 0..world, &name, |_| Vec::new());
        for (r, running) in ranks.into_iter().enumerate() {
            let (status, log) = running.finish(Duration::from_secs(300));
            assert!(status.success(), "{name}: rank {r} failed:\n{log}");
        }
        eprintln!("{name}: {world} ranks in {:.1} s", t.elapsed().as_secs_f64());
        let e = compare_products(&out, &reference);
        eprintln!("{name}: relative L2 {e:.2e} against the CPU");
        assert!(e <= 1e-4, "{name}: relative L2 {e:.2e}");
        let m = manifest(&out);
        let d = &m["stages"]["distributed"];
        assert_eq!((d["kind"].as_str(), d["parts"].as_array().map(|p| p.len())), (Some("ranks"), Some(world)), "{m}");
        assert!(names(&out).iter().all(|n| !n.starts_with(".seisimage-ranks")), "{:?}", names(&out));
        // Rank 0 sends each rank that rank's frequencies of its slab of inlines, and receives its own of
        // theirs: 14 traces per inline, 8 bytes per complex value.
        let share = |r: usize| {
            let f = &d["parts"][r]["frequencies"];
            (f[1].as_u64().unwrap() - f[0].as_u64().unwrap()) as usize
        };
        let slab = |r: usize| (r + 1) * 12 / world - r * 12 / world;
        let expected: usize = (1..world).map(|p| slab(0) * 14 * share(p) * 8 + slab(p) * 14 * share(0) * 8).sum();
        let stage = |name: &str| {
            m["stages"]["stages"].as_array().unwrap().iter().find(|s| s["name"] == name).cloned().unwrap_or_default()
        };
        assert_eq!(stage("exchange")["bytes"].as_u64(), Some(expected as u64), "{name}: {m}");
        assert!(stage("nccl-setup")["seconds"].as_f64().is_some_and(|s| s > 0.0), "{name}: {m}");
    }
}

/// A velocity scan over two ranks on the one GPU, with the slices' envelopes: every member's products are
/// those of the scan on the CPU in one process (relative L2 ≤ 1e-4), the envelopes taken of the ranks' sum.
#[test]
fn gpu_ranks_run_a_velocity_scan_as_one_process_does() {
    if !gpu_ranks_wanted() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let scan = ["--set", "velocity.scale=[0.9, 1.1]", "--set", "output.attributes=[\"envelope\"]"];
    let (cpu_job, whole) = setup(dir.path(), IMAGING, "whole-scan", "cpu");
    let o = run(&[&["--quiet", "run", cpu_job.to_str().unwrap()][..], &scan].concat());
    assert_eq!(o.code(), Some(0), "{o:?}");
    let (job, out) = setup(dir.path(), IMAGING, "ranks-scan", "cuda");
    for (r, running) in
        start_ranks(&job, 2, 0..2, "ranks-scan", |_| scan.map(String::from).to_vec()).into_iter().enumerate()
    {
        let (status, log) = running.finish(Duration::from_secs(300));
        assert!(status.success(), "rank {r} failed:\n{log}");
    }
    let products: Vec<String> = names(&whole).into_iter().filter(|n| n.ends_with(".npy")).collect();
    let envelopes = products.iter().filter(|n| n.contains("envelope")).count();
    assert_eq!((products.len(), envelopes), (14, 6), "four products and three envelopes of two members: {products:?}");
    for name in &products {
        let (_, x) = seisimage::io::npy::read(&out.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        let (_, y) = seisimage::io::npy::read(&whole.join(name)).unwrap();
        let d: f64 = x.iter().zip(&y).map(|(p, q)| (*p as f64 - *q as f64).powi(2)).sum();
        let n: f64 = y.iter().map(|q| (*q as f64).powi(2)).sum();
        eprintln!("{name}: relative L2 {:.2e} against the CPU", (d / n).sqrt());
        assert!(n > 0.0 && (d / n).sqrt() <= 1e-4, "{name}: relative L2 {:.2e}", (d / n).sqrt());
    }
}

/// A rank that fails (here: its input is missing), a rank that is signalled and a rank that never comes
/// end every rank of the run within a bounded time, with no manifest, and the exit codes say why: the
/// failed rank's own code, 143 for the ranks of a run where one got SIGTERM, and 1 when a rank did not
/// arrive within `compute.rank_timeout_s`.
#[test]
fn gpu_a_failing_signalled_or_missing_rank_ends_every_rank() {
    if !gpu_ranks_wanted() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (job, out) = setup(dir.path(), IMAGING, "fail", "cuda");
    let missing = dir.path().join("missing.sgy");
    let t = Instant::now();
    let ranks = start_ranks(&job, 3, 0..3, "fail", |r| {
        if r == 1 {
            vec!["--set".into(), format!("input.path={}", missing.display())]
        } else {
            Vec::new()
        }
    });
    for (r, running) in ranks.into_iter().enumerate() {
        let (status, log) = running.finish(Duration::from_secs(120));
        assert_eq!(status.code(), Some(1), "rank {r} should have failed ({status:?}):\n{log}");
        if r != 1 {
            assert!(log.contains("rank 1 of this run failed"), "rank {r}:\n{log}");
        }
    }
    assert!(t.elapsed() < Duration::from_secs(60), "the ranks took {:?} to stop", t.elapsed());
    assert!(!out.join("manifest.json").exists());

    // Three ranks of which two start: they wait for the third; SIGTERM to one ends both, with 143.
    let t = Instant::now();
    let mut ranks = start_ranks(&job, 3, 0..2, "signal", |_| Vec::new());
    for r in &mut ranks {
        r.wait_for("waiting for the other ranks", Duration::from_secs(120));
    }
    std::thread::sleep(Duration::from_millis(500));
    ranks[1].signal(libc::SIGTERM);
    for (r, running) in ranks.into_iter().enumerate() {
        let (status, log) = running.finish(Duration::from_secs(60));
        assert_eq!(status.code(), Some(143), "rank {r}:\n{log}");
    }
    assert!(t.elapsed() < Duration::from_secs(90), "the ranks took {:?} to stop", t.elapsed());
    assert!(!out.join("manifest.json").exists());

    // A rank that never comes: the others give up at the deadline.
    let t = Instant::now();
    let mut ranks = start_ranks(&job, 2, 0..1, "missing", |_| vec!["--set".into(), "compute.rank_timeout_s=10".into()]);
    let (status, log) = ranks.pop().unwrap().finish(Duration::from_secs(120));
    assert_eq!(status.code(), Some(1), "{log}");
    assert!(log.contains("rank_timeout_s"), "{log}");
    assert!(t.elapsed() < Duration::from_secs(60), "took {:?}", t.elapsed());
}
