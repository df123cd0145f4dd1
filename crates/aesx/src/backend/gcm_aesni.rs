//! The fused AES-NI + PCLMULQDQ GCM kernel (xmm): CTR32 encryption and GHASH of the
//! ciphertext in one pass, 8 blocks per iteration.
//!
//! Design (after the Linux kernel's `aes-gcm-aesni-x86_64.S` and OpenSSL/BoringSSL
//! `aesni-gcm-x86_64.pl`, as summarised in /work/shared/specs/gcm.md; the code is written here):
//!
//! - 8 counter blocks in flight (AESENC latency 4, 2 per cycle on Zen 3/4: 8 fill both pipes);
//!   the 8 GHASH steps of a batch (3 PCLMULQDQ each, Karatsuba, powers H^8..H^1) are issued
//!   between the AES rounds, one per round, and reduced once per batch.
//! - Encryption can only hash ciphertext it has produced, so it is software-pipelined: batch 0
//!   is encrypted alone, then each iteration encrypts batch i while hashing batch i-1 (read
//!   back from the output, still in L1), and the last batch is hashed after the loop.
//!   Decryption hashes its own input in the same iteration as it decrypts it.
//! - Counters: the counter block is byte-reversed once, so its inc32 word is the low 32-bit
//!   lane; `paddd` adds the block index (wrapping mod 2^32: exactly inc32, branch-free, so a
//!   secret counter is fine) and `pshufb` turns each back into a counter block.
//!   With a 12-byte nonce the inc32 word counts blocks from 2 and is public: a batch whose 8
//!   blocks do not carry out of the counter's last byte (31 or 32 in 32) swaps once and adds
//!   to that byte ([`Ctr`], session 20; on an Intel Golden Cove core, `aesx bench --ops
//!   gcm-enc,gcm-dec --sizes 1K,16K,64K --keys 128,256 --backends aesni`, 10 runs alternated
//!   with the build before, best: 1.00-1.05x, most cells 1.02-1.05x).
//! - The data XOR is folded into the last round: `aesenclast(x, k ^ d) = aesenclast(x, k) ^ d`.
//! - The input and the output may be separate buffers (`seal_b2b`, `open_b2b`; session 26):
//!   the body works on an input and an output pointer, equal in place, so a caller with two
//!   buffers (OpenSSH through the OpenSSL provider) needs no copy first.
//! - Round keys are read from the schedule at every use (memory operands), not copied into
//!   registers or onto the stack: 8 states + GHASH accumulators fill the 16 xmm registers.
//! - Fewer than 8 blocks (tails, and short messages, which never enter the loop) run 1, 2, 4
//!   or 8 lanes, whichever is the smallest that covers them, with one reduction.
//!
//! Constant time: AES-NI and PCLMULQDQ run in data-independent time; branches and loop bounds
//! depend only on lengths, the round count and (with a 12-byte nonce only) the public block
//! index.

#![allow(clippy::needless_range_loop)]

use core::arch::x86_64::*;

use super::aesni::Keys;
use super::clmul::{
    self, Key as HKey, POWERS, Prod, bswap_mask, keep_mask, ld, ld_at, m_to_u128, st_at, u128_to_m,
};

const LANES: usize = 8;
const _: () = assert!(LANES == POWERS);

// Round keys are read in place as aligned `__m128i` (see `rk`).
const _: () = assert!(core::mem::align_of::<Keys>() >= 16);
const _: () = assert!(core::mem::offset_of!(Keys, enc) % 16 == 0);

/// Round key `r`, read from the schedule at each use. Volatile so that LLVM neither keeps all
/// of them in registers (there is no room: the 8 lanes interleave then get serialised) nor
/// spills copies to the stack.
#[inline(always)]
fn rk(k: &Keys, r: usize) -> __m128i {
    let p: *const [u8; 16] = &k.enc[r];
    // SAFETY: `p` points to 16 initialised bytes inside `k`, 16-byte aligned (checked at
    // compile time above: `Keys` is aligned to 16 and `enc` is at an aligned offset).
    unsafe { core::ptr::read_volatile(p.cast::<__m128i>()) }
}

/// Counter block for lane `j` of the batch whose little-endian counter vector is `c`.
#[inline]
#[target_feature(enable = "aes,pclmulqdq,sse4.2")]
fn ctr_block(c: __m128i, j: usize, bs: __m128i) -> __m128i {
    _mm_shuffle_epi8(_mm_add_epi32(c, _mm_set_epi32(0, 0, 0, j as i32)), bs)
}

/// How a batch builds its 8 counter blocks ([`batch_ctrs`]'s `CTR`).
const GENERAL: u8 = 0;
const NO_CARRY: u8 = 1;
const ALIGNED: u8 = 2;

/// The 8 counter blocks of a batch, whitened with round key 0 (`k0`). `GENERAL`: an addition
/// and a byte swap each. The other two need facts the caller knows only of a public counter
/// (see [`Ctr`]): `NO_CARRY`, no block of the batch carries out of the counter's last byte:
/// one byte swap and 8 additions to that byte; `ALIGNED`, the first counter is a multiple of 8
/// (so block `j`'s is it with `j` in its last byte): one byte swap, one whitening and 7 XORs.
#[inline]
#[target_feature(enable = "aes,pclmulqdq,sse4.2")]
fn batch_ctrs<const CTR: u8>(c: __m128i, bs: __m128i, k0: __m128i) -> [__m128i; LANES] {
    if CTR == ALIGNED {
        let w = _mm_xor_si128(_mm_shuffle_epi8(c, bs), k0);
        core::array::from_fn(|j| {
            if j == 0 {
                w
            } else {
                _mm_xor_si128(w, _mm_set_epi32((j as i32) << 24, 0, 0, 0))
            }
        })
    } else if CTR == NO_CARRY {
        let be = _mm_shuffle_epi8(c, bs);
        core::array::from_fn(|j| {
            _mm_xor_si128(
                _mm_add_epi32(be, _mm_set_epi32((j as i32) << 24, 0, 0, 0)),
                k0,
            )
        })
    } else {
        core::array::from_fn(|j| _mm_xor_si128(ctr_block(c, j, bs), k0))
    }
}

/// The counter of the loop: `c`, byte-reversed (inc32 word in the low lane), and, when the
/// inc32 word is public (a 12-byte nonce: it counts blocks from 2), that word as a scalar.
#[derive(Clone, Copy)]
struct Ctr {
    c: __m128i,
    public: Option<u32>,
}

impl Ctr {
    /// Whether the batch at this counter may build its counters with [`batch_ctrs`]'s fast
    /// path: a public counter whose last byte stays under 256 over the batch's 8 blocks. A
    /// branch on the counter, taken only where it is public.
    #[inline(always)]
    fn fast(self) -> bool {
        self.public
            .is_some_and(|w| w & 0xff <= 0xff - (LANES as u32 - 1))
    }
    /// Whether every batch from here may take [`batch_ctrs`]'s `ALIGNED` path: a public
    /// counter at a multiple of 8 (batches advance it by 8).
    #[inline(always)]
    fn aligned(self) -> bool {
        self.public.is_some_and(|w| w % LANES as u32 == 0)
    }
    #[inline]
    #[target_feature(enable = "aes,pclmulqdq,sse4.2")]
    fn add(self, n: usize) -> Ctr {
        Ctr {
            c: add_ctr(self.c, n),
            public: self.public.map(|w| w.wrapping_add(n as u32)),
        }
    }
}

#[inline]
#[target_feature(enable = "aes,pclmulqdq,sse4.2")]
fn add_ctr(c: __m128i, n: usize) -> __m128i {
    _mm_add_epi32(c, _mm_set_epi32(0, 0, 0, n as i32))
}

/// Block `j` at `p` (unaligned).
///
/// # Safety
/// `p + 16 j` is 16 readable bytes.
#[inline(always)]
unsafe fn ldp(p: *const u8, j: usize) -> __m128i {
    // SAFETY: the caller's contract; SSE2 is baseline on x86-64.
    unsafe { _mm_loadu_si128(p.add(16 * j).cast()) }
}

/// Stores `v` as block `j` at `p` (unaligned).
///
/// # Safety
/// `p + 16 j` is 16 writable bytes.
#[inline(always)]
unsafe fn stp(p: *mut u8, j: usize, v: __m128i) {
    // SAFETY: the caller's contract; SSE2 is baseline on x86-64.
    unsafe { _mm_storeu_si128(p.add(16 * j).cast(), v) }
}

/// The `len` bytes at `p` as a slice, for GHASH.
///
/// # Safety
/// `p` is `len` readable bytes that nothing writes while the slice lives.
#[inline(always)]
unsafe fn bytes<'a>(p: *const u8, len: usize) -> &'a [u8] {
    // SAFETY: the caller's contract.
    unsafe { core::slice::from_raw_parts(p, len) }
}

/// GHASH step `j` of a batch of 8 (block `j` at `blocks`, times H^(8-j)); block 0 also takes
/// the running state.
///
/// # Safety
/// `blocks` is 8 readable blocks; the CPU runs AES-NI, PCLMULQDQ and SSE4.2.
#[inline]
#[target_feature(enable = "aes,pclmulqdq,sse4.2")]
unsafe fn ghash_step(h: &HKey, p: &mut Prod, blocks: *const u8, j: usize, s: __m128i, bs: __m128i) {
    // SAFETY: the caller's contract.
    let mut y = _mm_shuffle_epi8(unsafe { ldp(blocks, j) }, bs);
    if j == 0 {
        y = _mm_xor_si128(y, s);
    }
    let (hp, hq) = clmul::key_at(h, j);
    p.add(y, hp, hq);
}

/// One 8-block batch: `out = inp ^ keystream(c)` (`inp` is `out`, or 8 blocks apart from
/// it), with the GHASH of the 8 blocks at `hash` interleaved into the AES rounds; returns the
/// new GHASH state. Encryption hashes the previous batch's output.
///
/// # Safety
/// `inp` is 8 readable blocks, `out` 8 writable ones (the same, or not overlapping), `hash`
/// 8 readable blocks that this batch does not write; the CPU runs AES-NI, PCLMULQDQ, SSE4.2.
#[inline]
#[target_feature(enable = "aes,pclmulqdq,sse4.2")]
unsafe fn batch<const NR: usize, const CTR: u8>(
    k: &Keys,
    h: &HKey,
    c: Ctr,
    s: __m128i,
    hash: Option<*const u8>,
    (inp, out): (*const u8, *mut u8),
) -> __m128i {
    let bs = bswap_mask();
    let mut x = batch_ctrs::<CTR>(c.c, bs, rk(k, 0));
    let mut p = Prod::zero();
    let mut s_out = s;
    match hash {
        Some(hb) => {
            for r in 1..NR {
                let kr = rk(k, r);
                x = x.map(|v| _mm_aesenc_si128(v, kr));
                if r - 1 < LANES {
                    // SAFETY: `hash` is 8 readable blocks (the contract).
                    unsafe { ghash_step(h, &mut p, hb, r - 1, s, bs) };
                }
            }
            s_out = p.reduce();
        }
        None => {
            for r in 1..NR {
                let kr = rk(k, r);
                x = x.map(|v| _mm_aesenc_si128(v, kr));
            }
        }
    }
    let kl = rk(k, NR);
    for j in 0..LANES {
        // SAFETY: `inp` and `out` are 8 blocks (the contract); block `j` is read before it is
        // written when they are the same.
        unsafe {
            let d = _mm_xor_si128(ldp(inp, j), kl);
            stp(out, j, _mm_aesenclast_si128(x[j], d));
        }
    }
    s_out
}

/// Decryption batch: the GHASH input is the batch's input, read before the XOR.
///
/// # Safety
/// As [`batch`]'s `inp` and `out`.
#[inline]
#[target_feature(enable = "aes,pclmulqdq,sse4.2")]
unsafe fn batch_open<const NR: usize, const CTR: u8>(
    k: &Keys,
    h: &HKey,
    c: Ctr,
    s: __m128i,
    (inp, out): (*const u8, *mut u8),
) -> __m128i {
    let bs = bswap_mask();
    let mut x = batch_ctrs::<CTR>(c.c, bs, rk(k, 0));
    let mut p = Prod::zero();
    for r in 1..NR {
        let kr = rk(k, r);
        x = x.map(|v| _mm_aesenc_si128(v, kr));
        if r - 1 < LANES {
            // SAFETY: `inp` is 8 readable blocks, not yet written (the contract).
            unsafe { ghash_step(h, &mut p, inp, r - 1, s, bs) };
        }
    }
    let s = p.reduce();
    let kl = rk(k, NR);
    for j in 0..LANES {
        // SAFETY: as in `batch`.
        unsafe {
            let d = _mm_xor_si128(ldp(inp, j), kl);
            stp(out, j, _mm_aesenclast_si128(x[j], d));
        }
    }
    s
}

/// `out = inp ^ keystream(c)` for `n <= W` blocks, `W` lanes in flight.
///
/// # Safety
/// `inp` is `n` readable blocks, `out` `n` writable ones (the same, or not overlapping).
#[inline]
#[target_feature(enable = "aes,pclmulqdq,sse4.2")]
unsafe fn xor_lanes<const NR: usize, const W: usize>(
    k: &Keys,
    c: __m128i,
    (inp, out, n): (*const u8, *mut u8, usize),
) {
    let bs = bswap_mask();
    let k0 = rk(k, 0);
    let mut x: [__m128i; W] = core::array::from_fn(|j| _mm_xor_si128(ctr_block(c, j, bs), k0));
    for r in 1..NR {
        let kr = rk(k, r);
        x = x.map(|v| _mm_aesenc_si128(v, kr));
    }
    let kl = rk(k, NR);
    for j in 0..n {
        // SAFETY: `j < n` (the contract); read before written when the same.
        unsafe {
            let d = _mm_xor_si128(ldp(inp, j), kl);
            stp(out, j, _mm_aesenclast_si128(x[j], d));
        }
    }
}

/// Fewer than 8 blocks, `len` bytes from `inp` into `out`: CTR32 with the narrowest lane
/// count that covers them, GHASH with one reduction (of the ciphertext: the output when
/// sealing, the input when opening).
///
/// # Safety
/// `inp` is `len` readable bytes, `out` `len` writable ones (the same, or not overlapping);
/// `len` is a multiple of 16 under 128.
#[inline]
#[target_feature(enable = "aes,pclmulqdq,sse4.2")]
unsafe fn tail<const NR: usize, const SEAL: bool>(
    k: &Keys,
    h: &HKey,
    c: __m128i,
    mut s: __m128i,
    (inp, out, len): (*const u8, *mut u8, usize),
) -> __m128i {
    let n = len / 16;
    if n == 0 {
        return s;
    }
    if !SEAL {
        // SAFETY: `len` readable bytes at `inp` (the contract), hashed before anything is
        // written; no other reference to them lives meanwhile.
        s = clmul::ghash_n(h, s, unsafe { bytes(inp, len) });
    }
    // SAFETY: `n` blocks at `inp` and `out` (the contract).
    unsafe {
        match n {
            1 => xor_lanes::<NR, 1>(k, c, (inp, out, n)),
            2 => xor_lanes::<NR, 2>(k, c, (inp, out, n)),
            3 | 4 => xor_lanes::<NR, 4>(k, c, (inp, out, n)),
            _ => xor_lanes::<NR, 8>(k, c, (inp, out, n)),
        }
    }
    if SEAL {
        // SAFETY: the `len` bytes at `out` (the contract), hashed after the last write.
        s = clmul::ghash_n(h, s, unsafe { bytes(out, len) });
    }
    s
}

/// The short-message path: J0 and the counter blocks in one AES pass of `W` lanes (lane 0 is
/// J0), then GHASH of AAD, ciphertext and lengths with one reduction, tag in registers.
#[allow(clippy::too_many_arguments)]
#[inline]
#[target_feature(enable = "aes,pclmulqdq,sse4.2")]
fn small_lanes<const NR: usize, const W: usize>(
    k: &Keys,
    h: &HKey,
    j0: &[u8; 16],
    aad: &[u8],
    buf: &mut [u8],
    len: usize,
    lengths: &[u8; 16],
    seal: bool,
) -> [u8; 16] {
    let bs = bswap_mask();
    let c = _mm_shuffle_epi8(ld(j0), bs);
    let n = buf.len() / 16;
    let m = aad.len() / 16 + n + 1;
    let mut p = Prod::zero();
    let mut j = 0;
    let mut hash = |p: &mut Prod, blk: __m128i| {
        let (hp, hq) = clmul::power(h, m, j);
        p.add(_mm_shuffle_epi8(blk, bs), hp, hq);
        j += 1;
    };
    for i in 0..aad.len() / 16 {
        hash(&mut p, ld_at(aad, i));
    }
    if !seal {
        for i in 0..n {
            hash(&mut p, ld_at(buf, i));
        }
    }
    let k0 = rk(k, 0);
    let mut x: [__m128i; W] = core::array::from_fn(|i| _mm_xor_si128(ctr_block(c, i, bs), k0));
    for r in 1..NR {
        let kr = rk(k, r);
        x = x.map(|v| _mm_aesenc_si128(v, kr));
    }
    let kl = rk(k, NR);
    for i in 0..n {
        let d = _mm_xor_si128(ld_at(buf, i), kl);
        let mut c = _mm_aesenclast_si128(x[i + 1], d);
        if seal {
            if i == n - 1 {
                // The padding (keystream, as the input's is zero) zeroed in the register:
                // the ciphertext is hashed zero-padded, from here.
                c = _mm_and_si128(c, keep_mask(len - 16 * i));
            }
            hash(&mut p, c);
        }
        st_at(buf, i, c);
    }
    hash(&mut p, ld(lengths));
    let s = _mm_shuffle_epi8(p.reduce(), bs);
    let t = _mm_aesenclast_si128(x[0], _mm_xor_si128(kl, s));
    let mut out = [0u8; 16];
    clmul::st(&mut out, t);
    out
}

#[allow(clippy::too_many_arguments)]
#[target_feature(enable = "aes,pclmulqdq,sse4.2")]
fn small_inner<const NR: usize>(
    k: &Keys,
    h: &HKey,
    j0: &[u8; 16],
    aad: &[u8],
    buf: &mut [u8],
    len: usize,
    lengths: &[u8; 16],
    seal: bool,
) -> [u8; 16] {
    match buf.len() / 16 {
        0 | 1 => small_lanes::<NR, 2>(k, h, j0, aad, buf, len, lengths, seal),
        2 | 3 => small_lanes::<NR, 4>(k, h, j0, aad, buf, len, lengths, seal),
        _ => small_lanes::<NR, 8>(k, h, j0, aad, buf, len, lengths, seal),
    }
}

/// The end of a message in one call (see `backend::gcm_finish`): E(J0) and the keystream
/// block of the trailing partial block (`tail`, 0 or 16 bytes of which `len` are real) in one
/// two-lane AES pass, then GHASH of that block's ciphertext and of `lengths` into `acc` with
/// one reduction, and the full tag `E(J0) ^ S`.
#[allow(clippy::too_many_arguments)]
#[inline]
#[target_feature(enable = "aes,pclmulqdq,sse4.2")]
fn finish_inner<const NR: usize>(
    k: &Keys,
    h: &HKey,
    j0: &[u8; 16],
    ctr: &[u8; 16],
    acc: u128,
    tail: &mut [u8],
    len: usize,
    lengths: &[u8; 16],
    seal: bool,
) -> [u8; 16] {
    let bs = bswap_mask();
    let k0 = rk(k, 0);
    let mut x = [_mm_xor_si128(ld(j0), k0), _mm_xor_si128(ld(ctr), k0)];
    for r in 1..NR {
        let kr = rk(k, r);
        x = x.map(|v| _mm_aesenc_si128(v, kr));
    }
    let kl = rk(k, NR);
    let m = tail.len() / 16 + 1;
    let mut p = Prod::zero();
    let mut s = Some(u128_to_m(acc));
    let mut j = 0;
    let mut hash = |p: &mut Prod, blk: __m128i| {
        let mut y = _mm_shuffle_epi8(blk, bs);
        if let Some(s) = s.take() {
            y = _mm_xor_si128(y, s);
        }
        let (hp, hq) = clmul::power(h, m, j);
        p.add(y, hp, hq);
        j += 1;
    };
    if m == 2 {
        if !seal {
            hash(&mut p, ld_at(tail, 0));
        }
        let d = _mm_xor_si128(ld_at(tail, 0), kl);
        let mut c = _mm_aesenclast_si128(x[1], d);
        if seal {
            // The padding zeroed in the register (see `small_lanes`).
            c = _mm_and_si128(c, keep_mask(len));
            hash(&mut p, c);
        }
        st_at(tail, 0, c);
    }
    hash(&mut p, ld(lengths));
    let s = _mm_shuffle_epi8(p.reduce(), bs);
    let t = _mm_aesenclast_si128(x[0], _mm_xor_si128(kl, s));
    let mut out = [0u8; 16];
    clmul::st(&mut out, t);
    out
}

/// Safe entry point of the end-of-message kernel (see `backend::gcm_finish`).
#[allow(clippy::too_many_arguments)]
pub(crate) fn finish(
    k: &Keys,
    h: &HKey,
    j0: &[u8; 16],
    ctr: &[u8; 16],
    acc: u128,
    tail: &mut [u8],
    len: usize,
    lengths: &[u8; 16],
    seal: bool,
) -> [u8; 16] {
    debug_assert!((tail.len() == 16 && len < 16) || (tail.is_empty() && len == 0));
    // SAFETY: as for `seal` below (hardware keys and a PCLMULQDQ key imply the features).
    unsafe {
        match k.rounds {
            10 => finish_inner::<10>(k, h, j0, ctr, acc, tail, len, lengths, seal),
            12 => finish_inner::<12>(k, h, j0, ctr, acc, tail, len, lengths, seal),
            _ => finish_inner::<14>(k, h, j0, ctr, acc, tail, len, lengths, seal),
        }
    }
}

/// Safe entry point of the short-message path (see `backend::gcm_small`).
#[allow(clippy::too_many_arguments)]
pub(crate) fn small(
    k: &Keys,
    h: &HKey,
    j0: &[u8; 16],
    aad: &[u8],
    buf: &mut [u8],
    len: usize,
    lengths: &[u8; 16],
    seal: bool,
) -> [u8; 16] {
    debug_assert!(aad.len() / 16 + buf.len() / 16 < POWERS && buf.len() / 16 < 8);
    // SAFETY: as for `seal` below (hardware keys and a PCLMULQDQ key imply the features).
    unsafe {
        match k.rounds {
            10 => small_inner::<10>(k, h, j0, aad, buf, len, lengths, seal),
            12 => small_inner::<12>(k, h, j0, aad, buf, len, lengths, seal),
            _ => small_inner::<14>(k, h, j0, aad, buf, len, lengths, seal),
        }
    }
}

/// Encryption of `len` bytes (whole blocks) from `inp` into `out`.
///
/// # Safety
/// `inp` is `len` readable bytes, `out` `len` writable ones: the same bytes, or not
/// overlapping. The CPU runs AES-NI, PCLMULQDQ and SSE4.2.
#[inline]
#[target_feature(enable = "aes,pclmulqdq,sse4.2")]
unsafe fn seal_body<const NR: usize>(
    k: &Keys,
    h: &HKey,
    ctr: &[u8; 16],
    public: bool,
    acc: &mut u128,
    (inp, out, len): (*const u8, *mut u8, usize),
) {
    const B: usize = 16 * LANES;
    let mut c = start(ctr, public);
    let mut s = u128_to_m(*acc);
    let full = len / B;
    // SAFETY: every batch and the tail are inside the `len` bytes at `inp` and `out` (the
    // contract); a batch hashes the previous batch's output, which it does not write.
    unsafe {
        if full > 0 {
            // Prologue: batch 0 encrypted, nothing to hash yet. (No aligned head here, unlike
            // `open_body`: see [`aligned_head`].)
            if c.fast() {
                batch::<NR, NO_CARRY>(k, h, c, s, None, (inp, out));
            } else {
                batch::<NR, GENERAL>(k, h, c, s, None, (inp, out));
            }
            c = c.add(LANES);
            for i in 1..full {
                let (d, o) = (inp.add(B * i), out.add(B * i));
                let prev = Some(o.sub(B).cast_const());
                s = if c.fast() {
                    batch::<NR, NO_CARRY>(k, h, c, s, prev, (d, o))
                } else {
                    batch::<NR, GENERAL>(k, h, c, s, prev, (d, o))
                };
                c = c.add(LANES);
            }
            // Epilogue: hash the last batch.
            s = clmul::ghash_n(h, s, bytes(out.add(B * (full - 1)), B));
        }
        let done = B * full;
        s = tail::<NR, true>(k, h, c.c, s, (inp.add(done), out.add(done), len - done));
    }
    *acc = m_to_u128(s);
}

/// Messages of at least this many whole blocks after the head take [`aligned_head`].
const ALIGN_MIN_BLOCKS: usize = 64;

/// Decryption with a public counter: opens the 1..7 blocks before the first counter that is a
/// multiple of 8 as a tail (one reduction), so that every batch after them takes
/// [`batch_ctrs`]'s `ALIGNED` path; advances `c` and `s` and returns the rest of `buf`. A
/// secret counter and messages under [`ALIGN_MIN_BLOCKS`] blocks (after the head) take no
/// head. With a 12-byte nonce the data starts at counter 2: a head of 6 blocks.
///
/// IMPLEMENTATION NOTE (session 21, Intel guest, family 6 model 167; `aesx bench --ops
/// gcm-enc,gcm-dec --sizes 1K,2K,4K,16K,64K --keys 128,256 --backends aesni`, 8 runs alternated
/// with the build before, and again with `--keys 128,192,256`): open 1.03-1.06x from 4 KiB,
/// 0.99-1.03x at 1 KiB. Seal the same way measured 0.96-0.98x
/// at 1-2 KiB and 1.00-1.02x from 4 KiB (its head is hashed after it is encrypted, outside the
/// pipeline, and the message then ends in a tail instead of a whole batch), so seal keeps the
/// per-batch `NO_CARRY` test.
///
/// # Safety
/// As [`seal_body`]'s `inp`, `out` and `len`.
#[inline]
#[target_feature(enable = "aes,pclmulqdq,sse4.2")]
unsafe fn aligned_head<const NR: usize>(
    k: &Keys,
    h: &HKey,
    c: &mut Ctr,
    s: &mut __m128i,
    (inp, out, len): (*const u8, *mut u8, usize),
) -> (*const u8, *mut u8, usize) {
    let Some(w) = c.public else {
        return (inp, out, len);
    };
    let n = (w.wrapping_neg() % LANES as u32) as usize;
    if n == 0 || len / 16 < n + ALIGN_MIN_BLOCKS {
        return (inp, out, len);
    }
    // SAFETY: the head's `16 n` bytes are inside the `len` bytes (the contract).
    unsafe {
        *s = tail::<NR, false>(k, h, c.c, *s, (inp, out, 16 * n));
        *c = c.add(n);
        (inp.add(16 * n), out.add(16 * n), len - 16 * n)
    }
}

/// The loop's counter at `ctr` (`public`: its inc32 word is, see [`Ctr`]).
#[inline]
#[target_feature(enable = "aes,pclmulqdq,sse4.2")]
fn start(ctr: &[u8; 16], public: bool) -> Ctr {
    Ctr {
        c: _mm_shuffle_epi8(ld(ctr), bswap_mask()),
        public: public.then(|| super::inc32_word(ctr)),
    }
}

/// Decryption of `len` bytes (whole blocks) from `inp` into `out`.
///
/// # Safety
/// As [`seal_body`].
#[inline]
#[target_feature(enable = "aes,pclmulqdq,sse4.2")]
unsafe fn open_body<const NR: usize>(
    k: &Keys,
    h: &HKey,
    ctr: &[u8; 16],
    public: bool,
    acc: &mut u128,
    io: (*const u8, *mut u8, usize),
) {
    const B: usize = 16 * LANES;
    let mut c = start(ctr, public);
    let mut s = u128_to_m(*acc);
    // SAFETY: the head, every batch and the tail are inside the bytes at `inp` and `out`
    // (the contract).
    unsafe {
        let (inp, out, len) = aligned_head::<NR>(k, h, &mut c, &mut s, io);
        let full = len / B;
        if c.aligned() {
            for i in 0..full {
                s = batch_open::<NR, ALIGNED>(k, h, c, s, (inp.add(B * i), out.add(B * i)));
                c = c.add(LANES);
            }
        } else {
            for i in 0..full {
                let d = (inp.add(B * i), out.add(B * i));
                s = if c.fast() {
                    batch_open::<NR, NO_CARRY>(k, h, c, s, d)
                } else {
                    batch_open::<NR, GENERAL>(k, h, c, s, d)
                };
                c = c.add(LANES);
            }
        }
        let done = B * full;
        s = tail::<NR, false>(k, h, c.c, s, (inp.add(done), out.add(done), len - done));
    }
    *acc = m_to_u128(s);
}

macro_rules! entries {
    ($($name:ident, $b2b:ident, $body:ident, $inner:ident;)*) => {$(
        /// # Safety
        /// As the body's; the CPU runs AES-NI, PCLMULQDQ and SSE4.2.
        #[target_feature(enable = "aes,pclmulqdq,sse4.2")]
        unsafe fn $inner(
            k: &Keys,
            h: &HKey,
            ctr: &[u8; 16],
            public: bool,
            acc: &mut u128,
            io: (*const u8, *mut u8, usize),
        ) {
            // SAFETY: the caller's contract.
            unsafe {
                match k.rounds {
                    10 => $body::<10>(k, h, ctr, public, acc, io),
                    12 => $body::<12>(k, h, ctr, public, acc, io),
                    _ => $body::<14>(k, h, ctr, public, acc, io),
                }
            }
        }

        /// Safe entry point (see the module docs); whole blocks only, in place. `public`:
        /// `ctr`'s inc32 word is public (a 12-byte nonce), so batches may branch on it
        /// ([`Ctr`]).
        pub(crate) fn $name(
            k: &Keys,
            h: &HKey,
            ctr: &[u8; 16],
            public: bool,
            acc: &mut u128,
            buf: &mut [u8],
        ) {
            debug_assert!(buf.len().is_multiple_of(16));
            let (p, len) = (buf.as_mut_ptr(), buf.len() / 16 * 16);
            // SAFETY: the hardware `Keys` exist only for backends whose availability checked
            // AES-NI and SSE4.2, and a `clmul::Key` only where PCLMULQDQ is present
            // (`GhashKey::from_h`); `p` is `len` readable and writable bytes.
            unsafe { $inner(k, h, ctr, public, acc, (p, p, len)) }
        }

        /// The in-place entry point's work from `src` into `dst` (whole blocks, the same
        /// length; separate buffers, as two slices must be): one pass, no copy.
        pub(crate) fn $b2b(
            k: &Keys,
            h: &HKey,
            ctr: &[u8; 16],
            public: bool,
            acc: &mut u128,
            src: &[u8],
            dst: &mut [u8],
        ) {
            debug_assert!(src.len() == dst.len() && src.len().is_multiple_of(16));
            let len = src.len().min(dst.len()) / 16 * 16;
            // SAFETY: as in the in-place entry; `src` is `len` readable bytes and `dst` `len`
            // writable ones that do not overlap them (a shared and a mutable borrow).
            unsafe { $inner(k, h, ctr, public, acc, (src.as_ptr(), dst.as_mut_ptr(), len)) }
        }
    )*};
}

// IMPLEMENTATION NOTE: one SSE build, no AVX twin. Compiling a second copy with AVX (VEX
// three-operand forms) needs the whole body inlined into a `#[target_feature]` wrapper, which
// LLVM declines for bodies this size (a wrapper alone compiles nothing with AVX); the register
// copies VEX would save are eliminated at rename on the CPUs this kernel serves anyway.
entries! {
    seal, seal_b2b, seal_body, seal_inner;
    open, open_b2b, open_body, open_inner;
}
