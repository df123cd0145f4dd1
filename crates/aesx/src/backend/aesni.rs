//! AES-NI on xmm registers (Intel, "Advanced Encryption Standard (AES) New Instructions Set",
//! Gueron, white paper 323641). Parallel modes keep 8 independent blocks in flight: AESENC has
//! latency 4 and throughput 0.5 on Zen 4, so 8 blocks fill both AES pipes.
//!
//! This module also owns the round-key layout shared with `vaes256` and `vaes512`, and the key
//! expansion for all three.
//!
//! Constant time: AES-NI executes in fixed time independent of data; every loop bound and
//! branch here depends only on lengths and the round count.

// Round loops index the key array by round number: clearer than zipped iterators here.
#![allow(clippy::needless_range_loop)]

use core::arch::x86_64::*;

use zeroize::Zeroize;

/// Round keys for the hardware backends: `enc[0..=rounds]` for AESENC.
///
/// IMPLEMENTATION NOTE: the equivalent-inverse-cipher schedule for AESDEC
/// (`AESIMC(enc[rounds - i])`) is not stored: the decrypting kernels derive it in registers in
/// their prologue ([`dec_keys`]), 9-13 independent AESIMC at 2 per cycle. Storing it doubled
/// the schedule, and key setup on this hardware is bound by stores (initialise, expand,
/// zeroize), not by the 60-cycle expansion chain.
#[repr(C, align(16))]
pub(crate) struct Keys {
    pub(crate) enc: [[u8; 16]; 15],
    pub(crate) rounds: usize,
}

impl Drop for Keys {
    fn drop(&mut self) {
        // IMPLEMENTATION NOTE: `zeroize` on byte arrays issues one volatile store per byte
        // (960 here), which cost more than the whole key expansion. Volatile 16-byte stores
        // clear the same memory in 30 stores and cannot be elided either.
        for k in self.enc.iter_mut() {
            // SAFETY: `k` is a valid, exclusively borrowed 16-byte array at a 16-byte aligned
            // offset of this `repr(C, align(16))` struct, so a 16-byte volatile write is in
            // bounds and aligned.
            unsafe {
                core::ptr::write_volatile(
                    (k as *mut [u8; 16]).cast::<__m128i>(),
                    _mm_setzero_si128(),
                )
            };
        }
        core::sync::atomic::compiler_fence(core::sync::atomic::Ordering::SeqCst);
    }
}

#[inline(always)]
pub(crate) fn load(b: &[u8; 16]) -> __m128i {
    // SAFETY: `b` is 16 readable bytes; the load is unaligned.
    unsafe { _mm_loadu_si128(b.as_ptr().cast()) }
}

#[inline(always)]
pub(crate) fn store(b: &mut [u8; 16], v: __m128i) {
    // SAFETY: `b` is 16 writable bytes; the store is unaligned.
    unsafe { _mm_storeu_si128(b.as_mut_ptr().cast(), v) }
}

#[inline(always)]
pub(crate) fn load_at(buf: &[u8], i: usize) -> __m128i {
    load(buf[16 * i..16 * i + 16].try_into().unwrap())
}

#[inline(always)]
pub(crate) fn store_at(buf: &mut [u8], i: usize, v: __m128i) {
    store((&mut buf[16 * i..16 * i + 16]).try_into().unwrap(), v)
}

// ---------------------------------------------------------------------------------------------
// Key expansion.
//
// IMPLEMENTATION NOTE: each new round key is prefix_xor(prev) ^ broadcast(f(last word)), where
// prefix_xor(x) = [x0, x0^x1, x0^x1^x2, x0^x1^x2^x3]. The prefix XOR does not depend on f, so it
// runs in parallel with the S-box step and the serial chain per round is only f + one XOR.
// Two ways to compute f (SubWord(RotWord(w3)) ^ rcon, broadcast):
//   * `Assist`: AESKEYGENASSIST + PSHUFD. 4 + 1 cycles on Zen 4 (but 12-13 on Intel).
//   * `Enclast`: PSHUFB (rotate + broadcast w3) + AESENCLAST with rcon as the key; ShiftRows
//     is the identity on a block whose four columns are equal. 2 + 4 cycles on Zen 4.
// Both are measured by `aesx bench --ops keysetup-variants`; see the README. `expand` uses
// the faster for the CPU vendor.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Variant {
    Assist,
    Enclast,
}

/// The variant `expand` uses on this CPU: AESKEYGENASSIST is as cheap as AESENC on AMD, but
/// 3x slower on Intel cores, where AESENCLAST + PSHUFB wins. The vendor comes from the cached
/// detection (`cpu`): CPUID is a VM exit under a hypervisor (microseconds), far too slow per key.
pub(crate) fn preferred_variant() -> Variant {
    if crate::cpu::amd_like() {
        Variant::Assist
    } else {
        Variant::Enclast
    }
}

#[inline(always)]
pub(crate) fn expand(key: &[u8]) -> Keys {
    expand_with(key, preferred_variant())
}

#[inline(always)]
pub(crate) fn expand_with(key: &[u8], v: Variant) -> Keys {
    let mut k = Keys::ZERO;
    expand_into(key, v, &mut k);
    k
}

impl Keys {
    pub(crate) const ZERO: Keys = Keys {
        enc: [[0; 16]; 15],
        rounds: 0,
    };
}

/// Expands in place (the schedule is large; building it where it will live avoids copies).
#[inline(never)]
pub(crate) fn expand_into(key: &[u8], v: Variant, k: &mut Keys) {
    k.rounds = key.len() / 4 + 6;
    if crate::cpu::features().avx {
        // SAFETY: reached only through `Backend::{Aesni, Vaes256, Vaes512}`, whose availability
        // (AES-NI and SSE4.2) `Aes::with_backend` checked; AVX was just checked.
        unsafe { expand_hw_avx(key, v, k) }
    } else {
        // SAFETY: as above, without AVX.
        unsafe { expand_hw(key, v, k) }
    }
}

/// IMPLEMENTATION NOTE: the same code compiled with AVX uses three-operand VEX forms; the
/// register copies of the two-operand SSE forms sit on the serial chain and cost a cycle per
/// round (7 -> 6 cycles per AES-128 round key measured on Zen 4).
#[target_feature(enable = "aes,sse4.2,avx")]
fn expand_hw_avx(key: &[u8], v: Variant, k: &mut Keys) {
    expand_hw(key, v, k)
}

pub(crate) fn from_round_keys(enc: &[[u8; 16]]) -> Keys {
    let mut k = Keys::ZERO;
    k.rounds = enc.len() - 1;
    k.enc[..enc.len()].copy_from_slice(enc);
    k
}

#[inline]
#[target_feature(enable = "aes,sse4.2")]
fn expand_hw(key: &[u8], v: Variant, k: &mut Keys) {
    match (key.len(), v) {
        (16, Variant::Assist) => expand128::<false>(key, &mut k.enc),
        (16, Variant::Enclast) => expand128::<true>(key, &mut k.enc),
        (24, _) => expand192(key, &mut k.enc),
        (32, Variant::Assist) => expand256::<false>(key, &mut k.enc),
        (32, Variant::Enclast) => expand256::<true>(key, &mut k.enc),
        _ => unreachable!("key length checked by Aes::with_backend"),
    }
}

#[inline]
#[target_feature(enable = "aes,sse4.2")]
fn prefix_xor(x: __m128i) -> __m128i {
    let x = _mm_xor_si128(x, _mm_slli_si128::<4>(x));
    _mm_xor_si128(x, _mm_slli_si128::<8>(x))
}

/// SubWord(RotWord(word 3 of x)) ^ rcon, broadcast to all four words.
#[inline]
#[target_feature(enable = "aes,sse4.2")]
fn rot_sub<const ENCLAST: bool, const RC: i32>(x: __m128i) -> __m128i {
    if ENCLAST {
        let rot3 = _mm_setr_epi8(
            13, 14, 15, 12, 13, 14, 15, 12, 13, 14, 15, 12, 13, 14, 15, 12,
        );
        _mm_aesenclast_si128(_mm_shuffle_epi8(x, rot3), _mm_set1_epi32(RC))
    } else {
        _mm_shuffle_epi32::<0xff>(_mm_aeskeygenassist_si128::<RC>(x))
    }
}

/// SubWord(word 3 of x), broadcast (the extra step of AES-256).
#[inline]
#[target_feature(enable = "aes,sse4.2")]
fn sub<const ENCLAST: bool>(x: __m128i) -> __m128i {
    if ENCLAST {
        let w3 = _mm_setr_epi8(
            12, 13, 14, 15, 12, 13, 14, 15, 12, 13, 14, 15, 12, 13, 14, 15,
        );
        _mm_aesenclast_si128(_mm_shuffle_epi8(x, w3), _mm_setzero_si128())
    } else {
        _mm_shuffle_epi32::<0xaa>(_mm_aeskeygenassist_si128::<0>(x))
    }
}

#[inline]
#[target_feature(enable = "aes,sse4.2")]
fn step128<const E: bool, const RC: i32>(prev: __m128i) -> __m128i {
    _mm_xor_si128(prefix_xor(prev), rot_sub::<E, RC>(prev))
}

#[inline]
#[target_feature(enable = "aes,sse4.2")]
fn expand128<const E: bool>(key: &[u8], rk: &mut [[u8; 16]; 15]) {
    let mut k = load(key.try_into().unwrap());
    store(&mut rk[0], k);
    macro_rules! r {
        ($i:expr, $rc:expr) => {
            k = step128::<E, $rc>(k);
            store(&mut rk[$i], k);
        };
    }
    r!(1, 0x01);
    r!(2, 0x02);
    r!(3, 0x04);
    r!(4, 0x08);
    r!(5, 0x10);
    r!(6, 0x20);
    r!(7, 0x40);
    r!(8, 0x80);
    r!(9, 0x1b);
    r!(10, 0x36);
}

#[inline]
#[target_feature(enable = "aes,sse4.2")]
fn expand256<const E: bool>(key: &[u8], rk: &mut [[u8; 16]; 15]) {
    let mut a = load(key[..16].try_into().unwrap());
    let mut b = load(key[16..].try_into().unwrap());
    store(&mut rk[0], a);
    store(&mut rk[1], b);
    macro_rules! r {
        ($i:expr, $rc:expr) => {
            a = _mm_xor_si128(prefix_xor(a), rot_sub::<E, $rc>(b));
            store(&mut rk[$i], a);
        };
        ($i:expr, $rc:expr, both) => {
            r!($i, $rc);
            b = _mm_xor_si128(prefix_xor(b), sub::<E>(a));
            store(&mut rk[$i + 1], b);
        };
    }
    r!(2, 0x01, both);
    r!(4, 0x02, both);
    r!(6, 0x04, both);
    r!(8, 0x08, both);
    r!(10, 0x10, both);
    r!(12, 0x20, both);
    r!(14, 0x40);
}

/// AES-192: six key words per step. Written as words in a flat buffer, then cut into
/// 16-byte round keys (not performance critical enough to deserve shuffles).
#[inline]
#[target_feature(enable = "aes,sse4.2")]
fn expand192(key: &[u8], rk: &mut [[u8; 16]; 15]) {
    let mut w = [0u8; 16 * 13 + 16];
    w[..24].copy_from_slice(key);
    let mut a = load(key[..16].try_into().unwrap()); // words 0..3
    let mut tmp = [0u8; 16];
    tmp[..8].copy_from_slice(&key[16..24]);
    let mut c = load(&tmp); // words 4,5 in the low half
    macro_rules! r {
        ($i:expr, $rc:expr) => {
            // f = SubWord(RotWord(w5)) ^ rcon, broadcast
            let f = _mm_shuffle_epi32::<0x55>(_mm_aeskeygenassist_si128::<$rc>(c));
            a = _mm_xor_si128(prefix_xor(a), f);
            let t = _mm_shuffle_epi32::<0xff>(a);
            // words 4,5 (low 64 bits): [w4 ^ t, w5 ^ w4 ^ t]
            c = _mm_xor_si128(_mm_xor_si128(c, _mm_slli_si128::<4>(c)), t);
            let off = 24 * $i;
            store(&mut tmp, a);
            w[off..off + 16].copy_from_slice(&tmp);
            store(&mut tmp, c);
            w[off + 16..off + 24].copy_from_slice(&tmp[..8]);
        };
    }
    r!(1, 0x01);
    r!(2, 0x02);
    r!(3, 0x04);
    r!(4, 0x08);
    r!(5, 0x10);
    r!(6, 0x20);
    r!(7, 0x40);
    r!(8, 0x80);
    for (i, k) in rk.iter_mut().take(13).enumerate() {
        k.copy_from_slice(&w[16 * i..16 * i + 16]);
    }
    w.zeroize();
    tmp.zeroize();
}

// ---------------------------------------------------------------------------------------------
// Block kernels. `NR` (10/12/14) is a const so the round loops unroll fully.

/// The equivalent-inverse-cipher round keys for AESDEC, derived in registers:
/// `[enc[NR], AESIMC(enc[NR-1]), ..., AESIMC(enc[1]), enc[0]]`.
#[inline]
#[target_feature(enable = "aes,sse4.2")]
pub(crate) fn dec_keys<const NR: usize>(rk: &[[u8; 16]; 15]) -> [__m128i; 15] {
    let mut k = [_mm_setzero_si128(); 15];
    k[0] = load(&rk[NR]);
    for i in 1..NR {
        k[i] = _mm_aesimc_si128(load(&rk[NR - i]));
    }
    k[NR] = load(&rk[0]);
    k
}

/// The equivalent-inverse-cipher schedule for AESDEC in memory, for kernels that load a round
/// key per round: `[enc[NR], AESIMC(enc[NR-1]), ..., AESIMC(enc[1]), enc[0]]`. Wiped when
/// dropped, so decryption leaves no derived schedule on the stack.
#[repr(C, align(16))]
pub(crate) struct DecSchedule(pub(crate) [[u8; 16]; 15]);

impl Drop for DecSchedule {
    fn drop(&mut self) {
        for k in self.0.iter_mut() {
            // SAFETY: `k` is a valid, exclusively borrowed, 16-byte aligned 16-byte array.
            unsafe {
                core::ptr::write_volatile(
                    (k as *mut [u8; 16]).cast::<__m128i>(),
                    _mm_setzero_si128(),
                )
            };
        }
        core::sync::atomic::compiler_fence(core::sync::atomic::Ordering::SeqCst);
    }
}

/// Derives the [`DecSchedule`] of `rk`. Safety: the CPU has AES-NI.
#[inline(always)]
pub(crate) unsafe fn dec_schedule<const NR: usize>(rk: &Keys) -> DecSchedule {
    let mut d = DecSchedule([[0; 16]; 15]);
    d.0[0] = rk.enc[NR];
    for i in 1..NR {
        // SAFETY: AES-NI, which the caller's CPU has.
        store(&mut d.0[i], unsafe {
            _mm_aesimc_si128(load(&rk.enc[NR - i]))
        });
    }
    d.0[NR] = rk.enc[0];
    d
}

/// Runs `$body` with `NR` bound to the schedule's round count as a const.
macro_rules! by_rounds {
    ($rounds:expr, $f:ident ( $($a:expr),* )) => {
        match $rounds {
            10 => $f::<10>($($a),*),
            12 => $f::<12>($($a),*),
            _ => $f::<14>($($a),*),
        }
    };
}

#[target_feature(enable = "aes,sse4.2")]
fn cbc_enc<const NR: usize>(rk: &Keys, iv: &mut [u8; 16], buf: &mut [u8]) {
    use super::vaes::Vector;
    // Round keys are loaded where they are used (`Vector::round_key`), never copied to the
    // stack; the loads are independent of the chain, so they do not lengthen it.
    let key = |r: usize| {
        // SAFETY: the target features above (AES-NI, SSE4.2) include what `round_key` needs.
        unsafe { <__m128i as Vector>::round_key(&rk.enc[r]) }
    };
    let mut c = load(iv);
    // IMPLEMENTATION NOTE: the plaintext block and round key 0 are combined before the chain
    // needs them, so the serial path per block is the 10-14 AES rounds plus one XOR.
    for i in 0..buf.len() / 16 {
        let p = _mm_xor_si128(load_at(buf, i), key(0));
        let mut x = _mm_xor_si128(c, p);
        for r in 1..NR {
            x = _mm_aesenc_si128(x, key(r));
        }
        c = _mm_aesenclast_si128(x, key(NR));
        store_at(buf, i, c);
    }
    store(iv, c);
}

// CTR counter blocks without carry logic in the hot loop.
//
// IMPLEMENTATION NOTE: the counter block may be secret (SSH derives it from the key exchange),
// so no branch or memory index may depend on it, yet it must count mod 2^128. Per-vector
// 128-bit adds (add, unsigned compare, carry into the high half) cost 5-7 vector ops per
// vector, and those ops compete with AESENC for the same FP pipes. Instead, with batches of
// `n` blocks (a power of two, 8..=256), split the first counter `c = a0 + r`, `a0 = c & !(n-1)`,
// `r = c & (n-1)`. Block `k` (0 <= k < n) of batch `j` is
//   `a + r + k`, a = a0 + j*n, and since 0 <= r + k < 2n:
//   `= a | u`           if u = r + k < n, or
//   `= (a + n) | (u - n)` otherwise,
// where `|` is an OR into the low log2(n) bits that `a` and `a + n` leave zero. In block
// (big-endian) byte order those bits are the low bits of byte 15, so with
//   A  = bswap(a) ^ k0                         (per batch)
//   D' = bswap(a) ^ bswap(a + n) | low bits    (per batch; D is zero in the low bits)
//   W_k = all-ones if u >= n else zero, with the low bits of byte 15 replaced by u mod n
//                                                (per call: r is the same in every batch)
// the whitened AES input of block `k` is `A ^ (D' & W_k)`: in the low bits D' is one, giving
// k0 ^ (u mod n); elsewhere it picks bswap(a + n) where the block crossed into the next
// aligned run. The exact 128-bit work is two add/adc pairs per batch on the integer ALUs; the
// per-block cost is an AND and an XOR (one VPTERNLOGQ per vector with AVX-512).

/// The two 64-bit halves `(low, high)` of the block-order (big-endian) bytes of counter `c`,
/// as `_mm_set_epi64x(high, low)` wants them.
#[inline(always)]
pub(crate) fn ctr_block(c: u128) -> (i64, i64) {
    (
        ((c >> 64) as u64).swap_bytes() as i64,
        (c as u64).swap_bytes() as i64,
    )
}

/// `(A, D')` halves for the batch starting at aligned counter `a` (see above); `n` is the
/// batch size in blocks. `A` is returned without the k0 whitening.
#[inline(always)]
pub(crate) fn ctr_batch_words(a: u128, n: u64) -> ((i64, i64), (i64, i64)) {
    let (lo, hi) = ctr_block(a);
    let (nlo, nhi) = ctr_block(a.wrapping_add(n as u128));
    let low_bits = ((n - 1) << 56) as i64;
    ((lo, hi), (lo ^ nlo, (hi ^ nhi) | low_bits))
}

/// `(low, high)` halves of `W_k` for `u = r + k` (0 <= u < 2n), batch size `n` blocks.
#[inline(always)]
fn ctr_select_word(u: u64, n: u64) -> (i64, i64) {
    // u >> log2(n) is 0 or 1 (a constant shift once inlined, never a division); negated, the
    // all-zeros / all-ones selector.
    let m = 0u64.wrapping_sub(u >> n.trailing_zeros());
    let low_bits = (n - 1) << 56;
    (m as i64, ((m & !low_bits) | ((u << 56) & low_bits)) as i64)
}

// The whole-block kernels: the width-generic bodies of `vaes` at xmm width (one block a
// register, 8 in flight), compiled with AES-NI + SSE4.2 only.
//
// IMPLEMENTATION NOTE (issue 19): 8 blocks and 11-15 round keys do not fit in 16 xmm
// registers. Left to itself LLVM keeps the keys and serialises the blocks, or spills; here each
// round's key is loaded right before its 8 AESENC ([`Vector::round_key`], a forced MOVDQU), so 8
// blocks + 1 key stay in registers, the 8 chains stay interleaved (latency 4-7 on Skylake,
// Haswell and Zen 2/3 needs >= 4-8 in flight) and no round key is copied to the stack.

#[target_feature(enable = "aes,sse4.2")]
fn x_ecb_enc<const NR: usize>(k: &Keys, buf: &mut [u8]) {
    // SAFETY: the target features above.
    unsafe { super::vaes::ecb_enc::<__m128i, NR>(k, buf) }
}
#[target_feature(enable = "aes,sse4.2")]
fn x_ecb_dec<const NR: usize>(k: &Keys, buf: &mut [u8]) {
    // SAFETY: the target features above.
    unsafe { super::vaes::ecb_dec::<__m128i, NR>(k, buf) }
}
#[target_feature(enable = "aes,sse4.2")]
fn x_cbc_dec<const NR: usize>(k: &Keys, iv: &mut [u8; 16], buf: &mut [u8]) {
    // SAFETY: the target features above.
    unsafe { super::vaes::cbc_dec::<__m128i, NR>(k, iv, buf) }
}
#[target_feature(enable = "aes,sse4.2")]
fn x_ctr<const NR: usize>(k: &Keys, c: u128, buf: &mut [u8]) {
    // SAFETY: the target features above.
    unsafe { super::vaes::ctr::<__m128i, NR>(k, c, buf) }
}

impl super::vaes::Vector for __m128i {
    const BLOCKS: usize = 1;

    #[inline(always)]
    unsafe fn load(p: *const u8) -> Self {
        // SAFETY: the caller passes 16 readable bytes.
        unsafe { _mm_loadu_si128(p.cast()) }
    }
    #[inline(always)]
    unsafe fn store(p: *mut u8, v: Self) {
        // SAFETY: the caller passes 16 writable bytes.
        unsafe { _mm_storeu_si128(p.cast(), v) }
    }
    #[inline(always)]
    unsafe fn load_part(_: *const u8, _: usize) -> Self {
        unreachable!("a one-block register is never partial")
    }
    #[inline(always)]
    unsafe fn store_part(_: *mut u8, _: usize, _: Self) {
        unreachable!("a one-block register is never partial")
    }
    #[inline(always)]
    unsafe fn round_key(k: &[u8; 16]) -> Self {
        let v: __m128i;
        // SAFETY: `k` is 16 readable bytes; MOVDQU (SSE2, baseline on x86_64) reads exactly
        // those. `readonly` without `pure`: the load stays where it is written.
        unsafe {
            core::arch::asm!(
                "movdqu {v}, xmmword ptr [{p}]",
                v = out(xmm_reg) v,
                p = in(reg) k.as_ptr(),
                options(nostack, preserves_flags, readonly),
            )
        };
        v
    }
    #[inline(always)]
    unsafe fn splat(x: __m128i) -> Self {
        x
    }
    #[inline(always)]
    unsafe fn splat_qwords(q: &[u64; 2]) -> Self {
        // Two MOVDDUP loads and a blend (no GPR-to-vector shuffles on the AES pipes of Zen).
        // SAFETY: SSE4.1 (`pblendw`), SSE3 (`movddup`), which the caller's CPU has (SSE4.2).
        unsafe { _mm_blend_epi16::<0xF0>(qword_dup(&q[0]), qword_dup(&q[1])) }
    }
    #[inline(always)]
    unsafe fn zero() -> Self {
        // SAFETY: SSE2.
        unsafe { _mm_setzero_si128() }
    }
    #[inline(always)]
    unsafe fn xor(a: Self, b: Self) -> Self {
        // SAFETY: SSE2.
        unsafe { _mm_xor_si128(a, b) }
    }
    #[inline(always)]
    unsafe fn xor_and(a: Self, b: Self, c: Self) -> Self {
        // SAFETY: SSE2.
        unsafe { _mm_xor_si128(a, _mm_and_si128(b, c)) }
    }
    #[inline(always)]
    unsafe fn aesenc(x: Self, k: Self) -> Self {
        // SAFETY: AES-NI.
        unsafe { _mm_aesenc_si128(x, k) }
    }
    #[inline(always)]
    unsafe fn aesenclast(x: Self, k: Self) -> Self {
        // SAFETY: AES-NI.
        unsafe { _mm_aesenclast_si128(x, k) }
    }
    #[inline(always)]
    unsafe fn aesdec(x: Self, k: Self) -> Self {
        // SAFETY: AES-NI.
        unsafe { _mm_aesdec_si128(x, k) }
    }
    #[inline(always)]
    unsafe fn aesdeclast(x: Self, k: Self) -> Self {
        // SAFETY: AES-NI.
        unsafe { _mm_aesdeclast_si128(x, k) }
    }
    #[inline(always)]
    unsafe fn prev_blocks(prev: Self, _cur: Self) -> Self {
        prev
    }
    #[inline(always)]
    unsafe fn ctr_select(r: u64, i: usize) -> Self {
        let (lo, hi) = ctr_select_word(r.wrapping_add(i as u64), super::vaes::VECS as u64);
        // SAFETY: SSE2.
        unsafe { _mm_set_epi64x(hi, lo) }
    }
    #[inline(always)]
    unsafe fn clmul<const IMM: i32>(a: Self, b: Self) -> Self {
        // SAFETY: PCLMULQDQ (the caller's CPU has it).
        unsafe { _mm_clmulepi64_si128::<IMM>(a, b) }
    }
    #[inline(always)]
    unsafe fn shuffle_bytes(a: Self, idx: Self) -> Self {
        // SAFETY: SSSE3.
        unsafe { _mm_shuffle_epi8(a, idx) }
    }
}

/// MOVDDUP from memory (a load), kept in place like `Vector::round_key`: both qwords = `*q`.
#[inline(always)]
unsafe fn qword_dup(q: &u64) -> __m128i {
    let v: __m128i;
    // SAFETY: `q` is 8 readable bytes and MOVDDUP reads exactly those (SSE3, which the
    // caller's CPU has).
    unsafe {
        core::arch::asm!(
            "movddup {v}, qword ptr [{p}]",
            v = out(xmm_reg) v,
            p = in(reg) q as *const u64,
            options(nostack, preserves_flags, readonly),
        )
    };
    v
}

/// Bytes of stack [`wipe_stack`] clears: more than the largest frame of a hardware kernel
/// (about 1 KiB for the ymm ECB tails; `tests/residue.rs` fails if a kernel outgrows it).
const WIPE: usize = 1536;

/// Overwrites with zeros the `WIPE` bytes of stack below the caller's frame, where the kernel
/// the caller just returned from kept its spill slots. IMPLEMENTATION NOTE: the kernels load
/// every round key from the schedule where it is used, but LLVM may still spill a key register
/// (AES-256 has 15 keys for 16 xmm registers); whatever it spilled lies in the dead frame
/// below the caller, which this call's own frame now covers.
#[inline(never)]
pub(crate) fn wipe_stack() {
    let mut pad = core::mem::MaybeUninit::<[__m128i; WIPE / 16]>::uninit();
    let p = pad.as_mut_ptr().cast::<__m128i>();
    for i in 0..WIPE / 16 {
        // SAFETY: `p.add(i)` is inside `pad`, aligned for `__m128i`; SSE2 is baseline on
        // x86_64. Volatile: the stores are not removed although `pad` is never read.
        unsafe { core::ptr::write_volatile(p.add(i), _mm_setzero_si128()) };
    }
    core::sync::atomic::compiler_fence(core::sync::atomic::Ordering::SeqCst);
}

// Safe entry points. SAFETY (all five): `Keys` of this layout are only built and used through
// `Backend::{Aesni, Vaes256, Vaes512}`, after `Aes::with_backend` checked that the CPU has
// AES-NI and SSE4.2 (`Backend::is_available`).

pub(crate) fn encrypt_blocks(k: &Keys, buf: &mut [u8]) {
    // SAFETY: see above.
    unsafe { by_rounds!(k.rounds, x_ecb_enc(k, buf)) }
}

pub(crate) fn decrypt_blocks(k: &Keys, buf: &mut [u8]) {
    // SAFETY: see above.
    unsafe { by_rounds!(k.rounds, x_ecb_dec(k, buf)) }
}

pub(crate) fn cbc_encrypt(k: &Keys, iv: &mut [u8; 16], buf: &mut [u8]) {
    // SAFETY: see above.
    unsafe { by_rounds!(k.rounds, cbc_enc(k, iv, buf)) }
}

pub(crate) fn cbc_decrypt(k: &Keys, iv: &mut [u8; 16], buf: &mut [u8]) {
    // SAFETY: see above.
    unsafe { by_rounds!(k.rounds, x_cbc_dec(k, iv, buf)) }
}

pub(crate) fn ctr_xor(k: &Keys, c: u128, buf: &mut [u8]) {
    // SAFETY: see above.
    unsafe { by_rounds!(k.rounds, x_ctr(k, c, buf)) }
}
