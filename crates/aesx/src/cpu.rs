//! CPU feature detection and the [`Backend`] enum.
//!
//! Detection runs once (cpuid + xgetbv, so it works without `std`) and is cached. The library
//! never reads environment variables: forcing a backend is an explicit call
//! ([`crate::Aes::with_backend`]); the CLI maps its own `--backend` / `AESX_BACKEND` onto that.

use core::fmt;
use core::str::FromStr;
use core::sync::atomic::{AtomicU32, Ordering};

use crate::{Error, ErrorKind};

/// An implementation of the AES kernels. Ordered from slowest to fastest.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Backend {
    /// Portable bitsliced software; constant-time; no `unsafe`. Runs everywhere.
    Soft,
    /// SSSE3 vector-permute AES (Hamburg, CHES 2009); constant-time without AES-NI.
    Vpaes,
    /// AES-NI (with SSE4.2) on xmm registers, 8 blocks interleaved.
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
        static AVAILABLE: AtomicU32 = AtomicU32::new(0);
        let mut set = AVAILABLE.load(Ordering::Relaxed);
        if set == 0 {
            let f = features();
            for b in Backend::ALL {
                if b.supported_by(&f) {
                    set |= 1 << b as u32;
                }
            }
            AVAILABLE.store(set, Ordering::Relaxed);
        }
        set & (1 << self as u32) != 0
    }

    fn supported_by(self, f: &CpuFeatures) -> bool {
        match self {
            Backend::Soft => true,
            Backend::Vpaes => crate::backend::VPAES_BUILT && f.ssse3,
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
    pub fn detect() -> Backend {
        static BEST: AtomicU32 = AtomicU32::new(u32::MAX);
        if let Some(&b) = Backend::ALL.get(BEST.load(Ordering::Relaxed) as usize) {
            return b;
        }
        let best = Backend::ALL
            .into_iter()
            .rev()
            .find(|b| b.is_available())
            .unwrap_or(Backend::Soft);
        BEST.store(best as u32, Ordering::Relaxed);
        best
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

/// The CPU features that matter to aesx, as this CPU and OS report them
/// (AVX/AVX-512 count only when the OS saves their registers).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CpuFeatures {
    pub aes: bool,
    pub pclmulqdq: bool,
    pub sse2: bool,
    pub ssse3: bool,
    pub sse41: bool,
    pub sse42: bool,
    pub avx: bool,
    pub avx2: bool,
    pub avx512f: bool,
    pub avx512bw: bool,
    pub avx512vl: bool,
    pub avx512vbmi: bool,
    pub vaes: bool,
    pub vpclmulqdq: bool,
    pub gfni: bool,
}

const BITS: [&str; 15] = [
    "aes",
    "pclmulqdq",
    "sse2",
    "ssse3",
    "sse4.1",
    "sse4.2",
    "avx",
    "avx2",
    "avx512f",
    "avx512bw",
    "avx512vl",
    "avx512vbmi",
    "vaes",
    "vpclmulqdq",
    "gfni",
];

impl CpuFeatures {
    fn to_bits(self) -> u32 {
        let v = self.as_array();
        v.iter()
            .enumerate()
            .fold(0, |acc, (i, &b)| acc | ((b as u32) << i))
    }
    fn from_bits(bits: u32) -> Self {
        let b = |i: u32| bits & (1 << i) != 0;
        CpuFeatures {
            aes: b(0),
            pclmulqdq: b(1),
            sse2: b(2),
            ssse3: b(3),
            sse41: b(4),
            sse42: b(5),
            avx: b(6),
            avx2: b(7),
            avx512f: b(8),
            avx512bw: b(9),
            avx512vl: b(10),
            avx512vbmi: b(11),
            vaes: b(12),
            vpclmulqdq: b(13),
            gfni: b(14),
        }
    }
    fn as_array(self) -> [bool; 15] {
        [
            self.aes,
            self.pclmulqdq,
            self.sse2,
            self.ssse3,
            self.sse41,
            self.sse42,
            self.avx,
            self.avx2,
            self.avx512f,
            self.avx512bw,
            self.avx512vl,
            self.avx512vbmi,
            self.vaes,
            self.vpclmulqdq,
            self.gfni,
        ]
    }
    /// `(name, present)` pairs in a fixed order, for reports (`aesx cpu`).
    pub fn list(self) -> impl Iterator<Item = (&'static str, bool)> {
        BITS.into_iter().zip(self.as_array())
    }
}

const DETECTED: u32 = 1 << 31;
static CACHE: AtomicU32 = AtomicU32::new(0);

/// The features of this CPU, detected on first call and cached.
pub fn features() -> CpuFeatures {
    let c = CACHE.load(Ordering::Relaxed);
    if c & DETECTED != 0 {
        return CpuFeatures::from_bits(c);
    }
    let f = detect_features();
    CACHE.store(f.to_bits() | DETECTED, Ordering::Relaxed);
    f
}

#[cfg(target_arch = "x86_64")]
fn detect_features() -> CpuFeatures {
    use core::arch::x86_64::{__cpuid, __cpuid_count, _xgetbv};
    // cpuid is always present on x86_64 (it is safe to call since Rust 1.87 on this target).
    let max = __cpuid(0).eax;
    let l1 = __cpuid(1);
    let l7 = if max >= 7 {
        __cpuid_count(7, 0)
    } else {
        __cpuid(0)
    };
    let bit = |r: u32, i: u32| r & (1 << i) != 0;
    let osxsave = bit(l1.ecx, 27);
    let xcr0 = if osxsave {
        // SAFETY: OSXSAVE (cpuid.1:ecx[27]) says the OS enabled XGETBV, and the `xsave`
        // target feature this intrinsic is gated on is what that bit means.
        unsafe { xgetbv0() }
    } else {
        0
    };
    #[target_feature(enable = "xsave")]
    unsafe fn xgetbv0() -> u64 {
        // SAFETY: the caller checked OSXSAVE, so XGETBV with ECX = 0 is valid.
        unsafe { _xgetbv(0) }
    }
    let os_avx = xcr0 & 0b110 == 0b110;
    let os_avx512 = os_avx && xcr0 & 0b1110_0000 == 0b1110_0000;
    let avx = os_avx && bit(l1.ecx, 28);
    let avx512f = os_avx512 && bit(l7.ebx, 16);
    CpuFeatures {
        aes: bit(l1.ecx, 25),
        pclmulqdq: bit(l1.ecx, 1),
        sse2: bit(l1.edx, 26),
        ssse3: bit(l1.ecx, 9),
        sse41: bit(l1.ecx, 19),
        sse42: bit(l1.ecx, 20),
        avx,
        avx2: avx && bit(l7.ebx, 5),
        avx512f,
        avx512bw: avx512f && bit(l7.ebx, 30),
        avx512vl: avx512f && bit(l7.ebx, 31),
        avx512vbmi: avx512f && bit(l7.ecx, 1),
        vaes: avx && bit(l7.ecx, 9),
        vpclmulqdq: avx && bit(l7.ecx, 10),
        gfni: bit(l7.ecx, 8),
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn detect_features() -> CpuFeatures {
    CpuFeatures::default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_round_trip_and_names_parse() {
        let f = features();
        assert_eq!(CpuFeatures::from_bits(f.to_bits()), f);
        for b in Backend::ALL {
            assert_eq!(b.name().parse::<Backend>().unwrap(), b);
        }
        assert_eq!(
            "nope".parse::<Backend>().unwrap_err().kind(),
            ErrorKind::UnknownBackend
        );
        assert!(Backend::Soft.is_available());
        assert!(Backend::detect().is_available());
    }
}
