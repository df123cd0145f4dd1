/* clock: the core clock of this vCPU right now, in GHz, from a chain of dependent register
 * additions (one a cycle) timed with CLOCK_MONOTONIC; no cycle counter needed. Best of 200
 * trials of 2 million additions (about 0.1 s in all).
 *
 *   cc -O2 -o clock scripts/clock.c && ./clock
 *
 * `scripts/fugue-spread.sh` runs it around each process, so that a process that ran at a
 * lower clock (the VM's host changing frequency) can be told from one whose code ran slower.
 * The addend is a register: Golden Cove (Sapphire / Emerald Rapids) folds chains of additions
 * of an immediate at rename and would read several times its clock.
 */
#include <stdio.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(void) {
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
    printf("%.4f\n", 20.0 * n / best / 1e9);
    return 0;
}
