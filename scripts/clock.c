/* clock: the core clock of this vCPU right now, in GHz, from a chain of dependent register
 * additions (one a cycle) timed with CLOCK_MONOTONIC (`clock.h`); no cycle counter needed. Best of 200
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

#include "clock.h"

int main(void) {
    printf("%.4f\n", core_ghz());
    return 0;
}
