//! Tests that measure how much memory a reader allocates, with a counting global allocator: in a binary of
//! their own, so that the allocator counts nothing but them (each measuring test also takes
//! [`counting_allocator::exclusive`], since tests run on parallel threads).

mod counting_allocator;
mod fuzz_regressions;
mod input_limits;
mod render_limits;
mod segy_corruption;
