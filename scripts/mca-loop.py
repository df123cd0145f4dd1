#!/usr/bin/env python3
"""The steady-state body of a kernel's main loop, as input for llvm-mca.

    objdump -d --no-show-raw-insn -M intel target/release/libaesx.so > lib.dis
    scripts/mca-loop.py lib.dis zmm_r1 > r1.s
    llvm-mca -mcpu=icelake-server -iterations=200 r1.s

Takes the first function whose objdump label contains the given text (a part of its mangled
name, e.g. `ctr_asm6zmm_r1`), finds its widest backward conditional jump (the main loop),
and prints the instructions from the jump's target to the jump, in Intel syntax for llvm-mca.
Every forward conditional branch inside the loop is taken as taken, and the instructions it
skips are left out: in the assembly loops of `backend/vaes` those branches skip what runs in
a few iterations only (the first window's table building, the last batches' table zeroing,
the window step, the rounds a shorter key does not have), so what remains is a typical
iteration of the shortest key the code runs (AES-128). Check the output against the source
before trusting a number: a loop shaped otherwise needs its own selection. Branches
themselves are dropped (llvm-mca models straight-line code).
"""
import re
import sys


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    dis, name = sys.argv[1], sys.argv[2]
    lines = open(dis).read().split("\n")
    start = next(
        (i for i, l in enumerate(lines) if l.endswith(">:") and name in l), None
    )
    if start is None:
        sys.exit(f"no function matching {name!r} in {dis}")
    ins = []
    for l in lines[start + 1 :]:
        if l.strip() == "" or l.endswith(">:"):
            break
        m = re.match(r"\s*([0-9a-f]+):\s*(.*)$", l)
        if m:
            ins.append((int(m.group(1), 16), m.group(2).strip()))
    jump = re.compile(r"(j\w+)\s+([0-9a-f]+)")
    loops = [
        (a - int(m.group(2), 16), int(m.group(2), 16), a)
        for a, t in ins
        if (m := jump.match(t)) and m.group(1) != "jmp" and int(m.group(2), 16) < a
    ]
    if not loops:
        sys.exit(f"{name}: no backward conditional jump")
    _, lo, hi = max(loops)
    out, skip_to = [], None
    for a, t in ins:
        if not lo <= a <= hi or (skip_to is not None and a < skip_to):
            continue
        skip_to = None
        m = jump.match(t)
        if m:
            if m.group(1) != "jmp" and int(m.group(2), 16) > a:
                skip_to = int(m.group(2), 16)
            continue
        out.append(re.sub(r"<[^>]*>", "", re.sub(r"\s+#.*$", "", t)))
    print(".intel_syntax noprefix")
    print("\n".join(out))


if __name__ == "__main__":
    main()
