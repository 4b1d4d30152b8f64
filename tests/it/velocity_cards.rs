//! Velocity cards as contractors deliver them (ProMAX HANDVEL, Western VELF), written here by hand, placed
//! by the CDP numbers of the seismic's trace headers: a job on them images as the same functions given in
//! the job does, and a CDP the seismic lacks is refused with its line.

use std::path::{Path, PathBuf};

use crate::cli_common::{model, run, samples, write_job, write_segy};
use seisimage::job::Job;
use seisimage::run::prepare;

/// The CDP number the test writes into bytes 21-24 of the trace at inline `il`, crossline `xl`: not the
/// trace's place in the file, so that only the headers can tell where a CDP is.
fn cdp(il: i64, xl: i64) -> i64 {
    3000 + 40 * il + 17 - xl
}

/// The 20 × 16 × 150 synthetic input (inlines 1..=20, crosslines 1..=16) with the CDP numbers of [`cdp`].
fn input(dir: &Path) -> PathBuf {
    let m = model(20, 16, 150);
    let path = dir.join("input.sgy");
    write_segy(&path, &m, &samples(&m));
    let mut bytes = std::fs::read(&path).unwrap();
    let trace_size = 240 + 150 * 4;
    // The writer's byte order, from the trace sequence number in file of the first trace (1).
    let big = bytes[3600 + 4..3600 + 8] == [0, 0, 0, 1];
    for il in 1..=20 {
        for xl in 1..=16 {
            let at = 3600 + ((il - 1) * 16 + (xl - 1)) as usize * trace_size + 20;
            let n = cdp(il, xl) as i32;
            bytes[at..at + 4].copy_from_slice(&if big { n.to_be_bytes() } else { n.to_le_bytes() });
        }
    }
    std::fs::write(&path, bytes).unwrap();
    path
}

/// RMS picks (two-way ms, m/s) at each corner of the survey, a little faster to the east and the north.
fn picks(il: i64, xl: i64) -> Vec<(f64, f64)> {
    let lateral = 2.0 * il as f64 + 1.5 * xl as f64;
    vec![(100.0, 1950.0 + lateral), (300.0, 1990.0 + lateral), (500.0, 2030.0 + lateral), (700.0, 2060.0 + lateral)]
}

const CORNERS: [(i64, i64); 4] = [(1, 1), (20, 1), (1, 16), (20, 16)];

/// The corners' functions as a HANDVEL export: a title, comments, blank lines, three pairs to a line.
fn handvel() -> String {
    let mut text = String::from("ProMAX velocity export\n# CDP, then time (ms) and RMS velocity (m/s) pairs\n\n");
    for (il, xl) in CORNERS {
        text += &format!("HANDVEL {}\n", cdp(il, xl));
        for (k, (t, v)) in picks(il, xl).into_iter().enumerate() {
            text += &format!("{t:>8} {v:>8}{}", if k % 3 == 2 { "\n" } else { " " });
        }
        text += "\n\n";
    }
    text
}

/// The same as VELF cards: a SPNT card with a line name, a VELF card of the CDP and three pairs, one more.
fn velf() -> String {
    let mut text = String::from("C VELOCITIES LINE 1\n");
    for (il, xl) in CORNERS {
        let p = picks(il, xl);
        text += &format!("SPNT L1 {}\n", cdp(il, xl));
        text += &format!("VELF {} {} {} {} {} {} {}\n", cdp(il, xl), p[0].0, p[0].1, p[1].0, p[1].1, p[2].0, p[2].1);
        text += &format!("VELF {} {}\n", p[3].0, p[3].1);
    }
    text
}

/// The corners' functions as `[[velocity.functions]]` tables.
fn in_the_job() -> String {
    let mut text = String::from("kind = \"functions\"\ntype = \"rms\"\n");
    for (il, xl) in CORNERS {
        let (t, v): (Vec<f64>, Vec<f64>) = picks(il, xl).into_iter().unzip();
        text += &format!("[[velocity.functions]]\niline = {il}\nxline = {xl}\ntimes = {t:?}\nvelocities = {v:?}\n");
    }
    text
}

fn job(dir: &Path, input: &Path, name: &str, velocity: &str) -> PathBuf {
    let text = format!(
        "[input]\npath = {input:?}\n\n[imaging]\nmethod = \"split-step\"\ndz = 10.0\nnz = 40\n\n[compute]\nbackend = \
         \"cpu\"\n\n[output]\ndir = {:?}\npng = false\n\n[[output.roi]]\nname = \"all\"\nformats = \
         [\"npy\"]\n\n[velocity]\n{velocity}\n",
        dir.join(name)
    );
    write_job(&dir.join(format!("{name}.toml")), &text)
}

#[test]
fn handvel_cards_placed_by_cdp_headers_image_as_the_same_functions_in_the_job() {
    let dir = tempfile::tempdir().unwrap();
    let input = input(dir.path());
    std::fs::write(dir.path().join("picks.txt"), handvel()).unwrap();
    std::fs::write(dir.path().join("picks.velf"), velf()).unwrap();
    let cards = job(dir.path(), &input, "cards", "kind = \"functions\"\npath = \"picks.txt\"\nformat = \"handvel\"");
    let velf = job(dir.path(), &input, "velf", "kind = \"functions\"\npath = \"picks.velf\"\nformat = \"velf\"");
    let table = job(dir.path(), &input, "table", &in_the_job());
    let model = |path: &Path| prepare(Job::load(path, &[]).unwrap()).unwrap().velocity;
    let expected = model(&table);
    assert!(expected.varies_laterally());
    assert_eq!(model(&cards), expected);
    assert_eq!(model(&velf), expected);

    for path in [&cards, &table] {
        let o = run(&["run", path.to_str().unwrap()]);
        assert_eq!(o.code(), Some(0), "{o:?}");
    }
    let read = |name: &str| seisimage::io::npy::read(&dir.path().join(name).join("roi_all.npy")).unwrap();
    let ((shape, a), (table_shape, b)) = (read("cards"), read("table"));
    assert_eq!((shape.clone(), shape.iter().product::<usize>()), (table_shape, a.len()));
    let peak = b.iter().fold(0.0f32, |m, v| m.max(v.abs()));
    let worst = a.iter().zip(&b).fold(0.0f32, |m, (x, y)| m.max((x - y).abs()));
    assert!(peak > 0.0 && worst <= 1e-5 * peak, "largest difference {worst} of a peak of {peak}");
}

#[test]
fn a_cdp_the_seismic_lacks_is_refused_with_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let input = input(dir.path());
    let text = handvel().replacen(&format!("HANDVEL {}", cdp(20, 16)), "HANDVEL 99999", 1);
    let line = text.lines().position(|l| l == "HANDVEL 99999").unwrap() + 1;
    std::fs::write(dir.path().join("picks.txt"), text).unwrap();
    let path = job(dir.path(), &input, "cards", "kind = \"functions\"\npath = \"picks.txt\"\nformat = \"handvel\"");
    let o = run(&["validate", path.to_str().unwrap()]);
    assert_eq!(o.code(), Some(2), "{o:?}");
    let expect = format!("CDP 99999 (line {line}) is not a trace of the seismic");
    assert!(o.stderr.contains("velocity.path") && o.stderr.contains(&expect), "{o:?}");
    assert!(o.stderr.contains(&format!("run {}..={}", cdp(1, 16), cdp(20, 1))), "{o:?}");
}
