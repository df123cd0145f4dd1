//! RustCrypto `cipher` 0.5 traits (feature `cipher`): aesx as a drop-in block cipher for the
//! RustCrypto mode and MAC crates.
//!
//! [`Aes128`], [`Aes192`] and [`Aes256`] have the names and traits of `aes` 0.9's types
//! (`KeyInit`, `BlockSizeUser`, `BlockCipherEncrypt`, `BlockCipherDecrypt`, `AlgorithmName`,
//! `ZeroizeOnDrop`), so switching `ctr::Ctr128BE<aes::Aes128>`, `cbc::Encryptor<aes::Aes256>`,
//! `cmac::Cmac<aes::Aes128>` or `aes_gcm::AesGcm<aes::Aes256, U12>` to aesx is a change of the
//! type parameter:
//!
//! ```
//! use aesx::rustcrypto::Aes128;
//! use cipher::{BlockCipherEncrypt, KeyInit};
//!
//! let aes = Aes128::new(&[0x2b; 16].into());
//! let mut block = [0u8; 16].into();
//! aes.encrypt_block(&mut block);
//! ```
//!
//! Each type is a thin wrapper over [`Aes`]: one key schedule, on the backend [`Aes::new`]
//! picks (or one chosen with `with_backend`). Two ways to run a mode's loop:
//!
//! - `vaes256` and `aesni` keys run it inlined (`rustcrypto/x86.rs`): the mode's closure is
//!   called from a function compiled with the backend's features, whose parallel-block method
//!   is the kernel's batch (16 blocks on ymm, 8 on xmm) with the round keys in registers, so
//!   the `ctr` crate's counters never leave registers (RustCrypto `aes` 0.9's design).
//! - every other backend (`soft`, `vpaes`, `vaes512`) gets [`ParBlocks`] (32) blocks per call
//!   through aesx's out-of-line whole-block ECB kernels.
// `unsafe` only in the x86 submodule (the inlined backends), with a SAFETY line per block.
#![deny(unsafe_code)]

#[cfg(target_arch = "x86_64")]
mod x86;

use core::fmt;

use ::cipher::array::Array;
use ::cipher::consts::{U16, U24, U32};
use ::cipher::inout::{InOut, InOutBuf};
use ::cipher::{
    AlgorithmName, Block, BlockCipherDecBackend, BlockCipherDecClosure, BlockCipherDecrypt,
    BlockCipherEncBackend, BlockCipherEncClosure, BlockCipherEncrypt, BlockSizeUser, Key, KeyInit,
    KeySizeUser, ParBlocksSizeUser,
};

use crate::{Aes, Backend, Error, ErrorKind};

/// Blocks per parallel call the traits offer the modes: 32 (512 bytes).
///
/// IMPLEMENTATION NOTE: the VAES-256 kernels run 16 blocks per batch; two batches per call
/// halves the per-call cost (dispatch, the mode's own bookkeeping) relative to one, and 512
/// bytes of counter or ciphertext blocks on the mode's stack stay in L1.
pub type ParBlocks = U32;

/// The trait backend: a borrowed key schedule.
struct Kernels<'a>(&'a Aes);

impl BlockSizeUser for Kernels<'_> {
    type BlockSize = U16;
}

impl ParBlocksSizeUser for Kernels<'_> {
    type ParBlocksSize = ParBlocks;
}

impl BlockCipherEncBackend for Kernels<'_> {
    #[inline]
    fn encrypt_block(&self, block: InOut<'_, '_, Block<Self>>) {
        self.0.encrypt_block(&mut block.into_out_with_copied_in().0);
    }

    #[inline]
    fn encrypt_par_blocks(&self, blocks: InOut<'_, '_, ::cipher::ParBlocks<Self>>) {
        let out = blocks.into_out_with_copied_in().as_flattened_mut();
        self.0.encrypt_blocks(out);
    }

    #[inline]
    fn encrypt_tail_blocks(&self, blocks: InOutBuf<'_, '_, Block<Self>>) {
        let out = Array::slice_as_flattened_mut(blocks.into_out_with_copied_in());
        self.0.encrypt_blocks(out);
    }
}

impl BlockCipherDecBackend for Kernels<'_> {
    #[inline]
    fn decrypt_block(&self, block: InOut<'_, '_, Block<Self>>) {
        self.0.decrypt_block(&mut block.into_out_with_copied_in().0);
    }

    #[inline]
    fn decrypt_par_blocks(&self, blocks: InOut<'_, '_, ::cipher::ParBlocks<Self>>) {
        let out = blocks.into_out_with_copied_in().as_flattened_mut();
        self.0.decrypt_blocks(out);
    }

    #[inline]
    fn decrypt_tail_blocks(&self, blocks: InOutBuf<'_, '_, Block<Self>>) {
        let out = Array::slice_as_flattened_mut(blocks.into_out_with_copied_in());
        self.0.decrypt_blocks(out);
    }
}

macro_rules! aes_type {
    ($name:ident, $bits:literal, $key_size:ty) => {
        #[doc = concat!("AES-", $bits, " with the RustCrypto `cipher` 0.5 traits; a thin wrapper over [`Aes`].")]
        ///
        /// The key schedule is zeroized on drop; `Debug` prints no key material.
        pub struct $name(Aes);

        impl $name {
            /// Expands the key on a chosen backend; [`ErrorKind::BackendUnavailable`] if this
            /// CPU cannot run it.
            pub fn with_backend(key: &Key<Self>, backend: Backend) -> Result<Self, Error> {
                Aes::with_backend(key.as_slice(), backend).map($name)
            }

            /// Wraps an expanded key of the right size; [`ErrorKind::InvalidKeyLength`] if it
            #[doc = concat!("is not a ", $bits, "-bit key.")]
            pub fn from_aes(aes: Aes) -> Result<Self, Error> {
                if aes.key_bits() == $bits {
                    Ok($name(aes))
                } else {
                    Err(Error::new(ErrorKind::InvalidKeyLength))
                }
            }

            /// The underlying aesx key schedule (for aesx's own modes).
            pub fn as_aes(&self) -> &Aes {
                &self.0
            }

            /// Unwraps the aesx key schedule.
            pub fn into_aes(self) -> Aes {
                self.0
            }

            /// The backend the key schedule runs on.
            pub fn backend(&self) -> Backend {
                self.0.backend()
            }
        }

        impl KeySizeUser for $name {
            type KeySize = $key_size;
        }

        impl KeyInit for $name {
            #[inline]
            fn new(key: &Key<Self>) -> Self {
                // The key type fixes the length, the only way `Aes::new` can fail.
                $name(Aes::new(key.as_slice()).expect("key length fixed by the type"))
            }
        }

        impl BlockSizeUser for $name {
            type BlockSize = U16;
        }

        impl BlockCipherEncrypt for $name {
            #[inline]
            fn encrypt_with_backend(&self, f: impl BlockCipherEncClosure<BlockSize = U16>) {
                #[cfg(target_arch = "x86_64")]
                let Err(f) = x86::encrypt(&self.0, f) else {
                    return;
                };
                f.call(&Kernels(&self.0));
            }
        }

        impl BlockCipherDecrypt for $name {
            #[inline]
            fn decrypt_with_backend(&self, f: impl BlockCipherDecClosure<BlockSize = U16>) {
                #[cfg(target_arch = "x86_64")]
                let Err(f) = x86::decrypt(&self.0, f) else {
                    return;
                };
                f.call(&Kernels(&self.0));
            }
        }

        impl AlgorithmName for $name {
            fn write_alg_name(f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(stringify!($name))
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(concat!(stringify!($name), " { .. }"))
            }
        }

        /// The wrapped [`Aes`] zeroizes its schedules when dropped.
        impl zeroize::ZeroizeOnDrop for $name {}

        impl From<$name> for Aes {
            fn from(k: $name) -> Aes {
                k.0
            }
        }
    };
}

aes_type!(Aes128, 128, U16);
aes_type!(Aes192, 192, U24);
aes_type!(Aes256, 256, U32);
