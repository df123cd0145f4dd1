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
pub(crate) mod vaes256;
#[cfg(target_arch = "x86_64")]
pub(crate) mod vaes512;
#[cfg(target_arch = "x86_64")]
pub(crate) mod vpaes;

use crate::cpu::Backend;

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
                Keys::Hw(k) => match backend {
                    Backend::Vaes512 => vaes512::$name(k, $($arg),*),
                    Backend::Vaes256 => vaes256::$name(k, $($arg),*),
                    _ => aesni::$name(k, $($arg),*),
                },
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
