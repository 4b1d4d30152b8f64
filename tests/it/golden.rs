//! Golden files: what `info --json` and `validate` print for the shipped demo, kept in `tests/golden/`.
//! Scripts read both, so a change in either is a change for their users: a test here fails until the
//! golden file is written anew (`SEISIMAGE_UPDATE_GOLDEN=1`) and the difference is reviewed like code.
//!
//! What depends on the machine is left out: folders are written as `<root>` and `<out>`, the lines that
//! compare the plan with this machine's memory and GPU, and the plan's own memory (it counts per-thread
//! buffers), are dropped, and numbers of `info --json` compare within rounding (amplitude sums are taken
//! in parallel).

use std::path::{Path, PathBuf};

use super::cli_common::{run_command, seisimage};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `actual` against the golden file `name`, or written there when asked to.
fn golden(name: &str, actual: &str, same: impl Fn(&str, &str) -> bool) {
    let path = root().join("tests/golden").join(name);
    if std::env::var_os("SEISIMAGE_UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(
        same(&expected, actual),
        "{} differs from this build's output (review it, then write it anew with SEISIMAGE_UPDATE_GOLDEN=1):\n\
         --- expected\n{expected}\n--- actual\n{actual}",
        path.display()
    );
}

/// Two JSON values alike: the same keys and strings, numbers within a relative 1e-9.
fn json_alike(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    use serde_json::Value::*;
    match (a, b) {
        (Number(x), Number(y)) => {
            let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            (x - y).abs() <= 1e-9 * x.abs().max(y.abs()).max(1.0)
        }
        (Array(x), Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(x, y)| json_alike(x, y)),
        (Object(x), Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| json_alike(v, w)))
        }
        _ => a == b,
    }
}

#[test]
fn info_json_of_the_demo_input() {
    let out = run_command(seisimage().current_dir(root()).args(["info", "--json", "data/f3.sgy"]));
    assert_eq!(out.code(), Some(0), "{out:?}");
    golden("info-f3.json", &out.stdout, |a, b| {
        let parse = |s: &str| serde_json::from_str::<serde_json::Value>(s).unwrap();
        json_alike(&parse(a), &parse(b))
    });
}

#[test]
fn validate_of_the_demo_job() {
    let dir = tempfile::tempdir().unwrap();
    let set = format!("output.dir={}", dir.path().display());
    let out = run_command(seisimage().args(["validate", "configs/demo.toml", "--set", &set]).current_dir(root()));
    assert_eq!(out.code(), Some(0), "{out:?}");
    let text = placeholders(&out.stdout, &root(), dir.path());
    // The machine's memory and GPU, and the host memory of the plan (per-thread buffers), vary by machine.
    let kept: Vec<&str> = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("machine") && !l.trim_start().starts_with("plan      memory"))
        .collect();
    golden("validate-demo.txt", &(kept.join("\n") + "\n"), |a, b| a == b);
}

/// `text` with the machine's folders named by placeholders.
fn placeholders(text: &str, root: &Path, out: &Path) -> String {
    text.replace(&out.display().to_string(), "<out>").replace(&root.display().to_string(), "<root>")
}
