//! Writing post-stack volumes as SEG-Y rev 1 (or rev 2): EBCDIC text header, binary header, one trace per
//! grid cell in `[iline][xline]` order, IEEE or IBM floats. The file is written under a temporary name and
//! appears under its own name only when complete.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::binary::{BinaryHeader, FILE_HEADER_LEN};
use super::byte_order::ByteOrder;
use super::sample_format::{f32_to_ibm, SampleFormat};
use super::text::encode_ebcdic;
use super::trace_header::{TraceHeader, TRACE_ID_DEAD, TRACE_ID_SEISMIC};
use super::DEPTH_MARKER;
use crate::output::{BlockWriter, TempOutput};
use seis_core::cancel::CancelToken;
use seis_core::choice::Choice;
use seis_core::error::{Error, IoContext, Result};
use seis_core::volume::{Domain, Geometry};

/// Sample encoding of written files.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WriteFormat {
    /// Format 5, 4-byte IEEE float: exact.
    #[default]
    Ieee,
    /// Format 1, 4-byte IBM float, for older software; rounds to 21-24 significant bits.
    Ibm,
}

impl Choice for WriteFormat {
    const CHOICES: &'static [(Self, &'static str, &'static str)] = &[
        (WriteFormat::Ieee, "ieee", "Format 5, 4-byte IEEE float: exact."),
        (WriteFormat::Ibm, "ibm", "Format 1, 4-byte IBM float, for older software; rounds to 21-24 significant bits."),
    ];
}

impl WriteFormat {
    pub fn sample_format(self) -> SampleFormat {
        match self {
            WriteFormat::Ieee => SampleFormat::IeeeF32,
            WriteFormat::Ibm => SampleFormat::IbmF32,
        }
    }
}

/// How to write a SEG-Y file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SegyWriteOptions {
    pub format: WriteFormat,
    pub endian: ByteOrder,
    /// SEG-Y revision: 1 or 2. Rev 2 also stores sample counts above 32767 and fractional intervals.
    pub revision: u8,
    /// Extra text header lines (up to 76 characters each), after the lines seisimage writes.
    pub text: Vec<String>,
}

impl Default for SegyWriteOptions {
    fn default() -> Self {
        SegyWriteOptions { format: WriteFormat::Ieee, endian: ByteOrder::Big, revision: 1, text: Vec::new() }
    }
}

/// Write a whole volume (`geometry.n_values()` samples in `[iline][xline][sample]` order) to `path`.
pub fn write_volume(path: &Path, geometry: &Geometry, data: &[f32], opts: &SegyWriteOptions) -> Result<PathBuf> {
    if data.len() != geometry.n_values() {
        return Err(Error::Request(format!(
            "write {}: {} samples given for a {:?} volume ({} samples)",
            path.display(),
            data.len(),
            geometry.shape(),
            geometry.n_values()
        )));
    }
    let mut writer = SegyWriter::create(path, geometry, opts)?;
    for trace in data.chunks_exact(geometry.samples.len) {
        writer.write_trace(trace)?;
    }
    writer.finish()
}

/// A SEG-Y file being written trace by trace, in `[iline][xline]` order; dead cells of the live mask are
/// written too (zeros, trace identification code 2), so the file always holds the full grid.
pub struct SegyWriter {
    output: TempOutput,
    file: BlockWriter<File>,
    geometry: Geometry,
    format: SampleFormat,
    order: ByteOrder,
    /// Fields every trace header shares.
    common: TraceHeader,
    /// Coordinates are stored as `round(value * coordinate_to_stored)`.
    coordinate_to_stored: f64,
    written: usize,
    samples: Vec<u8>,
}

impl SegyWriter {
    /// Create the (temporary) file and write the text and binary headers.
    pub fn create(path: &Path, geometry: &Geometry, opts: &SegyWriteOptions) -> Result<SegyWriter> {
        let refuse = |why: String| Error::Request(format!("cannot write {} as SEG-Y: {why}", path.display()));
        if !matches!(opts.revision, 1 | 2) {
            return Err(refuse(format!("revision {} (seisimage writes revision 1 or 2)", opts.revision)));
        }
        if geometry.live.len() != geometry.n_traces() {
            return Err(refuse(format!(
                "the live mask has {} flags for {} traces",
                geometry.live.len(),
                geometry.n_traces()
            )));
        }
        let rev2 = opts.revision == 2;
        let axis = geometry.samples;
        let ns = axis.len;
        let ns_limit = if rev2 { i32::MAX as usize } else { i16::MAX as usize };
        if ns == 0 || ns > ns_limit {
            return Err(refuse(format!("{ns} samples per trace (revision {} allows 1 to {ns_limit})", opts.revision)));
        }
        for (name, axis) in [("inline", geometry.ilines), ("crossline", geometry.xlines)] {
            if i32::try_from(axis.first).is_err() || i32::try_from(axis.last()).is_err() {
                return Err(refuse(format!(
                    "{name} numbers {}..={} do not fit 4-byte fields",
                    axis.first,
                    axis.last()
                )));
            }
        }
        // Interval in µs (time) or mm (depth), and the first sample as a 2-byte delay with a scalar.
        let interval = axis.step * 1000.0;
        let interval_field = fits_exactly(interval, i16::MAX as f64).filter(|&v| v > 0);
        if interval_field.is_none() && !rev2 {
            return Err(refuse(format!(
                "sample interval {interval} {} is not a whole number up to 32767 (bytes 3217-3218 of rev 1); write \
                 revision 2, which also stores it as a double",
                match axis.domain {
                    Domain::Time => "µs",
                    Domain::Depth => "mm",
                }
            )));
        }
        let (delay, time_scalar) = scaled_field(std::iter::once(axis.origin), i16::MAX as f64)
            .ok_or_else(|| refuse(format!("first sample {} does not fit the delay field", axis.origin)))?;
        let (coordinate_scalar, coordinate_to_stored) = match geometry.coords {
            None => (1, 0.0),
            Some(c) => {
                let xy = (0..geometry.ilines.len)
                    .flat_map(|i| (0..geometry.xlines.len).map(move |j| c.xy(i as f64, j as f64)))
                    .flatten();
                let (_, scalar) = scaled_field(xy, i32::MAX as f64)
                    .ok_or_else(|| refuse("coordinates do not fit 4-byte fields".to_string()))?;
                (scalar, 1.0 / factor_of(scalar))
            }
        };

        let format = opts.format.sample_format();
        let text = text_lines(geometry, format, opts, delay as f64 * factor_of(time_scalar))?;
        let binary = BinaryHeader {
            traces_per_ensemble: geometry.xlines.len.min(i16::MAX as usize) as i16,
            sample_interval: interval_field.unwrap_or(0) as i16,
            samples_per_trace: ns.min(u16::MAX as usize) as u16,
            format_code: format.code() as i16,
            ensemble_fold: 1,
            sorting_code: 4, // horizontally stacked
            ext_samples_per_trace: if rev2 { ns as i32 } else { 0 },
            ext_sample_interval: if rev2 { interval } else { 0.0 },
            byte_order_mark: opts.endian.u32(0x0102_0304),
            revision_bytes: [opts.revision, 0],
            fixed_length: 1,
            traces_in_file: if rev2 { geometry.n_traces() as u64 } else { 0 },
            first_trace_offset: if rev2 { FILE_HEADER_LEN as u64 } else { 0 },
            // Coordinates, bins and depths are metres throughout seisimage.
            measurement_system: 1,
            ..Default::default()
        };

        let (output, file) = TempOutput::create(path)?;
        let mut file = BlockWriter::new(file);
        file.write_all(&encode_ebcdic(&text)).at(path)?;
        file.write_all(&binary.to_bytes(opts.endian)).at(path)?;
        let common = TraceHeader {
            coordinate_scalar,
            delay: delay as i16,
            samples: ns.try_into().unwrap_or(0),
            sample_interval: binary.sample_interval,
            time_scalar,
            ..Default::default()
        };
        Ok(SegyWriter {
            output,
            file,
            geometry: geometry.clone(),
            format,
            order: opts.endian,
            common,
            coordinate_to_stored,
            written: 0,
            samples: Vec::with_capacity(ns * 4),
        })
    }

    /// Write the next trace of the grid (`[iline][xline]` order); `samples` holds one value per sample.
    pub fn write_trace(&mut self, samples: &[f32]) -> Result<()> {
        let g = &self.geometry;
        let t = self.written;
        if t >= g.n_traces() {
            return Err(Error::Request(format!("{}: all {} traces are already written", self.path(), g.n_traces())));
        }
        if samples.len() != g.samples.len {
            return Err(Error::Request(format!(
                "{}: trace {} has {} samples, the volume {}",
                self.path(),
                t + 1,
                samples.len(),
                g.samples.len
            )));
        }
        if t % 4096 == 0 {
            CancelToken::process().check()?;
        }
        let (i, j) = (t / g.xlines.len, t % g.xlines.len);
        let [x, y] = g.coords.map_or([0.0, 0.0], |c| c.xy(i as f64, j as f64));
        let header = TraceHeader {
            sequence_in_line: j as i32 + 1,
            sequence_in_file: t as i32 + 1,
            cdp: t as i32 + 1,
            trace_id: if g.live[t] { TRACE_ID_SEISMIC } else { TRACE_ID_DEAD },
            iline: g.ilines.value(i) as i32,
            xline: g.xlines.value(j) as i32,
            x: (x * self.coordinate_to_stored).round() as i32,
            y: (y * self.coordinate_to_stored).round() as i32,
            ..self.common
        };
        self.samples.clear();
        if !g.live[t] {
            // Zero, whatever the caller computed there: the cell holds no data.
            self.samples.resize(samples.len() * self.format.bytes(), 0);
        } else {
            self.encode(samples, &header)?;
        }
        let path = self.output.final_path();
        self.file.write_all(&header.to_bytes(self.order)).at(path)?;
        self.file.write_all(&self.samples).at(path)?;
        self.written += 1;
        Ok(())
    }

    /// The samples of a live trace in the file's format and byte order, into `self.samples`.
    fn encode(&mut self, samples: &[f32], header: &TraceHeader) -> Result<()> {
        match self.format {
            SampleFormat::IbmF32 => {
                for (k, &v) in samples.iter().enumerate() {
                    let word = f32_to_ibm(v).ok_or_else(|| {
                        Error::Request(format!(
                            "{}: sample {} of inline {} crossline {} is {v}, which IBM floats cannot hold; write IEEE \
                             floats",
                            self.path(),
                            k + 1,
                            header.iline,
                            header.xline
                        ))
                    })?;
                    self.samples.extend_from_slice(&self.order.u32(word));
                }
            }
            _ => self.samples.extend(samples.iter().flat_map(|&v| self.order.f32(v))),
        }
        Ok(())
    }

    /// Check that every trace was written, flush, and move the file to its name.
    pub fn finish(self) -> Result<PathBuf> {
        self.close()?.commit()
    }

    /// Check that every trace was written and flush, leaving the file under its temporary name.
    pub fn close(self) -> Result<TempOutput> {
        let n = self.geometry.n_traces();
        if self.written != n {
            return Err(Error::Request(format!(
                "{}: only {} of {n} traces were written; the file was not kept",
                self.path(),
                self.written
            )));
        }
        let file = self.file.into_inner().at(self.output.final_path())?;
        drop(file);
        Ok(self.output)
    }

    fn path(&self) -> String {
        self.output.final_path().display().to_string()
    }
}

/// `value` as an integer when it is one (to a relative 1e-9) and within `±limit`.
fn fits_exactly(value: f64, limit: f64) -> Option<i64> {
    let r = value.round();
    ((value - r).abs() <= 1e-9 * value.abs().max(1.0) && r.abs() <= limit).then_some(r as i64)
}

/// SEG-Y scalars, from the most to the least precise: divide by 10^4 ... 10, as is, multiply by 10 ... 10^4.
const SCALARS: [i16; 9] = [-10000, -1000, -100, -10, 1, 10, 100, 1000, 10000];

/// What stored integers are multiplied by to give the true values under `scalar`.
fn factor_of(scalar: i16) -> f64 {
    if scalar < 0 {
        -1.0 / scalar as f64
    } else {
        scalar as f64
    }
}

/// A scalar for `values` stored as integers within `±limit`: the plainest one that keeps them all exact,
/// else the most precise one that fits. Returns the first value as stored, and the scalar.
fn scaled_field(values: impl Iterator<Item = f64> + Clone, limit: f64) -> Option<(i64, i16)> {
    let stored = |scalar: i16, v: f64| v / factor_of(scalar);
    let fits = |scalar: i16| values.clone().all(|v| stored(scalar, v).abs().round() <= limit);
    let exact = |scalar: i16| values.clone().all(|v| fits_exactly(stored(scalar, v), limit).is_some());
    let plainest = [1, -10, -100, -1000, -10000].into_iter().find(|&s| exact(s));
    let scalar = plainest.or_else(|| SCALARS.into_iter().find(|&s| fits(s)))?;
    let first = values.clone().next().map_or(0.0, |v| stored(scalar, v).round());
    Some((first as i64, scalar))
}

/// The 40 lines of the text header.
fn text_lines(g: &Geometry, format: SampleFormat, opts: &SegyWriteOptions, first: f64) -> Result<Vec<String>> {
    let s = g.samples;
    let unit = s.domain.unit().to_uppercase();
    let order = match opts.endian {
        ByteOrder::Big => "BIG",
        ByteOrder::Little => "LITTLE",
    };
    let mut lines = vec![
        format!("SEISIMAGE {} POST-STACK VOLUME, SEG-Y REV {}", env!("CARGO_PKG_VERSION"), opts.revision),
        format!(
            "INLINES {} TO {} STEP {} ({}), BYTES 189-192",
            g.ilines.first,
            g.ilines.last(),
            g.ilines.step,
            g.ilines.len
        ),
        format!(
            "CROSSLINES {} TO {} STEP {} ({}), BYTES 193-196",
            g.xlines.first,
            g.xlines.last(),
            g.xlines.step,
            g.xlines.len
        ),
        "CDP X/Y BYTES 181/185 (ALSO SOURCE X/Y 73/77), SCALAR BYTES 71-72".to_string(),
        format!("{} SAMPLES, INTERVAL {} {unit}, FIRST {first} {unit}", s.len, s.step),
        format!("SAMPLE FORMAT {} ({}), {order}-ENDIAN", format.code(), format.name().to_uppercase()),
        format!("DEAD OR MISSING TRACES: {} (TRACE ID 2, ZERO SAMPLES)", g.n_missing()),
    ];
    if s.domain == Domain::Depth {
        lines.push(format!("{DEPTH_MARKER}: INTERVAL FIELDS HOLD DZ IN MM, DELAY Z0 IN M"));
    }
    let room = 39 - lines.len();
    if opts.text.len() > room {
        return Err(Error::Request(format!("{} extra text header lines given, room for {room}", opts.text.len())));
    }
    if let Some(long) = opts.text.iter().find(|l| l.chars().count() > 76) {
        return Err(Error::Request(format!("text header line longer than 76 characters: {long:?}")));
    }
    lines.extend(opts.text.iter().cloned());
    lines.resize(39, String::new());
    lines.push(if opts.revision >= 2 { "END TEXTUAL HEADER" } else { "END EBCDIC" }.to_string());
    Ok(lines.iter().enumerate().map(|(k, line)| format!("C{:>2} {line}", k + 1)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalars_keep_values_exact_when_they_can() {
        assert_eq!(scaled_field([1000.0].into_iter(), 32767.0), Some((1000, 1)));
        assert_eq!(scaled_field([2.5].into_iter(), 32767.0), Some((25, -10)));
        assert_eq!(scaled_field([0.1234].into_iter(), 32767.0), Some((1234, -10000)));
        // Not exact at any scalar: the most precise that fits.
        assert_eq!(scaled_field([1.0 / 3.0].into_iter(), 32767.0), Some((3333, -10000)));
        // Too large to store as is: a multiplier, rounding.
        assert_eq!(scaled_field([100_004.0].into_iter(), 32767.0), Some((10000, 10)));
        assert_eq!(scaled_field([1e12].into_iter(), 32767.0), None);
        // Map coordinates with centimetres fit a 4-byte field divided by 100.
        assert_eq!(scaled_field([605_123.45, 6_070_000.5].into_iter(), i32::MAX as f64), Some((60_512_345, -100)));
        assert_eq!(factor_of(-100), 0.01);
        assert_eq!(factor_of(10), 10.0);
    }
}
