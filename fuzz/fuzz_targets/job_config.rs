//! Any bytes as a job file and `--set` overrides, parsed into a job and printed back.
#![no_main]

use libfuzzer_sys::fuzz_target;
use seisimage_fuzz::exercise;

fuzz_target!(|data: &[u8]| {
    let _ = exercise::job(data);
});
