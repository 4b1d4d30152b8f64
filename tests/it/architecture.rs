//! The invariants of docs/architecture.md, checked: what each crate of the workspace may depend on, which
//! crates alone may use the command line, the GPU and HDF5 libraries, where the launchers' environment
//! is read, and how long a file may grow.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

mod imports;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The library crates, from the ground floor up, each with the crates of the workspace it may use.
const LAYERS: [(&str, &[&str]); 6] = [
    ("seis-core", &[]),
    ("seis-io", &["seis-core"]),
    ("seis-velocity", &["seis-core", "seis-io"]),
    ("seis-render", &["seis-core", "seis-io"]),
    ("seis-imaging", &["seis-core", "seis-io", "seis-velocity"]),
    ("seis-cuda", &["seis-core", "seis-io", "seis-velocity", "seis-imaging"]),
];

/// Dependencies that belong to one crate only: the command line and its display to the application, the
/// GPU libraries to the CUDA engine, HDF5 to the I/O crate.
const ONLY_IN: [(&str, &str); 9] = [
    ("clap", "seisimage"),
    ("indicatif", "seisimage"),
    ("tracing-subscriber", "seisimage"),
    ("anyhow", "seisimage"),
    ("toml", "seisimage"),
    ("cudarc", "seis-cuda"),
    ("libloading", "seis-cuda"),
    ("hdf5", "seis-io"),
    ("hdf5-sys", "seis-io"),
];

/// The names of the normal (not dev-) dependencies of the package whose manifest is `manifest`.
fn dependencies(manifest: &Path) -> BTreeSet<String> {
    let text = std::fs::read_to_string(manifest).unwrap();
    let doc: toml::Table = toml::from_str(&text).unwrap();
    doc.get("dependencies").and_then(|d| d.as_table()).map(|t| t.keys().cloned().collect()).unwrap_or_default()
}

fn crate_manifest(name: &str) -> PathBuf {
    root().join("crates").join(name).join("Cargo.toml")
}

#[test]
fn each_crate_uses_only_the_layers_below_it() {
    let workspace: BTreeSet<&str> = LAYERS.iter().map(|(name, _)| *name).collect();
    for (name, allowed) in LAYERS {
        let used: BTreeSet<String> =
            dependencies(&crate_manifest(name)).into_iter().filter(|d| workspace.contains(d.as_str())).collect();
        let extra: Vec<&String> = used.iter().filter(|d| !allowed.contains(&d.as_str())).collect();
        assert!(extra.is_empty(), "{name} may not depend on {extra:?}: see docs/architecture.md");
    }
    // Every crate of crates/ is a layer named here.
    let on_disk: BTreeSet<String> = std::fs::read_dir(root().join("crates"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| root().join("crates").join(n).join("Cargo.toml").is_file())
        .collect();
    let named: BTreeSet<String> = LAYERS.iter().map(|(n, _)| n.to_string()).collect();
    let unnamed: Vec<&String> = on_disk.iter().filter(|n| !named.contains(*n) && !n.ends_with("-py")).collect();
    assert!(unnamed.is_empty(), "crates without a layer in this test and docs/architecture.md: {unnamed:?}");
}

#[test]
fn the_command_line_gpu_and_hdf5_libraries_each_have_one_home() {
    let mut packages: Vec<(String, BTreeSet<String>)> =
        LAYERS.iter().map(|(name, _)| (name.to_string(), dependencies(&crate_manifest(name)))).collect();
    packages.push(("seisimage".into(), dependencies(&root().join("Cargo.toml"))));
    for (dependency, home) in ONLY_IN {
        for (package, deps) in &packages {
            assert!(
                package == home || !deps.contains(dependency),
                "{package} depends on {dependency}, which only {home} may use"
            );
        }
    }
}

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The launchers' variables (or the start of their names) that say which rank a process is and which run.
const LAUNCHER_VARIABLES: [&str; 9] =
    ["RANK\"", "WORLD_SIZE", "LOCAL_RANK", "SLURM_", "OMPI_", "PMI_", "PMIX_", "NCCL_COMM_ID", "SEISIMAGE_RUN_ID"];

/// The launcher's variable that `text` names as a string literal (how a variable is read; a comment may
/// still name one).
fn launcher_variable_read(text: &str) -> Option<&'static str> {
    LAUNCHER_VARIABLES.into_iter().find(|name| text.contains(&format!("\"{name}")))
}

#[test]
fn no_engine_reads_the_launchers_environment() {
    let mut files = Vec::new();
    rust_files(&root().join("crates"), &mut files);
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        if let Some(name) = launcher_variable_read(&text) {
            panic!("{} reads {name}: only the application reads a launcher's environment", file.display());
        }
    }
}

#[test]
fn the_application_reads_the_launchers_environment_in_src_distributed_alone() {
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    let distributed = root().join("src").join("distributed");
    let mut resolved = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        if !file.starts_with(&distributed) {
            if let Some(name) = launcher_variable_read(&text) {
                panic!("{} reads {name}: the launchers' environment is read in src/distributed", file.display());
            }
        }
        for _ in text.matches("RankEnv::from_env(") {
            resolved.push(file.strip_prefix(root()).unwrap().display().to_string());
        }
    }
    // The run's mode is resolved once, where the command starts, and handed down from there.
    assert_eq!(resolved, ["src/run/mode.rs"], "the files that ask the environment which rank this process is");
}

#[test]
fn no_rust_file_is_over_600_lines() {
    let mut files = Vec::new();
    for dir in ["crates", "src", "tests", "benches", "examples"] {
        if root().join(dir).is_dir() {
            rust_files(&root().join(dir), &mut files);
        }
    }
    let long: Vec<String> = files
        .iter()
        .filter_map(|f| {
            let lines = std::fs::read_to_string(f).unwrap().lines().count();
            (lines > 600).then(|| format!("{} ({lines} lines)", f.strip_prefix(root()).unwrap().display()))
        })
        .collect();
    assert!(long.is_empty(), "split these along their concerns: {long:?}");
}

/// No two modules of a crate import each other, directly or round a circle: modules follow the data
/// flow, and what two of them share lives below both.
#[test]
fn no_import_circles_between_modules() {
    let mut roots: Vec<(&str, PathBuf)> =
        LAYERS.iter().map(|(name, _)| (*name, root().join("crates").join(name).join("src/lib.rs"))).collect();
    roots.push(("seisimage", root().join("src/lib.rs")));
    let mut found = Vec::new();
    for (name, lib) in roots {
        for circle in imports::circles(&lib, &root()) {
            found.push(format!("{name}: {} ({})", circle.files, circle.modules));
        }
    }
    assert!(found.is_empty(), "import circles between modules: {found:#?}");
}

/// A layer's log lines show like the application's: the binary's log filter names every crate.
#[test]
fn every_layer_logs_at_the_level_asked_for() {
    let main = std::fs::read_to_string(root().join("src/main.rs")).unwrap();
    for (name, _) in LAYERS {
        let ident = name.replace('-', "_");
        assert!(main.contains(&format!("\"{ident}\"")), "src/main.rs's LOGGING_CRATES lacks {ident}");
    }
    let out = super::cli_common::run_command(super::cli_common::seisimage().current_dir(root()).args([
        "-vv",
        "info",
        "data/f3.sgy",
    ]));
    assert_eq!(out.code(), Some(0), "{out:?}");
    // A trace line of seis-io's SEG-Y reader.
    assert!(out.stderr.contains("file headers read in"), "{out:?}");
}
