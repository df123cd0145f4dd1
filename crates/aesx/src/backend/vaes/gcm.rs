//! The fused VAES + VPCLMULQDQ GCM kernel, written once over [`Vector`] and instantiated for
//! ymm (`vaes256`) and zmm (`vaes512`, since session 9: tested and measured on an Intel
//! AVX-512 guest).
//!
//! Design (after the Linux kernel's `aes-gcm-vaes-avx2.S` / `aes-gcm-avx10-x86_64.S` and
//! BoringSSL's VAES GCM, as summarised in /work/shared/specs/gcm.md; the code is written here):
//!
//! - 16 blocks per iteration (32 for zmm on AMD, [`nb`]): 8 ymm or 4 zmm registers of counter
//!   blocks in flight (Zen 3 issues two ymm VAESENC a cycle with latency 4, so 8 registers keep
//!   both units busy), and the GHASH of 16 blocks, one vector step (3 VPCLMULQDQ, Karatsuba) after
//!   each of the last AES rounds (the extra AES-192/256 rounds run first, without GHASH).
//!   Products are summed unreduced lane-wise against the key powers H^16..H^1, the lanes are
//!   XORed together, and one reduction (2 PCLMULQDQ) is paid per 16 blocks. On Zen 3
//!   VPCLMULQDQ (one ymm per 2 cycles) is the binding unit: 16 blocks cost 24 + 2 multiplies,
//!   3.25 multiplies a block (an 8-block batch would cost 3.5).
//! - Width and vendor (zmm, the const parameter `SB`): the two AVX-512 cores measured here
//!   want different GHASH code, so the zmm kernel is instantiated twice and picked by vendor.
//!   - Intel (`SB`): the 512-bit vector work issues on two ports only, one of them VAES's,
//!     while the zmm multiplier (4 products a cycle, `aes-limit`) has room: so zmm multiplies
//!     by schoolbook (4 VPCLMULQDQ, the middle terms summed by one VPTERNLOGQ; no halves-XOR,
//!     shuffle or Karatsuba fix-up), reduces the three sums at full width and folds the four
//!     lanes of the result once (not of each sum), and spreads its four GHASH steps over the
//!     AES rounds ([`hash_slot`]) instead of bunching them at the end. Measured on an Intel
//!     AVX-512 guest (16 KiB seal, best of alternated runs): Karatsuba with the GHASH at the
//!     end 17.9 / 13.1 GB/s (AES-128 / -256), schoolbook 19.1 / 14.2, spread 19.1 / 15.2. (The
//!     Linux kernel's zmm code also multiplies by schoolbook, for the same reason.)
//!   - AMD Zen 4 (not `SB`): VAESENC and VPCLMULQDQ share two pipes, and in a loop of both
//!     each zmm VPCLMULQDQ takes the place of one zmm VAESENC (`scripts/avx512-mix.c`: 10
//!     VAESENC + 4 VPCLMULQDQ zmm run in 14 cycles, 10 alone in 10), while XOR, VPTERNLOGQ,
//!     VPSHUFD and VPADDD ride free on the other two; so every multiply saved is a cycle:
//!     Karatsuba (3 multiplies a register, the halves-XOR and fix-up on the free pipes), the
//!     reduction at full width as above, and encryption hashes the previous batch from the
//!     registers the AES rounds left it in rather than loading it back. 16 KiB seal on the
//!     Zen 4 guest, alternated runs, AES-128 / -256: the Intel tuning 10.8 / 9.2 GB/s,
//!     ciphertext in registers 11.5 / 9.8, Karatsuba with the GHASH after the last rounds
//!     12.2 / 10.7, after rounds 3-6 12.7 / 10.8 (open 11.9 / 10.3 -> 12.2 / 10.6). Since
//!     session 16 the batch is 32 blocks (8 registers, [`nb`]) and its loop is assembly
//!     ([`super::gcm_zmm`]): 16 KiB 12.8 -> 13.1 / 10.6 -> 11.1, 1 MiB +3.5%.
//! - The GHASH state is XORed into block 0 only (lane 0 of the first vector).
//! - Counters (inc32): the counter block is byte-reversed once, so its inc32 word is the low
//!   32-bit word of each 128-bit lane; VPADDD adds the block index (wrapping mod 2^32: exactly
//!   inc32, branch-free, so a secret counter is fine), VPSHUFB turns each back into a counter
//!   block.
//!   With a 12-byte nonce (the inc32 word then counts blocks from 2: public), batches that do
//!   not carry out of the counter's last byte skip most of those VPSHUFBs (session 20, Intel
//!   guest): the ymm loop ([`super::gcm_ymm`], 1.02-1.10x) and, on zmm, Intel's decryption
//!   of AES-128 and -192 ([`batches`], 1.02-1.09x and 0.99-1.07x; seal and AES-256 measured no
//!   gain and keep one path). The AMD zmm loops keep the swaps: they are tuned on a Zen 4 this session did
//!   not have.
//! - The data XOR is folded into the last round: `aesenclast(x, k ^ d) = aesenclast(x, k) ^ d`.
//! - Tails (1..15 blocks): the fewest registers that cover them, the last one partial
//!   ([`Vector::load_part`]), each block multiplied by its own power (`H^m..H^1`, the table
//!   ends in zero padding so a partial vector reads key memory that exists), one reduction.
//! - On ymm the fused iterations are one inline-assembly loop ([`super::gcm_ymm`]): with
//!   intrinsics LLVM spilled accumulators, AES states and power pointers (16 registers for 8
//!   states, 3 accumulators, counters, key and mask).
//! - Key material: round keys and powers are loaded at their point of use (forced loads on
//!   ymm), so no copy of them is kept on the stack; the powers live in [`Key`], zeroized on
//!   drop, and the dispatcher wipes the stack below the kernel's frame afterwards.
//!
//! Constant time: VAES, VPCLMULQDQ and the vector logic run in data-independent time; loop
//! bounds, branches and masks depend only on lengths and the round count.

use core::arch::x86_64::*;

use super::{Vector, by_count, load_at, load_ptr, store_ptr};
use crate::backend::aesni::Keys;
use crate::backend::clmul::{self, Prod};
use crate::backend::ghash_soft::mul_x;
use crate::backend::inc32_word;

/// Key powers kept: the most blocks of any batch (zmm on AMD, [`nb`]).
pub(crate) const BATCH: usize = 32;
/// Registers per iteration, at most (8 ymm, or 8 zmm on AMD).
const MAXV: usize = 8;
/// Registers of a batch's output that [`batch`] returns (all of a zmm batch on AMD, which seal
/// hashes from them next).
const ZV: usize = 8;

/// Blocks per iteration: 32 (8 registers) at zmm width on AMD with `W` (messages of
/// [`WIDE_MIN`] bytes or more), 16 otherwise (8 ymm registers, or 4 zmm).
///
/// Zen 4 (session 16): with 4 zmm registers of counter blocks in flight, a batch ran about 73
/// cycles where its 40 VAESENC and 14 VPCLMULQDQ take 54 slots of the two pipes they share: 4
/// chains of dependent rounds leave the scheduler nothing to put in a slot a multiply delays.
/// 8 registers (32 blocks, 26 multiplies with one reduction) give it twice the independent
/// work. A C model of the loop (`scripts/gcm-batch-mix.c`) runs 8 registers 1.12-1.20x faster
/// than 4; the kernel gained 2.5-7% (the README's session 16).
#[inline(always)]
const fn nb<V: Vector, const SB: bool, const W: bool>() -> usize {
    if V::BYTES == 64 && !SB && W { 32 } else { 16 }
}

/// Zero blocks after the powers, so a partial zmm register of powers stays inside the table.
const PAD: usize = 4;

/// GHASH key of the VAES kernel: `pow[j] = H^(BATCH - j)` (highest first, so block `b` of a
/// batch of `m` blocks uses `pow[BATCH - m + b]`, and a register of blocks loads its powers in
/// one access), `kara[j]` = the XOR of the two halves of `pow[j]` in both halves (Karatsuba's
/// middle operand), zero padding after both. POLYVAL form with the `x^128` factor, as in
/// [`clmul`]. `xmm` is the xmm kernel's key for the same H (short messages, short AAD).
/// `H^32..H^17` (the first 16 entries) are computed only for keys that the 32-block batches
/// may use (`wide`); otherwise those entries stay zero. Zeroized on drop.
#[repr(C, align(64))]
pub(crate) struct Key {
    pow: [[u8; 16]; BATCH + PAD],
    kara: [[u8; 16]; BATCH + PAD],
    pub(crate) xmm: clmul::Key,
    /// 1 if `pow` and `kara` hold `H^32..H^17` too ([`Key::wide`]). A `u8`, not a `bool`: with
    /// a `bool` (which gives `GhashKey` a niche for its tag) `AesGcm::new` + drop measured
    /// about 20 ns slower on Zen 4 for every key; with a `u8`, level with the build before.
    wide: u8,
}

impl Drop for Key {
    fn drop(&mut self) {
        for k in self.pow.iter_mut().chain(self.kara.iter_mut()) {
            // SAFETY: `k` is a valid, exclusively borrowed 16-byte array at a 16-byte aligned
            // offset of this `repr(C, align(64))` struct; the volatile store is in bounds.
            unsafe {
                core::ptr::write_volatile(
                    (k as *mut [u8; 16]).cast::<__m128i>(),
                    _mm_setzero_si128(),
                )
            };
        }
        core::sync::atomic::compiler_fence(core::sync::atomic::Ordering::SeqCst);
        // `xmm` zeroizes itself (its own `Drop`).
    }
}

impl Key {
    /// The powers H^16..H^1 and their Karatsuba halves (16 entries of 16 bytes each, then the
    /// zero padding), for the ymm assembly loop's 16-block batches.
    pub(super) fn tables(&self) -> (*const u8, *const u8) {
        (
            self.pow[BATCH - 16..].as_ptr().cast(),
            self.kara[BATCH - 16..].as_ptr().cast(),
        )
    }

    /// The powers H^32..H^1 and their Karatsuba halves (32 entries, then the zero padding),
    /// for the zmm assembly loop's 32-block batches: a [`Key::wide`] key only.
    pub(super) fn tables32(&self) -> (*const u8, *const u8) {
        debug_assert!(self.wide());
        (self.pow.as_ptr().cast(), self.kara.as_ptr().cast())
    }

    /// Whether the key holds `H^32..H^17` too, for the 32-block batches ([`nb`]).
    #[inline]
    pub(crate) fn wide(&self) -> bool {
        self.wide != 0
    }

    /// The powers computed, as stored (tests: no register may keep one).
    #[cfg(test)]
    pub(crate) fn powers(&self) -> &[[u8; 16]] {
        if self.wide() {
            &self.pow[..BATCH]
        } else {
            &self.pow[BATCH - 16..BATCH]
        }
    }

    /// An all-zero key, for [`Key::fill`].
    pub(crate) const ZERO: Key = Key {
        pow: [[0; 16]; BATCH + PAD],
        kara: [[0; 16]; BATCH + PAD],
        xmm: clmul::Key::ZERO,
        wide: 0,
    };

    /// Computes the powers of `h` into this key, in place: `H^16..H^1`, and `H^32..H^17` as
    /// well if `wide` (a key for the AMD `vaes512` kernel, the only one that reads them).
    pub(crate) fn fill(&mut self, h: &[u8; 16], wide: bool) {
        self.xmm.fill(h);
        self.wide = wide.into();
        // SAFETY: a `Key` is built only where PCLMULQDQ, SSE4.2, AVX2 and VPCLMULQDQ are present
        // (`GhashKey::empty` checks `clmul::available()`, VPCLMULQDQ and a VAES backend).
        unsafe { powers(h, self, wide) };
    }
}

/// Fills `k` with `H^1..H^16`, and `H^17..H^32` if `wide`: the first 16 by xmm products at
/// depth 4, the other 16 as `H^16` times each of them, two to a ymm register (8 independent
/// products, not a chain).
///
/// IMPLEMENTATION NOTE (session 16): computed like the first 16, one xmm product each, the 16
/// powers the 32-block zmm loop added made `AesGcm::new` + drop about 100 ns slower on Zen 4
/// (235-247 -> 338-350 ns); two to a register, 294-302 (the rest is storing and, at drop,
/// zeroing 32 more entries of 16 bytes). Session 17: only keys that the AMD zmm loop may use
/// get them (`wide`); on `vaes256` and on Intel's `vaes512` the key costs what it did before.
#[target_feature(enable = "avx2,vpclmulqdq,pclmulqdq,sse4.2")]
fn powers(h: &[u8; 16], k: &mut Key, wide: bool) {
    const LOW: usize = 16;
    let mut p = [_mm_setzero_si128(); BATCH];
    p[0] = clmul::u128_to_m(mul_x(u128::from_be_bytes(*h)));
    // H^(i+1) = H^a * H^(i+1-a) with a = ceil((i+1)/2): depth 4, not 15.
    for i in 1..LOW {
        let a = (i + 1).div_ceil(2);
        p[i] = clmul::dot(p[a - 1], p[i - a]);
    }
    if wide {
        wide_powers(&mut p);
    }
    // All 32 either way (zeros past the first 16 if not `wide`): a loop of constant length.
    for (i, &v) in p.iter().enumerate() {
        clmul::st(&mut k.pow[BATCH - 1 - i], v);
        let q = _mm_xor_si128(v, _mm_shuffle_epi32::<0x4e>(v));
        clmul::st(&mut k.kara[BATCH - 1 - i], q);
    }
    for v in p.iter_mut() {
        // SAFETY: `v` is a valid, aligned, exclusively borrowed `__m128i`.
        unsafe { core::ptr::write_volatile(v, _mm_setzero_si128()) };
    }
}

/// `p[16 + i] = H^16 * p[i]` for `i < 16` (`p[i] = H^(i+1)`), two products to a ymm register:
/// lane-wise schoolbook products, then the reduction of `reduce` for each lane (no fold).
#[inline]
#[target_feature(enable = "avx2,vpclmulqdq,pclmulqdq,sse4.2")]
fn wide_powers(p: &mut [__m128i; BATCH]) {
    const LOW: usize = 16;
    // SAFETY: AVX2 and VPCLMULQDQ (this function's features) run `__m256i`.
    unsafe {
        let b = <__m256i as Vector>::splat(p[LOW - 1]);
        let r = <__m256i as Vector>::splat_qwords(&[0xc200_0000_0000_0000, 0]);
        for j in 0..LOW / 2 {
            let a = _mm256_set_m128i(p[2 * j + 1], p[2 * j]);
            let lo = <__m256i as Vector>::clmul::<0x00>(a, b);
            let hi = <__m256i as Vector>::clmul::<0x11>(a, b);
            let mi = _mm256_xor_si256(
                <__m256i as Vector>::clmul::<0x01>(a, b),
                <__m256i as Vector>::clmul::<0x10>(a, b),
            );
            let t = <__m256i as Vector>::clmul::<0x00>(lo, r);
            let mi = <__m256i as Vector>::xor3(mi, t, <__m256i as Vector>::swap_halves(lo));
            let t = <__m256i as Vector>::clmul::<0x00>(mi, r);
            let v = <__m256i as Vector>::xor3(hi, t, <__m256i as Vector>::swap_halves(mi));
            p[LOW + 2 * j] = _mm256_castsi256_si128(v);
            p[LOW + 2 * j + 1] = _mm256_extracti128_si256::<1>(v);
        }
    }
}

/// Unreduced Karatsuba partial products, lane-wise: LO, MI (before the fix-up), HI.
#[derive(Clone, Copy)]
struct Acc<V> {
    lo: V,
    mi: V,
    hi: V,
}

#[inline(always)]
unsafe fn acc_zero<V: Vector>() -> Acc<V> {
    // SAFETY: the caller's CPU runs `V`.
    unsafe {
        Acc {
            lo: V::zero(),
            mi: V::zero(),
            hi: V::zero(),
        }
    }
}

/// `a += y * (pow[j], pow[j+1], ...)` lane-wise; `y` is byte-reflected data.
#[inline(always)]
unsafe fn mul_acc<V: Vector, const SB: bool>(a: &mut Acc<V>, k: &Key, j: usize, y: V) {
    debug_assert!(j + V::BLOCKS <= BATCH + PAD);
    // SAFETY: the caller's CPU runs `V` with VPCLMULQDQ; `V::BYTES` bytes from entry `j` lie
    // inside `pow`/`kara` (`j + BLOCKS <= BATCH + PAD`), pointers derived from the whole arrays.
    unsafe {
        let p = V::load_key(k.pow.as_ptr().cast::<u8>().add(16 * j));
        a.lo = V::xor(a.lo, V::clmul::<0x00>(y, p));
        a.hi = V::xor(a.hi, V::clmul::<0x11>(y, p));
        if SB {
            // MI is the whole middle term here: no fix-up in `reduce`.
            a.mi = V::xor3(a.mi, V::clmul::<0x01>(y, p), V::clmul::<0x10>(y, p));
            return;
        }
        let q = V::load_key(k.kara.as_ptr().cast::<u8>().add(16 * j));
        let ym = V::xor(y, V::swap_halves(y));
        a.mi = V::xor(a.mi, V::clmul::<0x00>(ym, q));
    }
}

/// Hashes one register of raw (GCM-order) blocks `d` against the powers from entry `j`; with
/// `s`, the running state is XORed into its block 0 first.
#[inline(always)]
unsafe fn hash_vec<V: Vector, const SB: bool>(
    a: &mut Acc<V>,
    k: &Key,
    j: usize,
    d: V,
    bs: V,
    s: Option<__m128i>,
) {
    // SAFETY: forwarded from the caller.
    unsafe {
        let mut y = V::shuffle_bytes(d, bs);
        if let Some(s) = s {
            y = V::xor(y, V::zext128(s));
        }
        mul_acc::<V, SB>(a, k, j, y);
    }
}

/// Karatsuba fix-up (unless `SB`: schoolbook has none), one reduction and the lanes XORed
/// together: the new GHASH state. On zmm every lane is reduced at full width first and only
/// the result is folded (the reduction is linear, so this is the same value, and one fold costs
/// a third of three); on ymm the three sums are folded first, then reduced at xmm width.
#[inline(always)]
unsafe fn reduce<V: Vector, const SB: bool>(a: Acc<V>) -> __m128i {
    // SAFETY: the caller's CPU runs `V` and PCLMULQDQ.
    unsafe {
        if SB || V::BYTES == 64 {
            // `clmul::reduce3` lane-wise.
            let p = V::splat_qwords(&[0xc200_0000_0000_0000, 0]);
            let t = V::clmul::<0x00>(a.lo, p);
            let ami = if SB { a.mi } else { V::xor3(a.mi, a.lo, a.hi) };
            let mi = V::xor3(ami, t, V::swap_halves(a.lo));
            let t = V::clmul::<0x00>(mi, p);
            return V::fold128(V::xor3(a.hi, t, V::swap_halves(mi)));
        }
        Prod {
            lo: V::fold128(a.lo),
            mi: V::fold128(a.mi),
            hi: V::fold128(a.hi),
        }
        .reduce()
    }
}

/// `n` added to the inc32 word (low dword) of every block.
#[inline(always)]
unsafe fn step<V: Vector>(n: usize) -> V {
    // SAFETY: the caller's CPU runs `V`.
    unsafe { V::splat(_mm_cvtsi32_si128(n as i32)) }
}

/// Lane offsets 0, 1, 2, 3 in the low dword of each block.
static LANES: [u32; 16] = [0, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0];

/// Counter block `b` of the register (`i` of a batch): `c` holds the byte-reversed counters of
/// register 0, block `b` at `+b`.
#[inline(always)]
unsafe fn ctr_vec<V: Vector>(c: V, i: usize, bs: V) -> V {
    // SAFETY: the caller's CPU runs `V`.
    unsafe { V::shuffle_bytes(V::add32(c, step::<V>(V::BLOCKS * i)), bs) }
}

/// Which register of the batch (if any) is hashed after AES round `r` of `nr`: one after each
/// of the last `nv` middle rounds; with `SB` (zmm on Intel, 4 registers) spread over
/// the rounds instead, registers 1, 2, 3 early and register 0 (which takes the previous
/// batch's state) after the last middle round, so the multiplies and XORs on the two vector
/// ports Intel has for 512-bit work are spread between the AES rounds rather than bunched at
/// the end; at zmm width without `SB` (AMD, 16-block batches: messages under [`WIDE_MIN`])
/// one after each of rounds 3 to 6, so that the reduction is done well before the batch's
/// last rounds. (The ymm loop and the 32-block zmm loop on AMD are assembly.)
#[inline(always)]
const fn hash_slot<const SB: bool>(r: usize, nv: usize, nr: usize) -> Option<usize> {
    if SB && nv > 1 {
        let mut k = 0;
        while k < nv {
            if r == 1 + k * (nr - 2) / (nv - 1) {
                return Some((k + 1) % nv);
            }
            k += 1;
        }
        None
    } else if nv == 4 {
        // zmm on AMD, 16-block batches: after rounds 3 to 6 (session 11, Zen 4, 16 KiB AES-128
        // seal: 12.2 GB/s after the last four rounds, 12.7-12.8 after rounds 2-5 to 5-8, 12.3
        // after 7-9 and the last; AES-256 level at every placement; open +1%).
        if r >= 3 && r < 3 + nv {
            Some(r - 3)
        } else {
            None
        }
    } else if r + nv >= nr {
        Some(r + nv - nr)
    } else {
        None
    }
}

/// How a batch builds its counter blocks (`batch`'s `CTR`): per register, an addition to the
/// byte-reversed counters and a byte swap; from one byte swap and an addition to the last byte
/// (no block of the batch carries out of it); or from one byte swap and XORs (the batch's
/// first counter is a multiple of 16).
const GENERAL: u8 = 0;
const NO_CARRY: u8 = 1;
const ALIGNED: u8 = 2;

/// One full batch of 16 blocks: `out = inp ^ keystream(c)` (`inp` is `out`, or a batch that
/// does not overlap it), with (if `HASH`) the GHASH of the 16 blocks of `hash` interleaved
/// into the AES rounds; returns the new state and the output registers (the first `ZV`: all
/// of a zmm batch, which encryption on AMD hashes next). `hash` may be `Src::Mem(inp)`
/// (decryption): every load of it precedes the stores.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
unsafe fn batch<
    V: Vector,
    const NR: usize,
    const HASH: bool,
    const SB: bool,
    const W: bool,
    const CTR: u8,
>(
    rk: &Keys,
    k: &Key,
    c: V,
    s: __m128i,
    hash: Src<V>,
    inp: *const u8,
    out: *mut u8,
    bs: V,
) -> (__m128i, [V; ZV]) {
    let nv = nb::<V, SB, W>() / V::BLOCKS;
    let j0 = BATCH - nb::<V, SB, W>();
    // SAFETY: the caller's CPU runs `V`, VAES and VPCLMULQDQ; `hash`, `inp` and `out` point
    // to `nb::<V, SB, W>()` whole blocks each (the caller's batch).
    unsafe {
        let k0 = V::round_key(&rk.enc[0]);
        let mut x = [V::zero(); MAXV];
        if CTR == ALIGNED {
            // The batch's first counter is a multiple of 16 (see [`aligned_head`]), so block
            // `j`'s counter is the first one with `j` in its last byte: register 0's counters
            // byte-swapped once, round key 0 added, and each further register one XOR away.
            debug_assert!(aligns::<V, SB, W>());
            let w = V::xor(V::shuffle_bytes(c, bs), k0);
            x[0] = w;
            // IMPLEMENTATION NOTE (session 25): written as `x.iter_mut().enumerate().take(nv)
            // .skip(1)`, LLVM left `Skip`'s call to `Take::nth` out of line in the seal's first
            // batch and spilled round key 0 and the counters around it into a frame 1080 B deep,
            // below the 768 B GCM stack wipe (`stack_depth` did not reach this path, which runs
            // from 4336 bytes; it does now).
            for (v, i) in x[1..nv].iter_mut().zip(1usize..) {
                let off = V::splat(_mm_set_epi32(((V::BLOCKS * i) as i32) << 24, 0, 0, 0));
                *v = V::xor(w, off);
            }
        } else if CTR == NO_CARRY {
            // No block of the batch carries out of the counter's last byte (see `batches`):
            // one byte swap, and each register's offset added to that byte.
            let be = V::shuffle_bytes(c, bs);
            for (i, v) in x[..nv].iter_mut().enumerate() {
                let off = V::splat(_mm_set_epi32(((V::BLOCKS * i) as i32) << 24, 0, 0, 0));
                *v = V::xor(V::add32(be, off), k0);
            }
        } else {
            for i in 0..nv {
                x[i] = V::xor(ctr_vec(c, i, bs), k0);
            }
        }
        let mut a = acc_zero::<V>();
        // Middle round `r`, with its GHASH step if `hash_slot` gives it one.
        macro_rules! round {
            ($r:expr) => {
                let kr = V::round_key(&rk.enc[$r]);
                for v in &mut x[..nv] {
                    *v = V::aesenc(*v, kr);
                }
                if HASH && let Some(i) = hash_slot::<SB>($r, nv, NR) {
                    let d = hash.reg(i);
                    hash_vec::<V, SB>(&mut a, k, j0 + V::BLOCKS * i, d, bs, (i == 0).then_some(s));
                }
                // Decryption on AMD zmm: an empty `asm!` after each round keeps the rounds and
                // GHASH steps in the order written. IMPLEMENTATION NOTE (issue 11): without it
                // LLVM's scheduler hoisted every GHASH step's byte shuffles and multiplies to
                // the top of the batch, ahead of all AES rounds. Zen 4, `gcm_speed`, 16 KiB,
                // six runs alternated, best: open AES-128 12.22 -> 12.71 GB/s, AES-256 10.54
                // -> 10.59. For encryption (GHASH from registers) the same barrier measured
                // 12.80 -> 12.63 / 10.76 -> 10.82, so encryption is left to the scheduler.
                if HASH && V::BYTES == 64 && !SB && matches!(hash, Src::Mem(_)) {
                    // SAFETY: an empty assembly statement: no instruction, register or memory.
                    core::arch::asm!("", options(nomem, nostack, preserves_flags));
                }
            };
        }
        // IMPLEMENTATION NOTE: as a loop, LLVM unrolled the 9 and 11 middle rounds of AES-128
        // and -192 but kept the 13 of AES-256 as a loop (a round counter, a key pointer and
        // branches to the hash steps every round): zmm AES-256 seal and open ran 71 cycles a
        // batch where their 56 VAESENC need 56 (Intel AVX-512 guest). AES-256 is unrolled
        // here by hand (16 KiB: seal +4-7%, open +8-16%); the other two keep the loop, whose
        // code LLVM already unrolls (unrolled by hand too, their loop had the same
        // instructions in another order and measured 0.97-1.0x).
        if NR == 14 {
            round!(1);
            round!(2);
            round!(3);
            round!(4);
            round!(5);
            round!(6);
            round!(7);
            round!(8);
            round!(9);
            round!(10);
            round!(11);
            round!(12);
            round!(13);
        } else {
            for r in 1..NR {
                round!(r);
            }
        }
        let s = if HASH { reduce::<V, SB>(a) } else { s };
        for i in 0..nv {
            let d = V::xor(V::round_key(&rk.enc[NR]), V::load(inp.add(V::BYTES * i)));
            x[i] = V::aesenclast(x[i], d);
            V::store(out.add(V::BYTES * i), x[i]);
        }
        (s, x)
    }
}

/// Where a batch's GHASH input comes from: memory (decryption: its own input; ymm/xmm
/// encryption: the previous batch's output, read back) or registers (zmm encryption: the
/// previous batch's output as it was computed).
#[derive(Clone, Copy)]
enum Src<V> {
    Mem(*const u8),
    Regs([V; ZV]),
}

impl<V: Vector> Src<V> {
    /// Register `i` of the batch.
    ///
    /// # Safety
    /// The CPU runs `V`; `Src::Mem` points to at least `i + 1` whole registers.
    #[inline(always)]
    unsafe fn reg(self, i: usize) -> V {
        match self {
            // SAFETY: the caller's guarantee.
            Src::Mem(p) => unsafe { V::load(p.add(V::BYTES * i)) },
            Src::Regs(r) => r[i],
        }
    }
}

/// `n` (>= 1) full batches with GHASH: batch `i` from `inp + 256 i` into `out + 256 i` is
/// encrypted while the 16 blocks at `hash + 256 i` are hashed (see [`batch`]): `SEAL`, the
/// ciphertext one batch behind `out`; else the input, `inp`. On ymm the hand-allocated assembly loop
/// ([`super::gcm_ymm`]); other widths loop over [`batch`]. `lo`: the first counter's inc32
/// word when it is public (a 12-byte nonce), which the ymm loop and Intel's zmm decryption
/// branch on, and from which Intel's zmm encryption knows that its counters are aligned;
/// `None` where it may be secret. Returns the next counters and state.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
unsafe fn batches<V: Vector, const NR: usize, const SB: bool, const W: bool, const SEAL: bool>(
    rk: &Keys,
    k: &Key,
    mut c: V,
    mut s: __m128i,
    hash: *const u8,
    (inp, out): (*const u8, *mut u8),
    n: usize,
    bs: V,
    lo: Option<u32>,
) -> (V, __m128i) {
    let w = 16 * nb::<V, SB, W>();
    // SAFETY: the caller's CPU runs `V`, VAES and VPCLMULQDQ; `hash`, `inp` and `out` cover
    // `n` batches, `hash` one batch behind `out` (seal) or equal to `inp` (open), `inp` equal
    // to `out` or not overlapping it. On the ymm branch `V` is `__m256i` (same size,
    // checked), so the transmutes are identities, and a 16-block batch is 8 registers (`nb`
    // is 16).
    unsafe {
        if V::BYTES == 32 && nb::<V, SB, W>() == 16 {
            let c256: __m256i = core::mem::transmute_copy(&c);
            let io = (inp, out);
            let (c256, s) = super::gcm_ymm::batches(rk, NR, k, c256, s, hash, io, n, lo);
            return (core::mem::transmute_copy(&c256), s);
        }
        if V::BYTES == 64 && nb::<V, SB, W>() == 32 {
            // Open only: seal calls `gcm_zmm::seal_batches` (ciphertext kept in registers).
            debug_assert_eq!(hash, inp);
            let c512: __m512i = core::mem::transmute_copy(&c);
            let (c512, s) = super::gcm_zmm::open_batches(rk, NR, k, c512, s, (inp, out), n);
            return (core::mem::transmute_copy(&c512), s);
        }
        let inc = step::<V>(nb::<V, SB, W>());
        // Intel's zmm seal with a public counter that [`aligned_head`] brought to a multiple
        // of 16: every batch starts at one, and builds its counters with XORs (see [`batch`]).
        // Decryption keeps the loop below, also where its counter happens to
        // start aligned: its code is then the same as before this path existed (see
        // `aligned_head` for what the path measured in `open`).
        // IMPLEMENTATION NOTE (session 25): seal and open are told apart by `SEAL`, a
        // constant. Told apart at run time (`hash != inp`; a buffer-to-buffer seal cannot fold
        // that), the seal kept the batch kind only open runs, and LLVM spilled 11-13 zmm
        // registers a batch in AES-192's loops.
        if SEAL && aligned::<V, SB, W>(lo) {
            for i in 0..n {
                let (h, o) = (Src::Mem(hash.add(w * i)), out.add(w * i));
                s = batch::<V, NR, true, SB, W, ALIGNED>(rk, k, c, s, h, inp.add(w * i), o, bs).0;
                c = V::add32(c, inc);
            }
        } else {
            // Decryption with a public counter: a batch that does not carry out of the
            // counter's last byte builds its counters from one byte swap: AES-128 and -192
            // only. IMPLEMENTATION NOTE (session 20, Intel guest, `aesx bench --backends
            // vaes512`, four sets of 8-10 alternated runs): open AES-128 1.02-1.09x, AES-192
            // 0.99-1.07x; AES-256 open 0.92-1.00x (the unrolled 13-round batch scheduled worse
            // with two instantiations), so it keeps one path.
            let fast_ok = SB && NR != 14 && !SEAL;
            let last = 0xff - (nb::<V, SB, W>() as u32 - 1);
            for i in 0..n {
                let h = Src::Mem(hash.add(w * i));
                let (d, o) = (inp.add(w * i), out.add(w * i));
                let at = (i * nb::<V, SB, W>()) as u32;
                s = if fast_ok && lo.is_some_and(|l| l.wrapping_add(at) & 0xff <= last) {
                    batch::<V, NR, true, SB, W, NO_CARRY>(rk, k, c, s, h, d, o, bs).0
                } else {
                    batch::<V, NR, true, SB, W, GENERAL>(rk, k, c, s, h, d, o, bs).0
                };
                c = V::add32(c, inc);
            }
        }
        (c, s)
    }
}

/// GHASH of one full batch of 16 blocks (no AES), from memory or registers.
#[inline(always)]
unsafe fn hash_batch<V: Vector, const SB: bool, const W: bool>(
    k: &Key,
    s: __m128i,
    data: Src<V>,
    bs: V,
) -> __m128i {
    // SAFETY: the caller's CPU runs `V` and VPCLMULQDQ; `Src::Mem` points to a whole batch.
    unsafe {
        let mut a = acc_zero::<V>();
        let j0 = BATCH - nb::<V, SB, W>();
        for i in 0..nb::<V, SB, W>() / V::BLOCKS {
            let d = data.reg(i);
            hash_vec::<V, SB>(&mut a, k, j0 + V::BLOCKS * i, d, bs, (i == 0).then_some(s));
        }
        reduce::<V, SB>(a)
    }
}

/// GHASH of `buf` (1..15 whole blocks) in `N` registers, the last possibly partial.
#[inline(always)]
unsafe fn hash_tail<V: Vector, const SB: bool, const W: bool, const N: usize>(
    k: &Key,
    s: __m128i,
    buf: &[u8],
    bs: V,
) -> __m128i {
    let m = buf.len() / 16;
    debug_assert!(m < nb::<V, SB, W>() && m.div_ceil(V::BLOCKS) == N);
    // SAFETY: the caller's CPU runs `V` and VPCLMULQDQ; loads stay in `buf` (`load_at`).
    unsafe {
        let mut a = acc_zero::<V>();
        for i in 0..N {
            let d = load_at::<V, true>(buf, i, N);
            hash_vec::<V, SB>(
                &mut a,
                k,
                BATCH - m + V::BLOCKS * i,
                d,
                bs,
                (i == 0).then_some(s),
            );
        }
        reduce::<V, SB>(a)
    }
}

/// The tail of a seal or open: 1..15 whole blocks in `N` registers, `len` bytes from `inp`
/// into `out` (the same bytes, or bytes that do not overlap them); one reduction.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
unsafe fn tail<V: Vector, const NR: usize, const SB: bool, const W: bool, const N: usize>(
    rk: &Keys,
    k: &Key,
    c: V,
    s: &mut __m128i,
    (inp, out, len): (*const u8, *mut u8, usize),
    seal: bool,
    bs: V,
) {
    // SAFETY: the caller's CPU runs `V`, VAES and VPCLMULQDQ; accesses stay in the `len`
    // bytes at `inp` and `out`; the shared slices made for hashing live only while nothing
    // writes their bytes (the input before the stores, the output after them).
    unsafe {
        if !seal {
            let data = core::slice::from_raw_parts(inp, len);
            *s = hash_tail::<V, SB, W, N>(k, *s, data, bs);
        }
        let k0 = V::round_key(&rk.enc[0]);
        let mut x = [V::zero(); N];
        for i in 0..N {
            x[i] = V::xor(ctr_vec(c, i, bs), k0);
        }
        for r in 1..NR {
            let kr = V::round_key(&rk.enc[r]);
            for v in x.iter_mut() {
                *v = V::aesenc(*v, kr);
            }
        }
        for i in 0..N {
            let d = V::xor(
                V::round_key(&rk.enc[NR]),
                load_ptr::<V, true>(inp, len, i, N),
            );
            store_ptr::<V, true>(out, len, i, N, V::aesenclast(x[i], d));
        }
        if seal {
            let data = core::slice::from_raw_parts(out.cast_const(), len);
            *s = hash_tail::<V, SB, W, N>(k, *s, data, bs);
        }
    }
}

/// Whether Intel's zmm batches may build their counters with XORs alone: the counter is
/// public (`lo`, its inc32 word: a 12-byte nonce) and a multiple of 16 (see [`aligned_head`]).
#[inline(always)]
fn aligned<V: Vector, const SB: bool, const W: bool>(lo: Option<u32>) -> bool {
    aligns::<V, SB, W>() && lo.is_some_and(|l| l % 16 == 0)
}

/// Whether this instantiation has the aligned path: Intel's zmm loop, 16 blocks a batch.
const fn aligns<V: Vector, const SB: bool, const W: bool>() -> bool {
    SB && V::BYTES == 64 && nb::<V, SB, W>() == 16
}

/// Messages of at least this many whole blocks after the head take [`aligned_head`].
const ALIGN_MIN_BLOCKS: usize = 256;

/// Intel's zmm seal with a public counter: seals the blocks before the first counter that is a
/// multiple of 16 (1..15 blocks, as a tail: not pipelined, one reduction), so that every
/// batch after them builds its counters without additions or per-register byte swaps (see
/// [`batch`]); advances `c`, `lo` and `s`, and returns the rest of `buf`. A secret counter
/// (other nonce lengths), another width or tuning, and messages under [`ALIGN_MIN_BLOCKS`]
/// (after the head) take no head. With a 12-byte nonce the data starts at counter 2: a head of
/// 14 blocks.
///
/// IMPLEMENTATION NOTE (session 21, Intel guest, family 6 model 167; `aesx bench --ops
/// gcm-enc,gcm-dec --sizes 1K,4K,8K,16K,64K --keys 128,192,256 --backends vaes512`, 8 runs
/// alternated with the build before): seal 16 KiB 1.07x / 1.05x / 1.04x (AES-128 / 192 / 256),
/// 64 KiB 1.10x / 1.08x / 1.06x, 1-8 KiB 1.00-1.05x. With the head from 64 blocks on, 2 KiB
/// seals ran 0.95-0.96x (the head costs about a batch, and the message ends in a short tail
/// instead of a whole batch), hence the threshold. Decryption was tried the same way and not
/// kept: 1.01-1.04x from 8 KiB, but AES-192 at 1-4 KiB 0.83-0.92x and AES-256 at 16-64 KiB
/// 0.93x (the extra loop changed how the rest of `open` was compiled; moved into a function
/// of its own, 0.92-0.95x at 1 KiB). Nor was a hand-written assembly version of the aligned
/// seal loop (GHASH woven one instruction after each VAESENC, or all before the rounds;
/// hashed from registers or memory): 0.87-0.94x of LLVM's code for this loop, which issues a
/// batch's GHASH work first (README, session 21).
/// Returns the bytes sealed (0 or the head's).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
unsafe fn aligned_head<V: Vector, const NR: usize, const SB: bool, const W: bool>(
    rk: &Keys,
    k: &Key,
    c: &mut V,
    lo: &mut Option<u32>,
    s: &mut __m128i,
    (inp, out, len): (*const u8, *mut u8, usize),
    bs: V,
) -> usize {
    let Some(l) = *lo else { return 0 };
    let h = (l.wrapping_neg() % 16) as usize;
    if !aligns::<V, SB, W>() || h == 0 || len / 16 < h + ALIGN_MIN_BLOCKS {
        return 0;
    }
    // SAFETY: the caller's CPU runs `V`, VAES and VPCLMULQDQ; the head, 1..15 whole blocks,
    // lies inside the caller's `len` bytes.
    unsafe {
        by_count!(
            h.div_ceil(V::BLOCKS),
            tail::<V, NR, SB, W>(rk, k, *c, s, (inp, out, 16 * h), true, bs)
        );
        *c = V::add32(*c, step::<V>(h));
    }
    *lo = Some(l.wrapping_add(h as u32));
    16 * h
}

/// The byte-reversal mask in every block, and register 0's byte-reversed counters.
#[inline(always)]
unsafe fn setup<V: Vector>(ctr: &[u8; 16]) -> (V, V) {
    // SAFETY: the caller's CPU runs `V` (hence SSSE3/SSE4.2); `LANES` holds 64 bytes, at
    // least `V::BYTES`.
    unsafe {
        let bs128 = clmul::bswap_mask();
        let c = _mm_shuffle_epi8(clmul::ld(ctr), bs128);
        let lanes = V::load(LANES.as_ptr().cast());
        (V::splat(bs128), V::add32(V::splat(c), lanes))
    }
}

/// Messages (bytes) from which `vaes512` on AMD runs 32-block batches ([`nb`]); shorter
/// ones run the 16-block AMD kernel of session 11 (4 zmm registers, ciphertext hashed from
/// registers), which fuses more of them (in its own function, `zmm::gcm_seal_short_nr`:
/// inlined into the 32-block kernel's function, their spill slots added up to 1072 B of stack,
/// past the 768-byte GCM wipe, and `backend::stack_depth` failed): `aesx bench --backends
/// vaes512 --ops gcm-enc,gcm-dec` on Zen 4, four runs alternated, the 32-block batches alone
/// against the 16-block kernel:
/// seal 768 B 0.90x, open 512 B 0.90x, 1 KiB 1.01x, 2 KiB 1.02-1.06x.
pub(crate) const WIDE_MIN: usize = 1024;

/// Encrypts whole blocks with CTR32 from `ctr`, then hashes the ciphertext into `acc`
/// (`W`: 32-block batches where [`nb`] allows them; `vaes512` on AMD runs shorter messages
/// with `W` false, see [`WIDE_MIN`]). `public`: the counter's inc32 word is public (a 12-byte
/// nonce), so the ymm loop may branch on it (see [`super::gcm_ymm::batches`]) and Intel's zmm
/// loop may start with a head that aligns it ([`aligned_head`]).
#[inline(always)]
pub(crate) unsafe fn seal<V: Vector, const NR: usize, const SB: bool, const W: bool>(
    rk: &Keys,
    k: &Key,
    ctr: &[u8; 16],
    public: bool,
    acc: &mut u128,
    buf: &mut [u8],
) {
    let p = buf.as_mut_ptr();
    // SAFETY: the caller's; in place over `buf`.
    unsafe { seal_io::<V, NR, SB, W>(rk, k, ctr, public, acc, (p, p, buf.len())) }
}

/// [`seal`] of `len` bytes at `inp` into `len` bytes at `out`: the same bytes, or bytes that
/// do not overlap them.
///
/// # Safety
/// The CPU runs `V`, VAES and VPCLMULQDQ; `inp` is readable and `out` writable for `len`
/// bytes (whole blocks), equal or disjoint.
#[inline(always)]
pub(crate) unsafe fn seal_io<V: Vector, const NR: usize, const SB: bool, const W: bool>(
    rk: &Keys,
    k: &Key,
    ctr: &[u8; 16],
    public: bool,
    acc: &mut u128,
    (inp, out, len): (*const u8, *mut u8, usize),
) {
    debug_assert!(len.is_multiple_of(16));
    // SAFETY: the caller's CPU runs `V`, VAES and VPCLMULQDQ; each batch pointer covers 16
    // whole blocks of the `len` bytes (`full` of them).
    unsafe {
        let (bs, mut c) = setup::<V>(ctr);
        let n = nb::<V, SB, W>();
        let inc = step::<V>(n);
        let mut s = clmul::u128_to_m(*acc);
        let mut lo = public.then(|| inc32_word(ctr));
        let h = aligned_head::<V, NR, SB, W>(rk, k, &mut c, &mut lo, &mut s, (inp, out, len), bs);
        let (inp, out, len) = (inp.add(h), out.add(h), len - h);
        let full = len / (16 * n);
        let body = 16 * n * full;
        let (p, d) = (out, inp);
        if full > 0 {
            // Prologue: batch 0 encrypted, nothing to hash yet.
            let (_, mut y) = if aligned::<V, SB, W>(lo) {
                batch::<V, NR, false, SB, W, ALIGNED>(rk, k, c, s, Src::Mem(p), d, p, bs)
            } else {
                batch::<V, NR, false, SB, W, GENERAL>(rk, k, c, s, Src::Mem(p), d, p, bs)
            };
            c = V::add32(c, inc);
            if V::BYTES == 64 && n == 32 {
                // zmm on AMD: the assembly loop hashes each batch from the registers the
                // iteration before left it in, and returns the last batch's.
                if full > 1 {
                    let c512: __m512i = core::mem::transmute_copy(&c);
                    let y512: [__m512i; ZV] = core::mem::transmute_copy(&y);
                    let io = (d.add(512), p.add(512));
                    let (c512, s2, y2) =
                        super::gcm_zmm::seal_batches(rk, NR, k, c512, s, y512, io, full - 1);
                    (c, s, y) = (
                        core::mem::transmute_copy(&c512),
                        s2,
                        core::mem::transmute_copy(&y2),
                    );
                }
            } else if V::BYTES == 64 && !SB {
                // zmm on AMD, short messages: each batch hashes the previous one's ciphertext
                // as it left the AES rounds.
                for i in 1..full {
                    let (d, o) = (d.add(16 * n * i), p.add(16 * n * i));
                    (s, y) =
                        batch::<V, NR, true, SB, W, GENERAL>(rk, k, c, s, Src::Regs(y), d, o, bs);
                    c = V::add32(c, inc);
                }
            } else if full > 1 {
                let lo = lo.map(|l| l.wrapping_add(n as u32));
                let io = (d.add(16 * n), p.add(16 * n));
                (c, s) = batches::<V, NR, SB, W, true>(rk, k, c, s, p, io, full - 1, bs, lo);
            }
            // Epilogue: hash the last batch (zmm on AMD: from the registers it was computed in).
            let last = if V::BYTES == 64 && !SB {
                Src::Regs(y)
            } else {
                Src::Mem(p.add(16 * n * (full - 1)))
            };
            s = hash_batch::<V, SB, W>(k, s, last, bs);
        }
        let rest = (d.add(body), p.add(body), len - body);
        by_count!(
            (len - body).div_ceil(V::BYTES),
            tail::<V, NR, SB, W>(rk, k, c, &mut s, rest, true, bs)
        );
        *acc = clmul::m_to_u128(s);
    }
}

/// Hashes whole ciphertext blocks into `acc`, then decrypts them with CTR32 from `ctr` (`W` as
/// for [`seal`]; `public` too, used by the ymm loop and Intel's zmm decryption).
#[inline(always)]
pub(crate) unsafe fn open<V: Vector, const NR: usize, const SB: bool, const W: bool>(
    rk: &Keys,
    k: &Key,
    ctr: &[u8; 16],
    public: bool,
    acc: &mut u128,
    buf: &mut [u8],
) {
    let p = buf.as_mut_ptr();
    // SAFETY: the caller's; in place over `buf`.
    unsafe { open_io::<V, NR, SB, W>(rk, k, ctr, public, acc, (p, p, buf.len())) }
}

/// [`open`] of `len` bytes at `inp` into `len` bytes at `out` (as [`seal_io`]).
///
/// # Safety
/// As [`seal_io`].
#[inline(always)]
pub(crate) unsafe fn open_io<V: Vector, const NR: usize, const SB: bool, const W: bool>(
    rk: &Keys,
    k: &Key,
    ctr: &[u8; 16],
    public: bool,
    acc: &mut u128,
    (inp, out, len): (*const u8, *mut u8, usize),
) {
    debug_assert!(len.is_multiple_of(16));
    // SAFETY: as in `seal_io`.
    unsafe {
        let (bs, mut c) = setup::<V>(ctr);
        let n = nb::<V, SB, W>();
        let mut s = clmul::u128_to_m(*acc);
        let lo = public.then(|| inc32_word(ctr));
        let full = len / (16 * n);
        let body = 16 * n * full;
        if full > 0 {
            (c, s) = batches::<V, NR, SB, W, false>(rk, k, c, s, inp, (inp, out), full, bs, lo);
        }
        let rest = (inp.add(body), out.add(body), len - body);
        by_count!(
            (len - body).div_ceil(V::BYTES),
            tail::<V, NR, SB, W>(rk, k, c, &mut s, rest, false, bs)
        );
        *acc = clmul::m_to_u128(s);
    }
}

/// `acc <- GHASH update over data` (whole blocks), in the widest batches the key allows.
#[inline(always)]
pub(crate) unsafe fn ghash<V: Vector, const SB: bool>(k: &Key, acc: &mut u128, data: &[u8]) {
    // SAFETY: the caller's.
    unsafe {
        if k.wide() {
            ghash_w::<V, SB, true>(k, acc, data)
        } else {
            ghash_w::<V, SB, false>(k, acc, data)
        }
    }
}

/// [`ghash`] with `W` (32-block batches where [`nb`] says so; the key must be wide then).
#[inline(always)]
unsafe fn ghash_w<V: Vector, const SB: bool, const W: bool>(k: &Key, acc: &mut u128, data: &[u8]) {
    debug_assert!(data.len().is_multiple_of(16));
    // SAFETY: the caller's CPU runs `V` and VPCLMULQDQ; every access stays in `data`.
    unsafe {
        let bs = V::splat(clmul::bswap_mask());
        let mut s = clmul::u128_to_m(*acc);
        let mut chunks = data.chunks_exact(16 * nb::<V, SB, W>());
        for c in &mut chunks {
            s = hash_batch::<V, SB, W>(k, s, Src::Mem(c.as_ptr()), bs);
        }
        let rest = chunks.remainder();
        s = match rest.len().div_ceil(V::BYTES) {
            0 => s,
            1 => hash_tail::<V, SB, W, 1>(k, s, rest, bs),
            2 => hash_tail::<V, SB, W, 2>(k, s, rest, bs),
            3 => hash_tail::<V, SB, W, 3>(k, s, rest, bs),
            4 => hash_tail::<V, SB, W, 4>(k, s, rest, bs),
            5 => hash_tail::<V, SB, W, 5>(k, s, rest, bs),
            6 => hash_tail::<V, SB, W, 6>(k, s, rest, bs),
            7 => hash_tail::<V, SB, W, 7>(k, s, rest, bs),
            _ => hash_tail::<V, SB, W, 8>(k, s, rest, bs),
        };
        *acc = clmul::m_to_u128(s);
    }
}

#[cfg(test)]
mod tests {
    //! Both instantiations called directly against the `soft` backend with the software GHASH
    //! (`generic_gcm`): every block count up to five 32-block batches and one block, every
    //! key size, counters whose inc32 word wraps inside a register, inside a batch and at a
    //! batch boundary, a state carried in, and calls split at every block (a stream whose
    //! updates cut batches). The zmm tests run only where AVX-512 exists and say so when they
    //! skip.
    use super::*;
    use crate::backend::tests::soft_gcm;
    use crate::backend::{Backend, generic_gcm, ghash as soft_ghash};
    use std::format;
    use std::vec::Vec;

    type Fused = unsafe fn(&Keys, &Key, &[u8; 16], &mut u128, &mut [u8]);
    type Hash = unsafe fn(&Key, &mut u128, &[u8]);

    fn data(n: usize, seed: u8) -> Vec<u8> {
        (0..n)
            .map(|i| (i as u8).wrapping_mul(37).wrapping_add(seed) ^ (i >> 8) as u8)
            .collect()
    }

    /// Low counter words: no wrap, wrap after block 0 (inside register 0), after block 1, after
    /// block 15 (last of a 16-block batch 0), at block 16 (a 16-block batch boundary, inside
    /// a 32-block batch), inside 16-block batch 2, at block 32 (a 32-block batch boundary),
    /// inside 32-block batch 1 (block 59, its register 6).
    const LOWS: [u32; 8] = [
        1,
        0xffff_ffff,
        0xffff_fffe,
        0xffff_fff1,
        0xffff_fff0,
        0xffff_ffdd,
        0xffff_ffe0,
        0xffff_ffc5,
    ];

    fn check(name: &str, seal: Fused, open: Fused, ghash: Hash) {
        for kl in [16, 24, 32] {
            let key = data(kl, 11);
            let (soft, h, soft_gk) = soft_gcm(&key);
            let (sb, sk) = soft.kernels();
            let hw = crate::backend::aesni::expand(&key);
            // Keys with H^32..H^17 and without (every kernel must run right with the second,
            // the AMD zmm one by its 16-block batches).
            for wide in [true, false] {
                let mut k = Key::ZERO;
                k.fill(&h, wide);
                // Up to 5 * 32 + 1 blocks: the zmm loop on AMD (32 blocks an iteration) runs up to
                // 4 iterations for seal (after its prologue batch) and 5 for open, the ymm loop
                // (16) up to 9 and 10.
                for blocks in 0..=(5 * BATCH + 1) {
                    let src = data(16 * blocks, blocks as u8);
                    for low in LOWS {
                        let mut ctr: [u8; 16] = data(16, 5).try_into().unwrap();
                        ctr[12..].copy_from_slice(&low.to_be_bytes());
                        let acc0 = u128::from_le_bytes(data(16, low as u8).try_into().unwrap());
                        for (what, f, seal_mode) in [("seal", seal, true), ("open", open, false)] {
                            let (mut x, mut y) = (src.clone(), src.clone());
                            let (mut ax, mut ay) = (acc0, acc0);
                            // SAFETY: `check` runs only where the CPU has the width's features.
                            unsafe { f(&hw, &k, &ctr, &mut ax, &mut x) };
                            if seal_mode {
                                generic_gcm::<true>(sb, sk, &soft_gk, &ctr, &mut ay, &mut y);
                            } else {
                                generic_gcm::<false>(sb, sk, &soft_gk, &ctr, &mut ay, &mut y);
                            }
                            let at = format!(
                                "{name} {what} key={kl} wide={wide} blocks={blocks} low={low:x}"
                            );
                            assert_eq!(x, y, "{at}");
                            assert_eq!(ax, ay, "{at}: GHASH state");
                            // Split into two calls at a few points (a stream cutting batches).
                            for cut in [1, 2, 3, 7, 15, 16, 17, 31, 32, 33, 63, 65] {
                                if cut >= blocks {
                                    continue;
                                }
                                let mut z = src.clone();
                                let mut az = acc0;
                                let (a, b) = z.split_at_mut(16 * cut);
                                let mut c2 = ctr;
                                c2[12..]
                                    .copy_from_slice(&low.wrapping_add(cut as u32).to_be_bytes());
                                // SAFETY: as above.
                                unsafe {
                                    f(&hw, &k, &ctr, &mut az, a);
                                    f(&hw, &k, &c2, &mut az, b);
                                }
                                assert_eq!(z, y, "{at} cut={cut}");
                                assert_eq!(az, ay, "{at} cut={cut}: GHASH state");
                            }
                        }
                        let (mut ax, mut ay) = (acc0, acc0);
                        // SAFETY: as above.
                        unsafe { ghash(&k, &mut ax, &src) };
                        soft_ghash(&soft_gk, &mut ay, &src);
                        assert_eq!(ax, ay, "{name} ghash key={kl} blocks={blocks} low={low:x}");
                    }
                }
            }
        }
    }

    #[test]
    fn ymm_gcm_matches_soft() {
        if !(Backend::Vaes256.is_available() && crate::cpu::features().vpclmulqdq) {
            std::eprintln!("SKIPPED: this CPU has no VAES + VPCLMULQDQ on ymm");
            return;
        }
        fn seal(k: &Keys, h: &Key, c: &[u8; 16], a: &mut u128, b: &mut [u8]) {
            super::super::ymm::gcm_seal(k, h, c, false, a, b)
        }
        fn open(k: &Keys, h: &Key, c: &[u8; 16], a: &mut u128, b: &mut [u8]) {
            super::super::ymm::gcm_open(k, h, c, false, a, b)
        }
        // The loop that branches on a public counter, given every counter of `LOWS` too: it
        // must be right for any counter (only its timing may depend on it).
        fn seal_pub(k: &Keys, h: &Key, c: &[u8; 16], a: &mut u128, b: &mut [u8]) {
            super::super::ymm::gcm_seal(k, h, c, true, a, b)
        }
        fn open_pub(k: &Keys, h: &Key, c: &[u8; 16], a: &mut u128, b: &mut [u8]) {
            super::super::ymm::gcm_open(k, h, c, true, a, b)
        }
        fn ghash(h: &Key, a: &mut u128, d: &[u8]) {
            super::super::ymm::ghash(h, a, d)
        }
        fn seal_b2b(k: &Keys, h: &Key, c: &[u8; 16], a: &mut u128, b: &mut [u8]) {
            let src = b.to_vec();
            b.fill(0xa5);
            super::super::ymm::gcm_b2b(k, h, c, true, a, &src, b, true)
        }
        fn open_b2b(k: &Keys, h: &Key, c: &[u8; 16], a: &mut u128, b: &mut [u8]) {
            let src = b.to_vec();
            b.fill(0x5a);
            super::super::ymm::gcm_b2b(k, h, c, true, a, &src, b, false)
        }
        check("ymm", seal, open, ghash);
        check("ymm public counter", seal_pub, open_pub, ghash);
        check("ymm buffer to buffer", seal_b2b, open_b2b, ghash);
    }

    #[test]
    fn zmm_gcm_matches_soft() {
        if !(Backend::Vaes512.is_available() && crate::cpu::features().vpclmulqdq) {
            std::eprintln!(
                "SKIPPED: this CPU has no AVX-512 + VAES + VPCLMULQDQ (zmm GCM not run)"
            );
            return;
        }
        // Both tunings, whatever the vendor: the dispatcher picks one by vendor; open with the
        // counter public (the Intel loop branches on it) and not.
        use super::super::zmm::tuned;
        // The kernels with the tuning and `public` fixed; callers (`check`) run them only on
        // this CPU, which has the features (checked above).
        unsafe fn seal<const SB: bool, const PUB: bool>(
            k: &Keys,
            h: &Key,
            c: &[u8; 16],
            a: &mut u128,
            b: &mut [u8],
        ) {
            // SAFETY: the caller's CPU has AVX-512, VAES and VPCLMULQDQ.
            unsafe { tuned::seal::<SB>(k, h, c, PUB, a, b) }
        }
        unsafe fn open<const SB: bool, const PUB: bool>(
            k: &Keys,
            h: &Key,
            c: &[u8; 16],
            a: &mut u128,
            b: &mut [u8],
        ) {
            // SAFETY: the caller's CPU has AVX-512, VAES and VPCLMULQDQ.
            unsafe { tuned::open::<SB>(k, h, c, PUB, a, b) }
        }
        // Buffer to buffer: the data moved to a source of its own, the output filled with
        // other bytes first.
        unsafe fn seal_b2b<const SB: bool, const PUB: bool>(
            k: &Keys,
            h: &Key,
            c: &[u8; 16],
            a: &mut u128,
            b: &mut [u8],
        ) {
            let src = b.to_vec();
            b.fill(0xa5);
            // SAFETY: the caller's CPU has AVX-512, VAES and VPCLMULQDQ.
            unsafe { super::super::zmm::gcm_b2b_tuned::<SB>(k, h, c, PUB, a, &src, b, true) }
        }
        unsafe fn open_b2b<const SB: bool, const PUB: bool>(
            k: &Keys,
            h: &Key,
            c: &[u8; 16],
            a: &mut u128,
            b: &mut [u8],
        ) {
            let src = b.to_vec();
            b.fill(0x5a);
            // SAFETY: the caller's CPU has AVX-512, VAES and VPCLMULQDQ.
            unsafe { super::super::zmm::gcm_b2b_tuned::<SB>(k, h, c, PUB, a, &src, b, false) }
        }
        let (ghash_i, ghash_a) = (tuned::ghash::<true>, tuned::ghash::<false>);
        check(
            "zmm buffer to buffer (Intel tuning, public counter)",
            seal_b2b::<true, true>,
            open_b2b::<true, true>,
            ghash_i,
        );
        check(
            "zmm buffer to buffer (Intel tuning)",
            seal_b2b::<true, false>,
            open_b2b::<true, false>,
            ghash_i,
        );
        check(
            "zmm buffer to buffer (AMD tuning)",
            seal_b2b::<false, false>,
            open_b2b::<false, false>,
            ghash_a,
        );
        check(
            "zmm (Intel tuning)",
            seal::<true, false>,
            open::<true, false>,
            ghash_i,
        );
        check(
            "zmm (Intel tuning, public counter)",
            seal::<true, true>,
            open::<true, true>,
            ghash_i,
        );
        check(
            "zmm (AMD tuning)",
            seal::<false, false>,
            open::<false, false>,
            ghash_a,
        );
        check(
            "zmm (AMD tuning, public counter)",
            seal::<false, false>,
            open::<false, true>,
            ghash_a,
        );
    }

    /// The vaes256 key and dispatch: an `AesGcm` on vaes256 uses this kernel here.
    #[test]
    fn vaes256_dispatches_the_fused_kernel() {
        if !(Backend::Vaes256.is_available() && crate::cpu::features().vpclmulqdq) {
            std::eprintln!("SKIPPED: this CPU has no VAES + VPCLMULQDQ on ymm");
            return;
        }
        let g = crate::AesGcm::with_backend(&[7u8; 16], Backend::Vaes256).unwrap();
        assert_eq!(g.ghash_kernel(), "vclmul");
    }
}
