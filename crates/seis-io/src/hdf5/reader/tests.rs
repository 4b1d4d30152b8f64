//! Volumes stored in other axis orders, written here with the HDF5 library and dimension scales as other
//! programs attach them: read in the model's order, or refused with the file and the dataset named.

use std::path::{Path, PathBuf};

use ::hdf5::{Dataset, File};

use super::Hdf5Reader;
use crate::hdf5::{raw, Hdf5Options};
use seis_core::volume::{Domain, IndexBox, LineAxis, SampleAxis, Volume, VolumeReader};

const SHAPE: [usize; 3] = [5, 7, 6];

/// The value at inline, crossline and sample index `(i, j, k)`; exact in f32.
fn value(i: usize, j: usize, k: usize) -> f32 {
    (i * 10_000 + j * 100 + k) as f32 * 0.5 - 100.0
}

/// The axis values: inlines 100, 102, ...; crosslines 7, 8, ...; samples 0, 4, 8, ... ms.
fn axis_values(axis: usize) -> Vec<f64> {
    (0..SHAPE[axis]).map(|n| [100.0 + 2.0 * n as f64, 7.0 + n as f64, 4.0 * n as f64][axis]).collect()
}

/// How a test names the dimensions of the dataset it writes.
enum Names<'a> {
    /// Attach a scale named so (a dataset of that name holding the axis of the same position in `axes`).
    Scales(&'a [&'a str]),
    /// Label the dimensions only.
    Labels(&'a [&'a str]),
}

/// Write `/seismic` with its dimension `d` holding axis `axes[d]` of the model, chunked as `chunk`, named
/// as `names` says; the scale of dimension `d` holds `scale_len[d]` values of its axis (its axis's length
/// unless a test says otherwise).
fn write(
    dir: &Path,
    name: &str,
    axes: [usize; 3],
    chunk: Option<[usize; 3]>,
    names: Names,
    scale_len: Option<[usize; 3]>,
) -> PathBuf {
    let path = dir.join(name);
    let stored = axes.map(|a| SHAPE[a]);
    let mut values = Vec::with_capacity(SHAPE.iter().product());
    for a in 0..stored[0] {
        for b in 0..stored[1] {
            for c in 0..stored[2] {
                let mut model = [0; 3];
                for (d, index) in [a, b, c].into_iter().enumerate() {
                    model[axes[d]] = index;
                }
                values.push(value(model[0], model[1], model[2]));
            }
        }
    }
    let file = File::create(&path).unwrap();
    let builder = file.new_dataset::<f32>().shape(stored);
    let volume: Dataset = match chunk {
        Some(chunk) => builder.chunk(chunk).create("seismic"),
        None => builder.create("seismic"),
    }
    .unwrap();
    volume.write_raw(&values).unwrap();
    match names {
        Names::Scales(names) => {
            for (d, scale_name) in names.iter().enumerate() {
                let len = scale_len.map_or(stored[d], |l| l[d]);
                let values: Vec<f64> = axis_values(axes[d]).into_iter().cycle().take(len).collect();
                let scale = file.new_dataset_builder().with_data(&values).create(*scale_name).unwrap();
                raw::set_scale(&scale, scale_name).unwrap();
                raw::attach_scale(&volume, d, &scale, scale_name).unwrap();
            }
        }
        Names::Labels(names) => {
            for (d, label) in names.iter().enumerate() {
                raw::set_label(&volume, d, label).unwrap();
            }
        }
    }
    path
}

fn expected(b: &IndexBox) -> Vec<f32> {
    b.il.clone().flat_map(|i| b.xl.clone().flat_map(move |j| b.s.clone().map(move |k| value(i, j, k)))).collect()
}

/// The whole volume and boxes across chunk boundaries read as the formula says.
fn assert_reads_the_formula(reader: &Hdf5Reader) {
    let g = reader.geometry();
    assert_eq!(g.shape(), SHAPE);
    assert_eq!(Volume::read(reader).unwrap().data, expected(&g.full_box()));
    for b in [
        IndexBox { il: 1..4, xl: 2..7, s: 1..5 },
        IndexBox { il: 4..5, xl: 0..7, s: 0..6 },
        IndexBox { il: 0..5, xl: 3..4, s: 5..6 },
    ] {
        let mut out = vec![f32::NAN; b.len()];
        reader.read_box(&b, &mut out).unwrap();
        assert_eq!(out, expected(&b), "box {b:?}");
    }
}

#[test]
fn every_order_the_scales_name_is_read_in_the_models_order() {
    let dir = tempfile::tempdir().unwrap();
    let name = |axis: usize| ["iline", "xline", "twt"][axis];
    let orders = [[0, 1, 2], [1, 0, 2], [2, 0, 1], [2, 1, 0], [0, 2, 1], [1, 2, 0]];
    for (n, axes) in orders.into_iter().enumerate() {
        // Contiguous, chunks that divide no axis, and chunks of one value along the first dimension.
        for (m, chunk) in [None, Some([2, 3, 4]), Some([1, 5, 2])].into_iter().enumerate() {
            let names = axes.map(name);
            let path = write(dir.path(), &format!("v{n}_{m}.h5"), axes, chunk, Names::Scales(&names), None);
            let reader = Hdf5Reader::open(&path, &Hdf5Options::default()).unwrap();
            let g = reader.geometry();
            assert_eq!((g.ilines, g.xlines), (LineAxis::new(100, 2, 5), LineAxis::new(7, 1, 7)), "{axes:?}");
            assert_eq!(g.samples, SampleAxis { origin: 0.0, step: 4.0, len: 6, domain: Domain::Time }, "{axes:?}");
            assert_eq!(reader.summary().dimensions, names, "{axes:?}");
            assert_reads_the_formula(&reader);
        }
    }
}

#[test]
fn labels_alone_order_the_dimensions_and_unnamed_ones_take_the_axes_left() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "labels.h5", [2, 0, 1], Some([3, 2, 2]), Names::Labels(&["sample", "", ""]), None);
    let reader = Hdf5Reader::open(&path, &Hdf5Options::default()).unwrap();
    assert_eq!(reader.summary().dimensions, ["twt", "iline", "xline"]);
    assert_reads_the_formula(&reader);
}

fn refusal(path: &Path) -> String {
    match Hdf5Reader::open(path, &Hdf5Options::default()) {
        Ok(_) => panic!("{} was read", path.display()),
        Err(e) => e.to_string(),
    }
}

#[test]
fn unknown_names_repeated_axes_and_scales_of_the_wrong_length_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let unknown = write(dir.path(), "unknown.h5", [0, 1, 2], None, Names::Scales(&["iline", "offset", "twt"]), None);
    let e = refusal(&unknown);
    assert!(e.contains("unknown.h5") && e.contains("dimension 1 of /seismic") && e.contains("'offset'"), "{e}");

    let twice = write(dir.path(), "twice.h5", [0, 1, 2], None, Names::Labels(&["iline", "iline", "depth"]), None);
    let e = refusal(&twice);
    assert!(e.contains("twice.h5") && e.contains("dimensions 0 ('iline') and 1 ('iline') of /seismic"), "{e}");
    assert!(e.contains("inline axis"), "{e}");

    let two_samples = write(dir.path(), "samples.h5", [2, 0, 1], None, Names::Labels(&["twt", "depth", "xline"]), None);
    let e = refusal(&two_samples);
    assert!(e.contains("samples.h5") && e.contains("both hold the sample axis"), "{e}");

    // The scales say [xline][iline][twt] where the dataset's shape is [iline][xline][twt]'s.
    let short =
        write(dir.path(), "short.h5", [0, 1, 2], None, Names::Scales(&["xline", "iline", "twt"]), Some([7, 5, 6]));
    let e = refusal(&short);
    assert!(e.contains("short.h5") && e.contains("/xline has shape [7] where [5] was expected"), "{e}");
    assert!(e.contains("(the crosslines of dataset /seismic)") && e.contains("scale of dimension 0"), "{e}");
}
