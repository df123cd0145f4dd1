//! AES-NI on xmm registers (Intel, "Advanced Encryption Standard (AES) New Instructions Set",
//! Gueron, white paper 323641). Parallel modes keep 12 independent blocks in flight (ECB, CBC
//! decryption: `vaes::XMM_VECS`; CTR: the inline-assembly loop of `vaes::ctr_asm`): AESENC
//! has latency 4 and throughput 0.5 on Zen 2/3/4, so 8 blocks are the minimum that fills both
//! AES pipes and 12 leave slack.
//!
//! This module also owns the round-key layout shared with `vaes256` and `vaes512`, and the key
//! expansion for all three.
//!
//! Constant time: AES-NI executes in fixed time independent of data; every loop bound and
//! branch here depends only on lengths and the round count.

// Round loops index the key array by round number: clearer than zipped iterators here.
#![allow(clippy::needless_range_loop)]

use core::arch::x86_64::*;

/// Round keys for the hardware backends: `enc[0..=rounds]` for AESENC.
///
/// IMPLEMENTATION NOTE: the equivalent-inverse-cipher schedule for AESDEC
/// (`AESIMC(enc[rounds - i])`) is not stored: each decryption derives it, 9-13 independent
/// AESIMC at 2 per cycle (into registers, [`dec_keys`]; into a wiped local, [`dec_schedule`];
/// in the assembly paths into a local the assembly zeroes, or one round key at a time,
/// [`decrypt4`]). Storing it doubled the schedule, and key setup on this hardware is bound by
/// stores (initialise, expand, zeroize), not by the 60-cycle expansion chain; caching it on
/// first use cost key setup the same (session 6, README issue 19).
#[repr(C, align(16))]
pub(crate) struct Keys {
    pub(crate) enc: [[u8; 16]; 15],
    pub(crate) rounds: usize,
}

impl Drop for Keys {
    #[inline]
    fn drop(&mut self) {
        // Slots past `rounds` hold zeros, never key material.
        wipe_slots(&mut self.enc, self.rounds + 1);
    }
}

/// Overwrites `slots[..n]` (n <= 15) with zeros by stores the compiler cannot remove.
///
/// IMPLEMENTATION NOTE: key setup is bound by stores on Zen 3, not by the expansion chain: a
/// store holds its store-queue entry until it retires, which for a schedule waits for the whole
/// 60-cycle expansion, so the stores of one key setup (schedule, wipe, bookkeeping) decide how
/// many key setups the core overlaps (measured: the 15-store wipe cost 13 ns of 29 per
/// `Aes::new` + drop). With AVX (known from the cached plan) the wipe uses 32-byte stores:
/// 6 for an AES-128 schedule instead of 11. `zeroize` on byte arrays would issue one volatile
/// store per byte.
#[inline(always)]
pub(crate) fn wipe_slots(slots: &mut [[u8; 16]; 15], n: usize) {
    wipe_slots_with(slots, n, crate::backend::plan().avx())
}

/// Zeroes all 15 slots: seven 32-byte stores and one 16-byte store, no loop (with AVX; else
/// [`wipe_slots_with`]'s 16-byte stores).
///
/// IMPLEMENTATION NOTE (issue 13, session 29): what `Aes`'s drop (and [`DecSchedule`]'s,
/// which wipes all 15 slots too) runs. Key setups in a loop
/// overlap only as far as the next one's instructions fit in the out-of-order window behind
/// the current one's 60-72-cycle expansion chain, so every instruction between them counts:
/// the counted loop of [`wipe_slots_with`] took four per store (pointer, counter, branch).
/// Straight-line stores of all 15 slots (an AES-128 schedule's last four hold zeros; two
/// stores more) measured on Zen 3, `aesx-bench keysetup`, best of six alternated runs:
/// `Aes::new` + drop AES-128 14.8 -> 13.3 ns, AES-256 17.6 -> 16.2 ns. Tried in the same
/// session and not kept: the prefix XOR by two SHUFPS on a scratch register with a zero word
/// 0 (three instructions fewer per round key: AES-128 1% faster, AES-256 2% slower), and
/// "rotation frames" (the S-box input kept broadcast and byte-rotated per step, so each step's
/// chain is AESENCLAST + PXOR: AES-256 65 cycles of chain instead of 72, but 30 instructions
/// more; 18.9 ns against 18.0).
#[inline(always)]
pub(crate) fn wipe_all_slots_with(slots: &mut [[u8; 16]; 15], avx: bool) {
    if !avx {
        return wipe_slots_with(slots, 15, false);
    }
    // SAFETY: 7 * 32 + 16 = 240 bytes from `p`: the array. AVX is present (the plan says so).
    // As in `wipe_slots_with`: VEX.128 VPXOR clears ymm0, VZEROUPPER after.
    unsafe {
        core::arch::asm!(
            "vpxor xmm0, xmm0, xmm0",
            "vmovdqu ymmword ptr [{p}], ymm0",
            "vmovdqu ymmword ptr [{p} + 32], ymm0",
            "vmovdqu ymmword ptr [{p} + 64], ymm0",
            "vmovdqu ymmword ptr [{p} + 96], ymm0",
            "vmovdqu ymmword ptr [{p} + 128], ymm0",
            "vmovdqu ymmword ptr [{p} + 160], ymm0",
            "vmovdqu ymmword ptr [{p} + 192], ymm0",
            "vmovdqu xmmword ptr [{p} + 224], xmm0",
            "vzeroupper",
            p = in(reg) slots.as_mut_ptr(),
            out("xmm0") _,
            options(nostack),
        )
    };
    core::sync::atomic::compiler_fence(core::sync::atomic::Ordering::SeqCst);
}

/// [`wipe_slots`] with AVX known: 32-byte stores if `avx`.
#[inline(always)]
pub(crate) fn wipe_slots_with(slots: &mut [[u8; 16]; 15], n: usize, avx: bool) {
    let p = slots.as_mut_ptr();
    debug_assert!(n <= 15);
    if avx {
        // Whole 32-byte pairs up to slot n rounded up to even, but never past the array: 15
        // slots are 7 pairs and one slot.
        let pairs = n.div_ceil(2).min(7);
        // SAFETY: `pairs * 32 <= 224` bytes from `p` lie in the 240-byte array, and for
        // n == 15 the last 16 bytes at offset 224 too; AVX is present (the plan says so).
        // VEX.128 VPXOR zeroes ymm0's upper half; VZEROUPPER leaves no dirty upper state
        // for SSE code that follows. xmm0 is declared clobbered (so is ymm0 with it).
        unsafe {
            core::arch::asm!(
                "vpxor xmm0, xmm0, xmm0",
                "2:",
                "vmovdqu ymmword ptr [{p}], ymm0",
                "add {p}, 32",
                "dec {pairs}",
                "jnz 2b",
                "cmp {n}, 15",
                "jne 3f",
                "vmovdqu xmmword ptr [{p}], xmm0",
                "3:",
                "vzeroupper",
                p = inout(reg) p => _,
                pairs = inout(reg) pairs => _,
                n = in(reg) n,
                out("xmm0") _,
                options(nostack),
            )
        };
    } else {
        for i in 0..n {
            // SAFETY: `i < n <= 15`: slot `i` of the array, 16-byte aligned (every user of
            // this function keeps its slots in a `repr(align(16))` struct, at offset 0).
            unsafe { core::ptr::write_volatile(p.add(i).cast::<__m128i>(), _mm_setzero_si128()) };
        }
    }
    core::sync::atomic::compiler_fence(core::sync::atomic::Ordering::SeqCst);
}

#[inline(always)]
pub(crate) fn load(b: &[u8; 16]) -> __m128i {
    // SAFETY: `b` is 16 readable bytes; the load is unaligned.
    unsafe { _mm_loadu_si128(b.as_ptr().cast()) }
}

#[inline(always)]
pub(crate) fn store(b: &mut [u8; 16], v: __m128i) {
    // SAFETY: `b` is 16 writable bytes; the store is unaligned.
    unsafe { _mm_storeu_si128(b.as_mut_ptr().cast(), v) }
}

#[inline(always)]
pub(crate) fn load_at(buf: &[u8], i: usize) -> __m128i {
    load(buf[16 * i..16 * i + 16].try_into().unwrap())
}

#[inline(always)]
pub(crate) fn store_at(buf: &mut [u8], i: usize, v: __m128i) {
    store((&mut buf[16 * i..16 * i + 16]).try_into().unwrap(), v)
}

// ---------------------------------------------------------------------------------------------
// Key expansion.
//
// IMPLEMENTATION NOTE: each new round key is prefix_xor(prev) ^ broadcast(f(last word)), where
// prefix_xor(x) = [x0, x0^x1, x0^x1^x2, x0^x1^x2^x3]. The prefix XOR does not depend on f, so it
// runs in parallel with the S-box step and the serial chain per round is only f + one XOR.
// Two ways to compute f (SubWord(RotWord(w3)) ^ rcon, broadcast):
//   * `Assist`: AESKEYGENASSIST + PSHUFD. 4 + 1 cycles on Zen 4 (but 12-13 on Intel).
//   * `Enclast`: PSHUFB (rotate + broadcast w3) + AESENCLAST with rcon as the key; ShiftRows
//     is the identity on a block whose four columns are equal. 2 + 4 cycles on Zen 4.
// Both are measured by `aesx bench --ops keysetup-variants`; see the README. `expand` uses
// the faster for the CPU vendor.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Variant {
    Assist,
    Enclast,
}

/// The variant `expand` uses on this CPU: AESKEYGENASSIST is as cheap as AESENC on AMD, but
/// 3x slower on Intel cores, where AESENCLAST + PSHUFB wins. The vendor comes from the cached
/// detection (`cpu`): CPUID is a VM exit under a hypervisor (microseconds), far too slow per key.
pub(crate) fn preferred_variant() -> Variant {
    if crate::cpu::amd_like() {
        Variant::Assist
    } else {
        Variant::Enclast
    }
}

#[inline(always)]
pub(crate) fn expand(key: &[u8]) -> Keys {
    expand_with(key, preferred_variant())
}

#[inline(always)]
pub(crate) fn expand_with(key: &[u8], v: Variant) -> Keys {
    let mut k = Keys::ZERO;
    expand_into(key, v, &mut k);
    k
}

impl Keys {
    pub(crate) const ZERO: Keys = Keys {
        enc: [[0; 16]; 15],
        rounds: 0,
    };
}

/// Expands in place (the schedule is large; building it where it will live avoids copies).
#[inline(never)]
pub(crate) fn expand_into(key: &[u8], v: Variant, k: &mut Keys) {
    k.rounds = key.len() / 4 + 6;
    if crate::cpu::features().avx {
        // SAFETY: reached only through `Backend::{Aesni, Vaes256, Vaes512}`, whose availability
        // (AES-NI and SSE4.2) `Aes::with_backend` checked; AVX was just checked.
        unsafe { expand_hw_avx(key, v, k) }
    } else {
        // SAFETY: as above, without AVX.
        unsafe { expand_hw(key, v, k) }
    }
}

/// IMPLEMENTATION NOTE: the same code compiled with AVX uses three-operand VEX forms; the
/// register copies of the two-operand SSE forms sit on the serial chain and cost a cycle per
/// round (7 -> 6 cycles per AES-128 round key measured on Zen 4).
#[target_feature(enable = "aes,sse4.2,avx")]
fn expand_hw_avx(key: &[u8], v: Variant, k: &mut Keys) {
    expand_hw(key, v, k)
}

// ---------------------------------------------------------------------------------------------
// Key expansion inlined into the caller (what `Aes::new` runs).
//
// IMPLEMENTATION NOTE (issue 13, key setup as users call it): an out-of-line expansion writes
// the schedule through a pointer into a temporary, and the value then travels by copy into the
// `Result<Aes, Error>` and out of it into the user's variable (LLVM kept one or two 280-byte
// memcpy calls whatever the layout, and those 32-byte loads straddled the expansion's 16-byte
// stores: a store-forwarding stall each on Zen 3). A `#[target_feature]` function cannot be
// inlined into a user's function compiled without AES-NI, but inline assembly can: the whole
// AES-128 and AES-256 expansions are one `asm!` block each whose outputs are the round keys in
// xmm0..xmm14, so the schedule exists only in registers until it is stored, once, straight into
// the caller's `Aes`, and nothing is left anywhere else. Legacy SSE encodings (not VEX): the
// caller may have no AVX, and explicit registers xmm0..xmm15 keep LLVM from picking
// xmm16..xmm31 (which SSE cannot encode) when a user builds with AVX-512 enabled.
//
// Both expansion variants are here (see "Key expansion" above): round key i is
// prefix_xor(k[i-1 or i-2]) ^ f(k[i-1]), f = AESKEYGENASSIST + PSHUFD, or PSHUFB + AESENCLAST
// with the broadcast rcon from `EXPAND_TABLE` as the round key.

/// PSHUFB masks and AESENCLAST keys of the `Enclast` variant, 16-byte aligned (legacy SSE
/// memory operands must be): [rot+broadcast word 3], [broadcast word 3], rcon 1..10 broadcast
/// to all four words, zero.
#[repr(C, align(16))]
struct ExpandTable([[u8; 16]; 13]);

static EXPAND_TABLE: ExpandTable = {
    let mut t = [[0u8; 16]; 13];
    let mut i = 0;
    while i < 4 {
        t[0][4 * i] = 13;
        t[0][4 * i + 1] = 14;
        t[0][4 * i + 2] = 15;
        t[0][4 * i + 3] = 12;
        t[1][4 * i] = 12;
        t[1][4 * i + 1] = 13;
        t[1][4 * i + 2] = 14;
        t[1][4 * i + 3] = 15;
        i += 1;
    }
    let rcon = [0x01u8, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80, 0x1b, 0x36];
    let mut r = 0;
    while r < 10 {
        let mut w = 0;
        while w < 4 {
            t[2 + r][4 * w] = rcon[r];
            w += 1;
        }
        r += 1;
    }
    ExpandTable(t)
};

/// `xmm$d = prefix_xor(xmm$p)` with `xmm$t` as scratch (asm text).
macro_rules! asm_prefix {
    ($d:literal, $p:literal, $t:literal) => {
        concat!(
            "movdqa xmm",
            $d,
            ", xmm",
            $p,
            "\n",
            "movdqa xmm",
            $t,
            ", xmm",
            $p,
            "\n",
            "pslldq xmm",
            $t,
            ", 4\n",
            "pxor xmm",
            $d,
            ", xmm",
            $t,
            "\n",
            "movdqa xmm",
            $t,
            ", xmm",
            $d,
            "\n",
            "pslldq xmm",
            $t,
            ", 8\n",
            "pxor xmm",
            $d,
            ", xmm",
            $t,
            "\n",
        )
    };
}

/// `xmm$t = f(xmm$p)` broadcast: SubWord(RotWord(word 3)) ^ rcon (`rot`, rcon index `$r` /
/// immediate `$rc`) or SubWord(word 3) (`sub`), by AESKEYGENASSIST (`assist`) or PSHUFB +
/// AESENCLAST (`enclast`, table pointer in operand `tab`).
macro_rules! asm_f {
    (assist, rot, $t:literal, $p:literal, $r:literal, $rc:literal) => {
        concat!(
            "aeskeygenassist xmm",
            $t,
            ", xmm",
            $p,
            ", ",
            $rc,
            "\n",
            "pshufd xmm",
            $t,
            ", xmm",
            $t,
            ", 0xff\n",
        )
    };
    (assist, sub, $t:literal, $p:literal) => {
        concat!(
            "aeskeygenassist xmm",
            $t,
            ", xmm",
            $p,
            ", 0\n",
            "pshufd xmm",
            $t,
            ", xmm",
            $t,
            ", 0xaa\n",
        )
    };
    (enclast, rot, $t:literal, $p:literal, $r:literal, $rc:literal) => {
        concat!(
            "movdqa xmm",
            $t,
            ", xmm",
            $p,
            "\n",
            "pshufb xmm",
            $t,
            ", xmmword ptr [{tab}]\n",
            "aesenclast xmm",
            $t,
            ", xmmword ptr [{tab} + 32 + 16 * ",
            $r,
            "]\n",
        )
    };
    (enclast, sub, $t:literal, $p:literal) => {
        concat!(
            "movdqa xmm",
            $t,
            ", xmm",
            $p,
            "\n",
            "pshufb xmm",
            $t,
            ", xmmword ptr [{tab} + 16]\n",
            "aesenclast xmm",
            $t,
            ", xmmword ptr [{tab} + 192]\n",
        )
    };
}

/// AES-128 round key `$d` from `$d - 1`: f into xmm12 first (the long path), prefix with
/// xmm11.
macro_rules! asm128_round {
    ($v:ident, $d:literal, $p:literal, $r:literal, $rc:literal) => {
        concat!(
            asm_f!($v, rot, "12", $p, $r, $rc),
            asm_prefix!($d, $p, "11"),
            "pxor xmm",
            $d,
            ", xmm12\n",
        )
    };
}

/// AES-256 round key `$d` from `$d - 2` (prefix) and `$d - 1` (f), scratch xmm15.
macro_rules! asm256_round {
    ($v:ident, rot, $d:literal, $p2:literal, $p1:literal, $r:literal, $rc:literal) => {
        concat!(
            asm_prefix!($d, $p2, "15"),
            asm_f!($v, rot, "15", $p1, $r, $rc),
            "pxor xmm",
            $d,
            ", xmm15\n",
        )
    };
    ($v:ident, sub, $d:literal, $p2:literal, $p1:literal) => {
        concat!(
            asm_prefix!($d, $p2, "15"),
            asm_f!($v, sub, "15", $p1),
            "pxor xmm",
            $d,
            ", xmm15\n",
        )
    };
}

macro_rules! asm128 {
    ($v:ident) => {
        concat!(
            "movdqu xmm0, xmmword ptr [{key}]\n",
            "/* table: {tab} */\n",
            asm128_round!($v, "1", "0", "0", "0x01"),
            asm128_round!($v, "2", "1", "1", "0x02"),
            asm128_round!($v, "3", "2", "2", "0x04"),
            asm128_round!($v, "4", "3", "3", "0x08"),
            asm128_round!($v, "5", "4", "4", "0x10"),
            asm128_round!($v, "6", "5", "5", "0x20"),
            asm128_round!($v, "7", "6", "6", "0x40"),
            asm128_round!($v, "8", "7", "7", "0x80"),
            asm128_round!($v, "9", "8", "8", "0x1b"),
            asm128_round!($v, "10", "9", "9", "0x36"),
        )
    };
}

/// An AES-256 `rot` step by AESKEYGENASSIST that also leaves `v = prefix ^ AESKEYGENASSIST(..)`
/// in xmm15 for the `sub` step after it ([`asm256_sub_v`]): word 3 of `v` is word 3 of the
/// round key, and AESKEYGENASSIST reads no other word for the result the `sub` step uses, so
/// the PSHUFD broadcast and the XOR that finish the round key are off the chain. `$n` is the
/// next round key's register, scratch until that step writes it.
///
/// IMPLEMENTATION NOTE (issue 13): the expansion is one serial chain of S-box steps, each
/// AESKEYGENASSIST (latency 4), PSHUFD and PXOR: 6 cycles, 78 for AES-256's 13 steps; this
/// takes one cycle off each `rot` step (a `sub` step's result lands in word 2, so it needs
/// its PSHUFD). Zen 4, `aesx-bench keysetup`, 8 alternated runs: `Aes::new` + drop 15.9 ->
/// 15.2 ns. (The same chain in VEX three-operand form, without the register copies,
/// measured 15.3. For AES-128, ten `rot` steps, the same chain measured slower: 12.2 ->
/// 12.9 ns, an instruction more a step where the chain does not bound the loop.)
macro_rules! asm256_rot_v {
    ($d:literal, $p2:literal, $p1:literal, $rc:literal, $n:literal) => {
        concat!(
            asm_prefix!($d, $p2, "15"),
            "aeskeygenassist xmm15, xmm",
            $p1,
            ", ",
            $rc,
            "\n",
            "pshufd xmm",
            $n,
            ", xmm15, 0xff\n",
            "pxor xmm15, xmm",
            $d,
            "\n",
            "pxor xmm",
            $d,
            ", xmm",
            $n,
            "\n",
        )
    };
}

/// The `sub` step after [`asm256_rot_v`], from `v` in xmm15; `$s` is scratch (the next round
/// key's register).
macro_rules! asm256_sub_v {
    ($d:literal, $p2:literal, $s:literal) => {
        concat!(
            asm_prefix!($d, $p2, $s),
            "aeskeygenassist xmm15, xmm15, 0\n",
            "pshufd xmm15, xmm15, 0xaa\n",
            "pxor xmm",
            $d,
            ", xmm15\n",
        )
    };
}

/// AES-256 by AESKEYGENASSIST with the shortened chain ([`asm256_rot_v`]).
macro_rules! asm256_assist {
    () => {
        concat!(
            "movdqu xmm0, xmmword ptr [{key}]\n",
            "movdqu xmm1, xmmword ptr [{key} + 16]\n",
            "/* table: {tab} */\n",
            asm256_rot_v!("2", "0", "1", "0x01", "3"),
            asm256_sub_v!("3", "1", "4"),
            asm256_rot_v!("4", "2", "3", "0x02", "5"),
            asm256_sub_v!("5", "3", "6"),
            asm256_rot_v!("6", "4", "5", "0x04", "7"),
            asm256_sub_v!("7", "5", "8"),
            asm256_rot_v!("8", "6", "7", "0x08", "9"),
            asm256_sub_v!("9", "7", "10"),
            asm256_rot_v!("10", "8", "9", "0x10", "11"),
            asm256_sub_v!("11", "9", "12"),
            asm256_rot_v!("12", "10", "11", "0x20", "13"),
            asm256_sub_v!("13", "11", "14"),
            asm256_round!(assist, rot, "14", "12", "13", "6", "0x40"),
        )
    };
}

/// The AES-256 expansion block of a variant: AESKEYGENASSIST with the shortened chain
/// ([`asm256_assist`]), or PSHUFB + AESENCLAST step by step.
macro_rules! asm256 {
    (assist) => {
        asm256_assist!()
    };
    ($v:ident) => {
        concat!(
            "movdqu xmm0, xmmword ptr [{key}]\n",
            "movdqu xmm1, xmmword ptr [{key} + 16]\n",
            "/* table: {tab} */\n",
            asm256_round!($v, rot, "2", "0", "1", "0", "0x01"),
            asm256_round!($v, sub, "3", "1", "2"),
            asm256_round!($v, rot, "4", "2", "3", "1", "0x02"),
            asm256_round!($v, sub, "5", "3", "4"),
            asm256_round!($v, rot, "6", "4", "5", "2", "0x04"),
            asm256_round!($v, sub, "7", "5", "6"),
            asm256_round!($v, rot, "8", "6", "7", "3", "0x08"),
            asm256_round!($v, sub, "9", "7", "8"),
            asm256_round!($v, rot, "10", "8", "9", "4", "0x10"),
            asm256_round!($v, sub, "11", "9", "10"),
            asm256_round!($v, rot, "12", "10", "11", "5", "0x20"),
            asm256_round!($v, sub, "13", "11", "12"),
            asm256_round!($v, rot, "14", "12", "13", "6", "0x40"),
        )
    };
}

/// Runs one expansion block; `$n` outputs in xmm0.., the rest of xmm0..xmm15 clobbered.
macro_rules! run128 {
    ($v:ident, $key:expr) => {{
        #[allow(clippy::type_complexity)]
        let (k0, k1, k2, k3, k4, k5, k6, k7, k8, k9, k10): (
            __m128i, __m128i, __m128i, __m128i, __m128i, __m128i, __m128i, __m128i, __m128i,
            __m128i, __m128i,
        );
        // SAFETY: (all expansion blocks) the caller guarantees AES-NI and SSE4.2 (which
        // include SSSE3's PSHUFB); `{key}` points to at least 16 (AES-128) / 32 (AES-256)
        // readable bytes; `{tab}` is `EXPAND_TABLE`, 16-byte aligned and 208 bytes long,
        // which covers every offset used. Registers only; no stack, flags untouched.
        unsafe {
            core::arch::asm!(
                asm128!($v),
                key = in(reg) $key.as_ptr(),
                tab = in(reg) &EXPAND_TABLE,
                out("xmm0") k0, out("xmm1") k1, out("xmm2") k2, out("xmm3") k3,
                out("xmm4") k4, out("xmm5") k5, out("xmm6") k6, out("xmm7") k7,
                out("xmm8") k8, out("xmm9") k9, out("xmm10") k10,
                out("xmm11") _, out("xmm12") _,
                options(nostack, readonly, preserves_flags, pure),
            )
        };
        let z = zero_reg();
        [k0, k1, k2, k3, k4, k5, k6, k7, k8, k9, k10, z, z, z, z]
    }};
}

macro_rules! run256 {
    ($v:ident, $key:expr) => {{
        #[allow(clippy::type_complexity)]
    let (k0, k1, k2, k3, k4, k5, k6, k7, k8, k9, k10, k11, k12, k13, k14): (
            __m128i, __m128i, __m128i, __m128i, __m128i, __m128i, __m128i, __m128i, __m128i,
            __m128i, __m128i, __m128i, __m128i, __m128i, __m128i,
        );
        // SAFETY: see `run128`.
        unsafe {
            core::arch::asm!(
                asm256!($v),
                key = in(reg) $key.as_ptr(),
                tab = in(reg) &EXPAND_TABLE,
                out("xmm0") k0, out("xmm1") k1, out("xmm2") k2, out("xmm3") k3,
                out("xmm4") k4, out("xmm5") k5, out("xmm6") k6, out("xmm7") k7,
                out("xmm8") k8, out("xmm9") k9, out("xmm10") k10, out("xmm11") k11,
                out("xmm12") k12, out("xmm13") k13, out("xmm14") k14,
                out("xmm15") _,
                options(nostack, readonly, preserves_flags, pure),
            )
        };
        [k0, k1, k2, k3, k4, k5, k6, k7, k8, k9, k10, k11, k12, k13, k14]
    }};
}

/// A zero register (baseline SSE2; no target feature needed).
#[inline(always)]
fn zero_reg() -> __m128i {
    // SAFETY: SSE2 is part of the x86_64 baseline.
    unsafe { _mm_setzero_si128() }
}

/// Loads a whole schedule into registers (forced loads: the copy cannot become a `memcpy`).
#[inline(always)]
fn load_regs(k: &Keys) -> [__m128i; 15] {
    #[allow(clippy::type_complexity)]
    let (k0, k1, k2, k3, k4, k5, k6, k7, k8, k9, k10, k11, k12, k13, k14): (
        __m128i,
        __m128i,
        __m128i,
        __m128i,
        __m128i,
        __m128i,
        __m128i,
        __m128i,
        __m128i,
        __m128i,
        __m128i,
        __m128i,
        __m128i,
        __m128i,
        __m128i,
    );
    // SAFETY: `k.enc` is 240 readable bytes at a 16-byte aligned address (`repr(align(16))`,
    // first field of a `repr(C)` struct); MOVDQA is SSE2.
    unsafe {
        core::arch::asm!(
            "movdqa xmm0, xmmword ptr [{p}]",
            "movdqa xmm1, xmmword ptr [{p} + 16]",
            "movdqa xmm2, xmmword ptr [{p} + 32]",
            "movdqa xmm3, xmmword ptr [{p} + 48]",
            "movdqa xmm4, xmmword ptr [{p} + 64]",
            "movdqa xmm5, xmmword ptr [{p} + 80]",
            "movdqa xmm6, xmmword ptr [{p} + 96]",
            "movdqa xmm7, xmmword ptr [{p} + 112]",
            "movdqa xmm8, xmmword ptr [{p} + 128]",
            "movdqa xmm9, xmmword ptr [{p} + 144]",
            "movdqa xmm10, xmmword ptr [{p} + 160]",
            "movdqa xmm11, xmmword ptr [{p} + 176]",
            "movdqa xmm12, xmmword ptr [{p} + 192]",
            "movdqa xmm13, xmmword ptr [{p} + 208]",
            "movdqa xmm14, xmmword ptr [{p} + 224]",
            p = in(reg) k.enc.as_ptr(),
            out("xmm0") k0, out("xmm1") k1, out("xmm2") k2, out("xmm3") k3,
            out("xmm4") k4, out("xmm5") k5, out("xmm6") k6, out("xmm7") k7,
            out("xmm8") k8, out("xmm9") k9, out("xmm10") k10, out("xmm11") k11,
            out("xmm12") k12, out("xmm13") k13, out("xmm14") k14,
            options(nostack, readonly, preserves_flags),
        )
    };
    [
        k0, k1, k2, k3, k4, k5, k6, k7, k8, k9, k10, k11, k12, k13, k14,
    ]
}

/// The schedule of `key` (16, 24 or 32 bytes) as a value built from registers: inlined into
/// the caller, the round keys are stored once, into wherever the caller keeps the result.
/// AES-192 expands out of line into a local that is wiped on drop, then goes through registers
/// the same way.
///
/// # Safety
/// The CPU has AES-NI and SSE4.2 (`Backend::Aesni` is available).
#[inline(always)]
pub(crate) unsafe fn expand_inline(key: &[u8], v: Variant) -> Keys {
    let enc = match (key.len(), v) {
        (16, Variant::Assist) => run128!(assist, key),
        (16, Variant::Enclast) => run128!(enclast, key),
        (32, Variant::Assist) => run256!(assist, key),
        (32, Variant::Enclast) => run256!(enclast, key),
        _ => {
            // Expanded in a local, then through registers like the others. The local is wiped
            // here, inline (the cached plan: `plan()` ran before any key setup), and not by its
            // `Drop`, whose `plan()` may be a call: with the 15 round keys live in registers
            // around it, LLVM spilled them to the stack (`tests/residue.rs`, construction
            // only, found AES-192's round key 12 there).
            let mut tmp = Keys::ZERO;
            expand_into(key, v, &mut tmp);
            let regs = load_regs(&tmp);
            wipe_slots_with(&mut tmp.enc, 13, crate::backend::plan_cached().avx());
            core::mem::forget(tmp);
            regs
        }
    };
    Keys {
        // SAFETY: `[__m128i; 15]` and `[[u8; 16]; 15]` have the same size, and every bit
        // pattern is a valid value of both.
        enc: unsafe { core::mem::transmute::<[__m128i; 15], [[u8; 16]; 15]>(enc) },
        rounds: key.len() / 4 + 6,
    }
}

pub(crate) fn from_round_keys(enc: &[[u8; 16]]) -> Keys {
    let mut k = Keys::ZERO;
    k.rounds = enc.len() - 1;
    k.enc[..enc.len()].copy_from_slice(enc);
    k
}

#[inline]
#[target_feature(enable = "aes,sse4.2")]
fn expand_hw(key: &[u8], v: Variant, k: &mut Keys) {
    match (key.len(), v) {
        (16, Variant::Assist) => expand128::<false>(key, &mut k.enc),
        (16, Variant::Enclast) => expand128::<true>(key, &mut k.enc),
        (24, _) => expand192(key, &mut k.enc),
        (32, Variant::Assist) => expand256::<false>(key, &mut k.enc),
        (32, Variant::Enclast) => expand256::<true>(key, &mut k.enc),
        _ => unreachable!("key length checked by Aes::with_backend"),
    }
}

#[inline]
#[target_feature(enable = "aes,sse4.2")]
fn prefix_xor(x: __m128i) -> __m128i {
    let x = _mm_xor_si128(x, _mm_slli_si128::<4>(x));
    _mm_xor_si128(x, _mm_slli_si128::<8>(x))
}

/// SubWord(RotWord(word 3 of x)) ^ rcon, broadcast to all four words.
#[inline]
#[target_feature(enable = "aes,sse4.2")]
fn rot_sub<const ENCLAST: bool, const RC: i32>(x: __m128i) -> __m128i {
    if ENCLAST {
        let rot3 = _mm_setr_epi8(
            13, 14, 15, 12, 13, 14, 15, 12, 13, 14, 15, 12, 13, 14, 15, 12,
        );
        _mm_aesenclast_si128(_mm_shuffle_epi8(x, rot3), _mm_set1_epi32(RC))
    } else {
        _mm_shuffle_epi32::<0xff>(_mm_aeskeygenassist_si128::<RC>(x))
    }
}

/// SubWord(word 3 of x), broadcast (the extra step of AES-256).
#[inline]
#[target_feature(enable = "aes,sse4.2")]
fn sub<const ENCLAST: bool>(x: __m128i) -> __m128i {
    if ENCLAST {
        let w3 = _mm_setr_epi8(
            12, 13, 14, 15, 12, 13, 14, 15, 12, 13, 14, 15, 12, 13, 14, 15,
        );
        _mm_aesenclast_si128(_mm_shuffle_epi8(x, w3), _mm_setzero_si128())
    } else {
        _mm_shuffle_epi32::<0xaa>(_mm_aeskeygenassist_si128::<0>(x))
    }
}

#[inline]
#[target_feature(enable = "aes,sse4.2")]
fn step128<const E: bool, const RC: i32>(prev: __m128i) -> __m128i {
    _mm_xor_si128(prefix_xor(prev), rot_sub::<E, RC>(prev))
}

#[inline]
#[target_feature(enable = "aes,sse4.2")]
fn expand128<const E: bool>(key: &[u8], rk: &mut [[u8; 16]; 15]) {
    let mut k = load(key.try_into().unwrap());
    store(&mut rk[0], k);
    macro_rules! r {
        ($i:expr, $rc:expr) => {
            k = step128::<E, $rc>(k);
            store(&mut rk[$i], k);
        };
    }
    r!(1, 0x01);
    r!(2, 0x02);
    r!(3, 0x04);
    r!(4, 0x08);
    r!(5, 0x10);
    r!(6, 0x20);
    r!(7, 0x40);
    r!(8, 0x80);
    r!(9, 0x1b);
    r!(10, 0x36);
}

#[inline]
#[target_feature(enable = "aes,sse4.2")]
fn expand256<const E: bool>(key: &[u8], rk: &mut [[u8; 16]; 15]) {
    let mut a = load(key[..16].try_into().unwrap());
    let mut b = load(key[16..].try_into().unwrap());
    store(&mut rk[0], a);
    store(&mut rk[1], b);
    macro_rules! r {
        ($i:expr, $rc:expr) => {
            a = _mm_xor_si128(prefix_xor(a), rot_sub::<E, $rc>(b));
            store(&mut rk[$i], a);
        };
        ($i:expr, $rc:expr, both) => {
            r!($i, $rc);
            b = _mm_xor_si128(prefix_xor(b), sub::<E>(a));
            store(&mut rk[$i + 1], b);
        };
    }
    r!(2, 0x01, both);
    r!(4, 0x02, both);
    r!(6, 0x04, both);
    r!(8, 0x08, both);
    r!(10, 0x10, both);
    r!(12, 0x20, both);
    r!(14, 0x40);
}

/// AES-192: six key words per step, `a` (words 6i..6i+3) and `c` (words 6i+4, 6i+5, low half),
/// cut into 16-byte round keys in registers: every two steps give three, `a_2j`,
/// `[c_2j | a_2j+1 low]` and `[a_2j+1 high | c_2j+1]`.
///
/// IMPLEMENTATION NOTE (session 28): this went through a byte buffer (24-byte pieces written,
/// 16-byte round keys read back across them: a failed store-to-load forwarding each) and
/// zeroized that buffer byte by byte; `Aes::new` for AES-192 took 82 ns on Zen 3, against
/// 23 ns for RustCrypto's `Aes192::new` (`aesx-bench keysetup --keys 192`).
#[inline]
#[target_feature(enable = "aes,sse4.2")]
fn expand192(key: &[u8], rk: &mut [[u8; 16]; 15]) {
    let mut a = load(key[..16].try_into().unwrap()); // words 0..3
    // Words 4, 5 in the low half (an 8-byte load: nothing past the key is read).
    // SAFETY: `key` has 24 bytes (the caller's length check), so bytes 16..24 are readable.
    let mut c = unsafe { _mm_loadl_epi64(key[16..24].as_ptr().cast()) };
    // One step: the next six words from the last six.
    macro_rules! step {
        ($rc:expr) => {{
            // f = SubWord(RotWord(w5)) ^ rcon, broadcast
            let f = _mm_shuffle_epi32::<0x55>(_mm_aeskeygenassist_si128::<$rc>(c));
            a = _mm_xor_si128(prefix_xor(a), f);
            let t = _mm_shuffle_epi32::<0xff>(a);
            // words 4, 5 (low 64 bits): [w4 ^ t, w5 ^ w4 ^ t]
            c = _mm_xor_si128(_mm_xor_si128(c, _mm_slli_si128::<4>(c)), t);
            (a, c)
        }};
    }
    // Round keys 3j, 3j + 1 and 3j + 2 from steps 2j (`a0`, `c0`) and 2j + 1.
    macro_rules! three {
        ($j:expr, $a0:expr, $c0:expr, $rc:expr) => {{
            let (a1, c1) = step!($rc);
            store(&mut rk[3 * $j], $a0);
            store(&mut rk[3 * $j + 1], _mm_unpacklo_epi64($c0, a1));
            store(
                &mut rk[3 * $j + 2],
                _mm_castpd_si128(_mm_shuffle_pd::<0b01>(
                    _mm_castsi128_pd(a1),
                    _mm_castsi128_pd(c1),
                )),
            );
        }};
    }
    let (a0, c0) = (a, c);
    three!(0, a0, c0, 0x01);
    let (a2, c2) = step!(0x02);
    three!(1, a2, c2, 0x04);
    let (a4, c4) = step!(0x08);
    three!(2, a4, c4, 0x10);
    let (a6, c6) = step!(0x20);
    three!(3, a6, c6, 0x40);
    let (a8, _) = step!(0x80);
    store(&mut rk[12], a8);
}

// ---------------------------------------------------------------------------------------------
// Block kernels. `NR` (10/12/14) is a const so the round loops unroll fully.

/// The equivalent-inverse-cipher round keys for AESDEC, derived in registers:
/// `[enc[NR], AESIMC(enc[NR-1]), ..., AESIMC(enc[1]), enc[0]]`. (The RustCrypto trait
/// backend's; the kernels here derive theirs into a [`DecSchedule`].)
#[inline]
#[target_feature(enable = "aes,sse4.2")]
#[cfg_attr(not(feature = "cipher"), allow(dead_code))]
pub(crate) fn dec_keys<const NR: usize>(rk: &[[u8; 16]; 15]) -> [__m128i; 15] {
    let mut k = [_mm_setzero_si128(); 15];
    k[0] = load(&rk[NR]);
    for i in 1..NR {
        k[i] = _mm_aesimc_si128(load(&rk[NR - i]));
    }
    k[NR] = load(&rk[0]);
    k
}

/// The equivalent-inverse-cipher schedule for AESDEC in memory, for kernels that load a round
/// key per round: `[enc[NR], AESIMC(enc[NR-1]), ..., AESIMC(enc[1]), enc[0]]`. Wiped when
/// dropped, so decryption leaves no derived schedule on the stack.
#[repr(C, align(16))]
pub(crate) struct DecSchedule(pub(crate) [[u8; 16]; 15]);

impl Drop for DecSchedule {
    #[inline]
    fn drop(&mut self) {
        wipe_all_slots_with(&mut self.0, crate::backend::plan().avx());
    }
}

/// Derives the [`DecSchedule`] of `rk`. Safety: the CPU has AES-NI.
#[inline(always)]
pub(crate) unsafe fn dec_schedule<const NR: usize>(rk: &Keys) -> DecSchedule {
    let mut d = DecSchedule([[0; 16]; 15]);
    d.0[0] = rk.enc[NR];
    for i in 1..NR {
        // SAFETY: AES-NI, which the caller's CPU has.
        store(&mut d.0[i], unsafe {
            _mm_aesimc_si128(load(&rk.enc[NR - i]))
        });
    }
    d.0[NR] = rk.enc[0];
    d
}

/// Bytes below which CBC decryption on `vaes512` (AMD) runs in the zmm assembly; from there on
/// the compiled zmm kernel (and its stack wipe).
///
/// IMPLEMENTATION NOTE (session 14, Zen 4, `aesx bench --ops cbc-dec --sizes 400,1K,4K,16K,1M
/// --backends vaes512`, five runs alternated with the compiled kernel for every size): the
/// assembly is 1.12x at 1 KiB (AES-128 15.7 -> 17.6 GB/s, AES-256 11.5 -> 12.9), 1.01-1.08x
/// at 4 KiB, but 0.98-0.99x at 16 KiB and 0.86-0.96x at 1 MiB: the compiled loop keeps every
/// round key in zmm16-31, where the assembly broadcasts one per round, and from 16 KiB its
/// 1280-byte wipe costs less than that. Not tuned further.
const ZMM_CBC_MAX: usize = 8192;

/// CBC decryption on the `aesni` backend of at least [`cbc_asm::REGS`] (12) blocks, or on
/// `vaes512` on AMD below [`ZMM_CBC_MAX`] bytes (the dispatcher gives up to 20 blocks to
/// `cbc_decrypt_small` first), entirely in inline assembly ([`cbc_asm::xmm`],
/// `cbc_asm::zmm`); returns false, doing nothing, otherwise (then the dispatcher runs
/// [`cbc_decrypt`]).
///
/// IMPLEMENTATION NOTE (issue 19): the compiled kernels are followed by a stack wipe, because
/// LLVM may spill a round key to their frames. Here no compiled code ever holds a round key:
/// the assembly derives the decryption schedule into a local that only it writes and reads,
/// and zeroes that local, xmm12 and xmm15 (the registers that held keys) before it ends. So
/// no stack wipe follows, and the per-call cost is 9-13 AESIMC and two passes of 11-15
/// stores. Measured on Zen 3 (README, issue 19): the 1280-byte stack wipe alone cost about
/// 20 ns a call, 1.2% of a 16 KiB decryption.
pub(crate) fn cbc_decrypt_nostack(
    backend: crate::Backend,
    k: &Keys,
    iv: &mut [u8; 16],
    buf: &mut [u8],
) -> bool {
    use super::vaes::cbc_asm;
    if backend == crate::Backend::Vaes512 && crate::cpu::amd_like() && buf.len() < ZMM_CBC_MAX {
        let n = buf.len();
        if n == 0 {
            return true;
        }
        // The next IV: the last ciphertext block, read before it is decrypted in place.
        let mut last = [0u8; 16];
        last.copy_from_slice(&buf[n - 16..]);
        let mut dk = core::mem::MaybeUninit::<[__m128i; 15]>::uninit();
        // SAFETY: `Keys` used with `Vaes512` exist only where AVX-512F/BW/VL and VAES do
        // (`is_available`); `buf` holds whole blocks (the mode layer passes whole blocks);
        // `dk` has 15 >= rounds + 1 slots.
        unsafe {
            cbc_asm::zmm(
                &k.enc,
                k.rounds,
                iv,
                buf.as_mut_ptr(),
                n,
                dk.as_mut_ptr().cast(),
            )
        };
        *iv = last;
        return true;
    }
    if backend != crate::Backend::Aesni || buf.len() < 16 * cbc_asm::REGS {
        return false;
    }
    // Written, read and zeroed by the assembly only; never read here. 16-byte aligned (no
    // round-key load crosses a cache line).
    let mut dk = core::mem::MaybeUninit::<[__m128i; 15]>::uninit();
    // SAFETY: `Keys` of this layout exist only for backends whose CPU has AES-NI and SSE4.2
    // (see "Safe entry points" below); `buf` holds `buf.len() / 16 >= 12` whole blocks (the
    // mode layer passes whole blocks), read and written in place; `iv` is 16 bytes; `dk` has
    // 15 >= rounds + 1 slots.
    unsafe {
        let c = _mm_loadu_si128(iv.as_ptr().cast());
        let c = cbc_asm::xmm(
            &k.enc,
            k.rounds,
            c,
            buf.as_mut_ptr(),
            buf.len() / 16,
            dk.as_mut_ptr().cast(),
        );
        _mm_storeu_si128(iv.as_mut_ptr().cast(), c);
    }
    true
}

/// ECB encryption on the `aesni` backend of at least [`ecb_asm::REGS`] (12) blocks, or on
/// `vaes512` on AMD of any length (the dispatcher gives up to 12 blocks to `encrypt_small`
/// first), entirely in inline assembly ([`ecb_asm::xmm_encrypt`], `ecb_asm::zmm_encrypt`);
/// returns false, doing nothing, otherwise (then the dispatcher runs [`encrypt_blocks`]). As
/// [`cbc_decrypt_nostack`], no compiled code holds a round key, so no stack wipe follows.
///
/// [`ecb_asm::REGS`]: super::vaes::ecb_asm::REGS
/// [`ecb_asm::xmm_encrypt`]: super::vaes::ecb_asm::xmm_encrypt
pub(crate) fn encrypt_nostack(backend: crate::Backend, k: &Keys, buf: &mut [u8]) -> bool {
    use super::vaes::ecb_asm;
    if backend == crate::Backend::Vaes512 && crate::cpu::amd_like() {
        // SAFETY: `Keys` used with `Vaes512` exist only where AVX-512F/BW/VL and VAES do
        // (`is_available`); `buf` holds whole blocks (the mode layer passes whole blocks).
        unsafe { ecb_asm::zmm_encrypt(&k.enc, k.rounds, buf.as_mut_ptr(), buf.len()) };
        return true;
    }
    if backend != crate::Backend::Aesni || buf.len() < 16 * ecb_asm::REGS {
        return false;
    }
    // SAFETY: `Keys` of this layout exist only for backends whose CPU has AES-NI and SSE4.2
    // (see "Safe entry points" below); `buf` holds `buf.len() / 16 >= 12` whole blocks (the
    // mode layer passes whole blocks), read and written in place.
    unsafe { ecb_asm::xmm_encrypt(&k.enc, k.rounds, buf.as_mut_ptr(), buf.len() / 16) };
    true
}

/// ECB decryption on the `aesni` backend of at least 12 blocks, or on `vaes512` on AMD,
/// entirely in inline assembly ([`ecb_asm::xmm_decrypt`], `ecb_asm::zmm_decrypt`, which derive
/// the decryption schedule into a local of this frame that only they write, read and zero);
/// false, doing nothing, otherwise.
///
/// [`ecb_asm::xmm_decrypt`]: super::vaes::ecb_asm::xmm_decrypt
pub(crate) fn decrypt_nostack(backend: crate::Backend, k: &Keys, buf: &mut [u8]) -> bool {
    use super::vaes::ecb_asm;
    let zmm = backend == crate::Backend::Vaes512 && crate::cpu::amd_like();
    if !zmm && (backend != crate::Backend::Aesni || buf.len() < 16 * ecb_asm::REGS) {
        return false;
    }
    let mut dk = core::mem::MaybeUninit::<[__m128i; 15]>::uninit();
    if zmm {
        // SAFETY: as in [`encrypt_nostack`]; `dk` has 15 >= rounds + 1 slots.
        unsafe {
            ecb_asm::zmm_decrypt(
                &k.enc,
                k.rounds,
                buf.as_mut_ptr(),
                buf.len(),
                dk.as_mut_ptr().cast(),
            )
        };
        return true;
    }
    // SAFETY: as [`encrypt_nostack`]; `dk` has 15 >= rounds + 1 slots, 16-byte aligned.
    unsafe {
        ecb_asm::xmm_decrypt(
            &k.enc,
            k.rounds,
            buf.as_mut_ptr(),
            buf.len() / 16,
            dk.as_mut_ptr().cast(),
        )
    };
    true
}

/// Runs `$body` with `NR` bound to the schedule's round count as a const.
macro_rules! by_rounds {
    ($rounds:expr, $f:ident ( $($a:expr),* )) => {
        match $rounds {
            10 => $f::<10>($($a),*),
            12 => $f::<12>($($a),*),
            _ => $f::<14>($($a),*),
        }
    };
}

#[target_feature(enable = "aes,sse4.2")]
fn cbc_enc<const NR: usize>(rk: &Keys, iv: &mut [u8; 16], buf: &mut [u8]) {
    use super::vaes::Vector;
    // Round keys are loaded where they are used (`Vector::round_key`), never copied to the
    // stack; the loads are independent of the chain, so they do not lengthen it.
    let key = |r: usize| {
        // SAFETY: the target features above (AES-NI, SSE4.2) include what `round_key` needs.
        unsafe { <__m128i as Vector>::round_key(&rk.enc[r]) }
    };
    let mut c = load(iv);
    // IMPLEMENTATION NOTE: the plaintext block and round key 0 are combined before the chain
    // needs them, so the serial path per block is the 10-14 AES rounds plus one XOR.
    for i in 0..buf.len() / 16 {
        let p = _mm_xor_si128(load_at(buf, i), key(0));
        let mut x = _mm_xor_si128(c, p);
        for r in 1..NR {
            x = _mm_aesenc_si128(x, key(r));
        }
        c = _mm_aesenclast_si128(x, key(NR));
        store_at(buf, i, c);
    }
    store(iv, c);
}

// CTR counter blocks without carry logic in the hot loop.
//
// IMPLEMENTATION NOTE: the counter block may be secret (SSH derives it from the key exchange),
// so no branch or memory index may depend on it, yet it must count mod 2^128. Per-vector
// 128-bit adds (add, unsigned compare, carry into the high half) cost 5-7 vector ops per
// vector, and those ops compete with AESENC for the same FP pipes. Instead, with batches of
// `n` blocks (a power of two, 8..=256), split the first counter `c = a0 + r`, `a0 = c & !(n-1)`,
// `r = c & (n-1)`. Block `k` (0 <= k < n) of batch `j` is
//   `a + r + k`, a = a0 + j*n, and since 0 <= r + k < 2n:
//   `= a | u`           if u = r + k < n, or
//   `= (a + n) | (u - n)` otherwise,
// where `|` is an OR into the low log2(n) bits that `a` and `a + n` leave zero. In block
// (big-endian) byte order those bits are the low bits of byte 15, so with
//   A  = bswap(a) ^ k0                         (per batch)
//   D' = bswap(a) ^ bswap(a + n) | low bits    (per batch; D is zero in the low bits)
//   W_k = all-ones if u >= n else zero, with the low bits of byte 15 replaced by u mod n
//                                                (per call: r is the same in every batch)
// the whitened AES input of block `k` is `A ^ (D' & W_k)`: in the low bits D' is one, giving
// k0 ^ (u mod n); elsewhere it picks bswap(a + n) where the block crossed into the next
// aligned run. The exact 128-bit work is two add/adc pairs per batch on the integer ALUs; the
// per-block cost is an AND and an XOR (one VPTERNLOGQ per vector with AVX-512).

/// The two 64-bit halves `(low, high)` of the block-order (big-endian) bytes of counter `c`,
/// as `_mm_set_epi64x(high, low)` wants them.
#[inline(always)]
pub(crate) fn ctr_block(c: u128) -> (i64, i64) {
    (
        ((c >> 64) as u64).swap_bytes() as i64,
        (c as u64).swap_bytes() as i64,
    )
}

/// `(A, D')` halves for the batch starting at aligned counter `a` (see above); `n` is the
/// batch size in blocks. `A` is returned without the k0 whitening.
#[inline(always)]
pub(crate) fn ctr_batch_words(a: u128, n: u64) -> ((i64, i64), (i64, i64)) {
    let (lo, hi) = ctr_block(a);
    let (nlo, nhi) = ctr_block(a.wrapping_add(n as u128));
    let low_bits = ((n - 1) << 56) as i64;
    ((lo, hi), (lo ^ nlo, (hi ^ nhi) | low_bits))
}

/// `(low, high)` halves of `W_k` for `u = r + k` (0 <= u < 2n), batch size `n` blocks.
#[inline(always)]
fn ctr_select_word(u: u64, n: u64) -> (i64, i64) {
    // u >> log2(n) is 0 or 1 (a constant shift once inlined, never a division); negated, the
    // all-zeros / all-ones selector.
    let m = 0u64.wrapping_sub(u >> n.trailing_zeros());
    let low_bits = (n - 1) << 56;
    (m as i64, ((m & !low_bits) | ((u << 56) & low_bits)) as i64)
}

// The whole-block kernels: the width-generic bodies of `vaes` at xmm width (one block a
// register; 12 in flight), compiled with AES-NI + SSE4.2 only; CTR's main loop is the
// inline-assembly one of `vaes::ctr_asm` (its tails the generic 8-block kernel).
//
// IMPLEMENTATION NOTE (issue 19): 8-12 blocks and 11-15 round keys do not fit in 16 xmm
// registers. Left to itself LLVM keeps the keys and serialises the blocks, or spills; here each
// round's key is loaded right before its AESENCs ([`Vector::round_key`], a forced MOVDQU), so
// the blocks + 1 key stay in registers, the chains stay interleaved (latency 4-7 on Skylake,
// Haswell and Zen 2/3 needs >= 4-8 in flight) and no round key is copied to the stack. Why 12
// rather than 8 for ECB and CBC decryption: `vaes::XMM_VECS`.

#[target_feature(enable = "aes,sse4.2")]
fn x_ecb_enc<const NR: usize>(k: &Keys, buf: &mut [u8]) {
    // SAFETY: the target features above.
    unsafe { super::vaes::ecb_enc::<__m128i, NR, { super::vaes::XMM_VECS }>(k, buf) }
}
#[target_feature(enable = "aes,sse4.2")]
fn x_ecb_dec<const NR: usize>(k: &Keys, buf: &mut [u8]) {
    // SAFETY: the target features above.
    unsafe { super::vaes::ecb_dec::<__m128i, NR, { super::vaes::XMM_VECS }>(k, buf) }
}
#[target_feature(enable = "aes,sse4.2")]
fn x_cbc_dec<const NR: usize>(k: &Keys, iv: &mut [u8; 16], buf: &mut [u8]) {
    // SAFETY: the target features above.
    unsafe { super::vaes::cbc_dec::<__m128i, NR, { super::vaes::XMM_VECS }>(k, iv, buf) }
}
#[target_feature(enable = "aes,sse4.2")]
fn x_ctr<const NR: usize>(k: &Keys, c: u128, buf: &mut [u8]) {
    let p = buf.as_mut_ptr();
    // SAFETY: the target features above; `p` is `buf`, read and written in place.
    unsafe { super::vaes::ctr_b2b::<__m128i, NR>(k, c, p, p, buf.len()) }
}
#[target_feature(enable = "aes,sse4.2")]
fn x_ctr_b2b<const NR: usize>(k: &Keys, c: u128, src: &[u8], dst: &mut [u8]) {
    debug_assert_eq!(src.len(), dst.len());
    let len = src.len().min(dst.len());
    // SAFETY: the target features above; `src` and `dst` are distinct borrows (disjoint) of at
    // least `len` bytes.
    unsafe { super::vaes::ctr_b2b::<__m128i, NR>(k, c, src.as_ptr(), dst.as_mut_ptr(), len) }
}

impl super::vaes::Vector for __m128i {
    const BLOCKS: usize = 1;

    #[inline(always)]
    unsafe fn load(p: *const u8) -> Self {
        // SAFETY: the caller passes 16 readable bytes.
        unsafe { _mm_loadu_si128(p.cast()) }
    }
    #[inline(always)]
    unsafe fn store(p: *mut u8, v: Self) {
        // SAFETY: the caller passes 16 writable bytes.
        unsafe { _mm_storeu_si128(p.cast(), v) }
    }
    #[inline(always)]
    unsafe fn load_fresh(p: *const u8) -> Self {
        let v: __m128i;
        // SAFETY: the caller passes 16 readable bytes; MOVDQU (SSE2) reads exactly those.
        // `readonly` without `pure`: the load stays where it is written.
        unsafe {
            core::arch::asm!(
                "movdqu {v}, xmmword ptr [{p}]",
                v = out(xmm_reg) v,
                p = in(reg) p,
                options(nostack, preserves_flags, readonly),
            )
        };
        v
    }
    #[inline(always)]
    unsafe fn load_part(_: *const u8, _: usize) -> Self {
        unreachable!("a one-block register is never partial")
    }
    #[inline(always)]
    unsafe fn store_part(_: *mut u8, _: usize, _: Self) {
        unreachable!("a one-block register is never partial")
    }
    #[inline(always)]
    unsafe fn round_key(k: &[u8; 16]) -> Self {
        let v: __m128i;
        // SAFETY: `k` is 16 readable bytes; MOVDQU (SSE2, baseline on x86_64) reads exactly
        // those. `readonly` without `pure`: the load stays where it is written.
        unsafe {
            core::arch::asm!(
                "movdqu {v}, xmmword ptr [{p}]",
                v = out(xmm_reg) v,
                p = in(reg) k.as_ptr(),
                options(nostack, preserves_flags, readonly),
            )
        };
        v
    }
    #[inline(always)]
    unsafe fn splat(x: __m128i) -> Self {
        x
    }
    #[inline(always)]
    unsafe fn splat_qwords(q: &[u64; 2]) -> Self {
        // Two MOVDDUP loads and a blend (no GPR-to-vector shuffles on the AES pipes of Zen).
        // SAFETY: SSE4.1 (`pblendw`), SSE3 (`movddup`), which the caller's CPU has (SSE4.2).
        unsafe { _mm_blend_epi16::<0xF0>(qword_dup(&q[0]), qword_dup(&q[1])) }
    }
    #[inline(always)]
    unsafe fn zero() -> Self {
        // SAFETY: SSE2.
        unsafe { _mm_setzero_si128() }
    }
    #[inline(always)]
    unsafe fn xor(a: Self, b: Self) -> Self {
        // SAFETY: SSE2.
        unsafe { _mm_xor_si128(a, b) }
    }
    #[inline(always)]
    unsafe fn xor_and(a: Self, b: Self, c: Self) -> Self {
        // SAFETY: SSE2.
        unsafe { _mm_xor_si128(a, _mm_and_si128(b, c)) }
    }
    #[inline(always)]
    unsafe fn aesenc(x: Self, k: Self) -> Self {
        // SAFETY: AES-NI.
        unsafe { _mm_aesenc_si128(x, k) }
    }
    #[inline(always)]
    unsafe fn aesenclast(x: Self, k: Self) -> Self {
        // SAFETY: AES-NI.
        unsafe { _mm_aesenclast_si128(x, k) }
    }
    #[inline(always)]
    unsafe fn aesdec(x: Self, k: Self) -> Self {
        // SAFETY: AES-NI.
        unsafe { _mm_aesdec_si128(x, k) }
    }
    #[inline(always)]
    unsafe fn aesdeclast(x: Self, k: Self) -> Self {
        // SAFETY: AES-NI.
        unsafe { _mm_aesdeclast_si128(x, k) }
    }
    #[inline(always)]
    unsafe fn prev_blocks(prev: Self, _cur: Self) -> Self {
        prev
    }
    #[inline(always)]
    unsafe fn ctr_select(r: u64, i: usize, n: u64) -> Self {
        let (lo, hi) = ctr_select_word(r.wrapping_add(i as u64), n);
        // SAFETY: SSE2.
        unsafe { _mm_set_epi64x(hi, lo) }
    }
    #[inline(always)]
    unsafe fn clmul<const IMM: i32>(a: Self, b: Self) -> Self {
        // SAFETY: PCLMULQDQ (the caller's CPU has it).
        unsafe { _mm_clmulepi64_si128::<IMM>(a, b) }
    }
    #[inline(always)]
    unsafe fn shuffle_bytes(a: Self, idx: Self) -> Self {
        // SAFETY: SSSE3.
        unsafe { _mm_shuffle_epi8(a, idx) }
    }
    #[inline(always)]
    unsafe fn add32(a: Self, b: Self) -> Self {
        // SAFETY: SSE2.
        unsafe { _mm_add_epi32(a, b) }
    }
    #[inline(always)]
    unsafe fn swap_halves(a: Self) -> Self {
        // SAFETY: SSE2.
        unsafe { _mm_shuffle_epi32::<0x4e>(a) }
    }
    #[inline(always)]
    unsafe fn zext128(x: __m128i) -> Self {
        x
    }
    #[inline(always)]
    unsafe fn fold128(v: Self) -> __m128i {
        v
    }
    #[inline(always)]
    unsafe fn load_key(p: *const u8) -> Self {
        // SAFETY: the caller passes 16 readable bytes.
        unsafe { _mm_loadu_si128(p.cast()) }
    }
}

/// MOVDDUP from memory (a load), kept in place like `Vector::round_key`: both qwords = `*q`.
#[inline(always)]
unsafe fn qword_dup(q: &u64) -> __m128i {
    let v: __m128i;
    // SAFETY: `q` is 8 readable bytes and MOVDDUP reads exactly those (SSE3, which the
    // caller's CPU has).
    unsafe {
        core::arch::asm!(
            "movddup {v}, qword ptr [{p}]",
            v = out(xmm_reg) v,
            p = in(reg) q as *const u64,
            options(nostack, preserves_flags, readonly),
        )
    };
    v
}

/// Bytes of stack [`wipe_stack`] clears after building a GHASH key (and, until session 9,
/// after the `vaes512` kernels of the old zmm source, which measured 1424 B deep).
pub(crate) const WIPE: usize = 1536;

/// Overwrites with zeros the `WIPE` bytes of stack below the caller's frame, where the kernel
/// the caller just returned from kept its spill slots. IMPLEMENTATION NOTE: the kernels load
/// every round key from the schedule where it is used, but LLVM may still spill a key register
/// (AES-256 has 15 keys for 16 xmm registers); whatever it spilled lies in the dead frame
/// below the caller, which this call's own frame now covers.
#[inline(always)]
pub(crate) fn wipe_stack() {
    wipe_below::<{ WIPE / 16 }>();
    not_a_tail_call();
}

/// The stack wipe after the zmm kernels of `vaes512` ([`WIPE_XY`] bytes: they write at most
/// 1152 B, `backend::stack_depth`), which also zeroes zmm16-31.
///
/// # Safety
/// The CPU must have AVX-512F.
#[inline(always)]
pub(crate) unsafe fn wipe_stack_zmm() {
    // SAFETY: the caller's check.
    unsafe { zero_zmm16_31() };
    wipe_stack_xy();
}

/// An empty `asm!` statement, placed after each call of [`wipe_below`] so that the call is not
/// the caller's last instruction.
///
/// IMPLEMENTATION NOTE (session 8): the wipe covers the stack below the frame it is called
/// from, where the kernel the same function just called kept its spill slots. As the last
/// call of a dispatching function, LLVM emitted it as a tail jump (`jmp wipe_below`, 30-odd
/// of them in the `aesx` binary), which pops the dispatcher's frame first: the wipe then ran
/// from the dispatcher's caller, as much higher as the dispatcher's frame is large, and missed
/// the kernel's deepest bytes. `tests/residue.rs` found the last round key of AES-256 left by
/// `gcm_aesni::open` (called from `backend::gcm_open`, a 992-byte frame, from
/// `GcmDecryptor::update`) once an unrelated change moved the layout; without the jump the
/// wipe runs where it was meant to.
#[inline(always)]
fn not_a_tail_call() {
    // SAFETY: an empty assembly statement: no instruction, no register, no memory. Not
    // `pure`, so it stays after the call.
    unsafe { core::arch::asm!("", options(nostack, nomem, preserves_flags)) }
}

/// Bytes of stack [`wipe_stack_xy`] clears after the `aesni` and `vaes256` ECB/CBC/CTR
/// kernels: more than their measured depth (at most 1016 B on Zen 3, release build, every key
/// size and 0-100 blocks, the CTR kernels deepest: the asm loop's 384 bytes of counter slots
/// share a frame with the tail kernel's selectors; 744 B before that loop;
/// `backend::stack_depth::kernels_stay_within_their_wipes` fails if one comes within 64 bytes
/// of this). The zmm kernels of `vaes512` too ([`wipe_stack_zmm`]: at most 1184 B on an
/// Intel AVX-512 guest since its CTR reads and writes separate buffers, the same test).
pub(crate) const WIPE_XY: usize = 1280;

/// [`wipe_stack`] over [`WIPE_XY`] bytes.
#[inline(always)]
pub(crate) fn wipe_stack_xy() {
    wipe_below::<{ WIPE_XY / 16 }>();
    not_a_tail_call();
}

/// Bytes of stack [`wipe_stack_gcm`] clears: more than the deepest stack any GCM kernel
/// writes (measured by painting the stack, `backend::stack_depth`, release build on Zen 3,
/// including the test's own call frame: `gcm_aesni::small` 584 B, the `vaes` ymm seal/open
/// 576, `gcm_aesni` seal/open 528, `gcm_aesni::finish` 456, the ymm GHASH 136, `clmul::ghash`
/// 40). That test fails if a kernel comes within 64 bytes of this.
pub(crate) const GCM_WIPE: usize = 768;

/// [`wipe_stack`] over [`GCM_WIPE`] bytes, after the GCM kernels (GHASH of AAD, the whole
/// blocks of seal/open, the short-message path, the end of a message). A store-bound loop:
/// the full 1.5 KiB wipe was a quarter of a 16-byte seal and 10% of a 1 KiB one. Until
/// session 4 `gcm_finish` kept the full wipe because `tests/residue.rs` found round keys 1-1.25
/// KiB below the caller without it; their source was the `AesGcm` construction (since
/// session 4 built in place in its heap block, `backend::GcmKeys::new`), not a kernel.
#[inline(always)]
pub(crate) fn wipe_stack_gcm() {
    wipe_below::<{ GCM_WIPE / 16 }>();
    not_a_tail_call();
}

/// Bytes of stack [`wipe_stack_soft`] clears after the `soft` and `vpaes` kernels: more than
/// their measured depth (at most 1640 B, `soft` CBC decryption; `vpaes` CTR and CBC
/// decryption 1512; `backend::stack_depth`, release build, Intel AVX-512 guest).
pub(crate) const SOFT_WIPE: usize = 2048;

/// The short wipe after `soft` and `vpaes` key setup and calls of up to 3 blocks (measured
/// at most 944 B: `soft` CBC decryption of 1-3 blocks; key setup at most 648 B).
pub(crate) const SOFT_WIPE_SMALL: usize = 1152;

/// [`wipe_stack`] over [`SOFT_WIPE_SMALL`] bytes if `small`, else [`SOFT_WIPE`].
#[inline(always)]
pub(crate) fn wipe_stack_soft(small: bool) {
    if small {
        wipe_below::<{ SOFT_WIPE_SMALL / 16 }>();
    } else {
        wipe_below::<{ SOFT_WIPE / 16 }>();
    }
    not_a_tail_call();
}

/// Bytes of stack [`wipe_stack_soft_gcm`] clears after the software GHASH kernels' streams and
/// key setup (at most 3744 B deep) and the generic GCM path of `soft` and `vpaes` with those
/// streams (AES by ECB of counter blocks below the 2 KiB of stream state: what it leaves goes
/// down to 4480 B). `backend::stack_depth`, release build, Intel AVX-512 guest; its
/// `entry_points_leave_nothing_on_the_stack` fails if this is too short.
pub(crate) const SOFT_GCM_WIPE: usize = 5120;

/// [`wipe_stack`] over [`SOFT_GCM_WIPE`] bytes.
#[inline(always)]
pub(crate) fn wipe_stack_soft_gcm() {
    wipe_below::<{ SOFT_GCM_WIPE / 16 }>();
    not_a_tail_call();
}

/// `pxor xmmN, xmmN` for each register number listed (asm text).
macro_rules! zero_xmm {
    ($($n:literal)*) => {
        concat!($("pxor xmm", $n, ", xmm", $n, "\n",)*)
    };
}

/// Zeros `B` 16-byte blocks of stack below the caller's frame, then the vector registers
/// xmm0-15 (ymm0-15 where the CPU has AVX): its own frame is a pad of that size, written with
/// stores the compiler cannot remove. Not inlined, so the pad lies below the caller (each `B`
/// is its own function).
///
/// The registers: the compiled kernels return with round keys (and GHASH key powers) still in
/// vector registers, which the code after them need not overwrite for a long time and which
/// the kernel saves into a signal frame on the user stack if a signal arrives meanwhile
/// (`backend::tests::kernels_leave_no_round_key_in_registers` found a round key in xmm2 after
/// a 13-block CTR call on `aesni`). With AVX one VZEROALL clears ymm0-15; without, sixteen
/// PXOR zeroing idioms. zmm16-31, where the zmm kernels keep round keys and key powers and
/// which VZEROALL does not touch, are zeroed by [`wipe_stack_zmm`] and after the zmm GCM
/// kernel ([`zero_zmm16_31`]), not here: the xmm and ymm kernels never use them.
///
/// IMPLEMENTATION NOTE: fifteen VEX `vpxor xmmN, xmmN, xmmN` and a VZEROUPPER (what zeroes
/// the same registers in the obvious way) made every ECB, CTR and CBC call 12-14 ns slower on
/// Zen 3 (1 KiB ECB on `vaes256` 76.5 ns against 62.7, from a crate using aesx, best of eight
/// alternated runs), though they cost 0.5 ns in a C loop after VAES work; VZEROALL costs
/// nothing measurable there (62.7 ns).
///
/// IMPLEMENTATION NOTE: the wipe is bound by stores. Where the CPU has AVX (known from the
/// cached plan, which exists once a hardware schedule does) the pad is written with 32-byte
/// stores, else with 16-byte ones. Measured on Zen 3 (`rustc -O` loop, best of 30 x 100 000
/// calls): 1536 B 29.8 ns with 16-byte stores, 15.2 ns with 32-byte ones, 51.9 ns with
/// `rep stosb` (its start-up alone about 35 ns: 38.8 ns for 256 B); 768 B 14.9 / 7.7 / 44.4.
/// The pad keeps the 16-byte alignment (and so the same frame) either way: the 32-byte stores
/// are unaligned `vmovdqu`. The AVX loop does four stores an iteration and starts on a 32-byte
/// boundary (`.p2align 5`; the padding runs once, before it): a one-store loop's speed
/// depended on where the linker put it, and a 16-byte GCM seal on Zen 3 read 3-8% faster
/// with the loop aligned (`scripts/ab.sh -o seal`, both layouts, session 31); CTR level.
#[inline(never)]
fn wipe_below<const B: usize>() {
    const { assert!(B >= 8 && B.is_multiple_of(8)) };
    let mut pad = core::mem::MaybeUninit::<[__m128i; B]>::uninit();
    let p = pad.as_mut_ptr().cast::<__m128i>();
    if crate::backend::plan_cached().avx() {
        // SAFETY: `B / 8` iterations of four 32-byte stores from `p` cover exactly the
        // `16 * B` bytes of `pad`; AVX is present (the plan says so). VZEROALL zeroes ymm0-15
        // (no dirty upper state is left for SSE code that follows); xmm0-15 (and ymm0-15 with
        // them) are declared clobbered. Not `pure`: the stores are never removed.
        unsafe {
            core::arch::asm!(
                "vpxor xmm0, xmm0, xmm0",
                ".p2align 5",
                "2:",
                "vmovdqu ymmword ptr [{p}], ymm0",
                "vmovdqu ymmword ptr [{p} + 32], ymm0",
                "vmovdqu ymmword ptr [{p} + 64], ymm0",
                "vmovdqu ymmword ptr [{p} + 96], ymm0",
                // + 128 as a subtraction of -128: an 8-bit immediate.
                "sub {p}, -128",
                "dec {n}",
                "jnz 2b",
                "vzeroall",
                p = inout(reg) p => _,
                n = inout(reg) B / 8 => _,
                out("xmm0") _, out("xmm1") _, out("xmm2") _, out("xmm3") _,
                out("xmm4") _, out("xmm5") _, out("xmm6") _, out("xmm7") _,
                out("xmm8") _, out("xmm9") _, out("xmm10") _, out("xmm11") _,
                out("xmm12") _, out("xmm13") _, out("xmm14") _, out("xmm15") _,
                options(nostack),
            )
        };
    } else {
        for i in 0..B {
            // SAFETY: `p.add(i)` is inside `pad`, aligned for `__m128i`; SSE2 is baseline on
            // x86_64. Volatile: the stores are not removed although `pad` is never read.
            unsafe { core::ptr::write_volatile(p.add(i), _mm_setzero_si128()) };
        }
        // SAFETY: register zeroing only (SSE2, baseline); every register written is declared
        // clobbered.
        unsafe {
            core::arch::asm!(
                zero_xmm!("0" "1" "2" "3" "4" "5" "6" "7" "8" "9" "10" "11" "12" "13" "14" "15"),
                out("xmm0") _, out("xmm1") _, out("xmm2") _, out("xmm3") _,
                out("xmm4") _, out("xmm5") _, out("xmm6") _, out("xmm7") _,
                out("xmm8") _, out("xmm9") _, out("xmm10") _, out("xmm11") _,
                out("xmm12") _, out("xmm13") _, out("xmm14") _, out("xmm15") _,
                options(nostack, nomem, preserves_flags),
            )
        };
    }
    core::sync::atomic::compiler_fence(core::sync::atomic::Ordering::SeqCst);
}

/// `vpxord xmmN, xmmN, xmmN` (EVEX: zeroes all of zmmN) for each register number listed.
macro_rules! zero_zmm {
    ($($n:literal)*) => {
        concat!($("vpxord xmm", $n, ", xmm", $n, ", xmm", $n, "\n",)*)
    };
}

/// Zeroes zmm16-31. A function of its own compiled with AVX-512F, so that the registers can be
/// named as clobbers in every build (outside such a function they cannot be operands); from
/// the callers, which lack the feature, it is a call.
///
/// # Safety
/// The CPU must have AVX-512F.
#[target_feature(enable = "avx512f")]
pub(crate) fn zero_zmm16_31() {
    // SAFETY: register zeroing only (AVX-512F, enabled on this function); every register
    // written is declared clobbered.
    unsafe {
        core::arch::asm!(
            zero_zmm!("16" "17" "18" "19" "20" "21" "22" "23" "24" "25" "26" "27" "28" "29" "30" "31"),
            out("xmm16") _, out("xmm17") _, out("xmm18") _, out("xmm19") _,
            out("xmm20") _, out("xmm21") _, out("xmm22") _, out("xmm23") _,
            out("xmm24") _, out("xmm25") _, out("xmm26") _, out("xmm27") _,
            out("xmm28") _, out("xmm29") _, out("xmm30") _, out("xmm31") _,
            options(nostack, nomem, preserves_flags),
        )
    };
}

// ---------------------------------------------------------------------------------------------
// Small messages: up to 12-24 blocks, keys never leave the schedule.
//
// IMPLEMENTATION NOTE (issue 13 small messages, issue 14.2 key residue): the kernels above are
// compiled code; LLVM may spill a round key to their stack frame, so every call is followed by
// `wipe_stack` (1.5 KiB of stores, about 20 ns: as much as the whole AES work of a 16-byte
// message). For up to four blocks this one `asm!` block does the whole cipher, each round key
// loaded from the schedule into one register (xmm4) right before its AESENCs and that register
// zeroed at the end: nothing is written to the stack (`nostack`, no memory output), so there
// is nothing to wipe. Four blocks always: AESENC issues two per cycle on Zen 2/3/4 (one on
// Intel) at latency 4 (7 on Haswell), so the four chains cost the latency of one. Inline
// assembly needs no `#[target_feature]`, so this inlines into the caller (the user's function
// under LTO). Legacy SSE encodings in fixed registers xmm0..xmm3 (the caller may lack AVX; a
// register picked by LLVM could be xmm16+ under AVX-512, which SSE cannot encode).
// Decryption ([`decrypt4`], since session 7) needs the equivalent inverse cipher's round keys:
// each is AESIMC'd from the encryption schedule into xmm4 right before its round instead. Legacy SSE memory operands must be
// 16-byte aligned: the schedule is (`repr(C, align(16))`). Since session 8 the same kernels
// exist for eight and twelve blocks (`small_ciphers!`), called out of line from five blocks,
// in chunks of twelve (up to 12 blocks for ECB encryption, 20 for decryption, 24 for CTR,
// where each measured ahead): the compiled kernels and their wipe cost more than eight or
// twelve AES chains side by side (README, issue 19: "Messages of 5 to 12 blocks", "13 to 24
// blocks"). Encryption used to take each round key as a
// memory operand of AESENC (`aesenc xmm0, [key + 16*i]`, no key register at all); with eight
// and twelve blocks that ran at 0.82-0.87x RustCrypto on Zen 3 (80-144 B, AES-128), with the
// key loaded once per round into a register 0.98-1.09x, and no slower for four blocks.
// Unused lanes (five blocks in eight registers) cost AES work but not latency on Zen, whose
// two AES units keep eight or twelve chains at the latency of one; on Intel's one unit up to
// three unused lanes add up to 30-39 AESENCs, still less than the wipe they replace.

/// Most blocks [`encrypt_small`] handles, and one chunk of the others: up to four in four
/// registers (inline into the caller), up to eight or twelve in eight or twelve (out of line,
/// [`ecb_mid`]). Beyond twelve, encryption is faster in the `aesni` twelve-register loop and
/// the `vaes256` ymm kernels (README, issue 19, "13 to 24 blocks").
pub(crate) const SMALL_BLOCKS: usize = 12;

/// Most blocks [`ctr_small`] handles, in chunks of twelve ([`ctr_mid`]): faster than the
/// compiled kernels and their stack wipe up to 24 blocks on both `aesni` and `vaes256` (Zen 3;
/// behind on `aesni` at 32).
const CTR_SMALL_BLOCKS: usize = 24;
// `vaes512` on AMD gives tails of up to this many blocks to `ctr_small` (`ctr_nostack_raw`).
const _: () = assert!(super::vaes::ZMM_SMALL_TAIL <= CTR_SMALL_BLOCKS);

/// Most blocks [`decrypt_small`] and [`cbc_decrypt_small`] handle, in chunks of twelve: the
/// other decryption paths derive and zero the whole decryption schedule per call, which keeps
/// the chunks ahead up to 20 blocks (Zen 3; level at 24).
const DEC_SMALL_BLOCKS: usize = 20;

/// The round structure shared by every key size around `$round!(i; ARGS)` (asm text): rounds
/// 1-9, then 10-11 unless `{nr}` is 10, then 12-13 unless it is 12.
macro_rules! small_all_rounds {
    ($round:ident; $($a:tt)*) => {
        concat!(
            $round!(1; $($a)*),
            $round!(2; $($a)*),
            $round!(3; $($a)*),
            $round!(4; $($a)*),
            $round!(5; $($a)*),
            $round!(6; $($a)*),
            $round!(7; $($a)*),
            $round!(8; $($a)*),
            $round!(9; $($a)*),
            "cmp {nr}, 10\n",
            "je 2f\n",
            $round!(10; $($a)*),
            $round!(11; $($a)*),
            "cmp {nr}, 12\n",
            "je 2f\n",
            $round!(12; $($a)*),
            $round!(13; $($a)*),
            "2:\n",
        )
    };
}

/// `movdqa t, [k + 16 * i]`, then `aesenc r, t` for each register `r` listed (asm text):
/// encryption round `i`.
macro_rules! small_enc_round {
    ($i:literal; $t:literal $($r:literal)*) => {
        concat!(
            "movdqa ", $t, ", xmmword ptr [{k} + 16 * ", $i, "]\n",
            $("aesenc ", $r, ", ", $t, "\n",)*
        )
    };
}

/// `aesimc t, [last - 16 * i]`, then `aesdec r, t` for each register `r` listed (asm text):
/// the equivalent inverse cipher's round key `i`, derived where it is used.
macro_rules! small_dec_round {
    ($i:literal; $t:literal $($r:literal)*) => {
        concat!(
            "aesimc ", $t, ", xmmword ptr [{last} - 16 * ", $i, "]\n",
            $("aesdec ", $r, ", ", $t, "\n",)*
        )
    };
}

/// Defines `$enc` and `$dec`, AES encryption and decryption of `$n` blocks in the registers
/// `$r` (bound to `$b`), each one `asm!` block:
///
/// - encryption: the whitening and last round keys are memory operands (`enc[0]`,
///   `enc[rounds]`); each middle round key is loaded into `$t` right before its AESENCs;
/// - decryption (the equivalent inverse cipher): the whitening and last round keys are memory
///   operands (`enc[rounds]`, `enc[0]`); each middle round key is AESIMC of the encryption
///   round key, computed into `$t` right before its AESDECs.
///
/// `$t` is zeroed at the end.
///
/// Registers and flags only, no stack, no store: nothing to wipe afterwards.
///
/// IMPLEMENTATION NOTE (issue 19 small messages): the compiled kernels derive the whole
/// decryption schedule and are followed by the 1.25 KiB stack wipe, about 50 ns for one block
/// on Zen 3. The AESIMC of each round (one more AES-unit instruction per round, off the data's
/// dependency chain) replaces both.
macro_rules! small_ciphers {
    ($n:literal, $enc:ident, $dec:ident, $t:tt; $($r:tt $b:ident)*) => {
        small_ciphers!(@one "encryption", $n, $enc, "{k}", small_enc_round, "aesenclast",
            "{last}", $t; $($r $b)*);
        small_ciphers!(@one "decryption", $n, $dec, "{last}", small_dec_round, "aesdeclast",
            "{k}", $t; $($r $b)*);
    };
    // One direction: whitening with the key at `$first`, the middle rounds (`$round`), the
    // last round (`$last_op` with the key at `$last`), then `$t` zeroed.
    (@one $what:literal, $n:literal, $name:ident, $first:literal, $round:ident,
        $last_op:literal, $last:literal, $t:tt; $($r:tt $b:ident)*) => {
        #[doc = concat!("AES ", $what, " of ", $n, " blocks (see `small_ciphers!`).")]
        #[inline(always)]
        fn $name(k: &Keys, b: [__m128i; $n]) -> [__m128i; $n] {
            let [$(mut $b),*] = b;
            let rk = k.enc.as_ptr();
            // SAFETY: a `Keys` of this layout exists only on a CPU with AES-NI (see "Safe entry
            // points"); `rk` points to 15 readable 16-byte aligned round keys (`repr(C,
            // align(16))`), and `last = rk + rounds` with rounds in {10, 12, 14} is one of
            // them. Encryption reads `k + 16 * i` and decryption `last - 16 * i`, for i <= 9,
            // and for i <= 11 / 13 only when rounds >= 12 / 14: every address is one of
            // `rk[0..=rounds]`. Registers and flags only, no stack, no store; `$t`, which held
            // a round key, is zeroed before the end.
            unsafe {
                core::arch::asm!(
                    concat!(
                        $("pxor ", $r, ", xmmword ptr [", $first, "]\n",)*
                        small_all_rounds!($round; $t $($r)*),
                        $($last_op, " ", $r, ", xmmword ptr [", $last, "]\n",)*
                        "pxor ", $t, ", ", $t, "\n",
                    ),
                    k = in(reg) rk,
                    last = in(reg) rk.add(k.rounds),
                    nr = in(reg) k.rounds,
                    $(inout($r) $b,)*
                    out($t) _,
                    options(nostack, readonly, pure),
                )
            };
            [$($b),*]
        }
    };
}

small_ciphers!(4, encrypt4, decrypt4, "xmm4";
    "xmm0" b0 "xmm1" b1 "xmm2" b2 "xmm3" b3);
small_ciphers!(8, encrypt8, decrypt8, "xmm8";
    "xmm0" b0 "xmm1" b1 "xmm2" b2 "xmm3" b3 "xmm4" b4 "xmm5" b5 "xmm6" b6 "xmm7" b7);
small_ciphers!(12, encrypt12, decrypt12, "xmm12";
    "xmm0" b0 "xmm1" b1 "xmm2" b2 "xmm3" b3 "xmm4" b4 "xmm5" b5 "xmm6" b6 "xmm7" b7
    "xmm8" b8 "xmm9" b9 "xmm10" b10 "xmm11" b11);

/// Counter block `c` (128-bit big-endian) as a register, by scalar byte swaps (SSE2 only).
#[inline(always)]
fn ctr_block_reg(c: u128) -> __m128i {
    let hi = ((c >> 64) as u64).swap_bytes();
    let lo = (c as u64).swap_bytes();
    // SAFETY: SSE2 is part of the x86_64 baseline.
    unsafe { _mm_set_epi64x(lo as i64, hi as i64) }
}

/// Up to `N` whole blocks of `buf` as registers, the lanes past its end zero.
#[inline(always)]
fn load_lanes<const N: usize>(buf: &[u8]) -> [__m128i; N] {
    // SAFETY: SSE2 is baseline.
    let mut b = [unsafe { _mm_setzero_si128() }; N];
    for (i, b) in b.iter_mut().enumerate().take(buf.len() / 16) {
        *b = load_at(buf, i);
    }
    b
}

/// `N` counter blocks from `c` (128-bit big-endian, wrapping) as registers.
#[inline(always)]
fn ctr_lanes<const N: usize>(c: u128) -> [__m128i; N] {
    core::array::from_fn(|i| ctr_block_reg(c.wrapping_add(i as u128)))
}

/// CTR of the whole blocks of `buf` (at most `N`) with the keystream of `cipher` over `N`
/// counter blocks (those past the message computed and dropped).
#[inline(always)]
fn ctr_lanes_xor<const N: usize>(
    k: &Keys,
    c: u128,
    buf: &mut [u8],
    cipher: fn(&Keys, [__m128i; N]) -> [__m128i; N],
) {
    for (i, ks) in cipher(k, ctr_lanes(c))
        .into_iter()
        .enumerate()
        .take(buf.len() / 16)
    {
        // SAFETY: SSE2 is baseline.
        store_at(buf, i, unsafe { _mm_xor_si128(load_at(buf, i), ks) });
    }
}

/// CTR entirely in inline assembly: of at least 1 KiB on Intel (any vendor but AMD and Hygon)
/// and on AMD without AVX-512 (Zen 3 class, [`sel_on`]), on
/// `aesni` and `vaes256`, the selector loop of `vaes::ctr_asm` for every whole iteration
/// and [`ctr_small`] for the rest (under 16 blocks); of any length on AMD on `vaes512`, the
/// whole call in `vaes::ctr_asm::zmm_sel` (masked tail included); false, doing nothing,
/// otherwise (then the dispatcher runs the compiled kernels). `src` and `dst` are equal (in
/// place) or disjoint, `len` bytes each, whole blocks.
///
/// IMPLEMENTATION NOTE: like [`cbc_decrypt_nostack`], no compiled code holds a round key here
/// (the loop's slots hold counter values only; the loop zeroes the registers that held key
/// material), so no stack wipe follows: the 1280-byte wipe and the compiled tail kernel's
/// setup were about 4% of a 16 KiB `vaes256` call on Intel (README, "Intel: CTR without
/// scalar counter work"). On AMD CPUs with AVX-512 `aesni` and `vaes256` keep the compiled
/// path's scalar-counter loop (its best trials were the faster on long calls); on Zen 3 the
/// selector path wins on steady speed (issue 13, session 28; issue 16, session 30: see
/// [`sel_on`]); on `vaes512` the wipe was about 14 ns a call (README, "Session 13, CTR on
/// `vaes512` wholly in assembly").
///
/// # Safety
/// `src` is readable and `dst` writable for `len` bytes, equal or disjoint.
#[inline(never)]
unsafe fn ctr_nostack_raw(
    backend: crate::Backend,
    k: &Keys,
    c: u128,
    src: *const u8,
    dst: *mut u8,
    len: usize,
) -> bool {
    use super::vaes::ctr_sel_iterations;
    // SAFETY: `Keys` of this layout exist only for backends whose CPU has AES-NI and SSE4.2,
    // `Vaes256` only where AVX2 and VAES exist and `Vaes512` only where AVX-512F/BW/VL do too
    // (`is_available`); the buffers are the caller's.
    let done = unsafe {
        match (backend, crate::cpu::amd_like()) {
            (crate::Backend::Aesni, amd) if sel_on(amd) => {
                ctr_sel_iterations::<__m128i>(k, c, src, dst, len)
            }
            (crate::Backend::Vaes256, amd) if sel_on(amd) => {
                if amd && k.rounds > 10 && len >= SEL12_MIN {
                    super::vaes::ctr_asm::ymm_sel12(k, c, src, dst, len)
                } else {
                    ctr_sel_iterations::<__m256i>(k, c, src, dst, len)
                }
            }
            // The whole call, its tail included (masked registers), except a short tail after
            // the first-round-table loop: `ctr_small` below.
            (crate::Backend::Vaes512, true) => {
                let whole = super::vaes::ctr_zmm_prefix(len);
                super::vaes::ctr_zmm_whole(k, c, src, dst, whole);
                whole
            }
            _ => return false,
        }
    };
    if done < len {
        // SAFETY: bytes `done..len` lie inside both buffers, which are equal or disjoint.
        let rest = unsafe {
            if src != dst.cast_const() {
                core::ptr::copy_nonoverlapping(src.add(done), dst.add(done), len - done);
            }
            core::slice::from_raw_parts_mut(dst.add(done), len - done)
        };
        // Under 16 blocks (an iteration is 8 or 16; `vaes512` leaves at most
        // `ZMM_SMALL_TAIL`): one chunk of `ctr_small`'s 24. In chunks all the same, so that no
        // length could leave bytes unencrypted if those bounds changed.
        for (i, chunk) in rest.chunks_mut(16 * CTR_SMALL_BLOCKS).enumerate() {
            let c = c.wrapping_add((done / 16 + i * CTR_SMALL_BLOCKS) as u128);
            let handled = ctr_small(k, c, chunk);
            debug_assert!(handled);
        }
    }
    true
}

/// Whether the selector path ([`ctr_nostack_raw`]) takes an `aesni` / `vaes256` CTR call (of
/// at least 1 KiB: [`ctr_nostack_candidate`]): on Intel, and on AMD without AVX-512 (Zen 3
/// class); AMD CPUs with AVX-512 (Zen 4) keep the scalar-counter loop of `vaes::ctr_asm`.
///
/// IMPLEMENTATION NOTE (issue 13, session 28; issue 16, session 30): on a Zen 3 guest (family
/// 25 model 1), session 28 measured the selector path against the scalar-counter loop with
/// `aesx bench --ops ctr` (best of trials, builds alternated between runs): `vaes256` AES-128
/// 1.52x at 1 KiB, 1.19x at 4 KiB, 1.05x at 16 KiB, 1.02x at 60 KiB; AES-256 1.42x, 1.10x,
/// 1.01x, 0.97x; `aesni` AES-128 1.27x, 1.05x, 0.98x, 0.97x; AES-256 1.24x, 1.05x, 0.99x,
/// 0.99x, and kept the scalar loop where its best was ahead: `aesni` from 16 KiB, `vaes256`
/// from 64 KiB. Best-of-trials hides what a user gets, though: the scalar loop spends long
/// stretches in a slow state (0.6-0.75x its best; a copy with its counter code deleted showed
/// it too, and none of 64 stack placements of its slots was slow every time, so it is neither
/// the counter stores nor a fixed aliasing; the selector loop, with a fifth of the integer
/// work per byte, is much less affected).
/// Session 30 compared the two in one process, trial by trial (`scripts/ab.sh -t 400`: two
/// copies of the crate linked side by side, so both see the same moments of the VM): the
/// selector loop's mean was ahead in every cell that changed (`vaes256` 64 KiB-1 MiB: AES-128
/// 1.02-1.38x, AES-256 1.03-1.12x; `aesni` 16 KiB-1 MiB: 1.02-1.17x; the unchanged `vaes256`
/// 16 KiB cells, the same code on both sides, came out at 0.996x and 1.04x), while its best
/// was up to 3-4% behind (`vaes256` AES-256 14.04-14.24 against 14.49-14.67 GB/s; `aesni`
/// AES-128 9.83-9.87 against 10.18-10.21). Steady speed is what users and
/// `openssl speed` see, so Zen 3 now takes the selector loop at every length.
#[inline(always)]
fn sel_on(amd: bool) -> bool {
    !amd || !crate::cpu::features().avx512f
}

/// The shortest `vaes256` CTR call with AES-192 or AES-256 that takes the 12-register ymm
/// selector loop (`ctr_asm::ymm_sel12`) on AMD without AVX-512 (the Zen 3 class); shorter
/// calls, AES-128, `aesni`, and every call on Intel take the 8-register selector loop.
///
/// IMPLEMENTATION NOTE (issue 16, session 32): 8 registers in flight are exactly what two AES units
/// of latency 4 need (Zen 3), with no slack; 12 (three sub-batches of four registers, each with its
/// own `A` and `D'`) leave some, as they did for ECB (`vaes::XMM_VECS`). Measured on Zen 3 (family
/// 25 model 1): per-call time of `vaes256` CTR over 1.5-96 KiB, best of 300 trials, fitted to a
/// line: AES-256 26.3 ns per 384 bytes against 27.2 for the 8-register loop (14.6 GB/s, 99% of the
/// ymm ceiling, against 14.1), AES-128 the same 19.0 ns (the 8-register loop is at 98% there
/// already); for AES-256 a fixed cost 7 ns higher (three pairs and eight selectors set up by scalar
/// code). `scripts/ab.sh -b vaes256 -k "192 256"` (both layouts): best +2.0-3.1% for AES-256 at 16
/// KiB-1 MiB and +1-2% for AES-192, medians +1-3% in most cells; at 8 KiB level for AES-256 and
/// behind for AES-192 (-1% best); at 1-4 KiB 0.86-0.93x, hence the threshold. Not on `aesni`: its
/// 12-register xmm loop was behind in a noisy hour (0.92-0.95x, bests included) and in a quieter
/// one ahead on bests (+2-3%) but at 0.94-1.02x on medians: it does three scalar pairs per 12
/// blocks where the 8-register loop does one per 8, and busy neighbours on the host slow integer
/// work most (the scalar-counter loop's "slow state", [`sel_on`]).
const SEL12_MIN: usize = 16384;

/// Whether [`ctr_nostack_raw`] may take a call: the checks that cost nothing, inlined into the
/// dispatcher, so that other backends and shorter calls do not pay a call (measured on Intel:
/// without this, CTR of 512 B-2 KiB on `vaes512`, and under 1 KiB on `aesni` and `vaes256`,
/// ran 4-20% slower).
#[inline(always)]
fn ctr_nostack_candidate(backend: crate::Backend, len: usize) -> bool {
    match backend {
        crate::Backend::Aesni | crate::Backend::Vaes256 => len >= 1024,
        // Any length (the dispatchers give shorter calls to `ctr_small` first).
        crate::Backend::Vaes512 => true,
        _ => false,
    }
}

/// [`ctr_nostack_raw`] in place.
#[inline(always)]
pub(crate) fn ctr_nostack(backend: crate::Backend, k: &Keys, c: u128, buf: &mut [u8]) -> bool {
    if !ctr_nostack_candidate(backend, buf.len()) {
        return false;
    }
    let p = buf.as_mut_ptr();
    // SAFETY: in place over `buf`.
    unsafe { ctr_nostack_raw(backend, k, c, p, p, buf.len()) }
}

/// [`ctr_nostack_raw`] from `src` into `dst` (same length).
#[inline(always)]
pub(crate) fn ctr_nostack_b2b(
    backend: crate::Backend,
    k: &Keys,
    c: u128,
    src: &[u8],
    dst: &mut [u8],
) -> bool {
    let len = src.len().min(dst.len());
    if !ctr_nostack_candidate(backend, len) {
        return false;
    }
    // SAFETY: two distinct borrows (disjoint) of at least `len` bytes.
    unsafe { ctr_nostack_raw(backend, k, c, src.as_ptr(), dst.as_mut_ptr(), len) }
}

/// CTR for a message of at most [`CTR_SMALL_BLOCKS`] whole blocks; false (nothing done) for
/// a longer one. No stack wipe is needed after it (see above).
#[inline(always)]
pub(crate) fn ctr_small(k: &Keys, c: u128, buf: &mut [u8]) -> bool {
    match buf.len() / 16 {
        0..=4 => ctr_lanes_xor(k, c, buf, encrypt4),
        5..=CTR_SMALL_BLOCKS => ctr_mid(k, c, buf),
        _ => return false,
    }
    true
}

/// [`ctr_small`] of five blocks or more, out of line (the four-block path is what inlines): in
/// chunks of twelve, each in the fewest of 4, 8 or 12 registers that hold it.
#[inline(never)]
fn ctr_mid(k: &Keys, c: u128, buf: &mut [u8]) {
    for (i, buf) in buf.chunks_mut(16 * 12).enumerate() {
        let c = c.wrapping_add(12 * i as u128);
        match buf.len() / 16 {
            0..=4 => ctr_lanes_xor(k, c, buf, encrypt4),
            5..=8 => ctr_lanes_xor(k, c, buf, encrypt8),
            _ => ctr_lanes_xor(k, c, buf, encrypt12),
        }
    }
}

/// ECB of the whole blocks of `buf` (at most `N`) through `cipher`, unused lanes zero.
#[inline(always)]
fn ecb_lanes<const N: usize>(
    k: &Keys,
    buf: &mut [u8],
    cipher: fn(&Keys, [__m128i; N]) -> [__m128i; N],
) {
    let n = buf.len() / 16;
    for (i, b) in cipher(k, load_lanes(buf)).into_iter().enumerate().take(n) {
        store_at(buf, i, b);
    }
}

/// ECB of five blocks or more, out of line, in chunks as [`ctr_mid`]: encryption
/// ([`encrypt4`], [`encrypt8`], [`encrypt12`]) or decryption ([`decrypt4`], [`decrypt8`],
/// [`decrypt12`]).
#[inline(never)]
fn ecb_mid(k: &Keys, buf: &mut [u8], decrypt: bool) {
    for buf in buf.chunks_mut(16 * 12) {
        match (buf.len() / 16, decrypt) {
            (0..=4, false) => ecb_lanes(k, buf, encrypt4),
            (0..=4, true) => ecb_lanes(k, buf, decrypt4),
            (5..=8, false) => ecb_lanes(k, buf, encrypt8),
            (5..=8, true) => ecb_lanes(k, buf, decrypt8),
            (_, false) => ecb_lanes(k, buf, encrypt12),
            (_, true) => ecb_lanes(k, buf, decrypt12),
        }
    }
}

/// ECB encryption of at most [`SMALL_BLOCKS`] whole blocks; false (nothing done) for more.
#[inline(always)]
pub(crate) fn encrypt_small(k: &Keys, buf: &mut [u8]) -> bool {
    match buf.len() / 16 {
        0..=4 => ecb_lanes(k, buf, encrypt4),
        5..=SMALL_BLOCKS => ecb_mid(k, buf, false),
        _ => return false,
    }
    true
}

/// ECB decryption of at most [`DEC_SMALL_BLOCKS`] whole blocks; false (nothing done) for more.
#[inline(always)]
pub(crate) fn decrypt_small(k: &Keys, buf: &mut [u8]) -> bool {
    match buf.len() / 16 {
        0..=4 => ecb_lanes(k, buf, decrypt4),
        5..=DEC_SMALL_BLOCKS => ecb_mid(k, buf, true),
        _ => return false,
    }
    true
}

/// CBC decryption of the whole blocks of `buf` (at most `N`) through `decrypt`: each block
/// XORed with the ciphertext block before it, every ciphertext block read before anything is
/// stored.
#[inline(always)]
fn cbc_lanes<const N: usize>(
    k: &Keys,
    iv: &mut [u8; 16],
    buf: &mut [u8],
    decrypt: fn(&Keys, [__m128i; N]) -> [__m128i; N],
) {
    let n = buf.len() / 16;
    if n == 0 {
        return;
    }
    let c = load_lanes::<N>(buf);
    let mut prev = load(iv);
    for (i, d) in decrypt(k, c).into_iter().enumerate().take(n) {
        // SAFETY: SSE2 is baseline.
        store_at(buf, i, unsafe { _mm_xor_si128(d, prev) });
        prev = c[i];
    }
    store(iv, prev);
}

/// CBC decryption of five blocks or more, out of line, in chunks as [`ctr_mid`] (each chunk
/// chains from the last ciphertext block of the one before, kept in `iv`).
#[inline(never)]
fn cbc_mid(k: &Keys, iv: &mut [u8; 16], buf: &mut [u8]) {
    for buf in buf.chunks_mut(16 * 12) {
        match buf.len() / 16 {
            0..=4 => cbc_lanes(k, iv, buf, decrypt4),
            5..=8 => cbc_lanes(k, iv, buf, decrypt8),
            _ => cbc_lanes(k, iv, buf, decrypt12),
        }
    }
}

/// CBC decryption of at most [`DEC_SMALL_BLOCKS`] whole blocks; false (nothing done) for
/// more.
#[inline(always)]
pub(crate) fn cbc_decrypt_small(k: &Keys, iv: &mut [u8; 16], buf: &mut [u8]) -> bool {
    match buf.len() / 16 {
        0..=4 => cbc_lanes(k, iv, buf, decrypt4),
        5..=DEC_SMALL_BLOCKS => cbc_mid(k, iv, buf),
        _ => return false,
    }
    true
}

// Safe entry points. SAFETY (all six): `Keys` of this layout are only built and used through
// `Backend::{Aesni, Vaes256, Vaes512}`, after `Aes::with_backend` checked that the CPU has
// AES-NI and SSE4.2 (`Backend::is_available`).

pub(crate) fn encrypt_blocks(k: &Keys, buf: &mut [u8]) {
    // SAFETY: see above.
    unsafe { by_rounds!(k.rounds, x_ecb_enc(k, buf)) }
}

pub(crate) fn decrypt_blocks(k: &Keys, buf: &mut [u8]) {
    // SAFETY: see above.
    unsafe { by_rounds!(k.rounds, x_ecb_dec(k, buf)) }
}

pub(crate) fn cbc_encrypt(k: &Keys, iv: &mut [u8; 16], buf: &mut [u8]) {
    // SAFETY: see above.
    unsafe { by_rounds!(k.rounds, cbc_enc(k, iv, buf)) }
}

pub(crate) fn cbc_decrypt(k: &Keys, iv: &mut [u8; 16], buf: &mut [u8]) {
    // SAFETY: see above.
    unsafe { by_rounds!(k.rounds, x_cbc_dec(k, iv, buf)) }
}

pub(crate) fn ctr_xor(k: &Keys, c: u128, buf: &mut [u8]) {
    // SAFETY: see above.
    unsafe { by_rounds!(k.rounds, x_ctr(k, c, buf)) }
}

/// `dst = src ^ keystream` (whole blocks, same length), the kernel of [`ctr_xor`] reading
/// `src` and writing `dst`.
pub(crate) fn ctr_xor_b2b(k: &Keys, c: u128, src: &[u8], dst: &mut [u8]) {
    // SAFETY: see above.
    unsafe { by_rounds!(k.rounds, x_ctr_b2b(k, c, src, dst)) }
}
