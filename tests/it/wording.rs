//! Numbers in what the program writes for people (`validate`, the log, the pictures' titles and notes,
//! `index.html`) are rounded and never `-0`; two-way time is called TWT; a misfit says its unit.

use crate::cli_common::{model, run, samples, write_job, write_segy};
use serde_json::Value;

/// The numbers in `text` with more than four decimals, or written as a negative zero.
fn unrounded(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let in_name = i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_');
        if chars[i].is_ascii_digit() && !in_name {
            let start = if i > 0 && chars[i - 1] == '-' { i - 1 } else { i };
            let digit = |j: usize| chars.get(j).is_some_and(|c| c.is_ascii_digit());
            while digit(i) || (chars.get(i) == Some(&'.') && digit(i + 1)) {
                i += 1;
            }
            let number: String = chars[start..i].iter().collect();
            let decimals = number.split_once('.').map_or(0, |(_, d)| d.len());
            let negative_zero = number.starts_with('-') && number[1..].chars().all(|c| c == '0' || c == '.');
            if decimals > 4 || negative_zero {
                found.push(number.to_string());
            }
        } else {
            i += 1;
        }
    }
    found
}

#[test]
fn the_finder_finds_what_it_looks_for() {
    assert_eq!(
        unrounded("v 2800.011962890625 m/s, x -0.0, y -0, z 1.5..2.25, inline_1.000001 , 0.30000000000000004"),
        ["2800.011962890625", "-0.0", "-0", "0.30000000000000004"]
    );
}

/// The message of each log line, without its time stamp.
fn messages(log: &str) -> String {
    log.lines().map(|l| l.split_once("Z ").map_or(l, |(_, m)| m)).collect::<Vec<_>>().join("\n")
}

#[test]
fn user_facing_numbers_are_rounded() {
    let dir = tempfile::tempdir().unwrap();
    let m = model(12, 10, 150);
    let input = dir.path().join("input.sgy");
    write_segy(&input, &m, &samples(&m));
    // A velocity as a single-precision file holds it, scanned by a factor that is not exact in binary.
    let text = format!(
        "[input]\npath = {input:?}\n\n[velocity]\nkind = \"constant\"\nvelocity = 2000.011962890625\n\
         scale = [1.0, 1.1]\n\n[imaging]\ndz = 5.0\nnz = 60\nfmax = 62.5\n\n[compute]\nbackend = \"cpu\"\n\n\
         [output]\ndir = \"out\"\ninlines = [6]\ndepth_slices = [150.0]\n"
    );
    let job = write_job(&dir.path().join("job.toml"), &text);
    let validate = run(&["validate", job.to_str().unwrap()]);
    assert_eq!(validate.code(), Some(0), "{validate:?}");
    assert_eq!(unrounded(&validate.stdout), Vec::<String>::new(), "{}", validate.stdout);
    let o = run(&["run", job.to_str().unwrap()]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    assert_eq!(unrounded(&messages(&o.stderr)), Vec::<String>::new(), "{}", o.stderr);
    let out = dir.path().join("out");
    let page = std::fs::read_to_string(out.join("index.html")).unwrap();
    // The job as run, at the end of the page, is the user's own text.
    let (shown, _) = page.split_once("<h2>The run</h2>").unwrap();
    assert_eq!(unrounded(shown), Vec::<String>::new(), "{shown}");
    for stem in ["inline_6_v100", "inline_6_v110", "depth_150m_v110", "inline_6_panel"] {
        let sidecar: Value =
            serde_json::from_str(&std::fs::read_to_string(out.join(format!("{stem}.json"))).unwrap()).unwrap();
        let words = format!("{} {} {}", sidecar["title"], sidecar["notes"], sidecar["footer"]);
        assert_eq!(unrounded(&words), Vec::<String>::new(), "{stem}: {words}");
    }
}

#[test]
fn a_time_slice_is_titled_twt() {
    let dir = tempfile::tempdir().unwrap();
    let m = model(12, 10, 150);
    let input = dir.path().join("input.sgy");
    write_segy(&input, &m, &samples(&m));
    let png = dir.path().join("t200.png");
    let o = run(&["plot", input.to_str().unwrap(), "--time", "200", "-o", png.to_str().unwrap()]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    let sidecar: Value = serde_json::from_str(&std::fs::read_to_string(dir.path().join("t200.json")).unwrap()).unwrap();
    assert_eq!(sidecar["title"], "TWT 200 ms", "{sidecar}");
}
