"""aesx.AESGCM: NIST CAVP GCM and Wycheproof vectors from the repository's testdata/ on every
backend, the interface of cryptography's AESGCM (same signatures, same errors), differential
against cryptography on random inputs, tampering, the *_into forms (aliasing included), bad
input, threads and GIL release."""

import json
import random
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from cryptography.exceptions import InvalidTag as CryptoInvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM as RefGCM

import aesx
from conftest import data_file
from test_threads import _gil_released_during, _sized

NONCE_ERR = "Nonce must be between 8 and 128 bytes"


# ---- vectors ------------------------------------------------------------------------------


def parse_gcm_rsp(path):
    """CAVP GCM .rsp records: dicts of the hex fields (upper-case keys) plus FAIL=True/False."""
    records, cur = [], {}
    for line in path.read_text().splitlines():
        line = line.strip()
        if line.startswith("Count"):
            if cur:
                records.append(cur)
            cur = {"FAIL": False}
        if not cur or not line or line.startswith(("#", "[")):
            continue
        if line == "FAIL":
            cur["FAIL"] = True
        elif "=" in line:
            k, v = (s.strip() for s in line.split("=", 1))
            cur[k.upper()] = v
    if cur:
        records.append(cur)
    return records


def h(rec, k):
    return bytes.fromhex(rec[k])


@pytest.mark.parametrize("bits", [128, 192, 256])
def test_nist_cavp_encrypt(bits, backend):
    recs = parse_gcm_rsp(data_file("aes", "nist-gcm", f"gcmEncryptExtIV{bits}.rsp"))
    assert len(recs) >= 1000
    checked = refused = 0
    for r in recs:
        key, iv, pt, aad, ct, tag = (h(r, k) for k in ("KEY", "IV", "PT", "AAD", "CT", "TAG"))
        assert len(key) * 8 == bits
        g = aesx.AESGCM(key, backend=backend, tag_length=len(tag))
        assert g.backend == backend and g.tag_length == len(tag)
        if not 8 <= len(iv) <= 128:
            # cryptography's nonce rule (the 1-byte IVs), kept for drop-in compatibility.
            with pytest.raises(ValueError, match=NONCE_ERR):
                g.encrypt(iv, pt, aad)
            refused += 1
            continue
        assert g.encrypt(iv, pt, aad) == ct + tag, r["COUNT"]
        assert g.decrypt(iv, ct + tag, aad) == pt
        checked += 1
    assert checked >= 700 and refused >= 300


@pytest.mark.parametrize("bits", [128, 192, 256])
def test_nist_cavp_decrypt(bits, backend):
    recs = parse_gcm_rsp(data_file("aes", "nist-gcm", f"gcmDecrypt{bits}.rsp"))
    assert len(recs) >= 1000
    fails = refused = 0
    for r in recs:
        key, iv, ct, aad, tag = (h(r, k) for k in ("KEY", "IV", "CT", "AAD", "TAG"))
        g = aesx.AESGCM(key, backend=backend, tag_length=len(tag))
        if not 8 <= len(iv) <= 128:
            with pytest.raises(ValueError, match=NONCE_ERR):
                g.decrypt(iv, ct + tag, aad)
            refused += 1
        elif r["FAIL"]:
            with pytest.raises(aesx.InvalidTag):
                g.decrypt(iv, ct + tag, aad)
            buf = bytearray(b"\xa5" * len(ct))
            with pytest.raises(aesx.InvalidTag):
                g.decrypt_into(iv, ct + tag, aad, buf)
            assert buf == bytes(len(ct)), "decrypt_into must zero its buffer on failure"
            fails += 1
        else:
            pt = h(r, "PT")
            assert g.decrypt(iv, ct + tag, aad) == pt, r["COUNT"]
            assert g.encrypt(iv, pt, aad) == ct + tag
    assert fails >= 400 and refused >= 300


def wycheproof():
    doc = json.loads(data_file("aes", "wycheproof", "aes_gcm_test.json").read_text())
    return [t for g in doc["testGroups"] for t in g["tests"]]


def test_wycheproof(backend):
    cases = wycheproof()
    assert len(cases) >= 300
    checked = 0
    for t in cases:
        key, iv, aad, msg, ct, tag = (bytes.fromhex(t[k]) for k in ("key", "iv", "aad", "msg", "ct", "tag"))
        if len(key) not in (16, 24, 32):
            with pytest.raises(ValueError, match="AESGCM key must be 128, 192, or 256 bits"):
                aesx.AESGCM(key, backend=backend)
            continue
        if len(tag) != 16:
            # Truncated tags: the key must be built for them, and refuses the 16-byte form.
            g = aesx.AESGCM(key, backend=backend, tag_length=len(tag))
        else:
            g = aesx.AESGCM(key, backend=backend)
        if not 8 <= len(iv) <= 128:
            with pytest.raises(ValueError, match=NONCE_ERR):
                g.encrypt(iv, msg, aad)
            with pytest.raises(ValueError, match=NONCE_ERR):
                g.decrypt(iv, ct + tag, aad)
            continue
        if t["result"] in ("valid", "acceptable"):
            assert g.encrypt(iv, msg, aad) == ct + tag, t["tcId"]
            assert g.decrypt(iv, ct + tag, aad) == msg, t["tcId"]
        else:
            with pytest.raises(aesx.InvalidTag):
                g.decrypt(iv, ct + tag, aad)
        checked += 1
    assert checked >= 250


# ---- differential against cryptography ----------------------------------------------------


@pytest.fixture
def rng():
    return random.Random(0x6C3)


LENS = sorted(
    {max(0, 16 * n + d) for n in [0, 1, 2, 3, 4, 5, 7, 8, 15, 16, 17, 31, 32, 33, 64, 65, 257, 2049] for d in (-1, 0, 1)}
    | {100_003}
)


@pytest.mark.parametrize("klen", [16, 24, 32])
def test_differential_against_cryptography(klen, backend, rng):
    for n in LENS:
        key = rng.randbytes(klen)
        nonce = rng.randbytes(rng.choice([12, 12, 12, 8, 9, 16, 60, 128]))
        aad = rng.randbytes(rng.choice([0, 1, 13, 16, 100, 5000])) if n % 3 else None
        data = rng.randbytes(n)
        mine, ref = aesx.AESGCM(key, backend=backend), RefGCM(key)
        ct = mine.encrypt(nonce, data, aad)
        assert ct == ref.encrypt(nonce, data, aad), (n, len(nonce))
        assert mine.decrypt(nonce, ct, aad) == data
        # A flipped bit anywhere (ciphertext, tag), a wrong nonce, extra or missing AAD, or a
        # truncated message is refused.
        i = rng.randrange(len(ct))
        bad = bytearray(ct)
        bad[i] ^= 1 << rng.randrange(8)
        for args in [
            (nonce, bytes(bad), aad),
            (nonce[:-1] + bytes([nonce[-1] ^ 1]), ct, aad),
            (nonce, ct, (aad or b"") + b"x"),
            (nonce, ct[:-1], aad),
            (nonce, ct[1:], aad),
        ]:
            with pytest.raises(aesx.InvalidTag):
                mine.decrypt(*args)
            with pytest.raises(CryptoInvalidTag):
                ref.decrypt(*args)


def test_random_shapes_default_backend(rng):
    """Many small random cases: any length, AAD length and nonce length cryptography accepts."""
    for _ in range(3000):
        key = rng.randbytes(rng.choice([16, 24, 32]))
        nonce = rng.randbytes(rng.randint(8, 128))
        aad = rng.randbytes(rng.randint(0, 300)) if rng.random() < 0.7 else None
        data = rng.randbytes(rng.randint(0, 700))
        ct = aesx.AESGCM(key).encrypt(nonce, data, aad)
        assert ct == RefGCM(key).encrypt(nonce, data, aad)
        assert RefGCM(key).decrypt(nonce, ct, aad) == data


# ---- the interface ------------------------------------------------------------------------


def test_interface_matches_cryptography():
    key = aesx.AESGCM.generate_key(bit_length=256)
    assert isinstance(key, bytes) and len(key) == 32
    assert len(aesx.AESGCM.generate_key(128)) == 16 and len(aesx.AESGCM.generate_key(192)) == 24
    assert aesx.AESGCM.generate_key(128) != aesx.AESGCM.generate_key(128)
    g, ref = aesx.AESGCM(key), RefGCM(key)
    # Positional and keyword forms of cryptography's signatures.
    ct = g.encrypt(nonce=b"n" * 12, data=b"hi", associated_data=None)
    assert g.decrypt(nonce=b"n" * 12, data=ct, associated_data=None) == b"hi"
    assert ref.decrypt(b"n" * 12, ct, None) == b"hi"
    assert g.encrypt(b"n" * 12, b"hi", b"") == ct  # None and b"" are the same AAD
    # InvalidTag is also cryptography's InvalidTag when cryptography is installed.
    assert issubclass(aesx.InvalidTag, CryptoInvalidTag)
    with pytest.raises(CryptoInvalidTag):
        g.decrypt(b"n" * 12, ct[:-1], None)
    for short in (b"", b"short", bytes(15)):
        with pytest.raises(aesx.InvalidTag):
            g.decrypt(b"n" * 12, short, None)
    # Any buffer kind, for every argument.
    assert g.encrypt(bytearray(b"n" * 12), memoryview(b"hi"), bytearray()) == ref.encrypt(b"n" * 12, b"hi", b"")
    np = pytest.importorskip("numpy")
    arr = np.arange(100, dtype=np.uint32)
    assert g.encrypt(np.frombuffer(b"n" * 12, np.uint8), arr, arr[:5]) == ref.encrypt(
        b"n" * 12, arr.tobytes(), arr[:5].tobytes()
    )
    assert "AESGCM" in repr(g) and key.hex() not in repr(g)
    assert aesx.AESGCM(bytes(16)).tag_length == 16


def test_into_forms_match_cryptography(rng):
    key = rng.randbytes(16)
    g, ref = aesx.AESGCM(key), RefGCM(key)
    for n in (0, 1, 15, 16, 17, 100, 40_000, 100_000):
        nonce, data, aad = rng.randbytes(12), rng.randbytes(n), rng.randbytes(n % 37)
        want = ref.encrypt(nonce, data, aad)
        buf = bytearray(n + 16)
        assert g.encrypt_into(nonce, data, aad, buf) == n + 16
        assert buf == want
        # cryptography's own encrypt_into writes the same.
        buf2 = bytearray(n + 16)
        ref.encrypt_into(nonce, data, aad, buf2)
        assert buf2 == want
        out = bytearray(n)
        assert g.decrypt_into(nonce, want, aad, out) == n
        assert out == data
        # numpy output buffer
        np = pytest.importorskip("numpy")
        arr = np.zeros(n + 16, np.uint8)
        g.encrypt_into(nonce, data, aad, arr)
        assert arr.tobytes() == want
        # In place: data (and AAD) are views of the output buffer itself.
        b = bytearray(data + bytes(16))
        g.encrypt_into(nonce, memoryview(b)[:n], aad, b)
        assert b == want
        g.decrypt_into(nonce, b, aad, memoryview(b)[:n])
        assert b[:n] == data
        # Shifted overlap both ways (memmove semantics).
        b = bytearray(bytes(8) + data + bytes(16))
        g.encrypt_into(nonce, memoryview(b)[8 : 8 + n], aad, memoryview(b)[: n + 16])
        assert b[: n + 16] == want
        b = bytearray(want + bytes(8))
        g.decrypt_into(nonce, memoryview(b)[: n + 16], aad, memoryview(b)[8 : 8 + n])
        assert b[8 : 8 + n] == data
        # AAD that is a view of the output buffer is read before anything is written.
        b = bytearray(aad + bytes(n + 16 - len(aad)))
        g.encrypt_into(nonce, data, memoryview(b)[: len(aad)], b)
        assert b == ref.encrypt(nonce, data, aad)


def test_decrypt_into_failure_zeroes_buffer_and_leaves_rest():
    g = aesx.AESGCM(bytes(32))
    ct = g.encrypt(bytes(12), b"secret plaintext" * 5, b"hdr")
    bad = bytearray(ct)
    bad[3] ^= 0x40
    outer = bytearray(b"\x77" * (len(ct) + 10))
    view = memoryview(outer)[5 : 5 + len(ct) - 16]
    with pytest.raises(aesx.InvalidTag):
        g.decrypt_into(bytes(12), bad, b"hdr", view)
    assert outer[:5] == b"\x77" * 5 and outer[5 + len(ct) - 16 :] == b"\x77" * (10 + 16 - 5)
    assert view == bytes(len(ct) - 16)
    # In place: the ciphertext is gone too (zeroed), never replaced by plaintext.
    b = bytearray(bad)
    with pytest.raises(aesx.InvalidTag):
        g.decrypt_into(bytes(12), b, b"hdr", memoryview(b)[: len(ct) - 16])
    assert b[: len(ct) - 16] == bytes(len(ct) - 16)
    assert b"secret" not in b


# ---- bad input ----------------------------------------------------------------------------


def test_bad_input():
    for k in (b"", bytes(15), bytes(17), bytes(64)):
        with pytest.raises(ValueError, match="AESGCM key must be 128, 192, or 256 bits"):
            aesx.AESGCM(k)
        with pytest.raises(ValueError):
            RefGCM(k)
    with pytest.raises(TypeError, match="key: expected a bytes-like object"):
        aesx.AESGCM("k" * 16)
    with pytest.raises(ValueError, match="unknown backend"):
        aesx.AESGCM(bytes(16), backend="nope")
    for t in (0, 3, 5, 11, 17):
        with pytest.raises(ValueError, match="tag_length must be"):
            aesx.AESGCM(bytes(16), tag_length=t)
    g = aesx.AESGCM(bytes(16))
    for n in (0, 1, 7, 129, 1000):
        for call in (
            lambda: g.encrypt(bytes(n), b"x", None),
            lambda: g.decrypt(bytes(n), bytes(32), None),
            lambda: g.encrypt_into(bytes(n), b"x", None, bytearray(17)),
            lambda: g.decrypt_into(bytes(n), bytes(32), None, bytearray(16)),
        ):
            with pytest.raises(ValueError, match=NONCE_ERR):
                call()
        with pytest.raises(ValueError, match=NONCE_ERR):
            RefGCM(bytes(16)).encrypt(bytes(n), b"x", None)
    with pytest.raises(TypeError, match="nonce: expected"):
        g.encrypt("n" * 12, b"x", None)
    with pytest.raises(TypeError, match="data: expected"):
        g.encrypt(bytes(12), "text", None)
    with pytest.raises(TypeError, match="data: expected"):
        g.decrypt(bytes(12), 12345, None)
    with pytest.raises(TypeError, match="associated_data: expected"):
        g.encrypt(bytes(12), b"x", "aad")
    with pytest.raises(TypeError):
        g.encrypt(bytes(12), b"x")  # associated_data is required, as in cryptography
    # *_into: wrong sizes, read-only buffers, non-buffers; nothing written.
    for size in (0, 16, 18, 100):
        buf = bytearray(b"\x55" * size)
        with pytest.raises(ValueError, match="buffer must be 17 bytes"):
            g.encrypt_into(bytes(12), b"x", None, buf)
        assert buf == b"\x55" * size
    ct = g.encrypt(bytes(12), b"abc", None)
    for size in (0, 2, 4):
        with pytest.raises(ValueError, match="buffer must be 3 bytes"):
            g.decrypt_into(bytes(12), ct, None, bytearray(size))
    with pytest.raises(TypeError, match="writable"):
        g.encrypt_into(bytes(12), b"x", None, bytes(17))
    with pytest.raises(TypeError, match="buf: expected"):
        g.decrypt_into(bytes(12), ct, None, "buf")
    with pytest.raises(ValueError, match="bit_length must be 128, 192, or 256"):
        aesx.AESGCM.generate_key(64)
    with pytest.raises(ValueError, match="bit_length must be 128, 192, or 256"):
        aesx.AESGCM.generate_key(2**100)
    with pytest.raises(TypeError, match="bit_length must be an int"):
        aesx.AESGCM.generate_key("256")
    with pytest.raises(TypeError, match="bit_length must be an int"):
        aesx.AESGCM.generate_key(128.0)


def test_truncated_tag_keys_refuse_other_lengths():
    key, nonce = bytes(range(16)), bytes(12)
    full = aesx.AESGCM(key).encrypt(nonce, b"message", b"")
    for t in (15, 14, 13, 12, 8, 4):
        g = aesx.AESGCM(key, tag_length=t)
        ct = g.encrypt(nonce, b"message", b"")
        assert ct == full[: 7 + t]  # a truncated tag is a prefix of the full one
        assert g.decrypt(nonce, ct, b"") == b"message"
        with pytest.raises(aesx.InvalidTag):  # the full-length form is not accepted
            g.decrypt(nonce, full, b"")
    with pytest.raises(aesx.InvalidTag):
        aesx.AESGCM(key).decrypt(nonce, full[:-4], b"")


# ---- threads ------------------------------------------------------------------------------


def test_shared_between_threads():
    key = bytes(range(32))
    g, ref = aesx.AESGCM(key), RefGCM(key)
    jobs = [(i.to_bytes(12, "big"), bytes([i % 256]) * (700 * i)) for i in range(100)]

    def work(job):
        nonce, data = job
        ct = g.encrypt(nonce, data, b"hdr")
        out = bytearray(len(data))
        g.decrypt_into(nonce, ct, b"hdr", out)
        return ct, g.decrypt(nonce, ct, b"hdr"), bytes(out)

    with ThreadPoolExecutor(8) as ex:
        for (nonce, data), (ct, pt, pt2) in zip(jobs * 2, ex.map(work, jobs * 2)):
            assert ct == ref.encrypt(nonce, data, b"hdr") and pt == data and pt2 == data


@pytest.mark.parametrize("method", ["encrypt", "decrypt", "encrypt_into", "decrypt_into"])
def test_large_calls_release_the_gil(method):
    """The main thread keeps running while a large GCM call runs on another thread (the
    harness of test_threads.py: with the GIL held it would be blocked for the whole call)."""
    g = aesx.AESGCM(bytes(16), backend="soft")  # slow on purpose: long calls, small buffers
    nonce = bytes(12)

    def make(n):
        data = bytes(n)
        ct = g.encrypt(nonce, data, None)
        if method == "encrypt":
            return lambda: g.encrypt(nonce, data, None)
        if method == "decrypt":
            return lambda: g.decrypt(nonce, ct, None)
        if method == "encrypt_into":
            buf = bytearray(n + 16)
            return lambda: g.encrypt_into(nonce, data, None, buf)
        buf = bytearray(n)
        return lambda: g.decrypt_into(nonce, ct, None, buf)

    call = _sized(make)
    start = time.perf_counter()
    longest = _gil_released_during(call)
    total = time.perf_counter() - start
    assert longest > 0.5 * total - 0.05 and longest > 0.1, (longest, total)


def test_invalid_tag_without_cryptography_installed():
    """aesx does not need cryptography: InvalidTag is then a plain Exception subclass."""
    import subprocess
    import sys

    code = (
        "import sys; sys.modules['cryptography'] = None\n"
        "import aesx\n"
        "assert aesx.InvalidTag.__mro__[1] is Exception\n"
        "g = aesx.AESGCM(bytes(16))\n"
        "ct = g.encrypt(bytes(12), b'abc', None)\n"
        "try:\n"
        "    g.decrypt(bytes(12), ct[:-1] + bytes([ct[-1] ^ 1]), None)\n"
        "except aesx.InvalidTag:\n"
        "    print('refused')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "refused", out.stderr


@pytest.mark.parametrize("n", [65535, 65536, 65537, 200_000, 3 * 65536 + 5])
def test_large_messages(n, backend, rng):
    """Messages around and above 64 KiB (GIL released, several kernel loops, chunk-sized
    boundaries): same bytes as cryptography, and a failed decrypt/decrypt_into leaves only
    zeros, whichever byte was changed."""
    key, nonce, aad = rng.randbytes(32), rng.randbytes(12), rng.randbytes(33)
    data = rng.randbytes(n)
    g, ref = aesx.AESGCM(key, backend=backend), RefGCM(key)
    ct = g.encrypt(nonce, data, aad)
    assert ct == ref.encrypt(nonce, data, aad)
    buf = bytearray(n + 16)
    g.encrypt_into(nonce, data, aad, buf)
    assert buf == ct
    assert g.decrypt(nonce, ct, aad) == data
    for where in (0, n // 2, n - 1, n + 15):  # first chunk, middle, last byte, tag
        bad = bytearray(ct)
        bad[where] ^= 0x80
        with pytest.raises(aesx.InvalidTag):
            g.decrypt(nonce, bytes(bad), aad)
        outer = bytearray(b"\x66" * (n + 8))
        view = memoryview(outer)[4 : 4 + n]
        with pytest.raises(aesx.InvalidTag):
            g.decrypt_into(nonce, bad, aad, view)
        assert view == bytes(n) and outer[:4] == b"\x66" * 4 and outer[4 + n :] == b"\x66" * 4
