//! Constant-time multiplication by a fixed `H^32` for 32 GHASH streams at once, with AVX2
//! byte shuffles: the long-input path of the `soft` and `vpaes` GHASH ([`super::ghash_avx2`]).
//!
//! GHASH of `X_0 .. X_{32m-1}` is `sum_i X_i H^(32m - i)`. Split the blocks into 32
//! interleaved streams (stream `b` takes `X_b, X_{32+b}, ...`) and run each by Horner's rule
//! with `H^32`: `S_b <- S_b H^32 ^ X_{32t+b}`. Then GHASH = `sum_b S_b H^(32-b)`, the GHASH of
//! the 32 stream states as 32 blocks (the finish, done by the 8-block code). All 32 streams
//! multiply by the same `H^32`, so one set of tables serves them all, and a table lookup by
//! VPSHUFB serves 32 streams in one instruction when the state is *byte-sliced*: register `c`
//! holds byte `c` of the 32 states (stream `b` in byte `b`).
//!
//! Multiplication by `H^32` is linear over GF(2): the product is the XOR, over the 32 nibbles
//! `q` of the multiplicand, of a 16-entry table `T_q[nibble]` of 16-byte values. Byte `j` of
//! the product is then `XOR_q T_q[n_q][j]`: per (`j`, `q`) one VPSHUFB with the table of bytes
//! `j` of `T_q` (16 bytes, [`Tables`]) and the register of nibbles `q` of all streams, and one
//! XOR. 512 of each (and 512 table loads) per 32 blocks, about 16 + 16 + 16 per block, against
//! 64 VPMULUDQ and about 100 other vector instructions per block in the integer-multiply code.
//!
//! Data enters sliced by a 16 x 16 byte transpose per 128-bit lane ([`transpose`]: four rounds
//! of unpacks, 64 instructions per 32 blocks); the same transpose turns the states back into
//! blocks at the end.
//!
//! Constant time: VPSHUFB selects bytes within registers (no memory index depends on the key
//! or the data; the technique of vector-permute AES); table addresses and every branch depend
//! only on lengths. The tables are key material (8 KiB, in the heap-allocated GHASH key,
//! zeroized on drop); the sliced states are the caller's and are zeroized by it.

use core::arch::x86_64::*;

use zeroize::Zeroize;

use super::ghash_soft;

/// Streams, and blocks per batch: one per byte of a ymm register.
pub(crate) const LANES: usize = 32;

/// The tables of the multiplication by `H^32`: `t[j][q][n]` is byte `j` (GCM byte order) of
/// `n * x^(4q)` times `H^32`, where `n` is a nibble in GCM bit order (its bit 3 the
/// coefficient of `x^(4q)`, bit 0 of `x^(4q+3)`); nibble `2c` is the high half of byte `c`,
/// `2c + 1` the low half. 8 KiB, zeroized on drop.
///
/// IMPLEMENTATION NOTE: each table is broadcast to both 128-bit lanes as it is loaded
/// (VBROADCASTI128). Stored twice instead (16 KiB, plain 32-byte loads) it measured no faster
/// on Zen 4 (GHASH of 16 KiB 3.4-3.8 GB/s either way).
#[repr(C, align(64))]
pub(crate) struct Tables {
    t: [[[u8; 16]; 32]; 16],
}

impl Drop for Tables {
    fn drop(&mut self) {
        // SAFETY: `Tables` are built only where AVX2 is (as the key that holds them).
        unsafe { self.wipe() }
    }
}

impl Tables {
    /// Zeroes the tables with volatile 32-byte stores (a byte array's `zeroize` stores a byte
    /// at a time: 8192 stores here, a third of a key setup), kept by the fence as `zeroize`
    /// keeps its own.
    #[target_feature(enable = "avx2")]
    fn wipe(&mut self) {
        for j in self.t.iter_mut() {
            for q in j.chunks_exact_mut(2) {
                // SAFETY: two adjacent 16-byte tables: 32 writable bytes, 32-byte aligned
                // (the struct is 64-byte aligned, a row of 32 tables 512 bytes).
                unsafe {
                    core::ptr::write_volatile(
                        q.as_mut_ptr().cast::<__m256i>(),
                        _mm256_setzero_si256(),
                    )
                };
            }
        }
        core::sync::atomic::compiler_fence(core::sync::atomic::Ordering::SeqCst);
    }
}

/// GCM's multiplication by `x` of an element as a big-endian `u128` (bit 127 is the
/// coefficient of `x^0`), branch-free.
#[inline]
fn gcm_mul_x(v: u128) -> u128 {
    (v >> 1) ^ (0xe1u128 << 120 & 0u128.wrapping_sub(v & 1))
}

/// GCM multiplication of elements as big-endian `u128`s (the form of the GHASH state here),
/// through `ghash_soft`'s POLYVAL product: `a b = dot(a, mulX(b))` (the relation GHASH =
/// POLYVAL with `H x` rests on), branch-free.
#[inline]
fn gcm_mul(a: u128, b: u128) -> u128 {
    ghash_soft::dot(a, ghash_soft::mul_x(b))
}

impl Tables {
    /// All zeros, for [`Tables::fill`].
    pub(crate) const ZERO: Tables = Tables {
        t: [[[0; 16]; 32]; 16],
    };

    /// The tables of `H^32` for the GCM hash subkey `h`, in place. Two nibble positions at a
    /// time: their 16 entries each, as 32 blocks, go through [`slice`], whose rows are then
    /// the two positions' tables for every output byte.
    #[target_feature(enable = "avx2")]
    pub(crate) fn fill(&mut self, h: &[u8; 16]) {
        let mut p = u128::from_be_bytes(*h);
        for _ in 0..5 {
            p = gcm_mul(p, p);
        }
        // `b` runs over `p x^i`; entry `n` of a nibble is the XOR of the basis values of its
        // set bits (bit 3 the first).
        let mut b = p;
        let mut e = [0u128; 16];
        // 32 blocks, each entry's bytes in GCM order (big-endian).
        let mut blocks = [0u128; LANES];
        let mut sl = Sliced::default();
        for q2 in 0..16 {
            for half in 0..2 {
                let mut basis = [0u128; 4];
                for bk in basis.iter_mut() {
                    *bk = b;
                    b = gcm_mul_x(b);
                }
                for n in 1..16usize {
                    e[n] = e[n & (n - 1)] ^ basis[3 - n.trailing_zeros() as usize];
                }
                for (n, en) in e.iter().enumerate() {
                    blocks[16 * half + n] = u128::from_ne_bytes(en.to_be_bytes());
                }
                basis.zeroize();
            }
            // SAFETY: `blocks` is 512 initialized bytes.
            let bytes =
                unsafe { core::slice::from_raw_parts(blocks.as_ptr().cast::<u8>(), 16 * LANES) };
            slice(bytes, 0, &mut sl);
            for (j, row) in sl.s.iter().enumerate() {
                self.t[j][2 * q2].copy_from_slice(&row[..16]);
                self.t[j][2 * q2 + 1].copy_from_slice(&row[16..]);
            }
        }
        e.zeroize();
        blocks.zeroize();
        sl.zeroize();
        b.zeroize();
        p.zeroize();
    }
}

/// 32 blocks byte-sliced: `s[c]` holds byte `c` of block `b` at byte `b` (lane `b / 16`).
#[repr(C, align(32))]
#[derive(Clone, Default)]
pub(crate) struct Sliced {
    s: [[u8; 32]; 16],
}

impl Zeroize for Sliced {
    fn zeroize(&mut self) {
        // 16-byte volatile stores (a byte array's `zeroize` stores a byte at a time).
        for r in self.s.iter_mut() {
            for h in r.chunks_exact_mut(16) {
                // SAFETY: 16 writable bytes, 16-byte aligned (rows are 32-byte aligned).
                unsafe { core::ptr::write_volatile(h.as_mut_ptr().cast::<u128>(), 0) };
            }
        }
        core::sync::atomic::compiler_fence(core::sync::atomic::Ordering::SeqCst);
    }
}

/// Register `R` after the four unpack rounds of [`transpose`] holds byte `BITREV4[R]` of each
/// row.
const BITREV4: [usize; 16] = [0, 8, 4, 12, 2, 10, 6, 14, 1, 9, 5, 13, 3, 11, 7, 15];

/// One unpack round: `o[k] = lo(r[2k], r[2k+1])`, `o[8+k] = hi(r[2k], r[2k+1])`.
macro_rules! unpack_round {
    ($r:expr, $lo:ident, $hi:ident) => {{
        let r = $r;
        let mut o = [_mm256_setzero_si256(); 16];
        for k in 0..8 {
            o[k] = $lo(r[2 * k], r[2 * k + 1]);
            o[8 + k] = $hi(r[2 * k], r[2 * k + 1]);
        }
        o
    }};
}

/// In each 128-bit lane, the 16 x 16 byte matrix of the 16 registers transposed: byte `p` of
/// output `c` is byte `c` of input `p`. Each unpack round moves one bit of the register
/// index into the byte position (bytes, then 2-, 4- and 8-byte units), so after four the
/// byte position is the input register and the register is the input byte, bit-reversed.
#[inline]
#[target_feature(enable = "avx2")]
fn transpose(r: [__m256i; 16]) -> [__m256i; 16] {
    let r = unpack_round!(r, _mm256_unpacklo_epi8, _mm256_unpackhi_epi8);
    let r = unpack_round!(r, _mm256_unpacklo_epi16, _mm256_unpackhi_epi16);
    let r = unpack_round!(r, _mm256_unpacklo_epi32, _mm256_unpackhi_epi32);
    let r = unpack_round!(r, _mm256_unpacklo_epi64, _mm256_unpackhi_epi64);
    core::array::from_fn(|c| r[BITREV4[c]])
}

/// `s` = the 32 blocks of `data` (512 bytes) byte-sliced, with `x` XORed into the first.
#[inline]
#[target_feature(enable = "avx2")]
pub(crate) fn slice(data: &[u8], x: u128, s: &mut Sliced) {
    let data = &data[..16 * LANES];
    // Block 0 ^ x: `x` is the block as a big-endian integer.
    let xb = _mm_set_epi64x(
        (x as u64).swap_bytes() as i64,
        ((x >> 64) as u64).swap_bytes() as i64,
    );
    let r: [__m256i; 16] = core::array::from_fn(|i| {
        // SAFETY: blocks `i` and `16 + i` lie inside the 512 bytes of `data`; unaligned loads.
        unsafe {
            let lo = _mm_loadu_si128(data[16 * i..].as_ptr().cast());
            let hi = _mm_loadu_si128(data[16 * (16 + i)..].as_ptr().cast());
            let lo = if i == 0 { _mm_xor_si128(lo, xb) } else { lo };
            _mm256_inserti128_si256::<1>(_mm256_castsi128_si256(lo), hi)
        }
    });
    let r = transpose(r);
    for (c, v) in r.iter().enumerate() {
        // SAFETY: `s.s[c]` is 32 writable bytes, 32-byte aligned (`Sliced`'s alignment).
        unsafe { _mm256_store_si256(s.s[c].as_mut_ptr().cast(), *v) };
    }
}

/// The 32 blocks of `s` back into `out` (512 bytes): block `b` is byte `b` of every row.
#[inline]
#[target_feature(enable = "avx2")]
pub(crate) fn unslice(s: &Sliced, out: &mut [u8]) {
    let out = &mut out[..16 * LANES];
    // SAFETY: `s.s[c]` is 32 readable bytes, 32-byte aligned.
    let r: [__m256i; 16] =
        core::array::from_fn(|c| unsafe { _mm256_load_si256(s.s[c].as_ptr().cast()) });
    let r = transpose(r);
    for (p, v) in r.iter().enumerate() {
        // SAFETY: blocks `p` and `16 + p` lie inside the 512 bytes of `out`; unaligned stores.
        unsafe {
            _mm_storeu_si128(
                out[16 * p..].as_mut_ptr().cast(),
                _mm256_castsi256_si128(*v),
            );
            _mm_storeu_si128(
                out[16 * (16 + p)..].as_mut_ptr().cast(),
                _mm256_extracti128_si256::<1>(*v),
            );
        }
    }
}

/// `o = s H^32 ^ o` on every stream: `o` holds the next 32 blocks sliced on entry and the new
/// states on return.
#[inline]
#[target_feature(enable = "avx2")]
pub(crate) fn mul_add(t: &Tables, s: &Sliced, o: &mut Sliced) {
    let m = _mm256_set1_epi8(0x0f);
    // Half the output bytes at a time: 8 accumulators, the two nibble registers, the mask and
    // two tables stay within the 16 ymm registers.
    for half in 0..2 {
        // SAFETY: 32-byte aligned rows of `o` and `s`, 16-byte aligned tables of `t` (in
        // bounds: `j < 16`, `2c + 1 < 32`).
        unsafe {
            let mut acc: [__m256i; 8] =
                core::array::from_fn(|k| _mm256_load_si256(o.s[8 * half + k].as_ptr().cast()));
            for c in 0..16 {
                let v = _mm256_load_si256(s.s[c].as_ptr().cast());
                let hi = _mm256_and_si256(_mm256_srli_epi16::<4>(v), m);
                let lo = _mm256_and_si256(v, m);
                for (k, a) in acc.iter_mut().enumerate() {
                    let row = &t.t[8 * half + k];
                    let th =
                        _mm256_broadcastsi128_si256(_mm_load_si128(row[2 * c].as_ptr().cast()));
                    let tl =
                        _mm256_broadcastsi128_si256(_mm_load_si128(row[2 * c + 1].as_ptr().cast()));
                    *a = _mm256_xor_si256(
                        *a,
                        _mm256_xor_si256(_mm256_shuffle_epi8(th, hi), _mm256_shuffle_epi8(tl, lo)),
                    );
                }
            }
            for (k, a) in acc.iter().enumerate() {
                _mm256_store_si256(o.s[8 * half + k].as_mut_ptr().cast(), *a);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// GCM multiplication bit by bit (SP 800-38D, Algorithm 1): the reference here.
    fn gf_mul(x: u128, y: u128) -> u128 {
        let (mut z, mut v) = (0u128, y);
        for i in 0..128 {
            if (x >> (127 - i)) & 1 == 1 {
                z ^= v;
            }
            v = gcm_mul_x(v);
        }
        z
    }

    fn avx2() -> bool {
        crate::cpu::features().avx2
    }

    /// Slicing and unslicing are inverse, and slicing puts byte `c` of block `b` at row `c`,
    /// byte `b` (with `x` in the first block).
    #[test]
    fn slice_layout_and_round_trip() {
        if !avx2() {
            return;
        }
        let data: alloc::vec::Vec<u8> = (0..512).map(|i| (i * 7 + i / 16) as u8).collect();
        let x = 0x0102_0304_0506_0708_090a_0b0c_0d0e_0f10u128;
        let mut s = Sliced::default();
        let mut back = [0u8; 512];
        // SAFETY: AVX2 checked above.
        unsafe {
            slice(&data, x, &mut s);
            unslice(&s, &mut back);
        }
        for b in 0..32 {
            for c in 0..16 {
                let want = data[16 * b + c] ^ if b == 0 { x.to_be_bytes()[c] } else { 0 };
                assert_eq!(s.s[c][b], want, "block {b} byte {c}");
                assert_eq!(back[16 * b + c], want, "block {b} byte {c} back");
            }
        }
    }

    /// `mul_add` multiplies every stream by H^32 as the bit-serial multiplication does, for
    /// keys and data that reach every nibble value.
    #[test]
    fn mul_add_matches_bit_serial() {
        if !avx2() {
            return;
        }
        for h in [
            [0xffu8; 16],
            core::array::from_fn(|i| (i * 37 + 11) as u8),
            core::array::from_fn(|i| 1u8 << (i % 8)),
        ] {
            let mut t = alloc::boxed::Box::new(Tables::ZERO);
            // SAFETY: AVX2 checked above.
            unsafe { t.fill(&h) };
            let mut h32 = u128::from_be_bytes(h);
            for _ in 0..5 {
                h32 = gf_mul(h32, h32);
            }
            let a: alloc::vec::Vec<u8> = (0..512)
                .map(|i| (i * 73 + 5) as u8 ^ (i >> 4) as u8)
                .collect();
            let d: alloc::vec::Vec<u8> = (0..512).map(|i| (i * 151 + 3) as u8).collect();
            let (mut s, mut o) = (Sliced::default(), Sliced::default());
            let mut out = [0u8; 512];
            // SAFETY: AVX2 checked above.
            unsafe {
                slice(&a, 0, &mut s);
                slice(&d, 0, &mut o);
                mul_add(&t, &s, &mut o);
                unslice(&o, &mut out);
            }
            for b in 0..32 {
                let blk =
                    |v: &[u8]| u128::from_be_bytes(v[16 * b..16 * b + 16].try_into().unwrap());
                assert_eq!(
                    u128::from_be_bytes(out[16 * b..16 * b + 16].try_into().unwrap()),
                    gf_mul(blk(&a), h32) ^ blk(&d),
                    "stream {b}"
                );
            }
        }
    }

    /// The bit-serial multiplication and `gcm_mul` against `ghash_soft`: GHASH of one block
    /// `X` from the zero state is `X H`.
    #[test]
    fn gf_mul_matches_ghash_soft() {
        use crate::backend::ghash_soft;
        for h in [
            [
                0x66u8, 0xe9, 0x4b, 0xd4, 0xef, 0x8a, 0x2c, 0x3b, 0x88, 0x4c, 0xfa, 0x59, 0xca,
                0x34, 0x2b, 0x2e,
            ],
            core::array::from_fn(|i| (i * 29 + 1) as u8),
        ] {
            let x: [u8; 16] = core::array::from_fn(|i| (i * 91 + 7) as u8);
            // GHASH of one block from state 0 is x H.
            let mut acc = 0u128;
            ghash_soft::ghash(&ghash_soft::Key::new(&h), &mut acc, &x);
            let (x, h) = (u128::from_be_bytes(x), u128::from_be_bytes(h));
            assert_eq!(gf_mul(x, h), acc);
            assert_eq!(gcm_mul(x, h), acc);
        }
    }
}
