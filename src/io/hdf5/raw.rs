//! The HDF5 calls that `hdf5-metno` does not offer in the form needed here: a box of a 3-D dataset read
//! or written straight from the caller's buffer, the dimension-scale API of the HDF5 high-level library
//! (`H5DS`, linked through the `hl` feature of `hdf5-sys`), and attribute values of whatever type a file
//! from elsewhere uses.

use std::ffi::CString;
use std::os::raw::{c_char, c_uint};
use std::path::Path;

use ::hdf5::types::{TypeDescriptor, VarLenAscii, VarLenUnicode};
use ::hdf5::{Attribute, Dataset, Dataspace, Datatype, Location as H5Location};
use hdf5_sys::h5::{herr_t, hsize_t};
use hdf5_sys::h5a::H5Aread;
use hdf5_sys::h5d::{H5Dread, H5Dwrite};
use hdf5_sys::h5i::hid_t;
use hdf5_sys::h5p::H5P_DEFAULT;
use hdf5_sys::h5s::{H5S_seloper_t, H5Sselect_hyperslab};

use crate::error::{Error, Location};
use crate::volume::IndexBox;

// Declared in H5DSpublic.h of the HDF5 high-level library.
extern "C" {
    fn H5DSset_scale(dsid: hid_t, dimname: *const c_char) -> herr_t;
    fn H5DSattach_scale(did: hid_t, dsid: hid_t, idx: c_uint) -> herr_t;
    fn H5DSset_label(did: hid_t, idx: c_uint, label: *const c_char) -> herr_t;
}

/// Attributes with more values than this are described in summaries, not read.
const MAX_ATTR_VALUES: usize = 16;
/// Longest fixed-length string attribute read.
const MAX_ATTR_TEXT: usize = 64 * 1024;

/// Turn HDF5 library errors into ours, naming the file and what was being done.
pub(super) trait H5Context<T> {
    fn doing(self, file: &Path, what: impl FnOnce() -> String) -> crate::Result<T>;
}

impl<T> H5Context<T> for ::hdf5::Result<T> {
    fn doing(self, file: &Path, what: impl FnOnce() -> String) -> crate::Result<T> {
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

/// The file dataspace of `ds` with `b` selected, and a memory dataspace of exactly `b`'s shape.
fn box_spaces(ds: &Dataset, b: &IndexBox) -> ::hdf5::Result<(Dataspace, Dataspace)> {
    let file_space = ds.space()?;
    let start = [b.il.start, b.xl.start, b.s.start].map(|v| v as hsize_t);
    let count = b.shape().map(|v| v as hsize_t);
    call("selecting a hyperslab", || unsafe {
        H5Sselect_hyperslab(
            file_space.id(),
            H5S_seloper_t::H5S_SELECT_SET,
            start.as_ptr(),
            std::ptr::null(),
            count.as_ptr(),
            std::ptr::null(),
        )
    })?;
    Ok((file_space, Dataspace::try_new(b.shape())?))
}

/// Read box `b` of the 3-D dataset `ds` into `out` (`b.len()` values, `[il][xl][s]` order). HDF5 converts
/// any integer or float type to f32 on the way, so nothing is copied twice.
pub(super) fn read_box(ds: &Dataset, b: &IndexBox, out: &mut [f32]) -> ::hdf5::Result<()> {
    assert_eq!(out.len(), b.len(), "the caller checks the buffer against the box");
    let (file_space, mem_space) = box_spaces(ds, b)?;
    let mem_type = Datatype::from_type::<f32>()?;
    call("H5Dread", || unsafe {
        H5Dread(ds.id(), mem_type.id(), mem_space.id(), file_space.id(), H5P_DEFAULT, out.as_mut_ptr().cast())
    })
}

/// Write `data` (`b.len()` values, `[il][xl][s]` order) into box `b` of the 3-D dataset `ds`.
pub(super) fn write_box(ds: &Dataset, b: &IndexBox, data: &[f32]) -> ::hdf5::Result<()> {
    assert_eq!(data.len(), b.len(), "the caller checks the buffer against the box");
    let (file_space, mem_space) = box_spaces(ds, b)?;
    let mem_type = Datatype::from_type::<f32>()?;
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
    call("H5DSset_scale", || unsafe { H5DSset_scale(scale.id(), name.as_ptr()) })
}

/// Attach the dimension scale `scale` to dimension `dim` of `data`, and label that dimension.
pub(super) fn attach_scale(data: &Dataset, dim: usize, scale: &Dataset, label: &str) -> ::hdf5::Result<()> {
    let label = c_string(label)?;
    let dim = dim as c_uint;
    call("H5DSattach_scale", || unsafe { H5DSattach_scale(data.id(), scale.id(), dim) })?;
    call("H5DSset_label", || unsafe { H5DSset_label(data.id(), dim, label.as_ptr()) })
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

    /// How the value reads to a person, for error messages.
    pub(super) fn describe(&self) -> String {
        match self {
            AttrValue::Text(t) => format!("the text '{t}'"),
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
        AttrValue::Text(t) | AttrValue::Other(t) => t.clone().into(),
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
            call("H5Aread", || unsafe { H5Aread(attr.id(), dtype.id(), bytes.as_mut_ptr().cast()) })?;
            text(&String::from_utf8_lossy(&bytes))
        }
        other => Ok(AttrValue::Other(format!("a value of type {other}"))),
    }
}
