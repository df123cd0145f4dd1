/* clock.h: time and the core clock for the C labs in scripts/ (included by clock.c,
 * avx512-mix.c, fugue-gfni-chain.c, fugue-smix-lab.c; each still builds with one `cc` of its
 * own file).
 *
 * core_ghz() times a chain of dependent register additions (one a cycle) with
 * CLOCK_MONOTONIC: best of 200 trials of 2 million additions, about 0.1 s. The addend is a
 * register: Golden Cove (Sapphire / Emerald Rapids) folds chains of additions of an immediate
 * at rename, and two labs that added an immediate read 23 GHz there.
 */
#ifndef AESX_SCRIPTS_CLOCK_H
#define AESX_SCRIPTS_CLOCK_H

#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static double core_ghz(void) {
    const long n = 100000; /* loops of 20 additions */
    double best = 1e30;
    for (int i = 0; i < 200; i++) {
        long k = n;
        double t = now();
        __asm__ volatile("mov $1,%%ecx\n1:\n.rept 20\nadd %%rcx,%%rax\n.endr\ndec %0\njnz 1b\n"
                         : "+r"(k) : : "rax", "rcx");
        t = now() - t;
        if (t < best) best = t;
    }
    return 20.0 * n / best / 1e9;
}

#endif
