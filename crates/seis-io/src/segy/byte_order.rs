//! The byte order of a SEG-Y file's binary headers and samples, and numbers read and written in it. A
//! module of its own because every module that touches SEG-Y bytes needs it: [`super::binary`],
//! [`super::layout`] (which decides a file's order), [`super::sample_format`], [`super::trace_header`],
//! the reader and the writer.

use seis_core::choice::Choice;
use serde::{Deserialize, Serialize};

/// Byte order of a file's binary headers and samples.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ByteOrder {
    /// Most significant byte first: what SEG-Y rev 0 and 1 require.
    #[default]
    Big,
    Little,
}

impl Choice for ByteOrder {
    const CHOICES: &'static [(Self, &'static str, &'static str)] = &[
        (ByteOrder::Big, "big", "Most significant byte first: what SEG-Y rev 0 and 1 require."),
        (ByteOrder::Little, "little", ""),
    ];
}

impl ByteOrder {
    pub fn nom(self) -> nom::number::Endianness {
        match self {
            ByteOrder::Big => nom::number::Endianness::Big,
            ByteOrder::Little => nom::number::Endianness::Little,
        }
    }
}

macro_rules! to_bytes_in_order {
    ($($name:ident: $t:ty),*) => {
        impl ByteOrder {
            $(
                pub fn $name(self, v: $t) -> [u8; std::mem::size_of::<$t>()] {
                    match self {
                        ByteOrder::Big => v.to_be_bytes(),
                        ByteOrder::Little => v.to_le_bytes(),
                    }
                }
            )*
        }
    };
}
to_bytes_in_order!(i16: i16, u16: u16, i32: i32, u32: u32, u64: u64, f32: f32, f64: f64);

macro_rules! from_bytes_in_order {
    ($($name:ident: $t:ty),*) => {
        impl ByteOrder {
            $(
                pub fn $name(self, b: [u8; std::mem::size_of::<$t>()]) -> $t {
                    match self {
                        ByteOrder::Big => <$t>::from_be_bytes(b),
                        ByteOrder::Little => <$t>::from_le_bytes(b),
                    }
                }
            )*
        }
    };
}
from_bytes_in_order!(read_i16: i16, read_u16: u16, read_i32: i32);
