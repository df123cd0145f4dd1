//! Fugue-224/256/384/512: the hash function of Halevi, Hall and Jutla (IBM), as submitted to
//! round 2 of the NIST SHA-3 competition (2009). This is *not* Fugue 2.0 (2012).
//!
//! The state is `s` 32-bit columns (30 for Fugue-224/256, 36 for Fugue-384/512). Each 32-bit
//! message word runs TIX and then `k` rounds of ROR3, CMIX and SMIX (`k` = 2, 2, 3, 4); the
//! message is zero-padded to a word and followed by its 64-bit length in bits; a final stage
//! (G1: more rounds, G2: 13 iterations of "XOR, rotate, SMIX") produces the digest. SMIX is
//! the AES S-box on a 4x4 byte matrix followed by the SuperMix linear map.
//!
//! Backends ([`FugueBackend`]), chosen at run time like the AES core:
//! * `soft`: portable, constant-time, no `unsafe`, slow.
//! * `vpaes`: SSSE3; the S-box by vector-permute lookups of 16-entry tables in a GF((2^4)^2)
//!   tower representation (the technique of Hamburg, "Accelerating AES with vector permute
//!   instructions", CHES 2009); constant-time.
//! * `aesni`: the S-box by AESENCLAST with a zero round key; ShiftRows is absorbed into the
//!   SuperMix byte shuffles.
//! * `gfni`: the S-box and its multiples by 4 and 7 by GF2P8AFFINEINVQB with AVX-512VL
//!   three-input XORs; the shortest dependency chain per round.
//!
//! Every SIMD backend keeps the state as three columns per 128-bit group (in registers, or for
//! `aesni` in an aligned array with explicit loads and stores, which leaves the registers to
//! the SMIX), so the ROR3 of every round is a change of index (the layout of Cagdas Calik's
//! SSE implementation), and computes
//! the SuperMix as a XOR of 13 byte shuffles of three S-box multiples (S, 4S, 7S); the G2 stage
//! keeps one column per register. [`hash_many`] hashes eight equal-length messages side by
//! side (GFNI + AVX-512VL), for proof-of-work style workloads.
//!
//! Lengths are counted in a 64-bit bit counter (modulo 2^64, as the padding defines); any
//! number of `update` calls of any size give the digest of their concatenation. A final
//! partial byte is hashed with [`Fugue::finalize_bits`] (NIST bit order: the message bits are
//! the most significant bits of the last byte).
//!
//! ```
//! use aesx::hash::fugue::{Fugue, FugueAlg, FugueBackend};
//! let alg: FugueAlg = "fugue256".parse()?;
//! let mut h = Fugue::with_backend(alg, FugueBackend::Soft)?; // or Fugue::new(alg)
//! h.update(b"\xcc");
//! // ShortMsgKAT, Len = 8, Msg = CC.
//! assert_eq!(h.finalize()[..4], [0xb8, 0x94, 0xeb, 0x2d]);
//! # Ok::<(), aesx::Error>(())
//! ```
//!
//! Reference: S. Halevi, W. E. Hall, C. S. Jutla, "The Hash Function Fugue", IBM Research,
//! 2009 (the SHA-3 round-2 submission document).

use core::fmt;
use core::str::FromStr;

use crate::{Error, ErrorKind};

#[cfg(target_arch = "x86_64")]
mod aesni;
#[cfg(target_arch = "x86_64")]
mod batch;
#[cfg(target_arch = "x86_64")]
mod gfni;
#[cfg(target_arch = "x86_64")]
mod simd;
mod soft;
#[cfg(target_arch = "x86_64")]
mod vpaes;

/// The SuperMix matrix N over GF(2^8) (AES polynomial).
pub(crate) const N: [[u8; 4]; 4] = [[1, 4, 7, 1], [1, 1, 4, 7], [7, 1, 1, 4], [4, 7, 1, 1]];

/// The four Fugue output sizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FugueAlg {
    Fugue224,
    Fugue256,
    Fugue384,
    Fugue512,
}

impl FugueAlg {
    /// All four, smallest first.
    pub const ALL: [FugueAlg; 4] = [
        FugueAlg::Fugue224,
        FugueAlg::Fugue256,
        FugueAlg::Fugue384,
        FugueAlg::Fugue512,
    ];

    /// `"fugue224"`, `"fugue256"`, `"fugue384"` or `"fugue512"` (CLI and JSON name).
    pub const fn name(self) -> &'static str {
        match self {
            FugueAlg::Fugue224 => "fugue224",
            FugueAlg::Fugue256 => "fugue256",
            FugueAlg::Fugue384 => "fugue384",
            FugueAlg::Fugue512 => "fugue512",
        }
    }

    /// Digest length in bytes (28, 32, 48, 64).
    pub const fn output_len(self) -> usize {
        self.params().n * 4
    }

    pub(crate) const fn params(self) -> &'static Params {
        match self {
            FugueAlg::Fugue224 => &P224,
            FugueAlg::Fugue256 => &P256,
            FugueAlg::Fugue384 => &P384,
            FugueAlg::Fugue512 => &P512,
        }
    }
}

impl fmt::Display for FugueAlg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for FugueAlg {
    type Err = Error;
    /// Accepts `fugue256`, `fugue-256`, `Fugue256` and the like.
    fn from_str(s: &str) -> Result<Self, Error> {
        let t = s.trim();
        FugueAlg::ALL
            .into_iter()
            .find(|a| {
                a.name().eq_ignore_ascii_case(t)
                    || t.len() == 9
                        && t.as_bytes()[5] == b'-'
                        && t[..5].eq_ignore_ascii_case("fugue")
                        && t[6..] == a.name()[5..]
            })
            .ok_or(Error::new(ErrorKind::UnknownAlgorithm))
    }
}

/// Parameters of one Fugue size.
pub(crate) struct Params {
    /// State columns: 30 or 36.
    pub(crate) s: usize,
    /// Output words.
    pub(crate) n: usize,
    /// SMIX rounds per input word.
    pub(crate) k: usize,
    /// Rounds of the final G1 stage.
    pub(crate) g1: usize,
    /// Initial value of the last `n` columns.
    pub(crate) iv: &'static [u32],
}

// Initial values from the Fugue specification (also in sphlib 3.0).
const IV224: [u32; 7] = [
    0xf4c9120d, 0x6286f757, 0xee39e01c, 0xe074e3cb, 0xa1127c62, 0x9a43d215, 0xbd8d679a,
];
const IV256: [u32; 8] = [
    0xe952bdde, 0x6671135f, 0xe0d4f668, 0xd2b0b594, 0xf96c621d, 0xfbf929de, 0x9149e899, 0x34f8c248,
];
const IV384: [u32; 12] = [
    0xaa61ec0d, 0x31252e1f, 0xa01db4c7, 0x00600985, 0x215ef44a, 0x741b5e9c, 0xfa693e9a, 0x473eb040,
    0xe502ae8a, 0xa99c25e0, 0xbc95517c, 0x5c1095a1,
];
const IV512: [u32; 16] = [
    0x8807a57e, 0xe616af75, 0xc5d3e4db, 0xac9ab027, 0xd915f117, 0xb6eecc54, 0x06e8020b, 0x4a92efd1,
    0xaac6e2c9, 0xddb21398, 0xcae65838, 0x437f203f, 0x25ea78e7, 0x951fddd6, 0xda6ed11d, 0xe13e3567,
];

static P224: Params = Params {
    s: 30,
    n: 7,
    k: 2,
    g1: 10,
    iv: &IV224,
};
static P256: Params = Params {
    s: 30,
    n: 8,
    k: 2,
    g1: 10,
    iv: &IV256,
};
static P384: Params = Params {
    s: 36,
    n: 12,
    k: 3,
    g1: 18,
    iv: &IV384,
};
static P512: Params = Params {
    s: 36,
    n: 16,
    k: 4,
    g1: 32,
    iv: &IV512,
};

/// An implementation of the Fugue rounds. Ordered from slowest to fastest.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum FugueBackend {
    /// Portable constant-time code; no `unsafe`; runs everywhere.
    Soft,
    /// SSSE3 vector-permute S-box; constant-time without AES-NI.
    Vpaes,
    /// AES-NI S-box (AESENCLAST with a zero key) + SSSE3 shuffles.
    Aesni,
    /// GFNI affine-inverse S-box + AVX-512VL.
    Gfni,
}

impl FugueBackend {
    /// Every Fugue backend aesx knows, slowest first.
    pub const ALL: [FugueBackend; 4] = [
        FugueBackend::Soft,
        FugueBackend::Vpaes,
        FugueBackend::Aesni,
        FugueBackend::Gfni,
    ];

    /// The backend's name (same word as the AES backends where they share one).
    pub const fn name(self) -> &'static str {
        match self {
            FugueBackend::Soft => "soft",
            FugueBackend::Vpaes => "vpaes",
            FugueBackend::Aesni => "aesni",
            FugueBackend::Gfni => "gfni",
        }
    }

    /// Whether this CPU can run the backend.
    pub fn is_available(self) -> bool {
        let f = crate::cpu::features();
        match self {
            FugueBackend::Soft => true,
            FugueBackend::Vpaes => cfg!(target_arch = "x86_64") && f.ssse3,
            FugueBackend::Aesni => cfg!(target_arch = "x86_64") && f.ssse3 && f.sse41 && f.aes,
            FugueBackend::Gfni => {
                cfg!(target_arch = "x86_64")
                    && f.ssse3
                    && f.gfni
                    && f.avx2
                    && f.avx512f
                    && f.avx512bw
                    && f.avx512vl
            }
        }
    }

    /// Every backend this CPU can run, slowest first (`soft` first).
    #[cfg(feature = "alloc")]
    pub fn available() -> alloc::vec::Vec<FugueBackend> {
        FugueBackend::ALL
            .into_iter()
            .filter(|b| b.is_available())
            .collect()
    }

    /// The fastest available backend.
    pub fn detect() -> FugueBackend {
        FugueBackend::ALL
            .into_iter()
            .rev()
            .find(|b| b.is_available())
            .unwrap_or(FugueBackend::Soft)
    }
}

impl fmt::Display for FugueBackend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for FugueBackend {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        FugueBackend::ALL
            .into_iter()
            .find(|b| b.name().eq_ignore_ascii_case(s.trim()))
            .ok_or(Error::new(ErrorKind::UnknownBackend))
    }
}

/// The canonical state: columns in logical order, row 0 in the most significant byte.
pub(crate) type State = [u32; 36];

// ---------------------------------------------------------------------------------------------
// The only dispatch on the Fugue backend.

/// Absorbs whole 4-byte words (`words.len() % 4 == 0`): TIX and `k` rounds per word.
fn absorb(b: FugueBackend, p: &Params, st: &mut State, words: &[u8]) {
    debug_assert!(words.len().is_multiple_of(4));
    match b {
        #[cfg(target_arch = "x86_64")]
        FugueBackend::Vpaes => vpaes::run(p, st, words, 0),
        #[cfg(target_arch = "x86_64")]
        FugueBackend::Aesni => aesni::run(p, st, words, 0),
        #[cfg(target_arch = "x86_64")]
        FugueBackend::Gfni => gfni::run(p, st, words, 0),
        _ => reference_run(p, st, words, 0, soft::smix),
    }
}

/// The G1 rounds, then G2 and the output columns.
fn close(b: FugueBackend, p: &Params, st: &mut State, out: &mut [u8]) {
    match b {
        #[cfg(target_arch = "x86_64")]
        FugueBackend::Vpaes => {
            vpaes::run(p, st, &[], p.g1);
            vpaes::g2(p, st, out)
        }
        #[cfg(target_arch = "x86_64")]
        FugueBackend::Aesni => {
            aesni::run(p, st, &[], p.g1);
            aesni::g2(p, st, out)
        }
        #[cfg(target_arch = "x86_64")]
        FugueBackend::Gfni => {
            gfni::run(p, st, &[], p.g1);
            gfni::g2(p, st, out)
        }
        _ => {
            reference_run(p, st, &[], p.g1, soft::smix);
            g2(p, st, out, soft::smix)
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Reference round structure (used by `soft`, and by every backend for the G2 stage).

fn ror(st: &mut State, s: usize, n: usize) {
    st[..s].rotate_right(n);
}

/// ROR3, CMIX, SMIX.
#[inline(always)]
fn round(p: &Params, st: &mut State, smix: fn(&mut [u32; 4])) {
    let s = p.s;
    ror(st, s, 3);
    for j in 0..3 {
        st[j] ^= st[4 + j];
        st[s / 2 + j] ^= st[4 + j];
    }
    let mut c = [st[0], st[1], st[2], st[3]];
    smix(&mut c);
    st[..4].copy_from_slice(&c);
}

fn tix(p: &Params, st: &mut State, w: u32) {
    match p.s {
        30 => {
            st[10] ^= st[0];
            st[0] = w;
            st[8] ^= w;
            st[1] ^= st[24];
        }
        _ if p.k == 3 => {
            st[16] ^= st[0];
            st[0] = w;
            st[8] ^= w;
            st[1] ^= st[27];
            st[4] ^= st[30];
        }
        _ => {
            st[22] ^= st[0];
            st[0] = w;
            st[8] ^= w;
            st[1] ^= st[24];
            st[4] ^= st[27];
            st[7] ^= st[30];
        }
    }
}

/// Absorbs `words` then runs `extra` plain rounds, one column rotation at a time.
pub(crate) fn reference_run(
    p: &Params,
    st: &mut State,
    words: &[u8],
    extra: usize,
    smix: fn(&mut [u32; 4]),
) {
    for w in words.chunks_exact(4) {
        tix(p, st, u32::from_be_bytes(w.try_into().unwrap()));
        for _ in 0..p.k {
            round(p, st, smix);
        }
    }
    for _ in 0..extra {
        round(p, st, smix);
    }
}

/// The (columns XORed with S0, right rotation) steps of one G2 iteration.
pub(crate) fn g2_steps(p: &Params) -> &'static [(&'static [usize], usize)] {
    match (p.s, p.k) {
        (30, _) => &[(&[4, 15], 15), (&[4, 16], 14)],
        (_, 3) => &[(&[4, 12, 24], 12), (&[4, 13, 24], 12), (&[4, 13, 25], 11)],
        _ => &[
            (&[4, 9, 18, 27], 9),
            (&[4, 10, 18, 27], 9),
            (&[4, 10, 19, 27], 9),
            (&[4, 10, 19, 28], 8),
        ],
    }
}

/// First columns of the four-column groups the digest is read from.
pub(crate) fn out_groups(p: &Params) -> &'static [usize] {
    match (p.s, p.k) {
        (30, _) => &[1, 15],
        (_, 3) => &[1, 12, 24],
        _ => &[1, 9, 18, 27],
    }
}

/// The G2 stage and the output.
fn g2(p: &Params, st: &mut State, out: &mut [u8], smix: fn(&mut [u32; 4])) {
    let s = p.s;
    let steps = g2_steps(p);
    for _ in 0..13 {
        for (cols, r) in steps {
            for &c in *cols {
                st[c] ^= st[0];
            }
            ror(st, s, *r);
            let mut c = [st[0], st[1], st[2], st[3]];
            smix(&mut c);
            st[..4].copy_from_slice(&c);
        }
    }
    for &c in steps[0].0 {
        st[c] ^= st[0];
    }
    let mut o = 0;
    for &g in out_groups(p) {
        for col in &st[g..g + 4] {
            if o < p.n {
                out[4 * o..4 * o + 4].copy_from_slice(&col.to_be_bytes());
                o += 1;
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Streaming API.

/// Bytes absorbed per backend call in `update` (bounds nothing but the work per call).
const CHUNK: usize = 1 << 16;

/// A streaming Fugue hasher.
///
/// ```
/// use aesx::hash::{Fugue, FugueAlg};
/// let mut h = Fugue::new(FugueAlg::Fugue256);
/// h.update(b"ab");
/// h.update(b"c");
/// let d = h.finalize();
/// assert_eq!(d, aesx::hash::fugue256(b"abc"));
/// ```
#[derive(Clone)]
pub struct Fugue {
    alg: FugueAlg,
    backend: FugueBackend,
    st: State,
    buf: [u8; 4],
    buf_len: usize,
    /// Message length so far in bits, modulo 2^64 (as the padding defines it).
    bits: u64,
}

impl fmt::Debug for Fugue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Fugue")
            .field("alg", &self.alg)
            .field("backend", &self.backend)
            .finish_non_exhaustive()
    }
}

impl Fugue {
    /// A hasher on the fastest backend of this CPU.
    pub fn new(alg: FugueAlg) -> Fugue {
        Fugue::init(alg, FugueBackend::detect())
    }

    /// A hasher on a chosen backend; [`ErrorKind::BackendUnavailable`] if this CPU cannot
    /// run it.
    pub fn with_backend(alg: FugueAlg, backend: FugueBackend) -> Result<Fugue, Error> {
        if !backend.is_available() {
            return Err(Error::new(ErrorKind::BackendUnavailable));
        }
        Ok(Fugue::init(alg, backend))
    }

    fn init(alg: FugueAlg, backend: FugueBackend) -> Fugue {
        let p = alg.params();
        let mut st = [0u32; 36];
        st[p.s - p.n..p.s].copy_from_slice(p.iv);
        Fugue {
            alg,
            backend,
            st,
            buf: [0; 4],
            buf_len: 0,
            bits: 0,
        }
    }

    /// The output size.
    pub fn alg(&self) -> FugueAlg {
        self.alg
    }

    /// The backend this hasher runs on.
    pub fn backend(&self) -> FugueBackend {
        self.backend
    }

    /// Absorbs more message bytes.
    pub fn update(&mut self, mut data: &[u8]) {
        let p = self.alg.params();
        self.bits = self.bits.wrapping_add((data.len() as u64).wrapping_mul(8));
        if self.buf_len > 0 {
            let take = (4 - self.buf_len).min(data.len());
            self.buf[self.buf_len..self.buf_len + take].copy_from_slice(&data[..take]);
            self.buf_len += take;
            data = &data[take..];
            if self.buf_len < 4 {
                return;
            }
            let w = self.buf;
            absorb(self.backend, p, &mut self.st, &w);
            self.buf_len = 0;
        }
        let whole = data.len() & !3;
        for chunk in data[..whole].chunks(CHUNK) {
            absorb(self.backend, p, &mut self.st, chunk);
        }
        let rest = &data[whole..];
        self.buf[..rest.len()].copy_from_slice(rest);
        self.buf_len = rest.len();
    }

    /// Finishes the hash and writes the digest (`alg.output_len()` bytes) to the start of `out`.
    pub fn finalize_into(self, out: &mut [u8]) -> Result<(), Error> {
        self.finalize_bits_into(0, 0, out)
    }

    /// Like [`Fugue::finalize_into`], after appending the `nbits` (0..=7) most significant
    /// bits of `last` to the message (NIST bit order). The low bits of `last` are ignored.
    pub fn finalize_bits_into(mut self, last: u8, nbits: u32, out: &mut [u8]) -> Result<(), Error> {
        if nbits > 7 {
            return Err(Error::new(ErrorKind::InvalidLength));
        }
        let p = self.alg.params();
        if out.len() < p.n * 4 {
            return Err(Error::new(ErrorKind::OutputTooSmall));
        }
        let bits = self.bits.wrapping_add(nbits as u64);
        let mut tail = [0u8; 12];
        let mut t = 0;
        if self.buf_len > 0 || nbits > 0 {
            tail[..self.buf_len].copy_from_slice(&self.buf[..self.buf_len]);
            if nbits > 0 {
                tail[self.buf_len] = last & !(0xffu8 >> nbits);
            }
            t = 4;
        }
        tail[t..t + 8].copy_from_slice(&bits.to_be_bytes());
        absorb(self.backend, p, &mut self.st, &tail[..t + 8]);
        close(self.backend, p, &mut self.st, &mut out[..p.n * 4]);
        Ok(())
    }

    /// Finishes the hash; the digest is `alg.output_len()` bytes.
    #[cfg(feature = "alloc")]
    pub fn finalize(self) -> alloc::vec::Vec<u8> {
        let mut out = alloc::vec![0u8; self.alg.output_len()];
        self.finalize_into(&mut out)
            .expect("buffer sized for the digest");
        out
    }

    /// Finishes the hash after `nbits` (0..=7) extra message bits, the most significant bits
    /// of `last`; [`ErrorKind::InvalidLength`] if `nbits > 7`.
    #[cfg(feature = "alloc")]
    pub fn finalize_bits(self, last: u8, nbits: u32) -> Result<alloc::vec::Vec<u8>, Error> {
        let mut out = alloc::vec![0u8; self.alg.output_len()];
        self.finalize_bits_into(last, nbits, &mut out)?;
        Ok(out)
    }
}

/// Hashes a message of `bit_len` bits: the whole bytes of `data`, then the most significant
/// `bit_len % 8` bits of the next byte (NIST bit order). [`ErrorKind::InvalidLength`] if `data`
/// is shorter than `ceil(bit_len / 8)` bytes.
#[cfg(feature = "alloc")]
pub fn hash_bits(
    alg: FugueAlg,
    backend: FugueBackend,
    data: &[u8],
    bit_len: u64,
) -> Result<alloc::vec::Vec<u8>, Error> {
    let whole = usize::try_from(bit_len / 8).map_err(|_| Error::new(ErrorKind::InvalidLength))?;
    let nbits = (bit_len % 8) as u32;
    if data.len() < whole + (nbits > 0) as usize {
        return Err(Error::new(ErrorKind::InvalidLength));
    }
    let mut h = Fugue::with_backend(alg, backend)?;
    h.update(&data[..whole]);
    let last = if nbits > 0 { data[whole] } else { 0 };
    h.finalize_bits(last, nbits)
}

/// Hashes `data` on the fastest backend.
#[cfg(feature = "alloc")]
pub fn hash(alg: FugueAlg, data: &[u8]) -> alloc::vec::Vec<u8> {
    let mut h = Fugue::new(alg);
    h.update(data);
    h.finalize()
}

macro_rules! one_shot {
    ($name:ident, $alg:ident, $len:literal) => {
        #[doc = concat!("Fugue-", stringify!($alg), " of `data` on the fastest backend.")]
        pub fn $name(data: &[u8]) -> [u8; $len] {
            let mut h = Fugue::new(FugueAlg::$alg);
            h.update(data);
            let mut out = [0u8; $len];
            h.finalize_into(&mut out)
                .expect("buffer sized for the digest");
            out
        }
    };
}
one_shot!(fugue224, Fugue224, 28);
one_shot!(fugue256, Fugue256, 32);
one_shot!(fugue384, Fugue384, 48);
one_shot!(fugue512, Fugue512, 64);

// ---------------------------------------------------------------------------------------------
// Many messages at once.

/// How many messages the batch kernel hashes side by side (8 on CPUs with GFNI and
/// AVX-512VL; the batch functions work everywhere and fall back to one message at a time).
pub const BATCH_LANES: usize = 8;

/// Hashes many messages of equal length at once (the shape of a proof-of-work search):
/// digest `i` of `msgs[i]` goes to `out[i * alg.output_len()..][..alg.output_len()]`.
///
/// On CPUs with GFNI and AVX-512VL, groups of eight messages run in the eight lanes of one
/// vector kernel, several times the throughput of hashing them one by one; elsewhere this
/// loops over the fastest single-message backend. Errors: [`ErrorKind::InvalidLength`] if the
/// messages differ in length, [`ErrorKind::OutputTooSmall`] if `out` is too short.
pub fn hash_many(alg: FugueAlg, msgs: &[&[u8]], out: &mut [u8]) -> Result<(), Error> {
    hash_many_with_backend(alg, FugueBackend::detect(), msgs, out)
}

/// [`hash_many`] on a chosen backend: the eight-lane kernel is used for `gfni`; every other
/// backend hashes the messages one at a time (so tests and benchmarks can compare them).
pub fn hash_many_with_backend(
    alg: FugueAlg,
    backend: FugueBackend,
    msgs: &[&[u8]],
    out: &mut [u8],
) -> Result<(), Error> {
    if !backend.is_available() {
        return Err(Error::new(ErrorKind::BackendUnavailable));
    }
    let olen = alg.output_len();
    let Some(first) = msgs.first() else {
        return Ok(());
    };
    let len = first.len();
    if msgs.iter().any(|m| m.len() != len) {
        return Err(Error::new(ErrorKind::InvalidLength));
    }
    if out.len() < msgs.len() * olen {
        return Err(Error::new(ErrorKind::OutputTooSmall));
    }
    let mut done = 0;
    #[cfg(target_arch = "x86_64")]
    if backend == FugueBackend::Gfni && batch::available() {
        let p = alg.params();
        // Full groups of eight; a final group of three or more is padded with repeats of its
        // first message (one eight-lane pass costs about as much as 2.3 single messages).
        while msgs.len() - done >= 3 {
            let n = (msgs.len() - done).min(batch::LANES);
            let group: [&[u8]; batch::LANES] =
                core::array::from_fn(|m| msgs[done + if m < n { m } else { 0 }]);
            let mut d = [[0u8; 64]; batch::LANES];
            batch::hash8(p, &group, len, &mut d);
            for (m, dig) in d.iter().enumerate().take(n) {
                out[(done + m) * olen..(done + m + 1) * olen].copy_from_slice(&dig[..olen]);
            }
            done += n;
        }
    }
    for (i, m) in msgs.iter().enumerate().skip(done) {
        let mut h = Fugue::init(alg, backend);
        h.update(m);
        h.finalize_into(&mut out[i * olen..(i + 1) * olen])?;
    }
    Ok(())
}
