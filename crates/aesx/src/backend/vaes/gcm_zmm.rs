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

/// Seal: runs `n` (>= 1) 32-block iterations: block `32 i + b` of `out` is XORed with the
/// keystream of counter `ctr + 32 i + b` (`ctr` as the kernel keeps it: byte-reversed counters
/// of register 0, lanes +0..+3), and the batch before it (`y`, then each iteration's output)
/// is hashed into `s`. `rounds` is 10, 12 or 14. Returns the counters after the last
/// iteration, the new state and the last iteration's output (not yet hashed).
///
/// # Safety
///
/// The CPU has AVX-512F/BW, VAES and VPCLMULQDQ; `out` points to `512 n` writable bytes.
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
    out: *mut u8,
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
    // are `enc[0..=rounds]` (`kend + 128` is `enc[rounds]`, `rk + 32 + 16 j` `enc[2 + j]`), the powers and Karatsuba halves
    // read are entries 0..32 of tables of 36; the constants are 704 bytes of `CONSTS`. The
    // asm uses no stack and clobbers only the registers it names.
    unsafe {
        let kend = base.add(16 * (rounds - 8));
        asm!(
            "vbroadcasti32x4 zmm24, xmmword ptr [{rk} + 32]",
            "vbroadcasti32x4 zmm25, xmmword ptr [{rk} + 48]",
            "vbroadcasti32x4 zmm26, xmmword ptr [{rk} + 64]",
            "vbroadcasti32x4 zmm27, xmmword ptr [{rk} + 80]",
            "vbroadcasti32x4 zmm28, xmmword ptr [{rk} + 96]",
            "vbroadcasti32x4 zmm29, xmmword ptr [{rk} + 112]",
            "vbroadcasti32x4 zmm30, xmmword ptr [{rk} + 128]",
            "vbroadcasti32x4 zmm31, xmmword ptr [{rk} + 144]",
            "2:",
            "vbroadcasti32x4 zmm8, xmmword ptr [{rk}]",
            "vpaddd zmm0, zmm14, zmmword ptr [{c} + 64]",
            "vpshufb zmm0, zmm0, zmmword ptr [{c}]",
            "vpxorq zmm0, zmm0, zmm8",
            "vpaddd zmm1, zmm14, zmmword ptr [{c} + 128]",
            "vpshufb zmm1, zmm1, zmmword ptr [{c}]",
            "vpxorq zmm1, zmm1, zmm8",
            "vpaddd zmm2, zmm14, zmmword ptr [{c} + 192]",
            "vpshufb zmm2, zmm2, zmmword ptr [{c}]",
            "vpxorq zmm2, zmm2, zmm8",
            "vpaddd zmm3, zmm14, zmmword ptr [{c} + 256]",
            "vpshufb zmm3, zmm3, zmmword ptr [{c}]",
            "vpxorq zmm3, zmm3, zmm8",
            "vpaddd zmm4, zmm14, zmmword ptr [{c} + 320]",
            "vpshufb zmm4, zmm4, zmmword ptr [{c}]",
            "vpxorq zmm4, zmm4, zmm8",
            "vpaddd zmm5, zmm14, zmmword ptr [{c} + 384]",
            "vpshufb zmm5, zmm5, zmmword ptr [{c}]",
            "vpxorq zmm5, zmm5, zmm8",
            "vpaddd zmm6, zmm14, zmmword ptr [{c} + 448]",
            "vpshufb zmm6, zmm6, zmmword ptr [{c}]",
            "vpxorq zmm6, zmm6, zmm8",
            "vpaddd zmm7, zmm14, zmmword ptr [{c} + 512]",
            "vpshufb zmm7, zmm7, zmmword ptr [{c}]",
            "vpxorq zmm7, zmm7, zmm8",
            "vpaddd zmm14, zmm14, zmmword ptr [{c} + 576]",
            "vbroadcasti32x4 zmm8, xmmword ptr [{rk} + 16]",
            "vaesenc zmm0, zmm0, zmm8",
            "vaesenc zmm1, zmm1, zmm8",
            "vaesenc zmm2, zmm2, zmm8",
            "vaesenc zmm3, zmm3, zmm8",
            "vaesenc zmm4, zmm4, zmm8",
            "vaesenc zmm5, zmm5, zmm8",
            "vaesenc zmm6, zmm6, zmm8",
            "vaesenc zmm7, zmm7, zmm8",
            "vaesenc zmm0, zmm0, zmm24",
            "vaesenc zmm1, zmm1, zmm24",
            "vpshufb zmm12, zmm16, zmmword ptr [{c}]",
            "vpxorq zmm12, zmm12, zmm15",
            "vpclmulqdq zmm9, zmm12, zmmword ptr [{pow} + 0], 0x00",
            "vaesenc zmm2, zmm2, zmm24",
            "vaesenc zmm3, zmm3, zmm24",
            "vpclmulqdq zmm10, zmm12, zmmword ptr [{pow} + 0], 0x11",
            "vpshufd zmm13, zmm12, 0x4e",
            "vpxorq zmm12, zmm12, zmm13",
            "vaesenc zmm4, zmm4, zmm24",
            "vaesenc zmm5, zmm5, zmm24",
            "vpclmulqdq zmm11, zmm12, zmmword ptr [{kara} + 0], 0x00",
            "vaesenc zmm6, zmm6, zmm24",
            "vaesenc zmm7, zmm7, zmm24",
            "vaesenc zmm0, zmm0, zmm25",
            "vaesenc zmm1, zmm1, zmm25",
            "vpshufb zmm12, zmm17, zmmword ptr [{c}]",
            "vpclmulqdq zmm13, zmm12, zmmword ptr [{pow} + 64], 0x00",
            "vpxorq zmm9, zmm9, zmm13",
            "vaesenc zmm2, zmm2, zmm25",
            "vaesenc zmm3, zmm3, zmm25",
            "vpclmulqdq zmm13, zmm12, zmmword ptr [{pow} + 64], 0x11",
            "vpxorq zmm10, zmm10, zmm13",
            "vpshufd zmm13, zmm12, 0x4e",
            "vaesenc zmm4, zmm4, zmm25",
            "vaesenc zmm5, zmm5, zmm25",
            "vpxorq zmm12, zmm12, zmm13",
            "vpclmulqdq zmm12, zmm12, zmmword ptr [{kara} + 64], 0x00",
            "vpxorq zmm11, zmm11, zmm12",
            "vaesenc zmm6, zmm6, zmm25",
            "vaesenc zmm7, zmm7, zmm25",
            "vaesenc zmm0, zmm0, zmm26",
            "vaesenc zmm1, zmm1, zmm26",
            "vpshufb zmm12, zmm18, zmmword ptr [{c}]",
            "vpclmulqdq zmm13, zmm12, zmmword ptr [{pow} + 128], 0x00",
            "vpxorq zmm9, zmm9, zmm13",
            "vaesenc zmm2, zmm2, zmm26",
            "vaesenc zmm3, zmm3, zmm26",
            "vpclmulqdq zmm13, zmm12, zmmword ptr [{pow} + 128], 0x11",
            "vpxorq zmm10, zmm10, zmm13",
            "vpshufd zmm13, zmm12, 0x4e",
            "vaesenc zmm4, zmm4, zmm26",
            "vaesenc zmm5, zmm5, zmm26",
            "vpxorq zmm12, zmm12, zmm13",
            "vpclmulqdq zmm12, zmm12, zmmword ptr [{kara} + 128], 0x00",
            "vpxorq zmm11, zmm11, zmm12",
            "vaesenc zmm6, zmm6, zmm26",
            "vaesenc zmm7, zmm7, zmm26",
            "vaesenc zmm0, zmm0, zmm27",
            "vaesenc zmm1, zmm1, zmm27",
            "vpshufb zmm12, zmm19, zmmword ptr [{c}]",
            "vpclmulqdq zmm13, zmm12, zmmword ptr [{pow} + 192], 0x00",
            "vpxorq zmm9, zmm9, zmm13",
            "vaesenc zmm2, zmm2, zmm27",
            "vaesenc zmm3, zmm3, zmm27",
            "vpclmulqdq zmm13, zmm12, zmmword ptr [{pow} + 192], 0x11",
            "vpxorq zmm10, zmm10, zmm13",
            "vpshufd zmm13, zmm12, 0x4e",
            "vaesenc zmm4, zmm4, zmm27",
            "vaesenc zmm5, zmm5, zmm27",
            "vpxorq zmm12, zmm12, zmm13",
            "vpclmulqdq zmm12, zmm12, zmmword ptr [{kara} + 192], 0x00",
            "vpxorq zmm11, zmm11, zmm12",
            "vaesenc zmm6, zmm6, zmm27",
            "vaesenc zmm7, zmm7, zmm27",
            "vaesenc zmm0, zmm0, zmm28",
            "vaesenc zmm1, zmm1, zmm28",
            "vpshufb zmm12, zmm20, zmmword ptr [{c}]",
            "vpclmulqdq zmm13, zmm12, zmmword ptr [{pow} + 256], 0x00",
            "vpxorq zmm9, zmm9, zmm13",
            "vaesenc zmm2, zmm2, zmm28",
            "vaesenc zmm3, zmm3, zmm28",
            "vpclmulqdq zmm13, zmm12, zmmword ptr [{pow} + 256], 0x11",
            "vpxorq zmm10, zmm10, zmm13",
            "vpshufd zmm13, zmm12, 0x4e",
            "vaesenc zmm4, zmm4, zmm28",
            "vaesenc zmm5, zmm5, zmm28",
            "vpxorq zmm12, zmm12, zmm13",
            "vpclmulqdq zmm12, zmm12, zmmword ptr [{kara} + 256], 0x00",
            "vpxorq zmm11, zmm11, zmm12",
            "vaesenc zmm6, zmm6, zmm28",
            "vaesenc zmm7, zmm7, zmm28",
            "vaesenc zmm0, zmm0, zmm29",
            "vaesenc zmm1, zmm1, zmm29",
            "vpshufb zmm12, zmm21, zmmword ptr [{c}]",
            "vpclmulqdq zmm13, zmm12, zmmword ptr [{pow} + 320], 0x00",
            "vpxorq zmm9, zmm9, zmm13",
            "vaesenc zmm2, zmm2, zmm29",
            "vaesenc zmm3, zmm3, zmm29",
            "vpclmulqdq zmm13, zmm12, zmmword ptr [{pow} + 320], 0x11",
            "vpxorq zmm10, zmm10, zmm13",
            "vpshufd zmm13, zmm12, 0x4e",
            "vaesenc zmm4, zmm4, zmm29",
            "vaesenc zmm5, zmm5, zmm29",
            "vpxorq zmm12, zmm12, zmm13",
            "vpclmulqdq zmm12, zmm12, zmmword ptr [{kara} + 320], 0x00",
            "vpxorq zmm11, zmm11, zmm12",
            "vaesenc zmm6, zmm6, zmm29",
            "vaesenc zmm7, zmm7, zmm29",
            "vaesenc zmm0, zmm0, zmm30",
            "vaesenc zmm1, zmm1, zmm30",
            "vpshufb zmm12, zmm22, zmmword ptr [{c}]",
            "vpclmulqdq zmm13, zmm12, zmmword ptr [{pow} + 384], 0x00",
            "vpxorq zmm9, zmm9, zmm13",
            "vaesenc zmm2, zmm2, zmm30",
            "vaesenc zmm3, zmm3, zmm30",
            "vpclmulqdq zmm13, zmm12, zmmword ptr [{pow} + 384], 0x11",
            "vpxorq zmm10, zmm10, zmm13",
            "vpshufd zmm13, zmm12, 0x4e",
            "vaesenc zmm4, zmm4, zmm30",
            "vaesenc zmm5, zmm5, zmm30",
            "vpxorq zmm12, zmm12, zmm13",
            "vpclmulqdq zmm12, zmm12, zmmword ptr [{kara} + 384], 0x00",
            "vpxorq zmm11, zmm11, zmm12",
            "vaesenc zmm6, zmm6, zmm30",
            "vaesenc zmm7, zmm7, zmm30",
            "vaesenc zmm0, zmm0, zmm31",
            "vaesenc zmm1, zmm1, zmm31",
            "vpshufb zmm12, zmm23, zmmword ptr [{c}]",
            "vpclmulqdq zmm13, zmm12, zmmword ptr [{pow} + 448], 0x00",
            "vpxorq zmm9, zmm9, zmm13",
            "vaesenc zmm2, zmm2, zmm31",
            "vaesenc zmm3, zmm3, zmm31",
            "vpclmulqdq zmm13, zmm12, zmmword ptr [{pow} + 448], 0x11",
            "vpxorq zmm10, zmm10, zmm13",
            "vpshufd zmm13, zmm12, 0x4e",
            "vaesenc zmm4, zmm4, zmm31",
            "vaesenc zmm5, zmm5, zmm31",
            "vpxorq zmm12, zmm12, zmm13",
            "vpclmulqdq zmm12, zmm12, zmmword ptr [{kara} + 448], 0x00",
            "vpxorq zmm11, zmm11, zmm12",
            "vaesenc zmm6, zmm6, zmm31",
            "vaesenc zmm7, zmm7, zmm31",
            "vpternlogq zmm11, zmm9, zmm10, 0x96",
            "vpclmulqdq zmm12, zmm9, zmmword ptr [{c} + 640], 0x00",
            "vpshufd zmm13, zmm9, 0x4e",
            "vpternlogq zmm11, zmm12, zmm13, 0x96",
            "vpclmulqdq zmm12, zmm11, zmmword ptr [{c} + 640], 0x00",
            "vpshufd zmm13, zmm11, 0x4e",
            "vpternlogq zmm10, zmm12, zmm13, 0x96",
            "vextracti64x4 ymm12, zmm10, 1",
            "vpxorq ymm10, ymm10, ymm12",
            "vextracti32x4 xmm12, ymm10, 1",
            "vpxor xmm15, xmm10, xmm12",
            "lea {r}, [{rk} + 32]",
            "cmp {r}, {kend}",
            "je 4f",
            "3:",
            "vbroadcasti32x4 zmm8, xmmword ptr [{r} + 128]",
            "vaesenc zmm0, zmm0, zmm8",
            "vaesenc zmm1, zmm1, zmm8",
            "vaesenc zmm2, zmm2, zmm8",
            "vaesenc zmm3, zmm3, zmm8",
            "vaesenc zmm4, zmm4, zmm8",
            "vaesenc zmm5, zmm5, zmm8",
            "vaesenc zmm6, zmm6, zmm8",
            "vaesenc zmm7, zmm7, zmm8",
            "add {r}, 16",
            "cmp {r}, {kend}",
            "jne 3b",
            "4:",
            "vbroadcasti32x4 zmm8, xmmword ptr [{kend} + 128]",
            "vaesenclast zmm0, zmm0, zmm8",
            "vaesenclast zmm1, zmm1, zmm8",
            "vaesenclast zmm2, zmm2, zmm8",
            "vaesenclast zmm3, zmm3, zmm8",
            "vaesenclast zmm4, zmm4, zmm8",
            "vaesenclast zmm5, zmm5, zmm8",
            "vaesenclast zmm6, zmm6, zmm8",
            "vaesenclast zmm7, zmm7, zmm8",
            "vpxorq zmm16, zmm0, zmmword ptr [{out} + 0]",
            "vmovdqu64 zmmword ptr [{out} + 0], zmm16",
            "vpxorq zmm17, zmm1, zmmword ptr [{out} + 64]",
            "vmovdqu64 zmmword ptr [{out} + 64], zmm17",
            "vpxorq zmm18, zmm2, zmmword ptr [{out} + 128]",
            "vmovdqu64 zmmword ptr [{out} + 128], zmm18",
            "vpxorq zmm19, zmm3, zmmword ptr [{out} + 192]",
            "vmovdqu64 zmmword ptr [{out} + 192], zmm19",
            "vpxorq zmm20, zmm4, zmmword ptr [{out} + 256]",
            "vmovdqu64 zmmword ptr [{out} + 256], zmm20",
            "vpxorq zmm21, zmm5, zmmword ptr [{out} + 320]",
            "vmovdqu64 zmmword ptr [{out} + 320], zmm21",
            "vpxorq zmm22, zmm6, zmmword ptr [{out} + 384]",
            "vmovdqu64 zmmword ptr [{out} + 384], zmm22",
            "vpxorq zmm23, zmm7, zmmword ptr [{out} + 448]",
            "vmovdqu64 zmmword ptr [{out} + 448], zmm23",
            "add {out}, 512",
            "dec {n}",
            "jnz 2b",

            rk = in(reg) base,
            kend = in(reg) kend,
            r = out(reg) _,
            pow = in(reg) pow,
            kara = in(reg) kara,
            c = in(reg) CONSTS.0.as_ptr(),
            out = inout(reg) out => _,
            n = inout(reg) n => _,
            out("zmm0") _, out("zmm1") _, out("zmm2") _, out("zmm3") _,
            out("zmm4") _, out("zmm5") _, out("zmm6") _, out("zmm7") _,
            out("zmm8") _, out("zmm9") _, out("zmm10") _, out("zmm11") _,
            out("zmm12") _, out("zmm13") _,
            inout("zmm14") c,
            inout("zmm15") s,
            inout("zmm16") y0, inout("zmm17") y1, inout("zmm18") y2, inout("zmm19") y3,
            inout("zmm20") y4, inout("zmm21") y5, inout("zmm22") y6, inout("zmm23") y7,
            out("zmm24") _, out("zmm25") _, out("zmm26") _, out("zmm27") _,
            out("zmm28") _, out("zmm29") _, out("zmm30") _, out("zmm31") _,
            options(nostack),
        );
    }
    (
        c,
        _mm512_castsi512_si128(s),
        [y0, y1, y2, y3, y4, y5, y6, y7],
    )
}

/// Open: runs `n` (>= 1) 32-block iterations: the 32 blocks at `out + 512 i` are hashed into
/// `s`, then XORed with the keystream of counters `ctr + 32 i + b` (as for [`seal_batches`]).
/// Returns the counters after the last iteration and the new state.
///
/// # Safety
///
/// The CPU has AVX-512F/BW, VAES and VPCLMULQDQ; `out` points to `512 n` readable, writable
/// bytes.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,vaes,vpclmulqdq")]
pub(super) unsafe fn open_batches(
    rk: &Keys,
    rounds: usize,
    k: &Key,
    ctr: __m512i,
    s: __m128i,
    out: *mut u8,
    n: usize,
) -> (__m512i, __m128i) {
    debug_assert!(n >= 1 && matches!(rounds, 10 | 12 | 14));
    let base = rk.enc.as_ptr().cast::<u8>();
    let (pow, kara) = k.tables32();
    let mut c = ctr;
    let mut s = _mm512_zextsi128_si512(s);
    // SAFETY: the caller guarantees the features and the buffer extent; the round keys read
    // are `enc[0..=rounds]` (`kend + 128` is `enc[rounds]`, `rk + 32 + 16 j` `enc[2 + j]`), the powers and Karatsuba halves
    // read are entries 0..32 of tables of 36; the constants are 704 bytes of `CONSTS`. The
    // asm uses no stack and clobbers only the registers it names.
    unsafe {
        let kend = base.add(16 * (rounds - 8));
        asm!(
            "vbroadcasti32x4 zmm24, xmmword ptr [{rk} + 32]",
            "vbroadcasti32x4 zmm25, xmmword ptr [{rk} + 48]",
            "vbroadcasti32x4 zmm26, xmmword ptr [{rk} + 64]",
            "vbroadcasti32x4 zmm27, xmmword ptr [{rk} + 80]",
            "vbroadcasti32x4 zmm28, xmmword ptr [{rk} + 96]",
            "vbroadcasti32x4 zmm29, xmmword ptr [{rk} + 112]",
            "vbroadcasti32x4 zmm30, xmmword ptr [{rk} + 128]",
            "vbroadcasti32x4 zmm31, xmmword ptr [{rk} + 144]",
            "2:",
            "vbroadcasti32x4 zmm8, xmmword ptr [{rk}]",
            "vpaddd zmm0, zmm14, zmmword ptr [{c} + 64]",
            "vpshufb zmm0, zmm0, zmmword ptr [{c}]",
            "vpxorq zmm0, zmm0, zmm8",
            "vpaddd zmm1, zmm14, zmmword ptr [{c} + 128]",
            "vpshufb zmm1, zmm1, zmmword ptr [{c}]",
            "vpxorq zmm1, zmm1, zmm8",
            "vpaddd zmm2, zmm14, zmmword ptr [{c} + 192]",
            "vpshufb zmm2, zmm2, zmmword ptr [{c}]",
            "vpxorq zmm2, zmm2, zmm8",
            "vpaddd zmm3, zmm14, zmmword ptr [{c} + 256]",
            "vpshufb zmm3, zmm3, zmmword ptr [{c}]",
            "vpxorq zmm3, zmm3, zmm8",
            "vpaddd zmm4, zmm14, zmmword ptr [{c} + 320]",
            "vpshufb zmm4, zmm4, zmmword ptr [{c}]",
            "vpxorq zmm4, zmm4, zmm8",
            "vpaddd zmm5, zmm14, zmmword ptr [{c} + 384]",
            "vpshufb zmm5, zmm5, zmmword ptr [{c}]",
            "vpxorq zmm5, zmm5, zmm8",
            "vpaddd zmm6, zmm14, zmmword ptr [{c} + 448]",
            "vpshufb zmm6, zmm6, zmmword ptr [{c}]",
            "vpxorq zmm6, zmm6, zmm8",
            "vpaddd zmm7, zmm14, zmmword ptr [{c} + 512]",
            "vpshufb zmm7, zmm7, zmmword ptr [{c}]",
            "vpxorq zmm7, zmm7, zmm8",
            "vpaddd zmm14, zmm14, zmmword ptr [{c} + 576]",
            "vbroadcasti32x4 zmm8, xmmword ptr [{rk} + 16]",
            "vaesenc zmm0, zmm0, zmm8",
            "vaesenc zmm1, zmm1, zmm8",
            "vaesenc zmm2, zmm2, zmm8",
            "vaesenc zmm3, zmm3, zmm8",
            "vaesenc zmm4, zmm4, zmm8",
            "vaesenc zmm5, zmm5, zmm8",
            "vaesenc zmm6, zmm6, zmm8",
            "vaesenc zmm7, zmm7, zmm8",
            "vaesenc zmm0, zmm0, zmm24",
            "vaesenc zmm1, zmm1, zmm24",
            "vmovdqu64 zmm12, zmmword ptr [{out} + 0]",
            "vpshufb zmm12, zmm12, zmmword ptr [{c}]",
            "vpxorq zmm12, zmm12, zmm15",
            "vaesenc zmm2, zmm2, zmm24",
            "vaesenc zmm3, zmm3, zmm24",
            "vpclmulqdq zmm9, zmm12, zmmword ptr [{pow} + 0], 0x00",
            "vpclmulqdq zmm10, zmm12, zmmword ptr [{pow} + 0], 0x11",
            "vpshufd zmm13, zmm12, 0x4e",
            "vaesenc zmm4, zmm4, zmm24",
            "vaesenc zmm5, zmm5, zmm24",
            "vpxorq zmm12, zmm12, zmm13",
            "vpclmulqdq zmm11, zmm12, zmmword ptr [{kara} + 0], 0x00",
            "vaesenc zmm6, zmm6, zmm24",
            "vaesenc zmm7, zmm7, zmm24",
            "vaesenc zmm0, zmm0, zmm25",
            "vaesenc zmm1, zmm1, zmm25",
            "vmovdqu64 zmm12, zmmword ptr [{out} + 64]",
            "vpshufb zmm12, zmm12, zmmword ptr [{c}]",
            "vpclmulqdq zmm13, zmm12, zmmword ptr [{pow} + 64], 0x00",
            "vaesenc zmm2, zmm2, zmm25",
            "vaesenc zmm3, zmm3, zmm25",
            "vpxorq zmm9, zmm9, zmm13",
            "vpclmulqdq zmm13, zmm12, zmmword ptr [{pow} + 64], 0x11",
            "vpxorq zmm10, zmm10, zmm13",
            "vaesenc zmm4, zmm4, zmm25",
            "vaesenc zmm5, zmm5, zmm25",
            "vpshufd zmm13, zmm12, 0x4e",
            "vpxorq zmm12, zmm12, zmm13",
            "vpclmulqdq zmm12, zmm12, zmmword ptr [{kara} + 64], 0x00",
            "vaesenc zmm6, zmm6, zmm25",
            "vaesenc zmm7, zmm7, zmm25",
            "vpxorq zmm11, zmm11, zmm12",
            "vaesenc zmm0, zmm0, zmm26",
            "vaesenc zmm1, zmm1, zmm26",
            "vmovdqu64 zmm12, zmmword ptr [{out} + 128]",
            "vpshufb zmm12, zmm12, zmmword ptr [{c}]",
            "vpclmulqdq zmm13, zmm12, zmmword ptr [{pow} + 128], 0x00",
            "vaesenc zmm2, zmm2, zmm26",
            "vaesenc zmm3, zmm3, zmm26",
            "vpxorq zmm9, zmm9, zmm13",
            "vpclmulqdq zmm13, zmm12, zmmword ptr [{pow} + 128], 0x11",
            "vpxorq zmm10, zmm10, zmm13",
            "vaesenc zmm4, zmm4, zmm26",
            "vaesenc zmm5, zmm5, zmm26",
            "vpshufd zmm13, zmm12, 0x4e",
            "vpxorq zmm12, zmm12, zmm13",
            "vpclmulqdq zmm12, zmm12, zmmword ptr [{kara} + 128], 0x00",
            "vaesenc zmm6, zmm6, zmm26",
            "vaesenc zmm7, zmm7, zmm26",
            "vpxorq zmm11, zmm11, zmm12",
            "vaesenc zmm0, zmm0, zmm27",
            "vaesenc zmm1, zmm1, zmm27",
            "vmovdqu64 zmm12, zmmword ptr [{out} + 192]",
            "vpshufb zmm12, zmm12, zmmword ptr [{c}]",
            "vpclmulqdq zmm13, zmm12, zmmword ptr [{pow} + 192], 0x00",
            "vaesenc zmm2, zmm2, zmm27",
            "vaesenc zmm3, zmm3, zmm27",
            "vpxorq zmm9, zmm9, zmm13",
            "vpclmulqdq zmm13, zmm12, zmmword ptr [{pow} + 192], 0x11",
            "vpxorq zmm10, zmm10, zmm13",
            "vaesenc zmm4, zmm4, zmm27",
            "vaesenc zmm5, zmm5, zmm27",
            "vpshufd zmm13, zmm12, 0x4e",
            "vpxorq zmm12, zmm12, zmm13",
            "vpclmulqdq zmm12, zmm12, zmmword ptr [{kara} + 192], 0x00",
            "vaesenc zmm6, zmm6, zmm27",
            "vaesenc zmm7, zmm7, zmm27",
            "vpxorq zmm11, zmm11, zmm12",
            "vaesenc zmm0, zmm0, zmm28",
            "vaesenc zmm1, zmm1, zmm28",
            "vmovdqu64 zmm12, zmmword ptr [{out} + 256]",
            "vpshufb zmm12, zmm12, zmmword ptr [{c}]",
            "vpclmulqdq zmm13, zmm12, zmmword ptr [{pow} + 256], 0x00",
            "vaesenc zmm2, zmm2, zmm28",
            "vaesenc zmm3, zmm3, zmm28",
            "vpxorq zmm9, zmm9, zmm13",
            "vpclmulqdq zmm13, zmm12, zmmword ptr [{pow} + 256], 0x11",
            "vpxorq zmm10, zmm10, zmm13",
            "vaesenc zmm4, zmm4, zmm28",
            "vaesenc zmm5, zmm5, zmm28",
            "vpshufd zmm13, zmm12, 0x4e",
            "vpxorq zmm12, zmm12, zmm13",
            "vpclmulqdq zmm12, zmm12, zmmword ptr [{kara} + 256], 0x00",
            "vaesenc zmm6, zmm6, zmm28",
            "vaesenc zmm7, zmm7, zmm28",
            "vpxorq zmm11, zmm11, zmm12",
            "vaesenc zmm0, zmm0, zmm29",
            "vaesenc zmm1, zmm1, zmm29",
            "vmovdqu64 zmm12, zmmword ptr [{out} + 320]",
            "vpshufb zmm12, zmm12, zmmword ptr [{c}]",
            "vpclmulqdq zmm13, zmm12, zmmword ptr [{pow} + 320], 0x00",
            "vaesenc zmm2, zmm2, zmm29",
            "vaesenc zmm3, zmm3, zmm29",
            "vpxorq zmm9, zmm9, zmm13",
            "vpclmulqdq zmm13, zmm12, zmmword ptr [{pow} + 320], 0x11",
            "vpxorq zmm10, zmm10, zmm13",
            "vaesenc zmm4, zmm4, zmm29",
            "vaesenc zmm5, zmm5, zmm29",
            "vpshufd zmm13, zmm12, 0x4e",
            "vpxorq zmm12, zmm12, zmm13",
            "vpclmulqdq zmm12, zmm12, zmmword ptr [{kara} + 320], 0x00",
            "vaesenc zmm6, zmm6, zmm29",
            "vaesenc zmm7, zmm7, zmm29",
            "vpxorq zmm11, zmm11, zmm12",
            "vaesenc zmm0, zmm0, zmm30",
            "vaesenc zmm1, zmm1, zmm30",
            "vmovdqu64 zmm12, zmmword ptr [{out} + 384]",
            "vpshufb zmm12, zmm12, zmmword ptr [{c}]",
            "vpclmulqdq zmm13, zmm12, zmmword ptr [{pow} + 384], 0x00",
            "vaesenc zmm2, zmm2, zmm30",
            "vaesenc zmm3, zmm3, zmm30",
            "vpxorq zmm9, zmm9, zmm13",
            "vpclmulqdq zmm13, zmm12, zmmword ptr [{pow} + 384], 0x11",
            "vpxorq zmm10, zmm10, zmm13",
            "vaesenc zmm4, zmm4, zmm30",
            "vaesenc zmm5, zmm5, zmm30",
            "vpshufd zmm13, zmm12, 0x4e",
            "vpxorq zmm12, zmm12, zmm13",
            "vpclmulqdq zmm12, zmm12, zmmword ptr [{kara} + 384], 0x00",
            "vaesenc zmm6, zmm6, zmm30",
            "vaesenc zmm7, zmm7, zmm30",
            "vpxorq zmm11, zmm11, zmm12",
            "vaesenc zmm0, zmm0, zmm31",
            "vaesenc zmm1, zmm1, zmm31",
            "vmovdqu64 zmm12, zmmword ptr [{out} + 448]",
            "vpshufb zmm12, zmm12, zmmword ptr [{c}]",
            "vpclmulqdq zmm13, zmm12, zmmword ptr [{pow} + 448], 0x00",
            "vaesenc zmm2, zmm2, zmm31",
            "vaesenc zmm3, zmm3, zmm31",
            "vpxorq zmm9, zmm9, zmm13",
            "vpclmulqdq zmm13, zmm12, zmmword ptr [{pow} + 448], 0x11",
            "vpxorq zmm10, zmm10, zmm13",
            "vaesenc zmm4, zmm4, zmm31",
            "vaesenc zmm5, zmm5, zmm31",
            "vpshufd zmm13, zmm12, 0x4e",
            "vpxorq zmm12, zmm12, zmm13",
            "vpclmulqdq zmm12, zmm12, zmmword ptr [{kara} + 448], 0x00",
            "vaesenc zmm6, zmm6, zmm31",
            "vaesenc zmm7, zmm7, zmm31",
            "vpxorq zmm11, zmm11, zmm12",
            "vpternlogq zmm11, zmm9, zmm10, 0x96",
            "vpclmulqdq zmm12, zmm9, zmmword ptr [{c} + 640], 0x00",
            "vpshufd zmm13, zmm9, 0x4e",
            "vpternlogq zmm11, zmm12, zmm13, 0x96",
            "vpclmulqdq zmm12, zmm11, zmmword ptr [{c} + 640], 0x00",
            "vpshufd zmm13, zmm11, 0x4e",
            "vpternlogq zmm10, zmm12, zmm13, 0x96",
            "vextracti64x4 ymm12, zmm10, 1",
            "vpxorq ymm10, ymm10, ymm12",
            "vextracti32x4 xmm12, ymm10, 1",
            "vpxor xmm15, xmm10, xmm12",
            "lea {r}, [{rk} + 32]",
            "cmp {r}, {kend}",
            "je 4f",
            "3:",
            "vbroadcasti32x4 zmm8, xmmword ptr [{r} + 128]",
            "vaesenc zmm0, zmm0, zmm8",
            "vaesenc zmm1, zmm1, zmm8",
            "vaesenc zmm2, zmm2, zmm8",
            "vaesenc zmm3, zmm3, zmm8",
            "vaesenc zmm4, zmm4, zmm8",
            "vaesenc zmm5, zmm5, zmm8",
            "vaesenc zmm6, zmm6, zmm8",
            "vaesenc zmm7, zmm7, zmm8",
            "add {r}, 16",
            "cmp {r}, {kend}",
            "jne 3b",
            "4:",
            "vbroadcasti32x4 zmm8, xmmword ptr [{kend} + 128]",
            "vaesenclast zmm0, zmm0, zmm8",
            "vaesenclast zmm1, zmm1, zmm8",
            "vaesenclast zmm2, zmm2, zmm8",
            "vaesenclast zmm3, zmm3, zmm8",
            "vaesenclast zmm4, zmm4, zmm8",
            "vaesenclast zmm5, zmm5, zmm8",
            "vaesenclast zmm6, zmm6, zmm8",
            "vaesenclast zmm7, zmm7, zmm8",
            "vpxorq zmm0, zmm0, zmmword ptr [{out} + 0]",
            "vmovdqu64 zmmword ptr [{out} + 0], zmm0",
            "vpxorq zmm1, zmm1, zmmword ptr [{out} + 64]",
            "vmovdqu64 zmmword ptr [{out} + 64], zmm1",
            "vpxorq zmm2, zmm2, zmmword ptr [{out} + 128]",
            "vmovdqu64 zmmword ptr [{out} + 128], zmm2",
            "vpxorq zmm3, zmm3, zmmword ptr [{out} + 192]",
            "vmovdqu64 zmmword ptr [{out} + 192], zmm3",
            "vpxorq zmm4, zmm4, zmmword ptr [{out} + 256]",
            "vmovdqu64 zmmword ptr [{out} + 256], zmm4",
            "vpxorq zmm5, zmm5, zmmword ptr [{out} + 320]",
            "vmovdqu64 zmmword ptr [{out} + 320], zmm5",
            "vpxorq zmm6, zmm6, zmmword ptr [{out} + 384]",
            "vmovdqu64 zmmword ptr [{out} + 384], zmm6",
            "vpxorq zmm7, zmm7, zmmword ptr [{out} + 448]",
            "vmovdqu64 zmmword ptr [{out} + 448], zmm7",
            "add {out}, 512",
            "dec {n}",
            "jnz 2b",

            rk = in(reg) base,
            kend = in(reg) kend,
            r = out(reg) _,
            pow = in(reg) pow,
            kara = in(reg) kara,
            c = in(reg) CONSTS.0.as_ptr(),
            out = inout(reg) out => _,
            n = inout(reg) n => _,
            out("zmm0") _, out("zmm1") _, out("zmm2") _, out("zmm3") _,
            out("zmm4") _, out("zmm5") _, out("zmm6") _, out("zmm7") _,
            out("zmm8") _, out("zmm9") _, out("zmm10") _, out("zmm11") _,
            out("zmm12") _, out("zmm13") _,
            inout("zmm14") c,
            inout("zmm15") s,
            out("zmm24") _, out("zmm25") _, out("zmm26") _, out("zmm27") _,
            out("zmm28") _, out("zmm29") _, out("zmm30") _, out("zmm31") _,
            options(nostack),
        );
    }
    (c, _mm512_castsi512_si128(s))
}
