//! Sample formats (binary header bytes 3225-3226) and their conversion to and from `f32`.
//!
//! Every format of SEG-Y rev 2 except the obsolete 4-byte fixed point with gain (code 4) is decoded. Integers
//! become the nearest `f32` (exact up to 2^24 in magnitude); 8-byte floats are rounded to the nearest `f32`.

use serde::Serialize;

use super::byte_order::ByteOrder;

/// The encoding of trace samples.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum SampleFormat {
    /// 1: 4-byte IBM System/360 hexadecimal float.
    IbmF32,
    /// 2: 4-byte two's complement integer.
    I32,
    /// 3: 2-byte two's complement integer.
    I16,
    /// 5: 4-byte IEEE float.
    IeeeF32,
    /// 6: 8-byte IEEE float.
    IeeeF64,
    /// 7: 3-byte two's complement integer.
    I24,
    /// 8: 1-byte two's complement integer.
    I8,
    /// 9: 8-byte two's complement integer.
    I64,
    /// 10: 4-byte unsigned integer.
    U32,
    /// 11: 2-byte unsigned integer.
    U16,
    /// 12: 8-byte unsigned integer.
    U64,
    /// 15: 3-byte unsigned integer.
    U24,
    /// 16: 1-byte unsigned integer.
    U8,
}

/// Why a format code cannot be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FormatCodeError {
    /// Code 4, 4-byte fixed point with gain: defined by rev 0, removed from rev 2, not supported.
    FixedPointWithGain,
    Unknown(i32),
}

impl std::fmt::Display for FormatCodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FormatCodeError::FixedPointWithGain => write!(
                f,
                "sample format code 4 (4-byte fixed point with gain, obsolete since SEG-Y rev 2) is not supported; \
                 files marked 4 often hold 4-byte IEEE floats (format 5): if this one does, read it with \
                 sample_format = 5 (--format-code 5 on the command line)"
            ),
            FormatCodeError::Unknown(code) => write!(
                f,
                "unknown sample format code {code} (SEG-Y defines 1-3, 5-12, 15 and 16); the header may be corrupt, \
                 or the byte order wrong"
            ),
        }
    }
}

impl SampleFormat {
    pub const ALL: [SampleFormat; 13] = [
        SampleFormat::IbmF32,
        SampleFormat::I32,
        SampleFormat::I16,
        SampleFormat::IeeeF32,
        SampleFormat::IeeeF64,
        SampleFormat::I24,
        SampleFormat::I8,
        SampleFormat::I64,
        SampleFormat::U32,
        SampleFormat::U16,
        SampleFormat::U64,
        SampleFormat::U24,
        SampleFormat::U8,
    ];

    pub fn from_code(code: i32) -> Result<Self, FormatCodeError> {
        SampleFormat::ALL.into_iter().find(|f| f.code() as i32 == code).ok_or(if code == 4 {
            FormatCodeError::FixedPointWithGain
        } else {
            FormatCodeError::Unknown(code)
        })
    }

    /// Whether `code` is a format SEG-Y defines (including the unsupported code 4): used to decide the byte
    /// order, where a wrong order turns a small code into a large one.
    pub fn is_defined_code(code: i32) -> bool {
        code == 4 || SampleFormat::from_code(code).is_ok()
    }

    pub fn code(self) -> u16 {
        match self {
            SampleFormat::IbmF32 => 1,
            SampleFormat::I32 => 2,
            SampleFormat::I16 => 3,
            SampleFormat::IeeeF32 => 5,
            SampleFormat::IeeeF64 => 6,
            SampleFormat::I24 => 7,
            SampleFormat::I8 => 8,
            SampleFormat::I64 => 9,
            SampleFormat::U32 => 10,
            SampleFormat::U16 => 11,
            SampleFormat::U64 => 12,
            SampleFormat::U24 => 15,
            SampleFormat::U8 => 16,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            SampleFormat::IbmF32 => "4-byte IBM float",
            SampleFormat::I32 => "4-byte signed integer",
            SampleFormat::I16 => "2-byte signed integer",
            SampleFormat::IeeeF32 => "4-byte IEEE float",
            SampleFormat::IeeeF64 => "8-byte IEEE float",
            SampleFormat::I24 => "3-byte signed integer",
            SampleFormat::I8 => "1-byte signed integer",
            SampleFormat::I64 => "8-byte signed integer",
            SampleFormat::U32 => "4-byte unsigned integer",
            SampleFormat::U16 => "2-byte unsigned integer",
            SampleFormat::U64 => "8-byte unsigned integer",
            SampleFormat::U24 => "3-byte unsigned integer",
            SampleFormat::U8 => "1-byte unsigned integer",
        }
    }

    /// Bytes per sample.
    pub fn bytes(self) -> usize {
        match self {
            SampleFormat::I8 | SampleFormat::U8 => 1,
            SampleFormat::I16 | SampleFormat::U16 => 2,
            SampleFormat::I24 | SampleFormat::U24 => 3,
            SampleFormat::IbmF32 | SampleFormat::I32 | SampleFormat::IeeeF32 | SampleFormat::U32 => 4,
            SampleFormat::IeeeF64 | SampleFormat::I64 | SampleFormat::U64 => 8,
        }
    }

    /// Decode `dst.len()` samples from `src` (exactly `dst.len() * self.bytes()` bytes).
    ///
    /// The match on format and byte order happens once per call, so each inner loop is a straight conversion
    /// the compiler can unroll and vectorise; it runs as compiled for AVX2 where the CPU has it
    /// ([`seis_core::simd`]).
    pub fn decode(self, order: ByteOrder, src: &[u8], dst: &mut [f32]) {
        #[cfg(target_arch = "x86_64")]
        if seis_core::simd::has_avx2() {
            // SAFETY: the CPU has AVX2.
            return unsafe { self.decode_avx2(order, src, dst) };
        }
        self.decode_body(order, src, dst)
    }

    /// [`SampleFormat::decode`] compiled for AVX2 (see [`seis_core::simd`]). Unsafe: the CPU must have AVX2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn decode_avx2(self, order: ByteOrder, src: &[u8], dst: &mut [f32]) {
        self.decode_body(order, src, dst)
    }

    /// The body of [`SampleFormat::decode`], inlined into both of its versions.
    #[inline(always)]
    fn decode_body(self, order: ByteOrder, src: &[u8], dst: &mut [f32]) {
        assert_eq!(src.len(), dst.len() * self.bytes(), "decode: source and destination sizes disagree");
        use ByteOrder::{Big, Little};
        match (self, order) {
            (SampleFormat::IbmF32, Big) => convert(src, dst, |b| ibm_to_f32(u32::from_be_bytes(b))),
            (SampleFormat::IbmF32, Little) => convert(src, dst, |b| ibm_to_f32(u32::from_le_bytes(b))),
            (SampleFormat::IeeeF32, Big) => convert(src, dst, f32::from_be_bytes),
            (SampleFormat::IeeeF32, Little) => convert(src, dst, f32::from_le_bytes),
            (SampleFormat::IeeeF64, Big) => convert(src, dst, |b| f64::from_be_bytes(b) as f32),
            (SampleFormat::IeeeF64, Little) => convert(src, dst, |b| f64::from_le_bytes(b) as f32),
            (SampleFormat::I8, _) => convert(src, dst, |b: [u8; 1]| b[0] as i8 as f32),
            (SampleFormat::U8, _) => convert(src, dst, |b: [u8; 1]| b[0] as f32),
            (SampleFormat::I16, Big) => convert(src, dst, |b| i16::from_be_bytes(b) as f32),
            (SampleFormat::I16, Little) => convert(src, dst, |b| i16::from_le_bytes(b) as f32),
            (SampleFormat::U16, Big) => convert(src, dst, |b| u16::from_be_bytes(b) as f32),
            (SampleFormat::U16, Little) => convert(src, dst, |b| u16::from_le_bytes(b) as f32),
            (SampleFormat::I24, Big) => convert(src, dst, |[a, b, c]| i24(i32::from_be_bytes([a, b, c, 0]))),
            (SampleFormat::I24, Little) => convert(src, dst, |[a, b, c]| i24(i32::from_le_bytes([0, a, b, c]))),
            (SampleFormat::U24, Big) => convert(src, dst, |[a, b, c]| u32::from_be_bytes([0, a, b, c]) as f32),
            (SampleFormat::U24, Little) => convert(src, dst, |[a, b, c]| u32::from_le_bytes([a, b, c, 0]) as f32),
            (SampleFormat::I32, Big) => convert(src, dst, |b| i32::from_be_bytes(b) as f32),
            (SampleFormat::I32, Little) => convert(src, dst, |b| i32::from_le_bytes(b) as f32),
            (SampleFormat::U32, Big) => convert(src, dst, |b| u32::from_be_bytes(b) as f32),
            (SampleFormat::U32, Little) => convert(src, dst, |b| u32::from_le_bytes(b) as f32),
            (SampleFormat::I64, Big) => convert(src, dst, |b| i64::from_be_bytes(b) as f32),
            (SampleFormat::I64, Little) => convert(src, dst, |b| i64::from_le_bytes(b) as f32),
            (SampleFormat::U64, Big) => convert(src, dst, |b| u64::from_be_bytes(b) as f32),
            (SampleFormat::U64, Little) => convert(src, dst, |b| u64::from_le_bytes(b) as f32),
        }
    }
}

#[inline(always)]
fn convert<const N: usize>(src: &[u8], dst: &mut [f32], f: impl Fn([u8; N]) -> f32) {
    for (d, s) in dst.iter_mut().zip(src.chunks_exact(N)) {
        *d = f(s.try_into().expect("chunks_exact yields N bytes"));
    }
}

/// A 24-bit integer placed in the top three bytes of an `i32`, shifted down with its sign.
#[inline(always)]
fn i24(top_aligned: i32) -> f32 {
    (top_aligned >> 8) as f32
}

/// IBM hexadecimal float to the nearest `f32`, exactly, whether or not the fraction is normalised.
///
/// An IBM word is `(-1)^s * 0.F * 16^(E - 64)` with a 24-bit fraction `F` and a 7-bit exponent `E`, that is
/// `F * 2^(4E - 280)`. Both factors are exact in `f64` (the exponent spans 2^-280..2^228, inside `f64`'s
/// normal range) and so is their product, which leaves one correctly rounded conversion to `f32`: overflow
/// becomes infinity and tiny values become subnormals or zero, as IEEE rounding prescribes. A fraction with
/// leading zero digits (an unnormalised word) needs no special case.
#[inline(always)]
pub fn ibm_to_f32(word: u32) -> f32 {
    let fraction = (word & 0x00ff_ffff) as f64;
    let exponent = ((word >> 24) & 0x7f) as u64;
    // 2^(4E - 280) built directly: biased exponent (4E - 280) + 1023.
    let scale = f64::from_bits((4 * exponent + 743) << 52);
    let magnitude = (fraction * scale) as f32;
    f32::from_bits(magnitude.to_bits() | (word & 0x8000_0000))
}

/// The IBM word nearest to `value` (ties to even), or `None` for infinities and NaN, which IBM floats cannot
/// hold. Every finite `f32` is inside the IBM range; only precision can be lost, because a hexadecimal
/// fraction normalised to a leading non-zero hex digit keeps 21 to 24 significant bits.
pub fn f32_to_ibm(value: f32) -> Option<u32> {
    if !value.is_finite() {
        return None;
    }
    let bits = value.to_bits();
    let sign = bits & 0x8000_0000;
    let biased = (bits >> 23) & 0xff;
    // value = mantissa * 2^exp2 with mantissa < 2^24
    let (mut mantissa, mut exp2) = match biased {
        0 => (bits & 0x007f_ffff, -149i32),
        _ => ((bits & 0x007f_ffff) | 0x0080_0000, biased as i32 - 150),
    };
    if mantissa == 0 {
        return Some(sign);
    }
    // Left-align subnormals so the leading one is bit 23: value = (mantissa / 2^24) * 2^(exp2 + 24).
    let shift = mantissa.leading_zeros() - 8;
    mantissa <<= shift;
    exp2 -= shift as i32;
    let t = exp2 + 24;
    // Drop `drop` low bits so that the power of two becomes a power of 16.
    let drop = (-t).rem_euclid(4) as u32;
    // Rounding cannot carry out of 24 bits: bits are only dropped when the leading hex digit is below 8.
    let fraction = round_shift_right(mantissa, drop);
    let exp16 = (t + drop as i32) / 4;
    let exponent = (exp16 + 64) as u32; // 2^-149 <= |value| < 2^128: exp16 in -37..=32
    Some(sign | exponent << 24 | fraction)
}

/// `x / 2^n` rounded to nearest, ties to even (`n` ≤ 3).
fn round_shift_right(x: u32, n: u32) -> u32 {
    if n == 0 {
        return x;
    }
    let q = x >> n;
    let rest = x & ((1 << n) - 1);
    let half = 1 << (n - 1);
    if rest > half || (rest == half && q & 1 == 1) {
        q + 1
    } else {
        q
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ibm_known_words() {
        // -118.625 = -0x76.A = -0.76A * 16^2: the worked example of IBM's hexadecimal floating point.
        assert_eq!(ibm_to_f32(0xC276_A000), -118.625);
        assert_eq!(f32_to_ibm(-118.625), Some(0xC276_A000));
        assert_eq!(ibm_to_f32(0x4110_0000), 1.0);
        assert_eq!(ibm_to_f32(0x0000_0000), 0.0);
        assert!(ibm_to_f32(0x8000_0000).is_sign_negative());
        // Unnormalised: 0.001 * 16^1 = 1/256, and 0.000001 * 16^6 = 1.
        assert_eq!(ibm_to_f32(0x4100_1000), 1.0 / 256.0);
        assert_eq!(ibm_to_f32(0x4600_0001), 1.0);
        // Largest IBM value (about 7.2e75) overflows f32; the smallest positive ones underflow to zero.
        assert_eq!(ibm_to_f32(0x7FFF_FFFF), f32::INFINITY);
        assert_eq!(ibm_to_f32(0x0010_0000), 0.0);
    }

    #[test]
    fn ibm_rounds_to_nearest_even_when_bits_are_dropped() {
        // In [1, 2) the leading hex digit is 1, so an IBM word keeps 21 bits: its ulp is 8 f32 ulps.
        let ulp = 8.0 * f32::EPSILON;
        let ibm = |v: f32| ibm_to_f32(f32_to_ibm(v).unwrap());
        assert_eq!(ibm(1.0 + f32::EPSILON), 1.0, "an eighth of an ulp rounds down");
        assert_eq!(ibm(1.0 + 5.0 * f32::EPSILON), 1.0 + ulp, "five eighths round up");
        assert_eq!(ibm(1.0 + 0.5 * ulp), 1.0, "a tie rounds to the even fraction (down)");
        assert_eq!(ibm(1.0 + 1.5 * ulp), 1.0 + 2.0 * ulp, "a tie rounds to the even fraction (up)");
        assert_eq!(f32_to_ibm(2.0f32.next_down()), Some(0x4120_0000), "rounding up reaches the next power of two");
        // In [8, 16) the leading hex digit is 8 or more: all 24 bits are kept.
        assert_eq!(ibm(16.0f32.next_down()), 16.0f32.next_down());
        assert_eq!(ibm(f32::MAX), f32::MAX);
        assert_eq!(ibm(f32::from_bits(1)), f32::from_bits(1), "the smallest subnormal is exact");
        assert_eq!(f32_to_ibm(f32::NAN), None);
        assert_eq!(f32_to_ibm(f32::NEG_INFINITY), None);
    }

    #[test]
    fn every_code_round_trips_and_sizes_match_the_standard() {
        for f in SampleFormat::ALL {
            assert_eq!(SampleFormat::from_code(f.code() as i32), Ok(f));
        }
        assert_eq!(SampleFormat::from_code(4), Err(FormatCodeError::FixedPointWithGain));
        assert_eq!(SampleFormat::from_code(13), Err(FormatCodeError::Unknown(13)));
        assert!(SampleFormat::is_defined_code(4));
        assert!(!SampleFormat::is_defined_code(256));
        let sizes: Vec<usize> = SampleFormat::ALL.iter().map(|f| f.bytes()).collect();
        assert_eq!(sizes, [4, 4, 2, 4, 8, 3, 1, 8, 4, 2, 8, 3, 1]);
    }

    #[test]
    fn three_byte_integers_keep_their_sign() {
        let mut out = [0.0f32; 2];
        SampleFormat::I24.decode(ByteOrder::Big, &[0xFF, 0xFF, 0xFE, 0x01, 0x00, 0x00], &mut out);
        assert_eq!(out, [-2.0, 65536.0]);
        SampleFormat::I24.decode(ByteOrder::Little, &[0xFE, 0xFF, 0xFF, 0x00, 0x00, 0x01], &mut out);
        assert_eq!(out, [-2.0, 65536.0]);
        SampleFormat::U24.decode(ByteOrder::Big, &[0xFF, 0xFF, 0xFE, 0x01, 0x00, 0x00], &mut out);
        assert_eq!(out, [16_777_214.0, 65536.0]);
        SampleFormat::U24.decode(ByteOrder::Little, &[0xFE, 0xFF, 0xFF, 0x00, 0x00, 0x01], &mut out);
        assert_eq!(out, [16_777_214.0, 65536.0]);
    }

    /// Bytes from a fixed xorshift sequence: every bit pattern class (NaN, infinities, subnormals, IBM
    /// words with any exponent, negative integers) turns up in a few thousand words.
    fn scrambled_bytes(n: usize) -> Vec<u8> {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 56) as u8
            })
            .collect()
    }

    #[test]
    fn the_avx2_version_of_decode_computes_what_the_baseline_computes() {
        if !seis_core::simd::has_avx2() {
            eprintln!("this CPU has no AVX2: only the baseline decode runs here");
            return;
        }
        // An odd count leaves a tail after every vector width.
        let n = 4099;
        for f in SampleFormat::ALL {
            for order in [ByteOrder::Big, ByteOrder::Little] {
                let src = scrambled_bytes(n * f.bytes());
                let (mut baseline, mut avx2) = (vec![0.0f32; n], vec![0.0f32; n]);
                f.decode_body(order, &src, &mut baseline);
                // SAFETY: the CPU has AVX2 (checked above).
                unsafe { f.decode_avx2(order, &src, &mut avx2) };
                let differ = baseline.iter().zip(&avx2).position(|(a, b)| a.to_bits() != b.to_bits());
                assert_eq!(differ, None, "{f:?} {order:?}: the two versions differ at sample {differ:?}");
                // And the words are not all alike: the comparison covers NaNs, infinities and finite values.
                assert!(baseline.iter().any(|v| v.is_finite() && *v != 0.0), "{f:?} {order:?}");
            }
        }
    }
}
