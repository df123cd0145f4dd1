/* OpenSSH's per-packet cipher calls through EVP, timed on the aesx provider and on OpenSSL's
 * default provider in one process, alternated trial by trial (best trial kept): what the scp
 * measure of run.sh (`perf`) would read if the machine did nothing but the cipher, with the
 * data and code hot in cache.
 *
 *   cc -O2 -o /tmp/ssh-packets crates/aesx-provider/bench/ssh-packets.c -lcrypto
 *   OPENSSL_MODULES=DIR /tmp/ssh-packets ALG [BYTES]
 *
 * (DIR holds the provider module as aesx.so, e.g. a symlink to
 * target/release/libaesx_provider.so; `run.sh packets` sets that up.)
 * ALG is AES-128-GCM, AES-256-GCM, AES-128-CTR or AES-256-CTR; BYTES the packet's cipher
 * input (default 32768 for GCM, 32784 for CTR: OpenSSH's packets during an scp). The calls
 * are those of OpenSSH 9.2's cipher.c:
 *   GCM  setup: init with the IV only, EVP_CTRL_GCM_SET_IV_FIXED with length -1, init with the
 *        key only; per packet: EVP_CTRL_GCM_IV_GEN (1 byte), on decryption
 *        EVP_CTRL_GCM_SET_TAG, then EVP_Cipher of the 4-byte length as AAD (NULL output), of
 *        the payload, and (NULL, NULL, 0) to finish; on encryption EVP_CTRL_GCM_GET_TAG;
 *   CTR  encryption: one EVP_Cipher of the packet; decryption: the first 16 bytes (OpenSSH
 *        reads the length from them), then the rest.
 * Prints ns per packet for sealing and for opening on each provider and the ratios. Exits
 * non-zero if a packet fails (a tag that does not verify included). Measures only: no test
 * depends on it. */
#include <openssl/evp.h>
#include <openssl/provider.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static int gcm;

static EVP_CIPHER_CTX *setup(EVP_CIPHER *c, int enc) {
    unsigned char key[32] = {1}, iv[16] = {2};
    EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
    if (!x) return NULL;
    if (!gcm) return EVP_CipherInit(x, c, key, iv, enc) ? x : NULL;
    if (!EVP_CipherInit(x, c, NULL, iv, enc) ||
        !EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_GCM_SET_IV_FIXED, -1, iv) ||
        !EVP_CipherInit(x, NULL, key, NULL, -1))
        return NULL;
    return x;
}

/* One packet: `len` bytes from src to dst (GCM: 4 bytes of AAD first, then len bytes). */
static int packet(EVP_CIPHER_CTX *x, int enc, unsigned char *dst, const unsigned char *src,
                  int len, unsigned char *tag) {
    if (!gcm) {
        if (enc) return EVP_Cipher(x, dst, src, len) < 0;
        return EVP_Cipher(x, dst, src, 16) < 0 ||
               EVP_Cipher(x, dst + 16, src + 16, len - 16) < 0;
    }
    unsigned char lastiv[1];
    if (!EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_GCM_IV_GEN, 1, lastiv)) return 1;
    if (!enc && !EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_GCM_SET_TAG, 16, tag)) return 1;
    if (EVP_Cipher(x, NULL, src, 4) < 0) return 1;
    if (EVP_Cipher(x, dst + 4, src + 4, len) < 0) return 1;
    if (EVP_Cipher(x, NULL, NULL, 0) < 0) return 1;
    if (enc && !EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_GCM_GET_TAG, 16, tag)) return 1;
    return 0;
}

int main(int argc, char **argv) {
    const char *alg = argc > 1 ? argv[1] : "AES-256-GCM";
    gcm = strstr(alg, "GCM") != NULL;
    int size = argc > 2 ? atoi(argv[2]) : gcm ? 32768 : 32784;
    int trials = getenv("TRIALS") ? atoi(getenv("TRIALS")) : 300;
    if (size < 16) { fprintf(stderr, "BYTES must be at least 16\n"); return 2; }
    OSSL_LIB_CTX *la = OSSL_LIB_CTX_new(), *ld = OSSL_LIB_CTX_new();
    if (!OSSL_PROVIDER_load(la, "default") || !OSSL_PROVIDER_load(la, "aesx") ||
        !OSSL_PROVIDER_load(ld, "default")) {
        fprintf(stderr, "cannot load the providers (OPENSSL_MODULES must hold aesx.so)\n");
        return 1;
    }
    EVP_CIPHER *c[2] = {EVP_CIPHER_fetch(la, alg, "provider=aesx"), EVP_CIPHER_fetch(ld, alg, NULL)};
    if (!c[0] || !c[1]) { fprintf(stderr, "cannot fetch %s\n", alg); return 1; }
    int reps = (1 << 21) / (size + 64) + 1;
    unsigned char *src = aligned_alloc(64, size + 64), *pt = aligned_alloc(64, size + 64);
    unsigned char *ct = aligned_alloc(64, (size_t)reps * (size + 64)), *tags = malloc(16 * reps);
    if (!src || !pt || !ct || !tags) return 1;
    memset(src, 5, size + 64);
    /* Sealing is timed on `e`. Opening is timed on `d`, over packets sealed (untimed) by
     * `e2`, whose IV counter runs in step with `d`'s, so every tag verifies. */
    EVP_CIPHER_CTX *e[2], *e2[2], *d[2];
    for (int w = 0; w < 2; w++) {
        e[w] = setup(c[w], 1), e2[w] = setup(c[w], 1), d[w] = setup(c[w], 0);
        if (!e[w] || !e2[w] || !d[w]) { fprintf(stderr, "setup failed\n"); return 1; }
    }
    double best[2][2] = {{1e9, 1e9}, {1e9, 1e9}};
    for (int t = 0; t < trials; t++)
        for (int w = 0; w < 2; w++) {
            double s = now();
            for (int r = 0; r < reps; r++)
                if (packet(e[w], 1, ct, src, size, tags)) { fprintf(stderr, "seal failed\n"); return 1; }
            double seal = (now() - s) / reps;
            for (int r = 0; r < reps; r++) {
                unsigned char *k = ct + (size_t)r * (size + 64);
                memcpy(k, src, 4); /* GCM: the AAD the opener reads is the sealer's */
                if (packet(e2[w], 1, k, src, size, tags + 16 * r)) { fprintf(stderr, "seal failed\n"); return 1; }
            }
            s = now();
            for (int r = 0; r < reps; r++)
                if (packet(d[w], 0, pt, ct + (size_t)r * (size + 64), size, tags + 16 * r)) {
                    fprintf(stderr, "open failed\n");
                    return 1;
                }
            double open = (now() - s) / reps;
            if (seal < best[w][0]) best[w][0] = seal;
            if (open < best[w][1]) best[w][1] = open;
        }
    if (memcmp(pt + (gcm ? 4 : 0), src + (gcm ? 4 : 0), size)) { fprintf(stderr, "round trip differs\n"); return 1; }
    printf("%s, %d-byte packets, ns per packet (best of %d trials of %d packets): aesx seal %.0f open %.0f | "
           "default seal %.0f open %.0f | aesx / default: seal %.2f, open %.2f\n",
           alg, size, trials, reps, best[0][0] * 1e9, best[0][1] * 1e9, best[1][0] * 1e9,
           best[1][1] * 1e9, best[0][0] / best[1][0], best[0][1] / best[1][1]);
    return 0;
}
