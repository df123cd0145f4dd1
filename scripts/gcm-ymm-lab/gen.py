#!/usr/bin/env python3
"""Writes one variant of the vaes256 GCM main loop (crates/aesx/src/backend/vaes/gcm_ymm.rs)
as a stand-alone assembly function k_NAME in k_NAME.S, for timing instruction classes.

    gen.py NAME [ctr=vec|slots|whitened] [drop=CLASS,...] [scper=N] [rounds=...]

ctr=vec       counters as gcm_ymm.rs makes them: VPADDD + VPSHUFB + VPXOR per register
ctr=slots     (the default; tried, not kept: see gcm_ymm.rs) scalar code writes the next
              iteration's counter blocks (big-endian low words) into a 256-byte area; round 0
              is VPXOR key, [slot]
ctr=whitened  the slots already XORed with round key 0 (round 0 is a load)
drop=         instruction classes left out (timing only, the output is wrong):
              ctrshuf datashuf kshuf xor (accumulating XORs) reduce store aesonly clmulonly
              pure (nothing but the AES rounds: the clock reference)
scper=N       scalar counter blocks written after each GHASH round (default 3)

Registers: rdi iterations, rsi round keys, rdx key + 16 (rounds - 8), rcx data (hashed and
written in place, like open), r8 powers, r9 Karatsuba halves, r10 constants, r12 slots.
"""
import sys

name = sys.argv[1]
o = dict(a.split("=", 1) for a in sys.argv[2:])
ctr = o.get("ctr", "slots")
drop = set(filter(None, o.get("drop", "").split(",")))
scper = int(o.get("scper", "3"))
L = []
e = L.append


def keep(cls):
    return cls not in drop


e("2:")
e("vbroadcasti128 ymm8, xmmword ptr [rsi]")
for i in range(8):
    if ctr == "vec":
        e(f"vpaddd ymm{i}, ymm14, ymmword ptr [r10 + {32 + 32 * i}]")
        if keep("ctrshuf"):
            e(f"vpshufb ymm{i}, ymm{i}, ymmword ptr [r10]")
        e(f"vpxor ymm{i}, ymm{i}, ymm8")
    elif ctr == "slots":
        e(f"vpxor ymm{i}, ymm8, ymmword ptr [r12 + {32 * i}]")
    else:
        e(f"vmovdqu ymm{i}, ymmword ptr [r12 + {32 * i}]")
if ctr == "vec":
    e("vpaddd ymm14, ymm14, ymmword ptr [r10 + 288]")
sc = []
if ctr != "vec":
    for b in range(16):
        blk = [f"lea r14d, [r13 + {b + 16}]", "bswap r14d"]
        if ctr == "whitened":
            blk.append("xor r14d, r15d")
        blk.append(f"mov dword ptr [r12 + {16 * b + 12}], r14d")
        sc.append(blk)
    sc.append(["add r13d, 16"])
e("lea rax, [rsi + 16]")
e("cmp rax, rdx")
e("je 4f")
e("3:")
e("vbroadcasti128 ymm8, xmmword ptr [rax]")
for i in range(8):
    e(f"vaesenc ymm{i}, ymm{i}, ymm8")
e("add rax, 16")
e("cmp rax, rdx")
e("jne 3b")
e("4:")
for st in range(8):
    g = []
    if "aesonly" not in drop:
        g.append(f"vmovdqu ymm12, ymmword ptr [rcx + {32 * st}]")
        if keep("datashuf"):
            g.append("vpshufb ymm12, ymm12, ymmword ptr [r10]")
        if st == 0:
            g.append("vpxor ymm12, ymm12, ymm15")
        d0 = "ymm9" if st == 0 else "ymm13"
        g.append(f"vpclmulqdq {d0}, ymm12, ymmword ptr [r8 + {32 * st}], 0x00")
        if st and keep("xor"):
            g.append("vpxor ymm9, ymm9, ymm13")
        d1 = "ymm10" if st == 0 else "ymm13"
        g.append(f"vpclmulqdq {d1}, ymm12, ymmword ptr [r8 + {32 * st}], 0x11")
        if st and keep("xor"):
            g.append("vpxor ymm10, ymm10, ymm13")
        if keep("kshuf"):
            g.append("vpshufd ymm13, ymm12, 0x4e")
        if keep("xor"):
            g.append("vpxor ymm12, ymm12, ymm13")
        d2 = "ymm11" if st == 0 else "ymm12"
        g.append(f"vpclmulqdq {d2}, ymm12, ymmword ptr [r9 + {32 * st}], 0x00")
        if st and keep("xor"):
            g.append("vpxor ymm11, ymm11, ymm12")
    if "clmulonly" in drop:
        g = [x for x in g if x.startswith("vpclmulqdq")]
    e(f"vbroadcasti128 ymm8, xmmword ptr [rdx + {16 * st}]")
    for i in range(8):
        e(f"vaesenc ymm{i}, ymm{i}, ymm8")
        if g:
            e(g.pop(0))
    L.extend(g)
    for _ in range(scper):
        if sc:
            L.extend(sc.pop(0))
red = []
if keep("reduce") and "aesonly" not in drop and "clmulonly" not in drop:
    red = [
        "vextracti128 xmm12, ymm9, 1", "vpxor xmm9, xmm9, xmm12",
        "vextracti128 xmm12, ymm10, 1", "vpxor xmm10, xmm10, xmm12",
        "vextracti128 xmm12, ymm11, 1", "vpxor xmm11, xmm11, xmm12",
        "vpxor xmm11, xmm11, xmm9", "vpxor xmm11, xmm11, xmm10",
        "vpclmulqdq xmm12, xmm9, xmmword ptr [r10 + 320], 0x00", "vpshufd xmm13, xmm9, 0x4e",
        "vpxor xmm11, xmm11, xmm12", "vpxor xmm11, xmm11, xmm13",
        "vpclmulqdq xmm12, xmm11, xmmword ptr [r10 + 320], 0x00", "vpshufd xmm13, xmm11, 0x4e",
        "vpxor xmm15, xmm10, xmm12", "vpxor xmm15, xmm15, xmm13",
    ]
elif "clmulonly" in drop:
    red = ["vpclmulqdq xmm12, xmm9, xmmword ptr [r10 + 320], 0x00",
           "vpclmulqdq xmm12, xmm11, xmmword ptr [r10 + 320], 0x00"]
e("vbroadcasti128 ymm8, xmmword ptr [rdx + 128]")
for i in range(8):
    e(f"vaesenclast ymm{i}, ymm{i}, ymm8")
    for _ in range(2):
        if red:
            e(red.pop(0))
L.extend(red)
for blk in sc:
    L.extend(blk)
if keep("store") and "aesonly" not in drop and "clmulonly" not in drop:
    for i in range(8):
        e(f"vpxor ymm{i}, ymm{i}, ymmword ptr [rcx + {32 * i}]")
        e(f"vmovdqu ymmword ptr [rcx + {32 * i}], ymm{i}")
e("add rcx, 256")
e("dec rdi")
e("jnz 2b")

pro = [
    ".intel_syntax noprefix",
    '.section .note.GNU-stack,"",@progbits',
    ".text",
    f".globl k_{name}",
    f"k_{name}:",
    "push rbx", "push r12", "push r13", "push r14", "push r15",
    "mov r10, [rsp + 48]",  # 7th argument: the constants
    f"lea r12, [{o.get('sbase', 'r10')} + {o.get('slot', '512')}]",  # the slots
    "xor r13d, r13d", "xor r15d, r15d",
    "vmovdqu ymm14, [r10 + 32]", "vpxor xmm15, xmm15, xmm15",
]
if "pure" in drop:
    # Only the AES rounds (the clock reference): VBROADCASTI128 + VAESENC/VAESENCLAST.
    L = [x for x in L if x.split()[0] in ("vbroadcasti128", "vaesenc", "vaesenclast", "add", "cmp",
                                          "je", "jne", "lea", "dec", "jnz")
         or x.endswith(":")]
    L = [x for x in L if not x.startswith("add r13d") and not x.startswith("lea r14d")]
epi = ["pop r15", "pop r14", "pop r13", "pop r12", "pop rbx", "vzeroupper", "ret"]
with open(f"k_{name}.S", "w") as f:
    f.write("\n".join(pro + L + epi) + "\n")
