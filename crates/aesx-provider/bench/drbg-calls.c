/* The calls OpenSSL's CTR-DRBG makes on its AES-256-CTR context, timed on the aesx provider
 * and on the default provider in one process, alternated (best of 300 trials of 20000 calls):
 * a new key, a new IV, then one update of BYTES (the DRBG re-keys before each 16-48 byte
 * update; under the shipped configuration aesx serves OpenSSL's random generator).
 *
 *   cc -O2 -o /tmp/drbg-calls crates/aesx-provider/bench/drbg-calls.c -lcrypto
 *   OPENSSL_MODULES=DIR /tmp/drbg-calls [BYTES]     (default 48; DIR as for ssh-packets.c)
 *
 * Measures only: the DRBG's output itself is checked bit for bit in tests/differential.rs. */
#include <openssl/evp.h>
#include <openssl/provider.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
    int len = argc > 1 ? atoi(argv[1]) : 48;
    if (len < 1 || len > 64) { fprintf(stderr, "BYTES: 1 to 64\n"); return 2; }
    OSSL_LIB_CTX *la = OSSL_LIB_CTX_new(), *ld = OSSL_LIB_CTX_new();
    if (!OSSL_PROVIDER_load(la, "default") || !OSSL_PROVIDER_load(la, "aesx") ||
        !OSSL_PROVIDER_load(ld, "default")) {
        fprintf(stderr, "cannot load the providers (OPENSSL_MODULES must hold aesx.so)\n");
        return 1;
    }
    EVP_CIPHER *c[2] = {EVP_CIPHER_fetch(la, "AES-256-CTR", "provider=aesx"),
                        EVP_CIPHER_fetch(ld, "AES-256-CTR", NULL)};
    unsigned char key[32] = {1}, iv[16] = {2}, buf[64] = {0};
    int outl;
    EVP_CIPHER_CTX *x[2];
    for (int w = 0; w < 2; w++) {
        x[w] = EVP_CIPHER_CTX_new();
        if (!c[w] || !x[w] || !EVP_CipherInit_ex(x[w], c[w], NULL, key, NULL, 1)) {
            fprintf(stderr, "setup failed\n");
            return 1;
        }
    }
    double best[2] = {1e9, 1e9};
    for (int t = 0; t < 300; t++)
        for (int w = 0; w < 2; w++) {
            double s = now();
            for (int r = 0; r < 20000; r++) {
                key[0] = (unsigned char)r;
                iv[15] = (unsigned char)(7 * r), iv[14] = (unsigned char)(r >> 5);
                if (!EVP_CipherInit_ex(x[w], NULL, NULL, key, NULL, -1) ||
                    !EVP_CipherInit_ex(x[w], NULL, NULL, NULL, iv, -1) ||
                    !EVP_CipherUpdate(x[w], buf, &outl, buf, len)) {
                    fprintf(stderr, "call failed\n");
                    return 1;
                }
            }
            double d = (now() - s) / 20000;
            if (d < best[w]) best[w] = d;
        }
    printf("AES-256-CTR key + IV + %d-byte update, ns per call (best of 300 trials): aesx %.1f, "
           "default %.1f, aesx / default %.2f\n", len, best[0] * 1e9, best[1] * 1e9, best[0] / best[1]);
    return 0;
}
