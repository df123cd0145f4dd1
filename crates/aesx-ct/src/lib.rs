//! # aesx-ct: machine-checked constant time for aesx
//!
//! Two checks, run by `.ci/ct-check` (or `cargo run --release -p aesx-ct -- all`):
//!
//! 1. [`taint`]: the secret inputs are marked undefined for valgrind memcheck, which then
//!    reports every branch and every memory address that depends on them (ctgrind). Exact, but
//!    limited to the instructions valgrind can execute (no AVX-512, VAES or GFNI).
//! 2. [`timing`]: a dudect-style fixed-vs-random timing test with Welch's t, which also runs
//!    the VAES backends. Statistical: it sees what is larger than this machine's noise.
//!
//! Both must catch [`planted`], a deliberately leaky table AES that exists only in this crate:
//! the run fails if a real backend is flagged *or* if the planted leak is not.
//!
//! Targets and their cases are listed in [`targets`]; adding one is one entry there.

pub mod planted;
pub mod rng;
pub mod taint;
pub mod targets;
pub mod timing;
pub mod vg;
