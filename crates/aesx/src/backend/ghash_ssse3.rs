//! GHASH for the `soft` and `vpaes` backends on x86-64 CPUs with SSSE3 but without AVX2 (and
//! without PCLMULQDQ): from [`STREAM_MIN`] blocks on, 16 interleaved streams multiplied by
//! `H^16` through SSSE3 byte-shuffle tables ([`ghash_pshufb`], [`X16`]); shorter inputs, and
//! the stream states at the end, by the scalar integer-multiply code ([`ghash_soft`]).
//!
//! IMPLEMENTATION NOTE: these are the CPUs `vpaes` is for (SSSE3, no AES-NI: Core 2, Nehalem,
//! Atom before Silvermont, VIA Nano), where `ghash_soft` does about 50 scalar 64-bit
//! multiplies a block. The stream code does 32 PSHUFB, 32 XOR and 32 table loads a block. It
//! was tested and measured only on CPUs that have AVX2 too (which run [`super::ghash_avx2`]):
//! see the README's GCM section for the numbers.

use super::ghash_pshufb::{self, StreamKey, Streams, Tables, X16};
use super::ghash_soft;

/// Blocks from which [`ghash`] takes the stream path (and the generic GCM kernel uses
/// [`Streams`]): two batches of 16 (its finish hashes 16 blocks the scalar way).
pub(crate) const STREAM_MIN: usize = 32;

/// The scalar key (`H^1..`) and the `H^16` tables. Zeroized on drop (each field's own `Drop`).
pub(crate) struct Key {
    soft: ghash_soft::Key,
    t: Tables,
}

/// Whether this CPU runs the SSSE3 stream code.
#[inline]
pub(crate) fn available() -> bool {
    crate::cpu::features().ssse3
}

impl Key {
    /// An all-zero key, for [`Key::fill`].
    pub(crate) fn zero() -> Key {
        Key {
            soft: ghash_soft::Key::default(),
            t: Tables::ZERO,
        }
    }

    /// Computes the powers and tables of `h` into this key, in place.
    pub(crate) fn fill(&mut self, h: &[u8; 16]) {
        self.soft.fill(h);
        // SAFETY: a `Key` is built only where `available()` held (SSSE3).
        unsafe { self.t.fill::<X16>(h) };
    }
}

impl StreamKey for Key {
    fn tables(&self) -> &Tables {
        &self.t
    }
    fn hash(&self, acc: &mut u128, data: &[u8]) {
        ghash_soft::ghash(&self.soft, acc, data);
    }
}

/// The streams of a message on this key.
pub(crate) fn streams(k: &Key, acc: u128) -> Streams<'_, X16, Key> {
    Streams::new(k, acc)
}

/// `acc <- GHASH update over data` (whole blocks).
pub(crate) fn ghash(k: &Key, acc: &mut u128, data: &[u8]) {
    ghash_pshufb::ghash::<X16, Key>(k, acc, data, STREAM_MIN);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Same state as the scalar GHASH for counts around the batches, whole and in pieces.
    #[test]
    fn matches_scalar_ghash() {
        if !available() {
            return;
        }
        let data: alloc::vec::Vec<u8> = (0..16 * 150).map(|i| (i * 97 + i / 512) as u8).collect();
        for h in [[0xffu8; 16], core::array::from_fn(|i| (i * 53 + 7) as u8)] {
            let mut k = alloc::boxed::Box::new(Key::zero());
            k.fill(&h);
            let ks = ghash_soft::Key::new(&h);
            for n in [0usize, 1, 15, 16, 17, 31, 32, 33, 47, 48, 49, 64, 100, 150] {
                let (mut a, mut b) = (u128::MAX / 5, u128::MAX / 5);
                ghash(&k, &mut a, &data[..16 * n]);
                ghash_soft::ghash(&ks, &mut b, &data[..16 * n]);
                assert_eq!(a, b, "{n} blocks");
            }
            let mut st = streams(&k, 7);
            for piece in [16usize, 16, 32, 0, 16, 5] {
                st.update(&data[..16 * piece]);
            }
            let mut b = 7;
            for piece in [16usize, 16, 32, 0, 16, 5] {
                ghash_soft::ghash(&ks, &mut b, &data[..16 * piece]);
            }
            assert_eq!(st.finish(), b, "pieces");
        }
    }
}
