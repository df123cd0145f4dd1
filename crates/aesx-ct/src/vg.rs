//! Valgrind client requests, written directly as the documented amd64 magic sequence (no C
//! header, no build script): outside valgrind the sequence is a handful of rotates that leave
//! every register but the flags as it was, and the request returns its default value.
//!
//! Request numbers are the public constants of `valgrind.h` / `memcheck.h` (Valgrind 3.x):
//! memcheck requests start at `('M' << 24) | ('C' << 16)`.

const MC_BASE: u64 = (b'M' as u64) << 24 | (b'C' as u64) << 16;
const MAKE_MEM_UNDEFINED: u64 = MC_BASE + 1;
const MAKE_MEM_DEFINED: u64 = MC_BASE + 2;
const GET_VBITS: u64 = MC_BASE + 8;
const RUNNING_ON_VALGRIND: u64 = 0x1001;
const COUNT_ERRORS: u64 = 0x1201;

#[cfg(target_arch = "x86_64")]
fn request(default: u64, req: u64, a1: u64, a2: u64, a3: u64) -> u64 {
    let args: [u64; 6] = [req, a1, a2, a3, 0, 0];
    let result: u64;
    // SAFETY: the "special instruction preamble" (rdi rotated by 3, 13, 61 and 51 bits = 128 in
    // all, so rdi ends unchanged) followed by `xchg rbx, rbx` (a no-op) is what valgrind's JIT
    // recognises as a client request. Natively it changes rdi (declared clobbered) and the
    // flags: each `rol` writes CF (and OF), so the asm must not claim `preserves_flags` (with
    // it, LLVM kept a carry in CF across the request and lost it; see the test below). rax
    // points at the 6-word argument block, which lives until the asm returns; the result
    // comes back in rdx, which holds the default when not running under valgrind. The asm is
    // not `nomem`, so the compiler keeps buffer writes before it and reads after it; it does
    // not touch the stack (`nostack`).
    unsafe {
        core::arch::asm!(
            "rol rdi, 3",
            "rol rdi, 13",
            "rol rdi, 61",
            "rol rdi, 51",
            "xchg rbx, rbx",
            in("rax") args.as_ptr(),
            inout("rdx") default => result,
            inout("rdi") 0u64 => _,
            options(nostack),
        );
    }
    result
}

#[cfg(not(target_arch = "x86_64"))]
fn request(default: u64, _req: u64, _a1: u64, _a2: u64, _a3: u64) -> u64 {
    default
}

/// Whether this process runs under valgrind (0 natively).
pub fn running_on_valgrind() -> bool {
    request(0, RUNNING_ON_VALGRIND, 0, 0, 0) != 0
}

/// Number of errors valgrind has reported so far (0 natively).
pub fn count_errors() -> u64 {
    request(0, COUNT_ERRORS, 0, 0, 0)
}

/// Marks `buf` as secret: memcheck treats its bytes as uninitialised, so any branch or memory
/// address that depends on them is reported. The contents are unchanged.
#[inline(never)]
pub fn taint(buf: &[u8]) {
    request(
        0,
        MAKE_MEM_UNDEFINED,
        buf.as_ptr() as u64,
        buf.len() as u64,
        0,
    );
}

/// Declassifies `buf` (marks it defined): used on outputs before they are compared or printed,
/// and on the one result that is public by design (PKCS#7 validity and message length).
#[inline(never)]
pub fn declassify(buf: &[u8]) {
    request(
        0,
        MAKE_MEM_DEFINED,
        buf.as_ptr() as u64,
        buf.len() as u64,
        0,
    );
}

/// Declassifies a value in place, whatever its type (for example a `Result` whose
/// discriminant and payload are public by design). The compiler must assume the request
/// rewrote `*x`, so it reads the value back from memory afterwards.
pub fn declassify_val<T>(x: &mut T) {
    request(
        0,
        MAKE_MEM_DEFINED,
        x as *mut T as u64,
        core::mem::size_of::<T>() as u64,
        0,
    );
}

/// How many bytes of `buf` carry no taint at all (every bit defined). `None` natively.
pub fn untainted_bytes(buf: &[u8]) -> Option<usize> {
    let mut vbits = vec![0u8; buf.len()];
    let r = request(
        0,
        GET_VBITS,
        buf.as_ptr() as u64,
        vbits.as_mut_ptr() as u64,
        buf.len() as u64,
    );
    // 1 = success; 0 = not under valgrind; 2/3 = misaligned/unaddressable.
    (r == 1).then(|| vbits.iter().filter(|&&v| v == 0).count())
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::*;
    use core::hint::black_box;

    /// A carry computed before a client request and used after it. Natively the magic
    /// sequence rotates a zero `rdi`, which clears CF; if the asm claimed to preserve the
    /// flags, LLVM may keep the carry in CF across it (it does, in release builds: `add`,
    /// the request, then `adc rax, 0`) and the carry is lost.
    #[inline(never)]
    fn carry_across_request(a: u64, b: u64) -> u64 {
        let (sum, carry) = a.overflowing_add(b);
        // The sum goes into the request so the `add` must happen before the asm.
        let r = request(0, RUNNING_ON_VALGRIND, sum, 0, 0);
        carry as u64 + r
    }

    #[test]
    fn flags_are_not_assumed_preserved() {
        assert_eq!(carry_across_request(black_box(u64::MAX), black_box(2)), 1);
        assert_eq!(carry_across_request(black_box(1), black_box(2)), 0);
    }
}
