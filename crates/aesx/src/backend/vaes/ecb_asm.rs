//! ECB encryption and decryption as inline assembly, the whole call: on zmm for `vaes512` on
//! AMD (`zmm_encrypt`, `zmm_decrypt`, at the end of this file: 8 registers an iteration, the
//! rest under AVX-512 byte masks), and on xmm (legacy SSE, for `aesni`) from 12 blocks on,
//! every key size, described here: in the shape of [`super::cbc_asm`]'s `xmm`
//! (12 registers in flight, the round key of each round in r12, the `blocks % 12` blocks that
//! do not fill an iteration first), so that no compiled code holds a round key and no stack
//! wipe follows (`aesni::encrypt_nostack`, `aesni::decrypt_nostack`).
//!
//! IMPLEMENTATION NOTE (issue 19): the compiled ECB kernels (`vaes::ecb_enc`/`ecb_dec` at xmm
//! width, 12 blocks in flight) are followed by the dispatcher's 1280-byte stack wipe, about
//! 20 ns a call on Zen 3, 1.2% of a 16 KiB call, and AES-128 ECB sat at 0.98-1.005x
//! RustCrypto's AES-NI backend, which runs at the xmm ceiling. Measurements: README, issue 19.
//!
//! ```text
//! r0-r11   the 12 data registers through the AES rounds
//! r12      round key of the current round (MOVDQU from the schedule)
//! ```
//!
//! Encryption reads the encryption schedule where it lies (the `Aes`); only xmm12 is zeroed at
//! the end. Decryption derives the equivalent inverse cipher's schedule into a local that only
//! this assembly writes, reads and zeroes ([`derive_dk`], [`zero_dk`]), as `cbc_asm::xmm`
//! does. At the end the data registers hold output blocks (and, after a head, outputs of
//! blocks the loop computes again), never a round key. No stack. Constant time: the loop
//! count, the head's length and the round count are public; no branch or address depends on
//! data or key.

use core::arch::asm;

/// Registers per iteration.
pub(crate) const REGS: usize = 12;

/// The last round (`$last` with the key in r12) of register `i`, stored in place.
macro_rules! lastst {
    ($w:ident, $last:literal, $i:literal) => {
        concat!(op2!($w, $last, $i, "12"), st!($w, $i, "{p}", $i))
    };
}

/// The first `{r}` blocks at `{p}` with `N` registers (`{r} <= N <= 12`; listed as `0` and
/// then `$d`, `N-1` down to 1), the rest of the buffer (at least 12 blocks) left for the loop:
/// registers `0..N` are loaded from the start of the buffer (all inside it), run through the
/// cipher, and only the first `{r}` stored; `{p}` moves past them. Ends with a jump to label 5
/// (the loop). Consumes `{r}`.
macro_rules! ecb_head {
    ($op:literal, $last:literal; $($d:literal)*) => {
        concat!(
            batch_rounds!(x, $op; $($d)*),
            op2!(x, $last, "0", "12"),
            $(op2!(x, $last, $d, "12"),)*
            store_first_r!($($d)*),
            "shl {r}, 4\n",
            "add {p}, {r}\n",
            "jmp 5f\n",
        )
    };
}

/// ECB of `{r} + 12 * {n}` blocks (`{n}` >= 1) at `{p}` with the schedule `{k}` .. `{kl}`:
/// [`ecb_head`] for the `{r}` blocks that do not fill an iteration (4, 8 or 12 registers, the
/// fewest that hold them), then `{n}` iterations of 12. Ends with xmm12 holding the last round
/// key.
macro_rules! ecb_xmm {
    ($op:literal, $last:literal) => {
        concat!(
            heads!(ecb_head!($op, $last)),
            "2:\n",
            batch_rounds!(x, $op; "1" "2" "3" "4" "5" "6" "7" "8" "9" "10" "11"),
            lastst!(x, $last, "0"),
            lastst!(x, $last, "1"),
            lastst!(x, $last, "2"),
            lastst!(x, $last, "3"),
            lastst!(x, $last, "4"),
            lastst!(x, $last, "5"),
            lastst!(x, $last, "6"),
            lastst!(x, $last, "7"),
            lastst!(x, $last, "8"),
            lastst!(x, $last, "9"),
            lastst!(x, $last, "10"),
            lastst!(x, $last, "11"),
            "add {p}, {step}\n",
            "dec {n}\n",
            "jnz 2b\n",
        )
    };
}

/// The whole call: `$text` (the asm) over `$blocks >= 12` blocks at `$p` with the schedule at
/// `$k` of `$rounds` rounds, and the extra operands `$extra` (decryption: `{e}`, `{s}`).
macro_rules! ecb_call {
    ($text:expr, $k:expr, $rounds:expr, $p:expr, $blocks:expr; $($extra:tt)*) => {
        asm!(
            $text,
            k = in(reg) $k,
            kl = in(reg) $k.add(16 * $rounds),
            t = out(reg) _,
            r = inout(reg) $blocks % REGS => _,
            p = inout(reg) $p => _,
            n = inout(reg) $blocks / REGS => _,
            step = const 16 * REGS,
            $($extra)*
            out("xmm0") _, out("xmm1") _, out("xmm2") _, out("xmm3") _,
            out("xmm4") _, out("xmm5") _, out("xmm6") _, out("xmm7") _,
            out("xmm8") _, out("xmm9") _, out("xmm10") _, out("xmm11") _,
            out("xmm12") _,
            options(nostack),
        )
    };
}

/// ECB encryption in place of `blocks >= 12` blocks at `p` with the encryption schedule `enc`
/// of `rounds` rounds, all of it in this assembly; xmm12, the only register that held a round
/// key, is zeroed before it ends.
///
/// # Safety
/// The CPU has AES-NI; `p` is readable and writable for `16 * blocks` bytes, `blocks >= 12`.
#[inline]
#[target_feature(enable = "aes,sse4.2")]
pub(crate) unsafe fn xmm_encrypt(enc: &[[u8; 16]; 15], rounds: usize, p: *mut u8, blocks: usize) {
    debug_assert!(blocks >= REGS && matches!(rounds, 10 | 12 | 14));
    let k = enc.as_ptr().cast::<u8>();
    // SAFETY: the caller guarantees AES-NI and the buffer extent. The asm reads
    // `enc[0..=rounds]` (`kl` is `enc[rounds]`; the round keys past it are never read). A head
    // of `r = blocks % 12` blocks reads at most the first 12 blocks (inside, `blocks >= 12`)
    // and writes the first `r`; the loop then covers the remaining `12 * (blocks / 12)`
    // blocks, `blocks / 12 >= 1` iterations. No stack; it clobbers only what it names.
    unsafe {
        ecb_call!(
            concat!(ecb_xmm!("aesenc", "aesenclast"), "pxor xmm12, xmm12\n"),
            k, rounds, p, blocks;
        )
    }
}

/// ECB decryption in place of `blocks >= 12` blocks at `p`, all of it in this assembly: the
/// decryption schedule derived from `enc` (the encryption schedule of `rounds` rounds) into
/// `dk`, the blocks, and `dk` and xmm12 zeroed again. No key material is left in `dk`, in a
/// register or on the stack.
///
/// # Safety
/// The CPU has AES-NI; `p` is readable and writable for `16 * blocks` bytes, `blocks >= 12`;
/// `dk` is writable for `16 * (rounds + 1)` bytes.
#[inline]
#[target_feature(enable = "aes,sse4.2")]
pub(crate) unsafe fn xmm_decrypt(
    enc: &[[u8; 16]; 15],
    rounds: usize,
    p: *mut u8,
    blocks: usize,
    dk: *mut [u8; 16],
) {
    debug_assert!(blocks >= REGS && matches!(rounds, 10 | 12 | 14));
    let k = dk.cast::<u8>();
    // SAFETY: as `xmm_encrypt`, and: the asm reads `enc[0..=rounds]` and writes, reads and
    // zeroes `dk[0..=rounds]`, which the caller provides.
    unsafe {
        ecb_call!(
            concat!(derive_dk!(), ecb_xmm!("aesdec", "aesdeclast"), zero_dk!()),
            k, rounds, p, blocks;
            e = in(reg) enc.as_ptr(),
            s = out(reg) _,
        )
    }
}

// ---------------------------------------------------------------------------------------------
// zmm (`vaes512` on AMD)

/// A zmm tail in the registers listed: loaded, the rounds (`$op`, `$last`), stored, each
/// under its mask; then a jump to the end (label 5).
macro_rules! zecb_tail {
    ($op:literal, $last:literal; $($r:literal)*) => {
        concat!(
            key!(z, "12", "{k}"),
            $(zld_masked!($r),)*
            rounds!(z, $op; $($r)*),
            key!(z, "12", "{kl}"),
            $(op2!(z, $last, $r, "12"), zst_masked!($r),)*
            "jmp 5f\n",
        )
    };
}

/// ECB on zmm of `{n}` >= 0 iterations of 8 registers (32 blocks) at `{p}`, then the rest
/// (under 512 bytes; the masks at `{m}`, the first zero where the message has ended) in the
/// fewest of 4, 6 or 8 registers, then VZEROALL (the data registers and zmm12, the round key).
macro_rules! ecb_zmm {
    ($op:literal, $last:literal) => {
        concat!(
            "test {n}, {n}\n",
            "jz 4f\n",
            "2:\n",
            batch_rounds!(z, $op; "1" "2" "3" "4" "5" "6" "7"),
            lastst!(z, $last, "0"),
            lastst!(z, $last, "1"),
            lastst!(z, $last, "2"),
            lastst!(z, $last, "3"),
            lastst!(z, $last, "4"),
            lastst!(z, $last, "5"),
            lastst!(z, $last, "6"),
            lastst!(z, $last, "7"),
            "add {p}, 512\n",
            "dec {n}\n",
            "jnz 2b\n",
            "4:\n",
            "cmp qword ptr [{m}], 0\n",
            "je 5f\n",
            "cmp qword ptr [{m} + 32], 0\n",
            "je 6f\n",
            "cmp qword ptr [{m} + 48], 0\n",
            "je 7f\n",
            zecb_tail!($op, $last; "0" "1" "2" "3" "4" "5" "6" "7"),
            "6:\n",
            zecb_tail!($op, $last; "0" "1" "2" "3"),
            "7:\n",
            zecb_tail!($op, $last; "0" "1" "2" "3" "4" "5"),
            "5:\n",
            "vzeroall\n",
        )
    };
}

/// The whole zmm call: `$text` over `$len` bytes at `$p` with the schedule at `$k` of
/// `$rounds` rounds, and the extra operands `$extra` (decryption: `{e}`, `{s}`).
macro_rules! zecb_call {
    ($text:expr, $k:expr, $rounds:expr, $p:expr, $len:expr; $($extra:tt)*) => {{
        let m = super::zmm_tail_masks($len);
        asm!(
            $text,
            k = in(reg) $k,
            kl = in(reg) $k.add(16 * $rounds),
            t = out(reg) _,
            p = inout(reg) $p => _,
            n = inout(reg) $len / 512 => _,
            m = in(reg) m.as_ptr(),
            $($extra)*
            out("zmm0") _, out("zmm1") _, out("zmm2") _, out("zmm3") _,
            out("zmm4") _, out("zmm5") _, out("zmm6") _, out("zmm7") _,
            out("zmm8") _, out("zmm9") _, out("zmm10") _, out("zmm11") _,
            out("zmm12") _, out("zmm13") _, out("zmm14") _, out("zmm15") _,
            out("k1") _,
            options(nostack),
        )
    }};
}

/// ECB encryption in place of `len` bytes (whole blocks) at `p` on zmm, all of it in this
/// assembly: 8 registers (32 blocks) an iteration, the rest in 4, 6 or 8 registers under byte
/// masks, each round key broadcast from the schedule into zmm12 before its round, and every
/// vector register it used zeroed at the end (VZEROALL). Nothing is written but the data, so no
/// stack wipe follows (`aesni::encrypt_nostack`).
///
/// IMPLEMENTATION NOTE (issue 13): as `ctr_asm::zmm_sel` for CTR: the compiled zmm kernel and
/// the 1280-byte wipe after it cost about 14 ns a call on Zen 4. Measurements: README,
/// "Session 13".
///
/// # Safety
/// The CPU has AVX-512F/BW/VL and VAES; `p` is readable and writable for `len` bytes, `len` a
/// multiple of 16.
#[inline(never)]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,vaes,aes,avx2,sse4.2")]
pub(crate) unsafe fn zmm_encrypt(enc: &[[u8; 16]; 15], rounds: usize, p: *mut u8, len: usize) {
    debug_assert!(len.is_multiple_of(16) && matches!(rounds, 10 | 12 | 14));
    let k = enc.as_ptr().cast::<u8>();
    // SAFETY: the caller guarantees the CPU features and the buffer extent. The asm reads
    // `enc[0..=rounds]` (`kl` is `enc[rounds]`; rounds 10..13 only when `kl` lies beyond
    // them) and the 8 masks; the loop covers `512 * (len / 512)` bytes and the tail's masked
    // loads and stores only the `len % 512` bytes after them. No stack; it clobbers only what
    // it names.
    unsafe {
        zecb_call!(
            ecb_zmm!("aesenc", "aesenclast"),
            k, rounds, p, len;
        )
    }
}

/// ECB decryption in place on zmm, as [`zmm_encrypt`]: the decryption schedule derived from
/// `enc` into `dk` first and `dk` zeroed again at the end ([`derive_dk`], [`zero_dk`], as
/// `xmm_decrypt`).
///
/// # Safety
/// As [`zmm_encrypt`]; `dk` is writable for `16 * (rounds + 1)` bytes.
#[inline(never)]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,vaes,aes,avx2,sse4.2")]
pub(crate) unsafe fn zmm_decrypt(
    enc: &[[u8; 16]; 15],
    rounds: usize,
    p: *mut u8,
    len: usize,
    dk: *mut [u8; 16],
) {
    debug_assert!(len.is_multiple_of(16) && matches!(rounds, 10 | 12 | 14));
    let k = dk.cast::<u8>();
    // SAFETY: as `zmm_encrypt`, and: the asm reads `enc[0..=rounds]` and writes, reads and
    // zeroes `dk[0..=rounds]`, which the caller provides.
    unsafe {
        zecb_call!(
            concat!(derive_dk!(), ecb_zmm!("aesdec", "aesdeclast"), zero_dk!()),
            k, rounds, p, len;
            e = in(reg) enc.as_ptr(),
            s = out(reg) _,
        )
    }
}
