//! SEG-Y products say how they were made: the processing history in their text header and metres as the
//! measurement system of their binary header, read back with segyio.

use crate::cli_common::{job_text, model, run, samples, write_job, write_segy};
use crate::python::python_json;

const READ_HEADERS: &str = r#"
import json, sys
import segyio
with segyio.open(sys.argv[1], "r", ignore_geometry=True) as f:
    print(json.dumps({
        "text": segyio.tools.wrap(f.text[0]),
        "measurement_system": int(f.bin[segyio.BinField.MeasurementSystem]),
    }))
"#;

#[test]
fn segy_products_carry_their_processing_history_and_metres() {
    let dir = tempfile::tempdir().unwrap();
    let m = model(8, 8, 100);
    let input = dir.path().join("survey.sgy");
    write_segy(&input, &m, &samples(&m));
    let out = dir.path().join("out");
    let output = "inlines = [4]\nslice_formats = [\"segy\"]\npng = false\ndomain = [\"depth\", \"time\"]";
    let text = job_text(&input, &out, "method = \"phase-shift\"\nfmax = 45.0\ndz = 5.0", output)
        .replace("velocity = 2000.0", "velocity = 2000.0\ntype = \"interval\"");
    let job = write_job(&dir.path().join("history-job.toml"), &text);
    let o = run(&["run", job.to_str().unwrap()]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    for product in ["inline_4.sgy", "inline_4_time.sgy"] {
        let path = out.join(product);
        let Some(v) = python_json("segyio", READ_HEADERS, &[path.as_os_str()]) else { return };
        assert_eq!(v["measurement_system"], 1, "{product}: metres");
        let text = v["text"].as_str().unwrap();
        for expected in [
            "PROCESSING: POST-STACK DEPTH MIGRATION, PHASE-SHIFT",
            "VELOCITY: v 2000 m/s",
            "VELOCITY FORM: CONSTANT OF INTERVAL VELOCITY, M/S",
            "FMAX 45 HZ, DZ 5 M",
            &format!("MADE BY SEISIMAGE {} ON 20", env!("CARGO_PKG_VERSION")),
            "JOB FILE: history-job.toml",
        ] {
            assert!(text.contains(expected), "{product}: {expected:?} missing from\n{text}");
        }
    }
}
