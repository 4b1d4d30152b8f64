//! Velocity scans: the same job at several velocities from one ingest. On every backend, at once and in
//! frequency bands, each member of the scan must give what a migration of its own gives, the input must be
//! read (and uploaded) once and each band loaded once, and the physics must show: in a constant medium a
//! flat reflector at two-way time t images at depth f · v · t / 2 for the member that scales the velocity
//! by f. Through the command line, the products carry their member's name, a panel puts the members side
//! by side, and a scan split into shards reduces to the scan of one process.

use std::path::Path;

use crate::cli_common::{model, names, run, samples, write_job, write_segy};
use crate::common::{envelope, gpu_engine, migrate};
use seisimage::cancel::CancelToken;
use seisimage::context::RunContext;
use seisimage::imaging::store::{Place, StoreSettings};
use seisimage::imaging::{Collected, CpuEngine, Engine, ProductSink};
use seisimage::job::Job;
use seisimage::progress::Silent;
use seisimage::run::{prepare, Prepared};
use serde_json::Value;

/// A 24 × 20 × 150 input (a diffractor at 150 m and a reflector at 300 m in 2000 m/s: 300 ms) and a job
/// scanning it with `velocity` (a `[velocity]` body), writing inline 12 and crossline 10 as pictures.
pub(crate) fn scan_job(dir: &Path, velocity: &str) -> std::path::PathBuf {
    let m = model(24, 20, 150);
    let input = dir.join("input.sgy");
    write_segy(&input, &m, &samples(&m));
    let text = format!(
        "[input]\npath = {input:?}\n\n[velocity]\n{velocity}\n\n[imaging]\ndz = 5.0\nnz = 90\n\n\
         [compute]\nbackend = \"cpu\"\n\n[output]\ndir = \"out\"\ninlines = [12]\ncrosslines = [10]\n"
    );
    write_job(&dir.join("job.toml"), &text)
}

/// Every backend, as it runs the scan of `p` at once and in at least three frequency bands: the CPU with a
/// host-memory limit that keeps the spectrum waiting in host memory (`compute.host_memory_gb`), the GPU with
/// a device-memory limit (`compute.device_memory_gb`), found with each engine's own memory plan of the scan.
fn for_each_backend_at_once_and_in_bands(p: &Prepared, mut f: impl FnMut(&mut dyn Engine, &str)) {
    let members = p.migrations().len();
    let mut cpu = CpuEngine::new(None).unwrap();
    f(&mut cpu, "cpu at once");
    let mut limit = p.plan.host_memory_bytes() + p.plan.scan_bytes(members, true);
    loop {
        cpu.set_store(StoreSettings { host_memory: Some(limit), scratch_dir: None });
        match cpu.host_plan(&p.plan, members) {
            Ok(h) if h.place == Place::Memory && h.bands.ranges.len() >= 3 => break,
            Ok(_) if limit > 1000 => limit = limit * 97 / 100,
            other => panic!("no host memory limit runs the scan in three bands: {:?}", other.map(|h| h.bands)),
        }
    }
    f(&mut cpu, "cpu in bands");
    if let Some(mut gpu) = gpu_engine() {
        f(&mut gpu, "cuda at once");
        // The largest device limit that takes the scan through three bands.
        let mut limit = 1u64 << 30;
        loop {
            gpu.set_memory_limit(Some(limit));
            let collected: Vec<Collected> = p.migrations().iter().map(|_| Collected::new(&p.request)).collect();
            let sinks: Vec<&dyn ProductSink> = collected.iter().map(|c| c as &dyn ProductSink).collect();
            let mut ctx = RunContext::new(&Silent, CancelToken::new());
            match gpu.migrate_scan(&p.migrations(), &mut ctx, &sinks) {
                Ok(()) if ctx.stats.frequency_bands >= 3 => break,
                Ok(()) => limit = limit * 19 / 20,
                Err(e) => panic!("the scan was refused at {limit} bytes before it ran in 3 bands: {e}"),
            }
        }
        f(&mut gpu, "cuda in bands");
        gpu.set_memory_limit(None);
        gpu.release_last_run();
    }
}

#[test]
fn each_member_of_a_scan_equals_its_own_migration_from_one_ingest() {
    let dir = tempfile::tempdir().unwrap();
    let job = scan_job(dir.path(), "kind = \"constant\"\nvelocity = 2000.0\nscale = [0.9, 1.0, 1.1]");
    let p = prepare(Job::load(&job, &[]).unwrap()).unwrap();
    let migrations = p.migrations();
    assert_eq!(migrations.len(), 3);
    let input_bytes = (24 * 20 * 150 * 4) as u64;
    let spectrum_bytes = (p.plan.frequencies.len() * 24 * 20 * 8) as u64;
    for_each_backend_at_once_and_in_bands(&p, |engine, label| {
        let collected: Vec<Collected> = migrations.iter().map(|_| Collected::new(&p.request)).collect();
        let sinks: Vec<&dyn ProductSink> = collected.iter().map(|c| c as &dyn ProductSink).collect();
        let mut ctx = RunContext::new(&Silent, CancelToken::new());
        engine.migrate_scan(&migrations, &mut ctx, &sinks).expect("the scan");
        let scan = ctx.stats;
        let banded = label.ends_with("in bands");
        assert_eq!(scan.frequency_bands >= 3, banded, "{label}: {} bands", scan.frequency_bands);
        // One ingest: the input read (and uploaded) once whatever the members; in bands, each band of the
        // waiting spectrum loaded once, not once per member. The GPU keeps the first band on the device
        // from the ingest on: the others wait on the host (`spill`), and only they are loaded.
        assert_eq!(scan.bytes("read"), Some(input_bytes), "{label}");
        if engine.name() == "cuda" {
            assert_eq!(scan.bytes("ingest"), Some(input_bytes), "{label}");
        }
        if banded && engine.name() == "cuda" {
            let (loaded, waited) = (scan.bytes("band-load").unwrap(), scan.bytes("spill").unwrap());
            assert_eq!(loaded, waited, "{label}");
            assert!(0 < loaded && loaded < spectrum_bytes, "{label}: {loaded} of {spectrum_bytes} bytes loaded");
        } else if banded {
            assert_eq!(scan.bytes("band-load"), Some(spectrum_bytes), "{label}");
        }
        for ((m, got), f) in migrations.iter().zip(collected).zip([0.9, 1.0, 1.1]) {
            let got = got.into_images().unwrap();
            let (alone, _) = migrate(engine, m.input, m.plan, m.velocity, m.request, &Silent);
            let alone = alone.unwrap();
            for (a, b) in got.iter().zip(&alone) {
                let peak = b.iter().fold(0.0f32, |x, v| x.max(v.abs()));
                let worst = a.iter().zip(b).fold(0.0f32, |x, (u, v)| x.max((u - v).abs()));
                assert!(worst <= 1e-5 * peak, "{label}, × {f}: differs from its own migration by {worst}");
            }
            // The reflector (300 ms) on inline 12 at crossline 3, below the diffractor: at f · 300 m.
            let nz = 90;
            let trace: Vec<f64> = got[0][3 * nz..4 * nz].iter().map(|&v| v as f64).collect();
            let e = envelope(&trace);
            let k = (40..nz).max_by(|&a, &b| e[a].total_cmp(&e[b])).unwrap();
            let z = k as f64 * 5.0;
            println!("{label}: × {f}: reflector at {z} m");
            assert!((z - f * 300.0).abs() <= 5.0, "{label}: × {f}: reflector at {z} m, not {} m", f * 300.0);
        }
    });
}

#[test]
fn a_scan_writes_every_member_under_its_name_and_a_panel_per_section() {
    let dir = tempfile::tempdir().unwrap();
    let job = scan_job(dir.path(), "kind = \"constant\"\nvelocity = 2000.0\nscale = [0.9, 1.0, 1.1]");
    let o = run(&["validate", job.to_str().unwrap()]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    assert!(o.stdout.contains("scan      scale 0.9  1800.0..1800.0 m/s, products *_v090"), "{}", o.stdout);
    let o = run(&["run", job.to_str().unwrap()]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    let out = dir.path().join("out");
    let files = names(&out);
    for stem in ["inline_12", "xline_10"] {
        for member in ["_v090", "_v100", "_v110", "_panel"] {
            for ext in ["png", "json"] {
                let f = format!("{stem}{member}.{ext}");
                assert!(files.contains(&f), "{f} missing: {files:?}");
            }
        }
    }
    let panel: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("inline_12_panel.json")).unwrap()).unwrap();
    let titles: Vec<&str> = panel["panels"].as_array().unwrap().iter().map(|p| p["title"].as_str().unwrap()).collect();
    assert_eq!(titles, ["scale 0.9", "scale 1", "scale 1.1"], "{panel}");
    assert!(panel["title"].as_str().unwrap().contains("velocity scale 0.9, 1, 1.1 (left to right)"), "{panel}");
    let manifest: Value = serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    let products = manifest["products"].as_array().unwrap();
    // Six pictures, two panels and the page that shows them.
    assert_eq!(products.len(), 9, "{products:?}");
    assert_eq!(products[8]["kind"], "index", "{products:?}");
    let page = std::fs::read_to_string(out.join("index.html")).unwrap();
    for shown in ["inline_12_v090.png", "inline_12_panel.png", "xline_10_panel.png", "Inline 12, velocity scale 1.1"] {
        assert!(page.contains(shown), "{shown} not on the page");
    }
    assert!(products.iter().any(|p| p["scan"]["scale"] == 1.1 && p["kind"] == "inline"), "{products:?}");
    assert!(products.iter().any(|p| p["kind"] == "panel" && p["of"] == "xline_10"), "{products:?}");
    // The ingest once: the input's bytes read once.
    let read = manifest["stages"]["stages"].as_array().unwrap().iter().find(|s| s["name"] == "read").unwrap().clone();
    assert_eq!(read["bytes"], 24 * 20 * 150 * 4, "{read}");

    // In time too: each member converted with its own velocity, all on one time axis, with their panel.
    let dir = tempfile::tempdir().unwrap();
    let job = scan_job(dir.path(), "kind = \"constant\"\nvelocity = 2000.0\nscale = [0.9, 1.1]");
    let o = run(&["run", job.to_str().unwrap(), "--set", "output.domain=[\"depth\", \"time\"]"]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    let files = names(&dir.path().join("out"));
    for f in ["inline_12_time_v090.png", "inline_12_time_v110.png", "inline_12_time_panel.png", "xline_10_panel.png"] {
        assert!(files.contains(&f.to_string()), "{f} missing: {files:?}");
    }
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("out/manifest.json")).unwrap()).unwrap();
    let twt: Vec<&Value> = manifest["products"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["kind"] == "inline" && p["axes"].get("twt").is_some())
        .map(|p| &p["axes"]["twt"])
        .collect();
    assert_eq!(twt.len(), 2, "{manifest}");
    assert_eq!(twt[0], twt[1], "the members' time axes differ");

    // A list of constant velocities is a scan too, named by velocity.
    let dir = tempfile::tempdir().unwrap();
    let job = scan_job(dir.path(), "kind = \"constant\"\nvelocity = [1.8, 2.0, 2.3]\nunit = \"km/s\"");
    let o = run(&["run", job.to_str().unwrap()]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    let files = names(&dir.path().join("out"));
    for f in ["inline_12_v1800.png", "inline_12_v2000.png", "inline_12_v2300.png", "inline_12_panel.png"] {
        assert!(files.contains(&f.to_string()), "{f} missing: {files:?}");
    }
    let panel: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("out/inline_12_panel.json")).unwrap()).unwrap();
    let titles: Vec<&str> = panel["panels"].as_array().unwrap().iter().map(|p| p["title"].as_str().unwrap()).collect();
    assert_eq!(titles, ["1800 m/s", "2000 m/s", "2300 m/s"], "{panel}");
    assert!(panel["title"].as_str().unwrap().contains("velocity 1800, 2000, 2300 m/s (left to right)"), "{panel}");
}

/// A scan split into shares (`--shard I/N`, every member migrating the same share) and summed by `reduce`
/// writes every member's products of the one-process scan (relative L2 ≤ 1e-5), each under its name.
#[test]
fn a_scan_in_shards_reduces_to_the_scan_of_one_process() {
    let dir = tempfile::tempdir().unwrap();
    let job = scan_job(dir.path(), "kind = \"constant\"\nvelocity = 2000.0\nscale = [0.9, 1.1]");
    let npy = ["--set", "output.slice_formats=[\"npy\"]", "--set", "output.png=false"];
    let whole = dir.path().join("whole");
    let as_whole = format!("output.dir={whole:?}");
    let o = run(&[&["--quiet", "run", job.to_str().unwrap(), "--set", &as_whole][..], &npy[..]].concat());
    assert_eq!(o.code(), Some(0), "{o:?}");
    for i in 1..=3 {
        let share = format!("{i}/3");
        let o = run(&[&["--quiet", "run", job.to_str().unwrap(), "--shard", &share][..], &npy[..]].concat());
        assert_eq!(o.code(), Some(0), "share {share}: {o:?}");
    }
    let o = run(&[&["reduce", job.to_str().unwrap(), "--shards", "3"][..], &npy[..]].concat());
    assert_eq!(o.code(), Some(0), "{o:?}");
    let split = dir.path().join("out");
    let products: Vec<String> = names(&whole).into_iter().filter(|n| n.ends_with(".npy")).collect();
    assert_eq!(products, ["inline_12_v090.npy", "inline_12_v110.npy", "xline_10_v090.npy", "xline_10_v110.npy"]);
    for name in &products {
        let (_, x) = seisimage::io::npy::read(&split.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        let (_, y) = seisimage::io::npy::read(&whole.join(name)).unwrap();
        let d: f64 = x.iter().zip(&y).map(|(p, q)| (*p as f64 - *q as f64).powi(2)).sum();
        let n: f64 = y.iter().map(|q| (*q as f64).powi(2)).sum();
        assert!(n > 0.0 && (d / n).sqrt() <= 1e-5, "{name}: relative L2 {:.2e}", (d / n).sqrt());
    }
    // The members differ: the shares did not give every member the same velocity.
    let (_, slow) = seisimage::io::npy::read(&split.join("inline_12_v090.npy")).unwrap();
    let (_, fast) = seisimage::io::npy::read(&split.join("inline_12_v110.npy")).unwrap();
    assert_ne!(slow, fast);
}
