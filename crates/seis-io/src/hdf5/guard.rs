//! What an HDF5 file may make seisimage do, and what it may not. An HDF5 file is more than values: it can
//! name filter plugins (shared libraries HDF5 loads and runs), keep its values in other files (external
//! storage, virtual datasets), link to objects in other files, and declare sizes far beyond what it holds.
//! A file from someone else is data, so:
//!
//! - **No plugins.** Plugin loading is switched off and the plugin search path emptied before the first
//!   file is opened ([`init`]); a dataset whose filters are not built in is refused, naming the filter.
//!   HDF5 would otherwise look for an unknown filter in `HDF5_PLUGIN_PATH` and in a folder fixed when it
//!   was built, which for a build made under the temporary folder is a place any user can create.
//! - **Nothing outside the file.** A dataset stored in another file (external storage), a virtual dataset
//!   and a path through an external link (or a link of a user-defined kind) are refused, naming what they
//!   point at, before HDF5 opens anything they name ([`check_path`], [`check_dataset`]).
//! - **Sizes the file backs.** A dataset may declare no more values than the file holds, allowing for
//!   the compression its filters can give at most, and no more chunks than the file can index: chunks
//!   never written take no room, so a file of a few hundred bytes could otherwise declare gigabytes.

use std::ffi::{c_char, c_int, c_uint, CStr, CString};
use std::path::Path;

use ::hdf5::Dataset;
use hdf5_sys::h5::{herr_t, hsize_t};
use hdf5_sys::h5d::H5Dget_create_plist;
use hdf5_sys::h5i::hid_t;
use hdf5_sys::h5l::{H5Lexists, H5Lget_val, H5Lunpack_elink_val};
use hdf5_sys::h5p::{
    H5Pclose, H5Pget_external, H5Pget_external_count, H5Pget_filter2, H5Pget_nfilters, H5Pget_virtual_count,
    H5Pget_virtual_dsetname, H5Pget_virtual_filename, H5P_DEFAULT,
};
use hdf5_sys::h5z::H5Zfilter_avail;

use crate::files::quoted;
use seis_core::alloc::human_bytes;
use seis_core::error::{Error, Location, Result};

// Declared here rather than taken from hdf5-sys, whose declarations give these values Rust enums that do
// not hold every value a file can carry (a virtual layout, a user-defined link type), or, for the plugin
// control, a pointer where HDF5 takes the mask itself.
extern "C" {
    fn H5PLset_loading_state(plugin_control_mask: c_uint) -> herr_t;
    fn H5PLsize(num_paths: *mut c_uint) -> herr_t;
    fn H5PLremove(index: c_uint) -> herr_t;
    #[link_name = "H5Pget_layout"]
    fn layout_of(plist_id: hid_t) -> c_int;
    #[link_name = "H5Lget_info2"]
    fn link_info(loc_id: hid_t, name: *const c_char, info: *mut LinkInfo, lapl_id: hid_t) -> herr_t;
}

/// `H5L_info2_t` with its link type as a plain integer.
#[repr(C)]
struct LinkInfo {
    kind: c_int,
    corder_valid: bool,
    corder: i64,
    cset: c_int,
    /// A token (16 bytes) or, for soft and external links, the size of the link's value.
    u: [u64; 2],
}

const LINK_HARD: c_int = 0;
const LINK_SOFT: c_int = 1;
const LINK_EXTERNAL: c_int = 64;
const LAYOUT_CONTIGUOUS: c_int = 1;
const LAYOUT_CHUNKED: c_int = 2;
const LAYOUT_VIRTUAL: c_int = 3;

/// Soft links followed one after another at most, as HDF5 itself allows by default.
const MAX_SOFT_LINKS: usize = 16;
/// The value of a link (a path, or a file name and a path) longer than this is refused unread.
const MAX_LINK_VALUE: usize = 64 << 10;
/// Characters of a name from a file quoted in a message.
const QUOTE: usize = 200;

/// The filters HDF5 has built in that seisimage reads, with the most each can compress by: deflate's
/// format cannot compress by more than 1032:1; N-bit and scale-offset can pack a value of 8 bytes into one
/// bit; shuffle and the Fletcher checksum do not compress.
const BUILT_IN: [(c_int, &str, u64); 5] =
    [(1, "deflate", 1032), (2, "shuffle", 1), (3, "fletcher32", 1), (5, "nbit", 64), (6, "scale-offset", 64)];

/// Switch off HDF5's plugins, once, before any file is opened: loading is disabled for every kind of
/// plugin (filters, file drivers, connectors), and the search path is emptied.
pub fn init() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        ::hdf5::sync::sync(|| unsafe {
            // SAFETY: plain calls into the library under its lock.
            if H5PLset_loading_state(0) < 0 {
                tracing::warn!("HDF5 refused to switch plugin loading off");
            }
            let mut paths: c_uint = 0;
            while H5PLsize(&mut paths) >= 0 && paths > 0 {
                if H5PLremove(0) < 0 {
                    break;
                }
            }
        });
    });
}

/// What one link of a path is.
enum Link {
    Missing,
    Hard,
    Soft(String),
    External { file: String, object: String },
    Other(c_int),
}

/// The link `name` (relative to `loc`, or absolute), without following it.
fn link(loc: hid_t, name: &str) -> std::result::Result<Link, String> {
    let c_name = CString::new(name).map_err(|_| format!("the path {} holds a NUL byte", quoted(name, QUOTE)))?;
    ::hdf5::sync::sync(|| unsafe {
        // SAFETY: HDF5 calls under its lock, on a NUL-terminated name and buffers of the sizes given.
        if H5Lexists(loc, c_name.as_ptr(), H5P_DEFAULT) <= 0 {
            return Ok(Link::Missing);
        }
        let mut info: LinkInfo = std::mem::zeroed();
        if link_info(loc, c_name.as_ptr(), &mut info, H5P_DEFAULT) < 0 {
            return Err(format!("cannot read the link {}", quoted(name, QUOTE)));
        }
        let value = |size: usize| -> std::result::Result<Vec<u8>, String> {
            if size > MAX_LINK_VALUE {
                return Err(format!("the link {} holds {size} bytes", quoted(name, QUOTE)));
            }
            let mut buf = vec![0u8; size.max(1)];
            if H5Lget_val(loc, c_name.as_ptr(), buf.as_mut_ptr().cast(), buf.len(), H5P_DEFAULT) < 0 {
                return Err(format!("cannot read the link {}", quoted(name, QUOTE)));
            }
            Ok(buf)
        };
        match info.kind {
            LINK_HARD => Ok(Link::Hard),
            LINK_SOFT => {
                let buf = value(info.u[0] as usize)?;
                let target = buf.split(|&b| b == 0).next().unwrap_or_default();
                Ok(Link::Soft(String::from_utf8_lossy(target).into_owned()))
            }
            LINK_EXTERNAL => {
                let buf = value(info.u[0] as usize)?;
                let (mut flags, mut file, mut object) = (0, std::ptr::null(), std::ptr::null());
                if H5Lunpack_elink_val(buf.as_ptr().cast(), buf.len(), &mut flags, &mut file, &mut object) < 0 {
                    return Ok(Link::External { file: "?".into(), object: "?".into() });
                }
                let text = |p: *const c_char| {
                    if p.is_null() {
                        String::new()
                    } else {
                        CStr::from_ptr(p).to_string_lossy().into_owned()
                    }
                };
                Ok(Link::External { file: text(file), object: text(object) })
            }
            other => Ok(Link::Other(other)),
        }
    })
}

/// Refuse a path of the HDF5 file `h5` (opened from `file`) that leaves the file: a link on the way that is
/// external or of a user-defined kind, also behind soft links. A path that does not lead anywhere passes:
/// opening it then says what is missing.
pub fn check_path(file: &Path, h5: &::hdf5::Location, path: &str) -> Result<()> {
    walk(file, h5.id(), path, 0)
}

fn walk(file: &Path, loc: hid_t, path: &str, depth: usize) -> Result<()> {
    let fail = |message: String| Error::format(file, Location::File, message);
    let mut here = if path.starts_with('/') { String::from("/") } else { String::new() };
    for part in path.split('/').filter(|p| !p.is_empty() && *p != ".") {
        let parent = here.clone();
        here = match here.as_str() {
            "" => part.to_string(),
            "/" => format!("/{part}"),
            _ => format!("{here}/{part}"),
        };
        match link(loc, &here).map_err(fail)? {
            Link::Missing => return Ok(()),
            Link::Hard => {}
            Link::Soft(target) => {
                if depth >= MAX_SOFT_LINKS {
                    return Err(fail(format!(
                        "{} is reached through more than {MAX_SOFT_LINKS} soft links",
                        quoted(path, QUOTE)
                    )));
                }
                // A relative target is relative to the group that holds the link.
                let target = match (target.starts_with('/'), parent.as_str()) {
                    (true, _) | (false, "") => target,
                    (false, "/") => format!("/{target}"),
                    (false, _) => format!("{parent}/{target}"),
                };
                walk(file, loc, &target, depth + 1)?;
            }
            Link::External { file: other, object } => {
                return Err(fail(format!(
                    "{} is an external link to {} in {}; seisimage follows no link out of the file it is given",
                    quoted(&here, QUOTE),
                    quoted(&object, QUOTE),
                    quoted(&other, QUOTE)
                )));
            }
            Link::Other(kind) => {
                return Err(fail(format!(
                    "{} is a link of a user-defined kind ({kind}), which seisimage does not follow",
                    quoted(&here, QUOTE)
                )));
            }
        }
    }
    Ok(())
}

/// A dataset's creation properties, closed when dropped.
struct CreatePlist(hid_t);

impl Drop for CreatePlist {
    fn drop(&mut self) {
        // SAFETY: a property list this program opened.
        ::hdf5::sync::sync(|| unsafe { H5Pclose(self.0) });
    }
}

/// A string HDF5 writes into a buffer of `size` bytes with `fill`.
fn hdf5_string(fill: impl FnOnce(*mut c_char, usize) -> isize) -> String {
    let mut buf = vec![0u8; 1024];
    let n = fill(buf.as_mut_ptr().cast(), buf.len());
    if n < 0 {
        return "?".into();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

/// Refuse dataset `ds` (at `path` in `file`, a file of `file_len` bytes) when reading it would take
/// HDF5 outside the file or to code the file chooses, or when it declares more than the file can back.
pub fn check_dataset(file: &Path, ds: &Dataset, path: &str, file_len: u64) -> Result<()> {
    // Over 100 lines: one check after another on the same dataset, which read best as the one list of what
    // is refused.
    let fail = |message: String| Error::format(file, Location::File, message);
    let quoted_path = quoted(path, QUOTE);
    // SAFETY: HDF5 calls under its lock, on a dataset this program opened, with buffers of the sizes given.
    let dcpl = ::hdf5::sync::sync(|| unsafe { H5Dget_create_plist(ds.id()) });
    if dcpl < 0 {
        return Err(fail(format!("cannot read the storage properties of {quoted_path}")));
    }
    let dcpl = CreatePlist(dcpl);
    let layout = ::hdf5::sync::sync(|| unsafe { layout_of(dcpl.0) });

    if layout == LAYOUT_VIRTUAL {
        let (source, dataset) = ::hdf5::sync::sync(|| unsafe {
            let mut count = 0usize;
            if H5Pget_virtual_count(dcpl.0, &mut count) < 0 || count == 0 {
                return ("?".to_string(), "?".to_string());
            }
            (
                hdf5_string(|buf, n| H5Pget_virtual_filename(dcpl.0, 0, buf, n)),
                hdf5_string(|buf, n| H5Pget_virtual_dsetname(dcpl.0, 0, buf, n)),
            )
        });
        return Err(fail(format!(
            "dataset {quoted_path} is a virtual dataset, mapped from dataset {} of {}; seisimage reads only what \
             lies inside the file it is given",
            quoted(&dataset, QUOTE),
            quoted(&source, QUOTE)
        )));
    }
    let external = ::hdf5::sync::sync(|| unsafe {
        match H5Pget_external_count(dcpl.0) {
            n if n > 0 => {
                let (mut offset, mut size) = (0, 0 as hsize_t);
                Some(hdf5_string(|buf, n| H5Pget_external(dcpl.0, 0, n, buf, &mut offset, &mut size) as isize))
            }
            _ => None,
        }
    });
    if let Some(other) = external {
        return Err(fail(format!(
            "dataset {quoted_path} has its values stored in another file ({}, external storage); seisimage reads \
             only what lies inside the file it is given",
            quoted(&other, QUOTE)
        )));
    }

    let mut ratio: u64 = 1;
    let filters = ::hdf5::sync::sync(|| unsafe {
        let n = H5Pget_nfilters(dcpl.0).max(0) as c_uint;
        (0..n)
            .map(|i| {
                let (mut flags, mut values, mut config) = (0, 0, 0);
                let mut name = vec![0u8; 256];
                let id = H5Pget_filter2(
                    dcpl.0,
                    i,
                    &mut flags,
                    &mut values,
                    std::ptr::null_mut(),
                    name.len(),
                    name.as_mut_ptr().cast(),
                    &mut config,
                );
                let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
                (id, String::from_utf8_lossy(&name[..end]).into_owned(), H5Zfilter_avail(id) > 0)
            })
            .collect::<Vec<_>>()
    });
    for (id, name, available) in filters {
        match BUILT_IN.iter().find(|(known, ..)| *known == id) {
            Some((.., most)) if available => ratio = ratio.saturating_mul(*most),
            _ => {
                let named = if name.is_empty() { String::new() } else { format!(" (\"{}\")", quoted(&name, 64)) };
                let have: Vec<&str> = BUILT_IN.iter().map(|(_, n, _)| *n).collect();
                return Err(fail(format!(
                    "dataset {quoted_path} is encoded with filter {id}{named}, which seisimage does not have (it \
                     reads {}); HDF5 filter plugins are never loaded, as they would run code the file chooses. \
                     Rewrite the file without it, e.g. with h5repack -f GZIP=4",
                    have.join(", ")
                )));
            }
        }
    }

    let shape = ds.shape();
    let element = ds.dtype().map(|t| t.size() as u64).unwrap_or(1).max(1);
    let values = shape.iter().try_fold(1u64, |n, &d| n.checked_mul(d as u64)).unwrap_or(u64::MAX);
    let declared = values.saturating_mul(element);
    if declared > file_len.saturating_mul(ratio) {
        let compressed = match ratio {
            1 => String::new(),
            r => format!(", even compressed by its filters ({r}:1 at most)"),
        };
        let unit = if element == 1 { "byte" } else { "bytes" };
        return Err(fail(format!(
            "dataset {quoted_path} declares {values} values of {element} {unit} (shape {shape:?}, {}), more than a \
             file of {file_len} bytes holds{compressed}; values that are not stored in the file are not read",
            human_bytes(declared)
        )));
    }
    if layout == LAYOUT_CHUNKED {
        if let Some(chunk) = ds.chunk() {
            let chunks = shape
                .iter()
                .zip(&chunk)
                .try_fold(1u64, |n, (&d, &c)| n.checked_mul((d as u64).div_ceil(c.max(1) as u64)))
                .unwrap_or(u64::MAX);
            if chunks > (file_len / 8).max(1) {
                return Err(fail(format!(
                    "dataset {quoted_path} is cut into {chunks} chunks of shape {chunk:?}, more than a file of \
                     {file_len} bytes can index (each chunk takes 8 bytes at least)"
                )));
            }
        }
    } else if layout != LAYOUT_CONTIGUOUS && layout != 0 {
        return Err(fail(format!("dataset {quoted_path} has a storage layout ({layout}) seisimage does not read")));
    }
    Ok(())
}
