//! `convert --crs` from SEG-Y to SEG-Y keeps the input's text header and records the CRS on one of its
//! cards, in the header's own encoding (ASCII or EBCDIC) and card numbering; the traces are copied as they
//! were.

use std::path::Path;

use crate::cli_common::{model, run, samples, write_segy};
use crate::python::python_json;

const CRS_LINE: &str = "CRS OF CDP X/Y: EPSG:23031";

const SEGY_TEXT: &str = r#"
import json, sys
import segyio
with segyio.open(sys.argv[1], "r", ignore_geometry=True) as f:
    print(json.dumps({"text": segyio.tools.wrap(f.text[0])}))
"#;

/// EBCDIC (code page 037) of the characters these cards use.
fn ebcdic(c: char) -> u8 {
    match c {
        ' ' => 0x40,
        '.' => 0x4B,
        '(' => 0x4D,
        ')' => 0x5D,
        '-' => 0x60,
        '/' => 0x61,
        ':' => 0x7A,
        'A'..='I' => 0xC1 + (c as u8 - b'A'),
        'J'..='R' => 0xD1 + (c as u8 - b'J'),
        'S'..='Z' => 0xE2 + (c as u8 - b'S'),
        '0'..='9' => 0xF0 + (c as u8 - b'0'),
        _ => panic!("no EBCDIC for {c:?} in this test"),
    }
}

/// 40 cards of 80 columns, blank-padded, in ASCII or EBCDIC.
fn text_header(cards: &[String], in_ebcdic: bool) -> Vec<u8> {
    assert_eq!(cards.len(), 40);
    let encode = |c: char| if in_ebcdic { ebcdic(c) } else { c as u8 };
    cards.iter().flat_map(|card| format!("{card:<80}").chars().map(encode).collect::<Vec<_>>()).collect()
}

/// Convert `input` (whose text header is `cards`) to SEG-Y with `--crs EPSG:23031`, check that the output's
/// text header is the input's with card `crs_card` (1-based) holding the CRS line and that the traces are
/// the input's, and return the command's stderr.
fn convert_with_crs(dir: &Path, name: &str, cards: &[String], in_ebcdic: bool, crs_card: usize) -> String {
    let m = model(3, 4, 30);
    let input = dir.join(format!("{name}.sgy"));
    write_segy(&input, &m, &samples(&m));
    let mut bytes = std::fs::read(&input).unwrap();
    bytes[..3200].copy_from_slice(&text_header(cards, in_ebcdic));
    std::fs::write(&input, &bytes).unwrap();

    let output = dir.join(format!("{name}-crs.sgy"));
    let o = run(&["convert", input.to_str().unwrap(), output.to_str().unwrap(), "--crs", "EPSG:23031"]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    let written = std::fs::read(&output).unwrap();

    let mut expected = cards.to_vec();
    expected[crs_card - 1] = format!("{} {CRS_LINE}", &cards[crs_card - 1][..3]);
    assert_eq!(
        String::from_utf8_lossy(&written[..3200]),
        String::from_utf8_lossy(&text_header(&expected, in_ebcdic)),
        "{name}: the text header should be the input's with card {crs_card} recording the CRS"
    );
    assert_eq!(written.len(), bytes.len(), "{name}: the output's size");
    assert!(written[3200..] == bytes[3200..], "{name}: the binary header or the traces changed");

    // segyio reads every text header as EBCDIC.
    let by_segyio = if in_ebcdic { python_json("segyio", SEGY_TEXT, &[output.as_os_str()]) } else { None };
    if let Some(v) = by_segyio {
        let text = v["text"].as_str().unwrap();
        assert!(text.contains(&format!("{} {CRS_LINE}", &cards[crs_card - 1][..3])), "{text}");
        assert!(text.contains(cards[0].as_str()), "{text}");
    }
    o.stderr
}

/// An ASCII header with blank cards: the CRS goes on the first of them, silently.
#[test]
fn convert_crs_puts_the_crs_on_the_first_blank_card_of_an_ascii_text_header() {
    let dir = tempfile::tempdir().unwrap();
    let mut cards: Vec<String> = (1..=40).map(|n| format!("C{n:>2}")).collect();
    cards[0] = "C 1 CLIENT: NONE. AREA: SYNTHETIC (3 X 4 TRACES)".into();
    cards[1] = "C 2 SURVEY DATUM: MEAN SEA LEVEL".into();
    cards[3] = "C 4 PROCESSING: NONE".into();
    cards[39] = "C40 END TEXTUAL HEADER".into();
    let stderr = convert_with_crs(dir.path(), "ascii", &cards, false, 3);
    assert!(!stderr.contains("card 3"), "no card held text: nothing to warn of\n{stderr}");
}

/// An EBCDIC header with text on every card: the card before `END EBCDIC` gives way, with a warning
/// naming it.
#[test]
fn convert_crs_replaces_the_card_before_the_end_of_a_full_ebcdic_text_header() {
    let dir = tempfile::tempdir().unwrap();
    let mut cards: Vec<String> = (1..=40).map(|n| format!("C{n:>2} LINE {n} OF THE INPUT")).collect();
    cards[39] = "C40 END EBCDIC".into();
    let stderr = convert_with_crs(dir.path(), "ebcdic", &cards, true, 39);
    assert!(stderr.contains("card 39") && stderr.contains("LINE 39 OF THE INPUT"), "{stderr}");
}
