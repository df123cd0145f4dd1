"""aesx against `cryptography` (OpenSSL) on random keys, IVs and data: ECB, CBC (with and
without PKCS#7), CTR (128-bit counter, including the carry across 64 bits and the 2^128 wrap,
and arbitrary offsets), on every backend."""

import os
import random

import pytest
from cryptography.hazmat.primitives import padding as cpad
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

import aesx

# Lengths around every batch size the kernels use (16 x {1,4,8,16,32,64} +- 1) and big ones.
BLOCKS = [0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 1027]
BYTE_LENS = sorted({max(0, 16 * n + d) for n in BLOCKS for d in (-1, 0, 1)} | {100_003})


def ref(key, mode):
    return Cipher(algorithms.AES(key), mode)


def ref_enc(key, mode, data):
    e = ref(key, mode).encryptor()
    return e.update(data) + e.finalize()


def ref_dec(key, mode, data):
    d = ref(key, mode).decryptor()
    return d.update(data) + d.finalize()


@pytest.fixture
def rng():
    return random.Random(0xAE5)


def rand(rng, n):
    return rng.randbytes(n) if hasattr(rng, "randbytes") else os.urandom(n)


@pytest.mark.parametrize("klen", [16, 24, 32])
def test_ecb(backend, klen, rng):
    for n in BLOCKS:
        key, data = rand(rng, klen), rand(rng, 16 * n)
        aes = aesx.AES(key, backend=backend)
        want = ref_enc(key, modes.ECB(), data)
        assert aes.encrypt_ecb(data) == want, n
        assert aes.decrypt_ecb(want) == data, n
        junk = rand(rng, 16 * n)
        assert aes.decrypt_ecb(junk) == ref_dec(key, modes.ECB(), junk), n


@pytest.mark.parametrize("klen", [16, 24, 32])
def test_cbc(backend, klen, rng):
    for n in BYTE_LENS:
        key, iv, data = rand(rng, klen), rand(rng, 16), rand(rng, n)
        aes = aesx.AES(key, backend=backend)
        p = cpad.PKCS7(128).padder()
        padded = p.update(data) + p.finalize()
        want = ref_enc(key, modes.CBC(iv), padded)
        assert aes.cbc_encrypt(iv, data) == want, n
        assert aes.cbc_decrypt(iv, want) == data, n
        if n % 16 == 0:
            raw = ref_enc(key, modes.CBC(iv), data)
            assert aes.cbc_encrypt(iv, data, padding=False) == raw, n
            assert aes.cbc_decrypt(iv, raw, padding=False) == data, n
            junk = rand(rng, n)
            assert aes.cbc_decrypt(iv, junk, padding=False) == ref_dec(key, modes.CBC(iv), junk)


IV_KINDS = {
    "random": None,
    "carry64": bytes(range(8)) + b"\xff" * 8,
    "wrap128": b"\xff" * 16,
    "carry32": bytes(12) + b"\xff" * 4,
}


@pytest.mark.parametrize("klen", [16, 24, 32])
@pytest.mark.parametrize("ivkind", list(IV_KINDS))
def test_ctr(backend, klen, ivkind, rng):
    for n in BYTE_LENS:
        key, data = rand(rng, klen), rand(rng, n)
        iv = IV_KINDS[ivkind] or rand(rng, 16)
        if ivkind != "random":
            # Put the carry at a random block inside the message.
            k = rng.randrange(0, max(1, n // 16 + 1))
            iv = ((int.from_bytes(iv, "big") - k) % 2**128).to_bytes(16, "big")
        aes = aesx.AES(key, backend=backend)
        want = ref_enc(key, modes.CTR(iv), data)
        assert aes.ctr(iv, data) == want, (n, ivkind)
        buf = bytearray(data)
        aes.ctr_into(iv, buf)
        assert buf == want
        # Seek: the keystream from a random offset equals the tail of the whole.
        if n:
            off = rng.randrange(n)
            assert aes.ctr(iv, data[off:], offset=off) == want[off:]


def test_ctr_streaming_any_chunking(rng):
    key, iv = rand(rng, 32), rand(rng, 16)
    aes = aesx.AES(key)
    data = rand(rng, 5000)
    want = ref_enc(key, modes.CTR(iv), data)
    for chunk in (1, 2, 5, 15, 16, 17, 31, 32, 33, 63, 64, 65, 512):
        out, pos = [], 0
        while pos < len(data):
            piece = data[pos : pos + chunk]
            out.append(aes.ctr(iv, piece, offset=pos))
            pos += len(piece)
        assert b"".join(out) == want, chunk


def test_ctr_large_offset_matches_counter_arithmetic(rng):
    # Offset 2^40 + 5 bytes: counter block iv + 2^36, starting 5 bytes in.
    key, iv = rand(rng, 16), rand(rng, 16)
    aes = aesx.AES(key)
    off = 2**40 + 5
    blk = ((int.from_bytes(iv, "big") + (off // 16)) % 2**128).to_bytes(16, "big")
    data = rand(rng, 100)
    want = ref_enc(key, modes.CTR(blk), bytes(5) + data)[5:]
    assert aes.ctr(iv, data, offset=off) == want


def test_ctr_at_the_end_of_the_stream(rng):
    # The last 19 bytes a stream may have (offset 2**64 - 20 .. 2**64 - 2).
    key, iv = rand(rng, 24), rand(rng, 16)
    aes = aesx.AES(key)
    off = 2**64 - 20
    blk = ((int.from_bytes(iv, "big") + (off // 16)) % 2**128).to_bytes(16, "big")
    skip = off % 16
    data = rand(rng, 19)
    want = ref_enc(key, modes.CTR(blk), bytes(skip) + data)[skip:]
    assert aes.ctr(iv, data, offset=off) == want
