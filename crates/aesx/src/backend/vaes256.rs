//! vaes256 (temporary: forwards to aesni until its kernels land).
pub(crate) use super::aesni::{cbc_decrypt, cbc_encrypt, ctr_xor, decrypt_blocks, encrypt_blocks};
