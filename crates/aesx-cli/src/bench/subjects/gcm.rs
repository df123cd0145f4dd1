//! The GCM subjects: aesx `AesGcm` on each backend, OpenSSL EVP, RustCrypto `aes-gcm` and
//! `ring` (the last two behind the default-on `bench-peers` feature, as OpenSSL).
//!
//! `gcm-enc` seals the shared buffer in place (whatever it holds). `gcm-dec` must open valid
//! messages, so each subject keeps its own buffer: it is prepared once per size as a
//! ciphertext `c` with its tag, and since opening `c` gives `x = c ^ keystream` and opening
//! `x` gives `c` back, the calls alternate between the two states with their two precomputed
//! tags. Every open is checked; a refused tag aborts the benchmark (it would mean a bug).

use std::hint::black_box;

use aesx::{AesGcm, Backend};
use anyhow::{Result, anyhow};
#[cfg(feature = "bench-peers")]
use openssl::cipher::{Cipher, CipherRef};
#[cfg(feature = "bench-peers")]
use openssl::cipher_ctx::CipherCtx;

use super::{Op, Subject};

/// The nonce of every message (reused: this is a benchmark, not a protocol).
pub const NONCE: [u8; 12] = [
    0xca, 0xfe, 0xba, 0xbe, 0xfa, 0xce, 0xdb, 0xad, 0xde, 0xca, 0xf8, 0x88,
];
/// 13 bytes of associated data, a TLS 1.2 record header's size.
pub const AAD: [u8; 13] = *b"\x00\x00\x00\x00\x00\x00\x00\x01\x17\x03\x03\x40\x00";

/// Everything to measure for a GCM op with `key` on `backends`.
pub fn build(op: Op, key: &[u8], backends: &[Backend]) -> Result<Vec<Box<dyn Subject>>> {
    let dec = op == Op::GcmDec;
    let mut v: Vec<Box<dyn Subject>> = Vec::new();
    for &b in backends {
        let gcm = AesGcm::with_backend(key, b).map_err(|e| anyhow!("{b}: {e}"))?;
        v.push(Box::new(Gcm::new(Aesx(gcm), dec)));
    }
    #[cfg(feature = "bench-peers")]
    {
        v.push(Box::new(Gcm::new(Openssl::new(key)?, dec)));
        v.push(match key.len() {
            16 => Box::new(Gcm::new(
                peers::RustCrypto::<aes_gcm::Aes128Gcm>::new(key),
                dec,
            )),
            24 => Box::new(Gcm::new(
                peers::RustCrypto::<peers::Aes192Gcm>::new(key),
                dec,
            )),
            _ => Box::new(Gcm::new(
                peers::RustCrypto::<aes_gcm::Aes256Gcm>::new(key),
                dec,
            )),
        });
        if let Some(r) = peers::Ring::new(key) {
            v.push(Box::new(Gcm::new(r, dec)));
        }
    }
    Ok(v)
}

/// One GCM implementation: seal and open in place with a detached 16-byte tag.
pub trait GcmImpl {
    fn impl_name(&self) -> &'static str;
    fn backend(&self) -> String {
        "-".to_string()
    }
    fn seal(&mut self, buf: &mut [u8]) -> [u8; 16];
    /// Whether the tag was accepted.
    fn open(&mut self, buf: &mut [u8], tag: &[u8; 16]) -> bool;
}

/// The `gcm-dec` state: own buffer, its size, the tags of its two alternating states and
/// which one it is in.
struct Gcm<I> {
    imp: I,
    dec: bool,
    own: Vec<u8>,
    size: usize,
    tags: [[u8; 16]; 2],
    state: usize,
}

impl<I: GcmImpl> Gcm<I> {
    fn new(imp: I, dec: bool) -> Gcm<I> {
        Gcm {
            imp,
            dec,
            own: Vec::new(),
            size: usize::MAX,
            tags: [[0; 16]; 2],
            state: 0,
        }
    }

    /// Makes `own` a valid ciphertext of `size` bytes with both tags (see the module docs).
    fn prepare(&mut self, size: usize) {
        self.own = (0..size).map(|i| (i * 131 + 7) as u8).collect();
        self.tags[0] = self.imp.seal(&mut self.own); // own = c, tags[0] = T(c)
        let mut x = self.own.clone();
        self.tags[1] = self.imp.seal(&mut x); // x = c ^ ks, tags[1] = T(x)
        self.size = size;
        self.state = 0;
    }
}

impl<I: GcmImpl> Subject for Gcm<I> {
    fn impl_name(&self) -> &'static str {
        self.imp.impl_name()
    }
    fn backend(&self) -> String {
        self.imp.backend()
    }
    fn run(&mut self, buf: &mut [u8], size: usize) {
        if !self.dec {
            black_box(self.imp.seal(&mut buf[..size]));
            return;
        }
        if self.size != size {
            self.prepare(size);
        }
        let tag = self.tags[self.state];
        let ok = self.imp.open(&mut self.own, &tag);
        assert!(ok, "{}: gcm-dec refused a valid tag", self.label());
        self.state ^= 1;
    }
}

struct Aesx(AesGcm);

impl GcmImpl for Aesx {
    fn impl_name(&self) -> &'static str {
        "aesx"
    }
    fn backend(&self) -> String {
        self.0.backend().name().to_string()
    }
    fn seal(&mut self, buf: &mut [u8]) -> [u8; 16] {
        let t = self.0.seal_in_place_detached(&NONCE, &AAD, buf);
        t.map(|t| t.as_ref().try_into().unwrap_or([0; 16]))
            .unwrap_or([0; 16])
    }
    fn open(&mut self, buf: &mut [u8], tag: &[u8; 16]) -> bool {
        self.0
            .open_in_place_detached(&NONCE, &AAD, buf, tag)
            .is_ok()
    }
}

/// OpenSSL EVP on two reused contexts (what `openssl speed -evp aes-128-gcm` measures, plus
/// the IV reset and AAD a real message needs).
#[cfg(feature = "bench-peers")]
struct Openssl {
    enc: CipherCtx,
    dec: CipherCtx,
}

#[cfg(feature = "bench-peers")]
fn cipher(bits: usize) -> &'static CipherRef {
    match bits {
        128 => Cipher::aes_128_gcm(),
        192 => Cipher::aes_192_gcm(),
        _ => Cipher::aes_256_gcm(),
    }
}

#[cfg(feature = "bench-peers")]
impl Openssl {
    fn new(key: &[u8]) -> Result<Openssl> {
        let c = cipher(key.len() * 8);
        let err = |e| anyhow!("OpenSSL GCM context setup failed: {e}");
        let mut enc = CipherCtx::new().map_err(err)?;
        enc.encrypt_init(Some(c), Some(key), Some(&NONCE))
            .map_err(err)?;
        let mut dec = CipherCtx::new().map_err(err)?;
        dec.decrypt_init(Some(c), Some(key), Some(&NONCE))
            .map_err(err)?;
        Ok(Openssl { enc, dec })
    }
}

#[cfg(feature = "bench-peers")]
impl GcmImpl for Openssl {
    fn impl_name(&self) -> &'static str {
        "openssl"
    }
    fn seal(&mut self, buf: &mut [u8]) -> [u8; 16] {
        let n = buf.len();
        let mut tag = [0u8; 16];
        let ok = self.enc.encrypt_init(None, None, Some(&NONCE)).is_ok()
            && self.enc.cipher_update(&AAD, None).is_ok()
            && self.enc.cipher_update_inplace(buf, n).is_ok()
            && self.enc.cipher_final(&mut []).is_ok()
            && self.enc.tag(&mut tag).is_ok();
        if !ok {
            tag = [0; 16];
        }
        tag
    }
    fn open(&mut self, buf: &mut [u8], tag: &[u8; 16]) -> bool {
        let n = buf.len();
        self.dec.decrypt_init(None, None, Some(&NONCE)).is_ok()
            && self.dec.cipher_update(&AAD, None).is_ok()
            && self.dec.cipher_update_inplace(buf, n).is_ok()
            && self.dec.set_tag(tag).is_ok()
            && self.dec.cipher_final(&mut []).is_ok()
    }
}

#[cfg(feature = "bench-peers")]
mod peers {
    use aes_gcm::aead::{AeadInOut, KeyInit};

    use super::{AAD, GcmImpl, NONCE};

    pub type Aes192Gcm = aes_gcm::AesGcm<aes_gcm::aes::Aes192, aes_gcm::aead::consts::U12>;

    /// RustCrypto `aes-gcm` 0.11 (`aes` 0.9 with its AES-NI backend, `ghash`/`polyval` with
    /// PCLMULQDQ), in place with a detached tag.
    pub struct RustCrypto<C>(C);

    impl<C: KeyInit> RustCrypto<C> {
        pub fn new(key: &[u8]) -> Self {
            RustCrypto(C::new_from_slice(key).expect("valid key length"))
        }
    }

    impl<C> GcmImpl for RustCrypto<C>
    where
        C: AeadInOut<NonceSize = aes_gcm::aead::consts::U12, TagSize = aes_gcm::aead::consts::U16>,
    {
        fn impl_name(&self) -> &'static str {
            "rustcrypto"
        }
        fn seal(&mut self, buf: &mut [u8]) -> [u8; 16] {
            match self
                .0
                .encrypt_inout_detached(&NONCE.into(), &AAD, buf.into())
            {
                Ok(t) => t.into(),
                Err(_) => [0; 16],
            }
        }
        fn open(&mut self, buf: &mut [u8], tag: &[u8; 16]) -> bool {
            self.0
                .decrypt_inout_detached(&NONCE.into(), &AAD, buf.into(), &(*tag).into())
                .is_ok()
        }
    }

    /// `ring` 0.17 `LessSafeKey` (BoringSSL-derived assembly: VAES+AVX2 on CPUs that have
    /// it, else AES-NI+PCLMULQDQ).
    pub struct Ring(ring::aead::LessSafeKey);

    impl Ring {
        /// `None` for AES-192, which ring does not offer.
        pub fn new(key: &[u8]) -> Option<Ring> {
            let alg = match key.len() {
                16 => &ring::aead::AES_128_GCM,
                32 => &ring::aead::AES_256_GCM,
                _ => return None,
            };
            let k = ring::aead::UnboundKey::new(alg, key).ok()?;
            Some(Ring(ring::aead::LessSafeKey::new(k)))
        }
    }

    impl GcmImpl for Ring {
        fn impl_name(&self) -> &'static str {
            "ring"
        }
        fn seal(&mut self, buf: &mut [u8]) -> [u8; 16] {
            let n = ring::aead::Nonce::assume_unique_for_key(NONCE);
            match self
                .0
                .seal_in_place_separate_tag(n, ring::aead::Aad::from(AAD), buf)
            {
                Ok(t) => t.as_ref().try_into().unwrap_or([0; 16]),
                Err(_) => [0; 16],
            }
        }
        fn open(&mut self, buf: &mut [u8], tag: &[u8; 16]) -> bool {
            let n = ring::aead::Nonce::assume_unique_for_key(NONCE);
            let Ok(t) = ring::aead::Tag::try_from(&tag[..]) else {
                return false;
            };
            self.0
                .open_in_place_separate_tag(n, ring::aead::Aad::from(AAD), t, buf, 0..)
                .is_ok()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every GCM subject computes the same ciphertext and tag, and opens what it sealed (and
    /// refuses a forgery), so the comparison is between equals.
    #[test]
    fn gcm_subjects_agree() {
        let backends = Backend::available();
        for bits in [128usize, 192, 256] {
            let key = &super::super::KEY[..bits / 8];
            let mut subjects = build(Op::GcmEnc, key, &backends).unwrap();
            #[cfg(feature = "bench-peers")]
            assert_eq!(
                subjects.len(),
                backends.len() + if bits == 192 { 2 } else { 3 },
                "every peer present"
            );
            for size in [0usize, 16, 100, 4096 + 3] {
                let input: Vec<u8> = (0..size + 16).map(|i| (i * 7 + 3) as u8).collect();
                let mut want: Option<Vec<u8>> = None;
                for s in subjects.iter_mut() {
                    let mut b = input.clone();
                    s.run(&mut b, size);
                    match &want {
                        None => want = Some(b),
                        Some(w) => assert_eq!(&b, w, "{} gcm-enc {bits} {size}", s.label()),
                    }
                }
            }
            // gcm-dec: many calls in a row (the state alternates) and a size change.
            for s in build(Op::GcmDec, key, &backends).unwrap().iter_mut() {
                let mut scratch = vec![0u8; 64];
                for size in [16usize, 16, 16, 37, 37, 0] {
                    s.run(&mut scratch, size);
                }
            }
        }
        // A forged tag is refused by every implementation.
        let key = &super::super::KEY[..16];
        #[allow(unused_mut)]
        let mut imps: Vec<Box<dyn GcmImpl>> = vec![Box::new(Aesx(AesGcm::new(key).unwrap()))];
        #[cfg(feature = "bench-peers")]
        {
            imps.push(Box::new(Openssl::new(key).unwrap()));
            imps.push(Box::new(peers::RustCrypto::<aes_gcm::Aes128Gcm>::new(key)));
            imps.push(Box::new(peers::Ring::new(key).unwrap()));
        }
        for imp in imps.iter_mut() {
            let mut b = vec![5u8; 40];
            let mut t = imp.seal(&mut b);
            t[15] ^= 1;
            assert!(
                !imp.open(&mut b, &t),
                "{} accepted a forged tag",
                imp.impl_name()
            );
        }
    }
}
