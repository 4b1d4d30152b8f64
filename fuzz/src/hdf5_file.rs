//! HDF5 files built from fuzzer bytes through a structured description, not raw bytes: HDF5 itself is C code
//! we do not fuzz, but what seisimage does with what it finds in a valid file (which datasets and attributes
//! there are, their shapes, types and values) is ours. The description covers what the reader looks at:
//! the volume's shape, type and storage; the companion datasets `iline`, `xline`, `twt`, `depth` and `live`
//! with any shape, type and values; attributes of any type on the volume, its group and the companions,
//! under the names the reader knows and others; and what a hostile file may try: a volume stored in another
//! file, mapped from one (virtual) or reached through an external link, a filter no build has, chunks of one
//! value, and soft and external links under the names the reader looks for. [`Built::leaves_file`] says
//! whether the file asks for something the reader must refuse.

use std::path::Path;

use arbitrary::Arbitrary;
use hdf5::types::{FixedAscii, VarLenAscii, VarLenUnicode};
use hdf5::{Dataset, Group, H5Type, Location};

use crate::scratch_path;

/// Values written in all, at most: datasets declared larger are left unwritten (chunked, so HDF5 stores
/// nothing for them and they read as fill values).
const MAX_WRITTEN: usize = 1 << 14;
/// Values in a chunk, at most.
const MAX_CHUNK: usize = 1 << 12;

#[derive(Arbitrary, Debug)]
pub struct FileSpec {
    /// The volume lives in the group `/g` rather than in the root group.
    pub nested: bool,
    /// The volume's shape, and the lengths its companion datasets are expected to have.
    pub volume_shape: [Dim; 3],
    pub volume: DatasetSpec,
    pub companions: Vec<(Companion, DatasetSpec)>,
    pub attributes: Vec<AttrSpec>,
    /// Ask the reader for a dataset that is not there (it lists the 3-D datasets the file holds).
    pub ask_elsewhere: bool,
    /// What the volume is besides its values, if anything.
    pub trick: Option<Trick>,
    /// Links beside the volume.
    pub links: Vec<LinkSpec>,
}

/// Ways a volume can take the reader out of its file, or to code, or to many small reads.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum Trick {
    /// Its values are kept in another file (external storage).
    StoredOutside,
    /// A virtual dataset mapping a dataset of another HDF5 file.
    Virtual,
    /// One chunk written as encoded by filter `256 + n`, which no build of HDF5 has.
    UnknownFilter(u16),
    /// Chunks of one value each.
    TinyChunks,
    /// The volume's name is an external link to a dataset of another file.
    ExternalLink,
    /// The volume's name is a soft link through a group that is an external link.
    SoftThroughExternal,
}

#[derive(Arbitrary, Debug)]
pub struct LinkSpec {
    /// A companion's name (what the reader looks for), or the name of another 3-D dataset.
    pub name: Companion,
    pub target: LinkTarget,
}

#[derive(Arbitrary, Debug)]
pub enum LinkTarget {
    /// A soft link to the volume itself.
    ToVolume,
    /// A soft link to a path that may not be there.
    Dangling(String),
    /// An external link to a dataset of another file.
    External,
}

/// A file built from a description.
pub struct Built {
    /// The dataset path to open.
    pub dataset: String,
    /// The file asks the reader to follow a link out of it, to read values stored elsewhere, or to load a
    /// filter plugin: an open that succeeds then is a fault.
    pub leaves_file: bool,
}

#[derive(Arbitrary, Debug, Clone, Copy, PartialEq)]
pub enum Companion {
    Iline,
    Xline,
    Twt,
    Depth,
    Live,
    /// Another 3-D dataset beside the volume.
    Other,
}

impl Companion {
    fn name(self) -> &'static str {
        match self {
            Companion::Iline => "iline",
            Companion::Xline => "xline",
            Companion::Twt => "twt",
            Companion::Depth => "depth",
            Companion::Live => "live",
            Companion::Other => "stack",
        }
    }
}

#[derive(Arbitrary, Debug)]
pub struct DatasetSpec {
    /// The shape the reader expects (half of the time), or another one.
    pub shape: Option<ShapeChange>,
    pub elements: Element,
    pub values: Values,
    /// Chunked and deflated (level 1) rather than contiguous.
    pub compressed: bool,
}

/// How a dataset's shape differs from the one the reader expects.
#[derive(Arbitrary, Debug)]
pub enum ShapeChange {
    Changed { index: u8, to: Dim },
    Dropped(u8),
    Added(Dim),
    Any(Vec<Dim>),
}

/// A dimension: empty, small, or anything up to 2^32.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum Dim {
    Zero,
    Small(u8),
    Large(u32),
}

impl Dim {
    fn len(self) -> usize {
        match self {
            Dim::Zero => 0,
            Dim::Small(n) => 1 + n as usize % 8,
            Dim::Large(n) => n as usize,
        }
    }
}

/// `expected`, changed as `change` says.
fn shape(change: &Option<ShapeChange>, expected: &[usize]) -> Vec<usize> {
    let mut shape = expected.to_vec();
    match change {
        None => {}
        Some(ShapeChange::Changed { index, to }) => {
            if let Some(d) = shape.get_mut(*index as usize % expected.len()) {
                *d = to.len();
            }
        }
        Some(ShapeChange::Dropped(index)) => {
            shape.remove(*index as usize % expected.len());
        }
        Some(ShapeChange::Added(d)) => shape.push(d.len()),
        Some(ShapeChange::Any(dims)) => shape = dims.iter().take(4).map(|d| d.len()).collect(),
    }
    shape
}

#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum Element {
    F32,
    F64,
    I8,
    U16,
    I32,
    I64,
    U64,
    Bool,
    Text,
}

/// The values a dataset holds, generated for its length.
#[derive(Arbitrary, Debug, Clone)]
pub enum Values {
    /// `first + i · step`: what an axis holds.
    Ramp { first: f64, step: f64 },
    /// The given values, repeated.
    Cycle(Vec<f64>),
    /// A ramp with one value replaced.
    Kinked { first: f64, step: f64, at: u16, value: f64 },
}

impl Values {
    fn at(&self, i: usize) -> f64 {
        match self {
            Values::Ramp { first, step } => first + *step * i as f64,
            Values::Cycle(v) if v.is_empty() => 0.0,
            Values::Cycle(v) => v[i % v.len()],
            Values::Kinked { first, step, at, value } => {
                if i == *at as usize {
                    *value
                } else {
                    first + *step * i as f64
                }
            }
        }
    }
}

#[derive(Arbitrary, Debug)]
pub struct AttrSpec {
    pub on: Holder,
    pub name: AttrName,
    pub value: AttrValue,
}

#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum Holder {
    Volume,
    /// The group that holds the volume.
    Group,
    /// The companion dataset of that kind, if the file has one.
    Companion(Companion),
}

#[derive(Arbitrary, Debug, Clone)]
pub enum AttrName {
    IlineFirst,
    IlineStep,
    XlineFirst,
    XlineStep,
    SampleOrigin,
    SampleStep,
    SampleUnit,
    Domain,
    CoordOrigin,
    CoordPerIline,
    CoordPerXline,
    Units,
    Other(String),
}

impl AttrName {
    fn name(&self) -> &str {
        match self {
            AttrName::IlineFirst => "iline_first",
            AttrName::IlineStep => "iline_step",
            AttrName::XlineFirst => "xline_first",
            AttrName::XlineStep => "xline_step",
            AttrName::SampleOrigin => "sample_origin",
            AttrName::SampleStep => "sample_step",
            AttrName::SampleUnit => "sample_unit",
            AttrName::Domain => "domain",
            AttrName::CoordOrigin => "coord_origin",
            AttrName::CoordPerIline => "coord_per_iline",
            AttrName::CoordPerXline => "coord_per_xline",
            AttrName::Units => "units",
            AttrName::Other(name) => name,
        }
    }
}

#[derive(Arbitrary, Debug, Clone)]
pub enum AttrValue {
    Int(Vec<i64>),
    Unsigned(Vec<u64>),
    Float(Vec<f64>),
    Float32(Vec<f32>),
    /// A word the reader knows (units, domains) or any text, stored as a variable-length UTF-8 string.
    Text(Word),
    /// The same, as a variable-length ASCII string.
    Ascii(Word),
    /// The same, as a fixed-length ASCII string of 16 bytes (NUL-padded).
    Fixed(Word),
    /// Several strings.
    Texts(Vec<Word>),
    Bool(bool),
}

#[derive(Arbitrary, Debug, Clone)]
pub enum Word {
    Known(u8),
    Any(String),
}

const KNOWN_WORDS: [&str; 12] =
    ["ms", "s", "m", "km", "time", "depth", "Depth", " seconds ", "ft", "", "twt", "metres"];

impl Word {
    fn text(&self) -> String {
        match self {
            Word::Known(k) => KNOWN_WORDS[*k as usize % KNOWN_WORDS.len()].to_string(),
            Word::Any(text) => text.clone(),
        }
    }
}

/// The HDF5 file other files of this process link to: `/data` of 2 × 2 × 8 float32 and `/iline`.
fn outside_h5() -> Option<std::path::PathBuf> {
    let path = scratch_path("outside.h5");
    if !path.exists() {
        let f = hdf5::File::create(&path).ok()?;
        f.new_dataset::<f32>().shape([2, 2, 8]).create("data").ok()?.write_raw(&[7.5f32; 32]).ok()?;
        f.new_dataset::<f64>().shape([2]).create("iline").ok()?.write_raw(&[1.0, 2.0]).ok()?;
    }
    Some(path)
}

/// Build the file `path` describes; `None` when HDF5 refuses the description (a name it cannot hold, a
/// dimension too large for it): such inputs are simply skipped.
pub fn build(spec: &FileSpec, path: &Path) -> Option<Built> {
    let file = hdf5::File::create(path).ok()?;
    let group: Group = if spec.nested { file.create_group("g").ok()? } else { file.group("/").ok()? };
    let [n_il, n_xl, n_s] = spec.volume_shape.map(Dim::len);
    let mut budget = MAX_WRITTEN;
    let volume_shape = shape(&spec.volume.shape, &[n_il, n_xl, n_s]);
    let mut leaves_file = false;
    let volume = match spec.trick {
        None => dataset(&group, "seismic", &spec.volume, &volume_shape, &mut budget)?,
        Some(trick) => {
            leaves_file = !matches!(trick, Trick::TinyChunks);
            tricked(&file, &group, trick, &volume_shape)?
        }
    };
    let mut companions: Vec<(Companion, Dataset)> = Vec::new();
    for (kind, ds_spec) in spec.companions.iter().take(6) {
        if companions.iter().any(|(k, _)| k == kind) {
            continue;
        }
        let expected = match kind {
            Companion::Iline => vec![n_il],
            Companion::Xline => vec![n_xl],
            Companion::Twt | Companion::Depth => vec![n_s],
            Companion::Live => vec![n_il, n_xl],
            Companion::Other => vec![n_il, n_xl, n_s],
        };
        let shape = shape(&ds_spec.shape, &expected);
        companions.push((*kind, dataset(&group, kind.name(), ds_spec, &shape, &mut budget)?));
    }
    for attr in spec.attributes.iter().take(16) {
        let holder: &Location = match attr.on {
            Holder::Volume => &volume,
            Holder::Group => &group,
            Holder::Companion(kind) => match companions.iter().find(|(k, _)| *k == kind) {
                Some((_, ds)) => ds,
                None => continue,
            },
        };
        if holder.attr_names().ok()?.iter().any(|n| n == attr.name.name()) {
            continue;
        }
        // An attribute HDF5 refuses (an empty array, a name it cannot hold) is left out.
        let _ = attribute(holder, attr.name.name(), &attr.value);
    }
    for link in spec.links.iter().take(4) {
        let name = link.name.name();
        if group.link_exists(name) {
            continue;
        }
        let made = match &link.target {
            LinkTarget::ToVolume => group.link_soft("seismic", name),
            LinkTarget::Dangling(target) if !target.is_empty() => group.link_soft(target, name),
            LinkTarget::Dangling(_) => continue,
            LinkTarget::External => group.link_external(outside_h5()?.to_str()?, "/iline", name),
        };
        // The reader looks at every companion's name: an external link there must be refused.
        leaves_file |= made.is_ok() && matches!(link.target, LinkTarget::External) && link.name != Companion::Other;
    }
    let dataset = if spec.nested { "/g/seismic" } else { "/seismic" };
    let dataset = if spec.ask_elsewhere { format!("{dataset}_elsewhere") } else { dataset.to_string() };
    Some(Built { leaves_file: leaves_file && !spec.ask_elsewhere, dataset })
}

/// The volume `seismic` of `group` in `file`, a float32 dataset of `shape` made as `trick` says.
fn tricked(file: &hdf5::File, group: &Group, trick: Trick, shape: &[usize]) -> Option<Dataset> {
    use hdf5_sys::h5d::{H5Dclose, H5Dcreate2, H5Dwrite_chunk};
    use hdf5_sys::h5p::{H5Pclose, H5Pcreate, H5Pset_chunk, H5Pset_filter, H5P_CLS_DATASET_CREATE, H5P_DEFAULT};
    let n = shape.iter().try_fold(1usize, |n, &d| n.checked_mul(d)).filter(|&n| n > 0 && n <= MAX_WRITTEN)?;
    let outside = outside_h5()?;
    match trick {
        Trick::StoredOutside => {
            let raw = scratch_path("outside.bin");
            std::fs::write(&raw, vec![0x3f; 4 * n]).ok()?;
            group.new_dataset::<f32>().shape(shape.to_vec()).external(raw.to_str()?, 0, 4 * n).create("seismic").ok()
        }
        Trick::Virtual => {
            let all = hdf5::Selection::All;
            group
                .new_dataset::<f32>()
                .shape([2usize, 2, 8])
                .virtual_map(outside.to_str()?, "/data", [2usize, 2, 8], all.clone(), [2usize, 2, 8], all)
                .create("seismic")
                .ok()
        }
        Trick::UnknownFilter(k) => {
            let space = hdf5::Dataspace::try_new(shape.to_vec()).ok()?;
            let dtype = hdf5::Datatype::from_type::<f32>().ok()?;
            let name = std::ffi::CString::new("seismic").ok()?;
            let chunk: Vec<u64> = shape.iter().map(|&d| d as u64).collect();
            let bytes = vec![0u8; 4 * n];
            let filter = 256 + i32::from(k) % 65000;
            // SAFETY: HDF5 calls under its lock, with buffers of the sizes given.
            let made = hdf5::sync::sync(|| unsafe {
                let plist = H5Pcreate(*H5P_CLS_DATASET_CREATE);
                H5Pset_chunk(plist, chunk.len() as _, chunk.as_ptr());
                H5Pset_filter(plist, filter, hdf5_sys::h5z::H5Z_FLAG_OPTIONAL, 0, std::ptr::null());
                let ds =
                    H5Dcreate2(group.id(), name.as_ptr(), dtype.id(), space.id(), H5P_DEFAULT, plist, H5P_DEFAULT);
                H5Pclose(plist);
                if ds < 0 {
                    return false;
                }
                let offset = vec![0u64; chunk.len()];
                let ok =
                    H5Dwrite_chunk(ds, H5P_DEFAULT, 0, offset.as_ptr(), bytes.len(), bytes.as_ptr().cast()) >= 0;
                H5Dclose(ds);
                ok
            });
            if made {
                group.dataset("seismic").ok()
            } else {
                None
            }
        }
        Trick::TinyChunks => {
            let ds =
                group.new_dataset::<f32>().shape(shape.to_vec()).chunk(vec![1; shape.len()]).create("seismic").ok()?;
            ds.write_raw(&vec![1.0f32; n]).ok()?;
            Some(ds)
        }
        Trick::ExternalLink => {
            group.link_external(outside.to_str()?, "/data", "seismic").ok()?;
            group.dataset("seismic").ok()
        }
        Trick::SoftThroughExternal => {
            file.link_external(outside.to_str()?, "/", "elsewhere").ok()?;
            group.link_soft("/elsewhere/data", "seismic").ok()?;
            group.dataset("seismic").ok()
        }
    }
}

/// A dataset of `shape` holding `spec.values`: written when the budget allows, else chunked and left empty.
fn dataset(group: &Group, name: &str, spec: &DatasetSpec, shape: &[usize], budget: &mut usize) -> Option<Dataset> {
    match spec.elements {
        Element::F32 => typed::<f32>(group, name, spec, shape, budget, |v| v as f32),
        Element::F64 => typed::<f64>(group, name, spec, shape, budget, |v| v),
        Element::I8 => typed::<i8>(group, name, spec, shape, budget, |v| v as i8),
        Element::U16 => typed::<u16>(group, name, spec, shape, budget, |v| v as u16),
        Element::I32 => typed::<i32>(group, name, spec, shape, budget, |v| v as i32),
        Element::I64 => typed::<i64>(group, name, spec, shape, budget, |v| v as i64),
        Element::U64 => typed::<u64>(group, name, spec, shape, budget, |v| v as u64),
        Element::Bool => typed::<bool>(group, name, spec, shape, budget, |v| v != 0.0),
        Element::Text => typed::<FixedAscii<8>>(group, name, spec, shape, budget, |v| fixed(&v.to_string())),
    }
}

fn typed<T: H5Type + Clone>(
    group: &Group,
    name: &str,
    spec: &DatasetSpec,
    shape: &[usize],
    budget: &mut usize,
    convert: impl Fn(f64) -> T,
) -> Option<Dataset> {
    let n = shape.iter().try_fold(1usize, |n, &d| n.checked_mul(d))?;
    let write = n <= *budget && !shape.is_empty();
    let chunked = (spec.compressed || !write) && !shape.contains(&0) && !shape.is_empty();
    let builder = group.new_dataset::<T>();
    let mut builder = builder.shape(shape.to_vec());
    if chunked {
        // Chunks of at most MAX_CHUNK values, cut from the last dimension first.
        let mut left = MAX_CHUNK;
        let mut chunk = vec![1usize; shape.len()];
        for (c, &d) in chunk.iter_mut().zip(shape).rev() {
            *c = d.min(left).max(1);
            left = (left / *c).max(1);
        }
        builder = builder.chunk(chunk);
        if spec.compressed {
            builder = builder.deflate(1);
        }
    }
    let ds = builder.create(name).ok()?;
    if write {
        *budget -= n;
        let values: Vec<T> = (0..n).map(|i| convert(spec.values.at(i))).collect();
        ds.write_raw(&values).ok()?;
    }
    Some(ds)
}

/// `text` cut to `N` bytes as a fixed-length ASCII string; empty if it is not ASCII.
fn fixed<const N: usize>(text: &str) -> FixedAscii<N> {
    FixedAscii::from_ascii(&text.as_bytes()[..text.len().min(N)]).unwrap_or_default()
}

fn attribute(holder: &Location, name: &str, value: &AttrValue) -> Option<()> {
    fn numbers<T: H5Type>(holder: &Location, name: &str, values: &[T]) -> Option<()> {
        let values = &values[..values.len().min(24)];
        if values.len() == 1 {
            holder.new_attr::<T>().create(name).ok()?.write_scalar(&values[0]).ok()
        } else {
            holder.new_attr::<T>().shape(values.len()).create(name).ok()?.write_raw(values).ok()
        }
    }
    match value {
        AttrValue::Int(v) => numbers(holder, name, v),
        AttrValue::Unsigned(v) => numbers(holder, name, v),
        AttrValue::Float(v) => numbers(holder, name, v),
        AttrValue::Float32(v) => numbers(holder, name, v),
        AttrValue::Bool(b) => numbers(holder, name, &[*b]),
        AttrValue::Text(word) => {
            let text: VarLenUnicode = word.text().parse().ok()?;
            holder.new_attr::<VarLenUnicode>().create(name).ok()?.write_scalar(&text).ok()
        }
        AttrValue::Ascii(word) => {
            let text = VarLenAscii::from_ascii(&word.text()).ok()?;
            holder.new_attr::<VarLenAscii>().create(name).ok()?.write_scalar(&text).ok()
        }
        AttrValue::Fixed(word) => {
            holder.new_attr::<FixedAscii<16>>().create(name).ok()?.write_scalar(&fixed::<16>(&word.text())).ok()
        }
        AttrValue::Texts(words) => {
            let texts: Vec<VarLenUnicode> = words.iter().take(8).filter_map(|w| w.text().parse().ok()).collect();
            holder.new_attr::<VarLenUnicode>().shape(texts.len()).create(name).ok()?.write_raw(&texts).ok()
        }
    }
}
