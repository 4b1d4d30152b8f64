//! `seisimage info --headers-range`: every trace header field's range over a whole SEG-Y file, on headers
//! the test writes itself (a field record number that cycles, written byte by byte), against the values it
//! wrote.

use crate::cli_common::{model, run, samples, write_segy};

#[test]
fn headers_range_surveys_every_field_over_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let m = model(40, 30, 20);
    let path = dir.path().join("survey.sgy");
    write_segy(&path, &m, &samples(&m));
    let mut bytes = std::fs::read(&path).unwrap();
    let trace_size = 240 + 20 * 4;
    let big = bytes[3600 + 4..3600 + 8] == [0, 0, 0, 1];
    // Bytes 9-12 (field record number): -5, -2, 1, ..., 13 over and over: 7 distinct values.
    for t in 0..1200 {
        let at = 3600 + t * trace_size + 8;
        let v = (t % 7) as i32 * 3 - 5;
        bytes[at..at + 4].copy_from_slice(&if big { v.to_be_bytes() } else { v.to_le_bytes() });
    }
    std::fs::write(&path, bytes).unwrap();

    let o = run(&["info", "--headers-range", "--json", path.to_str().unwrap()]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    let json: serde_json::Value = serde_json::from_str(&o.stdout).unwrap();
    assert_eq!(json["traces"], 1200);
    let field = |byte: u64| json["fields"].as_array().unwrap().iter().find(|f| f["byte"] == byte).cloned();
    let range = |byte: u64| {
        let f = field(byte).unwrap_or_else(|| panic!("no field at byte {byte}: {}", o.stdout));
        (
            f["min"].as_i64().unwrap(),
            f["max"].as_i64().unwrap(),
            f["distinct"].as_u64().unwrap(),
            f["distinct_capped"] == true,
        )
    };
    assert_eq!(range(9), (-5, 13, 7, false));
    assert_eq!(range(189), (1, 40, 40, false));
    assert_eq!(range(193), (1, 30, 30, false));
    // 1200 trace numbers: more distinct values than are counted.
    assert_eq!(range(5), (1, 1200, 1000, true));
    assert_eq!(field(9).unwrap()["length"], 4);
    // Water depth (61-64) is zero on every trace: not listed.
    assert!(field(61).is_none(), "{}", o.stdout);

    let o = run(&["info", "--headers-range", path.to_str().unwrap()]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    let line = o.stdout.lines().find(|l| l.trim_start().starts_with("9-12")).unwrap();
    let words: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(words[words.len() - 3..], ["-5", "13", "7"], "{line}");
    let line = o.stdout.lines().find(|l| l.trim_start().starts_with("5-8")).unwrap();
    assert!(line.ends_with(">1000"), "{line}");
    assert!(o.stdout.contains("1200 traces"), "{}", o.stdout);
}
