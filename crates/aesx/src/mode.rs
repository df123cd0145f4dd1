//! Generic, safe mode logic on top of the backends' whole-block kernels.
//!
//! Partial blocks, buffered keystream, chaining state and the 128-bit counter carry live here,
//! once, for every backend.
#![forbid(unsafe_code)]

pub mod cbc;
pub mod ctr;
