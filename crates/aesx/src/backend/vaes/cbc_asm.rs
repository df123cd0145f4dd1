//! CBC decryption as inline assembly: 12 registers in flight per iteration, registers
//! allocated by hand, in place, in the shape of [`super::ctr_asm`]. On ymm (24 blocks an
//! iteration, `vaes256`) the main loop ([`ymm`]): [`super::cbc_dec`] runs it for whole
//! iterations from three on and the intrinsic kernel for the rest. On xmm (12 blocks, legacy
//! SSE, `aesni`) the whole call from 12 blocks on, every key size ([`xmm`]): the decryption
//! schedule, the blocks that do not fill an iteration, the loop, and the wipe of the schedule,
//! so that no compiled code holds a key and no stack wipe follows (`aesni::cbc_decrypt_nostack`).
//! On zmm (`vaes512` on AMD, 21 blocks to 8 KiB) the whole call as well ([`zmm`], at the end
//! of this file: 8 registers, 32 blocks an iteration, the rest under byte masks).
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
//! 9.94-10.04 GB/s, 1 MiB 9.88-10.00 -> 10.04-10.08. So `aesni` runs this loop with the XOR
//! after for AES-128; AES-192/256 kept the intrinsic kernel until session 6, when the whole
//! call moved into assembly (they now run the folded loop, which measured level with it).
//!
//! The blocks that do not fill an iteration (`blocks % 12`, xmm) come first ([`cbc_head`]):
//! 4, 8 or 12 registers, the fewest that hold them, are decrypted from the start of the buffer
//! (at least 12 blocks long, so every load is inside) and only the first `blocks % 12` stored.
//! The first form, a 12-register head whatever the remainder, measured no faster than the
//! stack-wiped kernel at 16 KiB (1024 blocks, 4 left over: 8 blocks decrypted for nothing).
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
//! the schedule (on ymm the caller's frame, which the dispatcher's stack wipe covers; on xmm
//! a local that the assembly fills and zeroes, with r12 and r15, before it ends). Constant
//! time: the loop count, the head's length and the round count are public; no branch or
//! address depends on data or key.

use core::arch::asm;
use core::arch::x86_64::__m128i;

/// The chaining value of register `i >= 1` into r15: the ciphertext one block (16 bytes)
/// before register `i`.
macro_rules! chain {
    (x, $i:literal) => {
        concat!("movdqu xmm15, xmmword ptr [{p} + 16*", $i, " - 16]\n")
    };
}

/// The last round of register `i >= 1`, the chaining XOR folded into the key:
/// `r_i = aesdeclast(r_i, k_last ^ chain_i)`. On ymm the chaining load is the memory operand
/// of the VPXOR (one instruction fewer per register: Zen 3, session 29, `aesx bench
/// --backends vaes256 --ops cbc-dec --sizes 16K`, eight alternated runs, best: AES-128 18.77
/// -> 19.11 GB/s, AES-256 13.92 -> 14.06; aes-limit ymm 20.62 / 14.73).
macro_rules! fin {
    (y, $i:literal) => {
        concat!(
            "vpxor ymm15, ymm12, ymmword ptr [{p} + 32*",
            $i,
            " - 16]\n",
            op2!(y, "aesdeclast", $i, "15"),
        )
    };
    (x, $i:literal) => {
        concat!(
            chain!(x, $i),
            op2!(x, "pxor", "15", "12"),
            op2!(x, "aesdeclast", $i, "15"),
        )
    };
}

/// The last round of register `i >= 1`, the chaining XOR after it (xmm only):
/// `r_i = aesdeclast(r_i, k_last) ^ chain_i`.
macro_rules! fin_after {
    (x, $i:literal) => {
        concat!(
            op2!(x, "aesdeclast", $i, "12"),
            chain!(x, $i),
            op2!(x, "pxor", $i, "15"),
        )
    };
}

/// [`fin`] for register 0, whose chaining value is xmm13 (on ymm `[xmm13, block 0]`). On
/// xmm it consumes xmm13.
macro_rules! fin0 {
    (x) => {
        concat!("pxor xmm13, xmm12\n", "aesdeclast xmm0, xmm13\n")
    };
    (y) => {
        concat!(
            "vinserti128 ymm15, ymm13, xmmword ptr [{p}], 1\n",
            "vpxor ymm15, ymm15, ymm12\n",
            "vaesdeclast ymm0, ymm0, ymm15\n",
        )
    };
}

/// [`fin_after`] for register 0 (chaining value xmm13).
macro_rules! fin0_after {
    (x) => {
        concat!("aesdeclast xmm0, xmm12\n", "pxor xmm0, xmm13\n")
    };
}

/// The last round of register `i` by `$fin`, stored in place.
macro_rules! finst {
    ($w:ident, $fin:ident, $i:literal) => {
        concat!($fin!($w, $i), st!($w, $i, "{p}", $i))
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

/// xmm13 = xmm14 (the next batch's first chaining block).
macro_rules! carry {
    (x) => {
        "movdqa xmm13, xmm14\n"
    };
    (y) => {
        "vmovdqa xmm13, xmm14\n"
    };
}

/// The whole loop (`{n}` >= 1 iterations of 12 registers from `{p}`), the last round by
/// `$fin` / `$fin0`.
macro_rules! cbc_loop {
    ($w:ident, $fin:ident, $fin0:ident) => {
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
            rounds!($w, "aesdec"; "0" "1" "2" "3" "4" "5" "6" "7" "8" "9" "10" "11"),
            key!($w, "12", "{kl}"),
            finst!($w, $fin, "11"),
            finst!($w, $fin, "10"),
            finst!($w, $fin, "9"),
            finst!($w, $fin, "8"),
            finst!($w, $fin, "7"),
            finst!($w, $fin, "6"),
            finst!($w, $fin, "5"),
            finst!($w, $fin, "4"),
            finst!($w, $fin, "3"),
            finst!($w, $fin, "2"),
            finst!($w, $fin, "1"),
            $fin0!($w),
            st!($w, "0", "{p}", "0"),
            carry!($w),
            "add {p}, {step}\n",
            "dec {n}\n",
            "jnz 2b\n",
        )
    };
}

/// The first `{r}` blocks at `{p}` on xmm, with `N` registers (`{r} <= N <= 12`), the rest
/// of the buffer (at least 12 blocks) left for [`cbc_loop`]: registers `0..N` (listed as
/// `0` and then `$d`, `N-1` down to 1) are decrypted, all loads inside the buffer, and the
/// first `{r}` stored; xmm13 becomes ciphertext block `{r} - 1`, read before the stores, and
/// `{p}` moves past the `{r}` blocks. Ends with a jump to label 5 (the loop), or to the
/// label given. `{t}` is scratch.
macro_rules! cbc_head {
    ($fin:ident, $fin0:ident; $($d:literal)*) => {
        cbc_head!($fin, $fin0, "5"; $($d)*)
    };
    ($fin:ident, $fin0:ident, $next:literal; $($d:literal)*) => {
        concat!(
            batch_rounds!(x, "aesdec"; $($d)*),
            $($fin!(x, $d),)*
            $fin0!(x),
            "mov {t}, {r}\n",
            "shl {t}, 4\n",
            "movdqu xmm13, xmmword ptr [{p} + {t} - 16]\n",
            store_first_r!($($d)*),
            "add {p}, {t}\n",
            "jmp ", $next, "f\n",
        )
    };
}

/// [`heads`] for CBC decryption, with one more shape: when 1-4 blocks are left over and the
/// loop has two iterations or more, those blocks and the first iteration (13-16 blocks) run as
/// two heads of 8 registers (8 blocks, then the other 5-8), and the loop one iteration less.
/// Every other case falls through to [`heads`] (the second head's jump to label 5 lands at
/// its end). A head of 4 registers is bound by AESDEC's latency (4 blocks in flight, 4 cycles
/// a round: half the rate of 8): 56 cycles for AES-256's 14 rounds, where the two 8-block
/// heads take about as long as the 4-block head and one iteration would at full rate. Used for
/// AES-256 (see [`xmm`]). `{s}` is scratch; `{r}` and `{n}` are changed.
macro_rules! cbc_heads {
    ($fin:ident, $fin0:ident) => {
        concat!(
            "test {r}, {r}\n",
            "jz 17f\n",
            "cmp {r}, 4\n",
            "ja 17f\n",
            "cmp {n}, 2\n",
            "jb 17f\n",
            "lea {s}, [{r} + 4]\n",
            "mov {r}, 8\n",
            "dec {n}\n",
            cbc_head!($fin, $fin0, "16"; "7" "6" "5" "4" "3" "2" "1"),
            "16:\n",
            "mov {r}, {s}\n",
            cbc_head!($fin, $fin0; "7" "6" "5" "4" "3" "2" "1"),
            "17:\n",
            heads!(cbc_head!($fin, $fin0)),
        )
    };
}

/// CBC decryption of `{r} + 12 * {n}` blocks (`{n}` >= 1) on xmm: the decryption schedule
/// derived from the encryption schedule at `{e}` into the 16-byte slots at `{k}` (`{kl}` the
/// last), `$heads` for the `{r}` blocks that do not fill an iteration (`heads!(cbc_head!(..))`:
/// 4, 8 or 12 registers, the fewest that hold them; or [`cbc_heads`]), the loop, and the
/// schedule slots, xmm12 and xmm15 (round keys, and round keys XORed with ciphertext) zeroed
/// at the end.
macro_rules! cbc_xmm {
    ($fin:ident, $fin0:ident, $heads:expr) => {
        concat!(
            derive_dk!(),
            $heads,
            cbc_loop!(x, $fin, $fin0),
            "pxor xmm15, xmm15\n",
            zero_dk!(),
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
            cbc_loop!(y, fin, fin0),
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

/// CBC decryption in place of `blocks >= 12` blocks at `p` on xmm (legacy SSE, for `aesni`),
/// every key size, all of it in this assembly ([`cbc_xmm`]): the decryption schedule derived
/// from `enc` (the encryption schedule of `rounds` rounds) into `dk`, the `blocks % 12` blocks
/// that do not fill an iteration, the loop, and `dk` zeroed again. AES-128 with the chaining
/// XOR after the last round, AES-192/256 folded into it (see the module notes). `chain` is the
/// chaining block before the first, and the result the last ciphertext block. No key material
/// is left in `dk`, in a register or on the stack.
///
/// # Safety
/// The CPU has AES-NI; `p` is readable and writable for `16 * blocks` bytes, `blocks >= 12`;
/// `dk` is writable for `16 * (rounds + 1)` bytes.
#[inline]
#[target_feature(enable = "aes,sse4.2")]
pub(crate) unsafe fn xmm(
    enc: &[[u8; 16]; 15],
    rounds: usize,
    chain: __m128i,
    p: *mut u8,
    blocks: usize,
    dk: *mut [u8; 16],
) -> __m128i {
    debug_assert!(blocks >= REGS && matches!(rounds, 10 | 12 | 14));
    let k = dk.cast::<u8>();
    let mut c = chain;
    macro_rules! run {
        ($fin:ident, $fin0:ident, $heads:expr) => {
            asm!(
                cbc_xmm!($fin, $fin0, $heads),
                e = in(reg) enc.as_ptr(),
                k = in(reg) k,
                kl = in(reg) k.add(16 * rounds),
                s = out(reg) _,
                t = out(reg) _,
                r = inout(reg) blocks % REGS => _,
                p = inout(reg) p => _,
                n = inout(reg) blocks / REGS => _,
                step = const 16 * REGS,
                inout("xmm13") c,
                out("xmm0") _, out("xmm1") _, out("xmm2") _, out("xmm3") _,
                out("xmm4") _, out("xmm5") _, out("xmm6") _, out("xmm7") _,
                out("xmm8") _, out("xmm9") _, out("xmm10") _, out("xmm11") _,
                out("xmm12") _, out("xmm14") _, out("xmm15") _,
                options(nostack),
            )
        };
    }
    // SAFETY: the caller guarantees AES-NI, the buffer extent and `dk`'s. The asm reads
    // `enc[0..=rounds]` and writes, reads and zeroes `dk[0..=rounds]` (`kl` is `dk[rounds]`;
    // the round keys past `kl` are never read: `rounds` stops at `kl`). A head of
    // `r = blocks % 12` blocks reads at most the first 12 blocks (inside, `blocks >= 12`) and
    // writes the first `r`; the loop then covers the remaining `12 * (blocks / 12)` blocks,
    // `blocks / 12 >= 1` iterations. With [`cbc_heads`] (AES-256), 1-4 left over and
    // `blocks >= 24`, two heads of 8 read and write the first 8 blocks, then read the next 8
    // and write `r + 4` of them (at least 20 blocks follow the first head), and the loop runs
    // `blocks / 12 - 1 >= 1` iterations. No stack; it clobbers only what it names.
    // IMPLEMENTATION NOTE: AES-128 runs the same `rounds` text, whose test of `{kl}` after
    // round 9 is a taken branch in every iteration: with rounds 1-9 alone (no branch, tried in
    // session 6) the loop measured 0.5-1% slower at 16 KiB and 1 MiB (Zen 3, `aesx bench
    // --backends aesni --sizes 1K,16K,1M --ops cbc-dec --keys 128`, three runs alternated:
    // 16 KiB 9.94-10.08 against 10.10-10.19 GB/s); aligning the loop (`.p2align 6`) did not
    // recover it. A front-end effect, not understood.
    // Two 8-block heads ([`cbc_heads`]) for AES-256 only. Session 11, Zen 4, `aesx bench
    // --backends aesni --ops cbc-dec --sizes 400,1K,4K,16K`, six runs alternated with the
    // 4-block head, best: AES-256 1 KiB 6.79 -> 7.82 GB/s, 4 KiB 7.96 -> 8.25, 16 KiB 1.007x;
    // AES-192 0.98-1.005x; AES-128 (its chaining XOR after the last round) 0.992-0.997x.
    unsafe {
        if rounds == 10 {
            run!(
                fin_after,
                fin0_after,
                heads!(cbc_head!(fin_after, fin0_after))
            )
        } else if rounds == 12 {
            run!(fin, fin0, heads!(cbc_head!(fin, fin0)))
        } else {
            run!(fin, fin0, cbc_heads!(fin, fin0))
        }
    }
    c
}

// ---------------------------------------------------------------------------------------------
// zmm (`vaes512` on AMD): the whole call in assembly.

/// The last round of zmm register `i >= 1`, its chaining value (the four ciphertext blocks
/// one block before it) folded into the last round key in zmm15, stored in place.
macro_rules! zfin {
    ($i:literal) => {
        concat!(
            "vmovdqu64 zmm15, zmmword ptr [{p} + 64*",
            $i,
            " - 16]\n",
            op2!(z, "pxor", "15", "12"),
            op2!(z, "aesdeclast", $i, "15"),
            st!(z, $i, "{p}", $i),
        )
    };
}

/// The last round of zmm register 0: its chaining value is the previous batch's last block
/// (the top 128 bits of zmm13) and its own first three ciphertext blocks, joined by VALIGNQ.
macro_rules! zfin0 {
    () => {
        concat!(
            "vmovdqu64 zmm15, zmmword ptr [{p}]\n",
            "valignq zmm15, zmm15, zmm13, 6\n",
            op2!(z, "pxor", "15", "12"),
            op2!(z, "aesdeclast", "0", "15"),
            st!(z, "0", "{p}", "0"),
        )
    };
}

/// [`zfin`] for a tail register `i >= 1`: the chaining value loaded under `[{c} + 8i]` (the
/// bytes of the four blocks before it that lie in the data), the result stored under
/// `[{m} + 8i]`.
macro_rules! zfin_m {
    ($i:literal) => {
        concat!(
            "kmovq k1, qword ptr [{c} + 8*",
            $i,
            "]\n",
            "vmovdqu8 zmm15{{k1}}{{z}}, zmmword ptr [{p} + 64*",
            $i,
            " - 16]\n",
            op2!(z, "pxor", "15", "12"),
            op2!(z, "aesdeclast", $i, "15"),
            zst_masked!($i),
        )
    };
}

/// [`zfin0`] for a tail (register 0 under `[{m}]`).
macro_rules! zfin0_m {
    () => {
        concat!(
            "kmovq k1, qword ptr [{m}]\n",
            "vmovdqu8 zmm15{{k1}}{{z}}, zmmword ptr [{p}]\n",
            "valignq zmm15, zmm15, zmm13, 6\n",
            op2!(z, "pxor", "15", "12"),
            op2!(z, "aesdeclast", "0", "15"),
            "vmovdqu8 zmmword ptr [{p}]{{k1}}, zmm0\n",
        )
    };
}

/// A zmm tail in registers `0` and `$d` (listed from the last down to 1): loaded under their
/// masks, the rounds, finished from the last to the first; then a jump to the end (label 5).
macro_rules! zcbc_tail {
    ($($d:literal)*) => {
        concat!(
            key!(z, "12", "{k}"),
            zld_masked!("0"),
            $(zld_masked!($d),)*
            rounds!(z, "aesdec"; "0" $($d)*),
            key!(z, "12", "{kl}"),
            $(zfin_m!($d),)*
            zfin0_m!(),
            "jmp 5f\n",
        )
    };
}

/// CBC decryption on zmm of `{n}` >= 0 iterations of 8 registers (32 blocks) at `{p}`, then
/// the rest (under 512 bytes) in 4 or 8 registers under byte masks, with the decryption
/// schedule derived into `{k}`..`{kl}` first and zeroed last, and VZEROALL (the data, the
/// round key in zmm12, the chaining blocks in zmm13-15). zmm13 carries the chaining block in
/// its top 128 bits (the IV broadcast on entry; then each batch's last ciphertext register,
/// read into zmm14 before the batch overwrites it).
macro_rules! cbc_zmm {
    () => {
        concat!(
            derive_dk!(),
            "test {n}, {n}\n",
            "jz 4f\n",
            "2:\n",
            key!(z, "12", "{k}"),
            ldw!(z, "0"),
            ldw!(z, "1"),
            ldw!(z, "2"),
            ldw!(z, "3"),
            ldw!(z, "4"),
            ldw!(z, "5"),
            ldw!(z, "6"),
            ldw!(z, "7"),
            ld!(z, "14", "{p}", "7"),
            rounds!(z, "aesdec"; "0" "1" "2" "3" "4" "5" "6" "7"),
            key!(z, "12", "{kl}"),
            zfin!("7"),
            zfin!("6"),
            zfin!("5"),
            zfin!("4"),
            zfin!("3"),
            zfin!("2"),
            zfin!("1"),
            zfin0!(),
            "vmovdqa64 zmm13, zmm14\n",
            "add {p}, 512\n",
            "dec {n}\n",
            "jnz 2b\n",
            "4:\n",
            "cmp qword ptr [{m}], 0\n",
            "je 5f\n",
            "cmp qword ptr [{m} + 32], 0\n",
            "je 6f\n",
            zcbc_tail!("7" "6" "5" "4" "3" "2" "1"),
            "6:\n",
            zcbc_tail!("3" "2" "1"),
            "5:\n",
            "vzeroall\n",
            zero_dk!(),
        )
    };
}

/// CBC decryption in place of `len` bytes (whole blocks) at `p` on zmm (`vaes512` on AMD),
/// all of it in this assembly ([`cbc_zmm`]): the decryption schedule derived from `enc` into
/// `dk` and zeroed again, 8 registers (32 blocks) an iteration, the rest in 4 or 8 registers
/// under AVX-512 byte masks, every vector register it used zeroed. `iv` is the chaining block
/// before the first; the caller keeps the last ciphertext block (the next IV) itself. Nothing
/// holding key material is left, so no stack wipe follows (`aesni::cbc_decrypt_nostack`).
///
/// IMPLEMENTATION NOTE (issue 13): as `ctr_asm::zmm_sel` and `ecb_asm::zmm_decrypt`: the
/// compiled zmm kernel is followed by the 1280-byte stack wipe. Measurements: README, session
/// 14.
///
/// # Safety
/// The CPU has AVX-512F/BW/VL and VAES; `p` is readable and writable for `len` bytes, `len` a
/// multiple of 16; `dk` is writable for `16 * (rounds + 1)` bytes.
#[inline(never)]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,vaes,aes,avx2,sse4.2")]
pub(crate) unsafe fn zmm(
    enc: &[[u8; 16]; 15],
    rounds: usize,
    iv: &[u8; 16],
    p: *mut u8,
    len: usize,
    dk: *mut [u8; 16],
) {
    use core::arch::x86_64::{_mm_loadu_si128, _mm512_broadcast_i32x4};
    debug_assert!(len.is_multiple_of(16) && matches!(rounds, 10 | 12 | 14));
    let k = dk.cast::<u8>();
    let m = super::zmm_tail_masks(len);
    // The chaining values' masks: register `i >= 1` reads from 16 bytes before it, so its
    // first 16 bytes are the last block of register `i - 1` and the other 48 its own first
    // three blocks.
    let c: [u64; 8] = core::array::from_fn(|i| {
        if i == 0 {
            0
        } else {
            m[i] << 16 | m[i - 1] >> 48
        }
    });
    // SAFETY: AVX-512F (the target features above); `iv` is 16 readable bytes.
    let chain = unsafe { _mm512_broadcast_i32x4(_mm_loadu_si128(iv.as_ptr().cast())) };
    // SAFETY: the caller guarantees the CPU features, the buffer extent and `dk`'s. The asm
    // reads `enc[0..=rounds]` and writes, reads and zeroes `dk[0..=rounds]`; the loop reads
    // and writes `p[..512 * (len / 512)]` (a chaining load of register `i >= 1` starts 16
    // bytes before it, inside the buffer; register 0's is in zmm13); the tail reads and writes
    // only the bytes of the last `len % 512` under their masks (the chaining loads' masks
    // cover the 16 bytes before each register only where those are data). No stack; it
    // clobbers only what it names.
    unsafe {
        asm!(
            cbc_zmm!(),
            e = in(reg) enc.as_ptr(),
            k = in(reg) k,
            kl = in(reg) k.add(16 * rounds),
            s = out(reg) _,
            t = out(reg) _,
            p = inout(reg) p => _,
            n = inout(reg) len / 512 => _,
            m = in(reg) m.as_ptr(),
            c = in(reg) c.as_ptr(),
            inout("zmm13") chain => _,
            out("zmm0") _, out("zmm1") _, out("zmm2") _, out("zmm3") _,
            out("zmm4") _, out("zmm5") _, out("zmm6") _, out("zmm7") _,
            out("zmm12") _, out("zmm14") _, out("zmm15") _,
            out("k1") _,
            options(nostack),
        );
    }
}
