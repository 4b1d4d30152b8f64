//! The 240-byte trace header: the fields seisimage reads or writes, the configurable byte locations of
//! inline, crossline and coordinates, and the SEG-Y scalar rule.

use serde::Serialize;

use super::byte_order::ByteOrder;
use super::HeaderPreset;

pub const TRACE_HEADER_LEN: usize = 240;

/// Trace identification code (bytes 29-30) of a dead trace.
pub const TRACE_ID_DEAD: i16 = 2;
/// Trace identification code of a live seismic trace.
pub const TRACE_ID_SEISMIC: i16 = 1;

/// 1-based byte locations of the 4-byte trace header fields that place a trace in the survey.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct HeaderLocations {
    pub iline: u16,
    pub xline: u16,
    pub x: u16,
    pub y: u16,
}

/// Byte location of the source-receiver offset, used to recognise pre-stack files.
pub const OFFSET_BYTE: u16 = 37;

impl HeaderPreset {
    pub fn locations(self) -> HeaderLocations {
        match self {
            HeaderPreset::Standard => HeaderLocations { iline: 189, xline: 193, x: 181, y: 185 },
            HeaderPreset::Petrel => HeaderLocations { iline: 5, xline: 21, x: 73, y: 77 },
        }
    }
}

impl HeaderLocations {
    /// A location that cannot hold a 4-byte field of the 240-byte header, by name.
    pub fn invalid(&self) -> Option<(&'static str, u16)> {
        [("iline", self.iline), ("xline", self.xline), ("x", self.x), ("y", self.y)]
            .into_iter()
            .find(|&(_, byte)| !(1..=TRACE_HEADER_LEN as u16 - 3).contains(&byte))
    }
}

/// The trace header fields seisimage uses, as stored (scalars not applied).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct TraceHeader {
    /// 1-4: trace sequence number within line.
    pub sequence_in_line: i32,
    /// 5-8: trace sequence number within file.
    pub sequence_in_file: i32,
    /// 21-24: CDP ensemble number.
    pub cdp: i32,
    /// 29-30: trace identification code (1 seismic, 2 dead).
    pub trace_id: i16,
    /// 37-40: source-receiver offset.
    pub offset: i32,
    /// 71-72: scalar for coordinates.
    pub coordinate_scalar: i16,
    /// 109-110: delay recording time (ms; m in seisimage depth files).
    pub delay: i16,
    /// 115-116: samples in this trace.
    pub samples: u16,
    /// 117-118: sample interval (µs; mm in seisimage depth files).
    pub sample_interval: i16,
    /// 215-216: scalar for the times of bytes 95-114 (the delay among them).
    pub time_scalar: i16,
    /// Inline number, at the configured location (189 standard).
    pub iline: i32,
    /// Crossline number, at the configured location (193 standard).
    pub xline: i32,
    /// Easting, at the configured location (CDP x, 181 standard).
    pub x: i32,
    /// Northing, at the configured location (CDP y, 185 standard).
    pub y: i32,
}

impl TraceHeader {
    /// Parse the fields from a 240-byte header. The locations must be valid ([`HeaderLocations::invalid`]).
    ///
    /// Every field sits at a fixed byte, so each is read straight from its bytes: opening a file reads every
    /// trace's header, and this is most of that work.
    pub fn parse(bytes: &[u8; TRACE_HEADER_LEN], order: ByteOrder, at: &HeaderLocations) -> TraceHeader {
        let i32_at = |byte| word_at(bytes, byte, order);
        let i16_at = |byte| order.read_i16(field(bytes, byte));
        TraceHeader {
            sequence_in_line: i32_at(1),
            sequence_in_file: i32_at(5),
            cdp: i32_at(21),
            trace_id: i16_at(29),
            offset: i32_at(OFFSET_BYTE),
            coordinate_scalar: i16_at(71),
            delay: i16_at(109),
            samples: order.read_u16(field(bytes, 115)),
            sample_interval: i16_at(117),
            time_scalar: i16_at(215),
            iline: i32_at(at.iline),
            xline: i32_at(at.xline),
            x: i32_at(at.x),
            y: i32_at(at.y),
        }
    }

    /// The header bytes of a trace written by seisimage: inline and crossline at the standard locations,
    /// the coordinates both as CDP x/y (181/185) and as source x/y (73/77).
    pub fn to_bytes(&self, order: ByteOrder) -> [u8; TRACE_HEADER_LEN] {
        let mut b = [0u8; TRACE_HEADER_LEN];
        let mut put = |byte: usize, v: &[u8]| b[byte - 1..byte - 1 + v.len()].copy_from_slice(v);
        put(1, &order.i32(self.sequence_in_line));
        put(5, &order.i32(self.sequence_in_file));
        put(21, &order.i32(self.cdp));
        put(29, &order.i16(self.trace_id));
        put(35, &order.i16(1)); // data use: production
        put(37, &order.i32(self.offset));
        put(71, &order.i16(self.coordinate_scalar));
        put(73, &order.i32(self.x));
        put(77, &order.i32(self.y));
        put(89, &order.i16(1)); // coordinate units: length
        put(109, &order.i16(self.delay));
        put(115, &order.u16(self.samples));
        put(117, &order.i16(self.sample_interval));
        put(181, &order.i32(self.x));
        put(185, &order.i32(self.y));
        put(189, &order.i32(self.iline));
        put(193, &order.i32(self.xline));
        put(215, &order.i16(self.time_scalar));
        b
    }

    /// Easting and northing with the coordinate scalar applied.
    pub fn xy(&self) -> [f64; 2] {
        [apply_scalar(self.x as f64, self.coordinate_scalar), apply_scalar(self.y as f64, self.coordinate_scalar)]
    }

    /// Time (or depth) of the first sample: the delay with the time scalar applied.
    pub fn first_sample(&self) -> f64 {
        apply_scalar(self.delay as f64, self.time_scalar)
    }

    pub fn is_dead(&self) -> bool {
        self.trace_id == TRACE_ID_DEAD
    }
}

/// The 4-byte signed word at a 1-based byte location of a trace header (valid locations only).
pub fn word_at(bytes: &[u8; TRACE_HEADER_LEN], byte: u16, order: ByteOrder) -> i32 {
    order.read_i32(field(bytes, byte))
}

/// The `N` bytes at a 1-based byte location of a trace header (valid locations only).
fn field<const N: usize>(bytes: &[u8; TRACE_HEADER_LEN], byte: u16) -> [u8; N] {
    bytes[byte as usize - 1..][..N].try_into().expect("field inside the 240-byte header")
}

/// The SEG-Y scalar rule: 0 means 1, a positive scalar multiplies, a negative one divides.
pub fn apply_scalar(value: f64, scalar: i16) -> f64 {
    match scalar {
        0 => value,
        s if s > 0 => value * s as f64,
        s => value / -(s as f64),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalar_rule() {
        assert_eq!(apply_scalar(12345.0, 0), 12345.0);
        assert_eq!(apply_scalar(12345.0, 1), 12345.0);
        assert_eq!(apply_scalar(12345.0, 10), 123450.0);
        assert_eq!(apply_scalar(12345.0, -100), 123.45);
    }

    #[test]
    fn configured_locations_are_read_and_checked() {
        let mut bytes = [0u8; TRACE_HEADER_LEN];
        bytes[4..8].copy_from_slice(&7i32.to_le_bytes());
        bytes[20..24].copy_from_slice(&9i32.to_le_bytes());
        bytes[188..192].copy_from_slice(&1i32.to_le_bytes());
        bytes[70..72].copy_from_slice(&(-100i16).to_le_bytes());
        bytes[72..76].copy_from_slice(&123456i32.to_le_bytes());
        bytes[108..110].copy_from_slice(&10000i16.to_le_bytes());
        bytes[214..216].copy_from_slice(&(-10i16).to_le_bytes());
        let petrel = TraceHeader::parse(&bytes, ByteOrder::Little, &HeaderPreset::Petrel.locations());
        assert_eq!((petrel.iline, petrel.xline, petrel.x), (7, 9, 123456));
        assert_eq!(petrel.xy()[0], 1234.56);
        assert_eq!(petrel.first_sample(), 1000.0);
        let standard = TraceHeader::parse(&bytes, ByteOrder::Little, &HeaderPreset::Standard.locations());
        assert_eq!((standard.iline, standard.x), (1, 0));
        let bad = HeaderLocations { iline: 238, ..HeaderPreset::Standard.locations() };
        assert_eq!(bad.invalid(), Some(("iline", 238)));
        assert_eq!(HeaderLocations { x: 0, ..bad }.invalid(), Some(("iline", 238)));
        assert_eq!(HeaderPreset::Petrel.locations().invalid(), None);
    }

    #[test]
    fn written_headers_parse_back() {
        let h = TraceHeader {
            sequence_in_line: 3,
            sequence_in_file: 13,
            cdp: 13,
            trace_id: TRACE_ID_DEAD,
            offset: 0,
            coordinate_scalar: -100,
            delay: 250,
            samples: 1001,
            sample_interval: 2000,
            time_scalar: -10,
            iline: 1200,
            xline: -5,
            x: 62_019_720,
            y: 607_423_290,
        };
        for order in [ByteOrder::Big, ByteOrder::Little] {
            let bytes = h.to_bytes(order);
            assert_eq!(TraceHeader::parse(&bytes, order, &HeaderPreset::Standard.locations()), h);
            let source = TraceHeader::parse(&bytes, order, &HeaderLocations { x: 73, y: 77, iline: 189, xline: 193 });
            assert_eq!(source.xy(), h.xy());
            assert!(source.is_dead());
        }
    }
}
