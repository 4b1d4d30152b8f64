//! The HDF5 calls that `hdf5-metno` does not offer in the form needed here: a box of a 3-D dataset read
//! or written straight from the caller's buffer, the dimension-scale API of the HDF5 high-level library
//! (`H5DS`, linked through the `hl` feature of `hdf5-sys`), and attribute values of whatever type a file
//! from elsewhere uses.

use std::ffi::CString;
use std::os::raw::{c_char, c_int, c_uint, c_void};
use std::path::Path;

use ::hdf5::types::{TypeDescriptor, VarLenAscii, VarLenUnicode};
use ::hdf5::{Attribute, Dataset, Dataspace, Datatype, Location as H5Location};
use hdf5_sys::h5::{herr_t, hsize_t};
use hdf5_sys::h5a::H5Aread;
use hdf5_sys::h5d::{H5Dget_space, H5Dopen2, H5Dread, H5Dwrite};
use hdf5_sys::h5i::{hid_t, H5Iget_name};
use hdf5_sys::h5p::H5P_DEFAULT;
use hdf5_sys::h5s::{
    H5S_seloper_t, H5Sclose, H5Sget_simple_extent_dims, H5Sget_simple_extent_ndims, H5Sselect_hyperslab,
};

use crate::files::quoted;
use seis_core::cancel::CancelToken;
use seis_core::error::{Error, Location};
use seis_core::volume::IndexBox;

// Declared in H5DSpublic.h of the HDF5 high-level library.
extern "C" {
    fn H5DSset_scale(dsid: hid_t, dimname: *const c_char) -> herr_t;
    fn H5DSattach_scale(did: hid_t, dsid: hid_t, idx: c_uint) -> herr_t;
    fn H5DSset_label(did: hid_t, idx: c_uint, label: *const c_char) -> herr_t;
    fn H5DSget_label(did: hid_t, idx: c_uint, label: *mut c_char, size: usize) -> isize;
    fn H5DSget_scale_name(did: hid_t, name: *mut c_char, size: usize) -> isize;
    fn H5DSiterate_scales(
        did: hid_t,
        dim: c_uint,
        ds_idx: *mut c_int,
        visitor: extern "C" fn(hid_t, c_uint, hid_t, *mut c_void) -> herr_t,
        visitor_data: *mut c_void,
    ) -> herr_t;
}

/// Attributes with more values than this are described in summaries, not read.
const MAX_ATTR_VALUES: usize = 16;
/// Longest fixed-length string attribute read.
const MAX_ATTR_TEXT: usize = 64 * 1024;
/// Characters of an attribute's text an error message quotes.
pub(super) const QUOTE: usize = 80;
/// Characters of an attribute's text a summary shows.
const MAX_SHOWN_TEXT: usize = 4096;

/// Turn HDF5 library errors into ours, naming the file and what was being done.
pub(super) trait H5Context<T> {
    fn doing(self, file: &Path, what: impl FnOnce() -> String) -> seis_core::Result<T>;
}

impl<T> H5Context<T> for ::hdf5::Result<T> {
    fn doing(self, file: &Path, what: impl FnOnce() -> String) -> seis_core::Result<T> {
        self.map_err(|e| Error::format(file, Location::File, format!("{}: {e}", what())))
    }
}

/// Run one HDF5 call under the library lock that `hdf5-metno` keeps; a negative status becomes the
/// library's error stack, or `what` where the call left none (the H5DS functions often do not).
fn call(what: &str, f: impl FnOnce() -> herr_t) -> ::hdf5::Result<()> {
    ::hdf5::sync::sync(|| {
        if f() >= 0 {
            return Ok(());
        }
        match ::hdf5::Error::query() {
            Ok(error) if error.stack().is_some_and(|frames| !frames.is_empty()) => Err(error),
            _ => Err(format!("{what} failed").into()),
        }
    })
}

/// Select box `b` in `space` (`H5S_SELECT_SET`), or add it to the selection (`H5S_SELECT_OR`).
fn select(space: &Dataspace, b: &IndexBox, op: H5S_seloper_t) -> ::hdf5::Result<()> {
    let start = [b.il.start, b.xl.start, b.s.start].map(|v| v as hsize_t);
    let count = b.shape().map(|v| v as hsize_t);
    // SAFETY: a live dataspace id and two arrays of the dataspace's rank (3), alive for the call.
    call("selecting a hyperslab", || unsafe {
        H5Sselect_hyperslab(space.id(), op, start.as_ptr(), std::ptr::null(), count.as_ptr(), std::ptr::null())
    })
}

/// The file dataspace of `ds` with `b` selected, and a memory dataspace of exactly `b`'s shape.
fn box_spaces(ds: &Dataset, b: &IndexBox) -> ::hdf5::Result<(Dataspace, Dataspace)> {
    let file_space = ds.space()?;
    select(&file_space, b, H5S_seloper_t::H5S_SELECT_SET)?;
    Ok((file_space, Dataspace::try_new(b.shape())?))
}

/// Chunks one read touches at most. HDF5 keeps a record of a few kilobytes for each chunk a read touches
/// until the read ends: reading a volume of 262 144 chunks of one value at once took 1.7 GB. Reads of more
/// chunks are cut along chunk boundaries into reads of at most this many (about 30 MB of records), which
/// costs nothing in speed, as each chunk is still read once.
const MAX_CHUNKS_PER_READ: u64 = 4096;

/// How many chunks of shape `chunk` each range of box `b` crosses.
fn chunks_across(b: &IndexBox, chunk: [usize; 3]) -> [u64; 3] {
    let ranges = [&b.il, &b.xl, &b.s];
    std::array::from_fn(|a| {
        let (r, c) = (ranges[a], chunk[a]);
        if r.is_empty() {
            0
        } else {
            ((r.end - 1) / c - r.start / c + 1) as u64
        }
    })
}

/// How many chunks of shape `chunk` the box `b` touches.
fn chunks_touched(b: &IndexBox, chunk: [usize; 3]) -> u64 {
    chunks_across(b, chunk).iter().product()
}

/// `part` split in two at a chunk boundary across the axis along which it crosses the most chunks.
fn halves(part: &IndexBox, chunk: [usize; 3]) -> Option<(IndexBox, IndexBox)> {
    let across = chunks_across(part, chunk);
    let axis = (0..3).max_by_key(|&a| across[a]).filter(|&a| across[a] > 1)?;
    let start = [part.il.start, part.xl.start, part.s.start][axis];
    let cut = (start / chunk[axis] + across[axis].div_ceil(2) as usize) * chunk[axis];
    let (mut a, mut b) = (part.clone(), part.clone());
    match axis {
        0 => (a.il.end, b.il.start) = (cut, cut),
        1 => (a.xl.end, b.xl.start) = (cut, cut),
        _ => (a.s.end, b.s.start) = (cut, cut),
    }
    Some((a, b))
}

/// Read box `b` of the 3-D dataset `ds` into `out` (`b.len()` values, `[il][xl][s]` order). HDF5 converts
/// any integer or float type to f32 on the way, so nothing is copied twice. A box over many chunks is read
/// in parts of at most [`MAX_CHUNKS_PER_READ`] chunks, each straight into its place in `out`; a stop of the
/// process ([`CancelToken::process`]) ends it between parts with `out` incomplete, which the caller must
/// check.
pub(super) fn read_box(ds: &Dataset, b: &IndexBox, out: &mut [f32]) -> ::hdf5::Result<()> {
    assert_eq!(out.len(), b.len(), "the caller checks the buffer against the box");
    let chunk = ds.chunk().and_then(|c| <[usize; 3]>::try_from(c).ok()).map(|c| c.map(|n| n.max(1)));
    let mem_type = Datatype::from_type::<f32>()?;
    let buffer = out.as_mut_ptr();
    // SAFETY (of each read): the memory dataspace has the box's shape, which `out` holds exactly.
    let read = |file_space: &Dataspace, mem_space: &Dataspace| {
        call("H5Dread", || unsafe {
            H5Dread(ds.id(), mem_type.id(), mem_space.id(), file_space.id(), H5P_DEFAULT, buffer.cast())
        })
    };
    let Some(chunk) = chunk.filter(|&c| chunks_touched(b, c) > MAX_CHUNKS_PER_READ) else {
        let (file_space, mem_space) = box_spaces(ds, b)?;
        return read(&file_space, &mem_space);
    };
    let mut parts = vec![b.clone()];
    while let Some(part) = parts.pop() {
        if CancelToken::process().stopped().is_some() {
            return Ok(());
        }
        match halves(&part, chunk).filter(|_| chunks_touched(&part, chunk) > MAX_CHUNKS_PER_READ) {
            Some((first, second)) => {
                parts.push(second);
                parts.push(first);
            }
            None => {
                let file_space = ds.space()?;
                select(&file_space, &part, H5S_seloper_t::H5S_SELECT_SET)?;
                // The part's place in the box's buffer.
                let mem_space = Dataspace::try_new(b.shape())?;
                let within = IndexBox {
                    il: part.il.start - b.il.start..part.il.end - b.il.start,
                    xl: part.xl.start - b.xl.start..part.xl.end - b.xl.start,
                    s: part.s.start - b.s.start..part.s.end - b.s.start,
                };
                select(&mem_space, &within, H5S_seloper_t::H5S_SELECT_SET)?;
                read(&file_space, &mem_space)?;
            }
        }
    }
    Ok(())
}

/// Write `data` (`b.len()` values, `[il][xl][s]` order) into box `b` of the 3-D dataset `ds`.
pub(super) fn write_box(ds: &Dataset, b: &IndexBox, data: &[f32]) -> ::hdf5::Result<()> {
    assert_eq!(data.len(), b.len(), "the caller checks the buffer against the box");
    let (file_space, mem_space) = box_spaces(ds, b)?;
    let mem_type = Datatype::from_type::<f32>()?;
    // SAFETY: the memory dataspace has the box's shape, which `data` holds exactly.
    call("H5Dwrite", || unsafe {
        H5Dwrite(ds.id(), mem_type.id(), mem_space.id(), file_space.id(), H5P_DEFAULT, data.as_ptr().cast())
    })
}

fn c_string(text: &str) -> ::hdf5::Result<CString> {
    CString::new(text).map_err(|_| format!("'{text}' holds a NUL byte").into())
}

/// Make `scale` a dimension scale named `name`.
pub(super) fn set_scale(scale: &Dataset, name: &str) -> ::hdf5::Result<()> {
    let name = c_string(name)?;
    // SAFETY: a live dataset id and a NUL-terminated name that outlives the call.
    call("H5DSset_scale", || unsafe { H5DSset_scale(scale.id(), name.as_ptr()) })
}

/// Attach the dimension scale `scale` to dimension `dim` of `data`, and label that dimension.
pub(super) fn attach_scale(data: &Dataset, dim: usize, scale: &Dataset, label: &str) -> ::hdf5::Result<()> {
    // SAFETY: two live dataset ids; HDF5 checks `dim` against the dataset's rank.
    call("H5DSattach_scale", || unsafe { H5DSattach_scale(data.id(), scale.id(), dim as c_uint) })?;
    set_label(data, dim, label)
}

/// Label dimension `dim` of `data`.
pub(super) fn set_label(data: &Dataset, dim: usize, label: &str) -> ::hdf5::Result<()> {
    let label = c_string(label)?;
    // SAFETY: a live dataset id and a NUL-terminated label that outlives the call; HDF5 checks `dim`.
    call("H5DSset_label", || unsafe { H5DSset_label(data.id(), dim as c_uint, label.as_ptr()) })
}

/// A dimension scale attached to a dimension of a dataset, as the file describes it.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct ScaleInfo {
    /// A path of the scale dataset in the file (empty where HDF5 knows none).
    pub path: String,
    /// Its `NAME` attribute (empty where it has none).
    pub name: String,
    /// The shape of the scale dataset.
    pub shape: Vec<usize>,
}

/// Scales read per dimension at most: a file may attach any number, and the first is the one used.
const MAX_SCALES: usize = 8;
/// Longest name or label of a dimension read; longer ones are cut.
const MAX_DIM_NAME: usize = 1024;

/// A string of at most [`MAX_DIM_NAME`] bytes that an `H5DS`/`H5I` getter writes into a buffer; empty where
/// the getter says there is none, `None` where it fails.
///
/// # Safety
/// `get` must write at most `size` bytes (NUL included) into the buffer it is given, as those getters do.
unsafe fn getter_string(get: impl FnOnce(*mut c_char, usize) -> isize) -> Option<String> {
    let mut buf = vec![0u8; MAX_DIM_NAME + 1];
    let n = get(buf.as_mut_ptr().cast(), buf.len());
    if n < 0 {
        return None;
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    Some(String::from_utf8_lossy(&buf[..end]).into_owned())
}

/// Called by `H5DSiterate_scales` for each scale of a dimension, which it opens and closes around the call.
extern "C" fn collect_scale(_dataset: hid_t, _dim: c_uint, scale: hid_t, data: *mut c_void) -> herr_t {
    // SAFETY: `data` is the `Vec<ScaleInfo>` that `dimension_scales` passes, alive for the iteration; the
    // getters write into buffers of the sizes given; the dataspace opened here is closed here.
    unsafe {
        let found = &mut *data.cast::<Vec<ScaleInfo>>();
        let path = getter_string(|buf, size| H5Iget_name(scale, buf, size)).unwrap_or_default();
        let name = getter_string(|buf, size| H5DSget_scale_name(scale, buf, size)).unwrap_or_default();
        let space = H5Dget_space(scale);
        if space < 0 {
            return -1;
        }
        let rank = H5Sget_simple_extent_ndims(space);
        let mut dims = [0 as hsize_t; 32];
        let ok =
            (0..=32).contains(&rank) && H5Sget_simple_extent_dims(space, dims.as_mut_ptr(), std::ptr::null_mut()) >= 0;
        H5Sclose(space);
        if !ok {
            return -1;
        }
        let shape = dims[..rank as usize].iter().map(|&n| n as usize).collect();
        found.push(ScaleInfo { path, name, shape });
        // A positive value stops the iteration.
        herr_t::from(found.len() >= MAX_SCALES)
    }
}

/// The dimension scales attached to dimension `dim` of `data` (none when it has none), in the order they
/// were attached, at most [`MAX_SCALES`] of them.
pub(super) fn dimension_scales(data: &Dataset, dim: usize) -> ::hdf5::Result<Vec<ScaleInfo>> {
    let mut found: Vec<ScaleInfo> = Vec::new();
    let data_ptr: *mut Vec<ScaleInfo> = &mut found;
    // SAFETY: the visitor receives `found`, which outlives the call; a null index starts at the first scale.
    call("H5DSiterate_scales", || unsafe {
        H5DSiterate_scales(data.id(), dim as c_uint, std::ptr::null_mut(), collect_scale, data_ptr.cast())
    })?;
    Ok(found)
}

/// The label of dimension `dim` of `data` (empty when it has none).
pub(super) fn dimension_label(data: &Dataset, dim: usize) -> ::hdf5::Result<String> {
    let mut label = None;
    // SAFETY: `H5DSget_label` writes at most `size` bytes.
    call("H5DSget_label", || unsafe {
        label = getter_string(|buf, size| H5DSget_label(data.id(), dim as c_uint, buf, size));
        if label.is_some() {
            0
        } else {
            -1
        }
    })?;
    Ok(label.unwrap_or_default())
}

/// Open the dataset at `path` of `file` again, with a chunk cache of `slots` slots and `bytes` bytes (HDF5's
/// default holds 1 MiB), which `hdf5-metno` sets only on datasets it creates.
pub(super) fn open_with_chunk_cache(
    file: &::hdf5::File,
    path: &str,
    slots: usize,
    bytes: usize,
) -> ::hdf5::Result<Dataset> {
    let dapl = ::hdf5::plist::DatasetAccess::build().chunk_cache(slots, bytes, 1.0).finish()?;
    let c_path = c_string(path)?;
    let mut id: hid_t = -1;
    // SAFETY: a NUL-terminated path and a property list this program made, both alive for the call.
    call("H5Dopen2", || unsafe {
        id = H5Dopen2(file.id(), c_path.as_ptr(), dapl.id());
        if id < 0 {
            -1
        } else {
            0
        }
    })?;
    // SAFETY: `id` is a dataset just opened, whose one reference the handle takes over.
    unsafe { ::hdf5::from_id(id) }
}

/// Write a variable-length UTF-8 string attribute (what h5py reads as `str`).
pub(super) fn write_text_attr(loc: &H5Location, name: &str, value: &str) -> ::hdf5::Result<()> {
    let value: VarLenUnicode = value.parse().map_err(|e| format!("attribute {name}: {e}"))?;
    loc.new_attr::<VarLenUnicode>().create(name)?.write_scalar(&value)
}

/// The value of an attribute, as far as a summary or an axis needs it.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum AttrValue {
    /// Integers of any width (unsigned values beyond `i64` saturate).
    Int(Vec<i64>),
    Float(Vec<f64>),
    Text(String),
    /// Not read: a type or a size that no axis uses; the text describes it.
    Other(String),
}

impl AttrValue {
    /// The values as numbers, if the attribute is numeric.
    pub(super) fn numbers(&self) -> Option<Vec<f64>> {
        match self {
            AttrValue::Int(v) => Some(v.iter().map(|&x| x as f64).collect()),
            AttrValue::Float(v) => Some(v.clone()),
            _ => None,
        }
    }

    /// How the value reads to a person, for error messages (a text cut short).
    pub(super) fn describe(&self) -> String {
        match self {
            AttrValue::Text(t) => format!("the text '{}'", quoted(t, QUOTE)),
            AttrValue::Other(what) => what.clone(),
            numeric => format!("{}", self::json(numeric)),
        }
    }

    pub(super) fn to_json(&self) -> serde_json::Value {
        json(self)
    }
}

fn json(value: &AttrValue) -> serde_json::Value {
    use serde_json::Value;
    fn one_or_many(mut v: Vec<Value>) -> Value {
        if v.len() == 1 {
            v.pop().expect("one value")
        } else {
            Value::Array(v)
        }
    }
    match value {
        AttrValue::Int(v) => one_or_many(v.iter().map(|&x| x.into()).collect()),
        // Non-finite floats have no JSON form; they appear as null.
        AttrValue::Float(v) => one_or_many(v.iter().map(|&x| x.into()).collect()),
        AttrValue::Text(t) | AttrValue::Other(t) => quoted(t, MAX_SHOWN_TEXT).into(),
    }
}

/// Read an attribute: numbers (any integer or float type, up to [`MAX_ATTR_VALUES`] of them) or a single
/// string (fixed or variable length, ASCII or UTF-8); anything else is described, not read.
pub(super) fn read_attr(attr: &Attribute) -> ::hdf5::Result<AttrValue> {
    let dtype = attr.dtype()?;
    let Ok(desc) = dtype.to_descriptor() else {
        return Ok(AttrValue::Other(format!("a value of a type this program does not read ({} bytes)", dtype.size())));
    };
    let n = attr.size();
    // Fixed-length strings end at a NUL or are padded with spaces.
    let text = |t: &str| Ok(AttrValue::Text(t.split('\0').next().unwrap_or_default().trim_end().to_string()));
    match desc {
        TypeDescriptor::Integer(_) | TypeDescriptor::Unsigned(_) | TypeDescriptor::Float(_) if n > MAX_ATTR_VALUES => {
            Ok(AttrValue::Other(format!("{n} values of {desc}")))
        }
        TypeDescriptor::Integer(_) | TypeDescriptor::Unsigned(_) => Ok(AttrValue::Int(attr.read_raw::<i64>()?)),
        TypeDescriptor::Float(_) => Ok(AttrValue::Float(attr.read_raw::<f64>()?)),
        _ if n != 1 => Ok(AttrValue::Other(format!("{n} values of {desc}"))),
        TypeDescriptor::VarLenUnicode => text(attr.read_scalar::<VarLenUnicode>()?.as_str()),
        TypeDescriptor::VarLenAscii => text(attr.read_scalar::<VarLenAscii>()?.as_str()),
        TypeDescriptor::FixedAscii(len) | TypeDescriptor::FixedUnicode(len) if len <= MAX_ATTR_TEXT => {
            // Read with the attribute's own type, so HDF5 converts nothing, then drop the padding.
            let mut bytes = vec![0u8; len];
            // SAFETY: the attribute's own fixed-size type of `len` bytes, which `bytes` holds.
            call("H5Aread", || unsafe { H5Aread(attr.id(), dtype.id(), bytes.as_mut_ptr().cast()) })?;
            text(&String::from_utf8_lossy(&bytes))
        }
        other => Ok(AttrValue::Other(format!("a value of type {other}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boxes_over_many_chunks_are_cut_along_chunk_boundaries() {
        let chunk = [2, 3, 64];
        let b = IndexBox { il: 1..9, xl: 2..8, s: 3..200 };
        // inlines 1..9 cross chunks 0-4, crosslines 2..8 chunks 0-2, samples 3..200 chunks 0-3
        assert_eq!(chunks_touched(&b, chunk), 5 * 3 * 4);
        let (a, c) = halves(&b, chunk).unwrap();
        assert_eq!((a.il.clone(), c.il.clone()), (1..6, 6..9), "cut across inlines, on a chunk boundary");
        assert_eq!(chunks_touched(&a, chunk) + chunks_touched(&c, chunk), chunks_touched(&b, chunk));
        assert!(halves(&IndexBox { il: 0..2, xl: 0..3, s: 0..64 }, chunk).is_none(), "one chunk");
    }

    /// A volume of 6 300 chunks of one value, read in parts of at most 4 096 chunks, reads as it was written.
    #[test]
    fn a_box_read_in_parts_is_the_box() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("chunks.h5");
        let shape = [10usize, 9, 70];
        let value = |i: usize, x: usize, s: usize| (i * 10_000 + x * 100 + s) as f32;
        let all: Vec<f32> = (0..shape.iter().product()).map(|k| value(k / 630, k / 70 % 9, k % 70)).collect();
        {
            let f = ::hdf5::File::create(&path).unwrap();
            let ds = f.new_dataset::<f32>().shape(shape).chunk([1, 1, 1]).create("v").unwrap();
            ds.write_raw(&all).unwrap();
        }
        let ds = ::hdf5::File::open(&path).unwrap().dataset("v").unwrap();
        let b = IndexBox { il: 1..10, xl: 0..9, s: 3..67 };
        assert!(chunks_touched(&b, [1, 1, 1]) > MAX_CHUNKS_PER_READ);
        let mut out = vec![0.0f32; b.len()];
        read_box(&ds, &b, &mut out).unwrap();
        let expected: Vec<f32> =
            b.il.clone()
                .flat_map(|i| {
                    let b = &b;
                    b.xl.clone().flat_map(move |x| b.s.clone().map(move |s| value(i, x, s)))
                })
                .collect();
        assert_eq!(out, expected);
    }
}
