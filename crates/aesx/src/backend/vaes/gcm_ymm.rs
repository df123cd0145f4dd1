//! The ymm main loop of the fused GCM kernel ([`super::gcm`]) as one block of inline
//! assembly: 16 blocks per iteration, registers allocated by hand so nothing spills.
//!
//! Written with intrinsics, LLVM kept the 16-block loop's 8 AES states, 3 GHASH accumulators,
//! counters and masks in 16 ymm registers only by spilling states, accumulators and the 16
//! power pointers to the stack (about 0.35 cycles/byte for AES-128 on Zen 3). Here:
//!
//! ```text
//! ymm0-7   counter blocks 0-15 (two per register) through the AES rounds
//! ymm8     the round key of the current round (VBROADCASTI128 from the schedule)
//! ymm9-11  GHASH accumulators LO, HI, MI (Karatsuba, lane-wise, unreduced)
//! ymm12-13 scratch (hashed data, products, reduction)
//! ymm14    the byte-reversed counters of register 0 (inc32 word in each lane's low dword);
//!          with a public counter, inside the loop, register 0's counter blocks as they are
//! ymm15    the GHASH state (xmm15; its upper half is zero)
//! ```
//!
//! The byte-swap mask, the lane offsets and the reduction constant are memory operands; the
//! key powers and their Karatsuba halves are VPCLMULQDQ memory operands. Round 0 is an XOR,
//! the middle rounds that come before the GHASH steps (1 for AES-128, 3 for AES-192, 5 for
//! AES-256) run in a small loop, then each of the last 8 middle rounds carries one ymm GHASH
//! step (2 blocks, 3 VPCLMULQDQ), its instructions placed one after each of the round's 8
//! VAESENCs; the 16 products are folded and reduced once (2 PCLMULQDQ), those instructions
//! interleaved with the 8 VAESENCLASTs, and the data is XORed after the last round.
//!
//! Why this order (Zen 3, measured in a stand-alone loop of the same instructions, AES-128,
//! 16 KiB, best of 300): GHASH steps between two halves of a round 8.33 GB/s, before the
//! round 8.42, one instruction after each VAESENC 8.95, and with the reduction spread over
//! the last round 9.04. VAESENC (2 a cycle, latency 4) has exactly 8 independent registers to
//! keep busy, so every vector instruction that lands on its two pipes delays a chain; spreading
//! the other work evenly lets the scheduler fill the gaps. `llvm-mca -mcpu=znver3` models
//! VPCLMULQDQ on the AES pipes (96 cycles an iteration); the hardware overlaps them only in
//! part (32 VAESENC + 4 VPCLMULQDQ take 2.3 cycles more than 32 VAESENC alone): an iteration
//! measures about 90 cycles, against 48 for its VAESENCs and 52 for its VPCLMULQDQs alone.
//!
//! Where the other cycles go (session 5, `scripts/gcm-ymm-lab/run.sh`: stand-alone copies of
//! this loop, some with instruction classes left out, AES-128, 16 KiB, interleaved, best of
//! 400 x 20 calls, Zen 3 at 3.24 GHz): the AES rounds alone take 40 cycles an iteration, and
//! with the 26 VPCLMULQDQ (and round 0) about 70; this loop takes 91.0 (9.12 GB/s). Each class
//! of the other vector instructions costs about a quarter cycle per instruction, as if spread
//! evenly over the four FP pipes, two of which are the AES pipes. Left out one class at a
//! time (from the variant with scalar counters below, 89.3 cycles): the data VPSHUFBs saved
//! 2.4 cycles, the Karatsuba VPSHUFDs 1.3, the accumulating VPXORs 7.8, the reduction 11.9,
//! the final XORs and stores 3.1. Those are close to the minimum GHASH needs on AVX2 (byte
//! swap, Karatsuba middle input, three accumulating XORs per register, one reduction per 16
//! blocks), so on Zen 3 this loop cannot get much nearer to the ~70 cycles of its AES and CLMUL
//! instructions: 1.2x ring (issue 11) would need about 83 cycles an iteration plus the
//! per-message costs. Tried and not kept: counters built by scalar code one iteration ahead
//! into a 256-byte local, as [`super::ctr_asm`] does (round 0 a VPXOR with the slot, the first
//! iteration's blocks by vector code): 91.0 -> 88.8 cycles in the lab (AES-256 105.5 ->
//! 102.4), and 16 KiB seal/open +2-3% in `examples/gcm_speed`, but 1 KiB open 2-3% slower, and
//! the local deepened the GCM kernels' stack from 576 to 888 B, past the 768-byte GCM wipe
//! (growing the wipe to 1 KiB costs every small message). Key-whitened slots (no round-0 VPXOR,
//! but key material in memory) measured 90.9 cycles, no better.
//!
//! The loop's text comes from macros (`batches!`): `weave!` places the GHASH and reduction
//! instructions among a round's VAESENCs (one after each) or VAESENCLASTs (two after each).
//!
//! Seal hashes the previous batch's ciphertext (`hash = out - 256`), open the batch itself
//! (`hash = out`: every load of it comes before the stores of the same iteration).
//!
//! Public counters (session 20): with a 12-byte nonce the inc32 word is the block index plus 2,
//! public, and the loop keeps register 0's counter blocks in their own byte order, adding each
//! register's offset to the last byte (`gcm_counters_pub!`): no VPSHUFB per register, which on
//! an Intel Golden Cove core (the Sapphire / Emerald Rapids guest; Alder Lake's P-cores run
//! this backend) competes for the vector ports VAESENC and VPCLMULQDQ use (measured, below;
//! the ports themselves are not). A batch that would carry out
//! of that byte (one in 16) branches to the byte-reversed code, out of the loop's line. In
//! `scripts/gcm-ymm-lab` on that core, the loop without its counter VPSHUFBs ran 64.0 cycles an
//! iteration against 70.5; the kernel, `aesx bench --ops gcm-enc,gcm-dec --sizes 16K,64K
//! --keys 128,256 --backends vaes256`, 14 runs alternated with the build before, best: seal and
//! open 1.02-1.10x (the VM's clock moved during the runs; every cell faster). A counter that
//! may be secret (J0 from GHASH, any other nonce length) runs the loop without the branch.
//!
//! Constant time: the loop count and the round count are public; no branch or address depends
//! on data or key, and the only branch on the counter is on a public one (above). No stack is
//! used: key material stays in registers and in the key.

use core::arch::asm;
use core::arch::x86_64::*;

use super::gcm::Key;
use crate::backend::aesni::Keys;

/// Constants, at fixed offsets the assembly uses: the byte-reversal mask (0), the counter
/// offsets of registers 0..8 (32 + 32 i: `2 i` in the low dword of each lane), the step of one
/// iteration (288: 16 in each lane), the reduction constant (320: `x^63 + x^62 + x^57`), and
/// for counters kept as they are (`gcm_counters_pub!`) the same offsets (352 + 32 i) and step
/// (608) added to the last byte of each lane (the top byte of its last dword).
#[repr(C, align(64))]
struct Consts([u32; 160]);

const fn consts() -> Consts {
    let mut c = [0u32; 160];
    // VPSHUFB mask reversing the 16 bytes of each lane.
    let mut b = 0;
    while b < 32 {
        c[b / 4] |= ((15 - b % 16) as u32) << (8 * (b % 4));
        b += 1;
    }
    let mut i = 0;
    while i < 8 {
        c[8 + 8 * i] = 2 * i as u32;
        c[8 + 8 * i + 4] = 2 * i as u32;
        i += 1;
    }
    c[72] = 16;
    c[76] = 16;
    // 0xc200_0000_0000_0000 in the low qword.
    c[81] = 0xc200_0000;
    let mut i = 0;
    while i < 9 {
        // Registers 0..8 at `2 i` blocks, then the step of 16, in byte 15 of each lane.
        let d = if i < 8 { 2 * i as u32 } else { 16 };
        c[88 + 8 * i + 3] = d << 24;
        c[88 + 8 * i + 7] = d << 24;
        i += 1;
    }
    Consts(c)
}

static CONSTS: Consts = consts();

/// `$op` (VAESENC or VAESENCLAST, key in ymm8) over the registers listed with other
/// instructions woven in: `$n` (1 or 2) of them after each register's round; whatever is left
/// follows the last.
macro_rules! weave {
    ($op:literal, $n:tt; []; $($g:expr),*) => {
        concat!($($g,)* "")
    };
    ($op:literal, 1; [$a:literal $($p:literal)*]; $g1:expr $(, $rest:expr)*) => {
        concat!(op2!(y, $op, $a, "8"), $g1, weave!($op, 1; [$($p)*]; $($rest),*))
    };
    ($op:literal, 2; [$a:literal $($p:literal)*]; $g1:expr, $g2:expr $(, $rest:expr)*) => {
        concat!(op2!(y, $op, $a, "8"), $g1, $g2, weave!($op, 2; [$($p)*]; $($rest),*))
    };
    ($op:literal, $n:tt; [$a:literal $($p:literal)*]; $($g:expr),*) => {
        concat!(op2!(y, $op, $a, "8"), $($g,)* weave!($op, $n; [$($p)*];))
    };
}

/// A middle round (key at `{kend} + $k`) carrying GHASH step `$o / 32` of the batch at
/// `{hash}`: its two byte-reversed blocks times the powers at byte offset `$o` of the tables,
/// one instruction after each VAESENC. The first step (`first`) adds the state (ymm15) and
/// starts the accumulators ymm9-11; the others add to them.
macro_rules! step {
    (first, $k:literal, $o:literal) => {
        concat!(
            "vbroadcasti128 ymm8, xmmword ptr [{kend} + ", $k, "]\n",
            weave!("aesenc", 1; ["0" "1" "2" "3" "4" "5" "6" "7"];
                concat!("vmovdqu ymm12, ymmword ptr [{hash} + ", $o, "]\n"),
                "vpshufb ymm12, ymm12, ymmword ptr [{c}]\n",
                "vpxor ymm12, ymm12, ymm15\n",
                concat!("vpclmulqdq ymm9, ymm12, ymmword ptr [{pow} + ", $o, "], 0x00\n"),
                concat!("vpclmulqdq ymm10, ymm12, ymmword ptr [{pow} + ", $o, "], 0x11\n"),
                "vpshufd ymm13, ymm12, 0x4e\n",
                "vpxor ymm12, ymm12, ymm13\n",
                concat!("vpclmulqdq ymm11, ymm12, ymmword ptr [{kara} + ", $o, "], 0x00\n"))
        )
    };
    ($k:literal, $o:literal) => {
        concat!(
            "vbroadcasti128 ymm8, xmmword ptr [{kend} + ", $k, "]\n",
            weave!("aesenc", 1; ["0" "1" "2" "3" "4" "5" "6" "7"];
                concat!("vmovdqu ymm12, ymmword ptr [{hash} + ", $o, "]\n"),
                "vpshufb ymm12, ymm12, ymmword ptr [{c}]\n",
                concat!("vpclmulqdq ymm13, ymm12, ymmword ptr [{pow} + ", $o, "], 0x00\n"),
                "vpxor ymm9, ymm9, ymm13\n",
                concat!("vpclmulqdq ymm13, ymm12, ymmword ptr [{pow} + ", $o, "], 0x11\n"),
                "vpxor ymm10, ymm10, ymm13\n",
                "vpshufd ymm13, ymm12, 0x4e\n",
                "vpxor ymm12, ymm12, ymm13\n",
                concat!("vpclmulqdq ymm12, ymm12, ymmword ptr [{kara} + ", $o, "], 0x00\n"),
                "vpxor ymm11, ymm11, ymm12\n")
        )
    };
}

/// The 16-block loop of [`batches`], register use as in the module's table.
macro_rules! batches {
    ($counters:expr) => {
        batches!($counters, "{out}", "")
    };
    // `$src`: the pointer operand the data is read from (`{out}` in place); `$adv`: its own
    // advance, if it is not `{out}`.
    ($counters:expr, $src:literal, $adv:literal) => {
        concat!(
            "2:\n",
            // Round 0: the counter blocks.
            "vbroadcasti128 ymm8, xmmword ptr [{rk}]\n",
            $counters,
            // The middle rounds before the last 8 (keys `{rk} + 16` up to `{kend}`).
            "lea {r}, [{rk} + 16]\n",
            "cmp {r}, {kend}\n",
            "je 4f\n",
            "3:\n",
            "vbroadcasti128 ymm8, xmmword ptr [{r}]\n",
            weave!("aesenc", 1; ["0" "1" "2" "3" "4" "5" "6" "7"];),
            "add {r}, 16\n",
            "cmp {r}, {kend}\n",
            "jne 3b\n",
            "4:\n",
            // The last 8 middle rounds, one GHASH step each.
            step!(first, "0", "0"),
            step!("16", "32"),
            step!("32", "64"),
            step!("48", "96"),
            step!("64", "128"),
            step!("80", "160"),
            step!("96", "192"),
            step!("112", "224"),
            // The last round with the reduction: the lanes folded, LO and HI into MI
            // (`x^63 + x^62 + x^57` at `{c} + 320`), MI into HI, the result into the state.
            "vbroadcasti128 ymm8, xmmword ptr [{kend} + 128]\n",
            weave!("aesenclast", 2; ["0" "1" "2" "3" "4" "5" "6" "7"];
                "vextracti128 xmm12, ymm9, 1\n",
                "vpxor xmm9, xmm9, xmm12\n",
                "vextracti128 xmm12, ymm10, 1\n",
                "vpxor xmm10, xmm10, xmm12\n",
                "vextracti128 xmm12, ymm11, 1\n",
                "vpxor xmm11, xmm11, xmm12\n",
                "vpxor xmm11, xmm11, xmm9\n",
                "vpxor xmm11, xmm11, xmm10\n",
                "vpclmulqdq xmm12, xmm9, xmmword ptr [{c} + 320], 0x00\n",
                "vpshufd xmm13, xmm9, 0x4e\n",
                "vpxor xmm11, xmm11, xmm12\n",
                "vpxor xmm11, xmm11, xmm13\n",
                "vpclmulqdq xmm12, xmm11, xmmword ptr [{c} + 320], 0x00\n",
                "vpshufd xmm13, xmm11, 0x4e\n",
                "vpxor xmm15, xmm10, xmm12\n",
                "vpxor xmm15, xmm15, xmm13\n"),
            gcm_xor_out!(y $src, "0", "0", "0"),
            gcm_xor_out!(y $src, "1", "1", "1"),
            gcm_xor_out!(y $src, "2", "2", "2"),
            gcm_xor_out!(y $src, "3", "3", "3"),
            gcm_xor_out!(y $src, "4", "4", "4"),
            gcm_xor_out!(y $src, "5", "5", "5"),
            gcm_xor_out!(y $src, "6", "6", "6"),
            gcm_xor_out!(y $src, "7", "7", "7"),
            "add {out}, 256\n",
            $adv,
            "add {hash}, 256\n",
            "dec {n}\n",
            "jnz 2b\n",
        )
    };
}

/// Runs `n` (>= 1) 16-block iterations: block `16 i + b` of `inp` is XORed with the keystream
/// of counter `ctr + 16 i + b` (`ctr` as the kernel keeps it: byte-reversed counters of
/// register 0, lanes +0 and +1) into the same block of `out` (`inp` is `out`, or does not
/// overlap it), and the 16 blocks at `hash + 256 i` are hashed into `s` (`hash` is
/// `out - 256` for seal, `inp` for open). `rounds` is 10, 12 or 14. `lo` is the
/// inc32 word of the first counter when it is public (a 12-byte nonce): the loop then builds
/// most batches' counters without byte swaps (`gcm_counters_pub!`), branching on it; `None`
/// for a counter that may be secret (no branch). Returns the counters after the last
/// iteration and the new state.
///
/// # Safety
///
/// The CPU has AVX2, VAES and VPCLMULQDQ; `out`, `inp` and `hash` point to `256 n` bytes
/// (writable, readable, readable); `inp` equals `out` or does not overlap it; `hash` equals
/// `inp` or ends at or before `out`.
#[allow(clippy::too_many_arguments)]
#[inline]
#[target_feature(enable = "avx2,vaes,vpclmulqdq")]
pub(super) unsafe fn batches(
    rk: &Keys,
    rounds: usize,
    k: &Key,
    ctr: __m256i,
    s: __m128i,
    hash: *const u8,
    (inp, out): (*const u8, *mut u8),
    n: usize,
    lo: Option<u32>,
) -> (__m256i, __m128i) {
    debug_assert!(n >= 1 && matches!(rounds, 10 | 12 | 14));
    let base = rk.enc.as_ptr().cast::<u8>();
    let (pow, kara) = k.tables();
    let mut c = ctr;
    let mut s = s;
    // SAFETY: the caller guarantees the features and the buffer extents (`inp`, `out` and
    // `hash` advance 256 bytes an iteration); the round keys read are `enc[0..=rounds]`
    // (`kend + 128` is `enc[rounds]`), the powers and Karatsuba halves read are entries 0..16
    // of tables of 20; the constants are 640 bytes of `CONSTS`. The asm uses no stack and
    // clobbers only the registers it names.
    unsafe {
        let kend = base.add(16 * (rounds - 8));
        // The loop with either counter code: the same operands, plus `{lo}` for the public one
        // and `{inp}` buffer to buffer.
        macro_rules! run {
            ($($text:expr),+; $($lo:tt)*) => {
                asm!(
                    $($text),+,
                    rk = in(reg) base,
                    kend = in(reg) kend,
                    r = out(reg) _,
                    pow = in(reg) pow,
                    kara = in(reg) kara,
                    c = in(reg) CONSTS.0.as_ptr(),
                    hash = inout(reg) hash => _,
                    out = inout(reg) out => _,
                    n = inout(reg) n => _,
                    $($lo)*
                    out("ymm0") _, out("ymm1") _, out("ymm2") _, out("ymm3") _,
                    out("ymm4") _, out("ymm5") _, out("ymm6") _, out("ymm7") _,
                    out("ymm8") _, out("ymm9") _, out("ymm10") _, out("ymm11") _,
                    out("ymm12") _, out("ymm13") _,
                    inout("ymm14") c,
                    inout("xmm15") s,
                    options(nostack),
                )
            };
        }
        // In place, or (buffer to buffer) the data read from `{inp}`: one more pointer and
        // its `add` an iteration, in a loop of its own so that the in-place one is unchanged.
        let b2b = inp != out.cast_const();
        match (lo, b2b) {
            (Some(lo), false) => run!(
                // Counters kept as they are inside the loop, byte-reversed outside it.
                "vpshufb ymm14, ymm14, ymmword ptr [{c}]\n",
                batches!(gcm_counters_pub!(y)),
                gcm_counters_pub!(@slow y),
                "vpshufb ymm14, ymm14, ymmword ptr [{c}]\n";
                lo = inout(reg) lo => _,
            ),
            (None, false) => run!(batches!(gcm_counters!(y)); ),
            (Some(lo), true) => run!(
                "vpshufb ymm14, ymm14, ymmword ptr [{c}]\n",
                batches!(gcm_counters_pub!(y), "{inp}", "add {inp}, 256\n"),
                gcm_counters_pub!(@slow y),
                "vpshufb ymm14, ymm14, ymmword ptr [{c}]\n";
                lo = inout(reg) lo => _,
                inp = inout(reg) inp => _,
            ),
            (None, true) => run!(
                batches!(gcm_counters!(y), "{inp}", "add {inp}, 256\n");
                inp = inout(reg) inp => _,
            ),
        }
    }
    (c, s)
}
