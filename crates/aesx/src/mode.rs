//! Generic, safe mode logic on top of the backends' whole-block kernels.
//!
//! Partial blocks, buffered keystream, chaining state, the 128-bit counter carry and GCM's
//! nonces, `inc32`, lengths and tag live here, once, for every backend.
#![forbid(unsafe_code)]

pub mod cbc;
pub mod ctr;
pub mod gcm;
