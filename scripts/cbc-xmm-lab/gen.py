#!/usr/bin/env python3
"""Writes one variant of the xmm CBC-decryption loop (crates/aesx/src/backend/vaes/cbc_asm.rs,
legacy SSE, in place) as a stand-alone function k_NAME in k_NAME.S, for timing.

    gen.py NAME [n=REGS] [nr=ROUNDS] [mode=fold|after] [key=reg|mem]

n     data registers per iteration (at most 12: xmm12-15 hold the key and chaining values)
nr    10, 12 or 14 rounds
mode  fold: aesdeclast(x, k_last ^ chain) (the ymm loop); after: aesdeclast(x, k_last) ^ chain
key   reg: each round key loaded into xmm12 once per round; mem: AESDEC with a memory operand

Registers: rdi iterations, rsi decryption schedule, rdx data; xmm13 the chaining block carried
from the previous iteration, xmm14 the batch's last ciphertext block, xmm15 one chaining value.
"""
import sys

name = sys.argv[1]
o = dict(a.split("=", 1) for a in sys.argv[2:])
N = int(o.get("n", "12"))
NR = int(o.get("nr", "10"))
mode = o.get("mode", "fold")
km = o.get("key", "reg")
assert 1 <= N <= 12 and NR in (10, 12, 14)
L = []
e = L.append
e("2:")
e("movdqu xmm12, [rsi]")
for i in range(N):
    e(f"movdqu xmm{i}, [rdx + {16 * i}]")
    e(f"pxor xmm{i}, xmm12")
e(f"movdqu xmm14, [rdx + {16 * (N - 1)}]")
for r in range(1, NR):
    if km == "reg":
        e(f"movdqu xmm12, [rsi + {16 * r}]")
        for i in range(N):
            e(f"aesdec xmm{i}, xmm12")
    else:
        for i in range(N):
            e(f"aesdec xmm{i}, [rsi + {16 * r}]")
e(f"movdqu xmm12, [rsi + {16 * NR}]")
for i in range(N - 1, -1, -1):
    if mode == "fold":
        if i == 0:
            e("pxor xmm13, xmm12")
            e("aesdeclast xmm0, xmm13")
        else:
            e(f"movdqu xmm15, [rdx + {16 * i - 16}]")
            e("pxor xmm15, xmm12")
            e(f"aesdeclast xmm{i}, xmm15")
    else:
        e(f"aesdeclast xmm{i}, xmm12")
        if i == 0:
            e("pxor xmm0, xmm13")
        else:
            e(f"movdqu xmm15, [rdx + {16 * i - 16}]")
            e(f"pxor xmm{i}, xmm15")
    e(f"movdqu [rdx + {16 * i}], xmm{i}")
e("movdqa xmm13, xmm14")
e(f"add rdx, {16 * N}")
e("dec rdi")
e("jnz 2b")
pro = [".intel_syntax noprefix", '.section .note.GNU-stack,"",@progbits', ".text",
       f".globl k_{name}", f"k_{name}:", "pxor xmm13, xmm13"]
with open(f"k_{name}.S", "w") as f:
    f.write("\n".join(pro + L + ["ret"]) + "\n")
