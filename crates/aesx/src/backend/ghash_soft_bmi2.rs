//! The software GHASH of [`super::ghash_soft`] on x86-64 CPUs with BMI2 (Haswell, Zen 1 and
//! later): the same algorithm and code, with the 64 x 64 carry-less multiply written in
//! assembly around `mulx`.
//!
//! IMPLEMENTATION NOTE: the 48 widening multiplies per block dominate the software GHASH, and
//! compiled Rust spends more on moving their results around than on the multiplies: plain
//! `mul` writes the fixed pair RDX:RAX, and LLVM's schedule keeps many products live at once and
//! spills (about 560 instructions per block, half of them `mov`; with BMI2 enabled for the
//! compiler, 480). Here one 64 x 64 product is one `asm!` block: the data class goes to RDX
//! once per class, `mulx` reads the key classes from memory and names its destinations, the
//! four class sums stay in eight registers, and the key's low nibble is added back with shifts
//! and masks. About 100 instructions per product, no spill inside. MULX, like MUL, takes the
//! same time for every operand value; there is no branch and no memory index that depends on
//! the data or the key.

use core::sync::atomic::{AtomicU8, Ordering};

use super::ghash_soft::{CLASS_MASKS, Clmul64, Half, Key, ghash_impl};

/// The `mulx` multiplier (only constructed behind [`available`]).
pub(crate) struct Mulx;

impl Clmul64 for Mulx {
    /// Same result as the portable `clmul64`: class products `x_i * y_j` summed into class
    /// `(i + j) mod 4`, each sum masked to its class, the four ORed, then
    /// `x * (low nibble of y)` XORed in.
    #[inline(always)]
    fn clmul64(x: u64, y: &Half) -> u128 {
        let (lo, hi): (u64, u64);
        // SAFETY: only reached through `ghash_bmi2`, whose caller checked BMI2 (`mulx`). The
        // asm reads 64 bytes at `y` (a `repr(C)` `Half`: `c` at 0, `nib` at 32) and 32 bytes at
        // `CLASS_MASKS`, both valid for reads; it writes only the registers it declares, uses no
        // stack, and clobbers the flags (not declared preserved).
        unsafe {
            core::arch::asm!(
                // Class 0 of x times y_j -> z_j.
                "mov rdx, {x}",
                "and rdx, [{m}]",
                "mulx {z0h}, {z0l}, [{y}]",
                "mulx {z1h}, {z1l}, [{y} + 8]",
                "mulx {z2h}, {z2l}, [{y} + 16]",
                "mulx {z3h}, {z3l}, [{y} + 24]",
                // Class 1 times y_j -> z_(j+1).
                "mov rdx, {x}",
                "and rdx, [{m} + 8]",
                "mulx {th}, {tl}, [{y}]",
                "xor {z1l}, {tl}",
                "xor {z1h}, {th}",
                "mulx {th}, {tl}, [{y} + 8]",
                "xor {z2l}, {tl}",
                "xor {z2h}, {th}",
                "mulx {th}, {tl}, [{y} + 16]",
                "xor {z3l}, {tl}",
                "xor {z3h}, {th}",
                "mulx {th}, {tl}, [{y} + 24]",
                "xor {z0l}, {tl}",
                "xor {z0h}, {th}",
                // Class 2 times y_j -> z_(j+2).
                "mov rdx, {x}",
                "and rdx, [{m} + 16]",
                "mulx {th}, {tl}, [{y}]",
                "xor {z2l}, {tl}",
                "xor {z2h}, {th}",
                "mulx {th}, {tl}, [{y} + 8]",
                "xor {z3l}, {tl}",
                "xor {z3h}, {th}",
                "mulx {th}, {tl}, [{y} + 16]",
                "xor {z0l}, {tl}",
                "xor {z0h}, {th}",
                "mulx {th}, {tl}, [{y} + 24]",
                "xor {z1l}, {tl}",
                "xor {z1h}, {th}",
                // Class 3 times y_j -> z_(j+3).
                "mov rdx, {x}",
                "and rdx, [{m} + 24]",
                "mulx {th}, {tl}, [{y}]",
                "xor {z3l}, {tl}",
                "xor {z3h}, {th}",
                "mulx {th}, {tl}, [{y} + 8]",
                "xor {z0l}, {tl}",
                "xor {z0h}, {th}",
                "mulx {th}, {tl}, [{y} + 16]",
                "xor {z1l}, {tl}",
                "xor {z1h}, {th}",
                "mulx {th}, {tl}, [{y} + 24]",
                "xor {z2l}, {tl}",
                "xor {z2h}, {th}",
                // Keep class k of z_k (the same mask on both halves), OR the classes together.
                "mov rdx, [{m}]",
                "and {z0l}, rdx",
                "and {z0h}, rdx",
                "mov rdx, [{m} + 8]",
                "and {z1l}, rdx",
                "and {z1h}, rdx",
                "mov rdx, [{m} + 16]",
                "and {z2l}, rdx",
                "and {z2h}, rdx",
                "mov rdx, [{m} + 24]",
                "and {z3l}, rdx",
                "and {z3h}, rdx",
                "or {z0l}, {z1l}",
                "or {z0h}, {z1h}",
                "or {z2l}, {z3l}",
                "or {z2h}, {z3h}",
                "or {z0l}, {z2l}",
                "or {z0h}, {z2h}",
                // The low nibble of y: (x << t) & nib_t for t = 0..3, as a 128-bit value.
                "mov {tl}, {x}",
                "and {tl}, [{y} + 32]",
                "xor {z0l}, {tl}",
                "rorx {tl}, {x}, 63",
                "mov {th}, {tl}",
                "and {tl}, [{m} + 32]",
                "and {th}, 1",
                "and {tl}, [{y} + 40]",
                "and {th}, [{y} + 40]",
                "xor {z0l}, {tl}",
                "xor {z0h}, {th}",
                "rorx {tl}, {x}, 62",
                "mov {th}, {tl}",
                "and {tl}, [{m} + 40]",
                "and {th}, 3",
                "and {tl}, [{y} + 48]",
                "and {th}, [{y} + 48]",
                "xor {z0l}, {tl}",
                "xor {z0h}, {th}",
                "rorx {tl}, {x}, 61",
                "mov {th}, {tl}",
                "and {tl}, [{m} + 48]",
                "and {th}, 7",
                "and {tl}, [{y} + 56]",
                "and {th}, [{y} + 56]",
                "xor {z0l}, {tl}",
                "xor {z0h}, {th}",
                x = in(reg) x,
                y = in(reg) y as *const Half,
                m = in(reg) SHIFT_MASKS.as_ptr(),
                z0l = out(reg) lo,
                z0h = out(reg) hi,
                z1l = out(reg) _,
                z1h = out(reg) _,
                z2l = out(reg) _,
                z2h = out(reg) _,
                z3l = out(reg) _,
                z3h = out(reg) _,
                tl = out(reg) _,
                th = out(reg) _,
                out("rdx") _,
                options(pure, readonly, nostack),
            );
        }
        (hi as u128) << 64 | lo as u128
    }
}

/// The class masks followed by the masks that keep the low part of `x` rotated left by
/// 1, 2, 3 (`!1`, `!3`, `!7`): the asm reads both from here.
static SHIFT_MASKS: [u64; 7] = [
    CLASS_MASKS[0],
    CLASS_MASKS[1],
    CLASS_MASKS[2],
    CLASS_MASKS[3],
    !1,
    !3,
    !7,
];

/// Whether the CPU has BMI2 (CPUID leaf 7, EBX bit 8), decided once. Kept here rather than in
/// `CpuFeatures` because only this kernel uses it.
#[inline]
pub(crate) fn available() -> bool {
    static BMI2: AtomicU8 = AtomicU8::new(0);
    match BMI2.load(Ordering::Relaxed) {
        1 => false,
        2 => true,
        _ => {
            use core::arch::x86_64::{__cpuid, __cpuid_count};
            let has = __cpuid(0).eax >= 7 && __cpuid_count(7, 0).ebx & (1 << 8) != 0;
            BMI2.store(1 + has as u8, Ordering::Relaxed);
            has
        }
    }
}

#[target_feature(enable = "bmi2")]
fn ghash_bmi2(k: &Key, acc: &mut u128, data: &[u8]) {
    ghash_impl::<Mulx>(k, acc, data)
}

/// `acc <- GHASH update over data`; only called when [`available`].
pub(crate) fn ghash(k: &Key, acc: &mut u128, data: &[u8]) {
    debug_assert!(available());
    // SAFETY: the caller (`ghash_soft::ghash`) checked that the CPU has BMI2.
    unsafe { ghash_bmi2(k, acc, data) }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The asm multiplier equals a bit-by-bit carry-less multiply on dense, sparse and random
    /// operands (the cases that overflow a class: all-ones classes on both sides).
    #[test]
    fn mulx_clmul64_matches_reference() {
        if !available() {
            return;
        }
        fn reference(a: u64, b: u64) -> u128 {
            (0..64)
                .filter(|i| (b >> i) & 1 == 1)
                .fold(0u128, |r, i| r ^ ((a as u128) << i))
        }
        let m = CLASS_MASKS;
        let special = [
            0u64,
            1,
            0xf,
            0x10,
            u64::MAX,
            m[0],
            m[1],
            m[2],
            m[3],
            u64::MAX << 4,
            1 << 63,
        ];
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut cases: alloc::vec::Vec<(u64, u64)> = special
            .iter()
            .flat_map(|&a| special.iter().map(move |&b| (a, b)))
            .collect();
        for _ in 0..20000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            cases.push((x, x.rotate_left(23) ^ 0x0123_4567));
        }
        for (a, b) in cases {
            let y = Half::from_u64(b);
            assert_eq!(Mulx::clmul64(a, &y), reference(a, b), "{a:#x} * {b:#x}");
        }
    }
}
