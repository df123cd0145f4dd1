/* Driver for run.sh: calls every k_VARIANT on a 16 KiB buffer (64 iterations), the variants
 * interleaved, best of 400 trials of 20 calls each. The data, keys and powers are arbitrary:
 * only the timing means anything (several variants leave instructions out). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef void kfn(long n, const void *rk, const void *kend, void *data, const void *pow,
                 const void *kara, const void *consts);
#define X(name) extern kfn k_##name;
VARIANTS
#undef X

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

int main(int argc, char **argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 10;
    if (rounds != 10 && rounds != 12 && rounds != 14) return 2;
    static uint8_t rk[240] __attribute__((aligned(64)));
    static uint8_t pow[20 * 32] __attribute__((aligned(64))), kara[20 * 32] __attribute__((aligned(64)));
    /* constants as gcm_ymm.rs lays them out (mask, lane offsets, step, reduction constant),
       then 256 bytes of counter slots at +512 */
    static uint32_t c[1024] __attribute__((aligned(64)));
    static uint8_t buf[16384 + 8192] __attribute__((aligned(64)));
    for (int i = 0; i < 240; i++) rk[i] = i * 7 + 1;
    for (int i = 0; i < 640; i++) { pow[i] = i * 13 + 5; kara[i] = i * 3 + 9; }
    for (int b = 0; b < 32; b++) c[b / 4] |= (uint32_t)(15 - b % 16) << (8 * (b % 4));
    for (int i = 0; i < 8; i++) { c[8 + 8 * i] = 2 * i; c[8 + 8 * i + 4] = 2 * i; }
    c[72] = 16; c[76] = 16; c[81] = 0xc2000000;
    const void *kend = rk + 16 * (rounds - 8);
    kfn *fs[] = {
#define X(name) k_##name,
VARIANTS
#undef X
    };
    const char *ns[] = {
#define X(name) #name,
VARIANTS
#undef X
    };
    int nv = sizeof fs / sizeof fs[0], ref = -1;
    double best[64];
    for (int i = 0; i < nv; i++) {
        best[i] = 1e30;
        if (!strcmp(ns[i], "aes_pure")) ref = i;
    }
    for (int t = 0; t < 400; t++)
        for (int i = 0; i < nv; i++) {
            double t0 = now();
            for (int r = 0; r < 20; r++) fs[i](64, rk, kend, buf, pow, kara, c);
            double d = (now() - t0) / 20;
            if (d < best[i]) best[i] = d;
        }
    /* The clock: aes_pure's 8 * rounds VAESENC take 4 * rounds cycles (2 a cycle). */
    double ghz = ref >= 0 ? 64 * 4.0 * rounds / best[ref] : 0;
    printf("AES-%d, 16 KiB; clock from aes_pure: %.2f GHz\n", rounds == 10 ? 128 : rounds == 12 ? 192 : 256, ghz);
    for (int i = 0; i < nv; i++)
        printf("%-12s %8.1f ns  %6.2f GB/s  %6.1f cycles/iteration\n", ns[i], best[i],
               16384 / best[i], best[i] / 64 * ghz);
    return 0;
}
