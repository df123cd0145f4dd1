//! The zmm main loop of the fused GCM kernel ([`super::gcm`]) on AMD (Zen 4) as one block of
//! inline assembly: 32 blocks (8 zmm registers) per iteration, registers allocated by hand.
//!
//! It is the ymm loop of [`super::gcm_ymm`] at twice the width, with the zmm GHASH of the
//! intrinsics kernel's AMD tuning (Karatsuba, the three sums reduced lane-wise at full width
//! and the four lanes folded once):
//!
//! ```text
//! zmm0-7   counter blocks 0-31 (four per register) through the AES rounds
//! zmm8     the round key of rounds 0 and 1, of the rounds after the GHASH steps and of the
//!          last (VBROADCASTI32X4 from the schedule each iteration)
//! zmm9-11  GHASH accumulators LO, HI, MI (Karatsuba, lane-wise, unreduced)
//! zmm12-13 scratch (hashed data, products, reduction)
//! zmm14    the byte-reversed counters of register 0 (inc32 word in each lane's low dword)
//! zmm15    the GHASH state (xmm15; the rest of the register is zero)
//! zmm16-23 seal: the previous batch's ciphertext, hashed from here
//! zmm24-31 the round keys of rounds 2 to 9 (the GHASH rounds)
//! ```
//!
//! The byte-swap mask, the lane offsets and the reduction constant are memory operands; the
//! key powers `H^32..H^1` and their Karatsuba halves are VPCLMULQDQ memory operands. Round 0
//! is an XOR; each of rounds 2 to 9 carries one zmm GHASH step (4 blocks, 3 VPCLMULQDQ), its
//! instructions placed in threes after every second of the round's 8 VAESENCs; the 32
//! products are reduced once (2 VPCLMULQDQ, lane-wise) and folded right after round 9; the
//! middle rounds after that (2 for AES-192, 4 for AES-256) run in a small loop, and the data
//! is XORed after the last round.
//!
//! Why 32 blocks (session 16, Zen 4): zmm VAESENC and VPCLMULQDQ share the two pipes that run
//! 512-bit work (each multiply takes one VAESENC's slot, `scripts/avx512-mix.c`), and with 4
//! registers of counter blocks in flight (the 16-block batch of the published designs) the 4
//! chains of dependent rounds leave the scheduler little to put in the slots the multiplies
//! take: the 16-block kernel sealed at 12.7 GB/s, about 73 cycles a batch at the clock that
//! `aes-limit` implies (one zmm VAESENC a cycle), against 54 for its 40 VAESENC and 14
//! VPCLMULQDQ. With 8 registers it has twice the independent rounds (`scripts/gcm-batch-mix.c`
//! models both). The intrinsics kernel at 8 registers spilled round keys and powers to the
//! stack (15-29 stack accesses an iteration) and gained 2%; this loop, 3.5-7% at 16 KiB
//! (`aesx bench --backends vaes512 --ops gcm-enc,gcm-dec`, README session 16). The order of
//! the GHASH instructions inside a round (one after each VAESENC, after every second, all
//! before or all after the round) and the reduction's place (before or among the last round's
//! VAESENCLASTs) moved it by 1-2%: kept, a step's instructions after every second VAESENC. For
//! AES-192 and -256 the GHASH steps and the reduction first ride rounds 2-9 and the extra
//! rounds follow, rather than the steps riding the last 8 middle rounds (as in the ymm loop):
//! `aesx bench`, four alternated runs, AES-256 seal and open +2-4% from 8 KiB, AES-192 +1-2%,
//! AES-128 the same instructions (0.99-1.01x).
//! Schoolbook products instead of Karatsuba (4 VPCLMULQDQ and 4 other instructions a step
//! instead of 3 and 6) ran 0.95-0.96x (session 18): the multiplies' slots bind, not the
//! XORs and shuffles.
//!
//! The loop is written once (`batches!`) for both directions, from one macro per instruction
//! group: `weave!` places a GHASH step's instructions among a round's VAESENCs, and the two
//! directions differ only in where a step's data comes from and where the output goes.
//!
//! Seal hashes the previous batch's ciphertext from the registers it was left in (zmm16-23;
//! read back from the output instead, 64-byte loads of what the iteration before had just
//! stored, the loop ran 6% slower than open), open the batch itself from memory (every load of
//! it comes before the stores of the same iteration).
//!
//! Constant time: the loop count and the round count are public; no branch or address depends
//! on data, key or counter. No stack is used: key material stays in registers and in the key;
//! the caller zeroes the registers (`backend::vclmul_seal_open` zeroes zmm16-31, where this loop
//! keeps eight round keys and the last batch, and `wipe_stack_gcm` runs VZEROALL: zmm0-15).

use core::arch::asm;
use core::arch::x86_64::*;

use super::gcm::Key;
use crate::backend::aesni::Keys;

/// Constants, at fixed offsets the assembly uses: the byte-reversal mask (0), the counter
/// offsets of registers 0..8 (64 + 64 i: `4 i` in the low dword of each lane; the lanes' own
/// offsets 0..3 are in the counters), the step of one iteration (576: 32 in each lane) and the
/// reduction constant (640: `x^63 + x^62 + x^57` in the low qword of each lane).
#[repr(C, align(64))]
struct Consts([u32; 176]);

const fn consts() -> Consts {
    let mut c = [0u32; 176];
    // VPSHUFB mask reversing the 16 bytes of each lane.
    let mut b = 0;
    while b < 64 {
        c[b / 4] |= ((15 - b % 16) as u32) << (8 * (b % 4));
        b += 1;
    }
    let mut i = 0;
    while i < 8 {
        let mut l = 0;
        while l < 4 {
            c[16 + 16 * i + 4 * l] = 4 * i as u32;
            l += 1;
        }
        i += 1;
    }
    let mut l = 0;
    while l < 4 {
        c[144 + 4 * l] = 32;
        // 0xc200_0000_0000_0000 in the low qword of lane `l`.
        c[160 + 4 * l + 1] = 0xc200_0000;
        l += 1;
    }
    Consts(c)
}

static CONSTS: Consts = consts();

/// Round `$k` (a key register) of the 8 counter registers with a list of other instructions
/// woven in: VAESENC of registers 0 and 1, then up to three of the instructions, registers 2
/// and 3, three more, and so on; whatever is left follows registers 6 and 7.
macro_rules! weave {
    ($k:literal; []; $($g:expr),*) => {
        concat!($($g,)* "")
    };
    (
        $k:literal; [$a:literal $b:literal $($p:literal)*];
        $g1:expr, $g2:expr, $g3:expr $(, $rest:expr)*
    ) => {
        concat!(
            op2!(z, "aesenc", $a, $k),
            op2!(z, "aesenc", $b, $k),
            $g1,
            $g2,
            $g3,
            weave!($k; [$($p)*]; $($rest),*)
        )
    };
    ($k:literal; [$a:literal $b:literal $($p:literal)*]; $($g:expr),*) => {
        concat!(
            op2!(z, "aesenc", $a, $k),
            op2!(z, "aesenc", $b, $k),
            $($g,)*
            weave!($k; [$($p)*];)
        )
    };
}

/// The first GHASH step of a batch, woven into round `$k`: the four byte-reversed blocks that
/// `$load` leaves in zmm12, XOR the state (zmm15), times the four highest powers (`{pow}`,
/// `{kara}` + 0): the three Karatsuba products start the accumulators zmm9-11.
macro_rules! step_first {
    ($k:literal; $($load:expr),+) => {
        weave!($k; ["0" "1" "2" "3" "4" "5" "6" "7"];
            $($load,)+
            "vpxorq zmm12, zmm12, zmm15\n",
            "vpclmulqdq zmm9, zmm12, zmmword ptr [{pow} + 0], 0x00\n",
            "vpclmulqdq zmm10, zmm12, zmmword ptr [{pow} + 0], 0x11\n",
            "vpshufd zmm13, zmm12, 0x4e\n",
            "vpxorq zmm12, zmm12, zmm13\n",
            "vpclmulqdq zmm11, zmm12, zmmword ptr [{kara} + 0], 0x00\n")
    };
}

/// A later GHASH step, woven into round `$k`: the four blocks `$load` leaves in zmm12 times
/// the powers at byte offset `$o` of the tables, added to the accumulators.
macro_rules! step {
    ($k:literal, $o:literal; $($load:expr),+) => {
        weave!($k; ["0" "1" "2" "3" "4" "5" "6" "7"];
            $($load,)+
            concat!("vpclmulqdq zmm13, zmm12, zmmword ptr [{pow} + ", $o, "], 0x00\n"),
            "vpxorq zmm9, zmm9, zmm13\n",
            concat!("vpclmulqdq zmm13, zmm12, zmmword ptr [{pow} + ", $o, "], 0x11\n"),
            "vpxorq zmm10, zmm10, zmm13\n",
            "vpshufd zmm13, zmm12, 0x4e\n",
            "vpxorq zmm12, zmm12, zmm13\n",
            concat!("vpclmulqdq zmm12, zmm12, zmmword ptr [{kara} + ", $o, "], 0x00\n"),
            "vpxorq zmm11, zmm11, zmm12\n")
    };
}

/// GHASH step `$o / 64` of a batch woven into round `$k`: seal hashes the previous batch
/// from the register it was left in (`$y`), open this batch from memory (`$src + $o`: the
/// input, `{out}` in place).
macro_rules! hash {
    (seal, $src:literal, first, $k:literal, $y:literal, $o:literal) => {
        step_first!($k; concat!("vpshufb zmm12, zmm", $y, ", zmmword ptr [{c}]\n"))
    };
    (open, $src:literal, first, $k:literal, $y:literal, $o:literal) => {
        step_first!($k;
            concat!("vmovdqu64 zmm12, zmmword ptr [", $src, " + ", $o, "]\n"),
            "vpshufb zmm12, zmm12, zmmword ptr [{c}]\n")
    };
    (seal, $src:literal, $k:literal, $y:literal, $o:literal) => {
        step!($k, $o; concat!("vpshufb zmm12, zmm", $y, ", zmmword ptr [{c}]\n"))
    };
    (open, $src:literal, $k:literal, $y:literal, $o:literal) => {
        step!($k, $o;
            concat!("vmovdqu64 zmm12, zmmword ptr [", $src, " + ", $o, "]\n"),
            "vpshufb zmm12, zmm12, zmmword ptr [{c}]\n")
    };
}

/// Register `$i`'s keystream XORed with the data at `$src` and stored at `{out}`
/// (`gcm_xor_out!`); seal keeps the result in `$y` for the next iteration's GHASH.
macro_rules! xor_out {
    (seal, $src:literal, $i:literal, $y:literal) => {
        gcm_xor_out!(z $src, $y, $i, $i)
    };
    (open, $src:literal, $i:literal, $y:literal) => {
        gcm_xor_out!(z $src, $i, $i, $i)
    };
}

/// The 32-block loop of [`seal_batches`] (`seal`) or [`open_batches`] (`open`), register
/// use as in the module's table; in place, or with `$src` (`"{inp}"`) the pointer operand
/// the data is read from, and `$adv` its advance.
macro_rules! batches {
    ($m:ident) => {
        batches!($m, "{out}", "")
    };
    ($m:ident, $src:literal, $adv:literal) => {
        concat!(
            "vbroadcasti32x4 zmm24, xmmword ptr [{rk} + 32]\n",
            "vbroadcasti32x4 zmm25, xmmword ptr [{rk} + 48]\n",
            "vbroadcasti32x4 zmm26, xmmword ptr [{rk} + 64]\n",
            "vbroadcasti32x4 zmm27, xmmword ptr [{rk} + 80]\n",
            "vbroadcasti32x4 zmm28, xmmword ptr [{rk} + 96]\n",
            "vbroadcasti32x4 zmm29, xmmword ptr [{rk} + 112]\n",
            "vbroadcasti32x4 zmm30, xmmword ptr [{rk} + 128]\n",
            "vbroadcasti32x4 zmm31, xmmword ptr [{rk} + 144]\n",
            "2:\n",
            // Round 0: the counter blocks.
            "vbroadcasti32x4 zmm8, xmmword ptr [{rk}]\n",
            gcm_counters!(z),
            // Round 1, then rounds 2-9 with the GHASH steps.
            "vbroadcasti32x4 zmm8, xmmword ptr [{rk} + 16]\n",
            weave!("8"; ["0" "1" "2" "3" "4" "5" "6" "7"];),
            hash!($m, $src, first, "24", "16", "0"),
            hash!($m, $src, "25", "17", "64"),
            hash!($m, $src, "26", "18", "128"),
            hash!($m, $src, "27", "19", "192"),
            hash!($m, $src, "28", "20", "256"),
            hash!($m, $src, "29", "21", "320"),
            hash!($m, $src, "30", "22", "384"),
            hash!($m, $src, "31", "23", "448"),
            // The reduction: LO and HI folded into MI and MI into HI (`x^63 + x^62 + x^57`
            // at `{c} + 640`), then the four lanes added into the state.
            "vpternlogq zmm11, zmm9, zmm10, 0x96\n",
            "vpclmulqdq zmm12, zmm9, zmmword ptr [{c} + 640], 0x00\n",
            "vpshufd zmm13, zmm9, 0x4e\n",
            "vpternlogq zmm11, zmm12, zmm13, 0x96\n",
            "vpclmulqdq zmm12, zmm11, zmmword ptr [{c} + 640], 0x00\n",
            "vpshufd zmm13, zmm11, 0x4e\n",
            "vpternlogq zmm10, zmm12, zmm13, 0x96\n",
            "vextracti64x4 ymm12, zmm10, 1\n",
            "vpxorq ymm10, ymm10, ymm12\n",
            "vextracti32x4 xmm12, ymm10, 1\n",
            "vpxor xmm15, xmm10, xmm12\n",
            // The rounds after 9 (AES-192, AES-256): keys from `{rk} + 160` to `{kend} + 112`.
            "lea {r}, [{rk} + 32]\n",
            "cmp {r}, {kend}\n",
            "je 4f\n",
            "3:\n",
            "vbroadcasti32x4 zmm8, xmmword ptr [{r} + 128]\n",
            weave!("8"; ["0" "1" "2" "3" "4" "5" "6" "7"];),
            "add {r}, 16\n",
            "cmp {r}, {kend}\n",
            "jne 3b\n",
            "4:\n",
            // The last round and the data.
            "vbroadcasti32x4 zmm8, xmmword ptr [{kend} + 128]\n",
            op2!(z, "aesenclast", "0", "8"),
            op2!(z, "aesenclast", "1", "8"),
            op2!(z, "aesenclast", "2", "8"),
            op2!(z, "aesenclast", "3", "8"),
            op2!(z, "aesenclast", "4", "8"),
            op2!(z, "aesenclast", "5", "8"),
            op2!(z, "aesenclast", "6", "8"),
            op2!(z, "aesenclast", "7", "8"),
            xor_out!($m, $src, "0", "16"),
            xor_out!($m, $src, "1", "17"),
            xor_out!($m, $src, "2", "18"),
            xor_out!($m, $src, "3", "19"),
            xor_out!($m, $src, "4", "20"),
            xor_out!($m, $src, "5", "21"),
            xor_out!($m, $src, "6", "22"),
            xor_out!($m, $src, "7", "23"),
            "add {out}, 512\n",
            $adv,
            "dec {n}\n",
            "jnz 2b\n",
        )
    };
}

/// The `asm!` of [`seal_batches`] and [`open_batches`]: the loop `$text` with the operands
/// both take (round keys, power tables, constants, output, iteration count, counters in
/// zmm14, GHASH state in zmm15, the registers the loop clobbers), then `$extra`: `{inp}` for
/// the buffer-to-buffer loop (named operands first) and seal's carried batch (zmm16-23).
macro_rules! batches_asm {
    ($text:expr, $rk:expr, $kend:expr, $pow:expr, $kara:expr, $out:expr, $n:expr,
     $c:ident, $s:ident; $($extra:tt)*) => {
        asm!(
            $text,
            rk = in(reg) $rk,
            kend = in(reg) $kend,
            r = out(reg) _,
            pow = in(reg) $pow,
            kara = in(reg) $kara,
            c = in(reg) CONSTS.0.as_ptr(),
            out = inout(reg) $out => _,
            n = inout(reg) $n => _,
            $($extra)*
            out("zmm0") _, out("zmm1") _, out("zmm2") _, out("zmm3") _,
            out("zmm4") _, out("zmm5") _, out("zmm6") _, out("zmm7") _,
            out("zmm8") _, out("zmm9") _, out("zmm10") _, out("zmm11") _,
            out("zmm12") _, out("zmm13") _,
            inout("zmm14") $c,
            inout("zmm15") $s,
            out("zmm24") _, out("zmm25") _, out("zmm26") _, out("zmm27") _,
            out("zmm28") _, out("zmm29") _, out("zmm30") _, out("zmm31") _,
            options(nostack),
        )
    };
}

/// Seal: runs `n` (>= 1) 32-block iterations: block `32 i + b` of `inp` is XORed with the
/// keystream of counter `ctr + 32 i + b` into the same block of `out` (`inp` is `out`, or does
/// not overlap it) (`ctr` as the kernel keeps it: byte-reversed counters
/// of register 0, lanes +0..+3), and the batch before it (`y`, then each iteration's output)
/// is hashed into `s`. `rounds` is 10, 12 or 14. Returns the counters after the last
/// iteration, the new state and the last iteration's output (not yet hashed).
///
/// # Safety
///
/// The CPU has AVX-512F/BW, VAES and VPCLMULQDQ; `out` points to `512 n` writable bytes,
/// `inp` to as many readable ones (equal or disjoint).
#[allow(clippy::too_many_arguments)]
#[inline]
#[target_feature(enable = "avx512f,avx512bw,vaes,vpclmulqdq")]
pub(super) unsafe fn seal_batches(
    rk: &Keys,
    rounds: usize,
    k: &Key,
    ctr: __m512i,
    s: __m128i,
    y: [__m512i; 8],
    (inp, out): (*const u8, *mut u8),
    n: usize,
) -> (__m512i, __m128i, [__m512i; 8]) {
    debug_assert!(n >= 1 && matches!(rounds, 10 | 12 | 14));
    let base = rk.enc.as_ptr().cast::<u8>();
    let (pow, kara) = k.tables32();
    let mut c = ctr;
    // The state in lane 0, the other lanes zero (register 0's block 0 takes it).
    let mut s = _mm512_zextsi128_si512(s);
    let [
        mut y0,
        mut y1,
        mut y2,
        mut y3,
        mut y4,
        mut y5,
        mut y6,
        mut y7,
    ] = y;
    // SAFETY: the caller guarantees the features and the buffer extent; the round keys read
    // are `enc[0..=rounds]` (`kend + 128` is `enc[rounds]`, `rk + 32 + 16 j` `enc[2 + j]`),
    // the powers and Karatsuba halves read are entries 0..32 of tables of 36; the constants
    // are 704 bytes of `CONSTS`. The asm uses no stack and clobbers only the registers it
    // names.
    unsafe {
        let kend = base.add(16 * (rounds - 8));
        // In place, or the data read from `{inp}` (a loop of its own: the in-place one is
        // unchanged). The batch carried between calls is in zmm16-23.
        macro_rules! run {
            ($text:expr; $($inp:tt)*) => {
                batches_asm!(
                    $text, base, kend, pow, kara, out, n, c, s;
                    $($inp)*
                    inout("zmm16") y0, inout("zmm17") y1, inout("zmm18") y2, inout("zmm19") y3,
                    inout("zmm20") y4, inout("zmm21") y5, inout("zmm22") y6, inout("zmm23") y7,
                )
            };
        }
        if inp == out.cast_const() {
            run!(batches!(seal); );
        } else {
            run!(batches!(seal, "{inp}", "add {inp}, 512\n"); inp = inout(reg) inp => _,);
        }
    }
    (
        c,
        _mm512_castsi512_si128(s),
        [y0, y1, y2, y3, y4, y5, y6, y7],
    )
}

/// Open: runs `n` (>= 1) 32-block iterations: the 32 blocks at `inp + 512 i` are hashed into
/// `s`, then XORed with the keystream of counters `ctr + 32 i + b` into `out + 512 i` (as for
/// [`seal_batches`]).
/// Returns the counters after the last iteration and the new state.
///
/// # Safety
///
/// The CPU has AVX-512F/BW, VAES and VPCLMULQDQ; `out` points to `512 n` writable bytes,
/// `inp` to as many readable ones (equal or disjoint).
#[inline]
#[target_feature(enable = "avx512f,avx512bw,vaes,vpclmulqdq")]
pub(super) unsafe fn open_batches(
    rk: &Keys,
    rounds: usize,
    k: &Key,
    ctr: __m512i,
    s: __m128i,
    (inp, out): (*const u8, *mut u8),
    n: usize,
) -> (__m512i, __m128i) {
    debug_assert!(n >= 1 && matches!(rounds, 10 | 12 | 14));
    let base = rk.enc.as_ptr().cast::<u8>();
    let (pow, kara) = k.tables32();
    let mut c = ctr;
    let mut s = _mm512_zextsi128_si512(s);
    // SAFETY: the caller guarantees the features and the buffer extent; the round keys read
    // are `enc[0..=rounds]` (`kend + 128` is `enc[rounds]`, `rk + 32 + 16 j` `enc[2 + j]`),
    // the powers and Karatsuba halves read are entries 0..32 of tables of 36; the constants
    // are 704 bytes of `CONSTS`. The asm uses no stack and clobbers only the registers it
    // names.
    unsafe {
        let kend = base.add(16 * (rounds - 8));
        // As in `seal_batches`, without its carried batch.
        macro_rules! run {
            ($text:expr; $($inp:tt)*) => {
                batches_asm!($text, base, kend, pow, kara, out, n, c, s; $($inp)*)
            };
        }
        if inp == out.cast_const() {
            run!(batches!(open); );
        } else {
            run!(batches!(open, "{inp}", "add {inp}, 512\n"); inp = inout(reg) inp => _,);
        }
    }
    (c, _mm512_castsi512_si128(s))
}
