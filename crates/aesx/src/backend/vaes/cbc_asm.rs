//! The CBC-decryption main loop as one block of inline assembly: 12 registers in flight per
//! iteration, registers allocated by hand, in place, in the shape of [`super::ctr_asm`]; ymm
//! (24 blocks) for `vaes256`, and xmm (12 blocks, legacy SSE) for `aesni` with AES-128 only.
//! [`super::cbc_dec`] runs it for whole iterations from three on and the intrinsic kernel for
//! the rest (and for `aesni` AES-192/256).
//!
//! IMPLEMENTATION NOTE (issues 13 and 19): the intrinsic kernel runs 8 ymm registers (with 12
//! its tail shapes spilled past the stack wipe, README). This loop runs 12 with no stack.
//! Measured on Zen 3 (`aesx bench --sizes 16K,1M --ops cbc-dec --backends aesni,vaes256
//! --keys 128,256`, three alternated runs against main, best of each, load 4.1-5.0; aes-limit
//! ymm AES-128 20.53, AES-256 14.66 GB/s): 16 KiB AES-128 18.80 -> 19.24 GB/s, AES-256
//! 13.64 -> 14.13; 1 MiB 19.05 -> 19.56, 13.81 -> 14.37. The chaining XOR folded into the
//! last round key (below) measured faster than a VPXOR after VAESDECLAST (16 KiB 19.08 /
//! 13.85, 1 MiB 19.42 / 14.10 GB/s).
//!
//! On xmm (issue 19) the same loop with the fold measured level with `aesni`'s 12-register
//! intrinsic kernel (session 4, commit e1b63cd: 16 KiB AES-128 9.98 against 9.99 GB/s,
//! AES-256 7.26 against 7.29), but with the chaining XOR after AESDECLAST (`last_after`) it
//! is faster for AES-128 and slower for AES-192/256. Session 5, quiet Zen 3, stand-alone
//! copies of the xmm loop at 16 KiB: AES-128 10.16-10.19 GB/s folded, 10.29-10.32 after;
//! AES-256 7.41 folded, 7.20 after; AES-192 8.52, 8.39. In the library
//! (`scripts/bench-aesni-peers.sh`'s build, `aesx bench --backends aesni --sizes 16K,1M --ops
//! cbc-dec --keys 128`, four runs alternated with the intrinsic kernel): 16 KiB 9.88-9.95 ->
//! 9.94-10.04 GB/s, 1 MiB 9.88-10.00 -> 10.04-10.08. So `aesni` runs this loop, XOR after,
//! for AES-128, and keeps the intrinsic kernel for AES-192/256.
//!
//! ```text
//! r0-r11   the 12 data registers through the AES rounds
//! r12      round key of the current round (MOVDQU / VBROADCASTI128 from the schedule)
//! xmm13    the chaining block of the batch's first block: the previous batch's last
//!          ciphertext block (the IV before the first batch), in and out of the asm
//! xmm14    the batch's last ciphertext block, read before it is overwritten
//! r15      the chaining value of one register in the last round
//! ```
//!
//! The schedule is the equivalent inverse cipher's (`aesni::dec_schedule`: `dk[0]` whitens,
//! `dk[NR]` is the last round key). On ymm the chaining XOR is folded into the last round
//! (`aesdeclast(x, dk[NR] ^ chain)`); on xmm it follows it (`aesdeclast(x, dk[10]) ^ chain`).
//! The chaining value of register `i >= 1` is the
//! ciphertext one block before it, loaded from the buffer at a one-block offset, and the
//! registers are finished and stored from the last to the first, so each of those loads still
//! reads ciphertext though the buffer is decrypted in place (as in the intrinsic kernel,
//! [`super::cbc_dec`]). On ymm the first register's chaining value is `[xmm13, block 0]`, one
//! VINSERTI128 from memory.
//!
//! Legacy SSE encodings on xmm, VEX on ymm. No stack: the round keys are only ever in r12 and
//! the schedule (the caller's frame, which the dispatcher's stack wipe covers). Constant time:
//! the loop count and the round count are public; no branch or address depends on data or key.

use core::arch::asm;
use core::arch::x86_64::__m128i;

/// One middle round (AESDEC) over the 12 registers, key `i`.
macro_rules! dround {
    ($w:ident, $i:literal) => {
        concat!(
            key!($w, "12", concat!("{k} + 16*", $i)),
            op2!($w, "aesdec", "0", "12"),
            op2!($w, "aesdec", "1", "12"),
            op2!($w, "aesdec", "2", "12"),
            op2!($w, "aesdec", "3", "12"),
            op2!($w, "aesdec", "4", "12"),
            op2!($w, "aesdec", "5", "12"),
            op2!($w, "aesdec", "6", "12"),
            op2!($w, "aesdec", "7", "12"),
            op2!($w, "aesdec", "8", "12"),
            op2!($w, "aesdec", "9", "12"),
            op2!($w, "aesdec", "10", "12"),
            op2!($w, "aesdec", "11", "12"),
        )
    };
}

/// Loads register `i` of the batch and whitens it with round key 0 (in r12).
macro_rules! ldw {
    ($w:ident, $i:literal) => {
        concat!(ld!($w, $i, "{p}", $i), op2!($w, "pxor", $i, "12"))
    };
}

/// The chaining value of register `i >= 1` into r15: the ciphertext one block (16 bytes)
/// before register `i`.
macro_rules! chain {
    (x, $i:literal) => {
        concat!("movdqu xmm15, xmmword ptr [{p} + 16*", $i, " - 16]\n")
    };
    (y, $i:literal) => {
        concat!("vmovdqu ymm15, ymmword ptr [{p} + 32*", $i, " - 16]\n")
    };
}

/// The last round of register `i >= 1`: `aesdeclast(r_i, k_last ^ chain_i)`, stored in place.
macro_rules! last {
    ($w:ident, $i:literal) => {
        concat!(
            chain!($w, $i),
            op2!($w, "pxor", "15", "12"),
            op2!($w, "aesdeclast", $i, "15"),
            st!($w, $i, "{p}", $i),
        )
    };
}

/// The last round of register 0 (chaining value from xmm13), and xmm13 = the batch's last
/// ciphertext block (read into xmm14 before it was overwritten).
macro_rules! last0 {
    (y) => {
        concat!(
            "vinserti128 ymm15, ymm13, xmmword ptr [{p}], 1\n",
            "vpxor ymm15, ymm15, ymm12\n",
            "vaesdeclast ymm0, ymm0, ymm15\n",
            "vmovdqu ymmword ptr [{p}], ymm0\n",
            "vmovdqa xmm13, xmm14\n",
        )
    };
}

/// The last round of register `i >= 1` with the chaining XOR after it (xmm only):
/// `aesdeclast(r_i, k_last) ^ chain_i`, stored in place.
macro_rules! last_after {
    (x, $i:literal) => {
        concat!(
            op2!(x, "aesdeclast", $i, "12"),
            chain!(x, $i),
            op2!(x, "pxor", $i, "15"),
            st!(x, $i, "{p}", $i),
        )
    };
}

/// [`last_after`] for register 0 (chaining value from xmm13), and xmm13 = the batch's last
/// ciphertext block (read into xmm14 before it was overwritten).
macro_rules! last0_after {
    (x) => {
        concat!(
            "aesdeclast xmm0, xmm12\n",
            "pxor xmm0, xmm13\n",
            "movdqu xmmword ptr [{p}], xmm0\n",
            "movdqa xmm13, xmm14\n",
        )
    };
}

/// The batch's last ciphertext block into xmm14.
macro_rules! next_carry {
    (x) => {
        "movdqu xmm14, xmmword ptr [{p} + 16*11]\n"
    };
    (y) => {
        "vmovdqu xmm14, xmmword ptr [{p} + 32*12 - 16]\n"
    };
}

/// The whole loop (`{n}` >= 1 iterations of 12 registers).
macro_rules! cbc_loop {
    ($w:ident) => {
        cbc_loop!($w, last, last0)
    };
    ($w:ident, $last:ident, $last0:ident) => {
        concat!(
            "2:\n",
            key!($w, "12", "{k}"),
            ldw!($w, "0"),
            ldw!($w, "1"),
            ldw!($w, "2"),
            ldw!($w, "3"),
            ldw!($w, "4"),
            ldw!($w, "5"),
            ldw!($w, "6"),
            ldw!($w, "7"),
            ldw!($w, "8"),
            ldw!($w, "9"),
            ldw!($w, "10"),
            ldw!($w, "11"),
            next_carry!($w),
            dround!($w, "1"),
            dround!($w, "2"),
            dround!($w, "3"),
            dround!($w, "4"),
            dround!($w, "5"),
            dround!($w, "6"),
            dround!($w, "7"),
            dround!($w, "8"),
            dround!($w, "9"),
            "lea {t}, [{k} + 160]\n",
            "cmp {t}, {kl}\n",
            "je 3f\n",
            dround!($w, "10"),
            dround!($w, "11"),
            "lea {t}, [{k} + 192]\n",
            "cmp {t}, {kl}\n",
            "je 3f\n",
            dround!($w, "12"),
            dround!($w, "13"),
            "3:\n",
            key!($w, "12", "{kl}"),
            $last!($w, "11"),
            $last!($w, "10"),
            $last!($w, "9"),
            $last!($w, "8"),
            $last!($w, "7"),
            $last!($w, "6"),
            $last!($w, "5"),
            $last!($w, "4"),
            $last!($w, "3"),
            $last!($w, "2"),
            $last!($w, "1"),
            $last0!($w),
            "add {p}, {step}\n",
            "dec {n}\n",
            "jnz 2b\n",
        )
    };
}

/// Registers per iteration.
pub(crate) const REGS: usize = 12;

/// CBC decryption in place of `n * 24` blocks (`n * 12` ymm registers, 384 bytes an
/// iteration) at `p` with the decryption schedule `dk` of `rounds` rounds; `chain` is the
/// chaining block before the first (the IV), and the result is the last ciphertext block (the
/// chaining block of what follows).
///
/// # Safety
/// The CPU has AVX2 and VAES; `p` is readable and writable for `384 * n` bytes, `n >= 1`.
#[inline]
#[target_feature(enable = "avx2,vaes")]
pub(crate) unsafe fn ymm(
    dk: &[[u8; 16]; 15],
    rounds: usize,
    chain: __m128i,
    p: *mut u8,
    n: usize,
) -> __m128i {
    debug_assert!(n >= 1 && matches!(rounds, 10 | 12 | 14));
    let k = dk.as_ptr().cast::<u8>();
    let mut c = chain;
    // SAFETY: the caller guarantees the CPU features and the buffer extent; the round keys
    // read are `dk[0..=rounds]` (`kl` is `dk[rounds]`; rounds 10..13 are read only when `kl`
    // lies beyond them); the asm reads and writes nothing else but `p[..384 * n]`. No stack;
    // it clobbers only what it names.
    unsafe {
        asm!(
            cbc_loop!(y),
            k = in(reg) k,
            kl = in(reg) k.add(16 * rounds),
            t = out(reg) _,
            p = inout(reg) p => _,
            n = inout(reg) n => _,
            step = const 32 * REGS,
            inout("xmm13") c,
            out("ymm0") _, out("ymm1") _, out("ymm2") _, out("ymm3") _,
            out("ymm4") _, out("ymm5") _, out("ymm6") _, out("ymm7") _,
            out("ymm8") _, out("ymm9") _, out("ymm10") _, out("ymm11") _,
            out("ymm12") _, out("ymm14") _, out("ymm15") _,
            options(nostack),
        );
    }
    c
}

/// CBC decryption in place of `n * 12` blocks (192 bytes an iteration) at `p` on xmm (legacy
/// SSE, for `aesni`), AES-128 only, with the chaining XOR after the last round (see the
/// module notes); `dk` is the AES-128 decryption schedule, `chain` the chaining block before
/// the first, and the result the last ciphertext block.
///
/// # Safety
/// The CPU has AES-NI; `p` is readable and writable for `192 * n` bytes, `n >= 1`.
#[inline]
#[target_feature(enable = "aes,sse4.2")]
pub(crate) unsafe fn xmm128(dk: &[[u8; 16]; 15], chain: __m128i, p: *mut u8, n: usize) -> __m128i {
    debug_assert!(n >= 1);
    let k = dk.as_ptr().cast::<u8>();
    let mut c = chain;
    // SAFETY: as in `ymm`, with 10 rounds (`kl` is `dk[10]`, so rounds 10..13 are skipped) and
    // `p[..192 * n]`.
    unsafe {
        asm!(
            cbc_loop!(x, last_after, last0_after),
            k = in(reg) k,
            kl = in(reg) k.add(16 * 10),
            t = out(reg) _,
            p = inout(reg) p => _,
            n = inout(reg) n => _,
            step = const 16 * REGS,
            inout("xmm13") c,
            out("xmm0") _, out("xmm1") _, out("xmm2") _, out("xmm3") _,
            out("xmm4") _, out("xmm5") _, out("xmm6") _, out("xmm7") _,
            out("xmm8") _, out("xmm9") _, out("xmm10") _, out("xmm11") _,
            out("xmm12") _, out("xmm14") _, out("xmm15") _,
            options(nostack),
        );
    }
    c
}
