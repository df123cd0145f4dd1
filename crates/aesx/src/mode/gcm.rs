//! AES-GCM (NIST SP 800-38D): authenticated encryption with associated data.
//!
//! [`AesGcm`] is a key: the AES schedule plus the GHASH key powers, computed once. It seals and
//! opens in place with a detached tag, has `Vec` helpers that append or strip the tag, and
//! starts streaming [`GcmEncryptor`]s and [`GcmDecryptor`]s.
//!
//! ```
//! use aesx::AesGcm;
//!
//! let gcm = AesGcm::new(&[7u8; 32])?;
//! let nonce = [1u8; 12]; // never reuse a nonce with the same key
//! let mut buf = *b"attack at dawn";
//! let tag = gcm.seal_in_place_detached(&nonce, b"header", &mut buf)?;
//! gcm.open_in_place_detached(&nonce, b"header", &mut buf, tag.as_ref())?;
//! assert_eq!(&buf, b"attack at dawn");
//!
//! // A wrong tag is refused and the buffer holds no plaintext (it is zeroed).
//! let sealed = gcm.seal(&nonce, b"", b"secret")?;
//! let mut bad = sealed.clone();
//! bad[0] ^= 1;
//! assert!(gcm.open(&nonce, b"", &bad).is_err());
//! # Ok::<(), aesx::Error>(())
//! ```
//!
//! ## Rules and limits
//!
//! - **Nonces** may be any length from 1 byte up; 12 bytes (96 bits) is the fast path and the
//!   recommended size. Other lengths are hashed into the first counter block with GHASH, as
//!   SP 800-38D says, which makes the counter's start depend on the key.
//! - **Counter**: GCM counts with `inc32`: only the last 32 bits of the counter block
//!   increment, modulo 2^32. This differs from the 128-bit counter of [`crate::Ctr`] (SSH
//!   style); the two are separate code paths.
//! - **Message length**: at most 2^32 - 2 blocks (68 719 476 704 bytes) per nonce
//!   ([`ErrorKind::MessageTooLong`]); associated data at most 2^61 - 1 bytes
//!   ([`ErrorKind::AadTooLong`]). Checked before anything is written.
//! - **Tags** are 16 bytes by default. [`AesGcm::with_tag_len`] selects 12..=15, 8 or 4
//!   (SP 800-38D allows 8 and 4 only for special uses; read its Appendix C first). A key
//!   opens only tags of its own length, so an attacker cannot pick a shorter one.
//! - **Decryption policy**: [`AesGcm::open_in_place_detached`] decrypts and hashes in one pass,
//!   then checks the tag in constant time; on failure it **zeroes the buffer** (it does not
//!   restore the ciphertext) and returns [`ErrorKind::AuthenticationFailed`]. The streaming
//!   [`GcmDecryptor`] cannot do that: it releases plaintext from `update` before the tag is
//!   checked in `finish`. Do not act on that plaintext before `finish` returns `Ok`.

use core::borrow::Borrow;
use core::fmt;

use zeroize::Zeroize;

use crate::backend::{self, Big, Blocks, GcmKeys};
use crate::{Aes, Backend, Error, ErrorKind};

/// Largest message under one nonce, in bytes: (2^32 - 2) blocks.
pub const MAX_MESSAGE_LEN: u64 = ((1u64 << 32) - 2) * 16;
/// Largest associated data, in bytes: 2^61 - 1 (2^64 - 1 bits, rounded down to bytes).
pub const MAX_AAD_LEN: u64 = (1u64 << 61) - 1;
/// Largest nonce, in bytes (its bit length must fit the 64-bit length field).
const MAX_NONCE_LEN: u64 = (1u64 << 61) - 1;

/// A GCM authentication tag (16 bytes, or the key's shorter tag length). Not secret.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Tag {
    bytes: [u8; 16],
    len: u8,
}

impl Tag {
    /// The tag bytes (`len()` of them).
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len as usize]
    }

    /// The tag length in bytes.
    #[allow(clippy::len_without_is_empty)]
    pub fn len(&self) -> usize {
        self.len as usize
    }
}

impl AsRef<[u8]> for Tag {
    fn as_ref(&self) -> &[u8] {
        self.as_bytes()
    }
}

impl fmt::Debug for Tag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Tag(")?;
        for b in self.as_bytes() {
            write!(f, "{b:02x}")?;
        }
        f.write_str(")")
    }
}

/// An AES-GCM key: the AES schedule and the GHASH key powers (H^1..H^n in the layout of the
/// backend's GHASH kernel), both computed once and zeroized on drop.
///
/// Immutable and `Sync`: one key may seal and open on many threads at once.
pub struct AesGcm {
    k: Big<GcmKeys>,
    tag_len: u8,
}

impl fmt::Debug for AesGcm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AesGcm")
            .field("backend", &self.k.aes.backend())
            .field("key_bits", &self.k.aes.key_bits())
            .field("tag_len", &self.tag_len)
            .finish_non_exhaustive()
    }
}

impl From<Aes> for AesGcm {
    fn from(aes: Aes) -> AesGcm {
        AesGcm::from_aes(aes)
    }
}

/// Whether `n` is a tag length SP 800-38D allows.
fn valid_tag_len(n: usize) -> bool {
    matches!(n, 4 | 8 | 12..=16)
}

/// AAD up to this many bytes (not a whole number of blocks) is padded on the stack and hashed
/// inside the one-shot data kernel's call.
const AAD_INLINE: usize = 64;

// Counter, J0 and lengths blocks are computed as big-endian numbers in registers and stored
// whole ([`backend::put_block`]), never assembled in memory from pieces: the kernels read
// each with one 16-byte load, which would wait for the pieces to reach the cache.

/// Block `v` (a big-endian number), stored whole.
#[inline(always)]
fn block(v: u128) -> [u8; 16] {
    let mut b = [0u8; 16];
    backend::put_block(&mut b, v);
    b
}

/// The first `s.len() <= 16` bytes of a block, zero-padded, as a big-endian number, read with
/// loads of 8, 4 or 1 bytes inside `s` (the length is public). A partial block copied into a
/// zeroed buffer and then read whole would wait on the copy's stores, as above.
#[inline(always)]
fn partial_value(s: &[u8]) -> u128 {
    let n = s.len();
    debug_assert!(n <= 16);
    let be64 = |i: usize| u64::from_be_bytes(s[i..i + 8].try_into().expect("8 bytes"));
    let be32 = |i: usize| u32::from_be_bytes(s[i..i + 4].try_into().expect("4 bytes")) as u64;
    if n >= 8 {
        // Bytes 8..n are the last n - 8 of the 8 ending at n.
        let lo = if n > 8 {
            be64(n - 8) << (8 * (16 - n))
        } else {
            0
        };
        (be64(0) as u128) << 64 | lo as u128
    } else {
        let hi = if n >= 4 {
            // Two 4-byte words that overlap where n < 8; the bytes they share are equal.
            be32(0) << 32 | be32(n - 4) << (8 * (8 - n))
        } else {
            s.iter()
                .enumerate()
                .fold(0, |x, (i, &b)| x | (b as u64) << (56 - 8 * i))
        };
        (hi as u128) << 64
    }
}

/// Copies `src` into the zeroed blocks `dst` (at least `src.len()` bytes, rounded up to
/// blocks), each block with one store: whole blocks as 16-byte copies, the partial one
/// through [`partial_value`].
#[inline(always)]
fn fill_blocks(dst: &mut [u8], src: &[u8]) {
    let whole = src.len() / 16 * 16;
    for (d, s) in dst[..whole].chunks_exact_mut(16).zip(src.chunks_exact(16)) {
        d.copy_from_slice(s);
    }
    if whole < src.len() {
        let d: &mut [u8; 16] = (&mut dst[whole..whole + 16]).try_into().expect("a block");
        backend::put_block(d, partial_value(&src[whole..]));
    }
}

/// Counter block `v` with its last 32 bits increased by `n` mod 2^32 (`inc32`).
#[inline(always)]
fn inc32v(v: u128, n: u32) -> u128 {
    v & !0xffff_ffff | (v as u32).wrapping_add(n) as u128
}

/// `ctr` with its last 32 bits (big-endian) increased by `n` mod 2^32.
#[inline(always)]
fn inc32(ctr: &[u8; 16], n: u32) -> [u8; 16] {
    block(inc32v(u128::from_be_bytes(*ctr), n))
}

/// GHASH's final block as a number: the AAD and message lengths in bits, big-endian.
#[inline(always)]
fn lengths_value(aad_len: u64, msg_len: u64) -> u128 {
    ((aad_len * 8) as u128) << 64 | (msg_len * 8) as u128
}

/// GHASH's final block: the AAD and message lengths in bits, big-endian.
#[inline(always)]
fn lengths_block(aad_len: u64, msg_len: u64) -> [u8; 16] {
    block(lengths_value(aad_len, msg_len))
}

/// 1 if the first `got.len()` bytes of `expected` equal `got`, else 0, without a branch or
/// an early exit on the bytes (the length is public). Both tags are compared as 128-bit
/// numbers (byte `i` in bits `8i..8i+8`), the bytes past the length masked off: a few
/// instructions where the byte loop took about 30 (5% of a 16-byte open). Only the
/// one-bit answer goes through `black_box` (memory), not the difference, which would be the
/// computed tag itself when the received one is public.
#[inline(always)]
fn tag_matches(expected: &[u8; 16], got: &[u8]) -> u8 {
    let n = got.len().min(16);
    let (g, mask) = match <&[u8; 16]>::try_from(got) {
        Ok(g) => (u128::from_le_bytes(*g), u128::MAX),
        Err(_) => {
            let mut g = [0u8; 16];
            g[..n].copy_from_slice(&got[..n]);
            let mask = if n < 16 {
                (1u128 << (8 * n)) - 1
            } else {
                u128::MAX
            };
            (u128::from_le_bytes(g), mask)
        }
    };
    let d = (u128::from_le_bytes(*expected) ^ g) & mask;
    // d | -d has its top bit set exactly when d != 0.
    let differs = core::hint::black_box(((d | d.wrapping_neg()) >> 127) as u8);
    differs ^ 1
}

impl AesGcm {
    /// A GCM key from a 16-, 24- or 32-byte AES key, on the fastest backend of this CPU.
    pub fn new(key: &[u8]) -> Result<AesGcm, Error> {
        AesGcm::with_backend(key, Backend::detect())
    }

    /// A GCM key on a chosen backend ([`ErrorKind::BackendUnavailable`] if this CPU cannot
    /// run it).
    pub fn with_backend(key: &[u8], backend: Backend) -> Result<AesGcm, Error> {
        let plan = backend::plan();
        if !matches!(key.len(), 16 | 24 | 32) {
            return Err(Error::new(ErrorKind::InvalidKeyLength));
        }
        if !plan.has(backend) {
            return Err(Error::new(ErrorKind::BackendUnavailable));
        }
        // Built where it lives (in its heap block when there is an allocator): no copy of the
        // schedule or of H is left on the stack (`GcmKeys::new`).
        let k = GcmKeys::new(key, backend, plan);
        Ok(AesGcm { k, tag_len: 16 })
    }

    /// A GCM key from an expanded AES key (computes H and its powers). `aes` is moved into
    /// the new value: like any move of an [`Aes`], that leaves a copy of the schedule where
    /// `aes` was; [`AesGcm::new`] and [`AesGcm::with_backend`] do not.
    pub fn from_aes(aes: Aes) -> AesGcm {
        AesGcm {
            k: GcmKeys::from_aes(aes),
            tag_len: 16,
        }
    }

    /// The same key with another tag length: 16 (the default), 15, 14, 13, 12, 8 or 4 bytes;
    /// [`ErrorKind::InvalidTagLength`] otherwise. Seal then returns, and open then accepts
    /// only, tags of this length.
    pub fn with_tag_len(mut self, len: usize) -> Result<AesGcm, Error> {
        if !valid_tag_len(len) {
            return Err(Error::new(ErrorKind::InvalidTagLength));
        }
        self.tag_len = len as u8;
        Ok(self)
    }

    /// The tag length in bytes.
    pub fn tag_len(&self) -> usize {
        self.tag_len as usize
    }

    /// The backend the AES schedule runs on.
    pub fn backend(&self) -> Backend {
        self.k.aes.backend()
    }

    /// 128, 192 or 256.
    pub fn key_bits(&self) -> u32 {
        self.k.aes.key_bits()
    }

    /// The AES key underneath.
    pub fn cipher(&self) -> &Aes {
        &self.k.aes
    }

    /// The GHASH kernel in use: "vclmul" (VPCLMULQDQ, the fused VAES kernel of `vaes512` and
    /// `vaes256`, on zmm and ymm),
    /// "clmul" (PCLMULQDQ), "avx2" (constant-time integer multiplies on AVX2 lanes) or "soft"
    /// (constant-time scalar integer multiplies).
    pub fn ghash_kernel(&self) -> &'static str {
        self.k.ghash.kind()
    }

    /// The GHASH key (`backend::stack_depth`, which runs in optimised test builds only).
    #[cfg(all(test, target_arch = "x86_64", not(debug_assertions)))]
    pub(crate) fn ghash_key(&self) -> &backend::GhashKey {
        &self.k.ghash
    }

    // ---- internals shared by one-shot and streaming code ----

    fn ghash_whole(&self, acc: &mut u128, data: &[u8]) {
        backend::ghash(&self.k.ghash, acc, data)
    }

    /// Hashes `data` zero-padded to whole blocks.
    fn ghash_padded(&self, acc: &mut u128, data: &[u8]) {
        let whole = data.len() / 16 * 16;
        if whole > 0 {
            self.ghash_whole(acc, &data[..whole]);
        }
        if whole < data.len() {
            let mut b = block(partial_value(&data[whole..]));
            self.ghash_whole(acc, &b);
            backend::wipe_block(&mut b);
        }
    }

    /// The pre-counter block J0 as a big-endian number: `nonce || 0^31 || 1` for a 12-byte
    /// nonce, else GHASH of the zero-padded nonce and its length (whose state, in the
    /// `u128::from_be_bytes` form the kernels keep, is that number).
    fn j0(&self, nonce: &[u8]) -> Result<u128, Error> {
        if nonce.is_empty() || nonce.len() as u64 > MAX_NONCE_LEN {
            return Err(Error::new(ErrorKind::InvalidNonceLength));
        }
        if let Ok(n) = <&[u8; 12]>::try_from(nonce) {
            let hi = u64::from_be_bytes([n[0], n[1], n[2], n[3], n[4], n[5], n[6], n[7]]);
            let lo = u32::from_be_bytes([n[8], n[9], n[10], n[11]]);
            return Ok((hi as u128) << 64 | (lo as u128) << 32 | 1);
        }
        let mut acc = 0u128;
        self.ghash_padded(&mut acc, nonce);
        self.ghash_whole(&mut acc, &lengths_block(0, nonce.len() as u64));
        Ok(acc)
    }

    fn xor_keystream(&self, ctr: &[u8; 16], blocks: &mut [u8]) {
        let (b, keys) = self.k.aes.kernels();
        backend::ctr32_xor(b, keys, ctr, blocks)
    }

    /// The full 16-byte tag E(J0) ^ S after the lengths block.
    fn tag16(&self, j0: &[u8; 16], acc: &mut u128, aad_len: u64, msg_len: u64) -> [u8; 16] {
        let (b, keys) = self.k.aes.kernels();
        let lengths = lengths_block(aad_len, msg_len);
        let t = backend::gcm_finish(
            b,
            keys,
            &self.k.ghash,
            j0,
            j0,
            acc,
            &mut [],
            0,
            &lengths,
            true,
        );
        acc.zeroize();
        t
    }

    fn tag(&self, t: [u8; 16]) -> Tag {
        Tag {
            bytes: t,
            len: self.tag_len,
        }
    }

    /// The short-message path: message and AAD copied into zero-padded stack blocks, one
    /// kernel call for keystream, GHASH and tag.
    fn crypt_small(&self, j0: &[u8; 16], aad: &[u8], buf: &mut [u8], seal: bool) -> [u8; 16] {
        let (b, keys) = self.k.aes.kernels();
        let mut a = Blocks::<{ backend::SMALL_AAD }>::new();
        let a = &mut a.0;
        fill_blocks(a, aad);
        let mut m = Blocks::<{ backend::SMALL_MSG }>::new();
        let m = &mut m.0;
        fill_blocks(m, buf);
        let (na, nm) = (aad.len().div_ceil(16) * 16, buf.len().div_ceil(16) * 16);
        let mut lengths = [0u8; 16];
        backend::put_block(
            &mut lengths,
            lengths_value(aad.len() as u64, buf.len() as u64),
        );
        let t = backend::gcm_small(
            b,
            keys,
            &self.k.ghash,
            j0,
            &a[..na],
            &mut m[..nm],
            buf.len(),
            &lengths,
            seal,
        );
        buf.copy_from_slice(&m[..buf.len()]);
        t
    }

    /// CTR32 + GHASH over `buf` (any length), sealing or opening; returns the full tag.
    /// `j0v`: J0 as [`AesGcm::j0`] returns it; `public`: [`counter_is_public`] for the nonce.
    fn crypt(&self, j0v: u128, public: bool, aad: &[u8], buf: &mut [u8], seal: bool) -> [u8; 16] {
        let mut j0 = [0u8; 16];
        backend::put_block(&mut j0, j0v);
        if buf.len() <= backend::SMALL_MSG && aad.len() <= backend::SMALL_AAD {
            let t = self.crypt_small(&j0, aad, buf, seal);
            if !public {
                backend::wipe_block(&mut j0);
            }
            return t;
        }
        let (b, keys) = self.k.aes.kernels();
        let mut acc = 0u128;
        // Short AAD (a record header, a nonce) goes into the data kernel's call, zero-padded on
        // the stack; longer AAD is hashed by its own call.
        let mut a = Blocks::<AAD_INLINE>::new();
        let a = &mut a.0;
        let aad_blocks: &[u8] = if aad.len().is_multiple_of(16) {
            aad
        } else if aad.len() <= AAD_INLINE {
            fill_blocks(a, aad);
            &a[..aad.len().div_ceil(16) * 16]
        } else {
            self.ghash_padded(&mut acc, aad);
            &[]
        };
        let whole = buf.len() / 16 * 16;
        let (body, tail) = buf.split_at_mut(whole);
        // The body, the partial block, the lengths block and the tag in one kernel call.
        let t = tail.len();
        let mut blk = Blocks::<16>::new();
        let blk = &mut blk.0;
        fill_blocks(blk, tail);
        let n = if t > 0 { 16 } else { 0 };
        let (mut ctr, mut ctr_tail, mut lengths) = ([0u8; 16], [0u8; 16], [0u8; 16]);
        backend::put_block(&mut ctr, inc32v(j0v, 1));
        backend::put_block(
            &mut ctr_tail,
            inc32v(j0v, 1u32.wrapping_add((whole / 16) as u32)),
        );
        backend::put_block(
            &mut lengths,
            lengths_value(aad.len() as u64, (whole + t) as u64),
        );
        let tag = backend::gcm_oneshot(
            b,
            keys,
            &self.k.ghash,
            &j0,
            &ctr,
            public,
            &ctr_tail,
            &mut acc,
            aad_blocks,
            body,
            &mut blk[..n],
            t,
            &lengths,
            seal,
        );
        tail.copy_from_slice(&blk[..t]);
        acc.zeroize();
        // J0 and the counters come from H when the nonce is not 12 bytes (`public` is false):
        // then they are wiped, as `Stream` wipes its own. A 12-byte nonce's are public.
        if !public {
            for b in [&mut j0, &mut ctr, &mut ctr_tail] {
                backend::wipe_block(b);
            }
        }
        tag
    }

    fn check_lengths(aad: usize, msg: usize) -> Result<(), Error> {
        if aad as u64 > MAX_AAD_LEN {
            return Err(Error::new(ErrorKind::AadTooLong));
        }
        if msg as u64 > MAX_MESSAGE_LEN {
            return Err(Error::new(ErrorKind::MessageTooLong));
        }
        Ok(())
    }

    // ---- one-shot API ----

    /// Encrypts `buf` in place and returns the tag (of [`AesGcm::tag_len`] bytes).
    ///
    /// Errors (nothing written): empty nonce, message or AAD over the limits.
    pub fn seal_in_place_detached(
        &self,
        nonce: &[u8],
        aad: &[u8],
        buf: &mut [u8],
    ) -> Result<Tag, Error> {
        AesGcm::check_lengths(aad.len(), buf.len())?;
        let j0 = self.j0(nonce)?;
        let t = self.crypt(j0, counter_is_public(nonce), aad, buf, true);
        Ok(self.tag(t))
    }

    /// Decrypts `buf` in place if `tag` authenticates nonce, `aad` and the ciphertext.
    ///
    /// On [`ErrorKind::AuthenticationFailed`] the buffer is zeroed: no unauthenticated
    /// plaintext is released. `tag` must be exactly [`AesGcm::tag_len`] bytes
    /// ([`ErrorKind::InvalidTagLength`], buffer untouched).
    pub fn open_in_place_detached(
        &self,
        nonce: &[u8],
        aad: &[u8],
        buf: &mut [u8],
        tag: &[u8],
    ) -> Result<(), Error> {
        // The one branch on the tag check: its result is public (the caller learns it).
        if self.open_in_place_detached_ct(nonce, aad, buf, tag)? == 1 {
            Ok(())
        } else {
            buf.fill(0);
            Err(Error::new(ErrorKind::AuthenticationFailed))
        }
    }

    /// The branch-free core of [`AesGcm::open_in_place_detached`]: decrypts `buf` in place
    /// and returns 1 if the tag is valid, 0 if not, computed without branching on secret data.
    /// On 0 `buf` holds unauthenticated plaintext, which the caller must discard. For
    /// constant-time checkers ([`crate::hazmat::gcm_open_ct`]).
    #[inline(always)]
    pub(crate) fn open_in_place_detached_ct(
        &self,
        nonce: &[u8],
        aad: &[u8],
        buf: &mut [u8],
        tag: &[u8],
    ) -> Result<u8, Error> {
        if tag.len() != self.tag_len as usize {
            return Err(Error::new(ErrorKind::InvalidTagLength));
        }
        AesGcm::check_lengths(aad.len(), buf.len())?;
        let j0 = self.j0(nonce)?;
        let mut t = self.crypt(j0, counter_is_public(nonce), aad, buf, false);
        let ok = tag_matches(&t, tag);
        backend::wipe_block(&mut t);
        Ok(ok)
    }

    /// Encrypts `plaintext` into a new vector: ciphertext followed by the tag.
    #[cfg(feature = "alloc")]
    pub fn seal(
        &self,
        nonce: &[u8],
        aad: &[u8],
        plaintext: &[u8],
    ) -> Result<alloc::vec::Vec<u8>, Error> {
        let mut v = alloc::vec::Vec::with_capacity(plaintext.len() + self.tag_len());
        v.extend_from_slice(plaintext);
        self.seal_in_place_append_tag(nonce, aad, &mut v)?;
        Ok(v)
    }

    /// Decrypts `ciphertext || tag` into a new vector; no vector on failure.
    #[cfg(feature = "alloc")]
    pub fn open(
        &self,
        nonce: &[u8],
        aad: &[u8],
        ciphertext_and_tag: &[u8],
    ) -> Result<alloc::vec::Vec<u8>, Error> {
        let mut v = ciphertext_and_tag.to_vec();
        self.open_in_place(nonce, aad, &mut v)?;
        Ok(v)
    }

    /// Encrypts `buf` in place and appends the tag.
    #[cfg(feature = "alloc")]
    pub fn seal_in_place_append_tag(
        &self,
        nonce: &[u8],
        aad: &[u8],
        buf: &mut alloc::vec::Vec<u8>,
    ) -> Result<(), Error> {
        let tag = self.seal_in_place_detached(nonce, aad, buf)?;
        buf.extend_from_slice(tag.as_bytes());
        Ok(())
    }

    /// Decrypts `ciphertext || tag` in place and removes the tag. On failure the vector is
    /// zeroed and emptied. [`ErrorKind::AuthenticationFailed`] also covers input shorter than
    /// a tag.
    #[cfg(feature = "alloc")]
    pub fn open_in_place(
        &self,
        nonce: &[u8],
        aad: &[u8],
        buf: &mut alloc::vec::Vec<u8>,
    ) -> Result<(), Error> {
        let t = self.tag_len();
        if buf.len() < t {
            return Err(Error::new(ErrorKind::AuthenticationFailed));
        }
        let n = buf.len() - t;
        let (ct, tag) = buf.split_at_mut(n);
        match self.open_in_place_detached(nonce, aad, ct, tag) {
            Ok(()) => {
                buf.truncate(n);
                Ok(())
            }
            Err(e) => {
                buf.fill(0);
                buf.clear();
                Err(e)
            }
        }
    }

    /// A streaming encryptor for one message under `nonce`.
    pub fn encryptor(&self, nonce: &[u8]) -> Result<GcmEncryptor<&AesGcm>, Error> {
        GcmEncryptor::new(self, nonce)
    }

    /// A streaming decryptor for one message under `nonce` (read its documentation: it
    /// releases plaintext before the tag is checked).
    pub fn decryptor(&self, nonce: &[u8]) -> Result<GcmDecryptor<&AesGcm>, Error> {
        GcmDecryptor::new(self, nonce)
    }
}

// ---------------------------------------------------------------------------------------------
// Streaming.

#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    Aad,
    Data,
}

/// Whether the counter's inc32 word is public for this nonce, so that kernels may branch on it
/// (`backend::gcm_seal`): a 12-byte nonce fills the first 12 bytes of J0 and the word counts
/// blocks from 2; from any other nonce length J0 comes from GHASH under the key, and no kernel
/// may branch on it.
fn counter_is_public(nonce: &[u8]) -> bool {
    nonce.len() == 12
}

/// The state of one streamed message, shared by the encryptor and the decryptor.
struct Stream {
    j0: [u8; 16],
    /// Counter block of the next block not yet started.
    ctr: [u8; 16],
    /// [`counter_is_public`] for the nonce.
    public: bool,
    acc: u128,
    aad_len: u64,
    msg_len: u64,
    /// AAD phase: the partial AAD block. Data phase: the ciphertext bytes of the partial block.
    part: [u8; 16],
    /// Keystream of the partial message block.
    ks: [u8; 16],
    phase: Phase,
}

impl Drop for Stream {
    fn drop(&mut self) {
        backend::wipe_block(&mut self.j0);
        backend::wipe_block(&mut self.ctr);
        self.acc.zeroize();
        backend::wipe_block(&mut self.part);
        backend::wipe_block(&mut self.ks);
    }
}

impl Stream {
    fn new(gcm: &AesGcm, nonce: &[u8]) -> Result<Stream, Error> {
        let j0 = gcm.j0(nonce)?;
        Ok(Stream {
            ctr: block(inc32v(j0, 1)),
            public: counter_is_public(nonce),
            j0: block(j0),
            acc: 0,
            aad_len: 0,
            msg_len: 0,
            part: [0; 16],
            ks: [0; 16],
            phase: Phase::Aad,
        })
    }

    fn aad(&mut self, gcm: &AesGcm, mut aad: &[u8]) -> Result<(), Error> {
        if self.phase != Phase::Aad {
            return Err(Error::new(ErrorKind::AadAfterData));
        }
        let total = self
            .aad_len
            .checked_add(aad.len() as u64)
            .filter(|&t| t <= MAX_AAD_LEN)
            .ok_or(Error::new(ErrorKind::AadTooLong))?;
        let off = (self.aad_len % 16) as usize;
        self.aad_len = total;
        if off != 0 {
            let n = (16 - off).min(aad.len());
            self.part[off..off + n].copy_from_slice(&aad[..n]);
            aad = &aad[n..];
            if off + n < 16 {
                return Ok(());
            }
            gcm.ghash_whole(&mut self.acc, &self.part);
        }
        let whole = aad.len() / 16 * 16;
        if whole > 0 {
            gcm.ghash_whole(&mut self.acc, &aad[..whole]);
        }
        let rest = &aad[whole..];
        self.part[..rest.len()].copy_from_slice(rest);
        Ok(())
    }

    /// Ends the AAD phase (once; `None` afterwards): returns a partial AAD block, zero-padded,
    /// which the caller hashes.
    fn end_aad(&mut self) -> Option<[u8; 16]> {
        if self.phase != Phase::Aad {
            return None;
        }
        let off = (self.aad_len % 16) as usize;
        let tail = (off != 0).then(|| block(partial_value(&self.part[..off])));
        self.part = [0; 16];
        self.phase = Phase::Data;
        tail
    }

    fn update(&mut self, gcm: &AesGcm, buf: &mut [u8], seal: bool) -> Result<(), Error> {
        self.update_io(gcm, None, buf, seal)
    }

    /// [`Stream::update`] of `src` (when given; the same length as `buf`) into `buf`, else of
    /// `buf` in place.
    fn update_io(
        &mut self,
        gcm: &AesGcm,
        mut src: Option<&[u8]>,
        mut buf: &mut [u8],
        seal: bool,
    ) -> Result<(), Error> {
        debug_assert!(src.is_none_or(|s| s.len() == buf.len()));
        let total = self
            .msg_len
            .checked_add(buf.len() as u64)
            .filter(|&t| t <= MAX_MESSAGE_LEN)
            .ok_or(Error::new(ErrorKind::MessageTooLong))?;
        if buf.is_empty() {
            // Nothing happened: associated data may still follow.
            return Ok(());
        }
        // Ending the AAD phase: a partial AAD block is hashed by the body's kernel call below
        // when there is a body (one kernel call and one stack wipe where there were two: a
        // streamed message with AAD, as OpenSSH's GCM packets and OpenSSL's EVP calls are).
        let mut aad_tail = self.end_aad();
        if buf.len() < 16
            && let Some(b) = aad_tail.take()
        {
            gcm.ghash_whole(&mut self.acc, &b);
        }
        let off = (self.msg_len % 16) as usize;
        self.msg_len = total;
        if off != 0 {
            let n = (16 - off).min(buf.len());
            let (head, rest) = buf.split_at_mut(n);
            for (i, d) in head.iter_mut().enumerate() {
                let x = src.map_or(*d, |s| s[i]);
                let c = if seal { x ^ self.ks[off + i] } else { x };
                *d = x ^ self.ks[off + i];
                self.part[off + i] = c;
            }
            buf = rest;
            src = src.map(|s| &s[n..]);
            if off + n < 16 {
                return Ok(());
            }
            gcm.ghash_whole(&mut self.acc, &self.part);
        }
        let whole = buf.len() / 16 * 16;
        let (body, tail) = buf.split_at_mut(whole);
        let tail_src = src.map(|s| &s[whole..]);
        if let Some(s) = src
            && !body.is_empty()
        {
            let (b, keys) = gcm.k.aes.kernels();
            let aad = aad_tail.as_ref().map_or(&[][..], |b| &b[..]);
            let (c, p) = (&self.ctr, self.public);
            let io = (&s[..whole], &mut *body);
            backend::gcm_b2b(b, keys, &gcm.k.ghash, c, p, &mut self.acc, aad, io, seal);
            self.ctr = inc32(&self.ctr, (whole / 16) as u32);
        } else if !body.is_empty() {
            let (b, keys) = gcm.k.aes.kernels();
            let aad = aad_tail.as_ref().map_or(&[][..], |b| &b[..]);
            if seal {
                let (c, p) = (&self.ctr, self.public);
                backend::gcm_seal(b, keys, &gcm.k.ghash, c, p, &mut self.acc, aad, body);
            } else {
                let (c, p) = (&self.ctr, self.public);
                backend::gcm_open(b, keys, &gcm.k.ghash, c, p, &mut self.acc, aad, body);
            }
            self.ctr = inc32(&self.ctr, (whole / 16) as u32);
        }
        if let Some(b) = &mut aad_tail {
            backend::wipe_block(b);
        }
        if !tail.is_empty() {
            self.ks = [0; 16];
            gcm.xor_keystream(&self.ctr, &mut self.ks);
            self.ctr = inc32(&self.ctr, 1);
            for (i, d) in tail.iter_mut().enumerate() {
                let x = tail_src.map_or(*d, |s| s[i]);
                let c = if seal { x ^ self.ks[i] } else { x };
                *d = x ^ self.ks[i];
                self.part[i] = c;
            }
        }
        Ok(())
    }

    /// The full 16-byte tag over everything streamed.
    fn finish(&mut self, gcm: &AesGcm) -> [u8; 16] {
        if let Some(b) = self.end_aad() {
            gcm.ghash_whole(&mut self.acc, &b);
        }
        let off = (self.msg_len % 16) as usize;
        if off == 0 {
            return gcm.tag16(&self.j0, &mut self.acc, self.aad_len, self.msg_len);
        }
        // The partial block is hashed in the tag's call (one kernel call and stack wipe),
        // zero-padded in a register and stored whole (see `partial_value`).
        let mut part = block(partial_value(&self.part[..off]));
        let (b, keys) = gcm.k.aes.kernels();
        let lengths = lengths_block(self.aad_len, self.msg_len);
        let t = backend::gcm_finish_part(
            b,
            keys,
            &gcm.k.ghash,
            &self.j0,
            &mut self.acc,
            &part,
            off,
            &lengths,
        );
        backend::wipe_block(&mut part);
        self.acc.zeroize();
        t
    }
}

/// Streaming GCM encryption of one message: [`aad`](GcmEncryptor::aad) (any number of calls,
/// all before the data), then [`update`](GcmEncryptor::update) with the message in any
/// chunking, then [`finish`](GcmEncryptor::finish) for the tag. The result equals one-shot
/// sealing of the concatenated pieces.
///
/// `K` is `&AesGcm` (from [`AesGcm::encryptor`]) or any owner such as `Arc<AesGcm>`.
pub struct GcmEncryptor<K: Borrow<AesGcm>> {
    key: K,
    st: Stream,
}

impl<K: Borrow<AesGcm>> fmt::Debug for GcmEncryptor<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GcmEncryptor")
            .field("aad_len", &self.st.aad_len)
            .field("msg_len", &self.st.msg_len)
            .finish_non_exhaustive()
    }
}

impl<K: Borrow<AesGcm>> GcmEncryptor<K> {
    /// Starts a message under `nonce` (1 byte or more; 12 is the fast path).
    pub fn new(key: K, nonce: &[u8]) -> Result<Self, Error> {
        let st = Stream::new(key.borrow(), nonce)?;
        Ok(GcmEncryptor { key, st })
    }

    /// Adds associated data (authenticated, not encrypted). Only before the first `update`
    /// with data ([`ErrorKind::AadAfterData`]; an empty `update` does not count).
    pub fn aad(&mut self, aad: &[u8]) -> Result<(), Error> {
        self.st.aad(self.key.borrow(), aad)
    }

    /// Encrypts the next piece of the message in place. [`ErrorKind::MessageTooLong`] (and
    /// nothing changed) past 2^32 - 2 blocks.
    pub fn update(&mut self, buf: &mut [u8]) -> Result<(), Error> {
        self.st.update(self.key.borrow(), buf, true)
    }

    /// Encrypts `input` into `output[..input.len()]`.
    pub fn update_b2b(&mut self, input: &[u8], output: &mut [u8]) -> Result<(), Error> {
        let out = output_for(input, output)?;
        self.st.update_io(self.key.borrow(), Some(input), out, true)
    }

    /// Bytes of associated data and of message so far.
    pub fn lengths(&self) -> (u64, u64) {
        (self.st.aad_len, self.st.msg_len)
    }

    /// The key this stream runs on.
    pub fn key(&self) -> &AesGcm {
        self.key.borrow()
    }

    /// Ends the message and returns its tag.
    pub fn finish(mut self) -> Tag {
        let gcm = self.key.borrow();
        let t = self.st.finish(gcm);
        gcm.tag(t)
    }
}

/// Streaming GCM decryption of one message: [`aad`](GcmDecryptor::aad), then
/// [`update`](GcmDecryptor::update) in any chunking, then [`finish`](GcmDecryptor::finish)
/// with the received tag.
///
/// **`update` releases plaintext before the tag has been checked.** The plaintext is not
/// authentic until `finish` returns `Ok(())`: buffer it, or be ready to discard everything it
/// produced. Use [`AesGcm::open_in_place_detached`] when the message fits in memory; it
/// releases nothing on failure.
pub struct GcmDecryptor<K: Borrow<AesGcm>> {
    key: K,
    st: Stream,
}

impl<K: Borrow<AesGcm>> fmt::Debug for GcmDecryptor<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GcmDecryptor")
            .field("aad_len", &self.st.aad_len)
            .field("msg_len", &self.st.msg_len)
            .finish_non_exhaustive()
    }
}

impl<K: Borrow<AesGcm>> GcmDecryptor<K> {
    /// Starts a message under `nonce`.
    pub fn new(key: K, nonce: &[u8]) -> Result<Self, Error> {
        let st = Stream::new(key.borrow(), nonce)?;
        Ok(GcmDecryptor { key, st })
    }

    /// Adds associated data. Only before the first `update`.
    pub fn aad(&mut self, aad: &[u8]) -> Result<(), Error> {
        self.st.aad(self.key.borrow(), aad)
    }

    /// Decrypts the next piece in place. The result is **unauthenticated** until `finish`.
    pub fn update(&mut self, buf: &mut [u8]) -> Result<(), Error> {
        self.st.update(self.key.borrow(), buf, false)
    }

    /// Decrypts `input` into `output[..input.len()]` (unauthenticated until `finish`).
    pub fn update_b2b(&mut self, input: &[u8], output: &mut [u8]) -> Result<(), Error> {
        let out = output_for(input, output)?;
        self.st
            .update_io(self.key.borrow(), Some(input), out, false)
    }

    /// Bytes of associated data and of message so far.
    pub fn lengths(&self) -> (u64, u64) {
        (self.st.aad_len, self.st.msg_len)
    }

    /// The key this stream runs on.
    pub fn key(&self) -> &AesGcm {
        self.key.borrow()
    }

    /// Checks `tag` (exactly the key's tag length) in constant time:
    /// [`ErrorKind::AuthenticationFailed`] if it does not match, in which case everything
    /// `update` produced must be discarded.
    pub fn finish(self, tag: &[u8]) -> Result<(), Error> {
        // The one branch on the tag check: its result is public.
        if self.finish_ct(tag)? == 1 {
            Ok(())
        } else {
            Err(Error::new(ErrorKind::AuthenticationFailed))
        }
    }

    /// Like [`finish`](GcmDecryptor::finish), for a tag of any length SP 800-38D allows (16,
    /// 15, 14, 13, 12, 8 or 4 bytes) whatever the key's tag length: `tag` is compared, in
    /// constant time, with the leading bytes of the computed tag. For callers that learn the
    /// tag's length only when the message ends (OpenSSL's EVP interface, where the tag may be
    /// set after the data). Other lengths: [`ErrorKind::InvalidTagLength`].
    pub fn finish_truncated(mut self, tag: &[u8]) -> Result<(), Error> {
        if !valid_tag_len(tag.len()) {
            return Err(Error::new(ErrorKind::InvalidTagLength));
        }
        let mut t = self.st.finish(self.key.borrow());
        let ok = tag_matches(&t, tag);
        backend::wipe_block(&mut t);
        // The one branch on the tag check: its result is public.
        if ok == 1 {
            Ok(())
        } else {
            Err(Error::new(ErrorKind::AuthenticationFailed))
        }
    }

    /// Branch-free core of [`GcmDecryptor::finish`]: 1 if the tag is valid, else 0.
    pub(crate) fn finish_ct(mut self, tag: &[u8]) -> Result<u8, Error> {
        let gcm = self.key.borrow();
        if tag.len() != gcm.tag_len as usize {
            return Err(Error::new(ErrorKind::InvalidTagLength));
        }
        let mut t = self.st.finish(gcm);
        let ok = tag_matches(&t, tag);
        backend::wipe_block(&mut t);
        Ok(ok)
    }
}

/// The first `input.len()` bytes of `output` (the streams' `update_b2b`), or
/// [`ErrorKind::OutputTooSmall`].
fn output_for<'a>(input: &[u8], output: &'a mut [u8]) -> Result<&'a mut [u8], Error> {
    output
        .get_mut(..input.len())
        .ok_or(Error::new(ErrorKind::OutputTooSmall))
}

#[cfg(test)]
mod tests;
