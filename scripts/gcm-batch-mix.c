/*
 * gcm-batch-mix.c: a C model of the zmm GCM loop, to see how the number of counter registers
 * in flight changes what VAESENC and VPCLMULQDQ cost together (session 16, issue 11).
 *
 *   cc -O3 -funroll-all-loops -march=icelake-server -o gcm-batch-mix scripts/gcm-batch-mix.c
 *   ./gcm-batch-mix
 *
 * Each loop encrypts 16 KiB with AES-128-shaped rounds (dummy keys) on V zmm registers of
 * counter blocks (4 blocks each) and, when it hashes, multiplies the previous batch's output
 * by key powers (Karatsuba: 3 VPCLMULQDQ a register, one step after each of the first middle
 * rounds) with one lane-wise reduction (2 VPCLMULQDQ) a batch, as backend/vaes/gcm.rs does.
 * Times are best of 30 x 2000 calls, interleaved, and printed also as cycles per 16 blocks
 * scaled so that the AES-only 8-register loop is 40 (its 40 VAESENC at one a cycle: a ratio,
 * not a cycle count; this VM has no cycle counters). The output is not checked: it is a
 * timing model, not an implementation.
 *
 * Zen 4 guest, session 16, three runs: gcm4 80.8-82.7, gcm8 67.5-70.3, aes4 41.4-41.5, aes8
 * 40 (11.2-11.5 and 13.2-13.8 GB/s for the two GCM loops): the 4-register loop alone keeps the
 * AES pipes busy, but with the 14 multiplies of its batch (54 slots of the two pipes they
 * share) it takes about 81; with 8 registers about 68. An earlier draft of this model (steps
 * in the same rounds, compiled the same way) gave 72.5 and 64.5: the code the compiler makes
 * of it moves these numbers by 10%; the ratio between the two stayed 1.12-1.20x.
 */
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

#define NR 10
static __attribute__((aligned(64))) uint8_t rk[NR + 1][16];
static __attribute__((aligned(64))) uint8_t pw[64][16];
static __attribute__((aligned(64))) uint8_t buf[16384];
#define K(i) _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)rk[i]))
#define P(i) _mm512_load_si512(pw[4 * (i)])
#define Q(i) _mm512_load_si512(pw[4 * (i) + 32])

#define GEN(NAME, V, HASH)                                                                     \
    __attribute__((noinline)) __m512i NAME(uint8_t *d, size_t n, __m512i c, __m512i bs) {      \
        __m512i y[V], s = _mm512_setzero_si512();                                              \
        for (int i = 0; i < V; i++) y[i] = _mm512_setzero_si512();                             \
        const __m512i one = _mm512_set1_epi32(1);                                              \
        const __m512i poly = _mm512_set1_epi64(0xc200000000000000ULL);                         \
        for (size_t b = 0; b < n; b += 64 * V) {                                               \
            __m512i x[V], lo = _mm512_setzero_si512(), hi = lo, mi = lo;                       \
            for (int i = 0; i < V; i++) {                                                      \
                c = _mm512_add_epi32(c, one);                                                  \
                x[i] = _mm512_xor_si512(_mm512_shuffle_epi8(c, bs), K(0));                     \
            }                                                                                  \
            for (int r = 1; r < NR; r++) {                                                     \
                __m512i k = K(r);                                                              \
                for (int i = 0; i < V; i++) x[i] = _mm512_aesenc_epi128(x[i], k);              \
                for (int i = r - 1; HASH && i < V && (i == r - 1 || r == NR - 1); i++) {       \
                    __m512i yy = _mm512_shuffle_epi8(y[i], bs);                                \
                    if (i == 0) yy = _mm512_xor_si512(yy, s);                                  \
                    lo = _mm512_xor_si512(lo, _mm512_clmulepi64_epi128(yy, P(i), 0x00));       \
                    hi = _mm512_xor_si512(hi, _mm512_clmulepi64_epi128(yy, P(i), 0x11));       \
                    __m512i ym = _mm512_xor_si512(yy, _mm512_shuffle_epi32(yy, 0x4e));         \
                    mi = _mm512_xor_si512(mi, _mm512_clmulepi64_epi128(ym, Q(i), 0x00));       \
                }                                                                              \
            }                                                                                  \
            if (HASH) {                                                                        \
                mi = _mm512_ternarylogic_epi64(mi, lo, hi, 0x96);                              \
                __m512i t = _mm512_clmulepi64_epi128(lo, poly, 0x00);                          \
                mi = _mm512_ternarylogic_epi64(mi, t, _mm512_shuffle_epi32(lo, 0x4e), 0x96);   \
                t = _mm512_clmulepi64_epi128(mi, poly, 0x00);                                  \
                s = _mm512_ternarylogic_epi64(hi, t, _mm512_shuffle_epi32(mi, 0x4e), 0x96);    \
                __m256i f = _mm256_xor_si256(_mm512_castsi512_si256(s),                        \
                                             _mm512_extracti64x4_epi64(s, 1));                 \
                s = _mm512_zextsi128_si512(_mm_xor_si128(_mm256_castsi256_si128(f),            \
                                                         _mm256_extracti128_si256(f, 1)));     \
            }                                                                                  \
            __m512i kl = K(NR);                                                                \
            for (int i = 0; i < V; i++) {                                                      \
                __m512i dd = _mm512_xor_si512(_mm512_loadu_si512(d + b + 64 * i), kl);         \
                x[i] = _mm512_aesenclast_epi128(x[i], dd);                                     \
                _mm512_storeu_si512(d + b + 64 * i, x[i]);                                     \
                y[i] = x[i];                                                                   \
            }                                                                                  \
        }                                                                                      \
        return s;                                                                              \
    }

GEN(gcm4, 4, 1)
GEN(gcm8, 8, 1)
GEN(aes4, 4, 0)
GEN(aes8, 8, 0)

int main(void) {
    for (int i = 0; i <= NR; i++)
        for (int j = 0; j < 16; j++) rk[i][j] = (uint8_t)(i * 16 + j);
    for (int i = 0; i < 64; i++)
        for (int j = 0; j < 16; j++) pw[i][j] = (uint8_t)(i ^ (j * 7));
    __m512i c = _mm512_set1_epi32(3), bs = _mm512_set1_epi32(0x00010203), acc = c;
    __m512i (*f[4])(uint8_t *, size_t, __m512i, __m512i) = {gcm4, gcm8, aes4, aes8};
    const char *name[4] = {"gcm4", "gcm8", "aes4", "aes8"};
    double best[4] = {1e99, 1e99, 1e99, 1e99};
    const size_t n = sizeof buf;
    for (int t = 0; t < 30; t++)
        for (int k = 0; k < 4; k++) {
            double t0 = now();
            for (int r = 0; r < 2000; r++) acc = _mm512_xor_si512(acc, f[k](buf, n, c, bs));
            double dt = (now() - t0) / 2000;
            if (dt < best[k]) best[k] = dt;
        }
    for (int k = 0; k < 4; k++)
        printf("%s  %6.2f GB/s  %5.1f per 16 blocks (aes8 = 40)\n", name[k], n / best[k],
               best[k] / best[3] * 40);
    return _mm512_reduce_add_epi32(acc) == 12345;
}
