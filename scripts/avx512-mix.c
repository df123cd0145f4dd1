/* avx512-mix: what each vector instruction costs next to zmm VAESENC on this CPU.
 *
 * GCM runs AES rounds and GHASH (carry-less multiplies, XORs, byte shuffles) in one loop, so
 * its speed depends on which of them compete for the same execution units, not on each one's
 * throughput alone. Each test below is a loop of 10 independent zmm VAESENC (10 cycles a
 * loop on a CPU that runs one zmm VAESENC a cycle) plus a few other instructions on their own
 * registers; the cycles a loop takes beyond the VAESENC-only loop are what those instructions
 * cost inside AES-bound code. The last tests run a GCM-like mix (40 VAESENC, 18 VPCLMULQDQ,
 * 8 VPSHUFB, 20 XOR a loop) in 4 and 8 AES chains.
 *
 * Cycles come from CLOCK_MONOTONIC and the core clock measured by a chain of dependent adds
 * (one a cycle), so no cycle counter is needed. Best of 300 trials.
 *
 *   cc -O2 -o avx512-mix scripts/avx512-mix.c && ./avx512-mix
 *
 * Needs AVX-512F/BW/VL, VAES and VPCLMULQDQ (vaes512 machines). Measured on the Zen 4 guest
 * (README, "AES-GCM performance"): VAESENC zmm 1 a cycle; each zmm VPCLMULQDQ adds 1 cycle,
 * VPSHUFB 0.56-0.58, VALIGNQ / VSHUFI64X2 0.6, VEXTRACTI64X4 0.25; VPXORQ, VPTERNLOGQ,
 * VPSHUFD, VPADDD and loads nothing up to about one a cycle (one run put 8 loads at 2.3).
 * On the Intel AVX-512 guest of session 19 (family 6 model 167, Sapphire / Emerald Rapids
 * class): VAESENC zmm 1 a cycle, latency 3; VPCLMULQDQ, VPSHUFB, VPSHUFD, VPTERNLOGQ, VPADDD,
 * VEXTRACTI64X4 and 8 VPXORQ add nothing, 16 VPXORQ add 3 cycles: every 512-bit instruction
 * issues on one of two ports, VAESENC on one of them only, so the GCM mix (86 instructions)
 * takes 41.5-42.5 cycles, about half its instruction count (README, "AES-GCM on Intel").
 */
#include <stdio.h>
#include <time.h>

#include "clock.h"

#define CLOB "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", \
             "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "xmm16", "xmm17", "xmm18", \
             "xmm19", "xmm20", "xmm21", "xmm22", "xmm23", "xmm24", "xmm25", "xmm26", "xmm27"
#define A(i) "vaesenc %%zmm31, %%zmm" #i ", %%zmm" #i "\n"
#define A10 A(0) A(1) A(2) A(3) A(4) A(5) A(6) A(7) A(8) A(9)
#define R4(op) op(20) op(21) op(22) op(23)
#define XOR(i) "vpxorq %%zmm29, %%zmm" #i ", %%zmm" #i "\n"
#define TERN(i) "vpternlogq $0x96, %%zmm29, %%zmm28, %%zmm" #i "\n"
#define SHUFB(i) "vpshufb %%zmm29, %%zmm" #i ", %%zmm" #i "\n"
#define PSHUFD(i) "vpshufd $0x4e, %%zmm" #i ", %%zmm" #i "\n"
#define ADDD(i) "vpaddd %%zmm29, %%zmm" #i ", %%zmm" #i "\n"
#define CLM(i) "vpclmulqdq $0x11, %%zmm30, %%zmm" #i ", %%zmm" #i "\n"
#define EXT(i) "vextracti64x4 $1, %%zmm" #i ", %%ymm24\n"
#define LD(i) "vmovdqu64 (%%rsp), %%zmm" #i "\n"
#define ALIGNR(i) "valignq $2, %%zmm29, %%zmm" #i ", %%zmm" #i "\n"
#define SHUFI(i) "vshufi64x2 $0x4e, %%zmm29, %%zmm" #i ", %%zmm" #i "\n"
/* The GCM-like mix: 4 chains x 10 rounds or 8 chains x 5, with the same other work. */
#define C(i) CLM(i)
#define X(i) XOR(i)
#define S(i) SHUFB(i)
#define Q4 A(0) A(1) A(2) A(3)
#define Q8 A(0) A(1) A(2) A(3) A(4) A(5) A(6) A(7)
#define X15 X(20) X(21) X(22) X(23) X(24) X(20) X(21) X(22) X(23) X(24) X(20) X(21) X(22) X(23) X(24)
#define MIX4 Q4 C(16) X(20) Q4 C(17) X(21) Q4 C(18) X(22) S(25) Q4 C(19) X(23) S(26) \
    Q4 C(16) X(24) S(27) Q4 C(17) C(18) S(25) Q4 C(19) C(16) S(26) Q4 C(17) C(18) S(27) \
    Q4 C(19) C(16) S(25) Q4 C(17) C(18) S(26) X15
#define MIX8 Q8 C(16) C(17) X(20) X(21) S(25) Q8 C(18) C(19) C(16) C(17) X(22) X(23) S(26) \
    Q8 C(18) C(19) C(16) C(17) X(24) S(27) Q8 C(18) C(19) C(16) C(17) S(25) \
    Q8 C(18) C(19) C(16) C(17) S(26) S(27) S(25) X15

#define LOOP(name, body)                                                                    \
    __attribute__((target("avx512f,avx512vl,avx512bw,vaes,vpclmulqdq"))) static double    \
    name(long n) {                                                                          \
        double t = now();                                                                   \
        __asm__ volatile("vpxord %%zmm31,%%zmm31,%%zmm31\nvpxord %%zmm30,%%zmm30,%%zmm30\n" \
                         "1:\n" body "dec %0\njnz 1b\nvzeroupper\n"                          \
                         : "+r"(n) : : CLOB, "memory");                                     \
        return now() - t;                                                                   \
    }
LOOP(base, A10)
LOOP(xor8, A10 R4(XOR) R4(XOR))
LOOP(xor16, A10 R4(XOR) R4(XOR) R4(XOR) R4(XOR))
LOOP(tern8, A10 R4(TERN) R4(TERN))
LOOP(shufb8, A10 R4(SHUFB) R4(SHUFB))
LOOP(pshufd8, A10 R4(PSHUFD) R4(PSHUFD))
LOOP(addd8, A10 R4(ADDD) R4(ADDD))
LOOP(clm4, A10 R4(CLM))
LOOP(ext8, A10 R4(EXT) R4(EXT))
LOOP(ld8, A10 R4(LD) R4(LD))
LOOP(alignr8, A10 R4(ALIGNR) R4(ALIGNR))
LOOP(shufi8, A10 R4(SHUFI) R4(SHUFI))
LOOP(clmonly, R4(CLM) R4(CLM))
LOOP(mix4, MIX4)
LOOP(mix8, MIX8)

static double best(double (*f)(long), long n) {
    double b = 1e30;
    for (int i = 0; i < 300; i++) {
        double s = f(n);
        if (s < b) b = s;
    }
    return b;
}

int main(void) {
    const long n = 20000;
    double ghz = core_ghz();
    printf("core clock ~%.2f GHz (dependent adds)\n", ghz);
    struct { const char *name; double (*f)(long); } t[] = {
        {"10 VAESENC zmm", base},       {"  + 8 VPXORQ", xor8},
        {"  + 16 VPXORQ", xor16},       {"  + 8 VPTERNLOGQ", tern8},
        {"  + 8 VPSHUFB", shufb8},      {"  + 8 VPSHUFD", pshufd8},
        {"  + 8 VPADDD", addd8},        {"  + 4 VPCLMULQDQ", clm4},
        {"  + 8 VEXTRACTI64X4", ext8},  {"  + 8 loads", ld8},
        {"  + 8 VALIGNQ", alignr8},     {"  + 8 VSHUFI64X2", shufi8},
        {"8 VPCLMULQDQ zmm alone", clmonly},
        {"GCM mix, 4 AES chains", mix4}, {"GCM mix, 8 AES chains", mix8},
    };
    for (unsigned i = 0; i < sizeof t / sizeof t[0]; i++)
        printf("%-26s %6.2f cycles a loop\n", t[i].name, best(t[i].f, n) * ghz * 1e9 / n);
    return 0;
}
