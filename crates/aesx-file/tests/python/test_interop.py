"""The independent implementation (aesxfile.py, written from docs/format.md) against the
committed vectors and against the `aesx` binary, both ways, plus files only a custom writer
can make (misplaced last-chunk flags, an empty final chunk, a crafted header): aesx must refuse
each with the right message.

The binary: $AESX_BIN, else target/release/aesx at the repository root.
"""

import json
import os
import struct
import subprocess
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

import aesxfile

ROOT = Path(__file__).resolve().parents[4]
AESX = os.environ.get("AESX_BIN", str(ROOT / "target" / "release" / "aesx"))
VECTORS = json.loads((ROOT / "testdata" / "format" / "vectors.json").read_text())["vectors"]
KEY = bytes(range(32))
PASS = b"correct horse battery staple"


def data(n, seed=1):
    return bytes(((i * 2654435761) >> 7 ^ seed) & 0xFF for i in range(n))


def aesx(*args, input=None):
    return subprocess.run([AESX, *args], input=input, capture_output=True, timeout=120)


@pytest.fixture
def d(tmp_path):
    (tmp_path / "k").write_bytes(KEY)
    (tmp_path / "pw").write_bytes(PASS + b"\n")
    return tmp_path


def secret_args(d, passphrase):
    return ["--passphrase-file", str(d / "pw")] if passphrase else ["--key-file", str(d / "k")]


def secret_kw(passphrase):
    return {"passphrase": PASS} if passphrase else {"key": KEY}


@pytest.mark.parametrize("v", VECTORS, ids=lambda v: v["name"])
def test_vectors_reproduce(v):
    n = v["plaintext_len"]
    pt = bytes(j % 251 for j in range(n))
    kw = dict(aead=v["aead"], chunk_log2=v["chunk_log2"], file_salt=bytes.fromhex(v["file_salt"]))
    if "key" in v:
        kw["key"] = bytes.fromhex(v["key"])
        secret = {"key": kw["key"]}
    else:
        kw.update(passphrase=v["passphrase"].encode(), m=v["argon2_m"], t=v["argon2_t"],
                  p=v["argon2_p"], argon2_salt=bytes.fromhex(v["argon2_salt"]))
        secret = {"passphrase": kw["passphrase"]}
    f = aesxfile.encrypt(pt, **kw)
    assert f.hex() == v["file"]
    assert aesxfile.decrypt(f, **secret) == pt


@pytest.mark.parametrize("n", [0, 1, 65535, 65536, 65537, 200001])
@pytest.mark.parametrize("passphrase", [False, True])
def test_python_reads_aesx(d, n, passphrase):
    pt = data(n, n & 0xFF)
    (d / "p").write_bytes(pt)
    extra = ["--kdf-memory", "1", "--kdf-passes", "1", "--kdf-lanes", "2"] if passphrase else []
    r = aesx("encrypt", *secret_args(d, passphrase), *extra, str(d / "p"), str(d / "c"))
    assert r.returncode == 0, r.stderr
    assert aesxfile.decrypt((d / "c").read_bytes(), **secret_kw(passphrase)) == pt


@pytest.mark.parametrize("aead", [1, 2])
@pytest.mark.parametrize("chunk_log2", [10, 13, 16, 20])
@pytest.mark.parametrize("n", [0, 1, 1023, 1024, 1025, 70000])
def test_aesx_reads_python(d, aead, chunk_log2, n):
    pt = data(n, 3)
    (d / "c").write_bytes(aesxfile.encrypt(pt, key=KEY, aead=aead, chunk_log2=chunk_log2))
    r = aesx("decrypt", *secret_args(d, False), str(d / "c"), "-")
    assert r.returncode == 0, r.stderr
    assert r.stdout == pt


def test_aesx_reads_python_passphrase(d):
    pt = data(5000, 4)
    f = aesxfile.encrypt(pt, passphrase=PASS, m=256, t=2, p=3, chunk_log2=11)
    (d / "c").write_bytes(f)
    r = aesx("decrypt", *secret_args(d, True), str(d / "c"), "-")
    assert r.returncode == 0, r.stderr
    assert r.stdout == pt


# ---- files a conforming writer never makes -------------------------------------------------

def custom(chunks, flags, *, key=KEY, chunk_log2=10, header_patch=None):
    """An aesx file whose chunk i is sealed with flag flags[i]; `header_patch` edits the
    first 88 header bytes before the tag is computed."""
    fs = os.urandom(32)
    k = aesxfile.derive(key, fs, 1)
    first88 = bytearray(aesxfile.MAGIC + bytes([1, 1, chunk_log2, 1]) + bytes(12) + bytes(16)
                        + fs + k["key_check"])
    if header_patch:
        header_patch(first88)
    out = bytearray(first88 + aesxfile.header_tag(k["header_key"], bytes(first88)))
    g = AESGCM(k["chunk_key"])
    for i, (c, f) in enumerate(zip(chunks, flags)):
        out += g.encrypt(aesxfile.nonce(k["nonce_prefix"], i, f), c, None)
    return bytes(out)


def refused(d, f, needle, secret=None):
    (d / "t").write_bytes(f)
    r = aesx("decrypt", *(secret or secret_args(d, False)), str(d / "t"), str(d / "out"))
    err = r.stderr.decode()
    assert r.returncode != 0
    assert len(err.strip().splitlines()) == 1, err
    assert needle in err, err
    assert not (d / "out").exists()
    assert not [p for p in d.iterdir() if p.name.endswith(".aesx-tmp")]
    # The independent reader refuses it too.
    with pytest.raises(aesxfile.FormatError):
        aesxfile.decrypt(f, key=KEY)


C = 1024


def test_flag_on_a_middle_chunk(d):
    # Chunk 1 of 3 claims to be final: a reader must stop there, not accept what follows.
    f = custom([data(C, 1), data(C, 2), data(100, 3)], [False, True, True])
    refused(d, f, "data after the end: chunk 1 is the final chunk")


def test_no_final_flag(d):
    f = custom([data(C, 1), data(C, 2)], [False, False])
    refused(d, f, "file truncated: it ends after chunk 1")
    f = custom([data(C, 1), data(10, 2)], [False, False])
    refused(d, f, "chunk 1 (the last in the file) fails authentication")


def test_empty_final_chunk_after_others(d):
    f = custom([data(C, 1), b""], [False, True])
    refused(d, f, "final chunk 1 is empty")


def test_crafted_headers(d):
    # A validly tagged header with an unsupported chunk size is refused by the size rule.
    f = custom([data(10, 1)], [True], chunk_log2=21)
    refused(d, f, "unsupported chunk size 2^21")
    # Hostile Argon2 parameters on a passphrase header: refused before Argon2 runs.
    def hostile(h):
        h[11] = 2
        h[12:24] = struct.pack(">III", 1 << 22, 1, 1)
    f = custom([data(10, 1)], [True], header_patch=hostile)
    refused(d, f, "hostile parameters", secret=secret_args(d, True))
    def key_file_with_params(h):
        h[12:16] = struct.pack(">I", 8)
    f = custom([data(10, 1)], [True], header_patch=key_file_with_params)
    refused(d, f, "malformed aesx header")


def test_python_refuses_aesx_tampers(d):
    pt = data(3 * 65536 + 9, 5)
    (d / "p").write_bytes(pt)
    assert aesx("encrypt", "--key-file", str(d / "k"), str(d / "p"), str(d / "c")).returncode == 0
    f = (d / "c").read_bytes()
    rec = 65536 + 16
    cases = [
        (lambda v: v.__setitem__(60, v[60] ^ 1), "wrong key or passphrase"),
        (lambda v: v.__setitem__(95, v[95] ^ 1), "header corrupted"),
        (lambda v: v.__setitem__(104 + rec + 3, v[104 + rec + 3] ^ 1), "chunk corrupted"),
        (lambda v: v.__delitem__(slice(104 + 3 * rec, None)), "file truncated"),
        (lambda v: v.__delitem__(slice(len(v) - 3, None)), "last chunk corrupted"),
        (lambda v: v.extend(b"zz"), "last chunk corrupted"),
    ]
    for edit, kind in cases:
        v = bytearray(f)
        edit(v)
        with pytest.raises(aesxfile.FormatError) as e:
            aesxfile.decrypt(bytes(v), key=KEY)
        assert e.value.kind == kind
    with pytest.raises(aesxfile.FormatError) as e:
        aesxfile.decrypt(f, key=bytes(32))
    assert e.value.kind == "wrong key or passphrase"
