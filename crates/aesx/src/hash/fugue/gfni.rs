//! GFNI backend: three GF2P8AFFINEINVQB per round give the S-box outputs times the SuperMix
//! coefficients directly (the affine matrix of each is the AES affine map followed by
//! multiplication by 1, 4 or 7, chosen per qword: `simd::PLAN10`, 10 shuffles where one
//! coefficient per output needs 13), so no multiplication sits on the dependency chain;
//! AVX-512VL lets the XOR chain use three-input VPTERNLOGD. Constant-time: GFNI, shuffles and
//! XORs run in data-independent time.

use core::arch::x86_64::*;

use super::simd::{IDENT, MixPlan, PLAN10, affine_lin, gmul};

const SRC: [u8; 16] = IDENT;
const TERNLOG: bool = true;
/// The SuperMix sum in two chains (`simd::fugue_rounds`'s `mix`): Intel (`v2`, every size);
/// AMD runs `v2_amd`, the one-chain sum it was measured with.
const TWO_CHAINS: bool = true;
/// The SuperMix in 10 shuffles from outputs with two coefficients each (`simd::MixPlan`).
/// IMPLEMENTATION NOTE (issue 15, session 23, Intel family 6 model 167): against the 13
/// shuffles of S, 4S and 7S, `aesx bench --ops fugue224,fugue256,fugue384,fugue512 --sizes
/// 64K --backends gfni`, six alternated runs: 1.02x / 1.02x / 1.11x / 1.09x; with the tables
/// kept opaque to LLVM (`simd::load_table`) 1.03x and 1.04x more for Fugue-256 and -512
/// (-384 0.99x). AMD runs the same plan, not measured there.
const PLAN: MixPlan = PLAN10;
/// With two coefficients in one output the affine's constant (one byte for both qwords)
/// cannot be the product's: every output leaves it out, and the SuperMix adds the sum of
/// the constants once (`MixTables::k`).
const ADD_K: bool = true;

/// The GF2P8AFFINEQB matrix of `v -> c · affine_lin(v)`: byte `7 - i` selects the input bits
/// whose parity is output bit `i`.
const fn matrix(c: u8) -> i64 {
    let mut m = 0u64;
    let mut i = 0;
    while i < 8 {
        let mut row = 0u8;
        let mut j = 0;
        while j < 8 {
            if gmul(c, affine_lin(1 << j)) >> i & 1 != 0 {
                row |= 1 << j;
            }
            j += 1;
        }
        m |= (row as u64) << (8 * (7 - i));
        i += 1;
    }
    m as i64
}

/// The matrix of `PLAN`'s output `s`, one per qword.
const fn plan_matrix(s: usize) -> [i64; 2] {
    let c = PLAN.coef[s];
    assert!(c[0] == c[1] && c[2] == c[3], "one coefficient per qword");
    [matrix(c[0]), matrix(c[2])]
}
pub(crate) const M0: [i64; 2] = plan_matrix(0);
pub(crate) const M1: [i64; 2] = plan_matrix(1);
pub(crate) const M2: [i64; 2] = plan_matrix(2);

#[inline]
#[target_feature(enable = "gfni,ssse3,avx2,avx512f,avx512bw,avx512vl")]
fn copies(x: __m128i) -> [__m128i; 3] {
    [
        _mm_gf2p8affineinv_epi64_epi8::<0>(x, _mm_set_epi64x(M0[1], M0[0])),
        _mm_gf2p8affineinv_epi64_epi8::<0>(x, _mm_set_epi64x(M1[1], M1[0])),
        _mm_gf2p8affineinv_epi64_epi8::<0>(x, _mm_set_epi64x(M2[1], M2[0])),
    ]
}

#[inline]
#[target_feature(enable = "gfni,ssse3,avx2,avx512f,avx512bw,avx512vl")]
fn xor3(a: __m128i, b: __m128i, c: __m128i) -> __m128i {
    _mm_ternarylogic_epi32::<0x96>(a, b, c)
}

/// `(a & m) ^ c` in one instruction (truth table 0x6A): the TIX round's SMIX input, where two
/// instructions (LLVM picked VPBLENDD and VXORPD) put a cycle more on the chain.
#[inline]
#[target_feature(enable = "gfni,ssse3,avx2,avx512f,avx512bw,avx512vl")]
fn and_xor(a: __m128i, m: __m128i, c: __m128i) -> __m128i {
    _mm_ternarylogic_epi32::<0x6A>(a, m, c)
}

#[inline]
#[target_feature(enable = "gfni,ssse3,avx2,avx512f,avx512bw,avx512vl")]
fn to_basis(v: __m128i) -> __m128i {
    v
}

#[inline]
#[target_feature(enable = "gfni,ssse3,avx2,avx512f,avx512bw,avx512vl")]
fn from_basis(v: __m128i) -> __m128i {
    v
}

const fn basis_k(t: super::simd::MixTables) -> super::simd::MixTables {
    t
}

#[inline(always)]
fn word_to_basis(w: i32) -> i32 {
    w
}

// Two round machines (see `simd`), chosen per size where the backend is entered (`run`,
// `g2`). IMPLEMENTATION NOTE (session 9, the first GFNI machine since the rework of
// `fugue_rounds`: an Intel Xeon guest with AVX-512 and GFNI, family 6 model 167): on a 64 KiB
// message, GB/s, best of three alternated runs, `fugue_rounds_v1` / `fugue_rounds` (groups in
// registers): Fugue-224 0.46 / 0.44, -256 0.46 / 0.45, -384 0.311 / 0.240, -512 0.183 / 0.234.
// Each machine has one size it runs far below the others (the work per word is 2, 2, 3 and 4
// SMIX); which one is a matter of code generation we did not pin down. Session 11, on an AMD
// Zen 4 guest with GFNI (family 25 model 17), six fresh processes of each alternated:
// Fugue-512 on `fugue_rounds_v1` best 0.2274 GB/s, median 0.2236, worst 0.2131 (the spread the
// issue on steadiness is about: 6.5% over 20 processes); on `fugue_rounds` 0.2306 / 0.2302 /
// 0.2272. So Fugue-512 runs on `fugue_rounds` on every vendor, the other sizes on v1; since
// session 19 Fugue-384 too on Intel, since session 23 every size on Intel (`machine`).
const MEM_GROUPS: bool = false;

use super::{FugueBackend, Params, State};

mod v1 {
    use super::*;
    super::super::simd::fugue_rounds_v1!("gfni,ssse3,avx2,avx512f,avx512bw,avx512vl", Gfni);
}

mod v2 {
    use super::*;
    super::super::simd::fugue_rounds!("gfni,ssse3,avx2,avx512f,avx512bw,avx512vl", Gfni);
}

mod v2_amd {
    use super::*;
    const TWO_CHAINS: bool = false;
    super::super::simd::fugue_rounds!("gfni,ssse3,avx2,avx512f,avx512bw,avx512vl", Gfni);
}

/// Which sizes run on `fugue_rounds` (see above): Fugue-512, and on Intel every size.
/// Session 19 (Intel, family 6 model 167, after the two-chain sum and the one-instruction TIX
/// input): Fugue-384 on `fugue_rounds` 1.033x `fugue_rounds_v1`, Fugue-256 0.987x (`aesx bench
/// --ops fugue256,fugue384 --sizes 64K`, six alternated runs). Session 23 (the same class, with
/// `PLAN10`): Fugue-224 1.037x and Fugue-256 1.028x on `fugue_rounds` (six alternated runs).
/// AMD was not re-measured and keeps v1 below Fugue-512.
/// The round machine for this size and vendor: `V2` (Intel) or `V2Amd` where the size runs
/// on `fugue_rounds`, `V1` elsewhere.
#[derive(Clone, Copy)]
enum Machine {
    V1,
    V2,
    V2Amd,
}

#[inline]
fn machine(p: &Params) -> Machine {
    match (p.k, crate::cpu::amd_like()) {
        (4, true) => Machine::V2Amd,
        (_, false) => Machine::V2,
        (_, true) => Machine::V1,
    }
}

/// Absorbs `words` (whole 4-byte words), then runs `extra` plain rounds.
pub(crate) fn run(p: &Params, st: &mut State, words: &[u8], extra: usize) {
    match machine(p) {
        Machine::V1 => v1::run(p, st, words, extra),
        Machine::V2 => v2::run(p, st, words, extra),
        Machine::V2Amd => v2_amd::run(p, st, words, extra),
    }
}

/// The G2 stage and the output columns.
pub(crate) fn g2(p: &Params, st: &State, out: &mut [u8]) {
    match machine(p) {
        Machine::V1 => v1::g2(p, st, out),
        Machine::V2 => v2::g2(p, st, out),
        Machine::V2Amd => v2_amd::g2(p, st, out),
    }
}

#[cfg(test)]
mod tests {
    use super::super::FugueAlg;

    /// Both vendors' machines (`v2` with the two-chain sum, `v2_amd` with one) and `v1`
    /// absorb the same words into the same state and give the same output, for every size, on
    /// any CPU with GFNI and AVX-512 (the dispatch runs one of them per vendor and size: Intel
    /// `v2` for all, AMD `v2_amd` for Fugue-512 and `v1` below it).
    #[test]
    fn fugue_machines_agree() {
        let ok = std::is_x86_feature_detected!("gfni")
            && std::is_x86_feature_detected!("avx512f")
            && std::is_x86_feature_detected!("avx512bw")
            && std::is_x86_feature_detected!("avx512vl");
        if !ok {
            return;
        }
        let mut seed = 0x1234_5678_9abc_def0u64;
        for (alg, words) in [
            FugueAlg::Fugue224,
            FugueAlg::Fugue256,
            FugueAlg::Fugue384,
            FugueAlg::Fugue512,
        ]
        .into_iter()
        .flat_map(|a| [0usize, 1, 2, 3, 4, 11, 12, 13, 37, 300].map(|w| (a, w)))
        {
            let p = alg.params();
            let msg: std::vec::Vec<u8> = (0..4 * words)
                .map(|_| {
                    seed = seed
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    (seed >> 56) as u8
                })
                .collect();
            let mut st0 = [0u32; 36];
            st0[p.s - p.n..p.s].copy_from_slice(p.iv);
            let (mut a, mut b, mut c) = (st0, st0, st0);
            super::v2::run(p, &mut a, &msg, 3);
            super::v2_amd::run(p, &mut b, &msg, 3);
            super::v1::run(p, &mut c, &msg, 3);
            assert_eq!(a, b, "{alg} {words} words");
            assert_eq!(a, c, "{alg} {words} words");
            let n = alg.output_len();
            let (mut oa, mut ob, mut oc) = ([0u8; 64], [0u8; 64], [0u8; 64]);
            super::v2::g2(p, &a, &mut oa[..n]);
            super::v2_amd::g2(p, &b, &mut ob[..n]);
            super::v1::g2(p, &c, &mut oc[..n]);
            assert_eq!(oa, ob, "{alg} {words} words");
            assert_eq!(oa, oc, "{alg} {words} words");
        }
    }

    #[test]
    fn aes_affine_matrix() {
        assert_eq!(super::matrix(1) as u64, 0xF1E3_C78F_1F3E_7CF8);
    }
}
