//! The aesx file format: authenticated, streaming AES-GCM encryption of files under a key
//! file or a passphrase.
//!
//! The format is specified in `docs/format.md` (the document defines it; this crate follows
//! it). In short: a 104-byte authenticated header (magic, version, AEAD, chunk size, key
//! source with its Argon2id parameters and salt, a random 32-byte file salt, a key-check
//! value, an HMAC tag), then the plaintext in fixed-size chunks (64 KiB by default), each
//! sealed with AES-256-GCM (or AES-128-GCM) under a per-file key derived with HKDF-SHA256 and
//! a STREAM nonce (prefix, chunk counter, last-chunk flag). Reordered, dropped, duplicated,
//! modified, truncated or extended files are refused, and the reader says which.
//!
//! - [`Encryptor`] (`std::io::Write`) and [`Decryptor`] (`std::io::Read`): adapters.
//! - [`encrypt_stream`] / [`decrypt_stream`]: whole streams with reading, sealing/opening
//!   and writing overlapped on threads (what the `aesx` command uses).
//! - [`Secret`]: a 32-byte key ([`keygen`] makes one) or a passphrase.
//!
//! ```
//! use std::io::{Read, Write};
//! use aesx_file::{Decryptor, Encryptor, Options, Secret};
//!
//! let key = aesx_file::keygen()?;
//! let secret = Secret::key(&key);
//! let mut enc = Encryptor::new(Vec::new(), &secret, &Options::default())?;
//! enc.write_all(b"attack at dawn")?;
//! let mut file = enc.finish()?;
//!
//! let mut plain = Vec::new();
//! Decryptor::new(&file[..], &secret, &Options::default())?.read_to_end(&mut plain)?;
//! assert_eq!(plain, b"attack at dawn");
//!
//! // One flipped bit anywhere: refused, and the error says where.
//! let last = file.len() - 1;
//! file[last] ^= 1;
//! let err = Decryptor::new(&file[..], &secret, &Options::default())?
//!     .read_to_end(&mut Vec::new())
//!     .unwrap_err();
//! let why = aesx_file::format_error(&err).unwrap();
//! assert!(why.is_tampering());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Memory: a batch is 4 MiB of plaintext; the adapters hold one, the stream functions four.
//! Passphrases add Argon2id's memory (64 MiB by default) while the key is derived.
#![forbid(unsafe_code)]

mod batch;
mod chunk;
mod error;
mod header;
mod read;
mod stream;
mod write;

use aesx::Backend;
use zeroize::Zeroizing;

pub use chunk::BATCH_BYTES;
pub use error::{Error, ErrorKind, KeySourceKind, format_error};
pub use header::{
    Aead, Argon2Params, DEFAULT_CHUNK_LOG2, HEADER_LEN, Header, KeySource, MAGIC, MAX_ARGON2_M_KIB,
    MAX_ARGON2_P, MAX_ARGON2_T, MAX_CHUNK_LOG2, MIN_CHUNK_LOG2, Secret, TAG_LEN, VERSION,
};
pub use read::{Decryptor, read_header};
pub use stream::{
    BUFFERS, StreamError, decrypt_stream, decrypt_stream_with_header, encrypt_stream,
};
pub use write::Encryptor;

/// Choices for writing (all fields) and reading (`threads`, `backend`).
#[derive(Clone, Debug)]
pub struct Options {
    /// The AEAD for new files (default AES-256-GCM).
    pub aead: Aead,
    /// Plaintext bytes per chunk as log2, [`MIN_CHUNK_LOG2`]..=[`MAX_CHUNK_LOG2`]
    /// (default [`DEFAULT_CHUNK_LOG2`] = 64 KiB).
    pub chunk_log2: u8,
    /// Argon2id cost for new passphrase files (default RFC 9106's t=3, m=64 MiB, p=4).
    pub argon2: Argon2Params,
    /// Threads that seal/open chunks (default: the cores available). The output does not
    /// depend on it.
    pub threads: usize,
    /// Force an AES backend (tests, benchmarks); `None` = the fastest.
    pub backend: Option<Backend>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            aead: Aead::default(),
            chunk_log2: DEFAULT_CHUNK_LOG2,
            argon2: Argon2Params::default(),
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            backend: None,
        }
    }
}

/// Whether `prefix` (the first bytes of a file, 8 or more) starts with the aesx magic.
pub fn is_aesx(prefix: &[u8]) -> bool {
    prefix.len() >= MAGIC.len() && prefix[..MAGIC.len()] == MAGIC
}

/// 32 random bytes from the operating system: a new key (for a key file).
pub fn keygen() -> Result<Zeroizing<[u8; 32]>, Error> {
    let mut k = Zeroizing::new([0u8; 32]);
    header::random(&mut k[..])?;
    Ok(k)
}

/// Fixed salts, for test vectors only.
///
/// A file's security rests on its random 32-byte file salt (it makes the per-file key and
/// nonces unique). These functions take the salts from the caller so that test vectors can
/// be reproduced byte for byte by independent implementations. Never use them for real
/// data; the `aesx` command does not.
#[doc(hidden)]
pub mod testing {
    use std::io::{self, Read, Write};

    use crate::{Encryptor, Options, Secret, StreamError};

    /// [`Encryptor::new`] with the given file salt and Argon2 salt.
    pub fn encryptor_with_salts<W: Write>(
        inner: W,
        secret: &Secret,
        opts: &Options,
        file_salt: [u8; 32],
        argon2_salt: [u8; 16],
    ) -> io::Result<Encryptor<W>> {
        Encryptor::with_salts(inner, secret, opts, Some((file_salt, argon2_salt)))
    }

    /// [`crate::encrypt_stream`] with the given salts.
    pub fn encrypt_stream_with_salts<R: Read + Send, W: Write + Send>(
        reader: R,
        writer: W,
        secret: &Secret,
        opts: &Options,
        file_salt: [u8; 32],
        argon2_salt: [u8; 16],
    ) -> Result<u64, StreamError> {
        crate::stream::encrypt_stream_salted(
            reader,
            writer,
            secret,
            opts,
            None,
            &|_| {},
            Some((file_salt, argon2_salt)),
        )
    }
}
