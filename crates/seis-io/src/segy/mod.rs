//! SEG-Y rev 0/1/2 post-stack volumes: headers parsed with `nom`, the file memory-mapped, traces decoded
//! in parallel straight into the caller's buffer.
//!
//! The modules follow the data flow of a read: [`text`] and [`binary`] headers, then [`layout`] (the
//! [`byte_order`], trace size, trace count) and the [`sample_format`], giving a [`SegyFile`] ([`mod@file`]) that reads
//! any trace by number and knows nothing of grids; [`trace_header`] fields feed one sequential pass in
//! [`geometry`] that places every trace in the inline × crossline grid; [`reader`] serves boxes of that grid
//! ([`SegyReader`]). [`writer`] goes the other way.
//!
//! Byte numbers in messages and docs are the 1-based positions of the SEG-Y standard (3225-3226 is the format
//! code); error locations are 0-based offsets from the start of the file.

pub mod binary;
pub mod byte_order;
pub mod cdps;
pub mod file;
pub mod geometry;
pub mod layout;
pub mod reader;
pub mod sample_format;
pub mod text;
pub mod trace_header;
pub mod writer;

use serde::{Deserialize, Serialize};

use seis_core::error::{Error, Result};

pub use byte_order::ByteOrder;
pub use file::{SegyFile, SegyLayout};
pub use geometry::{Direction, Grid, Sorting};
pub use layout::ByteOrderSource;
pub use reader::{SegyReader, SegySummary};
pub use sample_format::SampleFormat;
use seis_core::choice::Choice;
pub use text::{TextEncoding, TextHeader};
pub use trace_header::{HeaderLocations, TraceHeader};
pub use writer::{write_volume, SegyWriteOptions, SegyWriter, WriteFormat};

/// Text-header line by which seisimage marks the depth volumes it writes; files without it read as time.
///
/// In such files the sample interval fields (binary 3217, trace 117) hold the depth step in millimetres and
/// the delay (trace 109, with the scalar at 215) the first depth in metres: the same numbers a time file
/// holds in µs and ms.
pub const DEPTH_MARKER: &str = "SEISIMAGE DEPTH VOLUME";

/// Named sets of trace-header byte locations (1-based, 4-byte integers).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HeaderPreset {
    /// SEG-Y rev 1: inline 189, crossline 193, CDP x 181, CDP y 185.
    #[default]
    Standard,
    /// Petrel's export: inline 5, crossline 21, x 73, y 77.
    Petrel,
}

impl Choice for HeaderPreset {
    const CHOICES: &'static [(Self, &'static str, &'static str)] = &[
        (HeaderPreset::Standard, "standard", "SEG-Y rev 1: inline 189, crossline 193, CDP x 181, CDP y 185."),
        (HeaderPreset::Petrel, "petrel", "Petrel's export: inline 5, crossline 21, x 73, y 77."),
    ];
}

/// Byte order of binary and trace headers and samples.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Endian {
    /// The rev-2 constant at bytes 3297-3300 when present, else the order that gives a plausible header.
    #[default]
    Auto,
    Big,
    Little,
}

impl Choice for Endian {
    const CHOICES: &'static [(Self, &'static str, &'static str)] = &[
        (
            Endian::Auto,
            "auto",
            "The rev-2 constant at bytes 3297-3300 when present, else the order that gives a plausible header.",
        ),
        (Endian::Big, "big", ""),
        (Endian::Little, "little", ""),
    ];
}

/// How to read a SEG-Y file's headers. Every key is optional in a job file.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SegyOptions {
    pub preset: HeaderPreset,
    /// Overrides of single byte locations (1-based); `None` keeps the preset's.
    pub iline_byte: Option<u16>,
    pub xline_byte: Option<u16>,
    pub x_byte: Option<u16>,
    pub y_byte: Option<u16>,
    pub endian: Endian,
    /// Sample format code to use instead of the one in the binary header (for files that state it wrongly).
    pub sample_format: Option<u16>,
    /// Sample interval in ms (m for depth volumes) to use instead of the headers' (for files without one).
    pub sample_interval: Option<f64>,
    /// The trace axis to read the samples in instead of the file's (time, unless seisimage marked it
    /// depth): depth for the files other software writes with depths in the time fields. The command
    /// line's `--domain`; a job's velocity cube says it with `velocity.domain` instead.
    #[serde(skip)]
    pub domain: Option<seis_core::volume::Domain>,
}

impl SegyOptions {
    /// The byte locations to read: the preset's, with the overrides applied, checked to lie in the header.
    pub fn locations(&self) -> Result<HeaderLocations> {
        let preset = self.preset.locations();
        let at = HeaderLocations {
            iline: self.iline_byte.unwrap_or(preset.iline),
            xline: self.xline_byte.unwrap_or(preset.xline),
            x: self.x_byte.unwrap_or(preset.x),
            y: self.y_byte.unwrap_or(preset.y),
        };
        match at.invalid() {
            None => Ok(at),
            Some((name, byte)) => Err(Error::at_key(
                format!("{name}_byte"),
                format!("{name}_byte = {byte}: a 4-byte trace header field must start at byte 1 to 237"),
            )),
        }
    }

    /// The sample interval forced by the options, if any, in the units of the headers (µs, or mm).
    pub fn interval_override(&self) -> Result<Option<f64>> {
        match self.sample_interval {
            Some(dt) if !(dt.is_finite() && dt > 0.0) => Err(Error::at_key(
                "sample_interval",
                format!("sample_interval = {dt}: must be a positive number of ms (m for depth)"),
            )),
            dt => Ok(dt.map(|dt| dt * 1000.0)),
        }
    }

    /// The sample format forced by the options, if any.
    pub fn format_override(&self) -> Result<Option<SampleFormat>> {
        self.sample_format
            .map(|code| {
                SampleFormat::from_code(code as i32)
                    .map_err(|e| Error::at_key("sample_format", format!("sample_format = {code}: {e}")))
            })
            .transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_take_any_subset_of_keys_and_check_locations() {
        let o: SegyOptions = toml::from_str("iline_byte = 9\nendian = \"little\"\nsample_interval = 2.0").unwrap();
        assert_eq!(o.preset, HeaderPreset::Standard);
        assert_eq!(o.locations().unwrap(), HeaderLocations { iline: 9, xline: 193, x: 181, y: 185 });
        assert_eq!(o.interval_override().unwrap(), Some(2000.0));
        let bad = SegyOptions { xline_byte: Some(238), ..o.clone() };
        assert!(bad.locations().unwrap_err().to_string().contains("xline_byte = 238"));
        let bad = SegyOptions { sample_format: Some(4), ..o.clone() };
        assert!(bad.format_override().unwrap_err().to_string().contains("sample_format = 4"));
        let bad = SegyOptions { sample_interval: Some(-1.0), ..o };
        assert!(bad.interval_override().is_err());
    }
}
