/* One CTR call through EVP at a time, on the aesx provider and on OpenSSL's default provider
 * alternated call by call, with the caches and the core in the state a call finds inside a
 * transfer rather than in a tight loop: after the thread has slept (ssh and sshd wait on
 * their sockets between packets) or after other work has evicted the caches (the kernel's
 * socket copies). ssh-packets.c is the hot floor; this shows what a cold call adds.
 *
 *   cc -O2 -o /tmp/cold-calls crates/aesx-provider/bench/cold-calls.c -lcrypto
 *   OPENSSL_MODULES=DIR /tmp/cold-calls [ALG] [BYTES]
 *
 * (DIR holds the provider module as aesx.so; `run.sh packets` sets that up.) ALG is a CTR
 * cipher (default AES-256-CTR), BYTES the call (default 32784, OpenSSH's CTR packet), buffer
 * to buffer with both pointers 4 bytes past a 64-byte boundary (where OpenSSH's are: the
 * 4-byte length field comes first). Each condition times 2000 calls per provider, each call
 * the first after its condition; prints the best and median ns a call and the ratios.
 * Measures only: no test depends on it. */
#define _DEFAULT_SOURCE
#include <openssl/evp.h>
#include <openssl/provider.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

enum { CALLS = 2000, EVICT = 8 << 20 };

int main(int argc, char **argv) {
    const char *alg = argc > 1 ? argv[1] : "AES-256-CTR";
    int len = argc > 2 ? atoi(argv[2]) : 32784;
    if (len <= 0 || len > (1 << 20)) {
        fprintf(stderr, "BYTES: 1 to 1048576\n");
        return 2;
    }
    if (!OSSL_PROVIDER_load(NULL, "default") || !OSSL_PROVIDER_load(NULL, "aesx")) {
        fprintf(stderr, "cannot load the providers (OPENSSL_MODULES?)\n");
        return 1;
    }
    const char *props[2] = {"provider=aesx", "provider=default"};
    EVP_CIPHER_CTX *x[2];
    unsigned char key[32] = {1}, iv[16] = {2};
    for (int p = 0; p < 2; p++) {
        EVP_CIPHER *c = EVP_CIPHER_fetch(NULL, alg, props[p]);
        x[p] = EVP_CIPHER_CTX_new();
        if (!c || !x[p] || !EVP_CipherInit(x[p], c, key, iv, 1)) {
            fprintf(stderr, "cannot set up %s on %s\n", alg, props[p]);
            return 1;
        }
        EVP_CIPHER_free(c);
    }
    unsigned char *src = aligned_alloc(64, (1 << 20) + 64);
    unsigned char *dst = aligned_alloc(64, (1 << 20) + 64);
    unsigned char *other = malloc(4 * (size_t)EVICT);
    double *t[2] = {malloc(sizeof(double) * CALLS), malloc(sizeof(double) * CALLS)};
    if (!src || !dst || !other || !t[0] || !t[1]) return 1;
    memset(src, 7, (1 << 20) + 64);
    memset(dst, 0, (1 << 20) + 64);
    memset(other, 1, 4 * (size_t)EVICT);
    const char *names[4] = {"hot (back to back)", "after a 50 us sleep", "after a 1 ms sleep",
                            "after reading 8 MiB"};
    printf("%s, %d-byte calls, ns a call (best / median of %d; providers alternated):\n", alg,
           len, CALLS);
    for (int mode = 0; mode < 4; mode++) {
        for (int i = 0; i < CALLS; i++) {
            for (int k = 0; k < 2; k++) {
                int p = (i & 1) ? 1 - k : k;
                if (mode == 1) usleep(50);
                if (mode == 2) usleep(1000);
                if (mode == 3) {
                    volatile unsigned char sink = 0;
                    const unsigned char *o = other + (size_t)(i % 4) * EVICT;
                    for (size_t j = 0; j < EVICT; j += 64) sink ^= o[j];
                }
                double a = now_ns();
                if (EVP_Cipher(x[p], dst + 4, src + 4, (unsigned)len) <= 0) {
                    fprintf(stderr, "EVP_Cipher failed\n");
                    return 1;
                }
                t[p][i] = now_ns() - a;
            }
        }
        double best[2], med[2];
        for (int p = 0; p < 2; p++) {
            qsort(t[p], CALLS, sizeof(double), by_value);
            best[p] = t[p][0];
            med[p] = t[p][CALLS / 2];
        }
        printf("  %-20s aesx %5.0f / %5.0f | default %5.0f / %5.0f | aesx / default: best %.2f, "
               "median %.2f\n",
               names[mode], best[0], med[0], best[1], med[1], best[0] / best[1], med[0] / med[1]);
    }
    return 0;
}
