//! The library's one error type.

use core::fmt;

/// What went wrong. Messages never contain key or data bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The key is not 16, 24 or 32 bytes long.
    InvalidKeyLength,
    /// The IV or counter block is not 16 bytes long.
    InvalidIvLength,
    /// The data is not a whole number of 16-byte blocks (ECB, CBC without padding).
    NotBlockAligned,
    /// PKCS#7 padding is malformed (wrong key, wrong IV, or corrupted ciphertext).
    BadPadding,
    /// The requested backend cannot run on this CPU.
    BackendUnavailable,
    /// An output buffer is too small for the result.
    OutputTooSmall,
    /// A backend name was not recognised.
    UnknownBackend,
    /// A hash algorithm name was not recognised.
    UnknownAlgorithm,
    /// A length argument is out of range (e.g. more than 7 trailing bits).
    InvalidLength,
    /// A GCM nonce is empty (any other length is accepted; 12 bytes is the fast path).
    InvalidNonceLength,
    /// A GCM tag length is not 16, 15, 14, 13, 12, 8 or 4 bytes, or a tag passed to `open`
    /// does not have the key's tag length.
    InvalidTagLength,
    /// GCM authentication failed: wrong key, nonce, associated data or tag, or modified
    /// ciphertext. No plaintext was released (the buffer was zeroed).
    AuthenticationFailed,
    /// More than 2^32 - 2 blocks (68 719 476 704 bytes) of GCM message under one nonce.
    MessageTooLong,
    /// More than 2^61 - 1 bytes of GCM associated data.
    AadTooLong,
    /// Associated data was supplied after message data in a GCM stream.
    AadAfterData,
    /// The call would run a CTR stream past its last byte position (2^64 - 1 bytes per
    /// stream): nothing was processed, so no keystream is ever reused.
    LengthLimit,
}

/// The error type of every fallible `aesx` call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Error {
    kind: ErrorKind,
}

impl Error {
    pub(crate) const fn new(kind: ErrorKind) -> Self {
        Error { kind }
    }

    /// The kind of failure.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }
}

impl From<ErrorKind> for Error {
    fn from(kind: ErrorKind) -> Self {
        Error { kind }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self.kind {
            ErrorKind::InvalidKeyLength => {
                "AES key must be 16, 24 or 32 bytes (128, 192 or 256 bits)"
            }
            ErrorKind::InvalidIvLength => "IV / counter block must be 16 bytes",
            ErrorKind::NotBlockAligned => "data length must be a multiple of the 16-byte AES block",
            ErrorKind::BadPadding => "bad PKCS#7 padding (wrong key or IV, or corrupted data)",
            ErrorKind::BackendUnavailable => {
                "the requested AES backend is not available on this CPU"
            }
            ErrorKind::OutputTooSmall => "output buffer is too small",
            ErrorKind::UnknownBackend => {
                "unknown backend name (expected soft, vpaes, aesni, vaes256 or vaes512)"
            }
            ErrorKind::UnknownAlgorithm => {
                "unknown hash algorithm (expected fugue224, fugue256, fugue384 or fugue512)"
            }
            ErrorKind::InvalidLength => "length out of range",
            ErrorKind::InvalidNonceLength => "GCM nonce must be at least 1 byte (12 recommended)",
            ErrorKind::InvalidTagLength => {
                "GCM tag length must be 16, 15, 14, 13, 12, 8 or 4 bytes, and match the key's"
            }
            ErrorKind::AuthenticationFailed => {
                "authentication failed (wrong key, nonce, associated data or tag, or modified ciphertext)"
            }
            ErrorKind::MessageTooLong => {
                "GCM message too long: at most 2^32 - 2 blocks (68719476704 bytes) per nonce"
            }
            ErrorKind::AadTooLong => "GCM associated data too long: at most 2^61 - 1 bytes",
            ErrorKind::AadAfterData => "GCM associated data must come before the message data",
            ErrorKind::LengthLimit => {
                "CTR stream limit: position + length would pass 2^64 - 1 bytes (nothing was processed)"
            }
        })
    }
}

impl core::error::Error for Error {}
