//! NPY arrays: round trips through our writer and reader, the streaming writer, files assembled here byte by
//! byte from the format description, and the errors bad files must give.

use std::path::Path;

use seisimage::io::npy::{self, NpyWriter};
use seisimage::Error;

fn values(n: usize) -> Vec<f32> {
    (0..n).map(|i| i as f32 * 0.5 - 17.0).collect()
}

/// An NPY file as the format describes it: `header` (padded here to 64 bytes) and the raw data bytes.
fn npy_bytes(version: (u8, u8), header: &str, data: &[u8]) -> Vec<u8> {
    let len_bytes = if version.0 == 1 { 2 } else { 4 };
    let mut text = header.to_string();
    while (6 + 2 + len_bytes + text.len() + 1) % 64 != 0 {
        text.push(' ');
    }
    text.push('\n');
    let mut bytes = b"\x93NUMPY".to_vec();
    bytes.extend([version.0, version.1]);
    bytes.extend(&(text.len() as u32).to_le_bytes()[..len_bytes]);
    bytes.extend(text.as_bytes());
    bytes.extend(data);
    bytes
}

fn f64_bytes(values: &[f64]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

#[test]
fn arrays_of_several_ranks_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    for shape in [vec![], vec![1], vec![13], vec![3, 5], vec![2, 3, 7], vec![0, 4]] {
        let path = dir.path().join("a.npy");
        let data = values(shape.iter().product());
        assert_eq!(npy::write(&path, &shape, &data).unwrap(), path);
        assert_eq!(std::fs::metadata(&path).unwrap().len() as usize % 64, data.len() * 4 % 64);
        assert_eq!(npy::read(&path).unwrap(), (shape, data));
    }
}

#[test]
fn streaming_writer_needs_every_value_before_it_publishes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.npy");
    let data = values(2 * 3 * 4);
    let mut w = NpyWriter::create(&path, &[2, 3, 4]).unwrap();
    for piece in data.chunks(5) {
        w.write(piece).unwrap();
    }
    assert!(!path.exists());
    assert!(matches!(w.write(&[1.0]), Err(Error::Request(_))), "one value too many");
    w.finish().unwrap();
    assert_eq!(npy::read(&path).unwrap(), (vec![2, 3, 4], data.clone()));

    let partial = dir.path().join("partial.npy");
    let mut w = NpyWriter::create(&partial, &[2, 3, 4]).unwrap();
    w.write(&data[..10]).unwrap();
    let e = w.finish().unwrap_err().to_string();
    assert!(e.contains("14 values were never written"), "{e}");
    let mut names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    names.sort();
    assert_eq!(names, ["s.npy"], "an incomplete array leaves nothing");
    assert!(npy::write(&partial, &[2, 2], &data[..3]).is_err());
    assert!(!partial.exists());
}

#[test]
fn streaming_writer_lays_down_every_value_of_pieces_of_any_size() {
    // Pieces larger than the writer's conversion block, and not multiples of it: the bytes after the
    // header are the values' little-endian bytes, in order, whatever the pieces were.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("long.npy");
    let data = values(3 * 100_003);
    let mut w = NpyWriter::create(&path, &[3, 100_003]).unwrap();
    for piece in data.chunks(70_001) {
        w.write(piece).unwrap();
    }
    w.finish().unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let header = 10 + u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
    let expected: Vec<u8> = data.iter().flat_map(|v| v.to_le_bytes()).collect();
    assert_eq!(bytes.len(), header + expected.len());
    assert!(bytes[header..] == expected[..], "the values as written");
}

#[test]
fn files_assembled_from_the_format_description_are_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f.npy");
    let x = [1.5f64, -2.25, 1e30, 3.0, 0.125, -0.0];
    let cases = [
        ((1, 0), "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", f64_bytes(&x)),
        ((2, 0), "{'descr': '<f8', 'fortran_order': False, 'shape': (6,), }", f64_bytes(&x)),
        (
            (3, 0),
            "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 2), }",
            x.iter().flat_map(|&v| (v as f32).to_le_bytes()).collect(),
        ),
    ];
    for (version, header, data) in cases {
        std::fs::write(&path, npy_bytes(version, header, &data)).unwrap();
        let (shape, values) = npy::read(&path).unwrap();
        assert_eq!(shape.iter().product::<usize>(), 6, "{header}");
        assert_eq!(values, x.map(|v| v as f32), "{header}");
    }
}

fn read_error(dir: &Path, bytes: Vec<u8>) -> String {
    let path = dir.join("bad.npy");
    std::fs::write(&path, bytes).unwrap();
    let e = npy::read(&path).unwrap_err().to_string();
    assert!(e.starts_with(&path.display().to_string()), "{e}");
    e
}

#[test]
fn bad_files_give_errors_with_their_byte_offsets() {
    let dir = tempfile::tempdir().unwrap();
    let good = "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }";
    let data = f64_bytes(&[0.0; 6]);
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (b"\x93NUM".to_vec(), "at byte 0: too short for an NPY file"),
        (
            npy_bytes((1, 0), good, &data).into_iter().map(|b| b ^ u8::from(b == b'N')).collect(),
            "at byte 0: not an NPY file",
        ),
        (npy_bytes((4, 0), good, &data), "at byte 6: NPY version 4.0 is not supported"),
        (
            {
                let mut b = npy_bytes((1, 0), good, &data);
                b[8] = 0xff;
                b[9] = 0x7f;
                b
            },
            "at byte 8: the header length 32767 runs past the end",
        ),
        (npy_bytes((1, 0), "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", &data[..24]), "Fortran order"),
        (npy_bytes((1, 0), "{'descr': '|u1', 'fortran_order': False, 'shape': (2, 3), }", &data[..6]), "dtype"),
        (
            npy_bytes((1, 0), good, &data[..40]),
            "at byte 128: the header says shape [2, 3], 48 bytes of data, but 40 bytes follow it",
        ),
        ([npy_bytes((1, 0), good, &data), vec![0; 8]].concat(), "but 56 bytes follow it"),
        // A shape far beyond the file: refused before anything is allocated for it.
        (
            npy_bytes((1, 0), "{'descr': '<f4', 'fortran_order': False, 'shape': (100000, 100000, 100000), }", &data),
            "4000000000000000 bytes of data, but 48",
        ),
        (
            npy_bytes(
                (1, 0),
                "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4294967296), }",
                &data,
            ),
            "too large",
        ),
    ];
    for (bytes, says) in cases {
        let e = read_error(dir.path(), bytes);
        assert!(e.contains(says), "{e:?} lacks {says:?}");
    }
    let e = npy::read(&dir.path().join("absent.npy")).unwrap_err();
    assert!(matches!(e, Error::Io { .. }), "{e}");
}
