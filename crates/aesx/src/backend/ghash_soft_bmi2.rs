//! The software GHASH of [`super::ghash_soft`], compiled a second time with BMI2 for x86-64
//! CPUs that have it (Haswell, Zen 1 and later).
//!
//! IMPLEMENTATION NOTE: the 48 widening multiplies per block dominate the software GHASH.
//! Plain `mul` writes its product to the fixed pair RDX:RAX, and LLVM surrounds each one with
//! register copies and spills; BMI2's `mulx` names its destinations, which removed 16% of the
//! instructions (valgrind instruction count, 16 KiB). Same code, same constant-time
//! properties: MULX, like MUL, takes the same time for every operand value.

use core::sync::atomic::{AtomicU8, Ordering};

use super::ghash_soft::{Key, ghash_impl};

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
    ghash_impl(k, acc, data)
}

/// `acc <- GHASH update over data`; only called when [`available`].
pub(crate) fn ghash(k: &Key, acc: &mut u128, data: &[u8]) {
    debug_assert!(available());
    // SAFETY: the caller (`ghash_soft::ghash`) checked that the CPU has BMI2.
    unsafe { ghash_bmi2(k, acc, data) }
}
