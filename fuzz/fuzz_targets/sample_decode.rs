//! Any bytes through every sample decoder, checked against the definitions of the formats.
#![no_main]

use libfuzzer_sys::fuzz_target;
use seisimage_fuzz::exercise;

fuzz_target!(|data: &[u8]| exercise::sample_decode(data));
