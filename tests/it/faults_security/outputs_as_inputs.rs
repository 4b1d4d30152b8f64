//! Outputs that are inputs: every name a run, `plot` or `convert` writes is checked against its inputs.

use std::path::Path;

use crate::cli_common::{job_text, model, run, samples, write_job, write_segy, Outcome};
use seisimage::volume::{Domain, Geometry, SampleAxis};

use super::{path_str, small_job};

/// `o` was refused as a bad request (exit 2) saying `says`, and `kept` still holds `before`.
fn assert_refused_and_kept(o: &Outcome, says: &str, kept: &Path, before: &[u8]) {
    assert_eq!(o.code(), Some(2), "{o:?}");
    assert!(o.stderr.contains(says), "'{says}' is not in: {o:?}");
    assert_eq!(std::fs::read(kept).unwrap(), before, "{} was replaced", kept.display());
}

#[test]
fn a_product_that_is_the_input_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    // The input lies in the output folder under the name of the ROI's file.
    let m = model(16, 12, 100);
    let input = out.join("roi_centre.sgy");
    write_segy(&input, &m, &samples(&m));
    let before = std::fs::read(&input).unwrap();
    let job = write_job(
        &dir.path().join("job.toml"),
        &job_text(&input, &out, "nz = 20", "[[output.roi]]\nname = \"centre\"\nformats = [\"segy\"]"),
    );
    for command in ["validate", "run"] {
        let o = run(&[command, path_str(&job)]);
        assert_refused_and_kept(&o, "would replace the input", &input, &before);
        assert!(o.stderr.contains(path_str(&input)), "{o:?}");
    }

    // A hard link to the input under the product's name is the input too.
    let other = dir.path().join("input.sgy");
    std::fs::rename(&input, &other).unwrap();
    std::fs::hard_link(&other, &input).unwrap();
    let job = write_job(
        &dir.path().join("job.toml"),
        &job_text(&other, &out, "nz = 20", "[[output.roi]]\nname = \"centre\"\nformats = [\"segy\"]"),
    );
    let o = run(&["run", path_str(&job)]);
    assert_refused_and_kept(&o, "would replace the input", &other, &before);
}

#[test]
fn a_product_that_is_the_velocity_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let m = model(16, 12, 100);
    let input = dir.path().join("input.sgy");
    write_segy(&input, &m, &samples(&m));
    let g = m.geometry();
    let velocity = out.join("roi_v.h5");
    let depth = SampleAxis { origin: 0.0, step: 10.0, len: 50, domain: Domain::Depth };
    let vg = Geometry::regular(g.ilines, g.xlines, depth);
    seisimage::io::write_volume(
        seisimage::io::FileFormat::Hdf5,
        &velocity,
        &vg,
        &vec![2000.0f32; vg.n_values()],
        &Default::default(),
    )
    .unwrap();
    let before = std::fs::read(&velocity).unwrap();
    let text = job_text(&input, &out, "nz = 20", "[[output.roi]]\nname = \"v\"\nformats = [\"hdf5\"]")
        .replace("kind = \"constant\"\nvelocity = 2000.0", &format!("kind = \"file\"\npath = {velocity:?}"));
    let job = write_job(&dir.path().join("job.toml"), &text);
    let o = run(&["run", path_str(&job)]);
    assert_refused_and_kept(&o, "would replace the velocity file", &velocity, &before);
}

/// Every name a run gives a file is checked, not only the sections in depth: the page, products in time,
/// attributes, the members and panels of a velocity scan, and a velocity text table is an input like a cube.
#[test]
fn products_of_every_kind_that_are_an_input_are_refused() {
    let scan = "[velocity]\nkind = \"constant\"\nvelocity = 2000.0\nscale = [0.95, 1.05]";
    let cases = [
        ("index.html", "inlines = [8]", ""),
        ("inline_8_time.sgy", "inlines = [8]\ndomain = [\"time\"]\nslice_formats = [\"segy\"]", ""),
        ("inline_8_envelope.npy", "inlines = [8]\nattributes = [\"envelope\"]\nslice_formats = [\"npy\"]", ""),
        ("inline_8_v105.json", "inlines = [8]", scan),
        ("inline_8_panel.png", "inlines = [8]", scan),
    ];
    for (name, output, velocity) in cases {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        std::fs::create_dir(&out).unwrap();
        let m = model(16, 12, 100);
        let input = dir.path().join("input.sgy");
        write_segy(&input, &m, &samples(&m));
        let before = std::fs::read(&input).unwrap();
        std::fs::hard_link(&input, out.join(name)).unwrap();
        let mut text = job_text(&input, &out, "nz = 20", output);
        if !velocity.is_empty() {
            text = text.replace("[velocity]\nkind = \"constant\"\nvelocity = 2000.0", velocity);
        }
        let job = write_job(&dir.path().join("job.toml"), &text);
        let o = run(&["run", path_str(&job)]);
        assert_refused_and_kept(&o, "would replace the input", &input, &before);
        assert!(o.stderr.contains(name), "{name}: {o:?}");
    }

    // A velocity text table under the name of a picture's sidecar.
    let dir = tempfile::tempdir().unwrap();
    let (job, _, out) = small_job(dir.path(), "", "inlines = [8]");
    std::fs::create_dir(&out).unwrap();
    let table = out.join("inline_8.json");
    std::fs::write(&table, "0 2000\n1000 2400\n").unwrap();
    let text = std::fs::read_to_string(&job).unwrap().replace(
        "kind = \"constant\"\nvelocity = 2000.0",
        &format!("kind = \"table\"\npath = {table:?}\ndomain = \"time\""),
    );
    let job = write_job(&job, &text);
    let o = run(&["run", path_str(&job)]);
    assert_refused_and_kept(&o, "would replace the velocity file", &table, b"0 2000\n1000 2400\n");
}

/// A share of a job split into shards writes its partial products into the output folder or `--partials`:
/// that file is checked against the inputs too.
#[test]
fn a_partial_products_file_that_is_the_input_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (job, input, _) = small_job(dir.path(), "", "depth_slices = [50.0]\npng = false\nslice_formats = [\"npy\"]");
    let before = std::fs::read(&input).unwrap();
    let partials = dir.path().join("partials");
    std::fs::create_dir(&partials).unwrap();
    std::fs::hard_link(&input, partials.join("shard-1-of-2.partial")).unwrap();
    let o = run(&["run", path_str(&job), "--shard", "1/2", "--partials", path_str(&partials)]);
    assert_refused_and_kept(&o, "shard-1-of-2.partial would replace the input", &input, &before);
}

#[test]
fn plot_onto_its_own_input_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let m = model(6, 5, 40);
    let input = dir.path().join("a.sgy");
    write_segy(&input, &m, &samples(&m));
    let before = std::fs::read(&input).unwrap();
    // the picture, and its sidecar (a.json beside a.png), each a hard link to the input
    for (picture, link) in [("a.png", "a.png"), ("b.png", "b.json")] {
        std::fs::hard_link(&input, dir.path().join(link)).unwrap();
        let o = run(&["plot", path_str(&input), "--inline", "2", "-o", path_str(&dir.path().join(picture))]);
        assert_refused_and_kept(&o, "is the input", &input, &before);
    }
}

#[test]
fn convert_onto_its_own_input_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let m = model(6, 5, 40);
    let input = dir.path().join("a.sgy");
    write_segy(&input, &m, &samples(&m));
    let before = std::fs::read(&input).unwrap();
    let link = dir.path().join("b.sgy");
    std::fs::hard_link(&input, &link).unwrap();
    for output in [&input, &link] {
        let o = run(&["convert", path_str(&input), path_str(output), "--iline", "2:3"]);
        assert_refused_and_kept(&o, "is the input", &input, &before);
    }
}
