//! Portable constant-time GHASH for the `soft` and `vpaes` backends (and any AES backend on a
//! CPU without PCLMULQDQ).
//!
//! Sources (techniques; the code is written here):
//! - GHASH through POLYVAL: RFC 8452, Appendix A. With `x = u128::from_be_bytes(block)` every
//!   GCM block is a POLYVAL field element (GF(2^128) mod x^128 + x^127 + x^126 + x^121 + 1,
//!   bit i = coefficient of x^i), and GHASH with key H is POLYVAL with key `mulX(H)`.
//! - Carry-less multiplication with integer multiplies ("holes"): T. Pornin, BearSSL
//!   `ghash_ctmul64.c`; the 64x64 -> 128 variant with a cleared low nibble is the one
//!   BoringSSL's `gcm_nohw.c` describes. See also /work/shared/specs/gcm.md section 6.
//!
//! ## The multiply
//!
//! A carry-less product is an integer product without carries. Split each 64-bit operand into
//! four masks whose set bits are 4 apart (bits 0, 4, 8, ...; 1, 5, 9, ...; ...). The integer
//! product of two such masks has its terms on positions 4 apart only, so as long as no position
//! collects 16 or more terms, the carries stay in the three "holes" above each position and the
//! parity bit at the position is the carry-less result. Summing (XOR) the four products whose
//! classes add up to `k mod 4` and keeping only class-`k` bits gives class `k` of the result.
//! A class of 16 bits times a class of 16 bits can put 16 terms on one position, so the key
//! operand loses its low nibble (15 bits per class), and those four bits are added back with
//! masked XORs. 16 widening multiplies (`mul`, 64 x 64 -> 128) per 64 x 64 product, three
//! products per block (Karatsuba).
//!
//! ## Aggregation
//!
//! Blocks are hashed `BATCH` at a time: `S' = (S ^ x1) H^n + x2 H^(n-1) + ... + xn H`, every
//! product accumulated unreduced (LO, MID, HI), one Karatsuba fix-up and one reduction per
//! batch. The reduction is POLYVAL's Montgomery form: it computes `a b x^-128`, which is why
//! the key powers carry one factor of `x^128` (`H1 = mulX(H)`, `H(i+1) = dot(Hi, H1)`).
//!
//! Constant time: integer multiplies, shifts by constants, masks; no table, no branch and no
//! memory index depends on the key or the data. (Integer multiplication is constant-time on
//! every x86-64 and on the usual 64-bit ARM cores; that is the assumption of this technique.)
#![forbid(unsafe_code)]

use zeroize::Zeroize;

/// Blocks hashed per reduction.
pub(crate) const BATCH: usize = 4;

const M0: u64 = 0x1111_1111_1111_1111;
const M1: u64 = M0 << 1;
const M2: u64 = M0 << 2;
const M3: u64 = M0 << 3;
const W0: u128 = (M0 as u128) | (M0 as u128) << 64;
const W1: u128 = W0 << 1;
const W2: u128 = W0 << 2;
const W3: u128 = W0 << 3;

/// The class masks, for kernels that read them from memory.
pub(crate) static CLASS_MASKS: [u64; 4] = [M0, M1, M2, M3];

/// A 64-bit key operand prepared for [`clmul64`]: its four classes without the low nibble, and
/// the low nibble's four bits as all-ones/all-zero masks. `repr(C)`: the x86-64 kernel reads
/// the fields at fixed offsets (`c` at 0, `nib` at 32).
#[derive(Clone, Copy, Default)]
#[repr(C)]
pub(crate) struct Half {
    pub(crate) c: [u64; 4],
    pub(crate) nib: [u64; 4],
}

impl Zeroize for Half {
    fn zeroize(&mut self) {
        self.c.zeroize();
        self.nib.zeroize();
    }
}

impl Half {
    /// Prepares `y` (tests of other multipliers build operands with it).
    #[cfg(test)]
    pub(crate) fn from_u64(y: u64) -> Half {
        Half::new(y)
    }

    fn new(y: u64) -> Half {
        let yh = y & !0xf;
        Half {
            c: [yh & M0, yh & M1, yh & M2, yh & M3],
            nib: core::array::from_fn(|i| 0u64.wrapping_sub((y >> i) & 1)),
        }
    }
}

#[inline(always)]
fn mul(a: u64, b: u64) -> u128 {
    (a as u128) * (b as u128)
}

/// A 64 x 64 -> 128-bit carry-less multiplier by a prepared key half: the portable one below,
/// or an instruction-set specific one (`ghash_soft_bmi2`). Everything else is shared.
pub(crate) trait Clmul64 {
    fn clmul64(x: u64, y: &Half) -> u128;
}

/// The portable multiplier (any 64-bit target with a 64 x 64 -> 128 integer multiply).
pub(crate) struct Portable;

impl Clmul64 for Portable {
    #[inline(always)]
    fn clmul64(x: u64, y: &Half) -> u128 {
        clmul64(x, y)
    }
}

/// The 128-bit carry-less product of `x` and the prepared key half `y`.
#[inline(always)]
fn clmul64(x: u64, y: &Half) -> u128 {
    let xs = [x & M0, x & M1, x & M2, x & M3];
    let [y0, y1, y2, y3] = y.c;
    let z0 = mul(xs[0], y0) ^ mul(xs[1], y3) ^ mul(xs[2], y2) ^ mul(xs[3], y1);
    let mut r = z0 & W0;
    let z1 = mul(xs[0], y1) ^ mul(xs[1], y0) ^ mul(xs[2], y3) ^ mul(xs[3], y2);
    r |= z1 & W1;
    let z2 = mul(xs[0], y2) ^ mul(xs[1], y1) ^ mul(xs[2], y0) ^ mul(xs[3], y3);
    r |= z2 & W2;
    let z3 = mul(xs[0], y3) ^ mul(xs[1], y2) ^ mul(xs[2], y1) ^ mul(xs[3], y0);
    r |= z3 & W3;
    // The key's low nibble: x * bit i of y, for i < 4 (shifts by constants, masks).
    let (mut lo, mut hi) = (r as u64, (r >> 64) as u64);
    lo ^= x & y.nib[0];
    lo ^= (x << 1) & y.nib[1];
    hi ^= (x >> 63) & y.nib[1];
    lo ^= (x << 2) & y.nib[2];
    hi ^= (x >> 62) & y.nib[2];
    lo ^= (x << 3) & y.nib[3];
    hi ^= (x >> 61) & y.nib[3];
    (hi as u128) << 64 | lo as u128
}

/// One key power, prepared for Karatsuba: low half, high half, and their XOR.
#[derive(Clone, Copy, Default)]
struct Power {
    lo: Half,
    hi: Half,
    mid: Half,
}

impl Zeroize for Power {
    fn zeroize(&mut self) {
        self.lo.zeroize();
        self.hi.zeroize();
        self.mid.zeroize();
    }
}

impl Power {
    fn new(h: u128) -> Power {
        let (lo, hi) = (h as u64, (h >> 64) as u64);
        Power {
            lo: Half::new(lo),
            hi: Half::new(hi),
            mid: Half::new(lo ^ hi),
        }
    }
}

/// The unreduced Karatsuba partial products of a sum of block x power products.
#[derive(Clone, Copy, Default)]
struct Acc {
    lo: u128,
    mid: u128,
    hi: u128,
}

impl Acc {
    #[inline(always)]
    fn add<C: Clmul64>(&mut self, x: u128, p: &Power) {
        let (xl, xh) = (x as u64, (x >> 64) as u64);
        self.lo ^= C::clmul64(xl, &p.lo);
        self.hi ^= C::clmul64(xh, &p.hi);
        self.mid ^= C::clmul64(xl ^ xh, &p.mid);
    }

    /// Karatsuba fix-up and Montgomery reduction: the sum times x^-128 mod P.
    #[inline(always)]
    fn reduce(self) -> u128 {
        let mid = self.mid ^ self.lo ^ self.hi;
        let c0 = self.lo as u64;
        let c1 = (self.lo >> 64) as u64 ^ mid as u64;
        let c2 = self.hi as u64 ^ (mid >> 64) as u64;
        let c3 = (self.hi >> 64) as u64;
        reduce4(c0, c1, c2, c3)
    }
}

/// `[c0, c1, c2, c3] * x^-128 mod P` (c0 least significant): two folds by
/// x^-64 using `P = 1 + x^64 (x^63 + x^62 + x^57) + x^128`.
#[inline(always)]
pub(crate) fn reduce4(c0: u64, c1: u64, c2: u64, c3: u64) -> u128 {
    let c1 = c1 ^ (c0 << 63) ^ (c0 << 62) ^ (c0 << 57);
    let c2 = c2 ^ c0 ^ (c0 >> 1) ^ (c0 >> 2) ^ (c0 >> 7);
    let c2 = c2 ^ (c1 << 63) ^ (c1 << 62) ^ (c1 << 57);
    let c3 = c3 ^ c1 ^ (c1 >> 1) ^ (c1 >> 2) ^ (c1 >> 7);
    (c3 as u128) << 64 | c2 as u128
}

/// `a * x mod P` (POLYVAL's mulX), branch-free.
pub(crate) fn mul_x(a: u128) -> u128 {
    let carry = 0u128.wrapping_sub(a >> 127);
    (a << 1) ^ (carry & 0xc200_0000_0000_0000_0000_0000_0000_0001)
}

/// POLYVAL's `dot(a, b) = a b x^-128 mod P`.
pub(crate) fn dot(a: u128, b: u128) -> u128 {
    let mut acc = Acc::default();
    acc.add::<Portable>(a, &Power::new(b));
    acc.reduce()
}

/// The GHASH key: `H^1 .. H^BATCH` (with the Montgomery factor), prepared for the multiply.
/// Zeroized on drop.
#[derive(Clone, Default)]
pub(crate) struct Key {
    /// `pow[i]` = H^(i+1).
    pow: [Power; BATCH],
}

impl Drop for Key {
    fn drop(&mut self) {
        self.pow.iter_mut().for_each(Zeroize::zeroize);
    }
}

impl Key {
    /// From the GCM hash subkey `H = E_K(0^128)` as bytes.
    #[cfg(test)]
    pub(crate) fn new(h: &[u8; 16]) -> Key {
        let mut k = Key::default();
        k.fill(h);
        k
    }

    /// Computes the powers of `h` into this key, in place (no copy of the key to move).
    pub(crate) fn fill(&mut self, h: &[u8; 16]) {
        let mut h1 = mul_x(u128::from_be_bytes(*h));
        let mut p = h1;
        for i in 0..BATCH {
            self.pow[i] = Power::new(p);
            p = dot(p, h1);
        }
        p.zeroize();
        h1.zeroize();
    }
}

#[inline(always)]
fn block(b: &[u8]) -> u128 {
    u128::from_be_bytes(b.try_into().unwrap())
}

/// `acc <- GHASH update over data` (whole blocks); `acc` is the POLYVAL-domain state
/// (`u128::from_be_bytes` of GCM's S).
pub(crate) fn ghash(k: &Key, acc: &mut u128, data: &[u8]) {
    #[cfg(target_arch = "x86_64")]
    if super::ghash_soft_bmi2::available() {
        return super::ghash_soft_bmi2::ghash(k, acc, data);
    }
    ghash_impl::<Portable>(k, acc, data)
}

/// The body of [`ghash`] with multiplier `C`, inlined into each build of it.
#[inline(always)]
pub(crate) fn ghash_impl<C: Clmul64>(k: &Key, acc: &mut u128, data: &[u8]) {
    debug_assert!(data.len().is_multiple_of(16));
    let mut s = *acc;
    let mut chunks = data.chunks_exact(16 * BATCH);
    for c in &mut chunks {
        // IMPLEMENTATION NOTE: an opaque key reference per batch keeps LLVM from hoisting all
        // key words out of the loop into registers it does not have (it spilled copies of the
        // key to the stack); the key is read as memory operands of `mul` instead.
        let k = core::hint::black_box(k);
        let mut a = Acc::default();
        a.add::<C>(s ^ block(&c[..16]), &k.pow[BATCH - 1]);
        for j in 1..BATCH {
            a.add::<C>(block(&c[16 * j..16 * j + 16]), &k.pow[BATCH - 1 - j]);
        }
        s = a.reduce();
    }
    let rest = chunks.remainder();
    let n = rest.len() / 16;
    if n > 0 {
        let mut a = Acc::default();
        a.add::<C>(s ^ block(&rest[..16]), &k.pow[n - 1]);
        for j in 1..n {
            a.add::<C>(block(&rest[16 * j..16 * j + 16]), &k.pow[n - 1 - j]);
        }
        s = a.reduce();
    }
    *acc = s;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bit-by-bit carry-less multiply (reference; test only).
    fn clmul_ref(a: u64, b: u64) -> u128 {
        let mut r = 0u128;
        for i in 0..64 {
            if (b >> i) & 1 == 1 {
                r ^= (a as u128) << i;
            }
        }
        r
    }

    #[test]
    pub(crate) fn clmul64_matches_reference_on_dense_and_sparse_operands() {
        let mut x = 0x0123_4567_89ab_cdefu64;
        let special = [0u64, 1, 0xf, 0x10, u64::MAX, M0, M1, M2, M3, u64::MAX << 4];
        for &a in &special {
            for &b in &special {
                assert_eq!(clmul64(a, &Half::new(b)), clmul_ref(a, b), "{a:x} {b:x}");
            }
        }
        for _ in 0..10000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let y = x.rotate_left(29) ^ 0x5555;
            assert_eq!(clmul64(x, &Half::new(y)), clmul_ref(x, y));
        }
    }

    #[test]
    fn ghash_matches_sp800_38d_test_case_2() {
        // McGrew-Viega test case 2: K = 0, P = 0^128, IV = 0^96:
        // H = 66e94bd4ef8a2c3b884cfa59ca342b2e, C = 0388dace60b6a392f328c2b971b2fe78,
        // GHASH(H, {}, C) = f38cbb1ad69223dcc3457ae5b6b0f885.
        let h: [u8; 16] = hex("66e94bd4ef8a2c3b884cfa59ca342b2e");
        let c: [u8; 16] = hex("0388dace60b6a392f328c2b971b2fe78");
        let mut len = [0u8; 16];
        len[15] = 0x80; // 128 bits of ciphertext, no AAD
        let k = Key::new(&h);
        let mut s = 0u128;
        ghash(&k, &mut s, &c);
        ghash(&k, &mut s, &len);
        assert_eq!(
            s.to_be_bytes(),
            hex::<16>("f38cbb1ad69223dcc3457ae5b6b0f885")
        );
    }

    /// Batched GHASH (both builds: plain and, where the CPU has it, BMI2) equals one
    /// `dot` per block, for every block count across two batches.
    #[test]
    fn batched_ghash_matches_block_by_block() {
        let h: [u8; 16] = hex("66e94bd4ef8a2c3b884cfa59ca342b2e");
        let k = Key::new(&h);
        let h1 = mul_x(u128::from_be_bytes(h));
        let data: alloc::vec::Vec<u8> = (0..16 * 11).map(|i| (i * 73 + 11) as u8).collect();
        for n in 0..=11 {
            let d = &data[..16 * n];
            let mut want = 0x0123_4567_89ab_cdef_u128;
            for b in d.chunks(16) {
                want = dot(want ^ block(b), h1);
            }
            let (mut a, mut b) = (0x0123_4567_89ab_cdef_u128, 0x0123_4567_89ab_cdef_u128);
            ghash_impl::<Portable>(&k, &mut a, d);
            ghash(&k, &mut b, d);
            assert_eq!(a, want, "plain, {n} blocks");
            assert_eq!(b, want, "dispatched, {n} blocks");
        }
    }

    fn hex<const N: usize>(s: &str) -> [u8; N] {
        core::array::from_fn(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap())
    }
}
