//! The 104-byte header: layout, limits, key derivation and authentication (docs/format.md
//! sections 2 and 3 are the specification; this file follows them).

use aesx::{AesGcm, Backend};
use hkdf::Hkdf;
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;
use subtle::ConstantTimeEq;
use zeroize::Zeroizing;

use crate::error::{Error, ErrorKind, KeySourceKind};

/// The first 8 bytes of every aesx file: 0x89 "aesx" CR LF 0x1A.
pub const MAGIC: [u8; 8] = [0x89, b'a', b'e', b's', b'x', 0x0d, 0x0a, 0x1a];
/// The format version this crate writes and reads.
pub const VERSION: u8 = 1;
/// Header length in bytes (version 1).
pub const HEADER_LEN: usize = 104;
/// Bytes covered by the header tag (everything before it).
pub(crate) const TAGGED_LEN: usize = 88;
/// GCM tag length after every chunk.
pub const TAG_LEN: usize = 16;

/// Smallest and largest chunk size (log2 of the plaintext bytes per chunk) readers accept and
/// writers may choose.
pub const MIN_CHUNK_LOG2: u8 = 10;
/// See [`MIN_CHUNK_LOG2`].
pub const MAX_CHUNK_LOG2: u8 = 20;
/// The chunk size writers use unless told otherwise: 2^16 = 64 KiB.
pub const DEFAULT_CHUNK_LOG2: u8 = 16;

/// Largest Argon2 memory a reader accepts, in KiB (1 GiB).
pub const MAX_ARGON2_M_KIB: u32 = 1 << 20;
/// Largest Argon2 pass count a reader accepts.
pub const MAX_ARGON2_T: u32 = 10;
/// Largest Argon2 lane count a reader accepts.
pub const MAX_ARGON2_P: u32 = 16;

// HKDF-Expand info strings (docs/format.md, "Key derivation").
const INFO_KEY_CHECK: &[u8] = b"aesx v1 key check";
const INFO_HEADER_KEY: &[u8] = b"aesx v1 header key";
const INFO_NONCE_PREFIX: &[u8] = b"aesx v1 nonce prefix";
const INFO_CHUNK_KEY: &[u8] = b"aesx v1 chunk key ";

/// The AEAD that seals the chunks.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
pub enum Aead {
    /// AES-256-GCM (id 1), the default.
    #[default]
    Aes256Gcm,
    /// AES-128-GCM (id 2).
    Aes128Gcm,
}

impl Aead {
    /// The id stored in the header.
    pub fn id(self) -> u8 {
        match self {
            Aead::Aes256Gcm => 1,
            Aead::Aes128Gcm => 2,
        }
    }

    /// The AEAD with this header id.
    pub fn from_id(id: u8) -> Option<Aead> {
        match id {
            1 => Some(Aead::Aes256Gcm),
            2 => Some(Aead::Aes128Gcm),
            _ => None,
        }
    }

    /// Key length in bytes.
    pub fn key_len(self) -> usize {
        match self {
            Aead::Aes256Gcm => 32,
            Aead::Aes128Gcm => 16,
        }
    }

    /// The name used in the HKDF info string and in messages: "AES-256-GCM" or "AES-128-GCM".
    pub fn name(self) -> &'static str {
        match self {
            Aead::Aes256Gcm => "AES-256-GCM",
            Aead::Aes128Gcm => "AES-128-GCM",
        }
    }
}

/// Argon2id cost parameters (RFC 9106 names: m = memory in KiB, t = passes, p = lanes).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Argon2Params {
    /// Memory in KiB.
    pub m_kib: u32,
    /// Passes over the memory.
    pub t: u32,
    /// Lanes (degree of parallelism).
    pub p: u32,
}

impl Default for Argon2Params {
    /// RFC 9106's second recommended setting: t = 3, m = 64 MiB, p = 4.
    fn default() -> Self {
        Argon2Params {
            m_kib: 64 * 1024,
            t: 3,
            p: 4,
        }
    }
}

impl Argon2Params {
    /// Checks the bounds every reader enforces (the writer enforces the same, so every file
    /// it writes can be read back): 1 <= p <= 16, 1 <= t <= 10, 8 * p <= m_kib <= 1 GiB.
    pub fn check(&self) -> Result<(), Error> {
        let bad = |s: String| Err(Error::new(ErrorKind::HostileParameters(s)));
        if self.p == 0 || self.p > MAX_ARGON2_P {
            return bad(format!(
                "Argon2 lanes p = {} (accepted: 1 to {MAX_ARGON2_P})",
                self.p
            ));
        }
        if self.t == 0 || self.t > MAX_ARGON2_T {
            return bad(format!(
                "Argon2 passes t = {} (accepted: 1 to {MAX_ARGON2_T})",
                self.t
            ));
        }
        if self.m_kib > MAX_ARGON2_M_KIB {
            return bad(format!(
                "Argon2 memory m = {} KiB (accepted: at most {MAX_ARGON2_M_KIB} KiB = 1 GiB)",
                self.m_kib
            ));
        }
        if self.m_kib < 8 * self.p {
            return bad(format!(
                "Argon2 memory m = {} KiB is below 8 KiB per lane (p = {})",
                self.m_kib, self.p
            ));
        }
        Ok(())
    }
}

/// Where the master key comes from, as recorded in the header.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum KeySource {
    /// A 32-byte key (id 1).
    KeyFile,
    /// Argon2id of a passphrase (id 2) with these parameters and salt.
    Passphrase {
        /// Argon2id cost.
        params: Argon2Params,
        /// Argon2id salt.
        salt: [u8; 16],
    },
}

impl KeySource {
    /// The kind, without parameters.
    pub fn kind(&self) -> KeySourceKind {
        match self {
            KeySource::KeyFile => KeySourceKind::KeyFile,
            KeySource::Passphrase { .. } => KeySourceKind::Passphrase,
        }
    }
}

/// The secret a file is encrypted under: a 32-byte key or a passphrase. Wiped on drop.
#[derive(Clone)]
pub enum Secret {
    /// A 32-byte key, used directly as the master key.
    Key(Zeroizing<[u8; 32]>),
    /// A passphrase (any bytes, not empty); the master key is Argon2id of it.
    Passphrase(Zeroizing<Vec<u8>>),
}

impl core::fmt::Debug for Secret {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Secret::Key(_) => f.write_str("Secret::Key(..)"),
            Secret::Passphrase(_) => f.write_str("Secret::Passphrase(..)"),
        }
    }
}

impl Secret {
    /// A 32-byte key.
    pub fn key(key: &[u8; 32]) -> Secret {
        Secret::Key(Zeroizing::new(*key))
    }

    /// The contents of a key file: exactly 32 raw bytes, or 64 hex digits (surrounding ASCII
    /// whitespace ignored), as `aesx keygen` writes the former.
    pub fn from_key_file(contents: &[u8]) -> Result<Secret, Error> {
        let mut key = Zeroizing::new([0u8; 32]);
        let trimmed = contents.trim_ascii();
        if trimmed.len() == 64 && trimmed.iter().all(u8::is_ascii_hexdigit) {
            for (i, pair) in trimmed.chunks_exact(2).enumerate() {
                key[i] = (hex_val(pair[0]) << 4) | hex_val(pair[1]);
            }
            return Ok(Secret::Key(key));
        }
        if contents.len() == 32 {
            key.copy_from_slice(contents);
            return Ok(Secret::Key(key));
        }
        Err(Error::new(ErrorKind::BadKey(format!(
            "the key file holds {} bytes; an aesx key file holds exactly 32 random bytes (make one with `aesx keygen FILE`) or 64 hex digits",
            contents.len()
        ))))
    }

    /// A passphrase (its bytes as given; not empty).
    pub fn passphrase(pass: impl Into<Vec<u8>>) -> Result<Secret, Error> {
        let p = Zeroizing::new(pass.into());
        if p.is_empty() {
            return Err(Error::new(ErrorKind::EmptyPassphrase));
        }
        Ok(Secret::Passphrase(p))
    }

    /// Key file or passphrase.
    pub fn kind(&self) -> KeySourceKind {
        match self {
            Secret::Key(_) => KeySourceKind::KeyFile,
            Secret::Passphrase(_) => KeySourceKind::Passphrase,
        }
    }
}

/// Value of an ASCII hex digit (the caller checked it is one). Branch-free on the digit.
fn hex_val(c: u8) -> u8 {
    // Digits: c - '0'; letters: (c | 0x20) - 'a' + 10. Select with a mask, no table lookup.
    let digit = c.wrapping_sub(b'0');
    let letter = (c | 0x20).wrapping_sub(b'a').wrapping_add(10);
    let is_digit = 0u8.wrapping_sub((digit < 10) as u8);
    (digit & is_digit) | (letter & !is_digit)
}

/// A parsed header. Parsing checks the magic, version, ids and limits; it does not
/// authenticate (that needs the key: `Header::unlock`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    aead: Aead,
    chunk_log2: u8,
    source: KeySource,
    file_salt: [u8; 32],
    key_check: [u8; 16],
    tag: [u8; 16],
}

/// Keys derived for one file. The secret ones are wiped on drop (the AES-GCM key wipes
/// itself); the nonce prefix and key-check value are not secret.
pub(crate) struct FileKeys {
    pub(crate) gcm: AesGcm,
    pub(crate) prefix: [u8; 4],
    header_key: Zeroizing<[u8; 32]>,
    key_check: [u8; 16],
}

/// Runs Argon2id v1.3 (32-byte output) after checking the parameters.
fn argon2id(
    pass: &[u8],
    params: &Argon2Params,
    salt: &[u8; 16],
) -> Result<Zeroizing<[u8; 32]>, Error> {
    params.check()?;
    let p = argon2::Params::new(params.m_kib, params.t, params.p, Some(32))
        .map_err(|e| Error::new(ErrorKind::HostileParameters(format!("Argon2: {e}"))))?;
    let a = argon2::Argon2::new(argon2::Algorithm::Argon2id, argon2::Version::V0x13, p);
    let mut out = Zeroizing::new([0u8; 32]);
    a.hash_password_into(pass, salt, &mut out[..])
        .map_err(|e| Error::new(ErrorKind::BadOptions(format!("Argon2: {e}"))))?;
    Ok(out)
}

/// The master key of a file: the key itself, or Argon2id of the passphrase.
fn master_key(secret: &Secret, source: &KeySource) -> Result<Zeroizing<[u8; 32]>, Error> {
    match (secret, source) {
        (Secret::Key(k), KeySource::KeyFile) => Ok(k.clone()),
        (Secret::Passphrase(p), KeySource::Passphrase { params, salt }) => {
            argon2id(p, params, salt)
        }
        (_, s) => Err(Error::new(ErrorKind::WrongKeySource { file: s.kind() })),
    }
}

/// HKDF-Extract(file salt, master) then the four HKDF-Expand outputs.
fn derive(
    master: &[u8; 32],
    file_salt: &[u8; 32],
    aead: Aead,
    backend: Option<Backend>,
) -> FileKeys {
    let hk = Hkdf::<Sha256>::new(Some(file_salt), master);
    let expand = |info: &[u8], out: &mut [u8]| {
        hk.expand(info, out)
            .expect("HKDF-SHA256 can expand up to 8160 bytes")
    };
    let mut key_check = [0u8; 16];
    expand(INFO_KEY_CHECK, &mut key_check);
    let mut header_key = Zeroizing::new([0u8; 32]);
    expand(INFO_HEADER_KEY, &mut header_key[..]);
    let mut prefix = [0u8; 4];
    expand(INFO_NONCE_PREFIX, &mut prefix);
    let mut info = Vec::with_capacity(INFO_CHUNK_KEY.len() + 11);
    info.extend_from_slice(INFO_CHUNK_KEY);
    info.extend_from_slice(aead.name().as_bytes());
    let mut chunk_key = Zeroizing::new([0u8; 32]);
    let ck = &mut chunk_key[..aead.key_len()];
    expand(&info, ck);
    let gcm = match backend {
        Some(b) => AesGcm::with_backend(ck, b),
        None => AesGcm::new(ck),
    }
    .expect("16- or 32-byte key on an available backend");
    FileKeys {
        gcm,
        prefix,
        header_key,
        key_check,
    }
}

/// HMAC-SHA256 over the first 88 header bytes, truncated to 16 bytes.
fn header_tag(key: &[u8; 32], tagged: &[u8]) -> [u8; 16] {
    let mut mac =
        <Hmac<Sha256> as KeyInit>::new_from_slice(key).expect("HMAC takes any key length");
    mac.update(tagged);
    let full = mac.finalize().into_bytes();
    let mut t = [0u8; 16];
    t.copy_from_slice(&full[..16]);
    t
}

impl Header {
    /// The AEAD of the chunks.
    pub fn aead(&self) -> Aead {
        self.aead
    }

    /// Plaintext bytes per chunk, as log2.
    pub fn chunk_log2(&self) -> u8 {
        self.chunk_log2
    }

    /// Plaintext bytes per chunk.
    pub fn chunk_size(&self) -> usize {
        1 << self.chunk_log2
    }

    /// Key file or passphrase, with the Argon2 parameters.
    pub fn key_source(&self) -> &KeySource {
        &self.source
    }

    /// Parses (without authenticating) a header. Checks, in this order: magic, version, AEAD
    /// id, chunk size, key source, the zero fields of a key-file header, the Argon2 limits.
    pub fn parse(b: &[u8; HEADER_LEN]) -> Result<Header, Error> {
        if b[..8] != MAGIC {
            return Err(Error::new(ErrorKind::NotAesx));
        }
        if b[8] != VERSION {
            return Err(Error::new(ErrorKind::UnsupportedVersion(b[8])));
        }
        let aead = Aead::from_id(b[9]).ok_or(Error::new(ErrorKind::UnsupportedAead(b[9])))?;
        let chunk_log2 = b[10];
        if !(MIN_CHUNK_LOG2..=MAX_CHUNK_LOG2).contains(&chunk_log2) {
            return Err(Error::new(ErrorKind::UnsupportedChunkSize(chunk_log2)));
        }
        let be32 = |o: usize| u32::from_be_bytes(b[o..o + 4].try_into().unwrap());
        let params = Argon2Params {
            m_kib: be32(12),
            t: be32(16),
            p: be32(20),
        };
        let argon_salt: [u8; 16] = b[24..40].try_into().unwrap();
        let source = match b[11] {
            1 => {
                if params.m_kib != 0 || params.t != 0 || params.p != 0 {
                    return Err(Error::new(ErrorKind::MalformedHeader(
                        "a key-file header has non-zero Argon2 parameters",
                    )));
                }
                if argon_salt != [0u8; 16] {
                    return Err(Error::new(ErrorKind::MalformedHeader(
                        "a key-file header has a non-zero Argon2 salt",
                    )));
                }
                KeySource::KeyFile
            }
            2 => {
                params.check()?;
                KeySource::Passphrase {
                    params,
                    salt: argon_salt,
                }
            }
            k => return Err(Error::new(ErrorKind::UnsupportedKeySource(k))),
        };
        Ok(Header {
            aead,
            chunk_log2,
            source,
            file_salt: b[40..72].try_into().unwrap(),
            key_check: b[72..88].try_into().unwrap(),
            tag: b[88..104].try_into().unwrap(),
        })
    }

    /// The header bytes.
    pub fn to_bytes(&self) -> [u8; HEADER_LEN] {
        let mut b = self.tagged_bytes();
        b[88..].copy_from_slice(&self.tag);
        b
    }

    /// All fields but the tag (bytes 88.. are zero).
    fn tagged_bytes(&self) -> [u8; HEADER_LEN] {
        let mut b = [0u8; HEADER_LEN];
        b[..8].copy_from_slice(&MAGIC);
        b[8] = VERSION;
        b[9] = self.aead.id();
        b[10] = self.chunk_log2;
        match &self.source {
            KeySource::KeyFile => b[11] = 1,
            KeySource::Passphrase { params, salt } => {
                b[11] = 2;
                b[12..16].copy_from_slice(&params.m_kib.to_be_bytes());
                b[16..20].copy_from_slice(&params.t.to_be_bytes());
                b[20..24].copy_from_slice(&params.p.to_be_bytes());
                b[24..40].copy_from_slice(salt);
            }
        }
        b[40..72].copy_from_slice(&self.file_salt);
        b[72..88].copy_from_slice(&self.key_check);
        b
    }

    /// Derives the file's keys from `secret` and authenticates the header: first the
    /// key-check value ([`ErrorKind::WrongKey`]), then the header tag
    /// ([`ErrorKind::HeaderCorrupted`]). Both comparisons run in constant time.
    pub(crate) fn unlock(
        &self,
        secret: &Secret,
        backend: Option<Backend>,
    ) -> Result<FileKeys, Error> {
        let master = master_key(secret, &self.source)?;
        let keys = derive(&master, &self.file_salt, self.aead, backend);
        if !bool::from(keys.key_check.ct_eq(&self.key_check)) {
            return Err(Error::new(ErrorKind::WrongKey));
        }
        let expect = header_tag(&keys.header_key, &self.tagged_bytes()[..TAGGED_LEN]);
        if !bool::from(expect.ct_eq(&self.tag)) {
            return Err(Error::new(ErrorKind::HeaderCorrupted));
        }
        Ok(keys)
    }

    /// A new header for `secret` and its keys. `salts` = (file salt, Argon2 salt), random
    /// unless given (test vectors only).
    pub(crate) fn create(
        secret: &Secret,
        aead: Aead,
        chunk_log2: u8,
        argon2: Argon2Params,
        backend: Option<Backend>,
        salts: Option<([u8; 32], [u8; 16])>,
    ) -> Result<(Header, FileKeys), Error> {
        if !(MIN_CHUNK_LOG2..=MAX_CHUNK_LOG2).contains(&chunk_log2) {
            return Err(Error::new(ErrorKind::BadOptions(format!(
                "chunk size 2^{chunk_log2}: choose 2^{MIN_CHUNK_LOG2} to 2^{MAX_CHUNK_LOG2}"
            ))));
        }
        let (file_salt, argon_salt) = match salts {
            Some(s) => s,
            None => {
                let mut f = [0u8; 32];
                let mut a = [0u8; 16];
                random(&mut f)?;
                random(&mut a)?;
                (f, a)
            }
        };
        let source = match secret {
            Secret::Key(_) => KeySource::KeyFile,
            Secret::Passphrase(_) => {
                argon2.check().map_err(|e| match e.kind() {
                    ErrorKind::HostileParameters(s) => Error::new(ErrorKind::BadOptions(format!(
                        "{s}: choose parameters every aesx reader accepts"
                    ))),
                    _ => e,
                })?;
                KeySource::Passphrase {
                    params: argon2,
                    salt: argon_salt,
                }
            }
        };
        let master = master_key(secret, &source)?;
        let keys = derive(&master, &file_salt, aead, backend);
        let mut h = Header {
            aead,
            chunk_log2,
            source,
            file_salt,
            key_check: keys.key_check,
            tag: [0; 16],
        };
        h.tag = header_tag(&keys.header_key, &h.tagged_bytes()[..TAGGED_LEN]);
        Ok((h, keys))
    }
}

/// Fills `buf` from the operating system's random generator.
pub(crate) fn random(buf: &mut [u8]) -> Result<(), Error> {
    getrandom::fill(buf).map_err(|e| Error::new(ErrorKind::Random(e.to_string())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_digits() {
        for (c, v) in (b'0'..=b'9').zip(0..) {
            assert_eq!(hex_val(c), v);
        }
        for (c, v) in (b'a'..=b'f').zip(10..) {
            assert_eq!(hex_val(c), v);
            assert_eq!(hex_val(c.to_ascii_uppercase()), v);
        }
    }

    #[test]
    fn key_file_forms() {
        let raw: Vec<u8> = (0..32).collect();
        let Secret::Key(k) = Secret::from_key_file(&raw).unwrap() else {
            panic!()
        };
        assert_eq!(&k[..], &raw[..]);
        let hex: String = raw.iter().map(|b| format!("{b:02X}")).collect();
        let Secret::Key(k2) = Secret::from_key_file(format!(" {hex}\n").as_bytes()).unwrap() else {
            panic!()
        };
        assert_eq!(&k2[..], &raw[..]);
        assert!(Secret::from_key_file(&raw[..16]).is_err());
        assert!(Secret::from_key_file(&[0u8; 33]).is_err());
        assert!(Secret::from_key_file(&hex.as_bytes()[..62]).is_err());
    }

    #[test]
    fn argon2_bounds() {
        assert!(Argon2Params::default().check().is_ok());
        let ok = Argon2Params {
            m_kib: MAX_ARGON2_M_KIB,
            t: MAX_ARGON2_T,
            p: MAX_ARGON2_P,
        };
        assert!(ok.check().is_ok());
        for bad in [
            Argon2Params {
                m_kib: MAX_ARGON2_M_KIB + 1,
                ..ok
            },
            Argon2Params {
                t: MAX_ARGON2_T + 1,
                ..ok
            },
            Argon2Params {
                p: MAX_ARGON2_P + 1,
                ..ok
            },
            Argon2Params { t: 0, ..ok },
            Argon2Params { p: 0, ..ok },
            Argon2Params {
                m_kib: 8 * 4 - 1,
                t: 1,
                p: 4,
            },
            Argon2Params {
                m_kib: u32::MAX,
                t: u32::MAX,
                p: u32::MAX,
            },
        ] {
            assert!(
                matches!(
                    bad.check().unwrap_err().kind(),
                    ErrorKind::HostileParameters(_)
                ),
                "{bad:?}"
            );
        }
    }
}
