//! Any bytes as a SEG-Y file: opened as traces and as a volume with each option set, then read.
#![no_main]

use libfuzzer_sys::fuzz_target;
use seisimage_fuzz::{exercise, scratch_file};

fuzz_target!(|data: &[u8]| {
    let path = scratch_file("input.sgy", data);
    exercise::segy(&path);
});
