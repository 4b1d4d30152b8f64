//! Independent readers in Python for the format tests: a script run under python3 with `PYTHONPATH` from
//! `SEISIMAGE_PYTHONPATH`, its standard output parsed as JSON. Where the modules a test needs cannot be
//! imported the test says why and passes, unless `SEISIMAGE_INTEROP_TESTS=1` (as in CI), where that fails.
#![allow(dead_code)] // each format test uses its own subset

use std::ffi::OsStr;

use serde_json::Value;

/// Run `script` with `args` once `imports` (`"segyio, numpy"`) import; `None` when they cannot and that
/// is allowed.
pub fn python_json(imports: &str, script: &str, args: &[&OsStr]) -> Option<Value> {
    python_json_from("SEISIMAGE_PYTHONPATH", imports, script, args)
}

/// [`python_json`] with `PYTHONPATH` from the variable `path_variable`: for readers whose dependencies
/// cannot share a folder with the others (MDIO's pinned xarray).
pub fn python_json_from(path_variable: &str, imports: &str, script: &str, args: &[&OsStr]) -> Option<Value> {
    let run = |code: &str| {
        let mut cmd = crate::cli_common::child("python3");
        if let Some(path) = std::env::var_os(path_variable) {
            cmd.env("PYTHONPATH", path);
        }
        cmd.arg("-c").arg(code).args(args).output()
    };
    let why = match run(&format!("import {imports}")) {
        Ok(out) if out.status.success() => None,
        Ok(out) => Some(String::from_utf8_lossy(&out.stderr).lines().last().unwrap_or_default().to_string()),
        Err(e) => Some(format!("python3 did not start: {e}")),
    };
    if let Some(why) = why {
        let required = std::env::var("SEISIMAGE_INTEROP_TESTS").is_ok_and(|v| v == "1");
        assert!(!required, "SEISIMAGE_INTEROP_TESTS=1 but {imports} cannot be imported: {why}");
        eprintln!("skipping: {imports} cannot be imported (set {path_variable}): {why}");
        return None;
    }
    let out = run(script).expect("python3 started a moment ago");
    assert!(out.status.success(), "the Python side failed:\n{}", String::from_utf8_lossy(&out.stderr));
    Some(serde_json::from_slice(&out.stdout).expect("the Python side prints JSON"))
}
