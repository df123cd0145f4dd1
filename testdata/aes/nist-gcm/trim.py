#!/usr/bin/env python3
"""Trims the NIST CAVP GCM response files (gcmEncryptExtIV*.rsp, gcmDecrypt*.rsp) to a subset
that keeps every parameter group ([Keylen/IVlen/PTlen/AADlen/Taglen]): the first KEEP records
of each group, plus, in decrypt files, the first FAIL record and the first passing record of
the group if those were not already among them. Records are copied byte for byte (CRLF kept).

Usage: trim.py SRC_DIR DST_DIR
"""
import os
import sys

KEEP = 2


def trim(text):
    out = []
    lines = text.split("\r\n")
    # Split into chunks separated by blank lines; a chunk is a header block or a record.
    chunks, cur = [], []
    for ln in lines:
        if ln.strip() == "":
            if cur:
                chunks.append(cur)
                cur = []
        else:
            cur.append(ln)
    if cur:
        chunks.append(cur)
    group = []

    def flush():
        if not group:
            return
        keep = set(range(min(KEEP, len(group))))
        fails = [i for i, r in enumerate(group) if "FAIL" in r]
        passes = [i for i, r in enumerate(group) if "FAIL" not in r]
        if fails and not keep & set(fails):
            keep.add(fails[0])
        if passes and not keep & set(passes):
            keep.add(passes[0])
        for i in sorted(keep):
            out.append("\r\n".join(group[i]))
        group.clear()

    for c in chunks:
        if c[0].startswith("Count"):
            group.append(c)
        else:
            flush()
            out.append("\r\n".join(c))
    flush()
    return "\r\n\r\n".join(out) + "\r\n"


def main():
    src, dst = sys.argv[1], sys.argv[2]
    for name in sorted(os.listdir(src)):
        if not name.endswith(".rsp"):
            continue
        with open(os.path.join(src, name), newline="") as f:
            text = f.read()
        with open(os.path.join(dst, name), "w", newline="") as f:
            f.write(trim(text))


if __name__ == "__main__":
    main()
