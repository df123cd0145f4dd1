//! RustCrypto `aead` 0.6 trait implementations (feature `aead`): [`Aes128Gcm`],
//! [`Aes192Gcm`] and [`Aes256Gcm`] are drop-ins for the `aes-gcm` crate's types of the same
//! names (12-byte nonces, 16-byte tags appended), running aesx's kernels:
//!
//! ```
//! # #[cfg(feature = "alloc")] {
//! use aead::{Aead, KeyInit};
//! use aesx::Aes256Gcm; // was: use aes_gcm::Aes256Gcm;
//!
//! let cipher = Aes256Gcm::new(&[7u8; 32].into());
//! let nonce = [1u8; 12].into();
//! let ct = cipher.encrypt(&nonce, b"plaintext".as_ref()).unwrap();
//! assert_eq!(cipher.decrypt(&nonce, ct.as_ref()).unwrap(), b"plaintext");
//! # }
//! ```
//!
//! A failed decryption returns `aead::Error`; as with [`crate::AesGcm`], the output buffer then
//! holds no plaintext (it is zeroed).

use aead::array::Array;
use aead::consts::{U12, U16, U24, U32};
use aead::inout::InOutBuf;
use aead::{AeadCore, AeadInOut, Key, KeyInit, KeySizeUser, Nonce, Tag, TagPosition};

use crate::AesGcm;

macro_rules! gcm_type {
    ($name:ident, $ks:ty, $bits:literal) => {
        #[doc = concat!("AES-", $bits, "-GCM with 12-byte nonces and 16-byte tags, implementing the RustCrypto `aead` traits.")]
        #[derive(Debug)]
        pub struct $name(AesGcm);

        impl $name {
            /// The [`AesGcm`] key underneath (for the rest of aesx's GCM API).
            pub fn as_aes_gcm(&self) -> &AesGcm {
                &self.0
            }
        }

        impl KeySizeUser for $name {
            type KeySize = $ks;
        }

        impl KeyInit for $name {
            fn new(key: &Key<Self>) -> Self {
                // The key length is fixed by the type, so this cannot fail.
                $name(AesGcm::new(key.as_slice()).expect("AES key of a valid length"))
            }
        }

        impl AeadCore for $name {
            type NonceSize = U12;
            type TagSize = U16;
            const TAG_POSITION: TagPosition = TagPosition::Postfix;
        }

        impl AeadInOut for $name {
            fn encrypt_inout_detached(
                &self,
                nonce: &Nonce<Self>,
                associated_data: &[u8],
                buffer: InOutBuf<'_, '_, u8>,
            ) -> aead::Result<Tag<Self>> {
                let out = buffer.into_out_with_copied_in();
                let t = self
                    .0
                    .seal_in_place_detached(nonce.as_slice(), associated_data, out)
                    .map_err(|_| aead::Error)?;
                let mut tag = Array::<u8, U16>::default();
                tag.copy_from_slice(t.as_bytes());
                Ok(tag)
            }

            fn decrypt_inout_detached(
                &self,
                nonce: &Nonce<Self>,
                associated_data: &[u8],
                buffer: InOutBuf<'_, '_, u8>,
                tag: &Tag<Self>,
            ) -> aead::Result<()> {
                let out = buffer.into_out_with_copied_in();
                self.0
                    .open_in_place_detached(nonce.as_slice(), associated_data, out, tag.as_slice())
                    .map_err(|_| aead::Error)
            }
        }
    };
}

gcm_type!(Aes128Gcm, U16, "128");
gcm_type!(Aes192Gcm, U24, "192");
gcm_type!(Aes256Gcm, U32, "256");
