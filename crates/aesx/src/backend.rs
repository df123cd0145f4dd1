//! The kernel set every backend provides, and the only `match` that dispatches to them.
//!
//! Every backend module exposes the same whole-block kernels (all buffers are a whole number of
//! 16-byte blocks; the generic mode code in [`crate::mode`] handles everything else):
//!
//! ```text
//! expand(key: &[u8]) -> Keys                 key is 16, 24 or 32 bytes
//! from_round_keys(enc: &[[u8; 16]]) -> Keys  FIPS-197 encryption round keys, 11/13/15 of them
//! encrypt_blocks(&Keys, buf: &mut [u8])      ECB encrypt in place
//! decrypt_blocks(&Keys, buf: &mut [u8])      ECB decrypt in place
//! cbc_encrypt(&Keys, iv: &mut [u8; 16], buf) CBC encrypt in place; iv <- last ciphertext block
//! cbc_decrypt(&Keys, iv: &mut [u8; 16], buf) CBC decrypt in place; iv <- last ciphertext block
//! ctr_xor(&Keys, ctr: u128, buf)             buf ^= E(ctr) || E(ctr+1) || ...
//! ```
//!
//! `ctr_xor_b2b(backend, keys, ctr, src, dst)` is `ctr_xor` from `src` into `dst` (same
//! length): one pass on `aesni` and `vaes256`, copy + in place on the others.
//!
//! `ctr_xor` contract: `ctr` is the first counter block as a big-endian integer; block i uses
//! `ctr + i mod 2^128`. The counter may be secret, so kernels carry from the low into the high
//! 64 bits without branches (and the mode layer never splits a call at a carry).
//!
//! The key schedule remembers the backend that built it; layouts are never mixed. AES-NI and
//! both VAES backends share one round-key layout ([`aesni::Keys`]).
//!
//! ## GCM kernels
//!
//! GCM is a mode over three more kernels (the mode layer, [`crate::mode::gcm`], owns nonces,
//! AAD, partial blocks, lengths, limits and the tag):
//!
//! ```text
//! GhashKey::empty(backend) + .init(&Keys)    H = E_K(0), then H^1..H^n in the layout of the
//!                                            GHASH kernel this backend pairs with, in place
//! ghash(&GhashKey, acc: &mut u128, data)     acc <- GHASH update over whole blocks
//! gcm_seal(.., ctr, public, acc, aad, buf)   acc <- GHASH update over aad; buf ^= CTR32
//!                                            keystream from ctr; then acc <- GHASH update
//!                                            over the ciphertext, whole blocks (public: the
//!                                            inc32 word may be branched on, 12-byte nonce)
//! gcm_open(.., ctr, public, acc, aad, buf)   acc <- GHASH update over aad, then over buf;
//!                                            buf ^= keystream
//! ctr32_xor(.., ctr: &[u8; 16], buf)         buf ^= CTR32 keystream (no hashing)
//! gcm_finish(.., j0, ctr, acc, tail, ..)     the partial block, lengths block and tag
//! gcm_oneshot(..)                            gcm_seal/gcm_open + gcm_finish
//! gcm_small(..)                              a whole short message in one call
//! ```
//!
//! The combined calls exist for speed: on the hardware backends every call is followed by a
//! stack wipe (key residue; 768 B after the GCM kernels, 7-8 ns with 32-byte stores on Zen 3),
//! which a one-shot message of a few hundred bytes feels.
//!
//! `acc` is GHASH's state S in POLYVAL form, `u128::from_be_bytes(S)` (RFC 8452 Appendix A):
//! the same value in every backend, so a state can move between kernels. Counter contract
//! (`inc32`, SP 800-38D): block i uses `ctr` with its last four bytes, read as a big-endian
//! u32, plus i mod 2^32; the first 12 bytes never change. The counter may be secret (for
//! nonces other than 12 bytes it is derived from H), so kernels add without branches.
//!
//! Which GHASH goes with which AES backend is decided once per key in [`GhashKey::empty`], from
//! [`crate::cpu::features`] (never assumed from the AES backend):
//!
//! | AES backend | GHASH | fused kernel |
//! |---|---|---|
//! | vaes512 with VPCLMULQDQ | [`vaes::gcm`]: H^32..H^1, zmm in the fused kernel (Intel: schoolbook; AMD: Karatsuba), ymm for long AAD, [`clmul`] for short inputs | [`vaes::gcm`] (zmm): 16 blocks per iteration on Intel, 32 on AMD ([`vaes::gcm_zmm`]); short messages as below |
//! | vaes256 with VPCLMULQDQ | [`vaes::gcm`]: H^16..H^1 (of the 32 kept) on ymm, Karatsuba (+ [`clmul`] for short inputs) | [`vaes::gcm`] (ymm): 16 blocks per iteration; messages up to [`SMALL_MSG`] on [`gcm_aesni::small`] |
//! | aesni (and vaes256/vaes512 without VPCLMULQDQ) with PCLMULQDQ | [`clmul`]: H^8..H^1, Karatsuba | [`gcm_aesni`]: 8 blocks per iteration |
//! | soft, vpaes (or any backend without PCLMULQDQ), CPU with AVX2 | [`ghash_avx2`]: ctmul on 32-bit limbs, 4 lanes | generic: ECB of counter blocks + GHASH, 32 blocks at a time |
//! | the same without AVX2 | [`ghash_soft`]: ctmul, 64-bit (`mulx` asm with BMI2) | generic |
//!
//! IMPLEMENTATION NOTE (vaes512, session 9): until an AVX-512 machine had run the zmm
//! instantiation of [`vaes::gcm`], `vaes512` paired with the xmm kernel ([`gcm_aesni`]). On
//! an Intel AVX-512 guest its tests passed and it sealed 16 KiB at 2.5x that kernel (AES-128
//! about 19 GB/s against 7.7; README, "AES-GCM"), so it is dispatched: `GhashKey::Vclmul` for
//! `vaes512` too, the width chosen by backend in `vclmul_seal_open`.

#[cfg(target_arch = "x86_64")]
pub(crate) mod aesni;
#[cfg(target_arch = "x86_64")]
pub(crate) mod clmul;
#[cfg(target_arch = "x86_64")]
pub(crate) mod gcm_aesni;
#[cfg(target_arch = "x86_64")]
pub(crate) mod ghash_avx2;
#[cfg(all(target_arch = "x86_64", feature = "alloc"))]
pub(crate) mod ghash_pshufb;
pub(crate) mod ghash_soft;
#[cfg(target_arch = "x86_64")]
pub(crate) mod ghash_soft_bmi2;
#[cfg(all(target_arch = "x86_64", feature = "alloc"))]
pub(crate) mod ghash_ssse3;
pub(crate) mod soft;
#[cfg(target_arch = "x86_64")]
pub(crate) mod vaes;
#[cfg(target_arch = "x86_64")]
pub(crate) mod vaes256;
#[cfg(target_arch = "x86_64")]
pub(crate) mod vpaes;

use core::fmt;
use core::str::FromStr;
use core::sync::atomic::{AtomicU32, Ordering};

use crate::cpu::CpuFeatures;
use crate::{Error, ErrorKind};

/// Whether the `vpaes` backend is compiled into this build.
pub(crate) const VPAES_BUILT: bool = cfg!(target_arch = "x86_64") && vpaes_built();

#[cfg(target_arch = "x86_64")]
const fn vpaes_built() -> bool {
    vpaes::BUILT
}
#[cfg(not(target_arch = "x86_64"))]
const fn vpaes_built() -> bool {
    false
}

/// An implementation of the AES kernels. Ordered from slowest to fastest.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Backend {
    /// Portable bitsliced software; constant-time; no `unsafe`. Runs everywhere.
    Soft,
    /// SSSE3 vector-permute AES (Hamburg, CHES 2009); constant-time without AES-NI.
    Vpaes,
    /// AES-NI (with SSE4.2) on xmm registers, 12 blocks interleaved.
    Aesni,
    /// VAES on ymm registers with AVX2.
    Vaes256,
    /// VAES on zmm registers with AVX-512F/BW/VL.
    Vaes512,
}

impl Backend {
    /// Every backend aesx knows, slowest first.
    pub const ALL: [Backend; 5] = [
        Backend::Soft,
        Backend::Vpaes,
        Backend::Aesni,
        Backend::Vaes256,
        Backend::Vaes512,
    ];

    /// The backend's name: the same word in the CLI, the C API and JSON output.
    pub const fn name(self) -> &'static str {
        match self {
            Backend::Soft => "soft",
            Backend::Vpaes => "vpaes",
            Backend::Aesni => "aesni",
            Backend::Vaes256 => "vaes256",
            Backend::Vaes512 => "vaes512",
        }
    }

    /// Whether this CPU (and this build) can run the backend. Decided once, then one load.
    #[inline]
    pub fn is_available(self) -> bool {
        plan().has(self)
    }

    fn supported_by(self, f: &CpuFeatures) -> bool {
        match self {
            Backend::Soft => true,
            Backend::Vpaes => VPAES_BUILT && f.ssse3,
            Backend::Aesni => f.aes && f.sse42,
            Backend::Vaes256 => f.aes && f.sse42 && f.avx2 && f.vaes,
            Backend::Vaes512 => {
                f.aes && f.sse42 && f.avx2 && f.vaes && f.avx512f && f.avx512bw && f.avx512vl
            }
        }
    }

    /// Every backend this CPU can run, slowest first (so `soft` is always first).
    #[cfg(feature = "alloc")]
    pub fn available() -> alloc::vec::Vec<Backend> {
        Backend::ALL
            .into_iter()
            .filter(|b| b.is_available())
            .collect()
    }

    /// The fastest available backend (what [`crate::Aes::new`] uses). Decided once.
    #[inline]
    pub fn detect() -> Backend {
        plan().best()
    }
}

/// What key setup needs to know about this CPU, decided once and cached in one word, so that
/// the hot path of `Aes::new` is one load and a bit test: the set of available backends, the
/// fastest one, and the AES-NI key-expansion variant.
#[derive(Clone, Copy)]
pub(crate) struct Plan(u32);

static PLAN: AtomicU32 = AtomicU32::new(0);
const PLAN_READY: u32 = 1 << 31;
const PLAN_ASSIST: u32 = 1 << 16;
const PLAN_AVX: u32 = 1 << 17;
const PLAN_CLMUL: u32 = 1 << 18;
const PLAN_AVX2: u32 = 1 << 19;
const PLAN_VCLMUL: u32 = 1 << 20;
const PLAN_BEST_SHIFT: u32 = 8;

/// The cached [`Plan`] (detected on first use).
#[inline(always)]
pub(crate) fn plan() -> Plan {
    let p = PLAN.load(Ordering::Relaxed);
    if p & PLAN_READY != 0 {
        Plan(p)
    } else {
        plan_init()
    }
}

#[cold]
#[inline(never)]
fn plan_init() -> Plan {
    let f = crate::cpu::features();
    let mut p = PLAN_READY;
    for b in Backend::ALL {
        if b.supported_by(&f) {
            p |= 1 << b as u32;
            // ALL is ordered slowest first: the last available is the fastest.
            p = (p & !(7 << PLAN_BEST_SHIFT)) | (b as u32) << PLAN_BEST_SHIFT;
        }
    }
    #[cfg(target_arch = "x86_64")]
    if aesni::preferred_variant() == aesni::Variant::Assist {
        p |= PLAN_ASSIST;
    }
    if f.avx {
        p |= PLAN_AVX;
    }
    #[cfg(target_arch = "x86_64")]
    if clmul::available() {
        p |= PLAN_CLMUL;
    }
    #[cfg(target_arch = "x86_64")]
    if ghash_avx2::available() {
        p |= PLAN_AVX2;
    }
    #[cfg(target_arch = "x86_64")]
    if Backend::Vaes256.supported_by(&f) && f.vpclmulqdq && clmul::available() {
        p |= PLAN_VCLMUL;
    }
    PLAN.store(p, Ordering::Relaxed);
    Plan(p)
}

impl Plan {
    #[inline(always)]
    pub(crate) fn has(self, b: Backend) -> bool {
        self.0 & (1 << b as u32) != 0
    }
    #[inline(always)]
    pub(crate) fn best(self) -> Backend {
        match (self.0 >> PLAN_BEST_SHIFT) & 7 {
            4 => Backend::Vaes512,
            3 => Backend::Vaes256,
            2 => Backend::Aesni,
            1 => Backend::Vpaes,
            _ => Backend::Soft,
        }
    }
    /// AVX (with the OS saving ymm state): 32-byte stores may be used.
    #[inline(always)]
    pub(crate) fn avx(self) -> bool {
        self.0 & PLAN_AVX != 0
    }
    /// PCLMULQDQ and SSE4.2: the `clmul` GHASH kernel runs.
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    #[inline(always)]
    fn clmul(self) -> bool {
        self.0 & PLAN_CLMUL != 0
    }
    /// The `vaes256` backend, VPCLMULQDQ and PCLMULQDQ: the fused ymm GCM kernel runs.
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    #[inline(always)]
    fn vclmul(self) -> bool {
        self.0 & PLAN_VCLMUL != 0
    }
    /// AVX2: the `ghash_avx2` kernel runs.
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    #[inline(always)]
    fn avx2(self) -> bool {
        self.0 & PLAN_AVX2 != 0
    }
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    fn variant(self) -> aesni::Variant {
        if self.0 & PLAN_ASSIST != 0 {
            aesni::Variant::Assist
        } else {
            aesni::Variant::Enclast
        }
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Backend {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        Backend::ALL
            .into_iter()
            .find(|b| b.name().eq_ignore_ascii_case(s.trim()))
            .ok_or(Error::new(ErrorKind::UnknownBackend))
    }
}

/// The bitsliced and vector-permute schedules are large (~1 KiB); with an allocator they live on
/// the heap so that `Aes` stays small for the hardware backends, whose key setup is bound by
/// moving the schedule around. Without `alloc` they are stored inline.
#[cfg(feature = "alloc")]
pub(crate) type Big<T> = alloc::boxed::Box<T>;
#[cfg(not(feature = "alloc"))]
pub(crate) type Big<T> = T;

#[inline]
pub(crate) fn big<T>(x: T) -> Big<T> {
    #[cfg(feature = "alloc")]
    return alloc::boxed::Box::new(x);
    #[cfg(not(feature = "alloc"))]
    x
}

/// A key schedule in the layout of the backend that made it.
// Stored inline (no allocation, no_std): the size difference between layouts is by design.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Keys {
    /// aesni, vaes256 and vaes512 share this layout. First, so that an all-zero placeholder is
    /// all-zero bytes (tag 0): built with stores of zero rather than copied from a constant.
    #[cfg(target_arch = "x86_64")]
    Hw(aesni::Keys),
    Soft(Big<soft::Keys>, #[allow(dead_code)] Fill),
    #[cfg(target_arch = "x86_64")]
    Vpaes(Big<vpaes::Keys>, #[allow(dead_code)] Fill),
}

/// Zeros that give the heap variants of [`Keys`] a defined value in every byte where `Hw` keeps
/// its round keys.
///
/// IMPLEMENTATION NOTE (issues 13 and 14): `Keys::new` is inlined into the caller, and both
/// arms of its match meet in one value. Without this, the `Hw` slots of a heap variant are
/// undefined, and where the caller builds keys in a loop LLVM fills them with the previous
/// iteration's round keys: it kept all fifteen registers of the last schedule alive across
/// the out-of-line soft/vpaes expansion by storing them to a second stack area on every call
/// (found in the disassembly of `aesx-bench keysetup`: 15 extra stores per `Aes::new`, and a
/// copy of the last schedule left on the caller's stack that no drop wipes). With the slots
/// defined (zero) on the heap path nothing is carried between iterations.
#[derive(Clone, Copy)]
pub(crate) struct Fill(
    // Never read: it exists for its bytes.
    #[cfg(all(feature = "alloc", target_arch = "x86_64"))]
    #[allow(dead_code)]
    [u64; FILL],
);

/// Words of [`Fill`]: with the heap pointer, the `Hw` payload up to `rounds`, not the padding
/// word after it. Bytes that one variant defines and the other leaves as padding cost a store
/// on the hardware path (LLVM writes something there), and key setup on this hardware is bound
/// by its stores: filling that word too cost one more store per key (Zen 4, AES-256: 15.2 ns,
/// against 14.9).
#[cfg(all(feature = "alloc", target_arch = "x86_64"))]
const FILL: usize = core::mem::size_of::<aesni::Keys>() / 8 - 1;

impl Fill {
    pub(crate) const ZERO: Fill = Fill(
        #[cfg(all(feature = "alloc", target_arch = "x86_64"))]
        [0; FILL],
    );
}

impl Keys {
    /// The all-zero hardware-layout schedule (a placeholder: no heap, nothing secret).
    #[cfg(all(feature = "alloc", target_arch = "x86_64"))]
    pub(crate) const ZERO: Keys = Keys::Hw(aesni::Keys::ZERO);

    /// The schedule of `key` (16/24/32 bytes, checked by the caller) for `backend`, which the
    /// caller has checked is available in `plan`. IMPLEMENTATION NOTE: inlined into the caller
    /// (and so into `Aes::new` in the user's crate): the hardware schedule is computed in
    /// registers and stored once, into the caller's value ([`aesni::expand_inline`]); the soft
    /// and vpaes schedules are built out of line, on the heap.
    #[inline(always)]
    pub(crate) fn new(backend: Backend, key: &[u8], plan: Plan) -> Keys {
        let _ = plan;
        match backend {
            #[cfg(target_arch = "x86_64")]
            Backend::Aesni | Backend::Vaes256 | Backend::Vaes512 => {
                // SAFETY: the caller checked that `backend` is available, and each of these
                // three needs AES-NI and SSE4.2.
                Keys::Hw(unsafe { aesni::expand_inline(key, plan.variant()) })
            }
            _ => match Boxed::expand(backend, key) {
                Boxed::Soft(k) => Keys::Soft(k, Fill::ZERO),
                #[cfg(target_arch = "x86_64")]
                Boxed::Vpaes(k) => Keys::Vpaes(k, Fill::ZERO),
            },
        }
    }

    /// Builds a schedule from standard (FIPS-197) encryption round keys, `rounds + 1` of them.
    pub(crate) fn from_round_keys(backend: Backend, enc: &[[u8; 16]]) -> Keys {
        debug_assert!(backend.is_available() && matches!(enc.len(), 11 | 13 | 15));
        let keys = match backend {
            #[cfg(target_arch = "x86_64")]
            Backend::Vpaes => {
                let mut k = big(vpaes::ZERO);
                vpaes::from_round_keys_into(enc, &mut k);
                Keys::Vpaes(k, Fill::ZERO)
            }
            #[cfg(target_arch = "x86_64")]
            Backend::Aesni | Backend::Vaes256 | Backend::Vaes512 => {
                return Keys::Hw(aesni::from_round_keys(enc));
            }
            _ => {
                let mut k = big(soft::Keys::ZERO);
                soft::from_round_keys_into(enc, &mut k);
                Keys::Soft(k, Fill::ZERO)
            }
        };
        wipe_after_soft(true);
        keys
    }
}

impl Keys {
    /// The number of rounds (10, 12 or 14; 0 for the placeholder).
    #[inline]
    pub(crate) fn rounds(&self) -> usize {
        match self {
            #[cfg(target_arch = "x86_64")]
            Keys::Hw(k) => k.rounds,
            Keys::Soft(k, _) => k.rounds(),
            #[cfg(target_arch = "x86_64")]
            Keys::Vpaes(k, _) => k.rounds(),
        }
    }

    /// Drops `this` (its owner's `Drop` calls this once; `this` is never used again). The
    /// hardware schedule is wiped here, inline in the caller (a few 16/32-byte stores, AVX
    /// known from the cached plan): an out-of-line `drop_in_place` costs a call, a push and
    /// the tag dispatch per key, and on Zen 3 key setup is bound by its stores (issue 13, see
    /// the README). The heap schedules are dropped out of line.
    #[inline(always)]
    pub(crate) fn drop_fast(this: &mut core::mem::ManuallyDrop<Keys>) {
        match &mut **this {
            #[cfg(target_arch = "x86_64")]
            Keys::Hw(k) => {
                // Instead of `aesni::Keys`'s own `Drop` (skipped: it holds nothing else),
                // which wipes the slots up to `rounds`: all 15, in straight-line stores (the
                // slots past `rounds` hold zeros, never key material).
                aesni::wipe_all_slots_with(&mut k.enc, plan_cached().avx())
            }
            _ => drop_boxed(this),
        }
    }
}

/// The out-of-line part of [`Keys::drop_fast`].
#[inline(never)]
fn drop_boxed(this: &mut core::mem::ManuallyDrop<Keys>) {
    // SAFETY: called once, from the owner's `Drop`; the value is not used afterwards.
    unsafe { core::mem::ManuallyDrop::drop(this) }
}

/// The cached [`Plan`] without the detection path, for code that runs only after a key
/// schedule exists (so `plan()` has run): an uninitialised word would read as no AVX, which
/// only selects the 16-byte stores.
#[inline(always)]
pub(crate) fn plan_cached() -> Plan {
    Plan(PLAN.load(Ordering::Relaxed))
}

/// The heap-allocated schedules, as a two-word value (returned in registers: a large `Keys`
/// returned from an out-of-line call would make the caller build its `Aes` in memory and copy
/// it, hardware schedule included).
enum Boxed {
    Soft(Big<soft::Keys>),
    #[cfg(target_arch = "x86_64")]
    Vpaes(Big<vpaes::Keys>),
}

impl Boxed {
    /// The soft and vpaes schedules, built in place in their heap block; then the stack below
    /// is wiped ([`wipe_after_soft`]).
    #[inline(never)]
    fn expand(backend: Backend, key: &[u8]) -> Boxed {
        let keys = match backend {
            #[cfg(target_arch = "x86_64")]
            Backend::Vpaes => {
                let mut k = big(vpaes::ZERO);
                vpaes::expand_into(key, &mut k);
                Boxed::Vpaes(k)
            }
            _ => {
                let mut k = big(soft::Keys::ZERO);
                soft::expand_into(key, &mut k);
                Boxed::Soft(k)
            }
        };
        wipe_after_soft(true);
        keys
    }
}

/// Declares one dispatching function per kernel; the match is written once, here.
///
/// `small f`: on the hardware layout, `aesni::f` first gets the call and returns true if it
/// handled it (up to 12-24 blocks, in inline assembly that keeps round keys off the stack
/// and zeroes the one register that held a derived key: no stack wipe follows; see
/// `aesni::ctr_small`, `aesni::decrypt4`). `nostack f`: the same
/// for `aesni::f(backend, ..)`, which decides by backend and length whether it runs the call
/// wholly in inline assembly (`aesni::cbc_decrypt_nostack`, `aesni::encrypt_nostack`,
/// `aesni::decrypt_nostack`).
macro_rules! dispatch {
    ($( $(#[$m:meta])* fn $name:ident( $($arg:ident : $ty:ty),* ) on $buf:ident
        $(small $small:ident( $($sarg:ident),* ))?
        $(nostack $nostack:ident( $($narg:ident),* ))?; )*) => {$(
        $(#[$m])*
        #[inline]
        pub(crate) fn $name(backend: Backend, keys: &Keys, $($arg: $ty),*) {
            match keys {
                Keys::Soft(k, _) => {
                    let n = $buf.len();
                    soft::$name(k, $($arg),*);
                    wipe_after_soft(n <= SOFT_SMALL);
                }
                #[cfg(target_arch = "x86_64")]
                Keys::Vpaes(k, _) => {
                    let n = $buf.len();
                    vpaes::$name(k, $($arg),*);
                    wipe_after_soft(n <= SOFT_SMALL);
                }
                #[cfg(target_arch = "x86_64")]
                Keys::Hw(k) => {
                    $(if aesni::$small(k, $($sarg),*) {
                        return;
                    })?
                    $(if aesni::$nostack(backend, k, $($narg),*) {
                        return;
                    })?
                    match backend {
                        Backend::Vaes512 => {
                            vaes::zmm::$name(k, $($arg),*);
                            // SAFETY: AVX-512F (the vaes512 backend runs only with it).
                            unsafe { aesni::wipe_stack_zmm() };
                        }
                        Backend::Vaes256 => {
                            vaes256::$name(k, $($arg),*);
                            aesni::wipe_stack_xy();
                        }
                        _ => {
                            aesni::$name(k, $($arg),*);
                            aesni::wipe_stack_xy();
                        }
                    }
                }
            }
        }
    )*};
}

dispatch! {
    fn encrypt_blocks(buf: &mut [u8]) on buf
        small encrypt_small(buf) nostack encrypt_nostack(buf);
    fn decrypt_blocks(buf: &mut [u8]) on buf
        small decrypt_small(buf) nostack decrypt_nostack(buf);
    fn cbc_encrypt(iv: &mut [u8; 16], buf: &mut [u8]) on buf;
    fn cbc_decrypt(iv: &mut [u8; 16], buf: &mut [u8]) on buf
        small cbc_decrypt_small(iv, buf) nostack cbc_decrypt_nostack(iv, buf);
    fn ctr_xor(ctr: u128, buf: &mut [u8]) on buf
        small ctr_small(ctr, buf) nostack ctr_nostack(ctr, buf);
}

/// Calls of up to this many bytes take the short wipe after `soft` and `vpaes` kernels.
const SOFT_SMALL: usize = 48;

/// The stack wipe after `soft` and `vpaes` work, kernels and key setup
/// ([`aesni::wipe_stack_soft`] on x86-64: 1152 B after key setup and calls of up to
/// [`SOFT_SMALL`] bytes, else 2 KiB, and the vector registers; none elsewhere). The short wipe
/// keeps single blocks cheaper: with 2 KiB after every call a 16-byte `vpaes` ECB call took
/// 67 ns instead of 46.
/// IMPLEMENTATION NOTE (session 25): these two kept no wipe, on the grounds that their
/// schedules are in other bit layouts than the FIPS byte order `tests/residue.rs` looks for;
/// but their compiled kernels spill registers like any other (frames up to 952 bytes), and
/// `vpaes`'s last AES-192 decryption key is round key 0 itself, which that test, once it
/// looked for round key 0 on the stack, found after ECB decryption and after key setup.
#[inline(always)]
fn wipe_after_soft(small: bool) {
    #[cfg(target_arch = "x86_64")]
    aesni::wipe_stack_soft(small);
    let _ = small;
}

/// `dst = src ^ (E(ctr) || E(ctr+1) || ...)`, whole blocks, `src.len() == dst.len()`: the
/// buffer-to-buffer form of [`ctr_xor`]. `aesni` and `vaes256` read `src` and write `dst` in
/// one pass (`vaes::ctr_asm`), and so does `vaes512` (on AMD the zmm selector loop,
/// `aesni::ctr_nostack_b2b`; on Intel the compiled zmm kernel, `vaes::ctr_raw`); the other
/// backends, and messages of up to twelve blocks (in place, `aesni::ctr_small` runs them with
/// no stack wipe), copy and run in place.
#[inline]
pub(crate) fn ctr_xor_b2b(backend: Backend, keys: &Keys, ctr: u128, src: &[u8], dst: &mut [u8]) {
    debug_assert_eq!(src.len(), dst.len());
    match keys {
        #[cfg(target_arch = "x86_64")]
        Keys::Hw(k)
            if src.len() > 16 * aesni::SMALL_BLOCKS
                && matches!(
                    backend,
                    Backend::Aesni | Backend::Vaes256 | Backend::Vaes512
                ) =>
        {
            if aesni::ctr_nostack_b2b(backend, k, ctr, src, dst) {
                return;
            }
            match backend {
                Backend::Vaes512 => {
                    // Intel (AMD's whole call went to the assembly above).
                    vaes::zmm::ctr_xor_b2b(k, ctr, src, dst);
                    // SAFETY: AVX-512F (the vaes512 backend runs only with it).
                    unsafe { aesni::wipe_stack_zmm() };
                }
                Backend::Vaes256 => {
                    vaes256::ctr_xor_b2b(k, ctr, src, dst);
                    aesni::wipe_stack_xy();
                }
                _ => {
                    aesni::ctr_xor_b2b(k, ctr, src, dst);
                    aesni::wipe_stack_xy();
                }
            }
        }
        _ => {
            dst.copy_from_slice(src);
            ctr_xor(backend, keys, ctr, dst)
        }
    }
}

// ---------------------------------------------------------------------------------------------
// GCM kernels.

/// A GHASH key in the layout of the GHASH kernel that goes with a backend. Zeroized on drop
/// (each variant's own `Drop`).
// Inline like `Keys`: the hardware layout is used on every call and stays next to the AES
// schedule; the large software layout is boxed when an allocator exists.
#[allow(clippy::large_enum_variant)]
pub(crate) enum GhashKey {
    Soft(Big<ghash_soft::Key>),
    /// Integer-multiply GHASH on AVX2 lanes, and 32 byte-shuffle streams for long inputs
    /// (soft/vpaes on CPUs with AVX2).
    #[cfg(target_arch = "x86_64")]
    Avx2(Big<ghash_avx2::Key>),
    /// The scalar integer-multiply GHASH, and 16 SSSE3 byte-shuffle streams for long inputs
    /// (soft/vpaes on CPUs with SSSE3 but not AVX2; needs the allocator: 8 KiB of tables).
    #[cfg(all(target_arch = "x86_64", feature = "alloc"))]
    Ssse3(Big<ghash_ssse3::Key>),
    /// PCLMULQDQ on xmm (aesni; vaes256/vaes512 on a CPU without VPCLMULQDQ).
    #[cfg(target_arch = "x86_64")]
    Clmul(clmul::Key),
    /// VPCLMULQDQ with H^16..H^1 (vaes256/vaes512: the fused ymm/zmm kernel of
    /// [`vaes::gcm`]); carries the xmm key too, for short messages and short AAD.
    #[cfg(target_arch = "x86_64")]
    Vclmul(vaes::gcm::Key),
}

/// The key material of an `AesGcm`: its AES schedule and GHASH key. Boxed when an allocator
/// exists (feature `alloc`) and built in place in its heap block ([`GcmKeys::new`]), so neither
/// building an `AesGcm` nor moving one (returning it, storing it in a struct) leaves a copy of
/// round keys or key powers on the stack; zeroized when dropped (each field's own `Drop`).
/// Without `alloc` it is inline and every move copies it, as with `Aes`.
pub(crate) struct GcmKeys {
    pub(crate) aes: crate::Aes,
    pub(crate) ghash: GhashKey,
}

impl GcmKeys {
    /// The keys of `key` (length checked) on `backend` (available in `plan`).
    ///
    /// IMPLEMENTATION NOTE (issue 14, key residue): the heap block is allocated first and
    /// filled there: an all-zero GHASH key and an empty AES schedule (nothing secret), then
    /// the AES schedule computed in registers and stored once into the block
    /// (`Aes::fill_checked`, inlined), then H and its powers computed in place. Building the
    /// value in a local and returning it (before) left one copy of the schedule and of H in a
    /// dead frame, and a value built before the allocation travels to the heap by `memcpy`
    /// (`tests/residue.rs`, `no_round_keys_left_after_construction`).
    #[inline(always)]
    pub(crate) fn new(key: &[u8], backend: Backend, plan: Plan) -> Big<GcmKeys> {
        #[cfg(all(feature = "alloc", target_arch = "x86_64"))]
        let mut k = {
            let mut b = alloc::boxed::Box::<GcmKeys>::new_uninit();
            let p = b.as_mut_ptr();
            // SAFETY: `p` points to this box's memory, valid and aligned for a `GcmKeys`; both
            // fields are written (without reading or dropping what was there) before
            // `assume_init`; `fill_checked` then overwrites the initialised placeholder.
            unsafe {
                core::ptr::addr_of_mut!((*p).ghash).write(GhashKey::empty(backend));
                core::ptr::addr_of_mut!((*p).aes).write(crate::Aes::PLACEHOLDER);
                (*p).aes.fill_checked(key, backend, plan);
                b.assume_init()
            }
        };
        #[cfg(not(all(feature = "alloc", target_arch = "x86_64")))]
        let mut k = big(GcmKeys {
            aes: crate::Aes::build_checked(key, backend, plan),
            ghash: GhashKey::empty(backend),
        });
        k.init_ghash();
        k
    }

    /// The keys around an existing AES schedule (moved in: a move leaves a copy behind).
    pub(crate) fn from_aes(aes: crate::Aes) -> Big<GcmKeys> {
        let mut k = big(GcmKeys {
            ghash: GhashKey::empty(aes.backend()),
            aes,
        });
        k.init_ghash();
        k
    }

    #[inline]
    fn init_ghash(&mut self) {
        let (b, keys) = self.aes.kernels();
        self.ghash.init(b, keys);
    }
}

impl GhashKey {
    /// The PCLMULQDQ (xmm) key, which the xmm short-message and finishing kernels take: the
    /// key itself, or the one a VPCLMULQDQ key carries.
    #[cfg(target_arch = "x86_64")]
    #[inline]
    fn xmm(&self) -> Option<&clmul::Key> {
        match self {
            GhashKey::Clmul(h) => Some(h),
            GhashKey::Vclmul(h) => Some(&h.xmm),
            _ => None,
        }
    }

    /// An all-zero key of the layout `backend` pairs with on this CPU, for [`GhashKey::init`]
    /// (built where it will live, then filled: a key is never moved, so no copy is left).
    #[inline]
    pub(crate) fn empty(backend: Backend) -> GhashKey {
        let plan = plan();
        // The fused VAES kernel's safety rests on this check: a `Vclmul` key exists only where
        // the vaes256 backend (AVX2, VAES, AES-NI, SSE4.2) and VPCLMULQDQ + PCLMULQDQ run
        // (and, for the zmm kernel, the vaes512 backend: AVX-512F/BW/VL as well).
        #[cfg(target_arch = "x86_64")]
        if matches!(backend, Backend::Vaes256 | Backend::Vaes512) && plan.vclmul() {
            return GhashKey::Vclmul(vaes::gcm::Key::ZERO);
        }
        #[cfg(target_arch = "x86_64")]
        if matches!(
            backend,
            Backend::Aesni | Backend::Vaes256 | Backend::Vaes512
        ) && plan.clmul()
        {
            return GhashKey::Clmul(clmul::Key::ZERO);
        }
        #[cfg(target_arch = "x86_64")]
        if plan.avx2() {
            return GhashKey::Avx2(big(ghash_avx2::Key::ZERO));
        }
        #[cfg(all(target_arch = "x86_64", feature = "alloc"))]
        if ghash_ssse3::available() {
            return GhashKey::Ssse3(big(ghash_ssse3::Key::zero()));
        }
        let _ = (backend, plan);
        GhashKey::Soft(big(ghash_soft::Key::default()))
    }

    /// Computes H = E_K(0) with `keys` and its powers into this key, in place.
    pub(crate) fn init(&mut self, backend: Backend, keys: &Keys) {
        let mut h = [0u8; 16];
        encrypt_blocks(backend, keys, &mut h);
        match self {
            GhashKey::Soft(k) => k.fill(&h),
            #[cfg(target_arch = "x86_64")]
            GhashKey::Avx2(k) => k.fill(&h),
            #[cfg(all(target_arch = "x86_64", feature = "alloc"))]
            GhashKey::Ssse3(k) => k.fill(&h),
            #[cfg(target_arch = "x86_64")]
            GhashKey::Clmul(k) => {
                k.fill(&h);
                aesni::wipe_stack();
            }
            #[cfg(target_arch = "x86_64")]
            GhashKey::Vclmul(k) => {
                // H^32..H^17 only for the kernel that reads them: the 32-block batches of
                // `vaes512` on AMD (`vaes::zmm::gcm_seal`).
                k.fill(&h, backend == Backend::Vaes512 && crate::cpu::amd_like());
                aesni::wipe_stack();
            }
        }
        if self.is_software() {
            wipe_after_soft_ghash(true);
        }
        zeroize::Zeroize::zeroize(&mut h);
    }

    /// The key for the GHASH kernel `backend` pairs with on this CPU (tests).
    #[cfg(test)]
    pub(crate) fn new(backend: Backend, keys: &Keys) -> GhashKey {
        let mut k = GhashKey::empty(backend);
        k.init(backend, keys);
        k
    }

    /// The software GHASH key regardless of the CPU (tests: pairs any AES backend with it).
    #[cfg(test)]
    pub(crate) fn soft_from_h(h: &[u8; 16]) -> GhashKey {
        GhashKey::Soft(big(ghash_soft::Key::new(h)))
    }

    /// The software GHASH key of `kernel` ("soft", "avx2", "ssse3") for the subkey `h`, if
    /// this CPU runs it, whatever the CPU would pick (`hazmat::ghash`, tests).
    pub(crate) fn software(kernel: &str, h: &[u8; 16]) -> Option<GhashKey> {
        match kernel {
            "soft" => {
                let mut k = big(ghash_soft::Key::default());
                k.fill(h);
                Some(GhashKey::Soft(k))
            }
            #[cfg(target_arch = "x86_64")]
            "avx2" if ghash_avx2::available() => {
                let mut k = big(ghash_avx2::Key::ZERO);
                k.fill(h);
                Some(GhashKey::Avx2(k))
            }
            #[cfg(all(target_arch = "x86_64", feature = "alloc"))]
            "ssse3" if ghash_ssse3::available() => {
                let mut k = big(ghash_ssse3::Key::zero());
                k.fill(h);
                Some(GhashKey::Ssse3(k))
            }
            _ => None,
        }
    }

    /// The kernel's name, for tests and reports ("soft", "avx2", "ssse3", "clmul" or "vclmul").
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            GhashKey::Soft(_) => "soft",
            #[cfg(target_arch = "x86_64")]
            GhashKey::Avx2(_) => "avx2",
            #[cfg(all(target_arch = "x86_64", feature = "alloc"))]
            GhashKey::Ssse3(_) => "ssse3",
            #[cfg(target_arch = "x86_64")]
            GhashKey::Clmul(_) => "clmul",
            #[cfg(target_arch = "x86_64")]
            GhashKey::Vclmul(_) => "vclmul",
        }
    }

    /// One of the software kernels (`soft`, `avx2`, `ssse3`), which the `soft` and `vpaes`
    /// backends use: compiled code whose frames hold values derived from H, wiped by
    /// [`wipe_after_soft_ghash`].
    #[inline(always)]
    fn is_software(&self) -> bool {
        match self {
            #[cfg(target_arch = "x86_64")]
            GhashKey::Clmul(_) | GhashKey::Vclmul(_) => false,
            _ => true,
        }
    }
}

/// Whether a GHASH of `len` bytes on `gk` runs the interleaved streams of `ghash_avx2` or
/// `ghash_ssse3` (2 KiB of state in the frame), which need the long wipe.
#[inline(always)]
fn soft_ghash_streams(gk: &GhashKey, len: usize) -> bool {
    match gk {
        #[cfg(target_arch = "x86_64")]
        GhashKey::Avx2(_) => len >= 16 * ghash_avx2::STREAM_MIN,
        #[cfg(all(target_arch = "x86_64", feature = "alloc"))]
        GhashKey::Ssse3(_) => len >= 16 * ghash_ssse3::STREAM_MIN,
        _ => false,
    }
}

/// The stack wipe after the software GHASH kernels and the generic GCM path that runs them
/// (on x86-64; none elsewhere, like [`wipe_after_soft`]): [`aesni::SOFT_WIPE`] bytes after
/// the ordinary path (one GHASH call, 864 B deep; the generic path without streams, which
/// leaves at most 1504 B), [`aesni::SOFT_GCM_WIPE`] after the streams (`long`) and key setup.
///
/// IMPLEMENTATION NOTE (session 26): until then these kernels had no wipe of their own.
/// Painting the stack and looking at what a call left
/// (`stack_depth::entry_points_leave_nothing_on_the_stack`) found hundreds of bytes, down to
/// 5.5 KiB, after every entry point: the AVX2 kernel's frames (3168 B for one block: its
/// 2 KiB of stream state was reserved even when the streams did not run) below the 1152-byte
/// wipe of the AES call that ends a message. The streams are now in frames of their own
/// (`ghash_pshufb::ghash`, [`streamed_gcm`]), and the paths that short messages take
/// (`gcm_small`, `gcm_finish`) add no wipe: they hash with [`ghash_in`] and end with an AES
/// call whose own 1152-byte wipe, from the same frame, covers it. Cost (`aesx bench --ops
/// gcm-enc,gcm-dec --backends vpaes,soft`): see the README's "Key material in memory".
#[inline(always)]
fn wipe_after_soft_ghash(long: bool) {
    #[cfg(target_arch = "x86_64")]
    if long {
        aesni::wipe_stack_soft_gcm();
    } else {
        aesni::wipe_stack_soft(false);
    }
    let _ = long;
}

/// `acc <- GHASH update over data` (whole blocks). Every kernel is followed by a stack wipe
/// (the software ones by [`wipe_after_soft_ghash`]).
#[inline]
pub(crate) fn ghash(gk: &GhashKey, acc: &mut u128, data: &[u8]) {
    ghash_in(gk, acc, data);
    if gk.is_software() && !data.is_empty() {
        wipe_after_soft_ghash(soft_ghash_streams(gk, data.len()));
    }
}

/// [`ghash`] without the stack wipe after the software kernels: for callers that wipe with
/// [`wipe_after_soft_ghash`], or whose own wipe of at least [`aesni::SOFT_WIPE_SMALL`] bytes
/// follows from the same frame (the ordinary path writes at most 864 bytes, `stack_depth`).
#[inline]
fn ghash_in(gk: &GhashKey, acc: &mut u128, data: &[u8]) {
    debug_assert!(data.len().is_multiple_of(16));
    match gk {
        GhashKey::Soft(k) => ghash_soft::ghash(k, acc, data),
        #[cfg(target_arch = "x86_64")]
        GhashKey::Avx2(k) => ghash_avx2::ghash(k, acc, data),
        #[cfg(all(target_arch = "x86_64", feature = "alloc"))]
        GhashKey::Ssse3(k) => ghash_ssse3::ghash(k, acc, data),
        #[cfg(target_arch = "x86_64")]
        GhashKey::Clmul(k) => {
            clmul::ghash(k, acc, data);
            aesni::wipe_stack_gcm();
        }
        // Short inputs (AAD, lengths, partial blocks) on xmm: no ymm setup for one block.
        #[cfg(target_arch = "x86_64")]
        GhashKey::Vclmul(k) => {
            ghash_vclmul(k, acc, data);
            aesni::wipe_stack_gcm();
        }
    }
}

/// Hashes `aad` (whole blocks, usually empty or one or two) into `acc`, then encrypts whole
/// blocks with the CTR32 keystream starting at counter block `ctr` and hashes the ciphertext.
/// One call (and one stack wipe) for both. `public`: `ctr`'s inc32 word is public (the nonce
/// was 12 bytes, so it counts blocks from 2); false when J0 came from GHASH, so no kernel
/// branches on it.
#[allow(clippy::too_many_arguments)]
#[inline]
pub(crate) fn gcm_seal(
    backend: Backend,
    keys: &Keys,
    gk: &GhashKey,
    ctr: &[u8; 16],
    public: bool,
    acc: &mut u128,
    aad: &[u8],
    buf: &mut [u8],
) {
    debug_assert!(buf.len().is_multiple_of(16) && aad.len().is_multiple_of(16));
    match (keys, gk) {
        #[cfg(target_arch = "x86_64")]
        (Keys::Hw(k), GhashKey::Clmul(h)) => {
            if !aad.is_empty() {
                clmul::ghash(h, acc, aad);
            }
            gcm_aesni::seal(k, h, ctr, public, acc, buf);
            aesni::wipe_stack_gcm();
        }
        #[cfg(target_arch = "x86_64")]
        (Keys::Hw(k), GhashKey::Vclmul(h)) => {
            if !aad.is_empty() {
                ghash_vclmul(h, acc, aad);
            }
            vclmul_seal_open(backend, k, h, ctr, public, acc, buf, true);
            aesni::wipe_stack_gcm();
        }
        _ => generic_seal_open::<true>(backend, keys, gk, ctr, acc, aad, buf),
    }
}

/// The fused VAES + VPCLMULQDQ kernel of [`vaes::gcm`] at the backend's width (zmm on
/// `vaes512`, ymm on `vaes256`), whole blocks, no stack wipe (the caller wipes). `public`:
/// the counter's inc32 word is public (a 12-byte nonce), which the ymm loop uses.
#[cfg(target_arch = "x86_64")]
#[allow(clippy::too_many_arguments)]
#[inline]
fn vclmul_seal_open(
    backend: Backend,
    k: &aesni::Keys,
    h: &vaes::gcm::Key,
    ctr: &[u8; 16],
    public: bool,
    acc: &mut u128,
    buf: &mut [u8],
    seal: bool,
) {
    if zmm_gcm(backend, buf.len()) {
        // SAFETY: a `Vclmul` key exists only where VPCLMULQDQ and PCLMULQDQ run
        // (`GhashKey::empty`), and the `vaes512` backend only where AVX-512F/BW/VL, VAES,
        // AES-NI, AVX2 and SSE4.2 do (`Backend::is_available`).
        unsafe {
            if seal {
                vaes::zmm::gcm_seal(k, h, ctr, public, acc, buf)
            } else {
                vaes::zmm::gcm_open(k, h, ctr, public, acc, buf)
            }
            // Round keys and key powers in the registers VZEROALL (in the caller's wipe) does
            // not reach.
            aesni::zero_zmm16_31();
        }
    } else if seal {
        vaes::ymm::gcm_seal(k, h, ctr, public, acc, buf)
    } else {
        vaes::ymm::gcm_open(k, h, ctr, public, acc, buf)
    }
}

/// [`gcm_seal`] (`seal`) or [`gcm_open`] from `src` into `dst` (whole blocks, the same
/// length, separate buffers). The fused kernels (`vaes512` with either vendor's tuning,
/// `vaes256`, and since session 26 `aesni`'s [`gcm_aesni`]) read the one and write the other
/// in one pass; `vpaes` and `soft` work in place, so `src` is copied into `dst` first.
#[allow(clippy::too_many_arguments)]
#[inline]
pub(crate) fn gcm_b2b(
    backend: Backend,
    keys: &Keys,
    gk: &GhashKey,
    ctr: &[u8; 16],
    public: bool,
    acc: &mut u128,
    aad: &[u8],
    (src, dst): (&[u8], &mut [u8]),
    seal: bool,
) {
    debug_assert!(src.len() == dst.len() && aad.len().is_multiple_of(16));
    #[cfg(target_arch = "x86_64")]
    if let (Keys::Hw(k), GhashKey::Vclmul(h)) = (keys, gk) {
        if !aad.is_empty() {
            ghash_vclmul(h, acc, aad);
        }
        if zmm_gcm(backend, src.len()) {
            // SAFETY: as in `vclmul_seal_open`.
            unsafe {
                vaes::zmm::gcm_b2b(k, h, ctr, public, acc, src, dst, seal);
                aesni::zero_zmm16_31();
            }
        } else {
            vaes::ymm::gcm_b2b(k, h, ctr, public, acc, src, dst, seal);
        }
        aesni::wipe_stack_gcm();
        return;
    }
    #[cfg(target_arch = "x86_64")]
    if let (Keys::Hw(k), GhashKey::Clmul(h)) = (keys, gk) {
        if !aad.is_empty() {
            clmul::ghash(h, acc, aad);
        }
        if seal {
            gcm_aesni::seal_b2b(k, h, ctr, public, acc, src, dst);
        } else {
            gcm_aesni::open_b2b(k, h, ctr, public, acc, src, dst);
        }
        aesni::wipe_stack_gcm();
        return;
    }
    dst.copy_from_slice(src);
    if seal {
        gcm_seal(backend, keys, gk, ctr, public, acc, aad, dst)
    } else {
        gcm_open(backend, keys, gk, ctr, public, acc, aad, dst)
    }
}

/// Whether a GCM call of `len` bytes on `backend` runs the zmm kernel, else the ymm one (of
/// the fused kernels: [`vclmul_seal_open`], [`gcm_b2b`]). Below 256 bytes (the short-message
/// path ends at 80) the ymm kernel is faster on the Intel AVX-512 guest: its tails of 6-15
/// blocks take whole ymm registers where the zmm kernel masks (session 22: 96 B 1.9 against
/// 2.35 GB/s, 128 B 2.9 against 3.1, level at 256 B). AMD keeps the zmm kernel there: not
/// measured on a Zen 4.
#[cfg(target_arch = "x86_64")]
#[inline]
fn zmm_gcm(backend: Backend, len: usize) -> bool {
    backend == Backend::Vaes512 && (len >= ZMM_GCM_MIN || crate::cpu::amd_like())
}

/// Message bytes from which `vaes512` runs the zmm GCM kernel ([`zmm_gcm`]).
#[cfg(target_arch = "x86_64")]
const ZMM_GCM_MIN: usize = 256;

/// GHASH with the VAES key, no stack wipe (the caller wipes): short inputs on xmm.
#[cfg(target_arch = "x86_64")]
#[inline]
fn ghash_vclmul(k: &vaes::gcm::Key, acc: &mut u128, data: &[u8]) {
    // One 16-block ymm batch or more (`vaes::gcm::BATCH` is 32 since session 16: the zmm
    // batch on AMD).
    if data.len() >= 16 * 16 {
        vaes::ymm::ghash(k, acc, data);
    } else {
        clmul::ghash(&k.xmm, acc, data);
    }
}

/// Hashes `aad` (whole blocks) and then whole ciphertext blocks into `acc`, and decrypts the
/// latter with the CTR32 keystream starting at counter block `ctr` (`public` as for
/// [`gcm_seal`]).
#[allow(clippy::too_many_arguments)]
#[inline]
pub(crate) fn gcm_open(
    backend: Backend,
    keys: &Keys,
    gk: &GhashKey,
    ctr: &[u8; 16],
    public: bool,
    acc: &mut u128,
    aad: &[u8],
    buf: &mut [u8],
) {
    debug_assert!(buf.len().is_multiple_of(16) && aad.len().is_multiple_of(16));
    match (keys, gk) {
        #[cfg(target_arch = "x86_64")]
        (Keys::Hw(k), GhashKey::Clmul(h)) => {
            if !aad.is_empty() {
                clmul::ghash(h, acc, aad);
            }
            gcm_aesni::open(k, h, ctr, public, acc, buf);
            aesni::wipe_stack_gcm();
        }
        #[cfg(target_arch = "x86_64")]
        (Keys::Hw(k), GhashKey::Vclmul(h)) => {
            if !aad.is_empty() {
                ghash_vclmul(h, acc, aad);
            }
            vclmul_seal_open(backend, k, h, ctr, public, acc, buf, false);
            aesni::wipe_stack_gcm();
        }
        _ => generic_seal_open::<false>(backend, keys, gk, ctr, acc, aad, buf),
    }
}

/// Largest message (bytes) and associated data (bytes) of [`gcm_small`]: with the lengths
/// block that is at most 8 GHASH blocks, one batch of the xmm kernel.
pub(crate) const SMALL_MSG: usize = 5 * 16;
pub(crate) const SMALL_AAD: usize = 2 * 16;

/// A whole small message in one call (the short-message path): `aad` is the associated data
/// zero-padded to whole blocks (at most [`SMALL_AAD`] bytes), `buf` the message zero-padded to
/// whole blocks (at most [`SMALL_MSG`] bytes) of which the first `len` are real. Encrypts or
/// decrypts `buf` with CTR32 from `inc32(j0)`, hashes the AAD, the ciphertext (padding
/// zeroed) and `lengths`, and returns the full tag `E(j0) ^ S`. Bytes of `buf` past `len`
/// are left unspecified.
#[allow(clippy::too_many_arguments)]
#[inline]
pub(crate) fn gcm_small(
    backend: Backend,
    keys: &Keys,
    gk: &GhashKey,
    j0: &[u8; 16],
    aad: &[u8],
    buf: &mut [u8],
    len: usize,
    lengths: &[u8; 16],
    seal: bool,
) -> [u8; 16] {
    debug_assert!(aad.len() <= SMALL_AAD && aad.len().is_multiple_of(16));
    debug_assert!(buf.len() <= SMALL_MSG && buf.len().is_multiple_of(16) && len <= buf.len());
    // Short messages: the xmm kernel (one AES pass of 2-8 lanes, one reduction), with a
    // VPCLMULQDQ key too.
    #[cfg(target_arch = "x86_64")]
    if let (Keys::Hw(k), Some(h)) = (keys, gk.xmm()) {
        let t = gcm_aesni::small(k, h, j0, aad, buf, len, lengths, seal);
        aesni::wipe_stack_gcm();
        return t;
    }
    // The software GHASH kernels without their own wipe: the one after `encrypt_blocks` of
    // one block, from this frame, covers them (`ghash_in`).
    let mut acc = 0u128;
    ghash_in(gk, &mut acc, aad);
    let mut ctr = *j0;
    let c = inc32_word(&ctr).wrapping_add(1);
    ctr[12..].copy_from_slice(&c.to_be_bytes());
    if !seal {
        ghash_in(gk, &mut acc, buf);
    }
    ctr32_xor(backend, keys, &ctr, buf);
    if seal {
        buf[len..].fill(0);
        ghash_in(gk, &mut acc, buf);
    }
    ghash_in(gk, &mut acc, lengths);
    let mut t = *j0;
    encrypt_blocks(backend, keys, &mut t);
    t.iter_mut()
        .zip(acc.to_be_bytes())
        .for_each(|(x, y)| *x ^= y);
    zeroize::Zeroize::zeroize(&mut acc);
    t
}

/// The end of a message in one call: `tail` is the trailing partial block zero-padded to 16
/// bytes (or empty), of which the first `len` are real, keyed with counter block `ctr`;
/// encrypts or decrypts it, hashes its ciphertext (padding zeroed) and `lengths` into `acc`,
/// and returns the full tag `E(j0) ^ S`. Bytes of `tail` past `len` are left unspecified.
/// (One kernel call and one stack wipe where there were four.)
#[allow(clippy::too_many_arguments)]
#[inline]
pub(crate) fn gcm_finish(
    backend: Backend,
    keys: &Keys,
    gk: &GhashKey,
    j0: &[u8; 16],
    ctr: &[u8; 16],
    acc: &mut u128,
    tail: &mut [u8],
    len: usize,
    lengths: &[u8; 16],
    seal: bool,
) -> [u8; 16] {
    debug_assert!((tail.len() == 16 && len < 16) || (tail.is_empty() && len == 0));
    #[cfg(target_arch = "x86_64")]
    if let (Keys::Hw(k), Some(h)) = (keys, gk.xmm()) {
        let t = gcm_aesni::finish(k, h, j0, ctr, *acc, tail, len, lengths, seal);
        aesni::wipe_stack_gcm();
        *acc = 0;
        return t;
    }
    // As in `gcm_small`: the wipe after `encrypt_blocks` covers the GHASH calls.
    if !tail.is_empty() {
        if !seal {
            ghash_in(gk, acc, tail);
        }
        ctr32_xor(backend, keys, ctr, tail);
        if seal {
            tail[len..].fill(0);
            ghash_in(gk, acc, tail);
        }
    }
    ghash_in(gk, acc, lengths);
    let mut t = *j0;
    encrypt_blocks(backend, keys, &mut t);
    t.iter_mut()
        .zip(acc.to_be_bytes())
        .for_each(|(x, y)| *x ^= y);
    zeroize::Zeroize::zeroize(acc);
    t
}

/// [`gcm_finish`] for a streamed message whose last, partial block `part` (its first `len`
/// bytes; the rest zero) is already encrypted and still to be hashed. On the hardware
/// backends one call hashes it, the lengths block and makes the tag: the finishing kernel
/// hashes a ciphertext block before decrypting it, so `part` goes in as one (a copy; the
/// decryption lands in that copy, wiped on return). Elsewhere GHASH takes `part` first.
#[allow(clippy::too_many_arguments)]
pub(crate) fn gcm_finish_part(
    backend: Backend,
    keys: &Keys,
    gk: &GhashKey,
    j0: &[u8; 16],
    acc: &mut u128,
    part: &[u8; 16],
    len: usize,
    lengths: &[u8; 16],
) -> [u8; 16] {
    debug_assert!(len > 0 && len < 16);
    #[cfg(target_arch = "x86_64")]
    if matches!(keys, Keys::Hw(_)) && gk.xmm().is_some() {
        // `gcm_finish`'s hardware path, opening a copy of `part` (the counter is irrelevant).
        let mut copy = Blocks::<16>::new();
        copy.0.copy_from_slice(part);
        return gcm_finish(
            backend,
            keys,
            gk,
            j0,
            j0,
            acc,
            &mut copy.0,
            len,
            lengths,
            false,
        );
    }
    let t = finish_part_sw(backend, keys, gk, j0, acc, part, lengths);
    wipe_after_soft(true);
    t
}

/// The software path of [`gcm_finish_part`], out of line so that its frame (E(J0) and GHASH
/// state pass through it) lies below the caller's, where the wipe after it reaches.
///
/// IMPLEMENTATION NOTE (session 28): inlined, this path's locals sat in `gcm_finish_part`'s
/// own frame, which no wipe covers; an unrelated change elsewhere in the crate (AES-192's key
/// expansion) made that frame deeper under the workspace's feature set, and
/// `stack_depth::entry_points_leave_nothing_on_the_stack` found 28 bytes left 584 bytes down
/// after the `soft` backend's `gcm_finish_part`.
#[inline(never)]
fn finish_part_sw(
    backend: Backend,
    keys: &Keys,
    gk: &GhashKey,
    j0: &[u8; 16],
    acc: &mut u128,
    part: &[u8; 16],
    lengths: &[u8; 16],
) -> [u8; 16] {
    ghash(gk, acc, part);
    gcm_finish(backend, keys, gk, j0, j0, acc, &mut [], 0, lengths, true)
}

/// A whole one-shot message after J0: [`gcm_seal`] / [`gcm_open`] of `aad` and `body` from
/// counter block `ctr`, then [`gcm_finish`] of the partial block `tail` (counter `ctr_tail`),
/// lengths and tag. On the hardware backends the kernels run back to back from this frame
/// and one stack wipe follows them both (it covers the deeper of the two frames).
///
/// IMPLEMENTATION NOTE: session 3 measured this single wipe faster (96 B seal 120 ns against
/// 146) but `tests/residue.rs` then found round keys and H*x on the stack. Their source was
/// not these kernels but the `AesGcm` construction (the key assembled in `with_backend`'s
/// frame and copied out, never wiped), which the full 1.5 KiB wipe after `gcm_finish`
/// happened to reach; the key is now built in place in its heap block (`GcmKeys::new`), and
/// `stack_depth::kernels_stay_within_their_wipes` checks that every GCM kernel stays inside
/// [`aesni::GCM_WIPE`].
#[allow(clippy::too_many_arguments)]
#[inline]
pub(crate) fn gcm_oneshot(
    backend: Backend,
    keys: &Keys,
    gk: &GhashKey,
    j0: &[u8; 16],
    ctr: &[u8; 16],
    public: bool,
    ctr_tail: &[u8; 16],
    acc: &mut u128,
    aad: &[u8],
    body: &mut [u8],
    tail: &mut [u8],
    len: usize,
    lengths: &[u8; 16],
    seal: bool,
) -> [u8; 16] {
    debug_assert!(body.len().is_multiple_of(16) && aad.len().is_multiple_of(16));
    debug_assert!((tail.len() == 16 && len < 16) || (tail.is_empty() && len == 0));
    #[cfg(target_arch = "x86_64")]
    if let Keys::Hw(k) = keys {
        let t = match gk {
            GhashKey::Clmul(h) => {
                if !aad.is_empty() {
                    clmul::ghash(h, acc, aad);
                }
                if seal {
                    gcm_aesni::seal(k, h, ctr, public, acc, body);
                } else {
                    gcm_aesni::open(k, h, ctr, public, acc, body);
                }
                Some(gcm_aesni::finish(
                    k, h, j0, ctr_tail, *acc, tail, len, lengths, seal,
                ))
            }
            GhashKey::Vclmul(h) => {
                if !aad.is_empty() {
                    ghash_vclmul(h, acc, aad);
                }
                vclmul_seal_open(backend, k, h, ctr, public, acc, body, seal);
                Some(gcm_aesni::finish(
                    k, &h.xmm, j0, ctr_tail, *acc, tail, len, lengths, seal,
                ))
            }
            _ => None,
        };
        if let Some(t) = t {
            aesni::wipe_stack_gcm();
            *acc = 0;
            return t;
        }
    }
    if seal {
        gcm_seal(backend, keys, gk, ctr, public, acc, aad, body);
    } else {
        gcm_open(backend, keys, gk, ctr, public, acc, aad, body);
    }
    gcm_finish(
        backend, keys, gk, j0, ctr_tail, acc, tail, len, lengths, seal,
    )
}

/// The inc32 word of a counter block: its last four bytes, big-endian.
#[inline(always)]
pub(crate) fn inc32_word(ctr: &[u8; 16]) -> u32 {
    u32::from_be_bytes([ctr[12], ctr[13], ctr[14], ctr[15]])
}

/// Writes block `v` (a big-endian number) into `dst` with one 16-byte store.
///
/// The kernels read a counter, J0 or lengths block with one 16-byte load. A block assembled in
/// memory from pieces (an 8-byte and a 4-byte store, a byte store of the last counter byte, or
/// the two 8-byte halves of a `u128` returned in registers) cannot be forwarded to that load
/// while the pieces are still in the store buffer: the load waits until they reach the cache,
/// about 20 cycles, on the critical path of a short message (session 22, Intel: J0 and the
/// counters built this way made a 16-byte seal 1.6x faster). The store is volatile so the
/// compiler keeps it one vector store instead of splitting it into the two halves it came from.
#[inline(always)]
pub(crate) fn put_block(dst: &mut [u8; 16], v: u128) {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{__m128i, _mm_set_epi64x};
        // SAFETY: SSE2 is part of x86_64; `dst` is 16 writable bytes, and `[u8; 16]` has
        // alignment 1 (an unaligned store). Bytes 0-7 are the high half of `v`, big-endian.
        unsafe {
            let x = _mm_set_epi64x(
                (v as u64).swap_bytes() as i64,
                ((v >> 64) as u64).swap_bytes() as i64,
            );
            core::ptr::write_volatile(
                dst.as_mut_ptr().cast::<[u8; 16]>(),
                core::mem::transmute::<__m128i, [u8; 16]>(x),
            )
        };
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        *dst = v.to_be_bytes();
    }
}

/// Zeroes `b` with one 16-byte volatile store on x86_64 (`zeroize` on a `[u8; 16]` writes it a
/// byte at a time).
#[inline(always)]
pub(crate) fn wipe_block(b: &mut [u8; 16]) {
    #[cfg(target_arch = "x86_64")]
    put_block(b, 0);
    #[cfg(not(target_arch = "x86_64"))]
    zeroize::Zeroize::zeroize(b);
}

/// Stack scratch of `N` bytes (a multiple of 16) for the short inputs and partial blocks the
/// GCM mode code copies, zeroed on drop with one 16-byte volatile store per block.
/// (`zeroize` on a byte array writes it a byte at a time: 64 stores for the padded AAD and 80
/// for the short-message buffer, several nanoseconds of a short seal.)
#[repr(C, align(16))]
pub(crate) struct Blocks<const N: usize>(pub(crate) [u8; N]);

impl<const N: usize> Blocks<N> {
    #[inline(always)]
    pub(crate) fn new() -> Self {
        const { assert!(N.is_multiple_of(16)) };
        Blocks([0; N])
    }
}

impl<const N: usize> Drop for Blocks<N> {
    #[inline(always)]
    fn drop(&mut self) {
        #[cfg(target_arch = "x86_64")]
        {
            let p = self.0.as_mut_ptr().cast::<[u8; 16]>();
            for i in 0..N / 16 {
                // SAFETY: block `i < N / 16` of the `N` bytes owned here; `[u8; 16]` needs no
                // alignment (the struct's 16 lets the compiler use aligned vector stores).
                unsafe { core::ptr::write_volatile(p.add(i), [0; 16]) };
            }
            core::sync::atomic::compiler_fence(Ordering::SeqCst);
        }
        #[cfg(not(target_arch = "x86_64"))]
        zeroize::Zeroize::zeroize(&mut self.0);
    }
}

/// Blocks per step of the generic GCM kernel (a multiple of every ECB batch width).
const GENERIC_CHUNK: usize = 32;

/// The counter blocks `ctr, inc32(ctr), ...` for `out.len() / 16` blocks, branch-free.
#[inline]
fn ctr32_blocks(ctr: &[u8; 16], out: &mut [u8]) {
    let c = inc32_word(ctr);
    for (i, b) in out.chunks_exact_mut(16).enumerate() {
        b[..12].copy_from_slice(&ctr[..12]);
        b[12..].copy_from_slice(&c.wrapping_add(i as u32).to_be_bytes());
    }
}

/// `buf ^= E(ctr) || E(inc32(ctr)) || ...` (whole blocks), on any backend: ECB over counter
/// blocks. Used for partial blocks and by the generic kernel.
pub(crate) fn ctr32_xor(backend: Backend, keys: &Keys, ctr: &[u8; 16], buf: &mut [u8]) {
    // One block (a streamed message's partial block) has no counter step, so the 128-bit CTR
    // kernel gives the same keystream, and on the hardware backends its short path runs in
    // assembly with no stack to wipe, where this path fills and wipes a 512-byte scratch and
    // wipes the stack after ECB (session 22: a 100-byte streamed seal 1.3x faster).
    if buf.len() == 16 {
        return ctr_xor(backend, keys, u128::from_be_bytes(*ctr), buf);
    }
    ctr32_xor_with(&mut Keystream::default(), backend, keys, ctr, buf);
}

/// The keystream scratch of [`ctr32_xor`]: [`GENERIC_CHUNK`] blocks, zeroed on drop with
/// 16-byte volatile stores.
///
/// IMPLEMENTATION NOTE: a byte array's `zeroize` stores a byte at a time; with a fresh scratch
/// per 32-block chunk of the generic GCM kernel that was 16 stores a block, about a sixth of a
/// `vpaes` GCM seal (the profile of a 16 KiB seal). The generic kernel now keeps one scratch
/// for the whole message ([`ctr_and_hash`]).
#[derive(Default)]
struct Keystream([u128; GENERIC_CHUNK]);

impl Keystream {
    fn bytes(&mut self) -> &mut [u8] {
        // SAFETY: `[u128; N]` is `16 * N` initialized bytes, and `u8` has no alignment
        // requirement; the borrow of `self` covers the slice's lifetime.
        unsafe {
            core::slice::from_raw_parts_mut(self.0.as_mut_ptr().cast::<u8>(), 16 * GENERIC_CHUNK)
        }
    }
}

impl Drop for Keystream {
    fn drop(&mut self) {
        for w in self.0.iter_mut() {
            // SAFETY: `w` is a valid, aligned `u128`.
            unsafe { core::ptr::write_volatile(w, 0) };
        }
        core::sync::atomic::compiler_fence(core::sync::atomic::Ordering::SeqCst);
    }
}

/// [`ctr32_xor`] with the caller's scratch.
fn ctr32_xor_with(
    ks: &mut Keystream,
    backend: Backend,
    keys: &Keys,
    ctr: &[u8; 16],
    buf: &mut [u8],
) {
    debug_assert!(buf.len().is_multiple_of(16));
    let ks = ks.bytes();
    let mut c = *ctr;
    for chunk in buf.chunks_mut(16 * GENERIC_CHUNK) {
        let ks = &mut ks[..chunk.len()];
        ctr32_blocks(&c, ks);
        encrypt_blocks(backend, keys, ks);
        chunk.iter_mut().zip(ks.iter()).for_each(|(d, k)| *d ^= k);
        let n = u32::from_be_bytes(c[12..].try_into().unwrap());
        c[12..].copy_from_slice(&n.wrapping_add(GENERIC_CHUNK as u32).to_be_bytes());
    }
}

/// [`gcm_seal`] (`SEAL`) or [`gcm_open`] without a fused kernel: GHASH of `aad`, then
/// [`generic_gcm`], then the stack wipe after the software GHASH kernels (from this frame, so
/// that it covers `generic_gcm`'s); nothing at all for an empty call.
#[inline]
fn generic_seal_open<const SEAL: bool>(
    backend: Backend,
    keys: &Keys,
    gk: &GhashKey,
    ctr: &[u8; 16],
    acc: &mut u128,
    aad: &[u8],
    buf: &mut [u8],
) {
    if aad.is_empty() && buf.is_empty() {
        return;
    }
    ghash_in(gk, acc, aad);
    generic_gcm::<SEAL>(backend, keys, gk, ctr, acc, buf);
    wipe_after_soft_ghash(soft_ghash_streams(gk, aad.len()) || soft_ghash_streams(gk, buf.len()));
}

/// GCM over whole blocks for backends without a fused kernel: per 32-block chunk, the CTR32
/// keystream by ECB over counter blocks, then GHASH of the ciphertext (seal) or before the
/// XOR (open).
fn generic_gcm<const SEAL: bool>(
    backend: Backend,
    keys: &Keys,
    gk: &GhashKey,
    ctr: &[u8; 16],
    acc: &mut u128,
    buf: &mut [u8],
) {
    // Long messages on the AVX2 or SSSE3 GHASH: its stream path across the chunks (which are
    // whole batches of its 32 or 16 blocks, but the last), finished once.
    #[cfg(all(target_arch = "x86_64", feature = "alloc"))]
    match gk {
        GhashKey::Avx2(k) if buf.len() >= 16 * ghash_avx2::STREAM_MIN => {
            let a = *acc;
            *acc = streamed_gcm::<SEAL, _, _>(
                move || ghash_avx2::streams(k, a),
                backend,
                keys,
                ctr,
                buf,
            );
            return;
        }
        GhashKey::Ssse3(k) if buf.len() >= 16 * ghash_ssse3::STREAM_MIN => {
            let a = *acc;
            *acc = streamed_gcm::<SEAL, _, _>(
                move || ghash_ssse3::streams(k, a),
                backend,
                keys,
                ctr,
                buf,
            );
            return;
        }
        _ => {}
    }
    ctr_and_hash::<SEAL>(backend, keys, ctr, buf, |d| ghash_in(gk, acc, d));
}

/// [`generic_gcm`] with its GHASH in the streams `streams` makes (the chunks are whole batches
/// of them, but the last); returns the GHASH state. Not inlined, and the streams made here:
/// their 2 KiB of state stays out of the frame of the path without streams
/// ([`wipe_after_soft_ghash`]).
#[cfg(all(target_arch = "x86_64", feature = "alloc"))]
#[inline(never)]
fn streamed_gcm<'k, const SEAL: bool, W: ghash_pshufb::Width, K: ghash_pshufb::StreamKey + 'k>(
    streams: impl FnOnce() -> ghash_pshufb::Streams<'k, W, K>,
    backend: Backend,
    keys: &Keys,
    ctr: &[u8; 16],
    buf: &mut [u8],
) -> u128 {
    const { assert!(GENERIC_CHUNK.is_multiple_of(W::LANES)) };
    let mut st = streams();
    ctr_and_hash::<SEAL>(backend, keys, ctr, buf, |d| st.update(d));
    st.finish()
}

/// [`generic_gcm`]'s loop: per chunk, the CTR32 keystream XOR and `hash` of the ciphertext
/// (after the XOR when sealing, before it when opening).
#[inline(always)]
fn ctr_and_hash<const SEAL: bool>(
    backend: Backend,
    keys: &Keys,
    ctr: &[u8; 16],
    buf: &mut [u8],
    mut hash: impl FnMut(&[u8]),
) {
    let mut ks = Keystream::default();
    let mut c = *ctr;
    for chunk in buf.chunks_mut(16 * GENERIC_CHUNK) {
        if !SEAL {
            hash(chunk);
        }
        ctr32_xor_with(&mut ks, backend, keys, &c, chunk);
        if SEAL {
            hash(chunk);
        }
        let n = u32::from_be_bytes(c[12..].try_into().unwrap());
        c[12..].copy_from_slice(&n.wrapping_add(GENERIC_CHUNK as u32).to_be_bytes());
    }
}

#[cfg(test)]
mod tests {
    //! Every kernel of every available backend against `soft`, on every block count up to
    //! three full 8-vector batches of the widest backend (so all tail widths are crossed).
    use super::*;
    use crate::Aes;

    #[test]
    fn put_block_stores_the_number_big_endian() {
        let mut b = [0xa5u8; 16];
        put_block(&mut b, 0x0011_2233_4455_6677_8899_aabb_ccdd_eeff);
        let want = [
            0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd,
            0xee, 0xff,
        ];
        assert_eq!(b, want);
        wipe_block(&mut b);
        assert_eq!(b, [0; 16]);
    }

    /// The GCM mode's stack scratch (plaintext and AAD copies) is zero after it is dropped.
    /// (x86_64 only: observing a dropped value takes `unsafe`, forbidden elsewhere.)
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn blocks_are_zeroed_on_drop() {
        let mut slot = core::mem::MaybeUninit::<Blocks<80>>::uninit();
        let p = slot.as_mut_ptr();
        // SAFETY: `p` is the slot's own storage: written whole, dropped once, and its bytes
        // (plain `u8`, initialised by the drop's stores) read afterwards while the slot lives.
        let after = unsafe {
            p.write(Blocks::new());
            (*p).0.fill(0x5a);
            core::ptr::drop_in_place(p);
            core::ptr::read(core::ptr::addr_of!((*p).0))
        };
        assert_eq!(after, [0u8; 80]);
    }

    /// The GCM reference under `key`: the `soft` backend's `Aes`, its hash key `H = E_K(0)` and
    /// the software GHASH key for `H` (the kernels' tests here and in `vaes::gcm` compare
    /// against these).
    pub(super) fn soft_gcm(key: &[u8]) -> (Aes, [u8; 16], GhashKey) {
        let soft = Aes::with_backend(key, Backend::Soft).unwrap();
        let (sb, sk) = soft.kernels();
        let mut h = [0u8; 16];
        encrypt_blocks(sb, sk, &mut h);
        let gk = GhashKey::soft_from_h(&h);
        (soft, h, gk)
    }

    fn data(n: usize, seed: u8) -> alloc::vec::Vec<u8> {
        (0..n)
            .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed) ^ (i >> 8) as u8)
            .collect()
    }

    #[test]
    fn names_parse_and_detection_is_available() {
        for b in Backend::ALL {
            assert_eq!(b.name().parse::<Backend>().unwrap(), b);
            assert_eq!(b.name().to_uppercase().parse::<Backend>().unwrap(), b);
        }
        assert_eq!(
            "nope".parse::<Backend>().unwrap_err().kind(),
            ErrorKind::UnknownBackend
        );
        assert!(Backend::Soft.is_available());
        assert!(Backend::detect().is_available());
        assert_eq!(Backend::available().last(), Some(&Backend::detect()));
    }

    /// Zeroes xmm0-xmm15, so that what [`xmm_registers`] finds afterwards was put there by the
    /// code between them (an unoptimised test may leave round keys in registers itself: it
    /// compares them).
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    fn clear_xmm_registers() {
        // SAFETY: register-only; every register written is declared clobbered. SSE2.
        unsafe {
            core::arch::asm!(
                "xorps xmm0, xmm0",
                "xorps xmm1, xmm1",
                "xorps xmm2, xmm2",
                "xorps xmm3, xmm3",
                "xorps xmm4, xmm4",
                "xorps xmm5, xmm5",
                "xorps xmm6, xmm6",
                "xorps xmm7, xmm7",
                "xorps xmm8, xmm8",
                "xorps xmm9, xmm9",
                "xorps xmm10, xmm10",
                "xorps xmm11, xmm11",
                "xorps xmm12, xmm12",
                "xorps xmm13, xmm13",
                "xorps xmm14, xmm14",
                "xorps xmm15, xmm15",
                out("xmm0") _, out("xmm1") _, out("xmm2") _, out("xmm3") _,
                out("xmm4") _, out("xmm5") _, out("xmm6") _, out("xmm7") _,
                out("xmm8") _, out("xmm9") _, out("xmm10") _, out("xmm11") _,
                out("xmm12") _, out("xmm13") _, out("xmm14") _, out("xmm15") _,
                options(nostack, nomem, preserves_flags),
            )
        };
        if Backend::Vaes512.is_available() {
            // SAFETY: AVX-512F (the vaes512 backend runs here).
            unsafe { aesni::zero_zmm16_31() };
        }
    }

    /// xmm0-xmm15, and xmm16-31 where AVX-512 exists (zero elsewhere), as they are now (call
    /// right after the code under test; nothing between them touches a vector register, so
    /// what the kernel left is still there).
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    fn xmm_registers() -> [[u8; 16]; 32] {
        let mut r = [[0u8; 16]; 32];
        // SAFETY: 16 stores of 16 bytes into `r` (256 bytes); SSE2 is baseline.
        unsafe {
            core::arch::asm!(
                "movdqu xmmword ptr [{p}], xmm0",
                "movdqu xmmword ptr [{p} + 16], xmm1",
                "movdqu xmmword ptr [{p} + 32], xmm2",
                "movdqu xmmword ptr [{p} + 48], xmm3",
                "movdqu xmmword ptr [{p} + 64], xmm4",
                "movdqu xmmword ptr [{p} + 80], xmm5",
                "movdqu xmmword ptr [{p} + 96], xmm6",
                "movdqu xmmword ptr [{p} + 112], xmm7",
                "movdqu xmmword ptr [{p} + 128], xmm8",
                "movdqu xmmword ptr [{p} + 144], xmm9",
                "movdqu xmmword ptr [{p} + 160], xmm10",
                "movdqu xmmword ptr [{p} + 176], xmm11",
                "movdqu xmmword ptr [{p} + 192], xmm12",
                "movdqu xmmword ptr [{p} + 208], xmm13",
                "movdqu xmmword ptr [{p} + 224], xmm14",
                "movdqu xmmword ptr [{p} + 240], xmm15",
                p = in(reg) r.as_mut_ptr(),
                options(nostack, preserves_flags),
            )
        };
        if Backend::Vaes512.is_available() {
            // SAFETY: AVX-512F (the vaes512 backend runs here); 16 stores of 16 bytes into the
            // upper half of `r`; the registers are only read.
            unsafe {
                core::arch::asm!(
                    "vmovdqu64 xmmword ptr [{p}], xmm16",
                    "vmovdqu64 xmmword ptr [{p} + 16], xmm17",
                    "vmovdqu64 xmmword ptr [{p} + 32], xmm18",
                    "vmovdqu64 xmmword ptr [{p} + 48], xmm19",
                    "vmovdqu64 xmmword ptr [{p} + 64], xmm20",
                    "vmovdqu64 xmmword ptr [{p} + 80], xmm21",
                    "vmovdqu64 xmmword ptr [{p} + 96], xmm22",
                    "vmovdqu64 xmmword ptr [{p} + 112], xmm23",
                    "vmovdqu64 xmmword ptr [{p} + 128], xmm24",
                    "vmovdqu64 xmmword ptr [{p} + 144], xmm25",
                    "vmovdqu64 xmmword ptr [{p} + 160], xmm26",
                    "vmovdqu64 xmmword ptr [{p} + 176], xmm27",
                    "vmovdqu64 xmmword ptr [{p} + 192], xmm28",
                    "vmovdqu64 xmmword ptr [{p} + 208], xmm29",
                    "vmovdqu64 xmmword ptr [{p} + 224], xmm30",
                    "vmovdqu64 xmmword ptr [{p} + 240], xmm31",
                    p = in(reg) r[16..].as_mut_ptr(),
                    options(nostack, preserves_flags),
                )
            };
        }
        r
    }

    /// No vector register holds a round key (of the encryption schedule or the equivalent
    /// inverse cipher's, AESIMC of it) when a kernel returns, on every hardware backend this
    /// CPU has: the kernels wholly in inline assembly (`aesni` ECB and CBC decryption from 12
    /// blocks; CTR, ECB both ways and CBC decryption of up to 12-24 blocks) zero the register
    /// that held one; the compiled kernels are followed by `aesni::wipe_stack*`, which zeroes
    /// xmm0-15 and, where `vaes512` runs, zmm16-31 (`wipe_below`). The GCM kernels too (round
    /// keys and GHASH key powers). Reads the low 128 bits of each register: a broadcast key
    /// or a register of powers has one there.
    ///
    /// Optimised builds only, like `stack_depth`: unoptimised code copies round keys with
    /// calls to libc's `memcpy`, which on AVX-512 CPUs glibc runs with xmm16-31 (its EVEX
    /// variants), and they stay there: on the Intel guest a debug build failed with a round
    /// key in xmm17 after `vaes256` CBC decryption, and passed with
    /// `GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX512VL` (session 25).
    #[cfg(target_arch = "x86_64")]
    #[test]
    #[cfg_attr(
        debug_assertions,
        ignore = "unoptimised code copies keys through libc's EVEX memcpy (xmm16-31); run with --release"
    )]
    fn kernels_leave_no_round_key_in_registers() {
        type Call<'a> = dyn Fn(&mut [u8], &mut [u8; 16]) -> [[u8; 16]; 32] + 'a;
        let hw = [Backend::Aesni, Backend::Vaes256, Backend::Vaes512];
        for b in hw.into_iter().filter(|b| b.is_available()) {
            for kl in [16, 24, 32] {
                let aes = Aes::with_backend(&data(kl, 3), b).unwrap();
                let (bk, keys) = aes.kernels();
                let Keys::Hw(k) = keys else {
                    panic!("{b} without the hardware layout")
                };
                let mut round_keys = alloc::vec::Vec::new();
                for rk in &k.enc[..=k.rounds] {
                    round_keys.push(*rk);
                    let mut imc = [0u8; 16];
                    // SAFETY: AES-NI is available (a hardware backend is); 16-byte loads
                    // and stores.
                    unsafe {
                        use core::arch::x86_64::*;
                        #[target_feature(enable = "aes")]
                        unsafe fn aesimc(k: &[u8; 16], out: &mut [u8; 16]) {
                            // SAFETY: AES-NI (the caller's check); 16 bytes each.
                            unsafe {
                                let v = _mm_aesimc_si128(_mm_loadu_si128(k.as_ptr().cast()));
                                _mm_storeu_si128(out.as_mut_ptr().cast(), v);
                            }
                        }
                        aesimc(rk, &mut imc);
                    }
                    round_keys.push(imc);
                }
                // Round 1 of the zero block, AESENC(k0, k1): what the round-1 table of the
                // `vaes512` CTR assembly on AMD keeps in a register (`vaes::ctr_asm::zmm_r1`,
                // from 6 KiB: 384 blocks below, with no tail after it, 385 and 388 with a tail
                // on `aesni::ctr_small`, and 400 with one on `zmm_sel`).
                let mut r1 = [0u8; 16];
                // SAFETY: AES-NI is available (a hardware backend is); 16-byte loads and
                // stores.
                unsafe {
                    use core::arch::x86_64::*;
                    #[target_feature(enable = "aes")]
                    unsafe fn aesenc(s: &[u8; 16], k: &[u8; 16], out: &mut [u8; 16]) {
                        // SAFETY: AES-NI (the caller's check); 16 bytes each.
                        unsafe {
                            let v = _mm_aesenc_si128(
                                _mm_loadu_si128(s.as_ptr().cast()),
                                _mm_loadu_si128(k.as_ptr().cast()),
                            );
                            _mm_storeu_si128(out.as_mut_ptr().cast(), v);
                        }
                    }
                    aesenc(&k.enc[0], &k.enc[1], &mut r1);
                }
                round_keys.push(r1);
                let gk = GhashKey::new(bk, keys);
                if let GhashKey::Vclmul(v) = &gk {
                    round_keys.extend_from_slice(v.powers());
                }
                for blocks in [
                    1, 2, 3, 4, 5, 7, 8, 9, 11, 12, 13, 17, 21, 24, 35, 100, 384, 385, 388, 400,
                ] {
                    let mut buf = data(16 * blocks, 5);
                    let mut iv = [9u8; 16];
                    let calls: [(&str, &Call<'_>); 7] = [
                        ("gcm-seal", &|b, _| {
                            clear_xmm_registers();
                            gcm_seal(bk, keys, &gk, &[3; 16], true, &mut 5, &[], b);
                            xmm_registers()
                        }),
                        ("gcm-open", &|b, _| {
                            clear_xmm_registers();
                            gcm_open(bk, keys, &gk, &[3; 16], false, &mut 5, &[], b);
                            xmm_registers()
                        }),
                        ("ctr", &|b, _| {
                            clear_xmm_registers();
                            ctr_xor(bk, keys, u128::MAX - 5, b);
                            xmm_registers()
                        }),
                        ("ecb-enc", &|b, _| {
                            clear_xmm_registers();
                            encrypt_blocks(bk, keys, b);
                            xmm_registers()
                        }),
                        ("ecb-dec", &|b, _| {
                            clear_xmm_registers();
                            decrypt_blocks(bk, keys, b);
                            xmm_registers()
                        }),
                        ("cbc-enc", &|b, v| {
                            clear_xmm_registers();
                            cbc_encrypt(bk, keys, v, b);
                            xmm_registers()
                        }),
                        ("cbc-dec", &|b, v| {
                            clear_xmm_registers();
                            cbc_decrypt(bk, keys, v, b);
                            xmm_registers()
                        }),
                    ];
                    for (name, call) in calls {
                        let regs = call(&mut buf, &mut iv);
                        for (i, r) in regs.iter().enumerate() {
                            assert!(
                                !round_keys.contains(r),
                                "{b} {name} key={kl} blocks={blocks}: xmm{i} holds a round key or key power"
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn kernels_match_soft() {
        for kl in [16, 24, 32] {
            let key = data(kl, 7);
            let soft = Aes::with_backend(&key, Backend::Soft).unwrap();
            for b in Backend::available() {
                let aes = crate::Aes::with_backend(&key, b).unwrap();
                for blocks in 0..=(3 * 32 + 3) {
                    let src = data(16 * blocks, blocks as u8);
                    let iv: [u8; 16] = data(16, 99).try_into().unwrap();
                    let check = |name: &str, f: &dyn Fn(&Aes, &mut [u8])| {
                        let (mut x, mut y) = (src.clone(), src.clone());
                        f(&aes, &mut x);
                        f(&soft, &mut y);
                        assert_eq!(x, y, "{b} {name} key={kl} blocks={blocks}");
                    };
                    check("ecb-enc", &|a, x| a.encrypt_blocks(x));
                    check("ecb-dec", &|a, x| a.decrypt_blocks(x));
                    check("cbc-enc", &|a, x| {
                        let mut v = iv;
                        let (bk, k) = a.kernels();
                        cbc_encrypt(bk, k, &mut v, x);
                        let n = x.len().min(16);
                        x[..n].iter_mut().zip(v).for_each(|(d, s)| *d ^= s);
                    });
                    check("cbc-dec", &|a, x| {
                        let mut v = iv;
                        let (bk, k) = a.kernels();
                        cbc_decrypt(bk, k, &mut v, x);
                        let n = x.len().min(16);
                        x[..n].iter_mut().zip(v).for_each(|(d, s)| *d ^= s);
                    });
                    // Through the mode layer, which splits where the low 64 bits wrap.
                    // The last two carry inside the first four blocks (the small-message
                    // path, `aesni::ctr_small`, up to twelve blocks).
                    for c in [
                        0u128,
                        u64::MAX as u128 - 40,
                        u128::MAX - 50,
                        (7 << 64) | 0xffff_fff0,
                        u64::MAX as u128 - 1,
                        u128::MAX - 2,
                    ] {
                        check("ctr", &|a, x| a.ctr_xor_at(&c.to_be_bytes(), 0, x));
                    }
                }
            }
        }
    }

    /// Kernels told the counter is public (a 12-byte nonce) may build a batch's counters
    /// without byte swaps while its last byte does not carry (`vaes256`'s ymm loop,
    /// `gcm_aesni`): every start of that byte, and starts that carry through two, three and
    /// four bytes of the inc32 word (the 2^32 wrap) inside 40-batch messages, on every
    /// backend, against the `soft` kernel. (An off-by-two in the ymm loop's carry test fails
    /// here, checked.)
    #[test]
    fn gcm_public_counter_carries() {
        let mut lows: alloc::vec::Vec<u32> = (0..=255).collect();
        lows.extend([
            0xff05,
            0xfff0,
            0x00ff_ff00,
            0xffff_fe13,
            0xffff_ff00,
            0xffff_ffef,
        ]);
        for kl in [16, 32] {
            let key = data(kl, 3);
            let (soft, _, soft_gk) = soft_gcm(&key);
            let (sb, sk) = soft.kernels();
            for b in Backend::available() {
                let aes = crate::Aes::with_backend(&key, b).unwrap();
                let (bk, k) = aes.kernels();
                let gk = GhashKey::new(bk, k);
                for &low in &lows {
                    // 40 16-block batches (80 of 8) and a partial one.
                    let blocks = 16 * 40 + 3 + (low as usize % 13);
                    let src = data(16 * blocks, low as u8);
                    let mut ctr: [u8; 16] = data(16, 9).try_into().unwrap();
                    ctr[12..].copy_from_slice(&low.to_be_bytes());
                    for seal in [true, false] {
                        let (mut x, mut y) = (src.clone(), src.clone());
                        let (mut ax, mut ay) = (7u128, 7u128);
                        if seal {
                            gcm_seal(bk, k, &gk, &ctr, true, &mut ax, &[], &mut x);
                            generic_gcm::<true>(sb, sk, &soft_gk, &ctr, &mut ay, &mut y);
                        } else {
                            gcm_open(bk, k, &gk, &ctr, true, &mut ax, &[], &mut x);
                            generic_gcm::<false>(sb, sk, &soft_gk, &ctr, &mut ay, &mut y);
                        }
                        let at = alloc::format!("{b} key={kl} low={low:x} seal={seal}");
                        assert!(x == y, "{at}: data differ");
                        assert_eq!(ax, ay, "{at}: GHASH state");
                    }
                }
            }
        }
    }

    /// GCM kernels of every backend (and the generic path with each GHASH kernel) against the
    /// `soft` backend with the software GHASH: every block count up to three 16-block batches
    /// plus tails, counters whose low word wraps inside the call.
    #[test]
    fn gcm_kernels_match_soft() {
        for kl in [16, 24, 32] {
            let key = data(kl, 3);
            let (soft, h, soft_gk) = soft_gcm(&key);
            let (sb, sk) = soft.kernels();
            assert_eq!(soft_gk.kind(), "soft");
            for b in Backend::available() {
                let aes = crate::Aes::with_backend(&key, b).unwrap();
                let (bk, k) = aes.kernels();
                let native = GhashKey::new(bk, k);
                // Each backend with its own GHASH, and with the software one (generic path).
                let mut gks = alloc::vec![native, GhashKey::soft_from_h(&h)];
                gks.extend(GhashKey::software("ssse3", &h));
                for gk in &gks {
                    for blocks in 0..=(3 * 16 + 17) {
                        for low in [1u32, 0xffff_fff0, 0xffff_fffd, 0xffff_ffff] {
                            let src = data(16 * blocks, blocks as u8);
                            let mut ctr: [u8; 16] = data(16, 77).try_into().unwrap();
                            ctr[12..].copy_from_slice(&low.to_be_bytes());
                            let acc0 = u128::from_le_bytes(data(16, low as u8).try_into().unwrap());
                            for (seal, public) in
                                [(true, false), (false, false), (true, true), (false, true)]
                            {
                                let (mut x, mut y) = (src.clone(), src.clone());
                                let (mut ax, mut ay) = (acc0, acc0);
                                if seal {
                                    gcm_seal(bk, k, gk, &ctr, public, &mut ax, &[], &mut x);
                                    generic_gcm::<true>(sb, sk, &soft_gk, &ctr, &mut ay, &mut y);
                                } else {
                                    gcm_open(bk, k, gk, &ctr, public, &mut ax, &[], &mut x);
                                    generic_gcm::<false>(sb, sk, &soft_gk, &ctr, &mut ay, &mut y);
                                }
                                let what = if seal { "seal" } else { "open" };
                                let g = gk.kind();
                                assert_eq!(
                                    x, y,
                                    "{b}/{g} {what} key={kl} blocks={blocks} ctr={low:x} public={public}"
                                );
                                assert_eq!(
                                    ax, ay,
                                    "{b}/{g} {what} tag state key={kl} blocks={blocks}"
                                );
                                // Buffer to buffer: the same output and state, and the input
                                // untouched.
                                let (mut z, mut az) = (alloc::vec![0x5a; src.len()], acc0);
                                let io = (&src[..], &mut z[..]);
                                gcm_b2b(bk, k, gk, &ctr, public, &mut az, &[], io, seal);
                                assert!(
                                    z == y && az == ay,
                                    "{b}/{g} {what} buffer to buffer key={kl} blocks={blocks} \
                                     ctr={low:x} public={public}"
                                );
                            }
                            let (mut ax, mut ay) = (acc0, acc0);
                            ghash(gk, &mut ax, &src);
                            ghash(&soft_gk, &mut ay, &src);
                            assert_eq!(ax, ay, "{b}/{} ghash blocks={blocks}", gk.kind());
                        }
                    }
                }
            }
        }
    }
}

/// Stack high-water marks of the hardware kernels, against the stack wipes that follow them.
/// Optimised builds only (`cargo test --release`, what CI runs): the wipes are sized for the
/// code that ships; unoptimised frames are many times deeper (32 KiB and more here).
#[cfg(all(test, target_arch = "x86_64", not(debug_assertions)))]
mod stack_depth {
    use super::*;
    use crate::AesGcm;
    use alloc::vec::Vec;

    /// Bytes painted below the stack pointer before the call.
    const SPAN: usize = 32 * 1024;
    /// Slack between the caller's stack pointer and the top of a wipe's pad (its return
    /// address, alignment): a kernel must reach at most `wipe - SLACK` deep.
    const SLACK: usize = 64;

    /// The `SPAN` bytes below this frame's stack pointer after `f` ran on them painted with
    /// 0xa5 (byte `i` of the result is `SPAN - i` bytes down): what `f` wrote there (its
    /// return address, its frames and whatever they left) and did not wipe. Inline assembly
    /// paints and copies, outside Rust's memory model; the copy's buffer is allocated before
    /// the paint, so nothing but `f` runs below this frame in between.
    #[inline(never)]
    fn painted(f: impl FnOnce()) -> Vec<u8> {
        let mut seen = alloc::vec![0u8; SPAN];
        let top: usize;
        // SAFETY: writes SPAN bytes below the stack pointer: dead stack of this test thread
        // (2 MiB by default, far more than SPAN + the kernels' frames). Without `nostack` the
        // compiler keeps nothing below the stack pointer (no red zone) across this block.
        unsafe {
            core::arch::asm!(
                "mov {top}, rsp",
                "mov rdi, rsp",
                "sub rdi, {span}",
                "mov rcx, {span}",
                "rep stosb",
                top = out(reg) top,
                span = const SPAN,
                in("al") 0xa5u8,
                out("rdi") _,
                out("rcx") _,
            )
        };
        f();
        // SAFETY: copies the SPAN bytes below `top`, which is still this frame's stack pointer
        // (no dynamic allocation after the paint), so the same dead stack as above, into
        // `seen`.
        unsafe {
            core::arch::asm!(
                "rep movsb",
                inout("rsi") top - SPAN => _,
                inout("rdi") seen.as_mut_ptr() => _,
                inout("rcx") SPAN => _,
                options(nostack),
            )
        };
        seen
    }

    /// How many bytes below [`painted`]'s stack pointer `f` wrote: down to the lowest byte
    /// that is no longer the paint.
    fn depth(f: impl FnOnce()) -> usize {
        let seen = painted(f);
        seen.iter().position(|&b| b != 0xa5).map_or(0, |i| SPAN - i)
    }

    fn data(n: usize) -> Vec<u8> {
        (0..n).map(|i| (i * 7 + 3) as u8).collect()
    }

    /// The deepest of `f` over key sizes and message lengths (bytes, whole blocks).
    fn deepest(f: &dyn Fn(&Keys, &GhashKey, &mut [u8])) -> usize {
        let mut most = 0;
        for kl in [16, 24, 32] {
            for b in [Backend::Aesni, Backend::Vaes256, Backend::Vaes512] {
                if !b.is_available() {
                    continue;
                }
                let g = AesGcm::with_backend(&data(kl), b).unwrap();
                let (_, keys) = g.cipher().kernels();
                // 300 blocks: Intel's zmm GCM seal with a 12-byte nonce takes its aligned-
                // counter loop from 271 blocks (`vaes::gcm::aligned_head`).
                for n in [
                    0usize, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 64, 100, 300,
                ] {
                    let mut buf = data(16 * n);
                    most = most.max(depth(|| f(keys, g.ghash_key(), &mut buf)));
                }
            }
        }
        most
    }

    /// What `f` left on the stack more than `skip` bytes below [`painted`]'s stack pointer:
    /// how many bytes, and the deepest. A byte that is neither the paint nor zero was written
    /// and not wiped. Counted in 8-byte words with two such bytes or more: a word with one is
    /// a small number (the CTR loop's block offsets 1-7, a length), not key material.
    fn leftover(skip: usize, f: impl FnOnce()) -> (usize, usize) {
        let seen = painted(f);
        let (mut n, mut low) = (0, 0);
        for (i, w) in seen[..SPAN - skip].chunks_exact(8).enumerate() {
            let k = w.iter().filter(|&&b| b != 0 && b != 0xa5).count();
            if k >= 2 {
                n += k;
                low = low.max(SPAN - 8 * i);
            }
        }
        (n, low)
    }

    /// What [`leftover`] does not look at: its closure's frame and the frames of the entry
    /// points under test (their own locals, such as the tag they return, and the return
    /// addresses of the calls they make), which no stack wipe reaches: a wipe runs from the
    /// entry point's frame and clears below it. 304-416 bytes here; [`TOP_BIG`] for the
    /// entry points with larger frames: `ctr32_xor` (its 512-byte keystream scratch, zeroed
    /// on drop) and the one-shot message (the stack copies of its partial blocks).
    const TOP: usize = 512;
    const TOP_BIG: usize = 768;

    /// After every dispatching entry point of every backend this CPU runs (ECB, CBC, CTR both
    /// forms, CTR32, GHASH, GCM whole blocks in place and buffer to buffer, the short-message
    /// path, the end of a message, a whole one-shot message, the hash key's setup), with its
    /// own GHASH kernel and, on `soft` and `vpaes`, every software one: nothing the kernels
    /// wrote is left on the stack below the entry point's frame. Their frames hold round keys
    /// and values derived from the hash key, so every byte written there must be wiped (or
    /// never written: the inline-assembly paths). The stack-depth test below checks each
    /// wipe's size against its kernel; this one checks that the wipes run, from the right
    /// frame, on every path. (It found the software GHASH kernels, session 26: 35-1570 bytes
    /// left after every entry point, down to 5.5 KiB.) What a kernel writes within [`TOP`]
    /// bytes of this frame is not seen: removing the wipe after the zmm and ymm GCM kernels
    /// (at most 576 B deep) passes here; the depth test and `tests/residue.rs` see those. The
    /// cipher's own key setup is not here either: it allocates, and the allocator's frames
    /// (its pointers and sizes) stay below it; those two tests cover it.
    #[test]
    fn entry_points_leave_nothing_on_the_stack() {
        // The check itself: a 2 KiB frame of 0x11 is seen, down to its depth, and the long
        // wipe clears it.
        #[inline(never)]
        fn writes_2k() {
            let mut pad = [0x11u8; 2048];
            core::hint::black_box(&mut pad);
        }
        let (n, low) = leftover(TOP, writes_2k);
        assert!(
            n >= 1024 && (2048..2048 + 256).contains(&low),
            "{n} B, {low} deep"
        );
        let (n, _) = leftover(TOP, || {
            writes_2k();
            wipe_after_soft_ghash(true);
        });
        assert_eq!(n, 0);

        let lengths = [9u8; 16];
        let ctr = [7u8; 16];
        let mut bad = Vec::new();
        let mut check = |what: &str, (n, low): (usize, usize)| {
            if n > 0 {
                bad.push(alloc::format!("{what}: {n} B, down to {low} B"));
            }
        };
        for b in Backend::available() {
            for kl in [16, 24, 32] {
                let key = data(kl);
                let g = AesGcm::with_backend(&key, b).unwrap();
                let (bk, keys) = g.cipher().kernels();
                let h: [u8; 16] = data(16).try_into().unwrap();
                let mut gks = alloc::vec![];
                if matches!(b, Backend::Soft | Backend::Vpaes) {
                    for kernel in ["soft", "avx2", "ssse3"] {
                        gks.extend(GhashKey::software(kernel, &h));
                    }
                }
                let mut own = GhashKey::empty(b);
                check(
                    &alloc::format!("{b}/{kl} hash key setup"),
                    leftover(TOP, || own.init(bk, keys)),
                );
                gks.push(own);
                for gk in &gks {
                    let kind = gk.kind();
                    // 1100 blocks: the long-call CTR loops (`vaes256`'s 12-register selector
                    // loop on AMD without AVX-512 from 1024 blocks, with its slots in its
                    // frame; `vaes512`'s first-round table on AMD from 384).
                    for blocks in [
                        0usize, 1, 2, 3, 4, 5, 8, 9, 12, 13, 16, 17, 24, 25, 32, 33, 64, 65, 100,
                        300, 1100,
                    ] {
                        let mut buf = data(16 * blocks);
                        let src = data(16 * blocks);
                        let aad = data(16 * (blocks % 3));
                        let (mut acc, mut iv, mut tail) = (5u128, [1u8; 16], [3u8; 16]);
                        let at = alloc::format!("{b}/{kind}/{kl} {blocks} blocks");
                        let mut run = |what: &str, top: usize, f: &mut dyn FnMut()| {
                            check(&alloc::format!("{at} {what}"), leftover(top, f))
                        };
                        run("ghash", TOP, &mut || ghash(gk, &mut acc, &buf));
                        for seal in [true, false] {
                            let dir = if seal { "seal" } else { "open" };
                            run(&alloc::format!("gcm {dir}"), TOP, &mut || {
                                if seal {
                                    gcm_seal(bk, keys, gk, &ctr, true, &mut acc, &aad, &mut buf)
                                } else {
                                    gcm_open(bk, keys, gk, &ctr, false, &mut acc, &aad, &mut buf)
                                }
                            });
                            run(&alloc::format!("gcm {dir} b2b"), TOP, &mut || {
                                let io = (&src[..], &mut buf[..]);
                                gcm_b2b(bk, keys, gk, &ctr, seal, &mut acc, &aad, io, seal)
                            });
                            run(&alloc::format!("gcm {dir} finish"), TOP, &mut || {
                                let (j, t) = (&ctr, &mut tail);
                                let _ =
                                    gcm_finish(bk, keys, gk, j, j, &mut acc, t, 5, &lengths, seal);
                            });
                            run(&alloc::format!("gcm {dir} one-shot"), TOP_BIG, &mut || {
                                let (j, t) = (&ctr, &mut tail);
                                let _ = gcm_oneshot(
                                    bk, keys, gk, j, j, seal, j, &mut acc, &aad, &mut buf, t, 5,
                                    &lengths, seal,
                                );
                            });
                            if buf.len() <= SMALL_MSG {
                                let a = &aad[..aad.len().min(SMALL_AAD)];
                                let l = buf.len().saturating_sub(3);
                                run(&alloc::format!("gcm {dir} small"), TOP, &mut || {
                                    let _ = gcm_small(
                                        bk, keys, gk, &ctr, a, &mut buf, l, &lengths, seal,
                                    );
                                });
                            }
                        }
                        run("gcm finish_part", TOP, &mut || {
                            let _ =
                                gcm_finish_part(bk, keys, gk, &ctr, &mut acc, &tail, 5, &lengths);
                        });
                        if !core::ptr::eq(gk, gks.last().unwrap()) {
                            continue;
                        }
                        // The AES entry points, once per backend (they do not use the hash key).
                        run("ecb encrypt", TOP, &mut || {
                            encrypt_blocks(bk, keys, &mut buf)
                        });
                        run("ecb decrypt", TOP, &mut || {
                            decrypt_blocks(bk, keys, &mut buf)
                        });
                        run("cbc encrypt", TOP, &mut || {
                            cbc_encrypt(bk, keys, &mut iv, &mut buf)
                        });
                        run("cbc decrypt", TOP, &mut || {
                            cbc_decrypt(bk, keys, &mut iv, &mut buf)
                        });
                        run("ctr", TOP, &mut || ctr_xor(bk, keys, 0xfff0, &mut buf));
                        run("ctr b2b", TOP, &mut || {
                            ctr_xor_b2b(bk, keys, 0xfff0, &src, &mut buf)
                        });
                        run("ctr32", TOP_BIG, &mut || {
                            ctr32_xor(bk, keys, &ctr, &mut buf)
                        });
                    }
                }
            }
        }
        assert!(bad.is_empty(), "left on the stack:\n{}", bad.join("\n"));
    }

    #[test]
    fn kernels_stay_within_their_wipes() {
        if !Backend::Aesni.is_available() {
            return;
        }
        // The measurement itself: a frame that writes a known depth is measured as at least
        // that deep (the test can fail).
        #[inline(never)]
        fn writes_4k() {
            let mut pad = [0u8; 4096];
            core::hint::black_box(&mut pad);
        }
        let d = depth(writes_4k);
        assert!(
            (4096..4096 + 256).contains(&d),
            "depth of a 4 KiB frame: {d}"
        );

        let ctr = [7u8; 16];
        let mut acc = 0u128;
        let aes_kernels = deepest(&|k, _, buf| {
            let Keys::Hw(k) = k else { unreachable!() };
            let mut iv = [1u8; 16];
            aesni::encrypt_blocks(k, buf);
            aesni::decrypt_blocks(k, buf);
            aesni::cbc_encrypt(k, &mut iv, buf);
            aesni::cbc_decrypt(k, &mut iv, buf);
            aesni::ctr_xor(k, 5, buf);
            // Buffer to buffer from a static source (an allocation here would measure malloc).
            static SRC: [u8; 4800] = [0x5c; 4800];
            let src = &SRC[..buf.len()];
            aesni::ctr_xor_b2b(k, 5, src, buf);
            if Backend::Vaes256.is_available() {
                vaes256::encrypt_blocks(k, buf);
                vaes256::decrypt_blocks(k, buf);
                vaes256::cbc_decrypt(k, &mut iv, buf);
                vaes256::ctr_xor(k, 5, buf);
                vaes256::ctr_xor_b2b(k, 5, src, buf);
            }
        });
        // The zmm kernels of `vaes512` (`aesni::wipe_stack_zmm`).
        let zmm_kernels = deepest(&|k, _, buf| {
            if !Backend::Vaes512.is_available() {
                return;
            }
            let Keys::Hw(k) = k else { unreachable!() };
            let mut iv = [1u8; 16];
            vaes::zmm::encrypt_blocks(k, buf);
            vaes::zmm::decrypt_blocks(k, buf);
            vaes::zmm::cbc_decrypt(k, &mut iv, buf);
            vaes::zmm::ctr_xor(k, 5, buf);
            static SRC: [u8; 4800] = [0x5c; 4800];
            vaes::zmm::ctr_xor_b2b(k, 5, &SRC[..buf.len()], buf);
        });
        std::eprintln!(
            "stack depth of the vaes512 kernels: {zmm_kernels} B (wipe {})",
            aesni::WIPE_XY
        );
        assert!(
            zmm_kernels + SLACK <= aesni::WIPE_XY,
            "vaes512 kernels {zmm_kernels} B deep"
        );
        // The `soft` and `vpaes` kernels and their key setup (`wipe_after_soft`), called
        // directly (through the dispatch the wipe itself would be measured): key setup and
        // calls of up to `SOFT_SMALL` bytes against the short wipe, the rest the long one.
        let (mut small, mut long) = (0, 0);
        let vp = cfg!(target_arch = "x86_64") && Backend::Vpaes.is_available();
        for kl in [16, 24, 32] {
            let key = data(kl);
            let enc = crate::hazmat::expand_key(&key).unwrap();
            let enc = &enc.keys[..=enc.rounds];
            let mut sk = soft::Keys::ZERO;
            small = small.max(depth(|| soft::expand_into(&key, &mut sk)));
            small = small.max(depth(|| soft::from_round_keys_into(enc, &mut sk)));
            #[cfg(target_arch = "x86_64")]
            let mut vk = vpaes::ZERO;
            #[cfg(target_arch = "x86_64")]
            if vp {
                small = small.max(depth(|| vpaes::expand_into(&key, &mut vk)));
                small = small.max(depth(|| vpaes::from_round_keys_into(enc, &mut vk)));
            }
            for n in [
                0usize, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 64, 100,
            ] {
                let mut buf = data(16 * n);
                let mut iv = [1u8; 16];
                let mut d = depth(|| {
                    soft::encrypt_blocks(&sk, &mut buf);
                    soft::decrypt_blocks(&sk, &mut buf);
                    soft::cbc_encrypt(&sk, &mut iv, &mut buf);
                    soft::cbc_decrypt(&sk, &mut iv, &mut buf);
                    soft::ctr_xor(&sk, 5, &mut buf);
                });
                #[cfg(target_arch = "x86_64")]
                if vp {
                    d = d.max(depth(|| {
                        vpaes::encrypt_blocks(&vk, &mut buf);
                        vpaes::decrypt_blocks(&vk, &mut buf);
                        vpaes::cbc_encrypt(&vk, &mut iv, &mut buf);
                        vpaes::cbc_decrypt(&vk, &mut iv, &mut buf);
                        vpaes::ctr_xor(&vk, 5, &mut buf);
                    }));
                }
                if 16 * n <= SOFT_SMALL {
                    small = small.max(d);
                } else {
                    long = long.max(d);
                }
            }
        }
        std::eprintln!(
            "stack depth of the soft and vpaes kernels: key setup and up to {SOFT_SMALL} B \
             {small} B (wipe {}), longer calls {long} B (wipe {})",
            aesni::SOFT_WIPE_SMALL,
            aesni::SOFT_WIPE
        );
        assert!(
            small + SLACK <= aesni::SOFT_WIPE_SMALL,
            "soft/vpaes short calls or key setup {small} B deep"
        );
        assert!(long + SLACK <= aesni::SOFT_WIPE, "soft/vpaes {long} B deep");
        // The software GHASH kernels: the ordinary path against the short wipe (which the
        // AES call at the end of `gcm_small` and `gcm_finish` brings), the streams and key
        // setup against the long one (`wipe_after_soft_ghash`).
        let (mut short, mut streams) = (0, 0);
        for kernel in ["soft", "avx2", "ssse3"] {
            let Some(mut gk) = GhashKey::software(kernel, &[0x3c; 16]) else {
                continue;
            };
            streams = streams.max(depth(|| match &mut gk {
                GhashKey::Soft(k) => k.fill(&[5; 16]),
                GhashKey::Avx2(k) => k.fill(&[5; 16]),
                GhashKey::Ssse3(k) => k.fill(&[5; 16]),
                _ => unreachable!(),
            }));
            for n in [1usize, 2, 5, 16, 31, 32, 33, 63, 64, 65, 100, 300] {
                let buf = data(16 * n);
                let d = depth(|| ghash_in(&gk, &mut 1u128, &buf));
                if soft_ghash_streams(&gk, buf.len()) {
                    streams = streams.max(d);
                } else {
                    short = short.max(d);
                }
            }
        }
        std::eprintln!(
            "stack depth of the software GHASH kernels: ordinary path {short} B (wipe {}), \
             streams and key setup {streams} B (wipe {})",
            aesni::SOFT_WIPE_SMALL,
            aesni::SOFT_GCM_WIPE
        );
        assert!(
            short + SLACK <= aesni::SOFT_WIPE_SMALL,
            "software GHASH {short} B deep"
        );
        assert!(
            streams + SLACK <= aesni::SOFT_GCM_WIPE,
            "software GHASH streams or key setup {streams} B deep"
        );
        // Each GCM kernel on its own (the deepest decides the wipe).
        fn xmm(g: &GhashKey) -> &clmul::Key {
            match g {
                GhashKey::Clmul(h) => h,
                GhashKey::Vclmul(v) => &v.xmm,
                _ => unreachable!(),
            }
        }
        fn hw(k: &Keys) -> &aesni::Keys {
            let Keys::Hw(k) = k else { unreachable!() };
            k
        }
        let lengths = [9u8; 16];
        let aad = [4u8; 32];
        type Kernel<'a> = (&'a str, &'a dyn Fn(&Keys, &GhashKey, &mut [u8]));
        let gcm: [Kernel; 12] = [
            ("vaes zmm seal/open buffer to buffer", &|k, g, buf| {
                if let (GhashKey::Vclmul(v), true) = (g, Backend::Vaes512.is_available()) {
                    let (k, mut acc) = (hw(k), 1u128);
                    static SRC: [u8; 4800] = [0x5c; 4800];
                    let src = &SRC[..buf.len()];
                    // SAFETY: as below.
                    unsafe {
                        for seal in [true, false] {
                            vaes::zmm::gcm_b2b_tuned::<true>(
                                k, v, &ctr, seal, &mut acc, src, buf, seal,
                            );
                            vaes::zmm::gcm_b2b_tuned::<false>(
                                k, v, &ctr, seal, &mut acc, src, buf, seal,
                            );
                        }
                    }
                }
            }),
            ("vaes ymm seal/open buffer to buffer", &|k, g, buf| {
                if let GhashKey::Vclmul(v) = g {
                    let (k, mut acc) = (hw(k), 1u128);
                    static SRC: [u8; 4800] = [0x5c; 4800];
                    let src = &SRC[..buf.len()];
                    vaes::ymm::gcm_b2b(k, v, &ctr, true, &mut acc, src, buf, true);
                    vaes::ymm::gcm_b2b(k, v, &ctr, false, &mut acc, src, buf, false);
                }
            }),
            ("vaes zmm seal/open", &|k, g, buf| {
                if let (GhashKey::Vclmul(v), true) = (g, Backend::Vaes512.is_available()) {
                    let (k, mut acc) = (hw(k), 1u128);
                    // SAFETY: AVX-512 + VAES (checked above); VPCLMULQDQ (a `Vclmul` key).
                    // Both tunings, whichever the vendor dispatches.
                    unsafe {
                        vaes::zmm::tuned::seal::<true>(k, v, &ctr, true, &mut acc, buf);
                        vaes::zmm::tuned::open::<true>(k, v, &ctr, true, &mut acc, buf);
                        vaes::zmm::tuned::seal::<false>(k, v, &ctr, true, &mut acc, buf);
                        vaes::zmm::tuned::open::<false>(k, v, &ctr, true, &mut acc, buf);
                    }
                }
            }),
            ("vaes zmm ghash", &|_, g, buf| {
                if let (GhashKey::Vclmul(v), true) = (g, Backend::Vaes512.is_available()) {
                    // SAFETY: as above.
                    unsafe {
                        vaes::zmm::tuned::ghash::<true>(v, &mut 1u128, buf);
                        vaes::zmm::tuned::ghash::<false>(v, &mut 1u128, buf);
                    }
                }
            }),
            ("vaes ymm seal/open", &|k, g, buf| {
                if let GhashKey::Vclmul(v) = g {
                    let (k, mut acc) = (hw(k), 1u128);
                    vaes::ymm::gcm_seal(k, v, &ctr, true, &mut acc, buf);
                    vaes::ymm::gcm_open(k, v, &ctr, false, &mut acc, buf);
                }
            }),
            ("vaes ymm ghash", &|_, g, buf| {
                if let GhashKey::Vclmul(v) = g {
                    vaes::ymm::ghash(v, &mut 1u128, buf);
                }
            }),
            ("clmul ghash", &|_, g, buf| {
                clmul::ghash(xmm(g), &mut 1u128, buf)
            }),
            ("gcm_aesni seal/open", &|k, g, buf| {
                let (k, h, mut acc) = (hw(k), xmm(g), 1u128);
                gcm_aesni::seal(k, h, &ctr, true, &mut acc, buf);
                gcm_aesni::open(k, h, &ctr, false, &mut acc, buf);
            }),
            ("gcm_aesni seal/open buffer to buffer", &|k, g, buf| {
                let (k, h, mut acc) = (hw(k), xmm(g), 1u128);
                static SRC: [u8; 4800] = [0x5c; 4800];
                let src = &SRC[..buf.len()];
                gcm_aesni::seal_b2b(k, h, &ctr, true, &mut acc, src, buf);
                gcm_aesni::open_b2b(k, h, &ctr, false, &mut acc, src, buf);
            }),
            ("gcm_aesni finish", &|k, g, _| {
                let (k, h) = (hw(k), xmm(g));
                for seal in [false, true] {
                    let mut tail = [3u8; 16];
                    gcm_aesni::finish(k, h, &ctr, &ctr, 5, &mut tail, 5, &lengths, seal);
                    gcm_aesni::finish(k, h, &ctr, &ctr, 5, &mut [], 0, &lengths, seal);
                }
            }),
            ("gcm_aesni small", &|k, g, buf| {
                let (k, h) = (hw(k), xmm(g));
                if buf.len() <= SMALL_MSG {
                    for (a, seal) in [(0, true), (16, false), (32, true), (32, false)] {
                        let t = buf.len().saturating_sub(3);
                        gcm_aesni::small(k, h, &ctr, &aad[..a], buf, t, &lengths, seal);
                    }
                }
            }),
            ("none", &|_, _, _| {}),
        ];
        let mut gcm_kernels = 0;
        for (name, f) in gcm {
            let d = deepest(f);
            std::eprintln!("stack depth of {name}: {d} B");
            gcm_kernels = gcm_kernels.max(d);
        }
        let _ = &mut acc;
        std::eprintln!(
            "stack depths: AES kernels {aes_kernels} B (wipe {}), GCM kernels {gcm_kernels} B \
             (wipe {})",
            aesni::WIPE_XY,
            aesni::GCM_WIPE,
        );
        assert!(
            aes_kernels + SLACK <= aesni::WIPE_XY,
            "AES kernels {aes_kernels} B deep"
        );
        assert!(
            gcm_kernels + SLACK <= aesni::GCM_WIPE,
            "GCM kernels {gcm_kernels} B deep"
        );
    }
}
