//! CPU feature detection: what this CPU and operating system support. Nothing here knows about
//! backends; [`crate::Backend`] (in `backend.rs`) decides what it can run from these features.
//!
//! Detection runs once (cpuid + xgetbv, so it works without `std`) and is cached. Decoding is a
//! pure function of the CPUID leaves and XCR0 (`decode`), unit-tested with recorded tables.
//! The library never reads environment variables: forcing a backend is an explicit call
//! ([`crate::Aes::with_backend`]); the CLI maps its own `--backend` / `AESX_BACKEND` onto that.

use core::sync::atomic::{AtomicU32, Ordering};

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
const AMD_LIKE: u32 = 1 << 30;
static CACHE: AtomicU32 = AtomicU32::new(0);

/// What [`decode`] finds: the features, and whether the vendor is AMD or Hygon (key expansion
/// picks its instruction sequence by vendor; see `backend::aesni`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Detected {
    pub(crate) features: CpuFeatures,
    pub(crate) amd_like: bool,
}

/// The cached detection; CPUID only on the first call.
///
/// IMPLEMENTATION NOTE (issue 13): the cached path is inlined into callers and the detection
/// is a cold function of its own. As one function (CPUID and the decoding inlined into it),
/// `detected` was too large to inline: every `features()` or `amd_like()` was a call that
/// saved six registers and rebuilt the whole feature set. The `vaes512` CTR dispatch
/// (`aesni::ctr_nostack`, which asks `amd_like()` on every call) measured 14 ns a call slower
/// with that call than without it on Zen 4, as much as the AES work of 256 bytes.
#[inline(always)]
fn detected() -> Detected {
    let c = CACHE.load(Ordering::Relaxed);
    if c & DETECTED != 0 {
        return Detected {
            features: CpuFeatures::from_bits(c),
            amd_like: c & AMD_LIKE != 0,
        };
    }
    detect_and_cache()
}

#[cold]
#[inline(never)]
fn detect_and_cache() -> Detected {
    let d = detect();
    let bits = d.features.to_bits() | if d.amd_like { AMD_LIKE } else { 0 } | DETECTED;
    CACHE.store(bits, Ordering::Relaxed);
    d
}

/// The features of this CPU, detected on first call and cached.
#[inline]
pub fn features() -> CpuFeatures {
    detected().features
}

/// Whether the CPU vendor is AMD or Hygon (cached with the features).
#[inline]
pub(crate) fn amd_like() -> bool {
    detected().amd_like
}

/// Decodes the features from CPUID and XCR0, given as functions so that tests can feed
/// recorded tables: `cpuid(leaf, subleaf)` returns `[eax, ebx, ecx, edx]`, `xgetbv0()` returns
/// XCR0 and is called only when CPUID says the OS enabled XGETBV (OSXSAVE).
///
/// Leaf 7 is read only when leaf 0 reports it exists: on a CPU (or a VM, or a BIOS with "limit
/// CPUID maxval") whose highest basic leaf is below 7, asking for leaf 7 returns the data of
/// some other leaf (Intel documents the highest basic leaf), and decoding that as leaf 7 would
/// invent features. Leaf 7 is then all zeros.
pub(crate) fn decode(
    mut cpuid: impl FnMut(u32, u32) -> [u32; 4],
    xgetbv0: impl FnOnce() -> u64,
) -> Detected {
    let [max, vb, vc, vd] = cpuid(0, 0);
    let [_, _, l1c, l1d] = cpuid(1, 0);
    let [_, l7b, l7c, _] = if max >= 7 { cpuid(7, 0) } else { [0; 4] };
    let bit = |r: u32, i: u32| r & (1 << i) != 0;
    let osxsave = bit(l1c, 27);
    let xcr0 = if osxsave { xgetbv0() } else { 0 };
    let os_avx = xcr0 & 0b110 == 0b110;
    let os_avx512 = os_avx && xcr0 & 0b1110_0000 == 0b1110_0000;
    let avx = os_avx && bit(l1c, 28);
    let avx512f = os_avx512 && bit(l7b, 16);
    let vendor = |s: &[u8; 12]| {
        [vb, vd, vc] == [0, 4, 8].map(|i| u32::from_le_bytes(s[i..i + 4].try_into().unwrap()))
    };
    Detected {
        features: CpuFeatures {
            aes: bit(l1c, 25),
            pclmulqdq: bit(l1c, 1),
            sse2: bit(l1d, 26),
            ssse3: bit(l1c, 9),
            sse41: bit(l1c, 19),
            sse42: bit(l1c, 20),
            avx,
            avx2: avx && bit(l7b, 5),
            avx512f,
            avx512bw: avx512f && bit(l7b, 30),
            avx512vl: avx512f && bit(l7b, 31),
            avx512vbmi: avx512f && bit(l7c, 1),
            vaes: avx && bit(l7c, 9),
            vpclmulqdq: avx && bit(l7c, 10),
            gfni: bit(l7c, 8),
        },
        amd_like: vendor(b"AuthenticAMD") || vendor(b"HygonGenuine"),
    }
}

#[cfg(target_arch = "x86_64")]
fn detect() -> Detected {
    use core::arch::x86_64::{__cpuid_count, _xgetbv};
    #[target_feature(enable = "xsave")]
    unsafe fn xgetbv0() -> u64 {
        // SAFETY: the caller checked OSXSAVE, so XGETBV with ECX = 0 is valid.
        unsafe { _xgetbv(0) }
    }
    decode(
        |leaf, sub| {
            // cpuid is always present on x86_64 (safe to call since Rust 1.87 on this target).
            let r = __cpuid_count(leaf, sub);
            [r.eax, r.ebx, r.ecx, r.edx]
        },
        // SAFETY: `decode` calls this only when OSXSAVE (cpuid.1:ecx[27]) says the OS enabled
        // XGETBV, which is what the `xsave` target feature of `xgetbv0` means.
        || unsafe { xgetbv0() },
    )
}

#[cfg(not(target_arch = "x86_64"))]
fn detect() -> Detected {
    Detected::default()
}

#[cfg(test)]
mod tests {
    //! Decoding against recorded CPUID tables. Sources: the Zen 3 rows were read on the EPYC
    //! family 25 model 1 VM aesx is developed on (2 vCPUs, Linux); Zen 4 (EPYC "Genoa", CPUID
    //! 00A10F11) and Emerald Rapids (Xeon, CPUID 000C06F2) are from InstLatx64's public CPUID
    //! dumps (`AuthenticAMD0A10F11_K19_Genoa_01_CPUID.txt`,
    //! `GenuineIntel00C06F2_EmeraldRapids_01_CPUID.txt`). XCR0 for those two is the OS-enabled
    //! mask Linux sets there (x87/SSE/AVX/AVX-512 state, plus AMX tiles on Intel: bits from
    //! leaf 0xD); the capped tables are the same CPUs with leaf 0 reporting a lower maximum, as
    //! a hypervisor or the BIOS option "limit CPUID maxval" does.
    use super::*;
    use std::vec::Vec;

    type Leaf = (u32, [u32; 4]);

    const ZEN3: [Leaf; 3] = [
        (0, [0x0000_0010, 0x6874_7541, 0x444D_4163, 0x6974_6E65]),
        (1, [0x00A0_0F11, 0x0102_0800, 0xFFFA_3203, 0x178B_FBFF]),
        (7, [0x0000_0000, 0x219C_07AB, 0x0040_069C, 0x8800_0010]),
    ];
    const ZEN3_XCR0: u64 = 0x207;
    const ZEN4: [Leaf; 3] = [
        (0, [0x0000_0010, 0x6874_7541, 0x444D_4163, 0x6974_6E65]),
        (1, [0x00A1_0F11, 0x00C0_0800, 0x7EFA_320B, 0x178B_FBFF]),
        (7, [0x0000_0001, 0xF1BF_97A9, 0x0041_5FCE, 0x1000_0010]),
    ];
    const ZEN4_XCR0: u64 = 0x2E7;
    const EMR: [Leaf; 3] = [
        (0, [0x0000_0020, 0x756E_6547, 0x6C65_746E, 0x4965_6E69]),
        (1, [0x000C_06F2, 0x0080_0800, 0x7FFE_FBFF, 0xBFEB_FBFF]),
        (7, [0x0000_0002, 0xF3BF_BFFF, 0xFB41_7FEE, 0xFFDD_4432]),
    ];
    const EMR_XCR0: u64 = 0x602E7;

    /// Runs `decode` on a table. A leaf above the table's maximum answers like Intel CPUs do
    /// (the highest basic leaf's data), so reading it would decode garbage; the leaves read are
    /// returned too.
    fn run(table: &[Leaf], max: u32, xcr0: u64) -> (Detected, Vec<u32>) {
        let mut asked = Vec::new();
        let d = decode(
            |leaf, sub| {
                assert_eq!(sub, 0);
                asked.push(leaf);
                let leaf = if leaf > max { max } else { leaf };
                let mut r = table
                    .iter()
                    .rev()
                    .find(|(l, _)| *l <= leaf)
                    .map_or([0; 4], |&(_, r)| r);
                if leaf == 0 {
                    r[0] = max;
                }
                r
            },
            || xcr0,
        );
        (d, asked)
    }

    fn names(f: CpuFeatures) -> Vec<&'static str> {
        f.list().filter(|&(_, on)| on).map(|(n, _)| n).collect()
    }

    #[test]
    fn zen3() {
        let (d, _) = run(&ZEN3, 0x10, ZEN3_XCR0);
        assert!(d.amd_like);
        assert_eq!(
            names(d.features),
            [
                "aes",
                "pclmulqdq",
                "sse2",
                "ssse3",
                "sse4.1",
                "sse4.2",
                "avx",
                "avx2",
                "vaes",
                "vpclmulqdq"
            ]
        );
    }

    #[test]
    fn zen4() {
        let (d, _) = run(&ZEN4, 0x10, ZEN4_XCR0);
        assert!(d.amd_like);
        assert_eq!(
            names(d.features),
            [
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
                "gfni"
            ]
        );
    }

    #[test]
    fn emerald_rapids() {
        let (d, _) = run(&EMR, 0x20, EMR_XCR0);
        assert!(!d.amd_like);
        assert_eq!(names(d.features).len(), 15, "{:?}", d.features);
        // An OS that does not enable the AVX-512 state (XCR0 bits 5-7) gets no AVX-512, and
        // one without AVX state no AVX, whatever CPUID says.
        let (d, _) = run(&EMR, 0x20, 0x7);
        assert!(d.features.avx2 && d.features.vaes && !d.features.avx512f);
        assert!(!d.features.avx512bw && !d.features.avx512vl && !d.features.avx512vbmi);
        let (d, _) = run(&EMR, 0x20, 0x3);
        assert!(!d.features.avx && !d.features.avx2 && !d.features.vaes);
        assert!(d.features.aes && d.features.gfni);
    }

    /// Issue 14, finding 4: with the highest basic leaf below 7, leaf 7 must read as zeros.
    /// Decoding the vendor string (leaf 0) as leaf 7 reported `gfni` on AMD and `vpclmulqdq` on
    /// Intel with AVX.
    #[test]
    fn capped_max_leaf_has_no_leaf_7_features() {
        for (table, xcr0) in [(&ZEN3, ZEN3_XCR0), (&ZEN4, ZEN4_XCR0), (&EMR, EMR_XCR0)] {
            for max in [1, 2, 3, 4, 5, 6] {
                let (d, asked) = run(table, max, xcr0);
                assert!(!asked.contains(&7), "max leaf {max}: leaf 7 read");
                let f = d.features;
                assert!(f.aes && f.avx && f.sse42 && f.pclmulqdq, "max leaf {max}");
                assert!(
                    !(f.avx2 || f.avx512f || f.avx512bw || f.avx512vl || f.avx512vbmi),
                    "max leaf {max}: {f:?}"
                );
                assert!(!(f.vaes || f.vpclmulqdq || f.gfni), "max leaf {max}: {f:?}");
            }
        }
        // What the old code decoded: leaf 0 read as leaf 7.
        let leaf0_as_7 = |t: &[Leaf; 3], xcr0| {
            let mut t = *t;
            t[2].1 = t[0].1;
            run(&t, 0x10, xcr0).0.features
        };
        assert!(leaf0_as_7(&ZEN3, ZEN3_XCR0).gfni);
        assert!(leaf0_as_7(&EMR, EMR_XCR0).vpclmulqdq);
    }

    #[test]
    fn no_osxsave_no_xgetbv() {
        let mut t = ZEN4;
        t[1].1[2] &= !(1 << 27);
        let d = decode(
            |leaf, _| {
                t.iter()
                    .find(|(l, _)| *l == leaf)
                    .map_or([0; 4], |&(_, r)| r)
            },
            || panic!("xgetbv without OSXSAVE"),
        );
        assert!(d.features.aes && !d.features.avx && !d.features.avx512f);
    }

    #[test]
    fn bits_round_trip() {
        let f = features();
        assert_eq!(CpuFeatures::from_bits(f.to_bits()), f);
        for t in [&ZEN3, &ZEN4, &EMR] {
            let f = run(t, 0x10, 0x2E7).0.features;
            assert_eq!(CpuFeatures::from_bits(f.to_bits()), f);
        }
        // The cache agrees with a fresh decode of this CPU.
        assert_eq!(detected(), detect());
    }
}
