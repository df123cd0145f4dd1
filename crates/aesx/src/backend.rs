//! The kernel set every backend provides, and the only `match` that dispatches to them.
//!
//! Every backend module exposes the same whole-block kernels (all buffers are a whole number of
//! 16-byte blocks; the generic mode code in [`crate::mode`] handles everything else):
//!
//! ```text
//! expand(key: &[u8]) -> Keys                 key is 16, 24 or 32 bytes
//! from_round_keys(enc: &[[u8; 16]]) -> Keys  FIPS-197 encryption round keys, 11/13/15 of them
//! encrypt_blocks(&Keys, buf: &mut [u8])      ECB encrypt in place
//! decrypt_blocks(&Keys, buf: &mut [u8])      ECB decrypt in place
//! cbc_encrypt(&Keys, iv: &mut [u8; 16], buf) CBC encrypt in place; iv <- last ciphertext block
//! cbc_decrypt(&Keys, iv: &mut [u8; 16], buf) CBC decrypt in place; iv <- last ciphertext block
//! ctr_xor(&Keys, ctr: u128, buf)             buf ^= E(ctr) || E(ctr+1) || ...
//! ```
//!
//! `ctr_xor` contract: `ctr` is the first counter block as a big-endian integer; block i uses
//! `ctr + i mod 2^128`. The counter may be secret, so kernels carry from the low into the high
//! 64 bits without branches (and the mode layer never splits a call at a carry).
//!
//! The key schedule remembers the backend that built it; layouts are never mixed. AES-NI and
//! both VAES backends share one round-key layout ([`aesni::Keys`]).

#[cfg(target_arch = "x86_64")]
pub(crate) mod aesni;
pub(crate) mod soft;
#[cfg(target_arch = "x86_64")]
pub(crate) mod vaes;
#[cfg(target_arch = "x86_64")]
pub(crate) mod vaes256;
#[cfg(target_arch = "x86_64")]
pub(crate) mod vaes512;
#[cfg(target_arch = "x86_64")]
pub(crate) mod vpaes;

use core::fmt;
use core::str::FromStr;
use core::sync::atomic::{AtomicU32, Ordering};

use crate::cpu::CpuFeatures;
use crate::{Error, ErrorKind};

/// Whether the `vpaes` backend is compiled into this build.
pub(crate) const VPAES_BUILT: bool = cfg!(target_arch = "x86_64") && vpaes_built();

#[cfg(target_arch = "x86_64")]
const fn vpaes_built() -> bool {
    vpaes::BUILT
}
#[cfg(not(target_arch = "x86_64"))]
const fn vpaes_built() -> bool {
    false
}

/// An implementation of the AES kernels. Ordered from slowest to fastest.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Backend {
    /// Portable bitsliced software; constant-time; no `unsafe`. Runs everywhere.
    Soft,
    /// SSSE3 vector-permute AES (Hamburg, CHES 2009); constant-time without AES-NI.
    Vpaes,
    /// AES-NI (with SSE4.2) on xmm registers, 8 blocks interleaved.
    Aesni,
    /// VAES on ymm registers with AVX2.
    Vaes256,
    /// VAES on zmm registers with AVX-512F/BW/VL.
    Vaes512,
}

impl Backend {
    /// Every backend aesx knows, slowest first.
    pub const ALL: [Backend; 5] = [
        Backend::Soft,
        Backend::Vpaes,
        Backend::Aesni,
        Backend::Vaes256,
        Backend::Vaes512,
    ];

    /// The backend's name: the same word in the CLI, the C API and JSON output.
    pub const fn name(self) -> &'static str {
        match self {
            Backend::Soft => "soft",
            Backend::Vpaes => "vpaes",
            Backend::Aesni => "aesni",
            Backend::Vaes256 => "vaes256",
            Backend::Vaes512 => "vaes512",
        }
    }

    /// Whether this CPU (and this build) can run the backend. Decided once, then one load.
    #[inline]
    pub fn is_available(self) -> bool {
        static AVAILABLE: AtomicU32 = AtomicU32::new(0);
        let mut set = AVAILABLE.load(Ordering::Relaxed);
        if set == 0 {
            let f = crate::cpu::features();
            for b in Backend::ALL {
                if b.supported_by(&f) {
                    set |= 1 << b as u32;
                }
            }
            AVAILABLE.store(set, Ordering::Relaxed);
        }
        set & (1 << self as u32) != 0
    }

    fn supported_by(self, f: &CpuFeatures) -> bool {
        match self {
            Backend::Soft => true,
            Backend::Vpaes => VPAES_BUILT && f.ssse3,
            Backend::Aesni => f.aes && f.sse42,
            Backend::Vaes256 => f.aes && f.sse42 && f.avx2 && f.vaes,
            Backend::Vaes512 => {
                f.aes && f.sse42 && f.avx2 && f.vaes && f.avx512f && f.avx512bw && f.avx512vl
            }
        }
    }

    /// Every backend this CPU can run, slowest first (so `soft` is always first).
    #[cfg(feature = "alloc")]
    pub fn available() -> alloc::vec::Vec<Backend> {
        Backend::ALL
            .into_iter()
            .filter(|b| b.is_available())
            .collect()
    }

    /// The fastest available backend (what [`crate::Aes::new`] uses). Decided once.
    pub fn detect() -> Backend {
        static BEST: AtomicU32 = AtomicU32::new(u32::MAX);
        if let Some(&b) = Backend::ALL.get(BEST.load(Ordering::Relaxed) as usize) {
            return b;
        }
        let best = Backend::ALL
            .into_iter()
            .rev()
            .find(|b| b.is_available())
            .unwrap_or(Backend::Soft);
        BEST.store(best as u32, Ordering::Relaxed);
        best
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Backend {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        Backend::ALL
            .into_iter()
            .find(|b| b.name().eq_ignore_ascii_case(s.trim()))
            .ok_or(Error::new(ErrorKind::UnknownBackend))
    }
}

/// The bitsliced and vector-permute schedules are large (~1 KiB); with an allocator they live on
/// the heap so that `Aes` stays small for the hardware backends, whose key setup is bound by
/// moving the schedule around. Without `alloc` they are stored inline.
#[cfg(feature = "alloc")]
pub(crate) type Big<T> = alloc::boxed::Box<T>;
#[cfg(not(feature = "alloc"))]
pub(crate) type Big<T> = T;

#[inline]
fn big<T>(x: T) -> Big<T> {
    #[cfg(feature = "alloc")]
    return alloc::boxed::Box::new(x);
    #[cfg(not(feature = "alloc"))]
    x
}

/// A key schedule in the layout of the backend that made it.
// Stored inline (no allocation, no_std): the size difference between layouts is by design.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Keys {
    /// aesni, vaes256 and vaes512 share this layout. First, so that an all-zero placeholder is
    /// all-zero bytes (tag 0): built with stores of zero rather than copied from a constant.
    #[cfg(target_arch = "x86_64")]
    Hw(aesni::Keys),
    Soft(Big<soft::Keys>),
    #[cfg(target_arch = "x86_64")]
    Vpaes(Big<vpaes::Keys>),
}

impl Keys {
    /// Expands `key` (16/24/32 bytes, checked by the caller) for `backend`, which the caller
    /// has checked is available.
    pub(crate) fn expand(backend: Backend, key: &[u8]) -> Keys {
        debug_assert!(backend.is_available());
        match backend {
            Backend::Soft => Keys::Soft(big(soft::expand(key))),
            #[cfg(target_arch = "x86_64")]
            Backend::Vpaes => Keys::Vpaes(big(vpaes::expand(key))),
            #[cfg(target_arch = "x86_64")]
            Backend::Aesni | Backend::Vaes256 | Backend::Vaes512 => Keys::Hw(aesni::expand(key)),
            #[allow(unreachable_patterns)]
            _ => Keys::Soft(big(soft::expand(key))),
        }
    }

    /// A placeholder of the right layout for `backend`, filled by [`Keys::expand_into`].
    #[inline(always)]
    pub(crate) fn empty(backend: Backend) -> Keys {
        match backend {
            #[cfg(target_arch = "x86_64")]
            Backend::Aesni | Backend::Vaes256 | Backend::Vaes512 => Keys::Hw(aesni::Keys::ZERO),
            _ => Keys::Soft(big(soft::Keys::ZERO)),
        }
    }

    /// Like [`Keys::expand`], writing the hardware and soft layouts in place inside `slot` (no
    /// copy of the large schedule); other layouts are built and moved.
    #[inline(always)]
    pub(crate) fn expand_into(backend: Backend, key: &[u8], slot: &mut Keys) {
        #[cfg(target_arch = "x86_64")]
        if let Keys::Hw(k) = slot {
            aesni::expand_into(key, aesni::preferred_variant(), k);
            return;
        }
        if let (Backend::Soft, Keys::Soft(k)) = (backend, &mut *slot) {
            soft::expand_into(key, k);
            return;
        }
        *slot = Keys::expand(backend, key);
    }

    /// Builds a schedule from standard (FIPS-197) encryption round keys, `rounds + 1` of them.
    pub(crate) fn from_round_keys(backend: Backend, enc: &[[u8; 16]]) -> Keys {
        debug_assert!(backend.is_available() && matches!(enc.len(), 11 | 13 | 15));
        match backend {
            Backend::Soft => Keys::Soft(big(soft::from_round_keys(enc))),
            #[cfg(target_arch = "x86_64")]
            Backend::Vpaes => Keys::Vpaes(big(vpaes::from_round_keys(enc))),
            #[cfg(target_arch = "x86_64")]
            Backend::Aesni | Backend::Vaes256 | Backend::Vaes512 => {
                Keys::Hw(aesni::from_round_keys(enc))
            }
            #[allow(unreachable_patterns)]
            _ => Keys::Soft(big(soft::from_round_keys(enc))),
        }
    }
}

/// Declares one dispatching function per kernel; the match is written once, here.
macro_rules! dispatch {
    ($( $(#[$m:meta])* fn $name:ident( $($arg:ident : $ty:ty),* ); )*) => {$(
        $(#[$m])*
        #[inline]
        pub(crate) fn $name(backend: Backend, keys: &Keys, $($arg: $ty),*) {
            match keys {
                Keys::Soft(k) => soft::$name(k, $($arg),*),
                #[cfg(target_arch = "x86_64")]
                Keys::Vpaes(k) => vpaes::$name(k, $($arg),*),
                #[cfg(target_arch = "x86_64")]
                Keys::Hw(k) => {
                    match backend {
                        Backend::Vaes512 => vaes512::$name(k, $($arg),*),
                        Backend::Vaes256 => vaes256::$name(k, $($arg),*),
                        _ => aesni::$name(k, $($arg),*),
                    }
                    aesni::wipe_stack();
                }
            }
        }
    )*};
}

dispatch! {
    fn encrypt_blocks(buf: &mut [u8]);
    fn decrypt_blocks(buf: &mut [u8]);
    fn cbc_encrypt(iv: &mut [u8; 16], buf: &mut [u8]);
    fn cbc_decrypt(iv: &mut [u8; 16], buf: &mut [u8]);
    fn ctr_xor(ctr: u128, buf: &mut [u8]);
}

#[cfg(test)]
mod tests {
    //! Every kernel of every available backend against `soft`, on every block count up to
    //! three full 8-vector batches of the widest backend (so all tail widths are crossed).
    use super::*;
    use crate::Aes;

    fn data(n: usize, seed: u8) -> alloc::vec::Vec<u8> {
        (0..n)
            .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed) ^ (i >> 8) as u8)
            .collect()
    }

    #[test]
    fn names_parse_and_detection_is_available() {
        for b in Backend::ALL {
            assert_eq!(b.name().parse::<Backend>().unwrap(), b);
            assert_eq!(b.name().to_uppercase().parse::<Backend>().unwrap(), b);
        }
        assert_eq!(
            "nope".parse::<Backend>().unwrap_err().kind(),
            ErrorKind::UnknownBackend
        );
        assert!(Backend::Soft.is_available());
        assert!(Backend::detect().is_available());
        assert_eq!(Backend::available().last(), Some(&Backend::detect()));
    }

    #[test]
    fn kernels_match_soft() {
        for kl in [16, 24, 32] {
            let key = data(kl, 7);
            let soft = Aes::with_backend(&key, Backend::Soft).unwrap();
            for b in Backend::available() {
                let aes = Aes::with_backend(&key, b).unwrap();
                for blocks in 0..=(3 * 32 + 3) {
                    let src = data(16 * blocks, blocks as u8);
                    let iv: [u8; 16] = data(16, 99).try_into().unwrap();
                    let check = |name: &str, f: &dyn Fn(&Aes, &mut [u8])| {
                        let (mut x, mut y) = (src.clone(), src.clone());
                        f(&aes, &mut x);
                        f(&soft, &mut y);
                        assert_eq!(x, y, "{b} {name} key={kl} blocks={blocks}");
                    };
                    check("ecb-enc", &|a, x| a.encrypt_blocks(x));
                    check("ecb-dec", &|a, x| a.decrypt_blocks(x));
                    check("cbc-enc", &|a, x| {
                        let mut v = iv;
                        let (bk, k) = a.kernels();
                        cbc_encrypt(bk, k, &mut v, x);
                        let n = x.len().min(16);
                        x[..n].iter_mut().zip(v).for_each(|(d, s)| *d ^= s);
                    });
                    check("cbc-dec", &|a, x| {
                        let mut v = iv;
                        let (bk, k) = a.kernels();
                        cbc_decrypt(bk, k, &mut v, x);
                        let n = x.len().min(16);
                        x[..n].iter_mut().zip(v).for_each(|(d, s)| *d ^= s);
                    });
                    // Through the mode layer, which splits where the low 64 bits wrap.
                    for c in [
                        0u128,
                        u64::MAX as u128 - 40,
                        u128::MAX - 50,
                        (7 << 64) | 0xffff_fff0,
                    ] {
                        check("ctr", &|a, x| a.ctr_xor_at(&c.to_be_bytes(), 0, x));
                    }
                }
            }
        }
    }
}
