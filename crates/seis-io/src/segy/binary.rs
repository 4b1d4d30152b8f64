//! The 400-byte binary file header (file bytes 3201-3600): the fields of SEG-Y rev 0, 1 and 2 that decide
//! how the traces are laid out, parsed with `nom` in one order or the other.

use nom::bytes::complete::take;
use nom::combinator::peek;
use nom::number::complete::{f64 as nom_f64, i16, i32, u16, u64, u8};
use nom::Parser;
use serde::Serialize;

use super::byte_order::ByteOrder;

/// Where the binary header starts in the file (0-based).
pub const BINARY_HEADER_START: usize = 3200;
pub const BINARY_HEADER_LEN: usize = 400;
/// The text and binary file headers together: where extended text headers (or the traces) start.
pub const FILE_HEADER_LEN: usize = BINARY_HEADER_START + BINARY_HEADER_LEN;

/// The binary header fields seisimage reads or writes (byte numbers are 1-based file positions).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct BinaryHeader {
    /// 3213: data traces per ensemble.
    pub traces_per_ensemble: i16,
    /// 3217: sample interval in µs (in mm for seisimage's depth volumes).
    pub sample_interval: i16,
    /// 3221: samples per trace (unsigned since rev 2).
    pub samples_per_trace: u16,
    /// 3225: sample format code.
    pub format_code: i16,
    /// 3227: ensemble fold.
    pub ensemble_fold: i16,
    /// 3229: trace sorting code (4 = horizontally stacked).
    pub sorting_code: i16,
    /// 3255: measurement system (1 = metres, 2 = feet).
    pub measurement_system: i16,
    /// 3269 (rev 2): samples per trace when more than 65535, else 0.
    pub ext_samples_per_trace: i32,
    /// 3273 (rev 2): sample interval as an IEEE double, overriding 3217 when positive.
    pub ext_sample_interval: f64,
    /// 3297-3300 as stored: 01 02 03 04 in a big-endian file, 04 03 02 01 in a little-endian one (rev 2).
    pub byte_order_mark: [u8; 4],
    /// 3501 and 3502 as stored: major and minor revision (see [`BinaryHeader::revision`]).
    pub revision_bytes: [u8; 2],
    /// 3503: 1 when every trace has the same length.
    pub fixed_length: i16,
    /// 3505: number of 3200-byte extended text headers; -1 means "until the ((SEG: EndText)) stanza".
    pub ext_text_headers: i16,
    /// 3507-3508 (rev 2.1): maximum number of additional 240-byte trace headers.
    pub extra_trace_headers: u16,
    /// 3507-3510 read as one 4-byte number, the layout of that field in rev 2.0.
    pub extra_trace_headers_rev20: i32,
    /// 3513-3520 (rev 2): number of traces in the file.
    pub traces_in_file: u64,
    /// 3521-3528 (rev 2): byte offset of the first trace, 0 when not given.
    pub first_trace_offset: u64,
}

impl BinaryHeader {
    /// Parse the 400 bytes of the binary header in the given byte order.
    pub fn parse(bytes: &[u8; BINARY_HEADER_LEN], order: ByteOrder) -> BinaryHeader {
        let e = order.nom();
        let mut fields = (
            // 3201-3212: job, line and reel numbers
            take(12usize),
            (i16(e), take(2usize), i16(e), take(2usize), u16(e), take(2usize), i16(e), i16(e), i16(e)),
            // 3231-3254: vertical sum, sweep, correlation, gain and filter codes
            take(24usize),
            i16(e),
            take(12usize),
            (i32(e), nom_f64(e)),
            // 3281-3296: extended original interval, original samples and fold
            take(16usize),
            take(4usize),
            // 3301-3500: unassigned
            take(200usize),
            (u8, u8, i16(e), i16(e), peek(i32(e)), u16(e), take(4usize), u64(e), u64(e)),
        );
        let result: nom::IResult<&[u8], _> = fields.parse(&bytes[..]);
        let (_, (_, main, _, measurement_system, _, ext, _, mark, _, rev2)) =
            result.expect("the 400-byte binary header holds every field");
        let (traces_per_ensemble, _, sample_interval, _, samples_per_trace, _, format_code, ensemble_fold, sorting) =
            main;
        let (major, minor, fixed_length, ext_text_headers, extra_rev20, extra, _, traces_in_file, first_trace) = rev2;
        BinaryHeader {
            traces_per_ensemble,
            sample_interval,
            samples_per_trace,
            format_code,
            ensemble_fold,
            sorting_code: sorting,
            measurement_system,
            ext_samples_per_trace: ext.0,
            ext_sample_interval: ext.1,
            byte_order_mark: mark.try_into().expect("4 bytes"),
            revision_bytes: [major, minor],
            fixed_length,
            ext_text_headers,
            extra_trace_headers: extra,
            extra_trace_headers_rev20: extra_rev20,
            traces_in_file,
            first_trace_offset: first_trace,
        }
    }

    /// The 400 bytes of this header in the given byte order; fields seisimage does not model are zero.
    pub fn to_bytes(&self, order: ByteOrder) -> [u8; BINARY_HEADER_LEN] {
        let mut b = [0u8; BINARY_HEADER_LEN];
        let mut put = |byte: usize, v: &[u8]| b[byte - 3201..byte - 3201 + v.len()].copy_from_slice(v);
        put(3213, &order.i16(self.traces_per_ensemble));
        put(3217, &order.i16(self.sample_interval));
        put(3219, &order.i16(self.sample_interval));
        put(3221, &order.u16(self.samples_per_trace));
        put(3223, &order.u16(self.samples_per_trace));
        put(3225, &order.i16(self.format_code));
        put(3227, &order.i16(self.ensemble_fold));
        put(3229, &order.i16(self.sorting_code));
        put(3255, &order.i16(self.measurement_system));
        put(3269, &order.i32(self.ext_samples_per_trace));
        put(3273, &order.f64(self.ext_sample_interval));
        put(3297, &self.byte_order_mark);
        put(3501, &self.revision_bytes);
        put(3503, &order.i16(self.fixed_length));
        put(3505, &order.i16(self.ext_text_headers));
        put(3507, &order.u16(self.extra_trace_headers));
        put(3513, &order.u64(self.traces_in_file));
        put(3521, &order.u64(self.first_trace_offset));
        b
    }

    /// Major and minor revision.
    ///
    /// Rev 1 defined bytes 3501-3502 as one 2-byte number (0x0100 for 1.0), rev 2 as two single bytes; both
    /// store `[1, 0]` in a big-endian file. Writers that stored the 2-byte number little-endian leave `[0, 1]`
    /// or `[0, 2]`, which name no revision: those are read as 1.0 and 2.0.
    pub fn revision(&self) -> (u8, u8) {
        match self.revision_bytes {
            [0, minor @ (1 | 2)] => (minor, 0),
            [major, minor] => (major, minor),
        }
    }

    /// Additional 240-byte trace headers after each standard one (rev 2 only).
    ///
    /// Rev 2.1 made 3507-3508 a 2-byte field; rev 2.0 had a 4-byte one at 3507-3510. Writers of rev 2.0 files
    /// use both, so a rev 2.0 file whose 2-byte field reads 0 is read with the 4-byte layout (a big-endian
    /// 4-byte count below 65536 has its 2 high bytes, the 2-byte field, at zero).
    pub fn extra_trace_headers(&self) -> i64 {
        match self.revision() {
            (0 | 1, _) => 0,
            (2, 0) if self.extra_trace_headers == 0 => self.extra_trace_headers_rev20 as i64,
            _ => self.extra_trace_headers as i64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_land_at_their_byte_numbers_in_both_orders() {
        let h = BinaryHeader {
            traces_per_ensemble: 18,
            sample_interval: 4000,
            samples_per_trace: 60000,
            format_code: 5,
            ensemble_fold: 1,
            sorting_code: 4,
            measurement_system: 1,
            ext_samples_per_trace: 70000,
            ext_sample_interval: 0.5,
            byte_order_mark: [1, 2, 3, 4],
            revision_bytes: [2, 0],
            fixed_length: 1,
            ext_text_headers: -1,
            extra_trace_headers: 3,
            extra_trace_headers_rev20: 0,
            traces_in_file: 1 << 40,
            first_trace_offset: 3600,
        };
        for order in [ByteOrder::Big, ByteOrder::Little] {
            let bytes = h.to_bytes(order);
            let at = |byte: usize, n: usize| &bytes[byte - 3201..byte - 3201 + n];
            assert_eq!(at(3217, 2), order.i16(4000));
            assert_eq!(at(3221, 2), order.u16(60000));
            assert_eq!(at(3225, 2), order.i16(5));
            assert_eq!(at(3269, 4), order.i32(70000));
            assert_eq!(at(3297, 4), [1, 2, 3, 4]);
            assert_eq!(at(3501, 2), [2, 0]);
            assert_eq!(at(3505, 2), order.i16(-1));
            assert_eq!(at(3513, 8), order.u64(1 << 40));
            let back = BinaryHeader::parse(&bytes, order);
            let expected_rev20 = match order {
                ByteOrder::Big => 3 << 16,
                ByteOrder::Little => 3,
            };
            assert_eq!(back, BinaryHeader { extra_trace_headers_rev20: expected_rev20, ..h.clone() });
            assert_eq!(back.extra_trace_headers(), 3);
        }
    }

    #[test]
    fn rev_2_0_four_byte_trace_header_count() {
        let mut bytes = [0u8; BINARY_HEADER_LEN];
        bytes[300] = 2;
        bytes[306..310].copy_from_slice(&2i32.to_be_bytes());
        let h = BinaryHeader::parse(&bytes, ByteOrder::Big);
        assert_eq!(h.extra_trace_headers(), 2, "rev 2.0: 4-byte field");
        bytes[301] = 1;
        let h = BinaryHeader::parse(&bytes, ByteOrder::Big);
        assert_eq!(h.extra_trace_headers(), 0, "rev 2.1: only the 2-byte field counts");
        bytes[300] = 1;
        bytes[306..308].copy_from_slice(&5u16.to_be_bytes());
        let h = BinaryHeader::parse(&bytes, ByteOrder::Big);
        assert_eq!(h.extra_trace_headers(), 0, "rev 1 has no additional trace headers");
    }

    #[test]
    fn revision_stored_as_a_little_endian_number() {
        let h = |bytes: [u8; 2]| BinaryHeader { revision_bytes: bytes, ..Default::default() }.revision();
        assert_eq!(h([1, 0]), (1, 0));
        assert_eq!(h([0, 1]), (1, 0));
        assert_eq!(h([0, 2]), (2, 0));
        assert_eq!(h([2, 1]), (2, 1));
        assert_eq!(h([0, 0]), (0, 0));
    }
}
