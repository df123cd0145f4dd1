"""The aesx file format from Python (``file_encrypt`` / ``file_decrypt`` / ``keygen``): the
committed vectors (testdata/format/vectors.json, reproduced by an independent implementation),
round trips, fresh salts, and every tamper refused with the reason and no plaintext."""

import json

import pytest

import aesx
from conftest import data_file

HEADER = 104
CHUNK = 1 << 16
RECORD = CHUNK + 16
CHEAP = dict(kdf_memory_kib=64, kdf_passes=1, kdf_lanes=1)


def vectors():
    return json.loads(data_file("format", "vectors.json").read_text())["vectors"]


def plaintext(n):
    return bytes(j % 251 for j in range(n))


@pytest.mark.parametrize("v", vectors(), ids=lambda v: v["name"])
def test_vectors_decrypt(v):
    file = bytes.fromhex(v["file"])
    if "key" in v:
        got = aesx.file_decrypt(file, key=bytes.fromhex(v["key"]))
    else:
        got = aesx.file_decrypt(file, passphrase=v["passphrase"])
    assert got == plaintext(v["plaintext_len"])


@pytest.mark.parametrize("n", [0, 1, CHUNK - 1, CHUNK, CHUNK + 1, 3 * CHUNK + 7, (4 << 20) + 1])
@pytest.mark.parametrize("threads", [1, 2])
def test_round_trip_sizes(n, threads):
    key = aesx.keygen()
    p = bytes((i * 7 + 3) % 256 for i in range(n))
    f = aesx.file_encrypt(p, key=key, threads=threads)
    chunks = max(1, -(-n // CHUNK))
    assert len(f) == HEADER + n + 16 * chunks
    assert aesx.file_decrypt(f, key=key, threads=3 - threads) == p
    # Any buffer type.
    assert aesx.file_decrypt(memoryview(bytearray(f)), key=bytearray(key)) == p


def test_fresh_salt_every_time_and_aes128():
    key = aesx.keygen()
    assert len(key) == 32 and key != aesx.keygen()
    a = aesx.file_encrypt(b"same", key=key)
    b = aesx.file_encrypt(b"same", key=key)
    assert a != b and a[HEADER:] != b[HEADER:]
    c = aesx.file_encrypt(b"same", key=key, aead="aes-128-gcm")
    assert c[9] == 2 and a[9] == 1
    assert aesx.file_decrypt(c, key=key) == b"same"


def test_passphrase():
    f = aesx.file_encrypt(b"meet at noon", passphrase="correct horse", **CHEAP)
    assert f[11] == 2  # key source: passphrase
    assert aesx.file_decrypt(f, passphrase="correct horse") == b"meet at noon"
    assert aesx.file_decrypt(f, passphrase=b"correct horse") == b"meet at noon"
    with pytest.raises(ValueError, match="wrong key or passphrase"):
        aesx.file_decrypt(f, passphrase="correct horsf")
    with pytest.raises(ValueError, match="passphrase"):
        aesx.file_decrypt(f, key=bytes(32))


def flip(b, i):
    return b[:i] + bytes([b[i] ^ 1]) + b[i + 1 :]


def test_tampers_refused_with_the_reason():
    key = aesx.keygen()
    f = aesx.file_encrypt(plaintext(3 * CHUNK + 5), key=key)
    h = f[:HEADER]
    rec = [f[HEADER + i * RECORD : HEADER + (i + 1) * RECORD] for i in range(4)]
    # A file whose final chunk is full, for bytes after its end.
    g = aesx.file_encrypt(plaintext(2 * CHUNK), key=key)
    cases = [
        (flip(f, HEADER + RECORD + 9), "chunk 1 corrupted"),
        (flip(f, HEADER + 2 * RECORD - 1), "chunk 1 corrupted"),  # its tag
        (h + rec[0] + rec[2] + rec[1] + rec[3], "chunk 1 corrupted"),
        (h + rec[0] + rec[0] + rec[1] + rec[2] + rec[3], "chunk 1 corrupted"),
        (h + rec[0] + rec[2] + rec[3], "chunk 1 corrupted"),
        (h + rec[0] + rec[1] + rec[2], "file truncated: it ends after chunk 2"),
        (f[:-3], "chunk 3 (the last in the file) fails"),
        (f + b"x", "chunk 3 (the last in the file) fails"),
        (g + g[HEADER : HEADER + RECORD], "data after the end: chunk 1"),
        (f[:HEADER + 10], "file truncated: it ends before the tag of chunk 0"),
        (f[:50], "ends inside the 104-byte aesx header"),
        (b"Salted__" + f[8:], "not an aesx file"),
        (flip(f, 10), "header corrupted"),
        (flip(f, 50), "wrong key or passphrase"),  # the file salt feeds the key check
        (b"", "the input is empty"),
    ]
    for i, (bad, why) in enumerate(cases):
        with pytest.raises(ValueError) as e:
            aesx.file_decrypt(bad, key=key)
        assert why in str(e.value), (i, why, str(e.value))
    with pytest.raises(ValueError, match="wrong key or passphrase"):
        aesx.file_decrypt(f, key=bytes(32))


def test_hostile_kdf_parameters_refused_before_argon2():
    f = bytearray(aesx.file_encrypt(b"x", passphrase="pw", **CHEAP))
    f[12:16] = (1 << 30).to_bytes(4, "big")  # argon2_m: 1 TiB
    with pytest.raises(ValueError, match="(?i)argon2 memory"):
        aesx.file_decrypt(bytes(f), passphrase="pw")


def test_bad_arguments():
    with pytest.raises(TypeError, match="exactly one"):
        aesx.file_encrypt(b"x")
    with pytest.raises(TypeError, match="exactly one"):
        aesx.file_encrypt(b"x", key=bytes(32), passphrase="p")
    with pytest.raises(ValueError, match="32 bytes"):
        aesx.file_encrypt(b"x", key=bytes(16))
    with pytest.raises(ValueError, match="aead"):
        aesx.file_encrypt(b"x", key=bytes(32), aead="chacha20")
    with pytest.raises(ValueError, match="threads"):
        aesx.file_encrypt(b"x", key=bytes(32), threads=0)
    with pytest.raises(ValueError, match="empty"):
        aesx.file_encrypt(b"x", passphrase="")
