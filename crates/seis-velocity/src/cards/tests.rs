use std::collections::{BTreeSet, HashMap};

use super::*;
use crate::{Loaded, VelocityModel, VelocitySpec};
use seis_core::error::{Error, Result};
use seis_core::volume::{CoordTransform, Domain, Geometry, LineAxis, SampleAxis};
use seis_io::segy::cdps::CdpLines;

/// A HANDVEL export as ProMAX writes one, with what hands and other tools add: a title, comments, blank
/// lines, pairs over several lines (one split between two), lower case, commas.
const HANDVEL: &str = "\
Velocity export, line 7       RMS (ms, m/s)
# exported by hand
HANDVEL 101
       0      1500     400      1800      800
    2100    1200      2400

handvel 117   # the next analysis
0, 1550
400, 1850 800 2150
";

#[test]
fn handvel_cards_read_several_functions_over_continuation_lines() {
    let f = parse_cards(HANDVEL.as_bytes(), CardFormat::Handvel).unwrap();
    assert_eq!(f.len(), 2);
    assert_eq!((f[0].line, f[0].cdp, f[0].xy), (3, Some(101), None));
    let pairs = |f: &CardFunction| f.picks.iter().map(|p| (p.time, p.velocity)).collect::<Vec<_>>();
    assert_eq!(pairs(&f[0]), [(0.0, 1500.0), (400.0, 1800.0), (800.0, 2100.0), (1200.0, 2400.0)]);
    // A pick is at the line of its time: 800 ends line 4, its velocity begins line 5.
    assert_eq!(f[0].picks.iter().map(|p| p.line).collect::<Vec<_>>(), [4, 4, 4, 5]);
    assert_eq!((f[1].cdp, pairs(&f[1])), (Some(117), vec![(0.0, 1550.0), (400.0, 1850.0), (800.0, 2150.0)]));
    let xy = parse_cards(b"HANDVEL 5 550000.5 6200000\n0 1500\n", CardFormat::Handvel).unwrap();
    assert_eq!(xy[0].xy, Some([550000.5, 6200000.0]));
}

/// VELF as Western-style exports hold it: a line name and coordinates on the SPNT card, VELF cards of up
/// to five pairs, the first with the CDP, the next continuing; and VELF cards with no SPNT card.
const VELF: &str = "\
C  STACKING VELOCITIES  LINE L7
SPNT  L7        101      550000.0  6200000.0
VELF        101    0  1500  400  1800  800  2100 1200  2400 1600  2700
VELF             2000  3000
SPNT  L7        117      550100.0  6200000.0
VELF        117    0  1550  400  1850
VELF        133    0  1600  900  2000
";

#[test]
fn velf_cards_read_spnt_locations_and_continuation_cards() {
    let f = parse_cards(VELF.as_bytes(), CardFormat::Velf).unwrap();
    assert_eq!(f.len(), 3);
    assert_eq!((f[0].line, f[0].cdp, f[0].xy), (2, Some(101), Some([550000.0, 6200000.0])));
    assert_eq!(f[0].picks.len(), 6);
    assert_eq!((f[0].picks[5].time, f[0].picks[5].velocity, f[0].picks[5].line), (2000.0, 3000.0, 4));
    assert_eq!((f[1].cdp, f[1].xy.is_some(), f[1].picks.len()), (Some(117), true, 2));
    assert_eq!((f[2].line, f[2].cdp, f[2].xy, f[2].picks.len()), (7, Some(133), None, 2));
}

#[test]
fn malformed_cards_are_refused_naming_the_line() {
    let refused = |text: &str, format| parse_cards(text.as_bytes(), format).unwrap_err();
    let e = refused("HANDVEL 1\n0 1500 400\nHANDVEL 2\n0 1500\n", CardFormat::Handvel);
    assert!(e.starts_with("line 2: time 400 of CDP 1 (line 1) has no velocity"), "{e}");
    let e = refused("0 1500\nHANDVEL 1\n0 1500\n", CardFormat::Handvel);
    assert!(e.starts_with("line 1: numbers before the first HANDVEL card"), "{e}");
    let e = refused("HANDVEL 1 2\n0 1500\n", CardFormat::Handvel);
    assert!(e.starts_with("line 1: a HANDVEL card gives the CDP"), "{e}");
    let e = refused("HANDVEL 1\n0 fast\n", CardFormat::Handvel);
    assert!(e.starts_with("line 2: \"fast\" is not a number"), "{e}");
    let e = refused("HANDVEL 1.5\n0 1500\n", CardFormat::Handvel);
    assert!(e.starts_with("line 1: CDP 1.5 is not a whole number"), "{e}");
    let e = refused("HANDVEL 1\nHANDVEL 2\n0 1500\n", CardFormat::Handvel);
    assert!(e.starts_with("line 1: CDP 1 (line 1) has no time-velocity pairs"), "{e}");
    assert!(refused("# nothing\n", CardFormat::Handvel).contains("no HANDVEL cards"));
    let e = refused("VELF 0 1500\n", CardFormat::Velf);
    assert!(e.starts_with("line 1: a VELF card of time-velocity pairs before any SPNT"), "{e}");
    let e = refused("SPNT 1\nVELF 0 1500\n400 1800\n", CardFormat::Velf);
    assert!(e.starts_with("line 3: numbers outside a VELF card"), "{e}");
    // HANDVEL cards in a file read as VELF are not functions.
    assert!(refused(HANDVEL, CardFormat::Velf).starts_with("line 4: numbers outside"));
}

fn seismic() -> Geometry {
    let t = SampleAxis { origin: 0.0, step: 4.0, len: 500, domain: Domain::Time };
    let mut g = Geometry::regular(LineAxis::new(10, 2, 11), LineAxis::new(100, 1, 8), t);
    g.coords = Some(CoordTransform { origin: [1000.0, 2000.0], per_iline: [0.0, 25.0], per_xline: [12.5, 0.0] });
    g
}

/// CDP numbers of the seismic's "headers": 5000 + 100 × inline + crossline.
fn headers(wanted: &BTreeSet<i64>) -> Result<CdpLines> {
    let g = seismic();
    let mut lines = HashMap::new();
    for i in 0..g.ilines.len {
        for j in 0..g.xlines.len {
            let (il, xl) = (g.ilines.value(i), g.xlines.value(j));
            if wanted.contains(&(5000 + 100 * il + xl)) {
                lines.insert(5000 + 100 * il + xl, vec![(il, xl)]);
            }
        }
    }
    Ok(CdpLines { lines, range: Some([6100, 8007]) })
}

fn load(velocity: &str, cards: &str) -> Result<Loaded> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("picks.txt");
    std::fs::write(&path, cards).unwrap();
    #[derive(serde::Deserialize)]
    struct T {
        velocity: VelocitySpec,
    }
    let text = format!("[velocity]\n{velocity}\npath = {path:?}");
    let spec = toml::from_str::<T>(&text).unwrap().velocity;
    spec.check()?;
    spec.load_with(&seismic(), [25.0, 12.5], 5.0, Some(&headers))
}

/// The same functions as `[[velocity.functions]]` tables at `places`.
fn inline_functions(places: &[(i64, i64)], picks: &[&[(f64, f64)]], kind: &str) -> VelocityModel {
    let mut text = format!("kind = \"functions\"\ntype = \"{kind}\"\n");
    for (&(il, xl), p) in places.iter().zip(picks) {
        let (t, v): (Vec<f64>, Vec<f64>) = p.iter().copied().unzip();
        text += &format!("[[velocity.functions]]\niline = {il}\nxline = {xl}\ntimes = {t:?}\nvelocities = {v:?}\n");
    }
    #[derive(serde::Deserialize)]
    struct T {
        velocity: VelocitySpec,
    }
    let spec = toml::from_str::<T>(&format!("[velocity]\n{text}")).unwrap().velocity;
    spec.check().unwrap();
    spec.load(&seismic(), [25.0, 12.5], 5.0).unwrap().model
}

const A: &[(f64, f64)] = &[(0.0, 1500.0), (400.0, 1800.0), (800.0, 2100.0), (1200.0, 2400.0)];
const B: &[(f64, f64)] = &[(0.0, 1550.0), (400.0, 1850.0), (800.0, 2150.0)];

#[test]
fn cards_placed_by_cdp_headers_are_rms_unless_the_type_says_otherwise() {
    // HANDVEL 101 and 117 at the CDPs of inline 10, crossline 101 and inline 30, crossline 107.
    let cards = HANDVEL.replace("HANDVEL 101", "HANDVEL 6101").replace("handvel 117", "handvel 8107");
    let places = [(10, 101), (30, 107)];
    let m = load("kind = \"functions\"\nformat = \"handvel\"", &cards).unwrap();
    assert_eq!(m.model, inline_functions(&places, &[A, B], "rms"));
    assert!(m.provenance.steps[0].contains("HANDVEL cards, placed by the CDP numbers"), "{:?}", m.provenance.steps);
    let m = load("kind = \"functions\"\nformat = \"handvel\"\ntype = \"interval\"", &cards).unwrap();
    assert_eq!(m.model, inline_functions(&places, &[A, B], "interval"));
    assert_ne!(m.model, inline_functions(&places, &[A, B], "rms"));
}

#[test]
fn cards_placed_by_a_cdp_origin_or_by_coordinates() {
    // CDP 1 at inline 10, crossline 100, 8 crosslines an inline: CDP 61 is 7 inlines on (inline 24) and 4
    // crosslines on (crossline 104), CDP 2 the next crossline.
    let cards = HANDVEL.replace("HANDVEL 101", "HANDVEL 61").replace("handvel 117", "handvel 2");
    let origin = "kind = \"functions\"\nformat = \"handvel\"\ncdp_origin = [1, 10, 100]";
    let m = load(origin, &cards).unwrap();
    assert_eq!(m.model, inline_functions(&[(24, 104), (10, 101)], &[A, B], "rms"));
    // Numbered along crosslines, 11 inlines a crossline: CDP 61 is 5 inlines and 5 crosslines on.
    let m = load(&format!("{origin}\ncdp_step = [1, 11]"), &cards).unwrap();
    assert_eq!(m.model, inline_functions(&[(20, 105), (12, 100)], &[A, B], "rms"));
    // By x and y: inline 14 (y 2000 + 2 × 25), crossline 103 (x 1000 + 3 × 12.5), a few metres off.
    let cards =
        "HANDVEL 1 1040.0 2047.0\n0 1500 400 1800 800 2100 1200 2400\nHANDVEL 2 1000 2000\n0 1550 400 1850 800 2150\n";
    let m = load("kind = \"functions\"\nformat = \"handvel\"\nlocate = \"coordinates\"", cards).unwrap();
    assert_eq!(m.model, inline_functions(&[(14, 103), (10, 100)], &[A, B], "rms"));
    let e = load("kind = \"functions\"\nformat = \"handvel\"\nlocate = \"coordinates\"", "HANDVEL 1\n0 1500\n");
    assert!(e.err().unwrap().to_string().contains("line 1) gives no x and y"));
}

#[test]
fn a_cdp_the_seismic_lacks_and_times_that_do_not_increase_are_refused_with_their_line() {
    let cards = HANDVEL.replace("HANDVEL 101", "HANDVEL 6101").replace("handvel 117", "handvel 9999");
    let Error::Setting { key, message, .. } = load("kind = \"functions\"\nformat = \"handvel\"", &cards).err().unwrap()
    else {
        panic!("not a setting error")
    };
    assert_eq!(key, "velocity.path");
    assert!(message.contains("picks.txt: CDP 9999 (line 7) is not a trace of the seismic"), "{message}");
    assert!(message.contains("run 6100..=8007"), "{message}");
    let cards = "SPNT L1 6101\nVELF 6101 0 1500 800 1800\nVELF 600 2000\n";
    let e = load("kind = \"functions\"\nformat = \"velf\"", cards).err().unwrap().to_string();
    assert!(e.contains("line 3 (CDP 6101, 600 ms) must be later than line 2 (CDP 6101, 800 ms)"), "{e}");
}

#[test]
fn card_keys_are_checked_before_any_file_is_read() {
    let refused = |text: &str| load(text, "HANDVEL 6101\n0 1500\n").err().unwrap().to_string();
    assert!(refused("kind = \"functions\"\nformat = \"handvel\"\ndomain = \"depth\"").contains("velocity.domain"));
    assert!(
        refused("kind = \"functions\"\ndomain = \"time\"\ncdp_origin = [1, 10, 100]").contains("velocity.cdp_origin")
    );
    assert!(refused("kind = \"functions\"\nformat = \"velf\"\ncdp_step = [8, 1]").contains("velocity.cdp_step"));
    assert!(refused("kind = \"functions\"\ndomain = \"time\"\nlocate = \"coordinates\"").contains("velocity.locate"));
    assert!(refused("kind = \"table\"\ndomain = \"time\"\nformat = \"handvel\"").contains("velocity.format"));
    let e = refused("kind = \"functions\"\nformat = \"handvel\"\ncdp_origin = [1, 11, 100]");
    assert!(e.contains("inline 11 is not on the seismic's inlines (10, every 2)"), "{e}");
    seis_core::choice::assert_names_match_serde::<CardFormat>();
}
