//! Pieces shared by the SIMD backends: the SuperMix shuffle tables (computed at compile time
//! from the definition of SMIX), and the register-resident round machine (`fugue_rounds!`),
//! which each backend instantiates with its own S-box and target features.
//!
//! IMPLEMENTATION NOTE (SuperMix). SMIX maps the input columns X to
//! `rotate_rows(N·U ^ Diag(d)·Nᵀ)` with `U = S(X)` and `d_i = XOR_{j != i} U[i][j]`. Every
//! output byte is a sum of at most 7 terms `c · U[k][m]` with `c ∈ {1, 4, 7}`, so the whole map
//! is `XOR_t shuffle(c_t · U, table_t)`: 5 shuffles of `U`, 4 of `4U` and 4 of `7U`, with byte
//! index 0x80 (PSHUFB "zero") where a byte has fewer terms. The backend computes `U`, `4U`, `7U`
//! side by side (three independent S-box evaluations, or one S-box and two multiplications),
//! so a round's dependency chain is one S-box, the shuffles and a XOR chain that keeps pace
//! with them. Any fixed byte permutation the S-box instruction applies (AESENCLAST's
//! ShiftRows) and the column order the next round wants are folded into the same tables.
//! Where one S-box output can carry different coefficients in different parts of the state
//! (GFNI: the affine matrix is per qword; `aesni`: one blend), 10 shuffles do instead of 13
//! (`MixPlan`).
//!
//! IMPLEMENTATION NOTE (state). The state lives in 10 or 12 groups of three columns each
//! (dword 3 always zero), so ROR3 is a change of index: the loop is unrolled over one full turn
//! (10 or 12 rounds) and every index is a compile-time constant. The four columns SMIX wrote
//! stay in the SMIX output register `r` (in the order S1, S2, S3, S0, which is what the next
//! round's CMIX + SMIX input needs) and are written into the groups off the critical path.
//! A full turn absorbs a whole number of words (5, 4 or 3), so `turn` has TIX at fixed rounds
//! and no branch; the generic `step` only handles the last words and the final rounds.
//! With 16 xmm registers the groups cannot all stay in registers next to the SMIX
//! temporaries: `fugue_rounds` (aesni, vpaes) lets a backend keep them in an aligned array
//! with explicit loads and stores (`MEM_GROUPS`, see `gl`); `fugue_rounds_v1` (gfni, 32
//! registers) is the earlier machine, unchanged. `gfni` runs both, by size and CPU vendor
//! (see `gfni.rs`: Fugue-512 on `fugue_rounds`, 1.28x on Intel, and on Intel Fugue-384).

use core::arch::x86_64::*;

/// GF(2^8) multiplication modulo the AES polynomial (compile-time only).
pub(crate) const fn gmul(mut a: u8, mut b: u8) -> u8 {
    let mut p = 0u8;
    while b != 0 {
        if b & 1 != 0 {
            p ^= a;
        }
        a = (a << 1) ^ if a & 0x80 != 0 { 0x1b } else { 0 };
        b >>= 1;
    }
    p
}

/// The linear part of the AES S-box affine map.
pub(crate) const fn affine_lin(v: u8) -> u8 {
    v ^ v.rotate_left(1) ^ v.rotate_left(2) ^ v.rotate_left(3) ^ v.rotate_left(4)
}

/// Byte `q` of the S-box output holds S(x[q]).
pub(crate) const IDENT: [u8; 16] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15];
/// Byte `q = 4c + r` of AESENCLAST's output holds S(x[4((c + r) % 4) + r]) (ShiftRows).
pub(crate) const SHIFT_ROWS: [u8; 16] = [0, 5, 10, 15, 4, 9, 14, 3, 8, 13, 2, 7, 12, 1, 6, 11];

/// The SuperMix as up to 13 shuffles of the three S-box outputs a backend computes
/// (`MixPlan`): `t[0..l0]` apply to the first, the next `l1` to the second, the last `l2` to
/// the third (the remaining tables, if any, are unused). `k` is the result of the same sums on
/// the S-box constant 0x63 alone (for backends whose S-box output leaves the constant out).
pub(crate) struct MixTables {
    pub(crate) t: [[u8; 16]; 13],
    pub(crate) k: [u8; 16],
}

/// What a backend's three S-box outputs hold and how many shuffles each feeds. Output `s`
/// holds `coef[s][d] · S(x)` in dword `d` (S-box output bytes `4d..4d + 4`): every
/// (coefficient, dword) pair in exactly one output.
///
/// IMPLEMENTATION NOTE (issue 15, session 23). Each output byte of SMIX sums 5 or 7 terms
/// `c · S(x)[q]`, `c ∈ {1, 4, 7}`; a shuffle of one S-box output gives each output byte one
/// term. With one coefficient per output (S, 4S, 7S: `PLAN13`) the bytes that need five terms
/// of coefficient 1 set the count: 5 + 4 + 4 = 13 shuffles. An output whose coefficient
/// changes across the state (GFNI: the affine matrix is per qword; or a blend of two outputs)
/// needs fewer. Exhaustive searches over three outputs, each with at most two coefficients:
/// per qword, in the natural byte order, no plan under 10 shuffles (`PLAN10`, what `gfni`
/// runs; 9 takes five affines, and a measuring build of that ran 0.99x, Fugue-384 0.76x). For
/// `aesni`, whose 4S and 7S come from S through nibble
/// tables, the best per-dword plan in ShiftRows order, 9 shuffles of three blends, put a
/// blend after the tables in front of every shuffle and ran 0.92x (Intel, family 6 model
/// 167); keeping S alone and blending only 4S with 7S gives 10 (`PLAN10_SR`), with S's five
/// shuffles issued while the tables run.
#[derive(Clone, Copy)]
pub(crate) struct MixPlan {
    pub(crate) coef: [[u8; 4]; 3],
    pub(crate) layers: [usize; 3],
}

/// S, 4·S and 7·S: 5, 4 and 4 shuffles.
pub(crate) const PLAN13: MixPlan = MixPlan {
    coef: [[1; 4], [4; 4], [7; 4]],
    layers: [5, 4, 4],
};

/// Two coefficients per output, one per qword (see `MixPlan`): 4, 3 and 3 shuffles.
pub(crate) const PLAN10: MixPlan = MixPlan {
    coef: [[1, 1, 4, 4], [4, 4, 7, 7], [7, 7, 1, 1]],
    layers: [4, 3, 3],
};

/// For S-box outputs in ShiftRows order (`SHIFT_ROWS`) where S comes first and 4S, 7S later
/// (`aesni`: AESENCLAST, then nibble tables): S alone in 5 shuffles, then 4S and 7S with
/// their dwords 2 exchanged (one blend each) in 2 and 3 (see `MixPlan`).
pub(crate) const PLAN10_SR: MixPlan = MixPlan {
    coef: [[1, 1, 1, 1], [4, 4, 7, 4], [7, 7, 4, 7]],
    layers: [5, 2, 3],
};

/// Builds the tables. `src[q]`: which input byte the S-box output byte `q` is computed from.
/// `rot`: output column order (S1, S2, S3, S0) instead of (S0, S1, S2, S3). Panics (at compile
/// time) if a term has no output or an output byte needs more shuffles than `plan` gives.
pub(crate) const fn mix_tables_plan(src: [u8; 16], rot: bool, plan: MixPlan) -> MixTables {
    let n = super::N;
    let mut pos = [0u8; 16]; // pos[input byte] = S-box output byte holding it
    let mut q = 0;
    while q < 16 {
        pos[src[q] as usize] = q as u8;
        q += 1;
    }
    let mut t = [[0x80u8; 16]; 13];
    let mut k = [0u8; 16];
    let base = [0usize, plan.layers[0], plan.layers[0] + plan.layers[1]];
    assert!(base[2] + plan.layers[2] <= 13, "at most 13 shuffles");
    let mut p = 0;
    while p < 16 {
        let (j, i) = (p / 4, p % 4);
        let jj = if rot { (j + 1) % 4 } else { j };
        let m = (i + jj) % 4;
        // Up to 8 terms (coefficient, source byte in X layout = 4 * column + row).
        let mut terms = [(0u8, 0usize); 8];
        let mut nt = 0;
        let cancel = m != i && n[m][i] == 1;
        let mut kk = 0;
        while kk < 4 {
            if !(cancel && kk == i) {
                terms[nt] = (n[i][kk], 4 * m + kk);
                nt += 1;
            }
            kk += 1;
        }
        let mut jp = 0;
        while jp < 4 {
            if jp != i && !(cancel && jp == m) {
                terms[nt] = (n[m][i], 4 * jp + i);
                nt += 1;
            }
            jp += 1;
        }
        let mut used = [0usize; 3];
        let mut e = 0;
        while e < nt {
            let (c, s) = terms[e];
            let d = pos[s] as usize / 4;
            // The one output holding coefficient `c` in this dword.
            let mut ci = 3;
            let mut o = 0;
            while o < 3 {
                if plan.coef[o][d] == c {
                    assert!(ci == 3, "two outputs hold the same coefficient");
                    ci = o;
                }
                o += 1;
            }
            assert!(ci < 3, "SuperMix coefficient without an output");
            assert!(
                used[ci] < plan.layers[ci],
                "too many terms for the shuffle budget"
            );
            t[base[ci] + used[ci]][p] = pos[s];
            used[ci] += 1;
            k[p] ^= gmul(c, 0x63);
            e += 1;
        }
        p += 1;
    }
    MixTables { t, k }
}

/// `load` of a shuffle table that the compiler may not look into: LLVM rewrites a PSHUFB
/// whose constant table moves whole dwords as PSHUFD plus a zeroing blend (two instructions
/// on the shuffle ports, and one more on the SMIX chain).
#[inline(always)]
pub(crate) fn load_table(b: &[u8; 16]) -> __m128i {
    let mut v = load(b);
    // SAFETY: an empty assembly statement: no instruction, memory or flag is touched.
    unsafe {
        core::arch::asm!(
            "/* {0} */",
            inout(xmm_reg) v,
            options(pure, nomem, nostack, preserves_flags)
        );
    }
    v
}

#[inline(always)]
pub(crate) fn load(b: &[u8; 16]) -> __m128i {
    // SAFETY: `b` is 16 readable bytes; the load is unaligned; SSE2 is baseline on x86_64.
    unsafe { _mm_loadu_si128(b.as_ptr().cast()) }
}

#[inline(always)]
pub(crate) fn store(b: &mut [u8; 16], v: __m128i) {
    // SAFETY: `b` is 16 writable bytes; the store is unaligned; SSE2 is baseline on x86_64.
    unsafe { _mm_storeu_si128(b.as_mut_ptr().cast(), v) }
}

/// Byte masks and shuffles of the round machine.
pub(crate) const MASK012: [u8; 16] = [
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0,
];
pub(crate) const MASK123: [u8; 16] = [
    0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
];
pub(crate) const MASK_D0: [u8; 16] = [0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
pub(crate) const MASK_D2: [u8; 16] = [0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0];
pub(crate) const MASK_D3: [u8; 16] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff];
const Z: u8 = 0x80;
/// (r3, r0, r1, 0): the three columns S0..S2 from `r = (S1, S2, S3, S0)`.
pub(crate) const IDX_M012: [u8; 16] = [12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7, Z, Z, Z, Z];
/// (r2, 0, 0, 0): column S3.
pub(crate) const IDX_M3: [u8; 16] = [8, 9, 10, 11, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z];
/// (0, r3, 0, 0): column S0 moved to dword 1.
pub(crate) const IDX_M0_D1: [u8; 16] = [Z, Z, Z, Z, 12, 13, 14, 15, Z, Z, Z, Z, Z, Z, Z, Z];

/// Converts the canonical state to three-column groups and the `r` register, and back.
pub(crate) fn to_groups(st: &super::State, ng: usize, g: &mut [[u8; 16]; 12], r: &mut [u8; 16]) {
    for l in 0..ng {
        g[l] = [0; 16];
        for d in 0..3 {
            g[l][4 * d..4 * d + 4].copy_from_slice(&st[3 * l + d].to_be_bytes());
        }
    }
    for d in 0..4 {
        r[4 * d..4 * d + 4].copy_from_slice(&st[(d + 1) % 4].to_be_bytes());
    }
}

pub(crate) fn from_groups(
    st: &mut super::State,
    ng: usize,
    base: usize,
    g: &[[u8; 16]; 12],
    r: &[u8; 16],
) {
    for l in 0..ng {
        let v = &g[(l + base) % ng];
        for d in 0..3 {
            st[3 * l + d] = u32::from_be_bytes(v[4 * d..4 * d + 4].try_into().unwrap());
        }
    }
    for d in 0..4 {
        st[(d + 1) % 4] = u32::from_be_bytes(r[4 * d..4 * d + 4].try_into().unwrap());
    }
}

/// A round machine's SuperMix tables for the backend's `SRC`, `PLAN` and `basis_k`: `MIX_R`
/// (output columns S1, S2, S3, S0) and `MIX_N` (natural order), and the check that `mix` can
/// sum the plan (10 or 13 shuffles).
macro_rules! mix_consts {
    () => {
        const MIX_R: MixTables =
            basis_k(crate::hash::fugue::simd::mix_tables_plan(SRC, true, PLAN));
        const MIX_N: MixTables =
            basis_k(crate::hash::fugue::simd::mix_tables_plan(SRC, false, PLAN));
        const _: () = assert!(
            matches!(PLAN.layers[0] + PLAN.layers[1] + PLAN.layers[2], 10 | 13),
            "mix sums 10 or 13 shuffles"
        );
    };
}
pub(crate) use mix_consts;

/// The ten shuffles of a 10-shuffle `MixPlan` (`PLAN10`, `PLAN10_SR`): the S-box outputs
/// `$a`, `$b`, `$c` with the tables of `$t`, in layer order. Expands inside a backend's `mix`
/// (under its target features, with its `PLAN`).
macro_rules! shuffles10 {
    ($a:expr, $b:expr, $c:expr, $t:expr) => {{
        let [l0, l1, _] = PLAN.layers;
        // Table `i` shuffles the output its layer belongs to (`i` is a constant).
        let sh = |i: usize| {
            let s = if i < l0 {
                $a
            } else if i < l0 + l1 {
                $b
            } else {
                $c
            };
            _mm_shuffle_epi8(s, load_table(&$t.t[i]))
        };
        [
            sh(0),
            sh(1),
            sh(2),
            sh(3),
            sh(4),
            sh(5),
            sh(6),
            sh(7),
            sh(8),
            sh(9),
        ]
    }};
}
pub(crate) use shuffles10;

/// Instantiates the round machine in the calling module. The caller provides, all under the
/// target features `$feat`: `fn copies(x: __m128i) -> [__m128i; 3]` (S(x), 4·S(x), 7·S(x) in
/// the byte order `const SRC: [u8; 16]`), `const ADD_K: bool` (add the S-box constant after
/// the SuperMix), `fn xor3(a, b, c)` with `const TERNLOG: bool` (one instruction or two),
/// `fn and_xor(a, m, c)` (`(a & m) ^ c`: on the SMIX chain in a TIX round),
/// `const TWO_CHAINS: bool` (the SuperMix sum's shape with `TERNLOG`, see `mix`),
/// `const PLAN: MixPlan` (what `copies` returns and how many shuffles each output feeds),
/// `const MEM_GROUPS: bool` (keep the state groups in memory, see `gl`), and
/// the byte representation the state is kept in while in registers: `fn to_basis`,
/// `fn from_basis`, `fn word_to_basis` (message words) and `const fn basis_k` (the constant).
macro_rules! fugue_rounds {
    ($feat:literal, $backend:ident) => {
        use crate::hash::fugue::simd::{
            IDX_M0_D1, IDX_M3, IDX_M012, MASK_D0, MASK_D2, MASK_D3, MASK012, MASK123, MixTables,
            from_groups, load, load_table, store, to_groups,
        };
        use crate::hash::fugue::{Params, State};

        crate::hash::fugue::simd::mix_consts!();

        /// SMIX of `x` (output columns in the order of `t`), XORed with `add`.
        #[inline]
        #[target_feature(enable = $feat)]
        fn mix(x: __m128i, t: &MixTables, add: __m128i) -> __m128i {
            let add = if ADD_K {
                _mm_xor_si128(add, load(&t.k))
            } else {
                add
            };
            let [a, b, c] = copies(x);
            if PLAN.layers[0] + PLAN.layers[1] + PLAN.layers[2] == 10 {
                // `PLAN10` or `PLAN10_SR` (see `MixPlan`).
                let [t0, t1, t2, t3, t4, t5, t6, t7, t8, t9] =
                    crate::hash::fugue::simd::shuffles10!(a, b, c, t);
                return if TERNLOG && TWO_CHAINS {
                    let p = xor3(t0, t1, add);
                    let q = xor3(t2, t3, t4);
                    let p = xor3(p, t5, t6);
                    let q = xor3(q, t7, t8);
                    xor3(p, q, t9)
                } else {
                    let acc = xor3(t0, t1, add);
                    let acc = xor3(acc, t2, t3);
                    let acc = xor3(acc, t4, t5);
                    let acc = xor3(acc, t6, t7);
                    xor3(acc, t8, t9)
                };
            }
            let t0 = _mm_shuffle_epi8(a, load(&t.t[0]));
            let t1 = _mm_shuffle_epi8(a, load(&t.t[1]));
            let t2 = _mm_shuffle_epi8(a, load(&t.t[2]));
            let t3 = _mm_shuffle_epi8(a, load(&t.t[3]));
            let t4 = _mm_shuffle_epi8(a, load(&t.t[4]));
            let t5 = _mm_shuffle_epi8(b, load(&t.t[5]));
            let t6 = _mm_shuffle_epi8(b, load(&t.t[6]));
            let t7 = _mm_shuffle_epi8(b, load(&t.t[7]));
            let t8 = _mm_shuffle_epi8(b, load(&t.t[8]));
            let t9 = _mm_shuffle_epi8(c, load(&t.t[9]));
            let t10 = _mm_shuffle_epi8(c, load(&t.t[10]));
            let t11 = _mm_shuffle_epi8(c, load(&t.t[11]));
            let t12 = _mm_shuffle_epi8(c, load(&t.t[12]));
            // IMPLEMENTATION NOTE: the shuffles leave the two shuffle ports two per cycle, so
            // the sum is a chain that takes in each pair as it arrives (one XOR level per
            // pair, as fast as the pairs come) rather than a balanced tree, which would add
            // one level after the last shuffle. Measured: about 10% faster per round.
            // With three-input XORs and `TWO_CHAINS` (gfni on Intel) this machine sums them in
            // two interleaved chains joined by the last XOR: Fugue-512 on Intel (family 6 model
            // 167) 2.7% faster than one chain (`aesx bench --ops fugue512 --sizes 64K`, 8
            // alternated runs, session 19). The same change in `fugue_rounds_v1` made Fugue-256
            // 5% and -384 3% slower there, so v1 keeps one chain, and so does AMD (not measured
            // there): which order LLVM schedules best is measured, not derived.
            if TERNLOG && TWO_CHAINS {
                let p = xor3(t0, t1, add);
                let q = xor3(t2, t3, t4);
                let p = xor3(p, t5, t6);
                let q = xor3(q, t7, t8);
                let p = xor3(p, t9, t10);
                let q = _mm_xor_si128(q, t11);
                xor3(p, q, t12)
            } else if TERNLOG {
                let acc = xor3(t0, t1, add);
                let acc = xor3(acc, t2, t3);
                let acc = xor3(acc, t4, t5);
                let acc = xor3(acc, t6, t7);
                let acc = xor3(acc, t8, t9);
                let acc = xor3(acc, t10, t11);
                _mm_xor_si128(acc, t12)
            } else {
                let acc = _mm_xor_si128(_mm_xor_si128(t0, t1), add);
                let acc = _mm_xor_si128(acc, _mm_xor_si128(t2, t3));
                let acc = _mm_xor_si128(acc, _mm_xor_si128(t4, t5));
                let acc = _mm_xor_si128(acc, _mm_xor_si128(t6, t7));
                let acc = _mm_xor_si128(acc, _mm_xor_si128(t8, t9));
                let acc = _mm_xor_si128(acc, _mm_xor_si128(t10, t11));
                _mm_xor_si128(acc, t12)
            }
        }

        /// The G2 stage and the output, one column per register (dword 0) so the rotations
        /// by 8..15 columns are index changes; SMIX gathers its four columns with two levels
        /// of unpacks.
        #[target_feature(enable = $feat)]
        fn g2_hw(p: &Params, st: &State, out: &mut [u8]) {
            let s = p.s;
            let mut c = [_mm_setzero_si128(); 36];
            for (v, w) in c.iter_mut().zip(&st[..s]) {
                *v = to_basis(_mm_cvtsi32_si128(i32::from_ne_bytes(w.to_be_bytes())));
            }
            let steps = crate::hash::fugue::g2_steps(p);
            let mut off = 0;
            let at = |off: usize, i: usize| (off + i) % s;
            for _ in 0..13 {
                for &(cols, r) in steps {
                    let s0 = c[off];
                    for &col in cols {
                        c[at(off, col)] = _mm_xor_si128(c[at(off, col)], s0);
                    }
                    off = at(off, s - r);
                    let x = _mm_unpacklo_epi64(
                        _mm_unpacklo_epi32(c[off], c[at(off, 1)]),
                        _mm_unpacklo_epi32(c[at(off, 2)], c[at(off, 3)]),
                    );
                    let m = mix(x, &MIX_N, _mm_setzero_si128());
                    c[off] = m;
                    c[at(off, 1)] = _mm_shuffle_epi32::<1>(m);
                    c[at(off, 2)] = _mm_shuffle_epi32::<2>(m);
                    c[at(off, 3)] = _mm_shuffle_epi32::<3>(m);
                }
            }
            let s0 = c[off];
            for &col in steps[0].0 {
                c[at(off, col)] = _mm_xor_si128(c[at(off, col)], s0);
            }
            let mut o = 0;
            for &g in crate::hash::fugue::out_groups(p) {
                for j in 0..4 {
                    if o < p.n {
                        let v = from_basis(c[at(off, g + j)]);
                        let w = _mm_cvtsi128_si32(v).to_ne_bytes();
                        out[4 * o..4 * o + 4].copy_from_slice(&w);
                        o += 1;
                    }
                }
            }
        }

        /// Where the next round's input comes from.
        struct Feed<'a> {
            words: &'a [u8],
            /// Rounds left in the current word.
            rin: usize,
            k: usize,
            extra: usize,
        }

        enum Kind {
            Plain,
            Tix(i32),
            Done,
        }

        impl Feed<'_> {
            #[inline(always)]
            fn next(&mut self) -> Kind {
                if self.rin > 0 {
                    self.rin -= 1;
                    Kind::Plain
                } else if self.words.len() >= 4 {
                    let w = i32::from_ne_bytes(self.words[..4].try_into().unwrap());
                    self.words = &self.words[4..];
                    self.rin = self.k - 1;
                    Kind::Tix(w)
                } else if self.extra > 0 {
                    self.extra -= 1;
                    Kind::Plain
                } else {
                    Kind::Done
                }
            }
        }

        /// Group `i`, read from memory. IMPLEMENTATION NOTE: the 10-12 groups live in a
        /// 16-byte aligned array and every access is an explicit (volatile) load or store, so
        /// the compiler never has to spill: registers stay free for the SMIX, whose chain
        /// then carries no store-to-load round trip, and the loop's memory traffic is the same
        /// aligned 16-byte accesses in every process (no placement-dependent spills).
        /// Only where the backend sets `MEM_GROUPS` (aesni: measured 12% faster on Zen 3); the
        /// vpaes S-box needs more registers of its own and ran 2-3% slower this way, so its
        /// groups stay wherever the compiler puts them.
        #[inline(always)]
        fn gl(g: &[__m128i; 12], i: usize) -> __m128i {
            if MEM_GROUPS {
                // SAFETY: `&g[i]` is a valid, aligned, initialized `__m128i`.
                unsafe { core::ptr::read_volatile(&g[i]) }
            } else {
                g[i]
            }
        }

        #[inline(always)]
        fn gs(g: &mut [__m128i; 12], i: usize, v: __m128i) {
            if MEM_GROUPS {
                // SAFETY: `&mut g[i]` is a valid, aligned `__m128i`.
                unsafe { core::ptr::write_volatile(&mut g[i], v) }
            } else {
                g[i] = v;
            }
        }

        /// One round at rotation `B`, preceded by TIX of the message word `w` if `TIX`.
        #[inline]
        #[target_feature(enable = $feat)]
        fn round<const V: u8, const B: usize, const TIX: bool>(
            g: &mut [__m128i; 12],
            r: &mut __m128i,
            w: i32,
        ) {
            let ng = if V == 0 { 10 } else { 12 };
            let p = |l: usize| (l + B) % ng;
            // `*r` is this round's R = (S1, S2, S3, S0) XOR the group that becomes S0..S2.
            let y = *r;
            let mut rr = _mm_xor_si128(y, gl(g, p(0)));
            let x;
            if TIX {
                let iv = _mm_set1_epi32(word_to_basis(w));
                let m0 = _mm_shuffle_epi8(rr, load(&IDX_M0_D1));
                let a = match V {
                    0 => 4,
                    1 => 6,
                    _ => 8,
                };
                gs(g, p(a), _mm_xor_si128(gl(g, p(a)), m0));
                gs(
                    g,
                    p(3),
                    _mm_xor_si128(gl(g, p(3)), _mm_and_si128(iv, load(&MASK_D2))),
                );
                let s1 = _mm_and_si128(gl(g, p(if V == 1 { 10 } else { 9 })), load(&MASK_D0));
                if V == 1 {
                    let t = _mm_and_si128(gl(g, p(11)), load(&MASK_D0));
                    gs(g, p(2), _mm_xor_si128(gl(g, p(2)), _mm_slli_si128::<4>(t)));
                }
                if V == 2 {
                    let t = _mm_and_si128(gl(g, p(10)), load(&MASK_D0));
                    gs(g, p(2), _mm_xor_si128(gl(g, p(2)), _mm_slli_si128::<4>(t)));
                    let t = _mm_and_si128(gl(g, p(11)), load(&MASK_D0));
                    gs(g, p(3), _mm_xor_si128(gl(g, p(3)), _mm_slli_si128::<4>(t)));
                }
                let add = _mm_xor_si128(s1, _mm_and_si128(iv, load(&MASK_D3)));
                rr = _mm_xor_si128(_mm_and_si128(rr, load(&MASK012)), add);
                // (rr ^ g0) with g0's dword 3 zero: y's dwords 0..2, then `add`.
                x = and_xor(y, load(&MASK012), add);
            } else {
                x = y;
            }
            gs(g, p(1), _mm_shuffle_epi8(rr, load(&IDX_M012)));
            gs(
                g,
                p(2),
                _mm_or_si128(
                    _mm_and_si128(gl(g, p(2)), load(&MASK123)),
                    _mm_shuffle_epi8(rr, load(&IDX_M3)),
                ),
            );
            let c = _mm_and_si128(rr, load(&MASK012));
            gs(g, p(ng / 2), _mm_xor_si128(gl(g, p(ng / 2)), c));
            *r = mix(x, &MIX_R, gl(g, p(ng - 1)));
        }

        /// One round (TIX first if it starts a word) at rotation `B`; false when done.
        #[inline]
        #[target_feature(enable = $feat)]
        fn step<const V: u8, const B: usize>(
            g: &mut [__m128i; 12],
            r: &mut __m128i,
            feed: &mut Feed<'_>,
            st: &mut State,
        ) -> bool {
            let ng = if V == 0 { 10 } else { 12 };
            match feed.next() {
                Kind::Done => {
                    let rr = _mm_xor_si128(*r, g[B % ng]);
                    let mut gb = [[0u8; 16]; 12];
                    let [g0, g1, g2, g3, g4, g5, g6, g7, g8, g9, g10, g11] = *g;
                    for (b, v) in gb
                        .iter_mut()
                        .zip([g0, g1, g2, g3, g4, g5, g6, g7, g8, g9, g10, g11])
                    {
                        store(b, from_basis(v));
                    }
                    let mut rb = [0u8; 16];
                    store(&mut rb, from_basis(rr));
                    from_groups(st, ng, (B + 1) % ng, &gb, &rb);
                    false
                }
                Kind::Tix(w) => {
                    round::<V, B, true>(g, r, w);
                    true
                }
                Kind::Plain => {
                    round::<V, B, false>(g, r, 0);
                    true
                }
            }
        }

        /// Bytes of message absorbed by one full turn (every group once in each position):
        /// 10 rounds of 2 per word (Fugue-224/256), 12 of 3 (384), 12 of 4 (512).
        const fn turn_bytes(v: u8) -> usize {
            match v {
                0 => 20,
                1 => 16,
                _ => 12,
            }
        }

        /// One full turn from rotation `ng - 1` back to it: every index, and which rounds
        /// start a word, is a compile-time constant, so the turn has no branch.
        #[inline]
        #[target_feature(enable = $feat)]
        fn turn<const V: u8>(g: &mut [__m128i; 12], r: &mut __m128i, m: &[u8]) {
            let w =
                |i: usize| i32::from_ne_bytes([m[4 * i], m[4 * i + 1], m[4 * i + 2], m[4 * i + 3]]);
            match V {
                0 => {
                    round::<V, 9, true>(g, r, w(0));
                    round::<V, 8, false>(g, r, 0);
                    round::<V, 7, true>(g, r, w(1));
                    round::<V, 6, false>(g, r, 0);
                    round::<V, 5, true>(g, r, w(2));
                    round::<V, 4, false>(g, r, 0);
                    round::<V, 3, true>(g, r, w(3));
                    round::<V, 2, false>(g, r, 0);
                    round::<V, 1, true>(g, r, w(4));
                    round::<V, 0, false>(g, r, 0);
                }
                1 => {
                    round::<V, 11, true>(g, r, w(0));
                    round::<V, 10, false>(g, r, 0);
                    round::<V, 9, false>(g, r, 0);
                    round::<V, 8, true>(g, r, w(1));
                    round::<V, 7, false>(g, r, 0);
                    round::<V, 6, false>(g, r, 0);
                    round::<V, 5, true>(g, r, w(2));
                    round::<V, 4, false>(g, r, 0);
                    round::<V, 3, false>(g, r, 0);
                    round::<V, 2, true>(g, r, w(3));
                    round::<V, 1, false>(g, r, 0);
                    round::<V, 0, false>(g, r, 0);
                }
                _ => {
                    round::<V, 11, true>(g, r, w(0));
                    round::<V, 10, false>(g, r, 0);
                    round::<V, 9, false>(g, r, 0);
                    round::<V, 8, false>(g, r, 0);
                    round::<V, 7, true>(g, r, w(1));
                    round::<V, 6, false>(g, r, 0);
                    round::<V, 5, false>(g, r, 0);
                    round::<V, 4, false>(g, r, 0);
                    round::<V, 3, true>(g, r, w(2));
                    round::<V, 2, false>(g, r, 0);
                    round::<V, 1, false>(g, r, 0);
                    round::<V, 0, false>(g, r, 0);
                }
            }
        }

        #[target_feature(enable = $feat)]
        fn run_v<const V: u8>(k: usize, st: &mut State, words: &[u8], extra: usize) {
            let ng = if V == 0 { 10 } else { 12 };
            let mut gb = [[0u8; 16]; 12];
            let mut rb = [0u8; 16];
            to_groups(st, ng, &mut gb, &mut rb);
            let mut g = [
                to_basis(load(&gb[0])),
                to_basis(load(&gb[1])),
                to_basis(load(&gb[2])),
                to_basis(load(&gb[3])),
                to_basis(load(&gb[4])),
                to_basis(load(&gb[5])),
                to_basis(load(&gb[6])),
                to_basis(load(&gb[7])),
                to_basis(load(&gb[8])),
                to_basis(load(&gb[9])),
                to_basis(load(&gb[10])),
                to_basis(load(&gb[11])),
            ];
            let mut r = _mm_xor_si128(to_basis(load(&rb)), g[ng - 1]);
            // Whole turns first (the bulk of a long message), then the generic stepper for
            // the last words and the extra rounds; both leave the rotation where it started.
            let tb = turn_bytes(V);
            let mut chunks = words.chunks_exact(tb);
            for m in &mut chunks {
                turn::<V>(&mut g, &mut r, m);
            }
            let mut feed = Feed {
                words: chunks.remainder(),
                rin: 0,
                k,
                extra,
            };
            loop {
                if 11 < ng && !step::<V, 11>(&mut g, &mut r, &mut feed, st) {
                    return;
                }
                if 10 < ng && !step::<V, 10>(&mut g, &mut r, &mut feed, st) {
                    return;
                }
                if 9 < ng && !step::<V, 9>(&mut g, &mut r, &mut feed, st) {
                    return;
                }
                if 8 < ng && !step::<V, 8>(&mut g, &mut r, &mut feed, st) {
                    return;
                }
                if 7 < ng && !step::<V, 7>(&mut g, &mut r, &mut feed, st) {
                    return;
                }
                if 6 < ng && !step::<V, 6>(&mut g, &mut r, &mut feed, st) {
                    return;
                }
                if 5 < ng && !step::<V, 5>(&mut g, &mut r, &mut feed, st) {
                    return;
                }
                if 4 < ng && !step::<V, 4>(&mut g, &mut r, &mut feed, st) {
                    return;
                }
                if 3 < ng && !step::<V, 3>(&mut g, &mut r, &mut feed, st) {
                    return;
                }
                if 2 < ng && !step::<V, 2>(&mut g, &mut r, &mut feed, st) {
                    return;
                }
                if 1 < ng && !step::<V, 1>(&mut g, &mut r, &mut feed, st) {
                    return;
                }
                if 0 < ng && !step::<V, 0>(&mut g, &mut r, &mut feed, st) {
                    return;
                }
            }
        }

        /// Absorbs `words` (whole 4-byte words), then runs `extra` plain rounds.
        pub(crate) fn run(p: &Params, st: &mut State, words: &[u8], extra: usize) {
            debug_assert!(super::FugueBackend::$backend.is_available());
            // SAFETY: reached only through a `Fugue` whose backend availability (the
            // features enabled on `run_v`) was checked when it was made.
            unsafe {
                match (p.s, p.k) {
                    (30, _) => run_v::<0>(p.k, st, words, extra),
                    (_, 3) => run_v::<1>(p.k, st, words, extra),
                    _ => run_v::<2>(p.k, st, words, extra),
                }
            }
        }

        /// The G2 stage and the output columns.
        pub(crate) fn g2(p: &Params, st: &State, out: &mut [u8]) {
            // SAFETY: as in `run`.
            unsafe { g2_hw(p, st, out) }
        }
    };
}
pub(crate) use fugue_rounds;

/// The first round machine, kept unchanged for the `gfni` backend, which this project could not
/// run on the machine where `fugue_rounds` was reworked (see that macro). Same contract.
///
/// Instantiates the round machine in the calling module. The caller provides, all under the
/// target features `$feat`: `fn copies(x: __m128i) -> [__m128i; 3]` (S(x), 4·S(x), 7·S(x) in
/// the byte order `const SRC: [u8; 16]`), `const ADD_K: bool` (add the S-box constant after
/// the SuperMix), `fn xor3(a, b, c)` with `const TERNLOG: bool` (one instruction or two),
/// `fn and_xor(a, m, c)` (`(a & m) ^ c`), `const PLAN: MixPlan` (as for `fugue_rounds`), and
/// the byte representation the state is kept in while in registers: `fn to_basis`,
/// `fn from_basis`, `fn word_to_basis` (message words) and `const fn basis_k` (the constant).
macro_rules! fugue_rounds_v1 {
    ($feat:literal, $backend:ident) => {
        use crate::hash::fugue::simd::{
            IDX_M0_D1, IDX_M3, IDX_M012, MASK_D0, MASK_D2, MASK_D3, MASK012, MASK123, MixTables,
            from_groups, load, load_table, store, to_groups,
        };
        use crate::hash::fugue::{Params, State};

        crate::hash::fugue::simd::mix_consts!();

        /// SMIX of `x` (output columns in the order of `t`), XORed with `add`.
        #[inline]
        #[target_feature(enable = $feat)]
        fn mix(x: __m128i, t: &MixTables, add: __m128i) -> __m128i {
            let add = if ADD_K {
                _mm_xor_si128(add, load(&t.k))
            } else {
                add
            };
            let [a, b, c] = copies(x);
            if PLAN.layers[0] + PLAN.layers[1] + PLAN.layers[2] == 10 {
                // `PLAN10` or `PLAN10_SR` (see `MixPlan`).
                let [t0, t1, t2, t3, t4, t5, t6, t7, t8, t9] =
                    crate::hash::fugue::simd::shuffles10!(a, b, c, t);
                let acc = xor3(t0, t1, add);
                let acc = xor3(acc, t2, t3);
                let acc = xor3(acc, t4, t5);
                let acc = xor3(acc, t6, t7);
                return xor3(acc, t8, t9);
            }
            let t0 = _mm_shuffle_epi8(a, load(&t.t[0]));
            let t1 = _mm_shuffle_epi8(a, load(&t.t[1]));
            let t2 = _mm_shuffle_epi8(a, load(&t.t[2]));
            let t3 = _mm_shuffle_epi8(a, load(&t.t[3]));
            let t4 = _mm_shuffle_epi8(a, load(&t.t[4]));
            let t5 = _mm_shuffle_epi8(b, load(&t.t[5]));
            let t6 = _mm_shuffle_epi8(b, load(&t.t[6]));
            let t7 = _mm_shuffle_epi8(b, load(&t.t[7]));
            let t8 = _mm_shuffle_epi8(b, load(&t.t[8]));
            let t9 = _mm_shuffle_epi8(c, load(&t.t[9]));
            let t10 = _mm_shuffle_epi8(c, load(&t.t[10]));
            let t11 = _mm_shuffle_epi8(c, load(&t.t[11]));
            let t12 = _mm_shuffle_epi8(c, load(&t.t[12]));
            // IMPLEMENTATION NOTE: the shuffles leave the two shuffle ports two per cycle, so
            // the sum is a chain that takes in each pair as it arrives (one XOR level per
            // pair, as fast as the pairs come) rather than a balanced tree, which would add
            // one level after the last shuffle. Measured: about 10% faster per round.
            if TERNLOG {
                let acc = xor3(t0, t1, add);
                let acc = xor3(acc, t2, t3);
                let acc = xor3(acc, t4, t5);
                let acc = xor3(acc, t6, t7);
                let acc = xor3(acc, t8, t9);
                let acc = xor3(acc, t10, t11);
                _mm_xor_si128(acc, t12)
            } else {
                let acc = _mm_xor_si128(_mm_xor_si128(t0, t1), add);
                let acc = _mm_xor_si128(acc, _mm_xor_si128(t2, t3));
                let acc = _mm_xor_si128(acc, _mm_xor_si128(t4, t5));
                let acc = _mm_xor_si128(acc, _mm_xor_si128(t6, t7));
                let acc = _mm_xor_si128(acc, _mm_xor_si128(t8, t9));
                let acc = _mm_xor_si128(acc, _mm_xor_si128(t10, t11));
                _mm_xor_si128(acc, t12)
            }
        }

        /// The G2 stage and the output, one column per register (dword 0) so the rotations
        /// by 8..15 columns are index changes; SMIX gathers its four columns with two levels
        /// of unpacks.
        #[target_feature(enable = $feat)]
        fn g2_hw(p: &Params, st: &State, out: &mut [u8]) {
            let s = p.s;
            let mut c = [_mm_setzero_si128(); 36];
            for (v, w) in c.iter_mut().zip(&st[..s]) {
                *v = to_basis(_mm_cvtsi32_si128(i32::from_ne_bytes(w.to_be_bytes())));
            }
            let steps = crate::hash::fugue::g2_steps(p);
            let mut off = 0;
            let at = |off: usize, i: usize| (off + i) % s;
            for _ in 0..13 {
                for &(cols, r) in steps {
                    let s0 = c[off];
                    for &col in cols {
                        c[at(off, col)] = _mm_xor_si128(c[at(off, col)], s0);
                    }
                    off = at(off, s - r);
                    let x = _mm_unpacklo_epi64(
                        _mm_unpacklo_epi32(c[off], c[at(off, 1)]),
                        _mm_unpacklo_epi32(c[at(off, 2)], c[at(off, 3)]),
                    );
                    let m = mix(x, &MIX_N, _mm_setzero_si128());
                    c[off] = m;
                    c[at(off, 1)] = _mm_shuffle_epi32::<1>(m);
                    c[at(off, 2)] = _mm_shuffle_epi32::<2>(m);
                    c[at(off, 3)] = _mm_shuffle_epi32::<3>(m);
                }
            }
            let s0 = c[off];
            for &col in steps[0].0 {
                c[at(off, col)] = _mm_xor_si128(c[at(off, col)], s0);
            }
            let mut o = 0;
            for &g in crate::hash::fugue::out_groups(p) {
                for j in 0..4 {
                    if o < p.n {
                        let v = from_basis(c[at(off, g + j)]);
                        let w = _mm_cvtsi128_si32(v).to_ne_bytes();
                        out[4 * o..4 * o + 4].copy_from_slice(&w);
                        o += 1;
                    }
                }
            }
        }

        /// Where the next round's input comes from.
        struct Feed<'a> {
            words: &'a [u8],
            /// Rounds left in the current word.
            rin: usize,
            k: usize,
            extra: usize,
        }

        enum Kind {
            Plain,
            Tix(i32),
            Done,
        }

        impl Feed<'_> {
            #[inline(always)]
            fn next(&mut self) -> Kind {
                if self.rin > 0 {
                    self.rin -= 1;
                    Kind::Plain
                } else if self.words.len() >= 4 {
                    let w = i32::from_ne_bytes(self.words[..4].try_into().unwrap());
                    self.words = &self.words[4..];
                    self.rin = self.k - 1;
                    Kind::Tix(w)
                } else if self.extra > 0 {
                    self.extra -= 1;
                    Kind::Plain
                } else {
                    Kind::Done
                }
            }
        }

        /// One round (TIX first if it starts a word) at rotation `B`; false when done.
        #[inline]
        #[target_feature(enable = $feat)]
        fn step<const V: u8, const B: usize>(
            g: &mut [__m128i; 12],
            r: &mut __m128i,
            feed: &mut Feed<'_>,
            st: &mut State,
        ) -> bool {
            let ng = if V == 0 { 10 } else { 12 };
            let p = |l: usize| (l + B) % ng;
            // `*r` is this round's R = (S1, S2, S3, S0) XOR the group that becomes S0..S2.
            let y = *r;
            let mut rr = _mm_xor_si128(y, g[p(0)]);
            let x;
            match feed.next() {
                Kind::Done => {
                    let mut gb = [[0u8; 16]; 12];
                    let [g0, g1, g2, g3, g4, g5, g6, g7, g8, g9, g10, g11] = *g;
                    for (b, v) in gb
                        .iter_mut()
                        .zip([g0, g1, g2, g3, g4, g5, g6, g7, g8, g9, g10, g11])
                    {
                        store(b, from_basis(v));
                    }
                    let mut rb = [0u8; 16];
                    store(&mut rb, from_basis(rr));
                    from_groups(st, ng, (B + 1) % ng, &gb, &rb);
                    return false;
                }
                Kind::Tix(w) => {
                    let iv = _mm_set1_epi32(word_to_basis(w));
                    let m0 = _mm_shuffle_epi8(rr, load(&IDX_M0_D1));
                    let a = match V {
                        0 => 4,
                        1 => 6,
                        _ => 8,
                    };
                    g[p(a)] = _mm_xor_si128(g[p(a)], m0);
                    g[p(3)] = _mm_xor_si128(g[p(3)], _mm_and_si128(iv, load(&MASK_D2)));
                    let s1 = _mm_and_si128(g[p(if V == 1 { 10 } else { 9 })], load(&MASK_D0));
                    if V == 1 {
                        let t = _mm_and_si128(g[p(11)], load(&MASK_D0));
                        g[p(2)] = _mm_xor_si128(g[p(2)], _mm_slli_si128::<4>(t));
                    }
                    if V == 2 {
                        let t = _mm_and_si128(g[p(10)], load(&MASK_D0));
                        g[p(2)] = _mm_xor_si128(g[p(2)], _mm_slli_si128::<4>(t));
                        let t = _mm_and_si128(g[p(11)], load(&MASK_D0));
                        g[p(3)] = _mm_xor_si128(g[p(3)], _mm_slli_si128::<4>(t));
                    }
                    let add = _mm_xor_si128(s1, _mm_and_si128(iv, load(&MASK_D3)));
                    rr = _mm_xor_si128(_mm_and_si128(rr, load(&MASK012)), add);
                    // (rr ^ g0) with g0's dword 3 zero: y's dwords 0..2, then `add`.
                    x = and_xor(y, load(&MASK012), add);
                }
                Kind::Plain => x = y,
            }
            g[p(1)] = _mm_shuffle_epi8(rr, load(&IDX_M012));
            g[p(2)] = _mm_or_si128(
                _mm_and_si128(g[p(2)], load(&MASK123)),
                _mm_shuffle_epi8(rr, load(&IDX_M3)),
            );
            let c = _mm_and_si128(rr, load(&MASK012));
            g[p(ng / 2)] = _mm_xor_si128(g[p(ng / 2)], c);
            *r = mix(x, &MIX_R, g[p(ng - 1)]);
            true
        }

        #[target_feature(enable = $feat)]
        fn run_v<const V: u8>(k: usize, st: &mut State, words: &[u8], extra: usize) {
            let ng = if V == 0 { 10 } else { 12 };
            let mut gb = [[0u8; 16]; 12];
            let mut rb = [0u8; 16];
            to_groups(st, ng, &mut gb, &mut rb);
            let mut g = [
                to_basis(load(&gb[0])),
                to_basis(load(&gb[1])),
                to_basis(load(&gb[2])),
                to_basis(load(&gb[3])),
                to_basis(load(&gb[4])),
                to_basis(load(&gb[5])),
                to_basis(load(&gb[6])),
                to_basis(load(&gb[7])),
                to_basis(load(&gb[8])),
                to_basis(load(&gb[9])),
                to_basis(load(&gb[10])),
                to_basis(load(&gb[11])),
            ];
            let mut r = _mm_xor_si128(to_basis(load(&rb)), g[ng - 1]);
            let mut feed = Feed {
                words,
                rin: 0,
                k,
                extra,
            };
            loop {
                if 11 < ng && !step::<V, 11>(&mut g, &mut r, &mut feed, st) {
                    return;
                }
                if 10 < ng && !step::<V, 10>(&mut g, &mut r, &mut feed, st) {
                    return;
                }
                if 9 < ng && !step::<V, 9>(&mut g, &mut r, &mut feed, st) {
                    return;
                }
                if 8 < ng && !step::<V, 8>(&mut g, &mut r, &mut feed, st) {
                    return;
                }
                if 7 < ng && !step::<V, 7>(&mut g, &mut r, &mut feed, st) {
                    return;
                }
                if 6 < ng && !step::<V, 6>(&mut g, &mut r, &mut feed, st) {
                    return;
                }
                if 5 < ng && !step::<V, 5>(&mut g, &mut r, &mut feed, st) {
                    return;
                }
                if 4 < ng && !step::<V, 4>(&mut g, &mut r, &mut feed, st) {
                    return;
                }
                if 3 < ng && !step::<V, 3>(&mut g, &mut r, &mut feed, st) {
                    return;
                }
                if 2 < ng && !step::<V, 2>(&mut g, &mut r, &mut feed, st) {
                    return;
                }
                if 1 < ng && !step::<V, 1>(&mut g, &mut r, &mut feed, st) {
                    return;
                }
                if 0 < ng && !step::<V, 0>(&mut g, &mut r, &mut feed, st) {
                    return;
                }
            }
        }

        /// Absorbs `words` (whole 4-byte words), then runs `extra` plain rounds.
        pub(crate) fn run(p: &Params, st: &mut State, words: &[u8], extra: usize) {
            debug_assert!(super::FugueBackend::$backend.is_available());
            // SAFETY: reached only through a `Fugue` whose backend availability (the
            // features enabled on `run_v`) was checked when it was made.
            unsafe {
                match (p.s, p.k) {
                    (30, _) => run_v::<0>(p.k, st, words, extra),
                    (_, 3) => run_v::<1>(p.k, st, words, extra),
                    _ => run_v::<2>(p.k, st, words, extra),
                }
            }
        }

        /// The G2 stage and the output columns.
        pub(crate) fn g2(p: &Params, st: &State, out: &mut [u8]) {
            // SAFETY: as in `run`.
            unsafe { g2_hw(p, st, out) }
        }
    };
}
pub(crate) use fugue_rounds_v1;

#[cfg(test)]
mod tests {
    use super::*;

    /// S(v) from the definition: the inverse in GF(2^8) (v^254), then the affine map.
    fn sbox(v: u8) -> u8 {
        let mut inv = 1u8;
        for _ in 0..254 {
            inv = gmul(inv, v);
        }
        affine_lin(inv) ^ 0x63
    }

    /// Each plan's tables, applied as PSHUFBs to S-box outputs (in the natural or ShiftRows
    /// byte order) that carry the plan's coefficient per dword and no affine constant, plus
    /// `k`, compute `soft::smix` (in both output column orders); the tables past the plan's
    /// count are all "zero".
    #[test]
    fn mix_plans_compute_smix() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        for (src, plan) in [
            (IDENT, PLAN13),
            (IDENT, PLAN10),
            (SHIFT_ROWS, PLAN13),
            (SHIFT_ROWS, PLAN10_SR),
        ] {
            let count = plan.layers[0] + plan.layers[1] + plan.layers[2];
            for rot in [false, true] {
                let t = mix_tables_plan(src, rot, plan);
                for unused in &t.t[count..] {
                    assert_eq!(unused, &[0x80u8; 16]);
                }
                for _ in 0..500 {
                    let mut x = [0u8; 16];
                    for b in x.iter_mut() {
                        seed = seed
                            .wrapping_mul(6364136223846793005)
                            .wrapping_add(1442695040888963407);
                        *b = (seed >> 56) as u8;
                    }
                    // S-box output byte `q` holds S(x[src[q]]), less the constant.
                    let lin: [u8; 16] = core::array::from_fn(|q| sbox(x[src[q] as usize]) ^ 0x63);
                    let mut got = t.k;
                    let mut l = 0;
                    for o in 0..3 {
                        for _ in 0..plan.layers[o] {
                            for (p, g) in got.iter_mut().enumerate() {
                                let q = t.t[l][p];
                                if q & 0x80 == 0 {
                                    let c = plan.coef[o][q as usize / 4];
                                    *g ^= gmul(c, lin[q as usize]);
                                }
                            }
                            l += 1;
                        }
                    }
                    let mut cols: [u32; 4] = core::array::from_fn(|j| {
                        u32::from_be_bytes(x[4 * j..4 * j + 4].try_into().unwrap())
                    });
                    super::super::soft::smix(&mut cols);
                    let mut want = [0u8; 16];
                    for j in 0..4 {
                        let c = cols[if rot { (j + 1) % 4 } else { j }];
                        want[4 * j..4 * j + 4].copy_from_slice(&c.to_be_bytes());
                    }
                    assert_eq!(got, want, "layers {:?} rot {rot} x {x:02x?}", plan.layers);
                }
            }
        }
    }
}
