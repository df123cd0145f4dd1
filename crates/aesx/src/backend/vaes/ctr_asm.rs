//! The CTR main loops as blocks of inline assembly, one source for two widths (xmm for `aesni`,
//! ymm for `vaes256`), registers allocated by hand, in place or buffer to buffer. Two loops
//! that differ in how they build counter blocks, one per CPU family:
//!
//! - the scalar-counter loop ([`xmm`], [`ymm`]; AMD): 12 registers (12 or 24 blocks) an
//!   iteration, counter blocks written to memory by scalar code;
//! - the selector loop ([`xmm_sel`], [`ymm_sel`]; Intel and Zen 3, from 1 KiB): 8 registers
//!   (8 or 16 blocks), counter blocks from two vector operations a register, no scalar work
//!   per block; and its 12-register ymm form ([`ymm_sel12`]; Zen 3, AES-192/256 from 16 KiB:
//!   three sub-batches of 4 registers, each with its own `A` and `D'`).
//!
//! IMPLEMENTATION NOTE (issues 19 and 13, the selector loop): on Intel cores with two AES units
//! (Ice Lake and later: AESENC/VAESENC on ports 0 and 1) the scalar ALUs issue on the same
//! ports as the AES units (0, 1, 5, 6) and the vector logic on 0, 1 and 5, so the scalar
//! counter work below takes AES slots: about 4-5 ALU uops a block (BSWAP r64 is two) beside 10
//! AESENC for AES-128 made `vaes256` CTR run at 71-73% of the ymm limit on an Intel AVX-512
//! guest (family 6 model 167), `aesni` at 87%, while ECB ran at 97%. The same loop with its
//! counter code deleted (wrong output, a measurement only) ran at 95% / 96%: that code was the
//! whole gap. The selector loop builds each register as `A ^ (D' & W_i)` ([`sel`]; `aesni`,
//! "CTR counter blocks"), which needs a power-of-two batch, hence 8 registers; the batch's
//! `bswap(a)` and `D'` come from a little scalar code once per iteration (two pairs in memory
//! used alternately, so that a pair is written a whole iteration before it is loaded), round
//! key 0 is XORed into `A` once per iteration. Calls of 1 KiB and more go to it from
//! `aesni::ctr_nostack`, wholly in assembly (the rest of the call by `aesni::ctr_small`), so
//! no stack wipe follows: its slots hold counter values only, and it zeroes the registers that
//! held key material. Measured on that guest (`aesx bench`, five alternated runs, best; main
//! at 8590e78 before): 16 KiB `vaes256` AES-128 / -192 / -256 19.3 / 18.0 / 15.8 ->
//! 24.4 / 20.6 / 17.6 GB/s (91% / 92% / 92% of 26.8 / 22.3 / 19.1), `aesni` 11.7 / 9.9 / 8.6
//! -> 12.5 / 10.7 / 9.0 (94% / 95% / 94%); 1 KiB 1.12-1.28x, 1 MiB 1.04-1.26x; below 1 KiB it
//! lost (512 and 768 B at 0.89-0.96x) and is not used. Tried and not kept: one VPTERNLOGQ
//! instead of the AND and XOR where AVX-512VL exists (level at 16 KiB, 0.85-0.9x at 1 KiB),
//! a single pair slot (level).
//! On AMD (Zen 3: integer pipes separate from the four FP pipes) the scalar-counter loop has
//! the better best case on long calls (numbers below; up to 3-4% in session 30),
//! but it spends long stretches in a slow state that the selector loop mostly escapes, so
//! since session 30 Zen 3 runs the selector loop at every length of 1 KiB and up
//! (`aesni::sel_on`); AMD CPUs with AVX-512 (Zen 4, not measured with it) keep this loop.
//!
//! The scalar-counter loop:
//!
//! IMPLEMENTATION NOTE (issues 19 and 13): with 8 registers in flight (the intrinsic kernel of
//! [`super::ctr`]) CTR ran at 86-90% of the AES rate on Zen 3: 8 chains of latency 4 at two
//! AESENC a cycle leave no slack, so each iteration's counter setup waits behind the previous
//! iteration's rounds. 12 registers cured that for ECB and CBC decryption (issue 19), but a
//! 12-register CTR in intrinsics made LLVM hoist and spill round keys. Here:
//!
//! ```text
//! r0-r11   the 12 counter registers through the AES rounds
//! r12      round key of the current round (MOVDQU / VBROADCASTI128 from the schedule)
//! r15      the data of the last round (r13, r14 unused)
//! ```
//!
//! Counter: exact 128-bit big-endian, branch-free (the counter may be secret), built by
//! scalar code one iteration ahead. While the AES units run iteration `i`, the integer units
//! write the 12 or 24 counter blocks of iteration `i + 1` into [`Slots`] (per block: byte-swap
//! and store the low qword, store the byte-swapped high qword, `add lo, 1`, and `cmovc` to
//! switch the high qword to `bswap(hi + 1)` when the low one wraps; one wrap at most per call,
//! since a call is far shorter than 2^64 blocks), one block per three AESENCs of the first
//! rounds. Iteration `i + 1` then starts with 12 loads and 12 XORs with round key 0: one
//! vector ALU operation per register before the rounds, where the selector scheme of the
//! intrinsic kernel (`A ^ (D & W)`, `aesni` "CTR counter blocks") needs two plus per-group
//! setup. Measured in a stand-alone copy of the loop on Zen 3 (AES-128, 16 KiB, best of 3000
//! trials): the selector scheme with 12 registers ran at 9.4 GB/s (xmm) and 18.5 (ymm), the
//! same loop without its counter arithmetic at 10.0 / 19.8, and this one at 10.1 / 20.0
//! (aes-limit 10.29 / 20.58): every vector ALU operation in the loop can take an AES pipe's
//! slot (Zen 3 issues simple vector integer operations on all four FP pipes, AESENC on two),
//! while scalar code runs beside them. Building the next iteration's blocks with vector code
//! instead (selectors, stored to the slots) was slower still (6.6-9.8 GB/s xmm, depending on
//! where in the rounds it was placed).
//!
//! Data: the keystream XOR is folded into the last round (`aesenclast(x, k_last ^ data)`);
//! each register's data is loaded before its result is stored, so in place (`src == dst`) is
//! safe, and buffer to buffer needs no copy.
//!
//! Legacy SSE encodings on xmm (the `aesni` backend needs no AVX), VEX on ymm. No stack: the
//! counter slots live in a caller's local, the round keys are only ever in r12 and the
//! schedule. Constant time: the loop count and the round count are public; no branch or
//! address depends on data, key or counter (`cmovc` is a data-independent select).

use core::arch::asm;

use super::Vector;
use crate::backend::aesni::{Keys, ctr_batch_words};

/// Counter block `b` of the next iteration into its slot `[{w} + 16 * b]` (big-endian), in
/// two pieces to interleave with AESENCs: the low qword byte-swapped and stored, then the
/// high qword stored and the counter advanced (`cmovc`: the high qword's byte-swapped value
/// becomes `bswap(hi + 1)` when the low qword wraps).
macro_rules! blk_a {
    ($b:literal) => {
        concat!("mov {t}, {lo}\n", "bswap {t}\n")
    };
}
macro_rules! blk_b {
    ($b:literal) => {
        concat!(
            "mov qword ptr [{w} + 16*",
            $b,
            " + 8], {t}\n",
            "mov qword ptr [{w} + 16*",
            $b,
            "], {hb}\n",
        )
    };
}
macro_rules! blk_c {
    () => {
        concat!("add {lo}, 1\n", "cmovc {hb}, {hb1}\n")
    };
}
macro_rules! blk {
    ($b:literal) => {
        concat!(blk_a!($b), blk_b!($b), blk_c!())
    };
}

/// One middle round over the 12 registers, key `i`.
macro_rules! round {
    ($w:ident, $i:literal) => {
        concat!(
            key!($w, "12", concat!("{k} + 16*", $i)),
            op2!($w, "aesenc", "0", "12"),
            op2!($w, "aesenc", "1", "12"),
            op2!($w, "aesenc", "2", "12"),
            op2!($w, "aesenc", "3", "12"),
            op2!($w, "aesenc", "4", "12"),
            op2!($w, "aesenc", "5", "12"),
            op2!($w, "aesenc", "6", "12"),
            op2!($w, "aesenc", "7", "12"),
            op2!($w, "aesenc", "8", "12"),
            op2!($w, "aesenc", "9", "12"),
            op2!($w, "aesenc", "10", "12"),
            op2!($w, "aesenc", "11", "12"),
        )
    };
}

/// [`round`] with the next iteration's counter blocks `b0..b3` interleaved, one block per
/// three AESENCs (the scalar work runs on the integer pipes beside the AES units).
macro_rules! round_ctr {
    ($w:ident, $i:literal, $b0:literal, $b1:literal, $b2:literal, $b3:literal) => {
        concat!(
            key!($w, "12", concat!("{k} + 16*", $i)),
            op2!($w, "aesenc", "0", "12"),
            blk_a!($b0),
            op2!($w, "aesenc", "1", "12"),
            blk_b!($b0),
            op2!($w, "aesenc", "2", "12"),
            blk_c!(),
            op2!($w, "aesenc", "3", "12"),
            blk_a!($b1),
            op2!($w, "aesenc", "4", "12"),
            blk_b!($b1),
            op2!($w, "aesenc", "5", "12"),
            blk_c!(),
            op2!($w, "aesenc", "6", "12"),
            blk_a!($b2),
            op2!($w, "aesenc", "7", "12"),
            blk_b!($b2),
            op2!($w, "aesenc", "8", "12"),
            blk_c!(),
            op2!($w, "aesenc", "9", "12"),
            blk_a!($b3),
            op2!($w, "aesenc", "10", "12"),
            blk_b!($b3),
            op2!($w, "aesenc", "11", "12"),
            blk_c!(),
        )
    };
}

/// The last round of register `i`: `aesenclast(r_i, k_last ^ src_i)`, stored to `dst_i`.
macro_rules! last {
    ($w:ident, $i:literal) => {
        concat!(
            ld!($w, "15", "{src}", $i),
            op2!($w, "pxor", "15", "12"),
            op2!($w, "aesenclast", $i, "15"),
            st!($w, $i, "{dst}", $i),
        )
    };
}

/// Rounds 10..NR-1 (after round 9) over the registers listed, then their last rounds with the
/// data XOR and the stores (both loops).
macro_rules! last_rounds {
    ($w:ident; $($r:literal)*) => {
        concat!(
            rounds_10_13!($w, "aesenc"; $($r)*),
            key!($w, "12", "{kl}"),
            $(last!($w, $r),)*
        )
    };
}

/// Rounds 10..NR-1 (after round 9) and the last round, the data XOR and the stores; loop end.
macro_rules! tail_rounds {
    ($w:ident) => {
        concat!(
            last_rounds!($w; "0" "1" "2" "3" "4" "5" "6" "7" "8" "9" "10" "11"),
            "add {src}, {step}\n",
            "add {dst}, {step}\n",
            "dec {n}\n",
            "jnz 2b\n",
        )
    };
}

/// Loads the 12 registers from the counter slots and whitens them with round key 0.
macro_rules! start {
    ($w:ident) => {
        concat!(
            key!($w, "12", "{k}"),
            ld!($w, "0", "{w}", "0"),
            op2!($w, "pxor", "0", "12"),
            ld!($w, "1", "{w}", "1"),
            op2!($w, "pxor", "1", "12"),
            ld!($w, "2", "{w}", "2"),
            op2!($w, "pxor", "2", "12"),
            ld!($w, "3", "{w}", "3"),
            op2!($w, "pxor", "3", "12"),
            ld!($w, "4", "{w}", "4"),
            op2!($w, "pxor", "4", "12"),
            ld!($w, "5", "{w}", "5"),
            op2!($w, "pxor", "5", "12"),
            ld!($w, "6", "{w}", "6"),
            op2!($w, "pxor", "6", "12"),
            ld!($w, "7", "{w}", "7"),
            op2!($w, "pxor", "7", "12"),
            ld!($w, "8", "{w}", "8"),
            op2!($w, "pxor", "8", "12"),
            ld!($w, "9", "{w}", "9"),
            op2!($w, "pxor", "9", "12"),
            ld!($w, "10", "{w}", "10"),
            op2!($w, "pxor", "10", "12"),
            ld!($w, "11", "{w}", "11"),
            op2!($w, "pxor", "11", "12"),
        )
    };
}

/// The whole loop (`{n}` >= 1 iterations). The first iteration's counter blocks are written
/// before the loop; each iteration then writes the next one's during its first rounds (3 on
/// xmm, 12 blocks; 6 on ymm, 24 blocks), so an iteration starts with 12 loads whose stores
/// retired long ago, and the counter work never waits for, or delays, an AES chain.
macro_rules! ctr_loop {
    (x) => {
        concat!(
            blk!("0"),
            blk!("1"),
            blk!("2"),
            blk!("3"),
            blk!("4"),
            blk!("5"),
            blk!("6"),
            blk!("7"),
            blk!("8"),
            blk!("9"),
            blk!("10"),
            blk!("11"),
            "2:\n",
            start!(x),
            round_ctr!(x, "1", "0", "1", "2", "3"),
            round_ctr!(x, "2", "4", "5", "6", "7"),
            round_ctr!(x, "3", "8", "9", "10", "11"),
            round!(x, "4"),
            round!(x, "5"),
            round!(x, "6"),
            round!(x, "7"),
            round!(x, "8"),
            round!(x, "9"),
            tail_rounds!(x),
        )
    };
    (y) => {
        concat!(
            blk!("0"),
            blk!("1"),
            blk!("2"),
            blk!("3"),
            blk!("4"),
            blk!("5"),
            blk!("6"),
            blk!("7"),
            blk!("8"),
            blk!("9"),
            blk!("10"),
            blk!("11"),
            blk!("12"),
            blk!("13"),
            blk!("14"),
            blk!("15"),
            blk!("16"),
            blk!("17"),
            blk!("18"),
            blk!("19"),
            blk!("20"),
            blk!("21"),
            blk!("22"),
            blk!("23"),
            "2:\n",
            start!(y),
            round_ctr!(y, "1", "0", "1", "2", "3"),
            round_ctr!(y, "2", "4", "5", "6", "7"),
            round_ctr!(y, "3", "8", "9", "10", "11"),
            round_ctr!(y, "4", "12", "13", "14", "15"),
            round_ctr!(y, "5", "16", "17", "18", "19"),
            round_ctr!(y, "6", "20", "21", "22", "23"),
            round!(y, "7"),
            round!(y, "8"),
            round!(y, "9"),
            tail_rounds!(y),
        )
    };
}

/// Registers per iteration (both widths).
pub(crate) const REGS: usize = 12;

/// The counter slots: the next iteration's 12 (xmm) or 24 (ymm) counter blocks, written by
/// the loop's scalar code and loaded whole at the start of the iteration. Counter values only
/// (never whitened with a round key); the caller's frame, which the dispatcher's stack wipe
/// covers.
#[repr(C, align(32))]
struct Slots([u8; 16 * 24]);

/// `dst = src ^ keystream` for `n * 12` xmm registers (12 blocks each) starting at counter
/// `ctr` (block `i` uses `ctr + i` mod 2^128).
///
/// # Safety
/// The CPU has AES-NI; `src` is readable and `dst` writable for `192 * n` bytes, `n >= 1`,
/// and the two are equal or do not overlap.
#[inline]
pub(crate) unsafe fn xmm(rk: &Keys, ctr: u128, src: *const u8, dst: *mut u8, n: usize) {
    debug_assert!(n >= 1 && matches!(rk.rounds, 10 | 12 | 14));
    let mut slots = core::mem::MaybeUninit::<Slots>::uninit();
    let k = rk.enc.as_ptr().cast::<u8>();
    let hi = (ctr >> 64) as u64;
    // SAFETY: the caller guarantees the CPU features and the buffer extents; the round keys
    // read are `enc[0..=rounds]` (`kl` is `enc[rounds]`; rounds 10..13 are read only when
    // `kl` lies beyond them); the asm writes the first 192 bytes of `slots` before it reads
    // them, and reads and writes nothing else but `src` and `dst`. No stack; it clobbers only
    // what it names.
    unsafe {
        asm!(
            ctr_loop!(x),
            k = in(reg) k,
            kl = in(reg) k.add(16 * rk.rounds),
            w = in(reg) slots.as_mut_ptr().cast::<u8>(),
            lo = inout(reg) ctr as u64 => _,
            hb = inout(reg) hi.swap_bytes() => _,
            hb1 = in(reg) hi.wrapping_add(1).swap_bytes(),
            t = out(reg) _,
            src = inout(reg) src => _,
            dst = inout(reg) dst => _,
            n = inout(reg) n => _,
            step = const 16 * REGS,
            out("xmm0") _, out("xmm1") _, out("xmm2") _, out("xmm3") _,
            out("xmm4") _, out("xmm5") _, out("xmm6") _, out("xmm7") _,
            out("xmm8") _, out("xmm9") _, out("xmm10") _, out("xmm11") _,
            out("xmm12") _, out("xmm15") _,
            options(nostack),
        );
    }
}

/// [`xmm`] on ymm registers: `n * 12` registers of 2 blocks (384 bytes an iteration).
///
/// # Safety
/// The CPU has AVX2 and VAES; `src` is readable and `dst` writable for `384 * n` bytes,
/// `n >= 1`, and the two are equal or do not overlap.
#[inline]
#[target_feature(enable = "avx2,vaes")]
pub(crate) unsafe fn ymm(rk: &Keys, ctr: u128, src: *const u8, dst: *mut u8, n: usize) {
    debug_assert!(n >= 1 && matches!(rk.rounds, 10 | 12 | 14));
    let mut slots = core::mem::MaybeUninit::<Slots>::uninit();
    let k = rk.enc.as_ptr().cast::<u8>();
    let hi = (ctr >> 64) as u64;
    // SAFETY: as in `xmm`, with all 384 bytes of `slots`.
    unsafe {
        asm!(
            ctr_loop!(y),
            k = in(reg) k,
            kl = in(reg) k.add(16 * rk.rounds),
            w = in(reg) slots.as_mut_ptr().cast::<u8>(),
            lo = inout(reg) ctr as u64 => _,
            hb = inout(reg) hi.swap_bytes() => _,
            hb1 = in(reg) hi.wrapping_add(1).swap_bytes(),
            t = out(reg) _,
            src = inout(reg) src => _,
            dst = inout(reg) dst => _,
            n = inout(reg) n => _,
            step = const 32 * REGS,
            out("ymm0") _, out("ymm1") _, out("ymm2") _, out("ymm3") _,
            out("ymm4") _, out("ymm5") _, out("ymm6") _, out("ymm7") _,
            out("ymm8") _, out("ymm9") _, out("ymm10") _, out("ymm11") _,
            out("ymm12") _, out("ymm15") _,
            options(nostack),
        );
    }
}

// ---------------------------------------------------------------------------------------------
// The selector loop: for CPUs whose scalar integer ALUs share issue ports with the AES units.

/// Register `i` of a selector batch: `A ^ (D' & W_i)` (r8 = `A`, whitened with round key 0
/// once per iteration; r9 = `D'`; `W_i` from memory), the whitened counter blocks of `aesni`'s
/// "CTR counter blocks". Two vector operations, no scalar work per block.
macro_rules! sel {
    (x, $i:literal) => {
        concat!(
            "movdqu xmm",
            $i,
            ", xmmword ptr [{p} + 16*",
            $i,
            "]\n",
            "pand xmm",
            $i,
            ", xmm9\n",
            "pxor xmm",
            $i,
            ", xmm8\n",
        )
    };
    (y, $i:literal) => {
        concat!(
            "vpand ymm",
            $i,
            ", ymm9, ymmword ptr [{p} + 32*",
            $i,
            "]\n",
            "vpxor ymm",
            $i,
            ", ymm",
            $i,
            ", ymm8\n",
        )
    };
    // zmm: the selector of register `i` lives in zmm(16 + i) (see [`zmm_sel`]); `tt`, so that
    // [`zsel`] can match it.
    (z, $i:tt) => {
        concat!(
            "vpandq zmm",
            $i,
            ", zmm9, zmm",
            zsel!($i),
            "\n",
            "vpxorq zmm",
            $i,
            ", zmm",
            $i,
            ", zmm8\n",
        )
    };
}

/// The register (16 + i) that holds selector `i` in the zmm selector loop.
macro_rules! zsel {
    ("0") => {
        "16"
    };
    ("1") => {
        "17"
    };
    ("2") => {
        "18"
    };
    ("3") => {
        "19"
    };
    ("4") => {
        "20"
    };
    ("5") => {
        "21"
    };
    ("6") => {
        "22"
    };
    ("7") => {
        "23"
    };
}

/// The next batch's `bswap(a)` (`a` its aligned first counter) into its slot at
/// `[{q} + $o]` from `{blo}`/`{bhi}`, and `{lo}:{hi}` advanced to the batch after it.
macro_rules! sel_scalar_a {
    ($o:literal) => {
        concat!(
            "add {lo}, {nb}\n",
            "adc {hi}, 0\n",
            "mov qword ptr [{q} + ",
            $o,
            "], {bhi}\n",
            "mov qword ptr [{q} + ",
            $o,
            " + 8], {blo}\n",
        )
    };
}

/// The next batch's `D'` (`bswap(a) ^ bswap(a + n)`, with the low bits of byte 15 set) into
/// its slot at `[{q} + $o + 16]`, and `{blo}`/`{bhi}` moved on to `bswap(a + n)`.
macro_rules! sel_scalar_d {
    ($o:literal) => {
        concat!(
            "mov {t}, {lo}\n",
            "bswap {t}\n",
            "mov {u}, {hi}\n",
            "bswap {u}\n",
            "xor {bhi}, {u}\n",
            "mov qword ptr [{q} + ",
            $o,
            " + 16], {bhi}\n",
            "mov {bhi}, {u}\n",
            "xor {blo}, {t}\n",
            "or {blo}, qword ptr [{p} + {lb}]\n",
            "mov qword ptr [{q} + ",
            $o,
            " + 24], {blo}\n",
            "mov {blo}, {t}\n",
        )
    };
}

/// One batch of the selector loops, A (whitened) and D' in r8 and r9: the 8 counter
/// registers ([`sel`]), the rounds with the next batch's words written beside rounds 1 and 2
/// ([`sel_scalar_a`], [`sel_scalar_d`]), and the last round with the data.
macro_rules! sel_iter {
    ($w:ident) => {
        concat!(
            sel!($w, "0"),
            sel!($w, "1"),
            sel!($w, "2"),
            sel!($w, "3"),
            sel!($w, "4"),
            sel!($w, "5"),
            sel!($w, "6"),
            sel!($w, "7"),
            mround!($w, "aesenc", "1"; "0" "1" "2" "3" "4" "5" "6" "7"),
            sel_scalar_a!("0"),
            mround!($w, "aesenc", "2"; "0" "1" "2" "3" "4" "5" "6" "7"),
            sel_scalar_d!("0"),
            mround!($w, "aesenc", "3"; "0" "1" "2" "3" "4" "5" "6" "7"),
            mround!($w, "aesenc", "4"; "0" "1" "2" "3" "4" "5" "6" "7"),
            mround!($w, "aesenc", "5"; "0" "1" "2" "3" "4" "5" "6" "7"),
            mround!($w, "aesenc", "6"; "0" "1" "2" "3" "4" "5" "6" "7"),
            mround!($w, "aesenc", "7"; "0" "1" "2" "3" "4" "5" "6" "7"),
            mround!($w, "aesenc", "8"; "0" "1" "2" "3" "4" "5" "6" "7"),
            mround!($w, "aesenc", "9"; "0" "1" "2" "3" "4" "5" "6" "7"),
            last_rounds!($w; "0" "1" "2" "3" "4" "5" "6" "7"),
        )
    };
}

/// The whole selector loop (`{n}` >= 1 iterations of 8 registers).
macro_rules! sel_loop {
    ($w:ident) => {
        concat!(
            "2:\n",
            key!($w, "8", "{q}"),
            key!($w, "12", "{k}"),
            op2!($w, "pxor", "8", "12"),
            key!($w, "9", "{q} + 16"),
            sel_iter!($w),
            "xor {q}, 32\n",
            "add {src}, {step}\n",
            "add {dst}, {step}\n",
            "dec {n}\n",
            "jnz 2b\n",
            // The registers that held key material: A ^ k0, the round key, k_last ^ data.
            op2!($w, "pxor", "8", "8"),
            op2!($w, "pxor", "12", "12"),
            op2!($w, "pxor", "15", "15"),
        )
    };
}

/// The last round of register `i` of the zmm tail, `aesenclast(r_i, k_last ^ src_i)` stored
/// to `dst_i`: whole, or, in the register the message ends in, under the byte mask at
/// `[{p} + {mo} + 8 i]` (k1, from [`ZSlots`]; masked-off bytes are neither read, so cannot
/// fault, nor written), after which it jumps to the end (label 5), as it does for a register
/// wholly past the message.
macro_rules! zlast_masked {
    ($i:literal) => {
        concat!(
            "kmovq k1, qword ptr [{p} + {mo} + 8*",
            $i,
            "]\n",
            // Past the message (a zero mask, and every later one zero): done. A whole register
            // (all ones) takes plain loads and stores.
            "kortestq k1, k1\n",
            "jz 5f\n",
            "jc 4",
            $i,
            "f\n",
            "vmovdqu8 zmm15{{k1}}{{z}}, zmmword ptr [{src} + 64*",
            $i,
            "]\n",
            "vpxorq zmm15, zmm15, zmm12\n",
            "vaesenclast zmm",
            $i,
            ", zmm",
            $i,
            ", zmm15\n",
            "vmovdqu8 zmmword ptr [{dst} + 64*",
            $i,
            "]{{k1}}, zmm",
            $i,
            "\n",
            "jmp 5f\n",
            "4",
            $i,
            ":\n",
            last!(z, $i),
        )
    };
}

/// A tail of the zmm call in the registers listed (`tt`, for [`sel`]'s zmm arm): the first
/// registers of one more batch, each stored whole or under its mask ([`zlast_masked`]), then a
/// jump to the end (label 5).
macro_rules! ztail {
    ($($r:tt)*) => {
        concat!(
            key!(z, "12", "{k}"),
            op2!(z, "pxor", "8", "12"),
            $(sel!(z, $r),)*
            rounds!(z, "aesenc"; $($r)*),
            key!(z, "12", "{kl}"),
            $(zlast_masked!($r),)*
            "jmp 5f\n",
        )
    };
}

/// The whole zmm call: `{n}` >= 0 iterations of 8 registers (32 blocks, [`sel_loop`]'s shape
/// with the batch's `bswap(a)` and `D'` already in zmm8 and zmm9 when an iteration starts:
/// each iteration loads the next pair at its end; the first pair comes in registers), then,
/// if the first tail mask is not zero, the first registers of one more batch for the last
/// (< 512) bytes ([`ztail`]: 4 registers for up to 256 bytes, 6 for up to 384, else 8).
macro_rules! zsel_call {
    () => {
        concat!(
            "test {n}, {n}\n",
            "jz 4f\n",
            "2:\n",
            key!(z, "12", "{k}"),
            op2!(z, "pxor", "8", "12"),
            sel_iter!(z),
            "xor {q}, 32\n",
            key!(z, "8", "{q}"),
            key!(z, "9", "{q} + 16"),
            "add {src}, {step}\n",
            "add {dst}, {step}\n",
            "dec {n}\n",
            "jnz 2b\n",
            "4:\n",
            "cmp qword ptr [{p} + {mo}], 0\n",
            "je 5f\n",
            // The fewest of 4, 6 or 8 registers that hold the rest (the first zero mask).
            "cmp qword ptr [{p} + {mo} + 32], 0\n",
            "je 6f\n",
            "cmp qword ptr [{p} + {mo} + 48], 0\n",
            "je 7f\n",
            ztail!("0" "1" "2" "3" "4" "5" "6" "7"),
            "6:\n",
            ztail!("0" "1" "2" "3"),
            "7:\n",
            ztail!("0" "1" "2" "3" "4" "5"),
            "5:\n",
            // Every register it used: key material (A ^ k0, the round key, k_last ^ data), the
            // tail's registers past the message (cipher states of counter blocks not used),
            // and the selectors (counter material, but the counter may be secret).
            "vzeroall\n",
            "vpxord xmm16, xmm16, xmm16\n",
            "vpxord xmm17, xmm17, xmm17\n",
            "vpxord xmm18, xmm18, xmm18\n",
            "vpxord xmm19, xmm19, xmm19\n",
            "vpxord xmm20, xmm20, xmm20\n",
            "vpxord xmm21, xmm21, xmm21\n",
            "vpxord xmm22, xmm22, xmm22\n",
            "vpxord xmm23, xmm23, xmm23\n",
        )
    };
}

/// One selector-loop `asm!` ([`sel_loop`], [`zsel_call`]): the text, the schedule `$rk`, the
/// slots `$p` (and `$q`, the pair the first iteration writes), `$next` (the aligned first
/// counter of the third batch), the data, the iteration count and the constants; `$extra`
/// for the rest (constants, registers in, clobbers).
macro_rules! sel_asm {
    ($text:expr, $rk:expr, $p:expr, $q:expr, $next:expr, $src:expr, $dst:expr, $n:expr,
     nb = $nb:expr, lb = $lb:expr, step = $step:expr; $($extra:tt)*) => {{
        let k = $rk.enc.as_ptr().cast::<u8>();
        let (lo, hi) = ($next as u64, ($next >> 64) as u64);
        asm!(
            $text,
            k = in(reg) k,
            kl = in(reg) k.add(16 * $rk.rounds),
            p = in(reg) $p,
            q = inout(reg) $q => _,
            lo = inout(reg) lo => _,
            hi = inout(reg) hi => _,
            blo = inout(reg) lo.swap_bytes() => _,
            bhi = inout(reg) hi.swap_bytes() => _,
            t = out(reg) _,
            u = out(reg) _,
            src = inout(reg) $src => _,
            dst = inout(reg) $dst => _,
            n = inout(reg) $n => _,
            nb = const $nb,
            lb = const $lb,
            step = const $step,
            $($extra)*
            options(nostack),
        )
    }};
}

/// Registers per iteration of the selector loop (a power of two: the batch of the selector
/// scheme is `SEL_REGS * BLOCKS` blocks, the intrinsic kernel's `VECS` registers).
pub(crate) const SEL_REGS: usize = 8;

/// Bytes of selectors: 8 registers of at most 32 bytes (ymm; the zmm loop keeps its selectors
/// in registers).
const W_BYTES: usize = 32 * SEL_REGS;

/// What the selector loop reads besides the keys and the data: the per-call selectors `W_i`
/// (8 registers, 16 or 32 bytes each), the current batch's `bswap(a)` (not whitened: the loop
/// XORs round key 0 into its register) and `D'` (both rewritten by the loop for the next
/// batch), and the low-bits mask of `D'`'s high qword. Counter material only, never key
/// material; the caller's frame.
#[repr(C, align(64))]
struct SelSlots {
    w: [u8; W_BYTES],
    /// `[bswap(a), D']` of two batches: the loop reads the pair of its batch and writes the
    /// pair of the batch after next in its place (a pair written one iteration ahead was read
    /// back while its two 8-byte stores were still in flight, which a 16-byte load cannot
    /// forward from).
    ad: [[[u8; 16]; 2]; 2],
    low_bits: u64,
}

impl Default for SelSlots {
    fn default() -> Self {
        SelSlots {
            w: [0; W_BYTES],
            ad: [[[0; 16]; 2]; 2],
            low_bits: 0,
        }
    }
}

/// `dst = src ^ keystream` for `n` iterations of [`SEL_REGS`] registers of `V` (`BLOCKS` 1:
/// xmm, legacy SSE; 2: ymm), the selector loop. `s` holds the selectors and the first batch's
/// `bswap(a)` and `D'` of the first two batches; `next` is the aligned first counter of the third.
///
/// # Safety
/// The CPU has AES-NI (xmm) or AVX2 + VAES (ymm); `src` is readable and `dst` writable for
/// `n * SEL_REGS * 16 * BLOCKS` bytes, `n >= 1`, and the two are equal or do not overlap.
#[inline(always)]
unsafe fn sel_common<const BLOCKS: usize>(
    rk: &Keys,
    s: &mut SelSlots,
    next: u128,
    src: *const u8,
    dst: *mut u8,
    n: usize,
) {
    debug_assert!(n >= 1 && matches!(rk.rounds, 10 | 12 | 14));
    let p = core::ptr::from_mut(s).cast::<u8>();
    // SAFETY: the caller guarantees the CPU features and the buffer extents; the round keys
    // read are `enc[0..=rounds]` (`kl` is `enc[rounds]`; rounds 10..13 are read only when
    // `kl` lies beyond them); the slots read and written are inside `s` (offsets 0..328). No
    // stack; it clobbers only what it names.
    unsafe {
        // One `asm!` per width: the text and the clobbers' names differ.
        macro_rules! width {
            ($w:ident, $($r:tt)*) => {
                sel_asm!(
                    sel_loop!($w), rk, p, p.add(W_BYTES), next, src, dst, n,
                    nb = BLOCKS * SEL_REGS,
                    lb = core::mem::offset_of!(SelSlots, low_bits),
                    step = 16 * BLOCKS * SEL_REGS;
                    $(out($r) _,)*
                )
            };
        }
        if BLOCKS == 1 {
            width!(x, "xmm0" "xmm1" "xmm2" "xmm3" "xmm4" "xmm5" "xmm6" "xmm7" "xmm8" "xmm9" "xmm12" "xmm15");
        } else {
            width!(y, "ymm0" "ymm1" "ymm2" "ymm3" "ymm4" "ymm5" "ymm6" "ymm7" "ymm8" "ymm9" "ymm12" "ymm15");
        }
    }
}

/// The selectors of a call starting at counter `ctr` and the `[bswap(a), D']` pairs of its
/// first two batches into `s`; returns the aligned first counter of the third batch.
#[inline(always)]
unsafe fn sel_setup<V: Vector>(s: &mut SelSlots, ctr: u128) -> u128 {
    let batch = (SEL_REGS * V::BLOCKS) as u64;
    let r = ctr as u64 & (batch - 1);
    for i in 0..SEL_REGS {
        // SAFETY: the caller runs on a CPU with `V`'s features; 8 registers of at most 32
        // bytes fit `s.w`.
        unsafe {
            V::store(
                s.w.as_mut_ptr().add(i * V::BYTES),
                V::ctr_select(r, i, batch),
            )
        };
    }
    s.low_bits = (batch - 1) << 56;
    sel_pairs(&mut s.ad, ctr, batch)
}

/// The `[bswap(a), D']` pairs of the first `ad.len()` batches (of `batch` blocks) of a call
/// starting at counter `ctr` into `ad`; returns the aligned first counter of the batch after
/// them.
#[inline(always)]
fn sel_pairs(ad: &mut [[[u8; 16]; 2]], ctr: u128, batch: u64) -> u128 {
    use core::arch::x86_64::{_mm_set_epi64x, _mm_storeu_si128};
    let mut a = ctr & !(batch as u128 - 1);
    for pair in ad {
        let ((lo, hi), (dlo, dhi)) = ctr_batch_words(a, batch);
        // One 16-byte store each: the loop's first 16-byte loads of them follow at once, and a
        // load cannot be forwarded from two 8-byte stores (it waits for them to commit).
        // SAFETY: SSE2 (baseline on x86-64); each pointer is 16 writable bytes.
        unsafe {
            _mm_storeu_si128(pair[0].as_mut_ptr().cast(), _mm_set_epi64x(hi, lo));
            _mm_storeu_si128(pair[1].as_mut_ptr().cast(), _mm_set_epi64x(dhi, dlo));
        }
        a = a.wrapping_add(batch as u128);
    }
    a
}

// IMPLEMENTATION NOTE: the two entry points below are not inlined into their callers, so that
// the slots (384 bytes, 64-byte aligned) live in a frame of their own rather than in the
// dispatcher's, which every CTR call sets up. Nothing in that frame is key material (counter
// values and selectors only; the round keys stay in the schedule and in registers the loop
// zeroes), so no stack wipe follows these calls (`aesni::ctr_nostack`).

/// `dst = src ^ keystream` from counter `ctr` for `n` iterations of the selector loop on xmm
/// (the `aesni` backend; 8 blocks an iteration).
///
/// # Safety
/// The CPU has AES-NI; `src` is readable and `dst` writable for `128 * n` bytes, `n >= 1`,
/// and the two are equal or do not overlap.
#[inline(never)]
#[target_feature(enable = "aes,sse4.2")]
pub(crate) unsafe fn xmm_sel(rk: &Keys, ctr: u128, src: *const u8, dst: *mut u8, n: usize) {
    let mut s = SelSlots::default();
    // SAFETY: forwarded; the target features above are `__m128i`'s.
    unsafe {
        let next = sel_setup::<core::arch::x86_64::__m128i>(&mut s, ctr);
        sel_common::<1>(rk, &mut s, next, src, dst, n)
    }
}

/// [`xmm_sel`] on ymm (the `vaes256` backend; 16 blocks an iteration, `256 * n` bytes).
///
/// # Safety
/// As [`xmm_sel`], and the CPU has AVX2 and VAES.
#[inline(never)]
#[target_feature(enable = "avx2,vaes,aes,sse4.2")]
pub(crate) unsafe fn ymm_sel(rk: &Keys, ctr: u128, src: *const u8, dst: *mut u8, n: usize) {
    let mut s = SelSlots::default();
    // SAFETY: forwarded; the target features above are `__m256i`'s.
    unsafe {
        let next = sel_setup::<core::arch::x86_64::__m256i>(&mut s, ctr);
        sel_common::<2>(rk, &mut s, next, src, dst, n)
    }
}

// ---------------------------------------------------------------------------------------------
// The 12-register selector loop (ymm; AMD without AVX-512, the Zen 3 class, on long calls).

/// Register `$i` of a 12-register iteration from selector `$j` (`[{p} + 32 * j]`):
/// `A ^ (D' & W_j)`, `A` (whitened) in r13 and `D'` in r14.
macro_rules! sel12 {
    (y, $i:literal, $j:literal) => {
        concat!(
            "vpand ymm",
            $i,
            ", ymm14, ymmword ptr [{p} + 32*",
            $j,
            "]\n",
            "vpxor ymm",
            $i,
            ", ymm",
            $i,
            ", ymm13\n",
        )
    };
}

/// One sub-batch (four registers, `$a $b $c $d`) of a 12-register iteration from its pair
/// `[bswap(a), D']` at `[{q} + $o]`, round key 0 in r12.
macro_rules! sub12 {
    ($w:ident, $o:literal; $a:literal $b:literal $c:literal $d:literal) => {
        concat!(
            key!($w, "13", concat!("{q} + ", $o)),
            op2!($w, "pxor", "13", "12"),
            key!($w, "14", concat!("{q} + ", $o, " + 16")),
            sel12!($w, $a, "0"),
            sel12!($w, $b, "1"),
            sel12!($w, $c, "2"),
            sel12!($w, $d, "3"),
        )
    };
}

/// Rounds 1 to the last over the registers listed, the data and the stores.
macro_rules! rounds12 {
    ($w:ident; $($r:literal)*) => {
        concat!(
            rounds!($w, "aesenc"; $($r)*),
            key!($w, "12", "{kl}"),
            $(last!($w, $r),)*
        )
    };
}

/// A whole iteration of the 12-register selector loop: its three sub-batches, the rounds with
/// the words of the iteration after next written beside rounds 1 to 6, the last round with the
/// data.
macro_rules! sel12_iter {
    ($w:ident) => {
        concat!(
            key!($w, "12", "{k}"),
            sub12!($w, "0"; "0" "1" "2" "3"),
            sub12!($w, "32"; "4" "5" "6" "7"),
            sub12!($w, "64"; "8" "9" "10" "11"),
            mround!($w, "aesenc", "1"; "0" "1" "2" "3" "4" "5" "6" "7" "8" "9" "10" "11"),
            sel_scalar_a!("0"),
            mround!($w, "aesenc", "2"; "0" "1" "2" "3" "4" "5" "6" "7" "8" "9" "10" "11"),
            sel_scalar_d!("0"),
            mround!($w, "aesenc", "3"; "0" "1" "2" "3" "4" "5" "6" "7" "8" "9" "10" "11"),
            sel_scalar_a!("32"),
            mround!($w, "aesenc", "4"; "0" "1" "2" "3" "4" "5" "6" "7" "8" "9" "10" "11"),
            sel_scalar_d!("32"),
            mround!($w, "aesenc", "5"; "0" "1" "2" "3" "4" "5" "6" "7" "8" "9" "10" "11"),
            sel_scalar_a!("64"),
            mround!($w, "aesenc", "6"; "0" "1" "2" "3" "4" "5" "6" "7" "8" "9" "10" "11"),
            sel_scalar_d!("64"),
            mround!($w, "aesenc", "7"; "0" "1" "2" "3" "4" "5" "6" "7" "8" "9" "10" "11"),
            mround!($w, "aesenc", "8"; "0" "1" "2" "3" "4" "5" "6" "7" "8" "9" "10" "11"),
            mround!($w, "aesenc", "9"; "0" "1" "2" "3" "4" "5" "6" "7" "8" "9" "10" "11"),
            last_rounds!($w; "0" "1" "2" "3" "4" "5" "6" "7" "8" "9" "10" "11"),
        )
    };
}

/// The whole 12-register selector loop: `{n}` (>= 0) whole iterations, then one of eight or
/// four registers when `[{p} + {ro}]` (the sub-batches left, 0 to 2) says so.
macro_rules! sel12_loop {
    ($w:ident) => {
        concat!(
            "test {n}, {n}\n",
            "jz 4f\n",
            ".p2align 6\n",
            "2:\n",
            sel12_iter!($w),
            // The two halves of the pair ring: [{q}, {q} + 96) and the next 96 bytes, {q}
            // 128-byte aligned.
            "xor {q}, 96\n",
            "add {src}, {step}\n",
            "add {dst}, {step}\n",
            "dec {n}\n",
            "jnz 2b\n",
            "4:\n",
            "cmp qword ptr [{p} + {ro}], 1\n",
            "jb 7f\n",
            "je 5f\n",
            key!($w, "12", "{k}"),
            sub12!($w, "0"; "0" "1" "2" "3"),
            sub12!($w, "32"; "4" "5" "6" "7"),
            rounds12!($w; "0" "1" "2" "3" "4" "5" "6" "7"),
            "jmp 7f\n",
            "5:\n",
            key!($w, "12", "{k}"),
            sub12!($w, "0"; "0" "1" "2" "3"),
            rounds12!($w; "0" "1" "2" "3"),
            "7:\n",
            // The registers that held key material: A ^ k0, the round key, k_last ^ data.
            op2!($w, "pxor", "13", "13"),
            op2!($w, "pxor", "12", "12"),
            op2!($w, "pxor", "15", "15"),
            clear12!($w),
            // LLVM puts a VZEROUPPER before a return only when its own code used 256-bit
            // registers, not an `asm!` block's: without it the legacy-SSE code that runs next
            // (the callers, `aesni`'s kernels) paid for the dirty upper halves, about 130 ns
            // a call on Zen 3.
            "vzeroupper\n",
        )
    };
}

/// Zeroes the selectors and the pair ring (the first 320 bytes at `{p}`) from r12 (zero): the
/// counter values they hold are the call's, and the entry points leave nothing they wrote on
/// the stack (`backend::stack_depth`).
macro_rules! clear12 {
    (y) => {
        concat!(
            "vmovdqu ymmword ptr [{p}], ymm12\n",
            "vmovdqu ymmword ptr [{p} + 32], ymm12\n",
            "vmovdqu ymmword ptr [{p} + 64], ymm12\n",
            "vmovdqu ymmword ptr [{p} + 96], ymm12\n",
            "vmovdqu ymmword ptr [{p} + 128], ymm12\n",
            "vmovdqu ymmword ptr [{p} + 160], ymm12\n",
            "vmovdqu ymmword ptr [{p} + 192], ymm12\n",
            "vmovdqu ymmword ptr [{p} + 224], ymm12\n",
            "vmovdqu ymmword ptr [{p} + 256], ymm12\n",
            "vmovdqu ymmword ptr [{p} + 288], ymm12\n",
        )
    };
}

/// Blocks of one sub-batch of the 12-register selector loop (four ymm registers; three
/// sub-batches an iteration): the selector scheme's batch, a power of two.
const SUB12: usize = 8;

/// What the 12-register selector loop reads besides the keys and the data: the selectors of
/// one sub-batch (4 registers), the `[bswap(a), D']` pairs of two iterations' sub-batches (a
/// ring: each iteration reads its three and writes, in their place, those of the iteration
/// after next), the low-bits mask of `D'` and the sub-batches left after the whole iterations.
/// Counter material and lengths only, never key material; the caller's frame, zeroed by the
/// loop at the end ([`clear12`]). 128-byte aligned so that the loop can flip between the
/// ring's halves with one XOR.
#[repr(C, align(128))]
struct Sel12Slots {
    w: [u8; 16 * SUB12],
    ad: [[[u8; 16]; 2]; 6],
    low_bits: u64,
    rem: u64,
}

// The loop flips `{q}` between the ring's halves with `xor 96`, and [`clear12`] zeroes the
// first 320 bytes: the selectors and the ring.
const _: () = assert!(core::mem::offset_of!(Sel12Slots, ad) == 128);
const _: () = assert!(core::mem::offset_of!(Sel12Slots, low_bits) == 320);

/// `dst = src ^ keystream` from counter `ctr` for the whole sub-batches (128 bytes) of a
/// `len`-byte call in the 12-register ymm selector loop (`vaes256`); returns the bytes done
/// (the rest, under 128, is the caller's). At the end the registers that held key material
/// are zeroed, and so are the slots.
///
/// # Safety
/// The CPU has AVX2 and VAES; `src` is readable and `dst` writable for `len` bytes, and the
/// two are equal or do not overlap.
#[inline(never)]
#[target_feature(enable = "avx2,vaes,aes,sse4.2")]
pub(crate) unsafe fn ymm_sel12(
    rk: &Keys,
    ctr: u128,
    src: *const u8,
    dst: *mut u8,
    len: usize,
) -> usize {
    use core::arch::x86_64::{_mm_set_epi64x, _mm_storeu_si128};
    debug_assert!(matches!(rk.rounds, 10 | 12 | 14));
    const G: u64 = SUB12 as u64;
    let subs = len / (16 * SUB12);
    let mut s = Sel12Slots {
        w: [0; 16 * SUB12],
        ad: [[[0; 16]; 2]; 6],
        low_bits: (G - 1) << 56,
        rem: (subs % 3) as u64,
    };
    // The selectors (`aesni`, "CTR counter blocks") for offset `r` in the sub-batch, branch
    // free (`r` may be secret): block `k` is `u = r + k < 2G`; all ones outside the low bits
    // when it crossed into the next aligned run (`u >= G`), `u mod G` in them. One 16-byte
    // store each: the loop's first loads of them follow at once, and a load is not forwarded
    // from two narrower stores.
    let r = ctr as u64 & (G - 1);
    for k in 0..G {
        let u = r + k;
        let m = 0u64.wrapping_sub(u >> G.trailing_zeros());
        let high = (m & !s.low_bits) | ((u << 56) & s.low_bits);
        // SAFETY: SSE2; `16 * k + 16 <= s.w.len()`.
        unsafe {
            _mm_storeu_si128(
                s.w.as_mut_ptr().add(16 * k as usize).cast(),
                _mm_set_epi64x(high as i64, m as i64),
            )
        };
    }
    let next = sel_pairs(&mut s.ad, ctr, G);
    let p = core::ptr::from_mut(&mut s).cast::<u8>();
    // SAFETY: the caller guarantees the CPU features and the buffer extents (the loop covers
    // `16 * SUB12 * subs <= len` bytes); the round keys read are `enc[0..=rounds]`; the slots
    // read and written are inside `s` (`ad` is 128-byte aligned at offset 128). No stack; it
    // clobbers only what it names.
    unsafe {
        sel_asm!(
            sel12_loop!(y), rk, p, p.add(core::mem::offset_of!(Sel12Slots, ad)), next,
            src, dst, subs / 3,
            nb = SUB12,
            lb = core::mem::offset_of!(Sel12Slots, low_bits),
            step = 16 * 3 * SUB12;
            ro = const core::mem::offset_of!(Sel12Slots, rem),
            out("ymm0") _, out("ymm1") _, out("ymm2") _, out("ymm3") _,
            out("ymm4") _, out("ymm5") _, out("ymm6") _, out("ymm7") _,
            out("ymm8") _, out("ymm9") _, out("ymm10") _, out("ymm11") _,
            out("ymm12") _, out("ymm13") _, out("ymm14") _, out("ymm15") _,
        )
    };
    16 * SUB12 * subs
}

/// What the zmm loop reads besides the keys, the data and its registers: the `[bswap(a), D']`
/// pairs of two batches, as in [`SelSlots`], the low-bits mask of `D'`, and the byte masks of
/// the tail's 8 registers. Counter words and lengths only; the caller's frame.
#[repr(C, align(64))]
struct ZSlots {
    ad: [[[u8; 16]; 2]; 2],
    low_bits: u64,
    masks: [u64; SEL_REGS],
}

/// `dst = src ^ keystream` from counter `ctr` for `len` bytes on zmm (the `vaes512` backend),
/// wholly in this assembly: the selector loop for every whole batch of 32 blocks (512 bytes,
/// 8 registers), its eight selectors in zmm16-23 rather than in memory, and the rest (under
/// 512 bytes) as the first registers of one more batch with masked loads and stores. At the
/// end every vector register it used is zeroed.
///
/// IMPLEMENTATION NOTE (issue 13): the compiled zmm kernel is followed by the dispatcher's
/// stack wipe (1280 bytes of stores), about 14 ns a call on Zen 4: a 512-byte AES-128 call
/// took 42 ns with it and 28 without it (a diagnostic build; a loop of `Aes::ctr_xor_at` from
/// a crate built with LTO, best of 200 trials). This code writes 72 bytes of counter words and
/// a 64-byte mask table on the stack (both in [`ZSlots`]), nothing that holds key material, so
/// no wipe follows. The selectors stay in registers: in memory, as the xmm/ymm loops keep
/// them, they would be 512 bytes of stores a call. Measurements: README, "Session 13, CTR on
/// `vaes512` wholly in assembly".
///
/// # Safety
/// The CPU has AVX-512F/BW/VL and VAES; `src` is readable and `dst` writable for `len`
/// bytes, `len` a multiple of 16 (whole blocks), and the two are equal or do not overlap.
#[inline(never)]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,vaes,aes,avx2,sse4.2")]
pub(crate) unsafe fn zmm_sel(rk: &Keys, ctr: u128, src: *const u8, dst: *mut u8, len: usize) {
    use core::arch::x86_64::{__m512i, _mm_set_epi64x, _mm512_broadcast_i32x4};
    debug_assert!(len.is_multiple_of(16) && matches!(rk.rounds, 10 | 12 | 14));
    const BATCH: u64 = (SEL_REGS * 4) as u64;
    const STEP: usize = 64 * SEL_REGS;
    let n = len / STEP;
    let r = ctr as u64 & (BATCH - 1);
    // SAFETY: AVX-512F (the target features above).
    let w = |i| unsafe { <__m512i as Vector>::ctr_select(r, i, BATCH) };
    let (w0, w1, w2, w3, w4, w5, w6, w7) = (w(0), w(1), w(2), w(3), w(4), w(5), w(6), w(7));
    let mut s = ZSlots {
        ad: [[[0; 16]; 2]; 2],
        low_bits: (BATCH - 1) << 56,
        masks: super::zmm_tail_masks(len),
    };
    let next = sel_pairs(&mut s.ad, ctr, BATCH);
    // The first batch's pair goes in registers (the loop loads each later pair at the end of
    // the iteration before).
    let ((alo, ahi), (dlo, dhi)) = ctr_batch_words(ctr & !(BATCH as u128 - 1), BATCH);
    let (a0, d0) = (
        _mm512_broadcast_i32x4(_mm_set_epi64x(ahi, alo)),
        _mm512_broadcast_i32x4(_mm_set_epi64x(dhi, dlo)),
    );
    let p = core::ptr::from_mut(&mut s).cast::<u8>();
    // SAFETY: the caller guarantees the CPU features and the buffer extents: the loop covers
    // `512 * n` bytes and the tail's masked loads and stores only the `len % 512` bytes after
    // them (masked-off bytes are not accessed and cannot fault). The round keys read are
    // `enc[0..=rounds]` (as in `sel_common`); the slots read and written are inside `s`
    // (offsets 0..136). No stack; it clobbers only what it names.
    unsafe {
        sel_asm!(
            zsel_call!(), rk, p, p, next, src, dst, n,
            nb = BATCH,
            lb = core::mem::offset_of!(ZSlots, low_bits),
            step = STEP;
            mo = const core::mem::offset_of!(ZSlots, masks),
            inout("zmm8") a0 => _,
            inout("zmm9") d0 => _,
            inout("zmm16") w0 => _,
            inout("zmm17") w1 => _,
            inout("zmm18") w2 => _,
            inout("zmm19") w3 => _,
            inout("zmm20") w4 => _,
            inout("zmm21") w5 => _,
            inout("zmm22") w6 => _,
            inout("zmm23") w7 => _,
            out("zmm0") _, out("zmm1") _, out("zmm2") _, out("zmm3") _,
            out("zmm4") _, out("zmm5") _, out("zmm6") _, out("zmm7") _,
            out("zmm10") _, out("zmm11") _, out("zmm12") _, out("zmm13") _,
            out("zmm14") _, out("zmm15") _, out("k1") _,
        );
    }
}

/// Register `i` of a [`zmm_r1`] batch after its first round, from the tables: `P[r] ^ G` with
/// `G = Ga` in the lanes before the window's high-part step and `Gb` from it (`s`, all ones
/// from there: `(thr - j) >> 63` with `j` the lane's block index in the window from
/// `[{ix} + {o} + 64 i]` and `thr` in zmm10), `Ga` in zmm8, `Ga ^ Gb` in zmm9.
macro_rules! r1_sel {
    ($i:literal) => {
        concat!(
            "vpsubq zmm",
            $i,
            ", zmm10, zmmword ptr [{ix} + {o} + 64*",
            $i,
            "]\n",
            "vpsraq zmm",
            $i,
            ", zmm",
            $i,
            ", 63\n",
            // s ? Gb : Ga, as Ga ^ (s & (Ga ^ Gb)): A = s, B = Ga, C = Ga ^ Gb.
            "vpternlogq zmm",
            $i,
            ", zmm8, zmm9, 0x6c\n",
            "vpxorq zmm",
            $i,
            ", zmm",
            $i,
            ", zmmword ptr [{pt} + {o} + 64*",
            $i,
            "]\n",
        )
    };
}

/// `G` of the high part in `{lo}`/`{hi}` (a counter value with its low byte zero): round 1 of
/// that block XOR round 1 of the zero block (in xmm13), broadcast into zmm`$d`.
macro_rules! r1_g {
    ($d:literal) => {
        concat!(
            "mov {t}, {hi}\n",
            "bswap {t}\n",
            "vmovq xmm14, {t}\n",
            "mov {t}, {lo}\n",
            "bswap {t}\n",
            "vpinsrq xmm14, xmm14, {t}, 1\n",
            "vpxor xmm14, xmm14, xmmword ptr [{k}]\n",
            "vaesenc xmm14, xmm14, xmmword ptr [{k} + 16]\n",
            "vpxor xmm14, xmm14, xmm13\n",
            "vshufi64x2 zmm",
            $d,
            ", zmm14, zmm14, 0\n",
        )
    };
}

/// Four entries of the [`zmm_r1`] table at `[{pt} + {o} + $off]`: round 1 (round keys 0 and 1
/// in zmm23 and zmm24) of the blocks in zmm21, and in zmm21 plus the byte-15 increments of 4,
/// 8 and 12 blocks (zmm22, zmm17, zmm18); zmm21 then moves on by 16 blocks (zmm19). Scratch
/// zmm25-28.
macro_rules! r1_build4 {
    ($off:literal) => {
        concat!(
            "vpxorq zmm25, zmm21, zmm23\n",
            "vpaddb zmm26, zmm21, zmm22\n",
            "vpxorq zmm26, zmm26, zmm23\n",
            "vpaddb zmm27, zmm21, zmm17\n",
            "vpxorq zmm27, zmm27, zmm23\n",
            "vpaddb zmm28, zmm21, zmm18\n",
            "vpxorq zmm28, zmm28, zmm23\n",
            "vpaddb zmm21, zmm21, zmm19\n",
            "vaesenc zmm25, zmm25, zmm24\n",
            "vaesenc zmm26, zmm26, zmm24\n",
            "vaesenc zmm27, zmm27, zmm24\n",
            "vaesenc zmm28, zmm28, zmm24\n",
            "vmovdqa64 zmmword ptr [{pt} + {o} + ",
            $off,
            "], zmm25\n",
            "vmovdqa64 zmmword ptr [{pt} + {o} + ",
            $off,
            " + 64], zmm26\n",
            "vmovdqa64 zmmword ptr [{pt} + {o} + ",
            $off,
            " + 128], zmm27\n",
            "vmovdqa64 zmmword ptr [{pt} + {o} + ",
            $off,
            " + 192], zmm28\n",
        )
    };
}

/// Bytes of the [`zmm_r1`] table: round 1 of the 256 blocks whose only non-zero byte is the
/// last (in call order: entry `j` is for low byte `c0 + j`).
const R1_BYTES: usize = 256 * 16;

/// The per-call table of [`zmm_r1`]: written, read and zeroed by its assembly only.
#[repr(C, align(64))]
struct R1Table([u8; R1_BYTES]);

/// The block index `j` (0..256) inside a window of every qword of the 64 registers of a
/// window (both qwords of a block carry its index): read by [`zmm_r1`]'s mask computation.
#[repr(C, align(64))]
struct R1Index([[u64; 8]; 64]);

static R1_INDEX: R1Index = {
    let mut t = [[0u64; 8]; 64];
    let mut r = 0;
    while r < 64 {
        let mut q = 0;
        while q < 8 {
            t[r][q] = (4 * r + q / 2) as u64;
            q += 1;
        }
        r += 1;
    }
    R1Index(t)
};

/// Calls from this length (bytes) take [`zmm_r1`] on AMD `vaes512`; shorter ones
/// [`zmm_sel`]. Measured on Zen 4 (`aesx bench --ops ctr --backends vaes512`, seven runs
/// alternated with a build that sends calls from 4 KiB): [`zmm_r1`] is 0.97x at 4 KiB, 0.99-1.0x
/// at 5 KiB, 1.0-1.01x at 6 KiB, 1.02x at 7 KiB.
pub(crate) const R1_MIN: usize = 6144;

/// [`zmm_sel`] with the first AES round of every block taken from a table built per call:
/// one VAESENC a register fewer (13 rounds instead of 14 for AES-256, 9 for 10 for AES-128).
///
/// IMPLEMENTATION NOTE (the counter-mode first-round technique of Bernstein and Schwabe, "New
/// AES software speed records", 2008, in a constant-time form). Write a counter block as
/// `H || l`, its last byte `l` and the rest `H`. Round 1 is `MC(SR(SB(x ^ k0))) ^ k1`, and
/// SubBytes works byte by byte, so `R1(H || l) = R1(H || 0) ^ R1(0 || l) ^ R1(0)`: the part
/// that depends on `l` is the same for every `H`. Block `k = 256 m + j` of a call starting at
/// counter `C = H0 || c0` has `l = c0 + j` (mod 256) and `H = H0 + m + s_j`, where `s_j` is 1
/// for `j >= 256 - c0` (its low byte wrapped within the window) and 0 before. So the call
/// computes `P[j] = R1(0 || (c0 + j))` for `j < 256` once (64 VAESENC, counter blocks built
/// by byte adds), and per window `G_m = R1(H0 + m || 0) ^ R1(0)` (one xmm VAESENC); a block's
/// round-1 output is then `P[j] ^ (s_j ? G_{m+1} : G_m)`. Constant time: `P` is read at the
/// block's position in the call, never at an address that depends on the counter; `s_j` is
/// computed per lane with vector arithmetic (`(255 - c0 - j) >> 63`); the only branches are on
/// the batch count. (A table indexed by the counter byte, as in the paper, would be built
/// once per key, but its addresses would depend on the counter, which may be secret.)
/// `P` is key material: it lives in this frame, only the assembly writes and reads it, and
/// the assembly zeroes it before returning, with every vector register it used.
///
/// Per call this costs the 64 VAESENC of `P` (the first batch's 8 registers before the loop,
/// then each batch of the first window builds the next one's among its rounds, so that the
/// 64 stores overlap AES work: 16 KiB AES-256 982 -> 965 ns against building the table first)
/// and 64 stores zeroing it (in the last 8 batches, same reason), hence [`R1_MIN`]. Measured
/// on Zen 4 against [`zmm_sel`] (README, "Session 15"): 16 KiB 1.04-1.05x, 64 KiB 1.06-1.09x,
/// 1 MiB 1.06-1.10x (AES-256 to AES-128).
///
/// Tried and not kept (README, "Session 18"): round 2 from a per-call table too. Column 0 of
/// the round-1 state depends on bytes 0, 5, 10 and 15 only, so round 2 splits the same way
/// while bytes 0, 5 and 10 stay fixed (1.05-1.09x faster); they change where the counter
/// crosses a multiple of 2^40 blocks, and handling that takes either a branch on the counter
/// (not constant time) or a second table with a per-lane choice (slower than this loop).
///
/// # Safety
/// As [`zmm_sel`].
#[inline(never)]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,vaes,aes,avx2,sse4.2")]
pub(crate) unsafe fn zmm_r1(rk: &Keys, ctr: u128, src: *const u8, dst: *mut u8, len: usize) {
    use core::arch::x86_64::{_mm512_set_epi64, _mm512_set1_epi64};
    debug_assert!(len.is_multiple_of(16) && matches!(rk.rounds, 10 | 12 | 14));
    const STEP: usize = 64 * SEL_REGS;
    // At least 8 batches: the last 8 zero the table (see the loop).
    let n = if len / STEP >= 8 { len / STEP } else { 0 };
    if n > 0 {
        let c0 = (ctr & 0xff) as i64;
        let h0 = ctr & !0xff;
        // Lane `q` of the first register: the block whose last byte is `c0 + q`; each later
        // register four more (byte adds, mod 256).
        let b = |q: i64| ((c0 + q) & 0xff) << 56;
        let v = _mm512_set_epi64(b(3), 0, b(2), 0, b(1), 0, b(0), 0);
        let four = 4i64 << 56;
        let inc = _mm512_set_epi64(four, 0, four, 0, four, 0, four, 0);
        let thr = _mm512_set1_epi64(255 - c0);
        let mut table = core::mem::MaybeUninit::<R1Table>::uninit();
        let k = rk.enc.as_ptr().cast::<u8>();
        // SAFETY: the caller guarantees the CPU features and the buffer extents (the loop
        // covers `512 * n <= len` bytes); the round keys read are `enc[0..=rounds]` (as in
        // `sel_common`); `table` is 4096 bytes, 64-byte aligned, written before it is read
        // and zeroed at the end; `R1_INDEX` is 4096 bytes, 64-byte aligned. No stack; it
        // clobbers only what it names.
        unsafe {
            asm!(
                // R1(0) = AESENC(k0, k1).
                "vmovdqu xmm13, xmmword ptr [{k}]",
                "vaesenc xmm13, xmm13, xmmword ptr [{k} + 16]",
                // G_0 in zmm8, G_0 ^ G_1 in zmm9, G_2 in zmm20 (each window switch computes
                // the G after next, so its latency hides behind a window's rounds); first, so
                // that these short chains overlap the table's rounds.
                r1_g!("8"),
                "add {lo}, 256",
                "adc {hi}, 0",
                r1_g!("11"),
                "vpxorq zmm9, zmm8, zmm11",
                "add {lo}, 256",
                "adc {hi}, 0",
                r1_g!("20"),
                // P: the 8 entries of the first batch here; each later batch of the first
                // window builds the next batch's 8 among its rounds ({f} counts them).
                "vbroadcasti32x4 zmm23, xmmword ptr [{k}]",
                "vbroadcasti32x4 zmm24, xmmword ptr [{k} + 16]",
                // Byte-15 increments of 8, 12 and 16 blocks (zmm22: 4), so that the four
                // registers of a step do not wait for each other.
                "vpaddb zmm17, zmm22, zmm22",
                "vpaddb zmm18, zmm17, zmm22",
                "vpaddb zmm19, zmm17, zmm17",
                "xor {o}, {o}",
                r1_build4!("0"),
                r1_build4!("256"),
                "mov {f}, 7",
                "vpxord xmm16, xmm16, xmm16",
                "2:",
                r1_sel!("0"),
                r1_sel!("1"),
                r1_sel!("2"),
                r1_sel!("3"),
                r1_sel!("4"),
                r1_sel!("5"),
                r1_sel!("6"),
                r1_sel!("7"),
                // The last 8 batches read the 8 table slots once each (the slot is the batch
                // number mod 8): each zeroes the slot it has just read.
                "cmp {n}, 8",
                "ja 8f",
                "vmovdqa64 zmmword ptr [{pt} + {o}], zmm16",
                "vmovdqa64 zmmword ptr [{pt} + {o} + 64], zmm16",
                "vmovdqa64 zmmword ptr [{pt} + {o} + 128], zmm16",
                "vmovdqa64 zmmword ptr [{pt} + {o} + 192], zmm16",
                "vmovdqa64 zmmword ptr [{pt} + {o} + 256], zmm16",
                "vmovdqa64 zmmword ptr [{pt} + {o} + 320], zmm16",
                "vmovdqa64 zmmword ptr [{pt} + {o} + 384], zmm16",
                "vmovdqa64 zmmword ptr [{pt} + {o} + 448], zmm16",
                "8:",
                "test {f}, {f}",
                "jz 9f",
                r1_build4!("512"),
                r1_build4!("768"),
                "dec {f}",
                "9:",
                mround!(z, "aesenc", "2"; "0" "1" "2" "3" "4" "5" "6" "7"),
                mround!(z, "aesenc", "3"; "0" "1" "2" "3" "4" "5" "6" "7"),
                mround!(z, "aesenc", "4"; "0" "1" "2" "3" "4" "5" "6" "7"),
                mround!(z, "aesenc", "5"; "0" "1" "2" "3" "4" "5" "6" "7"),
                mround!(z, "aesenc", "6"; "0" "1" "2" "3" "4" "5" "6" "7"),
                mround!(z, "aesenc", "7"; "0" "1" "2" "3" "4" "5" "6" "7"),
                mround!(z, "aesenc", "8"; "0" "1" "2" "3" "4" "5" "6" "7"),
                mround!(z, "aesenc", "9"; "0" "1" "2" "3" "4" "5" "6" "7"),
                last_rounds!(z; "0" "1" "2" "3" "4" "5" "6" "7"),
                "add {src}, {step}",
                "add {dst}, {step}",
                "add {o}, {step}",
                "cmp {o}, 4096",
                "jne 4f",
                // The next window m + 1: Ga = G_{m+1}, Ga ^ Gb = G_{m+1} ^ G_{m+2}, and
                // G_{m+3} for the switch after.
                "xor {o}, {o}",
                "vpxorq zmm8, zmm8, zmm9",
                "vpxorq zmm9, zmm8, zmm20",
                "add {lo}, 256",
                "adc {hi}, 0",
                r1_g!("20"),
                "4:",
                "dec {n}",
                "jnz 2b",
                // Every vector register used (the table is zero already).
                "vzeroall",
                "vpxord xmm17, xmm17, xmm17",
                "vpxord xmm18, xmm18, xmm18",
                "vpxord xmm19, xmm19, xmm19",
                "vpxord xmm20, xmm20, xmm20",
                "vpxord xmm21, xmm21, xmm21",
                "vpxord xmm22, xmm22, xmm22",
                "vpxord xmm23, xmm23, xmm23",
                "vpxord xmm24, xmm24, xmm24",
                "vpxord xmm25, xmm25, xmm25",
                "vpxord xmm26, xmm26, xmm26",
                "vpxord xmm27, xmm27, xmm27",
                "vpxord xmm28, xmm28, xmm28",
                k = in(reg) k,
                kl = in(reg) k.add(16 * rk.rounds),
                pt = in(reg) table.as_mut_ptr().cast::<u8>(),
                ix = in(reg) R1_INDEX.0.as_ptr().cast::<u8>(),
                lo = inout(reg) h0 as u64 => _,
                hi = inout(reg) (h0 >> 64) as u64 => _,
                o = out(reg) _,
                t = out(reg) _,
                src = inout(reg) src => _,
                dst = inout(reg) dst => _,
                n = inout(reg) n => _,
                step = const STEP,
                f = out(reg) _,
                inout("zmm21") v => _,
                inout("zmm22") inc => _,
                inout("zmm10") thr => _,
                out("zmm0") _, out("zmm1") _, out("zmm2") _, out("zmm3") _,
                out("zmm4") _, out("zmm5") _, out("zmm6") _, out("zmm7") _,
                out("zmm8") _, out("zmm9") _, out("zmm11") _, out("zmm12") _,
                out("zmm13") _, out("zmm14") _, out("zmm15") _, out("zmm16") _,
                out("zmm17") _, out("zmm18") _, out("zmm19") _, out("zmm20") _,
                out("zmm23") _, out("zmm24") _, out("zmm25") _, out("zmm26") _,
                out("zmm27") _, out("zmm28") _,
                options(nostack),
            );
        }
    }
    let done = n * STEP;
    if done < len {
        // SAFETY: the caller's guarantees, for the bytes after the batches.
        unsafe {
            zmm_sel(
                rk,
                ctr.wrapping_add((done / 16) as u128),
                src.add(done),
                dst.add(done),
                len - done,
            )
        };
    }
}
