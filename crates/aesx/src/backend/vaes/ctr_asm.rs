//! The CTR main loop as one block of inline assembly, one source for two widths: 12 xmm
//! registers (12 blocks, `aesni`) or 12 ymm registers (24 blocks, `vaes256`) in flight per
//! iteration, registers allocated by hand, in place or buffer to buffer.
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

use crate::backend::aesni::Keys;

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

/// Rounds 10..NR-1 (after round 9) and the last round, the data XOR and the stores; loop end.
macro_rules! tail_rounds {
    ($w:ident) => {
        concat!(
            "lea {t}, [{k} + 160]\n",
            "cmp {t}, {kl}\n",
            "je 3f\n",
            round!($w, "10"),
            round!($w, "11"),
            "lea {t}, [{k} + 192]\n",
            "cmp {t}, {kl}\n",
            "je 3f\n",
            round!($w, "12"),
            round!($w, "13"),
            "3:\n",
            key!($w, "12", "{kl}"),
            last!($w, "0"),
            last!($w, "1"),
            last!($w, "2"),
            last!($w, "3"),
            last!($w, "4"),
            last!($w, "5"),
            last!($w, "6"),
            last!($w, "7"),
            last!($w, "8"),
            last!($w, "9"),
            last!($w, "10"),
            last!($w, "11"),
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
