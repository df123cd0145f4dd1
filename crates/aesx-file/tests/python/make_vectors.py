"""Writes testdata/format/vectors.json with the independent implementation (aesxfile.py).

The Rust implementation must reproduce every file byte for byte (crates/aesx-file/tests/
vectors.rs) and this script's own reader must decrypt it (test_interop.py). Run:
    python make_vectors.py ../../../../testdata/format/vectors.json
"""

import json
import sys

import aesxfile

KEY = bytes(range(32))


def plaintext(n):
    return bytes(j % 251 for j in range(n))


def salts(tag):
    # Fixed, distinct per vector: file salt 32 bytes, Argon2 salt 16 bytes.
    return bytes((tag * 7 + j) % 256 for j in range(32)), bytes((tag * 13 + 100 + j) % 256 for j in range(16))


CASES = [
    # (name, key source, aead, chunk_log2, plaintext length, argon2 (m, t, p) or None)
    ("key-empty", "key", 1, 10, 0, None),
    ("key-1", "key", 1, 10, 1, None),
    ("key-chunk-minus-1", "key", 1, 10, 1023, None),
    ("key-chunk", "key", 1, 10, 1024, None),
    ("key-chunk-plus-1", "key", 1, 10, 1025, None),
    ("key-many-chunks", "key", 1, 10, 5000, None),
    ("key-two-full-chunks", "key", 1, 10, 2048, None),
    ("key-aes128", "key", 2, 10, 3000, None),
    ("key-default-chunk", "key", 1, 16, 65537, None),
    ("pass-ascii", "correct horse battery staple", 1, 10, 100, (64, 1, 1)),
    ("pass-utf8-aes128", "pässwörd ✓", 2, 12, 5000, (256, 2, 4)),
    ("pass-empty-plaintext", "x", 1, 20, 0, (8, 1, 1)),
]


def main(path):
    out = []
    for i, (name, src, aead, cl, n, argon) in enumerate(CASES):
        fs, as_ = salts(i)
        v = {"name": name, "aead": aead, "chunk_log2": cl, "plaintext_len": n,
             "file_salt": fs.hex()}
        pt = plaintext(n)
        if src == "key":
            v["key"] = KEY.hex()
            f = aesxfile.encrypt(pt, key=KEY, aead=aead, chunk_log2=cl, file_salt=fs)
        else:
            m, t, p = argon
            v.update(passphrase=src, argon2_m=m, argon2_t=t, argon2_p=p, argon2_salt=as_.hex())
            f = aesxfile.encrypt(pt, passphrase=src.encode(), aead=aead, chunk_log2=cl, m=m, t=t,
                                 p=p, file_salt=fs, argon2_salt=as_)
        assert aesxfile.decrypt(f, key=KEY if src == "key" else None,
                                passphrase=None if src == "key" else src.encode()) == pt
        v["file"] = f.hex()
        out.append(v)
    doc = {"about": "aesx file format v1 test vectors (docs/format.md section 8); plaintext "
                    "byte j = j mod 251; made by crates/aesx-file/tests/python/make_vectors.py",
           "vectors": out}
    with open(path, "w") as fh:
        json.dump(doc, fh, indent=1)
        fh.write("\n")


if __name__ == "__main__":
    main(sys.argv[1])
