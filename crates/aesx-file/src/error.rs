//! The crate's error type: what went wrong with a file, worded for the person who has to act.

use std::fmt;
use std::io;

/// What went wrong. Messages never contain key, passphrase or plaintext bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The input does not start with the aesx magic bytes.
    NotAesx,
    /// The input is empty (an aesx file is at least 120 bytes).
    EmptyInput,
    /// The input ends inside the 104-byte header.
    HeaderTruncated,
    /// The header names a format version this reader does not know.
    UnsupportedVersion(u8),
    /// The header names an AEAD id this reader does not know.
    UnsupportedAead(u8),
    /// The header names a chunk size outside 2^10..=2^20 bytes.
    UnsupportedChunkSize(u8),
    /// The header names a key source this reader does not know.
    UnsupportedKeySource(u8),
    /// A field that must be zero is not (e.g. Argon2 fields of a key-file header).
    MalformedHeader(&'static str),
    /// Argon2 parameters above what this reader accepts (or invalid): refused before running
    /// the KDF. The string says which bound.
    HostileParameters(String),
    /// The file was encrypted with a passphrase and a key was given, or the other way round.
    WrongKeySource {
        /// What the header says the file needs.
        file: KeySourceKind,
    },
    /// The key-check value does not match: wrong key or passphrase (or a damaged salt or
    /// key-check field, which cannot be told apart from a wrong key).
    WrongKey,
    /// The key is right but the header fails authentication: it was modified.
    HeaderCorrupted,
    /// Chunk `n` (from 0) fails authentication under every flag.
    ChunkCorrupted(u64),
    /// The last chunk present (`n`) fails authentication and is shorter than a full chunk:
    /// the file was cut inside it, bytes were added after it, or it was modified.
    LastChunkCorrupted(u64),
    /// The file ends after chunk `n`, which authenticates as a middle chunk: chunks are
    /// missing at the end.
    Truncated(u64),
    /// The file ends in the middle of a chunk's tag (fewer than 16 bytes in the last record),
    /// or right after the header.
    TruncatedRecord(u64),
    /// Chunk `n` authenticates as the final chunk but more bytes follow it.
    TrailingData(u64),
    /// The final chunk `n` is empty although chunks precede it (no conforming writer makes
    /// such a file).
    EmptyFinalChunk(u64),
    /// A key file that is neither 32 raw bytes nor 64 hex digits, or a key of the wrong length.
    BadKey(String),
    /// An empty passphrase.
    EmptyPassphrase,
    /// Encryption options out of range (chunk size, Argon2 parameters, threads).
    BadOptions(String),
    /// The stream has too many chunks for the 7-byte counter (2^56).
    TooLong,
    /// The operating system's random generator failed.
    Random(String),
    /// The writer was used after an earlier failure.
    Poisoned,
}

/// Which kind of secret a file was encrypted with.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum KeySourceKind {
    /// A 32-byte key (key file).
    KeyFile,
    /// A passphrase through Argon2id.
    Passphrase,
}

/// The error of every fallible call in this crate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
}

impl Error {
    pub(crate) fn new(kind: ErrorKind) -> Error {
        Error { kind }
    }

    /// What went wrong.
    pub fn kind(&self) -> &ErrorKind {
        &self.kind
    }

    /// True for failures that mean the file was modified or damaged (as opposed to a wrong
    /// key, an unsupported file or bad options).
    pub fn is_tampering(&self) -> bool {
        matches!(
            self.kind,
            ErrorKind::HeaderCorrupted
                | ErrorKind::ChunkCorrupted(_)
                | ErrorKind::LastChunkCorrupted(_)
                | ErrorKind::Truncated(_)
                | ErrorKind::TruncatedRecord(_)
                | ErrorKind::TrailingData(_)
                | ErrorKind::EmptyFinalChunk(_)
        )
    }
}

impl From<ErrorKind> for Error {
    fn from(kind: ErrorKind) -> Error {
        Error { kind }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use ErrorKind::*;
        match &self.kind {
            NotAesx => write!(
                f,
                "not an aesx file (it does not start with the aesx magic bytes)"
            ),
            EmptyInput => write!(
                f,
                "the input is empty: not an aesx file (one is at least 120 bytes)"
            ),
            HeaderTruncated => write!(f, "file truncated: it ends inside the 104-byte aesx header"),
            UnsupportedVersion(v) => write!(
                f,
                "unsupported aesx format version {v} (this aesx reads version 1); use a newer aesx"
            ),
            UnsupportedAead(a) => write!(
                f,
                "unsupported AEAD id {a} in the header (this aesx knows 1 = AES-256-GCM and 2 = AES-128-GCM); use a newer aesx"
            ),
            UnsupportedChunkSize(c) => write!(
                f,
                "unsupported chunk size 2^{c} in the header (this aesx reads 2^10 to 2^20 bytes)"
            ),
            UnsupportedKeySource(k) => write!(
                f,
                "unsupported key source {k} in the header (this aesx knows 1 = key file and 2 = passphrase); use a newer aesx"
            ),
            MalformedHeader(what) => write!(f, "malformed aesx header: {what}"),
            HostileParameters(what) => write!(
                f,
                "hostile parameters: {what}; refused before running the KDF (the file may have been crafted to exhaust memory or time)"
            ),
            WrongKeySource { file } => match file {
                KeySourceKind::Passphrase => write!(
                    f,
                    "this file was encrypted with a passphrase; decrypt it with --passphrase or --passphrase-file"
                ),
                KeySourceKind::KeyFile => {
                    write!(
                        f,
                        "this file was encrypted with a key file; decrypt it with --key-file"
                    )
                }
            },
            WrongKey => write!(
                f,
                "wrong key or passphrase (or the header's salt or key check was altered); nothing was decrypted"
            ),
            HeaderCorrupted => write!(
                f,
                "header corrupted: the key is right but the header fails authentication; nothing was decrypted"
            ),
            ChunkCorrupted(n) => write!(f, "chunk {n} corrupted: it fails authentication"),
            LastChunkCorrupted(n) => write!(
                f,
                "chunk {n} (the last in the file) fails authentication: the file was truncated inside it, bytes were appended after it, or it was corrupted"
            ),
            Truncated(n) => write!(
                f,
                "file truncated: it ends after chunk {n}, which is not the final chunk"
            ),
            TruncatedRecord(n) => {
                write!(
                    f,
                    "file truncated: it ends before the tag of chunk {n} is complete"
                )
            }
            TrailingData(n) => write!(
                f,
                "data after the end: chunk {n} is the final chunk, but more bytes follow it"
            ),
            EmptyFinalChunk(n) => write!(
                f,
                "malformed file: final chunk {n} is empty although chunks precede it"
            ),
            BadKey(what) => write!(f, "{what}"),
            EmptyPassphrase => write!(f, "the passphrase is empty"),
            BadOptions(what) => write!(f, "{what}"),
            TooLong => write!(f, "stream too long for the aesx format (2^56 chunks)"),
            Random(e) => write!(f, "the operating system's random generator failed: {e}"),
            Poisoned => write!(f, "the encryptor already failed; start again"),
        }
    }
}

impl std::error::Error for Error {}

impl From<Error> for io::Error {
    fn from(e: Error) -> io::Error {
        io::Error::new(io::ErrorKind::InvalidData, e)
    }
}

/// The [`Error`] inside an `io::Error` made by this crate's adapters, if any.
pub fn format_error(e: &io::Error) -> Option<&Error> {
    e.get_ref().and_then(|inner| inner.downcast_ref::<Error>())
}
