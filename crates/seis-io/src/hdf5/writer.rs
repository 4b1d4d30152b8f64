//! Writing volumes in the layout of docs/hdf5.md: the chunked (optionally compressed) volume dataset, its
//! axes as dimension scales beside it and as attributes on it, its coordinates and its live mask.

use std::path::{Path, PathBuf};

use ::hdf5::plist::dataset_create::FillTime;
use ::hdf5::{Dataset, File, Group, H5Type};
use serde::{Deserialize, Serialize};

use super::raw::{self, H5Context};
use super::{
    check_box, domain_name, join, line_attr_names, split_dataset_path, ATTR_COORD_ORIGIN, ATTR_COORD_PER_ILINE,
    ATTR_COORD_PER_XLINE, ATTR_DOMAIN, ATTR_SAMPLE_ORIGIN, ATTR_SAMPLE_STEP, ATTR_SAMPLE_UNIT, ATTR_UNITS,
    DEFAULT_DATASET, ILINE, LIVE, SAMPLE_AXES, XLINE,
};
use crate::TempOutput;
use seis_core::error::{Error, Result};
use seis_core::volume::{Domain, Geometry, IndexBox, LineAxis};

/// Chunk shape used unless one is given: cubes of 64³ float32 values (1 MiB), so that an inline, a
/// crossline and a time or depth slice each read the same, moderate excess (64 lines or samples deep) and
/// a chunk fits HDF5's default chunk cache. Clipped to the volume's shape.
pub const DEFAULT_CHUNK: [usize; 3] = [64, 64, 64];

/// A volume of at most this many bytes of values is one chunk unless a chunk shape is given: reading any
/// part of it reads all of it, which at this size costs little. Product regions are written beside the
/// pictures, and there one chunk wrote faster than cubes: the benchmark job's 8 MB region took 14-16 ms
/// from values to checksum instead of 16-20 ms (H200 host, 16 cores), though alone it takes 2 ms longer.
pub const ONE_CHUNK_MAX_BYTES: usize = 16 << 20;

/// How to write an HDF5 volume.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Hdf5WriteOptions {
    /// Path of the volume dataset inside the file; its axes are written beside it.
    pub dataset: String,
    /// Chunk shape `[iline, xline, sample]`; [`DEFAULT_CHUNK`] when `None`.
    pub chunk: Option<[usize; 3]>,
    /// Deflate (gzip) level 0-9, with the byte shuffle that helps floats compress; none when `None`.
    pub compression: Option<u8>,
    /// The CRS of the coordinates, written as the CF grid mapping `spatial_ref`.
    pub crs: Option<crate::crs::Crs>,
}

impl Default for Hdf5WriteOptions {
    fn default() -> Self {
        Hdf5WriteOptions { dataset: DEFAULT_DATASET.into(), chunk: None, compression: None, crs: None }
    }
}

/// Write a whole volume (`data` in `[il][xl][s]` order) to `path`, atomically.
pub fn write_volume(path: &Path, geometry: &Geometry, data: &[f32], opts: &Hdf5WriteOptions) -> Result<PathBuf> {
    if data.len() != geometry.n_values() {
        return Err(Error::Request(format!(
            "{}: {} values given for a volume of shape {:?} ({} values)",
            path.display(),
            data.len(),
            geometry.shape(),
            geometry.n_values()
        )));
    }
    let mut writer = Hdf5Writer::create(path, geometry, opts)?;
    writer.write_box(&geometry.full_box(), data)?;
    writer.finish()
}

/// An HDF5 volume being written piece by piece. Everything but the volume's values is written by
/// [`Hdf5Writer::create`]; boxes that are never written read as zeros. The file appears under its name
/// only at [`Hdf5Writer::finish`]; dropped before, it leaves nothing behind.
pub struct Hdf5Writer {
    // Field order is drop order: the HDF5 handles close before the temporary file is removed.
    volume: Dataset,
    file: File,
    dataset_path: String,
    shape: [usize; 3],
    output: TempOutput,
}

impl Hdf5Writer {
    pub fn create(path: &Path, geometry: &Geometry, opts: &Hdf5WriteOptions) -> Result<Self> {
        let shape = geometry.shape();
        let request = |message: String| Err(Error::Request(format!("{}: {message}", path.display())));
        if shape.contains(&0) {
            return request(format!("cannot write an empty volume (shape {shape:?})"));
        }
        if geometry.live.len() != geometry.n_traces() {
            return request(format!(
                "the live mask has {} flags for {} traces",
                geometry.live.len(),
                geometry.n_traces()
            ));
        }
        if let Some(level) = opts.compression.filter(|&l| l > 9) {
            return request(format!("deflate level {level} is not in 0-9"));
        }
        if let Some(chunk) = opts.chunk.filter(|c| c.contains(&0)) {
            return request(format!("chunk shape {chunk:?} has a zero"));
        }
        let (group_path, name) = split_dataset_path(path, &opts.dataset)?;
        let reserved = [ILINE, XLINE, LIVE, super::geo::CDP_X, super::geo::CDP_Y, super::geo::SPATIAL_REF]
            .into_iter()
            .chain(SAMPLE_AXES.map(Domain::axis_name));
        if reserved.clone().any(|r| r == name) {
            let names: Vec<_> = reserved.collect();
            return request(format!("the volume dataset cannot be named {name}: {} are its axes", names.join(", ")));
        }
        let dataset_path = join(&group_path, &name);

        super::guard::init();
        let (output, created) = TempOutput::create(path)?;
        // HDF5 opens the file by name: the name of the descriptor itself, so that it writes the file just
        // created and nothing a link put in its place.
        let file = super::unlocked()
            .create(crate::files::library_path(&created, output.path()))
            .doing(path, || "creating the file".into())?;
        drop(created);
        let group = if group_path == "/" {
            file.group("/")
        } else {
            file.create_group_builder().create_intermediate_group(true).create(group_path.as_str())
        }
        .doing(path, || format!("creating group {group_path}"))?;

        let chunk: [usize; 3] = match opts.chunk {
            None if shape.iter().product::<usize>() * 4 <= ONE_CHUNK_MAX_BYTES => shape,
            given => std::array::from_fn(|k| given.unwrap_or(DEFAULT_CHUNK)[k].min(shape[k])),
        };
        let builder = group.new_dataset::<f32>().shape(shape).chunk(chunk);
        let builder = match opts.compression {
            Some(level) => builder.shuffle().deflate(level),
            // A volume of one chunk is written in whole inlines (a product region in one piece), which lie
            // contiguous in the chunk, so HDF5 can write them straight from our buffer. Through its chunk
            // cache (8 MiB) it would first make the chunk in a buffer it allocates, fills with the fill
            // value and copies the values into, writing it at close: for the benchmark's 8 MB region,
            // values and close took 6.5-8 ms on the build machine, mostly faulting in that fresh buffer,
            // against about 2 ms straight. So such a volume has no chunk cache and no fill value written
            // first (every value is written).
            None if chunk == shape => builder.chunk_cache(0, 0, 0.75).fill_time(FillTime::Never),
            None => builder,
        };
        let volume = builder.create(name.as_str()).doing(path, || format!("creating dataset {dataset_path}"))?;
        write_labels(&group, &volume, geometry).doing(path, || format!("writing the axes of {dataset_path}"))?;
        super::geo::write_geography(&group, &volume, geometry, opts.crs.as_ref())
            .doing(path, || format!("writing the coordinates of {dataset_path}"))?;
        Ok(Hdf5Writer { volume, file, dataset_path, shape, output })
    }

    /// Write `data` (`[il][xl][s]` order, `b.len()` values) into box `b` of the volume.
    pub fn write_box(&mut self, b: &IndexBox, data: &[f32]) -> Result<()> {
        let path = self.output.final_path();
        check_box(path, b, self.shape, data.len())?;
        if b.is_empty() {
            return Ok(());
        }
        raw::write_box(&self.volume, b, data).doing(path, || format!("writing {b:?} of {}", self.dataset_path))
    }

    /// Close the file and move it to its final name.
    pub fn finish(self) -> Result<PathBuf> {
        self.close()?.commit()
    }

    /// Close the file, leaving it under its temporary name.
    pub fn close(self) -> Result<TempOutput> {
        let Hdf5Writer { volume, file, output, .. } = self;
        drop(volume);
        file.close().doing(output.final_path(), || "closing the file".into())?;
        Ok(output)
    }
}

/// Everything that labels the volume: axis datasets attached as dimension scales, the axis attributes,
/// the coordinates, and the live mask when a trace is missing.
fn write_labels(group: &Group, volume: &Dataset, g: &Geometry) -> ::hdf5::Result<()> {
    let line_values = |a: &LineAxis| (0..a.len).map(|i| a.value(i)).collect::<Vec<i64>>();
    let samples = &g.samples;
    let sample_name = samples.domain.axis_name();
    let iline = axis_dataset(group, ILINE, &line_values(&g.ilines))?;
    let xline = axis_dataset(group, XLINE, &line_values(&g.xlines))?;
    let sample = axis_dataset(group, sample_name, &(0..samples.len).map(|i| samples.value(i)).collect::<Vec<_>>())?;
    raw::write_text_attr(&sample, ATTR_UNITS, samples.domain.unit())?;
    let long_name = match samples.domain {
        Domain::Time => "two-way time",
        Domain::Depth => "depth",
    };
    raw::write_text_attr(&sample, "long_name", long_name)?;
    for (dim, (scale, name)) in [(&iline, ILINE), (&xline, XLINE), (&sample, sample_name)].into_iter().enumerate() {
        raw::set_scale(scale, name)?;
        raw::attach_scale(volume, dim, scale, name)?;
    }

    for (axis, a) in [(ILINE, &g.ilines), (XLINE, &g.xlines)] {
        let [first, step] = line_attr_names(axis);
        number_attr(volume, &first, a.first)?;
        number_attr(volume, &step, a.step)?;
    }
    raw::write_text_attr(volume, ATTR_DOMAIN, domain_name(samples.domain))?;
    raw::write_text_attr(volume, ATTR_SAMPLE_UNIT, samples.domain.unit())?;
    number_attr(volume, ATTR_SAMPLE_ORIGIN, samples.origin)?;
    number_attr(volume, ATTR_SAMPLE_STEP, samples.step)?;
    if let Some(c) = &g.coords {
        for (name, pair) in
            [(ATTR_COORD_ORIGIN, c.origin), (ATTR_COORD_PER_ILINE, c.per_iline), (ATTR_COORD_PER_XLINE, c.per_xline)]
        {
            volume.new_attr_builder().with_data(&pair).create(name)?;
        }
    }

    if g.n_missing() > 0 {
        let flags: Vec<u8> = g.live.iter().map(|&l| u8::from(l)).collect();
        let live = group.new_dataset::<u8>().shape([g.ilines.len, g.xlines.len]).create(LIVE)?;
        live.write_raw(&flags)?;
        raw::attach_scale(&live, 0, &iline, ILINE)?;
        raw::attach_scale(&live, 1, &xline, XLINE)?;
    }
    Ok(())
}

fn axis_dataset<T: H5Type>(group: &Group, name: &str, values: &[T]) -> ::hdf5::Result<Dataset> {
    group.new_dataset_builder().with_data(values).create(name)
}

fn number_attr<T: H5Type>(volume: &Dataset, name: &str, value: T) -> ::hdf5::Result<()> {
    volume.new_attr::<T>().create(name)?.write_scalar(&value)
}
