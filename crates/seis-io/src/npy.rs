//! NumPy `.npy` arrays for sub-volumes and slices: written as version 1.0, little-endian float32, C order;
//! read back from float32 or float64 files of versions 1.0 to 3.0.
//!
//! The format, as numpy's `numpy.lib.format` defines it: the magic `\x93NUMPY`, a major and a minor
//! version byte, the header length (u16 little-endian in 1.0, u32 in 2.0 and 3.0), then the header: a
//! Python dict literal such as `{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }`, padded with
//! spaces and ended by a newline so that the data starts at a multiple of 64 bytes; then the values.
//!
//! Hand-written rather than `npyz` (0.9) or `ndarray-npy` (0.10), because neither gives what seisimage needs
//! of it: a writer fed block by block for a shape known in advance, and a reader that refuses a hostile file
//! with an error naming the file and the byte, allocating no more than the file can back. Read in their
//! sources and, for `npyz`, tried on the hostile files of tests/limits/input_limits.rs under a counting
//! allocator:
//! - Both crates allocate the header length read from the file before reading the header: an 80-byte file
//!   whose version-2 header claims 4 GiB made `npyz` allocate 4 294 966 818 bytes. Here the length is
//!   checked against the file size first.
//! - `npyz` multiplies the shape without overflow checks: a shape of (2³², 2³², 2³²) wraps to 0 values in
//!   a release build and the file reads as an empty array (a panic where overflow checks are on, as in
//!   fuzzing builds).
//! - `npyz` does not compare the data with the shape: a short file fails with "failed to fill whole
//!   buffer", bytes past the end are ignored, and no error names the file or a position.
//! - `ndarray-npy` writes a whole `ndarray` array, or leaves a zeroed file to be memory-mapped and filled;
//!   it has no writer fed block by block.
//!
//! Wrapping `npyz` in those checks would leave it only the header dict, for it and the 25 crates it brings
//! (a `pest` grammar, big integers); and reading a 256 × 256 × 512 `<f4` array took it 1.9 × as long as
//! the loop here (its writer ran at 1.04 × the time of this one when this one wrote value by value). The
//! dict parser below takes the subset of Python literals numpy writes; its one known bug, recursion without
//! bound on nested tuples, is fixed and checked by `npy_headers_nested_deeper_than_the_stack` in
//! tests/limits.
//!
//! The writer converts a block of values at a time and hands the block to the file at once: handing each
//! value's four bytes to the file's buffer took 3 × as long (a 256 × 256 × 401 box written to a tmpfs
//! folder by `seisimage run`: 118-125 ms against 39-43 ms; `cargo bench --bench hdf5_io`, NPY write of
//! 134 MB with its flush to disk: 471 ms against 334 ms).

use std::fs::File;
use std::io::{BufReader, Read, Write};
use std::path::{Path, PathBuf};

use crate::output::BlockWriter;
use crate::TempOutput;
use seis_core::error::{Error, IoContext, Location, Result};

const MAGIC: &[u8; 6] = b"\x93NUMPY";
/// The data starts at a multiple of this many bytes.
const ALIGN: usize = 64;
/// Values converted per read while loading.
const READ_BLOCK: usize = 16 * 1024;
/// Values converted per write: a block's bytes are converted in one loop, which the compiler turns into
/// a copy on little-endian machines, and handed to the file at once.
const ENCODE_BLOCK: usize = 64 * 1024;
/// Tuples nested deeper than this in a header are refused (numpy writes none nested at all).
const MAX_NESTING: usize = 32;

/// Write `data` (C order) as an array of `shape`, atomically.
pub fn write(path: &Path, shape: &[usize], data: &[f32]) -> Result<PathBuf> {
    let mut writer = NpyWriter::create(path, shape)?;
    writer.write(data)?;
    writer.finish()
}

/// An NPY array being written in C order, piece by piece. It appears under its name only at
/// [`NpyWriter::finish`], and only once every value was written; dropped before, it leaves nothing.
pub struct NpyWriter {
    // Field order is drop order: the file is closed before the temporary file is removed.
    out: BlockWriter<File>,
    /// The little-endian bytes of the block of values being written.
    bytes: Vec<u8>,
    remaining: usize,
    output: TempOutput,
}

impl NpyWriter {
    pub fn create(path: &Path, shape: &[usize]) -> Result<Self> {
        let n = shape.iter().try_fold(1usize, |n, &d| n.checked_mul(d));
        let Some(n) = n.filter(|n| n.checked_mul(4).is_some()) else {
            return Err(Error::Request(format!("{}: the shape {shape:?} is too large", path.display())));
        };
        let header = header(shape).ok_or_else(|| {
            Error::Request(format!("{}: the shape {shape:?} does not fit a version 1.0 header", path.display()))
        })?;
        let (output, file) = TempOutput::create(path)?;
        let mut out = BlockWriter::new(file);
        out.write_all(&header).at(path)?;
        Ok(NpyWriter { out, bytes: Vec::new(), remaining: n, output })
    }

    /// Append the next `values` in C order.
    pub fn write(&mut self, values: &[f32]) -> Result<()> {
        let path = self.output.final_path();
        if values.len() > self.remaining {
            return Err(Error::Request(format!(
                "{}: {} values given where {} remain to be written",
                path.display(),
                values.len(),
                self.remaining
            )));
        }
        for block in values.chunks(ENCODE_BLOCK) {
            self.bytes.resize(block.len() * 4, 0);
            for (b, v) in self.bytes.chunks_exact_mut(4).zip(block) {
                b.copy_from_slice(&v.to_le_bytes());
            }
            self.out.write_all(&self.bytes).at(path)?;
        }
        self.remaining -= values.len();
        Ok(())
    }

    /// Flush and move the file to its final name.
    pub fn finish(self) -> Result<PathBuf> {
        self.close()?.commit()
    }

    /// Flush, leaving the file under its temporary name.
    pub fn close(self) -> Result<TempOutput> {
        let NpyWriter { out, remaining, output, .. } = self;
        if remaining > 0 {
            return Err(Error::Request(format!(
                "{}: {remaining} values were never written; the array is incomplete",
                output.final_path().display()
            )));
        }
        out.into_inner().at(output.final_path())?;
        Ok(output)
    }
}

/// The 1.0 header for a `<f4` C-order array of `shape`, padded to [`ALIGN`]; `None` if it is too long.
fn header(shape: &[usize]) -> Option<Vec<u8>> {
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    // A one-element tuple needs its trailing comma in Python.
    let tuple = if dims.len() == 1 { format!("({},)", dims[0]) } else { format!("({})", dims.join(", ")) };
    let dict = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': {tuple}, }}");
    let unpadded = MAGIC.len() + 4 + dict.len() + 1;
    let padding = (ALIGN - unpadded % ALIGN) % ALIGN;
    let len = u16::try_from(dict.len() + padding + 1).ok()?;
    let mut bytes = Vec::with_capacity(unpadded + padding);
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&[1, 0]);
    bytes.extend_from_slice(&len.to_le_bytes());
    bytes.extend_from_slice(dict.as_bytes());
    bytes.resize(bytes.len() + padding, b' ');
    bytes.push(b'\n');
    Some(bytes)
}

/// The element types read: little-endian float32 and float64.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Dtype {
    F4,
    F8,
}

impl Dtype {
    fn size(self) -> usize {
        match self {
            Dtype::F4 => 4,
            Dtype::F8 => 8,
        }
    }
}

/// Read an array of float32 or float64 values (converted to f32) and its shape.
///
/// Everything the header claims is checked against the file before anything is allocated for it.
pub fn read(path: &Path) -> Result<(Vec<usize>, Vec<f32>)> {
    let file = crate::files::open_regular(path)?;
    let file_len = file.metadata().at(path)?.len();
    let mut input = BufReader::new(file);
    let fail = |at: usize, message: String| Error::format(path, Location::Byte(at as u64), message);

    let mut prefix = [0u8; 8];
    input.read_exact(&mut prefix).map_err(|_| fail(0, "too short for an NPY file".into()))?;
    if &prefix[..6] != MAGIC {
        return Err(fail(0, "not an NPY file (it does not start with \\x93NUMPY)".into()));
    }
    let header_start = match (prefix[6], prefix[7]) {
        (1, 0) => 10,
        (2 | 3, 0) => 12,
        (major, minor) => {
            return Err(fail(6, format!("NPY version {major}.{minor} is not supported (1.0 to 3.0 are)")))
        }
    };
    let mut len_bytes = [0u8; 4];
    input.read_exact(&mut len_bytes[..header_start - 8]).map_err(|_| fail(8, "the header length is cut off".into()))?;
    let header_len = u32::from_le_bytes(len_bytes) as usize;
    let data_start = header_start + header_len;
    if data_start as u64 > file_len {
        return Err(fail(
            8,
            format!("the header length {header_len} runs past the end of the file ({file_len} bytes)"),
        ));
    }
    let mut text = vec![0u8; header_len];
    input.read_exact(&mut text).at(path)?;
    let text = std::str::from_utf8(&text)
        .map_err(|e| fail(header_start + e.valid_up_to(), "the header is not text".into()))?;
    let (dtype, shape) = Header { text: text.as_bytes(), pos: 0, start: header_start, path }.parse()?;

    let n = shape.iter().try_fold(1usize, |n, &d| n.checked_mul(d));
    let expected = n.and_then(|n| n.checked_mul(dtype.size()));
    let available = file_len - data_start as u64;
    let (Some(n), Some(expected)) = (n, expected) else {
        return Err(fail(header_start, format!("the shape {shape:?} is too large")));
    };
    if expected as u64 != available {
        return Err(fail(
            data_start,
            format!("the header says shape {shape:?}, {expected} bytes of data, but {available} bytes follow it"),
        ));
    }

    let mut values = Vec::with_capacity(n);
    let mut block = vec![0u8; READ_BLOCK * dtype.size()];
    while values.len() < n {
        let bytes = &mut block[..(n - values.len()).min(READ_BLOCK) * dtype.size()];
        input.read_exact(bytes).at(path)?;
        match dtype {
            Dtype::F4 => values.extend(bytes.chunks_exact(4).map(|b| f32::from_le_bytes(b.try_into().unwrap()))),
            Dtype::F8 => values.extend(bytes.chunks_exact(8).map(|b| f64::from_le_bytes(b.try_into().unwrap()) as f32)),
        }
    }
    Ok((shape, values))
}

/// A value of the header's Python literal.
#[derive(Clone, Debug, PartialEq)]
enum Literal {
    Str(String),
    Bool(bool),
    Int(u64),
    Tuple(Vec<Literal>),
}

/// A parser for the header dict: the subset of Python literals numpy writes there.
struct Header<'a> {
    text: &'a [u8],
    pos: usize,
    /// Byte offset of the header in the file, for error locations.
    start: usize,
    path: &'a Path,
}

impl Header<'_> {
    fn fail(&self, message: impl Into<String>) -> Error {
        Error::format(self.path, Location::Byte((self.start + self.pos) as u64), message)
    }

    /// The dtype and shape of a C-order array of float32 or float64.
    fn parse(mut self) -> Result<(Dtype, Vec<usize>)> {
        let (mut descr, mut fortran_order, mut shape) = (None, None, None);
        self.expect(b'{')?;
        while !self.eat(b'}') {
            let key_at = self.pos;
            let key = match self.literal(0)? {
                Literal::Str(key) => key,
                other => return Err(self.fail(format!("expected a key, found {other:?}"))),
            };
            self.expect(b':')?;
            let value = self.literal(0)?;
            let slot = match key.as_str() {
                "descr" => &mut descr,
                "fortran_order" => &mut fortran_order,
                "shape" => &mut shape,
                _ => return Err(self.fail(format!("unknown header key '{key}'"))),
            };
            if slot.replace((key_at, value)).is_some() {
                return Err(self.fail(format!("header key '{key}' given twice")));
            }
            if !self.eat(b',') {
                self.expect(b'}')?;
                break;
            }
        }
        self.skip_space();
        if self.pos != self.text.len() {
            return Err(self.fail("unexpected text after the header dict"));
        }

        let dtype = match self.value_of(descr, "descr")? {
            Literal::Str(d) if d == "<f4" => Dtype::F4,
            Literal::Str(d) if d == "<f8" => Dtype::F8,
            other => {
                return Err(self.fail(format!(
                    "dtype {other:?} is not supported; arrays of little-endian float32 or float64 ('<f4', '<f8') are"
                )))
            }
        };
        match self.value_of(fortran_order, "fortran_order")? {
            Literal::Bool(false) => {}
            Literal::Bool(true) => {
                return Err(
                    self.fail("the array is in Fortran order; save it in C order (numpy.ascontiguousarray) instead")
                )
            }
            other => return Err(self.fail(format!("fortran_order must be True or False, found {other:?}"))),
        }
        let dims = match self.value_of(shape, "shape")? {
            Literal::Tuple(items) => items
                .into_iter()
                .map(|d| match d {
                    Literal::Int(d) => usize::try_from(d).ok(),
                    _ => None,
                })
                .collect::<Option<Vec<usize>>>(),
            _ => None,
        };
        let dims = dims.ok_or_else(|| self.fail("the shape must be a tuple of whole numbers"))?;
        Ok((dtype, dims))
    }

    /// The value found for `key`, with the position moved back to it so that errors point there.
    fn value_of(&mut self, found: Option<(usize, Literal)>, key: &str) -> Result<Literal> {
        let (at, value) = found.ok_or_else(|| self.fail(format!("the header has no '{key}'")))?;
        self.pos = at;
        Ok(value)
    }

    fn skip_space(&mut self) {
        while self.text.get(self.pos).is_some_and(|c| c.is_ascii_whitespace()) {
            self.pos += 1;
        }
    }

    /// Consume `c` (after any space) if it is next.
    fn eat(&mut self, c: u8) -> bool {
        self.skip_space();
        let found = self.text.get(self.pos) == Some(&c);
        self.pos += usize::from(found);
        found
    }

    fn expect(&mut self, c: u8) -> Result<()> {
        if self.eat(c) {
            Ok(())
        } else {
            Err(self.fail(format!("expected '{}'", c as char)))
        }
    }

    /// The literal at the current position, inside `nesting` tuples.
    fn literal(&mut self, nesting: usize) -> Result<Literal> {
        self.skip_space();
        let rest = &self.text[self.pos..];
        match rest.first() {
            Some(&quote @ (b'\'' | b'"')) => {
                let len = rest[1..].iter().position(|&c| c == quote).ok_or_else(|| self.fail("unterminated string"))?;
                let text = String::from_utf8_lossy(&rest[1..1 + len]).into_owned();
                self.pos += len + 2;
                Ok(Literal::Str(text))
            }
            Some(b'0'..=b'9') => {
                let len = rest.iter().take_while(|c| c.is_ascii_digit()).count();
                let digits = std::str::from_utf8(&rest[..len]).expect("ASCII digits");
                let value = digits.parse().map_err(|_| self.fail(format!("{digits} is too large")))?;
                // Python 2 wrote long integers with an L suffix.
                self.pos += len + usize::from(rest.get(len) == Some(&b'L'));
                Ok(Literal::Int(value))
            }
            // Each level of nesting is a level of recursion: a header of nothing but '(' must not exhaust the stack.
            Some(b'(') if nesting == MAX_NESTING => {
                Err(self.fail(format!("tuples nested more than {MAX_NESTING} deep; a shape is a flat tuple")))
            }
            Some(b'(') => {
                self.pos += 1;
                let mut items = Vec::new();
                while !self.eat(b')') {
                    items.push(self.literal(nesting + 1)?);
                    if !self.eat(b',') {
                        self.expect(b')')?;
                        break;
                    }
                }
                Ok(Literal::Tuple(items))
            }
            _ if rest.starts_with(b"True") => {
                self.pos += 4;
                Ok(Literal::Bool(true))
            }
            _ if rest.starts_with(b"False") => {
                self.pos += 5;
                Ok(Literal::Bool(false))
            }
            _ => Err(self.fail("expected a string, a number, True, False or a tuple")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_are_padded_to_64_bytes_and_spell_python_tuples() {
        for (shape, tuple) in [(&[][..], "()"), (&[7][..], "(7,)"), (&[2, 3, 4][..], "(2, 3, 4)")] {
            let h = header(shape).unwrap();
            assert_eq!(h.len() % 64, 0);
            assert_eq!(u16::from_le_bytes([h[8], h[9]]) as usize, h.len() - 10);
            assert_eq!(*h.last().unwrap(), b'\n');
            let text = std::str::from_utf8(&h[10..]).unwrap();
            assert!(text.starts_with(&format!("{{'descr': '<f4', 'fortran_order': False, 'shape': {tuple}, }}")));
            let parsed = Header { text: text.as_bytes(), pos: 0, start: 10, path: Path::new("x.npy") }.parse();
            assert_eq!(parsed.unwrap(), (Dtype::F4, shape.to_vec()));
        }
    }

    #[test]
    fn header_parser_takes_what_numpy_and_older_writers_write() {
        let parse = |text: &str| Header { text: text.as_bytes(), pos: 0, start: 10, path: Path::new("x.npy") }.parse();
        assert_eq!(
            parse("{\"shape\": (3L, 2L), \"fortran_order\": False, \"descr\": \"<f8\"}").unwrap(),
            (Dtype::F8, vec![3, 2])
        );
        assert_eq!(parse("{'descr':'<f4','fortran_order':False,'shape':(5,)}   \n").unwrap(), (Dtype::F4, vec![5]));
        for (bad, says) in [
            ("{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }", "dtype"),
            ("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", "dtype"),
            ("{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }", "Fortran order"),
            ("{'descr': '<f4', 'shape': (2,), }", "no 'fortran_order'"),
            ("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 'a'), }", "tuple of whole numbers"),
            ("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}", "unknown header key 'x'"),
            ("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,)}", "given twice"),
            ("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}", "too large"),
            ("{'descr': '<f4', 'fortran_order': False, 'shape': [2]}", "expected a string"),
            ("{'descr': '<f4", "unterminated"),
            ("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} x", "after the header"),
        ] {
            let e = parse(bad).unwrap_err().to_string();
            assert!(e.starts_with("x.npy at byte "), "{e}");
            assert!(e.contains(says), "{bad}: {e}");
        }
    }
}
