//! The implementations under test: aesx on each backend, OpenSSL (EVP through the `openssl`
//! crate) and RustCrypto (`aes` 0.9 + `ctr` 0.10 + `cbc` 0.2).
//!
//! Fairness rules (all three alike):
//! - one call = one whole message of `size` bytes, in place, on a key expanded beforehand;
//! - CTR and CBC start a fresh stream from the IV on every call: aesx `Ctr::new(&aes, iv)` /
//!   `CbcEncryptor::new`, RustCrypto `Ctr128BE::<&Aes128>::inner_iv_init(&cipher, iv)` (a
//!   borrowed pre-expanded key, the same as aesx; no clone of the schedule), OpenSSL
//!   `EVP_EncryptInit_ex(ctx, NULL, NULL, NULL, iv)` on one reused context (resets the IV and
//!   stream state without re-expanding the key), then `EVP_CipherUpdate` in place;
//! - ECB has no state: one call encrypts or decrypts the buffer;
//! - keysetup = a key ready to encrypt and decrypt: aesx `Aes::new` (on the backend it picks;
//!   `Aes::with_backend` for the other backends) and RustCrypto
//!   `Aes128::new` expand both schedules; for OpenSSL an encrypt-init and a decrypt-init on two
//!   reused ECB contexts.
//! - GCM (see [`gcm`]): one call seals (or opens and checks the tag of) one message with a
//!   12-byte nonce and 13 bytes of AAD (a TLS record's shape), on a key (GHASH powers included)
//!   set up beforehand: aesx `AesGcm`, OpenSSL EVP `aes-*-gcm` on a reused context (IV reset,
//!   AAD update, in-place update, final, tag), RustCrypto `aes-gcm` 0.11 and `ring` 0.17
//!   `LessSafeKey` (AES-128/256 only: ring has no AES-192-GCM).

use std::hint::black_box;

#[cfg(feature = "bench-peers")]
use aes::cipher::array::Array;
#[cfg(feature = "bench-peers")]
use aes::cipher::{
    BlockCipherDecrypt, BlockCipherEncrypt, BlockModeDecrypt, BlockModeEncrypt, InnerIvInit,
    KeyInit, StreamCipher, consts::U16,
};
use aesx::hash::fugue::{Fugue, FugueAlg, FugueBackend};
use aesx::{Aes, Backend, CbcDecryptor, CbcEncryptor, Ctr};
use anyhow::{Result, anyhow};
#[cfg(feature = "bench-peers")]
use openssl::cipher::{Cipher, CipherRef};
#[cfg(feature = "bench-peers")]
use openssl::cipher_ctx::CipherCtx;

use super::ops::Op;

mod gcm;

/// The fixed IV / initial counter of every message.
pub const IV: [u8; 16] = [
    0xf0, 0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8, 0xf9, 0xfa, 0xfb, 0xfc, 0xfd, 0xfe, 0xff,
];
/// Benchmark key material (not secret).
pub const KEY: [u8; 32] = [
    0x60, 0x3d, 0xeb, 0x10, 0x15, 0xca, 0x71, 0xbe, 0x2b, 0x73, 0xae, 0xf0, 0x85, 0x7d, 0x77, 0x81,
    0x1f, 0x35, 0x2c, 0x07, 0x3b, 0x61, 0x08, 0xd7, 0x2d, 0x98, 0x10, 0xa3, 0x09, 0x14, 0xdf, 0xf4,
];

/// One implementation of one op at one key size.
pub trait Subject {
    /// `aesx`, `openssl` or `rustcrypto`.
    fn impl_name(&self) -> &'static str;
    /// The aesx backend (or key-expansion variant); `-` for the peers.
    fn backend(&self) -> String;
    /// Processes one message of `size` bytes at the start of `buf` (which has at least
    /// `size + 16` bytes).
    fn run(&mut self, buf: &mut [u8], size: usize);

    fn label(&self) -> String {
        let b = self.backend();
        if b == "-" {
            self.impl_name().to_string()
        } else {
            format!("{}/{}", self.impl_name(), b)
        }
    }
}

/// Everything to measure for `op` at `key_bits`: aesx on each of `backends` (Fugue ops: on
/// each of `fugue_backends`), then the peers.
pub fn build(
    op: Op,
    key_bits: u32,
    backends: &[Backend],
    fugue_backends: &[FugueBackend],
) -> Result<Vec<Box<dyn Subject>>> {
    let key = &KEY[..key_bits as usize / 8];
    let mut v: Vec<Box<dyn Subject>> = Vec::new();
    if let Op::Fugue(alg) = op {
        for &b in fugue_backends {
            v.push(Box::new(FugueSubject { alg, backend: b }));
        }
        return Ok(v);
    }
    if op == Op::KeysetupVariants {
        #[cfg(target_arch = "x86_64")]
        for (name, f) in aesx::hazmat::keysetup::variants() {
            v.push(Box::new(Variant {
                name,
                f,
                key: key.to_vec(),
            }));
        }
        return Ok(v);
    }
    for &b in backends {
        let aes = Aes::with_backend(key, b).map_err(|e| anyhow!("{b}: {e}"))?;
        v.push(Box::new(AesxSubject {
            aes,
            op,
            key: key.to_vec(),
            threads: aesx::parallel::default_threads(),
        }));
    }
    if matches!(op, Op::GcmEnc | Op::GcmDec) {
        return gcm::build(op, key, backends);
    }
    #[cfg(feature = "bench-peers")]
    {
        if op == Op::CtrMt {
            // Neither peer has a multi-threaded CTR: single-threaded OpenSSL is the reference.
            v.push(Box::new(Openssl::new(Op::Ctr, key)?));
            return Ok(v);
        }
        v.push(Box::new(Openssl::new(op, key)?));
        v.push(match key_bits {
            128 => Box::new(RustCrypto::<aes::Aes128>::new(op, key)),
            192 => Box::new(RustCrypto::<aes::Aes192>::new(op, key)),
            _ => Box::new(RustCrypto::<aes::Aes256>::new(op, key)),
        });
    }
    Ok(v)
}

/// Whether the OpenSSL and RustCrypto peers are built in (cargo feature `bench-peers`, on by
/// default; without it the `aesx` binary needs neither OpenSSL nor the RustCrypto crates).
pub const PEERS_BUILT: bool = cfg!(feature = "bench-peers");

struct AesxSubject {
    aes: Aes,
    op: Op,
    key: Vec<u8>,
    /// `aesx::parallel::default_threads()`, asked once: it reads the CPU affinity and cgroup
    /// quota (tens of microseconds) on every call, which would swamp small messages.
    threads: usize,
}

impl Subject for AesxSubject {
    fn impl_name(&self) -> &'static str {
        "aesx"
    }
    fn backend(&self) -> String {
        self.aes.backend().name().to_string()
    }
    fn run(&mut self, buf: &mut [u8], size: usize) {
        let buf = &mut buf[..size];
        let aes = &self.aes;
        match self.op {
            Op::Ctr => Ctr::new(aes, &IV).apply_keystream(buf),
            // = aes.ctr_xor_at_par(&IV, 0, buf) without its per-call thread-count query.
            Op::CtrMt => aes.ctr_xor_at_threads(&IV, 0, buf, self.threads),
            Op::EcbEnc => aes.encrypt_blocks(buf),
            Op::EcbDec => aes.decrypt_blocks(buf),
            Op::CbcEnc => {
                let _ = CbcEncryptor::new(aes, &IV).encrypt_blocks(buf);
            }
            Op::CbcDec => {
                let _ = CbcDecryptor::new(aes, &IV).decrypt_blocks(buf);
            }
            Op::Keysetup => {
                // What users call: `Aes::new` (detection included) for the backend it picks;
                // `with_backend` only for the others.
                let k = if aes.backend() == aesx::Backend::detect() {
                    Aes::new(black_box(&self.key))
                } else {
                    Aes::with_backend(black_box(&self.key), aes.backend())
                };
                black_box(&k);
            }
            Op::KeysetupVariants | Op::Fugue(_) | Op::GcmEnc | Op::GcmDec => {}
        }
    }
}

/// aesx Fugue on one backend: a fresh hasher, one `update` with the message, finalize.
struct FugueSubject {
    alg: FugueAlg,
    backend: FugueBackend,
}

impl Subject for FugueSubject {
    fn impl_name(&self) -> &'static str {
        "aesx"
    }
    fn backend(&self) -> String {
        self.backend.name().to_string()
    }
    fn run(&mut self, buf: &mut [u8], size: usize) {
        // `build` only lists available backends, so `with_backend` cannot fail here.
        if let Ok(mut h) = Fugue::with_backend(self.alg, self.backend) {
            h.update(&buf[..size]);
            let mut out = [0u8; 64];
            let _ = h.finalize_into(&mut out);
            black_box(&out);
        }
    }
}

struct Variant {
    name: &'static str,
    f: fn(&[u8]) -> u8,
    key: Vec<u8>,
}

impl Subject for Variant {
    fn impl_name(&self) -> &'static str {
        "aesx"
    }
    fn backend(&self) -> String {
        self.name.to_string()
    }
    fn run(&mut self, _buf: &mut [u8], _size: usize) {
        black_box((self.f)(black_box(&self.key)));
    }
}

#[cfg(feature = "bench-peers")]
struct Openssl {
    op: Op,
    enc: CipherCtx,
    dec: CipherCtx,
    key: Vec<u8>,
}

#[cfg(feature = "bench-peers")]
fn ossl_cipher(op: Op, bits: usize) -> &'static CipherRef {
    match (op, bits) {
        (Op::Ctr | Op::CtrMt, 128) => Cipher::aes_128_ctr(),
        (Op::Ctr | Op::CtrMt, 192) => Cipher::aes_192_ctr(),
        (Op::Ctr | Op::CtrMt, _) => Cipher::aes_256_ctr(),
        (Op::CbcEnc | Op::CbcDec, 128) => Cipher::aes_128_cbc(),
        (Op::CbcEnc | Op::CbcDec, 192) => Cipher::aes_192_cbc(),
        (Op::CbcEnc | Op::CbcDec, _) => Cipher::aes_256_cbc(),
        (_, 128) => Cipher::aes_128_ecb(),
        (_, 192) => Cipher::aes_192_ecb(),
        (_, _) => Cipher::aes_256_ecb(),
    }
}

#[cfg(feature = "bench-peers")]
impl Openssl {
    fn new(op: Op, key: &[u8]) -> Result<Openssl> {
        let c = ossl_cipher(op, key.len() * 8);
        let iv = (c.iv_length() > 0).then_some(&IV[..]);
        let err = |e| anyhow!("OpenSSL context setup failed: {e}");
        let mut enc = CipherCtx::new().map_err(err)?;
        enc.encrypt_init(Some(c), Some(key), iv).map_err(err)?;
        enc.set_padding(false);
        let mut dec = CipherCtx::new().map_err(err)?;
        dec.decrypt_init(Some(c), Some(key), iv).map_err(err)?;
        dec.set_padding(false);
        Ok(Openssl {
            op,
            enc,
            dec,
            key: key.to_vec(),
        })
    }
}

#[cfg(feature = "bench-peers")]
impl Subject for Openssl {
    fn impl_name(&self) -> &'static str {
        "openssl"
    }
    fn backend(&self) -> String {
        "-".to_string()
    }
    fn run(&mut self, buf: &mut [u8], size: usize) {
        // Errors cannot happen with these fixed, valid parameters; ignore the Results.
        match self.op {
            Op::Ctr | Op::CtrMt => {
                let _ = self.enc.encrypt_init(None, None, Some(&IV));
                let _ = self.enc.cipher_update_inplace(&mut buf[..size], size);
            }
            Op::EcbEnc => {
                let _ = self.enc.cipher_update_inplace(&mut buf[..size + 16], size);
            }
            Op::EcbDec => {
                let _ = self.dec.cipher_update_inplace(&mut buf[..size + 16], size);
            }
            Op::CbcEnc => {
                let _ = self.enc.encrypt_init(None, None, Some(&IV));
                let _ = self.enc.cipher_update_inplace(&mut buf[..size + 16], size);
            }
            Op::CbcDec => {
                let _ = self.dec.decrypt_init(None, None, Some(&IV));
                let _ = self.dec.cipher_update_inplace(&mut buf[..size + 16], size);
            }
            Op::Keysetup => {
                let _ = self
                    .enc
                    .encrypt_init(None, Some(black_box(&self.key)), None);
                let _ = self
                    .dec
                    .decrypt_init(None, Some(black_box(&self.key)), None);
            }
            Op::KeysetupVariants | Op::Fugue(_) | Op::GcmEnc | Op::GcmDec => {}
        }
    }
}

#[cfg(feature = "bench-peers")]
struct RustCrypto<C> {
    op: Op,
    cipher: C,
    key: Vec<u8>,
}

#[cfg(feature = "bench-peers")]
impl<C> RustCrypto<C>
where
    C: KeyInit,
{
    fn new(op: Op, key: &[u8]) -> Self {
        RustCrypto {
            op,
            cipher: C::new_from_slice(key).expect("valid key length"),
            key: key.to_vec(),
        }
    }
}

#[cfg(feature = "bench-peers")]
impl<C> Subject for RustCrypto<C>
where
    C: BlockCipherEncrypt<BlockSize = U16> + BlockCipherDecrypt<BlockSize = U16> + KeyInit,
{
    fn impl_name(&self) -> &'static str {
        "rustcrypto"
    }
    fn backend(&self) -> String {
        "-".to_string()
    }
    fn run(&mut self, buf: &mut [u8], size: usize) {
        let buf = &mut buf[..size];
        let c = &self.cipher;
        let iv = Array::from(IV);
        match self.op {
            Op::Ctr | Op::CtrMt => {
                let core = ctr::CtrCore::<&C, ctr::flavors::Ctr128BE>::inner_iv_init(c, &iv);
                ctr::Ctr128BE::<&C>::from_core(core).apply_keystream(buf);
            }
            Op::EcbEnc => c.encrypt_blocks(Array::slice_as_chunks_mut(buf).0),
            Op::EcbDec => c.decrypt_blocks(Array::slice_as_chunks_mut(buf).0),
            Op::CbcEnc => cbc::Encryptor::<&C>::inner_iv_init(c, &iv)
                .encrypt_blocks(Array::slice_as_chunks_mut(buf).0),
            Op::CbcDec => cbc::Decryptor::<&C>::inner_iv_init(c, &iv)
                .decrypt_blocks(Array::slice_as_chunks_mut(buf).0),
            Op::Keysetup => {
                let k = C::new_from_slice(black_box(&self.key));
                black_box(&k);
            }
            Op::KeysetupVariants | Op::Fugue(_) | Op::GcmEnc | Op::GcmDec => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every subject must compute the same bytes, or the comparison is meaningless.
    #[test]
    fn all_subjects_agree() {
        let backends = Backend::available();
        for op in [
            Op::Ctr,
            Op::CtrMt,
            Op::EcbEnc,
            Op::EcbDec,
            Op::CbcEnc,
            Op::CbcDec,
        ] {
            for bits in [128, 192, 256] {
                // 2 MiB + 16: above aesx::parallel::PAR_THRESHOLD, so ctr-mt really splits.
                for size in [16usize, 48, 4096 + 16, (2 << 20) + 16] {
                    let mut subjects = build(op, bits, &backends, &[]).unwrap();
                    let input: Vec<u8> = (0..size + 16).map(|i| (i * 7 + 3) as u8).collect();
                    let mut want: Option<Vec<u8>> = None;
                    for s in subjects.iter_mut() {
                        let mut b = input.clone();
                        s.run(&mut b, size);
                        b.truncate(size);
                        assert_ne!(b, input[..size], "{} did nothing", s.label());
                        match &want {
                            None => want = Some(b),
                            Some(w) => assert_eq!(&b, w, "{} {op:?} {bits} {size}", s.label()),
                        }
                    }
                }
            }
        }
    }
}
