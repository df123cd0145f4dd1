//! Eight independent equal-length messages at once (GFNI + AVX-512VL on ymm).
//!
//! IMPLEMENTATION NOTE. A single Fugue message is one long dependency chain, so the single
//! message backends leave most execution ports idle. Here the state is stored "vertically":
//! state column `j` of all eight messages is one ymm register (dword `m` = message `m`), so
//! TIX, CMIX, the G2 column XORs and every rotation are whole-register XORs and index changes
//! of a ring, written once for all lanes. Before each SMIX a 4x4 dword transpose per 128-bit
//! half turns columns S0..S3 into four registers holding two messages' 4x4 byte matrices each;
//! the four SMIX chains then run side by side and the transpose is undone. Same S-box and
//! SuperMix tables as the `gfni` backend; constant-time for the same reasons.

use core::arch::x86_64::*;

use super::Params;
use super::gfni::{M0, M1, M2};
use super::simd::{IDENT, MixTables, PLAN10, load, mix_tables_plan};

pub(crate) const LANES: usize = 8;

const MIX: MixTables = mix_tables_plan(IDENT, false, PLAN10);

#[inline]
#[target_feature(enable = "gfni,avx2,avx512f,avx512bw,avx512vl")]
fn bcast(t: &[u8; 16]) -> __m256i {
    _mm256_broadcastsi128_si256(load(t))
}

#[inline]
#[target_feature(enable = "gfni,avx2,avx512f,avx512bw,avx512vl")]
fn x3(a: __m256i, b: __m256i, c: __m256i) -> __m256i {
    _mm256_ternarylogic_epi32::<0x96>(a, b, c)
}

/// The GF2P8AFFINEINVQB matrices of `m` (low, high qword) for both 128-bit halves.
#[inline]
#[target_feature(enable = "gfni,avx2,avx512f,avx512bw,avx512vl")]
fn mat(m: [i64; 2]) -> __m256i {
    _mm256_set_epi64x(m[1], m[0], m[1], m[0])
}

/// SMIX of two messages (one per 128-bit half), natural column order: the `gfni` backend's
/// S-box outputs and 10 shuffles (`simd::PLAN10`), the affine constant added once.
#[inline]
#[target_feature(enable = "gfni,avx2,avx512f,avx512bw,avx512vl")]
fn smix2(x: __m256i) -> __m256i {
    let a = _mm256_gf2p8affineinv_epi64_epi8::<0>(x, mat(M0));
    let b = _mm256_gf2p8affineinv_epi64_epi8::<0>(x, mat(M1));
    let c = _mm256_gf2p8affineinv_epi64_epi8::<0>(x, mat(M2));
    let t = &MIX.t;
    let t0 = _mm256_shuffle_epi8(a, bcast(&t[0]));
    let t1 = _mm256_shuffle_epi8(a, bcast(&t[1]));
    let t2 = _mm256_shuffle_epi8(a, bcast(&t[2]));
    let t3 = _mm256_shuffle_epi8(a, bcast(&t[3]));
    let t4 = _mm256_shuffle_epi8(b, bcast(&t[4]));
    let t5 = _mm256_shuffle_epi8(b, bcast(&t[5]));
    let t6 = _mm256_shuffle_epi8(b, bcast(&t[6]));
    let t7 = _mm256_shuffle_epi8(c, bcast(&t[7]));
    let t8 = _mm256_shuffle_epi8(c, bcast(&t[8]));
    let t9 = _mm256_shuffle_epi8(c, bcast(&t[9]));
    let b0 = x3(x3(t0, t1, t2), x3(t3, t4, t5), x3(t6, t7, t8));
    x3(b0, t9, bcast(&MIX.k))
}

/// Per-128-bit-half 4x4 dword transpose (its own inverse).
#[inline]
#[target_feature(enable = "gfni,avx2,avx512f,avx512bw,avx512vl")]
fn transpose(c: [__m256i; 4]) -> [__m256i; 4] {
    let t0 = _mm256_unpacklo_epi32(c[0], c[1]);
    let t1 = _mm256_unpackhi_epi32(c[0], c[1]);
    let t2 = _mm256_unpacklo_epi32(c[2], c[3]);
    let t3 = _mm256_unpackhi_epi32(c[2], c[3]);
    [
        _mm256_unpacklo_epi64(t0, t2),
        _mm256_unpackhi_epi64(t0, t2),
        _mm256_unpacklo_epi64(t1, t3),
        _mm256_unpackhi_epi64(t1, t3),
    ]
}

/// The state of eight messages: a ring of `s` column registers.
struct Ring {
    c: [__m256i; 36],
    s: usize,
    /// Physical index of logical column 0.
    off: usize,
}

impl Ring {
    #[inline(always)]
    fn at(&self, i: usize) -> usize {
        let j = self.off + i;
        if j >= self.s { j - self.s } else { j }
    }
    #[inline(always)]
    fn get(&self, i: usize) -> __m256i {
        self.c[self.at(i)]
    }
    #[inline(always)]
    fn set(&mut self, i: usize, v: __m256i) {
        let k = self.at(i);
        self.c[k] = v;
    }
    /// Rotates right by `n` columns: S'[i] = S[i - n].
    #[inline(always)]
    fn ror(&mut self, n: usize) {
        self.off = (self.off + self.s - n) % self.s;
    }
}

#[inline]
#[target_feature(enable = "gfni,avx2,avx512f,avx512bw,avx512vl")]
fn xor_into(r: &mut Ring, dst: usize, src: usize) {
    let v = _mm256_xor_si256(r.get(dst), r.get(src));
    r.set(dst, v);
}

#[inline]
#[target_feature(enable = "gfni,avx2,avx512f,avx512bw,avx512vl")]
fn smix_ring(r: &mut Ring) {
    let m = transpose([r.get(0), r.get(1), r.get(2), r.get(3)]);
    let o = transpose([smix2(m[0]), smix2(m[1]), smix2(m[2]), smix2(m[3])]);
    for (j, v) in o.into_iter().enumerate() {
        r.set(j, v);
    }
}

#[inline]
#[target_feature(enable = "gfni,avx2,avx512f,avx512bw,avx512vl")]
fn round(r: &mut Ring) {
    r.ror(3);
    let h = r.s / 2;
    for j in 0..3 {
        xor_into(r, j, 4 + j);
        xor_into(r, h + j, 4 + j);
    }
    smix_ring(r);
}

#[inline]
#[target_feature(enable = "gfni,avx2,avx512f,avx512bw,avx512vl")]
fn tix(p: &Params, r: &mut Ring, w: __m256i) {
    match (p.s, p.k) {
        (30, _) => {
            xor_into(r, 10, 0);
            r.set(0, w);
            xor_into(r, 8, 0);
            xor_into(r, 1, 24);
        }
        (_, 3) => {
            xor_into(r, 16, 0);
            r.set(0, w);
            xor_into(r, 8, 0);
            xor_into(r, 1, 27);
            xor_into(r, 4, 30);
        }
        _ => {
            xor_into(r, 22, 0);
            r.set(0, w);
            xor_into(r, 8, 0);
            xor_into(r, 1, 24);
            xor_into(r, 4, 27);
            xor_into(r, 7, 30);
        }
    }
}

/// Hashes eight messages of `len` bytes each; digest `m` goes to `out[m][..4 * p.n]`.
#[target_feature(enable = "gfni,avx2,avx512f,avx512bw,avx512vl")]
fn hash8_hw(p: &Params, msgs: &[&[u8]; LANES], len: usize, out: &mut [[u8; 64]; LANES]) {
    let mut r = Ring {
        c: [_mm256_setzero_si256(); 36],
        s: p.s,
        off: 0,
    };
    for (i, &v) in p.iv.iter().enumerate() {
        r.c[p.s - p.n + i] = _mm256_set1_epi32(v.swap_bytes() as i32);
    }
    let word = |m: &[u8], at: usize| i32::from_le_bytes(m[at..at + 4].try_into().unwrap());
    let whole = len & !3;
    let mut at = 0;
    while at < whole {
        let w = _mm256_setr_epi32(
            word(msgs[0], at),
            word(msgs[1], at),
            word(msgs[2], at),
            word(msgs[3], at),
            word(msgs[4], at),
            word(msgs[5], at),
            word(msgs[6], at),
            word(msgs[7], at),
        );
        tix(p, &mut r, w);
        for _ in 0..p.k {
            round(&mut r);
        }
        at += 4;
    }
    // Padding: the partial word (zero-filled), then the 64-bit bit length as two words.
    let bits = (len as u64).wrapping_mul(8).to_be_bytes();
    let mut tails = [[0u8; 12]; LANES];
    let mut t = 0;
    if len > whole {
        for (tail, m) in tails.iter_mut().zip(msgs) {
            tail[..len - whole].copy_from_slice(&m[whole..len]);
        }
        t = 4;
    }
    for tail in tails.iter_mut() {
        tail[t..t + 8].copy_from_slice(&bits);
    }
    let mut at = 0;
    while at < t + 8 {
        let w = _mm256_setr_epi32(
            word(&tails[0], at),
            word(&tails[1], at),
            word(&tails[2], at),
            word(&tails[3], at),
            word(&tails[4], at),
            word(&tails[5], at),
            word(&tails[6], at),
            word(&tails[7], at),
        );
        tix(p, &mut r, w);
        for _ in 0..p.k {
            round(&mut r);
        }
        at += 4;
    }
    for _ in 0..p.g1 {
        round(&mut r);
    }
    // G2.
    let steps: &[(&[usize], usize)] = match (p.s, p.k) {
        (30, _) => &[(&[4, 15], 15), (&[4, 16], 14)],
        (_, 3) => &[(&[4, 12, 24], 12), (&[4, 13, 24], 12), (&[4, 13, 25], 11)],
        _ => &[
            (&[4, 9, 18, 27], 9),
            (&[4, 10, 18, 27], 9),
            (&[4, 10, 19, 27], 9),
            (&[4, 10, 19, 28], 8),
        ],
    };
    for _ in 0..13 {
        for &(cols, n) in steps {
            for &c in cols {
                xor_into(&mut r, c, 0);
            }
            r.ror(n);
            smix_ring(&mut r);
        }
    }
    for &c in steps[0].0 {
        xor_into(&mut r, c, 0);
    }
    let groups: &[usize] = match (p.s, p.k) {
        (30, _) => &[1, 15],
        (_, 3) => &[1, 12, 24],
        _ => &[1, 9, 18, 27],
    };
    let mut o = 0;
    for &g in groups {
        for c in g..g + 4 {
            if o < p.n {
                let mut b = [0u8; 32];
                // SAFETY: `b` is 32 writable bytes; the store is unaligned.
                unsafe { _mm256_storeu_si256(b.as_mut_ptr().cast(), r.get(c)) };
                for (m, d) in out.iter_mut().enumerate() {
                    d[4 * o..4 * o + 4].copy_from_slice(&b[4 * m..4 * m + 4]);
                }
                o += 1;
            }
        }
    }
}

/// Whether this CPU runs the eight-lane kernel.
pub(crate) fn available() -> bool {
    super::FugueBackend::Gfni.is_available()
}

/// Eight messages of `len` bytes (each slice at least `len` long).
pub(crate) fn hash8(p: &Params, msgs: &[&[u8]; LANES], len: usize, out: &mut [[u8; 64]; LANES]) {
    assert!(available());
    // SAFETY: `available()` checked the features `hash8_hw` is compiled for.
    unsafe { hash8_hw(p, msgs, len, out) }
}
