//! Tests of the options, title templates and clip rules of the crate root.

use super::*;
use crate::quantity::ordinal;

#[test]
fn options_default_and_reject_unknown_fields() {
    let opts: RenderOptions = toml::from_str("colormap = \"gray\"\nclip_percentile = 98.5").unwrap();
    assert_eq!(opts, RenderOptions { colormap: Colormap::Gray, clip_percentile: 98.5, ..Default::default() });
    let err = toml::from_str::<RenderOptions>("clip_percentil = 98").unwrap_err().to_string();
    assert!(err.contains("clip_percentil"), "{err}");
    assert_eq!(toml::from_str::<RenderOptions>("").unwrap(), RenderOptions::default());
    let opts: RenderOptions = toml::from_str("clip = \"job\"\ndisplay = \"va\"\nagc_window = 250").unwrap();
    assert_eq!((opts.clip, opts.display, opts.agc_window), (ClipSetting::Job, Display::Va, Some(250.0)));
}

#[test]
fn validation_names_the_bad_option() {
    let cases = [
        RenderOptions { clip_percentile: 0.0, ..Default::default() },
        RenderOptions { clip_percentile: 100.5, ..Default::default() },
        RenderOptions { clip_percentile: f64::NAN, ..Default::default() },
        RenderOptions { clip: ClipSetting::Fixed(-1.0), ..Default::default() },
        RenderOptions { vertical_exaggeration: 0.0, ..Default::default() },
        RenderOptions { min_width: 0, ..Default::default() },
        RenderOptions { max_pixels: 0, ..Default::default() },
        RenderOptions { time_aspect_velocity: f64::INFINITY, ..Default::default() },
        RenderOptions { agc_window: Some(0.0), ..Default::default() },
        RenderOptions { title: Some("{product} at {depth}".into()), ..Default::default() },
    ];
    let names = [
        "clip_percentile",
        "clip_percentile",
        "clip_percentile",
        "clip",
        "vertical_exaggeration",
        "min_width",
        "max_pixels",
        "time_aspect_velocity",
        "agc_window",
        "title",
    ];
    for (opts, name) in cases.iter().zip(names) {
        let err = opts.validate().unwrap_err().to_string();
        assert!(err.contains(&format!("`{name}`")), "{err}");
    }
    assert!(RenderOptions::default().validate().is_ok());
    let fixed = RenderOptions { clip_percentile: 100.0, clip: ClipSetting::Fixed(3.0), ..Default::default() };
    assert!(fixed.validate().is_ok());
}

#[test]
fn title_templates_fill_their_fields() {
    let value = |f: &str| Some(format!("<{f}>"));
    assert_eq!(fill_template("{product} PSDM", &value).unwrap(), "<product> PSDM");
    assert_eq!(fill_template("{{literal}} {method}", &value).unwrap(), "{literal} <method>");
    assert_eq!(fill_template("no fields", &value).unwrap(), "no fields");
    assert!(fill_template("{product", &value).unwrap_err().contains("unclosed"));
    assert!(fill_template("{colour}", &value).unwrap_err().contains("{colour}"));
    assert!(fill_template("a } b", &value).is_err());
}

#[test]
fn clip_rules_say_where_the_clip_comes_from() {
    let q = Quantity::amplitude();
    let opts = RenderOptions::default();
    let data = [1.0f32, -2.0, 3.0, -4.0];
    let c = decide_clip(&[&data], &q, &opts, ClipScope::Kind, "over the 3 inline pictures of this run");
    let rule = c.rule(&q);
    assert!(rule.contains("99th percentile of |amplitude| over the 3 inline pictures"), "{rule}");
    assert!(rule.starts_with("Colour scale ±3.97"), "{rule}");
    let fixed = RenderOptions { clip: ClipSetting::Fixed(2.0), ..Default::default() };
    assert_eq!(decide_clip(&[&data], &q, &fixed, ClipScope::Kind, "").value, 2.0);
    let phase = Quantity {
        name: "phase".into(),
        unit: "°".into(),
        range: ValueRange::Fixed { lo: -180.0, hi: 180.0 },
        colormap: Some(Colormap::Phase),
        gain: false,
    };
    let c = decide_clip(&[&data], &phase, &opts, ClipScope::Picture, "in this picture");
    assert_eq!(c.range(&phase), (-180.0, 180.0));
    assert!(c.rule(&phase).contains("-180 to 180°"), "{}", c.rule(&phase));
    assert_eq!(ordinal(99.0), "99th");
    assert_eq!(ordinal(92.0), "92nd");
    assert_eq!(ordinal(99.5), "99.5th");
    assert_eq!(ordinal(11.0), "11th");
}

/// Vertical exaggeration stretches sections, not maps: a map slice is drawn the same size with it.
#[test]
fn vertical_exaggeration_stretches_sections_only() {
    let dir = tempfile::tempdir().unwrap();
    let data: Vec<f32> = (0..40 * 30).map(|i| ((i * 7) % 13) as f32 - 6.0).collect();
    let lateral = |name: &str, len| PlotAxis {
        name: name.into(),
        unit: String::new(),
        origin: 1.0,
        step: 1.0,
        len,
        spacing_m: Some(25.0),
    };
    let depth =
        PlotAxis { name: "depth".into(), unit: "m".into(), origin: 0.0, step: 10.0, len: 40, spacing_m: Some(10.0) };
    let size = |rows: PlotAxis, map: bool, ve: f64, name: &str| {
        let slice = Slice { data: &data, rows, cols: lateral("xline", 30) };
        let opts = RenderOptions { vertical_exaggeration: ve, ..Default::default() };
        let map = map.then(|| crate::MapView {
            transposed: false,
            rows_reversed: false,
            cols_reversed: false,
            north_deg: None,
            note: String::new(),
        });
        let info = PictureInfo { map, ..PictureInfo::amplitude(name) };
        let out = render_png_with(&dir.path().join(format!("{name}.png")), &slice, &opts, &info).unwrap();
        (out.width, out.height)
    };
    assert_ne!(size(depth.clone(), false, 1.0, "s1"), size(depth, false, 3.0, "s3"), "a section is stretched");
    assert_eq!(
        size(lateral("iline", 40), true, 1.0, "m1"),
        size(lateral("iline", 40), true, 3.0, "m3"),
        "a map is not"
    );
}
