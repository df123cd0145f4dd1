/*
 * ns per block through libaesx's C entry points, AES-128 and AES-256 ECB encryption:
 *   one     aesniEncryptBlock, one block per call, same schedule every call (cache hits)
 *   one-new aesniEncryptBlock alternating two schedules, so every call rebuilds the schedule
 *   one-dec aesniDecryptBlock, one block per call (cache hits)
 *   bulk    aesniEncryptBlocks, all blocks in one call
 *   api     aesx_ecb_encrypt on an aesx_cipher, all blocks in one call
 * for 1 .. 65536 blocks. Trials of every variant are interleaved and the best is kept (the
 * machine is noisy). Usage: bench [BACKEND] [TRIALS]; built and run by bench/run.sh.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "aesx.h"

typedef struct {
    uint32_t init[4], mid[4 * 13], fin[4];
} sched;

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return 1e9 * (double)t.tv_sec + (double)t.tv_nsec;
}

enum { ONE, ONE_NEW, ONE_DEC, BULK, API, NVAR };
static const char *names[NVAR] = {"one", "one-new", "one-dec", "bulk", "api"};

static size_t k;
static sched e[2], d;
static aesx_cipher *cipher;
static uint8_t *buf;

static void run(int v, size_t n) {
    switch (v) {
    case ONE:
        for (size_t i = 0; i < n; i++) aesniEncryptBlock(k, e[0].init, e[0].mid, e[0].fin, buf + 16 * i, buf + 16 * i);
        break;
    case ONE_NEW:
        for (size_t i = 0; i < n; i++) {
            static unsigned flip;
            const sched *s = &e[flip++ & 1];
            aesniEncryptBlock(k, s->init, s->mid, s->fin, buf + 16 * i, buf + 16 * i);
        }
        break;
    case ONE_DEC:
        for (size_t i = 0; i < n; i++) aesniDecryptBlock(k, d.init, d.mid, d.fin, buf + 16 * i, buf + 16 * i);
        break;
    case BULK:
        aesniEncryptBlocks(k, n, e[0].init, e[0].mid, e[0].fin, buf, buf);
        break;
    case API:
        if (aesx_ecb_encrypt(cipher, buf, buf, 16 * n) != AESX_OK) abort();
        break;
    }
}

int main(int argc, char **argv) {
    aesx_backend b = AESX_BACKEND_AUTO;
    if (argc > 1 && (aesx_backend_from_name(argv[1], &b) != AESX_OK || aesx_set_default_backend(b) != AESX_OK)) {
        fprintf(stderr, "backend %s unknown or unavailable\n", argv[1]);
        return 2;
    }
    int trials = argc > 2 ? atoi(argv[2]) : 30;
    const char *bn = "?";
    aesx_default_backend(&b);
    aesx_backend_name(b, &bn);
    enum { MAXN = 65536 };
    buf = calloc(MAXN, 16);
    uint8_t key[32];
    for (int i = 0; i < 32; i++) key[i] = (uint8_t)(i * 13 + 1);
    for (size_t kw = 4; kw <= 8; kw += 4) {
        k = kw;
        uint8_t key2[32];
        memcpy(key2, key, 32);
        key2[0] ^= 1;
        if (k == 4) {
            aesniExpandEncryptDecrypt128(key, e[0].init, e[0].mid, e[0].fin, d.init, d.mid, d.fin);
            aesniExpandEncrypt128(key2, e[1].init, e[1].mid, e[1].fin);
        } else {
            aesniExpandEncryptDecrypt256(key, e[0].init, e[0].mid, e[0].fin, d.init, d.mid, d.fin);
            aesniExpandEncrypt256(key2, e[1].init, e[1].mid, e[1].fin);
        }
        if (aesx_cipher_new(key, 4 * k, AESX_BACKEND_AUTO, &cipher) != AESX_OK) return 1;
        printf("\nAES-%zu, backend %s, ns per block (best of %d interleaved trials)\n", 32 * k, bn, trials);
        printf("%8s", "blocks");
        for (int v = 0; v < NVAR; v++) printf(" %9s", names[v]);
        printf("\n");
        for (size_t n = 1; n <= MAXN; n *= 4) {
            double best[NVAR];
            /* Each trial covers about 64 Ki blocks' worth of calls. */
            size_t reps = MAXN / n;
            if (reps > 4096) reps = 4096;
            for (int v = 0; v < NVAR; v++) best[v] = 1e30;
            for (int t = 0; t < trials; t++)
                for (int v = 0; v < NVAR; v++) {
                    double t0 = now_ns();
                    for (size_t r = 0; r < reps; r++) run(v, n);
                    double dt = (now_ns() - t0) / (double)(reps * n);
                    if (dt < best[v]) best[v] = dt;
                }
            printf("%8zu", n);
            for (int v = 0; v < NVAR; v++) printf(" %9.2f", best[v]);
            printf("\n");
        }
        aesx_cipher_free(cipher);
    }
    free(buf);
    return 0;
}
