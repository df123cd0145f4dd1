/* Cost of one Fugue SMIX round as a dependency chain, in core cycles, for several ways of
 * computing the SuperMix after an AESENCLAST S-box (issue 15: what bounds Fugue-512 on AES-NI).
 *
 *   cc -O2 -maes -msse4.1 -o /tmp/fugue-smix-lab scripts/fugue-smix-lab.c && /tmp/fugue-smix-lab
 *
 * Every variant computes x' = SuperMix-shaped(S(x)) ^ add with the same instruction mix as a
 * real formulation, but with arbitrary shuffle tables: it measures time, not Fugue (the real
 * tables are built in crates/aesx/src/hash/fugue/simd.rs). Each round depends on the previous
 * one, as in Fugue, so this is the latency of the round's critical path with its side work
 * competing for the same ports. The clock is measured with a chain of dependent 1-cycle adds.
 * Short trials, best of 400: run it when the machine is quiet.
 *
 * Variants:
 *   ours     U = S(x); 4U, 7U by nibble tables (PSHUFB); 13 shuffles of U/4U/7U summed (aesx)
 *   post     13 shuffles of U summed into A0, A1, A2; then 4*A1 ^ 7*A2 by nibble tables
 *   rowsum   A1, A2 from masked row-sum shuffles; multiply after (a 9+4 shuffle variant)
 *   xtime    U = S(x); 2U, 4U by PADDB + PBLENDVB (off the shuffle ports); 13 shuffles
 *   red2     U = S(x); 4U, 7U by PADDB + a 2-bit reduction lookup (the peers' method)
 *   nomul    U = S(x); 13 shuffles of U, no multiplication at all: a lower bound
 *   plan10   what aesx's `aesni` runs since session 23: 4U, 7U by nibble tables, exchanged in
 *            dword 2 (two PBLENDW), then 5 shuffles of U and 5 of the two blends (PLAN10_SR)
 *   plan10x  the same with 2U, 4U by PADDB + PBLENDVB (no shuffle port for the products)
 *   late5    plan10 without U's five shuffles: S-box, tables, blends, the 5 shuffles of the
 *            products and their sum. Every output byte has 5 terms of coefficient 4 or 7, so
 *            a round that multiplies after the S-box has at least these 5 shuffles on its
 *            chain: this is the floor of any such round, whatever it does with the rest
 *   nomul10  U = S(x); 10 shuffles of U, no multiplication (the floor of a 10-shuffle round)
 *   mul1     S-box, tables, one shuffle of each of U, 4U, 7U, summed
 *   aes      AESENCLAST and one XOR (the S-box's latency)
 */
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "clock.h"

static __m128i T[32];
#define SH(a, i) _mm_shuffle_epi8(a, T[i])
#define X _mm_xor_si128
#define Z _mm_setzero_si128()

static inline __m128i nib(__m128i u, __m128i *u7) {
    __m128i m = _mm_set1_epi8(15), lo = _mm_and_si128(u, m),
            hi = _mm_and_si128(_mm_srli_epi16(u, 4), m);
    *u7 = X(_mm_shuffle_epi8(T[20], lo), _mm_shuffle_epi8(T[21], hi));
    return X(_mm_shuffle_epi8(T[22], lo), _mm_shuffle_epi8(T[23], hi));
}
static inline __m128i mix13(__m128i u, __m128i u4, __m128i u7, __m128i add) {
    __m128i acc = X(X(SH(u, 0), SH(u, 1)), add);
    acc = X(acc, X(SH(u, 2), SH(u, 3)));
    acc = X(acc, X(SH(u, 4), SH(u4, 5)));
    acc = X(acc, X(SH(u4, 6), SH(u4, 7)));
    acc = X(acc, X(SH(u4, 8), SH(u7, 9)));
    acc = X(acc, X(SH(u7, 10), SH(u7, 11)));
    return X(acc, SH(u7, 12));
}
static inline __m128i v_ours(__m128i x, __m128i add) {
    __m128i u = _mm_aesenclast_si128(x, Z), u7, u4 = nib(u, &u7);
    return mix13(u, u4, u7, add);
}
static inline __m128i post_mul(__m128i a0, __m128i a1, __m128i a2) {
    __m128i m = _mm_set1_epi8(15);
    __m128i l1 = _mm_and_si128(a1, m), h1 = _mm_and_si128(_mm_srli_epi16(a1, 4), m);
    __m128i l2 = _mm_and_si128(a2, m), h2 = _mm_and_si128(_mm_srli_epi16(a2, 4), m);
    return X(X(X(_mm_shuffle_epi8(T[20], l2), _mm_shuffle_epi8(T[21], h2)), a0),
             X(_mm_shuffle_epi8(T[22], l1), _mm_shuffle_epi8(T[23], h1)));
}
static inline __m128i v_post(__m128i x, __m128i add) {
    __m128i u = _mm_aesenclast_si128(x, Z);
    __m128i a2 = X(X(SH(u, 9), SH(u, 10)), X(SH(u, 11), SH(u, 12)));
    __m128i a1 = X(X(SH(u, 5), SH(u, 6)), X(SH(u, 7), SH(u, 8)));
    __m128i a0 = X(X(X(SH(u, 0), SH(u, 1)), X(SH(u, 2), SH(u, 3))), X(SH(u, 4), add));
    return post_mul(a0, a1, a2);
}
static inline __m128i v_rowsum(__m128i x, __m128i add) {
    __m128i u = _mm_aesenclast_si128(x, Z);
    __m128i a2 = X(X(SH(u, 3), SH(u, 7)), X(SH(u, 8), SH(u, 9)));
    __m128i a1 = X(X(SH(u, 4), SH(u, 10)), X(SH(u, 11), SH(u, 12)));
    __m128i a0 = X(X(SH(u, 5), SH(u, 6)), X(X(SH(u, 13), SH(u, 14)), X(SH(u, 15), add)));
    return post_mul(a0, a1, a2);
}
static inline __m128i x2(__m128i y) {
    return X(_mm_add_epi8(y, y), _mm_blendv_epi8(Z, _mm_set1_epi8(0x1b), y));
}
static inline __m128i v_xtime(__m128i x, __m128i add) {
    __m128i u = _mm_aesenclast_si128(x, Z), u2 = x2(u), u4 = x2(u2);
    return mix13(u, u4, X(X(u, u2), u4), add);
}
static inline __m128i v_red2(__m128i x, __m128i add) {
    __m128i u = _mm_aesenclast_si128(x, Z);
    __m128i t = _mm_and_si128(_mm_srli_epi16(u, 6), _mm_set1_epi8(3));
    __m128i r2 = _mm_add_epi8(u, u), r4 = _mm_add_epi8(r2, r2);
    __m128i u7 = X(X(X(u, r2), r4), _mm_shuffle_epi8(T[27], t));
    __m128i u4 = X(r4, _mm_shuffle_epi8(T[28], t));
    return mix13(u, u4, u7, add);
}
/* The 10-shuffle SuperMix sum of PLAN10_SR: 5 shuffles of u, 2 of b, 3 of c, XORed with add. */
static inline __m128i sum10(__m128i u, __m128i b, __m128i c, __m128i add) {
    __m128i acc = X(X(SH(u, 0), SH(u, 1)), add);
    acc = X(acc, X(SH(u, 2), SH(u, 3)));
    acc = X(acc, X(SH(u, 4), SH(b, 5)));
    acc = X(acc, X(SH(b, 6), SH(c, 7)));
    return X(acc, X(SH(c, 8), SH(c, 9)));
}
/* PLAN10_SR (aesx aesni since session 23): S in 5 shuffles, 4S/7S blended in dword 2, 2 + 3. */
static inline __m128i v_plan10(__m128i x, __m128i add) {
    __m128i u = _mm_aesenclast_si128(x, Z), u7, u4 = nib(u, &u7);
    __m128i b = _mm_blend_epi16(u4, u7, 0x30), c = _mm_blend_epi16(u7, u4, 0x30);
    return sum10(u, b, c, add);
}
/* Ten shuffles of S, no multiplication (not a SMIX): the floor of a 10-shuffle round. */
static inline __m128i v_nomul10(__m128i x, __m128i add) {
    __m128i u = _mm_aesenclast_si128(x, Z);
    return sum10(u, u, u, add);
}
/* AESENCLAST, the nibble tables, one shuffle of each product and the XORs. */
static inline __m128i v_mul1(__m128i x, __m128i add) {
    __m128i u = _mm_aesenclast_si128(x, Z), u7, u4 = nib(u, &u7);
    return X(X(SH(u, 0), add), X(SH(u4, 1), SH(u7, 2)));
}
/* Products and blends of plan10, then only their 5 shuffles (see the header). */
static inline __m128i v_late5(__m128i x, __m128i add) {
    __m128i u = _mm_aesenclast_si128(x, Z), u7, u4 = nib(u, &u7);
    __m128i b = _mm_blend_epi16(u4, u7, 0x30), c = _mm_blend_epi16(u7, u4, 0x30);
    __m128i acc = X(SH(b, 5), add);
    acc = X(acc, X(SH(b, 6), SH(c, 7)));
    return X(acc, X(SH(c, 8), SH(c, 9)));
}
/* 2y by PADDB and PBLENDVB (the reduction byte where y's top bit is set). */
static inline __m128i x2v(__m128i y) {
    return X(_mm_add_epi8(y, y), _mm_blendv_epi8(Z, _mm_set1_epi8(0x1b), y));
}
static inline __m128i v_plan10x(__m128i x, __m128i add) {
    __m128i u = _mm_aesenclast_si128(x, Z), u2 = x2v(u), u4 = x2v(u2), u7 = X(X(u, u2), u4);
    __m128i b = _mm_blend_epi16(u4, u7, 0x30), c = _mm_blend_epi16(u7, u4, 0x30);
    return sum10(u, b, c, add);
}
/* AESENCLAST and one XOR: the S-box's latency with its forwarding. */
static inline __m128i v_aes(__m128i x, __m128i add) { return X(_mm_aesenclast_si128(x, Z), add); }
static inline __m128i v_nomul(__m128i x, __m128i add) {
    __m128i u = _mm_aesenclast_si128(x, Z);
    return mix13(u, u, u, add);
}

#define N 30000
static volatile int sink;
static double ghz;
#define BENCH(name, f)                                                                        \
    {                                                                                         \
        double best = 1e9;                                                                    \
        for (int r = 0; r < 400; r++) {                                                       \
            __m128i x = _mm_set1_epi32(r), g0 = _mm_set1_epi32(1), g1 = _mm_set1_epi32(2),   \
                    g2 = _mm_set1_epi32(3);                                                   \
            double a = now();                                                                 \
            for (long i = 0; i < N; i += 3) {                                                 \
                x = f(x, g0);                                                                 \
                x = f(x, g1);                                                                 \
                x = f(x, g2);                                                                 \
            }                                                                                 \
            double d = now() - a;                                                             \
            if (d < best) best = d;                                                           \
            sink ^= _mm_cvtsi128_si32(x);                                                     \
        }                                                                                     \
        printf("%-7s %6.2f cycles/round\n", name, best / N * ghz * 1e9);                     \
    }

int main(void) {
    for (int i = 0; i < 32; i++)
        T[i] = _mm_set_epi8(i, 3 * i, 5, 7, i + 1, 9, 2, 4, 6, 8, 10, 12, 14, 1, 0, 11);
    ghz = core_ghz();
    printf("core clock about %.2f GHz (dependent adds)\n", ghz);
    BENCH("ours", v_ours)
    BENCH("post", v_post)
    BENCH("rowsum", v_rowsum)
    BENCH("xtime", v_xtime)
    BENCH("red2", v_red2)
    BENCH("nomul", v_nomul)
    BENCH("plan10", v_plan10)
    BENCH("plan10x", v_plan10x)
    BENCH("late5", v_late5)
    BENCH("nomul10", v_nomul10)
    BENCH("mul1", v_mul1)
    BENCH("aes", v_aes)
    return 0;
}
