//! The library half of the `aesx` command: the file encryptor/decryptor ([`crypt`], and
//! [`fileformat`] for the aesx format) and the Fugue hasher ([`hash`]) as functions, so that
//! the binary and the fuzz targets (`fuzz/`) run the same code. Not a stable API: use the `aesx` crate for that.
#![forbid(unsafe_code)]

pub mod crypt;
pub mod fileformat;
pub mod hash;
pub mod output;
pub mod pipeline;
