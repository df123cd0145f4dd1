//! Low-level access for front ends that speak in round keys (the C ABI's SuiteB_FFI symbols)
//! and for measuring key-expansion variants. Prefer [`crate::Aes`] everywhere else.

use zeroize::Zeroize;

use crate::{Aes, Backend, Error, ErrorKind, backend};

/// The branch-free PKCS#7 check under [`crate::pkcs7_unpad`], and the variant with a
/// declassification hook that constant-time checkers use.
pub use crate::mode::cbc::{Pkcs7Check, pkcs7_check, pkcs7_unpad_declassify};

/// FIPS-197 encryption round keys `w[4r..4r+4]` as 16-byte blocks; `rounds + 1` are valid.
/// Zeroized on drop.
#[derive(Clone)]
pub struct RoundKeys {
    pub rounds: usize,
    pub keys: [[u8; 16]; 15],
}

impl Drop for RoundKeys {
    fn drop(&mut self) {
        self.keys.zeroize();
    }
}

impl core::fmt::Debug for RoundKeys {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("RoundKeys { .. }")
    }
}

impl RoundKeys {
    /// The valid round keys.
    pub fn as_slice(&self) -> &[[u8; 16]] {
        &self.keys[..=self.rounds]
    }
}

/// The standard AES key schedule of a 16/24/32-byte key (AES-NI when present, else a
/// portable constant-time computation).
pub fn expand_key(key: &[u8]) -> Result<RoundKeys, Error> {
    if !matches!(key.len(), 16 | 24 | 32) {
        return Err(Error::new(ErrorKind::InvalidKeyLength));
    }
    #[cfg(target_arch = "x86_64")]
    if Backend::Aesni.is_available() {
        let k = backend::aesni::expand(key);
        return Ok(RoundKeys {
            rounds: k.rounds,
            keys: k.enc,
        });
    }
    Ok(portable_expand(key))
}

/// GF(2^8) multiplication mod x^8+x^4+x^3+x+1, branch-free.
pub(crate) fn gmul(mut a: u8, mut b: u8) -> u8 {
    let mut p = 0u8;
    for _ in 0..8 {
        p ^= a & 0u8.wrapping_sub(b & 1);
        let hi = 0u8.wrapping_sub(a >> 7);
        a = (a << 1) ^ (hi & 0x1b);
        b >>= 1;
    }
    p
}

/// The AES S-box computed as x^254 then the affine map: no table, no branch.
pub(crate) fn sbox(x: u8) -> u8 {
    let x2 = gmul(x, x);
    let x3 = gmul(x2, x);
    let x6 = gmul(x3, x3);
    let x12 = gmul(x6, x6);
    let x15 = gmul(x12, x3);
    let x30 = gmul(x15, x15);
    let x60 = gmul(x30, x30);
    let x120 = gmul(x60, x60);
    let x126 = gmul(x120, x6);
    let x252 = gmul(x126, x126);
    let inv = gmul(x252, x2);
    inv ^ inv.rotate_left(1) ^ inv.rotate_left(2) ^ inv.rotate_left(3) ^ inv.rotate_left(4) ^ 0x63
}

/// FIPS-197 key expansion in portable constant-time code (slow S-box; fine for key setup).
pub(crate) fn portable_expand(key: &[u8]) -> RoundKeys {
    let nk = key.len() / 4;
    let rounds = nk + 6;
    let mut w = [[0u8; 4]; 60];
    for i in 0..nk {
        w[i].copy_from_slice(&key[4 * i..4 * i + 4]);
    }
    let mut rcon = 1u8;
    for i in nk..4 * (rounds + 1) {
        let mut t = w[i - 1];
        if i % nk == 0 {
            t = [sbox(t[1]) ^ rcon, sbox(t[2]), sbox(t[3]), sbox(t[0])];
            rcon = gmul(rcon, 2);
        } else if nk > 6 && i % nk == 4 {
            t = t.map(sbox);
        }
        for j in 0..4 {
            w[i][j] = w[i - nk][j] ^ t[j];
        }
    }
    let mut keys = [[0u8; 16]; 15];
    for (r, k) in keys.iter_mut().enumerate().take(rounds + 1) {
        for c in 0..4 {
            k[4 * c..4 * c + 4].copy_from_slice(&w[4 * r + c]);
        }
    }
    w.zeroize();
    RoundKeys { rounds, keys }
}

impl Aes {
    /// Builds a cipher from FIPS-197 encryption round keys (11, 13 or 15 blocks) on `backend`.
    pub fn from_round_keys(enc: &[[u8; 16]], backend: Backend) -> Result<Aes, Error> {
        if !matches!(enc.len(), 11 | 13 | 15) {
            return Err(Error::new(ErrorKind::InvalidKeyLength));
        }
        if !backend.is_available() {
            return Err(Error::new(ErrorKind::BackendUnavailable));
        }
        Ok(Aes {
            backend,
            keys: core::mem::ManuallyDrop::new(backend::Keys::from_round_keys(backend, enc)),
        })
    }
}

/// Key-expansion variants of the hardware backends, for `aesx bench --ops keysetup-variants`.
#[cfg(target_arch = "x86_64")]
#[doc(hidden)]
pub mod keysetup {
    use crate::backend::aesni;

    /// `(name, function)` for every AES-NI key-expansion variant; the function expands `key`
    /// and returns one byte of the result (so the work cannot be optimised away).
    /// Empty when the CPU has no AES-NI.
    pub type ExpandFn = fn(&[u8]) -> u8;

    pub fn variants() -> impl Iterator<Item = (&'static str, ExpandFn)> {
        fn assist(k: &[u8]) -> u8 {
            aesni::expand_with(k, aesni::Variant::Assist).enc[10][0]
        }
        fn enclast(k: &[u8]) -> u8 {
            aesni::expand_with(k, aesni::Variant::Enclast).enc[10][0]
        }
        fn assist_inline(k: &[u8]) -> u8 {
            // SAFETY: listed only when AES-NI is available (filtered below).
            unsafe { aesni::expand_inline(k, aesni::Variant::Assist) }.enc[10][0]
        }
        fn enclast_inline(k: &[u8]) -> u8 {
            // SAFETY: as above.
            unsafe { aesni::expand_inline(k, aesni::Variant::Enclast) }.enc[10][0]
        }
        let list: [(&'static str, ExpandFn); 4] = [
            ("aeskeygenassist", assist),
            ("aesenclast-pshufb", enclast),
            ("aeskeygenassist-inline", assist_inline),
            ("aesenclast-pshufb-inline", enclast_inline),
        ];
        let ok = crate::Backend::Aesni.is_available();
        list.into_iter().filter(move |_| ok)
    }

    /// The variant `Aes::new` uses on this CPU.
    pub fn preferred() -> &'static str {
        match aesni::preferred_variant() {
            aesni::Variant::Assist => "aeskeygenassist",
            aesni::Variant::Enclast => "aesenclast-pshufb",
        }
    }

    /// Expands with a named variant and returns the encryption round keys (for tests).
    /// The `-inline` variants are the register-only expansions `Aes::new` inlines into its
    /// caller (`aesni::expand_inline`; AES-192 goes through the out-of-line code there).
    pub fn expand_with(name: &str, key: &[u8]) -> Option<super::RoundKeys> {
        let (v, inline) = match name {
            "aeskeygenassist" => (aesni::Variant::Assist, false),
            "aesenclast-pshufb" => (aesni::Variant::Enclast, false),
            "aeskeygenassist-inline" => (aesni::Variant::Assist, true),
            "aesenclast-pshufb-inline" => (aesni::Variant::Enclast, true),
            _ => return None,
        };
        if !crate::Backend::Aesni.is_available() || !matches!(key.len(), 16 | 24 | 32) {
            return None;
        }
        let k = if inline {
            // SAFETY: AES-NI (and SSE4.2, part of `Backend::Aesni`) was just checked.
            unsafe { aesni::expand_inline(key, v) }
        } else {
            aesni::expand_with(key, v)
        };
        Some(super::RoundKeys {
            rounds: k.rounds,
            keys: k.enc,
        })
    }
}

/// The branch-free core of [`crate::AesGcm::open_in_place_detached`], for constant-time
/// checkers: decrypts `buf` in place and returns `Ok(1)` if `tag` is valid, `Ok(0)` if not,
/// computed without a branch or a memory index that depends on secret data. The public
/// function is this plus one branch on the result (and zeroing `buf` on 0).
///
/// **On `Ok(0)` `buf` holds unauthenticated plaintext**: the caller must discard it.
pub fn gcm_open_ct(
    gcm: &crate::AesGcm,
    nonce: &[u8],
    aad: &[u8],
    buf: &mut [u8],
    tag: &[u8],
) -> Result<u8, Error> {
    gcm.open_in_place_detached_ct(nonce, aad, buf, tag)
}

/// The branch-free core of [`crate::GcmDecryptor::finish`]: `Ok(1)` if `tag` is valid,
/// `Ok(0)` if not, without a branch on secret data.
pub fn gcm_finish_ct<K: core::borrow::Borrow<crate::AesGcm>>(
    dec: crate::GcmDecryptor<K>,
    tag: &[u8],
) -> Result<u8, Error> {
    dec.finish_ct(tag)
}

/// The software GHASH kernels by name, for constant-time checkers and differential tests:
/// the one `soft` and `vpaes` pair with on a CPU is picked by its features (AVX2, else SSSE3,
/// else the portable one), so a checker on an AVX2 machine would otherwise never run the
/// others. PCLMULQDQ kernels are reached through [`crate::AesGcm`] on the hardware backends.
pub mod ghash {
    use crate::backend::{GhashKey, ghash as run};

    /// Every software GHASH kernel this build knows, whether or not this CPU runs it:
    /// `soft` (portable integer multiplies), `avx2` (VPMULUDQ, and 32 VPSHUFB streams from
    /// 64 blocks), `ssse3` (the portable code, and 16 PSHUFB streams from 32 blocks).
    pub const KERNELS: [&str; 3] = ["soft", "avx2", "ssse3"];

    /// Whether this CPU (and build) runs `kernel`.
    pub fn available(kernel: &str) -> bool {
        match kernel {
            "soft" => true,
            #[cfg(target_arch = "x86_64")]
            "avx2" => crate::backend::ghash_avx2::available(),
            #[cfg(all(target_arch = "x86_64", feature = "alloc"))]
            "ssse3" => crate::backend::ghash_ssse3::available(),
            _ => false,
        }
    }

    /// `y <- GHASH_H` update of `y` (a GHASH state, 16 bytes) over `data` (whole blocks) with
    /// `kernel` and the hash subkey `h`; `None`, changing nothing, if this CPU does not run
    /// the kernel or `data` is not whole blocks. The key (powers, tables) is built for the call
    /// and zeroized after it.
    pub fn ghash_with(kernel: &str, h: &[u8; 16], y: &mut [u8; 16], data: &[u8]) -> Option<()> {
        if !available(kernel) || !data.len().is_multiple_of(16) {
            return None;
        }
        let key = GhashKey::software(kernel, h)?;
        let mut acc = u128::from_be_bytes(*y);
        run(&key, &mut acc, data);
        *y = acc.to_be_bytes();
        zeroize::Zeroize::zeroize(&mut acc);
        Some(())
    }
}
