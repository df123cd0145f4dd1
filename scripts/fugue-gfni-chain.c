/* fugue-gfni-chain: what one Fugue round costs on the `gfni` backend's critical path, in core
 * cycles (issue 15: what bounds Fugue on a GFNI CPU).
 *
 *   cc -O2 -mgfni -mavx512f -mavx512vl -mavx512bw -o /tmp/fugue-gfni-chain \
 *       scripts/fugue-gfni-chain.c && /tmp/fugue-gfni-chain
 *
 * A Fugue round's SMIX input is the previous round's SMIX output, so a round costs at least
 * the latency of: three GF2P8AFFINEINVQB (S, 4S and 7S of the 16 input bytes, side by side),
 * 13 PSHUFB of them (the SuperMix tables, `crates/aesx/src/hash/fugue/simd.rs`) and the XOR
 * of the 13 (plus one value from the state) with three-input VPTERNLOGD. The loops below run
 * that chain with arbitrary tables (time, not Fugue), and the pieces of it: an affine feeding
 * an affine, an affine feeding another unit, and the SuperMix sum in the shapes tried. The
 * clock comes from a chain of dependent register additions (an immediate addend would be
 * folded at rename on Golden Cove). Best of 300 trials; run it on a quiet machine.
 *
 * Session 19, Intel family 6 model 167 (Sapphire / Emerald Rapids class): an affine feeding
 * an affine 3 cycles, an affine and a 1-cycle op of another unit in a loop 6 (2 cycles of
 * forwarding between the units); the whole SMIX chain 15.5-15.9 cycles, of which the sum after
 * the affines takes about 10 where 13 shuffles at two a cycle and the XORs could take 8; two
 * interleaved XOR chains 0.2-0.3 cycles less. (Not kept here: 10 shuffles instead of 13, three
 * pairs of the one-column tables merged by a VPROLQ and a masked XOR, checked equal to the 13
 * on real tables, ran 0.6 cycles slower: the shuffle ports are not what binds.)
 *
 * Session 21 added the "pre" loops: the SuperMix's byte moves done before the S-box instead of
 * after it (`c·S(x)[t] = c·S(x[t])` with the affine constant left out of every term, so that a
 * zero byte stays zero, and added once), each term a PSHUFB of x then its own affine; "pre N"
 * sums N such terms, "hybrid N" is the shipped shape with N of its 13 terms made that way. Same
 * guest, two runs: one shuffle-affine-XOR 7.2 cycles, pre 2 7.9-8.2, pre 4 11.2-11.6, pre 6
 * 14.6-14.9, pre 8 16.7-16.9, pre 10 19.2-19.4, hybrid 1-3 17.4-18.4, against 15.4-15.9 for the
 * two-chain round: every affine fed by or feeding another unit adds about 1.7 cycles, though
 * independent affines issue two a cycle.
 */
#include <immintrin.h>
#include <stdio.h>
#include <time.h>

#include "clock.h"

static __m128i T[16];
#define SH(a, i) _mm_shuffle_epi8(a, T[i])
#define X3(a, b, c) _mm_ternarylogic_epi32(a, b, c, 0x96)
#define AFF(x, m, k) _mm_gf2p8affineinv_epi64_epi8(x, _mm_set1_epi64x(m), k)
#define ROUND_HEAD                                                                   \
    __m128i a = AFF(x, 0xF1E3C78F1F3E7CF8LL, 0x63), b = AFF(x, 0x1234567812345678LL, 0x11), \
            c = AFF(x, 0x2345678923456789LL, 0x22);                                  \
    __m128i t0 = SH(a, 0), t1 = SH(a, 1), t2 = SH(a, 2), t3 = SH(a, 3), t4 = SH(a, 4), \
            t5 = SH(b, 5), t6 = SH(b, 6), t7 = SH(b, 7), t8 = SH(b, 8), t9 = SH(c, 9),  \
            t10 = SH(c, 10), t11 = SH(c, 11), t12 = SH(c, 12);
#define LOOP(name, ...)                                                              \
    __attribute__((noinline)) static __m128i name(__m128i x, long n, __m128i add) { \
        for (long i = 0; i < n; i++) {                                               \
            __VA_ARGS__;                                                             \
            __asm__ volatile("" : "+v"(x));                                          \
        }                                                                            \
        return x;                                                                    \
    }

LOOP(aff_aff, x = AFF(AFF(x, 0xF1E3C78F1F3E7CF8LL, 0x63), 0xF1E3C78F1F3E7CF8LL, 0x63))
LOOP(aff_xor, x = _mm_xor_si128(AFF(x, 0xF1E3C78F1F3E7CF8LL, 0x63), add))
LOOP(aff_shuf, x = SH(AFF(x, 0xF1E3C78F1F3E7CF8LL, 0x63), 0))
LOOP(sum_only, __m128i a = x; __m128i acc = X3(SH(a, 0), SH(a, 1), add);
     acc = X3(acc, SH(a, 2), SH(a, 3)); acc = X3(acc, SH(a, 4), SH(a, 5));
     acc = X3(acc, SH(a, 6), SH(a, 7)); acc = X3(acc, SH(a, 8), SH(a, 9));
     acc = X3(acc, SH(a, 10), SH(a, 11)); x = _mm_xor_si128(acc, SH(a, 12)))
LOOP(smix_one_chain, ROUND_HEAD __m128i acc = X3(t0, t1, add); acc = X3(acc, t2, t3);
     acc = X3(acc, t4, t5); acc = X3(acc, t6, t7); acc = X3(acc, t8, t9);
     acc = X3(acc, t10, t11); x = _mm_xor_si128(acc, t12))
#define AFF0(x, m) _mm_gf2p8affineinv_epi64_epi8(x, _mm_set1_epi64x(m), 0)
#define PA(i) AFF0(SH(x, i), 0x1234567812345678LL + i)
LOOP(sh_aff_xor, x = _mm_xor_si128(AFF0(SH(x, 0), 0xF1E3C78F1F3E7CF8LL), add))
LOOP(pre2, x = X3(PA(0), PA(1), add))
LOOP(pre4, __m128i p = X3(PA(0), PA(1), add); x = X3(p, PA(2), PA(3)))
LOOP(pre6, __m128i p = X3(PA(0), PA(1), add); __m128i q = X3(PA(2), PA(3), PA(4));
     x = X3(p, q, PA(5)))
LOOP(pre8, __m128i t0 = PA(0), t1 = PA(1), t2 = PA(2), t3 = PA(3), t4 = PA(4), t5 = PA(5),
     t6 = PA(6), t7 = PA(7); __m128i p = X3(t0, t1, add), q = X3(t2, t3, t4); p = X3(p, t5, t6);
     x = X3(p, q, t7))
LOOP(pre10, __m128i t0 = PA(0), t1 = PA(1), t2 = PA(2), t3 = PA(3), t4 = PA(4), t5 = PA(5),
     t6 = PA(6), t7 = PA(7), t8 = PA(8), t9 = PA(9); __m128i p = X3(t0, t1, add),
     q = X3(t2, t3, t4); p = X3(p, t5, t6); q = X3(q, t7, t8); x = X3(p, q, t9))
#define HYB_HEAD                                                                          \
    __m128i a = AFF0(x, 0xF1E3C78F1F3E7CF8LL), b = AFF0(x, 0x1234567812345678LL),        \
            c = AFF0(x, 0x2345678923456789LL);                                            \
    __m128i p = X3(SH(a, 0), SH(a, 1), add), q = X3(SH(a, 2), SH(a, 3), SH(a, 4));       \
    p = X3(p, SH(b, 5), SH(b, 6)); q = X3(q, SH(b, 7), SH(b, 8));
LOOP(hybrid1, __m128i e0 = PA(13); HYB_HEAD p = X3(p, SH(c, 9), SH(c, 10));
     q = X3(q, SH(c, 11), e0); x = _mm_xor_si128(p, q))
LOOP(hybrid2, __m128i e0 = PA(13), e1 = PA(14); HYB_HEAD p = X3(p, SH(c, 9), SH(c, 10));
     q = X3(q, e1, e0); x = _mm_xor_si128(p, q))
LOOP(hybrid3, __m128i e0 = PA(13), e1 = PA(14), e2 = PA(15); HYB_HEAD p = X3(p, SH(c, 9), e2);
     q = X3(q, e1, e0); x = _mm_xor_si128(p, q))
LOOP(smix_two_chains, ROUND_HEAD __m128i p = X3(t0, t1, add); __m128i q = X3(t2, t3, t4);
     p = X3(p, t5, t6); q = X3(q, t7, t8); p = X3(p, t9, t10); q = _mm_xor_si128(q, t11);
     x = X3(p, q, t12))
int main(void) {
    for (int i = 0; i < 16; i++)
        T[i] = _mm_set_epi8(15 - i % 3, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, i % 16);
    double hz = core_ghz() * 1e9;
    long n = 200000;
    __m128i x = _mm_set1_epi32(5), add = _mm_set1_epi32(7);
    printf("core clock %.3f GHz\n", hz / 1e9);
    struct { const char *name; __m128i (*f)(__m128i, long, __m128i); double per; } t[] = {
        {"affine -> affine (2 a loop)", aff_aff, 2},
        {"affine -> vpxor", aff_xor, 1},
        {"affine -> vpshufb", aff_shuf, 1},
        {"SuperMix sum alone (13 shuffles)", sum_only, 1},
        {"SMIX round, one XOR chain (aesx v1)", smix_one_chain, 1},
        {"SMIX round, two XOR chains (aesx v2)", smix_two_chains, 1},
        {"shuffle -> affine -> vpxor", sh_aff_xor, 1},
        {"pre 2 (shuffle-affine pairs)", pre2, 1},
        {"pre 4", pre4, 1},
        {"pre 6", pre6, 1},
        {"pre 8", pre8, 1},
        {"pre 10 (every SMIX term)", pre10, 1},
        {"hybrid 1 (v2 with 1 term pre)", hybrid1, 1},
        {"hybrid 2", hybrid2, 1},
        {"hybrid 3", hybrid3, 1},
    };
    for (unsigned i = 0; i < sizeof t / sizeof t[0]; i++) {
        double best = 1e9;
        for (int k = 0; k < 300; k++) {
            double s = now();
            x = t[i].f(x, n, add);
            s = now() - s;
            if (s < best) best = s;
        }
        printf("%-38s %6.2f cycles a loop%s\n", t[i].name, best * hz / n,
               t[i].per == 2 ? " (two affines)" : "");
    }
    return _mm_extract_epi32(x, 0) == 12345;
}
