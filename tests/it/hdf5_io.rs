//! HDF5 volumes: round trips through our writer and reader, boxes read by hyperslab, files laid out by
//! others (built here with the HDF5 library directly), and the errors bad files must give.
//!
//! Values come from `value(i, j, k)`, exact in f32, so every comparison is exact.

use std::path::{Path, PathBuf};

use hdf5::types::VarLenUnicode;
use proptest::prelude::*;
use seisimage::io::hdf5::{
    write_volume, AxisSource, Hdf5Options, Hdf5Reader, Hdf5WriteOptions, Hdf5Writer, DEFAULT_DATASET,
    ONE_CHUNK_MAX_BYTES,
};
use seisimage::volume::{CoordTransform, Domain, Geometry, IndexBox, LineAxis, SampleAxis, Volume, VolumeReader};
use seisimage::Error;

fn value(i: usize, j: usize, k: usize) -> f32 {
    (i * 10_000 + j * 100 + k) as f32 * 0.25 - 500.0
}

/// A volume filled from `value`, with zeros in the traces the geometry marks missing.
fn filled(geometry: Geometry) -> Volume {
    let [ni, nj, nk] = geometry.shape();
    let mut data = Vec::with_capacity(geometry.n_values());
    for i in 0..ni {
        for j in 0..nj {
            let live = geometry.live[i * nj + j];
            data.extend((0..nk).map(|k| if live { value(i, j, k) } else { 0.0 }));
        }
    }
    Volume { geometry, data }
}

fn time_geometry() -> Geometry {
    Geometry::regular(
        LineAxis::new(100, 2, 5),
        LineAxis::new(20, 1, 7),
        SampleAxis { origin: 4.0, step: 4.0, len: 11, domain: Domain::Time },
    )
}

/// Depth, coordinates, three missing traces.
fn depth_geometry() -> Geometry {
    let mut g = Geometry::regular(
        LineAxis::new(1, 1, 4),
        LineAxis::new(1000, 5, 6),
        SampleAxis { origin: 250.0, step: 12.5, len: 9, domain: Domain::Depth },
    );
    g.coords =
        Some(CoordTransform { origin: [605_835.5, 6_073_556.25], per_iline: [0.0, 25.0], per_xline: [25.0, 0.0] });
    for t in [0, 7, 23] {
        g.live[t] = false;
    }
    g
}

fn read_back(path: &Path, dataset: &str) -> (Hdf5Reader, Volume) {
    let reader = Hdf5Reader::open(path, &Hdf5Options { dataset: dataset.into() }).unwrap();
    let volume = Volume::read(&reader).unwrap();
    (reader, volume)
}

fn message(e: Error) -> String {
    e.to_string()
}

/// Without a chunk shape, a volume of up to ONE_CHUNK_MAX_BYTES of values is one chunk; a larger one is cut
/// into 64³ cubes (clipped to its shape); both read back whole.
#[test]
fn small_volumes_are_one_chunk_and_larger_ones_cubes() {
    let dir = tempfile::tempdir().unwrap();
    let samples = |len| SampleAxis { origin: 0.0, step: 4.0, len, domain: Domain::Time };
    // 64 × 64 × 1024 float32 = 16 MiB exactly; one sample more per trace is over.
    for (len, chunk) in [(1024, vec![64, 64, 1024]), (1025, vec![64, 64, 64])] {
        let g = Geometry::regular(LineAxis::new(1, 1, 64), LineAxis::new(1, 1, 64), samples(len));
        assert_eq!(g.n_values() * 4 <= ONE_CHUNK_MAX_BYTES, len == 1024);
        let v = filled(g);
        let path = dir.path().join(format!("v{len}.h5"));
        write_volume(&path, &v.geometry, &v.data, &Hdf5WriteOptions::default()).unwrap();
        let (reader, back) = read_back(&path, DEFAULT_DATASET);
        assert_eq!(reader.summary().chunk, Some(chunk), "{len} samples");
        assert_eq!(back.data, v.data, "{len} samples");
    }
}

#[test]
fn time_volume_round_trips_uncompressed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("time.h5");
    let v = filled(time_geometry());
    assert_eq!(write_volume(&path, &v.geometry, &v.data, &Hdf5WriteOptions::default()).unwrap(), path);

    let (reader, back) = read_back(&path, DEFAULT_DATASET);
    assert_eq!(back.geometry, v.geometry);
    assert_eq!(back.data, v.data);
    let s = reader.summary();
    assert_eq!(s.dataset, "/seismic");
    assert_eq!(s.dtype, "float32");
    assert_eq!(s.shape, [5, 7, 11]);
    assert_eq!(s.chunk, Some(vec![5, 7, 11]), "a small volume is one chunk");
    assert!(s.filters.is_empty());
    assert_eq!(s.iline.source, AxisSource::Dataset("/iline".into()));
    assert_eq!(s.xline.source, AxisSource::Dataset("/xline".into()));
    assert_eq!((s.sample.name, s.sample.unit), ("twt", Some("ms")));
    assert_eq!(s.sample.source, AxisSource::Dataset("/twt".into()));
    assert_eq!((s.live_mask, s.missing_traces), (None, 0));
    assert!(s.notes.is_empty(), "{:?}", s.notes);
    let names: Vec<&str> = s.attributes.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        [
            "domain",
            "iline_first",
            "iline_step",
            "sample_origin",
            "sample_step",
            "sample_unit",
            "xline_first",
            "xline_step"
        ]
    );
    assert_eq!(s.attributes["domain"], "time");
    assert_eq!(s.attributes["iline_step"], 2);
    assert_eq!(s.attributes["sample_step"], 4.0);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "no temporary file is left");
}

#[test]
fn depth_volume_with_missing_traces_coordinates_and_compression_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("depth.h5");
    let v = filled(depth_geometry());
    let opts = Hdf5WriteOptions {
        dataset: "/volumes/migrated".into(),
        chunk: Some([3, 4, 5]),
        compression: Some(6),
        crs: None,
    };
    write_volume(&path, &v.geometry, &v.data, &opts).unwrap();

    let (reader, back) = read_back(&path, "volumes/migrated");
    assert_eq!(back.geometry, v.geometry, "axes, coordinates and live mask survive");
    assert_eq!(back.data, v.data);
    let s = reader.summary();
    assert_eq!(s.chunk, Some(vec![3, 4, 5]));
    assert_eq!(s.filters, ["shuffle", "deflate (level 6)"]);
    assert_eq!(s.sample.source, AxisSource::Dataset("/volumes/depth".into()));
    assert_eq!(s.live_mask.as_deref(), Some("/volumes/live"));
    assert_eq!(s.missing_traces, 3);
    assert_eq!(s.coords, v.geometry.coords);
}

#[test]
fn single_line_and_single_sample_axes_keep_their_steps() {
    // A one-value axis dataset has no step; the attributes written beside it keep it.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("slice.h5");
    let g = Geometry::regular(
        LineAxis::new(37, 3, 1),
        LineAxis::new(5, 4, 3),
        SampleAxis { origin: 1200.0, step: 2.0, len: 1, domain: Domain::Time },
    );
    let v = filled(g);
    write_volume(&path, &v.geometry, &v.data, &Hdf5WriteOptions::default()).unwrap();
    let (_, back) = read_back(&path, DEFAULT_DATASET);
    assert_eq!(back.geometry, v.geometry);
    assert_eq!(back.data, v.data);
}

/// One file, odd shape and odd chunks, shared by the cases of the property below.
fn boxes_fixture() -> &'static (tempfile::TempDir, PathBuf, Volume) {
    static FIXTURE: std::sync::OnceLock<(tempfile::TempDir, PathBuf, Volume)> = std::sync::OnceLock::new();
    FIXTURE.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("boxes.h5");
        let v = filled(Geometry::regular(
            LineAxis::new(1, 1, 9),
            LineAxis::new(1, 1, 13),
            SampleAxis { origin: 0.0, step: 2.0, len: 17, domain: Domain::Time },
        ));
        let opts = Hdf5WriteOptions { chunk: Some([4, 5, 6]), compression: Some(1), ..Default::default() };
        write_volume(&path, &v.geometry, &v.data, &opts).unwrap();
        (dir, path, v)
    })
}

fn range_in(n: usize) -> impl Strategy<Value = std::ops::Range<usize>> {
    (0..n).prop_flat_map(move |a| (Just(a), a + 1..=n)).prop_map(|(a, b)| a..b)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn boxes_read_by_hyperslab_equal_the_same_boxes_cut_in_memory(
        il in range_in(9), xl in range_in(13), s in range_in(17)
    ) {
        let (_, path, v) = boxes_fixture();
        let reader = Hdf5Reader::open(path, &Hdf5Options::default()).unwrap();
        let b = IndexBox { il, xl, s };
        let mut out = vec![f32::NAN; b.len()];
        reader.read_box(&b, &mut out).unwrap();
        prop_assert_eq!(out, v.cut(&b).data);
    }
}

#[test]
fn read_box_refuses_boxes_outside_the_volume_and_wrong_buffers() {
    let (_, path, _) = boxes_fixture();
    let reader = Hdf5Reader::open(path, &Hdf5Options::default()).unwrap();
    let outside = IndexBox { il: 8..10, xl: 0..1, s: 0..1 };
    assert!(matches!(reader.read_box(&outside, &mut [0.0; 2]), Err(Error::Request(_))));
    let b = IndexBox { il: 0..2, xl: 0..2, s: 0..2 };
    assert!(matches!(reader.read_box(&b, &mut [0.0; 7]), Err(Error::Request(_))));
}

#[test]
fn streaming_writer_assembles_boxes_and_publishes_only_on_finish() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("stream.h5");
    let v = filled(depth_geometry());
    let [ni, nj, nk] = v.geometry.shape();
    // Compressed (through HDF5's chunk cache) and not (a volume this small is one chunk, written around
    // the cache): boxes that are not whole inlines land in place either way.
    for compression in [Some(2), None] {
        let opts = Hdf5WriteOptions { compression, ..Default::default() };
        let mut w = Hdf5Writer::create(&path, &v.geometry, &opts).unwrap();
        assert!(!path.exists(), "nothing appears under the final name before finish");
        // Inline slabs of 3 (the last one short), each written as two sample ranges.
        for il in (0..ni).step_by(3) {
            for s in [0..4, 4..nk] {
                let b = IndexBox { il: il..(il + 3).min(ni), xl: 0..nj, s };
                w.write_box(&b, &v.cut(&b).data).unwrap();
            }
        }
        assert!(matches!(w.write_box(&IndexBox { il: 0..1, xl: 0..1, s: 0..2 }, &[0.0]), Err(Error::Request(_))));
        assert!(matches!(w.write_box(&IndexBox { il: 0..1, xl: 0..7, s: 0..1 }, &[0.0; 7]), Err(Error::Request(_))));
        w.finish().unwrap();
        let (_, back) = read_back(&path, DEFAULT_DATASET);
        assert_eq!(back.data, v.data, "compression {compression:?}");
        std::fs::remove_file(&path).unwrap();
    }
    let opts = Hdf5WriteOptions { compression: Some(2), ..Default::default() };

    let abandoned = dir.path().join("abandoned.h5");
    let mut w = Hdf5Writer::create(&abandoned, &v.geometry, &opts).unwrap();
    w.write_box(&IndexBox { il: 0..1, xl: 0..nj, s: 0..nk }, &v.data[..nj * nk]).unwrap();
    drop(w);
    let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(names.is_empty(), "an unfinished writer leaves nothing: {names:?}");
}

#[test]
fn writer_refuses_bad_requests_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.h5");
    let v = filled(time_geometry());
    let short = write_volume(&path, &v.geometry, &v.data[1..], &Hdf5WriteOptions::default()).unwrap_err();
    assert!(message(short).contains("values given"));
    for opts in [
        Hdf5WriteOptions { compression: Some(10), ..Default::default() },
        Hdf5WriteOptions { chunk: Some([4, 0, 4]), ..Default::default() },
        Hdf5WriteOptions { dataset: "/iline".into(), ..Default::default() },
        Hdf5WriteOptions { dataset: "/a//b".into(), ..Default::default() },
    ] {
        assert!(write_volume(&path, &v.geometry, &v.data, &opts).is_err(), "{opts:?} must be refused");
    }
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

// ---- files laid out by others, built with the HDF5 library directly ----

fn text_attr(loc: &hdf5::Location, name: &str, value: &str) {
    let value: VarLenUnicode = value.parse().unwrap();
    loc.new_attr::<VarLenUnicode>().create(name).unwrap().write_scalar(&value).unwrap();
}

fn number_attr<T: hdf5::H5Type>(loc: &hdf5::Location, name: &str, value: T) {
    loc.new_attr::<T>().create(name).unwrap().write_scalar(&value).unwrap();
}

/// A 3-D dataset of `T` at `name`, holding `value` rounded to `T`.
fn foreign_volume<T: hdf5::H5Type + Copy>(
    file: &hdf5::File,
    name: &str,
    shape: [usize; 3],
    cast: impl Fn(f32) -> T,
) -> hdf5::Dataset {
    let data: Vec<T> = (0..shape[0])
        .flat_map(|i| (0..shape[1]).flat_map(move |j| (0..shape[2]).map(move |k| value(i, j, k))))
        .map(cast)
        .collect();
    let ds = file.new_dataset::<T>().shape(shape).create(name).unwrap();
    ds.write_raw(&data).unwrap();
    ds
}

#[test]
fn axes_from_attributes_on_the_file_and_integer_samples_are_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("attrs.h5");
    {
        let f = hdf5::File::create(&path).unwrap();
        foreign_volume(&f, "cube", [3, 4, 5], |x| (x * 4.0) as i32);
        // On the file's root group, which holds the dataset; the sample axis in seconds.
        number_attr(&f, "iline_first", 300i16);
        number_attr(&f, "iline_step", 4i16);
        number_attr(&f, "xline_first", 1.0f64);
        number_attr(&f, "xline_step", 2.0f64);
        number_attr(&f, "sample_origin", 0.1f64);
        number_attr(&f, "sample_step", 0.002f32);
        text_attr(&f, "sample_unit", "s");
    }
    let reader = Hdf5Reader::open(&path, &Hdf5Options { dataset: "/cube".into() }).unwrap();
    let g = reader.geometry();
    assert_eq!(g.ilines, LineAxis::new(300, 4, 3));
    assert_eq!(g.xlines, LineAxis::new(1, 2, 4));
    assert_eq!((g.samples.domain, g.samples.len), (Domain::Time, 5));
    assert!((g.samples.origin - 100.0).abs() < 1e-9);
    assert!((g.samples.step - 2.0).abs() < 1e-6, "f32 0.002 s is 2 ms within f32 rounding");
    let s = reader.summary();
    assert_eq!(s.dtype, "int32");
    assert_eq!(s.iline.source, AxisSource::Attributes(vec!["iline_first".into(), "iline_step".into()]));
    let v = Volume::read(&reader).unwrap();
    let expected: Vec<f32> = filled(g.clone()).data.iter().map(|x| x * 4.0).collect();
    assert_eq!(v.data, expected);
}

#[test]
fn companion_datasets_of_other_types_and_units_are_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("companions.h5");
    {
        let f = hdf5::File::create(&path).unwrap();
        let g = f.create_group("survey").unwrap();
        let ds = foreign_volume(&f, "survey/amplitude", [2, 3, 4], |x| x as f64);
        text_attr(&ds, "domain", "depth");
        g.new_dataset_builder().with_data(&[10u16, 11]).create("iline").unwrap();
        g.new_dataset_builder().with_data(&[-4i32, -2, 0]).create("xline").unwrap();
        let depth = g.new_dataset_builder().with_data(&[1.5f32, 1.525, 1.55, 1.575]).create("depth").unwrap();
        text_attr(&depth, "units", "km");
        g.new_dataset::<i32>().shape([2, 3]).create("live").unwrap().write_raw(&[1, 1, 0, 1, 1, 1]).unwrap();
    }
    let reader = Hdf5Reader::open(&path, &Hdf5Options { dataset: "/survey/amplitude".into() }).unwrap();
    let g = reader.geometry();
    assert_eq!(g.ilines, LineAxis::new(10, 1, 2));
    assert_eq!(g.xlines, LineAxis::new(-4, 2, 3));
    assert_eq!(g.samples.domain, Domain::Depth);
    assert!((g.samples.origin - 1500.0).abs() < 1e-3 && (g.samples.step - 25.0).abs() < 1e-3);
    assert_eq!(g.live, [true, true, false, true, true, true]);
    assert_eq!(reader.summary().dtype, "float64");
    let v = Volume::read(&reader).unwrap();
    let expected: Vec<f32> =
        (0..2).flat_map(|i| (0..3).flat_map(move |j| (0..4).map(move |k| value(i, j, k)))).collect();
    assert_eq!(v.data, expected, "the stored values, dead trace included, read as they are");
}

#[test]
fn a_volume_without_axes_gets_indices_and_warnings() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bare.h5");
    foreign_volume(&hdf5::File::create(&path).unwrap(), "seismic", [2, 2, 3], |x| x);
    let reader = Hdf5Reader::open(&path, &Hdf5Options::default()).unwrap();
    let g = reader.geometry();
    assert_eq!((g.ilines, g.xlines), (LineAxis::new(1, 1, 2), LineAxis::new(1, 1, 2)));
    assert_eq!(g.samples, SampleAxis { origin: 0.0, step: 1.0, len: 3, domain: Domain::Time });
    let s = reader.summary();
    assert_eq!([&s.iline.source, &s.xline.source, &s.sample.source], [&AxisSource::Index; 3]);
    assert_eq!(s.notes.len(), 3, "{:?}", s.notes);
    assert!(s.notes[0].contains("no iline axis found"), "{}", s.notes[0]);
}

// ---- errors ----

fn open_error(path: &Path, dataset: &str) -> String {
    match Hdf5Reader::open(path, &Hdf5Options { dataset: dataset.into() }) {
        Ok(_) => panic!("{} opened", path.display()),
        Err(e) => message(e),
    }
}

#[test]
fn a_missing_dataset_lists_the_volumes_the_file_has() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("other.h5");
    {
        let f = hdf5::File::create(&path).unwrap();
        f.create_group("a").unwrap();
        foreign_volume(&f, "a/cube", [2, 2, 2], |x| x);
        foreign_volume(&f, "stack", [1, 2, 2], |x| x);
        f.new_dataset::<f32>().shape([4, 4]).create("plane").unwrap();
    }
    let e = open_error(&path, DEFAULT_DATASET);
    assert!(e.contains(&path.display().to_string()), "{e}");
    assert!(e.contains("no dataset /seismic") && e.contains("/a/cube") && e.contains("/stack"), "{e}");
    assert!(!e.contains("plane"), "2-D datasets are not offered: {e}");
    let e = open_error(&path, "/plane");
    assert!(e.contains("/plane has 2 dimensions"), "{e}");
    let e = open_error(&path, "/a");
    assert!(e.contains("/a is a group, not a dataset"), "{e}");
    let empty = dir.path().join("empty.h5");
    hdf5::File::create(&empty).unwrap();
    assert!(open_error(&empty, DEFAULT_DATASET).contains("the file holds no 3-D dataset"));
}

/// A time volume written by us, then changed by `edit` before it is opened.
fn edited(dir: &Path, edit: impl FnOnce(&hdf5::File)) -> PathBuf {
    let path = dir.join("edited.h5");
    let v = filled(time_geometry());
    write_volume(&path, &v.geometry, &v.data, &Hdf5WriteOptions::default()).unwrap();
    edit(&hdf5::File::open_rw(&path).unwrap());
    path
}

#[test]
fn inconsistent_axes_are_errors_naming_the_dataset() {
    type Edit = Box<dyn FnOnce(&hdf5::File)>;
    let cases: [(&str, Edit, &[&str]); 6] = [
        (
            "axis length mismatch",
            Box::new(|f| {
                f.unlink("iline").unwrap();
                f.new_dataset_builder().with_data(&[1i64, 2, 3, 4]).create("iline").unwrap();
            }),
            &["/iline has shape [4] where [5] was expected (the inlines of dataset /seismic)"],
        ),
        (
            "irregular line numbers",
            Box::new(|f| f.dataset("iline").unwrap().write_raw(&[100i64, 102, 104, 107, 108]).unwrap()),
            &["/iline is not evenly spaced", "value 3 is 107"],
        ),
        (
            "descending line numbers",
            Box::new(|f| f.dataset("xline").unwrap().write_raw(&[26i64, 25, 24, 23, 22, 21, 20]).unwrap()),
            &["/xline must increase"],
        ),
        (
            "attribute disagreeing with the axis dataset",
            Box::new(|f| f.dataset("seismic").unwrap().attr("iline_step").unwrap().write_scalar(&3i64).unwrap()),
            &["iline axis of /seismic is described twice", "dataset /iline", "attributes iline_first, iline_step"],
        ),
        (
            "text where a number belongs",
            Box::new(|f| {
                let ds = f.dataset("seismic").unwrap();
                ds.delete_attr("xline_first").unwrap();
                text_attr(&ds, "xline_first", "twenty");
            }),
            &["attribute xline_first of /seismic must be 1 finite number(s)", "'twenty'"],
        ),
        (
            "unknown sample unit",
            Box::new(|f| {
                let ds = f.dataset("seismic").unwrap();
                ds.delete_attr("sample_unit").unwrap();
                text_attr(&ds, "sample_unit", "furlongs");
            }),
            &["attribute sample_unit of /seismic is 'furlongs'"],
        ),
    ];
    for (what, edit, expected) in cases {
        let dir = tempfile::tempdir().unwrap();
        let path = edited(dir.path(), edit);
        let e = open_error(&path, DEFAULT_DATASET);
        assert!(e.starts_with(&path.display().to_string()), "{what}: {e}");
        for part in expected {
            assert!(e.contains(part), "{what}: {e:?} lacks {part:?}");
        }
    }
}

#[test]
fn truncated_and_garbage_files_are_errors_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let whole = dir.path().join("whole.h5");
    let v = filled(time_geometry());
    write_volume(&whole, &v.geometry, &v.data, &Hdf5WriteOptions::default()).unwrap();
    let bytes = std::fs::read(&whole).unwrap();

    for (name, content) in [
        ("half.h5", bytes[..bytes.len() / 2].to_vec()),
        ("head.h5", bytes[..600].to_vec()),
        ("garbage.h5", (0..4096u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect()),
        ("nothing.h5", Vec::new()),
    ] {
        let path = dir.path().join(name);
        std::fs::write(&path, content).unwrap();
        let outcome = Hdf5Reader::open(&path, &Hdf5Options::default()).and_then(|r| Volume::read(&r));
        let e = message(outcome.err().unwrap_or_else(|| panic!("{name} read without error")));
        assert!(e.starts_with(&path.display().to_string()), "{name}: {e}");
    }
    // A compressed chunk overwritten with zeros: the file opens, reading the box that needs it fails.
    let damaged = dir.path().join("damaged.h5");
    let opts = Hdf5WriteOptions { chunk: Some([2, 7, 11]), compression: Some(5), ..Default::default() };
    write_volume(&damaged, &v.geometry, &v.data, &opts).unwrap();
    let chunk = hdf5::File::open(&damaged).unwrap().dataset("seismic").unwrap().chunk_info(1).unwrap();
    assert_eq!(chunk.offset, [2, 0, 0]);
    let mut bytes = std::fs::read(&damaged).unwrap();
    bytes[chunk.addr as usize..(chunk.addr + chunk.size) as usize].fill(0);
    std::fs::write(&damaged, bytes).unwrap();
    let reader = Hdf5Reader::open(&damaged, &Hdf5Options::default()).unwrap();
    let mut first_chunk = vec![0.0; 2 * 7 * 11];
    reader.read_box(&IndexBox { il: 0..2, xl: 0..7, s: 0..11 }, &mut first_chunk).unwrap();
    assert_eq!(first_chunk, v.data[..2 * 7 * 11]);
    let e = message(Volume::read(&reader).unwrap_err());
    assert!(e.starts_with(&damaged.display().to_string()) && e.contains("reading inline indices 0..5"), "{e}");

    let e = open_error(&dir.path().join("absent.h5"), DEFAULT_DATASET);
    assert!(e.contains("absent.h5") && e.contains("No such file"), "{e}");
}

/// A lock another process holds on an input does not stop seisimage reading it. A lock can be held for a
/// moment by a process that is only starting: between fork and exec, a child holds every descriptor of
/// its parent, so a file its parent had just closed could not be opened again ("unable to lock file",
/// seen in CI while other tests started programs). HDF5 still refuses a file marked open for writing.
#[test]
fn an_input_locked_by_another_process_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("locked.h5");
    let v = filled(time_geometry());
    write_volume(&path, &v.geometry, &v.data, &Hdf5WriteOptions::default()).unwrap();
    // A descriptor of its own, as a forked child's copy would be, holding the lock an HDF5 writer takes.
    let holder = std::fs::File::open(&path).unwrap();
    // SAFETY: flock on a descriptor this test owns.
    assert_eq!(unsafe { libc::flock(std::os::fd::AsRawFd::as_raw_fd(&holder), libc::LOCK_EX | libc::LOCK_NB) }, 0);

    let read = Hdf5Reader::open(&path, &Hdf5Options::default()).and_then(|r| Volume::read(&r));
    assert_eq!(read.map_err(|e| e.to_string()).unwrap().data, v.data);
    drop(holder);
}
