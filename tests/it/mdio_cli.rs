//! MDIO through the command line: `convert` to and from an MDIO folder keeps every value, and a job whose
//! input is an MDIO dataset migrates it as it does the same volume in SEG-Y.

use seisimage::io::{self, InputOptions};

use crate::cli_common::{job_text, model, names, run, samples, write_job, write_segy};

#[test]
fn segy_to_mdio_to_segy_keeps_the_volume() {
    let dir = tempfile::tempdir().unwrap();
    let m = model(9, 11, 64);
    let data = samples(&m);
    let (a, b, c) = (dir.path().join("a.sgy"), dir.path().join("b.mdio"), dir.path().join("c.sgy"));
    write_segy(&a, &m, &data);
    for (from, to) in [(&a, &b), (&b, &c)] {
        let out = run(&["convert", from.to_str().unwrap(), to.to_str().unwrap()]);
        assert!(out.status.success(), "{out:?}");
    }
    let back = io::open(&c, &InputOptions::default()).unwrap();
    assert_eq!(back.geometry().shape(), [9, 11, 64]);
    assert_eq!(back.geometry().coords, m.geometry().coords);
    let mut read = vec![0.0; data.len()];
    back.read_all(&mut read).unwrap();
    assert!(read == data, "values changed on the way through MDIO");
    // Only the dataset and the files named are left: no hidden temporary folder.
    assert_eq!(names(dir.path()), ["a.sgy", "b.mdio", "c.sgy"]);
    let info = run(&["info", "--json", "--no-stats", b.to_str().unwrap()]);
    assert!(info.status.success(), "{info:?}");
    assert!(info.stdout.contains("\"container\": \"mdio\""), "{}", info.stdout);
}

#[test]
fn a_job_reads_an_mdio_input_as_it_reads_segy() {
    let dir = tempfile::tempdir().unwrap();
    let m = model(16, 16, 64);
    let (segy, mdio) = (dir.path().join("in.sgy"), dir.path().join("in.mdio"));
    write_segy(&segy, &m, &samples(&m));
    let out = run(&["convert", segy.to_str().unwrap(), mdio.to_str().unwrap()]);
    assert!(out.status.success(), "{out:?}");
    let mut products = Vec::new();
    for input in [&segy, &mdio] {
        let folder = dir.path().join(format!("out-{}", input.extension().unwrap().to_str().unwrap()));
        let job = write_job(
            &dir.path().join("job.toml"),
            &job_text(input, &folder, "dz = 10.0", "inlines = [8]\nslice_formats = [\"npy\"]\npng = false"),
        );
        let out = run(&["run", job.to_str().unwrap()]);
        assert!(out.status.success(), "{out:?}");
        let npy = names(&folder).into_iter().find(|n| n.ends_with(".npy")).expect("an NPY section");
        products.push(std::fs::read(folder.join(npy)).unwrap());
    }
    assert!(products[0] == products[1], "the MDIO input migrated differently from the SEG-Y one");
}
