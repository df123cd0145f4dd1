//! # aesx: constant-time AES at the hardware limit
//!
//! AES-128/192/256 with the fastest backend this CPU has, picked at run time:
//! `vaes512` (VAES on zmm), `vaes256` (VAES on ymm), `aesni` (AES-NI, 8 blocks in flight),
//! `vpaes` (SSSE3 vector permute) and the portable bitsliced `soft`. No backend indexes a table
//! with secret data. Modes: ECB, CBC (with PKCS#7 helpers), SSH-style CTR (a 128-bit
//! big-endian counter, as in SSH `aes*-ctr`, PuTTY's SDCTR and NIST SP 800-38A) and AES-GCM
//! ([`AesGcm`]: one-shot, `Vec` and streaming APIs; fused CTR+GHASH kernels).
//!
//! ```
//! use aesx::{Aes, Ctr};
//!
//! let key = [0x2bu8; 16];
//! let iv = [0u8; 16];
//! let aes = Aes::new(&key)?;                  // fastest backend on this CPU
//! let mut data = *b"attack at dawn, or at 10:00 if it rains";
//! Ctr::new(&aes, &iv).apply_keystream(&mut data);
//! Ctr::new(&aes, &iv).apply_keystream(&mut data);
//! assert_eq!(&data, b"attack at dawn, or at 10:00 if it rains");
//! println!("backend: {}", aes.backend());
//! # Ok::<(), aesx::Error>(())
//! ```
//!
//! ## Features
//! - `std` (default): implies `alloc`. CPU detection works without it.
//! - `alloc`: [`Backend::available`] and the `Vec`-returning PKCS#7 helpers.
//! - `rayon` (off by default): multi-threaded CTR, `Aes::ctr_xor_at_par` and
//!   `Ctr::apply_keystream_par`.
//! - `aead` (off by default): `Aes128Gcm`, `Aes192Gcm`, `Aes256Gcm` implementing RustCrypto's
//!   `aead` 0.6 traits, drop-ins for the `aes-gcm` crate's types. [`AesGcm`] is always there.
//! - `cipher` (off by default): the RustCrypto `cipher` 0.5 traits on `rustcrypto::Aes128`,
//!   `rustcrypto::Aes192` and `rustcrypto::Aes256`, for `ctr`, `cbc`, `cmac`, `aes-gcm`.
//!
//! (The items of features that are off by default are named here without links, so that the
//! crate's documentation builds without warnings with any set of features.)
#![no_std]
#![cfg_attr(not(target_arch = "x86_64"), forbid(unsafe_code))]

#[cfg(feature = "alloc")]
extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

mod backend;
pub mod cpu;
mod error;
#[cfg(feature = "aead")]
mod gcm_aead;
pub mod hash;
pub mod hazmat;
pub mod mode;
#[cfg(feature = "rayon")]
pub mod parallel;
#[cfg(feature = "cipher")]
pub mod rustcrypto;

pub use backend::Backend;
pub use cpu::CpuFeatures;
pub use error::{Error, ErrorKind};
#[cfg(feature = "aead")]
pub use gcm_aead::{Aes128Gcm, Aes192Gcm, Aes256Gcm};
pub use mode::cbc::{CbcDecryptor, CbcEncryptor, pkcs7_pad, pkcs7_unpad};
#[cfg(feature = "alloc")]
pub use mode::cbc::{cbc_decrypt_pkcs7, cbc_encrypt_pkcs7};
pub use mode::ctr::Ctr;
pub use mode::gcm::{AesGcm, GcmDecryptor, GcmEncryptor, Tag};

use core::fmt;

/// The AES block size in bytes.
pub const BLOCK: usize = 16;

/// An expanded AES key bound to one backend: its round keys in that backend's layout (the
/// encryption schedule; `vpaes` also keeps its decryption schedule, while the hardware
/// backends derive theirs inside each decryption call and wipe it before returning).
///
/// The schedules are zeroized when the value is dropped. `Debug` never prints key material.
pub struct Aes {
    backend: Backend,
    // The key size is not stored: `key_bits` derives it from the schedule's round count
    // (one store fewer per key setup, which on this hardware is bound by its stores).
    // Dropped by `impl Drop for Aes` (the hardware schedule's wipe inlined into the caller).
    keys: core::mem::ManuallyDrop<backend::Keys>,
}

impl Drop for Aes {
    // IMPLEMENTATION NOTE (issue 13): the drop of the common (hardware) schedule is a few
    // inline stores in the user's function rather than a call to an out-of-line
    // `drop_in_place`: see `backend::Keys::drop_fast`.
    #[inline(always)]
    fn drop(&mut self) {
        backend::Keys::drop_fast(&mut self.keys);
    }
}

impl fmt::Debug for Aes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Aes")
            .field("backend", &self.backend)
            .field("key_bits", &self.key_bits())
            .finish_non_exhaustive()
    }
}

impl Aes {
    /// Expands a 16-, 24- or 32-byte key on the fastest backend of this CPU.
    #[inline(always)]
    pub fn new(key: &[u8]) -> Result<Aes, Error> {
        let plan = backend::plan();
        Aes::build(key, plan.best(), plan)
    }

    /// Expands a key on a chosen backend; [`ErrorKind::BackendUnavailable`] if this CPU cannot
    /// run it.
    #[inline(always)]
    pub fn with_backend(key: &[u8], backend: Backend) -> Result<Aes, Error> {
        let plan = backend::plan();
        if !matches!(key.len(), 16 | 24 | 32) {
            return Err(Error::new(ErrorKind::InvalidKeyLength));
        }
        if !plan.has(backend) {
            return Err(Error::new(ErrorKind::BackendUnavailable));
        }
        Aes::build(key, backend, plan)
    }

    // IMPLEMENTATION NOTE: everything from `new` down to the schedule's stores is inlined into
    // the caller, so the schedule is written once, into the caller's own `Aes`: no move of a
    // built schedule (each would leave a copy on the stack, issue 14 finding 2, and cost a
    // 280-byte copy with store-forwarding stalls, issue 13). See `aesni::expand_inline`.
    #[inline(always)]
    fn build(key: &[u8], backend: Backend, plan: backend::Plan) -> Result<Aes, Error> {
        if !matches!(key.len(), 16 | 24 | 32) {
            return Err(Error::new(ErrorKind::InvalidKeyLength));
        }
        Ok(Aes::build_checked(key, backend, plan))
    }

    /// [`Aes::build`] for a key length (16, 24 or 32) and a backend (available in `plan`) that
    /// the caller has checked; inlined the same way (`AesGcm` builds its `aes` field with it).
    #[inline(always)]
    pub(crate) fn build_checked(key: &[u8], backend: Backend, plan: backend::Plan) -> Aes {
        Aes {
            backend,
            keys: core::mem::ManuallyDrop::new(backend::Keys::new(backend, key, plan)),
        }
    }

    /// A placeholder to build a schedule in place with [`Aes::fill_checked`]: the all-zero
    /// hardware-layout schedule, which owns no heap memory and holds nothing secret.
    #[cfg(all(feature = "alloc", target_arch = "x86_64"))]
    pub(crate) const PLACEHOLDER: Aes = Aes {
        backend: Backend::Aesni,
        keys: core::mem::ManuallyDrop::new(backend::Keys::ZERO),
    };

    /// Writes the schedule of `key` (as [`Aes::build_checked`]) over a [`Aes::PLACEHOLDER`],
    /// in place. The placeholder is overwritten without being dropped (it has nothing to
    /// free or wipe), so nothing runs between computing the round keys in registers and
    /// storing them here: a drop in between (a call on some paths) made LLVM spill the new
    /// round keys to the stack around it.
    #[cfg(all(feature = "alloc", target_arch = "x86_64"))]
    #[inline(always)]
    pub(crate) fn fill_checked(&mut self, key: &[u8], backend: Backend, plan: backend::Plan) {
        debug_assert!(self.keys.rounds() == 0, "fill_checked on a built schedule");
        // Assigning a `ManuallyDrop` does not drop the old value.
        self.keys = core::mem::ManuallyDrop::new(backend::Keys::new(backend, key, plan));
        self.backend = backend;
    }

    /// The backend this key schedule runs on.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// 128, 192 or 256.
    pub fn key_bits(&self) -> u32 {
        // 10, 12 or 14 rounds.
        (self.keys.rounds() as u32).saturating_sub(6) * 32
    }

    /// Encrypts one block in place.
    pub fn encrypt_block(&self, block: &mut [u8; 16]) {
        backend::encrypt_blocks(self.backend, &self.keys, block);
    }

    /// Decrypts one block in place.
    pub fn decrypt_block(&self, block: &mut [u8; 16]) {
        backend::decrypt_blocks(self.backend, &self.keys, block);
    }

    /// ECB-encrypts whole blocks in place. Panics unless `buf.len()` is a multiple of 16;
    /// see [`Aes::try_encrypt_blocks`].
    pub fn encrypt_blocks(&self, buf: &mut [u8]) {
        self.try_encrypt_blocks(buf)
            .expect("ECB data must be whole 16-byte blocks")
    }

    /// ECB-decrypts whole blocks in place. Panics unless `buf.len()` is a multiple of 16;
    /// see [`Aes::try_decrypt_blocks`].
    pub fn decrypt_blocks(&self, buf: &mut [u8]) {
        self.try_decrypt_blocks(buf)
            .expect("ECB data must be whole 16-byte blocks")
    }

    /// ECB-encrypts whole blocks in place; [`ErrorKind::NotBlockAligned`] otherwise.
    pub fn try_encrypt_blocks(&self, buf: &mut [u8]) -> Result<(), Error> {
        check_blocks(buf.len())?;
        backend::encrypt_blocks(self.backend, &self.keys, buf);
        Ok(())
    }

    /// ECB-decrypts whole blocks in place; [`ErrorKind::NotBlockAligned`] otherwise.
    pub fn try_decrypt_blocks(&self, buf: &mut [u8]) -> Result<(), Error> {
        check_blocks(buf.len())?;
        backend::decrypt_blocks(self.backend, &self.keys, buf);
        Ok(())
    }

    /// ECB-encrypts `input` into `output` (same length, whole blocks).
    pub fn encrypt_blocks_b2b(&self, input: &[u8], output: &mut [u8]) -> Result<(), Error> {
        copy_in(input, output)?;
        self.try_encrypt_blocks(&mut output[..input.len()])
    }

    /// ECB-decrypts `input` into `output` (same length, whole blocks).
    pub fn decrypt_blocks_b2b(&self, input: &[u8], output: &mut [u8]) -> Result<(), Error> {
        copy_in(input, output)?;
        self.try_decrypt_blocks(&mut output[..input.len()])
    }

    /// Stateless, seekable CTR: XORs `buf` with the keystream that starts `pos` bytes into the
    /// stream whose first counter block is `iv` (128-bit big-endian, incremented mod 2^128).
    /// Any split of a message into `(pos, buf)` pieces gives the same result as one call; this
    /// is what multi-threaded CTR builds on.
    ///
    /// # Panics
    /// If `pos + buf.len()` would pass `u64::MAX` (a stream is 2^64 - 1 bytes; `buf` is then
    /// untouched). [`Aes::try_ctr_xor_at`] returns an error instead.
    pub fn ctr_xor_at(&self, iv: &[u8; 16], pos: u64, buf: &mut [u8]) {
        if let Err(e) = self.try_ctr_xor_at(iv, pos, buf) {
            panic!("{e}");
        }
    }

    /// [`Aes::ctr_xor_at`], returning [`ErrorKind::LengthLimit`] (with `buf` untouched) where
    /// that panics: when `pos + buf.len()` would pass `u64::MAX`.
    pub fn try_ctr_xor_at(&self, iv: &[u8; 16], pos: u64, buf: &mut [u8]) -> Result<(), Error> {
        mode::ctr::xor_at(self, u128::from_be_bytes(*iv), pos, buf)
    }

    /// Buffer-to-buffer [`Aes::try_ctr_xor_at`]: `output = input ^ keystream` from byte `pos`
    /// of the stream whose first counter block is `iv`; `input` is not modified. The same
    /// bytes as copying `input` into `output` and calling [`Aes::try_ctr_xor_at`] on it, in one
    /// pass (no copy on `aesni` and `vaes256`). `output.len()` must equal `input.len()`:
    /// [`ErrorKind::OutputTooSmall`] if shorter, [`ErrorKind::InvalidLength`] if longer,
    /// [`ErrorKind::LengthLimit`] past the stream's end; on error `output` is untouched.
    pub fn try_ctr_xor_at_b2b(
        &self,
        iv: &[u8; 16],
        pos: u64,
        input: &[u8],
        output: &mut [u8],
    ) -> Result<(), Error> {
        mode::ctr::xor_at_b2b(self, u128::from_be_bytes(*iv), pos, input, output)
    }

    pub(crate) fn kernels(&self) -> (Backend, &backend::Keys) {
        (self.backend, &self.keys)
    }
}

fn check_blocks(len: usize) -> Result<(), Error> {
    if len.is_multiple_of(BLOCK) {
        Ok(())
    } else {
        Err(Error::new(ErrorKind::NotBlockAligned))
    }
}

fn copy_in(input: &[u8], output: &mut [u8]) -> Result<(), Error> {
    if output.len() < input.len() {
        return Err(Error::new(ErrorKind::OutputTooSmall));
    }
    output[..input.len()].copy_from_slice(input);
    Ok(())
}
