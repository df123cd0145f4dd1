//! The SuiteB_FFI symbols: the C functions Cryptol's `SuiteB_FFI` module binds by name.
//!
//! Layout (as in Cryptol's `SuiteB`): `k` is the number of 32-bit key words (4, 6 or 8; the
//! cipher has `k + 6` rounds). A schedule is three arrays of host-order `uint32_t` words, each
//! word holding four key bytes with the first byte most significant (FIPS-197 `w[i]`):
//! `initialKey` (4 words, round key 0), `roundKeys` (4 * (k + 5) words, round keys 1 to
//! `k + 5`) and `finalKey` (4 words, round key `k + 6`). Blocks and keys are plain bytes.
//!
//! The decrypt schedule is the equivalent inverse cipher's (FIPS-197 5.3.5): initial = encrypt
//! final key, middle = InvMixColumns of the encrypt middle keys in reverse order, final =
//! encrypt initial key, which is what AES-NI's AESDEC consumes.
//!
//! These functions are `void`, so they cannot report errors: a NULL pointer, `k` not in
//! {4, 6, 8}, or `n * 16` overflowing makes the call a no-op that writes nothing. They run on
//! every CPU through the default backend (`aesx_set_default_backend`, else the fastest).
//!
//! IMPLEMENTATION NOTE (schedule cache): a block call receives round keys, not a key schedule
//! object, and building one per call (load and byte-swap 60 words, AESIMC for the inverse
//! schedule, MixColumns for a decrypt schedule) costs more than encrypting one block. Each
//! thread therefore keeps the last encrypt and the last decrypt schedule it built, keyed by
//! the exact input words, the round count and the backend. The comparison runs in constant
//! time (XOR-OR over all words straight from the caller's arrays, one test at the end); what timing can reveal is only whether
//! the key equals the previous call's. Cached schedules are zeroized when replaced, on thread
//! exit, and by `aesx_clear_thread_cache`.

#![allow(non_snake_case)]

use std::cell::RefCell;

use aesx::{Aes, Backend};
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{Ordering, compiler_fence};

use crate::aesx_status;
use crate::{default_backend, guard, guard_void};

/// Plain arrays of integers: every bit pattern is valid, size a multiple of 16 bytes.
trait Plain: Copy {}
impl Plain for [[u8; 16]; 15] {}
impl Plain for [u32; 60] {}

/// Key material in a 16-byte-aligned buffer, wiped on drop.
///
/// IMPLEMENTATION NOTE: `zeroize` on byte or word arrays issues one volatile store per element
/// (240 or 60 here), which showed in the cost of a schedule-cache miss; 15 volatile 16-byte
/// stores clear the same memory and cannot be elided either.
#[repr(C, align(16))]
struct Wiped<T: Plain>(T);

impl<T: Plain> Wiped<T> {
    fn wipe(&mut self) {
        const { assert!(size_of::<T>().is_multiple_of(16)) };
        let p = (&raw mut self.0).cast::<u128>();
        for i in 0..size_of::<T>() / 16 {
            // SAFETY: `p` is 16-byte aligned (the struct is `align(16)` and `T` is its only
            // field), `i * 16 < size_of::<T>()`, and any bit pattern is a valid `T`.
            unsafe { p.add(i).write_volatile(0) };
        }
        compiler_fence(Ordering::SeqCst);
    }
}

impl<T: Plain> Drop for Wiped<T> {
    fn drop(&mut self) {
        self.wipe();
    }
}

impl<T: Plain> Deref for Wiped<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T: Plain> DerefMut for Wiped<T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.0
    }
}

/// Reports whether a hardware AES backend (AES-NI, hence also VAES) is present: 1 or 0.
#[unsafe(no_mangle)]
pub extern "C" fn checkAESNISupported() -> u8 {
    let mut r = 0;
    guard_void(|| r = Backend::Aesni.is_available() as u8);
    r
}

// ---------------------------------------------------------------------------------------------
// Round-key arithmetic (pure, constant time: no branches or indices on key bytes).

/// Multiplication by x in GF(2^8) mod x^8 + x^4 + x^3 + x + 1, branch-free.
fn xtime(x: u8) -> u8 {
    (x << 1) ^ (0x1b & 0u8.wrapping_sub(x >> 7))
}

/// FIPS-197 MixColumns on a round key (four 4-byte columns).
fn mix_columns(b: [u8; 16]) -> [u8; 16] {
    let mut r = [0u8; 16];
    for c in 0..4 {
        let a = [b[4 * c], b[4 * c + 1], b[4 * c + 2], b[4 * c + 3]];
        let t = a[0] ^ a[1] ^ a[2] ^ a[3];
        for i in 0..4 {
            // 2*a[i] + 3*a[i+1] + a[i+2] + a[i+3] = a[i] ^ t ^ 2*(a[i] ^ a[i+1]).
            r[4 * c + i] = a[i] ^ t ^ xtime(a[i] ^ a[(i + 1) % 4]);
        }
    }
    r
}

/// FIPS-197 InvMixColumns, as a pre-step (multiply by 4x^2 + 5 mod x^4 + 1) followed by
/// MixColumns: the inverse matrix {0e,0b,0d,09} factors as {02,03,01,01} x {05,00,04,00}.
fn inv_mix_columns(b: [u8; 16]) -> [u8; 16] {
    let mut p = b;
    for c in 0..4 {
        let u = xtime(xtime(b[4 * c] ^ b[4 * c + 2]));
        let v = xtime(xtime(b[4 * c + 1] ^ b[4 * c + 3]));
        p[4 * c] ^= u;
        p[4 * c + 1] ^= v;
        p[4 * c + 2] ^= u;
        p[4 * c + 3] ^= v;
    }
    mix_columns(p)
}

/// Round keys `0..=rounds` of the equivalent inverse cipher from the encryption ones, or back
/// (`forward = false`).
fn convert(keys: &[[u8; 16]], forward: bool) -> Wiped<[[u8; 16]; 15]> {
    let r = keys.len() - 1;
    let mut out = Wiped([[0u8; 16]; 15]);
    out[0] = keys[r];
    out[r] = keys[0];
    for i in 1..r {
        out[i] = if forward {
            inv_mix_columns(keys[r - i])
        } else {
            mix_columns(keys[r - i])
        };
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Moving schedules across the boundary.

/// Three caller arrays forming one schedule.
#[derive(Clone, Copy)]
struct Sched<P> {
    initial: P,
    middle: P,
    last: P,
}

impl<P: Copy> Sched<P> {
    /// The word pointer for word `i` (0..4 * (rounds + 1)).
    fn word<T>(&self, rounds: usize, i: usize, add: impl Fn(P, usize) -> T) -> T {
        let (r, j) = (i / 4, i % 4);
        if r == 0 {
            add(self.initial, j)
        } else if r == rounds {
            add(self.last, j)
        } else {
            add(self.middle, i - 4)
        }
    }
}

fn rounds_of(k: usize) -> Option<usize> {
    matches!(k, 4 | 6 | 8).then(|| k + 6)
}

impl Sched<*const u32> {
    fn is_null(&self) -> bool {
        self.initial.is_null() || self.middle.is_null() || self.last.is_null()
    }

    /// Reads `4 * (rounds + 1)` words.
    ///
    /// # Safety
    /// The three arrays are non-NULL and readable for 4, 4 * (rounds - 1) and 4 words.
    unsafe fn read(&self, rounds: usize) -> Wiped<[u32; 60]> {
        let mut w = Wiped([0u32; 60]);
        for (i, x) in w.iter_mut().enumerate().take(4 * (rounds + 1)) {
            // SAFETY: `word` gives an index inside the array sizes the caller promised;
            // unaligned reads, so the caller's alignment does not matter.
            *x = self.word(rounds, i, |p, j| unsafe { p.add(j).read_unaligned() });
        }
        w
    }
}

impl Sched<*const u32> {
    /// OR of the XOR of every word with `w` (0 iff the schedule equals `w[..4 * (rounds + 1)]`),
    /// read straight from the caller's arrays without a copy; no branch depends on the words.
    ///
    /// # Safety
    /// As for `read`.
    unsafe fn diff(&self, rounds: usize, w: &[u32; 60]) -> u32 {
        let mut d = 0;
        for (j, x) in w[..4].iter().enumerate() {
            // SAFETY: j < 4, inside the caller's 4-word array; unaligned read.
            d |= x ^ unsafe { self.initial.add(j).read_unaligned() };
        }
        for (j, x) in w[4..4 * rounds].iter().enumerate() {
            // SAFETY: j < 4 * (rounds - 1), inside the caller's middle array; unaligned read.
            d |= x ^ unsafe { self.middle.add(j).read_unaligned() };
        }
        for (j, x) in w[4 * rounds..4 * rounds + 4].iter().enumerate() {
            // SAFETY: j < 4, inside the caller's 4-word array; unaligned read.
            d |= x ^ unsafe { self.last.add(j).read_unaligned() };
        }
        d
    }
}

impl Sched<*mut u32> {
    fn is_null(&self) -> bool {
        self.initial.is_null() || self.middle.is_null() || self.last.is_null()
    }

    /// Writes round keys `0..=rounds` as words.
    ///
    /// # Safety
    /// The three arrays are non-NULL and writable for 4, 4 * (rounds - 1) and 4 words.
    unsafe fn write(&self, keys: &[[u8; 16]]) {
        let rounds = keys.len() - 1;
        for i in 0..4 * (rounds + 1) {
            let b = &keys[i / 4][4 * (i % 4)..4 * (i % 4) + 4];
            let w = u32::from_be_bytes(b.try_into().unwrap());
            // SAFETY: as for `read`, with writes.
            self.word(rounds, i, |p, j| unsafe { p.add(j).write_unaligned(w) });
        }
    }
}

fn words_to_keys(w: &[u32; 60], rounds: usize) -> Wiped<[[u8; 16]; 15]> {
    let mut keys = Wiped([[0u8; 16]; 15]);
    for (i, x) in w.iter().enumerate().take(4 * (rounds + 1)) {
        keys[i / 4][4 * (i % 4)..4 * (i % 4) + 4].copy_from_slice(&x.to_be_bytes());
    }
    keys
}

// ---------------------------------------------------------------------------------------------
// Key expansion.

/// Expands `key` (`nk` words) and writes the encrypt and/or decrypt schedule.
///
/// # Safety
/// `key` NULL or readable for `4 * nk` bytes; each schedule NULL-free and writable (checked
/// for NULL here; the sizes are the caller's promise).
unsafe fn expand(
    nk: usize,
    key: *const u8,
    enc: Option<Sched<*mut u32>>,
    dec: Option<Sched<*mut u32>>,
) {
    guard_void(|| {
        if key.is_null() || enc.is_some_and(|s| s.is_null()) || dec.is_some_and(|s| s.is_null()) {
            return;
        }
        // SAFETY: non-NULL and readable for 4 * nk bytes (caller's contract).
        let key = unsafe { std::slice::from_raw_parts(key, 4 * nk) };
        let Ok(rk) = aesx::hazmat::expand_key(key) else {
            return;
        };
        if let Some(s) = enc {
            // SAFETY: non-NULL (checked) and sized for this key length (caller's contract).
            unsafe { s.write(rk.as_slice()) };
        }
        if let Some(s) = dec {
            let d = convert(rk.as_slice(), true);
            // SAFETY: as above.
            unsafe { s.write(&d[..=rk.rounds]) };
        }
    })
}

fn sched<P>(initial: P, middle: P, last: P) -> Sched<P> {
    Sched {
        initial,
        middle,
        last,
    }
}

/// Expands a 128-bit key (16 bytes at `key`) into the encrypt schedule: 4 + 9 x 4 +
/// 4 words. Any NULL: no-op.
///
/// # Safety
/// Each pointer NULL or valid for its documented size.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aesniExpandEncrypt128(
    key: *const u8,
    encInitialKey: *mut u32,
    encRoundKeys: *mut u32,
    encFinalKey: *mut u32,
) {
    let e = sched(encInitialKey, encRoundKeys, encFinalKey);
    // SAFETY: forwarded caller contract.
    unsafe { expand(4, key, Some(e), None) }
}

/// Expands a 128-bit key into the equivalent-inverse decrypt schedule: 4 + 9 x 4 + 4
/// words. Any NULL: no-op.
///
/// # Safety
/// Each pointer NULL or valid for its documented size.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aesniExpandDecrypt128(
    key: *const u8,
    decInitialKey: *mut u32,
    decRoundKeys: *mut u32,
    decFinalKey: *mut u32,
) {
    let d = sched(decInitialKey, decRoundKeys, decFinalKey);
    // SAFETY: forwarded caller contract.
    unsafe { expand(4, key, None, Some(d)) }
}

/// Both schedules of a 128-bit key at once. Any NULL: no-op.
///
/// # Safety
/// Each pointer NULL or valid for its documented size.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aesniExpandEncryptDecrypt128(
    key: *const u8,
    encInitialKey: *mut u32,
    encRoundKeys: *mut u32,
    encFinalKey: *mut u32,
    decInitialKey: *mut u32,
    decRoundKeys: *mut u32,
    decFinalKey: *mut u32,
) {
    let e = sched(encInitialKey, encRoundKeys, encFinalKey);
    let d = sched(decInitialKey, decRoundKeys, decFinalKey);
    // SAFETY: forwarded caller contract.
    unsafe { expand(4, key, Some(e), Some(d)) }
}

/// Expands a 192-bit key (24 bytes at `key`) into the encrypt schedule: 4 + 11 x 4 +
/// 4 words. Any NULL: no-op.
///
/// # Safety
/// Each pointer NULL or valid for its documented size.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aesniExpandEncrypt192(
    key: *const u8,
    encInitialKey: *mut u32,
    encRoundKeys: *mut u32,
    encFinalKey: *mut u32,
) {
    let e = sched(encInitialKey, encRoundKeys, encFinalKey);
    // SAFETY: forwarded caller contract.
    unsafe { expand(6, key, Some(e), None) }
}

/// Expands a 192-bit key into the equivalent-inverse decrypt schedule: 4 + 11 x 4 + 4
/// words. Any NULL: no-op.
///
/// # Safety
/// Each pointer NULL or valid for its documented size.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aesniExpandDecrypt192(
    key: *const u8,
    decInitialKey: *mut u32,
    decRoundKeys: *mut u32,
    decFinalKey: *mut u32,
) {
    let d = sched(decInitialKey, decRoundKeys, decFinalKey);
    // SAFETY: forwarded caller contract.
    unsafe { expand(6, key, None, Some(d)) }
}

/// Both schedules of a 192-bit key at once. Any NULL: no-op.
///
/// # Safety
/// Each pointer NULL or valid for its documented size.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aesniExpandEncryptDecrypt192(
    key: *const u8,
    encInitialKey: *mut u32,
    encRoundKeys: *mut u32,
    encFinalKey: *mut u32,
    decInitialKey: *mut u32,
    decRoundKeys: *mut u32,
    decFinalKey: *mut u32,
) {
    let e = sched(encInitialKey, encRoundKeys, encFinalKey);
    let d = sched(decInitialKey, decRoundKeys, decFinalKey);
    // SAFETY: forwarded caller contract.
    unsafe { expand(6, key, Some(e), Some(d)) }
}

/// Expands a 256-bit key (32 bytes at `key`) into the encrypt schedule: 4 + 13 x 4 +
/// 4 words. Any NULL: no-op.
///
/// # Safety
/// Each pointer NULL or valid for its documented size.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aesniExpandEncrypt256(
    key: *const u8,
    encInitialKey: *mut u32,
    encRoundKeys: *mut u32,
    encFinalKey: *mut u32,
) {
    let e = sched(encInitialKey, encRoundKeys, encFinalKey);
    // SAFETY: forwarded caller contract.
    unsafe { expand(8, key, Some(e), None) }
}

/// Expands a 256-bit key into the equivalent-inverse decrypt schedule: 4 + 13 x 4 + 4
/// words. Any NULL: no-op.
///
/// # Safety
/// Each pointer NULL or valid for its documented size.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aesniExpandDecrypt256(
    key: *const u8,
    decInitialKey: *mut u32,
    decRoundKeys: *mut u32,
    decFinalKey: *mut u32,
) {
    let d = sched(decInitialKey, decRoundKeys, decFinalKey);
    // SAFETY: forwarded caller contract.
    unsafe { expand(8, key, None, Some(d)) }
}

/// Both schedules of a 256-bit key at once. Any NULL: no-op.
///
/// # Safety
/// Each pointer NULL or valid for its documented size.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aesniExpandEncryptDecrypt256(
    key: *const u8,
    encInitialKey: *mut u32,
    encRoundKeys: *mut u32,
    encFinalKey: *mut u32,
    decInitialKey: *mut u32,
    decRoundKeys: *mut u32,
    decFinalKey: *mut u32,
) {
    let e = sched(encInitialKey, encRoundKeys, encFinalKey);
    let d = sched(decInitialKey, decRoundKeys, decFinalKey);
    // SAFETY: forwarded caller contract.
    unsafe { expand(8, key, Some(e), Some(d)) }
}

// ---------------------------------------------------------------------------------------------
// Block calls and the schedule cache.

struct Entry {
    words: Wiped<[u32; 60]>,
    rounds: usize,
    backend: Backend,
    aes: Aes,
}

const ENC: usize = 0;
const DEC: usize = 1;

thread_local! {
    /// The last encrypt and decrypt schedule built on this thread.
    static CACHE: RefCell<[Option<Entry>; 2]> = const { RefCell::new([None, None]) };
}

fn build(dir: usize, words: &[u32; 60], rounds: usize, backend: Backend) -> Option<Aes> {
    let keys = words_to_keys(words, rounds);
    let enc = if dir == ENC {
        keys
    } else {
        convert(&keys[..=rounds], false)
    };
    Aes::from_round_keys(&enc[..=rounds], backend).ok()
}

/// Runs `f` with the cipher for this schedule (`dir` = ENC or DEC), cached per thread.
///
/// # Safety
/// The schedule arrays are non-NULL and readable for the sizes of `rounds`.
unsafe fn with_cipher(dir: usize, sched: Sched<*const u32>, rounds: usize, f: impl FnOnce(&Aes)) {
    let backend = default_backend();
    let mut f = Some(f);
    let cached = CACHE.try_with(|c| {
        let mut c = c.borrow_mut();
        let slot = &mut c[dir];
        let hit = match slot {
            Some(e) if e.rounds == rounds && e.backend == backend => {
                // SAFETY: forwarded caller contract.
                core::hint::black_box(unsafe { sched.diff(rounds, &e.words) }) == 0
            }
            _ => false,
        };
        if !hit {
            *slot = None;
            // SAFETY: forwarded caller contract.
            let words = unsafe { sched.read(rounds) };
            let aes = build(dir, &words, rounds, backend)?;
            *slot = Some(Entry {
                words,
                rounds,
                backend,
                aes,
            });
        }
        (f.take()?)(&slot.as_ref()?.aes);
        Some(())
    });
    if cached.is_err() {
        // The thread's cache is gone (called from a thread-local destructor): no caching.
        // SAFETY: forwarded caller contract.
        let words = unsafe { sched.read(rounds) };
        if let (Some(aes), Some(f)) = (build(dir, &words, rounds, backend), f) {
            f(&aes);
        }
    }
}

/// Shared body of the four block functions.
///
/// # Safety
/// Schedule arrays readable for `k`'s sizes; `input` readable and `output` writable for
/// `n * 16` bytes (NULLs are checked here).
unsafe fn blocks(
    dir: usize,
    k: usize,
    n: usize,
    sched: Sched<*const u32>,
    input: *const u8,
    output: *mut u8,
) {
    guard_void(|| {
        let Some(rounds) = rounds_of(k) else { return };
        let Some(len) = n.checked_mul(16).filter(|&l| l <= isize::MAX as usize) else {
            return;
        };
        if sched.is_null() || input.is_null() || output.is_null() || n == 0 {
            return;
        }
        let work = |aes: &Aes| {
            // IMPLEMENTATION NOTE: memmove then work in place, so any overlap of input and
            // output gives the same result as disjoint buffers.
            // SAFETY: both valid for `len` bytes (contract); `copy` allows overlap.
            unsafe { std::ptr::copy(input, output, len) };
            // SAFETY: `output` non-NULL, writable for `len <= isize::MAX` bytes, and no other
            // reference to it exists in this function.
            let buf = unsafe { std::slice::from_raw_parts_mut(output, len) };
            if dir == ENC {
                aes.encrypt_blocks(buf);
            } else {
                aes.decrypt_blocks(buf);
            }
        };
        // SAFETY: the schedule pointers are non-NULL (checked) and sized for `k` (contract).
        unsafe { with_cipher(dir, sched, rounds, work) };
    })
}

/// Encrypts one 16-byte block `pt` into `ct` (`pt == ct` allowed) with an encrypt schedule for
/// `k` = 4, 6 or 8 key words. NULL pointers or another `k`: no-op.
///
/// # Safety
/// Each pointer NULL or valid for the documented size.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aesniEncryptBlock(
    k: usize,
    encInitialKey: *const u32,
    encRoundKeys: *const u32,
    encFinalKey: *const u32,
    pt: *const u8,
    ct: *mut u8,
) {
    let s = sched(encInitialKey, encRoundKeys, encFinalKey);
    // SAFETY: forwarded caller contract.
    unsafe { blocks(ENC, k, 1, s, pt, ct) }
}

/// Decrypts one 16-byte block `ct` into `pt` (`ct == pt` allowed) with the equivalent-inverse
/// decrypt schedule for `k` = 4, 6 or 8 key words. NULL pointers or another `k`: no-op.
///
/// # Safety
/// Each pointer NULL or valid for the documented size.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aesniDecryptBlock(
    k: usize,
    decInitialKey: *const u32,
    decRoundKeys: *const u32,
    decFinalKey: *const u32,
    ct: *const u8,
    pt: *mut u8,
) {
    let s = sched(decInitialKey, decRoundKeys, decFinalKey);
    // SAFETY: forwarded caller contract.
    unsafe { blocks(DEC, k, 1, s, ct, pt) }
}

/// ECB-encrypts `n` blocks (`16 * n` bytes) from `in` to `out` with an encrypt schedule. The
/// buffers may overlap in any way (the result is as if `in` were copied first). NULL, another
/// `k` or `n * 16` overflowing: no-op.
///
/// # Safety
/// Each pointer NULL or valid for the documented size.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aesniEncryptBlocks(
    k: usize,
    n: usize,
    initialKey: *const u32,
    roundKeys: *const u32,
    finalKey: *const u32,
    r#in: *const u8,
    out: *mut u8,
) {
    let s = sched(initialKey, roundKeys, finalKey);
    // SAFETY: forwarded caller contract.
    unsafe { blocks(ENC, k, n, s, r#in, out) }
}

/// ECB-decrypts `n` blocks with the equivalent-inverse decrypt schedule; otherwise as
/// `aesniEncryptBlocks`.
///
/// # Safety
/// Each pointer NULL or valid for the documented size.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aesniDecryptBlocks(
    k: usize,
    n: usize,
    initialKey: *const u32,
    roundKeys: *const u32,
    finalKey: *const u32,
    r#in: *const u8,
    out: *mut u8,
) {
    let s = sched(initialKey, roundKeys, finalKey);
    // SAFETY: forwarded caller contract.
    unsafe { blocks(DEC, k, n, s, r#in, out) }
}

/// Drops (and zeroizes) the schedules the SuiteB_FFI block functions cached on the calling
/// thread. Always returns `AESX_OK`.
#[unsafe(no_mangle)]
pub extern "C" fn aesx_clear_thread_cache() -> aesx_status {
    guard(|| {
        let _ = CACHE.try_with(|c| {
            let mut c = c.borrow_mut();
            for e in c.iter_mut() {
                if let Some(e) = e.as_mut() {
                    e.words.wipe();
                }
                *e = None;
            }
        });
        Ok(())
    })
}
