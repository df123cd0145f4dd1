//! VAES on ymm registers with AVX2: the `vaes256` backend, for CPUs with VAES but without
//! AVX-512 (AMD Zen 3, Intel Alder Lake and later client cores). 2 blocks per instruction, 12
//! registers (24 blocks) in flight for ECB and CTR, 8 for CBC decryption and GCM.
//!
//! The kernels are the width-generic ones of [`super::vaes`], instantiated for `__m256i` in
//! [`super::vaes::ymm`]; see there for the techniques and the constant-time argument. One or
//! two blocks (short messages, single-block calls, partial-block keystream) go to the xmm
//! kernels of `aesni`: the AES latency is the same and they skip the per-call setup.

use super::aesni::Keys;
use super::vaes::ymm;

pub(crate) use super::aesni::cbc_encrypt;

pub(crate) fn encrypt_blocks(k: &Keys, buf: &mut [u8]) {
    if buf.len() <= 32 {
        return super::aesni::encrypt_blocks(k, buf);
    }
    ymm::encrypt_blocks(k, buf)
}

pub(crate) fn decrypt_blocks(k: &Keys, buf: &mut [u8]) {
    if buf.len() <= 32 {
        return super::aesni::decrypt_blocks(k, buf);
    }
    ymm::decrypt_blocks(k, buf)
}

pub(crate) fn cbc_decrypt(k: &Keys, iv: &mut [u8; 16], buf: &mut [u8]) {
    if buf.len() <= 32 {
        return super::aesni::cbc_decrypt(k, iv, buf);
    }
    ymm::cbc_decrypt(k, iv, buf)
}

pub(crate) fn ctr_xor(k: &Keys, c: u128, buf: &mut [u8]) {
    if buf.len() <= 32 {
        return super::aesni::ctr_xor(k, c, buf);
    }
    ymm::ctr_xor(k, c, buf)
}

pub(crate) fn ctr_xor_b2b(k: &Keys, c: u128, src: &[u8], dst: &mut [u8]) {
    if src.len() <= 32 {
        return super::aesni::ctr_xor_b2b(k, c, src, dst);
    }
    ymm::ctr_xor_b2b(k, c, src, dst)
}
