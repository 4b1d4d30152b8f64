//! HDF5 files built from fuzzer bytes through a structured description, not raw bytes: HDF5 itself is C code
//! we do not fuzz, but what seisimage does with what it finds in a valid file (which datasets and attributes
//! there are, their shapes, types and values) is ours. The description covers what the reader looks at:
//! the volume's shape, type and storage; the companion datasets `iline`, `xline`, `twt`, `depth` and `live`
//! with any shape, type and values; attributes of any type on the volume, its group and the companions,
//! under the names the reader knows and others.

use std::path::Path;

use arbitrary::Arbitrary;
use hdf5::types::{FixedAscii, VarLenAscii, VarLenUnicode};
use hdf5::{Dataset, Group, H5Type, Location};

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

/// Build the file `path` describes; `None` when HDF5 refuses the description (a name it cannot hold, a
/// dimension too large for it): such inputs are simply skipped. Returns the dataset path to open.
pub fn build(spec: &FileSpec, path: &Path) -> Option<String> {
    let file = hdf5::File::create(path).ok()?;
    let group: Group = if spec.nested { file.create_group("g").ok()? } else { file.group("/").ok()? };
    let [n_il, n_xl, n_s] = spec.volume_shape.map(Dim::len);
    let mut budget = MAX_WRITTEN;
    let volume_shape = shape(&spec.volume.shape, &[n_il, n_xl, n_s]);
    let volume = dataset(&group, "seismic", &spec.volume, &volume_shape, &mut budget)?;
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
    let dataset = if spec.nested { "/g/seismic" } else { "/seismic" };
    Some(if spec.ask_elsewhere { format!("{dataset}_elsewhere") } else { dataset.to_string() })
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
