//! Any bytes through the SEG-Y header parsers directly: binary, text and trace headers, byte order, layout.
#![no_main]

use libfuzzer_sys::fuzz_target;
use seisimage_fuzz::exercise;

fuzz_target!(|data: &[u8]| exercise::segy_headers(data));
