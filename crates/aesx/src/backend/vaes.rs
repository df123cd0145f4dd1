//! One source for the VAES kernels at both register widths: every kernel body below is generic
//! over [`Vector`], implemented for ymm (`__m256i`, AVX2 + VAES, 2 blocks a register) in
//! [`ymm`] and for zmm (`__m512i`, AVX-512 + VAES, 4 blocks a register) in [`zmm`], as the Linux
//! kernel's `aes-gcm-avx10-x86_64.S` / `aes-ctr-avx-x86_64.S` instantiate one macro body at
//! vector lengths 32 and 64.
//!
//! Dispatch: `Backend::Vaes256` runs the ymm instantiation (`vaes256.rs`; measured on Zen 3, where
//! it replaced a separate ymm source that was 5-100% slower, README).
//! `Backend::Vaes512` runs the zmm instantiation ([`zmm`]; its tests skip where AVX-512 is
//! missing). Until session 9 it ran a separate zmm source (`vaes512.rs`, tuned on Zen 4); on
//! the first AVX-512 machine here (an Intel Xeon guest) this one measured 0.97-1.23x that
//! source for ECB, CBC decryption and CTR, 64 B to 1 MiB (README, "Backends"), so it replaced
//! it, and GCM moved from the xmm kernel to the fused zmm one (2.5x).
//!
//! Techniques (all widths): 8 vectors in flight per loop iteration (Zen 3 issues two ymm VAESENC
//! a cycle with latency 4: 8 independent registers keep both units busy; the xmm ECB and
//! CBC-decrypt kernels and the ymm ECB kernels run 12, [`XMM_VECS`]; the CTR main loop of xmm
//! and ymm and the CBC-decrypt main loop of ymm run 12 in inline assembly, [`ctr_asm`] and
//! [`cbc_asm`], with the intrinsic kernels below for their tails and for zmm; on Intel, CTR
//! from 1 KiB runs the 8-register selector loop of [`ctr_asm`] instead, from
//! `aesni::ctr_nostack`); the round key of
//! each round is broadcast from the schedule right where it is used ([`Vector::round_key`]), so
//! 8 blocks + 1 key fit in 16 ymm registers and no broadcast copy of the schedule is written to
//! the stack; the data XOR folded into the last round (`aesenclast(x, k_last ^ data)`); exact
//! 128-bit CTR counters at an AND and an XOR per vector (`aesni`, "CTR counter blocks"); CBC
//! chaining values loaded from the ciphertext at a one-block offset, stores in reverse order so
//! that in-place operation never reads a block it has overwritten; tails with whole-register
//! loads and stores plus one partial register ([`Vector::load_part`]: masked on zmm, a 16-byte
//! access on ymm, where AMD's VPMASKMOV stores are slow).
//!
//! The trait also carries what the fused CTR + GHASH kernel needs at both widths (carry-less
//! multiply, byte shuffles, 32-bit adds, lane folds): GCM is written once on it, in [`gcm`].
//!
//! Constant time: VAES runs in data-independent time; loop bounds, branches and masks depend
//! only on lengths and the round count.
#![allow(clippy::needless_range_loop)]

use core::arch::x86_64::*;

use super::aesni::{Keys, ctr_batch_words, dec_schedule};

#[macro_use]
mod asm_text;
pub(crate) mod cbc_asm;
pub(crate) mod ctr_asm;
pub(crate) mod ecb_asm;
pub(crate) mod gcm;
mod gcm_ymm;
mod gcm_zmm;
pub(crate) mod ymm;
pub(crate) mod zmm;

/// A SIMD register of `BLOCKS` AES blocks and the operations the kernels need. Every method is
/// `unsafe` because it executes the instructions of its width: callers must run on a CPU that
/// has them (the `Backend` availability check) and be compiled with those target features, so
/// that the `#[inline(always)]` methods turn into single instructions.
pub(crate) trait Vector: Copy {
    /// 16-byte blocks per register.
    const BLOCKS: usize;
    const BYTES: usize = 16 * Self::BLOCKS;
    /// Unaligned load/store of a whole register at `p`.
    unsafe fn load(p: *const u8) -> Self;
    unsafe fn store(p: *mut u8, v: Self);
    /// A whole register at `p`, loaded at this point of the code. The xmm instantiation forces
    /// the load (inline MOVDQU): for 12 blocks in 16 registers LLVM otherwise reuses the
    /// ciphertext it loaded at the start of a CBC batch as the chaining values and spills it
    /// to the stack. The wider ones, with 8 vectors an iteration, keep the plain load.
    #[inline(always)]
    unsafe fn load_fresh(p: *const u8) -> Self {
        // SAFETY: forwarded from the caller.
        unsafe { Self::load(p) }
    }
    /// The first `blocks` (1 <= blocks < BLOCKS) blocks at `p`, the rest zero; touches only
    /// those blocks.
    unsafe fn load_part(p: *const u8, blocks: usize) -> Self;
    /// Stores the first `blocks` (1 <= blocks < BLOCKS) blocks of `v` at `p`; touches only
    /// those blocks.
    unsafe fn store_part(p: *mut u8, blocks: usize, v: Self);

    /// Round key `k` broadcast to every block, loaded from the schedule at this point of the
    /// code. On ymm this is a forced load (inline `vbroadcasti128` from memory): it keeps the
    /// key in a register for one round only, so the 8 blocks stay interleaved without spilling
    /// round keys (LLVM otherwise hoists all keys, runs out of registers and serialises blocks).
    /// On zmm (32 registers) a plain broadcast that LLVM keeps in registers.
    unsafe fn round_key(k: &[u8; 16]) -> Self;
    /// One 128-bit value broadcast to every block.
    unsafe fn splat(x: __m128i) -> Self;
    /// The 128-bit value with qwords `[q[0], q[1]]` (little-endian order) in every block, from
    /// memory. On ymm: two 64-bit broadcast loads and a blend, no shuffle (Zen 3 runs shuffles
    /// on the VAES pipes; loads and blends stay off them).
    unsafe fn splat_qwords(q: &[u64; 2]) -> Self;
    unsafe fn zero() -> Self;

    unsafe fn xor(a: Self, b: Self) -> Self;
    /// `a ^ (b & c)` (one VPTERNLOGQ on zmm).
    unsafe fn xor_and(a: Self, b: Self, c: Self) -> Self;
    /// `a ^ b ^ c` (one VPTERNLOGQ on zmm).
    unsafe fn xor3(a: Self, b: Self, c: Self) -> Self {
        // SAFETY: forwarded from the caller.
        unsafe { Self::xor(a, Self::xor(b, c)) }
    }
    unsafe fn aesenc(x: Self, k: Self) -> Self;
    unsafe fn aesenclast(x: Self, k: Self) -> Self;
    unsafe fn aesdec(x: Self, k: Self) -> Self;
    unsafe fn aesdeclast(x: Self, k: Self) -> Self;

    /// The block before each block of `cur`: `[prev.last, cur[0], ..., cur[BLOCKS - 2]]`.
    unsafe fn prev_blocks(prev: Self, cur: Self) -> Self;

    /// CTR selector words `W_k` for vector `i` of a batch of `n` blocks (a power of two, a
    /// constant after inlining: `VECS * BLOCKS`) starting at offset `r` (see `aesni`, "CTR
    /// counter blocks"): lane `j` is block `k = BLOCKS * i + j`. Vector arithmetic only (`r`
    /// may be secret).
    unsafe fn ctr_select(r: u64, i: usize, n: u64) -> Self;

    /// Carry-less multiply of the 64-bit halves selected by `IMM` in every 128-bit lane
    /// (VPCLMULQDQ), for GHASH. Needs VPCLMULQDQ besides the width's features.
    unsafe fn clmul<const IMM: i32>(a: Self, b: Self) -> Self;
    /// Byte shuffle within each 128-bit lane (VPSHUFB).
    unsafe fn shuffle_bytes(a: Self, idx: Self) -> Self;
    /// Lane-wise 32-bit addition (VPADDD): GCM's inc32 on little-endian counter lanes.
    unsafe fn add32(a: Self, b: Self) -> Self;
    /// Swaps the two 64-bit halves of every 128-bit lane (VPSHUFD 0x4e).
    unsafe fn swap_halves(a: Self) -> Self;
    /// `x` in block 0, zero in the others.
    unsafe fn zext128(x: __m128i) -> Self;
    /// XOR of all blocks of `v`.
    unsafe fn fold128(v: Self) -> __m128i;
    /// A whole register of GHASH key material from memory, loaded at this point of the code
    /// (ymm: inline assembly, so that LLVM neither hoists the 16 key registers out of the loop
    /// nor spills copies of them to the stack; zmm: a plain load).
    unsafe fn load_key(p: *const u8) -> Self;
}

/// Vectors per loop iteration of the zmm instantiation, of ymm CBC decryption, of the
/// intrinsic CTR kernel (tails of [`ctr_asm`]) and of GCM at every width. ECB on xmm and ymm
/// and CBC decryption on xmm run [`XMM_VECS`].
pub(crate) const VECS: usize = 8;

/// Registers per loop iteration of the xmm (`aesni`) ECB and CBC-decrypt kernels and of the
/// ymm (`vaes256`) ECB kernels (12 blocks on xmm, 24 on ymm).
///
/// IMPLEMENTATION NOTE (issue 19): with 8 blocks an iteration (8 chains of latency 4 at two
/// AESENC a cycle on Zen 2/3: exactly enough, no slack) the loop ran at 95-96% of the AES
/// rate on Zen 3, 99% for AES-256: the next batch's loads and whitening sit behind the
/// current batch's 80-112 AES instructions in the scheduler, so each iteration starts with a
/// bubble. 12 blocks (+ one round key = 13 of 16 xmm registers) amortise it over 1.5x the work
/// and leave 4 chains of slack: an asm model of the loop went from 9.88 to 10.36 GB/s
/// (AES-128) and 7.26 to 7.40 (AES-256) on Zen 3. The same on ymm (session 4, `aesx bench`,
/// 16 KiB, best of 3 runs, vaes256 AES-128 / AES-256): ECB encryption 19.15 -> 20.03 /
/// 13.87 -> 14.44 GB/s, decryption 18.89 -> 19.78 / 13.74 -> 14.28, CBC decryption
/// 18.57 -> 19.25 / 13.48 -> 14.05 (aes-limit ymm 20.58 / 14.70). LLVM keeps the 12 ymm
/// registers and the round key in registers in the main loops (checked in the
/// disassembly: the only stack operands there are the decryption schedule's round keys).
/// ymm CBC decryption's intrinsic kernel stays at [`VECS`]: with 12 its tail shapes spilled
/// to 1008 B of stack, past the wipe that follows (`backend::stack_depth`); its main loop runs
/// 12 ymm registers in inline assembly ([`cbc_asm`]). 16 blocks would need the round keys as
/// memory operands, which Zen 3 runs at 80% of the register rate (same model). CTR runs 12
/// registers at both xmm and ymm width in inline assembly ([`ctr_asm`]); in intrinsics a
/// 12-block CTR made LLVM hoist and spill round keys.
pub(crate) const XMM_VECS: usize = 12;

/// Runs `$f::<NR>` with NR the schedule's round count as a const.
macro_rules! by_nr {
    ($rounds:expr, $f:ident ( $($a:expr),* )) => {
        match $rounds {
            10 => $f::<10>($($a),*),
            12 => $f::<12>($($a),*),
            _ => $f::<14>($($a),*),
        }
    };
}
use by_nr;

/// Runs `$f::<NR, SEAL, ..>` with NR the schedule's round count and SEAL `$seal` as consts
/// (the buffer-to-buffer GCM entry points; `..` the further const arguments given, if any).
macro_rules! by_nr_seal {
    ($rounds:expr, $seal:expr, $f:ident $(:: <$($g:tt),*>)? ( $($a:expr),* )) => {
        match ($rounds, $seal) {
            (10, true) => $f::<10, true $($(, $g)*)?>($($a),*),
            (12, true) => $f::<12, true $($(, $g)*)?>($($a),*),
            (_, true) => $f::<14, true $($(, $g)*)?>($($a),*),
            (10, false) => $f::<10, false $($(, $g)*)?>($($a),*),
            (12, false) => $f::<12, false $($(, $g)*)?>($($a),*),
            (_, false) => $f::<14, false $($(, $g)*)?>($($a),*),
        }
    };
}
use by_nr_seal;

/// Runs `$f::<V, NR, .., N>` with `N` = `$vecs` (0..=VECS) vectors, the last possibly partial. Exact
/// counts: a vector past the end (zero-filled, store skipped) made LLVM split the blocks' AES
/// chains into conditional pieces, hoist the round keys and spill them.
macro_rules! by_count {
    ($vecs:expr, $f:ident :: <$($g:tt),*> ( $($a:expr),* )) => {
        match $vecs {
            0 => {}
            1 => $f::<$($g),*, 1>($($a),*),
            2 => $f::<$($g),*, 2>($($a),*),
            3 => $f::<$($g),*, 3>($($a),*),
            4 => $f::<$($g),*, 4>($($a),*),
            5 => $f::<$($g),*, 5>($($a),*),
            6 => $f::<$($g),*, 6>($($a),*),
            7 => $f::<$($g),*, 7>($($a),*),
            _ => $f::<$($g),*, 8>($($a),*),
        }
    };
}
use by_count;

/// [`by_count`] for kernels of `B` vectors an iteration: tails of 0..=B vectors. `B` is a
/// constant, so only one of the two matches survives compilation.
macro_rules! by_count_b {
    ($b:expr, $vecs:expr, $f:ident :: <$($g:tt),*> ( $($a:expr),* )) => {
        if $b <= 8 {
            by_count!($vecs, $f::<$($g),*>($($a),*))
        } else {
            match $vecs {
                0 => {}
                1 => $f::<$($g),*, 1>($($a),*),
                2 => $f::<$($g),*, 2>($($a),*),
                3 => $f::<$($g),*, 3>($($a),*),
                4 => $f::<$($g),*, 4>($($a),*),
                5 => $f::<$($g),*, 5>($($a),*),
                6 => $f::<$($g),*, 6>($($a),*),
                7 => $f::<$($g),*, 7>($($a),*),
                8 => $f::<$($g),*, 8>($($a),*),
                9 => $f::<$($g),*, 9>($($a),*),
                10 => $f::<$($g),*, 10>($($a),*),
                11 => $f::<$($g),*, 11>($($a),*),
                _ => $f::<$($g),*, 12>($($a),*),
            }
        }
    };
}

/// Loads vector `i` of the `n` vectors of `buf`: a whole register, except that with `TAIL` the
/// last one (`i == n - 1`) may hold fewer blocks (at least one). `i` and `n` are constants
/// after unrolling, so only the last vector of a tail has a branch, on the length.
#[inline(always)]
unsafe fn load_at<V: Vector, const TAIL: bool>(buf: &[u8], i: usize, n: usize) -> V {
    // SAFETY: forwarded; `buf` is `len` readable bytes.
    unsafe { load_ptr::<V, TAIL>(buf.as_ptr(), buf.len(), i, n) }
}

/// [`load_at`] from `len` readable bytes at `buf`.
#[inline(always)]
unsafe fn load_ptr<V: Vector, const TAIL: bool>(
    buf: *const u8,
    len: usize,
    i: usize,
    n: usize,
) -> V {
    let off = V::BYTES * i;
    let p = buf.wrapping_add(off);
    let have = len.wrapping_sub(off);
    debug_assert!(have >= 16 && (i + 1 == n || have >= V::BYTES));
    if !TAIL || i + 1 < n || have >= V::BYTES {
        // SAFETY: a full register at `p` lies inside `buf` (the caller's batch or tail shape);
        // the caller's CPU runs `V`.
        unsafe { V::load(p) }
    } else {
        // SAFETY: `have / 16` (>= 1) whole blocks at `p` lie inside `buf`.
        unsafe { V::load_part(p, have / 16) }
    }
}

/// Stores vector `i` of `n`, like [`load_at`].
#[inline(always)]
unsafe fn store_at<V: Vector, const TAIL: bool>(buf: &mut [u8], i: usize, n: usize, v: V) {
    // SAFETY: forwarded; `buf` is `len` writable bytes.
    unsafe { store_ptr::<V, TAIL>(buf.as_mut_ptr(), buf.len(), i, n, v) }
}

/// [`store_at`] into `len` writable bytes at `buf`.
#[inline(always)]
unsafe fn store_ptr<V: Vector, const TAIL: bool>(
    buf: *mut u8,
    len: usize,
    i: usize,
    n: usize,
    v: V,
) {
    let off = V::BYTES * i;
    let p = buf.wrapping_add(off);
    let have = len.wrapping_sub(off);
    debug_assert!(have >= 16 && (i + 1 == n || have >= V::BYTES));
    if !TAIL || i + 1 < n || have >= V::BYTES {
        // SAFETY: as in `load_at`.
        unsafe { V::store(p, v) }
    } else {
        // SAFETY: `have / 16` (>= 1) whole blocks at `p` lie inside `buf`.
        unsafe { V::store_part(p, have / 16, v) }
    }
}

// ---------------------------------------------------------------------------------------------
// ECB

/// `N` vectors (the last one possibly partial) of `buf`; `ks` is the encryption schedule, or the
/// equivalent-inverse-cipher schedule when `DEC`.
#[inline(always)]
unsafe fn ecb_vecs<
    V: Vector,
    const NR: usize,
    const N: usize,
    const DEC: bool,
    const TAIL: bool,
>(
    ks: &[[u8; 16]; 15],
    buf: &mut [u8],
) {
    // SAFETY: for the whole body, the caller runs on a CPU with `V`'s features; every access is inside
    // `buf` (`load_at`/`store_at`).
    unsafe {
        let k0 = V::round_key(&ks[0]);
        let mut x: [V; N] = [V::zero(); N];
        for i in 0..N {
            x[i] = V::xor(load_at::<V, TAIL>(buf, i, N), k0);
        }
        for r in 1..NR {
            let k = V::round_key(&ks[r]);
            for v in x.iter_mut() {
                *v = if DEC {
                    V::aesdec(*v, k)
                } else {
                    V::aesenc(*v, k)
                };
            }
        }
        let kl = V::round_key(&ks[NR]);
        for i in 0..N {
            let y = if DEC {
                V::aesdeclast(x[i], kl)
            } else {
                V::aesenclast(x[i], kl)
            };
            store_at::<V, TAIL>(buf, i, N, y);
        }
    }
}

#[inline(always)]
unsafe fn ecb_tail<V: Vector, const NR: usize, const N: usize>(
    ks: &[[u8; 16]; 15],
    dec: bool,
    buf: &mut [u8],
) {
    // SAFETY: forwarded from the caller.
    unsafe {
        if dec {
            ecb_vecs::<V, NR, N, true, true>(ks, buf)
        } else {
            ecb_vecs::<V, NR, N, false, true>(ks, buf)
        }
    }
}

#[inline(always)]
unsafe fn ecb<V: Vector, const NR: usize, const B: usize, const DEC: bool>(
    ks: &[[u8; 16]; 15],
    buf: &mut [u8],
) {
    let mut chunks = buf.chunks_exact_mut(V::BYTES * B);
    for c in &mut chunks {
        // SAFETY: forwarded from the caller.
        unsafe { ecb_vecs::<V, NR, B, DEC, false>(ks, c) }
    }
    let rest = chunks.into_remainder();
    // SAFETY: forwarded from the caller.
    unsafe {
        by_count_b!(
            B,
            rest.len().div_ceil(V::BYTES),
            ecb_tail::<V, NR>(ks, DEC, rest)
        )
    }
}

/// ECB encryption of whole blocks, `B` vectors an iteration.
#[inline(always)]
pub(crate) unsafe fn ecb_enc<V: Vector, const NR: usize, const B: usize>(
    rk: &Keys,
    buf: &mut [u8],
) {
    // SAFETY: forwarded from the caller.
    unsafe { ecb::<V, NR, B, false>(&rk.enc, buf) }
}

/// ECB decryption of whole blocks, `B` vectors an iteration. The decryption schedule is
/// derived into a local that is wiped before returning.
#[inline(always)]
pub(crate) unsafe fn ecb_dec<V: Vector, const NR: usize, const B: usize>(
    rk: &Keys,
    buf: &mut [u8],
) {
    // SAFETY: the caller runs on a CPU with AES-NI (and `V`'s features).
    let dk = unsafe { dec_schedule::<NR>(rk) };
    // SAFETY: forwarded from the caller.
    unsafe { ecb::<V, NR, B, true>(&dk.0, buf) }
}

// ---------------------------------------------------------------------------------------------
// CBC decryption

/// `N` vectors of one batch. IMPLEMENTATION NOTE: the chaining value of vector `i` is the
/// ciphertext one block before it, loaded from `buf` at a one-block offset; vectors are
/// finished and stored from the last to the first, so each of those loads still sees
/// ciphertext although the buffer is decrypted in place. Vector 0's first chaining block is
/// the previous batch's last ciphertext block, carried in the last block of `carry`. No
/// ciphertext is kept in registers across the rounds, so 8 vectors and a round key fit in 16
/// ymm registers.
#[inline(always)]
unsafe fn cbc_dec_vecs<V: Vector, const NR: usize, const N: usize, const TAIL: bool>(
    dk: &[[u8; 16]; 15],
    carry: &mut V,
    c: &mut [u8],
) {
    // SAFETY: for the whole body, the caller runs on a CPU with `V`'s features; every access is inside
    // `c`: `load_at`/`store_at`, and for i >= 1 the chaining load starts at byte
    // `V::BYTES * i - 16 >= 0` and covers whole registers only where `c` has them, else the
    // `have / 16 - 1 >= 1` blocks that precede the end.
    unsafe {
        let k0 = V::round_key(&dk[0]);
        let mut x: [V; N] = [V::zero(); N];
        for i in 0..N {
            x[i] = V::xor(load_at::<V, TAIL>(c, i, N), k0);
        }
        // The last ciphertext block of a full batch, before it is overwritten (a tail is the
        // last call, with no batch after it).
        let next = if TAIL {
            *carry
        } else {
            V::load(c.as_ptr().add(V::BYTES * (N - 1)))
        };
        for r in 1..NR {
            let k = V::round_key(&dk[r]);
            for v in x.iter_mut() {
                *v = V::aesdec(*v, k);
            }
        }
        for i in (0..N).rev() {
            let kl = V::round_key(&dk[NR]);
            let chain = if i == 0 {
                V::prev_blocks(*carry, load_at::<V, TAIL>(c, 0, N))
            } else {
                let off = V::BYTES * i - 16;
                let have = c.len() - off;
                let p = c.as_ptr().add(off);
                if !TAIL || i + 1 < N || have >= V::BYTES {
                    V::load_fresh(p)
                } else {
                    V::load_part(p, have / 16 - 1)
                }
            };
            store_at::<V, TAIL>(c, i, N, V::aesdeclast(x[i], V::xor(kl, chain)));
        }
        *carry = next;
    }
}

#[inline(always)]
unsafe fn cbc_dec_tail<V: Vector, const NR: usize, const N: usize>(
    dk: &[[u8; 16]; 15],
    carry: &mut V,
    c: &mut [u8],
) {
    // SAFETY: forwarded from the caller.
    unsafe { cbc_dec_vecs::<V, NR, N, true>(dk, carry, c) }
}

/// CBC decryption of whole blocks in place, `B` vectors an iteration; `iv` becomes the last
/// ciphertext block.
#[inline(always)]
pub(crate) unsafe fn cbc_dec<V: Vector, const NR: usize, const B: usize>(
    rk: &Keys,
    iv: &mut [u8; 16],
    buf: &mut [u8],
) {
    if buf.is_empty() {
        return;
    }
    // SAFETY: the caller runs on a CPU with AES-NI (and `V`'s features).
    let dk = unsafe { dec_schedule::<NR>(rk) };
    let last: [u8; 16] = buf[buf.len() - 16..].try_into().unwrap();
    // SAFETY: `iv` is 16 readable bytes (SSE2, which every x86-64 has).
    let mut chain = unsafe { _mm_loadu_si128(iv.as_ptr().cast()) };
    // Whole iterations of the inline-assembly loop ([`cbc_asm`], 12 registers) on ymm from
    // three on (as for CTR, [`ctr_b2b`]); the rest, and zmm, on the intrinsic kernel. (On xmm
    // the `aesni` backend runs messages of 12 blocks and more wholly in assembly,
    // `aesni::cbc_decrypt_nostack`, before this kernel is called.)
    let per = cbc_asm::REGS * V::BYTES;
    let n = if V::BLOCKS == 2 && buf.len() >= 3 * per {
        buf.len() / per
    } else {
        0
    };
    if n > 0 {
        // SAFETY: `V` is `__m256i` here, so the caller's CPU has AVX2 and VAES; `n * per`
        // bytes at `buf`'s start lie inside `buf`.
        chain = unsafe { cbc_asm::ymm(&dk.0, NR, chain, buf.as_mut_ptr(), n) };
    }
    // SAFETY: the caller runs on a CPU with `V`'s features.
    let mut carry = unsafe { V::splat(chain) };
    let mut chunks = buf[n * per..].chunks_exact_mut(V::BYTES * B);
    for c in &mut chunks {
        // SAFETY: forwarded from the caller.
        unsafe { cbc_dec_vecs::<V, NR, B, false>(&dk.0, &mut carry, c) }
    }
    let rest = chunks.into_remainder();
    // SAFETY: forwarded from the caller.
    unsafe {
        by_count_b!(
            B,
            rest.len().div_ceil(V::BYTES),
            cbc_dec_tail::<V, NR>(&dk.0, &mut carry, rest)
        )
    }
    *iv = last;
}

// ---------------------------------------------------------------------------------------------
// CTR

/// The whitened base `A ^ k0` and the carry word `D'` of the batch whose aligned first
/// counter is `a`, as registers (see `aesni`, "CTR counter blocks").
#[inline(always)]
unsafe fn ctr_words<V: Vector>(k0: &[u8; 16], a: u128) -> (V, V) {
    let batch = (VECS * V::BLOCKS) as u64;
    let ((lo, hi), (dlo, dhi)) = ctr_batch_words(a, batch);
    let (aq, dq) = ([lo as u64, hi as u64], [dlo as u64, dhi as u64]);
    // SAFETY: the caller runs on a CPU with `V`'s features.
    unsafe {
        (
            V::xor(V::splat_qwords(&aq), V::round_key(k0)),
            V::splat_qwords(&dq),
        )
    }
}

/// `N` vectors of one batch, from its words `(av, dv)` ([`ctr_words`]): `len` bytes at `src`
/// XORed with the keystream into `dst` (the same bytes, or bytes that do not overlap them;
/// the last vector may be partial when `TAIL`).
#[inline(always)]
unsafe fn ctr_vecs<V: Vector, const NR: usize, const N: usize, const TAIL: bool>(
    ks: &[[u8; 16]; 15],
    w: &[V; VECS],
    (av, dv): (V, V),
    src: *const u8,
    dst: *mut u8,
    len: usize,
) {
    // SAFETY: for the whole body, the caller runs on a CPU with `V`'s features; every access
    // is inside the `len` bytes of `src` or `dst` (`load_ptr`/`store_ptr`).
    unsafe {
        let mut x: [V; N] = [V::zero(); N];
        for i in 0..N {
            x[i] = V::xor_and(av, dv, w[i]);
        }
        for r in 1..NR {
            let k = V::round_key(&ks[r]);
            for v in x.iter_mut() {
                *v = V::aesenc(*v, k);
            }
        }
        // The last round key is loaded again for each vector rather than kept live across the
        // stores: held in a register there it was spilled to the stack for AES-256.
        for i in 0..N {
            let d = V::xor(V::round_key(&ks[NR]), load_ptr::<V, TAIL>(src, len, i, N));
            store_ptr::<V, TAIL>(dst, len, i, N, V::aesenclast(x[i], d));
        }
    }
}

#[inline(always)]
unsafe fn ctr_tail<V: Vector, const NR: usize, const N: usize>(
    ks: &[[u8; 16]; 15],
    w: &[V; VECS],
    a: u128,
    (src, dst, len): (*const u8, *mut u8, usize),
) {
    // SAFETY: forwarded from the caller.
    unsafe { ctr_vecs::<V, NR, N, true>(ks, w, ctr_words(&ks[0], a), src, dst, len) }
}

/// `buf ^= E(ctr) || E(ctr + 1) || ...` (mod 2^128), whole blocks.
#[inline(always)]
pub(crate) unsafe fn ctr<V: Vector, const NR: usize>(rk: &Keys, ctr: u128, buf: &mut [u8]) {
    let p = buf.as_mut_ptr();
    // SAFETY: forwarded from the caller; in place over `buf`.
    unsafe { ctr_raw::<V, NR>(rk, ctr, p, p, buf.len()) }
}

/// [`ctr`] from `len` bytes at `src` into `len` bytes at `dst` (whole blocks): the same
/// bytes (in place) or bytes that do not overlap them. (`vaes512` on Intel, both forms.)
///
/// # Safety
/// The CPU runs `V` (and AES-NI); `src` is readable and `dst` writable for `len` bytes, and
/// the two ranges are equal or disjoint.
#[inline(always)]
pub(crate) unsafe fn ctr_raw<V: Vector, const NR: usize>(
    rk: &Keys,
    ctr: u128,
    src: *const u8,
    dst: *mut u8,
    len: usize,
) {
    let batch = (VECS * V::BLOCKS) as u64;
    // Batches start at aligned counters `a`; the offset r is the same for all of them.
    let r = ctr as u64 & (batch - 1);
    // An explicit loop, not `array::from_fn`: its closure carries no target features and was
    // called out of line once per vector.
    if V::BLOCKS == 4 && len >= V::BYTES * VECS {
        // SAFETY: the caller runs on a CPU with `V`'s features.
        let mut w: [V; VECS] = [unsafe { V::zero() }; VECS];
        // All of them, in a loop of constant length: unrolled, the selectors stay in registers.
        // IMPLEMENTATION NOTE (issues 13 and 16): with the length-bounded loop below for every
        // message, `w` lived on the stack (zeroed, written, read back: 16 zmm stores and 8
        // loads before the first round). Zen 4, `aesx bench --backends vaes512 --ops ctr`,
        // four runs alternated, best: 16 KiB AES-128 21.60 -> 21.97 GB/s, AES-256 15.57 ->
        // 15.78, 4 KiB 17.96 -> 19.21 / 13.61 -> 14.25. Only at zmm width, where `ctr` runs
        // whole messages: at xmm and ymm it runs the tails of `ctr_asm`'s loop, and a second
        // copy of its body there took the deepest kernel frame from about 1150 to 1272 bytes,
        // past what `aesni::wipe_stack_xy` covers with its margin.
        for (i, w) in w.iter_mut().enumerate() {
            // SAFETY: as above.
            *w = unsafe { V::ctr_select(r, i, batch) };
        }
        // SAFETY: forwarded from the caller.
        return unsafe { ctr_from::<V, NR>(rk, ctr, (src, dst, len), &w) };
    }
    // SAFETY: as above.
    let mut w: [V; VECS] = [unsafe { V::zero() }; VECS];
    // Only the selectors a short message uses (a length, not a secret, bounds the loop).
    let used = len.div_ceil(V::BYTES).min(VECS);
    for (i, w) in w.iter_mut().enumerate().take(used) {
        // SAFETY: as above.
        *w = unsafe { V::ctr_select(r, i, batch) };
    }
    // SAFETY: forwarded from the caller.
    unsafe { ctr_from::<V, NR>(rk, ctr, (src, dst, len), &w) }
}

/// [`ctr_raw`] with its selectors `w` made.
#[inline(always)]
unsafe fn ctr_from<V: Vector, const NR: usize>(
    rk: &Keys,
    ctr: u128,
    (src, dst, len): (*const u8, *mut u8, usize),
    w: &[V; VECS],
) {
    let batch = (VECS * V::BLOCKS) as u64;
    let per = V::BYTES * VECS;
    let mut a = ctr & !(batch as u128 - 1);
    let whole = len / per * per;
    let mut off = 0;
    while off < whole {
        // The batch's words are loaded inside its iteration: prepared one iteration ahead
        // (tried for Zen 2, where llvm-mca models the counter path as the bound) they held two
        // more registers across the rounds and LLVM spilled round keys for AES-256.
        // SAFETY: forwarded from the caller; bytes `off..off + per` lie inside both buffers.
        unsafe {
            ctr_vecs::<V, NR, VECS, false>(
                &rk.enc,
                w,
                ctr_words(&rk.enc[0], a),
                src.add(off),
                dst.add(off),
                per,
            )
        }
        a = a.wrapping_add(batch as u128);
        off += per;
    }
    let rest = len - whole;
    // SAFETY: forwarded from the caller; the rest lies inside both buffers.
    unsafe {
        let io = (src.add(whole), dst.add(whole), rest);
        by_count!(
            rest.div_ceil(V::BYTES),
            ctr_tail::<V, NR>(&rk.enc, w, a, io)
        )
    }
}

/// CTR of `len` bytes (whole blocks) from `src` into `dst`, which are equal (in place) or
/// disjoint: the scalar-counter loop of [`ctr_asm`] (12 registers an iteration) for whole
/// iterations, [`ctr`] for the rest. `V` is `__m128i` or `__m256i`. (On Intel, calls of 1 KiB
/// and more go to the selector loop instead: `aesni::ctr_nostack`.)
///
/// # Safety
/// The CPU runs `V` (and AES-NI); `src` is readable and `dst` writable for `len` bytes, and
/// the two ranges are equal or disjoint.
#[inline(always)]
pub(crate) unsafe fn ctr_b2b<V: Vector, const NR: usize>(
    rk: &Keys,
    ctr: u128,
    src: *const u8,
    dst: *mut u8,
    len: usize,
) {
    debug_assert!(len.is_multiple_of(16));
    let per = ctr_asm::REGS * V::BYTES;
    // IMPLEMENTATION NOTE: below three iterations the intrinsic kernel alone is as fast or
    // faster (measured on Zen 3: vaes256 at 1 KiB, two iterations and a 16-block tail, was
    // 8% slower through both kernels than through the intrinsic one): the asm loop's
    // prologue writes a whole iteration's counters before its first loads, and the tail
    // then pays the intrinsic kernel's setup too.
    let n = if len >= 3 * per { len / per } else { 0 };
    // SAFETY: the caller's guarantees, which are those of the asm loops and of `ctr`; the
    // tail lies inside both buffers (`n * per <= len`).
    unsafe {
        if n > 0 {
            match V::BLOCKS {
                1 => ctr_asm::xmm(rk, ctr, src, dst, n),
                _ => ctr_asm::ymm(rk, ctr, src, dst, n),
            }
        }
        ctr_rest::<V, NR>(rk, ctr, src, dst, len, n * per);
    }
}

/// Every whole iteration of a CTR call (`ctr_b2b`'s arguments) through the selector loop of
/// [`ctr_asm`] (Intel; `aesni::ctr_nostack` decides when); returns the bytes done, the rest
/// is the caller's.
///
/// # Safety
/// As [`ctr_b2b`].
#[inline(always)]
pub(crate) unsafe fn ctr_sel_iterations<V: Vector>(
    rk: &Keys,
    ctr: u128,
    src: *const u8,
    dst: *mut u8,
    len: usize,
) -> usize {
    let per = ctr_asm::SEL_REGS * V::BYTES;
    let n = len / per;
    if n > 0 {
        // SAFETY: the caller's guarantees; the loop covers `n * per <= len` bytes.
        unsafe {
            match V::BLOCKS {
                1 => ctr_asm::xmm_sel(rk, ctr, src, dst, n),
                2 => ctr_asm::ymm_sel(rk, ctr, src, dst, n),
                _ => ctr_asm::zmm_sel(rk, ctr, src, dst, n * per),
            }
        }
    }
    n * per
}

/// Byte masks of the (at most 8) zmm registers that hold the bytes of a `len`-byte call after
/// its last whole iteration of 512 bytes (the tails of `ctr_asm::zmm_sel` and
/// `ecb_asm::zmm_encrypt` / `zmm_decrypt`): all ones for whole registers, the low bytes for the
/// one the data ends in, zero past it. Lengths only.
pub(crate) fn zmm_tail_masks(len: usize) -> [u64; 8] {
    let rem = len % 512;
    core::array::from_fn(|i| {
        let b = rem.saturating_sub(64 * i).min(64);
        if b == 64 { u64::MAX } else { (1u64 << b) - 1 }
    })
}

/// A whole CTR call of `len` bytes (whole blocks) on zmm in the assembly of
/// [`ctr_asm::zmm_sel`] (`vaes512` on AMD; `aesni::ctr_nostack` decides when).
///
/// # Safety
/// The CPU has AVX-512F/BW/VL and VAES; `src` is readable and `dst` writable for `len`
/// bytes, and the two are equal or do not overlap.
#[inline(always)]
pub(crate) unsafe fn ctr_zmm_whole(rk: &Keys, ctr: u128, src: *const u8, dst: *mut u8, len: usize) {
    // SAFETY: the caller's guarantees are `zmm_sel`'s and `zmm_r1`'s.
    unsafe {
        if len >= ctr_asm::R1_MIN {
            ctr_asm::zmm_r1(rk, ctr, src, dst, len)
        } else {
            ctr_asm::zmm_sel(rk, ctr, src, dst, len)
        }
    }
}

/// The bytes of a `vaes512` (AMD) CTR call of `len` bytes that [`ctr_zmm_whole`] takes: all of
/// them, except the last few blocks after the whole 32-block batches of a call long enough
/// for [`ctr_asm::zmm_r1`] (those go to `aesni::ctr_small`).
#[inline(always)]
pub(crate) fn ctr_zmm_prefix(len: usize) -> usize {
    let tail = len % (16 * 32);
    if len >= ctr_asm::R1_MIN && tail <= 16 * ZMM_SMALL_TAIL {
        len - tail
    } else {
        len
    }
}

/// Tail blocks after [`ctr_asm::zmm_r1`]'s batches that go to xmm code.
pub(crate) const ZMM_SMALL_TAIL: usize = 4;

/// Bytes `done..len` of a [`ctr_b2b`] call through the intrinsic kernel.
///
/// # Safety
/// As [`ctr_b2b`], `done <= len`, a multiple of 16.
#[inline(always)]
unsafe fn ctr_rest<V: Vector, const NR: usize>(
    rk: &Keys,
    ctr: u128,
    src: *const u8,
    dst: *mut u8,
    len: usize,
    done: usize,
) {
    if done < len {
        // SAFETY: the tail lies inside both buffers (`done <= len`), which are equal or
        // disjoint.
        unsafe {
            if src != dst.cast_const() {
                core::ptr::copy_nonoverlapping(src.add(done), dst.add(done), len - done);
            }
            let rest = core::slice::from_raw_parts_mut(dst.add(done), len - done);
            self::ctr::<V, NR>(rk, ctr.wrapping_add((done / 16) as u128), rest);
        }
    }
}

#[cfg(test)]
mod tests {
    //! Every instantiation called directly (no dispatch shortcuts), against `soft`, on every
    //! block count up to three batches of zmm plus a few, so every tail shape of every width
    //! (xmm: 12-block batches, tails of 1..=11) is crossed, and on ymm the CBC-decrypt
    //! assembly loop ([`cbc_asm`], from 72 blocks) is run for three and four iterations with
    //! every tail of 0..=23 blocks after three; CTR counters around the 64- and
    //! 128-bit carries at every offset inside a counter group. The zmm tests run only
    //! where the CPU has AVX-512 and say so when they skip.
    use super::*;
    use crate::{Aes, Backend};
    use std::vec::Vec;

    type Kernels = (
        fn(&Keys, &mut [u8]),
        fn(&Keys, &mut [u8]),
        fn(&Keys, &mut [u8; 16], &mut [u8]),
        fn(&Keys, u128, &mut [u8]),
    );

    fn data(n: usize, seed: u8) -> Vec<u8> {
        (0..n)
            .map(|i| (i as u8).wrapping_mul(29).wrapping_add(seed) ^ (i >> 7) as u8)
            .collect()
    }

    fn check(name: &str, (enc, dec, cbc_dec, ctr): Kernels) {
        for kl in [16, 24, 32] {
            let key = data(kl, 3);
            let soft = Aes::with_backend(&key, Backend::Soft).unwrap();
            let hw = crate::backend::aesni::expand(&key);
            for blocks in 0..=(3 * 32 + 5) {
                let src = data(16 * blocks, blocks as u8);
                let (mut x, mut y) = (src.clone(), src.clone());
                enc(&hw, &mut x);
                soft.encrypt_blocks(&mut y);
                assert_eq!(x, y, "{name} ecb-enc key={kl} blocks={blocks}");
                dec(&hw, &mut x);
                assert_eq!(x, src, "{name} ecb-dec key={kl} blocks={blocks}");
                let iv: [u8; 16] = data(16, 77).try_into().unwrap();
                let mut ct = src.clone();
                soft.cbc_encrypt(&iv, &mut ct).unwrap();
                let mut v = iv;
                let mut pt = ct.clone();
                cbc_dec(&hw, &mut v, &mut pt);
                assert_eq!(pt, src, "{name} cbc-dec key={kl} blocks={blocks}");
                if blocks > 0 {
                    assert_eq!(v[..], ct[ct.len() - 16..], "{name} cbc-dec iv out");
                }
                // Offsets 0..=3 in a counter group of 4 (xmm) and 0..=15 in 16 (ymm).
                for c in [
                    0u128,
                    5,
                    14,
                    u64::MAX as u128 - 40,
                    (9 << 64) | (u64::MAX as u128 - 3),
                    u128::MAX - 50,
                    u128::MAX,
                ] {
                    let (mut x, mut y) = (src.clone(), src.clone());
                    ctr(&hw, c, &mut x);
                    soft.ctr_xor_at(&c.to_be_bytes(), 0, &mut y);
                    assert_eq!(x, y, "{name} ctr key={kl} blocks={blocks} ctr={c:x}");
                }
            }
        }
    }

    #[test]
    fn xmm_matches_soft() {
        if !Backend::Aesni.is_available() {
            std::eprintln!("SKIPPED: this CPU has no AES-NI (xmm kernels not run)");
            return;
        }
        use crate::backend::aesni;
        check(
            "xmm",
            (
                aesni::encrypt_blocks,
                aesni::decrypt_blocks,
                aesni::cbc_decrypt,
                aesni::ctr_xor,
            ),
        );
    }

    #[test]
    fn ymm_matches_soft() {
        if !Backend::Vaes256.is_available() {
            std::eprintln!("SKIPPED: this CPU has no VAES + AVX2 (ymm kernels not run)");
            return;
        }
        check(
            "ymm",
            (
                ymm::encrypt_blocks,
                ymm::decrypt_blocks,
                ymm::cbc_decrypt,
                ymm::ctr_xor,
            ),
        );
    }

    #[test]
    fn zmm_matches_soft() {
        if !Backend::Vaes512.is_available() {
            std::eprintln!("SKIPPED: this CPU has no AVX-512 + VAES (zmm kernels not run)");
            return;
        }
        check(
            "zmm",
            (
                zmm::encrypt_blocks,
                zmm::decrypt_blocks,
                zmm::cbc_decrypt,
                zmm::ctr_xor,
            ),
        );
    }

    type CtrKernels = (
        fn(&Keys, u128, &mut [u8]),
        fn(&Keys, u128, &[u8], &mut [u8]),
    );

    /// The CTR kernels in place and buffer to buffer (the inline-assembly loop of [`ctr_asm`]
    /// plus its tails) against `soft`: every length from 0 to three iterations of the widest
    /// loop (24 blocks) plus 17 blocks, counters placed so that a carry out of the low 8, 32,
    /// 64 and 128 bits falls on every block position of the first iterations, before the loop
    /// and in the tail. The output buffer starts filled with a pattern that must be
    /// overwritten, and the input must not change.
    fn check_ctr(name: &str, (in_place, b2b): CtrKernels) {
        // Three iterations of the widest loop (the zmm selector loop's 32 blocks) and more.
        let max = 3 * 32 + 17;
        for kl in [16, 24, 32] {
            let key = data(kl, 9);
            let soft = Aes::with_backend(&key, Backend::Soft).unwrap();
            let hw = crate::backend::aesni::expand(&key);
            let src = data(16 * max, 41);
            for bits in [8u32, 32, 64, 128] {
                for d in (0..=max as u128 + 1).chain([200, 1000]) {
                    // The carry out of the low `bits` bits happens at block `d`.
                    let low = if bits == 128 {
                        u128::MAX
                    } else {
                        (1u128 << bits) - 1
                    };
                    let pattern = 0x0123_4567_89ab_cdef_fedc_ba98_7654_3210_u128;
                    let c = (pattern & !low) | (0u128.wrapping_sub(d) & low);
                    let mut want = src.clone();
                    soft.ctr_xor_at(&c.to_be_bytes(), 0, &mut want);
                    for blocks in 0..=max {
                        let n = 16 * blocks;
                        // 64 guard bytes after the message: nothing may be written there.
                        let mut x = src[..n].to_vec();
                        x.extend_from_slice(&[0x5a; 64]);
                        in_place(&hw, c, &mut x[..n]);
                        assert_eq!(
                            x[..n],
                            want[..n],
                            "{name} ctr key={kl} c={c:x} blocks={blocks}"
                        );
                        assert_eq!(x[n..], [0x5a; 64], "{name} wrote past the message");
                        let mut y = std::vec![0xa5u8; n + 64];
                        let before = src[..n].to_vec();
                        b2b(&hw, c, &src[..n], &mut y[..n]);
                        assert_eq!(
                            y[..n],
                            want[..n],
                            "{name} ctr b2b key={kl} c={c:x} blocks={blocks}"
                        );
                        assert_eq!(y[n..], [0xa5; 64], "{name} b2b wrote past the message");
                        assert_eq!(src[..n], before[..], "{name} b2b modified its input");
                    }
                }
            }
        }
    }

    /// The zmm ECB assembly (`vaes512` on AMD; called directly here, so it runs on any CPU
    /// with AVX-512): 0-113 blocks (every tail shape after 0-3 whole iterations), every key
    /// size, both directions, against `soft`, with 64 guard bytes after the data that must stay
    /// untouched.
    #[test]
    fn zmm_ecb_asm_matches_soft() {
        if !Backend::Vaes512.is_available() {
            std::eprintln!("SKIPPED: this CPU has no AVX-512 + VAES (zmm ECB assembly not run)");
            return;
        }
        for kl in [16, 24, 32] {
            let key = data(kl, 5);
            let soft = Aes::with_backend(&key, Backend::Soft).unwrap();
            let hw = crate::backend::aesni::expand(&key);
            for blocks in 0..=3 * 32 + 17 {
                let n = 16 * blocks;
                let src = data(n, 77);
                for dec in [false, true] {
                    let mut want = src.clone();
                    if dec {
                        soft.decrypt_blocks(&mut want);
                    } else {
                        soft.encrypt_blocks(&mut want);
                    }
                    let mut x = src.clone();
                    x.extend_from_slice(&[0x5a; 64]);
                    let mut dk = [[0u8; 16]; 15];
                    // SAFETY: AVX-512F/BW/VL and VAES checked above; `x` has `n` bytes of
                    // whole blocks (and guard bytes after them); `dk` has 15 slots.
                    unsafe {
                        if dec {
                            ecb_asm::zmm_decrypt(
                                &hw.enc,
                                hw.rounds,
                                x.as_mut_ptr(),
                                n,
                                dk.as_mut_ptr(),
                            )
                        } else {
                            ecb_asm::zmm_encrypt(&hw.enc, hw.rounds, x.as_mut_ptr(), n)
                        }
                    }
                    assert_eq!(
                        x[..n],
                        want[..],
                        "zmm ecb dec={dec} key={kl} blocks={blocks}"
                    );
                    assert_eq!(x[n..], [0x5a; 64], "zmm ecb wrote past the data");
                    assert_eq!(dk, [[0u8; 16]; 15], "derived schedule left behind");
                }
            }
        }
    }

    /// The zmm CBC-decryption assembly (`vaes512` on AMD; here on any AVX-512 CPU) for every
    /// block count across three iterations and every tail size, every key size, against
    /// `soft`, in place, with 64 guard bytes after the data that must stay untouched and the
    /// derived schedule zeroed.
    #[test]
    fn zmm_cbc_asm_matches_soft() {
        if !Backend::Vaes512.is_available() {
            std::eprintln!("SKIPPED: this CPU has no AVX-512 + VAES (zmm CBC assembly not run)");
            return;
        }
        for kl in [16, 24, 32] {
            let key = data(kl, 9);
            let soft = Aes::with_backend(&key, Backend::Soft).unwrap();
            let hw = crate::backend::aesni::expand(&key);
            let iv: [u8; 16] = data(16, 3).try_into().unwrap();
            for blocks in 0..=3 * 32 + 17 {
                let n = 16 * blocks;
                let src = data(n, 41);
                let mut want = src.clone();
                soft.cbc_decrypt(&iv, &mut want).unwrap();
                let mut x = src.clone();
                x.extend_from_slice(&[0x5a; 64]);
                let mut dk = [[0u8; 16]; 15];
                // SAFETY: AVX-512F/BW/VL and VAES checked above; `x` has `n` bytes of whole
                // blocks (and guard bytes after them); `dk` has 15 slots.
                unsafe {
                    cbc_asm::zmm(&hw.enc, hw.rounds, &iv, x.as_mut_ptr(), n, dk.as_mut_ptr())
                };
                assert_eq!(x[..n], want[..], "zmm cbc key={kl} blocks={blocks}");
                assert_eq!(x[n..], [0x5a; 64], "zmm cbc wrote past the data");
                assert_eq!(dk, [[0u8; 16]; 15], "derived schedule left behind");
            }
        }
    }

    #[test]
    fn xmm_ctr_asm_matches_soft() {
        if !Backend::Aesni.is_available() {
            std::eprintln!("SKIPPED: this CPU has no AES-NI (xmm CTR kernel not run)");
            return;
        }
        use crate::backend::aesni;
        check_ctr("xmm", (aesni::ctr_xor, aesni::ctr_xor_b2b));
    }

    #[test]
    fn ymm_ctr_asm_matches_soft() {
        if !Backend::Vaes256.is_available() {
            std::eprintln!("SKIPPED: this CPU has no VAES + AVX2 (ymm CTR kernel not run)");
            return;
        }
        check_ctr("ymm", (ymm::ctr_xor, ymm::ctr_xor_b2b));
    }

    /// The compiled zmm CTR kernel (`vaes512` on Intel) in place and buffer to buffer.
    #[test]
    fn zmm_ctr_kernel_matches_soft() {
        if !Backend::Vaes512.is_available() {
            std::eprintln!("SKIPPED: this CPU has no AVX-512 + VAES (zmm CTR kernel not run)");
            return;
        }
        check_ctr("zmm", (zmm::ctr_xor, zmm::ctr_xor_b2b));
    }

    /// Both CTR main loops of [`ctr_b2b`] at both widths on every CPU that runs the width (the
    /// dispatch picks one by vendor and length, so on any one machine the other would go
    /// untested): every block count of [`check_ctr`] through each loop, in place and buffer
    /// to buffer, counters around the carries at every offset.
    #[test]
    fn ctr_loops_match_soft_whatever_the_vendor() {
        macro_rules! path {
            ($name:ident, $ip:ident, $b2b:ident, $v:ty, $f:ident, $feat:literal) => {
                #[target_feature(enable = $feat)]
                unsafe fn $name<const NR: usize>(
                    k: &Keys,
                    c: u128,
                    src: *const u8,
                    dst: *mut u8,
                    len: usize,
                ) {
                    // SAFETY: forwarded (the test runs it only where the width exists).
                    unsafe { $f::<$v, NR>(k, c, src, dst, len) }
                }
                fn $ip(k: &Keys, c: u128, buf: &mut [u8]) {
                    let p = buf.as_mut_ptr();
                    // SAFETY: checked by the caller below; in place over `buf`.
                    unsafe { by_nr!(k.rounds, $name(k, c, p, p, buf.len())) }
                }
                fn $b2b(k: &Keys, c: u128, src: &[u8], dst: &mut [u8]) {
                    assert_eq!(src.len(), dst.len());
                    // SAFETY: as above; two distinct buffers of the same length.
                    unsafe {
                        by_nr!(
                            k.rounds,
                            $name(k, c, src.as_ptr(), dst.as_mut_ptr(), src.len())
                        )
                    }
                }
            };
        }
        /// [`ctr_b2b`] for bytes `done..len` of a call whose first `done` a loop took.
        ///
        /// # Safety
        /// As [`ctr_b2b`]; `done <= len`, a multiple of 16.
        #[inline(always)]
        unsafe fn rest<V: Vector, const NR: usize>(
            k: &Keys,
            c: u128,
            src: *const u8,
            dst: *mut u8,
            len: usize,
            done: usize,
        ) {
            // SAFETY: forwarded; the rest lies inside both buffers.
            unsafe {
                ctr_b2b::<V, NR>(
                    k,
                    c.wrapping_add((done / 16) as u128),
                    src.add(done),
                    dst.add(done),
                    len - done,
                )
            }
        }
        /// The selector loop for every whole iteration, [`ctr_b2b`] for the rest.
        #[inline(always)]
        unsafe fn sel_then_rest<V: Vector, const NR: usize>(
            k: &Keys,
            c: u128,
            src: *const u8,
            dst: *mut u8,
            len: usize,
        ) {
            // SAFETY: forwarded.
            unsafe {
                let done = ctr_sel_iterations::<V>(k, c, src, dst, len);
                rest::<V, NR>(k, c, src, dst, len, done)
            }
        }
        /// The 12-register ymm selector loop for every whole sub-batch, [`ctr_b2b`] for the
        /// rest.
        #[inline(always)]
        unsafe fn sel12_then_rest<V: Vector, const NR: usize>(
            k: &Keys,
            c: u128,
            src: *const u8,
            dst: *mut u8,
            len: usize,
        ) {
            // SAFETY: forwarded (`V` is ymm).
            unsafe {
                let done = ctr_asm::ymm_sel12(k, c, src, dst, len);
                rest::<V, NR>(k, c, src, dst, len, done)
            }
        }
        path!(xs, xs_ip, xs_b2b, __m128i, sel_then_rest, "aes,sse4.2");
        path!(
            y12,
            y12_ip,
            y12_b2b,
            __m256i,
            sel12_then_rest,
            "avx2,vaes,aes,sse4.2"
        );
        path!(xc, xc_ip, xc_b2b, __m128i, ctr_b2b, "aes,sse4.2");
        path!(
            ys,
            ys_ip,
            ys_b2b,
            __m256i,
            sel_then_rest,
            "avx2,vaes,aes,sse4.2"
        );
        path!(yc, yc_ip, yc_b2b, __m256i, ctr_b2b, "avx2,vaes,aes,sse4.2");
        path!(
            zs,
            zs_ip,
            zs_b2b,
            __m512i,
            sel_then_rest,
            "avx512f,avx512bw,avx512vl,vaes,aes,avx2,sse4.2"
        );
        /// The whole call in the zmm assembly, its masked tail included.
        #[inline(always)]
        unsafe fn zmm_whole<V: Vector, const NR: usize>(
            k: &Keys,
            c: u128,
            src: *const u8,
            dst: *mut u8,
            len: usize,
        ) {
            // SAFETY: forwarded.
            unsafe { ctr_zmm_whole(k, c, src, dst, len) }
        }
        path!(
            zw,
            zw_ip,
            zw_b2b,
            __m512i,
            zmm_whole,
            "avx512f,avx512bw,avx512vl,vaes,aes,avx2,sse4.2"
        );
        if !Backend::Aesni.is_available() {
            std::eprintln!("SKIPPED: this CPU has no AES-NI (CTR loops not run)");
            return;
        }
        check_ctr("xmm selector loop", (xs_ip, xs_b2b));
        check_ctr("xmm scalar-counter loop", (xc_ip, xc_b2b));
        if !Backend::Vaes256.is_available() {
            std::eprintln!("SKIPPED: this CPU has no VAES + AVX2 (ymm CTR loops not run)");
            return;
        }
        check_ctr("ymm selector loop", (ys_ip, ys_b2b));
        check_ctr("ymm scalar-counter loop", (yc_ip, yc_b2b));
        check_ctr("ymm 12-register selector loop", (y12_ip, y12_b2b));
        if !Backend::Vaes512.is_available() {
            std::eprintln!("SKIPPED: this CPU has no AVX-512 (zmm CTR selector loop not run)");
            return;
        }
        check_ctr("zmm selector loop", (zs_ip, zs_b2b));
        check_ctr("zmm whole call (masked tail)", (zw_ip, zw_b2b));
    }

    /// The zmm first-round-table CTR ([`ctr_asm::zmm_r1`], `vaes512` on AMD from
    /// [`ctr_asm::R1_MIN`]; called directly, so it runs on any CPU with AVX-512) against `soft`,
    /// in place and buffer to buffer, with guard bytes: every low counter byte (so the
    /// high-part step falls on every block of the 256-block window), and carries out of the
    /// low 32, 64 and 128 bits placed in the first, second and third windows; lengths of less
    /// than one batch (the `zmm_sel` tail only), of whole and partial windows, and of three
    /// windows plus a tail.
    #[test]
    fn zmm_r1_matches_soft() {
        if !Backend::Vaes512.is_available() {
            std::eprintln!("SKIPPED: this CPU has no AVX-512 + VAES (zmm_r1 not run)");
            return;
        }
        let lens = [
            0,
            5,
            32,
            33,
            255,
            256,
            257,
            288,
            511,
            512,
            600,
            3 * 256 + 37,
        ];
        let max = 3 * 256 + 37;
        for kl in [16, 24, 32] {
            let key = data(kl, 17);
            let soft = Aes::with_backend(&key, Backend::Soft).unwrap();
            let hw = crate::backend::aesni::expand(&key);
            let src = data(16 * max, 77);
            let pattern = 0x0123_4567_89ab_cdef_fedc_ba98_7654_3210_u128;
            let mut counters: Vec<u128> = (0..256).map(|c| pattern & !0xff | c).collect();
            for bits in [32u32, 64, 128] {
                let low = if bits == 128 {
                    u128::MAX
                } else {
                    (1u128 << bits) - 1
                };
                // The carry out of the low `bits` bits happens at block `d`.
                for d in [1u128, 3, 200, 255, 256, 257, 300, 511, 512, 700] {
                    counters.push((pattern & !low) | (0u128.wrapping_sub(d) & low));
                }
            }
            for c in counters {
                let mut want = src.clone();
                soft.ctr_xor_at(&c.to_be_bytes(), 0, &mut want);
                for blocks in lens {
                    let n = 16 * blocks;
                    let mut x = src[..n].to_vec();
                    x.extend_from_slice(&[0x5a; 64]);
                    // SAFETY: AVX-512F/BW/VL and VAES (checked above); `x` holds `n` bytes
                    // of whole blocks (and guard bytes after them), in place.
                    unsafe { ctr_asm::zmm_r1(&hw, c, x.as_ptr(), x.as_mut_ptr(), n) };
                    assert_eq!(x[..n], want[..n], "zmm_r1 key={kl} c={c:x} blocks={blocks}");
                    assert_eq!(x[n..], [0x5a; 64], "zmm_r1 wrote past the message");
                    let mut y = std::vec![0xa5u8; n + 64];
                    // SAFETY: as above, `src` and `y` disjoint, `n` bytes each.
                    unsafe { ctr_asm::zmm_r1(&hw, c, src.as_ptr(), y.as_mut_ptr(), n) };
                    assert_eq!(
                        y[..n],
                        want[..n],
                        "zmm_r1 b2b key={kl} c={c:x} blocks={blocks}"
                    );
                    assert_eq!(y[n..], [0xa5; 64], "zmm_r1 b2b wrote past the message");
                }
            }
        }
    }

    /// Reference carry-less multiply of two 64-bit words.
    fn clmul64(a: u64, b: u64) -> u128 {
        (0..64).fold(0u128, |acc, i| {
            if b >> i & 1 == 1 {
                acc ^ (a as u128) << i
            } else {
                acc
            }
        })
    }

    /// `clmul` and `shuffle_bytes` (for GHASH) per 128-bit lane against scalar references.
    fn check_ghash_ops<V: Vector>(name: &str, run: impl Fn(&dyn Fn())) {
        let a: Vec<u8> = data(V::BYTES, 1);
        let b: Vec<u8> = data(V::BYTES, 200);
        let idx: Vec<u8> = (0..V::BYTES).map(|i| (15 - i % 16) as u8).collect();
        let q = |v: &[u8], lane: usize, half: usize| {
            u64::from_le_bytes(v[16 * lane + 8 * half..][..8].try_into().unwrap())
        };
        run(&|| {
            let mut out = std::vec![0u8; V::BYTES];
            // SAFETY: `run` calls this only on a CPU with the width's features and VPCLMULQDQ;
            // all buffers are `V::BYTES` long.
            unsafe {
                let (va, vb) = (V::load(a.as_ptr()), V::load(b.as_ptr()));
                V::store(out.as_mut_ptr(), V::clmul::<0x10>(va, vb));
                for lane in 0..V::BLOCKS {
                    let want = clmul64(q(&a, lane, 0), q(&b, lane, 1));
                    let got = u128::from_le_bytes(out[16 * lane..][..16].try_into().unwrap());
                    assert_eq!(got, want, "{name} clmul lane {lane}");
                }
                V::store(
                    out.as_mut_ptr(),
                    V::shuffle_bytes(va, V::load(idx.as_ptr())),
                );
                for (i, &o) in out.iter().enumerate() {
                    assert_eq!(o, a[16 * (i / 16) + 15 - i % 16], "{name} shuffle byte {i}");
                }
            }
        });
    }

    #[test]
    fn ghash_building_blocks() {
        #[target_feature(enable = "avx2,vaes,vpclmulqdq,aes,sse4.2")]
        fn on_ymm(f: &dyn Fn()) {
            f()
        }
        #[target_feature(enable = "avx512f,avx512bw,avx512vl,vaes,vpclmulqdq,aes,avx2,sse4.2")]
        fn on_zmm(f: &dyn Fn()) {
            f()
        }
        let f = crate::cpu::features();
        if Backend::Vaes256.is_available() && f.vpclmulqdq {
            // SAFETY: the features were just checked.
            check_ghash_ops::<__m256i>("ymm", |g| unsafe { on_ymm(g) });
        } else {
            std::eprintln!("SKIPPED: no VAES + VPCLMULQDQ on ymm here");
        }
        if Backend::Vaes512.is_available() && f.vpclmulqdq {
            // SAFETY: the features were just checked.
            check_ghash_ops::<__m512i>("zmm", |g| unsafe { on_zmm(g) });
        } else {
            std::eprintln!("SKIPPED: no AVX-512 + VPCLMULQDQ here (zmm GHASH operations not run)");
        }
    }
}
