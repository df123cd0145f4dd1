/* A C model of two CTR loops on ymm for Zen 3 (AES-256, 12 registers an iteration): the
 * selector loop that `vaes256` runs (`ctr_asm::ymm_sel12`: A ^ (D' & W_i), then 14 rounds) and
 * the first-round-table loop of `ctr_asm::zmm_r1` carried to ymm (round 1 from a table:
 * P[j] ^ (mask ? Ga : Gb), then 13 rounds), with the per-lane choice by a compare of CMP's
 * width. Steady state only (no table build, no G updates, arbitrary tables): it measures
 * throughput, not AES.
 *
 *   gcc -O2 -mavx2 -mvaes -maes -DCMP=_mm256_cmpgt_epi8 -Iscripts -o /tmp/r1lab scripts/ctr-r1-ymm-lab.c
 *   for i in $(seq 14); do /tmp/r1lab; done        (and -DCMP=_mm256_cmpgt_epi64)
 *
 * Prints GB/s of each loop on a 16128-byte buffer (best of 2000 alternated trials). Session 33
 * (Zen 3, family 25 model 1), ten processes each: byte compare 1.03-1.05x the selector loop in
 * 7, 0.88x in 3; 64-bit compare 0.78-0.89x in all 10. The selector loop itself read 14.36-14.37
 * GB/s in some processes and 14.00 in others, the slow ones the same for both loops. */
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"

#ifndef CMP
#define CMP _mm256_cmpgt_epi8
#endif
#define R 12
#define NR 14
static __m256i K[16], P[128], J[128], W[R];
static volatile int sink;

/* The last round of both loops, with the data folded into its key: the same code in each. */
__attribute__((always_inline)) static inline void last_round(__m256i *r, unsigned char *out) {
    _Pragma("GCC unroll 16") for (int i = 0; i < R; i++) {
        __m256i x = _mm256_loadu_si256((void *)(out + 32 * i));
        r[i] = _mm256_aesenclast_epi128(r[i], _mm256_xor_si256(K[NR], x));
        _mm256_storeu_si256((void *)(out + 32 * i), r[i]);
    }
}

__attribute__((noinline)) static void selloop(unsigned char *buf, size_t len, __m256i a, __m256i d) {
    for (size_t o = 0; o < len; o += 32 * R) {
        __m256i r[R];
        _Pragma("GCC unroll 16") for (int i = 0; i < R; i++) r[i] =
            _mm256_xor_si256(_mm256_and_si256(d, W[i]), a);
        _Pragma("GCC unroll 16") for (int k = 1; k < NR; k++)
            _Pragma("GCC unroll 16") for (int i = 0; i < R; i++) r[i] = _mm256_aesenc_epi128(r[i], K[k]);
        last_round(r, buf + o);
        a = _mm256_add_epi64(a, d);
    }
}

__attribute__((noinline)) static void r1loop(unsigned char *buf, size_t len, __m256i thr, __m256i xg, __m256i gb) {
    size_t j = 0;
    for (size_t o = 0; o < len; o += 32 * R) {
        __m256i r[R];
        _Pragma("GCC unroll 16") for (int i = 0; i < R; i++) {
            __m256i s = CMP(thr, J[(j + i) & 127]);
            r[i] = _mm256_xor_si256(_mm256_xor_si256(_mm256_and_si256(s, xg), gb), P[(j + i) & 127]);
        }
        _Pragma("GCC unroll 16") for (int k = 2; k < NR; k++)
            _Pragma("GCC unroll 16") for (int i = 0; i < R; i++) r[i] = _mm256_aesenc_epi128(r[i], K[k]);
        last_round(r, buf + o);
        j += R;
    }
}

int main(void) {
    size_t len = 16384 - 16384 % (32 * R);
    unsigned char *buf = aligned_alloc(64, 1 << 16);
    memset(buf, 1, 1 << 16);
    for (int i = 0; i < 16; i++) K[i] = _mm256_set1_epi32(i * 7 + 1);
    for (int i = 0; i < 128; i++) P[i] = _mm256_set1_epi32(i), J[i] = _mm256_set1_epi8((char)(i % 24));
    for (int i = 0; i < R; i++) W[i] = _mm256_set1_epi64x(i);
    double ghz = core_ghz(), bs = 1e9, br = 1e9;
    for (int t = 0; t < 2000; t++) {
        double a = now();
        selloop(buf, len, _mm256_set1_epi64x(t), _mm256_set1_epi64x(3));
        double b = now();
        if (b - a < bs) bs = b - a;
        a = now();
        r1loop(buf, len, _mm256_set1_epi8(12), _mm256_set1_epi64x(t), _mm256_set1_epi64x(5));
        b = now();
        if (b - a < br) br = b - a;
    }
    sink = buf[5];
    printf("AES-256 %zu B: selector loop %.2f GB/s, first-round table %.2f GB/s (%.3fx) at %.2f GHz\n",
           len, len / bs / 1e9, len / br / 1e9, bs / br, ghz);
    return 0;
}
